"""SIMULATION_BEGINS lists each machine's ``properties`` and ``zone_properties`` in the order of
the maps SimGrid 3.32 and Batsim 4.2.1 keep them in (``fixtures/batsim_property_order``, recorded
on real Batsim 4.2.1; :func:`schedulers.engine.platform._simgrid_order`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from schedulers.engine import build_engine

sys.path.insert(0, str(Path(__file__).parent))
from scripted_scheduler import ScriptPort  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "batsim_property_order"


def test_properties_and_zone_properties_in_batsims_order(monkeypatch):
    monkeypatch.chdir(FIX)
    port = ScriptPort(json.loads((FIX / "script.json").read_text()))
    build_engine("platform.xml", ["w.json"]).run(port)
    recorded = [json.loads(x) for x in (FIX / "messages.jsonl").read_text().splitlines()]
    theirs = recorded[0]["events"][0]["data"]
    theirs["workloads"] = {"w0": os.getcwd() + "/w.json"}
    mine = port.messages[0]["events"][0]["data"]
    h2 = next(r for r in theirs["compute_resources"] if r["name"] == "h2")
    assert len(h2["properties"]) == 19 and list(h2["properties"])[0] != "role"   # 18 <prop>s and role
    assert len(h2["zone_properties"]) == 25   # the two zones' 16 and 9
    for a, b in zip(mine["compute_resources"], theirs["compute_resources"]):
        assert a["name"] == b["name"]
        assert list(a["properties"]) == list(b["properties"]), a["name"]
        assert list(a["zone_properties"]) == list(b["zone_properties"]), a["name"]
    assert json.dumps(port.messages) == json.dumps(recorded)
