"""Read one JSON input file (workload, policy options) strictly, with one-line errors.

Every way a file can fail to be read is reported as the caller's error class (``WorkloadError``
for workloads, ``ValueError`` for options) with a one-line message naming the file:

* cannot be read: missing, a folder, no permission (``OSError``);
* gzip-compressed (detected from its first two bytes, whatever its name) but truncated or corrupt;
* not UTF-8 text;
* malformed JSON (line and column), a UTF-8 byte-order mark at its start (RapidJSON, Batsim's
  parser, refuses it too), nested deeper than Python's parser can go
  (``RecursionError``, about 1,000 levels), a number with more digits than Python converts;
* the non-standard tokens ``NaN``, ``Infinity``, ``-Infinity`` (Python's ``json`` accepts them,
  they are not JSON) and numbers too large for a double (``1e400`` would become ``inf``; an
  integer of 309 digits, in the inputs that are not workloads: options, events, records);
* a key repeated in one object (``{"res": 1, "res": 2}``): Python's ``json`` keeps the last value
  without a word, Batsim's RapidJSON reads the first; the message names the object (its path,
  e.g. ``jobs[3] (job 7)``) and the key;
* a string holding a lone UTF-16 surrogate (``"\\ud800"`` without its pair): not a character,
  no UTF-8 output file can hold it;
* a file that is not a regular file (a FIFO, a device: reading it could block forever).

So a value read by :func:`read_json` is plain JSON, every float in it is finite, every string is
Unicode text and every object has the keys the file gives, once. :func:`loads_strict` and
:func:`unique_pairs` are the same rules for JSON text that is not a file (options, protocol
messages, events lines).
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import stat
import zlib
from os import PathLike
from typing import Any, Callable

from ..core.limits import NO_DOUBLE
from .batsim_numbers import batsim_float

__all__ = ["read_json", "is_gzip_file", "loads_strict", "batsim_number", "unique_pairs", "RepeatedKey", "json_problem",
           "lone_surrogate", "regular_file"]

_GZIP_MAGIC = b"\x1f\x8b"


class _NotJson(ValueError):
    pass


def _constant(token: str) -> Any:
    raise _NotJson(f"{token} is not a JSON value (numbers must be finite)")


def _float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise _NotJson(f"number {token[:30]} is too large for a double")
    return value


def _int(token: str) -> int:
    """``parse_int`` of the inputs that are not workloads: an integer a double cannot hold
    (2**1024 and more, 309 digits and more) is refused as ``1e400`` is (RapidJSON, Batsim's
    parser, refuses it too: "Number too big to be stored in double"); Python's ``int`` took it, and
    the first conversion to a float raised OverflowError. (Workloads, read with
    :func:`batsim_number`, are checked field by field by the engine instead: not a call per
    integer of a million-job file.)"""
    value = int(token)
    if len(token) > 308 and not -NO_DOUBLE < value < NO_DOUBLE:
        raise _NotJson(f"number {token[:30]}... ({len(token.lstrip('-')):,} digits) is too large for a double")
    return value


def batsim_number(token: str) -> float:
    """``parse_float`` for Batsim's inputs: the double Batsim reads (:mod:`.batsim_numbers`)."""
    if len(token) <= 16 and "e" not in token and "E" not in token:   # (batsim_float's fast path,
        return float(token)                                            # always finite: inlined)
    value = batsim_float(token)
    if not math.isfinite(value):
        raise _NotJson(f"number {token[:30]} is too large for a double")
    return value


class RepeatedKey(Exception):
    """Raised by :func:`unique_pairs` for an object holding a key twice. Not a ``ValueError``:
    parsers that take a ``ValueError`` for an item cut by the end of a buffer let it through."""


def unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for :mod:`json`: the object as a dict, or :class:`RepeatedKey` when
    a key appears twice in it (then :func:`json_problem` says where)."""
    d = dict(pairs)
    if len(d) != len(pairs):
        raise RepeatedKey
    return d


class _Marked(dict):
    """An object in which :data:`key` appeared twice (:func:`json_problem`)."""

    key: str = ""


def _marking_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                break
            seen.add(k)
        d = _Marked(d)
        d.key = k
    return d


#: A ``\\uD800``-``\\uDFFF`` escape in JSON text (a surrogate; lone ones are not characters).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")

#: Longest value quoted in a message (characters).
_QUOTED = 60


def _quoted(s: str) -> str:
    text = ascii(s)
    return text if len(text) <= _QUOTED else text[:_QUOTED] + f"... ({len(s):,} characters)"


def _path_text(path: list) -> str:
    """A JSON path as text: ``jobs[3]``, ``profiles.d``, ``profiles["a b"]``; [] is the top level."""
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        elif p.isidentifier() and p.isascii():
            out += f".{p}" if out else p
        else:
            out += f"[{_quoted(p)}]"
    return out or "the top-level value"


def _label(path: list, obj: Any) -> str:
    """``path`` as text, with the object's ``id`` when it has one (a job)."""
    text = _path_text(path)
    if isinstance(obj, dict) and isinstance(obj.get("id"), (str, int)) and not isinstance(obj.get("id"), bool):
        text += f" (id {_quoted(obj['id']) if isinstance(obj['id'], str) else obj['id']})"
    elif not path:
        text = "the top-level object"
    return text


def _find(value: Any, hit: Callable[[Any], bool], path: list) -> tuple[list, Any] | None:
    """The first (document order) value under ``value`` for which ``hit`` is true, with its path."""
    if hit(value):
        return path, value
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, (dict, list)) or hit(v):
                got = _find(v, hit, path + [k])
                if got is not None:
                    return got
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, (dict, list)) or hit(v):
                got = _find(v, hit, path + [i])
                if got is not None:
                    return got
    return None


def json_problem(text: str, parse_float: Callable[[str], float] = _float) -> str:
    """Where the JSON ``text``, which :func:`unique_pairs` refused, repeats a key: ``"key 'res'
    appears twice in jobs[0] (id 1)..."`` (the text is parsed again, once)."""
    try:
        value = json.loads(text, object_pairs_hook=_marking_pairs, parse_constant=_constant, parse_float=parse_float)
        found = _find(value, lambda v: type(v) is _Marked, [])
    except Exception:  # noqa: BLE001 -- (the caller's first parse already found the repeat)
        found = None
    if found is None:
        return "a key appears twice in one object; a key may appear once in a JSON object"
    path, obj = found
    return f"key {_quoted(obj.key)} appears twice in {_label(path, obj)}; a key may appear once in a JSON object"


def _has_lone_surrogate(v: Any) -> bool:
    if isinstance(v, str):
        return not v.isascii() and _SURROGATE.search(v) is not None
    if isinstance(v, dict):
        return any(not k.isascii() and _SURROGATE.search(k) is not None for k in v)
    return False


def lone_surrogate(value: Any, text: str) -> str | None:
    """What is wrong when the JSON ``text`` (parsed as ``value``) holds a lone UTF-16 surrogate
    (``"\\ud800"``, an escape without its pair: not a Unicode character; Python's ``json``
    accepts it, and the string can then be written to no UTF-8 file), else None. Fast when
    the text has no ``\\u`` escape."""
    if "\\u" not in text or _SURROGATE_ESCAPE.search(text) is None:
        return None
    got = _find(value, _has_lone_surrogate, [])
    if got is None:
        return None   # surrogate pairs only: real characters
    path, v = got
    if isinstance(v, str):
        return (f"{_path_text(path)}: the string {_quoted(v)} holds a lone UTF-16 surrogate (a \\uD800-\\uDFFF "
                "escape without its pair), which is not a character")
    key = next(k for k in v if _SURROGATE.search(k))
    return (f"{_label(path, v)}: the key {_quoted(key)} holds a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape "
            "without its pair), which is not a character")


def is_gzip_file(path: str | PathLike[str]) -> bool:
    """Whether ``path`` is a regular file that starts with gzip's magic bytes (the readers here
    decompress such a file whatever its name; real Batsim 4.2.1 reads plain JSON only). False
    for a file that cannot be read or is not a regular one (a FIFO would block the read): the
    reader then refuses it in its own words."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as f:
            return f.read(2) == _GZIP_MAGIC
    except OSError:
        return False


def _a(what: str) -> str:
    """``what`` after its indefinite article: "a workload", "an options file"."""
    return ("an " if what[:1] in ("a", "e", "i", "o", "u") else "a ") + what


def regular_file(path: str | PathLike[str], what: str, error: type[Exception] = ValueError) -> None:
    """Refuse ``path`` when it exists and is not a regular file: a FIFO or a device would block the
    read (forever, with no writer) or never end; a folder is named as such. A missing file is left
    to the caller's own message.

    Raises:
        error: one line naming the file and what it is.
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise error(f"{path}: is a folder, not {_a(what)}")
    kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else
            "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a special file")
    raise error(f"{path}: is {kind}, not a regular file (reading it could wait forever); give the {what} "
                "as a file")


def loads_strict(text: str, source: str, error: type[Exception] = ValueError,
                 parse_float: Callable[[str], float] = _float) -> Any:
    """Parse JSON ``text`` strictly (see the module docstring); ``source`` names it in errors.
    ``parse_float``: how numbers with a fraction or an exponent are read (default: the nearest
    double; :func:`batsim_number`: as Batsim reads its inputs).

    Raises:
        error: one line, ``"<source>: ..."``.
    """
    try:
        value = json.loads(text, object_pairs_hook=unique_pairs, parse_constant=_constant, parse_float=parse_float,
                           parse_int=None if parse_float is batsim_number else _int)
    except RepeatedKey:
        raise error(f"{source}: {json_problem(text, parse_float)}") from None
    except json.JSONDecodeError as exc:
        if text.startswith("\ufeff"):   # (Python's words say "decode using utf-8-sig": for programmers)
            raise error(f"{source}: the file starts with a UTF-8 byte-order mark (BOM): JSON is read without one, "
                        "as real Batsim 4.2.1's parser (RapidJSON) reads it; save the file as UTF-8 without BOM") from None
        raise error(f"{source}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise error(f"{source}: JSON nested too deeply to read (Python's parser stops at about 1,000 "
                    "levels)") from None
    except ValueError as exc:  # _NotJson, or an integer with too many digits for int()
        raise error(f"{source}: not valid JSON: {exc}") from None
    problem = lone_surrogate(value, text)
    if problem is not None:
        raise error(f"{source}: {problem}")
    return value


def read_json(path: str | PathLike[str], error: type[Exception] = ValueError, what: str = "file",
              parse_float: Callable[[str], float] = _float) -> Any:
    """Read and parse the JSON file ``path`` (plain or gzip-compressed) strictly.

    Args:
        path: the file.
        error: the exception class raised on failure (e.g. ``WorkloadError``).
        what: what the file is, for messages (``"workload"``, ``"options file"``).
        parse_float: as in :func:`loads_strict`.

    Raises:
        error: one line naming the file and what is wrong.
    """
    src = str(path)
    regular_file(src, what, error)
    try:
        with open(src, "rb") as stream:
            raw = stream.read()
        if raw[:2] == _GZIP_MAGIC:
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8")
    except IsADirectoryError:
        raise error(f"{src}: is a folder, not {_a(what)}") from None
    except FileNotFoundError:
        raise error(f"{src}: no such {what}") from None
    except OSError as exc:  # includes gzip.BadGzipFile
        raise error(f"{src}: cannot read {what}: {exc.strerror or exc}") from None
    except (EOFError, zlib.error) as exc:
        raise error(f"{src}: truncated or corrupt gzip data ({exc})") from None
    except UnicodeDecodeError as exc:
        raise error(f"{src}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None
    del raw  # the bytes are not needed while parsing (a 130 MB trace: 130 MB less at the peak)
    return loads_strict(text, src, error, parse_float)
