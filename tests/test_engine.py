"""Embedded engine: hand-worked schedules and energies, compute sharing, DVFS, sleep, kills,
bad inputs and bad decisions. Every expected number is worked out in the comments."""

from __future__ import annotations

import csv
import hashlib
import json
import math
from pathlib import Path

import pytest
from procset import ProcSet

from schedulers.core.policy import Policy, first_hosts
from schedulers.engine import EngineError, build_engine, simulate
from schedulers.engine.platform import read_platform
from schedulers.fcfs import FCFS
from schedulers.inputs.errors import PlatformError, WorkloadError

FIX = Path(__file__).parent / "fixtures"
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
HETERO = FIX / "hetero4.xml"
DVFS = FIX / "dvfs2.xml"


def wl(jobs, profiles, nb_res=4):
    return {"nb_res": nb_res, "jobs": jobs, "profiles": profiles}


class Plan(Policy):
    """Starts each job on the hosts given in ``placement`` (job name -> host ids) as soon as it is
    submitted; ``extra(policy)`` is called after each message for extra decisions."""

    def __init__(self, placement, extra=None):
        super().__init__()
        self.placement = placement
        self.extra = extra
        self.waiting = []

    def on_job_submitted(self, job):
        self.waiting.append(job)

    def schedule(self):
        for job in list(self.waiting):
            hosts = ProcSet(*self.placement[job.name])
            if hosts <= self.available or self.platform.allow_compute_sharing:
                self.execute(job, hosts)
                self.waiting.remove(job)
        if self.extra:
            self.extra(self)


def by_name(result):
    return {j.name: j for j in result.jobs}


# ---------------------------------------------------------------------------- worked example
def test_issue_worked_example_lockstep_and_energy():
    # Hosts (ids in name order): a1=0 (100 Mf), a2=1 (200 Mf), b1=2 (100 Mf), b2=3 (50 Mf), 4 cores,
    # 100:114.67:200 W. Job 1: delay 10 s on a1 at t=0. Job 2: 1e9 flops per host on a2+b1 at t=1.
    # Lockstep: rate = min(2e8/1e9, 1e8/1e9) = 0.1 /s -> 10 s -> ends at t=11.
    # Loads: a2 = 1e9*0.1/2e8 = 0.5 core -> 114.67 + 85.33*0.5/4 = 125.33625 W;
    #        b1 = 1 core -> 114.67 + 85.33/4 = 136.0025 W.
    # Job 2 energy = 10 * (125.33625 + 136.0025) = 2613.3875 J.
    # Whole run (0..11): a1 idle 11*100 = 1100 (delay = idle); a2 100 + 1253.3625; b1 100 + 1360.025;
    # b2 1100 -> 5013.3875 J (master host excluded).
    w = wl([{"id": 1, "subtime": 0, "walltime": -1, "res": 1, "profile": "d"},
            {"id": 2, "subtime": 1, "walltime": -1, "res": 2, "profile": "p"}],
           {"d": {"type": "delay", "delay": 10}, "p": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}})
    r = simulate(HETERO, [w], Plan({"1": [0], "2": [1, 2]}), energy=True)
    jobs = by_name(r)
    assert jobs["2"].finish == pytest.approx(11.0)
    assert jobs["2"].energy == pytest.approx(2613.3875, rel=1e-9)
    assert jobs["1"].energy == pytest.approx(1000.0)
    assert r.consumed_joules == pytest.approx(5013.3875, rel=1e-9)


def test_platform_ids_follow_lexicographic_host_names():
    spec = read_platform(HETERO)
    assert [h.name for h in spec.compute] == ["a1", "a2", "b1", "b2"]
    assert spec.master.name == "master_host"
    assert spec.compute[1].speeds == [2e8]
    assert spec.compute[0].properties["owner"] == "user1"
    # 2-value form on a multi-core host: Epsilon = Idle (SimGrid >= 3.24)
    assert spec.compute[0].power[0].epsilon == pytest.approx(114.67)


def test_a_repeated_property_keeps_its_first_value(tmp_path):
    # SimGrid 3.32 keeps the first value of a <prop> id given twice (STag_surfxml_prop, try_emplace).
    # Recorded on real Batsim 4.2.1 (FCFS, -E, one 10 s delay job): job energy 950 J = 95 W x 10 s,
    # consumed_joules 1,900 J (two hosts idling at 95 W); the second value, 10:20, would give 100 J
    plat = tmp_path / "p.xml"
    host = '<host id="{}" speed="100Mf"><prop id="wattage_per_state" value="95:190"/>' \
           '<prop id="wattage_per_state" value="10:20"/></host>'
    plat.write_text("<platform version='4.1'><zone id='AS0' routing='Full'><host id='master_host' speed='100Mf'/>"
                    + host.format("h0") + host.format("h1") + "</zone></platform>")
    wl = {"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}],
          "profiles": {"d": {"type": "delay", "delay": 10}}}
    simulate(plat, [wl], FCFS(), energy=True, export_prefix=tmp_path / "out_")
    with (tmp_path / "out_jobs.csv").open() as f:
        assert float(next(csv.DictReader(f))["consumed_energy"]) == pytest.approx(950.0)
    with (tmp_path / "out_schedule.csv").open() as f:
        assert float(next(csv.DictReader(f))["consumed_joules"]) == pytest.approx(1900.0)


def test_parallel_homogeneous_total_and_parallel_profiles():
    # total: 1e9 flops split on 2 hosts a1 (100 Mf) + b1 (100 Mf) -> 5e8 each -> 5 s.
    # parallel: cpu [4e8, 1e8] on a1 (100 Mf) and b2 (50 Mf): rate = min(1e8/4e8, 5e7/1e8) = 0.25 -> 4 s.
    w = wl([{"id": "t", "subtime": 0, "walltime": -1, "res": 2, "profile": "tot"},
            {"id": "p", "subtime": 10, "walltime": -1, "res": 2, "profile": "par"}],
           {"tot": {"type": "parallel_homogeneous_total", "cpu": 1e9, "com": 0},
            "par": {"type": "parallel", "cpu": [4e8, 1e8], "com": [0, 0, 0, 0]}})
    r = simulate(HETERO, [w], Plan({"t": [0, 2], "p": [0, 3]}))
    jobs = by_name(r)
    assert jobs["t"].finish == pytest.approx(5.0)
    assert jobs["p"].start == pytest.approx(10, abs=1e-6) and jobs["p"].finish == pytest.approx(14.0)


def test_composed_with_repeat_and_walltime():
    # seq = 2 x [delay 1, compute 1e8 on a1 at 100 Mf = 1 s] = 4 s; walltime 3.5 -> killed at 3.5.
    w = wl([{"id": "ok", "subtime": 0, "walltime": 10, "res": 1, "profile": "seq"},
            {"id": "cut", "subtime": 0, "walltime": 3.5, "res": 1, "profile": "seq"}],
           {"seq": {"type": "composed", "repeat": 2, "seq": ["d", "c"]},
            "d": {"type": "delay", "delay": 1}, "c": {"type": "parallel_homogeneous", "cpu": 1e8, "com": 0}})
    r = simulate(HETERO, [w], Plan({"ok": [0], "cut": [2]}))
    jobs = by_name(r)
    assert jobs["ok"].finish == pytest.approx(4.0) and jobs["ok"].state == "COMPLETED_SUCCESSFULLY"
    assert jobs["cut"].finish == pytest.approx(3.5) and jobs["cut"].state == "COMPLETED_WALLTIME_REACHED"
    assert jobs["cut"].return_code == -1


def test_delay_equal_to_walltime_is_killed_like_batsim():
    # Batsim runs a delay only if delay < remaining walltime; equal -> walltime reached.
    w = wl([{"id": "a", "subtime": 0, "walltime": 5, "res": 1, "profile": "d5"}], {"d5": {"type": "delay", "delay": 5}})
    r = simulate(HETERO, [w], Plan({"a": [0]}))
    assert r.jobs[0].state == "COMPLETED_WALLTIME_REACHED" and r.jobs[0].finish == pytest.approx(5, abs=1e-6)


def test_kill_job_progress_and_outputs(tmp_path):
    # 'long' computes 1e9 flops on a1 (10 s); killed at t=4 by a CALL_ME_LATER -> progress 0.4.
    killed = {}

    def extra(p):
        if p.now == 0 and not killed:
            p.call_me_later(4)
            killed["asked"] = True
        if p.now == 4 and "done" not in killed:
            p.kill([p.jobs["w0!long"]])
            killed["done"] = True

    class K(Plan):
        def on_jobs_killed(self, jobs, progress):
            killed["progress"] = progress

    w = wl([{"id": "long", "subtime": 0, "walltime": -1, "res": 1, "profile": "c"}],
           {"c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}})
    r = simulate(HETERO, [w], K({"long": [0]}, extra), export_prefix=tmp_path / "out_")
    assert r.jobs[0].state == "COMPLETED_KILLED" and r.jobs[0].finish == pytest.approx(4, abs=1e-6) and r.jobs[0].return_code == -2
    assert killed["progress"] == {"w0!long": {"profile_name": "c", "progress": pytest.approx(0.4)}}
    rows = list(csv.DictReader((tmp_path / "out_jobs.csv").open()))
    assert rows[0]["final_state"] == "COMPLETED_KILLED" and rows[0]["execution_time"] == "4.000000"
    assert rows[0]["consumed_energy"] == "-1.000000"  # no energy model


# ------------------------------------------------------------------------------ energy + pstates
def test_dvfs_mid_job_slows_the_job():
    # n0 computes 1e9 flops: 5 s at 100 Mf (5e8 done), then pstate 1 (50 Mf): 5e8 / 5e7 = 10 s
    # -> ends at 15. Energy of n0: 5*200 + 10*120 = 2200 J; n1 idle 15*100 = 1500 J -> 3700 J.
    def extra(p):
        if p.now == 0 and not getattr(p, "asked", False):
            p.call_me_later(5)
            p.asked = True
        elif p.now == 5 and not getattr(p, "switched", False):
            p.set_pstate([0], 1)
            p.switched = True

    w = wl([{"id": "j", "subtime": 0, "walltime": -1, "res": 1, "profile": "c"}],
           {"c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}, nb_res=2)
    r = simulate(DVFS, [w], Plan({"j": [0]}, extra), energy=True)
    assert r.jobs[0].finish == pytest.approx(15.0)
    assert r.jobs[0].energy == pytest.approx(2200.0)
    assert r.consumed_joules == pytest.approx(3700.0)


def test_sleep_and_wake_through_virtual_pstates(tmp_path):
    # t=0: n1 -> sleep (pstate 2) through virtual off pstate 3: 1 flop at 0.5 f/s = 2 s at 150 W;
    # asleep 2..10 at 10 W; t=10 wake through pstate 4: 1 flop at 0.1 f/s = 10 s at 180 W -> awake at 20.
    # n0 runs a delay of 30 s (idle power 100 W). End at t=30: n1 = 2*150 + 8*10 + 10*180 + 10*100 = 3180 J,
    # n0 = 30*100 = 3000 J -> 6180 J.
    seen = []

    def extra(p):
        if p.now == 0 and not getattr(p, "slept", False):
            p.set_pstate([1], 2)
            p.call_me_later(10)
            p.slept = True
        elif p.now == 10 and not getattr(p, "woken", False):
            p.set_pstate([1], 0)
            p.woken = True

    class S(Plan):
        def on_resource_state_changed(self, hosts, state):
            seen.append((self.now, str(hosts), state))

    w = wl([{"id": "j", "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}],
           {"d": {"type": "delay", "delay": 30}}, nb_res=2)
    r = simulate(DVFS, [w], S({"j": [0]}, extra), energy=True, export_prefix=tmp_path / "out_")
    assert seen == [(2.0, "1", "2"), (20.0, "1", "0")]
    assert r.consumed_joules == pytest.approx(6180.0)
    assert (tmp_path / "out_pstate_changes.csv").read_text().splitlines() == [
        # (the request crosses SimGrid's loopback of this Full zone: 2e-10 s, printed as Batsim's %g)
        "time,machine_id,new_pstate", "0,0-1,0", "2e-10,1,-2", "2,1,2", "10,1,-1", "20,1,0"]
    sched = next(csv.DictReader((tmp_path / "out_schedule.csv").open()))
    assert sched["time_switching_off"] == "2.000000" and sched["time_sleeping"] == "8.000000"
    assert sched["time_switching_on"] == "10.000000" and sched["nb_machine_switches"] == "2"


# ------------------------------------------------------------------------------ compute sharing
@pytest.mark.parametrize("n, end, job_energy", [
    # 2 jobs of 1e9 flops on a1 (4 cores, 100 Mf): each gets one core -> 10 s; host power
    # 114.67 + 85.33*2/4 = 157.335 W -> each job's energy (whole host over its run) 1573.35 J.
    (2, 10.0, 1573.35),
    # 5 jobs on 4 cores: each 4/5 core -> 1e9/(0.8e8) = 12.5 s; host at 200 W -> 2500 J per job.
    (5, 12.5, 2500.0),
])
def test_compute_sharing_matches_batsim_runs(n, end, job_energy, tmp_path):
    w = wl([{"id": i, "subtime": 0, "walltime": -1, "res": 1, "profile": "c"} for i in range(n)],
           {"c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}, nb_res=1)
    r = simulate(HETERO, [w], Plan({str(i): [0] for i in range(n)}), energy=True, compute_sharing=True,
                 export_prefix=tmp_path / "out_")
    for j in r.jobs:
        assert j.finish == pytest.approx(end)
        assert j.energy == pytest.approx(job_energy)
    ref = SHARED / "batsim-4.2.1" / "outputs" / f"sharing_{n}jobs"
    if ref.exists():  # identical to what real Batsim wrote (but the wall-clock columns)
        assert (tmp_path / "out_jobs.csv").read_text() == (ref / "out_jobs.csv").read_text()
        got, exp = (list(csv.DictReader((d / "out_schedule.csv").open()))[0] for d in (tmp_path, ref))
        for col in ("scheduling_time", "simulation_time"):
            got.pop(col), exp.pop(col)
        assert got == exp


# ------------------------------------------------------------------------------------ bad inputs
def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


GOOD_JOB = {"id": "1", "subtime": 0, "walltime": 10, "res": 1, "profile": "d"}
GOOD_PROFILES = {"d": {"type": "delay", "delay": 5}}


@pytest.mark.parametrize("jobs, profiles, needle", [
    ([GOOD_JOB], {"d": {"type": "smpi", "trace": "x"}}, ["profile 'd'", "smpi", "real Batsim"]),
    ([dict(GOOD_JOB, profile="nope")], GOOD_PROFILES, ["job '1'", "'nope'"]),
    ([dict(GOOD_JOB, subtime=-1e10)], GOOD_PROFILES, ["job '1'", "subtime"]),
    ([GOOD_JOB, GOOD_JOB], GOOD_PROFILES, ["job '1'", "duplicate"]),
    ([dict(GOOD_JOB, walltime=0)], GOOD_PROFILES, ["job '1'", "walltime"]),
    ([GOOD_JOB], {"d": {"type": "delay", "delay": -3}}, ["profile 'd'", "delay"]),
    ([GOOD_JOB], {"d": {"type": "composed", "seq": ["x"]}}, ["profile 'd'", "'x'"]),
])
def test_bad_workloads_name_file_and_item(tmp_path, jobs, profiles, needle):
    p = _write(tmp_path, "bad.json", json.dumps(wl(jobs, profiles)))
    with pytest.raises(WorkloadError) as err:
        build_engine(HETERO, [p])
    for n in [str(p)] + needle:
        assert n in str(err.value)


def test_malformed_workload_json(tmp_path):
    p = _write(tmp_path, "broken.json", '{"jobs": [\n  {"id": 1,,}]}')
    with pytest.raises(WorkloadError, match=r"broken\.json: malformed JSON at line 2"):
        build_engine(HETERO, [p])


@pytest.mark.parametrize("xml, needle", [
    ("<platform version='4.1'><zone id='z' routing='Full'><host id='h1' speed='1Gf'>", "malformed XML"),
    ("<platform version='4.1'><zone id='z' routing='Full'><host id='h1'/></zone></platform>",
     "<host id='h1'> has no 'speed', which simgrid.dtd requires"),
    ("<platform version='4.1'><zone id='z' routing='Full'><host id='h1' speed=''/></zone></platform>",
     "host 'h1' has no speed"),
    ("<platform version='4.1'><zone id='z' routing='Full'><host id='h1' speed='3Qf'/></zone></platform>", "unknown speed unit"),
    ("<platform version='4.1'><zone id='z' routing='Full'><host id='h1' speed='1Gf'/><host id='h1' speed='1Gf'/></zone></platform>",
     "duplicate host id 'h1'"),
    ("<platform version='4.1'><zone id='z' routing='Full'><host id='master_host' speed='1Gf'/></zone></platform>",
     "no compute host"),
])
def test_bad_platforms_name_file_and_host(tmp_path, xml, needle):
    p = _write(tmp_path, "plat.xml", xml)
    with pytest.raises(PlatformError) as err:
        read_platform(p)
    assert str(p) in str(err.value) and needle in str(err.value)


def test_bad_wattage_named_with_energy_only(tmp_path):
    # only SimGrid's energy plugin (-E) reads wattage_per_state: the platform is read, and an
    # energy run is refused naming the file, the host and the count
    p = _write(tmp_path, "plat.xml", "<platform version='4.1'><zone id='z' routing='Full'>"
               "<host id='master_host' speed='1Gf'/><host id='h1' speed='1Gf, 2Gf'>"
               "<prop id='wattage_per_state' value='1:2'/></host></zone></platform>")
    spec = read_platform(p)
    assert spec.compute[0].power is None
    with pytest.raises(EngineError) as err:
        build_engine(p, [wl([GOOD_JOB], GOOD_PROFILES, nb_res=1)], energy=True)
    assert str(err.value) == (f"{p}: host 'h1' has 2 pstates in 'speed' but 1 entries in wattage_per_state "
                              "(SimGrid's energy plugin aborts with -E)")
    build_engine(p, [wl([GOOD_JOB], GOOD_PROFILES, nb_res=1)])   # without -E: read as Batsim reads it


def test_communication_on_an_unmodelled_network_refused(tmp_path):
    # links but no master host: real Batsim aborts ("Cannot find the "master" role"), the engine
    # refuses the platform (communications on modelled networks: tests/test_network_ptask.py)
    xml = ("<platform version='4.1'><zone id='z' routing='Full'>"
           "<host id='a' speed='1Gf'/><host id='b' speed='1Gf'/><link id='l' bandwidth='1GBps' latency='0'/>"
           "</zone></platform>")
    p = _write(tmp_path, "net.xml", xml)
    w = wl([dict(GOOD_JOB, res=2, profile="p")], {"p": {"type": "parallel_homogeneous", "cpu": 1, "com": 1e6}})
    with pytest.raises(PlatformError, match="no master host.*real Batsim 4.2.1 aborts"):
        build_engine(p, [w])


# ----------------------------------------------------------------------------- bad decisions
def test_invalid_decisions_fail_loudly():
    w = wl([{"id": "a", "subtime": 0, "walltime": -1, "res": 2, "profile": "d"},
            {"id": "b", "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}], GOOD_PROFILES)

    class Overlap(Policy):
        def on_job_submitted(self, job):
            self.emit_execute(job)

        def emit_execute(self, job):
            from schedulers.core.events import ExecuteJob
            self.emit(ExecuteJob(job_id=job.id, alloc=ProcSet(0, 1) if job.res == 2 else ProcSet(0)))

    with pytest.raises(EngineError, match=r"host 0 \(a1\) already runs"):
        simulate(HETERO, [w], Overlap())


def test_deadlock_is_reported():
    w = wl([GOOD_JOB], GOOD_PROFILES)
    with pytest.raises(EngineError, match="deadlock.*w0!1"):
        simulate(HETERO, [w], Policy())


def test_two_workloads_are_w0_and_w1():
    w = wl([GOOD_JOB], GOOD_PROFILES)

    class Greedy(Policy):
        def schedule(self):
            for j in self.jobs.values():
                if j.state.value == "SUBMITTED" and len(self.available) >= j.res:
                    self.execute(j, first_hosts(self.available, j.res))

    r = simulate(HETERO, [w, w], Greedy())
    assert sorted(j.id for j in r.jobs) == ["w0!1", "w1!1"]
    assert {str(j.alloc) for j in r.jobs} == {"0", "1"}


def test_empty_workload_ends_at_once():
    # Batsim: the submitter of an empty workload says goodbye at t=0 -> NOTIFY, then SIMULATION_ENDS.
    seen = []

    class Watch(Policy):
        def on_notify(self, n):
            seen.append((self.now, n.type))

    r = simulate(HETERO, [wl([], {})], Watch())
    # (the end is a few 1e-10 s after 0: Batsim's messages cross this Full zone's loopback)
    assert seen == [(0.0, "no_more_static_job_to_submit")] and r.jobs == []
    assert r.end_time == pytest.approx(0.0, abs=1e-6)


def _sleepy_host(pstate: int, watts: str = "wattage_per_state", off: str = "wattage_off") -> str:
    """A one-host platform: pstates 0 (sleep), 1 (compute), 2-3 (switching), power under ``watts``."""
    return ("<platform version='4.1'><zone id='z' routing='Full'>"
            f"<host id='h' pstate='{pstate}' speed='0.001f, 1Mf, 1f, 0.5f'>"
            f"<prop id='{watts}' value='9:9, 95:190, 125:125, 101:101'/><prop id='{off}' value='9'/>"
            "<prop id='sleep_pstates' value='0:3:2'/></host><host id='master_host' speed='1Gf'/></zone></platform>")


def test_older_simgrid_power_property_names_are_not_read(tmp_path):
    # 'watt_per_state'/'watt_off' (SimGrid < 3.24 names) are not read by SimGrid 3.32
    # (host_energy.cpp reads 'wattage_per_state' and 'wattage_off' only): recorded on real Batsim
    # 4.2.1 with -E on GridGym's platform_64hosts_2019.xml, which uses them: "No power range
    # properties specified for host 0" at the first energy read, exit 1. The engine refuses the
    # run and says which names to use; without -E the host simply has no power model.
    p = _write(tmp_path, "old.xml", _sleepy_host(1, "watt_per_state", "watt_off"))
    spec = read_platform(p)
    assert spec.compute[0].power is None and spec.compute[0].wattage_off is None
    with pytest.raises(EngineError, match=r"missing on h \(host 'h' has 'watt_per_state' and 'watt_off'"):
        simulate(p, [wl([GOOD_JOB], GOOD_PROFILES, nb_res=1)], get_easy(), energy=True)
    # wattage_per_state with the old 'watt_off': SimGrid's off power is then its default, 0 W
    spec = read_platform(_write(tmp_path, "mixed.xml", _sleepy_host(1, off="watt_off")))
    assert spec.compute[0].power[1].all_cores == 190 and spec.compute[0].wattage_off is None


def test_sleeping_deadlock_hint(tmp_path):
    # with -E, a host starting in its sleep pstate (0 here) is asleep: a policy that never wakes
    # it deadlocks, and the error says why.
    p = _write(tmp_path, "sleep.xml", _sleepy_host(0))
    with pytest.raises(EngineError, match="1 of 1 hosts are asleep"):
        simulate(p, [wl([GOOD_JOB], GOOD_PROFILES, nb_res=1)], get_easy(), energy=True)


def test_executing_on_a_host_declared_asleep_is_refused_with_energy(tmp_path):
    # with -E, Batsim 4.2.1 aborts on an EXECUTE_JOB whose host is not in a computation pstate
    # (server_on_execute_job, src/server.cpp); recorded with batsched easy_bf, which allocates the
    # host Batsim reports idle: "Job 'w0!d': Invalid job allocation ('0'): machine 0 (hostname='h')
    # is not in a computation pstate (ps=0)", exit 134. Without -E the same decision runs the job.
    class Blind(Policy):
        def on_job_submitted(self, job):
            self.execute(job, ProcSet(0))

    p = _write(tmp_path, "sleep.xml", _sleepy_host(0))
    with pytest.raises(EngineError, match=r"EXECUTE_JOB w0!1 .*host 0 \(h\) is not in a computation pstate "
                                          r"\(pstate 0, a sleep pstate\)"):
        simulate(p, [wl([GOOD_JOB], GOOD_PROFILES, nb_res=1)], Blind(), energy=True)
    r = simulate(p, [wl([GOOD_JOB], GOOD_PROFILES, nb_res=1)], Blind())
    assert [(j.state, round(j.finish, 6)) for j in r.jobs] == [("COMPLETED_SUCCESSFULLY", 5.0)]


def test_sleep_pstates_are_ignored_without_energy(tmp_path):
    # Batsim reads sleep_pstates only with -E (Machines::create_machines): without it the host
    # declared at pstate 0 is an idle host computing at 0.001 flops/s. EASY runs the delay job
    # (0-5 s), then 0.004 flops in 0.004 / 0.001 = 4 s (5-9 s). Recorded on real Batsim 4.2.1,
    # `gridsched run --engine batsim -p P -w W --policy easy` (P, W: this platform and workload):
    # d 0-5, c 5-9, both COMPLETED_SUCCESSFULLY.
    p = _write(tmp_path, "sleep.xml", _sleepy_host(0))
    jobs = [GOOD_JOB, {"id": "c", "subtime": 1, "walltime": 10, "res": 1, "profile": "c"}]
    profiles = {**GOOD_PROFILES, "c": {"type": "parallel_homogeneous", "cpu": 0.004, "com": 0}}
    r = simulate(p, [wl(jobs, profiles, nb_res=1)], get_easy())
    got = {j.id: (j.state, round(j.start, 6), round(j.finish, 6)) for j in r.jobs}   # (as out_jobs.csv)
    assert got == {"w0!1": ("COMPLETED_SUCCESSFULLY", 0.0, 5.0), "w0!c": ("COMPLETED_SUCCESSFULLY", 5.0, 9.0)}


GRIDGYM = Path(__file__).resolve().parents[2] / "shared" / "data" / "traces" / "g5k-lyon-gridgym"


@pytest.mark.skipif(not GRIDGYM.is_dir(), reason=f"GridGym's traces not found in {GRIDGYM}")
def test_gridgym_hosts_declared_asleep_run_without_energy(tmp_path):
    # GridGym's platform_64hosts_2019.xml declares every host at its sleep pstate 0 (0.001 flops/s).
    # Recorded: batsched 1.4.0 `easy_bf` on real Batsim 4.2.1 without -E (`batsched -v easy_bf -s
    # tcp://*:28123` and `batsim -p platform_64hosts_2019.xml -w 2019-05-19.json -e out -s
    # tcp://localhost:28123`): the 253 jobs run on those hosts and all reach their walltimes,
    # makespan 8417 s, mean waiting time 3437.600791 s; out_jobs.csv's sha256 below.
    r = simulate(GRIDGYM / "platforms" / "platform_64hosts_2019.xml",
                 [GRIDGYM / "workloads" / "2019-05-19.json"], get_easy(), export_prefix=tmp_path / "out_")
    assert len(r.jobs) == 253 and {j.state for j in r.jobs} == {"COMPLETED_WALLTIME_REACHED"}
    digest = hashlib.sha256((tmp_path / "out_jobs.csv").read_bytes()).hexdigest()
    assert digest == "0896214f0154b04d3917874e0f19e44bfae2ee19b871760b9e004b3cbfed910b"


def get_easy():
    from schedulers.registry import get_policy
    return get_policy("easy")


def test_dvfs_rows_and_one_state_change_per_request(tmp_path):
    # Batsim writes a transition row for every SET_RESOURCE_STATE (-1: towards a computation pstate)
    # then the new pstate when the request's machines are all done, and sends one
    # RESOURCE_STATE_CHANGED per request. t=0: n1 to sleep (2 s). t=5: "0-1" to pstate 0: n0 is
    # awake (DVFS, immediate), n1 wakes in 10 s -> one RESOURCE_STATE_CHANGED "0-1" at t=15.
    seen = []

    def extra(p):
        if p.now == 0 and not getattr(p, "a", False):
            p.set_pstate([1], 2)
            p.call_me_later(5)
            p.a = True
        elif p.now == 5 and not getattr(p, "b", False):
            p.set_pstate([0, 1], 0)
            p.b = True

    class S(Plan):
        def on_resource_state_changed(self, hosts, state):
            seen.append((self.now, str(hosts), state))

    w = wl([{"id": "j", "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}],
           {"d": {"type": "delay", "delay": 20}}, nb_res=2)
    simulate(DVFS, [w], S({"j": [0]}, extra), energy=True, export_prefix=tmp_path / "out_")
    assert seen == [(2.0, "1", "2"), (15.0, "0-1", "0")]
    assert (tmp_path / "out_pstate_changes.csv").read_text().splitlines() == [
        "time,machine_id,new_pstate", "0,0-1,0", "2e-10,1,-2", "2,1,2", "5,0-1,-1", "15,0-1,0"]
