"""The EHOSEP section of the ``ehosep`` campaign's report (``[report] paper = "ehosep"``).

Source: ``shared/papers/003_97c4ff2275ee8bc0.txt`` (the EHOSEP paper; ``L<n>`` = line). Its one
result is Fig. 1 (the users' mean satisfaction against user1's limit, 80 % to 182.09 %), whose
values the text does not give; what the text states is checked under the three readings of eq. (1)
(:mod:`schedulers.core.ehosep_metrics`): as printed (ideal time on the user's own mean host),
with the ideal time on the grid's mean host (003 L243-245), and iSPD's (that ideal time and 1 +
the energy factor). Claims (L253-257, L281-287):

* "the algorithm makes more satisfied the users who deliver more resources" (L253-256): under
  EHOSEP, user1 (the largest share) has the largest S at every limit;
* "... and who try to consume less energy" (L256-257, L283-286): under EHOSEP, user1's S does not
  rise as its limit rises, and is lower at the largest limit than at the smallest;
* "user1's satisfaction falls when its limit passes 150 %" (L257): S at 182.09 % below S at 150 %;
* whether that fall is the policy's: the same comparison under HOSEP, which ignores the limits
  (the printed equation divides by the limit, so S falls as 1 / limit for any policy).

Table 1's power efficiencies (GFlops/W) are set beside the platform's (the CSP's ingredients).
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pandas as pd

from .. import fmt
from ..collect import scalar, sort_key
from .common import cell, open_choices, seeds_run, table

USERS = ("user1", "user2", "user3", "user4")
#: 003 Table 1: efficiency (GFlops/W) per user (L169-189).
PAPER_EFFICIENCY = {"user1": 0.5942, "user2": 0.8484, "user3": 0.1976, "user4": 0.6306}
READINGS = {"S": "eq. (1) as printed (own mean host)", "S_grid": "grid-mean ideal time (003 L243-245)",
            "S_ispd": "iSPD (grid-mean ideal, 1 + energy factor)"}
LIMIT = "scenario.u1_limit"


def _limits(summary: pd.DataFrame) -> list[float]:
    if LIMIT not in summary.columns:
        return []
    return sorted({float(v) for v in map(scalar, summary[LIMIT]) if v is not None}, key=sort_key)


def _s(summary: pd.DataFrame, reading: str, user: str, policy: str, limit: float) -> float | None:
    return cell(summary, f"ehosep.{reading}.{user}", policy=policy, **{LIMIT: limit}).mean


def _n(v: float | None) -> str:
    return fmt.number(v, 3)


def _claims(summary: pd.DataFrame, limits: list[float]) -> list[str]:
    rows = []
    for reading, name in READINGS.items():
        s = {(p, u, lim): _s(summary, reading, u, p, lim) for p in ("EHOSEP", "HOSEP") for u in USERS for lim in limits}
        if not limits or any(v is None for k, v in s.items() if k[1] == "user1"):
            rows.append([name] + ["not testable: user1's limit sweep not run"] * 5)
            continue

        def user1(policy: str, lim: float) -> float:
            return cast(float, s[(policy, "user1", lim)])   # (known: checked above)

        top = [lim for lim in limits if s[("EHOSEP", "user1", lim)] is not None and
               all(user1("EHOSEP", lim) > (s[("EHOSEP", u, lim)] or -1) for u in USERS[1:])]
        best_other = {lim: max((s[("EHOSEP", u, lim)] or 0.0) for u in USERS[1:]) for lim in limits}
        first, last = limits[0], limits[-1]
        e1 = [user1("EHOSEP", lim) for lim in limits]
        h1 = [user1("HOSEP", lim) for lim in limits]
        falls = all(b <= a * 1.02 for a, b in zip(e1, e1[1:])) and e1[-1] < e1[0]
        at150 = 150.0 in limits
        fall150_e = at150 and user1("EHOSEP", last) < user1("EHOSEP", 150.0)
        fall150_h = at150 and user1("HOSEP", last) < user1("HOSEP", 150.0)
        rows.append([
            name,
            f"{'**yes**' if len(top) == len(limits) else '**no**'}: user1 the most satisfied at {len(top)} of "
            f"{len(limits)} limits (at {first:g} %: user1 {_n(e1[0])}, best other {_n(best_other[first])})",
            f"{'**yes**' if falls else '**no**'}: user1's S from {_n(e1[0])} ({first:g} %) to {_n(e1[-1])} ({last:g} %)",
            ("not testable: 150 % not run" if not at150 else
             f"{'**yes**' if fall150_e else '**no**'}: {_n(user1('EHOSEP', 150.0))} at 150 %, "
             f"{_n(user1('EHOSEP', last))} at {last:g} %"),
            ("not testable" if not at150 else
             f"{'**also**' if fall150_h else '**not**'} under HOSEP: {_n(user1('HOSEP', 150.0))} at 150 %, "
             f"{_n(user1('HOSEP', last))} at {last:g} %"),
            f"HOSEP: user1's S from {_n(h1[0])} to {_n(h1[-1])}; S x limit from {_n(h1[0] * first)} to "
            f"{_n(h1[-1] * last)}",
        ])
    head = ["reading", "EHOSEP: the users who deliver more are more satisfied (L253-256)",
            "EHOSEP: user1 more satisfied the less it may draw (L256-257, L283-286)",
            "EHOSEP: user1's S falls past 150 % (L257)", "the same fall under HOSEP (no limits)",
            "why: eq. (1) divides by the limit"]
    return ["### The paper's claims under each reading of eq. (1)", "",
            "Means over the seeds (%). \"yes\": reproduced under that reading; \"no\": not reproduced. The last "
            "two columns ask whether the fall of user1's S is EHOSEP's doing: HOSEP ignores the limits, yet its "
            "S falls as well wherever the reading divides by the limit.", ""] + table(head, rows)


def _efficiency(out: Path) -> list[str]:
    from ...inputs.ehosep_scenario import USERS as GEN_USERS, share_mflops, share_watts
    rows = []
    for u in GEN_USERS:
        eff = share_mflops(u) / 1000.0 / share_watts(u)
        rows.append([u, fmt.number(share_mflops(u) / 1000.0), fmt.number(share_watts(u)), fmt.number(eff),
                     fmt.number(PAPER_EFFICIENCY[u])])
    return ["### The grid: 003 Table 1 beside the platform", ""] + \
        table(["user", "share (GFlops)", "full-load power (W)", "GFlops/W, ours", "GFlops/W, 003 Table 1"], rows)


def _sweep(summary: pd.DataFrame, limits: list[float]) -> list[str]:
    rows = []
    for lim in limits:
        row = [f"{lim:g}"]
        for p in ("EHOSEP", "HOSEP"):
            for reading in READINGS:
                row.append(_n(_s(summary, reading, "user1", p, lim)))
        rows.append(row)
    if not rows:
        return []
    head = ["user1's limit (%)"] + [f"{p}: {r}" for p in ("EHOSEP", "HOSEP") for r in READINGS]
    return ["### user1's S under the three readings (003 Fig. 1's x axis)", ""] + table(head, rows)


UNSPECIFIED = [
    ("Number of tasks and their arrivals", "150 tasks a user on average (332/197/33/38 by power), Poisson "
     "arrivals at 1.5 x each share", "003 §4 gives only the sizes (10-60 min on the mean machine); the grid "
     "must be saturated for limits to matter"),
    ("Idle and off power", "50 % and 5 % of Table 1's figure (read as full load)", "Table 1 gives one figure a "
     "machine: sensitivity 30 % and 70 %"),
    ("The other users' limits", "150 %", "\"above their shares\" (L249-251): sensitivity 120 % and 200 %"),
    ("Eq. (1)'s sum over the tasks", "mean over the tasks (S_sum as printed is also computed)",
     "printed without 1/N, S would grow with the task count"),
    ("Eq. (1)'s share terms", "the user's own share (ConMaxPorcao, ConsTotalPorcao)", "printed without an index"),
    ("Eq. (1)'s ideal time", "three readings, all reported", "own mean host (HOSEP's Def. 5), grid mean host "
     "(003 L243-245, iSPD)"),
    ("Eq. (1)'s energy factor", "as printed; iSPD's adds 1", "iSPD also counts only the tasks' energy (no idle "
     "power) in the system's and the share's consumption; ours includes idle power"),
    ("Runs per limit", "{seeds}", "the paper gives none"),
]


def section(runs: pd.DataFrame, summary: pd.DataFrame, out: Path) -> list[str]:
    """The EHOSEP section (Markdown lines): Table 1 beside the platform, the claims under the three
    readings of eq. (1), user1's S against its limit, what the paper leaves open."""
    limits = _limits(summary)
    lines = ["## EHOSEP against the paper", "",
             "003 gives its result as one figure (Fig. 1, the users' mean satisfaction against user1's limit) whose "
             "values the text does not give; the text's claims are checked here, under eq. (1) as printed and two "
             "other readings (`schedulers/core/ehosep_metrics.py`).", ""]
    lines += _efficiency(out)
    lines += _claims(summary, limits)
    lines += _sweep(summary, limits)
    rows = [(w, c.replace("{seeds}", seeds_run(runs)), n) for w, c, n in UNSPECIFIED]
    return lines + open_choices(rows, "The sensitivity of S to the other users' limits and to the idle power "
                                             "is the report of `campaigns/ehosep_sensitivity.toml`.")
