"""Batsim's server: decisions, job ends, the exchange with the scheduler, livelock, deadlock.

A component of :class:`schedulers.engine.simulator.Engine`: :class:`Server` owns Batsim's server
state: the events gathered for the next message to the scheduler (``buffer``), whether the
scheduler is ready, whether the run has ended, the server's counters (waiters, killers,
submitters left), the kills asked and the job ends not yet sent. It applies the scheduler's
decisions, asking :class:`.execution.Executions` to start jobs, :class:`.switching.Switches` to
switch machines, :class:`.dynamic.DynamicJobs` to register jobs and profiles,
:class:`.hosts.Machines` for QUERY's energy, :class:`.jobs.JobBook` for the jobs, and, with
message delays, :class:`.subrounds.Rounds` for the sub-rounds of its actors. How messages reach
it is the business of the two servers that drive it: :mod:`.grouping` (:class:`.grouping.GroupedServer`,
the engine groups the messages of a step itself) and :mod:`.netserver`
(:class:`.netserver.ActorServer`, Batsim's actors message by message); each gives it the
decisions and kills the jobs a KILL_JOB names its own way.

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

import json
import math
import time as _time
from time import perf_counter as _perf_counter
from typing import Any, Callable

from procset import ProcSet

from ..core.events import (
    Answer, CallMeLater, Decision, ExecuteJob, GenericDecision, JobCompleted, JobKilled, KillJobs, NotifyBatsim,
    Query, RegisterJob, RegisterProfile, RejectJob, SetResourceState,
)
from ..core.model import HostState
from .clock import Clock, shown_time
from .dynamic import DynamicJobs
from .execution import REJECTED, RUNNING, SUBMITTED, Executions
from .hosts import Machines
from .jobs import JobBook
from .platform import PlatformSpec
from .ports import Deadlock, EngineError, Reply, SchedulerPort, describe_scheduler
from .queue import Kind, at
from .results import DoneJob, RunRecord
from .subrounds import Rounds
from .switching import Switches
from .workload import EngineJob

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


class Server:
    """Batsim's server (see the module docstring).

    Args:
        book, executions, switches, dynamic, machines, record, rounds, clock: the components
            it asks (see the module docstring).
        timers: the event queue.
        steps: whether ``timers`` is SimGrid's step clock.
        platform: the platform (message delays).
        buffer: the list the events for the next message are gathered in (the switches and
            dynamic jobs post there too).
        energy: Batsim's ``-E``.
        dynamic_jobs: Batsim's ``--enable-dynamic-jobs``.
        trace: keep the output rows (``out_jobs.csv``, ``out_pstate_changes.csv``).

    Attributes:
        buffer: the events for the next message to the scheduler.
        port: the scheduler's port (set by :meth:`start`).
        progress: called as ``progress(now, nb_finished, nb_jobs)`` after each instant.
        ready: Batsim's ``sched_ready``.
        ended: SIMULATION_ENDS acknowledged (the run is over).
        waiters, killers, submitters_left, event_submitters_left: Batsim's server counters.
        kill_requested: jobs whose kill was asked, until Batsim deletes them.
        unsent_ends: jobs whose end reached the server since the last message sent.
    """

    def __init__(self, book: JobBook, executions: Executions, switches: Switches, dynamic: DynamicJobs,
                 machines: Machines, record: RunRecord, rounds: Rounds, *, clock: Clock, timers: Any, steps: bool,
                 platform: PlatformSpec, buffer: list[Any], energy: bool, dynamic_jobs: bool, trace: bool) -> None:
        self.book = book
        self.jobs = book.live
        self.executions = executions
        self.switches = switches
        self.dynamic = dynamic
        self.machines = machines
        self.hosts = machines.hosts
        self.record = record
        self.rounds = rounds
        self.clock = clock
        self.timers = timers
        self.steps = steps
        self.platform = platform
        self.buffer = buffer
        self.energy = energy
        self.dynamic_jobs = dynamic_jobs
        self.trace = trace
        self.port: Any = None
        self.progress: Callable[[float, int, int], None] | None = None
        self.ready = True
        self.ended = False
        self._same_instant: list[Any] = [0.0, None, 0]
        self.waiters = 0
        self.killers = 0
        self.kill_requested: set[str] = set()
        self.unsent_ends: set[str] = set()
        self.submitters_left = 0
        self.event_submitters_left = 0

    def start(self, port: SchedulerPort) -> None:
        """The run starts, talking to ``port``; with output rows kept (``trace``), the time-0 rows of
        ``out_pstate_changes.csv`` (every machine by initial pstate, the storage hosts too:
        Batsim's ``Machines::machines()`` in ``export.cpp``)."""
        self.port = port
        if self.trace:
            by_ps: dict[int, list[int]] = {}
            pstates = [h.pstate for h in self.hosts] + [s.pstate for s in self.machines.storage]
            for i, ps in enumerate(pstates):
                by_ps.setdefault(ps, []).append(i)
            for ps in sorted(by_ps):
                self.record.rows["pstates"].append((0.0, str(ProcSet(*by_ps[ps])), ps))

    def killing_done(self, ids: list[str], progress: dict[str, Any]) -> None:
        """``server_on_killing_done``: JOB_COMPLETED for each job really killed, then JOB_KILLED.

        Raises:
            EngineError: a job Batsim deleted since the kill (its end was sent meanwhile): real
                Batsim 4.2.1 aborts (``Jobs::at``)."""
        t = self.clock.now
        for jid in ids:
            if jid not in self.jobs and jid not in self.unsent_ends:
                raise EngineError(f"KILL_JOB of job {jid!r}: the job's end was sent to the scheduler before its killer "
                                  f"reported at t={shown_time(t)}: real Batsim 4.2.1 has deleted it and aborts (\"Cannot get job "
                                  f"'{jid}': it does not exist\")")
        for jid in progress:
            job = self.jobs[jid]
            self.job_completed(job)
        self.buffer.append(JobKilled(t, job_ids=list(ids), job_progress=progress))

    def job_completed(self, job: EngineJob) -> None:
        """``server_on_job_completed``: the JOB_COMPLETED event and the job's ``out_jobs.csv`` row."""
        self.buffer.append(JobCompleted(self.clock.now, job_id=job.id, job_state=job.state,
                                         return_code=job.return_code, alloc=job.alloc))
        self._write_job_row(job)
        self.dynamic.ended(job)

    def _write_job_row(self, job: EngineJob) -> None:
        """The job's end reached the server (completed, killed, rejected): its ``out_jobs.csv``
        row is written, and the engine forgets the :class:`EngineJob` (its execution state and
        JSON object): what is left of it is its row in ``done`` (recorded when it ended)."""
        self.book.forget(job)
        self.unsent_ends.add(job.id)
        if self.trace:
            self.record.rows["jobs"].append(job.row)

    def reply_parts(self, reply: list[Decision] | Reply) -> tuple[float, list[Decision]]:
        """A reply's ``now`` (s) and decisions, checked as Batsim checks them.

        Raises:
            EngineError: the reply is not a list of decisions (a policy's own ``decide`` that
                returns something else), a decision's timestamp is not a finite number (Batsim
                cannot read NaN or infinity in a reply), or is later than the reply's ``now``.
        """
        if isinstance(reply, Reply):
            ready_at, decisions = reply.now, reply.decisions
            latest = ready_at
        else:   # (the decisions of a reply at the message's now: the port dated them)
            ready_at, decisions = self.clock.now, reply
            latest = math.inf
        if type(decisions) is not list:
            raise EngineError(f"{describe_scheduler(self.port)}: its reply must be a list of decisions "
                              f"(schedulers.core.events), got {type(decisions).__name__} {_short(decisions)}")
        for d in decisions:
            if not isinstance(d, Decision):
                raise EngineError(f"{describe_scheduler(self.port)}: its reply holds {type(d).__name__} "
                                  f"{_short(d)}, not a decision of schedulers.core.events")
            ts = d.timestamp
            if ts is not None and not (isinstance(ts, (int, float)) and ts - ts == 0 and ts <= latest):
                raise EngineError(f"{describe_scheduler(self.port)}: decision {type(d).__name__} has "
                                  f"timestamp {ts!r} " + (f"later than its reply's now={ready_at} (Batsim aborts: "
                                                          "timestamps must be <= now)"
                                                          if isinstance(ts, (int, float)) and ts - ts == 0 else
                                                          "that is not a finite number (Batsim aborts on such a "
                                                          "reply)"))
        return ready_at, decisions

    def sleep_until(self, t: float, kind: int, payload: Any = None) -> bool:
        """An actor that must act at ``t`` (s) sleeps until then if ``t`` is after the clock
        (``sleep_for(t - clock)``, on SimGrid's step clock; else an event at ``t`` rounded to
        1e-9 s, :func:`.queue.at`); returns whether it sleeps."""
        now = self.clock.now
        if self.steps:
            if not t > now:
                return False
            self.timers.sleep(t - now, kind, payload)
        else:
            if not at(t) > now:
                return False
            self.timers.push(at(t), kind, payload)
        return True

    def apply(self, d: Decision) -> tuple[list[str], list[EngineJob]] | None:
        """Batsim's server handles decision ``d`` (``src/server.cpp``, ``server_on_*``) at the
        current time. Returns, for a KILL_JOB that asks for kills, the ids of the jobs to report
        killed and those of them running, which the caller kills (None otherwise).

        Raises:
            EngineError: an invalid decision (unknown job or host, a job not in the right
                state, a CALL_ME_LATER in the past, an unsupported decision or QUERY), where
                Batsim 4.2.1 aborts."""
        if isinstance(d, ExecuteJob):
            ended = self.executions.execute(d)
            if ended is not None:   # (a first stage without work, see "Kills and zero-work jobs" above)
                self.job_completed(ended)
        elif isinstance(d, RejectJob):
            job = self.book.named(d.job_id, "REJECT_JOB", self.clock.now)
            if job.state != SUBMITTED:
                raise EngineError(f"REJECT_JOB {job.id} at t={shown_time(self.clock.now)}: the job is {job.state}, not waiting")
            assert type(job) is EngineJob   # (a job ended or not submitted is not waiting)
            job.state = REJECTED
            job.finish = self.clock.now
            self.book.finished += 1
            self.book.ended(job)
            self._write_job_row(job)
            self.dynamic.ended(job)
        elif isinstance(d, KillJobs):
            ids, really = self._kill_request(d.job_ids)
            if ids:   # (every job's kill asked before: no killer, no JOB_KILLED)
                # the caller kills them: at once (.grouping), or by a killer actor (.netserver)
                return ids, really
        elif isinstance(d, CallMeLater):
            if not math.isfinite(d.at):
                raise EngineError(f"CALL_ME_LATER at t={shown_time(self.clock.now)}: time {d.at!r} is not a finite number")
            if not d.at > self.clock.now:
                # server_on_call_me_later (src/server.cpp) asserts target_time > clock
                hair = (f" (the clock is at {self.clock.now!r}: past the time the scheduler reads, printed with 6 "
                        "decimals)") if shown_time(d.at) == shown_time(self.clock.now) else ""
                raise EngineError(f"CALL_ME_LATER at t={shown_time(self.clock.now)}: it asks to be called at {d.at!r}, not after the "
                                  f"current time{hair} (Batsim 4.2.1 aborts: 'You asked to be awaken in the past!')")
            self.waiters += 1
            if self.steps:  # waiter_process: sleeps the time left, at least 1e-5 s
                self.timers.sleep(max(d.at - self.clock.now, WAITER_MIN_SLEEP), _WAITER)
            else:
                self.timers.push(max(at(d.at), self.clock.now), _WAITER)
        elif isinstance(d, SetResourceState):
            self.switches.set_resource_state(d, None if self.platform.message_delays is None else self.rounds.after)
        elif isinstance(d, Query):
            for key in d.requests:
                if key != "consumed_energy":
                    raise EngineError(f"QUERY {key!r} is not supported by the embedded engine "
                                      "(only consumed_energy)")
                if not self.energy:
                    raise EngineError("QUERY consumed_energy needs the energy model (-E / --energy)")
                self.buffer.append(Answer(self.clock.now, data={"consumed_energy": self.machines.total_energy()}))
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
        elif isinstance(d, GenericDecision) and d.type == "SET_JOB_METADATA":
            self._set_job_metadata(d.data)
        elif isinstance(d, GenericDecision) and d.type == "CHANGE_JOB_STATE":
            # server_on_change_job_state (src/server.cpp) writes the job's row before it changes
            # the job's state, and JobsTracer::write_job aborts on a job not completed
            raise EngineError(f"CHANGE_JOB_STATE at t={shown_time(self.clock.now)}: not simulated by the embedded engine; real "
                              "Batsim 4.2.1 aborts on it once a job is set to a final state (\"Job ... did not "
                              "complete\": it writes the job's row before changing its state)")
        elif isinstance(d, GenericDecision):
            raise EngineError(f"decision {d.type!r} is not supported by the embedded engine; "
                              "use real Batsim (--engine batsim)")
        else:
            raise EngineError(f"unsupported decision {d!r}")
        return None

    def _set_job_metadata(self, data: Any) -> None:
        """SET_JOB_METADATA: the job's ``metadata`` column of ``out_jobs.csv`` (Batsim 4.2.1
        ``JsonProtocolReader::handle_set_job_metadata``, ``src/protocol.cpp``, then
        ``server_on_set_job_metadata``, ``src/server.cpp``; written between double quotes by
        ``JobsTracer::write_job``, ``src/export.cpp``). The last one set before the job's row is
        written counts.

        Raises:
            EngineError: what Batsim aborts on: ``data`` not exactly ``job_id`` and ``metadata``
                strings, a metadata holding a double quote, a job no workload has. (A job that
                already ended keeps its row: its metadata is not written.)"""
        where = f"SET_JOB_METADATA at t={shown_time(self.clock.now)}"
        if not (isinstance(data, dict) and set(data) == {"job_id", "metadata"}
                and isinstance(data["job_id"], str) and isinstance(data["metadata"], str)):
            raise EngineError(f"{where}: 'data' must be {{\"job_id\": string, \"metadata\": string}}, got "
                              f"{json.dumps(data)} (Batsim aborts)")
        text = data["metadata"]
        if '"' in text:
            raise EngineError(f"{where}: the metadata of job {data['job_id']!r} holds a double quote, which Batsim "
                              "refuses (it writes it between double quotes in out_jobs.csv)")
        job = self.book.named(data["job_id"], "SET_JOB_METADATA", self.clock.now)
        if type(job) is EngineJob:   # (a job that ended has its row written: no effect, as in Batsim)
            self.record.rows.setdefault("job_metadata", {})[(job.workload, job.name)] = text

    def _kill_request(self, job_ids: list[str]) -> tuple[list[str], list[EngineJob]]:
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
        ids: list[str] = []
        really: list[EngineJob] = []
        for jid in job_ids:
            job: EngineJob | DoneJob | None = self.jobs.get(jid)
            where = f"KILL_JOB at t={shown_time(self.clock.now)}: job {jid!r}"
            if job is None:
                job = self.book.known(jid)
                if job is None and jid.partition("!")[0] not in self.book.by_name:
                    raise EngineError(f"{where}: there is no workload {jid.partition('!')[0]!r}; real Batsim 4.2.1 "
                                      "aborts (an uncaught std::out_of_range: map::at)")
                if job is None:
                    raise EngineError(f"{where} does not exist; real Batsim 4.2.1 aborts (\"Trying to kill job "
                                      f"'{jid}' but it does not exist.\")")
                if isinstance(job, DoneJob) and jid not in self.unsent_ends:
                    raise EngineError(f"{where} ended at t={shown_time(job.finish)} and the message telling it has been sent: "
                                      f"real Batsim 4.2.1 has deleted it and aborts (\"Cannot get job '{jid}': it does "
                                      "not exist\"); kill a job only while it runs")
            if job.state != RUNNING and not job.state.startswith(("COMPLETED", "REJECTED")):
                waiting = job.state == SUBMITTED
                raise EngineError(f"{where} is {'waiting' if waiting else 'not submitted yet'}: real Batsim 4.2.1 aborts "
                                  f"(\"Invalid KILL_JOB: job_id '{jid}' refers to a job not being executed nor "
                                  "completed.\")" + ("; reject a waiting job instead (REJECT_JOB)" if waiting else ""))
            if jid in self.kill_requested:
                continue
            if job.state == REJECTED:
                raise EngineError(f"{where} was rejected: real Batsim 4.2.1's killer aborts (\"Bad kill: job {jid} "
                                  "has not been started\")")
            self.kill_requested.add(jid)
            ids.append(jid)
            if job.state == RUNNING:
                assert type(job) is EngineJob   # (a running job is held)
                really.append(job)
        return ids, really

    def finished(self) -> bool:
        return (self.submitters_left == 0 and self.event_submitters_left == 0 and self.book.running == 0
                and self.switches.switching == 0 and self.waiters == 0 and self.killers == 0 and self.book.finished == self.book.nb_jobs
                and (not self.dynamic_jobs or self.dynamic.registration_finished))

    def exchange(self, port: SchedulerPort) -> list[Decision] | Reply:
        """Send the events gathered so far to the scheduler at the current time (one message);
        return its reply. Batsim then deletes the jobs whose end it sent and collects profiles.

        Raises:
            EngineError: a livelock (:meth:`_check_livelock`)."""
        buf = self.buffer
        events = buf[:]
        buf.clear()
        if self.unsent_ends:   # Batsim deletes the jobs whose end is now sent (jobs_to_be_deleted)
            if self.kill_requested:
                self.kill_requested -= self.unsent_ends
            self.unsent_ends = set()
        self.dynamic.collect()
        record = self.record
        record.messages += 1
        now = self.clock.now
        if not 0.0 <= now - self._same_instant[0] < LIVELOCK_SPAN:   # (_check_livelock's usual case, inlined)
            self._same_instant = [now, None, 0]
        else:
            self._check_livelock(port)
        t0 = _perf_counter()
        reply = port.exchange(now, events)
        record.sched_time += _perf_counter() - t0
        return reply

    def _check_livelock(self, port: SchedulerPort) -> None:
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
        sig = (self.book.finished, self.book.running, self.book.nb_jobs, self.switches.nb_grouped_switches, self.switches.switching,
               self.killers, len(self.timers))
        if sig != self._same_instant[1]:  # (None at the second exchange of an instant)
            self._same_instant = [self.clock.now, sig, 0]
            return
        self._same_instant[2] += 1
        if self._same_instant[2] >= LIVELOCK_EXCHANGES:
            raise EngineError(
                f"livelock at t={shown_time(start)}: {describe_scheduler(port)} exchanged {LIVELOCK_EXCHANGES} messages "
                "at this instant with no job, host or timer changing (for instance a CALL_ME_LATER whose time "
                "t + timeout rounds back to t); the simulation would never advance")

    def deadlock(self) -> Deadlock:
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
        msg = f"deadlock at t={shown_time(self.clock.now)}: nothing left to simulate but " + "; ".join(problems)
        # (asleep: switched off, or declared at a sleep pstate, where Batsim counts the machine idle;
        # Batsim reads sleep_pstates only with -E)
        asleep = sum(1 for h in self.hosts if h.state is HostState.SLEEPING
                     or (self.energy and h.pstate_kind(h.pstate) == "sleep"))
        if asleep and waiting:
            msg += f"; {asleep} of {len(self.hosts)} hosts are asleep and the policy never woke them"
        if self.dynamic_jobs and not self.dynamic.registration_finished:
            msg += ("; dynamic jobs are enabled and the scheduler never sent NOTIFY registration_finished "
                    "(Batsim waits for it before ending)")
        return Deadlock(msg)

    def next_instant(self) -> list:
        """End the current instant (its lazy energy charges, :meth:`.hosts.Machines.settle_lazy`), move the
        clock to the next one and return its queue entries; a run with nothing left to
        simulate before its end is a deadlock (:meth:`deadlock`)."""
        if not self.timers:
            # what is left was stale timers (a stage end or latency re-armed since): SimGrid's
            # clock stopped at the last instant at which something happened
            self.clock.now = self.clock.live
            raise self.deadlock()
        if self.machines.lazy_hosts:
            self.machines.settle_lazy()
        self.clock.now, entries = self.timers.pop_instant()
        for kind, _ in entries:
            if kind != _JOB_END and kind != _LATENCY:  # those two may be stale
                self.clock.mark_live()
                break
        return entries


def _short(value: Any) -> str:
    """``repr(value)``, at most 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
