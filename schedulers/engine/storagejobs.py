"""Jobs whose allocation holds storage hosts, as Batsim 4.2.1 runs them.

Batsim lets EXECUTE_JOB allocate storage machines (ids after the compute hosts) as any machine
(``server_on_execute_job``, ``src/server.cpp``): each must be idle or computing, at a computation
pstate with ``-E``, and, with ``--disable-storage-sharing`` only, run no other job (storage
machines are shared by default, whether or not compute sharing is enabled). The job's actor
then runs its profile on every allocated machine, storage hosts last (they have the largest
ids): a ``delay`` sleeps, a parallel task gives them their share of the profile's flops and
bytes, and Batsim aborts as soon as a task puts flops on one ("Some computation (...) is
assigned to storage node", ``check_ptask_execution_permission``, ``src/task_execution.cpp``).
A storage host running a job is ``computing``: Batsim counts it in ``out_machine_states.csv``
from then on (its count starts with the compute hosts only), in the ``time_*`` columns of
``out_schedule.csv``, and the job's ``consumed_energy`` includes its (idle) energy. Recorded
on real Batsim 4.2.1: ``tests/fixtures/batsim_storage_jobs``.

The engine runs such jobs when the allocation also holds a compute host (the job's actor then
runs on a compute host); a job on storage hosts only is refused (not simulated).
"""

from __future__ import annotations

from typing import Any

from ..core.model import HostState
from .clock import shown_time
from .ports import EngineError

__all__ = ["check_storage_host", "storage_flops"]


def check_storage_host(job: Any, alloc: Any, hid: int, run: Any, pstate: int | None, sharing: bool,
                       now: float) -> None:
    """Batsim's checks of storage machine ``hid`` in EXECUTE_JOB ``job``'s allocation ``alloc``.

    Args:
        run: its :class:`~.hosts.HostRun` (state, jobs); ``pstate``: its current pstate with
            ``-E`` (None without); ``sharing``: storage sharing (Batsim's default, unless
            ``--disable-storage-sharing``).

    Raises:
        EngineError: one line naming the job and the machine, with Batsim's abort."""
    name = run.spec.name
    where = f"EXECUTE_JOB {job.id} at t={shown_time(now)}: machine {hid} ({name}, a storage host)"
    if run.state is not HostState.IDLE and run.state is not HostState.COMPUTING:
        raise EngineError(f"{where} is {run.state.value}; Batsim 4.2.1 aborts (\"cannot compute jobs now\")")
    if pstate is not None and run.spec.pstate_kinds.get(pstate, "computation") != "computation":
        raise EngineError(f"{where} is not in a computation pstate (pstate {pstate}); Batsim 4.2.1 aborts: "
                          f"\"machine {hid} (hostname='{name}') is not in a computation pstate (ps={pstate})\"")
    if run.jobs and not sharing:
        raise EngineError(f"{where} already runs {sorted(run.jobs)} and storage sharing is disabled "
                          "(--disable-storage-sharing); Batsim 4.2.1 aborts")


def storage_flops(job: Any, name: str, flops: list[float], storage: list[Any], nb_compute: int, now: float
                  ) -> list[float]:
    """The flops of ``job``'s compute hosts out of ``flops`` (one per allocated machine, the
    storage hosts ``job.st_hosts`` last), after Batsim's check that none goes to a storage host.

    Raises:
        EngineError: flops above 1e-10 on a storage host: Batsim 4.2.1's abort, in one line."""
    n = len(job.hosts)
    for j, f in zip(job.st_hosts, flops[n:]):
        if abs(f) > 1e-10:
            raise EngineError(f"t={shown_time(now)}: job {job.id}'s profile {name!r} puts {f:g} flops on storage machine "
                              f"{nb_compute + j} ({storage[j].name}); real Batsim 4.2.1 aborts (\"Some computation "
                              f"({f:g}) is assigned to storage node (id={nb_compute + j}, name='{storage[j].name}')\")")
    return flops[:n]
