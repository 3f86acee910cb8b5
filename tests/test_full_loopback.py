"""Batsim's internal messages across the loopback of a ``routing="Full"`` zone without links.

Recorded on real Batsim 4.2.1 (``fixtures/batsim_full_loopback/README.md``): each message from
the master host to itself takes 1e-10 s, which decides ties at one printed instant (a walltime
against a submission) and the order of JOB_COMPLETED messages; the engine times them on SimGrid's
clock (:mod:`schedulers.engine.netserver`). ``out_jobs.csv`` and ``out_machine_states.csv`` must
be byte-identical to Batsim's, ``out_consumed_energy.csv`` too (``epower`` over the 1e-10-s
intervals included: it is mostly the rounding of each host's energy, kept as SimGrid keeps it).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from schedulers.engine import simulate
from schedulers.engine.platform import read_platform
from schedulers.fcfs import FCFS
from recorded import assert_energy_rows, rows

FIX = Path(__file__).parent / "fixtures" / "batsim_full_loopback"


def test_the_platform_times_messages_on_simgrids_clock():
    spec = read_platform(FIX / "platform.xml")
    assert not spec.has_network and spec.master_loopback
    # master -> master: the loopback (no latency, 10 GBps: 1e-10 s a byte); host -> master: no route
    assert spec.message_delays.master_route == (0.0, 1e10)
    assert spec.message_delays.host_routes == {h: (0.0, math.inf) for h in ("h0", "h1", "h2", "h3")}


@pytest.mark.parametrize("case", ["tie", "same_end", "late"])
def test_outputs_are_real_batsims(tmp_path, case):
    res = simulate(FIX / "platform.xml", [FIX / f"{case}.json"], FCFS(), energy=True, export_prefix=tmp_path / "out_")
    if case == "tie":   # X and Z end at their walltimes (the step clock said both succeeded)
        assert {j.name: j.state for j in res.jobs} == {
            "X": "COMPLETED_WALLTIME_REACHED", "Y": "COMPLETED_SUCCESSFULLY",
            "Z": "COMPLETED_WALLTIME_REACHED", "W": "COMPLETED_SUCCESSFULLY"}
    elif case == "same_end":  # A's JOB_COMPLETED first
        assert [j.name for j in res.jobs] == ["A", "B", "C"]
    else:               # L1 starts before its subtime: at 2e6 s a 1e-10-s message step leaves the clock
        l1 = next(j for j in res.jobs if j.name == "L1")   # where it is, yet ends the sleeps of 1 ulp
        assert l1.start == 2e6 - math.ulp(2e6) and l1.subtime == 2e6
    for name in ("jobs", "machine_states"):
        assert (tmp_path / f"out_{name}.csv").read_text() == (FIX / f"{case}_{name}.csv").read_text(), name
    assert_energy_rows(rows(FIX / f"{case}_consumed_energy.csv"), rows(tmp_path / "out_consumed_energy.csv"))
