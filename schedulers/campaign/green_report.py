"""``python -m schedulers.campaign.green_report OUT_DIR``: the green heuristic's Tables 2-3 and Fig. 9.

Reads a finished ``campaigns/green_nantes*.toml`` campaign folder (``runs.csv`` is collected when
missing) and writes ``OUT_DIR/report_green.md`` and ``OUT_DIR/fig9.png``: our energies per
algorithm, Δ, job count and CPU load beside the paper's Table 2, the time of the best and worst
energy case beside Table 3, the paper's claims checked on our numbers, and energy reduction
against makespan reduction (Fig. 9). Source of the paper's numbers:
``../shared/papers/004_256d972a5ab7dee1.txt`` Table 2 (L220-244), Table 3 (L254-263), claims
L246-250 and L285.

Energy readings (see :mod:`schedulers.core.energy_readings`): ``total`` (Batsim's platform energy,
every host from time 0), ``jobs`` (sum of the jobs' ``consumed_energy``), ``unused off`` (the
total with the hosts no job used at 10 W instead of 100 W). Every table is given for the reading
named on the command line (``--reading``, default ``jobs``); the magnitude section compares all
three to the paper.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import pandas as pd

from .collect import collect
from .errors import CampaignError

DELTAS = (0, 10, 20, 30, 40, 50)
#: 004 Table 2 (L225-243): energy (J) per CPU load (%) and job count, columns EASY/HEFT for
#: Δ = 0, 10, ..., 50 (EASY Δ0, HEFT Δ0, EASY Δ10, ...).
PAPER_T2: dict[tuple[int, int], tuple[float, ...]] = {
    (100, 10): (16.2e3, 15.2e3, 15.9e3, 13.9e3, 15.0e3, 13.5e3, 14.9e3, 13.2e3, 15.1e3, 13.1e3, 15.3e3, 13.1e3),
    (100, 20): (32.6e3, 31.5e3, 30.5e3, 29.7e3, 30.2e3, 29.6e3, 30.2e3, 29.1e3, 31.1e3, 29.3e3, 31.9e3, 29.5e3),
    (100, 100): (163.9e3, 163.5e3, 158.2e3, 159.9e3, 158.5e3, 159.9e3, 159.8e3, 160.3e3, 161.2e3, 161.5e3, 162.9e3, 161.7e3),
    (100, 1000): (1.7e6, 1.9e6, 1.6e6, 1.8e6, 1.6e6, 1.8e6, 1.6e6, 1.8e6, 1.6e6, 1.8e6, 1.6e6, 1.9e6),
    (100, 3500): (21.7e6, 23.9e6, 20.2e6, 22.3e6, 20.3e6, 22.5e6, 20.6e6, 22.8e6, 21.3e6, 23.5e6, 21.8e6, 24.5e6),
    (100, 7500): (39.5e9, 42.0e9, 38.9e9, 39.7e9, 39.5e9, 41.9e9, 40.0e9, 43.7e9, 40.1e9, 43.9e9, 41.8e9, 45.0e9),
    (75, 10): (16.1e3, 15.0e3, 15.2e3, 13.2e3, 14.9e3, 12.9e3, 14.2e3, 12.9e3, 16.0e3, 13.0e3, 15.8e3, 14.0e3),
    (75, 20): (31.5e3, 31.0e3, 29.9e3, 28.3e3, 30.0e3, 29.2e3, 30.1e3, 28.9e3, 30.9e3, 29.2e3, 30.7e3, 29.4e3),
    (75, 100): (159.2e3, 161.2e3, 157.2e3, 159.3e3, 157.3e3, 159.6e3, 158.1e3, 160.0e3, 159.9e3, 160.4e3, 161.0e3, 161.0e3),
    (75, 1000): (1.5e6, 1.8e6, 1.4e6, 1.7e6, 1.4e6, 1.7e6, 1.4e6, 1.7e6, 1.5e6, 1.7e6, 1.5e6, 1.8e6),
    (75, 3500): (19.8e6, 22.3e6, 17.9e6, 21.5e6, 17.9e6, 21.8e6, 18.2e6, 22.1e6, 18.3e6, 22.1e6, 19.1e6, 22.9e6),
    (75, 7500): (38.9e9, 41.3e9, 37.9e9, 38.2e9, 37.9e9, 38.2e9, 38.0e9, 39.9e9, 38.8e9, 40.9e9, 39.2e9, 41.8e9),
    (50, 10): (15.9e3, 14.9e3, 15.1e3, 13.1e3, 14.0e3, 11.9e3, 14.1e3, 12.2e3, 15.0e3, 13.0e3, 15.2e3, 14.2e3),
    (50, 20): (30.8e3, 29.9e3, 29.5e3, 28.0e3, 29.1e3, 28.8e3, 29.9e3, 28.7e3, 30.2e3, 29.0e3, 30.2e3, 29.1e3),
    (50, 100): (156.3e3, 158.2e3, 153.4e3, 156.1e3, 153.5e3, 156.8e3, 154.9e3, 157.2e3, 155.0e3, 157.9e3, 155.9e3, 158.5e3),
    (50, 1000): (1.3e6, 1.7e6, 1.1e6, 1.6e6, 1.2e6, 1.6e6, 1.2e6, 1.6e6, 1.2e6, 1.7e6, 1.3e6, 1.8e6),
    (50, 3500): (17.6e6, 20.1e6, 16.2e6, 19.5e6, 16.3e6, 19.9e6, 16.8e6, 19.9e6, 17.2e6, 20.4e6, 17.5e6, 20.5e6),
    (50, 7500): (36.8e9, 41.0e9, 35.8e9, 39.3e9, 35.9e9, 39.9e9, 36.2e9, 39.8e9, 36.9e9, 40.8e9, 37.0e9, 41.8e9),
}
#: 004 Table 3 (L258-263), load 100 %: jobs -> (worst case, its time, best case, its time, % less);
#: times as printed ("536d" and "1.157d" in days; 536 d is what the text prints).
PAPER_T3 = {10: ("EASY 0%", "37.0 s", "HEFT 40%", "34.4 s", 7), 20: ("EASY 0%", "52.9 s", "HEFT 30%", "50.3 s", 5),
            100: ("EASY 0%", "260.2 s", "EASY 10%", "258.1 s", 1),
            1000: ("HEFT 0%", "2145.8 s", "EASY 10%", "1462.8 s", 32),
            3500: ("HEFT 50%", "536 d", "EASY 10%", "465 d", 14), 7500: ("HEFT 50%", "1.157 d", "EASY 10%", "1.090 d", 6)}
READINGS = ("total", "jobs", "unused off")
HOSTS, P_IDLE, P_OFF = 22, 100.0, 10.0


def _paper_cases(load: int, jobs: int) -> dict[tuple[str, int], float]:
    vals = PAPER_T2[(load, jobs)]
    return {(alg, d): vals[2 * i + k] for i, d in enumerate(DELTAS) for k, alg in enumerate(("EASY", "HEFT"))}


def load_runs(out_dir: Path, reading: str) -> pd.DataFrame:
    """Done runs with columns policy, job_count, cpu_load, delta, makespan and ``energy`` (J, in
    the given reading).

    Raises:
        CampaignError: no runs.csv can be made, or columns of the green campaign are missing.
    """
    if not (out_dir / "runs.csv").exists():
        collect(out_dir)
    t = pd.read_csv(out_dir / "runs.csv")
    need = {"policy", "job_count", "cpu_load", "delta", "makespan", "energy_joules", "jobs_energy_j",
            "hosts_used", "end_time", "status"}
    if not need <= set(t.columns):
        raise CampaignError(f"{out_dir}/runs.csv: not a green_nantes campaign (missing "
                            f"{', '.join(sorted(need - set(t.columns)))})")
    t = t[t.status == "done"].copy()
    t["total"] = t.energy_joules
    t["jobs"] = t.jobs_energy_j
    t["unused off"] = t.energy_joules - (HOSTS - t.hosts_used) * (P_IDLE - P_OFF) * t.end_time
    t["energy"] = t[reading]
    return t


def _fmt(x: float) -> str:
    if not math.isfinite(x):
        return ""
    e = int(math.floor(math.log10(abs(x)) / 3) * 3) if x else 0
    return f"{x / 10 ** e:.1f}e{e}"


def _cases(t: pd.DataFrame, load: int, jobs: int, col: str = "energy") -> dict[tuple[str, int], float]:
    g = t[(t.cpu_load == load) & (t.job_count == jobs)].groupby(["policy", "delta"])[col].mean()
    return {(p, int(d)): float(v) for (p, d), v in g.items()}


def _extremes(cases: dict) -> tuple[tuple, tuple]:
    """(best key, worst key); ties to the lower Δ (004 L246)."""
    keys = sorted(cases, key=lambda k: (k[1], k[0]))
    return min(keys, key=lambda k: cases[k]), max(keys, key=lambda k: cases[k])


def build(out_dir: Path, reading: str) -> Path:
    """Write ``report_green.md`` and ``fig9.png`` in ``out_dir``; returns the report's path."""
    t = load_runs(out_dir, reading)
    groups = sorted({(int(l), int(j)) for l, j in zip(t.cpu_load, t.job_count)}, key=lambda x: (-x[0], x[1]))
    head = ["load %", "jobs", "source"] + [f"{a} {d}" for d in DELTAS for a in ("EASY", "HEFT")] + ["min", "max"]
    lines = [f"# Green heuristic on Nantes econome: our runs beside 004 (reading: {reading})", "",
             f"Runs: {len(t)} done, from `{out_dir}`; job counts {sorted(set(t.job_count))}, loads "
             f"{sorted(set(t.cpu_load))} %, Δ {sorted(set(t.delta))} %.", "",
             "## Table 2: energy (J)", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rows3, pts, claims = [], [], {"easy10_min": 0, "cases": 0, "big": 0, "big_easy10": 0, "worst_0_50": 0}
    for load, jobs in groups:
        ours = _cases(t, load, jobs)
        best, worst = _extremes(ours)
        row = [str(load), str(jobs), "ours"] + [_fmt(ours.get((a, d), math.nan)) for d in DELTAS for a in ("EASY", "HEFT")]
        lines.append("| " + " | ".join(row + [f"{best[0]} {best[1]}", f"{worst[0]} {worst[1]}"]) + " |")
        if (load, jobs) in PAPER_T2:
            pc = _paper_cases(load, jobs)
            pb, pw = _extremes(pc)
            prow = [str(load), str(jobs), "paper"] + [_fmt(pc[(a, d)]) for d in DELTAS for a in ("EASY", "HEFT")]
            lines.append("| " + " | ".join(prow + [f"{pb[0]} {pb[1]}", f"{pw[0]} {pw[1]}"]) + " |")
        times = _cases(t, load, jobs, "makespan")
        e_red = 100 * (ours[worst] - ours[best]) / ours[worst]
        t_red = 100 * (times[worst] - times[best]) / times[worst]
        rows3.append([str(load), str(jobs), f"{worst[0]} {worst[1]}%", f"{times[worst]:.1f} s", f"{best[0]} {best[1]}%",
                      f"{times[best]:.1f} s", f"{t_red:.0f}", f"{e_red:.0f}"]
                     + (list(map(str, PAPER_T3[jobs])) if load == 100 and jobs in PAPER_T3 else [""] * 5))
        pts.append((jobs, load, e_red, t_red))
        claims["cases"] += 1
        claims["easy10_min"] += best == ("EASY", 10)
        claims["worst_0_50"] += worst[1] in (0, 50)
        if jobs > 100:
            claims["big"] += 1
            claims["big_easy10"] += best == ("EASY", 10)
    lines += ["", "min/max: the best and worst (algorithm, Δ) of the row (ties to the lower Δ, as 004 L246).", "",
              "## Table 3: makespan of the worst and best energy case", "",
              "| load % | jobs | worst | its makespan | best | its makespan | time % less | energy % less "
              "| paper worst | paper time | paper best | paper time | paper % |", "|" + "---|" * 13]
    lines += ["| " + " | ".join(r) + " |" for r in rows3]
    e = [p[2] for p in pts]
    ti = [p[3] for p in pts]
    n = max(claims["cases"], 1)
    lines += ["", "## The paper's claims on our numbers", "",
              f"- EASY Δ = 10 % gives the lowest energy in {claims['easy10_min']} of {claims['cases']} cases "
              f"({100 * claims['easy10_min'] / n:.0f} %; paper: 67 %, L250/L285).",
              f"- ... and in {claims['big_easy10']} of {claims['big']} cases of more than 100 jobs (paper: all, L250).",
              f"- The worst case has Δ = 0 or 50 % in {claims['worst_0_50']} of {claims['cases']} cases (paper: all but "
              f"three extremes are at the sides, L246-248).",
              f"- Energy saving best vs worst: {min(e):.1f} - {max(e):.1f} % (paper: 2 - 49 %, L250).",
              f"- Makespan saving best vs worst energy case: {min(ti):.1f} - {max(ti):.1f} % (paper: 1 - 32 %, L263-267).",
              "", "## Magnitudes: which energy reading is near the paper's", "",
              "Median over the rows of ours / paper for EASY Δ = 0 (1.0 = same magnitude):", ""]
    for r in READINGS:
        tr = load_runs(out_dir, r)
        ratios = [_cases(tr, l, j).get(("EASY", 0), math.nan) / PAPER_T2[(l, j)][0] for l, j in groups if (l, j) in PAPER_T2]
        s = pd.Series(ratios).dropna()
        lines.append(f"- {r}: median {s.median():.2f}, range {s.min():.2f} - {s.max():.2f}" if len(s) else f"- {r}: no rows")
    lines += ["", "![Fig. 9](fig9.png)", ""]
    _plot(out_dir / "fig9.png", pts)
    out = out_dir / "report_green.md"
    out.write_text("\n".join(lines), encoding="utf-8")
    return out


def _plot(path: Path, pts: list[tuple]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for load, mark in ((100, "o"), (75, "s"), (50, "^")):
        sel = [p for p in pts if p[1] == load]
        ax.scatter([p[2] for p in sel], [p[3] for p in sel], marker=mark, label=f"ours, load {load} %")
        for p in sel:
            ax.annotate(str(p[0]), (p[2], p[3]), fontsize=7)
    paper = []
    for (load, jobs), vals in PAPER_T2.items():
        if load == 100:
            paper.append((100 * (max(vals) - min(vals)) / max(vals), PAPER_T3[jobs][4], jobs))
    ax.scatter([p[0] for p in paper], [p[1] for p in paper], marker="x", color="k", label="paper, load 100 %")
    for p in paper:
        ax.annotate(str(p[2]), (p[0], p[1]), fontsize=7)
    ax.set_xlabel("energy reduction, worst vs best case (%)")
    ax.set_ylabel("makespan reduction (%)")
    ax.set_title("Energy vs makespan reduction (cf. 004 Fig. 9)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``OUT_DIR [--reading total|jobs|unused off]``; errors are one line."""
    ap = argparse.ArgumentParser(prog="python -m schedulers.campaign.green_report", description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--reading", choices=READINGS, default="jobs")
    args = ap.parse_args(argv)
    try:
        print(f"wrote {build(args.out_dir, args.reading)}")
    except (CampaignError, OSError, ValueError) as exc:
        print(f"green_report: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
