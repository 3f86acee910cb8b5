"""``scripts/compare_with_batsim.py --suite events`` draws events files that Batsim 4.2.1 accepts,
but for the few faults it adds on purpose: each machine's events, in Batsim's order (timestamp,
then ``machine_available`` before ``machine_unavailable``: ``event_comparator_timestamp_number``,
``src/events.cpp``), alternate unavailable / available, starting unavailable."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

from procset import ProcSet

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "compare_with_batsim.py"


def _module():
    spec = importlib.util.spec_from_file_location("compare_with_batsim", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _valid(lines: list[str], n: int) -> bool:
    """Whether Batsim would run these events to the end: timestamps >= 0, machines < n, and each
    machine never made unavailable twice nor available while it is not unavailable."""
    order = {"machine_available": 0, "machine_unavailable": 1}
    events = sorted((json.loads(x) for x in lines if x), key=lambda e: (e["timestamp"], order.get(e["type"], 2)))
    down: set[int] = set()
    for e in events:
        if e["timestamp"] < 0:
            return False
        if e["type"] not in order:
            continue
        for m in ProcSet.from_str(e["resources"]):
            if m >= n or (m in down) == (e["type"] == "machine_unavailable"):
                return False
            (down.add if e["type"] == "machine_unavailable" else down.discard)(m)
    return True


def test_events_files_are_valid_but_for_the_faults_added_on_purpose():
    mod = _module()
    faults = caught = 0
    for seed in range(300):
        rng = random.Random(seed)
        n = rng.randint(1, 12)
        instants = [rng.choice([0.0, 1.5, 3.0, 7.25]) for _ in range(5)]
        lines, bad = mod.events_file(rng, list(range(n)), n, instants, generic=seed % 2 == 0)
        faults += bad
        if not bad:
            assert _valid(lines, n), (seed, lines)
        else:
            caught += not _valid(lines, n)
    assert 0 < faults < 60   # a few faulty files (8 %), the rest valid
    assert caught > faults // 2   # (a fault can be harmless: all machines down when none was)
