"""Numbers as reports print them: significant digits, thousands separators, intervals, seed lists.

Every report and plot of a campaign (:mod:`.report`, :mod:`.plot`, the papers' sections in
:mod:`.papers`) formats its numbers here, so that one table reads like the next:

* :func:`number`: 4 significant digits, thousands separators, no exponent between 0.001 and
  10^15 (``12345.678`` -> ``"12,346"``, ``37.2019`` -> ``"37.20"``, ``0.0123456`` ->
  ``"0.01235"``);
* :func:`mean_ci`: a mean and the half-width of its interval, the mean given to the half-width's
  last digit (``37.2019, 37.058, 37.346`` -> ``"37.20 ± 0.14"``; from 10^15 in the exponent form,
  ``"3.49e+18 ± 5.3e+17"``); a zero-width interval (every run gave the same value, up to the
  rounding of the sums) reads ``"37.20 ± 0"``;
* :func:`ranges`: integers as ranges (``[0, 1, 2, 5, 7, 8]`` -> ``"0-2, 5, 7-8"``).
"""

from __future__ import annotations

import math
from typing import Any, Iterable

__all__ = ["number", "signed", "percent", "half_width_decimals", "mean_ci", "ranges", "ZERO_WIDTH"]

#: A half-width below this fraction of the mean's magnitude is the rounding of a sum of equal
#: values (e.g. ``9.09e-13`` around ``37.2``): the interval has zero width.
ZERO_WIDTH = 1e-9
#: From this magnitude on, numbers are printed in the exponent form: a double's digits beyond the
#: 16th are not the value's, and whole numbers would print them (``3,492,898,159,799,591,936``).
EXPONENT_FROM = 1e15


def _decimals(v: float, sig: int) -> int:
    """Decimal places that show ``sig`` significant digits of ``v != 0`` (at least 0)."""
    return max(0, sig - 1 - math.floor(math.log10(abs(v))))


def number(v: Any, sig: int = 4, *, none: str = "—", trim: bool = False) -> str:
    """``v`` with ``sig`` significant digits and thousands separators.

    Values of ``10**(sig - 1)`` and more are rounded to integers (``12345.678`` -> ``"12,346"``);
    smaller ones keep ``sig`` significant digits (``37.2019`` -> ``"37.20"``, ``0.5`` ->
    ``"0.5000"``); below 0.001 or from 10^15 the exponent form (``"1.235e-05"``). Integers
    (``int``) are printed whole (``1000`` -> ``"1,000"``).

    Args:
        v: a number, or None / NaN (printed as ``none``).
        sig: significant digits (>= 1).
        trim: drop trailing zeros of the decimals (``2.500`` -> ``2.5``): for numbers quoted as
            a paper prints them.
    """
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return none
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    v = float(v)
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= EXPONENT_FROM or a < 1e-3:
        return f"{v:.{sig - 1}e}"
    d = _decimals(v, sig)
    r = round(v, d)
    if abs(r) >= 10 ** (sig - 1):   # (999.96 rounds to 1,000)
        return f"{round(v):,}"
    text = f"{v:,.{min(d, _decimals(r, sig)) if r else d}f}"
    return text.rstrip("0").rstrip(".") if trim and "." in text else text


def signed(v: Any, sig: int = 3, *, none: str = "—", trim: bool = True) -> str:
    """:func:`number` with its sign always shown (``+2.5``, ``-1,234``, ``0``)."""
    text = number(v, sig, none=none, trim=trim)
    return text if text in (none, "0") or text.startswith("-") else "+" + text


def percent(v: Any, sig: int = 3, *, none: str = "—") -> str:
    """``v`` (already in percent) with a ``%`` sign: ``93.57 -> "93.6 %"``."""
    text = number(v, sig, none=none)
    return text if text == none else f"{text} %"


def half_width_decimals(half: float) -> int:
    """Decimal places of a half-width shown with 2 significant digits (0 for half-widths >= 10)."""
    return _decimals(half, 2) if half > 0 else 0


def mean_ci(mean: Any, low: Any = None, high: Any = None, *, none: str = "—") -> str:
    """``"mean ± half-width"`` of a 95 % interval ``[low, high]`` around ``mean``.

    The half-width keeps 2 significant digits below 10 (whole numbers from 10 on, with thousands
    separators) and the mean is given to the same decimal place: ``(37.2019, 37.058, 37.346)`` ->
    ``"37.20 ± 0.14"``; ``(433993.1, 421000, 446986)`` -> ``"433,993 ± 12,993"``; from 10^15 the
    exponent form, the half-width's 2 significant digits and the mean to the same place
    (``"3.49e+18 ± 5.3e+17"``), as :func:`number` prints such values. A half-width
    below :data:`ZERO_WIDTH` of the mean (or exactly 0) is printed ``± 0``; without an interval
    (``low``/``high`` None or NaN: one run) the mean alone with ``(n = 1)``.

    Args:
        mean, low, high: numbers (None / NaN: missing).
    """
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return none
    mean = float(mean)
    if low is None or high is None or any(isinstance(x, float) and math.isnan(x) for x in (low, high)):
        return f"{number(mean)} (n = 1)"
    half = (float(high) - float(low)) / 2
    if half <= ZERO_WIDTH * max(abs(mean), 1e-300):
        return f"{number(mean)} ± 0"
    if max(abs(mean), half) >= EXPONENT_FROM:   # (the half-width's 2 digits, the mean to the same place)
        place = math.floor(math.log10(half)) - 1
        digits = max(math.floor(math.log10(abs(mean))) - place, 0) if mean else 0
        return f"{mean:.{digits}e} ± {half:.1e}"
    if half >= 10:
        return f"{round(mean) + 0:,} ± {round(half):,}"
    d = half_width_decimals(half)
    return f"{mean:,.{d}f} ± {half:,.{d}f}"


def ranges(values: Iterable[Any]) -> str:
    """Integers as sorted ranges: ``[0, 1, 2, 5, 7, 8]`` -> ``"0-2, 5, 7-8"``; ``[]`` -> ``"—"``.
    Non-integer values are listed after them as given (sorted as text)."""
    def whole(v: Any) -> bool:
        return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())

    values = list(values)
    ints = sorted({int(v) for v in values if whole(v)})
    others = sorted({str(v) for v in values if not whole(v)})
    parts: list[str] = []
    i = 0
    while i < len(ints):
        j = i
        while j + 1 < len(ints) and ints[j + 1] == ints[j] + 1:
            j += 1
        parts.append(str(ints[i]) if i == j else f"{ints[i]}-{ints[j]}")
        i = j + 1
    return ", ".join(parts + others) or "—"
