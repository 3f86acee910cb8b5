"""Batsim's external events (``batsim --events FILE``): machines becoming unavailable or available
again, and events of the user's own types forwarded to the scheduler.

An events file has one JSON object per line (Batsim 4.2.1, ``docs/input-events.rst``;
``EventList::load_from_json``, ``src/events.cpp``)::

    {"type": "machine_unavailable", "resources": "0-4 6 8", "timestamp": 10}
    {"type": "machine_available", "resources": "2-4 8", "timestamp": 20}
    {"type": "user_specific_type", "timestamp": 150, "some_field": "value_of_field"}

Empty lines are skipped; every other line must be a JSON object with a string ``type`` and a
number ``timestamp`` >= 0 (s), at most :data:`~schedulers.core.limits.MAX_TIME` (2**33 s, as every time of a
workload). ``machine_unavailable`` / ``machine_available`` carry
``resources``, an interval set of machine ids (``"0-4 6 8"``). An event of another type is
refused, unless ``--forward-unknown-events``: it is then a *generic* event, sent to the scheduler
as is. Batsim sorts a file's events by timestamp, then by type (``machine_available`` before
``machine_unavailable`` before generic: ``event_comparator_timestamp_number``) with
``std::sort``, which is not stable: the order of events of one timestamp and one type is the one
GCC's introsort leaves (:func:`std_sort`).

During the run (:mod:`.netserver`) one submitter actor per file (``static_event_submitter_process``,
``src/event_submitter.cpp``) sends the events due at each instant to Batsim's server in one
message; the server (``server_on_event_occurred``, ``src/server.cpp``) sets each machine of an
``machine_unavailable`` event to the ``unavailable`` state (EXECUTE_JOB on it then aborts Batsim;
its running jobs go on), puts a machine made available back in ``computing`` or ``idle``, and
tells the scheduler with a NOTIFY ``event_machine_unavailable`` / ``event_machine_available``
(``resources``: the event's machines), or forwards a generic event as a NOTIFY whose ``data`` is
the event's JSON object. When every file's events are sent, NOTIFY
``no_more_external_event_to_occur``; the simulation ends only after that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from procset import ProcSet

from ..core.limits import MAX_TIME
from ..inputs.batsim_numbers import batsim_float
from ..inputs.errors import EventsError
from ..inputs.jsonfile import loads_strict, regular_file

__all__ = ["EventsError", "ExternalEvent", "EventList", "read_events", "MACHINE_AVAILABLE", "MACHINE_UNAVAILABLE",
           "GENERIC"]

#: Batsim's ``EventType`` values, in the order that sorts events of one timestamp (events.hpp).
MACHINE_AVAILABLE, MACHINE_UNAVAILABLE, GENERIC = 0, 1, 2
_KINDS = {"machine_available": MACHINE_AVAILABLE, "machine_unavailable": MACHINE_UNAVAILABLE}


@dataclass(frozen=True, slots=True)
class ExternalEvent:
    """One external event.

    Attributes:
        timestamp: when it occurs (s), as Batsim reads the number.
        kind: :data:`MACHINE_AVAILABLE`, :data:`MACHINE_UNAVAILABLE` or :data:`GENERIC`.
        type: the ``type`` field.
        resources: the machines of a machine event (ids), None for a generic event.
        data: a generic event's whole JSON object (what the scheduler's NOTIFY carries).
        source: the file and line it was read from (``"events.txt, line 3"``), named by the
            errors it causes during the run (a machine made unavailable twice...).
    """

    timestamp: float
    kind: int
    type: str
    resources: ProcSet | None = None
    data: dict[str, Any] = field(default_factory=dict)
    #: where it was read (``FILE, line N``), for the errors of the run
    source: str = ""


@dataclass(slots=True)
class EventList:
    """The events of one file, sorted as Batsim sorts them; ``name`` is Batsim's (``we0``, ``we1``...)."""

    name: str
    path: str
    events: list[ExternalEvent]


def read_events(path: str | Path, name: str, forward_unknown: bool, nb_machines: int) -> EventList:
    """Read Batsim's events file ``path``.

    Args:
        path: the file (one JSON object per line).
        name: Batsim's name of the list (``we<i>`` for the i-th ``--events``).
        forward_unknown: ``--forward-unknown-events``: events of other types are generic events
            (else refused, as Batsim refuses them).
        nb_machines: the platform's machines (compute, then storage): a machine id must be below.

    Returns:
        The :class:`EventList`, sorted by (timestamp, kind), file order within.

    Raises:
        EventsError: the file cannot be read, a line is not a JSON object, a field is missing or
            of the wrong type, a timestamp out of [0, 2**33] s, a malformed interval set, a machine that does
            not exist (Batsim aborts when the event occurs), an unknown type without
            ``forward_unknown``. One line, naming the file and the line.
    """
    p = Path(path)
    regular_file(p, "events", EventsError)   # (a FIFO would block the read)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise EventsError(f"{p}: events file cannot be read ({exc.strerror or exc}); Batsim 4.2.1: "
                          f"\"Events file '{p}' cannot be read.\"") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EventsError(f"{p}: not UTF-8 text (byte {exc.start})") from None
    events: list[ExternalEvent] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line:
            continue
        where = f"{p}, line {lineno}"
        obj = loads_strict(line, where, EventsError, parse_float=batsim_float)
        if not isinstance(obj, dict):
            raise EventsError(f"{where}: an event must be a JSON object (Batsim 4.2.1: \"Invalid JSON event file "
                              f"{p}, an event could not be parsed.\")")
        events.append(_event(obj, where, forward_unknown, nb_machines))
    std_sort(events, _before)
    return EventList(name=name, path=str(p), events=events)


def _before(a: ExternalEvent, b: ExternalEvent) -> bool:
    """``event_comparator_timestamp_number`` (``src/events.cpp``): by timestamp, then type."""
    if a.timestamp == b.timestamp:
        return a.kind < b.kind
    return a.timestamp < b.timestamp


#: libstdc++'s ``_S_threshold``: parts at most this long are left to the final insertion sort.
_THRESHOLD = 16


def std_sort(v: list, less) -> None:
    """Sort ``v`` in place as GCC's ``std::sort`` (libstdc++, ``bits/stl_algo.h``) does with the
    comparator ``less``: introsort (median-of-three pivot moved to the front, unguarded Hoare
    partition, heapsort past ``2 * floor(log2 n)`` levels) down to parts of 16 elements, then one
    insertion sort. It is not stable: events of one timestamp and one type, Batsim's comparator
    calls equal, come out in the order this algorithm leaves them, which is not always the file's
    (recorded on Batsim 4.2.1 with files of more than 16 events: two ``machine_unavailable`` of
    one timestamp sent in the reverse of their file order). Up to 16 elements it is the insertion
    sort alone, which keeps the file order."""
    n = len(v)
    if n < 2:
        return
    _introsort(v, 0, n, 2 * (n.bit_length() - 1), less)
    if n > _THRESHOLD:
        _insertion_sort(v, 0, _THRESHOLD, less)
        for i in range(_THRESHOLD, n):
            _linear_insert(v, i, less)
    else:
        _insertion_sort(v, 0, n, less)


def _introsort(v: list, first: int, last: int, depth: int, less) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            _heapsort(v, first, last, less)
            return
        depth -= 1
        cut = _partition_pivot(v, first, last, less)
        _introsort(v, cut, last, depth, less)
        last = cut


def _partition_pivot(v: list, first: int, last: int, less) -> int:
    mid = first + (last - first) // 2
    a, b, c = first + 1, mid, last - 1   # the median of these three goes to ``first``
    if less(v[a], v[b]):
        m = b if less(v[b], v[c]) else (c if less(v[a], v[c]) else a)
    elif less(v[a], v[c]):
        m = a
    elif less(v[b], v[c]):
        m = c
    else:
        m = b
    v[first], v[m] = v[m], v[first]
    pivot = v[first]
    lo, hi = first + 1, last
    while True:
        while less(v[lo], pivot):
            lo += 1
        hi -= 1
        while less(pivot, v[hi]):
            hi -= 1
        if not lo < hi:
            return lo
        v[lo], v[hi] = v[hi], v[lo]
        lo += 1


def _insertion_sort(v: list, first: int, last: int, less) -> None:
    for i in range(first + 1, last):
        val = v[i]
        if less(val, v[first]):
            v[first + 1:i + 1] = v[first:i]
            v[first] = val
        else:
            _linear_insert(v, i, less)


def _linear_insert(v: list, i: int, less) -> None:
    val = v[i]
    j = i - 1
    while less(val, v[j]):
        v[i] = v[j]
        i = j
        j -= 1
    v[i] = val


def _heapsort(v: list, first: int, last: int, less) -> None:
    """``std::__partial_sort(first, last, last)``: ``make_heap`` then ``sort_heap``."""
    n = last - first
    if n >= 2:
        parent = (n - 2) // 2
        while True:
            _adjust_heap(v, first, parent, n, v[first + parent], less)
            if parent == 0:
                break
            parent -= 1
    while last - first > 1:
        last -= 1
        val = v[last]
        v[last] = v[first]
        _adjust_heap(v, first, 0, last - first, val, less)


def _adjust_heap(v: list, first: int, hole: int, n: int, val, less) -> None:
    top = hole
    child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if less(v[first + child], v[first + child - 1]):
            child -= 1
        v[first + hole] = v[first + child]
        hole = child
    if n & 1 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        v[first + hole] = v[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(v[first + parent], val):
        v[first + hole] = v[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    v[first + hole] = val


def _event(obj: dict, where: str, forward_unknown: bool, nb_machines: int) -> ExternalEvent:
    typ = obj.get("type")
    if "type" not in obj:
        raise EventsError(f"{where}: the event has no 'type' field")
    if not isinstance(typ, str):
        raise EventsError(f"{where}: 'type' must be a string, not {typ!r}")
    ts = obj.get("timestamp")
    if "timestamp" not in obj:
        raise EventsError(f"{where}: the event has no 'timestamp' field")
    if isinstance(ts, bool) or not isinstance(ts, (int, float)):
        raise EventsError(f"{where}: 'timestamp' must be a number, not {ts!r}")
    ts = float(ts)
    if not math.isfinite(ts) or not 0 <= ts <= MAX_TIME:
        raise EventsError(f"{where}: 'timestamp' {obj['timestamp']!r} must be a finite number >= 0 and <= "
                          f"{MAX_TIME:.0f} s (2**33, as every time of a workload)")
    kind = _KINDS.get(typ, GENERIC)
    if kind == GENERIC:
        if not forward_unknown:
            raise EventsError(f"{where}: unknown event type {typ!r} (Batsim 4.2.1: \"Unknown event type: {typ}\"); "
                              "only machine_unavailable and machine_available, or any type with "
                              "--forward-unknown-events")
        return ExternalEvent(ts, kind, typ, None, obj, where)
    res = obj.get("resources")
    if "resources" not in obj:
        raise EventsError(f"{where}: a {typ} event needs a 'resources' field (machine ids, e.g. \"0-4 6\")")
    if not isinstance(res, str):
        raise EventsError(f"{where}: 'resources' must be a string of machine ids (e.g. \"0-4 6\"), not {res!r}")
    machines = interval_set(res, where)
    if machines and machines.max >= nb_machines:
        raise EventsError(f"{where}: machine {machines.max} does not exist (the platform has {nb_machines} "
                          f"machines, ids 0-{nb_machines - 1}; Batsim 4.2.1 aborts when the event occurs: "
                          f"\"Cannot get machine {machines.max}: it does not exist\")")
    return ExternalEvent(ts, kind, typ, machines, {}, where)


def interval_set(text: str, where: str, field: str = "resources") -> ProcSet:
    """Batsim's ``IntervalSet::from_string_hyphen(text, " ", "-")``: ``"0-4 6 8"``, parts
    separated by one space. An empty text or part (``""``, ``"0  2"``) is refused as Batsim
    refuses it (recorded on Batsim 4.2.1: ``"resources": ""`` aborts the run with "Invalid JSON
    message: stoi" when the event is read). ``field`` names the text in errors.

    Raises:
        EventsError: one line starting with ``where``."""
    ids = ProcSet()
    for part in text.split(" "):
        lo, sep, hi = part.partition("-")
        try:
            if not lo.isdigit() or (sep and not hi.isdigit()):
                raise ValueError(part)
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise EventsError(f"{where}: '{field}' {text!r} is not an interval set of machine ids "
                              f"(e.g. \"0-4 6 8\", one space between parts): bad part {part!r} (Batsim 4.2.1 "
                              "aborts: \"Invalid JSON message: stoi\")") from None
        if a < 0 or b < a:
            raise EventsError(f"{where}: '{field}' {text!r}: bad interval {part!r} (ids >= 0, low-high)")
        ids |= ProcSet((a, b))
    return ids
