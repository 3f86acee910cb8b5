"""The green-heuristic paper's claims checked on its own tables and on our cases.

Each claim of :data:`schedulers.campaign.green_paper.CLAIMS` is measured by one function of a case
table (:func:`schedulers.campaign.green_analysis.case_table`: one row per case and seed, or the
paper's Table 2 as cases of one seed, :func:`paper_cases`) and judged by the criterion printed
beside it. Verdicts: ``reproduced``, ``partly``, ``not reproduced``, ``not testable``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from .green_analysis import wilson
from .green_paper import CLAIMS, PAPER_T2, PAPER_T3, extremes, paper_case
from .numfmt import pct

__all__ = ["ClaimResult", "paper_cases", "check_claims"]


@dataclass(frozen=True)
class ClaimResult:
    """A claim's measured text and verdict."""

    text: str
    verdict: str


def paper_cases() -> pd.DataFrame:
    """Table 2 (and Table 3's % column at 100 % load) as a case table of one seed: ``job_count``,
    ``cpu_load``, ``best_win``, ``worst_win``, ``spread_win`` (%), ``spread_t`` (%, load 100
    only), ``easy10_vs_0`` (%)."""
    rows = []
    for (load, jobs) in PAPER_T2:
        row = paper_case(load, jobs)
        best, worst = extremes(row)
        rows.append({"job_count": jobs, "cpu_load": load, "best_win": f"{best[0]} {best[1]}",
                     "worst_win": f"{worst[0]} {worst[1]}",
                     "spread_win": 100.0 * (row[worst] - row[best]) / row[worst],
                     "spread_t": float(PAPER_T3[jobs][4]) if load == 100 else math.nan,
                     "easy10_vs_0": 100.0 * (row[("EASY", 0)] - row[("EASY", 10)]) / row[("EASY", 0)],
                     "delay50": math.nan, "offered_load": math.nan})
    return pd.DataFrame(rows)


def _share_in(values: pd.Series, lo: float, hi: float, what: str) -> ClaimResult:
    v = values.dropna()
    if v.empty:
        return ClaimResult("not in the tables", "not testable")
    k = int(((v >= lo - 0.05) & (v <= hi + 0.05)).sum())
    text = f"{pct(v.min())} to {pct(v.max())}; {k} of {len(v)} {what} in {lo:g}-{hi:g} %"
    verdict = "reproduced" if k >= 2 * len(v) / 3 else "not reproduced" if k == 0 else "partly"
    return ClaimResult(text, verdict)


def _spread_e(c: pd.DataFrame) -> ClaimResult:
    return _share_in(c.spread_win, 2, 49, "cases")


def _spread_t(c: pd.DataFrame) -> ClaimResult:
    return _share_in(c.spread_t, 1, 32, "cases")


def _easy10_share(c: pd.DataFrame) -> ClaimResult:
    k, n = int((c.best_win == "EASY 10").sum()), len(c)
    lo, hi = wilson(k, n)
    ties = int(c["tie"].sum()) if "tie" in c else 0
    text = f"{k} of {n} ({pct(100 * k / n, 0)}, 95 % CI {pct(lo, 0)}-{pct(hi, 0)})"
    if ties:
        k2 = int(((c.best_win == "EASY 10") & ~c["tie"].astype(bool)).sum())
        text += f"; {ties} cases where all 12 runs tie; {k2} of the {n - ties} others"
    return ClaimResult(text, "reproduced" if lo <= 67 <= hi else "not reproduced")


def _easy10_big(c: pd.DataFrame) -> ClaimResult:
    big = c[c.job_count > 100]
    if big.empty:
        return ClaimResult("no case of more than 100 jobs", "not testable")
    k, n = int((big.best_win == "EASY 10").sum()), len(big)
    share = 100 * k / n
    return ClaimResult(f"{k} of {n} ({pct(share, 0)})",
                       "reproduced" if k == n else "partly" if share >= 50 else "not reproduced")


def _delta_of(cfg: pd.Series) -> pd.Series:
    return cfg.str.split().str[1].astype(int)


def _worst_sides(c: pd.DataFrame) -> ClaimResult:
    d = _delta_of(c.worst_win)
    sides = int(d.isin((0, 50)).sum())
    small, large = c.job_count <= 100, c.job_count > 100
    k_s, k_l = int((d[small] == 0).sum()), int((d[large] == 50).sum())
    text = (f"Δ 0 or 50 in {sides} of {len(c)}; small sets worst at Δ 0: {k_s} of {int(small.sum())}; "
            f"large sets worst at Δ 50: {k_l} of {int(large.sum())}")
    ok_sides = sides >= 0.9 * len(c)
    pattern = (not small.any() or k_s >= small.sum() / 2) and (not large.any() or k_l >= large.sum() / 2)
    return ClaimResult(text, "reproduced" if ok_sides and pattern else "partly" if ok_sides else "not reproduced")


def _heft_worst(c: pd.DataFrame) -> ClaimResult:
    n = len(c)
    h = 100 * int(c.worst_win.str.startswith("HEFT").sum()) / n
    h50 = 100 * int((c.worst_win == "HEFT 50").sum()) / n
    ok = abs(h - 61) <= 15 and abs(h50 - 38) <= 15
    return ClaimResult(f"HEFT {pct(h, 0)}, HEFT Δ 50 {pct(h50, 0)}", "reproduced" if ok else "not reproduced")


def _easy10_vs_0(c: pd.DataFrame) -> ClaimResult:
    g = c.groupby(["job_count", "cpu_load", "offered_load"], dropna=False).easy10_vs_0.mean()
    m = float(g.max())
    where = g.idxmax()
    text = f"from {pct(float(g.min()))} to {pct(m)} (largest: {where[0]:,} jobs, {where[1]} % load)"
    return ClaimResult(text, "reproduced" if m >= 16 / 3 else "partly" if m > 0.05 else "not reproduced")


def _delay50(c: pd.DataFrame) -> ClaimResult:
    v = c.delay50.dropna()
    if v.empty:
        return ClaimResult("not in the tables (Table 3 gives only the best and worst cases' times)", "not testable")
    g = c.groupby(["job_count", "cpu_load", "offered_load"]).delay50.mean()
    text = f"makespan of Δ 50 against Δ 0 (mean per setting, worse algorithm): {pct(float(g.min()))} to " \
           f"{pct(float(g.max()))}"
    return ClaimResult(text, "reproduced" if g.max() > 10 else "not reproduced")


def _queue(c: pd.DataFrame) -> ClaimResult:
    v = c.dropna(subset=["offered_load"])
    low, high = v[v.offered_load <= 0.6].spread_win, v[v.offered_load >= 1.2].spread_win
    if low.empty or high.empty:
        return ClaimResult("no arrival-rate sweep", "not testable")
    text = f"mean spread at offered load <= 0.6: {pct(low.mean())}; at >= 1.2: {pct(high.mean())}"
    return ClaimResult(text, "reproduced" if high.mean() > low.mean() else "not reproduced")


#: Claim key -> (measure, criterion of its verdict).
MEASURES: dict[str, tuple[Callable[[pd.DataFrame], ClaimResult], str]] = {
    "spread_e": (_spread_e, "at least 2/3 of the cases in the paper's range"),
    "spread_t": (_spread_t, "at least 2/3 of the cases in the paper's range"),
    "easy10_share": (_easy10_share, "67 % inside our 95 % interval"),
    "easy10_big": (_easy10_big, "every case (partly: at least half)"),
    "worst_sides": (_worst_sides, "90 % at the sides and the small/large pattern in most cases"),
    "heft_worst": (_heft_worst, "both shares within 15 points of 61 % and 38 %"),
    "easy10_vs_0": (_easy10_vs_0, "at least a third of 16 % (partly: a saving at all)"),
    "delta50_delay": (_delay50, "some setting above 10 %"),
    "queue": (_queue, "the spread grows with the offered load"),
}


def check_claims(cases: pd.DataFrame, sweep: pd.DataFrame) -> list[dict]:
    """One dict per claim: ``claim`` (Claim), ``criterion``, ``paper`` (ClaimResult on Tables 2-3),
    and ``ours[host_cores]`` (ClaimResult) for 16 and 1 cores. ``cases``: the paper-plan cases;
    ``sweep``: the cases of the arrival-rate sweep (100 % load), for the ``queue`` claim."""
    pc = paper_cases()
    out = []
    for claim in CLAIMS:
        fn, crit = MEASURES[claim.key]
        ours = {}
        for cores in (16, 1):
            c = (sweep if claim.key == "queue" else cases)
            c = c[c.host_cores == cores] if not c.empty else c
            ours[cores] = fn(c) if not c.empty else ClaimResult("no runs", "not testable")
        paper = fn(pc) if claim.key not in ("queue",) else ClaimResult(
            "one arrival rate per job count, not given (L204)", "not testable")
        out.append({"claim": claim, "criterion": crit, "paper": paper, "ours": ours})
    return out
