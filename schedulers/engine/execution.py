"""Job execution: profile stages, walltimes, kills, the ends of jobs.

A component of :class:`schedulers.engine.simulator.Engine`: :class:`Executions` owns the
execution of the jobs' profiles: EXECUTE_JOB's checks, each stage's start (its flops, its
communications' links and latency, its sleep), each stage's end (next stage, return code,
walltime) and the job's end (its hosts freed, its rows). It asks :class:`.ptasks.ParallelTasks`
for the rates of the tasks in flight (sharing, links, held tasks), :class:`.hosts.Machines` for
the hosts' states, power and energy, :class:`.jobs.JobBook` for the jobs (and counts the running
and finished ones there), :class:`.results.RunRecord` for the Pajé trace and Batsim's energy
context, the :class:`.clock.Clock` for the time, the event queue for the sleeps, and, with
message delays, :class:`.subrounds.Rounds` for the sub-rounds of Batsim's actors (a job's actor
starts a sub-round after the server creates it) and the switches ending at the instant.
It asks nothing of the server: the server calls it and handles what it returns.

Parallel tasks (Batsim 4.2.1 ``src/task_execution.cpp`` + SimGrid 3.32 ``ptask_L07``)
    ``delay`` profiles sleep: the hosts stay at idle power. Every computing profile runs as one
    SimGrid parallel task: on each allocated host ``h`` a part of ``f_h`` flops; the task's
    progress rate ``r`` (fraction of the task per second) is bounded by one core per part
    (``r <= speed_h / f_h``, ``L07Action::calculate_cpu_bound``), so alone on its hosts it runs
    in lockstep at ``r = min_h speed_h / f_h`` and host ``h`` carries ``f_h * r / speed_h``
    busy cores. ``parallel_homogeneous``: ``f_h = cpu``; ``parallel_homogeneous_total``:
    ``f_h = cpu / res``; ``parallel``: ``f_h = cpu[i]``; ``composed``: the sub-profiles one after
    the other, ``repeat`` times; the IO profiles ``parallel_homogeneous_pfs`` and
    ``data_staging``: no flops, bytes to, from or between storage hosts, which join the task's
    hosts (:mod:`.iotasks`). EXECUTE_JOB's ``additional_io_job`` adds its IO profile's flops
    and bytes to each such task (:mod:`.iojobs`); storage hosts in a job's allocation join its
    tasks with no flops (:mod:`.storagejobs`). A task of no work ends at once (Batsim then
    records an execution time of 1e-5 s).
Communications (platforms with links; ``L07Action::L07Action``, ``HostL07Model::update_actions_state``)
    A stage whose byte matrix has pairs with bytes > 0 (:meth:`Executions._stage_network`)
    adds one element per link of their routes to its variable, after its CPU elements. While the
    largest route latency is being paid the variable is disabled (penalty 0): no progress, no
    CPU load (``Kind.LATENCY`` ends the phase); then it is enabled as the newest variable and
    bounded by ``min(CPU bound, TCP_GAMMA / (2 max(latency_ij x bytes_ij)))``. Tasks coupled
    through links are solved together, with or without compute sharing.
Compute sharing (``--enable-compute-sharing``)
    Tasks sharing hosts get the rates of SimGrid's ``ptask_L07`` linear system, solved by
    :mod:`schedulers.engine.sharing`; only the tasks connected (through shared hosts) to a host
    whose load changed are re-solved. Without sharing every host runs at most one task and the
    lockstep rate above is that same solution. A task keeps one SimGrid action through its rate
    changes: its work left is the action's, ``rate x delta`` taken off at every step of SimGrid's
    clock (:mod:`.steps`, :mod:`.lazysteps`), not ``rate x`` the time since the last change,
    so that its end falls on SimGrid's bit (two ends within ``precision/work-amount`` are one
    step, as in SimGrid).
Walltime
    Batsim keeps a job's remaining walltime (``remaining_time``, ``src/task_execution.cpp``) and
    counts it down stage by stage: a compute stage waits for its task with
    ``wait_for(remaining_time)`` then subtracts ``clock - time_before_execute``
    (``execute_parallel_task``); a delay stage sleeps ``delay`` if ``delay < remaining_time``
    (then subtracts it), else sleeps the remainder and times out (``do_delay_task``). At the
    timeout the job ends ``COMPLETED_WALLTIME_REACHED`` (return code -1); a computation ending
    exactly at its timeout succeeds. A remainder below 0 means *no walltime* for the stages
    left (the same ``< 0`` test as a job without walltime), so a composed job whose stage ends
    exactly at the walltime runs on when the subtraction comes out a hair below 0 in doubles
    (e.g. ``5 - ((7.3 + 5) - 7.3) = -1.8e-15``; recorded on Batsim 4.2.1, ``tests/test_walltime_left.py``)
    and is killed at once when it comes out 0. The engine keeps the same ``wall_left``. On
    SimGrid's clock the timeout is one sleep action, armed when the stage starts and counted
    down step by step (:class:`.ptasks.WallTimer`), whatever the task's rate does meanwhile
    (``tests/test_walltime_timer.py``).
Communications on ``Full`` zones without links
    SimGrid routes a host to itself through the ptask model's one ``__loopback__`` link (10
    GBps, FATPIPE): a ``parallel`` profile's bytes from a host to itself load it, and Batsim's
    messages between its actors on the master host cross it too (:mod:`.sharing`: beside such a
    task a message takes 2e-14 s instead of 1e-10 s; ``tests/test_loopback_sharing.py``); bytes
    between two hosts have no route and take no time.
Held tasks (networked platforms)
    At the walltime Batsim's job actor stops *waiting* for its parallel task
    (``ptask->wait_for(remaining_time)`` throws ``TimeoutException``, ``execute_task``,
    ``src/task_execution.cpp``) but does not cancel it: the task's action stays in SimGrid's
    system, computing and sharing its hosts, until the actor releases the last reference to it,
    once its JOB_COMPLETED has been received (:mod:`.netserver`). The engine keeps it as a
    :class:`.ptasks.HeldTask` until then (or until it completes). Recorded on Batsim 4.2.1 with compute
    sharing on ``cluster_energy_128.xml``: a job sharing its host with a task killed at its
    walltime runs at half speed for the 1.6 ms of the JOB_COMPLETED message
    (``tests/test_network_held.py``). What ends at the walltime is the timeout of ``wait_for``, a
    sleep on the job actor's host (SimGrid 3.32 ``ActivityImpl::wait_for``): the energy plugin
    updates that host alone, and the actor's reads of the task's other hosts are simcalls
    (``tests/fixtures/batsim_held_timeout``). A task still paying its communications' latency is
    held too and computes once it is paid (``tests/fixtures/batsim_pending_held``). A KILL_JOB
    cancels the task (``Exec::cancel``): nothing is held. On compute-only platforms the message takes no time and nothing is held.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from procset import ProcSet

from ..core.events import EXECUTE_JOB_FIELDS, ExecuteJob
from ..core.model import HostState, JobState
from .clock import Clock, shown_time
from .hosts import Machines
from .iojobs import io_leaf, merged_task, read_io_job
from .iotasks import IO_PROFILES, check_storage_mapping, io_task
from .storagejobs import check_storage_host, storage_flops
from .jobenergy import job_energy
from .jobs import JobBook
from .netroute import TCP_GAMMA, NetworkUnsupported
from .platform import PlatformSpec
from .ports import EngineError
from .ptasks import HeldTask, MessageFlow, ParallelTasks, WallTimer
from .queue import Kind, at
from .results import RunRecord
from .subrounds import Rounds
from .workload import EngineJob, Stages, check_profile

__all__ = ["Executions", "HeldTask", "MessageFlow", "WallTimer", "SUBMITTED", "RUNNING", "REJECTED",
           "COMPLETED_SUCCESSFULLY", "COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED", "COMPLETED_FAILED"]

SUBMITTED = JobState.SUBMITTED.value
RUNNING = JobState.RUNNING.value
REJECTED = JobState.REJECTED.value
COMPLETED_SUCCESSFULLY = JobState.COMPLETED_SUCCESSFULLY.value
COMPLETED_KILLED = JobState.COMPLETED_KILLED.value
COMPLETED_WALLTIME_REACHED = JobState.COMPLETED_WALLTIME_REACHED.value
COMPLETED_FAILED = JobState.COMPLETED_FAILED.value

_INF = math.inf
_IDLE, _COMPUTING = HostState.IDLE, HostState.COMPUTING
_JOB_END = Kind.JOB_END


def _byte_pairs(prof: dict, n: int) -> list[tuple[int, int, float]]:
    """The ``(sender, receiver, bytes)`` of a compute stage on ``n`` hosts with bytes > 0, in
    row order (Batsim's byte matrix, ``src/task_execution.cpp``): ``parallel_homogeneous``:
    ``com`` bytes from every host to every other; ``parallel_homogeneous_total``: ``com / n``;
    ``parallel``: ``com[i * n + j]`` from host ``i`` to host ``j`` (the diagonal included)."""
    t = prof["type"]
    if t == "parallel":
        return [(k // n, k % n, float(c)) for k, c in enumerate(prof["com"]) if c > 0]
    c = float(prof["com"]) if t == "parallel_homogeneous" else float(prof["com"]) / n
    if not c > 0:
        return []
    return [(i, j, c) for i in range(n) for j in range(n) if i != j]



class Executions:
    """Start jobs, run their profile stages, end and kill them (see the module docstring).

    Args:
        ptasks: the parallel tasks in flight (rates, links, walltime timers).
        machines: the hosts' states, power and energy.
        book: the jobs (running and finished counts kept there).
        record: the output tables, Pajé trace, Batsim's energy context.
        rounds: Batsim's actor sub-rounds (used with message delays only).
        clock: the current time.
        timers: the event queue.
        steps: whether ``timers`` is SimGrid's step clock.
        platform: the platform (routes, message delays, uncoordinated hosts).
        energy: Batsim's ``-E``.
        sharing: Batsim's ``--enable-compute-sharing``.
    """

    def __init__(self, ptasks: ParallelTasks, machines: Machines, book: JobBook, record: RunRecord, rounds: Rounds, *,
                 clock: Clock, timers: Any, steps: bool, platform: PlatformSpec, energy: bool, sharing: bool) -> None:
        self.ptasks = ptasks
        self.machines = machines
        self.hosts = machines.hosts
        self.book = book
        self.record = record
        self.rounds = rounds
        self.clock = clock
        self.timers = timers
        self.steps = steps
        self.platform = platform
        self.energy = energy
        self.sharing = sharing
        #: called before a decision looks a profile up by name (:meth:`.dynamic.DynamicJobs.track_collection`)
        self.io_lookups: Any = lambda: None
        #: Batsim's storage sharing (several jobs on a storage host; off with ``--disable-storage-sharing``)
        self.storage_sharing = True

    # ------------------------------------------------------------------------------ starting
    def execute(self, d: ExecuteJob) -> EngineJob | None:
        """EXECUTE_JOB ``d`` reaches the server: the job runs on its allocation. With message
        delays its actor starts it a sub-round later (:class:`.subrounds.Rounds`); else it starts
        now, and a job whose first stage has no work ends at once: it is returned, for the
        server to handle its completion before the reply's next decision (None otherwise).

        Raises:
            EngineError: the job is not waiting, the allocation does not fit the job or the
                hosts (unknown, not idle nor computing, busy without compute sharing, with energy
                at a pstate that does not compute: a host declared at a sleep pstate; storage
                hosts: :func:`.storagejobs.check_storage_host`, or storage hosts only, not
                simulated), or the decision asks for an executor mapping other than the default
                (not simulated; :func:`check_default_mapping`), has a ``storage_mapping`` or an
                ``additional_io_job`` Batsim refuses (:func:`.iotasks.check_storage_mapping`,
                :func:`.iojobs.read_io_job`), or more than one optional field (Batsim 4.2.1 reads
                at most three fields: "should be of size in {2,3}"), or the job's profile is a
                ``composed`` one registered by REGISTER_PROFILE (Batsim 4.2.1 crashes when the job
                starts: ``initialize_sequential_tasks``, ``src/jobs_execution.cpp``, reads the
                sequence's ``profile_sequence``, which only ``Workload::check_validity`` fills, at
                load; recorded in ``tests/fixtures/batsim_registered_composed``)."""
        held = self.book.live.get(d.job_id)   # (JobBook.named's usual case, inlined: a job held)
        job = held if held is not None else self.book.named(d.job_id, "EXECUTE_JOB", self.clock.now)
        storage: dict[str, int] = {}
        io_job = None
        extra = d.extra
        if extra:
            others = sorted(k for k in d.extra if k not in EXECUTE_JOB_FIELDS)
            if others:
                raise EngineError(f"EXECUTE_JOB {job.id}: fields {others} are not part of Batsim 4.2.1's EXECUTE_JOB "
                                  "(job_id, alloc, and one of mapping, storage_mapping, additional_io_job)")
            if len(d.extra) > 1:
                raise EngineError(f"EXECUTE_JOB {job.id}: fields {sorted(d.extra)} together: Batsim 4.2.1 reads "
                                  "job_id, alloc and at most one of them and aborts (\"the 'data' value of event 0 "
                                  f"(EXECUTE_JOB) should be of size in {{2,3}} (size={2 + len(d.extra)})\")")
            if "mapping" in d.extra:
                check_default_mapping(job.id, d.extra["mapping"], len(d.alloc))
            elif "storage_mapping" in d.extra:
                storage = check_storage_mapping(job.id, d.extra["storage_mapping"])
        if job.state != SUBMITTED:
            raise EngineError(f"EXECUTE_JOB {job.id} at t={shown_time(self.clock.now)}: the job is {job.state}, not waiting")
        assert type(job) is EngineJob   # (a job ended or not submitted is not waiting)
        if extra and "additional_io_job" in extra:
            self.io_lookups()   # (Batsim looks the profile up by name: the removed ones are known)
            io_job = read_io_job(job, d.extra["additional_io_job"], self.book.by_name[job.workload],
                                 len(self.hosts) + len(self.platform.storage), self.clock.now, check_profile)
        if job.profile in self.book.by_name[job.workload].registered_composed:
            raise EngineError(f"EXECUTE_JOB {job.id} at t={shown_time(self.clock.now)}: its profile {job.profile!r} is "
                              "a composed profile registered by REGISTER_PROFILE, and real Batsim 4.2.1 crashes "
                              "(segmentation fault) when such a job starts: it never resolves the 'seq' of a "
                              "registered composed profile; give the job a composed profile of a workload file, or "
                              "register each stage as a job of its own")
        alloc = d.alloc
        # (one interval, the common allocation: its range, without iterating the ProcSet)
        hosts = tuple(range(alloc.min, alloc.max + 1)) if type(alloc) is ProcSet and alloc.count() == 1 \
            else tuple(alloc)
        if len(hosts) != job.res and not any_size(self.book.by_name[job.workload].profiles, job.profile):
            raise EngineError(f"EXECUTE_JOB {job.id} at t={shown_time(self.clock.now)}: allocation {alloc} has "
                              f"{len(hosts)} hosts but the job requests {job.res}; Batsim 4.2.1 aborts (\"The job "
                              f"requires {job.res} machines but only {len(hosts)} were given\"): only a "
                              "parallel_homogeneous_total profile, or a composed one of only such profiles, runs "
                              "on any number of hosts")
        all_hosts = self.hosts
        nb_hosts = len(all_hosts)
        energy, sharing = self.energy, self.sharing
        st: list[int] = []
        for hid in hosts:   # (pre-bound names and HostRun.pstate_kind inlined: once per started job and host)
            if not 0 <= hid < nb_hosts:
                runs = self.machines.storage_runs
                if nb_hosts <= hid < nb_hosts + len(runs):   # a storage host (.storagejobs)
                    j = hid - nb_hosts
                    check_storage_host(job, alloc, hid, runs[j], self.machines.st_pstate[j] if self.energy else None,
                                       self.storage_sharing, self.clock.now)
                    st.append(j)
                    continue
                raise EngineError(f"EXECUTE_JOB {job.id}: host {hid} does not exist "
                                  f"(platform has {nb_hosts} compute hosts"
                                  + (f" and {len(runs)} storage hosts)" if runs else ")"))
            h = all_hosts[hid]
            state = h.state
            if state is not _IDLE and state is not _COMPUTING:
                raise EngineError(f"EXECUTE_JOB {job.id} at t={shown_time(self.clock.now)}: host {hid} ({h.spec.name}) is "
                                  f"{h.state.value}")
            if energy and h.spec.pstate_kinds.get(h.pstate, "computation") != "computation":
                # an idle host at a sleep pstate: one declared so in the platform (src/server.cpp,
                # server_on_execute_job, checks the pstate only with energy)
                raise EngineError(f"EXECUTE_JOB {job.id} at t={shown_time(self.clock.now)}: host {hid} ({h.spec.name}) is not in a "
                                  f"computation pstate (pstate {h.pstate}, a {h.pstate_kind(h.pstate)} pstate); Batsim "
                                  f"4.2.1 aborts: \"machine {hid} (hostname='{h.spec.name}') is not in a computation "
                                  f"pstate (ps={h.pstate})\"")
            if h.jobs and not sharing:
                raise EngineError(f"EXECUTE_JOB {job.id} at t={shown_time(self.clock.now)}: host {hid} ({h.spec.name}) already "
                                  f"runs {sorted(h.jobs)} and compute sharing is disabled")
            if h.jobs and not self.storage_sharing:
                # server_on_execute_job (src/server.cpp) checks the machines of role STORAGE, whose
                # permissions (receive and send bytes) a compute node's include: compute hosts too
                raise EngineError(f"EXECUTE_JOB {job.id} at t={shown_time(self.clock.now)}: host {hid} ({h.spec.name}) already "
                                  f"runs {sorted(h.jobs)}, and with --disable-storage-sharing real Batsim 4.2.1 aborts "
                                  f"on compute hosts too, compute sharing or not (\"machine {hid} (hostname='{h.spec.name}') "
                                  "is currently computing jobs ... whereas time-sharing on storage machines is disabled\")")
        if st:
            if len(st) == len(hosts):
                raise EngineError(f"EXECUTE_JOB {job.id}: allocation {alloc} holds storage hosts only: not simulated "
                                  "(real Batsim runs the job's actor on a storage host); allocate a compute host too, "
                                  "or use real Batsim")
            hosts = hosts[:len(hosts) - len(st)]   # (storage ids come after the compute ids)
        job.state = RUNNING
        job.alloc = alloc
        job.hosts = hosts
        job.st_hosts = tuple(st)
        job.storage = storage
        job.io_job = io_job
        self.book.running += 1
        if self.platform.message_delays is not None:
            # the server creates the job's actor (a simcall): it starts the job a sub-round later
            self.rounds.after(1, lambda: self._job_begins(job))
            return None
        return job if self._job_begins(job) else None

    def _job_begins(self, job: EngineJob) -> bool:
        """``execute_job_process`` (``src/jobs_execution.cpp``): the job's start time, its
        hosts' energy and start row, the machines computing, then its first stage; returns
        whether the job ended at once (a first stage without work, compute-only platforms)."""
        now = self.clock.now
        machines = self.machines
        all_hosts = self.hosts
        jid = job.id
        job.start = now
        job.stage = 0
        # Batsim's remaining_time (execute_job, src/task_execution.cpp; < 0: no walltime)
        job.wall_left = float(job.walltime) if job.walltime > 0 else -1.0
        for hid in job.hosts:
            h = all_hosts[hid]
            h.jobs.add(jid)
            if h.state is not _COMPUTING:
                machines.set_state(h, _COMPUTING)
        for j in job.st_hosts:
            h = machines.storage_runs[j]
            h.jobs.add(jid)
            if h.state is not _COMPUTING:
                machines.set_state(h, _COMPUTING)
        if self.energy:
            job.energy_start = machines.energy_of(job.hosts if not job.st_hosts else self._machine_ids(job))
        machines.machine_row()
        paje = self.record.paje
        if paje is not None:
            paje.run(now, job, self.book.load_rank(job, len(paje))
                     if self.sharing or job.st_hosts else 0)  # (else one job per machine; storage hosts are shared)
        machines.energy_row("s", decided=True)
        self._start_stage(job)
        if (self.platform.message_delays is None and job.flops and not any(job.flops) and not job.links
                and not job.pending):
            # a first stage without work ends before the reply's next decision (server.py, "Kills and
            # zero-work jobs"); its queued end becomes stale
            return self.stage_ended(job, job.version, False)
        return False

    def _machine_ids(self, job: EngineJob) -> tuple[int, ...]:
        """The machine ids of ``job``'s allocation: its compute hosts, then its storage hosts."""
        if not job.st_hosts:
            return job.hosts
        return job.hosts + tuple(len(self.hosts) + j for j in job.st_hosts)

    def _stage_flops(self, job: EngineJob, prof: dict) -> list[float]:
        """The flops of a compute stage on each allocated machine (storage hosts last)."""
        t = prof["type"]
        n = len(job.hosts) + len(job.st_hosts)
        if t == "parallel_homogeneous":
            return [float(prof["cpu"])] * n
        if t == "parallel_homogeneous_total":
            return [float(prof["cpu"]) / n] * n
        if t in IO_PROFILES:   # no computation (iotasks)
            return [0.0] * n
        return [float(x) for x in prof["cpu"]]

    def _start_stage(self, job: EngineJob) -> None:
        """Start the current stage of ``job`` at ``now`` and arm its end timer."""
        name, prof = job.stages[job.stage]
        job.stage_start = self.clock.now
        job.version += 1
        self.ptasks.drop_walltime(job)
        old_links = job.links
        if old_links:
            self.ptasks.unlink(job)
        if prof["type"] == "delay":
            if job.flops:  # a computing stage just ended: its hosts lose its load
                job.flops = []
                job.rate = 0.0
                self.ptasks.reshare(job.hosts, links=old_links)
            delay = float(prof["delay"])
            # do_delay_task: one sleep, of the delay if strictly shorter than the walltime left,
            # else of the walltime left (a timeout)
            left = job.wall_left
            if left >= 0 and not delay < left:
                self._sleep_timer(left, _JOB_END, (job, job.version, True))
            else:
                if self.steps:   # (_sleep_timer, inlined: once a job)
                    self.timers.sleep(delay, _JOB_END, (job, job.version, False))
                else:
                    self._sleep_timer(delay, _JOB_END, (job, job.version, False))
                if left > 0:
                    job.wall_left = left - delay
            return
        # the task's hosts (names) and bytes; the IO profiles' include storage hosts (iotasks)
        names: list[str] = []
        pairs: list[tuple[int, int, float]] = []
        nb_task_hosts = len(job.hosts)
        job.io_hosts = None
        flops = None
        if job.io_job is not None:   # one task merged with the additional IO job's (iojobs)
            stages = job.stages
            path = stages.path(job.stage) if isinstance(stages, Stages) else []
            io = io_leaf(job.io_job, path, self.book.by_name[job.workload].profiles)
            names, pairs, flops, cids, sids = merged_task(job, (name, prof), io, job.io_job.alloc, self.platform,
                                                          self.clock.now)
            nb_task_hosts = len(names)
            job.io_hosts = (cids, sids)
            if pairs and self.platform.routes is None:
                raise EngineError(f"t={shown_time(self.clock.now)}: job {job.id}'s profile {name!r} with its additional IO job "
                                  f"moves bytes between {names[pairs[0][0]]!r} and {names[pairs[0][1]]!r} on a "
                                  "platform without links outside a Full zone, whose routes the embedded engine "
                                  "does not know; run it on real Batsim (--engine batsim)")
        elif prof["type"] in IO_PROFILES:
            names, pairs = io_task(job, name, prof, self.platform, self.clock.now)
            nb_task_hosts = len(names)
            in_task = set(names)
            job.io_hosts = (tuple(hid for hid in job.hosts if self.hosts[hid].spec.name in in_task),
                            tuple(j for j, s in enumerate(self.platform.storage) if s.name in in_task))
            if pairs and self.platform.routes is None:
                # no links and no Full zone: an empty route (Vivaldi) costs nothing, but SimGrid
                # aborts where there is no route at all (Floyd, Dijkstra: "No route from 'pfs' to
                # 'h0'"), which the engine cannot tell apart here
                raise EngineError(f"t={shown_time(self.clock.now)}: job {job.id}'s profile {name!r} ({prof['type']}) moves "
                                  f"bytes between {names[pairs[0][0]]!r} and {names[pairs[0][1]]!r} on a platform "
                                  f"without links outside a Full zone, whose routes the embedded engine does not "
                                  f"know; run it on real Batsim (--engine batsim)")
        else:
            if job.st_hosts:   # storage hosts in the allocation: in the task, no flops there (.storagejobs)
                nb_task_hosts += len(job.st_hosts)
                job.io_hosts = (job.hosts, job.st_hosts)
                flops = storage_flops(job, name, self._stage_flops(job, prof), self.platform.storage,
                                      len(self.hosts), self.clock.now)
            if nb_task_hosts > 1 and (self.platform.routes is not None or self.platform.uncoordinated):
                names = [self.hosts[hid].spec.name for hid in job.hosts] + \
                    [self.platform.storage[j].name for j in job.st_hosts]
                pairs = _byte_pairs(prof, nb_task_hosts)
        if flops is None:
            flops = self._stage_flops(job, prof)
            if job.st_hosts:   # (an IO profile: no flops anywhere)
                flops = flops[:len(job.hosts)]
        job.flops = flops
        job.wall_t0 = self.clock.now   # execute_parallel_task's time_before_execute
        # (actor model: the job actor's exec_init makes three simcalls before the task is known)
        job.task_known = ((self.clock.now, self.rounds.plays, self.rounds.round + 3)
                          if self.platform.message_delays is not None else ())
        if self.platform.uncoordinated and pairs:
            ids = {h.spec.name: hid for hid, h in enumerate(self.hosts)}
            talking = sorted({ids[names[k]] for i, j, _ in pairs for k in (i, j) if names[k] in ids})
            self.ptasks.routed(talking, f"the communications of job {job.id}'s profile {name!r}")
        net = self._stage_network(job, names, pairs) if self.platform.routes is not None else None
        if nb_task_hosts == 1:  # Exec::on_start updates the energy of a single-host execution
            self.machines.updated(job.hosts)
        job.index = self.ptasks.next_index()  # SimGrid's action order: same-instant ends are handled in it
        job.remaining = 1.0
        job.rate = 0.0
        job.action = None
        job.net_bound = _INF
        if net is not None:
            job.links, latency, job.net_bound = net
            self.ptasks.link(job)
            if latency > 0:
                # L07Action: the variable is disabled (penalty 0) until the latency is paid
                # (links exist only on platforms with a network, which run on SimGrid's clock)
                job.pending = True
                self.timers.latency(latency, Kind.LATENCY, (job, job.version))
                self.ptasks.arm_walltime(job)
                self.ptasks.reshare(job.hosts, links=old_links)  # the previous stage's load leaves
                return
        self.ptasks.reshare(job.hosts, started=job, links=old_links)
        if job.rate == _INF and self.platform.message_delays is not None:
            self._zero_task_later(job)

    def _zero_task_later(self, job: EngineJob) -> None:
        """Batsim's actor model: the parallel task of a stage without work, which SimGrid ends
        in the next step (``L07Action``: remains 0), is created by the job actor a few
        sub-rounds after it starts the stage: ``exec_init`` sets the task's flops, bytes and hosts
        (three simcalls) before ``start`` (``s4u_Actor.cpp``, ``s4u_Exec.cpp``, SimGrid 3.32); a
        first stage starts a sub-round after the server's ``Actor::create`` (:meth:`execute`). The server meanwhile has received the reply's next decision (its transfer
        created first), so that decision is handled before the job's end, in the next step.
        Recorded on real Batsim 4.2.1 (``tests/fixtures/batsim_zero_work_order``: a zero-work
        job then SET_RESOURCE_STATE: the switch's ``p`` row comes before the job's ``e`` row;
        then QUERY: ANSWER before JOB_COMPLETED)."""
        job.version += 1   # (the end armed at once is stale)
        v = job.version
        self.rounds.after(3, lambda: self.timers.sleep(0.0, Kind.JOB_END, (job, v, False)) if job.version == v else None)

    def _sleep_timer(self, duration: float, kind: Kind, payload: Any) -> None:
        """Arm a sleep of ``duration`` s from now: an action on SimGrid's clock (:mod:`.steps`,
        :mod:`.lazysteps`), else (a Full zone the route reader does not know) an event at the
        time rounded to 1e-9 s (:func:`.queue.at`)."""
        if self.steps:
            self.timers.sleep(duration, kind, payload)
        else:
            self.timers.push(at(self.clock.now + duration), kind, payload)

    def _stage_network(self, job: EngineJob, names: list[str], pairs: list[tuple[int, int, float]]
                       ) -> tuple[list, float, float] | None:
        """The links a compute stage's communications load, as ``L07Action::L07Action`` expands
        them: ``(links, latency, bound)`` or None when no byte crosses a link.

        ``names`` are the task's hosts (the job's, and storage hosts for the IO profiles:
        :mod:`.iotasks`), ``pairs`` its ``(sender, receiver, bytes)`` with bytes > 0 (indices in
        ``names``; Batsim's byte matrix, :func:`_byte_pairs`). For each pair in row
        order, the links of its route are expanded with the pair's bytes (bytes, summed over the
        pairs that cross a link, the largest for a ``FATPIPE`` link:
        ``System::expand_add_to_elem``), in order of first use.
        ``latency`` (s) is the largest route latency over those pairs (the phase in which the
        task does not progress), ``bound`` (fraction/s) is ``TCP_GAMMA / (2 max(latency_ij x
        bytes_ij))`` (``L07Action::calculate_network_bound``), ``inf`` when that is 0.

        A single-host stage has no communication at all: SimGrid 3.32 starts an execution on one
        host as a plain CPU execution of its flops (``ExecImpl::start``: ``execution_start``,
        the byte matrix dropped), so a ``parallel`` profile's ``com`` to the host itself costs
        neither its route's latency nor bandwidth (recorded on real Batsim 4.2.1: 1e8 flops and
        1e8 bytes on one 100 Mf host of ``energy_platform_homogeneous.xml``, whose self-route is
        a 15-us loopback, run 1.000000 s)."""
        if len(names) < 2 or not pairs:
            return None
        routes = self.platform.routes
        assert routes is not None   # (called on platforms with links only)
        weights: dict = {}
        latency = lat_current = 0.0
        for i, j, b in pairs:
            try:
                links, lat = routes.route(names[i], names[j])
            except NetworkUnsupported as exc:
                raise EngineError(f"t={shown_time(self.clock.now)}: job {job.id}'s communications: {exc}") from None
            latency = max(latency, lat)
            lat_current = max(lat_current, lat * b)
            for ln in links:
                w = weights.get(ln)
                if w is None:
                    weights[ln] = b
                elif ln.fatpipe:
                    weights[ln] = max(w, b)
                else:
                    weights[ln] = w + b
        if not weights and not latency > 0:
            return None
        bound = TCP_GAMMA / (2.0 * lat_current) if lat_current > 0 else _INF
        return list(weights.items()), latency, bound


    # -------------------------------------------------------------------------- progress/end
    def job_progress(self, job: EngineJob) -> dict[str, Any]:
        """JOB_KILLED's ``job_progress`` entry of a running job (Batsim ``BatTask`` tree)."""
        name, prof = job.stages[job.stage]
        if prof["type"] == "delay":
            d = float(prof["delay"])
            prog = (self.clock.now - job.stage_start) / d if d > 0 else 1.0
        else:
            self.ptasks.progress_compute(job)
            prog = 1.0 - job.remaining
        # Batsim writes every double of a message as printf "%6f" (the Writer of src/protocol.hpp):
        # a scheduler sees the progress with 6 decimals; in-process, the engine gives the same value
        leaf = {"profile_name": name, "progress": float(f"{prog:f}")}
        top = self.book.by_name[job.workload].profiles[job.profile]
        if top["type"] == "composed":
            # one level per composed profile down to the leaf (BatTask tree, protocol.cpp generate_task_tree)
            stages = job.stages
            assert isinstance(stages, Stages)   # (a composed profile's)
            for pname, index in reversed(stages.path(job.stage)):
                leaf = {"profile_name": pname, "current_task_index": index, "current_task": leaf}
        return leaf

    def _task_updated(self, job: EngineJob, held: bool = False) -> None:
        """The current stage's action of ``job`` ends or is cancelled now: SimGrid's energy plugin
        updates the hosts of its parallel task -- an IO task's (:attr:`.workload.EngineJob.io_hosts`:
        a ``data_staging`` holds the two storage hosts, not the job's) -- or, for a sleep (and a
        held task's ``wait_for`` timeout), the job actor's host, the allocation's first."""
        if held or not job.flops:
            self.machines.updated((min(job.hosts),))
        elif job.io_hosts is not None:
            self.machines.updated(job.io_hosts[0])
            self.machines.storage_updated(job.io_hosts[1])
        else:
            self.machines.updated(job.hosts)

    def stage_ended(self, job: EngineJob, version: int, walltime: bool, held: bool = False) -> bool:
        """A JOB_END timer fired: the walltime kills the job, or its current stage ended and the
        next starts; return whether the job ended (a stale timer, ``version`` behind, does nothing).
        ``held``: the walltime left the job's parallel task computing (a :class:`.ptasks.HeldTask`,
        "Held tasks" above)."""
        if version != job.version or job.state != RUNNING:
            return False
        self.clock.mark_live()
        # the stage's action ends (or is cancelled at the walltime): SimGrid updates the energy of
        # its hosts (a parallel task) or of the job actor's host, the allocation's first (a sleep).
        # A held task's action goes on: only the timeout of wait_for ends, a sleep on the job
        # actor's host (SimGrid 3.32 ActivityImpl::wait_for), which updates that host alone
        self._task_updated(job, held)
        if walltime:
            self.end_job(job, COMPLETED_WALLTIME_REACHED, -1)
            return True
        self.ptasks.progress_compute(job)
        if job.flops and job.wall_left >= 0:
            # *remaining_time -= clock - time_before_execute: a hair below 0 means no walltime
            # for the stages left, as in Batsim (execute_parallel_task, do_delay_task)
            job.wall_left -= self.clock.now - job.wall_t0
        code = self._return_code(job)
        if code:
            self.end_job(job, *self._coded_end(job, code))
            return True
        if job.stage + 1 < len(job.stages):
            job.stage += 1
            self._start_stage(job)
            return False
        self.end_job(job, COMPLETED_SUCCESSFULLY, 0)
        return True

    def _return_code(self, job: EngineJob) -> int:
        """The return code with which ``job`` ends now that its current stage ended, 0 to go on
        (or succeed after its last stage). Batsim 4.2.1 (``execute_task``, jobs_execution.cpp): a
        profile returns its ``ret`` (default 0) once done; a ``composed`` profile stops at the
        first child that returns non-zero and returns that code, else its own ``ret`` after its
        last repetition; a job whose code is > 0 ends COMPLETED_FAILED (``success`` 0)."""
        _, prof = job.stages[job.stage]
        code = prof.get("ret", 0)
        if code:
            return code
        profiles = self.book.by_name[job.workload].profiles
        if profiles[job.profile]["type"] != "composed":
            return 0
        stages = job.stages
        assert isinstance(stages, Stages)   # (a composed profile's)
        for pname, index in reversed(stages.path(job.stage)):   # the innermost first
            p = profiles[pname]
            if index != p.get("repeat", 1) * len(p["seq"]) - 1:
                return 0   # this level goes on (and so do those around it)
            code = p.get("ret", 0)
            if code:
                return code
        return 0

    def _coded_end(self, job: EngineJob, code: int) -> tuple[str, int]:
        """The final state of a job whose profile returned ``code`` != 0 (Batsim 4.2.1,
        ``execute_job_process``): > 0 failed, -1 walltime reached.

        Raises:
            EngineError: -2 (Batsim's code of a job killed by the scheduler, given by a profile:
                not simulated) or below (real Batsim aborts: "completed with unknown return
                code")."""
        if code > 0:
            return COMPLETED_FAILED, code
        if code == -1:
            return COMPLETED_WALLTIME_REACHED, -1
        what = ("Batsim's code of a job killed by the scheduler, which the engine does not simulate as "
                "a profile's 'ret'" if code == -2 else
                f"real Batsim 4.2.1 aborts: \"Job '{job.id}' completed with unknown return code: {code}\"")
        raise EngineError(f"{self.book.by_name[job.workload].path}: t={shown_time(self.clock.now)}: job {job.id!r} ends with return "
                          f"code {code} (a profile's 'ret'): {what}")


    def end_job(self, job: EngineJob, state: str, code: int) -> None:
        """Free the hosts of ``job`` and record its completion at ``now``."""
        if self.platform.uncoordinated and state != COMPLETED_KILLED:   # (a killed job's actor sends nothing)
            self.ptasks.routed((min(job.hosts),), f"job {job.id}'s JOB_COMPLETED")
        self.ptasks.drop_walltime(job)
        now = self.clock.now
        machines, book = self.machines, self.book
        job.state = state
        job.return_code = code
        job.finish = now
        job.runtime = now - job.start
        job.version += 1
        job.action = None   # (the action refers to the job: no cycle left for the collector)
        p_before = machines.p_total
        had_load = bool(job.flops)
        links = job.links
        if links:
            self.ptasks.unlink(job)
        job.flops = []
        book.running -= 1
        book.finished += 1
        all_hosts = self.hosts
        jid = job.id
        for hid in job.hosts:
            h = all_hosts[hid]
            jobs = h.jobs
            jobs.discard(jid)
            if not jobs and h.state is _COMPUTING:
                machines.set_state(h, _IDLE)
        for j in job.st_hosts:   # (the storage hosts of its allocation, .storagejobs)
            h = machines.storage_runs[j]
            h.jobs.discard(jid)
            if not h.jobs and h.state is _COMPUTING:
                machines.set_state(h, _IDLE)
        if had_load:
            self.ptasks.reshare(job.hosts, links=links)
        machines.machine_row()
        paje = self.record.paje
        if paje is not None:   # (the kill Batsim traces: walltime, or a cancelled parallel task)
            paje.end(now, job, state == COMPLETED_WALLTIME_REACHED or (state == COMPLETED_KILLED and code == -2))
        if self.energy:
            if self.rounds.instant_switches:   # (actor model: switches ending at this instant)
                self.rounds.switches_before_row()
            # consumed_energy_on_machines after minus before, in Batsim's long doubles (.jobenergy)
            job.energy, text = job_energy(machines.energy_of(job.hosts if not job.st_hosts else self._machine_ids(job)),
                                          job.energy_start)
            if text is not None:   # out_jobs.csv prints Batsim's long double, not this double
                self.record.rows.setdefault("job_energy", {})[(job.workload, job.name)] = text
            job.energy_start = ()
            # Batsim keeps the total its energy row read (EnergyConsumptionTracer::add_job_end)
            e = machines.energy_row("e", decided=state == COMPLETED_KILLED, p_before=p_before)
            self.record.last_job_end = machines.total_exact() if e is None else e
        else:
            job.energy = -1.0
        book.ended(job)
        if paje is not None:
            paje.ended(job)

    def kill_running(self, really: list[EngineJob]) -> dict[str, Any]:
        """Batsim's ``killer_process``: end the jobs of ``really`` still running; return their
        ``job_progress`` entries by job id."""
        progress = {}
        for job in really:
            if job.state != RUNNING:
                continue
            progress[job.id] = self.job_progress(job)
            # Batsim's killer cancels a running parallel task (return code -2); a job in a delay
            # has none, nor one whose stage began at this instant and whose exec_init is not done
            # (cancel_ptask finds no btask->ptask): its actor is killed and the code keeps its
            # default -1 (jobs_execution.cpp; no kill in the Pajé trace: a stage's task ending as
            # a KILL_JOB arrives, recorded in tests/fixtures/batsim_kill_stage_start)
            code = -1 if (job.stages[job.stage][1]["type"] == "delay"
                          or job.task_known > (self.clock.now, self.rounds.plays, self.rounds.round)) else -2
            if job.io_hosts is not None and job.flops:   # Exec::cancel: its storage hosts
                self.machines.storage_updated(job.io_hosts[1])
            self.end_job(job, COMPLETED_KILLED, code)
        return progress


def any_size(profiles: dict[str, dict[str, Any]], name: str) -> bool:
    """Whether Batsim 4.2.1 runs a job of profile ``name`` (in ``profiles``, name -> profile) on
    an allocation of any number of hosts, not only its ``res``: a ``parallel_homogeneous_total``
    profile (its ``cpu`` and ``com`` are spread over the hosts given), or a ``composed`` one whose
    every profile of ``seq`` is one (``server_on_execute_job``, ``src/server.cpp``: a nested
    ``composed`` is not). A job of ``res`` 0 runs only so (recorded in
    ``tests/fixtures/batsim_res0``)."""
    prof = profiles[name]
    if prof["type"] == "parallel_homogeneous_total":
        return True
    return prof["type"] == "composed" and all(profiles[x]["type"] == "parallel_homogeneous_total"
                                              for x in prof["seq"])


def check_default_mapping(job_id: str, mapping: Any, nb_hosts: int) -> None:
    """Accept EXECUTE_JOB's optional ``mapping`` when it is Batsim's default one.

    ``mapping`` (``{"executor": "i-th host of the allocation"}``, keys and values integers or
    strings of integers) places a job's executors on its hosts; without it Batsim 4.2.1 runs
    executor ``i`` on the allocation's ``i``-th host (``execute_job_process``,
    ``src/jobs_execution.cpp``). That identity mapping, which batsched 1.4.0's ``filler`` sends
    with every job, is the run the engine simulates; any other is refused.

    Args:
        job_id: the job, for messages.
        mapping: the decoded JSON value of the field.
        nb_hosts: the number of hosts in the job's allocation.

    Raises:
        EngineError: a mapping real Batsim refuses (its checks in
            ``JsonProtocolReader::handle_execute_job``, ``src/protocol.cpp``: an object, not empty,
            integer keys and values, executors 0 to n-1, hosts within the allocation), or one
            other than the identity over the allocation (not simulated).
    """
    where = f"EXECUTE_JOB {job_id}: 'mapping'"
    if not isinstance(mapping, dict) or not mapping:
        raise EngineError(f"{where} must be a non-empty object {{executor: host index within the allocation}}, "
                          f"got {json.dumps(mapping)}; Batsim 4.2.1 aborts")
    pairs: dict[int, int] = {}
    for key, value in mapping.items():
        try:
            ex, res = _stoi(key), _stoi(value)
        except ValueError:
            raise EngineError(f"{where} {json.dumps({key: value})}: all keys and values must be integers (or "
                              "strings representing integers); Batsim 4.2.1 aborts") from None
        pairs[ex] = res
    for i, (ex, res) in enumerate(sorted(pairs.items())):
        if ex != i:
            raise EngineError(f"{where}: no resource associated to executor {i}; Batsim 4.2.1 aborts")
        if not 0 <= res < nb_hosts:
            raise EngineError(f"{where}: executor {ex} should use the {res}-th resource within the allocation, "
                              f"but there are only {nb_hosts} allocated resources; Batsim 4.2.1 aborts")
    if len(pairs) != nb_hosts or any(ex != res for ex, res in pairs.items()):
        raise EngineError(f"{where} {json.dumps(mapping)}: only the default mapping (executor i on the i-th host "
                          "of the allocation) is simulated by the embedded engine; use real Batsim")


def _stoi(v: Any) -> int:
    """An integer key or value of ``mapping`` as rapidjson + ``std::stoi`` read it (bool refused)."""
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise ValueError(v)
    if isinstance(v, int):
        return v
    m = re.match(r"\s*[+-]?\d+", v)   # std::stoi: a leading integer
    if m is None:
        raise ValueError(v)
    return int(m.group())
