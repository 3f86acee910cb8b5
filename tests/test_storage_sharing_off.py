"""With ``--disable-storage-sharing`` real Batsim 4.2.1 refuses to start a job on a compute host
that already runs one, compute sharing or not (``fixtures/batsim_storage_sharing_off``, recorded
on real Batsim 4.2.1; its README gives the cause in Batsim's sources)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from schedulers.engine import build_engine
from schedulers.engine.outputs import job_rows, machine_state_rows
from schedulers.engine.ports import EngineError

sys.path.insert(0, str(Path(__file__).parent))
from scripted_scheduler import ScriptPort  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "batsim_storage_sharing_off"


def _engine(storage_sharing: bool):
    engine = build_engine(FIX / "platform.xml", [str(FIX / "workload.json")], compute_sharing=True)
    engine.storage_sharing = storage_sharing
    return engine, ScriptPort(json.loads((FIX / "script.json").read_text()))


def _recorded(case: str) -> list[dict]:
    out = [json.loads(x) for x in (FIX / case / "messages.jsonl").read_text().splitlines()]
    out[0]["events"][0]["data"].pop("workloads")   # (the recording's absolute path)
    return out


def _sent(port: ScriptPort) -> list[dict]:
    port.messages[0]["events"][0]["data"].pop("workloads")
    return port.messages


def test_compute_sharing_runs_both_jobs_on_host_0():
    engine, port = _engine(True)
    result = engine.run(port)
    assert job_rows(result) == (FIX / "shared" / "out_jobs.csv").read_text().splitlines()
    assert machine_state_rows(result) == (FIX / "shared" / "out_machine_states.csv").read_text().splitlines()
    assert _sent(port) == _recorded("shared")


def test_storage_sharing_off_refuses_a_busy_compute_host_even_with_compute_sharing():
    engine, port = _engine(False)
    with pytest.raises(EngineError, match=r"EXECUTE_JOB w0!1 at t=1: host 0 \(h0\) already runs \['w0!0'\], and "
                                          r"with --disable-storage-sharing real Batsim 4.2.1 aborts on compute hosts "
                                          r"too"):
        engine.run(port)
    assert _sent(port) == _recorded("storage_off")
