"""Codec of the Batsim 4.x JSON protocol, both directions.

Sources: Batsim's protocol documentation (https://batsim.readthedocs.io, "Protocol"; Batsim 4.x
``src/protocol.cpp``) and the messages recorded on real Batsim 4.2.1 in
``shared/batsim-4.2.1/transcripts/*.jsonl``.

A message is ``{"now": <s>, "events": [{"timestamp": <s>, "type": "...", "data": {...}}, ...]}``.

Batsim -> scheduler (:func:`decode_message`, :func:`encode_message`): SIMULATION_BEGINS,
JOB_SUBMITTED, JOB_COMPLETED, JOB_KILLED, RESOURCE_STATE_CHANGED, REQUESTED_CALL, NOTIFY, ANSWER,
SIMULATION_ENDS; any other type becomes a :class:`~schedulers.core.events.GenericEvent`.
:func:`encode_message` writes a message **the way Batsim 4.2.1 writes it**: compact JSON (no
spaces), keys in Batsim's order, every float with 6 decimals (``0.000000``,
``1000000000.000000``), integers as integers (a workload's ``"subtime": 0`` stays ``0``, a profile's
``"delay": 20.2`` becomes ``20.200000``), non-ASCII characters unescaped. Fields Batsim always
writes as doubles (``now``, event ``timestamp``, ``consumed_energy``, kill ``progress``) are written
with 6 decimals even when given as Python ints.

Scheduler -> Batsim (:func:`decode_decisions`, :func:`encode_decisions`): EXECUTE_JOB, REJECT_JOB,
KILL_JOB, CALL_ME_LATER, SET_RESOURCE_STATE, QUERY, NOTIFY; any other type becomes a
:class:`~schedulers.core.events.GenericDecision`. :func:`encode_decisions` writes what pybatsim
writes (Python's ``json.dumps`` defaults: ``", "``/``": "`` separators, shortest float repr), which
is byte-identical to the scheduler replies of the recorded transcripts; Batsim accepts any JSON.

Resource sets are :class:`procset.ProcSet`; on the wire they are Batsim interval strings
(``"0-3 7"``: ASCII decimal ids or ``a-b`` ranges separated by single spaces). They are written in
canonical form (``str(ProcSet)``): a scheduler's ``"1 2 3"`` is decoded fine but re-encoded ``"1-3"``.

Times are simulation seconds. Every decoding problem raises :class:`ProtocolError` (a
``ValueError``) naming the event (index and type), what is wrong, and quoting the offending event
(truncated to :data:`QUOTE_LIMIT` characters).
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any, Callable, Iterable

from procset import ProcSet

from ..core.events import (
    Answer,
    CallMeLater,
    Decision,
    Event,
    ExecuteJob,
    GenericDecision,
    RegisterJob,
    RegisterProfile,
    GenericEvent,
    JobCompleted,
    JobKilled,
    JobSubmitted,
    KillJobs,
    Notify,
    NotifyBatsim,
    Query,
    RejectJob,
    RequestedCall,
    ResourceStateChanged,
    SetResourceState,
    SimulationBegins,
    SimulationEnds,
)
from ..core.model import Host, HostState, Job
from ..inputs.batsim_numbers import batsim_float
from ..inputs.jsonfile import RepeatedKey, json_problem, lone_surrogate, unique_pairs

__all__ = [
    "HOST_EXTRA_KEY",
    "QUOTE_LIMIT",
    "REQUIRED_DECISION_FIELDS",
    "REQUIRED_EVENT_FIELDS",
    "ProtocolError",
    "decode_decisions",
    "decode_message",
    "dumps_batsim",
    "encode_decisions",
    "encode_message",
    "format_interval_set",
    "parse_interval_set",
]

#: Offending events are quoted in error messages up to this many characters.
QUOTE_LIMIT = 300

#: Key of :attr:`SimulationBegins.extra` holding host fields :class:`Host` has no attribute for
#: (``{"compute_resources": {"<id>": {field: value}}, "storage_resources": {...}}``). Present only
#: when Batsim sent such fields (Batsim 4.2.1 sends none); :func:`encode_message` writes them back.
HOST_EXTRA_KEY = "__host_extra__"

#: ``data`` fields that must be present, per Batsim -> scheduler event type (besides the event's
#: own ``timestamp``, ``type`` and ``data``).
REQUIRED_EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "SIMULATION_BEGINS": ("compute_resources",),
    "JOB_SUBMITTED": ("job_id", "job"),
    "JOB_COMPLETED": ("job_id", "job_state", "return_code", "alloc"),
    "JOB_KILLED": ("job_ids",),
    "RESOURCE_STATE_CHANGED": ("resources", "state"),
    "REQUESTED_CALL": (),
    "NOTIFY": ("type",),
    "ANSWER": (),
    "SIMULATION_ENDS": (),
}

#: ``data`` fields that must be present, per scheduler -> Batsim decision type.
REQUIRED_DECISION_FIELDS: dict[str, tuple[str, ...]] = {
    "EXECUTE_JOB": ("job_id", "alloc"),
    "REJECT_JOB": ("job_id",),
    "KILL_JOB": ("job_ids",),
    "CALL_ME_LATER": ("timestamp",),
    "SET_RESOURCE_STATE": ("resources", "state"),
    "QUERY": ("requests",),
    "NOTIFY": ("type",),
    "REGISTER_JOB": ("job_id", "job"),
    "REGISTER_PROFILE": ("workload_name", "profile_name", "profile"),
}

# Order in which Batsim 4.2.1 writes the fields of SIMULATION_BEGINS (transcripts, protocol.cpp).
_BEGINS_FIELDS = (
    "nb_resources",
    "nb_compute_resources",
    "nb_storage_resources",
    "allow_compute_sharing",
    "allow_storage_sharing",
    "config",
    "compute_resources",
    "storage_resources",
    "workloads",
    "profiles",
)
_HOST_FIELDS = ("id", "name", "state", "properties", "zone_properties")
_HOST_STATES = {s.value: s for s in HostState}

# Batsim interval strings: "3", "0-3", "0-3 7 9-12"; ASCII digits only, single spaces.
_INTERVALS_RE = re.compile(r"(?:\d+(?:-\d+)?(?: \d+(?:-\d+)?)*)?", re.ASCII)
_INT_RE = re.compile(r"-?\d+", re.ASCII)


class ProtocolError(ValueError):
    """A Batsim protocol message is malformed (or cannot be written).

    The message says where (event index and type), what is wrong, and quotes the offending event
    (or the whole message for message-level problems), truncated to :data:`QUOTE_LIMIT` chars.

    Attributes:
        event: the offending event object (or message, or raw text) as received; None if unknown.
        index: index of the offending event in ``events``; None for message-level problems.
    """

    def __init__(self, message: str, *, event: Any = None, index: int | None = None) -> None:
        super().__init__(message)
        self.event = event
        self.index = index


# ------------------------------------------------------------------------------------ helpers
def _quote(obj: Any, limit: int = QUOTE_LIMIT) -> str:
    """Compact JSON (or repr) of ``obj``, cut to ``limit`` characters with a trailing ``...``."""
    if isinstance(obj, (bytes, bytearray, memoryview)):
        text = repr(bytes(obj))
    elif isinstance(obj, str):
        text = obj
    else:
        try:
            text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=repr)
        except (TypeError, ValueError, RecursionError):
            text = repr(obj)
    if len(text) > limit:
        text = text[: max(0, limit - 3)] + "..."
    return text


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _kind(x: Any) -> str:
    """JSON kind of a value, for error messages."""
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "boolean"
    if isinstance(x, (int, float)):
        return "number"
    if isinstance(x, str):
        return "string"
    if isinstance(x, list):
        return "array"
    if isinstance(x, dict):
        return "object"
    return type(x).__name__


def parse_interval_set(text: str) -> ProcSet:
    """Parse a Batsim interval string (``"0-3 7"``, ``""`` for none) into a ProcSet.

    Accepted: ASCII decimal ids and ``a-b`` ranges (``a <= b``) separated by single spaces, as
    Batsim writes them (``IntervalSet::to_string_hyphen(" ", "-")``).

    Raises:
        ValueError: not a string, or not of that form (``"3-1"``, ``"1,2"``, ``" 1"``, ``"-1"``).
    """
    if not isinstance(text, str):
        raise ValueError(f"expected an interval string such as '0-3 7', got {_kind(text)} {text!r}")
    if not _INTERVALS_RE.fullmatch(text):
        raise ValueError(f"bad interval string {text!r} (expected e.g. '0-3 7')")
    try:
        return ProcSet.from_str(text)
    except ValueError:
        raise ValueError(f"bad interval string {text!r} (expected e.g. '0-3 7', with a <= b in a-b)") from None


def format_interval_set(ps: ProcSet | Iterable[int]) -> str:
    """Batsim's interval string of a set of resource ids (``"0-3 7"``; ``""`` when empty)."""
    if not isinstance(ps, ProcSet):
        ps = ProcSet(*ps)
    return str(ps)


# ------------------------------------------------------------------ Batsim's JSON writer style
def _escape_string(s: str) -> str:
    # rapidjson's Writer: escapes '"', '\\', and control characters (\b \f \n \r \t, else \u00XX
    # with upper-case hex); leaves '/' and non-ASCII characters as they are (UTF-8 output).
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif o < 0x20:
            out.append({"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch, f"\\u{o:04X}"))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _format_double(x: float) -> str:
    if not math.isfinite(x):
        raise ProtocolError(f"cannot write the non-finite number {x!r} in a Batsim message")
    return "%.6f" % x


def _dump(obj: Any, out: list[str]) -> None:
    if obj is None:
        out.append("null")
    elif obj is True:
        out.append("true")
    elif obj is False:
        out.append("false")
    elif isinstance(obj, int):
        out.append(str(int(obj)))
    elif isinstance(obj, float):
        out.append(_format_double(obj))
    elif isinstance(obj, str):
        out.append(_escape_string(obj))
    elif isinstance(obj, dict):
        out.append("{")
        first = True
        for k, v in obj.items():
            if not first:
                out.append(",")
            first = False
            out.append(_escape_string(str(k)))
            out.append(":")
            _dump(v, out)
        out.append("}")
    elif isinstance(obj, (list, tuple)):
        out.append("[")
        for i, v in enumerate(obj):
            if i:
                out.append(",")
            _dump(v, out)
        out.append("]")
    elif isinstance(obj, ProcSet):
        out.append(_escape_string(str(obj)))
    else:
        raise ProtocolError(f"cannot write a {type(obj).__name__} in a Batsim message: {_quote(obj)}")


def dumps_batsim(obj: Any) -> str:
    """Serialise ``obj`` the way Batsim 4.2.1 (rapidjson) writes JSON.

    Compact (no spaces), dict keys in insertion order, ``float`` as ``%.6f`` (``0.000000``), ``int``
    as an integer, strings with only ``"``, ``\\`` and control characters escaped (``\\u001F`` style).
    Source: the ``raw`` lines of ``shared/batsim-4.2.1/transcripts``.

    Raises:
        ProtocolError: a non-finite float, or a value that is not JSON (a ProcSet is written as its
            interval string).
    """
    out: list[str] = []
    _dump(obj, out)
    return "".join(out)


# ------------------------------------------------------------------------- decoding framework
_TO_BATSIM = "scheduler->Batsim"


def _parse_constant(name: str) -> Any:
    raise ValueError(f"non-finite number {name} is not valid in a Batsim message")


def _load(raw: bytes | str | dict, direction: str) -> tuple[float, list[Any], bool]:
    """Parse a raw message; returns (now, events, came_as_dict)."""
    as_dict = False
    if isinstance(raw, (bytes, bytearray, memoryview)):
        try:
            text = bytes(raw).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError(f"{direction} message is not UTF-8 ({exc}): {_quote(raw)}", event=raw) from None
    elif isinstance(raw, str):
        text = raw
    elif isinstance(raw, dict):
        text = None
        msg = raw
        as_dict = True
    else:
        raise ProtocolError(
            f"{direction} message must be bytes, str or dict, got {type(raw).__name__}: {_quote(raw)}", event=raw
        )
    if text is not None:
        try:
            # a reply's numbers as Batsim's RapidJSON reads them (inputs.batsim_numbers)
            msg = json.loads(text, object_pairs_hook=unique_pairs, parse_constant=_parse_constant,
                             parse_float=batsim_float if direction == _TO_BATSIM else float)
        except RepeatedKey:
            raise ProtocolError(f"{direction} message: {json_problem(text)}: {_quote(text)}", event=text) from None
        except (ValueError, RecursionError) as exc:
            raise ProtocolError(f"{direction} message is not valid JSON ({exc}): {_quote(text)}", event=text) from None
        if "\\u" in text:   # (lone_surrogate's own first test, inlined: most messages have no escape)
            problem = lone_surrogate(msg, text)
            if problem is not None:
                raise ProtocolError(f"{direction} message: {problem}: {_quote(text)}", event=text)
    if not isinstance(msg, dict):
        raise ProtocolError(f"{direction} message must be a JSON object, got {_kind(msg)}: {_quote(msg)}", event=msg)
    if "now" not in msg:
        raise ProtocolError(f"{direction} message lacks 'now': {_quote(msg)}", event=msg)
    now = msg["now"]
    if not _is_number(now):
        raise ProtocolError(
            f"{direction} message: 'now' must be a finite number, got {_kind(now)} {_quote(now, 60)}: {_quote(msg)}",
            event=msg,
        )
    if "events" not in msg:
        raise ProtocolError(f"{direction} message lacks 'events': {_quote(msg)}", event=msg)
    events = msg["events"]
    if not isinstance(events, list):
        raise ProtocolError(
            f"{direction} message: 'events' must be an array, got {_kind(events)}: {_quote(msg)}", event=msg
        )
    return float(now), events, as_dict


def _deepcopy(events: list[Any]) -> list[Any]:
    try:
        return copy.deepcopy(events)
    except RecursionError:
        raise ProtocolError("message nested too deeply to decode", event=None) from None


class _Ctx:
    """Where we are while decoding one event (for error messages)."""

    __slots__ = ("event", "index", "type", "now")

    def __init__(self, event: Any, index: int, now: float) -> None:
        self.event = event
        self.index = index
        self.now = now
        self.type = event.get("type") if isinstance(event, dict) and isinstance(event.get("type"), str) else None

    def fail(self, problem: str) -> ProtocolError:
        what = f"event {self.index}" + (f" ({self.type})" if self.type else "")
        return ProtocolError(f"{what} at now={self.now!r}: {problem}; event: {_quote(self.event)}",
                             event=self.event, index=self.index)

    # typed accessors of data fields -------------------------------------------------------------
    def need(self, data: dict, key: str) -> Any:
        if key not in data:
            raise self.fail(f"data lacks required field {key!r}")
        return data[key]

    def string(self, data: dict, key: str, *, required: bool = True, default: str = "") -> str:
        if key not in data:
            if required:
                raise self.fail(f"data lacks required field {key!r}")
            return default
        v = data[key]
        if not isinstance(v, str):
            raise self.fail(f"data.{key} must be a string, got {_kind(v)} {_quote(v, 60)}")
        return v

    def integer(self, data: dict, key: str, *, required: bool = True, default: int = 0) -> int:
        if key not in data:
            if required:
                raise self.fail(f"data lacks required field {key!r}")
            return default
        v = data[key]
        if not _is_int(v):
            raise self.fail(f"data.{key} must be an integer, got {_kind(v)} {_quote(v, 60)}")
        return v

    def number(self, data: dict, key: str) -> float:
        v = self.need(data, key)
        if not _is_number(v):
            raise self.fail(f"data.{key} must be a finite number, got {_kind(v)} {_quote(v, 60)}")
        return float(v)

    def boolean(self, data: dict, key: str, default: bool) -> bool:
        if key not in data:
            return default
        v = data[key]
        if not isinstance(v, bool):
            raise self.fail(f"data.{key} must be true or false, got {_kind(v)} {_quote(v, 60)}")
        return v

    def obj(self, data: dict, key: str, *, required: bool = True) -> dict:
        if key not in data:
            if required:
                raise self.fail(f"data lacks required field {key!r}")
            return {}
        v = data[key]
        if not isinstance(v, dict):
            raise self.fail(f"data.{key} must be an object, got {_kind(v)} {_quote(v, 60)}")
        return v

    def str_list(self, data: dict, key: str) -> list[str]:
        v = self.need(data, key)
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise self.fail(f"data.{key} must be an array of strings, got {_quote(v, 80)}")
        return list(v)

    def intervals(self, data: dict, key: str, *, nonempty: bool = False) -> ProcSet:
        v = self.need(data, key)
        try:
            ps = parse_interval_set(v)
        except ValueError as exc:
            raise self.fail(f"data.{key}: {exc}") from None
        if nonempty and not ps:
            raise self.fail(f"data.{key} must name at least one resource, got {v!r}")
        return ps

    def pstate(self, data: dict, key: str) -> str:
        v = self.string(data, key)
        if not _INT_RE.fullmatch(v):
            raise self.fail(f"data.{key} must be a string holding an integer pstate such as \"1\", got {v!r}")
        return v


def _check_envelope(ev: Any, i: int, now: float, direction: str) -> tuple[_Ctx, float, str, Any]:
    """Validate ``timestamp``/``type``/``data`` of one event; returns (ctx, timestamp, type, data)."""
    ctx = _Ctx(ev, i, now)
    if not isinstance(ev, dict):
        raise ctx.fail(f"each {direction} event must be a JSON object, got {_kind(ev)}")
    if "type" not in ev:
        raise ctx.fail("event lacks 'type'")
    typ = ev["type"]
    if not isinstance(typ, str):
        raise ctx.fail(f"'type' must be a string, got {_kind(typ)} {_quote(typ, 60)}")
    if "timestamp" not in ev:
        raise ctx.fail("event lacks 'timestamp'")
    ts = ev["timestamp"]
    if not _is_number(ts):
        raise ctx.fail(f"'timestamp' must be a finite number, got {_kind(ts)} {_quote(ts, 60)}")
    if ts > now:
        raise ctx.fail(f"timestamp {ts!r} is later than the message's now={now!r} (Batsim requires timestamp <= now)")
    if "data" not in ev:
        raise ctx.fail("event lacks 'data'")
    return ctx, float(ts), typ, ev["data"]


# ------------------------------------------------------------- Batsim -> scheduler: decoding
def _decode_host(ctx: _Ctx, h: Any, where: str, k: int, host_extra: dict[str, dict]) -> Host:
    if not isinstance(h, dict):
        raise ctx.fail(f"{where}[{k}] must be an object, got {_kind(h)}")
    for key in ("id", "name"):
        if key not in h:
            raise ctx.fail(f"{where}[{k}] lacks {key!r}")
    hid, name = h["id"], h["name"]
    if not _is_int(hid) or hid < 0:
        raise ctx.fail(f"{where}[{k}].id must be an integer >= 0, got {_quote(hid, 60)}")
    if not isinstance(name, str):
        raise ctx.fail(f"{where}[{k}].name must be a string, got {_kind(name)} {_quote(name, 60)}")
    state_s = h.get("state", "idle")
    if not isinstance(state_s, str) or state_s not in _HOST_STATES:
        raise ctx.fail(f"{where}[{k}].state must be one of {sorted(_HOST_STATES)}, got {_quote(state_s, 60)}")
    props: dict[str, dict[str, str]] = {}
    for key in ("properties", "zone_properties"):
        p = h.get(key, {})
        if not isinstance(p, dict) or not all(isinstance(v, str) for v in p.values()):
            raise ctx.fail(f"{where}[{k}].{key} must be an object of strings, got {_quote(p, 80)}")
        props[key] = dict(p)
    others = {key: v for key, v in h.items() if key not in _HOST_FIELDS}
    if others:
        host_extra[str(hid)] = others
    return Host(id=hid, name=name, state=_HOST_STATES[state_s], pstate=None,   # (Batsim does not send it)
                properties=props["properties"], zone_properties=props["zone_properties"])


def _decode_hosts(ctx: _Ctx, data: dict, key: str, extra: dict) -> list[Host]:
    if key not in data:
        if key in REQUIRED_EVENT_FIELDS["SIMULATION_BEGINS"]:
            raise ctx.fail(f"data lacks required field {key!r}")
        return []
    lst = data[key]
    if not isinstance(lst, list):
        raise ctx.fail(f"data.{key} must be an array, got {_kind(lst)} {_quote(lst, 60)}")
    host_extra: dict[str, dict] = {}
    hosts = [_decode_host(ctx, h, f"data.{key}", k, host_extra) for k, h in enumerate(lst)]
    if host_extra:
        extra.setdefault(HOST_EXTRA_KEY, {})[key] = host_extra
    return hosts


def _dec_simulation_begins(ctx: _Ctx, ts: float, data: dict) -> Event:
    extra: dict[str, Any] = {}
    compute = _decode_hosts(ctx, data, "compute_resources", extra)
    storage = _decode_hosts(ctx, data, "storage_resources", extra)
    nb_c = ctx.integer(data, "nb_compute_resources", required=False, default=len(compute))
    nb_s = ctx.integer(data, "nb_storage_resources", required=False, default=len(storage))
    nb = ctx.integer(data, "nb_resources", required=False, default=nb_c + nb_s)
    workloads = ctx.obj(data, "workloads", required=False)
    if not all(isinstance(v, str) for v in workloads.values()):
        raise ctx.fail(f"data.workloads must map workload names to file names (strings), got {_quote(workloads, 80)}")
    profiles = ctx.obj(data, "profiles", required=False)
    for wl, profs in profiles.items():
        if not isinstance(profs, dict) or not all(isinstance(p, dict) for p in profs.values()):
            raise ctx.fail(f"data.profiles[{wl!r}] must map profile names to profile objects, got {_quote(profs, 80)}")
    for key, value in data.items():
        if key not in _BEGINS_FIELDS:
            extra[key] = value
    return SimulationBegins(
        timestamp=ts,
        nb_resources=nb,
        nb_compute_resources=nb_c,
        nb_storage_resources=nb_s,
        allow_compute_sharing=ctx.boolean(data, "allow_compute_sharing", False),
        allow_storage_sharing=ctx.boolean(data, "allow_storage_sharing", True),
        config=dict(ctx.obj(data, "config", required=False)),
        compute_resources=compute,
        storage_resources=storage,
        workloads=dict(workloads),
        profiles=profiles,
        extra=extra,
    )


def _dec_job_submitted(ctx: _Ctx, ts: float, data: dict) -> Event:
    job_id = ctx.string(data, "job_id")
    if "job" not in data:
        raise ctx.fail("data lacks required field 'job' (Batsim with Redis enabled sends only job ids: "
                       "not supported, run Batsim without --enable-redis)")
    obj = ctx.obj(data, "job")
    profile = ctx.obj(data, "profile") if "profile" in data else None
    for key in ("res", "subtime", "profile"):
        if key not in obj:
            raise ctx.fail(f"data.job lacks required field {key!r}")
    res, sub, prof = obj["res"], obj["subtime"], obj["profile"]
    if not _is_int(res) or res < 0:
        raise ctx.fail(f"data.job.res must be an integer >= 0, got {_quote(res, 60)}")
    if not _is_number(sub):
        raise ctx.fail(f"data.job.subtime must be a finite number, got {_kind(sub)} {_quote(sub, 60)}")
    if "walltime" in obj and not _is_number(obj["walltime"]):
        raise ctx.fail(f"data.job.walltime must be a number (-1 for none), got {_quote(obj['walltime'], 60)}")
    if not isinstance(prof, str):
        raise ctx.fail(f"data.job.profile must be a string, got {_kind(prof)} {_quote(prof, 60)}")
    if "id" in obj and not isinstance(obj["id"], str):
        raise ctx.fail(f"data.job.id must be a string, got {_kind(obj['id'])} {_quote(obj['id'], 60)}")
    try:
        job = Job.from_json(job_id, obj, profile)
    except (ValueError, TypeError) as exc:
        raise ctx.fail(f"bad job object: {exc}") from None
    return JobSubmitted(timestamp=ts, job=job)


def _dec_job_completed(ctx: _Ctx, ts: float, data: dict) -> Event:
    return JobCompleted(
        timestamp=ts,
        job_id=ctx.string(data, "job_id"),
        job_state=ctx.string(data, "job_state"),
        return_code=ctx.integer(data, "return_code"),
        alloc=ctx.intervals(data, "alloc"),
    )


def _dec_job_killed(ctx: _Ctx, ts: float, data: dict) -> Event:
    return JobKilled(timestamp=ts, job_ids=ctx.str_list(data, "job_ids"),
                     job_progress=dict(ctx.obj(data, "job_progress", required=False)))


def _dec_resource_state_changed(ctx: _Ctx, ts: float, data: dict) -> Event:
    return ResourceStateChanged(timestamp=ts, resources=ctx.intervals(data, "resources"),
                                state=ctx.pstate(data, "state"))


def _dec_requested_call(ctx: _Ctx, ts: float, data: dict) -> Event:
    return RequestedCall(timestamp=ts)


def _dec_notify(ctx: _Ctx, ts: float, data: dict) -> Event:
    typ = ctx.string(data, "type")
    return Notify(timestamp=ts, type=typ, data={k: v for k, v in data.items() if k != "type"})


def _dec_answer(ctx: _Ctx, ts: float, data: dict) -> Event:
    if "consumed_energy" in data:
        ctx.number(data, "consumed_energy")
    return Answer(timestamp=ts, data=dict(data))


def _dec_simulation_ends(ctx: _Ctx, ts: float, data: dict) -> Event:
    return SimulationEnds(timestamp=ts)


_EVENT_DECODERS: dict[str, Callable[[_Ctx, float, dict], Event]] = {
    "SIMULATION_BEGINS": _dec_simulation_begins,
    "JOB_SUBMITTED": _dec_job_submitted,
    "JOB_COMPLETED": _dec_job_completed,
    "JOB_KILLED": _dec_job_killed,
    "RESOURCE_STATE_CHANGED": _dec_resource_state_changed,
    "REQUESTED_CALL": _dec_requested_call,
    "NOTIFY": _dec_notify,
    "ANSWER": _dec_answer,
    "SIMULATION_ENDS": _dec_simulation_ends,
}


def decode_message(raw: bytes | str | dict) -> tuple[float, list[Event]]:
    """Decode one Batsim -> scheduler message.

    Args:
        raw: the message as received (UTF-8 bytes or text) or already parsed (not modified: parts
            kept in the events are deep copies).

    Returns:
        ``(now, events)``: ``now`` in seconds and the typed events in message order
        (:mod:`schedulers.core.events`): SIMULATION_BEGINS -> :class:`SimulationBegins` (hosts as
        :class:`~schedulers.core.model.Host`; unknown data fields in ``extra``), JOB_SUBMITTED ->
        :class:`JobSubmitted` (``job.extra`` keeps fields such as ``user``, ``job.raw`` the object
        as sent, ``job.profile_data`` the forwarded profile), JOB_COMPLETED, JOB_KILLED (with
        ``job_progress``), RESOURCE_STATE_CHANGED (pstate as a string), REQUESTED_CALL, NOTIFY,
        ANSWER, SIMULATION_ENDS; any other type -> :class:`GenericEvent` with its ``data``.

    Raises:
        ProtocolError: not UTF-8/JSON, no numeric ``now`` or no ``events`` array, an event without
            ``type``/``timestamp``/``data``, a timestamp later than ``now``, a missing required
            field (:data:`REQUIRED_EVENT_FIELDS`) or a field of the wrong type, a bad interval
            string. The message quotes the offending event.
    """
    return _decode_all(raw, "Batsim->scheduler", _EVENT_DECODERS, GenericEvent)


def _decode_all(raw: bytes | str | dict, direction: str, decoders: dict, generic: type) -> tuple[float, list]:
    """Decode every event of a message with ``decoders`` (by type); unknown types become ``generic``."""
    now, raw_events, as_dict = _load(raw, direction)
    if as_dict:
        raw_events = _deepcopy(raw_events)
    out: list = []
    for i, ev in enumerate(raw_events):
        ctx, ts, typ, data = _check_envelope(ev, i, now, direction)
        dec = decoders.get(typ)
        if dec is None:
            out.append(generic(timestamp=ts, type=typ, data=data))
            continue
        if not isinstance(data, dict):
            raise ctx.fail(f"'data' must be an object, got {_kind(data)}")
        out.append(dec(ctx, ts, data))
    return now, out


# ------------------------------------------------------------- Batsim -> scheduler: encoding
def _enc_host(h: Host, extra: dict[str, Any] | None) -> dict[str, Any]:
    state = h.state.value if isinstance(h.state, HostState) else str(h.state)
    d: dict[str, Any] = {"id": int(h.id), "name": h.name, "state": state,
                         "properties": dict(h.properties), "zone_properties": dict(h.zone_properties)}
    if extra:
        d.update(extra.get(str(h.id), {}))
    return d


def _enc_simulation_begins(ev: SimulationBegins) -> dict[str, Any]:
    extra = dict(ev.extra)
    host_extra = extra.pop(HOST_EXTRA_KEY, None) or {}
    d: dict[str, Any] = {
        "nb_resources": int(ev.nb_resources),
        "nb_compute_resources": int(ev.nb_compute_resources),
        "nb_storage_resources": int(ev.nb_storage_resources),
        "allow_compute_sharing": bool(ev.allow_compute_sharing),
        "allow_storage_sharing": bool(ev.allow_storage_sharing),
        "config": ev.config,
        "compute_resources": [_enc_host(h, host_extra.get("compute_resources")) for h in ev.compute_resources],
        "storage_resources": [_enc_host(h, host_extra.get("storage_resources")) for h in ev.storage_resources],
        "workloads": ev.workloads,
        "profiles": ev.profiles,
    }
    d.update(extra)
    return d


def _enc_job_submitted(ev: JobSubmitted) -> dict[str, Any]:
    job = ev.job
    d: dict[str, Any] = {"job_id": job.id, "job": job.to_json()}
    if job.profile_data is not None:
        d["profile"] = job.profile_data
    return d


def _enc_job_completed(ev: JobCompleted) -> dict[str, Any]:
    return {"job_id": ev.job_id, "job_state": str(ev.job_state), "return_code": int(ev.return_code),
            "alloc": format_interval_set(ev.alloc)}


def _progress_doubles(tree: Any) -> Any:
    # Batsim writes "progress" as a double: 1 -> 1.000000.
    if isinstance(tree, dict):
        return {k: (float(v) if k == "progress" and _is_number(v) else _progress_doubles(v)) for k, v in tree.items()}
    return tree


def _enc_job_killed(ev: JobKilled) -> dict[str, Any]:
    return {"job_ids": list(ev.job_ids), "job_progress": _progress_doubles(ev.job_progress)}


def _enc_resource_state_changed(ev: ResourceStateChanged) -> dict[str, Any]:
    return {"resources": format_interval_set(ev.resources), "state": str(ev.state)}


def _enc_notify(ev: Notify) -> dict[str, Any]:
    d: dict[str, Any] = {"type": ev.type}
    d.update({k: v for k, v in ev.data.items() if k != "type"})
    return d


def _enc_answer(ev: Answer) -> dict[str, Any]:
    d = dict(ev.data)
    if _is_number(d.get("consumed_energy")):
        d["consumed_energy"] = float(d["consumed_energy"])  # a double in Batsim
    return d


def _enc_empty(ev: Event) -> dict[str, Any]:
    return {}


_EVENT_ENCODERS: dict[type, tuple[str, Callable[[Any], Any]]] = {
    SimulationBegins: ("SIMULATION_BEGINS", _enc_simulation_begins),
    JobSubmitted: ("JOB_SUBMITTED", _enc_job_submitted),
    JobCompleted: ("JOB_COMPLETED", _enc_job_completed),
    JobKilled: ("JOB_KILLED", _enc_job_killed),
    ResourceStateChanged: ("RESOURCE_STATE_CHANGED", _enc_resource_state_changed),
    RequestedCall: ("REQUESTED_CALL", _enc_empty),
    Notify: ("NOTIFY", _enc_notify),
    Answer: ("ANSWER", _enc_answer),
    SimulationEnds: ("SIMULATION_ENDS", _enc_empty),
}


def _lookup(table: dict[type, Any], obj: Any) -> Any:
    for cls in type(obj).__mro__:
        if cls in table:
            return table[cls]
    return None


def encode_message(now: float, events: list[Event]) -> str:
    """Write a Batsim -> scheduler message exactly as Batsim 4.2.1 does.

    Args:
        now: the message's ``now`` (s).
        events: typed events; ``timestamp`` None means ``now``. Jobs are written from
            :meth:`Job.to_json` (the original object when ``Job.raw`` is set), forwarded profiles
            from ``Job.profile_data``; a :class:`GenericEvent` is written as ``type`` + ``data``
            (None -> ``{}``).

    Returns:
        Compact JSON text in Batsim's key order and number format (see :func:`dumps_batsim`):
        byte-identical to Batsim's own message for events decoded from one.

    Raises:
        ProtocolError: an event timestamp later than ``now``, a non-finite number, or an object
            that is not an :class:`Event`.
    """
    if not _is_number(now):
        raise ProtocolError(f"cannot write a message with now={now!r}: a finite number is required")
    now_f = float(now)
    evs: list[dict[str, Any]] = []
    for i, ev in enumerate(events):
        if isinstance(ev, GenericEvent):
            typ, data = ev.type, ({} if ev.data is None else ev.data)
        else:
            entry = _lookup(_EVENT_ENCODERS, ev)
            if entry is None:
                raise ProtocolError(f"event {i}: cannot write {type(ev).__name__} (not a Batsim->scheduler event): "
                                    f"{_quote(repr(ev))}", event=ev, index=i)
            typ, fn = entry
            data = fn(ev)
        ts = now_f if ev.timestamp is None else ev.timestamp
        if not _is_number(ts):
            raise ProtocolError(f"event {i} ({typ}): timestamp must be a finite number, got {ts!r}", event=ev, index=i)
        if ts > now_f:
            raise ProtocolError(f"event {i} ({typ}): timestamp {ts!r} is later than now={now_f!r}", event=ev, index=i)
        evs.append({"timestamp": float(ts), "type": typ, "data": data})
    return dumps_batsim({"now": now_f, "events": evs})


# ------------------------------------------------------------- scheduler -> Batsim: decoding
def _ddec_execute_job(ctx: _Ctx, ts: float, data: dict) -> Decision:
    job_id = ctx.string(data, "job_id")
    alloc = ctx.intervals(data, "alloc", nonempty=True)
    extra = {k: v for k, v in data.items() if k not in ("job_id", "alloc")}
    return ExecuteJob(timestamp=ts, job_id=job_id, alloc=alloc, extra=extra)


def _ddec_reject_job(ctx: _Ctx, ts: float, data: dict) -> Decision:
    return RejectJob(timestamp=ts, job_id=ctx.string(data, "job_id"))


def _ddec_kill_job(ctx: _Ctx, ts: float, data: dict) -> Decision:
    return KillJobs(timestamp=ts, job_ids=ctx.str_list(data, "job_ids"))


def _ddec_call_me_later(ctx: _Ctx, ts: float, data: dict) -> Decision:
    return CallMeLater(timestamp=ts, at=ctx.number(data, "timestamp"))


def _ddec_set_resource_state(ctx: _Ctx, ts: float, data: dict) -> Decision:
    return SetResourceState(timestamp=ts, resources=ctx.intervals(data, "resources", nonempty=True),
                            state=ctx.pstate(data, "state"))


def _ddec_query(ctx: _Ctx, ts: float, data: dict) -> Decision:
    return Query(timestamp=ts, requests=dict(ctx.obj(data, "requests")))


def _ddec_notify(ctx: _Ctx, ts: float, data: dict) -> Decision:
    typ = ctx.string(data, "type")
    return NotifyBatsim(timestamp=ts, type=typ, data={k: v for k, v in data.items() if k != "type"})


def _ddec_register_job(ctx: _Ctx, ts: float, data: dict) -> Decision:
    return RegisterJob(timestamp=ts, job_id=ctx.string(data, "job_id"), job=dict(ctx.obj(data, "job")))


def _ddec_register_profile(ctx: _Ctx, ts: float, data: dict) -> Decision:
    return RegisterProfile(timestamp=ts, workload=ctx.string(data, "workload_name"),
                           name=ctx.string(data, "profile_name"), profile=dict(ctx.obj(data, "profile")))


_DECISION_DECODERS: dict[str, Callable[[_Ctx, float, dict], Decision]] = {
    "REGISTER_JOB": _ddec_register_job,
    "REGISTER_PROFILE": _ddec_register_profile,
    "EXECUTE_JOB": _ddec_execute_job,
    "REJECT_JOB": _ddec_reject_job,
    "KILL_JOB": _ddec_kill_job,
    "CALL_ME_LATER": _ddec_call_me_later,
    "SET_RESOURCE_STATE": _ddec_set_resource_state,
    "QUERY": _ddec_query,
    "NOTIFY": _ddec_notify,
}


def decode_decisions(raw: bytes | str | dict) -> tuple[float, list[Decision]]:
    """Decode one scheduler -> Batsim message (a scheduler's reply).

    Args:
        raw: the reply as sent (UTF-8 bytes or text) or already parsed (not modified).

    Returns:
        ``(now, decisions)`` in message order, each with the ``timestamp`` it was sent with (s):
        EXECUTE_JOB -> :class:`ExecuteJob` (optional fields such as ``mapping`` kept in ``extra``),
        REJECT_JOB, KILL_JOB -> :class:`KillJobs`, CALL_ME_LATER -> :class:`CallMeLater` (``at`` =
        ``data.timestamp``), SET_RESOURCE_STATE, QUERY, NOTIFY -> :class:`NotifyBatsim`; any other
        type -> :class:`GenericDecision` with its ``data``.

    Raises:
        ProtocolError: as :func:`decode_message` (checks as strict as Batsim 4's reader: ``state``
            must be a string holding an integer, ``alloc``/``resources`` non-empty), quoting the
            offending event. Required fields: :data:`REQUIRED_DECISION_FIELDS`.
    """
    return _decode_all(raw, _TO_BATSIM, _DECISION_DECODERS, GenericDecision)


# ------------------------------------------------------------- scheduler -> Batsim: encoding
def _denc_execute_job(d: ExecuteJob) -> dict[str, Any]:
    if not d.alloc:
        raise ValueError(f"EXECUTE_JOB of {d.job_id!r} with an empty allocation")
    out: dict[str, Any] = {"job_id": d.job_id, "alloc": format_interval_set(d.alloc)}
    out.update({k: v for k, v in d.extra.items() if k not in ("job_id", "alloc")})
    return out


def _denc_set_resource_state(d: SetResourceState) -> dict[str, Any]:
    if not d.resources:
        raise ValueError("SET_RESOURCE_STATE with no resources")
    return {"resources": format_interval_set(d.resources), "state": str(d.state)}


def _denc_notify(d: NotifyBatsim) -> dict[str, Any]:
    out: dict[str, Any] = {"type": d.type}
    out.update({k: v for k, v in d.data.items() if k != "type"})
    return out


_DECISION_ENCODERS: dict[type, tuple[str, Callable[[Any], Any]]] = {
    ExecuteJob: ("EXECUTE_JOB", _denc_execute_job),
    RejectJob: ("REJECT_JOB", lambda d: {"job_id": d.job_id}),
    KillJobs: ("KILL_JOB", lambda d: {"job_ids": list(d.job_ids)}),
    CallMeLater: ("CALL_ME_LATER", lambda d: {"timestamp": float(d.at)}),
    SetResourceState: ("SET_RESOURCE_STATE", _denc_set_resource_state),
    Query: ("QUERY", lambda d: {"requests": d.requests}),
    NotifyBatsim: ("NOTIFY", _denc_notify),
    RegisterJob: ("REGISTER_JOB", lambda d: {"job_id": d.job_id, "job": d.job}),
    RegisterProfile: ("REGISTER_PROFILE", lambda d: {"workload_name": d.workload, "profile_name": d.name,
                                                     "profile": d.profile}),
}


def _json_default(obj: Any) -> Any:
    """JSON for what :func:`json.dumps` does not write: a ProcSet as its interval string, a NumPy
    number or array as the Python number or list it holds (``np.int64(3)`` -> ``3``: a policy's
    NOTIFY or REGISTER_JOB fields computed with NumPy, which the embedded engine takes as they
    are)."""
    if isinstance(obj, ProcSet):
        return str(obj)
    if type(obj).__module__ == "numpy" and hasattr(obj, "tolist"):
        return obj.tolist()   # (a scalar's tolist() is its Python value)
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def encode_decisions(now: float, decisions: list[Decision]) -> str:
    """Write a scheduler -> Batsim message (the reply to one Batsim message).

    Args:
        now: the reply's ``now`` (s): the ``now`` of the Batsim message being answered.
        decisions: typed decisions; ``timestamp`` None is written as ``now``.

    Returns:
        JSON text as pybatsim writes it (``json.dumps`` defaults, floats as Python reprs:
        ``{"now": 0.0, "events": [{"timestamp": 0.0, "type": "EXECUTE_JOB", "data": {"job_id":
        "w0!0", "alloc": "0"}}]}``), byte-identical to the recorded scheduler replies. Allocations
        are canonical interval strings, SET_RESOURCE_STATE states strings (``"3"``).

    Raises:
        ProtocolError: a decision timestamp later than ``now`` (Batsim would abort), an empty
            allocation, a non-finite number, a value that is not JSON, or an object that is not a
            :class:`Decision`.
    """
    if not _is_number(now):
        raise ProtocolError(f"cannot write a reply with now={now!r}: a finite number is required")
    now_f = float(now)
    evs: list[dict[str, Any]] = []
    for i, d in enumerate(decisions):
        if isinstance(d, GenericDecision):
            typ, data = d.type, ({} if d.data is None else d.data)
        else:
            entry = _lookup(_DECISION_ENCODERS, d)
            if entry is None:
                raise ProtocolError(f"decision {i}: cannot write {type(d).__name__} (not a scheduler->Batsim "
                                    f"decision): {_quote(repr(d))}", event=d, index=i)
            typ, fn = entry
            try:
                data = fn(d)
            except (ValueError, TypeError) as exc:
                raise ProtocolError(f"decision {i} ({typ}): {exc}: {_quote(repr(d))}", event=d, index=i) from None
        ts = now_f if d.timestamp is None else d.timestamp
        if not _is_number(ts):
            raise ProtocolError(f"decision {i} ({typ}): timestamp must be a finite number, got {ts!r}", event=d, index=i)
        if ts > now_f:
            raise ProtocolError(f"decision {i} ({typ}): timestamp {ts!r} is later than now={now_f!r} "
                                f"(Batsim requires timestamp <= now)", event=d, index=i)
        evs.append({"timestamp": float(ts), "type": typ, "data": data})
    try:
        return json.dumps({"now": now_f, "events": evs}, allow_nan=False, default=_json_default)
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"cannot write the reply at now={now_f!r}: {exc}: {_quote(evs, QUOTE_LIMIT)}") from None
