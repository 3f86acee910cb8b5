"""SimGrid's step clock for compute-only platforms, at the cost of a heap.

On a compute-only platform (Batsim's ``no_net`` examples: a Vivaldi zone, hosts without links)
Batsim's messages take no time, but its clock is still SimGrid's: one *step* at a time
(:mod:`.steps` gives SimGrid 3.32's rules, ``EngineImpl::solve`` and
``HostL07Model::update_actions_state``): a step lasts the smallest ``max_duration`` (a sleep) or
``remains / rate`` (a computation) of the pending actions, the clock becomes ``now + delta``, and
every action loses ``delta`` (a sleep) or ``rate x delta`` (a computation); those left under
``precision/timing`` = 1e-9 s (a sleep) or 1e-5 x 1e-9 (a computation) end in the step. The
clock is thus a double built step by step, not the sum a job's start and duration give: recorded
on Batsim 4.2.1 (``energy_platform_homogeneous_no_net_128.xml``, the 250-job ``hpc`` example with
``-E``), a job started at 1919.30704 s for 172.94 s ends at 2092.2470399999997 s, Batsim's
request-reply actor sleeps the 4.5e-13 s to the reply's printed ``now`` (2092.24704) before the
next job starts, and that job's energy row has an ``epower`` of 8192 W (one ulp of energy over
one ulp of time).

:class:`.steps.StepQueue` plays those rules on every action at every step, as SimGrid's full
update does. Here actions are sleeps, computations at a constant rate (a rate change re-arms
the job's action) and messages over empty routes (a step of 0 s, :meth:`LazyStepQueue.message`),
so the same values are kept lazily: every step's ``delta`` is recorded, and
an action holds its value at the step it was last brought up to date; the subtractions SimGrid
made since are replayed, in the same order and the same double arithmetic, only when the action
may end in the next step. A heap keeps the actions by an estimate of the clock at which they
cross their threshold; the estimate strays from the exact crossing by rounding alone (at most a
few units in the last place per step since the action's last update, and no action goes more
than :data:`_KEEP` steps without one: :meth:`LazyStepQueue._compact`), so every action whose
estimate lies within that error of the next step's end is brought up to date before the step
is played. The steps are the same as :class:`.steps.StepQueue`'s, bit for bit
(``tests/test_lazy_steps.py`` plays random action sets through both), at O(log n) a step.
"""

from __future__ import annotations

import heapq
import math
from heapq import heappop, heappush
from typing import Any

from .queue import Kind
from .steps import PRECISION_TIMING, PRECISION_WORK

__all__ = ["LazyStepQueue"]

_INF = math.inf
#: Steps an action may go without being brought up to date (:meth:`LazyStepQueue._compact`).
_KEEP = 1 << 14
#: Bound on the relative rounding error of an estimate: 3 roundings a step (the clock, the
#: value, a computation's product), each at most 2**-53, over at most 2 x _KEEP steps.
_TOL = 2 * _KEEP * 3 * 2.0 ** -53


# A pending action is one heap entry, a list ``[est, seq, rate, value, step, kind, payload,
# versioned]``: ``est`` the estimated clock at which it crosses its threshold (the heap key), ``seq``
# its creation number (ties), ``rate`` 0 for a sleep (``value`` s left) or a computation's rate
# (``value`` work left at ``rate`` work/s), ``value`` after step number ``step``; ``versioned``: a
# JOB_END or LATENCY timer, stale once its job moved on (``payload`` = (job, version, ...)).
_JOB_END, _LATENCY = Kind.JOB_END, Kind.LATENCY

#: ``sum`` of floats adds them one by one in doubles (CPython 3.11; 3.12 compensates its sums):
#: a replay can then run in C (:meth:`LazyStepQueue._sync`), negated, since IEEE rounding to
#: nearest is symmetric: ``(-v) + d`` is exactly ``-(v - d)``.
_SEQUENTIAL_SUM = sum([1.0, 1e100, 1.0, -1e100]) == 0.0


#: The step number of an action that ended: never replayed again.
_ENDED = 1 << 62


def _by_seq(e: list) -> int:
    return e[1]


def _zero_live(z: tuple) -> bool:
    """Whether an action of no duration ``(seq, kind, payload, versioned)`` is not stale."""
    return not z[3] or z[2][1] == z[2][0].version


def _stale(e: list) -> bool:
    if e[7]:
        p = e[6]
        return p[1] != p[0].version
    return False


class LazyStepQueue:
    """SimGrid's step clock over sleeps and constant-rate computations (module docstring).

    The arming and reading interface of :class:`.steps.StepQueue` (``sleep``, ``work``,
    ``push``, ``pop_instant``, ``next_time``, ``bool``, ``len``); timers are armed by duration
    from :attr:`now` (s), as Batsim's actors sleep."""

    __slots__ = ("now", "_heap", "_zero", "_deltas", "_base", "_seq")

    def __init__(self) -> None:
        self.now = 0.0
        self._heap: list[list] = []   # the pending actions (module comment above _JOB_END)
        # actions of no duration (messages over empty routes, sleeps of 0 s): (seq, kind,
        # payload, versioned); they end in the next step, of 0 s, with no heap (see pop_instant)
        self._zero: list[tuple] = []
        self._deltas: list[float] = []   # the steps' deltas (s), from step number _base on
        self._base = 0
        self._seq = 0

    # ------------------------------------------------------------------------------- arming
    def sleep(self, d: float, kind: Kind, payload: Any = None) -> None:
        """An actor sleeps ``d`` s (``this_actor::sleep_for``; ``wait_for``'s timeout)."""
        if d == _INF:
            return
        seq = self._seq = self._seq + 1
        if d <= 0.0:
            self._zero.append((seq, kind, payload, kind is _JOB_END or kind is _LATENCY))
            return
        heappush(self._heap, [self.now + (d - PRECISION_TIMING), seq, 0.0, d, self._base + len(self._deltas),
                              kind, payload, kind is _JOB_END or kind is _LATENCY])

    def work(self, remains: float, rate: float, kind: Kind, payload: Any = None, replace: list | None = None) -> list:
        """A computation with ``remains`` work left at ``rate`` work/s (``rate`` > 0); returns
        its action, whose work left :meth:`remains` reads. ``replace``: the computation's
        action armed before a change of rate (:meth:`.steps.StepQueue.work`); still on the clock,
        the new one takes its creation number (the old one is stale by its version)."""
        if replace is not None and replace[4] != _ENDED and replace[2]:
            seq = replace[1]
        else:
            seq = self._seq = self._seq + 1
        e = [self.now + (remains - PRECISION_WORK) / rate, seq, rate, remains, self._base + len(self._deltas),
             kind, payload, kind is _JOB_END or kind is _LATENCY]
        heappush(self._heap, e)
        return e

    def remains(self, e: list) -> float:
        """The work left of a computation armed by :meth:`work`, as SimGrid's action holds it
        after the last step (``rate x delta`` taken off step by step; 0 once it ended)."""
        self._sync(e)
        return e[3]

    def message(self, lat: float, rate: float, kind: Kind, payload: Any = None, links=()) -> None:
        """A 1-byte message over an empty route (``lat`` 0, ``rate`` inf: a compute-only
        platform's host to the master host): done in the next step, which lasts 0 s
        (:meth:`.steps.StepQueue.message`)."""
        if lat != 0.0 or rate != _INF or links:
            raise ValueError("a message with a latency or a finite rate needs the full step clock (.steps)")
        seq = self._seq = self._seq + 1   # (sleep(0.0, kind, payload), inlined: one per message)
        self._zero.append((seq, kind, payload, kind is _JOB_END or kind is _LATENCY))

    def push(self, t: float, kind: Kind, payload: Any = None) -> None:
        """A timer at absolute time ``t`` (s): a sleep of ``t - now``."""
        self.sleep(t - self.now, kind, payload)

    # ------------------------------------------------------------------------------ reading
    def __bool__(self) -> bool:
        if any(map(_zero_live, self._zero)):
            return True
        heap = self._heap
        while heap:
            if not _stale(heap[0]):
                return True
            heappop(heap)[4] = _ENDED
        return False

    def __len__(self) -> int:
        return (sum(1 for e in self._heap if not _stale(e))
                + sum(map(_zero_live, self._zero)))

    def _sync(self, e: list) -> float:
        """Replay on action ``e`` the steps since its last update; return the time it needs to
        end (s)."""
        deltas = self._deltas
        k = e[4] - self._base
        v = e[3]
        rate = e[2]
        if k < len(deltas):
            if k < 0:   # its deltas were forgotten (_compact): it left the clock before
                raise RuntimeError("lazysteps: the work left of an action no longer on the clock was read")
            if _SEQUENTIAL_SUM:   # -(((v - d1) - d2) ...) = ((-v + d1) + d2) ..., in C
                v = -sum(map(rate.__mul__, deltas[k:]) if rate else deltas[k:], -v)
            elif rate:
                for d in deltas[k:]:
                    v -= rate * d
            else:
                for d in deltas[k:]:
                    v -= d
            e[3] = v
            e[4] = self._base + len(deltas)
        if rate:
            return v / rate if v > 0 else 0.0
        return v

    def _gather(self) -> tuple[list, float]:
        """Pop every live action that may end in the next step, up to date; return them and the
        step's length (s). Stale actions met on the way are dropped (SimGrid cancels them)."""
        heap, now = self._heap, self.now
        cands = []
        best = _INF
        while heap:
            e = heap[0]
            est = e[0]
            if est - now > best and est - now - best > _TOL * (abs(est) + abs(now) + 1.0):
                break
            heappop(heap)
            if e[7]:
                p = e[6]
                if p[1] != p[0].version:
                    e[4] = _ENDED
                    continue
            c = self._sync(e)
            if c < best:
                best = c
            cands.append(e)
        return cands, best

    def next_time(self) -> float:
        """The clock after the next step (the queue must not be empty)."""
        if any(map(_zero_live, self._zero)):
            return self.now
        cands, best = self._gather()
        for e in cands:
            heappush(self._heap, e)
        return self.now + best

    def pop_instant(self) -> tuple[float, list[tuple[int, Any]]]:
        """Play one step: ``(clock, [(kind, payload), ...])`` of the actions it ended, in
        creation order (the queue must not be empty).

        A step of 0 s (an action of no duration is pending) changes no action's value
        (``v - 0.0`` and ``v - rate x 0.0`` are ``v``): it is not recorded in the deltas, and
        when no action of the heap can end in it (none is within rounding of its threshold) its
        actions are those of no duration alone, taken without the heap."""
        if self._zero:
            live: list | None = self._live_zero()
            heap = self._heap
            if live and heap:
                est, now = heap[0][0], self.now
                if not est - now > _TOL * (abs(est) + abs(now) + 1.0):
                    # an action of the heap may end in this step too: one step, in creation order
                    step = self._base + len(self._deltas)
                    for seq, kind, payload, versioned in live:
                        heappush(heap, [now - PRECISION_TIMING, seq, 0.0, 0.0, step, kind, payload, versioned])
                    live = None
            if live:
                return self.now, [(z[1], z[2]) for z in live]
        cands, delta = self._gather()
        self.now = now = self.now + delta
        deltas = self._deltas
        if delta != 0.0:
            deltas.append(delta)
        step = self._base + len(deltas)
        heap = self._heap
        out = []
        if len(cands) > 1:
            cands.sort(key=_by_seq)
        for e in cands:
            rate = e[2]
            if rate:
                v = e[3] - rate * delta
                if v < PRECISION_WORK:
                    e[3], e[4] = 0.0, _ENDED   # (double_update: below the precision, 0)
                    out.append((e[5], e[6]))
                    continue
                e[0] = now + (v - PRECISION_WORK) / rate
            else:
                v = e[3] - delta
                if v < PRECISION_TIMING:
                    e[4] = _ENDED
                    out.append((e[5], e[6]))
                    continue
                e[0] = now + (v - PRECISION_TIMING)
            e[3] = v
            e[4] = step
            heappush(heap, e)
        if len(deltas) > _KEEP:
            self._compact()
        return now, out

    def pop_lone(self) -> tuple | None:
        """The common step of Batsim's actor model, at less cost: when the next step is of 0 s
        and ends one action alone, of no duration and not versioned (a message), with no action
        of the heap within rounding of it, play it and return its ``(seq, kind, payload,
        False)``, the clock unchanged; otherwise None, nothing played (:meth:`pop_instant`
        plays that step, with the same result)."""
        zero = self._zero
        if len(zero) != 1:
            return None
        z = zero[0]
        if z[3]:
            return None
        heap = self._heap
        if heap:
            est, now = heap[0][0], self.now
            if not est - now > _TOL * (abs(est) + abs(now) + 1.0):
                return None
        self._zero = []
        return z

    def zero_pending(self) -> bool:
        """Whether actions of no duration wait in their lane (stale ones included): a step of
        0 s may still come at the current time."""
        return bool(self._zero)

    def pop_alone(self, payload: Any) -> float | None:
        """Play the next step if it ends one action alone, the one of ``payload``, with no action
        of no duration pending, and return the clock after it (s); else None, nothing played
        (:meth:`pop_instant` plays that step). :mod:`.instants` plays an actor's sleep so."""
        if self._zero:
            return None
        cands, best = self._gather()
        ends = None
        n = 0
        for e in cands:
            rate = e[2]
            if (e[3] - rate * best < PRECISION_WORK) if rate else (e[3] - best < PRECISION_TIMING):
                ends = e
                n += 1
        heap = self._heap
        for e in cands:
            heappush(heap, e)
        if n != 1 or ends is None or ends[6] is not payload:
            return None
        return self.pop_instant()[0]   # (the same step, through the one way steps are played)

    def _live_zero(self) -> list:
        """Take the actions of no duration out of their lane; return those not stale."""
        zero = self._zero
        if not zero:
            return zero
        self._zero = []
        return list(filter(_zero_live, zero))

    def _compact(self) -> None:
        """Bring up to date the actions not updated for :data:`_KEEP` / 2 steps, drop the stale
        ones and forget the deltas no action needs any more."""
        base = self._base
        cut = base + len(self._deltas) - _KEEP // 2
        live = []
        for e in self._heap:
            if _stale(e):
                e[4] = _ENDED
                continue
            if e[4] < cut:
                self._sync(e)   # (its key stays: an estimate all the same)
            live.append(e)
        heapq.heapify(live)
        self._heap = live
        first = min((e[4] for e in live), default=base + len(self._deltas))
        del self._deltas[:first - base]
        self._base = first
