"""EHOSEP's metrics (paper 003): CSP (§3.1) and the satisfaction S_i of eq. (1), from a run's files.

A tiny run written by hand (3 hosts, 4 tasks, one preempted) with every term of eq. (1) worked out
in the comments; then the 64-host grid of Table 1 (CSP by hand) and real engine runs (the energy
read per host from the jobs agrees with the engine's platform total).
"""

from __future__ import annotations

import copy
import csv
import json
import math
import textwrap

import pytest

from schedulers.campaign.execute import execute_run
from schedulers.campaign.run_metrics import RUN_METRICS
from schedulers.campaign.spec import load_campaign
from schedulers.core.ehosep_metrics import csp, ehosep_metrics, read_grid, recorded_limits
from schedulers.core.run_outputs import OutputsError
from schedulers.engine import read_platform, simulate
from schedulers.inputs.errors import PlatformError, WorkloadError
from schedulers.inputs.generators import generate
from schedulers.registry import get_policy

HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,"
          "final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
          "allocated_resources,consumed_energy,metadata")

# Hosts (Batsim ids in name order): 0 "a_u1" 2 Gflops/s, Idle 50 W / full 100 W, owner u1;
# 1 "b_u2" 1 Gflops/s, 20 / 60 W, owner u2; 2 "c_free" 1 Gflops/s, 10 / 40 W, nobody's.
PLATFORM = """\
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="tiny" routing="Full">
  <host id="master_host" speed="100Mf"><prop id="wattage_per_state" value="100:200"/></host>
  <host id="a_u1" speed="2Gf" core="1"><prop id="owner" value="u1"/><prop id="wattage_per_state" value="50:100"/></host>
  <host id="b_u2" speed="1Gf" core="1"><prop id="owner" value="u2"/><prop id="wattage_per_state" value="20:60"/></host>
  <host id="c_free" speed="1Gf" core="1"><prop id="wattage_per_state" value="10:40"/></host>
</zone>
</platform>
"""

# Tasks: u1-0 and u1-1 (20 Gflop, arrive at 0), u2-0 (10 Gflop, at 5 s), u3-0 (10 Gflop, at 0;
# u3 owns nothing). Limits: u1 80 %, u2 150 % (none for u3).
WORKLOAD = {
    "nb_res": 3,
    "ehosep": {"limits": {"u1": 80, "u2": 150.0}},
    "jobs": [{"id": "u1-0", "subtime": 0, "res": 1, "walltime": -1, "profile": "p20", "user": "u1"},
             {"id": "u1-1", "subtime": 0, "res": 1, "walltime": -1, "profile": "p20", "user": "u1"},
             {"id": "u2-0", "subtime": 5, "res": 1, "walltime": -1, "profile": "p10", "user": "u2"},
             {"id": "u3-0", "subtime": 0, "res": 1, "walltime": -1, "profile": "p10", "user": "u3"}],
    "profiles": {"p20": {"type": "parallel_homogeneous", "cpu": 20e9, "com": 0},
                 "p10": {"type": "parallel_homogeneous", "cpu": 10e9, "com": 0}},
}

# The run: u1-0 on host 0 over [0, 10] (100 W x 10 s = 1000 J); u1-1 on host 2 over [0, 4], killed
# (40 W x 4 s = 160 J), restarted as u1-1#1 on host 0 over [12, 22] (1000 J); u2-0 on host 1 over
# [5, 15] (60 W x 10 s = 600 J); u3-0 on host 2 over [4, 14] (40 W x 10 s = 400 J).
ROWS = [  # job_id, final_state, start, finish, host, energy
    ("u1-0", "COMPLETED_SUCCESSFULLY", 0, 10, "0", "1000.000000"),
    ("u1-1", "COMPLETED_KILLED", 0, 4, "2", "160.000000"),
    ("u3-0", "COMPLETED_SUCCESSFULLY", 4, 14, "2", "400.000000"),
    ("u2-0", "COMPLETED_SUCCESSFULLY", 5, 15, "1", "600.000000"),
    ("u1-1#1", "COMPLETED_SUCCESSFULLY", 12, 22, "0", "1000.000000"),
]


def write_run(tmp_path, rows=ROWS, workload=WORKLOAD, platform=PLATFORM):
    lines = [HEADER]
    for jid, state, start, finish, host, energy in rows:
        sub = 5 if jid.startswith("u2") else 0
        lines.append(f"{jid},w0,p,{sub},1,-1,{int(state == 'COMPLETED_SUCCESSFULLY')},{state},{start},"
                     f"{finish - start},{finish},{start - sub},{finish - sub},1,{host},{energy},")
    (tmp_path / "out_jobs.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "w.json").write_text(json.dumps(workload))
    (tmp_path / "p.xml").write_text(platform)
    return tmp_path / "out_jobs.csv", [tmp_path / "w.json"], tmp_path / "p.xml"


def test_satisfaction_of_eq_1_by_hand(tmp_path):
    m = ehosep_metrics(*write_run(tmp_path))
    # TempoTotalExec = last end = 22 s
    assert m["ehosep.total_time"] == 22.0
    # Host energies over [0, 22]: host 0 runs 1000 + 1000 J, idle 2 s x 50 W = 100 J -> 2100 J;
    # host 1 runs 600 J, idle 12 s x 20 W -> 840 J; host 2 runs 160 + 400 J, idle 8 s x 10 W -> 640 J.
    # ConsTotalSist = 3580 J; ConsTotalPorcao: u1 2100 J, u2 840 J.
    assert m["ehosep.system_energy"] == pytest.approx(3580.0)
    assert m["ehosep.share_energy.u1"] == pytest.approx(2100.0)
    assert m["ehosep.share_energy.u2"] == pytest.approx(840.0)
    # ConsTotal_i: u1 1000 + 160 (the killed run) + 1000 = 2160 J; u2 600 J; u3 400 J
    assert (m["ehosep.energy.u1"], m["ehosep.energy.u2"], m["ehosep.energy.u3"]) == (2160.0, 600.0, 400.0)
    assert m["ehosep.mean_power.u1"] == pytest.approx(2160 / 22)
    # Limite_i: 80 % of u1's 100 W = 80 W; 150 % of u2's 60 W = 90 W
    assert m["ehosep.limit_w.u1"] == pytest.approx(80.0)
    assert m["ehosep.limit_w.u2"] == pytest.approx(90.0)
    # Time factor, ideal machine = the mean speed of the user's hosts (u1: 2 Gflops/s, u2: 1):
    # u1-0 ideal 20/2 = 10 s, real 10 - 0 = 10 s -> 1; u1-1 ideal 10 s, real 22 - 0 -> 10/22;
    # mean (1 + 5/11) / 2 = 8/11. u2-0: ideal 10/1 = 10 s, real 15 - 5 = 10 s -> 1.
    assert m["ehosep.time_factor.u1"] == pytest.approx(8 / 11)
    assert m["ehosep.time_factor.u2"] == pytest.approx(1.0)
    # ConMaxPorcao / ConsTotalPorcao: u1 100 W x 22 s / 2100 J = 22/21; u2 60 x 22 / 840 = 11/7
    assert m["ehosep.share_factor.u1"] == pytest.approx(22 / 21)
    assert m["ehosep.share_factor.u2"] == pytest.approx(11 / 7)
    # (ConsTotalSist - ConsTotal_i) / (Limite_i x TempoTotalExec):
    # u1 (3580 - 2160) / (80 x 22) = 1420/1760 = 71/88; u2 (3580 - 600) / (90 x 22) = 2980/1980 = 149/99
    assert m["ehosep.energy_factor.u1"] == pytest.approx(71 / 88)
    assert m["ehosep.energy_factor.u2"] == pytest.approx(149 / 99)
    # S_u1 = 100 x 8/11 x 22/21 x 71/88 = 100 x 142/231 = 61.47 %; S_sum (2 tasks) twice that
    # S_u2 = 100 x 1 x 11/7 x 149/99 = 100 x 149/63 = 236.51 % (1 task)
    assert m["ehosep.S.u1"] == pytest.approx(14200 / 231)
    assert m["ehosep.S_sum.u1"] == pytest.approx(28400 / 231)
    assert m["ehosep.S.u2"] == m["ehosep.S_sum.u2"] == pytest.approx(14900 / 63)
    # CSP: full load 100 + 60 + 40 = 200 W, speed 2 + 1 + 1 = 4 Gflops/s;
    # u1 (100/200) x (4/2) = 1.0; u2 (60/200) x (4/1) = 1.2
    assert m["ehosep.CSP.u1"] == pytest.approx(1.0)
    assert m["ehosep.CSP.u2"] == pytest.approx(1.2)
    # u3 owns nothing: a limit of 0 W and no share, so no S and no CSP; its energy is there
    assert not [k for k in m if k.endswith(".u3") and not k.startswith(("ehosep.energy.", "ehosep.mean_power.",
                                                                          "ehosep.share_energy."))]
    assert m["ehosep.share_energy.u3"] == 0.0
    assert all(math.isfinite(v) for v in m.values())


def test_grid_mean_ideal_and_ispd_energy_factor_by_hand(tmp_path):
    m = ehosep_metrics(*write_run(tmp_path))
    # grid-mean ideal machine (003 L243-245, iSPD): (2 + 1 + 1) / 3 = 4/3 Gflops/s.
    # u1-0: 20 / (4/3) = 15 s over a real 10 s -> 1.5; u1-1: 15 s over 22 s -> 15/22;
    # mean (1.5 + 15/22) / 2 = (33/22 + 15/22) / 2 = 12/11. u2-0: 10 / (4/3) = 7.5 s over 10 s -> 3/4
    assert m["ehosep.time_factor_grid.u1"] == pytest.approx(12 / 11)
    assert m["ehosep.time_factor_grid.u2"] == pytest.approx(0.75)
    # S_grid = 100 x 12/11 x 22/21 x 71/88 = 100 x 71/77 = 92.21 %; u2: 100 x 3/4 x 11/7 x 149/99
    # = 100 x 149/84 = 177.38 %
    assert m["ehosep.S_grid.u1"] == pytest.approx(7100 / 77)
    assert m["ehosep.S_grid.u2"] == pytest.approx(14900 / 84)
    # iSPD: grid-mean ideal and 1 + energy factor: u1 100 x 12/11 x 22/21 x (1 + 71/88)
    # = 100 x 8/7 x 159/88 = 100 x 159/77 = 206.49 %; u2 100 x 3/4 x 11/7 x (1 + 149/99)
    # = 100 x 33/28 x 248/99 = 100 x 62/21 = 295.24 %
    assert m["ehosep.S_ispd.u1"] == pytest.approx(15900 / 77)
    assert m["ehosep.S_ispd.u2"] == pytest.approx(6200 / 21)


def test_registered_as_run_metric(tmp_path):
    files = write_run(tmp_path)
    assert RUN_METRICS["ehosep"](*files) == ehosep_metrics(*files)


def test_zero_limit_gives_no_satisfaction(tmp_path):
    w = copy.deepcopy(WORKLOAD)
    w["ehosep"]["limits"]["u2"] = 0
    m = ehosep_metrics(*write_run(tmp_path, workload=w))
    assert m["ehosep.limit_w.u2"] == 0.0
    assert "ehosep.S.u2" not in m and "ehosep.S.u1" in m


def test_owner_without_tasks_gets_no_satisfaction(tmp_path):
    w = copy.deepcopy(WORKLOAD)
    w["jobs"] = [j for j in w["jobs"] if j["user"] != "u2"]
    rows = [r for r in ROWS if not r[0].startswith("u2")]
    m = ehosep_metrics(*write_run(tmp_path, rows=rows, workload=w))
    assert "ehosep.S.u2" not in m and m["ehosep.energy.u2"] == 0.0
    # host 1 idle all 22 s at 20 W
    assert m["ehosep.share_energy.u2"] == pytest.approx(440.0)


def test_errors_name_the_file_and_what_is_wrong(tmp_path):
    w = copy.deepcopy(WORKLOAD)
    del w["ehosep"]["limits"]["u2"]
    with pytest.raises(WorkloadError, match=r"w\.json: no ehosep limit recorded for user 'u2'"):
        ehosep_metrics(*write_run(tmp_path, workload=w))
    no_energy = [r[:5] + ("-1",) for r in ROWS]
    with pytest.raises(OutputsError, match=r"out_jobs\.csv: job w0!u1-0: consumed_energy is '-1'"):
        ehosep_metrics(*write_run(tmp_path, rows=no_energy))
    overlap = [r if r[0] != "u3-0" else ("u3-0", "COMPLETED_SUCCESSFULLY", 3, 14, "2", "440") for r in ROWS]
    with pytest.raises(OutputsError, match=r"host 'c_free' \(id 2\) runs jobs w0!u1-1 and w0!u3-0 at once"):
        ehosep_metrics(*write_run(tmp_path, rows=overlap))
    bare = PLATFORM.replace('<prop id="wattage_per_state" value="10:40"/>', "")
    with pytest.raises(PlatformError, match=r"p\.xml: host 'c_free' has no wattage_per_state"):
        ehosep_metrics(*write_run(tmp_path, platform=bare))


def test_recorded_limits():
    assert recorded_limits([{"ehosep": {"limits": {"a": 80}}}, {"jobs": []}, {"ehosep": {"limits": {"b": 1.5}}}]) \
        == {"a": 80.0, "b": 1.5}
    with pytest.raises(WorkloadError, match=r"<workload w1>: ehosep limit of user 'a' is 90 here but 80.0 in "
                                             r"<workload w0>"):
        recorded_limits([{"ehosep": {"limits": {"a": 80}}}, {"ehosep": {"limits": {"a": 90}}}])
    with pytest.raises(WorkloadError, match=r"<workload w0>: ehosep limit of user 'a' must be a number of percent"):
        recorded_limits([{"ehosep": {"limits": {"a": "lots"}}}])
    with pytest.raises(WorkloadError, match=r"<workload w0>: entry 'ehosep' must be an object"):
        recorded_limits([{"ehosep": [80]}])


# 003 Table 1 (GFlops, W): user1 2,999.52 / 5,048; user2 1,778.28 / 2,096; user3 298.86 / 1,512;
# user4 338 / 536; grid 5,414.66 / 9,192. CSP_i = (W_i / 9,192) x (5,414.66 / GF_i), or the grid's
# GFlops/W (0.589062) over the share's (Table 1's last column):
#   user1 0.549173 x 1.805175 = 0.99135 (0.589062 / 0.594200)
#   user2 0.228024 x 3.044886 = 0.69431 (0.589062 / 0.848416)
#   user3 0.164491 x 18.11771 = 2.98020 (0.589062 / 0.197659)
#   user4 0.058312 x 16.01970 = 0.93413 (0.589062 / 0.630597)
TABLE_1 = {"user1": (2999.52, 5048.0), "user2": (1778.28, 2096.0), "user3": (298.86, 1512.0), "user4": (338.0, 536.0)}


def test_csp_of_the_ehosep_grid(tmp_path):
    (tmp_path / "p.xml").write_text(generate("ehosep", {}, 0).platform_xml)
    got = csp(read_grid(tmp_path / "p.xml"))
    for u, (gf, w) in TABLE_1.items():
        assert got[u] == pytest.approx(w / 9192.0 * 5414.66 / gf, rel=1e-12)
    for u, hand in zip(TABLE_1, (0.99135, 0.69431, 2.98020, 0.93413)):
        assert got[u] == pytest.approx(hand, abs=1e-5), u
    # the least efficient share (user3, 0.1977 GFlops/W) has the largest CSP, the most efficient
    # (user2, 0.8484) the smallest
    assert max(got, key=got.get) == "user3" and min(got, key=got.get) == "user2"


def test_engine_run_with_preemptions(tmp_path):
    # The EHOSEP grid under HOSEP with user1 six minutes late (all other tasks at 0 s): HOSEP
    # preempts to give user1 its share back, so tasks run as several Batsim jobs.
    sc = generate("ehosep", {"tasks_per_user": 20, "u1_limit": 80.0}, 0)
    w = copy.deepcopy(sc.workloads[0])
    for j in w["jobs"]:
        j["subtime"] = 360.0 if j["user"] == "user1" else 0.0
    w["jobs"].sort(key=lambda j: (j["subtime"], j["id"]))
    (tmp_path / "p.xml").write_text(sc.platform_xml)
    (tmp_path / "w.json").write_text(json.dumps(w))
    simulate(read_platform(tmp_path / "p.xml"), [tmp_path / "w.json"], get_policy("hosep"), energy=True,
             forward_profiles=True, dynamic_jobs=True, export_prefix=tmp_path / "out_")
    m = ehosep_metrics(tmp_path / "out_jobs.csv", [tmp_path / "w.json"], tmp_path / "p.xml")
    with open(tmp_path / "out_jobs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    with open(tmp_path / "out_schedule.csv", newline="") as f:
        schedule = next(csv.DictReader(f))
    assert any(r["final_state"] == "COMPLETED_KILLED" for r in rows)
    # every host's energy from its jobs plus idle time = the engine's own platform total over the run
    assert m["ehosep.system_energy"] == pytest.approx(float(schedule["consumed_joules"]), rel=1e-9)
    assert m["ehosep.total_time"] == pytest.approx(float(schedule["makespan"]), abs=1e-5)
    users = ("user1", "user2", "user3", "user4")
    # every host is owned: the shares' energies add up to the grid's
    assert math.fsum(m[f"ehosep.share_energy.{u}"] for u in users) == pytest.approx(m["ehosep.system_energy"])
    for u in users:
        mine = [float(r["consumed_energy"]) for r in rows if r["job_id"].startswith(u + "-")]
        assert m[f"ehosep.energy.{u}"] == pytest.approx(math.fsum(mine), rel=1e-12)
        # a host never draws more than at full load: the share factor is at least 1
        assert m[f"ehosep.share_factor.{u}"] >= 1.0
        assert m[f"ehosep.S.{u}"] == pytest.approx(100 * m[f"ehosep.time_factor.{u}"] * m[f"ehosep.share_factor.{u}"]
                                                   * m[f"ehosep.energy_factor.{u}"])
    # limits read from the workload: 80 % of user1's 5,048 W, 150 % of user4's 536 W
    assert m["ehosep.limit_w.user1"] == pytest.approx(4038.4)
    assert m["ehosep.limit_w.user4"] == pytest.approx(804.0)
    assert all(math.isfinite(v) for v in m.values())


def test_campaign_run_computes_the_metric(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text(textwrap.dedent("""
        seeds = [1]
        energy = true
        metrics = ["ehosep"]
        [[policy]]
        name = "fcfs"
        [[scenario]]
        name = "ehosep"
        generator = "ehosep"
        params = { tasks_per_user = 8, u1_limit = 120.0 }
        """))
    (run,) = load_campaign(f).runs()
    rec = execute_run(run)
    assert rec["status"] == "done", rec["error"]
    # the same run alone, from files written by hand
    sc = generate("ehosep", {"tasks_per_user": 8, "u1_limit": 120.0}, 1)
    (tmp_path / "p.xml").write_text(sc.platform_xml)
    (tmp_path / "w.json").write_text(json.dumps(sc.workloads[0]))
    simulate(tmp_path / "p.xml", [tmp_path / "w.json"], get_policy("fcfs"), energy=True,
             export_prefix=tmp_path / "alone" / "out_")
    alone = ehosep_metrics(tmp_path / "alone" / "out_jobs.csv", [tmp_path / "w.json"], tmp_path / "p.xml")
    assert {k: v for k, v in rec["summary"].items() if k.startswith("ehosep.")} == alone
    assert alone["ehosep.limit_w.user1"] == pytest.approx(1.2 * 5048.0)
