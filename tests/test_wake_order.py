"""Actors woken in one SimGrid step post their messages in the order they woke, also when one
of them first reads hosts' energy without a simcall (``fixtures/batsim_wake_order``, recorded on
real Batsim 4.2.1)."""

from __future__ import annotations

from pathlib import Path

from schedulers.easy import EASY
from schedulers.fcfs import FCFS
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


FIRST = Path(__file__).parent / "fixtures" / "batsim_first_submission_read"


def test_submitters_whose_first_jobs_share_an_instant_all_read_the_energy():
    # every submitter reads the hosts' energy before its first job while the value is unset, so
    # the three JOB_SUBMITTED arrive in workload order and FCFS starts w0's 2-host job first
    workloads = [str(FIRST / f"w{i}.json") for i in range(3)]
    engine = build_engine(FIRST / "p.xml", workloads, energy=True)
    result = engine.run(InProcessPort(FCFS()))
    rows = job_rows(result)
    starts = {r.split(",")[0]: r.split(",")[8] for r in rows[1:]}
    assert starts == {"a": "2.500000", "b": "4.500000", "c": "4.500000"}
    assert rows == (FIRST / "out_jobs.csv").read_text().splitlines()
    assert energy_rows(result) == (FIRST / "out_consumed_energy.csv").read_text().splitlines()
