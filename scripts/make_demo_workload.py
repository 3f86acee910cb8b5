#!/usr/bin/env python3
"""Generate workloads/demo_nantes.json, the small seeded demo workload for the Nantes econome platform.

    python scripts/make_demo_workload.py            # writes workloads/demo_nantes.json
    python scripts/make_demo_workload.py --check    # exit 1 if the shipped file differs
    python scripts/make_demo_workload.py --seed 7 --jobs 200 --output /tmp/w.json

The workload (defaults): 60 jobs submitted as a Poisson process over about one hour (mean
inter-arrival time = duration / jobs = 60 s), each asking for 1 to 8 hosts of the 22 of
platforms/g5k_nantes_econome.xml. Runtimes are log-uniform in [60, 900] s. Most jobs are ``delay``
profiles (the hosts stay idle: think I/O- or wait-bound jobs); about one in six is a
``parallel_homogeneous`` computation whose per-host flops are sized from the platform's per-core
speed (12.9625 GFlops on econome, read from the XML) so that it lasts its runtime there: each
allocated host runs one part on one core. Walltimes (requested times) are 1.2 to 2 times the
runtime rounded up to the minute, as users over-estimate; a few jobs under-estimate (walltime 50 to
85 % of the runtime) and are killed at their walltime (``COMPLETED_WALLTIME_REACHED``). Each job
carries a ``user`` field (u1..u4, u1 the most active), which Batsim forwards to the scheduler.

Only Python's own ``random.Random(seed)`` is used, so the file is the same on every machine. The
result is checked with ``schedulers.inputs.validate.validate_workload`` and the engine's loader
before it is written.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_PLATFORM = REPO / "platforms" / "g5k_nantes_econome.xml"
DEFAULT_OUTPUT = REPO / "workloads" / "demo_nantes.json"

#: Requested hosts and their weights (small jobs are the most common, as in real traces).
RES_CHOICES = (1, 2, 3, 4, 6, 8)
RES_WEIGHTS = (20, 15, 10, 20, 15, 20)
USERS = ("u1", "u2", "u3", "u4")
USER_WEIGHTS = (4, 3, 2, 1)


def core_speed(platform: Path) -> tuple[float, int]:
    """(slowest per-core speed at pstate 0 in flops/s, number of compute hosts) of a platform."""
    from schedulers.engine.platform import read_platform

    spec = read_platform(platform)
    return min(h.speeds[h.pstate] for h in spec.compute), len(spec.compute)


def generate(seed: int, nb_jobs: int, duration: float, speed: float, nb_hosts: int,
             min_runtime: float = 60.0, max_runtime: float = 900.0, compute_share: float = 1 / 6,
             underestimated: int = 5) -> dict[str, Any]:
    """Build the workload dict (see the module docstring for the model).

    Args:
        seed: seed of ``random.Random``.
        nb_jobs: number of jobs.
        duration: submission window (s); arrivals are Poisson with rate ``nb_jobs / duration``.
        speed: flops/s of one core, used to size ``parallel_homogeneous`` profiles.
        nb_hosts: compute hosts of the platform (``nb_res``; ``res`` is capped to it).
        min_runtime, max_runtime: bounds of the log-uniform runtimes (s).
        compute_share: fraction of jobs that compute (``parallel_homogeneous``).
        underestimated: number of jobs whose walltime is below their runtime.
    """
    rng = random.Random(seed)
    nb_compute = round(nb_jobs * compute_share)
    compute_ids = set(rng.sample(range(nb_jobs), nb_compute))
    short_ids = set(rng.sample(range(nb_jobs), min(underestimated, nb_jobs)))
    jobs: list[dict[str, Any]] = []
    profiles: dict[str, dict[str, Any]] = {}
    t = 0.0
    for i in range(nb_jobs):
        if i:
            t += rng.expovariate(nb_jobs / duration)
        res = min(rng.choices(RES_CHOICES, RES_WEIGHTS)[0], nb_hosts)
        runtime = round(math.exp(rng.uniform(math.log(min_runtime), math.log(max_runtime))))
        if i in short_ids:
            walltime = round(runtime * rng.uniform(0.50, 0.85))
        else:
            walltime = 60 * math.ceil(runtime * rng.uniform(1.2, 2.0) / 60)
        user = rng.choices(USERS, USER_WEIGHTS)[0]
        if i in compute_ids:
            name = f"phomog_{runtime}s"
            profiles[name] = {"type": "parallel_homogeneous", "cpu": runtime * speed, "com": 0}
        else:
            name = f"delay_{runtime}s"
            profiles[name] = {"type": "delay", "delay": runtime}
        jobs.append({"id": i, "subtime": round(t, 1), "res": res, "walltime": walltime,
                     "profile": name, "user": user})
    return {
        "description": (f"gridsched demo workload: {nb_jobs} jobs, Poisson arrivals over ~{duration:g} s, "
                        f"1-{max(RES_CHOICES)} hosts, runtimes {min_runtime:g}-{max_runtime:g} s, "
                        f"{nb_compute} parallel_homogeneous jobs sized for {speed / 1e9:g} GFlops per core, "
                        f"{len(short_ids)} under-estimated walltimes"),
        "generator": {"script": "scripts/make_demo_workload.py", "seed": seed, "jobs": nb_jobs,
                      "duration": duration, "core_speed_flops": speed},
        "nb_res": nb_hosts,
        "jobs": jobs,
        "profiles": dict(sorted(profiles.items())),
    }


def write(data: dict[str, Any], target: Path, nb_hosts: int) -> None:
    """Validate ``data`` (schema, references, engine loader) and write it as indented JSON."""
    from schedulers.engine.workload import load_workload
    from schedulers.inputs.validate import validate_workload

    validate_workload(data, str(target))
    load_workload(target, "w0", nb_hosts, data=data)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=20240601, help="random seed (default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=60, help="number of jobs (default: %(default)s)")
    parser.add_argument("--duration", type=float, default=3600.0,
                        help="submission window in seconds (default: %(default)s)")
    parser.add_argument("--platform", type=Path, default=DEFAULT_PLATFORM,
                        help="platform whose host count and core speed size the jobs (default: %(default)s)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="workload file (default: %(default)s)")
    parser.add_argument("--check", action="store_true",
                        help="regenerate into a temporary file and compare with --output instead of writing")
    args = parser.parse_args(argv)
    if args.jobs < 1 or args.duration <= 0:
        parser.error("--jobs must be >= 1 and --duration > 0")
    speed, nb_hosts = core_speed(args.platform)
    data = generate(args.seed, args.jobs, args.duration, speed, nb_hosts)
    if not args.check:
        write(data, args.output, nb_hosts)
        print(f"wrote {args.output}: {data['description']}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / args.output.name
        write(data, fresh, nb_hosts)
        same = args.output.is_file() and fresh.read_bytes() == args.output.read_bytes()
    print(f"{'ok' if same else 'DIFFERS'} {args.output}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
