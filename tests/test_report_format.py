"""How reports print numbers, intervals, seeds and labels (``schedulers/campaign/fmt.py``,
``labels.py``), and the run summary of an owner-share policy (tasks, restarts, preemptions).
Every expected text is written out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from schedulers.campaign import fmt
from schedulers.campaign.collect import mean_ci95
from schedulers.campaign.labels import column_label, is_percent, metric_label
from schedulers.core.metrics import RunSummary, task_counts


@pytest.mark.parametrize("value, text", [
    (12345.678, "12,346"),          # from 1,000 on: whole, with thousands separators
    (1234567.0, "1,234,567"),
    (999.96, "1,000"),              # rounds up to the next power of ten
    (37.2019, "37.20"),             # 4 significant digits
    (0.5, "0.5000"),
    (0.0123456, "0.01235"),
    (9.9996, "10.00"),
    (-3.14159, "-3.142"),
    (0.0, "0"),
    (1000, "1,000"),                # an int stays whole
    (1.23456e-5, "1.235e-05"),      # below 0.001: the exponent form
    (None, "—"),
    (math.nan, "—"),
])
def test_number(value, text):
    assert fmt.number(value) == text


def test_number_trim_signed_percent():
    assert fmt.number(2.5, trim=True) == "2.5" and fmt.number(96.14, trim=True) == "96.14"
    assert fmt.number(40.0, trim=True) == "40"
    assert fmt.signed(-0.5) == "-0.5" and fmt.signed(2.5) == "+2.5" and fmt.signed(0.0) == "0"
    assert fmt.percent(93.567) == "93.6 %"


@pytest.mark.parametrize("mean, low, high, text", [
    (37.2019, 37.058, 37.346, "37.20 ± 0.14"),              # half-width 0.144: 2 digits, the mean to 0.01
    (85.5615, 83.16684, 87.95616, "85.6 ± 2.4"),
    (433993.1, 421000.0, 446986.0, "433,993 ± 12,993"),     # half-widths from 10 on: whole numbers
    (-3.139, -41.1, 34.8, "-3 ± 38"),                       # ... the mean too
    (-0.4122, -10.4, 9.6, "0 ± 10"),
    (37.2, 37.2 - 9.09e-13, 37.2 + 9.09e-13, "37.20 ± 0"),  # the rounding of equal values: zero width
    (60.0, 60.0, 60.0, "60.00 ± 0"),
    # from 10^15 the exponent form: half-width 5.29e17 -> 5.3e+17, the mean to its 1e16 place (it
    # printed "3,492,898,159,799,591,936 ± 529,053,972,982,330", digits beyond a double's precision)
    (3.492898159799592e18, 2.963844186817262e18, 4.021952132781922e18, "3.49e+18 ± 5.3e+17"),
    (1.5e16, 1.4e16, 1.6e16, "1.50e+16 ± 1.0e+15"),
    (999e12, 990e12, 1008e12, "999,000,000,000,000 ± 9,000,000,000,000"),   # below 10^15: whole numbers
    (7.0, None, None, "7.000 (n = 1)"),
    (7.0, math.nan, math.nan, "7.000 (n = 1)"),
    (None, None, None, "—"),
])
def test_mean_ci(mean, low, high, text):
    assert fmt.mean_ci(mean, low, high) == text


def test_equal_runs_have_a_zero_width_interval():
    # 1000 copies of 0.1 do not sum to 100 exactly: the interval must still be [0.1, 0.1]
    v = np.full(1000, 0.1)
    assert mean_ci95(v) == (0.1, 0.0, 0.1, 0.1)
    mean, std, low, high = mean_ci95(np.array([1.0, 2.0, 3.0]))
    assert (mean, std) == (2.0, 1.0) and high - low == pytest.approx(2 * 4.302652729911275 / math.sqrt(3))


def test_seed_ranges():
    assert fmt.ranges(range(1000)) == "0-999"
    assert fmt.ranges([8, 7, 0, 1, 2, 5]) == "0-2, 5, 7-8"
    assert fmt.ranges([3]) == "3" and fmt.ranges([]) == "—"
    assert fmt.ranges([1.0, 2.0, "x"]) == "1-2, x"


def test_labels_in_words_with_units():
    assert metric_label("satisfaction.user1") == "user1: mean satisfaction, HOSEP Definition 5 (%)"
    assert metric_label("satisfaction_ispd.user4") == "user4: mean satisfaction, iSPD's grid-mean ideal time (%)"
    assert metric_label("ehosep.S.user1") == "user1: satisfaction S, EHOSEP eq. (1) (%)"
    assert metric_label("ehosep.mean_power.user2") == "user2: mean power of its jobs (W)"
    assert metric_label("buc.wait_reduction.inj100") == "injected user P = 1: waiting time less than under FCFS (%)"
    assert metric_label("buc.gain_kp10800.median.su75_100") == "median queue-position gain, Su 75-100, Kp = 10800 (%)"
    assert metric_label("makespan") == "makespan (s)" and metric_label("policy.preemptions") == "preemptions"
    assert metric_label("policy.custom_thing") == "policy: custom_thing" and metric_label("odd") == "odd"
    assert metric_label("makespan", {"makespan": "last end (s)"}) == "last end (s)"
    assert column_label("scenario.u1_limit") == "u1 limit"
    assert column_label("scenario.u1_limit", {"scenario.u1_limit": "user1's limit (%)"}) == "user1's limit (%)"
    assert is_percent(metric_label("satisfaction.user1")) and not is_percent("makespan (s)")


def test_owner_share_summary_counts_tasks_restarts_and_preemptions(tmp_path):
    # 3 tasks: a (preempted twice: a, a#1 killed, a#2 done), b (killed at its walltime, no restart),
    # c (done): 3 tasks, 2 restarts, 2 preemptions; 5 Batsim jobs, 2 + 1 = 3 killed
    out = tmp_path / "out_jobs.csv"
    out.write_text("job_id,workload_name,final_state\n"
                   "a,w0,COMPLETED_KILLED\nb,w0,COMPLETED_WALLTIME_REACHED\nc,w0,COMPLETED_SUCCESSFULLY\n"
                   "a#1,w0,COMPLETED_KILLED\na#2,w0,COMPLETED_SUCCESSFULLY\n")
    assert task_counts(out) == {"tasks": 3, "restarts": 2, "preemptions": 2}
    s = RunSummary(5, 2, 3, 0, 100.0, 1.0, 1.0, 2.0, 0.5, None, None, tasks=3, restarts=2, preemptions=2)
    text = s.format()
    assert text.splitlines()[0] == "tasks                 3 (2 preemptions, 2 restarts)"
    assert text.splitlines()[1] == "Batsim jobs           5: 2 succeeded, 3 killed of which 2 preempted, 0 rejected"
    assert s.as_dict()["tasks"] == 3 and s.as_dict()["preemptions"] == 2
    plain = RunSummary(5, 2, 3, 0, 100.0, 1.0, 1.0, 2.0, 0.5, None, None)
    assert "tasks" not in plain.as_dict() and plain.format().startswith("jobs                  5 (2 succeeded, 3 killed")



def test_a_run_where_no_job_started_has_no_waiting_time_nor_slowdown():
    # Two jobs, both rejected: no waiting time exists, and a bounded slowdown (>= 1 by definition)
    # has no value; the summary says so instead of printing 0.
    from schedulers.core.metrics import summarize_columns

    s = summarize_columns(["REJECTED", "REJECTED"], [0.0, 5.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0],
                          [9.0, 9.0], nb_hosts=4)
    assert (s.jobs, s.rejected, s.makespan, s.utilisation) == (2, 2, 0.0, 0.0)
    assert s.mean_waiting_time is None and s.max_waiting_time is None and s.mean_bounded_slowdown is None
    assert s.format().splitlines()[2:4] == ["mean waiting time     none: no job started",
                                            "mean bounded slowdown none: no job started"]
    # one job started at 30 s (submitted at 10 s, ran 5 s), one rejected: wait 20 s, bounded
    # slowdown (20 + 5) / max(5, 10) = 2.5
    s = summarize_columns(["COMPLETED_SUCCESSFULLY", "REJECTED"], [10.0, 0.0], [30.0, 0.0], [5.0, 0.0],
                          [35.0, 0.0], [1.0, 9.0], nb_hosts=4)
    assert (s.mean_waiting_time, s.max_waiting_time, s.mean_bounded_slowdown) == (20.0, 20.0, 2.5)


PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="z" routing="Full">
  <host id="master_host" speed="100Mf"/>
  <host id="h0" speed="1Gf"><prop id="owner" value="u1"/></host>
  <host id="h1" speed="1Gf"><prop id="owner" value="u2"/></host>
</zone>
</platform>
"""


def test_gridsched_run_of_hosep_prints_tasks_restarts_and_preemptions(tmp_path, capsys):
    import json

    from schedulers.cli import main
    # u2's two 1,000-Gflop tasks take both hosts at 0 s; u1's task arrives at 10 s. HOSEP's first
    # decision round (t = 60 s) preempts one of u2's tasks (u2 holds 2 Gf/s for 1 provided, RP = 0
    # > u1's PowerDiff -1) for u1's: 3 tasks, 1 preemption, 1 restart; 4 Batsim jobs, 1 killed.
    (tmp_path / "p.xml").write_text(PLATFORM)
    jobs = [{"id": "u2-0", "subtime": 0, "res": 1, "walltime": -1, "profile": "big", "user": "u2"},
            {"id": "u2-1", "subtime": 0, "res": 1, "walltime": -1, "profile": "big", "user": "u2"},
            {"id": "u1-0", "subtime": 10, "res": 1, "walltime": -1, "profile": "small", "user": "u1"}]
    profiles = {"big": {"type": "parallel_homogeneous", "cpu": 1e12, "com": 0},
                "small": {"type": "parallel_homogeneous", "cpu": 1e11, "com": 0}}
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 2, "jobs": jobs, "profiles": profiles}))
    out = tmp_path / "run"
    assert main(["run", "--policy", "hosep", "-p", str(tmp_path / "p.xml"), "-w", str(tmp_path / "w.json"),
                 "-o", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "tasks                 3 (1 preemption, 1 restart)" in text   # (it said "1 preemptions, 1 restarts")
    assert "Batsim jobs           4: 3 succeeded, 1 killed of which 1 preempted, 0 rejected" in text
    s = json.loads((out / "summary.json").read_text())
    assert (s["jobs"], s["killed"], s["tasks"], s["restarts"], s["preemptions"]) == (4, 1, 3, 1, 1)


def test_converted_trace_note_names_the_file_kept(tmp_path, capsys):
    from pathlib import Path

    from schedulers.cli import main
    fix = Path(__file__).resolve().parent / "fixtures"
    out = tmp_path / "run"
    assert main(["run", "--policy", "fcfs", "-p", str(fix / "hetero4.xml"), "-w", str(fix / "tiny.swf"),
                 "-o", str(out), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"written to {out / 'workload_w0.json'}" in err and "gridsched-run-" not in err
    assert (out / "workload_w0.json").is_file()


def test_faceted_line_plot_with_an_order(tmp_path):
    # two panels (facet "idle"), two lines each (hue "others"): the second panel's series are
    # ordered with the same order table as the first's
    import pandas as pd

    from schedulers.campaign.plot import plot_lines, sort_by
    rows = [{"idle": i, "others": o, "limit": lim, "n": 2, "n_failed": 0, "s_mean": lim / 10 + o, "s_std": 1.0,
             "s_ci95_low": lim / 10 + o - 1, "s_ci95_high": lim / 10 + o + 1}
            for i in (0.3, 0.7) for o in (120, 200) for lim in (80, 150)]
    paths = plot_lines(pd.DataFrame(rows), "s", "limit", "others", facet="idle", out=tmp_path / "p",
                       order={"others": [200, 120]}, formats=("png",))
    assert [p.name for p in paths] == ["p.png"] and paths[0].stat().st_size > 0
    assert sorted([120, 200, 150], key=sort_by("others", {"others": [200, 120]})) == [200, 120, 150]


def test_header_lists_large_whole_numbers_alike():
    """The header's list of a group column gave "0, 2785, 5570, 11,140" (separators from 10,000
    only, and commas between values): now every whole number of 4+ digits has them, and the
    values are then separated by semicolons."""
    import pandas as pd

    from schedulers.campaign.report import _values

    table = pd.DataFrame({"jobs_per_year": [0, 2785, 5570.0, 11140, 2785]})
    assert _values(table, "jobs_per_year") == "0; 2,785; 5,570; 11,140"
    assert _values(pd.DataFrame({"load": [0.5, 0.8, 1.1]}), "load") == "0.5, 0.8, 1.1"
    assert _values(pd.DataFrame({"name": ["b", "a"]}), "name") == "a, b"


def test_a_line_plot_names_the_file_scenario_it_leaves_out_not_the_policies(tmp_path):
    """A generator's ``load`` axis does not apply to a file scenario: the line plot by load leaves
    that scenario's groups out. The note under it named the policies (which are plotted, at every
    load) instead of the scenario that has no load."""
    from pathlib import Path

    from helpers_cli import run_main

    root = Path(__file__).resolve().parents[1]
    toml = tmp_path / "c.toml"
    toml.write_text(
        'name = "c"\nseeds = 1\n[[policy]]\nname = "fcfs"\n[[policy]]\nname = "easy"\n'
        '[[scenario]]\nname = "gen"\ngenerator = "synthetic"\nparams = { hosts = 4, jobs = 5, max_res = 2 }\n'
        f'[[scenario]]\nname = "files"\nplatform = "{root / "docs/examples/four_hosts.xml"}"\n'
        f'workloads = ["{root / "docs/examples/tutorial.json"}"]\n'
        '[axes]\nload = [0.5, 0.8]\n[report]\nmetrics = ["makespan"]\n'
        '[[report.plot]]\nkind = "line"\nmetric = "makespan"\nx = "load"\nhue = "policy"\n')
    out = tmp_path / "out"
    code, _, err = run_main(["campaign", "run", toml, "--out", out, "--serial", "--no-progress", "--report"])
    assert code == 0, err
    lines = (out / "report.md").read_text().splitlines()
    k = lines.index("![makespan (s) by load](plots/line_makespan_by_load_policy.png)")
    assert lines[k + 2] == "- Not in this plot: scenario files, which has no load (the axis does not apply to it)."
