"""A CALL_ME_LATER falling at a job's submission time, on a compute-only platform: the waiters
and the job submitter wake in one step, and Batsim 4.2.1's server gets the first waiter's
message, then the submission, then the other waiters'; with one waiter, the end of the static
submissions comes in a message of its own (``fixtures/batsim_call_submit_tie``, recorded on real
Batsim 4.2.1). ``gridsched engine`` plays Batsim's actor model for any scheduler, which orders
them so."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

from schedulers.batsim.runner import free_tcp_endpoint
from schedulers.cli import main

sys.path.insert(0, str(Path(__file__).parent))
import scripted_scheduler  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "batsim_call_submit_tie"


@pytest.mark.parametrize("calls", [1, 2, 3])
def test_gridsched_engine_orders_calls_and_submissions_as_batsim(calls, tmp_path):
    endpoint = free_tcp_endpoint()
    port = endpoint.rsplit(":", 1)[1]
    log = tmp_path / "messages.jsonl"
    sched = threading.Thread(target=scripted_scheduler.main, daemon=True,
                             args=([str(FIX / f"calls{calls}.json"), "--socket", f"tcp://127.0.0.1:{port}",
                                    "--log", str(log)],))
    sched.start()
    code = main(["engine", "-p", str(FIX / "platform.xml"), "-w", str(FIX / "workload.json"),
                 "-s", f"tcp://127.0.0.1:{port}", "-e", str(tmp_path / "out"), "--timeout", "30"])
    sched.join(30)
    assert code == 0
    mine = [json.loads(x) for x in log.read_text().splitlines()]
    theirs = [json.loads(x) for x in (FIX / f"calls{calls}" / "messages.jsonl").read_text().splitlines()]
    for m in (mine, theirs):
        m[0]["events"][0]["data"].pop("workloads")   # (absolute paths, of the recording's folder)
    assert mine == theirs
    kinds = [e["type"] for e in theirs[2]["events"]]
    assert kinds[:2] == ["REQUESTED_CALL", "JOB_SUBMITTED"]
    assert kinds[2:] == ["REQUESTED_CALL"] * (calls - 1) + (["NOTIFY"] if calls > 1 else [])


@pytest.mark.parametrize("calls", [1, 2, 3])
def test_in_process_runs_order_calls_and_submissions_as_batsim(calls):
    # The same scripts as a port of the embedded engine: on this compute-only platform without
    # energy the engine groups each step's messages itself (not the actor model); the first
    # CALL_ME_LATER of the reply to SIMULATION_BEGINS is handled before the time-0 submission, so
    # its waiter wakes before the submitter at 0.123456789 s, the others after it.
    from schedulers.engine import build_engine
    from scripted_scheduler import ScriptPort

    port = ScriptPort(json.loads((FIX / f"calls{calls}.json").read_text()))
    engine = build_engine(FIX / "platform.xml", [str(FIX / "workload.json")])
    assert engine.platform.message_delays is None   # (the grouped path, not the actor model)
    engine.run(port)
    theirs = [json.loads(x) for x in (FIX / f"calls{calls}" / "messages.jsonl").read_text().splitlines()]
    assert port.messages[1:] == theirs[1:]
