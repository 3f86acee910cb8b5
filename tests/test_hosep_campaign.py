"""The HOSEP reproduction's campaign machinery: the shipped campaign file, satisfaction metrics of
preemptive runs, plots restricted by ``where``, and replayed power-usage timelines."""

from __future__ import annotations

import csv
import textwrap
from pathlib import Path

import pytest

from schedulers.campaign.errors import CampaignError
from schedulers.campaign.report import write_report
from schedulers.campaign.runner import run_campaign
from schedulers.campaign.spec import load_campaign

ROOT = Path(__file__).resolve().parents[1]

SMALL = """
name = "hosep-mini"
seeds = 2
metrics = ["satisfaction"]
[[policy]]
name = "osep"
label = "OSEP"
[[policy]]
name = "hosep"
label = "HOSEP"
[[scenario]]
name = "grid"
generator = "hosep"
params = { tasks_per_user = 3, large_max_minutes = 120 }
[axes]
late = ["user1", "user4"]
[report]
metrics = ["satisfaction.user1"]
[[report.plot]]
kind = "bar"
metric = "satisfaction.user1"
x = "policy"
where = { late = "user1" }
[[report.timeline]]
where = { policy = "HOSEP", late = "user1", seed = 1 }
title = "HOSEP, user1 late"
"""


def test_the_reproduction_campaign_file_is_the_monographs_12_cases_times_three_policies():
    camp = load_campaign(ROOT / "campaigns" / "hosep.toml")
    runs = camp.runs()
    assert len(runs) == 3 * 2 * 3 * 2 * 1000    # OSEP, HOSEP and the own-share reference
    cases = {(r.params["late"], r.params["demand"], r.params["checkpoint"]) for r in runs}
    assert len(cases) == 12
    assert {r.policy_name for r in runs} == {"osep", "hosep", "own-share"}


def test_mini_campaign_report_with_where_plot_and_timeline(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text(textwrap.dedent(SMALL))
    out = tmp_path / "out"
    stats = run_campaign(load_campaign(f), out, serial=True, progress=False)
    assert stats.executed == 8 and stats.status.failed == []
    report = write_report(out).read_text()
    plots = sorted(p.name for p in (out / "plots").glob("*.png"))
    assert plots == ["bar_satisfaction.user1_by_policy_late-user1.png",
                     "timeline_late-user1_policy-HOSEP_seed-1.png"]
    assert "HOSEP, user1 late" in report
    rows = list(csv.DictReader((out / "summary.csv").open()))
    assert len(rows) == 4 and all(float(r["satisfaction.user1_mean"]) > 0 for r in rows)


def test_a_timeline_must_name_one_run(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text(textwrap.dedent(SMALL).replace('where = { policy = "HOSEP", late = "user1", seed = 1 }',
                                                'where = { policy = "HOSEP" }'))
    out = tmp_path / "out"
    run_campaign(load_campaign(f), out, serial=True, progress=False)
    with pytest.raises(CampaignError, match=r"report.timeline\[0\].where: matches 4 done runs"):
        write_report(out)
