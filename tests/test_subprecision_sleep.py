"""A submitter's sleep shorter than SimGrid's precision ends at the same clock: the next job of a
shared subtime is submitted an ulp before it (``fixtures/batsim_subprecision_sleep``, recorded on
real Batsim 4.2.1)."""

from __future__ import annotations

from pathlib import Path

from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.outputs import job_rows
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_subprecision_sleep"
PLATFORM = FIX.parent / "batsim_128_energy" / "p.xml"   # the 128-host platform the run was recorded on


def test_second_job_of_a_subtime_is_submitted_at_the_clock_short_of_it():
    engine = build_engine(PLATFORM, [str(FIX / "w.json")], compute_sharing=True)
    result = engine.run(InProcessPort(get_policy("green-heft")))
    recorded = (FIX / "out_jobs.csv").read_text().splitlines()
    # job 23 (subtime 22.870370367) starts at once, at SimGrid's clock 22.87037036699999604
    assert any(r.startswith("23,w0,d25,22.870370,7,-1.000000,1,COMPLETED_SUCCESSFULLY,22.870370,3.333300,"
                            "26.203670,-0.000000,") for r in recorded)
    assert job_rows(result) == recorded
    start = {j.id: j.start for j in result.jobs}
    assert start["w0!23"] == start["w0!22"] == 22.870370366999996 < 22.870370367
