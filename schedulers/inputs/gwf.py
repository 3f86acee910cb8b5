"""Grid Workloads Format (GWF) -> Batsim workload.

GWF is the text format of the Grid Workloads Archive (Iosup, Li, Jan, Anoep, Dumitrescu, Wolters
and Epema, "The Grid Workloads Archive", Future Generation Computer Systems 24(7), 2008;
http://gwa.ewi.tudelft.nl/), e.g. GWA-T-2 Grid'5000. It extends SWF: ``#`` comment lines, then
one line per job with 29 whitespace-separated columns, -1 meaning "unknown":

==  ==================  ==  ==================  ==  ===================
 1  JobID               11  Status              21  UsedNetwork
 2  SubmitTime (s)      12  UserID              22  UsedLocalDiskSpace
 3  WaitTime (s)        13  GroupID             23  UsedResources
 4  RunTime (s)         14  ExecutableID        24  ReqPlatform
 5  NProcs (allocated)  15  QueueID             25  ReqNetwork
 6  AverageCPUTimeUsed  16  PartitionID         26  ReqLocalDiskSpace
 7  UsedMemory          17  OrigSiteID          27  ReqResources
 8  ReqNProcs           18  LastRunSiteID       28  VOID
 9  ReqTime (s)         19  JobStructure        29  ProjectID
10  ReqMemory           20  JobStructureParams
==  ==================  ==  ==================  ==  ===================

Status is 1 (completed), 0 (failed) or 5 (cancelled). The identifiers (UserID, OrigSiteID, ...)
are strings in GWF. Grid'5000 traces also record jobs cancelled before they got resources, with
WaitTime and RunTime = -1: the run-time rule drops them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from os import PathLike
from pathlib import Path

from .errors import WorkloadError
from .swf import (
    ConversionReport,
    ConvertedWorkload,
    Oversized,
    RuntimeSource,
    TimeOrigin,
    TraceRecord,
    WalltimeRule,
    _check_options,
    TraceConversion,
    _compact,
    _FieldNames,
    _job_id,
    _parse_float,
    _Rules,
    _trace_lines,
)

__all__ = ["GWF_COLUMNS", "gwf_conversion", "gwf_to_batsim", "read_gwf"]

#: The 29 GWF columns, in order (column n is ``GWF_COLUMNS[n - 1]``).
GWF_COLUMNS = (
    "JobID", "SubmitTime", "WaitTime", "RunTime", "NProcs", "AverageCPUTimeUsed", "UsedMemory",
    "ReqNProcs", "ReqTime", "ReqMemory", "Status", "UserID", "GroupID", "ExecutableID",
    "QueueID", "PartitionID", "OrigSiteID", "LastRunSiteID", "JobStructure",
    "JobStructureParams", "UsedNetwork", "UsedLocalDiskSpace", "UsedResources", "ReqPlatform",
    "ReqNetwork", "ReqLocalDiskSpace", "ReqResources", "VOID", "ProjectID",
)
_COL = {name: index for index, name in enumerate(GWF_COLUMNS)}

_GWF_NAMES = _FieldNames(
    submit="SubmitTime", run="RunTime", allocated="NProcs", requested="ReqNProcs",
    requested_time="ReqTime", status="Status", user="UserID", site="OrigSiteID",
)


def _unknown(token: str) -> bool:
    try:
        return float(token) == -1
    except ValueError:
        return False


def _user(token: str) -> str | None:
    """UserID -> ``user`` field: numeric ids become ``"u<id>"``, string ids are kept, -1 is None."""
    if _unknown(token):
        return None
    try:
        return f"u{_compact(float(token))}"
    except ValueError:
        return token


def read_gwf(path: str | PathLike[str]) -> Iterator[TraceRecord]:
    """Yield the job records of a GWF file (plain or gzip-compressed) in file order.

    Args:
        path: the ``.gwf`` file (gzip is detected from the content).

    Yields:
        :class:`TraceRecord` per job line: times in seconds, user from UserID (see
        :func:`gwf_to_batsim`), site = OrigSiteID (None when -1).

    Raises:
        WorkloadError: a job line does not have exactly 29 columns, or SubmitTime, RunTime,
            NProcs, ReqNProcs, ReqTime or Status is not a number (file name, line, column).
    """
    path = Path(path)
    source = str(path)

    def number(tokens: list[str], name: str, lineno: int) -> float:
        index = _COL[name]
        return _parse_float(tokens[index], source, lineno, f"column {index + 1} ({name})")

    for lineno, line in _trace_lines(path):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        tokens = text.split()
        if len(tokens) != len(GWF_COLUMNS):
            raise WorkloadError(
                f"{source}, line {lineno}: a GWF job line has {len(GWF_COLUMNS)} columns, "
                f"found {len(tokens)}: {text[:80]!r}"
            )
        status = number(tokens, "Status", lineno)
        site = tokens[_COL["OrigSiteID"]]
        yield TraceRecord(
            line=lineno,
            job_id=_job_id(tokens[_COL["JobID"]]),
            submit=number(tokens, "SubmitTime", lineno),
            run=number(tokens, "RunTime", lineno),
            allocated=number(tokens, "NProcs", lineno),
            requested=number(tokens, "ReqNProcs", lineno),
            requested_time=number(tokens, "ReqTime", lineno),
            status=int(status) if status.is_integer() else -1,
            user=_user(tokens[_COL["UserID"]]),
            site=None if _unknown(site) else site,
        )


def gwf_to_batsim(
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
    site: str | Collection[str] | None = None,
    profile_kind: str = "delay",
) -> ConvertedWorkload:
    """Convert a GWF trace (Grid Workloads Archive) into a Batsim workload of delay jobs.

    GWF is defined by Iosup et al. for the Grid Workloads Archive (columns in the module
    docstring). The rules are those of :func:`schedulers.inputs.swf.swf_to_batsim`, with GWF
    columns in place of SWF fields:

    - Status (11): 5 (cancelled) dropped unless ``keep_cancelled``; 1 and 0 kept.
    - RunTime (4) -1 or 0 (never ran) drops the job; runtime = RunTime, or ReqTime (9) when
      > 0 with ``runtime_source="requested"``.
    - processors = ReqNProcs (8), falling back to NProcs (5) when -1; both -1 drops the job;
      res = ceil(processors / ``cores_per_host``).
    - subtime = SubmitTime (2) - origin; ``start``/``end`` filter SubmitTime in trace seconds.
    - ``site``: keep only jobs whose OrigSiteID (17) is this string (or one of these strings);
      jobs of other or unknown sites are dropped.
    - walltime = ReqTime (9) when > 0, else -1 (Batsim's "no walltime"); jobs whose runtime
      exceeds it are kept and will be killed at their walltime by Batsim.
    - extra fields: ``user`` = ``"u<UserID>"`` for a numeric UserID, the UserID itself for a
      string id (omitted when -1 or ``users=False``); ``site`` = OrigSiteID when not -1.
    - capacity = ``nb_hosts`` when given, else unknown (GWF has no machine-size header), so
      ``nb_res`` is the largest res unless ``nb_hosts`` is given.

    Args:
        path: ``.gwf`` file (plain or gzip-compressed).
        site: OrigSiteID value(s) to keep, or None for all sites.
        others: as for :func:`schedulers.inputs.swf.swf_to_batsim`.

    Returns:
        A :class:`ConvertedWorkload` (Batsim workload dict with ``.report``).

    Raises:
        ValueError: an option is out of range.
        FileNotFoundError: ``path`` does not exist.
        WorkloadError: a malformed line (file name, line number, column), or an oversized job
            with ``oversized="error"``.
    """
    return gwf_conversion(
        path, cores_per_host=cores_per_host, nb_hosts=nb_hosts, time_origin=time_origin,
        walltime=walltime, runtime_source=runtime_source, keep_cancelled=keep_cancelled,
        start=start, end=end, max_jobs=max_jobs, users=users, oversized=oversized, site=site,
        profile_kind=profile_kind,
    ).workload()


def gwf_conversion(
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
    site: str | Collection[str] | None = None,
    profile_kind: str = "delay",
) -> TraceConversion:
    """The conversion of :func:`gwf_to_batsim` (same arguments, same rules), set up but not run:
    ``.workload()`` gives :func:`gwf_to_batsim`'s result, ``.write(output)`` writes it to a file
    without holding the jobs (:class:`~schedulers.inputs.swf.TraceConversion`).

    Raises:
        ValueError: an option is out of range (at once; reading errors come when it runs).
    """
    _check_options(
        cores_per_host=cores_per_host, nb_hosts=nb_hosts, time_origin=time_origin,
        walltime=walltime, runtime_source=runtime_source, start=start, end=end,
        max_jobs=max_jobs, oversized=oversized, profile_kind=profile_kind,
    )
    sites = None if site is None else ({site} if isinstance(site, str) else set(site))
    report = ConversionReport(source=str(path), format="gwf")
    rules = _Rules(_GWF_NAMES, cores_per_host=cores_per_host, time_origin=time_origin, walltime=walltime,
                   runtime_source=runtime_source, keep_cancelled=keep_cancelled, start=start, end=end,
                   max_jobs=max_jobs, users=users, oversized=oversized, sites=sites, with_site=True)
    return TraceConversion(read_gwf(path), report, rules, lambda: nb_hosts)
