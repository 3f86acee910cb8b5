"""One host view in every way a policy runs.

In-process, the embedded engine hands the policy each host's speeds per pstate, cores and initial
pstate; Batsim's SIMULATION_BEGINS carries none of them. Behind ``gridsched serve --platform FILE``
and in the pybatsim plugin (option ``"platform"``) they are filled in from the platform file with
the engine's own reader, after a check that the file is the platform Batsim announced. Without the
file, reading them raises :class:`HostInfoUnknown` with the way out.

The "Batsim" side is the embedded engine over ZMQ (``gridsched engine``, a separate process) and
the real Batsim 4.2.1 recordings of ``../shared/batsim-4.2.1`` (skipped when absent). Every socket
and process wait is bounded.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import zmq

from schedulers import registry
from schedulers.batsim.runner import free_tcp_endpoint as free_endpoint
from schedulers.registry import PolicyOptionError
from schedulers.batsim.platform_file import PlatformFile, PlatformMismatch
from schedulers.batsim.pybatsim_glue import make_pybatsim_scheduler, pybatsim_available
from schedulers.batsim.replay import ReplayPolicy, batsim_messages, scheduler_messages
from schedulers.batsim.server import add_serve_parser, handle_raw, run_serve, serve
from schedulers.core.events import SimulationBegins
from schedulers.core.model import Host, HostInfoUnknown, Platform
from schedulers.core.policy import Policy, PolicyError
from schedulers.easy import EASY
from schedulers.engine import simulate
from schedulers.fcfs import FCFS
from schedulers.inputs.errors import PlatformError

ROOT = Path(__file__).resolve().parents[1]
FIX = Path(__file__).parent / "fixtures"
BATSIM = ROOT.parent / "shared" / "batsim-4.2.1"
PLATFORMS = sorted((ROOT / "platforms").glob("*.xml")) + sorted(FIX.glob("*.xml"))

#: Real Batsim 4.2.1 runs whose platform file is shipped with the recordings.
RECORDED = [
    ("mini_sched_demo_energy", "energy_platform_homogeneous_no_net.xml"),
    ("mini_sched_reject_kill_forwardprofiles", "energy_platform_homogeneous_no_net.xml"),
    ("pybatsim_fcfsSchedSleep_intfix_6pstates", "energy_6pstates_4hosts.xml"),
]
needs_recordings = pytest.mark.skipif(not (BATSIM / "transcripts").is_dir(),
                                      reason=f"real Batsim 4.2.1 recordings not found in {BATSIM}")
needs_pybatsim = pytest.mark.skipif(
    not pybatsim_available(),
    reason="pybatsim is not importable; install it with `pip install --no-deps pybatsim==4.0.0a0 docopt sortedcontainers`")

TIMEOUT_S = 30


def host_view(platform: Platform) -> list[tuple]:
    """Everything a policy can read about the hosts (raises HostInfoUnknown when speeds are unknown)."""
    return [(h.id, h.name, list(h.speeds), h.speed, h.cores, dict(h.properties), dict(h.zone_properties),
             h.pstate, h.state.value) for h in platform.hosts]


class HostView(FCFS):
    """FCFS that records the hosts it is given at SIMULATION_BEGINS (and needs speeds)."""

    name = "host-view"
    needs_speeds = True
    instances: list["HostView"] = []  # noqa: RUF012 - the instance made inside run_serve is found here

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.view: list[tuple] | None = None
        HostView.instances.append(self)

    def on_simulation_begins(self, platform: Platform) -> None:
        self.view = host_view(platform)


class RecordingReplay(ReplayPolicy):
    """Replays a recorded run's replies and records the hosts it is given."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.view: list[tuple] | None = None

    def on_simulation_begins(self, platform: Platform) -> None:
        self.view = host_view(platform)


def delay_workload(nb_hosts: int) -> dict:
    return {"nb_res": nb_hosts,
            "jobs": [{"id": "a", "subtime": 0, "walltime": 50, "res": 1, "profile": "d"},
                     {"id": "b", "subtime": 1, "walltime": -1, "res": min(2, nb_hosts), "profile": "d"}],
            "profiles": {"d": {"type": "delay", "delay": 5}}}


def in_process_view(platform: Path) -> list[tuple]:
    n = len(PlatformFile(platform).hosts)
    policy = HostView()
    simulate(platform, [delay_workload(n)], policy)
    assert policy.view is not None
    return policy.view


def serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gridsched")
    add_serve_parser(parser.add_subparsers(dest="command", required=True))
    return parser


def fake_batsim(endpoint: str, messages: list[str], replies: list[str], errors: list[BaseException]) -> threading.Thread:
    """A REQ client replaying recorded Batsim messages (bounded waits), started at once."""

    def run() -> None:
        ctx = zmq.Context()
        sock = ctx.socket(zmq.REQ)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.RCVTIMEO, 5000)
        sock.setsockopt(zmq.SNDTIMEO, 5000)
        try:
            sock.connect(endpoint)
            for m in messages:
                sock.send_string(m)
                replies.append(sock.recv_string())
        except BaseException as exc:  # reported by the test
            errors.append(exc)
        finally:
            sock.close(linger=0)
            ctx.term()

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th


# ----------------------------------------------------------------------- unknown speeds, loudly
def test_unknown_speeds_and_cores_raise_with_the_way_out() -> None:
    h = Host(id=3, name="node-3", properties={"owner": "u1"})
    assert not h.speeds_known and not h.cores_known
    for attr in ("speeds", "speed", "cores"):
        with pytest.raises(HostInfoUnknown) as info:
            getattr(h, attr)
        msg = str(info.value)
        assert "'node-3'" in msg and "id 3" in msg and "unknown" in msg
        assert "gridsched serve --platform FILE" in msg and '"platform"' in msg and "\n" not in msg
        assert isinstance(info.value, PolicyError)
    assert h.owner == "u1" and "unknown" in repr(h)
    h.speeds, h.cores, h.pstate = [2e9, 1e9], 8, 1
    assert (h.speeds, h.speed, h.cores) == ([2e9, 1e9], 1e9, 8)
    assert Host(id=0, name="x", speeds=[]).speeds_known is False  # empty = unknown, as before
    with pytest.raises(ValueError, match="cores"):
        Host(id=0, name="x", cores=0)


def test_platform_require_speeds() -> None:
    known = Host(id=0, name="a", speeds=[1e9], cores=4)
    unknown = Host(id=1, name="b")
    Platform(hosts=[known]).require_speeds()
    assert Platform(hosts=[known]).speeds_known and not Platform(hosts=[known, unknown]).speeds_known
    with pytest.raises(HostInfoUnknown, match=r"policy 'x' needs the speeds .* 1 of 2 hosts \(first: 'b', id 1\)"):
        Platform(hosts=[known, unknown]).require_speeds("policy 'x'")


@needs_recordings
def test_policy_needing_speeds_fails_at_simulation_begins_without_platform() -> None:
    first = batsim_messages(BATSIM / "transcripts" / "mini_sched_demo_energy.jsonl")[0]
    with pytest.raises(HostInfoUnknown, match="policy 'host-view' needs the speeds .* 7 of 7 hosts .*--platform FILE"):
        handle_raw(HostView(), first)


@needs_recordings
@pytest.mark.parametrize("policy_cls", [FCFS, EASY])
def test_fcfs_and_easy_need_no_speeds(policy_cls: type[Policy]) -> None:
    """The recorded real runs still play through FCFS/EASY without any platform file."""
    policy = policy_cls()
    for raw in batsim_messages(BATSIM / "transcripts" / "mini_sched_demo_energy.jsonl"):
        json.loads(handle_raw(policy, raw))
    assert policy.simulation_ended and not policy.platform.speeds_known


# --------------------------------------------------------------------- the platform file itself
def test_platform_file_fills_what_batsim_does_not_send() -> None:
    pf = PlatformFile(FIX / "dvfs2.xml")
    hosts = [Host(id=0, name="n0", properties={"role": "", "wattage_per_state": "100:200, 80:120, 10:10, 150:150, 180:180",
                                               "wattage_off": "5", "sleep_pstates": "2:3:4"}),
             Host(id=1, name="n1", properties={"role": "", "wattage_per_state": "100:200, 80:120, 10:10, 150:150, 180:180",
                                               "wattage_off": "5", "sleep_pstates": "2:3:4"})]
    pf.fill(hosts)
    assert [(h.speeds, h.cores, h.pstate) for h in hosts] == [([1e8, 5e7, 1e-3, 0.5, 0.1], 1, 0)] * 2


def _announced(platform: Path) -> list[Host]:
    """The compute resources Batsim would announce for ``platform`` (names, ids, properties only)."""
    specs = sorted(PlatformFile(platform).hosts.values(), key=lambda s: s.name)
    return [Host(id=i, name=s.name, properties=dict(s.properties), zone_properties=dict(s.zone_properties))
            for i, s in enumerate(specs)]


def test_platform_file_mismatches_are_one_line_naming_file_and_host(tmp_path: Path) -> None:
    path = FIX / "hetero4.xml"
    pf = PlatformFile(path)

    def err(hosts: list[Host]) -> PlatformMismatch:
        with pytest.raises(PlatformMismatch) as info:
            pf.fill(hosts)
        assert "\n" not in str(info.value) and str(path) in str(info.value)
        assert not any(h.speeds_known for h in hosts)  # nothing filled
        return info.value

    hosts = _announced(path)
    e = err(hosts + [Host(id=4, name="c1", properties={"role": ""})])
    assert e.host == "c1" and "Batsim announced compute host 'c1' (id 4), which the file does not have" in str(e)
    e = err(hosts[:3])
    assert e.host == "b2" and "the file has compute host 'b2', which Batsim did not announce" in str(e)
    hosts = _announced(path)
    hosts[2].properties["owner"] = "user9"
    e = err(hosts)
    assert e.host == "b1" and "property 'owner' is 'user2' in the file but 'user9' from Batsim" in str(e)
    hosts = _announced(path)
    del hosts[0].properties["wattage_off"]
    hosts[1].zone_properties["site"] = "x"
    e = err(hosts)
    assert e.host == "a1" and "'wattage_off' is '10' in the file but absent from Batsim" in str(e)
    assert "(and 1 other difference)" in str(e)
    with pytest.raises(PlatformError, match="cannot read"):
        PlatformFile(tmp_path / "missing.xml")


# ---------------------------------------- in-process == behind `gridsched serve --platform`
@pytest.mark.parametrize("platform", PLATFORMS, ids=lambda p: p.name)
def test_serve_with_platform_gives_the_in_process_view(platform: Path, tmp_path: Path, monkeypatch,
                                                       capsys) -> None:
    """`gridsched engine` (Batsim's side, a separate process) <-> `gridsched serve --platform FILE`:
    the policy sees the hosts exactly as in the in-process run."""
    expected = in_process_view(platform)
    assert all(v[2] and v[4] >= 1 for v in expected)
    monkeypatch.setitem(registry.POLICIES, "host-view", HostView)
    HostView.instances.clear()
    endpoint = free_endpoint()
    args = serve_parser().parse_args(["serve", "--policy", "host-view", "--socket", endpoint, "--platform",
                                      str(platform), "--connect-timeout", str(TIMEOUT_S),
                                      "--idle-timeout", str(TIMEOUT_S)])
    status: list[int] = []
    th = threading.Thread(target=lambda: status.append(run_serve(args)), daemon=True)
    th.start()
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps(delay_workload(len(expected))), encoding="utf-8")
    eng = subprocess.run([sys.executable, "-m", "schedulers.cli", "engine", "-p", str(platform), "-w", str(wl),
                          "-s", endpoint, "-e", str(tmp_path / "out"), "--timeout", str(TIMEOUT_S)],
                         capture_output=True, text=True, timeout=2 * TIMEOUT_S)
    th.join(TIMEOUT_S)
    assert eng.returncode == 0, eng.stderr
    assert not th.is_alive() and status == [0], capsys.readouterr().err
    (policy,) = HostView.instances
    assert policy.view == expected


@pytest.mark.parametrize("platform", [FIX / "hetero4.xml"], ids=lambda p: p.name)
def test_serve_without_platform_stops_a_policy_needing_speeds(platform: Path, tmp_path: Path, monkeypatch,
                                                              capsys) -> None:
    monkeypatch.setitem(registry.POLICIES, "host-view", HostView)
    endpoint = free_endpoint()
    args = serve_parser().parse_args(["serve", "--policy", "host-view", "--socket", endpoint,
                                      "--connect-timeout", str(TIMEOUT_S), "--idle-timeout", str(TIMEOUT_S)])
    status: list[int] = []
    th = threading.Thread(target=lambda: status.append(run_serve(args)), daemon=True)
    th.start()
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps(delay_workload(4)), encoding="utf-8")
    eng = subprocess.run([sys.executable, "-m", "schedulers.cli", "engine", "-p", str(platform), "-w", str(wl),
                          "-s", endpoint, "-e", str(tmp_path / "out"), "--timeout", "3"],
                         capture_output=True, text=True, timeout=2 * TIMEOUT_S)
    th.join(TIMEOUT_S)
    assert eng.returncode != 0  # its scheduler stopped answering
    assert status == [2]   # the inputs lack what the policy needs (no --platform): bad input
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("gridsched serve: bad input: policy 'host-view' needs the speeds")
    assert "--platform FILE" in err[-1]


# ------------------------------------------------------------------ the real Batsim recordings
@needs_recordings
@pytest.mark.parametrize("run,platform", RECORDED, ids=[r for r, _ in RECORDED])
def test_recorded_batsim_runs_with_platform(run: str, platform: str) -> None:
    """Real Batsim 4.2.1's messages + its platform file = the engine's in-process view; the
    recorded replies are unchanged."""
    transcript = BATSIM / "transcripts" / f"{run}.jsonl"
    plat = BATSIM / "inputs" / platform
    policy = RecordingReplay({"transcript": str(transcript)})
    endpoint = free_endpoint()
    replies: list[str] = []
    errors: list[BaseException] = []
    client = fake_batsim(endpoint, batsim_messages(transcript), replies, errors)
    try:
        stats = serve(policy, endpoint, connect_timeout=10, idle_timeout=10, platform=plat)
    finally:
        client.join(TIMEOUT_S)
    assert not errors and stats.ended
    assert replies == scheduler_messages(transcript)
    assert policy.view == in_process_view(plat)


@needs_recordings
def test_recorded_batsim_run_with_the_wrong_platform(capsys, monkeypatch) -> None:
    transcript = BATSIM / "transcripts" / "mini_sched_demo_energy.jsonl"
    wrong = BATSIM / "inputs" / "energy_6pstates_4hosts.xml"  # host0-host3, other wattages
    monkeypatch.setitem(registry.POLICIES, "replay", ReplayPolicy)
    endpoint = free_endpoint()
    replies: list[str] = []
    errors: list[BaseException] = []
    client = fake_batsim(endpoint, batsim_messages(transcript)[:1], replies, errors)
    args = serve_parser().parse_args(["serve", "--policy", "replay", "--policy-options",
                                      json.dumps({"transcript": str(transcript)}), "--socket", endpoint,
                                      "--platform", str(wrong), "--connect-timeout", "10", "--idle-timeout", "10"])
    try:
        assert run_serve(args) == 2
    finally:
        client.join(TIMEOUT_S)
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith(f"gridsched serve: --platform: platform file {str(wrong)!r} does not match")
    assert "Batsim announced compute host 'host4' (id 4), which the file does not have" in line
    assert "(and " in line and "batsim -p" in line
    assert run_serve(serve_parser().parse_args(["serve", "--policy", "fcfs", "--platform", "nowhere.xml"])) == 2
    assert "--platform: nowhere.xml: cannot read platform" in capsys.readouterr().err


# ------------------------------------------------------------------------------------ pybatsim
@needs_pybatsim
def test_pybatsim_platform_option(tmp_path: Path) -> None:
    """The pybatsim plugin with -o '{"platform": FILE}' against `gridsched engine`: the in-process view."""
    from pybatsim.batsim.batsim import Batsim

    platform = ROOT / "platforms" / "g5k_lille_2020.xml"
    expected = in_process_view(platform)
    cls = make_pybatsim_scheduler(HostView)
    sched = cls({"platform": str(platform)})
    assert sched.policy.options == {} and sched.platform_file.source == str(platform)
    endpoint = free_endpoint()
    error: list[BaseException] = []

    def target() -> None:
        try:
            Batsim(sched, endpoint, TIMEOUT_S * 1000).start()
        except BaseException as exc:  # reported below
            error.append(exc)

    th = threading.Thread(target=target, daemon=True)
    th.start()
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps(delay_workload(len(expected))), encoding="utf-8")
    try:
        eng = subprocess.run([sys.executable, "-m", "schedulers.cli", "engine", "-p", str(platform), "-w", str(wl),
                              "-s", endpoint, "-e", str(tmp_path / "out"), "--timeout", str(TIMEOUT_S)],
                             capture_output=True, text=True, timeout=2 * TIMEOUT_S)
    finally:
        th.join(TIMEOUT_S)
    assert eng.returncode == 0, eng.stderr
    assert not th.is_alive() and not error, error
    assert sched.policy.view == expected


@needs_pybatsim
def test_pybatsim_platform_option_errors() -> None:
    generic = make_pybatsim_scheduler(None)
    # "platform" is the glue's; the other keys are the policy's options
    sched = generic({"policy": "conservative", "platform": str(FIX / "hetero4.xml"), "reservations": 2})
    assert sched.policy.options == {"reservations": 2} and len(sched.platform_file.hosts) == 4
    with pytest.raises(PolicyOptionError, match="policy 'easy' has no option 'x'"):
        generic({"policy": "easy", "platform": str(FIX / "hetero4.xml"), "x": 1})
    with pytest.raises(PlatformError, match="cannot read"):
        generic({"policy": "easy", "platform": "nowhere.xml"})
    with pytest.raises(TypeError, match="'platform' must be the path"):
        generic({"policy": "easy", "platform": 3})
    assert generic({"policy": "easy"}).platform_file is None
    # "energy" is the glue's too: whether Batsim runs with -E (serve --energy / --no-energy)
    sched = generic({"policy": "easy", "energy": False})
    assert sched.energy is False and sched.policy.options == {}
    assert generic({"policy": "easy"}).energy is None
    with pytest.raises(TypeError, match="'energy' must be true or false"):
        generic({"policy": "easy", "energy": "yes"})


@needs_pybatsim
@needs_recordings
def test_pybatsim_recorded_run_with_platform() -> None:
    """pybatsim's callbacks + the platform option, on a real Batsim 4.2.1 run."""
    from pybatsim.batsim.batsim import Batsim

    transcript = BATSIM / "transcripts" / "pybatsim_fcfsSchedSleep_intfix_6pstates.jsonl"
    plat = BATSIM / "inputs" / "energy_6pstates_4hosts.xml"
    cls = make_pybatsim_scheduler(RecordingReplay)
    sched = cls({"transcript": str(transcript), "platform": str(plat)})
    endpoint = free_endpoint()
    error: list[BaseException] = []

    def target() -> None:
        try:
            Batsim(sched, endpoint, 10_000).start()
        except BaseException as exc:  # reported below
            error.append(exc)

    th = threading.Thread(target=target, daemon=True)
    th.start()
    replies: list[str] = []
    errors: list[BaseException] = []
    fake_batsim(endpoint, batsim_messages(transcript), replies, errors).join(TIMEOUT_S)
    th.join(TIMEOUT_S)
    assert not th.is_alive() and not error and not errors, (error, errors)
    assert replies == scheduler_messages(transcript)
    assert sched.policy.view == in_process_view(plat)


def test_initial_pstate_comes_from_the_file(tmp_path: Path) -> None:
    """The hosts are filled before the policy sees them, initial pstate included: a host that
    starts in its sleep pstate is not available."""
    xml = (FIX / "dvfs2.xml").read_text(encoding="utf-8").replace('<host id="n1" speed', '<host id="n1" pstate="2" speed')
    path = tmp_path / "dvfs2_n1_asleep.xml"
    path.write_text(xml, encoding="utf-8")
    hosts = _announced(path)
    ev = SimulationBegins(0.0, nb_resources=2, nb_compute_resources=2, compute_resources=hosts)
    PlatformFile(path).fill_events([ev])
    policy = HostView()
    policy.decide(0.0, [ev])
    assert policy.view is not None and [(v[1], v[2][0], v[7]) for v in policy.view] == [("n0", 1e8, 0), ("n1", 1e8, 2)]
    assert policy.nb_available == 1 and str(policy.available) == "0"


SLEEPY_PROPS = {"wattage_per_state": "9:9, 95:190, 125:125, 101:101", "wattage_off": "9", "sleep_pstates": "0:3:2"}


def _sleepy_platform(path: Path) -> Path:
    """One host declared at its sleep pstate 0 (GridGym's ``platform_64hosts_2019.xml`` declares its
    hosts so), with :data:`SLEEPY_PROPS`."""
    props = "".join(f"<prop id='{k}' value='{v}'/>" for k, v in SLEEPY_PROPS.items())
    path.write_text("<?xml version='1.0'?><platform version='4.1'><zone id='z' routing='Full'>"
                    f"<host id='h' pstate='0' speed='0.001f, 1Mf, 1f, 0.5f'>{props}</host>"
                    "<host id='master_host' speed='1Gf'/></zone></platform>", encoding="utf-8")
    return path


def _sleepy_messages() -> list[str]:
    """Batsim 4.2.1's first two messages on :func:`_sleepy_platform`: SIMULATION_BEGINS (the host
    ``idle``, no pstate) then a one-host job."""
    host = {"id": 0, "name": "h", "state": "idle", "zone_properties": {}, "properties": {"role": "", **SLEEPY_PROPS}}
    begins = {"nb_resources": 1, "nb_compute_resources": 1, "nb_storage_resources": 0,
              "allow_compute_sharing": False, "allow_storage_sharing": True, "config": {},
              "compute_resources": [host], "storage_resources": [], "workloads": {"w0": "w.json"},
              "profiles": {}}
    job = {"job_id": "w0!1", "job": {"id": "w0!1", "subtime": 0, "walltime": 10, "res": 1, "profile": "d"}}
    return [json.dumps({"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": begins}]}),
            json.dumps({"now": 0.0, "events": [{"timestamp": 0.0, "type": "JOB_SUBMITTED", "data": job}]})]


def _started(policy: Policy, platform: PlatformFile | None, energy: bool | None) -> bool:
    first, second = _sleepy_messages()
    handle_raw(policy, first, platform, energy=energy)
    assert policy.platform.hosts[0].energy is energy
    reply = json.loads(handle_raw(policy, second, platform, energy=energy))
    executed = [e for e in reply["events"] if e["type"] == "EXECUTE_JOB"]
    assert executed in ([], [{"timestamp": 0.0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0"}}])
    return bool(executed)


@pytest.mark.parametrize("energy, started", [(False, True), (True, False), (None, False)])
def test_served_policy_reads_sleep_pstates_only_with_energy(tmp_path: Path, energy: bool | None,
                                                            started: bool) -> None:
    """Batsim reads sleep_pstates only with -E (Machines::create_machines): told --no-energy, a
    served FCFS runs the job on the host declared at its sleep pstate (as batsched does under real
    Batsim 4.2.1 without -E); with -E, or not told, the host is asleep and FCFS waits for it."""
    platform = PlatformFile(_sleepy_platform(tmp_path / "sleepy.xml"))
    assert _started(FCFS(), platform, energy) is started


@pytest.mark.parametrize("energy", [False, True, None])
def test_served_policy_without_platform_takes_batsim_state(energy: bool | None) -> None:
    """Without the platform file the initial pstate is unknown (Batsim does not send it): the host
    Batsim announces idle is awake, whatever its sleep_pstates, and reading its pstate raises."""
    policy = FCFS()
    assert _started(policy, None, energy) is True
    host = policy.platform.hosts[0]
    assert not host.pstate_known
    with pytest.raises(HostInfoUnknown, match=r"host 'h' \(id 0\): the initial pstate is unknown"):
        _ = host.pstate


def test_energy_model_of_a_host() -> None:
    sleepy = {"sleep_pstates": "0:3:2"}
    assert Host(0, "h", properties=sleepy).special_pstates == {0, 2, 3}
    assert Host(0, "h", properties=sleepy, energy=True).sleep_pstates == (0, 3, 2)
    off = Host(0, "h", properties=sleepy, energy=False)
    assert off.special_pstates == frozenset() and off.sleep_pstates is None
    # a malformed property is not read without -E (Batsim does not read it either)
    assert Host(0, "h", properties={"sleep_pstates": "x"}, energy=False).sleep_pstates is None


@pytest.mark.parametrize("flag, energy", [([], None), (["--energy"], True), (["--no-energy"], False)])
def test_serve_energy_flag(flag: list[str], energy: bool | None) -> None:
    args = serve_parser().parse_args(["serve", "--policy", "fcfs", *flag])
    assert args.energy is energy
