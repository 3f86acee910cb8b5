"""A large SWF trace through the whole ``gridsched run -E``: wall time and peak memory.

Issue 13 ("Scale/Memory"): a 1M-job SWF trace replayed with energy in under 2 minutes and well
under 1 GB, its memory not that of a dict of all the jobs. ``gridsched run`` converts an SWF or
GWF trace on the fly to a staged Batsim workload (``workload_w0.json``) that the engine then
reads; this benchmark times that whole command on a generated trace, and on LANL-CM5 from the
Parallel Workloads Archive (``../shared``) when it is there.

Trace (:func:`make_swf`, seeded, written to a temporary directory): ``N`` job lines of the
Standard Workload Format (18 fields, Feitelson et al.), as a converted trace of the Parallel
Workloads Archive looks: job numbers 1..N in file order; submit times (field 2) the integer part
of Poisson arrivals of rate 1 job/s (so ties between jobs of the same second, and the file
sorted by submit time as the archive's traces are); run time (field 4) an integer uniform in
[10, 99] s; processors (fields 5 and 8) 1 for 90 % of the jobs, else 2 to 4; requested time
(field 9) the run time rounded up to the next multiple of 10 s (no job is killed); status 1
(completed); user (field 12) uniform in 1..100; the other fields -1. Header: ``; MaxProcs: 128``.
On the 128 one-core hosts of Batsim's ``energy_platform_homogeneous_no_net_128.xml`` (the
platform of ``bench_engine.py``; generated when ``../shared`` is absent) every record is kept: N
jobs, about 60 hosts busy on average, 90 distinct runtimes (90 ``delay`` profiles).

Each command runs in a subprocess of a fresh worker process (``bench_engine.py
--replay-worker``): wall time of the command, engine time (``simulation_time`` of
``out_schedule.csv``), peak resident memory of the command (``RUSAGE_CHILDREN`` ``ru_maxrss`` of
the worker, whose only child is the command). ``--root DIR`` also runs the ``gridsched`` of
another checkout (e.g. the commit before a change, from ``git archive``), in the same
invocation, the checkouts alternating for each case (``--repeat`` rounds).

Usage::

    python benchmarks/bench_swf.py --jobs 1000000 --root /tmp/gridsched-b4469c8 [--repeat 2]
    python benchmarks/bench_swf.py --jobs 20000 --no-lanl     # a quick look

Results: a table on stdout, ``benchmarks/results/swf.json`` and ``swf.md`` (``--out DIR``).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engine import (REPLAY_GOAL_MB, REPLAY_GOAL_S, machine_meta, resolve_platform,  # noqa: E402
                          run_worker, write_json_and_md)

ROOT = Path(__file__).resolve().parents[1]
LANL = ROOT.parent / "shared" / "data" / "traces" / "pwa-swf" / "LANL-CM5-1994-4.1-cln.swf.gz"
#: LANL-CM5 runs on Grid'5000 Nantes (22 hosts of 16 cores), as the README's KTH command.
LANL_PLATFORM = ROOT / "platforms" / "g5k_nantes_econome.xml"


def make_swf(path: Path, n: int, seed: int = 0) -> Path:
    """Write the benchmark trace (module docstring) of ``n`` job lines to ``path``."""
    rng = random.Random(seed)
    t = 0.0
    with open(path, "w", encoding="ascii") as out:
        out.write("; Version: 2.2\n; Computer: bench_swf.py synthetic trace (seeded)\n"
                  "; MaxJobs: %d\n; MaxRecords: %d\n; MaxNodes: 128\n; MaxProcs: 128\n;\n" % (n, n))
        rows = []
        for i in range(1, n + 1):
            t += rng.expovariate(1.0)
            run = rng.randint(10, 99)
            procs = 1 if rng.random() < 0.9 else rng.randint(2, 4)
            req = 10 * (run // 10 + 1)
            rows.append(f"{i} {int(t)} -1 {run} {procs} -1 -1 {procs} {req} -1 1 {rng.randint(1, 100)} "
                        "-1 -1 -1 -1 -1 -1\n")
            if len(rows) == 10_000:
                out.writelines(rows)
                rows.clear()
        out.writelines(rows)
    return path


def _label(root: str) -> str:
    """A checkout's name in the report: its git commit (``+`` when changed since), else its path."""
    import subprocess

    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return root
    return f"{head}{'+' if dirty else ''} ({root})"


def _measure(platform: Path, trace: Path, out: Path, root: str) -> dict:
    """One ``gridsched run --policy fcfs -E`` of checkout ``root`` in a fresh worker."""
    cmd = [sys.executable, str(ROOT / "benchmarks" / "bench_engine.py"), "--replay-worker", "--platform",
           str(platform), "--replay-workload", str(trace), "--replay-out", str(out), "--replay-root", root]
    return run_worker(cmd)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=1_000_000, help="job lines of the generated trace")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--root", action="append", default=[], metavar="DIR",
                    help="also measure the gridsched of this checkout (repeatable)")
    ap.add_argument("--repeat", type=int, default=1, help="rounds over the checkouts, for each case")
    ap.add_argument("--no-lanl", action="store_true", help="skip LANL-CM5")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results", help="folder for swf.json/.md")
    args = ap.parse_args(argv)

    roots = [str(ROOT)] + [str(Path(r).resolve()) for r in args.root]
    labels = [_label(r) for r in roots]  # before the runs: git is not run while they are measured
    rows = []
    load = []
    with tempfile.TemporaryDirectory(prefix="bench_swf_") as tmp:
        tmpd = Path(tmp)
        plat, note = resolve_platform(tmpd)
        trace = make_swf(tmpd / f"synthetic_{args.jobs}.swf", args.jobs, args.seed)
        size_mb = trace.stat().st_size / 2**20
        print(f"platform: {note}\ntrace: {args.jobs:,} job lines, {size_mb:.0f} MB", flush=True)
        cases = [("synthetic", plat, trace)]
        if not args.no_lanl and LANL.is_file():
            cases.append(("LANL-CM5", LANL_PLATFORM, LANL))
        for case, platform, path in cases:
            for rnd in range(args.repeat):
                for k, root in enumerate(roots):
                    load.append(os.getloadavg()[0])
                    out = tmpd / f"out_{case}_{rnd}_{k}"
                    r = _measure(platform, path, out, root)
                    r.update(case=case, round=rnd, checkout=labels[k],
                             load_before=load[-1], platform=platform.name)
                    rows.append(r)
                    print(f"  {case} round {rnd} {r['checkout']}: {r['wall_s']:.1f} s (engine "
                          f"{r['engine_s']:.1f} s), peak RSS {r['maxrss_mb']:.0f} MB, load {load[-1]:.2f}",
                          flush=True)
    same = {case: len({(r["jobs"], r["makespan"], r["energy_joules"]) for r in rows if r["case"] == case}) == 1
            for case, _, _ in cases}
    meta = {**machine_meta(), "platform_note": note, "jobs": args.jobs, "seed": args.seed,
            "trace": f"{args.jobs:,} SWF job lines ({size_mb:.0f} MB), see the module docstring",
            "load_average_1min": {"min": min(load), "max": max(load)}, "same_results": same}
    lines = ["# SWF benchmark: a large trace through `gridsched run -E`", "",
             f"Generated by `benchmarks/bench_swf.py` on {meta['date']} ({meta['python']}, {meta['machine']}, "
             f"1-minute load average {min(load):.2f}-{max(load):.2f} before the runs).", "",
             f"- synthetic: {meta['trace']}; platform: {note}",
             f"- LANL-CM5: `{LANL.name}` (122,060 records) on `{LANL_PLATFORM.name}` (22 hosts x 16 cores)",
             "- command: `gridsched run --policy fcfs -E --no-progress -w TRACE` (convert the trace, read it, "
             "simulate, write the five output files and summary.json); wall = the whole command; engine = "
             "`Engine.run` (`simulation_time` of out_schedule.csv); peak RSS = the command's `ru_maxrss`; load = "
             "the 1-minute load average just before the run (it includes the run before, which keeps one of the "
             "two cores busy, and any other session on the machine)",
             f"- goal (1M jobs): under {REPLAY_GOAL_S:.0f} s and under {REPLAY_GOAL_MB:.0f} MB; same jobs, makespan "
             f"and energy for every checkout: {', '.join(f'{c} {s}' for c, s in same.items())}", "",
             "| case | checkout | round | jobs | wall (s) | engine (s) | peak RSS (MB) | bytes per job | load |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['checkout']} | {r['round']} | {r['jobs']:,} | {r['wall_s']:.1f} "
                     f"| {r['engine_s']:.1f} | {r['maxrss_mb']:.0f} | {r['maxrss_mb'] * 2**20 / r['jobs']:,.0f} "
                     f"| {r['load_before']:.2f} |")
    lines.append("")
    print("\n".join(lines[-(len(rows) + 3):]))
    js, md = write_json_and_md(args.out, "swf", meta, rows, lines)
    print(f"wrote {js} and {md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
