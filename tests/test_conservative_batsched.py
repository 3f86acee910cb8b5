"""Classic conservative against batsched 1.4.0's ``conservative_bf`` recorded on real Batsim 4.2.1.

The fixtures (``tests/fixtures/batsched_conservative/``, README there) are the ``out_jobs.csv`` of
batsched's ``conservative_bf`` with its defaults (``rjms_delay`` 5 s, fcfs, lowest host ids) driven
by real Batsim on Batsim's 128-host platform; ``gridsched run --policy conservative`` (defaults:
``rjms_delay`` 5 s, arrival order, lowest ids) must give every job the same start and hosts.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from schedulers.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "batsched_conservative"
PLATFORM_128 = ROOT.parent / "shared" / "data" / "batsim-examples" / "energy_platform_homogeneous_no_net_128.xml"


def starts(path: Path) -> dict[str, tuple[str, str, str]]:
    """job id -> (start (s, out_jobs.csv's 6 decimals), hosts, final state)."""
    with path.open(newline="", encoding="utf-8") as f:
        return {r["job_id"]: (r["starting_time"], r["allocated_resources"], r["final_state"])
                for r in csv.DictReader(f)}


@pytest.mark.skipif(not PLATFORM_128.exists(), reason="Batsim's 128-host platform is read from ../shared (absent)")
@pytest.mark.parametrize("name, n_jobs, killed", [("seconds150", 150, 0), ("ms200", 200, 19)])
def test_same_starts_and_hosts_as_batsched(tmp_path, capsys, name, n_jobs, killed):
    recorded = starts(FIXTURES / f"{name}_conservative_bf_jobs.csv")
    assert len(recorded) == n_jobs
    assert sum(s == "COMPLETED_WALLTIME_REACHED" for _, _, s in recorded.values()) == killed
    assert main(["run", "--policy", "conservative", "-p", str(PLATFORM_128),
                 "-w", str(FIXTURES / f"{name}.json"), "-o", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    ours = starts(tmp_path / "out" / "out_jobs.csv")
    assert ours == recorded
    # today's rebuild (recompute) is not batsched's algorithm: some job starts elsewhere
    assert main(["run", "--policy", "conservative", "--policy-options", '{"recompute": true}',
                 "-p", str(PLATFORM_128), "-w", str(FIXTURES / f"{name}.json"),
                 "-o", str(tmp_path / "old")]) == 0
    capsys.readouterr()
    assert starts(tmp_path / "old" / "out_jobs.csv") != recorded


@pytest.mark.parametrize("name, max_res, killed, mean_wait", [
    ("varied11", 64, 95, "66862.97"),     # jobs up to the whole platform, bursts, load 4
    ("varied39", 8, 82, "8919.46182"),    # millisecond times, bursts, walltimes equal to delays
])
def test_same_starts_and_hosts_as_batsched_on_varied_shapes(tmp_path, capsys, name, max_res, killed, mean_wait):
    """Platforms of other sizes, jobs as wide as the platform, submissions at one instant and many
    kills (``make_varied.py``; platform and workload in the fixture folder): every start and host
    set as batsched's, and so its mean waiting time to the 5 decimals of ``out_jobs.csv``."""
    recorded = starts(FIXTURES / f"{name}_conservative_bf_jobs.csv")
    with (FIXTURES / f"{name}_conservative_bf_jobs.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 300
    assert max(int(r["requested_number_of_resources"]) for r in rows) == max_res
    assert sum(s == "COMPLETED_WALLTIME_REACHED" for _, _, s in recorded.values()) == killed
    assert main(["run", "--policy", "conservative", "-p", str(FIXTURES / f"{name}_platform.xml"),
                 "-w", str(FIXTURES / f"{name}.json"), "-o", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    assert starts(tmp_path / "out" / "out_jobs.csv") == recorded
    with (tmp_path / "out" / "out_jobs.csv").open(newline="", encoding="utf-8") as f:
        ours = list(csv.DictReader(f))
    assert round(sum(float(r["waiting_time"]) for r in ours) / len(ours), 5) == float(mean_wait)


def test_a_window_that_ends_exactly_at_a_reservation_fits_as_in_batsched(tmp_path, capsys):
    """batsched's times are exact rationals: a window may end exactly where a reservation starts
    even when the float sums say it ends 1 ulp later (``exact_sum.json``, 2 hosts, README there).

    Jobs 0 and 1 start at 0 (one host each; holds until 1978.847 + 5 and 956.67 + 5); job 2 (both
    hosts) is reserved at 1983.847, when job 0's hold ends; job 3 (walltime 1023.177, 1028.177 s
    with ``rjms_delay``) does not fit on host 1 before it at its submission (961.67 + 1028.177 >
    1983.847) and is reserved after it. Job 1 ends at 955.67: job 3's window [955.67, 955.67 +
    1028.177) ends at 1983.847 as real numbers, where job 2's reservation starts, so it starts at
    once on host 1, as batsched started it; the float sum is 1983.8470000000002.
    """
    assert 955.67 + (1023.177 + 5.0) > 1978.847 + 5.0  # what the float sums said
    recorded = starts(FIXTURES / "exact_sum_conservative_bf_jobs.csv")
    assert recorded["3"] == ("955.670000", "1", "COMPLETED_SUCCESSFULLY")
    assert recorded["2"] == ("1977.847000", "0-1", "COMPLETED_SUCCESSFULLY")  # job 0 ended at 1977.847
    assert main(["run", "--policy", "conservative", "-p", str(FIXTURES / "exact_sum_platform.xml"),
                 "-w", str(FIXTURES / "exact_sum.json"), "-o", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    assert starts(tmp_path / "out" / "out_jobs.csv") == recorded


def test_times_in_tenths_of_a_second_as_in_batsched(tmp_path, capsys):
    """A workload in tenths of a second (``tenths24.json``, 24 jobs of 1-4 hosts on 16 hosts, 11
    killed at their walltimes, cut down from a 1,500-job one on which 1,323 starts or host sets
    differed with float times; README there): job 91 starts at 643.6 on host 12, as in batsched;
    float sums of ``start + walltime + rjms_delay`` found host 11 free during its whole window."""
    recorded = starts(FIXTURES / "tenths24_conservative_bf_jobs.csv")
    assert len(recorded) == 24
    assert sum(s == "COMPLETED_WALLTIME_REACHED" for _, _, s in recorded.values()) == 11
    assert recorded["91"] == ("643.600000", "12", "COMPLETED_SUCCESSFULLY")
    assert main(["run", "--policy", "conservative", "-p", str(FIXTURES / "tenths24_platform.xml"),
                 "-w", str(FIXTURES / "tenths24.json"), "-o", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    assert starts(tmp_path / "out" / "out_jobs.csv") == recorded
