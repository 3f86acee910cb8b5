"""Numbers read as the C library reads them where SimGrid 3.32 reads a platform: ``strtod``
(decimal, hexadecimal ``0x1p4``, ``inf``, ``nan``, leading blanks) and SimGrid's
``xbt_str_parse_double`` (``src/xbt/xbt_str.cpp``: ``strtod`` that must read the whole text).
Shared by the engine's platform reader and the policies' power model (:mod:`.power`), so that
both read a ``wattage_per_state`` as SimGrid's host-energy plugin does."""

from __future__ import annotations

import math
import re
from fractions import Fraction

__all__ = ["strtod", "parse_double"]

_STRTOD = re.compile(r"[ \t\n\v\f\r]*([+-]?)(?:0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP]([+-]?[0-9]+))?"
                     r"|((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)|(inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?))",
                     re.IGNORECASE)
_TINY = 2.2250738585072014e-308   # the smallest normal double: glibc's strtod says ERANGE below it when inexact


def strtod(text: str) -> tuple[float, int, bool] | None:
    """``strtod(text)``: (value, characters read, ERANGE) or None when no number starts ``text``."""
    m = _STRTOD.match(text)
    if m is None:
        return None
    sign, hexa, hexp, dec, special = m.groups()
    erange = False
    if dec is not None:
        v = float(dec)
        if math.isinf(v):
            erange = True
        elif v < _TINY and re.search(r"[1-9]", dec.split("e")[0].split("E")[0]):
            erange = True   # underflow: a subnormal or zero result from non-zero digits is never exact here
    elif hexa is not None:
        digits = hexa.replace(".", "")
        frac = len(hexa) - hexa.index(".") - 1 if "." in hexa else 0
        mantissa = int(digits, 16)
        shift = int(hexp or 0) - 4 * frac
        if not mantissa:
            v = 0.0
        elif mantissa.bit_length() + shift > 1100:   # far beyond the largest double
            v, erange = math.inf, True
        elif mantissa.bit_length() + shift < -1100:   # far below the smallest one
            v, erange = 0.0, True
        else:
            exact = Fraction(mantissa) * Fraction(2) ** shift
            try:
                v = float(exact)
            except OverflowError:
                v, erange = math.inf, True
            else:
                erange = exact != 0 and v < _TINY and Fraction(v) != exact
    else:
        v = math.nan if special.lower().startswith("nan") else math.inf
    return (-v if sign == "-" else v), m.end(), erange


def parse_double(text: str) -> float | None:
    """``xbt_str_parse_double(text)`` (SimGrid 3.32, ``src/xbt/xbt_str.cpp``): the number
    ``strtod`` reads when it reads the whole of ``text`` (blanks may come before the number, not
    after it); None where SimGrid throws ``std::invalid_argument`` ("MESSAGE: TEXT"), e.g. for
    ``"100 "`` or ``"1_000"``. An overflow is an infinity there, not an error."""
    read = strtod(text)
    if read is None or read[1] != len(text):
        return None
    return read[0]
