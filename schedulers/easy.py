"""EASY backfilling (Lifka 1995; Mu'alem & Feitelson 2001).

Sources:
    D. Lifka, "The ANL/IBM SP scheduling system", JSSPP 1995, LNCS 949, pp. 295-303 (EASY).
    A. W. Mu'alem and D. G. Feitelson, "Utilization, predictability, workloads, and user runtime
    estimates in scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6):529-543, 2001.

One scheduling pass (after every Batsim message):

1. start queue jobs in order while they fit on the available hosts;
2. the first job that does not fit (the *head*) gets a reservation: the earliest time enough hosts
   are free according to the running jobs' walltimes (:class:`~schedulers.core.backfilling.
   ReservationProfile`, first fit), on specific hosts: the lowest ids free during the head's whole
   window ``[start, start + walltime)``;
3. each later job, in queue order, starts now when it fits on the hosts free now and does not
   delay the reservation: either it ends before the reservation starts (``now + walltime <=
   start``; it then takes the lowest free ids) or it uses none of the reserved hosts (it then takes
   the lowest free non-reserved ids).

Reservations are recomputed at every pass, so they only move earlier when jobs end before their
walltime; with runtimes <= walltimes the head never starts later than the reservation it had when
it became head. Jobs without walltime (Batsim's ``-1``) run forever as far as the profile knows:
running, they hold their hosts forever; waiting, they can only backfill on hosts the reservation
does not need. When hosts held forever leave too few for the head, it has no finite reservation
(``start = inf``, reserved hosts = the hosts that do become free): jobs with a walltime may then
backfill anywhere, jobs without may not.

Jobs asking for more hosts than the platform has are rejected at submission. Host choice is
deterministic: lowest ids first (:meth:`EASY.select_hosts`). Queue order is pluggable
(:meth:`EASY.queue_key`; arrival order by default, ties always broken by arrival order).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any, ClassVar

from .core.backfilling import (
    Reservation,
    ReservationProfile,
    job_duration,
    lowest_bits,
    mask_to_procset,
    procset_to_mask,
)
from .core.model import Job
from .core.policy import Policy

INF = math.inf


class EASY(Policy):
    """EASY backfilling (see the module docstring).

    Args:
        options: unused by EASY itself (kept for subclasses and the common interface).

    Attributes:
        queue: waiting jobs, in queue order (the head is ``queue[0]``).
        reservation: the head's :class:`Reservation` computed during the last pass, or None when
            the last pass did not need one (no job could be backfilled, no host free, empty queue).
            :meth:`head_reservation` computes it on demand.

    Extension hooks: :meth:`queue_key` (+ :attr:`dynamic_queue_order`), :meth:`select_hosts`,
    :meth:`profile`.
    """

    name = "easy"

    #: True when :meth:`queue_key` depends on the state (e.g. BUC's Sf): the queue is then re-sorted
    #: at every pass; False: keys are computed once, at submission.
    dynamic_queue_order: ClassVar[bool] = False

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.queue: list[Job] = []
        self._keys: list[tuple[Any, int]] = []  # sort keys parallel to ``queue``
        self._arrival: dict[str, int] = {}
        self._seq = 0
        self._masks: dict[str, int] = {}  # allocation masks of running jobs
        self.reservation: Reservation | None = None

    # ------------------------------------------------------------------------------ hooks
    def queue_key(self, job: Job) -> Any:
        """Sort key of a waiting job, smallest first; default: arrival order.

        Ties are broken by arrival order (the full key is ``(queue_key(job), arrival index)``).
        """
        return self._arrival[job.id]

    def select_hosts(self, candidates: int, job: Job) -> int:
        """Pick ``job.res`` hosts (bit mask) among ``candidates`` (bit mask, ``>= job.res`` bits).

        Default: the lowest ids. Override for energy- or owner-aware placement; the result must be
        a subset of ``candidates`` with exactly ``job.res`` hosts.
        """
        return lowest_bits(candidates, job.res)

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
        key = (self.queue_key(job), self._arrival[job.id])
        if not self._keys or key >= self._keys[-1]:
            self._keys.append(key)
            self.queue.append(job)
        else:
            i = bisect_right(self._keys, key)
            self._keys.insert(i, key)
            self.queue.insert(i, job)

    def on_job_completed(self, job: Job) -> None:
        """Forget the job's cached allocation mask."""
        self._masks.pop(job.id, None)

    # ------------------------------------------------------------------------------ profile
    def _mask_of(self, job: Job) -> int:
        m = self._masks.get(job.id)
        if m is None:
            m = procset_to_mask(job.allocation) if job.allocation is not None else 0
            self._masks[job.id] = m
        return m

    def profile(self) -> ReservationProfile:
        """Free hosts over time from now, given the running jobs' walltimes.

        Usable hosts: the available ones plus those of running jobs (sleeping or switching hosts
        are not counted). A running job holds its hosts until ``start_time + walltime`` (s),
        forever without walltime.
        """
        busy = []
        usable = self.available_mask
        for job in self.running.values():
            m = self._mask_of(job)
            usable |= m
            end = job.start_time + job.walltime if job.has_walltime else INF
            busy.append((end, m))
        return ReservationProfile.from_ends(self.now, usable, busy)

    def _reserve_head(self, head: Job) -> Reservation:
        prof = self.profile()
        dur = job_duration(head)
        found = prof.find_earliest_mask(head.res, dur)
        if found is None:
            return Reservation(head, INF, dur, prof.final_free_mask)
        return Reservation(head, found[0], dur, found[1])

    def head_reservation(self) -> Reservation | None:
        """The reservation the queue head gets now (None when the queue is empty).

        Same computation as in :meth:`schedule` (ignores :attr:`dynamic_queue_order` re-sorting).
        """
        if not self.queue:
            return None
        return self._reserve_head(self.queue[0])

    # ----------------------------------------------------------------------------- schedule
    def _resort(self) -> None:
        keyed = sorted(((self.queue_key(j), self._arrival[j.id]), j) for j in self.queue)
        self._keys = [k for k, _ in keyed]
        self.queue = [j for _, j in keyed]

    def schedule(self) -> None:
        """One EASY pass (module docstring). Cost when nothing can start: ``O(1)`` with no free
        host; else one profile build plus ``O(queue)`` cheap integer checks."""
        self.reservation = None
        if self.dynamic_queue_order and self.queue:
            self._resort()
        queue = self.queue
        if not queue:
            return
        avail = self.available_mask
        nfree = avail.bit_count()
        if nfree == 0:
            return
        n = len(queue)
        i = 0
        # 1. start jobs in order while they fit
        while i < n and queue[i].res <= nfree:
            job = queue[i]
            alloc = self.select_hosts(avail, job)
            self._start(job, alloc)
            avail &= ~alloc
            nfree -= job.res
            i += 1
        started: list[int] = []
        # 2-3. reserve for the head, backfill later jobs that do not delay it
        if i < n - 1 and nfree > 0:
            now = self.now
            resv: Reservation | None = None
            start = INF
            spare = 0
            nspare = 0
            for k in range(i + 1, n):
                job = queue[k]
                r = job.res
                if r > nfree:
                    continue
                if resv is None:
                    resv = self._reserve_head(queue[i])
                    start = resv.start
                    spare = avail & ~resv.hosts_mask
                    nspare = spare.bit_count()
                wt = job.walltime
                if wt >= 0 and now + wt <= start:
                    alloc = self.select_hosts(avail, job)
                elif r <= nspare:
                    alloc = self.select_hosts(spare, job)
                else:
                    continue
                self._start(job, alloc)
                avail &= ~alloc
                spare &= ~alloc
                nspare = spare.bit_count()
                nfree -= r
                started.append(k)
                if nfree == 0:
                    break
            self.reservation = resv
        # drop started jobs from the queue
        if started:
            for k in reversed(started):
                del queue[k]
                del self._keys[k]
        if i:
            del queue[:i]
            del self._keys[:i]

    def _start(self, job: Job, alloc: int) -> None:
        self.execute(job, mask_to_procset(alloc))
        self._masks[job.id] = alloc
