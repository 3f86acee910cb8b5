"""Energy (``-E``) on platforms with storage hosts in the embedded engine, against real Batsim
4.2.1's outputs recorded in ``fixtures/batsim_pfs_energy`` (README there: the platforms, the cases
and the recording commands): the storage hosts' power in every ``out_consumed_energy.csv`` row,
their ids in ``out_pstate_changes.csv``, and Batsim's abort when one lacks ``wattage_per_state``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from schedulers.engine import simulate
from schedulers.engine.ports import EngineError
from schedulers.registry import get_policy
from recorded import rows, schedule_rows

FIX = Path(__file__).parent / "fixtures" / "batsim_pfs_energy"
PFS = Path(__file__).parent / "fixtures" / "batsim_pfs"
sys.path.insert(0, str(Path(__file__).parent.parent / "scripts"))
from compare_with_batsim import same_file  # noqa: E402

MAP = {"pfs": 5, "bb": 4, "scratch": 4}   # Batsim's ids: compute 0-3, then storage by name: bb 4, pfs 5
KILL = {"read": 0.5, "stage": 1.5, "seq": 1.2, "after": 3.0001}

#: SET_RESOURCE_STATE requests of case switch_storage_io: [t, machine ids, pstate] (pfs = 5)
SWITCHES = [[0.5, [5], 0], [2, [5], 1], [6, [0, 5], 0], [11, [5], 1]]

#: case -> (platform, workload, policy: None (fcfs), green-heft options (key "green") or Mapper
#: options, compute sharing)
CASES = {
    "idle": ("platform_power.xml", FIX / "idle.json", None, False),
    "two": ("platform_power.xml", PFS / "two.json", {"storage_mapping": MAP}, False),
    "sharing": ("platform_power.xml", PFS / "two.json", {"storage_mapping": MAP, "pack": True}, True),
    "kill": ("platform_power.xml", PFS / "kill.json", {"storage_mapping": {"pfs": 5, "bb": 4}, "kill_at": KILL},
             False),
    "pstates_io": ("platform_pstates.xml", PFS / "two.json", {"storage_mapping": MAP}, False),
    "switch": ("platform_pstates.xml", FIX / "idle.json", {"green": {"idle_timeout": 1, "delta": 0}}, False),
    "nolinks": ("platform_nolinks.xml", PFS / "one.json", None, False),
    "lazy": ("platform_power.xml", FIX / "lazy.json", {"storage_mapping": MAP}, False),
    "zero_speed": ("platform_zero.xml", PFS / "two.json", {"storage_mapping": MAP}, False),
    "switch_storage": ("platform_pstates.xml", FIX / "idle.json", {"raw_switch": True}, False),
    "switch_storage_io": ("platform_pstates.xml", PFS / "two.json", {"storage_mapping": MAP, "switches": SWITCHES},
                          False),
}
FILES = ("jobs.csv", "consumed_energy.csv", "pstate_changes.csv", "machine_states.csv")


def _policy(options: dict | None):
    if options is None:
        return get_policy("fcfs")
    if "green" in options:
        return get_policy("green-heft", options["green"])
    if "raw_switch" in options:
        return _load(FIX / "switch_storage.py").SwitchStorage()
    if "switches" in options:
        return _load(FIX / "switch_at.py").SwitchAt(options)
    return _load(PFS / "mapper.py").Mapper(options)


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"batsim_pfs_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def engine_runs(tmp_path_factory) -> dict[str, Path]:
    out = {}
    for case, (platform, workload, options, sharing) in CASES.items():
        d = tmp_path_factory.mktemp(case)
        simulate(FIX / platform, [workload], _policy(options), energy=True, compute_sharing=sharing,
                 export_prefix=d / "out_")
        out[case] = d
    return out


def _energy(case: str) -> list[dict]:
    return rows(FIX / case / "consumed_energy.csv")


def test_recordings_hold_the_hand_worked_numbers():
    # wattmin: 4 compute hosts of 100 W + storage hosts bb 20 W and pfs 30 W (their Epsilon = Idle)
    for case in ("idle", "two", "sharing", "kill"):
        assert {float(r["wattmin"]) for r in _energy(case)} == {450.0}, case
    # bb at speed 0: SimGrid charges it at full load (50 W), also idle: 400 + 30 + 50 W
    first = _energy("zero_speed")[3]
    assert float(first["energy"]) == pytest.approx(480 * 1.00015, abs=1e-6) and float(first["wattmin"]) == 450.0
    # pfs declared at its pstate 1 (12 W)
    assert {float(r["wattmin"]) for r in _energy("pstates_io")} == {432.0}
    # storage hosts idle while bytes flow: 3 transfers from t = 0 on, no flops: 450 W throughout
    first = _energy("two")[3]
    assert (float(first["time"]), float(first["energy"])) == (1.00015, pytest.approx(450 * 1.00015, abs=1e-6))
    assert float(first["epower"]) == 450.0
    # pfs at pstate 1 draws its 12 W from the first read on (a few 1e-10 s after t = 0)
    first = _energy("pstates_io")[3]
    assert float(first["energy"]) == pytest.approx(432 * 1.00015, abs=1e-6)
    # idle: c2 computes 2 s on 2 hosts (+100 W each) during [1, 3]; 450 W all along
    last = _energy("idle")[-1]
    assert float(last["energy"]) == pytest.approx(450 * 10.5 + 2 * 2 * 100, abs=1e-6)
    # a job's consumed_energy counts its own hosts only, never the storage hosts
    jobs = {r["job_id"]: float(r["consumed_energy"]) for r in rows(FIX / "two" / "jobs.csv")}
    assert jobs["write_pfs"] == pytest.approx(100 * 1.00015, abs=1e-6)
    # lazy: job z computes 1 s on h0-h1, stages 5e8 bytes from bb to pfs (500 MBps: 1 s + 70 us),
    # computes 1 s again. The staging's task holds bb and pfs only: its end updates neither h0 nor
    # h1, and the second compute, starting on 2 hosts, updates them only at its end, charging
    # its 200 W back to the first compute's end: 2 x 200 W x 3.00007 s, not 2 x (400 + 100.007)
    z = rows(FIX / "lazy" / "jobs.csv")[0]
    assert float(z["consumed_energy"]) == pytest.approx(2 * 200 * 3.00007, abs=1e-6)
    # out_pstate_changes.csv lists every machine, storage hosts included (pfs at pstate 1)
    assert [r["machine_id"] for r in rows(FIX / "pstates_io" / "pstate_changes.csv")] == ["0-4", "5"]
    assert [r["machine_id"] for r in rows(FIX / "idle" / "pstate_changes.csv")] == ["0-5"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_engine_equals_real_batsim(engine_runs, case):
    got = engine_runs[case]
    for name in FILES:
        assert same_file(got / f"out_{name}", FIX / case / name), (case, name)
    assert schedule_rows(got / "out_schedule.csv") == schedule_rows(FIX / case / "schedule.csv")


def test_storage_host_without_power_is_refused_in_one_line():
    # real Batsim 4.2.1 aborts at the first energy read (the first submission): "No power range
    # properties specified for host bb" (bb: machine 4, read before pfs)
    with pytest.raises(EngineError) as err:
        simulate(FIX / "platform_nowatt.xml", [FIX / "idle.json"], get_policy("fcfs"), energy=True)
    msg = str(err.value)
    assert "\n" not in msg and "platform_nowatt.xml" in msg and "missing on bb, pfs" in msg
    assert "No power range properties specified for host bb" in msg
    # without -E nothing reads their power
    assert len(simulate(FIX / "platform_nowatt.xml", [FIX / "idle.json"], get_policy("fcfs")).jobs) == 3


def test_storage_machine_switches_change_its_power():
    # switch_storage_io: pfs (machine 5; 30 W at pstate 0, 12 W at pstate 1, declared at 1) is
    # switched to 0 at t = 0.5, back to 1 at 2, to 0 with h0 at 6 and to 1 at 11, while IO jobs
    # run: each switch is instantaneous (transition row -1 then the pstate, at the same time),
    # wattmin follows pfs's Epsilon (432 <-> 450 W) and the energy its Idle power
    changes = [(r["time"], r["machine_id"], r["new_pstate"]) for r in rows(FIX / "switch_storage_io" / "pstate_changes.csv")]
    assert changes[2:] == [("0.5", "5", "-1"), ("0.5", "5", "0"), ("2", "5", "-1"), ("2", "5", "1"),
                           ("6", "0 5", "-1"), ("6", "0 5", "0"), ("11", "5", "-1"), ("11", "5", "1")]
    e = {(float(r["time"]), r["wattmin"]): float(r["energy"]) for r in _energy("switch_storage_io")}
    assert e[(0.5, "450.000000")] == pytest.approx(432 * 0.5, abs=1e-6)
    assert e[(2.0, "432.000000")] == pytest.approx(432 * 0.5 + 450 * 1.5, abs=1e-6)
    assert e[(2.80007, "432.000000")] == pytest.approx(891 + 432 * 0.80007, abs=1e-6)
    sched = rows(FIX / "switch_storage_io" / "schedule.csv")[0]
    assert (sched["nb_grouped_switches"], sched["nb_machine_switches"]) == ("4", "5")
    # the machine states count the compute hosts only: no switching storage host there
    assert {r["nb_switching_on"] + r["nb_switching_off"]
            for r in rows(FIX / "switch_storage_io" / "machine_states.csv")} == {"00"}


def test_storage_machine_switch_off_is_refused_in_one_line(tmp_path):
    # the engine changes a storage host's pstate between computation pstates only (DVFS):
    # switching one to a sleep pstate is refused in one line naming the machine and pstates
    xml = (FIX / "platform_pstates.xml").read_text().replace(
        '<host id="pfs" speed="1Gf, 0.5Gf" pstate="1"><prop id="role" value="storage"/><prop id="wattage_per_state" '
        'value="30.0:80.0, 12.0:40.0"/>',
        '<host id="pfs" speed="1Gf, 1Mf, 0.5f, 0.25f"><prop id="role" value="storage"/><prop id="wattage_per_state" '
        'value="30.0:80.0, 12.0:12.0, 40:40, 40:40"/><prop id="sleep_pstates" value="1:2:3"/>')
    assert 'sleep_pstates" value="1:2:3"/></host>\n  <host id="bb"' in xml
    (tmp_path / "p.xml").write_text(xml)
    with pytest.raises(EngineError) as err:
        simulate(tmp_path / "p.xml", [FIX / "idle.json"], _policy({"switches": [[0, [5], 1]]}), energy=True)
    msg = str(err.value)
    assert "\n" not in msg and "machine 5 (pfs, a storage host)" in msg and "pstate 0 (computation) to 1 (sleep)" in msg
    with pytest.raises(EngineError, match="machine 5 .* has no pstate 7"):
        simulate(FIX / "platform_pstates.xml", [FIX / "idle.json"], _policy({"switches": [[0, [5], 7]]}), energy=True)
