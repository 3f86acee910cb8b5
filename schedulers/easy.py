"""EASY backfilling (Lifka 1995; Mu'alem & Feitelson 2001).

Sources:
    D. Lifka, "The ANL/IBM SP scheduling system", JSSPP 1995, LNCS 949, pp. 295-303 (EASY).
    A. W. Mu'alem and D. G. Feitelson, "Utilization, predictability, workloads, and user runtime
    estimates in scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6):529-543, 2001.

One scheduling pass (after every Batsim message):

1. start queue jobs in order while they fit on the available hosts;
2. the first job that does not fit (the *head*) gets a reservation: the earliest time enough hosts
   are free according to the running jobs' walltimes (:class:`~schedulers.core.backfilling.
   ReservationProfile`, first fit), on specific hosts: :meth:`EASY.select_hosts` among the hosts
   free during the head's whole window ``[start, start + walltime)`` (the lowest ids by default);
3. each later job, in queue order, starts now when it fits on the hosts free now and does not
   delay the reservation: either it ends before the reservation starts (``now + walltime <=
   start``; it then takes :meth:`EASY.select_hosts` of the free hosts) or it uses none of the
   reserved hosts (it then takes :meth:`EASY.select_hosts` of the free non-reserved hosts).

Reservations are recomputed at every pass, so they only move earlier when jobs end before their
walltime; with runtimes <= walltimes the head never starts later than the reservation it had when
it became head. Jobs without walltime (Batsim's ``-1``) run forever as far as the profile knows:
running, they hold their hosts forever; waiting, they can only backfill on hosts the reservation
does not need. When hosts held forever leave too few for the head, it has no finite reservation
(``start = inf``, reserved hosts = the hosts that do become free): jobs with a walltime may then
backfill anywhere, jobs without may not.

Jobs asking for more hosts than the platform has are rejected at submission. Host choice is
deterministic: lowest ids first (:meth:`EASY.select_hosts`), for starts and reservations alike.
Queue order is pluggable (:meth:`EASY.queue_key`; by default arrival order, jobs that arrive at
one time by their full ids as strings, as batsched's; ties always broken by arrival order).

With the profile, reservation and gap test EASY's own (no subclass hook overridden), steps 2-3
compare exact times (:mod:`schedulers.core.exact_time`): a running job holds its hosts until the
exact sum ``start_time + walltime`` of the two doubles, and a job fits before the reservation when
``now + walltime <= start`` as real numbers. batsched's ``easy_bf`` computes its schedule in exact
rationals (``mpq_rational``); float sums round, and with times in tenths or thousandths of a
second a window that ends 1e-12 s after a reservation as real numbers ties with it as floats
(``tests/fixtures/batsched_easy/``). batsched adds ``rjms_delay`` (5 s) to every walltime, which
changes no EASY decision, except when ``walltime + 5`` rounds as a double (walltimes with
fractional digits just below a power of two, e.g. in ``[251, 256)`` s): EASY adds none.

Other backfilling variants subclass EASY and replace steps 1-3 with :meth:`EASY.backfill_pass`,
built from the shared pieces: :meth:`EASY.profile` (running jobs until their walltimes),
:meth:`EASY.find_reservation` (first fit of one job with the policy's host choice) and
:meth:`EASY.start_job`; :mod:`schedulers.conservative` is one.
"""

from __future__ import annotations

import math
import numbers
from bisect import bisect_left, bisect_right
from typing import Any, ClassVar

from .core.backfilling import (
    HostChoice,
    Reservation,
    ReservationProfile,
    job_duration,
    lowest_bits,
    mask_to_procset,
)
from .core.exact_time import to_seconds, to_units
from .core.failure import hook_error, key_type_error, unordered_key
from .core.model import Job
from .core.policy import Policy
from .core.waiting import QueueScan, WaitingIndex

INF = math.inf
_MAX_TIME = math.nextafter(INF, 0.0)  # the largest float (s)

#: Queue length (jobs) from which :meth:`EASY.backfill_pass` keeps a :class:`~schedulers.core.
#: waiting.WaitingIndex` of the queue; it is dropped again below half of it (a scan of a short queue
#: costs less than keeping the index up to date).
INDEX_MIN_QUEUE = 256


class EASY(Policy):
    """EASY backfilling (see the module docstring).

    Args:
        options: unused by EASY itself (kept for subclasses and the common interface).

    Attributes:
        queue: waiting jobs, in queue order (the head is ``queue[0]``): a list, exactly the
            waiting jobs whenever it is read (a property: inside, the jobs started at the head
            are dropped by moving an offset, and the list is trimmed when read).
        reservation: the head's :class:`Reservation` computed during the last pass, or None when
            the last pass did not need one (no job could be backfilled, no host free, empty queue).
            :meth:`head_reservation` computes it on demand.

    Extension hooks: :meth:`queue_key` (+ :attr:`dynamic_queue_order`, :meth:`queue_keys`),
    :meth:`fits_gap` (+ :meth:`gap_limit`, its bound for the index search), :meth:`select_hosts`
    (starts and reservations), :meth:`profile`, :meth:`backfill_pass` (the whole pass, built from
    :meth:`profile`, :meth:`find_reservation` and :meth:`start_job`).
    """

    name = "easy"
    summary = ("First come, first served with EASY backfilling: the first waiting job gets a reservation, and "
               "later jobs may start early when they do not delay it.")
    references: ClassVar[tuple[str, ...]] = ("easy", "conservative")
    forget_finished_jobs = True

    #: True when :meth:`queue_key` depends on the state (e.g. BUC's Sf): the queue is then re-sorted
    #: at every pass; False: keys are computed once, at submission.
    dynamic_queue_order: ClassVar[bool] = False

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        # the queue is ``_q[_front:]``: jobs started at the head are dropped by moving ``_front``
        # (deleting the front of a list of n jobs moves n pointers; at 10**5-10**6 waiting jobs
        # that was a good part of a backlogged run), the list is compacted from time to time
        self._q: list[Job] = []
        self._front = 0
        self._keys: list[tuple[Any, int]] = []  # sort keys parallel to ``_q``
        self._arrival: dict[str, int] = {}
        self._seq = 0
        self.backfilled_jobs = 0
        self.reservation: Reservation | None = None
        # select_hosts not overridden: reservations take the profile's own lowest-ids choice
        # (the same hosts, without the extra calls)
        self._lowest_ids_choice = type(self).select_hosts is EASY.select_hosts
        if not type(self).select_hosts.__module__.startswith("schedulers."):
            # a researcher's own: its answer checked where it is made (a list, a host not free:
            # an error at a line of this module otherwise, or a job started on hosts it may not use)
            self.select_hosts = self._checked_select(self.select_hosts)   # type: ignore[method-assign]
        # fits_gap not overridden: its test, ``now + walltime <= start``, can prune the search
        # (a subclass that overrides it gives its own bound through gap_limit)
        self._plain_gap = type(self).fits_gap is EASY.fits_gap or type(self).gap_limit is not EASY.gap_limit
        self._index: WaitingIndex | None = None  # of the queue, in queue order; None: none kept
        # profile, reservation and gap test all EASY's own: they are computed on exact times
        # (backfill_behind, as batsched does; schedulers.core.exact_time)
        cls = type(self)
        self._exact_gap = (cls.busy_until is EASY.busy_until and cls.free_now_mask is EASY.free_now_mask
                           and cls.profile is EASY.profile and cls.find_reservation is EASY.find_reservation
                           and cls.fits_gap is EASY.fits_gap and cls.gap_limit is EASY.gap_limit)

    @property
    def queue(self) -> list[Job]:
        """The waiting jobs in queue order, head first (see the class docstring)."""
        if self._front:
            self._compact()
        return self._q

    @queue.setter
    def queue(self, jobs: list[Job]) -> None:
        self._q = jobs
        self._front = 0

    def _compact(self) -> None:
        f = self._front
        del self._q[:f]
        del self._keys[:f]
        self._front = 0

    # ------------------------------------------------------------------------------ hooks
    def queue_key(self, job: Job) -> Any:
        """Sort key of a waiting job, smallest first; default: arrival order, jobs that arrived
        at the same time (s) by their full Batsim id (``"w0!12"``) as a string.

        This is batsched 1.4.0's ``fcfs`` queue order (``FCFSOrder::compare``,
        ``src/queue.cpp``: the date the job joined the queue, then ``job->id`` compared as a
        ``std::string``, i.e. code point by code point), which its ``easy_bf`` and
        ``conservative_bf`` use. It differs from the order of the messages when jobs of
        several workloads (``"w0!j66"`` and ``"w1!64"``), or several messages, arrive at one
        time: Batsim sends the jobs of one workload that share a submission time in the
        order of their ids as strings (``job_comparator_subtime_number``,
        ``src/jobs.cpp``), but the submitters of different workloads in whatever order
        SimGrid runs them.

        Ties are broken by arrival order (the full key is ``(queue_key(job), arrival index)``).
        A key that gives the queue no order stops the run, naming this hook's ``def`` line: NaN,
        a tuple or list holding NaN, a set (sets are ordered by inclusion only), or keys of two
        jobs Python cannot compare (``None`` or a string beside a number).
        """
        return (self.now, job.id)

    def select_hosts(self, candidates: int, job: Job) -> int:
        """Pick ``job.res`` hosts (bit mask) among ``candidates`` (bit mask, ``>= job.res`` bits).

        Used for immediate starts and, through :meth:`host_choice`, for reservations (then
        ``candidates`` are the hosts free during the job's whole reserved window).

        Default: the lowest ids. Override for energy- or owner-aware placement; the result must be
        a subset of ``candidates`` with exactly ``job.res`` hosts (a reservation that breaks this
        raises ValueError).
        """
        return lowest_bits(candidates, job.res)

    def _checked_select(self, select: Any) -> Any:
        """``select`` (a subclass's :meth:`select_hosts`) whose answer is checked: a bit mask of
        exactly ``job.res`` hosts among ``candidates``, else the policy's error at its def line."""
        def checked(candidates: int, job: Job) -> int:
            alloc = select(candidates, job)
            if type(alloc) is int and alloc >= 0 and not alloc & ~candidates and alloc.bit_count() == job.res:
                return alloc
            if type(alloc) is not int or alloc < 0:
                what = f"{alloc!r}, not a bit mask of hosts (an int: bit i set = host i)"
            else:
                what = f"hosts {mask_to_procset(alloc)} for job {job.id} of res {job.res}, where {job.res} of " \
                       f"{mask_to_procset(candidates)} were asked for"
            raise hook_error(self, "select_hosts", f"it returned {what}")
        return checked

    def hosts_to_wake(self, asleep: int, n: int) -> int:
        """The ``n`` sleeping hosts (bit mask, among ``asleep``) idle-host shutdown wakes
        (:meth:`Policy.hosts_to_wake <schedulers.core.policy.Policy.hosts_to_wake>`): those
        :meth:`select_hosts` would give the waiting jobs if the sleeping hosts were awake.

        The queue, in order, takes :meth:`select_hosts` of ``pool`` = the hosts free now
        (:meth:`free_now_mask`) plus ``asleep``, less the hosts of the jobs before it, until a job
        needs more than the pool has; the sleeping hosts among these picks are woken, in queue
        order (the lowest ids of a job's picks when it would exceed ``n``), and the lowest ids of
        the other sleeping hosts make up ``n`` when the picks name fewer. With :meth:`select_hosts`
        not overridden this is the lowest ids of ``asleep``."""
        if self._lowest_ids_choice:
            return lowest_bits(asleep, n)
        pool = self.free_now_mask() | asleep
        out = 0
        for job in self.queue:
            left = n - out.bit_count()
            if left <= 0 or job.res > pool.bit_count():
                break
            pick = self.select_hosts(pool, job)
            pool &= ~pick
            new = pick & asleep & ~out
            out |= new if new.bit_count() <= left else lowest_bits(new, left)
        left = n - out.bit_count()
        return out | lowest_bits(asleep & ~out, left) if left > 0 else out

    def host_choice(self, job: Job) -> HostChoice | None:
        """:meth:`select_hosts` for ``job``, as the profile's host choice (``choose(candidates,
        res)`` of :meth:`ReservationProfile.find_earliest`); None (the profile's default, the same
        lowest ids, without the calls) while :meth:`select_hosts` is not overridden."""
        if self._lowest_ids_choice:
            return None
        select = self.select_hosts
        return lambda candidates, res: select(candidates, job)

    def free_now_mask(self) -> int:
        """Hosts a job may start on now (bit mask); default :attr:`available_mask`.

        Hook for overlap policies (:mod:`schedulers.green`): hosts whose running job has entered
        its allowed overlap are free for the next job although still allocated.
        """
        return self.available_mask

    def busy_until(self, job: Job) -> float | None:
        """Until when (s) the running ``job`` holds its hosts in :meth:`profile`: ``start_time +
        walltime`` (``inf`` without walltime). None: it no longer holds them (overlap policies,
        :mod:`schedulers.green`, once a job's allowed overlap has begun). Another answer (NaN, a
        string) stops the run at this hook's def line."""
        return job.start_time + job.walltime if job.has_walltime else INF  # type: ignore[operator]  # running

    def fits_gap(self, job: Job, now: float, resv: Reservation) -> bool:
        """EASY's gap test (step 3): ``job`` started ``now`` (s) ends by the reservation's start,
        ``now + walltime <= resv.start`` (004 eq. 3, L132: ``t_i <= t_k^I - t_j^F``). False for a
        job without walltime. Hook: :mod:`schedulers.green` widens it by Δ (004 eq. 4)."""
        wt = job.walltime
        return wt >= 0 and now + wt <= resv.start

    def gap_limit(self, now: float, resv: Reservation) -> float:
        """A bound of :meth:`fits_gap` for the index search: every job with a walltime that passes
        ``fits_gap(job, now, resv)`` has ``now + walltime <= gap_limit(now, resv)`` (s; ``inf``
        allowed). EASY's: ``resv.start``. A subclass that overrides :meth:`fits_gap` overrides
        this too (else the search looks at every job that fits the free hosts by size); a looser
        bound only costs tests of :meth:`fits_gap`, never a decision. An answer that is no number
        of seconds (None, NaN) stops the run at this hook's def line."""
        return resv.start

    def queue_keys(self, jobs: list[Job]) -> list[Any]:
        """:meth:`queue_key` of each of ``jobs`` (the re-sort of a dynamic queue order, at every
        pass); a policy may compute them in one go (the same keys)."""
        key = self.queue_key
        return [key(j) for j in jobs]

    def arrival_index(self, job: Job) -> int:
        """0 for the first job submitted, 1 for the next, ... (tie breaker)."""
        return self._arrival[job.id]

    # --------------------------------------------------------------------------- callbacks
    def on_job_submitted(self, job: Job) -> None:
        """Queue the job in :meth:`queue_key` order, or reject it if larger than the platform."""
        if self.platform.hosts and job.res > len(self.platform.hosts):
            self.reject(job)
            return
        self._arrival[job.id] = self._seq
        self._seq += 1
        k = self.queue_key(job)
        why = unordered_key(k) if k.__class__ is not int else None   # (NaN, a set: no order)
        if why is not None:
            raise hook_error(self, "queue_key", f"it returned {k!r} for job {job.id}, {why}: the queue would "
                                                "have no order")
        key = (k, self._arrival[job.id])
        keys = self._keys
        try:
            last = not keys or key >= keys[-1]  # (an empty queue has _front 0, see _drop)
            i = 0 if last else bisect_right(keys, key, self._front)
        except TypeError as exc:   # (a key of another type: 'str' and 'int', None...)
            raise key_type_error(self, [(k, job)] + [(kk[0], j) for kk, j in zip(keys[self._front:], self.queue)],
                                 exc) from None
        if last:
            self._keys.append(key)
            self._q.append(job)
            if self._index is not None:
                self._index.append(job, key)
        else:
            index = self._index
            if index is not None:
                before, after = self._q[i], (self._q[i - 1] if i > self._front else None)
                if before in index and (after is None or after in index):
                    index.insert(job, key, before, after)
                else:  # (a queue replaced through the queue setter): rebuilt when next needed
                    self._index = None
            self._keys.insert(i, key)
            self._q.insert(i, job)

    def on_job_completed(self, job: Job) -> None:
        """Forget the job's arrival index."""
        self._arrival.pop(job.id, None)

    # ------------------------------------------------------------------------------ profile
    def profile(self) -> ReservationProfile:
        """Free hosts over time from now, given the running jobs' walltimes.

        Usable hosts: the available ones plus those of running jobs; sleeping or switching hosts
        only with idle-host shutdown on (``idle_timeout``), then busy until they can be awake
        (:meth:`Policy.waking_hosts`: never free now). A running job holds its hosts until
        ``start_time + walltime`` (s), forever without walltime.
        """
        usable, busy, running = self._held_hosts()
        for job, m in running:
            end = self.busy_until(job)
            if end is not None:
                if end.__class__ is not float and end.__class__ is not int or end != end:
                    self._check_time("busy_until", end, f"for running job {job.id}", "or None")
                busy.append((end, m))
        return ReservationProfile.from_ends(self.now, usable, busy)

    def _held_hosts(self) -> tuple[int, list[tuple[float, int]], list[tuple[Job, int]]]:
        """What :meth:`profile` and :meth:`_exact_profile` are built from: the usable hosts (bit
        mask: the available ones, the waking ones and those of running jobs), the waking hosts'
        ``(time awake (s), mask)`` (a new list: :meth:`Policy.waking_hosts`) and each running
        job with its hosts' mask."""
        waking = self.waking_hosts()  # [] unless idle_timeout is set
        usable = self.available_mask
        for _, m in waking:
            usable |= m
        running = []
        for job in self.running.values():
            m = self.running_mask(job)
            usable |= m
            running.append((job, m))
        return usable, waking, running

    def _check_time(self, hook: str, value: Any, about: str, alternative: str = "") -> None:
        """Refuse the answer ``value`` of the time hook ``hook`` (``busy_until``, ``gap_limit``)
        unless it is a number of seconds (NaN is none: it compares false with every time, so the
        profile or the backfilling search would silently give no answer), at the hook's def line."""
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and value == value:
            return
        raise hook_error(self, hook, f"it returned {value!r} {about}, not a time (s){' ' + alternative if alternative else ''}")

    def _exact_profile(self) -> ReservationProfile:
        """:meth:`profile` with its times in exact units (:mod:`schedulers.core.exact_time`): a
        running job holds its hosts until ``to_units(start_time) + to_units(walltime)``, the
        exact sum of the two doubles, as batsched's schedule holds them (``mpq_rational``)."""
        now = to_units(self.now)
        usable, waking, running = self._held_hosts()
        busy = [(to_units(t), m) for t, m in waking]
        for job, m in running:
            if job.has_walltime:
                end = to_units(job.start_time) + to_units(job.walltime)  # type: ignore[arg-type]  # running
                busy.append((end if end > now else now + 1, m))  # past its walltime: free right after now
            else:
                busy.append((INF, m))
        return ReservationProfile.from_ends(now, usable, busy)

    def find_reservation(self, prof: ReservationProfile, job: Job) -> Reservation:
        """First fit of ``job`` in ``prof`` (which is not changed).

        Returns:
            The earliest start (s, ``>= prof.now``) at which ``job.res`` hosts stay free for the
            job's walltime (forever without walltime), on the hosts :meth:`select_hosts` picks
            among those free during that whole window. When no such window exists (hosts held
            forever by jobs without walltime leave too few): start ``inf`` and, as hosts, every
            host that does become free (``prof.final_free_mask``).

        Raises:
            ValueError: :meth:`select_hosts` broke its rules (see there).
        """
        dur = job_duration(job)
        found = prof.find_earliest_mask(job.res, dur, choose=self.host_choice(job))
        if found is None:
            return Reservation(job, INF, dur, prof.final_free_mask)
        return Reservation(job, found[0], dur, found[1])

    def head_reservation(self) -> Reservation | None:
        """The reservation the queue head gets now (None when the queue is empty).

        Same computation as in :meth:`schedule` (ignores :attr:`dynamic_queue_order` re-sorting).
        """
        if len(self._q) == self._front:
            return None
        return self.find_reservation(self.profile(), self._q[self._front])

    # ----------------------------------------------------------------------------- schedule
    def _resort(self) -> None:
        jobs = self.queue
        arrival = self._arrival
        pairs = list(zip(self.queue_keys(jobs), jobs))
        try:
            keyed = sorted(((k, arrival[j.id]), j) for k, j in pairs)
        except TypeError as exc:   # (keys of types that do not compare: 'str' and 'int', None...)
            raise key_type_error(self, pairs, exc) from None
        self._keys = [k for k, _ in keyed]
        self._q = [j for _, j in keyed]
        self._index = None

    def schedule(self) -> None:
        """One scheduling pass: re-sort the queue when its order is dynamic, run
        :meth:`backfill_pass` when the queue is not empty and a host is free (else nothing can
        start), drop the jobs it started from the queue."""
        self.reservation = None
        waiting = len(self._q) > self._front
        if self.dynamic_queue_order and waiting:
            self._resort()
        if not waiting or not self.free_now_mask():
            return
        started = self.backfill_pass()
        if started:
            self._check_started(started)
            # positions are ascending: the j-th started job was backfilled when a job ahead of
            # it (position < its own) was left waiting
            if started[-1] != len(started) - 1:
                self.backfilled_jobs += sum(1 for j, k in enumerate(started) if k != j)
            self._drop(started)

    def _check_started(self, started: Any) -> None:
        """Refuse an answer of :meth:`backfill_pass` that is not the increasing queue positions of
        jobs it started (a variant's bug), at the hook's def line: the queue would lose jobs that
        never ran, or fail at a line of this module."""
        queue, f, running = self._q, self._front, self.running
        n = len(queue) - f
        if not isinstance(started, (list, tuple)):
            why = "not a list of queue positions"
        else:
            prev, why = -1, ""
            for k in started:
                if k.__class__ is not int or not prev < k < n:
                    why = f"position {k!r} is not an integer from {prev + 1} to {n - 1}"
                    break
                if queue[f + k].id not in running:
                    why = f"position {k} is job {queue[f + k].id}, which it did not start (it would leave the queue " \
                          "without running)"
                    break
                prev = k
            if not why:
                return
        raise hook_error(self, "backfill_pass", f"it returned {started!r}: {why}; it returns the increasing queue "
                                                "positions (0 = head) of the jobs it started")

    def metrics(self) -> dict[str, float]:
        """``backfilled_jobs``: jobs started while a job ahead of them in the queue kept waiting
        (for a campaign's per-run policy metrics)."""
        return {"backfilled_jobs": float(self.backfilled_jobs)}

    def _drop(self, started: list[int]) -> None:
        queue, keys, f = self._q, self._keys, self._front
        index = self._index
        if index is not None:
            for k in started:
                index.remove(queue[f + k])
        p = 0  # length of the run 0, 1, 2, ... at the front of ``started``
        n = len(started)
        while p < n and started[p] == p:
            p += 1
        for k in reversed(started[p:]):
            del queue[f + k]
            del keys[f + k]
        if p:  # the head's run: moves _front; compacted once the dead front is half the list
            f += p
            self._front = f
            if 2 * f >= len(queue):
                self._compact()

    def waiting(self) -> WaitingIndex | QueueScan:
        """The queue as :meth:`backfill_pass` searches it: a :class:`~schedulers.core.waiting.
        WaitingIndex` kept up to date from :data:`INDEX_MIN_QUEUE` waiting jobs on (built here,
        then updated at each submission, wherever :meth:`queue_key` puts the job, and start), else a :class:`~schedulers.core.waiting.
        QueueScan` of :attr:`queue`. Always a scan when :attr:`dynamic_queue_order` (the queue is
        re-sorted at every pass, an index would be rebuilt at every pass)."""
        n = len(self._q) - self._front
        index = self._index
        if self.dynamic_queue_order or n < (INDEX_MIN_QUEUE // 2 if index is not None else INDEX_MIN_QUEUE):
            self._index = None
            return QueueScan(self.queue, self._keys)
        if index is None or index.live != n:
            index = self._index = WaitingIndex(self.queue, self._keys)
        return index

    def backfill_pass(self) -> list[int]:
        """Start the jobs of :attr:`queue` (not empty, in queue order; at least one host free)
        that may start now, with :meth:`start_job`; set :attr:`reservation`. Returns the queue
        positions (0 = head) of the jobs started, in increasing order; :meth:`schedule` then
        drops them from the queue.

        EASY's pass (module docstring, steps 1-3): one profile build at most. Step 3 looks at the
        later jobs in queue order, but through :meth:`waiting`: each search returns the next job
        with ``res <= nfree`` (hosts free now) that ends before the reservation's start (the
        :meth:`fits_gap` test, used by the search only while :meth:`fits_gap` is EASY's own) or
        has ``res <= nspare`` (free hosts the reservation does not need): the very job a scan of
        the queue would start next, as ``nfree`` and ``nspare`` only fall during the pass. So a
        pass costs ``O(started x log queue)`` with an index (long queues) instead of a scan of
        the whole queue, and makes the same decisions.

        Hook: a backfilling variant overrides this and returns the position of every job it
        started. Another answer (a position out of the queue, out of order, or of a job it did not
        start, which would leave the queue without running) stops the run at the hook's def line.
        """
        queue, f = self._q, self._front
        avail = self.free_now_mask()
        nfree = avail.bit_count()
        n = len(queue) - f
        i = 0
        # 1. start jobs in order while they fit
        while i < n and queue[f + i].res <= nfree:
            job = queue[f + i]
            alloc = self.select_hosts(avail, job)
            self.start_job(job, alloc)
            avail &= ~alloc
            nfree -= job.res
            i += 1
        started: list[int] = list(range(i))
        if i >= n - 1 or nfree == 0:
            return started
        # 2-3. reserve for the head, backfill later jobs that do not delay it
        head = queue[f + i]
        waiting = self.waiting()  # (a scan reads :attr:`queue`, which drops the dead front)
        slots = self.backfill_behind(waiting, head, avail, nfree)
        if slots:
            started += [self._position(waiting, s) for s in slots]
        return started

    def _position(self, waiting: WaitingIndex | QueueScan, s: int) -> int:
        """The queue position of the job in slot ``s`` of :meth:`waiting` (read after
        :attr:`queue`: no dead front)."""
        if isinstance(waiting, QueueScan):
            return s
        return bisect_left(self._keys, waiting.key(s), self._front) - self._front

    def backfill_behind(self, waiting: WaitingIndex | QueueScan | Any, head: Job, avail: int,
                        nfree: int) -> list[int]:
        """Steps 2-3 of EASY's pass (module docstring) once the jobs ahead of ``head`` have
        started: reserve for ``head``, start the later jobs that do not delay it, with
        :meth:`start_job`; set :attr:`reservation` (left None when no later job fits the free
        hosts: then no reservation is needed).

        A shared piece for queues kept otherwise than in :attr:`queue` (:class:`~schedulers.buc.
        BUCEasy`'s grouped queue): ``waiting`` is anything with the searches of :class:`~schedulers.
        core.waiting.WaitingIndex` (``slot``, ``job``, ``exists``, ``first``; slots grow in queue
        order), read from ``slot(head) + 1`` on in queue order: each search returns the next job
        with ``res <= nfree`` that ends before the reservation's start (the :meth:`fits_gap` test,
        searched through :meth:`gap_limit` while EASY's own) or has ``res <= nspare`` (free hosts
        the reservation does not need), with the same ``limits`` at every search and capacities
        that only fall during the pass.

        Args:
            waiting: the queue's search view (:meth:`waiting`); head: the first waiting job that
                does not fit now; avail: the hosts free now (bit mask, not empty); nfree: their
                number (>= 1).

        Returns:
            The slots (of ``waiting``) of the jobs started, increasing.
        """
        now = self.now
        after = waiting.slot(head) + 1
        if not waiting.exists(after, now, (), (nfree,)):
            return []  # no later job fits the free hosts: no reservation needed
        exact = self._exact_gap
        if exact:
            # batsched's test, on exact sums (its easy_bf, mpq_rational): a window ending where
            # the reservation starts as real numbers fits, whatever the float sums say
            now_u = to_units(now)
            prof = self._exact_profile()
            found = prof.find_earliest_mask(head.res, to_units(job_duration(head)),
                                            choose=self.host_choice(head))
            start_u, hosts = (INF, prof.final_free_mask) if found is None else found
            resv = Reservation(head, to_seconds(start_u), job_duration(head), hosts)
        else:
            resv = self.find_reservation(self.profile(), head)
        spare = avail & ~resv.hosts_mask
        nspare = spare.bit_count()
        # fits_gap: a job *with* a walltime ends by resv.start. A search limit of inf would also
        # let the jobs without one (walltime key inf) pass as "ending by it", to be refused one by
        # one below: an infinite start is searched as the largest float instead (same jobs pass
        # fits_gap, and the index skips the others).
        if self._plain_gap:
            lim = self.gap_limit(now, resv)
            if lim.__class__ is not float and lim.__class__ is not int or lim != lim:
                self._check_time("gap_limit", lim, f"for the reservation of job {head.id} at {resv.start!r} s")
            if exact and lim < INF:  # the float search must not miss a job the exact test passes
                lim += 4 * math.ulp(lim)
            limits: tuple[float, ...] = ((lim if lim < INF else _MAX_TIME),)
        else:
            limits = ()
        slots: list[int] = []
        s = waiting.first(after, now, limits, (nfree, nspare) if limits else (nfree,))
        while s >= 0:
            job = waiting.job(s)
            r = job.res
            if (job.has_walltime and now_u + to_units(job.walltime) <= start_u) if exact \
                    else self.fits_gap(job, now, resv):
                alloc = self.select_hosts(avail, job)
            elif r <= nspare:
                alloc = self.select_hosts(spare, job)
            else:  # (a search on res alone, or a job without walltime: fits_gap decides)
                s = waiting.first(s + 1, now, limits, (nfree, nspare) if limits else (nfree,))
                continue
            self.start_job(job, alloc)
            avail &= ~alloc
            spare &= ~alloc
            nspare = spare.bit_count()
            nfree -= r
            slots.append(s)
            if nfree == 0:
                break
            s = waiting.first(s + 1, now, limits, (nfree, nspare) if limits else (nfree,))
        self.reservation = resv
        return slots

    def start_job(self, job: Job, alloc: int) -> None:
        """Start ``job`` now on ``alloc`` (bit mask of ``job.res`` free hosts): EXECUTE_JOB (its
        mask is then :meth:`Policy.running_mask`, read by :meth:`profile`). It stays in
        :attr:`queue` until :meth:`schedule` drops it.

        Raises:
            PolicyError: as :meth:`Policy.execute` (job not waiting, wrong number of hosts).
        """
        self.execute_mask(job, alloc)
