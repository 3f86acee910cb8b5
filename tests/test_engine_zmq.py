"""The engine playing Batsim over ZeroMQ against our own scheduler server: same results as the
in-process path, and the two commands (`gridsched engine`, `gridsched serve`) work together as
separate processes, the way a user runs an external scheduler."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from schedulers.batsim.runner import free_tcp_endpoint
from schedulers.batsim.server import serve
from schedulers.engine import build_engine, simulate, write_outputs
from schedulers.engine.zmq_client import SchedulerUnreachable, ZmqPort
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures"
WORKLOAD = {
    "nb_res": 4,
    "jobs": [
        {"id": "a", "subtime": 0, "walltime": 20, "res": 2, "profile": "c"},
        {"id": "b", "subtime": 1, "walltime": 50, "res": 3, "profile": "d"},
        {"id": "c", "subtime": 2, "walltime": 5, "res": 1, "profile": "d"},
        {"id": "d", "subtime": 3, "walltime": -1, "res": 4, "profile": "c"},
    ],
    "profiles": {"c": {"type": "parallel_homogeneous", "cpu": 5e8, "com": 0},
                 "d": {"type": "delay", "delay": 7.5}},
}


def free_port() -> int:
    return int(free_tcp_endpoint().rsplit(":", 1)[1])


@pytest.mark.parametrize("policy", ["fcfs", "easy"])
def test_zmq_run_equals_in_process_run(policy, tmp_path):
    simulate(FIX / "hetero4.xml", [WORKLOAD], get_policy(policy), energy=True, export_prefix=tmp_path / "a_")
    port = free_port()
    stats = {}
    th = threading.Thread(target=lambda: stats.setdefault(
        "s", serve(get_policy(policy), f"tcp://127.0.0.1:{port}", connect_timeout=20, idle_timeout=20)), daemon=True)
    th.start()
    zport = ZmqPort(f"tcp://127.0.0.1:{port}", timeout=20)
    try:
        engine = build_engine(FIX / "hetero4.xml", [WORKLOAD], energy=True)
        write_outputs(engine.run(zport), tmp_path / "b_", energy=True)
    finally:
        zport.close()
    th.join(20)
    assert not th.is_alive() and stats["s"].messages >= 5
    for name in ("jobs.csv", "machine_states.csv", "consumed_energy.csv", "pstate_changes.csv"):
        assert (tmp_path / f"a_{name}").read_text() == (tmp_path / f"b_{name}").read_text(), name


def test_engine_times_out_without_scheduler():
    port = ZmqPort(f"tcp://127.0.0.1:{free_port()}", timeout=0.3)
    engine = build_engine(FIX / "hetero4.xml", [WORKLOAD])
    try:
        with pytest.raises(SchedulerUnreachable, match="no reply from the scheduler"):
            engine.run(port)
    finally:
        port.close()


def test_engine_and_serve_commands_as_processes(tmp_path):
    wl = tmp_path / "w.json"
    import json
    wl.write_text(json.dumps(WORKLOAD))
    port = free_port()
    (tmp_path / "out").mkdir()   # (-e out/out: as real Batsim, the engine writes in an existing folder)
    exe = [sys.executable, "-m", "schedulers.cli"]
    sched = subprocess.Popen(exe + ["serve", "--policy", "easy", "--socket", f"tcp://127.0.0.1:{port}",
                                    "--connect-timeout", "30", "--idle-timeout", "30"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        eng = subprocess.run(exe + ["engine", "-p", str(FIX / "hetero4.xml"), "-w", str(wl), "-E",
                                    "-s", f"tcp://127.0.0.1:{port}", "-e", str(tmp_path / "out" / "out"),
                                    "--timeout", "30"], capture_output=True, text=True, timeout=60)
        assert eng.returncode == 0, eng.stderr
        assert sched.wait(timeout=30) == 0, sched.stderr.read()
    finally:
        if sched.poll() is None:
            sched.kill()
    rows = (tmp_path / "out" / "out_jobs.csv").read_text().splitlines()
    assert len(rows) == 5 and rows[0].startswith("job_id,")


@pytest.mark.parametrize("value, shown", [("-1", "-1"), ("nan", "nan"), ("-inf", "-inf")])
def test_engine_command_refuses_negative_timeout(tmp_path, capsys, value, shown):
    # before: --timeout -1 made ZMQ wait forever (a negative poll timeout), silently; the inputs
    # are not even read (the workload path does not exist)
    from schedulers.cli import main

    status = main(["engine", "-p", str(FIX / "hetero4.xml"), "-w", str(tmp_path / "missing.json"),
                   "-s", f"tcp://127.0.0.1:{free_port()}", f"--timeout={value}"])
    err = capsys.readouterr().err.splitlines()
    assert status == 2
    assert err == [f"gridsched: error: --timeout must be a number of seconds >= 0 (0 or inf: wait forever "
                   f"for each reply, as Batsim), got {shown}"]


def test_zmq_port_timeouts():
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    for bad in (0, -1, -0.5, float("nan"), True, "5"):
        with pytest.raises(ValueError, match=r"timeout must be a number of seconds > 0 \(or None / inf"):
            ZmqPort(endpoint, timeout=bad)
    for forever in (None, float("inf")):
        port = ZmqPort(endpoint, timeout=forever)
        try:
            assert port.timeout is None
        finally:
            port.close()
    # a timeout longer than ZMQ's int milliseconds is waited in slices (it used to overflow)
    port = ZmqPort(endpoint, timeout=1e300)
    port.close()
    assert port.timeout == 1e300
