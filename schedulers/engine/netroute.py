"""How long Batsim's internal messages take on a platform with a network (SimGrid 3.32 routing).

Batsim 4.2.1 sends every internal message (``send_message``, ``src/ipp.cpp``) as a 1-byte
SimGrid communication to the server's mailbox, on the master host, from the host of the actor
that sends it: a job's first host (JOB_COMPLETED), a switching machine (SWITCHED_ON/OFF), or the
master host itself (submitters, waiters, killers, the scheduler's request-reply actor). Under
Batsim's host model ``ptask_L07`` a 1-byte message over a route of links takes

    delay = L + 1 B / min(smallest bandwidth of the route, gamma / (2 L x 1 B))

with ``L`` the sum of the links' latencies (``L07Action``: the latency phase, then the byte at
the bottleneck's rate, bounded by SimGrid's TCP-gamma rule, ``gamma`` = 4,194,304 B: a 0.5 s
route adds 2.4e-7 s). An empty route takes no time.

Routes, as SimGrid 3.32 builds them (``src/kernel/routing``, ``src/surf/sg_platf.cpp``):

* ``routing="Full"`` zones: the ``<route>``/``<zoneRoute>`` given (``symmetrical`` by default,
  the reverse route uses the same links); a host's route to itself, when none is given, is the
  network model's loopback link (``network/loopback-bw`` 10 GBps, ``network/loopback-lat`` 0 s:
  1e-10 s a message); two hosts of one zone with no route between them exchange in no time;
* ``<cluster>`` (a star zone): a host's route up is its limiter link (``limiter_link``), its
  private link (``bw``/``lat``) and the backbone (``bb_bw``/``bb_lat``); a route between two hosts
  is the source's route up then the destination's route down, each link once; a host's route to
  itself is its loopback (``loopback_bw``/``loopback_lat``) when given, else up then down;
  the cluster's router (``prefix`` + ``id`` + ``_router`` + ``suffix`` unless ``router_id``)
  has no link; private links are split-duplex for ``SPLITDUPLEX`` (the default) and its old
  name ``FULLDUPLEX``, one SHARED link otherwise, ``FATPIPE`` included (SimGrid 3.32's
  ``sg_platf_new_cluster_flat`` sets no policy on them); a ``<cluster>`` directly under
  ``<platform>`` is the root zone itself, routed the same way (``sg_platf_new_cluster_flat``
  gives its StarZone no parent);
* between zones (``NetZoneImpl::get_global_route``): the route between the two child zones of
  their deepest common zone (its gateways ``gw_src``/``gw_dst``), plus the routes from the source
  to the first gateway and from the second gateway to the destination, recursively.

The same routes carry the jobs' communications (:class:`Routes`, used by
:mod:`schedulers.engine.execution`): each link is one constraint of the ptask model's linear
system (``SHARED``, ``FATPIPE`` for ``<link sharing_policy="FATPIPE">``, ``bb_sharing_policy=
"FATPIPE"`` backbones, cluster loopbacks and the model's ``__loopback__``; a split-duplex link is
two constraints).

* ``routing="Cluster"`` zones (a StarZone built when the zone ends): a ``<cabinet>``'s hosts
  each have a link up and a link down (``link_<host>_UP``, ``_DOWN``, SHARED, the cabinet's
  ``bw`` and ``lat``) then the zone's ``<backbone>``; a ``<host_link>`` gives a host its ``up``
  and ``down`` links the same way; a route between two hosts is the source's route up then the
  destination's route down, each link once (Batsim's ``cluster_locality_*.xml``);

Anything else (``Floyd``, ``Dijkstra``, ``Vivaldi`` with links, ``<bypassRoute>``, torus /
fat-tree / dragonfly clusters, cabinets outside a Cluster zone) is reported by
:class:`NetworkUnsupported` with the element named: the engine then refuses the platform and
points to real Batsim.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

__all__ = ["MessageDelays", "NetworkUnsupported", "instant_messages", "Routes", "message_delays", "platform_routes", "parse_bandwidth",
           "parse_latency"]

#: SimGrid's default loopback link of the network model (``network/loopback-bw``, B/s).
LOOPBACK_BW = 10e9

_NUM = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*$")
_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18, "Z": 1e21, "Y": 1e24,
           "Ki": 2.0 ** 10, "Mi": 2.0 ** 20, "Gi": 2.0 ** 30, "Ti": 2.0 ** 40, "Pi": 2.0 ** 50, "Ei": 2.0 ** 60}
_TIME = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12, "m": 60.0, "h": 3600.0,
         "d": 86400.0, "w": 604800.0}


class NetworkUnsupported(ValueError):
    """A routing feature whose timing the engine does not compute (message names it)."""


def parse_bandwidth(text: str, where: str) -> float:
    """A SimGrid bandwidth (``125MBps``, ``1GBps``, ``10Gbps``, ``1EBps``; a bare number is B/s) in B/s.

    Raises:
        NetworkUnsupported: not a bandwidth (message names ``where``)."""
    m = _NUM.match(text or "")
    if m:
        num, unit = float(m.group(1)), m.group(2)
        for base, scale in (("Bps", 1.0), ("bps", 0.125)):
            if unit.endswith(base) and unit[: -len(base)] in _PREFIX:
                return num * scale * _PREFIX[unit[: -len(base)]]
        if unit == "":
            return num
    raise NetworkUnsupported(f"{where}: bad bandwidth {text!r}")


def parse_latency(text: str | None, where: str) -> float:
    """A SimGrid latency (``50us``, ``1.46ms``, ``0s``; a bare number is seconds) in s; absent is 0.

    Raises:
        NetworkUnsupported: not a duration (message names ``where``)."""
    if text is None or text == "":
        return 0.0
    m = _NUM.match(text)
    if m and m.group(2) in _TIME:
        return float(m.group(1)) * _TIME[m.group(2)]
    raise NetworkUnsupported(f"{where}: bad latency {text!r}")


@dataclass(eq=False, slots=True)
class _Link:
    """One SimGrid link: one constraint of the ptask model's linear system (a split-duplex link
    is two: its ``_UP`` and ``_DOWN`` halves). Compared and hashed by identity: two links of
    equal figures are two resources, and a link is its constraint's key."""

    latency: float    # s
    bandwidth: float  # B/s
    fatpipe: bool = False  #: ``FATPIPE`` sharing: each flow may use the whole bandwidth


@dataclass(eq=False)
class _Zone:
    id: str
    parent: "_Zone | None"
    star: bool = False                                      # a <cluster>
    routes: dict = field(default_factory=dict)              # (src, dst) -> (links, gw_src, gw_dst)
    up: dict = field(default_factory=dict)                  # star: netpoint -> links up
    down: dict = field(default_factory=dict)                # star: netpoint -> links down
    loop: dict = field(default_factory=dict)                # star: netpoint -> loopback links
    loop_only: set = field(default_factory=set)             # Cluster zone: points with a loopback alone


@dataclass(frozen=True, slots=True)
class MessageDelays:
    """Batsim's 1-byte internal messages to the master host, route by route.

    ``master_route``: from the master host to itself; ``host_routes``: from each compute host (by
    name); each as ``(latency s, rate B/s)`` (:func:`route_rate`), which SimGrid's clock plays as
    two phases (:mod:`.steps`). ``master`` and ``hosts`` are the same routes' times (s)."""

    master_route: tuple[float, float]
    host_routes: dict
    #: the links of the same routes, in route order (what a message's byte shares with the jobs'
    #: communications and the other messages: :mod:`.netserver`)
    master_links: tuple = ()
    host_links: dict = field(default_factory=dict)

    @property
    def master(self) -> float:
        return _route_time(self.master_route)

    @property
    def hosts(self) -> dict:
        return {h: _route_time(r) for h, r in self.host_routes.items()}


def instant_messages(compute) -> MessageDelays:
    """The routes of a compute-only platform without a loopback (a Vivaldi zone, Batsim's
    ``no_net`` examples): every message over an empty route, latency 0, no bandwidth limit, so
    SimGrid ends its transfer in the next step, of 0 s (``L07Action``: no link, no flop: remains
    0). ``compute``: the compute hosts (:class:`~.platform.HostSpec`)."""
    return MessageDelays((0.0, math.inf), {h.name: (0.0, math.inf) for h in compute})


#: SimGrid's ``network/TCP-gamma`` (B), the default Batsim keeps: a flow's rate is bounded by
#: ``gamma / (2 latency)`` (``L07Action::updateBound``, ``src/surf/ptask_L07.cpp``).
TCP_GAMMA = 4194304.0

#: Batsim's messages are 1 byte (``send_message``, ``src/ipp.cpp``).
MESSAGE_BYTES = 1.0


def route_rate(links: list[_Link]) -> tuple[float, float]:
    """``(latency s, rate B/s)`` of a 1-byte message over ``links``: the sum of the latencies
    (``Host::route_to``, in route order), and the bottleneck's bandwidth bounded by TCP gamma
    over twice the latency (the only flow of a max-min system: its value is ``bw / 1 B``,
    ``L07Action::update_bound``); ``(0, inf)`` for an empty route."""
    if not links:
        return 0.0, math.inf
    lat, bw = 0.0, math.inf
    for ln in links:
        lat += ln.latency
        bw = min(bw, ln.bandwidth)
    if lat > 0:
        bw = min(bw, TCP_GAMMA / (2.0 * lat * MESSAGE_BYTES))
    return lat, bw


def _route_time(route: tuple[float, float]) -> float:
    """Time of a 1-byte message over a route ``(latency, rate)`` (s): the latency, then the byte
    at the rate (``inf`` if the rate is 0; the latency alone for an empty route)."""
    lat, bw = route
    if not bw > 0:
        return math.inf
    return lat + MESSAGE_BYTES / bw


def _tag(e: ET.Element) -> str:
    return e.tag.rsplit("}", 1)[-1]


class Routes:
    """The routes between the platform's hosts, as SimGrid 3.32 builds them (module docstring).

    :meth:`route` gives the links of a route in order, each once, and its latency (the sum of
    the links' latencies, ``Host::route_to``). Routes are computed once per pair of hosts."""

    def __init__(self, route_fn, netpoints, extra_latency=None) -> None:
        self._route = route_fn
        self._netpoints = netpoints
        self._extra = extra_latency   # (a, b) -> s added to the links' latency (Vivaldi zones)
        self._cache: dict[tuple[str, str], tuple[tuple[_Link, ...], float]] = {}

    def has(self, name: str) -> bool:
        """Whether ``name`` is a host or router of the platform."""
        return name in self._netpoints

    def route(self, a: str, b: str) -> tuple[tuple[_Link, ...], float]:
        """``(links, latency)`` of the route from host ``a`` to host ``b`` (names; s).

        Raises:
            NetworkUnsupported: no route (the message names the hosts)."""
        key = (a, b)
        r = self._cache.get(key)
        if r is None:
            ls = tuple(self._route(a, b))
            lat = sum(ln.latency for ln in ls)
            if self._extra is not None:
                lat += self._extra(a, b)
            r = self._cache[key] = (ls, lat)
        return r


def message_delays(routes: Routes, src: str, master: str, compute: list[str]) -> MessageDelays:
    """Delays of Batsim's internal messages over the platform's routes (:func:`platform_routes`).

    Args:
        routes: the platform's routes; src: its file (for messages); master: the master host's
            name; compute: the compute hosts' names.

    Raises:
        NetworkUnsupported: no master host, or no route."""
    if not routes.has(master):
        raise NetworkUnsupported(f"{src}: master host {master!r} not found")
    delays = MessageDelays(master_route=route_rate(list(routes.route(master, master)[0])),
                           host_routes={h: route_rate(list(routes.route(h, master)[0])) for h in compute},
                           master_links=routes.route(master, master)[0],
                           host_links={h: routes.route(h, master)[0] for h in compute})
    for h, d in [(master, delays.master_route), *delays.host_routes.items()]:
        if not d[1] > 0:
            # a link of bandwidth 0 (e.g. a cluster's bb_lat without bb_bw: sg_platf_new_cluster_flat
            # creates the backbone all the same): the message never arrives and real Batsim 4.2.1
            # stops in a SimGrid deadlock at the end of its latency (recorded: no job ran)
            raise NetworkUnsupported(f"{src}: the route from {h!r} to the master host {master!r} has a link of "
                                     "bandwidth 0: Batsim's messages never arrive (real Batsim deadlocks)")
    return delays


def platform_routes(root: ET.Element, src: str) -> Routes:
    """The :class:`Routes` of the platform ``root`` (the parsed ``<platform>``, read from ``src``).

    Raises:
        NetworkUnsupported: a routing feature listed in the module docstring.
    """
    links: dict[str, _Link] = {}
    zone_of: dict[str, _Zone] = {}      # netpoint (host/router) -> its zone
    # the ptask model's one loopback link (``NetworkL07Model``: ``__loopback__``, FATPIPE)
    loopback = _Link(0.0, LOOPBACK_BW, fatpipe=True)

    def link_of(name: str, direction: str | None, where: str) -> _Link:
        key = name if name in links else (f"{name}_{direction}" if direction else name)
        if key not in links:
            raise NetworkUnsupported(f"{src}: {where}: unknown link {name!r}")
        return links[key]

    def route_links(e: ET.Element, where: str) -> list[_Link]:
        out = []
        for c in e:
            if _tag(c) == "link_ctn":
                out.append(link_of(c.get("id", ""), c.get("direction"), where))
        return out

    def add_link(e: ET.Element) -> None:
        name = e.get("id", "")
        where = f"link {name!r}"
        lat = parse_latency(e.get("latency"), f"{src}: {where}")
        bw = parse_bandwidth(e.get("bandwidth", ""), f"{src}: {where}")
        policy = e.get("sharing_policy", "SHARED")
        if policy in ("SPLITDUPLEX", "FULLDUPLEX"):  # FULLDUPLEX: SimGrid 3.32's old name (ETag_surfxml_link)
            links[f"{name}_UP"] = _Link(lat, bw)
            links[f"{name}_DOWN"] = _Link(lat, bw)
        elif policy in ("SHARED", "FATPIPE"):
            links[name] = _Link(lat, bw, policy == "FATPIPE")
        else:
            raise NetworkUnsupported(f"{src}: {where}: sharing_policy {policy!r} is not modelled by the engine "
                                     "(SHARED, SPLITDUPLEX, FULLDUPLEX, FATPIPE)")

    def cluster(e: ET.Element, parent: _Zone | None) -> None:
        cid = e.get("id", "")
        where = f"{src}: cluster {cid!r}"
        if e.get("topology", "FLAT") != "FLAT":
            raise NetworkUnsupported(f"{where}: topology {e.get('topology')!r}: the engine models only FLAT "
                                     "clusters (SimGrid 3.32: FLAT, TORUS, FAT_TREE, DRAGONFLY)")
        z = _Zone(id=cid, parent=parent, star=True)
        bb = None
        bb_bw = parse_bandwidth(e.get("bb_bw") or "", where) if e.get("bb_bw") else 0.0
        bb_lat = parse_latency(e.get("bb_lat"), where)
        if bb_bw > 0 or bb_lat > 0:
            bb_policy = e.get("bb_sharing_policy", "SHARED")
            if bb_policy not in ("SHARED", "FATPIPE"):  # the DTD's two values (simgrid.dtd)
                raise NetworkUnsupported(f"{where}: bb_sharing_policy {bb_policy!r} is not one of SimGrid 3.32's "
                                         "(SHARED, FATPIPE)")
            bb = _Link(bb_lat, bb_bw, bb_policy == "FATPIPE")
        bw = parse_bandwidth(e.get("bw", ""), where)
        lat = parse_latency(e.get("lat"), where)
        lb_bw = parse_bandwidth(e.get("loopback_bw") or "", where) if e.get("loopback_bw") else 0.0
        lb_lat = parse_latency(e.get("loopback_lat"), where)
        lim = parse_bandwidth(e.get("limiter_link") or "", where) if e.get("limiter_link") else 0.0
        from .platform import _expand_radical  # noqa: PLC0415 - one radical reader
        prefix, suffix = e.get("prefix", ""), e.get("suffix", "")
        # private links (sg_platf_new_cluster_flat): a split-duplex link for SPLITDUPLEX and its old
        # name FULLDUPLEX (ETag_surfxml_cluster maps it), else one plain link created without a
        # sharing policy, so SHARED: SimGrid 3.32 never applies FATPIPE to a cluster's private
        # links (recorded on real Batsim 4.2.1: FATPIPE and SHARED clusters give equal outputs)
        policy = e.get("sharing_policy", "SPLITDUPLEX")
        if policy not in ("SPLITDUPLEX", "FULLDUPLEX", "SHARED", "FATPIPE"):
            raise NetworkUnsupported(f"{where}: sharing_policy {policy!r} is not one of SimGrid 3.32's (SHARED, "
                                     "SPLITDUPLEX, FULLDUPLEX, FATPIPE)")
        split = policy in ("SPLITDUPLEX", "FULLDUPLEX")
        for r in _expand_radical(e.get("radical", ""), where):
            name = f"{prefix}{r}{suffix}"
            zone_of[name] = z
            if lb_bw > 0 or lb_lat > 0:  # sg_platf_new_cluster_flat: loopback first, FATPIPE
                z.loop[name] = [_Link(lb_lat, lb_bw, True)]
            limiter = [_Link(0.0, lim)] if lim > 0 else []
            private_up = _Link(lat, bw)
            private_down = _Link(lat, bw) if split else private_up
            z.up[name] = limiter + [private_up] + ([bb] if bb else [])
            z.down[name] = limiter + [private_down] + ([bb] if bb else [])
        router = e.get("router_id") or f"{prefix}{cid}_router{suffix}"
        zone_of[router] = z
        z.up[router] = z.down[router] = []

    def star_zone(e: ET.Element, z: _Zone) -> None:
        """A ``routing="Cluster"`` zone (SimGrid 3.32's StarZone, built when the zone ends:
        ``sg_platf_zone_cluster_populate``): each cabinet host's route up is its own link
        ``link_<host>_UP`` then the ``<backbone>``, its route down the backbone then
        ``link_<host>_DOWN`` (``sg_platf_build_cabinet``: two SHARED links of the cabinet's
        ``bw`` and ``lat``; the backbone SHARED); a ``<host_link>`` gives a ``<host>`` its
        ``up`` and ``down`` links the same way; other hosts and routers have empty routes
        (``StarZone::do_seal``); a ``<route>`` from a point to itself is its loopback."""
        z.star = True
        bb = None
        for c in e:
            if _tag(c) == "backbone":   # (a second <backbone> replaces the first, never built)
                where = f"{src}: backbone {c.get('id', '')!r}"
                bb = _Link(parse_latency(c.get("latency"), where), parse_bandwidth(c.get("bandwidth", ""), where))
        tail = [bb] if bb is not None else []
        for c in e:
            t = _tag(c)
            if t == "host_link":
                h = c.get("id", "")
                where = f"host_link {h!r}"
                z.up[h] = [link_of(c.get("up", ""), None, where)] + tail
                z.down[h] = [link_of(c.get("down", ""), None, where)] + tail
            elif t == "cabinet":
                where = f"{src}: cabinet {c.get('id', '')!r}"
                bw = parse_bandwidth(c.get("bw", ""), where)
                lat = parse_latency(c.get("lat"), where)
                from .platform import _expand_radical  # noqa: PLC0415 - one radical reader
                for r in _expand_radical(c.get("radical", ""), where):
                    name = f"{c.get('prefix', '')}{r}{c.get('suffix', '')}"
                    zone_of[name] = z
                    z.up[name] = [_Link(lat, bw)] + tail
                    z.down[name] = [_Link(lat, bw)] + tail
            elif t == "route":
                a, b = c.get("src", ""), c.get("dst", "")
                if a == b:
                    z.loop[a] = route_links(c, f"route {a}->{b}")
        # a point whose routing entry holds a loopback alone has neither route up nor down
        # (do_seal fills in only points without an entry): SimGrid aborts when it is routed to
        # or from another point
        z.loop_only = {p for p in z.loop if p not in z.up}

    def zone(e: ET.Element, parent: _Zone | None) -> None:
        zid = e.get("id", "")
        routing = e.get("routing", "")
        z = _Zone(id=zid, parent=parent)
        for c in e:
            t = _tag(c)
            if t == "link":
                add_link(c)
        cluster_zone = routing.lower() == "cluster"
        for c in e:
            t = _tag(c)
            if t in ("zone", "AS"):
                zone(c, z)
            elif t == "cluster":
                cluster(c, z)
            elif t in ("host", "router"):
                zone_of[c.get("id", "")] = z
            elif t in ("cabinet", "host_link", "backbone") and cluster_zone:
                continue
            elif t in ("cabinet", "bypassRoute", "bypassZoneRoute", "bypassASroute", "host_link", "backbone",
                       "peer"):
                raise NetworkUnsupported(f"{src}: zone {zid!r}: <{t}> is not modelled by the engine")
        if cluster_zone:
            star_zone(e, z)
            return
        has_links = any(_tag(c) in ("link", "route", "zoneRoute", "ASroute") for c in e)
        if routing not in ("Full", "None", "") and has_links:
            raise NetworkUnsupported(f"{src}: zone {zid!r}: routing {routing!r} with links is not modelled by the "
                                     "engine (only Full zones and flat clusters)")
        for c in e:
            t = _tag(c)
            if t == "route":
                a, b = c.get("src", ""), c.get("dst", "")
                ls = route_links(c, f"route {a}->{b}")
                z.routes[(a, b)] = (ls, None, None)
                if c.get("symmetrical", "YES").upper() in ("YES", "TRUE", "1"):
                    z.routes.setdefault((b, a), (list(reversed(ls)), None, None))
            elif t in ("zoneRoute", "ASroute"):
                a, b = c.get("src", ""), c.get("dst", "")
                ga, gb = c.get("gw_src", ""), c.get("gw_dst", "")
                ls = route_links(c, f"zoneRoute {a}->{b}")
                z.routes[(a, b)] = (ls, ga, gb)
                if c.get("symmetrical", "YES").upper() in ("YES", "TRUE", "1"):
                    z.routes.setdefault((b, a), (list(reversed(ls)), gb, ga))

    for c in root:
        if _tag(c) in ("zone", "AS"):
            zone(c, None)
        elif _tag(c) == "cluster":
            # a <cluster> directly under <platform> is the root zone itself: sg_platf_new_cluster_flat
            # (src/surf/sg_platf.cpp) creates its StarZone with no parent, and the first NetZoneImpl
            # created becomes the engine's root (NetZoneImpl::NetZoneImpl); its routes are those of
            # a nested cluster (StarZone::get_local_route)
            cluster(c, None)

    def path(z: _Zone | None) -> list[_Zone]:
        out = []
        while z is not None:
            out.append(z)
            z = z.parent
        return out[::-1]

    def local(z: _Zone, a: str, b: str) -> tuple[list[_Link], str | None, str | None]:
        if z.star:
            if a == b and a in z.loop:
                return z.loop[a], None, None
            for p, d in ((a, "UP from source"), (b, "DOWN to destination")):
                if p in z.loop_only:
                    raise NetworkUnsupported(
                        f"{src}: zone {z.id!r}: {p!r} has a loopback <route> but no link up or down (no <host_link>): "
                        f"real Batsim 4.2.1 aborts when it routes from {a!r} to {b!r} (SimGrid 3.32: \"StarZone routing "
                        f"({a} - {b}): no link {d} node\")")
            out: list[_Link] = []
            for ln in z.up.get(a, []) + z.down.get(b, [])[::-1]:
                if all(ln is not x for x in out):  # StarZone adds each link once
                    out.append(ln)
            return out, None, None
        r = z.routes.get((a, b))
        if r is not None:
            return r
        if a == b and a in zone_of:
            return [loopback], None, None
        return [], None, None

    def route(a: str, b: str, depth: int = 0) -> list[_Link]:
        if depth > 64:
            raise NetworkUnsupported(f"{src}: no route from {a!r} to {b!r} (gateways loop)")
        if a not in zone_of or b not in zone_of:
            missing = a if a not in zone_of else b
            raise NetworkUnsupported(f"{src}: no route: {missing!r} is not a host or router of the platform")
        pa, pb = path(zone_of[a]), path(zone_of[b])
        if pa[-1] is pb[-1]:
            return local(pa[-1], a, b)[0]
        k = 0
        while k < min(len(pa), len(pb)) and pa[k] is pb[k]:
            k += 1
        if k == 0:
            raise NetworkUnsupported(f"{src}: {a!r} and {b!r} are in separate top zones")
        common = pa[k - 1]
        sa = pa[k].id if k < len(pa) else a
        sb = pb[k].id if k < len(pb) else b
        ls, ga, gb = local(common, sa, sb)
        if ga is None or gb is None:
            raise NetworkUnsupported(f"{src}: zone {common.id!r}: no zoneRoute with gateways from {sa!r} to {sb!r} "
                                     "(SimGrid aborts: 'Bad gateways')")
        out = route(a, ga, depth + 1) if a != ga else []
        out = out + list(ls)
        if gb != b:
            out = out + route(gb, b, depth + 1)
        return out

    return Routes(route, zone_of)
