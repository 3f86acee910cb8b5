"""HEFT, the green overlap heuristic (004 eqs. 3-4) and the CPU-load profiles, worked by hand.

Schedules in comments: one row per host, time to the right; ``Jn`` = job ``w0!n``; ``res`` hosts,
walltime ``wt`` (s). Energies use the Nantes power states as SimGrid reads them: a 16-core host
draws Epsilon + (AllCores - Epsilon) * k / 16 with k busy cores, Epsilon = 120 - 80/15 W, so one
busy core draws 120 W; idle 100 W.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from procset import ProcSet

from schedulers.core.energy_readings import energy_readings
from schedulers.core.events import ExecuteJob, JobCompleted, JobSubmitted, SimulationBegins
from schedulers.core.model import Host, Job, PolicyError
from schedulers.easy import EASY
from schedulers.engine import simulate
from schedulers.green import GreenEASY, GreenHEFT
from schedulers.heft import HEFT
from schedulers.inputs.generators import generate
from schedulers.inputs.green_scenario import NANTES_CORE_SPEED, NANTES_PLATFORM, load_profile
from schedulers.registry import PolicyOptionError, get_policy


def begins(speeds, sharing=False):
    hosts = [Host(id=i, name=f"h{i}", speeds=[s], cores=1) for i, s in enumerate(speeds)]
    return SimulationBegins(0.0, nb_resources=len(hosts), nb_compute_resources=len(hosts),
                            compute_resources=hosts, allow_compute_sharing=sharing)


def sub(t, n, res, wt):
    return JobSubmitted(t, job=Job(id=f"w0!{n}", workload="w0", subtime=t, walltime=float(wt),
                                   res=res, profile="p"))


def done(t, n, alloc):
    return JobCompleted(t, job_id=f"w0!{n}", alloc=ProcSet.from_str(alloc))


def run(policy, now, *events):
    """Feed one message; the jobs it starts as ``[(name, alloc), ...]``."""
    return [(d.job_id.split("!")[1], str(d.alloc)) for d in policy.decide(now, list(events))
            if isinstance(d, ExecuteJob)]


# ----------------------------------------------------------------------------------- HEFT
def test_heft_waits_for_the_fast_host_when_it_finishes_earlier():
    # h0 1 Gflop/s, h1 2 Gflop/s; walltimes are run times on the slowest host (h0).
    # J1 (wt 40 on h0 -> 20 s on h1) runs on h1 from 0, so h1 is held until 0 + 40 (walltime).
    # J2 (wt 100): on h0 start 0, finish 100; on h1 start 40, finish 40 + 100/2 = 90 -> h1, wait.
    p = HEFT()
    run(p, 0.0, begins([1e9, 2e9]))
    assert run(p, 0.0, sub(0.0, 1, 1, 40)) == [("1", "1")]  # fastest host first
    assert run(p, 0.0, sub(0.0, 2, 1, 100)) == []
    assert p.reservation.start == 40.0 and p.reservation.hosts_mask == 0b10


def test_heft_takes_the_slow_host_when_the_fast_one_frees_too_late():
    # J1 wt 120 holds h1 until 120: J2 on h1 would finish 120 + 50 = 170 > 100 on h0 -> h0 now.
    p = HEFT()
    run(p, 0.0, begins([1e9, 2e9]))
    run(p, 0.0, sub(0.0, 1, 1, 120))
    assert run(p, 0.0, sub(0.0, 2, 1, 100)) == [("2", "0")]


def test_heft_ranks_by_mean_cost_longest_first():
    # eq. 1 without successors: rank = wt * mean(1e9/1e9, 1e9/2e9) = 0.75 wt. One message with
    # J1 (wt 10, rank 7.5) then J2 (wt 100, rank 75) while both hosts are busy: J2 goes first.
    p = HEFT()
    run(p, 0.0, begins([1e9, 2e9]))
    run(p, 0.0, sub(0.0, 0, 2, 50))
    assert p.rank(Job(id="x", workload="w0", subtime=0, walltime=100.0, res=1, profile="p")) == 75.0
    run(p, 1.0, sub(1.0, 1, 1, 10), sub(1.0, 2, 1, 100))
    assert [j.name for j in p.queue] == ["2", "1"]
    # at 50 both hosts free: J2 (first) takes the fast host h1, J1 the slow one
    assert run(p, 50.0, done(50.0, 0, "0-1")) == [("2", "1"), ("1", "0")]


# ------------------------------------------------------------------------ the gap test (eq. 4)
def gap_case(policy):
    """2 equal hosts. J1 (1 host, wt 100) runs on h0 from 0; J2 (2 hosts, wt 50) is the head,
    reserved at 100 on h0-h1; J3 (1 host, wt 125) could use h1 in the gap [0, 100):
    eq. 4: 125 <= 100 + Δ * 125 / 100  <=>  Δ >= 20 %."""
    run(policy, 0.0, begins([1e9, 1e9], sharing=True))
    assert run(policy, 0.0, sub(0.0, 1, 1, 100)) == [("1", "0")]
    assert run(policy, 0.0, sub(0.0, 2, 2, 50)) == []
    return run(policy, 0.0, sub(0.0, 3, 1, 125))


@pytest.mark.parametrize("delta, fits", [(0, False), (10, False), (19, False), (20, True), (30, True)])
def test_a_job_fits_the_gap_only_with_delta_20_or_more(delta, fits):
    assert gap_case(GreenEASY({"delta": delta})) == ([("3", "1")] if fits else [])


def test_plain_easy_refuses_that_gap():
    assert gap_case(EASY()) == []


def test_the_head_starts_on_the_overlapped_host_at_the_gap_end():
    # Δ = 20: J3 runs on h1 [0, 125); at 100 J1 ends, J2 starts on h0-h1 and shares h1 with J3
    p = GreenEASY({"delta": 20})
    gap_case(p)
    assert run(p, 100.0, done(100.0, 1, "0")) == [("2", "0-1")]
    assert p.metrics()["overlaps"] == 1.0


def test_green_heft_slot_is_shortened_by_delta():
    # J1 (2 hosts, wt 100) planned on h0-h1 at 100 behind J0 (h0, wt 100); J3 (1 host, wt 125)
    # needs a slot of 125 * (1 - Δ/100) s on h1 before 100: Δ >= 20 %.
    for delta, fits in ((19, False), (20, True)):
        p = GreenHEFT({"delta": delta})
        run(p, 0.0, begins([1e9, 1e9], sharing=True))
        run(p, 0.0, sub(0.0, 0, 1, 100))
        run(p, 0.0, sub(0.0, 1, 2, 200))  # rank 200: placed before J3 (rank 125)
        assert run(p, 0.0, sub(0.0, 3, 1, 125)) == ([("3", "1")] if fits else []), delta


def test_per_gap_delta_follows_the_cpu_load():
    p = GreenEASY({"delta": 30, "delta_min": 5, "per_gap": True})
    job = Job(id="w0!1", workload="w0", subtime=0, walltime=10.0, res=1, profile="p", extra={"cpu_load": 100})
    assert p.delta_of(job) == 5.0  # CPU bound: the minimum (004 Fig. 5)
    job.extra["cpu_load"] = 0
    assert p.delta_of(job) == 30.0  # I/O bound: the maximum
    job.extra["cpu_load"] = 50
    assert p.delta_of(job) == 17.5


@pytest.mark.parametrize("opts", [{"delta": -1}, {"delta": 100}, {"delta": "10"}, {"per_gap": 1},
                                  {"delta": 10, "delta_min": 20, "per_gap": True}])
def test_bad_options_are_one_line_errors(opts):
    with pytest.raises(PolicyOptionError, match="green-easy"):
        get_policy("green-easy", opts)


def test_overlap_without_compute_sharing_is_refused():
    with pytest.raises(PolicyError, match="compute sharing"):
        GreenEASY({"delta": 10}).decide(0.0, [begins([1e9])])


def test_per_gap_with_delta_0_needs_no_compute_sharing():
    """With ``per_gap`` a job's Δ lies between ``delta_min`` and ``delta`` (delta_min <= delta):
    ``delta`` = 0 overlaps nothing, so a run without compute sharing is not refused (it was)."""
    p = GreenEASY({"delta": 0, "per_gap": True})
    assert p.compute_sharing_needed() is None
    assert p.decide(0.0, [begins([1e9])]) == []
    assert GreenEASY({"delta": 1, "per_gap": True}).compute_sharing_needed() is not None


# ------------------------------------------------------------------- Δ = 0 is the plain policy
def _outputs(tmp_path, name, policy, workload):
    prefix = tmp_path / name
    prefix.mkdir()
    simulate(NANTES_PLATFORM, [workload], policy, energy=True, compute_sharing=True,
             export_prefix=str(prefix / "out_"))
    files = {}
    for f in sorted(prefix.iterdir()):
        rows = list(csv.reader(f.open()))
        if f.name == "out_schedule.csv":  # wall-clock columns differ between any two runs
            drop = {rows[0].index("scheduling_time"), rows[0].index("simulation_time")}
            rows = [[v for i, v in enumerate(r) if i not in drop] for r in rows]
        files[f.name] = rows if f.name == "out_schedule.csv" else f.read_bytes()
    return files


@pytest.mark.parametrize("plain, green", [("easy", "green-easy"), ("heft", "green-heft")])
def test_delta_zero_gives_the_plain_policys_files(tmp_path, plain, green):
    w = generate("green-nantes", {"job_count": 150, "cpu_load": 50}, seed=3).workloads[0]
    ref = _outputs(tmp_path, plain, get_policy(plain), w)
    assert len(ref) == 6 and ref["out_jobs.csv"].count(b"\n") == 151  # header + 150 jobs (and the Pajé trace)
    assert _outputs(tmp_path, green + "0", get_policy(green, {"delta": 0}), w) == ref
    # and the comparison can fail: Δ = 50 overlaps jobs, so the schedule changes
    assert _outputs(tmp_path, green + "50", get_policy(green, {"delta": 50}), w)["out_jobs.csv"] != ref["out_jobs.csv"]


# ---------------------------------------------------------------------------- CPU-load profiles
def test_half_load_profile_alternates_compute_and_delay():
    prof = load_profile("p", 20.0, 50, NANTES_CORE_SPEED, 10)
    # "composed": the one name Batsim 4.2.1 knows for it (src/profiles.cpp; "sequence" is refused)
    assert prof["p"] == {"type": "composed", "repeat": 10, "seq": ["p_c", "p_d"]}
    assert prof["p_c"] == {"type": "parallel_homogeneous", "cpu": 12.9625e9, "com": 0.0}  # 1 s busy
    assert prof["p_d"] == {"type": "delay", "delay": 1.0}
    assert set(load_profile("q", 20.0, 100, 1e9, 10)) == {"q"}
    assert load_profile("q", 20.0, 0, 1e9, 10)["q"] == {"type": "delay", "delay": 20.0}


def test_half_load_job_energy_by_hand(tmp_path):
    # one 1-host job of 20 s at 50 %: 10 x (1 s computing on one core, 1 s asleep in a delay).
    # its host: 10 s x 120 W + 10 s x 100 W = 2,200 J; 21 other hosts idle 20 s: 42,000 J.
    w = {"nb_res": 22, "jobs": [{"id": "0", "subtime": 0, "res": 1, "walltime": 30, "profile": "p"}],
         "profiles": load_profile("p", 20.0, 50, NANTES_CORE_SPEED, 10)}
    res = simulate(NANTES_PLATFORM, [w], EASY(), energy=True, export_prefix=str(tmp_path / "out_"))
    readings = energy_readings(tmp_path / "out_jobs.csv", [w], NANTES_PLATFORM)
    assert readings["jobs_energy_j"] == pytest.approx(2200.0, rel=1e-6)
    assert readings["end_time"] == pytest.approx(20.0, abs=1e-6) and readings["walltime_kills"] == 0
    # the platform at the end: 22 idle hosts; Batsim's total stops at the job's end (20 s)
    assert readings["end_power_w"] == 2200.0 and readings["energy_end_s"] == pytest.approx(20.0, abs=1e-6)
    assert readings["energy_at_end_j"] == pytest.approx(res.consumed_joules, rel=1e-9)
    assert res.consumed_joules == pytest.approx(2200.0 + 21 * 100 * 20.0, rel=1e-6)


def test_two_host_half_load_job_energy_by_hand(tmp_path):
    # the same job on 2 hosts. SimGrid's lazy energy updates (engine/hosts.py): the first host is
    # updated when each delay ends (its sleep), so it draws 2,200 J as above; the second is not,
    # and each compute stage after a delay starts with no update, so from 1 s to 19 s it is
    # charged at 120 W in 2-s steps: 120 + 9 x 240 + the last delay at idle (the job's end is an
    # update) 100 = 2,380 J. A continuous integration would give 2,200 J again.
    w = {"nb_res": 22, "jobs": [{"id": "0", "subtime": 0, "res": 2, "walltime": 30, "profile": "p"}],
         "profiles": load_profile("p", 20.0, 50, NANTES_CORE_SPEED, 10)}
    res = simulate(NANTES_PLATFORM, [w], EASY(), energy=True, export_prefix=str(tmp_path / "out_"))
    readings = energy_readings(tmp_path / "out_jobs.csv")
    assert readings["jobs_energy_j"] == pytest.approx(2200.0 + 2380.0, rel=1e-9)
    assert res.consumed_joules == pytest.approx(4580.0 + 20 * 100 * 20.0, rel=1e-9)


def test_generator_refuses_other_loads():
    from schedulers.inputs.generators import GeneratorError
    with pytest.raises(GeneratorError, match="cpu_load"):
        generate("green-nantes", {"cpu_load": 60}, seed=0)


def test_nantes_core_speed_matches_the_platform_file():
    text = Path(NANTES_PLATFORM).read_text()
    assert 'speed="12.9625Gf,' in text and NANTES_CORE_SPEED == 207.4e9 / 16
