"""Earliest-start search of the reservation profile (``ReservationProfile.find_earliest``), on
hand-worked profiles.

Each profile is drawn host by host (``.`` free, a letter busy: a running job or a reservation) and
its slices are checked first, so a wrong answer cannot come from a profile built differently from
the drawing. Every test includes a search where the window tried first breaks on a slice that
still has enough free hosts, only not the same ones: the answer then starts inside that slice, so a
search that jumps past it (to the slice after) answers too late. The random comparison with a brute
force in ``tests/test_policies.py`` may or may not draw such a case; these always do.
"""

from __future__ import annotations

from procset import ProcSet

from schedulers.core.backfilling import INF, ReservationProfile


def slices(p: ReservationProfile) -> list[tuple[float, float, str]]:
    return [(s, e, str(f)) for s, e, f in p.slices()]


def test_exact_fits_at_slice_boundaries():
    #   host 1 | A A A A A | . . . . . | R R R R R | . . .
    #   host 0 | . . . . . | Q Q Q Q Q | Q Q Q Q Q | . . .
    #          0           10          20          30
    p = ReservationProfile.from_ends(0.0, ProcSet((0, 1)), [(10.0, ProcSet(1))])
    p.reserve(10.0, 20.0, ProcSet(0))  # Q
    p.reserve(20.0, 10.0, ProcSet(1))  # R
    assert slices(p) == [(0.0, 10.0, "0"), (10.0, 20.0, "1"), (20.0, 30.0, ""), (30.0, INF, "0-1")]
    # a 10 s job fits exactly in [0, 10) on host 0: the slice boundary at 10 is not in the window
    assert p.find_earliest(1, 10.0) == (0.0, ProcSet(0))
    # from 5, [5, 15) needs host 0 after 10 and host 1 before 10: no. [10, 20) on host 1 fits
    # exactly, ending where R begins.
    assert p.find_earliest(1, 10.0, not_before=5.0) == (10.0, ProcSet(1))
    # a hair longer and [10, 20.5) runs into R: first fit after everything, at 30 on host 0
    assert p.find_earliest(1, 10.5, not_before=5.0) == (30.0, ProcSet(0))
    # a start right at a boundary given as not_before is kept
    assert p.find_earliest(1, 10.0, not_before=10.0) == (10.0, ProcSet(1))
    assert p.find_earliest(2, 0.0) == (30.0, ProcSet((0, 1)))


def test_job_needing_two_consecutive_slices():
    #   host 2 | A A A A A | . . . . . | . . .
    #   host 1 | . . . . . | . . . . . | . . .
    #   host 0 | . . . . . | Q Q Q Q Q | . . .
    #          0           10          20
    p = ReservationProfile.from_ends(0.0, ProcSet((0, 2)), [(10.0, ProcSet(2))])
    p.reserve(10.0, 10.0, ProcSet(0))  # Q
    assert slices(p) == [(0.0, 10.0, "0-1"), (10.0, 20.0, "1-2"), (20.0, INF, "0-2")]
    # 2 hosts for 20 s: from 0 only host 1 stays free over [0, 20); from 10, hosts 1-2 are free
    # during [10, 20) and [20, 30), two consecutive slices with different free sets
    assert p.find_earliest(2, 20.0) == (10.0, ProcSet((1, 2)))
    # within the first slice alone it fits at once
    assert p.find_earliest(2, 10.0) == (0.0, ProcSet((0, 1)))
    # 3 hosts only once everything is free
    assert p.find_earliest(3, 20.0) == (20.0, ProcSet((0, 2)))


def test_infinite_durations_and_horizons():
    #   host 2 | C C C C C C C C C C C C ...   (C has no walltime: busy forever)
    #   host 1 | . . . . . | R R R R R | . . .
    #   host 0 | A A A A A | . . . . . | . . .
    #          0           10          20
    p = ReservationProfile.from_ends(0.0, ProcSet((0, 2)), [(10.0, ProcSet(0)), (INF, ProcSet(2))])
    p.reserve(10.0, 10.0, ProcSet(1))  # R
    assert slices(p) == [(0.0, 10.0, "1"), (10.0, 20.0, "0"), (20.0, INF, "0-1")]
    # a job without walltime needs its hosts free forever: host 1 is taken by R at 10, host 0 is
    # free from 10 on for good
    assert p.find_earliest(1, INF) == (10.0, ProcSet(0))
    assert p.find_earliest(2, INF) == (20.0, ProcSet((0, 1)))
    assert p.find_earliest(3, INF) is None  # host 2 never frees
    assert p.find_earliest(3, 1.0) is None
    assert p.find_earliest(1, INF, not_before=25.0) == (25.0, ProcSet(0))
    # finite jobs in the same profile: the first slice suffices for a short one
    assert p.find_earliest(1, 10.0) == (0.0, ProcSet(1))


def test_host_choice_is_lowest_ids_free_over_the_whole_window():
    #   host 3 | A A A A A | . . . . . | . . .
    #   host 2 | A A A A A | . . . . . | . . .
    #   host 1 | . . . . . | Q Q Q Q Q | . . .
    #   host 0 | . . . . . | Q Q Q Q Q | . . .
    #          0           10          20
    p = ReservationProfile.from_ends(0.0, ProcSet((0, 3)), [(10.0, ProcSet((2, 3)))])
    p.reserve(10.0, 10.0, ProcSet((0, 1)))  # Q
    assert slices(p) == [(0.0, 10.0, "0-1"), (10.0, 20.0, "2-3"), (20.0, INF, "0-3")]
    # 2 hosts for 15 s: not 0-1 (lowest, but busy in [10, 20)) at 20; hosts 2-3 at 10
    assert p.find_earliest(2, 15.0) == (10.0, ProcSet((2, 3)))
    # the lowest of the hosts free during the whole window, not of those free at its start
    assert p.find_earliest(1, 15.0, not_before=12.0) == (12.0, ProcSet(2))
    assert p.find_earliest(3, 1.0) == (20.0, ProcSet((0, 2)))
    assert p.find_earliest(1, 5.0, not_before=3.0) == (3.0, ProcSet(0))


def test_free_now_steps_say_what_fits_now():
    #   host 2 | . . . . . | R R R R R | . . .
    #   host 1 | A A A A A | . . . . . | . . .
    #   host 0 | . . . . . | . . . . . | Q Q Q
    #          0           10          20
    p = ReservationProfile.from_ends(0.0, ProcSet((0, 2)), [(10.0, ProcSet(1))])
    p.reserve(10.0, 10.0, ProcSet(2))  # R
    p.reserve(20.0, INF, ProcSet(0))   # Q, forever
    assert slices(p) == [(0.0, 10.0, "0 2"), (10.0, 20.0, "0-1"), (20.0, INF, "1-2")]
    # from now: 2 hosts (0, 2) during the first slice, 1 (host 0) until 20, none after
    assert p.free_now_steps() == ([10.0, 20.0], [2, 1, 0])
    # the definition: res fits now for dur when res <= caps[number of limits < now + dur]
    limits, caps = p.free_now_steps()
    for res in (1, 2, 3):
        for dur in (0.0, 5.0, 10.0, 10.5, 20.0, 25.0, INF):
            crossed = sum(1 for t in limits if t < dur)
            assert (p.fits_now(res, dur) is not None) == (res <= caps[crossed]), (res, dur)


def test_hold_of_a_zero_length_job_keeps_its_hosts_busy_now_only():
    # hosts 0-3 free from t = 10; a job of walltime 0 started at 10 on hosts 0-1 holds them at 10
    # (Batsim runs it a while all the same) and frees them at the next float; a 5 s job holds 5 s
    import math
    p = ReservationProfile(10.0, ProcSet((0, 3)))
    p.hold_mask(10.0, 0.0, 0b0011)
    assert p.free_mask_at(10.0) == 0b1100
    assert p.free_mask_at(math.nextafter(10.0, INF)) == 0b1111
    p.hold_mask(10.0, 5.0, 0b0100)
    assert p.free_mask_at(14.9) == 0b1011 and p.free_mask_at(15.0) == 0b1111
