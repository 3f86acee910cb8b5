"""OSEP, the Owner Share Enforcement Policy (Falavinha et al. 2009), as the monograph specifies it.

Sources (``shared/papers``, ``L<n>`` = line of the plain-text file): ``001`` = the monograph
(``001_e7d938ca075b7e80.txt``), ch. 3: the update algorithm (Fig. 1, L306-317) and the decision
algorithm (Fig. 3, L362-375); ``000`` = the HOSEP paper (``000_e546516683445c97.txt``), §3.1 and
its Fig. 1 (L150-172), the same algorithm in the paper's words.

OSEP counts hosts, not power: a user's deficit is ``f_u = p_u - nt_ativa_u`` (hosts owned minus
its running tasks, 001 L356; the papers' tasks hold one host each, and a task of ``res`` hosts
counts ``res``), its unmet demand ``i_u`` its waiting tasks. The skeleton
(:mod:`schedulers.core.owner_share`) gives idle hosts first, runs a decision round every ``period``
seconds and does the preemptions; OSEP's choices:

* **Decision step** (001 Fig. 3):

  - line 1: ``u_max``, the user with the largest ``f_u > 0`` among those with unmet demand
    (``i_max > 0``). Read "among those with demand": literally the argmax of ``f`` over every user
    must have demand, and an owner without jobs (largest ``f``) would then block every other
    deficit user. Only users with a runnable task count (a task whose kill is still under way
    cannot be placed yet).
  - line 2: ``u_min``, the user with the smallest ``f_u < 0`` (largest excess). A user who owns
    nothing (001 §6.2 L688, future work there) comes first, whatever its ``f``: its tasks use idle
    hosts only.
  - line 3: the Active task of ``u_min`` that has run least (``w_j``: time of its current run,
    001 L358; ties: the later arrival, then the id). 000 L155-158 words it as the least wasted
    computation; with checkpointing the two differ, the monograph's is followed.
  - line 5: ``u_max``'s first ready task (arrival order: the original submission time, so a
    preempted task keeps its place) gets the host.

* **Idle hosts**: users in decreasing ``f_u`` (ties by name), their tasks in arrival order, the
  lowest host ids first (OSEP sees hosts as equal).

Options: ``period``, ``maxt``, ``checkpoint``, ``block`` (see
:class:`~schedulers.core.owner_share.OwnerSharePolicy`).
"""

from __future__ import annotations

from .core.owner_share import OwnerSharePolicy
from .core.preemption import Task


class OSEP(OwnerSharePolicy):
    """OSEP (001 ch. 3), registry name ``osep``; see the module docstring."""

    name = "osep"
    summary = ("Owner-share enforcement: each user gets at least as many hosts as it owns, by preempting the "
               "tasks of users who use more than their share.")
    references = ("osep", "forte2015")

    def idle_user_order(self, users: list[str]) -> list[str]:
        return sorted(users, key=lambda u: (-self.own.osep_f(u), u))

    def ready_key(self, task: Task) -> tuple[float, int]:
        return (task.arrival, task.index)

    def choose_idle_hosts(self, task: Task, free: list[int]) -> tuple[int, ...]:
        return tuple(free[:task.res])

    def decision_step(self) -> tuple[Task, Task] | None:
        own = self.own
        deficit = [u for u in self.users_with_ready() if own.osep_f(u) > 0]          # line 1
        if not deficit:
            return None
        u_max = min(deficit, key=lambda u: (-own.osep_f(u), u))
        running = [u for u in own.users if self.active_tasks(u)]
        pool = [u for u in running if not own.share(u)] or [u for u in running if own.osep_f(u) < 0]
        if not pool:                                                                  # line 2
            return None
        u_min = min(pool, key=lambda u: (own.osep_f(u), u))
        victim = min(self.active_tasks(u_min),                                        # line 3
                     key=lambda t: (self.elapsed(t), -t.arrival, -t.index))
        task = self.first_ready_fitting(u_max, victim.hosts)                          # line 5
        return None if task is None else (victim, task)
