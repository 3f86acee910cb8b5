"""``<cabinet>``, ``<host_link>`` and ``<backbone>`` in a ``routing="Cluster"`` zone, built and
routed as SimGrid 3.32 does (``fixtures/batsim_cabinet``, recorded on real Batsim 4.2.1; its
README works the message time out by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.outputs import job_rows, machine_state_rows
from schedulers.engine.platform import read_platform
from schedulers.inputs.errors import PlatformError
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_cabinet"


@pytest.mark.parametrize("name, master", [("loc", "master_host0"), ("links", "master_host")])
def test_cabinet_platforms_run_as_on_batsim(name, master):
    engine = build_engine(FIX / f"{name}.xml", [str(FIX / f"{name}_w.json")], master_host=master)
    result = engine.run(InProcessPort(get_policy("easy")))
    assert job_rows(result) == (FIX / f"{name}_jobs.csv").read_text().splitlines()
    assert machine_state_rows(result) == (FIX / f"{name}_machine_states.csv").read_text().splitlines()


def test_cabinet_hosts_and_message_time():
    spec = read_platform(FIX / "loc.xml", master_host="master_host0")
    assert [h.name for h in spec.compute] == ["alpha1", "alpha2", "alpha3", "alpha4", "beta0.lan", "beta1.lan",
                                              "beta2.lan", "beta3.lan", "beta7.lan"]
    assert {(h.speeds[0], h.cores) for h in spec.compute} == {(3e9, 1), (2e9, 1)}
    # master to itself: link up (1 us), backbone (500 us), link down (1 us), 1 B at 2.25 GB/s
    assert spec.message_delays.master == pytest.approx(502e-6 + 1 / 2.25e9, rel=1e-12)
    # a compute host: its own link (5 us, 10 Gbps = 1.25 GB/s, the bottleneck) up, the backbone,
    # the master's link down (1 us)
    assert spec.message_delays.hosts["beta0.lan"] == pytest.approx(506e-6 + 1 / 1.25e9, rel=1e-12)


def test_a_cabinet_host_named_twice_is_refused_as_simgrid_aborts(tmp_path):
    p = tmp_path / "p.xml"
    p.write_text((FIX / "loc.xml").read_text().replace('radical="1-4"', 'radical="1-4" ').replace(
        'prefix="beta" suffix=".lan"', 'prefix="alpha" suffix=""'))
    with pytest.raises(PlatformError, match=r"Refusing to create a second host named 'alpha1'"):
        read_platform(p, master_host="master_host0")


def test_a_cabinet_outside_a_cluster_zone_is_refused_by_the_engine(tmp_path):
    p = tmp_path / "p.xml"
    p.write_text((FIX / "loc.xml").read_text().replace('routing="Cluster"', 'routing="Full"'))
    with pytest.raises(PlatformError, match=r"reads cabinets only in a routing=\"Cluster\" zone"):
        read_platform(p, master_host="master_host0")
