"""Batsim 4.2.1 visits a workload's profiles in its ``std::unordered_map``'s order: the order of
SIMULATION_BEGINS's ``profiles``, and which profiles reached only through unused ``composed``
profiles survive the load (``fixtures/batsim_profile_order``, recorded on real Batsim 4.2.1;
:mod:`schedulers.engine.stdhash`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from schedulers.engine import build_engine
from schedulers.engine.stdhash import BUCKET_COUNTS, iteration_order, string_hash
from schedulers.engine.workload import unreferenced_profiles

sys.path.insert(0, str(Path(__file__).parent))
from scripted_scheduler import ScriptPort  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "batsim_profile_order"
FILES = ("small_c.json", "small_bm.json", "big.json")


def _recorded() -> list[dict]:
    return [json.loads(x) for x in (FIX / "messages.jsonl").read_text().splitlines()]


def test_simulation_begins_lists_the_profiles_in_batsims_order():
    port = ScriptPort(json.loads((FIX / "script.json").read_text()))
    build_engine(FIX / "platform.xml", [str(FIX / f) for f in FILES], actor_model=True).run(port)
    recorded = _recorded()
    mine, theirs = port.messages[0]["events"][0]["data"], recorded[0]["events"][0]["data"]
    assert json.dumps(mine["profiles"]) == json.dumps(theirs["profiles"])   # (order included)
    assert list(theirs["profiles"]["w0"]) == ["m", "b", "c", "a"]
    assert len(theirs["profiles"]["w2"]) == 154   # of 400, 78 jobs
    assert port.messages[1:] == recorded[1:]


def test_a_profile_reached_only_through_an_unused_composed_profile_survives_if_visited_first():
    small = json.loads((FIX / "small_c.json").read_text())["profiles"]
    order = iteration_order(small)
    kept = [n for n in order if n in ("m", "b", "c", "a")]
    assert kept == list(_recorded()[0]["events"][0]["data"]["profiles"]["w0"])   # Batsim's order
    # the map visits m before u, the unused composed profile that holds it: m survives (Batsim
    # lists it), u and z (held by nothing) are removed
    assert order.index("m") < order.index("u")
    assert unreferenced_profiles(small, {"c"}) == {"u", "z"}
    big = json.loads((FIX / "big.json").read_text())
    used = {j["profile"] for j in big["jobs"]}
    kept_big = set(big["profiles"]) - unreferenced_profiles(big["profiles"], used)
    assert kept_big == set(_recorded()[0]["events"][0]["data"]["profiles"]["w2"])


def test_string_hash_and_bucket_counts_as_libstdcxx():
    # std::hash<std::string>{}(k) and an unordered_map's bucket_count() as keys are inserted,
    # printed by a program built with Debian's g++ 12 (the fixture's README)
    assert [string_hash(k) for k in ("", "a", "aaaaaaaa", "p12", "leaf_3beac0", "\u00e9")] == [
        6142509188972423790, 4993892634952068459, 5333553475697136361, 17511453167852994425,
        5135180357016274701, 15791941521038362485]
    assert BUCKET_COUNTS[:11] == (13, 29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753)
    assert iteration_order([]) == [] and iteration_order(["x"]) == ["x"]


def test_large_maps_are_ordered_with_numpy_as_one_key_at_a_time():
    # Beyond NUMPY_KEYS keys the order is computed with NumPy, stage by stage of the bucket count;
    # the one-key-at-a-time model (checked on real Batsim above) must give the same list, on keys
    # of every length class (0-40 bytes, multi-byte UTF-8 characters) and across several rehashes.
    import random
    import string

    from schedulers.engine import stdhash

    rng = random.Random(7)
    letters = string.ascii_letters + "0123456789_\u00e9\u20ac"
    keys = list(dict.fromkeys("".join(rng.choice(letters) for _ in range(rng.randint(0, 40)))
                              for _ in range(stdhash.NUMPY_KEYS + 5_000)))
    assert len(keys) > stdhash.NUMPY_KEYS
    assert stdhash.iteration_order(keys) == stdhash.UnorderedKeys(keys).order()
    assert [int(x) for x in stdhash._hashes_numpy([k.encode() for k in keys[:500]])] == \
        [string_hash(k) for k in keys[:500]]
