"""First fit in a reservation profile: the earliest window of ``res`` hosts free for ``duration``.

The search behind :meth:`ReservationProfile.find_earliest_mask
<schedulers.core.backfilling.ReservationProfile.find_earliest_mask>` (conservative and EASY
backfilling's "profile of expected free processors", Mu'alem & Feitelson 2001, IEEE TPDS 12(6),
section 2), on the profile's two parallel lists: ``starts`` (slice starts, s, increasing; the
last slice ends at ``inf``) and ``free`` (each slice's free hosts, bit masks). A window may start
at ``t0`` (the earliest acceptable start, inside its slice) or at any later slice start; it fits
when at least ``res`` hosts of ``within`` are free in every slice it meets, and its hosts are those
free during all of them. Two searches, with the same answers:

* :func:`first_fit_plain`: for each candidate start, intersect the slices of its window until the
  count falls below ``res``; on a failure at slice ``j`` it moves to ``j + 1`` when slice ``j``
  alone has too few hosts, else to the next slice. ``O(S x W)`` mask operations for ``S`` slices
  scanned and windows of ``W`` slices: under a backlog, where windows break on host *identity*
  (enough hosts free in each slice, not the same ones), most candidate starts are tried.
* :func:`first_fit`: every window that starts in slices ``k..j`` and breaks at slice ``x`` contains
  all of ``k..x``. The search keeps, for a block of slices ``b..j`` (the one where the last window
  broke), the intersections ``free[k] & ... & free[j]`` for each ``k`` (computed once, backward),
  and the intersection ``fwd`` of the slices after ``j`` reached so far: the window of a start in
  slice ``k`` has the hosts ``suffix[k] & fwd``. On a failure at slice ``x``, the candidates of the
  block are skipped while ``suffix[k] & fwd & free[x]`` has too few hosts (their windows all contain
  ``x``); when the block runs out, the slices ``j + 1..x`` become the next block. Each slice enters
  one block and ``fwd`` once: ``O(S)`` mask operations per search (the "queue from two stacks" of
  sliding-window aggregates, for an intersection, which has no inverse).

Both return ``(start, mask)`` with ``mask`` the hosts free during the whole window (at least
``res``; the caller picks ``res`` of them), or None when no window starts by ``not_after``.
``tests/test_first_fit.py`` checks that the two agree on random profiles.
"""

from __future__ import annotations

import re
from bisect import bisect_right

INF = float("inf")

__all__ = ["count_byte", "first_fit", "first_fit_plain", "skip_to"]

#: ``_AT_LEAST[n]`` finds a byte ``>= n`` (n in 1..255), compiled when first asked (compiling all
#: of them at import added 10-25 ms to every command's start-up, ``python -X importtime``)
_AT_LEAST: list[re.Pattern[bytes] | None] = [None] * 256


def _at_least(n: int) -> re.Pattern[bytes]:
    pattern = _AT_LEAST[n] = re.compile(b"[\\x%02x-\\xff]" % max(n, 1))
    return pattern


def count_byte(mask: int) -> int:
    """The number of hosts of ``mask``, capped at 255: one byte of a profile's slice counts."""
    c = mask.bit_count()
    return c if c < 255 else 255


def skip_to(counts: bytearray | None, i: int, res: int) -> int:
    """The first slice index ``>= i`` whose count (``counts``, one byte per slice, capped at 255 by
    :func:`count_byte`) is at least ``res`` (at least 255 when ``res`` is larger: a slice with
    ``res`` free hosts is never skipped); ``len(counts)`` when none. A search in C (a regular
    expression over the bytes) instead of a loop over the slices. ``counts`` None: ``i``."""
    if counts is None:
        return i
    n = res if res < 255 else 255
    found = (_AT_LEAST[n] or _at_least(n)).search(counts, i)
    return len(counts) if found is None else found.start()


def first_fit_plain(starts: list[float], free: list[int], t0: float, res: int, duration: float,
                    within: int = -1, not_after: float = INF) -> tuple[float, int] | None:
    """The first window (module docstring) by trying each candidate start in turn.

    Args:
        starts: slice starts (s), increasing, ``starts[0] <= t0``.
        free: free hosts of each slice (bit masks), parallel to ``starts``.
        t0: earliest start (s). res: hosts (>= 1). duration: s (>= 0, ``inf`` allowed).
        within: hosts the window may use (mask; -1: any). not_after: latest start (s).

    Returns:
        ``(start in s, free hosts of the window as a mask)`` or None.
    """
    n = len(starts)
    i = bisect_right(starts, t0) - 1
    while i < n:
        if (free[i] & within).bit_count() < res:
            i += 1
            continue
        start = starts[i] if starts[i] > t0 else t0
        if start > not_after:
            return None
        m = free[i] & within
        end = start + duration
        j = i + 1
        while j < n and starts[j] < end:
            m &= free[j]
            if m.bit_count() < res:
                break
            j += 1
        else:
            return start, m
        # every window starting in slices i..j contains slice j
        i = j + 1 if (free[j] & within).bit_count() < res else i + 1
    return None


def first_fit(starts: list[float], free: list[int], t0: float, res: int, duration: float,
              within: int = -1, not_after: float = INF,
              counts: bytearray | None = None) -> tuple[float, int] | None:
    """The first window (module docstring) with the block intersections: ``O(S)``.

    Args and returns: as :func:`first_fit_plain`, with the same answers; ``counts`` (optional,
    one byte per slice: :func:`count_byte` of its free hosts) lets the slices with too few free
    hosts be skipped in C (:func:`skip_to`).
    """
    n = len(starts)
    i = bisect_right(starts, t0) - 1
    while i < n:
        if (free[i] & within).bit_count() < res:
            i = skip_to(counts, i + 1, res)
            continue
        # the block is slice i alone; the candidate start is in slice k = i
        base = j = k = i
        suffix = [free[i] & within]  # suffix[k - base] = free[k] & ... & free[j] & within
        fwd = -1  # free[j + 1] & ... & free[x - 1]
        x = i + 1  # the next slice a window meets
        while True:
            sk = starts[k]
            start = sk if sk > t0 else t0
            if start > not_after:
                return None
            end = start + duration
            m = suffix[k - base] & fwd
            while x < n and starts[x] < end:
                fx = free[x]
                m2 = m & fx
                if m2.bit_count() < res:
                    break
                fwd &= fx
                m = m2
                x += 1
            else:
                return start, m
            # the window from slice k breaks at slice x; so does that of every later start of
            # the block whose hosts, with slice x's, are too few (its window contains x too)
            f2 = fwd & free[x]
            k += 1
            while k <= j and (suffix[k - base] & f2).bit_count() < res:
                k += 1
            if k <= j:
                continue
            # every start of the block fails: the next candidates are in slices j+1 .. x, whose
            # windows all contain slice x; their intersections up to x, computed backward,
            # shrink as the start moves back: the first start left is the last one with enough
            s = free[x] & within
            if s.bit_count() < res:
                i = x + 1  # no window contains slice x
                break
            new = [s]
            y = x - 1
            while y > j:
                s &= free[y]
                if s.bit_count() < res:
                    break
                new.append(s)
                y -= 1
            new.reverse()
            base = k = y + 1
            j = x
            suffix = new
            fwd = -1
            x = j + 1
    return None
