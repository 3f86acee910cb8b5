"""The steps of ``gridsched run`` (:func:`schedulers.cli.cmd_run`), in the order they happen.

1. Every input is checked before the output folder is touched: the numbers and paths of the
   command line, the policy and its options, the platform, the external events, the workloads
   (converted or rescaled into a staging folder); on the embedded engine the engine is built, so
   that its checks run too. A bad input stops the run with one line (exit status 2).
2. The output folder is prepared (``--overwrite`` removes the previous run's files) and the
   staged workloads are moved into it.
3. The simulation: real Batsim (:func:`schedulers.batsim.runner.run_with_batsim`) or the embedded
   engine, whose files are Batsim's ``out_*`` files. A run that fails leaves nothing in the
   folder; Ctrl-C or SIGTERM keeps the jobs done so far (exit status 130 or 143).
4. ``summary.json`` (strict JSON) and the summary printed.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from .cli import (RunInputError, _check_numbers, _interrupted, _keep_done, _load, _policy_options,
                  _prepare_workloads, _Prepared, _previous_run, _Progress, _refuse_oversized,
                  _refuse_own_inputs)
from .core.metrics import RunSummary, summarize_outputs
from .core.model import PolicyError, PolicyInputError
from .core.policy import Policy, batsim_flags, engine_flags
from .engine import Deadlock, InProcessPort, write_outputs
from .engine.extevents import EventList, read_events
from .engine.outputs import JobColumns
from .engine.oddities import input_warnings
from .engine.platform import PlatformSpec, check_compute_speeds, read_platform
from .engine.simulator import Engine
from .run_lock import LOCK_NAME, RunLock
from .outfiles import NotAFolder, atomic_write_text, make_folder, not_written
from .registry import PolicyOptionError, check_options, get_policy, policy_class

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    """``gridsched run`` once its arguments are parsed (the module docstring's steps).

    Returns:
        0, or 130 / 143 when Ctrl-C / SIGTERM stopped the simulation.

    Raises:
        RunInputError: a bad input (one line naming the file or option; nothing written).
        PolicyError, Deadlock, OSError: as :func:`schedulers.cli.main` reports them.
    """
    _check_numbers(args)
    out = Path(args.output)
    _refuse_own_inputs(args, out)
    previous = _previous_run(out, args.overwrite)
    _fall_back_workload(args)
    options = _policy_options(args.policy_options)
    policy = _checked_policy(args, options)
    spec = read_platform(args.platform)
    check_compute_speeds(spec, args.energy)
    nb_hosts = len(spec.compute)
    events = [read_events(f, f"we{i}", args.forward_unknown_events, nb_hosts + len(spec.storage))
              for i, f in enumerate(args.events or ())]
    if args.forward_unknown_events and not events:   # (as Batsim: read only with events files)
        print("gridsched: warning: --forward-unknown-events without --events: real Batsim 4.2.1 reads it only with "
              "events files, and so does the engine: it changes nothing", file=sys.stderr)
    cores = min(h.cores for h in spec.compute)
    lock = RunLock(out)
    try:
        with tempfile.TemporaryDirectory(prefix="gridsched-run-") as stage:
            prepared = _prepare_workloads(args, nb_hosts, cores, Path(stage), max(h.cores for h in spec.compute))
            engine = _checked_engine(args, spec, prepared, events, nb_hosts)
            # Every input is good: now the output folder, held until the last file is written.
            created = _prepare_output(out, previous, lock, args.overwrite)
            workloads = _keep_workloads(out, prepared, engine)
        for w in prepared:
            if w.note:
                print(w.note, file=sys.stderr)
        prefix = str(out / "out_")
        if engine is None:
            _run_batsim(args, options, workloads, events, prefix)
            shared = args.compute_sharing or "--enable-compute-sharing" in (args.batsim_arg or ())
            summary = summarize_outputs(prefix, nb_hosts, compute_sharing=shared)
        else:
            assert policy is not None   # (built with the engine: args.engine == "embedded")
            done = _run_embedded(args, engine, policy, out, prefix, prepared, created, nb_hosts)
            if isinstance(done, int):
                return done
            summary = done
        _write_summary(args, out, prefix, nb_hosts, summary)
        return 0
    finally:
        lock.release()


def _fall_back_workload(args: argparse.Namespace) -> None:
    """A missing workload with ``--fallback-workload``: run the shipped scenario instead (a note)."""
    missing = [w for w in args.workload if not Path(w).exists()]
    if missing and args.fallback_workload:
        others = [w for w in args.workload if w not in missing]
        also = f" (alone: {', '.join(others)} not run either)" if others else ""
        print(f"note: {', '.join(missing)} not found (is ../shared beside the project?); "
              f"running the shipped scenario {args.fallback_workload} instead{also}", file=sys.stderr)
        args.workload = [args.fallback_workload]


def _checked_policy(args: argparse.Namespace, options: dict[str, Any]) -> Policy | None:
    """The policy object on the embedded engine (None on real Batsim, whose scheduler builds its
    own), its options checked either way."""
    policy = None
    try:
        if args.engine == "embedded":
            policy = get_policy(args.policy, options)
        else:
            check_options(args.policy, options)
    except PolicyOptionError:
        raise
    except (ValueError, OSError) as exc:
        raise RunInputError(f"policy {args.policy!r}: {exc}") from None
    if options.get("idle_timeout") is not None and not args.energy:  # Batsim aborts on SET_RESOURCE_STATE
        raise RunInputError("policy option 'idle_timeout' switches hosts to their sleep pstate, which Batsim "
                            "allows only with its energy model: add --energy (-E)")
    return policy


def _checked_engine(args: argparse.Namespace, spec: PlatformSpec, prepared: list[_Prepared],
                    events: list[EventList], nb_hosts: int) -> Engine | None:
    """The embedded engine with the workloads read (None on real Batsim, where only the jobs too
    large for the platform are refused here, with ``--fit error``)."""
    if args.engine == "embedded":
        wls = [_load(w, f"w{i}", nb_hosts, args.fit == "error") for i, w in enumerate(prepared)]
        features: dict[str, Any] = engine_flags(policy_class(args.policy))  # e.g. dynamic jobs for OSEP/HOSEP
        features["forward_profiles"] = features.get("forward_profiles", False) or args.forward_profiles
        engine = Engine(spec, wls, energy=args.energy, compute_sharing=args.compute_sharing, events=events,
                        forward_unknown_events=args.forward_unknown_events, **features)
        for line in input_warnings(spec, engine.workloads, args.energy):   # (run as Batsim runs them)
            print(f"gridsched: warning: {line}", file=sys.stderr)
        return engine
    if args.fit == "error":
        for w in prepared:
            _refuse_oversized(w, nb_hosts)
    return None


def _prepare_output(out: Path, previous: list[Path], lock: RunLock, overwrite: bool) -> bool:
    """Create the output folder, take its lock (:mod:`.run_lock`) and remove the previous run's
    files (``--overwrite``); True when the folder was created here (a failed run then removes it).

    Raises:
        RunInputError: the folder cannot be made, another run holds it, or a run wrote into it
            since it was found empty (the two started at once).
    """
    created = not out.exists()
    try:
        make_folder(out)
        try:
            lock.acquire()
        except RuntimeError as exc:
            raise RunInputError(str(exc)) from None
        again = _previous_run(out, overwrite)   # (under the lock: what another run wrote meanwhile)
        if {p.name for p in again} - {p.name for p in previous}:
            lock.release()
            raise RunInputError(f"{out}: another `gridsched run` wrote into this folder since this one found it "
                                f"empty ({', '.join(sorted(p.name for p in again)[:3])}); choose another --output")
        for f in previous:
            f.unlink(missing_ok=True)
    except NotAFolder as exc:
        lock.release()
        raise RunInputError(str(exc)) from None
    except OSError as exc:
        lock.release()
        raise RunInputError(f"{out}: cannot prepare the output folder: {exc.strerror or exc}") from None
    if previous:
        print(f"--overwrite: removed the previous run's files from {out}/: "
              f"{', '.join(f.name for f in previous)}", file=sys.stderr)
    return created


def _keep_workloads(out: Path, prepared: list[_Prepared], engine: Engine | None) -> list[str]:
    """Move the staged (converted) workloads into ``out``; the paths of the workloads the run
    reads, in order."""
    workloads = []
    for i, w in enumerate(prepared):
        if w.staged is None:
            workloads.append(w.source)
            continue
        final = out / w.staged.name
        try:
            shutil.move(str(w.staged), final)   # (a copy when /tmp is another file system)
        except OSError as exc:
            final.unlink(missing_ok=True)
            raise not_written(final, exc) from None
        if w.note:   # name the file kept, not the staging folder removed after the run
            w.note = w.note.replace(str(w.staged), str(final))
        w.staged = final
        workloads.append(str(final))
        if engine is not None:
            engine.workloads[i].path = str(final)
    return workloads


def _run_batsim(args: argparse.Namespace, options: dict[str, Any], workloads: list[str],
                events: list[EventList], prefix: str) -> None:
    """The simulation on real Batsim, the policy as its external scheduler."""
    from .batsim.runner import batsim_kwargs_from_args, events_args, run_with_batsim
    kw = batsim_kwargs_from_args(args)
    kw["extra_batsim_args"] += tuple(f for f in batsim_flags(policy_class(args.policy))
                                     if f not in kw["extra_batsim_args"])
    kw["extra_batsim_args"] += events_args([lst.path for lst in events], args.forward_unknown_events)
    run_with_batsim(args.platform, workloads, args.policy, options, prefix, energy=args.energy, **kw)


def _run_embedded(args: argparse.Namespace, engine: Engine, policy: Policy, out: Path, prefix: str,
                  prepared: list[_Prepared], created: bool, nb_hosts: int) -> int | RunSummary:
    """The simulation on the embedded engine and its files written: the summary, or the exit
    status of an interrupted run (its jobs done so far kept)."""
    progress = _Progress(engine.nb_jobs, enabled=not args.no_progress)
    engine.progress = progress if progress.bar is not None else None  # (called at every instant)
    try:
        result = engine.run(InProcessPort(policy, checked=True))   # (by get_policy, in _checked_policy)
    except KeyboardInterrupt as exc:   # (Ctrl-C, or SIGTERM: exits.Terminated)
        progress.close()
        return _interrupted(engine, out, prepared, exc)
    except PolicyError as exc:   # the policy's own code: kept as on Ctrl-C, then its line (main)
        progress.close()
        if isinstance(exc, PolicyInputError):   # (bad input: nothing kept, as any input error)
            _undo_output(out, created, prepared)
            path = _workload_of(engine, prepared, getattr(exc, "job_id", None))
            if path is not None and exc.args and isinstance(exc.args[0], str):
                exc.args = (f"{path}: {exc.args[0]}", *exc.args[1:])
            raise
        exc.args = (f"{exc.args[0]}; the run stopped {_keep_done(engine, out, prepared)}", *exc.args[1:])
        raise
    except Deadlock as dead:  # Batsim's files up to the deadlock, then the error line (main)
        write_outputs(dead.result, prefix, energy=args.energy)
        raise Deadlock(f"{dead}; the files real Batsim 4.2.1 writes at a deadlock (the jobs that "
                       f"ended, the clock at the deadlock) are in {out}/, without summary.json") from None
    except Exception:
        _undo_output(out, created, prepared)
        raise
    finally:
        progress.close()
    columns = JobColumns()   # (what the summary reads of out_jobs.csv, kept as it is written)
    try:
        write_outputs(result, prefix, energy=args.energy, columns=columns)
    except Exception:   # e.g. a time that overflowed: nothing was written
        _undo_output(out, created, prepared)
        raise
    # (the same summary as of the files just written, without reading them back)
    return columns.summary(nb_hosts, result.schedule["consumed_joules"] if args.energy else None,
                           jobs=result.jobs if args.compute_sharing else None)


def _workload_of(engine: Engine, prepared: list[_Prepared], job_id: str | None) -> str | None:
    """The file the user gave for the workload of ``job_id`` (``w0!7``: the first ``-w``), or None."""
    if not job_id or "!" not in job_id:
        return None
    name = job_id.split("!", 1)[0]
    for i, w in enumerate(engine.workloads):
        if w.name == name:
            return str(prepared[i].source) if i < len(prepared) else w.path
    return None


def _write_summary(args: argparse.Namespace, out: Path, prefix: str, nb_hosts: int, summary: RunSummary) -> None:
    """Write ``summary.json`` (with the task counts of the owner-share policies) and print it."""
    from .core.owner_share import OwnerSharePolicy
    if issubclass(policy_class(args.policy), OwnerSharePolicy):   # tasks, restarts, preemptions
        from dataclasses import replace

        from .core.metrics import task_counts
        counts = task_counts(prefix + "jobs.csv")
        summary = replace(summary, tasks=counts["tasks"], restarts=counts["restarts"], preemptions=counts["preemptions"])
    values = summary.as_dict()
    bad = [k for k, v in values.items() if isinstance(v, float) and not math.isfinite(v)]
    if bad:
        raise RunInputError(f"{out}/summary.json: {', '.join(f'{k} = {values[k]}' for k in bad)}: the run's "
                            "times or energies are too large to sum; Batsim's files are in the folder")
    text = json.dumps(values, indent=2, allow_nan=False)  # strict JSON: no NaN/Infinity tokens
    atomic_write_text(out / "summary.json", text + "\n")
    where = "embedded engine" if args.engine == "embedded" else "real Batsim"
    print(f"policy {args.policy} on {Path(args.platform).name} ({nb_hosts} hosts), {where}; outputs in {out}/")
    print(summary.format())


def _undo_output(out: Path, created: bool, prepared: list[_Prepared]) -> None:
    """A run that failed leaves nothing in its output folder: the workloads it converted there
    are removed, and the folder too when the run created it and it is left empty."""
    for w in prepared:
        if w.staged is not None and Path(w.staged).parent == out:
            Path(w.staged).unlink(missing_ok=True)
    (out / LOCK_NAME).unlink(missing_ok=True)   # (the lock itself: still held, by its open file)
    if created and out.is_dir() and not any(out.iterdir()):
        out.rmdir()
