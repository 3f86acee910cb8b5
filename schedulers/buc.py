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

The paper gives no update rule for Su (only its direction, L101-103). Ours (option ``rule``):

* ``"ema"`` (default): ``Su <- Su + w * alpha * (100 * P - Su)``: an exponential moving average
  pulled towards ``100 P``; it stays in [0, 100] since ``0 <= P <= 1`` and ``w * alpha <= 1``. A
  user whose every job has precision P converges to ``100 P``; at ``P = 0.6`` the score stays 60.
* ``"linear"``: ``Su <- clamp(Su + w * gain * (P - p0), 0, 100)``: up by up to ``gain * (1 - p0)``
  per precise job, down by up to ``gain * p0`` per imprecise one.

``P`` is capped at 1 (a job may end a little after its walltime in a trace replayed to the
second). ``w`` is 1 unless the gaming mitigation is on (option ``work_ref``, host.s): then
``w = min(1, res * Wt / work_ref)``, so that a job asking little work moves Su little. The paper
admits (§4, L206-213) that a user can inflate Su with many short, accurate jobs; this weight is
the mitigation measured in ``campaigns/buc.toml`` (scenario parameter ``gamer``).

The order is plugged into both base policies through their ``queue_key`` /
``dynamic_queue_order`` hooks: ``buc`` over FCFS (as the paper, L148-149, L204-205) and
``buc-easy`` over EASY backfilling. Cost: the queue is re-sorted at every pass, ``O(queue)``
keys per pass; :meth:`BUCOrder.queue_keys` computes them in one go with Sf's time-free part
cached per user and walltime (the same floats). Within one user and walltime the order never
changes (earlier submission first), so a queue kept as such groups, merged by Sf when searched,
would avoid the per-pass re-sort; not done (under a backlog buc-easy stays quadratic, see
``benchmarks/results/backlog.md``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from .core.model import Job, JobState
from .core.policy import option_choice, option_number
from .easy import EASY
from .fcfs import FCFS

#: Defaults of the options (see :attr:`BUCOrder.option_docs`).
DEFAULTS: dict[str, Any] = {"kp": 10800.0, "su0": 60.0, "rule": "ema", "alpha": 0.1, "gain": 20.0,
                            "p0": 0.5, "work_ref": 0.0}
RULES = ("ema", "linear")


def precision(run_time: float, walltime: float) -> float | None:
    """``P = Rt / Wt`` (eq. 1, L113), capped at 1; None when the job has no walltime (``Wt <= 0``).

    Args:
        run_time: ``Rt``, the job's execution time (s, >= 0).
        walltime: ``Wt``, its requested time (s); ``-1`` (or any value <= 0) means none.
    """
    if not walltime > 0:
        return None
    return min(1.0, max(0.0, run_time) / walltime)


def update_score(su: float, p: float, *, rule: str = "ema", alpha: float = 0.1, gain: float = 20.0,
                 p0: float = 0.5, weight: float = 1.0) -> float:
    """The score after one normally ended job of precision ``p`` (module docstring, our rule).

    Args:
        su: the user's score before, in [0, 100].
        p: the job's precision, in [0, 1].
        rule: ``"ema"`` (``su + weight*alpha*(100 p - su)``) or ``"linear"``
            (``clamp(su + weight*gain*(p - p0), 0, 100)``).
        alpha, gain, p0: the rules' parameters; weight: in [0, 1] (gaming mitigation).

    Returns:
        The new score, in [0, 100].

    Raises:
        ValueError: unknown rule.
    """
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


class BUCOrder:
    """The BUC queue order, mixed into a policy with ``queue_key`` / ``dynamic_queue_order`` hooks
    (:class:`~schedulers.fcfs.FCFS`, :class:`~schedulers.easy.EASY`); see the module docstring.

    Attributes:
        scores: Su by user (users seen so far; a job without user counts as user ``""``).
        updates, skipped: jobs that updated a score / ended without updating one.

    Raises:
        PolicyOptionError: an option out of range or an unknown ``rule``.
    """

    dynamic_queue_order: ClassVar[bool] = True

    option_docs: ClassVar[dict[str, str]] = {
        "kp": "Kp of eq. 2, weight of Su against the waiting time (s; default 10800; the paper: 1440, 10800)",
        "su0": "initial score of every user (0-100; default 60)",
        "rule": "score update after a normally ended job: 'ema' (default) or 'linear'",
        "alpha": "ema rule: Su += alpha * (100 P - Su) (0-1; default 0.1)",
        "gain": "linear rule: Su += gain * (P - p0), clamped to 0-100 (>= 0; default 20)",
        "p0": "linear rule: the neutral precision (0-1; default 0.5)",
        "work_ref": "gaming mitigation: a job's effect on Su is weighted by min(1, res*walltime/work_ref) "
                    "(host.s; default 0 = off)",
    }

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)  # type: ignore[call-arg]
        opts, name = self.options, self.name  # type: ignore[attr-defined]
        self.kp = option_number(name, opts, "kp", DEFAULTS["kp"], low=0.0)
        self.su0 = option_number(name, opts, "su0", DEFAULTS["su0"], low=0.0, high=100.0)
        self.alpha = option_number(name, opts, "alpha", DEFAULTS["alpha"], low=0.0, high=1.0)
        self.gain = option_number(name, opts, "gain", DEFAULTS["gain"], low=0.0)
        self.p0 = option_number(name, opts, "p0", DEFAULTS["p0"], low=0.0, high=1.0)
        self.work_ref = option_number(name, opts, "work_ref", DEFAULTS["work_ref"], low=0.0)
        self.rule = option_choice(name, opts, "rule", DEFAULTS["rule"], RULES)
        self.scores: dict[str, float] = {}
        self.updates = 0
        self.skipped = 0
        # the time-free part of Sf, (Su*0.8 + wt_term*0.2)*Kp, by (user, walltime): the same for
        # all the jobs of a user with one walltime until the user's Su changes (queue_keys)
        self._fixed: dict[tuple[str, float], float] = {}
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
                wt = g[1]
                b = fixed[g] = (self.score(g[0]) * 0.8 + (100000.0 / wt if wt > 0 else 0.0) * 0.2) * self.kp
            out.append((-(b + (now - job.subtime)), job.subtime, job.id))
        return out

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
            self.scores[user] = update_score(self.score(user), p, rule=self.rule, alpha=self.alpha,
                                             gain=self.gain, p0=self.p0, weight=w)
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


class BUC(BUCOrder, FCFS):
    """BUC over FCFS (the paper's setting): the queue in Sf order, heads started while they fit."""

    name = "buc"


class BUCEasy(BUCOrder, EASY):
    """BUC over EASY backfilling: the queue in Sf order, the head reserved, later jobs backfilled."""

    name = "buc-easy"
