"""Exact times (schedulers.core.exact_time): integers of 2**-128 s."""

from __future__ import annotations

from fractions import Fraction

import pytest

from schedulers.core.backfilling import ReservationProfile
from schedulers.core.exact_time import TIME_BITS, UNIT, to_seconds, to_units


def test_units_are_the_exact_value_of_the_double():
    assert TIME_BITS == 128 and UNIT == 2 ** 128
    assert to_units(0.5) == 2 ** 127
    assert to_units(5) == 5 * 2 ** 128
    assert to_units(0.0) == 0
    # 0.1 is 3602879701896397 / 2**55 as a double
    assert to_units(0.1) == 3602879701896397 * 2 ** (128 - 55)
    assert Fraction(to_units(1978.847), UNIT) == Fraction(1978.847)
    assert to_units(float("inf")) == float("inf")
    with pytest.raises(ValueError):
        to_units(float("nan"))


def test_sums_are_exact_where_floats_round():
    # 955.67 + 1023.177 is exactly the double 1978.847 (the doubles' exact sum is that double),
    # but the float sums with the 5 s of rjms_delay are 1 ulp apart
    assert 955.67 + (1023.177 + 5.0) == 1983.8470000000002 != 1978.847 + 5.0
    assert to_units(955.67) + to_units(1023.177) + to_units(5.0) == to_units(1978.847) + to_units(5.0)
    # and two doubles whose exact sum is not the double of the decimal sum stay apart
    assert to_units(0.1) + to_units(0.2) != to_units(0.3)


def test_back_to_seconds():
    assert to_seconds(to_units(1978.847)) == 1978.847
    assert to_seconds(to_units(6e-10)) == 6e-10
    assert to_seconds(float("inf")) == float("inf")
    # below 2**-76 s a double may have bits past the unit: rounded to the nearest unit
    assert to_units(2.0 ** -130) == 0 and to_units(2.0 ** -127) == 2


def test_a_profile_in_units_fits_a_window_ending_at_a_reservation():
    prof = ReservationProfile(to_units(955.67), 0b11)
    prof.reserve_mask(to_units(1978.847) + to_units(5.0), to_units(10.0) + to_units(5.0), 0b11)
    assert prof.now == to_units(955.67)  # kept as an integer
    dur = to_units(1023.177) + to_units(5.0)
    assert prof.fits_now_mask(1, dur) == 0b01
    assert prof.fits_now_mask(1, dur + 1) is None
    # the same in float seconds: the window is found 1 ulp too long
    fprof = ReservationProfile(955.67, 0b11)
    fprof.reserve_mask(1978.847 + 5.0, 15.0, 0b11)
    assert fprof.fits_now_mask(1, 1023.177 + 5.0) is None
