"""The parallel tasks of Batsim's IO profiles: which hosts they run on and the bytes they move.

Batsim 4.2.1 (``generate_parallel_homogeneous_with_pfs`` and ``generate_data_staging_task``,
``src/task_execution.cpp``) runs both IO profile types as SimGrid parallel tasks of no
computation (every host's flops 0), whose byte matrix moves data to and from *storage hosts*
(hosts with ``<prop id="role" value="storage"/>``, numbered after the compute hosts in name
order). A storage host is named by a *label*, which EXECUTE_JOB's ``storage_mapping``
(``{label: machine id}``) maps to a machine:

``parallel_homogeneous_pfs`` (``bytes_to_read``, ``bytes_to_write``, label ``storage`` or ``host``, default ``"pfs"``)
    The task runs on the job's ``n`` hosts plus the storage host (index ``n``): each host
    ``i < n`` sends ``bytes_to_write`` bytes to it, and it sends ``bytes_to_read`` bytes to each
    (row-major order of the matrix: the writes, then the reads). Without a ``storage_mapping``
    the platform's only storage host is used, whatever the label.
``data_staging`` (``nb_bytes``, labels ``from`` and ``to``)
    The task runs on the two storage hosts only (the job's hosts are allocated, shown computing,
    and idle): ``from`` sends ``nb_bytes`` bytes to ``to``. Both labels must be in the mapping.

Byte amounts <= 0 move nothing (SimGrid's ``ptask_L07`` only loads a route for bytes > 0); a task
that moves nothing has no work and ends at once, as a ``parallel`` profile of no work. The
errors are Batsim's aborts, raised when the job's actor generates the task (the stage starts).
"""

from __future__ import annotations

from typing import Any

from .clock import shown_time
from .platform import PlatformSpec
from .ports import EngineError

__all__ = ["IO_PROFILES", "io_task", "check_storage_mapping"]

#: The profile types run by :func:`io_task`.
IO_PROFILES = ("parallel_homogeneous_pfs", "data_staging")


def check_storage_mapping(job_id: str, mapping: Any) -> dict[str, int]:
    """EXECUTE_JOB's ``storage_mapping`` as Batsim 4.2.1 reads it (``handle_execute_job``,
    ``src/protocol.cpp``): a non-empty object of string labels to integer machine ids.

    Returns:
        ``{label: machine id}``.

    Raises:
        EngineError: one line naming the job and Batsim's abort (not an object, empty, a value
            that is not a 32-bit integer: ``5.0``, ``"5"`` and ``true`` are refused)."""
    where = f"EXECUTE_JOB {job_id}: 'storage_mapping'"
    if not isinstance(mapping, dict):
        raise EngineError(f"{where} must be an object {{storage label: machine id}}, got {mapping!r}; "
                          "Batsim 4.2.1 aborts")
    if not mapping:
        raise EngineError(f"{where} must be a non-empty object {{storage label: machine id}}; Batsim 4.2.1 aborts")
    out: dict[str, int] = {}
    for label, mid in mapping.items():
        if not isinstance(label, str):
            raise EngineError(f"{where}: label {label!r} is not a string; Batsim 4.2.1 aborts")
        if type(mid) is not int or not -2 ** 31 <= mid < 2 ** 31:
            raise EngineError(f"{where}: label {label!r} maps to {mid!r}, not an integer machine id; "
                              "Batsim 4.2.1 aborts")
        out[label] = mid
    return out


def io_task(job: Any, name: str, prof: dict, platform: PlatformSpec, now: float) -> tuple[list[str], list[tuple[int, int, float]]]:
    """The parallel task of IO profile ``prof`` (named ``name``) of ``job`` at time ``now`` (s).

    Args:
        job: the job (``id``, ``hosts``: its compute host ids, ``st_hosts``: the storage hosts of its
            allocation, ``storage``: its storage mapping).
        name: the profile's name, ``prof`` the profile (checked by :func:`.workload.check_profile`).
        platform: the platform (compute hosts in id order, then storage hosts).

    Returns:
        ``(hosts, pairs)``: the task's host names in Batsim's order, and its ``(sender index,
        receiver index, bytes)`` with bytes > 0 in row-major order of the byte matrix.

    Raises:
        EngineError: one line naming the job, the profile and the label or host, for each of
            Batsim 4.2.1's aborts: no mapping and not exactly one storage host (pfs), a label not
            in the mapping, a machine id that does not exist, a label on a compute host.
    """
    compute = [h.name for h in platform.compute]
    names = [compute[hid] for hid in job.hosts] + [platform.storage[j].name for j in job.st_hosts]
    t = prof["type"]
    where = f"t={shown_time(now)}: job {job.id}'s profile {name!r} ({t})"
    if t == "parallel_homogeneous_pfs":
        prefix = "Cannot generate a homogeneous parallel task with pfs: "
        if not job.storage:
            if len(platform.storage) != 1:
                raise EngineError(f"{where}: no storage_mapping in EXECUTE_JOB and the platform has "
                                  f"{len(platform.storage)} storage hosts, not one; real Batsim 4.2.1 aborts "
                                  f"(\"{prefix}No storage/host mapping given and there is no (or more than one) "
                                  "storage node available\")")
            pfs = platform.storage[0].name
        else:
            label = prof.get("storage", prof.get("host", "pfs"))
            pfs = _storage_host(where, prefix, label, job.storage, compute, platform)
        n = len(names)
        w, r = float(prof.get("bytes_to_write", 0)), float(prof.get("bytes_to_read", 0))
        pairs = [(i, n, w) for i in range(n)] if w > 0 else []
        if r > 0:
            pairs += [(n, j, r) for j in range(n)]
        return names + [pfs], pairs
    assert t == "data_staging"
    prefix = "Cannot generate a data staging task: "
    src = _storage_host(where, prefix, prof["from"], job.storage, compute, platform)
    dst = _storage_host(where, prefix, prof["to"], job.storage, compute, platform)
    b = float(prof["nb_bytes"])
    return [src, dst], ([(0, 1, b)] if b > 0 else [])


def _storage_host(where: str, prefix: str, label: str, mapping: dict[str, int], compute: list[str],
                  platform: PlatformSpec) -> str:
    """The name of the storage host ``label`` maps to (Batsim's checks and their messages)."""
    if label not in mapping:
        known = ", ".join(repr(k) for k in mapping) or "none: EXECUTE_JOB gave no storage_mapping"
        raise EngineError(f"{where}: storage label {label!r} is not in EXECUTE_JOB's storage_mapping (labels: "
                          f"{known}); real Batsim 4.2.1 aborts (\"{prefix}: Unknown storage label='{label}'\")")
    mid = mapping[label]
    nc = len(compute)
    if not 0 <= mid < nc + len(platform.storage):
        raise EngineError(f"{where}: storage label {label!r} maps to machine {mid}, which does not exist (machines "
                          f"0 to {nc + len(platform.storage) - 1}); real Batsim 4.2.1 aborts (\"Cannot get "
                          f"machine {mid}: it does not exist\")")
    if mid < nc:
        raise EngineError(f"{where}: storage label {label!r} maps to machine {mid} ({compute[mid]}), a compute "
                          f"host; real Batsim 4.2.1 aborts (\"{prefix}The host(id={mid}, name='{compute[mid]}') "
                          f"pointed to by label='{label}' is not a storage host\")")
    return platform.storage[mid - nc].name
