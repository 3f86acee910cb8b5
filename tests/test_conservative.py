"""Conservative backfilling and the pluggable host choice of the reservation profile.

Schedules are worked out by hand in the comments: one row per host, time to the right, ``Jn`` =
job ``n`` running, ``.`` idle; ``res`` hosts, walltime ``wt`` (s), runtime ``rt`` (s). Job ``n`` is
``w0!n``; allocations are Batsim interval strings. The profile a conservative pass builds is
written as its slices: ``[t0, t1): free hosts``.
"""

from __future__ import annotations

import heapq
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from schedulers.cli import main
from schedulers.conservative import Conservative
from schedulers.core.backfilling import ReservationProfile
from schedulers.core.events import ExecuteJob, JobCompleted, JobSubmitted, RejectJob, SimulationBegins
from schedulers.core.model import Host, Job
from schedulers.easy import EASY
from schedulers.engine import simulate
from schedulers.registry import POLICIES, PolicyOptionError, get_policy

INF = math.inf
#: The hand-worked schedules below reserve exactly the walltime (batsched's rjms_delay, 5 s by
#: default, is tested in tests/test_conservative_classic.py).
EXACT = {"rjms_delay": 0}


# ----------------------------------------------------------------------------------- helpers
def begins(n: int) -> SimulationBegins:
    hosts = [Host(id=i, name=f"host{i}") for i in range(n)]
    return SimulationBegins(0.0, nb_resources=n, nb_compute_resources=n, compute_resources=hosts)


def sub(t: float, n: int, res: int, wt: float) -> JobSubmitted:
    return JobSubmitted(t, job=Job(id=f"w0!{n}", workload="w0", subtime=t, walltime=float(wt),
                                   res=res, profile="p"))


def done(t: float, n: int, alloc: str) -> JobCompleted:
    return JobCompleted(t, job_id=f"w0!{n}", alloc=ProcSet.from_str(alloc))


def run(policy, now, *events):
    """Feed one message; its decisions as ``[(job name, alloc), ...]``."""
    out = []
    for d in policy.decide(now, list(events)):
        assert isinstance(d, ExecuteJob), d
        out.append((d.job_id.split("!")[1], str(d.alloc)))
    return out


def new(policy, n_hosts):
    assert run(policy, 0.0, begins(n_hosts)) == []
    return policy


def plan(p: Conservative):
    """``[(job name, start, hosts), ...]`` of the reservations a pass would make now."""
    return [(r.job.name, r.start, str(r.hosts)) for r in p.planned_reservations()]


def highest_bits(mask: int, n: int) -> int:
    """The ``n`` highest set bits of ``mask`` (a host choice: highest ids first)."""
    out = 0
    for _ in range(n):
        top = 1 << (mask.bit_length() - 1)
        out |= top
        mask ^= top
    return out


def engine_run(tmp_path, policy, jobs):
    """Run ``jobs`` = [(name, res, walltime, delay)], all submitted at 0, on 4 hosts h0-h3 (ids
    0-3) in the embedded engine; ``{name: (start, finish, alloc)}``, times to the 6 decimals of
    Batsim's ``out_jobs.csv`` (on this Full zone each decision crosses SimGrid's loopback: a job
    starts a few 1e-10 s after its instant)."""
    plat = tmp_path / "four.xml"
    plat.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM 'https://simgrid.org/simgrid.dtd'>\n"
                    "<platform version='4.1'><zone id='z' routing='Full'>"
                    "<host id='master_host' speed='1Gf'/>"
                    + "".join(f"<host id='h{i}' speed='1Gf'/>" for i in range(4))
                    + "</zone></platform>\n")
    work = tmp_path / "jobs.json"
    work.write_text(json.dumps({
        "nb_res": 4,
        "jobs": [{"id": n, "subtime": 0, "res": r, "walltime": wt, "profile": f"d{d}"} for n, r, wt, d in jobs],
        "profiles": {f"d{d}": {"type": "delay", "delay": d} for _, _, _, d in jobs}}))
    result = simulate(plat, [work], policy)
    return {j.name: (round(j.start, 6), round(j.finish, 6), str(j.alloc)) for j in result.jobs}


# ----------------------------------------------------------------------- pluggable host choice
def test_profile_search_takes_a_host_choice():
    #   host 3 | A A A A A | . . .
    #   host 2 | A A A A A | . . .
    #   host 1 | A A A A A | . . .
    #   host 0 | . . . . . | . . .
    #          0           10
    p = ReservationProfile.from_ends(0.0, ProcSet((0, 3)), [(10.0, ProcSet((1, 3)))])
    # 2 hosts for 5 s: first at 10, where 0-3 are free: the default takes 0-1, highest-first 2-3
    assert p.find_earliest(2, 5.0) == (10.0, ProcSet((0, 1)))
    assert p.find_earliest(2, 5.0, choose=highest_bits) == (10.0, ProcSet((2, 3)))
    assert p.find_earliest_mask(3, 5.0, choose=highest_bits) == (10.0, 0b1110)
    # the choice never changes the start: 1 host now, only host 0 is free during [0, 5)
    assert p.find_earliest(1, 5.0, choose=highest_bits) == (0.0, ProcSet(0))
    assert p.fits_now(1, 50.0, choose=highest_bits) == ProcSet(0)
    assert p.fits_now(2, 1.0, choose=highest_bits) is None
    # a choice that breaks the rules is an error, not a silent double booking
    with pytest.raises(ValueError, match="host choice returned 1 for 1 hosts among 0"):
        p.fits_now(1, 5.0, choose=lambda cand, n: 0b10)  # host 1 is busy until 10
    with pytest.raises(ValueError, match="host choice returned 0-3 for 2 hosts"):
        p.find_earliest(2, 5.0, choose=lambda cand, n: cand)  # 4 hosts for a 2-host request


class HighestFirstEASY(EASY):
    name = "easy-high"

    def select_hosts(self, candidates, job):
        return highest_bits(candidates, job.res)


class HighestFirstConservative(Conservative):
    name = "conservative-high"

    def select_hosts(self, candidates, job):
        return highest_bits(candidates, job.res)


def test_easy_reserves_on_the_hosts_its_select_hosts_picks():
    # 4 hosts, highest ids first. J1 (3 hosts, wt 10) starts on 1-3; host 0 stays free.
    # Head J2 (2 hosts, wt 10) is reserved at 10 among 0-3 (all free during [10, 20)): on 2-3.
    # J3 (1 host, wt 100, ends 100 > 10) may only use a free host J2's reservation does not need:
    # host 0. (With the reservation on the lowest ids, 0-1, host 0 would be reserved and J3 would
    # wait.)
    #   host 3 | J1 J1 | J2 J2 | .
    #   host 2 | J1 J1 | J2 J2 | .
    #   host 1 | J1 J1 | . . . . .
    #   host 0 | J3 J3 J3 J3 J3 J3 J3 ...
    #          0       10      20
    p = new(HighestFirstEASY(), 4)
    assert run(p, 0.0, sub(0, 1, 3, 10), sub(0, 2, 2, 10), sub(0, 3, 1, 100)) == [("1", "1-3"), ("3", "0")]
    r = p.head_reservation()
    assert (r.job.name, r.start, str(r.hosts)) == ("2", 10.0, "2-3")
    assert run(p, 10.0, done(10, 1, "1-3")) == [("2", "2-3")]


def test_conservative_reserves_on_the_hosts_its_select_hosts_picks():
    # Same jobs. Pass at 0, highest ids first:
    #   J1 fits now: 3 of 0-3 -> 1-3.     profile [0, 10): 0; [10, inf): 0-3
    #   J2 (2, wt 10): at 10 on 2-3.      profile [0, 10): 0; [10, 20): 0-1; [20, inf): 0-3
    #   J3 (1, wt 100): [0, 100) only host 0 is free throughout -> starts now on 0.
    # (Lowest ids would reserve 0-1 for J2, and J3 could not start before 20.)
    p = new(HighestFirstConservative(EXACT), 4)
    assert run(p, 0.0, sub(0, 1, 3, 10), sub(0, 2, 2, 10), sub(0, 3, 1, 100)) == [("1", "1-3"), ("3", "0")]
    assert plan(p) == [("2", 10.0, "2-3")]
    assert run(p, 10.0, done(10, 1, "1-3")) == [("2", "2-3")]


# ------------------------------------------------------------------- conservative versus EASY
# 4 hosts, all submitted at 0, runtimes = walltimes:
#   J1 res 2 wt 10, J2 res 3 wt 10, J3 res 4 wt 10, J4 res 1 wt 30, J5 res 1 wt 10.
#
# EASY. At 0: J1 on 0-1. Head J2 reserved at 10 on 0-2 (J1's end); the only free host it does not
# need is 3. J3 (4 hosts) does not fit now. J4 ends at 30 > 10 but takes host 3, which the head
# does not need: backfilled. J5 ends at 10 <= 10: backfilled on 2. At 10: J2 on 0-2; head J3
# needs host 3, held by J4 until 30: J3 starts at 30. J4 delayed J3, the second queued job.
#   host 3 | J4 J4 J4 J4 J4 J4 | J3 J3 |
#   host 2 | J5 J5 | J2 J2 | . | J3 J3 |
#   host 1 | J1 J1 | J2 J2 | . | J3 J3 |
#   host 0 | J1 J1 | J2 J2 | . | J3 J3 |
#          0       10      20  30      40
#
# Conservative. Pass at 0:
#   J1 fits now on 0-1.                    [0, 10): 2-3; [10, inf): 0-3
#   J2 (3, wt 10): at 10 on 0-2.           [0, 10): 2-3; [10, 20): 3; [20, inf): 0-3
#   J3 (4, wt 10): at 20 on 0-3.           ...; [20, 30): none; [30, inf): 0-3
#   J4 (1, wt 30): every window starting before 30 crosses [20, 30): at 30 on 0.
#   J5 (1, wt 10): [0, 10) on 2-3 -> starts now on 2 (the only backfilled job).
# At 10: J2 on 0-2; J3 at 20, J4 at 30 again. At 20: J3 on 0-3. At 30: J4 on 0.
#   host 3 | . . . | . . . | J3 J3 | . . . . . .
#   host 2 | J5 J5 | J2 J2 | J3 J3 | . . . . . .
#   host 1 | J1 J1 | J2 J2 | J3 J3 | . . . . . .
#   host 0 | J1 J1 | J2 J2 | J3 J3 | J4 J4 J4 J4 J4 J4 |
#          0       10      20      30                  60
SECOND_JOB_JOBS = [(1, 2, 10), (2, 3, 10), (3, 4, 10), (4, 1, 30), (5, 1, 10)]


def _second_job_pass(policy):
    p = new(policy, 4)
    return p, run(p, 0.0, *(sub(0, n, r, wt) for n, r, wt in SECOND_JOB_JOBS))


def test_easy_backfills_a_job_that_conservative_holds_back():
    _, easy = _second_job_pass(EASY())
    assert easy == [("1", "0-1"), ("4", "3"), ("5", "2")]
    p, cons = _second_job_pass(Conservative(EXACT))
    assert cons == [("1", "0-1"), ("5", "2")]
    assert plan(p) == [("2", 10.0, "0-2"), ("3", 20.0, "0-3"), ("4", 30.0, "0")]
    assert (p.reservation.job.name, p.reservation.start) == ("2", 10.0)
    assert run(p, 10.0, done(10, 1, "0-1"), done(10, 5, "2")) == [("2", "0-2")]
    assert plan(p) == [("3", 20.0, "0-3"), ("4", 30.0, "0")]
    assert run(p, 20.0, done(20, 2, "0-2")) == [("3", "0-3")]
    assert run(p, 30.0, done(30, 3, "0-3")) == [("4", "0")]
    assert p.metrics() == {"backfilled_jobs": 1.0}


def test_second_job_schedules_in_the_engine(tmp_path):
    # The schedules drawn above, through the embedded engine (delay = walltime: each job is
    # stopped at its walltime, at the time drawn).
    jobs = [(str(n), r, wt, wt) for n, r, wt in SECOND_JOB_JOBS]
    easy = engine_run(tmp_path, EASY(), jobs)
    assert easy == {"1": (0, 10, "0-1"), "2": (10, 20, "0-2"), "3": (30, 40, "0-3"),
                    "4": (0, 30, "3"), "5": (0, 10, "2")}
    pol = get_policy("conservative", EXACT)
    cons = engine_run(tmp_path, pol, jobs)
    assert cons == {"1": (0, 10, "0-1"), "2": (10, 20, "0-2"), "3": (20, 30, "0-3"),
                    "4": (30, 60, "0"), "5": (0, 10, "2")}
    assert pol.metrics() == {"backfilled_jobs": 1.0}


def test_reservation_limit_option():
    # reservations=1: only the head (J2) is protected, as in EASY: J4 starts at 0 on host 3.
    # reservations=2: J2 and J3 are protected; J4 (third waiting job) may only start now, and
    # cannot without delaying J3; J5 still can.
    assert _second_job_pass(Conservative({"reservations": 1, **EXACT}))[1] == [("1", "0-1"), ("4", "3"), ("5", "2")]
    p, decided = _second_job_pass(get_policy("conservative", {"reservations": 2, **EXACT}))
    assert decided == [("1", "0-1"), ("5", "2")]
    assert p.reservation_limit == 2
    assert plan(p) == [("2", 10.0, "0-2"), ("3", 20.0, "0-3")]  # J4 gets no reservation


@pytest.mark.parametrize("bad", [0, -1, 1.0, "2", True, [2]])
def test_reservation_limit_must_be_a_positive_integer(bad):
    with pytest.raises(PolicyOptionError, match="'reservations' must be an integer >= 1"):
        get_policy("conservative", {"reservations": bad})


def test_registry_and_command_line_listing(capsys):
    assert POLICIES["conservative"] is Conservative
    assert Conservative.option_docs.keys() == {"reservations", "rjms_delay", "recompute", "idle_timeout"}
    with pytest.raises(PolicyOptionError,
                       match="has no option 'depth'; its options: idle_timeout, recompute, reservations, rjms_delay$"):
        get_policy("conservative", {"depth": 1})
    assert main(["policies"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split(None, 1) for ln in lines if ln.startswith("conservative ")] == [
        ["conservative", Conservative.summary]]


# ------------------------------------------------------------------------------ compression
# 4 hosts, all submitted at 0:
#   J1 res 2 wt 100 rt 20, J2 res 2 wt 50 rt 50, J3 res 3 wt 10 rt 10, J4 res 1 wt 30 rt 30.
# Pass at 0: J1 on 0-1, J2 on 2-3.       [0, 50): none; [50, 100): 2-3; [100, inf): 0-3
#   J3 (3, wt 10): at 100 on 0-2.        ...; [100, 110): 3; [110, inf): 0-3
#   J4 (1, wt 30): [50, 80) on 2 fits in [50, 100): at 50 on 2.
# J1 ends at 20, 80 s before its walltime. Pass at 20: [20, 100) on 0-1 is free again;
#                                        [20, 50): 0-1; [50, 80): 0-1 3; [80, 100): 0-3; ...
# Compression in queue order, each job removed and inserted again first fit, the others in place:
#   J3 (3, wt 10): at 20 only 0-1 are free; at 50 hosts 0-1 and 3 (J4 keeps host 2 until 80):
#   at 50 on 0-1,3 (from 100).           [20, 50): 0-1; [50, 60): none; [60, 80): 0-1 3; ...
#   J4 (1, wt 30): [20, 50) on 0 ends when J3 starts: starts now (its reservation was 50).
# At 50 (J2 and J4 end): J3 is removed and inserted again: now, every host free, on the lowest
# ids 0-2 (the host choice is made again at the same start), until 60.
#   host 3 | J2 J2 J2 J2 J2 | . .
#   host 2 | J2 J2 J2 J2 J2 | J3
#   host 1 | J1 | . . . . . | J3
#   host 0 | J1 | J4 J4 J4  | J3
#          0    20          50  60
COMPRESSION_JOBS = [("1", 2, 100, 20), ("2", 2, 50, 50), ("3", 3, 10, 10), ("4", 1, 30, 30)]


def test_compression_when_a_job_ends_early():
    p = new(Conservative(EXACT), 4)
    assert run(p, 0.0, *(sub(0, int(n), r, wt) for n, r, wt, _ in COMPRESSION_JOBS)) == [
        ("1", "0-1"), ("2", "2-3")]
    assert plan(p) == [("3", 100.0, "0-2"), ("4", 50.0, "2")]
    assert run(p, 20.0, done(20, 1, "0-1")) == [("4", "0")]
    assert plan(p) == [("3", 50.0, "0-1 3")]
    assert run(p, 50.0, done(50, 2, "2-3"), done(50, 4, "0")) == [("3", "0-2")]
    assert p.metrics() == {"backfilled_jobs": 1.0}  # J4, started at 20 while J3 waited


def test_compression_in_the_engine(tmp_path):
    got = engine_run(tmp_path, Conservative(EXACT), COMPRESSION_JOBS)
    assert got == {"1": (0, 20, "0-1"), "2": (0, 50, "2-3"), "3": (50, 60, "0-2"), "4": (20, 50, "0")}


def test_rebuild_can_push_a_later_reservation_back():
    # recompute=true: compression is a rebuild in queue order, a job ahead may take the time a
    # later job had.
    # 4 hosts: J1 res 2 wt 100 rt 20, J2 res 2 wt 50, J3 res 4 wt 10, J4 res 2 wt 50.
    # Pass at 0: J1 on 0-1, J2 on 2-3.   [0, 50): none; [50, 100): 2-3; [100, inf): 0-3
    #   J3 (4): at 100 on 0-3; J4 (2, wt 50): [50, 100) on 2-3 fits: at 50.
    # J1 ends at 20. Rebuild:            [20, 50): 0-1; [50, inf): 0-3
    #   J3: at 50 on 0-3 (earlier by 50 s)  ...; [50, 60): none; [60, inf): 0-3
    #   J4: any window starting before 60 crosses [50, 60): at 60 on 0-1, 10 s later than its
    #   reservation at 0.
    p = new(Conservative({"recompute": True}), 4)
    assert run(p, 0.0, sub(0, 1, 2, 100), sub(0, 2, 2, 50), sub(0, 3, 4, 10), sub(0, 4, 2, 50)) == [
        ("1", "0-1"), ("2", "2-3")]
    assert plan(p) == [("3", 100.0, "0-3"), ("4", 50.0, "2-3")]
    assert run(p, 20.0, done(20, 1, "0-1")) == []
    assert plan(p) == [("3", 50.0, "0-3"), ("4", 60.0, "0-1")]
    assert run(p, 50.0, done(50, 2, "2-3")) == [("3", "0-3")]
    assert run(p, 60.0, done(60, 3, "0-3")) == [("4", "0-1")]


def test_classic_compression_never_pushes_a_job_back():
    # The same jobs, classic (kept reservations). J1 ends at 20: [20, 100) on 0-1 is free again.
    #                                    [20, 50): 0-1; [50, 100): none; [100, 110): none; ...
    #   J3 (4, wt 10) removed: 4 hosts are free together only from 100 (J4 keeps 2-3 in
    #   [50, 100)): back at 100 on 0-3, not later.
    #   J4 (2, wt 50) removed: [20, 70) on 0-1 ends before J3's 100: starts now, 30 s earlier.
    # J2 ends at 50: J3 removed again, 4 hosts are free from J4's end at 70: at 70 on 0-3.
    p = new(Conservative(EXACT), 4)
    assert run(p, 0.0, sub(0, 1, 2, 100), sub(0, 2, 2, 50), sub(0, 3, 4, 10), sub(0, 4, 2, 50)) == [
        ("1", "0-1"), ("2", "2-3")]
    assert plan(p) == [("3", 100.0, "0-3"), ("4", 50.0, "2-3")]
    assert run(p, 20.0, done(20, 1, "0-1")) == [("4", "0-1")]
    assert plan(p) == [("3", 100.0, "0-3")]
    assert run(p, 50.0, done(50, 2, "2-3")) == []
    assert plan(p) == [("3", 70.0, "0-3")]
    assert run(p, 70.0, done(70, 4, "0-1")) == [("3", "0-3")]


# ---------------------------------------------------------------------- jobs without walltime
def test_waiting_job_without_walltime_is_reserved_forever():
    # 4 hosts, all at 0. J1 res 3 wt 10 on 0-2.    [0, 10): 3; [10, inf): 0-3
    #   J2 res 2, no walltime: hosts free forever from 10: 0-1, reserved [10, inf).
    #                                              [0, 10): 3; [10, inf): 2-3
    #   J3 res 3 wt 5: 3 hosts are never free again (0-1 held by J2 for ever): no finite start,
    #   J3 gets start inf; jobs without walltime after it may not start (J5), others may.
    #   J4 res 1 wt 5: [0, 5) on 3: starts now.
    #   J5 res 1, no walltime: barred by J3 (host 3 or 2 would be held for ever).
    p = new(Conservative(EXACT), 4)
    assert run(p, 0.0, sub(0, 1, 3, 10), sub(0, 2, 2, -1), sub(0, 3, 3, 5), sub(0, 4, 1, 5),
               sub(0, 5, 1, -1)) == [("1", "0-2"), ("4", "3")]
    assert plan(p) == [("2", 10.0, "0-1"), ("3", INF, "2-3"), ("5", INF, "2-3")]
    # J4 ends at 5: host 3 is free, but nothing may take it (same plan).
    assert run(p, 5.0, done(5, 4, "3")) == []
    # At 10 J2 starts on 0-1 (no walltime: held forever); J3 still cannot get 3 hosts, J5 waits.
    assert run(p, 10.0, done(10, 1, "0-2")) == [("2", "0-1")]
    assert plan(p) == [("3", INF, "2-3"), ("5", INF, "2-3")]
    # J2 ends at 30: J3 on 0-2, then J5 (no walltime) on host 3, free for ever.
    assert run(p, 30.0, done(30, 2, "0-1")) == [("3", "0-2"), ("5", "3")]


def test_running_job_without_walltime_bars_like_easy():
    # 4 hosts. J1 (no walltime) holds 0-2 for ever: J2 (2 hosts) has no finite reservation
    # (start inf, on the hosts that do free: 3). J3 (no walltime) may not start, J4 (wt 1000) may,
    # as behind EASY's head (tests/test_policies.py, same jobs).
    for policy in (EASY(), Conservative(EXACT)):
        p = new(policy, 4)
        assert run(p, 0.0, sub(0, 1, 3, -1), sub(0, 2, 2, 10), sub(0, 3, 1, -1), sub(0, 4, 1, 1000)) == [
            ("1", "0-2"), ("4", "3")]
        assert (p.reservation.start, str(p.reservation.hosts)) == (INF, "3")
        assert run(p, 1000.0, done(1000, 4, "3")) == []
        assert run(p, 2000.0, done(2000, 1, "0-2")) == [("2", "0-1"), ("3", "2")]


def test_zero_walltime_job_still_holds_its_hosts_now():
    # Batsim wants walltime > 0 or -1, but a policy may be handed a 0: the job starting now on
    # host 0 must keep the next one off host 0 (an empty window would leave it free in the
    # profile). 1 host, J1 and J2 with walltime 0: J1 starts, J2 waits.
    for policy in (EASY(), Conservative(EXACT)):
        p = new(policy, 1)
        assert run(p, 0.0, sub(0, 1, 1, 0), sub(0, 2, 1, 0)) == [("1", "0")]
        assert run(p, 0.0, done(0, 1, "0")) == [("2", "0")]


# -------------------------------------------------------------------------- random workloads
def replay(policy, n_hosts, jobs):
    """Batsim-like loop: ``jobs`` = [(subtime, res, walltime, runtime)]; every event of one time
    is one message. Returns ``{name: (start, alloc)}``, the rejected names, the start each job was
    given by the first pass that saw it (conservative without limit only: ``{name: start}``) and the start of
    the reservation each job had when it first became the queue head."""
    assert run(policy, 0.0, begins(n_hosts)) == []
    heap = [(t, 1, k, "sub", k) for k, (t, *_rest) in enumerate(jobs)]
    heapq.heapify(heap)
    starts, rejected, first_plan, head_bound, busy = {}, set(), {}, {}, set()
    seq = len(jobs)
    while heap:
        t = heap[0][0]
        events, new_names = [], []
        while heap and heap[0][0] == t:
            _, _, _, kind, k = heapq.heappop(heap)
            if kind == "sub":
                events.append(sub(t, k, jobs[k][1], jobs[k][2]))
                new_names.append(str(k))
            else:
                events.append(done(t, k, str(starts[str(k)][1])))
                busy -= set(starts[str(k)][1])
        for d in policy.decide(float(t), events):
            name = d.job_id.split("!")[1]
            if isinstance(d, RejectJob):
                rejected.add(name)
                continue
            assert isinstance(d, ExecuteJob) and len(d.alloc) == jobs[int(name)][1]
            assert not busy & set(d.alloc), f"{name} on busy hosts at {t}"
            busy |= set(d.alloc)
            starts[name] = (t, d.alloc)
            seq += 1
            heapq.heappush(heap, (t + jobs[int(name)][3], 0, seq, "done", int(name)))
        assert policy.available_mask.bit_count() == n_hosts - len(busy)
        if isinstance(policy, Conservative) and policy.reservation_limit is None:
            planned = {r.job.name: r.start for r in policy.planned_reservations()}
            assert all(s > t for s in planned.values())  # a pass leaves nothing that could start
            for name in new_names:
                if name not in rejected:
                    first_plan[name] = starts[name][0] if name in starts else planned[name]
        if policy.queue and policy.queue[0].name not in head_bound:
            head_bound[policy.queue[0].name] = policy.head_reservation().start
    return starts, rejected, first_plan, head_bound


@st.composite
def workloads(draw, exact=False, no_walltime=True):
    n_hosts = draw(st.integers(1, 6))
    jobs = []
    walltimes = [1, 2, 3, 5, 8, 13, 20] + ([-1] if no_walltime else [])
    for _ in range(draw(st.integers(1, 14))):
        t = draw(st.integers(0, 30))
        res = draw(st.integers(1, n_hosts + 1))  # n_hosts + 1: rejected
        wt = draw(st.sampled_from(walltimes))
        if wt < 0:
            rt = draw(st.integers(1, 20))
        else:
            rt = wt if exact or draw(st.booleans()) else draw(st.integers(1, wt))
        jobs.append((t, res, wt, rt))
    jobs.sort(key=lambda j: j[0])
    return n_hosts, jobs


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_one_reservation_makes_easy_decisions(w):
    n_hosts, jobs = w
    easy = replay(EASY(), n_hosts, jobs)
    cons = replay(Conservative({"reservations": 1, **EXACT}), n_hosts, jobs)
    assert cons[0] == easy[0] and cons[1] == easy[1]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_every_job_runs_and_the_head_is_never_delayed(w):
    n_hosts, jobs = w
    starts, rejected, _, head_bound = replay(Conservative(EXACT), n_hosts, jobs)
    for k, (t, res, _, _) in enumerate(jobs):
        assert (str(k) in rejected) == (res > n_hosts)
        assert (str(k) in starts) == (res <= n_hosts) and (res > n_hosts or starts[str(k)][0] >= t)
    for name, bound in head_bound.items():  # runtimes <= walltimes
        assert starts[name][0] <= bound


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(exact=True, no_walltime=False))
def test_exact_walltimes_every_job_starts_when_first_planned(w):
    # runtimes = walltimes: nothing is compressed, and the start each job got from the first
    # pass that saw it is the start it gets (the predictability of conservative backfilling)
    n_hosts, jobs = w
    starts, rejected, first_plan, _ = replay(Conservative(EXACT), n_hosts, jobs)
    assert set(first_plan) == set(starts)
    for name, (start, _) in starts.items():
        assert start == first_plan[name], name
