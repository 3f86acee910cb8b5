"""Write Batsim 4.2.1's output files from an engine run.

Files (``PREFIX`` is Batsim's ``-e``, e.g. ``out/out_``):

* ``PREFIXjobs.csv``: one row per job in completion (or rejection) order; floats ``%f``; a
  profile name holding a comma, quote or line break is quoted as CSV (Batsim writes it raw);
  rejected jobs have empty time columns; ``consumed_energy`` is -1 without energy;
  ``execution_time`` of a null-duration job is 1e-5 s as in Batsim.
* ``PREFIXschedule.csv``: the aggregate row (makespan, mean/max waiting, turnaround, slowdown =
  stretch, machine-state times — accumulated only when a machine leaves a state, as Batsim does).
  ``batsim_version`` names the Batsim release whose behaviour and formats the engine reproduces.
* ``PREFIXmachine_states.csv``: counts of machines per state, a row after each job start/end and
  switch; time written ``%g``.
* ``PREFIXconsumed_energy.csv`` and ``PREFIXpstate_changes.csv`` only with energy (``-E``).
* ``PREFIXschedule.trace``: the Pajé schedule trace (:mod:`.paje`; not with
  ``schedule_trace=False``, Batsim's ``--disable-schedule-tracing``).

Formats checked against ``shared/batsim-4.2.1/outputs``.
"""

from __future__ import annotations

import csv
import decimal
import io
import math
from array import array
from fractions import Fraction
from itertools import islice
from pathlib import Path
from typing import Any, Iterable, Iterator, cast

from ..outfiles import atomic_output
from ..core.metrics import RunSummary, busy_host_seconds, summarize_columns
from .results import NULL_RUNTIME_EPSILON, DoneJob, DoneJobs, EnergyRows, JobRows, MachineStateRows
from .simulator import EngineError, EngineResult
from .workload import EngineJob

_floor, _ulp = math.floor, math.ulp

_MICRO = decimal.Decimal("0.000001")

JOBS_HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,"
               "success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,"
               "stretch,allocated_resources,consumed_energy,metadata")
SCHEDULE_COLUMNS = ("batsim_version", "consumed_joules", "makespan", "max_slowdown", "max_turnaround_time",
                    "max_waiting_time", "mean_slowdown", "mean_turnaround_time", "mean_waiting_time",
                    "nb_computing_machines", "nb_grouped_switches", "nb_jobs", "nb_jobs_finished",
                    "nb_jobs_killed", "nb_jobs_rejected", "nb_jobs_success", "nb_machine_switches",
                    "scheduling_time", "simulation_time", "success_rate", "time_computing", "time_idle",
                    "time_sleeping", "time_switching_off", "time_switching_on", "time_unavailable")


def _f(x: float) -> str:
    """``x`` as Batsim prints it (``%f``); the row writers inline it as ``{x:f}``, the same text."""
    return "%f" % x


_CSV_SPECIAL = frozenset(',"\r\n')


def _csv_field(text: str) -> str:
    """``text`` as one CSV field: unchanged when it holds no comma, quote or line break (every id
    :func:`~schedulers.engine.workload.job_name` accepts, and ordinary profile names, so the
    file stays byte-identical to Batsim's), else quoted by the :mod:`csv` module (Batsim writes
    such a field raw, which splits the row)."""
    if _CSV_SPECIAL.isdisjoint(text):
        return text
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerow([text])  # fields holding \r or \n get quoted
    return buf.getvalue()[:-2]


def job_rows(result: EngineResult) -> list[str]:
    """The lines of out_jobs.csv (header first)."""
    return job_lines(result.rows["jobs"])


def job_lines(jobs: Iterable[EngineJob]) -> list[str]:
    """The lines of out_jobs.csv (header first) for finished or rejected ``jobs``, in order (also
    a partial file of the jobs done so far)."""
    return list(iter_job_lines(jobs))


def job_fields(jobs: Iterable[EngineJob | DoneJob] | DoneJobs | JobRows) -> Iterator[tuple]:
    """The ``out_jobs.csv`` fields of ``jobs`` (see :meth:`DoneJobs.fields`): read from the
    columns of the engine's tables, or from each job of any other iterable."""
    if isinstance(jobs, (DoneJobs, JobRows)):
        return jobs.fields()
    return ((j.name, j.workload, j.profile, j.subtime, j.res, j.walltime, j.state, j.start, j.runtime,
             f"{j.alloc}", j.energy, j.finish) for j in jobs)


def _long_double(x: Fraction) -> Fraction:
    """``x`` rounded to the x87 ``long double`` of Batsim's job times (64-bit significand, to
    nearest, ties to even; normal numbers)."""
    if not x:
        return x
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length() - 64
    while a >= Fraction(2) ** (e + 64):
        e += 1
    while a < Fraction(2) ** (e + 63):
        e -= 1
    q = round(a / Fraction(2) ** e) * Fraction(2) ** e
    return q if x > 0 else -q


#: ``1e-5l``, the runtime Batsim gives a job that took none (``jobs_execution.cpp``)
_LD_NULL_RUNTIME = _long_double(Fraction(1, 100_000))


def batsim_stretch(subtime: float, start: float, finish: float) -> float:
    """A job's ``stretch`` as Batsim 4.2.1 computes it (``JobsTracer::write_job``,
    ``src/export.cpp``): ``(starting_time + runtime - submission_time) / runtime`` in ``long
    double`` (``runtime = clock - starting_time``, ``1e-5l`` when 0, ``src/jobs_execution.cpp``),
    then cast to double. Exact rational arithmetic with each operation rounded as the x87 unit
    rounds it: used where the double quotient is within rounding of a printed digit's boundary
    (a 0.001-s job started 5e-10 s after its submission on a ``Full`` zone: Batsim prints
    1.000001, the double quotient 1.0000004999999998 prints 1.000000; recorded on real Batsim)."""
    s = Fraction(start)
    run = _long_double(Fraction(finish) - s)
    if not run:
        run = _LD_NULL_RUNTIME
    turnaround = _long_double(_long_double(s + run) - Fraction(subtime))
    return float(_long_double(turnaround / run))


def iter_job_lines(jobs: Iterable[EngineJob | DoneJob] | DoneJobs | JobRows,
                   columns: JobColumns | None = None,
                   metadata: dict[tuple[str, str], str] | None = None,
                   energies: dict[tuple[str, str], str] | None = None) -> Iterator[str]:
    """:func:`job_lines`, one line at a time (a million-job file is written without holding it);
    ``columns``: also filled with what a summary reads of the lines (:class:`JobColumns`);
    ``metadata``: the ``metadata`` column of the jobs the scheduler gave one (SET_JOB_METADATA),
    by (workload, job name); the others get Batsim's empty ``""``. ``energies``: the
    ``consumed_energy`` text of the jobs whose double prints another 6th decimal than Batsim's
    ``long double`` (:func:`.jobenergy.job_energy`), by (workload, job name)."""
    yield JOBS_HEADER
    if not metadata and not energies:
        yield from _job_lines(jobs, columns)
        return
    metadata, energies = metadata or {}, energies or {}
    # the fields of each line, in the order _job_lines writes them: name, workload first
    for fields, line in zip(job_fields(jobs), _job_lines(jobs, columns)):
        key = (fields[1], fields[0])
        energy = energies.get(key)
        if energy is not None:   # (a started job's line ends with ',ENERGY,""')
            line = f'{line[:-3].rpartition(",")[0]},{energy},""'
        text = metadata.get(key)
        yield line if text is None else f'{line[:-2]}"{text}"'


#: A started job's line from its name, workload, profile, subtime text, res, walltime (s),
#: success (0/1), state, start, execution and finish texts, waiting time, turnaround time (s),
#: stretch, allocation text and consumed energy (J): one ``%`` per line (``%f`` is ``{:f}``).
_JOB_LINE = '%s,%s,%s,%s,%s,%f,%d,%s,%s,%s,%s,%f,%f,%f,%s,%f,""'


def _job_lines(jobs: Iterable[EngineJob | DoneJob] | DoneJobs | JobRows,
               columns: JobColumns | None) -> Iterator[str]:
    """The lines of :func:`iter_job_lines` (without header), filling ``columns`` (if any) as it
    goes with each job's final state, ``res`` and its submission, start, execution and finish
    times read back from their texts (0.0 for a rejected job's empty fields)."""
    if columns is not None:   # (their append methods)
        states = columns.final_state.append
        subs, starts, execs, fins, reqs = (c.append for c in (
            columns.submission, columns.starting, columns.execution, columns.finish, columns.res))
    job_line = _JOB_LINE
    # (the engine's tables say at once when no text needs quoting: no _csv_field call per field)
    plain = isinstance(jobs, (DoneJobs, JobRows)) and jobs.csv_plain()
    for name, workload, profile, subtime, res, walltime, state, start, runtime, alloc, energy, finish in job_fields(jobs):
        if not plain:
            name, workload, profile = _csv_field(name), _csv_field(workload), _csv_field(profile)
        sub = "%f" % subtime
        if state == "REJECTED":
            t_start = t_ex = t_fin = "0"   # (empty fields: 0.0 in the columns)
            yield "%s,%s,%s,%s,%s,%f,0,REJECTED,,,,,,,,,\"\"" % (name, workload, profile, sub, res, walltime)
        else:
            ex = runtime if runtime > 0 else NULL_RUNTIME_EPSILON  # execution_time()
            fin = start + ex
            turn = fin - subtime
            stretch = turn / ex
            f = stretch * 1e6
            # the printed digit hinges on the last bits, or the double quotient overflows where
            # Batsim's long double does not (a job ending 1e300 s after its submission)
            if f == math.inf or abs(f - _floor(f) - 0.5) < 1e-6 + 16.0 * _ulp(f):
                stretch = batsim_stretch(subtime, start, finish)
            t_start, t_ex, t_fin = "%f" % start, "%f" % ex, "%f" % fin
            yield job_line % (name, workload, profile, sub, res, walltime,
                              state == "COMPLETED_SUCCESSFULLY", state, t_start, t_ex, t_fin, start - subtime,
                              turn, stretch, alloc, energy)
        if columns is not None:
            states(state)
            reqs(res)
            subs(float(sub))
            starts(float(t_start))
            execs(float(t_ex))
            fins(float(t_fin))


def schedule_rows(result: EngineResult) -> list[str]:
    """The two lines of out_schedule.csv."""
    vals = []
    for c in SCHEDULE_COLUMNS:
        v = result.schedule[c]
        vals.append(v if isinstance(v, str) else (str(v) if isinstance(v, int) else _f(v)))
    return [",".join(SCHEDULE_COLUMNS), ",".join(vals)]


def machine_state_rows(result: EngineResult) -> list[str]:
    """The lines of out_machine_states.csv: time (s, ``%g``) and machine counts per state."""
    return list(_iter_machine_state_rows(result))


def _iter_machine_state_rows(result: EngineResult) -> Iterator[str]:
    yield "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing"
    rows = result.rows["machine_states"]
    if isinstance(rows, MachineStateRows):   # its columns, formatted in one C loop (faster with % than str.format)
        yield from map("%g,%d,%d,%d,%d,%d".__mod__, zip(*rows.columns()))
        return
    for r in rows:
        yield "%g,%d,%d,%d,%d,%d" % r


def energy_rows(result: EngineResult) -> list[str]:
    """The lines of out_consumed_energy.csv: time (s), total energy (J), event type (``s`` job
    start, ``e`` job end, ``p`` pstate change), ``wattmin`` (W, sum of the Epsilon powers of the
    current pstates, as SimGrid's ``get_watt_min_at``) and ``epower`` (W, mean power since the previous row; NA at the same time)."""
    return list(_iter_energy_rows(result))


def _iter_energy_rows(result: EngineResult) -> Iterator[str]:
    yield "time,energy,event_type,wattmin,epower"
    rows = result.rows["energy"]
    if isinstance(rows, EnergyRows):   # its columns, without making each row's tuple
        for t, e, k, wmin, ep, low in zip(*rows.columns()):
            if not low and k < 0x80:   # (the common row: one % for it; %c of the kind's code)
                yield "%f,%f,%c,%f,%f" % (t, e, k, wmin, ep)
                continue
            energy = "%f" % e if not low else _exact_f(e, low)
            yield "%f,%s,%c,%f,%s" % (t, energy, k & 0x7F, wmin, "NA" if k & 0x80 else "%f" % ep)
        return
    for (t, e, kind, wmin, ep) in rows:
        yield "%f,%f,%s,%f,%s" % (t, e, kind, wmin, "NA" if ep is None else "%f" % ep)


def _exact_f(hi: float, lo: float) -> str:
    """``hi + lo`` (two doubles, summed exactly) printed as C's ``%Lf`` prints a ``long double``
    holding it: 6 decimals, rounded half to even on the exact value (Batsim's energy column)."""
    if not (math.isfinite(hi) and math.isfinite(lo)):
        return f"{hi:f}"
    with decimal.localcontext() as ctx:
        ctx.prec = 400   # a double's integer part has at most 309 digits
        return str((decimal.Decimal(hi) + decimal.Decimal(lo)).quantize(_MICRO, rounding=decimal.ROUND_HALF_EVEN))


def pstate_rows(result: EngineResult) -> list[str]:
    """The lines of out_pstate_changes.csv: time (s), machine ids, pstate (-1/-2 while switching
    towards a computation/sleep pstate)."""
    out = ["time,machine_id,new_pstate"]
    out.extend("%g,%s,%d" % r for r in result.rows["pstates"])
    return out


def check_finite(result: EngineResult) -> None:
    """Refuse to write a NaN or an infinity: every time, energy and metric of the run must be a
    finite number. Inputs are bounded so that this holds (:mod:`.workload`, :mod:`.platform`);
    what is left is a computation whose duration (flops / speed) overflows the sums.

    Raises:
        EngineError: naming the first job or ``out_schedule.csv`` column that is not finite.
    """
    jobs = result.rows["jobs"]
    quick = isinstance(jobs, (DoneJobs, JobRows)) and jobs.all_finite()
    for name, workload, _, _, _, _, state, start, runtime, _, energy, _ in () if quick else job_fields(jobs):
        if state == "REJECTED":
            continue
        finish = start + (runtime if runtime > 0 else NULL_RUNTIME_EPSILON)  # start + execution_time()
        for what, v in (("start", start), ("finish", finish), ("energy", energy)):
            if not math.isfinite(v):
                on = f" on the hosts of {result.platform}" if result.platform else ""
                raise EngineError(f"job {workload}!{name}: its {what} is {v}, not a finite number; its "
                                  f"computation is too long for the engine (flops / speed overflows{on})")
    for k, v in result.schedule.items():
        if isinstance(v, float) and not math.isfinite(v):
            on = f" (a computation too long for the hosts of {result.platform}?)" if result.platform else ""
            raise EngineError(f"out_schedule.csv: {k} is {v}, not a finite number; the run's times or "
                              f"energies are too large to sum{on}")
    rows = result.rows["energy"]  # time and energy only grow: the last row has the largest
    if rows and not all(math.isfinite(v) for v in (rows[-1][0], rows[-1][1], rows[-1][3])):
        raise EngineError(f"out_consumed_energy.csv: row {rows[-1]} is not finite")


class JobColumns:
    """The columns of ``out_jobs.csv`` a summary reads, as the file prints them (the doubles its
    ``"%f"`` texts read back as), filled while :func:`write_outputs` writes it
    (``columns=``): a summary of the run without reading the file back, the same
    :class:`~schedulers.core.metrics.RunSummary`, to the last bit, as
    :func:`~schedulers.core.metrics.summarize_outputs` gives of the files.

    Attributes:
        final_state: one text per job. submission, starting, execution, finish: times (s);
            0.0 for a rejected job's empty fields, as the reader takes them. res: requested
            hosts.
    """

    __slots__ = ("final_state", "submission", "starting", "execution", "finish", "res")

    def __init__(self) -> None:
        self.final_state: list[str] = []
        self.submission, self.starting, self.execution, self.finish, self.res = (array("d") for _ in range(5))

    def summary(self, nb_hosts: int, consumed_joules: float | None = None,
                jobs: Iterable[DoneJob] | None = None) -> RunSummary:
        """The run's summary; ``consumed_joules``: ``out_schedule.csv``'s (J, None without
        energy), read as the file prints it; ``jobs``: the run's jobs when it had compute
        sharing (each host's busy time is then counted once: :func:`busy_of`).

        Raises:
            ValueError: ``nb_hosts`` < 1.
        """
        joules = None if consumed_joules is None else float(f"{consumed_joules:f}")
        return summarize_columns(self.final_state, self.submission, self.starting, self.execution, self.finish,
                                 self.res, nb_hosts=nb_hosts, energy_joules=joules,
                                 busy=None if jobs is None else busy_of(jobs))


def busy_of(jobs: Iterable[DoneJob]) -> float:
    """The hosts' busy time (host-s) of a run's executed ``jobs``, each host counted once when
    jobs overlap on it (compute sharing: :func:`~schedulers.core.metrics.busy_host_seconds`), from
    the start and execution times (a null runtime printed as Batsim's
    :data:`~.results.NULL_RUNTIME_EPSILON`) as ``out_jobs.csv`` prints them (``%f``): the value
    :func:`~schedulers.core.metrics.summarize_outputs` reads of the file."""
    ran = [j for j in jobs if j.state != "REJECTED"]
    return busy_host_seconds((float("%f" % j.start) for j in ran),
                             (float("%f" % (j.runtime if j.runtime > 0 else NULL_RUNTIME_EPSILON)) for j in ran),
                             (j.alloc for j in ran))


def write_outputs(result: EngineResult, prefix: str | Path, *, energy: bool, schedule_trace: bool = True,
                  machine_states: bool = True, columns: JobColumns | None = None) -> list[Path]:
    """Write Batsim's output files with ``prefix`` (folders are created). Returns the paths.
    ``schedule_trace``/``machine_states`` False: not the Pajé trace / ``machine_states.csv``
    (Batsim's ``--disable-schedule-tracing``/``--disable-machine-state-tracing``). ``columns``:
    filled with what a summary reads of ``jobs.csv`` (:class:`JobColumns`).

    Each file is written to a temporary name and renamed when complete
    (:func:`schedulers.outfiles.atomic_output`).

    Raises:
        EngineError: a value to write is not finite (:func:`check_finite`); nothing is written.
        OutputWriteError: a file could not be written (disk full...): named; the files before
            it are written, that one is not there (no file is ever cut mid-row).
    """
    check_finite(result)
    prefix = str(prefix)
    Path(prefix).parent.mkdir(parents=True, exist_ok=True)
    # (SET_JOB_METADATA's texts by (workload, job name): a dict among the row lists, Server._set_job_metadata)
    # (and the consumed_energy texts of Batsim's long doubles: Executions.end_job)
    files = {"jobs.csv": lambda r: iter_job_lines(r.rows["jobs"], columns,
                                                  cast("dict[tuple[str, str], str] | None", r.rows.get("job_metadata")),
                                                  cast("dict[tuple[str, str], str] | None", r.rows.get("job_energy"))),
             "schedule.csv": schedule_rows}
    if machine_states:
        files["machine_states.csv"] = _iter_machine_state_rows
    if energy:
        files["consumed_energy.csv"] = _iter_energy_rows
        files["pstate_changes.csv"] = pstate_rows
    paje: Any = result.rows.get("schedule_trace")
    if schedule_trace and paje is not None:
        files["schedule.trace"] = lambda r: paje.lines(r.jobs, r.end_time)
    paths = []
    for name, fn in files.items():
        p = Path(prefix + name)
        # written whole or not at all (a full disk: OutputWriteError names the file, none is cut mid-row)
        with atomic_output(p, newline="") as f:  # line by line: "\n" after each, as before
            lines = iter(fn(result))
            while chunk := list(islice(lines, 4096)):
                chunk.append("")
                f.write("\n".join(chunk))
        paths.append(p)
    return paths
