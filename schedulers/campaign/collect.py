"""Campaign tables: one row per run (``runs.csv``) and one row per group (``summary.csv``).

A group is a run's ``params`` without ``seed``: the seeds of one configuration. The summary gives,
for each metric, the mean over the group's done runs and the 95 % Student-t confidence interval
of that mean. Missing values (a metric that is null, a statistic that is undefined) are NaN in the
DataFrames and empty cells in the CSV files, never the text ``nan``.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd
from scipy import stats

from .columns import FIRST_COLUMNS, LAST_COLUMNS, RUN_COLUMNS, SIMULATOR
from .errors import MOVE_IT_OUT, CampaignError
from .provenance import code_of, describe, mixed_codes_line

RUN_FORMAT = "gridsched-campaign-run/1"
STATUSES = ("done", "failed")
#: Statistics written per metric, as ``<metric>_<stat>`` columns of the summary.
STATS = ("mean", "std", "ci95_low", "ci95_high")
#: The key of a runs table's ``attrs`` holding the warning that its records come from several codes.
MIXED_CODES = "mixed_codes"
#: The key of a runs table's ``attrs`` holding the codes that made its records, in words
#: (:func:`.provenance.describe`, sorted).
CODES = "codes"


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


def _read_json(path: Path, record: bool = False) -> Any:
    """``path`` read as strict JSON (:mod:`schedulers.inputs.jsonfile`: no NaN or Infinity, no
    number too large for a double, no repeated key); ``record``: a file of ``results/``, whose
    error says how to be rid of it."""
    from ..inputs.jsonfile import read_json

    try:
        return read_json(path, ValueError, "campaign record")
    except ValueError as exc:
        raise CampaignError(f"not a valid JSON file: {exc}" + (f"; {MOVE_IT_OUT}" if record else "")) from None


def load_manifest(out_dir: str | Path) -> dict | None:
    """The parsed ``campaign.json`` of an output folder, None when the file does not exist.

    Raises:
        CampaignError: the file is not valid JSON or not an object.
    """
    path = Path(out_dir) / "campaign.json"
    if not path.is_file():
        return None
    data = _read_json(path)
    if not isinstance(data, dict):
        raise CampaignError(f"{path}: expected a JSON object")
    return data


def manifest_axes(manifest: dict | None) -> list[str]:
    """The axis names of a manifest in its order (``axes``: a list of names or a table whose keys
    are the names); [] when absent."""
    axes = (manifest or {}).get("axes")
    if isinstance(axes, dict):
        return [str(a) for a in axes]
    if isinstance(axes, list):
        return [a for a in axes if isinstance(a, str)]
    return []


def manifest_ids(manifest: dict | None) -> set[str] | None:
    """The run ids a manifest lists (``runs``: a list of ``{"id", "params"}``), None when it has
    no run list."""
    runs = (manifest or {}).get("runs")
    if isinstance(runs, dict):
        return set(runs)
    if isinstance(runs, list):
        return {r["id"] for r in runs if isinstance(r, dict) and "id" in r}
    return None


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _check_record(path: Path, rec: Any) -> dict:
    def bad(what: str) -> CampaignError:
        return CampaignError(f"{path}: {what}")

    if not isinstance(rec, dict):
        raise bad("expected a JSON object")
    if rec.get("format") != RUN_FORMAT:
        raise bad(f"format is {rec.get('format')!r}, expected {RUN_FORMAT!r}")
    if rec.get("id") != path.stem:
        raise bad(f"id {rec.get('id')!r} does not match the file name")
    if rec.get("status") not in STATUSES:
        raise bad(f"status {rec.get('status')!r} is not 'done' or 'failed'")
    params = rec.get("params")
    if not isinstance(params, dict) or not all(
            v is None or isinstance(v, (str, int, float)) for v in params.values()):
        raise bad("params must be an object of scalars")
    for key in ("summary", "policy_metrics"):
        table = rec.get(key)
        if table is None:
            continue
        if not isinstance(table, dict) or not all(v is None or _is_number(v) for v in table.values()):
            raise bad(f"{key} must be an object of numbers or null")
    return rec


def load_records(out_dir: str | Path) -> list[dict]:
    """Every run record of ``out_dir/results``, sorted by file name (= run id).

    Files whose name does not end in ``.json``, contains ``.tmp`` or starts with a dot are
    temporary files of a run being written and are skipped. No ``results`` folder: [].

    Raises:
        CampaignError: ``out_dir`` is not a folder; a result file does not parse, is not a
            ``gridsched-campaign-run/1`` record (format, id = file name, status, params, summary
            and policy_metrics are checked); the message names the file.
    """
    out = Path(out_dir)
    if not out.is_dir():
        raise CampaignError(f"{out}: no such campaign output folder")
    results = out / "results"
    if not results.is_dir():
        return []
    records = []
    for path in sorted(results.iterdir()):
        name = path.name
        if not name.endswith(".json") or ".tmp" in name or name.startswith(".") or not path.is_file():
            continue
        records.append(_check_record(path, _read_json(path, record=True)))
    return records


def sort_key(value: Any) -> tuple:
    """Total order over scalars of mixed types: numbers, then strings, then missing values."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return (2, 0.0, "")
    if isinstance(value, (int, float, np.number)):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def scalar(value: Any) -> Any:
    """A table cell as a plain Python value (numpy scalars unwrapped, NaN / NA -> None)."""
    if value is None or (not isinstance(value, (str, bool)) and pd.isna(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value


def column(values: list) -> pd.Series:
    """A column with the narrowest dtype that keeps the values and their missing cells: nullable
    integers (``Int64``), floats, nullable booleans, else whatever pandas infers (strings,
    mixed objects). Integers beyond 64 bits (a seed of 2**64: TOML and JSON take it) stay Python
    integers (``object``), exact."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pd.Series(pd.array(values, dtype="boolean"))
    if present and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in present):
        if not all(-2**63 <= v < 2**63 for v in present):
            return pd.Series(values, dtype=object)
        return pd.Series(pd.array(values, dtype="Int64"))
    if all(_is_number(v) or isinstance(v, np.number) for v in present):
        return pd.Series([np.nan if v is None else float(v) for v in values], dtype="float64")
    return pd.Series(values, dtype=None if len({type(v) for v in present}) == 1 else object)


def runs_table(records: Iterable[dict], axes: list[str] | None = None) -> pd.DataFrame:
    """One row per run record.

    Columns, in order (:mod:`.columns`): ``id``, ``status``, the params keys (axis order of
    ``axes``, the manifest's, then the other keys sorted), ``policy_name``, ``simulator``, the
    summary keys (order of first appearance), ``policy.<name>`` for every policy metric (sorted),
    ``wall_time_s`` (s), ``error``. Rows sorted by params (numbers < strings < missing), then id.
    A failed run has empty summary cells. Metric columns are ``Int64`` or ``float64``.

    Raises:
        CampaignError: a params key has the name of another column.
    """
    records = list(records)
    keys = {k for r in records for k in r["params"]}
    order = [a for a in (axes or []) if a in keys]
    params = order + sorted(keys - set(order))
    summary_keys: list[str] = []
    for r in records:
        summary_keys += [k for k in (r.get("summary") or {}) if k not in summary_keys]
    policy_keys = sorted({k for r in records for k in (r.get("policy_metrics") or {})})
    # an axis named ``simulator`` (engine against real Batsim) is the simulator column itself
    own_simulator = SIMULATOR not in params
    fixed = [*FIRST_COLUMNS, *(c for c in RUN_COLUMNS if own_simulator or c != SIMULATOR), *summary_keys,
             *(f"policy.{k}" for k in policy_keys), *LAST_COLUMNS]
    clash = sorted(set(params) & set(fixed))
    if clash:
        raise CampaignError(f"params key {clash[0]!r} has the name of a runs-table column; name the axis "
                            f"\"scenario.{clash[0]}\" or \"policy.{clash[0]}\" in the campaign file and run it again")
    records.sort(key=lambda r: (tuple(sort_key(r["params"].get(k)) for k in params), r["id"]))

    def cells(get) -> pd.Series:
        return column([get(r) for r in records])

    own = {"id": lambda r: r["id"], "status": lambda r: r["status"], "policy_name": lambda r: r.get("policy_name"),
           SIMULATOR: lambda r: r.get(SIMULATOR),
           "wall_time_s": lambda r: float(r["wall_time_s"]) if _is_number(r.get("wall_time_s")) else None,
           "error": lambda r: r.get("error")}   # the cell of each column of .columns
    data = {c: cells(own[c]) for c in FIRST_COLUMNS}
    for k in params:
        data[k] = cells(lambda r, k=k: r["params"].get(k))
    for c in RUN_COLUMNS:
        if own_simulator or c != SIMULATOR:
            data[c] = cells(own[c])
    for k in summary_keys:
        data[k] = cells(lambda r, k=k: (r.get("summary") or {}).get(k))
    for k in policy_keys:
        data[f"policy.{k}"] = cells(lambda r, k=k: (r.get("policy_metrics") or {}).get(k))
    for c in LAST_COLUMNS:
        data[c] = cells(own[c])
    return pd.DataFrame(data)


def _between(table: pd.DataFrame, first: str, last: str) -> list[str]:
    cols = list(table.columns)
    for c in (first, last):
        if c not in cols:
            raise CampaignError(f"not a runs table: no {c!r} column")
    return cols[cols.index(first) + 1:cols.index(last)]


def param_columns(table: pd.DataFrame) -> list[str]:
    """The params columns of a runs table: those between ``status`` and ``policy_name``."""
    return _between(table, "status", "policy_name")


def metric_columns(table: pd.DataFrame) -> list[str]:
    """The numeric metric columns of a runs table: those between ``policy_name`` (and
    ``simulator`` after it, unless ``simulator`` is a params column) and ``error`` (summary,
    ``policy.*``, ``wall_time_s``) with a numeric dtype."""
    cols = _between(table, "policy_name", "error")
    if cols[:1] == ["simulator"]:
        cols = cols[1:]
    return [c for c in cols
            if pd.api.types.is_numeric_dtype(table[c]) and not pd.api.types.is_bool_dtype(table[c])]


def _check_columns(kind: str, names: Iterable[str], available: list[str]) -> list[str]:
    names = list(names)
    for n in names:
        if n not in available:
            raise CampaignError(f"unknown {kind} {n!r}; available: {', '.join(available) or '(none)'}")
    return names


def mean_ci95(values: np.ndarray) -> tuple[float, float, float, float]:
    """``(mean, std, ci95_low, ci95_high)`` of finite values: sample std (ddof = 1) and the
    Student-t interval ``mean -+ t.ppf(0.975, n - 1) * std / sqrt(n)``. With n = 1 the std and
    the interval are undefined (NaN); with n = 0 everything is NaN. When every value is the same
    the mean is that value, the std 0 and the interval ``[mean, mean]`` exactly (not the few ulps
    that summing them would give)."""
    n = len(values)
    if n == 0:
        return (math.nan,) * 4
    if n > 1 and bool(np.all(values == values[0])):
        v = float(values[0])
        return v, 0.0, v, v
    mean = float(np.mean(values))
    if n == 1:
        return mean, math.nan, math.nan, math.nan
    std = float(np.std(values, ddof=1))
    half = float(stats.t.ppf(0.975, n - 1)) * std / math.sqrt(n)
    return mean, std, mean - half, mean + half


def summarize(table: pd.DataFrame, metrics: list[str] | None = None,
              group_by: list[str] | None = None) -> pd.DataFrame:
    """Per-group statistics of a :func:`runs_table`.

    Groups: the ``group_by`` columns (default: every params column but ``seed``), sorted like
    the runs. Columns: the group columns, ``n`` (done runs), ``n_failed`` (failed runs), then for
    every metric (default: every numeric metric column) ``<m>_mean``, ``<m>_std`` (sample, ddof =
    1), ``<m>_ci95_low`` and ``<m>_ci95_high`` (95 % Student-t interval of the mean), in the
    metric's unit. Only done runs with a value count: a metric null in all of them has empty
    mean/std/CI, and a group with a single value has a mean but an empty std and CI (the spread
    of one run is unknown; it is not 0). Empty cells are NaN here and empty in the CSV.

    Raises:
        CampaignError: not a runs table, an unknown ``group_by`` column or an unknown or
            non-numeric metric (the message lists the available ones).
    """
    params = param_columns(table)
    available = metric_columns(table)
    metrics = available if metrics is None else _check_columns("metric", metrics, available)
    if group_by is None:
        group_by = [c for c in params if c != "seed"]
    else:
        group_by = _check_columns("group column", group_by, params)
    done = (table["status"] == "done").to_numpy()
    values = {m: table[m].astype("float64").to_numpy() for m in metrics}
    groups: dict[tuple, list[int]] = {}
    for i, row in enumerate(table[group_by].itertuples(index=False, name=None)):
        groups.setdefault(tuple(scalar(v) for v in row), []).append(i)
    keys = sorted(groups, key=lambda k: tuple(sort_key(v) for v in k))
    data: dict[str, Any] = {c: column([k[j] for k in keys]) for j, c in enumerate(group_by)}
    rows = [np.array(groups[k]) for k in keys]
    data["n"] = pd.Series([int(done[r].sum()) for r in rows], dtype="int64")
    data["n_failed"] = pd.Series([int((~done[r]).sum()) for r in rows], dtype="int64")
    for m in metrics:
        cols = [mean_ci95(v[np.isfinite(v)]) for v in (values[m][r[done[r]]] for r in rows)]
        for j, s in enumerate(STATS):
            data[f"{m}_{s}"] = pd.Series([c[j] for c in cols], dtype="float64")
    return pd.DataFrame(data)


def tables(out_dir: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The runs table and the default summary of an output folder, without writing anything.
    When ``campaign.json`` lists the runs, result files of other runs (an earlier version of the
    campaign file) are left out. When the records were made by more than one gridsched code
    (:mod:`.provenance`), one warning line on stderr says so, and the table's
    ``attrs[MIXED_CODES]`` holds it; ``attrs[CODES]`` names the codes.

    Raises:
        CampaignError: see :func:`load_records`; no result at all, or every run failed.
    """
    records = load_records(out_dir)
    manifest = load_manifest(out_dir)
    ids = manifest_ids(manifest)
    if ids is not None:  # results of runs the campaign file no longer has are left out
        records = [r for r in records if r["id"] in ids]
    if not records:
        raise CampaignError(f"{Path(out_dir) / 'results'}: no run results yet (run the campaign first)")
    if not any(r["status"] == "done" for r in records):   # (no metric to collect: say why, not "unknown metric")
        raise CampaignError(f"{out_dir}: none of its {len(records)} runs finished (all failed; `gridsched campaign "
                            f"status {out_dir} --failed` gives their errors): no results to collect")
    try:
        table = runs_table(records, manifest_axes(manifest))
    except CampaignError as exc:   # (the folder whose results these are)
        raise CampaignError(f"{out_dir}: {exc}") from None
    table.attrs[CODES] = sorted({describe(code_of(r)) for r in records})
    mixed = mixed_codes_line(str(out_dir), records)
    if mixed is not None:   # (results of an upgraded gridsched beside older ones: said, and kept for report.md)
        print(mixed, file=sys.stderr)
        table.attrs[MIXED_CODES] = mixed
    return table, summarize(table)


def _require_pyarrow() -> None:
    if importlib.util.find_spec("pyarrow") is None:
        raise CampaignError("Parquet output needs pyarrow: pip install 'gridsched[parquet]'")


def write_tables(out_dir: str | Path, table: pd.DataFrame, summary: pd.DataFrame,
                 fmt: str = "csv") -> tuple[Path, Path]:
    """Write ``runs.csv`` or ``runs.parquet`` and ``summary.csv`` into ``out_dir``.

    Each file is written whole or not at all (:func:`schedulers.outfiles.atomic_output`).

    Raises:
        CampaignError: unknown format; Parquet without pyarrow.
        OutputWriteError: a file could not be written (disk full...), named.
    """
    from ..outfiles import atomic_output

    if fmt not in ("csv", "parquet"):
        raise CampaignError(f"unknown table format {fmt!r}; expected 'csv' or 'parquet'")
    out = Path(out_dir)
    runs_path = out / f"runs.{fmt}"
    if fmt == "parquet":
        _require_pyarrow()
        with atomic_output(runs_path, "wb") as f:
            table.to_parquet(f, engine="pyarrow", index=False)
    else:
        with atomic_output(runs_path, newline="") as f:
            table.to_csv(f, index=False, lineterminator="\n")
    summary_path = out / "summary.csv"
    with atomic_output(summary_path, newline="") as f:
        summary.to_csv(f, index=False, lineterminator="\n")
    return runs_path, summary_path


def collect(out_dir: str | Path, fmt: str = "csv") -> tuple[Path, Path]:
    """Read the results of ``out_dir`` and write its runs table (``runs.csv``, or
    ``runs.parquet`` with ``fmt="parquet"``) and its summary (``summary.csv``, always CSV).

    Returns:
        ``(runs_path, summary_path)``.

    Raises:
        CampaignError: unknown format or Parquet without pyarrow (checked before reading), a bad
            result file, no result at all.
    """
    if fmt not in ("csv", "parquet"):
        raise CampaignError(f"unknown table format {fmt!r}; expected 'csv' or 'parquet'")
    if fmt == "parquet":
        _require_pyarrow()
    table, summary = tables(out_dir)
    return write_tables(out_dir, table, summary, fmt)
