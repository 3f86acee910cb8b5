"""Shared by the tests of a recorded fixture folder (``platform.xml``, ``workload.json`` and real
Batsim 4.2.1's output files): reading CSV rows, the engine's run of the same inputs, and the
comparison of ``out_consumed_energy.csv`` rows."""

from __future__ import annotations

import csv
from pathlib import Path

from schedulers.engine import simulate
from schedulers.registry import get_policy


def rows(path: Path) -> list[dict]:
    """The rows of a CSV file, as dicts by column."""
    with path.open() as f:
        return list(csv.DictReader(f))


def schedule_rows(path: Path) -> list[dict]:
    """The rows of an ``out_schedule.csv`` without its wall-clock columns (``scheduling_time``,
    ``simulation_time``), which differ from run to run."""
    out = rows(path)
    for r in out:
        del r["scheduling_time"], r["simulation_time"]
    return out


def run_fcfs_with_energy(fix: Path, out: Path) -> Path:
    """Run ``fix/workload.json`` on ``fix/platform.xml`` with FCFS and energy (``-E``), writing
    Batsim's files ``out/out_*.csv``; returns ``out``."""
    simulate(fix / "platform.xml", [fix / "workload.json"], get_policy("fcfs"), energy=True,
             export_prefix=out / "out_")
    return out


def assert_energy_rows(want: list[dict], got: list[dict]) -> None:
    """``out_consumed_energy.csv`` rows ``got`` (the engine's) against ``want`` (Batsim's): every
    column as printed, ``epower`` included -- also over intervals of a few 1e-10 s (a row of the
    same printed time as the previous: messages across a Full zone's loopback), where Batsim's
    (E - E_prev) / dt is mostly the rounding of each host's energy, a double that SimGrid's
    plugin updates at every read (``HostEnergy::update``), which the engine keeps the same way."""
    assert [tuple(g.values()) for g in got] == [tuple(w.values()) for w in want]
