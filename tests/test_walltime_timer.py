"""``wait_for``'s timeout is one sleep on SimGrid's clock (``schedulers.engine.execution.WallTimer``):
a recorded run of real Batsim 4.2.1 replayed through the engine gives Batsim's files
(``fixtures/batsim_walltime_timer``, its README tells the case)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedulers.batsim.replay import ReplayPolicy
from schedulers.engine import InProcessPort, simulate

FIX = Path(__file__).parent / "fixtures" / "batsim_walltime_timer"
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
PLATFORM = SHARED / "data" / "batsim-examples" / "cluster_energy_128.xml"


@pytest.mark.skipif(not PLATFORM.exists(), reason=f"{PLATFORM} not found (../shared is absent)")
def test_the_replayed_run_gives_batsims_files(tmp_path):
    simulate(PLATFORM, [FIX / "workload.json"], InProcessPort(ReplayPolicy(FIX / "transcript.jsonl")), energy=True,
             compute_sharing=True, forward_profiles=True, export_prefix=tmp_path / "out_")
    for name in ("jobs", "consumed_energy"):
        assert (tmp_path / f"out_{name}.csv").read_text() == (FIX / f"{name}.csv").read_text(), name
    rows = (FIX / "consumed_energy.csv").read_text().splitlines()
    assert rows[39] == "30.501800,376034.057814,s,12160.000000,11776.000000"   # 2e-14 s after the walltime
