"""The package type-checks: ``mypy schedulers`` with the configuration of pyproject.toml
(``[tool.mypy]``: mypy's default checks plus ``check_untyped_defs``) reports no error.

mypy keeps its cache in ``tmp/.mypy_cache`` (``cache_dir`` of the configuration), so a second run
checks again only the modules that changed: a few seconds instead of the ~15 s of a first run on
a 2-core machine.
"""

from __future__ import annotations

import time
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

api = pytest.importorskip("mypy.api", reason="mypy is in the test extra: pip install -e '.[test]'")


def test_the_configuration_asks_for_checked_bodies() -> None:
    """The strictness the developer docs state is the one configured (a setting removed fails here)."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert conf["python_version"] == "3.11"
    assert conf["check_untyped_defs"] is True
    assert conf["files"] == ["schedulers"]


def test_mypy_reports_no_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """``mypy schedulers`` run as a developer runs it (from the project's root, its configuration)
    exits 0 with no ``error:`` line; otherwise the test fails with mypy's error list."""
    monkeypatch.chdir(ROOT)
    t0 = time.monotonic()
    stdout, stderr, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), "--no-pretty",
                                      "--show-error-codes", "schedulers"])
    took = time.monotonic() - t0
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    assert status == 0 and not errors, (f"mypy schedulers reported {len(errors)} error(s):\n"
                                        + "\n".join(errors) + f"\n{stderr}")
    assert "Success: no issues found" in stdout
    assert took < 60, f"mypy took {took:.0f} s"
