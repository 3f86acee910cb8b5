"""Observation space of the Gymnasium environment, and the observation of a paused run.

A ``gymnasium.spaces.Dict`` (fixed shapes, so that learning libraries can build their networks):

=================  ===============================================  ==========================================
key                space                                            content
=================  ===============================================  ==========================================
``queue``          ``Box(-1, inf, (window, 4), float32)``           one row per queue slot (submission order):
                                                                    requested hosts, walltime (s, -1: none),
                                                                    waiting time so far (s), user index (order
                                                                    of first appearance in the episode, -1:
                                                                    none); a row of zeros is an empty slot
``queue_length``   ``Box(0, inf, (1,), float32)``                   jobs waiting, the window's and the others
``hosts``          ``MultiDiscrete([6] * hosts)``                   each host's state code
                                                                    (:data:`~schedulers.gym.agent.HOST_CODES`:
                                                                    0 free, 1 busy, 2 asleep, 3 switching off,
                                                                    4 switching on, 5 unavailable)
``pstates``        ``MultiDiscrete([pstates of host h])``           each host's current pstate
``time``           ``Box(0, inf, (1,), float32)``                   simulated time (s)
=================  ===============================================  ==========================================
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from .agent import HOST_CODES, AgentPolicy

__all__ = ["observation_space", "observe", "QUEUE_COLUMNS"]

#: The columns of the ``queue`` rows.
QUEUE_COLUMNS = ("requested_hosts", "walltime_s", "waiting_s", "user")


def observation_space(window: int, pstates: list[int]) -> spaces.Dict:
    """The observation space for a queue window of ``window`` slots and hosts with ``pstates[h]``
    pstates each."""
    inf = np.float32(np.inf)
    return spaces.Dict({
        "queue": spaces.Box(np.float32(-1.0), inf, (window, len(QUEUE_COLUMNS)), np.float32),
        "queue_length": spaces.Box(np.float32(0.0), inf, (1,), np.float32),
        "hosts": spaces.MultiDiscrete(np.full(len(pstates), len(set(HOST_CODES.values())), dtype=np.int64)),
        "pstates": spaces.MultiDiscrete(np.asarray(pstates, dtype=np.int64)),
        "time": spaces.Box(np.float32(0.0), inf, (1,), np.float32),
    })


def observe(policy: AgentPolicy | None, window: int, nb_hosts: int, users: dict[str, int],
            now: float = 0.0) -> dict[str, Any]:
    """The observation of ``policy``'s view at its time (see the module docstring).

    Args:
        policy: the running policy (None before the simulation begins: an empty platform view).
        users: user name -> index, extended with the users met (first appearance order).
        now: the time when ``policy`` is None.
    """
    queue = np.zeros((window, len(QUEUE_COLUMNS)), dtype=np.float32)
    hosts = np.zeros(nb_hosts, dtype=np.int64)
    pstates = np.zeros(nb_hosts, dtype=np.int64)
    if policy is None:
        return {"queue": queue, "queue_length": np.zeros(1, np.float32), "hosts": hosts, "pstates": pstates,
                "time": np.array([now], np.float32)}
    now = policy.now
    for k, job in enumerate(policy.queue[:window]):
        u = job.user
        if u is not None and u not in users:
            users[u] = len(users)
        queue[k] = (job.res, job.walltime if job.has_walltime else -1.0, max(0.0, now - job.subtime),
                    -1.0 if u is None else users[u])
    avail = policy.available_mask
    for h in policy.platform.hosts[:nb_hosts]:
        code = HOST_CODES.get(h.state, 1)
        if code == 0 and not avail >> h.id & 1:
            code = 1   # idle in Batsim's sense but allocated to a job starting now
        hosts[h.id] = code
        pstates[h.id] = h.pstate
    return {"queue": queue, "queue_length": np.array([len(policy.queue)], np.float32), "hosts": hosts,
            "pstates": pstates, "time": np.array([now], np.float32)}
