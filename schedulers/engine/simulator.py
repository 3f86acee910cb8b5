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
* :mod:`.execution` — profile stages, parallel tasks, compute sharing, walltime, kills;
* :mod:`.sharing` — SimGrid's ``ptask_L07`` sharing of hosts between tasks;
* :mod:`.server` — Batsim's server: message grouping, decisions, decision delays,
  livelock detection, SIMULATION_BEGINS/ENDS;
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
Otherwise it groups the messages of one step itself (:mod:`.server`), about 1.7 times faster (10k one-host jobs: 0.9 s against 1.5 s of
engine time), with the same results on every recorded case and on 129 random cases compared
with real Batsim 4.2.1 with the actor model forced everywhere.
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any, Callable

from .execution import ExecutionMixin
from .extevents import EventList
from .clock import Clock
from .hosts import HostRun, Machines, MACHINE_STATES
from .netroute import instant_messages
from .netserver import NetworkServerMixin, network_refusal
from .platform import PlatformSpec, old_power_names, sleep_error
from .ports import Deadlock, EngineError, InProcessPort, Reply, SchedulerPort
from .queue import EventQueue
from .steps import StepQueue
from .switching import Switches
from .dynamic import DynamicJobs
from .jobs import JobBook
from .lazysteps import LazyStepQueue
from .results import NULL_RUNTIME_EPSILON, EngineResult, RunRecord, build_result, execution_time
from .server import LIVELOCK_EXCHANGES, ServerMixin
from .workload import Workload

__all__ = ["Engine", "EngineError", "Deadlock", "EngineResult", "InProcessPort", "Reply", "SchedulerPort", "HostRun",
           "MACHINE_STATES", "NULL_RUNTIME_EPSILON", "LIVELOCK_EXCHANGES", "execution_time"]


class Engine(NetworkServerMixin, ServerMixin, ExecutionMixin):
    """Simulate workloads on a platform, driving a scheduler through a :class:`SchedulerPort`.

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
                 progress: Callable[[float, int, int], None] | None = None) -> None:
        if platform.vivaldi_error is not None:
            raise EngineError(platform.vivaldi_error)
        if platform.unsimulated is not None:
            raise EngineError(platform.unsimulated)
        if platform.has_network and platform.message_delays is None:
            raise network_refusal(platform)
        if profile_reuse and not dynamic_jobs:
            raise EngineError("profile reuse (--enable-profile-reuse) needs dynamic jobs (--enable-dynamic-jobs); "
                              "Batsim 4.2.1 refuses it alone")
        if energy and not platform.has_energy:
            missing = [h.name for h in platform.compute if h.power is None][:5]
            note = next((n for n in map(old_power_names, platform.compute) if n), "")
            raise EngineError(f"{platform.source}: energy (-E) needs 'wattage_per_state' on every compute "
                              f"host; missing on {', '.join(missing)}{note}")
        if energy and sleep_error(platform):
            raise EngineError(sleep_error(platform))
        if energy and platform.storage:
            names = ", ".join(repr(h.name) for h in platform.storage[:5])
            raise EngineError(f"{platform.source}: storage hosts ({names}) with energy (-E): real Batsim 4.2.1 counts "
                              "their power in out_consumed_energy.csv and lists them in out_pstate_changes.csv; the "
                              "embedded engine does not model them: run real Batsim (--engine batsim), or run "
                              "without -E")
        if events and platform.message_delays is None and platform.master_loopback:
            raise EngineError(f"{platform.source}: external events (--events) on a platform whose master host's "
                              "routing the engine does not know: use real Batsim (--engine batsim)")
        if _needs_actor_model(platform, workloads, energy, dynamic_jobs) or (events and platform.message_delays is None):
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
        self.progress = progress
        # The jobs (.jobs): held as EngineJob when submitted (posted, with a network) and not yet
        # finished; not submitted, they stay in their workload's JobTable; an ended job becomes
        # a row of ``done`` once its out_jobs.csv row is written (:meth:`_write_job_row`).
        self.book = JobBook(workloads)
        self.workloads_by_name = self.book.by_name
        self.jobs = self.book.live
        self.done = self.book.done       # ended jobs, in the order they ended (the result's jobs)
        self.clock = Clock()
        # SimGrid's step-by-step clock: with a network it decides the order of messages (.steps);
        # on compute-only platforms it is kept lazily (.lazysteps). Only a Full zone whose routes
        # the reader does not know keeps the clock rounded to 1e-9 s (.queue, server.py)
        self._steps = platform.message_delays is not None or not platform.master_loopback
        self._queue: EventQueue | StepQueue | LazyStepQueue
        if not self._steps:
            self._queue = EventQueue()
        elif platform.routes is not None or platform.master_loopback:   # links, or the loopback: timed messages
            self._queue = StepQueue()
        else:   # compute-only: sleeps, computations and messages of no duration
            self._queue = LazyStepQueue()
        self._buffer: list = []          # events gathered for the next message to the scheduler
        self._port = None
        self._ready = True               # Batsim's sched_ready
        self._ended = False
        self._closing = False  # SIMULATION_ENDS sent, its acknowledgement not received yet (.netserver)
        self._same_instant = [0.0, None, 0]
        # Batsim's server counters
        self._finished_jobs = 0
        self._running = 0
        self._waiters = 0
        self._killers = 0
        self._kills_done: list = []      # compute-only platforms: kills done in the reply being played
        self._kill_requested: set = set()  # jobs whose kill was asked, until Batsim deletes them
        self._unsent_ends: set = set()   # jobs whose end reached the server since the last message sent
        self._submitters_left = 0
        self.events = list(events)
        self._event_submitters_left = 0
        self._ptasks = 0                 # parallel tasks created so far
        self._link_users: dict = {}      # link (netroute._Link) -> {job id: job} loading it
        self._quiet: dict = {}           # message bytes alone on their links (.netserver._flow_starts)
        self._nheld = 0                  # held tasks in the system (execution.HeldTask)
        # outputs: the tables, the Pajé trace, Batsim's energy context, the exchanges (.results)
        self.record = RunRecord(self.done, trace=trace_outputs,
                                machine_names=[h.name for h in platform.compute] + [h.name for h in platform.storage])
        self.rows = self.record.rows
        self.machines = Machines(platform, energy=energy, trace=trace_outputs, rows=self.rows, nb_jobs=self.nb_jobs,
                                 clock=self.clock, steps=self._steps)
        # the components' calls into the engine's own parts go through a weak proxy: no reference
        # cycle, so that an engine (and the jobs it holds) is freed as soon as it is dropped
        me = weakref.proxy(self)

        def post(event: Any) -> None:
            me._post_event(event)

        def dvfs(hids: list[int], target: int) -> None:
            me._dvfs(hids, target)

        def routed(hids: Any, what: str) -> None:
            me._routed(hids, what)

        self.dynamic = DynamicJobs(self.book, clock=self.clock, post=post, enabled=dynamic_jobs,
                                   acknowledge=acknowledge_dynamic_jobs, forward_profiles=forward_profiles,
                                   profile_reuse=profile_reuse)
        self.switches = Switches(self.machines, clock=self.clock, timers=self._queue, steps=self._steps,
                                 post=post, dvfs=dvfs, routed=routed)
        #: the compute hosts' run-time state, in Batsim's id order (owned by :attr:`machines`)
        self.hosts = self.machines.hosts
        #: Batsim's ``--disable-storage-sharing`` (only said in SIMULATION_BEGINS: the engine runs
        #: no storage job) and the ``config`` entries of its command line (``sched-config``,
        #: ``redis-*``, ``forward-unknown-events``) that SIMULATION_BEGINS forwards
        self.storage_sharing = True
        self.batsim_config: dict[str, Any] = {}
        if self.events and forward_unknown_events:   # (Batsim ignores the flag without events)
            self.batsim_config["forward-unknown-events"] = True

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

    def _post_event(self, event: Any) -> None:
        """Add ``event`` to the next message to the scheduler."""
        self._buffer.append(event)

    def _result(self, wall: float) -> EngineResult:
        if self.machines.lazy_hosts:
            self.machines.settle_lazy()
        return build_result(self.record, self.book, self.machines, self.switches, self.clock, self.platform,
                            self.energy, wall)


#: The profile types that compute (``cpu`` flops per host).
_COMPUTING = ("parallel_homogeneous", "parallel_homogeneous_total", "parallel")


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
