"""A ``batsim`` executable that runs the embedded engine, for front ends that start ``batsim`` themselves.

batsim-py 1.0.5 (``batsim_py.SimulatorHandler``) does not connect to a running Batsim: it looks
``batsim`` up on ``PATH`` (``shutil.which('batsim')``, checked in ``SimulatorHandler.__init__``),
starts it with Batsim 4.x's command line (``SimulatorHandler.start``)::

    batsim -E --forward-profiles-on-submission --disable-schedule-tracing
           --disable-machine-state-tracing -s tcp://HOST:PORT -p PLATFORM -w WORKLOAD
           -v quiet -e EXPORT_PREFIX [--enable-compute-sharing] [--disable-storage-sharing]
           [--events FILE]

binds the REP socket itself, reads the process's stdout only when it closes the simulation, and
waits at most 5 s for the process to exit after acknowledging SIMULATION_ENDS (then sends it
SIGTERM). ``gridsched engine`` takes that command line as Batsim does, writes nothing on stdout,
exits 0 once SIMULATION_ENDS is acknowledged, and exits at once on SIGTERM.

:func:`write_launcher` writes ``DIR/batsim``, a three-line shell script that runs ``gridsched engine
"$@"`` with the Python interpreter gridsched is installed in; putting ``DIR`` first on ``PATH``
makes it the ``batsim`` such a front end starts (``gridsched batsim-launcher DIR`` on the command
line). It never overwrites a file unless asked (``force``), and it says when a real ``batsim``
is on ``PATH`` too (:class:`LauncherResult.shadowed`). The script carries a marker line
(:data:`MARKER`), by which :func:`is_launcher` recognises it: ``gridsched run --engine batsim``
refuses a ``batsim`` that is this launcher rather than running the embedded engine under real
Batsim's name (:func:`schedulers.batsim.runner.find_batsim`).
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MARKER", "LauncherError", "LauncherResult", "launcher_text", "write_launcher", "is_launcher"]

#: The line that marks a launcher written by :func:`write_launcher` (its second line).
MARKER = "# gridsched batsim-launcher: runs gridsched's embedded engine under the name batsim"


class LauncherError(OSError):
    """The launcher cannot be written (the file exists and ``force`` was not given, or the
    folder cannot be written); the message names the path."""


@dataclass(frozen=True)
class LauncherResult:
    """What :func:`write_launcher` did.

    Attributes:
        path: the launcher written (``DIR/batsim``).
        shadowed: another ``batsim`` found on ``PATH`` (not a gridsched launcher), which the
            launcher hides when ``DIR`` comes first on ``PATH``; None when there is none.
    """

    path: Path
    shadowed: str | None


def launcher_text(python: str | None = None) -> str:
    """The launcher script: ``exec PYTHON -m schedulers.cli engine --timeout 0 "$@"`` (``--timeout
    0``: wait for each reply as long as it takes, as Batsim does; a later ``--timeout`` wins).

    Args:
        python: the interpreter to run (default: this one, ``sys.executable``).
    """
    py = python or sys.executable
    quoted = "'" + py.replace("'", "'\\''") + "'"
    return f"#!/bin/sh\n{MARKER}\nexec {quoted} -m schedulers.cli engine --timeout 0 \"$@\"\n"


def is_launcher(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a launcher written by :func:`write_launcher` (its marker line)."""
    try:
        with open(path, "rb") as f:
            head = f.read(512)
    except OSError:
        return False
    return MARKER.encode() in head


def write_launcher(folder: str | os.PathLike[str], *, force: bool = False, python: str | None = None) -> LauncherResult:
    """Write the executable ``folder/batsim`` that runs ``gridsched engine "$@"``.

    Args:
        folder: where to write it (created if missing). Put it first on ``PATH`` for the front
            end (``PATH=folder:$PATH``).
        force: replace an existing ``folder/batsim``.
        python: the interpreter the launcher runs (default ``sys.executable``).

    Returns:
        The path written, and any other ``batsim`` on ``PATH`` it may hide.

    Raises:
        LauncherError: ``folder/batsim`` exists and ``force`` is False, or it cannot be written.
    """
    target = Path(folder) / "batsim"
    if Path(folder).exists() and not Path(folder).is_dir():   # (mkdir's words: "File exists")
        raise LauncherError(f"{folder}: is a file, not a folder; give the folder to write `batsim` into")
    if target.exists() and not force:
        what = "a gridsched launcher" if is_launcher(target) else "a file that is not a gridsched launcher"
        raise LauncherError(f"{target} already exists ({what}); not overwritten (--force replaces it)")
    shadowed = shutil.which("batsim")
    if shadowed is not None and (is_launcher(shadowed) or Path(shadowed).resolve() == target.resolve()):
        shadowed = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(launcher_text(python), encoding="utf-8")
        target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    except OSError as exc:
        raise LauncherError(f"{target}: cannot write the launcher: {exc.strerror or exc}") from None
    return LauncherResult(target, shadowed)
