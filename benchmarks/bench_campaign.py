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

Usage: ``python benchmarks/bench_campaign.py [--tiny N] [--large N] [--workers 2]``; results are
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiny", type=int, default=1000)
    ap.add_argument("--large", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-campaign-"))
    try:
        rows = [measure("tiny", args.tiny, 40, 8, 4, args.workers, tmp),
                measure("large", args.large, 10_000, 128, 8, args.workers, tmp)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    tiny = rows[0]
    estimate = 24_000 / tiny["localcluster_runs_per_s"]
    result = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores",
              "python": platform.python_version(), "rows": rows,
              "hosep_24000_runs_estimate_s": round(estimate, 1)}
    print(f"HOSEP-sized campaign (24,000 tiny runs) on {args.workers} workers: about {estimate / 60:.1f} min")
    out = ROOT / "benchmarks" / "results" / "campaign.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
