"""``scripts/compare_with_batsim.py --suite traces`` draws real inputs of ``../shared`` as they are:
every file it names exists, and the green heuristic (which reads power states and overlaps jobs)
gets a platform with power states, ``-E`` and compute sharing."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "compare_with_batsim.py"
TRACES = Path(__file__).resolve().parents[2] / "shared" / "data" / "traces"


def _module():
    spec = importlib.util.spec_from_file_location("compare_with_batsim", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.skipif(not TRACES.is_dir(), reason=f"{TRACES} is absent (the real traces)")
def test_traces_cases_name_existing_inputs(tmp_path):
    mod = _module()
    seen = set()
    for seed in range(200):
        args = mod.traces_args(random.Random(seed), tmp_path)
        for flag in ("-p", "-w"):
            assert Path(args[args.index(flag) + 1]).is_file(), (seed, args)
        policy = args[args.index("--policy") + 1]
        seen.add(policy)
        if policy == "green-easy":
            assert "-E" in args and "--compute-sharing" in args, (seed, args)
        if "lyon" in args[args.index("-p") + 1]:
            assert "-E" not in args and "--max-jobs" not in args, (seed, args)
    assert seen == {"fcfs", "easy", "conservative", "buc", "green-easy"}
