"""Idle-host shutdown (option ``idle_timeout`` of every policy, :mod:`schedulers.core.shutdown`),
worked by hand, and compared with real Batsim 4.2.1 recordings.

Switching times follow Batsim 4.2.1 ``src/pstate.cpp``: a switch computes 1 flop in the virtual
pstate of ``sleep_pstates="S:OFF:ON"``, so it lasts ``1 / speed`` s at that pstate's power with
one busy core. ``Jn`` = job ``w0!n``.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from procset import ProcSet

from schedulers.cli import main
from schedulers.core.events import (
    CallMeLater, ExecuteJob, JobCompleted, JobSubmitted, Notify, RequestedCall, ResourceStateChanged,
    SetResourceState, SimulationBegins,
)
from schedulers.core.model import Host, Job
from schedulers.core.policy import PolicyError, PolicyOptionError
from schedulers.engine import simulate
from schedulers.registry import POLICIES, get_policy

FIX = Path(__file__).parent / "fixtures"
DVFS = FIX / "dvfs2.xml"   # n0, n1: 1 core, 100 Mf; sleep pstate 2 (off 2 s at 150 W, on 10 s at 180 W)
RECORDED = FIX / "batsim_shutdown"   # 4 hosts s0-s3 (off 4 s, on 20 s), workload.json, real-Batsim outputs


def rows(path: Path) -> list[dict]:
    with path.open() as f:
        return list(csv.DictReader(f))


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines()[1:]


# ------------------------------------------------------------------- hand-worked, in the engine
TWO_JOBS = {"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "walltime": 100, "res": 1, "profile": "c"},
                     {"id": 2, "subtime": 100, "walltime": 100, "res": 1, "profile": "c"}],
            "profiles": {"c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}}


def test_a_host_sleeps_after_the_timeout_and_is_woken_for_a_job(tmp_path):
    # dvfs2.xml: n0, n1, 1 core, pstate 0 at 1e8 flops/s, Idle 100 W, one busy core 200 W; sleep
    # pstate 2 at 10 W; switch-off = 1 flop at 0.5 f/s = 2 s at 150 W; switch-on = 1 flop at
    # 0.1 f/s = 10 s at 180 W. J1 (t=0) and J2 (t=100): 1 host, 1e9 flops = 10 s. FCFS, timeout 30 s:
    #   0-10    J1 on n0 (200 W)                  n1 idle since 0 (100 W)
    #   10      n0 idle since 10
    #   30      n1 idle 30 s -> switched off: 30-32 at 150 W, asleep from 32 (10 W)
    #   40      n0 idle 30 s -> switched off: 40-42 at 150 W, asleep from 42
    #   100     J2 arrives, no host awake: n0 (lowest id) woken, 100-110 at 180 W; n1 stays asleep
    #   110     n0 awake: J2 runs 110-120 (200 W); no job left: nothing more is armed, end at 120
    # Energy (J): n0 = 10x200 + 30x100 + 2x150 + 58x10 + 10x180 + 10x200 = 9680
    #             n1 = 30x100 + 2x150 + 88x10 = 4180                    total 13860
    # consumed_joules = E(120) - E(first submission, 0) = 13860 J.
    prefix = tmp_path / "out_"
    simulate(DVFS, [TWO_JOBS], get_policy("fcfs", {"idle_timeout": 30}), energy=True, export_prefix=prefix)
    jobs = {r["job_id"]: r for r in rows(tmp_path / "out_jobs.csv")}
    assert (jobs["1"]["starting_time"], jobs["1"]["allocated_resources"]) == ("0.000000", "0")
    assert (jobs["2"]["starting_time"], jobs["2"]["finish_time"], jobs["2"]["waiting_time"]) == \
        ("110.000000", "120.000000", "10.000000")
    assert jobs["2"]["allocated_resources"] == "0" and jobs["2"]["consumed_energy"] == "2000.000000"  # 10 s x 200 W
    # -2: towards a sleep pstate, -1: towards a computation pstate, then the pstate reached
    assert lines(tmp_path / "out_pstate_changes.csv") == [
        "0,0-1,0", "30,1,-2", "32,1,2", "40,0,-2", "42,0,2", "100,0,-1", "110,0,0"]
    sched = rows(tmp_path / "out_schedule.csv")[0]
    assert sched["consumed_joules"] == "13860.000000"
    assert (sched["nb_grouped_switches"], sched["nb_machine_switches"]) == ("3", "3")
    # the platform's energy at each energy row, cumulated by hand from the powers above:
    # 30: n0 10x200 + 20x100, n1 30x100 = 7000; 32: + 2x(100 + 150) = 7500; 40: + 8x(100 + 10) = 8380;
    # 42: + 2x(150 + 10) = 8700; 100: + 58x(10 + 10) = 9860; 110: + 10x(180 + 10) = 11760;
    # 120: + 10x(200 + 10) = 13860
    energy = [(float(r["time"]), float(r["energy"])) for r in rows(tmp_path / "out_consumed_energy.csv")]
    assert energy == [(0, 0), (10, 3000), (30, 7000), (32, 7500), (40, 8380), (42, 8700), (100, 9860),
                      (110, 11760), (110, 11760), (120, 13860)]


def test_without_the_option_the_same_jobs_cost_more_energy_and_wait_less(tmp_path):
    # Same run without idle_timeout: J2 starts at 100 on n0 and ends at 110; nothing switches.
    # Energy: n0 = 20 s x 200 W + 90 s x 100 W = 13000 J, n1 = 110 s x 100 W = 11000 J: 24000 J.
    prefix = tmp_path / "out_"
    simulate(DVFS, [TWO_JOBS], get_policy("fcfs"), energy=True, export_prefix=prefix)
    jobs = {r["job_id"]: r for r in rows(tmp_path / "out_jobs.csv")}
    assert jobs["2"]["starting_time"] == "100.000000"
    assert rows(tmp_path / "out_schedule.csv")[0]["consumed_joules"] == "24000.000000"
    assert lines(tmp_path / "out_pstate_changes.csv") == ["0,0-1,0"]


WALL_CLOCK = {"scheduling_time", "simulation_time"}  # wall-clock columns of out_schedule.csv


def _same_files(a: Path, b: Path) -> None:
    names = sorted(p.name for p in a.glob("out_*.csv"))
    assert names == sorted(p.name for p in b.glob("out_*.csv")) and len(names) == 5
    for name in names:
        ra, rb = rows(a / name), rows(b / name)
        assert len(ra) == len(rb), name
        for x, y in zip(ra, rb):
            assert {k: v for k, v in x.items() if k not in WALL_CLOCK} == \
                   {k: v for k, v in y.items() if k not in WALL_CLOCK}, name


@pytest.mark.parametrize("policy", ["fcfs", "easy"])
@pytest.mark.parametrize("options", [{"idle_timeout": None}, {"idle_timeout": math.inf}])
def test_no_switching_when_the_option_is_off_or_never_expires(tmp_path, policy, options):
    # null = off; an infinite timeout runs the whole machinery (idle clocks, hosts_wanted, EASY's
    # profile with waking_hosts) but no host is ever idle that long: the files must be those of a
    # run without the option, where no host ever switches.
    plain, other = tmp_path / "plain", tmp_path / "other"
    plain.mkdir(), other.mkdir()
    wl = RECORDED / "workload.json"
    simulate(RECORDED / "platform.xml", [wl], get_policy(policy), energy=True, export_prefix=plain / "out_")
    simulate(RECORDED / "platform.xml", [wl], get_policy(policy, options), energy=True,
             export_prefix=other / "out_")
    assert lines(plain / "out_pstate_changes.csv") == ["0,0-3,0"]
    _same_files(plain, other)


# ------------------------------------------------------------------ by hand, policy-level events
def hosts(n: int, sleepable=None, on_speed: float = 0.05) -> SimulationBegins:
    """``n`` 1-core hosts at 1e9 flops/s; those in ``sleepable`` (default all) have
    sleep_pstates 1:2:3, switch-off 1 flop at 0.25 f/s = 4 s, switch-on 1 flop at ``on_speed``."""
    sleepable = range(n) if sleepable is None else sleepable
    hs = [Host(id=i, name=f"h{i}", speeds=[1e9, 1e-9, 0.25, on_speed], cores=1,
               properties={"sleep_pstates": "1:2:3"} if i in sleepable else {}) for i in range(n)]
    return SimulationBegins(0.0, nb_resources=n, nb_compute_resources=n, compute_resources=hs)


def sub(t, n, res, wt):
    return JobSubmitted(t, job=Job(id=f"w0!{n}", workload="w0", subtime=t, walltime=float(wt), res=res,
                                   profile="p"))


def done(t, n, alloc):
    return JobCompleted(t, job_id=f"w0!{n}", alloc=ProcSet.from_str(alloc))


def switched(t, alloc, pstate):
    return ResourceStateChanged(t, resources=ProcSet.from_str(alloc), state=str(pstate))


def show(decisions):
    """Decisions as short tuples: ("run", job, hosts), ("pstate", hosts, state), ("call", at)."""
    out = []
    for d in decisions:
        if isinstance(d, ExecuteJob):
            out.append(("run", d.job_id.split("!")[1], str(d.alloc)))
        elif isinstance(d, SetResourceState):
            out.append(("pstate", str(d.resources), d.state))
        elif isinstance(d, CallMeLater):
            out.append(("call", d.at))
        else:
            out.append((type(d).__name__,))
    return out


def test_easy_reservation_counts_a_sleeping_host_only_after_its_wake_up_delay():
    # 3 hosts; wake-up 1 flop at 0.05 f/s = 20 s; switch-off 4 s; EASY, timeout 10 s.
    p = get_policy("easy", {"idle_timeout": 10})
    assert show(p.decide(0.0, [hosts(3)])) == [("call", 10.0)]          # all idle since 0
    # J1 (wt 100) on h0, J2 (wt 20) on h1; the timer armed for 10 already covers h2
    assert show(p.decide(0.0, [sub(0, 1, 1, 100), sub(0, 2, 1, 20)])) == [("run", "1", "0"), ("run", "2", "1")]
    # t=10: h2 idle 10 s -> sleep (it can be awake at 10 + 4 + 20 = 34 at the earliest)
    assert show(p.decide(10.0, [RequestedCall(10.0)])) == [("pstate", "2", "1")]
    assert p.waking_hosts() == [(34.0, 0b100)]
    assert show(p.decide(14.0, [switched(14.0, "2", 1)])) == []         # asleep: 14 + 20 = 34
    assert p.waking_hosts() == [(34.0, 0b100)]
    # t=15: J2 ends early; h1 idle since 15 -> timer at 25
    assert show(p.decide(15.0, [done(15.0, 2, "1")])) == [("call", 25.0)]
    # t=16: J3 needs 2 hosts; only h1 is awake and free, h0 runs J1 until 100 (walltime).
    # Counting asleep h2 as free now would start J3 now on h1-h2 (a sleeping host); ignoring it
    # would reserve 100 on h0-h1. With its wake-up delay: reservation at 16 + 20 = 36 on h1-h2,
    # and the base wakes h2 (J3 wants 2 hosts, 1 is free, none comes).
    assert show(p.decide(16.0, [sub(16, 3, 2, 50)])) == [("pstate", "2", "0")]
    assert (p.reservation is None) and p.head_reservation().start == 36.0
    assert p.head_reservation().hosts_mask == 0b110
    assert p.waking_hosts() == [(36.0, 0b100)]
    # t=17: J5 (wt 30) would end at 47 > 36 on the reserved h1: it waits (with h2 ignored, it
    # would have filled the gap before 100). t=18: J4 (wt 15) ends by 33 <= 36: it backfills on h1.
    assert show(p.decide(17.0, [sub(17, 5, 1, 30)])) == []
    assert p.reservation.start == 36.0
    assert show(p.decide(18.0, [sub(18, 4, 1, 15)])) == [("run", "4", "1")]
    # t=33: J4 ends; J5 still may not delay J3; h1 idle since 33 -> timer at 43
    assert show(p.decide(33.0, [done(33.0, 4, "1")])) == [("call", 43.0)]
    # t=36: h2 awake: J3 starts on h1-h2; J5 waits for a host
    assert show(p.decide(36.0, [switched(36.0, "2", 0)])) == [("run", "3", "1-2")]
    assert [j.name for j in p.queue] == ["5"]


def test_a_host_switching_off_is_counted_from_the_end_of_its_switch_plus_its_wake_up():
    p = get_policy("conservative", {"idle_timeout": 5})
    p.decide(0.0, [hosts(2)])
    p.decide(0.0, [sub(0, 1, 1, 100)])                                   # h0 busy until 100
    assert show(p.decide(5.0, [RequestedCall(5.0)])) == [("pstate", "1", "1")]
    # t=6: J2 (2 hosts): h1 is still switching off (until 9); it can be awake at 9 + 20 = 29.
    # It is not woken yet (Batsim ignores a request for a host in a virtual pstate).
    assert show(p.decide(6.0, [sub(6, 2, 1, 10)])) == []
    assert p.waking_hosts() == [(29.0, 0b10)]
    assert p.planned_reservations()[0].start == 29.0
    # t=9: asleep -> woken now, awake at 29; J2 starts then
    assert show(p.decide(9.0, [switched(9.0, "1", 1)])) == [("pstate", "1", "0")]
    assert show(p.decide(29.0, [switched(29.0, "1", 0)])) == [("run", "2", "1")]


@pytest.mark.parametrize("walltime, woken", [(15, False), (25, True)])
def test_no_wake_up_when_a_running_job_frees_a_host_first(walltime, woken):
    # FCFS, 2 hosts, switch-off 4 s, wake-up 20 s, timeout 1 s: both asleep from 5. J1 (1 host)
    # at 6 wakes h0 (awake at 26, J1 starts then). J2 (1 host) at 30: a woken h1 would be awake
    # at 30 + 20 = 50; J1 releases h0 by its walltime, 26 + 15 = 41 <= 50 (h0 comes first: no
    # wake-up) or 26 + 25 = 51 > 50 (h1 is woken).
    p = get_policy("fcfs", {"idle_timeout": 1})
    p.decide(0.0, [hosts(2)])
    assert show(p.decide(1.0, [RequestedCall(1.0)])) == [("pstate", "0-1", "1")]
    p.decide(5.0, [switched(5.0, "0-1", 1)])
    assert show(p.decide(6.0, [sub(6, 1, 1, walltime)])) == [("pstate", "0", "0")]
    assert show(p.decide(26.0, [switched(26.0, "0", 0)])) == [("run", "1", "0")]
    out = show(p.decide(30.0, [sub(30, 2, 1, 10)]))
    assert out == ([("pstate", "1", "0")] if woken else [])


def test_waiting_jobs_keep_the_idle_hosts_they_need_awake():
    # FCFS, 3 hosts, timeout 10: J0 holds h0 until 50; J1 needs all 3 hosts and waits. At 10, h1
    # and h2 have been idle 10 s, but J1 wants 3 hosts and only 2 are awake and free: they stay
    # awake (nothing is asleep to wake). At 50 J1 starts on the three.
    p = get_policy("fcfs", {"idle_timeout": 10})
    p.decide(0.0, [hosts(3)])
    p.decide(0.0, [sub(0, 0, 1, 100)])
    assert show(p.decide(1.0, [sub(1, 1, 3, 100)])) == []
    assert show(p.decide(10.0, [RequestedCall(10.0)])) == []
    assert show(p.decide(50.0, [done(50.0, 0, "0")])) == [("run", "1", "0-2")]


def test_hosts_wanted_is_the_policy_hook_and_the_highest_ids_sleep_first():
    # A policy that says it needs 1 host: of the 3 hosts idle for the timeout, 2 go to sleep,
    # the highest ids (policies place on the lowest).
    class KeepOne(POLICIES["fcfs"]):
        def hosts_wanted(self):
            return 1

    p = KeepOne({"idle_timeout": 10})
    p.decide(0.0, [hosts(3)])
    assert show(p.decide(10.0, [RequestedCall(10.0)])) == [("pstate", "1-2", "1")]


def test_hosts_without_sleep_pstates_are_never_switched():
    p = get_policy("easy", {"idle_timeout": 10})
    assert show(p.decide(0.0, [hosts(3, sleepable={1})])) == [("call", 10.0)]
    assert show(p.decide(10.0, [RequestedCall(10.0)])) == [("pstate", "1", "1")]  # h0, h2 stay awake
    assert show(p.decide(100.0, [RequestedCall(100.0)])) == []
    assert p.available == ProcSet(0, 2)


def test_a_platform_where_no_host_can_sleep_is_a_one_line_error():
    p = get_policy("fcfs", {"idle_timeout": 10})
    with pytest.raises(PolicyOptionError, match=r"^policy 'fcfs', option 'idle_timeout': no host can sleep, "
                                                r"host 'h0' \(and every other\) has no property sleep_pstates$"):
        p.decide(0.0, [hosts(2, sleepable=())])


def test_the_timer_is_always_in_the_future_and_never_armed_twice():
    # Batsim sends `now` with 6 decimals: a REQUESTED_CALL for 10 may read 9.9999996. The expiry
    # (10) is then within 1e-6 s: the host sleeps now, and no CALL_ME_LATER for <= now is sent
    # (Batsim 4.2.1 aborts on one).
    p = get_policy("fcfs", {"idle_timeout": 10})
    assert show(p.decide(0.0, [hosts(1)])) == [("call", 10.0)]
    assert show(p.decide(3.0, [Notify(3.0, type="hello")])) == []      # still armed for 10
    assert show(p.decide(9.9999996, [RequestedCall(9.9999996)])) == [("pstate", "0", "1")]


def test_nothing_is_armed_once_every_job_is_over():
    # After no_more_static_job_to_submit, with nothing running or waiting, a timer would only
    # keep the simulation alive (Batsim waits for its waiters): none is armed.
    p = get_policy("fcfs", {"idle_timeout": 10})
    p.decide(0.0, [hosts(1)])
    p.decide(1.0, [sub(1, 1, 1, 5)])
    assert show(p.decide(4.0, [done(4.0, 1, "0"), Notify(4.0, type="no_more_static_job_to_submit")])) == []


# ------------------------------------------------------------------------- every policy
RUNNABLE = ["fcfs", "easy", "conservative", "heft", "green-easy", "green-heft", "buc", "buc-easy"]


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_the_option_is_accepted_by_every_registered_policy(name):
    if name == "replay":  # plays recorded decisions: no shutdown of its own
        with pytest.raises(PolicyOptionError, match="has no option 'idle_timeout'"):
            get_policy(name, {"idle_timeout": 60, "transcript": "x.jsonl"})
        return
    assert "idle_timeout" in POLICIES[name].option_docs
    assert get_policy(name, {"idle_timeout": 60})._shutdown.timeout == 60.0
    assert get_policy(name)._shutdown is None
    for bad in (-1, "60", True):
        with pytest.raises(PolicyOptionError, match=f"policy '{name}': option 'idle_timeout' must be a number >= 0"):
            get_policy(name, {"idle_timeout": bad})


@pytest.mark.parametrize("name", RUNNABLE)
def test_every_policy_runs_with_the_option(name, tmp_path):
    # The fixture workload (12 jobs, idle gaps of about 100-250 s) with a 25 s timeout: every job
    # ends, hosts were put to sleep (-2 rows) and woken (-1 rows), never while running a job
    # (the engine raises, as Batsim aborts).
    prefix = tmp_path / "out_"
    simulate(RECORDED / "platform.xml", [RECORDED / "workload.json"], get_policy(name, {"idle_timeout": 25}),
             energy=True, compute_sharing=name.startswith("green"), export_prefix=prefix)
    assert len(rows(tmp_path / "out_jobs.csv")) == 12
    kinds = {r["new_pstate"] for r in rows(tmp_path / "out_pstate_changes.csv")}
    assert {"-2", "-1", "1", "0"} <= kinds


# ------------------------------------------------------------------- recorded real Batsim runs
def _close(a: str, b: str) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-6)
    except ValueError:
        return a == b


@pytest.mark.parametrize("name", ["fcfs", "easy"])
def test_engine_equals_recorded_real_batsim(name, tmp_path):
    # fixtures/batsim_shutdown/README.md: real Batsim 4.2.1 driven by the same policy with
    # idle_timeout 25. Every file, every row and column; times and energies within 1e-6; epower
    # NA in the same rows, and within 1e-3 elsewhere (Batsim's clock moves by 1e-10 s per internal
    # message on this Full-routing platform: after a decision it prints the power of that tiny
    # interval, with rounding noise; schedulers/engine/hosts.py, _energy_row).
    simulate(RECORDED / "platform.xml", [RECORDED / "workload.json"], get_policy(name, {"idle_timeout": 25}),
             energy=True, export_prefix=tmp_path / "out_")
    refs = sorted((RECORDED / name).glob("out_*.csv"))
    assert len(refs) == 5
    switched_off = [r for r in rows(RECORDED / name / "out_pstate_changes.csv") if r["new_pstate"] == "-2"]
    assert len(switched_off) >= 5  # the recording does exercise the shutdown
    for ref in refs:
        exp, got = rows(ref), rows(tmp_path / ref.name)
        assert len(got) == len(exp), ref.name
        for i, (g, e) in enumerate(zip(got, exp)):
            assert list(g) == list(e), ref.name
            for col in e:
                if col in WALL_CLOCK:
                    continue
                if col == "epower" and "NA" not in (g[col], e[col]):   # Batsim's 1e-10 s intervals: noise
                    assert math.isclose(float(g[col]), float(e[col]), rel_tol=1e-3), (name, ref.name, i)
                    continue
                assert _close(g[col], e[col]), f"{name}/{ref.name} row {i} {col}: {g[col]} != {e[col]}"


# --------------------------------------------------------------------------------- command line
def test_gridsched_run_refuses_the_option_without_energy(tmp_path, capsys):
    wl = tmp_path / "w.json"
    wl.write_text('{"nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],'
                  ' "profiles": {"d": {"type": "delay", "delay": 1}}}')
    code = main(["run", "--policy", "easy", "-p", str(DVFS), "-w", str(wl), "-o", str(tmp_path / "o"),
                 "--no-progress", "--policy-options", '{"idle_timeout": 60}'])
    assert code == 2
    assert "'idle_timeout'" in capsys.readouterr().err and not (tmp_path / "o").exists()


# ------------------------------------------------- which hosts are woken: the policy's choice
def test_easy_wakes_the_hosts_its_select_hosts_would_give_the_job():
    # An EASY that places on the highest ids. 3 hosts, timeout 10 s, switch-off 4 s, wake-up 20 s.
    # t=10: all idle 10 s, no job waits: all three sleep (one request, 4 s). t=20: J1 (1 host)
    # waits, nothing is awake: one host is woken, the one select_hosts picks among the hosts
    # J1 could use once awake (h0-h2): h2 (plain EASY wakes h0). t=40: h2 awake, J1 starts there.
    class HighestIds(POLICIES["easy"]):
        def select_hosts(self, candidates, job):
            ids = [i for i in range(candidates.bit_length()) if candidates >> i & 1]
            return sum(1 << i for i in ids[-job.res:])

    for policy, woken in ((HighestIds({"idle_timeout": 10}), "2"), (get_policy("easy", {"idle_timeout": 10}), "0")):
        assert show(policy.decide(0.0, [hosts(3)])) == [("call", 10.0)]
        assert show(policy.decide(10.0, [RequestedCall(10.0)])) == [("pstate", "0-2", "1")]
        assert show(policy.decide(14.0, [switched(14.0, "0-2", 1)])) == []
        assert show(policy.decide(20.0, [sub(20, 1, 1, 50)])) == [("pstate", woken, "0")]
        assert show(policy.decide(40.0, [switched(40.0, woken, 0)])) == [("run", "1", woken)]


def test_easy_wakes_for_the_queue_in_order_and_counts_the_awake_free_hosts():
    # Same HighestIds EASY, 4 hosts; h3 is awake and free, h0-h2 asleep. J1 needs 2 hosts:
    # select_hosts of pool {h0..h3} gives h2-h3, of which h2 sleeps: hosts_to_wake(asleep, 1) = h2
    # (the lowest ids would say h0). With J2 (1 host) behind: J1 takes h2-h3, J2 the highest of
    # the rest, h1: hosts_to_wake(asleep, 2) = h1-h2. Asked for 3, the picks name 2: the lowest
    # other sleeping id, h0, makes up the third.
    class HighestIds(POLICIES["easy"]):
        def select_hosts(self, candidates, job):
            ids = [i for i in range(candidates.bit_length()) if candidates >> i & 1]
            return sum(1 << i for i in ids[-job.res:])

    p = HighestIds()
    p.decide(0.0, [hosts(4)])
    p._available.set_mask(0b1000)   # h3 awake and free; h0-h2 asleep (never started in this test)
    p.queue = [Job(id="w0!1", workload="w0", subtime=0, walltime=10, res=2, profile="p")]
    assert p.hosts_to_wake(0b0111, 1) == 0b0100
    p.queue.append(Job(id="w0!2", workload="w0", subtime=0, walltime=10, res=1, profile="p"))
    assert p.hosts_to_wake(0b0111, 2) == 0b0110
    assert p.hosts_to_wake(0b0111, 3) == 0b0111


def test_heft_wakes_the_fastest_sleeping_host():
    # HEFT places on the fastest hosts: h0, h1 at 1 Gf/s, h2 at 2 Gf/s (pstate 0), all asleep
    # from 14 (switch-off 4 s). J1 (1 host) at 20 wakes h2 (awake at 40), not h0.
    begins = hosts(3)
    begins.compute_resources[2].speeds = [2e9, 1e-9, 0.25, 0.05]
    p = get_policy("heft", {"idle_timeout": 10})
    assert show(p.decide(0.0, [begins])) == [("call", 10.0)]
    assert show(p.decide(10.0, [RequestedCall(10.0)])) == [("pstate", "0-2", "1")]
    p.decide(14.0, [switched(14.0, "0-2", 1)])
    assert show(p.decide(20.0, [sub(20, 1, 1, 50)])) == [("pstate", "2", "0")]
    assert show(p.decide(40.0, [switched(40.0, "2", 0)])) == [("run", "1", "2")]


def test_a_wake_choice_outside_the_sleeping_hosts_is_a_policy_error():
    class Bad(POLICIES["fcfs"]):
        def hosts_to_wake(self, asleep, n):
            return 1 << 5

    p = Bad({"idle_timeout": 10})
    p.decide(0.0, [hosts(2)])
    p.decide(10.0, [RequestedCall(10.0)])
    p.decide(14.0, [switched(14.0, "0-1", 1)])
    with pytest.raises(PolicyError, match=r"^policy Bad failed in hosts_to_wake \(.*test_shutdown\.py, line \d+\): it "
                                          r"chose 5 where 1 of the sleeping hosts 0-1 were asked for$"):
        p.decide(20.0, [sub(20, 1, 1, 50)])


OWNED = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="z" routing="Full">
  <host id="master_host" speed="100Mf"/>
  <host id="a0" speed="1Gf, 1e-9Mf, 0.25f, 0.05f" core="1">
    <prop id="wattage_per_state" value="100:200, 10:10, 150:150, 180:180"/>
    <prop id="wattage_off" value="5"/><prop id="sleep_pstates" value="1:2:3"/><prop id="owner" value="alice"/>
  </host>
  <host id="b0" speed="1Gf, 1e-9Mf, 0.25f, 0.05f" core="1">
    <prop id="wattage_per_state" value="100:200, 10:10, 150:150, 180:180"/>
    <prop id="wattage_off" value="5"/><prop id="sleep_pstates" value="1:2:3"/><prop id="owner" value="bob"/>
  </host>
</zone>
</platform>
"""


def test_osep_wakes_the_host_of_the_user_who_waits(tmp_path):
    # a0 (id 0, alice) and b0 (id 1, bob): 1 core, 1 Gf, Idle 100 W, busy 200 W, sleep 10 W,
    # switch-off 1 flop at 0.25 f/s = 4 s at 150 W, switch-on 1 flop at 0.05 f/s = 20 s at 180 W.
    # OSEP, timeout 10 s; bob's B1 (10 Gflop = 10 s) arrives at 30:
    #   0-10   both idle (100 W)          10-14 both switching off (150 W)     14- asleep (10 W)
    #   30     B1 waits: bob's own b0 is woken (30-50 at 180 W; the lowest id would be alice's a0)
    #   50-60  B1 on b0 (200 W); then nothing runs or waits: nothing more switches, end at 60.
    # consumed_joules = E(60) - E(first submission, 30): a0 30 x 10 = 300, b0 20 x 180 + 10 x 200
    # = 5600: 5900 J.
    plat = tmp_path / "owned.xml"
    plat.write_text(OWNED)
    wl = {"nb_res": 2, "jobs": [{"id": "B1", "user": "bob", "subtime": 30, "res": 1, "walltime": -1, "profile": "b"}],
          "profiles": {"b": {"type": "parallel_homogeneous", "cpu": 10e9, "com": 0}}}
    simulate(plat, [wl], get_policy("osep", {"idle_timeout": 10}), energy=True, dynamic_jobs=True,
             forward_profiles=True, export_prefix=tmp_path / "out_")
    job = rows(tmp_path / "out_jobs.csv")[0]
    assert (job["starting_time"], job["finish_time"], job["allocated_resources"], job["consumed_energy"]) == \
        ("50.000000", "60.000000", "1", "2000.000000")
    assert lines(tmp_path / "out_pstate_changes.csv") == ["0,0-1,0", "10,0-1,-2", "14,0-1,1", "30,1,-1", "50,1,0"]
    assert rows(tmp_path / "out_schedule.csv")[0]["consumed_joules"] == "5900.000000"


def test_owner_share_hosts_wanted_leaves_out_a_task_waiting_for_a_kill():
    # OSEP, a0 (alice) and b0 (bob), rounds every 60 s. bob's B1, B2 take both hosts at 0; alice's
    # A1 at 30 waits: 1 host wanted. Round at 60: f_alice = 1 - 0 = 1 > 0 with a ready task,
    # f_bob = 1 - 2 = -1: B2 (ran as long as B1, the later arrival index) is killed and A1
    # reserved its host b0. A1 is still waiting for Batsim (the base's default count says 1), but
    # needs no other host: hosts_wanted = 0. The kill's JOB_KILLED brings B2's restart B2#1,
    # which does wait for a host: 1; A1 starts on b0.
    from schedulers.core.events import JobKilled, KillJobs
    from schedulers.core.shutdown import waiting_hosts

    begins = hosts(2, sleepable=())
    for h, owner in zip(begins.compute_resources, ("alice", "bob")):
        h.properties["owner"] = owner
    prof = {"type": "parallel_homogeneous", "cpu": 1e12, "com": 0}

    def job(t, n, user):
        return JobSubmitted(t, job=Job(id=f"w0!{n}", workload="w0", subtime=t, walltime=-1.0, res=1, profile="p",
                                       extra={"user": user}, profile_data=prof))

    p = get_policy("osep", {"period": 60})
    p.decide(0.0, [begins])
    assert show(p.decide(0.0, [job(0, "B1", "bob"), job(0, "B2", "bob")])) == [("run", "B1", "0"), ("run", "B2", "1")]
    assert show(p.decide(30.0, [job(30, "A1", "alice")])) == [("call", 60.0)]
    assert p.hosts_wanted() == 1 == waiting_hosts(p)
    out = p.decide(60.0, [RequestedCall(60.0)])
    assert [type(d) for d in out] == [KillJobs] and out[0].job_ids == ["w0!B2"]
    assert (p.hosts_wanted(), waiting_hosts(p)) == (0, 1)
    out = show(p.decide(60.0, [JobCompleted(60.0, job_id="w0!B2", job_state="COMPLETED_KILLED",
                                            alloc=ProcSet(1)),
                               JobKilled(60.0, job_ids=["w0!B2"], job_progress={"w0!B2": {"progress": 0.06}})]))
    assert ("run", "A1", "1") in out
    assert p.hosts_wanted() == 1   # B2#1
