"""The policy the engine runs for a Gymnasium environment: its decisions are the agent's actions.

:class:`AgentPolicy` is an ordinary :class:`~schedulers.core.policy.Policy` (same bookkeeping, same
decisions as any policy of the project), except that :meth:`AgentPolicy.schedule` asks an agent
what to do: it pauses the engine (:class:`~schedulers.gym.handoff.EngineThread`) whenever an action
other than "wait" is possible, and applies the action it is given, until the agent waits.

Actions (integers, see :class:`ActionLayout`): ``k < window`` starts the ``k``-th waiting job (in
submission order) now on the lowest-numbered available hosts, as :class:`schedulers.fcfs.FCFS`
places jobs; ``window`` waits for the next event; ``window + 1 + h`` (with power actions) switches
host ``h`` off when it is idle, on when it sleeps. A job asking for more hosts than the platform
has is rejected at its submission, as FCFS does (it could never start).

So that waiting never deadlocks the engine, a wait while nothing else can happen (no job running,
no host switching, every job submitted, no call pending, jobs still waiting: the agent kept them
waiting although it could start one) asks Batsim for a call ``stall_wait`` seconds later
(CALL_ME_LATER), where the agent decides again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..core.backfilling import lowest_bits
from ..core.model import HostState, Job
from ..core.policy import Policy

__all__ = ["ActionLayout", "AgentPolicy", "HOST_CODES"]

#: Host state codes of the observation: 0 free (awake, idle, not allocated), 1 busy (allocated to
#: a running job), 2 asleep, 3 switching off, 4 switching on, 5 unavailable (external event).
HOST_CODES = {HostState.IDLE: 0, HostState.COMPUTING: 1, HostState.SLEEPING: 2, HostState.SWITCHING_OFF: 3,
              HostState.SWITCHING_ON: 4, HostState.UNAVAILABLE: 5}


@dataclass(frozen=True)
class ActionLayout:
    """How action integers are laid out.

    Attributes:
        window: queue slots (actions ``0 .. window-1`` start the job in that slot).
        hosts: compute hosts (``window + 1 + h`` toggles host ``h`` when ``power``).
        power: whether the host power actions exist.
    """

    window: int
    hosts: int
    power: bool

    @property
    def wait(self) -> int:
        """The "wait for the next event" action."""
        return self.window

    @property
    def size(self) -> int:
        """Number of actions."""
        return self.window + 1 + (self.hosts if self.power else 0)


class AgentPolicy(Policy):
    """A policy that asks an agent (see the module docstring).

    Args:
        layout: the action layout.
        ask: called with no argument when a decision is wanted; returns the action (int). The
            environment's ``ask`` pauses the engine until ``step(action)``.
        stall_wait: seconds until the call asked when a wait would end the simulation with jobs
            waiting (> 0).

    Attributes:
        queue: waiting jobs in submission order.
        invalid: the last action asked was not valid (it was played as a wait).
        waited_s: total waiting time (s) of the started jobs so far (start - subtime).
        queued_subtimes: sum of the submission times (s) of the jobs waiting now.
        bsld_done: sum of the bounded slowdowns of the ended jobs (see :meth:`bounded_slowdown`).
        bsld_tau: the bounded slowdown's threshold (s).
    """

    name = "gym-agent"
    forget_finished_jobs = True

    def __init__(self, layout: ActionLayout, ask: Callable[[], int], *, stall_wait: float = 60.0,
                 bsld_tau: float = 10.0) -> None:
        super().__init__()
        self.layout = layout
        self._ask = ask
        self.stall_wait = float(stall_wait)
        self.bsld_tau = float(bsld_tau)
        self.queue: list[Job] = []
        self.invalid = False
        self.waited_s = 0.0
        self.queued_subtimes = 0.0
        self.bsld_done = 0.0
        self._call_at: float | None = None
        #: the valid actions when the agent was last asked (:meth:`action_mask` then)
        self.mask: np.ndarray | None = None
        self._on_pstate_of: dict[int, int] = {}

    # ------------------------------------------------------------------------------ events
    def on_simulation_begins(self, platform: Any) -> None:
        for h in platform.hosts:   # the pstate a host is switched on to: its first, if computation
            sp = h.sleep_pstates
            if sp is not None:
                comp = [p for p in range(len(h.speeds)) if p not in sp] if h.speeds_known else []
                self._on_pstate_of[h.id] = h.pstate if h.pstate not in sp else (comp[0] if comp else 0)

    def on_job_submitted(self, job: Job) -> None:
        if self.platform.hosts and job.res > len(self.platform.hosts):
            self.reject(job)
            return
        self.queue.append(job)
        self.queued_subtimes += job.subtime

    def on_job_completed(self, job: Job) -> None:
        if job.start_time is not None and job.finish_time is not None:
            self.bsld_done += self.bounded_slowdown(job)

    def on_requested_call(self) -> None:
        # the only call the policy asks for (one at a time); its time as read back may print a
        # microsecond apart from the one asked (Batsim's 6 decimals), so it is not compared
        self._call_at = None

    def bounded_slowdown(self, job: Job) -> float:
        """``max(1, (finish - subtime) / max(finish - start, tau))`` of an ended job (Feitelson et
        al., "Theory and practice in parallel job scheduling", JSSPP 1997; tau = :attr:`bsld_tau`)."""
        start, finish = job.start_time, job.finish_time
        assert start is not None and finish is not None, "an ended job has its start and finish times"
        run = finish - start
        return max(1.0, (finish - job.subtime) / max(run, self.bsld_tau))

    # ---------------------------------------------------------------------------- decisions
    def waiting_total(self, now: float) -> float:
        """Total waiting time (s) of every job submitted so far, up to ``now``: the started jobs'
        ``start - subtime`` and the waiting jobs' ``now - subtime``."""
        return self.waited_s + len(self.queue) * now - self.queued_subtimes

    def action_mask(self) -> np.ndarray:
        """Which actions are valid now (bool array of :attr:`ActionLayout.size`); wait always is."""
        lay = self.layout
        mask = np.zeros(lay.size, dtype=bool)
        free = self.nb_available
        q = self.queue
        for k in range(min(lay.window, len(q))):
            mask[k] = q[k].res <= free
        mask[lay.wait] = True
        if lay.power:
            avail = self.available_mask
            for h in self.platform.hosts:
                if h.state == HostState.SLEEPING:
                    mask[lay.wait + 1 + h.id] = True
                elif h.sleep_pstates is not None and avail >> h.id & 1:
                    mask[lay.wait + 1 + h.id] = True
        return mask

    def schedule(self) -> None:
        lay = self.layout
        while True:
            mask = self.mask = self.action_mask()
            if mask.sum() == 1:           # only waiting is possible: no decision to ask for
                break
            action = self._ask()
            # (a bool is no action: numpy would read mask[True] as a boolean index)
            self.invalid = not (isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_))
                                and 0 <= action < lay.size and mask[action])
            if self.invalid or action == lay.wait:
                break
            if action < lay.window:
                self._start_slot(action)
            else:
                self._toggle(int(action) - lay.wait - 1)
        if self.queue and self._stalled():
            self._call_at = self.now + self.stall_wait
            self.call_me_later(self._call_at)

    def _start_slot(self, slot: int) -> None:
        job = self.queue.pop(slot)
        self.queued_subtimes -= job.subtime
        self.waited_s += self.now - job.subtime
        self.execute_mask(job, lowest_bits(self.available_mask, job.res))

    def _toggle(self, hid: int) -> None:
        h = self.platform.hosts[hid]
        if h.state == HostState.SLEEPING:
            self.set_pstate(hid, self._on_pstate_of.get(hid, 0))
        else:
            sp = h.sleep_pstates
            assert sp is not None, "the agent switches only hosts with sleep pstates"
            self.set_pstate(hid, sp[0])

    def _stalled(self) -> bool:
        """Nothing but the agent can move the simulation on (see the module docstring)."""
        if self.running or self._call_at is not None or not self.no_more_static_jobs:
            return False
        return not any(h.state in (HostState.SWITCHING_ON, HostState.SWITCHING_OFF) for h in self.platform.hosts)
