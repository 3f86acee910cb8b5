"""A zero-work job's end comes after the server has handled the reply's next decision
(``fixtures/batsim_zero_work_order``, recorded on real Batsim 4.2.1; its README explains the
sub-rounds)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.outputs import energy_rows, job_rows, machine_state_rows
from schedulers.registry import get_policy

sys.path.insert(0, str(Path(__file__).parent))
from scripted_scheduler import ScriptPort  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "batsim_zero_work_order"


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


@pytest.mark.parametrize("case", ["sleep", "dvfs", "query"])
def test_the_next_decision_is_handled_before_the_zero_work_jobs_end(case):
    port = ScriptPort(json.loads((FIX / f"{case}.json").read_text()))
    result = build_engine(FIX / "p.xml", [str(FIX / "w.json")], energy=True).run(port)
    sent = [m for m in port.messages if not any(e["type"] == "SIMULATION_BEGINS" for e in m["events"])]
    assert sent == [json.loads(x) for x in _lines(FIX / case / "messages.jsonl")]
    assert job_rows(result) == _lines(FIX / case / "out_jobs.csv")
    assert energy_rows(result) == _lines(FIX / case / "out_consumed_energy.csv")
    assert machine_state_rows(result) == _lines(FIX / case / "out_machine_states.csv")
    kinds = [r.split(",")[2] for r in energy_rows(result)[1:]]
    if case == "sleep":   # the switch's row, then the job's end
        assert kinds[:3] == ["s", "p", "e"]
    if case == "dvfs":    # the job's end sees host 1 at pstate 0 (wattmin 2 x 100 W), then 150 W
        assert [r.split(",")[2:4] for r in energy_rows(result)[1:]] == [
            ["s", "200.000000"], ["p", "200.000000"], ["e", "200.000000"], ["p", "150.000000"]]


def test_wide_seed_5012_switch_rows_before_the_zero_work_jobs_end():
    d = FIX / "wide5012"
    engine = build_engine(d / "p.xml", [str(d / "w.json")], energy=True)
    result = engine.run(InProcessPort(get_policy("easy", {"idle_timeout": 1})))
    assert job_rows(result) == _lines(d / "out_jobs.csv")
    assert energy_rows(result) == _lines(d / "out_consumed_energy.csv")
    assert machine_state_rows(result) == _lines(d / "out_machine_states.csv")
    assert energy_rows(result)[3:5] == ["1.000000,475.000000,p,475.000000,NA", "1.000000,475.000000,e,475.000000,NA"]
