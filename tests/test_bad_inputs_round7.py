"""Bad input, seventh round: generators, campaigns, reports and conversions given odd but
plausible values, and what the commands said about them.

Each test runs the command as a user would (``schedulers.cli.main``) and checks the exit status
and the one error line (its words, the file and item named), or the number worked out by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers_cli import one_error_line, run_main


# ------------------------------------------------ generators
@pytest.mark.parametrize("generator", ["synthetic", "green-nantes"])
def test_a_shortest_run_time_that_rounds_to_0_ms_is_refused_not_written(tmp_path: Path, generator: str) -> None:
    # Run times are rounded to the millisecond: runtime_min 1e-4 wrote jobs of delay 0.0 and walltime
    # 0.0 (synthetic), which `gridsched run` then refused ("'delay' must be a number of seconds > 0"),
    # or stopped on "load profile 'p0': need duration > 0 s" (green-nantes), naming no parameter.
    code, _, err = run_main(["scenario", generator, "--runtime-min", "1e-4", "--runtime-max", "1",
                             "-o", tmp_path / "s"])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: generator '{generator}': runtime_min 0.0001 s is below 0.001 s: "
                                   "run times are rounded to the millisecond, and a "
                                   + ("run time of 0 s is a delay" if generator == "synthetic" else
                                      "job of 0 s is a profile") + " Batsim refuses")
    assert not (tmp_path / "s").exists()
    # 1 ms is the shortest run time kept: every job then runs 0.001 s
    code, _, err = run_main(["scenario", generator, "--runtime-min", "0.001", "--runtime-max", "0.001",
                             "-o", tmp_path / "s"])
    assert code == 0, err
    w = json.loads((tmp_path / "s" / "workload.json").read_text())
    if generator == "synthetic":
        assert {p["delay"] for p in w["profiles"].values()} == {0.001}
    else:   # 100 % CPU load: cpu = 0.001 s x the econome core's 12.9625 Gflop/s
        assert {p["cpu"] for p in w["profiles"].values()} == {0.001 * 12962500000.0}
    code, _, err = run_main(["run", "--policy", "fcfs", "-p", tmp_path / "s" / "platform.xml",
                             "-w", tmp_path / "s" / "workload.json", "-o", tmp_path / "out", "--no-progress"])
    assert code == 0, err
