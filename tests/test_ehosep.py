"""EHOSEP (paper 003) decisions on small grids, every time and watt worked out by hand.

Hosts have one core, ``wattage_per_state="Idle:AllCores"``: a host computing a job draws AllCores,
an idle host or one running a ``delay`` job draws Idle (SimGrid's host-energy plugin). A task of
``W`` Gflop on a host of ``S`` Gf runs ``W / S`` s. Decision rounds run at 60, 120... s.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from schedulers.core.model import Host, Platform
from schedulers.core.policy import PolicyOptionError
from schedulers.core.power import PowerError, draw, full_load_watts
from schedulers.ehosep import EHOSEP
from schedulers.engine import simulate
from schedulers.registry import get_policy
from recorded import assert_energy_rows

G = 1e9


def platform(tmp: Path, hosts: list[tuple[str, float, str | None, float, float]], *, watts: bool = True) -> Path:
    """hosts: (name, Gf, owner, Idle W, AllCores W)."""
    lines = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">', '<zone id="z" routing="Full">', '  <host id="master_host" speed="100Mf"/>']
    for name, gf, owner, idle, full in hosts:
        props = f'<prop id="owner" value="{owner}"/>' if owner else ""
        if watts:
            props += f'<prop id="wattage_per_state" value="{idle}:{full}"/><prop id="wattage_off" value="1"/>'
        lines.append(f'  <host id="{name}" speed="{gf}Gf">{props}</host>')
    lines += ["</zone>", "</platform>"]
    p = tmp / "platform.xml"
    p.write_text("\n".join(lines) + "\n")
    return p


def workload(tasks: list[tuple[str, str, float, float]]) -> dict:
    """tasks: (job id, user, subtime s, work Gflop; a negative work is a delay job of -work s)."""
    profiles = {j: ({"type": "parallel_homogeneous", "cpu": w * G, "com": 0} if w >= 0 else
                    {"type": "delay", "delay": -w}) for j, _, _, w in tasks}
    return {"nb_res": 64, "jobs": [{"id": j, "user": u, "subtime": s, "res": 1, "walltime": -1, "profile": j}
                     for j, u, s, _ in tasks], "profiles": profiles}


def run(tmp: Path, plat: Path, wl: dict, policy, *, energy: bool = True) -> dict[str, tuple]:
    """job id -> (final state, start, finish, host ids) of out_jobs.csv."""
    prefix = tmp / "out_"
    simulate(plat, [wl], policy, export_prefix=prefix, dynamic_jobs=True, forward_profiles=True, energy=energy)
    return {r["job_id"]: (r["final_state"][10:] or r["final_state"],
                          float(r["starting_time"]) if r["starting_time"] else None,
                          float(r["finish_time"]) if r["finish_time"] else None,
                          r["allocated_resources"]) for r in csv.DictReader((tmp / "out_jobs.csv").open())}


# ------------------------------------------------------------------------------ quantities
def _hosts() -> list[Host]:
    def h(i, name, gf, owner, idle, full):
        return Host(i, name, speeds=[gf * G], cores=1,
                    properties={"owner": owner, "wattage_per_state": f"{idle}:{full}"} if owner else
                    {"wattage_per_state": f"{idle}:{full}"})
    return [h(0, "a0", 1, "A", 10, 100), h(1, "a1", 1, "A", 10, 100), h(2, "b0", 2, "B", 10, 100),
            h(3, "c0", 4, "C", 10, 350), h(4, "n0", 1, None, 5, 50)]


def test_csp_limits_and_draw_by_hand():
    pol = EHOSEP({"limits": {"A": 80, "C": 150}})
    pol.platform = Platform(hosts=_hosts())
    pol.on_simulation_begins(pol.platform)
    # full-load watts: ConMaxPorcao A = 200, B = 100, C = 350; system 100+100+100+350+50 = 700 W;
    # power: A 2 Gf, B 2 Gf, C 4 Gf, system 1+1+2+4+1 = 9 Gf
    assert pol.csp("A") == pytest.approx((200 / 700) * (9 / 2))     # 1.2857
    assert pol.csp("B") == pytest.approx((100 / 700) * (9 / 2))     # 0.6429
    assert pol.csp("C") == pytest.approx((350 / 700) * (9 / 4))     # 1.125
    assert pol.limit("A") == pytest.approx(160.0)                   # 80 % of 200 W
    assert pol.limit("B") == pytest.approx(100.0)                   # default 100 %
    assert pol.limit("C") == pytest.approx(525.0)                   # 150 % of 350 W
    assert pol.limit("nobody") == math.inf and pol.csp("nobody") == math.inf
    assert pol.limit_percent("A") == 80.0 and pol.limit_percent("nobody") == math.inf


def test_simgrid_power_model_by_hand():
    h = Host(0, "m", speeds=[1e9, 5e8], cores=4, properties={"wattage_per_state": "100:120:200, 90:95:150"})
    assert draw(h, 0) == 100.0                        # Idle
    assert draw(h, 1) == pytest.approx(120 + 80 / 4)  # Epsilon + (AllCores - Epsilon) x 1/4
    assert draw(h, 8) == 200.0                        # capped at AllCores
    assert draw(h, 2, pstate=1) == pytest.approx(95 + 55 / 2)
    assert full_load_watts(h) == 200.0                # the faster pstate 0
    with pytest.raises(PowerError, match="host 'x' .*wattage_per_state"):
        full_load_watts(Host(1, "x", speeds=[1e9], cores=1))
    with pytest.raises(PowerError, match="entry 0 is 'nan:1'"):
        draw(Host(2, "y", speeds=[1e9], cores=1, properties={"wattage_per_state": "nan:1"}), 1)


@pytest.mark.parametrize("opts, msg", [({"limits": [1]}, "must map user names"),
                                       ({"limits": {"A": -1}}, "user 'A' has limit -1"),
                                       ({"limits": {"A": True}}, "user 'A' has limit True"),
                                       ({"limit": {}}, "has no option 'limit'")])
def test_bad_limits(opts, msg):
    with pytest.raises(PolicyOptionError, match=msg):
        get_policy("ehosep", opts)


def test_platform_without_watts_is_one_clear_error(tmp_path):
    plat = platform(tmp_path, [("a0", 1, "A", 10, 100)], watts=False)
    with pytest.raises(PowerError, match="host 'a0' .* no 'wattage_per_state'"):
        run(tmp_path, plat, workload([("t", "A", 0, 1)]), get_policy("ehosep"), energy=False)


# ------------------------------------------------------------------------------ idle hosts (lines 3-5)
def test_limit_keeps_an_idle_host_idle(tmp_path):
    # A owns a0, a1 (100 W at full load each): ConMaxPorcao 200 W. Limit 50 % = 100 W: its first
    # task takes a0 (every host would spend 100 W x 10 s: tie, lowest id) and draws 100 W; the
    # second would add 100 W > 100 W: it waits although a1 and b0 are idle (condition ii holds,
    # so no preemption either), and runs on a0 once the first ends at 10 s.
    plat = platform(tmp_path, [("a0", 1, "A", 10, 100), ("a1", 1, "A", 10, 100), ("b0", 1, "B", 10, 100)])
    wl = workload([("t1", "A", 0, 10), ("t2", "A", 0, 10)])
    out = run(tmp_path, plat, wl, get_policy("ehosep", {"limits": {"A": 50}}))
    assert out["t1"] == ("SUCCESSFULLY", 0.0, 10.0, "0")
    assert out["t2"] == ("SUCCESSFULLY", 10.0, 20.0, "0")
    out = run(tmp_path, plat, wl, get_policy("ehosep", {"limits": {"A": 100}}))   # 200 W: both fit
    assert out["t1"][1:] == (0.0, 10.0, "0") and out["t2"][1:] == (0.0, 10.0, "1")


def test_delay_job_draws_idle_power(tmp_path):
    # Limit 60 % of 200 W = 120 W. The delay job (the smallest task: no flops) draws Idle, 10 W,
    # on a0; the computing task adds 100 W on a1: 110 W <= 120 W, it starts at once. Were a delay
    # job counted at full load (100 W), 200 W > 120 W would keep it waiting until 50 s.
    plat = platform(tmp_path, [("a0", 1, "A", 10, 100), ("a1", 1, "A", 10, 100)])
    out = run(tmp_path, plat, workload([("d", "A", 0, -50), ("c", "A", 0, 20)]),
              get_policy("ehosep", {"limits": {"A": 60}}))
    assert out["d"] == ("SUCCESSFULLY", 0.0, 50.0, "0")
    assert out["c"] == ("SUCCESSFULLY", 0.0, 20.0, "1")


def test_least_energy_host_not_the_fastest(tmp_path):
    # 10 Gflop: a0 (2 Gf, 300 W) spends 300 x 5 = 1500 J, a1 (1 Gf, 100 W) 100 x 10 = 1000 J:
    # EHOSEP takes a1 (line 5) and ends at 10 s; HOSEP the most powerful, a0, and ends at 5 s.
    plat = platform(tmp_path, [("a0", 2, "A", 10, 300), ("a1", 1, "A", 10, 100)])
    wl = workload([("t", "A", 0, 10)])
    assert run(tmp_path, plat, wl, get_policy("ehosep"))["t"] == ("SUCCESSFULLY", 0.0, 10.0, "1")
    assert run(tmp_path, plat, wl, get_policy("hosep"))["t"] == ("SUCCESSFULLY", 0.0, 5.0, "0")


def test_user_who_owns_nothing_is_not_limited(tmp_path):
    # n owns nothing: no base for a percentage, no limit; its two tasks take both idle hosts.
    plat = platform(tmp_path, [("a0", 1, "A", 10, 100), ("a1", 1, "A", 10, 100)])
    out = run(tmp_path, plat, workload([("n1", "n", 0, 10), ("n2", "n", 0, 10)]), get_policy("ehosep"))
    assert out["n1"][1:3] == (0.0, 10.0) and out["n2"][1:3] == (0.0, 10.0)


def test_task_above_its_users_limit_alone_is_rejected_and_the_run_ends(tmp_path):
    # A owns a0, a1 (100 W at full load each): limit 75 % of 200 W = 150 W. A task of 2 hosts
    # computing draws at least 2 x 100 W = 200 W (every host: 100 W computing) > 150 W even
    # alone: line 4 never admits it; it is rejected at its submission (before, it waited
    # forever and the run ended in a deadlock). A 2-host delay task draws 2 x 10 W (Idle) and is
    # the smallest task (no flops): it takes both hosts at 0 and ends at 5 s; the 1-host task
    # (100 W) then runs on a0 (lowest id) from 5 to 15 s.
    plat = platform(tmp_path, [("a0", 1, "A", 10, 100), ("a1", 1, "A", 10, 100)])
    wl = workload([("big", "A", 0, 10), ("small", "A", 0, 10), ("dly", "A", 0, -5)])
    wl["jobs"][0]["res"] = wl["jobs"][2]["res"] = 2
    out = run(tmp_path, plat, wl, get_policy("ehosep", {"limits": {"A": 75}}))
    assert out["big"] == ("REJECTED", None, None, "")
    assert out["dly"] == ("SUCCESSFULLY", 0.0, 5.0, "0-1")
    assert out["small"] == ("SUCCESSFULLY", 5.0, 15.0, "0")
    # at 100 % (200 W) the 2-host task fits alone: it runs
    out = run(tmp_path, plat, wl, get_policy("ehosep"))
    assert out["big"][0] == "SUCCESSFULLY"


@pytest.mark.parametrize("name", ["osep", "hosep", "ehosep"])
def test_job_larger_than_the_platform_is_rejected_and_the_run_ends(tmp_path, name):
    # Batsim accepts a job of more hosts than the platform has and leaves it to the policy: the
    # owner-share policies reject it, and the run still ends (NOTIFY registration_finished once
    # every task is over: the rejected jobs are no tasks; counted as tasks before, the count never
    # matched and the run deadlocked).
    plat = platform(tmp_path, [("a0", 1, "A", 10, 100), ("a1", 1, "A", 10, 100)])
    wl = workload([("t", "A", 0, 10), ("huge", "A", 0, 10), ("huge2", "A", 5, 10)])
    wl["jobs"][1]["res"] = wl["jobs"][2]["res"] = 3
    out = run(tmp_path, plat, wl, get_policy(name))
    assert out["huge"][0] == out["huge2"][0] == "REJECTED"
    assert out["t"] == ("SUCCESSFULLY", 0.0, 10.0, "0")


# ------------------------------------------------------------------------------ preemption (lines 7-11)
def _three_users(tmp: Path, extra: list[tuple] = ()) -> Path:
    # A owns a0 (1 Gf) and a1 (1.5 Gf), 100 W each at full load (ConMaxPorcao 200 W); B owns b0
    # (2 Gf, 500 W); C owns nothing.
    return platform(tmp, [("a0", 1, "A", 10, 100), ("a1", 1.5, "A", 10, 100), ("b0", 2, "B", 10, 500), *extra])


def test_line9_limit_comparison_allows_a_preemption_into_deficit(tmp_path):
    # t = 0: B (PowerDiff -1) first: b1's least-energy host is a1 (100 W x 1000/1.5 s), b2's a0
    # (100 W x 1000 s < 500 W x 500 s on b0); C's c1 gets b0. B then holds 2.5 Gf of its 2 Gf:
    # PowerDiff +0.25. A's task x (10 Gflop) arrives at 10 s; round at 60 s: A is enabled (a host
    # within its limit exists; C's task passes line 9). Line 7: C's b0 draws 500 W > A's limit,
    # so the victim is B; line 8: b2 on a0 wastes 60 s x 1 Gf < b1's 60 s x 1.5 Gf. Line 9:
    # PR_Preemp_B(a0) = (1.5 - 2) / 2 < 0, so only Limite_A < Limite_B allows it.
    plat = _three_users(tmp_path)
    wl = workload([("b1", "B", 0, 1000), ("b2", "B", 0, 1000), ("c1", "C", 0, 1000), ("x", "A", 10, 10)])
    out = run(tmp_path, plat, wl, get_policy("ehosep", {"limits": {"A": 80, "B": 100}}))
    assert out["b2"] == ("KILLED", 0.0, 60.0, "0")
    assert out["x"] == ("SUCCESSFULLY", 60.0, 70.0, "0")
    assert out["b2#1"] == ("SUCCESSFULLY", 70.0, 1070.0, "0")     # back on a0 when x ends
    assert out["b1"][3] == "1" and out["b1"][2] == pytest.approx(1000 / 1.5, abs=1e-6)
    assert out["c1"][1:4] == (0.0, 500.0, "2")
    # equal limits: line 9 refuses; x waits for a host within its 200 W: b0 (500 W) frees at 500 s
    # and stays idle, a1 frees at 666.67 s: x runs 10 / 1.5 s there.
    out = run(tmp_path, plat, wl, get_policy("ehosep", {"limits": {"A": 100, "B": 100}}))
    assert "b2#1" not in out and out["b2"] == ("SUCCESSFULLY", 0.0, 1000.0, "0")
    assert out["x"][0] == "SUCCESSFULLY" and out["x"][3] == "1"
    assert out["x"][1:3] == pytest.approx((1000 / 1.5, 1000 / 1.5 + 10 / 1.5))


def test_no_preemption_on_a_machine_over_the_limit(tmp_path):
    # As above plus D owning d0 (1 Gf, 50 W), whose task d (100 Gflop, t = 0) takes d0 (5 kJ,
    # the least energy). B and C arrive at 1 s. A's limit 40 % of 200 W = 80 W: d0 (50 W) is a
    # machine within it, so condition ii does not hold, and C's task passes line 9, so neither
    # does iii: A is enabled. But every host a preemption could free draws 100 or 500 W > 80 W
    # (line 7 finds nothing): no preemption; x takes d0 when d ends at 100 s.
    plat = _three_users(tmp_path, [("d0", 1, "D", 10, 50)])
    wl = workload([("d", "D", 0, 100), ("b1", "B", 1, 1000), ("b2", "B", 1, 1000), ("c1", "C", 1, 1000),
                   ("x", "A", 10, 10)])
    out = run(tmp_path, plat, wl, get_policy("ehosep", {"limits": {"A": 40, "B": 100}}))
    assert out["d"] == ("SUCCESSFULLY", 0.0, 100.0, "3")
    assert not any(state == "KILLED" for state, *_ in out.values())
    assert out["x"] == ("SUCCESSFULLY", 100.0, 110.0, "3")


def test_victim_by_csp_times_consumption_not_by_powerdiff(tmp_path):
    # A owns a0, a1 (1 Gf, 100 W); B owns b0 (2 Gf, 100 W); C owns c0 (4 Gf, 350 W). System:
    # 8 Gf, 650 W. t = 0, limits B 300 %, C 300 %: b1 -> b0 (100 W x 500 s, least energy), c1 ->
    # c0 (350 x 250 = 87.5 kJ < 100 kJ on a0/a1), b2 -> a0 (tie with a1, lowest id), c2 -> a1.
    # PowerDiff B = (3 - 2) / 2 = 0.5, C = (5 - 4) / 4 = 0.25.
    # CSP_B = (100/650)(8/2) = 0.615, Consumo_B = 200 W: 123; CSP_C = (350/650)(8/4) = 1.077,
    # Consumo_C = 450 W: 485. A (limit 200 W) arrives at 10 s; at 60 s EHOSEP takes from C (line
    # 7), its task within A's limit: c2 on a1 (c0 draws 350 W > 200 W); PR_Preemp_C(a1) = 0 >= 0.
    # HOSEP takes from B, the larger PowerDiff, on its least powerful host a0.
    plat = platform(tmp_path, [("a0", 1, "A", 10, 100), ("a1", 1, "A", 10, 100), ("b0", 2, "B", 10, 100),
                               ("c0", 4, "C", 10, 350)])
    wl = workload([("b1", "B", 0, 1000), ("b2", "B", 0, 1000), ("c1", "C", 0, 1000), ("c2", "C", 0, 1000),
                   ("x", "A", 10, 10)])
    out = run(tmp_path, plat, wl, get_policy("ehosep", {"limits": {"B": 300, "C": 300}}))
    assert out["b1"][3] == "2" and out["c1"][3] == "3" and out["b2"][3] == "0"
    assert out["c2"] == ("KILLED", 0.0, 60.0, "1")
    assert out["x"] == ("SUCCESSFULLY", 60.0, 70.0, "1")
    hosep = run(tmp_path, plat, wl, get_policy("hosep"))
    assert [j for j, r in hosep.items() if r[0] == "KILLED"] in (["b1"], ["b2"])


# ------------------------------------------------------------------------------ real Batsim
RECORDED = Path(__file__).parent / "fixtures" / "batsim_ehosep"


@pytest.mark.parametrize("case, options", [
    ("csp", {"limits": {"B": 300, "C": 300}}),
    ("line9", {"limits": {"A": 80}, "checkpoint": True, "block": 20})])
def test_engine_equals_recorded_real_batsim(tmp_path, case, options):
    # Recorded from real Batsim 4.2.1 (fixtures/batsim_ehosep/README.md): the same EHOSEP decisions
    # (a kill, a checkpointed restart, limits refusing hosts) give the same rows; the energies and
    # the epower of job starts on these Full-routing platforms too (over the 1e-10-s intervals
    # of the loopback both carry a rounding noise of a few ulps of the energy over the interval).
    simulate(RECORDED / f"{case}_platform.xml", [RECORDED / f"{case}_workload.json"], get_policy("ehosep", options),
             export_prefix=tmp_path / "out_", dynamic_jobs=True, forward_profiles=True, energy=True)

    def load(path):
        return list(csv.DictReader(open(path)))
    want, got = load(RECORDED / f"{case}_jobs.csv"), load(tmp_path / "out_jobs.csv")
    assert [r["job_id"] for r in got] == [r["job_id"] for r in want]
    assert any(r["final_state"] == "COMPLETED_KILLED" for r in want)
    for w, g in zip(want, got):
        for col in w:
            if col in ("starting_time", "finish_time", "execution_time", "consumed_energy", "waiting_time",
                       "turnaround_time", "stretch"):
                assert float(g[col]) == pytest.approx(float(w[col]), abs=1e-4), (w["job_id"], col)
            else:
                assert g[col] == w[col], (w["job_id"], col)
    want, got = load(RECORDED / f"{case}_consumed_energy.csv"), load(tmp_path / "out_consumed_energy.csv")
    assert any(w["epower"] != "NA" and w["time"] == p["time"] for p, w in zip(want, want[1:]))
    assert_energy_rows(want, got)


# ------------------------------------------------------------------------------ kept Consumo
def _two_pstate_policy():
    """One host ``a0`` owned by A, pstate 0 at 1 Gf drawing ``10:100`` W, pstate 1 at 0.5 Gf
    drawing ``10:60`` W; A's one-host task of 5 Gflop starts on it at 0 s (limit 100 % of 100 W)."""
    from procset import ProcSet

    from schedulers.core.events import JobSubmitted, SimulationBegins
    from schedulers.core.model import Job

    host = Host(0, "a0", speeds=[1 * G, 0.5 * G], cores=1,
                properties={"owner": "A", "wattage_per_state": "10:100, 10:60"})
    pol = EHOSEP()
    pol.decide(0.0, [SimulationBegins(0.0, nb_resources=1, nb_compute_resources=1, compute_resources=[host])])
    prof = {"type": "parallel_homogeneous", "cpu": 5 * G, "com": 0}
    job = Job.from_json("w0!t", {"res": 1, "subtime": 0, "profile": "t", "user": "A"}, prof)
    decisions = pol.decide(0.0, [JobSubmitted(0.0, job=job)])
    assert [str(getattr(d, "alloc", "")) for d in decisions if type(d).__name__ == "ExecuteJob"] == ["0"]
    return pol, job, ProcSet


def test_consumption_follows_a_pstate_change_between_two_passes():
    from schedulers.core.events import ResourceStateChanged

    pol, _, ProcSet = _two_pstate_policy()
    # pass 1: a0 computes at pstate 0, one core of one busy: AllCores = 100 W
    assert pol.consumption("A") == 100.0
    assert pol._budget("A") == pytest.approx(0.0, abs=1e-6)     # limit 100 W - 100 W (+ tolerance)
    # pass 2: a0 reached pstate 1 (RESOURCE_STATE_CHANGED); nothing started or ended, yet it now
    # draws that pstate's AllCores, 60 W, and A has 40 W left
    pol.decide(1.0, [ResourceStateChanged(1.0, resources=ProcSet(0), state="1")])
    assert pol.consumption("A") == 60.0
    assert pol._budget("A") == pytest.approx(40.0, abs=1e-6)


def test_consumption_follows_the_end_of_a_task():
    from schedulers.core.events import JobCompleted

    pol, job, _ = _two_pstate_policy()
    assert pol.consumption("A") == 100.0
    pol.decide(5.0, [JobCompleted(5.0, job_id=job.id, alloc=job.allocation)])   # 5 Gflop at 1 Gf
    assert pol.consumption("A") == 0.0          # nothing of A runs: a0 is nobody's consumption
    assert pol._budget("A") == pytest.approx(100.0, abs=1e-6)
