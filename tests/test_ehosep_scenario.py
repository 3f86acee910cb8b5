"""The ``ehosep`` scenario generator: EHOSEP's 64-host / 4-user grid, saturating demand, limits.

Figures from the EHOSEP paper (003, ``shared/papers/003_97c4ff2275ee8bc0.txt``): Table 1 for the
grid, §4 for the task sizes (10-60 min on a machine of the grid's mean power) and the limits
(user1's from 80 % to 182.09 %, users 2-4 above their shares).
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter

import pytest

from schedulers.cli import main as gridsched
from schedulers.core.ownership import Ownership
from schedulers.core.run_outputs import read_hosts
from schedulers.engine import EngineError, read_platform, simulate
from schedulers.inputs.ehosep_scenario import task_counts
from schedulers.inputs.generators import GENERATORS, GeneratorError, generate
from schedulers.inputs.scenario_cli import main as scenario_cli
from schedulers.inputs.validate import validate_workload
from schedulers.registry import get_policy

MF = 1e6  # flops/s per MFlops
USERS = ("user1", "user2", "user3", "user4")
# Table 1 by hand (MFlops and W):
#   user1 16 x 133,470 + 8 x 108,000 = 2,135,520 + 864,000 = 2,999,520   16 x 220 + 8 x 191   = 3,520 + 1,528 = 5,048
#   user2 12 x  84,530 + 8 x  95,490 = 1,014,360 + 763,920 = 1,778,280   12 x 99  + 8 x 113.5 = 1,188 +   908 = 2,096
#   user3  6 x  32,430 + 6 x  17,380 =   194,580 + 104,280 =   298,860    6 x 134 + 6 x 118   =   804 +   708 = 1,512
#   user4  8 x  42,250                                      =   338,000    8 x 67               =               536
#   grid                                                      5,414,660                                         9,192
SHARE_MFLOPS = {"user1": 2_999_520, "user2": 1_778_280, "user3": 298_860, "user4": 338_000}
SHARE_WATTS = {"user1": 5_048.0, "user2": 2_096.0, "user3": 1_512.0, "user4": 536.0}
MEAN_SPEED = 5_414_660 / 64 * MF      # 84,604.0625 MFlops, flops/s
SLOWEST = 17_380 * MF                 # user3's type-b hosts, flops/s


def hosts_of(scenario, tmp_path):
    path = tmp_path / "platform.xml"
    path.write_text(scenario.platform_xml)
    return read_hosts(path), read_platform(path)


def by_user(workload):
    out = {u: [] for u in USERS}
    for j in workload["jobs"]:
        out[j["user"]].append((j["subtime"], workload["profiles"][j["profile"]]["cpu"]))
    return out


def test_registered_with_its_parameters():
    assert GENERATORS["ehosep"].params == {"tasks_per_user": 150, "u1_limit": 100.0, "limits": 150.0,
                                           "overload": 1.5, "idle_fraction": 0.5, "off_fraction": 0.05}


def test_grid_of_table_1(tmp_path):
    hosts, spec = hosts_of(generate("ehosep", {}, 0), tmp_path)
    assert len(hosts) == 64 and all(h.cores == 1 for h in hosts)
    assert Counter(h.speeds[0] / MF for h in hosts) == {133_470: 16, 108_000: 8, 84_530: 12, 95_490: 8,
                                                       32_430: 6, 17_380: 6, 42_250: 8}
    own = Ownership(hosts)
    assert own.owners == USERS
    assert [len(own.share(u)) for u in USERS] == [24, 20, 12, 8]
    assert {u: own.provided(u) / MF for u in USERS} == SHARE_MFLOPS
    assert own.total_power / MF == 5_414_660
    full = {u: math.fsum(spec.compute[i].power[0].all_cores for i in own.share(u)) for u in USERS}
    assert full == SHARE_WATTS
    assert math.fsum(full.values()) == 9_192.0
    # Table 1's efficiency column (GFlops/W): 2,999.52 / 5,048 = 0.59420, 1,778.28 / 2,096 = 0.84842,
    # 298.86 / 1,512 = 0.19766 (printed 0.1976: truncated), 338 / 536 = 0.63060 (printed 0.6306)
    for u, printed in zip(USERS, (0.5942, 0.8484, 0.1976, 0.6306)):
        assert abs(own.provided(u) / 1e9 / full[u] - printed) < 1e-4, u
    # 003 §4's top limit for user1, 182.09 %, is the grid's full-load power over user1's:
    # 9,192 / 5,048 = 1.82092
    assert round(100 * math.fsum(full.values()) / full["user1"], 2) == 182.09


def test_power_states_idle_half_off_five_percent(tmp_path):
    hosts, spec = hosts_of(generate("ehosep", {}, 0), tmp_path)
    for h, s in zip(hosts, spec.compute):
        p = s.power[0]
        assert p.epsilon == p.idle                      # Idle:AllCores, one core
        assert p.idle == pytest.approx(0.5 * p.all_cores, rel=1e-12)
        assert s.wattage_off == pytest.approx(0.05 * p.all_cores, rel=1e-12)
    first_u2b = next(s for s in spec.compute if s.name == "user2_b_00")
    # 113.5 W at full load -> 56.75 W idle, 5.675 W off
    assert first_u2b.properties["wattage_per_state"] == "56.75:113.5"
    assert first_u2b.properties["wattage_off"] == "5.675"
    _, spec30 = hosts_of(generate("ehosep", {"idle_fraction": 0.3, "off_fraction": 0.0}, 0), tmp_path)
    assert spec30.compute[0].properties["wattage_per_state"] == "66.0:220.0"   # 0.3 x 220 W
    assert spec30.compute[0].wattage_off == 0.0


def test_task_counts_follow_the_shares():
    # 600 tasks x share / 5,414,660: user1 332.38, user2 197.05, user3 33.12, user4 37.45 ->
    # 332 + 197 + 33 + 37 = 599; the one left goes to the largest remainder, user4's 0.45
    assert task_counts(150) == {"user1": 332, "user2": 197, "user3": 33, "user4": 38}
    # 4 tasks: 2.216, 1.314, 0.221, 0.250 -> 2 + 1 + 0 + 0, one more to user2 (0.314); the users
    # given none get one each
    assert task_counts(1) == {"user1": 2, "user2": 2, "user3": 1, "user4": 1}
    w = generate("ehosep", {"tasks_per_user": 10}, 4).workloads[0]
    # 40 tasks: 22.16, 13.14, 2.21, 2.50 -> 22 + 13 + 2 + 2 = 39, + user4 (0.50)
    assert Counter(j["user"] for j in w["jobs"]) == {"user1": 22, "user2": 13, "user3": 2, "user4": 3}


def test_tasks_last_10_to_60_minutes_on_the_mean_machine():
    w = generate("ehosep", {}, 7).workloads[0]
    minutes = []
    for j in w["jobs"]:
        p = w["profiles"][j["profile"]]
        assert p["type"] == "parallel_homogeneous" and p["com"] == 0 and j["res"] == 1
        assert p["cpu"] % MF == 0                          # whole MFLOP
        minutes.append(p["cpu"] / MEAN_SPEED / 60)
        # the walltime covers a run on the slowest host (17.38 GFlops), with at most 2 min to spare
        alone = p["cpu"] / SLOWEST
        assert alone < j["walltime"] <= alone + 120.0, j["id"]
    assert 10 - 1e-6 <= min(minutes) and max(minutes) < 60
    # uniform draws: the 600 tasks fill the range (deciles all populated)
    assert len({int((m - 10) // 5) for m in minutes}) == 10


def test_every_user_saturates_its_share():
    for seed in range(5):
        w = generate("ehosep", {}, seed).workloads[0]
        for u, jobs in by_user(w).items():
            jobs.sort()
            p = SHARE_MFLOPS[u] * MF
            work = math.fsum(c for _, c in jobs)
            window = jobs[-1][0] - jobs[0][0]
            assert jobs[0][0] == 0.0
            # submitted work over the arrival window = 1.5 x what the share runs in that window
            assert work / (p * window) == pytest.approx(1.5, rel=1e-6), (seed, u)
            # a user served exactly at its share (a fluid queue draining at P_u) has work waiting
            # most of the time from 0 to the end of its backlog
            t = backlog = waiting = 0.0
            for sub, cpu in jobs:
                waiting += min(sub - t, backlog / p)
                backlog = max(0.0, backlog - p * (sub - t)) + cpu
                t = sub
            end = t + backlog / p
            waiting += backlog / p
            assert waiting / end > 0.9, (seed, u)
    # a larger overload: a shorter window for the same work
    w2 = generate("ehosep", {"overload": 3.0}, 0).workloads[0]
    for u, jobs in by_user(w2).items():
        assert math.fsum(c for _, c in jobs) / (SHARE_MFLOPS[u] * MF * max(s for s, _ in jobs)) \
            == pytest.approx(3.0, rel=1e-6)


def test_limits_are_recorded_not_used():
    a = generate("ehosep", {"u1_limit": 80.0}, 3).workloads[0]
    b = generate("ehosep", {"u1_limit": 182.09, "limits": 120.0}, 3).workloads[0]
    assert a["ehosep"] == {"limits": {"user1": 80.0, "user2": 150.0, "user3": 150.0, "user4": 150.0}}
    assert b["ehosep"] == {"limits": {"user1": 182.09, "user2": 120.0, "user3": 120.0, "user4": 120.0}}
    assert a["jobs"] == b["jobs"] and a["profiles"] == b["profiles"]


def test_deterministic_per_seed():
    a, b, c = (generate("ehosep", {"tasks_per_user": 20}, s) for s in (3, 3, 4))
    assert json.dumps(a.workloads[0]) == json.dumps(b.workloads[0])
    assert a.platform_xml == b.platform_xml == c.platform_xml
    assert json.dumps(a.workloads[0]["profiles"]) != json.dumps(c.workloads[0]["profiles"])
    assert [j["subtime"] for j in a.workloads[0]["jobs"]] != [j["subtime"] for j in c.workloads[0]["jobs"]]


@pytest.mark.parametrize("params, message", [
    ({"tasks_per_user": 0}, "tasks_per_user must be >= 1, got 0"),
    ({"u1_limit": 0.0}, "u1_limit and limits must be percents > 0"),
    ({"limits": -5.0}, "u1_limit and limits must be percents > 0"),
    ({"overload": 0.0}, "overload must be > 0"),
    ({"idle_fraction": 0.04}, "need 0 <= off_fraction <= idle_fraction <= 1"),
    ({"idle_fraction": 1.5}, "need 0 <= off_fraction <= idle_fraction <= 1"),
])
def test_bad_parameters(params, message):
    with pytest.raises(GeneratorError, match=message):
        generate("ehosep", params, 0)


def test_workload_is_valid_batsim_with_jobs_by_arrival():
    w = generate("ehosep", {}, 2).workloads[0]
    validate_workload(w, "<ehosep>")          # raises WorkloadError when not valid
    assert w["nb_res"] == 64
    keys = [(j["subtime"], j["id"]) for j in w["jobs"]]
    assert keys == sorted(keys)


def test_command_writes_files_and_fcfs_runs_them_with_energy(tmp_path, capsys):
    out = tmp_path / "scn"
    assert scenario_cli(["ehosep", "--u1-limit", "80", "--tasks-per-user", "40", "--seed", "3", "-o", str(out)]) == 0
    written = json.loads((out / "workload.json").read_text())
    assert written == generate("ehosep", {"u1_limit": 80.0, "tasks_per_user": 40}, 3).workloads[0]
    assert written["ehosep"]["limits"]["user1"] == 80.0
    assert scenario_cli(["ehosep", "--overload", "-1", "-o", str(tmp_path / "bad")]) == 2
    assert "overload must be > 0" in capsys.readouterr().err
    code = gridsched(["run", "--policy", "fcfs", "-p", str(out / "platform.xml"), "-w", str(out / "workload.json"),
                      "-o", str(tmp_path / "run"), "-E", "--no-progress"])
    assert code == 0
    with open(tmp_path / "run" / "out_jobs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(written["jobs"]) == 160
    assert {r["final_state"] for r in rows} == {"COMPLETED_SUCCESSFULLY"}
    # one-core hosts at full load: a job's energy is its host's AllCores power x its run time
    spec = read_platform(out / "platform.xml")
    for r in rows:
        host = spec.compute[int(r["allocated_resources"])]
        expected = host.power[0].all_cores * float(r["execution_time"])
        assert float(r["consumed_energy"]) == pytest.approx(expected, rel=1e-5, abs=1e-3), r["job_id"]


@pytest.mark.parametrize("policy, options", [("hosep", {}), ("ehosep", {"limits": {"user1": 120, "user2": 150, "user3": 150,
                                                                                 "user4": 150}})])
def test_preemptive_policies_run_the_scenario_with_energy(tmp_path, policy, options):
    # 120 tasks, seed 0: the policies preempt while tasks still arrive (restarts are registered
    # before the static submitter ends: the engine once re-submitted them and deadlocked at t = 20,030 s)
    sc = generate("ehosep", {"tasks_per_user": 30}, 0)
    platform = read_platform("<ehosep>", text=sc.platform_xml)
    res = simulate(platform, sc.workloads, get_policy(policy, options), energy=True, forward_profiles=True,
                   dynamic_jobs=True, export_prefix=tmp_path / "out_")
    assert res is not None
    with open(tmp_path / "out_jobs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    done = {r["job_id"].split("#")[0] for r in rows if r["final_state"] == "COMPLETED_SUCCESSFULLY"}
    assert done == {j["id"] for j in sc.workloads[0]["jobs"]}
    assert any("#" in r["job_id"] for r in rows)    # it did preempt
