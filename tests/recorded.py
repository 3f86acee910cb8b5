"""Shared by the tests of a recorded fixture folder (``platform.xml``, ``workload.json`` and real
Batsim 4.2.1's output files): reading CSV rows, and the engine's run of the same inputs."""

from __future__ import annotations

import csv
from pathlib import Path

from schedulers.engine import simulate
from schedulers.registry import get_policy


def rows(path: Path) -> list[dict]:
    """The rows of a CSV file, as dicts by column."""
    with path.open() as f:
        return list(csv.DictReader(f))


def run_fcfs_with_energy(fix: Path, out: Path) -> Path:
    """Run ``fix/workload.json`` on ``fix/platform.xml`` with FCFS and energy (``-E``), writing
    Batsim's files ``out/out_*.csv``; returns ``out``."""
    simulate(fix / "platform.xml", [fix / "workload.json"], get_policy("fcfs"), energy=True,
             export_prefix=out / "out_")
    return out
