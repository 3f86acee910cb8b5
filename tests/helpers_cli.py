"""Helpers for tests of the command line: ``gridsched`` called in-process, its output captured."""

from __future__ import annotations

import contextlib
import io

from schedulers.cli import main


def run_main(argv: list) -> tuple[int, str, str]:
    """``main(argv)`` (each argument made a string: paths may be given as they are) with stdout
    and stderr captured: ``(exit status, stdout, stderr)``."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def one_error_line(err: str) -> str:
    """The only ``error`` line of ``err`` (an assertion error when there are none or several)."""
    errors = [ln for ln in err.splitlines() if "error" in ln]
    assert len(errors) == 1, err
    return errors[0]
