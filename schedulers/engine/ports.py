"""How the engine talks to a scheduler, and the engine's error type.

A :class:`SchedulerPort` gets the events of one Batsim message and returns the scheduler's
decisions, either as a plain list (the scheduler answered at once: its ``now`` is the message's)
or as a :class:`Reply` carrying the reply's ``now``. A reply whose ``now`` is later than the
message's is a *decision delay* (pybatsim's schedulers consume simulated scheduling time this
way): Batsim 4.2.1 (``JsonProtocolReader::parse_and_apply_message``, ``src/protocol.cpp``)
plays each decision when the simulated clock reaches its ``timestamp`` (at once when the
timestamp is not in the future), then tells its server that the scheduler is ready again at the
reply's ``now``; until then the server keeps simulating and gathers events without sending them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple, Protocol

from ..core.events import CallMeLater, Decision, Event
from ..inputs.batsim_numbers import batsim_float_of

__all__ = ["EngineError", "Deadlock", "Reply", "SchedulerPort", "InProcessPort", "batsim_time", "describe_scheduler"]


class EngineError(RuntimeError):
    """The simulation cannot go on: invalid decision, deadlock, livelock, unsupported feature."""


class Deadlock(EngineError):
    """Nothing is left to simulate but the simulation has not ended (jobs submitted and never
    executed, jobs that never end, a missing NOTIFY ``registration_finished``).

    Real Batsim 4.2.1 is stopped by SimGrid's deadlock detection (``EngineImpl::run``, SimGrid
    3.32: "Oops! Deadlock detected"), sends no SIMULATION_ENDS, still writes its output files
    (``finalize_batsim_outputs``, ``src/export.cpp``, after ``engine.run()`` in
    ``src/batsim.cpp``) and exits 0. The engine stops the same way: ``result`` is the run up to
    the deadlock, whose files are those Batsim writes (only the jobs that ended, the clock at the
    deadlock).

    Attributes:
        result: the :class:`~schedulers.engine.results.EngineResult` up to the deadlock (set by
            :meth:`Engine.run`; None while the engine builds it).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.result: Any = None


class Reply(NamedTuple):
    """A scheduler's reply: its ``now`` (s) and its decisions (``timestamp`` None = the reply's
    ``now``)."""

    now: float
    decisions: list[Decision]


class SchedulerPort(Protocol):
    """How the engine talks to a scheduler: one call per Batsim message."""

    def exchange(self, now: float, events: list[Event]) -> list[Decision] | Reply:
        """Send the events of one message; return the decisions (or a :class:`Reply`)."""
        ...


def batsim_time(t: float) -> float:
    """A time (s) as a scheduler reads it in a Batsim message: Batsim prints every double with
    ``"%f"`` (the JSON writer of ``src/protocol.cpp``), so 6 decimals. ``round(t, 6)`` is the
    double nearest to ``"%.6f" % t`` (both round the exact value half-even), and cheaper."""
    return round(t, 6)


class InProcessPort:
    """Call a :class:`~schedulers.core.policy.Policy` directly (the fast path).

    The policy sees what it would read behind real Batsim: ``now`` and event timestamps printed
    with 6 decimals (:func:`batsim_time`), and its decisions are dated at that ``now``. When the
    printed ``now`` is later than the clock (a platform whose messages take 0.5000002 s, say),
    Batsim's request-reply actor sleeps until it before acting (``send_message_at_time``,
    ``src/protocol.cpp``), and so does the engine: the same policy gives the same run in-process
    and behind ``gridsched serve``.

    An exception of the policy's code (or its ``sys.exit()``) is raised as a
    :class:`~schedulers.core.failure.PolicyFailure` naming the policy, the callback and the line.
    A policy object the engine cannot run (a class, one whose ``__init__`` skipped the base
    class's) is refused at once (:func:`~schedulers.core.failure.check_runnable`), unless
    ``checked``: the caller checked it already (:func:`~schedulers.registry.get_policy` and
    :func:`~schedulers.engine.simulate` do), and it is checked once on each path."""

    def __init__(self, policy: Any, *, checked: bool = False) -> None:
        if not checked:
            from ..core.failure import check_runnable
            check_runnable(policy)   # (a class, an object whose __init__ skipped the base's)
        self.policy = policy

    def exchange(self, now: float, events: list[Event]) -> list[Decision] | Reply:
        try:
            shown = round(now, 6)   # (batsim_time, inlined: called for every message)
            if shown == now:
                for e in events:  # events of the message's instant are as printed once now is
                    t = e.timestamp
                    if t != now and round(t, 6) != t:
                        break
                else:
                    return as_batsim_reads(self.policy.decide(now, events))
            for e in events:  # the engine's events of this message: dated as printed, in place
                t = round(e.timestamp, 6)
                if t != e.timestamp:
                    e.timestamp = t
            decisions = as_batsim_reads(self.policy.decide(shown, events))
            if shown == now:
                return decisions
            return Reply(shown, decisions)   # (decisions without timestamp: at the reply's now)
        except (Exception, SystemExit) as exc:   # the policy's failure, located (no cost until raised)
            from ..core.failure import located
            failure = located(self.policy, exc)
            if failure is None:
                raise
            raise failure from exc

    def __str__(self) -> str:
        name = getattr(self.policy, "name", None)
        if not name or name == "policy":   # (the base class's: a policy of the user's own names none)
            name = type(self.policy).__name__
        return f"policy {name!r}"


def as_batsim_reads(decisions: list[Decision]) -> list[Decision]:
    """``decisions`` with their times as Batsim reads them once Python's ``json`` wrote them (a
    CALL_ME_LATER's time, an explicit ``timestamp``; :func:`~schedulers.inputs.batsim_numbers.
    batsim_float_of`): so that a policy run in-process sees the times it would see behind
    ``gridsched serve``. Times of at most 15 digits are unchanged."""
    if type(decisions) is not list:
        return decisions   # (refused with the policy's name by the engine: Server.reply_parts)
    out = decisions
    for k, d in enumerate(decisions):
        ts = getattr(d, "timestamp", None)   # (a reply holding no decision: refused by reply_parts)
        if ts is not None and (not isinstance(ts, (int, float)) or ts - ts != 0):
            continue   # (not a finite number: refused by reply_parts)
        if ts is not None and (read := batsim_float_of(ts)) != ts:
            d = replace(d, timestamp=read)
        if isinstance(d, CallMeLater) and (read := batsim_float_of(d.at)) != d.at:
            d = replace(d, at=read)
        if d is not decisions[k]:
            if out is decisions:
                out = list(decisions)
            out[k] = d
    return out


def describe_scheduler(port: Any) -> str:
    """A short name of the scheduler behind ``port`` for error messages."""
    text = str(port)
    if text.startswith("<"):  # the default object repr says nothing useful
        return f"scheduler {type(port).__name__}"
    return text
