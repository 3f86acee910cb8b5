"""At a walltime, the timeout of ``wait_for`` (a sleep on the job actor's host) updates that
host's energy alone; the held task's other hosts cost the actor a simcall each when it reads
them, so its JOB_COMPLETED comes after a message posted at the same instant, and the task is
released 1e-10 s later (``fixtures/batsim_held_timeout``, recorded on real Batsim 4.2.1; its
README counts the sub-rounds and works the ``epower`` values out)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.outputs import energy_rows, job_rows, machine_state_rows, pstate_rows
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_held_timeout"

# the job start rows after a walltime: (time printed, hand-worked epower in W): the held task's
# power for 1e-10 s, then the idle power for 1e-10 s (README)
HAND = {"2.000000": (2 * 190 + 95 + 3 * 95) / 2, "12.000000": (3 * 190 + 3 * 95) / 2}


def _starts_after_walltime(lines: list[str]) -> dict[str, float]:
    rows = list(csv.DictReader(lines))
    return {r["time"]: float(r["epower"]) for prev, r in zip(rows, rows[1:])
            if prev["event_type"] == "e" and r["event_type"] == "s" and r["time"] == prev["time"]}


def test_recording_holds_the_hand_worked_powers():
    got = _starts_after_walltime((FIX / "out_consumed_energy.csv").read_text().splitlines())
    assert got.keys() == HAND.keys()
    for t, want in HAND.items():
        assert got[t] == pytest.approx(want, abs=0.01), t   # (the rest: rounding over 2e-10 s)


@pytest.fixture(scope="module")
def result():
    engine = build_engine(FIX / "p.xml", [str(FIX / "w.json")], energy=True)
    return engine.run(InProcessPort(get_policy("fcfs")))


def test_the_held_task_loads_its_hosts_until_its_job_completed_is_received(result):
    rows = energy_rows(result)
    got = _starts_after_walltime(rows)
    for t, want in HAND.items():
        assert got[t] == pytest.approx(want, abs=0.01), t
    assert rows == (FIX / "out_consumed_energy.csv").read_text().splitlines()


def test_engine_equals_real_batsim(result):
    assert job_rows(result) == (FIX / "out_jobs.csv").read_text().splitlines()
    assert machine_state_rows(result) == (FIX / "out_machine_states.csv").read_text().splitlines()
    assert pstate_rows(result) == (FIX / "out_pstate_changes.csv").read_text().splitlines()
