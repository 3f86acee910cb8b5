"""A job end's energy reader continues, after its simcall, before the actors woken after it at the
same instant: its JOB_COMPLETED reaches the mailbox first (``fixtures/batsim_reader_subround``,
recorded on real Batsim 4.2.1)."""

from __future__ import annotations

from pathlib import Path

from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.outputs import energy_rows, job_rows
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_reader_subround"


def test_walltime_reader_posts_before_the_request_reply_actor_created_after_it():
    engine = build_engine(FIX / "p.xml", [str(FIX / "w.json")], energy=True, compute_sharing=True)
    result = engine.run(InProcessPort(get_policy("easy")))
    recorded = (FIX / "out_jobs.csv").read_text().splitlines()
    # job 7 starts once job 8's JOB_COMPLETED (1.01 ms over the links) has been received
    assert any(r.startswith("7,w0,p7,5.123457,2,3.000000,0,COMPLETED_WALLTIME_REACHED,7.461497,") for r in recorded)
    assert job_rows(result) == recorded
    assert energy_rows(result) == (FIX / "out_consumed_energy.csv").read_text().splitlines()
