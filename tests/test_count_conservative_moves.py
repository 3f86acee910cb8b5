"""``benchmarks/count_conservative_moves.py`` counts classic conservative's compressions and moves
as worked out by hand on a small case."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from schedulers.inputs.generators import homogeneous_platform_xml

ROOT = Path(__file__).resolve().parents[1]


def _module():
    spec = importlib.util.spec_from_file_location("count_conservative_moves",
                                                  ROOT / "benchmarks" / "count_conservative_moves.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_counts_hand_worked(tmp_path):
    # 2 hosts, all submitted at 0. The first pass, at the simulation's start, builds the kept
    # schedule (a compressing pass, on an empty queue). The submissions are inserted first fit
    # (no compression): J1 (2 hosts, wt 100, runs 10 s) starts; J2 and J3 (1 host, wt 100, run
    # 50 s) get 100 on host 0 and on host 1. At 10, J1 ends: a compressing pass on a queue of 2;
    # each job is removed (a search) and fits at 10: 2 compressions, 2 moves, both start. At 60
    # both end: a third compressing pass, on an empty queue.
    plat = tmp_path / "p.xml"
    plat.write_text(homogeneous_platform_xml(2, 1, 1e9), encoding="utf-8")
    jobs = [(1, 2, 10.0), (2, 1, 50.0), (3, 1, 50.0)]
    wl = {"nb_res": 2, "profiles": {f"d{i}": {"type": "delay", "delay": d} for i, _, d in jobs},
          "jobs": [{"id": str(i), "subtime": 0.0, "walltime": 100.0, "res": r, "profile": f"d{i}"}
                   for i, r, _ in jobs]}
    c = _module().count_workload(str(plat), wl)
    assert c["completion_passes"] == 3
    assert c["queue_at_completion"] == 0 + 2 + 0  # queue when each compressing pass began
    assert c["compressions"] == 2
    assert c["searches"] == 2
    assert (c["moves"], c["rehosts"]) == (2, 0)
