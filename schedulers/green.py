"""Green overlap heuristic on EASY and HEFT (Pillon et al.): a job may fill a gap up to Δ % too short.

Source: ``../shared/papers/004_256d972a5ab7dee1.txt`` (``L<n>`` = line of that file), sections 3.3
and 4.1: a job ``i`` fits the gap between the end ``t_j^F`` of one job and the start ``t_k^I`` of
the next when ``t_i <= t_k^I - t_j^F`` (eq. 3, L132); the heuristic adds the overlap rate Δ (%):
``t_i <= (t_k^I - t_j^F) + Δ * t_i / 100`` (eq. 4, L136), so job ``i`` may overlap job ``k`` on
the same hosts for up to Δ % of its own length (Fig. 4, L145). Δ may be set per gap from the CPU
load of the running job (Fig. 5, L155-160: CPU-bound 5 %, I/O-bound 30 %).

Eq. 4 is used in the equivalent form ``t_j^F + t_i * (1 - Δ/100) <= t_k^I``: with Δ = 0 it is the
very float test of the plain policy (``t_i * 1.0 == t_i``), so Δ = 0 makes the same decisions and
byte-identical output files. Where it plugs in:

* ``green-easy`` (:class:`GreenEASY`): EASY's backfilling test of step 3 (:meth:`EASY.fits_gap
  <schedulers.easy.EASY.fits_gap>`: ``now + walltime <= head's reserved start``, the gap being
  ``[now, reserved start)``) becomes eq. 4; EASY's index of the queue skips the jobs whose
  walltime exceeds the gap over ``1 - delta/100`` (:meth:`GreenEASY.gap_limit`), so a pass
  under a backlog costs what EASY's does.
* ``green-heft`` (:class:`GreenHEFT`): HEFT's insertion search (:meth:`HEFT.find_reservation
  <schedulers.heft.HEFT.find_reservation>`) places each job with its walltime, and also looks for
  a free slot of ``walltime * (1 - Δ/100)``; when that one starts earlier, the job takes it (it
  fits the gap only thanks to Δ) and will overlap the job planned after it.

What an overlap does: a job admitted only thanks to Δ (it needs more than the gap) holds its hosts
in the plan until the gap's end (green-easy: the head's reserved start; green-heft: the end of
its shortened slot, ``start + walltime * (1 - Δ/100)``); from then on it is *overlapping*: its hosts count as free for the next
job (:meth:`EASY.busy_until <schedulers.easy.EASY.busy_until>` returns None,
:meth:`EASY.free_now_mask <schedulers.easy.EASY.free_now_mask>` includes them, unless another,
non-overlapping job holds them), which may start there while it still runs. Both then run under
Batsim's compute sharing (``--enable-compute-sharing``, required when Δ > 0): on the 16-core Nantes
hosts each one-host part keeps one core, so neither slows down and the host's power rises with
its busy cores. A REQUESTED_CALL at the gap's end makes sure a pass happens then. All hosts of the
overlapping job become free at the gap's end (not only those the next job reserved).

Options (``option_docs``): ``delta`` (%, default 10), ``per_gap`` (default false) and
``delta_min`` (%, default 0). With ``per_gap``, the Δ a job may overlap by is set from the CPU load
``L`` (%, the workload's ``cpu_load`` job field, 100 when absent) of the job that runs during the
overlap (the one admitted into the gap, still running when the next starts on its hosts):
``Δ = delta - (delta - delta_min) * L / 100`` (Fig. 5: a CPU-bound job overlaps least, an
I/O-bound one most; the paper gives no formula, this linear one is ours).
"""

from __future__ import annotations

from typing import Any, ClassVar

from .core.backfilling import INF, Reservation, ReservationProfile
from .core.model import Job, Platform, PolicyInputError
from .core.policy import Option, PolicyOptionError, option_flag, option_number, option_unused
from .easy import EASY
from .heft import HEFT

OPTION_DOCS: dict[str, str] = {
    "delta": Option("overlap rate Δ of eq. 4, in % of the job's walltime", type="number in [0, 100)",
                    default="10"),
    "per_gap": Option("take Δ from the CPU load of the job running during the overlap (Fig. 5): delta at "
                      "0 % load down to delta_min at 100 %", type="true or false", default="false"),
    "delta_min": Option("Δ (%) of a job at 100 % CPU load when per_gap is true (refused without it); at "
                        "most delta",
                        type="number in [0, 100)", default="0"),
}


class _Overlap:
    """Δ options and overlap bookkeeping shared by :class:`GreenEASY` and :class:`GreenHEFT`."""

    name: ClassVar[str]
    option_docs: ClassVar[dict[str, str]] = OPTION_DOCS

    def _read_options(self, options: dict[str, Any]) -> None:
        self.delta = option_number(self.name, options, "delta", 10.0, low=0.0, high=100.0, high_open=True)
        self.delta_min = option_number(self.name, options, "delta_min", 0.0, low=0.0, high=100.0, high_open=True)
        per_gap = option_flag(self.name, options, "per_gap")
        if not per_gap:
            option_unused(self.name, options, ("delta_min",), "per_gap false (every job's Δ is delta)")
        if per_gap and self.delta_min > self.delta:
            raise PolicyOptionError(f"policy {self.name!r}: option 'delta_min' ({self.delta_min}) must "
                                    f"not exceed 'delta' ({self.delta})")
        self.per_gap = per_gap
        self.overlap_from: dict[str, float] = {}  # job id -> time its hosts become free (s)
        self.overlaps = 0

    def delta_of(self, job: Job) -> float:
        """Δ (%) ``job`` may overlap by: ``delta``, or with ``per_gap`` ``delta - (delta -
        delta_min) * cpu_load / 100`` (``cpu_load`` % from the job's workload fields, 100 when
        absent).

        Raises:
            PolicyInputError: with ``per_gap``, a ``cpu_load`` that is not a number in [0, 100]
                (a string, 150...: it was read as 100 without a word).
        """
        if not self.per_gap:
            return self.delta
        load = job.extra.get("cpu_load", 100)
        if isinstance(load, bool) or not isinstance(load, (int, float)) or not 0 <= load <= 100:
            raise PolicyInputError(f"job {job.id!r}: workload field 'cpu_load' must be a number in [0, 100] (% of "
                                   f"CPU load, policy {self.name!r} with per_gap), got {load!r}", job_id=job.id)
        return self.delta - (self.delta - self.delta_min) * float(load) / 100.0

    def compute_sharing_needed(self) -> str | None:
        """Δ > 0 overlaps jobs on shared hosts: compute sharing needed. With ``per_gap`` every
        job's Δ lies between ``delta_min`` and ``delta`` (``delta_min <= delta``), so ``delta`` = 0
        overlaps nothing either way."""
        if self.delta > 0:
            return f"delta = {self.delta:g} (> 0: overlaps jobs on shared hosts; default 10)"
        return None

    def _check_sharing(self, platform: Platform) -> None:
        why = self.compute_sharing_needed()
        if why is not None and not platform.allow_compute_sharing:
            raise PolicyInputError(f"policy {self.name!r} with {why}: run with compute sharing (gridsched run "
                                   "--compute-sharing, Batsim --enable-compute-sharing, campaign compute_sharing = "
                                   "true)")

    def _overlapping(self, job: Job) -> bool:
        t = self.overlap_from.get(job.id)
        return t is not None and t <= self.now  # type: ignore[attr-defined]

    def free_now_mask(self) -> int:
        """Available hosts plus those of overlapping jobs, minus hosts any other running job
        holds (a host is shared by two jobs at most)."""
        soft = hard = 0
        for job in self.running.values():  # type: ignore[attr-defined]
            m = self.running_mask(job)  # type: ignore[attr-defined]
            if self._overlapping(job):
                soft |= m
            else:
                hard |= m
        return (self.available_mask | soft) & ~hard  # type: ignore[attr-defined]

    def _mark_overlap(self, job: Job, at: float) -> None:
        """``job`` (starting now) frees its hosts for the next job at ``at`` (s)."""
        self.overlap_from[job.id] = at
        self.overlaps += 1
        if at != INF:
            self.call_me_later(at)  # type: ignore[attr-defined]

    def on_job_submitted(self, job: Job) -> None:
        """With ``per_gap``, refuse at its submission a job whose ``cpu_load`` gives no Δ
        (:meth:`delta_of`), not when it is first tried in a gap."""
        if self.per_gap:
            self.delta_of(job)
        super().on_job_submitted(job)  # type: ignore[misc]

    def on_job_completed(self, job: Job) -> None:
        """Forget the job's overlap."""
        super().on_job_completed(job)  # type: ignore[misc]
        self.overlap_from.pop(job.id, None)

    def metrics(self) -> dict[str, float]:
        """The base policy's metrics plus ``overlaps``: jobs admitted only thanks to Δ."""
        out = dict(super().metrics())  # type: ignore[misc]
        out["overlaps"] = float(self.overlaps)
        return out


class GreenEASY(_Overlap, EASY):
    """EASY with eq. 4 as its backfilling gap test (module docstring).

    Args:
        options: ``delta``, ``per_gap``, ``delta_min`` (see :data:`OPTION_DOCS`).

    Raises:
        PolicyOptionError: a bad option value. PolicyError (at SIMULATION_BEGINS): Δ > 0 without
            compute sharing.
    """

    name = "green-easy"
    summary = ("EASY backfilling whose gap test lets a job overlap the next one by up to Δ % of its walltime, "
               "to save energy (the green heuristic; Δ > 0 needs compute sharing).")
    references = ("green", "easy")

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self._read_options(self.options)
        self._pending: float | None = None

    def on_simulation_begins(self, platform: Platform) -> None:
        """Refuse Δ > 0 without compute sharing."""
        self._check_sharing(platform)

    def fits_gap(self, job: Job, now: float, resv: Reservation) -> bool:
        """004 eq. 4 (L136) as ``now + walltime * (1 - Δ/100) <= resv.start``; a job that only
        fits thanks to Δ will overlap from ``resv.start`` on (:meth:`start_job` records it)."""
        wt = job.walltime
        if wt < 0:
            return False
        if now + wt * (1.0 - self.delta_of(job) / 100.0) > resv.start:
            return False
        if now + wt > resv.start:
            self._pending = resv.start
        return True

    def gap_limit(self, now: float, resv: Reservation) -> float:
        """A bound of eq. 4 for the index search: a job passes :meth:`fits_gap` only if ``now +
        walltime * (1 - Δ/100) <= resv.start`` with Δ at most ``delta``, so ``now + walltime <=
        now + (resv.start - now) / (1 - delta/100)``, widened by a relative 1e-9 against
        rounding (a looser bound only adds tests of :meth:`fits_gap`)."""
        if resv.start == INF:
            return INF
        bound = now + (resv.start - now) / (1.0 - self.delta / 100.0)
        return bound + 1e-9 * (abs(bound) + 1.0)

    def start_job(self, job: Job, alloc: int) -> None:
        """EASY's start, then the overlap recorded by :meth:`fits_gap` for this job, if any."""
        super().start_job(job, alloc)
        if self._pending is not None:
            self._mark_overlap(job, self._pending)
            self._pending = None

    def busy_until(self, job: Job) -> float | None:
        """EASY's, but an overlapping job holds its hosts only until its gap's end."""
        t = self.overlap_from.get(job.id)
        if t is None:
            return super().busy_until(job)
        return None if t <= self.now else t


class GreenHEFT(_Overlap, HEFT):
    """HEFT whose insertion also tries a slot of ``walltime * (1 - Δ/100)`` (module docstring).

    Args and errors: as :class:`GreenEASY`.
    """

    name = "green-heft"
    option_docs: ClassVar[dict[str, str]] = {**OPTION_DOCS, **HEFT.option_docs}
    summary = ("HEFT whose insertion also tries a slot Δ % shorter than the walltime, letting jobs overlap to "
               "save energy (the green heuristic; Δ > 0 needs compute sharing).")
    references = ("green", "heft")

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self._read_options(self.options)
        self._short: dict[str, float] = {}  # job id -> Δ-shortened slot (s) of its placement

    def on_simulation_begins(self, platform: Platform) -> None:
        """HEFT's speed classes; refuse Δ > 0 without compute sharing."""
        super().on_simulation_begins(platform)
        self._check_sharing(platform)

    def find_reservation(self, prof: ReservationProfile, job: Job, dur: float | None = None,
                         not_before: float | None = None) -> Reservation:
        """HEFT's placement with the full walltime; when a slot of ``walltime * (1 - Δ/100)``
        (004 eq. 4, L136) starts earlier, that one, and the job will overlap from its end.

        On a platform of one speed the shorter slot is searched first: the full one cannot start
        earlier (a window free for the walltime is free for less), so its search starts there."""
        self._short.pop(job.id, None)
        delta = self.delta_of(job)
        if dur is not None or delta <= 0 or not job.has_walltime:
            return super().find_reservation(prof, job, dur, not_before)
        short = super().find_reservation(prof, job, job.walltime * (1.0 - delta / 100.0), not_before)
        hint = short.start if len(self.classes) <= 1 and short.start != INF else not_before
        full = super().find_reservation(prof, job, None, hint)
        if short.start < full.start:
            self._short[job.id] = short.duration
            return short
        return full

    def slot_scale(self) -> float:
        """``1 - delta/100``: no slot :meth:`find_reservation` gives is shorter than
        ``walltime * (1 - Δ/100)``, and a job's Δ is at most ``delta`` (``per_gap`` lowers it
        towards ``delta_min <= delta``); the bound of HEFT's early stop
        (:meth:`HEFT.slot_scale <schedulers.heft.HEFT.slot_scale>`)."""
        return 1.0 - self.delta / 100.0 if self.delta > 0 else 1.0

    def start_job(self, job: Job, alloc: int) -> None:
        """HEFT's start; a job placed in a Δ-shortened slot overlaps from the slot's end."""
        super().start_job(job, alloc)
        slot = self._short.pop(job.id, None)
        if slot is not None:
            self._mark_overlap(job, self.now + slot)

    def busy_until(self, job: Job) -> float | None:
        """HEFT's, but an overlapping job holds its hosts only until its slot's end."""
        t = self.overlap_from.get(job.id)
        if t is None:
            return super().busy_until(job)
        return None if t <= self.now else t


__all__ = ["GreenEASY", "GreenHEFT", "OPTION_DOCS"]
