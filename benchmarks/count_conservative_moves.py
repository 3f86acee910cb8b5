"""Reservation moves of classic conservative backfilling per completion, on the backlog benchmark.

Classic conservative backfilling (Mu'alem & Feitelson 2001, IEEE TPDS 12(6), section 2; batsched's
``conservative_bf``) keeps every waiting job's reservation and, after each completion, compresses
the schedule: each waiting job, in queue order, is removed and inserted again first fit
(:meth:`schedulers.core.kept_reservations.KeptReservations.compress`). A *move* is a compression
that gives the job an earlier start; a *re-host* keeps the start but changes the hosts. Whatever
the data structure, every move is a change of the schedule the algorithm defines, so the number
of moves is a lower bound of the work of any exact implementation of it.

This script runs ``conservative`` (its default, classic variant) on the workload of
:mod:`bench_backlog` (jobs of 1-32 hosts at twice the capacity of 128 hosts, seed 1) and prints,
per size: completion passes (the passes that compress: one after each completion, and the
first pass, which builds the kept schedule), mean waiting jobs at a completion pass, compressions, searches (a
compression that had to search, :meth:`~schedulers.core.kept_reservations.KeptReservations.
compress` not leaving the job in place at once), moves and re-hosts, as totals and per
completion pass, plus the moved fraction of the queue. Moves per completion that grow with the
queue (about a constant fraction of it) make the algorithm ``Theta(N^2)`` moves for ``N`` jobs
under a backlog.

Usage::

    python benchmarks/count_conservative_moves.py --sizes 1000,2000,3000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_backlog import make_workload  # noqa: E402
from bench_engine import resolve_platform  # noqa: E402


def count(platform: str, size: int, seed: int) -> dict:
    """Run classic conservative on ``size`` jobs of the benchmark workload; the counts (module
    docstring): :func:`count_workload` of :func:`bench_backlog.make_workload`."""
    return count_workload(platform, make_workload(size, seed))


def count_workload(platform: str, workload: dict) -> dict:
    """Run classic conservative on ``workload`` (a Batsim workload dict) on ``platform`` (a path);
    returns ``passes``, ``completion_passes`` (passes that compress: after a completion, or the
    first one), ``queue_at_completion`` (waiting jobs summed over those), ``compressions``,
    ``searches``, ``moves``, ``rehosts`` (module docstring) and ``run_s`` (engine time, s)."""
    from schedulers.conservative import Conservative
    from schedulers.core.backfilling import ReservationProfile
    from schedulers.core.kept_reservations import KeptReservations
    from schedulers.engine import InProcessPort, build_engine

    c = {"passes": 0, "completion_passes": 0, "queue_at_completion": 0, "compressions": 0,
         "searches": 0, "moves": 0, "rehosts": 0}
    compress = KeptReservations.compress
    release = ReservationProfile.release_mask
    inside = [False]

    def counting_release(self, *args, **kw):
        if inside[0]:
            c["searches"] += 1  # a compression removes the reservation only to search again
        return release(self, *args, **kw)

    def counting_compress(self, job, duration, choose):
        old = self.reservations.get(job.id)
        c["compressions"] += 1
        inside[0] = True
        try:
            r = compress(self, job, duration, choose)
        finally:
            inside[0] = False
        if old is not None:
            if r.start < old.start:
                c["moves"] += 1
            elif r.hosts_mask != old.hosts_mask:
                c["rehosts"] += 1
        return r

    pass_ = Conservative._classic_pass

    def counting_pass(self, kept_res, compress_all, new):
        c["passes"] += 1
        if compress_all:
            c["completion_passes"] += 1
            c["queue_at_completion"] += len(self.queue)
        return pass_(self, kept_res, compress_all, new)

    KeptReservations.compress = counting_compress  # type: ignore[method-assign]
    ReservationProfile.release_mask = counting_release  # type: ignore[method-assign]
    Conservative._classic_pass = counting_pass  # type: ignore[method-assign]
    try:
        engine = build_engine(platform, [workload], energy=False, trace_outputs=False)
        t = time.perf_counter()
        engine.run(InProcessPort(Conservative()))
        c["run_s"] = time.perf_counter() - t
    finally:
        KeptReservations.compress = compress  # type: ignore[method-assign]
        ReservationProfile.release_mask = release  # type: ignore[method-assign]
        Conservative._classic_pass = pass_  # type: ignore[method-assign]
    return c


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,2000,3000", help="comma-separated job counts")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    import tempfile

    tmp = tempfile.TemporaryDirectory()
    platform, note = resolve_platform(Path(tmp.name))
    print(f"platform: {note}; workload of bench_backlog.py, seed {args.seed}; policy conservative (classic)\n")
    print("| jobs | completion passes | mean queue at a completion | compressions | searches | moves "
          "| re-hosts | moves per completion | moved share of the queue | run (s) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in (int(s) for s in args.sizes.split(",")):
        c = count(str(platform), size, args.seed)
        cp = max(c["completion_passes"], 1)
        q = c["queue_at_completion"] / cp
        per = c["moves"] / cp
        print(f"| {size:,} | {c['completion_passes']:,} | {q:,.0f} | {c['compressions']:,} | "
              f"{c['searches']:,} | {c['moves']:,} | {c['rehosts']:,} | {per:,.1f} | "
              f"{per / q if q else 0:.2f} | {c['run_s']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
