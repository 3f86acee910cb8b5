"""Check a platform as SimGrid 3.32 builds it, after its XML parser, under Batsim 4.2.1.

:mod:`.platform_dtd` refuses what SimGrid's parser refuses; this module refuses what SimGrid
refuses next, while it builds the platform from the parsed elements, in document order
(``src/surf/xml/surfxml_sax_cb.cpp`` reads each element's values, ``src/surf/sg_platf.cpp``
creates the zones, hosts, links and routes, ``src/kernel/routing/*.cpp`` checks them; SimGrid's
sources at tag ``v3.32``). Real Batsim 4.2.1 aborts at start on each of these (outcomes recorded
in ``tests/test_platform_build.py``), and
:func:`check_build` refuses them in one line naming the file, the line of the element, the
element and what is wrong, quoting SimGrid's words:

* **routing models**: a ``<zone>``/``<AS>`` ``routing`` other than Cluster, Dijkstra,
  DijkstraCache, Floyd, Full, None, Vivaldi and Wifi, compared without case ("Not a valid
  model!"; ``"full"`` is Full, ``""`` and ``" Full"`` are refused);
* **one root zone**: the first zone or cluster under ``<platform>`` is SimGrid's root, the only
  one that gets the resource models; a later top-level zone or cluster, or anything inside it,
  that creates a host or a link aborts ("Impossible to create host: h1. Invalid CPU model:
  nullptr. Have you set the parent of this NetZone: AS1?"); empty ones and routers are accepted;
* **names**: a second host of a name ("Refusing to create a second host named"), a zone or
  cluster named like any host, router or zone before it ("Refusing to create a second NetZone
  called"), a router (a cluster's too) named like any of them ("Refusing to create a router
  named"), a link named like an earlier one, the halves ``l_UP``/``l_DOWN`` of split-duplex links
  and a cluster's own links (``c_link_0``, ``c_backbone``...) included ("Link 'l' declared several
  times in the platform."); a host may take a router's or a zone's name (SimGrid accepts it);
* **values**: speeds, bandwidths and latencies as SimGrid reads them (``strtod`` then a unit of
  its tables, case-sensitive: ``f``, ``kf``... ``Yf``, ``flops``, ``kiloflops``...; ``Bps``, ``bps``
  with ``k``...``Y`` or ``Ki``...``Yi``; ``s``, ``ms``, ``us``, ``ns``, ``ps``, ``m``, ``h``, ``d``,
  ``w``: "unknown unit: gf", "cannot parse number:abc", "value out of range: 1e999f"), a link
  with several bandwidths ("Non WIFI link must have only 1 bandwidth."), ``core``, ``pstate``
  and radicals as ``std::stoi`` reads them (the leading integer: ``core="2x"`` is 2,
  ``pstate="1.0"`` is 1; none: "x is not an int"; too large: "std::out_of_range: stoi"), a core
  count below 1 ("Host h0 must have at least one core, not 0."), an initial pstate out of range
  ("Invalid parameters for CPU h0 (pstate 2 >= length of pstates 2)"), ``coordinates`` of any
  host, router or peer that are not three numbers separated by single spaces, a radical group
  with more than one ``-`` ("Malformed radical"), a ``<trace>`` periodicity that is not a number
  or a trace without content or file;
* **routes**: a ``<route>``, ``<zoneRoute>``/``<ASroute>`` or bypass route naming a host, router or
  zone not declared before it ("Route src='h9' does name a node."), a ``<link_ctn>`` naming a
  link not declared before it, or an up/down half of a link that is not split-duplex, or a
  split-duplex link without ``direction`` ("Link not found: l0"), a ``<route>`` without
  ``<link_ctn>`` or between points that are not both in its zone ("Empty route (between a and b)
  forbidden.", "Internal error: ... are not in the same netzone as expected"), a zone route
  whose ends are not sub-zones of its zone or whose gateways are not hosts or routers inside
  them, or the same gateway twice ("Invalid NetzoneRoute from z1@h0 to z2@m: gw_src h0 belongs to
  z2, not to z1.", "Cannot define a NetzoneRoute from 'm' to itself"), a route declared twice,
  by its symmetrical twin too ("The route between a and b already exists (Rq: routes are
  symmetrical by default)."; in a Floyd zone a symmetrical route from a host to itself is its
  own twin; in a Dijkstra zone SimGrid crashes), any route in a None or Wifi zone ("NetZone 'z'
  does not accept new routes (wrong class)."), a route between two different points in a
  Cluster or Vivaldi zone ("In a StarZone, route must be: ..."), an empty or repeated bypass
  route, a ``<peer>`` outside a Vivaldi zone, a ``<trace_connect>`` naming an unknown trace,
  host or link, a Wifi zone whose ``access_point`` is not a host or router.

While it reads them, it records the speeds, bandwidths and latencies written without a unit
(``speed="1e9"``: SimGrid reads them in flops/s, bytes/s or seconds and only logs "Deprecated
unit-less value"), in :attr:`BuildInfo.unitless`, for :mod:`.oddities` to warn of.

Then, at t = 0 (:meth:`BuildInfo.start_error`): the master host in a None zone aborts ("There
can't be route in an Empty zone", when Batsim routes its first message from the master host to
itself), in a Dijkstra zone where no ``<route>`` names it SimGrid crashes (the host is not in
the zone's graph).

A ``routing="Cluster"`` zone's ``<backbone>`` link and ``<cabinet>`` hosts and links are built
when the zone ends (``sg_platf_new_zone_seal``). Not modelled here (the engine refuses these
platforms for their network anyway, or they are accepted as SimGrid accepts them): cabinets
outside a Cluster zone, ``<host_link>``, the hosts and links of TORUS, FAT_TREE and DRAGONFLY
clusters (their topology parameters are not read), trace files (SimGrid opens them), and what
aborts only when a route is used after t = 0 (a compute host of a None zone that is not its
gateway, hosts of a Floyd or Dijkstra zone without a route between them, a host that took a
zone's name: at the first job that ends there).

Cost: one pass over the element tree in document order, a few dictionary operations per
element, values read once per distinct text (100,000 hosts: about 0.3 s); the line of an error is
found again with expat only when there is one.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
import xml.parsers.expat
from dataclasses import dataclass, field
from typing import NoReturn

from ..core.cnumbers import parse_double, strtod as _strtod
from ..inputs.errors import PlatformError

__all__ = ["ROUTING_MODELS", "UNIT_ATTRIBUTES", "BuildInfo", "SimGridAbort", "check_build", "parse_speeds",
           "radical_ranges", "routing_model", "stoi"]

#: SimGrid 3.32's routing models (``sg_platf_create_zone``, compared with ``strcasecmp``).
ROUTING_MODELS = ("Cluster", "Dijkstra", "DijkstraCache", "Floyd", "Full", "None", "Vivaldi", "Wifi")
_MODELS = {m.lower(): m for m in ROUTING_MODELS}


def routing_model(routing: str | None) -> str | None:
    """SimGrid 3.32's name of the routing model ``routing`` (``"full"`` -> ``"Full"``: it compares
    without case, ``sg_platf_create_zone``), None when it has none ("Not a valid model!")."""
    return _MODELS.get(routing.lower()) if routing and routing.isascii() else None   # strcasecmp: ASCII only


class SimGridAbort(ValueError):
    """What SimGrid 3.32 says when it aborts on a value (``str()``: its words)."""


# ------------------------------------------------------------------ numbers, as SimGrid reads them
_C_SPACES = " \t\n\v\f\r"
_STOI = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")
_INT_MAX = 2 ** 31 - 1


def stoi(text: str) -> int:
    """``std::stoi(text)`` as SimGrid's ``surf_parse_get_int`` calls it: the integer at the start
    (after blanks), the rest ignored (``"2x"`` is 2, ``"1.0"`` is 1, ``"0x2"`` is 0).

    Raises:
        SimGridAbort: no integer there ("x is not an int") or one outside ``int``
            ("std::out_of_range: stoi", an exception nobody catches)."""
    m = _STOI.match(text)
    if m is None:
        raise SimGridAbort(f"{text} is not an int")
    digits = m.group(1).lstrip("+-").lstrip("0")
    if len(digits) > 10 or not -_INT_MAX - 1 <= (v := int(m.group(1))) <= _INT_MAX:
        raise SimGridAbort("std::out_of_range: stoi")
    return v


def _scale(*generators: tuple[str, float, int, bool]) -> dict[str, float]:
    """SimGrid's ``unit_scale``: each unit and its prefixed forms (``src/xbt/xbt_parse_units.cpp``);
    an entry already there is kept (``emplace``)."""
    out: dict[str, float] = {}
    for unit, value, base, abbrev in generators:
        mult = 1024.0 if base == 2 else 1000.0
        if base == 2:
            prefixes = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi") if abbrev else (
                "kibi", "mebi", "gibi", "tebi", "pebi", "exbi", "zebi", "yobi")
        else:
            prefixes = ("k", "M", "G", "T", "P", "E", "Z", "Y") if abbrev else (
                "kilo", "mega", "giga", "tera", "peta", "exa", "zeta", "yotta")
        out.setdefault(unit, value)
        for prefix in prefixes:
            value *= mult
            out.setdefault(prefix + unit, value)
    return out


_SPEED = _scale(("f", 1.0, 10, True), ("flops", 1.0, 10, False))
_BANDWIDTH = _scale(("bps", 0.125, 2, True), ("bps", 0.125, 10, True), ("Bps", 1.0, 2, True), ("Bps", 1.0, 10, True))
_TIME = {"w": 7 * 24 * 60 * 60.0, "d": 24 * 60 * 60.0, "h": 60 * 60.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6,
         "ns": 1e-9, "ps": 1e-12}


_PLAIN = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _read(text: str, units: dict[str, float], default: str) -> tuple[float, bool]:
    """``xbt_parse_get_value_with_unit``: a number then nothing (the default unit) or exactly a unit.

    Returns:
        (the value in the base unit of ``units``, whether it is written without a unit): a plain
        decimal number other than 0 and nothing after it, on which SimGrid 3.32 logs "Deprecated
        unit-less value" (``src/xbt/xbt_parse_units.cpp``; SimGrid logs it for hexadecimal
        numbers, ``inf`` and leading blanks too, which are not counted here).

    Raises:
        SimGridAbort: SimGrid's words ("cannot parse number:x", "unknown unit: gf", "value out of
            range: 1e999f")."""
    read = _strtod(text)
    if read is None:
        raise SimGridAbort(f"cannot parse number:{text}")
    v, end, erange = read
    if erange:
        raise SimGridAbort(f"value out of range: {text}")
    rest = text[end:] or default
    mult = units.get(rest)
    if mult is None:
        raise SimGridAbort(f"unknown unit: {rest}")
    return v * mult, end == len(text) and v != 0 and _PLAIN.fullmatch(text) is not None


def _read_speeds(text: str) -> list[tuple[float, str | None]]:
    """:func:`parse_speeds`, each value with its text when it has no unit (None otherwise)."""
    out: list[tuple[float, str | None]] = []
    for part in text.split(","):
        part = part.strip(_C_SPACES)
        v, plain = _read(part, _SPEED, "f")
        out.append((v, part if plain else None))
    return out


def parse_speeds(text: str) -> list[float]:
    """A host's or cluster's ``speed``, one value per pstate, in flops/s, as SimGrid 3.32 reads it
    (``xbt_parse_get_all_speeds``: split at commas, blanks trimmed, each a number and a unit of
    ``f``/``flops`` with SI prefixes, case-sensitive; no unit: flops). Negative, NaN and infinite
    values are returned as read (SimGrid accepts them).

    Raises:
        SimGridAbort: SimGrid's words."""
    return [v for v, _ in _read_speeds(text)]


def _speed(text: str) -> tuple[float, bool]:
    return _read(text, _SPEED, "f")


def _bandwidth(text: str) -> tuple[float, bool]:
    return _read(text, _BANDWIDTH, "Bps")


def _time(text: str) -> tuple[float, bool]:
    return _read(text, _TIME, "s")


#: The attributes whose values without a unit the reader records (:attr:`BuildInfo.unitless`):
#: speeds, bandwidths and latencies of hosts, clusters, cabinets, peers (speed), links and
#: backbones (SimGrid also reads a peer's ``bw_in``/``bw_out`` and a disk's ``read_bw``/
#: ``write_bw`` in its unit parser; they are not recorded).
UNIT_ATTRIBUTES = frozenset(("speed", "bandwidth", "bw", "bb_bw", "loopback_bw", "limiter_link", "latency", "lat",
                             "bb_lat", "loopback_lat"))


def radical_ranges(radical: str) -> list[tuple[int, int]]:
    """The ``(first, last)`` ranges of a cluster's ``radical`` (``"0-3,7"``), as SimGrid 3.32's
    ``explodesRadical`` reads it: groups separated by commas, each one integer or two separated
    by ``-``, each read by ``std::stoi`` (``" 1"``, ``"+1"`` and ``"1abc"`` are 1; an empty group,
    as in ``"0-3,"`` or ``""``, is not an int). A range whose last is below its first is empty.

    Raises:
        SimGridAbort: SimGrid's words ("x is not an int", "Malformed radical: 0-1-2")."""
    out: list[tuple[int, int]] = []
    for group in radical.split(","):
        ends = group.split("-")
        first = stoi(ends[0])
        if len(ends) == 1:
            last = first
        elif len(ends) == 2:
            last = stoi(ends[1])
        else:
            raise SimGridAbort(f"Malformed radical: {group}")
        out.append((first, last))
    return out


def _coords_error(name: str, text: str) -> str | None:
    """SimGrid's words when it cannot read ``coordinates`` (``vivaldi::Coords``), or None."""
    parts = text.split(" ")
    if len(parts) != 3:
        return f"Coordinates of {name} must have 3 dimensions"
    for part in parts:
        read = _strtod(part)
        if read is None:
            return "Invalid coordinate: stod"
        if read[2]:
            return "std::out_of_range: stod"
    return None


# ------------------------------------------------------------------------------- the builder
class _Abort(Exception):
    """An abort at the element of document index ``args[0]``; ``args[1]``: the message."""


@dataclass(eq=False, slots=True)
class _Zone:
    id: str
    model: str                       # canonical routing model; "Star" for a <cluster>
    parent: "_Zone | None"
    models: bool                     # has SimGrid's resource models (the root and its descendants)
    routes: set = field(default_factory=set)     # (src, dst) in the routing table
    bypass: set = field(default_factory=set)
    point: tuple = ()                            # (_HOST, self, None): shared by its hosts


_HOST, _ROUTER, _ZONE = "host", "router", "zone"

_TRACE_KINDS = ("HOST_AVAIL", "SPEED", "LINK_AVAIL", "BANDWIDTH", "LATENCY")


def _tag(e: ET.Element) -> str:
    t = e.tag
    return t.rsplit("}", 1)[-1] if isinstance(t, str) else ""


@dataclass(slots=True)
class BuildInfo:
    """What the build tells the reader: the platform's netpoints (hosts, routers, zones: their
    zones), the hosts that a ``<route>`` of a Dijkstra zone names, and the values written
    without a unit."""

    points: dict[str, tuple]
    dijkstra_routed: set[str]
    #: Attribute name (one of :data:`UNIT_ATTRIBUTES`) -> its values written without a unit
    #: (:func:`_read`), as written, in file order, each part of a multi-pstate speed apart.
    unitless: dict[str, list[str]] = field(default_factory=dict)

    def model(self, host: str) -> str | None:
        """The routing model of ``host``'s zone (canonical: ``"Full"`` for ``routing="full"``;
        ``"Star"`` for a ``<cluster>``), None when ``host`` is not a host."""
        p = self.points.get(host)
        return p[1].model if p is not None and p[0] == _HOST else None

    def start_error(self, src: str, master: str) -> str | None:
        """Why real Batsim 4.2.1 stops at t = 0 on this platform whose master host is ``master``
        (Batsim routes its first message from the master host to itself): in a None zone,
        SimGrid 3.32 aborts (``EmptyZone::get_local_route``); in a Dijkstra zone where no
        ``<route>`` names it, it crashes (``DijkstraZone``: the host is not in the zone's graph).
        None otherwise."""
        model = self.model(master)
        if model == "None":
            return (f"{src}: the master host {master!r} is in a routing=\"None\" zone: real Batsim 4.2.1 aborts at t = 0, "
                    "when it routes its first message from the master host to itself (SimGrid 3.32: \"There can't be "
                    "route in an Empty zone\"); put it in a Full zone")
        if model in ("Dijkstra", "DijkstraCache") and master not in self.dijkstra_routed:
            return (f"{src}: the master host {master!r} is in a routing=\"{model}\" zone where no <route> names it: "
                    "real Batsim 4.2.1 crashes at t = 0 (Segmentation fault), when it routes its first message from "
                    "the master host to itself (SimGrid 3.32 finds no node for it in the zone's graph); put it in a "
                    "Full zone")
        return None


class _Builder:
    """SimGrid 3.32's platform construction, element by element in document order."""

    def __init__(self, src: str, max_hosts: int) -> None:
        self.src = src
        self.max_hosts = max_hosts
        self.index = -1                        # document index of the current element
        self.points: dict[str, tuple] = {}     # netpoint name -> (kind, englobing zone, own zone or None)
        self.hosts: set[str] = set()
        self.links: set[str] = set()           # plain links (split-duplex halves included)
        self.split: set[str] = set()           # split-duplex links
        self.root: _Zone | None = None
        self.current: _Zone | None = None
        self.traces: set[str] = set()
        self.connects: dict[str, dict[str, tuple[str, int]]] = {k: {} for k in _TRACE_KINDS}
        self.wifi: list[tuple[_Zone, str, int]] = []   # (zone, access point, index)
        self.route_links: list[str] = []
        self.dijkstra_routed: set[str] = set()
        self.nhosts = 0
        # a routing="Cluster" zone's <backbone>, <cabinet>s (with their radicals) and
        # <host_link>s, built when the zone ends (sg_platf_new_zone_seal)
        self.backbone: str | None = None
        self.cabinets: list[tuple[dict[str, str], list[tuple[int, int]]]] = []
        self.speed_cache: dict[str, list | str] = {}   # speed text -> _read_speeds(text), or SimGrid's words
        self.unitless: list[tuple[int, int, str, str]] = []   # (element index, attribute's rank, attribute, value)
        self.int_cache: dict[str, int | str] = {}

    # ---------------------------------------------------------------- helpers
    @property
    def zone(self) -> _Zone:
        """The zone being read: every element but a top-level zone or cluster is in one
        (simgrid.dtd, :func:`.platform_dtd.check_structure`)."""
        assert self.current is not None, "an element outside any zone"
        return self.current

    def fail(self, what: str, words: str, hint: str = "") -> NoReturn:
        raise _Abort(self.index, f"{what}: real Batsim 4.2.1 aborts (\"{words}\"){hint}")

    def crash(self, what: str) -> NoReturn:
        raise _Abort(self.index, f"{what}: real Batsim 4.2.1 crashes (Segmentation fault)")

    @staticmethod
    def orphan(zone: _Zone) -> str:
        """Why ``zone`` has no resource models: it is, or is inside, a second top-level zone."""
        top = zone
        while top.parent is not None:
            top = top.parent
        where = f"zone {zone.id!r} is" if top is zone else f"zone {zone.id!r} is inside zone {top.id!r},"
        return (f"{where} a second top-level zone (only the first zone or cluster under <platform> is SimGrid's root, "
                "the others get no resource models)")

    def value(self, what: str, parse, a: dict[str, str], attr: str, text: str | None = None) -> float:
        """``parse`` (:func:`_bandwidth`, :func:`_time`, :func:`_speed`) of attribute ``attr`` of
        the element's attributes ``a`` (or of ``text``, a part of it), a value written without a
        unit recorded; SimGrid's words on an abort."""
        if text is None:
            text = a.get(attr, "")
        try:
            v, plain = parse(text)
        except SimGridAbort as exc:
            self.fail(f"{what} {text!r}", str(exc))
        if plain and attr in UNIT_ATTRIBUTES:
            self.note(a, attr, text)
        return v

    def note(self, a: dict[str, str], attr: str, text: str) -> None:
        """Record the value ``text`` of attribute ``attr`` of the current element (attributes
        ``a``), written without a unit."""
        self.unitless.append((self.index, list(a).index(attr), attr, text))

    def unitless_values(self) -> dict[str, list[str]]:
        """:attr:`BuildInfo.unitless`: the recorded values in file order (elements in document
        order, an element's attributes in the order written)."""
        out: dict[str, list[str]] = {}
        for _, _, attr, text in sorted(self.unitless, key=lambda r: r[:2]):
            out.setdefault(attr, []).append(text)
        return out

    @staticmethod
    def _cached(cache: dict, parse, text: str):
        """``parse(text)``, or SimGrid's message (a str) when it aborts, memoised in ``cache``
        (a platform repeats the same few values on thousands of hosts)."""
        got = cache.get(text)
        if got is None:
            try:
                got = parse(text)
            except SimGridAbort as exc:
                got = str(exc)
            cache[text] = got
        return got

    def speeds(self, who: str, a: dict[str, str]) -> None:
        text = a.get("speed", "")
        got = self._cached(self.speed_cache, _read_speeds, text)
        if isinstance(got, str):
            if not text:
                self.fail(f"{who} has no speed (speed=\"\")", got)
            if got.startswith("unknown unit"):
                self.fail(f"{who}: unknown speed unit in {text!r} (SimGrid knows f, kf, Mf, Gf... and flops, "
                          "kiloflops..., case-sensitive)", got)
            self.fail(f"{who}: speed {text!r}", got)
        for _, plain in got:
            if plain is not None:
                self.note(a, "speed", plain)

    def integer(self, what: str, text: str) -> int:
        got = self._cached(self.int_cache, stoi, text)
        if isinstance(got, str):
            self.fail(what, got)
        return got

    def new_zone(self, zid: str, model: str, tag: str) -> _Zone:
        """``NetZoneImpl`` and ``set_parent``: the first zone is the root, the only one with models."""
        parent = self.current
        models = self.root is None or (parent is not None and parent.models)
        if zid in self.points:
            self.fail(f"{tag} {zid!r}: this name already names a {self.points[zid][0]}",
                      f"Refusing to create a second NetZone called '{zid}'.")
        z = _Zone(zid, model, parent, models)
        z.point = (_HOST, z, None)
        if self.root is None:
            self.root = z
        self.points[zid] = (_ZONE, parent, z)
        return z

    def new_host(self, name: str, zone: _Zone, what: str) -> None:
        if not zone.models:
            self.fail(f"{what}: {self.orphan(zone)}",
                      f"Impossible to create host: {name}. Invalid CPU model: nullptr. Have you set the parent of "
                      f"this NetZone: {zone.id}?", "; put every zone inside the first one")
        if name in self.hosts:
            self.fail(f"duplicate host id {name!r}", f"Refusing to create a second host named '{name}'.")
        self.hosts.add(name)
        self.points[name] = zone.point

    def new_router(self, name: str, zone: _Zone, what: str) -> None:
        if name in self.points:
            self.fail(f"{what}: this name already names a {self.points[name][0]}",
                      f"Refusing to create a router named '{name}': this name already describes a node.")
        self.points[name] = (_ROUTER, zone, None)

    def new_link(self, name: str, zone: _Zone, what: str) -> None:
        if not zone.models:
            self.fail(f"{what}: {self.orphan(zone)}",
                      f"Impossible to create link: {name}. Invalid network model: nullptr. Have you set the parent "
                      f"of this NetZone: {zone.id}?", "; put every zone inside the first one")
        if name in self.links and name != "__loopback__":
            self.fail(f"{what}: a link {name!r} exists already", f"Link '{name}' declared several times in the platform.")
        self.links.add(name)

    def count_hosts(self, n: int, what: str, radical: str | None = None) -> None:
        """The engine's size limit (:data:`.platform.MAX_HOSTS`), counted before hosts are built."""
        if radical is not None:
            if n > self.max_hosts - self.nhosts:
                raise PlatformError(f"{self.src}: {what}: radical {radical!r} gives {n:,} hosts; a platform may have at "
                                    f"most {self.max_hosts:,} hosts (schedulers.engine.platform.MAX_HOSTS)")
        elif self.nhosts >= self.max_hosts:
            raise PlatformError(f"{self.src}: {what}: more than {self.max_hosts:,} hosts; a platform may have at most "
                                f"{self.max_hosts:,} (schedulers.engine.platform.MAX_HOSTS)")
        self.nhosts += n

    def point(self, name: str, role: str, tag: str) -> tuple:
        """The netpoint ``name`` a route's attribute ``role`` names (``surf_parse_assert_netpoint``)."""
        p = self.points.get(name)
        if p is None:
            self.fail(f"<{tag}> {role}={name!r}: no host, router or zone of that name is declared before it",
                      f"{'Route' if tag == 'route' else tag} {role}='{name}' does name a node.")
        return p

    # ---------------------------------------------------------------- elements
    def start(self, e: ET.Element, tag: str) -> None:
        a = e.attrib
        if tag in ("zone", "AS"):
            zid = a.get("id", "")
            model = routing_model(a.get("routing"))
            if model is None:
                self.fail(f"{tag} {zid!r}: routing={a.get('routing', '')!r} is not a routing model of SimGrid 3.32 "
                          f"({', '.join(ROUTING_MODELS)}, in any case)", "Not a valid model!")
            self.current = self.new_zone(zid, model, tag)
            if model == "Wifi":
                for p in e:
                    if _tag(p) == "prop" and p.get("id") == "access_point":
                        self.wifi.append((self.current, p.get("value", ""), self.index))
                        break
        elif tag == "host":
            name = a.get("id", "")
            self.count_hosts(1, f"host {name!r}")
            who = f"host {name!r}"
            self.speeds(who, a)
            core = self.integer(f"{who}: core={a.get('core', '1')!r}", a.get("core", "1"))
            self.new_host(name, self.zone, who)
            coords = a.get("coordinates", "")
            if coords:
                err = _coords_error(name, coords)
                if err:
                    self.fail(f"{who}: coordinates={coords!r} (three numbers separated by single spaces)", err)
            if core < 1:
                self.fail(f"{who}: core={a.get('core')!r}", f"Host {name} must have at least one core, not 0.")
        elif tag == "router":
            name = a.get("id", "")
            self.new_router(name, self.zone, f"router {name!r}")
            coords = a.get("coordinates", "")
            if coords:
                err = _coords_error(name, coords)
                if err:
                    self.fail(f"router {name!r}: coordinates={coords!r}", err)
        elif tag == "peer":
            self.peer(a)
        elif tag == "cabinet":
            cid = a.get("id", "")
            self.value(f"cabinet {cid!r}: speed", _speed, a, "speed")
            self.value(f"cabinet {cid!r}: bw", _bandwidth, a, "bw")
            self.value(f"cabinet {cid!r}: lat", _time, a, "lat")
            ranges = self.radical(cid, a.get("radical", ""), "cabinet")
            self.count_hosts(sum(max(0, hi - lo + 1) for lo, hi in ranges), f"cabinet {cid!r}", a.get("radical", ""))
            self.cabinets.append((a, ranges))
        elif tag in ("route", "bypassRoute"):
            self.route_links = []
            self.point(a.get("src", ""), "src", tag)
            self.point(a.get("dst", ""), "dst", tag)
        elif tag in ("zoneRoute", "ASroute", "bypassZoneRoute", "bypassASroute"):
            self.route_links = []
            for role in ("src", "dst", "gw_src", "gw_dst"):
                self.point(a.get(role, ""), role, tag)
        elif tag == "link_ctn":
            self.link_ctn(a)
        elif tag == "trace_connect":
            trace, element = a.get("trace", ""), a.get("element", "")
            if trace not in self.traces:
                self.fail(f"<trace_connect trace={trace!r}>: no <trace> of that id before it",
                          f"Cannot connect trace {trace} to {element}: trace unknown")
            self.connects[a.get("kind", "SPEED")].setdefault(trace, (element, self.index))

    def end(self, e: ET.Element, tag: str) -> None:
        a = e.attrib
        if tag in ("zone", "AS"):
            if self.zone.model == "Cluster":
                self.populate(self.zone)
            self.current = self.zone.parent
        elif tag == "host":
            name = a.get("id", "")
            pstate = self.integer(f"host {name!r}: pstate={a.get('pstate', '0.0')!r}", a.get("pstate", "0.0"))
            n = len(self.speed_cache[a.get("speed", "")])
            if pstate != 0 and not 0 <= pstate < n:
                self.fail(f"host {name!r}: initial pstate {pstate} but only {n} speeds",
                          f"Invalid parameters for CPU {name} (pstate {pstate % 2 ** 64} >= length of pstates {n})")
        elif tag == "disk":
            did = a.get("id", "")
            self.value(f"disk {did!r}: read_bw", _bandwidth, a, "read_bw")
            self.value(f"disk {did!r}: write_bw", _bandwidth, a, "write_bw")
        elif tag == "cluster":
            self.cluster(a)
        elif tag == "link":
            self.link(a)
        elif tag == "backbone":
            bid = a.get("id", "")
            self.value(f"backbone {bid!r}: bandwidth", _bandwidth, a, "bandwidth")
            self.value(f"backbone {bid!r}: latency", _time, a, "latency")
            self.backbone = bid
        elif tag in ("route", "zoneRoute", "ASroute"):
            self.add_route(a, tag)
        elif tag in ("bypassRoute", "bypassZoneRoute", "bypassASroute"):
            self.add_bypass(a, tag)
        elif tag == "trace":
            tid = a.get("id", "")
            period = a.get("periodicity", "")
            if _strtod(period) is None:
                self.fail(f"trace {tid!r}: periodicity={period!r}", f"{period} is not a double")
            if not a.get("file") and not e.text:
                self.fail(f"trace {tid!r} has neither text nor file",
                          f"Trace '{tid}' must have either a content, or point to a file on disk.")
            self.traces.add(tid)

    def populate(self, z: _Zone) -> None:
        """The end of a ``routing="Cluster"`` zone (``sg_platf_zone_cluster_populate``): its
        backbone link, then each cabinet's hosts ``prefix + radical + suffix`` with their links
        ``link_<host>_UP`` and ``_DOWN``."""
        if self.backbone is not None:
            self.new_link(self.backbone, z, f"backbone {self.backbone!r}")
        for a, ranges in self.cabinets:
            what = f"cabinet {a.get('id', '')!r}"
            for lo, hi in ranges:
                for r in range(lo, hi + 1):
                    name = f"{a.get('prefix', '')}{r}{a.get('suffix', '')}"
                    self.new_host(name, z, what)
                    self.new_link(f"link_{name}_UP", z, what)
                    self.new_link(f"link_{name}_DOWN", z, what)
        self.backbone = None
        self.cabinets = []

    def radical(self, cid: str, radical: str, tag: str = "cluster") -> list[tuple[int, int]]:
        try:
            return radical_ranges(radical)
        except SimGridAbort as exc:
            self.fail(f"{tag} {cid!r}: bad radical {radical!r}", str(exc))

    def cluster(self, a: dict[str, str]) -> None:
        """``ETag_surfxml_cluster`` then ``sg_platf_new_cluster_flat`` (its zone, backbone, hosts,
        links, router; the hierarchical topologies: zone and hosts only)."""
        cid = a.get("id", "")
        what = f"cluster {cid!r}"
        ranges = self.radical(cid, a.get("radical", ""))
        count = sum(max(0, hi - lo + 1) for lo, hi in ranges)
        self.count_hosts(count, what, a.get("radical", ""))
        self.speeds(what, a)
        core = self.integer(f"{what}: core={a.get('core', '1')!r}", a.get("core", "1"))
        self.value(f"{what}: bw", _bandwidth, a, "bw")
        self.value(f"{what}: lat", _time, a, "lat")
        bb_bw = self.value(f"{what}: bb_bw", _bandwidth, a, "bb_bw") if a.get("bb_bw") else 0.0
        bb_lat = self.value(f"{what}: bb_lat", _time, a, "bb_lat") if a.get("bb_lat") else 0.0
        limiter = self.value(f"{what}: limiter_link", _bandwidth, a, "limiter_link") if a.get("limiter_link") else 0.0
        lb_bw = self.value(f"{what}: loopback_bw", _bandwidth, a, "loopback_bw") if a.get("loopback_bw") else 0.0
        lb_lat = self.value(f"{what}: loopback_lat", _time, a, "loopback_lat") if a.get("loopback_lat") else 0.0
        z = self.new_zone(cid, "Star", "cluster")
        prefix, suffix = a.get("prefix", ""), a.get("suffix", "")
        flat = a.get("topology", "FLAT") == "FLAT"
        if flat and (bb_bw > 0 or bb_lat > 0):
            self.new_link(f"{cid}_backbone", z, what)
        split = a.get("sharing_policy", "SPLITDUPLEX") in ("SPLITDUPLEX", "FULLDUPLEX")
        numbers = [i for lo, hi in ranges for i in range(lo, hi + 1)]
        names = [f"{prefix}{i}{suffix}" for i in numbers]
        ends = (("_loopback",) if lb_bw > 0 or lb_lat > 0 else ()) + (("_limiter",) if limiter > 0 else ()) + (
            ("_UP", "_DOWN") if split else ("",))
        links = [f"{cid}_link_{i}{end}" for i in numbers for end in ends] if flat else []
        if (z.models and (core >= 1 or not names) and len(set(names)) == len(names) and self.hosts.isdisjoint(names)
                and len(set(links)) == len(links) and self.links.isdisjoint(links)):
            # nothing to refuse (the usual case): every host and link at once
            self.hosts.update(names)
            self.points.update(dict.fromkeys(names, z.point))
            self.links.update(links)
            if flat and split:
                self.split.update(f"{cid}_link_{i}" for i in numbers)
        else:   # one by one, in SimGrid's order, to find the first error
            for i, name in zip(numbers, names):
                self.new_host(name, z, f"{what}: host {name!r}")
                if core < 1:
                    self.fail(f"{what}: core={a.get('core')!r}", f"Host {name} must have at least one core, not 0.")
                if flat:
                    for end in ends:
                        self.new_link(f"{cid}_link_{i}{end}", z, what)
        if flat:
            router = a.get("router_id") or f"{prefix}{cid}_router{suffix}"
            self.new_router(router, z, f"{what}: its router {router!r}")

    def link(self, a: dict[str, str]) -> None:
        """``ETag_surfxml_link`` then ``sg_platf_new_link``."""
        lid = a.get("id", "")
        what = f"link {lid!r}"
        bws = [self.value(f"{what}: bandwidth", _bandwidth, a, "bandwidth", part)
               for part in re.split(r"[;,]", a.get("bandwidth", ""))]
        self.value(f"{what}: latency", _time, a, "latency")
        z = self.zone
        if z.model == "Wifi":
            if not z.models:
                self.new_link(lid, z, what)
            self.fail(f"{what} in the Wifi zone {z.id!r}: Batsim's ptask_L07 host model has no Wifi links",
                      "create_wifi_link: Feature unimplemented yet.")
        if len(bws) != 1 and z.models:
            self.fail(f"{what}: bandwidth={a.get('bandwidth')!r} gives {len(bws)} bandwidths (only Wifi links may have "
                      "several)", "Non WIFI link must have only 1 bandwidth.")
        if a.get("sharing_policy") in ("SPLITDUPLEX", "FULLDUPLEX"):
            self.new_link(f"{lid}_UP", z, what)
            self.new_link(f"{lid}_DOWN", z, what)
            self.split.add(lid)
        else:
            self.new_link(lid, z, what)

    def peer(self, a: dict[str, str]) -> None:
        """``STag_surfxml_peer`` then ``sg_platf_new_peer`` (a host and its two links)."""
        pid = a.get("id", "")
        what = f"peer {pid!r}"
        self.value(f"{what}: speed", _speed, a, "speed")
        self.value(f"{what}: bw_in", _bandwidth, a, "bw_in")
        self.value(f"{what}: bw_out", _bandwidth, a, "bw_out")
        z = self.zone
        if z.model != "Vivaldi":
            self.fail(f"{what} in zone {z.id!r}, of routing {z.model!r}", "<peer> tag can only be used in Vivaldi netzones.")
        self.new_host(pid, z, what)
        coords = a.get("coordinates", "")
        if coords:
            err = _coords_error(pid, coords)
            if err:
                self.fail(f"{what}: coordinates={coords!r}", err)
        self.new_link(f"link_{pid}_UP", z, what)
        self.new_link(f"link_{pid}_DOWN", z, what)

    def link_ctn(self, a: dict[str, str]) -> None:
        """``STag_surfxml_link___ctn``: the link by name (a plain link, a half ``l_UP`` of a split-duplex
        link, ``__loopback__``) or, with ``direction="UP"``/``"DOWN"``, a split-duplex link."""
        lid = a.get("id", "")
        direction = a.get("direction", "NONE")
        if direction == "NONE":
            if lid in self.links or lid == "__loopback__":
                self.route_links.append(lid)
                return
            why = ("a split-duplex link needs direction=\"UP\" or \"DOWN\"" if lid in self.split
                   else "no link of that id is declared before it")
        else:
            if lid in self.split:
                self.route_links.append(lid)
                return
            why = ("direction=\"UP\"/\"DOWN\" needs a SPLITDUPLEX link" if lid in self.links
                   else "no link of that id is declared before it")
        self.fail(f"<link_ctn id={lid!r}" + ("" if direction == "NONE" else f" direction={direction!r}") + f">: {why}",
                  f"Link not found: {lid}")

    def add_route(self, a: dict[str, str], tag: str) -> None:
        """``sg_platf_new_route`` -> the zone's ``add_route`` (``RoutedZone::add_route_check_params``,
        ``FullZone``/``FloydZone``/``DijkstraZone``, ``StarZone``, ``NetZoneImpl``)."""
        z = self.zone
        s, d = a.get("src", ""), a.get("dst", "")
        gws = tag != "route"
        gs, gd = (a.get("gw_src", ""), a.get("gw_dst", "")) if gws else ("", "")   # (read only when gws)
        what = f"<{tag} src={s!r} dst={d!r}>"
        sp, dp = self.points[s], self.points[d]
        if z.model in ("None", "Wifi"):
            self.fail(f"{what} in zone {z.id!r}, of routing {z.model!r}, which has no routing table",
                      f"NetZone '{z.id}' does not accept new routes (wrong class).")
        if z.model in ("Star", "Cluster", "Vivaldi"):
            self._star_route(z, what, s, d, sp, gs, gws)
            return
        self._same_zone(z, what, s, d, sp, dp)
        if not gws:
            self._host_route(what, s, d, sp, dp)
        else:
            self._zone_route(a, what, s, d, sp, dp, gs, gd)
        self._record_route(z, a, what, s, d, gs, gd, gws)

    def _star_route(self, z: _Zone, what: str, s: str, d: str, sp: tuple, gs: str, gws: bool) -> None:
        """``StarZone::add_route``: from a point to every other, or to itself."""
        if s != d:
            self.fail(f"{what} in the {'cluster' if z.model == 'Star' else z.model + ' zone'} {z.id!r}, a star "
                      "where a route goes from one point to every other or from a point to itself",
                      f"Cannot add route from {s} to {d}. In a StarZone, route must be:  i) from source netpoint "
                      "to everyone, ii) from everyone to a single netpoint or iii) loopback, same source and "
                      "destination")
        if sp[0] == _ZONE and not gws:
            self.fail(f"{what}: {s!r} is a zone", f"StarZone::add_route(): source {s} is a netzone but gw_src isn't "
                      "configured")
        if sp[0] == _ZONE:
            gp = self.points[gs]
            if gp[0] == _ZONE:
                self.fail(what, f"StarZone::add_route(): src({s}) is a netzone, gw_src({gs}) cannot be a netzone")
            if not self.inside(gp, sp[2]):
                self.fail(f"{what}: gateway {gs!r} is not inside zone {s!r}",
                          f"Invalid NetzoneRoute from {s}@{gs} to {d}: gw_src {gs} belongs to {gp[1].id}, not "
                          f"to {s}.")

    def _same_zone(self, z: _Zone, what: str, s: str, d: str, sp: tuple, dp: tuple) -> None:
        """``RoutedZone::get_route_check_params``: both ends in the zone ``z`` itself."""
        sz, dz = sp[1], dp[1]
        if sz is None or dz is None:
            self.crash(f"{what} names the root zone {s if sz is None else d!r}")
        if sz is not dz:
            self.fail(f"{what} in zone {z.id!r}: {s!r} is in zone {sz.id!r} and {d!r} in zone {dz.id!r} (a route joins "
                      "two points of its own zone)",
                      f"Internal error: {s}@{sz.id} and {d}@{dz.id} are not in the same netzone as expected. Please "
                      "report that bug.")
        if z is not dz:
            self.fail(f"{what} in zone {z.id!r}: {s!r} and {d!r} are in zone {dz.id!r} (a route joins two points of its "
                      "own zone)",
                      f"Internal error: route destination {s}@{d} is not in netzone {sz.id} as expected (route source: "
                      f"{dz.id}@{z.id}). Please report that bug.")

    def _host_route(self, what: str, s: str, d: str, sp: tuple, dp: tuple) -> None:
        """A ``<route>``: links, and hosts or routers at both ends."""
        if not self.route_links:
            self.fail(f"{what} has no <link_ctn>", f"Empty route (between {s} and {d}) forbidden.")
        for name, p in ((s, sp), (d, dp)):
            if p[0] == _ZONE:
                role = "src" if name == s else "dst"
                self.fail(f"{what}: {name!r} is a zone",
                          f"When defining a route, {role} cannot be a netzone such as '{name}'. Did you meant to "
                          "have a NetzoneRoute?")

    def _zone_route(self, a: dict[str, str], what: str, s: str, d: str, sp: tuple, dp: tuple, gs: str,
                    gd: str) -> None:
        """A ``<zoneRoute>``: zones at both ends, two different gateways (hosts or routers) inside
        them, links."""
        for role, name, p in (("src", s, sp), ("dst", d, dp)):
            if p[0] != _ZONE:
                self.fail(f"{what}: {role} {name!r} is a {p[0]}, not a zone",
                          f"When defining a NetzoneRoute, {role} must be a netzone but '{name}' is not")
        gsp, gdp = self.points[gs], self.points[gd]
        for role, gp, name in (("gw_src", gsp, s), ("gw_dst", gdp, d)):
            if gp[0] == _ZONE:
                self.fail(f"{what}: {role} {a.get(role)!r} is a zone, not a host or router",
                          f"When defining a NetzoneRoute, {role} must be a host or a router but '{name}' is not.")
        if gs == gd:
            self.fail(f"{what}: gw_src and gw_dst are both {gs!r}",
                      f"Cannot define a NetzoneRoute from '{gs}' to itself")
        if not self.route_links:
            self.fail(f"{what} has no <link_ctn>", f"Empty route (between {s}@{gs} and {d}@{gd}) forbidden.")
        for role, gw, gp, name, own in (("gw_src", gs, gsp, s, sp[2]), ("gw_dst", gd, gdp, d, dp[2])):
            if not self.inside(gp, own):
                self.fail(f"{what}: {role} {gw!r} is not inside zone {name!r}",
                          f"Invalid NetzoneRoute from {s}@{gs} to {d}@{gd}: {role} {gw} belongs to {gp[1].id}, not "
                          f"to {name}.")

    def _record_route(self, z: _Zone, a: dict[str, str], what: str, s: str, d: str, gs: str, gd: str,
                      gws: bool) -> None:
        """The route (and its symmetrical twin) in the zone's table, refused when there already
        (``FullZone``/``FloydZone``: SimGrid's words; ``DijkstraZone``: a crash)."""
        symmetrical = a.get("symmetrical", "YES") in ("YES", "yes")
        if z.model in ("Dijkstra", "DijkstraCache"):
            if (s, d) in z.routes or (symmetrical and ((d, s) in z.routes or s == d)):
                self.crash(f"{what}: the route from {s!r} to {d!r} or its symmetrical twin exists already (SimGrid "
                           "3.32's DijkstraZone fails to word the error)")
            z.routes.add((s, d))
            if symmetrical:
                z.routes.add((d, s))
            if not gws:
                self.dijkstra_routed.update((s, d))
            return

        def at(x: str, g: str) -> str:
            return f"{x}@{g}" if gws else x

        if (s, d) in z.routes:
            self.fail(f"{what}: a route from {s!r} to {d!r} exists already (a route is symmetrical unless "
                      "symmetrical=\"NO\")",
                      f"The route between {at(s, gs)} and {at(d, gd)} already exists (Rq: routes are symmetrical by "
                      "default).")
        z.routes.add((s, d))
        if symmetrical and (s != d or z.model == "Floyd"):
            if (d, s) in z.routes:
                self.fail(f"{what}: its symmetrical twin from {d!r} to {s!r} exists already" +
                          (" (in a Floyd zone a symmetrical route from a point to itself is its own twin)"
                           if s == d else ""),
                          f"The route between {at(d, gs)} and {at(s, gd)} already exists. You should not declare the "
                          "reverse path as symmetrical.", "; write symmetrical=\"NO\"")
            z.routes.add((d, s))

    def add_bypass(self, a: dict[str, str], tag: str) -> None:
        """``NetZoneImpl::add_bypass_route``."""
        z = self.zone
        s, d = a.get("src", ""), a.get("dst", "")
        what = f"<{tag} src={s!r} dst={d!r}>"
        ends = f"{s} and {d}" if tag == "bypassRoute" else f"{s}@{a.get('gw_src')} and {d}@{a.get('gw_dst')}"
        if not self.route_links:
            self.fail(f"{what} has no <link_ctn>", f"Bypass route between {ends} cannot be empty.")
        if (s, d) in z.bypass:
            self.fail(f"{what}: a bypass route from {s!r} to {d!r} exists already",
                      f"The bypass route between {ends} already exists.")
        z.bypass.add((s, d))

    @staticmethod
    def inside(point: tuple, zone: _Zone | None) -> bool:
        """``NetZoneImpl::is_component_recursive``: ``point`` is in ``zone`` or one of its sub-zones."""
        z = point[1]
        while z is not None:
            if z is zone:
                return True
            z = z.parent
        return False

    def finish(self) -> None:
        """After the parser: the ``<trace_connect>`` elements (``parse_platform_file``), then the Wifi
        zones' access points (``WifiZone::do_seal``, when the platform is sealed)."""
        for kind in _TRACE_KINDS:
            for trace, (element, index) in self.connects[kind].items():
                if kind in ("HOST_AVAIL", "SPEED"):
                    ok, what = element in self.hosts, "Host"
                else:
                    ok, what = element in self.links or element == "__loopback__", "Link"
                if not ok:
                    self.index = index
                    self.fail(f"<trace_connect trace={trace!r} element={element!r}>: no {what.lower()} of that id",
                              f"<trace_connect kind=\"{kind}\">: {what} {element} undefined.")
        for zone, ap, index in self.wifi:
            self.index = index
            p = self.points.get(ap)
            if p is None:
                self.fail(f"zone {zone.id!r}: access_point {ap!r} names no host or router",
                          f"Access point '{ap}' of WIFI zone '{zone.id}' does not exist: no such host or router.")
            if p[0] == _ZONE:
                self.fail(f"zone {zone.id!r}: access_point {ap!r} is a zone",
                          f"Access point '{ap}' of WIFI zone '{zone.id}' must be either a host or a router.")


def _line_of(data: bytes, index: int) -> int | None:
    """The line of the element of document index ``index`` in ``data`` (as the reader gives the
    file to ElementTree: leading blanks dropped, then counted), or None."""
    body = data.lstrip()
    seen = [0]
    parser = xml.parsers.expat.ParserCreate()

    class Found(Exception):
        pass

    def start(_name: str, _attrs: dict) -> None:
        if seen[0] == index:
            raise Found(parser.CurrentLineNumber)
        seen[0] += 1

    parser.StartElementHandler = start
    try:
        parser.Parse(body, True)
    except Found as found:
        return found.args[0] + data[: len(data) - len(body)].count(b"\n")
    except xml.parsers.expat.ExpatError:
        pass
    return None


def check_build(root: ET.Element, data: bytes | None, src: str, max_hosts: int) -> BuildInfo:
    """Refuse a platform that SimGrid 3.32 refuses while it builds it (module docstring); run after
    :func:`.platform_dtd.check_structure`, on a structure SimGrid's parser accepts.

    Args:
        root: the parsed ``<platform>``.
        data: the file's bytes, to find the line of an error (None: no line).
        src: the file's name, for messages.
        max_hosts: the engine's size limit, counted before any host is built.

    Returns:
        :class:`BuildInfo` (each host's routing model, for the reader and the t = 0 check).

    Raises:
        PlatformError: ``"{src}:{line}: {element}: {what is wrong}: real Batsim 4.2.1 aborts
            (\\"{SimGrid's words}\\")"``, the first error in document order as SimGrid meets it;
            or the size limit's message (file, host or cluster, count).
    """
    b = _Builder(src, max_hosts)
    start, end = b.start, b.end
    try:
        count = 0   # document index of the last element met (<platform> is 0)
        stack: list[tuple[ET.Element, str, int, object]] = [(root, "platform", 0, iter(root))]
        while stack:
            elem, tag, index, children = stack[-1]
            for child in children:   # type: ignore[attr-defined]
                count += 1
                ctag = child.tag   # a str: ElementTree drops comments, the structure check refused namespaces
                if ctag == "prop":
                    continue   # read with their element (SimGrid keeps the first value of an id)
                b.index = count
                start(child, ctag)
                if len(child):
                    stack.append((child, ctag, count, iter(child)))
                    break
                end(child, ctag)
            else:
                stack.pop()
                b.index = index
                end(elem, tag)
        b.finish()
    except _Abort as exc:
        index, message = exc.args
        line = _line_of(data, index) if data is not None else None
        raise PlatformError(f"{src}{'' if line is None else f':{line}'}: {message}") from None
    return BuildInfo(b.points, b.dijkstra_routed, b.unitless_values())
