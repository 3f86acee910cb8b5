"""conservative, buc-easy and green-easy make exactly the decisions they made before their
backlog speed-ups (conservative's walk that stops when no later job can start now, its passes
without a walk and its first fits from a lower bound; BUC's keys computed in one go; green's gap
test searched through the waiting index; HEFT's and green-heft's pass that stops when no later
job can start now).

``tests/fixtures/policy_backlog_digests.json`` holds, per case, the SHA-256 of the sequence of
decisions ``(job id, start, hosts)`` in completion order that the policy made on a seeded
backlogged workload (:func:`tests.test_easy_backlog.backlog_workload`: multi-host jobs at twice
the capacity, jobs without walltime, jobs killed at their walltime, simultaneous submissions),
recorded with the code as it was *before* those changes (commit c6f9fef); the start times are
hashed as ``out_jobs.csv`` prints them (6 decimals) since 2026-11-24, when Batsim's messages on
this Full zone came to be timed on SimGrid's clock (a few 1e-10 s each): the code before and after
that change gives the same digests at that resolution (checked when re-recording). Re-record only for a
deliberate change of a schedule: ``PYTHONPATH=. python tests/test_policy_backlog.py --record``.
A mismatch means a decision changed.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_conservative import done, new, run, sub  # noqa: E402
from test_easy_backlog import _platform, backlog_workload  # noqa: E402

from schedulers.conservative import Conservative  # noqa: E402
from schedulers.core.backfilling import INF, Reservation, job_duration, lowest_bits  # noqa: E402
from schedulers.core.model import Job  # noqa: E402
from schedulers.easy import EASY  # noqa: E402
from schedulers.engine import simulate  # noqa: E402
from schedulers.registry import get_policy  # noqa: E402

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "policy_backlog_digests.json"


class HighestFirstConservative(Conservative):
    """Conservative with a host choice of its own (highest ids first): reservations and starts
    go through ``select_hosts``."""

    name = "conservative-high"

    def select_hosts(self, candidates, job):
        out = 0
        for _ in range(job.res):
            top = 1 << (candidates.bit_length() - 1)
            out |= top
            candidates ^= top
        return out


class OddFirstConservative(Conservative):
    """Conservative preferring odd host ids (a choice that is not a prefix of the ids)."""

    name = "conservative-odd"

    def select_hosts(self, candidates, job):
        odd = candidates & int("10" * 64, 2)
        n = odd.bit_count()
        if n >= job.res:
            return lowest_bits(odd, job.res)
        return odd | lowest_bits(candidates & ~odd, job.res - n)


def _with_cpu_load(wl: dict, seed: int) -> dict:
    rng = random.Random(seed)
    for j in wl["jobs"]:
        j["cpu_load"] = rng.choice([0, 25, 50, 100])
    return wl


def _policy(name: str, options):
    if name == "conservative-high":
        return HighestFirstConservative(options)
    if name == "conservative-odd":
        return OddFirstConservative(options)
    return get_policy(name, options)


#: conservative's digests are those of its rebuild at every pass (option recompute), the variant
#: these speed-ups are for; its default, kept reservations, is tested in test_conservative*.py
RECOMPUTE = {"recompute": True}

#: (case, policy, options, (jobs, seed, hosts, max_res, share without walltime), sharing, cpu_load)
CASES = [
    ("conservative-64", "conservative", RECOMPUTE, (700, 21, 64, 16, 0.02), False, False),
    ("conservative-16", "conservative", RECOMPUTE, (600, 22, 16, 8, 0.02), False, False),
    ("conservative-nowall", "conservative", RECOMPUTE, (400, 23, 32, 8, 0.4), False, False),
    ("conservative-128", "conservative", RECOMPUTE, (500, 24, 128, 32, 0.02), False, False),
    ("conservative-high", "conservative-high", RECOMPUTE, (500, 25, 32, 12, 0.05), False, False),
    ("conservative-odd", "conservative-odd", RECOMPUTE, (500, 26, 32, 12, 0.05), False, False),
    ("conservative-r5", "conservative", {"reservations": 5, **RECOMPUTE}, (800, 27, 32, 12, 0.05), False, False),
    ("buc-easy-64", "buc-easy", {"rule": "ema"}, (2000, 31, 64, 16, 0.02), False, False),
    ("buc-easy-kp1440", "buc-easy", {"kp": 1440, "rule": "ema"}, (1500, 32, 32, 12, 0.05), False, False),
    ("buc-easy-linear", "buc-easy", {"rule": "linear", "work_ref": 20000}, (1500, 33, 16, 8, 0.1), False,
     False),
    ("buc-easy-nowall", "buc-easy", {"rule": "ema"}, (800, 34, 32, 8, 0.4), False, False),
    ("buc-easy-kp0", "buc-easy", {"kp": 0, "rule": "ema"}, (1000, 35, 32, 8, 0.05), False, False),
    ("green-easy-0", "green-easy", {"delta": 0}, (2000, 41, 64, 16, 0.02), False, False),
    ("green-easy-20", "green-easy", {"delta": 20}, (2000, 42, 64, 16, 0.02), True, False),
    ("green-easy-60", "green-easy", {"delta": 60}, (1500, 43, 16, 8, 0.1), True, False),
    ("green-easy-pergap", "green-easy", {"delta": 40, "per_gap": True, "delta_min": 5},
     (1500, 44, 32, 12, 0.05), True, True),
    ("green-easy-nowall", "green-easy", {"delta": 30}, (800, 45, 32, 8, 0.4), True, False),
    # HEFT's pass that stops when no later job can start now (recorded with the full pass)
    ("heft-128", "heft", {}, (1500, 71, 128, 32, 0.02), False, False),
    ("heft-nowall", "heft", {}, (800, 72, 32, 8, 0.4), False, False),
    ("green-heft-20", "green-heft", {"delta": 20}, (1500, 73, 64, 16, 0.02), True, False),
    ("green-heft-pergap", "green-heft", {"delta": 40, "per_gap": True, "delta_min": 5},
     (1000, 74, 32, 12, 0.05), True, True),
]


def decisions_digest(folder: Path, policy, jobs: int, seed: int, hosts: int, max_res: int,
                     no_walltime: float, sharing: bool, cpu_load: bool) -> tuple[str, int]:
    """SHA-256 (hex) of every job's ``(id, start, hosts)`` in completion order, and the number of
    jobs that ran."""
    wl = backlog_workload(jobs, seed, hosts, max_res, no_walltime=no_walltime)
    if cpu_load:
        wl = _with_cpu_load(wl, seed)
    res = simulate(_platform(folder, hosts), [wl], policy, compute_sharing=sharing)
    h = hashlib.sha256()
    ran = 0
    for j in res.jobs:
        h.update(f"{j.id};{j.start:.6f};{j.alloc}\n".encode())
        ran += j.start >= 0
    return h.hexdigest(), ran


@pytest.mark.parametrize("case, policy, options, wl, sharing, cpu_load", CASES, ids=[c[0] for c in CASES])
def test_decisions_are_the_recorded_ones(tmp_path, case, policy, options, wl, sharing, cpu_load):
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))[case]
    digest, ran = decisions_digest(tmp_path, _policy(policy, options), *wl, sharing, cpu_load)
    assert ran == wl[0]  # every job ran
    assert digest == recorded


if __name__ == "__main__":
    if sys.argv[1:2] == ["--record"]:
        import tempfile
        import time
        only = set(sys.argv[2:])
        out = json.loads(FIXTURE.read_text(encoding="utf-8")) if FIXTURE.exists() else {}
        with tempfile.TemporaryDirectory() as tmp:
            for case, policy, options, wl, sharing, cpu_load in CASES:
                if only and case not in only:
                    continue
                t = time.perf_counter()
                out[case], ran = decisions_digest(Path(tmp), _policy(policy, options), *wl, sharing, cpu_load)
                print(f"{case}: {out[case][:16]} ({ran} jobs ran, {time.perf_counter() - t:.1f} s)", flush=True)
        FIXTURE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {FIXTURE}")


# ------------------------------------------------------------------ conservative: reference walk
class FullWalkConservative(Conservative):
    """Conservative backfilling as written before the speed-up: every pass builds the profile and
    places every waiting job in queue order (stopping only when no host is free now)."""

    name = "conservative-full"

    def backfill_pass(self):
        prof = self.profile()
        now = prof.now
        started, barred = [], False
        for k, job in enumerate(self.queue):
            if not prof.free_mask_at(now):
                break
            dur = job_duration(job)
            if barred and dur == INF:
                r = Reservation(job, INF, dur, prof.final_free_mask)
            else:
                r = self.find_reservation(prof, job)
            if r.start == INF:
                barred = True
            elif r.start == now and dur == 0:
                prof.reserve_mask(now, math.nextafter(now, INF) - now, r.hosts_mask)
            else:
                prof.reserve_mask(r.start, dur, r.hosts_mask)
            if r.start == now:
                self.start_job(job, r.hosts_mask)
                started.append(k)
            elif self.reservation is None:
                self.reservation = r
        return started


class CountingConservative(Conservative):
    """Counts the walks (passes that did not take the shortcut) and checks, after every pass,
    the ``reservation`` attribute against the full walk's."""

    walks = 0

    def _walk(self, prof, stop_when_full):
        if stop_when_full:
            self.walks += 1
        return super()._walk(prof, stop_when_full)


def _decisions(folder: Path, policy, wl: dict, hosts: int, **kw) -> list:
    res = simulate(_platform(folder, hosts), [wl], policy, **kw)
    return [(j.id, j.start, str(j.alloc)) for j in res.jobs]


@pytest.mark.parametrize("seed, jobs, hosts, max_res, no_walltime", [
    (51, 600, 32, 12, 0.02), (52, 500, 8, 8, 0.05), (53, 400, 16, 8, 0.4), (54, 500, 64, 24, 0.0)])
def test_conservative_same_decisions_as_the_full_walk(tmp_path, monkeypatch, seed, jobs, hosts, max_res,
                                                      no_walltime):
    import schedulers.easy as easy_module

    for threshold in (1, 256):  # index from the first waiting job on, or scans of short queues
        monkeypatch.setattr(easy_module, "INDEX_MIN_QUEUE", threshold)
        wl = backlog_workload(jobs, seed, hosts, max_res, no_walltime=no_walltime)
        fast = CountingConservative(RECOMPUTE)
        got = _decisions(tmp_path, fast, wl, hosts)
        ref = _decisions(tmp_path, FullWalkConservative(RECOMPUTE), wl, hosts)
        assert len(ref) == jobs and all(s >= 0 for _, s, _ in ref)
        assert got == ref
        assert 0 < fast.walks < 2 * jobs  # some passes were decided without a walk


def test_conservative_reservation_attribute_same_as_full_walk():
    # message by message on 6 hosts: the first waiting job's reservation after every pass
    rng = random.Random(5)
    fast, full = new(Conservative(RECOMPUTE), 6), new(FullWalkConservative(RECOMPUTE), 6)
    running: list[tuple[float, int, str]] = []  # (end, job, alloc) in both (same decisions)
    now, n = 0.0, 0
    for _ in range(300):
        now += rng.choice([0.0, 1.0, 7.0, 30.0])
        events = []  # (each policy gets its own event objects: jobs are mutable)
        while running and running[0][0] <= now:
            _, j, alloc = running.pop(0)
            events.append((done, (now, j, alloc)))
        if rng.random() < 0.7:
            n += 1
            events.append((sub, (now, n, rng.randint(1, 6), rng.choice([10.0, 40.0, 100.0, -1.0]))))
        a = run(fast, now, *[f(*args) for f, args in events])
        b = run(full, now, *[f(*args) for f, args in events])
        assert a == b
        ra, rb = fast.reservation, full.reservation
        assert (ra is None) == (rb is None)
        if ra is not None:
            assert (ra.job.id, ra.start, ra.hosts_mask) == (rb.job.id, rb.start, rb.hosts_mask)
        for name, alloc in a:
            wt = full.jobs[f"w0!{name}"].walltime
            end = now + (wt / 2 if wt > 0 else 50.0)  # every job ends before its walltime
            running.append((end, int(name), alloc))
        running.sort()


def test_conservative_pass_without_walk_hand_worked():
    # 4 hosts. t=0: J1 (3 hosts, wt 100) starts on 0-2; J2 (4 hosts, wt 100) is reserved at 100
    # on 0-3; host 3 stays free now until 100 and the queue ends: the walk records its profile,
    # [0, 100): {3}, [100, 200): {}, [200, inf): all, so free_now_steps = ([100, 200], [1, 0, 0]).
    p = new(CountingConservative(RECOMPUTE), 4)
    assert run(p, 0.0, sub(0.0, 1, 3, 100), sub(0.0, 2, 4, 100)) == [("1", "0-2")]
    assert p.walks == 1 and (p.reservation.job.name, p.reservation.start) == ("2", 100.0)
    # t=1: J3 (1 host, wt 200) would need host 3 until 201 > 100: no walk, nothing starts, the
    # reservation is J2's again
    assert run(p, 1.0, sub(1.0, 3, 1, 200)) == []
    assert p.walks == 1 and (p.reservation.job.name, p.reservation.start) == ("2", 100.0)
    # t=2: J4 (1 host, wt 50) fits host 3 until 52 <= 100: a walk, which starts it (J3 is
    # placed at 200 first and takes nothing of [2, 52))
    assert run(p, 2.0, sub(2.0, 4, 1, 50)) == [("4", "3")]
    assert p.walks == 2
    assert [(r.job.name, r.start) for r in p.planned_reservations()] == [("2", 100.0), ("3", 200.0)]
    # t=3: J5 (1 host, wt 10): no host free now (J4 holds host 3): no pass at all
    assert run(p, 3.0, sub(3.0, 5, 1, 10)) == [] and p.walks == 2
    # t=30: J4 ends early: a completion, so a walk: J5 starts on host 3
    assert run(p, 30.0, done(30.0, 4, "3")) == [("5", "3")]
    assert p.walks == 3


def test_conservative_shortcut_ends_at_the_guard():
    # 3 hosts. t=0: J1 (2 hosts, wt 50) starts on 0-1; J2 (3 hosts, wt 100) is reserved at 50;
    # host 2 is free until 50. The walk's first slice after now starts at 50 (J1's end and J2's
    # start): the guard. Before it, with nothing changed, a pass needs no walk; from it on, it
    # does (the reservations could differ), as after any start or completion.
    p = new(Conservative(RECOMPUTE), 3)
    assert run(p, 0.0, sub(0.0, 1, 2, 50), sub(0.0, 2, 3, 100)) == [("1", "0-1")]
    assert p._quiet is not None and p._quiet.guard == 50.0
    p.now = 49.0
    assert p._nothing_starts()
    p.now = 50.0
    assert not p._nothing_starts()
    p.now = 10.0
    assert p._nothing_starts()
    p._changes += 1  # a start or completion since
    assert not p._nothing_starts()


# --------------------------------------------------------------------------- green's gap bound
@given(now=st.floats(0, 1e7), gap=st.floats(0, 1e6), wt=st.floats(0.001, 1e6),
       delta=st.floats(0, 99.9), load=st.sampled_from([0, 30, 100]), per_gap=st.booleans())
@settings(max_examples=400, deadline=None)
def test_green_gap_limit_bounds_its_gap_test(now, gap, wt, delta, load, per_gap):
    from schedulers.green import GreenEASY

    opts = {"delta": delta, "per_gap": per_gap, **({"delta_min": delta / 3} if per_gap else {})}
    p = GreenEASY(opts)
    p.now = now
    job = Job(id="w0!1", workload="w0", subtime=0, walltime=wt, res=1, profile="p", extra={"cpu_load": load})
    resv = Reservation(job, now + gap, 1.0, 1)
    if p.fits_gap(job, now, resv):
        assert now + wt <= p.gap_limit(now, resv)
    p._pending = None


def test_green_gap_limit_hand_worked():
    from schedulers.green import GreenEASY

    # delta 20: eq. 4 admits walltime * 0.8 <= gap; gap 80 s from now 100: walltimes up to 100,
    # so the bound is 100 + 100 (plus 1e-9 relative)
    p = GreenEASY({"delta": 20})
    job = Job(id="w0!1", workload="w0", subtime=0, walltime=1.0, res=1, profile="p")
    lim = p.gap_limit(100.0, Reservation(job, 180.0, 1.0, 1))
    assert 200.0 <= lim <= 200.0 + 1e-6
    assert p.gap_limit(100.0, Reservation(job, INF, 1.0, 1)) == INF
    assert EASY().gap_limit(100.0, Reservation(job, 180.0, 1.0, 1)) == 180.0


# ------------------------------------------------------------------------------ BUC's keys
def test_buc_queue_keys_are_its_queue_key():
    # the batched keys (Sf's time-free part cached by user and walltime) equal queue_key, job by
    # job, at several times and after score updates of one user
    from schedulers.buc import BUCEasy

    rng = random.Random(3)
    p = BUCEasy({"kp": 1440})
    jobs = [Job(id=f"w0!{i}", workload="w0", subtime=float(rng.randint(0, 500)),
                walltime=rng.choice([-1.0, 60.0, 600.0, 3600.0]), res=1, profile="p",
                extra={"user": f"u{i % 3}"} if i % 4 else {}) for i in range(60)]
    for step in range(6):
        p.now = 500.0 + 37.3 * step
        assert p.queue_keys(jobs) == [p.queue_key(j) for j in jobs]
        p.scores[f"u{step % 3}"] = 10.0 * step  # as on_job_completed does, with the cache reset
        for g in [g for g in p._fixed if g[0] == f"u{step % 3}"]:
            del p._fixed[g]
    # a stale cache would give other keys: the check above can fail
    p.scores["u1"] = 99.0
    assert p.queue_keys(jobs) != [p.queue_key(j) for j in jobs]


def test_start_bounds_staircase_hand_worked():
    from schedulers.conservative import _StartBounds

    b = _StartBounds()
    b.add(4, 100.0, 50.0)            # 4 hosts, 100 s: first fit at 50
    assert b.bound(4, 100.0, 0.0) == 50.0
    assert b.bound(4, 99.0, 0.0) == 0.0     # a shorter job may start earlier
    assert b.bound(3, 500.0, 0.0) == 0.0    # a smaller one too
    assert b.bound(8, 100.0, 0.0) == 50.0   # a larger and longer one not
    b.add(4, 200.0, 40.0)            # dominated by (100 s, 50): kept out
    assert b.bound(4, 200.0, 0.0) == 50.0
    b.add(4, 50.0, 70.0)             # shorter and later: supersedes (100 s, 50)
    assert b.bound(4, 60.0, 0.0) == 70.0 and b.bound(4, 100.0, 0.0) == 70.0
    b.add(2, 10.0, 90.0)             # a smaller job later still: bounds every larger one
    assert b.bound(4, 100.0, 0.0) == 90.0 and b.bound(3, 5.0, 0.0) == 0.0
    b.add(2, 10.0, INF)              # no window at all: none for larger, longer jobs
    assert b.bound(32, 1e6, 0.0) == INF and b.bound(1, 1e6, 0.0) == 0.0
