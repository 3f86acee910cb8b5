#!/usr/bin/env python3
"""The picture of README.md and of the documentation's home page (``docs/images/main-job.png``):
the first days of the main job (EASY backfilling replaying the KTH-SP2 trace on Grid'5000 Nantes),
as a Gantt chart (which host runs which job) above the number of hosts computing.

Usage (from the project folder)::

    python scripts/make_readme_figure.py                      # runs the main job, then draws
    python scripts/make_readme_figure.py --outputs out/kth-easy   # draws from a run's files

Without ``--outputs`` it runs the README's main job (``gridsched run ... --energy``) into a
temporary folder; without ``../shared`` that job runs the shipped demo scenario instead, and the
picture says which workload it shows.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAIN_JOB = ["run", "--policy", "easy", "--platform", "platforms/g5k_nantes_econome.xml",
            "--workload", "../shared/data/traces/pwa-swf/KTH-SP2-1996-2.1-cln.swf.gz",
            "--fallback-workload", "workloads/demo_nantes.json", "--no-progress"]


def draw(outputs: Path, image: Path, days: float) -> None:
    """Draw the Gantt chart and the busy hosts of the first ``days`` days of the run in
    ``outputs`` (Batsim's ``out_jobs.csv`` and ``out_machine_states.csv``) into ``image`` (PNG).

    Raises:
        FileNotFoundError: a file is missing.
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd
    from matplotlib.collections import PolyCollection
    from procset import ProcSet

    jobs = pd.read_csv(outputs / "out_jobs.csv")
    states = pd.read_csv(outputs / "out_machine_states.csv")
    horizon = days * 86400.0
    hours = 3600.0

    fig, (gantt, busy) = plt.subplots(2, 1, sharex=True, figsize=(10, 5.2),
                                       gridspec_kw={"height_ratios": [2.2, 1]})
    cmap = plt.get_cmap("tab20")
    boxes, colours = [], []
    shown = jobs[(jobs.starting_time < horizon) & (jobs.execution_time > 0)]
    for k, row in enumerate(shown.itertuples()):
        t0, t1 = row.starting_time / hours, min(row.finish_time, horizon) / hours
        for itv in ProcSet.from_str(str(row.allocated_resources)).intervals():
            lo, hi = itv.inf - 0.4, itv.sup + 0.4
            boxes.append([(t0, lo), (t1, lo), (t1, hi), (t0, hi)])
            colours.append(cmap(k % 20))
    gantt.add_collection(PolyCollection(boxes, facecolors=colours, edgecolors="black", linewidths=0.3))
    nb_hosts = int(max((ProcSet.from_str(str(a)).max for a in jobs.allocated_resources), default=0)) + 1
    gantt.set_ylim(-0.7, nb_hosts - 0.3)
    gantt.set_yticks(range(0, nb_hosts, 3))
    gantt.set_ylabel("host id")
    gantt.set_title(f"EASY backfilling on Grid'5000 Nantes ({nb_hosts} hosts): the first {days:g} days "
                    f"of the KTH-SP2 trace ({len(shown):,} jobs shown)", fontsize=10)

    s = states[states.time <= horizon]
    busy.step(s.time / hours, s.nb_computing, where="post", color="tab:blue", linewidth=0.9)
    busy.set_ylabel("hosts computing")
    busy.set_xlabel("simulated time (h)")
    busy.set_ylim(0, nb_hosts + 0.5)
    busy.set_xlim(0, horizon / hours)
    fig.tight_layout()
    image.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(image, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--outputs", type=Path, help="folder of a run with energy (default: run the main job)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "main-job.png", help="PNG to write")
    ap.add_argument("--days", type=float, default=3.0, help="how many simulated days to show (default 3)")
    args = ap.parse_args(argv)
    if args.outputs is not None:
        draw(args.outputs, args.out, args.days)
    else:
        from schedulers.cli import main as gridsched
        with tempfile.TemporaryDirectory() as tmp:
            import os
            os.chdir(ROOT)
            code = gridsched([*MAIN_JOB, "--output", str(Path(tmp) / "run")])
            if code:
                return code
            draw(Path(tmp) / "run", args.out, args.days)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
