"""Jobs real Batsim 4.2.1 accepts at the edge of the workload format, on the embedded engine:
negative ``subtime`` (``fixtures/batsim_negative_subtime``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedulers.engine import simulate
from schedulers.registry import get_policy
from recorded import rows, schedule_rows

NEG = Path(__file__).parent / "fixtures" / "batsim_negative_subtime"


def test_recorded_negative_subtimes_are_submitted_at_0_and_keep_their_subtime():
    # fixtures/batsim_negative_subtime/README.md: a, aa (-5) start at 0 on one host each; b (-2.5,
    # 2 hosts) when a's 10 s end; tiny (-1e-7) and c (0) at 15; late (4) at 25
    got = {r["job_id"]: (r["submission_time"], r["starting_time"], r["waiting_time"], r["turnaround_time"])
           for r in rows(NEG / "full_fcfs" / "out_jobs.csv")}
    assert got == {"a": ("-5.000000", "0.000000", "5.000000", "15.000000"),
                   "aa": ("-5.000000", "0.000000", "5.000000", "10.000000"),
                   "b": ("-2.500000", "10.000000", "12.500000", "17.500000"),
                   "tiny": ("-0.000000", "15.000000", "15.000000", "25.000000"),
                   "c": ("0.000000", "15.000000", "15.000000", "25.000000"),
                   "late": ("4.000000", "25.000000", "21.000000", "31.000000")}


@pytest.mark.parametrize("case, platform, policy, energy, files", [
    ("full_fcfs", "full.xml", "fcfs", False, ("jobs",)),
    ("cluster_easy_E", "cluster.xml", "easy", True, ("jobs", "consumed_energy")),
])
def test_engine_equals_real_batsim_on_negative_subtimes(tmp_path, case, platform, policy, energy, files):
    simulate(NEG / platform, [NEG / "workload.json"], get_policy(policy), energy=energy,
             export_prefix=tmp_path / "out_")
    for name in files:
        assert (tmp_path / f"out_{name}.csv").read_text() == (NEG / case / f"out_{name}.csv").read_text(), name
    if case == "full_fcfs":
        assert schedule_rows(tmp_path / "out_schedule.csv") == schedule_rows(NEG / case / "out_schedule.csv")
