"""Cost of compute sharing (``--enable-compute-sharing``) in the embedded engine.

Workload (in memory, seeded): ``N`` jobs of 1-4 hosts with ``parallel_homogeneous`` profiles of
1e9-1e10 flops per host (10-100 s at the 100 Mf/s of the benchmark platform), Poisson arrivals
of rate 1 job/s, no walltime. Platform: as :mod:`bench_engine` (128 hosts, Batsim's
``energy_platform_homogeneous_no_net_128.xml`` or its generated twin). Three runs, energy on:

* ``easy``: EASY backfilling without compute sharing;
* ``easy+sharing``: the same with compute sharing on — EASY never shares a host, so the
  schedule is the same and the time should be too (the engine re-solves only the tasks linked
  to a host whose load changed);
* ``packed+sharing`` (the first ``--heavy-jobs`` jobs of the same workload): a policy that starts
  every job at once on the least-loaded hosts among the first 16, an overload where tens to
  hundreds of tasks share each host and multi-host tasks link all 16 hosts into one component:
  SimGrid's fair-bottleneck system over the whole component is solved on every start and end,
  so the cost per event grows with the number of tasks in flight.

Usage: ``python benchmarks/bench_sharing.py [--jobs 10000] [--heavy-jobs 500]``. Results: a table on stdout and
``benchmarks/results/sharing.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform as _platform
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engine import NB_HOSTS, resolve_platform  # noqa: E402
from procset import ProcSet  # noqa: E402

from schedulers.core.policy import Policy  # noqa: E402
from schedulers.engine import InProcessPort, build_engine  # noqa: E402
from schedulers.registry import get_policy  # noqa: E402


def make_workload(n: int, seed: int = 0) -> dict:
    rng = random.Random(seed)
    jobs, profiles, t = [], {}, 0.0
    for i in range(n):
        t += rng.expovariate(1.0)
        profiles[f"p{i}"] = {"type": "parallel_homogeneous", "cpu": float(rng.randint(10, 100)) * 1e8, "com": 0}
        jobs.append({"id": str(i), "subtime": round(t, 3), "walltime": -1, "res": rng.randint(1, 4),
                     "profile": f"p{i}"})
    return {"nb_res": NB_HOSTS, "jobs": jobs, "profiles": profiles}


class Packed(Policy):
    """Starts each job at once on the ``res`` least-loaded of the first 16 hosts (sharing)."""

    name = "packed"

    def __init__(self):
        super().__init__()
        self.load = [0] * 16
        self.where = {}

    def on_job_submitted(self, job):
        hosts = sorted(range(16), key=lambda h: (self.load[h], h))[:job.res]
        for h in hosts:
            self.load[h] += 1
        self.where[job.id] = hosts
        self.execute(job, ProcSet(*hosts))

    def on_job_completed(self, job):
        for h in self.where.pop(job.id):
            self.load[h] -= 1


def run(platform: Path, work: dict, policy, sharing: bool) -> dict:
    engine = build_engine(platform, [work], energy=True, compute_sharing=sharing, trace_outputs=False)
    t0 = time.perf_counter()
    result = engine.run(InProcessPort(policy))
    wall = time.perf_counter() - t0
    return {"seconds": round(wall, 3), "jobs_per_s": round(len(result.jobs) / wall, 1),
            "makespan": round(result.makespan, 6), "messages": result.messages}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--heavy-jobs", type=int, default=500)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        platform, origin = resolve_platform(Path(tmp))
        work = make_workload(args.jobs)
        rows = {
            "easy": run(platform, work, get_policy("easy"), False),
            "easy+sharing": run(platform, work, get_policy("easy"), True),
            "packed+sharing": run(platform, make_workload(args.heavy_jobs), Packed(), True),
        }
    meta = {"date": time.strftime("%Y-%m-%d"), "machine": f"{_platform.machine()}, {os.cpu_count()} cores, "
            f"Python {_platform.python_version()}", "jobs": args.jobs, "heavy_jobs": args.heavy_jobs,
            "platform": origin}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sharing.json").write_text(json.dumps({"meta": meta, "runs": rows}, indent=2) + "\n")
    print(f"{args.jobs} jobs ({args.heavy_jobs} for packed), {meta['machine']}, {meta['date']}")
    for name, r in rows.items():
        print(f"  {name:16s} {r['seconds']:8.3f} s  {r['jobs_per_s']:9.1f} jobs/s  makespan {r['makespan']:.3f} s"
              f"  {r['messages']} messages")
    same = rows["easy"]["makespan"] == rows["easy+sharing"]["makespan"]
    print(f"  EASY schedule unchanged by sharing: {same}; sharing slowdown for EASY: "
          f"{rows['easy+sharing']['seconds'] / rows['easy']['seconds']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
