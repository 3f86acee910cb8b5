"""Job execution: profile stages, parallel tasks, compute sharing, walltime, kills.

Part of :class:`schedulers.engine.simulator.Engine` (a mixin over the engine's job state; the
hosts' power, energy and machine states are asked of the :class:`.hosts.Machines` component,
``self.machines``, and the time of the :class:`.clock.Clock`, ``self.clock``).

Parallel tasks (Batsim 4.2.1 ``src/task_execution.cpp`` + SimGrid 3.32 ``ptask_L07``)
    ``delay`` profiles sleep: the hosts stay at idle power. Every computing profile runs as one
    SimGrid parallel task: on each allocated host ``h`` a part of ``f_h`` flops; the task's
    progress rate ``r`` (fraction of the task per second) is bounded by one core per part
    (``r <= speed_h / f_h``, ``L07Action::calculate_cpu_bound``), so alone on its hosts it runs
    in lockstep at ``r = min_h speed_h / f_h`` and host ``h`` carries ``f_h * r / speed_h``
    busy cores. ``parallel_homogeneous``: ``f_h = cpu``; ``parallel_homogeneous_total``:
    ``f_h = cpu / res``; ``parallel``: ``f_h = cpu[i]``; ``composed``: the sub-profiles one after
    the other, ``repeat`` times. A task of zero flops ends at once (Batsim then records an
    execution time of 1e-5 s).
Communications (platforms with links; ``L07Action::L07Action``, ``HostL07Model::update_actions_state``)
    A stage whose byte matrix has pairs with bytes > 0 (:meth:`ExecutionMixin._stage_network`)
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
    down step by step (:class:`WallTimer`), whatever the task's rate does meanwhile
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
    :class:`HeldTask` until then (or until it completes). Recorded on Batsim 4.2.1 with compute
    sharing on ``cluster_energy_128.xml``: a job sharing its host with a task killed at its
    walltime runs at half speed for the 1.6 ms of the JOB_COMPLETED message
    (``tests/test_network_held.py``). A KILL_JOB cancels the task (``Exec::cancel``): nothing
    is held. On compute-only platforms the message takes no time and nothing is held.
"""

from __future__ import annotations

import math
from itertools import chain
from operator import neg
from typing import Any

from procset import ProcSet

from ..core.events import ExecuteJob
from ..core.model import HostState, JobState
from .ports import EngineError
from .hosts import exact_sum
from .queue import Kind, at
from .netroute import TCP_GAMMA, NetworkUnsupported
from .sharing import SolverLoop, l07_rates
from .workload import EngineJob

SUBMITTED = JobState.SUBMITTED.value
RUNNING = JobState.RUNNING.value
REJECTED = JobState.REJECTED.value
COMPLETED_SUCCESSFULLY = JobState.COMPLETED_SUCCESSFULLY.value
COMPLETED_KILLED = JobState.COMPLETED_KILLED.value
COMPLETED_WALLTIME_REACHED = JobState.COMPLETED_WALLTIME_REACHED.value
COMPLETED_FAILED = JobState.COMPLETED_FAILED.value

_INF = math.inf


class HeldTask:
    """The parallel task of a job that reached its walltime, still in SimGrid's system until its
    job actor releases it (see "Held tasks" above). Same execution fields as an
    :class:`~.workload.EngineJob`'s current stage (``hosts``, ``flops`` in flops, ``rate`` in
    fractions/s, ``remaining`` fraction, ``links``, ``net_bound``), so that the sharing code
    solves it with the running tasks; ``id`` is ``(job id,)``, never equal to a job's id."""

    __slots__ = ("id", "hosts", "flops", "index", "remaining", "rate", "stage_start", "version",
                 "wall_left", "links", "net_bound", "pending", "done", "action", "wall_timer")

    def __init__(self, job: EngineJob, now: float) -> None:
        self.id = (job.id,)
        self.hosts = job.hosts
        self.flops = list(job.flops)
        self.index = job.index          # SimGrid's creation order, kept
        self.remaining = job.remaining
        self.rate = job.rate
        self.action = None              # (its own once armed; until then remaining is current)
        self.stage_start = now
        self.version = 0
        self.wall_left = -1.0   # released by its job actor, not by a walltime
        self.wall_timer = None
        self.links = job.links
        self.net_bound = job.net_bound
        self.pending = False
        self.done = False


class WallTimer:
    """``wait_for``'s timeout of a job's compute stage (``execute_parallel_task``): one sleep
    action on SimGrid's clock, armed when the stage starts and counted down step by step until
    the task ends or it fires, whatever the task's rate does meanwhile (a sleep armed again for
    the time left at each change of rate would round differently: fuzz case s35, a walltime
    2 ulps late while messages crossed the job's links). Its queue payload is ``(timer, 0,
    True)``: stale once ``version`` is no longer 0 (the stage ended first)."""

    __slots__ = ("job", "version")

    def __init__(self, job) -> None:
        self.job = job
        self.version = 0


class MessageFlow:
    """The byte of one of Batsim's messages while it crosses its route's links: SimGrid's
    ``ptask_L07`` model makes a message an ``L07Action`` like a job's task (``NetworkL07Model::
    communicate``), whose variable shares the links with the jobs' communications and the other
    messages from the step that pays its latency on (:mod:`.netserver`). Same fields as a task
    for the sharing code (no hosts, no flops: its CPU elements weigh 0); ``rate`` (B/s) is its
    :mod:`.steps` action's."""

    __slots__ = ("id", "links", "net_bound", "index", "action", "stage_start", "pending")
    hosts = ()
    flops = ()

    def __init__(self, action: Any, number: int, latency: float) -> None:
        self.id = ("message", number)   # never a job's id (a str) nor a held task's (a 1-tuple)
        self.links = action.links
        self.net_bound = TCP_GAMMA / (2.0 * latency) if latency > 0 else _INF   # L07Action::update_bound, 1 byte
        self.index = number
        self.action = action
        self.stage_start = 0.0
        self.pending = False

    @property
    def rate(self) -> float:
        return self.action.rate

    @rate.setter
    def rate(self, value: float) -> None:
        self.action.rate = value


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


class ExecutionMixin:
    """Start jobs, run their profile stages, share hosts, end and kill them."""

    #: Actor model: the switches (host id -> target pstate) ending at the current instant whose
    #: ``set_pstate`` a job end's energy row may see, and those already applied
    #: (:meth:`.netserver.NetworkServerMixin._switches_before_row`); None elsewhere.
    _instant_switches: dict | None = None
    _switches_applied: set | None = None

    # ------------------------------------------------------------------------------ starting
    def _execute(self, d: ExecuteJob) -> None:
        job = self._job(d.job_id, "EXECUTE_JOB")
        if d.extra:
            raise EngineError(f"EXECUTE_JOB {job.id}: fields {sorted(d.extra)} (mapping, storage, IO jobs) "
                              "are not simulated by the embedded engine; use real Batsim")
        if job.state != SUBMITTED:
            raise EngineError(f"EXECUTE_JOB {job.id} at t={self.clock.now}: the job is {job.state}, not waiting")
        alloc = d.alloc
        # (one interval, the common allocation: its range, without iterating the ProcSet)
        hosts = tuple(range(alloc.min, alloc.max + 1)) if type(alloc) is ProcSet and alloc.count() == 1 \
            else tuple(alloc)
        if len(hosts) != job.res:
            raise EngineError(f"EXECUTE_JOB {job.id} at t={self.clock.now}: allocation {alloc} has {len(hosts)} "
                              f"hosts but the job requests {job.res}")
        all_hosts = self.hosts
        nb_hosts = len(all_hosts)
        for hid in hosts:
            if not 0 <= hid < nb_hosts:
                raise EngineError(f"EXECUTE_JOB {job.id}: host {hid} does not exist "
                                  f"(platform has {nb_hosts} compute hosts)")
            h = all_hosts[hid]
            if h.state is not HostState.IDLE and h.state is not HostState.COMPUTING:
                raise EngineError(f"EXECUTE_JOB {job.id} at t={self.clock.now}: host {hid} ({h.spec.name}) is "
                                  f"{h.state.value}")
            if h.jobs and not self.sharing:
                raise EngineError(f"EXECUTE_JOB {job.id} at t={self.clock.now}: host {hid} ({h.spec.name}) already "
                                  f"runs {sorted(h.jobs)} and compute sharing is disabled")
        job.state = RUNNING
        job.alloc = alloc
        job.hosts = hosts
        self._running += 1
        if self.platform.message_delays is not None:
            # the server creates the job's actor (a simcall): it starts the job a sub-round later
            self._after(1, lambda: self._job_begins(job))
        else:
            self._job_begins(job)

    def _job_begins(self, job: EngineJob) -> None:
        """``execute_job_process`` (``src/jobs_execution.cpp``): the job's start time, its
        hosts' energy and start row, the machines computing, then its first stage."""
        now = self.clock.now
        hosts = job.hosts
        all_hosts = self.hosts
        job.start = now
        job.stage = 0
        # Batsim's remaining_time (execute_job, src/task_execution.cpp; < 0: no walltime)
        job.wall_left = float(job.walltime) if job.walltime > 0 else -1.0
        for hid in hosts:
            h = all_hosts[hid]
            h.jobs.add(job.id)
            if h.state is not HostState.COMPUTING:
                self.machines.set_state(h, HostState.COMPUTING)
        if self.energy:
            job.energy_start = self.machines.energy_of(hosts)
        self.machines.machine_row()
        if self.record.paje is not None:
            self.record.paje.run(now, job, self.book.load_rank(job, len(self.record.paje)) if self.sharing else 0)  # (one job per machine)
        self.machines.energy_row("s", decided=True)
        self._start_stage(job)
        if (self.platform.message_delays is None and job.flops and not any(job.flops) and not job.links
                and not job.pending):
            # a first stage without work ends before the reply's next decision (server.py, "Kills and
            # zero-work jobs"); its queued end becomes stale
            if self._stage_ended(job, job.version, False):
                self._job_completed(job)

    def _stage_flops(self, job: EngineJob, prof: dict) -> list[float]:
        t = prof["type"]
        n = len(job.hosts)
        if t == "parallel_homogeneous":
            return [float(prof["cpu"])] * n
        if t == "parallel_homogeneous_total":
            return [float(prof["cpu"]) / n] * n
        return [float(x) for x in prof["cpu"]]

    def _start_stage(self, job: EngineJob) -> None:
        """Start the current stage of ``job`` at ``now`` and arm its end timer."""
        name, prof = job.stages[job.stage]
        job.stage_start = self.clock.now
        job.version += 1
        self._drop_walltime(job)
        old_links = job.links
        if old_links:
            self._unlink(job)
        if prof["type"] == "delay":
            if job.flops:  # a computing stage just ended: its hosts lose its load
                job.flops = []
                job.rate = 0.0
                self._reshare(job.hosts, links=old_links)
            delay = float(prof["delay"])
            # do_delay_task: one sleep, of the delay if strictly shorter than the walltime left,
            # else of the walltime left (a timeout)
            left = job.wall_left
            if left >= 0 and not delay < left:
                self._sleep_timer(left, Kind.JOB_END, (job, job.version, True))
            else:
                self._sleep_timer(delay, Kind.JOB_END, (job, job.version, False))
                if left > 0:
                    job.wall_left = left - delay
            return
        job.flops = self._stage_flops(job, prof)
        job.wall_t0 = self.clock.now   # execute_parallel_task's time_before_execute
        if self.platform.uncoordinated and len(job.hosts) > 1:
            talking = sorted({job.hosts[k] for i, j, _ in _byte_pairs(prof, len(job.hosts)) for k in (i, j)})
            self._routed(talking, f"the communications of job {job.id}'s profile {name!r}")
        net = self._stage_network(job, prof) if self.platform.routes is not None else None
        if len(job.hosts) == 1:  # Exec::on_start updates the energy of a single-host execution
            self.machines.updated(job.hosts)
        self._ptasks += 1
        job.index = self._ptasks  # SimGrid's action order: same-instant ends are handled in it
        job.remaining = 1.0
        job.rate = 0.0
        job.action = None
        job.net_bound = _INF
        if net is not None:
            job.links, latency, job.net_bound = net
            self._link(job)
            if latency > 0:
                # L07Action: the variable is disabled (penalty 0) until the latency is paid
                # (links exist only on platforms with a network, which run on SimGrid's clock)
                job.pending = True
                self._queue.latency(latency, Kind.LATENCY, (job, job.version))
                self._arm_walltime(job)
                self._reshare(job.hosts, links=old_links)  # the previous stage's load leaves
                return
        self._reshare(job.hosts, started=job, links=old_links)
        if job.rate == _INF and self.platform.message_delays is not None:
            self._zero_task_later(job)

    def _zero_task_later(self, job: EngineJob) -> None:
        """Batsim's actor model: the parallel task of a stage without work, which SimGrid ends
        in the next step (``L07Action``: remains 0), is created by the job actor a few
        sub-rounds after it starts the stage: ``exec_init`` sets the task's flops, bytes and hosts
        (three simcalls) before ``start`` (``s4u_Actor.cpp``, ``s4u_Exec.cpp``, SimGrid 3.32); a
        first stage starts a sub-round after the server's ``Actor::create`` (:meth:`_execute`). The server meanwhile has received the reply's next decision (its transfer
        created first), so that decision is handled before the job's end, in the next step.
        Recorded on real Batsim 4.2.1 (``tests/fixtures/batsim_zero_work_order``: a zero-work
        job then SET_RESOURCE_STATE: the switch's ``p`` row comes before the job's ``e`` row;
        then QUERY: ANSWER before JOB_COMPLETED)."""
        job.version += 1   # (the end armed at once is stale)
        v = job.version
        self._after(3, lambda: self._queue.sleep(0.0, Kind.JOB_END, (job, v, False)) if job.version == v else None)

    def _sleep_timer(self, duration: float, kind, payload) -> None:
        """Arm a sleep of ``duration`` s from now: an action on SimGrid's clock (:mod:`.steps`,
        :mod:`.lazysteps`), else (a Full zone the route reader does not know) an event at the
        time rounded to 1e-9 s (:func:`.queue.at`)."""
        if self._steps:
            self._queue.sleep(duration, kind, payload)
        else:
            self._queue.push(at(self.clock.now + duration), kind, payload)

    def _stage_network(self, job: EngineJob, prof: dict) -> tuple[list, float, float] | None:
        """The links a compute stage's communications load, as ``L07Action::L07Action`` expands
        them: ``(links, latency, bound)`` or None when no byte crosses a link.

        The byte matrix is Batsim's (:func:`_byte_pairs`). For each pair with bytes > 0 in row
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
        n = len(job.hosts)
        if n == 1:
            return None
        pairs = _byte_pairs(prof, n)
        if not pairs:
            return None
        routes = self.platform.routes
        names = [self.hosts[hid].spec.name for hid in job.hosts]
        weights: dict = {}
        latency = lat_current = 0.0
        for i, j, b in pairs:
            try:
                links, lat = routes.route(names[i], names[j])
            except NetworkUnsupported as exc:
                raise EngineError(f"t={self.clock.now!r}: job {job.id}'s communications: {exc}") from None
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

    def _link(self, job: EngineJob | HeldTask) -> None:
        """``job``'s (or a held task's) communications load their links (``job.links``); quiet
        message bytes there join the system (:meth:`.netserver.NetworkServerMixin._flow_starts`)."""
        if self._quiet and type(job) is not MessageFlow:
            self._wake_quiet(job.links)
        users = self._link_users
        for ln, _ in job.links:
            users.setdefault(ln, {})[job.id] = job

    def _unlink(self, job: EngineJob | HeldTask) -> None:
        """``job``'s (or a held task's) communications leave their links."""
        users = self._link_users
        for ln, _ in job.links:
            jobs = users.get(ln)
            if jobs is not None:
                jobs.pop(job.id, None)
                if not jobs:
                    del users[ln]
        job.links = ()
        job.pending = False

    def _latency_paid(self, job: EngineJob, version: int) -> None:
        """A task's latency phase is over (``HostL07Model::update_actions_state``): its variable
        is enabled (``System::enable_var`` puts it first, as if created now) and bounded."""
        if version != job.version or job.state != RUNNING or not job.pending:
            return
        self.clock.mark_live()
        job.pending = False
        self._ptasks += 1
        job.index = self._ptasks
        job.stage_start = self.clock.now
        self._reshare(job.hosts, started=job, links=job.links)

    # -------------------------------------------------------------------------------- rates
    def _reshare(self, hids, started: EngineJob | None = None, links=(), solve: bool = False) -> None:
        """The load of hosts ``hids`` (or of the links ``links``, ``[(link, bytes)]``) changed:
        give new rates to the tasks that depend on them, re-arm their end timers and update the
        hosts' power. Without sharing, links or held tasks, a task is alone on its hosts (its
        lockstep rate) unless ``solve`` asks for the system's solution."""
        if not self.sharing and not self._link_users and not links and not self._nheld and not solve:
            if started is not None:
                self._set_rate(started)
                self._arm_compute_end(started)
            else:
                for hid in hids:
                    h = self.hosts[hid]
                    h.load = 0.0
                    self.machines.set_power(h, True)
            return
        tasks = self._connected_tasks(hids, links)
        for j in tasks:
            self._progress_compute(j)
        rates, loads = self._solve_rates(tasks)
        touched = set(hids)
        for j, r in zip(tasks, rates):
            j.rate = r
            touched.update(j.hosts)
        for hid in touched:
            h = self.hosts[hid]
            h.load = loads.get(hid, 0.0)
            self.machines.set_power(h, True)
        for j in tasks:
            if type(j) is not MessageFlow:   # (a message's action reads its new rate itself)
                self._arm_compute_end(j)

    def _connected_tasks(self, hids, links=()) -> list[EngineJob]:
        """The running compute tasks linked to hosts ``hids`` or links ``links`` through shared
        hosts and links (tasks in their latency phase are outside the system)."""
        hosts, jobs, users = self.hosts, self.jobs, self._link_users
        seen_h = set()
        seen_l = set()
        seen_j: dict[str, EngineJob] = {}
        todo = list(hids)
        todo_l = [ln for ln, _ in links]

        def add(j: EngineJob) -> None:
            seen_j[j.id] = j
            todo.extend(j.hosts)
            todo_l.extend(ln for ln, _ in j.links)

        while todo or todo_l:
            while todo:
                hid = todo.pop()
                if hid in seen_h:
                    continue
                seen_h.add(hid)
                h = hosts[hid]
                for jid in h.jobs:
                    j = jobs[jid]
                    if jid not in seen_j and j.flops and not j.pending:
                        add(j)
                for j in h.held:
                    if j.id not in seen_j:
                        add(j)
            while todo_l:
                ln = todo_l.pop()
                if ln in seen_l:
                    continue
                seen_l.add(ln)
                for jid, j in users.get(ln, {}).items():
                    if jid not in seen_j and not j.pending:
                        add(j)
        return sorted(seen_j.values(), key=lambda j: j.index)

    def _solve_rates(self, tasks: list[EngineJob]) -> tuple[list[float], dict[int, float]]:
        """Rates (fraction of the stage per second) of ``tasks`` (one component, in creation
        order) and the busy cores of their hosts, from SimGrid's ``ptask_L07`` system
        (:func:`schedulers.engine.sharing.l07_rates`). A task with no positive flops ends at
        once (rate ``inf``)."""
        hosts = self.hosts
        spec = {}
        for j in tasks:
            for hid in j.hosts:
                if hid not in spec:
                    h = hosts[hid]
                    spec[hid] = (h.spec.cores, h.spec.speeds[h.pstate])
        net = None
        if self._link_users or any(j.net_bound < _INF for j in tasks):   # (Vivaldi: bounds without links)
            net = [(j.links, j.net_bound) for j in tasks]
        try:
            rates, usage = l07_rates([(j.hosts, j.flops) for j in tasks], spec, net)
        except SolverLoop as exc:
            in_play = [j for j in tasks if type(j) is not MessageFlow]
            jobs = [j.id if isinstance(j.id, str) else f"{j.id[0]} (held)" for j in in_play]
            msgs = len(tasks) - len(jobs)
            files = sorted({str(self.workloads_by_name[w].path) for w in (getattr(j, "workload", None) for j in in_play)
                            if w in self.workloads_by_name})
            raise EngineError(f"{', '.join(files) or self.platform.source}: t={self.clock.now!r}: {exc}; the system holds "
                              f"jobs {', '.join(jobs)} and {msgs} of Batsim's messages; real Batsim 4.2.1 hangs in "
                              "this solve (it never returns), the engine stops instead") from None
        for k, j in enumerate(tasks):
            if not j.links and not any(f > 0 for f in j.flops):
                rates[k] = _INF
        loads = {hid: (u / spec[hid][1] if spec[hid][1] > 0 else float(spec[hid][0]))
                 for hid, u in usage.items()}
        return rates, loads

    def _set_rate(self, job: EngineJob) -> None:
        """Lockstep rate of a task alone on its hosts; sets the hosts' loads and power."""
        hosts = self.hosts
        rate = _INF
        for hid, f in zip(job.hosts, job.flops):
            if f > 0:
                s = hosts[hid].spec.speeds[hosts[hid].pstate]
                r = s / f if s > 0 else 0.0
                if r < rate:
                    rate = r
        if job.net_bound < rate < _INF:   # TCP-gamma's bound of communications without links (Vivaldi);
            rate = job.net_bound           # (no flop and no link: no work, done once the latency is paid)
        job.rate = rate
        for hid, f in zip(job.hosts, job.flops):
            h = hosts[hid]
            s = h.spec.speeds[h.pstate]
            h.load = (f * rate / s) if (f > 0 and s > 0 and rate != _INF) else 0.0
            self.machines.set_power(h, True)

    def _walltime_left(self, job) -> float | None:
        """SimGrid's clock (.steps): what is left now of the ``wait_for`` timeout of the current
        compute stage of ``job`` (s; None without walltime): Batsim's ``remaining_time`` at the
        stage's start (``execute_parallel_task``) less the time since."""
        left = job.wall_left
        return None if left < 0 else left - (self.clock.now - job.wall_t0)

    def _arm_walltime(self, job) -> None:
        """SimGrid's clock: arm the current compute stage's ``wait_for`` timeout, once
        (:class:`WallTimer`)."""
        if job.wall_timer is None:
            left = self._walltime_left(job)
            if left is not None:
                t = job.wall_timer = WallTimer(job)
                self._queue.sleep(left, Kind.JOB_END, (t, 0, True))

    @staticmethod
    def _drop_walltime(job) -> None:
        """The current stage's ``wait_for`` is over before its timeout: cancel it."""
        t = job.wall_timer
        if t is not None:
            t.version = 1
            job.wall_timer = None

    def _job_end_of(self, payload) -> tuple | None:
        """The ``(job, version, walltime)`` a JOB_END timer's payload stands for, None when it
        is a :class:`WallTimer` whose stage is over, or whose task ends in this same step: the
        task was created first, so SimGrid ends it first and the job succeeds (its own JOB_END
        comes later in the step)."""
        first = payload[0]
        if type(first) is WallTimer:
            job = first.job
            if job.wall_timer is not first:
                return None
            a = job.action
            if a is not None and self._queue.remains(a) == 0.0:
                return None
            return job, job.version, True
        return payload

    def _arm_compute_end(self, job: EngineJob) -> None:
        job.version += 1
        if self._steps:
            # the task and wait_for's timeout are two actions; the first to end wins (the task
            # when both end in one step: it was created first)
            q = self._queue
            job.action = None
            if job.rate == _INF or job.remaining <= 0:
                q.sleep(0.0, Kind.JOB_END, (job, job.version, False))
            elif job.rate > 0:
                job.action = q.work(job.remaining, job.rate, Kind.JOB_END, (job, job.version, False))
            self._arm_walltime(job)
            return
        if job.rate == _INF or job.remaining <= 0:
            end = self.clock.now
        elif job.rate <= 0:
            end = _INF
        else:
            end = at(self.clock.now + job.remaining / job.rate)
        # wait_for(remaining_time) began with the stage: its timeout is due at wall_t0 + wall_left;
        # a computation ending exactly then succeeds
        kill = at(job.wall_t0 + job.wall_left) if job.wall_left >= 0 else _INF
        if end > kill:
            self._queue.push(kill, Kind.JOB_END, (job, job.version, True))
        elif end != _INF:
            self._queue.push(end, Kind.JOB_END, (job, job.version, False))

    def _hold_task(self, job: EngineJob) -> HeldTask | None:
        """``job`` reaches its walltime now: its parallel task stays in the system as a
        :class:`HeldTask` (None for a delay or a task still paying its latency). Called before the
        job ends, so that the end's re-solve sees the held task in the job's place."""
        if not job.flops or job.pending:
            return None
        self._progress_compute(job)
        held = HeldTask(job, self.clock.now)
        for hid in held.hosts:
            self.hosts[hid].held.append(held)
        self._link(held)
        self._nheld += 1
        return held

    def _release_task(self, held: HeldTask | None) -> None:
        """A held task leaves the system: its job actor released it, or it completed its work
        during the hold. The energy plugin updates its hosts (recorded on
        ``cluster_energy_128.xml``: the hosts of a 16-host job killed at its walltime are charged
        at full power until the release)."""
        if held is None or held.done:
            return
        held.done = True
        held.version += 1
        self._nheld -= 1
        self._progress_compute(held)
        held.action = None
        for hid in held.hosts:
            self.hosts[hid].held.remove(held)
        links = held.links
        self._unlink(held)
        self.machines.updated(held.hosts)
        held.flops = []
        self._reshare(held.hosts, links=links, solve=True)

    def _held_ended(self, held: HeldTask, version: int) -> None:
        """A held task's end timer fired: it completed its work before its release."""
        if version == held.version and not held.done:
            self.clock.mark_live()
            self._release_task(held)

    def _progress_compute(self, job: EngineJob) -> None:
        """Account the work done since the last rate change (compute stages only): on SimGrid's
        clock, the work its action has left (``rate x delta`` taken off at every step,
        ``HostL07Model::update_actions_state``); else ``rate x`` the time since."""
        if job.flops and job.rate not in (0.0, _INF):
            if job.action is not None:
                job.remaining = self._queue.remains(job.action)
            else:
                job.remaining = max(0.0, job.remaining - job.rate * (self.clock.now - job.stage_start))
        job.stage_start = self.clock.now

    def _dvfs(self, hids: list[int], target: int) -> None:
        """Computation pstate change of hosts ``hids`` (instantaneous): running tasks change pace
        (SimGrid ``CpuL07::on_speed_change`` re-bounds the host and its tasks)."""
        running = sorted({jid for hid in hids for jid in self.hosts[hid].jobs})
        held = [t for hid in hids for t in self.hosts[hid].held]
        for jid in running:
            self._progress_compute(self.jobs[jid])
        for t in held:
            self._progress_compute(t)
        for hid in hids:
            self.machines.set_pstate(self.hosts[hid], target)
        for jid in running:
            job = self.jobs[jid]
            if job.flops:
                self._reshare(job.hosts, started=None if self.sharing else job)  # (held tasks: solved)
        if held:
            self._reshare(hids, solve=True)
        for hid in hids:
            self.switches.mark_switch_done(hid, target, machine_row=False)

    # -------------------------------------------------------------------------- progress/end
    def _job_progress(self, job: EngineJob) -> dict[str, Any]:
        """JOB_KILLED's ``job_progress`` entry of a running job (Batsim ``BatTask`` tree)."""
        name, prof = job.stages[job.stage]
        if prof["type"] == "delay":
            d = float(prof["delay"])
            prog = (self.clock.now - job.stage_start) / d if d > 0 else 1.0
        else:
            self._progress_compute(job)
            prog = 1.0 - job.remaining
        # Batsim writes every double of a message as printf "%6f" (the Writer of src/protocol.hpp):
        # a scheduler sees the progress with 6 decimals; in-process, the engine gives the same value
        leaf = {"profile_name": name, "progress": float(f"{prog:f}")}
        top = self.workloads_by_name[job.workload].profiles[job.profile]
        if top["type"] == "composed":
            # one level per composed profile down to the leaf (BatTask tree, protocol.cpp generate_task_tree)
            for pname, index in reversed(job.stages.path(job.stage)):
                leaf = {"profile_name": pname, "current_task_index": index, "current_task": leaf}
        return leaf

    def _stage_ended(self, job: EngineJob, version: int, walltime: bool) -> bool:
        """A JOB_END timer fired: the walltime kills the job, or its current stage ended and the
        next starts; return whether the job ended (a stale timer, ``version`` behind, does nothing)."""
        if version != job.version or job.state != RUNNING:
            return False
        self.clock.mark_live()
        # the stage's action ends (or is cancelled at the walltime): SimGrid updates the energy of
        # its hosts (a parallel task) or of the job actor's host, the allocation's first (a sleep)
        self.machines.updated(job.hosts if job.flops else (min(job.hosts),))
        if walltime:
            self._end_job(job, COMPLETED_WALLTIME_REACHED, -1)
            return True
        self._progress_compute(job)
        if job.flops and job.wall_left >= 0:
            # *remaining_time -= clock - time_before_execute: a hair below 0 means no walltime
            # for the stages left, as in Batsim (execute_parallel_task, do_delay_task)
            job.wall_left -= self.clock.now - job.wall_t0
        code = self._return_code(job)
        if code:
            self._end_job(job, *self._coded_end(job, code))
            return True
        if job.stage + 1 < len(job.stages):
            job.stage += 1
            self._start_stage(job)
            return False
        self._end_job(job, COMPLETED_SUCCESSFULLY, 0)
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
        profiles = self.workloads_by_name[job.workload].profiles
        if profiles[job.profile]["type"] != "composed":
            return 0
        for pname, index in reversed(job.stages.path(job.stage)):   # the innermost first
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
        raise EngineError(f"{self.workloads_by_name[job.workload].path}: t={self.clock.now!r}: job {job.id!r} ends with return "
                          f"code {code} (a profile's 'ret'): {what}")

    def _routed(self, hids, what: str) -> None:
        """SimGrid routes ``what`` (a message, a communication) from or to hosts ``hids``: a
        host of a Vivaldi zone without coordinates aborts the run there (real Batsim 4.2.1,
        :func:`.platform.vivaldi_error`).

        Raises:
            EngineError: naming the platform, the time, the host and what was routed."""
        bad = self.platform.uncoordinated
        for hid in hids:
            name = self.hosts[hid].spec.name
            if name in bad:
                raise EngineError(f"{self.platform.source}: t={self.clock.now!r}: host {name!r} has no 'coordinates' in its "
                                  f"Vivaldi zone and SimGrid routes {what} from or to it: real Batsim 4.2.1 aborts "
                                  f"here (SimGrid 3.32: \"Please specify the Vivaldi coordinates of Host {name}\"); "
                                  "give it coordinates=\"0 0 0\"")

    def _end_job(self, job: EngineJob, state: str, code: int) -> None:
        """Free the hosts of ``job`` and record its completion at ``now``."""
        if self.platform.uncoordinated and state != COMPLETED_KILLED:   # (a killed job's actor sends nothing)
            self._routed((min(job.hosts),), f"job {job.id}'s JOB_COMPLETED")
        self._drop_walltime(job)
        job.state = state
        job.return_code = code
        job.finish = self.clock.now
        job.runtime = self.clock.now - job.start
        job.version += 1
        job.action = None   # (the action refers to the job: no cycle left for the collector)
        p_before = self.machines.p_total
        had_load = bool(job.flops)
        links = job.links
        if links:
            self._unlink(job)
        job.flops = []
        self._running -= 1
        self._finished_jobs += 1
        all_hosts = self.hosts
        for hid in job.hosts:
            h = all_hosts[hid]
            h.jobs.discard(job.id)
            if not h.jobs and h.state is HostState.COMPUTING:
                self.machines.set_state(h, HostState.IDLE)
        if had_load:
            self._reshare(job.hosts, links=links)
        self.machines.machine_row()
        paje = self.record.paje
        if paje is not None:   # (the kill Batsim traces: walltime, or a cancelled parallel task)
            paje.end(self.clock.now, job, state == COMPLETED_WALLTIME_REACHED or (state == COMPLETED_KILLED and code == -2))
        if self.energy:
            if self._instant_switches:   # (actor model: switches ending at this instant)
                self._switches_before_row(job)
            # consumed_energy_on_machines after minus before, both long double sums (exact here)
            job.energy = exact_sum(chain(self.machines.energy_of(job.hosts), map(neg, job.energy_start)))
            job.energy_start = ()
            # Batsim keeps the total its energy row read (EnergyConsumptionTracer::add_job_end)
            e = self.machines.energy_row("e", decided=state == COMPLETED_KILLED, p_before=p_before)
            self.record.last_job_end = self.machines.total_exact() if e is None else e
        else:
            job.energy = -1.0
        self.book.ended(job)
        if paje is not None:
            paje.ended(job)
