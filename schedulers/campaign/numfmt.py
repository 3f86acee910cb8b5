"""Numbers as a report prints them: energies with SI prefixes, percentages, intervals, seed ranges.

Every function returns text for Markdown tables: thousands separators, a fixed number of
significant digits, a unit, and no ``nan`` (a missing value is an en dash).
"""

from __future__ import annotations

import math
from typing import Iterable, TypeGuard

__all__ = ["MISSING", "energy", "pct", "signed_pct", "interval", "seed_ranges", "count", "seconds"]

#: Text of a missing value.
MISSING = "–"


def _finite(x: float | None) -> TypeGuard[float]:
    return x is not None and math.isfinite(x)


def energy(joules: float | None, digits: int = 4) -> str:
    """``joules`` with an SI prefix and ``digits`` significant digits: ``"1.234 MJ"``, ``"16.2 kJ"``."""
    if not _finite(joules):
        return MISSING
    x = float(joules)
    for scale, unit in ((1e12, "TJ"), (1e9, "GJ"), (1e6, "MJ"), (1e3, "kJ")):
        if abs(x) >= scale:
            return f"{_sig(x / scale, digits)} {unit}"
    return f"{_sig(x, digits)} J"


def _sig(x: float, digits: int) -> str:
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(x)))))
    return f"{x:,.{decimals}f}"


def pct(x: float | None, decimals: int | None = None) -> str:
    """A percentage: 2 decimals below 10, 1 below 100, none above (or ``decimals``): ``"0.12 %"``."""
    if not _finite(x):
        return MISSING
    if decimals is None:
        decimals = 2 if abs(x) < 10 else 1 if abs(x) < 100 else 0
    text = f"{x:,.{decimals}f}"
    if float(text.replace(",", "")) == 0:
        text = f"{0:.{decimals}f}"   # no "-0.00"
    return f"{text.replace('-', '−')} %"


def signed_pct(x: float | None, decimals: int | None = None) -> str:
    """:func:`pct` with a sign (``"+0.12 %"``, ``"−1.5 %"``, ``"0.00 %"``)."""
    text = pct(x, decimals)
    if text == MISSING or text.startswith("−") or float(text.split()[0].replace(",", "")) == 0:
        return text
    return "+" + text


def interval(mean: float | None, low: float | None, high: float | None, fmt=pct) -> str:
    """``mean [low, high]`` with ``fmt``; a zero-width interval as ``mean (same in every seed)``,
    a missing one (one seed) as the mean alone."""
    if not _finite(mean):
        return MISSING
    if not _finite(low) or not _finite(high):
        return fmt(mean)
    if fmt(low) == fmt(high):
        return f"{fmt(mean)} (every seed)"
    return f"{fmt(mean)} [{fmt(low)}, {fmt(high)}]"


def seed_ranges(seeds: Iterable[int]) -> str:
    """``[0, 1, 2, 4]`` as ``"0-2, 4"``."""
    s = sorted(set(int(x) for x in seeds))
    if not s:
        return MISSING
    parts, start, prev = [], s[0], s[0]
    for x in s[1:] + [None]:
        if x is not None and x == prev + 1:
            prev = x
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if x is not None:
            start = prev = x
    return ", ".join(parts)


def count(n: float | None) -> str:
    """An integer count with thousands separators."""
    return MISSING if not _finite(n) else f"{int(round(n)):,}"


def seconds(s: float | None) -> str:
    """A duration: ``"37.0 s"``, ``"4,203 s"``, with one decimal below 1,000 s."""
    if not _finite(s):
        return MISSING
    return f"{s:,.1f} s" if abs(s) < 1000 else f"{s:,.0f} s"
