"""Conservative backfilling (Mu'alem & Feitelson 2001).

Sources:
    A. W. Mu'alem and D. G. Feitelson, "Utilization, predictability, workloads, and user runtime
    estimates in scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6):529-543, 2001,
    section 2 (conservative backfilling: every job gets a reservation; a job may start early only
    if it delays no reservation; the schedule is compressed when jobs end early).
    The green-heuristic paper (``../shared/papers/004_256d972a5ab7dee1.txt``, section 3.1, the
    paragraph after Figure 2 and Figure 3 "Conservative backfilling (CONS)", adapted from Mu'alem
    & Feitelson): CONS adds one rule to EASY's gap filling, a job that has been given a slot can
    no longer be postponed (the anchor on the time axis of Figure 3). The paper words it for the
    first job of the queue; Mu'alem & Feitelson's definition, every queued job, is the one here.

Classic variant (the default): the reservations are kept from pass to pass
(:mod:`schedulers.core.kept_reservations`), in one profile holding each running job's hosts
until ``start + walltime + rjms_delay`` and each waiting job's window. After every Batsim
message:

1. each job that ended frees the rest of its hold (from now to its expected end);
2. if a job ended, *compression*: every waiting job, in queue order (arrival by default, ids
   as strings at one arrival time, :meth:`EASY.queue_key <schedulers.easy.EASY.queue_key>`),
   has its reservation removed and is inserted again first fit while all the others stay in
   place. Its old window is free once it is removed, so its new start is never later (a job
   is never moved later), and at the same start its hosts are chosen again among those free
   over the window;
3. otherwise only the jobs submitted since the last pass are inserted, first fit in arrival
   order, without moving anyone;
4. a job whose reservation starts now starts now.

First fit is the earliest start at which ``res`` hosts stay free for the reserved duration,
on the hosts :meth:`EASY.select_hosts <schedulers.easy.EASY.select_hosts>` picks among those
free during the whole window (lowest ids by default)
(:meth:`~schedulers.core.backfilling.ReservationProfile.find_earliest_mask`).

These are the decisions of batsched 1.4.0's ``conservative_bf`` (``src/algo/conservative_bf.cpp``:
finished jobs removed from the schedule, then either every queued job removed and added first
fit in queue order when a job ended, or the released jobs added first fit; ``Schedule::
add_job_first_fit`` in ``src/schedule.cpp``; host choice ``BasicResourceSelector``, the lowest
ids of the free ones, ``src/locality.cpp``), with these facts of batsched kept:

* ``rjms_delay`` (default 5 s, batsched's ``--rjms_delay``) is added to every job's walltime in
  its reservation and in its hold once running (batsched adds it to the walltime of every job it
  reads, ``Workload::add_job``, ``src/json_workload.cpp``). A job killed at its walltime therefore
  always ends ``rjms_delay`` before its hold does, and its completion compresses.
* compression follows every completion, whether or not the job ended before its hold;
* batsched computes times as exact rationals of the doubles it reads (``mpq_rational``,
  ``src/exact_numbers.hpp``); so does the kept profile here, whose times are integers of
  ``2**-128`` s (:mod:`schedulers.core.exact_time`: exact for every double of at least about
  1e-23 s). Float sums round: with times in tenths or thousandths of a second, a window
  ``[now, now + walltime + rjms_delay)`` that ends where a reservation starts in decimal (a tie
  as common as with whole seconds when jobs end at their walltimes) is compared one way by the
  exact sums of the doubles and the other way by the float sums about half the time (random
  decimal ties ``a + b = c + d`` below 2e4 s), and the job starts or waits where batsched
  decided otherwise (``tests/fixtures/batsched_conservative/exact_sum.json``). The reservations the policy's
  readers get (:attr:`reservation`, :meth:`planned_reservations`) are in seconds (floats).

Where this differs from batsched: a job asking for more hosts than the platform has is rejected
by both, but batsched also rejects every job without walltime, which this policy runs (below).

Recompute variant (``recompute=true``), the policy's former algorithm, kept as an option since it
is faster under a long backlog (below) and compresses further: one scheduling pass (after every
Batsim message), over the shared reservation profile (:mod:`schedulers.core.backfilling`):

1. rebuild the profile from the running jobs: each holds its hosts until ``start_time +
   walltime`` (s) (:meth:`EASY.profile <schedulers.easy.EASY.profile>`);
2. walk the queue in queue order; each job gets the earliest start at which its ``res``
   hosts stay free for its walltime in the profile, i.e. the earliest start that delays no
   reservation made before it in this walk (first fit, :meth:`EASY.find_reservation
   <schedulers.easy.EASY.find_reservation>`), on the hosts :meth:`EASY.select_hosts
   <schedulers.easy.EASY.select_hosts>` picks;
3. a job whose earliest start is now starts now; any other job's window is reserved in the
   profile before the next job is placed.

Rebuilding at every pass recomputes every reservation from the running jobs and the jobs ahead
in the queue only, so no job is ever delayed by a job queued after it; when every job runs
exactly its walltime, every job starts when the first pass that saw it said. But it is not a
compression that only ever moves reservations earlier: when a job ends early, a job ahead in
the queue can move into time that a later job had reserved, which pushes that later job back
(``tests/test_conservative.py``, ``test_rebuild_can_push_a_later_reservation_back``; the classic
variant on the same jobs, ``test_classic_compression_never_pushes_a_job_back``). The head of the
queue never starts later than the reservation it had when it became head (runtimes <=
walltimes), as with EASY. ``rjms_delay`` does not apply (0).

Jobs without walltime (Batsim's ``-1``) are treated as EASY treats them (:mod:`schedulers.easy`);
while one waits or runs, every pass is the recompute walk (the kept schedule is rebuilt after,
as after a change of the usable hosts or with idle-host shutdown waking hosts):
running, they hold their hosts forever; waiting, they need hosts free forever from their start,
so their reservation is open-ended and no job placed after them may use those hosts after that
start. A job that gets no finite reservation (hosts held forever leave too few) gets ``start =
inf`` and bars every job without walltime placed after it (those cannot start either), while jobs
with a walltime may still start on any free host, as behind EASY's head in that case.

Option ``reservations`` (see :attr:`Conservative.option_docs`): only the first ``reservations``
waiting jobs in queue order get a reservation (kept, and compressed after a completion, in the
classic variant); the others start now if they fit without delaying any of them. ``1`` gives
EASY's decisions (with ``rjms_delay`` 0); the default is every job.

Cost of a classic pass: a submission costs one first fit and one reservation, ``O(S)`` on ``S``
slices; a completion compresses every waiting job, each left in place without a search when no
release since its last placement can have opened a window for it (:meth:`KeptReservations.
compress <schedulers.core.kept_reservations.KeptReservations.compress>`), else a removal, a
first fit and a reservation. Under a long backlog most jobs need the search, and a completion
pass costs ``O(Q S)`` for ``Q`` waiting jobs: far slower than EASY and than the recompute walk
(``benchmarks/results/conservative/README.md``). With ``reservations = R`` a completion compresses
the first ``R`` jobs only and the later ones are found through EASY's index of the queue
(:meth:`EASY.waiting <schedulers.easy.EASY.waiting>`, ``O(log Q)`` per job started): a pass costs ``O(R S)`` and a
backlogged run stays within a small factor of EASY (2.0x at 10,000 and 1.9x at 100,000 jobs with ``R = 8``, the
same README).

Cost of a recompute pass, and what keeps it down under a backlog (same decisions as the walk
above, checked against it in ``tests/test_policy_backlog.py``):

* the walk stops when no later job can start now. Once a job has been left waiting, the walk
  asks EASY's index of the queue (:meth:`EASY.waiting <schedulers.easy.EASY.waiting>`,
  :mod:`schedulers.core.waiting`) for the first job from its position on that fits now in the
  profile so far, with the profile's :meth:`~schedulers.core.backfilling.ReservationProfile.
  free_now_steps` as capacity; a profile only loses free time as the walk goes on, so the jobs
  before that one cannot start now and are placed without a search, and with no such job the
  walk is over (the reservations after it change no decision of this pass);
* a pass after which no job started or ended, no host changed and jobs only joined the end of
  the queue (submissions, most passes under a backlog) needs no walk at all while ``now`` is
  before the first slice start after the last walk's ``now``: every reservation is the same, the
  jobs the last walk did not reach still cannot start, and a new job can start only if it fits
  now in the profile that walk stopped in (:meth:`Conservative._nothing_starts`). Otherwise
  (a completion, usually before the walltime: the compression) the walk is redone from the head.

* the walk asks the index again after each reservation that starts before the free hosts' last
  free instant (it may lower their capacity), so it ends as soon as no later job can use them;
* each first fit of a walk starts from a lower bound of its start (:class:`_StartBounds`: the
  latest start found so far for a job with no more hosts and no longer walltime), not from now.

A walk still costs, for each job it places, a first-fit search and a reservation, ``O(S)`` each
at worst on ``S`` slices (``S`` grows by up to 2 per reservation), and after a completion the
walk reaches on average about 30 % of the queue on ``benchmarks/bench_backlog.py``'s workload
(jobs that fit the free hosts now are found far down the queue, and the jobs before them must be
placed to know whether they still fit). Between two completions about a third of the
reservations change (measured at 1,000 jobs), so keeping the reservations between passes and
repairing them would not make a completion pass much cheaper; conservative stays super-linear
under backlog (``benchmarks/results/backlog.md``). ``reservations`` bounds it: the jobs beyond the
limit are found through the same index, ``O(log queue)`` per job started.
"""

from __future__ import annotations

from dataclasses import dataclass
from bisect import bisect_left, bisect_right, insort
from typing import Any, Iterator

from .core.backfilling import INF, Reservation, ReservationProfile, job_duration
from .core.exact_time import to_seconds, to_units
from .core.kept_reservations import KeptReservations
from .core.limits import MAX_TIME, MAX_TIME_POWER
from .core.policy import Option, PolicyOptionError, option_unused
from .core.model import Job, JobState
from .core.waiting import walltime_key, walltime_limits
from .easy import EASY

#: Largest ``rjms_delay`` (s): the bound of every time of a workload
#: (:data:`schedulers.core.limits.MAX_TIME`, 2**33 s).
MAX_DELAY = MAX_TIME


@dataclass
class _Quiet:
    """What a pass whose walk stopped at the index search leaves for :meth:`Conservative.
    _nothing_starts`: the profile's ``free_now_steps`` where it stopped, the first slice start
    after the pass's ``now`` in any of its profiles (``guard``, s), the queue length then
    (``known``: later jobs are new), the job starts and completions so far, the available hosts
    and the pass's :attr:`~schedulers.easy.EASY.reservation`."""

    guard: float
    limits: list[float]
    caps: list[int]
    known: int
    changes: int
    available: int
    reservation: Reservation | None


class _StartBounds:
    """First fits during one walk, searched from a lower bound of the start instead of from now.

    A walk only adds reservations to its profile, so the earliest start of a job of ``res``
    hosts and ``dur`` seconds never moves earlier, and it is at least that of any job with no
    more hosts and no longer duration (a window that fits the larger job fits the smaller one):
    the bound of a job is the latest start found so far for such a job. Searched from there,
    :meth:`~schedulers.core.backfilling.ReservationProfile.find_earliest_mask` finds the first
    fit from now (no window starts before the bound; one starting inside a slice fits no better
    than one starting at the slice's start): the same start and hosts. Per ``res``, the starts
    found are kept as a staircase (durations increasing, starts increasing)."""

    __slots__ = ("_res", "_by_res")

    def __init__(self) -> None:
        self._res: list[int] = []  # the res values seen, increasing
        self._by_res: dict[int, tuple[list[float], list[float]]] = {}  # res -> (durations, starts)

    def bound(self, res: int, dur: float, now: float) -> float:
        best = now
        by_res = self._by_res
        for r in self._res:
            if r > res:
                break
            durs, starts = by_res[r]
            i = bisect_right(durs, dur) - 1
            if i >= 0 and starts[i] > best:
                best = starts[i]
        return best

    def add(self, res: int, dur: float, start: float) -> None:
        entry = self._by_res.get(res)
        if entry is None:
            insort(self._res, res)
            entry = self._by_res[res] = ([], [])
        durs, starts = entry
        i = bisect_right(durs, dur)
        if i > 0 and starts[i - 1] >= start:
            return  # a shorter job of this size already gives a bound as late
        j = i
        while j < len(durs) and starts[j] <= start:
            j += 1  # longer ones with earlier bounds: this one supersedes them
        if i > 0 and durs[i - 1] == dur:
            i -= 1
        durs[i:j] = [dur]
        starts[i:j] = [start]

    def first_fit(self, prof: ReservationProfile, job: Job, dur: float, choose) -> Reservation:
        """:meth:`EASY.find_reservation <schedulers.easy.EASY.find_reservation>` in ``prof``,
        which has only gained reservations since the last call."""
        res = job.res
        low = self.bound(res, dur, prof.now)
        found = None if low == INF else prof.find_earliest_mask(res, dur, low, choose)
        if found is None:
            self.add(res, dur, INF)
            return Reservation(job, INF, dur, prof.final_free_mask)
        self.add(res, dur, found[0])
        return Reservation(job, found[0], dur, found[1])


class Conservative(EASY):
    """Conservative backfilling: every queued job gets a reservation; none may be delayed.

    Args:
        options: ``{"reservations": n}`` (optional, see :attr:`option_docs`).

    Attributes:
        reservation_limit: the ``reservations`` option (None: every waiting job).
        backfilled_jobs: jobs started while a job ahead of them in the queue kept waiting
            (counted by :meth:`EASY.schedule <schedulers.easy.EASY.schedule>`).
        reservation: the reservation of the first job left waiting by the last pass (see
            :class:`~schedulers.easy.EASY`); :meth:`planned_reservations` gives them all.

    Raises:
        PolicyOptionError: ``reservations`` is not an integer >= 1.
    """

    name = "conservative"
    summary = ("Conservative backfilling: every waiting job gets a reservation, and a job may start early only "
               "when it delays none of them.")
    references = ("conservative",)

    option_docs = {
        "reservations": Option("how many waiting jobs, in queue order, get a reservation; the others start "
                               "only when they fit now without delaying any; 1 makes the same decisions "
                               "as easy (with rjms_delay 0); bounds a pass's cost under a long queue, "
                               "where the default compresses every waiting job at each completion "
                               "(schedulers.conservative, 'Cost of a classic pass')", type="integer >= 1",
                               default="every waiting job"),
        "rjms_delay": Option("seconds added to every job's walltime in its reservation and in a running "
                             "job's hold (batsched's --rjms_delay, applied to every job it reads); "
                             "refused with recompute, which adds none",
                             type=f"number >= 0 and <= 2**{MAX_TIME_POWER} (s)",
                             default="5 (batsched's)"),
        "recompute": Option("true: rebuild every reservation in queue order at each pass from the running "
                            "jobs (a compression that may push a later job back) instead of keeping them "
                            "and compressing each in turn", type="boolean", default="false"),
    }

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        limit = self.options.get("reservations")
        if limit is not None and (type(limit) is not int or limit < 1):
            raise PolicyOptionError(f"policy 'conservative': option 'reservations' must be an integer "
                                    f">= 1 (or absent: every job), got {limit!r}")
        recompute = self.options.get("recompute", False)
        if type(recompute) is not bool:
            raise PolicyOptionError(f"policy 'conservative': option 'recompute' must be true or false, "
                                    f"got {recompute!r}")
        delay = self.options.get("rjms_delay", 5.0)
        # (bounded as a workload's times are: past 2**33 s, start + walltime + delay loses the
        # seconds that tell a reservation's end from the next start, and jobs backfill into it)
        if type(delay) not in (int, float) or not 0 <= delay <= MAX_DELAY:
            raise PolicyOptionError(f"policy 'conservative': option 'rjms_delay' must be a number >= 0 and <= "
                                    f"{MAX_DELAY:.0f} (2**{MAX_TIME_POWER}) s, got {delay!r}")
        self.reservation_limit: int | None = limit
        if recompute:   # (the rebuild reserves walltimes as they are)
            option_unused(self.name, self.options, ("rjms_delay",), "recompute true (its rebuild adds no delay)")
        self.recompute: bool = recompute
        self.rjms_delay: float = 0.0 if recompute else float(delay)
        self._delay = to_units(self.rjms_delay)  # in the kept profile's exact units
        self._quiet: _Quiet | None = None  # what the last pass left (see _nothing_starts)
        self._stop: tuple[list[float], list[int], float] | None = None  # set by _walk
        self._changes = 0  # job starts and completions so far
        self._kept: KeptReservations | None = None  # classic: the kept schedule (None: rebuilt)
        self._ended: list[str] = []  # classic: jobs ended since the last pass
        self._new: list[Job] = []  # classic: jobs queued since the last pass, in arrival order
        self._no_walltime: set[str] = set()  # queued or running jobs without walltime

    # ------------------------------------------------------------------- classic (kept) variant
    def _duration(self, job: Job) -> int | float:
        """Reserved duration of ``job`` in the kept profile's exact units (:mod:`schedulers.core.
        exact_time`): walltime + ``rjms_delay``, ``inf`` without walltime."""
        return to_units(job.walltime) + self._delay if job.has_walltime else INF

    @staticmethod
    def _in_seconds(r: Reservation) -> Reservation:
        """A kept reservation (times in exact units) in seconds, as the policy's readers get it."""
        return Reservation(r.job, to_seconds(r.start), to_seconds(r.duration), r.hosts_mask)

    @classmethod
    def _shown(cls, r: Reservation | None) -> Reservation | None:
        """:meth:`_in_seconds` of a kept reservation, or None."""
        return None if r is None else cls._in_seconds(r)

    def _classic_applies(self) -> bool:
        """Kept reservations need the plain profile (running jobs until their walltimes, the
        available hosts free now), no host waking up and every queued or running job with a
        walltime; otherwise the pass is a rebuild (:meth:`EASY.schedule`, the walk)."""
        return not self._no_walltime and self._plain_profile and not self.waking_hosts()

    def _same_hosts(self, kept: KeptReservations) -> bool:
        """The kept profile still describes the hosts: the usable ones (available or running a
        job) are its hosts, and none it has free now is busy (a host that failed or was
        switched off changes the first, :meth:`KeptReservations.overdue
        <schedulers.core.kept_reservations.KeptReservations.overdue>` catches the second)."""
        usable = self.available_mask
        for _, hosts in kept.holds.values():
            usable |= hosts
        return (usable == kept.prof.hosts_mask
                and not kept.prof.free_mask_at(to_units(self.now)) & ~self.available_mask)

    def _rebuild(self) -> KeptReservations:
        """A kept schedule holding the running jobs (from their real starts, for walltime +
        ``rjms_delay``), no reservation yet; its times are in exact units (module docstring)."""
        busy = 0
        for job in self.running.values():
            busy |= self.running_mask(job)
        now = to_units(self.now)
        kept = KeptReservations(ReservationProfile(now, self.available_mask | busy))
        for job in self.running.values():
            assert job.start_time is not None  # a running job has started
            end = to_units(job.start_time) + self._duration(job)
            kept.hold(job.id, now, max(end - now, 0), self.running_mask(job))
        return kept

    def schedule(self) -> None:
        """One pass. ``recompute``: :meth:`EASY.schedule` with :meth:`backfill_pass` (the walk).
        Classic (module docstring): the kept schedule loses the rest of each ended job's hold;
        after a completion every waiting job is compressed in queue order
        (:meth:`KeptReservations.compress <schedulers.core.kept_reservations.KeptReservations.
        compress>`), else only the new jobs are inserted first fit in arrival order; a job
        whose start is now starts. The kept profile's times are exact (:meth:`_duration`)."""
        if self.recompute:
            super().schedule()
            return
        ended, self._ended = self._ended, []
        new, self._new = self._new, []
        self.reservation = None
        if self.dynamic_queue_order and len(self._q) > self._front:
            self._resort()
        kept = self._kept
        if not self._classic_applies():
            self._kept = None
            super().schedule()
            return
        now = to_units(self.now)
        compress = bool(ended)
        if kept is not None:
            kept.advance(now)
            for job_id in ended:
                kept.end(job_id)
            if kept.overdue(now) or not self._same_hosts(kept):
                kept = None
        if kept is None:
            kept = self._kept = self._rebuild()
            compress = True
        started = self._classic_pass(kept, compress, new)
        if started:
            if started[-1] != len(started) - 1:
                self.backfilled_jobs += sum(1 for j, k in enumerate(started) if k != j)
            self._drop(started)

    def _classic_pass(self, kept: KeptReservations, compress: bool, new: list[Job]) -> list[int]:
        """Compress (or insert the ``new`` jobs), start the jobs whose start is now; returns
        their queue positions, ascending."""
        now = to_units(self.now)
        queue = self.queue
        limit = self.reservation_limit
        started: list[int] = []
        if not compress and limit is None:
            ids = set()
            for job in new:
                if job.state is not JobState.SUBMITTED or job.id in kept.reservations:
                    continue  # rejected
                r = kept.insert(job, self._duration(job), self.host_choice(job))
                if r.start == now:
                    self.start_job(job, r.hosts_mask)
                    ids.add(job.id)
            k = len(queue)
            while ids:  # new jobs are near the end of the queue (at it in arrival order)
                k -= 1
                if queue[k].id in ids:
                    ids.discard(queue[k].id)
                    started.append(k)
            started.reverse()
            self._set_reservation(kept, queue, started)
            return started
        left = len(queue) if limit is None else limit
        k = 0
        for k, job in enumerate(queue):
            if left <= 0:
                break
            dur = self._duration(job)
            choose = self.host_choice(job)
            if compress:
                r = kept.compress(job, dur, choose)
            else:
                r = kept.reservations.get(job.id) or kept.insert(job, dur, choose)
            if r.start == now:
                self.start_job(job, r.hosts_mask)
                started.append(k)
            elif r.start != INF:
                left -= 1
                if self.reservation is None:
                    self.reservation = self._shown(r)
        else:
            return started
        # beyond the limit: jobs start now when they fit without delaying a reservation
        prof = kept.prof
        if limit is not None and len(kept.reservations) > limit:  # jobs moved behind the limit by the queue order
            for job in queue[k:]:
                kept.drop(job.id)
        for k2, r in self._walk_starts(prof, k, False, True, self.rjms_delay,
                                       lambda job, dur, hosts: kept.hold(job.id, now, dur, hosts), units=True):
            self.start_job(r.job, r.hosts_mask)
            started.append(k2)
        return started

    def _set_reservation(self, kept: KeptReservations, queue: list[Job], started: list[int]) -> None:
        """:attr:`reservation`: that of the first queued job not started by this pass."""
        k = 0
        for s in started:
            if s != k:
                break
            k += 1
        if k < len(queue):
            self.reservation = self._shown(kept.reservations.get(queue[k].id))

    def backfill_pass(self) -> list[int]:
        """One conservative pass (module docstring): start the jobs whose earliest start is now.
        Returns their queue positions."""
        if self._nothing_starts():
            return []
        self._quiet = None
        started: list[int] = []
        prof = self.profile()
        limits, _ = prof.free_now_steps()
        first_end = limits[0] if limits else INF  # the running jobs' first expected end
        self._stop = None
        for k, r in self._walk(prof, stop_when_full=True):
            if r.start == self.now:
                self.start_job(r.job, r.hosts_mask)
                started.append(k)
            elif self.reservation is None:
                self.reservation = r
        if self._stop is not None and self.reservation_limit is None and self._plain_profile \
                and not self.waking_hosts():
            limits, caps, guard = self._stop
            self._quiet = _Quiet(min(guard, first_end), limits, caps, len(self.queue) - len(started),
                                 self._changes, self.available_mask, self.reservation)
        return started

    def _nothing_starts(self) -> bool:
        """Whether this pass would start nothing and leave the same reservations as the last one,
        known without a walk: the last walk stopped because no job from some position ``k`` on
        fit now (the index search of :meth:`_walk`); since then no job started or ended, the
        hosts did not change, jobs only joined the end of the queue, and ``now`` is before the
        first time (``guard``) at which any slice of the walk's profiles began after the walk's
        ``now`` (a running job's end, a reservation's start or end). Then every reservation
        of the walk is the same at this ``now`` (each profile's first slice still reaches past
        it), the jobs from ``k`` on still do not fit now (a window from a later ``now`` crosses
        more slices), and a new job can start only if it fits now in the profile the walk
        stopped in (its ``free_now_steps`` at this ``now``). Restores :attr:`reservation`."""
        q = self._quiet
        if q is None:
            return False
        now = self.now
        if (q.changes != self._changes or now >= q.guard or q.available != self.available_mask
                or self.waking_hosts()):
            return False
        queue = self.queue
        if q.reservation is None and len(queue) > q.known:
            return False  # the first new job would be the first one left waiting: placed by a walk
        limits, caps = q.limits, q.caps
        for job in queue[q.known:]:
            if job.res <= caps[bisect_left(limits, now + walltime_key(job))]:
                return False  # it may start: a full walk decides
        q.known = len(queue)
        self.reservation = q.reservation
        return True

    def on_job_submitted(self, job: Job) -> None:
        """EASY's queueing; a job queued ahead of a waiting job ends the last pass's shortcut
        (:meth:`_nothing_starts`)."""
        super().on_job_submitted(job)
        if job.state is JobState.SUBMITTED:
            self._new.append(job)
            if not job.has_walltime:
                self._no_walltime.add(job.id)
        if self._quiet is not None and self.queue and self.queue[-1] is not job:
            self._quiet = None

    def on_job_completed(self, job: Job) -> None:
        """EASY's bookkeeping; the classic variant frees the rest of the job's hold at the
        next pass."""
        super().on_job_completed(job)
        self._changes += 1
        self._ended.append(job.id)
        self._no_walltime.discard(job.id)

    def start_job(self, job: Job, alloc: int) -> None:
        super().start_job(job, alloc)
        self._changes += 1

    @property
    def _plain_profile(self) -> bool:
        """The profile is EASY's own (running jobs until their walltimes, hosts free now the
        available ones), the condition of :meth:`_nothing_starts`."""
        cls = type(self)
        return (cls.busy_until is EASY.busy_until and cls.free_now_mask is EASY.free_now_mask
                and cls.profile is EASY.profile and not self.dynamic_queue_order)

    def head_reservation(self) -> Reservation | None:
        """The queue head's reservation: in the classic variant the kept one (the head never
        starts later, runtimes <= walltimes + ``rjms_delay``), else :meth:`EASY.head_reservation
        <schedulers.easy.EASY.head_reservation>`."""
        kept = self._kept
        if not self.recompute and kept is not None and len(self._q) > self._front:
            r = kept.reservations.get(self._q[self._front].id)
            if r is not None:
                return self._shown(r)
        return super().head_reservation()

    def planned_reservations(self) -> list[Reservation]:
        """The reservations a pass would give the waiting jobs now, in queue order: every job (up
        to the ``reservations`` option), with its start (s; ``inf`` when none) and hosts. Starts
        are later than now right after a pass. Classic variant: the kept reservations."""
        kept = self._kept
        if not self.recompute and kept is not None:
            res = kept.reservations
            return [self._in_seconds(res[j.id]) for j in self.queue if j.id in res]
        return [r for _, r in self._walk(self.profile(), stop_when_full=False)]

    def _walk(self, prof: ReservationProfile, stop_when_full: bool) -> Iterator[tuple[int, Reservation]]:
        """Yield ``(queue position, Reservation)`` for the jobs placed in ``prof``, in queue order
        (jobs beyond the reservation limit only when they start now)."""
        now = prof.now
        queue = self.queue
        left = self.reservation_limit if self.reservation_limit is not None else len(queue)
        barred = False  # a job has no finite reservation: no job without walltime may start
        waiting = self.waiting() if stop_when_full else None
        check_from = 0  # queue position from which the index is asked again
        waited = False  # a job was left waiting (the pass's `reservation` is set)
        guard = INF  # the first reservation start or end after now (see _nothing_starts)
        horizon = INF  # no window ending after it fits now (caps of the last search)
        bounds = _StartBounds() if type(self).find_reservation is EASY.find_reservation else None
        for k, job in enumerate(queue):
            if left <= 0:  # beyond the limit: only starts now that delay no reservation
                yield from self._walk_starts(prof, k, barred, stop_when_full)
                return
            if stop_when_full:
                if not prof.free_mask_at(now):
                    return  # no host free now: no later job can start
                if waited and k >= check_from:
                    # the first job from k on that fits now in this profile; the jobs before it
                    # do not, nor in any later profile of the walk (which only loses free time):
                    # they are placed without a search, and with no such job the walk is over
                    limits, caps = prof.free_now_steps()
                    s = waiting.first(waiting.slot(job), now, limits, caps)  # type: ignore[union-attr]
                    if s < 0:
                        self._stop = (limits, caps, guard)
                        return
                    check_from = self._position(waiting, s) + 1  # type: ignore[arg-type]
                    # a reservation that starts before no host free now stays free (the last
                    # limit, where the caps end at 0) lowers the caps: the search is asked again
                    horizon = limits[-1] if limits and caps[-1] == 0 else INF
            dur = job_duration(job)
            if barred and dur == INF:
                r = Reservation(job, INF, dur, prof.final_free_mask)
            elif bounds is not None:
                r = bounds.first_fit(prof, job, dur, self.host_choice(job))
            else:
                r = self.find_reservation(prof, job)
            if r.start == INF:
                barred = True
            elif r.start == now:
                prof.hold_mask(now, dur, r.hosts_mask)
            else:
                prof.reserve_mask(r.start, dur, r.hosts_mask)
            if r.start < horizon:
                check_from = k + 1
            if r.start != now:
                left -= 1
                waited = True
                if r.start < guard:
                    guard = r.start
            elif now + dur < guard:
                guard = now + dur
            yield k, r
        if stop_when_full:
            self._stop = (*prof.free_now_steps(), guard)  # the end of the queue: nothing after it

    def _walk_starts(self, prof: ReservationProfile, k: int, barred: bool, stop_when_full: bool,
                     extra: float = 0.0, hold: Any = None, units: bool = False) -> Iterator[tuple[int, Reservation]]:
        """The jobs from queue position ``k`` on that fit now in ``prof`` for their walltime plus
        ``extra`` (s; the classic variant's ``rjms_delay``), each held in it before the next is
        looked at (by ``hold(job, duration, hosts)`` when given, else in ``prof``), found through
        :meth:`EASY.waiting <schedulers.easy.EASY.waiting>` with the profile's
        :meth:`~schedulers.core.backfilling.ReservationProfile.free_now_steps` as capacity (its
        limits as limits on the walltime, :func:`~schedulers.core.waiting.walltime_limits`: the
        index may only return more candidates, each checked with :meth:`~schedulers.core.
        backfilling.ReservationProfile.fits_now_mask`): the jobs a scan of the queue with
        ``fits_now_mask`` would start, as every start only lowers the capacity. ``units``: the
        profile's times are the classic variant's exact units (:meth:`_duration`, the durations
        held; the index is searched in seconds, its limits rounded with their margin)."""
        now = to_seconds(prof.now) if units else prof.now   # (the index's times are in seconds)

        def capacity() -> tuple[list[float], list[int]]:
            limits, caps = prof.free_now_steps()
            return walltime_limits([to_seconds(t) for t in limits] if units else limits, now, extra=extra), caps

        head = self.queue[k]
        waiting = self.waiting()
        s = waiting.slot(head)
        limits, caps = capacity()
        while not (stop_when_full and caps[0] == 0):  # else no host free now: no job can start
            s = waiting.first(s, now, limits, caps)
            if s < 0:
                return
            job = waiting.job(s)
            dur = self._duration(job) if units else job_duration(job) + extra
            hosts = None if barred and dur == INF else prof.fits_now_mask(job.res, dur, self.host_choice(job))
            if hosts is not None:
                if hold is None:
                    prof.hold_mask(prof.now, dur, hosts)
                else:
                    hold(job, dur, hosts)
                yield self._position(waiting, s), Reservation(job, now, to_seconds(dur) if units else dur, hosts)
                limits, caps = capacity()
            s += 1
