"""gridsched: grid-scheduling policies for Batsim, with an embedded Batsim-compatible engine.

The ``gridsched`` command. Sub-commands:

* ``run``      — the main job: simulate a workload (Batsim JSON, or a SWF/GWF trace converted on
  the fly) on a platform with a policy, on the embedded engine (default) or real Batsim; write
  Batsim's output files and print a summary.
* ``engine``   — the embedded engine as Batsim's side of the ZMQ protocol (Batsim's flag names),
  for any external Batsim scheduler (``gridsched serve``, pybatsim, batsched...).
* ``serve``    — a policy as an external Batsim scheduler (ZMQ REP server).
* ``convert``  — trace (SWF, GWF, Batsim JSON) to a validated Batsim workload.
* ``policies`` — list the registered policies, or describe one (``policies NAME``).
* ``batsim-launcher`` — write a ``batsim`` executable that runs ``engine``, for front ends that
  start ``batsim`` themselves (batsim-py; :mod:`schedulers.batsim.launcher`).
* ``scenario`` — write a registered scenario generator's platform and workload to a folder.
* ``campaign`` — many simulations on Dask from a TOML file: ``run``, ``status``, ``collect``,
  ``plot``, ``report`` (:mod:`schedulers.campaign`).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__
from .exits import (BAD_INPUT, FAILED, NOT_WRITTEN, STATUSES, interrupt_status, interrupt_word, one_line)
from .inputs import TRACE_SUFFIXES


class RunInputError(ValueError):
    """A bad ``gridsched run`` option or input: one line on stderr, exit status 2."""


def _policy_options(text: str | None) -> dict[str, Any]:
    """``--policy-options``: a JSON object, inline or ``@file.json``.

    Raises:
        RunInputError: unreadable file, not strict JSON (see :mod:`schedulers.inputs.jsonfile`),
            or not a JSON object.
    """
    from .inputs.jsonfile import loads_strict, read_json

    if text is None or not text.strip():
        return {}
    text = text.strip()
    if text.startswith("@"):
        src = f"--policy-options {text}"
        if not text[1:].strip():
            raise RunInputError("--policy-options @: no file name after '@' (@FILE reads the options from FILE)")
        try:
            data = read_json(text[1:], RunInputError, "options file")
        except RunInputError as exc:
            raise RunInputError(f"--policy-options: {exc}") from None
    else:
        src = "--policy-options"
        data = loads_strict(text, src, RunInputError)
    if not isinstance(data, dict):
        raise RunInputError(f"{src}: policy options must be a JSON object such as "
                            f"'{{\"key\": 1}}', got a JSON {_json_kind(data)}")
    return data


def _json_kind(v: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null", dict: "object"}.get(
        type(v), "number")


class _Progress:
    """tqdm progress bar over jobs, showing simulated time; refreshed at most 10 times a second."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.bar: Any = None   # a tqdm bar when enabled
        self.last = 0.0
        self.done = 0
        if enabled and total:
            from tqdm import tqdm
            self.bar = tqdm(total=total, unit="job", desc="simulating", dynamic_ncols=True, mininterval=0.1)

    def __call__(self, now: float, done: int, total: int) -> None:
        t = time.monotonic()
        if t - self.last < 0.1 and done < total:
            return
        self.last = t
        self.bar.update(done - self.done)
        self.done = done
        self.bar.set_postfix_str(f"t={now:,.0f} s", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


#: ``--fit`` for traces: the converter drops oversized jobs by default (a trace from a bigger machine
#: is the usual case); it has no proportional rescaling, so ``scale`` (and ``keep``) are refused.
_TRACE_OVERSIZED = {"error": "drop", "drop": "drop", "clamp": "clamp"}


@dataclass
class _Prepared:
    """One ``--workload`` ready for the run: the file the user gave, and when gridsched converted
    (SWF/GWF) or changed it (``--fit``, ``--max-jobs``) the new file staged for the output folder
    (``workload_wN.json``), with its content when it was changed in memory (a JSON workload; a
    converted trace is written as it is read and not kept: the engine reads the staged file) and
    the conversion report."""

    source: str
    staged: Path | None = None
    data: dict | None = None
    note: str | None = None


def _looks_like(path: Path) -> str | None:
    """``"trace"`` when the plain file ``path`` starts (past blanks) with what an SWF/GWF trace
    starts with (a ``;`` or ``#`` comment, a job number), ``"xml"`` with ``<``; None otherwise
    (a JSON object's ``{``...)."""
    import stat
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):   # (a FIFO would block the read)
            return None
        with open(path, "rb") as f:
            head = f.read(512).lstrip()
    except OSError:
        return None   # (read again, and refused with the reader's words)
    if head[:1] in (b";", b"#") or head[:1].isdigit():
        return "trace"
    return "xml" if head[:1] == b"<" else None


def _prepare_workloads(args: argparse.Namespace, nb_hosts: int, cores: int, stage: Path,
                       most_cores: int | None = None) -> list[_Prepared]:
    """Convert traces on the fly (SWF/GWF) and fit JSON workloads to the platform if asked, into
    ``stage`` (moved to the output folder once every input is known to be good). For the
    embedded engine a trace is converted as it is read, straight to its staged file, and not
    read back (:func:`_load`: the engine reads that file piece by piece); for real Batsim it is
    converted into a dict first, to be checked against the workload schema.

    Raises:
        WorkloadError, RunInputError: one line naming the file (and the job).
    """
    from .inputs.errors import WorkloadError
    from .inputs.jsonfile import batsim_number, is_gzip_file, read_json
    from .outfiles import OutputWriteError, atomic_write_text

    prepared: list[_Prepared] = []
    if args.cores_per_host is not None and not any(Path(w).name.lower().endswith(TRACE_SUFFIXES)
                                                   for w in args.workload):
        raise RunInputError(f"--cores-per-host applies to SWF/GWF traces (their processors become hosts); "
                            f"{args.workload[0]} is a Batsim JSON workload, whose 'res' counts hosts: it would be "
                            "ignored; drop the option")
    rescale = args.fit in ("scale", "clamp", "drop")  # a JSON workload is changed (rescale_workload's modes)
    for i, w in enumerate(args.workload):
        p = Path(w)
        name = p.name.lower()
        target = stage / f"workload_w{i}.json"
        if name.endswith(TRACE_SUFFIXES):
            if args.fit in ("keep", "scale"):   # (scale: a trace has no nb_res to scale res by)
                raise RunInputError(f"{p}: --fit {args.fit} applies to JSON workloads; a trace's jobs larger than the "
                                    "platform are dropped (default) or clamped (--fit clamp)"
                                    + ("; to scale, convert it first (gridsched convert), then --fit scale scales "
                                       "each res by the platform's hosts / the workload's nb_res"
                                       if args.fit == "scale" else ""))
            from .inputs.convert import convert_trace   # (a JSON workload's run does without)
            cph = args.cores_per_host if args.cores_per_host is not None else cores
            opts: dict[str, Any] = {"cores_per_host": cph, "nb_hosts": nb_hosts,
                                    "oversized": _TRACE_OVERSIZED[args.fit]}
            if args.max_jobs is not None:
                opts["max_jobs"] = args.max_jobs
            try:
                # the embedded engine checks every job as Batsim does when it reads the file; real
                # Batsim gets a file checked against the workload schema first
                report = convert_trace(p, target, validate=args.engine == "batsim", **opts)
            except WorkloadError as exc:  # name the user's trace, not the staging folder
                raise WorkloadError(str(exc).replace(f"{target} (converted from {p})", f"{p} (converted)")) from None
            except OutputWriteError:
                raise   # (the staging folder's disk is full: exit status 4)
            except (ValueError, OSError) as exc:
                raise RunInputError(f"{p}: cannot convert the trace: {exc}") from None
            # not read back here: the engine reads the staged file piece by piece, as a JSON input
            mixed = (f"\n  the platform's hosts have {cores} to {most_cores} cores: a host is {cores} processors, the "
                     "fewest (--cores-per-host N to choose)"
                     if args.cores_per_host is None and most_cores is not None and most_cores != cores else "")
            prepared.append(_Prepared(str(p), target, note=f"converted {p.name}: {report.summary()}{mixed}"))
        elif not name.endswith((".json", ".json.gz")) and (kind := _looks_like(p)) is not None:
            raise RunInputError(f"{p}: not a Batsim JSON workload, but it looks like an SWF/GWF trace (lines of "
                                "numbers): gridsched run reads traces named .swf, .swf.gz, .gwf or .gwf.gz; rename it"
                                if kind == "trace" else
                                f"{p}: not a Batsim JSON workload, but it looks like XML (a SimGrid platform?): -w "
                                "takes a workload or a trace (were -p and -w swapped?)")
        elif rescale or args.max_jobs is not None or (args.engine == "batsim" and is_gzip_file(p)):
            data = read_json(p, WorkloadError, "workload", batsim_number)
            if not isinstance(data, dict):
                raise WorkloadError(f"{p}: a workload must be a JSON object with 'jobs' and 'profiles', "
                                    f"got a JSON {_json_kind(data)}")
            if args.max_jobs is not None:
                data["jobs"] = _earliest_jobs(p, data.get("jobs"), args.max_jobs)
            note = None
            if rescale:
                from .inputs.rescale import rescale_workload
                fitted = rescale_workload(data, nb_hosts, mode=args.fit, source=str(p))
                r = fitted.report
                if r.records_read and not r.jobs_kept:   # (--fit drop dropped them all: as a trace's)
                    from .inputs.convert import no_job
                    raise no_job(p, r)
                if r.notes or r.jobs_dropped:   # (said as a trace's conversion is: jobs changed)
                    nb_res = data.get("nb_res")
                    of = (f"nb_res {nb_res!r} of the file" if type(nb_res) is int and nb_res >= 1 else
                          f"its largest res {max(j['res'] for j in data['jobs'])} (no valid nb_res)")
                    scale = (f"\n  every job's res x {nb_hosts} hosts / {of}, rounded "
                             "up: its share of the machine (jobs that fit too)" if args.fit == "scale" else "")
                    note = f"--fit {args.fit}: {r.summary()}{scale}\n  written to {target}"
                data = dict(fitted)
            elif args.max_jobs is None:   # (gzip for real Batsim, which aborts on it: "could not be parsed")
                note = (f"{p} is gzip-compressed and real Batsim 4.2.1 reads plain JSON only: decompressed\n"
                        f"  written to {target}")
            atomic_write_text(target, json.dumps(data))
            prepared.append(_Prepared(str(p), target, data, note=note))
        else:
            prepared.append(_Prepared(str(p)))
    return prepared


def _load(w: _Prepared, name: str, nb_hosts: int, refuse_oversized: bool) -> Any:
    """The engine's :class:`~schedulers.engine.workload.Workload` of ``w``: its content when
    changed in memory, else the file read piece by piece (the user's, or the converted trace
    staged; errors then name the user's trace, as when the content was given). A job larger
    than the platform is refused with ``refuse_oversized`` (``--fit error``)."""
    from .engine.workload import load_workload
    from .inputs.errors import WorkloadError

    if w.data is not None or w.staged is None:
        return load_workload(w.source, name, nb_hosts, data=w.data, refuse_oversized=refuse_oversized)
    try:
        return load_workload(w.staged, name, nb_hosts, refuse_oversized=refuse_oversized)
    except WorkloadError as exc:
        raise WorkloadError(str(exc).replace(str(w.staged), w.source)) from None


def _refuse_oversized(w: _Prepared, nb_hosts: int) -> None:
    """``--fit error`` with ``--engine batsim``: refuse a job of ``w`` larger than the platform, as
    the embedded engine's loader does (the rest of the workload is left to real Batsim, which may
    run profiles the engine does not). Raises WorkloadError (file, job, sizes)."""
    from .engine.workload import first_oversized, oversized
    from .inputs.errors import WorkloadError
    from .inputs.jsonfile import read_json

    data = w.data
    if data is None:
        data = read_json(w.staged or w.source, WorkloadError, "workload")   # (strict: repeated keys...)
    j = first_oversized(data, nb_hosts)
    if j is not None:
        raise oversized(f"{w.source}: job {j.get('id')!r}", j["res"], nb_hosts)


def _earliest_jobs(src: Path, jobs: Any, n: int) -> list:
    """The ``n`` jobs of a JSON workload submitted first (file order among equal times)."""
    from .inputs.errors import WorkloadError

    if not isinstance(jobs, list):
        raise WorkloadError(f"{src}: 'jobs' must be a list")
    for k, j in enumerate(jobs):
        if not isinstance(j, dict):
            raise WorkloadError(f"{src}: job #{k} is not an object")
        label = f"job {j['id']!r}" if isinstance(j.get("id"), (str, int)) else f"job #{k}"
        sub = j.get("subtime")
        if "subtime" not in j:
            raise WorkloadError(f"{src}: {label}: missing field 'subtime' (--max-jobs keeps the jobs "
                                "submitted first)")
        if isinstance(sub, bool) or not isinstance(sub, (int, float)):
            raise WorkloadError(f"{src}: {label}: 'subtime' must be a number, got {sub!r}")
    return sorted(jobs, key=lambda j: j["subtime"])[:n]


#: The files ``gridsched run`` writes in its output folder (besides ``workload_wN.json``, the
#: converted or fitted workloads): ``--overwrite`` removes these from the folder, and nothing else.
RUN_FILES = ("out_jobs.csv", "out_schedule.csv", "out_machine_states.csv", "out_consumed_energy.csv",
             "out_pstate_changes.csv", "out_schedule.trace", "out_batsim.log", "summary.json",
             "out_jobs.partial.csv")
_RUN_WORKLOAD = re.compile(r"workload_w[0-9]+\.json\Z")


def _check_numbers(args: argparse.Namespace) -> None:
    if args.max_jobs is not None and args.max_jobs < 1:
        raise RunInputError(f"--max-jobs must be an integer >= 1, got {args.max_jobs}")
    if args.cores_per_host is not None and args.cores_per_host < 1:
        raise RunInputError(f"--cores-per-host must be an integer >= 1, got {args.cores_per_host}")
    if args.timeout is not None and not (math.isfinite(args.timeout) and args.timeout > 0):
        raise RunInputError(f"--timeout must be a number of seconds > 0, got {args.timeout}")
    if args.engine == "embedded":   # (real Batsim's options, ignored without a word by the embedded engine)
        given = [opt for opt, on in (("--timeout", args.timeout is not None), ("--batsim", args.batsim != "batsim"),
                                     ("--batsim-socket", args.batsim_socket is not None),
                                     ("--batsim-connect-timeout", args.batsim_connect_timeout != 60.0),
                                     ("--batsim-arg", bool(args.batsim_arg))) if on]
        if given:
            raise RunInputError(f"{given[0]} applies to --engine batsim (real Batsim); the embedded engine would "
                                "ignore it: add --engine batsim, or drop it (Batsim's flags of the embedded engine "
                                "are gridsched run's own: --compute-sharing, --forward-profiles, --events...)")


def _previous_run(out: Path, overwrite: bool) -> list[Path]:
    """The files of a previous run in ``out`` to remove before this one (with ``--overwrite``).

    Raises:
        RunInputError: ``out`` is a file, or a non-empty folder without ``--overwrite``.
    """
    if not out.exists():
        return []
    if not out.is_dir():
        raise RunInputError(f"{out}: the output path is an existing file, not a folder; choose another --output")
    from .run_lock import LOCK_NAME
    try:   # (a run's lock file, left by a run that was killed, is no file of the user's)
        entries = sorted(e for e in out.iterdir() if e.name != LOCK_NAME)
    except OSError as exc:
        raise RunInputError(f"{out}: cannot read the output folder: {exc.strerror or exc}") from None
    if entries and not overwrite:
        shown = ", ".join(e.name for e in entries[:3]) + (", ..." if len(entries) > 3 else "")
        raise RunInputError(f"{out}: the output folder is not empty ({shown}); add --overwrite to replace "
                            "a previous run's files, or choose another --output")
    return [e for e in entries if e.is_file() and (e.name in RUN_FILES or _RUN_WORKLOAD.match(e.name))]


def _refuse_own_inputs(args: argparse.Namespace, out: Path) -> None:
    """Refuse a run whose output folder holds one of its inputs under a name the run writes or
    ``--overwrite`` removes (:data:`RUN_FILES`, ``workload_wN.json``): the run would destroy its
    own input. Nothing is touched.

    Raises:
        RunInputError: naming the input file and the option that gave it.
    """
    if not out.is_dir():
        return
    try:
        folder = out.resolve()
    except OSError:
        return
    given = [("--platform", args.platform), *(("--workload", w) for w in args.workload),
             *(("--events", e) for e in args.events or ()), ("--fallback-workload", args.fallback_workload)]
    if args.policy_options and args.policy_options.strip().startswith("@"):
        given.append(("--policy-options", args.policy_options.strip()[1:]))
    for flag, f in given:
        if not f:
            continue
        try:
            p = Path(f).resolve()
        except OSError:
            continue
        if p.parent == folder and (p.name in RUN_FILES or _RUN_WORKLOAD.match(p.name)):
            raise RunInputError(f"{f}: this {flag} file is in the output folder {out}/ under a name the run "
                                "writes (--overwrite would delete it first); move it elsewhere or choose another "
                                "--output")


def _keep_done(engine: Any, out: Path, prepared: list[_Prepared]) -> str:
    """A run stopped before its end (Ctrl-C, SIGTERM, a policy's failure): write the jobs done so
    far to ``out_jobs.partial.csv`` (``out_jobs.csv``'s format, written whole or not at all) and
    say what the folder keeps, with the simulated time reached."""
    from .engine.outputs import job_lines
    from .outfiles import atomic_write_text

    done = engine.rows["jobs"]
    kept = [w.staged.name for w in prepared if w.staged is not None]
    partial = out / "out_jobs.partial.csv"
    try:
        atomic_write_text(partial, "\n".join(job_lines(done)) + "\n")
        kept.append(f"{partial.name} (the {len(done):,} jobs done, in out_jobs.csv's format)")
    except OSError as exc:
        kept.append(f"not {partial.name} ({one_line(exc)})")
    return (f"at simulated time t={engine.now:,.3f} s with {len(done):,} of {engine.nb_jobs:,} jobs done; kept in "
            f"{out}/: {', '.join(kept)}; no summary and no other output file (the run did not end)")


def _interrupted(engine: Any, out: Path, prepared: list[_Prepared], exc: BaseException) -> int:
    """Ctrl-C or SIGTERM during the simulation: say where it was, keep the jobs done so far.
    Returns 130 (Ctrl-C) or 143 (SIGTERM)."""
    print(f"\ngridsched: {interrupt_word(exc)} {_keep_done(engine, out, prepared)}", file=sys.stderr)
    return interrupt_status(exc)


def cmd_run(args: argparse.Namespace) -> int:
    """``gridsched run`` (its steps: :mod:`schedulers.run_command`). Every input is checked before
    the output folder is touched; a bad one stops the run with one line (:func:`main`, exit status 2).

    The cyclic garbage collector is off for the whole command: reading the workload, the run and
    the summary allocate many long-lived objects and no cycles (about 25 % faster, and on a large
    workload a third of the reading time)."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        from .run_command import run
        return run(args)
    finally:
        if enabled:
            gc.enable()


#: Batsim 4.2.1's verbosity levels (``verbosity_level_from_string``, src/batsim.cpp).
VERBOSITY_LEVELS = ("quiet", "network-only", "information", "debug")


def _batsim_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options of ``gridsched engine`` that Batsim 4.2.1 checks in ``parse_main_args``
    (src/batsim.cpp), read as it reads them: ``roles`` (host -> role), ``mmax``, the ``config``
    entries SIMULATION_BEGINS forwards, the ``context`` ``--dump-execution-context`` prints.

    Raises:
        RunInputError: a Batsim feature the engine does not simulate (workflows, Redis,
            ``--no-sched``: use real Batsim), or a value Batsim refuses (its message quoted).
    """
    for flag, given, what in (("--enable-redis", args.enable_redis, "Redis"),
                              ("-W/--workflow", args.workflow, "workflows"), ("--WS", args.WS, "workflows"),
                              ("--workflow-jobs-limit", args.workflow_jobs_limit is not None, "workflows"),
                              ("--ignore-beyond-last-workflow", args.ignore_beyond_last_workflow, "workflows"),
                              ("--no-sched", args.no_sched, "Batsim without scheduler (batexec)")):
        if given and not (flag == "--enable-redis" and args.dump_execution_context):
            raise RunInputError(f"{flag}: {what}: not simulated by the embedded engine; run real Batsim 4.2.1")
    lead = re.match(r"\s*[+-]?\d+", args.mmax)   # std::stoi: a leading integer
    try:
        if lead is None:
            raise ValueError(args.mmax)
        mmax = int(lead.group())
    except ValueError:
        raise RunInputError(f"--mmax {args.mmax!r}: Batsim 4.2.1 refuses it (\"Cannot read <M_max> "
                            f"'{args.mmax}' as an integer.\")") from None
    try:
        redis_port = int(args.redis_port)
    except ValueError:
        raise RunInputError(f"--redis-port {args.redis_port!r}: Batsim 4.2.1 refuses it (\"Cannot read the Redis "
                            f"port '{args.redis_port}' as a long integer.\")") from None
    if args.verbosity not in VERBOSITY_LEVELS:
        raise RunInputError(f"--verbosity {args.verbosity!r}: Batsim 4.2.1 refuses it (\"Invalid <verbosity_level> "
                            f"'{args.verbosity}'.\"); levels: {', '.join(VERBOSITY_LEVELS)}")
    if args.enable_profile_reuse and not args.enable_dynamic_jobs:
        raise RunInputError("--enable-profile-reuse needs --enable-dynamic-jobs: Batsim 4.2.1 refuses it (\"Profile "
                            "reuse is enabled but dynamic registration is not, have you missed something?\")")
    if args.sched_cfg is not None and args.sched_cfg_file is not None:
        raise RunInputError("--sched-cfg and --sched-cfg-file: Batsim 4.2.1 takes one or the other")
    roles: dict[str, str] = {}
    for item in args.add_role_to_hosts:
        parts = item.split(":")
        if len(parts) != 2:
            raise RunInputError(f"-r {item!r}: Batsim 4.2.1 aborts (\"The roles host mapping should only contain "
                                "one ':' character\"); give HOSTS:ROLE, e.g. -r h1,h2:storage")
        for host in parts[0].split(","):
            roles[host] = parts[1]
    sched = args.sched_cfg or ""
    if args.sched_cfg_file is not None and not args.sched_cfg:
        try:
            sched = Path(args.sched_cfg_file).read_text(encoding="utf-8", errors="surrogateescape")
        except OSError as exc:
            raise RunInputError(f"--sched-cfg-file {args.sched_cfg_file}: cannot read it: {exc.strerror or exc}") from None
    config = {"redis-hostname": args.redis_hostname, "redis-port": redis_port, "redis-prefix": args.redis_prefix,
              "sched-config": sched}
    context = {"socket_endpoint": args.socket_endpoint, "redis_enabled": bool(args.enable_redis),
               "redis_hostname": args.redis_hostname, "redis_port": redis_port, "redis_prefix": args.redis_prefix,
               "export_prefix": args.export, "external_scheduler": not args.no_sched}
    return {"roles": roles, "mmax": max(mmax, 0), "config": config, "context": context}


def _refuse_empty_values(argv: list[str], parser: argparse.ArgumentParser) -> None:
    """``gridsched engine``'s command line ``argv`` as Batsim 4.2.1's parser (docopt) reads it:
    an empty argument given as the value of an option (``-e ''``, ``--redis-hostname ''``) is
    refused ("-e requires an argument", Batsim's exit status 255), while the attached form
    (``--export=``) is an empty value.

    Raises:
        RunInputError: the first such option, with Batsim's words.
    """
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["engine"]
    takes = {flag for a in sub._actions if a.nargs != 0 for flag in a.option_strings}
    i = argv.index("engine") + 1 if "engine" in argv else 0
    while i < len(argv):
        if argv[i] == "--":
            return
        if argv[i] in takes and i + 1 < len(argv):
            if argv[i + 1] == "":
                raise RunInputError(f"{argv[i]} '': real Batsim 4.2.1 refuses an empty argument (\"{argv[i]} requires "
                                    "an argument\")")
            i += 1
        i += 1


def cmd_engine(args: argparse.Namespace) -> int:
    term = _TermSignal()
    with term:
        try:
            return _engine_session(args, term)
        except _Terminated:
            print("gridsched engine: terminated (SIGTERM) before the simulation ended; no output written",
                  file=sys.stderr)
            return _SIGTERM_STATUS


def _engine_session(args: argparse.Namespace, term: "_TermSignal") -> int:
    from .batsim.endpoints import port_problem
    from .engine import Deadlock, build_engine, write_outputs
    from .engine.oddities import input_warnings
    from .engine.platform import check_compute_speeds
    from .engine.zmq_client import ZmqPort, zmq
    from .inputs.jsonfile import is_gzip_file

    if not args.timeout >= 0:  # negative or nan; checked before reading the inputs
        raise RunInputError(f"--timeout must be a number of seconds >= 0 (0 or inf: wait forever for each "
                            f"reply, as Batsim), got {args.timeout:g}")
    timeout = None if args.timeout in (0, math.inf) else args.timeout
    opts = _batsim_options(args)
    if args.dump_execution_context:
        print(json.dumps(opts.pop("context"), separators=(",", ":")))
        return 0
    for w in args.workload:   # (gridsched run reads them; Batsim, whose place the engine takes here, does not)
        if is_gzip_file(w):
            raise RunInputError(f"-w {w}: the file is gzip-compressed; real Batsim 4.2.1 reads plain JSON only and "
                                f"aborts (\"Invalid JSON file '{w}': could not be parsed\"): decompress it first "
                                "(gunzip), or run it with gridsched run, which reads it")
    engine = build_engine(args.platform, args.workload, energy=args.energy,
                          compute_sharing=args.enable_compute_sharing,
                          forward_profiles=args.forward_profiles_on_submission,
                          dynamic_jobs=args.enable_dynamic_jobs,
                          acknowledge_dynamic_jobs=args.acknowledge_dynamic_jobs,
                          profile_reuse=args.enable_profile_reuse, master_host=args.master_host,
                          roles=opts["roles"], mmax=opts["mmax"], mmax_workload=args.mmax_workload,
                          sg_config=args.sg_cfg, events=args.events or (),
                          forward_unknown_events=args.forward_unknown_events,
                          actor_model=True)   # (any scheduler: its calls may tie with submissions)
    check_compute_speeds(engine.platform, args.energy)   # (Batsim aborts as it creates its machines)
    for line in input_warnings(engine.platform, engine.workloads, args.energy):   # (run as Batsim runs them)
        print(f"gridsched engine: warning: {line}", file=sys.stderr)
    for host in engine.platform.unknown_role_hosts:   # (Batsim ignores them without a word)
        print(f"gridsched engine: warning: -r {host}:{opts['roles'][host]}: {engine.platform.source} has no host "
              f"{host!r}; real Batsim 4.2.1 ignores it (no host gets that role)", file=sys.stderr)
    folder = os.path.dirname(args.export + "_")
    if folder and not os.path.isdir(folder):   # (Batsim's WriteBuffer cannot open its first output file)
        if os.path.exists(folder):
            raise RunInputError(f"-e {args.export}: {folder} is a file, not a folder; real Batsim 4.2.1 aborts: "
                                "give a prefix in a folder")
        raise RunInputError(f"-e {args.export}: the folder {folder} does not exist; real Batsim 4.2.1 aborts "
                            "without creating it: create it first")
    engine.storage_sharing = not args.disable_storage_sharing
    engine.batsim_config.update(opts["config"])   # (build_engine's forward-unknown-events kept)
    files: dict[str, Any] = {"schedule_trace": not args.disable_schedule_tracing,
             "machine_states": not args.disable_machine_state_tracing}
    problem = port_problem(args.socket_endpoint)
    if problem is not None:   # real Batsim's libzmq does the same, silently: followed, with a word
        print(f"gridsched engine: warning: -s {args.socket_endpoint!r}: {problem}; real Batsim 4.2.1 connects "
              "there too", file=sys.stderr)
    try:
        port = ZmqPort(args.socket_endpoint, timeout=timeout)
    except zmq.ZMQError as exc:   # (real Batsim aborts on the same ZeroMQ error)
        raise RunInputError(f"-s {args.socket_endpoint!r}: ZeroMQ cannot connect to it: {exc}; a scheduler's "
                            "endpoint is tcp://HOST:PORT (or ipc://PATH)") from None
    try:
        result = engine.run(port)
    except Deadlock as dead:
        term.defer()
        # Real Batsim 4.2.1 at a SimGrid deadlock: no SIMULATION_ENDS, its outputs written, exit 0
        # (schedulers.engine.ports.Deadlock); the scheduler is left waiting, as with Batsim.
        write_outputs(dead.result, args.export + "_", energy=args.energy, **files)
        print(f"gridsched engine: {dead}; as real Batsim 4.2.1 at a deadlock, no SIMULATION_ENDS was sent "
              f"and the outputs up to it are in {args.export}_*.csv", file=sys.stderr)
        return term.status(0)
    finally:
        port.close()
    term.defer()
    write_outputs(result, args.export + "_", energy=args.energy, **files)
    if not (args.quiet or args.verbosity == "quiet"):   # (Batsim's -v quiet: nothing at all)
        print(f"simulation finished at t={result.end_time:.6f} s: {len(result.jobs)} jobs, "
              f"{result.messages} messages; outputs {args.export}_*.csv", file=sys.stderr)
    return term.status(0)


#: Exit status of ``gridsched engine`` stopped by SIGTERM (128 + 15, as a shell reports it).
_SIGTERM_STATUS = 143


class _Terminated(Exception):
    """SIGTERM arrived while ``gridsched engine`` simulated (:class:`_TermSignal`)."""


class _TermSignal:
    """SIGTERM in ``gridsched engine`` (``with term:`` installs the handler, and restores the
    previous one at the end). Until :meth:`defer`, a SIGTERM stops the run at once
    (:class:`_Terminated`: the socket is closed, nothing is written, exit status 143); after it
    (the simulation is over, the outputs are being written) the signal is kept until the files
    are complete, and :meth:`status` then gives 143. Front ends that start ``batsim``
    themselves send it when they close a simulation (batsim-py 1.0.5's
    ``SimulatorHandler.close``: ``terminate()``, then ``communicate()``). Only the main thread
    can install a handler: elsewhere (the engine run from a test's thread) nothing changes."""

    def __init__(self) -> None:
        self._old: Any = None   # the SIGTERM handler replaced
        self._defer = False
        self.pending = False

    def _handler(self, signum, frame) -> None:
        if self._defer:
            self.pending = True
        else:
            raise _Terminated()

    def __enter__(self) -> "_TermSignal":
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGTERM, self._handler)
        return self

    def __exit__(self, *exc: Any) -> None:
        import signal

        if self._old is not None:
            signal.signal(signal.SIGTERM, self._old)
            self._old = None

    def defer(self) -> None:
        """From now on a SIGTERM is kept for :meth:`status` instead of stopping the run."""
        self._defer = True

    def status(self, ok: int) -> int:
        """``ok``, or 143 when a SIGTERM came after :meth:`defer`."""
        return _SIGTERM_STATUS if self.pending else ok


def cmd_batsim_launcher(args: argparse.Namespace) -> int:
    from .batsim.launcher import write_launcher

    done = write_launcher(args.folder, force=args.force)
    folder = done.path.parent
    print(f"wrote {done.path}: runs `gridsched engine` (the embedded engine) when started as `batsim`")
    if done.shadowed:
        print(f"note: a real Batsim is on PATH ({done.shadowed}); the launcher takes its place only where "
              f"{folder} comes first on PATH", file=sys.stderr)
    print(f"use it with: PATH={folder}:$PATH python your_batsim_py_script.py")
    return 0


def cmd_policies(args: argparse.Namespace) -> int:
    """``gridsched policies``: each registered policy and what it does, in one line; ``gridsched
    policies NAME``: that policy in full (:func:`schedulers.registry.describe_policy`)."""
    from .registry import POLICIES, describe_policy, policy_summary

    if args.name is not None:
        print(describe_policy(args.name))
        return 0
    width = max(map(len, POLICIES))
    for name in sorted(POLICIES):
        print(f"{name:{width}s}  {policy_summary(POLICIES[name])}")
    print("\n`gridsched policies NAME` shows a policy's sources and options.")
    return 0


#: Sub-commands whose parsers are built by the modules that run them (:func:`build_parser`).
_MODULE_COMMANDS = ("serve", "convert", "campaign", "scenario")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``gridsched`` parser. With ``command`` (the sub-command named on the command line), the
    parsers of the other sub-commands that live in their own modules (``serve``, ``convert``,
    ``campaign``, ``scenario``) are left empty, so that their modules (the scenario generators,
    ZeroMQ...) are not imported: ``gridsched run`` starts faster. Their full parsers are built
    when ``command`` is None or names them (``gridsched --help`` lists every sub-command)."""
    parser = _Parser(prog="gridsched", description=__doc__.splitlines()[0], epilog=_epilog(),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"gridsched {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="simulate workloads on a platform with a policy; write Batsim's output "
                                     "files and a summary",
                         description="Simulate WORKLOAD(s) on PLATFORM with POLICY and write Batsim's output files.")
    run.add_argument("--policy", required=True,
                     help="policy name (see `gridsched policies`), or your own: FILE.py:Class or package.module:Class")
    run.add_argument("--platform", "-p", required=True, help="SimGrid platform XML")
    run.add_argument("--workload", "-w", required=True, action="append",
                     help="Batsim JSON workload, or a SWF/GWF trace converted on the fly (repeatable)")
    run.add_argument("--output", "-o", default="out", help="output folder (default: out); must be new or empty")
    run.add_argument("--overwrite", action="store_true",
                     help="reuse a non-empty output folder: first remove the files a previous run wrote there "
                          "(out_*.csv, summary.json, workload_wN.json...), and only those")
    run.add_argument("--energy", "-E", action="store_true", help="energy model and energy outputs")
    run.add_argument("--policy-options", metavar="JSON|@FILE", help="policy options as JSON or @file.json")
    run.add_argument("--engine", choices=("embedded", "batsim"), default="embedded",
                     help="embedded engine (default) or a real `batsim` binary on PATH")
    run.add_argument("--compute-sharing", action="store_true", help="Batsim's --enable-compute-sharing")
    run.add_argument("--forward-profiles", action="store_true", help="Batsim's --forward-profiles-on-submission")
    run.add_argument("--fit", choices=("error", "keep", "scale", "clamp", "drop"), default="error",
                     help="jobs larger than the platform: error (refuse the workload), keep them (as Batsim: the "
                          "policy rejects them), scale res, clamp res, drop the job; traces drop them unless "
                          "clamp (keep and scale are for JSON workloads)")
    run.add_argument("--events", action="append", metavar="FILE",
                     help="Batsim's external events (one JSON object a line: machine_unavailable, "
                          "machine_available; repeatable); the policy hears them as NOTIFY")
    run.add_argument("--forward-unknown-events", action="store_true",
                     help="Batsim's --forward-unknown-events: events of your own types go to the policy as NOTIFY")
    run.add_argument("--fallback-workload", metavar="FILE",
                     help="workload to run instead of the --workload files when one of them does not exist")
    run.add_argument("--cores-per-host", type=int, metavar="N",
                     help="trace processors per host (default: the platform's cores): res = ceil(processors / N)")
    run.add_argument("--max-jobs", type=int, metavar="N", help="keep only the N jobs submitted first, in each --workload")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--timeout", type=float, default=None, metavar="S", help="real-Batsim run timeout (s, default 3600)")
    from .batsim.runner import add_batsim_run_args
    add_batsim_run_args(run)
    run.set_defaults(func=cmd_run)

    eng = sub.add_parser("engine", help="the embedded engine as Batsim's side of the ZMQ protocol",
                         description="Play Batsim (same flags) against an external scheduler over ZeroMQ.")
    eng.add_argument("-p", "--platform", required=True, help="SimGrid platform XML, as Batsim's -p")
    eng.add_argument("-w", "--workload", action="append", default=[],
                     help="Batsim JSON workload (repeatable; none: only the jobs the scheduler registers)")
    eng.add_argument("-E", "--energy", action="store_true",
                     help="SimGrid's host-energy model: energy columns and out_consumed_energy.csv, "
                          "out_pstate_changes.csv")
    eng.add_argument("-s", "--socket-endpoint", default="tcp://localhost:28000",
                     help="ZMQ endpoint of the scheduler to connect to (default tcp://localhost:28000)")
    eng.add_argument("-e", "--export", default="out",
                     help="output prefix, as Batsim: files PREFIX_jobs.csv, ... (default: out)")
    eng.add_argument("-m", "--master-host", default="master_host",
                     help="the host running Batsim's processes, not a compute resource (default master_host)")
    eng.add_argument("-r", "--add-role-to-hosts", action="append", default=[], metavar="HOSTS:ROLE",
                     help="give hosts a role (master, storage, compute_node), as Batsim: -r h1,h2:storage")
    eng.add_argument("--mmax", default="0", metavar="NB",
                     help="use only the first NB compute hosts (by name); 0: all (default)")
    eng.add_argument("--mmax-workload", action="store_true",
                     help="use only as many compute hosts as the largest 'nb_res' of the workloads")
    eng.add_argument("--disable-schedule-tracing", action="store_true", help="no PREFIX_schedule.trace (Pajé)")
    eng.add_argument("--disable-machine-state-tracing", action="store_true", help="no PREFIX_machine_states.csv")
    eng.add_argument("--disable-storage-sharing", action="store_true",
                     help="no job starts on a host that already runs one, storage or compute host, compute "
                          "sharing or not (as Batsim 4.2.1 checks it)")
    eng.add_argument("--sched-cfg", metavar="TEXT", help="string forwarded in SIMULATION_BEGINS (config.sched-config)")
    eng.add_argument("--sched-cfg-file", metavar="FILE", help="the same, read from FILE")
    eng.add_argument("--sg-cfg", action="append", default=[], metavar="NAME:VALUE",
                     help="SimGrid option, as in a platform's <config> (the engine accepts what it reproduces)")
    eng.add_argument("--sg-log", action="append", default=[], metavar="OPTION", help="SimGrid logging (ignored)")
    eng.add_argument("-v", "--verbosity", default="information", metavar="LEVEL",
                     help="quiet, network-only, information or debug (Batsim's logs: the engine writes none)")
    eng.add_argument("-q", "--quiet", action="store_true", help="--verbosity quiet")
    eng.add_argument("--redis-hostname", default="127.0.0.1", help="forwarded in SIMULATION_BEGINS' config")
    eng.add_argument("--redis-port", default="6379", help="forwarded in SIMULATION_BEGINS' config")
    eng.add_argument("--redis-prefix", default="default", help="forwarded in SIMULATION_BEGINS' config")
    eng.add_argument("--events", action="append", metavar="FILE",
                     help="external events (one JSON object a line: machine_unavailable, machine_available, "
                          "or your own types with --forward-unknown-events); repeatable")
    eng.add_argument("--forward-unknown-events", action="store_true",
                     help="forward events of types Batsim does not know to the scheduler (NOTIFY)")
    eng.add_argument("--dump-execution-context", action="store_true",
                     help="print the execution context as Batsim does (JSON) and exit")
    for flag, kw in (("--enable-redis", {"action": "store_true"}),
                     ("-W", {"action": "append", "dest": "workflow"}), ("--WS", {"nargs": 2, "action": "append"}),
                     ("--workflow-jobs-limit", {}), ("--ignore-beyond-last-workflow", {"action": "store_true"}),
                     ("--no-sched", {"action": "store_true"})):
        eng.add_argument(flag, help=argparse.SUPPRESS, **kw)   # Batsim's; refused (cmd_engine)
    eng.add_argument("--enable-compute-sharing", action="store_true",
                     help="allow several jobs on one host, sharing its speed as SimGrid does")
    eng.add_argument("--forward-profiles-on-submission", action="store_true",
                     help="send each job's profile with its JOB_SUBMITTED")
    eng.add_argument("--enable-dynamic-jobs", action="store_true",
                     help="accept REGISTER_JOB/REGISTER_PROFILE; the run ends after NOTIFY registration_finished")
    eng.add_argument("--acknowledge-dynamic-jobs", action="store_true",
                     help="answer JOB_SUBMITTED for registered jobs (needs --enable-dynamic-jobs, as in Batsim)")
    eng.add_argument("--enable-profile-reuse", action="store_true",
                     help="keep the profiles of ended jobs usable by REGISTER_JOB (needs --enable-dynamic-jobs)")
    eng.add_argument("--timeout", type=float, default=600.0, metavar="S",
                     help="seconds to wait for each scheduler reply (default 600; 0 or inf: wait forever, "
                          "as Batsim; negative or nan: refused)")
    eng.set_defaults(func=cmd_engine)

    pol = sub.add_parser("policies", help="list the policies, or describe one",
                         description="Without NAME: every registered policy and what it does. With NAME: what "
                                     "the policy does, the works it follows, its options (values and defaults).")
    pol.add_argument("name", nargs="?", metavar="NAME",
                     help="a registered policy (e.g. easy), or your own as FILE.py:Class or package.module:Class")
    pol.set_defaults(func=cmd_policies)

    lau = sub.add_parser("batsim-launcher", help="write a `batsim` executable that runs the embedded engine",
                         description="Write FOLDER/batsim, a script that runs `gridsched engine` with Batsim's "
                                     "command line, for front ends that start `batsim` themselves (batsim-py). "
                                     "Put FOLDER first on PATH where they run; `gridsched run --engine batsim` "
                                     "refuses it as a real Batsim.")
    lau.add_argument("folder", metavar="FOLDER", help="where to write `batsim` (created if missing)")
    lau.add_argument("--force", action="store_true", help="replace an existing FOLDER/batsim")
    lau.set_defaults(func=cmd_batsim_launcher)

    for name in _MODULE_COMMANDS:
        if command is not None and command != name:
            sub.add_parser(name)  # never parsed nor shown: another sub-command was named
        elif name == "serve":
            try:
                from .batsim.server import add_serve_parser
                add_serve_parser(sub)
            except ImportError:  # pragma: no cover
                pass
        elif name == "convert":
            from .inputs.convert import add_convert_parser
            add_convert_parser(sub)
        elif name == "campaign":
            from .campaign.cli import add_campaign_parser
            add_campaign_parser(sub)
        else:
            from .inputs.scenario_cli import add_scenario_parser
            add_scenario_parser(sub)
    return parser


def _command(argv: list[str]) -> str | None:
    """The sub-command ``argv`` names (its first argument, when that is one), else None."""
    if argv and argv[0] in ("run", "engine", "policies", "batsim-launcher", *_MODULE_COMMANDS):
        return argv[0]
    return None


def _one_line(msg: Any) -> str:
    """An error message on one line (:func:`schedulers.exits.one_line`)."""
    return one_line(msg)


class _Parser(argparse.ArgumentParser):
    """``argparse`` with its errors on one line: ``gridsched run: error: argument --max-jobs:
    invalid int value: 'x' (gridsched run --help)`` instead of a usage block and the error
    (exit status 2, as argparse). The sub-command parsers are of this class too."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(BAD_INPUT, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def _epilog() -> str:
    """The exit-status table of ``gridsched --help`` (:data:`schedulers.exits.STATUSES`)."""
    import textwrap

    rows = "\n".join(textwrap.fill(text, 79, break_on_hyphens=False, initial_indent=f"  {code:>3}  ",
                                   subsequent_indent=" " * 7) for code, text in STATUSES)
    return f"exit status:\n{rows}"


def _on_sigterm(signum: int, frame: Any) -> None:
    from .exits import Terminated

    raise Terminated


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gridsched`` command. Returns the exit status
    (:data:`schedulers.exits.STATUSES`).

    Exit status: 0 done; 1 the simulation failed (the policy's code raised or ended the process,
    named by class, callback, file and line; real Batsim failed or timed out; an internal error:
    one line, with ``GRIDSCHED_TRACEBACK=1`` in the environment for the traceback); 2 bad input
    (one line on stderr naming the file and the item, or the option); 4 an output file could not
    be written (disk full...: the file named); 130 interrupted (Ctrl-C); 143 SIGTERM, handled as
    Ctrl-C (what finished is kept). SIGTERM is handled while ``main`` runs in the main thread;
    the previous handler is restored on return.
    """
    import signal
    import threading

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _main(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str] | None) -> int:
    from .batsim.runner import BatsimRunError
    from .engine.simulator import EngineError
    from .inputs.errors import EventsError, PlatformError, WorkloadError
    from .campaign.errors import CampaignError
    from .core.model import PolicyError, PolicyInputError
    from .outfiles import WRITE_ERRNOS, OutputWriteError
    from .registry import PolicyOptionError

    parser = build_parser(_command(sys.argv[1:] if argv is None else argv))
    try:
        args = parser.parse_args(argv)
        if getattr(args, "func", None) is cmd_engine:
            _refuse_empty_values(list(sys.argv[1:] if argv is None else argv), parser)
        return int(args.func(args) or 0)
    except (PlatformError, WorkloadError, EventsError, EngineError, KeyError, FileNotFoundError, PolicyOptionError,
            RunInputError, CampaignError, PolicyInputError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"gridsched: error: {_one_line(msg)}", file=sys.stderr)
        return BAD_INPUT
    except PolicyError as exc:   # the policy's own code (class, callback, file, line: core.failure)
        print(f"gridsched: error: {_one_line(exc)}", file=sys.stderr)
        return FAILED
    except (BatsimRunError, TimeoutError) as exc:
        print(f"gridsched: error: {_one_line(exc)}", file=sys.stderr)
        return FAILED
    except BrokenPipeError:   # the reader of stdout went away (`gridsched policies | head`): quietly
        try:   # (and no second error when Python flushes stdout at exit)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, io.UnsupportedOperation):
            pass
        return 0
    except OSError as exc:
        if isinstance(exc, OutputWriteError) or exc.errno in WRITE_ERRNOS:   # a full disk...
            where = "" if isinstance(exc, OutputWriteError) or not exc.filename else f"{exc.filename}: "
            print(f"gridsched: error: {where}{_one_line(exc)}", file=sys.stderr)
            return NOT_WRITTEN
        print(f"gridsched: error: {_one_line(exc)}", file=sys.stderr)   # e.g. the output folder cannot be made
        return BAD_INPUT
    except KeyboardInterrupt as exc:   # Ctrl-C, or SIGTERM (exits.Terminated)
        print(f"\ngridsched: {interrupt_word(exc)}", file=sys.stderr)
        return interrupt_status(exc)
    except Exception as exc:
        if os.environ.get("GRIDSCHED_TRACEBACK"):
            raise
        print(f"gridsched: internal error: {type(exc).__name__}: {_one_line(exc)} "
              "(GRIDSCHED_TRACEBACK=1 shows the traceback; please report it)", file=sys.stderr)
        return FAILED


if __name__ == "__main__":  # pragma: no cover
    # (`python -m schedulers.cli`: the main of the module schedulers.run_command imports from, so
    # that its RunInputError is the class main catches)
    from schedulers.cli import main as _imported_main
    sys.exit(_imported_main())
