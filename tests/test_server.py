"""Tests of the ZMQ scheduler server and of transcript replay (recorded Batsim 4.2.1 runs).

Every socket test is bounded by timeouts on both sides, so a failure can never hang the suite.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from pathlib import Path

import pytest
import zmq

from schedulers import registry
from schedulers.batsim.runner import free_tcp_endpoint as free_endpoint
from schedulers.batsim.protocol import ProtocolError
from schedulers.batsim.replay import ReplayError, ReplayPolicy, batsim_messages, load_transcript, scheduler_messages
from schedulers.batsim.server import SchedulerTimeout, ServeStats, add_serve_parser, handle_raw, run_serve, serve
from schedulers.core.policy import Policy

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
TRANSCRIPTS = SHARED / "batsim-4.2.1" / "transcripts"
TRANSCRIPT_FILES = sorted(TRANSCRIPTS.glob("*.jsonl")) if TRANSCRIPTS.is_dir() else []

needs_transcripts = pytest.mark.skipif(
    not TRANSCRIPT_FILES, reason=f"Batsim 4.2.1 transcripts not found in {TRANSCRIPTS}"
)
per_transcript = pytest.mark.parametrize("path", TRANSCRIPT_FILES, ids=lambda p: p.stem)

CLIENT_TIMEOUT_MS = 5000
JOIN_TIMEOUT_S = 15.0


def assert_port_free(endpoint: str) -> None:
    """Binding ``endpoint`` again succeeds: serve closed its socket."""
    ctx = zmq.Context()
    s = ctx.socket(zmq.REP)
    try:
        s.bind(endpoint)
    finally:
        s.close(linger=0)
        ctx.term()


class FakeBatsim(threading.Thread):
    """A REQ client that sends recorded Batsim messages and collects the replies (bounded waits)."""

    def __init__(self, endpoint: str, messages: list[str], *, stop_after: int | None = None,
                 timeout_ms: int = CLIENT_TIMEOUT_MS) -> None:
        super().__init__(daemon=True)
        self.timeout_ms = timeout_ms
        self.endpoint = endpoint
        self.messages = messages if stop_after is None else messages[:stop_after]
        self.replies: list[str] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        ctx = zmq.Context()
        sock = ctx.socket(zmq.REQ)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.RCVTIMEO, self.timeout_ms)
        sock.setsockopt(zmq.SNDTIMEO, self.timeout_ms)
        try:
            sock.connect(self.endpoint)
            for m in self.messages:
                sock.send_string(m)
                self.replies.append(sock.recv_string())
        except BaseException as exc:  # reported by the test
            self.error = exc
        finally:
            sock.close(linger=0)
            ctx.term()


# ------------------------------------------------------------------------------------- replay
@needs_transcripts
@per_transcript
def test_replay_through_handle_raw_reproduces_replies(path: Path) -> None:
    recs = load_transcript(path)
    policy = ReplayPolicy(path)
    pairs = list(zip(recs[0::2], recs[1::2]))
    assert all(a["dir"] == "batsim->sched" and b["dir"] == "sched->batsim" for a, b in pairs)
    for batsim_rec, sched_rec in pairs:
        reply = handle_raw(policy, batsim_rec["raw"])
        assert json.loads(reply) == sched_rec["msg"], f"seq {sched_rec['seq']}"
        assert reply == sched_rec["raw"], f"seq {sched_rec['seq']}: not byte-identical"
    assert policy.remaining == 0
    assert policy.simulation_ended
    assert policy.platform.hosts  # base-class bookkeeping saw SIMULATION_BEGINS


@needs_transcripts
@per_transcript
def test_replay_over_zmq_reproduces_replies(path: Path) -> None:
    endpoint = free_endpoint()
    client = FakeBatsim(endpoint, [m for m in batsim_messages(path)])
    client.start()
    lines: list[str] = []
    try:
        stats = serve(ReplayPolicy(path), endpoint, connect_timeout=10, idle_timeout=10, log=lines.append)
    finally:
        client.join(JOIN_TIMEOUT_S)
    assert not client.is_alive(), "fake Batsim still running"
    assert client.error is None, repr(client.error)
    expected = scheduler_messages(path)
    assert [json.loads(r) for r in client.replies] == [json.loads(e) for e in expected]
    assert client.replies == expected
    assert isinstance(stats, ServeStats) and stats.ended
    assert stats.messages == len(expected) == len(stats.decision_times)
    assert stats.events == sum(len(json.loads(m)["events"]) for m in batsim_messages(path))
    assert stats.last_now == json.loads(expected[-1])["now"]
    assert stats.endpoint == endpoint
    assert any("ended" in line for line in lines)


@needs_transcripts
def test_replay_errors() -> None:
    path = TRANSCRIPT_FILES[0]
    msgs = batsim_messages(path)
    policy = ReplayPolicy(scheduler_messages(path)[:1])
    handle_raw(policy, msgs[0])
    with pytest.raises(ReplayError, match="recorded replies were used"):
        handle_raw(policy, msgs[1])
    late = json.loads(msgs[0])
    late["now"] = late["events"][0]["timestamp"] = 123.0
    with pytest.raises(ReplayError, match="now=123.0"):
        handle_raw(ReplayPolicy(path), json.dumps(late))
    assert ReplayPolicy({"transcript": str(path)}).remaining == len(scheduler_messages(path))
    with pytest.raises(ValueError, match="transcript"):
        ReplayPolicy()


# ------------------------------------------------------------------------------------ timeouts
def test_connect_timeout() -> None:
    endpoint = free_endpoint()
    t0 = time.monotonic()
    with pytest.raises(SchedulerTimeout) as info:
        serve(Policy(), endpoint, connect_timeout=0.5, idle_timeout=5)
    elapsed = time.monotonic() - t0
    assert 0.45 <= elapsed < 1.5
    err = info.value
    assert err.phase == "connect" and err.last_now is None and err.endpoint == endpoint
    assert endpoint in str(err) and "0.5 s" in str(err)
    assert_port_free(endpoint)  # the socket was closed


@needs_transcripts
def test_idle_timeout_reports_last_now() -> None:
    path = TRANSCRIPT_FILES[0]
    endpoint = free_endpoint()
    client = FakeBatsim(endpoint, batsim_messages(path), stop_after=3)
    client.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(SchedulerTimeout) as info:
            serve(ReplayPolicy(path), endpoint, connect_timeout=10, idle_timeout=0.5)
    finally:
        client.join(JOIN_TIMEOUT_S)
    assert time.monotonic() - t0 < 5
    err = info.value
    assert err.phase == "idle"
    expected_now = json.loads(batsim_messages(path)[2])["now"]
    assert err.last_now == expected_now and f"last now={expected_now!r}" in str(err)
    assert len(client.replies) == 3


# ---------------------------------------------------------------------------------- stop switch
def test_stop_event_while_waiting_for_batsim() -> None:
    """A caller (e.g. the real-Batsim runner, when Batsim died) ends serve with its stop event."""
    endpoint = free_endpoint()
    stop = threading.Event()
    lines: list[str] = []
    timer = threading.Timer(0.3, stop.set)
    timer.start()
    t0 = time.monotonic()
    try:
        stats = serve(Policy(), endpoint, connect_timeout=None, idle_timeout=None, log=lines.append, stop=stop)
    finally:
        timer.cancel()
    assert 0.25 <= time.monotonic() - t0 < 1.5
    assert stats.stopped and not stats.ended and stats.messages == 0 and stats.last_now is None
    assert any("stopped by the caller after 0 messages" in ln for ln in lines)
    assert_port_free(endpoint)


@needs_transcripts
def test_stop_mid_run_after_batsim_went_away() -> None:
    """Batsim stops talking after 3 messages: a stop callable ends serve long before its idle
    timeout, the policy having seen no SIMULATION_ENDS (none was made up)."""
    path = TRANSCRIPT_FILES[0]
    endpoint = free_endpoint()
    client = FakeBatsim(endpoint, batsim_messages(path), stop_after=3)
    client.start()
    policy = ReplayPolicy(path)
    t0 = time.monotonic()
    try:
        stats = serve(policy, endpoint, connect_timeout=10, idle_timeout=60,
                      stop=lambda: not client.is_alive())
    finally:
        client.join(JOIN_TIMEOUT_S)
    assert time.monotonic() - t0 < 5
    assert stats.stopped and not stats.ended and stats.messages == 3 == len(client.replies)
    assert stats.last_now == json.loads(batsim_messages(path)[2])["now"]
    assert not policy.simulation_ended


@needs_transcripts
def test_stop_never_set_and_preset() -> None:
    path = TRANSCRIPT_FILES[0]
    endpoint = free_endpoint()
    client = FakeBatsim(endpoint, batsim_messages(path))
    client.start()
    try:
        stats = serve(ReplayPolicy(path), endpoint, connect_timeout=10, idle_timeout=10, stop=threading.Event())
    finally:
        client.join(JOIN_TIMEOUT_S)
    assert stats.ended and not stats.stopped and client.replies == scheduler_messages(path)
    stop = threading.Event()
    stop.set()
    t0 = time.monotonic()
    stats = serve(Policy(), free_endpoint(), connect_timeout=10, stop=stop)
    assert stats.stopped and stats.messages == 0 and time.monotonic() - t0 < 1
    with pytest.raises(TypeError, match="stop must be"):
        serve(Policy(), free_endpoint(), stop=3)


def test_malformed_message_raises_protocol_error() -> None:
    endpoint = free_endpoint()
    client = FakeBatsim(endpoint, ['{"now": 1, "events": [{"type": "REQUESTED_CALL", "data": {}}]}'], timeout_ms=800)
    client.start()
    try:
        with pytest.raises(ProtocolError, match="lacks 'timestamp'"):
            serve(Policy(), endpoint, connect_timeout=10, idle_timeout=2)
    finally:
        client.join(JOIN_TIMEOUT_S)
    assert isinstance(client.error, zmq.Again)  # no reply ever came; the client gave up on its own


def _begins_message(n_hosts: int) -> str:
    hosts = [{"id": i, "name": f"host{i}", "state": "idle", "properties": {}, "zone_properties": {}}
             for i in range(n_hosts)]
    data = {"nb_resources": n_hosts, "nb_compute_resources": n_hosts, "nb_storage_resources": 0,
            "allow_compute_sharing": False, "allow_storage_sharing": True, "config": {},
            "compute_resources": hosts, "storage_resources": [], "workloads": {}, "profiles": {}}
    return json.dumps({"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": data}]})


def test_second_batsim_client_is_refused(capsys) -> None:
    # Batsim A begins a simulation on 2 hosts and is answered; Batsim B then connects to the same
    # endpoint and begins another on 3 hosts: the server stops with one line (exit 1) before the
    # policy sees B's hosts, and B gets no answer.
    endpoint = free_endpoint()
    a = FakeBatsim(endpoint, [_begins_message(2)], timeout_ms=3000)
    b = FakeBatsim(endpoint, [_begins_message(3)], timeout_ms=800)
    seen: list[int] = []

    class Recorder(Policy):
        name = "recorder"

        def on_simulation_begins(self, platform) -> None:
            seen.append(len(platform.hosts))

    def clients() -> None:
        a.start()
        a.join(JOIN_TIMEOUT_S)  # A answered (or failed) before B connects
        b.start()

    starter = threading.Thread(target=clients, daemon=True)
    starter.start()
    try:
        with pytest.raises(ProtocolError) as err:
            serve(Recorder(), endpoint, connect_timeout=10, idle_timeout=10)
    finally:
        starter.join(JOIN_TIMEOUT_S)
        b.join(JOIN_TIMEOUT_S)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(f"a second SIMULATION_BEGINS (message 2, now=0.0 s) after the one of message 1 "
                          f"(now=0.0 s): another Batsim connected to {endpoint}")
    assert a.error is None and len(a.replies) == 1
    assert isinstance(b.error, zmq.Again) and b.replies == []
    assert seen == [2]  # the policy never saw the second platform
    assert_port_free(endpoint)

    # the command line reports it in one line, exit status 1
    endpoint = free_endpoint()
    a = FakeBatsim(endpoint, [_begins_message(2)], timeout_ms=3000)
    b = FakeBatsim(endpoint, [_begins_message(2)], timeout_ms=800)
    starter = threading.Thread(target=clients, daemon=True)
    starter.start()
    args = make_parser().parse_args(["serve", "--policy", "fcfs", "--socket", endpoint,
                                     "--connect-timeout", "10", "--idle-timeout", "10"])
    try:
        status = run_serve(args)
    finally:
        starter.join(JOIN_TIMEOUT_S)
        b.join(JOIN_TIMEOUT_S)
    err_lines = [line for line in capsys.readouterr().err.splitlines() if "second" in line]
    assert status == 1
    assert err_lines == [f"gridsched serve: protocol error: a second SIMULATION_BEGINS (message 2, now=0.0 s) "
                         f"after the one of message 1 (now=0.0 s): another Batsim connected to {endpoint}; one "
                         f"scheduler answers one simulation, start one gridsched serve per Batsim, each on its "
                         f"own --socket"]


def test_bind_error_and_bad_arguments() -> None:
    endpoint = free_endpoint()
    ctx = zmq.Context()
    s = ctx.socket(zmq.REP)
    s.bind(endpoint)
    try:
        with pytest.raises(OSError, match="cannot bind"):
            serve(Policy(), endpoint, connect_timeout=1)
    finally:
        s.close(linger=0)
        ctx.term()
    with pytest.raises(ValueError, match="connect_timeout"):
        serve(Policy(), endpoint, connect_timeout=0)


# ---------------------------------------------------------------------------------- command line
def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gridsched")
    add_serve_parser(parser.add_subparsers(dest="command", required=True))
    return parser


def test_serve_parser_defaults_and_options(tmp_path: Path) -> None:
    args = make_parser().parse_args(["serve", "--policy", "fcfs"])
    assert (args.socket, args.connect_timeout, args.idle_timeout) == ("tcp://*:28000", 60.0, 600.0)
    assert args.func is run_serve and args.policy_options is None and args.platform is None
    assert make_parser().parse_args(["serve", "--policy", "easy", "--platform", "p.xml"]).platform == "p.xml"
    args = make_parser().parse_args(["serve", "--policy", "easy", "--socket", "tcp://*:29000",
                                     "--connect-timeout", "0", "--idle-timeout", "2.5"])
    assert (args.socket, args.connect_timeout, args.idle_timeout) == ("tcp://*:29000", None, 2.5)
    with pytest.raises(SystemExit):
        make_parser().parse_args(["serve", "--policy", "fcfs", "--idle-timeout", "soon"])


def test_run_serve_argument_errors(tmp_path: Path, capsys) -> None:
    parse = make_parser().parse_args
    assert run_serve(parse(["serve", "--policy", "no-such-policy"])) == 2
    assert "no-such-policy" in capsys.readouterr().err
    assert run_serve(parse(["serve", "--policy", "fcfs", "--policy-options", "{bad"])) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert run_serve(parse(["serve", "--policy", "fcfs", "--policy-options", "[1]"])) == 2
    assert "JSON object" in capsys.readouterr().err
    assert run_serve(parse(["serve", "--policy", "fcfs", "--policy-options", f"@{tmp_path / 'missing.json'}"])) == 2
    assert "cannot read" in capsys.readouterr().err


def test_run_serve_connect_timeout_exit_status(capsys) -> None:
    name = next(iter(registry.POLICIES))
    args = make_parser().parse_args(["serve", "--policy", name, "--socket", free_endpoint(),
                                     "--connect-timeout", "0.3"])
    assert run_serve(args) == 3
    assert "never connected" in capsys.readouterr().err


@needs_transcripts
def test_run_serve_end_to_end_with_options_file(tmp_path: Path, monkeypatch, capsys) -> None:
    path = TRANSCRIPT_FILES[0]
    monkeypatch.setitem(registry.POLICIES, "replay", ReplayPolicy)
    opts = tmp_path / "opts.json"
    opts.write_text(json.dumps({"transcript": str(path)}), encoding="utf-8")
    endpoint = free_endpoint()
    client = FakeBatsim(endpoint, batsim_messages(path))
    client.start()
    args = make_parser().parse_args(["serve", "--policy", "replay", "--socket", endpoint,
                                     "--policy-options", f"@{opts}", "--connect-timeout", "10",
                                     "--idle-timeout", "10"])
    try:
        status = run_serve(args)
    finally:
        client.join(JOIN_TIMEOUT_S)
    assert status == 0, capsys.readouterr().err
    assert client.error is None and client.replies == scheduler_messages(path)
    assert "simulation ended" in capsys.readouterr().err
