"""A submitter's sleep shorter than SimGrid's precision ends in the next step: at the same clock
when a message step of 0 s comes first, the next job of a shared subtime then submitted an ulp
before it (``fixtures/batsim_subprecision_sleep``); at the subtime when none does
(``fixtures/batsim_subprecision_step``). Both recorded on real Batsim 4.2.1."""

from __future__ import annotations

import json
from pathlib import Path

from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.outputs import job_rows
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_subprecision_sleep"
PLATFORM = FIX.parent / "batsim_128_energy" / "p.xml"   # the 128-host platform the run was recorded on


def test_second_job_of_a_subtime_is_submitted_at_the_clock_short_of_it():
    engine = build_engine(PLATFORM, [str(FIX / "w.json")], compute_sharing=True)
    result = engine.run(InProcessPort(get_policy("green-heft")))
    recorded = (FIX / "out_jobs.csv").read_text().splitlines()
    # job 23 (subtime 22.870370367) starts at once, at SimGrid's clock 22.87037036699999604
    assert any(r.startswith("23,w0,d25,22.870370,7,-1.000000,1,COMPLETED_SUCCESSFULLY,22.870370,3.333300,"
                            "26.203670,-0.000000,") for r in recorded)
    assert job_rows(result) == recorded
    start = {j.id: j.start for j in result.jobs}
    assert start["w0!23"] == start["w0!22"] == 22.870370366999996 < 22.870370367


STEP = Path(__file__).parent / "fixtures" / "batsim_subprecision_step"
_NAMES = {"SimulationBegins": "SIMULATION_BEGINS", "JobSubmitted": "JOB_SUBMITTED", "JobCompleted": "JOB_COMPLETED",
          "Notify": "NOTIFY", "SimulationEnds": "SIMULATION_ENDS"}


class _Recording(InProcessPort):
    """The policy in-process, each message's events written down as Batsim's recorder writes them."""

    def __init__(self, policy) -> None:
        super().__init__(policy)
        self.messages: list[list[str]] = []

    def exchange(self, now, events):
        self.messages.append([_NAMES[type(e).__name__] + (f" {e.job_id}" if hasattr(e, "job_id") else "")
                              for e in events])
        return super().exchange(now, events)


def test_a_short_sleep_with_no_message_step_before_it_reaches_the_subtime():
    """``fixtures/batsim_subprecision_step`` (``clock.txt``: SimGrid's clock on real Batsim 4.2.1):
    the clock stops an ulp short of 3.5 (3.49999999999999911) when the submitter wakes for job 1;
    the next jobs' subtime is 3.5, 8.9e-16 s later. EASY's reply is dated 3.5 (``now`` printed
    with 6 decimals), so the request-reply actor sleeps first: no message step of 0 s comes, the
    next step lasts 8.9e-16 s and ends both sleeps at 3.5 exactly. Job 1 starts at 3.5 (waiting
    time 0.000000, not -0.000000) and jobs 2, 3 and 4 go out in one message."""
    clock = [float(t) for t in (STEP / "clock.txt").read_text().split()]
    assert clock[clock.index(3.5) - 1] == 3.4999999999999991 < 3.5
    port = _Recording(get_policy("easy"))
    result = build_engine(str(STEP / "p.xml"), [str(STEP / "w.json")], compute_sharing=True).run(port)
    assert job_rows(result) == (STEP / "out_jobs.csv").read_text().splitlines()
    start = {j.id: j.start for j in result.jobs}
    assert start["w0!1"] == 3.5
    recorded = json.loads((STEP / "messages.json").read_text())
    assert ["JOB_SUBMITTED w0!2", "JOB_SUBMITTED w0!3", "JOB_SUBMITTED w0!4"] in recorded
    assert port.messages == recorded


def test_a_message_after_the_exchange_ends_the_replys_short_sleep():
    """``fixtures/batsim_subprecision_step/bye``: job 1 is the last job, so the submitter's bye
    reaches the server after the exchange about it; EASY's EXECUTE_JOB is dated 3.5, 8.9e-16 s
    after the clock, and the bye's step of 0 s ends the request-reply actor's sleep to it: the
    job starts at 3.49999999999999911, printed with a waiting time of -0.000000."""
    bye = STEP / "bye"
    clock = [float(t) for t in (bye / "clock.txt").read_text().split()]
    assert 3.4999999999999991 in clock and 3.5 in clock
    result = build_engine(str(STEP / "p.xml"), [str(bye / "w.json")], compute_sharing=True).run(
        InProcessPort(get_policy("easy")))
    rows = job_rows(result)
    assert rows == (bye / "out_jobs.csv").read_text().splitlines()
    assert rows[2].split(",")[11] == "-0.000000"
    assert {j.id: j.start for j in result.jobs}["w0!1"] == 3.4999999999999991
