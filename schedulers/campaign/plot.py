"""Charts of a campaign summary (:func:`.collect.summarize`): the mean of a metric per group with
its 95 % confidence interval, as grouped bars or lines.

Axes are labelled in words with units (:mod:`.labels`; the campaign file's ``[report.labels]``
overrides them), the legend sits outside the axes (it never covers a bar or a line), long tick
labels are slanted, and ``facet`` draws one panel per value of a group column, each with its own
y scale (scenarios whose values differ by orders of magnitude do not share an axis). A summary
column ``<metric>_paper`` (set by :mod:`.report` from the campaign's ``[[report.reference]]``
tables) adds the paper's values as black stars, only on groups that have a measured mean.

Figures are drawn with :class:`matplotlib.figure.Figure` (no pyplot, no global backend change;
PNG goes through Agg, SVG through the SVG backend).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .collect import scalar, sort_key
from .errors import CampaignError
from .labels import METRIC_LABELS, column_label, metric_label

__all__ = ["METRIC_LABELS", "FORMATS", "metric_label", "group_columns", "summary_metrics", "sort_by", "bar_positions", "plot_bars",
           "plot_lines"]

FORMATS = ("png", "svg")


def group_columns(summary: pd.DataFrame) -> list[str]:
    """The group columns of a summary: those before ``n``."""
    cols = list(summary.columns)
    if "n" not in cols:
        raise CampaignError("not a campaign summary: no 'n' column")
    return cols[:cols.index("n")]


def summary_metrics(summary: pd.DataFrame) -> list[str]:
    """The metrics of a summary (``<m>`` for every ``<m>_mean`` column)."""
    return [c[:-len("_mean")] for c in summary.columns if c.endswith("_mean")]


def _check(summary: pd.DataFrame, metric: str, x: str, hue: str | None, facet: str | None = None) -> list[str]:
    groups = group_columns(summary)
    metrics = summary_metrics(summary)
    if metric not in metrics:
        raise CampaignError(f"plot: unknown metric {metric!r}; available: {', '.join(metrics)}")
    for role, col in (("x", x), ("hue", hue), ("facet", facet)):
        if col is not None and col not in groups:
            raise CampaignError(f"plot: {role} {col!r} is not a group column; available: {', '.join(groups)}")
    if hue is not None and hue == x:
        raise CampaignError(f"plot: x and hue are both {x!r}")
    if facet is not None and facet in (x, hue):
        raise CampaignError(f"plot: facet {facet!r} is also the x or hue column")
    if not summary[f"{metric}_mean"].notna().any():
        raise CampaignError(f"plot: {metric} has no value in any group (no done run reports it)")
    return groups


def sort_by(column: str | None, order: Mapping[str, Sequence] | None):
    """Sort key of a column's values: the order given for it (its listed values first, in that
    order), then :func:`.collect.sort_key`."""
    listed = list((order or {}).get(column, ())) if column else []

    def key(v: Any) -> tuple:
        v = scalar(v)
        for i, w in enumerate(listed):
            if sort_key(w) == sort_key(v):
                return (0, i, sort_key(v))
        return (1, 0, sort_key(v))
    return key


def _fmt(v: Any) -> str:
    v = scalar(v)
    if v is None:
        return "(none)"
    if isinstance(v, float) and v.is_integer():
        return f"{v:g}"
    return str(v)


def _series(summary: pd.DataFrame, groups: list[str], metric: str, x: str, hue: str | None,
            facet: str | None = None, labels: Mapping[str, str] | None = None,
            order: Mapping[str, Sequence] | None = None):
    """``[(label, rows)]``: one series per value of ``hue`` and of the other group columns that
    vary (so that no two rows of a series share an ``x``), each with its rows. A column that
    varies only with ``x`` or with ``hue`` (a ``[zip]`` partner: one value, or none, per value of
    ``x`` or ``hue``) makes no series of its own; nor does the ``facet`` column (one panel per
    value)."""
    def follows(c: str, by: str | None) -> bool:
        if by is None:
            return False
        known = summary[summary[c].notna() & summary[by].notna()]
        return bool((known.groupby(by)[c].nunique() <= 1).all())
    varying = [c for c in groups if c not in (x, hue, facet) and summary[c].nunique(dropna=False) > 1
               and not follows(c, x) and not follows(c, hue)]
    keys = ([hue] if hue else []) + varying
    out: dict[tuple, list[int]] = {}
    for i in range(len(summary)):
        out.setdefault(tuple(scalar(summary[c].iat[i]) for c in keys), []).append(i)
    series = []
    keyfns = [sort_by(c, order) for c in keys]
    for key in sorted(out, key=lambda k: tuple(f(v) for f, v in zip(keyfns, k))):
        if not keys:
            label = "ours"   # (one series: the legend tells it from the paper's stars)
        elif len(keys) == 1:
            label = _fmt(key[0])
        else:
            label = ", ".join(f"{column_label(c, labels)}: {_fmt(v)}" if c != hue else _fmt(v)
                              for c, v in zip(keys, key))
        series.append((label, summary.iloc[out[key]]))
    return series


def _errors(rows: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Means and ``[[below], [above]]`` error lengths (NaN where the CI is undefined)."""
    mean = rows[f"{metric}_mean"].to_numpy(dtype=float)
    low = mean - rows[f"{metric}_ci95_low"].to_numpy(dtype=float)
    high = rows[f"{metric}_ci95_high"].to_numpy(dtype=float) - mean
    return mean, np.vstack([low, high])


def _paper(rows: pd.DataFrame, metric: str) -> np.ndarray:
    """The paper's values of the rows (NaN where none, or where the group has no measured mean)."""
    col = f"{metric}_paper"
    if col not in rows.columns:
        return np.full(len(rows), np.nan)
    paper = rows[col].to_numpy(dtype=float)
    return np.where(np.isnan(rows[f"{metric}_mean"].to_numpy(dtype=float)), np.nan, paper)


def _stars(ax, xs: np.ndarray, rows: pd.DataFrame, metric: str) -> bool:
    """Draw the paper's values of ``rows`` at ``xs`` as black stars; whether there was any."""
    paper = _paper(rows, metric)
    has = ~np.isnan(paper)
    if has.any():
        ax.plot(xs[has], paper[has], linestyle="none", marker="*", markersize=12, color="black", label="paper")
    return bool(has.any())


def _save(fig: Figure, out: str | Path, formats: Sequence[str]) -> list[Path]:
    paths = []
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for fmt in formats:
        if fmt not in FORMATS:
            raise CampaignError(f"plot: unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
        path = out.parent / f"{out.name}.{fmt}"
        fig.savefig(path, format=fmt, metadata={"Date": None} if fmt == "svg" else None, bbox_inches="tight")
        paths.append(path)
    return paths


def _columns(n: int) -> int:
    """Panels a row: all of them up to 3, 2 a row for 4, else 3."""
    return n if n <= 3 else (2 if n == 4 else 3)


def _panels(summary: pd.DataFrame, facet: str | None, width: float,
            order: Mapping[str, Sequence] | None = None) -> tuple[Figure, list[tuple[Any, Any, pd.DataFrame]]]:
    """The figure and its ``(facet value, axes, rows)`` panels (one panel without ``facet``)."""
    values = [None] if facet is None else sorted({scalar(v) for v in summary[facet]}, key=sort_by(facet, order))
    n = len(values)
    cols = _columns(n)
    nrows = -(-n // cols)
    fig = Figure(figsize=(min(width * cols, 16.0), 4.2 * nrows))
    panels = []
    for k, v in enumerate(values):
        ax = fig.add_subplot(nrows, cols, k + 1)
        rows = summary if facet is None else summary[[sort_key(scalar(c)) == sort_key(v) for c in summary[facet]]]
        panels.append((v, ax, rows.reset_index(drop=True)))
    return fig, panels


def _ticks(ax, cats: list) -> None:
    texts = [_fmt(c) for c in cats]
    long = sum(len(t) for t in texts) > 40 or max((len(t) for t in texts), default=0) > 14
    ax.set_xticks(range(len(cats)), texts, rotation=30 if long else 0, ha="right" if long else "center")


def _finish(fig: Figure, panels: list, metric: str, x: str, title: str | None, legend: bool,
            facet: str | None, labels: Mapping[str, str] | None, legend_title: str | None) -> None:
    import textwrap

    ylabel = metric_label(metric, labels)
    wrapped = "\n".join(textwrap.wrap(ylabel, 42))   # a long label stays beside its axis
    cols = _columns(len(panels))
    for k, (v, ax, _) in enumerate(panels):
        ax.set_xlabel(column_label(x, labels))
        if k % cols == 0:   # one label a row of panels: their y axes measure the same metric
            ax.set_ylabel(wrapped)
        if facet is not None:
            ax.set_title(f"{column_label(facet, labels)}: {_fmt(v)}", fontsize="medium")
        ax.grid(axis="y", alpha=0.3)
    head = title if title is not None else f"{ylabel} by {column_label(x, labels)} (mean, 95 % CI)"
    if legend:   # outside the axes, on the right: it covers no data
        handles, names = [], []
        for _, ax, _ in panels:
            for h, n in zip(*ax.get_legend_handles_labels()):
                if n not in names:
                    handles.append(h)
                    names.append(n)
        fig.legend(handles, names, loc="upper left", bbox_to_anchor=(1.0, 0.9), fontsize="small",
                   title=legend_title, title_fontsize="small", frameon=False)
    if facet is None:
        panels[0][1].set_title(head)
        fig.tight_layout()
    else:
        fig.suptitle(head)
        fig.tight_layout(rect=(0, 0, 1, 0.96))


def bar_positions(at: Sequence[np.ndarray], means: Sequence[np.ndarray]) -> tuple[list[np.ndarray], float]:
    """Where the bars of grouped series go: at each category the series that have a value there
    (a mean that is not NaN) side by side in series order, centred on the category; a series
    without a value at a category takes no room there.

    Args:
        at: per series, the category index (0, 1...) of each of its rows.
        means: per series, the mean of each of its rows (NaN: no bar).

    Returns:
        Per series, the x position of each row (the category's own index where the row has no
        bar), and the bar width: 0.8 shared by the most series any category holds.
    """
    present: dict[int, list[int]] = {}
    for j, (cats, mean) in enumerate(zip(at, means)):
        for k, m in zip(cats, mean):
            if not np.isnan(m):
                present.setdefault(int(k), []).append(j)
    width = 0.8 / max((len(v) for v in present.values()), default=1)
    positions = []
    for j, cats in enumerate(at):
        pos = []
        for k in cats:
            here = present.get(int(k), [])
            pos.append(k + (here.index(j) - (len(here) - 1) / 2) * width if j in here else float(k))
        positions.append(np.array(pos, dtype=float))
    return positions, width


def plot_bars(summary: pd.DataFrame, metric: str, x: str, hue: str | None = None, *,
              out: str | Path, formats: Sequence[str] = FORMATS, title: str | None = None,
              facet: str | None = None, labels: Mapping[str, str] | None = None,
              order: Mapping[str, Sequence] | None = None) -> list[Path]:
    """Grouped bar chart of ``<metric>_mean`` per value of ``x`` (one bar per ``hue`` value and
    per value of any other varying group column), with the 95 % CI as error bars (none where
    n = 1). Groups without a value have no bar and take no room; a mean of 0 is a bar drawn as a
    line on the axis (its edge).

    Args:
        summary: a :func:`.collect.summarize` table (with an optional ``<metric>_paper`` column:
            the paper's value of each group, drawn as a star).
        metric: a metric name (``makespan``, ``policy.backfilled_jobs``...), without ``_mean``.
        x, hue: group columns.
        out: path of the figure without extension; ``out.png``, ``out.svg``... are written
            (parent folders created).
        formats: among ``png`` and ``svg``.
        title: the figure's title (default: the metric's label by x's label).
        facet: a group column: one panel per value, each with its own y scale.
        labels: names -> labels of metrics and columns (:func:`.labels.metric_label`).
        order: column -> its values in the order to show them (x categories, series, panels);
            values not listed follow, sorted.

    Returns:
        The written paths, in ``formats`` order.

    Raises:
        CampaignError: ``metric``, ``x``, ``hue`` or ``facet`` is not in the summary (the
            message lists the available ones), the metric has no value at all, an unknown format.
    """
    groups = _check(summary, metric, x, hue, facet)
    cats_all = sorted({scalar(v) for v in summary[x]}, key=sort_by(x, order))
    n_series = len(_series(summary, groups, metric, x, hue, facet, labels, order))
    fig, panels = _panels(summary, facet, min(14.0, max(5.5, 1.1 * len(cats_all) * max(1, n_series) ** 0.5)), order)
    any_paper = False
    for _, ax, rows in panels:
        cats = sorted({scalar(v) for v in rows[x]}, key=sort_by(x, order))
        series = _series(rows, groups, metric, x, hue, facet, labels, order)
        at = [np.array([cats.index(scalar(v)) for v in srows[x]], dtype=int) for _, srows in series]
        positions, width = bar_positions(at, [_errors(srows, metric)[0] for _, srows in series])
        for j, (label, srows) in enumerate(series):
            pos = positions[j]
            mean, err = _errors(srows, metric)
            ok = ~np.isnan(mean)
            # (an edge of the bar's colour: a mean of 0 shows as a line on the axis, where a group
            # without a value has nothing)
            ax.bar(pos[ok], mean[ok], width, label=label, color=f"C{j % 10}", edgecolor=f"C{j % 10}",
                   linewidth=1.5)
            ci = ok & ~np.isnan(err).any(axis=0)
            if ci.any():
                ax.errorbar(pos[ci], mean[ci], yerr=err[:, ci], fmt="none", ecolor="black", capsize=3)
            any_paper = _stars(ax, pos, srows, metric) or any_paper
        _ticks(ax, cats)
    _finish(fig, panels, metric, x, title, n_series > 1 or hue is not None or any_paper, facet, labels,
            column_label(hue, labels) if hue else None)
    return _save(fig, out, formats)


def plot_lines(summary: pd.DataFrame, metric: str, x: str, hue: str | None = None, *,
               out: str | Path, formats: Sequence[str] = FORMATS, title: str | None = None,
               facet: str | None = None, labels: Mapping[str, str] | None = None,
               order: Mapping[str, Sequence] | None = None) -> list[Path]:
    """Line plot of ``<metric>_mean`` against a numeric group column ``x`` (one line per ``hue``
    value and per value of any other varying group column), with the 95 % CI shaded (no band
    where n = 1). Arguments, return value and errors as :func:`plot_bars`; also
    CampaignError when ``x`` is not numeric.
    """
    groups = _check(summary, metric, x, hue, facet)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool)
               for v in (scalar(c) for c in summary[x]) if v is not None):
        raise CampaignError(f"plot: line plots need a numeric x; {x!r} has non-numeric values")
    fig, panels = _panels(summary, facet, 6.0, order)
    drawn = False
    any_paper = False
    n_lines = 0
    for _, ax, rows in panels:
        # groups where the axis does not apply (x empty, e.g. a file scenario on a generator axis)
        # have no point on this plot: no line and no legend entry for them
        series = [(label, r[r[x].notna()]) for label, r in _series(rows, groups, metric, x, hue, facet, labels, order)]
        series = [(label, r) for label, r in series if len(r)]
        n_lines = max(n_lines, len(series))
        for j, (label, srows) in enumerate(series):
            drawn = True
            by_x = np.argsort(srows[x].to_numpy(dtype=float), kind="stable")
            srows = srows.iloc[by_x]
            xs = srows[x].to_numpy(dtype=float)
            mean = srows[f"{metric}_mean"].to_numpy(dtype=float)
            (line,) = ax.plot(xs, mean, marker="o", label=label, color=f"C{j % 10}")
            low = srows[f"{metric}_ci95_low"].to_numpy(dtype=float)
            high = srows[f"{metric}_ci95_high"].to_numpy(dtype=float)
            band = ~(np.isnan(low) | np.isnan(high))
            if band.any():
                ax.fill_between(xs, low, high, where=band, color=line.get_color(), alpha=0.2, linewidth=0)
            any_paper = _stars(ax, xs, srows, metric) or any_paper
    if not drawn:
        raise CampaignError(f"plot: no group has a value of {x!r}")
    _finish(fig, panels, metric, x, title, n_lines > 1 or hue is not None or bool(any_paper), facet, labels,
            column_label(hue, labels) if hue else None)
    return _save(fig, out, formats)
