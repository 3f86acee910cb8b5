"""``benchmarks/bench_batsched_backlog.py`` end to end on a small backlog: batsched 1.4.0's
``conservative_bf`` and ``easy_bf`` through ``gridsched engine``, their starts against our
``conservative`` and ``easy`` (no timing asserts). The live run needs batsched on PATH (or
``$BATSCHED``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "bench_batsched_backlog.py"
BATSCHED = os.environ.get("BATSCHED") or shutil.which("batsched")


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def test_without_batsched_it_says_so_and_writes_nothing(tmp_path):
    proc = _run("--sizes", "50", "--batsched", tmp_path / "no-batsched", "--out", tmp_path / "res")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines() == [f"skipped: batsched {str(tmp_path / 'no-batsched')!r} is not an "
                                                "executable file (give --batsched PATH)"]
    assert not (tmp_path / "res").exists()


@pytest.mark.skipif(BATSCHED is None, reason="batsched 1.4.0 is not on PATH (nor $BATSCHED): live run skipped")
def test_rows_and_conservative_bf_starts_equal_ours(tmp_path):
    proc = _run("--sizes", "100", "--algorithms", "easy_bf,conservative_bf", "--batsched", BATSCHED,
                "--time-limit", "120", "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "backlog_batsched.json").read_text(encoding="utf-8"))
    assert report["meta"]["command"].endswith("--batsched PATH --time-limit 120 --out " + str(tmp_path))
    assert report["meta"]["batsched_version"]
    rows = report["results"]
    assert [(r["algorithm"], r["size"]) for r in rows] == [("easy_bf", 100), ("conservative_bf", 100)]
    for r in rows:
        assert "stopped_after_s" not in r
        assert r["batsched_cpu_s"] > 0 and r["engine_cpu_s"] > 0
        assert r["wall_s"] >= r["batsched_cpu_s"] / 2     # (2 cores) the wall clock covers batsched's run
    assert rows[0]["compared_with"] == "easy" and rows[1]["compared_with"] == "conservative"
    assert rows[1]["differing_starts"] == 0, rows[1].get("differing_examples")
    assert rows[0]["differing_starts"] == 0, rows[0].get("differing_examples")
    md = (tmp_path / "backlog_batsched.md").read_text(encoding="utf-8")
    assert "| conservative_bf | 100 |" in md and "| conservative | 0 |" in md


@pytest.mark.skipif(BATSCHED is None, reason="batsched 1.4.0 is not on PATH (nor $BATSCHED): live run skipped")
def test_an_algorithm_batsched_does_not_know_is_one_line_naming_it(tmp_path):
    proc = _run("--sizes", "20", "--algorithms", "no_such_algo", "--batsched", BATSCHED, "--out", tmp_path / "res")
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: batsched (no_such_algo) exited with status 1: Invalid 'variant' value")
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not (tmp_path / "res").exists()
