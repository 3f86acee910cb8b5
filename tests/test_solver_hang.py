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


LONG = Path(__file__).parent / "fixtures" / "batsim_long_solve"


@pytest.mark.slow
def test_a_solve_of_billions_of_rounds_is_played_as_batsim_plays_it():
    # at t = 20.124457 s a solve takes about 2.8e9 rounds; real Batsim 4.2.1 ran it to the end
    # (about 90 s of wall clock) and so does the engine (it used to refuse above 1e9 rounds)
    from schedulers.easy import EASY
    from schedulers.engine import build_engine
    from schedulers.engine.outputs import energy_rows, job_rows, machine_state_rows, pstate_rows
    platform = Path(__file__).resolve().parent.parent / "platforms" / "g5k_lille_2020.xml"
    engine = build_engine(platform, [str(LONG / f"w{i}.json") for i in range(3)], energy=True,
                          forward_profiles=True, events=[LONG / "events.txt"], forward_unknown_events=True)
    result = engine.run(InProcessPort(EASY()))
    assert job_rows(result) == (LONG / "out_jobs.csv").read_text().splitlines()
    assert machine_state_rows(result) == (LONG / "out_machine_states.csv").read_text().splitlines()
    assert energy_rows(result) == (LONG / "out_consumed_energy.csv").read_text().splitlines()
    assert pstate_rows(result) == (LONG / "out_pstate_changes.csv").read_text().splitlines()
