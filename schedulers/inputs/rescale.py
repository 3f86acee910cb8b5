"""Adapt an existing Batsim workload to a platform with a different number of hosts."""

from __future__ import annotations

import copy
from typing import Any, Literal

from .errors import WorkloadError
from .swf import ConversionReport, ConvertedWorkload, check_nb_hosts

__all__ = ["rescale_workload"]

RescaleMode = Literal["scale", "clamp", "drop"]


def _profile_is_fixed_size(profiles: dict[str, Any], name: Any, depth: int = 0) -> bool:
    """True when the profile (or a part of a composed one) is a ``parallel`` task, whose ``cpu``
    array fixes the number of hosts a job using it must get."""
    profile = profiles.get(name) if isinstance(name, str) else None
    if not isinstance(profile, dict) or depth > 32:
        return False
    if profile.get("type") == "parallel":
        return True
    if profile.get("type") in ("composed", "sequence"):
        return any(_profile_is_fixed_size(profiles, sub, depth + 1) for sub in profile.get("seq") or [])
    return False


def rescale_workload(
    data: dict[str, Any],
    nb_hosts: int,
    *,
    mode: RescaleMode = "scale",
    source: str = "<workload>",
) -> ConvertedWorkload:
    """Adapt a Batsim workload written for ``nb_res`` hosts to a platform of ``nb_hosts`` hosts.

    Modes (res = hosts requested by a job):

    - ``"scale"``: res' = ceil(res * nb_hosts / nb_res), at least 1 and at most ``nb_hosts``
      (exact integer arithmetic), keeping each job's share of the machine; e.g. res 16 of 48
      hosts on 22 hosts -> ceil(16 * 22 / 48) = ceil(7.33) = 8. A job asking for more than
      ``nb_res`` (more than the whole machine) gets ``nb_hosts``, counted in its own note.
    - ``"clamp"``: res' = min(res, nb_hosts).
    - ``"drop"``: jobs with res > ``nb_hosts`` are removed, the others are unchanged.

    ``nb_res`` becomes ``nb_hosts``; everything else (job fields and order, every profile, even
    those no job uses any more, other top-level fields such as a stale ``nb_jobs``) is a deep
    copy of the input. A workload without ``nb_res`` is scaled from its largest res (noted).
    Jobs whose res changes while their profile is a fixed-size ``parallel`` task are counted in
    the report's notes: Batsim needs such a job to get exactly ``len(cpu)`` hosts.

    Args:
        data: a Batsim workload dict (``{"nb_res", "jobs", "profiles"}``); not modified.
        nb_hosts: hosts of the target platform (>= 1).
        mode: ``"scale"``, ``"clamp"`` or ``"drop"``.
        source: name used in the report and in error messages (e.g. the file name).

    Returns:
        A :class:`~schedulers.inputs.swf.ConvertedWorkload` (the new workload dict) whose
        ``.report`` (format ``"batsim-json"``) counts the jobs read, kept, dropped (``drop``)
        and changed.

    Raises:
        ValueError: ``nb_hosts`` < 1 or an unknown ``mode``.
        WorkloadError: ``jobs`` is not a list of objects with an integer ``res`` >= 0 (a job of
            ``res`` 0, which Batsim 4.2.1 accepts, is kept as it is).
    """
    check_nb_hosts(nb_hosts)
    if mode not in ("scale", "clamp", "drop"):
        raise ValueError(f"mode must be 'scale', 'clamp' or 'drop', got {mode!r}")
    jobs = data.get("jobs")
    if not isinstance(jobs, list):
        raise WorkloadError(f"{source}: 'jobs' must be a list")
    for index, job in enumerate(jobs):
        res = job.get("res") if isinstance(job, dict) else None
        if not isinstance(res, int) or isinstance(res, bool) or res < 0:
            label = f"job {job.get('id')!r} (jobs[{index}])" if isinstance(job, dict) else f"jobs[{index}]"
            raise WorkloadError(f"{source}: {label}: 'res' must be an integer >= 0, got {res!r}")

    report = ConversionReport(source=source, format="batsim-json")
    result = copy.deepcopy(data)
    given = result.get("profiles")
    profiles = given if isinstance(given, dict) else {}
    nb_res = data.get("nb_res")
    if not isinstance(nb_res, int) or isinstance(nb_res, bool) or nb_res < 1:
        nb_res = max(1, max((job["res"] for job in jobs), default=1))
        if mode == "scale":   # (clamp and drop do not read it)
            report.note(f"no valid nb_res: scaled from the largest res ({nb_res})", len(jobs))

    kept = []
    for job in result["jobs"]:
        report.records_read += 1
        res = job["res"]
        if mode == "scale":
            new = max(1, -(-res * nb_hosts // nb_res)) if res else 0
            if new > nb_hosts:   # (res > nb_res: more than the whole machine the workload was made for)
                report.note(f"res above the workload's nb_res {nb_res}: clamped to {nb_hosts}, not scaled")
                new = nb_hosts
        elif mode == "clamp":
            new = min(res, nb_hosts)
        else:
            if res > nb_hosts:
                report.drop(f"res > {nb_hosts} hosts (mode='drop')")
                continue
            new = res
        if new != res:
            if mode != "scale" or res <= nb_res:   # (a job above nb_res is noted as clamped)
                report.note("res scaled" if mode == "scale" else f"res clamped to {nb_hosts}")
            if _profile_is_fixed_size(profiles, job.get("profile")):
                report.note("res changed for a job with a fixed-size 'parallel' profile")
            job["res"] = new
        kept.append(job)

    result["jobs"] = kept
    result["nb_res"] = nb_hosts
    report.jobs_kept = len(kept)
    report.nb_res = nb_hosts
    return ConvertedWorkload(result, report)
