"""Networked platforms: Batsim's internal messages take their route's time (engine/netroute.py,
engine/netserver.py). Delays worked by hand from SimGrid's routing and L07 model; a timeline worked
by hand and recorded on real Batsim 4.2.1; real-Batsim recordings on Batsim's example platforms."""

from __future__ import annotations

import csv
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from schedulers.engine import simulate
from schedulers.engine.netroute import NetworkUnsupported, message_delays, parse_bandwidth, parse_latency
from schedulers.engine.platform import read_platform
from schedulers.engine.ports import InProcessPort, batsim_time
from schedulers.registry import get_policy

HERE = Path(__file__).parent
REC = HERE / "fixtures" / "batsim_network"
EXAMPLES = HERE.parents[1] / "shared" / "data" / "batsim-examples"
GAMMA = 4194304.0  # SimGrid's network/TCP-gamma (B)
needs_examples = pytest.mark.skipif(not EXAMPLES.exists(), reason="../shared/data/batsim-examples is absent")


def delays_of(xml: str | Path, master: str = "master_host"):
    spec = read_platform(xml, master)
    return spec.message_delays


def test_units():
    assert parse_bandwidth("125MBps", "x") == 125e6
    assert parse_bandwidth("10Gbps", "x") == 10e9 / 8
    assert parse_bandwidth("1KiBps", "x") == 1024
    assert parse_latency("50us", "x") == pytest.approx(50e-6)
    assert parse_latency("1.5ms", "x") == pytest.approx(1.5e-3)
    assert parse_latency("2", "x") == 2.0
    with pytest.raises(NetworkUnsupported):
        parse_bandwidth("fast", "x")


def test_tiny_delays_by_hand():
    # master->master: link 'loop' 0.5 s, 1 EBps; the TCP-gamma bound gamma/(2 x 0.5 s) = 4,194,304 B/s
    # is the bottleneck: 0.5 + 1/4194304 s. h0->master: 1 s, bound gamma/2: 1 + 2/4194304 s.
    d = delays_of(REC / "tiny_net.xml")
    assert d.master == pytest.approx(0.5 + 1 / GAMMA, abs=1e-15)
    assert d.hosts == {"h0": pytest.approx(1 + 2 / GAMMA, abs=1e-15)}


@needs_examples
def test_cluster_delays_by_hand():
    # cluster_energy_128.xml: two flat clusters (private links 125 MBps/50 us, backbones 2.25 GBps/500 us)
    # joined by a 1.25 GBps/500 us link. master_host0 to itself: its private link up, the backbone (once),
    # its private link down = 600 us, + 1 B at 125 MBps. host0 to the master: up 50 + backbone 500 + link
    # 500 + master backbone 500 + down 50 = 1600 us, + 1 B at 125 MBps (gamma/(2L) is far larger).
    d = delays_of(EXAMPLES / "cluster_energy_128.xml")
    assert d.master == pytest.approx(600e-6 + 1 / 125e6, rel=1e-12)
    assert len(d.hosts) == 128
    assert all(v == pytest.approx(1600e-6 + 1 / 125e6, rel=1e-12) for v in d.hosts.values())
    # small_platform.xml: Jupiter -> master_host is link 9 (1.461517 ms, 7.20975 MBps), the master's
    # explicit loopback is 15 us at 498 MBps.
    d = delays_of(EXAMPLES / "small_platform.xml")
    assert d.master == pytest.approx(15e-6 + 1 / 498e6, rel=1e-12)
    assert d.hosts["Jupiter"] == pytest.approx(1.461517e-3 + 1 / 7.20975e6, rel=1e-12)


def test_unsupported_routing_is_refused_with_the_zone(tmp_path):
    p = tmp_path / "floyd.xml"
    p.write_text('<?xml version="1.0"?><platform version="4.1"><zone id="z" routing="Floyd">'
                 '<host id="master_host" speed="1Gf"/><host id="a" speed="1Gf"/>'
                 '<link id="l" bandwidth="1GBps" latency="1ms"/>'
                 '<route src="a" dst="master_host"><link_ctn id="l"/></route></zone></platform>')
    spec = read_platform(p)
    assert spec.message_delays is None and "zone 'z'" in spec.network_error and "Floyd" in spec.network_error
    from schedulers.engine import EngineError, build_engine
    wl = {"nb_res": 1, "jobs": [], "profiles": {}}
    with pytest.raises(EngineError, match="real Batsim"):
        build_engine(spec, [wl])


class Recorder:
    """A scheduler port that notes the ``now`` of every message it is sent."""

    def __init__(self, policy) -> None:
        self.inner, self.times = InProcessPort(policy), []

    def exchange(self, now, events):
        self.times.append((now, [type(e).__name__ for e in events]))
        return self.inner.exchange(now, events)


def test_tiny_timeline_by_hand(tmp_path):
    # One 10 s delay job at t = 0, FCFS. m = 0.5 + 1/gamma (master -> master), h = 1 + 2/gamma (h0).
    # 0: the submitter's hello is queued, SIMULATION_BEGINS goes out, the server receives the hello
    #    (ends at m) then the scheduler's SCHED_READY (2m), then the JOB_SUBMITTED posted at m (3m):
    #    sent at once, alone; the goodbye, posted after, ends at 4m; EXECUTE_JOB, posted at 3m behind
    #    it, at 5m: the job starts at 5m, ends at 10 + 5m; SCHED_READY at 6m brings the NOTIFY.
    #    JOB_COMPLETED from h0 at 10 + 5m + h. The scheduler reads that time printed with 6 decimals,
    #    13.500002, later than the clock (13.50000167): Batsim's request-reply actor sleeps until the
    #    reply's now before its SCHED_READY (send_message_at_time), which arrives m later;
    #    SIMULATION_ENDS then. (The EXECUTE_JOB, dated 1.500001 > 3m, waits behind the goodbye anyway.)
    m, h = 0.5 + 1 / GAMMA, 1 + 2 / GAMMA
    port = Recorder(get_policy("fcfs"))
    simulate(REC / "tiny_net.xml", [REC / "tiny_net.json"], port, export_prefix=tmp_path / "out_")
    want = [(0.0, ["SimulationBegins"]), (3 * m, ["JobSubmitted"]), (6 * m, ["Notify"]),
            (10 + 5 * m + h, ["JobCompleted"]), (13.500002 + m, ["SimulationEnds"])]
    assert batsim_time(10 + 5 * m + h) == 13.500002 > 10 + 5 * m + h
    assert [k for _, k in port.times] == [k for _, k in want]
    for (got, _), (exp, _) in zip(port.times, want):
        assert got == pytest.approx(exp, abs=1e-8)
    row = next(csv.DictReader(open(tmp_path / "out_jobs.csv")))
    assert float(row["starting_time"]) == pytest.approx(5 * m, abs=1e-6)  # 6 decimals
    assert float(row["finish_time"]) == pytest.approx(10 + 5 * m, abs=1e-6)
    # real Batsim 4.2.1 printed the same (fixtures/batsim_network/tiny_jobs.csv)
    assert_same_rows(tmp_path / "out_jobs.csv", REC / "tiny_jobs.csv")


ENERGY_COLS = {"consumed_energy", "energy", "epower", "wattmin", "consumed_joules"}
TIME_COLS = {"starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time", "time",
             "submission_time", "requested_time"}


def assert_same_rows(got_path: Path, want_path: Path) -> None:
    """Batsim's rows (out_jobs.csv by job, the others row by row): times within 1e-4 s, energies
    within 1e-6 relative, everything else equal."""
    got, want = list(csv.DictReader(open(got_path))), list(csv.DictReader(open(want_path)))
    assert len(got) == len(want), got_path.name
    if "job_id" in want[0]:
        key = lambda r: (r["workload_name"], r["job_id"])  # noqa: E731
        got, want = sorted(got, key=key), sorted(want, key=key)
    for g, w in zip(got, want):
        for col, wv in w.items():
            gv = g[col]
            if col in ("stretch", "metadata", "scheduling_time", "simulation_time"):  # (wall-clock times)
                continue
            if col in ENERGY_COLS and wv not in ("NA", "") and gv not in ("NA", ""):
                assert math.isclose(float(gv), float(wv), rel_tol=1e-6, abs_tol=1e-9), (got_path.name, w, col)
            elif col in TIME_COLS:
                assert abs(float(gv) - float(wv)) <= 1e-4, (got_path.name, w, col)
            else:
                assert gv == wv, (got_path.name, w, col)


CASES = {
    "e128_easy": ("cluster_energy_128.xml", "e128_workload.json", "easy", {}, dict(energy=True)),
    "e128_sleep": ("cluster_energy_128.xml", "e128_workload.json", "easy", {"idle_timeout": 60}, dict(energy=True)),
    "e128_green": ("cluster_energy_128.xml", "e128_workload.json", "green-easy", {"delta": 30},
                   dict(energy=True, compute_sharing=True)),
    "small_easy": ("small_platform.xml", "small_workload.json", "easy", {}, {}),
    # SimGrid's clock at the last bit (schedulers/engine/steps.py): in clock_e128, w0!1 (a 1-s sleep
    # from 1.00240003199999972) ends one step before the EXECUTE_JOB of w0!5 reaches the server
    # (1e-16 s later, the same printed time), so its JOB_COMPLETED is received first (2.004) and w0!6
    # starts at 2.0084, not 2.0068; in subclock_e128 the submitter wakes at 0.99999999999999989 for
    # jobs of subtime 1: it posts w0!1 alone, w0!2 and w0!3 after a second sleep
    "clock_e128": ("cluster_energy_128.xml", "clock_workload.json", "fcfs", {}, dict(energy=True)),
    "subclock_e128": ("cluster_energy_128.xml", "subclock_workload.json", "fcfs", {}, dict(energy=True)),
    # Batsim's remaining walltime after a stage that ends with its wait_for timeout (1 s, in one
    # step): remaining -= clock - start comes out a hair below 0 for jobs 4, 7, 8 and 9 (they then
    # run their 4 s without walltime) and exactly 0 for the others (killed at 1 s)
    "hair_ehomog": ("energy_platform_homogeneous.xml", "hair_workload.json", "fcfs", {}, dict(energy=True)),
}


class WirePort:
    """The policy behind `gridsched serve --platform`, without sockets: every message and reply goes
    through the protocol codec (Batsim writes 6 decimals), as in the recordings."""

    def __init__(self, policy, platform: Path) -> None:
        from schedulers.batsim.platform_file import PlatformFile  # noqa: PLC0415
        self.policy, self.platform = policy, PlatformFile(platform)

    def exchange(self, now, events):
        from schedulers.batsim.protocol import decode_decisions, encode_message  # noqa: PLC0415
        from schedulers.batsim.server import handle_raw  # noqa: PLC0415
        from schedulers.engine.ports import Reply  # noqa: PLC0415
        reply_now, decisions = decode_decisions(handle_raw(self.policy, encode_message(now, events), self.platform))
        return Reply(now=reply_now, decisions=decisions)


@needs_examples
@pytest.mark.parametrize("case", sorted(CASES))
def test_engine_equals_real_batsim_on_networks(case, tmp_path):
    plat, wl, pol, opts, flags = CASES[case]
    port = WirePort(get_policy(pol, opts), EXAMPLES / plat)
    simulate(EXAMPLES / plat, [REC / wl], port, export_prefix=tmp_path / "out_", **flags)
    files = sorted(REC.glob(f"{case}_*.csv"))
    assert files
    for f in files:
        assert_same_rows(tmp_path / f"out_{f.name[len(case) + 1:]}", f)
    if case == "e128_sleep":  # the case does switch hosts off and on
        assert len(list(csv.reader(open(REC / "e128_sleep_pstate_changes.csv")))) > 10


def test_walltime_cancelled_task_still_draws_until_its_message_is_received(tmp_path):
    # tiny_net with energy (Idle 100 W, one busy core 200 W). Jobs a and b (10 s of computation, 4 s
    # walltime) arrive at 0; FCFS runs a, then b. As in test_tiny_timeline_by_hand, a starts at 5m and
    # reaches its walltime at 4 + 5m; its cancelled task keeps h0 at 200 W until its JOB_COMPLETED
    # reaches the server, h later (SimGrid's energy plugin still sees it: recorded on
    # cluster_energy_128.xml, fixtures e128_*). The scheduler reads that time as t6 = 7.500002 (6
    # decimals, later than the clock): b's EXECUTE_JOB, dated t6, is posted then and takes m: b starts
    # at t6 + m. h0's energy at b's start: 100 W x 5m + 200 W x 4 s + 200 W x h + 100 W x (t6 + m - (4 + 5m + h)).
    m, h = 0.5 + 1 / GAMMA, 1 + 2 / GAMMA
    xml = (REC / "tiny_net.xml").read_text()
    for host in ("master_host", "h0"):
        xml = xml.replace(f'<host id="{host}" speed="1Gf"/>',
                          f'<host id="{host}" speed="1Gf"><prop id="wattage_per_state" value="100:200"/></host>')
    p = tmp_path / "p.xml"
    p.write_text(xml)
    wl = {"nb_res": 1, "jobs": [{"id": j, "subtime": 0, "res": 1, "walltime": 4, "profile": "c"} for j in "ab"],
          "profiles": {"c": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 0}}}
    simulate(p, [wl], get_policy("fcfs"), energy=True, export_prefix=tmp_path / "out_")
    rows = list(csv.DictReader(open(tmp_path / "out_consumed_energy.csv")))
    starts = [r for r in rows if r["event_type"] == "s"]
    t6 = batsim_time(4 + 5 * m + h)
    assert t6 == 7.500002
    assert float(starts[1]["time"]) == pytest.approx(t6 + m, abs=1e-6)
    assert float(starts[1]["energy"]) == pytest.approx(100 * 5 * m + 200 * 4 + 200 * h + 100 * (t6 + m - (4 + 5 * m + h)),
                                                       rel=1e-8)
    jobs = {r["job_id"]: r for r in csv.DictReader(open(tmp_path / "out_jobs.csv"))}
    assert float(jobs["a"]["consumed_energy"]) == pytest.approx(800.0, rel=1e-9)  # read at the walltime


@pytest.mark.skipif(not (EXAMPLES.parent / "traces").exists(), reason="../shared/data/traces is absent")
def test_buc_on_lille_equals_real_batsim(tmp_path):
    # the scenario of `gridsched scenario buc --max-jobs 190 --jobs-per-year 0 --seed 1`
    from schedulers.inputs.generators import generate  # noqa: PLC0415
    sc = generate("buc", {"max_jobs": 190, "jobs_per_year": 0}, 1)   # (the trace's times, as recorded)
    plat = sc.platform
    if plat is None:
        plat = tmp_path / "platform.xml"
        plat.write_text(sc.platform_xml)
    simulate(plat, sc.workloads, get_policy("buc-easy", {"kp": 10800, "rule": "ema"}),
             export_prefix=tmp_path / "out_")
    assert_same_rows(tmp_path / "out_jobs.csv", REC / "lille_buc_easy_jobs.csv")
