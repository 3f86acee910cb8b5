"""Batsim's side of the protocol: its server's mailbox, message grouping, decisions.

Part of :class:`schedulers.engine.simulator.Engine` (a mixin over the engine's job and message
state; the hosts are the :class:`.hosts.Machines` component, ``self.machines``, the time the
:class:`.clock.Clock`, ``self.clock``).

Message grouping (``server_process`` in Batsim 4.2.1 ``src/server.cpp``)
    The server handles its internal messages one at a time; after each it sends the events
    gathered so far to the scheduler when the scheduler is ready, the server's mailbox is empty
    and there is something to send. Messages of actors woken in one step of SimGrid's clock
    (:mod:`.lazysteps`) reach the mailbox together, in the order their actions were created, so
    they go out in one message; a submitter's "bye" (NOTIFY ``no_more_static_job_to_submit``) joins them only when
    other messages were still being handled; simultaneous ends of separate switches are handled
    one mailbox round each. This reproduces every grouping of the recorded transcripts.
Decision delays (``JsonProtocolReader::parse_and_apply_message``, ``src/protocol.cpp``)
    A reply's decisions reach the server at their ``timestamp`` (at once when it is not later
    than the clock), in order; the scheduler is ready again at the reply's ``now``. Meanwhile the
    simulation goes on and events are gathered, then sent together.
Dynamic jobs and profile garbage collection
    :class:`.dynamic.DynamicJobs` (REGISTER_PROFILE, REGISTER_JOB, NOTIFY
    ``registration_finished``).
Kills and zero-work jobs on compute-only platforms (no links: messages take 0 s, or 1e-10 s on
    a Full-routing zone's loopback)
    The request-reply actor posts a reply's decisions to the server one message at a time, and
    the actors the server creates run before the next one is received: the killer of a KILL_JOB
    ends its jobs (their rows, the hosts idle) before the reply's next decision is applied, its
    KILLING_DONE (JOB_COMPLETED, JOB_KILLED) is received after the reply's decisions, so those
    events follow the ones the later decisions made (RESOURCE_STATE_CHANGED, ANSWER), in the same
    message; a job whose first stage is a computation of zero flops and zero bytes ends before
    the next decision too. Recorded on real Batsim 4.2.1 (tests/test_engine_fidelity.py: KILL_JOB then
    SET_RESOURCE_STATE, KILL_JOB then QUERY, two EXECUTE_JOB of which the first has no work, on
    Full-routing and Vivaldi platforms). On platforms with links the messages' transfers order
    them (:mod:`.netserver`).
Energy in ``out_schedule.csv``
    ``consumed_joules`` is the platform's energy at the last job end minus its energy when the
    first job was submitted (``export.cpp`` ``JobsTracer::finalize``, ``job_submitter.cpp``);
    each defaults to -1 when it never happened.
Livelock
    A scheduler that keeps the simulation at one instant — e.g. a CALL_ME_LATER whose
    ``t + timeout`` rounds back to ``t`` — would spin forever; after
    :data:`LIVELOCK_EXCHANGES` messages at one instant with no job, host or timer changing the
    engine stops with an :class:`EngineError` naming the scheduler and the time.
"""

from __future__ import annotations

import math
import time as _time
from collections import deque
from typing import Any

from procset import ProcSet

from ..core.events import (
    Answer, CallMeLater, Decision, ExecuteJob, GenericDecision, JobCompleted, JobKilled, JobSubmitted,
    KillJobs, Notify, NotifyBatsim, Query, RegisterJob, RegisterProfile, RejectJob, RequestedCall,
    SetResourceState, SimulationBegins, SimulationEnds,
)
from ..core.model import Host, HostState, Job
from ..inputs.errors import WorkloadError
from .execution import (
    COMPLETED_KILLED, REJECTED, RUNNING, SUBMITTED,
)
from .ports import Deadlock, EngineError, Reply, describe_scheduler
from .queue import Kind, at
from .steps import PRECISION_TIMING
from .results import DoneJob, EngineResult
from .jobtable import JobTable
from .workload import EngineJob, Workload, build_job, check_profile, job_name

#: Batsim's waiter sleeps at least this long (``waiter_process``, ``src/jobs_execution.cpp``), s.
WAITER_MIN_SLEEP = 1e-5

#: The event kinds as module constants (an enum attribute lookup costs about 0.1 us; they are
#: compared on every internal message)
_SUBMIT, _JOB_END, _SWITCH, _WAITER = Kind.SUBMIT, Kind.JOB_END, Kind.SWITCH, Kind.WAITER
_BYE, _DECISION, _READY, _LATENCY = Kind.BYE, Kind.DECISION, Kind.READY, Kind.LATENCY

#: Messages exchanged at one instant with nothing changing before the engine calls it a livelock.
LIVELOCK_EXCHANGES = 1000
#: How far (s) the clock may creep during those exchanges: the outputs' resolution (6 decimals).
LIVELOCK_SPAN = 1e-6


class ServerMixin:
    """Batsim's server: handles internal messages, talks to the scheduler, applies decisions."""

    # --------------------------------------------------------------------- internal messages
    def _handle(self, kind: int, payload: Any) -> list:
        """Handle one message reaching Batsim's server; return follow-up messages."""
        t = self.clock.now
        if kind == _SUBMIT:
            # the static submitter's jobs of one subtime: made into EngineJobs now (JobTable.job)
            # (static_job_submitter_process, src/job_submitter.cpp): woken, the submitter takes
            # the job it slept for, even where SimGrid's clock stops short of its subtime, then
            # every job whose subtime is not after the clock; then it sleeps
            # ``next subtime - clock``. (The 1e-9-s clock: the jobs of the same subtime.)
            w, k = payload
            table, subtimes = w.jobs, w.jobs.subtimes
            n = len(subtimes)
            steps = self._steps
            sub = subtimes[k]
            if self.energy and self.record.first_submission[0] < 0:
                self.record.first_submission = self.machines.total_exact()
            woke = True
            while k < n and (woke or (subtimes[k] <= t if steps else subtimes[k] == sub)):
                woke = False
                j = table.job(k)
                j.state = SUBMITTED
                self.jobs[j.id] = j
                prof = w.profiles[j.profile] if self.forward_profiles else None
                self._buffer.append(JobSubmitted(t, job=Job.of_fields(j.id, j.workload, j.subtime, j.walltime, j.res,
                                                                      j.profile, j.raw, prof)))
                k += 1
            if k < n:
                # a sleep shorter than SimGrid's precision (1e-9 s: the clock stopped an ulp short
                # of a subtime shared by the next job) ends in the next step even of 0 s, and the
                # server's exchange with the scheduler about the jobs just submitted makes 0-s
                # message steps: the next job is submitted at the same clock (recorded on Batsim
                # 4.2.1: "sleep_for() is smaller than the SimGrid numerical accuracy (3.55271e-15
                # < 1e-09)", then the job submitted at 22.87037036699999604, before its subtime)
                if (steps and subtimes[k] - t < PRECISION_TIMING) or \
                        not self._sleep_until(subtimes[k], _SUBMIT, (w, k)):
                    self._queue.push(t, _SUBMIT, (w, k))
                return []
            return [(_BYE, w)]
        if kind == _BYE:
            self._submitters_left -= 1
            if self._submitters_left == 0:
                self._buffer.append(Notify(t, type="no_more_static_job_to_submit"))
            return []
        if kind == _JOB_END:
            end = self._job_end_of(payload)
            if end is not None and self._stage_ended(*end):
                self._job_completed(end[0])
            return []
        if kind == _SWITCH:
            self.switches.on_switched(*payload)
            return []
        if kind == _WAITER:
            self._waiters -= 1
            self._buffer.append(RequestedCall(t))
            return []
        if kind == _DECISION:
            self._play_decisions(*payload)
            return []
        if kind == _READY:
            self._ready = True
            return []
        if kind == _LATENCY:  # a model event, no message to the server
            self._latency_paid(*payload)
            return []
        raise AssertionError(kind)

    def _kill_running(self, really: list[EngineJob]) -> dict[str, Any]:
        """Batsim's ``killer_process``: end the jobs of ``really`` still running; return their
        ``job_progress`` entries by job id."""
        progress = {}
        for job in really:
            if job.state != RUNNING:
                continue
            progress[job.id] = self._job_progress(job)
            # Batsim's killer cancels a running parallel task (return code -2); a job in a delay
            # has none, its actor is killed and the code keeps its default -1 (jobs_execution.cpp)
            code = -1 if job.stages[job.stage][1]["type"] == "delay" else -2
            self._end_job(job, COMPLETED_KILLED, code)
        return progress

    def _killing_done(self, ids: list[str], progress: dict[str, Any]) -> None:
        """``server_on_killing_done``: JOB_COMPLETED for each job really killed, then JOB_KILLED.

        Raises:
            EngineError: a job Batsim deleted since the kill (its end was sent meanwhile): real
                Batsim 4.2.1 aborts (``Jobs::at``)."""
        t = self.clock.now
        for jid in ids:
            if jid not in self.jobs and jid not in self._unsent_ends:
                raise EngineError(f"KILL_JOB of job {jid!r}: the job's end was sent to the scheduler before its killer "
                                  f"reported at t={t!r}: real Batsim 4.2.1 has deleted it and aborts (\"Cannot get job "
                                  f"'{jid}': it does not exist\")")
        for jid in progress:
            job = self.jobs[jid]
            self._job_completed(job)
        self._buffer.append(JobKilled(t, job_ids=list(ids), job_progress=progress))

    def _job_completed(self, job: EngineJob) -> None:
        """``server_on_job_completed``: the JOB_COMPLETED event and the job's ``out_jobs.csv`` row."""
        self._buffer.append(JobCompleted(self.clock.now, job_id=job.id, job_state=job.state,
                                         return_code=job.return_code, alloc=job.alloc))
        self._write_job_row(job)
        self.dynamic.ended(job)

    def _write_job_row(self, job: EngineJob) -> None:
        """The job's end reached the server (completed, killed, rejected): its ``out_jobs.csv``
        row is written, and the engine forgets the :class:`EngineJob` (its execution state and
        JSON object): what is left of it is its row in ``done`` (recorded when it ended)."""
        self.book.forget(job)
        self._unsent_ends.add(job.id)
        if self.trace:
            self.rows["jobs"].append(job.row)

    # ----------------------------------------------------------------------------- decisions
    def _play_reply(self, reply: list[Decision] | Reply) -> None:
        """Play a scheduler's reply received at ``now``: decisions due now are applied at once,
        later ones when the clock reaches them; the scheduler is busy until the reply's ``now``."""
        ready_at, decisions = self._reply_parts(reply)
        if decisions:
            self._play_decisions(deque(decisions), ready_at)
        else:   # (no decision: the scheduler is ready again at the reply's now)
            if self._kills_done:
                self._killings_reported()
            self._ready = not self._sleep_until(ready_at, _READY)

    def _reply_parts(self, reply: list[Decision] | Reply) -> tuple[float, list[Decision]]:
        """A reply's ``now`` (s) and decisions, checked as Batsim checks them."""
        if isinstance(reply, Reply):
            ready_at, decisions = reply.now, reply.decisions
            for d in decisions:
                if d.timestamp is not None and d.timestamp > ready_at:
                    raise EngineError(f"{describe_scheduler(self._port)}: decision {type(d).__name__} has "
                                      f"timestamp {d.timestamp} later than its reply's now={ready_at} "
                                      "(Batsim aborts: timestamps must be <= now)")
        else:
            ready_at, decisions = self.clock.now, reply
        return ready_at, decisions

    def _play_decisions(self, decisions: deque, ready_at: float, woke: bool = False) -> None:
        """Batsim's request-reply actor: send each decision at its timestamp, then SCHED_READY
        at the reply's ``now`` (``JsonProtocolReader::send_message_at_time``: ``sleep_for(when -
        clock)`` when ``when`` is later than the clock, then the message). ``woke``: such a sleep
        is over; its message goes even where SimGrid's clock stops short of ``when``."""
        while decisions:
            ts = decisions[0].timestamp
            if ts is None:   # dated by the reply's now (a plain list: the message's)
                ts = ready_at
            if not woke and self._sleep_until(ts, _DECISION, (decisions, ready_at, True)):
                self._ready = False
                self._killings_reported()
                return
            woke = False
            self._apply(decisions.popleft())
        if self._kills_done:
            self._killings_reported()
        self._ready = woke or not self._sleep_until(ready_at, _READY)

    def _sleep_until(self, t: float, kind: int, payload: Any = None) -> bool:
        """An actor that must act at ``t`` (s) sleeps until then if ``t`` is after the clock
        (``sleep_for(t - clock)``, on SimGrid's step clock; else an event at ``t`` rounded to
        1e-9 s, :func:`.queue.at`); returns whether it sleeps."""
        now = self.clock.now
        if self._steps:
            if not t > now:
                return False
            self._queue.sleep(t - now, kind, payload)
        else:
            if not at(t) > now:
                return False
            self._queue.push(at(t), kind, payload)
        return True

    def _killings_reported(self) -> None:
        """Compute-only platforms: the KILLING_DONE messages of the killers this reply started
        reach the server after the reply's decisions (see "Kills and zero-work jobs" above)."""
        if self._kills_done:
            done, self._kills_done = self._kills_done, []
            for ids, progress in done:
                self._killing_done(ids, progress)

    def _apply(self, d: Decision) -> None:
        if isinstance(d, ExecuteJob):
            self._execute(d)
        elif isinstance(d, RejectJob):
            job = self._job(d.job_id, "REJECT_JOB")
            if job.state != SUBMITTED:
                raise EngineError(f"REJECT_JOB {job.id} at t={self.clock.now}: the job is {job.state}, not waiting")
            job.state = REJECTED
            job.finish = self.clock.now
            self._finished_jobs += 1
            self.book.ended(job)
            self._write_job_row(job)
            self.dynamic.ended(job)
        elif isinstance(d, KillJobs):
            ids, really = self._kill_request(d.job_ids)
            if not ids:   # every job's kill was asked before: no killer, no JOB_KILLED
                return
            if self.platform.message_delays is None:  # see "Kills and zero-work jobs" above
                self._kills_done.append((ids, self._kill_running(really)))
            else:  # the killer actor runs in the network's sub-rounds (netserver.py)
                self._killers += 1
                self._killer(ids, really)
        elif isinstance(d, CallMeLater):
            if not math.isfinite(d.at):
                raise EngineError(f"CALL_ME_LATER at t={self.clock.now}: time {d.at!r} is not a finite number")
            if not d.at > self.clock.now:
                # server_on_call_me_later (src/server.cpp) asserts target_time > clock
                raise EngineError(f"CALL_ME_LATER at t={self.clock.now}: it asks to be called at {d.at!r}, not after the "
                                  "current time (Batsim 4.2.1 aborts: 'You asked to be awaken in the past!')")
            self._waiters += 1
            if self._steps:  # waiter_process: sleeps the time left, at least 1e-5 s
                self._queue.sleep(max(d.at - self.clock.now, WAITER_MIN_SLEEP), _WAITER)
            else:
                self._queue.push(max(at(d.at), self.clock.now), _WAITER)
        elif isinstance(d, SetResourceState):
            self.switches.set_resource_state(d, None if self.platform.message_delays is None else self._after)
        elif isinstance(d, Query):
            for key in d.requests:
                if key != "consumed_energy":
                    raise EngineError(f"QUERY {key!r} is not supported by the embedded engine "
                                      "(only consumed_energy)")
                if not self.energy:
                    raise EngineError("QUERY consumed_energy needs the energy model (-E / --energy)")
                self._buffer.append(Answer(self.clock.now, data={"consumed_energy": self.machines.total_energy()}))
        elif isinstance(d, RegisterProfile):
            self.dynamic.register_profile(d.workload, d.name, d.profile)
        elif isinstance(d, RegisterJob):
            self.dynamic.register_job(d.job_id, d.job)
        elif isinstance(d, NotifyBatsim):
            if d.type == "registration_finished":
                self.dynamic.registration_finished = True
            elif d.type == "continue_registration":
                self.dynamic.registration_finished = False
            else:
                raise EngineError(f"NOTIFY {d.type!r} from the scheduler: unknown type (Batsim aborts)")
        elif isinstance(d, GenericDecision):
            raise EngineError(f"decision {d.type!r} is not supported by the embedded engine; "
                              "use real Batsim (--engine batsim)")
        else:
            raise EngineError(f"unsupported decision {d!r}")

    def _kill_request(self, job_ids) -> tuple[list[str], list[EngineJob]]:
        """KILL_JOB ``job_ids`` as Batsim 4.2.1's server takes it (``server_on_kill_jobs``,
        ``src/server.cpp``): the jobs whose kill was not asked before, in order (one killer, one
        JOB_KILLED for them; a job named twice counts once), and those of them running now.

        A job may be killed while it runs, or once it has ended as long as Batsim still holds
        it: until a message to the scheduler has been sent after its end reached the server
        (``jobs_to_be_deleted``, deleted after ``generate_and_send_message``) -- ended at this
        instant, or its JOB_COMPLETED still crossing the network; the kill then kills nothing but
        JOB_KILLED still lists it. Recorded on real Batsim 4.2.1 (``tests/fixtures/batsim_kill``).

        Raises:
            EngineError: where Batsim 4.2.1 aborts (its words quoted): a job no workload has; a
                job waiting or not submitted yet; a job deleted after its end was sent; a
                rejected job still held (its killer aborts).
        """
        ids, really = [], []
        for jid in job_ids:
            job = self.jobs.get(jid)
            where = f"KILL_JOB at t={self.clock.now!r}: job {jid!r}"
            if job is None:
                job = self.book.known(jid)
                if job is None and jid.partition("!")[0] not in self.workloads_by_name:
                    raise EngineError(f"{where}: there is no workload {jid.partition('!')[0]!r}; real Batsim 4.2.1 "
                                      "aborts (an uncaught std::out_of_range: map::at)")
                if job is None:
                    raise EngineError(f"{where} does not exist; real Batsim 4.2.1 aborts (\"Trying to kill job "
                                      f"'{jid}' but it does not exist.\")")
                if isinstance(job, DoneJob) and jid not in self._unsent_ends:
                    raise EngineError(f"{where} ended at t={job.finish!r} and the message telling it has been sent: "
                                      f"real Batsim 4.2.1 has deleted it and aborts (\"Cannot get job '{jid}': it does "
                                      "not exist\"); kill a job only while it runs")
            if job.state != RUNNING and not job.state.startswith(("COMPLETED", "REJECTED")):
                waiting = job.state == SUBMITTED
                raise EngineError(f"{where} is {'waiting' if waiting else 'not submitted yet'}: real Batsim 4.2.1 aborts "
                                  f"(\"Invalid KILL_JOB: job_id '{jid}' refers to a job not being executed nor "
                                  "completed.\")" + ("; reject a waiting job instead (REJECT_JOB)" if waiting else ""))
            if jid in self._kill_requested:
                continue
            if job.state == REJECTED:
                raise EngineError(f"{where} was rejected: real Batsim 4.2.1's killer aborts (\"Bad kill: job {jid} "
                                  "has not been started\")")
            self._kill_requested.add(jid)
            ids.append(jid)
            if job.state == RUNNING:
                really.append(job)
        return ids, really

    def _job(self, jid: str, what: str) -> EngineJob | DoneJob:
        """The job ``jid`` a decision names: running or waiting (the engine's own), or else
        :meth:`.jobs.JobBook.known`.

        Raises:
            EngineError: no such job.
        """
        job = self.jobs.get(jid)
        if job is None:
            job = self.book.known(jid)
            if job is None:
                raise EngineError(f"{what} at t={self.clock.now}: unknown job {jid!r}")
        return job

    # --------------------------------------------------------------------------- the scheduler
    def _finished(self) -> bool:
        return (self._submitters_left == 0 and self._event_submitters_left == 0 and self._running == 0
                and self.switches.switching == 0 and self._waiters == 0 and self._killers == 0 and self._finished_jobs == self.nb_jobs
                and (not self.dynamic_jobs or self.dynamic.registration_finished))

    def _exchange(self, port) -> list[Decision] | Reply:
        events, self._buffer = self._buffer, []
        if self._unsent_ends:   # Batsim deletes the jobs whose end is now sent (jobs_to_be_deleted)
            if self._kill_requested:
                self._kill_requested -= self._unsent_ends
            self._unsent_ends = set()
        self.dynamic.collect()
        self.record.messages += 1
        self._check_livelock(port)
        t0 = _time.perf_counter()
        reply = port.exchange(self.clock.now, events)
        self.record.sched_time += _time.perf_counter() - t0
        return reply

    def _check_livelock(self, port) -> None:
        """Stop a run whose clock no longer moves: :data:`LIVELOCK_EXCHANGES` exchanges within
        :data:`LIVELOCK_SPAN` s (the outputs' resolution) with no job, host or timer changing.
        Within a span, not at one instant: where Batsim's messages cross a loopback or a network
        (:mod:`.netserver`) every round trip moves the clock by their delays (1e-10 s on a Full
        zone), so a scheduler that keeps the simulation at one printed instant creeps forward
        instead of repeating one time."""
        start = self._same_instant[0]
        if not 0.0 <= self.clock.now - start < LIVELOCK_SPAN:  # the usual case: the first exchange of an instant
            self._same_instant = [self.clock.now, None, 0]
            return
        sig = (self._finished_jobs, self._running, self.nb_jobs, self.switches.nb_grouped_switches, self.switches.switching,
               self._killers, len(self._queue))
        if sig != self._same_instant[1]:  # (None at the second exchange of an instant)
            self._same_instant = [self.clock.now, sig, 0]
            return
        self._same_instant[2] += 1
        if self._same_instant[2] >= LIVELOCK_EXCHANGES:
            raise EngineError(
                f"livelock at t={round(start, 6)}: {describe_scheduler(port)} exchanged {LIVELOCK_EXCHANGES} messages "
                "at this instant with no job, host or timer changing (for instance a CALL_ME_LATER whose time "
                "t + timeout rounds back to t); the simulation would never advance")

    def _send_loop(self, port, pending: list) -> None:
        """Batsim's server check after a message: send while ready and there is something to send."""
        while True:
            if not self._ready:
                self._flush(pending)
                return
            if self._buffer:
                reply = self._exchange(port)
                self._flush(pending)  # messages posted before the reply's decisions reach the server first
                self._play_reply(reply)
                continue
            if pending:
                self._flush(pending)
                continue
            if self._finished() and not self._ended:
                self._buffer.append(SimulationEnds(self.clock.now))
                ready_at, _ = self._reply_parts(self._exchange(port))
                self._ended = True
                # the request-reply actor sleeps until the reply's now, then its SCHED_READY
                # (of no duration here) ends the server's loop: SimGrid's final clock
                if ready_at > self.clock.now:
                    self.clock.end = self.clock.now + (ready_at - self.clock.now)
            return

    def _flush(self, pending: list) -> None:
        for kind, payload in pending:
            self._handle(kind, payload)
        pending.clear()

    def _process_instant(self, entries: list, port) -> None:
        """Deliver the messages of one instant to the server's mailbox, in arming order."""
        if len(entries) == 1:  # the common case: one message reaches the server alone
            kind, payload = entries[0]
            self._send_loop(port, self._handle(kind, payload))
            return
        mailbox: deque = deque()
        deferred_switches: deque = deque()
        switch_seen = False
        for kind, payload in entries:
            if kind == _SWITCH:
                if switch_seen:
                    deferred_switches.append((kind, payload))
                    continue
                switch_seen = True
            mailbox.append((kind, payload))
        while mailbox:
            kind, payload = mailbox.popleft()
            follow = self._handle(kind, payload)
            nxt_switch = [deferred_switches.popleft()] if (kind == _SWITCH and deferred_switches) else []
            if mailbox:
                mailbox.extend(follow)
                mailbox.extend(nxt_switch)
                continue
            self._send_loop(port, follow)
            mailbox.extend(nxt_switch)

    def _deadlock(self) -> Deadlock:
        """The error for a run whose event queue is empty before the simulation could end: jobs
        submitted but never executed or rejected, jobs running with nothing left to end them,
        or a missing NOTIFY registration_finished."""
        # the engine's jobs in workload order (static jobs by workload, then submission order;
        # registered jobs after them, in registration order)
        live = self.book.in_load_order()
        waiting = [j.id for j in live if j.state == SUBMITTED]
        running = [j for j in live if j.state == RUNNING]
        problems = []
        if waiting:
            problems.append(f"the scheduler never executed or rejected {len(waiting)} submitted job(s) "
                            f"(e.g. {', '.join(waiting[:10])})")
        if running:
            def where(j: EngineJob) -> str:
                hosts = [self.hosts[hid] for hid in j.hosts[:4]]
                return (f"{j.id} on " + ", ".join(f"{h.spec.name} ({h.spec.speeds[h.pstate]:g} flops/s)"
                                                  for h in hosts) + (", ..." if len(j.hosts) > 4 else ""))
            problems.append(f"{len(running)} running job(s) never end: their computation makes no progress "
                            f"(a host at speed 0, or more flops than a double can time) and they have no "
                            f"walltime (e.g. {'; '.join(where(j) for j in running[:3])})")
        if not problems:
            problems.append("the simulation cannot end")
        msg = f"deadlock at t={self.clock.now}: nothing left to simulate but " + "; ".join(problems)
        # (asleep: switched off, or declared at a sleep pstate, where Batsim counts the machine idle)
        asleep = sum(1 for h in self.hosts if h.state is HostState.SLEEPING or h.pstate_kind(h.pstate) == "sleep")
        if asleep and waiting:
            msg += f"; {asleep} of {len(self.hosts)} hosts are asleep and the policy never woke them"
        if self.dynamic_jobs and not self.dynamic.registration_finished:
            msg += ("; dynamic jobs are enabled and the scheduler never sent NOTIFY registration_finished "
                    "(Batsim waits for it before ending)")
        return Deadlock(msg)

    def run(self, port) -> EngineResult:
        """Run the simulation to its end.

        Raises:
            Deadlock: nothing left to simulate before the end (jobs left waiting with nothing
                scheduled, jobs that never end); its ``result`` is the run up to then, whose
                output files real Batsim 4.2.1 writes too (:class:`Deadlock`).
            EngineError: invalid decision, livelock (the scheduler keeps the clock at one instant).
        """
        wall0 = _time.perf_counter()
        try:
            self._run(port)
        except Deadlock as dead:
            dead.result = self._result(_time.perf_counter() - wall0)
            raise
        return self._result(_time.perf_counter() - wall0)

    def _run(self, port) -> None:
        self._port = port
        if self.trace:
            by_ps: dict[int, list[int]] = {}
            for i, h in enumerate(self.hosts):
                by_ps.setdefault(h.pstate, []).append(i)
            for ps in sorted(by_ps):
                self.rows["pstates"].append((0.0, str(ProcSet(*by_ps[ps])), ps))
        if self.platform.message_delays is not None:
            self._run_network(port)
            return
        # SIMULATION_BEGINS goes first, alone; the submitters start while it is in flight.
        self._buffer.append(self._simulation_begins())
        reply = self._exchange(port)
        for w in self.workloads:
            self._submitters_left += 1
            if len(w.jobs):
                if not self._sleep_until(w.jobs.subtimes[0], _SUBMIT, (w, 0)):
                    self._queue.push(0.0, _SUBMIT, (w, 0))
            else:  # an empty workload: its submitter says goodbye at once
                self._queue.push(0.0, _BYE, w)
        # The time-0 submissions reach the server before the scheduler's SCHED_READY. Where
        # the master host's messages to itself are instantaneous (Vivaldi zones, Batsim's no_net
        # examples) a submitter's bye arrives with them and joins their message; where they
        # cross SimGrid's loopback link (Full-routing zones, 1e-10 s a message) the bye comes
        # after SCHED_READY and goes in the next message (real Batsim 4.2.1 on both kinds). Full
        # zones reach this step clock only when the route reader does not know their routing
        # (read_platform); otherwise their messages are timed (.netserver).
        pending = []
        while self._queue and self._queue.next_time() == 0.0:
            _, entries = self._queue.pop_instant()
            for kind, payload in entries:
                pending.extend(self._handle(kind, payload))
        if not self.platform.master_loopback:
            self._flush(pending)
        self._play_reply(reply)
        self._send_loop(port, pending)
        nb_jobs = self.nb_jobs
        while not self._ended:
            self._process_instant(self._next_instant(), port)
            if self.progress is not None:
                self.progress(self.clock.now, self._finished_jobs, nb_jobs)

    def _next_instant(self) -> list:
        """End the current instant (its lazy energy charges, :meth:`.hosts.Machines.settle_lazy`), move the
        clock to the next one and return its queue entries; a run with nothing left to
        simulate before its end is a deadlock (:meth:`_deadlock`)."""
        if not self._queue:
            # what is left was stale timers (a stage end or latency re-armed since): SimGrid's
            # clock stopped at the last instant at which something happened
            self.clock.now = self.clock.live
            raise self._deadlock()
        if self.machines.lazy_hosts:
            self.machines.settle_lazy()
        self.clock.now, entries = self._queue.pop_instant()
        for kind, _ in entries:
            if kind != _JOB_END and kind != _LATENCY:  # those two may be stale
                self.clock.mark_live()
                break
        return entries

    def _simulation_begins(self) -> SimulationBegins:
        hosts = []
        for i, h in enumerate(self.hosts):
            st = HostState.SLEEPING if h.state is HostState.SLEEPING else HostState.IDLE
            hosts.append(Host(id=i, name=h.spec.name, speeds=list(h.spec.speeds), cores=h.spec.cores,
                              properties=dict(h.spec.properties), zone_properties=dict(h.spec.zone_properties),
                              pstate=h.pstate, state=st))
        config = {
            "redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379,
            "redis-prefix": "default", "profiles-forwarded-on-submission": self.forward_profiles,
            "dynamic-jobs-enabled": self.dynamic_jobs, "dynamic-jobs-acknowledged": self.acknowledge_dynamic_jobs,
            "profile-reuse-enabled": self.profile_reuse, "sched-config": "", "forward-unknown-events": False,
        }
        config.update(self.batsim_config)
        # storage hosts (role "storage"): ids after the compute hosts, as Batsim numbers them
        # (Machines::create_machines); the engine runs no job on them
        storage = [Host(id=len(hosts) + i, name=h.name, speeds=list(h.speeds), cores=h.cores,
                        properties=dict(h.properties), zone_properties=dict(h.zone_properties),
                        pstate=h.pstate, state=HostState.IDLE) for i, h in enumerate(self.platform.storage)]
        return SimulationBegins(
            0.0, nb_resources=len(hosts) + len(storage), nb_compute_resources=len(hosts),
            nb_storage_resources=len(storage), allow_compute_sharing=self.sharing,
            allow_storage_sharing=self.storage_sharing, config=config,
            compute_resources=hosts, storage_resources=storage,
            workloads={w.name: w.path for w in self.workloads},
            profiles={w.name: ({n: p for n, p in w.profiles.items() if n not in w.unreferenced} if w.unreferenced
                               else w.profiles) for w in self.workloads})
