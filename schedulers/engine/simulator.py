"""The embedded Batsim-compatible engine: Batsim's side of the protocol, in Python.

Semantics follow real Batsim 4.2.1 + SimGrid 3.32 for compute-only platforms. The engine is one
class, :class:`Engine`, composed of components that own their state (``docs/engine/architecture.md``)
and of modules that each read alone:

* :mod:`.clock` — the current time (:class:`.clock.Clock`, the component every other reads);
* :mod:`.lazysteps` — SimGrid's step clock on compute-only platforms (how time moves; :mod:`.queue`
  names the timers, and keeps a clock rounded to 1e-9 s for Full zones of unknown routing);
* :mod:`.hosts` — the :class:`.hosts.Machines` component: machine states, power and energy;
* :mod:`.switching` — the :class:`.switching.Switches` component: SET_RESOURCE_STATE, pstate
  switching;
* :mod:`.jobs` — the :class:`.jobs.JobBook` component: the jobs held, ended and forgotten;
* :mod:`.dynamic` — the :class:`.dynamic.DynamicJobs` component: REGISTER_PROFILE, REGISTER_JOB,
  profile garbage collection;
* :mod:`.execution` — the :class:`.execution.Executions` component: profile stages, walltime,
  kills, the ends of jobs;
* :mod:`.ptasks` — the :class:`.ptasks.ParallelTasks` component: SimGrid's parallel tasks in
  flight (rates, links, messages' bytes, held tasks, end timers);
* :mod:`.sharing` — SimGrid's ``ptask_L07`` sharing of hosts between tasks;
* :mod:`.server` — the :class:`.server.Server` component: Batsim's server (decisions, job
  ends, the exchange with the scheduler, livelock and deadlock detection);
* :mod:`.grouping` — the :class:`.grouping.GroupedServer` component: the server's messages of
  one step grouped by the engine itself (compute-only platforms);
* :mod:`.netserver` and :mod:`.subrounds` — the :class:`.netserver.ActorServer` and
  :class:`.subrounds.Rounds` components: Batsim's actor model, message by message, and the
  sub-rounds of each instant;
* :mod:`.results` and :mod:`.outputs` — the run's metrics and Batsim's output files.

Memory: jobs stream through the engine. A workload's jobs wait in its
:class:`~.jobtable.JobTable`, packed (about 100 bytes a job), until the static submitter
reaches their ``subtime``; only then is a job's :class:`~.workload.EngineJob` made (with the
JSON object JOB_SUBMITTED forwards). ``Engine.jobs`` holds the jobs submitted and not ended;
once a job's end reaches the server (its ``out_jobs.csv`` row), the engine keeps only its row
in :class:`~.results.DoneJobs` (about 120 bytes). A decision naming a job that is not there
(ended, or not submitted yet) still finds it (:meth:`.jobs.JobBook.known`), as Batsim does.

On platforms with network links Batsim's internal messages (a job's completion, a switch's end,
a CALL_ME_LATER's wake-up, each decision) take their route's time: :mod:`.netroute` computes the
delays from the XML and :mod:`.netserver` plays Batsim's actors message by message (on Batsim's
``cluster_energy_128.xml`` a REQUESTED_CALL comes 0.6 ms after the time asked and a job's end reaches the scheduler
1.6 ms after it), on SimGrid's own clock, step by step (:mod:`.steps`, in place of :mod:`.queue`):
there two ends that print alike can be two steps, and which comes first decides the messages.
Routings the engine cannot time are refused (:class:`EngineError`). Links marked
``<prop id="virtual" value="yes"/>`` (zero latency, infinite bandwidth) are not a network
(:mod:`schedulers.engine.platform`).

On compute-only platforms (Vivaldi zones) the messages take no time but each is still one of
SimGrid's steps, of 0 s, and what Batsim's actors do between them orders a few things: the
zero-flop stages of a ``composed`` job end one step each, between the decisions of the reply
that started it (recorded on Batsim 4.2.1: ``tests/fixtures/batsim_zero_work_steps``, fuzz case
s38); with ``-E`` a job's end reads the energy of its hosts, then of every host, before it
posts its JOB_COMPLETED, each read of a host not yet updated at this instant a sub-round, so
jobs ending in one step post in an order their allocations decide (recorded: 10,000 jobs of 1-4
hosts under EASY on ``energy_platform_homogeneous_no_net_128.xml``, 834 rows of
``out_jobs.csv`` in another order when the engine grouped them itself; fuzz case s105). The
engine then plays the same actor model as on networks (:mod:`.netserver`, every route empty:
:func:`.netroute.instant_messages`, over the lazy step clock :mod:`.lazysteps`): with energy,
dynamic jobs, external events (:mod:`.extevents`), or a computing profile of no flops.
Otherwise it groups the messages of one step itself (:mod:`.grouping`), about 1.7 times faster (10k one-host jobs: 0.9 s against 1.5 s of
engine time), with the same results on every recorded case and on 129 random cases compared
with real Batsim 4.2.1 with the actor model forced everywhere, and on the ties of a CALL_ME_LATER
at a job's submission time (``batsim_call_submit_tie``). ``gridsched engine``, serving
schedulers it does not know, plays the actor model all the same (``Engine(actor_model=True)``):
the protocol suite of ``scripts/compare_with_batsim.py`` compares its every message with real
Batsim's.
"""

from __future__ import annotations

import dataclasses
import os
import time as _time
from typing import Any, Callable

from ..core.events import SimulationBegins
from ..core.model import Host, HostState
from .clock import Clock
from .dynamic import DynamicJobs
from .execution import Executions
from .extevents import EventList
from .stdhash import iteration_order
from .grouping import GroupedServer
from .hosts import HostRun, Machines, MACHINE_STATES
from .instants import wanted as quiet_wanted
from .jobs import JobBook
from .lazysteps import LazyStepQueue
from .netroute import instant_messages
from .netserver import ActorServer, network_refusal
from .platform import PlatformSpec, missing_power_error, sleep_error
from .ports import Deadlock, EngineError, InProcessPort, Reply, SchedulerPort
from .ptasks import ParallelTasks
from .queue import EventQueue
from .results import NULL_RUNTIME_EPSILON, EngineResult, RunRecord, build_result, execution_time
from .server import LIVELOCK_EXCHANGES, Server
from .steps import StepQueue
from .subrounds import Rounds
from .switching import Switches
from .workload import Workload

__all__ = ["Engine", "EngineError", "Deadlock", "EngineResult", "InProcessPort", "Reply", "SchedulerPort", "HostRun",
           "MACHINE_STATES", "NULL_RUNTIME_EPSILON", "LIVELOCK_EXCHANGES", "execution_time"]


class Engine:
    """Simulate workloads on a platform, driving a scheduler through a :class:`SchedulerPort`.

    A short composition of components, each owning its state (``docs/engine/architecture.md``):
    :attr:`clock` (:class:`.clock.Clock`), :attr:`book` (:class:`.jobs.JobBook`), :attr:`record`
    (:class:`.results.RunRecord`), :attr:`machines` (:class:`.hosts.Machines`), :attr:`ptasks`
    (:class:`.ptasks.ParallelTasks`), :attr:`dynamic` (:class:`.dynamic.DynamicJobs`),
    :attr:`switches` (:class:`.switching.Switches`), :attr:`rounds` (:class:`.subrounds.Rounds`),
    :attr:`executions` (:class:`.execution.Executions`), :attr:`server` (:class:`.server.Server`)
    and :attr:`delivery`, the server that delivers Batsim's messages:
    :class:`.netserver.ActorServer` (Batsim's actor model) where messages take time or the actors'
    order shows, else :class:`.grouping.GroupedServer`. Each is given, at construction, the
    components it asks, below it (never the engine, nor a component that holds it), so that an
    engine, with the jobs it holds, is freed as soon as it is dropped.

    Args:
        platform: the platform read by :func:`schedulers.engine.platform.read_platform`.
        workloads: workloads read by :func:`schedulers.engine.workload.load_workload` (w0, w1...).
        energy: Batsim's ``-E`` (energy model, pstate switches, energy outputs).
        compute_sharing: Batsim's ``--enable-compute-sharing``.
        forward_profiles: Batsim's ``--forward-profiles-on-submission``.
        dynamic_jobs: Batsim's ``--enable-dynamic-jobs`` (REGISTER_JOB / REGISTER_PROFILE).
        acknowledge_dynamic_jobs: Batsim's ``--acknowledge-dynamic-jobs`` (JOB_SUBMITTED for
            registered jobs).
        profile_reuse: Batsim's ``--enable-profile-reuse`` (needs ``dynamic_jobs``): profiles of
            finished jobs stay usable by REGISTER_JOB (see :mod:`.server`, garbage collection).
        events: Batsim's ``--events`` files, read by :func:`.extevents.read_events` (machines
            becoming unavailable and available again, generic events); played by Batsim's actor
            model (:mod:`.netserver`).
        forward_unknown_events: Batsim's ``--forward-unknown-events`` (said in SIMULATION_BEGINS
            when there are events; the events files were read with it).
        trace_outputs: keep the output rows (needed to write files).
        progress: called as ``progress(now, nb_finished, nb_jobs)`` after each instant.
        actor_model: play Batsim's actor model (:mod:`.netserver`) on compute-only platforms
            too, where the engine would otherwise group each step's messages itself
            (:mod:`.grouping`, faster): for schedulers the engine does not know
            (``gridsched engine``), whose messages the protocol suite compares with real Batsim's
            one by one (``scripts/compare_with_batsim.py --suite protocol``).

    Raises:
        EngineError: at construction, a network whose routing the engine cannot time (Vivaldi coordinates
            included, :func:`.platform.vivaldi_error`), or energy asked on a
            platform without power states; during :meth:`run`, invalid decisions, deadlocks and
            livelocks.
    """

    def __init__(self, platform: PlatformSpec, workloads: list[Workload], *, energy: bool = False,
                 compute_sharing: bool = False, forward_profiles: bool = False, dynamic_jobs: bool = False,
                 acknowledge_dynamic_jobs: bool = False, profile_reuse: bool = False, events: list[EventList] | tuple[()] = (),
                 forward_unknown_events: bool = False, trace_outputs: bool = True,
                 progress: Callable[[float, int, int], None] | None = None, actor_model: bool = False) -> None:
        if platform.vivaldi_error is not None:
            raise EngineError(platform.vivaldi_error)
        if platform.unsimulated is not None:
            raise EngineError(platform.unsimulated)
        if platform.has_network and platform.message_delays is None:
            raise network_refusal(platform)
        if profile_reuse and not dynamic_jobs:
            raise EngineError("profile reuse (--enable-profile-reuse) needs dynamic jobs (--enable-dynamic-jobs); "
                              "Batsim 4.2.1 refuses it alone")
        if energy and platform.power_error:
            raise EngineError(platform.power_error)
        if energy and (no_power := missing_power_error(platform)):
            raise EngineError(no_power)
        if energy and sleep_error(platform):
            raise EngineError(sleep_error(platform))
        if energy and any(h.power is None for h in platform.storage):
            missing = [h.name for h in platform.storage if h.power is None]   # (by id: name order)
            raise EngineError(f"{platform.source}: energy (-E) needs 'wattage_per_state' on the storage hosts too; "
                              f"missing on {', '.join(missing[:5])}: real Batsim 4.2.1 aborts at its first energy "
                              f"read (\"No power range properties specified for host {missing[0]}\")")
        if events and platform.message_delays is None and platform.master_loopback:
            raise EngineError(f"{platform.source}: external events (--events) on a platform whose master host's "
                              "routing the engine does not know: use real Batsim (--engine batsim)")
        if _needs_actor_model(platform, workloads, energy, dynamic_jobs or actor_model) \
                or (events and platform.message_delays is None):
            # the actor model with messages of no duration (see the module docstring)
            platform = dataclasses.replace(platform, message_delays=instant_messages(platform.compute))
        self.platform = platform
        self.workloads = workloads
        self.energy = energy
        self.sharing = compute_sharing
        self.forward_profiles = forward_profiles
        self.dynamic_jobs = dynamic_jobs
        self.acknowledge_dynamic_jobs = acknowledge_dynamic_jobs
        self.profile_reuse = profile_reuse
        self.trace = trace_outputs
        #: SIMULATION_BEGINS lists each workload's profiles in Batsim's order (its
        #: ``std::unordered_map``'s, :mod:`.stdhash`; about 1.5 s per million profiles) rather than in
        #: file order: set by ``gridsched engine`` (and with ``actor_model``), whose schedulers read
        #: the message as Batsim writes it (``tests/fixtures/batsim_profile_order``)
        self.profile_order = actor_model
        self.events = list(events)
        # The jobs (.jobs): held as EngineJob when submitted (posted, with a network) and not yet
        # finished; not submitted, they stay in their workload's JobTable; an ended job becomes
        # a row of ``done`` once its out_jobs.csv row is written (Server._write_job_row).
        self.book = JobBook(workloads)
        self.workloads_by_name = self.book.by_name
        self.jobs = self.book.live
        self.done = self.book.done       # ended jobs, in the order they ended (the result's jobs)
        self.clock = clock = Clock()
        # SimGrid's step-by-step clock: with a network it decides the order of messages (.steps);
        # on compute-only platforms it is kept lazily (.lazysteps). Only a Full zone whose routes
        # the reader does not know keeps the clock rounded to 1e-9 s (.queue, .grouping)
        steps = platform.message_delays is not None or not platform.master_loopback
        self._queue: EventQueue | StepQueue | LazyStepQueue
        if not steps:
            self._queue = EventQueue()
        elif platform.routes is not None or platform.master_loopback:   # links, or the loopback: timed messages
            self._queue = StepQueue()
        else:   # compute-only: sleeps, computations and messages of no duration
            self._queue = LazyStepQueue()
        timers = self._queue
        # the events gathered for the next message to the scheduler (the server's; the switches
        # and dynamic jobs post there too)
        buffer: list[Any] = []
        # outputs: the tables, the Pajé trace, Batsim's energy context, the exchanges (.results)
        self.record = RunRecord(self.done, trace=trace_outputs,
                                machine_names=[h.name for h in platform.compute] + [h.name for h in platform.storage])
        self.rows = self.record.rows
        self.machines = Machines(platform, energy=energy, trace=trace_outputs, rows=self.rows, nb_jobs=self.nb_jobs,
                                 clock=clock, steps=steps)
        self.ptasks = ParallelTasks(self.machines, self.book, clock=clock, timers=timers, steps=steps,
                                    sharing=compute_sharing, platform=platform)
        self.dynamic = DynamicJobs(self.book, clock=clock, post=buffer.append, enabled=dynamic_jobs,
                                   acknowledge=acknowledge_dynamic_jobs, forward_profiles=forward_profiles,
                                   profile_reuse=profile_reuse)
        self.switches = Switches(self.machines, clock=clock, timers=timers, steps=steps, post=buffer.append,
                                 dvfs=self.ptasks.dvfs, routed=self.ptasks.routed)
        self.rounds = Rounds(self.machines, self.switches, clock=clock)
        self.executions = Executions(self.ptasks, self.machines, self.book, self.record, self.rounds, clock=clock,
                                     timers=timers, steps=steps, platform=platform, energy=energy,
                                     sharing=compute_sharing)
        self.executions.io_lookups = self.dynamic.track_collection
        self.server = Server(self.book, self.executions, self.switches, self.dynamic, self.machines, self.record,
                             self.rounds, clock=clock, timers=timers, steps=steps, platform=platform, buffer=buffer,
                             energy=energy, dynamic_jobs=dynamic_jobs, trace=trace_outputs)
        self.server.progress = progress
        #: the server that delivers Batsim's messages: its actor model (:mod:`.netserver`) where
        #: messages take time or actors' order shows, else the engine's own grouping (:mod:`.grouping`)
        self.delivery: ActorServer | GroupedServer
        if platform.message_delays is not None:
            self.delivery = ActorServer(self.server, self.rounds, self.executions, self.ptasks, self.switches,
                                        self.machines, self.book, self.record, clock=clock, timers=timers,
                                        platform=platform, workloads=workloads, events=self.events, energy=energy,
                                        forward_profiles=forward_profiles,
                                        quiet_instants=quiet_wanted(platform, timers, energy=energy,
                                                                    dynamic_jobs=dynamic_jobs, events=bool(self.events),
                                                                    sharing=compute_sharing))
        else:
            self.delivery = GroupedServer(self.server, self.executions, self.ptasks, self.switches, self.machines,
                                          self.book, self.record, clock=clock, timers=timers, steps=steps,
                                          platform=platform, workloads=workloads, energy=energy,
                                          forward_profiles=forward_profiles)
        #: the compute hosts' run-time state, in Batsim's id order (owned by :attr:`machines`)
        self.hosts = self.machines.hosts
        #: the ``config`` entries of Batsim's command line (``sched-config``, ``redis-*``,
        #: ``forward-unknown-events``) that SIMULATION_BEGINS forwards
        self.batsim_config: dict[str, Any] = {}
        if self.events and forward_unknown_events:   # (Batsim ignores the flag without events)
            self.batsim_config["forward-unknown-events"] = True

    @property
    def progress(self) -> Callable[[float, int, int], None] | None:
        """Called as ``progress(now, nb_finished, nb_jobs)`` after each instant (None: not
        called); the :attr:`server`'s, which may be set at any time."""
        return self.server.progress

    @progress.setter
    def progress(self, fn: Callable[[float, int, int], None] | None) -> None:
        self.server.progress = fn

    @property
    def storage_sharing(self) -> bool:
        """Batsim's storage sharing (default True; ``--disable-storage-sharing``: a storage host
        runs one job at a time), said in SIMULATION_BEGINS and checked at EXECUTE_JOB
        (:mod:`.storagejobs`); may be set before the run."""
        return self.executions.storage_sharing

    @storage_sharing.setter
    def storage_sharing(self, on: bool) -> None:
        self.executions.storage_sharing = bool(on)

    @property
    def nb_jobs(self) -> int:
        """Jobs of the run so far: the workloads' and the registered ones (:attr:`book`'s)."""
        return self.book.nb_jobs

    @property
    def now(self) -> float:
        """The current simulation time (s), :attr:`clock`'s."""
        return self.clock.now

    def total_energy(self, t: float | None = None) -> float:
        """Energy consumed by all compute hosts since time 0 (J): :meth:`.hosts.Machines.total_energy`
        (Batsim's read, which updates every host).

        Raises:
            EngineError: ``t`` given and not the current time.
        """
        return self.machines.total_energy(t)

    def energy_so_far(self) -> float:
        """Energy consumed by all compute hosts from time 0 to now (J), read without updating any
        host: :meth:`.hosts.Machines.energy_so_far` (for observers of a paused run)."""
        return self.machines.energy_so_far()

    def run(self, port: SchedulerPort) -> EngineResult:
        """Run the simulation to its end, talking to the scheduler through ``port``.

        Raises:
            Deadlock: nothing left to simulate before the end (jobs left waiting with nothing
                scheduled, jobs that never end); its ``result`` is the run up to then, whose
                output files real Batsim 4.2.1 writes too (:class:`Deadlock`).
            EngineError: invalid decision, livelock (the scheduler keeps the clock at one instant).
        """
        wall0 = _time.perf_counter()
        try:
            self.server.start(port)
            self.delivery.run(port, self._simulation_begins())
        except Deadlock as dead:
            dead.result = self._result(_time.perf_counter() - wall0)
            raise
        return self._result(_time.perf_counter() - wall0)

    def _result(self, wall: float) -> EngineResult:
        if self.machines.lazy_hosts:
            self.machines.settle_lazy()
        return build_result(self.record, self.book, self.machines, self.switches, self.clock, self.platform,
                            self.energy, wall)

    def _simulation_begins(self) -> SimulationBegins:
        """The SIMULATION_BEGINS event Batsim 4.2.1 sends first (``server_on_simulation_begins``,
        ``src/server.cpp``): the hosts, the configuration, the workloads and their profiles."""
        hosts = []
        for i, h in enumerate(self.hosts):
            st = HostState.SLEEPING if h.state is HostState.SLEEPING else HostState.IDLE
            hosts.append(Host(id=i, name=h.spec.name, speeds=list(h.spec.speeds), cores=h.spec.cores,
                              properties=dict(h.spec.properties), zone_properties=dict(h.spec.zone_properties),
                              pstate=h.pstate, state=st, energy=self.energy))
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
                        pstate=h.pstate, state=HostState.IDLE, energy=self.energy)
                   for i, h in enumerate(self.platform.storage)]
        # Batsim keeps its workloads in a std::map by name (Workloads, src/workload.hpp): w0, w1,
        # w10, w2... (tests/fixtures/batsim_workload_order)
        by_name = sorted(self.workloads, key=lambda w: w.name.encode())
        return SimulationBegins(
            0.0, nb_resources=len(hosts) + len(storage), nb_compute_resources=len(hosts),
            nb_storage_resources=len(storage), allow_compute_sharing=self.sharing,
            allow_storage_sharing=self.storage_sharing, config=config,
            compute_resources=hosts, storage_resources=storage,
            workloads={w.name: batsim_filename(w.path) for w in by_name},
            profiles={w.name: self._listed_profiles(w) for w in by_name})

    def _listed_profiles(self, w: Workload) -> dict[str, dict]:
        """The profiles of workload ``w`` as SIMULATION_BEGINS lists them: those Batsim kept at
        load (:attr:`.workload.Workload.unreferenced` removed), in Batsim's map order with
        :attr:`profile_order`, else in file order (``w.profiles`` itself when none was removed)."""
        if self.profile_order:
            return {n: w.profiles[n] for n in iteration_order(w.profiles) if n not in w.unreferenced}
        if w.unreferenced:
            return {n: p for n, p in w.profiles.items() if n not in w.unreferenced}
        return w.profiles


def batsim_filename(path: str) -> str:
    """A workload's file name as SIMULATION_BEGINS gives it: Batsim 4.2.1's ``absolute_filename``
    (``src/batsim.cpp``): a name starting with ``/`` as it is, any other the working directory,
    ``/`` and the name, not normalised (``./`` and ``../`` kept; recorded in
    ``tests/fixtures/batsim_workload_paths``). A workload given as a dict (``<workload w0>``) keeps
    its label."""
    if path.startswith(("/", "<")):
        return path
    return os.getcwd() + "/" + path


#: The profile types run as parallel tasks (``cpu`` flops per host; the IO profiles have none).
_COMPUTING = ("parallel_homogeneous", "parallel_homogeneous_total", "parallel", "parallel_homogeneous_pfs",
              "data_staging")


def _needs_actor_model(platform: PlatformSpec, workloads: list[Workload], energy: bool, dynamic_jobs: bool) -> bool:
    """Whether a compute-only platform without a loopback runs the actor model of
    :mod:`.netserver` with messages of no duration (see the module docstring)."""
    return (platform.message_delays is None and not platform.master_loopback and platform.master is not None
            and (energy or dynamic_jobs or _zero_work_profile(workloads)))


def _zero_work_profile(workloads: list[Workload]) -> bool:
    """Whether a workload has a computing profile of no flops at all (on a compute-only platform
    its parallel task ends in a step of 0 s, interleaved with Batsim's messages)."""
    for w in workloads:
        for prof in w.profiles.values():
            if prof.get("type") in _COMPUTING:
                cpu = prof.get("cpu", 0)
                if not any(float(x) > 0 for x in (cpu if isinstance(cpu, list) else (cpu,))):
                    return True
    return False
