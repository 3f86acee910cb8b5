"""Helpers for tests of a user's own policy file (``gridsched run --policy FILE.py:Class``)."""

from __future__ import annotations

from pathlib import Path


def line_of(path: Path, text: str) -> int:
    """The number (from 1) of the first line of the file ``path`` that holds ``text``, the line an
    error message must name.

    Raises:
        StopIteration: no line holds ``text``.
    """
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if text in ln)
