"""Engine time of FCFS, EASY and the backfilling variants under a growing backlog of multi-host jobs.

Workload (generated in memory, seeded, never written to disk): ``N`` jobs with a ``delay``
profile each on the 128-host platform of :mod:`bench_engine`:

* ``res`` uniform in 1..32 hosts (mean 16.5);
* delay (the job's run time) uniform in [60, 3600) s, rounded to the millisecond (mean 1,830 s);
* walltime = delay times a factor uniform in [1, 3), rounded *up* to a whole minute (so always
  above the delay: no job is killed, most end well before their walltime, as in real traces);
* Poisson arrivals at twice the platform's capacity: mean inter-arrival ``E[res] * E[delay] /
  (2 * 128)`` = 117.9 s (subtimes rounded to the millisecond).

Submitted work is twice what the hosts can do, so the waiting queue grows to about ``N / 2`` jobs
by the end: every EASY pass has a long queue behind the head, most of it unable to start.

Each configuration (policy x size) runs in a fresh Python subprocess. ``run`` = ``Engine.run``
with the policy called in-process (``InProcessPort``), no energy, output rows not kept (the
schedule does not depend on them); ``setup`` = ``build_engine``. ``check`` is a SHA-256 of every
job's ``(id, start, finish, allocation)`` in completion order, so two runs (or two versions of a
policy) that print the same ``check`` made the same schedule. ``--profile`` runs one
configuration under :mod:`cProfile` and prints the top functions instead.

Usage::

    python benchmarks/bench_backlog.py                         # FCFS and EASY at 10k, 30k, 100k jobs
    python benchmarks/bench_backlog.py --sizes 1000000 --policies easy
    python benchmarks/bench_backlog.py --sizes 30000 --policies easy --profile
    python benchmarks/bench_backlog.py --sizes 10000,30000 --policies easy,green-easy:delta=10 --sharing
    python benchmarks/bench_backlog.py --sizes 3000 --policies easy,conservative --append
    python benchmarks/bench_backlog.py --sizes 10000,100000 --policies easy,heft:reservations=8
    python benchmarks/bench_backlog.py --sizes 10000,100000 --policies every --time-limit 600
    python benchmarks/bench_backlog.py --sizes 10000,100000 --policies every --owned --time-limit 600

``--policies every`` runs every registered policy this workload suits (:data:`EVERY`; with
``--sharing`` the green heuristic's, :data:`EVERY_SHARING`; with ``--owned`` the owner-share ones,
:data:`EVERY_OWNED`), FCFS and EASY first. ``--time-limit S`` stops a run whose ``Engine.run``
goes past ``S`` seconds: its row says ``stopped`` with ``run`` = ``S``, a lower bound, and its ratios
are lower bounds too (``> x``). Below the table, each policy of :data:`GOALS` at 10,000 and 100,000
jobs (its latest run, with each option set apart) is set against its goal: its engine time within
that many times EASY's in the same invocation.

A policy is ``name`` or ``name:key=value:...`` (its options, values read as JSON, else as
strings; the row's policy column shows the whole spec). ``--sharing`` runs every configuration
with compute sharing (Batsim's ``--enable-compute-sharing``, which green-easy needs for Δ > 0);
the rows then say so. ``--owned`` runs every configuration on an owned version of the same
platform and workload, as the owner-share policies (``osep``, ``hosep``, ``ehosep``) need:
:data:`NB_OWNERS` users, host ``i`` owned by ``u<i * NB_OWNERS // 128>`` (the host property
``owner``, 32 consecutive hosts each, as the ``owner-lille`` scenario gives each team a cluster),
and each job's ``user`` field drawn uniformly among them from a second seeded stream (so the jobs'
times and sizes are the plain workload's). Every run switches on the Batsim features its policy
``requires`` (the owner-share policies: dynamic jobs and forwarded profiles, for the restarts of
preempted jobs). The rows then say ``(owned)``. ``--append`` adds the rows to those already in ``backlog.json`` instead of
replacing the file (repeated runs of a configuration then give one row each; the ratios to FCFS
and EASY are taken within one invocation, ``run`` = its start time).

Results: a table on stdout, ``benchmarks/results/backlog.json`` and ``backlog.md`` (``--out DIR``
to write them elsewhere; ``--no-write`` to write nothing).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engine import (NB_HOSTS, machine_meta, resolve_platform, run_worker,  # noqa: E402 - the same
                          write_json_and_md)                                       # 128-host platform

ROOT = Path(__file__).resolve().parents[1]

MAX_RES = 32
DELAY_RANGE = (60.0, 3600.0)        # s
WALLTIME_FACTOR = (1.0, 3.0)
LOAD = 2.0                          # submitted work / platform capacity
MEAN_INTERARRIVAL = ((1 + MAX_RES) / 2) * (sum(DELAY_RANGE) / 2) / (LOAD * NB_HOSTS)  # s

#: Owners of the ``--owned`` platform (each owns NB_HOSTS / NB_OWNERS consecutive hosts).
NB_OWNERS = 4

#: The goals: EASY within 3x of FCFS at 100k jobs, a 1M-job EASY run under 10 min.
GOAL_RATIO = 3.0
GOAL_1M_S = 600.0


#: ``--policies every``: the registered policies the plain workload suits; with ``--sharing`` the
#: green heuristic's (its Δ > 0 overlaps jobs, which needs compute sharing); with ``--owned``
#: (hosts and jobs with owners) the owner-share policies. FCFS and EASY first, for the ratios.
EVERY = ("fcfs", "easy", "conservative", "heft", "buc", "buc-easy")
EVERY_SHARING = ("fcfs", "easy", "green-easy", "green-heft")
EVERY_OWNED = ("fcfs", "easy", "osep", "hosep", "ehosep")

#: The goal of each policy under this backlog: engine time at most this many times EASY's, in the
#: same invocation, at 10,000 and at 100,000 jobs (the owner-share policies on the ``--owned``
#: platform and workload).
GOALS = {"conservative": 3.0, "heft": 3.0, "green-easy": 3.0, "green-heft": 3.0, "buc": 3.0, "buc-easy": 3.0,
         "osep": 5.0, "hosep": 5.0, "ehosep": 5.0}
GOAL_SIZES = (10_000, 100_000)

#: Policies whose default reserves every waiting job: quadratic under this backlog (option
#: ``reservations`` bounds them).
QUADRATIC = ("conservative", "heft", "green-heft")


def make_workload(n: int, seed: int = 0) -> dict:
    """The benchmark workload (module docstring) as a Batsim workload dict."""
    rng = random.Random(seed)
    jobs = []
    profiles = {}
    t = 0.0
    for i in range(n):
        t += rng.expovariate(1.0 / MEAN_INTERARRIVAL)
        res = rng.randint(1, MAX_RES)
        delay = round(rng.uniform(*DELAY_RANGE), 3)
        walltime = 60.0 * math.ceil(delay * rng.uniform(*WALLTIME_FACTOR) / 60.0)
        if walltime <= delay:
            walltime += 60.0
        name = f"d{i}"
        profiles[name] = {"type": "delay", "delay": delay}
        jobs.append({"id": str(i), "subtime": round(t, 3), "walltime": walltime, "res": res, "profile": name})
    return {"nb_res": NB_HOSTS, "jobs": jobs, "profiles": profiles}


def add_users(workload: dict, seed: int) -> dict:
    """``--owned``: each job gets a ``user`` field ``u0``..``u<NB_OWNERS-1>``, uniform, from its own
    seeded stream (the rest of the workload unchanged)."""
    rng = random.Random(f"owners-{seed}")
    for job in workload["jobs"]:
        job["user"] = f"u{rng.randrange(NB_OWNERS)}"
    return workload


def owned_platform(platform: Path, out: Path) -> Path:
    """``--owned``: ``platform`` with ``<prop id="owner" value="u<k>"/>`` on its compute hosts
    ``host<i>`` (``k = i * NB_OWNERS // NB_HOSTS``), written to ``out``."""
    import re

    def add(m: re.Match) -> str:
        k = int(m.group(2)) * NB_OWNERS // NB_HOSTS
        return f'{m.group(1)}\n      <prop id="owner" value="u{k}" />'

    text, n = re.subn(r'(<host id="host(\d+)"[^>]*>)', add, platform.read_text(encoding="utf-8"))
    if n != NB_HOSTS:
        raise SystemExit(f"{platform}: {n} compute hosts named host<i> found, {NB_HOSTS} expected")
    out.write_text(text, encoding="utf-8")
    return out


def schedule_digest(jobs) -> str:
    """SHA-256 (hex, 16 digits) of every job's id, start, finish and allocation, in order."""
    h = hashlib.sha256()
    for j in jobs:
        h.update(f"{j.id};{j.start!r};{j.finish!r};{j.alloc}\n".encode())
    return h.hexdigest()[:16]


def parse_policy(spec: str) -> tuple[str, dict | None]:
    """``name`` or ``name:key=value:...`` -> (name, options or None); values are JSON when they
    parse as JSON, else strings."""
    name, *pairs = spec.split(":")
    opts = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"policy option {pair!r} in {spec!r} is not key=value")
        try:
            opts[key] = json.loads(value)
        except json.JSONDecodeError:
            opts[key] = value
    return name, (opts or None)


def run_one(platform: str, policy: str, size: int, seed: int, profile: bool = False,
            sharing: bool = False, owned: bool = False, time_limit: float | None = None) -> dict:
    """Run one configuration in this process and measure it (``policy`` as :func:`parse_policy`).

    ``time_limit`` (s): when ``Engine.run`` goes past it, the worker prints a row saying so
    (``stopped_after_s``; ``run_s`` = the limit, a lower bound) and exits at once."""
    import gc
    import resource

    from schedulers.engine import InProcessPort, build_engine
    from schedulers.registry import get_policy

    wl = make_workload(size, seed)
    if owned:
        add_users(wl, seed)
    gc.collect()
    t0 = time.perf_counter()
    pol = get_policy(*parse_policy(policy))
    needs = getattr(pol, "requires", frozenset())  # the owner-share policies' restarts
    engine = build_engine(platform, [wl], energy=False, compute_sharing=sharing, trace_outputs=False,
                          dynamic_jobs="dynamic-jobs" in needs, forward_profiles="forward-profiles" in needs)
    del wl
    t1 = time.perf_counter()
    port = InProcessPort(pol)
    if time_limit is not None:
        _stop_after(time_limit, {"policy": policy, "size": size, "sharing": sharing,
                                 **({"owned": True} if owned else {}), "setup_s": t1 - t0})
    if profile:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        result = prof.runcall(engine.run, port)
        pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(25)
    else:
        result = engine.run(port)
    t2 = time.perf_counter()
    if time_limit is not None:
        import signal
        signal.setitimer(signal.ITIMER_REAL, 0)
    s = result.schedule
    return {
        "policy": policy, "size": size, "sharing": sharing, **({"owned": True} if owned else {}), "setup_s": t1 - t0, "run_s": t2 - t1,
        "jobs_per_s": size / (t2 - t1), "messages": result.messages,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # Linux: KiB
        "makespan": s["makespan"], "mean_waiting_time": s["mean_waiting_time"],
        "check": schedule_digest(result.jobs),
    }


def _stop_after(limit: float, row: dict) -> None:
    """Arm a timer: ``limit`` seconds from now, print ``row`` as a stopped run and exit (0)."""
    import os
    import signal

    def stop(signum, frame):  # (the engine may be anywhere: print the row and leave at once)
        import resource
        print(json.dumps({**row, "run_s": limit, "stopped_after_s": limit, "jobs_per_s": None, "messages": None,
                          "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                          "makespan": None, "mean_waiting_time": None, "check": None}), flush=True)
        os._exit(0)

    signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, limit)


def _spawn(platform: Path, policy: str, size: int, seed: int, profile: bool, sharing: bool = False,
           owned: bool = False, time_limit: float | None = None) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--platform", str(platform),
           "--policies", policy, "--sizes", str(size), "--seed", str(seed)]
    if profile:
        cmd.append("--profile")
    if sharing:
        cmd.append("--sharing")
    if owned:
        cmd.append("--owned")
    if time_limit is not None:
        cmd += ["--time-limit", repr(time_limit)]
    return run_worker(cmd, echo_stderr=profile)


def _same(r: dict) -> tuple:
    """Rows compared with each other: one invocation, one size, the same sharing and owners."""
    return r.get("run") or "", r["size"], bool(r.get("sharing")), bool(r.get("owned"))


def _references(rows: list[dict], policy: str) -> dict[tuple, float]:
    """The run times (s) of ``policy``'s rows that ran to the end, by :func:`_same`."""
    return {_same(r): r["run_s"] for r in rows if r["policy"] == policy and not r.get("stopped_after_s")}


def latest_goal_runs(rows: list[dict], goals: dict[str, float] | None = None) -> dict[tuple, tuple[dict, float]]:
    """Each policy of ``goals`` (default :data:`GOALS`; each option set apart) at each of
    :data:`GOAL_SIZES`, with and without sharing and owners: its latest run among those with an
    EASY run of the same invocation that ran to the end, with that EASY run's time (s). Keys:
    ``(policy, size, sharing, owned)``, in the order the rows first give them."""
    goals = GOALS if goals is None else goals
    easy = _references(rows, "easy")
    latest: dict[tuple, dict] = {}
    for r in rows:
        if r["size"] in GOAL_SIZES and _same(r) in easy and parse_policy(r["policy"])[0] in goals:
            key = (r["policy"], *_same(r)[1:])
            if key not in latest or _same(r)[0] >= _same(latest[key])[0]:
                latest[key] = r
    return {k: (r, easy[_same(r)]) for k, r in latest.items()}


def _ratio(r: dict, ref: dict[tuple, float]) -> str:
    """``r``'s run time over the reference's of the same invocation and size ('-': none; '> x':
    ``r`` was stopped, so x is a lower bound)."""
    base = ref.get(_same(r))
    if base is None:
        return "-"
    return ("> " if r.get("stopped_after_s") else "") + f"{r['run_s'] / base:.2f}"


def _fmt_table(rows: list[dict]) -> list[str]:
    fcfs = _references(rows, "fcfs")
    easy = _references(rows, "easy")
    runs = any(r.get("run") for r in rows)  # rows of several invocations: say which
    out = ["| policy | jobs | setup (s) | run (s) | jobs/s | / FCFS | / EASY | peak RSS (MB) | makespan (s) "
           "| mean wait (s) | check |" + (" invocation |" if runs else ""),
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|" + ("---|" if runs else "")]
    for r in rows:
        name = r["policy"] + (" (sharing)" if r.get("sharing") else "") + (" (owned)" if r.get("owned") else "")
        ratio = ("-" if r["policy"] == "fcfs" else _ratio(r, fcfs)) + " | " + \
            ("-" if r["policy"] in ("fcfs", "easy") else _ratio(r, easy))
        if r.get("stopped_after_s"):
            out.append(f"| {name} | {r['size']:,} | {r['setup_s']:.2f} | > {r['run_s']:g} (stopped) | - | {ratio} "
                       f"| {r['maxrss_mb']:.0f} | - | - | - |" + (f" {r.get('run') or 'earlier'} |" if runs else ""))
            continue
        out.append(f"| {name} | {r['size']:,} | {r['setup_s']:.2f} | {r['run_s']:.2f} "
                   f"| {r['jobs_per_s']:,.0f} | {ratio} | {r['maxrss_mb']:.0f} | {r['makespan']:,.0f} "
                   f"| {r['mean_waiting_time']:,.0f} | `{r['check']}` |"
                   + (f" {r.get('run') or 'earlier'} |" if runs else ""))
    return out


def _goals(rows: list[dict]) -> list[str]:
    out = []
    # the ratio is taken within one invocation (the same machine load), as in the table
    fcfs = {(r.get("run"), r["size"]): r["run_s"] for r in rows
            if r["policy"] == "fcfs" and not r.get("stopped_after_s")}
    for r in rows:
        if r.get("stopped_after_s"):
            continue
        same = (r.get("run"), 100_000)
        if r["policy"] == "easy" and r["size"] == 100_000 and same in fcfs:
            ratio = r["run_s"] / fcfs[same]
            out.append(f"- EASY / FCFS at 100k jobs: {ratio:.2f} (goal <= {GOAL_RATIO:g}): "
                       f"{'met' if ratio <= GOAL_RATIO else 'NOT met'}")
        if r["policy"] == "easy" and r["size"] == 1_000_000:
            out.append(f"- EASY, 1M jobs: {r['run_s']:.0f} s (goal < {GOAL_1M_S:.0f} s): "
                       f"{'met' if r['run_s'] < GOAL_1M_S else 'NOT met'}")
    for r, easy_s in latest_goal_runs(rows).values():
        goal = GOALS[parse_policy(r["policy"])[0]]
        ratio = r["run_s"] / easy_s
        stopped = bool(r.get("stopped_after_s"))
        met = not stopped and ratio <= goal
        what = (f"stopped after {r['run_s']:g} s, over {ratio:.1f}x EASY" if stopped else f"{ratio:.2f}x EASY")
        out.append(f"- {r['policy']}{' (sharing)' if r.get('sharing') else ''}{' (owned)' if r.get('owned') else ''} "
                   f"at {r['size']:,} jobs: {what} (goal <= {goal:g}x): {'met' if met else 'NOT met'}")
    return out


def write_reports(out_dir: Path, meta: dict, rows: list[dict]) -> tuple[Path, Path]:
    lines = [
        "# Backlog benchmark (FCFS, EASY and the backfilling variants, multi-host jobs at twice the capacity)",
        "",
        f"Generated by `benchmarks/bench_backlog.py` on {meta['date']} ({meta['python']}, {meta['machine']}).",
        "",
        f"- platform: {meta['platform_note']}",
        f"- workload: {meta['workload']}",
        *([f"- note: {meta['note']}"] if meta.get("note") else []),
        "- run = `Engine.run` with the policy in-process, no energy, output rows not kept; "
        "/ FCFS = run time over FCFS's at the same size in the same invocation; check = digest of "
        "every job's start, finish and hosts (equal digests: same schedule).",
        "",
        *_fmt_table(rows),
        "",
    ]
    g = _goals(rows)
    if g:
        lines += ["Goals:", "", *g, ""]
    return write_json_and_md(out_dir, "backlog", meta, rows, lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,30000,100000", help="comma-separated job counts")
    ap.add_argument("--policies", default="fcfs,easy",
                    help="comma-separated policy names (name:key=value:... for options), or 'every': "
                         "every registered policy this workload suits (with --sharing: the green ones; "
                         "with --owned: the owner-share ones)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profile", action="store_true", help="cProfile each run (top 25 by own time, on stderr)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results",
                    help="folder for backlog.json and backlog.md")
    ap.add_argument("--no-write", action="store_true", help="print the table only")
    ap.add_argument("--sharing", action="store_true", help="compute sharing on (green-easy with delta > 0)")
    ap.add_argument("--owned", action="store_true",
                    help="hosts and jobs with owners (osep, hosep, ehosep)")
    ap.add_argument("--append", action="store_true",
                    help="add the rows to those of the existing backlog.json")
    ap.add_argument("--time-limit", type=float, metavar="S",
                    help="stop a run whose engine time goes past S seconds (its row says 'stopped'; "
                         "its ratios are lower bounds)")
    ap.add_argument("--platform", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s]
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    if policies == ["every"]:
        policies = list(EVERY_OWNED if args.owned else EVERY_SHARING if args.sharing else EVERY)
    if args.time_limit is not None and not (math.isfinite(args.time_limit) and args.time_limit > 0):
        ap.error(f"--time-limit must be a number of seconds > 0, got {args.time_limit!r}")

    if args.worker:
        print(json.dumps(run_one(str(args.platform), policies[0], sizes[0], args.seed, args.profile,
                                 args.sharing, args.owned, args.time_limit)))
        return 0

    from schedulers.registry import POLICIES, check_options
    try:
        for p in policies:
            if parse_policy(p)[0] in POLICIES:
                check_options(*parse_policy(p))
    except Exception as e:  # a bad option: say which
        ap.error(str(e))
    unknown = [p for p in policies if parse_policy(p)[0] not in POLICIES]
    if unknown:
        ap.error(f"unknown policies {unknown}; known: {sorted(POLICIES)}")

    for p in policies:
        name, opts = parse_policy(p)
        if name in QUADRATIC and not (opts or {}).get("reservations") and max(sizes) > 3000:
            print(f"note: {p} reserves every waiting job, so its run grows as the square of the backlog "
                  f"(129 s at 10,000 jobs for heft on the 2-core machine, hours at 100,000); "
                  f"'{name}:reservations=8' bounds it (benchmarks/results/conservative/README.md)"
                  + ("" if args.time_limit else "; --time-limit S stops such runs after S seconds"), flush=True)

    started = time.strftime("%Y-%m-%d %H:%M:%S")
    with tempfile.TemporaryDirectory(prefix="bench_backlog_") as tmp:
        plat, note = resolve_platform(Path(tmp))
        if args.owned:
            plat = owned_platform(plat, Path(tmp) / "owned_platform.xml")
        print(f"platform: {note}" + (f", hosts owned by {NB_OWNERS} users (--owned)" if args.owned else ""),
              flush=True)
        # (the report's rows may come from several invocations: a row says "(owned)" itself)
        note += f"; rows marked (owned): hosts owned by {NB_OWNERS} users (--owned)"
        rows = []
        for size in sizes:
            for policy in policies:
                r = _spawn(plat, policy, size, args.seed, args.profile, args.sharing, args.owned, args.time_limit)
                r["run"] = started
                rows.append(r)
                if r.get("stopped_after_s"):
                    print(f"  {policy:5s} {size:>9,} jobs{' sharing' if args.sharing else ''}"
                          f"{' owned' if args.owned else ''}  stopped after {r['run_s']:g} s", flush=True)
                    continue
                print(f"  {policy:5s} {size:>9,} jobs{' sharing' if args.sharing else ''}{' owned' if args.owned else ''}  run {r['run_s']:8.2f} s  {r['jobs_per_s']:>8,.0f} jobs/s  "
                      f"peak RSS {r['maxrss_mb']:5.0f} MB  check {r['check']}", flush=True)
    meta = {
        **machine_meta(),
        "platform_note": note,
        "workload": (f"`delay` jobs of 1-{MAX_RES} hosts (uniform), delays uniform in "
                     f"[{DELAY_RANGE[0]:g}, {DELAY_RANGE[1]:g}) s, walltime = delay x U[1, 3) rounded up "
                     f"to the minute, Poisson arrivals every {MEAN_INTERARRIVAL:.1f} s on average "
                     f"({LOAD:g}x the capacity of {NB_HOSTS} hosts), seed {args.seed}"),
        "seed": args.seed,
    }
    if args.append and not args.no_write and (args.out / "backlog.json").exists():
        old = json.loads((args.out / "backlog.json").read_text(encoding="utf-8"))["results"]
        rows = old + rows
    print()
    print("\n".join(_fmt_table(rows)))
    g = _goals(rows)
    if g:
        print("\n".join(["", "Goals:", *g]))
    if not args.no_write:
        js, md = write_reports(args.out, meta, rows)
        print(f"\nwrote {js} and {md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
