"""The benchmark scripts run end to end on tiny workloads (no timing asserts: speed is measured
by ``benchmarks/bench_engine.py`` and ``benchmarks/bench_backlog.py`` themselves, not by tests)."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "bench_engine.py"


def _load_module():
    spec = importlib.util.spec_from_file_location("bench_engine", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_workload_is_as_documented():
    bench = _load_module()
    wl = bench.make_workload(500, seed=3)
    assert wl == bench.make_workload(500, seed=3)  # seeded
    jobs = wl["jobs"]
    assert len(jobs) == 500
    subs = [j["subtime"] for j in jobs]
    assert subs == sorted(subs)
    for j in jobs:
        delay = wl["profiles"][j["profile"]]["delay"]
        assert wl["profiles"][j["profile"]]["type"] == "delay"
        assert 10 <= delay <= 100 and j["res"] == 1
        assert j["walltime"] % 10 == 0 and delay < j["walltime"] <= delay + 10
    assert 0.5 < subs[-1] / len(jobs) < 2  # about one arrival per second


def test_fallback_platform_is_equivalent(tmp_path):
    from schedulers.engine.platform import read_platform

    bench = _load_module()
    gen = read_platform(bench.write_fallback_platform(tmp_path / "p.xml"))
    assert len(gen.compute) == 128 and gen.has_energy and not gen.has_network
    if bench.SHARED_PLATFORM.is_file():
        ref = read_platform(bench.SHARED_PLATFORM)
        assert [h.name for h in gen.compute] == [h.name for h in ref.compute]
        assert [h.speeds for h in gen.compute] == [h.speeds for h in ref.compute]
        assert [h.power for h in gen.compute] == [h.power for h in ref.compute]
        assert [h.sleep_switch for h in gen.compute] == [h.sleep_switch for h in ref.compute]


def test_script_runs_tiny(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", "200", "--policies", "fcfs,easy", "--energy", "both",
         "--trace", "on", "--tracemalloc", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "| policy | jobs |" in proc.stdout
    data = json.loads((tmp_path / "engine.json").read_text())
    rows = data["results"]
    assert {(r["policy"], r["energy"]) for r in rows} == {("fcfs", False), ("fcfs", True),
                                                          ("easy", False), ("easy", True)}
    for r in rows:
        assert r["size"] == 200 and r["trace"] is True
        assert r["check"]["nb_jobs_success"] == 200  # walltime > delay: nothing killed
        assert r["run_s"] > 0 and math.isfinite(r["jobs_per_s"]) and r["maxrss_mb"] > 0
        assert r["tracemalloc_peak_mb"] > 0
    md = (tmp_path / "engine.md").read_text()
    assert "Embedded engine benchmark" in md and "| fcfs | 200 |" in md


def test_backlog_workload_is_as_documented():
    spec = importlib.util.spec_from_file_location("bench_backlog", ROOT / "benchmarks" / "bench_backlog.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    wl = bench.make_workload(2000, seed=3)
    assert wl == bench.make_workload(2000, seed=3)  # seeded
    jobs = wl["jobs"]
    subs = [j["subtime"] for j in jobs]
    assert subs == sorted(subs) and {j["res"] for j in jobs} == set(range(1, 33))
    work = 0.0
    for j in jobs:
        delay = wl["profiles"][j["profile"]]["delay"]
        assert 60 <= delay < 3600 and delay < j["walltime"] <= 3 * delay + 60 and j["walltime"] % 60 == 0
        work += j["res"] * delay
    # submitted work is about twice what 128 hosts can do over the submission period
    assert 1.7 < work / (128 * subs[-1]) < 2.3
    assert bench.MEAN_INTERARRIVAL == pytest.approx(16.5 * 1830 / 256)


def test_backlog_script_runs_tiny(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_backlog.py"), "--sizes", "300", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads((tmp_path / "backlog.json").read_text())["results"]
    assert [(r["policy"], r["size"]) for r in rows] == [("fcfs", 300), ("easy", 300)]
    assert all(r["run_s"] > 0 and len(r["check"]) == 16 for r in rows)
    assert rows[0]["check"] != rows[1]["check"]  # EASY backfills: another schedule
    assert "| easy | 300 |" in (tmp_path / "backlog.md").read_text()


def test_green_benchmark_runs_tiny(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_green.py"), "--jobs", "30", "--loads", "50",
         "--deltas", "10", "--tracemalloc", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads((tmp_path / "green.json").read_text())["results"]
    assert len(rows) == 1
    r = rows[0]
    assert (r["policy"], r["jobs"], r["cpu_load"], r["delta"]) == ("green-easy", 30, 50, 10.0)
    assert r["check"]["nb_jobs_success"] == 30 and r["run_s"] > 0 and r["maxrss_mb"] > 0
    assert r["tracemalloc_peak_mb"] > 0
    assert "| green-easy | 30 | 50 | 10 |" in (tmp_path / "green.md").read_text()


def test_replay_runs_tiny(tmp_path):
    """``--replay``: the whole ``gridsched run -E`` on a file of 300 jobs (300 completed, one row)."""
    proc = subprocess.run([sys.executable, str(SCRIPT), "--replay", "300", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    rep = json.loads((tmp_path / "replay.json").read_text())
    (row,) = rep["results"]
    assert row["checkout"] == "this" and row["jobs"] == 300 and row["energy_joules"] > 0
    assert 0 < row["engine_s"] < row["wall_s"] and row["maxrss_mb"] > 0
    assert "| this | 300 |" in (tmp_path / "replay.md").read_text()


def test_startup_runs_tiny_without_batsim(tmp_path):
    """``bench_startup.py`` without Batsim: gridsched rows only, no ratio claimed."""
    script = ROOT / "benchmarks" / "bench_startup.py"
    proc = subprocess.run([sys.executable, str(script), "--jobs", "200", "--repeat", "2", "--batsim", "",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env=dict(os.environ, PATH="/usr/bin:/bin"))  # no batsim there
    assert proc.returncode == 0, proc.stderr
    rep = json.loads((tmp_path / "startup.json").read_text())
    assert [r["what"] for r in rep["results"]] == ["gridsched", "gridsched"]
    assert rep["meta"]["summary"]["gridsched"]["runs"] == 2 and rep["meta"]["batsim"] is None
    assert "no `batsim` executable found" in (tmp_path / "startup.md").read_text()


def test_swf_benchmark_trace_is_as_documented(tmp_path):
    from schedulers.inputs.swf import read_swf

    spec = importlib.util.spec_from_file_location("bench_swf", ROOT / "benchmarks" / "bench_swf.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    a, b = bench.make_swf(tmp_path / "a.swf", 2000, seed=3), bench.make_swf(tmp_path / "b.swf", 2000, seed=3)
    assert a.read_bytes() == b.read_bytes()  # seeded
    header: dict = {}
    recs = list(read_swf(a, header))
    assert header["MaxProcs"] == "128" and [r.job_id for r in recs] == [str(i) for i in range(1, 2001)]
    subs = [r.submit for r in recs]
    assert subs == sorted(subs) and all(s.is_integer() for s in subs)
    assert 0.9 < subs[-1] / 2000 < 1.1  # about one arrival per second
    for r in recs:
        assert 10 <= r.run <= 99 and r.run.is_integer() and r.requested == r.allocated in (1, 2, 3, 4)
        assert r.requested_time == 10 * (r.run // 10 + 1) and r.status == 1
        assert r.user is not None and 1 <= int(r.user[1:]) <= 100
    assert 0.85 < sum(r.requested == 1 for r in recs) / 2000 < 0.95


def test_swf_benchmark_runs_tiny(tmp_path):
    """``bench_swf.py``: the whole ``gridsched run -E`` on a generated trace of 300 job lines."""
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_swf.py"), "--jobs", "300", "--no-lanl",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    rep = json.loads((tmp_path / "swf.json").read_text())
    (row,) = rep["results"]
    assert (row["case"], row["jobs"], row["round"]) == ("synthetic", 300, 0) and str(ROOT) in row["checkout"]
    assert 0 < row["engine_s"] < row["wall_s"] and row["maxrss_mb"] > 0 and row["energy_joules"] > 0
    assert rep["meta"]["same_results"] == {"synthetic": True}
    assert "| synthetic |" in (tmp_path / "swf.md").read_text()


@pytest.mark.skipif(not (ROOT.parent / "shared" / "data" / "batsim-examples" / "cluster_energy_128.xml").exists(),
                    reason="../shared/data/batsim-examples is absent")
def test_network_mode_runs_both_platforms(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--network", "--sizes", "200", "--policies", "fcfs",
                           "--energy", "on", "--trace", "off", "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads((tmp_path / "network.json").read_text())["results"]
    assert len(rows) == 1
    flat, net = rows[0]["compute_only"], rows[0]["network"]
    assert flat["size"] == net["size"] == 200
    # the same jobs on both platforms, each message a SimGrid action on the network one
    assert net["messages"] >= 200 and flat["messages"] >= 200


def test_bench_gym_runs_tiny(tmp_path):
    pytest.importorskip("gymnasium", reason="gymnasium is not installed (pip install 'gridsched[gym]')")
    script = ROOT / "benchmarks" / "bench_gym.py"
    proc = subprocess.run([sys.executable, str(script), "--jobs", "200", "--repeats", "1", "--energy", "both",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads((tmp_path / "gym.json").read_text())
    assert {"date", "python", "machine"} <= set(data["machine"])
    rows = {(r["case"], r["energy"]): r for r in data["rows"]}
    assert set(rows) == {(c, e) for c in ("simulate", "env fcfs", "env random") for e in (False, True)}
    for e in (False, True):
        assert rows[("env fcfs", e)]["steps"] == 200            # one start decision per one-host job
        assert rows[("env random", e)]["steps"] >= 200          # the random agent also waits
        assert rows[("env fcfs", e)]["end_time"] == rows[("simulate", e)]["end_time"]
    assert "| env fcfs | on |" in (tmp_path / "gym.md").read_text()


def test_the_shutdown_benchmark_shows_commands_a_shell_runs_as_they_are():
    """``--show`` prints each configuration as a command to paste: the JSON of ``--policy-options``
    quoted, so the shell hands it over as one argument."""
    import shlex

    script = ROOT / "benchmarks" / "bench_shutdown.py"
    proc = subprocess.run([sys.executable, str(script), "--show", "--policies", "easy", "--timeouts", "off,300"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    if proc.returncode == 2 and "needs ../shared" in proc.stderr:
        pytest.skip("the benchmark's trace is in ../shared, which is absent")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2
    argv = shlex.split(lines[1])
    assert argv[argv.index("--policy-options") + 1] == '{"idle_timeout": 300.0}'
    assert "--policy-options" not in shlex.split(lines[0])


def _backlog_module():
    spec = importlib.util.spec_from_file_location("bench_backlog", ROOT / "benchmarks" / "bench_backlog.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_backlog_goal_lines_set_each_policy_against_easy():
    """The goals below the table: run time over EASY's of the same invocation, size and owners
    (2.5 = 5.0 / 2.0; 4.0 = 4.0 / 1.0 on the owned platform, against its own EASY; a stopped run's
    ratio is a lower bound and never meets its goal)."""
    bench = _backlog_module()
    base = {"run": "t0", "setup_s": 0.1, "maxrss_mb": 30.0}
    rows = [{**base, "policy": "easy", "size": 10_000, "run_s": 2.0},
            {**base, "policy": "buc", "size": 10_000, "run_s": 5.0},
            {**base, "policy": "conservative", "size": 10_000, "run_s": 300.0, "stopped_after_s": 300.0},
            {**base, "policy": "heft:reservations=8", "size": 10_000, "run_s": 6.2},
            {**base, "policy": "easy", "size": 10_000, "owned": True, "run_s": 1.0},
            {**base, "policy": "hosep", "size": 10_000, "owned": True, "run_s": 4.0},
            {**base, "policy": "buc", "size": 3_000, "run_s": 9.0}]          # not a goal size
    assert bench._goals(rows) == [
        "- buc at 10,000 jobs: 2.50x EASY (goal <= 3x): met",
        "- conservative at 10,000 jobs: stopped after 300 s, over 150.0x EASY (goal <= 3x): NOT met",
        "- heft:reservations=8 at 10,000 jobs: 3.10x EASY (goal <= 3x): NOT met",
        "- hosep (owned) at 10,000 jobs: 4.00x EASY (goal <= 5x): met",
    ]


def test_backlog_time_limit_stops_a_run_and_says_so(tmp_path):
    """``--time-limit``: classic conservative on 1,000 backlogged jobs takes about 30 times EASY's
    0.2 s (5.7 s, ``benchmarks/results/conservative/README.md``); stopped after 1.5 s of engine
    time, its row says so and its ratio to EASY is a lower bound."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_backlog.py"), "--sizes", "1000",
         "--policies", "easy,conservative", "--time-limit", "1.5", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads((tmp_path / "backlog.json").read_text())["results"]
    easy, cons = rows
    assert easy["policy"] == "easy" and easy.get("stopped_after_s") is None and easy["check"]
    assert cons["policy"] == "conservative" and cons["stopped_after_s"] == 1.5 and cons["run_s"] == 1.5
    assert cons["check"] is None and cons["makespan"] is None
    md = (tmp_path / "backlog.md").read_text()
    assert "| conservative | 1,000 |" in md and "> 1.5 (stopped)" in md
    assert f"| > {1.5 / easy['run_s']:.2f} |" in md
    assert "stopped after 1.5 s" in proc.stdout


def test_backlog_time_limit_must_be_positive(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_backlog.py"), "--sizes", "10", "--time-limit", "0",
         "--out", str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2
    assert "--time-limit must be a number of seconds > 0, got 0.0" in proc.stderr.splitlines()[-1]
