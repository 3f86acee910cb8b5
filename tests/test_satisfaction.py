"""User satisfaction (000 eqs. 1-2, 001 eq. 4.4) and the power-usage timeline, on a hand-made run.

The grid (one core each; Batsim ids in name order)::

    id  host  speed    owner
    0   a0    4 Gf/s   alice        alice's share: mean speed (4 + 2) / 2 = 3 Gf/s
    1   a1    2 Gf/s   alice
    2   b0    1 Gf/s   bob          bob's share: mean 1 Gf/s
                                    carol owns nothing: the grid's mean host, (4 + 2 + 1) / 3 = 7/3 Gf/s

The run (out_jobs.csv written below; sizes in Gflop, times in s)::

    task  user   size  arrives  runs on         start  end
    t1    alice  12    0        a1 (2 Gf/s)     0      6
    t2    alice   6    10       a0 (4 Gf/s)     10     11.5
    t3    alice   8    0        a0, killed      0      1     then restarted as t3#1:
    t3#1                        a0              11.5   13.5
    b1    bob     3    0        b0 (1 Gf/s)     6      9
    c1    carol   7    0        a1 (2 Gf/s)     6      9.5

    h0 a0: t3 ..|.........|t2 |t3#1 |
    h1 a1: t1 ...........|c1 ....|
    h2 b0:             |b1 ..|
           0    1      6    9  9.5 10  11.5  13.5
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedulers.core.run_outputs import OutputsError, load_run
from schedulers.core.satisfaction import (
    SatisfactionError,
    satisfaction_metrics,
    task_satisfactions,
    user_means,
)
from schedulers.core.usage_plot import plot_power_usage, save_figure, usage_timeline

G = 1e9

PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="z" routing="Full">
  <host id="master_host" speed="100Mf"/>
  <host id="a0" speed="4Gf"><prop id="owner" value="alice"/></host>
  <host id="a1" speed="2Gf"><prop id="owner" value="alice"/></host>
  <host id="b0" speed="1Gf"><prop id="owner" value="bob"/></host>
</zone>
</platform>
"""

HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,"
          "success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,"
          "stretch,allocated_resources,consumed_energy,metadata")


def row(job: str, sub: float, state: str, start: float, end: float, alloc: str) -> str:
    ok = 1 if state == "COMPLETED_SUCCESSFULLY" else 0
    run = end - start
    return (f"{job},w0,{job.split('#')[0]},{sub:f},1,-1.000000,{ok},{state},{start:f},{run:f},{end:f},"
            f"{start - sub:f},{end - sub:f},{(end - sub) / run:f},{alloc},-1.000000,\"\"")


ROWS = [
    row("t3", 0, "COMPLETED_KILLED", 0, 1, "0"),
    row("t1", 0, "COMPLETED_SUCCESSFULLY", 0, 6, "1"),
    row("b1", 0, "COMPLETED_SUCCESSFULLY", 6, 9, "2"),
    row("c1", 0, "COMPLETED_SUCCESSFULLY", 6, 9.5, "1"),
    row("t2", 10, "COMPLETED_SUCCESSFULLY", 10, 11.5, "0"),
    row("t3#1", 1, "COMPLETED_SUCCESSFULLY", 11.5, 13.5, "0"),
]


def workload(users: dict[str, str | None] | None = None) -> dict:
    tasks = [("t1", "alice", 12, 0), ("t2", "alice", 6, 10), ("t3", "alice", 8, 0), ("b1", "bob", 3, 0),
             ("c1", "carol", 7, 0)]
    jobs, profiles = [], {}
    for name, user, gflop, sub in tasks:
        j = {"id": name, "subtime": sub, "res": 1, "walltime": -1, "profile": name}
        u = (users or {}).get(name, user)
        if u is not None:
            j["user"] = u
        jobs.append(j)
        profiles[name] = {"type": "parallel_homogeneous", "cpu": gflop * G, "com": 0}
    return {"nb_res": 3, "jobs": jobs, "profiles": profiles}


def write_run(root: Path, rows: list[str] = ROWS, wl: dict | None = None,
              name: str = "run") -> tuple[Path, list[Path], Path]:
    """The run's folder ``root/name``: platform.xml, workload.json, out/out_jobs.csv."""
    tmp = root / name
    tmp.mkdir()
    (tmp / "platform.xml").write_text(PLATFORM)
    (tmp / "workload.json").write_text(json.dumps(wl or workload()))
    (tmp / "out").mkdir()
    (tmp / "out" / "out_jobs.csv").write_text("\n".join([HEADER, *rows]) + "\n")
    return tmp / "out", [tmp / "workload.json"], tmp / "platform.xml"


def test_definition_5_satisfaction_by_hand(tmp_path):
    run = load_run(*write_run(tmp_path))
    us = {t.task: t for t in task_satisfactions(run)}
    # US = (CT_ideal - AT) / (CT_real - AT) x 100, CT_ideal = AT + size / (mean speed of own hosts)
    assert us["w0!t1"].ideal_end == pytest.approx(4.0)            # 12 / 3
    assert us["w0!t1"].satisfaction == pytest.approx(4 / 6 * 100)  # 66.67
    assert us["w0!t2"].ideal_end == pytest.approx(12.0)           # 10 + 6 / 3
    assert us["w0!t2"].satisfaction == pytest.approx(2 / 1.5 * 100)  # 133.33: a0 is faster than alice's mean
    # t3 was killed then restarted: CT_real is the restart's end, AT the task's arrival
    assert us["w0!t3"].end == 13.5
    assert us["w0!t3"].satisfaction == pytest.approx((8 / 3) / 13.5 * 100)   # 19.75
    assert us["w0!b1"].satisfaction == pytest.approx(3 / 9 * 100)           # 3 / 1 = 3 s, waited 6
    # non-owner carol: the grid's mean host, 7 Gflop / (7/3 Gf/s) = 3 s
    assert us["w0!c1"].ideal_end == pytest.approx(3.0)
    assert us["w0!c1"].satisfaction == pytest.approx(3 / 9.5 * 100)         # 31.58
    means = user_means(list(us.values()))
    assert list(means) == ["alice", "bob", "carol"]
    assert means["alice"] == pytest.approx((4 / 6 * 100 + 2 / 1.5 * 100 + (8 / 3) / 13.5 * 100) / 3)  # 73.25
    assert means["alice"] == pytest.approx(73.25102880658436)


def test_osep_original_satisfaction_by_hand(tmp_path):
    run = load_run(*write_run(tmp_path))
    us = {t.task: t.satisfaction for t in task_satisfactions(run, "osep")}
    # CT_ideal = AT + size / speed of the host of the final run: only the waiting counts
    assert us["w0!t1"] == pytest.approx(100.0)                 # 12 / 2 = 6 s, no wait
    assert us["w0!t2"] == pytest.approx(100.0)                 # 6 / 4 = 1.5 s, no wait
    assert us["w0!t3"] == pytest.approx(2 / 13.5 * 100)        # 8 / 4 = 2 s on a0, ends at 13.5
    assert us["w0!b1"] == pytest.approx(3 / 9 * 100)
    assert us["w0!c1"] == pytest.approx(3.5 / 9.5 * 100)       # 7 / 2 on a1
    metrics = satisfaction_metrics(*write_run(tmp_path, name="again"), mode="osep")
    assert metrics == pytest.approx({"satisfaction.alice": (200 + 2 / 13.5 * 100) / 3,   # 71.60
                                     "satisfaction.bob": 100 / 3,
                                     "satisfaction.carol": 3.5 / 9.5 * 100})


def test_metrics_default_mode_and_names(tmp_path):
    metrics = satisfaction_metrics(*write_run(tmp_path))
    assert sorted(metrics) == ["satisfaction.alice", "satisfaction.bob", "satisfaction.carol"]
    assert metrics["satisfaction.bob"] == pytest.approx(100 / 3)
    assert metrics["satisfaction.carol"] == pytest.approx(3 / 9.5 * 100)


def test_task_never_completed_is_named(tmp_path):
    rows = [r for r in ROWS if not r.startswith("t3#1")]
    run = load_run(*write_run(tmp_path, rows))
    with pytest.raises(SatisfactionError, match=r"task w0!t3 \(user alice\) never completed successfully "
                                                r"\(COMPLETED_KILLED\)"):
        task_satisfactions(run)


def test_bad_inputs_are_named(tmp_path):
    with pytest.raises(OutputsError, match=r"workload.json: job 'b1' has no 'user' field"):
        load_run(*write_run(tmp_path, wl=workload({"b1": None})))
    with pytest.raises(OutputsError, match=r"job w0!zz belongs to no task"):
        load_run(*write_run(tmp_path, ROWS + [row("zz", 0, "COMPLETED_SUCCESSFULLY", 0, 1, "2")], name="x"))
    with pytest.raises(SatisfactionError, match="mode must be one of hosep, osep"):
        task_satisfactions(load_run(*write_run(tmp_path, name="y")), "fair")


def test_power_usage_timeline_by_hand(tmp_path):
    tl = usage_timeline(load_run(*write_run(tmp_path)))
    assert list(tl.times) == [0, 1, 6, 9, 9.5, 10, 11.5, 13.5]
    # alice: a0 + a1 = 6 until t3 is killed at 1, then a1 (2) until 6, nothing until t2 at 10,
    # then a0 (4) through the restart t3#1 until 13.5
    expect = {"alice": [(0.5, 6), (3, 2), (7, 0), (10.5, 4), (12, 4), (14, 0)],
              "bob": [(0.5, 0), (7, 1), (9.2, 0)],
              "carol": [(5, 0), (7, 2), (9.2, 2), (9.7, 0)]}
    for user, points in expect.items():
        for t, gf in points:
            assert tl.at(user, t) == gf * G, (user, t)
    assert tl.provided == {"alice": 6 * G, "bob": 1 * G, "carol": 0.0}
    assert tl.total == 7 * G
    k = list(tl.times).index(1)
    assert tl.power_diff["alice"][k] == pytest.approx((2 - 6) / 6)     # -2/3 on [1, 6)
    assert tl.power_diff["carol"][list(tl.times).index(6)] == float("inf")


def test_power_usage_plot_files(tmp_path):
    tl = usage_timeline(load_run(*write_run(tmp_path)))
    fig = plot_power_usage(tl)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["alice", "bob", "carol"]
    alice = ax.get_lines()[0]
    assert list(alice.get_ydata()) == [6, 2, 0, 0, 0, 4, 4, 0]     # Gflop/s at each instant
    paths = save_figure(fig, tmp_path / "plots" / "usage")
    assert [p.name for p in paths] == ["usage.png", "usage.svg"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = save_figure(plot_power_usage(tl), tmp_path / "plots" / "usage2")
    assert again[1].read_bytes() == paths[1].read_bytes()          # deterministic SVG
    rel = plot_power_usage(tl, relative=True, stacked=True)
    assert rel.axes[0].get_ylabel() == "power in use (% of the grid)"
