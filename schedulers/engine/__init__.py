"""Embedded Batsim-compatible engine (see :mod:`schedulers.engine.simulator` for the semantics).

Typical use::

    from schedulers.engine import simulate
    result = simulate("platforms/g5k_nantes_econome.xml", ["workload.json"], policy, energy=True,
                      export_prefix="out/out_")
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from .outputs import write_outputs
from .platform import PlatformSpec, read_platform
from .simulator import Deadlock, Engine, EngineError, EngineResult, InProcessPort, Reply, SchedulerPort
from .workload import Workload, load_workload

__all__ = ["simulate", "build_engine", "Engine", "EngineError", "Deadlock", "EngineResult", "InProcessPort",
           "Reply", "SchedulerPort", "Workload", "read_platform", "load_workload", "write_outputs"]


def build_engine(platform: str | Path | PlatformSpec, workloads: list[str | Path | dict], *,
                 energy: bool = False, compute_sharing: bool = False, forward_profiles: bool = False,
                 dynamic_jobs: bool = False, acknowledge_dynamic_jobs: bool = False, profile_reuse: bool = False,
                 master_host: str = "master_host", trace_outputs: bool = True,
                 progress: Callable[[float, int, int], None] | None = None) -> Engine:
    """Read the inputs and build an :class:`Engine` (workloads named w0, w1, ... in order).

    ``workloads`` items are JSON paths or already-parsed workload dicts (named ``<dict>``).

    Raises:
        PlatformError, WorkloadError: bad inputs (message names the file and item).
    """
    spec = platform if isinstance(platform, PlatformSpec) else read_platform(platform, master_host=master_host)
    wls = []
    for i, w in enumerate(workloads):
        if isinstance(w, dict):
            wls.append(load_workload(f"<workload w{i}>", f"w{i}", len(spec.compute), data=w))
        else:
            wls.append(load_workload(w, f"w{i}", len(spec.compute)))
    return Engine(spec, wls, energy=energy, compute_sharing=compute_sharing, forward_profiles=forward_profiles,
                  dynamic_jobs=dynamic_jobs, acknowledge_dynamic_jobs=acknowledge_dynamic_jobs,
                  profile_reuse=profile_reuse,
                  trace_outputs=trace_outputs, progress=progress)


def simulate(platform: str | Path | PlatformSpec, workloads: list[str | Path | dict], scheduler: Any, *,
             energy: bool = False, compute_sharing: bool = False, forward_profiles: bool = False,
             dynamic_jobs: bool = False, acknowledge_dynamic_jobs: bool = False, profile_reuse: bool = False,
             export_prefix: str | Path | None = None, master_host: str = "master_host",
             progress: Callable[[float, int, int], None] | None = None) -> EngineResult:
    """Run one simulation in-process.

    Args:
        platform: SimGrid platform XML path (or a parsed :class:`PlatformSpec`).
        workloads: Batsim workload JSON paths or dicts.
        scheduler: a :class:`~schedulers.core.policy.Policy` (called in-process) or any
            :class:`SchedulerPort`.
        energy: Batsim's ``-E``.
        compute_sharing, forward_profiles, dynamic_jobs, acknowledge_dynamic_jobs, profile_reuse:
            Batsim's ``--enable-compute-sharing``, ``--forward-profiles-on-submission``,
            ``--enable-dynamic-jobs``, ``--acknowledge-dynamic-jobs``, ``--enable-profile-reuse``.
        export_prefix: write Batsim's output files with this prefix (``out/out_``) when given.

    Returns:
        The :class:`EngineResult`.

    Raises:
        PlatformError, WorkloadError: bad inputs. EngineError: invalid decisions, livelock.
        Deadlock (an EngineError): nothing left to simulate before the end; as real Batsim
        4.2.1, the output files of the run up to the deadlock are written first (when
        ``export_prefix`` is given) and the error's ``result`` holds that run.
    """
    engine = build_engine(platform, workloads, energy=energy, compute_sharing=compute_sharing,
                          forward_profiles=forward_profiles, dynamic_jobs=dynamic_jobs,
                          acknowledge_dynamic_jobs=acknowledge_dynamic_jobs, profile_reuse=profile_reuse,
                          master_host=master_host, trace_outputs=export_prefix is not None, progress=progress)
    port = scheduler if hasattr(scheduler, "exchange") else InProcessPort(scheduler)
    try:
        result = engine.run(port)
    except Deadlock as dead:
        if export_prefix is not None:
            write_outputs(dead.result, export_prefix, energy=energy)
        raise
    if export_prefix is not None:
        write_outputs(result, export_prefix, energy=energy)
    return result
