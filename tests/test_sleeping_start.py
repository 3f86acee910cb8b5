"""EXECUTE_JOB on an idle host declared at a sleep pstate: refused with energy, as Batsim 4.2.1
aborts (``server_on_execute_job``, ``src/server.cpp``), run without it; recorded on real Batsim
(``fixtures/batsim_sleeping_start``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from procset import ProcSet

from schedulers.core.events import ExecuteJob, JobSubmitted
from schedulers.engine import EngineError, Reply, simulate

FIX = Path(__file__).parent / "fixtures" / "batsim_sleeping_start"


class OnHost:
    """A client that starts each job it hears of on host ``host`` at once (batsched's ``easy_bf``
    takes host 0, the lowest id)."""

    def __init__(self, host: int) -> None:
        self.host = host

    def exchange(self, now, events):
        subs = [e for e in events if isinstance(e, JobSubmitted)]
        return Reply(now, [ExecuteJob(job_id=e.job.id, alloc=ProcSet(self.host), timestamp=now) for e in subs])


def test_with_energy_a_host_at_its_sleep_pstate_cannot_start_a_job():
    with pytest.raises(EngineError, match=r"EXECUTE_JOB w0!1 at t=2: host 0 \(h0\) is not in a computation "
                                          r"pstate \(pstate 1, a sleep pstate\); Batsim 4\.2\.1 aborts"):
        simulate(FIX / "p.xml", [FIX / "w.json"], OnHost(0), energy=True)


def test_with_energy_the_host_at_pstate_0_runs_it():
    r = simulate(FIX / "p.xml", [FIX / "w.json"], OnHost(1), energy=True)
    (job,) = r.jobs
    assert job.state == "COMPLETED_SUCCESSFULLY" and round(job.start, 6) == 2.0 and round(job.finish, 6) == 7.0


def test_without_energy_the_job_runs_as_on_real_batsim(tmp_path):
    simulate(FIX / "p.xml", [FIX / "w.json"], OnHost(0), export_prefix=tmp_path / "out_")
    assert (tmp_path / "out_jobs.csv").read_text() == (FIX / "out_jobs_without_energy.csv").read_text()
