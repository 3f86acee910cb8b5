"""Output files written whole or not at all, and one error naming the file when the disk is full.

:func:`atomic_output` opens a temporary file beside the output (``.NAME.<pid>.<random>.tmp``), and
renames it over the output once everything is written (:func:`os.replace`, atomic on POSIX file
systems): a reader never sees a file cut mid-row, and an earlier file of the same name stays
whole until the new one is complete. When writing fails (disk full, quota exceeded, I/O error,
file too large), the temporary file is removed and :class:`OutputWriteError` names the output
file; ``gridsched`` then exits with status 4 (:data:`schedulers.exits.NOT_WRITTEN`).
"""

from __future__ import annotations

import errno
import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterator

__all__ = ["OutputWriteError", "NotAFolder", "NotAFile", "check_output_file", "atomic_output", "atomic_write_text",
           "not_written", "WRITE_ERRNOS", "make_folder"]

#: The ``errno`` values of an output that cannot be written for want of room or a working disk
#: (as opposed to a bad path or a permission, which are the user's choice of output).
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS})


class OutputWriteError(OSError):
    """An output file could not be written (disk full, quota exceeded, I/O error, file too
    large): the message is one line naming the file; nothing partly written is left under its
    name. Exit status 4 (:data:`schedulers.exits.NOT_WRITTEN`). ``errno`` and ``filename`` are
    set; the text is the message alone."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def not_written(path: str | os.PathLike[str], exc: OSError) -> OutputWriteError:
    """The :class:`OutputWriteError` of ``path`` for the failure ``exc`` (same ``errno``)."""
    err = OutputWriteError(f"{path}: cannot write the file: {exc.strerror or exc}")
    err.errno, err.strerror, err.filename = exc.errno, exc.strerror, str(path)
    return err


class _OneLine(OSError):
    """An OSError of gridsched's own whose text is its message alone (no errno): one line."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class NotAFolder(_OneLine):
    """An output folder cannot be made: a file stands where it or one of its parents would be.
    The text is the message alone (no errno): one line naming the folder and the file."""


def make_folder(folder: str | os.PathLike[str]) -> None:
    """``mkdir -p folder``; a file in the way is named (Python's words were "File exists" or
    "Not a directory" without saying which path is a file).

    Raises:
        NotAFolder: ``folder`` or one of its parents is a file.
        OSError: the folder cannot be made otherwise (a permission: the error as it is).
    """
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
        if blocker is None:
            raise
        if blocker == folder:
            raise NotAFolder(f"{folder}: is a file, where a folder is needed") from None
        raise NotAFolder(f"{folder}: cannot make this folder: {blocker} is a file, not a folder") from None


class NotAFile(_OneLine):
    """An output file's path names something that is not a regular file (a device such as
    ``/dev/null`` or ``/dev/stdout``, a FIFO, a folder): renaming the written file over it would
    replace it (a device node replaced by a file, when the user may write there), so it is
    refused. The text is the message alone (no errno): one line naming the path; bad input."""


def check_output_file(path: str | os.PathLike[str]) -> None:
    """Refuse an output ``path`` that exists and is not a regular file (symbolic links followed:
    ``/dev/stdout`` links to the terminal or pipe of the process).

    Raises:
        NotAFile: one line naming the path and what it is.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:   # (absent, or a dangling link: written as a file)
        return
    if stat.S_ISREG(mode):
        return
    what = ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else
            "a socket" if stat.S_ISSOCK(mode) else "a device or terminal")
    raise NotAFile(f"{path}: is {what}, not a file: gridsched writes an output whole into a new file renamed "
                   "over its path, which would replace it; give the path of a file")


@contextmanager
def atomic_output(path: str | os.PathLike[str], mode: str = "w", *, fsync: bool = False,
                  newline: str | None = None) -> Iterator[IO[Any]]:
    """A file to write ``path`` through: a temporary file in the same folder, renamed over
    ``path`` when the ``with`` block ends without error, removed otherwise.

    Args:
        path: the output file (its folder must exist).
        mode: ``"w"`` (UTF-8 text) or ``"wb"``.
        fsync: flush the data to the disk before the rename (a record that must survive a crash).
        newline: as :func:`open`'s (text mode).

    Raises:
        NotAFile: ``path`` is a device, a FIFO or a folder (:func:`check_output_file`).
        OutputWriteError: opening, writing, flushing or renaming failed with an ``OSError``
            (the file named, the temporary file removed). Any other exception of the block is
            raised as it is, the temporary file removed.
    """
    path = Path(path)
    check_output_file(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        f = open(tmp, mode, encoding=None if "b" in mode else "utf-8", newline=newline)
    except OSError as exc:
        raise not_written(path, exc) from None
    try:
        with f:
            yield f
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, OutputWriteError):
            raise not_written(path, exc) from None
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str, *, fsync: bool = False) -> None:
    """Write ``text`` (UTF-8) to ``path`` through :func:`atomic_output`."""
    with atomic_output(path, fsync=fsync) as f:
        f.write(text)
