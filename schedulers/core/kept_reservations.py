"""Reservations kept between scheduling passes: classic conservative backfilling's schedule.

Classic conservative backfilling (Mu'alem & Feitelson 2001, "Utilization, predictability,
workloads, and user runtime estimates in scheduling the IBM SP2 with backfilling", IEEE TPDS
12(6):529-543, section 2) keeps one profile of the future (:class:`~schedulers.core.backfilling.
ReservationProfile`) from pass to pass: the running jobs' hosts until their expected ends and one
reservation per waiting job. :class:`KeptReservations` owns that profile, each running job's hold
and each waiting job's reservation, and the three operations the algorithm is made of:

* :meth:`KeptReservations.insert`: a new job's first fit, no reservation moves;
* :meth:`KeptReservations.end`: a job ended, the rest of its hold (from now to its expected
  end) is free again;
* :meth:`KeptReservations.compress`: the job's reservation is removed and the job inserted again
  first fit while every other stays in place. Its old window is free once it is removed, so the
  new start is never later than the old one (a job is never moved later); at the same start the
  host choice is made again among the hosts free over the window (batsched's
  ``conservative_bf`` makes the same removal and first-fit re-insertion,
  ``src/algo/conservative_bf.cpp``, ``Schedule::add_job_first_fit`` in ``src/schedule.cpp``).

Cost, and what keeps a compression cheap: a job's first fit can change only where the profile
gained free time since the job was last placed, so the releases (a job's end, a reservation
moved or dropped) are logged and a compression searches only the starts such a release can
have opened (:meth:`KeptReservations.compress`), from a lower bound, kept per ``res``, of the
first time at which ``res`` hosts are free; with no release since, the job is left in place
without any search. A search costs one removal, one first fit and one reservation, ``O(S)`` each
on ``S`` slices. Under a long backlog most jobs still need the search after a completion (the
releases of the jobs moved before them span the whole profile): a completion pass stays
``O(Q S)`` for ``Q`` waiting jobs.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right

from .backfilling import INF, HostChoice, Reservation, ReservationProfile
from .model import Job

__all__ = ["KeptReservations"]



class KeptReservations:
    """The kept profile, running jobs' holds and waiting jobs' reservations (module docstring).

    Args:
        prof: the profile to keep, every usable host free (its origin is the current time, s);
            running jobs are added with :meth:`hold`, waiting jobs with :meth:`insert`.

    Attributes:
        prof: the kept :class:`~schedulers.core.backfilling.ReservationProfile`.
        reservations: waiting job id -> its :class:`~schedulers.core.backfilling.Reservation`
            (start > now after a pass, s).
        holds: running job id -> ``(expected end (s), hosts bit mask)``.
    """

    __slots__ = ("prof", "reservations", "holds", "_ends", "_lb", "_placed", "_seq", "_lo", "_hi")

    def __init__(self, prof: ReservationProfile) -> None:
        self.prof = prof
        self.reservations: dict[str, Reservation] = {}
        self.holds: dict[str, tuple[float, int]] = {}
        self._ends: list[tuple[float, str]] = []  # heap of holds' expected ends
        self._lb: dict[int, float] = {}  # res -> lower bound of the first time res hosts are free
        # release log (see _released): releases are numbered; _lo holds (number, start) with
        # starts increasing, _hi (number, end) with ends decreasing, so that the earliest start
        # and the latest end of the releases after a given number are one bisection away
        self._seq = 0
        self._lo: tuple[list[int], list[float]] = ([], [])
        self._hi: tuple[list[int], list[float]] = ([], [])
        self._placed: dict[str, int] = {}  # waiting job id -> release number when last placed

    # --------------------------------------------------------------------------- running jobs
    def hold(self, job_id: str, start: float, duration: float, hosts: int) -> None:
        """A job starts at ``start`` (s, the profile's origin) on ``hosts`` for ``duration`` s
        (``inf``: for ever): its hosts are held until ``start + duration``.

        Raises:
            ValueError: a host not free during the window (as ``ReservationProfile.hold_mask``).
        """
        self.prof.hold_mask(start, duration, hosts)
        end = start + duration if duration > 0 else math.nextafter(start, INF)
        self.holds[job_id] = (end, hosts)
        if end != INF:
            heapq.heappush(self._ends, (end, job_id))

    def end(self, job_id: str) -> None:
        """The running job ``job_id`` ended: its hosts are free from now to its expected end
        (nothing when unknown, e.g. started before this profile was built)."""
        h = self.holds.pop(job_id, None)
        if h is None:
            return
        end, hosts = h
        now = self.prof.now
        if end > now:
            self.prof.release_mask(now, end - now, hosts, end=end)
            self._released(now, end)

    def overdue(self, now: float) -> bool:
        """Whether a running job is past its expected end at ``now`` (s) and not reported ended:
        Batsim kills a job at its walltime, but its completion may come a few 1e-10 s later
        than the start the hold was computed from; its hosts are then free in the profile while
        still busy (the caller rebuilds the profile from the jobs' real starts)."""
        ends, holds = self._ends, self.holds
        while ends:
            end, job_id = ends[0]
            h = holds.get(job_id)
            if h is None or h[0] != end:
                heapq.heappop(ends)  # ended already
                continue
            return end <= now
        return False

    def advance(self, now: float) -> None:
        """Move the profile's origin to ``now`` (s); see :meth:`~schedulers.core.backfilling.
        ReservationProfile.advance`."""
        self.prof.advance(now)

    # -------------------------------------------------------------------------- reservations
    def _released(self, a: float, b: float) -> None:
        """Hosts became free during ``[a, b)`` (s): logged, and every lower bound of
        :meth:`_first_slice_with` drops to ``a`` at most."""
        lb = self._lb
        for r, v in lb.items():
            if v > a:
                lb[r] = a
        self._seq += 1
        seq = self._seq
        nums, vals = self._lo
        while vals and vals[-1] >= a:
            nums.pop()
            vals.pop()
        nums.append(seq)
        vals.append(a)
        nums, vals = self._hi
        while vals and vals[-1] <= b:
            nums.pop()
            vals.pop()
        nums.append(seq)
        vals.append(b)

    def _released_since(self, seq: int) -> tuple[float, float]:
        """The earliest start and the latest end (s) of the releases numbered after ``seq``
        (``(inf, -inf)``: none)."""
        nums, vals = self._lo
        i = bisect_right(nums, seq)
        if i == len(nums):
            return INF, -INF
        nums2, vals2 = self._hi
        return vals[i], vals2[bisect_right(nums2, seq)]

    def _first_slice_with(self, res: int) -> float:
        """The first slice start (s) at which at least ``res`` hosts are free (``inf``: never),
        searched from the kept lower bound."""
        prof = self.prof
        starts, free = prof._starts, prof._free
        t = self._lb.get(res, prof.now)
        i = bisect_right(starts, t) - 1 if t > prof.now else 0
        n = len(starts)
        while i < n and free[i].bit_count() < res:
            i += 1
        t = INF if i == n else (starts[i] if i > 0 else prof.now)
        self._lb[res] = t
        return t

    def insert(self, job: Job, duration: float, choose: HostChoice | None) -> Reservation:
        """First fit of ``job`` (``job.res`` hosts, ``duration`` s) in the kept profile, reserved
        there (a start at now is a hold: the caller starts the job). No other reservation moves.

        Returns:
            The reservation; start ``inf`` (nothing reserved) when the hosts never become free
            for that long (hosts held for ever).
        """
        prof = self.prof
        low = self._first_slice_with(job.res)
        found = None if low == INF else prof.find_earliest_mask(job.res, duration, low, choose)
        if found is None:
            return Reservation(job, INF, duration, prof.final_free_mask)
        start, hosts = found
        return self._place(job, start, duration, hosts)

    def _place(self, job: Job, start: float, duration: float, hosts: int) -> Reservation:
        """Put ``job`` at ``start`` (s) on ``hosts`` (bit mask) for ``duration`` (s): held if
        ``start`` is now (it starts), else reserved and marked placed at the current release count."""
        r = Reservation(job, start, duration, hosts)
        if start == self.prof.now:
            self.hold(job.id, start, duration, hosts)
            self._placed.pop(job.id, None)
        else:
            self.prof.reserve_mask(start, duration, hosts)
            self.reservations[job.id] = r
            self._placed[job.id] = self._seq
        return r

    def drop(self, job_id: str) -> None:
        """Cancel the reservation of ``job_id`` (if any): its window is free again."""
        r = self.reservations.pop(job_id, None)
        self._placed.pop(job_id, None)
        if r is not None and r.start != INF:
            self.prof.release_mask(r.start, r.duration, r.hosts_mask)
            self._released(r.start, r.start + r.duration)

    def _kept(self, r: Reservation) -> Reservation:
        """``r`` stays as it is, confirmed as the job's first fit now; one that starts now
        becomes a hold (the caller starts the job)."""
        job_id = r.job.id
        if r.start == self.prof.now:
            del self.reservations[job_id]
            self._placed.pop(job_id, None)
            end = r.start + r.duration
            self.holds[job_id] = (end, r.hosts_mask)
            if end != INF:
                heapq.heappush(self._ends, (end, job_id))
        else:
            self._placed[job_id] = self._seq
        return r

    def compress(self, job: Job, duration: float, choose: HostChoice | None) -> Reservation:
        """Remove ``job``'s reservation and insert it again first fit, every other reservation in
        place (module docstring): never later than before. A job without a reservation is
        inserted (:meth:`insert`, ``duration`` s); one with a reservation keeps its duration.

        Only what a release made possible is searched. When the job was last placed (inserted
        or compressed), its window was the first fit of the profile without it; since then that
        profile only lost free time, except for the releases logged since (a job's end, a
        reservation moved or dropped). A window free now but not then meets one of those
        releases, ``[a, b)``: it starts before the latest ``b`` and ends after the earliest
        ``a``. So the search covers the starts from ``max(a - duration, first time job.res
        hosts are free)`` to ``min(b, start)``; with no window there the job keeps its start,
        and its hosts unless a release meets its own window (then the host choice is made again
        at the same start). With no release since, nothing is searched.
        """
        r = self.reservations.get(job.id)
        if r is None:
            return self.insert(job, duration, choose)
        a, b = self._released_since(self._placed[job.id])
        start, dur = r.start, r.duration
        end = start + dur
        lo = max(a - dur, self.prof.now)
        earlier = lo < start and lo < b
        if earlier:
            lo = max(lo, self._first_slice_with(job.res))
            earlier = lo < start and lo < b
        same = a < end and b > start  # a release meets the job's own window
        if not earlier and not same:
            return self._kept(r)
        prof = self.prof
        prof.release_mask(start, dur, r.hosts_mask)
        found = None
        if earlier:
            found = prof.find_earliest_mask(job.res, dur, lo, choose, not_after=min(b, start))
        if found is None:
            found = prof.find_earliest_mask(job.res, dur, start, choose, not_after=start)
        assert found is not None  # its own window is free again
        new_start, hosts = found
        if new_start == start and hosts == r.hosts_mask:
            prof.reserve_mask(start, dur, hosts)
            return self._kept(r)
        del self.reservations[job.id]
        new = self._place(job, new_start, dur, hosts)
        self._released(start, end)  # its old window (what the new one covers is a reduction)
        if new_start != prof.now:
            self._placed[job.id] = self._seq
        return new
