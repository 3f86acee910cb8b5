"""Numbers as Batsim reads them (RapidJSON 1.1.0, default flags): ``schedulers.inputs.batsim_numbers``,
checked against doubles recorded from RapidJSON itself (``fixtures/rapidjson_numbers.txt``) and by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedulers.batsim.protocol import decode_decisions
from schedulers.core.events import CallMeLater, ExecuteJob
from schedulers.engine.ports import InProcessPort, as_batsim_reads
from schedulers.inputs.batsim_numbers import batsim_float, batsim_float_of, rapidjson_double
from schedulers.inputs.jsonfile import batsim_number, read_json

FIX = Path(__file__).parent / "fixtures" / "rapidjson_numbers.txt"


def _recorded():
    out = []
    for line in FIX.read_text().splitlines():
        if line.startswith("#"):
            continue
        token, hexa = line.split()
        out.append((token, float.fromhex(hexa)))
    return out


def test_every_recorded_number_reads_as_rapidjson_reads_it():
    recorded = _recorded()
    assert len(recorded) > 300
    wrong = [(t, v, rapidjson_double(t)) for t, v in recorded if rapidjson_double(t) != v or batsim_float(t) != v]
    assert wrong == []
    # the fixture holds numbers where RapidJSON is not correctly rounded: the test can tell
    assert sum(float(t) != v for t, v in recorded) >= 250


def test_a_17_digit_subtime_by_hand():
    # the digits as an integer, rounded to a double (8 apart above 2**53), divided by 1e14
    assert float(10879494227531521) == 10879494227531520.0
    assert rapidjson_double("108.79494227531521") == 10879494227531520.0 / 1e14 == 108.7949422753152
    assert float("108.79494227531521") == 108.79494227531521 != 108.7949422753152
    assert rapidjson_double("53.816294074764116").hex() == (53816294074764112.0 / 1e15).hex()


@pytest.mark.parametrize("token", ["0.1", "1440.49", "-3.25", "123456.789012", "0.000001", "99999999999999.9"])
def test_up_to_15_digits_without_exponent_read_as_the_nearest_double(token):
    assert rapidjson_double(token) == float(token) == batsim_float(token)


def test_exponents_go_through_the_power_of_ten_table():
    # 1e-30: 1 / (the double nearest 1e30), rounded once: not always the double nearest 1e-30
    assert rapidjson_double("1e-30") == 1.0 / 1e30
    assert rapidjson_double("2.5E+3") == 2500.0
    assert rapidjson_double("1e-400") == 0.0  # below 1e-308 twice divided, then 0
    assert rapidjson_double("1e999") == float("inf")  # RapidJSON: number too big


def test_workloads_and_replies_are_read_with_batsim_numbers(tmp_path):
    w = tmp_path / "w.json"
    w.write_text('{"jobs": [{"id": 1, "subtime": 108.79494227531521}], "profiles": {}}')
    assert read_json(w)["jobs"][0]["subtime"] == 108.79494227531521
    assert read_json(w, parse_float=batsim_number)["jobs"][0]["subtime"] == 108.7949422753152
    reply = json.dumps({"now": 1.5, "events": [
        {"timestamp": 1.5, "type": "CALL_ME_LATER", "data": {"timestamp": 108.79494227531521}}]})
    now, decisions = decode_decisions(reply)
    assert decisions[0].at == 108.7949422753152


def test_in_process_decisions_get_the_times_batsim_would_read():
    class P:
        def decide(self, now, events):
            return [ExecuteJob(job_id="j", alloc=None), CallMeLater(at=108.79494227531521), CallMeLater(at=5.5)]

    out = InProcessPort(P()).exchange(1.0, [])
    assert out[1].at == 108.7949422753152 == batsim_float_of(108.79494227531521)
    assert out[2].at == 5.5
    same = [CallMeLater(at=5.5)]
    assert as_batsim_reads(same) is same  # nothing to change: the list itself
