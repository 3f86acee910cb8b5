"""Exact times: seconds as integers of ``2**-TIME_BITS`` s, for a profile whose sums must not round.

A float time ``t`` is a dyadic rational ``n / 2**k``; as the integer ``n * 2**(TIME_BITS - k)``
(:func:`to_units`) it is exact whenever ``k <= TIME_BITS``, i.e. for every double of at least
``2**(52 - TIME_BITS)`` s (about ``1.3e-23`` s), and sums and comparisons of such integers are
exact. Float sums are not: ``start + walltime + delay`` rounds to 53 bits, so two instants equal
as real numbers may differ by 1 ulp as floats (or two different ones become equal), and a
window that fits exactly before a reservation is found not to fit (or the reverse).

batsched computes its schedule's times as exact rationals of the doubles it reads (Boost's
``mpq_rational``, ``src/exact_numbers.hpp`` of batsched 1.4.0); a :class:`~schedulers.core.
backfilling.ReservationProfile` whose times are all given in these units (its origin, every
start and duration) makes the same comparisons. ``inf`` stays the float ``inf`` (Python
compares integers and floats exactly; the integers stay far below ``2**1024``, so ``units +
inf`` is ``inf``).
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["TIME_BITS", "UNIT", "to_seconds", "to_units"]

#: Bits after the binary point of a time in units: times are integers of ``2**-TIME_BITS`` s.
TIME_BITS = 128

#: One second in units.
UNIT = 1 << TIME_BITS

_INF = float("inf")


def to_units(t: float) -> int | float:
    """``t`` (s, a finite float or int, or ``inf``) as an integer of ``2**-TIME_BITS`` s: exact
    for every double of at least ``2**(52 - TIME_BITS)`` s in magnitude (and for 0), rounded to
    the nearest unit below that; ``inf`` stays ``inf``.

    Raises:
        ValueError: ``t`` is NaN or ``-inf``.
    """
    if t == _INF:
        return _INF
    n, d = float(t).as_integer_ratio()  # d is a power of two (raises on NaN / -inf)
    k = d.bit_length() - 1
    if k <= TIME_BITS:
        return n << (TIME_BITS - k)
    return round(Fraction(n, d) * UNIT)


def to_seconds(u: int | float) -> float:
    """A time in units (:func:`to_units`) as seconds, the nearest float (``inf`` stays ``inf``)."""
    return u if u == _INF else u / UNIT
