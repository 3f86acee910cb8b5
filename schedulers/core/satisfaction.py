"""User satisfaction of OSEP and HOSEP, computed from any run's output files.

Sources (``shared/papers``, ``L<n>`` = line of the plain-text file): ``000`` is the HOSEP paper
(``000_e546516683445c97.txt``), ``001`` the monograph (``001_e7d938ca075b7e80.txt``).

Per task ``j`` of user ``i`` (000 eq. 1, L190-198) and per user (000 eq. 2, L200-206; both in
one, 001 §4.4 eq. 4.4, L515)::

    US_ij = (CT_j_ideal - AT_j) / (CT_j_real - AT_j) x 100          (%)
    US_i  = (sum over the n tasks of i of US_ij) / n

``AT_j`` is the task's arrival (its workload ``subtime``, s), ``CT_j_real`` its completion (the
``finish_time`` of its successful row in ``out_jobs.csv``, s; a preempted task's restarts are
followed, see :mod:`schedulers.core.run_outputs`).

``CT_j_ideal`` (s), three definitions:

* ``"hosep"`` (the default, used for **both** policies so that they can be compared; 000 Def. 5,
  L309-315; 001 §4.4 L513 says the metric "had to be adapted" for HOSEP): the task started at
  ``AT_j`` on an ideal machine as fast as the mean of the speeds of the hosts the user owns
  (its share), ``CT_ideal = AT + work / mean_speed``. The same yardstick for every run: it depends
  on the user's share only, not on what a policy did. Users whose tasks run on machines faster
  than their own mean get ``US > 100`` (e.g. user4 on an i7); nothing caps it, as in the papers.
  **Non-owners** (no share, 001 §6.2 L688): the ideal machine is the grid's mean host (the mean
  speed of all compute hosts).
* ``"ispd"`` (the authors' simulator, iSPD, ``src/ispd/motor/metricas/Metricas.java`` of the
  public repository ``gspd-unesp/ispd``: "tempo de execução esperado pelo usuário, em que não há
  espera nem preempção, com a tarefa executando em uma máquina média do sistema"): no waiting, on
  a machine as fast as the mean of **all** the grid's hosts (the mean of their computing powers),
  ``CT_ideal = AT + work / grid_mean_speed``, the same yardstick for every user. A user whose
  tasks run on hosts faster than the grid's mean exceeds 100 %. (Some versions of that file cut
  the ratio down to two decimals before multiplying by 100; not done here.)
* ``"osep"`` (OSEP's original, 000 §3.1 L183-186: "the user would get at once all the resources
  for execution"): no waiting, on the machine(s) the task ran on -- ``CT_ideal = AT + work /
  speed`` of the host(s) of its final run (the slowest of them for a multi-host job). On a
  homogeneous grid, OSEP's setting, both definitions agree; the original does not exceed 100 %
  (no waiting and no faster machine than the one used) but by the rounding of ``out_jobs.csv``'s
  6-decimal times (e.g. 100.000000002).

Speeds are the hosts' nominal per-core speeds (their fastest pstate, flops/s), work the task's
profile (:func:`~schedulers.core.run_outputs.ideal_duration`): the papers' tasks are single-host,
one core each, with no DVFS.

Every task of the workloads must have completed successfully (directly or through a restart);
otherwise :class:`SatisfactionError` names the task.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from .run_outputs import OutputsError, RunFiles, ideal_duration, load_run, task_key

__all__ = ["MODES", "SatisfactionError", "TaskSatisfaction", "reference_speeds", "task_satisfactions",
           "user_means", "satisfaction_metrics"]

#: Definitions of ``CT_ideal`` (see the module docstring).
MODES = ("hosep", "osep", "ispd")


class SatisfactionError(OutputsError):
    """A task without a successful end, a restart ambiguity, an unknown mode (names the task)."""


@dataclass(frozen=True)
class TaskSatisfaction:
    """One task's satisfaction: ``AT``, ``CT_ideal``, ``CT_real`` (s) and ``US`` (%)."""

    task: str
    user: str
    arrival: float
    ideal_end: float
    end: float
    satisfaction: float


def _nominal(host) -> float:
    return max(host.speeds)


def reference_speeds(run: RunFiles) -> tuple[dict[str, float], float]:
    """Definition 5's ideal machine speed per owner (mean of the nominal per-core speeds of the
    hosts it owns, flops/s) and the grid's mean host speed (for non-owners, flops/s)."""
    owned: dict[str, list[float]] = {}
    for h in run.hosts:
        if h.owner:
            owned.setdefault(h.owner, []).append(_nominal(h))
    grid = math.fsum(_nominal(h) for h in run.hosts) / len(run.hosts)
    return {u: math.fsum(s) / len(s) for u, s in owned.items()}, grid


def task_satisfactions(run: RunFiles, mode: str = "hosep") -> list[TaskSatisfaction]:
    """``US_ij`` of every task (000 eq. 1 / 001 eq. 4.4), in workload order.

    Raises:
        SatisfactionError: unknown mode; a task with no successful row or with two; a task that
            ends at its arrival.
    """
    if mode not in MODES:
        raise SatisfactionError(f"satisfaction mode must be one of {', '.join(MODES)}, got {mode!r}")
    done: dict[tuple[str, str], list] = {}
    seen: dict[tuple[str, str], list[str]] = {}
    for r in run.runs:
        key = task_key(r.workload, r.job_id, run.tasks)
        seen.setdefault(key, []).append(r.final_state)
        if r.final_state == "COMPLETED_SUCCESSFULLY":
            done.setdefault(key, []).append(r)
    own_speed, grid_speed = reference_speeds(run)
    out = []
    for key, task in run.tasks.items():
        rows = done.get(key, [])
        if len(rows) != 1:
            states = ", ".join(seen.get(key, [])) or "no row"
            what = "completed successfully more than once" if rows else "never completed successfully"
            raise SatisfactionError(f"{run.out_jobs}: task {task.id} (user {task.user}) {what} ({states})")
        r = rows[0]
        if mode == "hosep":
            speed = own_speed.get(task.user, grid_speed)
        elif mode == "ispd":
            speed = grid_speed
        else:
            speed = min(_nominal(run.hosts[h]) for h in r.hosts)
        ideal = ideal_duration(task, speed)
        real = r.finish - task.subtime
        if not real > 0:
            raise SatisfactionError(f"{run.out_jobs}: task {task.id} ends at {r.finish} s, not after its "
                                    f"arrival at {task.subtime} s")
        out.append(TaskSatisfaction(task.id, task.user, task.subtime, task.subtime + ideal, r.finish,
                                    ideal / real * 100.0))
    return out


def user_means(tasks: list[TaskSatisfaction]) -> dict[str, float]:
    """``US_i``, the mean of each user's ``US_ij`` (000 eq. 2 / 001 eq. 4.4), users sorted (%)."""
    per: dict[str, list[float]] = {}
    for t in tasks:
        per.setdefault(t.user, []).append(t.satisfaction)
    return {u: math.fsum(v) / len(v) for u, v in sorted(per.items())}


def satisfaction_metrics(out_jobs: str | Path, workloads: list[str | Path | dict], platform: str | Path, *,
                         mode: str = "hosep", prefix: str = "satisfaction") -> dict[str, float]:
    """Per-user mean satisfaction of a run, as campaign metrics: ``{"satisfaction.user1": 87.5,
    ...}`` (%).

    Args:
        out_jobs: the run's ``out_jobs.csv`` (or the folder holding it).
        workloads: the workload files given to the run, in order (``w0``, ``w1``...).
        platform: the platform file of the run.
        mode: ``"hosep"`` (Definition 5, default), ``"osep"`` or ``"ispd"`` (see the module
            docstring).
        prefix: metric name prefix.

    Raises:
        SatisfactionError, OutputsError, PlatformError: see :func:`task_satisfactions` and
            :func:`~schedulers.core.run_outputs.load_run`.
    """
    run = load_run(out_jobs, workloads, platform)
    return {f"{prefix}.{u}": v for u, v in user_means(task_satisfactions(run, mode)).items()}
