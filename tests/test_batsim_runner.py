"""Tests of the real-Batsim runner (``schedulers.batsim.runner``) with a fake ``batsim`` executable.

The fake is a small Python script written into ``tmp_path/bin/batsim`` and put first on PATH. It
parses Batsim 4.x's flags (``-p -w -e -E -s``), connects to our scheduler like Batsim (ZMQ REQ,
Batsim speaks first) and replays the ``batsim->sched`` messages of a run recorded on real Batsim
4.2.1 (``shared/batsim-4.2.1/transcripts``, read in place), then writes a dummy
``<-e>_jobs.csv``. Its behaviour is chosen by ``FAKE_BATSIM_MODE``: ``ok``; ``exit`` (fails at
once, status 3); ``die`` (crashes mid-run, status 4); ``hang`` (stops talking, waits forever, as
Batsim does when the scheduler dies); ``garbage`` (sends a non-JSON message, then waits forever
for the answer). The process handling of the runner (start, timeouts, kill, exit statuses,
missing binary) is thus tested for real. Every wait is bounded: the fake kills itself after
``FAKE_BATSIM_MAX_S`` seconds whatever happens.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import threading
import time
from pathlib import Path

import pytest

from schedulers.batsim.runner import (
    BatsimNotFound,
    BatsimRunError,
    BatsimRunTimeout,
    add_batsim_run_args,
    batsim_command,
    batsim_export_prefix,
    batsim_kwargs_from_args,
    connect_endpoint,
    find_batsim,
    free_tcp_endpoint,
    run_with_batsim,
)
from schedulers.batsim.protocol import ProtocolError
from schedulers.batsim.replay import scheduler_messages
from schedulers.easy import EASY

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPT = ROOT.parent / "shared" / "batsim-4.2.1" / "transcripts" / "pybatsim_easyBackfill_energy128_various.jsonl"

PLATFORM_128 = ROOT.parent / "shared" / "data" / "batsim-examples" / "energy_platform_homogeneous_no_net_128.xml"
needs_transcript = pytest.mark.skipif(not TRANSCRIPT.is_file(), reason=f"{TRANSCRIPT} not found")
posix_only = pytest.mark.skipif(os.name != "posix", reason="the fake batsim is a POSIX executable script")

FAKE_BATSIM = '''\
#!{python}
"""Fake Batsim 4.x (test helper): replays recorded Batsim messages to the scheduler."""
import argparse, json, os, signal, sys, time
import zmq

signal.alarm(int(os.environ.get("FAKE_BATSIM_MAX_S", "60")))  # never outlive the test
p = argparse.ArgumentParser(prog="batsim")
p.add_argument("-p", "--platform", required=True)
p.add_argument("-w", "--workload", action="append", default=[])
p.add_argument("-e", "--export", default="out")
p.add_argument("-E", "--energy", action="store_true")
p.add_argument("-s", "--socket-endpoint", default="tcp://localhost:28000")
args, extra = p.parse_known_args()
mode = os.environ.get("FAKE_BATSIM_MODE", "ok")
record_path = os.environ["FAKE_BATSIM_RECORD"]
record = {{"argv": sys.argv[1:], "pid": os.getpid(), "extra": extra, "replies": []}}

def save():
    with open(record_path, "w") as f:
        json.dump(record, f)

save()
print("fake batsim starting", flush=True)
for f in [args.platform] + args.workload:
    if not os.path.isfile(f):
        print("cannot open", f, file=sys.stderr)
        sys.exit(2)
if mode == "exit":
    print("fatal: invalid platform (simulated)", file=sys.stderr)
    sys.exit(3)
msgs = []
if mode == "garbage":
    msgs = ["this is not JSON"]
elif os.path.isfile(os.environ["FAKE_BATSIM_TRANSCRIPT"]):
    with open(os.environ["FAKE_BATSIM_TRANSCRIPT"]) as f:
        for line in f:
            rec = json.loads(line)
            if rec["dir"] == "batsim->sched":
                msgs.append(rec["raw"])
else:  # no recording (../shared absent): one minimal message is enough for the hang/connect modes
    msgs = ['{{"now":0.000000,"events":[]}}']
ctx = zmq.Context()
sock = ctx.socket(zmq.REQ)
sock.setsockopt(zmq.LINGER, 0)
if mode == "ok":
    sock.setsockopt(zmq.RCVTIMEO, 20000)  # modes hang/garbage wait forever, like Batsim
sock.connect(args.socket_endpoint)
for i, m in enumerate(msgs):
    if mode == "die" and i == 3:
        print("simulated crash", file=sys.stderr, flush=True)
        os._exit(4)
    sock.send_string(m)
    record["replies"].append(sock.recv_string())
    save()
    if mode == "hang":
        time.sleep(3600)
with open(args.export + "_jobs.csv", "w") as f:
    f.write("job_id,workload_name,profile,submission_time\\n")
with open(args.export + "_schedule.csv", "w") as f:
    f.write("nb_jobs\\n9\\n")
print("fake batsim done", flush=True)
sock.close(linger=0)
ctx.term()
sys.exit(0)
'''


@pytest.fixture
def fake_batsim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """Install the fake ``batsim`` first on PATH; returns paths and a mode setter."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "batsim"
    exe.write_text(FAKE_BATSIM.format(python=sys.executable), encoding="utf-8")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    record = tmp_path / "record.json"
    monkeypatch.setenv("FAKE_BATSIM_RECORD", str(record))
    monkeypatch.setenv("FAKE_BATSIM_TRANSCRIPT", str(TRANSCRIPT))
    monkeypatch.setenv("FAKE_BATSIM_MAX_S", "40")
    monkeypatch.setenv("FAKE_BATSIM_MODE", "ok")
    platform = tmp_path / "platform.xml"
    # the platform the transcript was recorded on: the runner's server reads it (host speeds and
    # cores for the policy) and checks it against SIMULATION_BEGINS (same hosts)
    # (without ../shared the transcript tests are skipped; the others only need a file there)
    platform.write_bytes(PLATFORM_128.read_bytes() if PLATFORM_128.is_file() else
                         b"<platform version='4.1'><zone id='z' routing='Full'><host id='master_host' speed='1Gf'/>"
                         b"<host id='h0' speed='1Gf'/></zone></platform>\n")
    workload = tmp_path / "workload.json"
    workload.write_text('{"nb_res": 128, "jobs": [], "profiles": {}}\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    def mode(m: str) -> None:
        monkeypatch.setenv("FAKE_BATSIM_MODE", m)

    return {"exe": exe, "record": record, "platform": "platform.xml", "workload": "workload.json",
            "mode": mode, "tmp": tmp_path}


class ReadersEASY(EASY):
    """EASY recording the threads that read ``simulation_ended`` (only the server thread may)."""

    @property
    def simulation_ended(self) -> bool:
        self.__dict__.setdefault("readers", set()).add(threading.current_thread().name)
        return self._ended

    @simulation_ended.setter
    def simulation_ended(self, value: bool) -> None:
        self._ended = value


def read_record(fake: dict) -> dict:
    return json.loads(fake["record"].read_text(encoding="utf-8"))


def assert_dead(pid: int) -> None:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return
    raise AssertionError(f"fake batsim (pid {pid}) is still running")


# -------------------------------------------------------------------------------- helpers
def test_helpers() -> None:
    assert batsim_export_prefix("out/run/out_") == "out/run/out"
    assert batsim_export_prefix("out/run/out") == "out/run/out"
    assert connect_endpoint("tcp://*:28000") == "tcp://localhost:28000"
    assert connect_endpoint("tcp://0.0.0.0:1234") == "tcp://localhost:1234"
    assert connect_endpoint("tcp://127.0.0.1:28000") == "tcp://127.0.0.1:28000"
    assert connect_endpoint("ipc:///tmp/x") == "ipc:///tmp/x"
    with pytest.raises(ValueError, match="port"):
        connect_endpoint("tcp://127.0.0.1:*")
    assert free_tcp_endpoint().startswith("tcp://127.0.0.1:")
    assert batsim_command("/b/batsim", "p.xml", ["w0.json", "w1.json"], "out/out", energy=True,
                          endpoint="tcp://localhost:28000", extra_args=["--enable-compute-sharing"]) == [
        "/b/batsim", "-p", "p.xml", "-w", "w0.json", "-w", "w1.json", "-e", "out/out", "-E",
        "-s", "tcp://localhost:28000", "--enable-compute-sharing"]
    assert "-E" not in batsim_command("b", "p", ["w"], "o", energy=False, endpoint="tcp://h:1")


def test_cli_args() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--compute-sharing", action="store_true")
    add_batsim_run_args(parser)
    args = parser.parse_args(["--batsim", "/opt/batsim", "--batsim-socket", "tcp://127.0.0.1:29000",
                              "--batsim-arg=--mmax=4", "--compute-sharing", "--timeout", "50"])
    assert batsim_kwargs_from_args(args) == {
        "batsim": "/opt/batsim", "socket": "tcp://127.0.0.1:29000", "connect_timeout": 60.0,
        "extra_batsim_args": ("--mmax=4", "--enable-compute-sharing"), "timeout": 50.0}


def test_missing_batsim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BatsimNotFound, match="docker compose") as info:
        find_batsim()
    assert "embedded" in str(info.value) and isinstance(info.value, FileNotFoundError)
    with pytest.raises(BatsimNotFound, match="does not exist"):
        find_batsim(tmp_path / "nowhere" / "batsim")
    (tmp_path / "p.xml").write_text("<platform/>")
    with pytest.raises(BatsimNotFound):
        run_with_batsim(tmp_path / "p.xml", tmp_path / "p.xml", "easy", {}, str(tmp_path / "out_"), energy=False,
                        timeout=5)


# ------------------------------------------------------------------------ with the fake batsim
@posix_only
@needs_transcript
def test_run_ok(fake_batsim: dict) -> None:
    endpoint = free_tcp_endpoint()
    lines: list[str] = []
    res = run_with_batsim(fake_batsim["platform"], [fake_batsim["workload"]], "easy", {}, "out/run/out_",
                          energy=True, socket=endpoint, timeout=30, log=lines.append)
    assert res.ok and res.returncode == 0
    assert res.stats is not None and res.stats.ended and res.stats.messages == 19
    assert isinstance(res.policy, EASY) and res.policy.simulation_ended
    rec = read_record(fake_batsim)
    assert rec["argv"] == ["-p", "platform.xml", "-w", "workload.json", "-e", "out/run/out", "-E", "-s", endpoint]
    # our EASY answers exactly what pybatsim's EASY answered in the recorded real run
    assert rec["replies"] == scheduler_messages(TRANSCRIPT)
    assert set(res.output_files()) == {"jobs", "schedule"}
    assert res.output_files()["jobs"] == Path("out/run/out_jobs.csv")
    assert "fake batsim done" in res.log_path.read_text() and res.log_path == Path("out/run/out_batsim.log")
    assert any("waiting for Batsim" in ln for ln in lines)
    assert_dead(rec["pid"])


@posix_only
@needs_transcript
def test_wildcard_bind_and_free_port(fake_batsim: dict) -> None:
    endpoint = free_tcp_endpoint()
    port = endpoint.rsplit(":", 1)[1]
    res = run_with_batsim(fake_batsim["platform"], fake_batsim["workload"], EASY(), None, "o_", energy=False,
                          socket=f"tcp://*:{port}", timeout=30)
    assert res.ok and read_record(fake_batsim)["argv"][-2:] == ["-s", f"tcp://localhost:{port}"]
    assert "-E" not in res.command
    res = run_with_batsim(fake_batsim["platform"], fake_batsim["workload"], "fcfs", {}, "o2_", energy=False,
                          socket=None, timeout=30, extra_batsim_args=["--forward-profiles-on-submission"])
    assert res.ok and read_record(fake_batsim)["extra"] == ["--forward-profiles-on-submission"]


@posix_only
@needs_transcript
def test_batsim_fails_at_once(fake_batsim: dict) -> None:
    fake_batsim["mode"]("exit")
    endpoint = free_tcp_endpoint()
    t0 = time.monotonic()
    res = run_with_batsim(fake_batsim["platform"], fake_batsim["workload"], "easy", {}, "out_", energy=False,
                          socket=endpoint, timeout=30, check=False)
    assert time.monotonic() - t0 < 15
    assert res.returncode == 3 and not res.ok and res.stats is None
    assert "invalid platform" in res.log_tail()
    with pytest.raises(BatsimRunError, match="status 3") as info:
        run_with_batsim(fake_batsim["platform"], fake_batsim["workload"], "easy", {}, "out_", energy=False,
                        socket=endpoint, timeout=30)
    assert info.value.result is not None and info.value.result.returncode == 3
    # the scheduler was released each time: the same endpoint serves a full run right after
    fake_batsim["mode"]("ok")
    assert run_with_batsim(fake_batsim["platform"], fake_batsim["workload"], "easy", {}, "out_", energy=False,
                           socket=endpoint, timeout=30).ok


@posix_only
@needs_transcript
def test_batsim_dies_mid_run(fake_batsim: dict) -> None:
    """The server waiting for a dead Batsim is ended through serve's stop event: at once, without
    a made-up SIMULATION_ENDS, and without the runner reading the policy's state from its thread."""
    fake_batsim["mode"]("die")
    policy = ReadersEASY()
    t0 = time.monotonic()
    res = run_with_batsim(fake_batsim["platform"], fake_batsim["workload"], policy, None, "out_", energy=False,
                          socket=free_tcp_endpoint(), timeout=30, check=False)
    assert time.monotonic() - t0 < 10
    assert res.returncode == 4 and res.stats is None and not res.ok
    assert len(read_record(fake_batsim)["replies"]) == 3
    assert "simulated crash" in res.log_tail()
    assert res.policy is policy and not policy.simulation_ended  # it never saw SIMULATION_ENDS
    assert policy.readers == {"gridsched-batsim-server", threading.current_thread().name}  # (the line above)


@posix_only
@needs_transcript
def test_normal_end_reads_policy_state_in_the_server_thread_only(fake_batsim: dict) -> None:
    policy = ReadersEASY()
    res = run_with_batsim(fake_batsim["platform"], fake_batsim["workload"], policy, None, "out_", energy=False,
                          socket=free_tcp_endpoint(), timeout=30)
    assert res.ok and res.stats is not None and res.stats.ended and not res.stats.stopped
    assert policy.readers == {"gridsched-batsim-server"}


@posix_only
@needs_transcript
def test_timeout_kills_batsim(fake_batsim: dict) -> None:
    fake_batsim["mode"]("hang")
    t0 = time.monotonic()
    with pytest.raises(BatsimRunTimeout, match="timeout") as info:
        run_with_batsim(fake_batsim["platform"], fake_batsim["workload"], "easy", {}, "out_", energy=False,
                        socket=free_tcp_endpoint(), timeout=3)
    assert time.monotonic() - t0 < 15
    assert isinstance(info.value, TimeoutError)
    res = info.value.result
    assert res is not None and res.returncode < 0  # killed by a signal
    assert_dead(read_record(fake_batsim)["pid"])


@posix_only
@needs_transcript
def test_scheduler_error_kills_batsim(fake_batsim: dict) -> None:
    """Batsim sends garbage: the scheduler fails, and Batsim (which would wait forever) is stopped."""
    fake_batsim["mode"]("garbage")
    t0 = time.monotonic()
    with pytest.raises(BatsimRunError, match="scheduler failed") as info:
        run_with_batsim(fake_batsim["platform"], fake_batsim["workload"], "easy", {}, "out_", energy=False,
                        socket=free_tcp_endpoint(), timeout=30)
    assert time.monotonic() - t0 < 15
    assert isinstance(info.value.__cause__, ProtocolError)
    assert not isinstance(info.value, TimeoutError)
    assert_dead(read_record(fake_batsim)["pid"])


@posix_only
def test_batsim_never_connects(fake_batsim: dict) -> None:
    """Batsim pointed elsewhere: the scheduler's connect timeout ends the run, Batsim is stopped."""
    fake_batsim["mode"]("hang")
    with pytest.raises(BatsimRunError, match="never connected"):
        run_with_batsim(fake_batsim["platform"], fake_batsim["workload"], "easy", {}, "out_", energy=False,
                        socket=free_tcp_endpoint(), timeout=30, connect_timeout=1.5,
                        extra_batsim_args=["-s", free_tcp_endpoint()])  # the fake uses the last -s
    assert_dead(read_record(fake_batsim)["pid"])


def test_bad_inputs(fake_batsim: dict) -> None:
    with pytest.raises(FileNotFoundError, match="platform"):
        run_with_batsim("missing.xml", fake_batsim["workload"], "easy", {}, "out_", energy=False, timeout=5)
    with pytest.raises(FileNotFoundError, match="workload"):
        run_with_batsim(fake_batsim["platform"], ["missing.json"], "easy", {}, "out_", energy=False, timeout=5)
    with pytest.raises(KeyError, match="unknown policy"):
        run_with_batsim(fake_batsim["platform"], fake_batsim["workload"], "nope", {}, "out_", energy=False,
                        timeout=5)
    with pytest.raises(ValueError):
        run_with_batsim(fake_batsim["platform"], fake_batsim["workload"], "easy", {}, "out_", energy=False,
                        timeout=0)


@posix_only
def test_endpoint_in_use(fake_batsim: dict) -> None:
    """The scheduler cannot bind: OSError at once, Batsim is never started."""
    import zmq

    endpoint = free_tcp_endpoint()
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    try:
        sock.bind(endpoint)
        with pytest.raises(OSError, match="cannot bind"):
            run_with_batsim(fake_batsim["platform"], fake_batsim["workload"], "easy", {}, "out_", energy=False,
                            socket=endpoint, timeout=10)
    finally:
        sock.close(linger=0)
        ctx.term()
    assert not fake_batsim["record"].exists()
