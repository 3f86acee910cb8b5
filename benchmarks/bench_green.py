"""Wall time and peak memory of the green heuristic's largest runs: 7,500 jobs, compute sharing, energy.

The case that matters is the 7500-job EASY run with compute sharing and energy. One
configuration is one run of the Nantes reproduction (``campaigns/green_nantes/``; its 7,500-job runs use
``offered_load = 1.2``, this benchmark the generator's default arrival rate), set up as a campaign
worker sets it up: scenario ``green-nantes`` (``job_count`` jobs at ``cpu_load`` %, seed 0,
:mod:`schedulers.inputs.green_scenario`) generated in memory, the embedded engine with
``energy=True, compute_sharing=True`` and the output rows kept in memory (``trace_outputs``, as
``gridsched run`` before writing them; no file written), the policy (``green-easy`` by default,
option ``delta`` %) called in-process.

Every configuration runs in a fresh Python subprocess (:func:`bench_engine.run_worker`), so that
its ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` is that run's peak resident memory (interpreter
and imports included). Timings (``time.perf_counter``, s): ``generate`` = the scenario generator,
``setup`` = ``build_engine`` (platform and workload reading), ``run`` = ``Engine.run``. With
``--tracemalloc`` each configuration runs once more, untimed, under :mod:`tracemalloc` for the
peak of Python allocations.

Usage::

    python benchmarks/bench_green.py                        # green-easy, Δ 0 and 10, loads 100/75/50, 7,500 jobs
    python benchmarks/bench_green.py --policies green-easy,green-heft --deltas 10 --loads 50 --tracemalloc

Results: a table on stdout, ``benchmarks/results/green.json`` and ``green.md`` (``--out DIR``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engine import machine_meta, run_worker, write_json_and_md  # noqa: E402


def run_one(policy: str, jobs: int, load: int, delta: float, use_tracemalloc: bool) -> dict:
    """One configuration in this process (module docstring): timings (s), peak RSS (MB), and a
    fingerprint of the schedule (jobs, makespan s, energy J) to check that it is the campaign's run."""
    import gc
    import resource

    from schedulers.engine import InProcessPort, build_engine
    from schedulers.engine.platform import read_platform
    from schedulers.inputs.generators import generate
    from schedulers.registry import get_policy

    if use_tracemalloc:
        import tracemalloc
        tracemalloc.start()
    t0 = time.perf_counter()
    sc = generate("green-nantes", {"job_count": jobs, "cpu_load": load}, 0)
    platform = sc.platform if sc.platform is not None else read_platform("<green-nantes>", text=sc.platform_xml)
    t1 = time.perf_counter()
    engine = build_engine(platform, list(sc.workloads), energy=True, compute_sharing=True, trace_outputs=True)
    del sc
    gc.collect()
    t2 = time.perf_counter()
    pol = get_policy(policy, {"delta": delta})
    result = engine.run(InProcessPort(pol))
    t3 = time.perf_counter()
    out = {"policy": policy, "jobs": jobs, "cpu_load": load, "delta": delta}
    if use_tracemalloc:
        out["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        return out
    s = result.schedule
    out.update({
        "generate_s": t1 - t0, "setup_s": t2 - t1, "run_s": t3 - t2, "total_s": t3 - t0,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # Linux: KiB
        "messages": result.messages,
        "overlaps": pol.metrics().get("overlaps", 0.0),
        "check": {"nb_jobs_success": s["nb_jobs_success"], "makespan": round(s["makespan"], 6),
                  "consumed_joules": round(s["consumed_joules"], 3)},
    })
    return out


def _spawn(policy: str, jobs: int, load: int, delta: float, use_tracemalloc: bool) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--policies", policy, "--jobs", str(jobs),
           "--loads", str(load), "--deltas", repr(delta)]
    if use_tracemalloc:
        cmd.append("--tracemalloc")
    return run_worker(cmd)


def table(rows: list[dict]) -> list[str]:
    """The Markdown table of the results."""
    out = ["| policy | jobs | load % | Δ % | generate (s) | setup (s) | run (s) | total (s) | peak RSS (MB) "
           "| tracemalloc peak (MB) | overlaps | makespan (s) | energy (J) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        tm = r.get("tracemalloc_peak_mb")
        out.append(f"| {r['policy']} | {r['jobs']:,} | {r['cpu_load']} | {r['delta']:g} | {r['generate_s']:.2f} "
                   f"| {r['setup_s']:.2f} | {r['run_s']:.2f} | {r['total_s']:.2f} | {r['maxrss_mb']:.0f} "
                   f"| {'-' if tm is None else f'{tm:.0f}'} | {r['overlaps']:.0f} | {r['check']['makespan']:,.1f} "
                   f"| {r['check']['consumed_joules']:,.0f} |")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--policies", default="green-easy", help="comma-separated (default green-easy)")
    ap.add_argument("--jobs", type=int, default=7500, help="job count (default 7500, the paper's largest)")
    ap.add_argument("--loads", default="100,75,50", help="CPU loads %% (default 100,75,50)")
    ap.add_argument("--deltas", default="0,10", help="overlap rates Δ %% (default 0,10)")
    ap.add_argument("--tracemalloc", action="store_true", help="also the tracemalloc peak (one more run each)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results", help="folder for green.json/.md")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    policies = [p for p in args.policies.split(",") if p]
    loads = [int(x) for x in args.loads.split(",") if x]
    deltas = [float(x) for x in args.deltas.split(",") if x]
    if args.worker:
        print(json.dumps(run_one(policies[0], args.jobs, loads[0], deltas[0], args.tracemalloc)))
        return 0
    rows = []
    t0 = time.perf_counter()
    for policy in policies:
        for load in loads:
            for delta in deltas:
                r = _spawn(policy, args.jobs, load, delta, False)
                if args.tracemalloc:
                    r["tracemalloc_peak_mb"] = _spawn(policy, args.jobs, load, delta, True)["tracemalloc_peak_mb"]
                rows.append(r)
                print(f"  {policy} {args.jobs:,} jobs load {load} % Δ {delta:g} %: run {r['run_s']:.2f} s, "
                      f"total {r['total_s']:.2f} s, peak RSS {r['maxrss_mb']:.0f} MB", flush=True)
    meta = {**machine_meta(), "wall_s": time.perf_counter() - t0,
            "workload": f"green-nantes, seed 0, {args.jobs} jobs, platforms/g5k_nantes_econome.xml (22 hosts)",
            "engine": "embedded, energy and compute sharing on, output rows in memory"}
    lines = ["# Green heuristic benchmark", "",
             f"Generated by `benchmarks/bench_green.py` on {meta['date']} ({meta['python']}, {meta['machine']}).", "",
             f"- workload: {meta['workload']} (a run of the `green-nantes` scenario, default arrival rate)",
             f"- engine: {meta['engine']}; each configuration in a fresh subprocess; peak RSS = its "
             "`ru_maxrss` (interpreter and imports included); tracemalloc peak from a separate, untimed run",
             "- generate = scenario generator, setup = `build_engine`, run = `Engine.run` (policy in-process)", "",
             *table(rows), ""]
    print("\n".join(table(rows)))
    js, md = write_json_and_md(args.out, "green", meta, rows, lines)
    print(f"\nwrote {js} and {md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
