"""Index of the waiting jobs for backfilling searches: which job, in queue order, may start now?

A backfilling pass looks, in queue order, for the next waiting job that may start now. Whether a
job may start depends on two numbers of the job: ``res`` (hosts) and its walltime, through a
*capacity* that does not grow with the walltime. EASY (:mod:`schedulers.easy`): a job fits if
``res <= nfree`` (hosts free now) when it ends before the head's reserved start (``now + walltime
<= start``), else if ``res <= nspare`` (free hosts the reservation does not need; ``nspare <=
nfree``). Conservative backfilling (:mod:`schedulers.conservative`) has the same form with more
steps: a job fits now if ``res`` hosts stay free from now until ``now + walltime``, and the number
of such hosts only falls as the window grows past the start of each later slice of the
reservation profile. In general::

    cap(walltime) = caps[j],  j = number of limits t with t < now + walltime

with ``limits`` increasing times and ``caps`` non-increasing host counts, and a job *may fit*
when ``res <= cap(walltime)``; a job without walltime has walltime ``inf`` here (it crosses every
finite limit).

Scanning the queue for that job costs ``O(queue)`` per search, and under a backlog (thousands of
jobs waiting, few hosts free, a pass after every submission and completion) the passes become
quadratic in the number of jobs. :class:`WaitingIndex` answers the search without a scan:

* the jobs are split by size class (:func:`size_class`): one class per ``res`` below 64, then four
  classes per doubling (``res`` within a class differs by less than 25 %);
* each class keeps its jobs in queue order in a segment tree whose nodes hold the smallest
  ``res`` and the smallest walltime of the jobs below them. As ``cap`` does not grow with the
  walltime, a node whose smallest ``res`` exceeds ``cap(smallest walltime)`` holds no job that
  may fit (every job below has at least that ``res`` and at most that capacity), and the search
  skips it whole;
* a search first looks at the next :data:`PROBE` slots one by one, then in each class whose
  smallest size fits ``caps[0]`` (skipped at once when the class's root fails the test), each
  only up to the best job found so far, and returns the first in queue order. In a class of one
  ``res`` the test is on the walltime alone: any job (``res <= cap`` whatever the walltime) or
  the first job with ``now + walltime <= limit`` for the limit that capacity allows.

The answer is exact: the first job in queue order with ``res <= cap(walltime)``, the one a scan
would find (:class:`QueueScan` is that scan); the caller then applies its own test. A class's
test can only pass without a matching job when its smallest ``res`` and its smallest walltime come
from two different jobs of different ``res``: never below 64 hosts, and above only in the one or
two classes that straddle a capacity (the others either all fit by size or none does). Searches
of the small classes are exact, so a search that finds nothing costs ``O(log n)`` per class.

Slots: each job gets a *slot*, an integer growing with queue order (not its position: a search
resumes at ``slot + 1``); the owner calls :meth:`WaitingIndex.append` for a job queued behind
every other one, :meth:`WaitingIndex.insert` for a job queued between two others (a queue kept
in another order than arrival: HEFT's rank, shortest job first) and :meth:`WaitingIndex.rebuild`
after anything else (a re-sorted queue).

Costs (``n`` jobs): :meth:`~WaitingIndex.append` and :meth:`~WaitingIndex.remove` ``O(log n)``
(amortised: a class's tree is rebuilt, ``O(its jobs)``, when its slots run out),
:meth:`~WaitingIndex.insert` ``O(log n)`` when its size class's tree has an empty local slot where
the job belongs (a tree rebuilt by an insertion leaves one before each job) or the job goes behind
the class's last job, else ``O(jobs of its size class)`` (the class's tree is rebuilt around it,
levels of minima computed in C), plus ``O(n)`` when the slots are renumbered,
:meth:`~WaitingIndex.rebuild` ``O(n)``, :meth:`~WaitingIndex.first` ``O(classes x log n)`` plus
the nodes described above. Memory: ``O(n)`` numbers after a rebuild; the slots of removed jobs
are reclaimed when a class runs out of slots (its tree is then rebuilt from its live jobs).

Sources: the segment tree is textbook (M. de Berg et al., *Computational Geometry*, 3rd ed.,
Springer 2008, section 10.3); the search it serves is EASY's backfilling (Lifka 1995, JSSPP, LNCS
949; Mu'alem & Feitelson 2001, IEEE TPDS 12(6), section 2).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import Any, Iterable, Sequence

from .model import Job

INF = math.inf

__all__ = ["QueueScan", "WaitingIndex", "size_class", "walltime_key", "walltime_limits"]

#: Below this ``res``, each ``res`` is a size class of its own.
EXACT_CLASSES = 64

#: Slots a search looks at one by one before it searches the size classes' trees.
PROBE = 8

#: Gap between the slots of consecutive jobs once a job was inserted in the middle of the queue
#: (:meth:`WaitingIndex.insert`); an insertion takes at most :data:`SLOT_STEP` of a gap, so a run
#: of jobs inserted one behind the other at the same place (equal keys) uses it up slowly.
SLOT_GAP = 1 << 32
SLOT_STEP = 1 << 12


def size_class(res: int) -> int:
    """The size class of a job of ``res`` hosts (>= 1): ``res`` itself below
    :data:`EXACT_CLASSES` (64), then four classes per doubling: ``[64, 80)``, ``[80, 96)``,
    ``[96, 112)``, ``[112, 128)``, ``[128, 160)``... Classes grow with ``res``."""
    if res < EXACT_CLASSES:
        return res
    b = res.bit_length()
    return EXACT_CLASSES + 4 * (b - 7) + ((res >> (b - 3)) & 3)


def class_low(c: int) -> int:
    """The smallest ``res`` of size class ``c`` (:func:`size_class`)."""
    if c < EXACT_CLASSES:
        return c
    k, q = divmod(c - EXACT_CLASSES, 4)
    return (4 + q) << (k + 4)


def walltime_key(job: Job) -> float:
    """The walltime (s) the searches use: the job's walltime, ``inf`` without one (Batsim's
    ``-1``): such a job never ends as far as a reservation knows."""
    wt = job.walltime
    return wt if wt >= 0 else INF


def walltime_limits(limits: list[float], now: float, scale: float = 1.0, extra: float = 0.0) -> list[float]:
    """Limits on a job's *slot* (a profile's ``free_now_steps``, s) as limits on its walltime,
    what the searches test, for slots of ``walltime * scale + extra`` seconds (``scale`` in
    ``(0, 1]``: green-heft's shortened slots; ``extra`` >= 0: conservative's ``rjms_delay``):
    a slot from ``now`` crosses ``t`` when the walltime exceeds ``(t - now - extra) / scale``.
    Each limit gets a margin of 1e-9 relative plus 1 microsecond, so that float rounding can only
    let more jobs through a search, never fewer (the caller checks each job found); ``limits``
    itself when the slot is the walltime."""
    if scale >= 1.0 and extra == 0.0:
        return limits
    return [now + (t - now - extra) / scale + 1e-9 * abs(t - now) / scale + 1e-6 for t in limits]


class _ClassTree:
    """The jobs of one size class in queue order: a segment tree over local slots whose nodes
    hold the smallest ``res`` and walltime below them; empty local slots (a job removed, or a
    gap left for an insertion, ``spread``) hold ``inf``.

    ``order`` (the index's slot of each local slot) never decreases: an empty local slot keeps
    the slot of the job removed from it, a gap the slot of the job before it (-1 at the front),
    so ``bisect_left(order, s)`` is the first local slot of a job at or after index slot ``s``.
    """

    __slots__ = ("size", "used", "res", "wall", "jobs", "order", "live")

    def __init__(self, jobs: list[Job], order: list[int], spread: bool = False) -> None:
        n = len(jobs)
        if spread:  # an empty local slot before each job (see WaitingIndex.insert)
            jobs = [x for job in jobs for x in (None, job)]  # type: ignore[misc]
            order = [x for k, o in enumerate(order) for x in (order[k - 1] if k else -1, o)]
        m = len(jobs)
        size = 1
        while size < 2 * m:  # room to append as many again before the next rebuild
            size *= 2
        pad = [INF] * (size - m)
        res = [INF] * size + [INF if job is None else job.res for job in jobs] + pad
        wall = [INF] * size + [INF if job is None else walltime_key(job) for job in jobs] + pad
        i = size  # each level from its children, a level at a time (min of pairs, in C)
        while i > 1:
            h = i >> 1
            res[h:i] = map(min, res[i:2 * i:2], res[i + 1:2 * i:2])
            wall[h:i] = map(min, wall[i:2 * i:2], wall[i + 1:2 * i:2])
            i = h
        self.size, self.used, self.res, self.wall = size, m, res, wall
        self.jobs: list[Job | None] = jobs  # type: ignore[assignment]  # its slots become None as jobs leave
        self.order = order  # the index's slot of each local slot, increasing
        self.live = n

    def compacted(self, job: Job | None = None, slot: int = 0) -> "_ClassTree":
        """A new tree of this one's live jobs (room to append as many again), with ``job`` in
        index slot ``slot`` among them when given (not behind the last: see
        :meth:`WaitingIndex.insert`), then a gap before each job."""
        live = [(o, j) for j, o in zip(self.jobs, self.order) if j is not None]
        if job is not None:
            live.insert(bisect_left(live, (slot,), 0, len(live)), (slot, job))
        return _ClassTree([j for _, j in live], [o for o, _ in live], spread=job is not None)

    def put(self, job: Job, slot: int) -> bool:
        """Place ``job`` (index slot ``slot``, before the last local slot's) in an empty local
        slot where the order allows it (just before or at the first local slot of a job after
        it), ``O(log n)``; False when there is none (the caller rebuilds the tree)."""
        order, jobs = self.order, self.jobs
        p = bisect_left(order, slot, 0, self.used)
        for q in (p - 1, p):  # order[p - 1] < slot < order[p] <= order[p + 1]
            if 0 <= q < self.used and jobs[q] is None:
                order[q] = slot
                jobs[q] = job
                self.live += 1
                self.set(q, job.res, walltime_key(job))
                return True
        return False

    def set(self, s: int, r: float, w: float) -> None:
        res, wall = self.res, self.wall
        i = s + self.size
        res[i] = r
        wall[i] = w
        i >>= 1
        while i:
            a, b = res[2 * i], res[2 * i + 1]
            m = a if a < b else b
            c, d = wall[2 * i], wall[2 * i + 1]
            v = c if c < d else d
            if res[i] == m and wall[i] == v:
                return  # nothing above changes either
            res[i] = m
            wall[i] = v
            i >>= 1

    def first_live(self, s: int, end: int) -> int:
        """The first local slot in ``[s, end)`` holding a job, or -1."""
        if s >= end:
            return -1
        res, size = self.res, self.size
        i = s + size
        while True:
            if res[i] != INF:
                if i >= size:
                    return i - size if i - size < end else -1
                i = 2 * i
                continue
            while i & 1:
                i >>= 1
            if i == 0:
                return -1
            i += 1
            if i * (size >> (i.bit_length() - 1)) - size >= end:
                return -1

    def first_ending(self, s: int, end: int, now: float, limit: float) -> int:
        """The first local slot in ``[s, end)`` whose job has ``now + walltime <= limit`` (a
        finite ``limit``: removed slots, walltime ``inf``, never pass), or -1."""
        if s >= end:
            return -1
        wall, size = self.wall, self.size
        i = s + size
        while True:
            if now + wall[i] <= limit:
                if i >= size:
                    return i - size if i - size < end else -1
                i = 2 * i
                continue
            while i & 1:
                i >>= 1
            if i == 0:
                return -1
            i += 1
            if i * (size >> (i.bit_length() - 1)) - size >= end:
                return -1

    def first(self, s: int, end: int, now: float, limits: Sequence[float], caps: Sequence[int]) -> int:
        """The first local slot in ``[s, end)`` whose job has ``res <= cap(walltime)``, or -1."""
        if s >= end:
            return -1
        res, wall, size = self.res, self.wall, self.size
        steps = len(limits) > 1
        if not steps:
            lim, hi = (limits[0], caps[0]) if limits else (INF, caps[0])
            lo = caps[-1]
        i = s + size
        while True:
            r = res[i]
            if (r <= caps[bisect_left(limits, now + wall[i])] if steps
                    else r <= lo or (r <= hi and not lim < now + wall[i])):
                if i >= size:
                    return i - size if i - size < end else -1
                i = 2 * i  # the leftmost child first
                continue
            while i & 1:  # a right child (or the root): climb to the next subtree to the right
                i >>= 1
            if i == 0:
                return -1
            i += 1
            # the first leaf below node i is past the range: stop
            if i * (size >> (i.bit_length() - 1)) - size >= end:
                return -1


class WaitingIndex:
    """Waiting jobs in queue order, searchable by ``res`` and walltime (module docstring).

    Args:
        jobs: the queue, in queue order; keys: an optional key per job (:meth:`key`).

    Attributes:
        live: number of jobs in the index.
    """

    __slots__ = ("_classes", "_low", "_where", "_at", "_next", "_gap", "live")

    def __init__(self, jobs: Iterable[Job] = (), keys: Iterable[Any] = ()) -> None:
        self._classes: list[_ClassTree | None] = []
        self._low: list[int] = []  # class_low of each class
        self._where: dict[str, tuple[int, int]] = {}  # job id -> (class, slot)
        self._at: dict[int, tuple[Job, Any]] = {}     # slot -> (job, key)
        self._next = 0
        self._gap = 1  # between the slots of consecutive jobs (SLOT_GAP once a job was inserted)
        self.live = 0
        self.rebuild(jobs, keys)

    # ------------------------------------------------------------------------------- updates
    def rebuild(self, jobs: Iterable[Job], keys: Iterable[Any] = ()) -> None:
        """Replace the content by ``jobs`` in queue order (slots 0, 1, ... or, once a job was
        :meth:`insert`-ed, ``SLOT_GAP``, 2 ``SLOT_GAP``...), each with an optional caller's key
        (:meth:`key`), in ``O(n)``."""
        jobs = list(jobs)
        keys = list(keys) or [None] * len(jobs)
        gap = self._gap
        base = gap if gap > 1 else 0  # (with gaps, room before the first job too)
        by_class: dict[int, tuple[list[Job], list[int]]] = {}
        for k, job in enumerate(jobs):
            s = base + k * gap
            c = size_class(job.res)
            members = by_class.get(c)
            if members is None:
                members = by_class[c] = ([], [])
            members[0].append(job)
            members[1].append(s)
        self._classes = [None] * (max(by_class) + 1 if by_class else 0)
        self._low = [class_low(c) for c in range(len(self._classes))]
        self._where = {}
        for c, (class_jobs, order) in by_class.items():
            self._classes[c] = _ClassTree(class_jobs, order)
            for job, s in zip(class_jobs, order):
                self._where[job.id] = (c, s)
        self._at = {base + k * gap: (job, key) for k, (job, key) in enumerate(zip(jobs, keys))}
        self._next = base + len(jobs) * gap
        self.live = len(jobs)

    def append(self, job: Job, key: Any = None) -> None:
        """Add ``job`` behind every job in the index (the caller's queue order), with ``key``.

        Raises:
            ValueError: ``res < 1``.
        """
        if job.res < 1:
            raise ValueError(f"job {job.id}: res must be >= 1, got {job.res}")
        s = self._next
        self._next = s + self._gap
        self._place(job, key, s)

    def insert(self, job: Job, key: Any, before: Job, after: Job | None) -> None:
        """Add ``job`` just before ``before`` (in the index) and after ``after`` (the job ahead
        of it in queue order, None at the front), with ``key``: a queue kept in an order other
        than arrival (HEFT's rank, shortest job first...).

        The new slot lies between the two neighbours' (slots then keep a gap of
        :data:`SLOT_GAP`: the first insertion into an index of consecutive slots, or one between
        two slots with no integer left between them, renumbers every job, ``O(n)``). In its size
        class's tree the job takes an empty local slot next to where it belongs when there is
        one (``O(log n)``; a rebuilt tree leaves one before each job), else the tree is rebuilt
        around it (``O(jobs of the class)``).

        Raises:
            ValueError: ``res < 1``. KeyError: ``before`` or ``after`` is not in the index.
        """
        if job.res < 1:
            raise ValueError(f"job {job.id}: res must be >= 1, got {job.res}")
        hi = self.slot(before)
        lo = self.slot(after) if after is not None else -1
        if hi - lo < 2:  # no slot left between them: renumber every job with gaps
            order = sorted(self._at)
            jobs = [self._at[t][0] for t in order]
            keys = [self._at[t][1] for t in order]
            k = order.index(hi)
            jobs.insert(k, job)
            keys.insert(k, key)
            self._gap = SLOT_GAP
            self.rebuild(jobs, keys)
            return
        self._place(job, key, lo + min(SLOT_STEP, (hi - lo) // 2))

    def _place(self, job: Job, key: Any, s: int) -> None:
        """Put ``job`` in index slot ``s`` (free, and between its neighbours' slots)."""
        c = size_class(job.res)
        classes = self._classes
        while len(classes) <= c:
            self._low.append(class_low(len(classes)))
            classes.append(None)
        tree = classes[c]
        if tree is None or not tree.used or tree.order[tree.used - 1] < s:
            # behind every job of its class (or the first): appended to that class's tree
            if tree is None:
                tree = classes[c] = _ClassTree([], [])
            elif tree.used == tree.size:  # out of local slots: rebuilt from its live jobs
                tree = classes[c] = tree.compacted()
            local = tree.used
            tree.used = local + 1
            tree.jobs.append(job)
            tree.order.append(s)
            tree.live += 1
            tree.set(local, job.res, walltime_key(job))
        elif not tree.put(job, s):
            classes[c] = tree.compacted(job, s)
        self._where[job.id] = (c, s)
        self._at[s] = (job, key)
        self.live += 1

    def remove(self, job: Job) -> None:
        """Take ``job`` out (it started, or left the queue).

        Raises:
            KeyError: ``job`` is not in the index.
        """
        c, s = self._where.pop(job.id)
        tree = self._classes[c]
        assert tree is not None
        local = bisect_left(tree.order, s, 0, tree.used)
        del self._at[s]
        tree.jobs[local] = None
        tree.live -= 1
        self.live -= 1
        tree.set(local, INF, INF)

    # ------------------------------------------------------------------------------- queries
    def __len__(self) -> int:
        return self.live

    def __contains__(self, job: Job) -> bool:
        return job.id in self._where

    def slot(self, job: Job) -> int:
        """The slot of ``job`` (slots grow in queue order). Raises KeyError when absent."""
        return self._where[job.id][1]

    def job(self, slot: int) -> Job:
        """The job in ``slot`` (a slot :meth:`first` returned). Raises KeyError when empty."""
        return self._at[slot][0]

    def key(self, slot: int) -> Any:
        """The key given with the job in ``slot`` (None when none was given)."""
        return self._at[slot][1]

    def jobs(self) -> list[Job]:
        """The jobs, in queue order."""
        return [self._at[s][0] for s in sorted(self._at)]

    def first(self, slot: int, now: float, limits: Sequence[float], caps: Sequence[int]) -> int:
        """The first slot ``>= slot`` whose job has ``res <= cap(walltime)`` (module docstring),
        or -1.

        Args:
            slot: where to start (one past the last job looked at; 0: the queue's front).
            now: the current time (s).
            limits: increasing times (s; ``inf`` allowed); caps: ``len(limits) + 1`` host
                counts, non-increasing. One cap and no limit: a search on ``res`` alone.
        """
        return self._search(slot, now, limits, caps, False)

    def exists(self, slot: int, now: float, limits: Sequence[float], caps: Sequence[int]) -> bool:
        """Whether :meth:`first` would find a job (cheaper: any match ends the search)."""
        return self._search(slot, now, limits, caps, True) >= 0

    def _search(self, slot: int, now: float, limits: Sequence[float], caps: Sequence[int], any_: bool) -> int:
        # the next few slots first: a match there needs no tree
        at = self._at
        stop = min(slot + PROBE, self._next) if self._gap == 1 else slot  # (gaps: trees only)
        while slot < stop:
            entry = at.get(slot)
            if entry is not None and entry[0].res <= caps[bisect_left(limits, now + walltime_key(entry[0]))]:
                return slot
            slot += 1
        best = -1
        top = caps[0]
        low = self._low
        steps = len(limits) > 1
        lim = limits[0] if limits else INF
        bottom = caps[-1]
        for c, tree in enumerate(self._classes):
            if low[c] > top:
                break  # this class and the next ones are too large for any capacity
            if tree is None or not tree.live:
                continue
            r, w = tree.res[1], tree.wall[1]  # the class's smallest res and walltime
            if not (r <= caps[bisect_left(limits, now + w)] if steps else r <= bottom or not lim < now + w):
                continue  # no job of the class may fit
            order = tree.order
            end = tree.used if best < 0 else bisect_left(order, best)
            start = bisect_left(order, slot)
            if start >= end:
                continue
            if c < EXACT_CLASSES:
                # every job of the class has res = c: it fits while its window crosses at most
                # `fit` limits, i.e. ends by limits[fit] (any job fits when fit = len(limits))
                fit = len(caps) - 1
                while caps[fit] < c:
                    fit -= 1
                if fit == len(limits) or limits[fit] == INF:
                    local = tree.first_live(start, end)
                else:
                    local = tree.first_ending(start, end, now, limits[fit])
            else:
                local = tree.first(start, end, now, limits, caps)
            if local >= 0:
                best = order[local]
                if any_:
                    break
        return best


class QueueScan:
    """The same searches as :class:`WaitingIndex` by scanning a queue list (``O(n)`` each, nothing
    to maintain): for short queues, and for queues re-sorted at every pass (a dynamic order).
    Slots are the list's positions.

    Args:
        jobs: the queue (read, not copied: valid until the list changes).
        keys: the caller's keys parallel to ``jobs`` (:meth:`key`), or empty.
    """

    __slots__ = ("_jobs", "_keys")

    def __init__(self, jobs: Sequence[Job], keys: Sequence[Any] = ()) -> None:
        self._jobs = jobs
        self._keys = keys

    def __len__(self) -> int:
        return len(self._jobs)

    def slot(self, job: Job) -> int:
        """The position of ``job`` (the object itself) in the queue, in ``O(position)``.

        Raises:
            KeyError: ``job`` is not in the queue.
        """
        for k, j in enumerate(self._jobs):
            if j is job:
                return k
        raise KeyError(job.id)

    def job(self, slot: int) -> Job:
        return self._jobs[slot]

    def key(self, slot: int) -> Any:
        return self._keys[slot] if self._keys else None

    def exists(self, slot: int, now: float, limits: Sequence[float], caps: Sequence[int]) -> bool:
        """As :meth:`WaitingIndex.exists`."""
        return self.first(slot, now, limits, caps) >= 0

    def first(self, slot: int, now: float, limits: Sequence[float], caps: Sequence[int]) -> int:
        """As :meth:`WaitingIndex.first`."""
        jobs = self._jobs
        n = len(jobs)
        if len(limits) == 0:
            c = caps[0]
            for k in range(slot, n):
                if jobs[k].res <= c:
                    return k
            return -1
        if len(limits) == 1:
            lim, hi, lo = limits[0], caps[0], caps[1]
            for k in range(slot, n):
                r = jobs[k].res
                if r <= lo or (r <= hi and not lim < now + walltime_key(jobs[k])):
                    return k
            return -1
        for k in range(slot, n):
            if jobs[k].res <= caps[bisect_left(limits, now + walltime_key(jobs[k]))]:
                return k
        return -1
