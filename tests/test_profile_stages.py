"""Composed profiles are walked lazily (``schedulers.engine.workload.Stages``): the stages are the
ones a full expansion gives, in the same order, and many huge ``repeat`` profiles cost no memory
(issue 13, "Resource exhaustion")."""

from __future__ import annotations

import tracemalloc

import pytest

from schedulers.engine import simulate
from schedulers.engine.workload import MAX_STAGES, Stages, load_workload
from schedulers.fcfs import FCFS
from schedulers.inputs.errors import WorkloadError

PROFILES = {
    "d": {"type": "delay", "delay": 2},
    "c": {"type": "parallel_homogeneous", "cpu": 1e8, "com": 0},
    "b": {"type": "composed", "repeat": 2, "seq": ["c", "d"]},
    "a": {"type": "composed", "repeat": 3, "seq": ["d", "b"]},
}


def test_stages_are_the_full_expansion_in_order():
    # a = 3 x (d, b) and b = 2 x (c, d): d c d c d, three times
    st = Stages("a", PROFILES)
    expected = ["d", "c", "d", "c", "d"] * 3
    assert len(st) == 15
    assert [n for n, _ in st] == expected
    assert [st[i][0] for i in (0, 1, 4, 5, 14)] == ["d", "c", "d", "d", "d"]
    assert st[1][1] is PROFILES["c"]
    assert st.leaves() == [("d", PROFILES["d"]), ("c", PROFILES["c"])]
    with pytest.raises(IndexError, match="stage 15 of profile 'a', which has 15"):
        st[15]
    assert list(Stages("d", PROFILES)) == [("d", PROFILES["d"])]


def test_cycle_and_too_many_stages_are_refused():
    cyc = {"d": {"type": "delay", "delay": 1}, "x": {"type": "composed", "seq": ["d", "y"]},
           "y": {"type": "composed", "seq": ["x"]}}
    with pytest.raises(WorkloadError, match="job 'j': composed profiles form a cycle through 'x'"):
        Stages("x", cyc, where="job 'j'")
    big = {"d": {"type": "delay", "delay": 1}, "x": {"type": "composed", "repeat": MAX_STAGES + 1, "seq": ["d"]}}
    with pytest.raises(WorkloadError, match=r"profile 'x' expands to 1,000,001 stages"):
        Stages("x", big)


def test_many_huge_repeats_cost_no_memory():
    # 30 profiles of 10**6 stages each (1000 x 1000 nested repeats, the most MAX_STAGES allows),
    # one job each: expanded, this was about 70 MB per profile (2 GB here); lazily, a few KB
    profiles = {"d": {"type": "delay", "delay": 1e-6}}
    jobs = []
    for i in range(30):
        profiles[f"in{i}"] = {"type": "composed", "repeat": 1000, "seq": ["d"]}
        profiles[f"out{i}"] = {"type": "composed", "repeat": 1000, "seq": [f"in{i}"]}
        jobs.append({"id": i, "subtime": 0, "res": 1, "profile": f"out{i}"})
    tracemalloc.start()
    try:
        w = load_workload("<many>", "w0", 4, data={"nb_res": 4, "jobs": jobs, "profiles": profiles})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 * 2 ** 20, peak
    assert all(len(j.stages) == 10 ** 6 for j in w.jobs)
    assert w.jobs[7].stages[999_999] == ("d", profiles["d"])


def test_engine_runs_the_stages_in_order():
    # one job on one 100 Mf host: a = 3 x (2 s delay, b) and b = 2 x (1 s of compute, 2 s delay),
    # so 3 x (2 + 2 x (1 + 2)) = 24 s
    wl = {"nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "a"}], "profiles": PROFILES}
    from pathlib import Path
    plat = Path(__file__).parent / "fixtures" / "hetero4.xml"  # host a1: 100 Mf
    res = simulate(plat, [wl], FCFS())
    (job,) = res.jobs
    assert job.state == "COMPLETED_SUCCESSFULLY" and job.finish - job.start == pytest.approx(24.0)
