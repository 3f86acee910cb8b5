#!/usr/bin/env python3
"""Check that a trace converted as it is read gives the file the dict path gives, byte for byte.

    python scripts/compare_trace_conversion.py --root /tmp/gridsched-older   # a checkout of another version

For every SWF trace of ``../shared/data/traces/pwa-swf`` (when present) and the fixtures
``tests/fixtures/tiny.swf`` and ``tiny.gwf``, under several option sets (the options of
``gridsched run`` and of ``gridsched convert``: cores per host, nb_hosts, oversized, max_jobs,
time origin, window, walltime and runtime sources, users, cancelled jobs, GWF sites), three
conversions are written:

1. this checkout, streamed: ``convert_trace(..., validate=False)``
   (:meth:`schedulers.inputs.swf.TraceConversion.write`, ``gridsched run``'s path);
2. this checkout, dict path: ``write_workload(swf_to_batsim(...))`` (``gridsched convert``'s
   path, less the schema check);
3. with ``--root``, the checkout given (e.g. the commit before streaming, from ``git archive``):
   its ``convert_trace(..., validate=False)``.

Each conversion runs in a subprocess with that checkout on ``PYTHONPATH``, and writes the
workload file and the report (``ConversionReport.to_dict()`` less ``output``) or the error. The
files of every case must be the same bytes. Exit status 0 when all are, 1 otherwise (one line
per difference).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PWA = ROOT.parent / "shared" / "data" / "traces" / "pwa-swf"
FIX = ROOT / "tests" / "fixtures"

_TRACE_OPTIONS = [{}, {"cores_per_host": 16, "nb_hosts": 22, "oversized": "drop"},
                  {"cores_per_host": 4, "nb_hosts": 39, "oversized": "clamp", "max_jobs": 1000},
                  {"time_origin": "zero", "walltime": "runtime", "users": False, "keep_cancelled": True}]
_TINY_SWF_OPTIONS = [{}, {"cores_per_host": 4}, {"nb_hosts": 4}, {"nb_hosts": 4, "oversized": "clamp"},
                     {"max_jobs": 3}, {"max_jobs": 0}, {"time_origin": 50.0}, {"time_origin": 110},
                     {"start": 105, "end": 130}, {"runtime_source": "requested"},
                     {"walltime": "none", "keep_cancelled": True, "users": False}]
_TINY_GWF_OPTIONS = [{}, {"site": "lyon"}, {"nb_hosts": 2}, {"nb_hosts": 2, "oversized": "clamp", "max_jobs": 2},
                     {"cores_per_host": 3}]

#: Run in a subprocess: argv = mode ("stream" or "dict"), cases JSON file, output folder.
_WORKER = r'''
import json, sys
from pathlib import Path
from schedulers.inputs.convert import convert_trace, write_workload
mode, cases, out = sys.argv[1], json.loads(Path(sys.argv[2]).read_text()), Path(sys.argv[3])
for k, (trace, opts) in enumerate(cases):
    target = out / f"c{k}.json"
    try:
        if mode == "stream":
            report = convert_trace(trace, target, validate=False, **opts)
        else:
            if trace.endswith((".gwf", ".gwf.gz")):
                from schedulers.inputs.gwf import gwf_to_batsim as convert
            else:
                from schedulers.inputs.swf import swf_to_batsim as convert
            data = convert(trace, **opts)
            write_workload(data, target)
            report = data.report
        d = report.to_dict()
        d["output"] = None
        (out / f"c{k}.report.json").write_text(json.dumps(d, indent=1))
    except Exception as exc:
        (out / f"c{k}.error").write_text(f"{type(exc).__name__}: {exc}")
'''


def cases() -> list[tuple[str, dict]]:
    """The (trace, options) pairs checked (the module docstring)."""
    out: list[tuple[str, dict]] = []
    if PWA.is_dir():
        for trace in sorted(PWA.glob("*.swf*")):
            if trace.name.endswith((".swf", ".swf.gz")):
                out += [(str(trace), opts) for opts in _TRACE_OPTIONS]
    out += [(str(FIX / "tiny.swf"), opts) for opts in _TINY_SWF_OPTIONS]
    out += [(str(FIX / "tiny.gwf"), opts) for opts in _TINY_GWF_OPTIONS]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", help="another checkout whose convert_trace(validate=False) is compared too")
    args = ap.parse_args(argv)
    todo = cases()
    runs = [("stream", str(ROOT), "this checkout, streamed"), ("dict", str(ROOT), "this checkout, dict path")]
    if args.root:
        runs.append(("stream", str(Path(args.root).resolve()), f"{args.root}, convert_trace(validate=False)"))
    with tempfile.TemporaryDirectory(prefix="compare_trace_") as tmp:
        tmpd = Path(tmp)
        (tmpd / "cases.json").write_text(json.dumps(todo))
        folders = []
        for k, (mode, root, _) in enumerate(runs):
            folder = tmpd / f"run{k}"
            folder.mkdir()
            env = dict(os.environ, PYTHONPATH=root)
            proc = subprocess.run([sys.executable, "-c", _WORKER, mode, str(tmpd / "cases.json"), str(folder)],
                                  env=env, cwd=root, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"compare_trace_conversion: {runs[k][2]} failed: {proc.stderr.strip()}", file=sys.stderr)
                return 1
            folders.append(folder)
        bad = 0
        names = sorted(p.name for p in folders[0].iterdir())
        for k, folder in enumerate(folders[1:], start=1):
            other = sorted(p.name for p in folder.iterdir())
            if other != names:
                print(f"{runs[k][2]}: other files than the streamed run ({sorted(set(other) ^ set(names))})")
                bad += 1
                continue
            _, mismatch, errors = filecmp.cmpfiles(folders[0], folder, names, shallow=False)
            for name in mismatch + errors:
                case = todo[int(name[1:].split(".")[0])]
                print(f"{runs[k][2]}: {name} differs: {Path(case[0]).name} {case[1]}")
                bad += 1
    print(f"{len(todo)} cases, {len(runs)} conversions each: "
          f"{'all the same bytes' if not bad else f'{bad} difference(s)'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
