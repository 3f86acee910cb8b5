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

from array import array
from dataclasses import dataclass
from typing import Any, Iterator

from ..core.model import HostState
from .workload import EngineJob

#: Batsim replaces a null execution time by this epsilon in out_jobs.csv (s).
NULL_RUNTIME_EPSILON = 1e-5


class DoneJob:
    """What is kept of a job once it ended (completed, killed or rejected): the fields of its
    ``out_jobs.csv`` row and of :class:`EngineResult` ``.jobs``, with the :class:`EngineJob`
    names (times in s, energy in J, ``alloc`` the hosts' ProcSet). The engine swaps each ended
    job for its record (:meth:`of`) so that a run keeps no execution state, raw JSON object or
    profile stages per finished job: about 200 bytes a job instead of about 1 KB."""

    __slots__ = ("id", "name", "workload", "profile", "subtime", "walltime", "res", "state", "start", "finish",
                 "runtime", "alloc", "return_code", "energy")

    def __init__(self, id: str, name: str, workload: str, profile: str, subtime: float,  # noqa: A002
                 walltime: float, res: int, state: str, start: float, finish: float, runtime: float, alloc: Any,
                 return_code: int, energy: float) -> None:
        self.id = id
        self.name = name
        self.workload = workload
        self.profile = profile
        self.subtime = subtime
        self.walltime = walltime
        self.res = res
        self.state = state
        self.start = start
        self.finish = finish
        self.runtime = runtime
        self.alloc = alloc
        self.return_code = return_code
        self.energy = energy

    @classmethod
    def of(cls, job: EngineJob) -> "DoneJob":
        """The record of an ended ``job``."""
        return cls(job.id, job.name, job.workload, job.profile, job.subtime, job.walltime, job.res, job.state,
                   job.start, job.finish, job.runtime, job.alloc, job.return_code, job.energy)

    def __repr__(self) -> str:
        return (f"DoneJob(id={self.id!r}, state={self.state!r}, start={self.start!r}, finish={self.finish!r}, "
                f"alloc={self.alloc!s})")


class MachineStateRows:
    """The rows of ``out_machine_states.csv`` — ``(time, nb_sleeping, nb_switching_on,
    nb_switching_off, nb_idle, nb_computing)``, time in s — kept in two arrays (28 bytes a row
    instead of about 200 for a tuple of Python numbers). Behaves as the list of tuples it
    replaces: ``append``, ``len``, iteration and indexing give the same tuples."""

    __slots__ = ("_time", "_counts")

    def __init__(self) -> None:
        self._time = array("d")
        self._counts = array("i")

    def append(self, row: tuple) -> None:
        self._time.append(row[0])
        self._counts.extend(row[1:6])

    def __len__(self) -> int:
        return len(self._time)

    def __getitem__(self, i: int) -> tuple:
        t = self._time[i]  # IndexError as a list
        i %= len(self._time)
        return (t, *self._counts[5 * i:5 * i + 5])

    def __iter__(self) -> Iterator[tuple]:
        counts = self._counts
        for i, t in enumerate(self._time):
            k = 5 * i
            yield (t, counts[k], counts[k + 1], counts[k + 2], counts[k + 3], counts[k + 4])


class EnergyRows:
    """The rows of ``out_consumed_energy.csv`` — ``(time (s), energy (J), kind ('s', 'e' or 'p'),
    wattmin (W), epower (W, or None for NA))`` — kept in arrays (34 bytes a row instead of about
    250). Behaves as the list of tuples it replaces (``append``, ``len``, iteration, indexing)."""

    __slots__ = ("_cols", "_kind")

    def __init__(self) -> None:
        self._cols = (array("d"), array("d"), array("d"), array("d"))  # time, energy, wattmin, epower
        self._kind = bytearray()  # the kind's character; bit 7 set when epower is None

    def append(self, row: tuple) -> None:
        t, e, kind, wmin, ep = row
        cols = self._cols
        cols[0].append(t)
        cols[1].append(e)
        cols[2].append(wmin)
        cols[3].append(0.0 if ep is None else ep)
        self._kind.append(ord(kind) | (0x80 if ep is None else 0))

    def __len__(self) -> int:
        return len(self._kind)

    def __getitem__(self, i: int) -> tuple:
        k = self._kind[i]  # IndexError as a list
        t, e, w, p = (c[i] for c in self._cols)
        return (t, e, chr(k & 0x7F), w, None if k & 0x80 else p)

    def __iter__(self) -> Iterator[tuple]:
        ts, es, ws, ps = self._cols
        for t, e, k, w, p in zip(ts, es, self._kind, ws, ps):
            yield (t, e, chr(k & 0x7F), w, None if k & 0x80 else p)


def output_rows() -> dict[str, Any]:
    """The engine's empty output rows: ``jobs`` (:class:`DoneJob` records), ``machine_states``
    (:class:`MachineStateRows`), ``energy`` (:class:`EnergyRows`), ``pstates`` (a list of
    ``(time, hosts, pstate)``)."""
    return {"jobs": [], "machine_states": MachineStateRows(), "energy": EnergyRows(), "pstates": []}


def execution_time(job: EngineJob) -> float:
    """The execution time Batsim reports for a finished job (s): its runtime, or
    :data:`NULL_RUNTIME_EPSILON` when the job took no time."""
    return job.runtime if job.runtime > 0 else NULL_RUNTIME_EPSILON


@dataclass
class EngineResult:
    """What a run produced (also written to files when an export prefix is given).

    Attributes:
        jobs: every job in completion/rejection order (a :class:`DoneJob` each).
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
