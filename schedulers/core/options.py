"""The description of one policy option: what :attr:`Policy.option_docs
<schedulers.core.policy.Policy.option_docs>` maps each option name to.

A value of ``option_docs`` is a plain string (its one-line description) or an :class:`Option`,
a string that also says which JSON values the option takes and what it is when absent, so that
``gridsched policies NAME`` and the documentation can show both::

    option_docs = {
        "delta": Option("overlap rate Δ in % of the job's walltime", type="number in [0, 100)",
                        default="10"),
    }

The policy's constructor still checks the values it is given (:func:`~schedulers.core.policy.
option_number`, :func:`~schedulers.core.policy.option_flag`, :func:`~schedulers.core.policy.
option_choice`): an :class:`Option` documents, it does not check.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["Option", "describe_options", "option_default", "option_type"]


class Option(str):
    """An option's one-line description (the string itself), with the values it takes and its
    default, as texts for people.

    Args:
        doc: what the option does, with its unit (e.g. ``"seconds between decision rounds"``).
        type: the JSON values it takes, e.g. ``"number >= 0 (s)"``, ``"true or false"``,
            ``"'ema' or 'linear'"``, ``"object: user -> percent"``.
        default: its value when absent, as a text: ``"60"``, ``"false"``, ``"'omega'"``, or words
            (``"off"``, ``"the number of hosts"``).

    ``str(option)`` is ``doc``: code that reads ``option_docs`` values as strings keeps working.
    """

    __slots__ = ("type", "default")

    type: str
    default: str

    def __new__(cls, doc: str, type: str = "", default: str = "") -> "Option":  # noqa: A002
        self = super().__new__(cls, doc)
        self.type = type
        self.default = default
        return self

    def __init__(self, doc: str, type: str = "", default: str = "") -> None:  # noqa: A002
        # (str is immutable: __new__ did the work; this gives the class its signature)
        super().__init__()

    def __reduce__(self) -> tuple:
        return (Option, (str(self), self.type, self.default))

    def __repr__(self) -> str:
        return f"Option({str(self)!r}, type={self.type!r}, default={self.default!r})"


_DEFAULT = re.compile(r"default(?:s to|:| is)?\s+([^;,)]+)", re.IGNORECASE)


def option_type(doc: str) -> str:
    """The values ``doc`` (an ``option_docs`` value) takes: its :attr:`Option.type`, or ``""``
    for a plain string."""
    return doc.type if isinstance(doc, Option) else ""


def option_default(doc: str) -> str:
    """The default ``doc`` (an ``option_docs`` value) states: its :attr:`Option.default`, or for a
    plain string the words after ``default`` in it (``"... (s; default 60)"`` gives ``"60"``),
    or ``""`` when it states none."""
    if isinstance(doc, Option):
        return doc.default
    m = _DEFAULT.search(doc)
    return m.group(1).strip() if m else ""


def describe_options(option_docs: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """``[(name, type, default, description), ...]`` of ``option_docs``, in its order."""
    return [(name, option_type(doc), option_default(doc), str(doc)) for name, doc in option_docs.items()]
