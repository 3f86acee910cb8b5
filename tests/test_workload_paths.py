"""SIMULATION_BEGINS names each workload by Batsim 4.2.1's absolute file name: the working
directory, ``/`` and the name as given, not normalised (``fixtures/batsim_workload_paths``,
recorded on real Batsim 4.2.1)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from schedulers.engine import build_engine

sys.path.insert(0, str(Path(__file__).parent))
from scripted_scheduler import ScriptPort  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "batsim_workload_paths"
#: The folder real Batsim ran from when the fixture was recorded (README).
RECORDED_IN = "/work/wt/fid2/tests/fixtures/batsim_workload_paths"
NAMES = ["w.json", "./w.json", "../batsim_workload_paths/w.json"]


def test_relative_workload_paths_are_made_absolute_as_batsim_does(monkeypatch):
    monkeypatch.chdir(FIX)
    port = ScriptPort(json.loads((FIX / "script.json").read_text()))
    build_engine("platform.xml", NAMES).run(port)
    recorded = [json.loads(x) for x in (FIX / "messages.jsonl").read_text().splitlines()]
    begins = recorded[0]["events"][0]["data"]
    assert begins["workloads"] == {f"w{i}": f"{RECORDED_IN}/{n}" for i, n in enumerate(NAMES)}
    begins["workloads"] = {k: os.getcwd() + v[len(RECORDED_IN):] for k, v in begins["workloads"].items()}
    assert port.messages == recorded


def test_absolute_workload_paths_are_kept(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    port = ScriptPort(json.loads((FIX / "script.json").read_text()))
    build_engine(FIX / "platform.xml", [str(FIX / "w.json"), f"{FIX}/./w.json", str(FIX / "w.json")]).run(port)
    assert port.messages[0]["events"][0]["data"]["workloads"] == {
        "w0": f"{FIX}/w.json", "w1": f"{FIX}/./w.json", "w2": f"{FIX}/w.json"}
