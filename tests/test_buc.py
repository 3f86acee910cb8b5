"""BUC (``schedulers/buc.py``): score update, Sf (eq. 2), queue order, ties, killed jobs, and the
paper's remark (L201-205) that with equal behaviour BUC orders as its base policy (FCFS).

Numbers are worked out by hand in the comments. Job ``n`` is ``w0!n``; ``wt`` = walltime (s).
"""

from __future__ import annotations

import csv
import random

import pytest
from procset import ProcSet

from schedulers.buc import BUC, DOWN, UP, BUCEasy, precision, sf_index, update_score
from schedulers.core.events import ExecuteJob, JobCompleted, JobSubmitted, SimulationBegins
from schedulers.core.model import Host, Job
from schedulers.engine import simulate
from schedulers.engine.platform import read_platform
from schedulers.fcfs import FCFS
from schedulers.inputs.generators import homogeneous_platform_xml
from schedulers.registry import PolicyOptionError, get_policy


def begins(n: int) -> SimulationBegins:
    hosts = [Host(id=i, name=f"host{i}") for i in range(n)]
    return SimulationBegins(0.0, nb_resources=n, nb_compute_resources=n, compute_resources=hosts)


def sub(t: float, n: int, user: str, wt: float, res: int = 1) -> JobSubmitted:
    return JobSubmitted(t, job=Job(id=f"w0!{n}", workload="w0", subtime=t, walltime=float(wt), res=res,
                                   profile="p", extra={"user": user}))


def end(t: float, n: int, alloc: str = "0", state: str = "COMPLETED_SUCCESSFULLY") -> JobCompleted:
    return JobCompleted(t, job_id=f"w0!{n}", job_state=state, alloc=ProcSet.from_str(alloc))


def started(policy, now, *events) -> list[str]:
    return [d.job_id.split("!")[1] for d in policy.decide(now, list(events)) if isinstance(d, ExecuteJob)]


# ------------------------------------------------------------------------------ pure formulas
def test_precision_eq1():
    assert precision(30.0, 120.0) == 0.25
    assert precision(130.0, 120.0) == 1.0          # capped
    assert precision(30.0, -1.0) is None           # no walltime: no precision


def test_update_rules_by_hand():
    # ema: Su + alpha*(100P - Su)
    ema = {"rule": "ema"}
    assert update_score(60.0, 1.0, **ema) == pytest.approx(64.0)            # 60 + 0.1*(100-60)
    assert update_score(60.0, 0.0, **ema) == pytest.approx(54.0)            # 60 + 0.1*(0-60)
    assert update_score(60.0, 0.5, **ema) == pytest.approx(59.0)            # 60 + 0.1*(50-60)
    assert update_score(60.0, 0.6, **ema) == 60.0                           # fixed point, exactly
    assert update_score(60.0, 1.0, weight=0.5, **ema) == pytest.approx(62.0)  # mitigation weight halves the step
    assert update_score(60.0, 1.0, alpha=0.5, **ema) == pytest.approx(80.0)
    # threshold (the default): P >= 0.5 precise, Su + up*P*(100 - Su); else Su - down*(1 - P)*Su
    assert update_score(60.0, 1.0, up=0.1) == pytest.approx(64.0)           # 60 + 0.1*1*40
    assert update_score(60.0, 0.5, up=0.1) == pytest.approx(62.0)           # 60 + 0.1*0.5*40: P = 0.5 is precise
    assert update_score(60.0, 0.4, down=0.1) == pytest.approx(56.4)         # 60 - 0.1*0.6*60
    assert update_score(60.0, 0.0, down=0.1) == pytest.approx(54.0)         # 60 - 0.1*1*60
    assert update_score(60.0, 0.4, up=0.1, p0=0.3) == pytest.approx(61.6)  # p0 0.3: precise, 60 + 0.1*0.4*40
    assert update_score(60.0, 1.0, up=0.1, weight=0.5) == pytest.approx(62.0)
    # linear: clamp(Su + gain*(P - p0))
    assert update_score(60.0, 1.0, rule="linear") == pytest.approx(70.0)   # 60 + 20*0.5
    assert update_score(60.0, 0.0, rule="linear") == pytest.approx(50.0)
    assert update_score(95.0, 1.0, rule="linear") == 100.0                 # clamped
    assert update_score(5.0, 0.0, rule="linear") == 0.0
    with pytest.raises(ValueError, match="unknown BUC rule"):
        update_score(60.0, 1.0, rule="nope")


def test_ema_converges_to_100p_and_stays_bounded():
    su = 60.0
    for _ in range(200):
        su = update_score(su, 0.0, rule="ema")
        assert 0.0 <= su <= 100.0
    assert su < 0.01
    for _ in range(200):
        su = update_score(su, 1.0, rule="ema")
    assert su > 99.99
    # the paper's inj50 user (P = 0.5, 100 jobs from 60): 50 + 10 x 0.9^100 = 50.0003, not 96.14
    su = 60.0
    for _ in range(100):
        su = update_score(su, 0.5, rule="ema")
    assert su == pytest.approx(50 + 10 * 0.9 ** 100)


def _after(p: float, n: int = 100, su: float = 60.0, **kw) -> float:
    for _ in range(n):
        su = update_score(su, p, **kw)
    return su


def test_threshold_rule_gives_the_papers_final_scores():
    # 002 L168-169: after 100 jobs each from 60, inj0 (P = 0) 4.8, inj100 (P = 1) 99, inj50 96.14.
    # up = 1 - 0.025^(1/100): 100 - 40 (1 - up)^100 = 100 - 40 x 0.025 = 99
    # down = 1 - 0.08^(1/100): 60 (1 - down)^100 = 60 x 0.08 = 4.8
    assert UP == pytest.approx(0.036217, abs=1e-6) and DOWN == pytest.approx(0.024941, abs=1e-6)
    assert _after(1.0) == pytest.approx(99.0, abs=1e-9)
    assert _after(0.0) == pytest.approx(4.8, abs=1e-9)
    # inj50: 100 - 40 (1 - up/2)^100 = 93.567 (the paper: 96.14), far from ema's 50
    assert _after(0.5) == pytest.approx(100 - 40 * (1 - UP / 2) ** 100)
    assert _after(0.5) == pytest.approx(93.567, abs=1e-3)
    # our injected users' jobs run 1 s and 3599 s of 3600 (never 0 s, never killed at the walltime)
    assert _after(1 / 3600) == pytest.approx(60 * (1 - DOWN * 3599 / 3600) ** 100)   # 4.803
    assert _after(3599 / 3600) == pytest.approx(100 - 40 * (1 - UP * 3599 / 3600) ** 100)   # 98.999


def test_threshold_rule_fixed_points_and_bounds():
    # 100 is the fixed point of precise jobs, 0 of imprecise ones; the score never leaves [0, 100],
    # even with the largest steps (up = down = 1: one job reaches the bound)
    assert update_score(100.0, 0.7) == 100.0 and update_score(0.0, 0.2) == 0.0
    assert update_score(60.0, 1.0, up=1.0) == 100.0 and update_score(60.0, 0.0, down=1.0) == 0.0
    assert update_score(0.0, 1.0) == pytest.approx(100 * UP)     # from 0, up by up*P*100
    for p in (0.0, 0.3, 0.49, 0.5, 0.8, 1.0):
        su = 60.0
        for _ in range(2000):
            su = update_score(su, p, up=1.0, down=1.0)
            assert 0.0 <= su <= 100.0
        assert su == (100.0 if p >= 0.5 else 0.0) or (p == 0.5 and su == pytest.approx(100.0))


def test_sf_eq2_by_hand():
    # (60*0.8 + (100000/100000)*0.2)*1 + 0 = 48.2
    assert sf_index(60.0, 100000.0, 0.0, 1.0) == pytest.approx(48.2)
    # (48 + 0.2*100000/3600)*1440 + 100 = 48*1440 + 8000 + 100 = 77220
    assert sf_index(60.0, 3600.0, 100.0, 1440.0) == pytest.approx(77220.0)
    # no walltime: the walltime term is 0
    assert sf_index(50.0, -1.0, 7.0, 10.0) == pytest.approx(407.0)


def test_options_are_checked():
    with pytest.raises(PolicyOptionError, match="option 'kp'"):
        get_policy("buc", {"kp": -1})
    with pytest.raises(PolicyOptionError, match="option 'rule'"):
        get_policy("buc-easy", {"rule": "fancy"})
    with pytest.raises(PolicyOptionError, match="has no option 'kq'"):
        get_policy("buc", {"kq": 1})


# ------------------------------------------------------------------------------ queue order
@pytest.mark.parametrize("cls", [BUC, BUCEasy])
def test_precise_user_goes_first(cls):
    p = cls({"kp": 1440, "rule": "ema"})
    assert started(p, 0.0, begins(1), sub(0, 1, "g", 100)) == ["1"]
    assert started(p, 1.0, sub(1, 2, "b", 100), sub(1, 3, "g", 100)) == []
    # j1 ran 100 s of 100: P = 1, Su_g = 64, Su_b = 60. At t = 100:
    #   Sf(j2) = (60*0.8 + 0.2*1000)*1440 + 99 = 357219;  Sf(j3) = (64*0.8 + 200)*1440 + 99 = 361827
    assert started(p, 100.0, end(100, 1)) == ["3"]
    assert p.scores == {"g": pytest.approx(64.0)}
    assert started(p, 150.0, end(150, 3)) == ["2"]


def test_waiting_time_can_beat_the_score():
    # Su_g = 64, Su_b = 60 after j1; j2 (b) waits 9 s longer than j3 (g).
    # kp = 1: Sf(j2) = 248 + 99 = 347 > Sf(j3) = 251.2 + 90 = 341.2  -> j2 first
    # kp = 10: Sf(j2) = 2480 + 99 = 2579 < Sf(j3) = 2512 + 90 = 2602 -> j3 first
    for kp, first in ((1, "2"), (10, "3")):
        p = BUC({"kp": kp, "rule": "ema"})
        started(p, 0.0, begins(1), sub(0, 1, "g", 100))
        started(p, 1.0, sub(1, 2, "b", 100))
        started(p, 10.0, sub(10, 3, "g", 100))
        assert started(p, 100.0, end(100, 1)) == [first]


def test_shorter_walltime_goes_first():
    # same user, same subtime: Sf differs by 0.2*100000*(1/50 - 1/100)*kp = 100*kp > 0 for wt 50
    p = BUC({"kp": 1})
    started(p, 0.0, begins(1), sub(0, 1, "u", 100))
    started(p, 5.0, sub(5, 2, "u", 100), sub(5, 3, "u", 50))
    assert started(p, 100.0, end(100, 1)) == ["3"]


def test_ties_by_subtime_then_id_string():
    p = BUC({"kp": 10800})
    started(p, 0.0, begins(1), sub(0, 1, "u", 100))
    # equal Sf (same user, walltime, subtime) -> smaller id string first, as Batsim submits them:
    # "w0!10" < "w0!9", whatever the order of the events
    started(p, 5.0, sub(5, 9, "u", 100), sub(5, 10, "u", 100))
    assert started(p, 100.0, end(100, 1, state="COMPLETED_KILLED")) == ["10"]
    assert started(p, 200.0, end(200, 10, state="COMPLETED_KILLED")) == ["9"]


def test_killed_or_walltimeless_jobs_leave_su_unchanged():
    p = BUC({"rule": "ema"})
    started(p, 0.0, begins(2), sub(0, 1, "a", 100), sub(0, 2, "b", -1))
    started(p, 100.0, end(100, 1, "0", state="COMPLETED_WALLTIME_REACHED"), end(100, 2, "1"))
    assert p.scores == {}
    assert p.score("a") == p.score("b") == 60.0
    assert (p.updates, p.skipped) == (0, 2)
    # a normal end does change it: 3 ran 10 s of 100, P = 0.1: 60 + 0.1*(10 - 60) = 55
    started(p, 100.0, sub(100, 3, "a", 100))
    started(p, 110.0, end(110, 3))
    assert p.scores == {"a": pytest.approx(55.0)}
    assert p.metrics()["su.a"] == pytest.approx(55.0)


def test_mitigation_weights_small_jobs():
    # work_ref = 400 host.s: a 1-host 100 s job has weight 0.25: 60 + 0.25*0.1*(100 - 60) = 61
    p = BUC({"work_ref": 400, "rule": "ema"})
    started(p, 0.0, begins(1), sub(0, 1, "a", 100))
    started(p, 100.0, end(100, 1))
    assert p.scores["a"] == pytest.approx(61.0)


# ------------------------------------------------------------------------------ on output files
def _workload(rng: random.Random, precise_equal: bool) -> dict:
    """60 jobs of 4 users on 4 hosts, walltime 100 s for all; runtime 50 s (P = 0.5: with su0 = 50,
    the ema fixed point, every Su stays 50 exactly) when ``precise_equal``, else user-dependent
    precisions."""
    jobs, profiles = [], {}
    t = 0.0
    for i in range(60):
        t += rng.choice([0.0, 0.0, 5.0, 20.0])   # ties in subtime on purpose
        user = f"u{rng.randrange(4)}"
        rt = 50.0 if precise_equal else {"u0": 99.0, "u1": 5.0, "u2": 60.0, "u3": 30.0}[user]
        profiles[f"d{rt:g}"] = {"type": "delay", "delay": rt}
        jobs.append({"id": str(i), "subtime": t, "res": rng.randint(1, 4), "walltime": 100.0,
                     "profile": f"d{rt:g}", "user": user})
    return {"nb_res": 4, "jobs": jobs, "profiles": profiles}


def _schedule(tmp_path, name, policy, workload) -> dict[str, tuple[str, str]]:
    platform = read_platform("<test>", text=homogeneous_platform_xml(4, 1, 1e9))
    simulate(platform, [workload], policy, export_prefix=tmp_path / f"{name}_")
    with open(tmp_path / f"{name}_jobs.csv", newline="") as f:
        return {r["job_id"]: (r["starting_time"], r["allocated_resources"]) for r in csv.DictReader(f)}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_equal_scores_and_walltimes_give_fcfs_schedule(tmp_path, seed):
    wl = _workload(random.Random(seed), precise_equal=True)
    fcfs = _schedule(tmp_path, "fcfs", FCFS(), wl)
    for kp in (1440, 10800):
        buc = BUC({"kp": kp, "su0": 50, "rule": "ema"})
        assert _schedule(tmp_path, f"buc{kp}", buc, wl) == fcfs
        assert buc.updates == 60 and buc.scores == {f"u{i}": 50.0 for i in range(4)}
    # control: with unequal precisions the schedules differ (the comparison above can fail)
    wl2 = _workload(random.Random(seed), precise_equal=False)
    assert _schedule(tmp_path, "buc_unequal", BUC(), wl2) != _schedule(tmp_path, "fcfs_unequal", FCFS(), wl2)


@pytest.mark.parametrize("name", ["buc", "buc-easy"])
def test_zmq_server_run_equals_in_process_run(tmp_path, name):
    """The same policy behind the ZeroMQ server (`gridsched serve`), driven by the engine playing
    Batsim, writes the same out_jobs.csv as in-process (real Batsim: see docs/guides/real-batsim.md)."""
    import socket
    import threading

    from schedulers.batsim.server import serve
    from schedulers.engine import build_engine, write_outputs
    from schedulers.engine.zmq_client import ZmqPort

    wl = _workload(random.Random(7), precise_equal=False)
    platform = read_platform("<test>", text=homogeneous_platform_xml(4, 1, 1e9))
    opts = {"kp": 1440}
    simulate(platform, [wl], get_policy(name, opts), export_prefix=tmp_path / "a_")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    th = threading.Thread(target=lambda: serve(get_policy(name, opts), f"tcp://127.0.0.1:{port}",
                                               connect_timeout=20, idle_timeout=20), daemon=True)
    th.start()
    zport = ZmqPort(f"tcp://127.0.0.1:{port}", timeout=20)
    try:
        write_outputs(build_engine(platform, [wl]).run(zport), tmp_path / "b_", energy=False)
    finally:
        zport.close()
    th.join(20)
    assert not th.is_alive()
    assert (tmp_path / "a_jobs.csv").read_text() == (tmp_path / "b_jobs.csv").read_text()
