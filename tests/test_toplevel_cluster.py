"""A ``<cluster>`` directly under ``<platform>`` (no enclosing zone): SimGrid 3.32 makes it the
root zone itself (``sg_platf_new_cluster_flat`` creates its StarZone without a parent; the first
zone created is the root, ``NetZoneImpl::NetZoneImpl``), and Batsim 4.2.1 runs it with a host of
the cluster as master (``-m``). Real Batsim's recordings ``fixtures/batsim_toplevel_cluster``
(README there), hand-worked numbers, and the private links' sharing policies.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from schedulers.engine import simulate
from schedulers.engine.platform import read_platform
from schedulers.engine.netroute import platform_routes
from schedulers.registry import get_policy
from recorded import rows

FIX = Path(__file__).parent / "fixtures" / "batsim_toplevel_cluster"
FILES = ("jobs", "schedule", "consumed_energy", "machine_states")
# case -> (policy, master host), as recorded (README)
CASES = {"base": ("fcfs", "host4"), "shapes": ("easy", "host0"), "fatpipe": ("fcfs", "host4"),
         "config_ignored": ("fcfs", "host4")}

LAT = 50e-6 + 500e-6 + 50e-6   # private link up, backbone, private link down (s)
BYTE_PRIVATE = 1 / 125e6       # one byte at 125 MBps (s)


def _job(name: str, jid: str, folder: Path | None = None) -> dict:
    path = (folder / "out_jobs.csv") if folder else FIX / f"{name}_jobs.csv"
    return {r["job_id"]: r for r in rows(path)}[jid]


# Job 1 is `c1` (parallel_homogeneous, cpu 1e8, com 2e8) on 2 hosts of 100 Mf; it starts after 4 of
# Batsim's 1-byte messages from the master host to itself. Worked by hand from the routes:
# - base: private links split-duplex (SimGrid's default): each half carries one flow of 2e8 B per
#   unit of progress: rate 125e6 / 2e8 = 0.625; the master's route to itself is up, backbone, down;
# - fatpipe: SimGrid 3.32 creates the private links of a `sharing_policy="FATPIPE"` cluster as
#   plain SHARED links (no policy set, sg_platf_new_cluster_flat): both flows load one link, rate
#   125e6 / 4e8; the master's route to itself crosses its one private link once (StarZone adds
#   each link once): 50 + 500 us;
# - shapes: the 100 MBps limiter link of each host is on its way up and down, so both flows load
#   it: rate 1e8 / 4e8; the master's messages to itself take its loopback (15 us, 5 GBps).
HAND = {
    "base": (4 * (LAT + BYTE_PRIVATE), LAT + 1 / 0.625),
    "fatpipe": (4 * (50e-6 + 500e-6 + BYTE_PRIVATE), LAT + 4e8 / 125e6),
    "shapes": (4 * (15e-6 + 1 / 5e9), LAT + 4e8 / 1e8),
}


@pytest.mark.parametrize("name", sorted(HAND))
def test_recording_holds_the_hand_worked_numbers(name):
    start, run = HAND[name]
    j = _job(name, "1")
    assert float(j["starting_time"]) == pytest.approx(start, abs=1e-6)   # 6 decimals
    assert float(j["execution_time"]) == pytest.approx(run, abs=1e-6)


def test_recorded_config_options_that_ptask_l07_never_reads_change_nothing():
    # config_ignored.xml is base.xml with host/model, network/model, cpu/model, the LV08 factors,
    # crosstraffic and the optim modes changed: real Batsim wrote the same files
    for f in FILES:
        want = rows(FIX / f"base_{f}.csv")
        got = rows(FIX / f"config_ignored_{f}.csv")
        drop = ("scheduling_time", "simulation_time")
        assert [{k: v for k, v in r.items() if k not in drop} for r in got] == \
            [{k: v for k, v in r.items() if k not in drop} for r in want]


@pytest.fixture(scope="module")
def engine_runs(tmp_path_factory) -> dict[str, Path]:
    out = {}
    for name, (policy, master) in CASES.items():
        d = tmp_path_factory.mktemp(name)
        simulate(FIX / f"{name}.xml", [FIX / "workload.json"], get_policy(policy), energy=True,
                 export_prefix=d / "out_", master_host=master)
        out[name] = d
    return out


@pytest.mark.parametrize("name", sorted(HAND))
def test_engine_gives_the_hand_worked_numbers(engine_runs, name):
    start, run = HAND[name]
    j = _job(name, "1", engine_runs[name])
    assert float(j["starting_time"]) == pytest.approx(start, abs=1e-6)
    assert float(j["execution_time"]) == pytest.approx(run, abs=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("file", FILES)
def test_engine_equals_real_batsim(engine_runs, name, file):
    got, want = rows(engine_runs[name] / f"out_{file}.csv"), rows(FIX / f"{name}_{file}.csv")
    assert len(got) == len(want)
    for g, w in zip(got, want):
        for col, wv in w.items():
            if col in ("scheduling_time", "simulation_time"):
                continue  # wall clocks
            gv = g[col]
            try:
                a, b = float(gv), float(wv)
            except ValueError:
                assert gv == wv, (file, col)
                continue
            if col in ("consumed_energy", "energy", "consumed_joules", "wattmin", "epower"):
                assert math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9), (file, col, gv, wv)
            else:
                assert abs(a - b) <= 1e-6, (file, col, gv, wv)


def _routes(attrs: str):
    return platform_routes(ET.fromstring(
        "<platform version='4.1'><cluster id='c' prefix='n' suffix='' radical='0-1' speed='1Gf' bw='1GBps' "
        f"lat='10us' {attrs}/></platform>"), "c.xml")


def test_top_level_cluster_routes():
    links, lat = _routes("bb_bw='2GBps' bb_lat='1us'").route("n0", "n1")
    assert [ln.bandwidth for ln in links] == [1e9, 2e9, 1e9]
    assert lat == pytest.approx(21e-6, rel=1e-12)
    self_links, _ = _routes("loopback_bw='3GBps' loopback_lat='2us'").route("n0", "n0")
    assert [(ln.bandwidth, ln.latency, ln.fatpipe) for ln in self_links] == [(3e9, 2e-6, True)]


@pytest.mark.parametrize("policy, halves", [("SPLITDUPLEX", 2), ("FULLDUPLEX", 2), ("SHARED", 1), ("FATPIPE", 1)])
def test_private_link_policies(policy, halves):
    # FULLDUPLEX is SimGrid's old name of SPLITDUPLEX (ETag_surfxml_cluster); FATPIPE private links
    # are created as plain (SHARED) links in SimGrid 3.32
    routes = _routes(f"sharing_policy='{policy}'")
    there, _ = routes.route("n0", "n1")
    back, _ = routes.route("n1", "n0")
    assert len({id(ln) for ln in there + back}) == 2 * halves
    assert not any(ln.fatpipe for ln in there)


def test_a_backbone_without_bandwidth_is_refused(tmp_path):
    # bb_lat without bb_bw: SimGrid 3.32 still creates the backbone, of bandwidth 0; real Batsim
    # 4.2.1's first message never arrived (SimGrid deadlock at 0.0006 s, the route's latency)
    xml = (FIX / "base.xml").read_text().replace('bb_bw="2.25GBps" ', "")
    (tmp_path / "p.xml").write_text(xml)
    spec = read_platform(tmp_path / "p.xml", master_host="host4")
    assert spec.network_error is not None and "bandwidth 0" in spec.network_error
    assert "'host4'" in spec.network_error
