"""Owner-share accounting for OSEP, HOSEP and EHOSEP: who owns which hosts, who runs where.

Pure bookkeeping over the typed model (:class:`~schedulers.core.model.Host`,
:class:`~schedulers.core.model.Job`); no decisions. A policy builds one :class:`Ownership` from
the platform's hosts, tells it when jobs are submitted, start, end or are preempted, and asks it
for the papers' quantities.

Sources (the papers in ``shared/papers``, see their ``README.md``): ``000`` is the HOSEP paper
(``000_e546516683445c97.txt``), ``001`` the monograph (``001_e7d938ca075b7e80.txt``); ``L<n>``
is a line of the plain-text file.

Definitions
-----------

* **Owner of a host**: its platform property ``owner`` (a missing or empty property: nobody's).
  **User of a job**: its workload field ``user`` (:attr:`Job.user`, forwarded by Batsim in
  JOB_SUBMITTED with every other job field).
* **Power of a host** ``Power_y`` (flops/s): its nominal speed, the fastest pstate's speed per core
  (sleep pstates have tiny speeds) times its number of cores. The papers' hosts have one core and
  one speed in MFlops (001 §5.2, L535-551), which become flops/s here (1 MFlops = 1e6 flops/s).
* **Share** ``Porcao_u`` (001 §3.1 L295: the set of hosts of the grid the user owns) and
  ``Provided_u`` (000 §3.2 eq. 3 L237; in 001 §4.1.1 L411 ``Porcao_u`` also names the share's
  capacity, "Porcao_i MFLOPS"): the total power of the hosts ``u`` owns (flops/s).
* ``Allocated_u`` (000 eq. 3; ``Alocado_u`` in 001 eq. 4.1): the total power of the hosts running
  ``u``'s jobs now (flops/s). A host runs one job at a time in the papers; if several jobs share a
  host (Batsim's compute sharing), its power is split equally between them.
* OSEP's counts (001 §3.3.2 L356, 000 §3.1 L150-153 and Fig. 1 L161-172): ``f_u = (hosts owned) -
  (active tasks)``, ``> 0`` when ``u`` runs on fewer hosts than it owns (a task holds one host in
  the papers; one of ``res`` hosts counts ``res``); the unmet demand ``i_u`` =
  the number of ``u``'s submitted tasks waiting for a host.
* **PowerDiff** (000 Def. 1, eq. 3, L233-241; ``DifPoder``, 001 §4.1.1 eq. 4.1, L413)::

      PowerDiff_u = (Allocated_u - Provided_u) / Provided_u          (dimensionless)

  ``< 0``: deficit, ``> 0``: excess, ``0``: exactly the share (001 L415 says "1" for this case,
  which eq. 4.1 contradicts: the formula is followed).
* **Remaining power** after preempting ``z``'s task on host ``y`` (000 Def. 2, eq. 4, L249-261
  ``RP``; 001 §4.1.2 eq. 4.2, L421 ``PR_Preemp``)::

      RP_{z,y} = (Allocated_z - Provided_z - Power_y) / Provided_z

  ``y`` must run a job of ``z`` (the task "excluded from the set allocated to that user", 000 L250).
* **Remaining power after allocating** host ``y`` to user ``w`` (001 §4.1.2 eq. 4.3, L425
  ``PR_Aloc``). The monograph prints ``(Alocado_w - Porcao_w + Poder_y) / Porcao_z``, but ``z`` is
  no variable of eq. 4.3 (it is eq. 4.2's preempted user). Read here as ``Porcao_w``: eq. 4.3 is
  then ``w``'s PowerDiff once it holds ``y`` too, the mirror of eq. 4.2 ("de forma semelhante",
  L423), and comparable with PowerDiff and RP as 001 §4.3.1 condition 4 (L448) compares them.
  The printed reading is available: ``pr_aloc(w, y, divide_by=z)``.
* ``omega_z`` (000 Def. 3, L263-265): ``RP_{z,y}`` for the least powerful host ``y`` running
  ``z``'s jobs (the largest remaining power ``z`` can keep).
* **Fair share** (001 §4.2, L429-433; 000 Def. 4, L274-279): ``x`` is served fairly when
  ``PowerDiff_x >= 0``, or when every host ``j`` running a job of a user ``i`` with
  ``PowerDiff_i >= 0`` has ``RP_{i,j} <= PowerDiff_x``.

Users who own nothing and owners without jobs
--------------------------------------------

Both are legal. An owner without jobs has ``Allocated = 0``, ``PowerDiff = -1`` (the formula),
``f_u`` = its host count and no unmet demand: a policy must pair a deficit with demand
(:meth:`Ownership.deficits` ``with_demand=True``), as OSEP's line 1 does (``i_max > 0``, 000 L162)
and HOSEP's line 5 implies (a job of the deficit user gets the host, 000 L342).

A non-owner (``Provided = 0``, the "non-owning users" of 001 §6.2 L688, future work there) has no
share to enforce: every relative quantity ``x / Provided`` of this module is then defined as
``+inf`` when ``x > 0`` (whatever it uses is excess) and ``0`` when ``x = 0`` (it uses nothing:
neither deficit nor excess). So a non-owner is never a deficit user, is the first excess user
while it runs anything, and its ``RP`` is ``0`` on its last host, ``+inf`` before.

Ties in the sorted lists are broken by user name (``str`` order), so that every policy built on
this module is deterministic.
"""

from __future__ import annotations

import math
from typing import Iterable, Protocol, cast

from procset import ProcSet

from .model import Host, Job, PolicyError, PolicyInputError

__all__ = ["MissingUserError", "Owned", "Ownership", "OwnershipError", "host_power", "relative"]


class OwnershipError(PolicyError):
    """Bad input or an impossible bookkeeping step: a job without ``user``, an unknown host id,
    a job started twice, ended without starting... (the message names the job or host)."""


class MissingUserError(OwnershipError, PolicyInputError):
    """A job without the workload field ``user`` that owner-share policies read (bad input)."""


def host_power(host: Host) -> float:
    """Nominal power of ``host`` in flops/s: its fastest pstate's speed (flops/s per core) times
    its cores.

    Raises:
        HostInfoUnknown: speeds or cores unknown (real Batsim without the platform file).
        OwnershipError: no speed above 0.
    """
    speed = max(host.speeds)
    if not speed > 0:
        raise OwnershipError(f"host {host.name!r} (id {host.id}): no pstate with a speed above 0")
    return speed * host.cores


def relative(x: float, provided: float) -> float:
    """``x / provided``, the papers' relative measure (000 eqs. 3-4, 001 eqs. 4.1-4.3).

    For a user who owns nothing (``provided == 0``): ``+inf`` when ``x > 0``, ``0.0`` when
    ``x <= 0`` (see the module docstring).
    """
    if provided > 0:
        return x / provided
    return math.inf if x > 0 else 0.0


class Owned(Protocol):
    """What the accounting reads of a job: its Batsim ``id`` and its workload field ``user``
    (a :class:`~schedulers.core.model.Job`, or a preemptive policy's
    :class:`~schedulers.core.preemption.Task`; :meth:`Ownership.start` reads the job's
    ``allocation`` when it is given no hosts)."""

    @property
    def id(self) -> str: ...

    @property
    def user(self) -> str | None: ...


def _job_user(job: Owned) -> str:
    user = job.user
    if user is None:
        raise MissingUserError(f"job {job.id!r} has no workload field 'user': owner-share policies need "
                               "the user of every job", job_id=job.id)
    return user


class Ownership:
    """Shares, allocations and the papers' relative powers (see the module docstring).

    Args:
        hosts: the compute hosts (``platform.hosts``), speeds and cores known.
        owner_key: the host property naming the owner (``"owner"``).
        users: users to know from the start even if they own nothing and have not submitted yet.

    Raises:
        HostInfoUnknown: a host's speeds or cores are unknown.
        OwnershipError: duplicate host ids, a host with no speed above 0.

    The job-tracking methods take :class:`~schedulers.core.model.Job` objects (``id``, ``user``,
    ``allocation``); a job's user is read once, when it is first seen.
    """

    def __init__(self, hosts: Iterable[Host], *, owner_key: str = "owner", users: Iterable[str] = ()) -> None:
        self._power: dict[int, float] = {}
        self._owner: dict[int, str | None] = {}
        shares: dict[str, list[int]] = {}
        for h in hosts:
            if h.id in self._power:
                raise OwnershipError(f"host {h.name!r}: duplicate host id {h.id}")
            self._power[h.id] = host_power(h)
            owner = h.properties.get(owner_key) or None
            self._owner[h.id] = owner
            if owner is not None:
                shares.setdefault(owner, []).append(h.id)
        self._share: dict[str, tuple[int, ...]] = {u: tuple(sorted(ids)) for u, ids in shares.items()}
        self._provided: dict[str, float] = {u: sum(self._power[i] for i in ids) for u, ids in self._share.items()}
        self._total = sum(self._power[i] for i in sorted(self._power))
        self._users: set[str] = set(self._share) | {str(u) for u in users}
        self._user_of: dict[str, str] = {}                   # job id -> user
        self._waiting: dict[str, dict[str, None]] = {}       # user -> job ids in arrival order
        self._running: dict[str, tuple[int, ...]] = {}       # job id -> host ids
        self._running_of: dict[str, dict[str, None]] = {}    # user -> running job ids in start order
        self._on_host: dict[int, list[str]] = {}             # host id -> job ids running there
        self._alloc: dict[str, float] = {}                   # user -> Allocated, unless in _stale
        self._stale: set[str] = set()                        # users whose Allocated may have changed
        #: Count of the changes of the running jobs (:meth:`start`, :meth:`end`, :meth:`preempt`):
        #: a value computed from them stays right while it is unchanged (:meth:`running_hosts`, the
        #: held parts of :meth:`remaining_power`).
        self.changes = 0
        self._version: dict[str, int] = {}                   # user -> changes of its own running jobs
        self._hosts_of: dict[str, tuple[int, ...]] = {}      # user -> running_hosts, at _hosts_at
        self._hosts_at = 0
        self._held_of: dict[str, dict[int, float]] = {}      # user -> {host: _held}, at _held_at
        self._held_at = 0

    # ------------------------------------------------------------------ platform facts
    @property
    def users(self) -> tuple[str, ...]:
        """Every known user (owners, users given at construction, users of jobs seen), sorted."""
        return tuple(sorted(self._users))

    @property
    def owners(self) -> tuple[str, ...]:
        """Users owning at least one host, sorted."""
        return tuple(sorted(self._share))

    @property
    def host_ids(self) -> tuple[int, ...]:
        """Every host id, sorted."""
        return tuple(sorted(self._power))

    @property
    def total_power(self) -> float:
        """Power of the whole grid (flops/s), owned or not."""
        return self._total

    def power(self, host_id: int) -> float:
        """``Power_y`` of host ``host_id`` (flops/s, see :func:`host_power`).

        Raises:
            OwnershipError: unknown host id.
        """
        try:
            return self._power[host_id]
        except KeyError:
            raise OwnershipError(f"unknown host id {host_id!r}") from None

    def owner_of(self, host_id: int) -> str | None:
        """The owner of host ``host_id``, None when nobody owns it.

        Raises:
            OwnershipError: unknown host id.
        """
        self.power(host_id)
        return self._owner[host_id]

    def share(self, user: str) -> tuple[int, ...]:
        """``Porcao_u`` as a set: the ids of the hosts ``user`` owns, sorted (empty for a non-owner;
        001 §3.1 L295)."""
        return self._share.get(user, ())

    def provided(self, user: str) -> float:
        """``Provided_u`` (000 eq. 3) = ``Porcao_u`` in MFLOPS of 001 eq. 4.1: the total power of
        the hosts ``user`` owns (flops/s; 0 for a non-owner)."""
        return self._provided.get(user, 0.0)

    def share_fraction(self, user: str) -> float:
        """``Provided_u / total_power`` (dimensionless): the "% of computing power" of 000 Table 1
        (L472-482) and 001 §5.2 (L538-551) as a fraction."""
        return self.provided(user) / self._total

    # ------------------------------------------------------------------ job life cycle
    def _remember(self, job: Owned) -> str:
        user = self._user_of.get(job.id)
        if user is None:
            user = _job_user(job)
            self._user_of[job.id] = user
            self._users.add(user)
        return user

    def submit(self, job: Owned) -> None:
        """``job`` arrives: it waits for a host (counts in ``user``'s unmet demand).

        Raises:
            OwnershipError: no ``user`` field, or the job is already waiting or running.
        """
        user = self._remember(job)
        if job.id in self._running or job.id in self._waiting.get(user, {}):
            raise OwnershipError(f"job {job.id!r} submitted twice")
        self._waiting.setdefault(user, {})[job.id] = None

    def start(self, job: Owned, hosts: ProcSet | Iterable[int] | None = None) -> None:
        """``job`` starts on ``hosts`` (default: ``job.allocation``); it leaves the waiting tasks
        if it was there (a job never submitted here is accepted too).

        Raises:
            OwnershipError: no ``user``, no hosts, an unknown host id, or the job already running.
        """
        user = self._remember(job)
        alloc = cast(Job, job).allocation if hosts is None else hosts
        ids = tuple(sorted(set(alloc))) if alloc is not None else ()
        if not ids:
            raise OwnershipError(f"job {job.id!r} started on no host")
        for i in ids:
            if i not in self._power:
                raise OwnershipError(f"job {job.id!r} started on unknown host id {i!r}")
        if job.id in self._running:
            raise OwnershipError(f"job {job.id!r} started while already running")
        self._waiting.get(user, {}).pop(job.id, None)
        self._running[job.id] = ids
        self._running_of.setdefault(user, {})[job.id] = None
        for i in ids:
            self._on_host.setdefault(i, []).append(job.id)
        self._touch(ids)
        self.changes += 1
        self._version[user] = self._version.get(user, 0) + 1

    def _stop(self, job: Owned, what: str) -> str:
        ids = self._running.pop(job.id, None)
        if ids is None:
            raise OwnershipError(f"job {job.id!r} {what} but it is not running")
        user = self._user_of[job.id]
        del self._running_of[user][job.id]
        self._touch(ids)
        for i in ids:
            on = self._on_host[i]
            on.remove(job.id)
            if not on:
                del self._on_host[i]
        self.changes += 1
        self._version[user] = self._version.get(user, 0) + 1
        return user

    def end(self, job: Owned) -> None:
        """``job`` is over (completed, killed for good): its hosts are released.

        Raises:
            OwnershipError: the job is not running.
        """
        self._stop(job, "ended")

    def preempt(self, job: Owned) -> None:
        """``job`` is stopped and waits again (OSEP's "Vacate job", 000 Fig. 1 L165; HOSEP's
        "Preempt job", Fig. 2 L341): its hosts are released and it counts in the unmet demand, at
        the end of its user's waiting tasks.

        Raises:
            OwnershipError: the job is not running.
        """
        user = self._stop(job, "preempted")
        self._waiting.setdefault(user, {})[job.id] = None

    def withdraw(self, job: Owned) -> None:
        """A waiting ``job`` leaves for good (rejected).

        Raises:
            OwnershipError: the job is not waiting.
        """
        user = self._user_of.get(job.id)
        if user is None or job.id not in self._waiting.get(user, {}):
            raise OwnershipError(f"job {job.id!r} withdrawn but it is not waiting")
        del self._waiting[user][job.id]

    # ------------------------------------------------------------------ current state
    def running_jobs(self, user: str) -> tuple[str, ...]:
        """Ids of ``user``'s running jobs, in start order."""
        return tuple(self._running_of.get(user, {}))

    def running_hosts(self, user: str) -> tuple[int, ...]:
        """Ids of the hosts running a job of ``user``, sorted (kept per user while
        :attr:`changes` is unchanged)."""
        if self._hosts_at != self.changes:
            self._hosts_of.clear()
            self._hosts_at = self.changes
        hosts = self._hosts_of.get(user)
        if hosts is None:
            hosts = self._hosts_of[user] = tuple(sorted({i for j in self.running_jobs(user)
                                                         for i in self._running[j]}))
        return hosts

    def version(self, user: str) -> int:
        """Count of the changes of ``user``'s running jobs (its starts, ends and preemptions; 0
        before the first): a value computed from ``user``'s running jobs alone (EHOSEP's
        ``Consumo_user``) stays right while it is unchanged."""
        return self._version.get(user, 0)

    def jobs_on(self, host_id: int) -> tuple[str, ...]:
        """Ids of the jobs running on ``host_id``."""
        return tuple(self._on_host.get(host_id, ()))

    def idle_hosts(self) -> tuple[int, ...]:
        """Ids of the hosts running no job, sorted."""
        return tuple(i for i in sorted(self._power) if i not in self._on_host)

    def waiting_jobs(self, user: str) -> tuple[str, ...]:
        """Ids of ``user``'s waiting tasks (OSEP's Ready state, 001 §3.3.2 L345), arrival order."""
        return tuple(self._waiting.get(user, {}))

    def unmet_demand(self, user: str) -> int:
        """OSEP's ``i_u`` (001 §3.3.2 L355, 000 L151): the number of ``user``'s waiting tasks."""
        return len(self._waiting.get(user, {}))

    def active_tasks(self, user: str) -> int:
        """OSEP's ``nt_ativa_u`` (001 §3.3.2 L356): the number of ``user``'s running tasks."""
        return len(self._running_of.get(user, {}))

    def osep_f(self, user: str) -> int:
        """OSEP's ``f_u = p_u - nt_ativa_u`` (001 §3.3.2 L356; 000 L152 "f = ofertados -
        possuidos"): hosts owned minus the hosts its running tasks hold; ``> 0`` deficit, ``< 0``
        excess (in hosts, whatever their speed: OSEP's homogeneous view). The papers' tasks hold
        one host each, so that ``nt_ativa_u`` is their number; a task of ``res`` hosts counts
        ``res`` (counted as one, a user running one task on every host would be in deficit)."""
        running = self._running
        return len(self.share(user)) - sum(len(running[j]) for j in self._running_of.get(user, ()))

    def _touch(self, ids: tuple[int, ...]) -> None:
        """A job starts or stops on ``ids``: the ``Allocated`` of every user running there (the
        job's own user included) may change (a host's power is split between its jobs)."""
        on, user_of, stale = self._on_host, self._user_of, self._stale
        for i in ids:
            for j in on.get(i, ()):
                stale.add(user_of[j])

    def allocated(self, user: str) -> float:
        """``Allocated_u`` (000 eq. 3) / ``Alocado_u`` (001 eq. 4.1): total power of the hosts
        running ``user``'s jobs now (flops/s): each such host's power divided by the number of
        jobs running there, once per job of ``user`` there, summed by increasing host id. Kept
        until a job starts or stops on a host ``user`` runs on."""
        if user in self._stale:
            self._stale.discard(user)
            acc = 0.0
            for i in self.running_hosts(user):
                jobs = self._on_host[i]
                part = self._power[i] / len(jobs)
                for j in jobs:
                    if self._user_of[j] == user:
                        acc += part
            self._alloc[user] = acc
            return acc
        return self._alloc.get(user, 0.0)

    def _held(self, user: str, host_id: int) -> float:
        """The part of ``host_id``'s power ``user`` holds (flops/s)."""
        jobs = self._on_host.get(host_id, ())
        if len(jobs) == 1:  # (the usual case: power * 1 / 1 is power, the same float)
            return self.power(host_id) if self._user_of[jobs[0]] == user else 0.0
        mine = sum(1 for j in jobs if self._user_of[j] == user)
        return self.power(host_id) * mine / len(jobs) if mine else 0.0

    # ------------------------------------------------------------------ the papers' quantities
    def power_diff(self, user: str) -> float:
        """``PowerDiff_u = (Allocated_u - Provided_u) / Provided_u`` (000 Def. 1 eq. 3, L237;
        001 eq. 4.1, L413), dimensionless. Non-owner: ``+inf`` while it runs anything, else 0."""
        return relative(self.allocated(user) - self.provided(user), self.provided(user))

    def remaining_power(self, user: str, host_id: int | Iterable[int]) -> float:
        """``RP_{z,y} = (Allocated_z - Provided_z - Power_y) / Provided_z`` (000 Def. 2 eq. 4,
        L259; ``PR_Preemp``, 001 eq. 4.2, L421): ``user``'s PowerDiff once its task on
        ``host_id`` is preempted. ``Power_y`` is the part of ``y`` the user holds (all of it
        without compute sharing). ``host_id`` may be several ids (a task on several hosts, whose
        preemption frees them all: ``Power_y`` is then their sum).

        Raises:
            OwnershipError: a host of ``host_id`` runs no job of ``user``.
        """
        gone = {host_id} if isinstance(host_id, int) else set(host_id)
        held = self._held_by(user)
        for y in sorted(gone):
            if not held.get(y):
                raise OwnershipError(f"host id {y} runs no job of user {user!r}")
        # Allocated_z - Power_y summed over the other hosts, exact for integer-valued speeds
        rest = sum(h for i, h in held.items() if i not in gone)
        return relative(rest - self.provided(user), self.provided(user))

    def _held_by(self, user: str) -> dict[int, float]:
        """``{host: _held(user, host)}`` over :meth:`running_hosts` (in its order), kept per user
        while :attr:`changes` is unchanged (a host's part depends on every job running there)."""
        if self._held_at != self.changes:
            self._held_of.clear()
            self._held_at = self.changes
        held = self._held_of.get(user)
        if held is None:
            held = self._held_of[user] = {i: self._held(user, i) for i in self.running_hosts(user)}
        return held

    def omega(self, user: str) -> tuple[float, int] | None:
        """``(omega_z, y)`` (000 Def. 3, L263-265): ``RP_{z,y}`` for the least powerful host ``y``
        running ``user``'s jobs (lowest id among equals), the largest remaining power ``user``
        can keep; None when ``user`` runs nothing."""
        hosts = self.running_hosts(user)
        if not hosts:
            return None
        y = min(hosts, key=lambda i: (self._held(user, i), i))
        return self.remaining_power(user, y), y

    def pr_aloc(self, user: str, host_id: int | Iterable[int], *, divide_by: str | None = None) -> float:
        """``PR_Aloc_{w,y} = (Allocated_w - Provided_w + Power_y) / Provided_w`` (001 eq. 4.3,
        L425): ``user``'s PowerDiff once host ``host_id`` (its whole power) runs a task of its own;
        several ids: ``Power_y`` is their sum.

        Args:
            divide_by: the monograph's printed denominator ``Porcao_z`` for a user ``z`` (e.g. the
                preempted user of eq. 4.2); default: ``user`` itself (the reading of this module,
                see its docstring).

        Raises:
            OwnershipError: unknown host id.
        """
        ids = (host_id,) if isinstance(host_id, int) else tuple(sorted(set(host_id)))
        gain = sum(self.power(i) for i in ids)
        den = self.provided(user if divide_by is None else divide_by)
        return relative(self.allocated(user) - self.provided(user) + gain, den)

    def by_power_diff(self) -> list[str]:
        """Every known user, PowerDiff ascending (largest deficit first), ties by name."""
        return sorted(self._users, key=lambda u: (self.power_diff(u), u))

    def deficits(self, *, with_demand: bool = False) -> list[str]:
        """Users with ``PowerDiff < 0`` (000 eq. 5, L287), largest deficit first, ties by name;
        ``with_demand``: only those with waiting tasks (``i_u > 0``)."""
        return [u for u in self.by_power_diff()
                if self.power_diff(u) < 0 and (not with_demand or self.unmet_demand(u) > 0)]

    def excesses(self) -> list[str]:
        """Users with ``PowerDiff > 0``, largest excess first (000 Fig. 2 L338: ``u_beta``), ties
        by name."""
        return sorted((u for u in self._users if self.power_diff(u) > 0),
                      key=lambda u: (-self.power_diff(u), u))

    def is_fair(self, user: str) -> bool:
        """001 §4.2 (L429-433; 000 Def. 4, L274-279): ``PowerDiff_x >= 0``, or no host ``j`` of a
        user ``i`` with ``PowerDiff_i >= 0`` has ``RP_{i,j} > PowerDiff_x`` (taking any such host
        would leave ``i`` no worse off than ``x`` is now)."""
        pd = self.power_diff(user)
        if pd >= 0:
            return True
        for i in self._users:
            if i == user or self.power_diff(i) < 0:
                continue
            for j in self.running_hosts(i):
                if self.remaining_power(i, j) > pd:
                    return False
        return True

    def snapshot(self) -> dict[str, dict[str, float]]:
        """Per user (sorted): ``provided`` and ``allocated`` (flops/s), ``power_diff``,
        ``active_tasks``, ``unmet_demand`` -- for logs and timelines."""
        return {u: {"provided": self.provided(u), "allocated": self.allocated(u),
                    "power_diff": self.power_diff(u), "active_tasks": float(self.active_tasks(u)),
                    "unmet_demand": float(self.unmet_demand(u))} for u in self.users}
