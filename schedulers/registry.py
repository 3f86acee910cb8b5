"""Policies by name (``--policy NAME`` on the command line, campaign descriptions)."""

from __future__ import annotations

from typing import Any

from .batsim.replay import ReplayPolicy
from .core.policy import Policy
from .easy import EASY
from .fcfs import FCFS

#: Every registered policy class, by :attr:`Policy.name`. ``replay`` answers the decisions of a
#: recorded transcript (``--policy-options '{"transcript": "path.jsonl"}'``), for protocol checks.
POLICIES: dict[str, type[Policy]] = {"fcfs": FCFS, "easy": EASY, "replay": ReplayPolicy}


def get_policy(name: str, options: dict[str, Any] | None = None) -> Policy:
    """A new instance of the policy registered as ``name``.

    Args:
        name: registered name (see :data:`POLICIES`).
        options: policy options (``--policy-options`` JSON), passed to the constructor.

    Raises:
        KeyError: unknown name; the message lists the known names.
    """
    try:
        cls = POLICIES[name]
    except KeyError:
        known = ", ".join(sorted(POLICIES))
        raise KeyError(f"unknown policy {name!r}; known policies: {known}") from None
    return cls(options)
