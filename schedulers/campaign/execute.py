"""One campaign run: build the scenario, simulate, summarise; never raise.

:func:`execute_run` is what a Dask worker calls. It returns the run's record (the format is in
:mod:`schedulers.campaign`); any exception of the run (bad input, policy error, Batsim failure), and a policy's
``sys.exit()``, becomes a record with ``status = "failed"`` and the error's one-line message, so that one bad run
never stops a campaign. The summary is computed from Batsim's output rows exactly as ``gridsched
run`` computes it from the files (the values as printed in ``out_jobs.csv`` and
``out_schedule.csv``, :func:`schedulers.core.metrics.summarize_columns`), so that a campaign run and
the same simulation run alone report the same numbers.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from ..core.failure import call_policy
from ..core.limits import NO_DOUBLE
from ..exits import one_line
from .provenance import stamp
from .spec import RunSpec

RECORD_FORMAT = "gridsched-campaign-run/1"


def _printed(x: float) -> float:
    """``x`` as Batsim prints it in out_jobs.csv (``%f``, 6 decimals) and a reader reads it back."""
    return float("%f" % x)


def summary_of_result(result: Any, nb_hosts: int, energy: bool, compute_sharing: bool = False) -> dict[str, Any]:
    """The run summary of an engine result, equal to the one ``gridsched run`` reads back from the
    written files (same 6-decimal values, same :func:`~schedulers.core.metrics.summarize_columns`),
    without writing or parsing CSV."""
    from ..core.metrics import summarize_columns
    from ..engine.results import execution_time

    state, sub, start, ex, fin, res = [], [], [], [], [], []
    for j in result.jobs:
        state.append(j.state)
        sub.append(_printed(j.subtime))
        res.append(j.res)
        if j.state == "REJECTED":
            start.append(0.0)
            ex.append(0.0)
            fin.append(0.0)
            continue
        e = execution_time(j)
        start.append(_printed(j.start))
        ex.append(_printed(e))
        fin.append(_printed(j.start + e))
    consumed = _printed(result.consumed_joules) if energy else None  # out_schedule.csv's printed value
    busy = None
    if compute_sharing:   # (jobs may overlap on a host: its busy time counted once)
        from ..engine.outputs import busy_of
        busy = busy_of(result.jobs)
    return summarize_columns(state, sub, start, ex, fin, res, nb_hosts, consumed, busy=busy).as_dict()


def _engine_run(spec: RunSpec, platform: Any, workloads: list, outputs: Path | None) -> tuple[dict, Any]:
    from ..core.policy import engine_flags
    from ..engine import InProcessPort, build_engine, write_outputs
    from ..registry import get_policy

    policy = get_policy(spec.policy_name, spec.policy_options)
    energy = spec.engine["energy"]
    events, forward = _events(spec)
    flags: dict[str, Any] = engine_flags(policy)
    engine = build_engine(platform, workloads, energy=energy, compute_sharing=spec.engine["compute_sharing"],
                          trace_outputs=outputs is not None, events=events, forward_unknown_events=forward, **flags)
    result = engine.run(InProcessPort(policy, checked=True))   # (by get_policy)
    if outputs is not None:
        write_outputs(result, str(outputs / "out_"), energy=energy)
    return summary_of_result(result, len(engine.hosts), energy, spec.engine["compute_sharing"]), policy


def _batsim_run(spec: RunSpec, platform: Path, workloads: list[Path], outputs: Path) -> tuple[dict, Any]:
    from ..batsim.runner import events_args, run_with_batsim
    from ..core.metrics import summarize_outputs
    from ..core.policy import batsim_flags
    from ..registry import get_policy

    policy = get_policy(spec.policy_name, spec.policy_options)
    extra = ["--enable-compute-sharing"] if spec.engine["compute_sharing"] else []
    extra += batsim_flags(policy)  # e.g. dynamic jobs for OSEP/HOSEP
    extra += events_args(*_events(spec))
    run_with_batsim(str(platform), [str(w) for w in workloads], policy, {}, str(outputs / "out_"),
                    energy=spec.engine["energy"], timeout=spec.batsim_timeout, extra_batsim_args=extra,
                    socket=None)  # a free port: several runs share the machine
    return summarize_outputs(outputs / "out_", compute_sharing=spec.engine["compute_sharing"]).as_dict(), policy


def _events(spec: RunSpec) -> tuple[list[str | Path], bool]:
    """A file scenario's Batsim events files (paths) and its ``forward_unknown_events``."""
    base = Path(spec.base_dir)
    return [base / e for e in spec.scenario.get("events", ())], bool(spec.scenario.get("forward_unknown_events"))


def _scenario(spec: RunSpec, tmp: Path | None) -> tuple[Any, list]:
    """The platform (path or PlatformSpec) and workloads (paths or dicts) of the run; with
    ``tmp`` (real Batsim), generated ones are written there as files."""
    from ..engine.platform import read_platform
    from ..inputs.generators import generate

    base = Path(spec.base_dir)
    if "generator" not in spec.scenario:
        return base / spec.scenario["platform"], [base / w for w in spec.scenario["workloads"]]
    sc = generate(spec.scenario["generator"], spec.scenario["params"], spec.seed)
    platform: Any = sc.platform
    if platform is not None and not Path(platform).is_absolute():
        platform = base / platform
    if tmp is None:
        if platform is None:
            platform = read_platform(f"<generator {spec.scenario['generator']}>", text=sc.platform_xml)
        return platform, list(sc.workloads)
    if platform is None:
        platform = tmp / "platform.xml"
        platform.write_text(sc.platform_xml or "", encoding="utf-8")
    files = []
    for i, w in enumerate(sc.workloads):
        if isinstance(w, dict):
            from ..inputs.convert import write_workload
            files.append(write_workload(w, tmp / f"workload_w{i}.json"))
        else:
            files.append(base / w)
    return platform, files


def _checked_files(platform: Path, workloads: list[Path], energy: bool) -> Any:
    """The platform of a file scenario, read (a :class:`~schedulers.engine.platform.PlatformSpec`),
    once it and the ``workloads`` pass what ``gridsched run`` checks before it simulates: the
    hosts Batsim 4.2.1 refuses as it creates its machines, such as a compute host of speed 0
    (:func:`~schedulers.engine.platform.check_compute_speeds`; the engine, as SimGrid, would run
    it), and a job asking for more hosts than the platform has compute hosts, which ``gridsched
    run`` refuses unless ``--fit`` says otherwise (Batsim submits it and the policy rejects it: the
    campaign's means would leave it out without a word). A generator's platform and jobs are made
    to fit, and are not checked here.

    Raises:
        WorkloadError: one line naming the workload file, the job and both sizes, and how to
            rescale the file. PlatformError: the platform cannot be read, or Batsim refuses a host.
    """
    from ..engine.platform import check_compute_speeds, read_platform
    from ..engine.workload import first_oversized, oversized
    from ..inputs.errors import WorkloadError
    from ..inputs.jsonstream import read_workload_json

    read = read_platform(platform)
    check_compute_speeds(read, energy)
    n = len(read.compute)
    for w in workloads:   # (read compactly, as the engine reads it: a million jobs take ~100 MB)
        job = first_oversized(read_workload_json(str(w), WorkloadError, "workload"), n)
        if job is not None:
            raise oversized(f"{w}: job {job.get('id')!r}", job["res"], n,
                            f"a campaign refuses it as gridsched run does; rescale the file first: gridsched "
                            f"convert {w} --nb-hosts {n} -o NEW.json, with --rescale-mode clamp or drop to change "
                            "only the jobs too large")
    return read


def _finite(d: dict[str, Any], what: str) -> dict[str, Any]:
    for k, v in d.items():
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{what} {k!r} is {v!r}: not a finite number")
    return d


def _defined_at(fn: Any) -> str:
    """`` (FILE, line N)`` where function ``fn`` is defined, or "" when its source is unknown."""
    import inspect

    try:
        return f" ({inspect.getsourcefile(fn)}, line {inspect.getsourcelines(fn)[1]})"
    except (OSError, TypeError):
        return ""


def _policy_metrics(policy: Any, metrics: Any) -> dict[str, Any]:
    """``metrics`` (what ``policy.metrics()`` returned) as a record keeps them: name -> finite
    number (or null); NumPy's numbers (``np.int64``, ``np.float32``) are read as Python's.

    Raises:
        ValueError: not a dict of names to finite numbers (a record holding one would make
            ``campaign collect`` refuse the whole campaign); the message names the policy's class
            and the file and line defining its ``metrics``.
    """
    who = f"policy {type(policy).__name__}: metrics(){_defined_at(type(policy).metrics)} must return a dict of " \
          "name -> finite number"
    import numbers

    from ..core.model import as_index

    if not isinstance(metrics, dict):
        raise ValueError(f"{who}, got {type(metrics).__name__} {repr(metrics)[:60]}")
    out: dict[str, Any] = {}
    for k, v in metrics.items():
        n: Any = None
        if v is not None:
            i = as_index(v)   # (Python's or NumPy's integers, not bools: np.sum of ints is an np.int64)
            if i is not None:
                n = i if -NO_DOUBLE < i < NO_DOUBLE else None   # (beyond a double: no number a table holds)
            elif isinstance(v, numbers.Real) and not isinstance(v, bool):   # (np.float32 too)
                n = float(v) if math.isfinite(v) else None
        if not isinstance(k, str) or (v is not None and n is None):
            raise ValueError(f"{who}, got {k!r}: {repr(v)[:60]}")
        out[k] = n
    return out


def new_record(spec: RunSpec, error: str | None = None) -> dict[str, Any]:
    """The record of ``spec`` before it ran (format in :mod:`schedulers.campaign`): status
    ``failed`` with ``error`` until :func:`execute_run` fills in a result."""
    record = {"format": RECORD_FORMAT, "id": spec.id, "campaign": spec.campaign, "status": "failed",
              "params": spec.params, "policy_name": spec.policy_name, "policy_options": spec.policy_options,
              "scenario_spec": spec.scenario, "engine_options": spec.engine, "simulator": spec.engine["simulator"],
              "summary": None, "policy_metrics": {}, "wall_time_s": 0.0, "error": error, "traceback": None,
              "outputs": None, **stamp()}   # (the code that made it: .provenance)
    if spec.inputs_sha256 is not None:   # (file scenarios: what the run read)
        record["inputs_sha256"] = spec.inputs_sha256
    if spec.policy_sha256 is not None:   # (a policy of the user's own code: the file defining it)
        record["policy_sha256"] = spec.policy_sha256
    return record


def execute_run(spec: RunSpec, out_dir: str | None = None) -> dict[str, Any]:
    """Run one simulation and return its record (never raises for a failing run).

    Args:
        spec: the run.
        out_dir: the campaign's output folder; Batsim's files go to ``out_dir/outputs/<id>/``
            when ``spec.keep_outputs`` (written in a temporary folder renamed at the end, so a
            folder of that name is always complete).

    Returns:
        The record (see :mod:`schedulers.campaign`): status ``done`` with ``summary`` and
        ``policy_metrics``, or ``failed`` with ``error`` (one line) and ``traceback``.
    """
    t0 = time.perf_counter()
    record = new_record(spec)
    keep = spec.keep_outputs and out_dir is not None
    batsim = spec.engine["simulator"] == "batsim"
    files = batsim or bool(spec.metrics)  # inputs and outputs as files
    work = Path(tempfile.mkdtemp(prefix=f"gridsched-{spec.id}-")) if files or keep else None
    try:
        outputs: Path | None = None
        if work is not None:
            outputs = work / "outputs"
            outputs.mkdir()
        platform, workloads = _scenario(spec, work if files else None)
        read = platform if "generator" in spec.scenario else _checked_files(platform, workloads, spec.engine["energy"])
        if batsim:
            assert outputs is not None   # (real Batsim: files, in the work folder)
            summary, policy = _batsim_run(spec, platform, workloads, outputs)
        else:
            summary, policy = _engine_run(spec, read, workloads, outputs if keep or files else None)
        for name in spec.metrics:
            assert outputs is not None   # (metrics: files, in the work folder)
            from .run_metrics import RUN_METRICS
            fn = RUN_METRICS[name]
            kw = {"policy_options": spec.policy_options} if getattr(fn, "takes_policy_options", False) else {}
            summary.update(fn(outputs / "out_jobs.csv", workloads, platform, **kw))
        metrics = call_policy(policy, "metrics")   # (a failure: the policy's class, file and line)
        record["summary"] = _finite(summary, "summary metric")
        record["policy_metrics"] = _policy_metrics(policy, metrics)
        if keep:
            assert out_dir is not None and outputs is not None   # (keep: an out_dir, and a work folder)
            final = Path(out_dir) / "outputs" / spec.id
            final.parent.mkdir(parents=True, exist_ok=True)
            if final.exists():
                shutil.rmtree(final)
            os.replace(outputs, final)
            record["outputs"] = f"outputs/{spec.id}"
        record["status"] = "done"
    except (Exception, SystemExit) as exc:  # noqa: BLE001 -- a failing run is a result, not a crash
        # (a policy's sys.exit() is its failure: PolicyFailure; a SystemExit of anything else too)
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        record["error"] = one_line(f"{type(exc).__name__}: {' '.join(str(msg).split())}")
        record["traceback"] = traceback.format_exc(limit=20)
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    record["wall_time_s"] = time.perf_counter() - t0
    return record


def execute_batch(specs: list[RunSpec], out_dir: str | None = None) -> list[dict[str, Any]]:
    """:func:`execute_run` over several runs (one Dask task carries a batch, to amortise the
    per-task overhead on tiny runs)."""
    return [execute_run(s, out_dir) for s in specs]
