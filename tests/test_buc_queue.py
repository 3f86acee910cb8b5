"""BUC's grouped queue (``schedulers/core/grouped_queue.py``) and buc-easy's passes over it.

Numbers are worked out by hand in the comments. Priority = offset + (now - subtime), larger
first, ties by earlier subtime, then the smaller id string. Job ``n`` is ``w0!n``.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from procset import ProcSet

from schedulers.buc import BUCEasy, BUCOrder
from schedulers.core.events import ExecuteJob, JobCompleted, JobSubmitted, SimulationBegins
from schedulers.core.grouped_queue import GroupedQueue
from schedulers.core.model import Host, Job
from schedulers.easy import EASY
from schedulers.engine import simulate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_easy_backlog import _platform, backlog_workload  # noqa: E402


def job(n: int, t: float, res: int = 1, wt: float = 100.0, user: str = "u") -> Job:
    return Job(id=f"w0!{n}", workload="w0", subtime=t, walltime=wt, res=res, profile="p",
               extra={"user": user})


def ids(jobs) -> list[str]:
    return [j.id.split("!")[1] for j in jobs]


# ------------------------------------------------------------------------------ GroupedQueue
def test_offset_change_reorders_groups_ties_by_subtime_then_id():
    q = GroupedQueue()
    a1, a2, b1, b2 = job(1, 0.0), job(2, 10.0), job(3, 0.0), job(4, 60.0)
    for j, g in ((a1, "A"), (b1, "B"), (a2, "A"), (b2, "B")):
        q.add(j, g)
    assert (len(q), q.groups) == (4, 2)
    # now 100, A 100, B 50: a1 200, a2 190, b1 150, b2 90
    assert ids(q.ordered(100.0, {"A": 100.0, "B": 50.0})) == ["1", "2", "3", "4"]
    # B's offset up to 150 (its user's score rose): b1 250, a1 200, a2 190, b2 190: a2 and b2
    # tie, a2 was submitted first (10 < 60)
    assert ids(q.ordered(100.0, {"A": 100.0, "B": 150.0})) == ["3", "1", "2", "4"]
    # the view walks the same order
    v = q.view(100.0, {"A": 100.0, "B": 150.0})
    assert [v.take_head().id for _ in range(4)] == ["w0!3", "w0!1", "w0!2", "w0!4"]
    assert v.head() is None
    # equal priority and subtime in two groups: the smaller id string first ("w0!10" < "w0!9")
    q2 = GroupedQueue()
    q2.add(job(9, 20.0), "A")
    q2.add(job(10, 20.0), "B")
    assert ids(q2.ordered(50.0, {"A": 7.0, "B": 7.0})) == ["10", "9"]
    assert ids(q2.ordered(50.0, {"A": 7.5, "B": 7.0})) == ["9", "10"]


def test_group_order_is_submission_order_even_when_added_out_of_order():
    q = GroupedQueue()
    q.add(job(5, 30.0), "A")
    q.add(job(3, 10.0), "A")       # earlier subtime, added later: inserted in front
    q.add(job(10, 30.0), "A")      # same subtime as 5: "w0!10" < "w0!5"
    assert ids(q.ordered(40.0, {"A": 0.0})) == ["3", "10", "5"]
    q.remove(q.ordered(40.0, {"A": 0.0})[0])
    assert ids(q.ordered(40.0, {"A": 0.0})) == ["10", "5"]
    with pytest.raises(ValueError, match="walltime"):
        q.add(job(7, 50.0, wt=60.0), "A")   # a group has one walltime
    with pytest.raises(ValueError, match="already queued"):
        q.add(job(5, 30.0), "A")
    with pytest.raises(KeyError):
        q.remove(job(99, 0.0))


def test_view_searches_behind_the_head_with_falling_capacities():
    # one group A (offset 0), walltime 100; B (offset 0), walltime 1000; now 100:
    #   A: 1 (t 0, res 4) 2 (t 10, res 3) 3 (t 40, res 1);  B: 4 (t 20, res 2) 5 (t 30, res 1)
    # order: 1 (100), 2 (90), 4 (80), 5 (70), 3 (60)
    q = GroupedQueue()
    jobs = {1: job(1, 0.0, 4), 2: job(2, 10.0, 3), 3: job(3, 40.0, 1),
            4: job(4, 20.0, 2, wt=1000.0), 5: job(5, 30.0, 1, wt=1000.0)}
    for n, j in jobs.items():
        q.add(j, "A" if j.walltime == 100.0 else "B")
    v = q.view(100.0, {"A": 0.0, "B": 0.0})
    assert v.head() is jobs[1]
    assert v.slot(jobs[1]) == 0
    assert v.exists(1, 100.0, (), (3,))           # 2 (res 3) fits 3 hosts
    assert not v.exists(1, 100.0, (), (0,))
    # limit 300: A's jobs (100 + 100 <= 300) may use 3 hosts, B's (100 + 1000 > 300) 1
    s = v.first(1, 100.0, (300.0,), (3, 1))
    assert (s, v.job(s)) == (1, jobs[2])          # 2: res 3 <= 3
    assert v.key(s) == (-(0.0 + (100.0 - 10.0)), 10.0, "w0!2")
    s = v.first(2, 100.0, (300.0,), (2, 1))       # 4 (res 2 > B's 1) skipped: 5 (res 1)
    assert v.job(s) is jobs[5]
    s = v.first(3, 100.0, (300.0,), (1, 0))       # 3 (A, res 1 <= 1)
    assert v.job(s) is jobs[3]
    assert v.first(4, 100.0, (300.0,), (1, 0)) == -1
    with pytest.raises(ValueError, match="capacity grew"):
        v.first(4, 100.0, (300.0,), (2, 0))
    with pytest.raises(ValueError, match="one past its last label"):
        v.first(1, 100.0, (300.0,), (1, 0))


def test_view_does_not_see_jobs_removed_during_the_pass():
    q = GroupedQueue()
    a, b, c = job(1, 0.0, 2), job(2, 5.0, 1), job(3, 6.0, 1)
    for j in (a, b, c):
        q.add(j, "A")
    v = q.view(10.0, {"A": 0.0})
    assert v.slot(a) == 0
    s = v.first(1, 10.0, (), (1,))
    assert v.job(s) is b
    q.remove(b)                  # it started
    q.remove(c)                  # (left the queue otherwise)
    assert v.first(2, 10.0, (), (1,)) == -1
    assert ids(q.ordered(10.0, {"A": 0.0})) == ["1"]
    q.remove(a)
    assert (len(q), q.groups) == (0, 0)


# ------------------------------------------------------------------------------ buc-easy
def begins(n: int) -> SimulationBegins:
    hosts = [Host(id=i, name=f"host{i}") for i in range(n)]
    return SimulationBegins(0.0, nb_resources=n, nb_compute_resources=n, compute_resources=hosts)


def sub(t: float, n: int, user: str, wt: float, res: int = 1) -> JobSubmitted:
    return JobSubmitted(t, job=job(n, t, res, float(wt), user))


def started(policy, now, *events) -> list[str]:
    return [d.job_id.split("!")[1] for d in policy.decide(now, list(events)) if isinstance(d, ExecuteJob)]


def test_score_change_reorders_the_groups():
    # kp 1, Su 60: Sf = (48 + 0.2*100000/100)*1 + Te = 248 + Te for every job of walltime 100
    p = BUCEasy({"kp": 1, "rule": "ema"})   # (the hand numbers: ema, Su += 0.1 (100 P - Su))
    assert started(p, 0.0, begins(1), sub(0, 1, "g", 100)) == ["1"]
    assert started(p, 1.0, sub(1, 2, "b", 100), sub(1, 3, "g", 100)) == []
    assert started(p, 2.0, sub(2, 4, "b", 100)) == []
    # equal Sf for 2 and 3 (same subtime): "w0!2" < "w0!3"; 4 waited 1 s less
    assert ids(p.queue) == ["2", "3", "4"]
    # 1 ran 100 s of 100: P = 1, Su_g = 64, g's offset (51.2 + 200)*1 = 251.2. At t = 100:
    # Sf(3) = 251.2 + 99 = 350.2 > Sf(2) = 248 + 99 = 347 > Sf(4) = 248 + 98 = 346
    p.now = 100.0
    assert p.sf_offsets[("g", 100.0)] == 248.0          # (the cache before the end of 1)
    assert started(p, 100.0, JobCompleted(100.0, job_id="w0!1", job_state="COMPLETED_SUCCESSFULLY",
                                          alloc=ProcSet(0))) == ["3"]
    assert p.sf_offsets[("g", 100.0)] == pytest.approx(251.2)
    assert ids(p.queue) == ["2", "4"]


def test_backfill_behind_a_head_of_another_group():
    # kp 1, Su 60, 4 hosts; 1 (x, wt 100, 3 hosts) runs until its walltime 100 at most.
    # At t = 1: Sf = 48 + 0.2*100000/wt + Te:
    #   2 (a, wt 50, 4 hosts) 448 + 0;  4 (c, wt 90, 1 host) 270.2;  5 (c, wt 95, 2 hosts) 258.5;
    #   3 (b, wt 200, 1 host) 148
    # head 2 does not fit (1 host free): reserved at 100 on all 4 hosts. 4 ends by 1 + 90 = 91
    # <= 100: backfilled; 5 needs 2 hosts; 3 would end at 201 > 100 and no host is spare.
    p = BUCEasy({"kp": 1})
    assert started(p, 0.0, begins(4), sub(0, 1, "x", 100, 3)) == ["1"]
    assert started(p, 1.0, sub(1, 2, "a", 50, 4), sub(1, 3, "b", 200), sub(1, 4, "c", 90),
                   sub(1, 5, "c", 95, 2)) == ["4"]
    assert p.reservation is not None and (p.reservation.job.id, p.reservation.start) == ("w0!2", 100.0)
    assert p.backfilled_jobs == 1
    assert ids(p.queue) == ["2", "5", "3"]
    assert p.head_reservation().start == 100.0


class ResortedBUCEasy(BUCOrder, EASY):
    """The former buc-easy: BUC's keys over EASY's list, re-sorted at every pass."""

    name = "buc-easy-resorted"


@pytest.mark.parametrize("seed, hosts, max_res, nowall, kp", [
    (51, 32, 12, 0.05, 10800.0), (52, 16, 8, 0.3, 1440.0), (53, 64, 16, 0.02, 1.0)])
def test_same_decisions_as_the_resorted_queue(tmp_path, seed, hosts, max_res, nowall, kp):
    wl = backlog_workload(600, seed, hosts, max_res, no_walltime=nowall)
    rng = random.Random(seed)
    for j in wl["jobs"]:   # few walltimes, so groups hold many jobs and ties are common
        if j["walltime"] > 0:
            j["walltime"] = rng.choice([600.0, 3600.0, 7200.0, 10800.0])
    out = []
    for policy in (BUCEasy({"kp": kp}), ResortedBUCEasy({"kp": kp})):
        res = simulate(_platform(tmp_path, hosts), [wl], policy)
        out.append(([(j.id, j.start, j.alloc) for j in res.jobs], policy.backfilled_jobs, policy.scores))
    assert out[0] == out[1]
    assert out[0][1] > 0   # backfilling happened
