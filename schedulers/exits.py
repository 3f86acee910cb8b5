"""The exit statuses of the ``gridsched`` command, and the one-line form of its error messages.

One table for every sub-command (``run``, ``engine``, ``serve``, ``convert``, ``scenario``,
``campaign ...``), following the shell's conventions: 0 success, small numbers for the kinds of
failure, 128 + N for a process ended by signal N. :data:`STATUSES` is the table itself:
``gridsched --help`` prints it and ``docs/reference/exit-statuses.md`` shows it (a test keeps the
page equal to it).

Every error is one line on stderr, ``gridsched: error: ...`` (or ``gridsched serve: ...``),
naming the file and the item; :func:`one_line` makes a message one line and cuts a very long
one (a 60-million-character value echoed back) to a readable length.
"""

from __future__ import annotations

from typing import Any

__all__ = ["OK", "FAILED", "BAD_INPUT", "TIMEOUT", "NOT_WRITTEN", "INTERRUPTED", "TERMINATED", "STATUSES",
           "Terminated", "interrupt_status", "one_line", "MAX_MESSAGE"]

#: Done.
OK = 0
#: The simulation failed: the policy raised an exception or ended the process, real Batsim failed or
#: timed out, an internal error of gridsched; ``campaign run``/``status``: some runs failed.
FAILED = 1
#: Bad input: a file, an option or a value refused, before any output is written.
BAD_INPUT = 2
#: ``serve``: Batsim never connected, or went silent mid-run.
TIMEOUT = 3
#: An output file could not be written (disk full, quota exceeded, I/O error).
NOT_WRITTEN = 4
#: Interrupted by Ctrl-C (SIGINT, 128 + 2).
INTERRUPTED = 130
#: Ended by SIGTERM (128 + 15), e.g. ``kill`` or a batch system's time limit.
TERMINATED = 143

#: (status, meaning): the table of ``gridsched --help`` and of the documentation.
STATUSES: tuple[tuple[int, str], ...] = (
    (OK, "done"),
    (FAILED, "the simulation failed: the policy raised an exception or ended the process (the line names its "
             "class, file, line and callback), real Batsim failed or timed out, or an internal error of "
             "gridsched (please report it); campaign run/status: some runs failed or are missing (status: or "
             "their results were made by another gridsched code)"),
    (BAD_INPUT, "bad input: a file, option or value refused (the line names the file and the item), or a run "
                "stopped where real Batsim aborts (a deadlock, an impossible event)"),
    (TIMEOUT, "serve: Batsim never connected or went silent (--connect-timeout, --idle-timeout)"),
    (NOT_WRITTEN, "an output file could not be written: disk full, quota exceeded, I/O error (the line names "
                  "the file; no partly written file is left)"),
    (INTERRUPTED, "interrupted by Ctrl-C: what finished is kept (run: out_jobs.partial.csv; campaign: the "
                  "records; the same command resumes)"),
    (TERMINATED, "ended by SIGTERM: as Ctrl-C"),
)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread by the handler :func:`schedulers.cli.main` installs: every
    place that keeps finished work on Ctrl-C (a ``KeyboardInterrupt``) keeps it on SIGTERM too."""


def interrupt_status(exc: BaseException) -> int:
    """:data:`TERMINATED` for :class:`Terminated`, else :data:`INTERRUPTED`."""
    return TERMINATED if isinstance(exc, Terminated) else INTERRUPTED


def interrupt_word(exc: BaseException) -> str:
    """How the process was stopped, for the message: ``"terminated (SIGTERM)"`` or ``"interrupted"``."""
    return "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"


#: Longest error line (characters) :func:`one_line` keeps.
MAX_MESSAGE = 1000


def one_line(msg: Any, limit: int = MAX_MESSAGE) -> str:
    """``msg`` as one line: its lines joined with ``"; "``; when longer than ``limit`` characters,
    its middle is cut (``... [20,000,315 characters in all: cut] ...``), keeping the start (the
    file and the item) and the end (what to do).

    An ``OSError`` as Python words it (``[Errno 2] No such file or directory: 'trace.swf'``) is
    given file first, without the errno: ``trace.swf: No such file or directory``."""
    text = _os_error(msg) if isinstance(msg, OSError) else str(msg)
    total = len(text)
    if total > 2 * limit:   # (a huge message is not joined whole to be cut)
        text = text[:limit] + text[-limit:]
    line = "; ".join(part.strip() for part in text.splitlines() if part.strip())
    if len(line) <= limit and total <= 2 * limit:
        return line
    keep = limit * 2 // 3
    return f"{line[:keep]} ... [{total:,} characters in all: cut] ... {line[-(limit - keep):]}"


def _os_error(exc: OSError) -> str:
    """``FILE: STRERROR`` (``FILE -> FILE2: ...`` for a rename) for an ``OSError`` whose text is
    Python's ``[Errno N] ...``; any other text as it is."""
    text = str(exc)
    if not (text.startswith("[Errno") and exc.strerror):
        return text
    if exc.filename is None:
        return exc.strerror
    where = str(exc.filename) if exc.filename2 is None else f"{exc.filename} -> {exc.filename2}"
    return f"{where}: {exc.strerror}"
