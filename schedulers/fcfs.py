"""First-come, first-served without backfilling.

Jobs start in strict submission order: the head of the queue starts as soon as ``res`` hosts are
available, on the lowest available ids; nothing overtakes it. A job asking for more hosts than
the platform has is rejected at submission (it could never start and would block the queue
forever). Walltimes are not used (jobs without walltime, Batsim's ``-1``, are fine).

This is the baseline of Batsim's and pybatsim's examples (``fcfs``), against which backfilling
(Lifka 1995; Mu'alem & Feitelson 2001, IEEE TPDS 12(6)) is measured.

Queue order hook (as :class:`schedulers.easy.EASY`'s): a subclass that sets
:attr:`FCFS.dynamic_queue_order` gets its queue re-sorted by ``(queue_key(job), arrival index)``
at every pass, before the heads are started (BUC's Sf, :mod:`schedulers.buc`). Plain FCFS never
calls :meth:`FCFS.queue_key` and keeps submission order.
"""

from __future__ import annotations

from collections import deque
from operator import itemgetter
from typing import Any, ClassVar

from .core.backfilling import lowest_bits
from .core.model import Job
from .core.policy import Policy


class FCFS(Policy):
    """Strict FCFS (see the module docstring).

    Args:
        options: unused (accepted for the common policy interface).

    Attributes:
        queue: waiting jobs in submission order (a deque; the head is ``queue[0]``).

    Host choice: the ``res`` lowest ids among the available hosts (awake, not allocated).
    """

    name = "fcfs"
    summary = ("Starts jobs in submission order as soon as enough hosts are free; nothing overtakes the first "
               "waiting job.")
    forget_finished_jobs = True

    #: True when :meth:`queue_key` depends on the state: the queue is then re-sorted by
    #: ``(queue_key(job), arrival index)`` at every pass. False: submission order.
    dynamic_queue_order: ClassVar[bool] = False

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.queue: deque[Job] = deque()
        self._arrival: dict[str, int] = {}  # arrival index of each waiting job
        self._nb_arrived = 0

    def queue_key(self, job: Job) -> Any:
        """Sort key of a waiting job, smallest first (only read when :attr:`dynamic_queue_order`);
        ties are broken by arrival order. Default: 0 (arrival order)."""
        return 0

    def on_job_submitted(self, job: Job) -> None:
        """Queue the job, or reject it when ``res`` exceeds the number of compute hosts."""
        if self.platform.hosts and job.res > len(self.platform.hosts):
            self.reject(job)
        else:
            self._arrival[job.id] = self._nb_arrived
            self._nb_arrived += 1
            self.queue.append(job)

    def schedule(self) -> None:
        """Start queue heads while they fit on the available hosts (lowest ids first), after
        re-sorting the queue when :attr:`dynamic_queue_order` is set."""
        q = self.queue
        if not q:
            return
        if self.dynamic_queue_order and len(q) > 1:
            arrival, key = self._arrival, self.queue_key
            keyed = [((key(j), arrival[j.id]), j) for j in q]
            try:
                keyed.sort(key=itemgetter(0))
            except TypeError as exc:   # (keys of types that do not compare: 'str' and 'int', None...)
                from .core.failure import key_type_error
                raise key_type_error(self, [(k[0], j) for k, j in keyed], exc) from None
            q = self.queue = deque([j for _, j in keyed])
        avail = self.available_mask
        nfree = avail.bit_count()
        if q[0].res > nfree:
            return
        while q and q[0].res <= nfree:
            job = q.popleft()
            self._arrival.pop(job.id, None)
            alloc = lowest_bits(avail, job.res)
            self.execute_mask(job, alloc)
            avail &= ~alloc
            nfree -= job.res
