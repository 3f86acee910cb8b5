"""BUC's scenario generator (``schedulers/inputs/buc_scenario.py``) and its metrics from output
files (``schedulers/core/buc_metrics.py``), with numbers worked out by hand."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from schedulers.buc import DOWN, UP
from schedulers.core.buc_metrics import (buc_metrics, choose_real_users, offered_load, position_gains, read_jobs,
                                         score_rule, workload_users)
from schedulers.inputs.buc_scenario import TRACES, trace_path
from schedulers.inputs.generators import GeneratorError, generate

HPC2N = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "traces" / "pwa-swf" / TRACES["hpc2n"][0]
needs_trace = pytest.mark.skipif(not HPC2N.is_file(), reason=f"{HPC2N} absent (the read-only ../shared data)")


# ------------------------------------------------------------------------------ generator
def test_missing_trace_is_one_clear_line(tmp_path):
    with pytest.raises(GeneratorError) as err:
        generate("buc", {"trace_file": str(tmp_path / "nope.swf")}, 0)
    msg = str(err.value)
    assert "nope.swf not found" in msg and "\n" not in msg
    with pytest.raises(GeneratorError, match="gamer must be"):
        generate("buc", {"trace_file": str(tmp_path / "nope.swf"), "gamer": "x"}, 0)


def test_small_swf_file(tmp_path):
    # 3 jobs of user 5 on 120 procs (2 per node = 60 nodes): res scaled to 39 hosts
    swf = tmp_path / "t.swf"
    swf.write_text("; MaxProcs: 120\n"
                   "1 0 0 100 120 -1 -1 120 200 -1 1 5 -1 -1 -1 -1 -1 -1\n"
                   "2 10 0 50 2 -1 -1 2 100 -1 1 5 -1 -1 -1 -1 -1 -1\n"
                   "3 20 0 10 40 -1 -1 40 100 -1 1 7 -1 -1 -1 -1 -1 -1\n")
    sc = generate("buc", {"trace_file": str(swf), "injected_jobs": 2, "gamer": "flood", "gamer_long": 1,
                          "gamer_short": 3, "jobs_per_year": 0}, 4)
    wl = sc.workloads[0]
    real = {j["id"]: j for j in wl["jobs"] if j["user"] in ("u5", "u7")}
    # nodes: ceil(120/2) = 60 -> ceil(60*39/60) = 39; ceil(2/2) = 1 -> 1; ceil(40/2) = 20 -> 13
    assert {k: (j["res"], j["walltime"], j["user"]) for k, j in real.items()} == \
        {"1": (39, 200.0, "u5"), "2": (1, 100.0, "u5"), "3": (13, 100.0, "u7")}
    by_user: dict[str, list] = {}
    for j in wl["jobs"]:
        by_user.setdefault(j["user"], []).append(j)
    for user, rt in (("inj0", 1.0), ("inj50", 1800.0), ("inj100", 3599.0)):
        assert len(by_user[user]) == 2
        assert all(j["walltime"] == 3600.0 and wl["profiles"][j["profile"]]["delay"] == rt
                   and 0 <= j["subtime"] <= 20 and j["res"] in (39, 1, 13) for j in by_user[user])
    assert sorted(j["walltime"] for j in by_user["gamer"]) == [60.0] * 3 + [36000.0]
    assert wl["nb_res"] == 39 and sc.platform.endswith("g5k_lille_2020.xml")
    # seeded: same seed same jobs; another seed moves the injected jobs only
    same = {"trace_file": str(swf), "injected_jobs": 2, "jobs_per_year": 0}
    assert generate("buc", same, 4).workloads == generate("buc", same, 4).workloads
    other = generate("buc", same, 5).workloads[0]["jobs"]
    assert [j for j in other if j["user"] in ("u5", "u7")] == list(real.values())
    assert [j["subtime"] for j in other if j["user"] == "inj0"] != [j["subtime"] for j in by_user["inj0"]]


def test_paper_density_stretches_the_submissions(tmp_path):
    # 3 jobs at 0, 10, 20 s; at the paper's 2,785 jobs a year they span 3/2785 year
    # = 3/2785 x 31,536,000 s = 33,970.56 s: factor 1,698.53, times 0, 16,985.28, 33,970.56 s
    swf = tmp_path / "t.swf"
    swf.write_text("; MaxProcs: 120\n"
                   "1 0 0 100 120 -1 -1 120 200 -1 1 5 -1 -1 -1 -1 -1 -1\n"
                   "2 10 0 50 2 -1 -1 2 100 -1 1 5 -1 -1 -1 -1 -1 -1\n"
                   "3 20 0 10 40 -1 -1 40 100 -1 1 7 -1 -1 -1 -1 -1 -1\n")
    wl = generate("buc", {"trace_file": str(swf), "injected_jobs": 1}, 0).workloads[0]
    real = {j["id"]: j["subtime"] for j in wl["jobs"] if j["user"] in ("u5", "u7")}
    assert real == {"1": 0.0, "2": pytest.approx(16985.278, abs=1e-3), "3": pytest.approx(33970.557, abs=1e-3)}
    assert all(0 <= j["subtime"] <= 33970.557 for j in wl["jobs"])
    # twice the rate: half the span; 0: the trace's times
    wl2 = generate("buc", {"trace_file": str(swf), "injected_jobs": 1, "jobs_per_year": 5570}, 0).workloads[0]
    assert max(j["subtime"] for j in wl2["jobs"] if j["user"] == "u7") == pytest.approx(33970.557 / 2, abs=1e-3)
    wl0 = generate("buc", {"trace_file": str(swf), "injected_jobs": 1, "jobs_per_year": 0}, 0).workloads[0]
    assert max(j["subtime"] for j in wl0["jobs"] if j["user"] == "u7") == 20.0
    with pytest.raises(GeneratorError, match="jobs_per_year must be >= 0"):
        generate("buc", {"trace_file": str(swf), "jobs_per_year": -1}, 0)
    # offered load of wl0 without the injected jobs: res x min(run, walltime) = 39 x 100 + 1 x 50
    # + 13 x 10 = 4,080 host.s over 39 hosts x 20 s = 780 host.s: 523 %
    wl0["jobs"] = [j for j in wl0["jobs"] if j["user"] in ("u5", "u7")]
    assert offered_load([wl0], workload_users([wl0])[1]) == pytest.approx(100 * 4080 / 780)


@needs_trace
def test_hpc2n_scenario():
    wl = generate("buc", {}, 0).workloads[0]
    users = {j["user"] for j in wl["jobs"]}
    assert len(wl["jobs"]) == 3145 + 300          # 3,171 records, 25 without run time (+1 header line)
    assert {"inj0", "inj50", "inj100", "u8", "u1"} <= users and len(users) == 17 + 3
    assert max(j["res"] for j in wl["jobs"]) <= 39
    assert trace_path("hpc2n") == HPC2N.resolve() or trace_path("hpc2n").samefile(HPC2N)


# ------------------------------------------------------------------------------ metrics
def _row(jid, sub, wt, start, run, state="COMPLETED_SUCCESSFULLY"):
    return {"id": f"w0!{jid}", "sub": sub, "wt": wt, "start": start, "run": run, "finish": start + run,
            "state": state}


def test_position_gains_by_hand():
    # job 0 (user a) runs 9 s of 9 before t = 10: Su_a = 60 + 0.1*(100-60) = 64.
    # jobs 1..6 (user b, Su 60, wt 100) wait from t = 1..6; job 7 (user a, wt 100) arrives at 10.
    # Sf(k) = 248 kp + (10 - k); Sf(7) = (64*0.8 + 200) kp = 251.2 kp.
    #   kp = 1: every b job is ahead (257 .. 252 > 251.2): gain 0.
    #   kp = 2: 505, 504, 503 > 502.4 > 502, 501, 500: 3 of 6 ahead: gain (6-3)/6 = 50 %.
    # job 6 arrives behind 5 jobs of the same Sf base (queue of 6 > 5): stays last, gain 0, Su 60.
    rows = [_row(0, 0, 9, 0, 9)] + [_row(k, k, 100, 1000 + k, 100) for k in range(1, 7)] + [_row(7, 10, 100, 2000, 50)]
    users = {r["id"]: ("a" if r["id"] in ("w0!0", "w0!7") else "b") for r in rows}
    ema = score_rule({"rule": "ema"})
    assert position_gains(rows, users, 1.0, rule=ema) == {"50_74": [0.0, 0.0]}
    assert position_gains(rows, users, 2.0, rule=ema) == {"50_74": [0.0, 50.0]}
    # a queue of 6 is needed: with min_queue 8 nothing is counted
    assert position_gains(rows, users, 2.0, min_queue=8, rule=ema) == {}
    # the default (threshold) rule: Su_a = 60 + UP*1*40 = 61.45; Sf(7) = (49.16 + 200) kp = 249.16 kp:
    # kp = 2: 505..500 > 498.3: every b job ahead, gain 0
    assert position_gains(rows, users, 2.0) == {"50_74": [0.0, 0.0]}


def test_real_users_by_mean_su():
    # (ema rule, alpha 0.1) user x: 3 jobs at P = 1 -> Su seen 60, 64, 67.6: mean 63.87 -> medium
    # user y: 2 jobs at P = 0 -> Su seen 60, 54: mean 57 -> medium, fewer jobs than x
    # user z: 1 job killed (delay >= walltime): Su stays 60 -> medium; inj0 is not a real user
    jobs = {f"w0!x{i}": {"user": "x", "subtime": i, "walltime": 10, "delay": 10 - 1e-9} for i in range(3)}
    jobs.update({f"w0!y{i}": {"user": "y", "subtime": i, "walltime": 10, "delay": 0.0} for i in range(2)})
    jobs["w0!z"] = {"user": "z", "subtime": 0, "walltime": 10, "delay": 20}
    jobs["w0!i"] = {"user": "inj0", "subtime": 0, "walltime": 10, "delay": 0.0}
    got = choose_real_users(jobs, score_rule({"rule": "ema"}))
    assert set(got) == {"real_mid"} and got["real_mid"][0] == "x"
    assert got["real_mid"][1] == pytest.approx((60 + 64 + 67.6) / 3, abs=1e-6)
    # the default (threshold) rule: x sees 60, 60 + 40u, 100 - 40 (1 - u)^2 (u = UP x (1 - 1e-10))
    u = UP * (1 - 1e-10)
    got = choose_real_users(jobs)
    assert got["real_mid"][1] == pytest.approx((60 + 60 + 40 * u + 100 - 40 * (1 - u) ** 2) / 3, abs=1e-6)


def test_wait_reduction_from_files(tmp_path):
    # inj100 waits 10 and 30 s (mean 20) against 40 and 40 under FCFS: reduction 100*(40-20)/40 = 50 %
    # inj0 waits 60 s against 50: reduction -20 %
    out = tmp_path / "out_jobs.csv"
    cols = ["job_id", "workload_name", "submission_time", "requested_time", "starting_time",
            "execution_time", "finish_time", "final_state"]
    data = [("a", 0, 10, 10), ("b", 0, 30, 30), ("c", 0, 60, 60)]
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for jid, sub, start, _ in data:
            w.writerow([jid, "w0", sub, 3600, start, 5, start + 5, "COMPLETED_SUCCESSFULLY"])
    wl = {"jobs": [{"id": "a", "user": "inj100", "subtime": 0, "walltime": 3600, "profile": "p", "res": 1},
                   {"id": "b", "user": "inj100", "subtime": 0, "walltime": 3600, "profile": "p", "res": 1},
                   {"id": "c", "user": "inj0", "subtime": 0, "walltime": 3600, "profile": "p", "res": 1}],
          "profiles": {"p": {"type": "delay", "delay": 5}}, "nb_res": 1}
    fcfs = [_row("a", 0, 3600, 40, 5), _row("b", 0, 3600, 40, 5), _row("c", 0, 3600, 50, 5)]
    m = buc_metrics(out, [wl], None, fcfs_rows=fcfs)
    # the workload: 3 jobs of 1 host x 5 s, all at 0 s: no span, no offered load
    assert "buc.offered_load" not in m
    # final scores: inj100's two jobs ran 5 s of 3600 (P = 1/720 < 0.5: imprecise), inj0's one too
    p = 5 / 3600
    assert m["buc.su_final.inj100"] == pytest.approx(60 * (1 - DOWN * (1 - p)) ** 2)
    assert m["buc.su_final.inj0"] == pytest.approx(60 * (1 - DOWN * (1 - p)))
    assert m["buc.wait.inj100"] == pytest.approx(20.0)
    assert m["buc.wait_reduction.inj100"] == pytest.approx(50.0)
    assert m["buc.wait_reduction.inj0"] == pytest.approx(-20.0)
    assert "buc.wait.inj50" not in m
    assert len(read_jobs(out)) == 3
