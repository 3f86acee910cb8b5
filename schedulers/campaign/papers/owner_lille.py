"""The section of the ``owner-lille`` campaign's report (``[report] paper = "owner-lille"``).

Not a reproduction: the owner-share policies of the papers (OSEP, HOSEP, EHOSEP) on Grid'5000
Lille's four clusters owned by four teams, with real multi-host HPC2N jobs
(:mod:`schedulers.inputs.owner_lille_scenario`), against FCFS and EASY backfilling. The section
gives each team's share and its satisfaction under the three readings of
:mod:`schedulers.core.satisfaction` for every policy, and the preemptions (tasks restarted) each
policy made.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .. import fmt
from ..collect import scalar, sort_key
from .common import cell, table

#: Team -> share of the grid's power (GFlops; the scenario's module docstring).
TEAMS = {"chetemi": 4971.0, "chiclet": 3040.8, "chifflet": 3356.0, "chifflot": 3271.2}
READINGS = {"satisfaction": "Definition 5", "satisfaction_osep": "OSEP's original",
            "satisfaction_ispd": "iSPD"}


def section(runs: pd.DataFrame, summary: pd.DataFrame, out: Path) -> list[str]:
    """The teams' satisfactions under the three readings, per policy (Markdown lines)."""
    policies = sorted({scalar(p) for p in summary["policy"]}, key=sort_key)
    total = sum(TEAMS.values())
    lines = ["## Owner-share policies on Lille's clusters (beyond the papers)", "",
             "Four teams own Lille's four clusters (shares: " +
             ", ".join(f"{t} {fmt.number(100 * g / total, 3)} %" for t, g in TEAMS.items()) +
             " of the power); 1,000 real HPC2N jobs of 1-39 hosts, their users mapped to the teams. Mean "
             "satisfaction (%) of each team under the three readings of the ideal completion time, and the "
             "preemptions each policy made (a preempted task runs again from the start, or from its last "
             "checkpoint).", ""]
    rows = []
    for p in policies:
        for r, name in READINGS.items():
            vals = [cell(summary, f"{r}.{t}", policy=p) for t in TEAMS]
            if not any(v.ok for v in vals):
                continue
            pre = cell(summary, "policy.preemptions", policy=p)
            rows.append([p, name] + [v.text() for v in vals] + [pre.text() if pre.ok else "0"])
    lines += table(["policy", "reading"] + list(TEAMS) + ["preemptions"], rows)
    return lines
