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
from math import isfinite
from itertools import compress
from operator import add, sub as _minus, truediv
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

from procset import ProcSet
from struct import Struct

from ..core.model import HostState
from .paje import ScheduleTraceRows
from .workload import EngineJob

if TYPE_CHECKING:
    from .clock import Clock
    from .hosts import Machines
    from .jobs import JobBook
    from .platform import PlatformSpec
    from .switching import Switches
from .hosts import exact_sum

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

    def __eq__(self, other: object) -> bool:
        """Records are equal when every field is (a record rebuilt from the engine's table equals
        the one it was made from)."""
        if not isinstance(other, DoneJob):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in DoneJob.__slots__)

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return (f"DoneJob(id={self.id!r}, state={self.state!r}, start={self.start!r}, finish={self.finish!r}, "
                f"alloc={self.alloc!s})")


# The rows below are added to their arrays as packed bytes (array.frombytes of struct.pack):
# array.append/extend convert each item through PyArg_Parse, about 3x the cost of one pack.
_PACK_6D, _PACK_6Q, _PACK_4D, _PACK_5I = (Struct(f).pack for f in ("6d", "6q", "4d", "5i"))

#: The final states of a finished job, by their code in :class:`DoneJobs`.
_STATES = ("COMPLETED_SUCCESSFULLY", "COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED", "REJECTED",
           "COMPLETED_FAILED", "NOT_SUBMITTED", "SUBMITTED", "RUNNING")
_STATE_CODE = {s: i for i, s in enumerate(_STATES)}


def _alloc_text(alloc: ProcSet, hosts: Sequence[int]) -> str:
    """``alloc`` as out_jobs.csv writes it (``f"{alloc}"``: ``0-3 7``); ``hosts`` its ids in
    increasing order (the job's), from which the common allocation of one interval (first to
    last all there) is written without reading the ProcSet."""
    n = len(hosts)
    if n and hosts[-1] - hosts[0] == n - 1:
        return f"{hosts[0]}" if n == 1 else f"{hosts[0]}-{hosts[-1]}"
    return f"{alloc}"


class DoneJobs:
    """The ended jobs of a run (completed, killed or rejected), in the order they ended, as
    columns: what a :class:`DoneJob` holds, in about 120 bytes a job instead of 700 (the
    record's object, its six floats, three strings and ``alloc``'s ProcSet). Times in s,
    energy in J.

    Behaves as the read-only list of :class:`DoneJob` records it replaces: ``len``, iteration
    and indexing make the records (equal fields; a new object at each access; ``alloc`` a
    ProcSet rebuilt from its text, or None for a rejected job). :meth:`fields` gives the
    ``out_jobs.csv`` fields without making records.
    """

    __slots__ = ("_floats", "_ints", "_text", "_ends", "_workloads", "_wl_index", "_other_alloc")

    def __init__(self) -> None:
        self._floats = array("d")  # subtime, walltime, start, finish, runtime, energy of each job
        self._ints = array("q")    # res, return code, state (index in _STATES), workload (index in
        #                            _workloads), length of name and of profile (characters)
        self._text = bytearray()   # name + profile + allocation of each job, UTF-8
        self._ends = array("q")    # where each job's text ends in _text
        self._workloads: list[str] = []
        self._wl_index: dict[str, int] = {}
        self._other_alloc: dict[int, Any] = {}  # an allocation that is not a ProcSet (kept as is)

    def append(self, job: EngineJob) -> int:
        """Record ended ``job``; return its row."""
        row = len(self._ends)
        self._floats.frombytes(_PACK_6D(job.subtime, job.walltime, job.start, job.finish, job.runtime, job.energy))
        wl = self._wl_index.get(job.workload)
        if wl is None:
            wl = self._wl_index[job.workload] = len(self._workloads)
            self._workloads.append(job.workload)
        name, profile, alloc = job.name, job.profile, job.alloc
        if alloc is None:
            alloc_text = ""
        elif type(alloc) is ProcSet:
            alloc_text = _alloc_text(alloc, job.hosts) if not job.st_hosts else f"{alloc}"
        else:
            self._other_alloc[row] = alloc
            alloc_text = ""
        self._ints.frombytes(_PACK_6Q(job.res, job.return_code, _STATE_CODE[job.state], wl, len(name), len(profile)))
        self._text += f"{name}{profile}{alloc_text}".encode("utf-8", "surrogatepass")
        self._ends.append(len(self._text))
        return row

    def __len__(self) -> int:
        return len(self._ends)

    def state(self, row: int) -> str:
        """The final state of the job of ``row``."""
        return _STATES[self._ints[6 * row + 2]]

    def fields(self, rows: Iterable[int] | None = None) -> Iterator[tuple]:
        """The ``out_jobs.csv`` fields of the jobs of ``rows`` (default: all, in order), each as
        ``(name, workload, profile, subtime, res, walltime, state, start, runtime, alloc text,
        energy, finish)``."""
        floats, ints, workloads, strings = self._floats, self._ints, self._workloads, self._strings
        if rows is None and not self._other_alloc and self._text.isascii():
            yield from self._all_fields()
            return
        for row in range(len(self._ends)) if rows is None else rows:
            k = 6 * row
            res, _, state, wl = ints[k:k + 4]
            name, profile, alloc = strings(row)
            yield (name, workloads[wl], profile, floats[k], res, floats[k + 1], _STATES[state],
                   floats[k + 2], floats[k + 4], alloc, floats[k + 5], floats[k + 3])

    def csv_plain(self) -> bool:
        """Whether no job's name, profile or allocation text, nor any workload name, holds a
        character a CSV field must be quoted for (comma, quote, line break): the row writer then
        writes every field as is, without looking at each (:func:`.outputs._csv_field`)."""
        text = self._text
        return (not any(c in text for c in (b",", b'"', b"\r", b"\n"))
                and not any(c in w for w in self._workloads for c in ',"\r\n'))

    def _all_fields(self) -> Iterator[tuple]:
        """:meth:`fields` of every job, in order, when the texts are ASCII (a character a byte:
        the text is decoded once) and every allocation is a ProcSet."""
        floats, ints, workloads = self._floats, self._ints, self._workloads
        text = self._text.decode("ascii")
        start = 0
        for row, (end, res, state, wl, ln, lp) in enumerate(zip(self._ends, ints[0::6], ints[2::6], ints[3::6],
                                                                  ints[4::6], ints[5::6])):
            k = 6 * row
            a = start + ln
            b = a + lp
            yield (text[start:a], workloads[wl], text[a:b], floats[k], res, floats[k + 1], _STATES[state],
                   floats[k + 2], floats[k + 4], text[b:end], floats[k + 5], floats[k + 3])
            start = end

    def _strings(self, row: int) -> tuple[str, str, str]:
        """The name, profile and allocation text (``0-3 7``) of the job of ``row``."""
        k = 6 * row
        ln, lp = self._ints[k + 4], self._ints[k + 5]
        ends = self._ends
        record = self._text[ends[row - 1] if row else 0:ends[row]].decode("utf-8", "surrogatepass")
        alloc = record[ln + lp:] if row not in self._other_alloc else f"{self._other_alloc[row]}"
        return record[:ln], record[ln:ln + lp], alloc

    def id_and_alloc(self, row: int) -> tuple[str, str]:
        """The job id (``workload!name``) and allocation text (``0-3 7``) of the job of ``row``."""
        name, _, alloc = self._strings(row)
        return f"{self._workloads[self._ints[6 * row + 3]]}!{name}", alloc

    def all_finite(self) -> bool:
        """Every ended job's start, finish (start + runtime) and energy is a finite number (a
        quick check, in C loops, before :func:`~.outputs.check_finite` looks for the culprit)."""
        starts, runtimes, energies = self._floats[2::6], self._floats[4::6], self._floats[5::6]
        return (all(map(isfinite, starts)) and all(map(isfinite, energies))
                and all(map(isfinite, map(add, starts, runtimes))))

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self._ends)
        if not -n <= i < n:
            raise IndexError(f"finished job {i} of {n}")
        row = i % n
        name, workload, profile, sub, res, wall, state, start, runtime, alloc_text, energy, _ = \
            next(self.fields((row,)))
        if row in self._other_alloc:
            alloc = self._other_alloc[row]
        else:
            alloc = ProcSet.from_str(alloc_text) if alloc_text else None
        return DoneJob(f"{workload}!{name}", name, workload, profile, sub, wall, res, state, start,
                       self._floats[6 * row + 3], runtime, alloc, self._ints[6 * row + 1], energy)

    def __iter__(self) -> Iterator[DoneJob]:
        for row in range(len(self._ends)):
            yield self[row]

    def __eq__(self, other: object) -> bool:
        """Equal to a list (or another such table) of the same records, field by field."""
        if not isinstance(other, (list, tuple, DoneJobs, JobRows)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # a mutable sequence, as the list it replaces

    def __repr__(self) -> str:
        return f"<DoneJobs: {len(self)} jobs>"


class JobRows:
    """``out_jobs.csv``'s rows: the jobs of a :class:`DoneJobs` in the order their rows were
    written (Batsim writes a job's row when its server receives the job's end, which on a
    platform with a network can come after another job's end), as a read-only list."""

    __slots__ = ("done", "order")

    def __init__(self, done: DoneJobs) -> None:
        self.done = done
        self.order = array("q")  # the rows of ``done``, in writing order

    def append(self, row: int) -> None:
        self.order.append(row)

    def in_done_order(self) -> bool:
        """The rows were written in the order the jobs ended."""
        return len(self.order) == len(self.done) and self.order == array("q", range(len(self.order)))

    def fields(self) -> Iterator[tuple]:
        """:meth:`DoneJobs.fields` of the rows, in writing order."""
        return self.done.fields(self.order)

    def all_finite(self) -> bool:
        """:meth:`DoneJobs.all_finite` (the rows are ended jobs of ``done``)."""
        return self.done.all_finite()

    def csv_plain(self) -> bool:
        """:meth:`DoneJobs.csv_plain` (the rows are ended jobs of ``done``)."""
        return self.done.csv_plain()

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self.done[r] for r in self.order[i]]
        return self.done[self.order[i]]

    def __iter__(self) -> Iterator[DoneJob]:
        for r in self.order:
            yield self.done[r]

    __eq__ = DoneJobs.__eq__
    __hash__ = None  # type: ignore[assignment]


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
        self._counts.frombytes(_PACK_5I(*row[1:6]))

    def columns(self) -> tuple[array, array, array, array, array, array]:
        """The rows as six columns: times (s), then the counts of each state."""
        c = self._counts
        return (self._time, c[0::5], c[1::5], c[2::5], c[3::5], c[4::5])

    def add(self, t: float, counts: tuple[int, int, int, int, int]) -> None:
        """``append((t, *counts))``, without making the row's tuple."""
        self._time.append(t)
        self._counts.frombytes(_PACK_5I(*counts))

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
    wattmin (W), epower (W, or None for NA))`` — kept in arrays (42 bytes a row instead of about
    250). Behaves as the list of tuples it replaces (``append``, ``len``, iteration, indexing).
    A row may also carry the part of its energy that a double cannot hold (``append``'s
    ``energy_low``, J): Batsim prints a ``long double`` sum (:meth:`exact_energies`)."""

    __slots__ = ("_vals", "_kind", "_low")

    def __init__(self) -> None:
        # time, energy, wattmin, epower of each row, one after the other (one extend a row)
        self._vals = array("d")
        self._kind = bytearray()  # the kind's character; bit 7 set when epower is None
        self._low = array("d")    # energy - the double energy (J), 0 when exact

    def append(self, row: tuple, energy_low: float = 0.0) -> None:
        t, e, kind, wmin, ep = row
        if ep is None:
            self._vals.frombytes(_PACK_4D(t, e, wmin, 0.0))
            self._kind.append(ord(kind) | 0x80)
        else:
            self._vals.frombytes(_PACK_4D(t, e, wmin, ep))
            self._kind.append(ord(kind))
        self._low.append(energy_low)

    def exact_energies(self) -> Iterator[tuple[float, float]]:
        """Each row's energy as ``(double, remainder)`` (J): their exact sum is the row's energy."""
        return zip(self._vals[1::4], self._low)

    def columns(self) -> tuple[array, array, bytearray, array, array, array]:
        """The rows as columns: times (s), energies (J), kinds (the character's code, bit 7 set
        when epower is None), wattmins (W), epowers (W; 0.0 when None) and energy remainders (J)."""
        v = self._vals
        return v[0::4], v[1::4], self._kind, v[2::4], v[3::4], self._low

    def __len__(self) -> int:
        return len(self._kind)

    def __getitem__(self, i: int) -> tuple:
        k = self._kind[i]  # IndexError as a list
        i %= len(self._kind)
        t, e, w, p = self._vals[4 * i:4 * i + 4]
        return (t, e, chr(k & 0x7F), w, None if k & 0x80 else p)

    def __iter__(self) -> Iterator[tuple]:
        for t, e, k, w, p, _ in zip(*self.columns()):
            yield (t, e, chr(k & 0x7F), w, None if k & 0x80 else p)


def output_rows(done: DoneJobs | None = None) -> dict[str, Any]:
    """The engine's empty output rows: ``jobs`` (the :class:`JobRows` of ``done``, an empty list
    without it), ``machine_states`` (:class:`MachineStateRows`), ``energy``
    (:class:`EnergyRows`), ``pstates`` (a list of ``(time, hosts, pstate)``)."""
    return {"jobs": [] if done is None else JobRows(done), "machine_states": MachineStateRows(),
            "energy": EnergyRows(), "pstates": []}


class RunRecord:
    """What a run records besides its jobs and hosts: the output tables, Batsim's energy context
    of ``out_schedule.csv`` and the exchanges with the scheduler.

    A component of :class:`schedulers.engine.simulator.Engine`, filled by the others (the
    server, the executions, :class:`.hosts.Machines`, :class:`.switching.Switches`) and read by
    :func:`build_result`. It asks the others for nothing.

    Args:
        done: the ended jobs (:attr:`.jobs.JobBook.done`), whose rows ``out_jobs.csv`` lists.
        trace: keep the output rows (needed to write files); otherwise the tables stay empty.
        machine_names: every machine's name in Batsim's id order (compute, then storage), for
            the Pajé trace.

    Attributes:
        rows: the output tables (:func:`output_rows`, with ``schedule_trace`` when ``trace``).
        paje: the Pajé schedule trace (``out_schedule.trace``) or None without ``trace``.
        first_submission, last_job_end: the platform's energy (J) when the first job was
            submitted and at the last job end, as ``(double, remainder)`` of Batsim's
            ``long double`` (:meth:`.hosts.Machines.total_exact`); ``(-1, 0)`` until then, as
            Batsim's ``consumed_joules`` context (``export.cpp``, ``JobsTracer::finalize``).
        messages: messages sent to the scheduler.
        sched_time: wall time spent in the scheduler (s).
    """

    def __init__(self, done: DoneJobs, *, trace: bool, machine_names: list[str]) -> None:
        self.rows: dict[str, Any] = output_rows(done if trace else None)
        self.paje: ScheduleTraceRows | None = None
        if trace:
            self.paje = self.rows["schedule_trace"] = ScheduleTraceRows(machine_names)
        self.first_submission = (-1.0, 0.0)
        self.last_job_end = (-1.0, 0.0)
        self.messages = 0
        self.sched_time = 0.0


def execution_time(job: EngineJob) -> float:
    """The execution time Batsim reports for a finished job (s): its runtime, or
    :data:`NULL_RUNTIME_EPSILON` when the job took no time."""
    return job.runtime if job.runtime > 0 else NULL_RUNTIME_EPSILON


@dataclass
class EngineResult:
    """What a run produced (also written to files when an export prefix is given).

    Attributes:
        jobs: every job in completion/rejection order (a :class:`DoneJobs`: a read-only list of
            :class:`DoneJob` records).
        makespan: finish time of the last job (s).
        consumed_joules: Batsim's ``consumed_joules`` (J): energy at the last job end minus energy
            at the first job submission; 0 without energy.
        total_joules: energy of all compute hosts from 0 to the end of the simulation (J).
        schedule: the out_schedule.csv row as a dict.
        rows: lists of output rows (``jobs``, ``machine_states``, ``energy``, ``pstates``).
        messages: number of Batsim messages sent to the scheduler.
        end_time: simulated time of SIMULATION_ENDS (s).
        platform: the platform file it ran on (for error messages), "" when not known.
    """

    jobs: DoneJobs | Sequence[DoneJob]
    makespan: float
    consumed_joules: float
    schedule: dict[str, Any]
    rows: dict[str, list]
    messages: int
    end_time: float
    total_joules: float = 0.0
    platform: str = ""


def build_result(record: RunRecord, book: JobBook, machines: Machines, switches: Switches, clock: Clock,
                 platform: PlatformSpec, energy: bool, wall: float) -> EngineResult:
    """The :class:`EngineResult` of a finished run that took ``wall`` seconds (s): its jobs
    (``book.done``), the ``out_schedule.csv`` values (Batsim's ``JobsTracer::finalize``,
    ``export.cpp``) from the ``record``, the ``machines`` (time in each state, energy read now,
    which updates every host) and the ``switches`` (switch counts), its end time (``clock``)."""
    jobs: DoneJobs = book.done
    n = len(jobs)
    floats, states = jobs._floats, jobs._ints[2::6]
    rejected_code, success_code = _STATE_CODE["REJECTED"], _STATE_CODE["COMPLETED_SUCCESSFULLY"]
    # per executed job, in order: execution time, turnaround, waiting time, slowdown (as the
    # list comprehensions over the jobs this replaces: the same sums, in the same order)
    subs, starts, runs = floats[0::6], floats[2::6], floats[4::6]
    if rejected_code in states:
        executed_rows = [c != rejected_code for c in states]
        subs, starts, runs = (array("d", compress(c, executed_rows)) for c in (subs, starts, runs))
    ex = array("d", (r if r > 0 else NULL_RUNTIME_EPSILON for r in runs))
    ends = array("d", map(add, starts, ex))
    makespan = max(ends, default=0.0)
    turn = array("d", map(_minus, ends, subs))
    wait = array("d", map(_minus, starts, subs))
    slow = array("d", map(truediv, turn, ex))
    executed = len(ex)
    success = states.count(success_code)
    rejected = n - executed
    # long double differences and sums, cast to double for printing (export.cpp): exact here
    last, first = record.last_job_end, record.first_submission
    consumed = exact_sum((*last, -first[0], -first[1])) if energy else 0.0
    t_in = {s: t + machines.time_lo[s] for s, t in machines.time_in.items()}
    sched = {
        "batsim_version": "v4.2.1", "consumed_joules": consumed, "makespan": makespan,
        "max_slowdown": max(slow, default=0.0), "max_turnaround_time": max(turn, default=0.0),
        "max_waiting_time": max(wait, default=0.0),
        "mean_slowdown": sum(slow) / n if n else 0.0, "mean_turnaround_time": sum(turn) / n if n else 0.0,
        "mean_waiting_time": sum(wait) / n if n else 0.0,
        "nb_computing_machines": len(machines.hosts) + len(platform.storage),
        "nb_grouped_switches": switches.nb_grouped_switches,
        "nb_jobs": n, "nb_jobs_finished": n - rejected, "nb_jobs_killed": executed - success,
        "nb_jobs_rejected": rejected, "nb_jobs_success": success,
        "nb_machine_switches": switches.nb_machine_switches, "scheduling_time": record.sched_time,
        "simulation_time": wall, "success_rate": success / n if n else 0.0,
        "time_computing": t_in[HostState.COMPUTING], "time_idle": t_in[HostState.IDLE],
        "time_sleeping": t_in[HostState.SLEEPING], "time_switching_off": t_in[HostState.SWITCHING_OFF],
        "time_switching_on": t_in[HostState.SWITCHING_ON], "time_unavailable": t_in[HostState.UNAVAILABLE],
    }
    rows = record.rows
    if isinstance(rows["jobs"], JobRows) and rows["jobs"].in_done_order():
        rows["jobs"] = jobs  # the rows are the result's jobs (always so without a network)
    total = machines.total_energy(clock.now) if energy else 0.0
    return EngineResult(jobs=jobs, makespan=makespan, consumed_joules=consumed, schedule=sched,
                        rows=rows, messages=record.messages,
                        end_time=clock.end_time(), total_joules=total,
                        platform=platform.source)
