"""Preemption by kill and resubmission, with optional checkpointing: the arithmetic and the task
records that OSEP, HOSEP and EHOSEP share.

Batsim has no suspend: a preemptive policy kills the running job (KILL_JOB), and Batsim answers
JOB_KILLED with the job's ``job_progress`` (the fraction of its profile done, ``progress`` in
[0, 1]); the policy then submits what is left as a new job (REGISTER_JOB, Batsim
``--enable-dynamic-jobs``). One *logical task* (the workload's job) is thus run by a chain of
Batsim jobs: the original ``w0!user1-3``, then ``w0!user1-3#1``, ``w0!user1-3#2``... in the same
workload. The ``#<k>`` suffix is the convention :mod:`schedulers.core.run_outputs` reads to follow a
task to its end, so that satisfaction and per-task tables count one row per task.

Checkpointing (001 §3.4 L367, "armazenamento do progresso das tarefas em blocos"; §5.4 L604:
"blocos de 10 minutos de execução")
    A run that executed for ``e`` seconds keeps its ``floor(e / block)`` completed blocks; only
    the work of the unfinished block is lost. A block is measured in seconds of execution **on
    the host(s) the run used**, and what a block keeps is the *work* (flops) done during it: the
    run's work rate times ``k x block``, with the rate ``done / e`` (on a host of its own, the
    host's speed). Moved to a host of another speed, the task keeps those flops, and its restart
    computes only the rest, at the new host's speed. So a block is 10 minutes on the machine that
    computed it, not 10 minutes' worth of work on the next one. Without checkpointing a restart
    begins from zero.

Wasted work (flops): what a killed run computed and its successor computes again: ``done`` without
checkpointing, ``done - saved`` with it.

Sources: ``000`` = the HOSEP paper, ``001`` = the monograph (``shared/papers``, ``L<n>`` = line).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .model import Job, PolicyError

__all__ = ["Checkpoint", "Task", "checkpoint", "profile_work", "restart_name", "remaining_profile"]

#: Profile types whose work a restart can shrink (one computation phase, ``cpu`` in flops).
SHRINKABLE = ("parallel_homogeneous", "parallel_homogeneous_total")

#: Relative tolerance on ``e / block`` when counting completed blocks (times are rounded floats:
#: 1200 s of execution often arrives as 1199.9999999998).
_BLOCK_EPS = 1e-9


@dataclass(frozen=True)
class Checkpoint:
    """What a killed run leaves: ``done`` (flops of its profile computed), ``saved`` (kept by
    checkpointing), ``wasted = done - saved`` (flops), and ``blocks`` (completed blocks)."""

    done: float
    saved: float
    blocks: int

    @property
    def wasted(self) -> float:
        return self.done - self.saved


def checkpoint(work: float, progress: float, elapsed: float, block: float | None) -> Checkpoint:
    """The work a killed run keeps (see the module docstring).

    Args:
        work: the run's profile work (flops, per host for ``parallel_homogeneous``).
        progress: Batsim's ``job_progress`` ``progress`` for the run, in [0, 1].
        elapsed: how long the run executed (s): kill time minus start time.
        block: checkpoint block length (s); None = no checkpointing.

    Returns:
        ``Checkpoint(done=progress x work, saved, blocks)``; ``saved = done x k x block / elapsed``
        with ``k = floor(elapsed / block)``, 0 without checkpointing or before the first block.

    Raises:
        ValueError: a negative or non-finite argument, progress outside [0, 1], block <= 0.
    """
    for name, v in (("work", work), ("elapsed", elapsed)):
        if not (math.isfinite(v) and v >= 0):
            raise ValueError(f"checkpoint: {name} must be a finite number >= 0, got {v!r}")
    if not (0.0 <= progress <= 1.0):
        raise ValueError(f"checkpoint: progress must be in [0, 1], got {progress!r}")
    done = progress * work
    if block is None or elapsed <= 0 or done <= 0:
        return Checkpoint(done, 0.0, 0)
    if not (math.isfinite(block) and block > 0):
        raise ValueError(f"checkpoint: block must be a finite number > 0 (s), got {block!r}")
    k = math.floor(elapsed / block + _BLOCK_EPS)
    if k <= 0:
        return Checkpoint(done, 0.0, 0)
    saved = min(done, done * (k * block) / elapsed)
    return Checkpoint(done, saved, k)


def profile_work(profile: dict[str, Any] | None) -> float | None:
    """The work of a profile in flops (per host for ``parallel_homogeneous``, the total for
    ``parallel_homogeneous_total``, the sum of ``cpu`` for ``parallel``), 0 for ``delay``; None
    when unknown (no profile data, or a ``composed`` profile, whose forwarded form
    names its parts without their work)."""
    if not profile:
        return None
    t = profile.get("type")
    if t in SHRINKABLE:
        return float(profile.get("cpu", 0.0))
    if t == "parallel":
        return float(math.fsum(float(c) for c in profile.get("cpu", ())))
    if t == "delay":
        return 0.0
    return None


def remaining_profile(profile: dict[str, Any], saved: float) -> dict[str, Any]:
    """``profile`` with ``saved`` flops of its ``cpu`` done (a checkpointed restart's profile).

    Raises:
        PolicyError: a profile type other than :data:`SHRINKABLE`.
    """
    t = profile.get("type")
    if t not in SHRINKABLE:
        raise PolicyError(f"checkpointing needs single-phase profiles ({', '.join(SHRINKABLE)}), not {t!r}")
    out = dict(profile)
    out["cpu"] = max(0.0, float(profile["cpu"]) - saved)
    return out


def restart_name(task_name: str, k: int) -> str:
    """The Batsim job name of a task's ``k``-th restart: ``user1-3#2`` (see the module docstring)."""
    return f"{task_name}#{k}"


@dataclass(eq=False)
class Task:
    """One logical task of a preemptive policy: the workload's job and its restarts.

    Attributes:
        id: the original job's Batsim id (``w0!user1-3``); ownership accounting keys on it.
        user: the job's ``user`` field.
        job: the Batsim job that runs (or will run) the task now.
        arrival: the original submission time (s).
        index: arrival rank (ties in queue orders).
        profile: the current job's profile description (None when Batsim did not forward it).
        restarts: how many times the task was preempted and resubmitted.
        wasted: flops computed and lost by its killed runs.
        saved: flops kept by checkpoints so far.
        killing: a KILL_JOB of :attr:`job` is under way.
        hosts: the host ids of the current (or planned) run, empty while it waits.
    """

    id: str
    user: str
    job: Job
    arrival: float
    index: int
    profile: dict[str, Any] | None = None
    restarts: int = 0
    wasted: float = 0.0
    saved: float = 0.0
    killing: bool = False
    hosts: tuple[int, ...] = field(default=())

    @property
    def name(self) -> str:
        """The original job name (``user1-3``)."""
        return self.id.split("!", 1)[1] if "!" in self.id else self.id

    @property
    def workload(self) -> str:
        return self.id.split("!", 1)[0] if "!" in self.id else ""

    @property
    def res(self) -> int:
        return self.job.res

    @property
    def work(self) -> float | None:
        """The current job's work (flops, :func:`profile_work`), None when unknown."""
        return profile_work(self.profile)
