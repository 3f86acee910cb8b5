"""Energy rows on a platform of more than 64 hosts are Batsim's, digit for digit, when the run is
small enough for every host to be read at each row (``hosts.EXACT_WORK``); the running sum the
engine keeps for larger runs differs in the last digit here (``fixtures/batsim_128_energy``,
recorded on real Batsim 4.2.1)."""

from __future__ import annotations

from pathlib import Path

import schedulers.engine.hosts as hosts_module
from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.outputs import energy_rows, job_rows
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_128_energy"


def _run():
    engine = build_engine(FIX / "p.xml", [str(FIX / "heft.json")], energy=True)
    return engine.run(InProcessPort(get_policy("heft")))


def test_every_host_read_at_each_row_gives_batsims_energy_on_128_hosts():
    result = _run()
    recorded = (FIX / "heft_out_consumed_energy.csv").read_text().splitlines()
    assert "3.624457,44998.058659,e,12160.000000,12471.148500" in recorded
    assert energy_rows(result) == recorded
    assert job_rows(result) == (FIX / "heft_out_jobs.csv").read_text().splitlines()


def test_the_running_sum_of_large_runs_differs_in_the_last_digit(monkeypatch):
    # what EXACT_WORK buys: with the running sum (runs of more host-jobs than EXACT_WORK) the row
    # at 3.624457 s prints 44998.058658 J; the energies agree to 1e-12 relative all the same
    monkeypatch.setattr(hosts_module, "EXACT_WORK", 0)
    rows = energy_rows(_run())
    assert "3.624457,44998.058658,e,12160.000000,12471.148500" in rows
