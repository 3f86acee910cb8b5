"""SimGrid's parallel tasks in flight: their rates, loads, links, walltime timers and held tasks.

A component of :class:`schedulers.engine.simulator.Engine`: :class:`ParallelTasks` owns what
SimGrid's ``ptask_L07`` model holds of the tasks the executions (:mod:`.execution`) started:
their creation numbers (SimGrid's action order), the links their communications load, the
message bytes crossing links (:class:`MessageFlow`, quiet or in the system), the tasks held after
a walltime (:class:`HeldTask`) and the ``wait_for`` timers of compute stages (:class:`WallTimer`).
It asks :class:`.hosts.Machines` for the hosts' speeds and sets their loads and power, the
:class:`.jobs.JobBook` for the running jobs, the :class:`.clock.Clock` for the time and the
event queue for the actions' ends. It asks nothing of the server: the executions and the actor
model call it.

Behaviour reproduced (SimGrid 3.32, ``src/surf/ptask_L07.cpp``, ``src/kernel/lmm``):

Rates
    Alone on its hosts a task runs in lockstep at ``r = min_h speed_h / f_h`` (fraction of the
    task per second, ``L07Action::calculate_cpu_bound``) and host ``h`` carries
    ``f_h * r / speed_h`` busy cores. Tasks sharing hosts or links (compute sharing, networks,
    held tasks, messages) get the rates of the ``ptask_L07`` linear system
    (:func:`.sharing.l07_rates`), re-solved for the tasks connected to what changed only.
    A task keeps one SimGrid action through its rate changes: its work left is the action's
    (``rate x delta`` taken off at every step, ``HostL07Model::update_actions_state``).
Latency
    A task whose communications pay a route latency is outside the system (penalty 0) until
    it is paid, then enabled as the newest variable (``System::enable_var``).
Messages
    One of Batsim's messages is an ``L07Action`` of one byte on its route's links
    (``NetworkL07Model::communicate``); alone on its links it keeps its route's rate and stays
    out of the system (quiet) until a job's flow or another message comes onto them.
Held tasks
    At the walltime Batsim's job actor stops waiting for its task but does not cancel it
    (``execute_task``, ``src/task_execution.cpp``): the task computes on until its job actor
    releases it (:meth:`ParallelTasks.release_task`; see :mod:`.execution`).
"""

from __future__ import annotations

import math
from typing import Any

from ..core.model import JobState
from .clock import Clock, shown_time
from .hosts import Machines
from .jobs import JobBook
from .netroute import TCP_GAMMA
from .platform import PlatformSpec
from .ports import EngineError
from .queue import Kind, at
from .sharing import SolverLoop, l07_rates
from .workload import EngineJob

_INF = math.inf
RUNNING = JobState.RUNNING.value


class HeldTask:
    """The parallel task of a job that reached its walltime, still in SimGrid's system until its
    job actor releases it (see "Held tasks" above). Same execution fields as an
    :class:`~.workload.EngineJob`'s current stage (``hosts``, ``flops`` in flops, ``rate`` in
    fractions/s, ``remaining`` fraction, ``links``, ``net_bound``), so that the sharing code
    solves it with the running tasks; ``id`` is ``(job id,)``, never equal to a job's id."""

    __slots__ = ("id", "hosts", "flops", "index", "remaining", "rate", "stage_start", "version",
                 "wall_left", "links", "net_bound", "pending", "done", "action", "wall_timer", "io_hosts")

    def __init__(self, job: EngineJob, now: float) -> None:
        self.id = (job.id,)
        self.hosts = job.hosts
        self.io_hosts = job.io_hosts    # an IO task's hosts (compute, storage), or None
        self.flops = list(job.flops)
        self.index = job.index          # SimGrid's creation order, kept
        self.remaining = job.remaining
        self.rate = job.rate
        self.action: Any = None         # (its own once armed; until then remaining is current)
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

    def __init__(self, job: EngineJob) -> None:
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


class ParallelTasks:
    """SimGrid's ``ptask_L07`` model of the running tasks (see the module docstring).

    Args:
        machines: the hosts (speeds, pstates; loads and power set here).
        book: the jobs (:attr:`.jobs.JobBook.live`: a running job by id).
        clock: the current time.
        timers: the event queue (:class:`.queue.EventQueue`, :class:`.steps.StepQueue` or
            :class:`.lazysteps.LazyStepQueue`).
        steps: whether ``timers`` is SimGrid's step clock (actions), not the 1e-9-s clock.
        sharing: Batsim's ``--enable-compute-sharing``.
        platform: the platform (its source and uncoordinated Vivaldi hosts, for errors).

    Attributes:
        count: parallel tasks (and message flows) created so far: SimGrid's action order.
        link_users: link -> {task id: task} loading it.
        quiet: id(message) -> (its action, its number): message bytes alone on their links.
        flows: id(message) -> its :class:`MessageFlow`, while in the system.
        nheld: held tasks in the system.
    """

    def __init__(self, machines: Machines, book: JobBook, *, clock: Clock, timers: Any, steps: bool,
                 sharing: bool, platform: PlatformSpec) -> None:
        self.machines = machines
        self.hosts = machines.hosts
        self.book = book
        self.jobs = book.live
        self.clock = clock
        self.timers = timers
        self.steps = steps
        self.sharing = sharing
        self.platform = platform
        self.count = 0
        self.link_users: dict[Any, dict[Any, Any]] = {}
        self.quiet: dict[int, tuple[Any, int]] = {}
        self.flows: dict[int, MessageFlow] = {}
        self.nheld = 0

    def next_index(self) -> int:
        """A new action's creation number (SimGrid's order of same-instant ends)."""
        self.count += 1
        return self.count

    # ------------------------------------------------------------------------------- links
    def link(self, job: Any) -> None:
        """``job``'s (a task's, a held task's or a message flow's) communications load their
        links (``job.links``); quiet message bytes there join the system (:meth:`flow_starts`)."""
        if self.quiet and type(job) is not MessageFlow:
            self._wake_quiet(job.links)
        users = self.link_users
        for ln, _ in job.links:
            users.setdefault(ln, {})[job.id] = job

    def unlink(self, job: Any) -> None:
        """``job``'s (or a held task's, a message flow's) communications leave their links."""
        users = self.link_users
        for ln, _ in job.links:
            jobs = users.get(ln)
            if jobs is not None:
                jobs.pop(job.id, None)
                if not jobs:
                    del users[ln]
        job.links = ()
        job.pending = False

    def latency_paid(self, job: EngineJob | HeldTask, version: int) -> None:
        """A task's latency phase is over (``HostL07Model::update_actions_state``): its variable
        is enabled (``System::enable_var`` puts it first, as if created now) and bounded. A held
        task (:meth:`hold_task`) computes from then on, nothing updating its hosts' energy."""
        if isinstance(job, HeldTask):
            if version != job.version or job.done or not job.pending:
                return
            self.clock.mark_live()
            job.pending = False
            job.index = self.next_index()
            job.stage_start = self.clock.now
            self.reshare(job.hosts, links=job.links, solve=True)
            return
        if version != job.version or job.state != RUNNING or not job.pending:
            return
        self.clock.mark_live()
        job.pending = False
        job.index = self.next_index()
        job.stage_start = self.clock.now
        self.reshare(job.hosts, started=job, links=job.links)

    # ------------------------------------------------------------------------------ messages
    def flow_starts(self, action: Any) -> None:
        """A message's byte starts crossing its links (its latency is paid): its flow joins the
        sharing system, and, where jobs' communications or other messages use those links, every
        rate there is solved again (SimGrid's next solve): the jobs' tasks slow down while the
        byte crosses, and a host's energy read before the byte is through charges its interval
        at the lowered load (``HostEnergy::update``).

        A byte alone on its links (no job's flow, no other message there) gets its route's rate
        whatever the solver (one variable of weight 1): it stays out of the system, *quiet*,
        its creation number kept, until a job's flow or another message comes onto one of its
        links (:meth:`_wake_quiet`); on a ``Full`` zone's loopback that is nearly every message."""
        number = self.next_index()
        users = self.link_users
        links = action.links
        if self.quiet:
            self._wake_quiet(links)
        if not any(ln in users for ln, _ in links):
            self.quiet[id(action.payload)] = (action, number)
            return
        flow = MessageFlow(action, number, action.payload[2][0])
        self.link(flow)
        self.flows[id(action.payload)] = flow
        self.reshare((), links=flow.links)

    def _wake_quiet(self, links: Any) -> None:
        """The quiet message bytes on ``links`` (``[(link, weight)]``) join the sharing system,
        each with its creation number (the caller solves the system again)."""
        on = {ln for ln, _ in links}
        for key, (action, number) in list(self.quiet.items()):
            if any(ln in on for ln, _ in action.links):
                del self.quiet[key]
                flow = MessageFlow(action, number, action.payload[2][0])
                self.link(flow)
                self.flows[key] = flow

    def message_received(self, msg: tuple) -> MessageFlow | None:
        """Message ``msg`` reached the server: it is no longer quiet; returns its flow, if it
        was in the system (:meth:`flow_ends` once the server handled it)."""
        flow = self.flows.pop(id(msg), None) if self.flows else None
        if self.quiet:
            self.quiet.pop(id(msg), None)
        return flow

    def flow_ends(self, flow: MessageFlow) -> None:
        """A message's byte is through: its flow leaves the system; the rates it lowered are
        solved again."""
        links = flow.links
        self.unlink(flow)
        if any(ln in self.link_users for ln, _ in links):
            self.reshare((), links=links)

    # -------------------------------------------------------------------------------- rates
    def reshare(self, hids: Any, started: EngineJob | None = None, links: Any = (), solve: bool = False) -> None:
        """The load of hosts ``hids`` (or of the links ``links``, ``[(link, bytes)]``) changed:
        give new rates to the tasks that depend on them, re-arm their end timers and update the
        hosts' power. Without sharing, links or held tasks, a task is alone on its hosts (its
        lockstep rate) unless ``solve`` asks for the system's solution. On SimGrid's clock a
        task whose action ended in the step being handled is left out: SimGrid finished it
        before any actor ran (``HostL07Model::update_actions_state``), so a kill in the same
        step does not delay its end (``tests/fixtures/batsim_vivaldi_sharing_tie``)."""
        if not self.sharing and not self.link_users and not links and not self.nheld and not solve:
            if started is not None:
                self._set_rate(started)
                self.arm_compute_end(started)
            else:
                for hid in hids:
                    h = self.hosts[hid]
                    h.load = 0.0
                    self.machines.set_power(h, True)
            return
        tasks = self._connected_tasks(hids, links)
        if self.steps:
            # a task whose action ended in this step is out of SimGrid's sharing system already
            # (``update_actions_state`` finishes it before any actor runs): its end stands
            tasks = [j for j in tasks if not self._ended_in_step(j)]
        for j in tasks:
            self.progress_compute(j)
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
                self.arm_compute_end(j, keep=j is not started)

    def _ended_in_step(self, job: Any) -> bool:
        """Whether the action of ``job``'s task ended in the step just played (SimGrid's clock,
        its work left 0) while its end is not handled yet."""
        a = getattr(job, "action", None)
        return a is not None and type(job) is not MessageFlow and self.timers.remains(a) == 0.0

    def _connected_tasks(self, hids: Any, links: Any = ()) -> list[Any]:
        """The running compute tasks linked to hosts ``hids`` or links ``links`` through shared
        hosts and links (tasks in their latency phase are outside the system)."""
        hosts, jobs, users = self.hosts, self.jobs, self.link_users
        seen_h = set()
        seen_l = set()
        seen_j: dict[Any, Any] = {}
        todo = list(hids)
        todo_l = [ln for ln, _ in links]

        def add(j: Any) -> None:
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
                for t in h.held:
                    if t.id not in seen_j and not t.pending:
                        add(t)
            while todo_l:
                ln = todo_l.pop()
                if ln in seen_l:
                    continue
                seen_l.add(ln)
                for jid, u in users.get(ln, {}).items():
                    if jid not in seen_j and not u.pending:
                        add(u)
        return sorted(seen_j.values(), key=lambda j: j.index)

    def _solve_rates(self, tasks: list[Any]) -> tuple[list[float], dict[int, float]]:
        """Rates (fraction of the stage per second) of ``tasks`` (one component, in creation
        order) and the busy cores of their hosts, from SimGrid's ``ptask_L07`` system
        (:func:`schedulers.engine.sharing.l07_rates`). A task with no positive flops ends at
        once (rate ``inf``).

        Raises:
            EngineError: SimGrid's solver would never return (:class:`.sharing.SolverLoop`)."""
        hosts = self.hosts
        spec = {}
        for j in tasks:
            for hid in j.hosts:
                if hid not in spec:
                    h = hosts[hid]
                    spec[hid] = (h.spec.cores, h.spec.speeds[h.pstate])
        net = None
        if self.link_users or any(j.net_bound < _INF for j in tasks):   # (Vivaldi: bounds without links)
            net = [(j.links, j.net_bound) for j in tasks]
        try:
            rates, usage = l07_rates([(j.hosts, j.flops) for j in tasks], spec, net)
        except SolverLoop as exc:
            in_play = [j for j in tasks if type(j) is not MessageFlow]
            jobs = [j.id if isinstance(j.id, str) else f"{j.id[0]} (held)" for j in in_play]
            msgs = len(tasks) - len(jobs)
            by_name = self.book.by_name
            files = sorted({str(by_name[w].path) for w in (getattr(j, "workload", None) for j in in_play)
                            if w in by_name})
            batsim = ("hangs in this solve (it never returns)" if exc.rounds == _INF else
                      "spends that long in this solve")
            # (the clock's exact value, as SimGrid's log shows it where Batsim hangs: 1.300002e-09)
            raise EngineError(f"{', '.join(files) or self.platform.source}: t={self.clock.now!r}: {exc}; the system holds "
                              f"jobs {', '.join(jobs)} and {msgs} of Batsim's messages; real Batsim 4.2.1 {batsim}, "
                              "the engine stops instead") from None
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

    def progress_compute(self, job: Any) -> None:
        """Account the work done since the last rate change (compute stages only): on SimGrid's
        clock, the work its action has left (``rate x delta`` taken off at every step,
        ``HostL07Model::update_actions_state``); else ``rate x`` the time since."""
        if job.flops and job.rate not in (0.0, _INF):
            if job.action is not None:
                job.remaining = self.timers.remains(job.action)
            else:
                job.remaining = max(0.0, job.remaining - job.rate * (self.clock.now - job.stage_start))
        job.stage_start = self.clock.now

    def dvfs(self, hids: list[int], target: int) -> None:
        """Computation pstate change of hosts ``hids`` (instantaneous): running tasks change pace
        (SimGrid ``CpuL07::on_speed_change`` re-bounds the host and its tasks). The switches
        (:class:`.switching.Switches`) then mark the hosts' switches done."""
        running = sorted({jid for hid in hids for jid in self.hosts[hid].jobs})
        held = [t for hid in hids for t in self.hosts[hid].held]
        for jid in running:
            self.progress_compute(self.jobs[jid])
        for t in held:
            self.progress_compute(t)
        for hid in hids:
            self.machines.set_pstate(self.hosts[hid], target)
        for jid in running:
            job = self.jobs[jid]
            if job.flops:
                self.reshare(job.hosts, started=None if self.sharing else job)  # (held tasks: solved)
        if held:
            self.reshare(hids, solve=True)

    def routed(self, hids: Any, what: str) -> None:
        """SimGrid routes ``what`` (a message, a communication) from or to hosts ``hids``: a
        host of a Vivaldi zone without coordinates aborts the run there (real Batsim 4.2.1,
        :func:`.platform.vivaldi_error`).

        Raises:
            EngineError: naming the platform, the time, the host and what was routed."""
        bad = self.platform.uncoordinated
        for hid in hids:
            name = self.hosts[hid].spec.name
            if name in bad:
                raise EngineError(f"{self.platform.source}: t={shown_time(self.clock.now)}: host {name!r} has no 'coordinates' in its "
                                  f"Vivaldi zone and SimGrid routes {what} from or to it: real Batsim 4.2.1 aborts "
                                  f"here (SimGrid 3.32: \"Please specify the Vivaldi coordinates of Host {name}\"); "
                                  "give it coordinates=\"0 0 0\"")

    # ------------------------------------------------------------------------ end timers
    def _walltime_left(self, job: EngineJob) -> float | None:
        """SimGrid's clock (.steps): what is left now of the ``wait_for`` timeout of the current
        compute stage of ``job`` (s; None without walltime): Batsim's ``remaining_time`` at the
        stage's start (``execute_parallel_task``) less the time since."""
        left = job.wall_left
        return None if left < 0 else left - (self.clock.now - job.wall_t0)

    def arm_walltime(self, job: Any) -> None:
        """SimGrid's clock: arm the current compute stage's ``wait_for`` timeout, once
        (:class:`WallTimer`)."""
        if job.wall_timer is None:
            left = self._walltime_left(job)
            if left is not None:
                t = job.wall_timer = WallTimer(job)
                self.timers.sleep(left, Kind.JOB_END, (t, 0, True))

    @staticmethod
    def drop_walltime(job: EngineJob) -> None:
        """The current stage's ``wait_for`` is over before its timeout: cancel it."""
        t = job.wall_timer
        if t is not None:
            t.version = 1
            job.wall_timer = None

    def job_end_of(self, payload: tuple) -> tuple | None:
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
            if a is not None and self.timers.remains(a) == 0.0:
                return None
            return job, job.version, True
        return payload

    def arm_compute_end(self, job: Any, keep: bool = False) -> None:
        """Arm the end of ``job``'s current task (an :class:`EngineJob`'s or a
        :class:`HeldTask`) at its rate: on SimGrid's clock an action (and the stage's
        ``wait_for`` timeout, :meth:`arm_walltime`); else an event at the end time rounded to
        1e-9 s, or at the walltime if that comes first. ``keep``: the task was running and
        only its rate changed: its action keeps its place in SimGrid's creation order (of two
        tasks ending in one step, the one created first wakes its actor first; recorded on
        Batsim 4.2.1, ``tests/fixtures/batsim_rate_change_order``)."""
        job.version += 1
        if self.steps:
            # the task and wait_for's timeout are two actions; the first to end wins (the task
            # when both end in one step: it was created first)
            q = self.timers
            old = job.action if keep else None
            job.action = None
            if job.rate == _INF or job.remaining <= 0:
                q.sleep(0.0, Kind.JOB_END, (job, job.version, False))
            elif job.rate > 0:
                job.action = q.work(job.remaining, job.rate, Kind.JOB_END, (job, job.version, False), replace=old)
            self.arm_walltime(job)
            return
        now = self.clock.now
        if job.rate == _INF or job.remaining <= 0:
            end = now
        elif job.rate <= 0:
            end = _INF
        else:
            end = at(now + job.remaining / job.rate)
        # wait_for(remaining_time) began with the stage: its timeout is due at wall_t0 + wall_left;
        # a computation ending exactly then succeeds
        kill = at(job.wall_t0 + job.wall_left) if job.wall_left >= 0 else _INF
        if end > kill:
            self.timers.push(kill, Kind.JOB_END, (job, job.version, True))
        elif end != _INF:
            self.timers.push(end, Kind.JOB_END, (job, job.version, False))

    # -------------------------------------------------------------------------- held tasks
    def hold_task(self, job: EngineJob) -> HeldTask | None:
        """``job`` reaches its walltime now: its parallel task stays in the system as a
        :class:`HeldTask` (None for a delay). Called before the job ends, so that the end's
        re-solve sees the held task in the job's place. A task still paying its communications'
        latency stays outside the system until it is paid (its latency action now ends for the
        held task, :meth:`latency_paid`), then computes until released: recorded on Batsim 4.2.1,
        ``tests/fixtures/batsim_pending_held``."""
        if not job.flops:
            return None
        self.progress_compute(job)
        held = HeldTask(job, self.clock.now)
        if job.pending:
            held.pending = True
            self.timers.hand_over(Kind.LATENCY, (job, job.version), (held, held.version))
        for hid in held.hosts:
            self.hosts[hid].held.append(held)
        self.link(held)
        self.nheld += 1
        return held

    def release_task(self, held: HeldTask | None) -> None:
        """A held task leaves the system: its job actor released it, or it completed its work
        during the hold. The energy plugin updates its hosts (recorded on
        ``cluster_energy_128.xml``: the hosts of a 16-host job killed at its walltime are charged
        at full power until the release)."""
        if held is None or held.done:
            return
        held.done = True
        held.version += 1
        self.nheld -= 1
        self.progress_compute(held)
        held.action = None
        for hid in held.hosts:
            self.hosts[hid].held.remove(held)
        links = held.links
        self.unlink(held)
        if held.io_hosts is None:
            self.machines.updated(held.hosts)
        else:   # an IO task's own hosts (a data_staging's: its two storage hosts only)
            self.machines.updated(held.io_hosts[0])
            self.machines.storage_updated(held.io_hosts[1])
        held.flops = []
        self.reshare(held.hosts, links=links, solve=True)

    def held_ended(self, held: HeldTask, version: int) -> None:
        """A held task's end timer fired: it completed its work before its release."""
        if version == held.version and not held.done:
            self.clock.mark_live()
            self.release_task(held)
