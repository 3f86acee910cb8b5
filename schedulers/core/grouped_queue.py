"""A waiting queue kept as groups of fixed internal order, merged at each pass by a changing key.

Some queue orders change with the state, but not inside a *group* of jobs. BUC
(:mod:`schedulers.buc`, ``shared/papers/002_3dc427a6f94ba187.txt`` eq. 2, L115-126) sorts by
``Sf = A(user, walltime) + (now - subtime)``: the jobs of one user and one walltime share ``A``,
so among them the order is always earlier submission first (then the id string), whatever
``now`` and the user's score; only the groups move against each other. Re-sorting the whole
queue at every pass costs ``O(queue log queue)``; :class:`GroupedQueue` keeps each group as a
list in its fixed order and merges the groups when a pass reads the queue, by the key of their
first jobs (:class:`MergedView`), so a pass costs ``O(groups log groups)`` to start plus
``O(log groups)`` per job it takes, and a search for the next job that fits (EASY's step 3,
:meth:`EASY.backfill_behind <schedulers.easy.EASY.backfill_behind>`) skips whole groups.

The order served is a priority that grows with the waiting time, ``offset(group) + (now -
subtime)`` (s), larger first, ties by earlier ``subtime`` then smaller ``id`` string: the sort key
of a job is ``(-(offset + (now - subtime)), subtime, id)`` with exactly these float operations
(BUC's :meth:`BUCOrder.queue_key <schedulers.buc.BUCOrder.queue_key>`). Within a group the offset
is one float, and float subtraction and addition are monotone, so an earlier ``subtime`` never
gets a smaller priority: the group's order is ``(subtime, id)`` for ever, and a view's order is
exactly that of a sort of all the waiting jobs by the key, whatever the offsets at that pass.
Every job of a group must also have the same walltime (a search's capacity depends on the
walltime alone, :mod:`schedulers.core.waiting`: one number per group).

Each group holds a segment tree of the smallest ``res`` below each node (removed jobs: ``inf``),
so "the first job of the group from position ``p`` on with ``res <= cap``" costs ``O(log n)``
(M. de Berg et al., *Computational Geometry*, 3rd ed., Springer 2008, section 10.3, as in
:mod:`schedulers.core.waiting`).
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from typing import Any, Hashable, Mapping, Sequence

from .model import Job
from .waiting import walltime_key

INF = math.inf

__all__ = ["GroupedQueue", "MergedView"]


class _Group:
    """The jobs of one group in rank order: ``jobs[front:used]`` (None where removed), a min-res
    segment tree over the slots, and the group's walltime key (s, ``inf`` without walltime)."""

    __slots__ = ("name", "jobs", "ranks", "front", "live", "size", "res", "wall")

    def __init__(self, name: Hashable, jobs: list[Job], ranks: list[Any], wall: float) -> None:
        self.name = name
        self.wall = wall
        self.build(jobs, ranks)

    def build(self, jobs: list[Job], ranks: list[Any]) -> None:
        n = len(jobs)
        size = 1
        while size < 2 * n:  # room to append as many again before the next rebuild
            size *= 2
        res = [INF] * (2 * size)
        for i, job in enumerate(jobs):
            res[size + i] = job.res
        for i in range(size - 1, 0, -1):
            a, b = res[2 * i], res[2 * i + 1]
            res[i] = a if a < b else b
        self.jobs: list[Job | None] = jobs  # type: ignore[assignment]  # its slots become None as jobs leave
        self.ranks = ranks
        self.front = 0
        self.live = n
        self.size = size
        self.res = res

    def compact(self) -> None:
        keep = [k for k in range(self.front, len(self.jobs)) if self.jobs[k] is not None]
        self.build([self.jobs[k] for k in keep], [self.ranks[k] for k in keep])  # type: ignore[misc]

    def set(self, i: int, r: float) -> None:
        res = self.res
        i += self.size
        res[i] = r
        i >>= 1
        while i:
            a, b = res[2 * i], res[2 * i + 1]
            m = a if a < b else b
            if res[i] == m:
                return
            res[i] = m
            i >>= 1

    def first(self, lo: int, cap: float) -> int:
        """The first slot ``>= lo`` holding a job with ``res <= cap``, or -1."""
        res, size = self.res, self.size
        if lo >= len(self.jobs) or res[1] > cap:
            return -1
        i = lo + size
        while True:
            if res[i] <= cap:
                if i >= size:
                    return i - size
                i = 2 * i  # the leftmost child first
                continue
            while i & 1:  # a right child (or the root): climb to the next subtree to the right
                i >>= 1
            if i == 0:
                return -1
            i += 1

    def next_live(self, k: int) -> int:
        """The first slot ``>= k`` holding a job, or ``len(jobs)``."""
        jobs = self.jobs
        n = len(jobs)
        while k < n and jobs[k] is None:
            k += 1
        return k


class GroupedQueue:
    """Waiting jobs in groups, each in ``(subtime, id)`` order, merged by priority ``offset(group)
    + (now - subtime)`` when read (module docstring).

    Attributes:
        live: number of jobs in the queue.
    """

    __slots__ = ("_groups", "_where", "live")

    def __init__(self) -> None:
        self._groups: dict[Hashable, _Group] = {}
        self._where: dict[str, Hashable] = {}  # job id -> group
        self.live = 0

    def __len__(self) -> int:
        return self.live

    def __contains__(self, job: Job) -> bool:
        return job.id in self._where

    @property
    def groups(self) -> int:
        """Number of groups holding at least one job."""
        return len(self._groups)

    def add(self, job: Job, group: Hashable) -> None:
        """Queue ``job`` in ``group`` (any hashable; ``O(log n)`` amortised when the job comes
        after the group's others in ``(subtime, id)`` order, the usual case, else ``O(group)``).

        Raises:
            ValueError: ``job`` is already queued, its walltime differs from the group's, or
                ``res < 1``.
        """
        if job.id in self._where:
            raise ValueError(f"job {job.id} is already queued")
        if job.res < 1:
            raise ValueError(f"job {job.id}: res must be >= 1, got {job.res}")
        rank = (job.subtime, job.id)
        g = self._groups.get(group)
        wall = walltime_key(job)
        if g is None:
            self._groups[group] = _Group(group, [job], [rank], wall)
        else:
            if wall != g.wall:
                raise ValueError(f"job {job.id}: walltime {job.walltime} in a group of walltime {g.wall}")
            if rank > g.ranks[-1]:
                if len(g.jobs) == g.size or 2 * g.front > g.size:  # out of slots, or half of
                    g.compact()                                   # them dead: reclaim them
                g.set(len(g.jobs), job.res)
                g.jobs.append(job)
                g.ranks.append(rank)
                g.live += 1
            else:  # (ids are unique among waiting jobs: the rank is new)
                k = bisect_left(g.ranks, rank, g.front)
                g.jobs.insert(k, job)
                g.ranks.insert(k, rank)
                g.compact()
        self._where[job.id] = group
        self.live += 1

    def remove(self, job: Job) -> None:
        """Take ``job`` out (it started, or left the queue), ``O(log n)``; allowed while a
        :class:`MergedView` is open (it then no longer sees the job).

        Raises:
            KeyError: ``job`` is not queued.
        """
        group = self._where.pop(job.id)
        g = self._groups[group]
        k = bisect_left(g.ranks, (job.subtime, job.id), g.front)
        g.jobs[k] = None
        g.set(k, INF)
        g.live -= 1
        self.live -= 1
        if not g.live:
            del self._groups[group]
            return
        if k == g.front:
            g.front = g.next_live(k)
        # (slots are kept, as an open view counts on them: the next add() that runs out of
        # slots reclaims them, and a group is dropped with its last job)

    def ordered(self, now: float, offset: Mapping[Any, float]) -> list[Job]:
        """Every queued job in queue order at ``now`` (s): priority ``offset(group) + (now -
        subtime)`` (s) larger first, then earlier subtime, then smaller id; a merge of the
        groups, ``O(n log groups)``."""
        runs = []
        for g in self._groups.values():
            off = offset[g.name]
            runs.append([((-(off + (now - j.subtime)), j.subtime, j.id), j)
                         for j in g.jobs[g.front:] if j is not None])
        return [j for _, j in heapq.merge(*runs)]

    def view(self, now: float, offset: Mapping[Any, float]) -> MergedView:
        """A :class:`MergedView` of the queue at ``now`` (s) with the groups' offsets (s, by
        group; read once per group), for one pass: the queue must not change while it is open,
        but by :meth:`remove` of the jobs the pass starts."""
        return MergedView(list(self._groups.values()), now, offset)


class MergedView:
    """The queue in merged order during one pass: the head and the jobs behind it, found without
    sorting the queue.

    Reads: :meth:`head` and :meth:`take_head` walk the queue from the front (EASY's step 1); then
    the searches of :class:`~schedulers.core.waiting.WaitingIndex` (:meth:`slot`, :meth:`job`,
    :meth:`key`, :meth:`exists`, :meth:`first`) behind the head, as :meth:`EASY.backfill_behind
    <schedulers.easy.EASY.backfill_behind>` asks them: slots are labels the view gives in queue
    order (the head's first, then each job :meth:`first` returns), and a search starts one past
    the last label given. The jobs the pass starts leave the queue as they start
    (:meth:`GroupedQueue.remove`, so a group's smallest ``res``, the root of its tree, is that of
    the jobs still waiting). Successive :meth:`first` calls take the same ``limits`` and capacities that never
    grow (hosts are only taken during a pass): a job that did not fit then never fits later. So
    :meth:`first` keeps each group's first fitting job in a heap by key and checks the top one
    again when asked: ``O(groups)`` root tests and the searches of the groups that may fit at
    the first call, then ``O(log groups + log n)`` per job found no longer fitting.

    Args:
        groups: the groups (:class:`GroupedQueue` internals); now: the pass's time (s); offset:
            each group's offset (s).
    """

    __slots__ = ("_groups", "_now", "_offs", "_cur", "_heads", "_labels", "_label_group", "_after", "_cand",
                 "_pending", "_limits", "_caps")

    def __init__(self, groups: list[_Group], now: float, offset: Mapping[Any, float]) -> None:
        self._groups = groups
        self._now = now
        self._offs = offs = [offset[g.name] for g in groups]
        self._cur = [g.front for g in groups]  # first slot of each group not yet passed
        heads = []
        for n, g in enumerate(groups):
            j = g.jobs[g.front]
            heads.append(((-(offs[n] + (now - j.subtime)), j.subtime, j.id), n))  # type: ignore[union-attr]
        heapq.heapify(heads)
        self._heads = heads
        self._labels: list[Job] = []
        self._label_group: list[int] = []      # the group of each label
        self._after: list[int] | None = None   # per group, first slot behind the head
        self._cand: list[tuple[Any, int, int]] | None = None  # first(): (key, group, slot) heap
        self._pending = -1                      # group whose job first() returned last
        self._limits: tuple[float, ...] = ()
        self._caps: tuple[int, ...] = ()

    def _key(self, n: int, job: Job) -> tuple[float, float, str]:
        return (-(self._offs[n] + (self._now - job.subtime)), job.subtime, job.id)

    # ---------------------------------------------------------------------- walk from the front
    def head(self) -> Job | None:
        """The first job not yet passed in queue order (None: none left)."""
        if not self._heads:
            return None
        n = self._heads[0][1]
        return self._groups[n].jobs[self._cur[n]]

    def take_head(self) -> Job:
        """Pass the head (it started) and return it, ``O(log groups)``.

        Raises:
            IndexError: no job left; RuntimeError: the searches behind the head have begun.
        """
        if self._after is not None:
            raise RuntimeError("take_head after the searches behind the head began")
        n = self._heads[0][1]
        g = self._groups[n]
        k = self._cur[n]
        job = g.jobs[k]
        k = self._cur[n] = g.next_live(k + 1)
        if k < len(g.jobs):
            heapq.heapreplace(self._heads, (self._key(n, g.jobs[k]), n))  # type: ignore[arg-type]
        else:
            heapq.heappop(self._heads)
        return job  # type: ignore[return-value]

    # -------------------------------------------------------------- searches behind the head
    def slot(self, job: Job) -> int:
        """The label of ``job``, which must be the :meth:`head` (then the searches begin behind
        it) or a job :meth:`first` returned.

        Raises:
            KeyError: another job.
        """
        if self._after is None:
            if job is not self.head():
                raise KeyError(job.id)
            self._labels.append(job)
            n = self._heads[0][1]
            self._label_group.append(n)
            self._after = list(self._cur)
            self._after[n] += 1
            return 0
        for s, j in enumerate(self._labels):
            if j is job:
                return s
        raise KeyError(job.id)

    def job(self, slot: int) -> Job:
        """The job of label ``slot``."""
        return self._labels[slot]

    def key(self, slot: int) -> tuple[float, float, str]:
        """The sort key of the job of label ``slot`` (module docstring)."""
        return self._key(self._label_group[slot], self._labels[slot])

    def _check(self, slot: int) -> list[int]:
        if self._after is None or slot != len(self._labels):
            raise ValueError(f"a search from slot {slot}: the view searches one past its last label "
                             f"({len(self._labels)}) once slot(head) was asked")
        return self._after

    def exists(self, slot: int, now: float, limits: Sequence[float], caps: Sequence[int]) -> bool:
        """Whether a job behind the last label has ``res <= cap(walltime)`` (the capacities of
        :meth:`WaitingIndex.first <schedulers.core.waiting.WaitingIndex.first>`; ``now`` (s) as
        the view's); ``O(groups x log n)``; no state changes."""
        after = self._check(slot)
        for n, g in enumerate(self._groups):
            if g.first(after[n], caps[bisect_left(limits, now + g.wall)]) >= 0:
                return True
        return False

    def first(self, slot: int, now: float, limits: Sequence[float], caps: Sequence[int]) -> int:
        """The label of the first job behind the last label with ``res <= cap(walltime)`` (as
        :meth:`WaitingIndex.first <schedulers.core.waiting.WaitingIndex.first>`; ``now`` (s) as
        the view's), or -1.

        Costs ``O(log groups + log n)`` per group whose entry comes on top (class docstring).

        Raises:
            ValueError: ``slot`` is not one past the last label; ``limits`` changed or a capacity
                grew since the previous call.
        """
        after = self._check(slot)
        groups = self._groups
        limits, caps = tuple(limits), tuple(caps)
        cand = self._cand
        if cand is None:
            cand = self._cand = []
            for n, g in enumerate(groups):
                k = g.first(after[n], caps[bisect_left(limits, now + g.wall)])
                if k >= 0:
                    cand.append((self._key(n, g.jobs[k]), n, k))  # type: ignore[arg-type]
            heapq.heapify(cand)
        else:
            if limits != self._limits or len(caps) != len(self._caps) \
                    or any(c > d for c, d in zip(caps, self._caps)):
                raise ValueError("first: limits changed or a capacity grew during the pass")
            n = self._pending
            if n >= 0:  # the group of the job returned last: its next fitting job
                g = groups[n]
                k = g.first(after[n], caps[bisect_left(limits, now + g.wall)])
                if k >= 0:
                    heapq.heappush(cand, (self._key(n, g.jobs[k]), n, k))  # type: ignore[arg-type]
        self._limits, self._caps = limits, caps
        self._pending = -1
        while cand:
            _, n, k = cand[0]
            g = groups[n]
            cap = caps[bisect_left(limits, now + g.wall)]
            job = g.jobs[k]
            if job is not None and job.res <= cap:
                heapq.heappop(cand)
                after[n] = k + 1
                self._pending = n
                self._labels.append(job)
                self._label_group.append(n)
                return len(self._labels) - 1
            k = g.first(k + 1, cap)  # capacities fell since: the group's next fitting job
            if k >= 0:
                heapq.heapreplace(cand, (self._key(n, g.jobs[k]), n, k))  # type: ignore[arg-type]
            else:
                heapq.heappop(cand)
        return -1
