"""Policies by name (``--policy NAME`` on the command line, campaign descriptions)."""

from __future__ import annotations

from typing import Any

from .batsim.replay import ReplayPolicy
from .buc import BUC, BUCEasy
from .conservative import Conservative
from .core.policy import Policy, PolicyOptionError
from .easy import EASY
from .ehosep import EHOSEP
from .fcfs import FCFS
from .hosep import HOSEP
from .osep import OSEP
from .green import GreenEASY, GreenHEFT
from .heft import HEFT

#: Every registered policy class, by :attr:`Policy.name`. ``replay`` answers the decisions of a
#: recorded transcript (``--policy-options '{"transcript": "path.jsonl"}'``), for protocol checks.
POLICIES: dict[str, type[Policy]] = {"fcfs": FCFS, "easy": EASY, "conservative": Conservative,
                                     "osep": OSEP, "hosep": HOSEP, "ehosep": EHOSEP,
                                     "buc": BUC, "buc-easy": BUCEasy,
                                     "heft": HEFT, "green-easy": GreenEASY, "green-heft": GreenHEFT,
                                     "replay": ReplayPolicy}


def policy_class(name: str) -> type[Policy]:
    """The class registered as ``name``.

    Raises:
        KeyError: unknown name; the message lists the known names.
    """
    try:
        return POLICIES[name]
    except KeyError:
        known = ", ".join(sorted(POLICIES))
        raise KeyError(f"unknown policy {name!r}; known policies: {known}") from None


def check_options(name: str, options: dict[str, Any] | None) -> None:
    """Check that ``options`` only holds keys that policy ``name`` declares in
    :attr:`Policy.option_docs`.

    Raises:
        KeyError: unknown policy. PolicyOptionError: an unknown option key (or options that are
        not a mapping); the message lists the policy's options.
    """
    cls = policy_class(name)
    if options is None:
        return
    if not isinstance(options, dict):
        raise PolicyOptionError(f"policy {name!r}: options must be a JSON object / TOML table, "
                                f"got {type(options).__name__}")
    unknown = sorted(set(options) - set(cls.option_docs))
    if unknown:
        known = ", ".join(sorted(cls.option_docs)) or "none"
        raise PolicyOptionError(f"policy {name!r} has no option {', '.join(map(repr, unknown))}; "
                                f"its options: {known}")


def get_policy(name: str, options: dict[str, Any] | None = None) -> Policy:
    """A new instance of the policy registered as ``name``.

    Args:
        name: registered name (see :data:`POLICIES`).
        options: policy options (``--policy-options`` JSON), passed to the constructor; every key
            must be one of the policy's :attr:`~Policy.option_docs`.

    Raises:
        KeyError: unknown name; the message lists the known names.
        PolicyOptionError: an option the policy does not read, or a bad value (the policy's
            constructor checks values).
    """
    check_options(name, options)
    return policy_class(name)(options)
