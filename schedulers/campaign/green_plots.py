"""Figures of the green-heuristic report (PNG): Fig. 9's energy against makespan, the arrival-rate
sweep and the energy of each Δ, each with one panel per node model and one for the paper (the
scales differ by orders of magnitude, so they never share an axis).

Inputs are the tables of :mod:`.green_analysis` (settings: one row per parameter set, means and
95 % intervals over seeds); the paper's points come from :mod:`.green_paper` and are drawn only for
the job counts and loads that were run.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .green_paper import ALGS, DELTAS, PAPER_T3, paper_case, paper_spread

__all__ = ["plot_fig9", "plot_arrival", "plot_delta", "MODELS"]

#: Node models: host_cores -> panel title.
MODELS = {16: "16 cores per node (no slowdown)", 1: "contention model (1 core per node)"}
_MARKERS = {10: "o", 20: "s", 100: "^", 1000: "D", 3500: "v", 7500: "P"}
_LOADS = {100: "tab:red", 75: "tab:orange", 50: "tab:blue"}


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _err(s: pd.DataFrame, col: str):
    lo = (s[f"{col}_mean"] - s[f"{col}_low"]).fillna(0).clip(lower=0)
    hi = (s[f"{col}_high"] - s[f"{col}_mean"]).fillna(0).clip(lower=0)
    return [lo.to_numpy(), hi.to_numpy()]


def plot_fig9(settings: pd.DataFrame, path: Path) -> Path | None:
    """Energy spread (common window) against the makespan the best energy case saves over the
    worst, per job count (marker) and CPU load (colour), panels per node model plus the paper's
    Table 2-3 points (100 % load; Table 3 gives times for that load only). None (nothing
    written) without settings."""
    if settings.empty:
        return None
    plt = _plt()
    from matplotlib.patches import Patch
    models = [m for m in MODELS if (settings.host_cores == m).any()]
    fig, axes = plt.subplots(1, len(models) + 1, figsize=(4.2 * (len(models) + 1), 4.2))
    for ax, m in zip(axes, models):
        s = settings[settings.host_cores == m]
        for (jobs, load), g in s.groupby(["job_count", "cpu_load"]):
            ax.errorbar(g.spread_win_mean, g.spread_t_mean, xerr=_err(g, "spread_win"), yerr=_err(g, "spread_t"),
                        fmt=_MARKERS.get(int(jobs), "o"), color=_LOADS.get(int(load), "k"), ms=6, capsize=2,
                        alpha=0.85, linestyle="none")
        ax.axhline(0, color="0.7", lw=0.8)
        at0 = s[(s.spread_win_mean.abs() < 1e-9) & (s.spread_t_mean.abs() < 1e-9)]
        if len(at0) > 1:
            jobs0 = ", ".join(f"{int(j):,}" for j in sorted(set(at0.job_count)))
            loads0 = "every load" if set(at0.cpu_load) == set(s.cpu_load) else \
                ", ".join(f"{int(x)}" for x in sorted(set(at0.cpu_load), reverse=True)) + " % load"
            ax.annotate(f"at (0, 0): {jobs0} jobs,\n{loads0} (all 12 runs equal)", (0, 0), xytext=(0.05, 0.12),
                        textcoords="axes fraction", fontsize=7, color="0.3",
                        arrowprops={"arrowstyle": "-", "color": "0.6", "lw": 0.6})
        ax.set_title(f"ours: {MODELS[m]}", fontsize=9)
        ax.set_xlabel("energy saved, best vs worst case (%)")
    run_jobs = set(int(j) for j in settings.job_count)
    ax = axes[-1]
    for jobs in sorted(run_jobs & set(PAPER_T3)):
        ax.plot(paper_spread(100, jobs), PAPER_T3[jobs][4], _MARKERS[jobs], color=_LOADS[100], ms=6, linestyle="none")
    ax.set_title("paper (Tables 2 and 3, 100 % load)", fontsize=9)
    ax.set_xlabel("energy saved, best vs worst case (%)")
    axes[0].set_ylabel("makespan saved by the best energy case (%)")
    handles = [plt.Line2D([], [], marker=_MARKERS[j], color="0.3", linestyle="none", label=f"{j:,} jobs")
               for j in sorted(run_jobs)]
    handles += [Patch(color=c, label=f"{load} % CPU load") for load, c in _LOADS.items()
                if (settings.cpu_load == load).any()]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    fig.suptitle("Energy against makespan reduction (cf. the paper's Fig. 9); bars: 95 % intervals over seeds",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_arrival(settings: pd.DataFrame, path: Path) -> Path | None:
    """Against the offered load, per job count: the energy spread (common window, top row) and the
    makespan room (bottom row), one column per node model (the two quantities differ by an order
    of magnitude, so they get their own axes). None (nothing written) without a sweep."""
    if settings.empty or settings.offered_load.nunique() < 2:
        return None
    plt = _plt()
    models = [m for m in MODELS if (settings.host_cores == m).any()]
    fig, axes = plt.subplots(2, len(models), figsize=(5.2 * len(models), 6.4), squeeze=False, sharex=True)
    colours = {10: "tab:olive", 20: "tab:cyan", 100: "tab:green", 1000: "tab:purple"}
    for col, m in enumerate(models):
        s = settings[settings.host_cores == m].sort_values("offered_load")
        for jobs, g in s.groupby("job_count"):
            c = colours.get(int(jobs), "k")
            axes[0][col].errorbar(g.offered_load, g.spread_win_mean, yerr=_err(g, "spread_win"), color=c, marker="o",
                                  capsize=2, label=f"{int(jobs):,} jobs")
            axes[1][col].errorbar(g.offered_load, g.room_mean, yerr=_err(g, "room"), color=c, marker="o",
                                  capsize=2)
        axes[0][col].set_title(MODELS[m], fontsize=9)
        axes[1][col].set_xlabel("offered load (node-seconds of work per node-second)")
        for ax in (axes[0][col], axes[1][col]):
            ax.set_ylim(bottom=0)
    axes[0][0].set_ylabel("energy saved, best vs worst (%)")
    axes[1][0].set_ylabel("makespan room of plain EASY (%)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.suptitle("What the heuristic saves (common window) and what any schedule could, 100 % CPU load; "
                 "bars: 95 % intervals", fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_delta(configs: pd.DataFrame, path: Path, jobs: tuple[int, ...] = (1000, 3500, 7500),
               load: int = 100) -> Path | None:
    """Energy of each (algorithm, Δ) against plain EASY (%), for the large sets at ``load`` % (or
    the largest job count run, when none of ``jobs`` was): one panel per node model (common
    window, mean over seeds) and one for the paper's Table 2. None (nothing written) without runs
    at ``load``."""
    c = configs[configs.cpu_load == load]
    if c.empty:
        return None
    if not c.job_count.isin(jobs).any():
        jobs = (int(c.job_count.max()),)
    plt = _plt()
    c = c[c.job_count.isin(jobs)]
    models = [m for m in MODELS if (c.host_cores == m).any()]
    fig, axes = plt.subplots(1, len(models) + 1, figsize=(4.2 * (len(models) + 1), 4.2))
    colours = {1000: "tab:purple", 3500: "tab:brown", 7500: "tab:gray"}
    styles = {"EASY": "-", "HEFT": "--"}
    for ax, m in zip(axes, models):
        for (j, alg), g in c[c.host_cores == m].groupby(["job_count", "alg"]):
            g = g.sort_values("delta")
            ax.plot(g.delta, g.rel_win, styles[alg], marker="o", ms=4, color=colours.get(int(j), "k"))
        ax.set_title(f"ours: {MODELS[m]}", fontsize=9)
    ran = sorted(set(int(j) for j in c.job_count))
    for j in ran:
        row = paper_case(load, j)
        for alg in ALGS:
            ax = axes[-1]
            ax.plot(DELTAS, [100 * (row[(alg, d)] / row[("EASY", 0)] - 1) for d in DELTAS], styles[alg], marker="o",
                    ms=4, color=colours.get(j, "k"))
    axes[-1].set_title(f"paper (Table 2, {load} % load)", fontsize=9)
    for ax in axes:
        ax.set_xlabel("overlap rate Δ (%)")
        ax.axhline(0, color="0.7", lw=0.8)
    axes[0].set_ylabel("energy against plain EASY (%)")
    handles = [plt.Line2D([], [], color=colours.get(j, "k"), label=f"{j:,} jobs") for j in ran]
    handles += [plt.Line2D([], [], color="0.3", linestyle=s, label=a) for a, s in styles.items()]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    fig.suptitle(f"Energy of each overlap rate against plain EASY, {load} % CPU load", fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
