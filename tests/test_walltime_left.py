"""Batsim's remaining walltime, counted down stage by stage (``src/task_execution.cpp``), on a
compute-only platform: hand-worked doubles and real Batsim 4.2.1 (``fixtures/batsim_walltime_left``,
README there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recorded import rows, run_fcfs_with_energy
from test_network import assert_same_rows

FIX = Path(__file__).parent / "fixtures" / "batsim_walltime_left"

# final state and finish time (s) of each job, worked by hand (README)
HAND = {"1": ("COMPLETED_SUCCESSFULLY", 17.3), "2": ("COMPLETED_WALLTIME_REACHED", 5.0),
        "3": ("COMPLETED_WALLTIME_REACHED", 5.1), "6": ("COMPLETED_WALLTIME_REACHED", 105.736524),
        "8": ("COMPLETED_SUCCESSFULLY", 10.7), "4": ("COMPLETED_WALLTIME_REACHED", 3.0),
        "12": ("COMPLETED_WALLTIME_REACHED", 50.4)}


def test_the_remainders_in_doubles():
    assert 5 - ((7.3 + 5) - 7.3) < 0          # job 1: no walltime for its second stage
    assert 5 - ((0.1 + 5) - 0.1) == 0.0       # job 3: wait_for(0), killed at once
    left = 0.3 - 0.1 - 0.1                    # jobs 4, 12: the third 0.1-s delay is not shorter
    assert not 0.1 < left


def test_recording_holds_the_hand_worked_outcomes():
    got = {r["job_id"]: r for r in rows(FIX / "jobs.csv")}
    for jid, (state, finish) in HAND.items():
        assert got[jid]["final_state"] == state, jid
        assert float(got[jid]["finish_time"]) == pytest.approx(finish, abs=1e-6), jid


@pytest.fixture(scope="module")
def engine_out(tmp_path_factory) -> Path:
    return run_fcfs_with_energy(FIX, tmp_path_factory.mktemp("wall"))


@pytest.mark.parametrize("name", ["jobs", "schedule", "machine_states", "consumed_energy", "pstate_changes"])
def test_engine_equals_real_batsim(engine_out, name):
    assert_same_rows(engine_out / f"out_{name}.csv", FIX / f"{name}.csv")
