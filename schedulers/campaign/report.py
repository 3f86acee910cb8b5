"""``report.md`` of a campaign: what was run, the measured means with their 95 % confidence
intervals, the paper's numbers beside them, plots and failed runs.

The campaign file's ``[report]`` table (copied raw into ``campaign.json``) configures it::

    [report]
    title = "EASY vs FCFS"
    metrics = ["mean_waiting_time", "makespan"]
    [[report.plot]]
    kind = "bar"              # or "line" (numeric x)
    metric = "mean_waiting_time"
    x = "scenario"
    hue = "policy"            # optional; title = "..." optional
    where = {late = "user1"}  # optional: only the groups with these params
    [[report.reference]]      # a number of the paper, for one group
    where = {policy = "easy", scenario = "small"}
    metric = "mean_waiting_time"
    value = 1234.5
    source = "000 Table 2"
    ci95 = [1100.0, 1300.0]   # optional, or std = 50.0
    [[report.timeline]]       # one run replayed for its power-usage plot (see .timeline)
    where = {policy = "easy", scenario = "small", seed = 0}
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .collect import load_manifest, manifest_ids, param_columns, scalar, tables, write_tables
from .errors import CampaignError
from .plot import group_columns, metric_label, plot_bars, plot_lines, summary_metrics

#: Metrics of the report when ``[report]`` does not list any (those with a value are kept).
DEFAULT_METRICS = ("mean_waiting_time", "mean_bounded_slowdown", "makespan", "utilisation", "energy_kwh")
PLOT_KINDS = ("bar", "line")


@dataclass(frozen=True)
class PlotSpec:
    """One chart: ``kind`` "bar" or "line", a metric, group columns ``x`` and ``hue``."""
    kind: str
    metric: str
    x: str
    hue: str | None = None
    title: str | None = None
    where: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Reference:
    """A number of the paper: ``value`` of ``metric`` for the group whose params match ``where``,
    quoted from ``source``, with its 95 % CI ``(low, high)`` or its ``std`` when the paper
    gives them."""
    where: dict
    metric: str
    value: float
    source: str
    ci95: tuple[float, float] | None = None
    std: float | None = None


@dataclass(frozen=True)
class ReportSpec:
    """A checked ``[report]`` table. None means "the default" (metrics: :data:`DEFAULT_METRICS`
    with a value; plots: one bar chart per metric by scenario and policy)."""
    title: str | None = None
    metrics: tuple[str, ...] | None = None
    plots: tuple[PlotSpec, ...] | None = None
    references: tuple[Reference, ...] = ()
    timelines: tuple = ()


# --- checking the [report] table ---------------------------------------------------------------

def _kind(v: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string",
             list: "an array", dict: "a table"}
    shown = f"{v!r}" if isinstance(v, (bool, int, float, str)) else ""
    return f"{names.get(type(v), type(v).__name__)}{' ' + shown if shown else ''}"


class _Checker:
    def __init__(self, where: str):
        self.where = where

    def fail(self, key: str, msg: str) -> CampaignError:
        return CampaignError(f"{self.where}: {key}: {msg}")

    def table(self, v: Any, key: str, required: tuple[str, ...], optional: tuple[str, ...]) -> dict:
        if not isinstance(v, dict):
            raise self.fail(key, f"expected a table, got {_kind(v)}")
        known = required + optional
        for k in v:
            if k not in known:
                raise self.fail(f"{key}.{k}", f"unknown key (known: {', '.join(sorted(known))})")
        for k in required:
            if k not in v:
                raise self.fail(f"{key}.{k}", "missing (required)")
        return v

    def string(self, v: Any, key: str) -> str:
        if not isinstance(v, str) or not v:
            raise self.fail(key, f"expected a non-empty string, got {_kind(v)}")
        return v

    def number(self, v: Any, key: str) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self.fail(key, f"expected a finite number, got {_kind(v)}")
        return float(v)

    def array(self, v: Any, key: str) -> list:
        if not isinstance(v, list):
            raise self.fail(key, f"expected an array, got {_kind(v)}")
        return v


def _where(c: _Checker, where: Any, key: str) -> dict:
    if not isinstance(where, dict):
        raise c.fail(key, f"expected a table of params, got {_kind(where)}")
    if not where:
        raise c.fail(key, "expected at least one params key")
    for k, val in where.items():
        if not isinstance(val, (str, int, float, bool)):
            raise c.fail(f"{key}.{k}", f"expected a string, number or boolean, got {_kind(val)}")
    return where


def _plot(c: _Checker, v: Any, key: str) -> PlotSpec:
    t = c.table(v, key, ("kind", "metric", "x"), ("hue", "title", "where"))
    if t["kind"] not in PLOT_KINDS:
        got = f'"{t["kind"]}"' if isinstance(t["kind"], str) else _kind(t["kind"])
        raise c.fail(f"{key}.kind", f'expected "bar" or "line", got {got}')
    return PlotSpec(t["kind"], c.string(t["metric"], f"{key}.metric"), c.string(t["x"], f"{key}.x"),
                    None if "hue" not in t else c.string(t["hue"], f"{key}.hue"),
                    None if "title" not in t else c.string(t["title"], f"{key}.title"),
                    tuple(_where(c, t["where"], f"{key}.where").items()) if "where" in t else ())


def _reference(c: _Checker, v: Any, key: str) -> Reference:
    t = c.table(v, key, ("where", "metric", "value", "source"), ("ci95", "std"))
    where = _where(c, t["where"], f"{key}.where")
    ci95 = std = None
    if "ci95" in t:
        pair = c.array(t["ci95"], f"{key}.ci95")
        if len(pair) != 2:
            raise c.fail(f"{key}.ci95", f"expected [low, high], got {len(pair)} values")
        ci95 = (c.number(pair[0], f"{key}.ci95[0]"), c.number(pair[1], f"{key}.ci95[1]"))
        if ci95[0] > ci95[1]:
            raise c.fail(f"{key}.ci95", f"low {ci95[0]:g} is above high {ci95[1]:g}")
    if "std" in t:
        std = c.number(t["std"], f"{key}.std")
        if std < 0:
            raise c.fail(f"{key}.std", f"expected a number >= 0, got {std:g}")
    return Reference(dict(where), c.string(t["metric"], f"{key}.metric"),
                     c.number(t["value"], f"{key}.value"), c.string(t["source"], f"{key}.source"), ci95, std)


def check_report_section(section: Any, where: str) -> ReportSpec:
    """Check a campaign file's ``[report]`` table (as parsed by tomllib) and return it as a
    :class:`ReportSpec`. Keys: ``title`` (string), ``metrics`` (array of metric names),
    ``plot`` (array of tables ``kind``/``metric``/``x``/``hue``?/``title``?/``where``?),
    ``reference`` (array of tables ``where``/``metric``/``value``/``source``/``ci95``?/``std``?),
    ``timeline`` (array of tables ``where``/``title``?/``relative``?). Whether the
    metrics and columns exist is checked by :func:`write_report`, against the results.

    Raises:
        CampaignError: one line ``<where>: report.<key path>: <what is wrong>``; array indexes
            count from 0 (``report.plot[1]`` is the second ``[[report.plot]]``).
    """
    c = _Checker(where)
    t = c.table(section, "report", (), ("title", "metrics", "plot", "reference", "timeline"))
    title = c.string(t["title"], "report.title") if "title" in t else None
    metrics = None
    if "metrics" in t:
        metrics = tuple(c.string(m, f"report.metrics[{i}]")
                        for i, m in enumerate(c.array(t["metrics"], "report.metrics")))
    plots = None
    if "plot" in t:
        plots = tuple(_plot(c, p, f"report.plot[{i}]")
                      for i, p in enumerate(c.array(t["plot"], "report.plot")))
    refs = tuple(_reference(c, r, f"report.reference[{i}]")
                 for i, r in enumerate(c.array(t.get("reference", []), "report.reference")))
    timelines = tuple(_timeline(c, v, f"report.timeline[{i}]")
                      for i, v in enumerate(c.array(t.get("timeline", []), "report.timeline")))
    return ReportSpec(title, metrics, plots, refs, timelines)


def _timeline(c: _Checker, v: Any, key: str):
    from .timeline import TimelineSpec
    t = c.table(v, key, ("where",), ("title", "relative"))
    rel = t.get("relative", False)
    if not isinstance(rel, bool):
        raise c.fail(f"{key}.relative", f"expected true or false, got {_kind(rel)}")
    return TimelineSpec(tuple(_where(c, t["where"], f"{key}.where").items()),
                        None if "title" not in t else c.string(t["title"], f"{key}.title"), rel)


def _timeline_section(c: _Checker, spec: ReportSpec, table: pd.DataFrame, manifest: dict, out: Path) -> list[str]:
    """Replay each ``[[report.timeline]]`` run and link its power-usage plot."""
    import json

    from .timeline import replay_usage
    if not spec.timelines:
        return []
    base = str(Path(str(manifest["source"])).parent) if manifest.get("source") else str(out)
    lines = ["## Power in use per user", ""]
    for i, tl in enumerate(spec.timelines):
        key = f"report.timeline[{i}].where"
        for k, _ in tl.where:
            if k not in table.columns:
                raise c.fail(f"{key}.{k}", f"not a run parameter; available: {', '.join(param_columns(table))}")
        hits = table[[all(_same(scalar(r[k]), v) for k, v in tl.where) and r["status"] == "done"
                      for _, r in table.iterrows()]]
        if len(hits) != 1:
            raise c.fail(key, f"matches {len(hits)} done runs, not one; give every parameter and the seed")
        run_id = str(hits["id"].iat[0])
        record = json.loads((out / "results" / f"{run_id}.json").read_text(encoding="utf-8"))
        stem = "timeline_" + "_".join(f"{k}-{v}" for k, v in sorted(tl.where))
        stem = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in stem)
        replay_usage(record, base, out / "plots" / stem, title=tl.title, relative=tl.relative)
        lines += [f"![{tl.title or dict(tl.where)}](plots/{stem}.png)", ""]
    return lines


# --- writing the report -------------------------------------------------------------------------

def _num(v: Any) -> str:
    v = scalar(v)
    return "—" if v is None else f"{v:.6g}"


def _cell(v: Any) -> str:
    v = scalar(v)
    return "—" if v is None else " ".join(str(v).split()).replace("|", "\\|")


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + \
           ["| " + " | ".join(r) + " |" for r in rows] + [""]


def _mean_ci(row: pd.Series, m: str) -> str:
    mean, low, high = (scalar(row[f"{m}_{s}"]) for s in ("mean", "ci95_low", "ci95_high"))
    if mean is None:
        return "—"
    if low is None or high is None:
        return f"{mean:.6g} (no CI: n = 1)"
    return f"{mean:.6g} ± {(high - low) / 2:.6g}"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


def _reference_rows(c: _Checker, refs: tuple[Reference, ...], summary: pd.DataFrame,
                    groups: list[str], metrics: list[str]) -> tuple[list[list[str]], list[str]]:
    rows, unmatched = [], []
    for i, ref in enumerate(refs):
        key = f"report.reference[{i}]"
        if ref.metric not in metrics:
            raise c.fail(f"{key}.metric", f"unknown metric {ref.metric!r}; available: {', '.join(metrics)}")
        for k in ref.where:
            if k not in groups:
                raise c.fail(f"{key}.where.{k}", f"not a group column; available: {', '.join(groups)}")
        hits = [j for j in range(len(summary))
                if all(_same(scalar(summary[k].iat[j]), v) for k, v in ref.where.items())]
        if len(hits) > 1:
            raise c.fail(f"{key}.where", f"matches {len(hits)} groups; add keys among {', '.join(groups)}")
        if not hits:
            unmatched.append(f"{ref.metric} {ref.where} ({ref.source}): no such group in the results")
            continue
        row = summary.iloc[hits[0]]
        mean, low, high = (scalar(row[f"{ref.metric}_{s}"]) for s in ("mean", "ci95_low", "ci95_high"))
        paper = f"{ref.value:.6g}"
        if ref.ci95:
            paper += f" [{ref.ci95[0]:.6g}, {ref.ci95[1]:.6g}]"
        if ref.std is not None:
            paper += f" (std {ref.std:.6g})"
        if mean is None:
            diff, inside = "—", "n/a (no done run)"
        else:
            diff = f"{mean - ref.value:+.6g}"
            if ref.value != 0:
                diff += f" ({100 * (mean - ref.value) / ref.value:+.1f} %)"
            inside = "n/a (n = 1)" if low is None else ("yes" if low <= ref.value <= high else "no")
        ci = "—" if low is None else f"[{low:.6g}, {high:.6g}]"
        rows.append([_cell(row[g]) for g in groups] +
                    [ref.metric, _num(mean), ci, str(int(row["n"])), paper, _cell(ref.source), diff, inside])
    return rows, unmatched


def _plot_name(p: PlotSpec, taken: set[str]) -> str:
    base = "_".join(s for s in (p.kind, p.metric, "by", p.x, p.hue, *(f"{k}-{v}" for k, v in sorted(p.where))) if s)
    base = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in base)
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def _runs_line(table: pd.DataFrame, manifest: dict | None) -> list[str]:
    done = int((table["status"] == "done").sum())
    failed = len(table) - done
    ids = manifest_ids(manifest)
    if ids is None:
        return [f"- Runs: {done} done, {failed} failed (no run list in campaign.json: missing runs unknown)."]
    have = set(table["id"])
    lines = [f"- Runs: {len(ids)} in the campaign: {done} done, {failed} failed, "
             f"{len(ids - have)} missing (no result yet)."]
    return lines


def _metrics_and_plots(spec: ReportSpec, c: _Checker, summary: pd.DataFrame) -> tuple[list[str], tuple]:
    """The report's metrics and plots: the spec's, checked against the summary, or the defaults."""
    groups, available = group_columns(summary), summary_metrics(summary)
    known = f"available: {', '.join(available)}"
    if spec.metrics is None:
        metrics = [m for m in DEFAULT_METRICS if m in available and summary[f"{m}_mean"].notna().any()]
    else:
        metrics = list(spec.metrics)
        for i, m in enumerate(metrics):
            if m not in available:
                raise c.fail(f"report.metrics[{i}]", f"unknown metric {m!r}; {known}")
    if spec.plots is None:
        x = "scenario" if "scenario" in groups else (groups[0] if groups else None)
        hue = "policy" if "policy" in groups and x != "policy" else None
        return metrics, tuple(PlotSpec("bar", m, x, hue) for m in metrics if x is not None)
    for i, p in enumerate(spec.plots):
        if p.metric not in available:
            raise c.fail(f"report.plot[{i}].metric", f"unknown metric {p.metric!r}; {known}")
        for role in ("x", "hue"):
            col = getattr(p, role)
            if col is not None and col not in groups:
                raise c.fail(f"report.plot[{i}].{role}",
                             f"{col!r} is not a group column; available: {', '.join(groups)}")
        for k, _ in p.where:
            if k not in groups:
                raise c.fail(f"report.plot[{i}].where.{k}",
                             f"not a group column; available: {', '.join(groups)}")
    return metrics, spec.plots


def _header(title: str, name: str, source: str | None, table: pd.DataFrame, manifest: dict | None,
            groups: list[str]) -> list[str]:
    lines = [f"# {title}", "", "## What was run", "",
             f"- Campaign: `{name}`" + (f" (from `{source}`)" if source else "") + "."]
    lines += _runs_line(table, manifest)
    for col in param_columns(table):
        values = sorted({str(v) for v in map(scalar, table[col]) if v is not None})
        lines.append(f"- `{col}`: {', '.join(values) or '—'}")
    return lines + ["", f"Groups: {', '.join(groups) or '(all runs)'} (the seeds of a configuration). "
                    "Cells give the mean over the group's done runs ± the half-width of its 95 % "
                    "Student-t confidence interval; n is the number of done runs (no CI with n = 1).", ""]


def _metric_section(m: str, summary: pd.DataFrame, groups: list[str]) -> list[str]:
    rows = [[_cell(r[g]) for g in groups] + [_mean_ci(r, m), str(int(r["n"])), str(int(r["n_failed"]))]
            for _, r in summary.iterrows()]
    return [f"## {metric_label(m)}", ""] + _md_table(groups + ["mean ± 95 % CI", "n", "failed"], rows)


def _plot_section(plots: tuple, from_spec: bool, c: _Checker, summary: pd.DataFrame, out: Path) -> list[str]:
    lines = ["## Plots", ""]
    taken: set[str] = set()
    for i, p in enumerate(plots):
        rows = summary
        for k, v in p.where:
            rows = rows[[_same(scalar(x), v) for x in rows[k]]]
        if not len(rows) or not rows[f"{p.metric}_mean"].notna().any():
            where = f" where {dict(p.where)}" if p.where else ""
            lines += [f"- {p.metric}{where}: no value in any group, no plot.", ""]
            continue
        stem = _plot_name(p, taken)
        draw = plot_bars if p.kind == "bar" else plot_lines
        try:
            draw(rows.reset_index(drop=True), p.metric, p.x, p.hue, out=out / "plots" / stem, title=p.title)
        except CampaignError as exc:  # e.g. a line plot over a non-numeric x
            raise c.fail(f"report.plot[{i}]", str(exc)) if from_spec else exc
        lines += [f"![{p.title or metric_label(p.metric) + ' by ' + p.x}](plots/{stem}.png)", ""]
    return lines


def _failed_section(table: pd.DataFrame) -> list[str]:
    failed = table[table["status"] != "done"]
    if not len(failed):
        return []
    params = param_columns(table)
    rows = [[_cell(r["id"])] + [_cell(r[p]) for p in params]
            + [_cell(r["error"]) if scalar(r["error"]) is not None else "(no error message)"]
            for _, r in failed.iterrows()]
    return ["## Failed runs", ""] + _md_table(["id"] + params + ["error"], rows)


def write_report(out_dir: str | Path, spec: ReportSpec | None = None) -> Path:
    """Write ``out_dir/report.md``, ``runs.csv``, ``summary.csv`` and the plots
    (``out_dir/plots/*.png`` and ``.svg``) from the results of ``out_dir``.

    ``spec``: the report configuration; default: ``campaign.json``'s ``report`` table checked with
    :func:`check_report_section`, or the defaults without one. Means are followed by the
    half-width of their 95 % CI; a reference row gives the measured mean, its CI, the paper's
    value, the difference (measured - paper, and relative) and whether the paper's value lies in
    the CI. A reference whose group has no result is listed as not compared.

    Returns:
        The path of ``report.md``.

    Raises:
        CampaignError: a bad result file or no result (see :func:`.collect.tables`); a bad
            ``[report]`` table; a metric, column or reference that does not exist in the results,
            or a reference matching several groups (the message names the ``[report]`` key).
    """
    out = Path(out_dir)
    manifest = load_manifest(out) or {}
    source = Path(str(manifest["source"])).name if manifest.get("source") else None
    c = _Checker(source or "campaign.json")
    if spec is None:
        section = manifest.get("report")
        spec = ReportSpec() if section is None else check_report_section(section, c.where)
    table, summary = tables(out)
    write_tables(out, table, summary)
    groups = group_columns(summary)
    metrics, plots = _metrics_and_plots(spec, c, summary)
    ref_rows, unmatched = _reference_rows(c, spec.references, summary, groups, summary_metrics(summary))

    name = manifest.get("name") or manifest.get("campaign") or out.name
    lines = _header(spec.title or f"Campaign {name}", name, source, table, manifest or None, groups)
    for m in metrics:
        lines += _metric_section(m, summary, groups)
    if spec.references:
        lines += ["## Comparison with the paper", ""]
        lines += _md_table(groups + ["metric", "measured mean", "95 % CI", "n", "paper", "source",
                                     "difference", "paper in CI"], ref_rows)
        lines += [f"- Not compared: {u}" for u in unmatched] + ([""] if unmatched else [])
    if plots:
        lines += _plot_section(plots, spec.plots is not None, c, summary, out)
    lines += _timeline_section(c, spec, table, manifest, out)
    lines += _failed_section(table)
    path = out / "report.md"
    path.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
    return path
