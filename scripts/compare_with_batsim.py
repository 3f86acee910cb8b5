#!/usr/bin/env python3
"""Compare the embedded engine with real Batsim 4.2.1 on seeded random cases, file by file.

Each case (seed ``s``) is a small platform and workload written here: 1-6 compute hosts in one
``Vivaldi`` (coordinates ``0 0 0``) or ``Full`` zone, 1-4 cores, with or without pstates (a
computing pstate pair, a sleep pstate and its two switching pstates); 3-25 jobs of ``delay``,
``parallel_homogeneous`` (with or without ``com``), ``parallel_homogeneous_total`` and
``composed`` profiles, submission times with ties and sub-microsecond parts, walltimes short
enough to kill some jobs; policy FCFS, EASY or conservative; ``-E`` and
``--compute-sharing`` drawn at random. Each case runs twice through ``gridsched run``, on the
embedded engine and with ``--engine batsim`` (the same policy behind gridsched's ZeroMQ server,
real Batsim from ``PATH``), and ``out_jobs.csv``, ``out_machine_states.csv``,
``out_consumed_energy.csv`` and ``out_pstate_changes.csv`` are compared byte for byte.

Usage (real Batsim 4.2.1 on PATH, its libraries on LD_LIBRARY_PATH)::

    python scripts/compare_with_batsim.py --seeds 1000 --count 400 --out /tmp/cmp

Prints a JSON summary (``equal``, ``differ`` with the files, ``refused`` by both sides with their
last error lines, ``disagree`` when one side refuses and the other runs); each case's inputs,
arguments and both output folders stay in ``OUT/s<seed>/`` for a closer look. Exit status 1 when
a case differs or the two sides disagree.

Measured on 2026-11-24 (Batsim 4.2.1 built by hand, meson release, Debian SimGrid 3.32): 1,312
cases (seeds 1-12, 100-199, 1000-1399, 2000-2799), 1,311 equal once a job's stretch was computed
in long double and the actors woken in one step posted in wake order, as Batsim does; seed 2304
differs in the last printed digit of one ``epower`` value (490.833413 against 490.833412).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import random
import subprocess
import sys
from pathlib import Path

FILES = ("out_jobs.csv", "out_machine_states.csv", "out_consumed_energy.csv", "out_pstate_changes.csv")
WATTS = "95.0:95.0:190.0, 95.0:95.0:150.0, 9.75:9.75:9.75, 100.0:100.0:100.0, 125.0:125.0:125.0"
SPEEDS = "100Mf, 60Mf, 1e-9Mf, 0.1Mf, 0.2Mf"


def platform(rng: random.Random, n: int) -> tuple[str, bool]:
    """A platform of ``n`` compute hosts and whether its hosts have pstates (energy)."""
    routing = rng.choice(["Vivaldi", "Full"])
    energy = rng.random() < 0.7
    coords = ' coordinates="0 0 0"' if routing == "Vivaldi" else ""

    def host(name: str) -> str:
        core = rng.choice([1, 1, 2, 4])
        if energy:
            return (f'<host id="{name}"{coords} speed="{SPEEDS}" pstate="0" core="{core}">'
                    f'<prop id="wattage_per_state" value="{WATTS}"/><prop id="wattage_off" value="10"/>'
                    f'<prop id="sleep_pstates" value="2:3:4"/></host>')
        return f'<host id="{name}"{coords} speed="{rng.choice(["100Mf", "50Mf", "200Mf"])}" core="{core}"/>'

    hosts = "".join(host(f"h{i}") for i in range(n))
    master_props = '<prop id="wattage_per_state" value="100:100:200"/><prop id="wattage_off" value="10"/>' if energy else ""
    return ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            f'<platform version="4.1"><zone id="AS0" routing="{routing}">'
            f'<host id="master_host"{coords} speed="100Mf">{master_props}</host>{hosts}</zone></platform>\n'), energy


def workload(rng: random.Random, n: int) -> dict:
    """A Batsim workload for ``n`` hosts."""
    profiles: dict[str, dict] = {}

    def profile() -> str:
        k = rng.random()
        name = f"{len(profiles)}"
        if k < 0.4:
            name, prof = "d" + name, {"type": "delay", "delay": rng.choice([1, 2, 5, 7.5, 10, 0.001, 3.3333])}
        elif k < 0.75:
            name, prof = "p" + name, {"type": "parallel_homogeneous", "cpu": rng.choice([1e6, 1e8, 5e8, 3.3e7]),
                                      "com": rng.choice([0, 0, 1e6, 1e7])}
        elif k < 0.9:
            name, prof = "t" + name, {"type": "parallel_homogeneous_total", "cpu": rng.choice([1e8, 4e8]), "com": 0}
        else:
            seq = [profile(), profile()]
            name, prof = f"c{len(profiles)}", {"type": "composed", "repeat": rng.choice([1, 2]), "seq": seq}
        profiles[name] = prof
        return name

    jobs, t = [], 0.0
    for i in range(rng.randint(3, 25)):
        t += rng.choice([0, 0, 1, 0.5, 2, 0.123456789, 3])
        jobs.append({"id": str(i), "subtime": round(t, 9), "walltime": rng.choice([-1, -1, 3, 10, 50, 1.5]),
                     "res": rng.randint(1, n), "profile": profile()})
    return {"nb_res": n, "jobs": jobs, "profiles": profiles}


def run(args: list[str], out: Path, batsim: bool) -> tuple[int, str]:
    cmd = ["gridsched", "run", *args, "-o", str(out), "--no-progress", "--overwrite"]
    if batsim:
        cmd += ["--engine", "batsim"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return p.returncode, (p.stderr.strip().splitlines() or [""])[-1][:200]


def case(seed: int, root: Path) -> tuple[str, object]:
    """Write and run case ``seed``; return its verdict and detail."""
    rng = random.Random(seed)
    n = rng.randint(1, 6)
    d = root / f"s{seed}"
    d.mkdir(parents=True, exist_ok=True)
    text, energy = platform(rng, n)
    (d / "p.xml").write_text(text)
    (d / "w.json").write_text(json.dumps(workload(rng, n)))
    args = ["--policy", rng.choice(["fcfs", "easy", "conservative"]), "-p", str(d / "p.xml"), "-w", str(d / "w.json")]
    if energy and rng.random() < 0.8:
        args.append("-E")
    if rng.random() < 0.3:
        args.append("--compute-sharing")
    (d / "args.json").write_text(json.dumps(args))
    rb, eb = run(args, d / "batsim", True)
    re_, ee = run(args, d / "engine", False)
    if rb or re_:
        return ("refused", [eb, ee]) if rb and re_ else ("disagree", {"batsim": [rb, eb], "engine": [re_, ee]})
    bad = [f for f in FILES if (d / "batsim" / f).exists() != (d / "engine" / f).exists()
           or ((d / "batsim" / f).exists() and not filecmp.cmp(d / "batsim" / f, d / "engine" / f, shallow=False))]
    return ("differ", bad) if bad else ("equal", None)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=1, help="first seed")
    ap.add_argument("--count", type=int, default=100, help="number of cases")
    ap.add_argument("--out", type=Path, required=True, help="folder for the cases and their outputs")
    args = ap.parse_args(argv)
    summary: dict = {"equal": 0, "differ": {}, "refused": {}, "disagree": {}}
    for seed in range(args.seeds, args.seeds + args.count):
        try:
            verdict, detail = case(seed, args.out)
        except subprocess.TimeoutExpired:
            verdict, detail = "disagree", "timeout"
        if verdict == "equal":
            summary["equal"] += 1
        else:
            summary[verdict][seed] = detail
    print(json.dumps(summary, indent=1))
    return 1 if summary["differ"] or summary["disagree"] else 0


if __name__ == "__main__":
    sys.exit(main())
