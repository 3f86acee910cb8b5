"""FCFS that also kills jobs and changes pstates at random, for ``compare_with_batsim.py --suite kills``.

At each message, before FCFS starts what it can, the policy draws (from its own seeded
generator, so that the embedded engine and real Batsim, sending the same messages, get the same
decisions): with probability ``kill_rate`` a KILL_JOB of one running job (sometimes named twice,
sometimes in two KILL_JOB decisions of one reply, sometimes with a job that ended in this very
message: real Batsim aborts on that one, and so must the engine); with the option ``pstates``
(for runs with ``-E``) and probability ``pstate_rate``, a SET_RESOURCE_STATE of an idle host to
another computation pstate.

Used as ``gridsched run --policy scripts/kill_policy.py:KillingFCFS --policy-options '{"seed": 3}'``.
"""

from __future__ import annotations

import random
from typing import Any

from schedulers.core.events import JobCompleted, KillJobs
from schedulers.core.model import HostState
from schedulers.fcfs import FCFS


class KillingFCFS(FCFS):
    """FCFS with random kills and pstate changes (module docstring)."""

    name = "killing-fcfs"
    option_docs = {"seed": "random seed of the kills and pstate changes",
                   "kill_rate": "probability of a kill at each message (default 0.3)",
                   "pstate_rate": "probability of a pstate change at each message (default 0.2)",
                   "pstates": "change pstates (runs with -E only; default false)"}

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        options = dict(options or {})
        self.rng = random.Random(options.pop("seed", 0))
        self.kill_rate = float(options.pop("kill_rate", 0.3))
        self.pstate_rate = float(options.pop("pstate_rate", 0.2))
        self.pstates = bool(options.pop("pstates", False))
        self.ended_now: list[str] = []
        super().__init__(options)

    def decide(self, now, events):
        self.ended_now = [e.job_id for e in events if isinstance(e, JobCompleted)]
        return super().decide(now, events)

    def schedule(self) -> None:
        rng = self.rng
        running = sorted(self.running)
        if running and rng.random() < self.kill_rate:
            victim = rng.choice(running)
            r = rng.random()
            if r < 0.1:
                self.emit(KillJobs(job_ids=[victim, victim]))
            elif r < 0.2:
                self.emit(KillJobs(job_ids=[victim]))
                self.emit(KillJobs(job_ids=[victim]))
            elif r < 0.25 and self.ended_now:
                self.emit(KillJobs(job_ids=[victim, rng.choice(self.ended_now)]))
            else:
                self.emit(KillJobs(job_ids=[victim]))
        if self.pstates and rng.random() < self.pstate_rate:
            hosts = self.platform.hosts
            idle = [h for h in hosts if h.state == HostState.IDLE and h.id in self.available]
            if idle:
                h = rng.choice(idle)
                pstates = [p for p in range(len(h.speeds)) if p not in h.special_pstates and h.speeds[p] > 1]
                if len(pstates) > 1:
                    self.set_pstate([h.id], rng.choice([p for p in pstates if p != h.pstate] or pstates))
        super().schedule()
