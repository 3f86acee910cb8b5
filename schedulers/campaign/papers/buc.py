"""The BUC section of the ``buc`` campaign's report (``[report] paper = "buc"``).

Source: ``shared/papers/002_3dc427a6f94ba187.txt`` (the BUC paper; ``L<n>`` = line). Its results:
Fig. 1 (waiting-time change against FCFS for six users at Kp 1440 and 10800), the injected
users' final scores (L168-169), Fig. 2 (median queue-position gain by Su range, Kp 10800) and
the conclusions drawn from them (L8-9, L46-49, L171-176, L191-196, L231-235). They are set
beside ours at the paper's density (2,785 real jobs a year) and, as a load sweep, at denser
arrivals. Claims and their tests (Kp = 10800 unless said):

* precise users (P >= 0.5: the injected ``inj50``, ``inj100`` and the real users of medium and
  high Su) wait "between 20 % and 90 %" less than under FCFS (L171-173; "up to 93 %", L8-9):
  every such role's reduction between 20 and 93 %;
* the least precise users lose "up to 20 %" (L46-48, L173-174, L234-235): the worst of ``inj0``
  and the real user of low Su between -25 % and 0 % (they lose, by at most about 20 %);
* "Kp = 10800 more coherent with the fairness goal than Kp = 1440" (L174-176): the gap between
  ``inj100``'s and ``inj0``'s reductions larger at 10800 than at 1440;
* "the median gain grows with Su" (L191-196: about 30, over 40, near 60, over 90 % for Su 0-24,
  25-49, 50-74, 75-100): the four medians increasing;
* the injected users' final scores 4.8, 96.14 and 99 (L168-169): each within 5 points.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .. import fmt
from ..collect import scalar, sort_key
from .common import cell, open_choices, table

RATE = "jobs_per_year"
PAPER_RATE = 2785
PRECISE = ("inj50", "inj100", "real_mid", "real_high")
IMPRECISE = ("inj0", "real_low")
RANGES = ("0_24", "25_49", "50_74", "75_100")
PAPER_MEDIANS = {"0_24": 30.0, "25_49": 40.0, "50_74": 60.0, "75_100": 90.0}
PAPER_SU = {"inj0": 4.8, "inj50": 96.14, "inj100": 99.0}
ROLE_NAMES = {"inj0": "injected P = 0", "inj50": "injected P = 0.5", "inj100": "injected P = 1",
              "real_low": "real, low Su", "real_mid": "real, medium Su", "real_high": "real, high Su"}


def _rates(summary: pd.DataFrame) -> list:
    if RATE not in summary.columns:
        return [None]
    vals = sorted({scalar(v) for v in summary[RATE]}, key=sort_key)
    return sorted(vals, key=lambda v: (v in (0, None), v or 0))   # the trace's own times (0) last


def _rate_name(rate) -> str:
    if rate is None:
        return "—"
    return "the trace's own times" if rate == 0 else f"{int(rate):,} a year"


def _get(summary: pd.DataFrame, metric: str, policy: str, rate):
    where = {"policy": policy}
    if rate is not None:
        where[RATE] = rate
    return cell(summary, metric, **where)


def _n(v) -> str:
    return fmt.number(v, 3)


def _claims(summary: pd.DataFrame, rate, policy: str = "BUC-10800") -> list[list[str]]:
    red = {r: _get(summary, f"buc.wait_reduction.{r}", policy, rate).mean for r in ROLE_NAMES}
    rows = []
    precise = {r: v for r, v in red.items() if r in PRECISE and v is not None}
    if precise:
        ok = all(20 <= v <= 93 for v in precise.values())
        rows.append(["precise users wait 20-90 % less than under FCFS", "002 L8-9, L171-173",
                     ", ".join(f"{ROLE_NAMES[r]} {fmt.signed(v, 3)} %" for r, v in precise.items()),
                     "**yes**" if ok else "**no**"])
    imprecise = {r: v for r, v in red.items() if r in IMPRECISE and v is not None}
    if imprecise:
        worst = min(imprecise.values())
        rows.append(["the least precise users lose, up to 20 %", "002 L46-48, L173-174",
                     ", ".join(f"{ROLE_NAMES[r]} {fmt.signed(v, 3)} %" for r, v in imprecise.items()),
                     "**yes**" if -25 <= worst <= 0 else "**no**"])
    gaps = {}
    for p in ("BUC-1440", policy):
        a = _get(summary, "buc.wait_reduction.inj100", p, rate).mean
        b = _get(summary, "buc.wait_reduction.inj0", p, rate).mean
        if a is not None and b is not None:
            gaps[p] = a - b
    if len(gaps) == 2:
        rows.append(["Kp = 10800 more coherent than 1440 (a larger gap between precise and imprecise)",
                     "002 L174-176", f"inj100 - inj0: Kp 1440 {_n(gaps['BUC-1440'])}, Kp 10800 {_n(gaps[policy])} "
                     "points", "**yes**" if gaps[policy] > gaps["BUC-1440"] else "**no**"])
    med = [_get(summary, f"buc.gain_kp10800.median.su{r}", policy, rate).mean for r in RANGES]
    known = [m for m in med if m is not None]
    if len(known) >= 2:
        grows = all(a < b for a, b in zip(known, known[1:]))
        rows.append(["the median queue-position gain grows with Su (30 / 40+ / ~60 / 90+ %)", "002 L191-196",
                     " / ".join(_n(m) if m is not None else "no job" for m in med) + " %",
                     "**yes**" if grows else "**no**"])
    su = {r: _get(summary, f"buc.su_final.{r}", policy, rate).mean for r in PAPER_SU}
    if all(v is not None for v in su.values()):
        ok = all(abs(su[r] - PAPER_SU[r]) <= 5 for r in PAPER_SU)
        rows.append(["final scores inj0 4.8, inj50 96.14, inj100 99", "002 L168-169",
                     " / ".join(_n(su[r]) for r in PAPER_SU), "**yes**" if ok else "**no**"])
    return rows


def _claims_section(summary: pd.DataFrame, rates: list) -> list[str]:
    lines = ["### The paper's claims", ""]
    paper_rate = PAPER_RATE if PAPER_RATE in rates else rates[0]
    for policy, what in (("BUC-10800", "the threshold score rule (consistent with 002 L168-169)"),
                         ("BUC-10800-ema", "the exponential moving average rule (towards 100 P)")):
        rows = _claims(summary, paper_rate, policy)
        if not rows:
            continue
        lines += [f"At {_rate_name(paper_rate)} (the paper's density), Kp = 10800, {what}; \"yes\": reproduced, "
                  "\"no\": not reproduced.", ""]
        lines += table(["the paper's claim", "source", "ours", "verdict"], rows)
    sweep = []
    for rate in rates:
        for row in _claims(summary, rate):
            sweep.append([_rate_name(rate)] + row[:1] + row[2:])
    if len(rates) > 1 and sweep:
        lines += ["The same claims at every density (the load sweep), threshold rule, Kp = 10800:", ""]
        lines += table(["arrivals", "claim", "ours", "verdict"], sweep)
    return lines


def _side_by_side(summary: pd.DataFrame, rates: list) -> list[str]:
    rows = []
    for rate in rates:
        load = _get(summary, "buc.offered_load", "FCFS", rate)
        for p in ("BUC-1440", "BUC-10800", "BUC-10800-ema", "BUC-EASY-10800"):
            vals = [_get(summary, f"buc.wait_reduction.{r}", p, rate) for r in ("inj0", "inj50", "inj100")]
            if not any(v.ok for v in vals):
                continue
            su = [_get(summary, f"buc.su_final.{r}", p, rate) for r in ("inj0", "inj50", "inj100")]
            rows.append([_rate_name(rate), fmt.percent(load.mean), p] + [v.text() for v in vals] +
                        [" / ".join(_n(s.mean) for s in su)])
    if not rows:
        return []
    rows.append(["paper: 2,785 a year", "—", "Kp 10800", "up to -20 %", "20-90 %", "up to 90-93 %", "4.8 / 96.14 / 99"])
    return ["### The injected users beside the paper's (002 Fig. 1, L168-169)", "",
            "Waiting time less than under FCFS on the same jobs (%, mean ± 95 % CI over the seeds; negative: they "
            "wait longer) and final scores. The offered load is the work over the 39 hosts and the span of the "
            "submissions.", ""] + \
        table(["arrivals", "offered load", "policy", "P = 0", "P = 0.5", "P = 1", "final Su (P = 0 / 0.5 / 1)"], rows)


def _fig2(summary: pd.DataFrame, rates: list) -> list[str]:
    rows = []
    for rate in rates:
        med = [_get(summary, f"buc.gain_kp10800.median.su{r}", "BUC-10800", rate) for r in RANGES]
        cnt = [_get(summary, f"buc.gain_kp10800.n.su{r}", "BUC-10800", rate) for r in RANGES]
        if not any(m.ok for m in med):
            continue
        rows.append([_rate_name(rate)] + [f"{m.text()} ({fmt.number(c.mean, 3)} jobs)" for m, c in zip(med, cnt)])
    if not rows:
        return []
    rows.append(["paper"] + [f"{PAPER_MEDIANS[r]:g} %" for r in RANGES])
    return ["### Queue-position gain by Su range (002 Fig. 2, Kp = 10800)", "",
            "Median gain (%) of the jobs joining a queue of more than 5 jobs, by their user's Su at submission, "
            "mean ± 95 % CI over the seeds (the mean number of such jobs a run).", ""] + \
        table(["arrivals", "Su 0-24", "Su 25-49", "Su 50-74", "Su 75-100"], rows)


UNSPECIFIED = [
    ("Su's update rule", "threshold: P >= 0.5 precise, Su += 0.0362 P (100 - Su), else Su -= 0.0249 (1 - P) Su",
     "002 gives only the direction (L101-103) and the final scores (L168-169); the steps are read from two of "
     "them, the third is a check; the moving average towards 100 P (option rule = \"ema\") is run beside it"),
    ("The trace", "HPC2N's first 3,145 jobs (17 users), res rescaled to the 39 Lille hosts",
     "Lille's 2019 trace is not public, and the public Grid'5000 traces have no users"),
    ("Density", "2,785 real jobs a year (the paper's), stretched from the trace's times",
     "load sweep: 5,570, 11,140 and the trace's own 20,140 a year"),
    ("Injected jobs' arrivals and sizes", "uniform over the span; hosts drawn from the real jobs'",
     "002 gives only 100 jobs each, walltime 3,600 s, P = 0 / 0.5 / 1"),
    ("P = 0 and P = 1", "run times of 1 s and 3,599 s of 3,600", "a 0-s job, or one reaching its walltime "
     "(killed, not scored, L106-111), would not update Su"),
    ("\"Ends normally\"", "Batsim's COMPLETED_SUCCESSFULLY; P capped at 1", "L106-111"),
    ("The real users compared", "the user with most jobs in each Su band (< 33, < 67, above)", "L155-160"),
    ("Ties in Sf", "earlier submission, then the job id as Batsim orders them", "none given"),
]


def section(runs: pd.DataFrame, summary: pd.DataFrame, out: Path) -> list[str]:
    """The BUC section (Markdown lines): the injected users and Fig. 2 beside the paper's, the
    claims at the paper's density and at every density, what the paper leaves open."""
    rates = _rates(summary)
    lines = ["## BUC against the paper", "",
             "002 replays 2,785 jobs of Grid'5000 Lille's 2019 trace (L138-139, not public) plus 300 injected jobs; "
             "here HPC2N's trace, rescaled to the same 39 hosts and stretched to the same density, with the same "
             "300 injected jobs (`schedulers/inputs/buc_scenario.py`). The paper's Fig. 1 and Fig. 2 give values "
             "only in the text's words.", ""]
    lines += _side_by_side(summary, rates)
    lines += _fig2(summary, rates)
    lines += _claims_section(summary, rates)
    return lines + open_choices(UNSPECIFIED, "The density is swept in this campaign; the gaming scenario of §4 "
                                             "(L206-213) is `campaigns/buc_gaming.toml`.")
