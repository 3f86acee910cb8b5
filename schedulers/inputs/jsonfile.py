"""Read one JSON input file (workload, policy options) strictly, with one-line errors.

Every way a file can fail to be read is reported as the caller's error class (``WorkloadError``
for workloads, ``ValueError`` for options) with a one-line message naming the file:

* cannot be read: missing, a folder, no permission (``OSError``);
* gzip-compressed (detected from its first two bytes, whatever its name) but truncated or corrupt;
* not UTF-8 text;
* malformed JSON (line and column), nested deeper than Python's parser can go
  (``RecursionError``, about 1,000 levels), a number with more digits than Python converts;
* the non-standard tokens ``NaN``, ``Infinity``, ``-Infinity`` (Python's ``json`` accepts them,
  they are not JSON) and numbers too large for a double (``1e400`` would become ``inf``).

So a value read by :func:`read_json` is plain JSON and every float in it is finite.
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from os import PathLike
from typing import Any, Callable

from .batsim_numbers import batsim_float

__all__ = ["read_json", "loads_strict", "batsim_number"]

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


def batsim_number(token: str) -> float:
    """``parse_float`` for Batsim's inputs: the double Batsim reads (:mod:`.batsim_numbers`)."""
    if len(token) <= 16 and "e" not in token and "E" not in token:   # (batsim_float's fast path,
        return float(token)                                            # always finite: inlined)
    value = batsim_float(token)
    if not math.isfinite(value):
        raise _NotJson(f"number {token[:30]} is too large for a double")
    return value


def loads_strict(text: str, source: str, error: type[Exception] = ValueError,
                 parse_float: Callable[[str], float] = _float) -> Any:
    """Parse JSON ``text`` strictly (see the module docstring); ``source`` names it in errors.
    ``parse_float``: how numbers with a fraction or an exponent are read (default: the nearest
    double; :func:`batsim_number`: as Batsim reads its inputs).

    Raises:
        error: one line, ``"<source>: ..."``.
    """
    try:
        return json.loads(text, parse_constant=_constant, parse_float=parse_float)
    except json.JSONDecodeError as exc:
        raise error(f"{source}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise error(f"{source}: JSON nested too deeply to read (Python's parser stops at about 1,000 "
                    "levels)") from None
    except ValueError as exc:  # _NotJson, or an integer with too many digits for int()
        raise error(f"{source}: not valid JSON: {exc}") from None


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
    try:
        with open(src, "rb") as stream:
            raw = stream.read()
        if raw[:2] == _GZIP_MAGIC:
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8")
    except IsADirectoryError:
        raise error(f"{src}: is a folder, not a {what}") from None
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
