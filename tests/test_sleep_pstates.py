"""Several sleep pstates on one host (``sleep_pstates="1:3:2, 4:3:2"``), the property read as
real Batsim 4.2.1 reads it, and a host declared at a sleep pstate (``fixtures/batsim_sleep_pstates``,
recorded on real Batsim 4.2.1; the README works the energies out by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedulers.core.model import Host, parse_sleep_pstates
from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.outputs import energy_rows, job_rows
from schedulers.engine.platform import check_compute_speeds, read_platform
from schedulers.inputs.errors import PlatformError
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_sleep_pstates"


def _run(platform: str, workload: str, policy):
    engine = build_engine(FIX / platform, [str(FIX / workload)], energy=True)
    return engine, engine.run(InProcessPort(policy))


def _lines(name: str) -> list[str]:
    return (FIX / name).read_text().splitlines()


def test_each_sleep_pstate_switches_through_its_own_virtual_pstates():
    engine, result = _run("p.xml", "w.json", get_policy(f"{FIX / 'sleeper.py'}:Sleeper"))
    assert job_rows(result) == _lines("out_jobs.csv")
    assert energy_rows(result) == _lines("out_consumed_energy.csv")
    # b reaches pstate 4 through pstate 5 (4 s), a through 3 (2 s): the group completes at t = 4;
    # b wakes through 6 (5 s), a through 2 (10 s): at t = 14; pstate 1 is 2 s off, 10 s on for both
    pstates = _lines("out_pstate_changes.csv")
    assert pstates == ["time,machine_id,new_pstate", "0,0-1,0", "0,0-1,-2", "4,0-1,4", "4,0-1,-1", "14,0-1,0",
                       "20,0-1,-2", "22,0-1,1", "22,0-1,-1", "32,0-1,0"]
    assert [ln.split(",")[1] for ln in _lines("out_jobs.csv")[1:]] == ["w0", "w0"]
    assert result.schedule["consumed_joules"] == pytest.approx(4940.0)   # by hand (README)


def test_a_host_declared_at_a_sleep_pstate_starts_idle_and_is_charged_pstate_0_until_t_3():
    engine, result = _run("init.xml", "w1.json", get_policy("fcfs"))
    assert job_rows(result) == _lines("init_jobs.csv")
    assert energy_rows(result) == _lines("init_consumed_energy.csv")
    # 0-3 s: a idle at pstate 0 (100 W) + b at pstate 4 charged as pstate 0 (100 W): 600 J
    assert energy_rows(result)[2] == "3.000000,600.000000,e,105.000000,200.000000"


@pytest.mark.parametrize("raw, want", [
    ("1:3:2", ((1, 3, 2),)),
    ("1:3:2, 4:3:2", ((1, 3, 2), (4, 3, 2))),
    ("1::3:2,,4:5:6", ((1, 3, 2), (4, 5, 6))),          # runs of separators count as one
    (" 1 : 3 : 2 ", ((1, 3, 2),)),
    ("+1:3:2", ((1, 3, 2),)),
    ("-1:3:2", ((-1, 3, 2),)),                           # unsigned 4294967295, then the int -1
])
def test_parse_sleep_pstates_as_batsim(raw, want):
    assert parse_sleep_pstates(raw) == want


#: ``b``'s property on p.xml, run on real Batsim 4.2.1 with -E: None where it runs, else the
#: words of the engine's one-line refusal (Batsim aborts at start).
BATSIM_VERDICTS = [
    ("1:3:2, 4:1:5", "pstate 1 is a virtual transition pstate and also a sleep pstate"),
    ("", "whereas '' is not valid"),
    ("1:3:2,", "whereas '' is not valid"),
    ("-1:3:2", "pstate -1 does not exist"),
    ("1:3:2;4:5:6", "whereas '1:3:2;4:5:6' is not valid"),
    ("1:3:2, 3:4:5", None),   # Batsim logs an error (3 is both) and goes on: 3 becomes a sleep pstate
    ("1:1:2", None),
    ("1:3:2, 1:5:6", None),   # logged: pstate 1 given twice; the second triple wins
    ("1::3:2", None),
    ("+1:3:2", None),
]


@pytest.mark.parametrize("prop, refusal", BATSIM_VERDICTS)
def test_sleep_pstates_batsim_refuses(tmp_path, prop, refusal):
    p = tmp_path / "q.xml"
    p.write_text((FIX / "p.xml").read_text().replace('value="1:3:2,4:5:6"', f'value="{prop}"'))
    spec = read_platform(p)
    check_compute_speeds(spec, energy=False)   # without -E Batsim does not read the property
    if refusal is None:
        check_compute_speeds(spec, energy=True)
        return
    with pytest.raises(PlatformError) as exc:
        check_compute_speeds(spec, energy=True)
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(f"{p}: host 'b': sleep_pstates") and refusal in msg


def test_pstate_classes_follow_batsims_order_of_assignment():
    def kinds(prop):
        spec = read_platform("<t>", text=(FIX / "p.xml").read_text().replace('value="1:3:2,4:5:6"',
                                                                                 f'value="{prop}"'))
        b = next(h for h in spec.compute if h.name == "b")
        return b.pstate_kinds, b.sleep_switch
    # "1:1:2": 1 is first a sleep pstate, then its own OFF: a transition pstate no request reaches
    assert kinds("1:1:2") == ({1: "transition", 2: "transition"}, {1: (1, 2)})
    # "1:3:2, 3:4:5": 3 (OFF of the first) becomes a sleep pstate of its own
    assert kinds("1:3:2, 3:4:5") == ({1: "sleep", 2: "transition", 3: "sleep", 4: "transition", 5: "transition"},
                                     {1: (3, 2), 3: (4, 5)})


def test_policy_view_of_several_sleep_pstates():
    h = Host(id=0, name="a", properties={"sleep_pstates": "1:3:2, 4:5:6"})
    assert h.sleep_pstates == (1, 3, 2)          # the first: the one policies switch to
    assert h.special_pstates == frozenset({1, 2, 3, 4, 5, 6})
