"""A job's ``consumed_energy`` in ``out_jobs.csv`` as Batsim prints its ``long double``
(:mod:`schedulers.engine.jobenergy`): worked by hand, and recorded on real Batsim 4.2.1
(``fixtures/batsim_job_energy``)."""

from __future__ import annotations

from pathlib import Path

from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.jobenergy import job_energy
from schedulers.engine.outputs import iter_job_lines, write_outputs
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_job_energy"


def test_the_long_double_difference_is_printed_not_the_double():
    # 2**29 - 5e-7 (the double 4.99999999999999977e-7): exactly 536870911.99999950000000000002,
    # above the tie of the 7th decimal. A long double keeps 64 bits: units of 2**-34 at 2**29,
    # 5e-7 J is 8589.93 of them, so Batsim holds 2**29 - 8590 * 2**-34 = 536870911.9999994999962,
    # below the tie: printed 536870911.999999. The nearest double (units of 2**-24 below 2**29)
    # is 2**29 - 8 * 2**-24 = 536870911.99999952316, printed 536870912.000000.
    value, text = job_energy([2.0 ** 29], [5e-7])
    assert value == 2.0 ** 29 - 8 * 2.0 ** -24
    assert "%f" % value == "536870912.000000"
    assert text == "536870911.999999"


def test_no_text_where_the_double_prints_batsims_digits():
    assert job_energy([2.0 ** 29], [0.03]) == (536870911.97, None)
    assert job_energy([100.0, 50.0], [20.0, 5.0]) == (125.0, None)


def test_recorded_on_real_batsim(tmp_path):
    engine = build_engine(str(FIX / "p.xml"), [str(FIX / "w.json")], energy=True, trace_outputs=True)
    result = engine.run(InProcessPort(get_policy("fcfs")))
    write_outputs(result, tmp_path / "out_", energy=True)
    assert (tmp_path / "out_jobs.csv").read_text() == (FIX / "out_jobs.csv").read_text()
    # the job's double is Batsim's value to the nearest double, within one unit of the last place
    b = next(j for j in result.jobs if j.name == "b")
    assert abs(b.energy - 590829556.3038265) <= 1.2e-7


def test_the_text_replaces_only_the_energy_field():
    engine = build_engine(str(FIX / "p.xml"), [str(FIX / "w.json")], energy=True, trace_outputs=True)
    result = engine.run(InProcessPort(get_policy("fcfs")))
    lines = list(iter_job_lines(result.rows["jobs"], None, {("w0", "b"): "note"}, {("w0", "b"): "1.000000"}))
    assert lines[2].endswith(',0,1.000000,"note"') and lines[2].startswith("b,w0,long,")
    assert lines[1].endswith(',0,180.762403,""')
