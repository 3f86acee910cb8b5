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
