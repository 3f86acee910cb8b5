"""EHOSEP, the energy-aware HOSEP: owner shares in computing power under per-user power limits.

Source: ``003`` = ``shared/papers/003_97c4ff2275ee8bc0.txt`` (EHOSEP, §3.1 and its allocation
algorithm, lines 1-19 of the algorithm box; ``L<n>`` below = line of the plain-text file). The
shares, ``DifPoder`` (PowerDiff) and ``PR_Preemp`` (remaining power) are HOSEP's
(:mod:`schedulers.core.ownership`, 000 eqs. 3-4, 001 eqs. 4.1-4.2); the skeleton
(:mod:`schedulers.core.owner_share`) gives idle hosts, runs the decision rounds every ``period``
seconds and does the preemptions.

Power (W), from the platform's power states as SimGrid's energy plugin computes them
(:mod:`schedulers.core.power`; never guessed):

* ``ConMaxPorcao_x``: the full-load power of the hosts ``x`` owns, the sum of their ``AllCores``
  watts at the nominal pstate.
* ``Limite_x`` (003 §3.1 L95-98: "porcentagem do consumo total das máquinas que a ele pertencem"):
  option ``limits[x]`` percent (default 100) of ``ConMaxPorcao_x``. Compared between users (line 9,
  condition iii) as percentages: the user who asks for less of its own machines' power is the more
  frugal one. A user who owns nothing has no base for a percentage: it is not limited (its jobs
  already run on idle hosts only and are preempted first, see :mod:`schedulers.core.ownership`).
* ``Consumo_x``: what the hosts running ``x``'s tasks draw now, each host at its current pstate
  with the cores ``x``'s task keeps busy there (one per computing part; a ``delay`` task none: its
  host draws ``Idle``). Idle hosts are nobody's consumption. Tasks placed on hosts that a kill
  is freeing count already (the skeleton books them at once).
* ``Energia_y`` for a task: the power host ``y`` would draw running it (``Consumo_x +
  Energia_y <= Limite_x``: 003 alg. line 4, "máquina livre cujo consumo não faça exceder o
  limite", and line 7).
* ``CSP_z = (ConMaxPorcao_z / ConMaxSistema) x (PoderSistema / PoderPorcao_z)`` (003 §3.1 L107-110),
  full-load watts and nominal flops/s; ``+inf`` for a user who owns nothing.

Fairness (003 §3.1 L113-124): ``x`` is served fairly when (i) ``DifPoder_x >= 0``; or (ii) no host
``y`` it does not already use has ``Energia_y + Consumo_x <= Limite_x`` (for ``x``'s smallest
ready task; ``Consumo_x = Limite_x`` is the case of a host that draws something); or (iii)
``Consumo_x < Limite_x`` and no preemption passes line 9: for every user ``i`` with ``DifPoder_i
> 0`` and every task ``j`` it runs, ``PR_Preemp_{i,j} < 0`` and ``Limite_x >= Limite_i``
(:meth:`EHOSEP.fairly_served`). The algorithm's "usuário habilitado para atendimento" (line 2) is
a user with a ready task who is not served fairly.

The allocation algorithm (003, lines 1-19), mapped on the skeleton:

* line 1: users in increasing ``DifPoder`` (ties by name).
* lines 3-5, **idle hosts** (the skeleton's first step, every message): each user with
  ``Consumo <= Limite`` (line 3) and a ready task, in that order, gets for its smallest ready task
  (line 5, "menor tarefa"; 001 §4.3.2's size: flops x hosts) the free host that would spend the
  least *energy* running it (line 5 says "consumir menos energia para executá-la": ``Energia_y``
  times the task's run time on ``y``, flops / speed, in J; a ``delay`` task: its delay), among the
  free hosts that keep it within its limit (line 4). So a fast hungry host can beat a slow frugal
  one. Ties: the faster host, then the lowest id. A task of several hosts takes the ``res`` hosts
  of least energy if their draws fit the limit, else the ``res`` hosts of least draw if they fit,
  else none. When no free host keeps a task within the limit, the user's next ready task is tried,
  then the next user.
* lines 7-11, **decision rounds** (every ``period`` s; at most ``maxt`` steps, each one run of the
  algorithm): the first enabled user ``u_i`` (line 2) in line 1's order, within its limit
  (line 3); its smallest ready task ``t``. Line 7: among users ``u_z != u_i`` with ``DifPoder_z >
  0`` running a task on hosts ``M_y`` that ``t`` fits and that keep ``u_i`` within its limit, the
  one with the largest ``CSP_z x Consumo_z`` (ties by name). Line 8: its such task whose
  preemption wastes least work (flops computed since the last checkpoint, or since its start
  without checkpointing; ties: the shorter run, then the later arrival). Line 9: preempt only if
  afterwards ``u_z`` has no deficit (``PR_Preemp_{z,y} >= 0``) or ``Limite_i < Limite_z``.
  Line 11: ``t`` gets ``M_y``. Line 16 ends the algorithm after the first enabled user, whatever
  happened: when line 7 or 9 fails, the round ends.

Options: ``limits`` and the skeleton's ``period``, ``maxt``, ``checkpoint``, ``block``.
"""

from __future__ import annotations

import math
from typing import Any

from .core.model import PolicyInputError
from .core.owner_share import OwnerSharePolicy
from .core.policy import Option, PolicyOptionError
from .core.power import busy_parts, csp_coefficient, draw, full_load_watts, watt_ranges
from .core.preemption import Task

#: Relative tolerance of the limit tests (W): sums of float watts in another order.
_TOL = 1e-9


class EHOSEP(OwnerSharePolicy):
    """EHOSEP (003 §3), registry name ``ehosep``; see the module docstring.

    Attributes (after SIMULATION_BEGINS):
        full_load: host id -> full-load power (W).

    Raises (constructor):
        PolicyOptionError: ``limits`` not a mapping of user names to percentages >= 0.
    Raises (SIMULATION_BEGINS):
        PowerError: a host without ``wattage_per_state`` (one line naming it).
        PolicyInputError: ``limits`` names a user who owns no host (its limit would do nothing).
    """

    name = "ehosep"
    summary = ("HOSEP under a power limit per user: tasks go to the hosts that spend the least energy while "
               "their user stays within its limit.")
    references = ("ehosep", "hosep")
    option_docs = {**OwnerSharePolicy.option_docs,
                   "limits": Option("power limit per user, in percent of the full-load power of the user's own "
                                    "hosts (EHOSEP paper §3.1), e.g. {\"user1\": 120}; users who own nothing are "
                                    "not limited", type="object: user -> number >= 0 (%)",
                                    default="100 for every user")}

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        limits = self.options.get("limits", {})
        if not isinstance(limits, dict):
            raise PolicyOptionError(f"policy {self.name!r}: option 'limits' must map user names to percents, "
                                    f"got {limits!r}")
        self.limit_pct: dict[str, float] = {}
        for user, pct in limits.items():
            if isinstance(pct, bool) or not isinstance(pct, (int, float)) or not (0 <= pct < math.inf):
                raise PolicyOptionError(f"policy {self.name!r}: option 'limits': user {user!r} has limit {pct!r}; "
                                        "expected a percentage >= 0")
            self.limit_pct[str(user)] = float(pct)
        self.full_load: dict[int, float] = {}
        self._draws: dict[tuple[int, int, int], float] = {}     # (host, busy cores, pstate) -> W
        #: Bumped at every RESOURCE_STATE_CHANGED (host pstates, hence draws, changed).
        self._pstate_epoch = 0
        # user -> (Ownership.version(user), _pstate_epoch, Consumo) it was computed at
        self._cons: dict[str, tuple[int, int, float]] = {}
        # task id -> (hosts, profile, _pstate_epoch, task_draw(task, hosts)) of its current run
        self._run_draw: dict[str, tuple[tuple[int, ...], Any, int, float]] = {}
        self._least: dict[int, float] = {}
        self._floor: dict[int, list[float]] = {}
        self._con_max: dict[str, float] = {}
        self._con_sys = 0.0

    def on_simulation_begins(self, platform) -> None:
        super().on_simulation_begins(platform)
        self.full_load = {h.id: full_load_watts(h) for h in platform.hosts}
        def least(h, parts: int) -> float:   # the host's least draw at a computation pstate
            return min(draw(h, parts, p) for p in range(len(watt_ranges(h))) if p not in h.special_pstates)

        # the least any host can draw for a task part (any computation pstate): a lower bound that
        # refuses at once a task no free host could keep within the limit
        self._least = {parts: min(least(h, parts) for h in platform.hosts) for parts in (0, 1)}
        # each host's draw where it computes (its pstate at the start; a host asleep then: its least
        # computation pstate): EHOSEP sets no pstate, so a task can never draw less than the sum
        # of the res smallest of these (never_runs)
        self._floor = {parts: sorted(least(h, parts) if h.pstate in h.special_pstates else draw(h, parts)
                                     for h in platform.hosts) for parts in (0, 1)}
        self._con_sys = math.fsum(self.full_load.values())
        self._con_max = {u: math.fsum(self.full_load[i] for i in self.own.share(u)) for u in self.own.owners}
        owners = self.own.owners
        for user in self.limit_pct:   # (a limit of a user owning nothing would limit nothing)
            if user not in owners:
                raise PolicyInputError(f"policy {self.name!r}: option 'limits' names user {user!r}, who owns no host "
                                       f"of the platform (owners, by the hosts' 'owner' property: "
                                       f"{', '.join(map(repr, owners)) or 'none'}): its limit would have no effect")

    def never_runs(self, job) -> bool:
        """The skeleton's test, and: the least any ``res`` hosts can draw running ``job`` exceeds
        its user's limit, which it would exceed even alone (``Consumo = 0``): 003 alg. line 4
        never admits it, and it is rejected rather than left waiting forever (the paper does not
        say; e.g. a task of more hosts than its user owns, at the default 100 %). The least
        draw: its computing parts on the hosts of least draw at the pstates they compute in (a
        host asleep at the start: its least computation pstate), its idle parts likewise, a
        lower bound since EHOSEP sets no pstate."""
        if super().never_runs(job):
            return True
        if job.user is None:
            return False  # the skeleton names what is missing
        lim = self.limit(str(job.user))
        if lim == math.inf:
            return False
        busy = sum(busy_parts(job.profile_data, k) for k in range(job.res))
        need = math.fsum(self._floor[1][:busy]) + math.fsum(self._floor[0][:job.res - busy])
        return need > lim + _TOL * max(1.0, lim)

    # ------------------------------------------------------------------------------ quantities
    def limit(self, user: str) -> float:
        """``Limite_user`` (W); ``+inf`` for a user who owns nothing."""
        if not self.own.share(user):
            return math.inf
        return self.limit_pct.get(user, 100.0) / 100.0 * self._con_max[user]

    def limit_percent(self, user: str) -> float:
        """``user``'s limit as the percentage compared at line 9; ``+inf`` for a non-owner."""
        return self.limit_pct.get(user, 100.0) if self.own.share(user) else math.inf

    def csp(self, user: str) -> float:
        """``CSP_user`` (003 §3.1 L107-110), dimensionless; ``+inf`` for a user who owns nothing."""
        provided = self.own.provided(user)
        if provided <= 0 or self._con_sys <= 0:
            return math.inf
        return csp_coefficient(self._con_max[user], self._con_sys, provided, self.own.total_power)

    def _host_draw(self, host_id: int, parts: int) -> float:
        host = self.platform.hosts[host_id]
        key = (host_id, parts, host.pstate)
        w = self._draws.get(key)
        if w is None:
            w = self._draws[key] = draw(host, parts)
        return w

    def task_draw(self, task: Task, hosts: tuple[int, ...]) -> float:
        """Power (W) the hosts ``hosts`` draw running ``task`` (``Energia_y``)."""
        return math.fsum(self._host_draw(h, busy_parts(task.profile, k)) for k, h in enumerate(hosts))

    def consumption(self, user: str) -> float:
        """``Consumo_user`` (W): what the hosts running ``user``'s tasks draw now, the
        :func:`math.fsum` of :meth:`task_draw` over ``user``'s running tasks in start order.

        Kept while ``user``'s running tasks (:meth:`Ownership.version
        <schedulers.core.ownership.Ownership.version>`) and the host pstates (every
        RESOURCE_STATE_CHANGED, :meth:`on_resource_state_changed`) are unchanged; each task's
        draw likewise while its hosts, profile and the pstates are unchanged. The same float as
        computed afresh: the same terms summed in the same order."""
        ver, epoch = self.own.version(user), self._pstate_epoch
        hit = self._cons.get(user)
        if hit is not None and hit[0] == ver and hit[1] == epoch:
            return hit[2]
        c = math.fsum(self._running_draw(t) for j in self.own.running_jobs(user) if (t := self.tasks[j]).hosts)
        self._cons[user] = (ver, epoch, c)
        return c

    def _running_draw(self, task: Task) -> float:
        """:meth:`task_draw` of ``task`` on its hosts, kept while they, its profile and the host
        pstates are unchanged."""
        hit = self._run_draw.get(task.id)
        if hit is not None and hit[2] == self._pstate_epoch and hit[1] is task.profile and hit[0] == task.hosts:
            return hit[3]
        w = self.task_draw(task, task.hosts)
        self._run_draw[task.id] = (task.hosts, task.profile, self._pstate_epoch, w)
        return w

    def on_resource_state_changed(self, hosts, state: str) -> None:
        """Host pstates changed: every kept draw and ``Consumo`` is stale (a subclass that
        overrides this calls it)."""
        self._pstate_epoch += 1
        super().on_resource_state_changed(hosts, state)

    def on_job_completed(self, job) -> None:
        task = self._task_of.get(job.id)
        super().on_job_completed(job)
        if task is not None and not task.hosts:
            self._run_draw.pop(task.id, None)   # (its run is over: its kept draw goes)

    def _budget(self, user: str) -> float:
        """``Limite - Consumo`` (W), with the tolerance of the limit tests."""
        lim = self.limit(user)
        return lim if lim == math.inf else lim - self.consumption(user) + _TOL * max(1.0, lim)

    def energy(self, task: Task, host_id: int) -> float:
        """Energy (J) host ``host_id`` spends running ``task``'s part: its draw times the part's run
        time (its flops over the host's per-core speed now; a ``delay``: the delay); the draw
        alone (W x 1 s) when the task's size is unknown."""
        host = self.platform.hosts[host_id]
        p = task.profile or {}
        w = self._host_draw(host_id, busy_parts(p, 0))
        t = p.get("type")
        speed = host.speed or 0.0
        if t == "delay":
            return w * float(p.get("delay", 0.0))
        if t == "parallel_homogeneous_total" and speed > 0:
            return w * float(p.get("cpu", 0.0)) / task.res / speed
        if t in ("parallel_homogeneous", "parallel") and task.work is not None and speed > 0:
            per_host = task.work if t == "parallel_homogeneous" else task.work / max(1, task.res)
            return w * per_host / speed
        return w

    def fairly_served(self, user: str) -> bool:
        """Conditions i-iii of 003 §3.1 (L113-124), see the module docstring."""
        own = self.own
        if own.power_diff(user) >= 0:                                                  # i
            return True
        budget = self._budget(user)
        ready = self.ready_tasks(user)
        probe = ready[0] if ready else None
        mine = set(own.running_hosts(user))
        if budget < math.inf:                                                          # ii
            # (no other host, or every one above the budget; stops at the first one within it)
            if not any(self._draw_one(probe, y) <= budget for y in own.host_ids if y not in mine):
                return True
        return not any(self._may_preempt(user, z, t.hosts)                             # iii
                       for z in own.users if z != user and own.power_diff(z) > 0
                       for t in self.active_tasks(z))

    def _draw_one(self, task: Task | None, host_id: int) -> float:
        return self._host_draw(host_id, 1 if task is None else busy_parts(task.profile, 0))

    def _may_preempt(self, user: str, victim: str, hosts: tuple[int, ...]) -> bool:
        """003 alg. line 9: after the preemption ``victim`` has no deficit, or ``Limite_user <
        Limite_victim`` (percentages)."""
        return self.own.remaining_power(victim, hosts) >= 0 or self.limit_percent(user) < self.limit_percent(victim)

    def waste(self, task: Task) -> float:
        """Flops ``task``'s current run would lose if killed now (003 alg. line 8): its run time
        since the last completed checkpoint block (since its start without checkpointing) times
        the per-core speed of each host it computes on."""
        e = self.elapsed(task)
        if self.checkpointing:
            e -= math.floor(e / self.block + 1e-9) * self.block
        hs = self.platform.hosts
        rate = math.fsum((hs[h].speed or 0.0) * busy_parts(task.profile, k) for k, h in enumerate(task.hosts))
        return max(0.0, e) * rate

    def _score(self, user: str) -> float:
        """``CSP_z x Consumo_z`` (003 alg. line 7); a non-owner's infinite CSP counts only when it
        draws something."""
        c = self.consumption(user)
        return 0.0 if c <= 0 else self.csp(user) * c

    # ------------------------------------------------------------------------------ hooks
    def idle_user_order(self, users: list[str]) -> list[str]:
        ok = [u for u in users if self._budget(u) >= 0]                                # line 3
        return sorted(ok, key=lambda u: (self.own.power_diff(u), u))                   # line 1

    def ready_key(self, task: Task) -> tuple[float, float, int]:
        return self.smallest_key(task)

    def choose_idle_hosts(self, task: Task, free: list[int]) -> tuple[int, ...] | None:
        budget = self._budget(task.user)                                               # line 4
        if budget < task.res * self._least[busy_parts(task.profile, 0)]:
            return None
        hs = self.platform.hosts
        by_energy = sorted(free, key=lambda i: (self.energy(task, i), -(hs[i].speed or 0.0), i))
        if task.res == 1:
            for i in by_energy:                                                        # line 5
                if self.task_draw(task, (i,)) <= budget:
                    return (i,)
            return None
        for order in (by_energy, sorted(free, key=lambda i: (self._draw_one(task, i), i))):
            pick = tuple(order[:task.res])
            if self.task_draw(task, pick) <= budget:
                return pick
        return None

    def decision_step(self) -> tuple[Task, Task] | None:
        own = self.own
        for x in sorted(self.users_with_ready(), key=lambda u: (own.power_diff(u), u)):  # line 1
            if self.fairly_served(x):                                                  # line 2
                continue
            budget = self._budget(x)
            if budget < 0:                                                             # line 3
                continue
            t = self.ready_tasks(x)[0]                                                 # line 11: smallest
            cands: dict[str, list[Task]] = {}
            for z in own.users:                                                        # line 7
                if z == x or own.power_diff(z) <= 0:
                    continue
                ok = [v for v in self.active_tasks(z)
                      if self.fits(t, v.hosts) and self.task_draw(t, v.hosts[:t.res]) <= budget]
                if ok:
                    cands[z] = ok
            if not cands:
                return None                                                            # line 16
            z = min(cands, key=lambda u: (-self._score(u), u))
            victim = min(cands[z], key=lambda v: (self.waste(v), self.elapsed(v), -v.arrival, -v.index))  # line 8
            if not self._may_preempt(x, z, victim.hosts):                               # line 9
                return None
            return victim, t                                                           # lines 10-11
        return None

