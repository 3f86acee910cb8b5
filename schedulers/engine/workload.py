"""Read Batsim JSON workloads for the embedded engine.

A workload file holds ``jobs`` (``id``, ``subtime``, ``walltime`` (-1 = none), ``res``,
``profile``, any extra field) and ``profiles``. Several workloads can be simulated at once; they
are named ``w0``, ``w1``, ... in command-line order, as Batsim does, and job ids become
``"<workload>!<id>"``.

Profiles the engine simulates (Batsim 4.2.1 semantics, checked against
``shared/batsim-4.2.1/outputs/run3``): ``delay``, ``parallel_homogeneous``,
``parallel_homogeneous_total``, ``parallel``, ``composed`` (alias ``sequence``) with ``repeat``.
Other types (SMPI, usage traces, data staging, ...) raise :class:`WorkloadError` pointing to real
Batsim.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..inputs.errors import WorkloadError

SUPPORTED_PROFILES = ("delay", "parallel_homogeneous", "parallel_homogeneous_total", "parallel",
                      "composed", "sequence")


@dataclass(slots=True, eq=False)
class EngineJob:
    """A job inside the engine (mutable run-time state included)."""

    id: str
    name: str
    workload: str
    subtime: float
    walltime: float
    res: int
    profile: str
    raw: dict[str, Any]
    index: int = 0
    state: str = "NOT_SUBMITTED"
    start: float = -1.0
    finish: float = -1.0
    runtime: float = 0.0
    alloc: Any = None  # ProcSet
    hosts: tuple[int, ...] = ()
    return_code: int = 0
    energy: float = -1.0
    energy_start: float = 0.0
    # execution state
    stages: list[tuple[str, dict]] = field(default_factory=list)
    stage: int = 0
    stage_start: float = 0.0
    remaining: float = 1.0   # fraction of the current compute stage left
    rate: float = 0.0        # fraction of the current stage done per second
    flops: list[float] = field(default_factory=list)  # per allocated host, current stage
    version: int = 0
    kill_time: float = math.inf


@dataclass(slots=True)
class Workload:
    """One workload: name (``w0``), file path, jobs sorted by subtime, profiles."""

    name: str
    path: str
    jobs: list[EngineJob]
    profiles: dict[str, dict[str, Any]]


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_profile(src: str, name: str, p: Any, profiles: dict, has_network: bool) -> None:
    where = f"{src}: profile {name!r}"
    if not isinstance(p, dict) or "type" not in p:
        raise WorkloadError(f"{where}: a profile must be an object with a 'type'")
    t = p["type"]
    if t not in SUPPORTED_PROFILES:
        raise WorkloadError(
            f"{where}: profile type {t!r} is not simulated by the embedded engine "
            f"(supported: {', '.join(SUPPORTED_PROFILES)}); run it on real Batsim (--engine batsim)")
    if t == "delay":
        if not _num(p.get("delay")) or p["delay"] <= 0:  # Batsim refuses non-positive delays
            raise WorkloadError(f"{where}: 'delay' must be a number > 0, got {p.get('delay')!r}")
    elif t in ("parallel_homogeneous", "parallel_homogeneous_total"):
        for k in ("cpu", "com"):
            if not _num(p.get(k)) or p[k] < 0:
                raise WorkloadError(f"{where}: '{k}' must be a number >= 0, got {p.get(k)!r}")
        if p["com"] > 0 and has_network:
            raise WorkloadError(
                f"{where}: communications (com={p['com']}) need SimGrid's network model, which the "
                "embedded engine does not simulate on a platform with links; use a *_no_net* "
                "platform or real Batsim (--engine batsim)")
    elif t == "parallel":
        cpu, com = p.get("cpu"), p.get("com")
        if not isinstance(cpu, list) or not all(_num(x) and x >= 0 for x in cpu):
            raise WorkloadError(f"{where}: 'cpu' must be a list of numbers >= 0")
        if not isinstance(com, list) or len(com) != len(cpu) ** 2 or not all(_num(x) and x >= 0 for x in com):
            raise WorkloadError(f"{where}: 'com' must be a list of {len(cpu)}x{len(cpu)} numbers >= 0")
        if has_network and any(x > 0 for x in com):
            raise WorkloadError(
                f"{where}: communications need SimGrid's network model, which the embedded engine "
                "does not simulate on a platform with links; use real Batsim (--engine batsim)")
    else:  # composed / sequence
        seq = p.get("seq")
        if not isinstance(seq, list) or not seq or not all(isinstance(s, str) for s in seq):
            raise WorkloadError(f"{where}: 'seq' must be a non-empty list of profile names")
        for s in seq:
            if s not in profiles:
                raise WorkloadError(f"{where}: 'seq' names missing profile {s!r}")
        rep = p.get("repeat", 1)
        if not isinstance(rep, int) or isinstance(rep, bool) or rep < 1:
            raise WorkloadError(f"{where}: 'repeat' must be an integer >= 1, got {rep!r}")


def flatten_profile(name: str, profiles: dict[str, dict], depth: int = 0) -> list[tuple[str, dict]]:
    """The leaf profiles of ``name`` in execution order (``composed`` expanded with ``repeat``).

    Raises:
        WorkloadError: a cycle of composed profiles.
    """
    if depth > 32:
        raise WorkloadError(f"profile {name!r}: composed profiles nest too deep (cycle?)")
    p = profiles[name]
    if p["type"] in ("composed", "sequence"):
        out: list[tuple[str, dict]] = []
        for _ in range(int(p.get("repeat", 1))):
            for s in p["seq"]:
                out.extend(flatten_profile(s, profiles, depth + 1))
        return out
    return [(name, p)]


def build_job(where: str, workload: str, name: str, j: dict[str, Any], subtime: float,
              profiles: dict[str, dict], nb_hosts: int, flat_cache: dict[str, list] | None = None) -> EngineJob:
    """Check the ``walltime``, ``res`` and ``profile`` of job ``j`` (``subtime`` already checked
    by the caller) and build it as ``workload!name``; used for workload files and for jobs
    registered by the scheduler (``REGISTER_JOB``).

    Raises:
        WorkloadError: a message starting with ``where``.
    """
    wall = j.get("walltime", -1)
    if not _num(wall) or (wall <= 0 and wall != -1):
        raise WorkloadError(f"{where}: 'walltime' must be > 0 or -1 (none), got {wall!r}")
    res = j.get("res")
    if not isinstance(res, int) or isinstance(res, bool) or res < 1:
        raise WorkloadError(f"{where}: 'res' must be an integer >= 1, got {res!r}")
    if res > nb_hosts:
        raise WorkloadError(f"{where}: requests {res} hosts but the platform has {nb_hosts} compute hosts")
    prof = j.get("profile")
    if not isinstance(prof, str) or prof not in profiles:
        raise WorkloadError(f"{where}: profile {prof!r} is not defined in 'profiles'")
    cache = {} if flat_cache is None else flat_cache
    if prof not in cache:
        cache[prof] = flatten_profile(prof, profiles)
    for leaf_name, leaf in cache[prof]:
        if leaf["type"] == "parallel" and len(leaf["cpu"]) != res:
            raise WorkloadError(f"{where}: profile {leaf_name!r} is 'parallel' on {len(leaf['cpu'])} "
                                f"hosts but the job requests {res}")
    raw = dict(j)
    full = f"{workload}!{name}"
    raw["id"] = full
    return EngineJob(id=full, name=name, workload=workload, subtime=subtime, walltime=float(wall),
                     res=res, profile=prof, raw=raw, stages=cache[prof])


def load_workload(path: str | Path, name: str, nb_hosts: int, *, has_network: bool = False,
                  data: dict | None = None) -> Workload:
    """Read and check one Batsim workload for the engine.

    Args:
        path: the JSON file (also used in error messages).
        name: workload name (``w0``...).
        nb_hosts: number of compute hosts of the platform.
        has_network: the platform has links (then communications are refused).
        data: the already-parsed JSON, if any.

    Raises:
        WorkloadError: malformed JSON, missing fields, negative times, duplicate ids, missing or
            unsupported profiles, ``res`` larger than the platform (message names file and item).
    """
    src = str(path)
    if data is None:
        try:
            with open(src, encoding="utf-8") as f:
                data = json.load(f)
        except json.JSONDecodeError as exc:
            raise WorkloadError(f"{src}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
        except OSError as exc:
            raise WorkloadError(f"{src}: cannot read workload: {exc.strerror or exc}") from None
    if not isinstance(data, dict):
        raise WorkloadError(f"{src}: a workload must be a JSON object with 'jobs' and 'profiles'")
    profiles = data.get("profiles", {})
    jobs_in = data.get("jobs")
    if not isinstance(profiles, dict):
        raise WorkloadError(f"{src}: 'profiles' must be an object")
    if not isinstance(jobs_in, list):
        raise WorkloadError(f"{src}: 'jobs' must be a list")
    for pname, p in profiles.items():
        check_profile(src, pname, p, profiles, has_network)
    flat_cache: dict[str, list] = {}
    jobs: list[EngineJob] = []
    seen: set[str] = set()
    for k, j in enumerate(jobs_in):
        if not isinstance(j, dict):
            raise WorkloadError(f"{src}: job #{k} is not an object")
        if "id" not in j:
            raise WorkloadError(f"{src}: job #{k} has no 'id'")
        jid = str(j["id"])
        where = f"{src}: job {jid!r}"
        if jid in seen:
            raise WorkloadError(f"{where}: duplicate job id")
        seen.add(jid)
        for key in ("subtime", "res", "profile"):
            if key not in j:
                raise WorkloadError(f"{where}: missing field {key!r}")
        sub = j["subtime"]
        if not _num(sub) or sub < 0:
            raise WorkloadError(f"{where}: 'subtime' must be a number >= 0, got {sub!r}")
        jobs.append(build_job(where, name, jid, j, float(sub), profiles, nb_hosts, flat_cache))
    # Batsim submits in job_comparator_subtime_number order (src/jobs.cpp): subtime, then full id string.
    jobs.sort(key=lambda x: (x.subtime, x.id))
    return Workload(name=name, path=src, jobs=jobs, profiles=profiles)
