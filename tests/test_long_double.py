"""Batsim's ``long double`` ``epower`` (:mod:`schedulers.engine.longdouble`): the rounding worked
by hand, and a row on a tie of the 7th decimal recorded on real Batsim 4.2.1
(``fixtures/batsim_epower_tie``)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.longdouble import _sum, epower, near_tie, round_bits
from schedulers.engine.outputs import write_outputs
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_epower_tie"


def test_rounding_to_nearest_ties_to_even():
    # 1/3 = 1.0101...b x 2**-2: two bits give 1.1b x 2**-2 = 3/8 (the bits dropped are over a half)
    assert round_bits(Fraction(1, 3), 2) == Fraction(3, 8)
    assert round_bits(Fraction(5), 2) == 4 and round_bits(Fraction(7), 2) == 8   # ties: 10|1 -> 10, 11|1 -> 100
    assert round_bits(Fraction(-7), 2) == -8 and round_bits(Fraction(0), 2) == 0
    assert round_bits(Fraction(2 ** 64 + 1)) == 2 ** 64                      # 65 bits: a tie, to even
    assert round_bits(Fraction(2 ** 64 + 3)) == 2 ** 64 + 4


def test_the_sum_rounds_after_each_host_as_a_long_double_does():
    # 2**64 + 1 needs 65 bits: each addition of 1 is a tie rounded to 2**64 (even); the exact sum
    # is 2**64 + 2, which the other order keeps (1 + 1 = 2 first, then 2**64 + 2 fits in 64 bits)
    assert _sum([2.0 ** 64, 1.0, 1.0]) == 2 ** 64
    assert _sum([1.0, 1.0, 2.0 ** 64]) == 2 ** 64 + 2
    assert _sum([0.1, 0.2]) == Fraction(0.1) + Fraction(0.2)                 # 56 bits: exact


def test_a_tie_of_the_seventh_decimal():
    # 1,903.69075 J over 4 s = 475.9226875 W exactly in decimal; in binary the operands are not
    # exact, so the quotient falls on one side of the tie, which the 6-decimal print shows
    assert near_tie(475.9226875, 2000.0, 1903.69075, 4)
    assert not near_tie(475.92268, 2000.0, 1903.69072, 4)
    assert epower([1903.69075], [0.0], 4.0, 0.0) == float(round_bits(Fraction(1903.69075) / 4))


def test_epower_on_a_tie_as_real_batsim_prints_it(tmp_path):
    engine = build_engine(str(FIX / "p.xml"), [str(FIX / "w.json")], energy=True, trace_outputs=True)
    result = engine.run(InProcessPort(get_policy("fcfs")))
    write_outputs(result, str(tmp_path / "out_"), energy=True)
    mine = (tmp_path / "out_consumed_energy.csv").read_text().splitlines()
    recorded = (FIX / "out_consumed_energy.csv").read_text().splitlines()
    assert "2.468000,1129.780375,e,380.000000,475.922688" in recorded
    assert mine == recorded


def test_numpy_long_double_gives_the_rational_values(monkeypatch):
    """Where numpy's ``longdouble`` is the x87 type (Linux on x86-64), the fast path must print
    what the rational emulation (checked by hand above) gives, on sums that need roundings (hosts
    of very different energies), short and long intervals, and consecutive rows sharing a list."""
    import random

    import pytest

    from schedulers.engine import longdouble
    from schedulers.engine.longdouble import _rational_epower, native

    monkeypatch.setattr(longdouble, "NATIVE_AFTER", 0)
    if native() is None:
        pytest.skip("numpy's longdouble is not the x87 extended type on this machine")
    rng = random.Random(7)
    differ = 0
    then_hosts = [rng.uniform(1e6, 1e7) for _ in range(128)]
    for _ in range(400):
        n = rng.choice([1, 3, 128])
        base = then_hosts[:n] if n == 128 else [rng.choice([rng.uniform(0, 1e3), rng.uniform(1e8, 1e10)])
                                                for _ in range(n)]
        now_hosts = [x + rng.choice([0.0, rng.uniform(0, 100), rng.uniform(0, 1e-6)]) for x in base]
        now = round(rng.uniform(1.0, 1e6), 3)
        then = now - rng.choice([1e-6, 0.001, 1.5, 100.0])
        differ += epower(now_hosts, base, now, then) != _rational_epower(now_hosts, base, now, then)
        then_hosts = now_hosts if n == 128 else then_hosts
    assert differ == 0
    # the worked sums of test_the_sum_rounds_after_each_host_as_a_long_double_does, natively: the
    # row's energy minus a previous 2**64 J over 1 s shows the two 1 J that one order loses
    assert epower([2.0 ** 64, 1.0, 1.0], [2.0 ** 64], 2.0, 1.0) == 0.0
    assert epower([1.0, 1.0, 2.0 ** 64], [2.0 ** 64], 2.0, 1.0) == 2.0
