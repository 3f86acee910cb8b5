"""EASY (and classic conservative) against batsched 1.4.0's ``easy_bf`` / ``conservative_bf``
recorded on real Batsim 4.2.1 (``tests/fixtures/batsched_easy/``, README there: the commands).

Two rules of batsched that the float, arrival-ordered EASY missed:

* the queue order: jobs that arrive at one time are ordered by their full ids as strings
  (``FCFSOrder``, ``src/queue.cpp``), not in the order of Batsim's messages, which puts the
  jobs of workload ``w1`` first when two workloads submit at one time;
* the gap test on exact sums (``mpq_rational``): a job whose window ends 1e-12 s after the head's
  reservation as real numbers does not fit, though the float sums are equal.
"""

from __future__ import annotations

import csv
from fractions import Fraction
from pathlib import Path

import pytest

from schedulers.cli import main

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "batsched_easy"


def starts(path: Path) -> dict[str, tuple[str, str, str]]:
    """workload!job id -> (start (s, out_jobs.csv's 6 decimals), hosts, final state)."""
    with path.open(newline="", encoding="utf-8") as f:
        return {f"{r['workload_name']}!{r['job_id']}": (r["starting_time"], r["allocated_resources"],
                                                        r["final_state"])
                for r in csv.DictReader(f)}


def mean_wait(path: Path) -> float:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return sum(float(r["waiting_time"]) for r in rows) / len(rows)


def run(tmp_path: Path, capsys, policy: str, platform: str, *workloads: str) -> Path:
    args = ["run", "--policy", policy, "-p", str(FIXTURES / platform), "-o", str(tmp_path / policy)]
    for w in workloads:
        args += ["-w", str(FIXTURES / w)]
    assert main(args) == 0
    capsys.readouterr()
    return tmp_path / policy / "out_jobs.csv"


def test_jobs_of_two_workloads_at_one_time_are_queued_by_id_as_in_easy_bf(tmp_path, capsys):
    """4 hosts. w0!0 (3 hosts, 100 s) runs from 0 on hosts 0-2. At 10 s arrive w0!1 (2 hosts,
    200 s), w1!1 (4 hosts, 200 s) and w1!2 (1 host, 500 s); Batsim sends w1's two jobs first.
    batsched's queue is w0!1, w1!1, w1!2 (ids as strings): the head w0!1 is reserved at 100 on
    hosts 0-1, host 3 is not needed by it, so w1!2 starts at 10 on host 3 (it ends at 510, after
    the reservation, on a spare host). In message order the head would be w1!1, reserved on all
    4 hosts at 100, and w1!2 could not start: mean waiting 167.5 s instead of 147.5 s."""
    recorded = starts(FIXTURES / "tie_easy_bf_jobs.csv")
    assert recorded == {
        "w0!0": ("0.000000", "0-2", "COMPLETED_WALLTIME_REACHED"),
        "w0!1": ("100.000000", "0-1", "COMPLETED_WALLTIME_REACHED"),
        "w1!2": ("10.000000", "3", "COMPLETED_WALLTIME_REACHED"),
        "w1!1": ("510.000000", "0-3", "COMPLETED_WALLTIME_REACHED"),
    }
    out = run(tmp_path, capsys, "easy", "tie_platform.xml", "tie_w0.json", "tie_w1.json")
    assert starts(out) == recorded
    assert mean_wait(out) == pytest.approx((0 + 90 + 0 + 500) / 4)  # 147.5 s


@pytest.mark.parametrize("policy", ["easy", "conservative"])
def test_a_window_ending_after_the_reservation_as_real_numbers_does_not_fit(tmp_path, capsys, policy):
    """2 hosts. E (host 0) runs 17000-19374; R (host 1) starts at 17870.8 with walltime 1716,
    so it holds host 1 until 17870.8 + 1716 = 19586.799999999999272... (exact sum of the
    doubles). H (2 hosts) waits, reserved there. When E ends at 19374, C (1 host, walltime
    212.8) would end at 19374 + 212.8 = 19586.800000000000011... as real numbers: 1e-12 s into
    H's reservation, so batsched (``easy_bf`` and ``conservative_bf`` alike, exact rationals)
    does not start it; the float sums are both 19586.8, by which C fitted and started at
    19374. C starts after H, at 19686.8."""
    for algo in ("easy_bf", "conservative_bf"):
        recorded = starts(FIXTURES / f"exact_gap_{algo}_jobs.csv")
        assert recorded["w0!C"] == ("19686.800000", "0", "COMPLETED_WALLTIME_REACHED")
        assert recorded["w0!H"] == ("19586.800000", "0-1", "COMPLETED_WALLTIME_REACHED")
    assert 19374.0 + 212.8 == 17870.8 + 1716.0  # the float sums tie, the exact ones do not:
    assert Fraction(19374.0) + Fraction(212.8) > Fraction(17870.8) + Fraction(1716.0)
    algo = "easy_bf" if policy == "easy" else "conservative_bf"
    out = run(tmp_path, capsys, policy, "exact_gap_platform.xml", "exact_gap.json")
    assert starts(out) == starts(FIXTURES / f"exact_gap_{algo}_jobs.csv")
    assert mean_wait(out) == pytest.approx((0 + 0 + 1686.8 + 1686.8) / 4)


def test_conservative_compresses_jobs_of_two_workloads_at_one_time_by_id(tmp_path, capsys):
    """4 hosts, two workloads of 5 jobs (seeded, ``tie_cons_*``): w0!3 and w1!2 (4 hosts each)
    arrive at 60 s, w1!2 first in Batsim's message. ``conservative_bf`` compresses its queue after
    each completion in id order at equal arrival times, so w0!3 gets the slot at 570 and w1!2
    follows at 620 (batsched's recorded starts); in message order w1!2 took 570 and w0!3 waited
    until 770 (mean waiting 295 s instead of 280 s)."""
    recorded = starts(FIXTURES / "tie_cons_conservative_bf_jobs.csv")
    assert recorded["w0!3"][:2] == ("570.000000", "0-3")
    assert recorded["w1!2"][:2] == ("620.000000", "0-3")
    out = run(tmp_path, capsys, "conservative", "tie_platform.xml", "tie_cons_w0.json", "tie_cons_w1.json")
    assert starts(out) == recorded
    assert mean_wait(out) == pytest.approx(280.0)
