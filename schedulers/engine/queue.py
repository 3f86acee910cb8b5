"""The engine's event queue: one heap of ``(time, sequence, kind, payload)``.

Every simulated actor of Batsim that wakes up at some time (a job submitter, a job's execution,
a machine switch, a CALL_ME_LATER waiter, a killer, the scheduler's reply being played) is one
entry. Ties at one instant are broken by ``sequence``: the order in which the timers were armed,
which is the order in which SimGrid wakes the actors up and so the order in which their messages
reach Batsim's server (observed on every recorded transcript of ``shared/batsim-4.2.1``).

Times are rounded to 1e-9 s (:func:`at`) so that one instant reached along different floating
point paths (``t + d1 + d2`` and ``t + (d1 + d2)``) is one instant. This queue now serves only
compute-only platforms whose master host sits in a ``routing="Full"`` zone the route reader does
not know (``read_platform``); elsewhere the clock is SimGrid's, step by step, to the last bit of
a double (:mod:`.steps` with a network, :mod:`.lazysteps` without), and :class:`Kind` names the
timers of all three.
"""

from __future__ import annotations

import enum
import heapq
from typing import Any

__all__ = ["Kind", "EventQueue", "at"]


class Kind(enum.IntEnum):
    """What wakes up; each kind is one of Batsim's internal messages to its server
    (``src/ipp.hpp`` of Batsim 4.2.1 names them)."""

    SUBMIT = 0      #: a job submitter submits the jobs of one instant (JOB_SUBMITTED)
    JOB_END = 1     #: a job's current profile stage ends, or its walltime is reached
    SWITCH = 2      #: one machine finished switching on or off (SWITCHED_ON / SWITCHED_OFF)
    WAITER = 3      #: a CALL_ME_LATER waiter fires (WAITING_DONE)
    KILL = 4        #: a killer actor is done (KILLING_DONE)
    BYE = 5         #: a job submitter has submitted all its jobs (SUBMITTER_BYE)
    DECISION = 6    #: a delayed decision reaches the server at its timestamp (scheduler reply)
    READY = 7       #: the scheduler's reply is fully played: it is ready again (SCHED_READY)
    RECV = 8        #: networked platforms: a message's transfer to the server ends (:mod:`.netserver`)
    LATENCY = 9     #: a parallel task's communications paid their latency: it starts progressing
    MSG_ACTIVE = 10  #: networked platforms: a message paid its latency; its byte shares the links (:mod:`.netserver`)
    EVENT = 11      #: an external event submitter wakes: the events due now (EVENT_OCCURRED, :mod:`.extevents`)
    STEP = 12       #: grouped servers: a message step of 0 s, nothing for the server (:mod:`.grouping`)


def at(t: float) -> float:
    """An event time (s) rounded to 1e-9 s; ``inf`` stays ``inf`` (``round`` keeps it)."""
    return round(t, 9)


class EventQueue:
    """A heap of timed entries; ties in time are popped in push order."""

    __slots__ = ("_heap", "_seq")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, int, Any]] = []
        self._seq = 0

    def push(self, t: float, kind: Kind, payload: Any = None) -> None:
        """Arm a timer: ``kind`` with ``payload`` happens at ``t`` (s, already rounded)."""
        self._seq += 1
        heapq.heappush(self._heap, (t, self._seq, kind, payload))

    def __bool__(self) -> bool:
        return bool(self._heap)

    def __len__(self) -> int:
        return len(self._heap)

    def next_time(self) -> float:
        """Time of the earliest entry (the queue must not be empty)."""
        return self._heap[0][0]

    def pop_instant(self) -> tuple[float, list[tuple[int, Any]]]:
        """Remove and return every entry of the earliest instant, in arming order:
        ``(time, [(kind, payload), ...])``."""
        heap = self._heap
        t = heap[0][0]
        out = []
        while heap and heap[0][0] == t:
            _, _, kind, payload = heapq.heappop(heap)
            out.append((kind, payload))
        return t, out
