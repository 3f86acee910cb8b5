"""A job's ``consumed_energy`` as Batsim 4.2.1 computes and prints it (``out_jobs.csv``).

Batsim sums the energies of the job's hosts (``sg_host_get_consumed_energy``, doubles) in a
``long double`` when the job starts and again when it ends (``consumed_energy_on_machines``,
``src/machines.cpp``: ``total += (long double) energy`` host by host in increasing machine id),
keeps the difference in a ``long double`` (``Job::consumed_energy``, ``src/jobs_execution.cpp``)
and prints that ``long double`` with ``std::to_string`` (``"%Lf"``: 6 decimals of its exact
value, ``JobsTracer::write_job``, ``src/export.cpp``). On x86-64 a ``long double`` has a 64-bit
significand, so where the difference is large and its hosts' energies carry finer bits (a job
of 32 hosts using 5.9e8 J, its hosts' energies about 1.5e8 J each), the printed 6th decimal may
not be the one of the nearest double: real Batsim printed ``588489279.999579`` (exact difference ...9995785354), the
nearest double prints ``588489279.999578`` (found on KTH-SP2 under green-easy with compute
sharing on Batsim's ``cluster_energy_128.xml``; recorded in ``tests/fixtures/batsim_job_energy``).

:func:`job_energy` gives the nearest double (the value the engine's results hold) and, when
``"%f"`` of it would print another text than Batsim's, Batsim's text, which ``out_jobs.csv``
writes instead (:func:`schedulers.engine.outputs.iter_job_lines`). The exact ``long double``
arithmetic (:mod:`.longdouble`, in rationals) is done only when the double lies within the
possible rounding of a tie of the 7th decimal: a few jobs of a run at most.
"""

from __future__ import annotations

import decimal
from fractions import Fraction
from itertools import chain
from math import floor, fsum, isfinite, ulp
from operator import neg
from typing import Sequence

from .hosts import exact_sum
from .longdouble import LONG_DOUBLE_BITS, _sum, round_bits

__all__ = ["job_energy", "long_double_text"]

_MICRO = decimal.Decimal("0.000001")


def long_double_text(x: Fraction) -> str:
    """``x`` (a ``long double``'s exact value) as C's ``"%Lf"`` prints it: 6 decimals of the
    exact value, rounded half to even."""
    with decimal.localcontext() as ctx:
        ctx.prec = 1200   # exact for the dyadic values of energies (denominators up to 2**1100)
        d = decimal.Decimal(x.numerator) / decimal.Decimal(x.denominator)
        return str(d.quantize(_MICRO, rounding=decimal.ROUND_HALF_EVEN))


def job_energy(end: Sequence[float], start: Sequence[float]) -> tuple[float, str | None]:
    """A job's consumed energy from its hosts' energies (J, doubles, in increasing machine id)
    when it ended (``end``) and when it started (``start``), as Batsim computes it (module
    docstring).

    Returns:
        ``(value, text)``: ``value`` the double nearest to Batsim's ``long double`` difference
        (J); ``text`` Batsim's printed value when ``"%f" % value`` differs from it, else None.
    """
    if len(end) == 1 and len(start) == 1:
        # (a one-host job, the common one: the double subtraction is the exact difference
        # rounded once, as exact_sum gives it, and each sum of magnitudes is one magnitude)
        e, s = end[0], start[0]
        hi = e - s
        scale = abs(e) + abs(s)
    else:
        hi = exact_sum(chain(end, map(neg, start)))
        scale = None
    if not isfinite(hi):
        return hi, None   # (the output check names it)
    # Batsim's value is off the exact difference by its three roundings to 64 bits (each sum's
    # partial sums are at most the sum of magnitudes); ``hi`` by half an ulp of a double
    if scale is None:
        scale = fsum(map(abs, end)) + fsum(map(abs, start))
    err = (len(end) + len(start) + 1) * 2.0 ** -LONG_DOUBLE_BITS * (scale + abs(hi)) + ulp(hi)
    r = hi * 1e6
    if abs(r - floor(r) - 0.5) > (err * 1e6 + 4.0 * ulp(r)):
        return hi, None   # no tie of the 7th decimal within reach: "%f" prints Batsim's digits
    exact = round_bits(_sum(end) - _sum(start))
    value = float(exact)
    text = long_double_text(exact)
    return value, (None if "%f" % value == text else text)
