"""Throughput and memory of the embedded engine with in-process policies (FCFS, EASY).

Workload (generated in memory, seeded, never written to disk): ``N`` single-host jobs with a
``delay`` profile each; delays uniform in [10, 100) s (rounded to the millisecond), Poisson
arrivals of rate 1 job/s (exponential inter-arrival times of mean 1 s, subtimes rounded to the
millisecond), walltime = the delay rounded *up to the next* multiple of 10 s (``10 * (floor(delay
/ 10) + 1)``, so always > delay and no job is killed). About 55 of the 128 hosts are busy on
average: the queue stays short and the run measures the engine plus the policies' per-event cost.

Platform: Batsim's ``energy_platform_homogeneous_no_net_128.xml`` read from ``../shared`` (relative
to the repository root); when absent, an equivalent 128-host platform (same speeds, pstates, power
and sleep pstates) is generated in a temporary directory, and the report says so.

Every configuration (policy x size x energy on/off x output tracing on/off) runs in a fresh Python
subprocess so that ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` is that configuration's peak
resident memory. Timings: ``setup`` = platform + workload reading (``build_engine``), ``run`` =
``Engine.run`` with the policy called in-process (``InProcessPort``); jobs/s = jobs / run time. No
output file is written (``trace_outputs=True`` keeps the output rows in memory, as ``gridsched
run`` does before writing them). With ``--tracemalloc``, each configuration runs a second time,
in another subprocess, under :mod:`tracemalloc` to report the peak of Python allocations (this run
is slower and is not timed).

Replay (``--replay N``; the goal: a 1M-job trace replayed with energy in under 60 s and under
1 GB, energy as fast as a plain run; it was 2 minutes before quiet instants): the same workload of ``N`` jobs written to a JSON file (one ``delay``
profile per job, as a converted trace can have), then the whole command ``gridsched run --policy
fcfs -E --no-progress`` (reading the file, simulating, writing the five output files and the
summary) run in a subprocess of a fresh worker: wall time of the command, engine time (``Engine.run``,
the ``simulation_time`` of ``out_schedule.csv``), the command's CPU time (user + system) and its
peak resident memory (``RUSAGE_CHILDREN`` ``ru_utime``, ``ru_stime`` and ``ru_maxrss`` of the
worker, whose only child is the command).
``--replay-root DIR`` runs the ``gridsched`` of another checkout of the project (e.g. the commit
before a change, for a before/after measured in the same invocation). ``--replay-energy both``
runs each checkout's command without ``-E`` too (``off``: only without), to compare the energy
run with the plain one (results in ``replay_energy.json`` / ``.md``; ``replay_plain`` for ``off``).

Network (``--network``): each configuration runs twice, on the compute-only platform above and on
Batsim's ``cluster_energy_128.xml`` (128 hosts in two clusters with links, from ``../shared``; the
engine then plays Batsim's internal messages on SimGrid's step clock, :mod:`schedulers.engine.steps`),
in the same invocation; the table gives both run times and their ratio (the cost of the network
path). Results in ``network.json`` / ``network.md``.

Usage::

    python benchmarks/bench_engine.py                 # 1k, 10k, 100k jobs, FCFS and EASY
    python benchmarks/bench_engine.py --network --sizes 10000 --trace on   # network path vs compute-only
    python benchmarks/bench_engine.py --quick         # 1k and 10k only
    python benchmarks/bench_engine.py --sizes 1000,10000,100000 --policies fcfs,easy --tracemalloc
    python benchmarks/bench_engine.py --replay 1000000 [--replay-root /path/to/old/checkout]
    python benchmarks/bench_engine.py --replay 1000000 --replay-energy both   # with and without -E

Results: a table on stdout, ``benchmarks/results/engine.json`` and ``engine.md`` (``--out DIR``
to write them elsewhere); with ``--replay``, ``replay.json`` and ``replay.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform as _platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_PLATFORM = ROOT.parent / "shared" / "data" / "batsim-examples" / "energy_platform_homogeneous_no_net_128.xml"
NETWORK_PLATFORM = SHARED_PLATFORM.with_name("cluster_energy_128.xml")
NB_HOSTS = 128

#: The targets, at 100k jobs.
TARGETS = {"fcfs": 20_000.0, "easy": 10_000.0}
TARGET_PEAK_MB = 1024.0

#: The goal for a 1M-job trace replayed with energy: wall time (s) and peak memory (MB).
REPLAY_GOAL_S = 60.0
REPLAY_GOAL_MB = 1024.0

# --------------------------------------------------------------------------- inputs
_SPEEDS = ("100.0Mf, 88.95899053627761Mf, 83.67952522255192Mf, 80.57142857142857Mf, 76.21621621621621Mf, "
           "72.49357326478149Mf, 68.78048780487805Mf, 64.6788990825688Mf, 60.775862068965516Mf, "
           "58.62785862785863Mf, 50.088809946714036Mf, 49.21465968586388Mf, 44.97607655502392Mf, 1e-9Mf, "
           "0.1639344262295082f, 0.006599788806758183f")
_WATTS = ("95.0:95.0:190.738, 95.0:95.0:171.02, 95.0:95.0:165.62, 95.0:95.0:160.47, 95.0:95.0:155.729, "
          "95.0:95.0:151.3, 95.0:95.0:146.92, 95.0:95.0:142.95, 95.0:95.0:138.928, 95.0:95.0:135.368, "
          "95.0:95.0:132.519, 95.0:95.0:128.87, 95.0:95.0:125.88, 9.75:9.75:9.75, "
          "100.99672131147543:100.99672131147543:100.99672131147543, "
          "125.1743848996832:125.1743848996832:125.1743848996832")


def write_fallback_platform(path: Path, nb_hosts: int = NB_HOSTS) -> Path:
    """Write a platform equivalent to Batsim's ``energy_platform_homogeneous_no_net_128.xml``."""
    hosts = "\n".join(
        f'    <host id="host{i}" coordinates="0 0 0" speed="{_SPEEDS}" pstate="0">\n'
        f'      <prop id="wattage_per_state" value="{_WATTS}" />\n'
        f'      <prop id="wattage_off" value="10" />\n'
        f'      <prop id="sleep_pstates" value="13:14:15" />\n'
        f'    </host>' for i in range(nb_hosts))
    path.write_text(
        "<?xml version='1.0'?>\n"
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1">\n<zone id="AS0" routing="Vivaldi">\n'
        '  <host id="master_host" coordinates="0 0 0" speed="100Mf">\n'
        '    <prop id="wattage_per_state" value="100:100:200" />\n'
        '    <prop id="wattage_off" value="10" />\n  </host>\n'
        f"{hosts}\n</zone>\n</platform>\n", encoding="utf-8")
    return path


def resolve_platform(tmpdir: Path) -> tuple[Path, str]:
    """The platform to use and a note saying where it comes from."""
    if SHARED_PLATFORM.is_file():
        return SHARED_PLATFORM, f"Batsim's {SHARED_PLATFORM.name} (../shared)"
    path = write_fallback_platform(tmpdir / "energy_platform_homogeneous_no_net_128_generated.xml")
    return path, (f"{SHARED_PLATFORM} not found: generated an equivalent {NB_HOSTS}-host platform "
                  "(same speeds, pstates, power, sleep pstates) in a temporary directory")


def make_workload(n: int, seed: int = 0) -> dict:
    """The benchmark workload (module docstring) as a Batsim workload dict."""
    rng = random.Random(seed)
    jobs = []
    profiles = {}
    t = 0.0
    for i in range(n):
        t += rng.expovariate(1.0)
        delay = round(rng.uniform(10.0, 100.0), 3)
        walltime = 10.0 * (math.floor(delay / 10.0) + 1)
        name = f"d{i}"
        profiles[name] = {"type": "delay", "delay": delay}
        jobs.append({"id": str(i), "subtime": round(t, 3), "walltime": walltime, "res": 1, "profile": name})
    return {"nb_res": NB_HOSTS, "jobs": jobs, "profiles": profiles}


# --------------------------------------------------------------------------- one configuration
def run_one(platform: str, policy: str, size: int, energy: bool, trace: bool, seed: int,
            use_tracemalloc: bool) -> dict:
    """Run one configuration in this process and measure it."""
    import gc
    import resource

    from schedulers.engine import InProcessPort, build_engine
    from schedulers.registry import get_policy

    wl = make_workload(size, seed)
    gc.collect()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if use_tracemalloc:
        import tracemalloc
        tracemalloc.start()
    t0 = time.perf_counter()
    engine = build_engine(platform, [wl], energy=energy, trace_outputs=trace)
    del wl
    t1 = time.perf_counter()
    result = engine.run(InProcessPort(get_policy(policy)))
    t2 = time.perf_counter()
    out = {"policy": policy, "size": size, "energy": energy, "trace": trace}
    if use_tracemalloc:
        out["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        return out
    s = result.schedule
    out.update({
        "setup_s": t1 - t0,
        "run_s": t2 - t1,
        "jobs_per_s": size / (t2 - t1),
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # Linux: KiB
        "rss_before_mb": rss_before / 1024,
        "messages": result.messages,
        # a fingerprint of the schedule, to check that optimisations change nothing
        "check": {"nb_jobs_success": s["nb_jobs_success"], "makespan": round(s["makespan"], 6),
                  "mean_waiting_time": round(s["mean_waiting_time"], 6),
                  "consumed_joules": round(s["consumed_joules"], 3),
                  "rows": {k: len(v) for k, v in result.rows.items()}},
    })
    return out


def _spawn(platform: Path, policy: str, size: int, energy: bool, trace: bool, seed: int,
           use_tracemalloc: bool) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--platform", str(platform),
           "--policies", policy, "--sizes", str(size), "--seed", str(seed),
           "--energy", "on" if energy else "off", "--trace", "on" if trace else "off"]
    if use_tracemalloc:
        cmd.append("--tracemalloc")
    return run_worker(cmd)


def run_worker(cmd: list[str], echo_stderr: bool = False, timeout: float | None = None) -> dict | None:
    """Run a benchmark's ``--worker`` subprocess (the project on its PYTHONPATH) and return the JSON
    object its last stdout line holds (shared by the benchmarks that measure in fresh processes).
    ``timeout`` (s): the worker is killed when it runs longer, and None is returned.

    Raises:
        RuntimeError: the worker failed (its stderr in the message).
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark worker failed ({' '.join(cmd)}):\n{proc.stderr}")
    if echo_stderr:
        print(proc.stderr, file=sys.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def machine_meta() -> dict:
    """``date``, ``python`` and ``machine`` of a benchmark report."""
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "python": f"Python {_platform.python_version()}",
            "machine": f"{_platform.machine()}, {os.cpu_count()} CPUs"}


def write_json_and_md(out_dir: Path, stem: str, meta: dict, rows: list[dict], lines: list[str]) -> tuple[Path, Path]:
    """``<stem>.json`` (``{"meta", "results"}``) and ``<stem>.md`` (``lines``) in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    js = out_dir / f"{stem}.json"
    js.write_text(json.dumps({"meta": meta, "results": rows}, indent=2) + "\n", encoding="utf-8")
    md = out_dir / f"{stem}.md"
    md.write_text("\n".join(lines), encoding="utf-8")
    return js, md


# --------------------------------------------------------------------------- replay (whole command)
def replay_one(platform: str, workload: str, out: str, root: str, energy: bool = True) -> dict:
    """Run ``gridsched run --policy fcfs [-E]`` of checkout ``root`` on ``workload`` (worker side):
    wall time (s) of the command, its engine time (s, ``simulation_time`` of out_schedule.csv),
    its CPU time (s, user + system: less sensitive than the wall time to other work on a shared
    machine), its peak RSS (MB) and its summary."""
    import csv
    import resource

    env = dict(os.environ)
    env["PYTHONPATH"] = root
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cmd = [sys.executable, "-m", "schedulers.cli", "run", "--policy", "fcfs", "-p", platform, "-w", workload,
           *(["-E"] if energy else []), "-o", out, "--no-progress"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=root)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    with open(Path(out) / "out_schedule.csv", newline="") as f:
        sched = next(csv.DictReader(f))
    summary = json.loads((Path(out) / "summary.json").read_text())
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"root": root, "energy": energy, "wall_s": wall, "engine_s": float(sched["simulation_time"]),
            "cpu_s": ru.ru_utime + ru.ru_stime, "maxrss_mb": ru.ru_maxrss / 1024,  # Linux: KiB
            "jobs": summary["jobs"], "makespan": summary["makespan"], "energy_joules": summary.get("energy_joules")}


def replay(args: argparse.Namespace) -> int:
    """``--replay N``: write the workload, measure each checkout's whole command, write the report."""
    roots = [str(ROOT)] + [str(Path(r).resolve()) for r in args.replay_root]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_replay_") as tmp:
        tmpd = Path(tmp)
        plat, note = resolve_platform(tmpd)
        wl = tmpd / "workload.json"
        wl.write_text(json.dumps(make_workload(args.replay, args.seed)), encoding="utf-8")
        size_mb = wl.stat().st_size / 2**20
        print(f"platform: {note}\nworkload: {args.replay:,} jobs, {size_mb:.0f} MB", flush=True)
        energies = {"on": ["on"], "off": ["off"], "both": ["on", "off"]}[args.replay_energy]
        for k, root in enumerate(roots):
            for e in energies:
                cmd = [sys.executable, str(Path(__file__).resolve()), "--replay-worker", "--platform", str(plat),
                       "--replay-workload", str(wl), "--replay-out", str(tmpd / f"out{k}{e}"), "--replay-root", root,
                       "--energy", e]
                r = run_worker(cmd)
                r["checkout"] = "this" if k == 0 else root
                rows.append(r)
                print(f"  {r['checkout']} (energy {e}): {r['wall_s']:.1f} s (engine {r['engine_s']:.1f} s, CPU "
                      f"{r['cpu_s']:.1f} s), peak RSS {r['maxrss_mb']:.0f} MB", flush=True)
    meta = {**machine_meta(), "platform_note": note, "jobs": args.replay, "seed": args.seed,
            "workload": (f"{args.replay:,} single-host `delay` jobs, one profile each, delays uniform in [10, 100) s, "
                         f"Poisson arrivals of 1 job/s, walltime = delay rounded up to the next 10 s, seed "
                         f"{args.seed}; a {size_mb:.0f} MB JSON file")}
    lines = ["# Replay benchmark: a large trace through `gridsched run`" + (" with energy" if args.replay_energy == "on"
                                                                           else ""), "",
             f"Generated by `benchmarks/bench_engine.py --replay` on {meta['date']} ({meta['python']}, "
             f"{meta['machine']}).", "",
             f"- platform: {note}", f"- workload: {meta['workload']}",
             "- command: `gridsched run --policy fcfs [-E] --no-progress` (read the file, simulate, write the "
             "output files and summary.json); wall = the whole command; engine = `Engine.run` "
             "(`simulation_time` of out_schedule.csv); CPU = the command's user + system time; peak RSS = the "
             "command's `ru_maxrss`",
             f"- goal (with energy): under {REPLAY_GOAL_S:.0f} s and under {REPLAY_GOAL_MB:.0f} MB", "",
             "| checkout | jobs | energy | wall (s) | engine (s) | CPU (s) | peak RSS (MB) | bytes per job | goal |",
             "|---|---:|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        ok = r["wall_s"] < REPLAY_GOAL_S and r["maxrss_mb"] < REPLAY_GOAL_MB
        goal = ("met" if ok else "NOT met") if r.get("energy", True) else "-"
        lines.append(f"| {r['checkout']} | {r['jobs']:,} | {'-E' if r.get('energy', True) else 'off'} "
                     f"| {r['wall_s']:.1f} | {r['engine_s']:.1f} | {r['cpu_s']:.1f} "
                     f"| {r['maxrss_mb']:.0f} | {r['maxrss_mb'] * 2**20 / r['jobs']:,.0f} | {goal} |")
    lines.append("")
    print("\n".join(lines[-(len(rows) + 3):]))
    stem = {"on": "replay", "both": "replay_energy", "off": "replay_plain"}[args.replay_energy]
    js, md = write_json_and_md(args.out, stem, meta, rows, lines)
    print(f"wrote {js} and {md}")
    return 0


# --------------------------------------------------------------------------- reporting
def _fmt_table(rows: list[dict]) -> list[str]:
    head = ("| policy | jobs | energy | trace | setup (s) | run (s) | jobs/s | jobs/s incl. setup "
            "| peak RSS (MB) | tracemalloc peak (MB) | messages |")
    out = [head, "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        tm = r.get("tracemalloc_peak_mb")
        out.append(f"| {r['policy']} | {r['size']:,} | {'on' if r['energy'] else 'off'} "
                   f"| {'on' if r['trace'] else 'off'} | {r['setup_s']:.2f} | {r['run_s']:.2f} "
                   f"| {r['jobs_per_s']:,.0f} | {r['size'] / (r['setup_s'] + r['run_s']):,.0f} "
                   f"| {r['maxrss_mb']:.0f} "
                   f"| {'-' if tm is None else f'{tm:.0f}'} | {r['messages']:,} |")
    return out


def _targets(rows: list[dict]) -> list[str]:
    out = []
    for r in rows:
        if r["size"] != 100_000 or r["policy"] not in TARGETS:
            continue
        ok = r["jobs_per_s"] >= TARGETS[r["policy"]] and r["maxrss_mb"] < TARGET_PEAK_MB
        out.append(f"- {r['policy']}, energy {'on' if r['energy'] else 'off'}, trace "
                   f"{'on' if r['trace'] else 'off'}: {r['jobs_per_s']:,.0f} jobs/s "
                   f"(target {TARGETS[r['policy']]:,.0f}), {r['maxrss_mb']:.0f} MB "
                   f"(target < {TARGET_PEAK_MB:.0f}): {'met' if ok else 'NOT met'}")
    return out


def write_reports(out_dir: Path, meta: dict, rows: list[dict]) -> tuple[Path, Path]:
    lines = [
        "# Embedded engine benchmark",
        "",
        f"Generated by `benchmarks/bench_engine.py` on {meta['date']} ({meta['python']}, {meta['machine']}).",
        "",
        f"- platform: {meta['platform_note']}",
        f"- workload: {meta['workload']}",
        "- run: `Engine.run` with the policy called in-process; setup = `build_engine` (platform + "
        "workload reading, from an in-memory workload dict); jobs/s = jobs / run time (the targets "
        "apply to it); peak RSS = `ru_maxrss` of a fresh subprocess per configuration "
        "(interpreter and imports included); tracemalloc peak measured in a separate, "
        "untimed subprocess. No output file written; trace = `trace_outputs` (output rows kept in "
        "memory, as `gridsched run` does).",
        "- targets at 100k jobs: FCFS >= 20,000 jobs/s, EASY >= 10,000 jobs/s, peak < 1 GB. "
        "Reference: real Batsim 4.2.1 with a minimal Python FCFS does about 1,400-1,600 jobs/s on "
        "the development machine.",
        "",
        *_fmt_table(rows),
        "",
    ]
    tg = _targets(rows)
    if tg:
        lines += ["Targets (100k jobs):", "", *tg, ""]
    return write_json_and_md(out_dir, "engine", meta, rows, lines)


# --------------------------------------------------------------------------- CLI
def network(args: argparse.Namespace, sizes: list[int], policies: list[str]) -> int:
    """``--network``: every configuration on the compute-only platform and on Batsim's
    ``cluster_energy_128.xml`` (module docstring); the run-time ratio of the two."""
    if not NETWORK_PLATFORM.is_file() or not SHARED_PLATFORM.is_file():
        print(f"--network needs {NETWORK_PLATFORM} and {SHARED_PLATFORM} (../shared): not found", file=sys.stderr)
        return 2
    rows = []
    lines = ["| policy | jobs | energy | trace | compute-only run (s) | network run (s) | network / compute-only "
             "| messages (network) |", "|---|---:|---|---|---:|---:|---:|---:|"]
    for size, policy, energy, trace in _configs(args, sizes, policies):
        flat = _spawn(SHARED_PLATFORM, policy, size, energy, trace, args.seed, False)
        net = _spawn(NETWORK_PLATFORM, policy, size, energy, trace, args.seed, False)
        rows.append({"policy": policy, "size": size, "energy": energy, "trace": trace,
                     "compute_only": flat, "network": net})
        ratio = net["run_s"] / flat["run_s"]
        lines.append(f"| {policy} | {size:,} | {'on' if energy else 'off'} | {'on' if trace else 'off'} "
                     f"| {flat['run_s']:.2f} | {net['run_s']:.2f} | {ratio:.2f} | {net['messages']:,} |")
        print(lines[-1], flush=True)
    meta = {**machine_meta(), "platforms": [SHARED_PLATFORM.name, NETWORK_PLATFORM.name], "seed": args.seed,
            "workload": "as bench_engine.py's (single-host delay jobs, Poisson arrivals of 1 job/s)"}
    head = ["# Engine on a platform with a network", "",
            f"Generated by `benchmarks/bench_engine.py --network` on {meta['date']} ({meta['python']}, "
            f"{meta['machine']}): the same workload on `{SHARED_PLATFORM.name}` (compute-only) and on "
            f"`{NETWORK_PLATFORM.name}` (links: Batsim's messages on SimGrid's step clock); run = `Engine.run`.", ""]
    js, md = write_json_and_md(args.out, "network", meta, rows, head + lines + [""])
    print(f"\nwrote {js} and {md}")
    return 0


def _on_off(v: str) -> list[bool]:
    return {"on": [True], "off": [False], "both": [False, True]}[v]


def _configs(args: argparse.Namespace, sizes: list[int], policies: list[str]):
    """The configurations to run, in the table's order: ``(size, policy, energy, trace)``."""
    for size in sizes:
        for policy in policies:
            for energy in _on_off(args.energy):
                for trace in _on_off(args.trace):
                    yield size, policy, energy, trace


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000", help="comma-separated job counts")
    ap.add_argument("--policies", default="fcfs,easy", help="comma-separated policy names")
    ap.add_argument("--quick", action="store_true", help="1k and 10k jobs only")
    ap.add_argument("--energy", choices=("on", "off", "both"), default="both", help="energy model (-E)")
    ap.add_argument("--trace", choices=("on", "off", "both"), default="both",
                    help="trace_outputs (keep the output rows in memory)")
    ap.add_argument("--tracemalloc", action="store_true",
                    help="also measure the tracemalloc peak (one more, untimed, subprocess per configuration)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results",
                    help="folder for engine.json and engine.md")
    ap.add_argument("--replay", type=int, metavar="N",
                    help="instead: replay N jobs from a JSON file through `gridsched run -E` (replay.json/.md)")
    ap.add_argument("--replay-energy", choices=("on", "off", "both"), default="on",
                    help="with --replay: run with -E (on, the default), without, or both (to compare them)")
    ap.add_argument("--replay-root", action="append", default=[], metavar="DIR",
                    help="with --replay: also measure the gridsched of this checkout (repeatable)")
    ap.add_argument("--network", action="store_true",
                    help="also run every configuration on Batsim's cluster_energy_128.xml (network.json/.md)")
    ap.add_argument("--platform", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--replay-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--replay-workload", help=argparse.SUPPRESS)
    ap.add_argument("--replay-out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.replay_worker:
        print(json.dumps(replay_one(str(args.platform), args.replay_workload, args.replay_out, args.replay_root[0],
                                    args.energy != "off")))
        return 0
    if args.replay:
        return replay(args)

    sizes = [1000, 10000] if args.quick else [int(s.replace("_", "")) for s in args.sizes.split(",") if s]
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]

    if args.worker:
        res = run_one(str(args.platform), policies[0], sizes[0], args.energy == "on", args.trace == "on",
                      args.seed, args.tracemalloc)
        print(json.dumps(res))
        return 0

    if args.network:
        return network(args, sizes, policies)

    from schedulers.registry import POLICIES
    unknown = [p for p in policies if p not in POLICIES]
    if unknown:
        ap.error(f"unknown policies {unknown}; known: {sorted(POLICIES)}")

    with tempfile.TemporaryDirectory(prefix="bench_engine_") as tmp:
        plat, note = resolve_platform(Path(tmp))
        print(f"platform: {note}", flush=True)
        rows = []
        for size, policy, energy, trace in _configs(args, sizes, policies):
            r = _spawn(plat, policy, size, energy, trace, args.seed, False)
            if args.tracemalloc:
                r["tracemalloc_peak_mb"] = _spawn(plat, policy, size, energy, trace, args.seed,
                                                  True)["tracemalloc_peak_mb"]
            rows.append(r)
            print(f"  {policy:5s} {size:>7,} jobs  energy={'on ' if energy else 'off'} "
                  f"trace={'on ' if trace else 'off'}  run {r['run_s']:7.2f} s  "
                  f"{r['jobs_per_s']:>9,.0f} jobs/s  peak RSS {r['maxrss_mb']:6.0f} MB", flush=True)
    meta = {
        **machine_meta(),
        "platform_note": note,
        "workload": ("single-host `delay` jobs, delays uniform in [10, 100) s, Poisson arrivals of "
                     "1 job/s, walltime = delay rounded up to the next multiple of 10 s, seed "
                     f"{args.seed}"),
        "seed": args.seed,
    }
    print()
    print("\n".join(_fmt_table(rows)))
    tg = _targets(rows)
    if tg:
        print("\n".join(["", "Targets (100k jobs):", *tg]))
    js, md = write_reports(args.out, meta, rows)
    print(f"\nwrote {js} and {md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
