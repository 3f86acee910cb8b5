"""Batsim's ``long double`` arithmetic of ``out_consumed_energy.csv``'s ``epower``, where doubles
print another last digit.

Batsim 4.2.1 (``EnergyConsumptionTracer::add_entry``, ``src/export.cpp``) sums the hosts' energies
in a ``long double`` (``Machines::total_consumed_energy``, ``src/machines.cpp``: ``total +=
(long double) energy`` host by host), then computes ``epower = (energy - last energy) / ((long
double) date - last date)`` in ``long double`` and prints ``(double) epower`` with ``%lf`` (6
decimals). On x86-64 a ``long double`` is the x87 extended format: a 64-bit significand, each
operation rounded to nearest, ties to even. The engine's doubles give the same printed value
except when the quotient lies within a few units in the last place of a tie of the 7th decimal
(a power of 475.9226875 W: 1,903.69075 J over 4 s, round numbers that generated platforms and
workloads make common); :func:`epower` then redoes Batsim's operations exactly: in numpy's
``longdouble`` where it is the same x87 type (Linux on x86-64; checked once, :func:`native`), else
in rationals (:func:`round_bits`, :func:`_sum`), which give the same values more slowly.
"""

from __future__ import annotations

from fractions import Fraction
from math import floor, isfinite
from typing import Iterable

__all__ = ["LONG_DOUBLE_BITS", "epower", "native", "near_tie", "round_bits"]

#: Significand bits of the x87 extended ``long double`` (GCC on x86-64).
LONG_DOUBLE_BITS = 64


def round_bits(x: Fraction, bits: int = LONG_DOUBLE_BITS) -> Fraction:
    """``x`` rounded to ``bits`` significant bits, to nearest, ties to even (IEEE 754; the
    exponent range of a ``long double`` is never reached here)."""
    if x == 0:
        return x
    sign = -1 if x < 0 else 1
    n, d = abs(x.numerator), x.denominator
    shift = bits - 1 - (n.bit_length() - d.bit_length())   # x * 2**shift in [2**(bits-1), 2**bits)
    while True:
        num, den = (n << shift, d) if shift >= 0 else (n, d << -shift)
        q, r = divmod(num, den)
        if q >= 1 << bits:
            shift -= 1
        elif q < 1 << (bits - 1):
            shift += 1
        else:
            break
    if 2 * r > den or (2 * r == den and q & 1):
        q += 1
    return sign * (Fraction(q, 1 << shift) if shift >= 0 else Fraction(q << -shift))


def _sum(values: Iterable[float]) -> Fraction:
    """``long double total = 0; total += (long double) v`` for each value, in order: in integers
    over the values' largest power-of-two denominator, rounded to 64 significant bits after each
    addition (ties to even)."""
    ratios = [v.as_integer_ratio() for v in values]
    if not ratios:
        return Fraction(0)
    den = max(d for _, d in ratios)
    total = 0
    for n, d in ratios:
        total += n * (den // d)
        drop = abs(total).bit_length() - LONG_DOUBLE_BITS
        if drop > 0:
            q, r = divmod(abs(total), 1 << drop)
            half = 1 << (drop - 1)
            if r > half or (r == half and q & 1):
                q += 1
            total = (q << drop) if total > 0 else -(q << drop)
    return Fraction(total, den)


def near_tie(value: float, energy: float, diff: float, hosts: int) -> bool:
    """Whether ``value`` (W, the engine's ``epower`` in doubles) may print another 6th decimal
    than Batsim's: within their possible difference of a tie of the 7th decimal. ``energy``: the
    larger of the two rows' energies (J), ``diff``: their difference (J), ``hosts``: how many
    host energies the sums add. Batsim's sum of ``hosts`` energies is off the exact one by up
    to ``(hosts + 1) 2**-64`` of ``energy``; the doubles' quotient, and Batsim's cast of its own
    to a double, by a few ``2**-53`` of ``value``."""
    r = abs(value) * 1e6
    if not isfinite(r):
        return False   # (a power out of range: the output check names it)
    rel = (hosts + 1) * 5.5e-20 * (energy / abs(diff) if diff else 1e30) + 1e-15
    return abs((r - floor(r)) - 0.5) <= r * rel + 1e-12


def native():
    """numpy's ``longdouble`` type when it is the x87 extended format with its operations rounded
    to 64 bits (to nearest, ties to even), checked on sums worked by hand; None otherwise (numpy
    absent, or ``longdouble`` another format, as on Windows or ARM). Imports numpy (about 0.1 s):
    :func:`epower` asks only after :data:`NATIVE_AFTER` ties."""
    global _NATIVE
    if _NATIVE is False:
        _NATIVE = None
        try:
            import numpy as np
            ld = np.longdouble
            ok = (np.finfo(ld).nmant == LONG_DOUBLE_BITS - 1
                  and float(np.cumsum(np.array([2.0 ** 64, 1.0, 1.0]).astype(ld))[-1]) == 2.0 ** 64
                  and int(np.cumsum(np.array([1.0, 1.0, 2.0 ** 64]).astype(ld))[-1]) == 2 ** 64 + 2
                  and int(ld(2.0 ** 64) + ld(3.0)) == 2 ** 64 + 4)
            if ok:
                _NATIVE = (np, ld)
        except Exception:   # (any failure: the rational arithmetic below is always right)
            _NATIVE = None
    return _NATIVE


_NATIVE: object = False   # not checked yet
#: :func:`epower` redoes this many ties in rationals (about 0.2 ms each) before it imports numpy
#: for the others (about 0.05 ms each): most runs meet a few ties or none, and start faster
#: without numpy.
NATIVE_AFTER = 500
_ties = 0
_LAST_SUM: list = [None, None]   # the last list summed natively and its sum (consecutive rows share one)


def _native_sum(values, np, ld):
    """The sequential ``long double`` sum of ``values`` (a list, not changed after the call) in
    numpy's x87 ``longdouble`` (``cumsum`` adds in order, rounding after each addition). The last
    list's sum is kept: a row's hosts are the next row's previous hosts."""
    if values is _LAST_SUM[0]:
        return _LAST_SUM[1]
    total = np.cumsum(np.array(values, dtype=float).astype(ld))[-1] if len(values) else ld(0)
    _LAST_SUM[0], _LAST_SUM[1] = values, total
    return total


def epower(hosts_now: Iterable[float], hosts_then: Iterable[float], now: float, then: float) -> float:
    """Batsim's ``(double) epower`` (W) of a row at ``now`` (s) after the previous one at
    ``then``, from the hosts' energies (J, doubles, in Batsim's machine order) at both rows, in
    ``long double`` arithmetic (module docstring). Lists are summed in numpy's ``longdouble``
    when it is Batsim's type (:func:`native`) once a process met :data:`NATIVE_AFTER` ties, else
    in rationals: the same values either way."""
    global _ties
    _ties += 1
    nat = native() if _ties > NATIVE_AFTER else None
    if nat is not None and isinstance(hosts_now, list) and isinstance(hosts_then, list):
        np, ld = nat
        value = (_native_sum(hosts_now, np, ld) - _native_sum(hosts_then, np, ld)) / (ld(now) - ld(then))
        return float(value)
    return _rational_epower(hosts_now, hosts_then, now, then)


def _rational_epower(hosts_now: Iterable[float], hosts_then: Iterable[float], now: float, then: float) -> float:
    """:func:`epower` in rationals rounded as the x87 type rounds (:func:`round_bits`)."""
    energy_diff = round_bits(_sum(hosts_now) - _sum(hosts_then))
    time_diff = round_bits(Fraction(now) - Fraction(then))
    return float(round_bits(energy_diff / time_diff))   # (Fraction to float: nearest, ties to even)
