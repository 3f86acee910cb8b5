"""Quiet instants: an instant of Batsim's actor model that nothing else acts in, played in one call.

With ``-E`` on a compute-only platform (a Vivaldi zone without links) the engine plays Batsim's
actors message by message (:mod:`.netserver` over the lazy step clock :mod:`.lazysteps`, every
message a step of 0 s): a job's end with energy reads its hosts, then every host, before its
JOB_COMPLETED (``execute_job_process``, Batsim 4.2.1 ``src/jobs_execution.cpp``), and where
several actors act at one instant those reads decide the order of their messages (see the
module docstring of :mod:`.simulator`). That order is all the sub-rounds decide: SimGrid 3.32
(``EngineImpl::run``) runs the actors of an instant sub-round by sub-round, and a message is in
the server's mailbox only once the sub-round of its ``put`` is over (:mod:`.netserver`,
"Sub-rounds", "The mailbox").

Where one actor alone acts at an instant, nothing competes with it: each message it posts is
matched by the server blocked in ``receive`` (the mailbox empty), handled, and what the handler
starts (the request-reply actor's next decision, a job actor's start) is again alone. The
instant is then one chain -- a job's end (its rows), its JOB_COMPLETED at the server, the
exchange with the scheduler, each decision as the server receives it (a job actor started a
sub-round later, before the next decision arrives), SCHED_READY -- and the sub-rounds change
nothing but the counts of simcalls between its links. :class:`QuietInstants` plays such an instant
as that chain of calls, with the same handlers as :mod:`.netserver` (``_stage_ended``,
``_job_completed``, ``_apply``, ``_exchange``), the same step boundaries (the lazy energy
charges settled and the hosts updated at the step forgotten at each message,
:meth:`.hosts.Machines.settle_lazy`), and no message, sub-round or 0 s step of the clock.

An instant is *quiet* when, its step popped from the clock, it holds one wake-up alone:

* a job's stage end (not a walltime timer of a computing stage: that task stays held,
  :class:`.execution.HeldTask`), a static submitter's wake-up that is not its first energy read
  nor its last (its goodbye is a second message), or a waiter's (CALL_ME_LATER);
* with the server blocked in ``receive``, the scheduler ready, no message in flight or in the
  mailbox, no machine switching, no killer, no held task;
* and every sleep a job's start or a submitter arms in the chain lasts at least SimGrid's
  ``precision/timing`` (1e-9 s), so that no action of the clock ends in the instant's later
  steps of 0 s (an action left after a step of ``delta`` > 0 is above its threshold, and a step
  of 0 s takes nothing off it).

The scheduler's reply is known only once exchanged: when it holds a decision other than
EXECUTE_JOB (of a job whose first stage arms no sleep under 1e-9 s), CALL_ME_LATER, REJECT_JOB or
QUERY (its ANSWER sent once SCHED_READY is received, in a second exchange), the rest of the
instant is handed to the actor model at that point (the request-reply actor created, the server
receiving), as :meth:`.netserver.ActorServer._send` leaves it; so is the end of the
simulation. A decision dated after the clock, or a reply's ``now`` after it (a scheduler's
``now`` is Batsim's printed time, often a few 1e-13 s after SimGrid's clock), makes the
request-reply actor sleep to it (``JsonProtocolReader::send_message_at_time``): where that sleep
ends alone in its step (:meth:`.lazysteps.LazyStepQueue.pop_alone`) the chain goes on at the
new time, else the actor model takes the run from there, the actor asleep.

Used only where energy made the engine play the actor model on a compute-only platform, with no
dynamic jobs, no external events and no compute sharing (the other reasons to play it).
``GRIDSCHED_FORCE_ACTOR_MODEL=1`` in the environment (:data:`FORCE_ACTOR_MODEL`) plays every
instant message by message; ``tests/test_instants.py`` compares both paths' outputs and
messages byte for byte.
"""

from __future__ import annotations

import os
from collections import deque
from typing import TYPE_CHECKING, Any

from ..core.events import CallMeLater, ExecuteJob, JobSubmitted, Query, RejectJob, RequestedCall
from ..core.model import Job
from .execution import RUNNING, SUBMITTED
from .jobtable import due_end
from .lazysteps import LazyStepQueue
from .platform import PlatformSpec
from .ptasks import HeldTask, WallTimer
from .queue import Kind
from .steps import PRECISION_TIMING

if TYPE_CHECKING:
    from .netserver import ActorServer

__all__ = ["FORCE_ACTOR_MODEL", "QuietInstants", "wanted"]

#: ``GRIDSCHED_FORCE_ACTOR_MODEL=1``: no quiet instant, every instant message by message.
FORCE_ACTOR_MODEL = os.environ.get("GRIDSCHED_FORCE_ACTOR_MODEL", "") not in ("", "0")

_JOB_END, _SUBMIT, _WAITER, _DECISION = Kind.JOB_END, Kind.SUBMIT, Kind.WAITER, Kind.DECISION
_COMPUTING = ("parallel_homogeneous", "parallel_homogeneous_total", "parallel")


def wanted(platform: PlatformSpec, timers: Any, *, energy: bool, dynamic_jobs: bool, events: bool,
           sharing: bool) -> bool:
    """Whether an engine playing the actor model on ``platform`` with the step clock ``timers``
    plays its quiet instants in one call: energy alone chose the actor model (a compute-only
    platform on the lazy step clock, no dynamic jobs, no external events, no compute sharing)
    and :data:`FORCE_ACTOR_MODEL` is not set (module docstring)."""
    return not (FORCE_ACTOR_MODEL or not energy or dynamic_jobs or events or sharing
                or not isinstance(timers, LazyStepQueue) or platform.routes is not None
                or platform.master_loopback)


def _first_sleep_ok(job: Any) -> bool:
    """Whether starting ``job`` (its first stage) arms no sleep under ``precision/timing``: a
    ``delay`` stage sleeps its delay, or its walltime when not longer (``do_delay_task``); a
    computing stage's ``wait_for`` sleeps the walltime (its task, of positive work at a finite
    rate, cannot end in a step of 0 s; a stage without flops ends in the next step of 0 s, a few
    sub-rounds after it starts: not quiet). Other profile types: not known quiet."""
    prof = job.stages[0][1]
    t = prof.get("type")
    wall = float(job.walltime) if job.walltime > 0 else -1.0
    if t == "delay":
        d = float(prof["delay"])
        if wall >= 0 and not d < wall:
            d = wall
        return d >= PRECISION_TIMING
    if t in _COMPUTING:
        cpu = prof.get("cpu", 0)
        if not any(float(x) > 0 for x in (cpu if isinstance(cpu, list) else (cpu,))):
            return False
        return wall < 0 or wall >= PRECISION_TIMING
    return False


class QuietInstants:
    """Plays the quiet instants of an engine's actor model in one call (module docstring).

    Args:
        actors: the :class:`.netserver.ActorServer` playing the actor model (its mailbox and
            handlers), with the components it holds: its :class:`.server.Server`,
            :class:`.subrounds.Rounds`, :class:`.execution.Executions`,
            :class:`.ptasks.ParallelTasks`, :class:`.hosts.Machines`, :class:`.jobs.JobBook` and
            its step clock (a :class:`.lazysteps.LazyStepQueue`).
    """

    __slots__ = ("e", "server", "rounds", "timers")

    def __init__(self, actors: ActorServer) -> None:
        self.e = actors
        self.server = actors.server
        self.rounds = actors.rounds
        self.timers: LazyStepQueue = actors.timers

    # ------------------------------------------------------------------------------ entry
    def play(self, entry: tuple, port: Any) -> bool:
        """Play the instant whose step ended the one action ``entry`` (``(kind, payload)``, the
        clock already at the instant): True when played (to its end, or handed to the actor
        model's sub-rounds still to run), False when it is not quiet (nothing done)."""
        e, server, rounds = self.e, self.server, self.rounds
        if not (e._waiting and server.ready and not e._closing and not e._mailbox and not e._in_flight
                and not rounds.later and not rounds.outbox and not rounds.walks and not e.switches.switching
                and not e.ptasks.nheld and not server.killers and not self.timers.zero_pending()):
            return False
        kind, payload = entry
        if kind is _JOB_END:
            return self._job_end(payload, port)
        if kind is _SUBMIT:
            return self._submitter(payload, port)
        if kind is _WAITER:
            self._step()
            server.waiters -= 1
            server.buffer.append(RequestedCall(e.clock.now))
            self._server_test(port)
            return True
        return False

    def _job_end(self, payload: tuple, port: Any) -> bool:
        """A job's stage ends (:meth:`.netserver.ActorServer._net_event`, ``JOB_END``)."""
        job = payload[0]
        if type(job) is WallTimer or isinstance(job, HeldTask):
            return False
        version, walltime = payload[1], payload[2]
        if version != job.version or job.state != RUNNING:
            return False   # stale: the actor model drops it
        if walltime and job.flops:
            return False   # its task is held until the JOB_COMPLETED is received
        e = self.e
        if not e.executions.stage_ended(job, version, walltime):
            return True    # the next stage started: nothing posted
        # its energy reads (sub-rounds only), then JOB_COMPLETED from its first host, received
        first = min(job.hosts)
        self._step()
        e.machines.updated((first,))
        self.server.job_completed(job)
        self._server_test(port)
        return True

    def _submitter(self, s: Any, port: Any) -> bool:
        """A static job submitter wakes (:meth:`.netserver.ActorServer._submit_step`):
        its JOB_SUBMITTED, then its sleep to the next subtime."""
        e = self.e
        now = e.clock.now
        table = s.w.jobs
        subtimes = table.subtimes
        n = len(subtimes)
        k0 = s.k
        k = due_end(subtimes, k0, now, True)   # (the job it slept for, then every next one due)
        if k == n or k == k0 or e.record.first_submission[0] < 0:
            return False   # its goodbye follows, or its first energy read
        nxt = subtimes[k]
        if not nxt - now >= PRECISION_TIMING:
            return False
        s.clock = now
        s.k = k
        # the server receives the JOB_SUBMITTED (ActorServer._server_handle, _SUBMITTED); the
        # jobs are the engine's from the submitter's wake-up (made here: nothing between reads them)
        self._step()
        jobs = e.jobs
        job_of = table.job
        buf = self.server.buffer
        by_name = e.book.by_name
        fwd = e.forward_profiles
        of_fields = Job.of_fields   # (the job's fields, checked when read: as .server submits them)
        for i in range(k0, k):
            j = job_of(i)
            jobs[j.id] = j
            j.state = SUBMITTED
            prof = by_name[j.workload].profiles[j.profile] if fwd else None
            buf.append(JobSubmitted(now, job=of_fields(j.id, j.workload, j.subtime, j.walltime, j.res, j.profile,
                                                       j.raw, prof)))
        # the submitter's transfer is over: it sleeps to its next subtime
        self.timers.sleep(nxt - s.clock, _SUBMIT, s)
        self._server_test(port)
        return True

    # ------------------------------------------------------------------------- the chain
    def _step(self) -> None:
        """A message of the chain is received: a new step of 0 s (the previous one's hosts
        updated forgotten, the lazy energy charges settled, as the actor model's loop does)."""
        self._settle()
        c = self.e.clock
        c.live = c.now   # (Clock.mark_live, inlined: once a message)

    def _settle(self) -> None:
        """The end of a step: the hosts updated at it forgotten, the lazy energy charges settled."""
        m = self.e.machines
        if m.upd_now:
            m.upd_now.clear()
        if m.lazy_hosts:
            m.settle_lazy()

    def _server_test(self, port: Any) -> None:
        """The server, the scheduler ready and the mailbox empty
        (:meth:`.netserver.ActorServer._server_test`): send the events gathered and play
        the reply while it is quiet; the end of the simulation goes to the actor model."""
        e, server, after = self.e, self.server, self.rounds.after
        while server.buffer:
            ready_at, decisions = server.reply_parts(server.exchange(port))
            server.ready = False
            if not self._quiet_reply(decisions):
                # hand over: the request-reply actor and the server's receive, as _send leaves them
                e._waiting = False
                after(1, lambda: e._reqrep(deque(decisions), ready_at))
                after(1, e._receive)
                return
            if not self._reply(decisions, ready_at):
                return   # handed over: the request-reply actor sleeps, the server receives
            server.ready = True
        if server.finished() and not e.jobs:
            e._waiting = False
            e._server_test(port)   # SIMULATION_ENDS: the actor model ends the run

    def _reply(self, decisions: list, ready_at: float) -> bool:
        """The request-reply actor posts each decision at its time, then SCHED_READY at the
        reply's ``now`` (:meth:`.netserver.ActorServer._reqrep`), each received by the
        server alone; a job actor a decision creates starts a sub-round after the server handled
        it, before the next message. True once SCHED_READY is received; False when a sleep of the
        actor (to a time after the clock) does not end alone in its step: it is left to the actor
        model, asleep, the server receiving."""
        e, rounds, server = self.e, self.rounds, self.server
        n = len(decisions)
        i = 0
        woke = False
        while True:
            ts = decisions[i].timestamp if i < n else None
            if ts is None:
                ts = ready_at
            now = e.clock.now
            slept = not woke and ts > now
            if slept:   # (sleep_for; armed before the job actor's start, as the actors run)
                payload = (deque(decisions[i:]), ready_at, True)
                self.timers.sleep(ts - now, _DECISION, payload)
            later = rounds.later
            while later:   # a job actor created by the last decision: it starts a sub-round later
                rounds.round = r = min(later)
                for fn in later.pop(r):
                    fn()
                rounds.round = 1
            if slept:
                if not self._wake(payload):
                    return False
                woke = True
                continue
            woke = False
            self._step()   # the decision, or SCHED_READY, received
            if i == n:
                return True
            server.apply(decisions[i])   # (no KILL_JOB here: _quiet_reply)
            i += 1

    def _wake(self, payload: tuple) -> bool:
        """The request-reply actor's sleep ``payload`` ends alone in the next step: play that
        step (the clock moves, as :meth:`.server.Server.next_instant` moves it); else
        False, nothing played."""
        self._settle()   # (the end of the step: settled before the clock moves)
        t = self.timers.pop_alone(payload)
        if t is None:
            return False
        c = self.e.clock
        c.now = c.live = t
        return True

    def _quiet_reply(self, decisions: list) -> bool:
        """Whether a reply's decisions keep the instant quiet (module docstring)."""
        jobs = self.e.jobs
        for d in decisions:
            t = type(d)
            if t is ExecuteJob:
                job = jobs.get(d.job_id)
                if job is None or job.state != SUBMITTED or d.extra or not _first_sleep_ok(job):
                    return False
            elif t is not CallMeLater and t is not RejectJob and t is not Query:
                return False
        return True
