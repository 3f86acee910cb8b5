"""Shared by the tests of a recorded fixture folder (``platform.xml``, ``workload.json`` and real
Batsim 4.2.1's output files): reading CSV rows, the engine's run of the same inputs, and the
comparison of ``out_consumed_energy.csv`` rows."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

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


def assert_energy_rows(want: list[dict], got: list[dict]) -> None:
    """``out_consumed_energy.csv`` rows ``got`` (the engine's) against ``want`` (Batsim's): the same
    rows, ``time``, ``energy``, ``event_type`` and ``wattmin`` as printed, ``NA`` in the same rows;
    ``epower`` within 1e-6 relative, except over an interval of a few 1e-10 s (a row of the same
    printed time as the previous: messages across a Full zone's loopback), where both print
    (E - E_prev) / dt, whose rounding is a few ulps of the energy E over dt >= 1e-10 s: within 4
    ulps of E over 1e-10 s."""
    assert [(g["time"], g["energy"], g["event_type"], g["wattmin"]) for g in got] == [
        (w["time"], w["energy"], w["event_type"], w["wattmin"]) for w in want]
    for prev, w, g in zip([None, *want], want, got):
        assert (g["epower"] == "NA") == (w["epower"] == "NA"), (w, g)
        if w["epower"] == "NA":
            continue
        if prev is not None and prev["time"] == w["time"]:
            assert abs(float(g["epower"]) - float(w["epower"])) <= 4 * math.ulp(float(w["energy"])) / 1e-10, (w, g)
        else:
            assert float(g["epower"]) == pytest.approx(float(w["epower"]), rel=1e-6), (w, g)
