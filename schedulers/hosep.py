"""HOSEP, the heterogeneous OSEP: owner shares measured in computing power.

Sources (``shared/papers``, ``L<n>`` = line of the plain-text file): ``000`` = the HOSEP paper
(``000_e546516683445c97.txt``) §3.2-3.3 (PowerDiff eq. 3, RP eq. 4, Def. 3-4, the Heterogeneous
Decision Algorithm of Fig. 2, L336-350, and the allocation rules of §3.3, L326-334); ``001`` = the
monograph (``001_e7d938ca075b7e80.txt``) ch. 4 (eqs. 4.1-4.3, the conditions of §4.3.1, task
selection §4.3.2 and the adapted algorithm of Fig. 5, L455-483). The quantities are
:class:`~schedulers.core.ownership.Ownership`'s.

The skeleton (:mod:`schedulers.core.owner_share`) gives idle hosts first and runs a decision round
every ``period`` seconds; HOSEP's choices:

* **Decision step**:

  - line 1: the beneficiary ``u_alpha``, the user with the smallest PowerDiff, ``< 0``, among the
    users with a ready task (line 5 gives the host to one of its tasks: an owner without jobs has
    PowerDiff -1 but nothing to run).
  - line 2: the victim ``u_beta``, the user with the largest PowerDiff, ``> 0``, among users with
    an Active task. A user who owns nothing has PowerDiff ``+inf`` while it runs anything: it is
    always preempted first, and never a beneficiary (its PowerDiff is never ``< 0``).
  - line 3: ``u_beta``'s task on its least powerful host ``y`` (000 Def. 3: ``omega``, the largest
    remaining power; 000 §3.3 ii; 001 §4.3.1 condition 3; ties: the task that ran least, then the
    later arrival), preempted only if the **condition** holds (option ``condition``):

    - ``"omega"`` (default; 000 Fig. 2 line 3, L343-344, with restriction 6 and the proof of
      §3.4): ``RP_{beta,y} > PowerDiff_alpha`` -- the victim, after losing ``y``, keeps more than
      the beneficiary has now.
    - ``"pr_aloc"`` (001 Fig. 5 line 3, L469-471; §4.3.1 condition 4, L448):
      ``PR_Aloc_{alpha,y} > PR_Preemp_{beta,y}`` -- the beneficiary, once it holds ``y``, has more
      than the victim keeps. ``PR_Aloc``'s denominator is read as ``Porcao_alpha`` (see
      :mod:`schedulers.core.ownership`). This is a different test: it allows a preemption that
      leaves the victim below the beneficiary's current PowerDiff, and refuses one that only
      narrows the gap.

    When it fails the round ends (the algorithm re-calls itself with the same ``maxt`` on the
    same state: nothing would change).
  - line 5: ``u_alpha``'s smallest ready task (000 §3.3 i, 001 §4.3.2: "a tarefa de menor tamanho";
    size = its profile's work in flops, the work left for a checkpointed restart; unknown sizes
    last, then arrival order) gets ``y``.

* **Idle hosts** (000 §3.3 L326; the paper does not say which task gets which idle host): users
  in increasing PowerDiff (largest deficit first, ties by name), their smallest task first
  (§4.3.2 applies "para executar em uma máquina livre" too), on the most powerful idle host
  (ties: lowest id) -- the choice that raises the deficit user's PowerDiff most.

Options: ``condition`` and the skeleton's ``period``, ``maxt``, ``checkpoint``, ``block`` (see
:class:`~schedulers.core.owner_share.OwnerSharePolicy`).
"""

from __future__ import annotations

from typing import Any

from .core.owner_share import OwnerSharePolicy
from .core.policy import Option, option_choice
from .core.preemption import Task

#: The two readings of line 3 (see the module docstring).
CONDITIONS = ("omega", "pr_aloc")


class HOSEP(OwnerSharePolicy):
    """HOSEP (000 §3.2-3.3, 001 ch. 4), registry name ``hosep``; see the module docstring.

    Raises (constructor):
        PolicyOptionError: ``condition`` not one of :data:`CONDITIONS`, or a bad skeleton option.
    """

    name = "hosep"
    summary = ("OSEP for heterogeneous hosts: shares are counted in computing power (PowerDiff, remaining "
               "power), not in hosts.")
    references = ("hosep", "forte2015")
    option_docs = {**OwnerSharePolicy.option_docs,
                   "condition": Option("preemption test of line 3: 'omega' is RP_beta,y > PowerDiff_alpha (HOSEP "
                                       "paper, Fig. 2), 'pr_aloc' is PR_Aloc_alpha,y > PR_Preemp_beta,y (monograph, "
                                       "Fig. 5)", type="'omega' or 'pr_aloc'", default="'omega'")}

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.condition = option_choice(self.name, self.options, "condition", "omega", CONDITIONS)

    def idle_user_order(self, users: list[str]) -> list[str]:
        return sorted(users, key=lambda u: (self.own.power_diff(u), u))

    def ready_key(self, task: Task) -> tuple[float, float, int]:
        return self.smallest_key(task)

    def choose_idle_hosts(self, task: Task, free: list[int]) -> tuple[int, ...]:
        return tuple(sorted(free, key=lambda i: (-self.own.power(i), i))[:task.res])

    def decision_step(self) -> tuple[Task, Task] | None:
        own = self.own
        deficit = [u for u in self.users_with_ready() if own.power_diff(u) < 0]        # line 1
        if not deficit:
            return None
        alpha = min(deficit, key=lambda u: (own.power_diff(u), u))
        excess = [u for u in own.users if own.power_diff(u) > 0 and self.active_tasks(u)]
        if not excess:                                                                 # line 2
            return None
        beta = min(excess, key=lambda u: (-own.power_diff(u), u))
        victim = min(self.active_tasks(beta),                                          # line 3
                     key=lambda t: (sum(own.power(h) for h in t.hosts), self.elapsed(t), -t.arrival, -t.index))
        y = victim.hosts
        if self.condition == "omega":
            ok = own.remaining_power(beta, y) > own.power_diff(alpha)
        else:
            ok = own.pr_aloc(alpha, y) > own.remaining_power(beta, y)
        if not ok:
            return None
        task = self.first_ready_fitting(alpha, y)                                       # line 5
        return None if task is None else (victim, task)
