"""Check a platform file's XML structure as SimGrid 3.32's parser does under Batsim 4.2.1.

SimGrid reads platforms with a parser FleXML generated from its DTD, ``simgrid.dtd`` version 4.1
(``src/surf/xml/simgrid.dtd`` of SimGrid 3.32: ``git --git-dir=/work/.mirror/simgrid+simgrid/repo
show v3.32:src/surf/xml/simgrid.dtd``; the parser is ``src/surf/xml/simgrid_dtd.c``), and that
parser enforces the DTD strictly: real Batsim 4.2.1 aborts at start (``Parse error at p.xml:3:
Invalid XML ...: Starting tag <prop> is not allowed here.``) on a file that breaks it, where
ElementTree reads anything well formed. :func:`check_structure` refuses what real Batsim refuses,
with one line naming the file, the line, the element and what is wrong:

* **where an element may be** (the content models, :data:`_MODELS`): an element the DTD does not
  define (``Unexpected character `<'``; names are case-sensitive: ``<Host>``, ``<as>``), an
  element inside a parent that never holds it (``<link>`` in a ``<host>``, ``<host>`` in a
  ``<cluster>``, anything in an EMPTY element such as ``<prop>``), or out of order (``Starting tag
  <prop> is not allowed here``): a ``<platform>`` holds its ``<config>`` (and ``<random>``) first,
  then zones, clusters and traces, then actors; a ``<zone>`` its ``<prop>`` first, then *either*
  sub-zones, clusters, peers and links followed by ``<zoneRoute>``, *or* hosts, routers and links
  followed by ``<route>``: never hosts and zones side by side, no ``<prop>`` after a host, no
  ``<route>`` before a host, no ``<link>`` after a ``<zoneRoute>``. For ``<zone>`` and ``<AS>``
  the parser is stricter than the DTD (it settles which of the two kinds a zone is at its first
  element after the props, even one both kinds may hold: a zone that starts with a ``<link>``
  cannot hold sub-zones): the automata below are the parser's, not the DTD's;
* **text**: characters other than spaces, tabs and newlines (a CDATA section too) anywhere but in
  a ``<trace>`` (``Unexpected character `x'``); an element in a ``<trace>``;
* **attributes**: one the DTD does not declare for the element (``Bad attribute `colour' in
  `host' element start tag``; so are ``xmlns`` and ``xml:lang``), a value outside an enumeration
  (``symmetrical="Yes"``, ``sharing_policy="FOO"``: same message), a ``#REQUIRED`` one missing
  (a host without ``speed``, a zone without ``routing``, a cluster without ``suffix``, ``bw`` or
  ``lat``: ``Required attribute `speed' not set for `host' element``), and a ``<link>`` without
  ``latency``: the parser drops the DTD's default ``"0"`` and SimGrid cannot read the empty value
  ("cannot parse number: ");
* what SimGrid 3.32 does when it meets an element (``surfxml_sax_cb.cpp``): ``<platform
  version>``, read by ``std::stod`` and rounded to hundredths, must be 4.0 to 4.1 (missing, it is
  0.0: "BIG FAT WARNING"); ``<include>``, ``<storage>``, ``<storage_type>`` and ``<mount>`` abort
  ("tag was removed in SimGrid v3.27"); an ``<actor>``/``<process>`` aborts under Batsim, which
  registers no actor function ("Function 'f' not registered", or its host does not exist yet).

Accepted, as by SimGrid: comments and processing instructions anywhere, whitespace between
elements, the deprecated ``<AS>``, ``<ASroute>``, ``<bypassASroute>``, ``<random>``, traces
(``<trace>``, ``<trace_connect>``), every attribute the DTD declares. Not checked here: the
prolog (SimGrid's parser wants ``<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">``),
attribute values other than enumerations, and what SimGrid checks after the parser (a route
naming a host not yet declared, several root zones holding hosts, an empty ``<zoneRoute>``...:
:mod:`.platform_build`).

Sources: the DTD above, and the outcomes recorded on real Batsim 4.2.1 (SimGrid 3.32), one
malformed variant per case (``tests/test_platform_dtd.py`` keeps them). The
automata were compared state by state with the parser compiled from SimGrid 3.32's
``simgrid_dtd.c`` (every element, every child tag, every attribute and enumeration value), and
9,500 random documents gave the same verdict and the same error line on both. The first error in
document order is reported, as SimGrid's parser stops there. The check walks the element tree
once (0.25 s for 100,000 hosts with two properties each); only when it finds an error, or when
the file holds a CDATA section or an ``xmlns`` declaration (which ElementTree hides), is the file
parsed again, with expat, for the line.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
import xml.parsers.expat
from typing import Callable

from ..inputs.errors import PlatformError

__all__ = ["ELEMENTS", "check_structure", "stod"]

# ------------------------------------------------------------------ the DTD (simgrid.dtd 4.1)
# Content models, as automata: ``{state: {child tag: next state}}`` from the state "start"; a tag
# missing from a state's row is refused there ("Starting tag <x> is not allowed here"). ``None``:
# EMPTY; ``"#PCDATA"``: text only. Every state accepts the end tag (every group is starred).
_Automaton = dict[str, dict[str, str]]


def _any_order(*tags: str) -> _Automaton:
    """``(a|b|...)*``."""
    return {"start": dict.fromkeys(tags, "start")}


def _rows(**rows: dict[tuple[str, ...], str]) -> _Automaton:
    """An automaton from ``state={(tags...): next state, ...}``."""
    return {state: {t: nxt for tags, nxt in row.items() for t in tags} for state, row in rows.items()}


_TR = ("trace", "trace_connect")
_ZONES = ("AS", "cluster", "peer", "zone")
_ZROUTES = ("zoneRoute", "ASroute", "bypassASroute", "bypassZoneRoute")
_ROUTES = ("route", "bypassRoute")
_SHARED = ("backbone", "include", "link")              # in both alternatives of a zone
_LEAF = ("host", "host_link", "router", "storage", "storage_type")
_TOP = ("include", "cluster", "cabinet", "peer", "AS", "zone") + _TR

# simgrid.dtd says ``zone ((prop*), ((AS|zone|include|link|backbone|cluster|peer|trace|trace_connect)*,
# (zoneRoute|ASroute|trace|trace_connect|bypassASroute|bypassZoneRoute)*, (trace|trace_connect)*)
# | ((include|storage_type|storage|host|cabinet|router|link|backbone|trace|trace_connect|host_link)*,
# (route|trace|trace_connect|bypassRoute)*)))`` (``AS``: the same with ``cabinet`` in the first
# alternative too), but the parser FleXML built from it for SimGrid 3.32 commits to one alternative
# at the first element after the props, including the elements both alternatives share: the
# automata below are that parser's (simgrid_dtd.c of SimGrid 3.32, compiled and run state by
# state; checked on real Batsim 4.2.1). In a <zone>, a <link>, <backbone>, <include>
# or <cabinet> first makes a zone of hosts (sub-zones after it are refused), a trace first a zone
# of traces only, and a trace ends the sub-zones (no <zoneRoute> after it). An <AS> differs:
# after its props, a link makes it a zone of sub-zones; without props, a trace first makes a
# zone of hosts.
_ZONE = _rows(
    start={("prop",): "start", _ZONES: "zones", _ZROUTES: "zroutes", _SHARED + ("cabinet",) + _LEAF: "hosts",
           _ROUTES: "routes", _TR: "traces"},
    zones={_ZONES + _SHARED: "zones", _ZROUTES: "zroutes", _TR: "traces"},
    zroutes={_ZROUTES + _TR: "zroutes"},
    hosts={_SHARED + ("cabinet",) + _LEAF + _TR: "hosts", _ROUTES: "routes"},
    routes={_ROUTES + _TR: "routes"},
    traces={_TR: "traces"},
)
_AS = _rows(
    start={("prop",): "props", _ZONES: "zones", _ZROUTES: "zroutes", _SHARED + ("cabinet",) + _LEAF + _TR: "hosts",
           _ROUTES: "routes"},
    props={("prop",): "props", _ZONES + _SHARED + ("cabinet",): "zones", _ZROUTES: "zroutes", _LEAF: "hosts",
           _ROUTES: "routes", _TR: "traces"},
    zones={_ZONES + _SHARED + ("cabinet",): "zones", _ZROUTES + _TR: "zroutes"},
    zroutes={_ZROUTES: "zroutes", _TR: "traces"},
    hosts={_SHARED + ("cabinet",) + _LEAF: "hosts", _ROUTES + _TR: "routes"},
    routes={_ROUTES + _TR: "routes"},
    traces={_TR: "traces"},
)
_LINK_CTN = _any_order("link_ctn")

_MODELS: dict[str, "_Automaton | str | None"] = {
    "platform": _rows(start={("config", "random"): "start", _TOP: "zones", ("process", "actor"): "actors"},
                      zones={_TOP: "zones", ("process", "actor"): "actors"},
                      actors={("process", "actor"): "actors"}),
    "include": _any_order(*_TOP),
    "trace": "#PCDATA",
    "random": None,
    "trace_connect": None,
    "AS": _AS,
    "zone": _ZONE,
    "storage_type": _any_order("model_prop", "prop"),
    "storage": _any_order("prop"),
    "mount": None,
    "host": _any_order("disk", "prop", "mount"),
    "disk": _any_order("prop"),
    "host_link": None,
    "cluster": _any_order("prop"),
    "cabinet": None,
    "peer": None,
    "router": None,
    "backbone": None,
    "link": _any_order("prop"),
    "route": _LINK_CTN,
    "ASroute": _LINK_CTN,
    "bypassASroute": _LINK_CTN,
    "zoneRoute": _LINK_CTN,
    "link_ctn": None,
    "bypassRoute": _LINK_CTN,
    "bypassZoneRoute": _LINK_CTN,
    "process": _any_order("argument", "prop"),
    "actor": _any_order("argument", "prop"),
    "argument": None,
    "config": _any_order("prop"),
    "prop": None,
    "model_prop": None,
}

#: The elements of simgrid.dtd 4.1 (SimGrid 3.32).
ELEMENTS = frozenset(_MODELS)

_ROUTE = {"src": True, "dst": True}
_GW = {"src": True, "dst": True, "gw_src": True, "gw_dst": True}
_SYM = ("YES", "NO", "yes", "no")
_SHARING = ("SHARED", "SPLITDUPLEX", "FULLDUPLEX", "FATPIPE")

# Attributes: element -> {name: True when #REQUIRED}; enumerations apart.
_ATTRS: dict[str, dict[str, bool]] = {
    "platform": {"version": False},
    "include": {"file": True},
    "trace": {"id": True, "file": False, "periodicity": True},
    "random": {"id": True, "min": True, "max": True, "mean": True, "std_deviation": True, "seed": False,
               "radical": False, "generator": False},
    "trace_connect": {"kind": False, "trace": True, "element": True},
    "AS": {"id": True, "routing": True},
    "zone": {"id": True, "routing": True},
    "storage_type": {"id": True, "model": False, "size": True, "content": False},
    "storage": {"id": True, "typeId": True, "content": False, "attach": True},
    "mount": {"storageId": True, "name": True},
    "host": {"id": True, "speed": True, "core": False, "speed_file": False, "availability_file": False,
             "state_file": False, "coordinates": False, "pstate": False},
    "disk": {"id": False, "read_bw": True, "write_bw": True},
    "host_link": {"id": True, "up": True, "down": True},
    "cluster": {"id": True, "prefix": True, "suffix": True, "radical": True, "speed": True, "core": False,
                "bw": True, "lat": True, "sharing_policy": False, "topology": False, "topo_parameters": False,
                "bb_bw": False, "bb_lat": False, "bb_sharing_policy": False, "router_id": False,
                "limiter_link": False, "loopback_bw": False, "loopback_lat": False},
    "cabinet": {"id": True, "prefix": True, "suffix": True, "radical": True, "speed": True, "bw": True, "lat": True},
    "peer": {"id": True, "speed": True, "bw_in": True, "bw_out": True, "lat": False, "coordinates": False,
             "speed_file": False, "availability_file": False, "state_file": False},
    "router": {"id": True, "coordinates": False},
    "backbone": {"id": True, "bandwidth": True, "latency": True},
    "link": {"id": True, "bandwidth": True, "bandwidth_file": False, "latency": False, "latency_file": False,
             "state_file": False, "sharing_policy": False},
    "route": {**_ROUTE, "symmetrical": False},
    "ASroute": {**_GW, "symmetrical": False},
    "bypassASroute": dict(_GW),
    "zoneRoute": {**_GW, "symmetrical": False},
    "link_ctn": {"id": True, "direction": False},
    "bypassRoute": dict(_ROUTE),
    "bypassZoneRoute": dict(_GW),
    "process": {"host": True, "function": True, "start_time": False, "kill_time": False, "on_failure": False},
    "actor": {"host": True, "function": True, "start_time": False, "kill_time": False, "on_failure": False},
    "argument": {"value": True},
    "config": {"id": False},
    "prop": {"id": True, "value": True},
    "model_prop": {"id": True, "value": True},
}
_ENUMS: dict[str, dict[str, tuple[str, ...]]] = {
    "random": {"generator": ("DRAND48", "RAND", "RNGSTREAM", "NONE")},
    "trace_connect": {"kind": ("HOST_AVAIL", "SPEED", "LINK_AVAIL", "BANDWIDTH", "LATENCY")},
    "cluster": {"sharing_policy": _SHARING, "topology": ("FLAT", "TORUS", "FAT_TREE", "DRAGONFLY"),
                "bb_sharing_policy": ("SHARED", "FATPIPE")},
    "link": {"sharing_policy": _SHARING + ("WIFI",)},
    "route": {"symmetrical": _SYM},
    "ASroute": {"symmetrical": _SYM},
    "zoneRoute": {"symmetrical": _SYM},
    "link_ctn": {"direction": ("UP", "DOWN", "NONE")},
    "process": {"on_failure": ("DIE", "RESTART")},
    "actor": {"on_failure": ("DIE", "RESTART")},
}
_ALLOWED = {tag: frozenset(attrs) for tag, attrs in _ATTRS.items()}
_REQUIRED = {tag: tuple(a for a, req in attrs.items() if req) for tag, attrs in _ATTRS.items()}

#: Elements SimGrid 3.32 kills the run on (``surfxml_sax_cb.cpp``, ``xbt_die``): the version
#: that removed them.
_REMOVED = {"include": "3.18", "storage": "3.27", "storage_type": "3.27", "mount": "3.27"}

_SPACES = " \t\r\n"


class _Invalid(Exception):
    """A structure error (the message without the file and line)."""


_KINDS = ("holds either sub-zones (with clusters, peers and links, then <zoneRoute>) or hosts (with routers and "
          "links, then <route>)")
#: Why a state refuses what its element holds elsewhere, in words (ordered models only).
_WHY = {
    ("platform", "zones"): "a <platform>'s <config> come before its zones and clusters, its actors after them",
    ("platform", "actors"): "a <platform>'s actors come after its zones and clusters",
    ("zone", "zones"): f"a zone {_KINDS}; after a sub-zone it holds sub-zones",
    ("zone", "hosts"): f"a zone {_KINDS}; SimGrid's parser takes a zone whose first element after its <prop> is a "
                       "host, a link, a backbone or a cabinet for a zone of hosts: declare sub-zones before links",
    ("zone", "zroutes"): "a zone's <zoneRoute> come after its sub-zones and links",
    ("zone", "routes"): "a zone's <route> come after its hosts, routers and links",
    ("zone", "traces"): "after that trace SimGrid's parser takes only traces, where simgrid.dtd allows more",
    ("AS", "props"): "an <AS>'s <prop> come first",
    ("AS", "zones"): f"an <AS> {_KINDS}; after a sub-zone (or a link after its <prop>) it holds sub-zones",
    ("AS", "hosts"): f"an <AS> {_KINDS}; SimGrid's parser takes an <AS> that holds a host, or whose first element "
                     "is a link, a backbone, a cabinet or a trace, for one of hosts",
    ("AS", "zroutes"): "an <AS>'s <zoneRoute> come after its sub-zones and links, then traces",
    ("AS", "routes"): "an <AS>'s <route> come after its hosts, routers and links; SimGrid's parser takes a trace "
                      "after them for the start of the routes",
    ("AS", "traces"): "after that trace SimGrid's parser takes only traces, where simgrid.dtd allows more",
}


def _allowed_children(parent: str, state: str | None = None) -> list[str]:
    """The tags ``parent`` may hold (in ``state``, or anywhere), but those SimGrid removed, sorted."""
    model = _MODELS[parent]
    if not isinstance(model, dict):
        return []
    rows = [model[state]] if state is not None else list(model.values())
    return sorted({t for row in rows for t in row} - set(_REMOVED), key=str.lower)


def _show(tags: list[str]) -> str:
    return ", ".join(f"<{t}>" for t in tags) if tags else "nothing"


def _describe(tag: str, attrs: dict[str, str]) -> str:
    for keys in (("id",), ("src", "dst"), ("function",), ("file",)):
        if all(k in attrs for k in keys):
            return "<" + tag + "".join(f" {k}={attrs[k]!r}" for k in keys) + ">"
    return f"<{tag}>"


_STOD = re.compile(r"\s*([+-]?)(?:0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP]([+-]?\d+))?"
                   r"|((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(inf(?:inity)?|nan))", re.IGNORECASE)


def stod(text: str) -> float | None:
    """``std::stod(text)``: the longest number at the start (after blanks), None when there is
    none (SimGrid: "... is not a double"). Overflow gives an infinity (std::stod throws
    ``out_of_range``, which nobody catches: the run aborts either way)."""
    m = _STOD.match(text)
    if m is None:
        return None
    sign, hexa, hexp, dec, special = m.groups()
    if hexa is not None:
        mant = hexa if "." in hexa else hexa + "."
        try:
            v = float.fromhex(f"0x{mant}p{hexp or 0}")
        except OverflowError:
            v = math.inf
    elif dec is not None:
        v = float(dec)
    else:
        v = float(special.lower()[:3])
    return -v if sign == "-" else v


def _version_error(version: str | None) -> str | None:
    """Why SimGrid 3.32 refuses ``<platform version=...>`` (``STag_surfxml_platform``), or None."""
    text = "0.0" if version is None else version   # the DTD's default
    v = stod(text)
    head = ("<platform> has no version (SimGrid reads 0.0)" if version is None
            else f"<platform version={version!r}>")
    if v is None:
        return (f"{head}: not a number; SimGrid 3.32 reads version 4 to 4.1 only; real Batsim 4.2.1 aborts "
                f"(\"{text} is not a double\")")
    hundredths = 100.0 * v   # SimGrid: lround(100.0 * stod(version))
    if not math.isfinite(hundredths):
        return (f"{head}: SimGrid 3.32 reads platform files of version 4 to 4.1 only; real Batsim 4.2.1 aborts; "
                "write <platform version=\"4.1\">")
    rounded = math.floor(abs(hundredths)) + (abs(hundredths) % 1 >= 0.5)
    rounded = -rounded if hundredths < 0 else rounded
    if not 400 <= rounded <= 410:
        why = ("THIS FILE COMES FROM THE FUTURE" if rounded > 410 else "THIS FILE IS TOO OLD" if rounded >= 300
               else "BIG FAT WARNING")
        return (f"{head}: SimGrid 3.32 reads platform files of version 4 to 4.1 only; real Batsim 4.2.1 aborts "
                f"(\"{why}\"); write <platform version=\"4.1\">")
    return None


# ------------------------------------------------------------------------ the checker
#: Elements whose start tag needs no more than the allowed and required attributes.
_PLAIN = frozenset(t for t in _MODELS if t not in _ENUMS and t not in _REMOVED and t != "platform")
_REQUIRED_SET = {tag: frozenset(names) for tag, names in _REQUIRED.items()}
#: Elements SimGrid refuses at their end tag under Batsim (:meth:`_Checker.end`).
_AT_END = frozenset({"link", "actor", "process"})


class _Checker:
    """The parser's checks, fed element by element in document order (by either driver)."""

    __slots__ = ("stack",)

    def __init__(self) -> None:
        # one frame per open element: [tag, attributes, content state, previous child's tag and attributes]
        self.stack: list[list] = []

    @staticmethod
    def _where(frame: list) -> str:
        """``<zone id='z'>``, or ``<zone id='z'> after <host id='h'>`` when it has a child."""
        return _describe(frame[0], frame[1]) + ("" if frame[3] is None else f" after {_describe(frame[3], frame[4])}")

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        stack = self.stack
        if stack:
            frame = stack[-1]
            model = _MODELS[frame[0]]
            nxt = model[frame[2]].get(tag) if isinstance(model, dict) else None
            if nxt is None:
                self._misplaced(frame, tag, attrs)
            frame[2], frame[3], frame[4] = nxt, tag, attrs
        elif tag != "platform":
            raise _Invalid(f"root element <{tag}>: SimGrid's platform format starts with <platform>")
        if not (tag in _PLAIN and _ALLOWED[tag].issuperset(attrs) and attrs.keys() >= _REQUIRED_SET[tag]):
            self._attributes(tag, attrs)
        stack.append([tag, attrs, "start", None, None])

    def _misplaced(self, frame: list, tag: str, attrs: dict[str, str]) -> None:
        ptag = frame[0]
        child = _describe(tag, attrs)
        parent = _describe(ptag, frame[1])
        model = _MODELS[ptag]
        if not isinstance(model, dict):   # EMPTY, or text only (<trace>)
            said = "Spurious `<' in character data" if model else f"Unexpected character `<': `</{ptag}>' expected"
            raise _Invalid(f"{child} inside {parent}: simgrid.dtd allows {'only text' if model else 'nothing'} inside "
                           f"a <{ptag}>; real Batsim 4.2.1 aborts (\"{said}\")")
        if tag not in _MODELS:
            near = [t for t in _MODELS if t.lower() == tag.lower()]
            hint = f" (did you mean <{near[0]}>?)" if near else ""
            if "}" in tag or ":" in tag:
                hint = " (XML namespaces are not part of it)"
            raise _Invalid(f"{child} inside {parent} is not an element of SimGrid's platform format{hint} (simgrid.dtd "
                           f"4.1); real Batsim 4.2.1 aborts (\"Unexpected character `<': `</{ptag}>' expected\")")
        if any(tag in row for row in model.values()):   # allowed in this parent, not at this point
            raise _Invalid(f"{child} inside {self._where(frame)}: SimGrid 3.32's parser accepts there only "
                           f"{_show(_allowed_children(ptag, frame[2]))} ({_WHY[ptag, frame[2]]}); real Batsim 4.2.1 "
                           f"aborts (\"Starting tag <{tag}> is not allowed here\")")
        raise _Invalid(f"{child} inside {parent}: simgrid.dtd allows in a <{ptag}> only "
                       f"{_show(_allowed_children(ptag))}; real Batsim 4.2.1 aborts (\"Starting tag <{tag}> is not "
                       "allowed here\")")

    @staticmethod
    def _attributes(tag: str, attrs: dict[str, str]) -> None:
        desc = _describe(tag, attrs)
        allowed = _ALLOWED[tag]
        enums = _ENUMS.get(tag, {})
        for name, value in attrs.items():   # in the order of the start tag, as SimGrid's parser reads them
            if name not in allowed:
                if "}" in name:   # ElementTree's name of a prefixed attribute (xml:lang)
                    uri, local = name[1:].split("}", 1)
                    name = f"xml:{local}" if uri == "http://www.w3.org/XML/1998/namespace" else local
                if name.startswith(("xmlns", "xml:")):
                    what = "XML namespaces are not part of SimGrid's platform format"
                else:
                    what = f"simgrid.dtd allows on a <{tag}> only {', '.join(sorted(allowed, key=str.lower))}"
                raise _Invalid(f"{desc}: attribute {name!r} ({what}); real Batsim 4.2.1 aborts (\"Bad attribute "
                               f"`{name}' in `{tag}' element start tag\")")
            values = enums.get(name)
            if values is not None and value not in values:
                raise _Invalid(f"{desc}: {name}={value!r} is not one of {', '.join(values)} (simgrid.dtd); real Batsim "
                               f"4.2.1 aborts (\"Bad attribute `{name}' in `{tag}' element start tag\")")
        for name in _REQUIRED[tag]:
            if name not in attrs:
                raise _Invalid(f"{desc} has no {name!r}, which simgrid.dtd requires; real Batsim 4.2.1 aborts "
                               f"(\"Required attribute `{name}' not set for `{tag}' element\")")
        if tag in _REMOVED:
            raise _Invalid(f"{desc}: SimGrid removed <{tag}> in version {_REMOVED[tag]}; real Batsim 4.2.1 aborts "
                           f"(\"<{tag}> tag was removed in SimGrid v{_REMOVED[tag]}\")")
        if tag == "platform":
            why = _version_error(attrs.get("version"))
            if why:
                raise _Invalid(why)

    def text(self, data: str | None) -> None:
        """Check character data of the innermost open element: spaces, tabs and newlines only,
        but in a <trace>."""
        if not data or not self.stack:
            return
        stripped = data.lstrip(_SPACES)
        if not stripped or _MODELS[self.stack[-1][0]] == "#PCDATA":
            return
        shown = stripped.split("\n", 1)[0][:40]
        raise _Invalid(f"text {shown!r} inside {self._where(self.stack[-1])}: simgrid.dtd allows text only in a "
                       f"<trace>; real Batsim 4.2.1 aborts (\"Unexpected character `{stripped[0]}'\")")

    def cdata(self) -> None:
        if self.stack and _MODELS[self.stack[-1][0]] != "#PCDATA":
            raise _Invalid(f"a CDATA section inside {self._where(self.stack[-1])}: simgrid.dtd allows text only in a "
                           "<trace>; real Batsim 4.2.1 aborts (\"Unexpected character `<'\")")

    def end(self) -> None:
        tag, attrs = self.stack.pop()[:2]
        if tag not in _AT_END:
            return
        if tag == "link":
            if "latency" not in attrs:
                # simgrid.dtd's default is "0", but FleXML drops a default "0" (peer's lat too, which SimGrid
                # reads as absent): SimGrid reads the link's empty latency at its end tag
                raise _Invalid(f"{_describe(tag, attrs)} has no 'latency': SimGrid 3.32's parser gives it the value '' "
                               "(not simgrid.dtd's default 0); real Batsim 4.2.1 aborts (\"cannot parse number: \"); "
                               "write latency=\"0\"")
        else:
            raise _Invalid(f"{_describe(tag, attrs)}: Batsim 4.2.1 registers no actor function, so a platform's "
                           f"<{tag}> makes real Batsim abort (SimGrid 3.32: \"Function '{attrs.get('function')}' "
                           "not registered\", or \"Cannot create actor\" when its host comes later)")


# ------------------------------------------------------------------------ the drivers
def _walk_tree(root: ET.Element) -> None:
    """Check the tree ElementTree read, in document order (no line numbers)."""
    chk = _Checker()
    start, text, end = chk.start, chk.text, chk.end
    start(root.tag, root.attrib)
    if root.text and root.text.strip(_SPACES):
        text(root.text)
    stack = [(root, iter(root))]
    while stack:
        elem, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            end()
            tail = elem.tail   # the parent's character data after this element
            if tail and stack and tail.strip(_SPACES):
                text(tail)
            continue
        start(child.tag, child.attrib)
        if child.text and child.text.strip(_SPACES):
            text(child.text)
        stack.append((child, iter(child)))


class _Found(Exception):
    """The first error of :func:`_scan`: ``args == (message, line)``."""


def _scan(data: bytes) -> tuple[str, int] | None:
    """Check the raw file with expat, namespace-unaware as SimGrid's parser (``xmlns`` is an
    attribute, ``s:host`` a name), CDATA sections seen: the first error and its line, or None."""
    chk = _Checker()
    parser = xml.parsers.expat.ParserCreate()
    parser.buffer_text = False   # each piece of text at its own position

    def guard(check: Callable[..., None], is_text: bool = False) -> Callable[..., None]:
        def call(*args: str) -> None:
            try:
                check(*args)
            except _Invalid as exc:
                line = parser.CurrentLineNumber
                if is_text:   # the line of the first offending character
                    line += args[0][: len(args[0]) - len(args[0].lstrip(_SPACES))].count("\n")
                raise _Found(str(exc), line) from None
        return call

    parser.StartElementHandler = guard(chk.start)
    parser.EndElementHandler = guard(lambda _name: chk.end())
    parser.StartCdataSectionHandler = guard(chk.cdata)
    parser.CharacterDataHandler = guard(chk.text, is_text=True)
    body = data.lstrip()   # as read_platform gives it to ElementTree (SimGrid skips blank lines before <?xml)
    try:
        parser.Parse(body, True)
    except _Found as found:
        return found.args[0], found.args[1] + data[: len(data) - len(body)].count(b"\n")
    except xml.parsers.expat.ExpatError:
        pass   # (not reached: ElementTree, expat too, read the file)
    return None


def check_structure(root: ET.Element, data: bytes, src: str) -> None:
    """Refuse a platform whose structure SimGrid 3.32's parser refuses (module docstring).

    Args:
        root: the file's tree as ElementTree read it (from ``data`` without its leading blanks).
        data: the file's bytes (read again with expat for the line of an error, or when they
            hold a CDATA section or an ``xmlns`` declaration, which the tree does not show).
        src: the file's name, for the message.

    Raises:
        PlatformError: ``"{src}:{line}: ..."``, one line naming the element (its id), what is
            wrong and what SimGrid's parser says (real Batsim 4.2.1 aborts on it).
    """
    message = None
    if b"<![CDATA[" not in data and b"xmlns" not in data:
        try:
            _walk_tree(root)
            return
        except _Invalid as exc:
            message = str(exc)
    found = _scan(data)
    if found is not None:
        text, line = found
        raise PlatformError(f"{src}:{line}: {text}")
    if message is not None:
        raise PlatformError(f"{src}: {message}")
