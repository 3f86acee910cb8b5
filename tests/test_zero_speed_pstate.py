"""A pstate of speed 0 draws its full-load power (SimGrid 3.32's energy plugin), recorded on real
Batsim 4.2.1 in ``fixtures/batsim_zero_speed_sleep`` (its README works the numbers by hand)."""

from __future__ import annotations

from pathlib import Path

from schedulers.cli import main
from schedulers.engine import simulate
from schedulers.registry import get_policy
from recorded import rows

FIX = Path(__file__).parent / "fixtures" / "batsim_zero_speed_sleep"


def test_an_asleep_host_at_speed_0_draws_its_full_load_power(tmp_path):
    # the README's table: (time, total energy, epower) at each row
    hand = [("5.000000", "1000.000000"), ("6.000000", "1150.000000"), ("20.000000", "2686.500000"),
            ("25.000000", "3235.250000"), ("26.000000", "3295.000000"), ("30.000000", "3373.000000"),
            ("30.500000", "3433.000000"), ("31.500000", "3833.000000")]
    recorded = [(r["time"], r["energy"]) for r in rows(FIX / "consumed_energy.csv")]
    assert all(h in recorded for h in hand)
    assert [r["epower"] for r in rows(FIX / "consumed_energy.csv") if r["time"] == "30.000000"] == ["19.500000"]
    simulate(FIX / "platform.xml", [FIX / "workload.json"], get_policy("fcfs", {"idle_timeout": 5}),
             energy=True, export_prefix=tmp_path / "out_")
    for name in ("jobs", "consumed_energy", "pstate_changes", "machine_states"):
        assert (tmp_path / f"out_{name}.csv").read_text() == (FIX / f"{name}.csv").read_text(), name


def test_idle_timeout_needs_a_speed_only_for_the_switching_pstates(tmp_path, capsys):
    # the sleep pstate may be 0f (above); a switch-off pstate of speed 0 would never end its flop
    xml = (FIX / "platform.xml").read_text().replace('speed="1Gf, 0f, 1f, 2f"', 'speed="1Gf, 0f, 0f, 2f"')
    plat = tmp_path / "p.xml"
    plat.write_text(xml)
    code = main(["run", "--policy", "fcfs", "--policy-options", '{"idle_timeout": 5}', "-p", str(plat),
                 "-w", str(FIX / "workload.json"), "-E", "-o", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1].startswith("gridsched: error: policy 'fcfs', option 'idle_timeout': host 'h0'")
    assert "pstate 2 has no speed > 0" in err[-1]


def test_policies_read_the_same_power_at_a_pstate_of_speed_0():
    from schedulers.core.model import Host
    from schedulers.core.power import draw

    h = Host(id=0, name="a", speeds=[1e9, 0.0], cores=2, properties={"wattage_per_state": "100:200, 5:9.75"})
    assert (draw(h, 0, 0), draw(h, 1, 0)) == (100.0, 150.0)   # idle; one core of two: 100 + 100 x 1/2
    assert (draw(h, 0, 1), draw(h, 1, 1)) == (9.75, 9.75)     # speed 0: full load whatever runs
