"""HEFT's and green-heft's pass stops when no later job can start now: the same decisions.

The reference is the pass as written before the early stop (:class:`FullPassHEFT`,
:class:`FullPassGreenHEFT`): every waiting job is placed, in decreasing rank, until no host is
free now. The fast pass must start the same jobs on the same hosts and leave the same
``reservation`` after every message; it must also place fewer jobs than the full pass under a
backlog (else the stop never happens and the test of the speed-up could not fail).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_easy_backlog import _platform, backlog_workload  # noqa: E402
from test_green import begins, done, run, sub  # noqa: E402

import schedulers.easy as easy_module  # noqa: E402
from schedulers.core.backfilling import INF  # noqa: E402
from schedulers.core.waiting import walltime_limits  # noqa: E402
from schedulers.engine import simulate  # noqa: E402
from schedulers.green import GreenHEFT  # noqa: E402
from schedulers.heft import HEFT  # noqa: E402


def _full_pass(self):
    """HEFT's pass written plainly, before the early stop: every job placed in rank order until
    no host is free now. With the ``reservations`` option, once that many jobs were left waiting
    (or got no slot), each later job is placed alone and started when its slot starts now,
    holding nothing otherwise (the rule of ``tests/test_heft_reservations.py``)."""
    prof = self.profile()
    now = prof.now
    started = []
    barred = False
    left = INF if self.reservation_limit is None else self.reservation_limit
    for k, job in enumerate(self.queue):
        if not prof.free_mask_at(now):
            break
        if barred and not job.has_walltime:
            continue
        r = self.find_reservation(prof, job)
        if left <= 0:
            if r.start == now:
                prof.hold_mask(now, r.duration, r.hosts_mask)
                self.start_job(job, r.hosts_mask)
                started.append(k)
            continue
        if r.start == INF:
            barred = True
            left -= 1
            continue
        prof.hold_mask(r.start, r.duration, r.hosts_mask)
        if r.start == now:
            self.start_job(job, r.hosts_mask)
            started.append(k)
        else:
            left -= 1
            if self.reservation is None:
                self.reservation = r
    return started


class _Counting:
    """Counts the placements (calls of ``find_reservation`` from the pass)."""

    placed = 0

    def find_reservation(self, prof, job, dur=None):
        if dur is None:
            self.placed += 1
        return super().find_reservation(prof, job, dur)


class FullPassHEFT(_Counting, HEFT):
    name = "heft-full"
    backfill_pass = _full_pass


class FullPassGreenHEFT(_Counting, GreenHEFT):
    name = "green-heft-full"
    backfill_pass = _full_pass


class CountingHEFT(_Counting, HEFT):
    name = "heft-counting"


class CountingGreenHEFT(_Counting, GreenHEFT):
    name = "green-heft-counting"


def _decisions(folder: Path, policy, wl: dict, hosts: int, **kw) -> list:
    res = simulate(_platform(folder, hosts), [wl], policy, **kw)
    return [(j.id, j.start, str(j.alloc)) for j in res.jobs]


@pytest.mark.parametrize("green, options, seed, jobs, hosts, max_res, no_walltime", [
    (False, {}, 61, 500, 32, 12, 0.02),
    (False, {}, 62, 400, 16, 8, 0.4),
    (True, {"delta": 20}, 63, 500, 32, 12, 0.02),
    (True, {"delta": 40, "per_gap": True, "delta_min": 5}, 64, 400, 64, 24, 0.05),
])
def test_same_decisions_as_the_full_pass(tmp_path, monkeypatch, green, options, seed, jobs, hosts, max_res,
                                         no_walltime):
    for threshold in (1, 256):  # EASY's index from the first waiting job on, or scans of short queues
        monkeypatch.setattr(easy_module, "INDEX_MIN_QUEUE", threshold)
        wl = backlog_workload(jobs, seed, hosts, max_res, no_walltime=no_walltime)
        if options.get("per_gap"):
            rng = random.Random(seed)
            for j in wl["jobs"]:
                j["cpu_load"] = rng.choice([0, 25, 50, 100])
        fast = (CountingGreenHEFT if green else CountingHEFT)(dict(options))
        full = (FullPassGreenHEFT if green else FullPassHEFT)(dict(options))
        got = _decisions(tmp_path, fast, wl, hosts, compute_sharing=green)
        ref = _decisions(tmp_path, full, wl, hosts, compute_sharing=green)
        assert len(ref) == jobs and all(s >= 0 for _, s, _ in ref)
        assert got == ref
        assert fast.placed < full.placed / 2  # the pass does stop early under this backlog


@given(seed=st.integers(0, 10**6), speeds=st.sampled_from([[1e9] * 5, [1e9, 1e9, 2e9, 2e9, 4e9], [1e9, 3e9]]),
       green=st.booleans(), delta=st.sampled_from([0.0, 10.0, 50.0]))
@settings(max_examples=40, deadline=None)
def test_same_decisions_and_reservation_message_by_message(seed, speeds, green, delta):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(easy_module, "INDEX_MIN_QUEUE", 1)  # EASY's index from the first waiting job on
        opts = {"delta": delta} if green else {}
        fast = (CountingGreenHEFT if green else CountingHEFT)(dict(opts))
        full = (FullPassGreenHEFT if green else FullPassHEFT)(dict(opts))
        message_by_message(seed, speeds, green, fast, full)


def message_by_message(seed, speeds, green, fast, full):
    """Random submissions and completions (before the walltime, or without walltime after 50 s)
    on hosts of ``speeds`` (compute sharing when ``green``), fed to both policies; after every
    message both start the same jobs on the same hosts and leave the same reservation."""
    rng = random.Random(seed)
    run(fast, 0.0, begins(speeds, sharing=green))
    run(full, 0.0, begins(speeds, sharing=green))
    nh = len(speeds)
    running: list[tuple[float, int, str]] = []
    now, n = 0.0, 0
    for _ in range(120):
        now += rng.choice([0.0, 1.0, 7.0, 30.0])
        events = []
        while running and running[0][0] <= now:
            _, j, alloc = running.pop(0)
            events.append((done, (now, j, alloc)))
        if rng.random() < 0.75:
            n += 1
            events.append((sub, (now, n, rng.randint(1, nh), rng.choice([10.0, 40.0, 100.0, 300.0, -1.0]))))
        a = run(fast, now, *[f(*args) for f, args in events])
        b = run(full, now, *[f(*args) for f, args in events])
        assert a == b
        ra, rb = fast.reservation, full.reservation
        assert (ra is None) == (rb is None)
        if ra is not None:
            assert (ra.job.id, ra.start, ra.duration, ra.hosts_mask) == (rb.job.id, rb.start, rb.duration,
                                                                         rb.hosts_mask)
        for name, alloc in a:
            wt = full.jobs[f"w0!{name}"].walltime
            running.append((now + (wt / 2 if wt > 0 else 50.0), int(name), alloc))
        running.sort()


def test_early_stop_hand_worked():
    # 4 hosts of one speed. t=0: J1 (4 hosts, wt 100) starts on 0-3; J2 (3 hosts, wt 100), J3
    # (2, 90), J4 (2, 80), J5 (2, 70) wait (rank = walltime: that order).
    p = CountingHEFT()
    run(p, 0.0, begins([1e9] * 4))
    assert run(p, 0.0, sub(0.0, 1, 4, 100)) == [("1", "0-3")]
    assert run(p, 0.0, sub(0.0, 2, 3, 100), sub(0.0, 3, 2, 90), sub(0.0, 4, 2, 80), sub(0.0, 5, 2, 70)) == []
    # t=10: J1 ends early. J2 starts on 0-2 (held until 110). J3 fits nowhere now (host 3
    # alone is free): reserved at 110 on 0-1, the pass's reservation. Profile then: [10, 110)
    # {3}, [110, 200) {2, 3}, [200, inf) every host, so free_now_steps = ([110, 200], [1, 1, 1]):
    # only 1-host jobs could start now. J4 and J5 need 2: the index finds none and the pass
    # stops after 2 placements (J2, J3) where the full pass makes 4.
    p.placed = 0
    assert run(p, 10.0, done(10.0, 1, "0-3")) == [("2", "0-2")]
    assert (p.reservation.job.id, p.reservation.start, p.reservation.hosts_mask) == ("w0!3", 110.0, 0b11)
    assert p.placed == 2
    q = FullPassHEFT()
    run(q, 0.0, begins([1e9] * 4))
    run(q, 0.0, sub(0.0, 1, 4, 100))
    run(q, 0.0, sub(0.0, 2, 3, 100), sub(0.0, 3, 2, 90), sub(0.0, 4, 2, 80), sub(0.0, 5, 2, 70))
    q.placed = 0
    assert run(q, 10.0, done(10.0, 1, "0-3")) == [("2", "0-2")]
    assert q.placed == 4


def test_slot_scale_bounds_green_heft_slots():
    # green-heft's shortest slot is walltime * (1 - delta/100); per_gap only lowers a job's delta
    assert HEFT().slot_scale() == 1.0
    assert GreenHEFT({"delta": 0}).slot_scale() == 1.0
    assert GreenHEFT({"delta": 20}).slot_scale() == pytest.approx(0.8)
    assert GreenHEFT({"delta": 40, "per_gap": True, "delta_min": 5}).slot_scale() == pytest.approx(0.6)
    # the stretched limits: a window of slot walltime * 0.8 crosses limit t exactly when the
    # walltime exceeds (t - now) / 0.8; the stretched limit is a hair above now + that
    lim = walltime_limits([180.0], 100.0, 0.8)[0]
    assert 200.0 < lim <= 200.0 + 2e-6
    assert walltime_limits([180.0], 100.0, 1.0) == [180.0]
    # conservative's rjms_delay: a slot of walltime + 5 s from 100 crosses 180 when the walltime
    # exceeds 75 s; the limit is a hair above 175
    lim = walltime_limits([180.0], 100.0, extra=5.0)[0]
    assert 175.0 < lim <= 175.0 + 2e-6
    assert walltime_limits([float("inf")], 100.0, 0.8, 5.0) == [float("inf")]
