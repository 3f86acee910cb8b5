"""Standard Workload Format (SWF) -> Batsim workload.

SWF is the format of the Parallel Workloads Archive, defined by Chapin, Cirne, Feitelson et al.
("Benchmarks and standards for the evaluation of parallel job schedulers", JSSPP 1999) and
maintained by Feitelson et al. (Feitelson, Tsafrir and Krakov, "Experience with using the Parallel
Workloads Archive", JPDC 74(10), 2014; https://www.cs.huji.ac.il/labs/parallel/workload/swf.html).
A file is a header of ``;`` comment lines (``; MaxProcs: 128``, ``; UnixStartTime: ...``) followed
by one line per job with 18 whitespace-separated numeric fields, -1 meaning "unknown":

====  =====================================  ====  =====================================
 1    job number                              10   requested memory (KB per processor)
 2    submit time (s)                         11   status: 1 completed, 0 failed,
 3    wait time (s)                                5 cancelled, 2/3/4 partial executions
 4    run time (s)                            12   user id
 5    number of allocated processors          13   group id
 6    average CPU time used (s)               14   executable (application) number
 7    used memory (KB per processor)          15   queue number
 8    requested number of processors          16   partition number
 9    requested time (s)                      17   preceding job number
                                              18   think time from preceding job (s)
====  =====================================  ====  =====================================

This module also holds what every trace converter shares: :class:`ConversionReport` (counts of
records read, jobs kept and jobs dropped by reason, plus every -1 or adjustment applied),
:class:`ConvertedWorkload` (the Batsim workload dict, carrying its report as ``.report``) and
:class:`TraceConversion` (the rules applied record by record, into that dict or, without holding
the jobs, straight into the workload file: ``gridsched run``'s path). The Grid Workloads Format
converter (:mod:`schedulers.inputs.gwf`) reuses the same rules.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import tempfile
import zlib
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import IO, Any, Literal

from ..core.limits import MAX_NB_RES
from ..outfiles import check_output_file, make_folder, not_written
from .errors import WorkloadError

__all__ = [
    "ConversionReport",
    "ConvertedWorkload",
    "SWF_FIELDS",
    "TraceRecord",
    "TraceConversion",
    "check_nb_hosts",
    "read_swf",
    "swf_conversion",
    "swf_to_batsim",
]

#: Names of the 18 SWF fields, in order (field n is ``SWF_FIELDS[n - 1]``).
SWF_FIELDS = (
    "job_number", "submit_time", "wait_time", "run_time", "allocated_processors",
    "average_cpu_time", "used_memory", "requested_processors", "requested_time",
    "requested_memory", "status", "user_id", "group_id", "executable", "queue",
    "partition", "preceding_job", "think_time",
)

#: Largest time (s) of a Batsim workload ``gridsched run`` accepts (2**33 s, about 272 years:
#: :data:`schedulers.engine.workload.MAX_TIME`): a trace's longer times are refused at conversion.
MAX_TIME = float(2 ** 33)

#: SWF/GWF status values (field 11 of SWF, column Status of GWF).
STATUS_FAILED, STATUS_COMPLETED, STATUS_CANCELLED = 0, 1, 5
STATUS_PARTIAL = (2, 3, 4)

TimeOrigin = Literal["first", "zero"] | float
WalltimeRule = Literal["requested", "runtime", "none"]
RuntimeSource = Literal["run", "requested"]
Oversized = Literal["drop", "clamp", "error"]


# --------------------------------------------------------------------------------------------
# Report and result
# --------------------------------------------------------------------------------------------

@dataclass
class ConversionReport:
    """What a conversion did: records read, jobs kept, jobs dropped by reason, adjustments made.

    Attributes:
        source: the input file.
        format: ``"swf"``, ``"gwf"`` or ``"batsim-json"`` (rescaling).
        records_read: job records (non-comment lines, or jobs of a JSON workload) read.
        jobs_kept: jobs in the output workload.
        dropped: reason -> number of records dropped for it (each record counts once, for the
            first rule that drops it).
        notes: what -> number of *kept* jobs it applies to (every -1 substituted, every
            adjustment such as clamping, every job Batsim will kill at its walltime).
        nb_res: ``nb_res`` of the output workload.
        cores_per_host: processors grouped into one host (res = ceil(processors / it)), for a
            trace; None for a rescaled JSON workload.
        time_origin: trace time (s) subtracted from submit times, or None when not applicable.
        header: ``Key: value`` pairs of the SWF header (first occurrence of each key).
        output: file written, when the conversion wrote one (see :func:`convert_trace`).

    Invariant: ``records_read == jobs_kept + jobs_dropped``.
    """

    source: str
    format: str
    records_read: int = 0
    jobs_kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    notes: dict[str, int] = field(default_factory=dict)
    nb_res: int | None = None
    time_origin: float | None = None
    cores_per_host: int | None = None
    header: dict[str, str] = field(default_factory=dict)
    output: str | None = None

    @property
    def jobs_dropped(self) -> int:
        """Total number of records dropped (sum of :attr:`dropped`)."""
        return sum(self.dropped.values())

    def drop(self, reason: str, count: int = 1) -> None:
        """Count ``count`` records dropped for ``reason``."""
        if count:
            self.dropped[reason] = self.dropped.get(reason, 0) + count

    def note(self, what: str, count: int = 1) -> None:
        """Count ``count`` kept jobs to which ``what`` applies."""
        if count:
            self.notes[what] = self.notes.get(what, 0) + count

    def summary(self) -> str:
        """A few human-readable lines (what ``gridsched convert`` prints)."""
        lines = [f"{self.source} ({self.format}): {self.records_read} records read, "
                 f"{self.jobs_kept} jobs kept, {self.jobs_dropped} dropped"]
        if self.output:
            lines.append(f"  written to {self.output}")
        if self.nb_res is not None:
            lines.append(f"  nb_res: {self.nb_res}")
        if self.cores_per_host is not None:
            lines.append(f"  processors per host: {self.cores_per_host} (res = ceil(processors / {self.cores_per_host}))")
        if self.time_origin is not None:
            lines.append(f"  time origin: {_number(self.time_origin)} s of trace time")
        for reason, count in sorted(self.dropped.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  dropped {count:>8}  {reason}")
        for what, count in sorted(self.notes.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  note    {count:>8}  {what}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-serialisable data (``jobs_dropped`` included)."""
        return {
            "source": self.source, "format": self.format, "records_read": self.records_read,
            "jobs_kept": self.jobs_kept, "jobs_dropped": self.jobs_dropped,
            "dropped": dict(self.dropped), "notes": dict(self.notes), "nb_res": self.nb_res,
            "time_origin": self.time_origin, "cores_per_host": self.cores_per_host,
            "header": dict(self.header), "output": self.output,
        }


class ConvertedWorkload(dict):
    """A Batsim workload dict (``nb_res``, ``jobs``, ``profiles``) with its :class:`ConversionReport`.

    It *is* a plain ``dict`` for every other purpose (``json.dump``, :func:`validate_workload`,
    indexing); the report is the attribute ``.report`` and is never written into the JSON.
    """

    def __init__(self, data: dict[str, Any], report: ConversionReport):
        super().__init__(data)
        self.report = report


# --------------------------------------------------------------------------------------------
# Shared record model and conversion rules (SWF and GWF)
# --------------------------------------------------------------------------------------------

@dataclass(slots=True)
class TraceRecord:
    """One job line of a trace, reduced to what a Batsim job needs (-1 = unknown).

    Times in seconds (trace time); processors as counted by the trace; ``user`` and ``site``
    already formatted (None when unknown).
    """

    line: int
    job_id: str
    submit: float
    run: float
    allocated: float
    requested: float
    requested_time: float
    status: int
    user: str | None
    site: str | None = None


@dataclass(frozen=True)
class _FieldNames:
    """How a format names the fields the rules use (for report reasons and errors)."""

    submit: str
    run: str
    allocated: str
    requested: str
    requested_time: str
    status: str
    user: str
    site: str = "site"


_SWF_NAMES = _FieldNames(
    submit="field 2", run="field 4", allocated="field 5", requested="field 8",
    requested_time="field 9", status="field 11", user="field 12",
)


def _number(value: float) -> int | float:
    """``3.0`` -> ``3``; other values unchanged (compact JSON)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _compact(value: float) -> str:
    """Compact text of a number for profile names: ``3477`` -> "3477", ``12.5`` -> "12.5"."""
    return str(_number(value))


def check_nb_hosts(nb_hosts: Any) -> None:
    """Refuse a target platform's ``nb_hosts`` (``gridsched convert --nb-hosts``) that is not an
    integer from 1 to 2**31 - 1 (:data:`~schedulers.core.limits.MAX_NB_RES`, a workload's largest
    ``nb_res``).

    Raises:
        ValueError: one line naming ``nb_hosts`` and its value.
    """
    if not isinstance(nb_hosts, int) or isinstance(nb_hosts, bool) or nb_hosts < 1:
        raise ValueError(f"nb_hosts must be an integer >= 1, got {nb_hosts!r}")
    if nb_hosts > MAX_NB_RES:
        raise ValueError(f"nb_hosts must be at most 2**31 - 1 (a workload's largest nb_res), got {nb_hosts}")


def _check_options(
    *, cores_per_host: int, nb_hosts: int | None, time_origin: Any, walltime: str,
    runtime_source: str, start: float | None, end: float | None, max_jobs: int | None,
    oversized: str, profile_kind: str,
) -> None:
    def positive_int(name: str, value: Any) -> None:
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")

    positive_int("cores_per_host", cores_per_host)
    if nb_hosts is not None:
        check_nb_hosts(nb_hosts)
    if max_jobs is not None and (not isinstance(max_jobs, int) or isinstance(max_jobs, bool) or max_jobs < 0):
        raise ValueError(f"max_jobs must be an integer >= 0, got {max_jobs!r}")
    if time_origin not in ("first", "zero") and (
        isinstance(time_origin, bool) or not isinstance(time_origin, (int, float))
        or not math.isfinite(time_origin)
    ):
        raise ValueError(f"time_origin must be 'first', 'zero' or a number of seconds, got {time_origin!r}")
    choices = {
        "walltime": (walltime, ("requested", "runtime", "none")),
        "runtime_source": (runtime_source, ("run", "requested")),
        "oversized": (oversized, ("drop", "clamp", "error")),
        "profile_kind": (profile_kind, ("delay",)),
    }
    for name, (value, allowed) in choices.items():
        if value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    for bound, t in (("start", start), ("end", end)):
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t)):
            raise ValueError(f"{bound} must be a finite number of seconds (trace time), got {t!r}")
    if start is not None and end is not None and end <= start:
        raise ValueError(f"end ({end}) must be greater than start ({start})")


@dataclass(frozen=True)
class _Rules:
    """The options of a conversion that its rules read (see :func:`swf_to_batsim`)."""

    names: _FieldNames
    cores_per_host: int
    time_origin: TimeOrigin
    walltime: WalltimeRule
    runtime_source: RuntimeSource
    keep_cancelled: bool
    start: float | None
    end: float | None
    max_jobs: int | None
    users: bool
    oversized: Oversized
    sites: Collection[str] | None = None
    with_site: bool = False


class _SeenIds:
    """The job ids seen so far (rule 7), compactly: an id that is the decimal text of an integer
    from 0 to 2**26 - 1 (an SWF job number, as :func:`_job_id` writes it) is one bit of a byte
    array (at most 8 MB, 125 KB for a million jobs numbered from 1); any other id is kept in a
    set (about 80 bytes an id)."""

    __slots__ = ("_bits", "_others")

    def __init__(self) -> None:
        self._bits = bytearray()
        self._others: set[str] = set()

    def add(self, job_id: str) -> bool:
        """Record ``job_id``; False when it was already seen."""
        if job_id.isdigit() and job_id.isascii() and len(job_id) <= 8 and (job_id[0] != "0" or job_id == "0"):
            number = int(job_id)
            if number < 1 << 26:
                byte, bit = number >> 3, 1 << (number & 7)
                bits = self._bits
                if byte >= len(bits):
                    bits.extend(bytes(max(byte + 1 - len(bits), len(bits))))  # doubling
                elif bits[byte] & bit:
                    return False
                bits[byte] |= bit
                return True
        if job_id in self._others:
            return False
        self._others.add(job_id)
        return True


#: One kept job as the rules give it, before sorting: ``(submit time (s, trace time), runtime (s),
#: job id, res, walltime (s or -1), extra fields ({"user": ..., "site": ...} or fewer), notes)``.
_Kept = tuple[float, float, str, int, "int | float", dict[str, str], list[str]]


class TraceConversion:
    """One trace conversion, options checked, nothing read yet (made by :func:`swf_conversion` or
    :func:`~schedulers.inputs.gwf.gwf_conversion`); run it once, either way:

    * :meth:`workload`: the Batsim workload as a dict (:class:`ConvertedWorkload`), every job an
      object (what :func:`swf_to_batsim` returns);
    * :meth:`write`: the same workload written to a file as the text
      :func:`~schedulers.inputs.convert.dumps_workload` gives for that dict (same bytes),
      without holding the jobs: each kept job is written to a temporary spool file as it is read
      (its JSON text less the submission time, which needs the time origin), and only four
      numbers a job are kept in memory (submit time, runtime, res, spool offset: 32 bytes) with
      the ids seen; the jobs are then copied from the spool in submission order.

    The report (``.report``) is filled as the trace is read.

    Raises (both ways): FileNotFoundError, :class:`WorkloadError` as :func:`swf_to_batsim`;
    RuntimeError when run a second time (its records are read once).
    """

    def __init__(self, records: Iterable[TraceRecord], report: ConversionReport, rules: _Rules,
                 capacity: Callable[[], int | None]) -> None:
        self.report = report
        self._records: Iterable[TraceRecord] | None = records
        self._rules = rules
        self._capacity_of = capacity
        self._capacity: int | None = None
        self._capacity_known = False

    def _cap(self) -> int | None:
        """The platform capacity (hosts), asked once: after the header lines, which precede the
        first job line, or at the end of a trace without one."""
        if not self._capacity_known:
            self._capacity, self._capacity_known = self._capacity_of(), True
        return self._capacity

    def _kept(self) -> Iterator[_Kept]:
        """Apply rules 1-8 of :func:`swf_to_batsim` to each record, in file order; yield the kept
        jobs (:data:`_Kept`) and count the dropped ones in the report."""
        if self._records is None:
            raise RuntimeError(f"{self.report.source}: a TraceConversion runs once")
        records, self._records = self._records, None
        rules, report = self._rules, self.report
        n = rules.names
        r_cancelled = f"cancelled ({n.status} = 5)"
        r_partial = f"partial-execution record ({n.status} = 2, 3 or 4)"
        r_run_unknown = f"run time unknown ({n.run} = -1)"
        r_run_zero = f"run time 0 ({n.run} = 0, never ran)"
        r_run_negative = f"run time negative ({n.run} < 0, not -1)"
        r_procs = f"processors unknown ({n.requested} and {n.allocated} = -1)"
        r_procs_none = f"no processors ({n.requested} and {n.allocated} 0 or negative, not -1)"
        r_submit = f"submit time unknown ({n.submit} = -1)"
        r_submit_negative = f"submit time negative ({n.submit} < 0, not -1)"
        r_before_start = "submitted before start"
        r_after_end = "submitted at or after end"
        r_before_origin = "submitted before the time origin"
        r_site = "other site (site filter)"
        r_oversized = "needs more hosts than nb_res (oversized='drop')"
        r_duplicate = "duplicate job id (first occurrence kept)"
        n_cancelled = f"cancelled job kept ({n.status} = 5, keep_cancelled)"
        n_run = f"runtime from {n.run} (run time): {n.requested_time} = -1"
        n_procs = f"processors from {n.allocated} (allocated): {n.requested} = -1"
        n_rounded = "processors not a multiple of cores_per_host: res rounded up"
        n_clamped = "res clamped to nb_res (oversized='clamp')"
        n_no_wall = f"no walltime ({n.requested_time} = -1): walltime -1"
        n_killed = "runtime > walltime: Batsim kills the job at its walltime"
        n_reached = "runtime == walltime: Batsim ends the job as walltime reached"
        n_no_user = f"user unknown ({n.user} = -1): no 'user' field"
        n_no_site = f"site unknown ({n.site} = -1): no 'site' field"

        time_origin, start, end, sites = rules.time_origin, rules.start, rules.end, rules.sites
        cores, oversized, walltime = rules.cores_per_host, rules.oversized, rules.walltime
        requested_runtime = rules.runtime_source == "requested"
        numeric_origin = None if time_origin in ("first", "zero") else float(time_origin)
        seen = _SeenIds()

        for rec in records:
            report.records_read += 1
            notes: list[str] = []
            # 1. status
            if rec.status == STATUS_CANCELLED:
                if not rules.keep_cancelled:
                    report.drop(r_cancelled)
                    continue
                notes.append(n_cancelled)
            elif rec.status in STATUS_PARTIAL:
                report.drop(r_partial)
                continue
            elif rec.status not in (STATUS_COMPLETED, STATUS_FAILED):
                notes.append(f"status unknown ({n.status} = {rec.status}), job kept")
            # 2. runtime: jobs that never ran (or whose run is unknown) are dropped whatever the
            # runtime source; the source then picks the duration.
            if rec.run < 0:
                report.drop(r_run_unknown if rec.run == -1 else r_run_negative)
                continue
            if rec.run == 0:
                report.drop(r_run_zero)
                continue
            runtime = rec.run
            if requested_runtime:
                if rec.requested_time > 0:
                    runtime = rec.requested_time
                else:
                    notes.append(n_run)
            # 3. processors
            procs = rec.requested
            if procs <= 0:
                procs = rec.allocated
                if procs > 0:
                    notes.append(n_procs)
            if procs <= 0:
                report.drop(r_procs if rec.requested == rec.allocated == -1 else r_procs_none)
                continue
            # 4. time window and origin
            if rec.submit < 0:
                report.drop(r_submit if rec.submit == -1 else r_submit_negative)
                continue
            if start is not None and rec.submit < start:
                report.drop(r_before_start)
                continue
            if end is not None and rec.submit >= end:
                report.drop(r_after_end)
                continue
            if numeric_origin is not None and rec.submit < numeric_origin:
                report.drop(r_before_origin)
                continue
            # 5. site filter (GWF)
            if sites is not None and rec.site not in sites:
                report.drop(r_site)
                continue
            # 6. hosts
            res = max(1, math.ceil(procs / cores))
            if procs % cores:
                notes.append(n_rounded)
            cap = self._cap()
            if cap is not None and res > cap:
                if oversized == "drop":
                    report.drop(r_oversized)
                    continue
                if oversized == "error":
                    raise WorkloadError(
                        f"{report.source}, line {rec.line}: job {rec.job_id!r} needs {res} hosts "
                        f"({_compact(procs)} processors / {cores} cores per host) but "
                        f"nb_res is {cap} (use oversized='drop' or 'clamp', or a larger nb_hosts)"
                    )
                res = cap
                notes.append(n_clamped)
            elif res > MAX_NB_RES:   # (no capacity known: nb_res would be this res)
                raise WorkloadError(
                    f"{report.source}, line {rec.line}: job {rec.job_id!r} needs {res} hosts ({_compact(procs)} "
                    f"processors / {cores} cores per host), more than a workload may have (nb_res at most 2**31 - "
                    "1); give the hosts of the target platform (gridsched convert --nb-hosts N) to drop or clamp it"
                )
            # 7. duplicate ids
            if not seen.add(rec.job_id):
                report.drop(r_duplicate)
                continue
            # walltime
            for what, field_name, t in (("run time", n.requested_time if runtime != rec.run else n.run, runtime),
                                        ("requested time", n.requested_time,
                                         rec.requested_time if walltime == "requested" else 0)):
                if t > MAX_TIME:
                    raise WorkloadError(f"{report.source}, line {rec.line}: job {rec.job_id!r}: {what} "
                                        f"({field_name}) {t:.17g} s is over 2**33 s (8589934592), the "
                                        "longest time of a workload gridsched runs")
            if walltime == "requested":
                if rec.requested_time > 0:
                    wall: float = rec.requested_time
                else:
                    wall = -1
                    notes.append(n_no_wall)
            elif walltime == "runtime":
                wall = runtime
            else:
                wall = -1
            if wall > 0:
                if runtime > wall:
                    notes.append(n_killed)
                elif runtime == wall:
                    notes.append(n_reached)
            extra: dict[str, str] = {}
            if rules.users:
                if rec.user is None:
                    notes.append(n_no_user)
                else:
                    extra["user"] = rec.user
            if rules.with_site:
                if rec.site is None:
                    notes.append(n_no_site)
                else:
                    extra["site"] = rec.site
            yield rec.submit, float(runtime), rec.job_id, res, _number(float(wall)), extra, notes
        self._cap()

    def _cut(self, kept: int) -> int:
        """How many of ``kept`` jobs (sorted by submit time) stay under ``max_jobs``; the others
        are counted as dropped."""
        max_jobs = self._rules.max_jobs
        if max_jobs is not None and kept > max_jobs:
            self.report.drop("beyond max_jobs", kept - max_jobs)
            return max_jobs
        return kept

    def _check_span(self, last_submit: float | None, origin: float, job_id: Callable[[], str]) -> None:
        """Refuse a last kept job (submit time ``last_submit``, id ``job_id()``) submitted more
        than :data:`MAX_TIME` after ``origin``, in the words ``gridsched run`` uses for it."""
        if last_submit is not None and last_submit - origin > MAX_TIME:
            raise WorkloadError(f"{self.report.source}: job {job_id()!r}: 'subtime' must be a number of seconds "
                                f"from -8589934592 to 8589934592 (2**33), got {last_submit - origin:.17g} (its submit "
                                "time after the time origin: keep an earlier part of the trace)")

    def _origin(self, first_submit: float | None) -> float:
        """The time origin (trace seconds) given the first kept submit time (None: no job)."""
        time_origin = self._rules.time_origin
        if time_origin == "first":
            return first_submit if first_submit is not None else 0.0
        return 0.0 if time_origin == "zero" else float(time_origin)

    def _finish(self, jobs: int, nb_res: int, origin: float) -> None:
        report = self.report
        report.jobs_kept = jobs
        report.nb_res = nb_res
        report.time_origin = _number(origin)
        report.cores_per_host = self._rules.cores_per_host

    def workload(self) -> ConvertedWorkload:
        """Run the conversion into a :class:`ConvertedWorkload` (see :func:`swf_to_batsim`): every
        kept job a dict, about 740 bytes a job while it is built (tracemalloc)."""
        kept = list(self._kept())
        kept.sort(key=lambda item: item[0])  # stable: file order among equal submit times
        del kept[self._cut(len(kept)):]
        origin = self._origin(kept[0][0] if kept else None)
        self._check_span(kept[-1][0] if kept else None, origin, lambda: kept[-1][2])
        profiles: dict[float, str] = {}
        jobs: list[dict[str, Any]] = []
        for submit, runtime, job_id, res, wall, extra, notes in kept:
            name = profiles.get(runtime)
            if name is None:
                name = profiles[runtime] = f"delay_{_compact(runtime)}"
            jobs.append({"id": job_id, "subtime": _number(float(submit - origin)), "res": res,
                         "walltime": wall, "profile": name, **extra})
            for what in notes:
                self.report.note(what)
        cap = self._cap()
        nb_res = cap if cap is not None else max((j["res"] for j in jobs), default=1)
        self._finish(len(jobs), nb_res, origin)
        data = {
            "nb_res": nb_res,
            "jobs": jobs,
            "profiles": {
                profiles[runtime]: {"type": "delay", "delay": _number(runtime)}
                for runtime in sorted(profiles)
            },
        }
        return ConvertedWorkload(data, self.report)

    def write(self, output: str | PathLike[str]) -> ConversionReport:
        """Run the conversion into the Batsim workload file ``output``, written as
        :func:`~schedulers.inputs.convert.dumps_workload` writes :meth:`workload`'s dict (same
        bytes), atomically (a temporary file beside it, then renamed; parent folders created).

        Memory: 32 bytes a kept job, the distinct runtimes, notes and extra fields, and the ids
        seen (rule 7: a bit a job for SWF job numbers, :class:`_SeenIds`); the jobs' text goes
        through a temporary spool file beside ``output`` (about 80 bytes a job), deleted at the
        end.

        Returns:
            The report, ``output`` set.
        """
        output = Path(output)
        make_folder(output.parent)
        check_output_file(output)
        submits, runtimes, res_of, ends = array("d"), array("d"), array("q"), array("q")
        names: dict[float, str] = {}     # runtime -> the profile name as JSON text
        extras: dict[tuple, str] = {}    # extra fields -> their JSON text
        note_codes: dict[str, int] = {}  # note -> its number in the spool
        in_order, last, size = True, -math.inf, 0
        dumps = json.dumps
        with tempfile.TemporaryFile(dir=output.parent, prefix=f".{output.name}.spool.") as spool:
            # a spool line: "notes<TAB>"id"<TAB>"res": ..., "profile": ...}", the job's JSON text
            # (ASCII: json.dumps escapes the rest, tabs included) less "{" and "subtime"
            lines: list[str] = []
            for submit, runtime, job_id, res, wall, extra, notes in self._kept():
                name = names.get(runtime)
                if name is None:
                    name = names[runtime] = dumps(f"delay_{_compact(runtime)}")
                more: str | None = ""
                if extra:
                    key = tuple(extra.items())
                    more = extras.get(key)
                    if more is None:
                        more = extras[key] = "".join(f", {dumps(k)}: {dumps(v)}" for k, v in key)
                codes = ",".join([str(note_codes.setdefault(w, len(note_codes))) for w in notes]) if notes else ""
                jid = f"\"{job_id}\"" if job_id.isascii() and job_id.isdigit() else dumps(job_id)
                line = f"{codes}\t{jid}\t\"res\": {res}, \"walltime\": {wall!r}, \"profile\": {name}{more}}}\n"
                lines.append(line)
                size += len(line)
                ends.append(size)
                submits.append(submit)
                runtimes.append(runtime)
                res_of.append(res)
                if submit < last:
                    in_order = False
                last = submit
                if len(lines) == 4096:
                    spool.write("".join(lines).encode("ascii"))
                    lines.clear()
            spool.write("".join(lines).encode("ascii"))
            spool.flush()
            del lines
            order: Sequence[int] = range(len(submits))
            if not in_order:  # stable: file order among equal submit times, as workload()
                order = sorted(order, key=submits.__getitem__)
            order = order[:self._cut(len(submits))]
            origin = self._origin(submits[order[0]] if order else None)

            def last_id() -> str:   # (the job's id, read back from its spool line)
                i = order[-1]
                line = os.pread(spool.fileno(), ends[i] - (ends[i - 1] if i else 0), ends[i - 1] if i else 0)
                return json.loads(line.split(b"\t")[1])
            self._check_span(submits[order[-1]] if order else None, origin, last_id)
            cap = self._cap()
            nb_res = cap if cap is not None else max((res_of[i] for i in order), default=1)
            tmp = output.with_name(f".{output.name}.{os.getpid()}.tmp")
            try:
                with open(tmp, "wb") as out:
                    out.write(f"{{\n  \"nb_res\": {dumps(nb_res)},\n".encode())
                    used = self._copy_jobs(spool, ends, order, in_order, submits, origin, runtimes,
                                           list(note_codes), out)
                    rows = [f"    {names[r]}: "
                            f"{dumps({'type': 'delay', 'delay': _number(r)})}" for r in sorted(used)]
                    if rows:
                        out.write(("  \"profiles\": {\n" + ",\n".join(rows) + "\n  }\n}\n").encode())
                    else:
                        out.write(b"  \"profiles\": {}\n}\n")
                os.replace(tmp, output)
            except BaseException as exc:
                tmp.unlink(missing_ok=True)
                if isinstance(exc, OSError):   # a full disk: named (schedulers.outfiles)
                    raise not_written(output, exc) from None
                raise
        self._finish(len(order), nb_res, origin)
        self.report.output = str(output)
        return self.report

    def _copy_jobs(self, spool: IO[bytes], ends: array, order: Sequence[int], in_order: bool, submits: array,
                   origin: float, runtimes: array, notes_by_code: list[str], out: IO[bytes]) -> set[float]:
        """Write the ``"jobs"`` member from the spool (job ``i``'s line ending at byte
        ``ends[i]``), jobs ``order`` in that order (``in_order``: ``order`` is ``0, 1, ...``),
        and count their notes; return their distinct runtimes."""
        if not order:
            out.write(b"  \"jobs\": [],\n")
            return set()
        used: set[float] = set()
        note = self.report.note
        out.write(b"  \"jobs\": [\n")
        rows: list[bytes] = []
        sep = b""  # before the next batch of rows
        if in_order:  # the spool from its start, read in order
            spool.seek(0)
            lines: Iterable[bytes] = spool
        else:  # each line read where it is (no mapping of the whole spool: its pages would count as memory)
            fd = spool.fileno()
            lines = (os.pread(fd, ends[i] - (ends[i - 1] if i else 0), ends[i - 1] if i else 0) for i in order)
        for i, line in zip(order, lines):
            codes, job_id, tail = line[:-1].split(b"\t")
            subtime = repr(_number(submits[i] - origin)).encode()
            rows.append(b"    {\"id\": %s, \"subtime\": %s, %s" % (job_id, subtime, tail))
            used.add(runtimes[i])
            if codes:
                for c in codes.split(b","):
                    note(notes_by_code[int(c)])
            if len(rows) == 4096:
                out.write(sep + b",\n".join(rows))
                sep = b",\n"
                rows.clear()
        if rows:
            out.write(sep + b",\n".join(rows))
        out.write(b"\n  ],\n")
        return used


def _open_text(path: Path) -> IO[str]:
    """Open a trace as text, gunzipping it when it starts with the gzip magic bytes (a UTF-8
    byte-order mark at its start, as some editors write it, is skipped)."""
    with open(path, "rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8-sig", errors="replace")
    return open(path, encoding="utf-8-sig", errors="replace")


def _trace_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a trace file, plain or gzip-compressed.

    Raises:
        FileNotFoundError: no such file.
        WorkloadError: a folder, an unreadable file, truncated or corrupt gzip data (one line
            naming the file).
    """
    source = str(path)
    try:
        with _open_text(path) as stream:
            yield from enumerate(stream, start=1)
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise WorkloadError(f"{source}: is a folder, not a trace file") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise WorkloadError(f"{source}: truncated or corrupt gzip data ({exc})") from None
    except OSError as exc:
        raise WorkloadError(f"{source}: cannot read the trace: {exc.strerror or exc}") from None


def _parse_float(token: str, source: str, lineno: int, what: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise WorkloadError(f"{source}, line {lineno}: {what} is not a number: {token!r}") from None
    if not math.isfinite(value):
        raise WorkloadError(f"{source}, line {lineno}: {what} is not a finite number: {token!r}")
    return value


def _job_id(token: str) -> str:
    """Job id text: integers normalised ("0015" -> "15"), anything else kept as written."""
    try:
        return str(int(token))
    except ValueError:
        try:
            value = float(token)
        except ValueError:
            return token
        return str(_number(value)) if math.isfinite(value) else token


# --------------------------------------------------------------------------------------------
# SWF
# --------------------------------------------------------------------------------------------

_HEADER = re.compile(r"^;\s*([A-Za-z][\w-]*)\s*:\s*(.*?)\s*$")


def read_swf(path: str | PathLike[str], header: dict[str, str] | None = None) -> Iterator[TraceRecord]:
    """Yield the job records of an SWF file (plain or gzip-compressed) in file order.

    Args:
        path: the ``.swf`` or ``.swf.gz`` file (gzip is detected from the content).
        header: if given, filled with the ``; Key: value`` header pairs (first occurrence wins).

    Yields:
        :class:`TraceRecord` per job line; user = ``"u<field 12>"`` or None when -1.

    Raises:
        WorkloadError: a job line does not have exactly 18 fields or a field is not a number
            (the message gives the file name, the line number and the field).
    """
    path = Path(path)
    source = str(path)
    isfinite = math.isfinite
    users: dict[float, str] = {}  # field 12 -> "u<field 12>"
    for lineno, line in _trace_lines(path):
        text = line.strip()
        if not text:
            continue
        if text.startswith(";"):
            if header is not None:
                match = _HEADER.match(text)
                if match and match.group(1) not in header:
                    header[match.group(1)] = match.group(2)
            continue
        tokens = text.split()
        if len(tokens) != 18:
            raise WorkloadError(
                f"{source}, line {lineno}: an SWF job line has 18 fields, found {len(tokens)}: {text[:80]!r}"
            )
        try:
            values = list(map(float, tokens))
            good = all(map(isfinite, values))
        except ValueError:
            good = False
        if not good:  # name the first bad field
            for i, tok in enumerate(tokens, start=1):
                _parse_float(tok, source, lineno, f"field {i} ({SWF_FIELDS[i - 1]})")
        user = values[11]
        user_text = users.get(user)
        if user_text is None and user != -1:
            user_text = users[user] = f"u{_compact(user)}"
        yield TraceRecord(lineno, _job_id(tokens[0]), values[1], values[3], values[4], values[7], values[8],
                          int(values[10]) if values[10].is_integer() else -1, user_text)   # (as GWF: 1.5 unknown)


def _header_hosts(header: dict[str, str], cores_per_host: int, source: str) -> int | None:
    """Hosts of the traced machine from the header: ceil(MaxProcs (else MaxNodes) / cores);
    None when neither is a number > 0.

    Raises:
        WorkloadError: more hosts than a workload's ``nb_res`` may be (2**31 - 1; ``inf``).
    """
    for key in ("MaxProcs", "MaxNodes"):
        try:
            number = float(header[key])
        except (KeyError, ValueError):
            continue
        if number >= 1 and (number == math.inf or math.ceil(int(number) / cores_per_host) > MAX_NB_RES):
            raise WorkloadError(f"{source}: header {key}: {header[key]} makes more hosts than a workload may have "
                                "(nb_res at most 2**31 - 1); give the hosts of the target platform "
                                "(gridsched convert --nb-hosts N)")
        value = int(number) if number == number else 0
        if value > 0:
            return math.ceil(value / cores_per_host)
    return None


def swf_to_batsim(
    path: str | PathLike[str],
    *,
    cores_per_host: int = 1,
    nb_hosts: int | None = None,
    time_origin: TimeOrigin = "first",
    walltime: WalltimeRule = "requested",
    runtime_source: RuntimeSource = "run",
    keep_cancelled: bool = False,
    start: float | None = None,
    end: float | None = None,
    max_jobs: int | None = None,
    users: bool = True,
    oversized: Oversized = "drop",
    profile_kind: Literal["delay"] = "delay",
) -> ConvertedWorkload:
    """Convert an SWF trace (Parallel Workloads Archive) into a Batsim workload of delay jobs.

    SWF is defined by Feitelson et al. for the Parallel Workloads Archive (see the module
    docstring for the 18 fields). Times are seconds; "field n" is the n-th SWF field.

    Rules, applied to each job line in this order (the first rule that drops a record is the
    reason counted in the report):

    1. status, field 11: 5 (cancelled) is dropped unless ``keep_cancelled``; 2, 3, 4
       (partial-execution records of checkpointed/swapped jobs) are dropped; 1 (completed),
       0 (failed) and -1 (unknown, noted) are kept.
    2. field 4 (run time) -1 (unknown), 0 (the job never ran, e.g. cancelled before start) or
       another negative value (counted apart) drops the job, whatever ``runtime_source``. runtime = field 4; with
       ``runtime_source="requested"`` it is field 9 (requested time) when > 0, else field 4
       (noted).
    3. processors = field 8 (requested), falling back to field 5 (allocated) when field 8 is -1
       or 0 (noted); both -1 drops the job, as do both 0 or negative (counted apart).
    4. submit time = field 2; -1 drops the job, as does another negative value (counted apart); jobs submitted before ``start`` or at/after
       ``end`` (trace time, the seconds of field 2, window ``[start, end)``) are dropped, as are
       jobs submitted before a numeric ``time_origin``.
    5. res = ceil(processors / ``cores_per_host``) hosts (noted when rounded up). The platform
       capacity is ``nb_hosts`` when given, else ceil(header ``MaxProcs`` (or ``MaxNodes``) /
       ``cores_per_host``), else unknown. A job needing more than a known capacity is dropped
       (``oversized="drop"``), capped to it (``"clamp"``) or stops the conversion with a
       :class:`WorkloadError` naming the file, line and job (``"error"``).
    6. job id = field 1 as a string; a repeated id is dropped (first occurrence kept).
    7. walltime = field 9 (requested time) when > 0, else -1, Batsim's "no walltime"
       (``walltime="requested"``); the runtime itself (``"runtime"``); or -1 for every job
       (``"none"``). A job whose runtime exceeds its walltime is kept as is: Batsim kills it at
       its walltime, as the real system did (noted; Batsim also ends a job whose delay equals its
       walltime as "walltime reached", noted separately).
    8. ``user`` = ``"u<field 12>"`` when ``users`` and field 12 is not -1 (else noted).

    Kept jobs are sorted by submit time (stable: file order among ties), cut to the first
    ``max_jobs``, and shifted so that subtime = field 2 - origin, the origin being the first
    kept submit time (``time_origin="first"``), 0 (``"zero"``) or the given number of seconds.
    Each distinct runtime becomes one profile ``{"type": "delay", "delay": runtime}`` named
    ``delay_<runtime>`` (``delay_3477``, ``delay_12.5``); profiles are ordered by runtime.
    ``nb_res`` = the capacity when known, else the largest res (1 with no job).

    Args:
        path: ``.swf`` file, or gzip-compressed ``.swf.gz`` (detected from the content).
        cores_per_host: processors per host of the target platform (>= 1).
        nb_hosts: hosts of the target platform (>= 1), or None (capacity from the header).
        time_origin: ``"first"``, ``"zero"`` or trace seconds to subtract.
        walltime: ``"requested"``, ``"runtime"`` or ``"none"``.
        runtime_source: ``"run"`` (field 4) or ``"requested"`` (field 9).
        keep_cancelled: keep status-5 jobs that did run.
        start, end: submit-time window in trace seconds, or None.
        max_jobs: keep at most this many jobs (the earliest submitted), or None.
        users: add the ``user`` extra field.
        oversized: ``"drop"``, ``"clamp"`` or ``"error"``.
        profile_kind: only ``"delay"`` (the job sleeps its runtime) is supported.

    Returns:
        A :class:`ConvertedWorkload`: the Batsim workload dict ``{"nb_res", "jobs", "profiles"}``
        with the :class:`ConversionReport` as ``.report`` (``report.header`` holds the SWF header).

    Raises:
        ValueError: an option is out of range.
        FileNotFoundError: ``path`` does not exist.
        WorkloadError: a malformed line (file name and line number), an oversized job with
            ``oversized="error"``, or a kept job whose runtime, walltime or subtime would exceed
            :data:`MAX_TIME` (2**33 s, the bound of a workload's times ``gridsched run`` checks).
    """
    return swf_conversion(
        path, cores_per_host=cores_per_host, nb_hosts=nb_hosts, time_origin=time_origin,
        walltime=walltime, runtime_source=runtime_source, keep_cancelled=keep_cancelled,
        start=start, end=end, max_jobs=max_jobs, users=users, oversized=oversized,
        profile_kind=profile_kind,
    ).workload()


def swf_conversion(
    path: str | PathLike[str],
    *,
    cores_per_host: int = 1,
    nb_hosts: int | None = None,
    time_origin: TimeOrigin = "first",
    walltime: WalltimeRule = "requested",
    runtime_source: RuntimeSource = "run",
    keep_cancelled: bool = False,
    start: float | None = None,
    end: float | None = None,
    max_jobs: int | None = None,
    users: bool = True,
    oversized: Oversized = "drop",
    profile_kind: Literal["delay"] = "delay",
) -> TraceConversion:
    """The conversion of :func:`swf_to_batsim` (same arguments, same rules), set up but not run:
    ``.workload()`` gives :func:`swf_to_batsim`'s result, ``.write(output)`` writes it to a file
    without holding the jobs (:class:`TraceConversion`; ``gridsched run`` on the embedded
    engine).

    Raises:
        ValueError: an option is out of range (at once; reading errors come when it runs).
    """
    _check_options(
        cores_per_host=cores_per_host, nb_hosts=nb_hosts, time_origin=time_origin,
        walltime=walltime, runtime_source=runtime_source, start=start, end=end,
        max_jobs=max_jobs, oversized=oversized, profile_kind=profile_kind,
    )
    report = ConversionReport(source=str(path), format="swf")
    header = report.header

    def capacity() -> int | None:
        # Called after the header lines (they precede the first job line) have been read.
        return nb_hosts if nb_hosts is not None else _header_hosts(header, cores_per_host, report.source)

    rules = _Rules(_SWF_NAMES, cores_per_host=cores_per_host, time_origin=time_origin, walltime=walltime,
                   runtime_source=runtime_source, keep_cancelled=keep_cancelled, start=start, end=end,
                   max_jobs=max_jobs, users=users, oversized=oversized)
    return TraceConversion(read_swf(path, header), report, rules, capacity)
