"""A campaign's output folder: the manifest and one result file per run, written atomically.

Every file is written to a temporary name in its final folder (``.NAME.<pid>.<random>.tmp``),
flushed to disk (``fsync``) and renamed over its final name (:func:`os.replace`, atomic on POSIX
file systems). Whatever moment the runner is killed at (``kill -9`` included), a result file is
either absent or complete; the temporary files of a killed runner are removed by the next one.
A run is *done* when ``results/<id>.json`` exists: a restarted runner runs only the others.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from .. import outfiles
from ..inputs.jsonfile import read_json
from .errors import MOVE_IT_OUT, CampaignError

MANIFEST_FORMAT = "gridsched-campaign/1"

#: The lock file of a campaign folder (:meth:`ResultStore.locked`).
LOCK_NAME = ".gridsched-campaign.lock"


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically: temporary file, fsync, rename
    (:func:`schedulers.outfiles.atomic_output`; a full disk: ``OutputWriteError`` naming the file)."""
    outfiles.atomic_write_text(path, text, fsync=True)


def dumps(obj: Any) -> str:
    """Strict JSON (no NaN/Infinity tokens), sorted keys, one file per record."""
    return json.dumps(obj, indent=1, sort_keys=True, allow_nan=False) + "\n"


@dataclass
class Status:
    """What a folder holds for a list of run ids: done, failed (a record with status failed),
    missing; ``stray``: result files of runs that are not in the list (e.g. an earlier version
    of the campaign file); ``stale``: the done or failed ones whose record another gridsched code
    made (:mod:`.provenance`), with ``codes`` their (version, code sha256) by id."""

    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    stray: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    codes: dict[str, tuple] = field(default_factory=dict)

    @classmethod
    def of(cls, run_ids: Iterable[str], states: dict[str, str], stray: list[str],
           codes: dict[str, tuple] | None = None) -> "Status":
        """Classify ``run_ids`` by ``states`` (id -> record status; absent: missing); ``codes``:
        id -> (version, code sha256) of the stale records among them."""
        run_ids, codes = list(run_ids), dict(codes or {})
        st = cls(stray=list(stray), stale=[rid for rid in run_ids if rid in codes], codes=codes)
        for rid in run_ids:
            state = states.get(rid)
            (st.missing if state is None else st.done if state == "done" else st.failed).append(rid)
        return st

    def line(self) -> str:
        total = len(self.done) + len(self.failed) + len(self.missing)
        text = f"{total} runs: {len(self.done)} done, {len(self.failed)} failed, {len(self.missing)} missing"
        if self.stale:
            text += (f"; {len(self.stale)} of them made by {self.other_code()} (`gridsched campaign run FILE "
                     "--rerun-stale` runs them again with this one)")
        if self.stray:
            text += f" ({len(self.stray)} other result files, not runs of this campaign: ignored)"
        return text

    def other_code(self) -> str:
        """The code(s) that made the stale records, in words (:func:`.provenance.describe`)."""
        from .provenance import describe

        kinds = sorted({describe(c) for c in self.codes.values()})
        return kinds[0] if len(kinds) == 1 else f"{len(kinds)} other gridsched codes ({', '.join(kinds)})"


class ResultStore:
    """The output folder ``out`` of a campaign (layout in :mod:`schedulers.campaign`).

    Raises:
        CampaignError: ``out`` exists and is not a folder.
    """

    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)
        if self.out.exists() and not self.out.is_dir():
            raise CampaignError(f"{self.out}: exists and is not a folder")
        self.results = self.out / "results"

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the folder's lock while a runner writes into it: a second ``campaign run`` on the
        same folder stops at once, naming the process that holds it, instead of running every run
        a second time and replacing the first runner's records. The lock is an ``flock`` on
        ``LOCK_NAME`` (the holder's pid, host and start time written in it): the system releases
        it when the holder ends, however it ends (``kill -9`` included), so the lock of a runner
        that is no longer running is taken over by the next one. Creates the folder.

        Raises:
            CampaignError: another process holds the lock.
        """
        import socket
        import time

        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock
            yield
            return
        outfiles.make_folder(self.out)
        path = self.out / LOCK_NAME
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:   # (BlockingIOError: held by another process)
                holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
                raise CampaignError(f"{self.out}: another `gridsched campaign run` is writing into this folder "
                                    f"({holder}); wait for it to end, or give another --out") from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}, since "
                          f"{time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode(), 0)
            yield
        finally:
            os.close(fd)   # (releases the lock)

    def prepare(self) -> int:
        """Create the folders and remove temporary files left by a killed runner (results and
        outputs). Returns how many were removed."""
        outfiles.make_folder(self.results)
        removed = 0
        for p in self.results.glob(".*.tmp"):
            p.unlink(missing_ok=True)
            removed += 1
        return removed

    def path(self, run_id: str) -> Path:
        return self.results / f"{run_id}.json"

    def write(self, record: dict[str, Any]) -> None:
        """Write one run's record atomically (replacing an earlier one of the same id)."""
        atomic_write_text(self.path(record["id"]), dumps(record))

    def ids(self) -> set[str]:
        """Ids of the runs with a result file."""
        if not self.results.is_dir():
            return set()
        return {p.name[:-5] for p in self.results.iterdir() if p.name.endswith(".json") and not p.name.startswith(".")}

    def read(self, run_id: str) -> dict[str, Any]:
        """One record. Raises CampaignError naming the file when it is not a record."""
        p = self.path(run_id)
        try:
            rec = read_json(p, ValueError, "run record")   # (strict: no NaN, no repeated key...)
        except ValueError as exc:
            raise CampaignError(f"not a readable run record: {exc}; {MOVE_IT_OUT}") from None
        if not isinstance(rec, dict) or rec.get("id") != run_id or "status" not in rec:
            raise CampaignError(f"{p}: not a gridsched run record (no id {run_id!r} or no status); {MOVE_IT_OUT}")
        return rec

    def status(self, run_ids: Iterable[str]) -> Status:
        """Done / failed / missing (and stale) for ``run_ids`` (reads the records present)."""
        from .provenance import code_of, is_stale

        present = self.ids()
        wanted = list(run_ids)
        records = {rid: self.read(rid) for rid in wanted if rid in present}
        codes = {rid: code_of(rec) for rid, rec in records.items() if is_stale(rec)}
        return Status.of(wanted, {rid: rec["status"] for rid, rec in records.items()},
                         sorted(present - set(wanted)), codes)

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        outfiles.make_folder(self.out)
        atomic_write_text(self.out / "campaign.json", dumps({"format": MANIFEST_FORMAT, **manifest}))

    def read_manifest(self) -> dict[str, Any]:
        """The manifest. Raises CampaignError when the folder has none (not a campaign folder)."""
        p = self.out / "campaign.json"
        if not p.exists():
            raise CampaignError(f"{self.out}: not a campaign output folder (no campaign.json); "
                                "run `gridsched campaign run FILE --out DIR` first")
        try:
            m = read_json(p, ValueError, "manifest")
        except ValueError as exc:
            raise CampaignError(f"unreadable manifest: {exc}") from None
        if not isinstance(m, dict) or m.get("format") != MANIFEST_FORMAT:
            raise CampaignError(f"{p}: not a gridsched campaign manifest (format {MANIFEST_FORMAT!r})")
        return m
