"""Which gridsched code made a campaign's records, so that results of two codes are never mixed.

A run's id hashes what the run simulates (its parameters, its input files, a policy file of the
user's own: :meth:`.spec.RunSpec.identity`), not gridsched itself: after an upgrade (or an edit of
a checkout) the same campaign file gives the same ids. Each record therefore carries the code that
made it: ``gridsched_version`` and ``gridsched_code_sha256``, the SHA-256 of gridsched's own
Python sources (:func:`code_sha256`; a checkout's edit changes it while the version number stays).
A record whose code differs from the running one is *stale*: ``campaign run`` refuses to resume
among stale records (``--rerun-stale`` runs them again), ``campaign status`` counts them, and
``collect`` / ``report`` warn when a folder's results come from more than one code.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Iterable

from .. import __version__

#: The record fields that name the code which made a run.
VERSION, CODE = "gridsched_version", "gridsched_code_sha256"


def code_sha256() -> str:
    """The SHA-256 (hex) of gridsched's Python sources: every ``*.py`` file of the ``schedulers``
    package, in the order of their paths relative to it, each prefixed by that path and its
    length. About 2 MB, read once per process (a few ms), when this module is imported: a
    long-lived Dask worker stamps its records with the code it imported, not with files edited
    on disk since."""
    return _CODE


def _sources_sha256() -> str:
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py"), key=lambda q: q.relative_to(root).as_posix()):
        data = p.read_bytes()
        h.update(f"{p.relative_to(root).as_posix()}:{len(data)}:".encode())
        h.update(data)
    return h.hexdigest()


_CODE = _sources_sha256()


def stamp() -> dict[str, str]:
    """The fields a record made by this process carries: ``{VERSION: ..., CODE: ...}``."""
    return {VERSION: __version__, CODE: code_sha256()}


def describe(code: tuple[Any, Any]) -> str:
    """``(version, code sha256)`` of a record in words: ``gridsched 0.1.0 (code 1a2b3c4d5e6f)``, or
    that of an earlier gridsched, which did not record its code."""
    version, sha = code
    if not isinstance(sha, str):
        return f"gridsched {version or '(unknown version)'} (code not recorded)"
    return f"gridsched {version} (code {sha[:12]})"


def code_of(record: dict[str, Any]) -> tuple[Any, Any]:
    """``(version, code sha256)`` of a record (None where it has not the field)."""
    return record.get(VERSION), record.get(CODE)


def is_stale(record: dict[str, Any]) -> bool:
    """Whether ``record`` was made by another code than this process runs (a record without
    ``gridsched_code_sha256`` is: gridsched before it recorded its code)."""
    return code_of(record) != (__version__, code_sha256())


def mixed_codes_line(where: str, records: Iterable[dict[str, Any]]) -> str | None:
    """One warning line when ``records`` were made by more than one code (counts per code, most
    first, then in the order of their words), else None. ``where`` names the folder."""
    counts: dict[tuple[Any, Any], int] = {}
    for rec in records:
        counts[code_of(rec)] = counts.get(code_of(rec), 0) + 1
    if len(counts) < 2:
        return None
    parts = ", ".join(f"{n} by {w}" for w, n in sorted(((describe(c), n) for c, n in counts.items()),
                                                        key=lambda wn: (-wn[1], wn[0])))
    return (f"warning: {where}: its results were made by {len(counts)} different gridsched codes ({parts}): the "
            "tables mix them; `gridsched campaign run FILE --out DIR --rerun-stale` runs the others again with "
            "this one")
