"""Own share only: each user's tasks run on the hosts it owns, nowhere else (a static partition).

Not a policy of the papers: the reference against which their satisfaction metrics are read.
Every user gets exactly its own share, whatever the others do (no host is lent, none is taken
back), so it is the schedule that owner-share fairness (000 Def. 4: each user receives the power
it provides, PowerDiff = 0) reaches without preemption. Under the HOSEP paper's Definition 5
(``shared/papers/000_e546516683445c97.txt`` L309-315: the ideal time on a machine as fast as
the mean of the user's own hosts) a user with identical hosts scores the same whatever their
speed: its ideal and real times both scale as 1 / speed. Definition 5 therefore rates a user
with slow hosts (user4 of the HOSEP grid, 10 % of the power) exactly as one with fast hosts
(user1, 46 %) when each gets its share: it cannot show "satisfaction proportional to the power
provided" (000 L512, L521). The ``hosep`` campaign runs this policy to give the number.

Choices (the skeleton's hooks, :class:`~schedulers.core.owner_share.OwnerSharePolicy`): idle
hosts go to users by name, a user's smallest task first (HOSEP's rule, 000 §3.3 i, L326: the
task orders of HOSEP and of this reference are the same, so that only the hosts differ; ties:
arrival order) on its own idle hosts, the most powerful first (ties: lowest id); no decision
round ever preempts. A task larger than its user's share, or of a user owning nothing, can never
run and is rejected.

Options: the skeleton's (``period``, ``maxt``, ``checkpoint``, ``block``), accepted as by the other
owner-share policies (one campaign gives them all the same options) but without effect here: no
round preempts, and a task starts on its user's idle hosts whatever the period. Their descriptions
(``gridsched policies own-share``) say so.
"""

from __future__ import annotations

from .core.model import Job
from .core.options import Option, option_default, option_type
from .core.owner_share import OwnerSharePolicy
from .core.preemption import Task


class OwnShare(OwnerSharePolicy):
    """Each user on its own hosts only (registry name ``own-share``): the reference schedule of
    owner-share fairness without lending, against which the satisfaction readings are compared
    (the module docstring says why)."""

    name = "own-share"
    summary = ("Reference, not a paper's policy: each user's tasks run only on the hosts it owns, "
               "smallest task first; no host is lent or taken back.")
    references = ("hosep",)
    option_docs = {name: Option(f"no effect in own-share, which never preempts (accepted as by osep and hosep); "
                                f"there: {doc}", type=option_type(doc), default=option_default(doc))
                   for name, doc in OwnerSharePolicy.option_docs.items()
                   if name in ("period", "maxt", "checkpoint", "block")}

    def never_runs(self, job: Job) -> bool:
        """A job of a user owning fewer hosts than it needs (or none). A job without a user is no
        user's: it is refused as by the other owner-share policies (MissingUserError), not rejected."""
        own = self.own
        return super().never_runs(job) or own is None or (job.user is not None and job.res > len(own.share(job.user)))

    def idle_user_order(self, users: list[str]) -> list[str]:
        return users

    def ready_key(self, task: Task) -> tuple[float, float, int]:
        return self.smallest_key(task)

    def choose_idle_hosts(self, task: Task, free: list[int]) -> tuple[int, ...] | None:
        own = self.own
        mine = sorted((h for h in free if own.owner_of(h) == task.user), key=lambda h: (-own.power(h), h))
        return tuple(mine[:task.res]) if len(mine) >= task.res else None

    def decision_step(self) -> tuple[Task, Task] | None:
        return None
