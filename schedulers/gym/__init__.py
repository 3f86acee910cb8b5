"""A Gymnasium environment over the embedded engine (``gridsched/Batsim-v0``).

Importing this package registers the environment with Gymnasium::

    import gymnasium
    import schedulers.gym  # noqa: F401  (registers gridsched/Batsim-v0)
    env = gymnasium.make("gridsched/Batsim-v0", platform="platforms/g5k_nantes_econome.xml",
                         workload="workload.json")

(or ``gymnasium.make("schedulers.gym:gridsched/Batsim-v0", ...)``, which imports it first). See
:class:`~schedulers.gym.env.BatsimEnv` and ``docs/guides/gym.md``. Needs ``gymnasium`` (the
``gym`` extra: ``pip install 'gridsched[gym]'``).
"""

from __future__ import annotations

import gymnasium

from .env import BatsimEnv

__all__ = ["BatsimEnv", "ENV_ID"]

#: The id under which :class:`BatsimEnv` is registered.
ENV_ID = "gridsched/Batsim-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="schedulers.gym.env:BatsimEnv")
