"""One ``gridsched run`` at a time in an output folder.

Two runs started into the same folder (a loop of ``gridsched run ... -o out &`` with the same
``out``) both found it empty, both wrote their files, and the folder ended with one run's
``out_jobs.csv`` beside the other's ``summary.json``. A run now holds an ``flock`` on
:data:`LOCK_NAME` in the folder from the moment it prepares the folder to its last file, and the
second run stops with one line naming the first; the lock file is removed when the run ends
(the system releases the ``flock`` of a run that is killed, so its file left behind is taken
over by the next run).
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

__all__ = ["LOCK_NAME", "RunLock"]

#: The lock file in the output folder (hidden; ignored when the folder is checked for files).
LOCK_NAME = ".gridsched-run.lock"


class RunLock:
    """The lock of output folder ``out`` (which must exist), held from :meth:`acquire` to
    :meth:`release`."""

    def __init__(self, out: Path) -> None:
        self.path = out / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock.

        Raises:
            RuntimeError: another process holds it (the message names it: pid, host, start).
            OSError: the lock file cannot be made.
        """
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:   # (BlockingIOError: held by another process)
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise RuntimeError(f"{self.path.parent}: another `gridsched run` is writing into this folder "
                               f"({holder}); wait for it to end, or choose another --output") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}, since "
                      f"{time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Remove the lock file and release the lock (nothing when not held)."""
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None
