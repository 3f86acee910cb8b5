"""Shared pytest configuration and fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "simgrid: needs SimGrid 3.32's Python bindings under /usr/bin/python3 (skipped otherwise)")


@pytest.fixture()
def user(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A user's policy file, ``tmp_path/mine.py``, holding the test module's ``POLICIES`` (the
    file's text: policy classes a test names as ``f"{user}:Class"``)."""
    text = getattr(request.module, "POLICIES", None)
    if not isinstance(text, str):
        pytest.fail(f"{request.module.__name__}: the 'user' fixture writes the module's POLICIES, a str; it has none")
    p = tmp_path / "mine.py"
    p.write_text(text)
    return p
