"""Quiet instants (:mod:`schedulers.engine.instants`) against the actor model, byte for byte.

With ``-E`` on a compute-only platform the engine plays Batsim's actors message by message; an
instant that one actor alone acts in is played in one call instead. Every run here is made twice,
once with the actor model forced everywhere (``instants.FORCE_ACTOR_MODEL``, the switch
``GRIDSCHED_FORCE_ACTOR_MODEL=1`` sets), and both runs must give the same output files
(``out_jobs.csv``, ``out_schedule.csv`` but its wall clocks, ``out_consumed_energy.csv``,
``out_machine_states.csv``, ``out_pstate_changes.csv``) and the same messages to the scheduler, to
the byte: Batsim 4.2.1's recorded energy runs (``../shared/batsim-4.2.1``), the fixed cases of
``scripts/output_digests.py``, and random workloads under a random scheduler (pstate switches,
sleeps, kills, rejections, CALL_ME_LATER, queries, replies dated later, walltimes, simultaneous
ends).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from procset import ProcSet

from schedulers.batsim.protocol import decode_decisions, encode_message
from schedulers.core.events import (
    CallMeLater, ExecuteJob, JobCompleted, JobKilled, JobSubmitted, KillJobs, Query, RejectJob,
    ResourceStateChanged, SetResourceState, SimulationBegins,
)
from schedulers.engine import Deadlock, InProcessPort, build_engine, instants
from schedulers.engine.lazysteps import LazyStepQueue
from schedulers.engine.outputs import write_outputs
from schedulers.engine.queue import Kind
from schedulers.engine.ports import Reply
from schedulers.registry import get_policy

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
BATSIM = SHARED / "batsim-4.2.1"
NO_NET_7 = BATSIM / "inputs" / "energy_platform_homogeneous_no_net.xml"
NO_NET_128 = SHARED / "data" / "batsim-examples" / "energy_platform_homogeneous_no_net_128.xml"
_FILES = ("out_jobs.csv", "out_schedule.csv", "out_consumed_energy.csv", "out_machine_states.csv",
          "out_pstate_changes.csv")


def _output_digests():
    """``scripts/output_digests.py``, imported (its cases and its normalisation of output files)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import output_digests
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return output_digests


def _normalised(path: Path) -> bytes:
    """The output file's bytes, wall clocks blanked (``output_digests.normalise``)."""
    return _output_digests().normalise(path)


class _Recorder:
    """A port that keeps every message the engine sends (Batsim's JSON text)."""

    def __init__(self, port: Any) -> None:
        self.port, self.messages = port, []

    def exchange(self, now: float, events: list) -> Any:
        self.messages.append(encode_message(now, events))
        return self.port.exchange(now, events)


def run(platform: Path, workloads: list, make_port, tmp: Path, *, force: bool, monkeypatch,
        **kw: Any) -> tuple[dict, list, list]:
    """One run: ({output file: bytes}, the messages sent, [(time, played)] of the quiet-instant
    player's calls)."""
    calls: list = []
    play = instants.QuietInstants.play

    def counted(self, entry, port):
        done = play(self, entry, port)
        calls.append((self.e.clock.now, done))
        return done

    monkeypatch.setattr(instants, "FORCE_ACTOR_MODEL", force)
    monkeypatch.setattr(instants.QuietInstants, "play", counted)
    port = _Recorder(make_port())
    engine = build_engine(platform, workloads, energy=True, **kw)
    try:
        result = engine.run(port)
    except Deadlock as dead:
        result = dead.result
    out = tmp / ("actor" if force else "quiet")
    out.mkdir()
    write_outputs(result, out / "out_", energy=True)
    files = {name: _normalised(out / name) for name in _FILES}
    monkeypatch.setattr(instants.QuietInstants, "play", play)
    return files, port.messages, calls


def assert_same(platform: Path, workloads: list, make_port, tmp: Path, monkeypatch, **kw: Any) -> list:
    """Both paths give the same bytes; returns the quiet path's calls (the actor path makes none)."""
    a_files, a_msgs, a_calls = run(platform, workloads, make_port, tmp, force=True, monkeypatch=monkeypatch, **kw)
    q_files, q_msgs, q_calls = run(platform, workloads, make_port, tmp, force=False, monkeypatch=monkeypatch, **kw)
    assert a_calls == []
    for name in _FILES:
        assert q_files[name] == a_files[name], f"{name} differs"
    assert len(q_msgs) == len(a_msgs)
    for i, (q, a) in enumerate(zip(q_msgs, a_msgs)):
        assert q == a, f"message #{i} differs"
    return q_calls


# ------------------------------------------------------------------------ a hand-worked case
def test_simultaneous_ends_take_the_actor_path_and_a_lone_end_is_quiet(tmp_path, monkeypatch):
    # FCFS on Batsim's 7-host no_net platform: jobs 1 and 2 (10 s) start at t = 0 and end
    # together at t = 10 (one step, two wake-ups: the actor model orders their JOB_COMPLETED);
    # job 3 (subtime 5, 20 s) ends alone at t = 25; job 4 (subtime 30, 10 s) ends alone at 40.
    # Quiet: t = 5 (a submission, the submitter sleeps on to 30), 25 and 40 (the run's end is
    # then handed to the actor model). Not quiet: t = 0 (the first submission reads every host's
    # energy), t = 30 (the submitter's last job: its goodbye is a second message).
    wl = {"nb_res": 7, "profiles": {"d10": {"type": "delay", "delay": 10}, "d20": {"type": "delay", "delay": 20}},
          "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "d10"},
                   {"id": "2", "subtime": 0, "res": 1, "profile": "d10"},
                   {"id": "3", "subtime": 5, "res": 1, "profile": "d20"},
                   {"id": "4", "subtime": 30, "res": 1, "profile": "d10"}]}
    if not NO_NET_7.is_file():
        pytest.skip(f"{NO_NET_7} is absent")
    calls = assert_same(NO_NET_7, [wl], lambda: InProcessPort(get_policy("fcfs")), tmp_path, monkeypatch)
    assert [t for t, done in calls if done] == [5.0, 25.0, 40.0]
    assert [t for t, done in calls if not done] == [30.0]
    assert 10.0 not in [t for t, _ in calls]   # two wake-ups at one step: never offered


def test_a_machine_switching_keeps_the_instant_on_the_actor_path(tmp_path, monkeypatch):
    # a scheduler that switches host 1 off (pstate 1 is its sleep pstate, through the 3 s
    # switch-off of pstate 2: speed 0.5 flop/s, 1 flop) at t = 0, then only runs jobs on host 0;
    # job 1 ends alone at t = 1, while host 1 is switching: the actor model plays it; job 2
    # (subtime 2) ends alone at t = 12, the switch over (t = 2): quiet.
    wl = {"nb_res": 7, "profiles": {"d1": {"type": "delay", "delay": 1}, "d10": {"type": "delay", "delay": 10}},
          "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "d1"},
                   {"id": "2", "subtime": 2, "res": 1, "profile": "d10"}]}
    if not NO_NET_7.is_file():
        pytest.skip(f"{NO_NET_7} is absent")

    class Port:
        def exchange(self, now, events):
            out = []
            for ev in events:
                if isinstance(ev, SimulationBegins):
                    out.append(SetResourceState(resources=ProcSet(1), state="1"))
                elif isinstance(ev, JobSubmitted):
                    out.append(ExecuteJob(job_id=ev.job.id, alloc=ProcSet(0)))
            return out

    calls = assert_same(NO_NET_7, [wl], Port, tmp_path, monkeypatch)
    assert (1.0, False) in calls
    assert (12.0, True) in calls


def test_a_sleep_of_the_request_reply_actor_ending_with_a_job_is_left_to_the_actor_model(tmp_path, monkeypatch):
    # job 1 (subtime 3, 5 s) is started by a reply dated t = 8 whose CALL_ME_LATER is dated
    # t = 8 too: the request-reply actor posts EXECUTE_JOB at t = 3, then sleeps 5 s to post the
    # CALL_ME_LATER, and its sleep ends in the step of job 1's end (both armed at t = 3, the sleep
    # first: the actor sleeps as the server handles EXECUTE_JOB, the job actor starts a sub-round
    # later). The quiet instant at t = 3 leaves that step to the actor model, which plays the
    # two in the order they were armed.
    wl = {"nb_res": 7, "profiles": {"d5": {"type": "delay", "delay": 5}},
          "jobs": [{"id": str(i), "subtime": t, "res": 1, "profile": "d5"} for i, t in enumerate((0, 3, 20))]}
    if not NO_NET_7.is_file():
        pytest.skip(f"{NO_NET_7} is absent")

    class Port:
        def exchange(self, now, events):
            out = []
            for ev in events:
                if isinstance(ev, JobSubmitted) and ev.job.id.endswith("!1"):
                    return Reply(now + 5, [ExecuteJob(job_id=ev.job.id, alloc=ProcSet(1), timestamp=now),
                                           CallMeLater(at=now + 10, timestamp=now + 5)])
                if isinstance(ev, JobSubmitted):
                    out.append(ExecuteJob(job_id=ev.job.id, alloc=ProcSet(0)))
            return out

    calls = assert_same(NO_NET_7, [wl], Port, tmp_path, monkeypatch)
    assert (3.0, True) in calls and 8.0 not in [t for t, _ in calls]


def test_pop_alone_plays_a_step_only_when_it_ends_the_one_action_named():
    q = LazyStepQueue()
    a, b, c = object(), object(), object()
    q.sleep(1.0, Kind.DECISION, a)
    q.sleep(2.5, Kind.SUBMIT, b)
    assert q.pop_alone(b) is None and q.now == 0.0 and len(q) == 2   # the next step ends a, not b
    assert q.pop_alone(a) == 1.0 and q.now == 1.0 and len(q) == 1
    q.sleep(1.5, Kind.WAITER, c)   # ends at 2.5 too: two actions in one step
    assert q.pop_alone(c) is None and q.now == 1.0 and len(q) == 2
    q.sleep(4.5e-13, Kind.DECISION, a)   # under precision/timing: ends alone, 4.5e-13 s later
    assert q.pop_alone(a) == 1.0 + 4.5e-13
    q.message(0.0, float("inf"), Kind.RECV, b)   # a message of no duration pending
    assert q.pop_alone(c) is None
    assert q.pop_instant() == (1.0 + 4.5e-13, [(Kind.RECV, b)])
    assert q.pop_instant() == (2.5, [(Kind.SUBMIT, b), (Kind.WAITER, c)])


# --------------------------------------------------------------- Batsim's recorded energy runs
class _Replies:
    """Answers the replies a real Batsim 4.2.1 run recorded, in order."""

    def __init__(self, name: str) -> None:
        lines = [json.loads(x) for x in (BATSIM / "transcripts" / name).read_text().splitlines() if x.strip()]
        self.replies = [r["msg"] for r in lines if r["dir"] == "sched->batsim"]
        self.i = 0

    def exchange(self, now, events):
        _, decisions = decode_decisions(self.replies[self.i])
        self.i += 1
        return decisions


def _recorded_cases() -> list:
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from test_engine_conformance import CASES, _lines, _workload_from_transcript
    finally:
        sys.path.remove(str(ROOT / "tests"))
    out = []
    for name, (platform, workload, energy, forward, _) in sorted(CASES.items()):
        if energy:
            wl = workload if workload is not None else _workload_from_transcript(_lines(name))
            out.append(pytest.param(name, platform, wl, forward, id=name))
    return out


@pytest.mark.skipif(not BATSIM.is_dir(), reason="../shared/batsim-4.2.1 is absent")
@pytest.mark.parametrize("name,platform,workload,forward", _recorded_cases() if BATSIM.is_dir() else [])
def test_recorded_batsim_energy_runs(name, platform, workload, forward, tmp_path, monkeypatch):
    if not Path(platform).is_file():
        pytest.skip(f"{platform} is absent")
    assert_same(Path(platform), [workload], lambda: _Replies(name), tmp_path, monkeypatch, forward_profiles=forward)


# ------------------------------------------------------------- the fixed cases of the digests
def _digest_cases() -> dict:
    return _output_digests().cases()


def test_every_digest_case_is_the_same_on_both_paths(monkeypatch):
    played = 0
    for name, (inputs, case) in sorted(_digest_cases().items()):
        if not all(Path(p).exists() for p in inputs):
            continue
        monkeypatch.setattr(instants, "FORCE_ACTOR_MODEL", True)
        forced = case()
        monkeypatch.setattr(instants, "FORCE_ACTOR_MODEL", False)
        calls: list = []
        play = instants.QuietInstants.play
        monkeypatch.setattr(instants.QuietInstants, "play", lambda self, e, p: calls.append(1) or play(self, e, p))
        quiet = case()
        monkeypatch.setattr(instants.QuietInstants, "play", play)
        assert quiet == forced, name
        played += len(calls)
    assert played > 0 or not NO_NET_128.is_file()


# ----------------------------------------------------------------------- random runs
_RANDOM_PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="AS0" routing="Vivaldi">
  <host id="master_host" coordinates="0 0 0" speed="100Mf">
    <prop id="wattage_per_state" value="100:200" />
    <prop id="wattage_off" value="10" />
  </host>
{hosts}
</zone>
</platform>
"""
# pstates 0 and 1 compute (DVFS), 2 sleeps, 3 switches off (2 s), 4 switches on (5 s)
_HOST = """  <host id="host{i}" coordinates="0 0 0" speed="100.0Mf, 50.0Mf, 1e-9Mf, 0.5f, 0.2f" pstate="0">
    <prop id="wattage_per_state" value="30.0:100.0, 20.0:60.0, 9.75:9.75, 200.5:200.5, 150.25:150.25" />
    <prop id="wattage_off" value="9" />
    <prop id="sleep_pstates" value="2:3:4" />
  </host>"""
_NB_HOSTS = 5


def _random_workload(rng: random.Random) -> dict:
    profiles = {"tiny": {"type": "delay", "delay": 1e-10}, "d1": {"type": "delay", "delay": 1},
                "zero": {"type": "parallel_homogeneous", "cpu": 0, "com": 0}}
    jobs = []
    t = 0.0
    for i in range(rng.randint(5, 30)):
        t += rng.choice((0, 0, 1, 2.5, 5, 10, 1e-10))
        kind = rng.random()
        name = f"p{i}"
        if kind < 0.45:
            profiles[name] = {"type": "delay", "delay": rng.choice((5, 10, 10, 20, 7.25))}
        elif kind < 0.8:
            profiles[name] = {"type": "parallel_homogeneous", "cpu": rng.choice((5e8, 1e9, 2e9)), "com": 0}
        elif kind < 0.92:
            profiles[name + "a"] = {"type": "delay", "delay": rng.choice((2, 5))}
            profiles[name + "b"] = {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}
            profiles[name] = {"type": "composed", "repeat": rng.choice((1, 2)), "seq": [name + "a", name + "b"]}
        else:
            name = rng.choice(("d1", "tiny", "zero"))
        wall = rng.choice((-1, -1, 8, 15, 30, 1e-10))
        jobs.append({"id": str(i), "subtime": t, "res": rng.randint(1, 3), "walltime": wall, "profile": name})
    return {"nb_res": _NB_HOSTS, "jobs": jobs, "profiles": profiles}


class _RandomScheduler:
    """A seeded scheduler of random decisions: runs waiting jobs on free awake hosts, and now and
    then kills, rejects, asks to be called later, queries the energy, changes pstates (DVFS and
    sleep), or dates its reply later than the message."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.waiting: list = []            # [(id, res)]
        self.running: dict = {}            # id -> hosts
        self.free = set(range(_NB_HOSTS))  # awake, no job, not switching
        self.asleep: set = set()
        self.switching: set = set()

    def exchange(self, now, events):
        rng = self.rng
        for ev in events:
            if isinstance(ev, JobSubmitted):
                self.waiting.append((ev.job.id, ev.job.res))
            elif isinstance(ev, (JobCompleted, JobKilled)):
                ids = [ev.job_id] if isinstance(ev, JobCompleted) else list(ev.job_ids)
                for jid in ids:
                    self.free |= set(self.running.pop(jid, ()))
            elif isinstance(ev, ResourceStateChanged):
                for h in ev.resources:
                    self.switching.discard(h)
                    if ev.state == "2":
                        self.asleep.add(h)
                    else:
                        self.free.add(h)
        out: list = []
        late = now + rng.choice((1e-11, 0.25)) if rng.random() < 0.1 else None   # the reply's now
        if self.waiting and self.asleep:   # wake every sleeping host
            hosts = sorted(self.asleep)
            out.append(SetResourceState(resources=ProcSet(*hosts), state="0"))
            self.asleep.clear()
            self.switching |= set(hosts)
        for jid, res in list(self.waiting):
            if res > _NB_HOSTS or rng.random() < 0.05:
                out.append(RejectJob(job_id=jid))
                self.waiting.remove((jid, res))
            elif len(self.free) >= res:
                hosts = rng.sample(sorted(self.free), res)
                self.free -= set(hosts)
                self.running[jid] = hosts
                out.append(ExecuteJob(job_id=jid, alloc=ProcSet(*hosts)))
                self.waiting.remove((jid, res))
        if self.running and rng.random() < 0.08:
            out.append(KillJobs(job_ids=[rng.choice(sorted(self.running))]))
        if rng.random() < 0.1:
            out.append(CallMeLater(at=(now if late is None else late) + rng.choice((1e-5, 0.5, 3, 7))))
        if rng.random() < 0.05:
            out.append(Query(requests={"consumed_energy": {}}))
        if self.free and rng.random() < 0.15:
            h = rng.choice(sorted(self.free))
            if not self.waiting and rng.random() < 0.5:
                self.free.discard(h)
                self.switching.add(h)
                out.append(SetResourceState(resources=ProcSet(h), state="2"))
            else:   # DVFS of a free host (instantaneous)
                out.append(SetResourceState(resources=ProcSet(h), state=rng.choice(("0", "1"))))
        return out if late is None else Reply(late, out)


@pytest.mark.parametrize("seed", range(40))
def test_random_runs_are_the_same_on_both_paths(seed, tmp_path, monkeypatch):
    platform = tmp_path / "platform.xml"
    platform.write_text(_RANDOM_PLATFORM.format(hosts="\n".join(_HOST.format(i=i) for i in range(_NB_HOSTS))))
    wl = _random_workload(random.Random(seed))
    assert_same(platform, [wl], lambda: _RandomScheduler(seed), tmp_path, monkeypatch)


@pytest.mark.parametrize("policy,params", [("fcfs", {}), ("easy", {}), ("easy", {"idle_timeout": 30})])
def test_random_workloads_under_the_project_policies(policy, params, tmp_path, monkeypatch):
    platform = tmp_path / "platform.xml"
    platform.write_text(_RANDOM_PLATFORM.format(hosts="\n".join(_HOST.format(i=i) for i in range(_NB_HOSTS))))
    rng = random.Random(policy + str(params))
    wl = _random_workload(rng)
    for j in wl["jobs"]:
        j["res"] = min(j["res"], _NB_HOSTS)
    calls = assert_same(platform, [wl], lambda: InProcessPort(get_policy(policy, params)), tmp_path, monkeypatch)
    assert any(done for _, done in calls)


def test_the_forced_switch_reads_the_environment():
    import subprocess
    code = "from schedulers.engine import instants; print(instants.FORCE_ACTOR_MODEL)"
    env = {"GRIDSCHED_FORCE_ACTOR_MODEL": "1", "PATH": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.stdout.strip() == "True", out.stderr
    env["GRIDSCHED_FORCE_ACTOR_MODEL"] = "0"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.stdout.strip() == "False", out.stderr
