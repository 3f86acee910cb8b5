"""Held tasks (engine/execution.py, "Held tasks"): at its walltime Batsim's job actor stops waiting
for its parallel task but does not cancel it; the task keeps computing, and sharing its hosts,
until the actor releases it once its JOB_COMPLETED has been received. Worked by hand from Batsim
4.2.1's ``execute_task`` (``ptask->wait_for``) and SimGrid 3.32's L07 model; recorded on real Batsim
4.2.1 (2026-11-24, fixtures/batsim_network/held_share_*, ``batsim -p cluster_energy_128.xml -w
held_workload.json -E --enable-compute-sharing``, a scheduler running each job at once on host 0).
"""

from __future__ import annotations

import csv

import pytest

from schedulers.core.policy import Policy
from schedulers.engine import simulate
from test_network import EXAMPLES, REC, assert_same_rows, needs_examples


class OnHostZero(Policy):
    """Every job at once on hosts 0..res-1 (compute sharing)."""

    def on_job_submitted(self, job) -> None:
        self.execute(job, range(job.res))


def run_on_host_zero(workload: str, tmp_path) -> tuple[dict[str, dict], float, float]:
    """Run a fixture workload of jobs A and B on host 0 (cluster_energy_128.xml, -E, sharing):
    the out_jobs.csv rows by job id, and A's and B's starts (recorded: 0.003 and 0.0036)."""
    simulate(EXAMPLES / "cluster_energy_128.xml", [REC / workload], OnHostZero(), energy=True,
             compute_sharing=True, export_prefix=tmp_path / "out_")
    jobs = {r["job_id"]: r for r in csv.DictReader(open(tmp_path / "out_jobs.csv"))}
    sa, sb = float(jobs["A"]["starting_time"]), float(jobs["B"]["starting_time"])
    assert (sa, sb) == (0.003, 0.0036)
    return jobs, sa, sb


@needs_examples
def test_a_task_held_after_its_walltime_still_shares_its_host(tmp_path):
    # cluster_energy_128.xml: 100 Mflops/s, one core, 190.738 W busy. A (1e12 flops, walltime 10 s)
    # and B (2e9 flops) share host 0. Their starts (recorded): sA = 0.003, sB = 0.0036. Sharing one
    # core, each gets 5e7 flops/s. A reaches its walltime at sA + 10, but its task computes on until
    # its JOB_COMPLETED reaches the master host: h = 1.6 ms + 1 B at 125 MBps later
    # (test_cluster_delays_by_hand). B: 5e7 flops/s from sB to sA + 10 + h, then 1e8 alone.
    # Without the hold B would end 0.8 ms earlier (25.0033).
    jobs, sa, sb = run_on_host_zero("held_workload.json", tmp_path)
    h = 1600e-6 + 1 / 125e6
    release = sa + 10 + h
    end_b = release + (2e9 - 5e7 * (release - sb)) / 1e8
    assert end_b == pytest.approx(25.0041, abs=1e-6)
    assert float(jobs["B"]["finish_time"]) == pytest.approx(end_b, abs=1e-6)
    assert jobs["A"]["final_state"] == "COMPLETED_WALLTIME_REACHED" and float(jobs["A"]["finish_time"]) == pytest.approx(sa + 10)
    # host 0 is fully busy all along B's run (shared or alone): 190.738 W
    assert float(jobs["B"]["consumed_energy"]) == pytest.approx(190.738 * (end_b - sb), rel=1e-9)
    for name in ("jobs", "consumed_energy"):
        assert_same_rows(tmp_path / f"out_{name}.csv", REC / f"held_share_{name}.csv")


@needs_examples
def test_a_held_task_that_completes_during_the_hold_frees_its_share_then(tmp_path):
    # As above, but A has 5.0007e8 flops: 6e4 alone (0.6 ms at 1e8) then 5.0001e8 at 5e7 flops/s, i.e.
    # it would complete at sA + 0.0006 + 10.0002 = 10.0038, 0.8 ms after its walltime (10.003) and
    # 0.8 ms before its release (10.0046). Its action leaves SimGrid's system when it completes: B
    # is alone from 10.0038, not from the release. B: 5e7 x (10.0038 - sB) by then, the rest at 1e8.
    jobs, sa, sb = run_on_host_zero("held_done_workload.json", tmp_path)
    done_a = sa + (5.0007e8 - 1e8 * (sb - sa)) / 5e7 + (sb - sa)
    assert done_a == pytest.approx(10.0038, abs=1e-9)
    end_b = done_a + (2e9 - 5e7 * (done_a - sb)) / 1e8
    assert end_b == pytest.approx(25.0037, abs=1e-6)
    assert float(jobs["B"]["finish_time"]) == pytest.approx(end_b, abs=1e-6)
    assert jobs["A"]["final_state"] == "COMPLETED_WALLTIME_REACHED"
    assert_same_rows(tmp_path / "out_jobs.csv", REC / "held_done_jobs.csv")


def test_simulation_ends_after_every_job_completed_is_received(tmp_path):
    # zero_route.xml: the compute host has no route to the master host, so its JOB_COMPLETED
    # messages take no time. Five 1e9-flop jobs share h0's core (sharing, -E) and end together at
    # 50 s + the start offsets; each job actor reads its host's energy before posting its
    # JOB_COMPLETED, so the fifth is posted while the server handles the fourth. Real Batsim 4.2.1
    # sends SIMULATION_ENDS only after receiving all five; the engine once ended the run on the
    # model's count of ended jobs and lost the fifth row of out_jobs.csv.
    simulate(REC / "zero_route.xml", [REC / "zero_route_workload.json"], OnHostZero(), energy=True,
             compute_sharing=True, export_prefix=tmp_path / "out_")
    jobs = list(csv.DictReader(open(tmp_path / "out_jobs.csv")))
    assert sorted(r["job_id"] for r in jobs) == ["0", "1", "2", "3", "4"]
    for name in ("jobs", "schedule", "machine_states", "consumed_energy"):
        assert_same_rows(tmp_path / f"out_{name}.csv", REC / f"zero_share_{name}.csv")
