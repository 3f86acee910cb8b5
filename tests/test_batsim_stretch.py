"""A job's ``stretch`` as Batsim 4.2.1 computes it, in ``long double`` (``src/export.cpp``,
``JobsTracer::write_job``), recorded on real Batsim (``fixtures/batsim_ld_stretch``)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.outputs import _long_double, batsim_stretch, job_rows
from schedulers.fcfs import FCFS

FIX = Path(__file__).parent / "fixtures" / "batsim_ld_stretch"


def test_the_engine_prints_batsims_job_rows_where_the_double_quotient_would_round_the_other_way():
    engine = build_engine(FIX / "p.xml", [str(FIX / "w.json")], energy=True)
    result = engine.run(InProcessPort(FCFS()))
    recorded = (FIX / "out_jobs.csv").read_text().splitlines()
    assert job_rows(result) == recorded
    assert recorded[1].split(",")[13] == "1.000001"   # job 1: 1.0000005 in long double


def test_stretch_in_long_double_by_hand():
    # runtime = 0.0010000005 - 5e-10 and turnaround = 0.0010000005 (both exact in long double):
    # their quotient rounded to 64 bits, then to double, is 1.0000005's nearest double
    assert f"{batsim_stretch(0.0, 5e-10, 0.0010000005):f}" == "1.000001"
    assert f"{(0.0010000005 - 0.0) / (0.0010000005 - 5e-10):f}" == "1.000000"
    assert batsim_stretch(0.0, 5.0, 15.0) == 1.5
    assert batsim_stretch(0.0, 0.0, 0.0) == 1.0   # no runtime: 1e-5l, turnaround 0 + 1e-5l - 0
    # at t = 2, 2 + 1e-5l rounds to 64 bits (a step of 2**-62), so the turnaround is not 1e-5l
    assert batsim_stretch(2.0, 2.0, 2.0) != 1.0 and abs(batsim_stretch(2.0, 2.0, 2.0) - 1.0) < 2 ** -62 / 1e-5


def test_long_double_rounding_is_the_x87_one():
    third = _long_double(Fraction(1, 3))
    assert third.denominator == 2 ** 65 and third.numerator == (2 ** 65 + 1) // 3  # 64 bits, to nearest
    assert _long_double(Fraction(2 ** 64 + 1)) == 2 ** 64            # a tie: to even
    assert _long_double(Fraction(2 ** 64 + 3)) == 2 ** 64 + 4         # a tie: to even, upwards
    np = pytest.importorskip("numpy")
    if np.finfo(np.longdouble).nmant != 63:
        pytest.skip("numpy's longdouble is not the x87 format here")
    for a, b in ((1, 3), (2, 7), (10 ** 9 + 7, 3 * 10 ** 5)):
        x = np.longdouble(a) / np.longdouble(b)
        assert _long_double(Fraction(a, b)) == Fraction(*x.as_integer_ratio())
