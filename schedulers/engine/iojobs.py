"""EXECUTE_JOB's ``additional_io_job``: an IO profile run inside the job's own parallel tasks.

Batsim 4.2.1 (``handle_execute_job``, ``src/protocol.cpp``; ``initialize_sequential_tasks``,
``src/jobs_execution.cpp``; ``execute_parallel_task``, ``src/task_execution.cpp``) reads
``{"profile_name": name, "alloc": "machine ids", "profile": {...} (optional)}``:

* ``profile`` given: a new profile of the job's workload named ``name`` (Batsim aborts if the name
  is taken, even by a removed profile); else ``name`` must be a profile of the workload still held
  (not removed at load because no job used it, nor garbage-collected after a job using it ended).
* ``alloc``: machine ids (``"0-1 4"``), compute or storage machines, numbered as Batsim does.
* A ``composed`` IO profile needs a ``composed`` job profile of the same ``seq`` length: the IO
  profile's ``seq[k]`` goes with the job's ``seq[k]`` in every repetition, down nested sequences.
  A non-composed IO profile goes with the job's only stage.

Each stage of the job whose profile is ``parallel``, ``parallel_homogeneous`` or
``parallel_homogeneous_total`` runs as **one** parallel task merged from the two: the IO
profile's matrices are generated on ``len(alloc)`` hosts, then both are put on the hosts of
``job allocation | alloc`` in machine id order: a host's flops and a pair's bytes are the sums of
the job's and the IO profile's (its ``com[i * n + j]``, from its ``i``-th to its ``j``-th host of
``alloc`` in id order). The job's end, walltime and kill are those of that task; the IO hosts
are not allocated (their machine state does not change, the job's ``consumed_energy`` counts its
own hosts only); a ``delay`` stage ignores its IO profile. Batsim aborts when a storage machine
of the merged task gets flops (``check_ptask_execution_permission``).

Refused as Batsim's aborts (one line, when the stage starts as in Batsim, or at EXECUTE_JOB):
the checks above; an IO profile of another type than the three above ("Should not be reached",
or a storage mapping that is null for the IO profiles); a ``parallel`` IO profile whose ``cpu``
does not have ``len(alloc)`` values. Refused as not simulated (Batsim's result is undefined or
outside the engine's model): an IO profile that moves no bytes (Batsim reads past its empty
matrix: recorded, a segmentation fault), a ``composed`` IO profile given inline (its ``seq`` is never resolved) or beside a
job profile that is not ``composed`` at that level, a job stage of an IO profile type
(Batsim's merge assumes the job's matrix has the allocation's size), and flops of the IO profile
on a compute host outside the job's allocation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..inputs.errors import EventsError, WorkloadError
from .extevents import interval_set
from .iotasks import IO_PROFILES
from .platform import PlatformSpec
from .clock import shown_time
from .ports import EngineError

__all__ = ["IOJob", "read_io_job", "io_leaf", "merged_task"]

#: The job and IO profile types Batsim merges (``generate_matrices_from_profile``).
MERGED = ("parallel", "parallel_homogeneous", "parallel_homogeneous_total")


@dataclass(slots=True)
class IOJob:
    """An accepted ``additional_io_job``: its profile's name and profile, its machine ids (sorted)."""

    name: str
    profile: dict
    alloc: tuple[int, ...]


def read_io_job(job: Any, value: Any, workload: Any, nb_machines: int, now: float, check_profile) -> IOJob:
    """EXECUTE_JOB ``job``'s ``additional_io_job`` ``value`` as Batsim 4.2.1 reads it.

    Args:
        job: the job (``id``, ``profile``); ``workload``: its :class:`~.workload.Workload`
            (``profiles``, ``collected``), to which an inline profile is added.
        nb_machines: compute plus storage machines (ids ``0 .. nb_machines - 1``).
        check_profile: :func:`.workload.check_profile`, for an inline profile.

    Returns:
        the :class:`IOJob`.

    Raises:
        EngineError: one line naming the job and Batsim's abort (see the module docstring)."""
    where = f"t={shown_time(now)}: EXECUTE_JOB {job.id}: 'additional_io_job'"
    if not isinstance(value, dict):
        raise EngineError(f"{where} must be an object {{profile_name, alloc[, profile]}}, got {value!r}; "
                          "Batsim 4.2.1 aborts")
    name = value.get("profile_name")
    if not isinstance(name, str):
        raise EngineError(f"{where}: 'profile_name' must be a string, got {name!r}; Batsim 4.2.1 aborts "
                          "(\"the 'profile_name' field is mandatory\")")
    profiles = workload.profiles
    if "profile" in value:
        if name in profiles:
            raise EngineError(f"{where}: profile {name!r} already exists in workload {workload.name!r}; Batsim "
                              f"4.2.1 aborts (\"The given profile name '{name}' already exists!\"): give a new name")
        prof = value["profile"]
        if not isinstance(prof, dict):
            raise EngineError(f"{where}: 'profile' must be an object, got {prof!r}; Batsim 4.2.1 aborts")
        try:
            check_profile(where, name, prof, profiles)
        except WorkloadError as exc:
            raise EngineError(str(exc)) from None
        if prof["type"] == "composed":
            raise EngineError(f"{where}: profile {name!r} is a composed profile given inline: Batsim 4.2.1 never "
                              "resolves its 'seq' (undefined behaviour), not simulated; put it in the workload")
        profiles[name] = prof
    elif name not in profiles:
        raise EngineError(f"{where}: profile {name!r} does not exist in workload {workload.name!r}; Batsim 4.2.1 "
                          f"aborts (\"The given profile name '{name}' does not exists\")")
    elif name in workload.collected:
        raise EngineError(f"{where}: profile {name!r} of workload {workload.name!r} was removed (no job used it "
                          "when the workload was loaded, or a job using it ended); Batsim 4.2.1 aborts (\"it "
                          "existed some time ago but is no longer accessible\")")
    prof = profiles[name]
    _check_shapes(where, name, prof, job.profile, profiles)
    alloc = value.get("alloc")
    if not isinstance(alloc, str):
        raise EngineError(f"{where}: 'alloc' must be a string of machine ids (\"0-3 5\"), got {alloc!r}; "
                          "Batsim 4.2.1 aborts")
    ids = _machine_ids(where, alloc)
    bad = [i for i in ids if i >= nb_machines]
    if bad:
        raise EngineError(f"{where}: machine {bad[0]} of 'alloc' {alloc!r} does not exist (machines 0 to "
                          f"{nb_machines - 1}); Batsim 4.2.1 aborts when the job's task is made (\"Cannot get "
                          f"machine {bad[0]}: it does not exist\")")
    return IOJob(name, prof, ids)


def _machine_ids(where: str, text: str) -> tuple[int, ...]:
    """The ids of Batsim's ``IntervalSet::from_string_hyphen(text, " ", "-")``, sorted."""
    try:
        return tuple(interval_set(text, where, "alloc"))
    except EventsError as exc:
        raise EngineError(f"{exc}; Batsim 4.2.1 aborts (\"Invalid JSON message: bad IO allocation\")") from None


def _check_shapes(where: str, io_name: str, io: dict, job_name: str, profiles: dict) -> None:
    """Batsim's check of a composed IO profile (a composed job profile of the same length), and
    the shapes on which its pairing of the sequences is undefined (refused, not simulated)."""
    job = profiles[job_name]
    if io["type"] == "composed":
        if job["type"] != "composed":
            raise EngineError(f"{where}: profile {io_name!r} is composed but job profile {job_name!r} is "
                              f"{job['type']}; Batsim 4.2.1 aborts (\"they must have compatible profile in order "
                              "to be merged\")")
        if len(io["seq"]) != len(job["seq"]):
            raise EngineError(f"{where}: IO profile {io_name!r} has {len(io['seq'])} profiles in its sequence, job "
                              f"profile {job_name!r} {len(job['seq'])}; Batsim 4.2.1 aborts (\"should be the same\")")
    stack = [(job_name, io_name)]
    while stack:
        j, i = stack.pop()
        jp, ip = profiles[j], profiles[i]
        if jp["type"] != "composed":
            continue
        if ip["type"] != "composed" or len(ip["seq"]) < len(jp["seq"]):
            raise EngineError(f"{where}: job profile {j!r} is composed but IO profile {i!r} is not a sequence as "
                              "long: Batsim 4.2.1 reads it as one (undefined behaviour), not simulated")
        stack.extend(zip((str(x) for x in jp["seq"]), (str(x) for x in ip["seq"])))


def io_leaf(io: IOJob, path: list[tuple[str, int]], profiles: dict) -> tuple[str, dict]:
    """The IO profile paired with the stage whose composed ancestors are ``path`` (``[(composed
    profile, index in its repeated seq)]``, :meth:`.workload.Stages.path`; empty for a leaf job
    profile): the IO profile's ``seq[index mod len(seq)]`` at each level."""
    name, prof = io.name, io.profile
    for composed, index in path:
        name = str(prof["seq"][index % len(profiles[composed]["seq"])])
        prof = profiles[name]
    return name, prof


def _matrices(where: str, name: str, prof: dict, n: int) -> tuple[list[float], list[float]]:
    """Flops per host and the row-major byte matrix (empty: no bytes) of ``prof`` on ``n`` hosts
    (``generate_parallel_task`` and the homogeneous ones, ``src/task_execution.cpp``)."""
    t = prof["type"]
    if t == "parallel":
        if len(prof["cpu"]) != n:
            raise EngineError(f"{where}: profile {name!r} has {len(prof['cpu'])} hosts but the allocation {n}; "
                              f"Batsim 4.2.1 aborts (\"the number of resources given by the allocation ({n}) is "
                              f"different from the number of resouces given by the profile data ({len(prof['cpu'])})\")")
        return [float(x) for x in prof["cpu"]], [float(x) for x in prof["com"]]
    div = n if t == "parallel_homogeneous_total" else 1
    cpu, com = float(prof["cpu"]) / div, float(prof["com"]) / div
    return [cpu] * n, ([0.0 if i == j else com for i in range(n) for j in range(n)] if com > 0 else [])


def merged_task(job: Any, stage: tuple[str, dict], io: tuple[str, dict], alloc: tuple[int, ...],
                platform: PlatformSpec, now: float
                ) -> tuple[list[str], list[tuple[int, int, float]], list[float], tuple[int, ...], tuple[int, ...]]:
    """The parallel task of ``job``'s stage ``(name, profile)`` merged with IO profile ``io`` on
    machines ``alloc`` (module docstring).

    Returns:
        ``(hosts, pairs, flops, compute ids, storage indices)``: the task's host names in machine id
        order, its ``(sender, receiver, bytes)`` with bytes > 0 in row-major order (indices in
        ``hosts``), the flops of each of the job's hosts, the task's compute host ids and its
        storage hosts (indices among the storage hosts).

    Raises:
        EngineError: one line naming the job, its stage's profile and the IO profile, for the
            aborts and the cases not simulated of the module docstring."""
    (name, prof), (io_name, io_prof) = stage, io
    where = f"t={shown_time(now)}: job {job.id}'s profile {name!r} with additional IO profile {io_name!r}"
    if prof["type"] in IO_PROFILES:
        raise EngineError(f"{where}: an additional IO job beside a {prof['type']} stage is not simulated (Batsim "
                          "4.2.1 merges matrices of other sizes than the allocation's); use real Batsim")
    if io_prof["type"] not in MERGED:
        what = ("its storage mapping is null (\"storage mapping is null but the code uses it!\")"
                if io_prof["type"] in IO_PROFILES else "\"Should not be reached\"")
        raise EngineError(f"{where}: an IO profile of type {io_prof['type']}: Batsim 4.2.1 aborts ({what})")
    nc = len(platform.compute)
    jobs_ids = tuple(job.hosts) + tuple(nc + j for j in job.st_hosts)   # (its storage hosts last)
    job_f, job_b = _matrices(where, name, prof, len(jobs_ids))
    io_f, io_b = _matrices(where, io_name, io_prof, len(alloc))
    if not io_b:
        raise EngineError(f"{where}: the IO profile moves no bytes: Batsim 4.2.1 then reads past its empty byte "
                          "matrix (undefined behaviour: a segmentation fault), not simulated")
    ids = sorted(set(jobs_ids) | set(alloc))
    jpos = {h: k for k, h in enumerate(jobs_ids)}
    ipos = {h: k for k, h in enumerate(alloc)}
    flops = []
    for h in ids:
        f = (job_f[jpos[h]] if h in jpos else 0.0) + (io_f[ipos[h]] if h in ipos else 0.0)
        if h >= nc and abs(f) > 1e-10:
            raise EngineError(f"{where}: {f:g} flops on storage machine {h} ({platform.storage[h - nc].name}); "
                              f"Batsim 4.2.1 aborts (\"Some computation ({f:g}) is assigned to storage node\")")
        if h < nc and h not in jpos and f != 0:
            raise EngineError(f"{where}: {f:g} flops on compute host {h} ({platform.compute[h].name}), outside the "
                              "job's allocation: not simulated (the engine computes on a job's own hosts only); "
                              "use real Batsim")
        flops.append(f)
    nj, ni, n = len(jobs_ids), len(alloc), len(ids)
    pairs = []
    for s in range(n):
        for r in range(n):
            b = 0.0
            hs, hr = ids[s], ids[r]
            if job_b and hs in jpos and hr in jpos:
                b += job_b[jpos[hs] * nj + jpos[hr]]
            if hs in ipos and hr in ipos:
                b += io_b[ipos[hs] * ni + ipos[hr]]
            if b > 0:
                pairs.append((s, r, b))
    names = [platform.compute[h].name if h < nc else platform.storage[h - nc].name for h in ids]
    return (names, pairs, [flops[ids.index(h)] for h in job.hosts], tuple(h for h in ids if h < nc),
            tuple(h - nc for h in ids if h >= nc))
