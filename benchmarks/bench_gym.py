"""Speed of the Gymnasium environment (``schedulers.gym``): steps per second, and its overhead over
the same policy run in-process.

Inputs: ``benchmarks/bench_engine.py``'s workload (``make_workload``: ``--jobs`` one-host
``delay`` jobs, Poisson arrivals about one per second, walltimes given) on its 128-host platform
(Batsim's ``energy_platform_homogeneous_no_net_128.xml`` from ``../shared``, or the equivalent file
it writes when that is absent).

Measured, each ``--repeats`` times, interleaved, median kept (the machine is shared: only ratios
within one invocation mean something):

* ``simulate``: :func:`schedulers.engine.simulate` with the FCFS policy, no output files;
* ``env fcfs``: one episode of ``BatsimEnv`` driven by the FCFS rule (start the head of the queue if
  it fits, else wait), which makes the same decisions (``tests/test_gym.py`` checks the files);
* ``env random``: one episode with a random agent among the valid actions (seeded).

Each with energy off, and with ``--energy both`` also on (Batsim's ``-E``: the engine's actor
model). Reported: wall time (s), the episode's steps, steps per second, and the episode's wall
time over ``simulate``'s (the cost of the environment: the hand-over between the engine's thread
and the caller, observations, masks and rewards at each step).

Usage::

    python benchmarks/bench_gym.py                         # 10,000 jobs, the results file
    python benchmarks/bench_gym.py --jobs 300 --repeats 1 --out /tmp/g   # a quick check

Results: a Markdown table on stdout, ``gym.json`` and ``gym.md`` in ``--out`` (default
``benchmarks/results``), with the machine and the date.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform as _platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from schedulers.engine import simulate  # noqa: E402
from schedulers.gym import BatsimEnv  # noqa: E402
from schedulers.registry import get_policy  # noqa: E402


def _bench_engine():
    spec = importlib.util.spec_from_file_location("bench_engine", ROOT / "benchmarks" / "bench_engine.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_simulate(platform: Path, workload: dict, energy: bool) -> dict:
    t0 = time.perf_counter()
    result = simulate(platform, [workload], get_policy("fcfs"), energy=energy)
    return {"wall_s": time.perf_counter() - t0, "steps": None, "end_time": result.end_time}


def run_env(platform: Path, workload: dict, energy: bool, agent: str) -> dict:
    env = BatsimEnv(platform, workload, energy=energy)
    wait = env.layout.wait
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    obs, info = env.reset(seed=0)
    steps = 0
    while True:
        mask = info["action_mask"]
        if agent == "fcfs":
            action = 0 if mask[0] else wait
        else:
            action = int(rng.choice(np.flatnonzero(mask)))
        obs, _, term, trunc, info = env.step(action)
        steps += 1
        if term or trunc:
            break
    wall = time.perf_counter() - t0
    env.close()
    return {"wall_s": wall, "steps": steps, "end_time": env.result.end_time}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--energy", choices=("off", "both"), default="both")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = ap.parse_args(argv)

    be = _bench_engine()
    workload = be.make_workload(args.jobs, seed=0)
    tmp = Path(tempfile.mkdtemp(prefix="bench_gym_"))
    platform = be.SHARED_PLATFORM if be.SHARED_PLATFORM.is_file() else be.write_fallback_platform(tmp / "p.xml")
    cases = [("simulate", None), ("env fcfs", "fcfs"), ("env random", "random")]
    rows = []
    for energy in ([False, True] if args.energy == "both" else [False]):
        runs: dict[str, list[dict]] = {name: [] for name, _ in cases}
        for _ in range(args.repeats):   # interleaved
            for name, agent in cases:
                runs[name].append(run_simulate(platform, workload, energy) if agent is None
                                  else run_env(platform, workload, energy, agent))
        base = statistics.median(r["wall_s"] for r in runs["simulate"])
        for name, _ in cases:
            wall = statistics.median(r["wall_s"] for r in runs[name])
            steps = runs[name][0]["steps"]
            rows.append({"case": name, "energy": energy, "jobs": args.jobs, "wall_s": round(wall, 4),
                         "steps": steps, "steps_per_s": round(steps / wall, 1) if steps else None,
                         "ratio_to_simulate": round(wall / base, 3),
                         "end_time": runs[name][0]["end_time"]})
    # the FCFS rule's episode is FCFS's run: same simulated end
    for energy in {r["energy"] for r in rows}:
        ends = {r["case"]: r["end_time"] for r in rows if r["energy"] == energy}
        assert ends["env fcfs"] == ends["simulate"], ends

    machine = {"python": _platform.python_version(), "machine": _platform.machine(),
               "processor": _platform.processor() or _platform.machine(), "cpus": os.cpu_count(),
               "date": time.strftime("%Y-%m-%d %H:%M:%S"), "platform": platform.name}
    lines = ["# Gymnasium environment benchmark", "",
             f"Generated by `benchmarks/bench_gym.py --jobs {args.jobs} --repeats {args.repeats}` on "
             f"{machine['date']} (Python {machine['python']}, {machine['machine']}, {machine['cpus']} CPUs, shared "
             f"with other work: compare ratios, not absolute times); platform {platform.name}, "
             f"{args.jobs} one-host delay jobs (bench_engine.make_workload, seed 0); median of {args.repeats}.", "",
             "| case | energy | wall (s) | steps | steps/s | wall / simulate |", "|---|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['case']} | {'on' if r['energy'] else 'off'} | {r['wall_s']:.3f} | "
                     f"{r['steps'] if r['steps'] is not None else '-'} | "
                     f"{r['steps_per_s'] if r['steps_per_s'] is not None else '-'} | {r['ratio_to_simulate']:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gym.json").write_text(json.dumps({"machine": machine, "rows": rows}, indent=1) + "\n")
    (args.out / "gym.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
