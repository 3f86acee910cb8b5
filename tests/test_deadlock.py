"""A run that deadlocks (jobs submitted and never executed, nothing left to simulate): real Batsim
4.2.1 is stopped by SimGrid's deadlock detection ("Oops! Deadlock detected", ``EngineImpl::run``,
SimGrid 3.32), sends no SIMULATION_ENDS, writes its output files anyway
(``finalize_batsim_outputs`` after ``engine.run()``, ``src/batsim.cpp``) and exits 0. The engine
does the same (``schedulers.engine.ports.Deadlock``); ``gridsched run`` writes the same files and
then stops with one error line.

Recorded on real Batsim 4.2.1 (2026-11-24, fixtures/batsim_network/dead_*): a scheduler that runs
each job at once on hosts 0..res-1 (compute sharing) but never the third, sixth... submitted job;
``batsim -p PLATFORM -w WORKLOAD --enable-compute-sharing [-E]``. On ``cluster_energy_128.xml``
(with ``-E``) 59 of the 80 jobs run reach their walltime while sharing hosts, so the case also
checks the held tasks of ``engine/execution.py``.
"""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from schedulers.cli import main
from schedulers.core.policy import Policy
from schedulers.engine import Deadlock, EngineError, simulate
from test_engine_zmq import free_port
from test_network import EXAMPLES, REC, assert_same_rows, needs_examples

ROOT = Path(__file__).resolve().parents[1]


class SkipThird(Policy):
    """Every job at once on hosts 0..res-1, except every third submitted job, never executed."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0

    def on_job_submitted(self, job) -> None:
        self.seen += 1
        if self.seen % 3:
            self.execute(job, range(job.res))


def schedule_row(path: Path) -> dict[str, str]:
    return next(csv.DictReader(open(path)))


def assert_same_schedule(got: Path, want: Path) -> None:
    """out_schedule.csv: every column but the wall-clock ones, numbers within 1e-4 (energies 1e-6
    relative)."""
    g, w = schedule_row(got), schedule_row(want)
    assert set(g) == set(w)
    for col, wv in w.items():
        if col in ("scheduling_time", "simulation_time"):
            continue
        if col == "batsim_version":
            assert g[col] == wv
        elif col == "consumed_joules":
            assert math.isclose(float(g[col]), float(wv), rel_tol=1e-6, abs_tol=1e-9), col
        else:
            assert abs(float(g[col]) - float(wv)) <= 1e-4, (col, g[col], wv)


@needs_examples
@pytest.mark.parametrize("case,platform,workload,energy,when", [
    ("dead_small", "small_platform.xml", "small_workload.json", False, 1014.735015),
    ("dead_e128", "cluster_energy_128.xml", "e128_workload.json", True, 1450.150291),
])
def test_a_deadlocked_run_writes_the_files_batsim_writes(case, platform, workload, energy, when, tmp_path):
    with pytest.raises(Deadlock) as err:
        simulate(EXAMPLES / platform, [REC / workload], SkipThird(), energy=energy, compute_sharing=True,
                 export_prefix=tmp_path / "out_")
    # the clock SimGrid stopped at (Batsim's log: "[1450.150291] ... Deadlock detected")
    assert err.value.result.end_time == pytest.approx(when, abs=1e-6)
    skipped = 40 if energy else 20  # every third of 120 / 60 jobs
    assert f"never executed or rejected {skipped} submitted job(s)" in str(err.value)
    files = sorted(REC.glob(f"{case}_*.csv"))
    assert len(files) == (5 if energy else 3)
    for f in files:
        got = tmp_path / f"out_{f.name[len(case) + 1:]}"
        if f.name.endswith("_schedule.csv"):
            assert_same_schedule(got, f)
        else:
            assert_same_rows(got, f)
    # only the jobs that ended are written: 40 of 60, 80 of 120
    assert schedule_row(tmp_path / "out_schedule.csv")["nb_jobs"] == ("80" if energy else "40")


def test_deadlock_timeline_by_hand(tmp_path):
    # hetero4.xml (no links): a (delay 10 s) at t = 0, run at once on host 0; b at t = 5, never run.
    # a ends at 10; then nothing is left: the clock stops at 10 (not at a stale timer). Batsim's
    # files: a's row only; time_computing 10 s (host 0), time_idle 0 (a host's time in a state is
    # added when it leaves the state: host 0 left idle at 0, the others never did).
    wl = {"nb_res": 4, "jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "d"},
                                {"id": "b", "subtime": 5, "res": 1, "profile": "d"}],
          "profiles": {"d": {"type": "delay", "delay": 10}}}

    class OnlyA(Policy):
        def on_job_submitted(self, job) -> None:
            if job.id.endswith("!a"):
                self.execute(job, [0])

    with pytest.raises(EngineError, match=r"deadlock at t=10: .*1 submitted job\(s\) \(e\.g\. w0!b\)") as err:
        simulate(ROOT / "tests" / "fixtures" / "hetero4.xml", [wl], OnlyA(), export_prefix=tmp_path / "out_")
    res = err.value.result
    assert res.end_time == pytest.approx(10.0, abs=1e-6) and [j.id for j in res.jobs] == ["w0!a"]
    rows = list(csv.DictReader(open(tmp_path / "out_jobs.csv")))
    assert [r["job_id"] for r in rows] == ["a"] and float(rows[0]["finish_time"]) == pytest.approx(10, abs=1e-6)
    s = schedule_row(tmp_path / "out_schedule.csv")
    assert (s["nb_jobs"], s["nb_jobs_finished"], s["nb_jobs_success"]) == ("1", "1", "1")
    assert float(s["makespan"]) == pytest.approx(10, abs=1e-6)
    assert float(s["time_computing"]) == pytest.approx(10, abs=1e-6) and float(s["time_idle"]) == pytest.approx(0, abs=1e-6)


ASLEEP = ("<platform version='4.1'><zone id='z' routing='Full'>"
          "<host id='master_host' speed='1Gf'><prop id='wattage_per_state' value='100:200'/></host>"
          "<host id='h0' speed='1Gf'><prop id='wattage_per_state' value='100:200'/></host>"
          "<host id='h1' pstate='1' speed='1Gf, 1f, 1f'><prop id='wattage_per_state' value='100:200, 9:9, 50:50'/>"
          "<prop id='sleep_pstates' value='1:2:2'/></host></zone></platform>")
TWO_JOBS = {"nb_res": 2, "jobs": [{"id": "a", "subtime": 0, "res": 1, "walltime": 100, "profile": "d"},
                                  {"id": "b", "subtime": 0, "res": 2, "walltime": 100, "profile": "d"}],
            "profiles": {"d": {"type": "delay", "delay": 10}}}


def test_run_command_writes_batsim_files_then_one_error_line(tmp_path, capsys):
    # h1 starts asleep and EASY never wakes it: a runs on h0 (0-10 s), b (2 hosts) waits forever
    (tmp_path / "p.xml").write_text(ASLEEP)
    (tmp_path / "w.json").write_text(json.dumps(TWO_JOBS))
    out = tmp_path / "out"
    code = main(["run", "--policy", "easy", "-p", str(tmp_path / "p.xml"), "-w", str(tmp_path / "w.json"),
                 "-E", "-o", str(out), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("gridsched: error: deadlock at t=10")
    assert "w0!b" in err[0] and "1 of 2 hosts are asleep" in err[0] and f"are in {out}/" in err[0]
    rows = list(csv.DictReader(open(out / "out_jobs.csv")))
    assert [r["job_id"] for r in rows] == ["a"]
    assert (out / "out_consumed_energy.csv").exists() and not (out / "summary.json").exists()


def test_engine_command_at_a_deadlock_exits_0_with_the_files(tmp_path):
    # `gridsched engine` plays Batsim: at a deadlock it writes the files and exits 0, and the
    # scheduler (a raw ZeroMQ REP socket here, executing only job a) gets no SIMULATION_ENDS
    import zmq

    (tmp_path / "w.json").write_text(json.dumps(TWO_JOBS))
    port = free_port()
    seen: list[dict] = []
    stop = threading.Event()

    def scheduler() -> None:
        ctx = zmq.Context()
        s = ctx.socket(zmq.REP)
        s.bind(f"tcp://127.0.0.1:{port}")
        try:
            while not stop.is_set():
                if not s.poll(50):
                    continue
                msg = json.loads(s.recv())
                seen.append(msg)
                out = [{"timestamp": msg["now"], "type": "EXECUTE_JOB", "data": {"job_id": e["data"]["job_id"],
                                                                                  "alloc": "0"}}
                       for e in msg["events"] if e["type"] == "JOB_SUBMITTED" and e["data"]["job_id"] == "w0!a"]
                s.send_string(json.dumps({"now": msg["now"], "events": out}))
        finally:
            s.close(0)
            ctx.term()

    th = threading.Thread(target=scheduler, daemon=True)
    th.start()
    proc = subprocess.run([sys.executable, "-m", "schedulers.cli", "engine", "-p", str(ROOT / "tests" / "fixtures" / "hetero4.xml"),
                           "-w", str(tmp_path / "w.json"), "-e", str(tmp_path / "out"), "-s", f"tcp://127.0.0.1:{port}",
                           "--timeout", "30"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    stop.set()
    th.join(10)
    assert proc.returncode == 0, proc.stderr
    assert "deadlock at t=10" in proc.stderr and "no SIMULATION_ENDS" in proc.stderr
    assert not any(e["type"] == "SIMULATION_ENDS" for m in seen for e in m["events"])
    rows = list(csv.DictReader(open(tmp_path / "out_jobs.csv")))
    assert [r["job_id"] for r in rows] == ["a"]
    assert schedule_row(tmp_path / "out_schedule.csv")["nb_jobs"] == "1"
