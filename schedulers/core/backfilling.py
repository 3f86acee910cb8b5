"""Reservation profile shared by every backfilling policy (EASY, conservative, green, BUC on EASY).

A *profile* describes which hosts are free in the future, as predicted from the walltimes of the
running jobs and from the reservations made so far. It is a list of time slices
``[t_start, t_end)`` (seconds); the last slice ends at ``+inf``. Each slice holds the set of host
ids free during the whole slice. Operations:

* :meth:`ReservationProfile.from_running` builds it from ``now``, the usable hosts and the running
  jobs' expected ends (``start_time + walltime``; a job without walltime, Batsim's ``-1``, never
  ends as far as the profile knows);
* :meth:`ReservationProfile.find_earliest` first fit: the earliest start ``>= not_before`` at which
  ``res`` hosts stay free for ``duration`` seconds, on hosts free during the whole window picked
  by a host-choice function (:data:`HostChoice`; default :func:`lowest_bits`, the lowest ids);
* :meth:`ReservationProfile.fits_now` the same, restricted to a start at ``now``;
* :meth:`ReservationProfile.reserve` / :meth:`ReservationProfile.release` insertion and removal of
  a reservation (or of a running job's remaining time);
* :meth:`ReservationProfile.advance` moves the profile's origin to a later ``now``.

This is the "profile of expected free processors" of conservative and EASY backfilling
(Mu'alem & Feitelson 2001, "Utilization, predictability, workloads, and user runtime estimates in
scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6):529-543, section 2; EASY itself is Lifka
1995, "The ANL/IBM SP scheduling system", JSSPP, LNCS 949:295-303), with explicit host sets instead
of processor counts so the reserved hosts are known. Which hosts, among those free during a
window, a reservation gets is the caller's choice (``choose``), so that owner- or energy-aware
placement applies to reservations as well as to immediate starts (``gridsched`` DESIGN.md,
"Principles").

Representation: the public API takes and returns :class:`procset.ProcSet` interval sets; inside,
host sets are Python ``int`` bit masks (bit ``i`` set = host ``i``). procset 1.0 is pure Python and
its operations cost 3-60 microseconds on fragmented sets (building a ProcSet from 64 disjoint
intervals costs about 2 ms), while ``int`` ``&``, ``|`` and ``bit_count`` cost well under 1
microsecond for hundreds of hosts. The ``*_mask`` methods and the helpers :func:`procset_to_mask`,
:func:`mask_to_procset` and :func:`lowest_bits` are the fast path policies use in hot loops.

Cost: with ``S`` slices (at most running jobs + 2 x reservations + 1) building is
``O(R log R)`` for ``R`` running jobs, :meth:`~ReservationProfile.find_earliest` is ``O(S)`` mask
operations (:func:`schedulers.core.first_fit.first_fit`: each slice is intersected a bounded number
of times, however often windows break on host identity),
:meth:`~ReservationProfile.reserve` and :meth:`~ReservationProfile.release` are ``O(S)``.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from typing import Callable, Iterable

from procset import ProcInt, ProcSet

from .first_fit import count_byte as _count
from .first_fit import first_fit, skip_to
from .model import Job

INF = math.inf


def _time(t: float) -> float:
    """A profile's time (s) as given when it is an ``int`` (a profile in exact units,
    :mod:`schedulers.core.exact_time`), else as a float."""
    return t if type(t) is int else float(t)

#: Host choice of a search: ``choose(candidates, res) -> hosts``, all three bit masks / counts:
#: ``candidates`` are the hosts free during the whole window (at least ``res`` of them), the
#: result must be ``res`` of them. Default everywhere: :func:`lowest_bits` (the lowest ids).
HostChoice = Callable[[int, int], int]

__all__ = [
    "INF",
    "HostChoice",
    "ReservationProfile",
    "Reservation",
    "expected_end",
    "job_duration",
    "procset_to_mask",
    "mask_to_procset",
    "mask_intervals",
    "lowest_bits",
    "lowest_ids",
]


# ----------------------------------------------------------------------------- host-set helpers
def procset_to_mask(hosts: ProcSet | Iterable[int]) -> int:
    """Bit mask of a host set (bit ``i`` set = host id ``i``); ``O(#intervals)`` for a ProcSet.

    Raises:
        ValueError: a negative host id.
    """
    m = 0
    if isinstance(hosts, ProcSet):
        for itv in hosts.intervals():
            if itv.inf < 0:
                raise ValueError(f"negative host id in {hosts}")
            m |= ((1 << (itv.sup - itv.inf + 1)) - 1) << itv.inf
        return m
    for i in hosts:
        if i < 0:
            raise ValueError(f"negative host id {i}")
        m |= 1 << i
    return m


def mask_intervals(mask: int) -> list[tuple[int, int]]:
    """The closed intervals ``[(inf, sup), ...]`` of a host mask, in increasing order."""
    if mask < 0:
        raise ValueError("host masks are non-negative")
    out: list[tuple[int, int]] = []
    base = 0
    while mask:
        tz = (mask & -mask).bit_length() - 1  # zeros before the next run of ones
        mask >>= tz
        base += tz
        ones = (~mask & (mask + 1)).bit_length() - 1  # length of the run of ones
        out.append((base, base + ones - 1))
        mask >>= ones
        base += ones
    return out


def _procset_fast(intervals: list[tuple[int, int]]) -> ProcSet:
    # Fast path: procset 1.0 keeps a sorted list of disjoint, non-adjacent ProcInt in ``_itvs``;
    # ProcSet(*intervals) would merge them one by one (quadratic). Checked at import (below).
    ps = ProcSet.__new__(ProcSet)  # skips __init__'s (empty) merge loop
    ps._itvs = [ProcInt(a, b) for a, b in intervals]  # noqa: SLF001
    return ps


def _procset_slow(intervals: list[tuple[int, int]]) -> ProcSet:
    return ProcSet(*intervals)


def _check_fast_path() -> bool:
    try:
        sample = [(0, 2), (5, 5), (7, 9)]
        fast = _procset_fast(sample)
        slow = ProcSet(*sample)
        return (fast == slow and str(fast) == str(slow) and len(fast) == 7
                and (fast | ProcSet(3)) == ProcSet((0, 3), 5, (7, 9)))
    except Exception:  # pragma: no cover - another procset version
        return False


#: builds a ProcSet from sorted, disjoint, non-adjacent closed intervals
_procset_from_sorted_disjoint = _procset_fast if _check_fast_path() else _procset_slow


def mask_to_procset(mask: int) -> ProcSet:
    """The :class:`ProcSet` of a host mask (``O(#intervals)``)."""
    if not mask:
        return ProcSet()
    low = mask & -mask
    if mask > 0 and not (mask + low) & mask:   # one run of ones (one interval): its two ends
        return _procset_from_sorted_disjoint([(low.bit_length() - 1, mask.bit_length() - 1)])
    return _procset_from_sorted_disjoint(mask_intervals(mask))


def lowest_bits(mask: int, n: int) -> int:
    """The ``n`` lowest set bits of ``mask`` (the ``n`` lowest free host ids), as a mask.

    Raises:
        ValueError: ``n`` is negative or ``mask`` has fewer than ``n`` bits set.
    """
    if n == 1 and mask > 0:   # the common case: the lowest set bit
        return mask & -mask
    if n < 0:
        raise ValueError(f"cannot take {n} hosts")
    if mask.bit_count() < n:
        raise ValueError(f"{n} hosts requested but only {mask.bit_count()} free")
    out = 0
    base = 0
    left = n
    m = mask
    while left:
        tz = (m & -m).bit_length() - 1
        m >>= tz
        base += tz
        ones = (~m & (m + 1)).bit_length() - 1
        take = ones if ones < left else left
        out |= ((1 << take) - 1) << base
        left -= take
        m >>= ones
        base += ones
    return out


def lowest_ids(hosts: ProcSet, n: int) -> ProcSet:
    """The ``n`` lowest ids of ``hosts`` (same result as :func:`schedulers.core.policy.first_hosts`,
    but linear in the number of intervals).

    Raises:
        ValueError: fewer than ``n`` hosts.
    """
    return mask_to_procset(lowest_bits(procset_to_mask(hosts), n))


# ----------------------------------------------------------------------------------- job helpers
def job_duration(job: Job) -> float:
    """The job's walltime (s), or ``inf`` when it has none (Batsim's ``-1``)."""
    return float(job.walltime) if job.has_walltime else INF


def expected_end(job: Job) -> float:
    """``start_time + walltime`` (s) of a running job; ``inf`` without walltime.

    Batsim kills a job at ``starting_time + walltime`` (``COMPLETED_WALLTIME_REACHED``), so a job
    with a walltime never runs longer than this.

    Raises:
        ValueError: the job has not started (no ``start_time``).
    """
    if job.start_time is None:
        raise ValueError(f"job {job.id} has not started")
    return job.start_time + job.walltime if job.has_walltime else INF


@dataclass(slots=True)
class Reservation:
    """Hosts promised to a waiting job.

    Attributes:
        job: the job.
        start: reserved start time (s); ``inf`` when the profile never frees enough hosts (jobs
            without walltime hold them): then ``hosts`` are the hosts that do become free.
        duration: reserved duration (s), the job's walltime or ``inf``.
        hosts_mask: the reserved hosts as a bit mask (see :attr:`hosts`).
    """

    job: Job
    start: float
    duration: float
    hosts_mask: int

    @property
    def hosts(self) -> ProcSet:
        """The reserved hosts."""
        return mask_to_procset(self.hosts_mask)

    @property
    def end(self) -> float:
        """``start + duration`` (s)."""
        return self.start + self.duration


def _chosen(choose: HostChoice, candidates: int, res: int) -> int:
    """``choose(candidates, res)``, checked: exactly ``res`` hosts, all among ``candidates``.

    Raises:
        ValueError: the choice breaks either rule.
    """
    hosts = choose(candidates, res)
    if hosts < 0 or hosts & ~candidates or hosts.bit_count() != res:
        got = mask_to_procset(hosts) if hosts >= 0 else f"the negative mask {hosts}"
        raise ValueError(f"host choice returned {got} for {res} hosts among "
                         f"{mask_to_procset(candidates)} (free during the whole window)")
    return hosts


# ------------------------------------------------------------------------------------- profile
class ReservationProfile:
    """Free hosts over time as ``[t_start, t_end)`` slices (see the module docstring).

    Args:
        now: origin of the profile (s); the first slice starts there. An ``int`` is kept as it
            is (other numbers become floats): a profile in the exact units of
            :mod:`schedulers.core.exact_time`, whose every time and duration is then given in
            those units (integers, or ``inf``), adds and compares them without rounding.
        hosts: every usable host (free from ``now`` on until something is reserved).

    Attributes:
        now: the profile's origin (s, or units).
        hosts_mask: the usable hosts (bit mask).

    Sources: Mu'alem & Feitelson 2001 (IEEE TPDS 12(6)), section 2 "profile"; Lifka 1995 (EASY).
    """

    __slots__ = ("now", "hosts_mask", "_starts", "_free", "_cnt")

    def __init__(self, now: float, hosts: ProcSet | int) -> None:
        self.now = _time(now)
        self.hosts_mask = hosts if isinstance(hosts, int) else procset_to_mask(hosts)
        self._starts: list[float] = [self.now]
        self._free: list[int] = [self.hosts_mask]
        # each slice's number of free hosts, capped at 255 (one byte): the first fit skips the
        # slices with too few in C (schedulers.core.first_fit.skip_to)
        self._cnt = bytearray((_count(self.hosts_mask),))

    # ----------------------------------------------------------------------------- construction
    @classmethod
    def from_ends(cls, now: float, hosts: ProcSet | int,
                  busy: Iterable[tuple[float, ProcSet | int]]) -> "ReservationProfile":
        """Profile of ``hosts`` where each ``(end, alloc)`` of ``busy`` holds ``alloc`` until ``end``.

        Args:
            now: origin (s).
            hosts: usable hosts (ProcSet or mask); hosts of ``alloc`` outside it are ignored.
            busy: ``(expected end in s, hosts)`` of each running job (``inf``: never ends). An end
                ``<= now`` (a job past its walltime whose completion Batsim has not reported yet)
                is taken as ``math.nextafter(now, inf)``: busy now, free right after.

        A host held by several entries (compute sharing) becomes free at the latest of their ends.
        """
        prof = cls(now, hosts)
        hm = prof.hosts_mask
        now = prof.now
        ends: dict[float, int] = {}
        busy_all = 0
        for end, alloc in busy:
            m = (alloc if isinstance(alloc, int) else procset_to_mask(alloc)) & hm
            if not m:
                continue
            busy_all |= m
            if end <= now:
                end = math.nextafter(now, INF)
            ends[end] = ends.get(end, 0) | m
        if not busy_all:
            return prof
        order = sorted(ends)
        # a host is freed at the latest end among the entries holding it
        freed: list[int] = [0] * len(order)
        later = 0
        for k in range(len(order) - 1, -1, -1):
            m = ends[order[k]]
            freed[k] = m & ~later
            later |= m
        free = hm & ~busy_all
        starts = prof._starts
        frees = prof._free
        cnt = prof._cnt
        frees[0] = free
        cnt[0] = _count(free)
        for t, m in zip(order, freed):
            if t == INF or not m:
                continue
            free |= m
            starts.append(t)
            frees.append(free)
            cnt.append(_count(free))
        return prof

    @classmethod
    def from_running(cls, now: float, hosts: ProcSet | int,
                     running: Iterable[Job]) -> "ReservationProfile":
        """Profile of ``hosts`` given the running jobs (their ``allocation`` until
        :func:`expected_end`, i.e. ``start_time + walltime``; forever without walltime).

        Raises:
            ValueError: a job without ``allocation`` or ``start_time``.
        """
        busy = []
        for job in running:
            if job.allocation is None:
                raise ValueError(f"running job {job.id} has no allocation")
            busy.append((expected_end(job), job.allocation))
        return cls.from_ends(now, hosts, busy)

    def copy(self) -> "ReservationProfile":
        """An independent copy (O(S))."""
        new = ReservationProfile.__new__(ReservationProfile)
        new.now = self.now
        new.hosts_mask = self.hosts_mask
        new._starts = list(self._starts)
        new._free = list(self._free)
        new._cnt = bytearray(self._cnt)
        return new

    # ----------------------------------------------------------------------------------- queries
    def __len__(self) -> int:
        """Number of slices."""
        return len(self._starts)

    def slices(self) -> list[tuple[float, float, ProcSet]]:
        """``[(t_start, t_end, free hosts), ...]`` in time order; the last ``t_end`` is ``inf``."""
        ends = self._starts[1:] + [INF]
        return [(s, e, mask_to_procset(f)) for s, e, f in zip(self._starts, ends, self._free)]

    def free_mask_at(self, t: float) -> int:
        """Mask of the hosts free at time ``t`` (s, ``>= now``).

        Raises:
            ValueError: ``t < now``.
        """
        if t < self.now:
            raise ValueError(f"time {t} is before the profile's origin {self.now}")
        return self._free[bisect_right(self._starts, t) - 1]

    def free_at(self, t: float) -> ProcSet:
        """Hosts free at time ``t`` (s, ``>= now``). Raises ValueError when ``t < now``."""
        return mask_to_procset(self.free_mask_at(t))

    @property
    def final_free_mask(self) -> int:
        """Hosts free from the last slice on (free forever unless reserved later)."""
        return self._free[-1]

    def first_slice_with(self, n: int, not_before: float | None = None, within: int = -1) -> float:
        """The first time ``>= not_before`` (s; default the origin) at which at least ``n`` hosts
        (among ``within``, a mask; default every host) are free: ``not_before`` itself or a slice
        start; ``inf`` when never. A window of ``n`` hosts cannot start earlier (its first instant
        needs them), so a first fit searched from there (``find_earliest_mask(..., not_before=``
        this``)``) finds the same start and hosts as one from ``not_before``. While a profile only
        loses free time (reservations added, nothing released) this time never moves earlier: a
        caller may keep it as the ``not_before`` of the next query for ``n`` (what
        :meth:`schedulers.heft.HEFT.backfill_pass` and :class:`~schedulers.core.kept_reservations.
        KeptReservations` do). ``O(slices scanned)``."""
        starts, free = self._starts, self._free
        t0 = self.now if not_before is None or not_before < self.now else _time(not_before)
        i = bisect_right(starts, t0) - 1
        k = len(starts)
        while i < k and (free[i] & within).bit_count() < n:
            i = skip_to(self._cnt, i + 1, n)
        if i >= k:
            return INF
        return starts[i] if starts[i] > t0 else t0

    def _window(self, i: int, start: float, duration: float, res: int, within: int = -1) -> tuple[int, int]:
        """Intersect free sets (restricted to ``within``, a mask; -1: every host) from slice ``i``
        over ``[start, start + duration)``.

        Returns ``(mask, -1)`` when at least ``res`` hosts are free during the whole window, else
        ``(mask, j)`` with ``j`` the slice where the count fell below ``res``.
        """
        starts, free = self._starts, self._free
        m = free[i] & within
        end = start + duration
        j = i + 1
        n = len(starts)
        while j < n and starts[j] < end:
            m &= free[j]
            if m.bit_count() < res:
                return m, j
            j += 1
        return m, -1

    @staticmethod
    def _check_request(res: int, duration: float) -> None:
        if res < 1:
            raise ValueError(f"res must be >= 1, got {res}")
        if not duration >= 0:  # also rejects NaN
            raise ValueError(f"duration must be >= 0 s, got {duration}")

    def find_earliest_mask(self, res: int, duration: float, not_before: float | None = None,
                           choose: HostChoice | None = None, within: int = -1,
                           not_after: float = INF) -> tuple[float, int] | None:
        """Mask version of :meth:`find_earliest`; ``within`` (mask, default every host) restricts
        the search to those hosts (HEFT's search per host speed class, :mod:`schedulers.heft`);
        ``not_after`` (s) bounds the start: None when no window starts by then (the first fit of
        classic conservative's compression, :mod:`schedulers.core.kept_reservations`)."""
        self._check_request(res, duration)
        if res > (self.hosts_mask & within).bit_count():
            return None
        t0 = self.now if not_before is None or not_before < self.now else _time(not_before)
        found = first_fit(self._starts, self._free, t0, res, duration, within, not_after, self._cnt)
        if found is None:
            return None
        start, m = found
        return start, (lowest_bits(m, res) if choose is None else _chosen(choose, m, res))

    def find_earliest(self, res: int, duration: float, not_before: float | None = None,
                      choose: HostChoice | None = None) -> tuple[float, ProcSet] | None:
        """First fit: earliest start at which ``res`` hosts stay free for ``duration`` seconds.

        Args:
            res: number of hosts (>= 1).
            duration: seconds (>= 0; ``inf`` for a job without walltime: the hosts must then be
                free forever from the start).
            not_before: earliest acceptable start (s); default and minimum: the profile's ``now``.
            choose: host choice (:data:`HostChoice`, on bit masks) among the hosts free during the
                whole window; default: the lowest ids. It does not change ``start``, which only
                depends on how many hosts are free.

        Returns:
            ``(start, hosts)``: ``start`` (s) is ``not_before`` or a slice start; ``hosts`` are
            ``res`` hosts picked by ``choose`` among the hosts free during the whole window
            ``[start, start + duration)``. None when no such window exists (``res`` exceeds the
            usable hosts, or hosts held forever by jobs without walltime leave too few).

        Raises:
            ValueError: ``res < 1`` or ``duration`` negative or NaN; ``choose`` returned hosts
                that are not free during the window or not exactly ``res`` hosts.
        """
        found = self.find_earliest_mask(res, duration, not_before, choose)
        if found is None:
            return None
        return found[0], mask_to_procset(found[1])

    def free_now_steps(self) -> tuple[list[float], list[int]]:
        """How many hosts stay free from now on, as windows grow: ``(limits, caps)`` with
        ``limits`` the slice starts after the first (s, increasing) and ``caps[j]`` the number of
        hosts free during the first ``j + 1`` slices. A job of ``res`` hosts and ``duration``
        seconds fits now (:meth:`fits_now_mask` is not None) exactly when ``res <= caps[j]``,
        ``j`` the number of limits ``< now + duration``: the capacity
        :meth:`schedulers.core.waiting.WaitingIndex.first` searches with. The lists end at the
        first cap of 0 (every later one is 0 too): ``O(slices until no host free now stays
        free)``, ``O(S)`` at most."""
        starts, free = self._starts, self._free
        m = free[0]
        caps = [m.bit_count()]
        n = len(free)
        j = 1
        while m and j < n:
            m &= free[j]
            caps.append(m.bit_count())
            j += 1
        return starts[1:j], caps

    def fits_now_mask(self, res: int, duration: float, choose: HostChoice | None = None) -> int | None:
        """Mask version of :meth:`fits_now`."""
        self._check_request(res, duration)
        if self._free[0].bit_count() < res:
            return None
        m, j = self._window(0, self.now, duration, res)
        if j >= 0:
            return None
        return lowest_bits(m, res) if choose is None else _chosen(choose, m, res)

    def fits_now(self, res: int, duration: float, choose: HostChoice | None = None) -> ProcSet | None:
        """``res`` hosts free during ``[now, now + duration)`` picked by ``choose`` (default: the
        lowest ids, see :meth:`find_earliest`), or None when fewer are free.

        Raises:
            ValueError: as :meth:`find_earliest`.
        """
        m = self.fits_now_mask(res, duration, choose)
        return None if m is None else mask_to_procset(m)

    # --------------------------------------------------------------------------------- updates
    def _split(self, t: float) -> int:
        """Make ``t`` (>= now, finite) a slice start; return that slice's index."""
        starts = self._starts
        i = bisect_right(starts, t) - 1
        if starts[i] == t:
            return i
        starts.insert(i + 1, t)
        self._free.insert(i + 1, self._free[i])
        self._cnt.insert(i + 1, self._cnt[i])
        return i + 1

    def _coalesce(self, lo: int, hi: int) -> None:
        """Merge adjacent slices with equal free sets among indices ``lo..hi``."""
        starts, free, cnt = self._starts, self._free, self._cnt
        k = min(hi, len(starts) - 1)
        lo = max(lo, 1)
        while k >= lo:
            if free[k] == free[k - 1]:
                del starts[k]
                del free[k]
                del cnt[k]
            k -= 1

    def _range(self, start: float, duration: float, end: float | None = None) -> tuple[int, int]:
        if not start >= self.now:
            raise ValueError(f"start {start} is before the profile's origin {self.now}")
        if start == INF:
            raise ValueError("cannot reserve at an infinite start")
        if not duration >= 0:
            raise ValueError(f"duration must be >= 0 s, got {duration}")
        if end is None:
            end = start + duration
        i = self._split(start)
        j = self._split(end) if end != INF else len(self._starts)
        return i, j

    def reserve_mask(self, start: float, duration: float, hosts: int) -> None:
        """Mask version of :meth:`reserve`."""
        if hosts & ~self.hosts_mask:
            raise ValueError(f"hosts {mask_to_procset(hosts & ~self.hosts_mask)} are not usable")
        i, j = self._range(start, duration)
        free = self._free
        for k in range(i, j):
            if free[k] & hosts != hosts:
                self._coalesce(i, j)
                raise ValueError(
                    f"hosts {mask_to_procset(hosts & ~free[k])} are not free at "
                    f"{self._starts[k]} s (reserving [{start}, {start + duration}))")
        cnt = self._cnt
        for k in range(i, j):
            m = free[k] & ~hosts
            free[k] = m
            cnt[k] = _count(m)
        self._coalesce(i, j)

    def hold_mask(self, start: float, duration: float, hosts: int) -> None:
        """:meth:`reserve_mask` for a job that will run: one of ``duration`` 0 still holds its
        hosts from ``start`` to the next float, since Batsim runs it for a while all the same
        (it needs a walltime > 0 and ends jobs after their start)."""
        if duration == 0:
            duration = math.nextafter(start, math.inf) - start
        self.reserve_mask(start, duration, hosts)

    def reserve(self, start: float, duration: float, hosts: ProcSet) -> None:
        """Mark ``hosts`` busy during ``[start, start + duration)`` (a reservation, or a job).

        Args:
            start: seconds, ``>= now``, finite.
            duration: seconds, ``>= 0`` (``inf``: forever).
            hosts: the hosts (all usable and free during the whole window).

        Raises:
            ValueError: bad times, or a host not usable or not free during the window (the
                profile is left unchanged).
        """
        self.reserve_mask(start, duration, procset_to_mask(hosts))

    def release_mask(self, start: float, duration: float, hosts: int, end: float | None = None) -> None:
        """Mask version of :meth:`release`; ``end`` (s, optional) is the window's end when known
        as an instant (a hold made from an earlier start: ``start + duration`` may be 1 ulp off
        it, and no float duration may hit it exactly)."""
        if hosts & ~self.hosts_mask:
            raise ValueError(f"hosts {mask_to_procset(hosts & ~self.hosts_mask)} are not usable")
        i, j = self._range(start, duration, end)
        free = self._free
        for k in range(i, j):
            if free[k] & hosts:
                self._coalesce(i, j)
                raise ValueError(
                    f"hosts {mask_to_procset(free[k] & hosts)} are already free at "
                    f"{self._starts[k]} s (releasing [{start}, {start + duration}))")
        cnt = self._cnt
        for k in range(i, j):
            m = free[k] | hosts
            free[k] = m
            cnt[k] = _count(m)
        self._coalesce(i, j)

    def release(self, start: float, duration: float, hosts: ProcSet) -> None:
        """Removal: free ``hosts`` during ``[start, start + duration)`` again (cancel a
        reservation, or the remaining time of a job that ended early). Adjacent slices that become
        equal are merged.

        Raises:
            ValueError: bad times, or a host not usable or already free during the window (the
                profile is left unchanged).
        """
        self.release_mask(start, duration, procset_to_mask(hosts))

    def advance(self, now: float) -> None:
        """Move the origin to ``now`` (s): slices that ended are dropped.

        Raises:
            ValueError: ``now`` earlier than the current origin.
        """
        now = _time(now)
        if now < self.now:
            raise ValueError(f"cannot move the profile back from {self.now} to {now}")
        i = bisect_right(self._starts, now) - 1
        if i > 0:
            del self._starts[:i]
            del self._free[:i]
            del self._cnt[:i]
        self._starts[0] = now
        self.now = now

    def __repr__(self) -> str:
        parts = ", ".join(f"[{s:g}, {e:g}): {p}" for s, e, p in self.slices())
        return f"ReservationProfile(now={self.now:g}, {parts})"
