"""Campaign aggregation (collect / plot / report) on output folders written by hand.

Hand-computed constants (Student t quantiles in closed form, independent of scipy):

* df = 2: t(p) = (2p - 1) / sqrt(2 p (1 - p)), so t(0.975, 2) = 0.95 / sqrt(0.04875) = 4.3026527;
  values [1, 2, 3]: mean 2, std 1, CI half-width 4.3026527 / sqrt(3) = 2.4841377,
  CI [-0.4841377, 4.4841377].
* df = 1 (Cauchy): t(p) = tan(pi (p - 1/2)), so t(0.975, 1) = tan(0.475 pi) = 12.7062047;
  values [10, 14]: mean 12, std sqrt(((10-12)^2 + (14-12)^2) / 1) = sqrt(8) = 2.8284271,
  CI half-width 12.7062047 * sqrt(8) / sqrt(2) = 2 * 12.7062047 = 25.4124095.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import sys
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from schedulers.campaign.collect import collect, load_records, runs_table, summarize
from schedulers.campaign.errors import CampaignError
from schedulers.campaign.plot import plot_bars, plot_lines
from schedulers.campaign.report import ReportSpec, check_report_section, write_report

T2_HALF = 2.4841377  # t(0.975, 2) * 1 / sqrt(3), see the module docstring
T1_HALF = 25.4124095  # t(0.975, 1) * sqrt(8) / sqrt(2)
assert math.isclose(T2_HALF, 0.95 / math.sqrt(2 * 0.975 * 0.025) / math.sqrt(3), rel_tol=1e-7)
assert math.isclose(T1_HALF, 2 * math.tan(0.475 * math.pi), rel_tol=1e-7)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run_id(params: dict) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:16]


def record(policy, scenario, seed, *, wait=None, makespan=None, backfilled=None, status="done",
           error=None, extra=None):
    params = {"policy": policy, "scenario": scenario, "seed": seed, **(extra or {})}
    summary = None
    if status == "done":
        summary = {"jobs": 40, "success": 40, "killed": 0, "rejected": 0, "makespan": makespan,
                   "mean_waiting_time": wait, "max_waiting_time": 2 * wait,
                   "mean_bounded_slowdown": 1.5, "utilisation": 0.5,
                   "energy_joules": None, "energy_kwh": None}
    return {"format": "gridsched-campaign-run/1", "id": run_id(params), "campaign": "demo",
            "status": status, "params": params, "policy_name": policy, "policy_options": {},
            "scenario_spec": {}, "engine_options": {}, "simulator": "engine", "summary": summary,
            "policy_metrics": {} if backfilled is None else {"backfilled_jobs": backfilled},
            "wall_time_s": 0.01, "error": error, "traceback": None, "outputs": None,
            "gridsched_version": "0.1.0"}


RECORDS = [
    # easy/small: waits [1, 2, 3], makespans [100, 110, 120], backfilled [4, 6, 8], one failure
    record("easy", "small", 0, wait=1.0, makespan=100.0, backfilled=4),
    record("easy", "small", 1, wait=2.0, makespan=110.0, backfilled=6),
    record("easy", "small", 2, wait=3.0, makespan=120.0, backfilled=8),
    record("easy", "small", 3, status="failed", error="engine crashed | exit 3"),
    # fcfs/small: waits [10, 14]
    record("fcfs", "small", 0, wait=10.0, makespan=200.0),
    record("fcfs", "small", 1, wait=14.0, makespan=200.0),
    # fcfs/big: a single done run
    record("fcfs", "big", 0, wait=7.0, makespan=300.0),
]
MISSING = {"policy": "easy", "scenario": "big", "seed": 0}  # in the manifest, no result


def make_folder(path, records=RECORDS, report=None, manifest=True):
    (path / "results").mkdir(parents=True)
    for rec in records:
        (path / "results" / f"{rec['id']}.json").write_text(json.dumps(rec))
    if manifest:
        runs = [{"id": r["id"], "params": r["params"]} for r in records]
        runs.append({"id": run_id(MISSING), "params": MISSING})
        man = {"name": "demo", "source": "campaigns/demo.toml", "axes": ["scenario", "policy", "seed"],
               "runs": runs}
        if report is not None:
            man["report"] = report
        (path / "campaign.json").write_text(json.dumps(man))
    return path


def group(summary, policy, scenario):
    rows = summary[(summary["policy"] == policy) & (summary["scenario"] == scenario)]
    assert len(rows) == 1
    return rows.iloc[0]


# --- load_records ---------------------------------------------------------------------------------

def test_load_records_skips_temporary_files(tmp_path):
    make_folder(tmp_path)
    res = tmp_path / "results"
    for name in ("abc.json.tmp123", "abc.tmp.json", ".abc.json", "notes.txt"):
        (res / name).write_text("{not json")
    recs = load_records(tmp_path)
    assert sorted(r["id"] for r in recs) == sorted(r["id"] for r in RECORDS)
    assert [r["id"] for r in recs] == sorted(r["id"] for r in recs)


def test_load_records_without_results_folder(tmp_path):
    assert load_records(tmp_path) == []
    with pytest.raises(CampaignError, match="no such campaign output folder"):
        load_records(tmp_path / "nope")


BAD_ID = "0123456789abcdef"


def bad_record(**changes) -> str:
    return json.dumps({**RECORDS[0], "id": BAD_ID, **changes})


@pytest.mark.parametrize("content, message", [
    ("{\"format\": ", "not a valid JSON file"),
    (json.dumps({"id": BAD_ID, "status": "done", "params": {}}), "format is None"),
    (bad_record(id="fedcba9876543210"), "id 'fedcba9876543210' does not match the file name"),
    (bad_record(status="running"), "status 'running'"),
    (bad_record(params=[1]), "params must be an object of scalars"),
    (bad_record(policy_metrics={"x": "many"}), "policy_metrics must be an object of numbers or null"),
    (bad_record().replace("100.0", "NaN"), "NaN is not a JSON value"),
], ids=["syntax", "format", "id", "status", "params", "policy_metrics", "nan"])
def test_load_records_bad_file(tmp_path, content, message):
    make_folder(tmp_path)
    bad = tmp_path / "results" / "0123456789abcdef.json"
    bad.write_text(content)
    with pytest.raises(CampaignError) as err:
        load_records(tmp_path)
    assert str(bad) in str(err.value) and message in str(err.value)
    assert "\n" not in str(err.value)


# --- runs_table -----------------------------------------------------------------------------------

def test_runs_table_columns_and_order():
    table = runs_table(RECORDS, axes=["scenario", "policy", "seed"])
    assert list(table.columns) == [
        "id", "status", "scenario", "policy", "seed", "policy_name", "simulator",
        "jobs", "success", "killed", "rejected", "makespan", "mean_waiting_time", "max_waiting_time",
        "mean_bounded_slowdown", "utilisation", "energy_joules", "energy_kwh",
        "policy.backfilled_jobs", "wall_time_s", "error"]
    # sorted by scenario (big < small), then policy, then seed
    assert list(zip(table["scenario"], table["policy"], table["seed"])) == [
        ("big", "fcfs", 0), ("small", "easy", 0), ("small", "easy", 1), ("small", "easy", 2),
        ("small", "easy", 3), ("small", "fcfs", 0), ("small", "fcfs", 1)]
    assert table["policy.backfilled_jobs"].tolist()[1:4] == [4, 6, 8]
    assert table["policy.backfilled_jobs"].isna().tolist() == [True, False, False, False, True, True, True]
    assert table.loc[table["status"] == "failed", "error"].tolist() == ["engine crashed | exit 3"]
    # without axes: params sorted by name
    assert list(runs_table(RECORDS).columns[2:5]) == ["policy", "scenario", "seed"]


def test_the_runs_tables_own_columns_are_those_an_axis_may_not_be_named():
    # the campaign file's check of axis names (spec.RESULT_COLUMNS) and the table collect writes
    # listed these columns apart: a column added to one only would let an axis take its name, or
    # refuse an axis for nothing
    from schedulers.campaign.spec import RESULT_COLUMNS

    axes = ["scenario", "policy", "seed"]
    preemptive = record("osep", "small", 0, wait=1.0, makespan=100.0)
    preemptive["summary"].update(tasks=40, restarts=2, preemptions=2)   # (an owner-share policy's run)
    table = runs_table([*RECORDS, preemptive], axes=axes)
    own = [c for c in table.columns if c not in axes and not c.startswith("policy.")]
    assert own == ["id", "status", "policy_name", "simulator", "jobs", "success", "killed", "rejected", "makespan",
                   "mean_waiting_time", "max_waiting_time", "mean_bounded_slowdown", "utilisation", "energy_joules",
                   "energy_kwh", "tasks", "restarts", "preemptions", "wall_time_s", "error"]
    assert set(own) - {"simulator"} == RESULT_COLUMNS   # (an axis named simulator is that column)


def test_runs_table_rejects_param_named_like_a_column():
    rec = record("easy", "small", 0, wait=1.0, makespan=1.0, extra={"makespan": 3})
    with pytest.raises(CampaignError, match="params key 'makespan'"):
        runs_table([rec])


# --- summarize ------------------------------------------------------------------------------------

def test_summarize_hand_computed():
    s = summarize(runs_table(RECORDS, axes=["scenario", "policy", "seed"]))
    assert list(s.columns[:4]) == ["scenario", "policy", "n", "n_failed"]
    assert list(zip(s["scenario"], s["policy"])) == [("big", "fcfs"), ("small", "easy"), ("small", "fcfs")]
    easy = group(s, "easy", "small")
    assert (easy["n"], easy["n_failed"]) == (3, 1)  # the failed run is counted, not averaged
    assert easy["mean_waiting_time_mean"] == pytest.approx(2.0)
    assert easy["mean_waiting_time_std"] == pytest.approx(1.0)
    assert easy["mean_waiting_time_ci95_low"] == pytest.approx(2.0 - T2_HALF, rel=1e-6)
    assert easy["mean_waiting_time_ci95_high"] == pytest.approx(2.0 + T2_HALF, rel=1e-6)
    # makespans [100, 110, 120]: std 10, half-width 10 * T2_HALF
    assert easy["makespan_std"] == pytest.approx(10.0)
    assert easy["makespan_ci95_high"] == pytest.approx(110.0 + 10 * T2_HALF, rel=1e-6)
    # backfilled [4, 6, 8]: std 2
    assert easy["policy.backfilled_jobs_mean"] == pytest.approx(6.0)
    assert easy["policy.backfilled_jobs_ci95_low"] == pytest.approx(6.0 - 2 * T2_HALF, rel=1e-6)
    fcfs = group(s, "fcfs", "small")
    assert (fcfs["n"], fcfs["n_failed"]) == (2, 0)
    assert fcfs["mean_waiting_time_mean"] == pytest.approx(12.0)
    assert fcfs["mean_waiting_time_std"] == pytest.approx(math.sqrt(8))
    assert fcfs["mean_waiting_time_ci95_high"] == pytest.approx(12.0 + T1_HALF, rel=1e-6)
    assert math.isnan(fcfs["policy.backfilled_jobs_mean"])  # fcfs reports no backfilling


def test_summarize_single_run_and_null_metrics():
    s = summarize(runs_table(RECORDS))
    big = group(s, "fcfs", "big")
    assert (big["n"], big["n_failed"]) == (1, 0)
    assert big["mean_waiting_time_mean"] == pytest.approx(7.0)
    for stat in ("std", "ci95_low", "ci95_high"):
        assert math.isnan(big[f"mean_waiting_time_{stat}"])
    assert s["energy_kwh_mean"].isna().all() and s["energy_joules_std"].isna().all()


def test_summarize_group_with_only_failures_and_options():
    recs = [record("easy", "small", 0, status="failed", error="x"),
            record("easy", "small", 1, status="failed", error="y")]
    s = summarize(runs_table(recs))
    assert (s["n"].tolist(), s["n_failed"].tolist()) == ([0], [2])
    # no summary in any record: wall_time_s is the only metric, without a value (no done run)
    assert list(s.columns) == ["policy", "scenario", "n", "n_failed", "wall_time_s_mean", "wall_time_s_std",
                               "wall_time_s_ci95_low", "wall_time_s_ci95_high"]
    assert s.iloc[0, 4:].isna().all()
    s2 = summarize(runs_table(RECORDS), metrics=["makespan"], group_by=["policy"])
    assert list(s2.columns) == ["policy", "n", "n_failed", "makespan_mean", "makespan_std",
                                "makespan_ci95_low", "makespan_ci95_high"]
    assert s2["n"].tolist() == [3, 3]
    # fcfs makespans [200, 200, 300]: mean 233.333
    assert s2["makespan_mean"].tolist()[1] == pytest.approx(700 / 3)


@pytest.mark.parametrize("kwargs, message", [
    ({"metrics": ["nope"]}, "unknown metric 'nope'; available: jobs, success"),
    ({"metrics": ["error"]}, "unknown metric 'error'"),
    ({"group_by": ["colour"]}, "unknown group column 'colour'; available: policy, scenario, seed"),
])
def test_summarize_bad_arguments(kwargs, message):
    with pytest.raises(CampaignError, match=message):
        summarize(runs_table(RECORDS), **kwargs)


# --- collect --------------------------------------------------------------------------------------

def test_collect_csv_has_empty_cells_not_nan(tmp_path):
    make_folder(tmp_path)
    runs_path, summary_path = collect(tmp_path)
    assert (runs_path.name, summary_path.name) == ("runs.csv", "summary.csv")
    for path in (runs_path, summary_path):
        text = path.read_text()
        assert "nan" not in text.lower() and "<NA>" not in text
    with summary_path.open() as f:
        rows = list(csv.DictReader(f))
    big = next(r for r in rows if r["policy"] == "fcfs" and r["scenario"] == "big")
    assert big["n"] == "1" and big["mean_waiting_time_mean"] == "7.0"
    assert big["mean_waiting_time_std"] == "" and big["mean_waiting_time_ci95_low"] == ""
    assert all(r["energy_kwh_mean"] == "" for r in rows)
    easy = next(r for r in rows if r["policy"] == "easy")
    assert float(easy["mean_waiting_time_ci95_high"]) == pytest.approx(2.0 + T2_HALF, rel=1e-6)
    with runs_path.open() as f:
        runs = list(csv.DictReader(f))
    assert list(runs[0])[2:5] == ["scenario", "policy", "seed"]  # manifest axis order
    assert [r["policy.backfilled_jobs"] for r in runs[1:4]] == ["4", "6", "8"]  # integers stay integers
    assert runs[4]["status"] == "failed" and runs[4]["makespan"] == ""


def test_collect_errors(tmp_path):
    with pytest.raises(CampaignError, match="no run results yet"):
        collect(make_folder(tmp_path, records=[]))
    with pytest.raises(CampaignError, match="unknown table format 'xlsx'"):
        collect(tmp_path, fmt="xlsx")


def test_parquet_without_pyarrow(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow fails even where installed
    make_folder(tmp_path)
    with pytest.raises(CampaignError) as err:
        collect(tmp_path, fmt="parquet")
    assert str(err.value) == "Parquet output needs pyarrow: pip install 'gridsched[parquet]'"
    assert not (tmp_path / "summary.csv").exists()  # checked before writing anything


# --- plots ----------------------------------------------------------------------------------------

def assert_png_svg(paths):
    assert [p.suffix for p in paths] == [".png", ".svg"]
    assert paths[0].read_bytes()[:8] == PNG_MAGIC
    assert ET.parse(paths[1]).getroot().tag == "{http://www.w3.org/2000/svg}svg"


def test_plot_bars_and_lines(tmp_path):
    s = summarize(runs_table(RECORDS))
    assert_png_svg(plot_bars(s, "mean_waiting_time", "scenario", "policy", out=tmp_path / "p" / "bars"))
    recs = [record("easy", "small", seed, wait=w * (1 + seed / 10), makespan=1.0, extra={"size": w})
            for w in (1, 2, 4) for seed in range(3)]
    s2 = summarize(runs_table(recs))
    assert_png_svg(plot_lines(s2, "mean_waiting_time", "size", "policy", out=tmp_path / "lines"))
    assert (tmp_path / "p" / "bars.png").is_file() and (tmp_path / "lines.svg").is_file()


def test_a_bar_of_zero_is_drawn_where_no_value_has_nothing(tmp_path, monkeypatch):
    # policy "easy" waits 0 s at scenario "small"; policy "fcfs" has no run at "big": the first
    # is a bar of height 0 whose edge shows it (a visible line), the second no bar at all
    import matplotlib.colors as mcolors

    from schedulers.campaign import plot as plot_module

    recs = [record("easy", "small", 0, wait=0.0, makespan=1.0), record("easy", "big", 0, wait=5.0, makespan=1.0),
            record("fcfs", "small", 0, wait=3.0, makespan=1.0)]
    figs = []
    monkeypatch.setattr(plot_module, "_save", lambda fig, out, formats: figs.append(fig) or [])
    plot_bars(summarize(runs_table(recs)), "mean_waiting_time", "scenario", "policy", out=tmp_path / "b")
    bars = [p for p in figs[0].axes[0].patches if p.get_width() > 0]
    assert len(bars) == 3                                      # easy at both scenarios, fcfs at one
    zero = [p for p in bars if p.get_height() == 0.0]
    assert len(zero) == 1 and zero[0].get_linewidth() > 0
    assert mcolors.same_color(zero[0].get_edgecolor(), zero[0].get_facecolor())


@pytest.mark.parametrize("metric, x, hue, message", [
    ("nope", "scenario", None, "unknown metric 'nope'; available: jobs, success"),
    ("makespan", "colour", None, "x 'colour' is not a group column; available: policy, scenario"),
    ("makespan", "scenario", "seed", "hue 'seed' is not a group column; available: policy, scenario"),
    ("energy_kwh", "scenario", None, "energy_kwh has no value in any group"),
])
def test_plot_bad_columns(tmp_path, metric, x, hue, message):
    s = summarize(runs_table(RECORDS))
    with pytest.raises(CampaignError, match=message):
        plot_bars(s, metric, x, hue, out=tmp_path / "x")
    assert not list(tmp_path.iterdir())


def test_the_plot_command_names_the_campaign_folder_in_its_error(tmp_path, capsys):
    from schedulers.cli import main

    folder = make_folder(tmp_path / "camp")
    assert main(["campaign", "plot", str(folder), "--metric", "mean_wait"]) == 2
    assert capsys.readouterr().err.startswith(
        f"gridsched: error: {folder}: plot: unknown metric 'mean_wait'; available: jobs, success")


def test_plot_lines_needs_numeric_x(tmp_path):
    with pytest.raises(CampaignError, match="numeric x; 'scenario'"):
        plot_lines(summarize(runs_table(RECORDS)), "makespan", "scenario", out=tmp_path / "x")


# --- report ---------------------------------------------------------------------------------------

REPORT = {
    "title": "EASY vs FCFS",
    "metrics": ["mean_waiting_time", "policy.backfilled_jobs"],
    "plot": [{"kind": "bar", "metric": "mean_waiting_time", "x": "scenario", "hue": "policy"}],
    "reference": [
        {"where": {"policy": "easy", "scenario": "small"}, "metric": "mean_waiting_time",
         "value": 2.5, "source": "000 Table 2", "ci95": [2.0, 3.0]},
        {"where": {"policy": "fcfs", "scenario": "small"}, "metric": "mean_waiting_time",
         "value": 40, "source": "000 Table 3"},
        {"where": {"policy": "fcfs", "scenario": "big"}, "metric": "mean_waiting_time",
         "value": 7.5, "source": "000 Fig. 4", "std": 0.5},
        {"where": {"policy": "easy", "scenario": "huge"}, "metric": "makespan", "value": 1, "source": "x"},
    ],
}


def test_report_with_references(tmp_path):
    make_folder(tmp_path, report=REPORT)
    text = write_report(tmp_path).read_text()
    assert text.startswith("# EASY vs FCFS\n")
    assert "- Runs: 8 in the campaign: 6 done, 1 failed, 1 not run yet." in text
    # easy/small waits [1, 2, 3]: mean 2, CI half-width t(0.975, 2) x 1 / sqrt(3) = 2.48414 -> 2.5
    # (2 significant digits, the mean to the same decimal); 2 - 2.5 = -0.5 = -20 %
    assert ("| small | easy | mean waiting time (s) | 2.0 ± 2.5 | 3 | 2.5 [2, 3] | 000 Table 2 "
            "| -0.5 (-20 %) | yes |") in text
    # fcfs/small waits [10, 14]: CI 12 -+ 25.4124 (whole numbers from 10 on) does not hold 40;
    # 12 - 40 = -28 = -70 %
    assert ("| small | fcfs | mean waiting time (s) | 12 ± 25 | 2 | 40 | 000 Table 3 "
            "| -28 (-70 %) | no |") in text
    # fcfs/big: a single run, no CI; 7 - 7.5 = -0.5 = -6.7 %
    assert ("| big | fcfs | mean waiting time (s) | 7.000 (n = 1) | 1 | 7.5 (std 0.5) | 000 Fig. 4 "
            "| -0.5 (-6.7 %) | n/a (n = 1) |") in text
    assert "- Not compared: makespan (s) {'policy': 'easy', 'scenario': 'huge'} (x): not run" in text
    # metric tables: mean ± CI half-width; a failed column since a run failed
    assert "| small | easy | 2.0 ± 2.5 | 3 | 1 |" in text
    assert "| big | fcfs | 7.000 (n = 1) | 1 | 0 |" in text
    assert "| small | easy | 6.0 ± 5.0 | 3 | 1 |" in text  # backfilled [4, 6, 8]: 2 x 2.48414 = 4.97
    # plots embedded and written; failed run with its (escaped) error line
    assert "](plots/bar_mean_waiting_time_by_scenario_policy.png)" in text
    assert_png_svg([tmp_path / "plots" / "bar_mean_waiting_time_by_scenario_policy.png",
                    tmp_path / "plots" / "bar_mean_waiting_time_by_scenario_policy.svg"])
    failed_id = RECORDS[3]["id"]
    assert f"| {failed_id} | small | easy | 3 | engine crashed \\| exit 3 |" in text
    assert (tmp_path / "runs.csv").is_file() and (tmp_path / "summary.csv").is_file()


def test_report_defaults_without_report_section(tmp_path):
    make_folder(tmp_path)
    text = write_report(tmp_path).read_text()
    assert text.startswith("# Campaign demo\n")
    for label in ("## mean waiting time (s)", "## mean bounded slowdown", "## makespan (s)",
                  "## utilisation"):
        assert label in text
    assert "energy" not in text  # no energy in any run
    assert "beside the paper" not in text
    # default plots: bars by policy, one panel per scenario (each with its own y scale)
    plots = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert plots == sorted(f"bar_{m}_by_policy_per_scenario.{e}" for m in
                           ("mean_waiting_time", "mean_bounded_slowdown", "makespan", "utilisation")
                           for e in ("png", "svg"))


def test_report_spec_argument_and_no_manifest(tmp_path):
    make_folder(tmp_path, manifest=False)
    spec = ReportSpec(title="Only makespan", metrics=("makespan",), plots=())
    text = write_report(tmp_path, spec).read_text()
    assert text.startswith("# Only makespan\n") and "## makespan (s)" in text
    assert "## mean waiting time" not in text and not (tmp_path / "plots").exists()
    assert "missing runs unknown" in text


@pytest.mark.parametrize("report, message", [
    ({"metrics": ["makspan"]}, "demo.toml: report.metrics[0]: unknown metric 'makspan'; available: jobs"),
    ({"plot": [{"kind": "bar", "metric": "makespan", "x": "seed"}]},
     "demo.toml: report.plot[0].x: 'seed' is not a group column; available: scenario, policy"),
    ({"plot": [{"kind": "line", "metric": "makespan", "x": "scenario"}]},
     "demo.toml: report.plot[0]: plot: line plots need a numeric x"),
    ({"reference": [{"where": {"scenario": "small"}, "metric": "makespan", "value": 1, "source": "s"}]},
     "demo.toml: report.reference[0].where: matches 2 groups"),
    ({"reference": [{"where": {"colour": "red"}, "metric": "makespan", "value": 1, "source": "s"}]},
     "demo.toml: report.reference[0].where.colour: 'colour' is not a column of the campaign; its columns: "
     "scenario, policy"),
])
def test_report_checks_names_against_results(tmp_path, report, message):
    make_folder(tmp_path, report=report)
    with pytest.raises(CampaignError) as err:
        write_report(tmp_path)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


# --- check_report_section -------------------------------------------------------------------------

GOOD_REF = {"where": {"policy": "easy"}, "metric": "makespan", "value": 1.0, "source": "000 Table 2"}


def ref(**changes) -> dict:
    return {"reference": [{**GOOD_REF, **changes}]}


def test_check_report_section_good():
    spec = check_report_section(REPORT, "campaign.toml")
    assert spec.title == "EASY vs FCFS" and spec.metrics == ("mean_waiting_time", "policy.backfilled_jobs")
    assert [(p.kind, p.metric, p.x, p.hue) for p in spec.plots] == [
        ("bar", "mean_waiting_time", "scenario", "policy")]
    assert spec.references[0].ci95 == (2.0, 3.0) and spec.references[2].std == 0.5
    assert spec.references[1].value == 40.0
    assert check_report_section({}, "c.toml") == ReportSpec()


@pytest.mark.parametrize("section, message", [
    ([1], "report: expected a table, got an array"),
    ({"titel": "x"}, "report.titel: unknown key (known: labels, metrics, order, paper, plot, reference, timeline, title)"),
    ({"title": 3}, "report.title: expected a non-empty string, got an integer 3"),
    ({"metrics": "makespan"}, "report.metrics: expected an array, got a string 'makespan'"),
    ({"metrics": ["makespan", 2]}, "report.metrics[1]: expected a non-empty string, got an integer 2"),
    ({"plot": [{"kind": "bar", "metric": "m", "x": "s"}, {"kind": "pie", "metric": "m", "x": "s"}]},
     'report.plot[1].kind: expected "bar" or "line", got "pie"'),
    ({"plot": [{"kind": "bar", "x": "s"}]}, "report.plot[0].metric: missing (required)"),
    ({"plot": [{"kind": "bar", "metric": "m", "x": "s", "colour": "red"}]},
     "report.plot[0].colour: unknown key (known: facet, hue, kind, metric, title, where, x)"),
    ({"plot": [{"kind": "bar", "metric": "m", "x": "s", "hue": 1}]},
     "report.plot[0].hue: expected a non-empty string, got an integer 1"),
    (ref(value="12"), "report.reference[0].value: expected a finite number, got a string '12'"),
    (ref(value=True), "report.reference[0].value: expected a finite number, got a boolean True"),
    (ref(value=math.inf), "report.reference[0].value: expected a finite number, got a float inf"),
    (ref(where={}), "report.reference[0].where: expected at least one params key"),
    (ref(where="easy"), "report.reference[0].where: expected a table of params, got a string"),
    (ref(where={"p": [1]}), "report.reference[0].where.p: expected a string, number or boolean"),
    (ref(ci95=[1]), "report.reference[0].ci95: expected [low, high], got 1 values"),
    (ref(ci95=[3, 1]), "report.reference[0].ci95: low 3 is above high 1"),
    (ref(ci95=[1, "x"]), "report.reference[0].ci95[1]: expected a finite number"),
    (ref(std=-1), "report.reference[0].std: expected a number >= 0, got -1"),
    ({"reference": [{k: v for k, v in GOOD_REF.items() if k != "source"}]},
     "report.reference[0].source: missing (required)"),
    ({"reference": {"where": {}}}, "report.reference: expected an array, got a table"),
])
def test_check_report_section_errors(section, message):
    with pytest.raises(CampaignError) as err:
        check_report_section(section, "campaign.toml")
    assert str(err.value).startswith(f"campaign.toml: {message}")
    assert "\n" not in str(err.value)


def test_summary_and_runs_round_trip_through_csv(tmp_path):
    make_folder(tmp_path)
    runs_path, summary_path = collect(tmp_path)
    again = summarize(pd.read_csv(runs_path))  # the layout is positional: works on a read-back table
    s = pd.read_csv(summary_path)
    assert again["mean_waiting_time_mean"].tolist() == pytest.approx(s["mean_waiting_time_mean"].tolist())
    assert again["n_failed"].tolist() == [0, 1, 0]


def test_zip_partner_of_x_makes_no_series_of_its_own():
    # EHOSEP's campaign zips scenario.u1_limit with policy.limits.user1 (null for HOSEP): a line plot
    # against u1_limit must have one line per policy, not one per value of the partner column.
    from schedulers.campaign.plot import _series
    s = pd.DataFrame({"policy": ["E", "E", "E", "H", "H", "H"], "u1": [80, 100, 150] * 2,
                      "lim1": [80, 100, 150, None, None, None], "n": [3] * 6, "m_mean": [1.0] * 6})
    series = _series(s, ["policy", "u1", "lim1"], "m", "u1", "policy")
    assert [(label, len(rows)) for label, rows in series] == [("E", 3), ("H", 3)]
    # an independent column (two values at one x) still splits the series
    s2 = pd.concat([s, s.assign(lim1=[90, 90, 90, 90, 90, 90])], ignore_index=True)
    assert len(_series(s2, ["policy", "u1", "lim1"], "m", "u1", "policy")) > 2


def test_a_report_with_a_paper_section_says_how_the_papers_are_cited(tmp_path):
    """The numbers the paper sections cite (``000 L510-511``) are read as docs/bibliography.md's
    table reads them; the report says so before the section."""
    import re
    from pathlib import Path

    from schedulers.campaign.papers import CITATION_KEY

    bib = (Path(__file__).resolve().parents[1] / "docs" / "bibliography.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (00\d) \| the \[([^\]]+)\]", bib, flags=re.M)
    assert len(rows) == 5
    for number, paper in rows:
        assert f"{number} the {paper}" in CITATION_KEY, (number, paper)
    folder = make_folder(tmp_path / "camp", report={"paper": "hosep"})
    text = Path(write_report(folder)).read_text(encoding="utf-8")
    assert f"\n{CITATION_KEY}\n\n## OSEP and HOSEP against the papers\n" in text


def test_results_of_an_axis_named_like_a_column_name_the_folder_and_the_fix(tmp_path, capsys):
    # results of a campaign file read before such axes were refused: an axis `jobs` beside the
    # summary's `jobs` column
    from schedulers.cli import main

    folder = make_folder(tmp_path / "camp", records=[record("easy", "s", 0, wait=1.0, makespan=2.0,
                                                            extra={"jobs": 100})], manifest=False)
    assert main(["campaign", "collect", str(folder)]) == 2
    assert capsys.readouterr().err == (
        f"gridsched: error: {folder}: params key 'jobs' has the name of a runs-table column; name the axis "
        '"scenario.jobs" or "policy.jobs" in the campaign file and run it again\n')


def test_bars_of_series_missing_at_a_category_leave_no_gap():
    # Two categories. Series 0 has a value at category 0 only, series 1 at category 1 only, series
    # 2 at both: each category holds two bars, so the width is 0.8 / 2 = 0.4 and the two bars sit
    # at -0.2 and +0.2 around the category (series 0 at 0 - 0.2, series 2 at 0 + 0.2; series 1 at
    # 1 - 0.2, series 2 at 1 + 0.2). Series 0's row at category 1 (NaN: no bar) stays at 1.
    import numpy as np

    from schedulers.campaign.plot import bar_positions

    nan = float("nan")
    pos, width = bar_positions([np.array([0, 1]), np.array([1]), np.array([0, 1])],
                               [np.array([5.0, nan]), np.array([3.0]), np.array([1.0, 2.0])])
    assert width == pytest.approx(0.4)
    assert pos[0] == pytest.approx([-0.2, 1.0]) and pos[1] == pytest.approx([0.8])
    assert pos[2] == pytest.approx([0.2, 1.2])
    # every series everywhere: the former layout, 3 bars of 0.8 / 3 around each category
    pos, width = bar_positions([np.array([0])] * 3, [np.array([1.0])] * 3)
    assert width == pytest.approx(0.8 / 3) and [p[0] for p in pos] == pytest.approx([-0.8 / 3, 0.0, 0.8 / 3])
