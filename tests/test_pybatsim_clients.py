"""pybatsim 4.0.0a0's own schedulers — real Batsim clients no one here wrote — run to completion on
``gridsched engine`` (Batsim's side of the protocol over ZeroMQ).

``filler`` consumes simulated scheduling time: its replies carry a ``now`` later than Batsim's,
which the engine plays as Batsim does (decisions at their timestamps, the scheduler busy until
its ``now``). ``random`` places jobs on random hosts, so it needs compute sharing.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
from pathlib import Path

import pytest

from schedulers.engine import build_engine
from schedulers.engine.outputs import write_outputs
from schedulers.engine.zmq_client import ZmqPort

from helpers_cli import engine_with_client
from test_engine_zmq import free_port

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
INPUTS = SHARED / "batsim-4.2.1" / "inputs"
PYBATSIM = shutil.which("pybatsim")

pytestmark = [
    pytest.mark.skipif(PYBATSIM is None, reason="pybatsim 4.0.0a0 is not installed (pip install --no-deps pybatsim==4.0.0a0)"),
    pytest.mark.skipif(not INPUTS.exists(), reason="../shared/batsim-4.2.1 is absent (demo_small.json)"),
]


def run_client(name: str, tmp_path: Path, *, sharing: bool = False) -> list[dict]:
    port = free_port()
    sched = subprocess.Popen([PYBATSIM, name, "-s", f"tcp://127.0.0.1:{port}", "-t", "20000"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        engine = build_engine(INPUTS / "energy_platform_homogeneous_no_net.xml", [INPUTS / "demo_small.json"],
                              energy=True, compute_sharing=sharing)
        zport = ZmqPort(f"tcp://127.0.0.1:{port}", timeout=20)
        try:
            result = engine.run(zport)
        finally:
            zport.close()
        write_outputs(result, tmp_path / "out_", energy=True)
        sched.wait(timeout=20)
    finally:
        if sched.poll() is None:
            sched.kill()
        out = sched.communicate()[0]
    assert sched.returncode == 0, f"pybatsim {name} failed:\n{out[-2000:]}"
    return list(csv.DictReader((tmp_path / "out_jobs.csv").open()))


def check_rows(rows: list[dict], *, sharing: bool) -> None:
    # demo_small.json has 6 jobs; every one ends (no scheduler here rejects) after its submission.
    assert sorted(r["job_id"] for r in rows) == ["0", "1", "2", "3", "4", "5"]
    spans = []
    for r in rows:
        start, fin, sub = float(r["starting_time"]), float(r["finish_time"]), float(r["submission_time"])
        assert start >= sub
        assert fin == pytest.approx(start + float(r["execution_time"]), abs=1e-6)
        spans += [(h, start, fin) for h in r["allocated_resources"].split()]
    if not sharing:  # without compute sharing no host runs two jobs at once
        for h, s, f in spans:
            assert not any(h == h2 and s < f2 and s2 < f and (s, f) != (s2, f2) for h2, s2, f2 in spans)


@pytest.mark.parametrize("name", ["backfill-easy", "filler-events"])
def test_pybatsim_scheduler_runs_on_the_engine(name, tmp_path):
    check_rows(run_client(name, tmp_path), sharing=False)


def test_pybatsim_filler_with_decision_delays_runs_on_the_engine(tmp_path):
    rows = run_client("filler", tmp_path)
    check_rows(rows, sharing=False)
    # filler takes simulated time to decide: jobs start after Batsim's message time, so some job
    # starts strictly after its submission although hosts were free (demo_small: job 0 at 0 s).
    first = min(rows, key=lambda r: float(r["submission_time"]))
    assert float(first["starting_time"]) > float(first["submission_time"])


def test_pybatsim_random_runs_on_the_engine_with_compute_sharing(tmp_path):
    check_rows(run_client("random", tmp_path, sharing=True), sharing=True)


def test_pybatsim_filler_events_takes_generic_events_through_gridsched_engine(tmp_path):
    # `gridsched engine --events F --forward-unknown-events` must say so in SIMULATION_BEGINS:
    # pybatsim reads it there, and otherwise stops at the first generic event ("Unknown NOTIFY
    # type operator_note"). Hosts 3-4 are unavailable from 8 s to 50 s and 120.5 s.
    from procset import ProcSet

    fix = Path(__file__).parent / "fixtures" / "batsim_clients"
    proc, code, out = engine_with_client(
        [PYBATSIM, "filler-events", "-s", "tcp://127.0.0.1:{PORT}", "-t", "60000"],
        ["-p", fix / "platform.xml", "-w", fix / "workload.json", "--events", fix / "events.txt",
         "--forward-unknown-events", "-e", tmp_path / "out", "--timeout", "60"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert code == 0 and "Unknown NOTIFY" not in out, out[-2000:]
    rows = list(csv.DictReader((tmp_path / "out_jobs.csv").open()))
    assert len(rows) == 16
    for r in rows:
        start, hosts = float(r["starting_time"]), ProcSet.from_str(r["allocated_resources"])
        assert not (8 <= start < 50 and hosts & ProcSet((3, 4))), r
        assert not (8 <= start < 120.5 and 4 in hosts), r
