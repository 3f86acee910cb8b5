"""SimGrid's lazy energy updates (``HostEnergy::update``): the engine against hand-worked numbers
and real Batsim 4.2.1 (``fixtures/batsim_lazy_energy``, README there for the working).

A host's energy is charged, at each update, for the whole interval since its previous update at
the power the host draws at the update. A two-host compute stage that starts inside a job (after
a delay) updates no host, and the delay updated only the job actor's host (the allocation's
first), so the other hosts pay the delay at the compute power.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from schedulers.engine import simulate
from schedulers.registry import get_policy
from recorded import rows, run_fcfs_with_energy

FIX = Path(__file__).parent / "fixtures" / "batsim_lazy_energy"

# Hand-worked (README): h0 2000 + 1000 + 2000, h1 2000 + 20 s x 200 W; h2 2000 + 1000 + 2000;
# late pair from 40 s: h0 1000 + 2000, h1 20 s x 200 W.
HAND = {"pair": 5000.0 + 6000.0, "single": 5000.0, "late_pair": 3000.0 + 4000.0}
# A continuous integration of power (what the engine did before) gives 1000 J less per pair.
CONTINUOUS = {"pair": 10000.0, "single": 5000.0, "late_pair": 6000.0}


def test_recording_holds_the_hand_worked_energies():
    got = {r["job_id"]: float(r["consumed_energy"]) for r in rows(FIX / "jobs.csv")}
    assert got == HAND
    assert got != CONTINUOUS
    # 3 hosts: 16,000 J by 30 s, then 10 s all idle (3000 J), then the late pair (7000 J) and h2
    # idle for 20 s (2000 J): 28,000 J.
    assert float(rows(FIX / "schedule.csv")[0]["consumed_joules"]) == 16000.0 + 3000.0 + 7000.0 + 2000.0


@pytest.fixture(scope="module")
def engine_out(tmp_path_factory) -> Path:
    return run_fcfs_with_energy(FIX, tmp_path_factory.mktemp("lazy"))


def test_engine_charges_energy_as_simgrid_updates_it(engine_out):
    got = {r["job_id"]: float(r["consumed_energy"]) for r in rows(engine_out / "out_jobs.csv")}
    assert got == pytest.approx(HAND, rel=1e-12)


@pytest.mark.parametrize("name, column", [("schedule", "consumed_joules"), ("consumed_energy", "energy"),
                                          ("consumed_energy", "epower"), ("jobs", "finish_time")])
def test_engine_equals_real_batsim(engine_out, name, column):
    got, want = rows(engine_out / f"out_{name}.csv"), rows(FIX / f"{name}.csv")
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w[column] == "NA":
            assert g[column] == "NA"
        else:
            assert math.isclose(float(g[column]), float(w[column]), rel_tol=1e-9, abs_tol=1e-9), (name, column)


def test_without_energy_nothing_changes(tmp_path):
    # the lazy bookkeeping only exists with -E: without it, the same schedule and no energy
    res = simulate(FIX / "platform.xml", [FIX / "workload.json"], get_policy("fcfs"), export_prefix=tmp_path / "out_")
    jobs = rows(tmp_path / "out_jobs.csv")
    assert [float(r["finish_time"]) for r in jobs] == [30.0, 30.0, 60.0]
    assert {r["consumed_energy"] for r in jobs} == {"-1.000000"}
    assert res is not None


def test_energy_sums_are_exact_as_batsims_long_doubles():
    # Batsim sums the hosts' energies (doubles) in a long double and prints it with %Lf: exact for
    # these sums. 2**53 + 0.5 is no double (it rounds to 2**53); the pair (2**53, 0.5) prints it.
    from schedulers.engine.hosts import exact_sum
    from schedulers.engine.outputs import _exact_f

    assert exact_sum([2.0 ** 53, 0.25, 0.25]) == 2.0 ** 53 + 0.0   # one rounding, of 2**53 + 0.5
    assert _exact_f(2.0 ** 53, 0.5) == "9007199254740992.500000"
    # rounded on the exact value, as glibc's printf (a dyadic value is never half-way at 6 decimals)
    assert _exact_f(1.0, 2.0 ** -30) == "1.000000"          # 1.00000000093...: down
    assert _exact_f(0.5, 2.0 ** -20) == "0.500001"          # 0.50000095367...: up
    assert _exact_f(0.5, 5e-7) == "0.500000"                # the double 5e-7 is 4.99999999...e-7
    # overflow: inf (for the output check to name), not an exception
    assert exact_sum([1e308, 1e308]) == math.inf
    assert math.isnan(exact_sum([math.inf, -math.inf]))


def test_large_platforms_keep_a_running_total_that_agrees_with_the_hosts_sum(tmp_path, monkeypatch):
    # Above EXACT_HOSTS hosts (and EXACT_WORK host-jobs) the engine keeps the platform's energy as a running sum instead of
    # reading every host at each row; both are sums of the same per-host charges, so they agree to
    # the rounding of a double: energies within 1e-12 relative, epower within 1e-7 (the running
    # sum's rounding over a row's interval is kept below that; over shorter intervals the hosts'
    # own steps are summed, from the energy each had at the previous row)
    import random
    import schedulers.engine.hosts as hosts_module
    from schedulers.inputs.generators import homogeneous_platform_xml

    plat = tmp_path / "p.xml"
    plat.write_text(homogeneous_platform_xml(80, 1, 1e9), encoding="utf-8")
    rng = random.Random(3)
    jobs = [{"id": str(i), "subtime": float(rng.randrange(0, 400, 10)), "walltime": -1,
             "res": rng.randint(1, 20), "profile": f"p{i % 3}"} for i in range(120)]
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({"nb_res": 80, "jobs": jobs, "profiles": {
        "p0": {"type": "delay", "delay": 37.5}, "p1": {"type": "parallel_homogeneous", "cpu": 3e10, "com": 0},
        "p2": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}}))
    got = {}
    monkeypatch.setattr(hosts_module, "EXACT_WORK", 0)   # (this small run would be exact by size)
    for limit in (1000, 0):   # every host read at each row / the running sum
        monkeypatch.setattr(hosts_module, "EXACT_HOSTS", limit)
        simulate(plat, [wl], get_policy("easy"), energy=True, export_prefix=tmp_path / f"o{limit}" / "out_")
        got[limit] = rows(tmp_path / f"o{limit}" / "out_consumed_energy.csv")
    assert len(got[0]) == len(got[1000]) > 200
    for a, b in zip(got[1000], got[0]):
        assert (a["time"], a["event_type"]) == (b["time"], b["event_type"])
        assert float(b["energy"]) == pytest.approx(float(a["energy"]), rel=1e-12)
        assert (a["epower"] == "NA") == (b["epower"] == "NA")
        if a["epower"] != "NA":
            assert float(b["epower"]) == pytest.approx(float(a["epower"]), rel=1e-7)
