"""SimGrid's own clock, for the platforms where Batsim's messages take time (a network, a loopback).

On a platform with links (:mod:`.netserver`) the order in which two things happen "at the same
time" decides which message reaches Batsim's server first, and SimGrid decides it at the last
bit of a ``double``: recorded on Batsim 4.2.1, ``cluster_energy_128.xml``, a 1-s delay job started
at t = 1.00240003199999972 ends at 2.00240003199999927 in one step, and the message that reaches
the server at what prints as the same time ends in the next step, 1e-16 s later; the job's
JOB_COMPLETED is then in the server's mailbox first. So the clock is SimGrid's, step by step,
as SimGrid 3.32 computes it for the ``ptask_L07`` host model that Batsim configures (on
compute-only platforms, where actions are only sleeps and computations at a constant rate, the
same steps are kept lazily, :mod:`.lazysteps`):

* every timer is an *action* with counters, kept in creation order (``Model::started_action_set``):
  a sleep (``CpuImpl::sleep``: a ``max_duration``), a 1-byte message (``L07Action``: a latency,
  then a ``remains`` of 1 at the rate the sharing system gives its byte, which the engine sets
  on ``Kind.MSG_ACTIVE``), a computation (``remains`` at a rate) or the
  latency of a parallel task;
* a step (``EngineImpl::solve``, ``HostL07Model::next_occurring_event``,
  ``Model::next_occurring_event_full``) lasts the smallest of: a latency still to pay, a
  ``remains / rate``, a ``max_duration``; the clock becomes ``now + delta``;
* then every action is updated in order (``HostL07Model::update_actions_state``): the latency
  loses ``delta`` (below ``precision/timing`` = 1e-9 s it is paid), ``remains`` loses
  ``rate x delta`` (below 1e-5 x 1e-9 it is 0: ``Action::update_remains``, with
  ``precision/work-amount``), ``max_duration`` loses ``delta`` (below 1e-9 s it is 0,
  ``Action::update_max_duration``); a message's rate counts only from the step after its
  latency is paid (the variable's penalty is set then, its value at the next solve);
* the actions that ended in the step (no ``remains`` left once their latency is paid, or no
  ``max_duration`` left) wake their actors in creation order: one entry of :meth:`pop_instant`.

A sleep within 1e-9 s of a step ends in it; a transfer or a computation ends only when its work
is done, so two ends that print alike may be two steps. Entries that the engine made stale (a
job's stage re-armed or ended: ``JOB_END``/``LATENCY`` whose version is behind) are dropped
before a step, as SimGrid cancels their actions.
"""

from __future__ import annotations

import math
from typing import Any

from .queue import Kind

__all__ = ["StepQueue", "PRECISION_TIMING", "PRECISION_WORK"]

#: SimGrid 3.32 ``precision/timing`` (``sg_surf_precision``), s.
PRECISION_TIMING = 1e-9
#: SimGrid 3.32 ``precision/work-amount`` (``sg_maxmin_precision``) x ``precision/timing``.
PRECISION_WORK = 1e-5 * 1e-9

_NONE = -1.0   # SimGrid's NO_MAX_DURATION
_INF = math.inf


_SLEEP, _MESSAGE, _WORK, _LATENCY = range(4)


class _Action:
    """One action: ``typ`` (sleep, message, work, latency), ``lat`` (s left, 0 when paid),
    ``remains`` (work left), ``rate`` (work/s once the latency is paid), ``maxdur`` (s left,
    -1 for none); ``versioned``: a ``JOB_END``/``LATENCY`` timer, stale once its job moved on."""

    __slots__ = ("typ", "lat", "remains", "rate", "maxdur", "kind", "payload", "versioned", "links", "alive")

    def __init__(self, typ, lat, remains, rate, maxdur, kind, payload, links=()) -> None:
        self.typ, self.lat, self.remains, self.rate, self.maxdur = typ, lat, remains, rate, maxdur
        self.kind, self.payload = kind, payload
        self.versioned = kind == Kind.JOB_END or kind == Kind.LATENCY
        self.links = links   # a message's route: [(link, 1.0)] (it shares them once its latency is paid)
        self.alive = True    # still on the clock (False once it ended or was dropped as stale)


def _live(a: _Action) -> bool:
    if a.versioned:
        p = a.payload
        return p[1] == p[0].version
    return True


class StepQueue:
    """The engine's timers as SimGrid actions on SimGrid's clock (module docstring).

    Same reading interface as :class:`.queue.EventQueue` (``pop_instant``, ``next_time``,
    ``bool``, ``len``); timers are armed by duration from the current clock :attr:`now` (s).
    Each step costs one pass over the pending actions, as SimGrid's full update does."""

    __slots__ = ("now", "_acts")

    def __init__(self) -> None:
        self.now = 0.0
        self._acts: list[_Action] = []

    # ------------------------------------------------------------------------------- arming
    def sleep(self, d: float, kind: Kind, payload: Any = None) -> None:
        """An actor sleeps ``d`` s (``this_actor::sleep_for``; ``wait_for``'s timeout)."""
        if d == _INF:
            return
        self._acts.append(_Action(_SLEEP, 0.0, 0.0, 0.0, max(d, 0.0), kind, payload))

    def message(self, lat: float, rate: float, kind: Kind, payload: Any = None, links=()) -> "_Action | None":
        """A 1-byte message over a route of latency ``lat`` (s) whose bottleneck passes ``rate``
        B/s (``inf``: an empty route, done at once). ``links``: the route's ``[(link, 1.0)]``;
        when given, the step that pays the latency also yields ``(Kind.MSG_ACTIVE, action)``,
        so that the engine puts the byte's flow in the sharing system and sets the action's
        ``rate`` (B/s) to what the system gives it. Returns the action (None for an empty route)."""
        if rate == _INF:   # no link: no byte to pass, done once its latency (Vivaldi) is paid
            if lat > 0:
                self.latency(lat, kind, payload)
            else:
                self.sleep(0.0, kind, payload)
            return None
        a = _Action(_MESSAGE, lat, 1.0, rate, _NONE, kind, payload, links)
        self._acts.append(a)
        return a

    def work(self, remains: float, rate: float, kind: Kind, payload: Any = None,
             replace: "_Action | None" = None) -> "_Action":
        """A computation with ``remains`` work left at ``rate`` work/s (``rate`` > 0); returns
        its action, whose work left :meth:`remains` reads. ``replace``: the computation's
        action armed before a change of rate; still on the clock, it is that action that goes
        on with the new values, in its place in the creation order (SimGrid changes the rate
        of the action, which stays where it is in ``started_action_set``: of the actions ending
        in one step, it wakes its actor before those created after it)."""
        if replace is not None and replace.alive and replace.typ == _WORK:
            replace.remains, replace.rate, replace.kind, replace.payload = remains, rate, kind, payload
            replace.versioned = kind == Kind.JOB_END or kind == Kind.LATENCY
            return replace
        a = _Action(_WORK, 0.0, remains, rate, _NONE, kind, payload)
        self._acts.append(a)
        return a

    @staticmethod
    def remains(action: "_Action") -> float:
        """The work left of a computation armed by :meth:`work`, as SimGrid's action holds it
        after the last step (``rate x delta`` taken off step by step; 0 once it ended)."""
        return action.remains

    def latency(self, lat: float, kind: Kind, payload: Any = None) -> None:
        """A parallel task's latency phase of ``lat`` s; fires when paid."""
        self._acts.append(_Action(_LATENCY, lat, 0.0, 0.0, _NONE, kind, payload))

    def hand_over(self, kind: Kind, payload: Any, new: Any) -> None:
        """The pending action ``kind`` armed with ``payload`` now stands for ``new`` (the same
        SimGrid action, its latency left unchanged): a job's task held at its walltime
        (:meth:`.ptasks.ParallelTasks.hold_task`)."""
        for a in self._acts:
            if a.kind == kind and a.payload == payload:
                a.payload = new
                return

    def push(self, t: float, kind: Kind, payload: Any = None) -> None:
        """A timer at absolute time ``t`` (s): a sleep of ``t - now``."""
        self.sleep(t - self.now, kind, payload)

    # ------------------------------------------------------------------------------ reading
    def __bool__(self) -> bool:
        return any(map(_live, self._acts))

    def __len__(self) -> int:
        return sum(map(_live, self._acts))

    def _delta(self) -> float:
        """Drop the stale actions; the next step's length (s), -1 if none."""
        delta = -1.0
        live = []
        for a in self._acts:
            if a.versioned:
                p = a.payload
                if p[1] != p[0].version:
                    a.alive = False
                    continue
            live.append(a)
            typ = a.typ
            if typ == _SLEEP:
                v = a.maxdur
            elif a.lat > 0:
                v = a.lat   # no rate before the latency is paid (penalty 0)
            elif typ == _LATENCY:
                continue
            else:
                r = a.remains
                v = r / a.rate if r > 0 else 0.0
            if delta < 0 or v < delta:
                delta = v
        self._acts = live
        return delta

    def next_time(self) -> float:
        """The clock after the next step (the queue must not be empty)."""
        return self.now + self._delta()

    def pop_instant(self) -> tuple[float, list[tuple[int, Any]]]:
        """Play one step: ``(clock, [(kind, payload), ...])`` of the actions it ended, in
        creation order (the queue must not be empty)."""
        delta = self._delta()
        self.now = now = self.now + delta
        out = []
        keep = []
        for a in self._acts:
            typ = a.typ
            if typ == _SLEEP:
                m = a.maxdur - delta
                if m < PRECISION_TIMING:
                    a.alive = False
                    out.append((a.kind, a.payload))
                else:
                    a.maxdur = m
                    keep.append(a)
                continue
            lat = a.lat
            if lat > 0:   # this step pays (some of) the latency; the rate counts from the next
                lat = lat - delta if lat > delta else 0.0
                a.lat = lat = 0.0 if lat < PRECISION_TIMING else lat
                if lat <= 0 and typ == _LATENCY:
                    a.alive = False
                    out.append((a.kind, a.payload))
                else:
                    if lat <= 0 and a.links:
                        out.append((Kind.MSG_ACTIVE, a))
                    keep.append(a)
                continue
            r = a.remains - a.rate * delta
            if r < PRECISION_WORK:
                a.remains = 0.0   # (double_update: below the precision, 0)
                a.alive = False
                out.append((a.kind, a.payload))
            else:
                a.remains = r
                keep.append(a)
        self._acts = keep
        return now, out
