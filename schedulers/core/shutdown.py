"""Idle-host shutdown for any policy: a host idle for ``idle_timeout`` seconds goes to sleep, and
sleeping hosts are woken when the waiting jobs need them.

Option ``idle_timeout`` (s, a number >= 0; absent or ``null``: off) of every registered policy
(:attr:`Policy.option_docs <schedulers.core.policy.Policy.option_docs>`; ``replay`` excepted, it
only plays recorded decisions). Usage::

    gridsched run --energy --policy easy --policy-options '{"idle_timeout": 300}' ...

The model is batsched's idle-sleeper energy policies (``energy_bf_idle_sleeper.cpp``,
``select_idle_machines_to_sedate`` / ``select_idle_machines_to_awaken``): a machine idle for a
minimum time is switched off unless the priority job needs it, machines are switched on when
waiting jobs could use them. Here it is policy-independent: the policy base
(:meth:`Policy.decide <schedulers.core.policy.Policy.decide>`) runs :meth:`IdleShutdown.step`
after the policy's ``schedule()``, once per Batsim message, on the state the policy left.

One step (``now`` = the message's time, s):

1. **Idle clocks.** A host with ``sleep_pstates`` that is awake and free (in
   :attr:`Policy.available <schedulers.core.policy.Policy.available>`) at the end of a step is
   idle since the first step that saw it so (its job's end, its wake-up, or 0 s). Leaving
   :attr:`available` (a job, a switch) stops its clock.
2. **Wake.** ``wanted`` = :meth:`Policy.hosts_wanted
   <schedulers.core.policy.Policy.hosts_wanted>` (default: the ``res`` of every waiting job,
   summed, at most the number of hosts); ``supply`` = hosts awake and free + hosts being switched
   on. When ``wanted > supply``, the missing hosts are woken among the sleeping hosts, less the
   hosts that running jobs release by their walltime (``start + walltime``) before a sleeping
   host could be awake (``now`` + its wake-up delay): waking one then would only cost energy.
   Which hosts: :meth:`Policy.hosts_to_wake <schedulers.core.policy.Policy.hosts_to_wake>`, the
   policy's own host choice (default the lowest ids; EASY's :meth:`select_hosts
   <schedulers.easy.EASY.select_hosts>`, HEFT's fastest hosts, the owner-share policies' hosts
   owned by the users who wait). A host still switching off is not woken (Batsim 4.2.1 ignores a request for
   a host in a virtual pstate and never completes it, see :mod:`schedulers.engine.hosts`); it is
   woken at the step of its RESOURCE_STATE_CHANGED if still needed.
3. **Sleep.** Hosts idle for at least ``idle_timeout`` go to their sleep pstate ``S`` (the ``S``
   of ``sleep_pstates="S:OFF:ON"``), at most ``supply - wanted`` of them (the waiting jobs keep
   the hosts they need awake, as batsched's ``select_idle_machines_to_sedate`` keeps those of its
   priority job), highest ids first (policies place on the lowest ids, so those stay awake).
4. **Timer.** A CALL_ME_LATER at the next idle clock's expiry (``idle since + idle_timeout``),
   unless one already armed comes first. Always strictly after ``now`` (Batsim 4.2.1's
   ``server_on_call_me_later`` aborts on a time that is not in the future); an expiry within
   :data:`EPS` of ``now`` counts as reached.

When Batsim has said ``no_more_static_job_to_submit`` and no job runs or waits, steps do nothing:
sleeping would save nothing inside the measured span (``consumed_joules`` ends at the last job's
end) and a new timer would keep the simulation alive until it fires (``is_simulation_finished``
waits for every waiter and switch). A timer armed before may still fire once after the last job.

Switching (Batsim 4.2.1 ``src/server.cpp`` ``server_on_pstate_modification``, ``src/pstate.cpp``
``switch_off_machine_process`` / ``switch_on_machine_process``; the engine does the same,
:mod:`schedulers.engine.hosts`): a host switched off computes 1 flop at the virtual pstate
``OFF`` then reaches ``S``; switched on, 1 flop at ``ON`` then the requested computation pstate,
so it takes ``1 / speed(OFF)`` and ``1 / speed(ON)`` seconds (speeds in flops/s), at the power
of that pstate with one busy core. Requests are grouped by target pstate and switching time: one
SET_RESOURCE_STATE per group, as Batsim reports a request (RESOURCE_STATE_CHANGED) only when
its last host is done (``CurrentSwitches::mark_switch_as_done``). A host is woken to the pstate
it had when it was put to sleep (a host asleep from the start: its lowest computation pstate).

Reservations (:meth:`waking`, through :meth:`Policy.waking_hosts
<schedulers.core.policy.Policy.waking_hosts>`; EASY and every policy built on
:meth:`EASY.profile <schedulers.easy.EASY.profile>`): a host asleep or switching is never free
now; it is counted free from the earliest time it can be awake: ``now + 1/speed(ON)`` asleep,
the end of its switch-on when switching on, the end of its switch-off ``+ 1/speed(ON)`` when
switching off.

Errors, at SIMULATION_BEGINS (one line): no compute host has ``sleep_pstates``
(:class:`~schedulers.core.policy.PolicyOptionError` naming the first host: the option could
never do anything, so it is refused rather than silently ignored); a host's switching speeds unknown (:class:`~schedulers.core.model.HostInfoUnknown`,
behind real Batsim without the platform file: ``gridsched serve --platform FILE``). Hosts
without ``sleep_pstates`` on a platform that has some are never switched. Batsim needs its
energy model (``-E``) for any SET_RESOURCE_STATE (it aborts otherwise; ``gridsched run`` refuses
the option without ``--energy``).
"""

from __future__ import annotations

import heapq
from itertools import islice
from typing import TYPE_CHECKING, Any

from .backfilling import mask_to_procset, procset_to_mask
from .options import Option
from .model import HostInfoUnknown, HostState, Job, JobState, PolicyError, PolicyInputError, as_index

if TYPE_CHECKING:
    from .policy import Policy

__all__ = ["EPS", "OPTION_DOCS", "IdleShutdown", "waiting_hosts"]

#: Time tolerance (s): Batsim sends ``now`` with 6 decimals, so its clock may be up to 5e-7 s
#: after the ``now`` a policy reads; an expiry closer than this to ``now`` counts as reached.
EPS = 1e-6

#: The base options every policy inherits (merged into each subclass's ``option_docs``).
OPTION_DOCS = {
    "idle_timeout": Option("idle-host shutdown: switch a host with sleep_pstates to its sleep pstate after "
                           "it has been idle this long, and wake sleeping hosts when waiting jobs need them "
                           "(needs --energy)", type="number >= 0 (s), or null", default="off"),
}

_SWITCHING = (HostState.SWITCHING_ON, HostState.SWITCHING_OFF)


def _bits(mask: int):
    """Set bit indices of ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _failure() -> Any:
    """:mod:`schedulers.core.failure` (imported when needed: it imports the policy module, which
    imports this one)."""
    from . import failure

    return failure


class IdleShutdown:
    """The idle-host shutdown of one policy instance (see the module docstring).

    Args:
        policy: the policy whose hosts it switches (it reads the base's bookkeeping and emits
            decisions through :meth:`Policy.set_pstate` and :meth:`Policy.call_me_later`).
        timeout: ``idle_timeout`` (s).

    Attributes:
        timeout: the idle timeout (s).
        managed: hosts with ``sleep_pstates`` (bit mask), after the first step.
        on_delay, off_delay: per host id, ``1 / speed(ON)`` and ``1 / speed(OFF)`` (s); 0 for a
            host without ``sleep_pstates``.
        sleeps, wakes: hosts switched off / on so far.
    """

    def __init__(self, policy: "Policy", timeout: float) -> None:
        self.policy = policy
        self.timeout = float(timeout)
        self.managed = 0
        self.on_delay: list[float] = []
        self.off_delay: list[float] = []
        self.sleeps = 0
        self.wakes = 0
        self._platform: Any = None               # the Platform the fields above describe
        self._classes: list[tuple[float, int]] = []  # (wake-up delay s, managed hosts with it)
        self._idle: dict[int, float] = {}       # host -> idle since (s); insertion = since order
        self._idle_mask = 0
        self._ready_at: dict[int, float] = {}   # host we are switching -> when it can be awake (s)
        self._wake_to: dict[int, int] = {}      # host put to sleep -> its computation pstate then
        self._armed: list[float] = []           # heap of CALL_ME_LATER times not yet reached
        self._waiting: dict[str, Job] = {}      # jobs seen waiting, submission order
        self._seen = 0                          # jobs of policy.jobs already looked at

    @classmethod
    def from_options(cls, policy: "Policy") -> "IdleShutdown | None":
        """The shutdown ``policy.options`` ask for, or None (option absent or null, or a policy
        class that opts out with ``idle_shutdown = False``).

        Raises:
            PolicyOptionError: ``idle_timeout`` is not a number >= 0 (one line).
        """
        if policy.options.get("idle_timeout") is None or not type(policy).idle_shutdown:
            return None
        from .policy import option_number  # policy.py imports this module

        return cls(policy, option_number(policy.name, policy.options, "idle_timeout", 0.0, low=0.0))

    # ------------------------------------------------------------------------------ platform
    def _ensure(self) -> None:
        """Read the platform's switching delays once per platform (at SIMULATION_BEGINS)."""
        p = self.policy
        if self._platform is p.platform:
            return
        hosts = p.platform.hosts
        self.managed = 0
        self.on_delay = [0.0] * len(hosts)
        self.off_delay = [0.0] * len(hosts)
        classes: dict[float, int] = {}
        for h in hosts:
            sp = h.sleep_pstates
            if sp is None:
                continue
            try:
                speeds = h.speeds
            except HostInfoUnknown as exc:
                raise HostInfoUnknown(f"policy {p.name!r}, option 'idle_timeout' needs the switching "
                                      f"times of the hosts: {exc}") from None
            # the sleep pstate may have speed 0 (Batsim accepts it; SimGrid charges it at full
            # load); the switch-off and switch-on pstates compute 1 flop each: they need a speed
            for k, need_speed in zip(sp, (False, True, True)):
                if not 0 <= k < len(speeds):
                    what = "does not exist"
                elif need_speed and not speeds[k] > 0:
                    what = "has no speed > 0 for its 1-flop switch"
                else:
                    continue
                raise PolicyInputError(f"policy {p.name!r}, option 'idle_timeout': host {h.name!r} has "
                                       f"sleep_pstates {h.properties.get('sleep_pstates')!r} but pstate {k} "
                                       f"{what} (speeds {speeds})")
            self.off_delay[h.id] = 1.0 / speeds[sp[1]]
            self.on_delay[h.id] = d = 1.0 / speeds[sp[2]]
            self.managed |= 1 << h.id
            classes[d] = classes.get(d, 0) | 1 << h.id
        if hosts and not self.managed:
            from .policy import PolicyOptionError  # policy.py imports this module

            raise PolicyOptionError(f"policy {p.name!r}, option 'idle_timeout': no host can sleep, host "
                              f"{hosts[0].name!r} (and every other) has no property sleep_pstates")
        self._classes = sorted(classes.items())
        self._platform = p.platform

    # ------------------------------------------------------------------------------ the step
    def step(self) -> None:
        """One step after the policy's ``schedule()`` (module docstring, steps 1-4)."""
        self._ensure()
        p = self.policy
        now = p.now
        hosts = p.platform.hosts
        for i in [i for i in self._ready_at if hosts[i].state not in _SWITCHING]:
            del self._ready_at[i]   # its switch is over
        avail = p.available_mask
        self._clocks(avail & self.managed, now)
        wanted = p.hosts_wanted()
        if type(wanted) is not int or wanted < 0:
            n = as_index(wanted)   # (a NumPy integer is one)
            if n is None or n < 0:
                raise _failure().hook_error(p, "hosts_wanted",
                                            f"it returned {wanted!r}, not a number of hosts (an integer >= 0)")
            wanted = n
        if wanted <= 0 and not p.running and p.no_more_static_jobs:
            return  # nothing runs, waits or will come: nothing to save
        coming = sum(1 for i in self._ready_at if hosts[i].state is HostState.SWITCHING_ON)
        supply = avail.bit_count() + coming
        if wanted > supply:
            self._wake(wanted - supply, avail, now)
        elif wanted < supply and self._idle:
            self._sleep(supply - wanted, now)
        self._arm(now)

    def _clocks(self, idle: int, now: float) -> None:
        gone = self._idle_mask & ~idle
        for i in _bits(gone):
            del self._idle[i]
        for i in _bits(idle & ~self._idle_mask):
            self._idle[i] = now
        self._idle_mask = idle

    def _wake(self, need: int, avail: int, now: float) -> None:
        p = self.policy
        hosts = p.platform.hosts
        asleep = [i for i in _bits(self.managed & ~avail & ~p._allocated.mask())  # noqa: SLF001
                  if hosts[i].state is HostState.SLEEPING]
        if not asleep:
            return
        need = min(need - self._released_by(now + min(self.on_delay[i] for i in asleep)), len(asleep))
        if need <= 0:
            return
        mask = sum(1 << i for i in asleep)
        chosen = p.hosts_to_wake(mask, need)
        if type(chosen) is not int:
            m = as_index(chosen)   # (a NumPy integer is one)
            if m is None:
                raise _failure().hook_error(p, "hosts_to_wake", f"it returned {chosen!r}, not a bit mask of hosts "
                                                                "(an int: bit i set = host i)")
            chosen = m
        if chosen < 0 or chosen & ~mask or chosen.bit_count() != need:
            shown = mask_to_procset(chosen) if chosen >= 0 else chosen
            raise _failure().hook_error(p, "hosts_to_wake", f"it chose {shown} where {need} of the sleeping hosts "
                                                            f"{mask_to_procset(mask)} were asked for")
        groups: dict[tuple[int, float], int] = {}
        for i in _bits(chosen):
            h = hosts[i]
            target = self._wake_to.pop(i, None)
            if target is None:  # asleep from the start: its lowest computation pstate
                sp = h.special_pstates
                target = next(k for k in range(len(h.speeds)) if k not in sp)
            key = (target, self.on_delay[i])
            groups[key] = groups.get(key, 0) | 1 << i
            self._ready_at[i] = now + self.on_delay[i]
        for (target, _), mask in groups.items():
            p.set_pstate(mask_to_procset(mask), target)
            self.wakes += mask.bit_count()

    def _released_by(self, t: float) -> int:
        """How many allocated hosts the running jobs release by ``t`` (s) at the latest (their
        ``start + walltime``; jobs without walltime never)."""
        ending = staying = 0
        for job in self.policy.running.values():
            if job.allocation is None:
                continue
            m = procset_to_mask(job.allocation)
            if job.has_walltime and job.start_time is not None and job.start_time + job.walltime <= t + EPS:
                ending |= m
            else:
                staying |= m
        return (ending & ~staying).bit_count()

    def _sleep(self, surplus: int, now: float) -> None:
        p = self.policy
        hosts = p.platform.hosts
        limit = now - self.timeout + EPS
        expired = []
        for i, since in self._idle.items():
            if since > limit:
                break
            expired.append(i)
        if not expired:
            return
        groups: dict[tuple[int, float], int] = {}
        for i in sorted(expired, reverse=True)[:surplus]:
            h = hosts[i]
            sp = h.sleep_pstates
            assert sp is not None, "a managed host has sleep pstates"
            key = (sp[0], self.off_delay[i])
            groups[key] = groups.get(key, 0) | 1 << i
            self._wake_to[i] = h.pstate
            self._ready_at[i] = now + self.off_delay[i] + self.on_delay[i]
            del self._idle[i]
            self._idle_mask &= ~(1 << i)
        for (sleep, _), mask in groups.items():
            p.set_pstate(mask_to_procset(mask), sleep)
            self.sleeps += mask.bit_count()

    def _arm(self, now: float) -> None:
        """CALL_ME_LATER at the next expiry (step 4)."""
        nxt = None
        for since in self._idle.values():   # expired hosts the queue keeps awake come first
            if since + self.timeout > now + EPS:
                nxt = since + self.timeout
                break
        armed = self._armed
        while armed and armed[0] <= now + EPS:
            heapq.heappop(armed)
        if nxt is None or nxt == float("inf") or (armed and armed[0] <= nxt + EPS):
            return
        heapq.heappush(armed, nxt)
        self.policy.call_me_later(nxt)

    # ------------------------------------------------------------------------------ queries
    def waking(self) -> list[tuple[float, int]]:
        """The hosts asleep or switching, each with the earliest time (s) it can be awake and
        free, as ``[(time, mask), ...]`` by increasing time (module docstring, "Reservations").
        Hosts switching on another's request (the policy's own :meth:`Policy.set_pstate`) are
        taken as asleep (``now`` + wake-up delay)."""
        self._ensure()
        p = self.policy
        down = self.managed & ~p.available_mask & ~p._allocated.mask()  # noqa: SLF001
        if not down:
            return []
        now = p.now
        hosts = p.platform.hosts
        out: dict[float, int] = {}
        for i, t in self._ready_at.items():
            if down >> i & 1 and hosts[i].state in _SWITCHING:
                t = max(t, now)
                out[t] = out.get(t, 0) | 1 << i
                down &= ~(1 << i)
        for d, m in self._classes:
            if down & m:
                out[now + d] = out.get(now + d, 0) | (down & m)
        return sorted(out.items())

    def waiting_res(self) -> int:
        """The ``res`` of the waiting jobs (state SUBMITTED among :attr:`Policy.jobs`), summed up
        to the number of hosts. Incremental: the jobs added to :attr:`Policy.jobs` since the last
        call are looked at once, jobs no longer waiting are dropped as met."""
        p = self.policy
        jobs = p.jobs
        # Policy.jobs only grows, or drops jobs that completed (forget_finished_jobs) at the end
        # of a message: the jobs added since the last call are its newest n - _seen entries
        n = p.jobs_seen if p.forget_finished_jobs else len(jobs)
        if n > self._seen:
            new = list(islice(reversed(jobs.values()), n - self._seen))
            for job in reversed(new):
                if job.state is JobState.SUBMITTED:
                    self._waiting[job.id] = job
            self._seen = n
        cap = len(p.platform.hosts)
        total = 0
        gone = []
        for jid, job in self._waiting.items():
            if job.state is not JobState.SUBMITTED:
                gone.append(jid)
                continue
            total += job.res
            if total >= cap:
                break
        for jid in gone:
            del self._waiting[jid]
        return min(total, cap)


def waiting_hosts(policy: "Policy") -> int:
    """Default of :meth:`Policy.hosts_wanted <schedulers.core.policy.Policy.hosts_wanted>`: the
    ``res`` of the jobs the base knows are waiting (submitted, neither started nor rejected),
    summed, at most the number of hosts (incremental with idle-host shutdown on, a scan of
    :attr:`Policy.jobs` otherwise)."""
    sd = policy._shutdown  # noqa: SLF001
    if sd is not None:
        return sd.waiting_res()
    total = sum(j.res for j in policy.jobs.values() if j.state is JobState.SUBMITTED)
    return min(total, len(policy.platform.hosts))
