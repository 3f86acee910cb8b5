"""The OSEP/HOSEP section of the ``hosep`` campaign's report (``[report] paper = "hosep"``).

Sources (``shared/papers``, ``L<n>`` = line of the plain-text file): ``000`` the HOSEP paper
(``000_e546516683445c97.txt``), ``001`` the monograph (``001_e7d938ca075b7e80.txt``). The papers'
results are bar charts whose values are not in the text; what the text states is checked, one
claim at a time (000 §4 L506-514 and §5 L520-523), under each of the three readings of the
satisfaction metric (:mod:`schedulers.core.satisfaction`): Definition 5 (000 L309-315), OSEP's
original (000 L183-186) and the authors' simulator iSPD (the grid's mean machine). The claims
are about the cases where user1 submits last (000 L495-498), without checkpointing (the
with-checkpointing runs are compared separately).

Verdicts (per reading; every demand level must satisfy the claim):

* "user1's satisfaction equivalent to user2's" under OSEP (L507-508): within 10 % of user2's;
* "a little above user4's" under OSEP (L508-510): above user4's by less than 20 %;
* "user1 always the most satisfied" under HOSEP (L510-511): above each other user's mean;
* "about 80 %" (L511): between 70 and 90 %;
* "the others proportional to the power they offer" (L511-512): user2 > user3 > user4 (their
  shares: 27.88, 16.06, 10.29 % of the power);
* "the difference grows with the tasks' size" (L512-514): HOSEP's gain over OSEP for user1
  grows from small to medium to large demand;
* "satisfaction proportional to the power provided" (L520-523): user1 > user2 > user3 > user4.

The own-share reference (every user on its own hosts only, :mod:`schedulers.ownshare`) gives
Definition 5's value for a user that gets exactly its share: the same for every user (scale
invariance), which is why Definition 5 cannot show satisfaction "proportional to power".
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pandas as pd

from .. import fmt
from .common import cell, open_choices, seeds_run, table

USERS = ("user1", "user2", "user3", "user4")
DEMANDS = ("small", "medium", "large")
#: Each user's share of the grid's power (%; 000 Table 1, corrected: 001 §5.2).
SHARES = {"user1": 45.76, "user2": 27.88, "user3": 16.06, "user4": 10.29}
#: The three readings: metric prefix -> name.
READINGS = {"satisfaction": "Definition 5 (own mean host)", "satisfaction_osep": "OSEP's original (host it ran on)",
            "satisfaction_ispd": "iSPD (grid's mean host)"}


def _means(summary: pd.DataFrame, reading: str, policy: str, late: str, demand: str,
           checkpoint: bool = False) -> dict[str, float | None]:
    return {u: cell(summary, f"{reading}.{u}", policy=policy, late=late, demand=demand, checkpoint=checkpoint).mean
            for u in USERS}


def _n(v: float | None) -> str:
    return fmt.number(v, 3)


def _check(summary: pd.DataFrame, reading: str) -> list[tuple[str, str, bool | None, str]]:
    """``(claim, source, holds, numbers)`` of every claim under one reading (module docstring)."""
    osep_or_none = {d: _means(summary, reading, "OSEP", "user1", d) for d in DEMANDS}
    hosep_or_none = {d: _means(summary, reading, "HOSEP", "user1", d) for d in DEMANDS}
    if any(v is None for d in DEMANDS for m in (osep_or_none[d], hosep_or_none[d]) for v in m.values()):
        missing = "OSEP and HOSEP with user1 late, every demand, not all run"
        return [(c, s, None, missing) for c, s in CLAIMS]
    osep = cast(dict[str, dict[str, float]], osep_or_none)   # (no None: checked above)
    hosep = cast(dict[str, dict[str, float]], hosep_or_none)
    out: list[tuple[str, str, bool | None, str]] = []
    eq = [abs(osep[d]["user1"] - osep[d]["user2"]) <= 0.1 * osep[d]["user2"] for d in DEMANDS]
    out.append((*CLAIMS[0], all(eq), "; ".join(f"{d}: {_n(osep[d]['user1'])} vs {_n(osep[d]['user2'])}"
                                                for d in DEMANDS)))
    above = [0 < osep[d]["user1"] - osep[d]["user4"] < 0.2 * osep[d]["user4"] for d in DEMANDS]
    out.append((*CLAIMS[1], all(above), "; ".join(f"{d}: {_n(osep[d]['user1'])} vs {_n(osep[d]['user4'])}"
                                                   for d in DEMANDS)))
    top = [hosep[d]["user1"] > max(hosep[d][u] for u in USERS[1:]) for d in DEMANDS]
    out.append((*CLAIMS[2], all(top), "; ".join(
        f"{d}: user1 {_n(hosep[d]['user1'])}, best other {_n(max(hosep[d][u] for u in USERS[1:]))}" for d in DEMANDS)))
    near = [70 <= hosep[d]["user1"] <= 90 for d in DEMANDS]
    out.append((*CLAIMS[3], all(near), "; ".join(f"{d}: {_n(hosep[d]['user1'])} %" for d in DEMANDS)))
    order = [hosep[d]["user2"] > hosep[d]["user3"] > hosep[d]["user4"] for d in DEMANDS]
    out.append((*CLAIMS[4], all(order), "; ".join(
        f"{d}: " + " / ".join(_n(hosep[d][u]) for u in USERS[1:]) for d in DEMANDS)))
    gain = [hosep[d]["user1"] - osep[d]["user1"] for d in DEMANDS]
    out.append((*CLAIMS[5], gain[0] < gain[1] < gain[2], "HOSEP - OSEP for user1: " +
                ", ".join(f"{d} {fmt.signed(g, 3)}" for d, g in zip(DEMANDS, gain))))
    prop = [hosep[d]["user1"] > hosep[d]["user2"] > hosep[d]["user3"] > hosep[d]["user4"] for d in DEMANDS]
    out.append((*CLAIMS[6], all(prop), "large: " + " / ".join(_n(hosep["large"][u]) for u in USERS)))
    return out


CLAIMS = [
    ("OSEP: user1's satisfaction equivalent to user2's", "000 L506-508"),
    ("OSEP: user1's satisfaction only a little above user4's", "000 L508-510"),
    ("HOSEP: user1 always the most satisfied user", "000 L510-511"),
    ("HOSEP: user1 at about 80 %", "000 L511"),
    ("HOSEP: the other users' satisfaction proportional to the power they offer (user2 > user3 > user4)",
     "000 L511-512"),
    ("the difference (HOSEP over OSEP for user1) grows with the tasks' size", "000 L512-514"),
    ("HOSEP: satisfaction proportional to the power provided, user1 arriving at a busy grid "
     "(user1 > user2 > user3 > user4)", "000 L520-523"),
]


def _claims(summary: pd.DataFrame) -> list[str]:
    checked = {r: _check(summary, r) for r in READINGS}
    rows = []
    for i, (claim, source) in enumerate(CLAIMS):
        row = [claim, source]
        for r in READINGS:
            _, _, holds, numbers = checked[r][i]
            word = "not testable" if holds is None else ("**yes**" if holds else "**no**")
            row.append(f"{word}: {numbers}")
        rows.append(row)
    lines = ["### The papers' claims under each reading of the satisfaction", "",
             "User1 submits 6 minutes after the others (000 L495-498), no checkpointing; every demand level "
             "must satisfy the claim (means over the seeds, %). \"yes\": reproduced under that reading; "
             "\"no\": not reproduced.", ""]
    lines += table(["the paper's claim", "source"] + [f"{READINGS[r]}" for r in READINGS], rows)
    counts = {r: sum(1 for c in checked[r] if c[2]) for r in READINGS}
    testable = {r: sum(1 for c in checked[r] if c[2] is not None) for r in READINGS}
    lines += ["Claims reproduced: " + "; ".join(f"{READINGS[r]}: {counts[r]} of {testable[r]}" for r in READINGS)
              + ".", ""]
    return lines


def _own_share(summary: pd.DataFrame) -> list[str]:
    rows = []
    for d in DEMANDS:
        for r, name in READINGS.items():
            vals = _means(summary, r, "own share", "user1", d)
            if all(v is None for v in vals.values()):
                continue
            rows.append([d, name] + [_n(vals[u]) for u in USERS])
    if not rows:
        return []
    large = _means(summary, "satisfaction", "own share", "user1", "large")
    spread = [v for v in large.values() if v is not None]
    lines = ["### Definition 5 is scale-invariant: the own-share reference", "",
             "Under the own-share policy every user runs only on the hosts it owns: each gets exactly its share "
             "(PowerDiff = 0 for all, 000 Def. 4). Definition 5 measures a task against a machine as fast as "
             "the mean of its user's own hosts, so a user whose hosts are all alike scores the same whatever "
             "their speed (its ideal and real times both scale as 1 / speed): user1 (3 i7, 45.76 % of the "
             "power) and user4 (3 i3, 10.29 %) get the same value, "
             + (f"{_n(min(spread))}-{_n(max(spread))} % for the four users with the large demand. "
                if spread else "")
             + "A policy that gives every user exactly its share therefore rates every user alike: "
             "Definition 5 cannot show \"satisfaction proportional to the power provided\" (000 L512, L520-523). "
             "iSPD's reading, one yardstick for all, does rank the users by the power of their hosts.", ""]
    lines += table(["demand", "reading"] + list(USERS), rows)
    return lines


def _hand_case() -> list[str]:
    i7, i3, grid = 132_250.0, 29_750.0, 867_040.0 / 12
    rows = [["Definition 5", "the user's own mean host", f"{_n(i3 / i7 * 100)} %", f"{_n(i7 / i3 * 100)} %"],
            ["OSEP's original", "the host it ran on", "100 %", "100 %"],
            ["iSPD", "the grid's mean host (72,253 MFlops)", f"{_n(i3 / grid * 100)} %", f"{_n(i7 / grid * 100)} %"]]
    return ["### The three readings on one task worked by hand", "",
            "One task of 80 minutes on the best machine (634,800,000 MFLOP), started at once: user1's on an i3 "
            "host (29,750 MFlops: 21,338 s), user4's on an i7 (132,250 MFlops: 4,800 s). "
            "`US = ideal time / real time x 100` (000 eq. 1):", ""] + \
        table(["reading", "ideal machine", "user1's task on an i3", "user4's task on an i7"], rows) + \
        ["(`tests/test_satisfaction_readings.py` checks these numbers on the metric's code.)", ""]


def _checkpointing(summary: pd.DataFrame) -> list[str]:
    diffs = []
    for p in ("OSEP", "HOSEP"):
        for late in ("user1", "user4"):
            for d in DEMANDS:
                for r in READINGS:
                    for u in USERS:
                        a = cell(summary, f"{r}.{u}", policy=p, late=late, demand=d, checkpoint=False).mean
                        b = cell(summary, f"{r}.{u}", policy=p, late=late, demand=d, checkpoint=True).mean
                        if a is not None and b is not None:
                            diffs.append(abs(a - b))
    if not diffs:
        return []
    same = max(diffs) == 0
    return ["### Checkpointing", "",
            ("With and without checkpointing give the same satisfactions in every case (largest difference "
             f"{fmt.number(max(diffs))} points). " if same else
             f"Checkpointing moves the satisfactions by up to {fmt.number(max(diffs))} points. ")
            + "The monograph's cases preempt only when the late user arrives, 6 minutes in (001 §5.4 L604), and "
            "checkpoints are taken every 10 minutes of execution (L604): no preempted task has a block to keep. "
            "The sensitivity campaign (`campaigns/hosep_sensitivity.toml`) runs the late user 20 minutes late, "
            "where it does.", ""]


UNSPECIFIED = [
    ("Task sizes within a class", "uniform in the class's range, whole MFLOP", "001 L560-563 give ranges only"),
    ("Large tasks' upper bound", "420 min on the best machine (monograph)", "000 L467-468 say 240 min: "
     "sensitivity campaign, scenario \"large 80-240 min\""),
    ("Decision period t", "60 s", "001 Fig. 1 gives none: sensitivity t = 0 (every event) and 600 s"),
    ("Preemptions per round (maxt)", "the number of hosts (12)", "001 L322 gives none"),
    ("HOSEP's preemption test (line 3)", "000 Fig. 2: RP_beta,y > PowerDiff_alpha",
     "001 Fig. 5 tests PR_Aloc > PR_Preemp: sensitivity \"HOSEP PR_Aloc\""),
    ("Idle hosts, who gets which", "largest deficit first; HOSEP the most powerful host, OSEP the lowest id",
     "000 L326 says only that idle hosts go first"),
    ("Satisfaction's ideal machine", "three readings, all reported", "Def. 5 (000 L309-315) vs OSEP's (L183-186) "
     "vs iSPD's; the papers' figures used iSPD (000 L447)"),
    ("Runs per case", "{seeds}", "the monograph ran 1,000 seeds (001 §5.4)"),
]


def section(runs: pd.DataFrame, summary: pd.DataFrame, out: Path) -> list[str]:
    """The OSEP/HOSEP section (Markdown lines): the three readings on a hand case, the claims
    under each, Definition 5's scale invariance, checkpointing, the choices the papers leave open."""
    lines = ["## OSEP and HOSEP against the papers", "",
             "The papers report their results as bar charts (000 Fig. 4; 001 Figs. 7-14) whose values the text "
             "does not give; the text's claims are checked here. Satisfaction is read three ways "
             "(`schedulers/core/satisfaction.py`): the papers' Definition 5, OSEP's original metric, and the "
             "reading of the authors' simulator iSPD (`src/ispd/motor/metricas/Metricas.java` in the public "
             "repository `gspd-unesp/ispd`), with which the papers' figures were made (000 L447).", ""]
    lines += _hand_case()
    lines += _claims(summary)
    lines += _own_share(summary)
    lines += _checkpointing(summary)
    rows = [(w, c.replace("{seeds}", seeds_run(runs)), n) for w, c, n in UNSPECIFIED]
    return lines + open_choices(rows, "The sensitivity of each headline to these choices is the report of "
                                             "`campaigns/hosep_sensitivity.toml` (large demand, 100 seeds).")


def sensitivity_section(runs: pd.DataFrame, summary: pd.DataFrame, out: Path) -> list[str]:
    """The ``hosep-sensitivity`` campaign's section: user1's and user4's satisfaction (user1
    late, large demand) under the three readings, for every variant, beside the default choices
    (OSEP and HOSEP, t = 60 s, large tasks of 80-420 min, 6 min late)."""
    from ..collect import scalar, sort_key
    policies = sorted({scalar(p) for p in summary["policy"]}, key=sort_key)
    scenarios = sorted({scalar(s) for s in summary["scenario"]}, key=sort_key)
    rows = []
    for late in ("user1", "user4"):
        for p in policies:
            for sc in scenarios:
                vals = [cell(summary, f"{r}.{late}", policy=p, scenario=sc, late=late).mean for r in READINGS]
                if all(v is None for v in vals):
                    continue
                pre = cell(summary, "policy.preemptions", policy=p, scenario=sc, late=late).mean
                rows.append([late, p, sc] + [_n(v) for v in vals] + [fmt.number(pre, 3, trim=True)])
    head = ["late user (its satisfaction)", "policy", "scenario"] + [READINGS[r] for r in READINGS] + ["preemptions"]
    return ["## Sensitivity of the headlines to the choices the papers leave open", "",
            f"The late user's own mean satisfaction (%) under the three readings, large demand, {seeds_run(runs)}. "
            "Defaults: "
            "t = 60 s, HOSEP's test of 000 Fig. 2 (omega), large tasks of 80-420 min, the late user 6 min late. "
            "Variants: t = 0 (a round after every event) and 600 s; HOSEP with 001 Fig. 5's test (PR_Aloc); "
            "checkpointing (ckpt); large tasks of 80-240 min (000 L467-468); 20 min late (after a first "
            "10-min checkpoint block).", ""] + table(head, rows)
