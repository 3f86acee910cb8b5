"""HEFT (Heterogeneous Earliest Finish Time) for independent batch jobs, applied online.

Sources:
    H. Topcuoglu, S. Hariri and M.-Y. Wu, "Performance-effective and low-complexity task
    scheduling for heterogeneous computing", IEEE TPDS 13(3):260-274, 2002 (HEFT: upward rank,
    then each task, by decreasing rank, on the processor giving its earliest finish time, with
    insertion into idle slots between tasks already scheduled).
    The green-heuristic paper (``../shared/papers/004_256d972a5ab7dee1.txt``, section 3.2,
    L112-120): eq. 1 (L116) ``rank(i) = w_i + max_{j in succ(i)} (c_ij + rank(j))``, the two
    phases "prioritisation" (decreasing rank) and "resource selection" (the resource with the
    smallest expected execution time for the job), L120.

Batch jobs have no successors, so eq. 1 reduces to ``rank(i) = mean_w(i)``: the job's mean
computation cost over the hosts. Costs come from walltimes, read as follows.

**Walltime on hosts of different speeds.** A job's walltime (s) is read as its run time on the
*slowest* host of the platform (speed ``s_min``, pstate 0): the one bound valid on every host, as
Batsim kills a job at ``start + walltime`` whatever hosts it runs on. On hosts ``H`` the expected
run time is ``walltime * s_min / min_{h in H} speed(h)`` (the slowest host of a parallel job sets
its pace, as in Batsim's lockstep). ``mean_w(i)`` is ``walltime * mean_h(s_min / speed(h))`` over
every host. In the plan (the reservation profile) a job holds its hosts for its full walltime,
running or waiting: delay phases do not run faster on faster hosts and Batsim's kill is the only
certain bound, so the plan never counts on a host before it is surely free. On a homogeneous
platform (Nantes econome) every factor is 1 and HEFT is the list order below with lowest-id
placement.

**Online.** HEFT is an offline list scheduler; here the list is the queue. At each scheduling pass
(after every Batsim message), every waiting job is ranked (its rank depends on the job and the
platform only, so it is computed once, at submission; ties: arrival order, where the paper draws
at random, L120), the reservation profile is rebuilt from the running jobs, and the jobs are
placed in decreasing rank one after the other, each at its earliest finish time among the host
speed classes (for each speed ``s`` of the platform, the earliest window of ``walltime`` on ``res``
hosts of speed ``>= s``; finish = start + expected run time at ``s``; ties to the faster class),
on the fastest hosts free during that window (then the lowest ids), inserted in any idle slot of
the profile (HEFT's insertion policy). Jobs placed at ``now`` start; the other placements only
hold their slot for the rest of this pass (recomputed at the next one). So HEFT is conservative
backfilling in decreasing-rank order with earliest-finish host choice
(:mod:`schedulers.conservative` places in arrival order on the earliest start).

Jobs without walltime have rank ``inf`` (placed first) and hold hosts forever as in
:mod:`schedulers.easy`. Cost of a pass: one profile build, then per waiting job and speed class a
first-fit search and one reservation, ``O(S)`` each on ``S`` slices, until no later job can start
now.

**Early stop (same decisions as the full pass).** The placements after the first job left
waiting only hold their slots for the rest of the pass; what the pass decides is which jobs start
now (and :attr:`~schedulers.easy.EASY.reservation`, the first job left waiting). The profile only
loses free time as the pass goes on, so a job that cannot start now in the profile so far cannot
start later in the pass either. A job can start now only if ``res`` hosts stay free from now for
its slot, at least ``walltime * slot_scale()`` seconds (:meth:`HEFT.slot_scale`: 1 for HEFT,
``1 - Δ/100`` for :mod:`schedulers.green`'s green-heft): ``res <= cap(walltime * slot_scale())``
with the profile's :meth:`~schedulers.core.backfilling.ReservationProfile.free_now_steps` as
capacity, on every host (a speed class only has fewer). Once the reservation is set, the pass
asks EASY's index of the queue (:meth:`EASY.waiting <schedulers.easy.EASY.waiting>`,
:mod:`schedulers.core.waiting`) for the first later job passing that test; with none, it stops.
The jobs before that one are placed without asking again, unless a placement starts before the
last instant a host free now stays free (it may lower the capacity). The same shape as the walk of
:mod:`schedulers.conservative`'s recompute variant; ``tests/test_heft_early_stop.py`` checks the
decisions against the full pass.

**Reservation depth** (option ``reservations``, default: every waiting job). HEFT's list
schedule places every waiting job at every pass; under a long backlog the jobs that can start now
(short, small, ranked last) sit deep in the queue and every job ranked before them must be placed
first, so a pass costs ``O(Q S)`` for ``Q`` waiting jobs and a run grows as the square of the
backlog (``benchmarks/results/conservative/README.md``). With ``reservations = R`` only the first
``R`` jobs in decreasing rank that do not start now are placed (they hold their slots for the rest
of the pass); each later job starts now when HEFT would place it now in what is left, and holds
nothing otherwise (found through EASY's index of the queue, ``O(log Q)`` per job started). So
no later job delays the ``R`` placed ones, as in EASY (``R = 1``: EASY's rule, in HEFT's order and
host choice) or :mod:`schedulers.conservative`'s option of the same name; the pass costs
``O(R S)``: with ``R = 8``, about twice EASY's engine time at 10,000 and at 100,000 backlogged
jobs (``benchmarks/results/conservative/README.md``). This bounds the plan as batch schedulers
bound backfilling (Maui's ``RESERVATIONDEPTH``, Grid Engine's ``max_reservation``, Slurm's
``bf_max_job_test``); it is not in Topcuoglu et al. or in 004.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .core.backfilling import INF, Reservation, ReservationProfile, job_duration, lowest_bits
from .core.model import Job, Platform
from .core.policy import Option, PolicyOptionError
from .core.waiting import QueueScan, WaitingIndex, walltime_limits
from .easy import EASY

RESERVATIONS_DOC = Option(
    "how many waiting jobs, in decreasing rank, are placed (hold a slot in the plan of the pass); the "
    "others start only when HEFT would place them now, in what the placed jobs leave, and hold no slot; "
    "bounds a pass's cost under a long queue (schedulers.heft, 'Reservation depth')",
    type="integer >= 1", default="every waiting job (HEFT's list schedule)")


class HEFT(EASY):
    """HEFT for independent batch jobs, applied at every pass (see the module docstring).

    Options: ``reservations`` (:attr:`option_docs`). Needs host speeds (:attr:`Policy.needs_speeds`).

    Attributes:
        reservation_limit: the ``reservations`` option (None: every waiting job is placed).
        speed_min: the slowest host's pstate-0 speed (flops/s): walltimes are run times there.
        classes: ``[(speed, mask), ...]`` by decreasing speed: the hosts of speed ``>= speed``.
    """

    name = "heft"
    summary = ("HEFT for batch jobs: at each pass the waiting jobs, by decreasing mean cost, are placed where "
               "they finish earliest, in any idle slot.")
    references: ClassVar[tuple[str, ...]] = ("heft",)
    needs_speeds = True
    option_docs: ClassVar[dict[str, str]] = {"reservations": RESERVATIONS_DOC}

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        limit = self.options.get("reservations")
        if limit is not None and (type(limit) is not int or limit < 1):
            raise PolicyOptionError(f"policy {self.name!r}: option 'reservations' must be an integer >= 1 "
                                    f"(or absent: every job), got {limit!r}")
        self.reservation_limit: int | None = limit
        self.speed_min = 1.0
        self.classes: list[tuple[float, int]] = []
        self._speed: list[float] = []
        self._mean_factor = 1.0
        # during a pass: its profile and, per (res, class mask), the first time res hosts of the
        # class are free in it (ReservationProfile.first_slice_with; it only moves later)
        self._pass_profile: ReservationProfile | None = None
        self._lows: dict[tuple[int, int], float] = {}

    def on_simulation_begins(self, platform: Platform) -> None:
        """Read every host's pstate-0 speed (flops/s) and build the speed classes."""
        self._speed = [float(h.speeds[0]) for h in platform.hosts]
        if not self._speed:
            return
        self.speed_min = min(self._speed)
        self.classes = []
        for s in sorted(set(self._speed), reverse=True):
            mask = sum(1 << i for i, v in enumerate(self._speed) if v >= s)
            self.classes.append((s, mask))
        self._mean_factor = sum(self.speed_min / v for v in self._speed) / len(self._speed)

    # ------------------------------------------------------------------------------ eq. 1
    def run_time(self, job: Job, speed: float) -> float:
        """Expected run time (s) of ``job`` on hosts whose slowest has ``speed`` (flops/s):
        ``walltime * speed_min / speed``; ``inf`` without walltime."""
        return job_duration(job) * (self.speed_min / speed)

    def rank(self, job: Job) -> float:
        """``rank(i)`` of 004 eq. 1 (L116) for a job without successors: its mean computation
        cost (s) over the hosts, ``walltime * mean_h(speed_min / speed(h))``."""
        return job_duration(job) * self._mean_factor

    def queue_key(self, job: Job) -> Any:
        """Decreasing rank (ties: arrival order, added by :class:`EASY`)."""
        return -self.rank(job)

    # ----------------------------------------------------------------------------- placement
    def _fastest_first(self, candidates: int, res: int) -> int:
        ids = [i for i in range(candidates.bit_length()) if candidates >> i & 1]
        ids.sort(key=lambda i: (-self._speed[i], i))
        return sum(1 << i for i in ids[:res])

    def hosts_to_wake(self, asleep: int, n: int) -> int:
        """The ``n`` sleeping hosts (bit mask, among ``asleep``) idle-host shutdown wakes: the
        fastest (pstate 0), then the lowest ids, as HEFT places (:meth:`find_reservation`)."""
        return self._fastest_first(asleep, n) if len(self.classes) > 1 else lowest_bits(asleep, n)

    def find_reservation(self, prof: ReservationProfile, job: Job, dur: float | None = None,
                         not_before: float | None = None) -> Reservation:
        """Earliest-finish placement of ``job`` in ``prof`` (not changed), over the speed classes.

        Args:
            dur: length (s) of the slot to find; default the walltime (``inf`` without).
                :mod:`schedulers.green` asks for a shorter one (004 eq. 4).
            not_before: a time (s) no slot of ``dur`` seconds of any class starts before, known
                to the caller (:class:`schedulers.green.GreenHEFT`: where a shorter slot starts
                on a platform of one speed): the searches start there, with the same result.

        Returns:
            A :class:`Reservation` of ``dur`` seconds from its start (s) on ``job.res`` hosts;
            start ``inf`` (hosts: ``prof.final_free_mask``) when no class ever has enough free
            hosts.
        """
        if dur is None:
            dur = job_duration(job)
        choose = self._fastest_first if len(self.classes) > 1 else None
        best: tuple[float, float, int] | None = None  # (finish, start, hosts)
        lows = self._lows if prof is self._pass_profile else None
        res = job.res
        for speed, within in self.classes or [(1.0, -1)]:
            if lows is None:
                found = prof.find_earliest_mask(res, dur, not_before, choose=choose, within=within)
            else:  # during the pass: searched from the first time res hosts of the class are free
                low = prof.first_slice_with(res, lows.get((res, within)), within)
                lows[(res, within)] = low
                if not_before is not None and not_before > low:
                    low = not_before
                found = None if low == INF else prof.find_earliest_mask(res, dur, low, choose, within)
            if found is None:
                continue
            finish = found[0] + self.run_time(job, speed)
            if best is None or finish < best[0]:
                best = (finish, found[0], found[1])
        if best is None:
            return Reservation(job, INF, dur, prof.final_free_mask)
        return Reservation(job, best[1], dur, best[2])

    def slot_scale(self) -> float:
        """A lower bound of ``slot / walltime`` over every slot :meth:`find_reservation` may give
        a job (s/s, in ``(0, 1]``): 1, HEFT places each job with its walltime. The early stop of
        :meth:`backfill_pass` (module docstring) reads it; a subclass that places jobs in shorter
        slots (:class:`schedulers.green.GreenHEFT`) returns its bound."""
        return 1.0

    def backfill_pass(self) -> list[int]:
        """Place the queue in decreasing rank (module docstring); start the jobs placed now.
        Returns their queue positions; :attr:`reservation` is the first job left waiting.

        Stops as soon as no later job can start now (module docstring, "Early stop"): the same
        starts and the same :attr:`reservation` as placing the whole queue."""
        prof = self.profile()
        started: list[int] = []
        queue = self.queue
        waiting = self.waiting()
        self._pass_profile = prof
        self._lows = {}
        try:
            self._place_queue(prof, queue, waiting, started)
        finally:
            self._pass_profile = None
        return started

    def _place_queue(self, prof: ReservationProfile, queue: list[Job], waiting: WaitingIndex | QueueScan,
                     started: list[int]) -> None:
        """The loop of :meth:`backfill_pass`: appends the positions of the jobs started."""
        now = prof.now
        barred = False  # a job got no finite slot: jobs without walltime cannot be placed
        left = self.reservation_limit if self.reservation_limit is not None else len(queue)
        scale = self.slot_scale()
        check_from = 0  # queue position from which the index is asked again
        horizon = INF  # a placement starting from it on cannot lower the capacity searched with
        for k, job in enumerate(queue):
            if not prof.free_mask_at(now):
                break  # no host free now: no later job can start
            if left <= 0:  # beyond the reservation depth: starts now only, no slot held
                self._starts_beyond(prof, k, barred, waiting, started)
                break
            if self.reservation is not None and k >= check_from:
                limits, caps = prof.free_now_steps()
                s = waiting.first(waiting.slot(job), now, walltime_limits(limits, now, scale), caps)
                if s < 0:
                    break  # no job from k on can start now, in this profile or a later one
                check_from = self._position(waiting, s) + 1
                horizon = limits[-1] if limits and caps[-1] == 0 else INF
            if barred and not job.has_walltime:
                continue
            r = self.find_reservation(prof, job)
            if r.start == INF:
                barred = True
                left -= 1
                continue
            prof.hold_mask(r.start, r.duration, r.hosts_mask)
            if r.start < horizon:
                check_from = k + 1
            if r.start == now:
                self.start_job(job, r.hosts_mask)
                started.append(k)
                continue
            left -= 1
            if self.reservation is None:
                self.reservation = r

    def _starts_beyond(self, prof: ReservationProfile, k: int, barred: bool, waiting: WaitingIndex | QueueScan,
                       started: list[int]) -> None:
        """The jobs from queue position ``k`` on (beyond the ``reservations`` depth) that HEFT would
        place now in ``prof``: each started (its slot held before the next is looked at); the
        others hold nothing. Candidates come from :meth:`EASY.waiting
        <schedulers.easy.EASY.waiting>` with ``prof``'s free-now capacity (a job placed now fits
        now), ``O(log queue)`` each; appends the positions of the jobs started."""
        now = prof.now
        scale = self.slot_scale()
        s = waiting.slot(self.queue[k])
        while prof.free_mask_at(now):
            limits, caps = prof.free_now_steps()
            s = waiting.first(s, now, walltime_limits(limits, now, scale), caps)
            if s < 0:
                return
            job = waiting.job(s)
            if not (barred and not job.has_walltime):
                r = self.find_reservation(prof, job)
                if r.start == now:
                    prof.hold_mask(now, r.duration, r.hosts_mask)
                    self.start_job(job, r.hosts_mask)
                    started.append(self._position(waiting, s))
            s += 1
