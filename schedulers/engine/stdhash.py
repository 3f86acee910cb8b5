"""The order in which Batsim 4.2.1 visits a workload's profiles: a ``std::unordered_map``'s.

Batsim keeps a workload's profiles in a ``std::unordered_map<std::string, ProfilePtr>``
(``Profiles``, ``src/profiles.hpp``), filled in the order of the file's ``profiles`` object
(``Profiles::load_from_json``). Two things follow that map's iteration order: the ``profiles``
of SIMULATION_BEGINS (``append_simulation_begins``, ``src/protocol.cpp``), and which profiles
``Profiles::remove_unreferenced_profiles`` removes after loading (a profile reached only through
a ``composed`` profile no job uses survives when it is visited before that profile).

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
from typing import Iterable

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


def iteration_order(keys: Iterable[str]) -> list[str]:
    """The order in which a libstdc++ ``std::unordered_map<std::string, T>`` into which ``keys``
    (distinct) were inserted in this order iterates them (module docstring)."""
    keys = list(keys)
    if not keys:
        return []
    hashes = {k: string_hash(k) for k in keys}
    final = BUCKET_COUNTS[min(bisect.bisect_left(BUCKET_COUNTS, len(keys)), len(BUCKET_COUNTS) - 1)]
    # each bucket's keys, last inserted first; the buckets in the order they were first filled,
    # the last one first: kept reversed (appended), read back reversed
    groups: dict[int, list[str]] = {}
    count = 0
    for k in keys:
        if count == 0 or count + 1 > bucket_count:
            bucket_count = BUCKET_COUNTS[0] if count == 0 else BUCKET_COUNTS[BUCKET_COUNTS.index(bucket_count) + 1]
            if groups:   # the rehash: every node, in list order, into the new buckets
                listed = [x for g in reversed(groups.values()) for x in reversed(g)]
                groups = {}
                for x in listed:
                    groups.setdefault(hashes[x] % bucket_count, []).append(x)
        groups.setdefault(hashes[k] % bucket_count, []).append(k)
        count += 1
    assert bucket_count == final
    return [x for g in reversed(groups.values()) for x in reversed(g)]
