"""Decision time of EASY backfilling per Batsim message, with long waiting queues.

Setting: 128 hosts kept full, ``N`` jobs waiting (N = 100, 1,000, 10,000). After a warm-up, each
message holds the completion of the running job that ends first plus the submissions that bring
the waiting queue back to ``N`` (so every pass sees ``N`` waiting jobs); the time of
``policy.decide(now, events)`` (events decoding excluded, base-class bookkeeping included) is
measured with :func:`time.perf_counter`. Jobs: half on 1 host, half on 2-64 hosts (log-uniform),
walltimes 60-36,000 s (log-uniform), runtimes 10-100 % of the walltime. Seeded: same numbers of
decisions every run (times vary with the machine).

Two "nothing can start" passes are measured as well (a REQUESTED_CALL with no state change):
``full`` (no free host: the pass returns at once) and ``blocked`` (3 free hosts, a 128-host head
reserved on every host, ``N - 1`` long 1-host jobs that may not backfill: one profile build plus a
scan of the whole queue).

Target: < 1 ms per event at 1,000 waiting jobs (pybatsim's easyBackfill needs about 0.7 ms per job
end to end).

Usage: ``python benchmarks/bench_easy_decisions.py [--events 2000] [--seed 1] [--sizes 100 1000 10000]``
Writes ``benchmarks/results/easy_decisions.json``.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import platform
import random
import statistics
import sys
import time
from pathlib import Path

from schedulers.core.events import ExecuteJob, JobCompleted, JobSubmitted, RequestedCall, SimulationBegins
from schedulers.core.model import Host, Job
from schedulers.easy import EASY

N_HOSTS = 128
RESULTS = Path(__file__).resolve().parent / "results" / "easy_decisions.json"


def _begins(n: int) -> SimulationBegins:
    hosts = [Host(id=i, name=f"host{i}") for i in range(n)]
    return SimulationBegins(0.0, nb_resources=n, nb_compute_resources=n, compute_resources=hosts)


class Workload:
    """Seeded job generator: (res, walltime s, runtime s)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.count = 0

    def job(self, now: float) -> tuple[Job, float]:
        r = self.rng
        res = 1 if r.random() < 0.5 else int(round(math.exp(r.uniform(math.log(2), math.log(64)))))
        wt = float(round(math.exp(r.uniform(math.log(60), math.log(36000)))))
        rt = max(1.0, float(round(wt * r.uniform(0.1, 1.0))))
        job = Job(id=f"w0!{self.count}", workload="w0", subtime=now, walltime=wt, res=res, profile="p")
        self.count += 1
        return job, rt


def _percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def bench_stream(n_wait: int, n_events: int, seed: int) -> dict:
    """Stream of job-completed + job-submitted messages with ``n_wait`` waiting jobs."""
    pol = EASY()
    pol.decide(0.0, [_begins(N_HOSTS)])
    wl = Workload(seed)
    runtime: dict[str, float] = {}
    ends: list[tuple[float, str]] = []  # (end time, job id) of running jobs, kept sorted lazily

    def submit(now: float, k: int) -> list:
        evs = []
        for _ in range(k):
            job, rt = wl.job(now)
            runtime[job.id] = rt
            evs.append(JobSubmitted(now, job=job))
        return evs

    def apply(now: float, decisions) -> int:
        started = 0
        for d in decisions:
            if isinstance(d, ExecuteJob):
                heapq.heappush(ends, (now + runtime[d.job_id], d.job_id))
                started += 1
        return started

    # warm-up (not timed): fill the machine, then run until the stream is steady
    now = 0.0
    apply(now, pol.decide(now, submit(now, n_wait + 400)))
    times: list[float] = []
    started_per_event: list[int] = []
    free_after: list[int] = []
    warm = max(200, n_events // 5)
    for step in range(warm + n_events):
        now, jid = heapq.heappop(ends)
        job = pol.jobs[jid]
        evs = [JobCompleted(now, job_id=jid, alloc=job.allocation)]
        evs += submit(now, max(0, n_wait - len(pol.queue)))
        t0 = time.perf_counter()
        decisions = pol.decide(now, evs)
        dt = time.perf_counter() - t0
        s = apply(now, decisions)
        if step >= warm:
            times.append(dt)
            started_per_event.append(s)
            free_after.append(len(pol.available))
    return {
        "waiting_jobs": n_wait,
        "events": n_events,
        "mean_ms": statistics.fmean(times) * 1e3,
        "p95_ms": _percentile(times, 0.95) * 1e3,
        "max_ms": max(times) * 1e3,
        "mean_jobs_started_per_event": statistics.fmean(started_per_event),
        "mean_free_hosts_after_pass": statistics.fmean(free_after),
    }


def bench_idle_pass(n_wait: int, kind: str, repeat: int) -> dict:
    """A pass where nothing can start (REQUESTED_CALL, no state change)."""
    pol = EASY()
    pol.decide(0.0, [_begins(N_HOSTS)])
    evs = []
    if kind == "full":
        evs.append(JobSubmitted(0.0, job=Job(id="w0!run", workload="w0", subtime=0.0, walltime=1000.0,
                                             res=N_HOSTS, profile="p")))
    else:  # blocked: 125 hosts busy, 3 free, 128-host head, long 1-host jobs
        evs.append(JobSubmitted(0.0, job=Job(id="w0!run", workload="w0", subtime=0.0, walltime=1000.0,
                                             res=N_HOSTS - 3, profile="p")))
    evs.append(JobSubmitted(0.0, job=Job(id="w0!head", workload="w0", subtime=0.0, walltime=100.0,
                                         res=N_HOSTS, profile="p")))
    for k in range(n_wait - 1):
        evs.append(JobSubmitted(0.0, job=Job(id=f"w0!{k}", workload="w0", subtime=0.0, walltime=5000.0,
                                             res=1, profile="p")))
    first = pol.decide(0.0, evs)
    assert [d.job_id for d in first if isinstance(d, ExecuteJob)] == ["w0!run"], first
    assert len(pol.queue) == n_wait
    times = []
    for k in range(repeat):
        now = 1.0 + k
        t0 = time.perf_counter()
        out = pol.decide(now, [RequestedCall(now)])
        times.append(time.perf_counter() - t0)
        assert not out
    return {"waiting_jobs": n_wait, "kind": kind, "passes": repeat,
            "mean_ms": statistics.fmean(times) * 1e3, "p95_ms": _percentile(times, 0.95) * 1e3,
            "free_hosts": len(pol.available)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=2000, help="timed messages per queue size")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)

    stream = []
    idle = []
    for n in args.sizes:
        stream.append(bench_stream(n, args.events, args.seed))
        for kind in ("full", "blocked"):
            idle.append(bench_idle_pass(n, kind, repeat=200))

    print(f"EASY decision time per message, {N_HOSTS} hosts (python {platform.python_version()})")
    print(f"{'waiting':>8} {'events':>7} {'mean ms':>8} {'p95 ms':>8} {'max ms':>8} {'started/ev':>10} {'free after':>10}")
    for r in stream:
        print(f"{r['waiting_jobs']:>8} {r['events']:>7} {r['mean_ms']:>8.3f} {r['p95_ms']:>8.3f} "
              f"{r['max_ms']:>8.3f} {r['mean_jobs_started_per_event']:>10.2f} {r['mean_free_hosts_after_pass']:>10.2f}")
    print("\nPasses where nothing can start (REQUESTED_CALL)")
    print(f"{'waiting':>8} {'kind':>8} {'mean ms':>8} {'p95 ms':>8} {'free':>5}")
    for r in idle:
        print(f"{r['waiting_jobs']:>8} {r['kind']:>8} {r['mean_ms']:>8.3f} {r['p95_ms']:>8.3f} {r['free_hosts']:>5}")

    result = {
        "benchmark": "easy_decisions",
        "hosts": N_HOSTS,
        "seed": args.seed,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "platform": platform.platform(),
        "stream": stream,
        "nothing_can_start": idle,
        "target": "mean < 1 ms per event at 1,000 waiting jobs",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwritten {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
