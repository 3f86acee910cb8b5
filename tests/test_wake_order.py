"""Actors woken in one SimGrid step post their messages in the order they woke, also when one
of them first reads hosts' energy without a simcall (``fixtures/batsim_wake_order``, recorded on
real Batsim 4.2.1)."""

from __future__ import annotations

from pathlib import Path

from schedulers.easy import EASY
from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.outputs import energy_rows, job_rows

FIX = Path(__file__).parent / "fixtures" / "batsim_wake_order"


def test_a_walltime_and_a_submission_in_one_step_post_in_wake_order():
    engine = build_engine(FIX / "p.xml", [str(FIX / "w.json")], energy=True)
    result = engine.run(InProcessPort(EASY()))
    recorded = (FIX / "out_consumed_energy.csv").read_text().splitlines()
    assert "6.500000,1045.000000,s,95.000000,95.000124" in recorded   # idle power over the 2e-10 s
    assert energy_rows(result) == recorded
    assert job_rows(result) == (FIX / "out_jobs.csv").read_text().splitlines()
