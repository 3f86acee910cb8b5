"""A finished run's files as typed data, for the owner-share metrics (satisfaction, power usage).

Reads ``out_jobs.csv`` (Batsim 4.2.1's format, from the embedded engine or real Batsim), the
Batsim workload JSON files (named ``w0``, ``w1``, ... in order, as Batsim names them) for each
task's user (field ``user``), arrival time (``subtime``, s) and size (its profile: flops), and the
SimGrid platform XML for the hosts (speeds per pstate in flops/s, cores, property ``owner``).

Restarted tasks: a policy that preempts a task (OSEP, HOSEP) kills it and runs it again as a new
job. Such a restart is recognised by its id, the task's id followed by ``#<k>`` (``user1-3#1``,
``user1-3#2``) in the same workload: preemptive policies must name their restarts that way for
these metrics to follow a task to its end (:func:`task_key`).

The engine's readers (platforms: ``read_platform``, workloads: ``load_workload``) are imported
lazily, so that :mod:`schedulers.core` imports nothing above it when this module is not used.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Container

from procset import ProcSet

from .model import Host

__all__ = ["OutputsError", "Task", "JobRun", "RunFiles", "task_key", "out_jobs_rows", "read_out_jobs", "read_tasks",
           "read_hosts", "load_run", "ideal_duration"]


class OutputsError(ValueError):
    """A run's files are unreadable or inconsistent (the message names the file and the job)."""


@dataclass(frozen=True)
class Task:
    """One job of a workload file.

    Attributes:
        workload: ``w0``, ``w1``...; name: its id in the file; user: its ``user`` field.
        subtime: arrival time ``AT`` (s); res: hosts requested.
        stages: its profile's leaf profiles in execution order (``composed`` expanded).
        source: the workload file, for messages.
    """

    workload: str
    name: str
    user: str
    subtime: float
    res: int
    stages: tuple[dict[str, Any], ...]
    source: str

    @property
    def id(self) -> str:
        """Batsim's full job id, ``workload!name``."""
        return f"{self.workload}!{self.name}"


@dataclass(frozen=True)
class JobRun:
    """One row of ``out_jobs.csv``: a job's final state, start and finish (s), hosts (ids);
    ``start``/``finish`` are NaN and ``hosts`` empty for a rejected job."""

    workload: str
    job_id: str
    final_state: str
    start: float
    finish: float
    hosts: tuple[int, ...]

    @property
    def id(self) -> str:
        """Batsim's full job id, ``workload!job_id``."""
        return f"{self.workload}!{self.job_id}"


@dataclass
class RunFiles:
    """What :func:`load_run` read: hosts in Batsim id order, tasks by ``(workload, name)``, rows."""

    hosts: list[Host]
    tasks: dict[tuple[str, str], Task]
    runs: list[JobRun]
    out_jobs: str


_RESTART = re.compile(r"^(.*)#\d+$")


def task_key(workload: str, job_id: str, tasks: Container[tuple[str, str]] = ()) -> tuple[str, str]:
    """The task a job row belongs to: ``(workload, job_id)`` without a restart suffix ``#<k>``
    (:func:`schedulers.core.preemption.restart_name`), unless ``(workload, job_id)`` is itself
    one of ``tasks`` (the workloads' own jobs: an id such as ``job#2`` is a task, not a restart)."""
    if (workload, job_id) in tasks:
        return workload, job_id
    m = _RESTART.match(job_id)
    return workload, (m.group(1) if m else job_id)


def _float(text: str, where: str, column: str) -> float:
    if text == "":
        return math.nan
    try:
        return float(text)
    except ValueError:
        raise OutputsError(f"{where}: column {column!r} is not a number: {text!r}") from None


def out_jobs_rows(path: str | Path, need: tuple[str, ...]) -> tuple[Path, list[dict[str, str]]]:
    """The path and the rows (as dicts of strings) of an ``out_jobs.csv`` file (a folder: its
    ``out_jobs.csv``), after checking it has the columns ``need``.

    Raises:
        OutputsError: missing file or columns (names the file).
    """
    p = Path(path)
    if p.is_dir():
        p = p / "out_jobs.csv"
    try:
        with open(p, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in need if c not in (reader.fieldnames or ())]
            if missing:
                raise OutputsError(f"{p}: not an out_jobs.csv file (columns {', '.join(missing)} missing)")
            return p, list(reader)
    except OSError as exc:
        raise OutputsError(f"{p}: cannot read: {exc.strerror or exc}") from None


def read_out_jobs(path: str | Path) -> list[JobRun]:
    """The rows of an ``out_jobs.csv`` file (a folder: its ``out_jobs.csv``).

    Raises:
        OutputsError: missing file or columns, unreadable numbers or allocations (names the row).
    """
    need = ("job_id", "workload_name", "final_state", "starting_time", "finish_time", "allocated_resources")
    p, rows = out_jobs_rows(path, need)
    runs = []
    for row in rows:
        where = f"{p}: job {row['workload_name']}!{row['job_id']}"
        alloc = row["allocated_resources"] or ""
        try:
            hosts = tuple(ProcSet.from_str(alloc)) if alloc.strip() else ()
        except (ValueError, TypeError):
            raise OutputsError(f"{where}: bad allocated_resources {alloc!r}") from None
        runs.append(JobRun(row["workload_name"], row["job_id"], row["final_state"],
                           _float(row["starting_time"], where, "starting_time"),
                           _float(row["finish_time"], where, "finish_time"), hosts))
    return runs


def read_tasks(workloads: list[str | Path | dict], nb_hosts: int) -> dict[tuple[str, str], Task]:
    """The jobs of Batsim workloads (paths or parsed dicts, named ``w0``, ``w1``... in order), read
    with the engine's workload reader (:func:`schedulers.engine.workload.load_workload`).

    Args:
        nb_hosts: compute hosts of the platform (a job asking for more is an error, as in Batsim).

    Raises:
        WorkloadError: unreadable or malformed workload (see ``load_workload``).
        OutputsError: a job without ``user`` (the message names the file and the job).
    """
    from ..engine.workload import load_workload

    tasks: dict[tuple[str, str], Task] = {}
    for i, w in enumerate(workloads):
        name = f"w{i}"
        if isinstance(w, dict):
            wl = load_workload(f"<workload {name}>", name, nb_hosts, data=w)
        else:
            wl = load_workload(w, name, nb_hosts)
        for j in wl.jobs:
            user = j.raw.get("user")
            if user is None:
                raise OutputsError(f"{wl.path}: job {j.name!r} has no 'user' field (owner-share metrics "
                                   "need every job's user)")
            tasks[(name, j.name)] = Task(name, j.name, str(user), j.subtime, j.res,
                                         tuple(p for _, p in j.stages), wl.path)
    return tasks


def read_hosts(platform: str | Path) -> list[Host]:
    """The compute hosts of a SimGrid platform file in Batsim id order, as the policies see
    them (speeds per pstate in flops/s, cores, properties, initial pstate).

    Raises:
        PlatformError: see :func:`schedulers.engine.platform.read_platform`.
    """
    from ..engine.platform import read_platform

    spec = read_platform(platform)
    return [Host(id=i, name=h.name, speeds=list(h.speeds), cores=h.cores, properties=dict(h.properties),
                 zone_properties=dict(h.zone_properties), pstate=h.pstate)
            for i, h in enumerate(spec.compute)]


def load_run(out_jobs: str | Path, workloads: list[str | Path | dict], platform: str | Path) -> RunFiles:
    """Read a run's ``out_jobs.csv`` (or its folder), workloads and platform.

    Raises:
        OutputsError: see :func:`read_out_jobs`, :func:`read_tasks`; also a row whose task is in
            no workload, or a row on a host id the platform lacks.
        PlatformError, WorkloadError: bad platform or workload file.
    """
    hosts = read_hosts(platform)
    tasks = read_tasks(workloads, len(hosts))
    runs = read_out_jobs(out_jobs)
    for r in runs:
        if task_key(r.workload, r.job_id, tasks) not in tasks:
            raise OutputsError(f"{out_jobs}: job {r.id} belongs to no task of the workloads given")
        bad = [h for h in r.hosts if h >= len(hosts)]
        if bad:
            raise OutputsError(f"{out_jobs}: job {r.id} ran on host id {bad[0]}, but the platform has "
                               f"{len(hosts)} compute hosts")
    return RunFiles(hosts, tasks, runs, str(out_jobs))


def ideal_duration(task: Task, speed: float) -> float:
    """Time (s) ``task`` takes alone on hosts of ``speed`` flops/s per core: per stage, ``delay``
    (s) as is; ``parallel_homogeneous`` ``cpu`` flops per host; ``parallel_homogeneous_total``
    ``cpu / res`` per host; ``parallel`` its largest ``cpu`` entry (the engine's lockstep: the
    slowest part sets the pace); communications, and the IO profiles (``parallel_homogeneous_pfs``,
    ``data_staging``: bytes only), are not counted: this is the time without a network (on a platform with links they add their latency and may slow the task down).

    Raises:
        OutputsError: a profile type without a computable duration (names the task).
    """
    total = 0.0
    for p in task.stages:
        t = p.get("type")
        if t == "delay":
            total += float(p["delay"])
        elif t == "parallel_homogeneous":
            total += float(p["cpu"]) / speed
        elif t == "parallel_homogeneous_total":
            total += float(p["cpu"]) / task.res / speed
        elif t == "parallel":
            total += max((float(c) for c in p["cpu"]), default=0.0) / speed
        elif t in ("parallel_homogeneous_pfs", "data_staging"):
            pass   # bytes only: no time without a network
        else:
            raise OutputsError(f"{task.source}: job {task.name!r}: profile type {t!r} has no ideal duration")
    return total
