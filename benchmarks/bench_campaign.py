"""Campaign throughput: runs per second, and the cost per run of the campaign machinery.

Two campaigns of the ``synthetic`` generator with FCFS and EASY:

* ``tiny``: 1,000 runs of 40 jobs on 8 hosts (the size of the HOSEP monograph's test cases);
* ``large``: 20 runs of 10,000 jobs on 128 hosts.

Each is run three ways: a plain loop calling :func:`schedulers.engine.simulate` (generation
included, no summary, no file: the reference), ``gridsched campaign run --serial`` (one process:
the summary, the atomic result files), and ``gridsched campaign run`` on a 2-worker LocalCluster
(cluster start included). The overhead per run is (campaign time - plain loop time) / runs, on
one core; the LocalCluster line shows what two cores give. The estimate for the HOSEP-sized
campaign (12 cases x 2 policies x 1,000 seeds = 24,000 runs) is 24,000 / (LocalCluster runs/s).

``--hosep-seeds 1000`` also runs a campaign of the HOSEP monograph's size for real: 12 cases x 2
policies x 1,000 seeds = 24,000 runs of the ``hosep`` generator (40 tasks on 12 hosts).

Usage: ``python benchmarks/bench_campaign.py [--tiny N] [--large N] [--workers 2] [--hosep-seeds N]``; results are
printed and written to ``benchmarks/results/campaign.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from schedulers.campaign.runner import run_campaign  # noqa: E402
from schedulers.campaign.spec import load_campaign  # noqa: E402
from schedulers.engine import read_platform, simulate  # noqa: E402
from schedulers.inputs.generators import generate  # noqa: E402
from schedulers.registry import get_policy  # noqa: E402

CAMPAIGN = """
name = "{name}"
seeds = {seeds}
energy = true
[[policy]]
name = "fcfs"
[[policy]]
name = "easy"
[[scenario]]
name = "s"
generator = "synthetic"
params = {{ jobs = {jobs}, hosts = {hosts}, max_res = {max_res} }}
"""


def plain_loop(camp) -> float:
    t0 = time.perf_counter()
    for r in camp.runs():
        sc = generate(r.scenario["generator"], r.scenario["params"], r.seed)
        simulate(read_platform("<bench>", text=sc.platform_xml), sc.workloads, get_policy(r.policy_name),
                 energy=r.engine["energy"])
    return time.perf_counter() - t0


def measure(name: str, runs: int, jobs: int, hosts: int, max_res: int, workers: int, tmp: Path) -> dict:
    f = tmp / f"{name}.toml"
    f.write_text(CAMPAIGN.format(name=name, seeds=runs // 2, jobs=jobs, hosts=hosts, max_res=max_res))
    camp = load_campaign(f)
    n = len(camp.runs())
    loop = plain_loop(camp)
    t0 = time.perf_counter()
    run_campaign(camp, tmp / f"{name}-serial", serial=True, progress=False)
    serial = time.perf_counter() - t0
    t0 = time.perf_counter()
    st = run_campaign(camp, tmp / f"{name}-dask", workers=workers, progress=False)
    dask = time.perf_counter() - t0
    assert st.failed == 0 and len(st.status.done) == n
    row = {"campaign": name, "runs": n, "jobs_per_run": jobs, "hosts": hosts,
           "plain_loop_s": round(loop, 2), "serial_s": round(serial, 2), f"localcluster_{workers}_workers_s": round(dask, 2),
           "plain_loop_runs_per_s": round(n / loop, 1), "serial_runs_per_s": round(n / serial, 1),
           "localcluster_runs_per_s": round(n / dask, 1),
           "overhead_per_run_ms": round(1000 * (serial - loop) / n, 2)}
    print(json.dumps(row), flush=True)
    return row


HOSEP_SIZED = """
name = "hosep-sized"
seeds = {seeds}
[[policy]]
name = "fcfs"
[[policy]]
name = "easy"
[[scenario]]
name = "hosep"
generator = "hosep"
[axes]
late = ["user1", "user4"]
demand = ["small", "medium", "large"]
large_max_minutes = [240, 420]
"""


def hosep_sized(seeds: int, workers: int, tmp: Path) -> dict:
    """The HOSEP monograph's campaign shape: 12 cases (late user x demand x a 2-valued axis, the
    large-task bound standing in for checkpointing, which needs the OSEP/HOSEP policies) x 2
    policies x ``seeds`` seeds on the ``hosep`` generator (40 tasks on 12 hosts), on a
    LocalCluster, cluster start included."""
    f = tmp / "hosep.toml"
    f.write_text(HOSEP_SIZED.format(seeds=seeds))
    camp = load_campaign(f)
    n = len(camp.runs())
    t0 = time.perf_counter()
    st = run_campaign(camp, tmp / "hosep-dask", workers=workers, progress=False)
    wall = time.perf_counter() - t0
    assert st.failed == 0 and len(st.status.done) == n
    row = {"campaign": "hosep-sized", "runs": n, "localcluster_workers": workers, "wall_s": round(wall, 1),
           "runs_per_s": round(n / wall, 1)}
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiny", type=int, default=1000)
    ap.add_argument("--large", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--hosep-seeds", type=int, default=0,
                    help="also run the HOSEP-sized campaign with this many seeds (1000: 24,000 runs)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-campaign-"))
    try:
        rows = [measure("tiny", args.tiny, 40, 8, 4, args.workers, tmp),
                measure("large", args.large, 10_000, 128, 8, args.workers, tmp)]
        hosep = hosep_sized(args.hosep_seeds, args.workers, tmp) if args.hosep_seeds else None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    tiny = rows[0]
    estimate = 24_000 / tiny["localcluster_runs_per_s"]
    result = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores",
              "python": platform.python_version(), "rows": rows,
              "hosep_24000_runs_estimate_s": round(estimate, 1), "hosep_sized": hosep}
    print(f"HOSEP-sized campaign (24,000 tiny runs) on {args.workers} workers: about {estimate / 60:.1f} min")
    out = ROOT / "benchmarks" / "results" / "campaign.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
