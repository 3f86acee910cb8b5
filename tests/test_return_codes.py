"""Profiles' return codes (``ret``): failed jobs, composed profiles stopping at the first failing
child, and their own ``ret`` (``fixtures/batsim_return_codes``, recorded on real Batsim 4.2.1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedulers.engine import EngineError, InProcessPort, build_engine
from schedulers.engine.outputs import job_rows
from schedulers.inputs.errors import WorkloadError
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_return_codes"


def _run(workload):
    engine = build_engine(FIX / "p.xml", [str(workload)])
    return engine.run(InProcessPort(get_policy("fcfs")))


def test_return_codes_as_real_batsim():
    result = _run(FIX / "w.json")
    recorded = (FIX / "out_jobs.csv").read_text().splitlines()
    # job 2: the composed profile stops after its first child (5 s), failed with that child's code
    assert recorded[2].startswith("2,w0,stops_at_first,1.000000,1,-1.000000,0,COMPLETED_FAILED,5.000000,5.000000,")
    assert job_rows(result) == recorded
    states = {j.id.split("!")[-1]: (j.state, j.return_code) for j in result.jobs}   # ids are w0!N
    assert states["2"] == ("COMPLETED_FAILED", 3)          # the child's code, not the composed's 7
    assert states["4"] == ("COMPLETED_FAILED", 5)          # the composed's own ret after its children
    assert states["5"] == ("COMPLETED_FAILED", 4)          # the inner composed's ret stops the outer
    assert states["7"] == ("COMPLETED_WALLTIME_REACHED", -1)
    assert states["8"] == ("COMPLETED_SUCCESSFULLY", 0)


def _one_job(tmp_path, ret):
    w = json.loads((FIX / "w.json").read_text())
    w["jobs"] = [{"id": "1", "subtime": 0, "res": 1, "profile": "x"}]
    w["profiles"] = {"x": {"type": "delay", "delay": 1, "ret": ret}}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(w))
    return path


@pytest.mark.parametrize("ret, match", [(-2, "killed by the scheduler"), (-5, "unknown return code: -5")])
def test_negative_codes_batsim_does_not_run(tmp_path, ret, match):
    with pytest.raises(EngineError, match=match):
        _run(_one_job(tmp_path, ret))


@pytest.mark.parametrize("ret", [1.5, "1", True, 2 ** 31])
def test_ret_must_be_a_32_bit_integer(tmp_path, ret):
    with pytest.raises(WorkloadError, match="'ret' .* must be a 32-bit integer"):
        _run(_one_job(tmp_path, ret))
