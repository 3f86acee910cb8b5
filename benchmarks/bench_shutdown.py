"""Effect of idle-host shutdown (policy option ``idle_timeout``) on energy and waiting time.

Inputs: ``platforms/g5k_nantes_econome.xml`` (22 Nantes econome hosts, 16 cores; Idle 100 W,
sleep 10 W; switch-off 6.1 s at 101 W, switch-on 151.52 s at 125.2 W: assumptions of the
platform file, see platforms/README.md) and the first ``--jobs`` jobs (default 5,000, about 72
days) of the Parallel Workloads Archive trace KTH-SP2 (``../shared/data/traces/pwa-swf``, 100
processors) converted on the fly by ``gridsched run`` with one host per 16 trace processors:
a light load, about a third of the hosts busy on average. Converted jobs are ``delay`` profiles
(a running job's host draws its idle power), so the energy saved is that of the hosts asleep.

Each configuration is exactly one command (printed with ``--show``)::

    gridsched run --policy POLICY -p platforms/g5k_nantes_econome.xml -E --max-jobs 5000 \\
        -w ../shared/data/traces/pwa-swf/KTH-SP2-1996-2.1-cln.swf.gz [--policy-options '{"idle_timeout": T}']

for POLICY in ``--policies`` (default fcfs, easy) and T in ``--timeouts`` (default off, 60, 300,
1800 s). Read from each run: ``consumed_joules`` of out_schedule.csv (energy from the first
submission to the last job end, Batsim's definition), the mean waiting time of out_jobs.csv and
``nb_machine_switches`` (hosts switched off + on). With ``--batsim``, every configuration is run
again behind real Batsim 4.2.1 (``batsim`` on PATH) and the summaries are compared.

Usage::

    python benchmarks/bench_shutdown.py                     # the README table
    python benchmarks/bench_shutdown.py --jobs 500 --batsim # engine vs real Batsim on a short slice

Results: a Markdown table on stdout, ``benchmarks/results/shutdown.json`` and ``shutdown.md``.
"""

from __future__ import annotations

import argparse
import csv
import json
import platform as _platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from schedulers.cli import main as gridsched  # noqa: E402

PLATFORM = ROOT / "platforms" / "g5k_nantes_econome.xml"
TRACE = ROOT.parent / "shared" / "data" / "traces" / "pwa-swf" / "KTH-SP2-1996-2.1-cln.swf.gz"


def command(policy: str, timeout: float | None, jobs: int, out: Path, engine: str) -> list[str]:
    """``gridsched run`` arguments of one configuration."""
    args = ["run", "--policy", policy, "-p", str(PLATFORM), "-w", str(TRACE), "-E", "--max-jobs", str(jobs),
            "-o", str(out), "--no-progress", "--engine", engine]
    if timeout is not None:
        args += ["--policy-options", json.dumps({"idle_timeout": timeout})]
    return args


def run_one(policy: str, timeout: float | None, jobs: int, engine: str) -> dict:
    """Run one configuration; its energy (J, kWh), mean waiting time (s), switches, wall time (s)."""
    with tempfile.TemporaryDirectory(prefix="bench-shutdown-") as tmp:
        out = Path(tmp) / "out"
        t0 = time.perf_counter()
        code = gridsched(command(policy, timeout, jobs, out, engine))
        wall = time.perf_counter() - t0
        if code != 0:
            raise SystemExit(f"gridsched run failed ({code}) for {policy} idle_timeout={timeout}")
        sched = next(csv.DictReader((out / "out_schedule.csv").open()))
        summary = json.loads((out / "summary.json").read_text())
    return {"policy": policy, "idle_timeout": timeout, "engine": engine,
            "energy_joules": float(sched["consumed_joules"]),
            "mean_waiting_time": summary["mean_waiting_time"],
            "makespan": summary["makespan"],
            "machine_switches": int(sched["nb_machine_switches"]),
            "wall_s": round(wall, 2)}


def table(rows: list[dict]) -> str:
    base = {r["policy"]: r for r in rows if r["idle_timeout"] is None and r["engine"] == "embedded"}
    out = ["| policy | idle_timeout (s) | energy (kWh) | energy vs off | mean wait (s) | wait vs off | "
           "switches | run (s) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r["engine"] != "embedded":
            continue
        b = base.get(r["policy"])
        de = f"{100 * (r['energy_joules'] / b['energy_joules'] - 1):+.1f} %" if b else "-"
        dw = f"{r['mean_waiting_time'] - b['mean_waiting_time']:+.1f} s" if b else "-"
        t = "off" if r["idle_timeout"] is None else f"{r['idle_timeout']:g}"
        out.append(f"| {r['policy']} | {t} | {r['energy_joules'] / 3.6e6:,.1f} | {de} | "
                   f"{r['mean_waiting_time']:,.1f} | {dw} | {r['machine_switches']:,} | {r['wall_s']:.1f} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=5000, help="first N jobs of the trace (default 5000)")
    ap.add_argument("--policies", default="fcfs,easy")
    ap.add_argument("--timeouts", default="off,60,300,1800", help="'off' or seconds, comma-separated")
    ap.add_argument("--batsim", action="store_true", help="also run each configuration behind real Batsim")
    ap.add_argument("--show", action="store_true", help="print the gridsched commands and stop")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = ap.parse_args(argv)
    if not TRACE.exists():
        print(f"{TRACE} not found: this benchmark needs ../shared beside the project", file=sys.stderr)
        return 2
    timeouts = [None if t == "off" else float(t) for t in args.timeouts.split(",")]
    engines = ["embedded", "batsim"] if args.batsim else ["embedded"]
    if args.show:
        for p in args.policies.split(","):
            for t in timeouts:
                print(shlex.join(["gridsched", *command(p, t, args.jobs, Path("out"), "embedded")]))
        return 0
    rows = []
    for p in args.policies.split(","):
        for t in timeouts:
            for e in engines:
                rows.append(run_one(p, t, args.jobs, e))
                print(json.dumps(rows[-1]), file=sys.stderr)
    mismatches = []
    if args.batsim:
        keys = ("energy_joules", "mean_waiting_time", "makespan", "machine_switches")
        by = {(r["policy"], r["idle_timeout"], r["engine"]): r for r in rows}
        for (p, t, e), r in by.items():
            if e == "batsim":
                mine = by[(p, t, "embedded")]
                diff = [k for k in keys if abs(mine[k] - r[k]) > 1e-6 * max(1.0, abs(r[k]))]
                if diff:
                    mismatches.append(f"{p} idle_timeout={t}: {', '.join(diff)} differ")
    head = (f"Generated by `benchmarks/bench_shutdown.py --jobs {args.jobs}` on "
            f"{time.strftime('%Y-%m-%d %H:%M:%S')} (Python {_platform.python_version()}, "
            f"{_platform.machine()}); platform {PLATFORM.name}, first {args.jobs} jobs of {TRACE.name}.")
    text = head + "\n\n" + table(rows) + "\n"
    if args.batsim:
        text += ("\nReal Batsim 4.2.1: " + ("every summary equal to the engine's (energy, mean waiting "
                 "time, makespan, switches)." if not mismatches else "; ".join(mismatches)) + "\n")
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "shutdown.json").write_text(json.dumps(rows, indent=1) + "\n")
    (out / "shutdown.md").write_text("# Idle-host shutdown benchmark\n\n" + text)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
