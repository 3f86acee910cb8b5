"""``wattmin`` of ``out_consumed_energy.csv``: the Epsilon powers of the hosts' current pstates
summed afresh at each row, as Batsim 4.2.1 does (``Machines::total_wattmin``), recorded on real
Batsim (``fixtures/batsim_wattmin_sum``)."""

from __future__ import annotations

from pathlib import Path

from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.outputs import write_outputs
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_wattmin_sum"


def _run(tmp_path):
    engine = build_engine(str(FIX / "p.xml"), [str(FIX / "w.json")], energy=True, trace_outputs=True)
    result = engine.run(InProcessPort(get_policy("easy", {"idle_timeout": 0})))
    write_outputs(result, tmp_path / "out_", energy=True)
    return engine, result


def test_the_sum_of_three_epsilons_on_a_tie():
    # 3 x 101.5057845 = 304.5173535 in decimal; the double 101.5057845 is a little above it, so
    # the exact sum of three prints 304.517354 (as Batsim's long double sum does)
    assert "%f" % (101.5057845 + 101.5057845 + 101.5057845) == "304.517354"
    # a running double sum, updated at each pstate change Batsim recorded (out_pstate_changes.csv:
    # -2 is switching off, pstate 2 here, -1 switching on, pstate 3), does not come back to it
    eps = {0: 101.5057845, 1: 10.5682118, 2: 128.73148821, 3: 122.8333754}
    at = [0, 0, 0]
    w = eps[0] + eps[0] + eps[0]
    for line in (FIX / "out_pstate_changes.csv").read_text().splitlines()[2:]:
        t, hosts, pstate = line.split(",")
        new = {-2: 2, -1: 3}.get(int(pstate), int(pstate))
        first, _, last = hosts.partition("-")
        for h in range(int(first), int(last or first) + 1):
            w += eps[new] - eps[at[h]]
            at[h] = new
    assert at == [0, 0, 0] and "%f" % w == "304.517353"


def test_wattmin_recorded_on_real_batsim(tmp_path):
    _, result = _run(tmp_path)
    assert (tmp_path / "out_pstate_changes.csv").read_text() == (FIX / "out_pstate_changes.csv").read_text()
    assert (tmp_path / "out_consumed_energy.csv").read_text() == (FIX / "out_consumed_energy.csv").read_text()
    # every row where the three hosts compute or idle at pstate 0 prints Batsim's 304.517354
    rows = [line.split(",") for line in (tmp_path / "out_consumed_energy.csv").read_text().splitlines()[1:]]
    assert [r[0] for r in rows if r[3] == "304.517354"] == ["0.000000", "802.520000", "802.520000", "832.520000"]
