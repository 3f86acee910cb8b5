"""The green-heuristic campaign's numbers: runs, cases compared over one window, settings, claims.

Vocabulary (used by :mod:`.green_report` and :mod:`.green_plots`):

* a **run**: one simulation (algorithm EASY or HEFT, overlap rate Δ, workload parameters, seed);
* a **case**: the 12 runs (2 algorithms x Δ = 0, 10, ..., 50 %) of one workload (same generator
  parameters, same seed, same shutdown setting), what one row of the paper's Table 2 compares
  (004 L218-246);
* a **setting**: the cases of one parameter set over its seeds.

**The common window.** The runs of a case are compared over ``[0, W]``, ``W`` the latest last
event (job end or host switch, ``energy_end_s``) among them: each run is charged Batsim's energy
up to its own last event and then its final power (every host idle at its final pstate) until
``W`` (:func:`schedulers.core.energy_readings.window_energy`). Why: every run serves the same
jobs and the platform exists for the whole window in each of them; Batsim's own total
(``energy_joules``) stops each run at its own end and so credits a shorter run with the idle power
of hosts that are in fact still on. ``W`` is the smallest window that contains every run whole,
so no run's energy is truncated. Batsim's own total and the sum of the jobs' energies are kept as
secondary readings.

Best and worst of a case: lowest and highest energy, ties to the lower Δ then to EASY (004 L246).
A spread is ``(worst - best) / worst`` in %. The makespan room is how much of plain EASY's
makespan (Δ = 0) any schedule that runs one job per host at a time could save:
``(makespan - bound) / makespan`` with the bound of
:func:`schedulers.core.energy_readings.workload_bound`.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from ..core.energy_readings import window_energy
from .collect import load_manifest, load_records, manifest_ids
from .errors import CampaignError
from .green_paper import ALGS, CONFIGS, DELTAS, extremes
from .provenance import mixed_codes_line

__all__ = ["CASE_KEYS", "PAPER_PAIRS", "load_green_runs", "case_table", "setting_table", "design_of",
           "t_interval", "wilson"]

#: Generator parameters and policy settings that make a case (a seed is added for a case).
CASE_KEYS = ["host_cores", "job_count", "cpu_load", "offered_load", "max_res", "switch_time", "idle_timeout",
             "interarrival", "runtime_min", "runtime_max", "walltime_factor", "periods"]
#: The paper's job counts with the offered load the campaign gives them (004 L204: low rates for
#: 10-100 jobs, high rates for 1000-7500).
PAPER_PAIRS = {10: 0.3, 20: 0.3, 100: 0.3, 1000: 1.2, 3500: 1.2, 7500: 1.2}
_SUMMARY = ["makespan", "energy_joules", "energy_at_end_j", "energy_end_s", "end_power_w", "jobs_energy_j",
            "shared_host_s", "walltime_kills", "lb_makespan_s", "work_host_s", "last_arrival_s", "mean_waiting_time",
            "jobs"]
#: Case columns that cannot be negative (their intervals are clipped at 0).
NONNEGATIVE = ("spread_ok", "spread_win", "spread_own", "spread_jobs", "room", "idle_share")
#: ``idle_timeout`` of runs without idle-host shutdown.
NO_SHUTDOWN = -1.0


def load_green_runs(out_dirs: Iterable[str | Path], dedupe: bool = True) -> tuple[pd.DataFrame, int]:
    """Done runs of green campaign folders as one table, and the number of failed runs.

    Columns: ``campaign``, ``alg``, ``delta``, the :data:`CASE_KEYS`, ``seed``, the readings of
    ``green-energy`` and the summary (s, J, W, counts), ``overlaps``, ``wall_time_s``. With
    ``dedupe``, a run present in two folders (same parameters) is kept once. When a folder's
    ``campaign.json`` lists its runs, result files of other runs (an earlier version of the
    campaign file) are left out, as :func:`.collect.tables` leaves them out.

    Raises:
        CampaignError: a folder without results, or runs without the ``green-energy`` readings.
    """
    rows, failed, every = [], 0, []
    out_dirs = list(out_dirs)
    for d in out_dirs:
        recs = load_records(d)
        ids = manifest_ids(load_manifest(d))
        if ids is not None:   # (results of runs the campaign file no longer has: left out, as collect does)
            recs = [r for r in recs if r["id"] in ids]
        if not recs:
            raise CampaignError(f"{d}: no run results (run the campaign first)")
        every += recs
        for r in recs:
            if r["status"] != "done":
                failed += 1
                continue
            gen = (r.get("scenario_spec") or {}).get("params") or {}
            s, opts = r["summary"] or {}, r.get("policy_options") or {}
            missing = [k for k in _SUMMARY if k not in s]
            if missing or "job_count" not in gen:
                raise CampaignError(f"{d}: run {r['id']} is not a green-nantes run with the green-energy metric "
                                    f"(missing {', '.join(missing) or 'job_count'})")
            idle = opts.get("idle_timeout")
            row = {"campaign": r["campaign"], "alg": r["params"]["policy"], "delta": float(opts.get("delta", 10)),
                   "seed": r["params"].get("seed"),
                   "idle_timeout": NO_SHUTDOWN if idle is None else float(idle),
                   "overlaps": (r.get("policy_metrics") or {}).get("overlaps", 0.0),
                   "wall_time_s": float(r.get("wall_time_s") or 0.0)}
            row.update({k: gen[k] for k in CASE_KEYS if k in gen})
            row.update({k: s[k] for k in _SUMMARY})
            rows.append(row)
    mixed = mixed_codes_line(", ".join(map(str, out_dirs)), every)
    if mixed is not None:   # (one table of two codes' results)
        print(mixed, file=sys.stderr)
    t = pd.DataFrame(rows)
    return (deduplicated(t) if dedupe else t), failed


def deduplicated(runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` (:func:`load_green_runs`) with a run present in two folders (same parameters) once."""
    if runs.empty:
        return runs
    return runs.drop_duplicates(subset=CASE_KEYS + ["seed", "alg", "delta"]).reset_index(drop=True)


def design_of(row: Any) -> str:
    """Which part of the campaign a case or setting belongs to: ``paper`` (the paper's plan at the
    paper-coupled rate), ``arrival`` (another offered load), ``width``, ``switch``, ``shutdown``."""
    if row["idle_timeout"] != NO_SHUTDOWN:
        return "shutdown"
    if row["switch_time"] > 0:
        return "switch"
    if row["max_res"] != 4:
        return "width"
    if PAPER_PAIRS.get(int(row["job_count"])) == row["offered_load"]:
        return "paper"
    return "arrival"


def _sig3_equal(values: Iterable[float]) -> bool:
    """All equal once printed with 3 significant digits (Table 2's precision)."""
    return len({float(f"{v:.3g}") for v in values}) == 1


def case_table(runs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per complete case (12 runs), and the runs with their window energy.

    Case columns: the :data:`CASE_KEYS`, ``seed``, ``design``, ``window_s``; per reading
    (``win`` = common window, ``own`` = Batsim's total, ``jobs`` = sum of the jobs' energies):
    ``best_<r>``, ``worst_<r>`` (``"EASY 10"`` text), ``spread_<r>`` (%); ``spread_t`` (% of the
    worst energy case's makespan the best one saves; negative when it is longer), ``room`` (%),
    ``lb_makespan_s``, ``makespan_easy0``, ``tie`` (all 12 window energies equal to 1e-9),
    ``unprinted`` (equal at 3 significant digits), ``best_ok`` and ``spread_ok`` (the same over the
    runs where no job was killed at its walltime, so that every run did all the work), ``kills``, ``kills_max``, ``overlaps``,
    ``easy10_vs_0`` (% energy EASY Δ 10 saves against EASY Δ 0), ``delay50`` (largest % makespan
    increase of Δ 50 over Δ 0 of one algorithm), ``idle_share`` (% of EASY Δ 0's window energy that
    the always-on idle floor ``end_power_w * W`` is).

    Runs (second table): the input plus ``window_s``, ``e_win`` (J) and ``rel_win`` (% against EASY
    Δ 0 of the case).
    """
    if runs.empty:
        return pd.DataFrame(), runs
    keys = CASE_KEYS + ["seed"]
    out, run_parts = [], []
    for key, g in runs.groupby(keys, sort=True):
        if len(g) != len(CONFIGS) or set(zip(g.alg, g.delta.astype(int))) != set(CONFIGS):
            continue
        g = g.copy()
        w = float(g.energy_end_s.max())
        g["window_s"] = w
        g["e_win"] = [window_energy(a, b, c, w) for a, b, c in zip(g.energy_at_end_j, g.energy_end_s, g.end_power_w)]
        by = {(a, int(d)): r for a, d, r in zip(g.alg, g.delta, g.itertuples())}
        base = by[("EASY", 0)]
        g["rel_win"] = 100.0 * (g.e_win / base.e_win - 1.0)
        run_parts.append(g)
        row = dict(zip(keys, key))
        row["design"] = design_of(row)
        row["window_s"] = w
        for reading, col in (("win", "e_win"), ("own", "energy_joules"), ("jobs", "jobs_energy_j")):
            vals = {c: float(getattr(by[c], col)) for c in CONFIGS}
            best, worst = extremes(vals)
            row[f"best_{reading}"], row[f"worst_{reading}"] = f"{best[0]} {best[1]}", f"{worst[0]} {worst[1]}"
            row[f"spread_{reading}"] = 100.0 * (vals[worst] - vals[best]) / vals[worst] if vals[worst] else 0.0
            if reading == "win":
                ms_w, ms_b = by[worst].makespan, by[best].makespan
                row["spread_t"] = 100.0 * (ms_w - ms_b) / ms_w
                row["makespan_worst"], row["makespan_best"] = ms_w, ms_b
                row["tie"] = max(vals.values()) - min(vals.values()) <= 1e-9 * max(vals.values())
                row["unprinted"] = _sig3_equal(vals.values())
                row["easy10_vs_0"] = 100.0 * (vals[("EASY", 0)] - vals[("EASY", 10)]) / vals[("EASY", 0)]
                whole = {c: v for c, v in vals.items() if by[c].walltime_kills == 0}  # Δ = 0 never kills
                b_ok, w_ok = extremes(whole)
                row["best_ok"] = f"{b_ok[0]} {b_ok[1]}"
                row["spread_ok"] = 100.0 * (whole[w_ok] - whole[b_ok]) / whole[w_ok] if whole[w_ok] else 0.0
        row["lb_makespan_s"] = float(base.lb_makespan_s)
        row["makespan_easy0"] = float(base.makespan)
        row["room"] = 100.0 * (base.makespan - base.lb_makespan_s) / base.makespan if base.makespan else 0.0
        row["idle_share"] = 100.0 * base.end_power_w * w / base.e_win if base.e_win else math.nan
        row["kills"] = float(g.walltime_kills.sum())
        row["kills_max"] = float(g.walltime_kills.max())
        row["overlaps"] = float(g.overlaps.sum())
        row["shared_host_s"] = float(g.shared_host_s.sum())
        row["jobs"] = float(base.jobs)
        row["delay50"] = max(100.0 * (by[(a, 50)].makespan - by[(a, 0)].makespan) / by[(a, 0)].makespan for a in ALGS)
        out.append(row)
    return pd.DataFrame(out), (pd.concat(run_parts, ignore_index=True) if run_parts else runs.iloc[0:0])


def t_interval(values: Iterable[float]) -> tuple[float, float, float]:
    """Mean and 95 % Student-t interval of the mean; (mean, nan, nan) for one value."""
    from scipy import stats

    v = np.asarray(list(values), dtype=float)
    m = float(v.mean()) if len(v) else math.nan
    if len(v) < 2:
        return m, math.nan, math.nan
    sd = float(v.std(ddof=1))
    if sd == 0.0:
        return m, m, m
    h = float(stats.t.ppf(0.975, len(v) - 1)) * sd / math.sqrt(len(v))
    return m, m - h, m + h


def wilson(k: int, n: int) -> tuple[float, float]:
    """95 % Wilson score interval (%) of a proportion ``k / n``."""
    if n == 0:
        return math.nan, math.nan
    z, p = 1.959963984540054, k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return 100.0 * (c - h), 100.0 * (c + h)


def _mode(values: pd.Series) -> str:
    counts = values.value_counts()
    order = {f"{a} {d}": i for i, (a, d) in enumerate(CONFIGS)}
    top = max(counts.index, key=lambda v: (counts[v], -order.get(v, 99)))
    return f"{top} ({counts[top]}/{len(values)})"


def setting_table(cases: pd.DataFrame) -> pd.DataFrame:
    """One row per setting (a case's keys without the seed): ``seeds`` (list), ``n``, the most
    frequent best and worst configuration (``"EASY 10 (3/5)"``, also ``best_ok``), and for
    ``spread_ok``, ``spread_win``,
    ``spread_own``, ``spread_jobs``, ``spread_t``, ``room``, ``easy10_vs_0``, ``delay50``,
    ``idle_share``: ``<col>_mean``, ``<col>_low``, ``<col>_high`` (95 % t interval); ``kills`` and
    ``overlaps`` summed, ``ties`` and ``unprinted`` counted. Intervals of quantities that cannot be
    negative (:data:`NONNEGATIVE`) are clipped at 0."""
    if cases.empty:
        return pd.DataFrame()
    rows = []
    for key, g in cases.groupby(CASE_KEYS, sort=True):
        row = dict(zip(CASE_KEYS, key))
        row["design"] = g.design.iloc[0]
        row["seeds"] = sorted(int(s) for s in g.seed)
        row["n"] = len(g)
        for r in ("win", "own", "jobs"):
            row[f"best_{r}"], row[f"worst_{r}"] = _mode(g[f"best_{r}"]), _mode(g[f"worst_{r}"])
        row["best_ok"] = _mode(g.best_ok)
        for col in ("spread_ok", "spread_win", "spread_own", "spread_jobs", "spread_t", "room", "easy10_vs_0", "delay50",
                    "idle_share", "makespan_easy0", "lb_makespan_s"):
            m, lo, hi = t_interval(g[col])
            if col in NONNEGATIVE and lo < 0:
                lo = 0.0
            row[f"{col}_mean"], row[f"{col}_low"], row[f"{col}_high"] = m, lo, hi
        for col in ("kills", "overlaps", "shared_host_s", "jobs"):
            row[col] = float(g[col].sum())
        row["ties"] = int(g.tie.sum())
        row["unprinted"] = int(g.unprinted.sum())
        rows.append(row)
    return pd.DataFrame(rows)


def config_means(runs_w: pd.DataFrame) -> pd.DataFrame:
    """Mean over seeds of ``rel_win`` (%), ``makespan`` (s) and ``walltime_kills`` per setting and
    configuration (for the Table 2 pattern and the kills table)."""
    return runs_w.groupby(CASE_KEYS + ["alg", "delta"], as_index=False).agg(
        rel_win=("rel_win", "mean"), makespan=("makespan", "mean"), kills=("walltime_kills", "sum"),
        jobs=("jobs", "sum"), seeds=("seed", "nunique"))


__all__ += ["config_means", "NO_SHUTDOWN", "DELTAS"]
