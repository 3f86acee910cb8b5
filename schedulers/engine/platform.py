"""Read a SimGrid platform XML (DTD 4.x) the way Batsim 4.2.1 uses it.

What is read: ``<host>`` (``id``, ``speed`` with units and one value per pstate, ``core``,
``pstate``, ``<prop>`` children), ``<cluster>`` (``prefix``/``radical``/``suffix`` expansion,
``speed``, ``core``, ``<prop>`` children copied to every host), nested ``<zone>``/``<AS>`` (their
``<prop>`` become zone properties), and whether the platform has network links (``<link>``,
``<backbone>``, cluster ``bw``) — then the delays of Batsim's internal messages
(:mod:`.netroute`, :attr:`PlatformSpec.message_delays`; also without links when the master host
sits in a ``routing="Full"`` zone, whose loopback makes each message take 1e-10 s) and the routes
that jobs' communications load (:attr:`PlatformSpec.routes`). Links carrying
``<prop id="virtual" value="yes"/>`` (the infinitely fast interconnect gridsched's multi-zone
Grid'5000 platforms need so that SimGrid can route Batsim's messages between zones) do not count
as a network (Batsim's messages still cross them: 1e-18 s). The file's structure is first checked
as SimGrid 3.32's parser checks it against its DTD (:mod:`.platform_dtd`: where each element may
be, text, attributes; real Batsim 4.2.1 aborts on what it refuses); ``<config>`` options are
checked as SimGrid 3.32 applies them (:mod:`.sgconfig`); then what SimGrid 3.32 refuses while it
builds the platform (:mod:`.platform_build`: routing models, a single root zone, names given
twice, values and units as SimGrid reads them, routes and their links; real Batsim 4.2.1 aborts
on each, the master host in a None or route-less Dijkstra zone at t = 0); a ``<cluster>``
directly under ``<platform>`` is the root zone (its hosts may be the master, ``-m``). Routing
names are compared without case, as SimGrid does (``routing="full"`` is a Full zone).

Batsim semantics (observed on Batsim 4.2.1, ``shared/batsim-4.2.1``):

* the master host (name ``master_host`` by default, or role ``master``) is not a compute resource;
  hosts with role ``storage`` are storage resources;
* compute resources get ids ``0..n-1`` in lexicographic order of host names;
* each compute host's properties gain ``role: ""`` when absent.

Size: a platform has at most :data:`MAX_HOSTS` hosts, more than the nodes of the largest
supercomputer (Fugaku, 158,976). Each host costs about 2 KB between the platform read here, the
engine's machine states and the policy's view of the hosts (100,000 hosts: 3 s and 125 MB to
read, 200 MB peak for a one-job EASY run with energy, measured on a 2-core machine), so a ``<cluster
radical="0-99999999">`` would need hundreds of gigabytes: it is refused, with the file, the
cluster and the count, before any host is built.

Energy: SimGrid's host-energy plugin (SimGrid >= 3.24): ``wattage_per_state`` holds one
``Idle:Epsilon:AllCores`` (or ``Idle:AllCores``, then Epsilon = Idle) triple per pstate, watts,
read by :func:`schedulers.core.power.parse_watt_ranges` (the policies read them there too)
(between 0 and :data:`MAX_WATTS`: a NaN, infinite or negative power would give NaN or negative
energy, and the bound keeps every energy finite: watts x seconds x hosts stays far below the
largest double);
a host with ``C`` cores of which a load ``L`` (in cores, possibly fractional) is busy draws
``Epsilon + (AllCores - Epsilon) * min(L / C, 1)`` when ``L > 0`` and ``Idle`` otherwise.
``wattage_off`` is the power of a host turned off (Batsim never turns hosts off: sleeping is a
pstate of its own).
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

from ..core.model import parse_sleep_pstates
from ..core.power import MAX_WATTS, PowerRange, PowerRangeError, parse_watt_ranges
from ..inputs.errors import PlatformError
from ..inputs.jsonfile import regular_file
from .netroute import MessageDelays, NetworkUnsupported, Routes, message_delays, platform_routes
from .platform_build import (SimGridAbort, check_build, parse_double, parse_speeds, radical_ranges,
                             routing_model, stoi)
from .platform_dtd import check_structure, stod
from .sgconfig import check_cli, read_config
from .stdhash import UnorderedKeys

#: Largest number of hosts of a platform (``<host>`` elements and hosts of ``<cluster>`` radicals
#: together, master host included); about 0.5 GB of memory at most (module docstring).
MAX_HOSTS = 250_000


@functools.lru_cache(maxsize=1024)
def _speeds(text: str) -> tuple[float, ...]:
    """:func:`.platform_build.parse_speeds`, once per text (the hosts of a cluster share theirs)."""
    return tuple(parse_speeds(text))


def parse_speed(text: str, where: str) -> float:
    """Parse one SimGrid speed (``"100Mf"``, ``"1e-9Mf"``, ``"0.5f"``, ``"14.04Gf"``, ``"1e3"``) in
    flops/s, as SimGrid 3.32 reads it (:func:`.platform_build.parse_speeds`: units ``f`` and
    ``flops`` with SI prefixes, case-sensitive; ``src/xbt/xbt_parse_units.cpp``).

    Raises:
        PlatformError: unknown unit or not a number (SimGrid aborts on these), or a negative,
            NaN or infinite speed (SimGrid reads them; the engine does not simulate them); the
            message names ``where``.
    """
    try:
        values = _speeds(text)
    except SimGridAbort as exc:
        if str(exc).startswith("unknown unit"):
            raise PlatformError(f"{where}: unknown speed unit in {text!r} (use f, kf, Mf, Gf, Tf...)") from None
        raise PlatformError(f"{where}: cannot read speed {text!r} ({exc})") from None
    if len(values) != 1:
        raise PlatformError(f"{where}: cannot read speed {text!r} (one value expected)")
    v = values[0]
    if not math.isfinite(v) or v < 0:
        raise PlatformError(f"{where}: speed must be a finite number >= 0, got {text!r}")
    return v


@dataclass(slots=True)
class HostSpec:
    """A host as read from the XML: name, per-pstate speeds (flops/s, per core), cores, properties."""

    name: str
    speeds: list[float]
    cores: int
    pstate: int
    properties: dict[str, str]
    zone_properties: dict[str, str]
    power: list[PowerRange] | None = None
    wattage_off: float | None = None
    #: Batsim's classes of the pstates that ``sleep_pstates`` names (``Machine::pstates``):
    #: ``"sleep"`` or ``"transition"`` (a virtual switching pstate); the others compute
    #: (:func:`classify_sleep_pstates`, read only with energy, as Batsim does).
    pstate_kinds: dict[int, str] = field(default_factory=dict)
    #: Each sleep pstate's ``(virtual off, virtual on)`` pstates (``Machine::sleep_pstates``).
    sleep_switch: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: Why real Batsim 4.2.1 with ``-E`` aborts on this host's ``sleep_pstates`` (None: it does not).
    sleep_error: str | None = None
    #: The order of Batsim's machine properties, ``role`` included (:func:`_simgrid_order`).
    key_order: tuple[str, ...] = ()

    @property
    def role(self) -> str:
        return self.properties.get("role", "")


@dataclass(slots=True)
class PlatformSpec:
    """The platform: compute hosts in Batsim id order, master and storage hosts, network flag."""

    source: str
    compute: list[HostSpec]
    master: HostSpec | None
    storage: list[HostSpec] = field(default_factory=list)
    has_network: bool = False
    #: The master host sits in a ``routing="Full"`` zone: SimGrid 3.32 (``FullZone::do_seal``)
    #: routes a host to itself through the ptask model's ``__loopback__`` link, so each of
    #: Batsim's 1-byte internal messages between its actors on the master host takes 1e-10 s
    #: (10 GBps, no latency); on ``Vivaldi`` zones (Batsim's ``*_no_net*`` examples) they take
    #: no time. Such platforms get :attr:`message_delays` even without links, so that the engine
    #: times these messages on SimGrid's clock (:mod:`schedulers.engine.netserver`).
    master_loopback: bool = False
    #: On a platform with network links, or whose master host has the loopback: how long
    #: Batsim's internal messages take (:mod:`schedulers.engine.netroute`), or why the engine
    #: cannot tell (``network_error``, links only). None: messages take no time (step clock).
    message_delays: "MessageDelays | None" = None
    network_error: str | None = None
    #: On a platform with network links, or whose master host has the loopback: the routes
    #: between hosts (the links a job's communications load, :mod:`schedulers.engine.netroute`;
    #: in a ``Full`` zone without links, a host to itself crosses ``__loopback__``, shared with
    #: Batsim's messages); None otherwise.
    routes: "Routes | None" = None
    #: Why the embedded engine cannot run this platform's ``Vivaldi`` zone (None: it can): a
    #: host there without ``coordinates`` (SimGrid aborts when it routes a message from or to
    #: it), or coordinates that are not all 0 (SimGrid then gives each message a latency,
    #: :func:`vivaldi_error`).
    vivaldi_error: str | None = None
    #: Compute hosts of a ``Vivaldi`` zone without ``coordinates``: SimGrid aborts the run when it
    #: routes a message or a communication from or to one of them (:meth:`.ptasks.
    #: ParallelTasks.routed`); a master host without them is a :attr:`vivaldi_error` (Batsim's
    #: first message, at t = 0, is routed from it).
    uncoordinated: frozenset = frozenset()
    #: Why the embedded engine cannot run this platform although Batsim can (SimGrid traces,
    #: :func:`traces_error`); None: it can.
    unsimulated: str | None = None
    #: Speeds, bandwidths and latencies written without a unit (``speed="1e9"``), which SimGrid
    #: 3.32 reads in its default unit with only a log line: attribute name -> the values as
    #: written, in file order (:attr:`.platform_build.BuildInfo.unitless`, recorded while the
    #: file is read; shown by :func:`.oddities.input_warnings`).
    unitless: dict[str, list[str]] = field(default_factory=dict)
    #: Why SimGrid's energy plugin (``-E`` only: without it Batsim never reads them) aborts on
    #: the platform: the first host in file order (the master and storage hosts too) whose
    #: ``wattage_per_state`` or ``wattage_off`` it refuses, that host's :attr:`HostSpec.power`
    #: then None; None when it does not.
    power_error: str | None = None
    #: Hosts named by ``-r HOSTS:ROLE`` (``gridsched engine``) that the platform does not have:
    #: real Batsim 4.2.1 ignores them without a word (``Machines::create_machines`` only looks
    #: the platform's hosts up in the map).
    unknown_role_hosts: tuple[str, ...] = ()

    @property
    def has_energy(self) -> bool:
        return all(h.power is not None for h in self.compute)


def _parse_power(h: HostSpec, source: str) -> str | None:
    # SimGrid 3.32 reads these two names only (host_energy.cpp, init_watts_range_list and the
    # HostEnergy constructor); 'watt_per_state'/'watt_off' (SimGrid < 3.24) leave the host
    # without a power model: Batsim -E aborts at its first energy read (see old_power_names).
    # Only the energy plugin reads them: a bad value is returned, an error only with -E
    # (PlatformSpec.power_error, check_compute_speeds and the engine).
    try:
        _read_power(h, source)
    except _Unsimulated as exc:
        h.power, h.wattage_off = None, None
        return f"{exc} (real Batsim 4.2.1 runs with it; the engine bounds powers so that no energy is NaN, infinite or negative)"
    except PlatformError as exc:
        h.power, h.wattage_off = None, None
        return f"{exc} (SimGrid's energy plugin aborts with -E)"
    return None


class _Unsimulated(PlatformError):
    """A power SimGrid reads but the engine does not simulate (:class:`~..core.power.PowerRangeError`)."""


def _unread_power(name: str, raw: str) -> str | None:
    """What SimGrid 3.32's energy plugin refuses in the ``wattage_per_state`` value ``raw`` of host
    ``name`` among what :func:`parse_watt_ranges` reads: a power that is not a whole number for
    ``xbt_str_parse_double`` (blanks after it, ``1_000``), pstate by pstate and Idle, Epsilon,
    AllCores in turn (``HostEnergy::init_watts_range_list``, ``src/plugins/host_energy.cpp``);
    None when there is none (an entry of neither 2 nor 3 values is left to parse_watt_ranges)."""
    for i, chunk in enumerate(raw.split(",")):
        parts = chunk.split(":")
        if len(parts) not in (2, 3):
            return None
        for what, part in zip(("Idle", "Epsilon", "AllCores") if len(parts) == 3 else ("Idle", "AllCores"), parts):
            if parse_double(part) is None:
                return (f"wattage_per_state entry {i} is {chunk!r}: its {what} power {part!r} is not a number with "
                        f"nothing after it (blanks may only come before), as SimGrid reads it (\"Invalid {what} "
                        f"value for pstate {i} on host {name}: {part}\")")
    return None


def _read_power(h: HostSpec, source: str) -> None:
    raw = h.properties.get("wattage_per_state")
    if raw is None:
        return
    problem = _unread_power(h.name, raw)
    if problem is not None:
        raise PlatformError(f"{source}: host {h.name!r}: {problem}")
    try:
        ranges = parse_watt_ranges(raw)
    except PowerRangeError as exc:
        raise _Unsimulated(f"{source}: host {h.name!r}: {exc}") from None
    except ValueError as exc:
        raise PlatformError(f"{source}: host {h.name!r}: {exc}") from None
    if len(ranges) != len(h.speeds):
        raise PlatformError(
            f"{source}: host {h.name!r} has {len(h.speeds)} pstates in 'speed' but "
            f"{len(ranges)} entries in wattage_per_state")
    h.power = ranges
    off = h.properties.get("wattage_off")
    if off is not None:   # (read by std::stod: its leading number, "10W" is 10; HostEnergy's constructor)
        v = stod(off)
        if v is None:
            raise PlatformError(f"{source}: host {h.name!r}: wattage_off {off!r} is not a number (\"Invalid value "
                                f"for property wattage_off of host {h.name}: {off}\")")
        h.wattage_off = v
        if not 0 <= h.wattage_off <= MAX_WATTS:
            raise _Unsimulated(f"{source}: host {h.name!r}: wattage_off {off!r} must be a number of "
                                f"watts >= 0 and <= {MAX_WATTS:g}")


def classify_sleep_pstates(h: HostSpec, source: str) -> None:
    """Read host ``h``'s ``sleep_pstates`` as Batsim 4.2.1 does with ``-E``
    (``Machines::create_machines``, ``src/machines.cpp``) into :attr:`HostSpec.pstate_kinds` and
    :attr:`HostSpec.sleep_switch`, or set :attr:`HostSpec.sleep_error` to the reason Batsim aborts.

    The property holds one or several ``S:OFF:ON`` triples separated by commas
    (:func:`schedulers.core.model.parse_sleep_pstates`). Triple by triple, in order: each pstate
    must exist on the host; an ``OFF`` or ``ON`` pstate already classed must be a transition one
    (else Batsim aborts); an ``S`` already classed is only logged (an error Batsim goes on after);
    then ``S`` becomes a sleep pstate switched through ``OFF`` and ``ON`` (a later triple of the
    same ``S`` replaces the earlier), and ``ON`` then ``OFF`` become transition pstates -- so a
    pstate given as ``S`` and as ``OFF`` or ``ON`` of one triple ends a transition pstate, that no
    request can reach. Two sleep pstates may share their virtual pstates (``"1:3:2, 4:3:2"``)."""
    raw = h.properties.get("sleep_pstates")
    if raw is None:
        return
    where = f"{source}: host {h.name!r}: sleep_pstates {raw!r}"
    try:
        triples = parse_sleep_pstates(raw)
    except ValueError as exc:
        h.sleep_error = f"{where}: {exc} (real Batsim 4.2.1 aborts with -E)"
        return
    n = len(h.speeds)
    kinds: dict[int, str] = {}
    switch: dict[int, tuple[int, int]] = {}
    for s, off, on in triples:
        for p in (s, on, off):
            if not 0 <= p < n:
                h.sleep_error = (f"{where}: pstate {p} does not exist (the host has {n}); real Batsim 4.2.1 "
                                 "aborts with -E")
                return
        for p in (on, off):
            if kinds.get(p, "transition") != "transition":
                h.sleep_error = (f"{where}: pstate {p} is a virtual transition pstate and also a {kinds[p]} "
                                 "pstate; real Batsim 4.2.1 aborts with -E (\"a pstate can either be a "
                                 "computation one, a sleeping one or a virtual transition one\")")
                return
        switch[s] = (off, on)
        kinds[s] = "sleep"
        kinds[on] = "transition"
        kinds[off] = "transition"
    h.pstate_kinds, h.sleep_switch = kinds, switch


def old_power_names(h: HostSpec) -> str:
    """A note for a host without ``wattage_per_state`` that has SimGrid's pre-3.24 names
    (``watt_per_state``, ``watt_off``), which SimGrid 3.32 does not read: it gives such a host no
    power model, and real Batsim 4.2.1 with ``-E`` aborts at its first energy read ("No power
    range properties specified for host", ``sg_host_get_consumed_energy``). Empty otherwise."""
    old = [k for k in ("watt_per_state", "watt_off") if k in h.properties]
    if not old or "wattage_per_state" in h.properties:
        return ""
    return (f" (host {h.name!r} has {' and '.join(repr(k) for k in old)}, names SimGrid 3.32 no longer reads: "
            "rename them 'wattage_per_state' and 'wattage_off')")


def _props(elem: ET.Element) -> dict[str, str]:
    """The ``<prop>`` children of ``elem``; an id given twice keeps its first value, as SimGrid
    3.32 stores them (``STag_surfxml_prop``, ``try_emplace``; recorded on real Batsim 4.2.1:
    ``wattage_per_state`` 95:190 then 10:20 on one host charged 95 W)."""
    out: dict[str, str] = {}
    for p in elem:
        if _tag(p) == "prop":
            out.setdefault(p.get("id", ""), p.get("value", ""))
    return out


@functools.lru_cache(maxsize=1024)
def _simgrid_order(keys: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The iteration orders of the property maps of a host or zone whose ``<prop>`` ids are
    ``keys`` (file order, each once): the host's or zone's own map, then Batsim's machine
    properties (the host's map copied, ``role`` inserted: ``Machines::create_machines``). SimGrid
    3.32 reads the ids into a parser's ``std::unordered_map`` and copies that map's entries, in
    its order, into the host's or zone's own; Batsim 4.2.1 copies a zone's, in its order, into a
    map of its zones' properties (``attach_zone_properties_to_machines``), then lists each in its
    order in SIMULATION_BEGINS (:mod:`.stdhash`; checked on real Batsim 4.2.1 with random property
    names on hosts, nested zones and a cluster: ``tests/fixtures/batsim_property_order``)."""
    own = UnorderedKeys(UnorderedKeys(keys).order())
    machine = own.copy()
    machine.insert("role")
    return tuple(own.order()), tuple(machine.order())


def _tag(e: ET.Element) -> str:
    t = e.tag
    return t.rsplit("}", 1)[-1] if isinstance(t, str) else ""


def _radical_ranges(radical: str, where: str) -> list[tuple[int, int]]:
    """The ``(first, last)`` number ranges of a cluster's ``radical`` (``"0-3,7"``), unexpanded, as
    SimGrid 3.32 reads them (:func:`.platform_build.radical_ranges`)."""
    try:
        return radical_ranges(radical)
    except SimGridAbort as exc:
        raise PlatformError(f"{where}: bad radical {radical!r} ({exc})") from None


def _expand_radical(radical: str, where: str, room: int = MAX_HOSTS) -> list[str]:
    """The host numbers of ``radical`` as strings, in order.

    Raises:
        PlatformError: a bad radical, or more than ``room`` hosts (counted before expanding).
    """
    ranges = _radical_ranges(radical, where)
    count = sum(max(0, hi - lo + 1) for lo, hi in ranges)
    if count > room:
        raise PlatformError(f"{where}: radical {radical!r} gives {count:,} hosts; a platform may have at most "
                            f"{MAX_HOSTS:,} hosts (schedulers.engine.platform.MAX_HOSTS)")
    return [str(i) for lo, hi in ranges for i in range(lo, hi + 1)]


def _host_from(name: str, speed: str | None, core: str | None, pstate: str | None,
               props: dict[str, str], zprops: dict[str, str], where: str) -> HostSpec:
    if not name:
        raise PlatformError(f"{where}: a host has no 'id'")
    if not speed:
        raise PlatformError(f"{where}: host {name!r} has no speed")
    speeds = [parse_speed(s, f"{where}: host {name!r}") for s in speed.split(",")]
    try:  # read as SimGrid 3.32 reads them (std::stoi: "2x" is 2, "1.0" is 1)
        cores = stoi(core) if core is not None else 1
        ps = stoi(pstate) if pstate is not None else 0
    except SimGridAbort:
        raise PlatformError(f"{where}: host {name!r}: 'core' and 'pstate' must be integers") from None
    if cores < 1:
        raise PlatformError(f"{where}: host {name!r}: core must be >= 1")
    if not 0 <= ps < len(speeds):
        raise PlatformError(f"{where}: host {name!r}: initial pstate {ps} but only {len(speeds)} speeds")
    return HostSpec(name=name, speeds=speeds, cores=cores, pstate=ps, properties=dict(props),
                    zone_properties=dict(zprops), key_order=_simgrid_order(tuple(props))[1])


_STOD = re.compile(r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.IGNORECASE)


def vivaldi_error(src: str, coords: dict[str, str | None], master: str, timed: bool = False) -> str | None:
    """Why the embedded engine cannot run a platform whose ``Vivaldi`` zones hold the hosts
    ``coords`` (host name -> its ``coordinates`` attribute, None when absent), or None;
    ``master``: the master host's name; ``timed``: the engine times the messages of this
    platform (:func:`vivaldi_routes`: the master and every compute host in one Vivaldi zone, no
    link), so coordinates other than 0 are no error.

    SimGrid 3.32 (``src/kernel/routing/VivaldiZone.cpp``): a route between two hosts of a Vivaldi
    zone has the latency ``(sqrt((x1-x2)^2 + (y1-y2)^2) + |z1| + |z2|) / 1000`` s, from the
    hosts' coordinates (three numbers separated by single spaces, each read by ``std::stod``);
    a host without them aborts the run (``Please specify the Vivaldi coordinates of Host ...``)
    when a route from or to it is computed: the master host at Batsim's first message, a
    compute host when a job on it sends its end (real Batsim 4.2.1). With coordinates all 0
    every message is instantaneous, which is what the engine plays on compute-only platforms;
    other coordinates give Batsim's messages latencies (a 1-byte message from ``0 0 5`` to
    ``3 4 0`` takes 0.01 s, SimGrid 3.32 through python3-simgrid), which the engine times only
    where ``timed``."""
    for name, text in coords.items():
        if text is None:
            if name != master:
                continue   # (PlatformSpec.uncoordinated: an error once a message is routed from it)
            return (f"{src}: host {name!r} has no 'coordinates' in its Vivaldi zone: real Batsim 4.2.1 aborts "
                    f"at t = 0 (SimGrid 3.32: \"Please specify the Vivaldi coordinates of Host {name}\"), when "
                    "it routes its first message from the master host; give it coordinates=\"0 0 0\"")
        parts = text.split(" ")
        if len(parts) != 3:
            return (f"{src}: host {name!r}: coordinates {text!r}: SimGrid 3.32 aborts (\"Coordinates of {name} "
                    "must have 3 dimensions\", three numbers separated by single spaces)")
        values = []
        for part in parts:
            m = _STOD.match(part)
            if m is None:
                return f"{src}: host {name!r}: coordinates {text!r}: {part!r} is not a number (SimGrid 3.32 aborts)"
            values.append(float(m.group(0)))
        if any(v != 0 for v in values) and not timed:
            return (f"{src}: host {name!r}: Vivaldi coordinates {text!r}: SimGrid 3.32 gives each of Batsim's "
                    "messages the latency of its hosts' distance (distance / 1000 s); the embedded engine times "
                    "it only where the master host and every compute host are in one Vivaldi zone without "
                    "links, else only where every coordinate is 0: use real Batsim (gridsched run --engine batsim)")
    return None


#: ``<host`` followed by what may follow an element's name: a candidate ``<host>`` element.
_HOST_TAG = re.compile(rb"<host[\s/>]")

#: The fewest bytes a ``<host>`` element takes (``<host id="a" speed="1f"/>`` and a newline).
_HOST_BYTES = 20


class _TooMany(Exception):
    pass


def _refuse_huge(data: bytes, src: str) -> None:
    """Refuse a platform of more than :data:`MAX_HOSTS` ``<host>`` elements before it is parsed
    into a tree (a 200 MB file of 2.6 million hosts would take about 30 s and 2.5 GB): the
    candidate ``<host`` tags are counted in the bytes, and only when they pass the bound (a
    commented-out host counts there) does a streamed parse (expat, no tree) count the elements,
    stopping at the first one past the bound.

    Raises:
        PlatformError: ``file, line N: host 'ID': more than MAX_HOSTS hosts...``.
    """
    if len(data) <= MAX_HOSTS * _HOST_BYTES:
        return
    tags = _HOST_TAG.finditer(data)
    if sum(1 for _ in itertools.islice(tags, MAX_HOSTS + 1)) <= MAX_HOSTS:
        return
    from xml.parsers import expat

    parser = expat.ParserCreate()
    count = 0

    def start(name: str, attrs: dict[str, str]) -> None:
        nonlocal count
        if name == "host":
            count += 1
            if count > MAX_HOSTS:
                raise _TooMany(parser.CurrentLineNumber, attrs.get("id", ""))

    parser.StartElementHandler = start
    try:
        parser.Parse(data.lstrip(), True)
    except expat.ExpatError:
        return   # malformed: the parse says where
    except _TooMany as exc:
        line, host = exc.args
        raise PlatformError(f"{src}, line {line}: host {host!r}: more than {MAX_HOSTS:,} hosts; a platform may have "
                            f"at most {MAX_HOSTS:,} (schedulers.engine.platform.MAX_HOSTS)") from None


def _coordinate(part: str) -> float:
    """One number of a Vivaldi ``coordinates`` attribute, read as ``std::stod`` reads it (its
    leading number; the attribute was checked by :func:`vivaldi_error`)."""
    m = _STOD.match(part)
    if m is None:
        raise ValueError(f"not a coordinate: {part!r}")
    return float(m.group(0))


def vivaldi_routes(coords: dict[str, str | None], master: str, compute: list[str]) -> tuple[Routes, MessageDelays]:
    """The routes of a platform whose master and compute hosts are all in one ``Vivaldi`` zone
    without links (their ``coordinates`` checked by :func:`vivaldi_error`): a route has no link
    and the latency ``(sqrt((x1-x2)^2 + (y1-y2)^2) + |z1| + |z2|) / 1000`` s
    (``VivaldiZone::get_local_route``, SimGrid 3.32, in its order of operations), a host to
    itself ``2 |z| / 1000`` s. A 1-byte message (``L07Action``: no link, no flop) is done once
    that latency is paid; a parallel task's communications pay the largest latency of their
    pairs and are bounded by TCP-gamma over twice it (:mod:`.execution`). A compute host without
    coordinates gets no latency here: SimGrid aborts when it is routed
    (:attr:`PlatformSpec.uncoordinated`)."""
    xyz: dict[str, list[float]] = {}
    for name, text in coords.items():
        if text is not None:
            xyz[name] = [_coordinate(part) for part in text.split(" ")]

    def latency(a: str, b: str) -> float:
        p, q = xyz.get(a), xyz.get(b)
        if p is None or q is None:
            return 0.0
        dist = math.sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1])) + abs(p[2]) + abs(q[2])
        return 0.0 + dist / 1000.0

    names = {master, *compute}
    routes = Routes(lambda a, b: [], names, latency)
    return routes, MessageDelays(master_route=(latency(master, master), math.inf),
                                 host_routes={h: (latency(h, master), math.inf) for h in compute})


def read_platform(path: str | PathLike[str], master_host: str = "master_host", *,
                  text: str | bytes | None = None, roles: dict[str, str] | None = None,
                  mmax: int = 0, sg_config: list[str] | tuple[str, ...] = ()) -> PlatformSpec:
    """Read a SimGrid platform file.

    Args:
        path: the XML file (with ``text``: only the name used in messages, e.g. ``<synthetic>``).
        master_host: name of Batsim's master host (``--master-host``, default ``master_host``).
        text: the XML itself, for platforms built in memory (scenario generators).
        roles: Batsim's ``-r HOSTS:ROLE`` (host name -> role, as ``gridsched engine`` reads them), appended to
            the hosts' ``role`` property as Batsim does.
        mmax: Batsim's ``--mmax`` (0: every compute host; else the first ``mmax`` by name).
        sg_config: Batsim's ``--sg-cfg NAME:VALUE`` options (:func:`.sgconfig.check_cli`): set
            before the platform's ``<config>``, which cannot change them.

    Returns:
        A :class:`PlatformSpec` whose ``compute`` hosts are in Batsim id order.

    Raises:
        PlatformError: unreadable/malformed XML, a structure SimGrid's parser refuses
            (:func:`.platform_dtd.check_structure`: ``file:line: ...``), what SimGrid refuses
            while it builds the platform (:func:`.platform_build.check_build`: ``file:line: ...``,
            SimGrid's words quoted; host without speed, bad units, duplicate host names among
            them), a master host on which real Batsim stops at t = 0
            (:meth:`.platform_build.BuildInfo.start_error`), no compute host, inconsistent energy
            properties (message names file and host), roles Batsim refuses (an unknown role, two
            master hosts), ``mmax`` above the number of compute hosts.
    """
    src = str(path)
    root, data = _parse_xml(src, text)
    check_structure(root, data, src)  # simgrid.dtd, as SimGrid's parser enforces it (real Batsim aborts)
    read_config(root, src, check_cli(list(sg_config)) if sg_config else frozenset())  # SimGrid options: unknown keys and values the engine does not model refused
    # what SimGrid refuses while it builds the platform (real Batsim aborts), and each host's routing model
    built = check_build(root, data, src, MAX_HOSTS)
    found = _HostWalk(src)
    try:
        found.walk(root, {})
    except RecursionError:
        raise PlatformError(f"{src}: zones nested too deeply to read") from None
    hosts = found.hosts
    seen: set[str] = set()
    for h in hosts:
        if h.name in seen:
            raise PlatformError(f"{src}: duplicate host id {h.name!r}")
        seen.add(h.name)
    master, compute, storage = _roles(hosts, master_host, roles, src)
    if not compute:
        raise PlatformError(f"{src}: no compute host (every host is the master or a storage)")
    if mmax:
        _keep_first(compute, mmax, src)
    if master is not None:
        why = built.start_error(src, master.name)  # SimGrid routes Batsim's first message, at t = 0
        if why:
            raise PlatformError(why)
    compute.sort(key=lambda h: h.name)
    for h in (*compute, *storage):   # Batsim's order (a role from -r too: the key_order has it)
        props = h.properties
        if "role" not in props:
            props["role"] = ""
        h.properties = {k: props[k] for k in h.key_order or tuple(props) if k in props}
    power_errors = [_parse_power(h, src) for h in hosts]   # (SimGrid's energy plugin: every host, file order)
    for h in hosts:   # (Batsim reads every host's, the master's and storage hosts' too)
        classify_sleep_pstates(h, src)
    if master is None:
        raise PlatformError(f"{src}: no master host: no host named {master_host!r} (--master-host) nor with role "
                            "'master'; real Batsim 4.2.1 aborts (\"Cannot find the \"master\" role in the platform "
                            "file\"): add <host id=\"master_host\" speed=\"1Gf\"/>, Batsim's own host")
    loopback = found.routing_of.get(master.name) == "Full"
    routes, delays, net_error = _message_routes(root, src, master, compute, found.has_network, loopback)
    viv_error = None
    coords = found.coords
    if coords:
        viv_error, timed = _vivaldi(src, found, master, compute, delays is None)
        if timed is not None:
            routes, delays = timed
    return PlatformSpec(source=src, compute=compute, master=master, storage=storage, has_network=found.has_network,
                        master_loopback=loopback, message_delays=delays, network_error=net_error, routes=routes,
                        vivaldi_error=viv_error,
                        uncoordinated=frozenset(h.name for h in compute if h.name in coords and coords[h.name] is None),
                        unsimulated=traces_error(root, src), unitless=built.unitless,
                        power_error=next(filter(None, power_errors), None),
                        unknown_role_hosts=tuple(h for h in (roles or {}) if h not in seen))


def _parse_xml(src: str, text: str | bytes | None) -> tuple[ET.Element, bytes]:
    """The platform's XML tree and bytes (the file ``src``, or ``text``).

    Raises:
        PlatformError: not a regular file, unreadable, too many hosts, malformed XML, a root
            element other than ``<platform>``.
    """
    try:
        if text is None:
            regular_file(src, "platform", PlatformError)   # (a FIFO would block the read)
        data = Path(src).read_bytes() if text is None else (
            text.encode() if isinstance(text, str) else text)
        _refuse_huge(data, src)
        # SimGrid accepts blank lines before <?xml; attribute values keep their tabs and newlines
        root = ET.fromstring(keep_attribute_blanks(data.lstrip()))
    except ET.ParseError as exc:
        raise PlatformError(f"{src}: malformed XML: {exc}{_not_xml_hint(data)}") from None
    except OSError as exc:
        raise PlatformError(f"{src}: cannot read platform: {exc.strerror or exc}") from None
    if _tag(root) != "platform":
        raise PlatformError(f"{src}: root element is <{_tag(root)}>, expected <platform>")
    return root, data


#: The markup of an XML document: comments, CDATA sections, processing instructions and
#: declarations are skipped; group 1 is a start tag (its quoted attribute values may hold ``>``).
_MARKUP = re.compile(rb"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<![^>]*>"
                     rb"|(<[^!?/][^\"'>]*(?:(?:\"[^\"]*\"|'[^']*')[^\"'>]*)*>)", re.S)
_QUOTED = re.compile(rb"\"[^\"]*\"|'[^']*'")
_BLANK_REFS = ((b"\r\n", b"&#10;"), (b"\r", b"&#10;"), (b"\n", b"&#10;"), (b"\t", b"&#9;"))


def _refs(value: re.Match) -> bytes:
    text = value.group()
    for raw, ref in _BLANK_REFS:
        text = text.replace(raw, ref)
    return text


def _tag_refs(m: re.Match) -> bytes:
    tag = m.group(1)
    if tag is None or not any(c in tag for c in (b"\t", b"\n", b"\r")):
        return m.group()
    return _QUOTED.sub(_refs, tag)


def keep_attribute_blanks(data: bytes) -> bytes:
    """``data`` (an XML document) with the tabs and line ends inside its attribute values written
    as character references, so that an XML parser keeps them as SimGrid 3.32's does.

    A conforming parser (expat, ElementTree) turns a literal tab, newline or carriage return of an
    attribute value into a space; SimGrid's parser (FleXML, ``surf_parse``) keeps tabs and
    newlines (a CR-LF pair or a lone CR read as a newline), so real Batsim 4.2.1 sends a
    ``<prop value="a<TAB>b">`` as ``"a\\tb"`` in SIMULATION_BEGINS and reads ``coordinates="0<TAB>0
    0"`` as two coordinates (recorded in ``tests/fixtures/batsim_attribute_blanks``). Character
    references (``&#9;``) are kept by both."""
    if b"\t" not in data and b"\n" not in data and b"\r" not in data:
        return data
    return _MARKUP.sub(_tag_refs, data)


def _not_xml_hint(data: bytes) -> str:
    """What a file that is not XML at all looks like, for the message (a swapped ``-p``/``-w``)."""
    head = data.lstrip()[:64]
    if head.startswith(b"\x1f\x8b"):
        return "; the file is gzip-compressed: SimGrid (and real Batsim) read a platform uncompressed"
    if head[:1] in (b"{", b"["):
        return "; it looks like JSON (a Batsim workload?): the platform is SimGrid XML (were -p and -w swapped?)"
    if head[:1] in (b";", b"#") or head[:1].isdigit():
        return "; it looks like an SWF/GWF trace: the platform is SimGrid XML (were -p and -w swapped?)"
    return ""


class _HostWalk:
    """The hosts of a platform tree in document order (``<host>``, ``<cluster>``, ``<cabinet>``),
    each with its zones' properties, and what the network reading needs: whether there are links,
    each host's routing model, the coordinates and zone of the hosts of Vivaldi zones."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.hosts: list[HostSpec] = []
        self.has_network = False
        self.routing_of: dict[str, str] = {}
        self.coords: dict[str, str | None] = {}   # hosts of Vivaldi zones: their coordinates
        self.vzone: dict[str, int] = {}           # hosts of Vivaldi zones: their zone

    def walk(self, elem: ET.Element, zprops: dict[str, str], zkeys: UnorderedKeys | None = None) -> None:
        """Read the children of the zone ``elem`` whose (inherited) properties are ``zprops``, their
        keys in Batsim's order ``zkeys`` (:func:`_simgrid_order`)."""
        if zkeys is None:
            zkeys = UnorderedKeys()
        ordered = {k: zprops[k] for k in zkeys.order()}
        for child in elem:
            t = _tag(child)
            if t in ("zone", "AS"):
                z = dict(zprops)
                own = _props(child)
                z.update(own)
                self.walk(child, z, _zone_keys(zkeys, own))
            elif t == "host":
                self.host(elem, child, ordered)
            elif t == "cluster":
                self.cluster(child, zprops, zkeys)
            elif t == "cabinet":
                self.cabinet(elem, child, ordered)
            elif t == "link" and _props(child).get("virtual") == "yes":
                continue  # gridsched convention: a zero-cost interconnect between zones (see platforms/README.md)
            elif t in ("link", "backbone", "peer"):
                self.has_network = True
            # other elements (route, zoneRoute, ASroute, bypassRoute, link_ctn, config, prop, router,
            # storage, storage_type, mount, trace, trace_connect, actor, process, disk): no host

    def host(self, zone: ET.Element, child: ET.Element, zprops: dict[str, str]) -> None:
        src, hosts = self.src, self.hosts
        if len(hosts) >= MAX_HOSTS:
            raise PlatformError(f"{src}: host {child.get('id', '')!r}: more than {MAX_HOSTS:,} hosts; a "
                                f"platform may have at most {MAX_HOSTS:,} (schedulers.engine.platform.MAX_HOSTS)")
        model = routing_model(zone.get("routing"))  # SimGrid compares without case ("full" is Full)
        self.routing_of[child.get("id", "")] = model or ""
        if model == "Vivaldi":
            self.coords[child.get("id", "")] = child.get("coordinates")
            self.vzone[child.get("id", "")] = id(zone)
        hosts.append(_host_from(child.get("id", ""), child.get("speed"), child.get("core"),
                                child.get("pstate"), _props(child), zprops, src))

    def cluster(self, child: ET.Element, zprops: dict[str, str], zkeys: UnorderedKeys) -> None:
        src, hosts = self.src, self.hosts
        prefix, suffix = child.get("prefix", ""), child.get("suffix", "")
        radical = child.get("radical")
        if radical is None:
            raise PlatformError(f"{src}: cluster {child.get('id')!r} has no radical")
        props = _props(child)
        merged = {**zprops, **props}
        ordered = {k: merged[k] for k in _zone_keys(zkeys, props).order()}
        for r in _expand_radical(radical, f"{src}: cluster {child.get('id')!r}", MAX_HOSTS - len(hosts)):
            # a <cluster> is a zone of its own whose properties are the cluster's
            # (sg_platf_new_cluster_flat); Batsim passes a host its zones' properties,
            # the innermost winning (Machines::attach_zone_properties_to_machines)
            hosts.append(_host_from(f"{prefix}{r}{suffix}", child.get("speed"), child.get("core"),
                                    None, props, ordered, src))
        if child.get("bw") or child.get("bb_bw"):
            self.has_network = True

    def cabinet(self, zone: ET.Element, child: ET.Element, zprops: dict[str, str]) -> None:
        # SimGrid 3.32 builds a routing="Cluster" zone's cabinets when the zone ends
        # (sg_platf_build_cabinet): hosts prefix + radical + suffix, of one speed and one
        # core, without properties (their zones' properties apply), each with its own
        # links (.netroute)
        src, hosts = self.src, self.hosts
        if routing_model(zone.get("routing")) != "Cluster":
            raise PlatformError(f"{src}: cabinet {child.get('id', '')!r} in zone {zone.get('id', '')!r}, of "
                                f"routing {zone.get('routing', '')!r}: the embedded engine reads cabinets "
                                "only in a routing=\"Cluster\" zone (SimGrid 3.32 builds them when such a "
                                "zone ends); use real Batsim (--engine batsim)")
        prefix, suffix = child.get("prefix", ""), child.get("suffix", "")
        for r in _expand_radical(child.get("radical", ""), f"{src}: cabinet {child.get('id')!r}",
                                 MAX_HOSTS - len(hosts)):
            name = f"{prefix}{r}{suffix}"
            self.routing_of[name] = "Cluster"
            hosts.append(_host_from(name, child.get("speed"), "1", None, {}, zprops, src))
        self.has_network = True


def _zone_keys(parent: UnorderedKeys, own: dict[str, str]) -> UnorderedKeys:
    """The keys of a zone's properties in Batsim's order: its parent's (``parent``, copied), then
    the zone's own, ``own``, inserted in the order of its map (:func:`_simgrid_order`)."""
    if not own:
        return parent
    keys = parent.copy()
    for k in _simgrid_order(tuple(own))[0]:
        keys.insert(k)
    return keys


def _roles(hosts: list[HostSpec], master_host: str, roles: dict[str, str] | None,
           src: str) -> tuple[HostSpec | None, list[HostSpec], list[HostSpec]]:
    """``(master, compute, storage)`` by the hosts' roles, as Batsim 4.2.1 gives them (storage
    hosts in name order, their Batsim id order)
    (``Machines::create_machines``, src/permissions.cpp): the master host's name and each
    ``-r HOSTS:ROLE`` give a role, appended to the host's own ``role`` property after a comma;
    the role must then be "", compute_node, master or storage.

    Raises:
        PlatformError: another role, or two master hosts.
    """
    master = None
    compute: list[HostSpec] = []
    storage: list[HostSpec] = []
    given = {master_host: "master", **(roles or {})}
    for h in hosts:
        role = h.properties.get("role")
        if h.name in given:
            role = given[h.name] if role is None else f"{role},{given[h.name]}"
            h.properties = {**h.properties, "role": role}
        role = role or ""
        if role not in ("", "compute_node", "master", "storage"):
            raise PlatformError(f"{src}: host {h.name!r} has role {role!r}: real Batsim 4.2.1 aborts (\"Cannot create any "
                                "role from string description '" + role + "' existing roles are: compute_node, "
                                "master, storage, \"); a host has one role: compute_node (or none), master or storage")
        if role == "master":
            if master is not None:
                raise PlatformError(f"{src}: hosts {master.name!r} and {h.name!r} are both the master host (the one "
                                    f"named by --master-host, {master_host!r}, gets role 'master'): real Batsim 4.2.1 "
                                    "aborts (\"There are two master hosts...\")")
            master = h
        elif role == "storage":
            storage.append(h)
        else:
            compute.append(h)
    # Batsim numbers the storage hosts after the compute hosts in SimGrid's host order, by name
    # (Engine::get_all_hosts), whatever their order in the file (recorded on Batsim 4.2.1:
    # tests/fixtures/batsim_pfs)
    storage.sort(key=lambda h: h.name)
    return master, compute, storage


def _keep_first(compute: list[HostSpec], mmax: int, src: str) -> None:
    """Batsim's ``--mmax``: keep the first ``mmax`` compute hosts by name (the others are left
    unused: no role, no id).

    Raises:
        PlatformError: fewer compute hosts than ``mmax`` (real Batsim 4.2.1 aborts).
    """
    compute.sort(key=lambda h: h.name)
    if mmax > len(compute):
        raise PlatformError(f"{src}: --mmax {mmax}: the platform has {len(compute)} compute hosts; real Batsim "
                            f"4.2.1 aborts (\"Impossible to compute on M={mmax} machines: only {len(compute)} "
                            "machines are described in the PLATFORM_FILE.\")")
    del compute[mmax:]


def _vivaldi(src: str, found: _HostWalk, master: HostSpec, compute: list[HostSpec],
             untimed: bool) -> tuple[str | None, tuple[Routes, MessageDelays] | None]:
    """``(vivaldi_error, (routes, delays) or None)`` of a platform with Vivaldi zones: when one
    Vivaldi zone without links holds the master and every compute host (``untimed``: no other
    message delays), the engine times its coordinates' latencies (:func:`vivaldi_routes`)."""
    coords = found.coords
    timed = (not found.has_network and untimed
             and len({found.vzone.get(h) for h in [master.name, *(c.name for c in compute)]}) == 1
             and master.name in found.vzone)
    viv_error = vivaldi_error(src, coords, master.name, timed)
    if timed and viv_error is None and any(v != 0 for t in coords.values() if t is not None
                                           for v in (_coordinate(x) for x in t.split(" "))):
        return viv_error, vivaldi_routes(coords, master.name, [h.name for h in compute])
    return viv_error, None


def _message_routes(root: ET.Element, src: str, master: HostSpec, compute: list[HostSpec], has_network: bool,
                    loopback: bool) -> tuple[Routes | None, MessageDelays | None, str | None]:
    """``(routes, message delays, network error)`` of a platform with links, or whose master
    host is in a Full zone (its loopback), else ``(None, None, None)``.

    Without links, the master host's Full zone still routes it to itself through the loopback:
    Batsim's internal messages take 1e-10 s there, and their order decides ties that the step
    clock of compute-only platforms cannot see (walltimes ending with a timer, kills in the reply
    that starts a job, message grouping). They are timed on SimGrid's clock as on networks. The
    jobs' communications from a host to itself cross that loopback too (a FATPIPE link of
    10 GBps, shared with the messages: ``routes``); others have no route and take no time
    (``FullZone::get_local_route``)."""
    if not (has_network or loopback):
        return None, None, None
    try:
        found = platform_routes(root, src)
        delays = message_delays(found, src, master.name, [h.name for h in compute])
    except NetworkUnsupported as exc:
        # without links: a routing the reader does not know, messages grouped as on Vivaldi zones
        return None, None, str(exc) if has_network else None
    return found, delays, None


#: Attributes that attach a SimGrid trace (a profile of speed, availability, bandwidth or
#: latency over time) to a host, peer or link (simgrid.dtd 4.1; :mod:`.platform_dtd` refuses them
#: elsewhere).
_TRACE_ATTRS = ("speed_file", "state_file", "availability_file", "bandwidth_file", "latency_file")
_TRACE_ATTR_SET = frozenset(_TRACE_ATTRS)


def traces_error(root: ET.Element, src: str) -> str | None:
    """Why the engine cannot run a platform that uses SimGrid traces (``<trace>``,
    ``<trace_connect>``, or a ``*_file`` attribute of a host, peer or link), None when it
    uses none. Real Batsim runs them (SimGrid changes speeds, availability, bandwidths and
    latencies over time); the engine models none of it, so its results would silently differ:
    :class:`~.simulator.Engine` refuses the platform, ``--engine batsim`` runs it."""
    for e in root.iter():
        tag = _tag(e)
        if tag in ("trace", "trace_connect"):
            what = f"<{tag}>"
        elif _TRACE_ATTR_SET.isdisjoint(e.attrib):   # (most elements: one test, not five)
            continue
        else:
            attrs = [a for a in _TRACE_ATTRS if e.get(a)]
            if not attrs:
                continue
            what = f"<{tag} id={e.get('id')!r}> attribute {attrs[0]!r}"
        return (f"{src}: {what}: SimGrid traces (speed, availability, bandwidth or latency over time) are not "
                "simulated by the embedded engine; run it on real Batsim (--engine batsim)")
    return None


def check_compute_speeds(platform: PlatformSpec, energy: bool) -> None:
    """Refuse the hosts Batsim 4.2.1 refuses as it creates its machines (``src/machines.cpp``,
    ``Machines::create_machines``, host by host in name order): with energy (``-E``), a
    ``wattage_per_state`` or ``wattage_off`` SimGrid's energy plugin aborts on (first), a
    ``sleep_pstates`` it aborts on (:func:`classify_sleep_pstates`, every host), and every
    computation pstate of a compute host (not a sleep pstate nor a virtual switching pstate)
    must have a speed > 0; without, the speed of the host's initial pstate must be > 0. Then,
    with energy, a compute host without ``wattage_per_state``, on which Batsim aborts at its
    first energy read (:func:`missing_power_error`).
    (SimGrid itself accepts a zero speed: tasks there just make no progress; the engine follows
    SimGrid and leaves this check to what stands for Batsim: ``gridsched run``, ``gridsched
    engine`` and a campaign's runs of a platform file.)

    Raises:
        PlatformError: naming the file, the host and the pstate.
    """
    if energy and platform.power_error:   # (SimGrid's plugin, as the platform is loaded)
        raise PlatformError(platform.power_error)
    compute = {id(h) for h in platform.compute}
    for h in _by_name(platform):
        if energy and h.sleep_error:
            raise PlatformError(h.sleep_error)
        if id(h) not in compute:
            continue
        if energy:
            special = h.pstate_kinds
            pstates = [p for p in range(len(h.speeds)) if p not in special]
        else:
            pstates = [h.pstate]
        for p in pstates:
            if not h.speeds[p] > 0:
                raise PlatformError(f"{platform.source}: host {h.name!r}: computation pstate {p} has speed "
                                    f"{h.speeds[p]:g} flops/s; Batsim 4.2.1 needs a speed > 0 on a compute host")
    missing = missing_power_error(platform) if energy else None
    if missing is not None:
        raise PlatformError(missing)


def missing_power_error(platform: PlatformSpec) -> str | None:
    """Why real Batsim 4.2.1 with energy (``-E``) aborts on ``platform`` at its first energy read
    (at the first job's submission: "No power range properties specified for host h0",
    ``sg_host_get_consumed_energy``): compute hosts without ``wattage_per_state`` (the first
    five named, and a note when they have SimGrid's pre-3.24 names); None when every compute
    host has one."""
    if platform.has_energy:
        return None
    missing = [h.name for h in platform.compute if h.power is None][:5]
    note = next((n for n in map(old_power_names, platform.compute) if n), "")
    return (f"{platform.source}: energy (-E) needs 'wattage_per_state' on every compute host; missing on "
            f"{', '.join(missing)}{note}")


def sleep_error(platform: PlatformSpec) -> str | None:
    """The first host's (by name) :attr:`HostSpec.sleep_error`: why real Batsim 4.2.1 with
    ``-E`` aborts on the platform's ``sleep_pstates`` properties; None when it does not."""
    return next((h.sleep_error for h in _by_name(platform) if h.sleep_error), None)


def _by_name(platform: PlatformSpec) -> list[HostSpec]:
    """Every host (compute, master, storage) in name order, the order in which Batsim 4.2.1
    creates its machines (SimGrid's ``Engine::get_all_hosts``)."""
    hosts = [*platform.compute, *([platform.master] if platform.master else []), *platform.storage]
    return sorted(hosts, key=lambda h: h.name)
