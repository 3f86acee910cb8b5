"""The embedded engine against real Batsim 4.2.1 (shared/batsim-4.2.1).

For each recorded transcript, the engine is fed the *recorded scheduler replies* and must produce
the *recorded Batsim messages*: same events, same grouping into messages, same timestamps (to 6
decimals, as Batsim writes them), energy answers within 1e-6 relative. The output files Batsim
wrote for those runs must match (times exactly, energies within 1e-6 relative).

Transcripts whose workload file is not in shared/ (Batsim's own test workloads) are rebuilt from
the transcript itself: the jobs from JOB_SUBMITTED events, the profiles from SIMULATION_BEGINS.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from schedulers.batsim.protocol import decode_decisions, encode_message
from schedulers.engine import build_engine, write_outputs

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
BATSIM = SHARED / "batsim-4.2.1"
DATA = SHARED / "data"

pytestmark = pytest.mark.skipif(not BATSIM.is_dir(), reason="../shared/batsim-4.2.1 is not available")


def _lines(name: str) -> list[dict]:
    return [json.loads(line) for line in (BATSIM / "transcripts" / name).read_text().splitlines() if line.strip()]


def _workload_from_transcript(lines: list[dict]) -> dict:
    """Rebuild a Batsim workload from a transcript (jobs of JOB_SUBMITTED, profiles of SIMULATION_BEGINS)."""
    sb = lines[0]["msg"]["events"][0]["data"]
    profiles = sb["profiles"]["w0"]
    jobs = []
    for rec in lines:
        if rec["dir"] != "batsim->sched":
            continue
        for ev in rec["msg"]["events"]:
            if ev["type"] == "JOB_SUBMITTED":
                job = dict(ev["data"]["job"])
                job["id"] = job["id"].split("!", 1)[1]
                jobs.append(job)
    return {"nb_res": sb["nb_compute_resources"], "jobs": jobs, "profiles": profiles}


CASES = {
    # transcript: (platform, workload or None (rebuilt), energy, forward profiles, outputs folder)
    "mini_sched_demo_energy.jsonl": (BATSIM / "inputs/energy_platform_homogeneous_no_net.xml",
                                     BATSIM / "inputs/demo_small.json", True, False, "demo"),
    "mini_sched_reject_kill_forwardprofiles.jsonl": (BATSIM / "inputs/energy_platform_homogeneous_no_net.xml",
                                                     BATSIM / "inputs/demo_small.json", False, True, "edge"),
    "pybatsim_easyBackfill_energy128_various.jsonl": (DATA / "batsim-examples/energy_platform_homogeneous_no_net_128.xml",
                                                      None, True, False, "run3"),
    "pybatsim_fcfsSchedSleep_intfix_6pstates.jsonl": (BATSIM / "inputs/energy_6pstates_4hosts.xml",
                                                      None, True, False, None),
}


def _close(a, b, rel=1e-6, abs_=1e-6) -> bool:
    return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=abs_)


def _same_json(got, exp, path="") -> None:
    """Recursive equality; floats compared at Batsim's 6-decimal precision, energies at 1e-6 rel."""
    if isinstance(exp, dict):
        assert isinstance(got, dict), f"{path}: expected an object, got {got!r}"
        assert set(got) == set(exp), f"{path}: keys {sorted(got)} != {sorted(exp)}"
        for k in exp:
            _same_json(got[k], exp[k], f"{path}.{k}")
    elif isinstance(exp, list):
        assert isinstance(got, list) and len(got) == len(exp), f"{path}: {got!r} != {exp!r}"
        for i, (g, e) in enumerate(zip(got, exp)):
            _same_json(g, e, f"{path}[{i}]")
    elif isinstance(exp, (int, float)) and not isinstance(exp, bool):
        assert isinstance(got, (int, float)) and _close(got, exp), f"{path}: {got!r} != {exp!r}"
    else:
        assert got == exp, f"{path}: {got!r} != {exp!r}"


class TranscriptPort:
    """Plays the recorded scheduler: checks each engine message, answers the recorded reply."""

    def __init__(self, lines: list[dict]) -> None:
        self.batsim = [r["msg"] for r in lines if r["dir"] == "batsim->sched"]
        self.replies = [r["msg"] for r in lines if r["dir"] == "sched->batsim"]
        self.i = 0

    def exchange(self, now, events):
        assert self.i < len(self.batsim), f"engine sent an extra message at t={now}: {[type(e).__name__ for e in events]}"
        got = json.loads(encode_message(now, events))
        exp = self.batsim[self.i]
        where = f"message #{self.i} (t={exp['now']})"
        assert [e["type"] for e in got["events"]] == [e["type"] for e in exp["events"]], \
            f"{where}: events {[e['type'] for e in got['events']]} != {[e['type'] for e in exp['events']]}"
        if exp["events"][0]["type"] == "SIMULATION_BEGINS":
            g, e = got["events"][0]["data"], exp["events"][0]["data"]
            for key in ("nb_resources", "nb_compute_resources", "allow_compute_sharing", "config",
                        "compute_resources", "profiles"):
                _same_json(g[key], e[key], f"{where}.{key}")
        else:
            _same_json(got, exp, where)
        _, decisions = decode_decisions(self.replies[self.i])
        self.i += 1
        return decisions


def _run(name: str, tmp_path: Path):
    platform, workload, energy, forward, _ = CASES[name]
    if not platform.exists():
        pytest.skip(f"{platform} is not available")
    lines = _lines(name)
    wl = workload if workload is not None else _workload_from_transcript(lines)
    engine = build_engine(platform, [wl], energy=energy, forward_profiles=forward)
    port = TranscriptPort(lines)
    result = engine.run(port)
    assert port.i == len(port.batsim), f"engine stopped after {port.i} of {len(port.batsim)} messages"
    write_outputs(result, tmp_path / "out_", energy=energy)
    return result


@pytest.mark.parametrize("name", sorted(CASES))
def test_engine_reproduces_recorded_batsim_messages(name, tmp_path):
    _run(name, tmp_path)


def _read_csv(p: Path) -> list[dict]:
    with p.open() as f:
        return list(csv.DictReader(f))


ENERGY_COLUMNS = {"consumed_energy", "energy", "wattmin", "epower", "consumed_joules"}
IGNORED = {"scheduling_time", "simulation_time"}  # wall-clock measurements of the real run


@pytest.mark.parametrize("name", [n for n, c in sorted(CASES.items()) if c[4]])
def test_engine_output_files_match_batsim(name, tmp_path):
    _run(name, tmp_path)
    folder = BATSIM / "outputs" / CASES[name][4]
    for ref in sorted(folder.glob("out_*.csv")):
        mine = tmp_path / ref.name
        assert mine.exists(), f"{ref.name} not written"
        exp, got = _read_csv(ref), _read_csv(mine)
        assert len(got) == len(exp), f"{ref.name}: {len(got)} rows != {len(exp)}"
        with ref.open() as fe, mine.open() as fg:  # headers too, even of files without rows
            assert csv.DictReader(fg).fieldnames == csv.DictReader(fe).fieldnames, f"{ref.name}: columns differ"
        for i, (g, e) in enumerate(zip(got, exp)):
            assert list(g) == list(e), f"{ref.name}: columns differ"
            for col in e:
                if col in IGNORED:
                    continue
                if col in ENERGY_COLUMNS and e[col] not in ("NA", ""):
                    assert g[col] != "NA" and _close(g[col], e[col], 1e-6, 1e-6), \
                        f"{ref.name} row {i} {col}: {g[col]} != {e[col]}"
                else:
                    assert g[col] == e[col], f"{ref.name} row {i} {col}: {g[col]!r} != {e[col]!r}"


def test_a_job_ending_with_a_switch_writes_its_machine_state_row_first(tmp_path):
    # Recorded on real Batsim 4.2.1 (2026-11-24): the replay of pybatsim_fcfsSchedSleep_intfix_6pstates
    # (Batsim's test_delays.json, energy_6pstates_4hosts.xml, -E). At t = 43 host 2's 20-s switch-on
    # and a 10-s job end in one step; the job's actor writes its row when it wakes, the switch actor
    # only after its set_pstate simcall (switch_on_machine_process, src/pstate.cpp), so the job's
    # row (one host computing -> idle) comes first, then the switch's (switching_on -> idle).
    _run("pybatsim_fcfsSchedSleep_intfix_6pstates.jsonl", tmp_path)
    at43 = [r for r in _read_csv(tmp_path / "out_machine_states.csv") if r["time"] == "43"]
    cols = ("nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle", "nb_computing")
    assert [tuple(int(r[c]) for c in cols) for r in at43] == [
        (1, 1, 0, 1, 1), (1, 0, 0, 2, 1), (1, 0, 0, 1, 2), (0, 1, 0, 1, 2), (0, 1, 0, 0, 3)]
