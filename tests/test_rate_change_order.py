"""A parallel task whose rate was solved again keeps its place in SimGrid's creation order: of
two jobs ending in one step, the one whose task was created first ends first, as recorded on
real Batsim 4.2.1 (``fixtures/batsim_rate_change_order``)."""

from __future__ import annotations

from pathlib import Path

from schedulers.easy import EASY
from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.outputs import energy_rows, job_rows, machine_state_rows

FIX = Path(__file__).parent / "fixtures" / "batsim_rate_change_order"


def test_task_with_a_new_rate_ends_before_a_sleep_created_after_it():
    engine = build_engine(FIX / "p.xml", [str(FIX / f"w{i}.json") for i in range(3)], energy=True,
                          events=[FIX / "events.txt"])
    result = engine.run(InProcessPort(EASY()))
    rows = job_rows(result)
    # w2!6 (started first at 10.5 s, rate solved again at 15.5 s) and w0!3 both end at 20.5 s
    ends = [r.split(",")[:2] for r in rows[1:] if r.split(",")[10] == "20.500000"]
    assert ends == [["6", "w2"], ["3", "w0"]]
    assert rows == (FIX / "out_jobs.csv").read_text().splitlines()
    assert machine_state_rows(result) == (FIX / "out_machine_states.csv").read_text().splitlines()
    assert energy_rows(result) == (FIX / "out_consumed_energy.csv").read_text().splitlines()
