"""``gridsched convert``: trace file -> validated Batsim workload JSON.

The converter is chosen from the file name: ``.swf`` / ``.swf.gz`` (Standard Workload Format,
Parallel Workloads Archive, :func:`~schedulers.inputs.swf.swf_to_batsim`), ``.gwf`` / ``.gwf.gz``
(Grid Workloads Format, Grid Workloads Archive, :func:`~schedulers.inputs.gwf.gwf_to_batsim`),
``.json`` / ``.json.gz`` (an existing Batsim workload, adapted to ``nb_hosts`` hosts by
:func:`~schedulers.inputs.rescale.rescale_workload`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from os import PathLike
from pathlib import Path
from typing import Any

from ..exits import one_line
from ..outfiles import OutputWriteError, atomic_write_text, check_output_file, make_folder
from .errors import WorkloadError
from .jsonfile import regular_file
from .gwf import gwf_conversion
from .rescale import rescale_workload
from .swf import ConversionReport, swf_conversion
from .validate import load_workload_json, validate_workload

__all__ = ["add_convert_parser", "convert_trace", "dumps_workload", "no_job", "run_convert", "write_workload"]

_TRACE_OPTIONS = frozenset({
    "cores_per_host", "nb_hosts", "time_origin", "walltime", "runtime_source", "keep_cancelled",
    "start", "end", "max_jobs", "users", "oversized", "profile_kind",
})
_OPTIONS = {
    "swf": _TRACE_OPTIONS,
    "gwf": _TRACE_OPTIONS | {"site"},
    "json": frozenset({"nb_hosts", "mode"}),
}


def _kind(path: Path) -> str:
    name = path.name.lower()
    for suffix, kind in ((".swf", "swf"), (".swf.gz", "swf"), (".gwf", "gwf"), (".gwf.gz", "gwf"),
                         (".json", "json"), (".json.gz", "json")):
        if name.endswith(suffix):
            return kind
    raise ValueError(f"{path}: unknown trace type; expected .swf, .swf.gz, .gwf, .gwf.gz or .json")


def dumps_workload(data: dict[str, Any]) -> str:
    """Serialise a workload as compact but readable JSON: one job and one profile per line.

    Top-level keys keep their order; ``jobs`` and ``profiles`` are written one item a line,
    every other value on its own line. Ends with a newline. Same input, same bytes.
    """
    out = ["{"]
    items = list(data.items())
    for position, (key, value) in enumerate(items):
        comma = "," if position < len(items) - 1 else ""
        name = json.dumps(key)
        if key == "jobs" and isinstance(value, list) and value:
            rows = ",\n".join("    " + json.dumps(job, separators=(", ", ": ")) for job in value)
            out.append(f"  {name}: [\n{rows}\n  ]{comma}")
        elif key == "profiles" and isinstance(value, dict) and value:
            rows = ",\n".join(
                f"    {json.dumps(pname)}: {json.dumps(profile, separators=(', ', ': '))}"
                for pname, profile in value.items()
            )
            out.append(f"  {name}: {{\n{rows}\n  }}{comma}")
        else:
            out.append(f"  {name}: {json.dumps(value)}{comma}")
    out.append("}")
    return "\n".join(out) + "\n"


def write_workload(data: dict[str, Any], output: str | PathLike[str]) -> Path:
    """Write ``data`` to ``output`` with :func:`dumps_workload`, atomically (temporary file then
    rename), creating missing parent directories. Returns the output path."""
    output = Path(output)
    make_folder(output.parent)
    atomic_write_text(output, dumps_workload(data))
    return output


def convert_trace(path: str | PathLike[str], output: str | PathLike[str], *, validate: bool = True,
                  **options: Any) -> ConversionReport:
    """Convert a trace to a Batsim workload JSON file, validate it, then write it.

    Args:
        path: ``.swf``/``.swf.gz``, ``.gwf``/``.gwf.gz`` or ``.json``/``.json.gz`` file.
        output: the JSON file to write (parent directories are created).
        validate: check the result against ``workload_schema.json`` and its cross-references
            (:func:`~schedulers.inputs.validate.validate_workload`) before writing it. ``gridsched
            run`` on the embedded engine passes False: the engine's reader checks every job as
            Batsim 4.2.1 does (:mod:`schedulers.engine.workload`), and the schema check, about 45 µs
            a job with ``jsonschema``, was half of the run on a 28k-job trace. Without it, an SWF
            or GWF trace is converted as it is read, straight to the file
            (:meth:`~schedulers.inputs.swf.TraceConversion.write`: same bytes, about 40 bytes of
            Python memory a job instead of about 740 for the workload dict the check needs).
        **options: keyword options of the chosen converter: those of
            :func:`~schedulers.inputs.swf.swf_to_batsim` for SWF, plus ``site`` for GWF
            (:func:`~schedulers.inputs.gwf.gwf_to_batsim`); for JSON, ``nb_hosts`` (required)
            and ``mode`` (``"scale"``, ``"clamp"`` or ``"drop"``,
            :func:`~schedulers.inputs.rescale.rescale_workload`).

    Returns:
        The :class:`~schedulers.inputs.swf.ConversionReport`, with ``output`` set.

    Raises:
        ValueError: unknown extension, an option the converter does not take, an option out
            of range, or ``output`` is ``path`` itself or a folder (nothing is read nor written).
        FileNotFoundError: ``path`` does not exist.
        WorkloadError: malformed input (file and line), a trace of which no job is kept
            (:func:`no_job`: ``gridsched run`` refuses it too), or a result that is not a valid
            workload (nothing is written then; with ``validate=False``, the file written as the
            trace is read is removed).
    """
    path, output = Path(path), Path(output)
    kind = _kind(path)
    unknown = sorted(set(options) - _OPTIONS[kind])
    if unknown:
        raise ValueError(f"{path}: option(s) {', '.join(unknown)} do not apply to a .{kind} input "
                         f"(accepted: {', '.join(sorted(_OPTIONS[kind]))})")
    if output.exists() and path.exists() and os.path.samefile(path, output):
        raise ValueError(f"-o {output}: is the input trace itself: the conversion would replace it; "
                         "give another output file")
    if output.is_dir():   # (a bad option: the line said "cannot write the file: Is a directory", status 4)
        raise ValueError(f"-o {output}: is a folder; -o names the workload file to write, e.g. "
                         f"{output / (path.name.split('.')[0] + '.json')}")
    check_output_file(output)   # (/dev/null, /dev/stdout: the rename would replace the device by a file)
    regular_file(path, "trace", WorkloadError)   # (a FIFO would block the read)
    if kind in ("swf", "gwf"):
        conversion = (swf_conversion if kind == "swf" else gwf_conversion)(path, **options)
        if not validate:  # streamed to the file, the jobs never all in memory
            report = conversion.write(output)
            if report.jobs_kept == 0:
                output.unlink(missing_ok=True)
                raise no_job(path, report)
            return report
        data = conversion.workload()
        if data.report.jobs_kept == 0:
            raise no_job(path, data.report)
    else:
        if options.get("nb_hosts") is None:
            raise ValueError(f"{path}: rescaling a Batsim JSON workload needs nb_hosts, the hosts of the target "
                             "platform (gridsched convert --nb-hosts N)")
        data = rescale_workload(load_workload_json(path), options["nb_hosts"],
                                mode=options.get("mode", "scale"), source=str(path))
        if data.report.records_read and not data.report.jobs_kept:   # (mode drop dropped them all)
            raise no_job(path, data.report)
    report = data.report
    if validate:
        validate_workload(data, f"{output} (converted from {path})")
    write_workload(data, output)
    report.output = str(output)
    return report


def no_job(path: str | PathLike[str], report: ConversionReport) -> WorkloadError:
    """The error of a trace of which no job is kept (empty, header-only, or every job dropped):
    ``gridsched run`` and ``gridsched convert`` refuse it alike, saying why."""
    if report.records_read == 0:
        why = "it has no job line (empty or header-only trace)"
    else:
        reasons = ", ".join(f"{n} {r}" for r, n in report.dropped.items())
        why = f"none of its {report.records_read} job(s) is kept ({reasons})"
    return WorkloadError(f"{path}: no job to simulate: {why}")


def _time_origin(text: str) -> str | float:
    if text in ("first", "zero"):
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 'first', 'zero' or seconds, got {text!r}") from None


def add_convert_parser(subparsers: "argparse._SubParsersAction[Any]") -> argparse.ArgumentParser:
    """Register the ``convert`` sub-command on ``subparsers`` (from ``add_subparsers()``).

    The parser's default ``func`` is :func:`run_convert`. Options left unset are not passed to
    the converter, so the converter's own defaults apply. Returns the new parser.
    """
    parser = subparsers.add_parser(
        "convert",
        help="convert an SWF/GWF trace (or rescale a Batsim JSON workload) to a Batsim workload",
        description=(
            "Convert a Parallel Workloads Archive trace (.swf, .swf.gz), a Grid Workloads Archive "
            "trace (.gwf) or a Batsim workload (.json, rescaled to --nb-hosts) into a validated "
            "Batsim workload JSON file of delay jobs, and print what was kept and dropped."
        ),
    )
    parser.add_argument("trace", help="input trace: .swf, .swf.gz, .gwf or .json")
    parser.add_argument("-o", "--output", required=True, help="Batsim workload JSON to write")
    parser.add_argument("--cores-per-host", type=int, metavar="N", help="processors per host (default 1): res = ceil(procs / N)")
    parser.add_argument("--nb-hosts", type=int, metavar="N",
                        help="hosts of the target platform (default: trace header MaxProcs / cores, or largest job)")
    parser.add_argument("--time-origin", type=_time_origin, metavar="ORIGIN",
                        help="'first' (default: first kept job at 0 s), 'zero' (trace time) or seconds")
    parser.add_argument("--start", type=float, metavar="S", help="keep jobs submitted at or after S (trace seconds)")
    parser.add_argument("--end", type=float, metavar="S", help="keep jobs submitted before S (trace seconds)")
    parser.add_argument("--max-jobs", type=int, metavar="N", help="keep at most N jobs (the earliest submitted)")
    parser.add_argument("--keep-cancelled", action="store_true", default=None,
                        help="keep cancelled jobs (status 5) that did run")
    parser.add_argument("--walltime", choices=("requested", "runtime", "none"),
                        help="walltime source (default: requested time, -1 when unknown)")
    parser.add_argument("--runtime-source", choices=("run", "requested"),
                        help="job duration: recorded run time (default) or requested time")
    parser.add_argument("--no-users", dest="users", action="store_false", default=None,
                        help="do not add the 'user' field")
    parser.add_argument("--oversized", choices=("drop", "clamp", "error"),
                        help="jobs needing more hosts than nb_res (default: drop)")
    parser.add_argument("--site", action="append", metavar="SITE",
                        help="GWF only: keep jobs of this OrigSiteID (repeatable)")
    parser.add_argument("--rescale-mode", dest="mode", choices=("scale", "clamp", "drop"),
                        help="JSON only: how to adapt res to --nb-hosts (default: scale)")
    parser.set_defaults(func=run_convert)
    return parser


_ARG_NAMES = ("cores_per_host", "nb_hosts", "time_origin", "start", "end", "max_jobs",
              "keep_cancelled", "walltime", "runtime_source", "users", "oversized", "site", "mode")

#: The command-line flag of each option of :func:`convert_trace` (messages name what the user typed).
_FLAGS = {name: "--" + name.replace("_", "-") for name in _ARG_NAMES} | {"users": "--no-users",
                                                                         "mode": "--rescale-mode"}


def _cli_words(message: str) -> str:
    """A :class:`ValueError` of :func:`convert_trace` in the words of the command line: the option
    a message starts with (``cores_per_host must be...``, ``end (5.0) must be greater than start
    (10.0)``) named by its flag."""
    for name, flag in _FLAGS.items():
        if message.startswith((f"{name} must", f"{name} (")):
            message = flag + message[len(name):]
            if name == "end":
                message = message.replace(" greater than start (", " greater than --start (", 1)
            break
    return message


def run_convert(args: argparse.Namespace) -> int:
    """Handler of ``gridsched convert``: convert, print the report; 0 on success, 2 on error.

    Errors (unknown file, malformed trace, bad option) are printed on stderr as one message
    naming the file (and line), without a traceback.
    """
    options = {name: getattr(args, name) for name in _ARG_NAMES if getattr(args, name, None) is not None}
    if "site" in options and len(options["site"]) == 1:
        options["site"] = options["site"][0]
    try:
        kind = _kind(Path(args.trace))
        unknown = [_FLAGS[name] for name in _ARG_NAMES if name in options and name not in _OPTIONS[kind]]
        if unknown:   # (named as typed: convert_trace names its parameters)
            raise ValueError(f"{args.trace}: {', '.join(unknown)} {'does' if len(unknown) == 1 else 'do'} not apply "
                             f"to a .{kind} input (it takes: "
                             f"{', '.join(_FLAGS[n] for n in _ARG_NAMES if n in _OPTIONS[kind])})")
        report = convert_trace(args.trace, args.output, **options)
    except OutputWriteError:
        raise   # (a full disk: exit status 4, gridsched's main)
    except (WorkloadError, ValueError, OSError) as exc:
        text = _cli_words(str(exc)) if isinstance(exc, ValueError) and not isinstance(exc, WorkloadError) else exc
        print(f"gridsched convert: error: {one_line(text)}", file=sys.stderr)
        return 2
    print(report.summary())
    return 0
