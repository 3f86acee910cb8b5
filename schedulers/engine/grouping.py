"""Batsim's server where the engine groups the messages of one step itself.

A component of :class:`schedulers.engine.simulator.Engine`, the server of compute-only platforms
whose messages take no time and whose actors' order does not show (no energy, no dynamic jobs,
no external events, no computing profile of no flops; see :mod:`.simulator`):
:class:`GroupedServer` owns the KILLING_DONE reports of the reply being played. It drives the
:class:`.server.Server` (decisions, exchanges, counters, the next instant), asks
:class:`.execution.Executions` to end the stages whose timers fire and to kill jobs,
:class:`.ptasks.ParallelTasks` for the end timers and latencies, :class:`.switching.Switches`
for the switches' ends, and reads the workloads (the static submitters' jobs).

Message grouping (``server_process`` in Batsim 4.2.1 ``src/server.cpp``)
    The server handles its internal messages one at a time; after each it sends the events
    gathered so far to the scheduler when the scheduler is ready, the server's mailbox is empty
    and there is something to send. Messages of actors woken in one step of SimGrid's clock
    (:mod:`.lazysteps`) reach the mailbox together, in the order their actions were created, so
    they go out in one message; a submitter's "bye" (NOTIFY ``no_more_static_job_to_submit``)
    joins them only when other messages were still being handled (at t = 0 it comes after the
    scheduler's reply); simultaneous ends of separate switches are handled one mailbox round each. This reproduces every grouping of the recorded transcripts.

Message steps (``EngineImpl::solve`` of SimGrid 3.32)
    Here the messages of one instant are handled without SimGrid's steps of 0 s, which change
    nothing but an actor's sleep shorter than SimGrid's precision (1e-9 s): such a sleep ends in
    the next step, of 0 s if a message comes first, else of its own length. Two actors sleep so:
    the job submitter, when the clock stopped an ulp short of the next subtime (``subtime -
    clock`` < 1e-9 s), and the request-reply actor, when the ``now`` printed with 6 decimals is an
    ulp after the clock (a decision or its SCHED_READY dated there). Each message that reaches the
    server after such a sleep began (a later one in the mailbox, one posted before the reply and
    delivered after the exchange, the request-reply actor's decision or SCHED_READY sent without
    a sleep, a KILLING_DONE) is a step of 0 s that ends it at the same clock: the submitter then
    submits the next job before its subtime (``tests/fixtures/batsim_subprecision_sleep``), the
    decision is applied an ulp early (``tests/fixtures/batsim_subprecision_step/bye``). With no
    such message the clock reaches the later time (``tests/fixtures/batsim_subprecision_step``).
    The engine keeps these sleeps on the clock and puts a step of 0 s (:attr:`Kind.STEP
    <.queue.Kind.STEP>`, nothing for the server) where such a message comes.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ..core.events import CallMeLater, Decision, JobSubmitted, Notify, RequestedCall, SimulationBegins, SimulationEnds
from ..core.model import Job
from .clock import Clock
from .execution import SUBMITTED, Executions
from .hosts import Machines
from .jobs import JobBook
from .platform import PlatformSpec
from .ports import Reply, SchedulerPort
from .ptasks import ParallelTasks
from .queue import Kind
from .results import RunRecord
from .server import Server
from .steps import PRECISION_TIMING
from .switching import Switches
from .workload import Workload

_SUBMIT, _JOB_END, _SWITCH, _WAITER = Kind.SUBMIT, Kind.JOB_END, Kind.SWITCH, Kind.WAITER
_BYE, _DECISION, _READY, _LATENCY = Kind.BYE, Kind.DECISION, Kind.READY, Kind.LATENCY
_STEP = Kind.STEP


class GroupedServer:
    """Batsim's server grouping the messages of a step itself (see the module docstring).

    Args:
        server: Batsim's server state and decisions.
        executions, ptasks, switches, machines, book, record, clock: the components it asks.
        timers: the event queue (:class:`.lazysteps.LazyStepQueue`, or the 1e-9-s
            :class:`.queue.EventQueue` of Full zones of unknown routing).
        steps: whether ``timers`` is SimGrid's step clock.
        platform: the platform (whether the master host has a loopback).
        workloads: the static workloads, in order.
        energy: Batsim's ``-E``.
        forward_profiles: Batsim's ``--forward-profiles-on-submission``.
    """

    def __init__(self, server: Server, executions: Executions, ptasks: ParallelTasks, switches: Switches,
                 machines: Machines, book: JobBook, record: RunRecord, *, clock: Clock, timers: Any, steps: bool,
                 platform: PlatformSpec, workloads: list[Workload], energy: bool, forward_profiles: bool) -> None:
        self.server = server
        self.buffer = server.buffer
        self.executions = executions
        self.ptasks = ptasks
        self.switches = switches
        self.machines = machines
        self.book = book
        self.jobs = book.live
        self.record = record
        self.clock = clock
        self.timers = timers
        self.steps = steps
        self.platform = platform
        self.workloads = workloads
        self.energy = energy
        self.forward_profiles = forward_profiles
        self._kills_done: list[tuple[list[str], dict[str, Any]]] = []   # kills done in the reply being played
        # an actor sleeps less than SimGrid's precision since the start of this instant: the next
        # message reaching the server makes a step of 0 s that ends it ("Message steps")
        self._short_sleep = False
        # messages posted before the reply being played reached the server after the exchange
        # began, and the request-reply actor sent none yet: a sleep it begins first ends at them
        self._flushed = False

    def _zero_step(self) -> None:
        """A step of 0 s now, that ends the sleeps shorter than SimGrid's precision begun before
        it: a message reaching the server (each such place tests :attr:`_short_sleep` first,
        inline: most are on the path of every message) or the messages flushed after the
        exchange (:meth:`_replier_sleeps`). Module docstring, "Message steps"."""
        self._short_sleep = False
        self.timers.push(self.clock.now, _STEP)

    def _replier_sleeps(self, t: float, kind: int, payload: Any = None) -> bool:
        """The request-reply actor sleeps until ``t`` if it is later (:meth:`.server.Server.sleep_until`);
        returns whether it sleeps. A sleep shorter than SimGrid's precision ends at the next
        message step: of the messages flushed since the exchange when it is the actor's first
        action (it began before them), else of a later message (module docstring, "Message steps")."""
        if self.steps and not t > self.clock.now:   # (sleep_until's usual case, inlined: no sleep)
            return False
        if not self.server.sleep_until(t, kind, payload):
            return False
        if self.steps and t - self.clock.now < PRECISION_TIMING:
            if self._flushed:
                self._zero_step()
            else:
                self._short_sleep = True
        return True

    def _handle(self, kind: int, payload: Any) -> list[Any]:
        """Handle one message reaching Batsim's server; return follow-up messages."""
        t = self.clock.now
        if self._short_sleep and kind != _LATENCY:   # (a latency is a model event, no message)
            self._zero_step()
        if kind == _SUBMIT:
            # the static submitter's jobs of one subtime: made into EngineJobs now (JobTable.job)
            # (static_job_submitter_process, src/job_submitter.cpp): woken, the submitter takes
            # the job it slept for, even where SimGrid's clock stops short of its subtime, then
            # every job whose subtime is not after the clock; then it sleeps
            # ``next subtime - clock``. (The 1e-9-s clock: the jobs of the same subtime, or every
            # job of a subtime <= 0 at the first wake-up, at 0: negative subtimes are due then.)
            w, k = payload
            table, subtimes = w.jobs, w.jobs.subtimes
            n = len(subtimes)
            steps = self.steps
            sub = subtimes[k]
            if self.energy and self.record.first_submission[0] < 0:
                self.record.first_submission = self.machines.total_exact()
            woke = True
            while k < n and (woke or (subtimes[k] <= t if steps else (subtimes[k] == sub or subtimes[k] <= 0.0))):
                woke = False
                j = table.job(k)
                j.state = SUBMITTED
                self.jobs[j.id] = j
                prof = w.profiles[j.profile] if self.forward_profiles else None
                self.buffer.append(JobSubmitted(t, job=Job.of_fields(j.id, j.workload, j.subtime, j.walltime, j.res,
                                                                      j.profile, j.raw, prof)))
                k += 1
            if k < n:
                # a sleep shorter than SimGrid's precision (1e-9 s: the clock stopped an ulp short
                # of a subtime shared by the next job: "sleep_for() is smaller than the SimGrid
                # numerical accuracy (3.55271e-15 < 1e-09)" on Batsim 4.2.1) ends in the next
                # step: of 0 s when another message reaches the server now (module docstring,
                # "Message steps"), else of its own length
                if not self.server.sleep_until(subtimes[k], _SUBMIT, (w, k)):
                    self.timers.push(t, _SUBMIT, (w, k))
                elif steps and subtimes[k] - t < PRECISION_TIMING:
                    self._short_sleep = True
                return []
            return [(_BYE, w)]
        if kind == _BYE:
            self.server.submitters_left -= 1
            if self.server.submitters_left == 0:
                self.buffer.append(Notify(t, type="no_more_static_job_to_submit"))
            return []
        if kind == _JOB_END:
            end = self.ptasks.job_end_of(payload)
            if end is not None and self.executions.stage_ended(*end):
                self.server.job_completed(end[0])
            return []
        if kind == _SWITCH:
            self.switches.on_switched(*payload)
            return []
        if kind == _WAITER:
            self.server.waiters -= 1
            self.buffer.append(RequestedCall(t))
            return []
        if kind == _DECISION:
            self._play_decisions(*payload)
            return []
        if kind == _READY:
            self.server.ready = True
            return []
        if kind == _LATENCY:  # a model event, no message to the server
            self.ptasks.latency_paid(*payload)
            return []
        raise AssertionError(kind)

    def play_reply(self, reply: list[Decision] | Reply) -> None:
        """Play a scheduler's reply received at ``now``: decisions due now are applied at once,
        later ones when the clock reaches them; the scheduler is busy until the reply's ``now``."""
        self._play_parts(*self.server.reply_parts(reply))

    def _play_parts(self, ready_at: float, decisions: list[Decision]) -> None:
        """:meth:`play_reply` of a reply read (:meth:`.server.Server.reply_parts`)."""
        if decisions:
            self._play_decisions(deque(decisions), ready_at)
        else:   # (no decision: the scheduler is ready again at the reply's now)
            if self._kills_done:
                self._killings_reported()
            self.server.ready = not self._replier_sleeps(ready_at, _READY)
            if self.server.ready and self._short_sleep:   # (SCHED_READY sent now)
                self._zero_step()

    def _play_decisions(self, decisions: deque, ready_at: float, woke: bool = False) -> None:
        """Batsim's request-reply actor: send each decision at its timestamp, then SCHED_READY
        at the reply's ``now`` (``JsonProtocolReader::send_message_at_time``: ``sleep_for(when -
        clock)`` when ``when`` is later than the clock, then the message). ``woke``: such a sleep
        is over; its message goes even where SimGrid's clock stops short of ``when``."""
        while decisions:
            ts = decisions[0].timestamp
            if ts is None:   # dated by the reply's now (a plain list: the message's)
                ts = ready_at
            if not woke and self._replier_sleeps(ts, _DECISION, (decisions, ready_at, True)):
                self.server.ready = False
                self._killings_reported()
                return
            woke = False
            self._apply(decisions.popleft())
        if self._kills_done:
            self._killings_reported()
        self.server.ready = woke or not self._replier_sleeps(ready_at, _READY)
        if self.server.ready and self._short_sleep:   # (SCHED_READY sent now)
            self._zero_step()

    def _apply(self, d: Decision) -> None:
        """The server applies ``d``; the killer of a KILL_JOB ends its jobs at once, its
        KILLING_DONE is reported after the reply's decisions (:meth:`_killings_reported`)."""
        self._flushed = False   # (the request-reply actor sent a message: it acts after it)
        if self._short_sleep:   # (the decision's message reaches the server now)
            self._zero_step()
        kill = self.server.apply(d)
        if kill is not None:
            ids, really = kill
            self._kills_done.append((ids, self.executions.kill_running(really)))

    def _killings_reported(self) -> None:
        """Compute-only platforms: the KILLING_DONE messages of the killers this reply started
        reach the server after the reply's decisions (see "Kills and zero-work jobs" in :mod:`.server`)."""
        if self._kills_done:
            done, self._kills_done = self._kills_done, []
            if self._short_sleep:   # (the KILLING_DONE messages)
                self._zero_step()
            for ids, progress in done:
                self.server.killing_done(ids, progress)

    def _send_loop(self, port: SchedulerPort, pending: list) -> None:
        """Batsim's server check after a message: send while ready and there is something to send."""
        while True:
            if not self.server.ready:
                self._flush(pending)
                return
            if self.buffer:
                reply = self.server.exchange(port)
                self._flushed = bool(pending)
                self._flush(pending)  # messages posted before the reply's decisions reach the server first
                self.play_reply(reply)
                self._flushed = False
                continue
            if pending:
                self._flush(pending)
                continue
            if self.server.finished() and not self.server.ended:
                self.buffer.append(SimulationEnds(self.clock.now))
                ready_at, _ = self.server.reply_parts(self.server.exchange(port))
                self.server.ended = True
                # the request-reply actor sleeps until the reply's now, then its SCHED_READY
                # (of no duration here) ends the server's loop: SimGrid's final clock
                if ready_at > self.clock.now:
                    self.clock.end = self.clock.now + (ready_at - self.clock.now)
            return

    def _flush(self, pending: list) -> None:
        for kind, payload in pending:
            self._handle(kind, payload)
        pending.clear()

    def _process_instant(self, entries: list, port: SchedulerPort) -> None:
        """Deliver the messages of one instant to the server's mailbox, in arming order."""
        self._short_sleep = False   # (a step passed: such a sleep begun before has ended)
        if len(entries) == 1:  # the common case: one message reaches the server alone
            kind, payload = entries[0]
            if kind == _STEP:
                return
            self._send_loop(port, self._handle(kind, payload))
            return
        entries = [e for e in entries if e[0] != _STEP]
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

    def run(self, port: SchedulerPort, begins: SimulationBegins) -> None:
        """The simulation loop, from SIMULATION_BEGINS (``begins``) to the end.

        Raises:
            Deadlock: nothing left to simulate before the end (:meth:`.server.Server.deadlock`).
            EngineError: an invalid decision, a livelock."""
        port = self.server.port
        # SIMULATION_BEGINS goes first, alone; the submitters start while it is in flight.
        self.buffer.append(begins)
        reply = self.server.exchange(port)
        for w in self.workloads:
            self.server.submitters_left += 1
            if len(w.jobs):
                if not self.server.sleep_until(w.jobs.subtimes[0], _SUBMIT, (w, 0)):
                    self.timers.push(0.0, _SUBMIT, (w, 0))
            else:  # an empty workload: its submitter says goodbye at once
                self.timers.push(0.0, _BYE, w)
        # The time-0 submissions reach the server before the scheduler's SCHED_READY and go out
        # together once it is ready; a submitter's bye comes after that SCHED_READY and goes in the
        # next message, after the scheduler's reply (real Batsim 4.2.1 on Vivaldi and Full-routing
        # zones: tests/fixtures/batsim_bye_time0). Full zones reach this step clock only when the
        # route reader does not know their routing (read_platform); otherwise their messages are
        # timed (.netserver).
        # The reply's decisions reach the server's mailbox one by one, between the submitters'
        # time-0 messages: its first decision before them. A first CALL_ME_LATER (of the reply's
        # time) so makes its waiter before the submitters' next sleeps, which begin as the server
        # reads their submissions: where both end at one time, that waiter wakes first, the other
        # waiters after the submitter (real Batsim 4.2.1: tests/fixtures/batsim_call_submit_tie).
        ready_at, decisions = self.server.reply_parts(reply)
        if decisions and type(decisions[0]) is CallMeLater and decisions[0].timestamp in (None, 0.0) \
                and ready_at == 0.0 and self.timers and self.timers.next_time() == 0.0:
            self._apply(decisions[0])
            decisions = decisions[1:]
        pending = []
        while self.timers and self.timers.next_time() == 0.0:
            _, entries = self.timers.pop_instant()
            for kind, payload in entries:
                pending.extend(self._handle(kind, payload))
        self._play_parts(ready_at, decisions)
        self._send_loop(port, pending)
        nb_jobs = self.book.nb_jobs
        while not self.server.ended:
            self._process_instant(self.server.next_instant(), port)
            if self.server.progress is not None:
                self.server.progress(self.clock.now, self.book.finished, nb_jobs)
