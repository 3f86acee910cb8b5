"""SIMULATION_BEGINS lists the workloads by name in string order (w0, w1, w10, w2...), Batsim
4.2.1's ``std::map`` of workloads (``fixtures/batsim_workload_order``, recorded on real Batsim
4.2.1)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from schedulers.engine import build_engine

sys.path.insert(0, str(Path(__file__).parent))
from scripted_scheduler import ScriptPort  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "batsim_workload_order"
#: The folder of the workload files when the fixture was recorded (README).
RECORDED_IN = "/work/wt/fid2/tests/fixtures/batsim_workload_order"


def test_eleven_workloads_are_listed_in_string_order():
    port = ScriptPort(json.loads((FIX / "script.json").read_text()))
    build_engine(FIX / "platform.xml", [str(FIX / f"w{i}.json") for i in range(11)]).run(port)
    recorded = [json.loads(x) for x in (FIX / "messages.jsonl").read_text().splitlines()]
    begins = recorded[0]["events"][0]["data"]
    assert list(begins["workloads"]) == ["w0", "w1", "w10", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9"]
    begins["workloads"] = {k: str(FIX) + v[len(RECORDED_IN):] for k, v in begins["workloads"].items()}
    mine = port.messages[0]["events"][0]["data"]
    assert json.dumps(mine["workloads"]) == json.dumps(begins["workloads"])   # (order included)
    assert json.dumps(mine["profiles"]) == json.dumps(begins["profiles"])
    assert port.messages == recorded
