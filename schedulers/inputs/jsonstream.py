"""Read a Batsim workload file piece by piece: its ``jobs`` kept packed, one buffer for all.

:func:`read_workload_json` returns what :func:`~schedulers.inputs.jsonfile.read_json` returns,
except that the top-level ``jobs`` array is a :class:`PackedJobs`: each job, decoded as it is
read, packed by :mod:`marshal` into one byte buffer. A job is unpacked when it is used
(``jobs[k]``, a fresh dict equal to the one ``read_json`` gives, same key order and number
types), so a million-job trace never holds its million job objects at once, nor the whole file
as text: the file is read in chunks of about a megabyte (plain or gzip-compressed, whatever its
name), the other top-level values and the ``profiles`` one by one.

The parsing is done by Python's :mod:`json` decoder (its C scanner on each value, with the
strict rules of :mod:`.jsonfile`, and numbers read as Batsim reads them,
:func:`~schedulers.inputs.jsonfile.batsim_number`): the values are exactly those of
``read_json(..., parse_float=batsim_number)``. The whole items of a buffer are decoded in one
call of the scanner (the text up to the last ``}`` followed by a comma, in the container's
brackets: it is valid JSON exactly when it is a sequence of whole items), the items left one at
a time; an item cut by the end of a chunk is decoded again once the next chunk is read. The reader never
reports an error itself: on anything it does not expect (malformed or non-strict JSON, a key
repeated in an object, a ``\\uD800``-``\\uDFFF`` escape, a file it cannot read or decode, nesting
too deep), it reads the file again with ``read_json``, which
raises the same one-line error as before (file, line, column) or, should the file be good after
all, returns its value. So an error anywhere in the file is reported before any job is checked.

Memory (the 1,000,000-job, 131 MB trace of ``benchmarks/bench_engine.py --replay``): the packed
jobs take about 85 MB (77 bytes and an 8-byte offset a job); the equal ``delay``
profiles are shared as they are read (:func:`share_delays`), so the million one-job profiles
are 90,000 objects. The same file parsed at once by ``json`` holds about 700 MB of objects.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import marshal
import re
import zlib
from array import array
from typing import Any, Callable, Iterator

from .jsonfile import _GZIP_MAGIC, _SURROGATE_ESCAPE, _constant, batsim_number, read_json, regular_file

_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]  # (not in typeshed) (text, index after the opening quote) -> (str, end); strict

__all__ = ["PackedJobs", "read_workload_json", "share_delays"]

#: Characters read at a time (a value longer than this is read in doubling chunks).
CHUNK = 1 << 20

#: A plain (not compressed) file at most this big (bytes) is parsed at once by ``read_json``:
#: its objects take about 6 times its size (50 MB for an 8 MB, 60,000-job file), and parsing at
#: once in C is about 5 times faster than reading piece by piece (10,000 jobs: 0.03 s against
#: 0.13 s with the checks; this matters to ``gridsched run``'s start-up).
WHOLE_FILE_BYTES = 8 << 20

_WS = re.compile(r"[ \t\n\r]*")  # JSON whitespace, as json.decoder.WHITESPACE
_COLON = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")
#: After an item: a comma (and the whitespace after it), or the container's end (group 1).
_AFTER = {"]": re.compile(r"[ \t\n\r]*(?:,[ \t\n\r]*|(\]))"), "}": re.compile(r"[ \t\n\r]*(?:,[ \t\n\r]*|(\}))")}


#: Items are decoded a buffer at a time (:func:`_whole_items`) while at least this many
#: characters are left in the buffer, one at a time otherwise.
BATCH_MIN = 1 << 14
#: At most this many characters are decoded at a time (their objects exist together).
BATCH_MAX = 1 << 18
_CUT_TRIES = 8   # '}' tried from the end of the buffer for a batch's end
_COMMA = re.compile(r"[ \t\n\r]*,")


class _Fallback(Exception):
    """Something the piecewise reader does not handle: read the file with ``read_json``."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object as a dict; a key repeated in it sends the file to ``read_json``, which says where."""
    d = dict(pairs)
    if len(d) != len(pairs):
        raise _Fallback
    return d


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs, parse_constant=_constant,
                            parse_float=batsim_number)  # Batsim's numbers
_SCAN = _DECODER.scan_once  # type: ignore[attr-defined]  # (not in typeshed)


class PackedJobs:
    """A workload's jobs, in file order, each packed by :mod:`marshal` into one byte buffer.

    ``jobs[k]`` unpacks job ``k`` (a fresh object, equal to the decoded JSON value: same key
    order and number types; the caller may change it; about 1 us, a JSON decode takes 1.5);
    ``len`` and iteration as a list of those objects. About 85 bytes a job for a ``delay`` job
    of a converted trace (77 packed and an 8-byte offset), against about 450 for its dict. The
    packing only lives in this process (``marshal``'s format is not kept anywhere).
    """

    __slots__ = ("_buf", "_ends", "checks")

    def __init__(self, checks: Callable[[int, Any], None] | None = None) -> None:
        self._buf = bytearray()
        self._ends = array("q")
        #: called as ``checks(k, job)`` with each job as it is read (see :func:`read_workload_json`)
        self.checks = checks

    def append(self, job: Any) -> None:
        """Add one job (a decoded JSON value)."""
        self._buf += marshal.dumps(job)
        self._ends.append(len(self._buf))

    def extend(self, jobs: list[Any]) -> None:
        """Add the jobs of ``jobs`` (decoded JSON values), in order."""
        buf, ends, dumps = self._buf, self._ends, marshal.dumps
        for job in jobs:
            buf += dumps(job)   # (in place: the same bytearray)
            ends.append(len(buf))

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, k: int) -> Any:
        end = self._ends[k]  # IndexError as a list
        start = self._ends[k - 1] if k % len(self._ends) else 0
        return marshal.loads(self._buf[start:end])

    def __iter__(self) -> Iterator[Any]:
        for k in range(len(self._ends)):
            yield self[k]

    def nbytes(self) -> int:
        """Bytes held (buffer and offsets)."""
        return len(self._buf) + 8 * len(self._ends)


class _Cut(Exception):
    """An item is not whole in the buffer (or is malformed: then more is read up to the end of
    the file, where the reader gives up)."""


class _Reader:
    """A text stream read in chunks, with a position in the chunk kept in memory."""

    def __init__(self, stream: io.TextIOBase) -> None:
        self._stream = stream
        self.buf = ""
        self.i = 0
        self.eof = False
        self._tail = ""   # the end of the last piece read (an escape cut between two pieces)

    def more(self, size: int = 0) -> None:
        """Read ``size`` (default :data:`CHUNK`) more characters (keeping what is not consumed),
        or give up at the end of the file."""
        if self.eof:
            raise _Fallback
        if self.i > len(self.buf) // 2:  # drop what was consumed
            self.buf = self.buf[self.i:]
            self.i = 0
        piece = self._stream.read(size or CHUNK)
        if not piece:
            self.eof = True
        # a surrogate escape (lone ones are not characters): read_json checks the strings
        seam = self._tail + piece[:5]
        if ("\\u" in piece and _SURROGATE_ESCAPE.search(piece)) or ("\\u" in seam and _SURROGATE_ESCAPE.search(seam)):
            raise _Fallback
        self._tail = piece[-5:]
        self.buf += piece

    def peek(self) -> str:
        """The next non-whitespace character ('' at the end of the file), not consumed."""
        while True:
            self.i = _WS.match(self.buf, self.i).end()  # type: ignore[union-attr]  # (_WS matches "")
            if self.i < len(self.buf):
                return self.buf[self.i]
            if self.eof:
                return ""
            self.more()

    def take(self, char: str) -> None:
        """Consume ``char``, the next non-whitespace character, or give up."""
        if self.peek() != char:
            raise _Fallback
        self.i += 1

    def value(self) -> Any:
        """Decode the next JSON value."""
        self.peek()
        size = CHUNK
        while True:
            try:
                obj, end = _DECODER.raw_decode(self.buf, self.i)
            except (ValueError, RecursionError):
                obj, end = None, -1
            # a value ending at the end of the buffer may be cut (a number): read on to be sure
            if 0 <= end < len(self.buf) or (end >= 0 and self.eof):
                self.i = end
                return obj
            self.more(size)
            size *= 2


def _top_object(r: _Reader, checks: Callable[[], Callable[[int, Any], None]] | None) -> Any:
    """The top-level value; when an object, its ``jobs`` array as :class:`PackedJobs`."""
    if r.peek() != "{":
        value = r.value()
        return value
    r.take("{")
    out: dict[str, Any] = {}
    if r.peek() == "}":
        r.take("}")
        return out
    while True:
        if r.peek() != '"':
            raise _Fallback
        key = r.value()
        if key in out:   # (read_json names it)
            raise _Fallback
        r.take(":")
        nxt = r.peek()
        if key == "jobs" and nxt == "[":
            out[key] = _packed_jobs(r, None if checks is None else checks())
        elif key == "profiles" and nxt == "{":
            out[key] = _members(r, share_delays=True)
        else:
            out[key] = r.value()
        sep = r.peek()
        r.take(sep)
        if sep == "}":
            return out
        if sep != ",":
            raise _Fallback


def _runs(r: _Reader, close: str) -> Iterator[tuple[list[str] | None, list[Any]]]:
    """The members (``close`` = ``}``) or elements (``]``) of the container whose opening
    character was just consumed, in runs of consecutive items, each as ``(keys or None,
    values)`` (two lists), the container's closing character consumed at the end. The whole
    items of a buffer are decoded together (:func:`_whole_items`), the others one at a time; an
    item cut by the end of the buffer is decoded again once more is read (a value followed by
    its separator in the buffer is whole: a number cannot be cut)."""
    if r.peek() == close:
        r.take(close)
        return
    after = _AFTER[close]
    member = close == "}"
    size = CHUNK
    failed, single_until = "", -1   # a batch failed in buffer ``failed``: one at a time up to there
    while True:
        buf = r.buf
        i = r.i = _WS.match(buf, r.i).end()  # type: ignore[union-attr]  # whitespace after a comma may start the next chunk
        if len(buf) - i >= BATCH_MIN and (buf is not failed or i > single_until):
            batch = _whole_items(buf, i, close)
            if isinstance(batch, int):
                failed, single_until = buf, len(buf) if batch < 0 else batch
            else:
                items, r.i = batch
                if member:
                    yield list(items), list(items.values())
                else:
                    yield None, items
                continue
        key = None
        try:
            if member:
                if buf[i] != '"':
                    raise _Cut
                key, i = _scanstring(buf, i + 1)
                colon = _COLON.match(buf, i)
                if colon is None:
                    raise _Cut
                i = colon.end()
            value, end = _SCAN(buf, i)
            sep = after.match(buf, end)
            if sep is None:
                raise _Cut
        except (_Cut, StopIteration, ValueError, IndexError, RecursionError):
            r.more(size)  # gives up (_Fallback) at the end of the file
            size *= 2
            continue
        size = CHUNK
        yield (None if key is None else [key]), [value]
        r.i = sep.end()
        if sep.group(1):
            return


def _whole_items(buf: str, i: int, close: str) -> tuple[Any, int] | int:
    """The items of an array (``close`` = ``]``) or object (``}``) that start at ``buf[i]`` and
    end before the last ``}`` followed by a comma in ``buf[i:i + BATCH_MAX]``, decoded in one call of the C
    scanner on that text in the container's brackets, as ``(list or dict, index after the
    comma)``; or the index of that ``}`` when the text is not a sequence of whole items (the
    ``}`` closes an object nested in the item cut by the end of the buffer, or is in a string:
    JSON text is read left to right in one way only, so the bracketed text is valid exactly when
    its items are whole, and they are then the values decoded one at a time), or -1 when there
    is no such ``}``. A key repeated in the object raises :class:`_Fallback`, as item by item."""
    cut = min(len(buf), i + BATCH_MAX)
    for _ in range(_CUT_TRIES):
        cut = buf.rfind("}", i, cut)
        if cut < 0:
            return -1
        comma = _COMMA.match(buf, cut + 1)
        if comma is not None:
            break
    else:
        return cut
    text = ("[" if close == "]" else "{") + buf[i:cut + 1] + close
    try:
        items, end = _SCAN(text, 0)
        if end != len(text):
            return cut
    except (StopIteration, ValueError, RecursionError):
        return cut
    return items, comma.end()


def _packed_jobs(r: _Reader, checks: Callable[[int, Any], None] | None) -> PackedJobs:
    jobs = PackedJobs(checks)
    r.take("[")
    many = getattr(checks, "many", None)   # (JobChecks: a run of jobs checked in one call)
    k = 0
    for _, values in _runs(r, "]"):
        jobs.extend(values)
        if many is not None:
            many(k, values)
        elif checks is not None:
            for n, job in enumerate(values, k):
                checks(n, job)
        k += len(values)
    return jobs


def _members(r: _Reader, share_delays: bool = False) -> dict[str, Any]:
    """An object read member by member (a repeated key sends the file to ``read_json``, which
    refuses it). ``share_delays``: equal ``delay`` profiles (see
    :func:`share_delays`) become one object as they are read, so that a million one-job
    profiles never exist as a million objects."""
    out: dict[str, Any] = {}
    canon: dict[tuple[type, Any], dict] = {}
    r.take("{")
    for keys, values in _runs(r, "}"):
        for key, value in zip(keys or (), values):
            if key in out:   # (read_json names it)
                raise _Fallback
            out[key] = _shared(value, canon) if share_delays else value
    return out


def _shared(p: Any, canon: dict[tuple[type, Any], dict]) -> Any:
    """``p``, or the equal ``delay`` profile met before (see :func:`share_delays`)."""
    if type(p) is dict and len(p) == 2 and p.get("type") == "delay" and type(p.get("delay")) in (int, float):
        d = p["delay"]
        return canon.setdefault((type(d), d), p)
    return p


def share_delays(profiles: dict[str, Any]) -> None:
    """Make the ``delay`` profiles of ``profiles`` that are equal (same delay, of the same JSON
    type, no other field) one shared object: a trace converted with one profile per job (a
    million ``{"type": "delay", "delay": d}``) then holds one object per distinct delay. The
    profile names and their contents are unchanged."""
    canon: dict[tuple[type, Any], dict] = {}
    for pname, p in profiles.items():
        profiles[pname] = _shared(p, canon)


def read_workload_json(path: str, error: type[Exception] = ValueError, what: str = "workload",
                       checks: Callable[[], Callable[[int, Any], None]] | None = None) -> Any:
    """Read the JSON file ``path`` (plain or gzip-compressed) as :func:`read_json` does, a
    top-level ``jobs`` array as a :class:`PackedJobs` (see the module docstring), the equal
    ``delay`` profiles of a top-level ``profiles`` object shared (:func:`share_delays`).

    ``checks``: called for each top-level ``jobs`` array read piecewise, it gives a function
    called as ``f(k, job)`` with each job ``#k`` as it is decoded (the job is decoded once to
    be checked and packed); that function becomes the :class:`PackedJobs`' ``checks``.
    A value read by ``read_json`` (a plain file of at most :data:`WHOLE_FILE_BYTES`, or the
    fallback) has a plain list of jobs, never checked here.

    Raises:
        error: one line naming the file and what is wrong (``read_json``'s message).
    """
    src = str(path)
    regular_file(src, what, error)
    try:
        with open(src, "rb") as raw:
            binary: Any = raw
            magic = raw.read(2)
            if magic != _GZIP_MAGIC and os.fstat(raw.fileno()).st_size <= WHOLE_FILE_BYTES:
                raise _Fallback  # small: parsed at once (WHOLE_FILE_BYTES)
            if magic == _GZIP_MAGIC:
                raw.seek(0)
                binary = gzip.GzipFile(fileobj=raw, mode="rb")
            else:
                raw.seek(0)
            with io.TextIOWrapper(binary, encoding="utf-8", newline="") as stream:
                r = _Reader(stream)
                value = _top_object(r, checks)
                if r.peek() != "":  # extra data after the value
                    raise _Fallback
                return value
    except (_Fallback, OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError, RecursionError):
        value = read_json(src, error, what, batsim_number)
        if isinstance(value, dict) and isinstance(value.get("profiles"), dict):
            share_delays(value["profiles"])
        return value
