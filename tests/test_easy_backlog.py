"""EASY and its subclasses make exactly the decisions they made before the backlog speed-up.

Two checks, on seeded backlogged workloads of multi-host jobs (submitted work about twice what the
hosts can do, so hundreds of jobs wait behind the head at every pass):

* **Recorded outputs.** ``tests/fixtures/easy_backlog_digests.json`` holds the SHA-256 of every
  output file (``out_schedule.csv`` without its two wall-clock columns) that EASY, green-easy,
  buc-easy, conservative and HEFT wrote on these workloads with the code as it was *before* the
  queue index (commit 385db2e). Equal digests: byte-identical files. Re-record only for a
  deliberate change of a schedule (``PYTHONPATH=. python tests/test_easy_backlog.py --record``).
  The ``out_consumed_energy.csv`` digests were updated once since, for a change of the ``epower``
  column alone (rows decided at an instant that already has a row print the power of Batsim's
  1e-10 s interval instead of NA, checked on real Batsim: ``tests/fixtures/batsim_ehosep``); every
  other file, and so every decision, kept its recorded digest. Re-recorded on 2026-11-24 when
  Batsim's messages on this Full zone (SimGrid's loopback, 1e-10 s each) came to be timed on
  SimGrid's clock: every time moved by a few 1e-10 s, which shows in the last printed digit of
  some values (``out_machine_states.csv`` prints 6 significant digits: 2276.975 + 3e-10 prints
  2276.98), in ``epower`` and, in green-easy, in the order of a job start and a job end at one
  printed time; the old and the new files compared within 1e-6 are equal (jobs, schedule,
  pstates), so are the decisions (``tests/test_policy_backlog.py``). Re-recorded again on
  2026-11-24 when each host's energy came to be kept as SimGrid's plugin keeps it (a double
  updated at every read) and Batsim's ``long double`` sums (energies, time in each machine
  state) came to be made exactly: only energies and those sums moved in their last digits.
  **These digests are now those of real Batsim 4.2.1's own files**, every case and every file
  (``out_schedule.csv`` without its wall-clock columns): each case was run with
  ``gridsched run --engine batsim`` on the same platform and workload, and its files hashed the
  same way (2026-11-24). A change that moves any printed digit of any file fails here.
* **Reference scan.** :class:`ScanEASY` keeps EASY's pass as it was written before (the scan of
  every waiting job, in queue order, at every pass); the policy must make the same decisions,
  message by message, on several seeds, including on workloads with jobs without walltime, jobs
  killed at their walltime and simultaneous events. A mismatch names the first job
  that differs.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import random
import sys
from pathlib import Path

import pytest

from schedulers.conservative import Conservative
from schedulers.core.backfilling import INF, Reservation, job_duration
from schedulers.core.waiting import WaitingIndex
from schedulers.easy import EASY
from schedulers.engine import simulate
from schedulers.inputs.generators import homogeneous_platform_xml
from schedulers.registry import get_policy

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "easy_backlog_digests.json"
N_HOSTS = 64
MAX_RES = 16

#: (fixture name, policy, options, jobs, compute sharing). Conservative and HEFT reserve every
#: waiting job at every pass (quadratic in the queue): fewer jobs.
CASES = [
    ("easy", "easy", None, 3000, False),
    ("green-easy", "green-easy", {"delta": 20}, 3000, True),
    ("buc-easy", "buc-easy", {"rule": "ema"}, 1500, False),
    ("conservative", "conservative", {"recompute": True}, 400, False),  # the recorded walk
    ("conservative-r3", "conservative", {"reservations": 3, "recompute": True}, 1500, False),
    ("heft", "heft", None, 400, False),
]


def backlog_workload(n: int, seed: int, hosts: int = N_HOSTS, max_res: int = MAX_RES,
                     no_walltime: float = 0.02) -> dict:
    """``n`` delay jobs of 1..``max_res`` hosts arriving at twice the capacity of ``hosts`` hosts.

    Delays uniform in [60, 3600) s; walltime = delay x U[1, 3) rounded up to the minute, except
    ``no_walltime`` (2 %) without walltime (-1) and 3 % shorter than their delay (killed at the walltime). Subtimes
    rounded to 10 s, so several jobs often arrive together; users u0-u4 (for buc-easy).
    """
    rng = random.Random(seed)
    mean_gap = ((1 + max_res) / 2) * 1830.0 / (2 * hosts)
    jobs, profiles, t = [], {}, 0.0
    for i in range(n):
        t += rng.expovariate(1.0 / mean_gap)
        res = rng.randint(1, max_res)
        delay = round(rng.uniform(60.0, 3600.0), 3)
        kind = rng.random()
        if kind < no_walltime:
            wt = -1.0
        elif kind < no_walltime + 0.03:
            wt = 60.0 * max(1, math.floor(delay / 120.0))  # < delay: killed
        else:
            wt = 60.0 * math.ceil(delay * rng.uniform(1.0, 3.0) / 60.0)
            if wt <= delay:
                wt += 60.0
        profiles[f"d{i}"] = {"type": "delay", "delay": delay}
        jobs.append({"id": str(i), "subtime": 10.0 * math.floor(t / 10.0), "walltime": wt, "res": res,
                     "profile": f"d{i}", "user": f"u{i % 5}"})
    return {"nb_res": hosts, "jobs": jobs, "profiles": profiles}


def _platform(folder: Path, hosts: int = N_HOSTS) -> Path:
    p = folder / f"homogeneous_{hosts}.xml"
    if not p.exists():
        p.write_text(homogeneous_platform_xml(hosts, 1, 1e9), encoding="utf-8")
    return p


def output_digests(folder: Path, policy, jobs: int, sharing: bool, seed: int = 11) -> dict[str, str]:
    """Run ``policy`` on :func:`backlog_workload` with energy; SHA-256 of each output file."""
    out = folder / f"out_{id(policy)}"
    simulate(_platform(folder), [backlog_workload(jobs, seed)], policy, energy=True, compute_sharing=sharing,
             export_prefix=str(out / "out_"))
    digests = {}
    for f in sorted(out.glob("*.csv")):   # (the recorded digests predate out_schedule.trace)
        data = f.read_bytes()
        if f.name == "out_schedule.csv":  # wall-clock columns differ between any two runs
            rows = list(csv.reader(io.StringIO(data.decode())))
            drop = {rows[0].index("scheduling_time"), rows[0].index("simulation_time")}
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerows([[v for i, v in enumerate(r) if i not in drop]
                                                            for r in rows])
            data = buf.getvalue().encode()
        digests[f.name] = hashlib.sha256(data).hexdigest()
    return digests


@pytest.mark.parametrize("name, policy, options, jobs, sharing", CASES, ids=[c[0] for c in CASES])
def test_outputs_are_the_recorded_ones(tmp_path, name, policy, options, jobs, sharing):
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))[name]
    got = output_digests(tmp_path, get_policy(policy, options), jobs, sharing)
    assert len(got) == 5  # jobs, schedule, machine states, energy, pstates
    assert got == recorded


# ----------------------------------------------------------------------------- reference scan
class ScanEASY(EASY):
    """EASY with its pass as written before the queue index: every waiting job after the head is
    looked at, in queue order, at every pass."""

    name = "easy-scan"

    def backfill_pass(self) -> list[int]:
        queue = self.queue
        avail = self.free_now_mask()
        nfree = avail.bit_count()
        n = len(queue)
        i = 0
        while i < n and queue[i].res <= nfree:
            job = queue[i]
            alloc = self.select_hosts(avail, job)
            self.start_job(job, alloc)
            avail &= ~alloc
            nfree -= job.res
            i += 1
        started = list(range(i))
        if i < n - 1 and nfree > 0:
            now = self.now
            resv: Reservation | None = None
            spare = nspare = 0
            for k in range(i + 1, n):
                job = queue[k]
                r = job.res
                if r > nfree:
                    continue
                if resv is None:
                    resv = self.find_reservation(self.profile(), queue[i])
                    spare = avail & ~resv.hosts_mask
                    nspare = spare.bit_count()
                if self.fits_gap(job, now, resv):
                    alloc = self.select_hosts(avail, job)
                elif r <= nspare:
                    alloc = self.select_hosts(spare, job)
                else:
                    continue
                self.start_job(job, alloc)
                avail &= ~alloc
                spare &= ~alloc
                nspare = spare.bit_count()
                nfree -= r
                started.append(k)
                if nfree == 0:
                    break
            self.reservation = resv
        return started


class ScanConservative(Conservative):
    """Conservative backfilling with its walk as written before the queue index: beyond the
    ``reservations`` limit, every later job is tried with ``fits_now_mask``, in queue order."""

    name = "conservative-scan"

    def _walk(self, prof, stop_when_full):
        now = prof.now
        left = self.reservation_limit if self.reservation_limit is not None else len(self.queue)
        barred = False
        for k, job in enumerate(self.queue):
            if stop_when_full and not prof.free_mask_at(now):
                return
            dur = job_duration(job)
            if left > 0:
                if barred and dur == INF:
                    r = Reservation(job, INF, dur, prof.final_free_mask)
                else:
                    r = self.find_reservation(prof, job)
            else:
                hosts = None if barred and dur == INF else prof.fits_now_mask(job.res, dur, self.host_choice(job))
                if hosts is None:
                    continue
                r = Reservation(job, now, dur, hosts)
            if r.start == INF:
                barred = True
            elif r.start == now and dur == 0:
                prof.reserve_mask(now, math.nextafter(now, INF) - now, r.hosts_mask)
            else:
                prof.reserve_mask(r.start, dur, r.hosts_mask)
            if r.start != now:
                left -= 1
            yield k, r


def _decisions(folder: Path, policy, wl: dict, hosts: int) -> list[tuple[str, float, str]]:
    res = simulate(_platform(folder, hosts), [wl], policy)
    return [(j.id, j.start, str(j.alloc)) for j in res.jobs]


def _first_difference(a: list, b: list) -> str:
    for x, y in zip(a, b):
        if x != y:
            return f"first difference: {x} (index) vs {y} (scan)"
    return f"lengths {len(a)} vs {len(b)}"


@pytest.mark.parametrize("seed, jobs, hosts, max_res", [(1, 1500, 64, 16), (2, 800, 16, 8), (3, 600, 8, 8),
                                                        (4, 1000, 128, 32)])
def test_same_decisions_as_the_reference_scan(tmp_path, seed, jobs, hosts, max_res):
    wl = backlog_workload(jobs, seed, hosts, max_res)
    got = _decisions(tmp_path, EASY(), wl, hosts)
    ref = _decisions(tmp_path, ScanEASY(), wl, hosts)
    assert len(ref) == jobs
    assert all(s >= 0 for _, s, _ in ref)  # every job ran
    assert got == ref, _first_difference(got, ref)


def test_infinite_reservations_same_as_scan(tmp_path):
    # 40 % of the jobs without walltime: they hold their hosts forever as far as the profile
    # knows, so the head often has no finite reservation (start = inf). Jobs with a walltime may
    # then backfill anywhere, jobs without only on hosts the reservation does not need; the
    # index is searched with the largest float as the limit so that it skips the latter.
    wl = backlog_workload(800, 5, 32, 8, no_walltime=0.4)
    got = _decisions(tmp_path, EASY(), wl, 32)
    ref = _decisions(tmp_path, ScanEASY(), wl, 32)
    assert len(ref) == 800 and all(s >= 0 for _, s, _ in ref)
    assert got == ref, _first_difference(got, ref)


@pytest.mark.parametrize("threshold", [1, 2, 5])
def test_index_on_short_queues_same_as_scan(tmp_path, monkeypatch, threshold):
    # the index kept from `threshold` waiting jobs on (dropped below half of it), so that queues
    # of a few jobs, a queue emptied and refilled, and the switches between index and scan are
    # all exercised; green-easy's own gap test goes through the search on res alone
    import schedulers.easy as easy_module

    monkeypatch.setattr(easy_module, "INDEX_MIN_QUEUE", threshold)
    for seed in range(5):
        wl = backlog_workload(150, 100 + seed, hosts=6, max_res=6)
        got = _decisions(tmp_path, EASY(), wl, 6)
        monkeypatch.setattr(easy_module, "INDEX_MIN_QUEUE", 10 ** 9)
        ref = _decisions(tmp_path, ScanEASY(), wl, 6)
        green = _decisions(tmp_path, get_policy("green-easy", {"delta": 0}), wl, 6)
        monkeypatch.setattr(easy_module, "INDEX_MIN_QUEUE", threshold)
        green_indexed = _decisions(tmp_path, get_policy("green-easy", {"delta": 0}), wl, 6)
        assert got == ref, _first_difference(got, ref)
        assert green_indexed == green == ref  # delta 0: EASY's decisions


class ShortestFirst(EASY):
    """EASY with a static queue order of its own: shortest walltime first (jobs are queued in
    the middle: the index takes them there, :meth:`WaitingIndex.insert`)."""

    name = "easy-swf"

    def queue_key(self, job):
        return job.walltime if job.walltime >= 0 else INF


class ShortestFirstScan(ScanEASY):
    name = "easy-swf-scan"
    queue_key = ShortestFirst.queue_key


@pytest.mark.parametrize("threshold", [1, 256])
def test_static_queue_order_same_as_scan(tmp_path, monkeypatch, threshold):
    import schedulers.easy as easy_module

    monkeypatch.setattr(easy_module, "INDEX_MIN_QUEUE", threshold)
    wl = backlog_workload(1200, 7, hosts=32, max_res=12)
    builds = []
    real = WaitingIndex.rebuild
    monkeypatch.setattr(WaitingIndex, "rebuild", lambda self, *a: (builds.append(1), real(self, *a))[1])
    got = _decisions(tmp_path, ShortestFirst(), wl, 32)
    monkeypatch.setattr(WaitingIndex, "rebuild", real)
    ref = _decisions(tmp_path, ShortestFirstScan(), wl, 32)
    assert got == ref, _first_difference(got, ref)
    # jobs queued in the middle do not rebuild the index: a few builds (the queue crossing the
    # threshold, slots renumbered), not one per submission
    assert 1 <= len(builds) < 60
    assert got != _decisions(tmp_path, EASY(), wl, 32)  # the order does change the schedule


@pytest.mark.parametrize("limit, threshold", [(1, 1), (3, 1), (3, 10 ** 9), (8, 2)])
def test_conservative_reservation_limit_same_as_scan(tmp_path, monkeypatch, limit, threshold):
    # beyond the `reservations` limit, jobs are found through the index (threshold 1: always)
    # or a scan (10**9) with the profile's free_now_steps as capacity: the decisions of a walk
    # that tries every job with fits_now_mask; planned_reservations as well
    import schedulers.easy as easy_module

    monkeypatch.setattr(easy_module, "INDEX_MIN_QUEUE", threshold)
    for seed in range(3):
        wl = backlog_workload(250, 200 + seed, hosts=8, max_res=8)
        got = _decisions(tmp_path, Conservative({"reservations": limit, "recompute": True}), wl, 8)
        ref = _decisions(tmp_path, ScanConservative({"reservations": limit, "recompute": True}), wl, 8)
        assert got == ref, _first_difference(got, ref)


if __name__ == "__main__":
    if sys.argv[1:] == ["--record"]:
        import tempfile
        out = {}
        with tempfile.TemporaryDirectory() as tmp:
            for name, policy, options, jobs, sharing in CASES:
                out[name] = output_digests(Path(tmp), get_policy(policy, options), jobs, sharing)
                print(name, out[name]["out_jobs.csv"][:16], flush=True)
        FIXTURE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {FIXTURE}")
