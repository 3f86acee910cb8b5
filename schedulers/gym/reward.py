"""Rewards of the Gymnasium environment: a weighted sum of costs accrued between two decisions.

Each component is a cost counted over the simulated time a step covers (from the decision before
to this one), so that an episode's return is minus the weighted total of the whole run:

==================  =======================================================  ==========================
name                cost accrued during the step                             episode total
==================  =======================================================  ==========================
``waiting_time``    job-hours spent waiting (every waiting job, 1 h per h)   sum of ``waiting_time`` of
                                                                             ``out_jobs.csv`` / 3600
``bounded_slowdown``  the bounded slowdowns of the jobs that ended           sum of the jobs' bounded
                    (``max(1, turnaround / max(run, tau))``, tau = 10 s)     slowdowns
``energy``          kWh consumed by the compute hosts (needs ``energy``)     Batsim's
                                                                             ``consumed_joules`` / 3.6e6
==================  =======================================================  ==========================

The reward of a step is ``-sum(weight[c] * cost[c])``. ``reward="waiting_time"`` is
``{"waiting_time": 1.0}``; a dict mixes them, e.g. ``{"waiting_time": 1.0, "energy": 0.5}``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Mapping

import numpy as np

__all__ = ["COMPONENTS", "reward_weights", "Costs"]

#: The reward components and their units.
COMPONENTS = {"waiting_time": "job-hours", "bounded_slowdown": "1", "energy": "kWh"}


def reward_weights(reward: str | Mapping[str, float]) -> dict[str, float]:
    """The weights of ``reward`` (a component name, or a mapping name -> weight).

    Raises:
        ValueError: an unknown component, a weight that is not a finite number >= 0, or weights
            that are all 0 (one line).
    """
    if isinstance(reward, str):
        reward = {reward: 1.0}
    if not isinstance(reward, Mapping) or not reward:
        raise ValueError(f"reward must be one of {', '.join(COMPONENTS)} or a mapping of them to weights, "
                         f"got {reward!r}")
    out: dict[str, float] = {}
    for k, w in reward.items():
        if k not in COMPONENTS:
            raise ValueError(f"unknown reward component {k!r}; components: {', '.join(COMPONENTS)}")
        if isinstance(w, (bool, np.bool_)) or not isinstance(w, numbers.Real) or not math.isfinite(w):
            raise ValueError(f"reward weight of {k!r} must be a finite number, got {w!r}")
        if w < 0:   # (the reward is minus the weighted costs: a negative weight would reward the cost)
            raise ValueError(f"reward weight of {k!r} must be >= 0 (the reward is minus the weighted costs: a "
                             f"negative weight would reward the {k.replace('_', ' ')}), got {w!r}")
        out[k] = float(w)
    if not any(out.values()):
        raise ValueError(f"reward weights {reward!r} are all 0: every reward would be 0")
    return out


class Costs:
    """The running totals of every component, read from a paused run; :meth:`step_reward` gives
    the reward of the time since the last reading."""

    def __init__(self, weights: dict[str, float]) -> None:
        self.weights = weights
        self._last = dict.fromkeys(COMPONENTS, 0.0)

    @staticmethod
    def totals(policy: Any, engine: Any) -> dict[str, float]:
        """Each component's total so far (in its unit) at the policy's time."""
        if policy is None:
            return dict.fromkeys(COMPONENTS, 0.0)
        return {"waiting_time": policy.waiting_total(policy.now) / 3600.0,
                "bounded_slowdown": policy.bsld_done,
                "energy": engine.energy_so_far() / 3.6e6 if engine.energy else 0.0}

    def step_reward(self, totals: dict[str, float]) -> tuple[float, dict[str, float]]:
        """The reward since the last call, and each component's cost over that time.

        Raises:
            ValueError: the weighted costs overflow a double (weights near 1e308): a reward of
                -inf (or NaN) would teach an agent nothing."""
        costs = {k: totals[k] - self._last[k] for k in COMPONENTS}
        self._last = totals
        reward = -sum(w * costs[k] for k, w in self.weights.items())
        if not math.isfinite(reward):
            raise ValueError(f"the reward of this step is {reward} (weights {self.weights} times the step's costs "
                             f"{costs}): the weighted costs overflow a double; use smaller weights")
        return reward, costs
