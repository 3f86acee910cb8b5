"""``ReservationProfile.first_slice_with``: the first time ``n`` hosts are free, and first fits
searched from it (the lower bound HEFT's pass and classic conservative keep per ``res``).

Checked against a brute force over the slices on random profiles (running jobs, then
reservations placed first fit as a pass places them), and on a hand-drawn profile.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from procset import ProcSet

from schedulers.core.backfilling import INF, ReservationProfile


def _brute_first_with(p: ReservationProfile, n: int, not_before: float, within: int) -> float:
    for s, e, free in p.slices():
        if e <= not_before:
            continue
        m = sum(1 << i for i in free) & within
        if m.bit_count() >= n:
            return max(s, not_before)
    return INF


def _random_profile(rng: random.Random, hosts: int, reservations: int) -> ReservationProfile:
    busy = [(rng.choice([5.0, 10.0, 30.0, 60.0, INF]), ProcSet(h)) for h in range(hosts) if rng.random() < 0.6]
    p = ReservationProfile.from_ends(0.0, ProcSet((0, hosts - 1)), busy)
    for _ in range(reservations):
        res = rng.randint(1, hosts)
        dur = rng.choice([1.0, 5.0, 12.5, 40.0])
        found = p.find_earliest_mask(res, dur, not_before=rng.choice([0.0, 3.0, 20.0]))
        if found is not None:
            p.reserve_mask(found[0], dur, found[1])
    return p


@given(seed=st.integers(0, 10**6), hosts=st.integers(1, 12), reservations=st.integers(0, 25))
@settings(max_examples=200, deadline=None)
def test_first_slice_with_is_the_brute_force_and_a_search_from_it_finds_the_first_fit(seed, hosts, reservations):
    rng = random.Random(seed)
    p = _random_profile(rng, hosts, reservations)
    for _ in range(10):
        n = rng.randint(1, hosts)
        nb = rng.choice([0.0, 2.0, 7.5, 30.0, 100.0])
        within = rng.choice([-1, rng.randrange(1, 1 << hosts)])
        low = p.first_slice_with(n, nb, within)
        assert low == _brute_first_with(p, n, nb, within)
        dur = rng.choice([0.5, 5.0, 25.0, INF])
        ref = p.find_earliest_mask(n, dur, nb, within=within)
        got = None if low == INF else p.find_earliest_mask(n, dur, low, within=within)
        assert got == ref


@given(seed=st.integers(0, 10**6), hosts=st.integers(2, 10))
@settings(max_examples=100, deadline=None)
def test_first_slice_with_never_moves_earlier_while_reservations_are_added(seed, hosts):
    # the monotony the callers rely on: a kept bound stays a bound as reservations are added
    rng = random.Random(seed)
    p = _random_profile(rng, hosts, 0)
    before = {n: p.first_slice_with(n) for n in range(1, hosts + 1)}
    for _ in range(15):
        res = rng.randint(1, hosts)
        dur = rng.choice([1.0, 5.0, 40.0])
        found = p.find_earliest_mask(res, dur)
        if found is not None:
            p.reserve_mask(found[0], dur, found[1])
        for n in range(1, hosts + 1):
            now = p.first_slice_with(n)
            assert now >= before[n]
            assert p.first_slice_with(n, before[n]) == now  # searched from the kept bound
            before[n] = now


def test_first_slice_with_hand_worked():
    #   host 2 | A A A A A A A A A A | . . . . . . . . . . | . . .
    #   host 1 | . . . . . | R R R R R R R R R R R R R R R | . . .
    #   host 0 | . . . . . | . . . . . | Q Q Q Q Q Q Q Q Q Q Q Q . . .
    #          0           5           10          20          30 ...
    p = ReservationProfile.from_ends(0.0, ProcSet((0, 2)), [(10.0, ProcSet(2))])
    p.reserve(5.0, 15.0, ProcSet(1))   # R: [5, 20) on host 1
    p.reserve(10.0, 25.0, ProcSet(0))  # Q: [10, 35) on host 0
    assert [(s, str(f)) for s, _, f in p.slices()] == [
        (0.0, "0-1"), (5.0, "0"), (10.0, "2"), (20.0, "1-2"), (35.0, "0-2")]
    assert p.first_slice_with(1) == 0.0
    assert p.first_slice_with(2) == 0.0
    assert p.first_slice_with(2, 3.0) == 3.0    # [0, 5) has hosts 0-1 free
    assert p.first_slice_with(2, 6.0) == 20.0   # from 6: [5, 20) has one free host only
    assert p.first_slice_with(3) == 35.0
    assert p.first_slice_with(1, within=0b100) == 10.0   # host 2 alone: free from 10
    assert p.first_slice_with(2, 6.0, within=0b011) == 35.0   # hosts 0-1: together again at 35
    assert p.first_slice_with(4) == INF


# ----------------------------------------------------------------- the two first-fit searches
def _random_slices(rng: random.Random, hosts: int, n: int) -> tuple[list[float], list[int]]:
    starts, free, t = [], [], 0.0
    full = (1 << hosts) - 1
    for _ in range(n):
        starts.append(t)
        r = rng.random()
        if r < 0.3:  # a slice with few hosts free
            free.append(rng.randrange(0, 1 << hosts) & rng.randrange(0, 1 << hosts))
        elif r < 0.4:
            free.append(full)
        else:
            free.append(rng.randrange(0, 1 << hosts))
        t += rng.choice([0.5, 1.0, 2.0, 5.0])
    return starts, free


@given(seed=st.integers(0, 10**7), hosts=st.integers(1, 10), n=st.integers(1, 40))
@settings(max_examples=400, deadline=None)
def test_block_search_equals_the_plain_scan(seed, hosts, n):
    from schedulers.core.first_fit import count_byte, first_fit, first_fit_plain

    rng = random.Random(seed)
    starts, free = _random_slices(rng, hosts, n)
    for _ in range(20):
        res = rng.randint(1, hosts)
        dur = rng.choice([0.0, 0.5, 1.0, 3.0, 4.5, 10.0, 30.0, INF])
        t0 = rng.choice([0.0, 0.25, 1.0, 3.7, starts[-1], starts[-1] + 1.0])
        within = rng.choice([-1, -1, rng.randrange(1, 1 << hosts)])
        not_after = rng.choice([INF, INF, 2.0, 10.0])
        ref = first_fit_plain(starts, free, t0, res, dur, within, not_after)
        assert first_fit(starts, free, t0, res, dur, within, not_after) == ref
        counts = bytearray(count_byte(m) for m in free)
        assert first_fit(starts, free, t0, res, dur, within, not_after, counts) == ref


def test_block_search_hand_worked():
    from schedulers.core.first_fit import first_fit, first_fit_plain

    # 3 hosts; slices of 1 s from 0: {0,1}, {1,2}, {0,2}, {0,1}, {0,1,2}. Two hosts for 2 s:
    # [0, 2) keeps {1} only, [1, 3) {2}, [2, 4) {0}, [3, 5) {0, 1}: the first fit starts at 3.
    starts = [0.0, 1.0, 2.0, 3.0, 4.0]
    free = [0b011, 0b110, 0b101, 0b011, 0b111]
    assert first_fit(starts, free, 0.0, 2, 2.0) == first_fit_plain(starts, free, 0.0, 2, 2.0) == (3.0, 0b011)
    # one host for 3 s: [0, 3) has no host free in all three; [1, 4) neither; [2, 5) host 0
    assert first_fit(starts, free, 0.0, 1, 3.0) == (2.0, 0b001)
    # from 0.5 inside slice 0, 1 s: [0.5, 1.5) keeps {1}
    assert first_fit(starts, free, 0.5, 1, 1.0) == (0.5, 0b010)
    # not after 2.5: the 2-host window at 3 is too late
    assert first_fit(starts, free, 0.0, 2, 2.0, not_after=2.5) is None


def test_skip_to_hand_worked():
    from schedulers.core.first_fit import count_byte, skip_to

    counts = bytearray([0, 3, 1, 93, 45, 255, 2])  # 93 and 45 are "]" and "-" in a regex class
    assert skip_to(counts, 0, 2) == 1
    assert skip_to(counts, 2, 2) == 3
    assert skip_to(counts, 0, 93) == 3 and skip_to(counts, 4, 93) == 5
    assert skip_to(counts, 0, 46) == 3 and skip_to(counts, 4, 45) == 4
    assert skip_to(counts, 6, 3) == 7  # none: len(counts)
    assert skip_to(counts, 0, 1000) == 5  # beyond a byte: the slices counted 255 (capped)
    assert skip_to(None, 4, 2) == 4
    assert count_byte((1 << 300) - 1) == 255 and count_byte(0b1011) == 3


@given(seed=st.integers(0, 10**6), hosts=st.integers(1, 12))
@settings(max_examples=150, deadline=None)
def test_profile_counts_follow_every_update(seed, hosts):
    # the per-slice counts the first fit skips with stay the free hosts' counts through builds,
    # reservations, releases, copies and advances
    from schedulers.core.first_fit import count_byte

    def check(p):
        assert list(p._cnt) == [count_byte(m) for m in p._free]
        assert len(p._cnt) == len(p._starts)

    rng = random.Random(seed)
    p = _random_profile(rng, hosts, 0)
    check(p)
    placed = []
    for _ in range(30):
        op = rng.random()
        if op < 0.5:
            res, dur = rng.randint(1, hosts), rng.choice([1.0, 5.0, 12.5, 40.0])
            found = p.find_earliest_mask(res, dur, not_before=p.now + rng.choice([0.0, 3.0]))
            if found is not None:
                p.reserve_mask(found[0], dur, found[1])
                placed.append((found[0], dur, found[1]))
        elif op < 0.75 and placed:
            start, dur, m = placed.pop(rng.randrange(len(placed)))
            if start >= p.now:
                p.release_mask(start, dur, m)
        elif op < 0.85:
            p = p.copy()
        else:
            p.advance(p.now + rng.choice([0.0, 1.0, 4.0]))
            placed = [x for x in placed if x[0] >= p.now]
        check(p)
