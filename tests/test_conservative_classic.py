"""Classic conservative backfilling (kept reservations, compression in queue order) and its options.

Notation as in ``tests/test_conservative.py`` (whose helpers are used): ``res`` hosts, walltime
``wt`` (s); profiles written as their slices ``[t0, t1): free hosts``.
"""

from __future__ import annotations

import heapq

import pytest
from hypothesis import HealthCheck, given, settings

from test_conservative import EXACT, begins, done, new, plan, run, sub, workloads

from schedulers.conservative import Conservative
from schedulers.core.backfilling import Reservation
from schedulers.core.exact_time import to_units
from schedulers.core.events import ExecuteJob, RejectJob
from schedulers.registry import PolicyOptionError, get_policy
import schedulers.easy as easy_module


def test_rjms_delay_lengthens_every_reservation_and_hold():
    # 2 hosts, rjms_delay 5 (batsched's default), all at 0: J1 res 1 wt 10, J2 res 2 wt 10,
    # J3 res 1 wt 12.
    #   J1 starts on 0 and holds it for 10 + 5 = 15 s.      [0, 15): 1; [15, inf): 0-1
    #   J2 (2 hosts, 15 s): at 15 on 0-1.                   [0, 15): 1; [15, 30): none; [30, inf): 0-1
    #   J3 (17 s): host 1 is free only until 15: at 30 on 0.
    # (rjms_delay 0: J2 at 10 for 10 s, J3 (12 s) at 20.)
    p = new(Conservative(), 2)
    assert p.rjms_delay == 5.0
    assert run(p, 0.0, sub(0, 1, 1, 10), sub(0, 2, 2, 10), sub(0, 3, 1, 12)) == [("1", "0")]
    assert plan(p) == [("2", 15.0, "0-1"), ("3", 30.0, "0")]
    assert [r.duration for r in p.planned_reservations()] == [15.0, 17.0]
    # J1 is killed at its walltime, 10, 5 s before its hold ends: compression, J2 starts now
    # (its window [10, 25) is free), J3 goes to 25.
    assert run(p, 10.0, done(10, 1, "0")) == [("2", "0-1")]
    assert plan(p) == [("3", 25.0, "0")]
    q = new(Conservative(EXACT), 2)
    assert run(q, 0.0, sub(0, 1, 1, 10), sub(0, 2, 2, 10), sub(0, 3, 1, 12)) == [("1", "0")]
    assert plan(q) == [("2", 10.0, "0-1"), ("3", 20.0, "0")]


def test_submissions_are_inserted_without_moving_anyone():
    # 3 hosts, rjms_delay 0. t=0: J1 res 2 wt 100 on 0-1; J2 res 3 wt 10 at 100 on 0-2.
    #                                        [0, 100): 2; [100, 110): none; [110, inf): 0-2
    # t=5: J3 res 1 wt 50 fits on 2 in [5, 55): starts now. t=6: J4 res 3 wt 10: first fit at
    # 110. No completion: J2 keeps 100 although nothing changed for it either way.
    p = new(Conservative(EXACT), 3)
    assert run(p, 0.0, sub(0, 1, 2, 100), sub(0, 2, 3, 10)) == [("1", "0-1")]
    assert run(p, 5.0, sub(5, 3, 1, 50)) == [("3", "2")]
    assert run(p, 6.0, sub(6, 4, 3, 10)) == []
    assert plan(p) == [("2", 100.0, "0-2"), ("4", 110.0, "0-2")]
    # J3 ends at 55 (a completion; its hold ended at 55 anyway): nothing can move earlier.
    assert run(p, 55.0, done(55, 3, "2")) == []
    assert plan(p) == [("2", 100.0, "0-2"), ("4", 110.0, "0-2")]


def test_recompute_keeps_the_rebuild_and_ignores_rjms_delay():
    p = get_policy("conservative", {"recompute": True})
    assert p.recompute and p.rjms_delay == 0.0
    with pytest.raises(PolicyOptionError, match="'recompute' must be true or false, got 1"):
        get_policy("conservative", {"recompute": 1})


@pytest.mark.parametrize("bad", [-1, float("inf"), float("nan"), "5", True, None, 1e308, 2.0 ** 33 + 2 ** -19])
def test_rjms_delay_must_be_a_finite_number(bad):
    with pytest.raises(PolicyOptionError, match=r"'rjms_delay' must be a number >= 0 and <= 8589934592 \(2\*\*33\) s"):
        get_policy("conservative", {"rjms_delay": bad})


def planned_starts_per_pass(policy, n_hosts, jobs):
    """Batsim-like loop as ``test_conservative.replay`` (every event of one time is one
    message); yields ``{job name: reserved start}`` after every pass, and the starts."""
    assert run(policy, 0.0, begins(n_hosts)) == []
    heap = [(t, 1, k, "sub", k) for k, (t, *_rest) in enumerate(jobs)]
    heapq.heapify(heap)
    starts, seq, passes = {}, len(jobs), []
    while heap:
        t = heap[0][0]
        events = []
        while heap and heap[0][0] == t:
            _, _, _, kind, k = heapq.heappop(heap)
            events.append(sub(t, k, jobs[k][1], jobs[k][2]) if kind == "sub"
                          else done(t, k, str(starts[str(k)][1])))
        for d in policy.decide(float(t), events):
            if isinstance(d, RejectJob):
                continue
            assert isinstance(d, ExecuteJob)
            name = d.job_id.split("!")[1]
            starts[name] = (t, d.alloc)
            seq += 1
            heapq.heappush(heap, (t + jobs[int(name)][3], 0, seq, "done", int(name)))
        passes.append((t, {r.job.name: r.start for r in policy.planned_reservations()}))
    return passes, starts


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(no_walltime=False))
def test_a_job_is_never_moved_later(w):
    # Mu'alem & Feitelson's guarantee, kept reservations: from pass to pass (submissions,
    # completions before or at the walltime), a waiting job's reserved start never increases,
    # and it starts at its last reserved start at the latest.
    n_hosts, jobs = w
    for options in (EXACT, {}):
        passes, starts = planned_starts_per_pass(Conservative(dict(options)), n_hosts, jobs)
        last: dict[str, float] = {}
        for t, planned in passes:
            for name, start in planned.items():
                assert start > t
                assert start <= last.get(name, start), (name, t)
                last[name] = start
        for name, bound in last.items():
            assert starts[name][0] <= bound


def _plain_walk_starts(self, prof, k, barred, stop_when_full, extra=0.0, hold=None, units=False):
    """The reference of ``Conservative._walk_starts``: every job from position ``k`` on, in
    queue order, started when it fits now for its walltime + ``extra`` (no index); ``units``:
    the profile is the classic variant's, in exact units, and so is the duration."""
    now = prof.now
    queue = self.queue
    for pos in range(k, len(queue)):
        if stop_when_full and not prof.free_mask_at(now):
            return
        job = queue[pos]
        if units:
            dur = to_units(job.walltime) + to_units(extra) if job.has_walltime else float("inf")
        else:
            dur = (job.walltime if job.has_walltime else float("inf")) + extra
        if barred and dur == float("inf"):
            continue
        hosts = prof.fits_now_mask(job.res, dur, self.host_choice(job))
        if hosts is not None:
            if hold is None:
                prof.hold_mask(now, dur, hosts)
            else:
                hold(job, dur, hosts)
            yield pos, Reservation(job, now, dur, hosts)


class PlainBeyondLimit(Conservative):
    name = "conservative-plain-beyond"
    _walk_starts = _plain_walk_starts


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(no_walltime=False))
def test_jobs_beyond_the_limit_found_through_the_index(w):
    # with the reservations option, the jobs behind the limit start when they fit now for their
    # walltime + rjms_delay (5 s: whole-second times, so windows often end exactly at a
    # reservation's start); EASY's index of the queue from the first waiting job on must start
    # the same jobs as a scan of the queue
    n_hosts, jobs = w
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(easy_module, "INDEX_MIN_QUEUE", 1)
        for options in ({"reservations": 1}, {"reservations": 2}, {"reservations": 1, "rjms_delay": 0.5}):
            _, got = planned_starts_per_pass(Conservative(dict(options)), n_hosts, jobs)
            _, ref = planned_starts_per_pass(PlainBeyondLimit(dict(options)), n_hosts, jobs)
            assert got == ref
