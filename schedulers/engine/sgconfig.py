"""A platform's ``<config>`` properties, read as SimGrid 3.32 applies them under Batsim 4.2.1.

``<config><prop id="KEY" value="VALUE"/></config>`` sets SimGrid options while the platform is
parsed. What SimGrid 3.32 does (``ETag_surfxml_config``, ``src/surf/xml/surfxml_sax_cb.cpp``;
``src/xbt/config.cpp``):

* the ``<config>`` tags come first, directly under ``<platform>`` (the DTD's ``platform``
  element, ``src/surf/xml/simgrid.dtd``; ``STag_surfxml_config`` refuses one after a zone, host,
  cluster or link); a ``<prop>`` id given twice keeps its first value (``STag_surfxml_prop``,
  ``try_emplace``);
* the keys of one ``<config>`` are applied in sorted order; a key that is not declared throws
  ``std::out_of_range("Bad config key: ...")`` (``Config::get_dict_element``), which Batsim does
  not catch: it aborts. SimGrid 3.32 declares no alias (``config::alias`` is only called by
  ``config_test.cpp``), so old spellings such as ``network/TCP_gamma`` are bad keys too;
* a key already set (not at its default) is skipped, value unread, with the message "The custom
  configuration '...' is already defined by user!". Batsim sets ``host/model`` to ``ptask_L07``
  before it loads the platform (``main``, ``src/batsim.cpp`` of Batsim 4.2.1:
  ``engine.set_config("host/model:ptask_L07")`` then ``create_machines``), so a platform's
  ``host/model`` never applies;
* otherwise ``config::set_parse("KEY:VALUE")`` sets it: the text is cut at spaces, tabs,
  newlines and commas, each piece must be ``name:value``, and the value is read by the key's
  type (``parse_bool``: ``yes/on/true/1``, ``no/off/false/0``; ``parse_double`` and
  ``parse_long``: ``strtod``/``strtol`` (base 0) over the whole text; an ``int`` within 32 bits).
  A bad value throws and Batsim aborts; a model name that SimGrid does not know ends in
  ``xbt_die`` ("Model 'Foo' is invalid!", ``find_model_description``), ``help`` prints the
  models and exits.

The declared keys (:data:`DECLARED`) are the list real Batsim 4.2.1 printed in its "Bad config
key: network/coordinates" abort (a Batsim 4.2.1 built by hand outside the project, SimGrid 3.32
as Batsim links it, on Batsim's example ``energy_platform_homogeneous_no_net.xml``), checked
against the declarations of
SimGrid v3.32's sources (``git grep -E "declare_flag|bind_flag|Flag<"``: ``sg_config_init`` in
``src/simgrid/sg_config.cpp``, ``src/instr/instr_config.cpp``, ``NetworkModel.cpp``,
``cpu_cas01.cpp``, ``network_cm02.cpp``, ``ptask_L07.cpp``, ``EngineImpl.cpp``, ``bmf.hpp``,
``DiskImpl.cpp``, ``xbt_main.cpp``, the ``smpi``, ``dvfs``, ``chaos_monkey`` and ns-3 files). Two
keys of those sources are not in it, so Batsim refuses them: ``msg/debug-multiple-use`` (declared
by ``MSG_init``) and ``storage/max_file_descriptors`` (by the file-system plugin's init).

What the engine does with a declared key (:func:`read_config`):

* keys that SimGrid reads but Batsim's host model ``ptask_L07`` never uses (``surf_host_model_
  init_ptask_L07``: it builds its own CPU and network models, reading only ``host/solver``,
  ``network/loopback-bw``/``-lat``, ``network/TCP-gamma``, ``surf/precision`` and
  ``maxmin/precision``): ``network/model``, ``cpu/model``, ``cpu/optim``, ``network/optim``
  (checked against SimGrid's lists), ``network/latency-factor``, ``network/bandwidth-factor``,
  ``network/weight-S``, ``network/crosstraffic``. Accepted: recorded on real Batsim 4.2.1 with
  all eight changed at once (``tests/fixtures/batsim_toplevel_cluster/config_ignored.xml``),
  every output equal;
* harmless keys (:data:`FREE`): ``path``, ``tracing`` (SimGrid then writes its trace file; the
  engine writes none), ``tracing/filename``: any value of the key's type; ``contexts/stack-size``
  from 16 KiB (Batsim's own example platforms set 16; 8 made real Batsim crash),
  ``contexts/guard-size`` 0 or 1, ``contexts/nthreads`` from 1 (2 and 4 recorded equal);
* every other declared key only at SimGrid's default value; another value is refused, naming
  the key: the engine does not model it (``network/TCP-gamma``, the loopback, the solvers and
  precisions change the timings), or it is not harmless (``debug/breakpoint`` stops the run,
  ``plugin`` loads a plugin, and ``tracing/platform=yes`` or ``tracing/uncategorized=yes`` made
  real Batsim 4.2.1 abort on a cluster with split-duplex links: "container with name
  c_link_0_UP not found").

Errors name the file and the key; where real Batsim aborts too, they say so.
"""

from __future__ import annotations

import math
import re
import sys
import xml.etree.ElementTree as ET
from typing import AbstractSet, Any, Callable

from ..inputs.errors import PlatformError

__all__ = ["DECLARED", "FREE", "IGNORED_UNDER_L07", "read_config"]

#: Every key SimGrid 3.32 declares when Batsim 4.2.1 parses a platform: key -> (type, default)
#: (module docstring: how the list was obtained). Defaults from the sources (sg_config.cpp etc.);
#: ``contexts/factory`` and ``contexts/synchro`` depend on the build (raw and futex here).
DECLARED: dict[str, tuple[str, object]] = {
    "bmf/max-iterations": ("int", 1000),
    "bmf/precision": ("double", 1e-12),
    "cmonkey/host": ("int", -1),
    "cmonkey/link": ("int", -1),
    "cmonkey/tell": ("boolean", False),
    "cmonkey/time": ("double", -1.0),
    "contexts/factory": ("string", "raw"),
    "contexts/guard-size": ("int", 1),
    "contexts/nthreads": ("int", 1),
    "contexts/stack-size": ("int", 8192),
    "contexts/synchro": ("string", "futex"),
    "cpu/maxmin-selective-update": ("boolean", False),
    "cpu/model": ("string", "Cas01"),
    "cpu/optim": ("string", "Lazy"),
    "cpu/solver": ("string", "maxmin"),
    "debug/breakpoint": ("double", -1.0),
    "debug/clean-atexit": ("boolean", True),
    "debug/verbose-exit": ("boolean", True),
    "disk/model": ("string", "default"),
    "disk/solver": ("string", "maxmin"),
    "exception/cutpath": ("boolean", False),
    "help-nostop": ("boolean", False),
    "host/model": ("string", "ptask_L07"),  # set by Batsim before the platform is read
    "host/solver": ("string", "fairbottleneck"),
    "maxmin/concurrency-limit": ("int", -1),
    "maxmin/precision": ("double", 1e-5),
    "model-check/replay": ("string", ""),
    "model-check/timeout": ("boolean", False),
    "network/TCP-gamma": ("double", 4194304.0),
    "network/bandwidth-factor": ("double", 0.97),
    "network/crosstraffic": ("boolean", True),
    "network/latency-factor": ("double", 13.01),
    "network/loopback-bw": ("double", 10e9),
    "network/loopback-lat": ("double", 0.0),
    "network/maxmin-selective-update": ("boolean", False),
    "network/model": ("string", "LV08"),
    "network/optim": ("string", "Lazy"),
    "network/solver": ("string", "maxmin"),
    "network/weight-S": ("double", 20537.0),
    "ns3/TcpModel": ("string", "default"),
    "ns3/seed": ("string", ""),
    "path": ("string", "./"),
    "plugin": ("string", ""),
    "plugin/dvfs/governor": ("string", "performance"),
    "plugin/dvfs/max-pstate": ("int", -1),
    "plugin/dvfs/min-pstate": ("int", 0),
    "plugin/dvfs/sampling-rate": ("double", 0.1),
    "smpi/IB-penalty-factors": ("string", "0.965;0.925;1.35"),
    "smpi/async-small-thresh": ("int", 0),
    "smpi/auto-shared-malloc-thresh": ("double", 0.0),
    "smpi/bw-factor": ("string", "65472:0.940694;15424:0.697866;9376:0.58729;5776:1.08739;3484:0.77493;"
                                 "1426:0.608902;732:0.341987;257:0.338112;0:0.812084"),
    "smpi/comp-adjustment-file": ("string", ""),
    "smpi/cpu-threshold": ("double", 1e-6),
    "smpi/display-allocs": ("boolean", False),
    "smpi/errors-are-fatal": ("boolean", True),
    "smpi/grow-injected-times": ("boolean", True),
    "smpi/host-speed": ("string", "20000f"),
    "smpi/hostfile": ("string", ""),
    "smpi/init": ("double", 0.0),
    "smpi/iprobe": ("double", 1e-4),
    "smpi/iprobe-cpu-usage": ("double", 1.0),
    "smpi/lat-factor": ("string", "65472:11.6436;15424:3.48845;9376:2.59299;5776:2.18796;3484:1.88101;"
                                  "1426:1.61075;732:1.9503;257:1.95341;0:2.01467"),
    "smpi/list-leaks": ("int", -1),
    "smpi/map": ("int", 0),
    "smpi/np": ("int", 0),
    "smpi/pedantic": ("boolean", False),
    "smpi/replay": ("string", ""),
    "smpi/send-is-detached-thresh": ("int", 65536),
    "smpi/shared-malloc": ("string", "global"),
    "smpi/simulate-computation": ("boolean", True),
    "smpi/test": ("double", 1e-4),
    "smpi/trace-call-location": ("boolean", False),
    "smpi/trace-call-use-absolute-path": ("boolean", False),
    "smpi/wtime": ("double", 1e-8),
    "surf/precision": ("double", 1e-9),
    "tracing": ("boolean", False),
    "tracing/actor": ("boolean", False),
    "tracing/basic": ("boolean", False),
    "tracing/categorized": ("boolean", False),
    "tracing/comment": ("string", ""),
    "tracing/comment-file": ("string", ""),
    "tracing/disable-destroy": ("boolean", False),
    "tracing/disable_link": ("boolean", False),
    "tracing/disable_power": ("boolean", False),
    "tracing/filename": ("string", "simgrid.trace"),
    "tracing/platform": ("boolean", False),
    "tracing/platform/topology": ("boolean", True),
    "tracing/precision": ("int", 6),
    "tracing/smpi": ("boolean", False),
    "tracing/smpi/computing": ("boolean", False),
    "tracing/smpi/display-sizes": ("boolean", False),
    "tracing/smpi/format": ("string", "Paje"),
    "tracing/smpi/format/ti-one-file": ("boolean", False),
    "tracing/smpi/group": ("boolean", False),
    "tracing/smpi/internals": ("boolean", False),
    "tracing/smpi/sleeping": ("boolean", False),
    "tracing/uncategorized": ("boolean", False),
    "tracing/vm": ("boolean", False),
}

#: Keys ``ptask_L07`` never reads, with the values SimGrid accepts (None: any value of the
#: key's type). Model lists: ``surf_network_model_description``, ``surf_cpu_model_description``,
#: ``surf_optimization_mode_description`` (``src/surf/surf_interface.cpp``), ``cpu_optim_opt``
#: (``src/surf/cpu_cas01.cpp``).
IGNORED_UNDER_L07: dict[str, tuple[str, ...] | None] = {
    "network/model": ("LV08", "Constant", "SMPI", "IB", "CM02", "ns-3"),
    "cpu/model": ("Cas01",),
    "cpu/optim": ("Lazy", "TI", "Full"),
    "network/optim": ("Lazy", "TI", "Full"),
    "network/latency-factor": None,
    "network/bandwidth-factor": None,
    "network/weight-S": None,
    "network/crosstraffic": None,
}

#: Keys that change nothing the engine outputs: key -> (the values accepted, what they are). Recorded
#: on real Batsim 4.2.1: stack-size 16 (Batsim's examples) and 12 ran, 8 crashed (SIGSEGV);
#: guard-size 0 (Batsim's examples) and 1 (the default); nthreads 2 and 4, outputs equal.
FREE: dict[str, tuple[Callable[[Any], bool], str]] = {
    "path": (lambda v: True, "any"),
    "tracing": (lambda v: True, "any"),
    "tracing/filename": (lambda v: True, "any"),
    "contexts/stack-size": (lambda v: v >= 16, "16 KiB or more (8 made real Batsim 4.2.1 crash)"),
    "contexts/guard-size": (lambda v: v in (0, 1), "0 or 1"),
    "contexts/nthreads": (lambda v: v >= 1, ">= 1"),
}

_SEPARATORS = re.compile(r"[ \t\n,]")
_INT = re.compile(r"^[ \t\n\v\f\r]*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$")
_DOUBLE = re.compile(r"^[ \t\n\v\f\r]*[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|0[xX][0-9a-fA-F.]+([pP][+-]?\d+)?"
                     r"|inf(inity)?|nan(\([0-9A-Za-z_]*\))?)$", re.IGNORECASE)


def _parse(kind: str, text: str) -> object:
    """``text`` read as SimGrid 3.32's ``ConfigType<kind>::parse`` reads it (``src/xbt/config.cpp``).

    Raises:
        ValueError: SimGrid would throw (``std::range_error``)."""
    if kind == "boolean":
        if text in ("yes", "on", "true", "1"):
            return True
        if text in ("no", "off", "false", "0"):
            return False
        raise ValueError("not a boolean (yes/on/true/1 or no/off/false/0)")
    v: float   # (an int for "int")
    if kind == "int":
        m = _INT.match(text)
        if not m:
            raise ValueError("not an integer")
        sign, digits = m.groups()
        base = 16 if digits[:2] in ("0x", "0X") else 8 if digits[0] == "0" else 10  # strtol, base 0
        v = int(digits, base) * (-1 if sign == "-" else 1)
        if not -2 ** 31 <= v < 2 ** 31:
            raise ValueError("out of the range of an int")
        return v
    if kind == "double":
        if not _DOUBLE.match(text):
            raise ValueError("not a number")
        t = text.strip()
        low = t.lower().lstrip("+-")
        if low.startswith("nan"):
            return math.nan
        v = float.fromhex(t) if "x" in low else float(t)
        # strtod sets ERANGE on overflow and on underflow (zero or subnormal from nonzero digits)
        if (math.isinf(v) and not low.startswith("inf")) or (abs(v) < sys.float_info.min and re.search(
                r"[1-9]", re.split(r"[eEpP]", low.replace("0x", ""))[0])):
            raise ValueError("out of range")
        return v
    return text


def _check(key: str, value: str, where: str, unsupported: list[str]) -> None:
    """One option ``key``:``value`` as SimGrid 3.32 sets it under Batsim 4.2.1 (module docstring).

    Raises:
        PlatformError: a key SimGrid does not declare or a value it cannot read (real Batsim
            aborts). A value the engine does not reproduce is appended to ``unsupported``."""
    if key not in DECLARED:
        hint = key.replace("_", "-")
        also = f" (SimGrid's name is {hint!r})" if hint in DECLARED else ""
        raise PlatformError(f"{where.rsplit(' value ', 1)[0]}: SimGrid 3.32 has no such option{also}; real "
                            "Batsim 4.2.1 aborts ('Bad config key')")
    if _SEPARATORS.search(value):
        raise PlatformError(f"{where}: SimGrid 3.32 cuts option values at spaces, tabs, newlines and "
                            "commas; the engine refuses it, use real Batsim")
    kind, default = DECLARED[key]
    try:
        parsed = _parse(kind, value)
    except ValueError as exc:
        raise PlatformError(f"{where}: {exc}: SimGrid 3.32 needs a {kind}; real Batsim 4.2.1 aborts") from None
    if key in IGNORED_UNDER_L07:
        allowed = IGNORED_UNDER_L07[key]
        if allowed is not None and value not in allowed:
            raise PlatformError(f"{where}: not one of SimGrid 3.32's ({', '.join(allowed)}); real Batsim "
                                "4.2.1 aborts")
        return  # Batsim's ptask_L07 model never reads it
    if parsed == default:
        return
    if key in FREE:
        ok, what = FREE[key]
        if not ok(parsed):
            unsupported.append(f"{where}: the embedded engine accepts only {what}; use real Batsim "
                               "(gridsched run --engine batsim)")
        return
    unsupported.append(f"{where}: the embedded engine reproduces this option only at SimGrid's default "
                       f"({default!r}); use real Batsim (gridsched run --engine batsim)")


def check_cli(items: list[str]) -> set[str]:
    """Batsim's ``--sg-cfg NAME:VALUE`` options (``engine.set_config``, before the platform is
    read: ``config::set_parse`` cuts each at spaces, tabs, newlines and commas into
    ``name:value`` pieces); return the keys they set, which a platform's ``<config>`` then
    cannot change ("already defined by user"). ``host/model`` is accepted unread: Batsim sets it
    to ``ptask_L07`` after them.

    Raises:
        PlatformError: as :func:`read_config`, naming ``--sg-cfg`` and the option."""
    keys: set[str] = set()
    unsupported: list[str] = []
    for item in items:
        for piece in _SEPARATORS.split(item.strip()):
            if not piece:
                continue
            key, sep, value = piece.partition(":")
            if not sep:
                raise PlatformError(f"--sg-cfg {item!r}: {piece!r} is not NAME:VALUE; SimGrid 3.32 aborts "
                                    "(\"Option ... badly formatted\")")
            keys.add(key)
            if key != "host/model":
                _check(key, value, f"--sg-cfg option {key!r} value {value!r}", unsupported)
    if unsupported:
        raise PlatformError(unsupported[0])
    return keys


def read_config(root: ET.Element, src: str, preset: AbstractSet[str] = frozenset()) -> dict[str, str]:
    """Check the ``<config>`` tags of the platform ``root`` (read from ``src``) as SimGrid 3.32
    applies them under Batsim 4.2.1 (module docstring); return the keys applied and their values.
    ``preset``: keys set on the command line (:func:`check_cli`), skipped unread.

    Raises:
        PlatformError: one line naming ``src`` and the key: a tag out of place, a key SimGrid
            3.32 does not declare or a value it cannot read (real Batsim aborts), or a value
            the engine does not reproduce (use real Batsim).
    """
    applied: dict[str, str] = {}
    unsupported: list[str] = []
    started = False
    for child in root:
        tag = child.tag.rsplit("}", 1)[-1] if isinstance(child.tag, str) else ""
        if tag != "config":
            if tag not in ("", "random"):
                started = True
            continue
        if started:
            raise PlatformError(f"{src}: <config id={child.get('id', '')!r}> after platform elements: SimGrid 3.32 "
                                "wants every <config> before any zone, host, cluster or link (real Batsim aborts)")
        props: dict[str, str] = {}
        for p in child:
            if (p.tag.rsplit("}", 1)[-1] if isinstance(p.tag, str) else "") == "prop":
                props.setdefault(p.get("id", ""), p.get("value", ""))  # STag_surfxml_prop: try_emplace
        for key in sorted(props):
            value = props[key]
            if key in DECLARED and (key == "host/model" or key in applied or key in preset):
                continue  # already set (by Batsim, the command line, an earlier <config>): skipped unread
            _check(key, value, f"{src}: <config> key {key!r} value {value!r}", unsupported)
            applied[key] = value
    if unsupported:  # refused only once no later key makes real Batsim abort
        raise PlatformError(unsupported[0])
    return applied
