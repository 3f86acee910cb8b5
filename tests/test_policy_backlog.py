"""conservative, buc-easy and green-easy make exactly the decisions they made before their
backlog speed-ups (the conservative walk that stops when no later job can start now, BUC's
queue kept by groups, green's gap test searched through the waiting index).

``tests/fixtures/policy_backlog_digests.json`` holds, per case, the SHA-256 of the sequence of
decisions ``(job id, start, hosts)`` in completion order that the policy made on a seeded
backlogged workload (:func:`tests.test_easy_backlog.backlog_workload`: multi-host jobs at twice
the capacity, jobs without walltime, jobs killed at their walltime, simultaneous submissions),
recorded with the code as it was *before* those changes (commit c6f9fef). Re-record only for a
deliberate change of a schedule: ``PYTHONPATH=. python tests/test_policy_backlog.py --record``.
A mismatch means a decision changed.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_easy_backlog import _platform, backlog_workload  # noqa: E402

from schedulers.conservative import Conservative  # noqa: E402
from schedulers.core.backfilling import lowest_bits  # noqa: E402
from schedulers.engine import simulate  # noqa: E402
from schedulers.registry import get_policy  # noqa: E402

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "policy_backlog_digests.json"


class HighestFirstConservative(Conservative):
    """Conservative with a host choice of its own (highest ids first): reservations and starts
    go through ``select_hosts``."""

    name = "conservative-high"

    def select_hosts(self, candidates, job):
        out = 0
        for _ in range(job.res):
            top = 1 << (candidates.bit_length() - 1)
            out |= top
            candidates ^= top
        return out


class OddFirstConservative(Conservative):
    """Conservative preferring odd host ids (a choice that is not a prefix of the ids)."""

    name = "conservative-odd"

    def select_hosts(self, candidates, job):
        odd = candidates & int("10" * 64, 2)
        n = odd.bit_count()
        if n >= job.res:
            return lowest_bits(odd, job.res)
        return odd | lowest_bits(candidates & ~odd, job.res - n)


def _with_cpu_load(wl: dict, seed: int) -> dict:
    rng = random.Random(seed)
    for j in wl["jobs"]:
        j["cpu_load"] = rng.choice([0, 25, 50, 100])
    return wl


def _policy(name: str, options):
    if name == "conservative-high":
        return HighestFirstConservative(options)
    if name == "conservative-odd":
        return OddFirstConservative(options)
    return get_policy(name, options)


#: (case, policy, options, (jobs, seed, hosts, max_res, share without walltime), sharing, cpu_load)
CASES = [
    ("conservative-64", "conservative", None, (700, 21, 64, 16, 0.02), False, False),
    ("conservative-16", "conservative", None, (600, 22, 16, 8, 0.02), False, False),
    ("conservative-nowall", "conservative", None, (400, 23, 32, 8, 0.4), False, False),
    ("conservative-128", "conservative", None, (500, 24, 128, 32, 0.02), False, False),
    ("conservative-high", "conservative-high", None, (500, 25, 32, 12, 0.05), False, False),
    ("conservative-odd", "conservative-odd", None, (500, 26, 32, 12, 0.05), False, False),
    ("conservative-r5", "conservative", {"reservations": 5}, (800, 27, 32, 12, 0.05), False, False),
    ("buc-easy-64", "buc-easy", None, (2000, 31, 64, 16, 0.02), False, False),
    ("buc-easy-kp1440", "buc-easy", {"kp": 1440}, (1500, 32, 32, 12, 0.05), False, False),
    ("buc-easy-linear", "buc-easy", {"rule": "linear", "work_ref": 20000}, (1500, 33, 16, 8, 0.1), False,
     False),
    ("buc-easy-nowall", "buc-easy", None, (800, 34, 32, 8, 0.4), False, False),
    ("buc-easy-kp0", "buc-easy", {"kp": 0}, (1000, 35, 32, 8, 0.05), False, False),
    ("green-easy-0", "green-easy", {"delta": 0}, (2000, 41, 64, 16, 0.02), False, False),
    ("green-easy-20", "green-easy", {"delta": 20}, (2000, 42, 64, 16, 0.02), True, False),
    ("green-easy-60", "green-easy", {"delta": 60}, (1500, 43, 16, 8, 0.1), True, False),
    ("green-easy-pergap", "green-easy", {"delta": 40, "per_gap": True, "delta_min": 5},
     (1500, 44, 32, 12, 0.05), True, True),
    ("green-easy-nowall", "green-easy", {"delta": 30}, (800, 45, 32, 8, 0.4), True, False),
]


def decisions_digest(folder: Path, policy, jobs: int, seed: int, hosts: int, max_res: int,
                     no_walltime: float, sharing: bool, cpu_load: bool) -> tuple[str, int]:
    """SHA-256 (hex) of every job's ``(id, start, hosts)`` in completion order, and the number of
    jobs that ran."""
    wl = backlog_workload(jobs, seed, hosts, max_res, no_walltime=no_walltime)
    if cpu_load:
        wl = _with_cpu_load(wl, seed)
    res = simulate(_platform(folder, hosts), [wl], policy, compute_sharing=sharing)
    h = hashlib.sha256()
    ran = 0
    for j in res.jobs:
        h.update(f"{j.id};{j.start!r};{j.alloc}\n".encode())
        ran += j.start >= 0
    return h.hexdigest(), ran


@pytest.mark.parametrize("case, policy, options, wl, sharing, cpu_load", CASES, ids=[c[0] for c in CASES])
def test_decisions_are_the_recorded_ones(tmp_path, case, policy, options, wl, sharing, cpu_load):
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))[case]
    digest, ran = decisions_digest(tmp_path, _policy(policy, options), *wl, sharing, cpu_load)
    assert ran == wl[0]  # every job ran
    assert digest == recorded


if __name__ == "__main__":
    if sys.argv[1:2] == ["--record"]:
        import tempfile
        import time
        only = set(sys.argv[2:])
        out = json.loads(FIXTURE.read_text(encoding="utf-8")) if FIXTURE.exists() else {}
        with tempfile.TemporaryDirectory() as tmp:
            for case, policy, options, wl, sharing, cpu_load in CASES:
                if only and case not in only:
                    continue
                t = time.perf_counter()
                out[case], ran = decisions_digest(Path(tmp), _policy(policy, options), *wl, sharing, cpu_load)
                print(f"{case}: {out[case][:16]} ({ran} jobs ran, {time.perf_counter() - t:.1f} s)", flush=True)
        FIXTURE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {FIXTURE}")
