"""A job whose profile is a ``composed`` profile registered by REGISTER_PROFILE crashes real
Batsim 4.2.1 when it starts; the engine refuses it in one line
(``fixtures/batsim_registered_composed``, recorded on real Batsim 4.2.1; its README gives the
cause in Batsim's sources)."""

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

FIX = Path(__file__).parent / "fixtures" / "batsim_registered_composed"


def _run(case: str):
    port = ScriptPort(json.loads((FIX / f"{case}.json").read_text()))
    engine = build_engine(FIX / "platform.xml", [str(FIX / "workload.json")], dynamic_jobs=True)
    return port, engine


def _recorded(case: str) -> list[dict]:
    return [json.loads(x) for x in (FIX / case / "messages.jsonl").read_text().splitlines()]


def _without_paths(messages: list[dict]) -> list[dict]:
    """The messages, SIMULATION_BEGINS's ``workloads`` paths left out (Batsim's are absolute, in
    the folder it was recorded from)."""
    out = json.loads(json.dumps(messages))
    for e in out[0]["events"]:
        e["data"].pop("workloads", None)
    return out


def test_registered_delay_and_file_composed_profiles_run_as_in_batsim():
    port, engine = _run("ok")
    result = engine.run(port)
    assert _without_paths(port.messages) == _without_paths(_recorded("ok"))
    assert job_rows(result) == (FIX / "ok" / "out_jobs.csv").read_text().splitlines()
    assert machine_state_rows(result) == (FIX / "ok" / "out_machine_states.csv").read_text().splitlines()


def test_a_job_of_a_registered_composed_profile_is_refused_where_batsim_crashes():
    port, engine = _run("crash")
    with pytest.raises(EngineError, match=r"EXECUTE_JOB dyn!b at t=2: its profile 'k' is a composed profile "
                                          r"registered by REGISTER_PROFILE, and real Batsim 4.2.1 crashes "
                                          r"\(segmentation fault\)"):
        engine.run(port)
    # the same messages up to the crash: the REQUESTED_CALL at 2 s is the last
    assert _without_paths(port.messages) == _without_paths(_recorded("crash"))
    assert port.messages[-1]["now"] == 2.0
