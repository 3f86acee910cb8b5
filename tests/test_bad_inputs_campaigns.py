"""Bad and borderline campaign files, refused when the TOML is read (one line naming the file,
the run or key, and what to set) instead of every run failing, or a report silently dropping a
label or an order."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from schedulers.campaign.store import ResultStore
from schedulers.cli import main

from helpers_campaign import tiny_green

SCENARIO = """
[[scenario]]
name = "s"
generator = "synthetic"
params = { jobs = 5, hosts = 4 }
"""


def _file(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "c.toml"
    f.write_text(textwrap.dedent(text) + SCENARIO, encoding="utf-8")
    return f


def _refused(tmp_path: Path, capsys, text: str) -> str:
    """The one error line of `campaign run` on ``text``; nothing was run or written."""
    f = _file(tmp_path, text)
    out = tmp_path / "out"
    assert main(["campaign", "run", str(f), "--out", str(out), "--serial", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert not out.exists()
    prefix = f"gridsched: error: {f}: "
    assert err[0].startswith(prefix), err[0]
    return err[0][len(prefix):]


# ------------------------------------------------------------------ green heuristic without sharing
def test_green_easy_with_delta_needs_compute_sharing_refused_when_read(tmp_path: Path, capsys) -> None:
    # delta's default is 10 (> 0): it overlaps jobs, which Batsim allows only with compute
    # sharing; each run used to fail at SIMULATION_BEGINS with that error
    line = _refused(tmp_path, capsys, """
        energy = true
        [[policy]]
        name = "green-easy"
        """)
    assert line == ("run policy=green-easy scenario=s: policy 'green-easy' with delta = 10 (> 0: overlaps jobs on "
                    "shared hosts; default 10), which needs Batsim's compute sharing: set compute_sharing = true (in "
                    "the file, or as an engine axis)")


def test_green_heft_in_a_compute_sharing_axis_refuses_the_run_without(tmp_path: Path, capsys) -> None:
    line = _refused(tmp_path, capsys, """
        energy = true
        [[policy]]
        name = "green-heft"
        label = "gh"
        options = { delta = 20 }
        [axes]
        compute_sharing = [true, false]
        """)
    assert line.startswith("run policy=gh scenario=s compute_sharing=False: policy 'green-heft' with delta = 20 ")


def test_green_easy_with_delta_0_runs_without_compute_sharing(tmp_path: Path) -> None:
    f = _file(tmp_path, """
        energy = true
        [[policy]]
        name = "green-easy"
        options = { delta = 0 }
        """)
    assert main(["campaign", "run", str(f), "--out", str(tmp_path / "out"), "--serial", "--no-progress"]) == 0
    assert ResultStore(tmp_path / "out").status(ResultStore(tmp_path / "out").ids()).line() == \
        "1 runs: 1 done, 0 failed, 0 missing"


# ------------------------------------------------------------------ option values
@pytest.mark.parametrize("options,axis,message", [
    # a value the policy's constructor refuses: each run used to fail with it
    ("{ delta = 150 }", "", "run policy=green-easy scenario=s: policy 'green-easy': option 'delta' must be a number "
                            "in [0, 100), got 150"),
    ("{}", "delta = [0, -5]", "run policy=green-easy scenario=s delta=-5: policy 'green-easy': option 'delta' must "
                              "be a number in [0, 100), got -5"),
    ("{ per_gap = 1 }", "", "option 'per_gap'"),
], ids=["delta-150", "delta-axis-negative", "per-gap-not-bool"])
def test_option_values_a_policy_refuses_are_errors_of_the_file(tmp_path: Path, capsys, options: str, axis: str,
                                                               message: str) -> None:
    line = _refused(tmp_path, capsys, f"""
        energy = true
        compute_sharing = true
        [[policy]]
        name = "green-easy"
        options = {options}
        [axes]
        {axis}
        """)
    assert message in line, line


def test_a_policy_file_whose_constructor_raises_names_its_file_and_line(tmp_path: Path, capsys) -> None:
    pol = tmp_path / "mine.py"
    pol.write_text(textwrap.dedent("""\
        from schedulers.fcfs import FCFS


        class Mine(FCFS):
            def __init__(self, options=None):
                super().__init__(options)
                raise RuntimeError("no model file")
        """), encoding="utf-8")
    line = _refused(tmp_path, capsys, f"""
        [[policy]]
        name = "{pol}:Mine"
        label = "mine"
        """)
    assert line == (f"run policy=mine scenario=s: policy Mine failed in __init__ ({pol}, line 7): RuntimeError: no "
                    "model file")


# ------------------------------------------------------------------ [report.order] / [report.labels]
REPORTED = """
    seeds = 2
    [[policy]]
    name = "fcfs"
    [[policy]]
    name = "easy"
    label = "EASY"
    [axes]
    load = [0.5, 0.9]
    [report]
    """


@pytest.mark.parametrize("order,message", [
    ('order.policy = ["EASY", "FCFS"]', "report.order.policy[1]: 'FCFS' is no value of 'policy' in this campaign; its "
                                  "values: EASY, fcfs"),
    ("order.load = [0.9, 0.7]", "report.order.load[1]: 0.7 is no value of 'load' in this campaign; its values: 0.5, 0.9"),
    # (its section and plots were written twice)
    ('metrics = ["makespan", "utilisation", "makespan"]',
     "report.metrics[2]: 'makespan' is listed twice (report.metrics[0])"),
    ("order.laod = [0.9, 0.5]", "report.order.laod: 'laod' is not a column of the campaign; its columns: policy, "
                          "scenario, load, seed"),
    # a paper's number for a column spelt otherwise
    ('[[report.reference]]\nwhere = { policy = "EASY", laod = 0.9 }\nmetric = "makespan"\nvalue = 1.0\n'
     'source = "Table 2"', "report.reference[0].where.laod: 'laod' is not a column of the campaign; its "
                           "columns: policy, scenario, load, seed"),
    # a paper's mean outside its own interval: a typo in one of the three numbers
    ('[[report.reference]]\nwhere = { policy = "EASY", load = 0.9 }\nmetric = "makespan"\nvalue = 12.5\n'
     'source = "Table 2"\nci95 = [1.1, 1.4]', "report.reference[0].ci95: [1.1, 1.4] does not hold the value 12.5 (a "
                                             "mean lies within its confidence interval)"),
    ('[[report.timeline]]\nwhere = { policy = "EASY", load = 0.9, seed = 2 }',
     "report.timeline[0].where.seed: 2 is no value of 'seed' in this campaign; its values: 0, 1"),
    ('[[report.plot]]\nkind = "bar"\nmetric = "makespan"\nx = "policy"\nwhere = { lod = 0.9 }',
     "report.plot[0].where.lod: 'lod' is not a column of the campaign; its columns: policy, scenario, load, seed"),
], ids=["value-case", "value-number", "metric-twice", "column", "reference", "reference-ci", "timeline", "plot"])
def test_an_order_naming_what_the_campaign_has_not_is_refused(tmp_path: Path, capsys, order: str,
                                                              message: str) -> None:
    assert _refused(tmp_path, capsys, REPORTED + order) == message


def test_an_order_of_values_given_as_integers_matches_float_values(tmp_path: Path) -> None:
    # (load 1 and 1.0 are one value: an order written [1, 0.5] orders the 1.0 runs)
    f = _file(tmp_path, REPORTED.replace("0.9]", "1.0]") + "order.load = [1, 0.5]")
    assert main(["campaign", "run", str(f), "--out", str(tmp_path / "out"), "--serial", "--no-progress"]) == 0


def test_a_label_naming_no_column_or_metric_is_warned_about(tmp_path: Path, capsys) -> None:
    f = _file(tmp_path, REPORTED.replace("[report]", '[report.labels]\nlaod = "offered load"\n'
                                         'makespan = "makespan (s)"'))
    out = tmp_path / "out"
    assert main(["campaign", "run", str(f), "--out", str(out), "--serial", "--no-progress", "--report"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    warning = [e for e in err if e.startswith("warning:")]
    assert len(warning) == 1, err
    assert warning[0].startswith("warning: c.toml: report.labels: 'laod' name(s) no column or metric of the "
                                 "results (a typo?), not used; columns: policy, scenario, load, seed; metrics: ")
    assert "makespan" in warning[0].split("metrics: ")[1]


# ------------------------------------------------------------------ where the runs go
@pytest.mark.parametrize("options, message", [
    # --serial ran in this process while the first line said "on tcp://...": the address was dropped
    (["--serial", "--scheduler-address", "tcp://127.0.0.1:1"],
     "--serial and --scheduler-address both say where the runs go: give one"),
    (["--scheduler-address", "tcp://127.0.0.1:1", "--jobqueue", "slurm"],
     "--scheduler-address and --jobqueue both say where the runs go: give one"),
    (["--serial", "--workers", "2"], "--workers sets the local cluster's processes (or --jobqueue's batch jobs); "
                                     "with --serial it would be ignored"),
    (["--jobqueue", "nope"], "--jobqueue 'nope': unknown; known: slurm, oar, pbs, sge, lsf, htcondor"),
    # an internal error (ValueError, exit 1) before
    (["--scheduler-address", "nonsense"], "--scheduler-address 'nonsense': missing port number in address "
                                          "'nonsense'; is a Dask scheduler running there"),
], ids=["serial-address", "address-jobqueue", "serial-workers", "jobqueue", "address"])
def test_where_the_runs_go_is_one_clear_choice(tmp_path: Path, capsys, options: list, message: str) -> None:
    f = _file(tmp_path, '[[policy]]\nname = "fcfs"\n')
    out = tmp_path / "out"
    assert main(["campaign", "run", str(f), "--out", str(out), "--no-progress", *options]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"gridsched: error: {message}"), err
    assert not list(out.glob("results/*.json"))


# ------------------------------------------------------------------ the green heuristic's report
def test_green_report_without_folders_names_out(tmp_path: Path, capsys) -> None:
    # "gridsched: error: no finished green run in " (no folder named), or a bare "No such file"
    (tmp_path / "empty").mkdir()
    assert main(["campaign", "green", "report", "--out", str(tmp_path / "empty")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"gridsched: error: --out {tmp_path / 'empty'}: no campaign output folder in it (a sub-folder with "
        "results/): run `gridsched campaign green run` first, or name the folders")
    assert main(["campaign", "green", "report", "--out", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err.strip().startswith(f"gridsched: error: --out {tmp_path / 'none'}: no such folder")


# ------------------------------------------------------------------ a seeded policy's seed
@pytest.mark.parametrize("policy_table, axes", [
    ("options = { seed = 42 }", ""),
    ("", '[axes]\n"policy.seed" = [5, 6]'),
], ids=["option", "axis"])
def test_a_seeded_policys_seed_is_given_by_seeds_only(tmp_path: Path, capsys, policy_table: str, axes: str) -> None:
    # the run's seed replaced it without a word: options seed = 42 ran seeds 1 and 2; an axis
    # policy.seed = [5, 6] was a column of the results whose values no run used (4 runs, 2 alike)
    pol = tmp_path / "seeded.py"
    pol.write_text('from schedulers.fcfs import FCFS\n\n\nclass Seeded(FCFS):\n    option_docs = {"seed": "seed"}\n')
    line = _refused(tmp_path, capsys, f"""
        seeds = [1, 2]
        [[policy]]
        name = "{pol}:Seeded"
        {policy_table}
        """ + ("\n" + axes if axes else ""))
    assert line.endswith(": a policy's seed option is the run's seed, which the campaign gives from `seeds`: set "
                         "seeds = [N, ...] (one run per seed) instead"), line
    assert line.startswith("policy[0].options.seed: " if policy_table else "axes.policy.seed: "), line


def test_a_checkpoint_block_without_checkpointing_is_refused(tmp_path: Path, capsys) -> None:
    # block sizes a checkpoint; without checkpoint = true it is never read: an axis over it made
    # groups that differ by a value no run used (and the same simulation in each)
    line = _refused(tmp_path, capsys, """
        [[policy]]
        name = "hosep"
        [axes]
        block = [300, 600]
        """)
    assert line == ("run policy=hosep scenario=s block=300: policy 'hosep': option 'block' has no effect with "
                    "checkpoint false (no completed block is kept): drop it (a run would be labelled with a value "
                    "it never used)")


def test_green_report_leaves_out_the_runs_an_edited_campaign_file_no_longer_has(tmp_path: Path) -> None:
    # the green report read every record of the folder: after offered_load 0.3 became 0.5, the 12
    # runs of the earlier file were still in its tables (collect leaves them out)
    import pandas as pd

    camp = tmp_path / "tiny.toml"
    out, rep = tmp_path / "out", tmp_path / "rep"
    run = ["campaign", "green", "run", str(camp), "--out", str(out), "--report", str(rep), "--no-progress"]
    camp.write_text(tiny_green(load=0.3))
    assert main(run) == 0
    assert len(pd.read_csv(rep / "runs.csv")) == 12   # 2 policies x 6 deltas x 1 seed
    camp.write_text(tiny_green(load=0.5))
    assert main(run) == 0
    assert len(pd.read_csv(rep / "runs.csv")) == 12   # the 12 runs at 0.5 only


def test_green_report_of_runs_without_its_twelve_configurations_says_so(tmp_path: Path, capsys) -> None:
    # deltas 0 and 10 only: no case has the 12 runs (EASY and HEFT at 6 deltas) the report
    # compares; it stopped on a pandas KeyError ("Label(s) ['rel_win'] do not exist")
    camp = tmp_path / "tiny.toml"
    camp.write_text(tiny_green("[0, 10]"))
    assert main(["campaign", "green", "run", str(camp), "--out", str(tmp_path / "out"), "--report",
                 str(tmp_path / "rep"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith("no case (a scenario and seed) has the 12 runs the report compares (EASY 0, HEFT 0, EASY 10, "
                        "HEFT 10, EASY 20, HEFT 20, EASY 30, HEFT 30, EASY 40, HEFT 40, EASY 50, HEFT 50; policy "
                        "labels EASY and HEFT, delta = [0, 10, 20, 30, 40, 50]); the runs have: EASY 0, EASY 10, "
                        "HEFT 0, HEFT 10"), err


# ------------------------------------------------------------------ the replay policy's options
@pytest.mark.parametrize("options, message", [
    # a TypeError "failed in __init__ (.../schedulers/batsim/replay.py, line 136)": gridsched's file
    ({"transcript": 5}, "policy 'replay': option 'transcript' must be the path of a transcript (.jsonl) or a list "
                        "of recorded replies, got 5"),
    # "no" was true: every reply's now checked
    ({"transcript": str(Path(__file__).parent / "fixtures" / "batsim_solver_hang" / "transcript.jsonl"),
      "check_now": "no"}, "policy 'replay': option 'check_now' must be true or false, got 'no'"),
], ids=["transcript-int", "check-now-string"])
def test_replay_options_of_the_wrong_type_are_option_errors(options: dict, message: str) -> None:
    from schedulers.core.policy import PolicyOptionError
    from schedulers.registry import get_policy

    with pytest.raises(PolicyOptionError) as err:
        get_policy("replay", options)
    assert str(err.value) == message
