"""The order of a libstdc++ ``std::unordered_map``: Batsim 4.2.1's profiles and properties.

Batsim keeps a workload's profiles in a ``std::unordered_map<std::string, ProfilePtr>``
(``Profiles``, ``src/profiles.hpp``), filled in the order of the file's ``profiles`` object
(``Profiles::load_from_json``). Two things follow that map's iteration order: the ``profiles``
of SIMULATION_BEGINS (``append_simulation_begins``, ``src/protocol.cpp``), and which profiles
``Profiles::remove_unreferenced_profiles`` removes after loading (a profile reached only through
a ``composed`` profile no job uses survives when it is visited before that profile).

Machines' ``properties`` and ``zone_properties`` are such maps too, listed in SIMULATION_BEGINS
in their order (:func:`.platform._simgrid_order`).

Batsim 4.2.1 is built with GCC's libstdc++ (x86-64), whose map this module plays:

- a key's hash is ``std::hash<std::string>``: ``std::_Hash_bytes`` over its UTF-8 bytes with
  seed ``0xc70f6907``, the 64-bit MurmurHash2 variant (8-byte little-endian words multiplied by
  ``0xc6a4a7935bd1e995``, mixed by ``x ^ (x >> 47)``; the last 1-7 bytes read as one
  little-endian integer); its bucket is the hash modulo the bucket count;
- the bucket count grows as the prime rehash policy (maximum load factor 1) grows it when keys
  are inserted one at a time: 13 at the first key (its "initial bucket size of 11"), then, when a
  key would exceed the count, the first prime of libstdc++'s ``__prime_list`` at least twice the
  count (:data:`BUCKET_COUNTS`);
- the nodes form one list, each bucket's nodes together: a key whose bucket is empty goes first
  in the list, any other first among its bucket's nodes; a rehash moves the nodes one by one, in
  list order, by the same rule.

Checked on real Batsim 4.2.1: the order of SIMULATION_BEGINS's ``profiles`` for workloads of 1 to
12,000 profiles of random names (``tests/fixtures/batsim_profile_order``).
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    import numpy as np

_M64 = (1 << 64) - 1
_MUL = 0xc6a4a7935bd1e995
_SEED = 0xc70f6907

#: The bucket counts of a libstdc++ ``unordered_map`` filled one key at a time (GCC 12's
#: ``std::__detail::__prime_list``, read from Debian's ``/lib/x86_64-linux-gnu/libstdc++.so.6``,
#: which Batsim 4.2.1 runs with: ``readelf -Ws`` gives the symbol ``_ZNSt8__detail12__prime_listE``,
#: 305 ``unsigned long``s in ``.rodata``; each count here is the first of them at least twice the
#: one before). A map of n keys has the first count >= n (1 bucket when empty).
BUCKET_COUNTS = (13, 29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753, 42043, 85229, 172933, 351061,
                 712697, 1447153, 2938679, 5967347, 12117689, 24607243, 49969847, 101473717, 206062531,
                 418451333, 849749479, 1725587117, 3504151727, 8589934583)


def _grown(count: int) -> int:
    """The bucket count after ``count`` when a key would exceed it (:data:`BUCKET_COUNTS`)."""
    return BUCKET_COUNTS[bisect.bisect_left(BUCKET_COUNTS, 2 * count)]


def string_hash(key: str) -> int:
    """``std::hash<std::string>`` of libstdc++ (x86-64) on ``key``'s UTF-8 bytes (module docstring)."""
    data = key.encode("utf-8", "surrogatepass")
    n = len(data)
    h = (_SEED ^ (n * _MUL)) & _M64
    whole = n & ~7
    for i in range(0, whole, 8):
        k = (int.from_bytes(data[i:i + 8], "little") * _MUL) & _M64
        h ^= ((k ^ (k >> 47)) * _MUL) & _M64
        h = (h * _MUL) & _M64
    if n & 7:
        h ^= int.from_bytes(data[whole:], "little")
        h = (h * _MUL) & _M64
    h = ((h ^ (h >> 47)) * _MUL) & _M64
    return h ^ (h >> 47)


class UnorderedKeys:
    """The keys of a libstdc++ ``std::unordered_map<std::string, T>`` in its iteration order, as
    keys are inserted (module docstring): :meth:`insert` a key (nothing when present: an
    assignment keeps its place), :meth:`copy` (a copy keeps the order and the bucket count),
    :meth:`order`."""

    __slots__ = ("_groups", "_hashes", "_buckets", "_count")

    def __init__(self, keys: Iterable[str] = ()) -> None:
        # each bucket's keys, last inserted first, and the buckets in the order they were first
        # filled, last first: both kept reversed (appended), read back reversed
        self._groups: dict[int, list[str]] = {}
        self._hashes: dict[str, int] = {}
        self._buckets = 1   # (an empty map's single bucket)
        self._count = 0
        for k in keys:
            self.insert(k)

    def insert(self, key: str) -> None:
        if key in self._hashes:
            return
        h = self._hashes[key] = string_hash(key)
        if self._count == 0 or self._count + 1 > self._buckets:
            self._buckets = BUCKET_COUNTS[0] if self._count == 0 else _grown(self._buckets)
            if self._groups:   # the rehash: every node, in list order, into the new buckets
                listed = self.order()
                self._groups = {}
                for x in listed:
                    self._groups.setdefault(self._hashes[x] % self._buckets, []).append(x)
        self._groups.setdefault(h % self._buckets, []).append(key)
        self._count += 1

    def copy(self) -> "UnorderedKeys":
        other = UnorderedKeys()
        other._groups = {b: list(g) for b, g in self._groups.items()}
        other._hashes = dict(self._hashes)
        other._buckets, other._count = self._buckets, self._count
        return other

    def order(self) -> list[str]:
        return [x for g in reversed(self._groups.values()) for x in reversed(g)]


#: :func:`iteration_order` plays maps of more keys than this with NumPy (:func:`_order_numpy`):
#: about 1 s for a million keys, against about 10 s one key at a time.
NUMPY_KEYS = 20_000


def iteration_order(keys: Iterable[str]) -> list[str]:
    """The order in which a libstdc++ ``std::unordered_map<std::string, T>`` into which ``keys``
    were inserted in this order iterates them (module docstring); a key given twice keeps its
    first place."""
    keys = list(dict.fromkeys(keys))
    if len(keys) > NUMPY_KEYS:
        return _order_numpy(keys)
    return UnorderedKeys(keys).order()


def _hashes_numpy(data: list[bytes]) -> "np.ndarray":
    """:func:`string_hash` of each of ``data`` (UTF-8 bytes), as NumPy ``uint64`` arithmetic
    (wrapping, as the C++ ``size_t`` products): the 8-byte words of all keys a column at a time."""
    import numpy as np

    lens = np.fromiter(map(len, data), dtype=np.int64, count=len(data))
    width = max(8, (int(lens.max()) + 7) // 8 * 8)
    buf = np.zeros((len(data), width), dtype=np.uint8)
    starts = np.zeros(len(data), dtype=np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    flat = np.frombuffer(b"".join(data), dtype=np.uint8)
    buf[np.repeat(np.arange(len(data)), lens), np.arange(len(flat)) - np.repeat(starts, lens)] = flat
    words = buf.view("<u8")   # (keys, width / 8), little-endian words
    mul, s47 = np.uint64(_MUL), np.uint64(47)
    whole = lens // 8
    with np.errstate(over="ignore"):
        h = np.uint64(_SEED) ^ (lens.astype(np.uint64) * mul)
        for w in range(words.shape[1]):
            m = whole > w
            if not m.any():
                break
            k = words[m, w] * mul
            h[m] = (h[m] ^ ((k ^ (k >> s47)) * mul)) * mul
        tail = np.nonzero(lens & 7)[0]
        if len(tail):   # the last 1-7 bytes as one little-endian integer (the rest of the word is 0)
            h[tail] = (h[tail] ^ words[tail, whole[tail]]) * mul
        h = (h ^ (h >> s47)) * mul
        return h ^ (h >> s47)


def _order_numpy(keys: list[str]) -> list[str]:
    """:func:`iteration_order` of distinct ``keys`` with NumPy. Between two rehashes a key whose
    bucket is empty goes first in the list, any other first among its bucket's nodes; a rehash
    moves the nodes in list order by the same rule. So each bucket count's stage, applied to the
    list so far followed by the keys inserted under that count, sorts them by the first position of
    their bucket in that sequence, then by position, both decreasing."""
    import numpy as np

    h = _hashes_numpy([k.encode("utf-8", "surrogatepass") for k in keys])
    seq = np.empty(0, dtype=np.int64)
    start, count = 0, BUCKET_COUNTS[0]
    while True:
        end = min(len(keys), count)   # the key of index count makes count + 1 > count: a rehash
        seq = np.concatenate([seq, np.arange(start, end, dtype=np.int64)])
        n = len(seq)
        bucket = h[seq] % np.uint64(count)
        by = np.argsort(bucket, kind="stable")
        sb = bucket[by]
        first = np.empty(n, dtype=bool)
        first[0] = True
        np.not_equal(sb[1:], sb[:-1], out=first[1:])
        firstpos = np.empty(n, dtype=np.int64)   # each key's bucket's first position in seq
        firstpos[by] = by[np.maximum.accumulate(np.where(first, np.arange(n), 0))]
        seq = seq[np.argsort(-(firstpos * n + np.arange(n)))]
        if end >= len(keys):
            return [keys[i] for i in seq.tolist()]
        start, count = end, _grown(count)
