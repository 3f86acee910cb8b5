"""The performance page's scale-goal table (``docs/engine/performance.md``) is generated from the
committed benchmark results (``scripts/benchmark_table.py``), and its verdicts follow the goals'
bounds."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("benchmark_table", ROOT / "scripts" / "benchmark_table.py")
bt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bt)

META = {"date": "2026-11-24 19:00:00", "machine": "x86_64, 2 CPUs"}


def test_the_performance_page_table_is_the_one_the_committed_results_give() -> None:
    assert bt.block(bt.PAGE.read_text(encoding="utf-8")) == bt.table(), \
        "docs/engine/performance.md's scale-goal table is stale: run python scripts/benchmark_table.py --write"


def _replay(wall: float, mb: float) -> dict:
    return {"meta": META, "results": [{"root": "/x/this", "wall_s": wall, "engine_s": wall - 20, "maxrss_mb": mb,
                                       "jobs": 1_000_000}]}


def test_replay_verdict_needs_both_under_two_minutes_and_under_one_gigabyte() -> None:
    assert bt.replay_row(_replay(119.9, 1023.0))[1] == "met"
    assert bt.replay_row(_replay(120.0, 500.0))[1] == "**NOT met**"     # 2 min is not under 2 min
    assert bt.replay_row(_replay(90.0, 1024.0))[1] == "**NOT met**"     # 1 GB = 1024 MB
    assert bt.replay_row(_replay(98.06, 618.4))[0].startswith("98.1 s (engine 78.1 s), 618 MB peak")


def test_energy_replay_verdict_needs_under_sixty_seconds_and_names_the_plain_run() -> None:
    data = {"meta": META, "results": [
        {"checkout": "this", "energy": True, "wall_s": 59.9, "engine_s": 40.0, "maxrss_mb": 1023.0, "jobs": 1_000_000},
        {"checkout": "this", "energy": False, "wall_s": 50.04, "engine_s": 30.0, "maxrss_mb": 700.0, "jobs": 1_000_000},
        {"checkout": "/x/before", "energy": True, "wall_s": 10.0, "engine_s": 5.0, "maxrss_mb": 10.0, "jobs": 1_000_000}]}
    text, verdict, _ = bt.replay_energy_row(data)
    assert verdict == "met" and text.startswith("59.9 s (engine 40.0 s), 1023 MB peak") and text.endswith("50.0 s")
    data["results"][0]["wall_s"] = 60.0                                   # 60 s is not under 60 s
    assert bt.replay_energy_row(data)[1] == "**NOT met**"


def _backlog(rows: list[tuple[str, str, int, float]]) -> dict:
    return {"meta": META, "results": [{"run": inv, "policy": pol, "size": n, "run_s": s, "maxrss_mb": 100.0}
                                      for inv, pol, n, s in rows]}


def test_backlog_ratio_is_taken_within_the_latest_invocation_that_ran_both() -> None:
    data = _backlog([("2026-11-23 10:00", "fcfs", 100_000, 10.0), ("2026-11-23 10:00", "easy", 100_000, 29.0),
                     ("2026-11-24 10:00", "fcfs", 100_000, 10.0), ("2026-11-24 10:00", "easy", 100_000, 31.0),
                     ("2026-11-25 10:00", "easy", 100_000, 5.0)])   # (no FCFS in that invocation)
    text, verdict, when = bt.backlog_ratio_row(data)
    assert text.startswith("3.10x") and verdict == "**NOT met**" and when.startswith("2026-11-24 10:00")
    data["results"][3]["run_s"] = 30.0
    assert bt.backlog_ratio_row(data)[1] == "met"   # 3x is within 3x


def test_startup_verdict_and_the_reference_build_is_named() -> None:
    data = {"meta": {**META, "batsim_build": "meson release (-O3)", "summary": {
        "gridsched": {"median_s": 0.62, "runs": 5}, "batsim+minimal-fcfs": {"median_s": 1.86, "runs": 5}}}}
    text, verdict, _ = bt.startup_row(data)
    assert text.startswith("3.0x") and "meson release (-O3)" in text and verdict == "**NOT met**"
    data["meta"]["summary"]["batsim+minimal-fcfs"]["median_s"] = 6.2
    assert bt.startup_row(data)[1] == "met"


def test_a_missing_result_is_said_not_invented(tmp_path: Path) -> None:
    (tmp_path / "replay.json").write_text(json.dumps(_replay(100.0, 600.0)))
    out = bt.table(tmp_path)
    assert "100.0 s" in out and "no result in `swf.json`" in out and "no result in `startup.json`" in out


def test_every_policy_is_set_against_easy_of_its_own_invocation_and_owners() -> None:
    """Ratios worked by hand: buc 5.0 / 2.0 = 2.5 at 10k and 33.0 / 30.0 = 1.1 at 100k (the later
    invocation wins over the earlier 99 s); hosep 4.0 / 1.0 against the owned EASY, not the plain
    one; a stopped run is a lower bound and fails its goal; a policy with options is not its default."""
    rows = [("t1", "easy", 10_000, 2.0, {}), ("t1", "buc", 10_000, 5.0, {}),
            ("t0", "easy", 100_000, 30.0, {}), ("t0", "buc", 100_000, 99.0, {}),
            ("t1", "easy", 100_000, 30.0, {}), ("t1", "buc", 100_000, 33.0, {}),
            ("t1", "easy", 10_000, 1.0, {"owned": True}), ("t1", "hosep", 10_000, 4.0, {"owned": True}),
            ("t1", "easy", 100_000, 10.0, {"owned": True}), ("t1", "hosep", 100_000, 45.0, {"owned": True}),
            ("t1", "heft:reservations=8", 10_000, 2.0, {})]
    data = {"meta": META, "results": [{"run": inv, "policy": pol, "size": n, "run_s": s, "maxrss_mb": 1.0, **extra}
                                      for inv, pol, n, s, extra in rows]}
    goals = {"buc": 3.0, "hosep": 5.0}
    text, verdict, when = bt.backlog_policies_row(data, goals)
    assert text == "at 10k / 100k jobs: buc 2.5x / 1.1x, hosep 4.0x / 4.5x" and verdict == "met"
    assert when.startswith("t1")
    data["results"].append({"run": "t2", "policy": "easy", "size": 10_000, "run_s": 1.0, "maxrss_mb": 1.0})
    data["results"].append({"run": "t2", "policy": "buc", "size": 10_000, "run_s": 300.0, "maxrss_mb": 1.0,
                            "stopped_after_s": 300.0})
    text, verdict, _ = bt.backlog_policies_row(data, goals)
    assert text == "at 10k / 100k jobs: buc > 300x (stopped at 300 s) / 1.1x, hosep 4.0x / 4.5x"
    assert verdict == "**NOT met**"
    text, verdict, _ = bt.backlog_policies_row(data, {"buc": 3.0, "heft": 3.0})
    assert "heft - / -" in text and verdict == "**NOT met**"   # heft:reservations=8 is not heft's default
