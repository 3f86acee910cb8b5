"""Numbers as Batsim reads them: RapidJSON's default (normal-precision) parse of a JSON number.

Batsim 4.2.1 reads its workloads and the scheduler's replies with RapidJSON (``Document::Parse``
with the default flags, so without ``kParseFullPrecisionFlag``). RapidJSON 1.1.0 then reads a
number with a fraction or an exponent as follows (``GenericReader::ParseNumber``,
``include/rapidjson/reader.h``; ``internal::StrtodNormalPrecision`` and ``FastPath``,
``include/rapidjson/internal/strtod.h``):

1. the integer digits into an unsigned 32-bit, then 64-bit integer while they fit (past 2**64 - 1
   the digits go on into a double, ``d = d * 10 + digit``);
2. the fraction digits on into the 64-bit integer while it is at most 2**53 - 1 (each a ``--expFrac``),
   then the integer to a double, then further digits into the double (``d = d * 10.0 + digit``)
   while fewer than 17 significant digits were taken (later digits are skipped);
3. the exponent ``e``; ``p = e + expFrac``; the value is ``d / 10**-p`` (``p < 0``) or
   ``d * 10**p``, with ``10**k`` the double nearest to it (for ``p < -308``: divided by
   ``1e308`` first), each operation rounded once.

So a literal of up to 15 significant digits without exponent is read exactly as by a correctly
rounded parser (one exact integer, one exact power of ten, one division), but a 17-digit one
(what Python's ``repr`` writes for most doubles) may come out one unit in the last place off:
``108.79494227531521`` (a ``subtime`` of Batsim's ``example_workload_hpc_seed1_jobs250.json``)
is ``10879494227531521`` rounded to a double, ``10879494227531520``, divided by ``1e14``:
108.7949422753152, one ulp below the correctly rounded 108.79494227531521. Recorded on real
Batsim 4.2.1 (SimGrid's clock logged at 17 decimals, ``--sg-log``): the job submitter wakes at
108.79494227531519357, the double below. The engine reads the workload's numbers and the
scheduler's replies this way (:func:`batsim_float`), so that its clock is SimGrid's to the bit
(:mod:`schedulers.engine.lazysteps`).
"""

from __future__ import annotations

__all__ = ["rapidjson_double", "batsim_float", "batsim_float_of"]

#: ``internal::Pow10``: the double nearest to 10**k, k = 0..308 (C literals 1e0 ... 1e308).
_POW10 = [float(f"1e{k}") for k in range(309)]
_DBL_MAX = 1.7976931348623157e308
_2_53_MINUS_1 = (1 << 53) - 1


def _fast_path(d: float, p: int) -> float:
    if p < -308:
        return 0.0
    if p >= 0:
        return d * _POW10[p]
    return d / _POW10[-p]


def rapidjson_double(token: str) -> float:
    """The double RapidJSON 1.1.0 reads for the JSON number ``token`` (default flags).

    Args:
        token: a valid JSON number (``-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][-+]?[0-9]+)?``).

    Returns:
        The value, as ``Value::GetDouble`` gives it (module docstring); may be ``inf`` where
        RapidJSON reports a number too big (the caller checks).
    """
    s = token
    n = len(s)
    pos = 0
    minus = s[0] == "-"
    if minus:
        pos = 1
    i = 0
    i64 = 0
    use64 = False
    use_double = False
    d = 0.0
    sig = 0
    if s[pos] == "0":
        pos += 1
    else:
        i = ord(s[pos]) - 48
        pos += 1
        lim, last = (214748364, "8") if minus else (429496729, "5")
        while pos < n and "0" <= s[pos] <= "9":
            if i >= lim and (i != lim or s[pos] > last):
                i64, use64 = i, True
                break
            i = i * 10 + ord(s[pos]) - 48
            sig += 1
            pos += 1
    if use64:
        lim, last = (0x0CCCCCCCCCCCCCCC, "8") if minus else (0x1999999999999999, "5")
        while pos < n and "0" <= s[pos] <= "9":
            if i64 >= lim and (i64 != lim or s[pos] > last):
                d, use_double = float(i64), True
                break
            i64 = i64 * 10 + ord(s[pos]) - 48
            sig += 1
            pos += 1
    if use_double:  # a big integer part goes on in the double
        while pos < n and "0" <= s[pos] <= "9":
            d = d * 10 + (ord(s[pos]) - 48)
            pos += 1
    exp_frac = 0
    if pos < n and s[pos] == ".":
        pos += 1
        if not use_double:
            if not use64:
                i64 = i
            while pos < n and "0" <= s[pos] <= "9":
                if i64 > _2_53_MINUS_1:
                    break
                i64 = i64 * 10 + ord(s[pos]) - 48
                exp_frac -= 1
                if i64 != 0:
                    sig += 1
                pos += 1
            d = float(i64)
            use_double = True
        while pos < n and "0" <= s[pos] <= "9":
            if sig < 17:
                d = d * 10.0 + (ord(s[pos]) - 48)
                exp_frac -= 1
                if d > 0.0:
                    sig += 1
            pos += 1
    exp = 0
    if pos < n and s[pos] in "eE":
        if not use_double:
            d = float(i64 if use64 else i)
            use_double = True
        pos += 1
        exp_minus = False
        if s[pos] == "+":
            pos += 1
        elif s[pos] == "-":
            exp_minus = True
            pos += 1
        exp = ord(s[pos]) - 48
        pos += 1
        if exp_minus:
            while pos < n and "0" <= s[pos] <= "9":
                exp = exp * 10 + ord(s[pos]) - 48
                pos += 1
                if exp >= 214748364:  # the rest of the exponent is consumed, not added
                    break
        else:
            max_exp = 308 - exp_frac
            while pos < n and "0" <= s[pos] <= "9":
                exp = exp * 10 + ord(s[pos]) - 48
                pos += 1
                if exp > max_exp:
                    return float("-inf") if minus else float("inf")   # kParseErrorNumberTooBig
        if exp_minus:
            exp = -exp
    if use_double:
        p = exp + exp_frac
        if p < -308:
            d = _fast_path(_fast_path(d, -308), p + 308)
        else:
            d = _fast_path(d, p)
        if d > _DBL_MAX:
            d = float("inf")
        return -d if minus else d
    v = float(i64 if use64 else i)
    return -v if minus else v


def batsim_float(token: str) -> float:
    """A JSON number with a fraction or an exponent as Batsim reads it (:func:`rapidjson_double`);
    ``json``'s ``parse_float`` hook. Literals of at most 16 characters without exponent (15
    digits) are read exactly alike by both parsers and take the fast path."""
    if len(token) <= 16 and "e" not in token and "E" not in token:
        return float(token)
    return rapidjson_double(token)


def batsim_float_of(x: float) -> float:
    """The double Batsim reads for ``x`` written by Python's ``json`` (``repr``, the shortest
    string that reads back as ``x``): how a value a scheduler computes reaches Batsim."""
    return batsim_float(repr(float(x)))
