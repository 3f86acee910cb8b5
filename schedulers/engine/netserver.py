"""Batsim's server where internal messages take time: every message takes its route's time.

A component of :class:`schedulers.engine.simulator.Engine`: :class:`ActorServer` plays Batsim's
actor model, used when the platform has network links, or when its master host sits in a
``routing="Full"`` zone (SimGrid's loopback: 1e-10 s a message, e.g. ``hetero_4hosts_owners.xml``
and gridsched's Grid'5000 platforms) (:attr:`PlatformSpec.message_delays`, :mod:`.netroute`), and
on compute-only platforms where the actors' order shows (every route empty, :mod:`.simulator`).
It owns the server's mailbox (messages posted and not matched, in flight, whether the server
waits in ``receive``), the routes of the messages and whether SIMULATION_ENDS was sent, and it
plays Batsim's actors (submitters, the request-reply actor, waiters, killers, the job and
switch actors from their end to their message). It drives :class:`.server.Server` (decisions, exchanges,
counters), asks :class:`.subrounds.Rounds` for the sub-rounds of each instant and the actors'
energy reads, :class:`.ptasks.ParallelTasks` for the messages' bytes on links, the end timers
and held tasks, :class:`.execution.Executions` to end stages and kill jobs,
:class:`.switching.Switches`, :class:`.hosts.Machines` and the event queue (the messages'
transfers and the actors' sleeps). One simulated instant is :meth:`ActorServer.play_instant`.

On other compute-only platforms (Vivaldi zones) Batsim's internal messages take no time and
:mod:`.grouping` reproduces their grouping; here they take the latency of their route (on
Batsim's ``cluster_energy_128.xml``, 0.6 ms from the master host to itself and 1.6 ms from a
compute host; 1e-10 s across a loopback), and the order in which Batsim's actors and its
server meet decides every time. Recorded on real Batsim 4.2.1: the README's KTH-SP2 run (28,467 jobs, EASY, ``g5k_nantes_econome.xml``, ``-E``)
gives every job the start, end and hosts Batsim gives it; with the messages timed as instantaneous
(the step clock) 110 jobs started at another time and 151 on other hosts (ties between job ends
and submissions that these 1e-10 s decide). Time moves as
SimGrid's clock does, one step at a time, to the last bit of a double (:mod:`.steps`: each
message is a latency then one byte, each sleep a ``max_duration``), and each step is an instant
below. The model follows Batsim 4.2.1 and SimGrid 3.32 actor by actor:

* **Sub-rounds** (``EngineImpl::run``, SimGrid 3.32 ``src/kernel/EngineImpl.cpp``). At one
  instant SimGrid runs every actor woken by an action that ended (sub-round 1) until its next
  simcall, then handles their simcalls in order; the actors those answer run in the next
  sub-round, and so on. A message is in the server's mailbox only at the end of the sub-round
  of its ``put``; so what an actor does before its ``put`` decides the order of messages posted
  at one instant. The simcalls counted: creating an actor (the server, for a job, a waiter, a
  killer, the request-reply actor), ``set_pstate``, and reading a host's energy that nothing
  updated yet at this instant (with ``-E``, a job's end reads its hosts then every host for
  the energy row before its JOB_COMPLETED: ``execute_job_process``, ``src/jobs_execution.cpp``).
  Recorded on Batsim 4.2.1, ``test_walltime.json`` on ``cluster_energy_128.xml``: a job reaching
  its walltime at the instant the request-reply actor's EXECUTE_JOB arrives posts its
  JOB_COMPLETED after the actor's next decision.
* **The mailbox** (``send_message``, ``src/ipp.cpp``: a blocking 1-byte ``put`` to the mailbox
  ``server``). Every ``send_message``, ``receive_message`` and ``mailbox_empty`` first looks
  the mailbox up (``Mailbox::by_name``, a simcall in SimGrid 3.32): a ``put`` or ``get`` comes
  a sub-round after the actor decides it, the server's test of its mailbox a sub-round after
  it handled a message; the ``put`` and ``get`` of one sub-round are matched in the order the
  actors ran (recorded on Batsim 4.2.1, ``tests/fixtures/batsim_mailbox_lookup``: a job ending
  as a message arrives, after two energy reads, puts its JOB_COMPLETED before the reply's
  EXECUTE_JOB). The server receives one message at a time, oldest first; a message posted while
  the server waits is matched at once, otherwise it waits in the mailbox; its transfer takes its
  route's delay from the moment it is matched: the route's latency, then its byte, which shares
  the route's links with the jobs' communications and the other messages (an ``L07Action`` of
  SimGrid's ``ptask_L07`` model, ``NetworkL07Model::communicate``; :class:`.execution.MessageFlow`;
  worked by hand and recorded, ``tests/fixtures/batsim_message_sharing``). The server handles a message and looks at its
  mailbox before any message posted in the same sub-round is in it: the sender's next one, or
  one from a job that ended at that instant (recorded on Batsim 4.2.1,
  ``tests/fixtures/batsim_network/tiny_net.xml``: the submitter's last JOB_SUBMITTED reaches
  the scheduler alone, its goodbye comes in the next message; ``test_same_submit_time.json``
  on ``cluster512.xml``: a job ending at the instant a JOB_SUBMITTED arrives does not hold the
  submission back).
* **The server** (``server_process``, ``src/server.cpp``) handles the message, then, after
  its handler's simcalls, sends the events gathered so far to the scheduler if the scheduler is
  ready and the mailbox is empty, then receives again.
* **The request-reply actor** (``request_reply_scheduler_process``, ``JsonProtocolReader``) starts
  after the server's send, posts each decision at ``max(clock, timestamp)`` as one message, one
  after the other, then SCHED_READY at ``max(clock, now)``. A job starts when the server receives
  its EXECUTE_JOB (on its first host); a CALL_ME_LATER's waiter sleeps ``max(t - clock, 1e-5)``
  from its receipt (``waiter_process``), then posts WAITING_DONE from the master host.
* **Job submitters** (``static_job_submitter_process``, master host) post a hello, then, for the
  jobs whose ``subtime`` is not after the submitter's clock, one JOB_SUBMITTED; then sleep
  ``next subtime - clock of the last wake-up``, so each wake-up is late by the time the previous
  post took; woken, a submitter takes the job it slept for even when the clock stops 1e-16 s short
  of its ``subtime``; the jobs are SUBMITTED when the server receives them (``subtime`` in the
  outputs stays the workload's).
* **Event submitters** (``static_event_submitter_process``, master host, one per ``--events``
  file, created after the job submitters) post a hello, then the events due at each instant in one
  EVENT_OCCURRED message, sleeping between instants as the job submitters do, and a goodbye
  (:mod:`.extevents`); the server changes the machines' states and tells the scheduler when it
  receives them.
* **Jobs, switches, killers** end on their host at the model's time (``finish_time``, machine
  states, energy rows), then post JOB_COMPLETED from the job's first host, SWITCHED_ON/OFF from
  the machine, KILLING_DONE from the master host; the scheduler hears of them, and
  ``out_jobs.csv`` gets their rows, when the server receives them.
"""

from __future__ import annotations

from collections import deque
from functools import partial
from typing import Any, Callable

from ..core.events import (
    CallMeLater, Decision, ExecuteJob, JobSubmitted, KillJobs, Notify, RequestedCall, SetResourceState,
    SimulationBegins, SimulationEnds,
)
from ..core.model import Job
from .clock import Clock
from .execution import RUNNING, SUBMITTED, Executions
from .extevents import GENERIC, MACHINE_AVAILABLE, EventList
from .hosts import Machines
from .instants import QuietInstants
from .jobs import JobBook
from .jobtable import due_end
from .platform import PlatformSpec
from .ports import EngineError, SchedulerPort
from .ptasks import HeldTask, ParallelTasks
from .queue import Kind
from .results import RunRecord
from .server import Server
from .subrounds import HostOrder, Rounds
from .switching import Switches
from .workload import Workload

#: The server's ``get`` among the sub-round's simcalls (:meth:`ActorServer._end_round`).
_GET = object()

# message types (the IPMessageType of src/ipp.hpp that the engine models)
_HELLO, _SUBMITTED, _BYE, _COMPLETED, _SWITCHED, _WAITED, _KILLED, _DECISION, _READY, _EVENTS, _EVENTS_BYE = range(11)
_RECV, _JOB_END = Kind.RECV, Kind.JOB_END


class _Submitter:
    """A static job submitter's state: its workload, next job index, clock of its last wake-up."""

    __slots__ = ("w", "k", "clock")

    def __init__(self, w: Workload) -> None:
        self.w, self.k, self.clock = w, 0, 0.0


class _EventSubmitter:
    """An external event submitter's state (``static_event_submitter_process``): its event list
    (:class:`.extevents.EventList`) and their timestamps, next event index, clock of its last
    wake-up."""

    __slots__ = ("lst", "times", "k", "clock")

    def __init__(self, lst: EventList) -> None:
        self.lst, self.k, self.clock = lst, 0, 0.0
        self.times = [e.timestamp for e in lst.events]


class ActorServer:
    """Batsim's actors and server with message delays (see the module docstring).

    Args:
        server: Batsim's server state and decisions.
        rounds: the sub-rounds of each instant.
        executions, ptasks, switches, machines, book, record, clock: the components it asks.
        timers: SimGrid's step clock (:class:`.steps.StepQueue` or, every route empty,
            :class:`.lazysteps.LazyStepQueue`).
        platform: the platform (``message_delays`` not None).
        workloads: the static workloads, in order.
        events: the ``--events`` files' event lists.
        energy: Batsim's ``-E``.
        forward_profiles: Batsim's ``--forward-profiles-on-submission``.
    """

    def __init__(self, server: Server, rounds: Rounds, executions: Executions, ptasks: ParallelTasks,
                 switches: Switches, machines: Machines, book: JobBook, record: RunRecord, *, clock: Clock,
                 timers: Any, platform: PlatformSpec, workloads: list[Workload], events: list[EventList],
                 energy: bool, forward_profiles: bool, quiet_instants: bool = False) -> None:
        self.server = server
        self.buffer = server.buffer
        self.rounds = rounds
        self._after = rounds.after
        self.executions = executions
        self.ptasks = ptasks
        self.switches = switches
        self.machines = machines
        self.hosts = machines.hosts
        self.book = book
        self.jobs = book.live
        self.record = record
        self.clock = clock
        self.timers = timers
        self.platform = platform
        self.workloads = workloads
        self.events = events
        self.energy = energy
        self.forward_profiles = forward_profiles
        d = platform.message_delays
        assert d is not None
        # a message's route: (latency s, rate B/s, the links its byte may share), played on
        # SimGrid's clock (.steps). A FATPIPE link is shared too: SimGrid's solver takes off it,
        # each round, the smallest amount among its flows, those that left included, so a job's
        # flow speeds up the messages there (.sharing._fatpipe_rounds)

        def route(r: Any, links: Any) -> tuple:
            shared = tuple((ln, 1.0) for ln in links)
            return (*r, shared)
        self._d_master = route(d.master_route, d.master_links)
        self._d_host = [route(d.host_routes[h.spec.name], d.host_links.get(h.spec.name, ())) for h in self.hosts]
        self._mailbox: deque = deque()   # posted, not yet matched
        self._waiting = False            # the server is blocked in receive with nothing matched
        self._in_flight = 0              # posted and not yet handled by the server
        self._closing = False  # SIMULATION_ENDS sent, its acknowledgement not received yet
        # quiet instants played in one call (.instants): where energy alone chose the actor model
        self.quiet_instants = quiet_instants

    def _stopped(self) -> bool:
        """Whether the run has ended (the sub-rounds left are not played)."""
        return self.server.ended

    def _post(self, mtype: int, payload: Any, delay: tuple, then: Callable[[], Any] | None = None,
              sender: int = -1) -> None:
        """An actor sends a message to the server (``send_message``, ``src/ipp.cpp``): it looks
        the mailbox up (``Mailbox::by_name``, a simcall), then its ``put`` reaches the mailbox
        at the end of the next sub-round. ``then``: what the sender does once the transfer is
        over; ``sender``: the compute host it is sent from (-1: the master host)."""
        self._in_flight += 1
        msg = (mtype, payload, delay, then, sender)
        self._after(1, lambda: self.rounds.outbox.append(msg))

    def _end_round(self) -> None:
        """End of a sub-round: SimGrid handles the simcalls issued in it, in the order the
        actors ran: each ``put`` is matched by a server blocked in receive, else waits in the
        mailbox; the server's ``get`` (:data:`_GET`) takes the oldest message there, or blocks."""
        out = self.rounds.outbox
        if not out:
            return
        self.rounds.outbox = []
        for msg in out:
            if msg is _GET:
                if self._mailbox:
                    self._transfer(self._mailbox.popleft())
                else:
                    self._waiting = True
            elif self._waiting:
                self._waiting = False
                self._transfer(msg)
            else:
                self._mailbox.append(msg)

    def _receive(self) -> None:
        """The server calls ``receive_message``: ``Mailbox::by_name`` (a simcall), then its
        ``get`` in the next sub-round, in order with the ``put`` of that sub-round."""
        self._after(1, lambda: self.rounds.outbox.append(_GET))

    def _transfer(self, msg: tuple) -> None:
        """A message is matched: its transfer starts (a latency, then its byte)."""
        lat, rate, links = msg[2]
        a = self.timers.message(lat, rate, _RECV, msg, links)
        if links and a is not None and not lat > 0:
            self.ptasks.flow_starts(a)


    def _on_received(self, msg: tuple, port: SchedulerPort) -> None:
        mtype, payload, _, then, sender = msg
        flow = self.ptasks.message_received(msg)
        if sender >= 0:
            # the message is a ptask-model action on the sender's and the master's hosts: its
            # end updates their energy (host_energy.cpp, on_action_state_change), at the loads
            # of the last solve (its byte still in it)
            self.machines.updated((sender,))
        self._server_handle(mtype, payload, port)
        if then is not None:
            then()
        if flow is not None:
            self.ptasks.flow_ends(flow)

    # ------------------------------------------------------------------------------- server
    def _server_handle(self, mtype: int, payload: Any, port: SchedulerPort) -> None:
        """``server_process``: handle one message; after the handler's simcalls, maybe talk to
        the scheduler, then receive again."""
        self._in_flight -= 1
        simcalls, reads = 0, None
        if mtype == _DECISION:
            kill = self.server.apply(payload)
            if kill is not None:   # the killer actor (a KILL_JOB that kills)
                self.server.killers += 1
                self._killer(*kill)
            simcalls, reads = self._decision_simcalls(payload)
        elif mtype == _READY:
            self.server.ready = True
            if self._closing:   # the ACK of SIMULATION_ENDS: the run is over
                self.server.ended = True
                self.clock.end = self.clock.now
                return
        elif mtype == _SUBMITTED:
            for j in payload:
                j.state = SUBMITTED
                w = self.book.by_name[j.workload]
                prof = w.profiles[j.profile] if self.forward_profiles else None
                self.buffer.append(JobSubmitted(self.clock.now, job=Job.from_json(j.id, j.raw, prof)))
        elif mtype == _COMPLETED:
            self.server.job_completed(payload)
        elif mtype == _SWITCHED:
            self.switches.switching -= 1
            if self.switches.mark_switch_done(*payload, machine_row=True) and self.energy:
                reads = HostOrder((), len(self.hosts))   # the group's energy row reads every host
        elif mtype == _WAITED:
            self.server.waiters -= 1
            self.buffer.append(RequestedCall(self.clock.now))
        elif mtype == _KILLED:
            self.server.killers -= 1
            self.server.killing_done(*payload)
        elif mtype == _BYE:
            self.server.submitters_left -= 1
            if self.server.submitters_left == 0:
                self.buffer.append(Notify(self.clock.now, type="no_more_static_job_to_submit"))
        elif mtype == _EVENTS:
            self._events_occurred(payload)
        elif mtype == _EVENTS_BYE:
            self.server.event_submitters_left -= 1
            if self.server.event_submitters_left == 0:
                self.buffer.append(Notify(self.clock.now, type="no_more_external_event_to_occur"))
        if reads is not None:
            self.rounds.read_energy(reads, lambda: self._server_check(port), simcalls)
        elif simcalls:
            self._after(simcalls, lambda: self._server_check(port))
        else:
            self._server_check(port)

    def _decision_simcalls(self, d: Decision) -> tuple[int, Any]:
        """The simcalls Batsim's server makes handling decision ``d`` (``src/server.cpp``):
        an actor created for EXECUTE_JOB (the job), CALL_ME_LATER (its waiter) and KILL_JOB
        (the killer); for SET_RESOURCE_STATE the energy row reads every host, then one
        ``set_pstate`` or switching actor per host. Returns (simcalls, hosts read first)."""
        if isinstance(d, (ExecuteJob, CallMeLater, KillJobs)):
            return 1, None
        if isinstance(d, SetResourceState):
            return len(d.resources), HostOrder((), len(self.hosts))
        return 0, None

    def _killer(self, ids: list[str], really: list) -> None:
        """``killer_process`` (``src/jobs_execution.cpp``), created by the server handling a
        KILL_JOB (a simcall): it runs in the next sub-round of this instant, kills each running
        job of ``really`` (``Actor::kill`` or ``Exec::cancel``: one simcall each) and posts its
        KILLING_DONE: before a message posted in a later step, such as the request-reply actor's
        SCHED_READY once the server has received it (recorded on real Batsim 4.2.1,
        ``tests/fixtures/batsim_kill``: a kill at the end of a reply's delay reports in the same
        message as the job ends of that instant)."""
        def kill() -> None:
            progress = self.executions.kill_running(really)
            self._after(len(really), lambda: self._post(_KILLED, (ids, progress), self._d_master))

        self._after(1, kill)

    def _server_check(self, port: SchedulerPort) -> None:
        """Back in ``server_process``'s loop: if the scheduler is ready, look at the mailbox
        (``mailbox_empty``: ``Mailbox::by_name``, a simcall, then the test a sub-round later);
        else receive."""
        if self.server.ready and not self._closing:
            self._after(1, lambda: self._server_test(port))
        else:
            self._receive()

    def _server_test(self, port: SchedulerPort) -> None:
        """The mailbox empty (messages posted in this sub-round are not in it yet), send the
        scheduler the events gathered so far, or end the simulation; then receive."""
        if not self._mailbox:
            if self.buffer:
                self._send(port)
                return
            if self.server.finished() and self._in_flight == 0 and not self.jobs:
                # (not self.jobs: every job's JOB_COMPLETED was received, not only its end in the
                # model; with messages of no duration a job actor may still be reading energy)
                self.buffer.append(SimulationEnds(self.clock.now))
                ready_at, _ = self.server.reply_parts(self.server.exchange(port))
                # the server leaves its loop when the request-reply actor's SCHED_READY arrives
                # (server_process): that message's time is SimGrid's final clock
                self._closing = True
                self.server.ready = False
                self._after(1, lambda: self._reqrep(deque(), ready_at))
                self._after(1, self._receive)   # (after the Actor::create simcall)
                return
        self._receive()

    def _send(self, port: SchedulerPort) -> None:
        """``generate_and_send_message``: the request-reply actor talks to the scheduler and
        starts posting its decisions later in this instant."""
        ready_at, decisions = self.server.reply_parts(self.server.exchange(port))
        self.server.ready = False
        # the server's Actor::create is a simcall: the request-reply actor runs a sub-round later,
        # and so does the server (it receives then)
        self._after(1, lambda: self._reqrep(deque(decisions), ready_at))
        self._after(1, self._receive)

    def _reqrep(self, decisions: deque, ready_at: float, woke: bool = False) -> None:
        """The request-reply actor posts its next decision (or SCHED_READY) at its time
        (``JsonProtocolReader::send_message_at_time``: ``sleep_for(when - clock)`` if ``when`` is
        later, then the message). ``woke``: that sleep is over; the message goes even if
        SimGrid's clock stopped short of ``when`` (a sleep ends in the first step that leaves it
        less than ``precision/timing``: at 2e6 s, where a double's spacing is 2.3e-10 s, a
        timestamp of the next printed microsecond is reached by a message step that does not move
        the clock; recorded on real Batsim 4.2.1, ``tests/fixtures/batsim_full_loopback``,
        ``late.json``: a job starts before its ``subtime``)."""
        if decisions:
            ts = decisions[0].timestamp
            if ts is None:   # dated by the reply's now
                ts = ready_at
            if not woke and ts > self.clock.now:
                self.timers.sleep(ts - self.clock.now, Kind.DECISION, (decisions, ready_at, True))
                return
            self._post(_DECISION, decisions.popleft(), self._d_master, lambda: self._reqrep(decisions, ready_at))
        elif not woke and ready_at > self.clock.now:
            self.timers.sleep(ready_at - self.clock.now, Kind.DECISION, (decisions, ready_at, True))
        else:
            self._post(_READY, None, self._d_master)

    # ------------------------------------------------------------------------------- actors
    def _submit_step(self, s: _Submitter, woke: bool = False) -> None:
        """``static_job_submitter_process`` from its clock ``s.clock``: post the jobs due
        (:func:`.jobtable.due_end`), sleep (:meth:`_submitter_next`). Before its first job, with energy, it
        reads every host's energy (``total_consumed_energy``) if Batsim's
        ``energy_first_job_submission`` is not yet set; that is set once the reading is over, so
        the submitters whose first job comes while another reads read too, beside it (their
        JOB_SUBMITTED in the order they woke)."""
        table, subtimes = s.w.jobs, s.w.jobs.subtimes
        k0 = s.k
        s.k = due_end(subtimes, k0, s.clock, woke)
        first_read = s.k > k0 and self.energy and self.record.first_submission[0] < 0
        batch = []
        for k in range(k0, s.k):
            job = table.job(k)  # the engine's from now on (state NOT_SUBMITTED until received)
            self.jobs[job.id] = job
            batch.append(job)
        step = self._submitter_next(s, batch, _SUBMITTED, _BYE, s.w, subtimes, Kind.SUBMIT)
        if first_read:
            def read_over() -> None:
                self.record.first_submission = self.machines.total_exact()
                step()
            self.rounds.read_energy(HostOrder((), len(self.hosts)), read_over)
        else:
            step()

    def _event_step(self, s: _EventSubmitter, woke: bool = False) -> None:
        """``static_event_submitter_process`` (``src/event_submitter.cpp``, the job submitter's
        twin) from its clock ``s.clock``: post the events due in one EVENT_OCCURRED message, then
        sleep or say goodbye."""
        k0 = s.k
        s.k = due_end(s.times, k0, s.clock, woke)
        self._submitter_next(s, s.lst.events[k0:s.k], _EVENTS, _EVENTS_BYE, s, s.times, Kind.EVENT)()

    def _submitter_next(self, s: _Submitter | _EventSubmitter, batch: list, msg: int, bye: int, bye_payload: Any,
                        times: list[float], wake: Kind) -> Callable[[], None]:
        """What a submitter (job or event) does once it has taken ``batch``: post it as one
        message ``msg`` (nothing when empty), then sleep ``times[s.k] - clock of its last
        wake-up`` (``sleep_for``, woken by a ``wake`` entry), or post its goodbye ``bye`` after the
        last item. Returns that as a callable (the job submitter may read energy first)."""
        if s.k == len(times):
            then = lambda: self._post(bye, bye_payload, self._d_master)  # noqa: E731
        else:
            nxt = times[s.k]
            then = lambda: self.timers.sleep(nxt - s.clock, wake, s)  # noqa: E731
        return (lambda: self._post(msg, batch, self._d_master, then)) if batch else then

    def _events_occurred(self, events: list) -> None:
        """``server_on_event_occurred``: each event in turn; a machine event changes the machines'
        state and is told to the scheduler (NOTIFY ``event_machine_(un)available``), a generic
        event is forwarded as it is (NOTIFY whose data is the event's object); a machine event
        without machines does nothing."""
        for ev in events:
            if ev.kind == GENERIC:
                self.buffer.append(Notify(self.clock.now, type=ev.type,
                                           data={k: v for k, v in ev.data.items() if k != "type"}))
            elif ev.resources:
                available = ev.kind == MACHINE_AVAILABLE
                try:
                    self.machines.availability(ev.resources, available)
                except EngineError as exc:   # the events file's fault: name it and the line
                    raise EngineError(f"{ev.source}: {exc}" if ev.source else str(exc)) from None
                if self.record.paje is not None:
                    self.record.paje.availability(self.clock.now, ev.resources, available)
                self.buffer.append(Notify(self.clock.now, type="event_machine_available" if available
                                           else "event_machine_unavailable", data={"resources": str(ev.resources)}))

    def _net_event(self, kind: int, payload: Any, port: SchedulerPort) -> None:
        if kind == _RECV:
            self._on_received(payload, port)
        elif kind == Kind.MSG_ACTIVE:
            self.ptasks.flow_starts(payload)
        elif kind == Kind.DECISION:
            self._reqrep(*payload)
        elif kind == _JOB_END:
            end = self.ptasks.job_end_of(payload)
            if end is None:
                return
            job, version, walltime = end
            if isinstance(job, HeldTask):
                self.ptasks.held_ended(job, version)
                return
            # at its walltime the job actor stops waiting for its task but holds it until its
            # JOB_COMPLETED has been received ("Held tasks" in .execution)
            live = walltime and version == job.version and job.state == RUNNING
            held = self.ptasks.hold_task(job) if live else None
            if not self.executions.stage_ended(job, version, walltime, held is not None):
                return
            first = min(job.hosts)

            def completed() -> None:
                self._post(_COMPLETED, job, self._d_host[first], lambda: self.ptasks.release_task(held), sender=first)

            if self.energy:
                # execute_job_process: the job's energy (its hosts), then the energy row (all hosts)
                self.rounds.read_energy(HostOrder(sorted(job.hosts), len(self.hosts)), completed)
            else:
                completed()
        elif kind == Kind.SUBMIT:
            payload.clock = self.clock.now
            self._submit_step(payload, woke=True)
        elif kind == Kind.SWITCH:
            hid, target = payload
            if not (self.rounds.switches_applied and hid in self.rounds.switches_applied):
                self.switches.switch_reached(hid, target, state=False)
            # switch_on/off_machine_process: set_pstate (a simcall), then the machine state and
            # the message: a job ending at this instant writes its machine-state row first
            # (recorded on Batsim 4.2.1: pybatsim_fcfsSchedSleep_intfix_6pstates, t = 43)

            def switched() -> None:
                self.switches.switch_state(hid, target)
                self._post(_SWITCHED, (hid, target), self._d_host[hid], sender=hid)

            self._after(1, switched)
        elif kind == Kind.EVENT:
            payload.clock = self.clock.now
            self._event_step(payload, woke=True)
        elif kind == Kind.WAITER:
            self._post(_WAITED, None, self._d_master)
        elif kind == Kind.LATENCY:  # a model event, no message to the server
            self.ptasks.latency_paid(*payload)
        else:
            raise AssertionError(kind)

    # ---------------------------------------------------------------------------------- run
    def run(self, port: SchedulerPort, begins: SimulationBegins) -> None:
        """The simulation loop with message delays, from t = 0 (SIMULATION_BEGINS: ``begins``)
        to the end, one simulated instant at a time (:meth:`play_instant`).

        Raises:
            Deadlock: nothing left to simulate before the end (:meth:`.server.Server.deadlock`).
            EngineError: an invalid decision, a livelock."""
        # t = 0: the submitters (created first) say hello; the server sends SIMULATION_BEGINS,
        # its request-reply actor will post the reply; the server then receives.
        for w in self.workloads:
            self.server.submitters_left += 1
            s = _Submitter(w)
            self._post(_HELLO, s.w, self._d_master, partial(self._start_submitter, s))
        # then the event submitters (created after them, batsim.cpp), one per events file
        for lst in self.events:
            self.server.event_submitters_left += 1
            es = _EventSubmitter(lst)
            self._post(_HELLO, lst, self._d_master, partial(self._start_event_submitter, es))
        self.buffer.append(begins)
        self._send(port)   # (then the server receives)
        self.rounds.run(self._end_round, self._stopped)
        nb_jobs = self.book.nb_jobs
        server = self.server
        lone = getattr(self.timers, "pop_lone", None)
        # (made for the run only: it refers back to this server)
        quiet = QuietInstants(self) if self.quiet_instants else None
        while not server.ended:
            self.play_instant(port, lone, quiet)
            if server.progress is not None:
                server.progress(self.clock.now, self.book.finished, nb_jobs)

    def play_instant(self, port: SchedulerPort, lone: Callable[[], tuple | None] | None,
                     quiet: QuietInstants | None = None) -> None:
        """One simulated instant of the actor model: the clock moves to the next step of
        SimGrid's clock, the actors its actions wake run (sub-round 1), then the instant's
        further sub-rounds (:meth:`.subrounds.Rounds.run`). ``lone``: the lazy step clock's
        shortcut for a message alone in a step of 0 s (:meth:`.lazysteps.LazyStepQueue.pop_lone`);
        ``quiet``: the player of instants one actor alone acts in, in one call
        (:class:`.instants.QuietInstants`), or None."""
        rounds = self.rounds
        rounds.waking = True
        z = lone() if lone is not None else None
        if z is not None:   # one message alone in a step of 0 s: next_instant's work, inlined
            if self.machines.lazy_hosts:
                self.machines.settle_lazy()
            self.clock.mark_live()
            self._net_event(z[1], z[2], port)
        else:
            entries = self.server.next_instant()
            if quiet is not None and len(entries) == 1 and quiet.play(entries[0], port):
                entries = []   # (a quiet instant, played: .instants)
            if self.energy and len(entries) > 1:
                rounds.instant_switches = {p[0]: p[1] for k, p in entries if k == Kind.SWITCH} or None
            for kind, payload in entries:
                self._net_event(kind, payload, port)
                if self.server.ended:
                    break
            rounds.instant_switches = rounds.switches_applied = None
        rounds.run(self._end_round, self._stopped)

    def _start_submitter(self, s: _Submitter) -> None:
        s.clock = self.clock.now
        self._submit_step(s)

    def _start_event_submitter(self, s: _EventSubmitter) -> None:
        s.clock = self.clock.now
        self._event_step(s)


def network_refusal(platform: PlatformSpec) -> EngineError:
    """The error for a networked platform whose message timing the engine cannot compute."""
    return EngineError(f"{platform.network_error}; the embedded engine cannot time Batsim's messages on this "
                       "network: use real Batsim (gridsched run --engine batsim)")
