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
from .extevents import EventsError, read_events
from .platform import PlatformSpec, read_platform
from .simulator import Deadlock, Engine, EngineError, EngineResult, InProcessPort, Reply, SchedulerPort
from .workload import Workload, load_workload

__all__ = ["simulate", "build_engine", "Engine", "EngineError", "Deadlock", "EngineResult", "InProcessPort",
           "Reply", "SchedulerPort", "Workload", "read_platform", "load_workload", "write_outputs", "read_events",
           "EventsError"]


def build_engine(platform: str | Path | PlatformSpec, workloads: list[str | Path | dict], *,
                 energy: bool = False, compute_sharing: bool = False, forward_profiles: bool = False,
                 dynamic_jobs: bool = False, acknowledge_dynamic_jobs: bool = False, profile_reuse: bool = False,
                 master_host: str = "master_host", trace_outputs: bool = True,
                 progress: Callable[[float, int, int], None] | None = None, roles: dict[str, str] | None = None,
                 mmax: int = 0, mmax_workload: bool = False, sg_config: list[str] | tuple[str, ...] = (),
                 events: list[str | Path] | tuple = (), forward_unknown_events: bool = False,
                 actor_model: bool = False) -> Engine:
    """Read the inputs and build an :class:`Engine` (workloads named w0, w1, ... in order).

    ``workloads`` items are JSON paths or already-parsed workload dicts (named ``<dict>``).
    ``roles``, ``mmax``, ``sg_config``: Batsim's ``-r``, ``--mmax``, ``--sg-cfg``
    (:func:`.platform.read_platform`); ``mmax_workload``: Batsim's ``--mmax-workload``, at most as
    many compute hosts as the largest ``nb_res`` of the workloads (and ``mmax`` if given).
    ``events``: Batsim's ``--events`` files (named we0, we1, ...; :mod:`.extevents`), read with
    ``forward_unknown_events`` (``--forward-unknown-events``). ``actor_model``: :class:`Engine`'s.

    Raises:
        PlatformError, WorkloadError, EventsError: bad inputs (message names the file and item).
        TypeError: ``workloads`` is not a list (or tuple) of paths and dicts, or ``events`` not
            a list of paths: a single path or dict would be read as its characters or keys.
    """
    _check_workload_list(workloads, events)
    if mmax_workload and workloads:
        largest = max(_nb_res(w) for w in workloads)
        mmax = min(mmax, largest) if mmax > 0 else largest
    if isinstance(platform, PlatformSpec):
        spec = platform
    else:
        spec = read_platform(platform, master_host=master_host, roles=roles, mmax=mmax, sg_config=sg_config)
    wls = []
    for i, w in enumerate(workloads):
        if isinstance(w, dict):
            w = plain_numbers(w)
            wls.append(load_workload(f"<workload w{i}>", f"w{i}", len(spec.compute), data=w))
        else:
            wls.append(load_workload(w, f"w{i}", len(spec.compute)))
    nb_machines = len(spec.compute) + len(spec.storage)
    evs = [read_events(f, f"we{i}", forward_unknown_events, nb_machines) for i, f in enumerate(events)]
    return Engine(spec, wls, energy=energy, compute_sharing=compute_sharing, forward_profiles=forward_profiles,
                  dynamic_jobs=dynamic_jobs, acknowledge_dynamic_jobs=acknowledge_dynamic_jobs,
                  profile_reuse=profile_reuse, events=evs, forward_unknown_events=forward_unknown_events,
                  trace_outputs=trace_outputs, progress=progress, actor_model=actor_model)


def plain_numbers(data: dict) -> dict:
    """``data`` (a workload dict built in Python) with its NumPy scalars (``np.int64(4)`` from
    ``np.arange``, ``np.float32`` delays...) as the Python numbers they hold, as a JSON file would
    give them to Batsim: the same dict when it holds none (no copy), else a copy of the parts that
    do. NumPy is never imported here: without it loaded, no value can be one of its scalars."""
    import sys

    np = sys.modules.get("numpy")
    if np is None:
        return data
    generic, plain = np.generic, (str, int, float, bool, type(None))

    def walk(x: Any) -> Any:
        if isinstance(x, dict):
            out = None
            for k, v in x.items():
                if type(v) in plain:
                    continue
                new = v.item() if isinstance(v, generic) else walk(v)
                if new is not v:
                    if out is None:
                        out = dict(x)
                    out[k] = new
            return x if out is None else out
        if isinstance(x, list):
            items = [v if type(v) in plain else (v.item() if isinstance(v, generic) else walk(v)) for v in x]
            return x if all(a is b for a, b in zip(items, x)) else items
        return x.item() if isinstance(x, generic) else x

    return walk(data)


def _check_workload_list(workloads: Any, events: Any = ()) -> None:
    """Raise TypeError unless ``workloads`` is a list or tuple of paths (str, Path) and dicts, and
    ``events`` a list or tuple of paths (a single path would be read as its characters)."""
    if not isinstance(workloads, (list, tuple)):
        hint = " (one workload: [it])" if isinstance(workloads, (str, Path, dict)) else ""
        raise TypeError(f"workloads must be a list of workload files or dicts, got a {type(workloads).__name__}{hint}")
    for i, w in enumerate(workloads):
        if not isinstance(w, (str, Path, dict)):
            raise TypeError(f"workloads[{i}] must be a workload file (str or Path) or a dict, got a {type(w).__name__}")
    if not isinstance(events, (list, tuple)) or not all(isinstance(e, (str, Path)) for e in events):
        hint = " (one file: [it])" if isinstance(events, (str, Path)) else ""
        raise TypeError(f"events must be a list of events files, got {type(events).__name__} {events!r}"[:200] + hint)


def _nb_res(w: str | Path | dict) -> int:
    """A workload's ``nb_res`` (what ``--mmax-workload`` reads; checked again when it is loaded)."""
    from ..inputs.errors import WorkloadError
    from ..inputs.jsonfile import read_json

    try:
        data = w if isinstance(w, dict) else read_json(w, WorkloadError, "workload")
        n = data["nb_res"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise WorkloadError(f"{w if not isinstance(w, dict) else '<dict>'}: --mmax-workload needs its 'nb_res': "
                            f"{type(exc).__name__}: {exc}") from None
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise WorkloadError(f"{w}: 'nb_res' must be an integer > 0, got {n!r}")
    return n


def simulate(platform: str | Path | PlatformSpec, workloads: list[str | Path | dict], scheduler: Any, *,
             energy: bool = False, compute_sharing: bool = False, forward_profiles: bool = False,
             dynamic_jobs: bool = False, acknowledge_dynamic_jobs: bool = False, profile_reuse: bool = False,
             export_prefix: str | Path | None = None, master_host: str = "master_host",
             progress: Callable[[float, int, int], None] | None = None, events: list[str | Path] | tuple = (),
             forward_unknown_events: bool = False) -> EngineResult:
    """Run one simulation in-process.

    Args:
        platform: SimGrid platform XML path (or a parsed :class:`PlatformSpec`).
        workloads: Batsim workload JSON paths or dicts (NumPy scalars in a dict are read as the
            numbers they hold, :func:`plain_numbers`).
        scheduler: a :class:`~schedulers.core.policy.Policy` (called in-process) or any
            :class:`SchedulerPort`.
        energy: Batsim's ``-E``.
        compute_sharing, forward_profiles, dynamic_jobs, acknowledge_dynamic_jobs, profile_reuse:
            Batsim's ``--enable-compute-sharing``, ``--forward-profiles-on-submission``,
            ``--enable-dynamic-jobs``, ``--acknowledge-dynamic-jobs``, ``--enable-profile-reuse``.
        export_prefix: write Batsim's output files with this prefix (``out/out_``) when given.
        events, forward_unknown_events: Batsim's ``--events`` files and
            ``--forward-unknown-events`` (:mod:`.extevents`).

    Returns:
        The :class:`EngineResult`.

    Raises:
        PlatformError, WorkloadError: bad inputs. EngineError: invalid decisions, livelock.
        TypeError: ``workloads`` is not a list, or ``scheduler`` is a class or no policy.
        PolicyError: ``scheduler`` already ran a simulation (make one policy object per run).
        PolicyFailure: the policy's code failed (``__init__`` that skipped the base class's too).
        Deadlock (an EngineError): nothing left to simulate before the end; as real Batsim
        4.2.1, the output files of the run up to the deadlock are written first (when
        ``export_prefix`` is given) and the error's ``result`` holds that run.
    """
    if hasattr(scheduler, "exchange"):
        port = scheduler
    else:   # (a policy: checked before the inputs are read)
        from ..core.failure import check_runnable
        check_runnable(scheduler, fresh=True)
        port = InProcessPort(scheduler, checked=True)
    engine = build_engine(platform, workloads, energy=energy, compute_sharing=compute_sharing,
                          forward_profiles=forward_profiles, dynamic_jobs=dynamic_jobs,
                          acknowledge_dynamic_jobs=acknowledge_dynamic_jobs, profile_reuse=profile_reuse,
                          master_host=master_host, trace_outputs=export_prefix is not None, progress=progress,
                          events=events, forward_unknown_events=forward_unknown_events)
    try:
        result = engine.run(port)
    except Deadlock as dead:
        if export_prefix is not None:
            write_outputs(dead.result, export_prefix, energy=energy)
        raise
    if export_prefix is not None:
        write_outputs(result, export_prefix, energy=energy)
    return result
