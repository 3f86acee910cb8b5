"""Charts of a campaign summary (:func:`.collect.summarize`): the mean of a metric per group with
its 95 % confidence interval, as grouped bars or lines.

Figures are drawn with :class:`matplotlib.figure.Figure` (no pyplot, no global backend change;
PNG goes through Agg, SVG through the SVG backend).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .collect import scalar, sort_key
from .errors import CampaignError

#: Axis labels (with units) of the known metrics; others are labelled by their name.
METRIC_LABELS = {
    "jobs": "jobs",
    "success": "successful jobs",
    "killed": "killed jobs",
    "rejected": "rejected jobs",
    "makespan": "makespan (s)",
    "mean_waiting_time": "mean waiting time (s)",
    "max_waiting_time": "max waiting time (s)",
    "mean_bounded_slowdown": "mean bounded slowdown (tau = 10 s)",
    "utilisation": "utilisation (fraction of host time)",
    "energy_joules": "energy (J)",
    "energy_kwh": "energy (kWh)",
    "wall_time_s": "wall-clock time of the run (s)",
}
FORMATS = ("png", "svg")


def metric_label(metric: str) -> str:
    """The axis label of a metric, with its unit when known (``policy.x`` -> ``policy: x``)."""
    if metric.startswith("policy."):
        return f"policy: {metric[len('policy.'):]}"
    return METRIC_LABELS.get(metric, metric)


def group_columns(summary: pd.DataFrame) -> list[str]:
    """The group columns of a summary: those before ``n``."""
    cols = list(summary.columns)
    if "n" not in cols:
        raise CampaignError("not a campaign summary: no 'n' column")
    return cols[:cols.index("n")]


def summary_metrics(summary: pd.DataFrame) -> list[str]:
    """The metrics of a summary (``<m>`` for every ``<m>_mean`` column)."""
    return [c[:-len("_mean")] for c in summary.columns if c.endswith("_mean")]


def _check(summary: pd.DataFrame, metric: str, x: str, hue: str | None) -> list[str]:
    groups = group_columns(summary)
    metrics = summary_metrics(summary)
    if metric not in metrics:
        raise CampaignError(f"plot: unknown metric {metric!r}; available: {', '.join(metrics)}")
    for role, col in (("x", x), ("hue", hue)):
        if col is not None and col not in groups:
            raise CampaignError(f"plot: {role} {col!r} is not a group column; available: {', '.join(groups)}")
    if hue is not None and hue == x:
        raise CampaignError(f"plot: x and hue are both {x!r}")
    if not summary[f"{metric}_mean"].notna().any():
        raise CampaignError(f"plot: {metric} has no value in any group (no done run reports it)")
    return groups


def _fmt(v: Any) -> str:
    v = scalar(v)
    return "(none)" if v is None else str(v)


def _series(summary: pd.DataFrame, groups: list[str], metric: str, x: str, hue: str | None):
    """``[(label, rows)]``: one series per value of ``hue`` and of the other group columns that
    vary (so that no two rows of a series share an ``x``), each with its rows. A column that
    varies only with ``x`` (a ``[zip]`` partner of ``x``: one value, or none, per value of ``x``)
    makes no series of its own."""
    def follows_x(c: str) -> bool:
        known = summary[summary[c].notna() & summary[x].notna()]
        return bool((known.groupby(x)[c].nunique() <= 1).all())
    varying = [c for c in groups if c != x and c != hue and summary[c].nunique(dropna=False) > 1
               and not follows_x(c)]
    keys = ([hue] if hue else []) + varying
    out: dict[tuple, list[int]] = {}
    for i in range(len(summary)):
        out.setdefault(tuple(scalar(summary[c].iat[i]) for c in keys), []).append(i)
    series = []
    for key in sorted(out, key=lambda k: tuple(sort_key(v) for v in k)):
        if not keys:
            label = metric
        elif len(keys) == 1:
            label = _fmt(key[0])
        else:
            label = ", ".join(f"{c}={_fmt(v)}" for c, v in zip(keys, key))
        series.append((label, summary.iloc[out[key]]))
    return series


def _errors(rows: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Means and ``[[below], [above]]`` error lengths (NaN where the CI is undefined)."""
    mean = rows[f"{metric}_mean"].to_numpy(dtype=float)
    low = mean - rows[f"{metric}_ci95_low"].to_numpy(dtype=float)
    high = rows[f"{metric}_ci95_high"].to_numpy(dtype=float) - mean
    return mean, np.vstack([low, high])


def _save(fig: Figure, out: str | Path, formats: Sequence[str]) -> list[Path]:
    paths = []
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for fmt in formats:
        if fmt not in FORMATS:
            raise CampaignError(f"plot: unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
        path = out.parent / f"{out.name}.{fmt}"
        fig.savefig(path, format=fmt, metadata={"Date": None} if fmt == "svg" else None)
        paths.append(path)
    return paths


def _finish(fig: Figure, ax, metric: str, x: str, title: str | None, legend: bool) -> None:
    ax.set_xlabel(x)
    ax.set_ylabel(metric_label(metric))
    ax.set_title(title if title is not None else f"{metric_label(metric)} by {x} (mean, 95 % CI)")
    if legend:
        ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()


def plot_bars(summary: pd.DataFrame, metric: str, x: str, hue: str | None = None, *,
              out: str | Path, formats: Sequence[str] = FORMATS, title: str | None = None) -> list[Path]:
    """Grouped bar chart of ``<metric>_mean`` per value of ``x`` (one bar per ``hue`` value and
    per value of any other varying group column), with the 95 % CI as error bars (none where
    n = 1). Groups without a value have no bar.

    Args:
        summary: a :func:`.collect.summarize` table.
        metric: a metric name (``makespan``, ``policy.backfilled_jobs``...), without ``_mean``.
        x, hue: group columns.
        out: path of the figure without extension; ``out.png``, ``out.svg``... are written
            (parent folders created).
        formats: among ``png`` and ``svg``.

    Returns:
        The written paths, in ``formats`` order.

    Raises:
        CampaignError: ``metric``, ``x`` or ``hue`` is not in the summary (the message lists the
            available ones), the metric has no value at all, an unknown format.
    """
    groups = _check(summary, metric, x, hue)
    cats = sorted({scalar(v) for v in summary[x]}, key=sort_key)
    series = _series(summary, groups, metric, x, hue)
    fig = Figure(figsize=(max(6.0, 1.2 * len(cats) * max(1, len(series)) ** 0.5), 4.5))
    ax = fig.add_subplot()
    width = 0.8 / len(series)
    for j, (label, rows) in enumerate(series):
        shift = (j - (len(series) - 1) / 2) * width
        pos = np.array([cats.index(scalar(v)) for v in rows[x]], dtype=float) + shift
        mean, err = _errors(rows, metric)
        ok = ~np.isnan(mean)
        ax.bar(pos[ok], mean[ok], width, label=label)
        ci = ok & ~np.isnan(err).any(axis=0)
        if ci.any():
            ax.errorbar(pos[ci], mean[ci], yerr=err[:, ci], fmt="none", ecolor="black", capsize=3)
    ax.set_xticks(range(len(cats)), [_fmt(c) for c in cats])
    _finish(fig, ax, metric, x, title, legend=len(series) > 1 or hue is not None)
    return _save(fig, out, formats)


def plot_lines(summary: pd.DataFrame, metric: str, x: str, hue: str | None = None, *,
               out: str | Path, formats: Sequence[str] = FORMATS, title: str | None = None) -> list[Path]:
    """Line plot of ``<metric>_mean`` against a numeric group column ``x`` (one line per ``hue``
    value and per value of any other varying group column), with the 95 % CI shaded (no band
    where n = 1). Arguments, return value and errors as :func:`plot_bars`; also
    CampaignError when ``x`` is not numeric.
    """
    groups = _check(summary, metric, x, hue)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool)
               for v in (scalar(c) for c in summary[x]) if v is not None):
        raise CampaignError(f"plot: line plots need a numeric x; {x!r} has non-numeric values")
    fig = Figure(figsize=(6.5, 4.5))
    ax = fig.add_subplot()
    # groups where the axis does not apply (x empty, e.g. a file scenario on a generator axis)
    # have no point on this plot: no line and no legend entry for them
    series = [(label, rows[rows[x].notna()]) for label, rows in _series(summary, groups, metric, x, hue)]
    series = [(label, rows) for label, rows in series if len(rows)]
    if not series:
        raise CampaignError(f"plot: no group has a value of {x!r}")
    for label, rows in series:
        order = np.argsort(rows[x].to_numpy(dtype=float), kind="stable")
        rows = rows.iloc[order]
        xs = rows[x].to_numpy(dtype=float)
        mean = rows[f"{metric}_mean"].to_numpy(dtype=float)
        (line,) = ax.plot(xs, mean, marker="o", label=label)
        low = rows[f"{metric}_ci95_low"].to_numpy(dtype=float)
        high = rows[f"{metric}_ci95_high"].to_numpy(dtype=float)
        band = ~(np.isnan(low) | np.isnan(high))
        if band.any():
            ax.fill_between(xs, low, high, where=band, color=line.get_color(), alpha=0.2, linewidth=0)
    _finish(fig, ax, metric, x, title, legend=len(series) > 1 or hue is not None)
    return _save(fig, out, formats)
