"""Power in use per user over time, and its plot (the "usage rate" charts of 001 Figs. 15-18).

Source: the monograph (``shared/papers/001_e7d938ca075b7e80.txt``) §5.5.3 L644-646 and Figs.
15-18 (L659-668): "usage charts, which show how the grid's computing power was divided among the
users" over one run. Here: ``Allocated_u(t)``, the total power (flops/s) of the hosts running
``u``'s jobs at time ``t`` (000 eq. 3's ``Allocated``), rebuilt from ``out_jobs.csv`` (each
executed row holds its hosts from ``starting_time`` to ``finish_time``, killed runs included) by
replaying the rows through :class:`~schedulers.core.ownership.Ownership`, so that the timeline
uses the policies' own accounting (host power = nominal speed x cores; a shared host split
between its jobs). PowerDiff over time comes with it.

Plots use :class:`matplotlib.figure.Figure` (no pyplot, no global backend; PNG through Agg).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from .model import Job
from .ownership import Ownership
from .run_outputs import RunFiles, load_run, task_key

__all__ = ["UsageTimeline", "usage_timeline", "plot_power_usage", "save_figure", "plot_run_usage"]


@dataclass
class UsageTimeline:
    """Step functions over ``times`` (s, increasing): value ``k`` holds on ``[times[k], times[k+1])``.

    Attributes:
        times: event instants (s), starting at 0.
        allocated: per user, ``Allocated_u`` (flops/s) after the events of each instant.
        power_diff: per user, PowerDiff (dimensionless, ``inf`` for a non-owner using hosts).
        provided: per user, ``Provided_u`` (flops/s).
        total: the grid's power (flops/s).
    """

    times: np.ndarray
    allocated: dict[str, np.ndarray]
    power_diff: dict[str, np.ndarray]
    provided: dict[str, float]
    total: float

    def at(self, user: str, t: float) -> float:
        """``Allocated_user`` at time ``t`` (flops/s; 0 before the first instant)."""
        k = int(np.searchsorted(self.times, t, side="right")) - 1
        return 0.0 if k < 0 else float(self.allocated[user][k])


def usage_timeline(run: RunFiles) -> UsageTimeline:
    """Replay the executed rows of ``run`` (ends before starts at equal times) and record every
    user's allocated power and PowerDiff after each instant."""
    own = Ownership(run.hosts, users=sorted({t.user for t in run.tasks.values()}))
    events: list[tuple[float, int, int, Job]] = []
    for k, r in enumerate(run.runs):
        if not r.hosts or np.isnan(r.start):
            continue  # rejected
        user = run.tasks[task_key(r.workload, r.job_id, run.tasks)].user
        job = Job(id=r.id, workload=r.workload, subtime=r.start, walltime=-1.0, res=len(r.hosts),
                  profile="", extra={"user": user})
        events.append((r.start, 1, k, job))
        events.append((r.finish, 0, k, job))
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    users = own.users
    times = [0.0]
    alloc: dict[str, list[float]] = {u: [0.0] for u in users}
    pdiff: dict[str, list[float]] = {u: [own.power_diff(u)] for u in users}
    i = 0
    while i < len(events):
        t = events[i][0]
        while i < len(events) and events[i][0] == t:
            _, kind, k, job = events[i]
            if kind:
                own.start(job, run.runs[k].hosts)
            else:
                own.end(job)
            i += 1
        if t != times[-1]:
            times.append(t)
            for u in users:
                alloc[u].append(0.0)
                pdiff[u].append(0.0)
        for u in users:
            alloc[u][-1] = own.allocated(u)
            pdiff[u][-1] = own.power_diff(u)
    return UsageTimeline(np.asarray(times), {u: np.asarray(v) for u, v in alloc.items()},
                         {u: np.asarray(v) for u, v in pdiff.items()},
                         {u: own.provided(u) for u in users}, own.total_power)


def plot_power_usage(timeline: UsageTimeline, *, relative: bool = False, stacked: bool = False,
                     shares: bool = True, title: str | None = None) -> Figure:
    """Power in use per user over time, one step line per user (001 Figs. 15-18).

    Args:
        relative: y in % of the grid's power instead of Gflop/s.
        stacked: stack the users (areas) instead of overlaid lines.
        shares: draw each owner's ``Provided_u`` as a dashed line of its colour (not stacked).
        title: figure title (default: a description).

    Returns:
        The figure (time in hours on x).
    """
    fig = Figure(figsize=(9, 4.5))
    ax = fig.add_subplot()
    scale = 100.0 / timeline.total if relative else 1e-9
    hours = timeline.times / 3600.0
    colors = [f"C{i % 10}" for i in range(len(timeline.allocated))]
    base = np.zeros(len(hours))
    for (user, values), color in zip(timeline.allocated.items(), colors):
        y = values * scale
        if stacked:
            ax.fill_between(hours, base, base + y, step="post", color=color, alpha=0.7, label=user, linewidth=0)
            base = base + y
        else:
            ax.step(hours, y, where="post", color=color, label=user)
            if shares and timeline.provided[user] > 0:
                ax.axhline(timeline.provided[user] * scale, color=color, linestyle="--", linewidth=0.8, alpha=0.8)
    ax.set_xlabel("time (h)")
    ax.set_ylabel("power in use (% of the grid)" if relative else "power in use (Gflop/s)")
    ax.set_title(title if title is not None else
                 "power in use per user" + ("" if stacked or not shares else " (dashed: the user's share)"))
    ax.set_xlim(left=0.0)
    ax.set_ylim(bottom=0.0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)   # outside: covers no line
    fig.tight_layout()
    return fig


def save_figure(fig: Figure, out: str | Path, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Write ``fig`` as ``out.png`` and ``out.svg`` (folders created; SVG without a date, so that
    the same run gives the same file). Returns the paths.

    Raises:
        ValueError: a format other than png or svg.
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        if fmt not in ("png", "svg"):
            raise ValueError(f"figure format must be png or svg, got {fmt!r}")
        path = out.parent / f"{out.name}.{fmt}"
        with matplotlib.rc_context({"svg.hashsalt": "gridsched"}):  # fixed ids instead of uuid4 salts
            fig.savefig(path, format=fmt, metadata={"Date": None} if fmt == "svg" else None, bbox_inches="tight")
        paths.append(path)
    return paths


def plot_run_usage(out_jobs: str | Path, workloads: list[str | Path | dict], platform: str | Path,
                   out: str | Path, **kwargs) -> list[Path]:
    """Read a run's files, plot its power usage (``kwargs`` go to :func:`plot_power_usage`) and
    write ``out.png`` and ``out.svg``. Returns the paths.

    Raises:
        OutputsError, PlatformError: see :func:`~schedulers.core.run_outputs.load_run`.
    """
    return save_figure(plot_power_usage(usage_timeline(load_run(out_jobs, workloads, platform)), **kwargs), out)
