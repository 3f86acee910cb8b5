"""``Mailbox::by_name`` is a simcall: a message's ``put`` and the server's ``get`` and mailbox
test come a sub-round after they are decided (``fixtures/batsim_mailbox_lookup``, recorded on
real Batsim 4.2.1; its README counts the sub-rounds)."""

from __future__ import annotations

from pathlib import Path

from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.outputs import energy_rows, job_rows, machine_state_rows, pstate_rows
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_mailbox_lookup"


def test_a_job_end_at_the_instant_of_a_message_is_received_before_the_reply():
    engine = build_engine(FIX / "p.xml", [str(FIX / "w.json")], energy=True, compute_sharing=True)
    result = engine.run(InProcessPort(get_policy("easy", {"idle_timeout": 0})))
    jobs = job_rows(result)
    assert jobs == (FIX / "out_jobs.csv").read_text().splitlines()
    # job 19 starts when job 18's JOB_COMPLETED has crossed its 500-us route, not at 36.007005
    assert any(r.startswith("19,w0,x31,18.500000,2,10.000000,1,COMPLETED_SUCCESSFULLY,36.007505,") for r in jobs)
    assert energy_rows(result) == (FIX / "out_consumed_energy.csv").read_text().splitlines()
    assert machine_state_rows(result) == (FIX / "out_machine_states.csv").read_text().splitlines()
    assert pstate_rows(result) == (FIX / "out_pstate_changes.csv").read_text().splitlines()
