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
    facet = "scenario"        # optional: one panel per value, each with its own y scale
    [[report.reference]]      # a number of the paper, for one group
    where = {policy = "easy", scenario = "small"}
    metric = "mean_waiting_time"
    value = 1234.5
    source = "000 Table 2"
    ci95 = [1100.0, 1300.0]   # optional, or std = 50.0
    [[report.timeline]]       # one run replayed for its power-usage plot (see .timeline)
    where = {policy = "easy", scenario = "small", seed = 0}
    [report.labels]           # optional: words and units for metrics and columns (see .labels)
    "scenario.u1_limit" = "user1's power limit (% of its hosts' full-load power)"
    [report.order]            # optional: the order of a column's values in plots
    demand = ["small", "medium", "large"]

``[report.order]`` naming a column, or a value, that no run of the campaign has is refused (a typo
would make the order vanish); a ``[report.labels]`` name that is no column and no metric of the
results is said in one warning line.

Without ``metrics``, the report has a table for each of the mean waiting time, mean bounded
slowdown, makespan, utilisation and energy (kWh) that some done run has a value of; when no job
started in any done run (every job rejected), a line says why the waiting time and the bounded
slowdown have no table.

``paper = "hosep"`` (optional) adds the section of that paper (:mod:`.papers`): its numbers
beside ours, its claims checked, what it leaves unspecified, before the tables.

Numbers are printed by :mod:`.fmt` (4 significant digits, thousands separators, a mean to its
interval's precision, ``± 0`` for runs that all agree); labels by :mod:`.labels`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import fmt
from .collect import CODES, MIXED_CODES, load_manifest, manifest_ids, param_columns, scalar, sort_key, tables, write_tables
from .errors import CampaignError
from .labels import column_label, metric_label
from .plot import group_columns, plot_bars, plot_lines, summary_metrics

#: Metrics of the report when ``[report]`` does not list any (those with a value are kept).
DEFAULT_METRICS = ("mean_waiting_time", "mean_bounded_slowdown", "makespan", "utilisation", "energy_kwh")
PLOT_KINDS = ("bar", "line")


@dataclass(frozen=True)
class PlotSpec:
    """One chart: ``kind`` "bar" or "line", a metric, group columns ``x``, ``hue`` and
    ``facet`` (one panel per value)."""
    kind: str
    metric: str
    x: str
    hue: str | None = None
    title: str | None = None
    where: tuple[tuple[str, Any], ...] = ()
    facet: str | None = None


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
    with a value; plots: one bar chart per metric by policy, one panel per scenario)."""
    title: str | None = None
    metrics: tuple[str, ...] | None = None
    plots: tuple[PlotSpec, ...] | None = None
    references: tuple[Reference, ...] = ()
    timelines: tuple = ()
    labels: tuple[tuple[str, str], ...] = ()
    paper: str | None = None
    order: tuple[tuple[str, tuple], ...] = ()


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
    t = c.table(v, key, ("kind", "metric", "x"), ("hue", "title", "where", "facet"))
    if t["kind"] not in PLOT_KINDS:
        got = f'"{t["kind"]}"' if isinstance(t["kind"], str) else _kind(t["kind"])
        raise c.fail(f"{key}.kind", f'expected "bar" or "line", got {got}')
    return PlotSpec(t["kind"], c.string(t["metric"], f"{key}.metric"), c.string(t["x"], f"{key}.x"),
                    None if "hue" not in t else c.string(t["hue"], f"{key}.hue"),
                    None if "title" not in t else c.string(t["title"], f"{key}.title"),
                    tuple(_where(c, t["where"], f"{key}.where").items()) if "where" in t else (),
                    None if "facet" not in t else c.string(t["facet"], f"{key}.facet"))


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
    value = c.number(t["value"], f"{key}.value")
    if ci95 is not None and not ci95[0] <= value <= ci95[1]:   # (a typo in one of the three numbers)
        raise c.fail(f"{key}.ci95", f"[{ci95[0]:g}, {ci95[1]:g}] does not hold the value {value:g} (a mean lies "
                                    "within its confidence interval)")
    return Reference(dict(where), c.string(t["metric"], f"{key}.metric"), value,
                     c.string(t["source"], f"{key}.source"), ci95, std)


def check_report_section(section: Any, where: str) -> ReportSpec:
    """Check a campaign file's ``[report]`` table (as parsed by tomllib) and return it as a
    :class:`ReportSpec`. Keys: ``title`` (string), ``metrics`` (array of metric names),
    ``plot`` (array of tables ``kind``/``metric``/``x``/``hue``?/``title``?/``where``?),
    ``reference`` (array of tables ``where``/``metric``/``value``/``source``/``ci95``?/``std``?),
    ``timeline`` (array of tables ``where``/``title``?/``relative``?), ``labels`` (table of
    name -> text), ``paper`` (a name of :data:`.papers.PAPERS`), ``order`` (table of column ->
    array of its values, in the order the plots show them). Whether the metrics and columns
    exist is checked by :func:`write_report`, against the results.

    Raises:
        CampaignError: one line ``<where>: report.<key path>: <what is wrong>``; array indexes
            count from 0 (``report.plot[1]`` is the second ``[[report.plot]]``).
    """
    c = _Checker(where)
    t = c.table(section, "report", (), ("title", "metrics", "plot", "reference", "timeline", "labels", "paper",
                                        "order"))
    title = c.string(t["title"], "report.title") if "title" in t else None
    metrics = None
    if "metrics" in t:
        metrics = tuple(c.string(m, f"report.metrics[{i}]")
                        for i, m in enumerate(c.array(t["metrics"], "report.metrics")))
        for i, m in enumerate(metrics):
            if m in metrics[:i]:   # (its section and plot would be written twice)
                raise c.fail(f"report.metrics[{i}]", f"{m!r} is listed twice (report.metrics[{metrics.index(m)}])")
    plots = None
    if "plot" in t:
        plots = tuple(_plot(c, p, f"report.plot[{i}]")
                      for i, p in enumerate(c.array(t["plot"], "report.plot")))
    refs = tuple(_reference(c, r, f"report.reference[{i}]")
                 for i, r in enumerate(c.array(t.get("reference", []), "report.reference")))
    timelines = tuple(_timeline(c, v, f"report.timeline[{i}]")
                      for i, v in enumerate(c.array(t.get("timeline", []), "report.timeline")))
    labels = t.get("labels", {})
    if not isinstance(labels, dict):
        raise c.fail("report.labels", f"expected a table of name = text, got {_kind(labels)}")
    labels = tuple((k, c.string(v, f"report.labels.{k}")) for k, v in labels.items())
    paper = None
    if "paper" in t:
        from .papers import PAPERS
        paper = c.string(t["paper"], "report.paper")
        if paper not in PAPERS:
            raise c.fail("report.paper", f"unknown paper {paper!r}; known: {', '.join(sorted(PAPERS))}")
    order = t.get("order", {})
    if not isinstance(order, dict):
        raise c.fail("report.order", f"expected a table of column = [values], got {_kind(order)}")
    order = tuple((k, tuple(c.array(v, f"report.order.{k}"))) for k, v in order.items())
    return ReportSpec(title, metrics, plots, refs, timelines, labels, paper, order)


def manifest_report(manifest: dict) -> tuple[ReportSpec, str]:
    """The ``[report]`` table a ``campaign.json`` holds, checked (:func:`check_report_section`;
    the defaults without one), and the name messages give it: the campaign file's name, or
    ``campaign.json``.

    Raises:
        CampaignError: a bad ``[report]`` table.
    """
    where = Path(str(manifest["source"])).name if manifest.get("source") else "campaign.json"
    section = manifest.get("report")
    return (ReportSpec() if section is None else check_report_section(section, where)), where


def _listed(names: list, most: int = 20) -> str:
    """``names`` as a list in a message, the first ``most`` of them then how many more."""
    words = [str(n) for n in names[:most]]
    return ", ".join(words) + (f"... ({len(names) - most} more)" if len(names) > most else "")


def check_names(spec: ReportSpec, params: list[dict], where: str, metrics: list[str] | None = None) -> None:
    """Check the names and values a ``[report]`` table gives against the campaign's runs, so that a
    typo does not make an order, a plot, a paper's number or a label vanish without a word.
    Refused: a ``[report.order]`` column, or a column of a ``where`` (of a plot, a reference, a
    timeline), that no run has, and a value of an order, or of a plot's or a timeline's
    ``where``, that no run has in that column (``params``: the params of every run of the
    campaign, run yet or not). A reference may name a value the campaign does not run (a paper's
    configuration left out): the report lists it as not compared. With ``metrics`` (those of the results), a
    ``[report.labels]`` name that is no column and no metric is said in one warning line on
    stderr (not refused: a metric appears only once some run made it, and a campaign under way
    may lack it yet).

    Raises:
        CampaignError: ``<where>: report.<key>: ...`` naming the unknown column or value and the
            known ones.
    """
    import sys

    columns = list(dict.fromkeys(c for p in params for c in p))
    values: dict[str, dict] = {}

    def check(key: str, col: str, given: list | tuple) -> None:
        if col not in columns:
            raise CampaignError(f"{where}: {key}: {col!r} is not a column of the campaign; its columns: "
                                f"{_listed(columns)}")
        if col not in values:
            values[col] = {sort_key(scalar(p.get(col))): scalar(p.get(col)) for p in params
                           if scalar(p.get(col)) is not None}
        for i, v in enumerate(given):
            if sort_key(v) not in values[col]:
                known = [_cell(w) for _, w in sorted(values[col].items())]
                at = f"[{i}]" if isinstance(given, list) else ""
                raise CampaignError(f"{where}: {key}{at}: {v!r} is no value of {col!r} in this campaign; its "
                                    f"values: {_listed(known)}")

    for col, vals in spec.order:
        check(f"report.order.{col}", col, list(vals))
    wheres = [(f"report.plot[{i}].where", dict(p.where)) for i, p in enumerate(spec.plots or ())] + \
             [(f"report.timeline[{i}].where", dict(t.where)) for i, t in enumerate(spec.timelines)]
    for key, table in wheres:
        for col, v in table.items():
            check(f"{key}.{col}", col, (v,))
    for i, r in enumerate(spec.references):   # (a value the campaign does not run: "Not compared: not run")
        for col in r.where:
            check(f"report.reference[{i}].where.{col}", col, ())
    unknown = [k for k, _ in spec.labels if k not in columns and k not in (metrics or [])]
    if metrics is not None and unknown:
        print(f"warning: {where}: report.labels: {', '.join(map(repr, unknown))} name(s) no column or metric of "
              f"the results (a typo?), not used; columns: {_listed(columns)}; metrics: {_listed(metrics)}",
              file=sys.stderr)


def campaign_params(manifest: dict, summary: pd.DataFrame) -> list[dict]:
    """The params of every group of ``summary`` and of every run that ``campaign.json`` lists
    (run yet or not: a folder whose manifest has no run list gives only the former)."""
    runs = [r["params"] for r in manifest.get("runs") or [] if isinstance(r, dict) and isinstance(r.get("params"), dict)]
    return summary[group_columns(summary)].to_dict("records") + runs   # (the summary's column order first)


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
        if not len(hits) and len(table[[all(_same(scalar(r[k]), v) for k, v in tl.where) for _, r in table.iterrows()]]) == 0 \
                and len(table) < len(manifest_ids(manifest) or ()):   # (a campaign still running)
            lines += [f"- {tl.title or dict(tl.where)}: that run has no result yet.", ""]
            continue
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

def _cell(v: Any) -> str:
    """A group value as a table cell: whole floats without ``.0`` (``80.0`` -> ``80``), numbers with
    thousands separators, text on one line."""
    v = scalar(v)
    if v is None:
        return "—"
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}" if abs(v) >= 10000 else str(v)
    return " ".join(str(v).split()).replace("|", "\\|")


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + \
           ["| " + " | ".join(r) + " |" for r in rows] + [""]


def _mean_ci(row: pd.Series, m: str) -> str:
    return fmt.mean_ci(*(scalar(row[f"{m}_{s}"]) for s in ("mean", "ci95_low", "ci95_high")))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


def _match(summary: pd.DataFrame, where: dict) -> list[int]:
    """Row numbers of the groups whose params are ``where``'s."""
    return [j for j in range(len(summary)) if all(_same(scalar(summary[k].iat[j]), v) for k, v in where.items())]


def shown_groups(summary: pd.DataFrame, groups: list[str]) -> list[str]:
    """The group columns worth a table column: those with more than one value (the others are in
    the report's header); the first one when none varies."""
    return [g for g in groups if summary[g].nunique(dropna=False) > 1] or groups[:1]


def _reference_rows(c: _Checker, refs: tuple[Reference, ...], summary: pd.DataFrame,
                    groups: list[str], metrics: list[str], shown: list[str],
                    labels: dict) -> tuple[list[list[str]], list[str]]:
    rows, unmatched = [], []
    for i, ref in enumerate(refs):
        key = f"report.reference[{i}]"
        if ref.metric not in metrics:
            raise c.fail(f"{key}.metric", f"unknown metric {ref.metric!r}; available: {', '.join(metrics)}")
        for k in ref.where:
            if k not in groups:
                raise c.fail(f"{key}.where.{k}", f"not a group column; available: {', '.join(groups)}")
        hits = _match(summary, ref.where)
        if len(hits) > 1:
            raise c.fail(f"{key}.where", f"matches {len(hits)} groups; add keys among {', '.join(groups)}")
        if not hits:
            unmatched.append(f"{metric_label(ref.metric, labels)} {ref.where} ({ref.source}): not run")
            continue
        row = summary.iloc[hits[0]]
        mean, low, high = (scalar(row[f"{ref.metric}_{s}"]) for s in ("mean", "ci95_low", "ci95_high"))
        paper = fmt.number(ref.value, trim=True)
        if ref.ci95:
            paper += f" [{fmt.number(ref.ci95[0], trim=True)}, {fmt.number(ref.ci95[1], trim=True)}]"
        if ref.std is not None:
            paper += f" (std {fmt.number(ref.std, trim=True)})"
        if mean is None:
            diff, inside = "—", "n/a (no done run)" if not int(row["n"]) else "n/a (no value in its done runs)"
        else:
            diff = fmt.signed(mean - ref.value)
            if ref.value != 0:
                diff += f" ({fmt.signed(100 * (mean - ref.value) / abs(ref.value), 2)} %)"
            inside = "n/a (n = 1)" if low is None else ("yes" if low <= ref.value <= high else "no")
        rows.append([_cell(row[g]) for g in shown] +
                    [metric_label(ref.metric, labels), _mean_ci(row, ref.metric), _n(row, ref.metric), paper,
                     _cell(ref.source), diff, inside])
    return rows, unmatched


def _plot_name(p: PlotSpec, taken: set[str]) -> str:
    base = "_".join(s for s in (p.kind, p.metric, "by", p.x, p.hue, *(("per", p.facet) if p.facet else ()),
                                *(f"{k}-{v}" for k, v in sorted(p.where))) if s)
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
        return [f"- Runs: {done:,} done, {failed:,} failed (no run list in campaign.json: missing runs unknown)."]
    missing = len(ids - set(table["id"]))
    parts = [f"{done:,} done"] + ([f"{failed:,} failed"] if failed else []) + \
            ([f"{missing:,} not run yet"] if missing else [])
    every = " (all done)" if not failed and not missing else ""
    return [f"- Runs: {len(ids):,} in the campaign{every}" + ("" if every else ": " + ", ".join(parts)) + "."]


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
    if spec.plots is None:   # bars by policy, one panel per scenario (their scales may differ)
        x = "policy" if "policy" in groups else (groups[0] if groups else None)
        facet = "scenario" if "scenario" in groups and x != "scenario" and summary["scenario"].nunique() > 1 else None
        return metrics, tuple(PlotSpec("bar", m, x, None, facet=facet) for m in metrics if x is not None)
    for i, p in enumerate(spec.plots):
        if p.metric not in available:
            raise c.fail(f"report.plot[{i}].metric", f"unknown metric {p.metric!r}; {known}")
        for role in ("x", "hue", "facet"):
            col = getattr(p, role)
            if col is not None and col not in groups:
                raise c.fail(f"report.plot[{i}].{role}",
                             f"{col!r} is not a group column; available: {', '.join(groups)}")
        for k, _ in p.where:
            if k not in groups:
                raise c.fail(f"report.plot[{i}].where.{k}",
                             f"not a group column; available: {', '.join(groups)}")
    return metrics, spec.plots


def _values(table: pd.DataFrame, col: str) -> str:
    """The values of group column ``col`` for the header's list: runs of integers as ranges,
    else each value as a cell; whole numbers of four digits or more with thousands separators,
    and then ``"; "`` between values (``0; 2,785; 11,140``, not ``0, 2785, 11,140``)."""
    vals = sorted({v for v in map(scalar, table[col]) if v is not None}, key=sort_key)
    if col == "seed" or (vals and all(isinstance(v, int) and not isinstance(v, bool) for v in vals) and len(vals) > 5):
        return fmt.ranges(vals)
    cells = [_list_cell(v) for v in vals]
    return ("; " if any("," in c for c in cells) else ", ").join(cells) or "—"


def _list_cell(v: Any) -> str:
    """:func:`_cell`, with thousands separators from 1,000 on."""
    w = scalar(v)
    if isinstance(w, float) and w.is_integer():
        w = int(w)
    if isinstance(w, int) and not isinstance(w, bool) and abs(w) >= 1000:
        return f"{w:,}"
    return _cell(v)


def _header(title: str, name: str, source: str | None, table: pd.DataFrame, manifest: dict | None,
            groups: list[str], labels: dict) -> list[str]:
    lines = [f"# {title}", "", "## What was run", "",
             f"- Campaign: `{name}`" + (f" (from `{source}`)" if source else "") + "."]
    lines += _runs_line(table, manifest)
    if table.attrs.get(MIXED_CODES):   # (one table of two codes' results: said where it is read)
        lines.append(f"- **{table.attrs[MIXED_CODES].replace('warning: ', 'Warning: ', 1)}**")
    elif table.attrs.get(CODES):
        lines.append(f"- Made by: {table.attrs[CODES][0]}.")
    for col in param_columns(table):
        label = column_label(col, labels)
        lines.append(f"- {label}" + (f" (`{col}`)" if label != col else "") + f": {_values(table, col)}")
    return lines + ["", f"Groups: {', '.join(column_label(g, labels) for g in groups) or '(all runs)'} "
                    "(the seeds of a configuration). Cells give the mean over the group's done runs ± the "
                    "half-width of its 95 % Student-t confidence interval (± 0: every run gave the same "
                    "value); n is the number of done runs (\"2 of 3\": only 2 of its 3 done runs have a value of "
                    "the metric, and the mean is theirs: a run where no job started has no waiting time, for "
                    "instance).", ""]


def _with_values(table: pd.DataFrame, summary: pd.DataFrame, groups: list[str], metrics: list[str]) -> pd.DataFrame:
    """``summary`` with a column ``<m>_n`` for each metric: how many of a group's done runs have a
    finite value of ``m`` (its mean and CI are over those runs only; a run where no job started
    has no waiting time, for instance)."""
    done = table[table["status"] == "done"]
    keys = [tuple(scalar(v) for v in row) for row in done[groups].itertuples(index=False, name=None)]
    out = summary.copy()
    for m in metrics:
        finite = np.isfinite(done[m].astype("float64").to_numpy()) if m in done else np.zeros(len(done), bool)
        count: dict[tuple, int] = {}
        for k, ok in zip(keys, finite):
            count[k] = count.get(k, 0) + int(ok)
        out[f"{m}_n"] = [count.get(tuple(scalar(v) for v in row), 0)
                         for row in summary[groups].itertuples(index=False, name=None)]
    return out


def _n(row: pd.Series, m: str) -> str:
    """The n of ``row``'s cell for metric ``m``: its done runs, or ``"k of n"`` when only k of them
    have a value of ``m`` (the mean and its CI are over those k)."""
    n, k = int(row["n"]), int(row.get(f"{m}_n", row["n"]))
    return str(n) if k == n else f"{k} of {n}"


def _metric_section(m: str, summary: pd.DataFrame, shown: list[str], labels: dict) -> list[str]:
    failed = bool(summary["n_failed"].any())
    rows = [[_cell(r[g]) for g in shown] + [_mean_ci(r, m), _n(r, m)]
            + ([str(int(r["n_failed"]))] if failed else []) for _, r in summary.iterrows()]
    head = [column_label(g, labels) for g in shown] + ["mean ± 95 % CI", "n"] + (["failed"] if failed else [])
    return [f"## {metric_label(m, labels)}", "", f"Metric `{m}`.", ""] + _md_table(head, rows)


def _with_paper(rows: pd.DataFrame, metric: str, refs: tuple[Reference, ...]) -> pd.DataFrame:
    """``rows`` with a ``<metric>_paper`` column: the paper's value of each group that has one."""
    mine = [r for r in refs if r.metric == metric]
    if not mine:
        return rows
    rows = rows.copy()
    col = np.full(len(rows), np.nan)
    for r in mine:
        for j in _match(rows, r.where):
            col[j] = r.value
    rows[f"{metric}_paper"] = col
    return rows


def _plot_section(plots: tuple, from_spec: bool, c: _Checker, summary: pd.DataFrame, out: Path,
                  refs: tuple[Reference, ...], labels: dict, order: dict | None = None) -> list[str]:
    lines = ["## Plots", ""]
    taken: set[str] = set()
    for i, p in enumerate(plots):
        rows = summary
        for k, v in p.where:
            rows = rows[[_same(scalar(x), v) for x in rows[k]]]
        if not len(rows) or not rows[f"{p.metric}_mean"].notna().any():
            where = f" where {dict(p.where)}" if p.where else ""
            lines += [f"- {metric_label(p.metric, labels)}{where}: no value in any group, no plot.", ""]
            continue
        stem = _plot_name(p, taken)
        draw = plot_bars if p.kind == "bar" else plot_lines
        try:
            draw(_with_paper(rows.reset_index(drop=True), p.metric, refs), p.metric, p.x, p.hue,
                 out=out / "plots" / stem, title=p.title, facet=p.facet, labels=labels, order=order)
        except CampaignError as exc:  # e.g. a line plot over a non-numeric x
            raise c.fail(f"report.plot[{i}]", str(exc)) if from_spec else exc
        alt = p.title or f"{metric_label(p.metric, labels)} by {column_label(p.x, labels)}"
        lines += [f"![{alt}](plots/{stem}.png)", ""]
        if p.kind == "line":   # (a line needs x: groups where the axis does not apply have none)
            lines += _left_out(rows, p, labels)
    return lines


def _left_out(rows: pd.DataFrame, p: Any, labels: dict) -> list[str]:
    """The note under a line plot naming the groups it leaves out because they have no ``p.x``
    (an axis that does not apply to them: a policy without that option, a file scenario on a
    generator's parameter). They are named by the first column, the hue first, whose values in
    the left-out groups are none of the plotted groups' values: the column that says why."""
    has = rows[f"{p.metric}_mean"].notna()
    off, on = rows[rows[p.x].isna() & has], rows[rows[p.x].notna() & has]
    if not len(off):
        return []
    for col in [p.hue] + [g for g in group_columns(rows) if g not in (p.hue, p.x)]:
        if col and off[col].notna().all():
            names = sorted({_cell(v) for v in off[col]})
            if not names or {_cell(v) for v in on[col]} & set(names):
                continue
            which = "has" if len(names) == 1 else "have"
            return [f"- Not in this plot: {column_label(col, labels)} {', '.join(names)}, which {which} no "
                    f"{column_label(p.x, labels)} (the axis does not apply to "
                    f"{'it' if len(names) == 1 else 'them'}).", ""]
    return [f"- Not in this plot: {len(off)} group(s) without {column_label(p.x, labels)} (the axis does not "
            "apply to them).", ""]


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
    the CI; plots show the paper's values of the groups that were run as stars. A reference whose
    group has no result is listed as not compared. With ``spec.paper``, that paper's section
    (:mod:`.papers`) comes first.

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
    own, where = manifest_report(manifest)
    c = _Checker(where)
    spec = own if spec is None else spec
    labels = dict(spec.labels)
    table, summary = tables(out)
    check_names(spec, campaign_params(manifest, summary), where, summary_metrics(summary))
    write_tables(out, table, summary)
    groups = group_columns(summary)
    if spec.order:   # the groups in the order the campaign file gives for some columns
        from .plot import sort_by
        keys = [sort_by(g, dict(spec.order)) for g in groups]
        rank = sorted(range(len(summary)), key=lambda j: tuple(k(summary[g].iat[j]) for k, g in zip(keys, groups)))
        summary = summary.iloc[rank].reset_index(drop=True)
    shown = shown_groups(summary, groups)
    metrics, plots = _metrics_and_plots(spec, c, summary)
    counted = _with_values(table, summary, groups, summary_metrics(summary))   # (n of each metric's cells)
    ref_rows, unmatched = _reference_rows(c, spec.references, counted, groups, summary_metrics(summary), shown,
                                          labels)

    name = manifest.get("name") or manifest.get("campaign") or out.name
    lines = _header(spec.title or f"Campaign {name}", name, source, table, manifest or None, groups, labels)
    if spec.paper:
        from .papers import CITATION_KEY, PAPERS
        lines += [CITATION_KEY, ""] + PAPERS[spec.paper](table, summary, out)
    if spec.references:
        lines += ["## Our numbers beside the paper's", ""]
        lines += _md_table([column_label(g, labels) for g in shown] +
                           ["metric", "ours: mean ± 95 % CI", "n", "paper", "source", "difference",
                            "paper in our CI"], ref_rows)
        lines += [f"- Not compared: {u}" for u in unmatched] + ([""] if unmatched else [])
    if spec.metrics is None:   # (a default metric no run has is left out: say so, and why)
        unstarted = [m for m in ("mean_waiting_time", "mean_bounded_slowdown") if m not in metrics
                     and f"{m}_mean" in summary.columns and (table["status"] == "done").any()]
        if unstarted:
            lines += [f"No table of {' or '.join(metric_label(m, labels) for m in unstarted)}: no job started in "
                      "any done run (every job rejected, or none submitted), so no run has a value.", ""]
    for m in metrics:
        lines += _metric_section(m, counted, shown, labels)
    if plots:
        lines += _plot_section(plots, spec.plots is not None, c, summary, out, spec.references, labels,
                               dict(spec.order))
    lines += _timeline_section(c, spec, table, manifest, out)
    lines += _failed_section(table)
    path = out / "report.md"
    path.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
    return path
