#!/usr/bin/env python3
"""The scale-goal table of the documentation's performance page (``docs/engine/performance.md``),
generated from ``benchmarks/results/``.

Each row is one goal, read from the JSON file that its benchmark wrote (the numbers, the date and
the machine of that run), with the verdict worked out here from the goal's bound; nothing is typed
by hand, so the documentation cannot claim what the committed results do not show.

Usage (from the repository root)::

    python scripts/benchmark_table.py            # print the table
    python scripts/benchmark_table.py --write    # put it in the page, between the markers
    python scripts/benchmark_table.py --check    # exit 1 when the page's table is not this one

The markers are ``<!-- scale-goals:begin -->`` and ``<!-- scale-goals:end -->``;
``tests/test_benchmark_table.py`` runs ``--check``'s comparison on every test run.

Goals: a 1M-job trace replayed with energy in under 2 minutes and under 1 GB, then in under 60 s
with energy as fast as plain runs (``replay_energy.json``)
(``bench_engine.py --replay``, and ``bench_swf.py`` for a SWF trace converted on the fly); EASY
within 3x of FCFS on 100k backlogged multi-host jobs and a 1M-job backlogged EASY run under 10
minutes, and every backfilling variant within 3x of EASY (5x: the owner-share policies) at 10k
and 100k backlogged jobs (``bench_backlog.py``); ``gridsched run`` on 10k jobs, start-up included, at least 10x
faster than real Batsim driven by a minimal Python FCFS (``bench_startup.py``; one row against an
optimised Batsim build, ``startup.json``, one against an unoptimised one, ``startup_batsim_debug.json``:
the reference's speed depends on how Batsim was compiled, see the performance page).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "engine" / "performance.md"
BEGIN, END = "<!-- scale-goals:begin -->", "<!-- scale-goals:end -->"

REPLAY_S, REPLAY_MB = 120.0, 1024.0   # a 1M-job trace with energy: under 2 min, under 1 GB
REPLAY_FAST_S = 60.0                  # the same with energy as fast as plain runs: under 60 s, under 1 GB
EASY_OVER_FCFS = 3.0                  # EASY / FCFS engine time, 100k backlogged jobs
EASY_1M_S = 600.0                     # a 1M-job backlogged EASY run: under 10 min
STARTUP_RATIO = 10.0                  # real Batsim + minimal FCFS / gridsched run, 10k jobs


def _load(results: Path, stem: str) -> dict | None:
    path = results / f"{stem}.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _verdict(ok: bool) -> str:
    return "met" if ok else "**NOT met**"


def _when(meta: dict) -> str:
    return f"{meta['date'][:16]}, {meta['machine']}"


def replay_row(data: dict) -> tuple[str, str, str]:
    """1M-job JSON trace, whole ``gridsched run -E``: (measured, verdict, when)."""
    rows = data["results"]
    this = rows[0]
    ok = this["wall_s"] < REPLAY_S and this["maxrss_mb"] < REPLAY_MB
    text = (f"{this['wall_s']:.1f} s (engine {this['engine_s']:.1f} s), {this['maxrss_mb']:.0f} MB peak, "
            f"{this['jobs']:,} jobs")
    return text, _verdict(ok), _when(data["meta"])


def replay_energy_row(data: dict) -> tuple[str, str, str]:
    """1M-job JSON trace, whole ``gridsched run -E`` (``bench_engine.py --replay N --replay-energy
    both``): under 60 s and 1 GB; the plain run of the same invocation beside it."""
    rows = [r for r in data["results"] if r.get("checkout", "this") == "this"]
    this = next(r for r in rows if r.get("energy", True))
    plain = next((r for r in rows if not r.get("energy", True)), None)
    ok = this["wall_s"] < REPLAY_FAST_S and this["maxrss_mb"] < REPLAY_MB
    text = (f"{this['wall_s']:.1f} s (engine {this['engine_s']:.1f} s), {this['maxrss_mb']:.0f} MB peak, "
            f"{this['jobs']:,} jobs" + (f"; without -E {plain['wall_s']:.1f} s" if plain else ""))
    return text, _verdict(ok), _when(data["meta"])


def swf_row(data: dict) -> tuple[str, str, str]:
    """1M-job SWF trace converted on the fly, whole ``gridsched run -E``."""
    rows = [r for r in data["results"] if r.get("case") == "synthetic"]
    root = rows[0]["root"]
    this = [r for r in rows if r["root"] == root]
    best = min(this, key=lambda r: r["wall_s"])
    ok = all(r["wall_s"] < REPLAY_S and r["maxrss_mb"] < REPLAY_MB for r in this)
    walls = " / ".join(f"{r['wall_s']:.1f}" for r in this)
    text = (f"{walls} s (engine {best['engine_s']:.1f} s), {max(r['maxrss_mb'] for r in this):.0f} MB peak, "
            f"{best['jobs']:,} jobs")
    return text, _verdict(ok), _when(data["meta"])


def _backlog_runs(data: dict) -> dict[tuple, dict]:
    """The plain (no sharing) FCFS and EASY rows by (invocation, size, policy), later rows winning."""
    out = {}
    for r in data["results"]:
        if r.get("sharing") or r["policy"] not in ("fcfs", "easy"):
            continue
        out[(r.get("run") or "", r["size"], r["policy"])] = r
    return out


def backlog_ratio_row(data: dict) -> tuple[str, str, str] | None:
    """EASY / FCFS engine time at 100k backlogged jobs, in the latest invocation that ran both."""
    runs = _backlog_runs(data)
    both = sorted(inv for (inv, size, pol) in runs if size == 100_000 and pol == "easy"
                  and (inv, size, "fcfs") in runs)
    if not both:
        return None
    inv = both[-1]
    easy, fcfs = runs[(inv, 100_000, "easy")], runs[(inv, 100_000, "fcfs")]
    ratio = easy["run_s"] / fcfs["run_s"]
    text = f"{ratio:.2f}x (EASY {easy['run_s']:.1f} s, FCFS {fcfs['run_s']:.1f} s of engine time)"
    return text, _verdict(ratio <= EASY_OVER_FCFS), (inv[:16] or data["meta"]["date"][:16]) + f", {data['meta']['machine']}"


def backlog_1m_row(data: dict) -> tuple[str, str, str] | None:
    """A 1M-job backlogged EASY run (engine time), in the latest invocation that ran one."""
    runs = _backlog_runs(data)
    invs = sorted(inv for (inv, size, pol) in runs if size == 1_000_000 and pol == "easy")
    if not invs:
        return None
    inv = invs[-1]
    easy = runs[(inv, 1_000_000, "easy")]
    fcfs = runs.get((inv, 1_000_000, "fcfs"))
    text = f"{easy['run_s']:.0f} s, {easy['maxrss_mb']:,.0f} MB peak"
    if fcfs is not None:
        text += f" (FCFS {fcfs['run_s']:.0f} s, {easy['run_s'] / fcfs['run_s']:.2f}x)"
    when = inv[:16] if inv else f"before {data['meta']['date'][:10]} (date not recorded)"
    return text, _verdict(easy["run_s"] < EASY_1M_S), f"{when}, {data['meta']['machine']}"


def _bench_backlog():
    """``benchmarks/bench_backlog.py`` as a module: its goals and its choice of the runs that
    meet them are the table's too (one list of the goals, one way of reading the rows)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_backlog", ROOT / "benchmarks" / "bench_backlog.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def backlog_policies_row(data: dict, goals: dict[str, float] | None = None) -> tuple[str, str, str] | None:
    """Every policy of ``goals`` (default: ``bench_backlog.GOALS``) with its default options, at
    10k and 100k backlogged jobs: its latest run's engine time over EASY's of the same invocation,
    size, sharing and owners (``bench_backlog.latest_goal_runs``; a run stopped by
    ``--time-limit``: a lower bound, ``> x``). Met when every policy has both sizes within its bound."""
    bench = _bench_backlog()
    goals = dict(bench.GOALS) if goals is None else goals
    latest: dict[tuple[str, int], tuple[dict, float]] = {}   # (policy, size): the latest, sharing or not
    for (pol, size, *_), (r, easy_s) in bench.latest_goal_runs(data["results"], goals).items():
        if pol in goals and ((pol, size) not in latest or
                             (r.get("run") or "") >= (latest[(pol, size)][0].get("run") or "")):
            latest[(pol, size)] = (r, easy_s)
    if not latest:
        return None
    parts, ok, dates = [], True, []
    for pol, bound in goals.items():
        cells = []
        for n in bench.GOAL_SIZES:
            if (pol, n) not in latest:
                cells.append("-")
                ok = False
                continue
            r, easy_s = latest[(pol, n)]
            ratio = r["run_s"] / easy_s
            stopped = bool(r.get("stopped_after_s"))
            ok = ok and not stopped and ratio <= bound
            cells.append(f"> {ratio:.0f}x (stopped at {r['run_s']:.0f} s)" if stopped else f"{ratio:.1f}x")
            dates.append(r.get("run") or "")
        parts.append(f"{pol} {' / '.join(cells)}")
    text = "at 10k / 100k jobs: " + ", ".join(parts)
    when = (f"{min(dates)[:16]} to {max(dates)[:16]}" if dates and min(dates) != max(dates) else
            (dates[0][:16] if dates and dates[0] else data["meta"]["date"][:16]))
    return text, _verdict(ok), f"{when}, {data['meta']['machine']}"


def startup_row(data: dict) -> tuple[str, str, str] | None:
    """Whole ``gridsched run`` on 10k jobs against real Batsim + a minimal Python FCFS."""
    s = data["meta"]["summary"]
    ref, this = s.get("batsim+minimal-fcfs"), s.get("gridsched")
    if ref is None or this is None:
        return None
    ratio = ref["median_s"] / this["median_s"]
    build = data["meta"].get("batsim_build", "build type not recorded")
    text = (f"{ratio:.1f}x: gridsched {this['median_s']:.2f} s, real Batsim 4.2.1 ({build}) + minimal FCFS "
            f"{ref['median_s']:.2f} s (medians of {this['runs']})")
    return text, _verdict(ratio >= STARTUP_RATIO), _when(data["meta"])


#: (goal, results file stem, row maker)
GOALS: list[tuple[str, str, Callable[[dict], Any]]] = [
    ("1M-job JSON trace replayed with energy, whole `gridsched run -E`: < 2 min, < 1 GB", "replay", replay_row),
    ("the same, energy as fast as plain runs: < 60 s, < 1 GB (quiet instants; without -E beside it)",
     "replay_energy", replay_energy_row),
    ("1M-job SWF trace converted on the fly and replayed with energy: < 2 min, < 1 GB", "swf", swf_row),
    ("EASY within 3x of FCFS, 100k backlogged jobs of 1-32 hosts (engine time)", "backlog", backlog_ratio_row),
    ("1M backlogged jobs with EASY: < 10 min (engine time)", "backlog", backlog_1m_row),
    ("every backfilling variant within 3x of EASY's engine time (the owner-share policies 5x, on an owned "
     "platform), 10k and 100k backlogged jobs, default options, in one invocation", "backlog", backlog_policies_row),
    ("`gridsched run` on 10k jobs, start-up included, >= 10x faster than real Batsim + minimal Python FCFS "
     "(Batsim optimised: the Docker image's build)", "startup", startup_row),
    ("the same against an unoptimised Batsim build (meson's default `debug` build type)",
     "startup_batsim_debug", startup_row),
]


def table(results: Path = RESULTS) -> str:
    """The markdown table (header included), one row per goal whose results exist."""
    lines = ["| goal | measured | verdict | run (date, machine; `benchmarks/results/`) |", "|---|---|---|---|"]
    for goal, stem, make in GOALS:
        data = _load(results, stem)
        row = make(data) if data is not None else None
        if row is None:
            lines.append(f"| {goal} | no result in `{stem}.json` | - | - |")
            continue
        measured, verdict, when = row
        lines.append(f"| {goal} | {measured} | {verdict} | {when}; `{stem}.md` |")
    return "\n".join(lines) + "\n"


def block(text: str) -> str:
    """The page's block between the markers (markers excluded).

    Raises:
        ValueError: the page lacks a marker."""
    if BEGIN not in text or END not in text:
        raise ValueError(f"{PAGE.name}: markers {BEGIN} / {END} not found")
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="replace the table in the performance page")
    ap.add_argument("--check", action="store_true", help="exit 1 when the performance page's table differs")
    args = ap.parse_args(argv)
    new = table()
    if args.write:
        text = PAGE.read_text(encoding="utf-8")
        block(text)   # (the markers must be there)
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        PAGE.write_text(f"{head}{BEGIN}\n{new}{END}{tail}", encoding="utf-8")
        print(f"wrote the table in {PAGE}")
        return 0
    if args.check:
        try:
            same = block(PAGE.read_text(encoding="utf-8")) == new
        except ValueError as exc:
            print(f"benchmark_table: {exc}", file=sys.stderr)
            return 1
        if not same:
            print(f"benchmark_table: {PAGE.name}'s scale-goal table differs from benchmarks/results/: run "
                  "python scripts/benchmark_table.py --write", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
