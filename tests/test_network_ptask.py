"""Jobs whose communications load network links (SimGrid 3.32's ``ptask_L07`` model as Batsim
4.2.1 runs it): hand-worked numbers, the FATPIPE rule of the solver, routes, and real Batsim's
recording ``fixtures/batsim_network_ptask`` (README there for the working).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from schedulers.engine.netroute import platform_routes
from schedulers.engine.sharing import fair_bottleneck
from recorded import rows, run_fcfs_with_energy

FIX = Path(__file__).parent / "fixtures" / "batsim_network_ptask"
LAT = 100e-6 + 0.0 + 100e-6  # private link, backbone, private link (s)

# job -> (execution time s, energy J, final state), worked out by hand (README)
HAND = {
    "alone": (LAT + 1 / 0.5, 2 * 150 * (LAT + 2), "COMPLETED_SUCCESSFULLY"),
    "pair_a": (LAT + 1 / 0.375, 2 * 137.5 * (LAT + 1 / 0.375), "COMPLETED_SUCCESSFULLY"),
    "pair_b": (LAT + 1 / 0.375, 2 * 137.5 * (LAT + 1 / 0.375), "COMPLETED_SUCCESSFULLY"),
    "total": (LAT + 2, 2 * 150 * (LAT + 2), "COMPLETED_SUCCESSFULLY"),
    "cut": (1.0, 2 * 150 * 1.0, "COMPLETED_WALLTIME_REACHED"),
    "only_comm": (LAT + 6e8 / 1e9, 2 * 100 * (LAT + 0.6), "COMPLETED_SUCCESSFULLY"),
}


def _check_jobs(rows: list[dict]) -> None:
    got = {r["job_id"]: r for r in rows}
    assert set(got) == set(HAND)
    for jid, (run, energy, state) in HAND.items():
        r = got[jid]
        assert r["final_state"] == state, jid
        assert float(r["execution_time"]) == pytest.approx(run, abs=1e-6), jid  # 6 decimals
        assert float(r["consumed_energy"]) == pytest.approx(energy, abs=1e-6), jid


def test_recording_holds_the_hand_worked_numbers():
    _check_jobs(rows(FIX / "jobs.csv"))
    # without the network (a *_no_net* platform) every job would take 1 s (0 s for only_comm)
    assert float(rows(FIX / "jobs.csv")[0]["execution_time"]) != pytest.approx(1.0)


@pytest.fixture(scope="module")
def engine_out(tmp_path_factory) -> Path:
    return run_fcfs_with_energy(FIX, tmp_path_factory.mktemp("netptask"))


def test_engine_gives_the_hand_worked_numbers(engine_out):
    _check_jobs(rows(engine_out / "out_jobs.csv"))


@pytest.mark.parametrize("name", ["jobs", "schedule", "consumed_energy", "machine_states"])
def test_engine_equals_real_batsim(engine_out, name):
    got, want = rows(engine_out / f"out_{name}.csv"), rows(FIX / f"{name}.csv")
    assert len(got) == len(want)
    for g, w in zip(got, want):
        for col, wv in w.items():
            gv = g[col]
            if col in ("epower", "scheduling_time", "simulation_time"):
                continue  # epower: the 1e-10 s offsets of Batsim's loopback (README); wall clocks
            try:
                a, b = float(gv), float(wv)
            except ValueError:
                assert gv == wv, (name, col)
                continue
            if col in ("consumed_energy", "energy", "consumed_joules", "wattmin"):
                assert math.isclose(a, b, rel_tol=1e-6), (name, col, gv, wv)
            else:
                assert abs(a - b) <= 1e-6, (name, col, gv, wv)


def test_fair_bottleneck_fatpipe_gives_each_flow_the_whole_link():
    # one link of 10 B/s, flows of 1 and 2 bytes per unit of progress
    variables = [([(0, 1.0)], math.inf), ([(0, 2.0)], math.inf)]
    assert fair_bottleneck({0: 10.0}, variables) == [5.0, 2.5]             # SHARED: 10 / 2 flows
    assert fair_bottleneck({0: 10.0}, variables, {0}) == [10.0, 5.0]       # FATPIPE: 10 each


def test_cluster_routes_and_policies():
    root = ET.fromstring(
        "<platform version='4.1'><zone id='top' routing='Full'>"
        "<cluster id='c' prefix='n' suffix='' radical='0-1' speed='1Gf' bw='1GBps' lat='10us' "
        "bb_bw='2GBps' bb_lat='1us' bb_sharing_policy='FATPIPE'/></zone></platform>")
    routes = platform_routes(root, "c.xml")
    links, lat = routes.route("n0", "n1")
    # up n0 (private link, split duplex by default), the backbone once, down n1
    assert [ln.bandwidth for ln in links] == [1e9, 2e9, 1e9]
    assert [ln.fatpipe for ln in links] == [False, True, False]
    assert lat == pytest.approx(10e-6 + 1e-6 + 10e-6, rel=1e-12)  # each link once
    back, _ = routes.route("n1", "n0")
    assert back[1] is links[1]                      # one backbone
    assert back[0] is not links[2] and back[2] is not links[0]  # separate up and down halves


SELF = Path(__file__).parent / "fixtures" / "batsim_self_route"


def test_a_single_host_task_drops_its_communication(tmp_path):
    # fixtures/batsim_self_route/README.md: `one` (1 host, com to itself) runs 1 s flat, as a CPU
    # execution; `two` (2 hosts, com on the diagonal) pays its loopbacks' 15-us latency
    hand = {"one": ("1.000000", "200.000000"), "two": ("1.000015", "400.006000")}
    for r in rows(SELF / "jobs.csv"):
        assert (r["execution_time"], r["consumed_energy"]) == hand[r["job_id"]]
    out = run_fcfs_with_energy(SELF, tmp_path)
    for name in ("jobs", "consumed_energy"):
        assert (out / f"out_{name}.csv").read_text() == (SELF / f"{name}.csv").read_text(), name


MSG = Path(__file__).parent / "fixtures" / "batsim_message_sharing"


def test_a_message_byte_shares_the_links_with_a_held_task(tmp_path):
    # fixtures/batsim_message_sharing/README.md: the JOB_COMPLETED byte halves the held task's
    # rate on the backbone for its 2 ms; the hosts are charged 162.5 W over them
    energy = {r["time"]: r["energy"] for r in rows(MSG / "consumed_energy.csv")}
    assert energy["1.000000"] == "350.000000"
    assert energy["5.000000"] == f"{350 + 2 * 162.5 * 0.002 + 2 * 100 * 3.998:f}" == "1150.250000"
    out = run_fcfs_with_energy(MSG, tmp_path)
    for name in ("jobs", "consumed_energy"):
        assert (out / f"out_{name}.csv").read_text() == (MSG / f"{name}.csv").read_text(), name
