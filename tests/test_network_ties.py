"""Networked platforms: what happens at one instant (engine/netserver.py, "Sub-rounds"), and what
an in-process policy reads (engine/ports.py, ``batsim_time``). Timelines worked by hand from
SimGrid 3.32's and Batsim 4.2.1's code, and recorded on real Batsim 4.2.1 with FCFS behind
`gridsched serve` (`gridsched run --engine batsim`, 2026-11-24); files in fixtures/batsim_network.

The workload ``tie_walltime.json``: j1 and j2 at t = 0 (100 s each, j2 with a 10 s walltime), j3
and j4 at t = 10 (5 s each); FCFS puts them on hosts 0, 1, 2, 3. With m the master's message to
itself: hello (m), SCHED_READY (2m), JOB_SUBMITTED (3m), EXECUTE_JOB j1 (4m), j2 (5m); the
submitter, whose clock is m after its hello and whose post returned at 3m, sleeps 10 - m and
posts at 10 + 2m: JOB_SUBMITTED (10 + 3m), its goodbye (10 + 4m), EXECUTE_JOB j3 (10 + 5m). j2
reaches its walltime at 5m + 10: the same instant, and who posts first then decides when j4
starts.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from schedulers.engine import simulate
from schedulers.engine.ports import batsim_time
from schedulers.registry import get_policy
from test_network import EXAMPLES, GAMMA, REC, assert_same_rows, needs_examples


def starts(path: Path) -> dict[str, float]:
    return {r["job_id"]: float(r["starting_time"]) for r in csv.DictReader(open(path))}


def run(platform: Path, energy: bool, tmp_path: Path) -> Path:
    prefix = tmp_path / "out_"
    simulate(platform, [REC / "tie_walltime.json"], get_policy("fcfs"), energy=energy, export_prefix=prefix)
    return prefix


@needs_examples
@pytest.mark.parametrize("energy", [True, False])
def test_a_walltime_and_a_decision_at_one_instant(energy, tmp_path):
    # cluster_energy_128.xml: m = 600 us + 8 ns (1 B at 125 MBps), h = 1600 us + 8 ns from a compute
    # host; times printed with 6 decimals round down, so the decisions are dated at the clock.
    # At 10 + 5m the request-reply actor's EXECUTE_JOB j3 arrives (the server makes one simcall,
    # creating j3's actor, before it receives again) and j2's sleep ends. Both actors run in sub-round 1;
    # SimGrid wakes them in the order their actions were created: j2's sleep (at 5m) first.
    # * Without energy j2 puts its JOB_COMPLETED at once, before the request-reply actor's
    #   EXECUTE_JOB j4: the server receives j2's message (h), then j4's (m): j4 starts at 10 + 6m + h.
    # * With -E, j2 first reads its host's energy and then every host's (the energy row): one
    #   simcall per host not updated at this instant (127 of 128), so its put comes 127 sub-rounds
    #   after the request-reply actor's: j4 starts at 10 + 6m.
    m, h = 600e-6 + 8e-9, 1600e-6 + 8e-9
    prefix = run(EXAMPLES / "cluster_energy_128.xml", energy, tmp_path)
    got = starts(Path(f"{prefix}jobs.csv"))
    assert got["j2"] == pytest.approx(5 * m, abs=1e-6)
    assert got["j3"] == pytest.approx(10 + 5 * m, abs=1e-6)
    assert got["j4"] == pytest.approx(10 + 6 * m if energy else 10 + 6 * m + h, abs=1e-6)
    name = "tie_e128_energy" if energy else "tie_e128"
    assert_same_rows(Path(f"{prefix}jobs.csv"), REC / f"{name}_jobs.csv")
    if energy:
        assert_same_rows(Path(f"{prefix}consumed_energy.csv"), REC / f"{name}_consumed_energy.csv")


@pytest.mark.parametrize("energy", [True, False])
def test_an_in_process_policy_reads_the_times_batsim_prints(energy, tmp_path):
    # tie_net.xml: m = 0.5 + 1/gamma, h = 1 + 2/gamma (gamma = 4194304 B). The scheduler reads
    # now = 3m = 1.50000072 as "1.500001"; Batsim's request-reply actor dates its decisions
    # 1.500001 and sleeps until then (send_message_at_time): j1 starts at 1.500001 + m, j2 at
    # 1.500001 + 2m, so j2's walltime ends at 11.500001 + 2m, after EXECUTE_JOB j3 arrives at
    # 10 + 5m (its decision, dated 11.500001, waited in the mailbox behind the goodbye posted at
    # 10 + 3m). EXECUTE_JOB j4 is posted then, before j2's message: j4 starts at 10 + 6m and the
    # scheduler hears of j2 at 10 + 6m + h. A policy given the exact clock (11.50000072) would
    # make j2's end and j3's arrival one instant and start j4 at 10 + 6m + h.
    m, h = 0.5 + 1 / GAMMA, 1 + 2 / GAMMA
    assert batsim_time(3 * m) == 1.500001 > 3 * m
    prefix = run(REC / "tie_net.xml", energy, tmp_path)
    got = starts(Path(f"{prefix}jobs.csv"))
    assert got["j2"] == pytest.approx(1.500001 + 2 * m, abs=1e-6)
    assert got["j4"] == pytest.approx(10 + 6 * m, abs=1e-6)
    name = "tie_walltime_energy" if energy else "tie_walltime"
    assert_same_rows(Path(f"{prefix}jobs.csv"), REC / f"{name}_jobs.csv")
    if energy:
        assert_same_rows(Path(f"{prefix}consumed_energy.csv"), REC / f"{name}_consumed_energy.csv")
