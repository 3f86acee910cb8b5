"""Tests of the shortest-job-first policy of sjf.py: start times worked out by hand.

Run from the project folder: python -m pytest docs/examples/test_sjf.py
"""

from pathlib import Path

from schedulers.engine import simulate

from sjf import ShortestJobFirst

HERE = Path(__file__).parent
PLATFORM = HERE / "four_hosts.xml"          # four one-core hosts of 1 Gflop/s


def run(workload):
    """{job id: (start time in s, final state)} of one run of ShortestJobFirst on the four hosts."""
    result = simulate(PLATFORM, [workload], ShortestJobFirst())   # a new policy object per run
    return {job.name: (job.start, job.state) for job in result.jobs}


def delay_jobs(*jobs):
    """A Batsim workload of (id, subtime s, hosts, walltime s or -1, run time s) delay jobs."""
    return {
        "nb_res": 4,
        "jobs": [{"id": i, "subtime": sub, "res": res, "walltime": wall, "profile": f"run{run}"}
                 for i, sub, res, wall, run in jobs],
        "profiles": {f"run{run}": {"type": "delay", "delay": run} for *_, run in jobs},
    }


def test_the_tutorial_workload_starts_when_the_tutorial_says():
    # job 2 (walltime 100) first, job 1 beside it; job 5 (150) when job 2 ends at 90 s;
    # job 3 (200) when job 1 ends at 590 s; job 4 (250) when job 3 ends at 780 s
    starts = {job: start for job, (start, _) in run(HERE / "tutorial.json").items()}
    assert starts == {"1": 0.0, "2": 0.0, "3": 590.0, "4": 780.0, "5": 90.0}


def test_a_job_without_walltime_goes_after_one_with_a_walltime():
    # job 1 holds the four hosts until 100 s; job 2 (3 hosts, no walltime) arrived before
    # job 3 (3 hosts, walltime 50 s), but job 3 starts first, at 100 s, and job 2 when it ends
    jobs = run(delay_jobs((1, 0, 4, 200, 100), (2, 1, 3, -1, 10), (3, 2, 3, 50, 20)))
    assert jobs["3"] == (100.0, "COMPLETED_SUCCESSFULLY")
    assert jobs["2"] == (120.0, "COMPLETED_SUCCESSFULLY")


def test_a_job_larger_than_the_platform_is_rejected_and_the_others_run():
    # simulate, as real Batsim, hands job 1 (5 hosts of 4) to the policy, which rejects it
    # (gridsched run refuses such a workload unless given --fit keep)
    jobs = run(delay_jobs((1, 0, 5, 100, 10), (2, 0, 4, 100, 10)))
    assert jobs["1"][1] == "REJECTED"
    assert jobs["2"] == (0.0, "COMPLETED_SUCCESSFULLY")
