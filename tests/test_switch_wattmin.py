"""A job's energy row written at the instant at which switching actors end: its ``wattmin``
counts their new pstates when the job actor's reads are simcalls (``fixtures/batsim_switch_wattmin``,
recorded on real Batsim 4.2.1)."""

from __future__ import annotations

from pathlib import Path

from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.outputs import energy_rows, job_rows
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_switch_wattmin"


def test_job_end_row_sees_the_pstates_of_switches_ending_at_its_instant():
    engine = build_engine(FIX / "p.xml", [str(FIX / "w.json")], energy=True, compute_sharing=True)
    result = engine.run(InProcessPort(get_policy("green-heft", {"idle_timeout": 0})))
    recorded = (FIX / "out_consumed_energy.csv").read_text().splitlines()
    assert "4.000005,404.509165,e,570.000000,690.000000" in recorded   # 6 hosts x 95 W (Epsilon)
    assert energy_rows(result) == recorded
    assert job_rows(result) == (FIX / "out_jobs.csv").read_text().splitlines()
