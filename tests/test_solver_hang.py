"""Where real Batsim 4.2.1 hangs inside SimGrid's solver, the engine stops with a clear error at
the same clock value (``fixtures/batsim_solver_hang``, its README tells the case)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from schedulers.batsim.replay import ReplayPolicy
from schedulers.engine import EngineError, InProcessPort, simulate

FIX = Path(__file__).parent / "fixtures" / "batsim_solver_hang"


def test_the_engine_stops_where_batsim_hangs(tmp_path):
    with pytest.raises(EngineError, match="never ends") as info:
        simulate(FIX / "platform.xml", [FIX / "w0.json", FIX / "w1.json"],
                 InProcessPort(ReplayPolicy(FIX / "transcript.jsonl")), compute_sharing=True,
                 export_prefix=tmp_path / "out_")
    # the line names the workload files of the jobs in play, then the clock
    assert str(info.value).startswith(f"{FIX / 'w0.json'}, {FIX / 'w1.json'}: t=")
    t = float(re.search(r": t=(\S+?):", str(info.value)).group(1))
    assert f"{t:.17f}" == "0.00000000130000200"   # SimGrid's clock in Batsim's last log line
    assert "w1!0" in str(info.value) and "w1!1" in str(info.value)
