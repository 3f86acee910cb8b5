"""Whole-command time of ``gridsched run`` (start-up included) against real Batsim.

Goal: ``gridsched run`` on 10k jobs, start-up included, at least 10x faster than real Batsim
4.2.1 driven by a minimal Python FCFS.

Workload: :func:`bench_engine.make_workload` (``N`` single-host ``delay`` jobs of 10-100 s, Poisson
arrivals of 1 job/s, walltimes never reached; default ``N`` = 10,000, seed 1) written once to a
JSON file in a temporary folder; platform: :func:`bench_engine.resolve_platform` (Batsim's
``energy_platform_homogeneous_no_net_128.xml``). No energy, or with ``--energy`` every command
with Batsim's ``-E`` (results in ``startup_energy.json`` / ``.md``). Every command writes its
outputs to a fresh folder.

Commands, each timed from its start to its exit (wall clock, s), ``--repeat`` times (the table
shows the median, min and max):

* ``gridsched``: ``python -m schedulers.cli run --policy fcfs -p P -w W -o OUT --no-progress``,
  the whole command: interpreter start, imports, reading the inputs, simulation, output files,
  summary. Run once untimed first so that Python's bytecode cache (``__pycache__``) is written,
  as after any installation (``PYTHONDONTWRITEBYTECODE`` is removed from its environment);
* ``batsim+minimal-fcfs`` (the reference, when a ``batsim`` executable is found: ``--batsim``,
  else ``batsim`` on PATH): real Batsim (``batsim -p P -w W -e OUT/out -s ENDPOINT``) driven
  by :func:`minimal_fcfs`, about 50 lines of Python over ZeroMQ and the standard ``json`` module
  (no gridsched code): FCFS, lowest free host ids first. Timed from the start of both processes to
  the exit of both;
* ``batsim+gridsched``: ``gridsched run --engine batsim --policy fcfs``, real Batsim behind
  gridsched's ZeroMQ server (:mod:`schedulers.batsim.server`), for information;
* ``gridsched@DIR`` (``--compare-root DIR``, repeatable): the ``gridsched`` command of another
  checkout of the project (e.g. the commit before a change), for a before/after in one invocation.

Each measurement runs in a fresh worker process (:func:`bench_engine.run_worker`), which also
reads the peak resident memory of the command's processes (``RUSAGE_CHILDREN``; for the
reference, the larger of Batsim and the scheduler). The ratio is reference median / gridsched
median, both measured in the same invocation. The schedules are checked equal: the embedded
engine's ``out_jobs.csv`` must give the same start time for every job as real Batsim's (6
decimals).

Usage::

    python benchmarks/bench_startup.py                       # 10k jobs, 5 repeats
    python benchmarks/bench_startup.py --jobs 1000 --repeat 3 --batsim /path/to/batsim
    python benchmarks/bench_startup.py --batsim-build "meson release (-O3)" --compare-root DIR
    python benchmarks/bench_startup.py --energy --compare-root DIR   # with -E: startup_energy.json/.md

The reference's time depends on how Batsim was compiled: on the same 2-core machine on
2026-11-24, Batsim 4.2.1 built with meson's ``release`` build type (``-O3``, as Batsim's Nix
package and Docker image are built) took 1.88 s, the same sources built with meson's default
``debug`` type (``-O0``) 5.87 s; the 7-8 s of this benchmark's earlier reports
(the build type not recorded) match the unoptimised build. Say which with ``--batsim-build``.

Results: a table on stdout, ``benchmarks/results/startup.json`` and ``startup.md`` (``--out DIR``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engine import machine_meta, make_workload, resolve_platform, run_worker, write_json_and_md  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

#: The goal: reference time / gridsched time.
GOAL_RATIO = 10.0


# --------------------------------------------------------------------------- the reference scheduler
def minimal_fcfs(endpoint: str) -> None:
    """A minimal FCFS external scheduler for real Batsim 4.x: binds a ZeroMQ REP socket on
    ``endpoint``, starts queue heads on the lowest free host ids while they fit, until
    SIMULATION_ENDS. Only ``zmq`` and ``json``: the kind of scheduler the goal's reference means."""
    import zmq

    sock = zmq.Context().socket(zmq.REP)
    sock.bind(endpoint)
    free: list[int] = []
    queue: list[tuple[str, int]] = []
    head = 0
    hosts_of: dict[str, list[int]] = {}
    while True:
        msg = json.loads(sock.recv())
        now = msg["now"]
        decisions = []
        ended = False
        for ev in msg["events"]:
            kind, data = ev["type"], ev["data"]
            if kind == "SIMULATION_BEGINS":
                free = list(range(data["nb_compute_resources"]))
            elif kind == "JOB_SUBMITTED":
                queue.append((data["job_id"], data["job"]["res"]))
            elif kind == "JOB_COMPLETED":
                free.extend(hosts_of.pop(data["job_id"]))
            elif kind == "SIMULATION_ENDS":
                ended = True
        if head < len(queue) and queue[head][1] <= len(free):
            free.sort()
            while head < len(queue) and queue[head][1] <= len(free):
                jid, res = queue[head]
                head += 1
                hosts, free = free[:res], free[res:]
                hosts_of[jid] = hosts
                decisions.append({"timestamp": now, "type": "EXECUTE_JOB",
                                  "data": {"job_id": jid, "alloc": " ".join(map(str, hosts))}})
        sock.send_string(json.dumps({"now": now, "events": decisions}))
        if ended:
            break
    sock.close(linger=0)


# --------------------------------------------------------------------------- one measurement (worker)
def _env(root: Path = ROOT) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as in any installation
    return env


def measure(what: str, platform: str, workload: str, out: str, batsim: str | None, energy: bool = False) -> dict:
    """Run one command (``what``: ``gridsched``, ``batsim+minimal-fcfs``, ``batsim+gridsched``),
    with ``-E`` when ``energy``, and return its wall time (s) and its processes' peak RSS (MB)."""
    import resource

    env = _env(Path(what.split("@", 1)[1]) if what.startswith("gridsched@") else ROOT)
    if what.startswith("gridsched") or what == "batsim+gridsched":
        cmd = [sys.executable, "-m", "schedulers.cli", "run", "--policy", "fcfs", "-p", platform, "-w", workload,
               "-o", out, "--no-progress", *(["-E"] if energy else [])]
        if what == "batsim+gridsched":
            cmd += ["--engine", "batsim", "--batsim", batsim]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=env["PYTHONPATH"])
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    else:
        from schedulers.batsim.runner import free_tcp_endpoint

        endpoint = free_tcp_endpoint()
        Path(out).mkdir(parents=True)
        t0 = time.perf_counter()
        sched = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--minimal-fcfs", endpoint],
                                 env=env)
        bats = subprocess.run([batsim, "-p", platform, "-w", workload, "-e", str(Path(out) / "out"),
                               "-s", endpoint, *(["-E"] if energy else [])], capture_output=True, text=True)
        rc = sched.wait(timeout=600)
        wall = time.perf_counter() - t0
        if bats.returncode != 0 or rc != 0:
            raise RuntimeError(f"reference failed (batsim {bats.returncode}, scheduler {rc}):\n{bats.stderr[-2000:]}")
    return {"what": what, "wall_s": wall,
            "maxrss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}  # Linux: KiB


def _starts(path: Path) -> dict[str, str]:
    with path.open(newline="") as f:
        return {r["job_id"]: r["starting_time"] for r in csv.DictReader(f)}


# --------------------------------------------------------------------------- reporting
def _summary(rows: list[dict]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for what in dict.fromkeys(r["what"] for r in rows):
        walls = [r["wall_s"] for r in rows if r["what"] == what]
        out[what] = {"median_s": statistics.median(walls), "min_s": min(walls), "max_s": max(walls),
                     "runs": len(walls), "maxrss_mb": max(r["maxrss_mb"] for r in rows if r["what"] == what)}
    return out


def _table(summary: dict[str, dict], jobs: int) -> list[str]:
    ref = summary.get("batsim+minimal-fcfs")
    lines = ["| command | runs | median (s) | min (s) | max (s) | jobs/s (median) | peak RSS (MB) | reference / this |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for what, s in summary.items():
        ratio = "-" if ref is None or what == "batsim+minimal-fcfs" else f"{ref['median_s'] / s['median_s']:.1f}"
        lines.append(f"| {what} | {s['runs']} | {s['median_s']:.2f} | {s['min_s']:.2f} | {s['max_s']:.2f} "
                     f"| {jobs / s['median_s']:,.0f} | {s['maxrss_mb']:.0f} | {ratio} |")
    return lines


def _goal(summary: dict[str, dict]) -> str:
    ref = summary.get("batsim+minimal-fcfs")
    if ref is None:
        return "- no `batsim` executable found: no reference, no ratio (give --batsim PATH)"
    ratio = ref["median_s"] / summary["gridsched"]["median_s"]
    return (f"- real Batsim + minimal FCFS / gridsched run: {ratio:.1f}x (goal >= {GOAL_RATIO:g}x): "
            f"{'met' if ratio >= GOAL_RATIO else 'NOT met'}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=10_000, help="number of jobs (default 10,000)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs of each command (default 5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batsim", help="real Batsim executable (default: `batsim` on PATH)")
    ap.add_argument("--batsim-build", default="not stated",
                    help="how that executable was built, for the report: the reference's speed depends on it "
                         "(a meson 'release' build, -O3, as Batsim's Nix package, runs this benchmark about 3x "
                         "faster than meson's default 'debug' build, -O0)")
    ap.add_argument("--no-gridsched-server", action="store_true",
                    help="skip the batsim+gridsched row (real Batsim behind gridsched's server)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results",
                    help="folder for startup.json and startup.md")
    ap.add_argument("--energy", action="store_true",
                    help="every command with -E (energy); results in startup_energy.json and startup_energy.md")
    ap.add_argument("--compare-root", action="append", default=[], metavar="DIR",
                    help="also time the gridsched command of this checkout (repeatable)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--platform", help=argparse.SUPPRESS)
    ap.add_argument("--workload", help=argparse.SUPPRESS)
    ap.add_argument("--run-out", help=argparse.SUPPRESS)
    ap.add_argument("--minimal-fcfs", metavar="ENDPOINT", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.minimal_fcfs:
        minimal_fcfs(args.minimal_fcfs)
        return 0
    if args.worker:
        print(json.dumps(measure(args.worker, args.platform, args.workload, args.run_out, args.batsim, args.energy)))
        return 0

    batsim = args.batsim or shutil.which("batsim")
    whats = ["gridsched"] + [f"gridsched@{Path(r).resolve()}" for r in args.compare_root]
    if batsim:
        whats.append("batsim+minimal-fcfs")
        if not args.no_gridsched_server:
            whats.append("batsim+gridsched")
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="bench_startup_") as tmp:
        tmpd = Path(tmp)
        plat, note = resolve_platform(tmpd)
        wl = tmpd / f"workload_{args.jobs}.json"
        wl.write_text(json.dumps(make_workload(args.jobs, args.seed)), encoding="utf-8")
        print(f"platform: {note}\nworkload: {wl.stat().st_size / 2**20:.1f} MB, {args.jobs:,} jobs", flush=True)
        k = 0

        def spawn(what: str) -> dict:
            nonlocal k
            k += 1
            cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", what, "--platform", str(plat),
                   "--workload", str(wl), "--run-out", str(tmpd / f"out{k}")]
            if batsim:
                cmd += ["--batsim", batsim]
            if args.energy:
                cmd.append("--energy")
            return run_worker(cmd)

        for what in whats:
            if what.startswith("gridsched"):
                spawn(what)  # untimed: writes the bytecode cache
        for i in range(args.repeat):  # interleaved, so that a change of the machine's load hits all alike
            for what in whats:
                r = spawn(what)
                r["out"] = k
                rows.append(r)
                print(f"  run {i + 1}/{args.repeat}  {what:20s} {r['wall_s']:7.2f} s  peak RSS {r['maxrss_mb']:5.0f} MB",
                      flush=True)
        same = None
        if batsim:
            emb = next(r["out"] for r in rows if r["what"] == "gridsched")
            ref = next(r["out"] for r in rows if r["what"] == "batsim+minimal-fcfs")
            same = _starts(tmpd / f"out{emb}" / "out_jobs.csv") == _starts(tmpd / f"out{ref}" / "out_jobs.csv")
    summary = _summary(rows)
    meta = {**machine_meta(), "platform_note": note, "jobs": args.jobs, "seed": args.seed, "repeat": args.repeat,
            "batsim": batsim, "batsim_build": args.batsim_build, "same_start_times_as_reference": same,
            "workload": (f"{args.jobs:,} single-host delay jobs of 10-100 s, Poisson arrivals of 1 job/s "
                         f"(bench_engine.make_workload, seed {args.seed}), "
                         + ("with energy (-E)" if args.energy else "no energy")),
            "summary": summary}
    lines = [
        "# Start-up benchmark: whole `gridsched run" + (" -E" if args.energy else "") + "` against real Batsim",
        "",
        f"Generated by `benchmarks/bench_startup.py` on {meta['date']} ({meta['python']}, {meta['machine']}).",
        "",
        f"- platform: {note}",
        f"- workload: {meta['workload']}",
        f"- gridsched: `gridsched run --policy fcfs{' -E' if args.energy else ''} --no-progress` (embedded engine), "
        "the whole command "
        "(interpreter start, imports, inputs, simulation, outputs, summary), bytecode cache written beforehand; "
        "gridsched@DIR: the same command of another checkout (before/after)",
        "- reference: real Batsim 4.2.1 (`batsim` executable: "
        f"{batsim or 'not found'}; built as: {args.batsim_build}) driven by `minimal_fcfs` of the benchmark "
        "(raw ZeroMQ + json FCFS); "
        "batsim+gridsched: real Batsim behind `gridsched run --engine batsim --policy fcfs`",
        "- each command run in turn, "
        f"{args.repeat} times; wall clock from start to exit; peak RSS of the command's processes",
        f"- same start time for every job on both engines: {same}",
        "",
        *_table(summary, args.jobs),
        "",
        _goal(summary),
        "",
    ]
    print()
    print("\n".join(lines[-(len(summary) + 5):]))
    js, md = write_json_and_md(args.out, "startup_energy" if args.energy else "startup", meta, rows, lines)
    print(f"wrote {js} and {md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
