"""Grid'5000 platforms: reference JSON -> G5KNode -> SimGrid XML (schedulers.inputs.g5k).

Expected numbers are worked out by hand from the reference JSON of 2020-03-31 (../shared, read-only;
tests needing it skip when it is absent) and from the power figures Idle 100 W / OneCore 120 W /
AllCores 200 W / Off 10 W.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from schedulers.inputs.errors import PlatformError
from schedulers.inputs.g5k import (
    G5KDataError,
    G5KNode,
    PowerModel,
    build_site_platform,
    fetch_g5k_nodes,
    load_g5k_nodes,
    write_simgrid_platform,
)

REPO = Path(__file__).resolve().parents[1]
SNAPSHOT = REPO.parent / "shared" / "data" / "g5k-reference" / "sites-2020-03-31"
PLATFORMS = REPO / "platforms"
NANTES_XML = PLATFORMS / "g5k_nantes_econome.xml"
LILLE_XML = PLATFORMS / "g5k_lille_2020.xml"

needs_snapshot = pytest.mark.skipif(
    not SNAPSHOT.is_dir(),
    reason=f"Grid'5000 reference snapshot absent ({SNAPSHOT}; read-only data in ../shared)")

# Lille clusters, from the JSON (architecture.nb_cores, performance.node_flops / 1e9):
#   chetemi  15 nodes, 2 x E5-2630 v4 = 20 cores, 331.4 GFlops -> 331.4 / 20 = 16.57 GFlops per core
#   chiclet   8 nodes, 2 x EPYC 7301  = 32 cores, 380.1 GFlops -> 380.1 / 32 = 11.878125
#   chifflet  8 nodes, 2 x E5-2680 v4 = 28 cores, 419.5 GFlops -> 419.5 / 28 = 14.98214285714...
#   chifflot  8 nodes, 2 x Gold 6126  = 24 cores, 408.9 GFlops -> 408.9 / 24 = 17.0375
LILLE = {
    "chetemi": (15, 20, 331.4, 16.57),
    "chiclet": (8, 32, 380.1, 11.878125),
    "chifflet": (8, 28, 419.5, 14.982142857142857),
    "chifflot": (8, 24, 408.9, 17.0375),
}
# econome: 2 x E5-2660 (8 cores each) = 16 cores, 207.4 GFlops -> 207.4 / 16 = 12.9625 GFlops per core
ECONOME_CORE_GFLOPS = 12.9625
# Epsilon = OneCore - (AllCores - OneCore) / (cores - 1) = 120 - 80 / (cores - 1):
#   16 cores: 120 - 80/15 = 120 - 5.3333... = 114.6666...     20 cores: 120 - 80/19 = 115.78947...
#   24 cores: 120 - 80/23 = 116.52173...   28 cores: 120 - 80/27 = 117.03703...
#   32 cores: 120 - 80/31 = 117.41935...
EPSILON = {16: 114.66666666666667, 20: 115.78947368421052, 24: 116.52173913043478,
           28: 117.03703703703704, 32: 117.41935483870968}
# Switch pstates (defaults): 1 flop at 1 / 6.1 = 0.16393... flop/s lasts 6.1 s;
# at 1 / 151.52 = 0.0065997... flop/s it lasts 151.52 s.
SWITCH_OFF_SPEED = 1 / 6.1
SWITCH_ON_SPEED = 1 / 151.52

UNITS = {"f": 1.0, "kf": 1e3, "Mf": 1e6, "Gf": 1e9, "Tf": 1e12}


def parse_speed(text: str) -> float:
    """'12.9625Gf' -> 12962500000.0 flop/s."""
    text = text.strip()
    for unit in sorted(UNITS, key=len, reverse=True):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * UNITS[unit]
    raise AssertionError(f"speed without unit: {text!r}")


def props(host: ET.Element) -> dict[str, str]:
    return {p.get("id"): p.get("value") for p in host.findall("prop")}


def compute_hosts(root: ET.Element) -> list[ET.Element]:
    return [h for h in root.iter("host") if h.get("id") != "master_host"]


def check_host_consistency(host: ET.Element) -> None:
    """Same number of pstates in speed and wattage_per_state; valid sleep_pstates; 3 values per pstate."""
    speeds = [parse_speed(s) for s in host.get("speed").split(",")]
    p = props(host)
    watts = [[float(v) for v in state.split(":")] for state in p["wattage_per_state"].split(",")]
    assert len(speeds) == len(watts), host.get("id")
    assert all(len(state) == 3 for state in watts), host.get("id")
    assert all(0 <= s for s in speeds)
    assert 0 <= int(host.get("pstate")) < len(speeds)
    if "sleep_pstates" in p:
        indexes = [int(i) for i in p["sleep_pstates"].split(":")]
        assert len(indexes) == 3 and len(set(indexes)) == 3
        assert all(0 <= i < len(speeds) for i in indexes)
        assert int(host.get("pstate")) not in indexes  # starts in a computation pstate
    assert float(p["wattage_off"]) >= 0


# ---------------------------------------------------------------------------------- reading JSON


@needs_snapshot
def test_econome_nodes_from_the_snapshot() -> None:
    nodes = load_g5k_nodes(SNAPSHOT, site="nantes", clusters=["econome"])
    assert [n.name for n in nodes] == [f"econome-{i}" for i in range(1, 23)]  # natural order, 22 nodes
    for node in nodes:
        assert (node.site, node.cluster, node.cores, node.cpus) == ("nantes", "econome", 16, 2)
        assert node.gflops == pytest.approx(207.4)  # performance.node_flops = 207400000000
        assert node.core_gflops == pytest.approx(14.04)  # performance.core_flops (kept, not used)
        assert node.clock_ghz == pytest.approx(2.2)
        assert node.memory_gib == pytest.approx(64.0)  # 68719476736 B = 64 x 2**30
        assert "E5-2660" in node.processor
        assert node.core_speed_gflops == pytest.approx(ECONOME_CORE_GFLOPS, rel=1e-15)
        assert node.core_speed_flops == pytest.approx(12.9625e9, rel=1e-15)


@needs_snapshot
def test_lille_nodes_per_cluster() -> None:
    nodes = load_g5k_nodes(SNAPSHOT / "lille")
    assert len(nodes) == 15 + 8 + 8 + 8 == 39
    for cluster, (count, cores, gflops, per_core) in LILLE.items():
        members = [n for n in nodes if n.cluster == cluster]
        assert len(members) == count, cluster
        assert {n.cores for n in members} == {cores}
        assert {n.site for n in members} == {"lille"}
        for node in members:
            assert node.gflops == pytest.approx(gflops)
            assert node.core_speed_gflops == pytest.approx(per_core, rel=1e-12)


@needs_snapshot
def test_filters_and_layouts() -> None:
    chiclet = SNAPSHOT / "lille" / "clusters" / "chiclet"
    from_cluster_dir = load_g5k_nodes(chiclet)
    assert [n.name for n in from_cluster_dir] == [f"chiclet-{i}" for i in range(1, 9)]
    assert {n.site for n in from_cluster_dir} == {"lille"}
    one = load_g5k_nodes(chiclet / "nodes" / "chiclet-3.json")  # site from its lille.grid5000.fr address
    assert [(n.site, n.cluster, n.name) for n in one] == [("lille", "chiclet", "chiclet-3")]
    assert {n.cluster for n in load_g5k_nodes(SNAPSHOT, site="nantes")} == {"econome", "ecotype"}
    with pytest.raises(G5KDataError, match="nosuch"):
        load_g5k_nodes(SNAPSHOT, site="lille", clusters=["chetemi", "nosuch"])


def _node_json(uid: str, site: str = "testsite", cores: int = 4, node_flops: float = 40e9) -> dict:
    return {
        "uid": uid,
        "type": "node",
        "architecture": {"nb_cores": cores, "nb_procs": 1, "nb_threads": cores},
        "performance": {"core_flops": 11e9, "node_flops": node_flops},
        "processor": {"clock_speed": 2_000_000_000, "model": "Test CPU", "version": "T1",
                      "other_description": "Test CPU T1 @ 2.00GHz"},
        "main_memory": {"ram_size": 8 * 2**30},
        "network_adapters": [{"network_address": f"{uid}.{site}.grid5000.fr"}],
    }


def _write_cluster(root: Path, site: str, cluster: str, nodes: list[dict]) -> Path:
    folder = root / site / "clusters" / cluster / "nodes"
    folder.mkdir(parents=True)
    for node in nodes:
        (folder / f"{node['uid']}.json").write_text(json.dumps(node))
    return folder


def test_missing_field_names_file_and_node(tmp_path: Path) -> None:
    broken = _node_json("tiny-2")
    del broken["performance"]["node_flops"]
    folder = _write_cluster(tmp_path, "testsite", "tiny", [_node_json("tiny-1"), broken])
    with pytest.raises(G5KDataError) as info:
        load_g5k_nodes(tmp_path)
    message = str(info.value)
    assert "tiny-2.json" in message and "node tiny-2" in message and "performance.node_flops" in message
    assert isinstance(info.value, PlatformError) and isinstance(info.value, ValueError)
    (folder / "tiny-2.json").write_text("{not json")
    with pytest.raises(G5KDataError, match=r"tiny-2\.json: malformed JSON at line 1"):
        load_g5k_nodes(tmp_path)
    (folder / "tiny-2.json").write_text(json.dumps(_node_json("tiny-2", cores=0)))
    with pytest.raises(G5KDataError, match="architecture.nb_cores"):
        load_g5k_nodes(tmp_path)
    with pytest.raises(G5KDataError, match="no such file"):
        load_g5k_nodes(tmp_path / "absent")


def test_saved_api_collection(tmp_path: Path) -> None:
    saved = tmp_path / "tiny_nodes.json"
    items = [_node_json("tiny-10"), _node_json("tiny-2")]
    saved.write_text(json.dumps({"items": items, "total": 2, "offset": 0}))
    nodes = load_g5k_nodes(saved)
    assert [(n.site, n.cluster, n.name) for n in nodes] == [("testsite", "tiny", "tiny-2"),
                                                            ("testsite", "tiny", "tiny-10")]
    assert nodes[0].gflops == 40.0 and nodes[0].core_speed_gflops == 10.0  # 40 GFlops / 4 cores


def test_fetch_builds_the_api_request_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    # urlopen is replaced: no network is used (fetch_g5k_nodes is for a user with access to the API).
    seen: dict[str, object] = {}

    class FakeResponse:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self) -> bytes:
            return json.dumps({"items": [_node_json("tiny-1", site="lille")], "total": 1}).encode()

    def fake_urlopen(request, timeout):
        seen["url"] = request.full_url
        seen["auth"] = request.get_header("Authorization")
        return FakeResponse()

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    nodes = fetch_g5k_nodes("lille", "tiny", auth=("alice", "secret"), version="ab3e7be2")
    assert seen["url"] == "https://api.grid5000.fr/stable/sites/lille/clusters/tiny/nodes?version=ab3e7be2"
    assert seen["auth"] == "Basic YWxpY2U6c2VjcmV0"  # base64("alice:secret")
    assert [(n.site, n.cluster, n.name, n.cores) for n in nodes] == [("lille", "tiny", "tiny-1", 4)]


# ---------------------------------------------------------------------------------- power model


def test_epsilon_by_hand() -> None:
    power = PowerModel()
    for cores, expected in EPSILON.items():
        assert power.epsilon(cores) == pytest.approx(expected, rel=1e-15)
    assert power.epsilon(16) == pytest.approx(114.6666666666, abs=1e-9)
    assert power.epsilon(1) == 200.0  # 1 core: AllCores
    assert power.epsilon(2) == pytest.approx(40.0)  # 120 - 80 / 1
    # k busy cores of 16: Epsilon + (AllCores - Epsilon) * k / 16 -> OneCore for k = 1
    eps = power.epsilon(16)
    assert eps + (200 - eps) / 16 == pytest.approx(120.0)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError):
            power.epsilon(bad)
    with pytest.raises(ValueError, match="switch_on_s"):
        PowerModel(switch_on_s=0)
    with pytest.raises(ValueError, match="off_w"):
        PowerModel(off_w=-1)


def test_one_core_node_gets_allcores_as_epsilon(tmp_path: Path) -> None:
    node = G5KNode(site="s", cluster="solo", name="solo-1", cores=1, gflops=10.0, clock_ghz=1.0,
                   memory_gib=1.0, processor="One")
    out = write_simgrid_platform([node], tmp_path / "solo.xml", zones="single")
    host = ET.parse(out).getroot().find(".//host[@id='solo-1']")
    assert host.get("core") == "1"
    assert parse_speed(host.get("speed").split(",")[0]) == 10e9  # 10 GFlops / 1 core
    assert props(host)["wattage_per_state"].split(",")[0] == "100.0:200.0:200.0"
    check_host_consistency(host)


# ---------------------------------------------------------------------------------- XML writing


def _tiny_nodes() -> list[G5KNode]:
    return [G5KNode(site="s", cluster=c, name=f"{c}-{i}", cores=4, gflops=40.0, clock_ghz=2.0,
                    memory_gib=8.0, processor="T") for c in ("aa", "bb") for i in (1, 2, 10)]


def test_zone_modes_and_options(tmp_path: Path) -> None:
    nodes = _tiny_nodes()
    single = ET.parse(write_simgrid_platform(nodes, tmp_path / "single.xml", zones="single")).getroot()
    top = single.find("zone")
    assert top.get("routing") == "Full" and top.findall("zone") == []
    assert single.find(".//link") is None and single.find(".//zoneRoute") is None
    assert len(top.findall("host")) == 6 + 1

    clustered = ET.parse(write_simgrid_platform(nodes, tmp_path / "cluster.xml")).getroot()
    zones = {z.get("id"): z for z in clustered.find("zone").findall("zone")}
    assert list(zones) == ["master", "aa", "bb"]
    assert [h.get("id") for h in zones["aa"].findall("host")] == ["aa-1", "aa-2", "aa-10"]
    assert [r.get("id") for r in zones["bb"].findall("router")] == ["bb_gateway"]
    routes = clustered.find("zone").findall("zoneRoute")
    assert len(routes) == 3  # master-aa, master-bb, aa-bb: one per pair of zones
    assert {r.find("link_ctn").get("id") for r in routes} == {clustered.find("zone/link").get("id")}

    bare = ET.parse(write_simgrid_platform(nodes, tmp_path / "bare.xml", with_sleep=False,
                                           master_host=False, zones="single")).getroot()
    assert bare.find(".//host[@id='master_host']") is None
    for host in bare.iter("host"):
        assert len(host.get("speed").split(",")) == 1 and "sleep_pstates" not in props(host)
        check_host_consistency(host)

    with pytest.raises(ValueError, match="zones"):
        write_simgrid_platform(nodes, tmp_path / "x.xml", zones="site")
    with pytest.raises(ValueError, match="--"):
        write_simgrid_platform(nodes, tmp_path / "x.xml", comment="a -- b")
    with pytest.raises(ValueError, match="duplicate"):
        write_simgrid_platform(nodes + nodes[:1], tmp_path / "x.xml")
    with pytest.raises(ValueError, match="no node"):
        write_simgrid_platform([], tmp_path / "x.xml")


def test_build_site_platform(tmp_path: Path) -> None:
    _write_cluster(tmp_path / "snap", "testsite", "tiny", [_node_json("tiny-1"), _node_json("tiny-2")])
    out = tmp_path / "p.xml"
    nodes = build_site_platform("testsite", None, out, tmp_path / "snap", zones="single")
    assert [n.name for n in nodes] == ["tiny-1", "tiny-2"]
    text = out.read_text()
    assert "snap/testsite" in text and str(tmp_path) not in text  # no absolute path in the file
    with pytest.raises(G5KDataError, match="site nosite"):
        build_site_platform("nosite", None, out, tmp_path / "snap")


# ---------------------------------------------------------------------------------- shipped files


def test_shipped_nantes_platform() -> None:
    text = NANTES_XML.read_text(encoding="utf-8")
    root = ET.fromstring(text)
    assert root.tag == "platform" and root.get("version") == "4.1"
    top = root.find("zone")
    assert top.findall("zone") == [] and root.find(".//link") is None  # one zone, no link at all
    hosts = compute_hosts(root)
    assert len(hosts) == 22 and len(root.findall(".//host[@id='master_host']")) == 1
    assert sorted(h.get("id") for h in hosts) == sorted(f"econome-{i}" for i in range(1, 23))
    for host in hosts:
        check_host_consistency(host)
        assert host.get("core") == "16" and host.get("pstate") == "0"
        speeds = [parse_speed(s) for s in host.get("speed").split(",")]
        assert speeds[0] == pytest.approx(ECONOME_CORE_GFLOPS * 1e9, rel=1e-15)  # 207.4e9 / 16
        assert speeds[1] == pytest.approx(1e-3)  # 1e-9 Mf
        assert speeds[2] == pytest.approx(SWITCH_OFF_SPEED, rel=1e-15)
        assert speeds[3] == pytest.approx(SWITCH_ON_SPEED, rel=1e-15)
        p = props(host)
        watts = [[float(v) for v in s.split(":")] for s in p["wattage_per_state"].split(",")]
        assert watts[0] == pytest.approx([100.0, EPSILON[16], 200.0])
        assert watts[1] == [10.0] * 3
        assert watts[2] == pytest.approx([100.99672131147543] * 3)
        assert watts[3] == pytest.approx([125.1743848996832] * 3)
        assert (p["sleep_pstates"], p["wattage_off"]) == ("1:2:3", "10.0")
        assert (p["cluster"], p["site"]) == ("econome", "nantes")
    for needle in ("ab3e7be2", "2020-03-31", "NOT Grid'5000 measurements", "ASSUMPTIONS",
                   "lexicographic", "econome-1, econome-10, econome-11", "routing=\"Full\""):
        assert needle in text, needle


def test_shipped_lille_platform() -> None:
    root = ET.parse(LILLE_XML).getroot()
    top = root.find("zone")
    zones = {z.get("id"): z for z in top.findall("zone")}
    assert set(zones) == {"master", *LILLE}  # 4 cluster zones + the master host's zone
    assert [h.get("id") for h in zones["master"].findall("host")] == ["master_host"]
    assert len(compute_hosts(root)) == 39
    for cluster, (count, cores, _gflops, per_core) in LILLE.items():
        hosts = zones[cluster].findall("host")
        assert len(hosts) == count
        assert [h.get("id") for h in hosts] == [f"{cluster}-{i}" for i in range(1, count + 1)]
        for host in hosts:
            check_host_consistency(host)
            assert host.get("core") == str(cores)
            assert parse_speed(host.get("speed").split(",")[0]) == pytest.approx(per_core * 1e9, rel=1e-12)
            idle, eps, full = (float(v) for v in props(host)["wattage_per_state"].split(",")[0].split(":"))
            assert (idle, full) == (100.0, 200.0) and eps == pytest.approx(EPSILON[cores], rel=1e-15)
            assert (props(host)["cluster"], props(host)["site"]) == (cluster, "lille")
    assert len(top.findall("zoneRoute")) == 5 * 4 // 2  # every pair of the 5 zones, one virtual link
    assert len(top.findall("link")) == 1
    assert props(top.find("link")) == {"virtual": "yes"}  # zero-latency FATPIPE, only to join the zones


@needs_snapshot
def test_shipped_files_are_what_the_script_regenerates(tmp_path: Path) -> None:
    script = REPO / "scripts" / "make_g5k_platforms.py"
    run = subprocess.run([sys.executable, str(script), "--output-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    for shipped in (NANTES_XML, LILLE_XML, NANTES_XML.with_name("g5k_nantes_econome_1core.xml")):
        assert (tmp_path / shipped.name).read_bytes() == shipped.read_bytes(), shipped.name
    check = subprocess.run([sys.executable, str(script), "--check"],
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr


# ---------------------------------------------------------------------------------- real SimGrid (optional)

SIMGRID_CHECK = r"""
import sys
from simgrid import Engine, Actor, Mailbox, this_actor, Host
plat, first, other = sys.argv[1:4]
e = Engine(["check", "--cfg=host/model:ptask_L07", "--cfg=plugin:host_energy",
            "--log=root.threshold:critical"])
e.load_platform(plat)
h = Host.by_name(first)
print("HOSTS", len(e.all_hosts), "CORES", h.core_count, "PSTATES", h.pstate_count,
      "SPEEDS", ",".join(repr(h.pstate_speed(i)) for i in range(h.pstate_count)))
def server():
    for _ in range(2):
        print("GOT_" + Mailbox.by_name("server").get(), Engine.clock)
def job():
    this_actor.execute(h.pstate_speed(0))  # one core, 1 s
    Mailbox.by_name("server").put("job", 1)
def switch():
    o = Host.by_name(other)
    o.pstate = 2; this_actor.execute(1); t_off = Engine.clock
    o.pstate = 1; this_actor.sleep_for(10)
    o.pstate = 3; this_actor.execute(1); o.pstate = 0
    print("SWITCH", t_off, Engine.clock)
    Mailbox.by_name("server").put("switch", 1)
Actor.create("server", Host.by_name("master_host"), server)
Actor.create("job", h, job)
Actor.create("switch", Host.by_name(other), switch)
e.run()
"""


def _simgrid_python() -> str | None:
    candidates = [sys.executable, os.environ.get("SIMGRID_PYTHON"), shutil.which("python3"),
                  "/usr/bin/python3"]
    for exe in dict.fromkeys(c for c in candidates if c):
        if exe == sys.executable:
            if importlib.util.find_spec("simgrid") is not None:
                return exe
            continue
        if Path(exe).exists() and subprocess.run([exe, "-c", "import simgrid"], capture_output=True,
                                                 timeout=60).returncode == 0:
            return exe
    return None


@pytest.mark.parametrize("platform, first, other, hosts, cores, speed0", [
    (NANTES_XML, "econome-1", "econome-22", 23, 16, 12.9625e9),
    (LILLE_XML, "chiclet-1", "chifflot-8", 40, 32, 11.878125e9),
])
def test_real_simgrid_accepts_the_platforms(platform: Path, first: str, other: str, hosts: int, cores: int,
                                            speed0: float) -> None:
    python = _simgrid_python()
    if python is None:
        pytest.skip("SimGrid's Python bindings (Debian python3-simgrid 3.32, or SIMGRID_PYTHON=...)"
                    " not importable")
    run = subprocess.run([python, "-c", SIMGRID_CHECK, str(platform), first, other],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    out = {line.split()[0]: line.split()[1:] for line in run.stdout.splitlines() if line}
    assert out["HOSTS"][0] == str(hosts) and out["HOSTS"][2] == str(cores) and out["HOSTS"][4] == "4"
    speeds = [float(s) for s in out["HOSTS"][6].split(",")]
    assert speeds == pytest.approx([speed0, 1e-3, SWITCH_OFF_SPEED, SWITCH_ON_SPEED], rel=1e-12)
    # switch-off ends at 6.1 s; then 10 s asleep and 151.52 s of boot: 6.1 + 10 + 151.52 = 167.62 s
    assert [float(v) for v in out["SWITCH"]] == pytest.approx([6.1, 167.62])
    # the job (1 s on one core) sends 1 byte to the master host (another zone for Lille): no delay
    assert float(out["GOT_job"][0]) == 1.0
    assert float(out["GOT_switch"][0]) == pytest.approx(167.62)
