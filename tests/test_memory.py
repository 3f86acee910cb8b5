"""Memory of long runs (issue 13, "Scale"): an ended job is kept only as its output record, the
output rows are compact, FCFS and EASY forget completed jobs; nothing of what a run reports
changes. Expected values worked out by hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.results import DoneJob, EnergyRows, MachineStateRows
from schedulers.engine.workload import EngineJob, load_workload
from schedulers.fcfs import FCFS
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures"
PLATFORM = FIX / "batsim_shutdown" / "platform.xml"  # 4 hosts s0-s3


def _workload(tmp_path: Path) -> Path:
    # 3 single-host delay jobs: a [0, 10] and b [0, 5] at once, c submitted at 1, starts when b
    # ends (FCFS, 4 hosts: c starts at 1 on the third host). d asks 8 hosts: rejected.
    wl = {"nb_res": 4, "profiles": {"p10": {"type": "delay", "delay": 10}, "p5": {"type": "delay", "delay": 5},
                                    "q5": {"type": "delay", "delay": 5}, "r5": {"type": "delay", "delay": 5.0}},
          "jobs": [{"id": "a", "subtime": 0, "walltime": -1, "res": 1, "profile": "p10"},
                   {"id": "b", "subtime": 0, "walltime": 20, "res": 1, "profile": "p5", "user": "u1"},
                   {"id": "c", "subtime": 1, "walltime": 3, "res": 1, "profile": "q5"},
                   {"id": "d", "subtime": 2, "walltime": -1, "res": 1, "profile": "r5"}]}
    p = tmp_path / "w.json"
    p.write_text(json.dumps(wl))
    return p


@pytest.mark.parametrize("policy", ["fcfs", "easy"])
def test_ended_jobs_are_records_and_policies_forget_them(tmp_path: Path, policy: str) -> None:
    engine = build_engine(PLATFORM, [str(_workload(tmp_path))], energy=True)
    pol = get_policy(policy)
    result = engine.run(InProcessPort(pol))
    # a [0,10] on host 0, b [0,5] on host 1, c [1,4] on host 2 killed by its 3 s walltime,
    # d [2,7] on host 3 (delay 5.0)
    got = [(j.name, j.state, j.start, j.finish, str(j.alloc)) for j in result.jobs]
    assert got == [("c", "COMPLETED_WALLTIME_REACHED", 1.0, 4.0, "2"),
                   ("b", "COMPLETED_SUCCESSFULLY", 0.0, 5.0, "1"),
                   ("d", "COMPLETED_SUCCESSFULLY", 2.0, 7.0, "3"),
                   ("a", "COMPLETED_SUCCESSFULLY", 0.0, 10.0, "0")]
    assert all(type(j) is DoneJob for j in result.jobs)
    assert all(type(j) is DoneJob for j in engine.jobs.values())
    assert all(type(j) is DoneJob for j in engine.workloads[0].jobs)
    assert result.rows["jobs"] == result.jobs
    # the policy dropped the completed jobs, and counted all four
    assert pol.jobs == {} and pol.jobs_seen == 4


class _KeepingFCFS(FCFS):
    forget_finished_jobs = False  # as the policies that look jobs up after they end (owner share)


def test_a_policy_that_keeps_jobs_keeps_them(tmp_path: Path) -> None:
    engine = build_engine(PLATFORM, [str(_workload(tmp_path))])
    pol = _KeepingFCFS()
    engine.run(InProcessPort(pol))
    assert sorted(pol.jobs) == ["w0!a", "w0!b", "w0!c", "w0!d"] and pol.jobs_seen == 4


def test_workload_from_a_file_is_not_copied_and_equal_delays_are_shared(tmp_path: Path) -> None:
    w = load_workload(_workload(tmp_path), "w0", 4)
    prof = w.profiles
    # p5 and q5 are equal (delay 5, an integer): one object; r5 (5.0, a float) and p10 stay apart
    assert prof["p5"] is prof["q5"] and prof["r5"] is not prof["p5"] and prof["p10"] is not prof["p5"]
    assert prof["r5"] == {"type": "delay", "delay": 5.0} and prof["q5"] == {"type": "delay", "delay": 5}
    b = next(j for j in w.jobs if j.name == "b")
    assert b.raw == {"id": "w0!b", "subtime": 0, "walltime": 20, "res": 1, "profile": "p5", "user": "u1"}
    # a dict given by the caller is copied: the caller's workload is left as it was
    data = json.loads(_workload(tmp_path).read_text())
    w2 = load_workload("<dict>", "w0", 4, data=data)
    assert data["jobs"][1]["id"] == "b" and w2.profiles["p5"] is not w2.profiles["q5"]


def test_done_job_is_smaller_than_the_engine_job() -> None:
    job = EngineJob(id="w0!1", name="1", workload="w0", subtime=0.0, walltime=10.0, res=1, profile="p",
                    raw={"id": "w0!1"})
    done = DoneJob.of(job)
    assert (done.id, done.state, done.walltime) == ("w0!1", "NOT_SUBMITTED", 10.0)
    assert sys.getsizeof(done) < sys.getsizeof(job) / 1.5


def test_machine_state_rows_behave_as_a_list_of_tuples() -> None:
    rows = MachineStateRows()
    assert len(rows) == 0 and list(rows) == []
    rows.append((0.0, 0, 0, 0, 4, 0))
    rows.append((1.5, 1, 0, 1, 1, 1))
    assert len(rows) == 2 and list(rows) == [(0.0, 0, 0, 0, 4, 0), (1.5, 1, 0, 1, 1, 1)]
    assert rows[-1] == (1.5, 1, 0, 1, 1, 1) and rows[0] == (0.0, 0, 0, 0, 4, 0)
    with pytest.raises(IndexError):
        rows[2]


def test_energy_rows_keep_na_and_kinds() -> None:
    rows = EnergyRows()
    rows.append((0.0, 0.0, "s", 40.0, None))
    rows.append((2.5, 250.0, "e", 40.0, 100.0))
    rows.append((2.5, 250.0, "p", 30.0, 0.0))
    assert list(rows) == [(0.0, 0.0, "s", 40.0, None), (2.5, 250.0, "e", 40.0, 100.0),
                          (2.5, 250.0, "p", 30.0, 0.0)]
    assert rows[-1] == (2.5, 250.0, "p", 30.0, 0.0) and rows[0][4] is None and len(rows) == 3
