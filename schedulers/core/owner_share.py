"""The skeleton OSEP, HOSEP and EHOSEP share: tasks, idle hosts, periodic decision rounds,
preemption by kill and resubmission, checkpointing, and the end of the dynamic registrations.

A subclass gives only its choices (the hooks below); this module does the protocol. Sources
(``shared/papers``, ``L<n>`` = line of the plain-text file): ``000`` = the HOSEP paper, ``001`` =
the monograph.

The loop, after the events of every Batsim message (:meth:`OwnerSharePolicy.schedule`):

1. **Hosts freed by a preemption** go to the task the decision reserved them for.
2. **Idle hosts** go to ready tasks first (000 §3.3 L326, "O processo faz inicialmente a alocação
   de tarefas a nós desocupados"): users in :meth:`~OwnerSharePolicy.idle_user_order`, each
   user's tasks in :meth:`~OwnerSharePolicy.ready_key` order, hosts by
   :meth:`~OwnerSharePolicy.choose_idle_hosts` (which may refuse a task: the next one is tried).
3. **A decision round** (001 Fig. 1, "Algoritmo Dinâmico de Atualização", L306-317: every ``t``
   seconds, call the decision algorithm with ``maxt``): at most ``maxt`` times, ask
   :meth:`~OwnerSharePolicy.decision_step` for a (victim task, beneficiary task) pair; the
   victim's job is killed (KILL_JOB), its hosts reserved for the beneficiary, and the accounting
   (:class:`~schedulers.core.ownership.Ownership`) updated at once, so that the next step of the
   same round sees it (001 Fig. 3 line 7, "Atualiza informações dos usuários"). The recursion of
   the papers' algorithms (line 9) is this loop; it stops when a step finds nothing to do (a
   literal re-call with the same ``maxt`` and an unchanged state would never end).
   Rounds run at ``k x t`` s (``t`` = option ``period``), only while some task waits for a host;
   ``period = 0`` runs a round after every message instead. A round that ends with nothing to do
   is not repeated until an event (a submission, an end, a kill) changes the state: the
   quantities the decision reads (allocations, demands) change only at events, so the skipped
   rounds could only decide the same nothing.
4. When Batsim reports the kill (JOB_KILLED with ``job_progress``), the task's rest is submitted
   as job ``<name>#<k>`` (REGISTER_JOB; with checkpointing a new profile holding the work left,
   REGISTER_PROFILE), see :mod:`schedulers.core.preemption`.
5. Once Batsim has no more static jobs and every task is over, NOTIFY ``registration_finished``
   (Batsim ends a simulation with dynamic jobs only after it).

Batsim features: ``--enable-dynamic-jobs`` (restarts) and ``--forward-profiles-on-submission``
(task sizes: HOSEP picks the smallest task, checkpoints shrink the profile); ``gridsched run`` and
campaigns switch both on, ``gridsched serve`` stops at SIMULATION_BEGINS with the flag to add when
Batsim runs without them. Host speeds are needed too (``serve --platform FILE``).

Cost under a backlog: each user's ready tasks are kept in :meth:`OwnerSharePolicy.ready_key`
order, also by number of hosts (:class:`ReadyTasks`), so the idle-host fill and the decision
steps' search for a task that fits walk only the tasks that fit, without sorting the ready tasks
at every pass (``benchmarks/bench_backlog.py --owned``: OSEP, HOSEP and EHOSEP at 10k jobs 2-5x
EASY's engine time, from 7-33x, same schedules).

A job's ``user`` field names its user; a host's ``owner`` property its owner
(:mod:`schedulers.core.ownership`). Jobs that can never run (:meth:`OwnerSharePolicy.never_runs`:
larger than the platform, and for EHOSEP above their user's power limit) are rejected.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from typing import Any, ClassVar, Iterator

from .backfilling import lowest_bits, procset_to_mask
from .model import Job, JobState, PolicyInputError
from .ownership import MissingUserError, Ownership
from .policy import (Option, Policy, PolicyError, PolicyOptionError, option_flag, option_number,
                     option_unused)
from .preemption import SHRINKABLE, Task, checkpoint, profile_work, remaining_profile, restart_name

__all__ = ["OwnerSharePolicy", "ReadyTasks"]

#: Job fields a restart does not copy from the killed job (they are set anew, or are
#: :meth:`Policy.register_job` parameters).
_NOT_COPIED = frozenset(("id", "subtime", "res", "profile", "walltime", "track", "profile_data"))

#: Least ``period`` above 0 (s): rounds are at ``k x period``, and the next one is asked with
#: CALL_ME_LATER; a shorter period (1e-300) gives, in doubles, the current time itself, on
#: which Batsim 4.2.1 aborts ("You asked to be awaken in the past!"). 1 ms keeps ``(k + 1) x
#: period`` above the clock up to 2**34 s, where a double resolves 2e-6 s.
MIN_PERIOD = 0.001


class OwnerSharePolicy(Policy):
    """Base of the owner-share policies (see the module docstring for the loop).

    Options (``option_docs``): ``period`` (s), ``maxt``, ``checkpoint``, ``block`` (s).

    Attributes:
        own: the :class:`~schedulers.core.ownership.Ownership` accounting (after
            SIMULATION_BEGINS), keyed by task (original job id).
        tasks: every task by original job id.
        maxt: preemptions allowed per decision round.

    Raises (from the constructor):
        PolicyOptionError: a bad option value (one line naming the policy and option).
    """

    needs_speeds: ClassVar[bool] = True
    requires: ClassVar[frozenset[str]] = frozenset({"dynamic-jobs", "forward-profiles"})
    option_docs: ClassVar[dict[str, str]] = {
        "period": Option("seconds between decision rounds (t of the monograph's update algorithm, Fig. 1 "
                         "line 1), rounds at k x t; 0: a round after every Batsim message",
                         type="0, or a number >= 0.001 (s)", default="60"),
        "maxt": Option("most preemptions per decision round (maxt, monograph §3.3.1)",
                       type="integer >= 0", default="the number of hosts"),
        "checkpoint": Option("keep the completed blocks of a preempted task (monograph §3.4, §5.4)",
                             type="true or false", default="false"),
        "block": Option("checkpoint block: seconds of execution on the host that ran it (monograph §5.4); "
                        "refused without checkpoint",
                        type="number > 0 (s)", default="600"),
    }

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        o = self.options
        self.period = option_number(self.name, o, "period", 60.0, low=0.0, high_open=True)
        if 0 < self.period < MIN_PERIOD:
            raise PolicyOptionError(f"policy {self.name!r}: option 'period' must be 0 (a round after every message) "
                                    f"or at least {MIN_PERIOD:g} s, got {self.period!r}: a shorter one puts the next "
                                    "round at the current time, a call Batsim 4.2.1 aborts on")
        maxt = o.get("maxt")
        if maxt is not None and (isinstance(maxt, bool) or not isinstance(maxt, int) or maxt < 0):
            raise PolicyOptionError(f"policy {self.name!r}: option 'maxt' must be an integer >= 0, got {maxt!r}")
        self._maxt_option: int | None = maxt
        self.checkpointing = option_flag(self.name, o, "checkpoint")
        self.block = option_number(self.name, o, "block", 600.0, low=0.0, low_open=True, high_open=True)
        if not self.checkpointing:   # (an axis over block would label runs with values never used)
            option_unused(self.name, o, ("block",), "checkpoint false (no completed block is kept)")
        self.maxt = 0
        self.own: Ownership = None  # type: ignore[assignment]  # set at SIMULATION_BEGINS, before any hook
        self.tasks: dict[str, Task] = {}
        self._task_of: dict[str, Task] = {}              # Batsim job id (original or restart) -> task
        self._ready: dict[str, ReadyTasks] = {}          # user -> runnable waiting tasks
        self._reserved: dict[str, Task] = {}             # task id -> task waiting for the hosts a kill frees
        self._tick_at: float | None = None
        self._tick_due = False
        self._last_round: float | None = None
        self._stable = False        # the last round found nothing to do and no event came since
        self._ended = 0
        self._registration_done = False
        self.preemptions: dict[str, int] = {}            # victim user -> preemptions
        self.wasted: dict[str, float] = {}               # victim user -> flops lost

    # ------------------------------------------------------------------------------ hooks
    def idle_user_order(self, users: list[str]) -> list[str]:
        """The order in which users with ready tasks get idle hosts (``users`` sorted by name)."""
        raise NotImplementedError

    def ready_key(self, task: Task) -> Any:
        """Sort key of a ready task among its user's, smallest first (unique: end it with the
        task's ``index``). Read once, when the task becomes ready (submitted or restarted): it must
        not change while the task waits, as the ready tasks are kept in this order
        (:class:`ReadyTasks`) instead of being sorted at every pass."""
        raise NotImplementedError

    def ready_order(self, tasks: list[Task]) -> list[Task]:
        """``tasks`` in :meth:`ready_key` order."""
        return sorted(tasks, key=self.ready_key)

    def choose_idle_hosts(self, task: Task, free: list[int]) -> tuple[int, ...] | None:
        """``task.res`` hosts among the idle ``free`` ids (sorted; ``len(free) >= task.res``), or
        None when none of them may run ``task`` (EHOSEP: every choice would exceed the user's power
        limit); the skeleton then tries the user's next ready task, then the next user."""
        raise NotImplementedError

    def decision_step(self) -> tuple[Task, Task] | None:
        """One step of the decision algorithm: ``(victim, beneficiary)`` -- preempt the active task
        ``victim`` and give its hosts to the ready task ``beneficiary`` -- or None to end the round.
        Helpers: :meth:`ready_tasks`, :meth:`active_tasks`, :meth:`fits`, :attr:`own`."""
        raise NotImplementedError

    # ------------------------------------------------------------------------------ views
    def ready_tasks(self, user: str) -> list[Task]:
        """``user``'s runnable waiting tasks (Ready, 001 §3.3.2 L345) in :meth:`ready_key` order:
        the list kept up to date (not a copy, ``O(1)``; read it, do not change it, and read it
        again after placing a task)."""
        ready = self._ready.get(user)
        return ready.tasks if ready is not None else []

    def first_ready_fitting(self, user: str, hosts: tuple[int, ...]) -> Task | None:
        """``user``'s first ready task (:meth:`ready_key` order) that :meth:`fits` ``hosts``, or
        None; through :meth:`ReadyTasks.fitting`, not a scan of every ready task."""
        ready = self._ready.get(user)
        return None if ready is None else next(ready.fitting(len(hosts)), None)

    def users_with_ready(self) -> list[str]:
        """Users with at least one runnable waiting task, sorted by name."""
        return sorted(u for u, ts in self._ready.items() if ts)

    def active_tasks(self, user: str) -> list[Task]:
        """``user``'s Active tasks (001 §3.3.2 L344): running, and not already being killed."""
        return [t for j in self.own.running_jobs(user) if (t := self.tasks[j]).job.state == JobState.RUNNING
                and not t.killing]

    def elapsed(self, task: Task) -> float:
        """How long ``task``'s current run has executed (s), ``w_j`` of 001 §3.3.2 L358."""
        start = task.job.start_time
        return 0.0 if start is None else self.now - start

    @staticmethod
    def smallest_key(task: Task) -> tuple[float, float, int]:
        """Sort key of ``task`` by size, smallest first: the work of the current profile (flops,
        per host) times the hosts it asks for, unknown sizes last; ties by arrival, then arrival
        rank (HOSEP's and EHOSEP's "menor tarefa", 000 §3.3 i, 001 §4.3.2, 003 alg. lines 5 and
        11). It changes only when a restart gets a new profile (the task is then ready anew)."""
        w = task.work
        return (math.inf if w is None else w * task.res, task.arrival, task.index)

    @staticmethod
    def smallest_first(tasks: list[Task]) -> list[Task]:
        """``tasks`` by :meth:`smallest_key`."""
        return sorted(tasks, key=OwnerSharePolicy.smallest_key)

    @staticmethod
    def fits(task: Task, hosts: tuple[int, ...]) -> bool:
        """True when ``task`` can run on the hosts a preemption frees (it needs no more of them;
        :meth:`first_ready_fitting` searches by this test)."""
        return task.res <= len(hosts)

    # ------------------------------------------------------------------------ idle-host shutdown
    def hosts_wanted(self) -> int:
        """Hosts the waiting tasks need now (idle-host shutdown, :meth:`Policy.hosts_wanted
        <schedulers.core.policy.Policy.hosts_wanted>`): the ``res`` of the ready tasks, summed, at
        most the number of hosts. A task waiting for the hosts a kill frees (reserved by a decision
        round) needs no other host, although its job is still waiting for Batsim."""
        cap = len(self.platform.hosts)
        total = 0
        for tasks in self._ready.values():
            for task in tasks.tasks:
                total += task.res
                if total >= cap:
                    return cap
        return total

    def hosts_to_wake(self, asleep: int, n: int) -> int:
        """The ``n`` sleeping hosts (bit mask, among ``asleep``) idle-host shutdown wakes
        (:meth:`Policy.hosts_to_wake <schedulers.core.policy.Policy.hosts_to_wake>`): the hosts
        the waiting users own. Users with ready tasks in :meth:`idle_user_order`, each one's ready
        tasks in :meth:`ready_key` order, each task takes :meth:`choose_idle_hosts` among its user's
        own sleeping hosts not taken yet (all of them when it needs more; nothing when the hook
        refuses); a task's hosts beyond ``n`` are cut in the hook's order. The lowest ids of the
        other sleeping hosts make up ``n``. Woken, a user's own hosts are the idle hosts its tasks
        get, instead of another owner's, which that owner's next task would take back by a kill."""
        own = self.own
        out = 0
        if own is not None:
            for user in self.idle_user_order(self.users_with_ready()):
                for task in self.ready_tasks(user):
                    left = n - out.bit_count()
                    if left <= 0:
                        return out
                    mine = [i for i in own.share(user) if asleep >> i & 1 and not out >> i & 1]
                    if not mine:
                        break
                    pick = tuple(mine) if len(mine) < task.res else self.choose_idle_hosts(task, mine)
                    for i in (pick or ())[:left]:
                        out |= 1 << i
        left = n - out.bit_count()
        return out | lowest_bits(asleep & ~out, left) if left > 0 else out

    # ------------------------------------------------------------------------------ events
    def on_simulation_begins(self, platform) -> None:
        self.own = Ownership(platform.hosts)
        if not self.own.owners:   # (every user a non-owner: no share to enforce, own-share rejects every job)
            raise PolicyInputError(f"policy {self.name!r} enforces owner shares, but no compute host has the property "
                                   "'owner' (<prop id=\"owner\" value=\"USER\"/> in the platform): every user would own "
                                   "nothing")
        self.maxt = len(platform.hosts) if self._maxt_option is None else self._maxt_option

    def on_job_submitted(self, job: Job) -> None:
        self._stable = False
        if self.never_runs(job):
            self.reject(job)  # not a task: _ended counts tasks (registration_finished)
            return
        if job.user is None:
            raise MissingUserError(f"job {job.id!r} has no workload field 'user': policy {self.name!r} needs the "
                                   "user of every job", job_id=job.id)
        task = Task(id=job.id, user=job.user, job=job, arrival=job.subtime, index=len(self.tasks),
                    profile=job.profile_data)
        self.tasks[job.id] = task
        self._task_of[job.id] = task
        self.own.submit(task)
        self._make_ready(task)

    def never_runs(self, job: Job) -> bool:
        """Whether ``job`` could not run whatever the other jobs do (it is then rejected at its
        submission, REJECT_JOB, instead of waiting forever): here, it asks for more hosts than the
        platform has. A policy with more conditions extends it."""
        return job.res > len(self.platform.hosts)

    def on_job_completed(self, job: Job) -> None:
        self._stable = False
        task = self._task_of.get(job.id)
        if task is None or task.job is not job:
            return
        if job.state == JobState.COMPLETED_KILLED and task.killing:
            return  # the restart is submitted when JOB_KILLED brings the progress
        if task.killing:  # ended on its own before the kill landed: it waited again in the books
            task.killing = False
            self.own.withdraw(task)
        else:
            self.own.end(task)
        task.hosts = ()
        self._ended += 1

    def on_jobs_killed(self, jobs: list[Job], progress: dict[str, Any]) -> None:
        self._stable = False
        for job in jobs:
            task = self._task_of.get(job.id)
            if task is not None and task.killing and task.job is job and job.state == JobState.COMPLETED_KILLED:
                self._resubmit(task, job, progress.get(job.id))

    def on_requested_call(self) -> None:
        if self._tick_at is not None and self.now >= self._tick_at - 1e-9:
            self._tick_at = None
            self._tick_due = True

    # ------------------------------------------------------------------------------ the loop
    def schedule(self) -> None:
        if self.own is None:
            return
        self._start_reserved()
        self._fill_idle()
        if self._round_due():
            self._last_round = self.now
            if any(self._ready.values()):
                self._decide()
        self._tick_due = False
        self._arm_tick()
        if self.no_more_static_jobs and not self._registration_done and self._ended == len(self.tasks):
            self._registration_done = True
            self.notify("registration_finished")

    def _make_ready(self, task: Task) -> None:
        """``task`` (submitted, or restarted after a kill) waits for hosts."""
        ready = self._ready.get(task.user)
        if ready is None:
            ready = self._ready[task.user] = ReadyTasks()
        ready.add(task, self.ready_key(task))

    def _place(self, task: Task, hosts: tuple[int, ...]) -> None:
        """``task`` leaves the ready tasks for ``hosts`` in the books (it starts now or when a
        kill frees them)."""
        self._ready[task.user].remove(task)
        self.own.start(task, hosts)
        task.hosts = hosts

    def _start_reserved(self) -> None:
        if not self._reserved:
            return
        avail = self.available_mask
        for tid, task in list(self._reserved.items()):
            mask = procset_to_mask(task.hosts)
            if avail & mask == mask:
                del self._reserved[tid]
                self.execute_mask(task.job, mask)

    def _fill_idle(self) -> None:
        reserved = 0
        for task in self._reserved.values():
            reserved |= procset_to_mask(task.hosts)
        free_mask = self.available_mask & ~reserved
        while free_mask and any(self._ready.values()):
            free = [i for i in range(free_mask.bit_length()) if free_mask >> i & 1]
            hosts: tuple[int, ...]
            pick, hosts = None, ()
            for user in self.idle_user_order(self.users_with_ready()):
                for task in self._ready[user].fitting(len(free)):
                    chosen = self.choose_idle_hosts(task, free)
                    if chosen is not None:
                        pick, hosts = task, tuple(sorted(chosen))
                        break
                if pick is not None:
                    break
            if pick is None:
                return
            if len(hosts) != pick.res or not set(hosts) <= set(free):
                raise PolicyError(f"policy {self.name!r} chose hosts {hosts} for job {pick.job.id} "
                                  f"({pick.res} needed) among the idle {free}")
            self._place(pick, hosts)
            mask = procset_to_mask(hosts)
            self.execute_mask(pick.job, mask)
            free_mask &= ~mask

    def _decide(self) -> None:
        for _ in range(self.maxt):
            step = self.decision_step()
            if step is None:
                self._stable = True
                return
            victim, task = step
            hosts = victim.hosts
            if victim.killing or victim.job.state != JobState.RUNNING or not self.fits(task, hosts) \
                    or task.id not in self._ready.get(task.user, ()):
                raise PolicyError(f"policy {self.name!r}: decision_step returned an impossible pair "
                                  f"({victim.job.id} -> {task.job.id})")
            self.kill([victim.job])
            victim.killing = True
            self.own.preempt(victim)
            victim.hosts = ()
            self.preemptions[victim.user] = self.preemptions.get(victim.user, 0) + 1
            self._place(task, hosts[:task.res])
            self._reserved[task.id] = task

    def _next_round(self) -> float:
        """The first round time ``k x t`` not before now and after the last round (s)."""
        p = self.period
        at = math.ceil(self.now / p - 1e-9) * p
        if self._last_round is not None and at <= self._last_round + 1e-9:
            at = (math.floor(self._last_round / p + 1e-9) + 1) * p
        return at

    def _round_due(self) -> bool:
        """A decision round runs now: at most once per instant; after every message with
        ``period = 0``; when its CALL_ME_LATER fired; or when an event lands on a round time."""
        if self._last_round is not None and self.now <= self._last_round + 1e-9:
            return False
        if self.period == 0 or self._tick_due:
            return True
        return not self._stable and any(self._ready.values()) and self._next_round() <= self.now + 1e-9

    def _arm_tick(self) -> None:
        """CALL_ME_LATER for the next round while tasks wait and the state may call for one.
        Always strictly in the future: Batsim 4.2.1 aborts on a call for the current time."""
        if self.period <= 0 or self._tick_at is not None or self._stable or not any(self._ready.values()):
            return
        at = self._next_round()
        if at <= self.now + 1e-9:
            at = (math.floor(self.now / self.period + 1e-9) + 1) * self.period
        self._tick_at = at
        self.call_me_later(at)

    # ------------------------------------------------------------------------------ restarts
    def _resubmit(self, task: Task, job: Job, prog: Any) -> None:
        """Submit what is left of ``task`` after its job was killed (see the module docstring)."""
        task.killing = False
        # (what the inputs do not allow, before any bookkeeping: bad input, naming the workload's job)
        if task.profile is None:
            raise PolicyInputError(f"policy {self.name!r}: job {job.id} was preempted but its profile is unknown: "
                                   "Batsim must forward profiles (--forward-profiles-on-submission)", job_id=task.id)
        kind = task.profile.get("type")
        if kind == "composed":
            raise PolicyInputError(f"policy {self.name!r} preempted job {task.id}, whose profile is 'composed': a "
                                   "preempted job runs again from a single-phase profile (delay, parallel, "
                                   "parallel_homogeneous...), which a composed one is not; give the job a "
                                   "single-phase profile, or use a policy that does not preempt", job_id=task.id)
        work = profile_work(task.profile)
        progress = _leaf_progress(prog)
        block = self.block if self.checkpointing else None
        if work is None:
            if self.checkpointing:
                raise PolicyInputError(f"policy {self.name!r} preempted job {task.id} with checkpointing on, but the "
                                       f"work of its {kind!r} profile is unknown: checkpointing keeps flops done "
                                       "(delay, parallel, parallel_homogeneous...)", job_id=task.id)
            cp = None
        else:
            elapsed = 0.0 if job.start_time is None else max(0.0, self.now - job.start_time)
            cp = checkpoint(work, progress, elapsed, block)
            task.wasted += cp.wasted
            task.saved += cp.saved
            self.wasted[task.user] = self.wasted.get(task.user, 0.0) + cp.wasted
        task.restarts += 1
        name = restart_name(task.name, task.restarts)
        if f"{task.workload}!{name}" in self.jobs:   # (Batsim aborts: "job already exists")
            raise PolicyInputError(f"policy {self.name!r} preempted job {task.id} and runs it again as job "
                                   f"{task.workload}!{name}, but the workload has a job of that id: ids of the form "
                                   "<job>#<k> are the names of the restarts of the preemptive policies (OSEP, "
                                   "HOSEP, EHOSEP); rename the workload's job", job_id=f"{task.workload}!{name}")
        # A restart always gets a profile of its own: Batsim 4.2.1 empties the profile of an ended
        # job (unless --enable-profile-reuse), so the killed job's profile name is no longer usable.
        if cp is not None and cp.saved > 0 and kind not in SHRINKABLE:
            raise PolicyInputError(f"policy {self.name!r} preempted job {task.id} with checkpointing on after "
                                   f"{cp.saved:g} flops of checkpointed blocks, but its profile is {kind!r}: a "
                                   f"restart keeps the flops done of {' and '.join(SHRINKABLE)} profiles only; turn "
                                   "checkpoint off, or give the job such a profile", job_id=task.id)
        profile = remaining_profile(task.profile, cp.saved) if cp is not None and cp.saved > 0 else dict(task.profile)
        profile_name = name
        self.register_profile(task.workload, profile_name, profile)
        extra = {k: v for k, v in job.extra.items() if k not in _NOT_COPIED}
        new_id = self.register_job(task.workload, name, job.res, profile_name, walltime=job.walltime,
                                   track=True, profile_data=profile, **extra)
        new = self.jobs[new_id]
        task.job, task.profile, task.hosts = new, profile, ()
        self._task_of[new_id] = task
        self._make_ready(task)

    # ------------------------------------------------------------------------------ results
    def metrics(self) -> dict[str, float]:
        """``preemptions`` and ``wasted_flops`` in total and per victim user (``preemptions.user1``...),
        and ``restarted_tasks``."""
        out: dict[str, float] = {"preemptions": float(sum(self.preemptions.values())),
                                 "wasted_flops": float(math.fsum(self.wasted.values())),
                                 "restarted_tasks": float(sum(1 for t in self.tasks.values() if t.restarts))}
        for u in sorted(self.preemptions):
            out[f"preemptions.{u}"] = float(self.preemptions[u])
            out[f"wasted_flops.{u}"] = float(self.wasted.get(u, 0.0))
        return out


class ReadyTasks:
    """One user's ready tasks, kept in the order of their keys (:meth:`OwnerSharePolicy.ready_key`,
    read once per task), as a whole and by number of hosts asked: adding or removing a task costs
    binary searches and list insertions or deletions (where sorting the ready tasks at every pass
    cost ``O(n log n)`` each time), and :meth:`fitting` walks only the tasks that fit a number of
    hosts (where a scan of every task found, under a backlog, mostly tasks too large).

    Attributes:
        tasks: the tasks in key order (smallest first).
    """

    __slots__ = ("keys", "tasks", "_key_of", "_by_res")

    def __init__(self) -> None:
        self.keys: list[Any] = []
        self.tasks: list[Task] = []
        self._key_of: dict[str, Any] = {}
        self._by_res: dict[int, tuple[list[Any], list[Task]]] = {}  # res -> (keys, tasks), key order

    def __len__(self) -> int:
        return len(self.tasks)

    def __contains__(self, task_id: str) -> bool:
        return task_id in self._key_of

    def add(self, task: Task, key: Any) -> None:
        """Queue ``task`` with ``key`` (keys unique: a tie raises ValueError)."""
        i = bisect_left(self.keys, key)
        if i < len(self.keys) and self.keys[i] == key:
            raise ValueError(f"ready task {task.id}: key {key!r} equals that of task {self.tasks[i].id}")
        self.keys.insert(i, key)
        self.tasks.insert(i, task)
        self._key_of[task.id] = key
        keys, tasks = self._by_res.setdefault(task.res, ([], []))
        i = bisect_left(keys, key)
        keys.insert(i, key)
        tasks.insert(i, task)

    def remove(self, task: Task) -> None:
        """Take ``task`` out (KeyError when it is not ready)."""
        key = self._key_of.pop(task.id)
        i = bisect_left(self.keys, key)
        del self.keys[i]
        del self.tasks[i]
        keys, tasks = self._by_res[task.res]
        i = bisect_left(keys, key)
        del keys[i]
        del tasks[i]

    def fitting(self, cap: int) -> Iterator[Task]:
        """The tasks asking for at most ``cap`` hosts, in key order (a merge of the lists by
        number of hosts, ``O(log r)`` per task on ``r`` distinct numbers). The tasks must not
        change during the walk."""
        lists = [(keys, tasks) for r, (keys, tasks) in self._by_res.items() if r <= cap and keys]
        if len(lists) == 1:
            return iter(lists[0][1])
        return (t for _, t in heapq.merge(*(zip(k, t) for k, t in lists), key=_first))


def _first(pair: tuple[Any, Task]) -> Any:
    return pair[0]


def _leaf_progress(prog: Any) -> float:
    """The ``progress`` of Batsim's ``job_progress`` entry (the current leaf for a composed profile;
    0 when Batsim sent none)."""
    while isinstance(prog, dict) and "current_task" in prog:
        prog = prog["current_task"]
    if isinstance(prog, dict):
        p = prog.get("progress", 0.0)
        if isinstance(p, (int, float)) and not isinstance(p, bool) and math.isfinite(p):
            return min(1.0, max(0.0, float(p)))
    return 0.0
