"""Run summaries computed from Batsim's output files (embedded engine or real Batsim alike).

Metrics (standard definitions, Feitelson et al. "Metrics and benchmarking for parallel job
scheduling", JSSPP 1998):

* waiting time ``w = start - submission`` (s); turnaround ``start + run - submission`` (s);
* bounded slowdown ``max(1, (w + run) / max(run, tau))`` with ``tau = 10`` s;
* utilisation ``sum(res * run) / (nb_hosts * makespan)`` over executed jobs;
* makespan: last finish time (s); energy in joules and kWh (1 kWh = 3.6e6 J).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

#: Threshold of the bounded slowdown (s).
BSLD_TAU = 10.0
JOULES_PER_KWH = 3.6e6


@dataclass
class RunSummary:
    """Headline numbers of one simulation (times in s, energy in J and kWh, utilisation in [0, 1])."""

    jobs: int
    success: int
    killed: int
    rejected: int
    makespan: float
    mean_waiting_time: float
    mean_bounded_slowdown: float
    max_waiting_time: float
    utilisation: float
    energy_joules: float | None
    energy_kwh: float | None

    def as_dict(self) -> dict:
        return asdict(self)

    def format(self) -> str:
        """A short human-readable block."""
        lines = [
            f"jobs                  {self.jobs} ({self.success} succeeded, {self.killed} killed, {self.rejected} rejected)",
            f"makespan              {self.makespan:,.1f} s",
            f"mean waiting time     {self.mean_waiting_time:,.1f} s (max {self.max_waiting_time:,.1f} s)",
            f"mean bounded slowdown {self.mean_bounded_slowdown:,.3f} (tau = {BSLD_TAU:g} s)",
            f"utilisation           {100 * self.utilisation:.1f} %",
        ]
        if self.energy_joules is not None:
            lines.append(f"energy                {self.energy_joules:,.0f} J = {self.energy_kwh:,.3f} kWh")
        return "\n".join(lines)


def summarize_columns(final_state: Sequence[str], submission: Sequence[float], starting: Sequence[float],
                      execution: Sequence[float], finish: Sequence[float], res: Sequence[float], nb_hosts: int,
                      energy_joules: float | None = None, tau: float = BSLD_TAU) -> RunSummary:
    """Summarise the columns of an ``out_jobs.csv`` table (one value per job, same order).

    Args:
        final_state: Batsim's ``final_state`` (``COMPLETED_SUCCESSFULLY``, ``COMPLETED_KILLED``,
            ``COMPLETED_WALLTIME_REACHED``, ``REJECTED``).
        submission, starting, execution, finish: times (s); ignored for rejected jobs.
        res: requested number of resources (hosts).
        nb_hosts: number of compute hosts (for utilisation).
        energy_joules: Batsim's ``consumed_joules`` of out_schedule.csv (J, from the first job
            submission to the last job end), None without energy.
        tau: bounded-slowdown threshold (s).

    Raises:
        ValueError: ``nb_hosts`` < 1 or columns of different lengths.
    """
    if nb_hosts < 1:
        raise ValueError("nb_hosts must be >= 1")
    state = np.asarray(final_state, dtype=object)
    cols = [np.asarray(c, dtype=float) for c in (submission, starting, execution, finish, res)]
    if any(len(c) != len(state) for c in cols):
        raise ValueError("out_jobs columns of different lengths")
    ex = state != "REJECTED"
    sub, start, run, fin, req = (c[ex] for c in cols)
    n_ex = int(ex.sum())
    wait = start - sub
    bsld = np.maximum((wait + run) / np.maximum(run, tau), 1.0)
    makespan = float(fin.max()) if n_ex else 0.0
    area = float((req * run).sum())
    return RunSummary(
        jobs=len(state),
        success=int((state == "COMPLETED_SUCCESSFULLY").sum()),
        killed=int(((state == "COMPLETED_KILLED") | (state == "COMPLETED_WALLTIME_REACHED")).sum()),
        rejected=len(state) - n_ex,
        makespan=makespan,
        mean_waiting_time=float(wait.mean()) if n_ex else 0.0,
        mean_bounded_slowdown=float(bsld.mean()) if n_ex else 0.0,
        max_waiting_time=float(wait.max()) if n_ex else 0.0,
        utilisation=area / (nb_hosts * makespan) if makespan > 0 else 0.0,
        energy_joules=energy_joules,
        energy_kwh=None if energy_joules is None else energy_joules / JOULES_PER_KWH,
    )


def summarize_jobs(jobs: pd.DataFrame, nb_hosts: int, energy_joules: float | None = None,
                   tau: float = BSLD_TAU) -> RunSummary:
    """Summarise an ``out_jobs.csv`` table (see :func:`summarize_columns`).

    Raises:
        ValueError: ``nb_hosts`` < 1 or columns missing.
    """
    need = ["final_state", "submission_time", "starting_time", "execution_time", "finish_time",
            "requested_number_of_resources"]
    missing = set(need) - set(jobs.columns)
    if missing:
        raise ValueError(f"out_jobs table lacks columns {sorted(missing)}")
    state = jobs["final_state"].tolist()
    cols = [jobs[c].to_numpy(dtype=float, na_value=0.0) for c in need[1:]]
    return summarize_columns(state, *cols, nb_hosts=nb_hosts, energy_joules=energy_joules, tau=tau)


def summarize_outputs(prefix: str | Path, nb_hosts: int | None = None) -> RunSummary:
    """Summarise the files ``PREFIXjobs.csv`` and ``PREFIXschedule.csv`` of a run.

    Raises:
        FileNotFoundError: the jobs file is missing.
    """
    prefix = str(prefix)
    jobs = pd.read_csv(prefix + "jobs.csv", dtype={"job_id": str, "allocated_resources": str})
    energy = None
    sched_path = Path(prefix + "schedule.csv")
    if sched_path.exists():
        sched = pd.read_csv(sched_path)
        if nb_hosts is None:
            nb_hosts = int(sched["nb_computing_machines"].iloc[0])
        if Path(prefix + "consumed_energy.csv").exists():
            energy = float(sched["consumed_joules"].iloc[0])
    if nb_hosts is None:
        raise ValueError(f"{prefix}schedule.csv is missing: give nb_hosts")
    return summarize_jobs(jobs, nb_hosts, energy)
