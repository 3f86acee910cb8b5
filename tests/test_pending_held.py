"""A parallel task still paying its communications' latency at its walltime stays in SimGrid's
system until its JOB_COMPLETED is received; once the latency is paid it loads its hosts, which
the energy plugin charges back at the release (``fixtures/batsim_pending_held``, recorded on
real Batsim 4.2.1; its README works the energies out)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.outputs import energy_rows, job_rows, machine_state_rows, pstate_rows
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_pending_held"

# the README's times (s): job a's walltime (its hosts' last update) and its JOB_COMPLETED's receipt
WALLTIME_A, RELEASE_A = 2.002000002, 3.002000478837
IDLE_W, BUSY_W = 2 * 95.0, 2 * 190.0


def _energy(lines: list[str], t: str, kind: str) -> float:
    return next(float(r["energy"]) for r in csv.DictReader(lines) if r["time"] == t and r["event_type"] == kind)


def test_recording_holds_the_hand_worked_energies():
    lines = (FIX / "out_consumed_energy.csv").read_text().splitlines()
    e_a_end = _energy(lines, "2.002000", "e")
    e_b_start = _energy(lines, "20.003000", "s")
    # idle from a's end to b's start, plus the busy power charged over [walltime, release]
    extra = (BUSY_W - IDLE_W) * (RELEASE_A - WALLTIME_A)
    assert e_b_start == pytest.approx(e_a_end + IDLE_W * (20.003 - 2.002) + extra, abs=2e-6)
    # job c is released before its latency ends: idle from its walltime to d's start
    assert _energy(lines, "50.004000", "s") == pytest.approx(
        _energy(lines, "30.603000", "e") + IDLE_W * (50.004 - 30.603), abs=2e-6)


@pytest.fixture(scope="module")
def result():
    engine = build_engine(FIX / "p.xml", [str(FIX / "w.json")], energy=True)
    return engine.run(InProcessPort(get_policy("fcfs")))


def test_engine_schedules_as_real_batsim(result):
    assert job_rows(result) == (FIX / "out_jobs.csv").read_text().splitlines()
    assert machine_state_rows(result) == (FIX / "out_machine_states.csv").read_text().splitlines()
    assert pstate_rows(result) == (FIX / "out_pstate_changes.csv").read_text().splitlines()


def test_the_pending_task_is_held_and_charged_at_its_release(result):
    rows = energy_rows(result)
    extra = (BUSY_W - IDLE_W) * (RELEASE_A - WALLTIME_A)
    # an engine that drops the task at its walltime prints 3800.570001 J here
    assert _energy(rows, "20.003000", "s") == pytest.approx(
        _energy(rows, "2.002000", "e") + IDLE_W * (20.003 - 2.002) + extra, abs=2e-6)
    assert rows == (FIX / "out_consumed_energy.csv").read_text().splitlines()
