"""Tests of the pybatsim 4.0.0a0 plugin glue (``schedulers.batsim.pybatsim_glue``).

pybatsim 4.0.0a0 pins ``pyzmq<23`` (no build on Python 3.11): install it with
``pip install --no-deps pybatsim==4.0.0a0 docopt sortedcontainers``. Tests that need it are skipped
with that reason when it is not importable.

A fake Batsim (a ZMQ REQ client in the test) replays the ``batsim->sched`` messages recorded on
real Batsim 4.2.1 (``shared/batsim-4.2.1/transcripts``, read in place). Every socket has send and
receive timeouts, every subprocess a wait timeout and a kill in ``finally``: nothing can hang.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
import zmq
from procset import ProcSet

from schedulers.batsim.runner import free_tcp_endpoint as free_endpoint
from schedulers.batsim import pybatsim_glue
from schedulers.batsim.protocol import decode_decisions, encode_message
from schedulers.batsim.pybatsim_glue import make_pybatsim_scheduler, pybatsim_available
from schedulers.batsim.replay import ReplayPolicy, batsim_messages, scheduler_messages
from schedulers.core.events import (
    CallMeLater,
    ExecuteJob,
    GenericDecision,
    NotifyBatsim,
    Query,
    SetResourceState,
)
from schedulers.core.policy import Policy
from schedulers.easy import EASY
from schedulers.fcfs import FCFS

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPTS = ROOT.parent / "shared" / "batsim-4.2.1" / "transcripts"
EASY_TRANSCRIPT = TRANSCRIPTS / "pybatsim_easyBackfill_energy128_various.jsonl"
TRANSCRIPT_FILES = sorted(TRANSCRIPTS.glob("*.jsonl")) if TRANSCRIPTS.is_dir() else []

needs_pybatsim = pytest.mark.skipif(
    not pybatsim_available(),
    reason="pybatsim is not importable; install it with "
           "`pip install --no-deps pybatsim==4.0.0a0 docopt sortedcontainers`",
)
needs_transcripts = pytest.mark.skipif(not TRANSCRIPT_FILES, reason=f"no Batsim transcripts in {TRANSCRIPTS}")

FIRST_REPLY_TIMEOUT_MS = 30_000  # the subprocess has to start and import first
REPLY_TIMEOUT_MS = 10_000
PROCESS_TIMEOUT_S = 30.0
THREAD_JOIN_S = 15.0

#: EASY's decisions on pybatsim_easyBackfill_energy128_various.jsonl, worked out by hand:
#: 128 hosts, lowest free ids first; every job fits when it arrives. (now, job, allocation)
#: t=0 delay(1 host): 0 (busy until 20.2) | t=1 simple(4): 1-4, done 1.05 | t=10 homo(4): 1-4,
#: done 10.1 | t=15 2_resources(2): 1-2, then 4_resources(4): 3-6 | t=20 homo_no_com(4): 1-4, then
#: homo_no_cpu(4): 5-8 | t=20.2 delay ends, host 0 free | t=30 reach_walltime(4): 0-3, done 30.05 |
#: t=32 seq(4): 0-3.
EXPECTED_EASY = [
    (0.0, "w0!delay", "0"),
    (1.0, "w0!simple", "1-4"),
    (10.0, "w0!homo", "1-4"),
    (15.0, "w0!2_resources", "1-2"),
    (15.0, "w0!4_resources", "3-6"),
    (20.0, "w0!homo_no_com", "1-4"),
    (20.0, "w0!homo_no_cpu", "5-8"),
    (30.0, "w0!reach_walltime", "0-3"),
    (32.0, "w0!seq", "0-3"),
]


def replay_client(endpoint: str, messages: list[str], *, first_timeout_ms: int = REPLY_TIMEOUT_MS) -> list[str]:
    """Play Batsim's side: send each recorded message, collect the replies (bounded waits).

    Raises:
        zmq.Again: no reply in time.
    """
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SNDTIMEO, REPLY_TIMEOUT_MS)
    replies: list[str] = []
    try:
        sock.connect(endpoint)
        for i, m in enumerate(messages):
            sock.setsockopt(zmq.RCVTIMEO, first_timeout_ms if i == 0 else REPLY_TIMEOUT_MS)
            sock.send_string(m)
            replies.append(sock.recv_string())
    finally:
        sock.close(linger=0)
        ctx.term()
    return replies


def executed(replies: list[str]) -> list[tuple[float, str, str]]:
    out = []
    for r in replies:
        now, decisions = decode_decisions(r)
        out += [(now, d.job_id, str(d.alloc)) for d in decisions if isinstance(d, ExecuteJob)]
    return out


# ------------------------------------------------------------------------ without pybatsim
def test_module_imports_without_pybatsim() -> None:
    """The glue module imports with pybatsim blocked; its classes then fail with the recipe."""
    code = (
        "import sys\n"
        "sys.modules['pybatsim'] = None\n"  # makes `import pybatsim...` raise ImportError
        "import schedulers.batsim.pybatsim_glue as g\n"
        "from schedulers.batsim.pybatsim_glue import *\n"
        "assert not g.pybatsim_available()\n"
        "try:\n"
        "    g.EASYPyBatsim\n"
        "except ImportError as exc:\n"
        "    print('IMPORT-ERROR', exc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=PROCESS_TIMEOUT_S, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "IMPORT-ERROR" in proc.stdout
    assert "pip install --no-deps pybatsim==4.0.0a0" in proc.stdout


def test_unknown_attribute() -> None:
    with pytest.raises(AttributeError):
        pybatsim_glue.NoSuchScheduler  # noqa: B018


# --------------------------------------------------------------------------- with pybatsim
@needs_pybatsim
def test_classes_and_entry_points() -> None:
    from pybatsim.batsim.batsim import BatsimScheduler
    from pybatsim.plugin import find_ambiguous_scheduler_names

    easy_cls = pybatsim_glue.EASYPyBatsim
    assert easy_cls is pybatsim_glue.EASYPyBatsim  # cached
    assert issubclass(easy_cls, BatsimScheduler) and easy_cls.policy_class is EASY
    assert pybatsim_glue.FCFSPyBatsim.policy_class is FCFS
    assert easy_cls.__module__ == "schedulers.batsim.pybatsim_glue" and easy_cls.__name__ == "EASYPyBatsim"

    eps = {ep.name: ep for ep in entry_points(group="pybatsim.schedulers")}
    expected = {"gridsched-easy": "EASYPyBatsim", "gridsched-fcfs": "FCFSPyBatsim",
                "easy": "EASYPyBatsim", "fcfs": "FCFSPyBatsim", "gridsched": "GridschedPyBatsim"}
    missing = sorted(set(expected) - set(eps))
    assert not missing, f"entry points {missing} not registered: reinstall with `pip install -e .`"
    for name, attr in expected.items():
        assert eps[name].value == f"schedulers.batsim.pybatsim_glue:{attr}"
        assert eps[name].load() is getattr(pybatsim_glue, attr)
    ambiguous = find_ambiguous_scheduler_names()
    assert not set(expected) & set(ambiguous), ambiguous


@needs_pybatsim
def test_generic_class_picks_policy_by_name() -> None:
    cls = pybatsim_glue.GridschedPyBatsim
    sched = cls({"policy": "fcfs"})
    assert isinstance(sched.policy, FCFS)
    sched = cls({"policy": "easy", "policy_options": {}})
    assert isinstance(sched.policy, EASY) and sched.policy.options == {}
    with pytest.raises(KeyError, match="policy"):
        cls({})
    with pytest.raises(KeyError, match="unknown policy"):
        cls({"policy": "nope"})
    with pytest.raises(TypeError):
        make_pybatsim_scheduler(int)  # type: ignore[arg-type]


def _offline_batsim(now: float, job_ids: list[str]) -> Any:
    """pybatsim's Batsim object without a network (its decision methods work on plain attributes)."""
    import logging

    from pybatsim.batsim.batsim import Batsim, Job

    bs = Batsim.__new__(Batsim)
    bs.logger = logging.getLogger("test")
    bs._current_time = now
    bs._events_to_send = []
    bs.nb_jobs_scheduled = bs.nb_jobs_rejected = 0
    bs.jobs = {j: Job(j, 0, 10, 2, "p", {"id": j, "subtime": 0, "walltime": 10, "res": 2, "profile": "p"})
               for j in job_ids}
    return bs


@needs_pybatsim
def test_decisions_become_pybatsim_calls() -> None:
    sched = make_pybatsim_scheduler(Policy)({})
    bs = sched.bs = _offline_batsim(7.0, ["w0!1", "w0!2"])
    sched._apply([
        ExecuteJob(job_id="w0!1", alloc=ProcSet((0, 1)), extra={"mapping": {"0": 0, "1": 1}}),
        SetResourceState(resources=ProcSet(3, 5), state="2"),
        CallMeLater(at=12.5),
        Query(requests={"consumed_energy": {}}),
        Query(requests={"air_temperature_all": {}}),
        NotifyBatsim(type="registration_finished"),
        GenericDecision(type="CHANGE_JOB_STATE", data={"job_id": "w0!2", "job_state": "COMPLETED_KILLED"},
                        timestamp=6.5),
    ])
    assert bs.time() == 7.0  # restored after the timestamped decision
    ev = bs._events_to_send
    assert [e["type"] for e in ev] == ["EXECUTE_JOB", "SET_RESOURCE_STATE", "CALL_ME_LATER", "QUERY", "QUERY",
                                       "NOTIFY", "CHANGE_JOB_STATE"]
    assert ev[0]["data"] == {"job_id": "w0!1", "alloc": "0-1", "mapping": {"0": 0, "1": 1}}
    assert bs.jobs["w0!1"].allocation == ProcSet((0, 1)) and bs.nb_jobs_scheduled == 1
    assert ev[1]["data"] == {"resources": "3 5", "state": "2"}
    assert ev[2]["data"] == {"timestamp": 12.5}
    assert ev[3]["data"] == {"requests": {"consumed_energy": {}}}
    assert ev[4]["data"] == {"requests": {"air_temperature_all": {}}}
    assert ev[5]["data"] == {"type": "registration_finished"}
    assert ev[6]["timestamp"] == 6.5 and ev[6]["data"]["job_id"] == "w0!2"
    assert all(e["timestamp"] == 7.0 for e in ev[:6])
    with pytest.raises(Exception, match="does not know"):
        sched._apply([ExecuteJob(job_id="w0!404", alloc=ProcSet(0))])


@needs_pybatsim
def test_pstate_intervals_are_merged_back() -> None:
    sched = make_pybatsim_scheduler(Policy)({})
    sched.bs = _offline_batsim(2.0, [])
    sched.onBeforeEvents()
    sched.onMachinePStateChanged((0, 1), "3")
    sched.onMachinePStateChanged((4, 4), 3)
    sched.onMachinePStateChanged((5, 5), "0")
    assert [(e["data"]["resources"], e["data"]["state"]) for e in sched._pending] == [("0-1 4", "3"), ("5", "0")]


class RecordingReplay(ReplayPolicy):
    """Replays a transcript's replies; records each message it was given, re-encoded at once
    (the policy's bookkeeping later mutates the event objects, e.g. host states)."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.seen: list[str] = []

    def decide(self, now, events):  # type: ignore[override]
        self.seen.append(encode_message(now, events))
        return super().decide(now, events)


def _run_pybatsim_in_thread(scheduler: Any, endpoint: str, messages: list[str]) -> list[str]:
    from pybatsim.batsim.batsim import Batsim

    error: list[BaseException] = []

    def target() -> None:
        try:
            bs = Batsim(scheduler, endpoint, 10_000)
            bs.start()
        except BaseException as exc:  # reported below
            error.append(exc)

    th = threading.Thread(target=target, daemon=True)
    th.start()
    try:
        replies = replay_client(endpoint, messages)
    finally:
        th.join(THREAD_JOIN_S)
    assert not th.is_alive(), "pybatsim did not stop after SIMULATION_ENDS"
    assert not error, error
    return replies


@needs_pybatsim
@needs_transcripts
@pytest.mark.parametrize("path", TRANSCRIPT_FILES, ids=lambda p: p.stem)
def test_replay_through_pybatsim_is_exact(path: Path) -> None:
    """Through pybatsim, the policy sees exactly Batsim's events and its decisions leave unchanged.

    The events rebuilt from pybatsim's callbacks re-encode byte for byte to the recorded Batsim
    messages, and the replies (pybatsim's own encoding of our decisions) are byte-identical to the
    recorded replies (all recorded by pybatsim-format schedulers).
    """
    cls = make_pybatsim_scheduler(RecordingReplay)
    sched = cls({"transcript": str(path)})
    sent = batsim_messages(path)
    replies = _run_pybatsim_in_thread(sched, free_endpoint(), sent)
    assert replies == scheduler_messages(path)
    assert sched.messages == len(sent) and sched.policy.remaining == 0
    assert len(sched.policy.seen) == len(sent)
    for raw, seen in zip(sent, sched.policy.seen):
        assert seen == raw


@needs_pybatsim
@needs_transcripts
def test_pybatsim_command_runs_our_easy(tmp_path: Path) -> None:
    """`pybatsim gridsched-easy` as a process, driven by a fake Batsim replaying a real run."""
    assert EASY_TRANSCRIPT.is_file()
    endpoint = free_endpoint()
    eps = {ep.name for ep in entry_points(group="pybatsim.schedulers")}
    if "gridsched-easy" not in eps:
        pytest.fail("entry point gridsched-easy not registered: reinstall with `pip install -e .`")
    # pybatsim's own command line (pybatsim.cmdline:main is the `pybatsim` console script), run
    # with this interpreter so that it sees the same installation.
    cmd = [sys.executable, "-c", "import sys; from pybatsim.cmdline import main; sys.exit(main())",
           "gridsched-easy", "--socket-endpoint", endpoint, "--timeout", "10000", "--scheduler-options", "{}"]
    out, err = tmp_path / "pybatsim.out", tmp_path / "pybatsim.err"
    with out.open("w") as fo, err.open("w") as fe:
        proc = subprocess.Popen(cmd, stdout=fo, stderr=fe, cwd=tmp_path, env=dict(os.environ),
                                start_new_session=True)
        try:
            replies = replay_client(endpoint, batsim_messages(EASY_TRANSCRIPT),
                                    first_timeout_ms=FIRST_REPLY_TIMEOUT_MS)
            rc = proc.wait(timeout=PROCESS_TIMEOUT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
    assert rc == 0, err.read_text()
    assert executed(replies) == EXPECTED_EASY
    # pybatsim encodes our decisions exactly as pybatsim's own EASY did in the recorded run.
    assert replies == scheduler_messages(EASY_TRANSCRIPT)
    assert "Scheduler: EASYPyBatsim" in out.read_text()
    assert json.loads(replies[-1]) == {"now": 32.8, "events": []}


@needs_pybatsim
def test_pybatsim_plugin_against_the_embedded_engine(tmp_path: Path) -> None:
    """End to end: `pybatsim gridsched-easy` driven by `gridsched engine` (Batsim's side over ZMQ)
    gives the same jobs as the in-process embedded run."""
    platform = ROOT / "platforms" / "g5k_nantes_econome.xml"
    workload = ROOT / "workloads" / "demo_nantes.json"
    if not (platform.is_file() and workload.is_file()):
        pytest.skip("shipped platform/workload not found")
    endpoint = free_endpoint()
    cli = [sys.executable, "-m", "schedulers.cli"]
    sched_cmd = [sys.executable, "-c", "import sys; from pybatsim.cmdline import main; sys.exit(main())",
                 "gridsched-easy", "-s", endpoint, "-t", "20000"]
    procs: list[subprocess.Popen] = []
    logs = tmp_path / "logs"
    logs.mkdir()
    (tmp_path / "zmq").mkdir()   # (-e zmq/out: as real Batsim, the engine writes in an existing folder)
    try:
        with (logs / "sched.txt").open("w") as fs, (logs / "engine.txt").open("w") as fe:
            procs.append(subprocess.Popen(sched_cmd, stdout=fs, stderr=subprocess.STDOUT, cwd=tmp_path,
                                          start_new_session=True))
            procs.append(subprocess.Popen(cli + ["engine", "-p", str(platform), "-w", str(workload), "-E",
                                                 "-s", endpoint, "-e", str(tmp_path / "zmq" / "out"),
                                                 "--timeout", "20"],
                                          stdout=fe, stderr=subprocess.STDOUT, cwd=tmp_path, start_new_session=True))
            codes = [p.wait(timeout=PROCESS_TIMEOUT_S) for p in procs]
        assert codes == [0, 0], [(logs / n).read_text()[-2000:] for n in ("sched.txt", "engine.txt")]
        emb = subprocess.run(cli + ["run", "--policy", "easy", "-p", str(platform), "-w", str(workload), "-E",
                                    "-o", str(tmp_path / "emb"), "--no-progress"],
                             capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S, cwd=tmp_path)
        assert emb.returncode == 0, emb.stderr
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
    jobs = (tmp_path / "zmq" / "out_jobs.csv").read_text()
    assert jobs == (tmp_path / "emb" / "out_jobs.csv").read_text()
    assert len(jobs.splitlines()) > 10


class _FailsWhenCalled(Policy):
    """A user's policy with a bug in a hook (for the failure's location)."""

    def on_requested_call(self) -> None:
        raise ZeroDivisionError("division by zero")  # the line the failure must name


class _FailsInInit(Policy):
    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        raise ValueError("no such option")


@needs_pybatsim
def test_a_policy_failure_under_pybatsim_names_its_class_hook_file_and_line() -> None:
    # as under gridsched run and serve: the policy's class, the callback, this file and the raising line
    from schedulers.core.failure import PolicyFailure

    sched = make_pybatsim_scheduler(_FailsWhenCalled)({})
    sched.bs = _offline_batsim(3.0, [])
    sched.onBeforeEvents()
    sched.onRequestedCall()
    line = next(n for n, text in enumerate(Path(__file__).read_text().splitlines(), 1)
                if "the line the failure must name" in text and "raise" in text)
    with pytest.raises(PolicyFailure) as err:
        sched.onNoMoreEvents()
    msg = str(err.value)
    assert msg.startswith("policy _FailsWhenCalled failed in on_requested_call (")
    assert f"test_pybatsim_glue.py, line {line}): ZeroDivisionError: division by zero" in msg
    with pytest.raises(PolicyFailure, match=r"policy _FailsInInit failed in __init__ \(.*test_pybatsim_glue.py, "
                                            r"line \d+\): ValueError: no such option"):
        make_pybatsim_scheduler(_FailsInInit)({})
