"""The green-heuristic reproduction's readings, worked by hand: the common-window energy, the
makespan bound, the arrival-rate generator, the contention platform's power, and the paper's own
numbers (004 = ``../shared/papers/004_256d972a5ab7dee1.txt``).

Power by SimGrid's host-energy model (``Epsilon + (AllCores - Epsilon) * min(load / cores, 1)``
when busy, ``Idle`` otherwise) and L07's max-min sharing: two parts on one 1-core host get half
its speed each.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from schedulers.campaign.green_analysis import case_table, setting_table, t_interval, wilson
from schedulers.campaign.green_claims import paper_cases
from schedulers.campaign.green_paper import CONFIGS, PAPER_T2, inconsistencies, paper_spread
from schedulers.campaign.numfmt import energy, interval, pct, seed_ranges, signed_pct
from schedulers.core.energy_readings import dedicated_time, energy_readings, window_energy, workload_bound
from schedulers.core.policy import Policy
from schedulers.engine import simulate
from schedulers.engine.platform import read_platform
from schedulers.inputs.generators import generate
from schedulers.inputs.green_scenario import (NANTES_CORE_SPEED, NANTES_PLATFORM, NANTES_PLATFORM_1CORE,
                                              load_profile, mean_interarrival)

#: Two hosts of one core at 1 Gflop/s: Idle 100 W, busy 200 W (Idle:Epsilon:AllCores = 100:200:200).
TWO_HOSTS = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1"><zone id="z" routing="Full">
  <host id="master_host" speed="100Mf"><prop id="wattage_per_state" value="100:200"/></host>
  <host id="h0" speed="1Gf" core="1"><prop id="wattage_per_state" value="100:200:200"/></host>
  <host id="h1" speed="1Gf" core="1"><prop id="wattage_per_state" value="100:200:200"/></host>
</zone></platform>
"""


class Placed(Policy):
    """Starts each job at once on the hosts its ``where`` field names (a test placement)."""

    name = "placed"

    def on_job_submitted(self, job):
        self.execute(job, job.extra["where"])


def _two_jobs(where: list[list[int]]) -> dict:
    # two 1-host jobs of 10 s (1e10 flops at 1 Gflop/s), both submitted at 0
    return {"nb_res": 2, "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 0}},
            "jobs": [{"id": str(i), "subtime": 0, "res": 1, "walltime": -1, "profile": "p", "where": w}
                     for i, w in enumerate(where)]}


def _run(tmp_path: Path, name: str, platform, workload: dict) -> dict:
    out = tmp_path / name
    out.mkdir()
    simulate(platform, [workload], Placed(), energy=True, compute_sharing=True, export_prefix=str(out / "out_"))
    return energy_readings(out / "out_jobs.csv", [workload], platform)


def test_common_window_energy_of_two_jobs_by_hand(tmp_path):
    plat = tmp_path / "two.xml"
    plat.write_text(TWO_HOSTS)
    # A: both jobs on h0, sharing its one core: each at half speed, both end at 20 s.
    #    h0 200 W x 20 s + h1 100 W x 20 s = 6,000 J; each job's consumed_energy is h0's 4,000 J.
    shared = _run(tmp_path, "a", plat, _two_jobs([[0], [0]]))
    # B: one job per host: both end at 10 s; 2 x 200 W x 10 s = 4,000 J.
    apart = _run(tmp_path, "b", plat, _two_jobs([[0], [1]]))
    assert shared["energy_end_s"] == pytest.approx(20.0, abs=1e-6)
    assert shared["energy_at_end_j"] == pytest.approx(6000.0, rel=1e-9)
    assert apart["energy_end_s"] == pytest.approx(10.0, abs=1e-6)
    assert apart["energy_at_end_j"] == pytest.approx(4000.0, rel=1e-9)
    assert shared["end_power_w"] == apart["end_power_w"] == 200.0  # both hosts idle at the end
    # the per-job sum counts h0 twice while it is shared (20 host-seconds) and no idle host
    assert shared["jobs_energy_j"] == pytest.approx(8000.0, rel=1e-9) and shared["shared_host_s"] == pytest.approx(20.0)
    assert apart["jobs_energy_j"] == pytest.approx(4000.0, rel=1e-9) and apart["shared_host_s"] == 0.0
    # over the common window [0, 20 s], B's hosts idle 10 s more: 4,000 + 200 W x 10 s = 6,000 J,
    # the same as A (the same work at the same power); Batsim's own totals differ by a third.
    w = max(shared["energy_end_s"], apart["energy_end_s"])
    e_a = window_energy(shared["energy_at_end_j"], shared["energy_end_s"], shared["end_power_w"], w)
    e_b = window_energy(apart["energy_at_end_j"], apart["energy_end_s"], apart["end_power_w"], w)
    assert e_a == pytest.approx(6000.0, rel=1e-9) and e_b == pytest.approx(6000.0, rel=1e-9)
    with pytest.raises(ValueError, match="before the run's last event"):
        window_energy(6000.0, 20.0, 200.0, 10.0)


def _case(**over) -> pd.DataFrame:
    """The 12 runs of one case: every run ends at 20 s with 6,000 J and 200 W after it, except
    those in ``over`` ((alg, Δ) -> (end s, energy J))."""
    rows = []
    for alg, d in CONFIGS:
        end, e = over.get(f"{alg}{d}", (20.0, 6000.0))
        rows.append({"alg": alg, "delta": float(d), "seed": 0, "host_cores": 1, "job_count": 2, "cpu_load": 100,
                     "offered_load": 0.3, "max_res": 4, "switch_time": 0.0, "idle_timeout": -1.0,
                     "interarrival": 4.0, "runtime_min": 10.0, "runtime_max": 60.0, "walltime_factor": 1.5,
                     "periods": 10, "makespan": end, "energy_joules": e, "energy_at_end_j": e, "energy_end_s": end,
                     "end_power_w": 200.0, "jobs_energy_j": 4000.0, "shared_host_s": 0.0, "walltime_kills": 0.0,
                     "lb_makespan_s": 10.0, "work_host_s": 20.0, "last_arrival_s": 0.0, "mean_waiting_time": 0.0,
                     "jobs": 2, "overlaps": 0.0, "campaign": "t"})
    return pd.DataFrame(rows)


def test_case_table_compares_over_the_latest_end():
    # HEFT Δ 50 is the run B above (4,000 J by 10 s), the 11 others the run A (6,000 J by 20 s)
    cases, runs = case_table(_case(HEFT50=(10.0, 4000.0)))
    c = cases.iloc[0]
    assert c.window_s == 20.0 and (runs.e_win == 6000.0).all()
    assert c.spread_win == 0.0 and bool(c.tie) and c.best_win == "EASY 0" and c.worst_win == "EASY 0"
    # Batsim's own totals: best HEFT 50, (6,000 - 4,000) / 6,000 = 33.3 %; its makespan 50 % shorter
    assert c.best_own == "HEFT 50" and c.spread_own == pytest.approx(100 / 3)
    # room of plain EASY: (20 - 10) / 20
    assert c.room == pytest.approx(50.0) and c.idle_share == pytest.approx(100 * 200 * 20 / 6000)
    # a real difference: EASY 10 ends at 20 s with 5,400 J -> best, (6,000 - 5,400) / 6,000 = 10 %
    c2 = case_table(_case(EASY10=(20.0, 5400.0)))[0].iloc[0]
    assert c2.best_win == "EASY 10" and c2.spread_win == pytest.approx(10.0) and c2.easy10_vs_0 == pytest.approx(10.0)
    st = setting_table(case_table(pd.concat([_case(EASY10=(20.0, 5400.0)), _case(EASY10=(20.0, 5400.0)).assign(seed=1)]))[0])
    assert st.iloc[0].seeds == [0, 1] and st.iloc[0].best_win == "EASY 10 (2/2)"
    assert st.iloc[0].spread_win_low == st.iloc[0].spread_win_high == pytest.approx(10.0)  # zero width


def test_workload_bound_of_a_small_workload(tmp_path):
    plat = tmp_path / "two.xml"
    plat.write_text(TWO_HOSTS)
    prof = {"p10": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 0}, "d5": {"type": "delay", "delay": 5.0},
            "c": {"type": "composed", "repeat": 2, "seq": ["p10", "d5"]}}
    assert dedicated_time("c", prof, 1e9) == 30.0  # 2 x (10 s + 5 s)
    # three jobs at 0 (1, 2, 1 hosts, 10 s each): work 40 host-s over 2 hosts -> 20 s > 10 s
    w = {"nb_res": 2, "profiles": prof, "jobs": [{"id": str(i), "subtime": 0, "res": q, "profile": "p10"}
                                                 for i, q in enumerate((1, 2, 1))]}
    assert workload_bound([w], plat) == {"lb_makespan_s": 20.0, "work_host_s": 40.0, "last_arrival_s": 0.0}
    # one more job at 50 s of 1 host x 5 s: the last arrival plus its run time, 55 s, bounds it
    w["jobs"].append({"id": "3", "subtime": 50.0, "res": 1, "profile": "d5"})
    assert workload_bound([w], plat)["lb_makespan_s"] == 55.0


def test_arrival_rate_generator_offers_the_asked_load():
    # offered load 0.5 with 1-4 hosts and 10-60 s: mean gap 2.5 x 35 / (22 x 0.5) = 7.9545... s
    assert mean_interarrival(0.5, 4, 10.0, 60.0) == pytest.approx(87.5 / 11)
    w = generate("green-nantes", {"job_count": 4000, "offered_load": 0.5}, seed=1).workloads[0]
    sub = [j["subtime"] for j in w["jobs"]]
    gap = sub[-1] / (len(sub) - 1)  # the first job arrives at 0
    assert gap == pytest.approx(87.5 / 11, rel=0.05)  # a mean of 3,999 exponential gaps: sd 1.6 %
    work = sum(j["res"] * dedicated_time(j["profile"], w["profiles"], NANTES_CORE_SPEED) for j in w["jobs"])
    assert work / (22 * sub[-1]) == pytest.approx(0.5, rel=0.07)
    # the same seed at another load: the same jobs, arrivals scaled by 0.5 / 1.5
    w3 = generate("green-nantes", {"job_count": 4000, "offered_load": 1.5}, seed=1).workloads[0]
    assert [j["res"] for j in w3["jobs"]] == [j["res"] for j in w["jobs"]]
    assert w3["jobs"][-1]["subtime"] == pytest.approx(sub[-1] / 3, rel=1e-6)


def test_switch_time_ends_every_job_with_idle_hosts():
    prof = load_profile("p", 20.0, 50, NANTES_CORE_SPEED, 2, switch_time=3.0)
    assert prof["p"] == {"type": "composed", "repeat": 1, "seq": ["p_c", "p_d", "p_c", "p_d", "p_s"]}
    assert prof["p_s"] == {"type": "delay", "delay": 3.0}
    assert dedicated_time("p", prof, NANTES_CORE_SPEED) == pytest.approx(23.0)
    assert load_profile("q", 20.0, 100, 1e9, 10, 3.0)["q"]["seq"] == ["q_c", "q_s"]
    assert load_profile("q", 20.0, 0, 1e9, 10, 3.0)["q"] == {"type": "delay", "delay": 23.0}
    w = generate("green-nantes", {"job_count": 50, "switch_time": 5.0}, seed=0).workloads[0]
    assert all(j["walltime"] >= dedicated_time(j["profile"], w["profiles"], NANTES_CORE_SPEED) for j in w["jobs"])


def test_contention_platform_power_by_hand():
    # the contention file: 22 hosts of ONE core at 12.9625 Gflop/s, Idle 100 W, busy 200 W
    spec = read_platform(NANTES_PLATFORM_1CORE)
    assert len(spec.compute) == 22 and {h.cores for h in spec.compute} == {1}
    assert {h.speeds[0] for h in spec.compute} == {NANTES_CORE_SPEED}
    assert {(h.power[0].idle, h.power[0].epsilon, h.power[0].all_cores) for h in spec.compute} == {(100.0, 200.0, 200.0)}
    # two 1-host jobs of 10 s of work started together on host 0 (compute sharing): L07 gives each
    # half the core, both end at 20 s; host 0 draws 200 W (load capped at one core), 21 hosts idle:
    # 200 x 20 + 21 x 100 x 20 = 46,000 J. (Real Batsim 4.2.1 gave 46,000.000001 J and 20 s on these
    # inputs: `gridsched run --engine batsim --policy <host-0 placement> -p <this file> -E
    # --compute-sharing`.) On the 16-core file they keep a core each: 10 s, host 0 at
    # Epsilon + (200 - Epsilon) x 2/16 = 125.33 W: 1,253.3 + 21 x 100 x 10 = 22,253.3 J.
    w = {"nb_res": 22, "profiles": {"p": {"type": "parallel_homogeneous", "cpu": NANTES_CORE_SPEED * 10, "com": 0}},
         "jobs": [{"id": str(i), "subtime": 0, "res": 1, "walltime": -1, "profile": "p", "where": [0]} for i in range(2)]}
    one = simulate(NANTES_PLATFORM_1CORE, [w], Placed(), energy=True, compute_sharing=True)
    assert one.consumed_joules == pytest.approx(46000.0, rel=1e-9)
    sixteen = simulate(NANTES_PLATFORM, [w], Placed(), energy=True, compute_sharing=True)
    eps = 120 - 80 / 15
    assert sixteen.consumed_joules == pytest.approx((eps + (200 - eps) * 2 / 16) * 10 + 21000.0, rel=1e-9)
    gen = generate("green-nantes", {"job_count": 5, "host_cores": 1}, seed=0)
    assert Path(gen.platform) == NANTES_PLATFORM_1CORE


def test_the_papers_numbers_from_its_tables():
    assert len(PAPER_T2) * len(CONFIGS) == 216  # the plan; L204 says 136 simulations
    # 1000 jobs at 50 %: min 1.1e6 (EASY 10), max 1.8e6 (HEFT 50): (1.8 - 1.1) / 1.8 = 38.9 %
    assert paper_spread(50, 1000) == pytest.approx(700 / 18)
    # 100 jobs at 75 %: the row's max is HEFT 0's 161.2 kJ, not the MÁXIMO column's 160.4 kJ
    assert paper_spread(75, 100) == pytest.approx(100 * (161.2 - 157.2) / 161.2)
    pc = paper_cases()
    assert (pc.best_win == "EASY 10").sum() == 12  # 12 of 18 = the paper's 67 % (L250)
    assert (pc.worst_win == "HEFT 50").sum() == 8 and pc.worst_win.str.startswith("HEFT").sum() == 11
    text = " ".join(inconsistencies())
    assert "38.9 %" in text and "216 energies" in text and "1,820 times" in text and "13.2 %" in text


def test_report_numbers_read_well():
    assert seed_ranges([4, 0, 1, 2]) == "0-2, 4" and seed_ranges([0]) == "0"
    assert interval(0.5, 0.5, 0.5) == "0.50 % (every seed)" and interval(1.0, math.nan, math.nan) == "1.00 %"
    assert interval(1.0, 0.5, 1.5) == "1.00 % [0.50 %, 1.50 %]"
    assert energy(16.2e3, 3) == "16.2 kJ" and energy(1_234_567.0) == "1.235 MJ" and energy(math.nan) == "–"
    assert pct(-0.001) == "0.00 %" and signed_pct(-1.5) == "−1.50 %" and signed_pct(12.34) == "+12.3 %"
    assert t_interval([2.0, 2.0]) == (2.0, 2.0, 2.0)
    lo, hi = wilson(12, 18)  # 95 % Wilson interval of 12/18
    assert lo == pytest.approx(43.75, abs=0.05) and hi == pytest.approx(83.72, abs=0.05)


def test_one_command_runs_a_campaign_and_writes_the_report(tmp_path):
    from schedulers.campaign.green_report import main

    camp = tmp_path / "tiny.toml"
    camp.write_text('''name = "tiny"
seeds = 1
energy = true
compute_sharing = true
metrics = ["green-energy"]
[[policy]]
name = "green-easy"
label = "EASY"
[[policy]]
name = "green-heft"
label = "HEFT"
[[scenario]]
name = "nantes"
generator = "green-nantes"
params = { job_count = 10, offered_load = 0.3 }
[axes]
host_cores = [16, 1]
delta = [0, 10, 20, 30, 40, 50]
''')
    page = tmp_path / "page.md"
    page.write_text("a\n<!-- green-report:headline -->\nold\n<!-- /green-report:headline -->\n"
                    "<!-- green-report:claims -->\n<!-- /green-report:claims -->\nb\n")
    rep = tmp_path / "rep"
    assert main(["run", str(camp), "--out", str(tmp_path / "out"), "--report", str(rep), "--docs",
                 str(tmp_path / "img"), "--page", str(page), "--no-progress"]) == 0
    text = (rep / "report_green.md").read_text()
    assert "## The paper's claims" in text and "| 10 | 100 % | 0 |" in text  # 10 jobs, 100 % load, seed 0
    for name in ("fig9.png", "delta.png"):
        assert (tmp_path / "img" / name).read_bytes()[:4] == b"\x89PNG"
    assert not (tmp_path / "img" / "arrival.png").exists()  # one offered load: no sweep to draw
    assert len(pd.read_csv(rep / "runs.csv")) == 24 and len(pd.read_csv(rep / "cases.csv")) == 2
    new = page.read_text()
    assert "old" not in new and new.startswith("a\n") and new.endswith("b\n") and "| jobs | CPU load |" in new
    # a page without the markers is one error line, status 2
    page.write_text("nothing\n")
    assert main(["report", str(tmp_path / "out" / "tiny"), "--report", str(rep), "--page", str(page)]) == 2
    # the same commands under gridsched: the report rewritten from the finished runs, and the same
    # error (one line, status 2) for the page without markers
    from schedulers.cli import main as gridsched
    rep2 = tmp_path / "rep2"
    assert gridsched(["campaign", "green", "report", str(tmp_path / "out" / "tiny"), "--report", str(rep2)]) == 0
    assert len(pd.read_csv(rep2 / "runs.csv")) == 24
    assert gridsched(["campaign", "green", "report", str(tmp_path / "out" / "tiny"), "--report", str(rep2),
                      "--page", str(page)]) == 2


def test_the_summary_of_sweeps_alone_has_no_empty_number():
    """Only a sweep ran (no run of the paper's plan): the contention sentence gives the kills and
    stops there, instead of a spread of no runs printed as a dash."""
    from schedulers.campaign.green_report import _summary

    st = pd.DataFrame({"design": ["switch"], "host_cores": [1], "spread_ok_mean": [1.0], "ties": [0], "n": [1]})
    cfg = pd.DataFrame({"host_cores": [1, 1, 16], "delta": [50.0, 0.0, 50.0], "kills": [3, 0, 0],
                        "jobs": [30, 30, 30]})
    text = "\n".join(_summary(st, pd.DataFrame({"design": ["switch"], "host_cores": [1]}), cfg, pd.DataFrame()))
    # 3 of the 30 jobs run with Δ = 50 % on one-core nodes: 10 %
    assert ("With Δ = 50 % on one-core nodes, 10.0 % of the jobs run are killed at their walltime (every run "
            "of the campaign); the lowest energies there come with kills.\n") in text
    assert "–" not in text


def test_a_sweep_run_alone_says_it_has_no_run_of_the_papers_plan():
    """`gridsched campaign green run campaigns/green_nantes/switch.toml` (a sweep alone, as the green
    page suggests) gave a report whose headline section had no table and whose Table 3 section a
    header with no row; each section of the paper's plan now says there is no run of it."""
    from schedulers.campaign.green_report import _headline, _table2, _table3

    keys = {"design": ["switch"], "host_cores": [16], "job_count": [100], "cpu_load": [100], "seed": [0],
            "ties": [0], "n": [3]}
    st = cases = pd.DataFrame(keys)
    for section in (_headline(st), _table2(pd.DataFrame(), st), _table3(cases)):
        assert section[0].startswith("## ") and not any(line.startswith("|") for line in section), section
        assert section[-2] == ("No run of the paper's plan in these results: `campaigns/green_nantes/paper.toml` "
                               "and `large.toml` make them.")
