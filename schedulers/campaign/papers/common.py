"""Pieces the papers' report sections share: a group's mean and interval, claims tables.

A claim is checked on the campaign's summary (:func:`..collect.summarize`): :func:`cell` reads one
group's mean and 95 % interval, and a :class:`Claim` row says what the paper claims (its words,
its line), what we measured (numbers as :mod:`..fmt` prints them) and the verdict:

* ``reproduced``: our numbers satisfy the claim as stated;
* ``not reproduced``: they contradict it;
* ``not testable``: the claim's group was not run (or has no value), with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from .. import fmt
from ..collect import scalar

__all__ = ["Cell", "cell", "Claim", "claims_table", "open_choices", "table", "verdict"]


@dataclass(frozen=True)
class Cell:
    """One group's mean and 95 % interval of a metric (None where undefined)."""

    mean: float | None
    low: float | None
    high: float | None
    n: int

    def text(self) -> str:
        """``"mean ± half-width"`` (:func:`..fmt.mean_ci`)."""
        return fmt.mean_ci(self.mean, self.low, self.high)

    @property
    def ok(self) -> bool:
        return self.mean is not None


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    try:
        return a == b or float(a) == float(b)
    except (TypeError, ValueError):
        return False


def cell(summary: pd.DataFrame, metric: str, **where: Any) -> Cell:
    """The group of ``summary`` whose params are ``where`` (one group, or the first of several):
    its ``metric`` mean, interval and number of done runs; an empty cell when no group matches or
    the metric is absent."""
    if f"{metric}_mean" not in summary.columns:
        return Cell(None, None, None, 0)
    for j in range(len(summary)):
        if all(k in summary.columns and _same(scalar(summary[k].iat[j]), v) for k, v in where.items()):
            row = summary.iloc[j]
            mean, low, high = (scalar(row[f"{metric}_{s}"]) for s in ("mean", "ci95_low", "ci95_high"))
            return Cell(mean, low, high, int(row["n"]))
    return Cell(None, None, None, 0)


@dataclass(frozen=True)
class Claim:
    """A row of a claims table: the paper's claim and source, ours, the verdict and why."""

    claim: str
    source: str
    ours: str
    verdict: str
    why: str = ""


def verdict(holds: bool | None) -> str:
    """``reproduced`` / ``not reproduced`` / ``not testable`` (None)."""
    return "not testable" if holds is None else ("reproduced" if holds else "not reproduced")


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table (cells on one line, ``|`` escaped)."""
    def c(v: str) -> str:
        return " ".join(str(v).split()).replace("|", "\\|")
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + \
           ["| " + " | ".join(c(v) for v in r) + " |" for r in rows] + [""]


def seeds_run(runs: pd.DataFrame) -> str:
    """How many seeds the campaign ran, in words (``"1,000 seeds"``, ``"1 seed"``): the distinct
    values of the runs table's ``seed`` column; ``"the seeds run"`` when there is none."""
    if "seed" not in runs.columns:
        return "the seeds run"
    n = len({scalar(v) for v in runs["seed"]} - {None})
    return f"{n:,} seed" + ("" if n == 1 else "s")


def open_choices(rows: list[tuple[str, str, str]], sensitivity: str) -> list[str]:
    """The section "what the paper leaves open": a table of ``(what, chosen here, note)`` rows and
    a closing sentence on where the sensitivity to them is shown."""
    return ["### What the paper leaves open, and the values chosen", ""] + \
        table(["what", "chosen here", "note / sensitivity"], [list(r) for r in rows]) + [sensitivity, ""]


def claims_table(claims: list[Claim]) -> list[str]:
    """The claims as a Markdown table: claim, source, ours, verdict (and why)."""
    return table(["the paper's claim", "source", "ours", "verdict", "why"],
                 [[c.claim, c.source, c.ours, f"**{c.verdict}**", c.why] for c in claims])
