"""OSEP and HOSEP decisions on small grids, with every time worked out by hand.

Hosts are one core each; ids follow the names (``a0 < a1 < b0 < c0 ...``). A task of ``W`` Gflop
on a host of ``S`` Gf runs ``W / S`` s. Decision rounds run every 60 s (at 60, 120...).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from schedulers.core.owner_share import OwnerSharePolicy
from schedulers.core.policy import PolicyError, PolicyOptionError
from schedulers.core.preemption import checkpoint
from schedulers.core.satisfaction import satisfaction_metrics
from schedulers.engine import simulate
from schedulers.hosep import HOSEP
from schedulers.osep import OSEP
from schedulers.registry import get_policy

G = 1e9


def platform(tmp: Path, hosts: list[tuple[str, float, str | None]]) -> Path:
    lines = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">', '<zone id="z" routing="Full">', '  <host id="master_host" speed="100Mf"/>']
    for name, gf, owner in hosts:
        prop = f'<prop id="owner" value="{owner}"/>' if owner else ""
        lines.append(f'  <host id="{name}" speed="{gf}Gf">{prop}</host>')
    lines += ["</zone>", "</platform>"]
    p = tmp / "platform.xml"
    p.write_text("\n".join(lines) + "\n")
    return p


def workload(tasks: list[tuple[str, str, float, float]]) -> dict:
    """tasks: (job id, user, subtime s, work Gflop)."""
    return {"nb_res": 64, "jobs": [{"id": j, "user": u, "subtime": s, "res": 1, "walltime": -1, "profile": j}
                     for j, u, s, _ in tasks],
            "profiles": {j: {"type": "parallel_homogeneous", "cpu": w * G, "com": 0} for j, _, _, w in tasks}}


def rows(prefix: Path) -> dict[str, tuple]:
    """job id -> (state, start, finish, host ids, submission time)."""
    out = {}
    for r in csv.DictReader((prefix.parent / "out_jobs.csv").open()):
        out[r["job_id"]] = (r["final_state"][10:], float(r["starting_time"]), float(r["finish_time"]),
                            r["allocated_resources"], float(r["submission_time"]))
    return out


def run(tmp: Path, plat: Path, wl: dict, policy, **kw):
    prefix = tmp / "out_"
    res = simulate(plat, [wl], policy, export_prefix=prefix, dynamic_jobs=True, forward_profiles=True, **kw)
    return res, rows(prefix)


# ------------------------------------------------------------------------------ HOSEP
# alice owns a0, a1 (4 Gf each: Provided 8 Gf); bob owns b0 (1 Gf). bob's task B (400 Gflop) at 0
# takes the fastest idle host a0. alice submits A1..A4 (40, 60, 1200, 1600 Gflop) at 10: smallest
# first on the fastest idle host -- A1 on a1 (ends 20), A2 on b0 (ends 70); A3 follows A1 on a1
# (20 -> 320). At the 60 s round alice has A4 ready and holds a1 + b0 = 5 Gf: PowerDiff_alice =
# (5 - 8) / 8 = -0.375; bob holds a0: PowerDiff_bob = (4 - 1) / 1 = 3, his only host a0 gives
# RP_bob,a0 = (4 - 1 - 4) / 1 = -1 and PR_Aloc_alice,a0 = (5 - 8 + 4) / 8 = 0.125.
HOSEP_HOSTS = [("a0", 4, "alice"), ("a1", 4, "alice"), ("b0", 1, "bob")]
HOSEP_TASKS = [("B", "bob", 0, 400), ("A1", "alice", 10, 40), ("A2", "alice", 10, 60),
               ("A3", "alice", 10, 1200), ("A4", "alice", 10, 1600)]
FIXED = {"A1": ("SUCCESSFULLY", 10, 20, "1", 10), "A2": ("SUCCESSFULLY", 10, 70, "2", 10),
         "A3": ("SUCCESSFULLY", 20, 320, "1", 10)}


def test_hosep_does_not_preempt_when_the_victim_would_fall_below_the_beneficiary(tmp_path):
    # 000 Fig. 2 line 3: RP_bob,a0 = -1 is not > PowerDiff_alice = -0.375: no preemption. A4
    # waits for the first idle host: b0, left by A2 at 70 (1600 s at 1 Gf, ends 1670); B ends at
    # 100 on a0.
    pol = HOSEP()
    res, got = run(tmp_path, platform(tmp_path, HOSEP_HOSTS), workload(HOSEP_TASKS), pol)
    assert got == {**FIXED, "B": ("SUCCESSFULLY", 0, 100, "0", 0), "A4": ("SUCCESSFULLY", 70, 1670, "2", 10)}
    assert pol.metrics()["preemptions"] == 0


def test_hosep_pr_aloc_condition_preempts_where_omega_does_not(tmp_path):
    # 001 Fig. 5 line 3: PR_Aloc_alice,a0 = 0.125 > PR_Preemp_bob,a0 = -1: B is killed at 60 after
    # 60 s (240 of 400 Gflop), A4 takes a0 at 60 (ends 460). B#1, submitted at 60, restarts from
    # zero on b0 when A2 leaves it at 70: 400 s at 1 Gf, ends 470. Wasted: 240 Gflop.
    pol = HOSEP({"condition": "pr_aloc"})
    res, got = run(tmp_path, platform(tmp_path, HOSEP_HOSTS), workload(HOSEP_TASKS), pol)
    assert got == {**FIXED, "B": ("KILLED", 0, 60, "0", 0), "A4": ("SUCCESSFULLY", 60, 460, "0", 10),
                   "B#1": ("SUCCESSFULLY", 70, 470, "2", 60)}
    m = pol.metrics()
    assert m["preemptions"] == 1 and m["preemptions.bob"] == 1
    assert m["wasted_flops.bob"] == pytest.approx(240 * G)


def test_checkpoint_keeps_whole_blocks_across_host_speeds(tmp_path):
    # As above with 50 s blocks: B ran 60 s on a0 (4 Gf) = 1 whole block = 200 Gflop kept; the
    # 40 Gflop of the unfinished block are lost. B#1 computes the other 200 Gflop on b0 (1 Gf):
    # 200 s from 70, ends 270, with a profile of its own.
    pol = HOSEP({"condition": "pr_aloc", "checkpoint": True, "block": 50})
    res, got = run(tmp_path, platform(tmp_path, HOSEP_HOSTS), workload(HOSEP_TASKS), pol)
    assert got["B#1"] == ("SUCCESSFULLY", 70, 270, "2", 60)
    assert pol.metrics()["wasted_flops.bob"] == pytest.approx(40 * G)
    prof = next(r["profile"] for r in csv.DictReader((tmp_path / "out_jobs.csv").open()) if r["job_id"] == "B#1")
    assert prof == "B#1"


def test_checkpoint_arithmetic():
    # 1000 s of execution, 10-minute blocks: 1 block; 50 % of 2e12 flops done = 1e12 -> 600/1000 kept
    cp = checkpoint(2e12, 0.5, 1000.0, 600.0)
    assert (cp.blocks, cp.saved, cp.wasted) == (1, pytest.approx(6e11), pytest.approx(4e11))
    assert checkpoint(2e12, 0.5, 599.0, 600.0).saved == 0.0
    assert checkpoint(2e12, 0.5, 1000.0, None).wasted == pytest.approx(1e12)
    # 1200 s arriving as 1199.9999999998 still counts 2 blocks: everything kept
    assert checkpoint(1e12, 1.0, 1199.9999999998, 600.0).wasted == pytest.approx(0.0, abs=1.0)


def test_satisfaction_follows_the_restart(tmp_path):
    # Definition 5 (000 L309-315): alice's ideal machine = mean of her hosts = 4 Gf, bob's = 1 Gf.
    # B: 400 s ideal from 0, really ends 470 (through B#1): 400/470. alice's A1..A4 ideal 10, 15,
    # 300, 400 s after 10; real 10, 60, 310, 450 s.
    plat = platform(tmp_path, HOSEP_HOSTS)
    wl = workload(HOSEP_TASKS)
    run(tmp_path, plat, wl, HOSEP({"condition": "pr_aloc"}))
    wfile = tmp_path / "w.json"
    import json
    wfile.write_text(json.dumps(wl))
    got = satisfaction_metrics(tmp_path, [wfile], plat)
    alice = (10 / 10 + 15 / 60 + 300 / 310 + 400 / 450) / 4 * 100
    assert got == {"satisfaction.alice": pytest.approx(alice), "satisfaction.bob": pytest.approx(400 / 470 * 100)}


# ------------------------------------------------------------------------------ OSEP
# alice owns a0, a1; bob owns b0; carol owns c0, c1, c2 and submits nothing. bob's six tasks at 0
# take the six hosts in id order (B0 on a0 ... B5 on c2): f_bob = 1 - 6 = -5. alice's two tasks at
# 10 find no idle host: f_alice = 2, f_carol = 3 but carol has no demand (line 1 skips her).
OSEP_HOSTS = [("a0", 1, "alice"), ("a1", 1, "alice"), ("b0", 1, "bob"),
              ("c0", 1, "carol"), ("c1", 1, "carol"), ("c2", 1, "carol")]
OSEP_TASKS = [(f"B{i}", "bob", 0, 1000) for i in range(6)] + [("A0", "alice", 10, 100), ("A1", "alice", 10, 100)]


def test_osep_preempts_the_least_run_task_of_the_largest_excess(tmp_path):
    # Round at 60: u_max = alice (f 2), u_min = bob (f -5); all of bob's tasks ran 60 s: the later
    # arrival goes first -- B5 on c2 for A0, then (f_alice 1, f_bob -4) B4 on c1 for A1; then
    # f_alice = 0: done. A0, A1 run 100 s from 60. B5#1, B4#1 restart when A0, A1 end (160),
    # each on the first host that frees: on this Full zone each EXECUTE_JOB crosses SimGrid's
    # loopback (1e-10 s), so A1 starts 1e-10 s after A0 and its computation ends one SimGrid step
    # later (netserver.py). A0's JOB_COMPLETED comes first: c2 goes to B4#1 (bob's first by
    # arrival), then A1's: c1 to B5#1; 1000 s each.
    pol = OSEP()
    res, got = run(tmp_path, platform(tmp_path, OSEP_HOSTS), workload(OSEP_TASKS), pol)
    assert got["B5"] == ("KILLED", 0, 60, "5", 0) and got["B4"] == ("KILLED", 0, 60, "4", 0)
    assert got["A0"] == ("SUCCESSFULLY", 60, 160, "5", 10) and got["A1"] == ("SUCCESSFULLY", 60, 160, "4", 10)
    assert got["B4#1"] == ("SUCCESSFULLY", 160, 1160, "5", 60)
    assert got["B5#1"] == ("SUCCESSFULLY", 160, 1160, "4", 60)
    assert {k for k, v in got.items() if v[0] == "KILLED"} == {"B4", "B5"}
    assert pol.metrics()["preemptions.bob"] == 2


def test_osep_maxt_bounds_preemptions_per_round(tmp_path):
    # maxt = 1: B5 at the 60 s round, B4 at the 120 s round.
    pol = OSEP({"maxt": 1})
    res, got = run(tmp_path, platform(tmp_path, OSEP_HOSTS), workload(OSEP_TASKS), pol)
    assert got["B5"][:3] == ("KILLED", 0, 60) and got["B4"][:3] == ("KILLED", 0, 120)
    assert got["A0"][:3] == ("SUCCESSFULLY", 60, 160) and got["A1"][:3] == ("SUCCESSFULLY", 120, 220)


def test_osep_preempts_a_non_owner_first(tmp_path):
    # dave owns nothing. At 0 idle hosts go by f: bob (f 1) gets a0, a1 for B0, B1 (f -1); then
    # dave (f 0) gets b0. alice (f 2) submits at 10. At 60 both bob and dave have f = -1; dave is
    # a non-owner, so his task is preempted (by name, bob would have been).
    hosts = [("a0", 1, "alice"), ("a1", 1, "alice"), ("b0", 1, "bob")]
    tasks = [("B0", "bob", 0, 1000), ("B1", "bob", 0, 1000), ("D0", "dave", 0, 1000), ("A0", "alice", 10, 100)]
    pol = OSEP()
    res, got = run(tmp_path, platform(tmp_path, hosts), workload(tasks), pol)
    assert got["D0"][:4] == ("KILLED", 0, 60, "2")
    assert got["A0"][:4] == ("SUCCESSFULLY", 60, 160, "2")
    assert got["B0"][0] == got["B1"][0] == "SUCCESSFULLY"


def test_hosep_a_non_owner_is_the_first_victim_and_never_a_beneficiary(tmp_path):
    # dave owns nothing: PowerDiff +inf while he runs, so he is the victim even though bob's
    # excess is finite; alice's A0 takes dave's host.
    hosts = [("a0", 1, "alice"), ("b0", 1, "bob"), ("b1", 1, "bob")]
    tasks = [("D0", "dave", 0, 1000), ("B0", "bob", 0, 1000), ("B1", "bob", 0, 1000), ("A0", "alice", 10, 100)]
    pol = HOSEP()
    res, got = run(tmp_path, platform(tmp_path, hosts), workload(tasks), pol)
    killed = {k for k, v in got.items() if v[0] == "KILLED"}
    assert killed == {"D0"}
    assert got["A0"][1:3] == (60, 160)
    assert got["D0#1"][0] == "SUCCESSFULLY"


# ------------------------------------------------------------------------------ options, protocol
@pytest.mark.parametrize("name,opts,word", [
    ("hosep", {"condition": "max"}, "condition"), ("osep", {"period": -1}, "period"),
    ("osep", {"maxt": 1.5}, "maxt"), ("hosep", {"checkpoint": "yes"}, "checkpoint"),
    ("osep", {"block": 0}, "block"), ("osep", {"perod": 60}, "perod")])
def test_bad_options_are_one_line_errors(name, opts, word):
    with pytest.raises(PolicyOptionError) as e:
        get_policy(name, opts)
    assert word in str(e.value) and name in str(e.value) and "\n" not in str(e.value)


def test_missing_batsim_features_stop_at_simulation_begins(tmp_path):
    plat = platform(tmp_path, HOSEP_HOSTS)
    with pytest.raises(PolicyError, match="--enable-dynamic-jobs"):
        simulate(plat, [workload(HOSEP_TASKS)], HOSEP(), forward_profiles=True)


def test_acknowledged_restarts_are_not_submitted_twice(tmp_path):
    # With --acknowledge-dynamic-jobs Batsim answers each REGISTER_JOB with a JOB_SUBMITTED: the
    # outcome must be the same as without.
    pol = HOSEP({"condition": "pr_aloc"})
    res, got = run(tmp_path, platform(tmp_path, HOSEP_HOSTS), workload(HOSEP_TASKS), pol,
                   acknowledge_dynamic_jobs=True)
    assert got["B#1"] == ("SUCCESSFULLY", 70, 470, "2", 60)
    assert sorted(got) == ["A1", "A2", "A3", "A4", "B", "B#1"]


def test_the_skeleton_needs_its_hooks():
    assert issubclass(OSEP, OwnerSharePolicy) and issubclass(HOSEP, OwnerSharePolicy)
    with pytest.raises(NotImplementedError):
        OwnerSharePolicy().decision_step()


# ------------------------------------------------------------------------------ real Batsim
RECORDED = Path(__file__).parent / "fixtures" / "batsim_owner_share"


@pytest.mark.parametrize("name,options,fixture", [
    ("osep", {}, "osep_jobs.csv"), ("hosep", {}, "hosep_jobs.csv"),
    ("osep", {"checkpoint": True, "block": 100}, "osep_checkpoint_jobs.csv"),
    ("hosep", {"checkpoint": True, "block": 100}, "hosep_checkpoint_jobs.csv")])
def test_engine_equals_recorded_real_batsim(tmp_path, name, options, fixture):
    # Recorded from real Batsim 4.2.1 (fixtures/batsim_owner_share/README.md): the same policy
    # behind Batsim and in the engine gives the same rows -- kills, restarts (with the progress
    # Batsim prints with 6 decimals), checkpointed profiles -- within 1e-4 s.
    from schedulers.inputs.generators import generate
    from schedulers.engine.platform import read_platform

    sc = generate("hosep", {"demand": "large", "late": "user1"}, 3)
    plat = read_platform("<hosep>", text=sc.platform_xml)
    simulate(plat, sc.workloads, get_policy(name, options), export_prefix=tmp_path / "out_",
             dynamic_jobs=True, forward_profiles=True)

    def load(path):
        return {r["job_id"]: r for r in csv.DictReader(open(path))}
    want, got = load(RECORDED / fixture), load(tmp_path / "out_jobs.csv")
    assert list(got) == list(want)
    assert sum("#" in j for j in want) >= 3
    for j, w in want.items():
        g = got[j]
        assert (g["final_state"], g["allocated_resources"], g["profile"]) == \
            (w["final_state"], w["allocated_resources"], w["profile"]), j
        for col in ("submission_time", "starting_time", "finish_time"):
            assert abs(float(g[col]) - float(w[col])) <= 1e-4, (j, col)


def test_restart_registered_before_the_last_static_arrival(tmp_path):
    # a0 (A) and b0 (B), 1 Gf. t = 0: A's a1, a2 (1000 Gflop) take both hosts; t = 10: B's b1
    # (10 Gflop); round at 60: HOSEP preempts A's task on b0 (PowerDiff A = +1, RP_A = 0 > -1; both
    # hosts equal, the later arrival a2... on host 1), b1 runs 60-70, the restart a2#1 (registered
    # at 60) runs 70-1070. A's static job "late" (10 Gflop) arrives at 500, after the restart was
    # registered: the engine must submit it once and never re-submit a2#1 as a static job; late
    # waits for a1's host, free at 1000, and ends at 1010.
    plat = platform(tmp_path, [("a0", 1, "A"), ("b0", 1, "B")])
    wl = workload([("a1", "A", 0, 1000), ("a2", "A", 0, 1000), ("b1", "B", 10, 10), ("late", "A", 500, 10)])
    _, out = run(tmp_path, plat, wl, HOSEP())
    assert {j: r[:4] for j, r in out.items()} == {
        "a1": ("SUCCESSFULLY", 0.0, 1000.0, "0"), "a2": ("KILLED", 0.0, 60.0, "1"),
        "b1": ("SUCCESSFULLY", 60.0, 70.0, "1"), "a2#1": ("SUCCESSFULLY", 70.0, 1070.0, "1"),
        "late": ("SUCCESSFULLY", 1000.0, 1010.0, "0")}


def test_a_workload_dict_simulated_twice_gives_the_same_run(tmp_path):
    # The engine once added the restarts' registered profiles (a2#1) to the caller's workload
    # dict: a second simulate() of the same dict then aborted on REGISTER_PROFILE a2#1 ("already
    # exists"). The scenario of test_restart_registered_before_the_last_static_arrival, twice.
    plat = platform(tmp_path, [("a0", 1, "A"), ("b0", 1, "B")])
    wl = workload([("a1", "A", 0, 1000), ("a2", "A", 0, 1000), ("b1", "B", 10, 10)])
    before = {k: dict(v) for k, v in wl["profiles"].items()}
    _, first = run(tmp_path, plat, wl, HOSEP())
    assert wl["profiles"] == before
    _, second = run(tmp_path, plat, wl, HOSEP())
    assert first == second and "a2#1" in second


@pytest.mark.parametrize("options", [{}, {"period": 0}, {"period": 1000, "maxt": 0, "checkpoint": True, "block": 60}])
def test_own_share_options_have_no_effect_and_say_so(tmp_path, options):
    # Each user on its own hosts, smallest task first, the fastest host first: bob's B (400 Gflop)
    # on b0 (1 Gf) 0 -> 400; at 10 alice's A1 (40) on a0 (4 Gf) 10 -> 20, A2 (60) on a1 10 -> 25;
    # A3 (1200) on a0 when A1 ends, 20 -> 320; A4 (1600) on a1 when A2 ends, 25 -> 425. No round
    # ever preempts, so the skeleton's options change nothing; `gridsched policies own-share`
    # showed them as if they did.
    _, got = run(tmp_path, platform(tmp_path, HOSEP_HOSTS), workload(HOSEP_TASKS), get_policy("own-share", options))
    want = {"B": (0, 400, "2"), "A1": (10, 20, "0"), "A2": (10, 25, "1"), "A3": (20, 320, "0"), "A4": (25, 425, "1")}
    assert set(got) == set(want)
    for job, (start, end, host) in want.items():
        assert got[job][0] == "SUCCESSFULLY" and got[job][3] == host, (job, got[job])
        assert got[job][1] == pytest.approx(start, abs=1e-6) and got[job][2] == pytest.approx(end, abs=1e-6), job
    docs = get_policy("own-share").option_docs
    for name in ("period", "maxt", "checkpoint", "block"):
        assert docs[name].startswith("no effect in own-share"), name
    assert not docs["idle_timeout"].startswith("no effect")
