"""BUC (Beneficiador do Usuário Consciente): a queue order rewarding accurate walltime estimates.

Source: ``shared/papers/002_3dc427a6f94ba187.txt`` (Portuguese; ``L<n>`` = line of that file), §3
(L81-126) and §4 (L128-213).

* Each user has a score Su in [0, 100], 60 at the start (L99-101).
* After each job that ends normally its precision ``P = Rt / Wt`` (eq. 1, L104-106, L113) updates
  Su: up when the estimate was precise, down otherwise (L101-103). ``Rt`` is the job's run time
  and ``Wt`` its walltime (s). Jobs killed at their walltime do not update Su (L106-111); neither
  do jobs without walltime (Batsim's ``-1``: no estimate to judge), killed jobs or failed jobs. We
  read "ends normally" as Batsim's ``COMPLETED_SUCCESSFULLY``.
* Queue index (eq. 2, L115-126)::

      Sf = (Su * 0.8 + (1 / (Wt / 100000)) * 0.2) * Kp + Te

  with ``Wt`` the job's walltime (s), ``Te`` its waiting time so far (s, ``now - subtime``) and
  ``Kp`` an administrator constant (option ``kp``; the paper runs 1440 and 10800, L151). Larger Sf
  first; Sf is re-evaluated at every event (L123-124): the queue is re-sorted at every scheduling
  pass. Ties (equal Sf) go to the earlier submission time, then the smaller full job id as a
  string (``"w0!10"`` before ``"w0!9"``): the order in which Batsim submits jobs of equal
  submission time (``job_comparator_subtime_number``, src/jobs.cpp; the engine's workload reader
  does the same), so that equal Sf gives exactly the FCFS order. For a job without walltime the walltime term is
  taken as 0 (our choice: no estimate, no bonus).

The paper gives no update rule for Su, only its direction (up after a precise estimate, down
after an imprecise one, L101-103), that the change follows from P (L103-104), and the final
scores of its three injected users after their 100 jobs each, all from 60: ``inj0`` (P = 0)
4.8, ``inj50`` (P = 0.5) 96.14, ``inj100`` (P = 1) 99 (L168-169). So P = 0.5 counts as precise,
and a user's score moves towards the bound by a fraction of the distance left (it reaches 99, not
100). Rules (option ``rule``):

* ``"threshold"`` (default): a job is precise when ``P >= p0`` (default 0.5)::

      precise:    Su <- Su + w * up * P * (100 - Su)
      imprecise:  Su <- Su - w * down * (1 - P) * Su

  bounded in [0, 100] (``up``, ``down``, ``w`` and ``P`` in [0, 1]), with 100 the fixed point of a
  precise user and 0 of an imprecise one, the step growing with P (L103-104). ``up`` and ``down``
  are read from two of the paper's scores (100 jobs from 60): ``100 - 40 (1 - up)^100 = 99`` gives
  ``up = 1 - 0.025^(1/100) = 0.036217``; ``60 (1 - down)^100 = 4.8`` gives ``down = 1 -
  0.08^(1/100) = 0.024941``. The third is a check: ``inj50`` gets ``100 - 40 (1 - up/2)^100 =
  93.57`` (paper 96.14).
* ``"ema"``: ``Su <- Su + w * alpha * (100 * P - Su)``: an exponential moving average pulled
  towards ``100 P``; it stays in [0, 100] since ``0 <= P <= 1`` and ``w * alpha <= 1``. A user
  whose every job has precision P converges to ``100 P``: ``inj50`` ends near 50, against the
  paper's 96.14.
* ``"linear"``: ``Su <- clamp(Su + w * gain * (P - p0), 0, 100)``: up by up to ``gain * (1 - p0)``
  per precise job, down by up to ``gain * p0`` per imprecise one.

``P`` is capped at 1 (a job may end a little after its walltime in a trace replayed to the
second). ``w`` is 1 unless the gaming mitigation is on (option ``work_ref``, host.s): then
``w = min(1, res * Wt / work_ref)``, so that a job asking little work moves Su little. The paper
admits (§4, L206-213) that a user can inflate Su with many short, accurate jobs; this weight is
the mitigation measured in ``campaigns/buc.toml`` (scenario parameter ``gamer``).

The order is plugged into FCFS and EASY through their ``queue_key`` / ``dynamic_queue_order``
hooks (:meth:`BUCOrder.queue_keys` computes the keys in one go, with Sf's time-free part cached
per user and walltime, the same floats). Neither ``buc`` nor ``buc-easy`` re-sorts its queue at
every pass (as the paper's re-evaluation at every event reads, L123-124): within one user and
walltime Sf is ``A(user, Wt) + (now - subtime)`` with one float ``A`` (the time-free part,
:attr:`BUCOrder.sf_offsets`), so their order never changes (earlier submission first, then the id
string; float addition is monotone); only ``A`` moves, when the user's Su does. The queue is kept
as such groups (:class:`GroupedBUCQueue`, a :class:`~schedulers.core.grouped_queue.GroupedQueue`)
and a pass merges them by the Sf of their first jobs: ``buc`` starts the heads of the merged view
while they fit, ``buc-easy`` also searches each group for the next job that fits the free hosts
(EASY's steps 2-3 over the merged view). Same decisions as a re-sorted queue
(``tests/test_policy_backlog.py``, ``tests/test_buc_queue.py``, and equal schedule digests of
``benchmarks/bench_backlog.py``) at ``O(groups log groups)`` per pass plus ``O(log groups + log
queue)`` per job looked at, instead of ``O(queue log queue)``.

Cost (``benchmarks/bench_backlog.py``, jobs of 1-32 hosts at twice the capacity of 128 hosts,
one user and up to 180 walltimes; results in ``benchmarks/results/backlog.md``): at 10k jobs
``buc`` went from 47x EASY's engine time (re-sorted queue) to about 2-3x, ``buc-easy`` about
2-3x, in the same invocation on a shared 2-core machine.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar

from .core.backfilling import lowest_bits
from .core.grouped_queue import GroupedQueue, MergedView
from .core.limits import MAX_TIME, MAX_TIME_POWER
from .core.model import Job, JobState
from .core.policy import Option, option_choice, option_number, option_unused
from .easy import EASY
from .fcfs import FCFS

#: The ``threshold`` rule's step towards 100 that takes a score from 60 to 99 in 100 jobs of
#: precision 1 (002 L168-169: ``inj100``): ``1 - 0.025 ** (1 / 100)``.
UP = 1.0 - 0.025 ** 0.01
#: Its step towards 0 that takes a score from 60 to 4.8 in 100 jobs of precision 0 (``inj0``):
#: ``1 - 0.08 ** (1 / 100)``.
DOWN = 1.0 - 0.08 ** 0.01

#: Defaults of the options (see :attr:`BUCOrder.option_docs`).
#: The rules that read each rule parameter (the others ignore it: given with them, it is refused).
_RULE_PARAMETERS: dict[str, tuple[str, ...]] = {"up": ("threshold",), "down": ("threshold",), "alpha": ("ema",),
                                                "gain": ("linear",), "p0": ("threshold", "linear")}

DEFAULTS: dict[str, Any] = {"kp": 10800.0, "su0": 60.0, "rule": "threshold", "up": UP, "down": DOWN,
                            "alpha": 0.1, "gain": 20.0, "p0": 0.5, "work_ref": 0.0}
RULES = ("threshold", "ema", "linear")


def precision(run_time: float, walltime: float) -> float | None:
    """``P = Rt / Wt`` (eq. 1, L113), capped at 1; None when the job has no walltime (``Wt <= 0``).

    Args:
        run_time: ``Rt``, the job's execution time (s, >= 0).
        walltime: ``Wt``, its requested time (s); ``-1`` (or any value <= 0) means none.
    """
    if not walltime > 0:
        return None
    return min(1.0, max(0.0, run_time) / walltime)


def update_score(su: float, p: float, *, rule: str = "threshold", up: float = UP, down: float = DOWN,
                 alpha: float = 0.1, gain: float = 20.0, p0: float = 0.5, weight: float = 1.0) -> float:
    """The score after one normally ended job of precision ``p`` (module docstring: the paper gives
    no rule).

    Args:
        su: the user's score before, in [0, 100].
        p: the job's precision, in [0, 1].
        rule: ``"threshold"`` (``p >= p0``: ``su + weight*up*p*(100 - su)``, else
            ``su - weight*down*(1 - p)*su``), ``"ema"`` (``su + weight*alpha*(100 p - su)``) or
            ``"linear"`` (``clamp(su + weight*gain*(p - p0), 0, 100)``).
        up, down, alpha, gain, p0: the rules' parameters (``up``, ``down``, ``alpha``, ``p0`` in
            [0, 1]); weight: in [0, 1] (gaming mitigation).

    Returns:
        The new score, in [0, 100].

    Raises:
        ValueError: unknown rule.
    """
    if rule == "threshold":
        if p >= p0:
            return min(100.0, su + weight * up * p * (100.0 - su))
        return max(0.0, su - weight * down * (1.0 - p) * su)
    if rule == "ema":
        return min(100.0, max(0.0, su + weight * alpha * (100.0 * p - su)))
    if rule == "linear":
        return min(100.0, max(0.0, su + weight * gain * (p - p0)))
    raise ValueError(f"unknown BUC rule {rule!r}; known: {', '.join(RULES)}")


def sf_index(su: float, walltime: float, waited: float, kp: float) -> float:
    """Sf of eq. 2 (L126): ``(su*0.8 + (1/(walltime/100000))*0.2)*kp + waited``.

    Args:
        su: the owner's score Su (0-100). walltime: ``Wt`` (s); <= 0 (none): the term is 0.
        waited: ``Te`` (s). kp: ``Kp`` (s per score point, as Te is added to it).
    """
    wt_term = 100000.0 / walltime if walltime > 0 else 0.0
    return (su * 0.8 + wt_term * 0.2) * kp + waited


class _Offsets(dict):
    """A dict whose missing values ``compute(key)`` fills in (:attr:`BUCOrder.sf_offsets`)."""

    def __init__(self, compute: Callable[[Any], float]) -> None:
        super().__init__()
        self._compute = compute

    def __missing__(self, key: Any) -> float:
        return self._compute(key)  # (which stores it)


class BUCOrder:
    """The BUC queue order, mixed into a policy with ``queue_key`` / ``dynamic_queue_order`` hooks
    (:class:`~schedulers.fcfs.FCFS`, :class:`~schedulers.easy.EASY`); see the module docstring.

    Attributes:
        scores: Su by user (users seen so far; a job without user counts as user ``""``).
        updates, skipped: jobs that updated a score / ended without updating one.

    Raises:
        PolicyOptionError: an option out of range, an unknown ``rule``, or a parameter of another
            rule than ``rule`` (``up``, ``down``, ``alpha``, ``gain``, ``p0``: it would be ignored).
    """

    dynamic_queue_order: ClassVar[bool] = True

    option_docs: ClassVar[dict[str, str]] = {
        "kp": Option("Kp of eq. 2, the weight of the score Su against the waiting time (the paper uses "
                     "1440 and 10800)", type=f"number in [0, 2**{MAX_TIME_POWER}] (s)", default="10800"),
        "su0": Option("initial score Su of every user (a job's user is its workload 'user' field, or a SWF/GWF "
                      "trace's user id; the jobs without one share one user's score)", type="number in [0, 100]",
                      default="60"),
        "rule": Option("score update after a job that ended normally: 'threshold' (consistent with the paper's "
                       "final scores: 4.8, 96.14 and 99 for P = 0, 0.5 and 1), 'ema' (Su += alpha (100 P - Su)) "
                       "or 'linear' (Su += gain (P - p0) clamped to [0, 100]); a parameter of another rule (up, "
                       "down, alpha, gain, p0) is refused", type="'threshold', 'ema' or 'linear'",
                       default="'threshold'"),
        "up": Option("step of the 'threshold' rule for a precise job (P >= p0): Su += up P (100 - Su)",
                     type="number in [0, 1]", default="0.036217"),
        "down": Option("step of the 'threshold' rule for an imprecise job: Su -= down (1 - P) Su",
                       type="number in [0, 1]", default="0.024941"),
        "alpha": Option("step of the 'ema' rule", type="number in [0, 1]", default="0.1"),
        "gain": Option("step of the 'linear' rule", type="number >= 0", default="20"),
        "p0": Option("'threshold' rule: the least precision P counted as precise; 'linear' rule: the neutral "
                     "precision", type="number in [0, 1]", default="0.5"),
        "work_ref": Option("gaming mitigation: a job's effect on Su is weighted by min(1, res x walltime / "
                           "work_ref); 0: off", type="number >= 0 (host.s)", default="0"),
    }

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)  # type: ignore[call-arg]
        opts, name = self.options, self.name  # type: ignore[attr-defined]
        # (bounded as times are: a larger Kp makes Sf infinite for every scored job, and the queue
        # order of Su a tie)
        self.kp = option_number(name, opts, "kp", DEFAULTS["kp"], low=0.0, high=MAX_TIME)
        self.su0 = option_number(name, opts, "su0", DEFAULTS["su0"], low=0.0, high=100.0)
        self.alpha = option_number(name, opts, "alpha", DEFAULTS["alpha"], low=0.0, high=1.0)
        self.up = option_number(name, opts, "up", DEFAULTS["up"], low=0.0, high=1.0)
        self.down = option_number(name, opts, "down", DEFAULTS["down"], low=0.0, high=1.0)
        self.gain = option_number(name, opts, "gain", DEFAULTS["gain"], low=0.0)
        self.p0 = option_number(name, opts, "p0", DEFAULTS["p0"], low=0.0, high=1.0)
        self.work_ref = option_number(name, opts, "work_ref", DEFAULTS["work_ref"], low=0.0)
        self.rule = option_choice(name, opts, "rule", DEFAULTS["rule"], RULES)
        for key, rules in _RULE_PARAMETERS.items():
            if self.rule not in rules:
                who = f"rule {rules[0]!r} reads" if len(rules) == 1 else f"rules {' and '.join(map(repr, rules))} read"
                option_unused(name, opts, (key,), f"rule {self.rule!r} (only {who} it)")
        self.scores: dict[str, float] = {}
        self.updates = 0
        self.skipped = 0
        # the time-free part of Sf, (Su*0.8 + wt_term*0.2)*Kp, by (user, walltime): the same for
        # all the jobs of a user with one walltime until the user's Su changes (queue_keys)
        self._fixed: dict[tuple[str, float], float] = _Offsets(self._fixed_part)
        self._group: dict[str, tuple[str, float]] = {}  # job id -> (user, walltime)

    def score(self, user: str | None) -> float:
        """Su of ``user`` (the initial score for a user not seen yet)."""
        return self.scores.get(user or "", self.su0)

    def sf(self, job: Job) -> float:
        """Sf of a waiting job now (eq. 2)."""
        return sf_index(self.score(job.user), job.walltime, self.now - job.subtime, self.kp)  # type: ignore[attr-defined]

    def queue_key(self, job: Job) -> Any:
        """Smallest first: ``(-Sf, subtime, id)`` (larger Sf first, then earlier, then smaller id
        string, Batsim's submission order)."""
        return (-self.sf(job), job.subtime, job.id)

    def queue_keys(self, jobs: list[Job]) -> list[Any]:
        """:meth:`queue_key` of each job, in one go: Sf is ``fixed + (now - subtime)`` with
        ``fixed = (Su*0.8 + wt_term*0.2)*Kp`` computed once per user and walltime while the
        user's Su is unchanged: the same floats as :func:`sf_index`, so the same keys."""
        now = self.now  # type: ignore[attr-defined]
        fixed, group = self._fixed, self._group
        out = []
        for job in jobs:
            g = group.get(job.id)
            if g is None:
                g = group[job.id] = (job.user or "", job.walltime)
            b = fixed.get(g)
            if b is None:
                b = self._fixed_part(g)
            out.append((-(b + (now - job.subtime)), job.subtime, job.id))
        return out

    def _fixed_part(self, g: tuple[str, float]) -> float:
        """``(Su*0.8 + wt_term*0.2)*Kp`` of the group ``g = (user, walltime)``, cached."""
        wt = g[1]
        su = self.scores.get(g[0], self.su0)  # (self.score of the group's user)
        b = self._fixed[g] = (su * 0.8 + (100000.0 / wt if wt > 0 else 0.0) * 0.2) * self.kp
        return b

    @property
    def sf_offsets(self) -> dict[tuple[str, float], float]:
        """Sf's time-free part ``(Su*0.8 + wt_term*0.2)*Kp`` (s) by group ``(user, walltime)``
        (user ``""`` for a job without one; walltime in s), computed when first read (a missing
        group is filled in) and kept until the user's Su changes: Sf = this + (now - subtime),
        the same floats as :func:`sf_index`."""
        return self._fixed

    def on_job_completed(self, job: Job) -> None:
        """Update the owner's Su from the job's precision when it ended normally with a walltime."""
        self._group.pop(job.id, None)
        p = None
        if job.state == JobState.COMPLETED_SUCCESSFULLY and job.start_time is not None \
                and job.finish_time is not None:
            p = precision(job.finish_time - job.start_time, job.walltime)
        if p is None:
            self.skipped += 1
        else:
            w = 1.0 if self.work_ref <= 0 else min(1.0, job.res * job.walltime / self.work_ref)
            user = job.user or ""
            self.scores[user] = update_score(self.score(user), p, rule=self.rule, up=self.up, down=self.down,
                                             alpha=self.alpha, gain=self.gain, p0=self.p0, weight=w)
            for g in [g for g in self._fixed if g[0] == user]:
                del self._fixed[g]
            self.updates += 1
        super().on_job_completed(job)  # type: ignore[misc]

    def metrics(self) -> dict[str, float]:
        """``su.<user>`` (final Su of every user whose score changed), ``su_updates``,
        ``su_skipped``, plus the base policy's metrics."""
        out = dict(super().metrics())  # type: ignore[misc]
        out.update({f"su.{u or '(none)'}": s for u, s in sorted(self.scores.items())})
        out["su_updates"] = float(self.updates)
        out["su_skipped"] = float(self.skipped)
        return out


class GroupedBUCQueue:
    """The waiting queue of :class:`BUC` and :class:`BUCEasy`: a :class:`~schedulers.core.
    grouped_queue.GroupedQueue` by ``(user, walltime)``, each group in submission order
    (``(subtime, id)``), merged by Sf when a pass reads it (offsets :attr:`BUCOrder.sf_offsets`,
    the keys of :meth:`BUCOrder.queue_key`): the order of a re-sort of the whole queue, without
    the re-sort (module docstring). Mixed in before the base policy, whose own queue stays empty.

    Attributes:
        waiting_jobs: the grouped queue.
    """

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        self.waiting_jobs = GroupedQueue()
        super().__init__(options)  # type: ignore[call-arg]

    @property
    def queue(self) -> list[Job]:
        """The waiting jobs in Sf order now, head first (a merge of the groups, ``O(queue log
        groups)``: for reading, the passes do not use it)."""
        return self.waiting_jobs.ordered(self.now, self.sf_offsets)  # type: ignore[attr-defined]

    @queue.setter
    def queue(self, jobs: Any) -> None:
        # (the base's constructor sets its empty queue; the grouped queue replaces it)
        if len(jobs):
            raise AttributeError("the queue of a BUC policy is its grouped queue (waiting_jobs)")

    def on_job_submitted(self, job: Job) -> None:
        """Queue the job in its group ``(user, walltime)``, or reject it if larger than the
        platform."""
        if self.platform.hosts and job.res > len(self.platform.hosts):  # type: ignore[attr-defined]
            self.reject(job)  # type: ignore[attr-defined]
            return
        self.waiting_jobs.add(job, (job.user or "", job.walltime))

    def waiting(self) -> MergedView:
        """The queue in Sf order now, as a pass reads it (:class:`~schedulers.core.grouped_queue.
        MergedView`)."""
        return self.waiting_jobs.view(self.now, self.sf_offsets)  # type: ignore[attr-defined]


class BUC(GroupedBUCQueue, BUCOrder, FCFS):  # type: ignore[misc]  # the grouped queue replaces FCFS's list
    """BUC over FCFS (the paper's setting): the queue in Sf order, heads started while they fit
    (on the lowest available ids, as :class:`~schedulers.fcfs.FCFS`).

    The queue is :class:`GroupedBUCQueue`'s: a pass walks the merged view from its head,
    ``O(groups log groups)`` to open it plus ``O(log groups)`` per job started, with the
    decisions of FCFS over the re-sorted queue.
    """

    name = "buc"
    summary = ("Orders the queue by BUC's index Sf, which favours users whose walltimes are accurate, and "
               "starts jobs in that order (no backfilling).")
    references = ("buc",)

    def schedule(self) -> None:
        """Start the heads of the queue in Sf order while they fit on the available hosts."""
        queue = self.waiting_jobs
        if not queue.live:
            return
        avail = self.available_mask
        nfree = avail.bit_count()
        view = self.waiting()
        head = view.head()
        while head is not None and head.res <= nfree:
            view.take_head()
            queue.remove(head)
            alloc = lowest_bits(avail, head.res)
            self.execute_mask(head, alloc)
            avail &= ~alloc
            nfree -= head.res
            head = view.head()


class BUCEasy(GroupedBUCQueue, BUCOrder, EASY):  # type: ignore[misc]  # the grouped queue replaces EASY's index
    """BUC over EASY backfilling: the queue in Sf order, the head reserved, later jobs backfilled.

    The waiting jobs are kept in :class:`GroupedBUCQueue` instead of EASY's sorted list: a pass
    runs EASY's steps on the merged view (step 1 here, steps 2-3 :meth:`EASY.backfill_behind
    <schedulers.easy.EASY.backfill_behind>`), so it makes the decisions of a pass over the
    re-sorted queue without re-sorting it. EASY's methods that read its list are replaced
    (:attr:`queue`, :meth:`on_job_submitted`, :meth:`head_reservation`, :meth:`waiting`,
    :meth:`schedule`, :meth:`backfill_pass`; EASY's list stays empty) and :meth:`start_job` also
    takes the job out of the groups.
    """

    name = "buc-easy"
    summary = "BUC's queue order (index Sf) over EASY backfilling."
    references = ("buc", "easy")

    def head_reservation(self) -> Any:
        """As :meth:`EASY.head_reservation <schedulers.easy.EASY.head_reservation>`, for the
        head in Sf order now."""
        head = self.waiting().head()
        return None if head is None else self.find_reservation(self.profile(), head)

    def schedule(self) -> None:
        """One pass (:meth:`backfill_pass`) when a job waits and a host is free."""
        self.reservation = None
        if self.waiting_jobs.live and self.free_now_mask():
            self.backfill_pass()

    def start_job(self, job: Job, alloc: int) -> None:
        """:meth:`EASY.start_job <schedulers.easy.EASY.start_job>`, and the job leaves the queue
        at once (the pass's view no longer sees it)."""
        super().start_job(job, alloc)
        self.waiting_jobs.remove(job)

    def backfill_pass(self) -> list[Job]:  # type: ignore[override]
        """EASY's pass over the merged view: start the heads while they fit, then
        :meth:`EASY.backfill_behind <schedulers.easy.EASY.backfill_behind>` behind the first that
        does not. Returns the jobs started (not queue positions, which the view does not
        count), in queue order, already out of the queue (:meth:`start_job`); counts the
        backfilled ones."""
        view = self.waiting()
        avail = self.free_now_mask()
        nfree = avail.bit_count()
        started: list[Job] = []
        head = view.head()
        while head is not None and head.res <= nfree:
            view.take_head()
            alloc = self.select_hosts(avail, head)
            self.start_job(head, alloc)
            avail &= ~alloc
            nfree -= head.res
            started.append(head)
            head = view.head()
        if head is not None and nfree:
            behind = [view.job(s) for s in self.backfill_behind(view, head, avail, nfree)]
            self.backfilled_jobs += len(behind)
            started += behind
        return started
