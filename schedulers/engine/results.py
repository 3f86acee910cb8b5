"""What a run produced: the jobs, the ``out_schedule.csv`` row, the output rows.

Definitions follow Batsim 4.2.1 (``src/export.cpp``, ``JobsTracer::write_job`` and
``JobsTracer::finalize``): a job's execution time is its runtime, or 1e-5 s when it took none
(``jobs_execution.cpp``); turnaround = start + execution time - submission; slowdown (Batsim's
``stretch``) = turnaround / execution time; the means divide by every job, rejected ones
included, while the sums and maxima count finished jobs only; ``makespan`` is the latest
completion time; ``consumed_joules`` is the energy at the last job end minus the energy at the
first job submission (:mod:`.server`); machine-state times are accumulated when a machine
leaves a state, so the period running at the end is not counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.model import HostState
from .workload import EngineJob

#: Batsim replaces a null execution time by this epsilon in out_jobs.csv (s).
NULL_RUNTIME_EPSILON = 1e-5


def execution_time(job: EngineJob) -> float:
    """The execution time Batsim reports for a finished job (s): its runtime, or
    :data:`NULL_RUNTIME_EPSILON` when the job took no time."""
    return job.runtime if job.runtime > 0 else NULL_RUNTIME_EPSILON


@dataclass
class EngineResult:
    """What a run produced (also written to files when an export prefix is given).

    Attributes:
        jobs: every job (EngineJob) in completion/rejection order.
        makespan: finish time of the last job (s).
        consumed_joules: Batsim's ``consumed_joules`` (J): energy at the last job end minus energy
            at the first job submission; 0 without energy.
        total_joules: energy of all compute hosts from 0 to the end of the simulation (J).
        schedule: the out_schedule.csv row as a dict.
        rows: lists of output rows (``jobs``, ``machine_states``, ``energy``, ``pstates``).
        messages: number of Batsim messages sent to the scheduler.
        end_time: simulated time of SIMULATION_ENDS (s).
    """

    jobs: list[EngineJob]
    makespan: float
    consumed_joules: float
    schedule: dict[str, Any]
    rows: dict[str, list]
    messages: int
    end_time: float
    total_joules: float = 0.0


def build_result(engine: Any, wall: float) -> EngineResult:
    """The :class:`EngineResult` of a finished ``engine`` run that took ``wall`` seconds."""
    jobs = engine._done_jobs
    n = len(jobs)
    executed = [j for j in jobs if j.state != "REJECTED"]
    ex = [execution_time(j) for j in executed]
    makespan = max((j.start + e for j, e in zip(executed, ex)), default=0.0)
    turn = [j.start + e - j.subtime for j, e in zip(executed, ex)]
    wait = [j.start - j.subtime for j in executed]
    slow = [t / e for t, e in zip(turn, ex)]
    success = sum(1 for j in jobs if j.state == "COMPLETED_SUCCESSFULLY")
    rejected = n - len(executed)
    consumed = engine._e_last_job_end - engine._e_first_sub if engine.energy else 0.0
    t_in = engine._time_in
    sched = {
        "batsim_version": "v4.2.1", "consumed_joules": consumed, "makespan": makespan,
        "max_slowdown": max(slow, default=0.0), "max_turnaround_time": max(turn, default=0.0),
        "max_waiting_time": max(wait, default=0.0),
        "mean_slowdown": sum(slow) / n if n else 0.0, "mean_turnaround_time": sum(turn) / n if n else 0.0,
        "mean_waiting_time": sum(wait) / n if n else 0.0,
        "nb_computing_machines": len(engine.hosts), "nb_grouped_switches": engine._nb_grouped_switches,
        "nb_jobs": n, "nb_jobs_finished": n - rejected, "nb_jobs_killed": len(executed) - success,
        "nb_jobs_rejected": rejected, "nb_jobs_success": success,
        "nb_machine_switches": engine._nb_machine_switches, "scheduling_time": engine._sched_time,
        "simulation_time": wall, "success_rate": success / n if n else 0.0,
        "time_computing": t_in[HostState.COMPUTING], "time_idle": t_in[HostState.IDLE],
        "time_sleeping": t_in[HostState.SLEEPING], "time_switching_off": t_in[HostState.SWITCHING_OFF],
        "time_switching_on": t_in[HostState.SWITCHING_ON], "time_unavailable": 0.0,
    }
    total = engine.total_energy(engine.now) if engine.energy else 0.0
    return EngineResult(jobs=jobs, makespan=makespan, consumed_joules=consumed, schedule=sched,
                        rows=engine.rows, messages=engine._messages, end_time=engine.now, total_joules=total)
