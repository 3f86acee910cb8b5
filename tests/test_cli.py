"""`gridsched run` as a user runs it: a SWF trace converted on the fly, the fallback workload,
clear errors. Expected numbers worked out by hand below."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from schedulers.cli import main

FIX = Path(__file__).parent / "fixtures"


def test_run_converts_a_swf_trace_and_summarises(tmp_path, capsys):
    # tiny.swf on hetero4.xml (4 hosts of 4 cores -> 4 processors per host), origin = first submit (100 s).
    # Kept: job 1 (t=0, 4 procs -> 1 host, run 50, walltime 60), job 5 (t=5, 16 procs -> 4 hosts, run 50),
    # job 2 (t=10, 8 allocated procs -> 2 hosts, run 120 > walltime 100), job 4 (t=20, 6 procs -> 2 hosts,
    # run 12.5, no walltime). Dropped: 3 and 8 (cancelled), 6 (run 0), 7 (processors unknown).
    # FCFS: 1 on host 0 [0,50]; 5 waits for 4 hosts -> [50,100] on 0-3; 2 on 0-1 at 100, killed at 200;
    # 4 on 2-3 [100,112.5]. Waits 0, 45, 90, 80 -> mean 53.75; makespan 200;
    # bounded slowdowns 1, 95/50, 190/100, 92.5/12.5 -> mean (1 + 1.9 + 1.9 + 7.4) / 4 = 3.05;
    # utilisation (1*50 + 4*50 + 2*100 + 2*12.5) / (4 * 200) = 0.59375.
    out = tmp_path / "run"
    code = main(["run", "--policy", "fcfs", "-p", str(FIX / "hetero4.xml"), "-w", str(FIX / "tiny.swf"),
                 "-o", str(out), "--no-progress"])
    assert code == 0
    rows = {r["job_id"]: r for r in csv.DictReader((out / "out_jobs.csv").open())}
    assert sorted(rows) == ["1", "2", "4", "5"]
    assert (rows["5"]["starting_time"], rows["5"]["allocated_resources"]) == ("50.000000", "0-3")
    assert (rows["2"]["final_state"], rows["2"]["finish_time"]) == ("COMPLETED_WALLTIME_REACHED", "200.000000")
    assert (rows["4"]["allocated_resources"], rows["4"]["finish_time"]) == ("2-3", "112.500000")
    s = json.loads((out / "summary.json").read_text())
    assert s["jobs"] == 4 and s["success"] == 3 and s["killed"] == 1
    assert s["makespan"] == 200 and s["mean_waiting_time"] == pytest.approx(53.75)
    assert s["mean_bounded_slowdown"] == pytest.approx(3.05)
    assert s["utilisation"] == pytest.approx(0.59375) and s["energy_joules"] is None
    assert "makespan              200.0 s" in capsys.readouterr().out


def test_run_falls_back_when_the_trace_is_missing(tmp_path, capsys):
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "walltime": -1, "res": 1,
                                                      "profile": "d"}],
                              "profiles": {"d": {"type": "delay", "delay": 3}}}))
    code = main(["run", "--policy", "easy", "-p", str(FIX / "hetero4.xml"), "-w", str(tmp_path / "absent.swf"),
                 "--fallback-workload", str(wl), "-o", str(tmp_path / "o"), "--no-progress", "-E"])
    captured = capsys.readouterr()
    assert code == 0 and "absent.swf not found" in captured.err
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    # one delay job of 3 s on a1; 4 idle hosts at 100 W for 3 s -> 1200 J
    assert s["makespan"] == 3 and s["energy_joules"] == pytest.approx(1200.0)


def test_run_errors_are_one_clear_line(tmp_path, capsys):
    code = main(["run", "--policy", "nope", "-p", str(FIX / "hetero4.xml"), "-w", str(FIX / "tiny.swf"),
                 "-o", str(tmp_path), "--no-progress"])
    assert code == 2 and "unknown policy 'nope'" in capsys.readouterr().err
    code = main(["run", "--policy", "fcfs", "-p", str(tmp_path / "no.xml"), "-w", str(FIX / "tiny.swf"),
                 "-o", str(tmp_path), "--no-progress"])
    assert code == 2 and "no.xml" in capsys.readouterr().err


def test_a_missing_or_unwritable_path_is_named_without_python_s_errno(tmp_path, capsys):
    # Python words these "[Errno 2] No such file or directory: 'x'"; the line names the path first.
    missing = tmp_path / "trace.swf.gz"
    assert main(["convert", str(missing), "-o", str(tmp_path / "w.json")]) == 2
    assert capsys.readouterr().err == f"gridsched convert: error: {missing}: No such file or directory\n"
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert main(["scenario", "synthetic", "-o", str(blocker / "case")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gridsched: error: {blocker / 'case'}: ") and "Errno" not in err, err


@pytest.mark.parametrize("engine, words", [("embedded", "embedded engine"), ("batsim", "real Batsim")])
def test_the_summary_says_which_simulator_ran(tmp_path, capsys, engine, words):
    import shutil

    if engine == "batsim" and shutil.which("batsim") is None:
        pytest.skip("no batsim on PATH (real Batsim 4.2.1; see docs/guides/real-batsim.md)")
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "o"
    assert main(["run", "--engine", engine, "--policy", "fcfs", "-p", str(root / "docs/examples/four_hosts.xml"),
                 "-w", str(root / "docs/examples/tutorial.json"), "-o", str(out), "--no-progress"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"policy fcfs on four_hosts.xml (4 hosts), {words}; outputs in {out}/"


@pytest.mark.parametrize("command", ["run", "status", "collect", "plot", "report", "generators"])
def test_every_campaign_command_help_says_what_it_does(command, capsys) -> None:
    """`gridsched campaign run --help` (and status, collect, plot, report, generators) printed only
    the usage and the options, without a sentence saying what the command does."""
    with pytest.raises(SystemExit) as stop:
        main(["campaign", command, "--help"])
    assert stop.value.code == 0
    paragraphs = capsys.readouterr().out.split("\n\n")
    assert paragraphs[0].startswith(f"usage: gridsched campaign {command}")
    assert not paragraphs[1].lstrip().startswith(("positional arguments:", "options:")), paragraphs[1]
