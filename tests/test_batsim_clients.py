"""Batsim clients no one here wrote -- batsched 1.4.0's algorithms and pybatsim 4.0.0a0's
schedulers -- on the embedded engine, against their runs on real Batsim 4.2.1
(``fixtures/batsim_clients``, README: how each was recorded).

Each recorded run is replayed on the engine: it is fed the scheduler's recorded replies and must
send the recorded Batsim messages (same events, grouping and timestamps, energies within 1e-6
relative), then write Batsim's files (``out_jobs.csv``, ``out_schedule.csv``,
``out_consumed_energy.csv``, ``out_machine_states.csv``, ``out_pstate_changes.csv``): times and
states as Batsim printed them, energies within 1e-6 relative. With ``batsched`` on PATH (or
``$BATSCHED``) the algorithms are also run live through ``gridsched engine``, and so is
pybatsim's EASY when pybatsim is installed.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from schedulers.batsim.protocol import decode_decisions, encode_message
from schedulers.engine import build_engine, write_outputs
from schedulers.engine.execution import check_default_mapping
from schedulers.engine.ports import EngineError, Reply
from helpers_cli import engine_with_client
from test_engine_conformance import _close, _same_json

FIX = Path(__file__).parent / "fixtures" / "batsim_clients"
FILES = ("jobs", "schedule", "consumed_energy", "machine_states", "pstate_changes")
ENERGY = {"consumed_energy", "energy", "wattmin", "epower", "consumed_joules"}
WALL_CLOCK = {"scheduling_time", "simulation_time"}   # wall clocks of the recorded run

#: recorded run -> (engine options as `gridsched engine` flags, batsched's arguments or None)
CASES = {
    "bs_filler": ([], ["-v", "filler"]),
    "bs_energy_bf": ([], ["-v", "energy_bf", "--variant_options_filepath", str(FIX / "energy_bf.json")]),
    "bs_sleeper": ([], ["-v", "sleeper", "--variant_options_filepath", str(FIX / "sleeper.json")]),
    "bs_killer": ([], ["-v", "killer"]),
    "bs_submitter": (["--enable-dynamic-jobs"], ["-v", "submitter"]),
    "bs_submitter_metadata": (["--enable-dynamic-jobs"],
                              ["-v", "submitter", "--variant_options_filepath", str(FIX / "submitter.json")]),
    "pyb_easy": ([], None),
    "pyb_filler_events": (["--events", str(FIX / "events.txt"), "--forward-unknown-events"], None),
}


def _engine(flags: list[str]):
    events = [flags[flags.index("--events") + 1]] if "--events" in flags else []
    return build_engine(FIX / "platform.xml", [FIX / "workload.json"], energy=True,
                        dynamic_jobs="--enable-dynamic-jobs" in flags, events=events,
                        forward_unknown_events="--forward-unknown-events" in flags)


class Replay:
    """The recorded scheduler: checks each message of the engine against Batsim's, answers the
    recorded reply (the transcript's format: ``tests/batsim_recorder.py``)."""

    def __init__(self, path: Path) -> None:
        lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        self.batsim = [r["msg"] for r in lines if r["dir"] == "batsim->sched"]
        self.replies = [r["msg"] for r in lines if r["dir"] == "sched->batsim"]
        self.i = 0

    def exchange(self, now, events):
        assert self.i < len(self.batsim), f"extra message at t={now}"
        got, exp = json.loads(encode_message(now, events)), self.batsim[self.i]
        where = f"message #{self.i} (t={exp['now']})"
        assert [e["type"] for e in got["events"]] == [e["type"] for e in exp["events"]], where
        if exp["events"][0]["type"] == "SIMULATION_BEGINS":
            for key in ("nb_resources", "compute_resources", "config", "profiles", "allow_compute_sharing"):
                _same_json(got["events"][0]["data"][key], exp["events"][0]["data"][key], f"{where}.{key}")
        else:
            _same_json(got, exp, where)
        reply = Reply(*decode_decisions(json.dumps(self.replies[self.i])))   # its now: busy schedulers
        self.i += 1
        return reply


def _rows(path: Path) -> list[dict]:
    with path.open() as f:
        return list(csv.DictReader(f))


def _assert_files_as_batsim(mine: Path, recorded: Path) -> None:
    for name in FILES:
        want, got = _rows(recorded / f"out_{name}.csv"), _rows(mine / f"out_{name}.csv")
        assert len(got) == len(want), f"out_{name}.csv: {len(got)} rows, Batsim {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert list(g) == list(w), f"out_{name}.csv: columns"
            for col, value in w.items():
                if col in WALL_CLOCK:
                    continue
                if col in ENERGY and value not in ("", "NA"):
                    assert _close(g[col], value), f"out_{name}.csv row {i} {col}: {g[col]} != {value}"
                else:
                    assert g[col] == value, f"out_{name}.csv row {i} {col}: {g[col]!r} != {value!r}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_recorded_client_replayed_on_the_engine_as_real_batsim(case, tmp_path):
    port = Replay(FIX / case / "messages.jsonl")
    result = _engine(CASES[case][0]).run(port)
    assert port.i == len(port.batsim), f"the engine stopped after {port.i} of {len(port.batsim)} messages"
    write_outputs(result, tmp_path / "out_", energy=True)
    _assert_files_as_batsim(tmp_path, FIX / case)


def test_recorded_runs_exercise_what_they_are_here_for():
    # read from Batsim's own files, so that a fixture recorded again still covers its feature
    def schedule(case):
        return _rows(FIX / case / "out_schedule.csv")[0]

    def sent(case):
        return [e for line in (FIX / case / "messages.jsonl").read_text().splitlines()
                for e in json.loads(line)["msg"]["events"] if json.loads(line)["dir"] == "sched->batsim"]

    assert all("mapping" in e["data"] for e in sent("bs_filler") if e["type"] == "EXECUTE_JOB")
    for case in ("bs_energy_bf", "bs_sleeper"):        # hosts put to sleep and woken again
        assert int(schedule(case)["nb_machine_switches"]) > 0 and float(schedule(case)["time_sleeping"]) > 0
    assert int(schedule("bs_killer")["nb_jobs_killed"]) > 2            # killed by KILL_JOB, not walltimes only
    assert int(schedule("bs_submitter")["nb_jobs"]) > len(json.loads((FIX / "workload.json").read_text())["jobs"])
    meta = [r["metadata"] for r in _rows(FIX / "bs_submitter_metadata" / "out_jobs.csv")]
    assert meta[0] == "just some metadata for job dynamic!0" and all(meta)      # SET_JOB_METADATA
    assert float(schedule("pyb_filler_events")["time_unavailable"]) == 42 + 112.5   # by hand: host 3 8-50 s, host 4 8-120.5 s
    notes = [e for line in (FIX / "pyb_filler_events" / "messages.jsonl").read_text().splitlines()
             for e in json.loads(line)["msg"]["events"] if e["type"] == "NOTIFY"]
    assert {"type": "operator_note", "timestamp": 8, "text": "rack b down"} in [e["data"] for e in notes]


# ------------------------------------------------------------------ EXECUTE_JOB's mapping
def test_default_mapping_is_accepted_as_batsim_runs_it():
    check_default_mapping("w0!1", {"0": "0", "1": "1", "2": "2"}, 3)
    check_default_mapping("w0!1", {"1": 1, "0": 0}, 2)          # integers, any key order


@pytest.mark.parametrize("mapping, nb, words", [
    ({}, 2, "must be a non-empty object"),
    ("0", 1, "must be a non-empty object"),
    ({"0": "a"}, 1, "all keys and values must be integers"),
    ({"0": "0", "2": "1"}, 2, "no resource associated to executor 1"),
    ({"0": "0", "1": "2"}, 2, "executor 1 should use the 2-th resource within the allocation, but there are only 2"),
    ({"0": "1", "1": "0"}, 2, "only the default mapping"),
    ({"0": "0", "1": "0"}, 2, "only the default mapping"),      # two executors on one host
    ({"0": "0"}, 2, "only the default mapping"),                # fewer executors than hosts
])
def test_other_mappings_refused_in_one_line(mapping, nb, words):
    with pytest.raises(EngineError, match="EXECUTE_JOB w0!1: 'mapping'") as err:
        check_default_mapping("w0!1", mapping, nb)
    assert words in str(err.value) and "\n" not in str(err.value)


# ------------------------------------------------------------------ live clients (optional)
BATSCHED = os.environ.get("BATSCHED") or shutil.which("batsched")


def _live(case: str, client: list[str], tmp_path: Path) -> None:
    proc, code, out = engine_with_client(client, ["-p", FIX / "platform.xml", "-w", FIX / "workload.json", "-E",
                                                  "-e", tmp_path / "out", "--timeout", "60", *CASES[case][0]])
    assert proc.returncode == 0, proc.stderr
    assert code == 0, out[-2000:]
    _assert_files_as_batsim(tmp_path, FIX / case)


@pytest.mark.skipif(BATSCHED is None, reason="batsched 1.4.0 is not on PATH (nor $BATSCHED): live runs skipped")
@pytest.mark.parametrize("case", [c for c, (_, args) in sorted(CASES.items()) if args])
def test_batsched_live_on_the_engine_as_on_real_batsim(case, tmp_path):
    _live(case, [BATSCHED, *CASES[case][1], "-s", "tcp://*:{PORT}"], tmp_path)


@pytest.mark.skipif(shutil.which("pybatsim") is None, reason="pybatsim 4.0.0a0 is not installed")
def test_pybatsim_easy_live_on_the_engine_as_on_real_batsim(tmp_path):
    _live("pyb_easy", [shutil.which("pybatsim"), "backfill-easy", "-s", "tcp://*:{PORT}", "-t", "60000"], tmp_path)


# ------------------------------------------------------------------ SET_JOB_METADATA
def _metadata_run(tmp_path: Path, data: dict, when: str = "JOB_SUBMITTED"):
    from scripted_scheduler import ScriptPort

    w = {"nb_res": 1, "jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "d", "walltime": 9},
                               {"id": "b", "subtime": 0, "res": 1, "profile": "d"}],
         "profiles": {"d": {"type": "delay", "delay": 2}}}
    rules = [{"when": [when, "w0!a"], "decisions": [{"type": "SET_JOB_METADATA", "data": data}]},
             {"when": ["JOB_SUBMITTED", None], "decisions": [
                 {"type": "EXECUTE_JOB", "data": {"job_id": "w0!a", "alloc": "0"}}]},
             {"when": ["JOB_COMPLETED", "w0!a"], "decisions": [
                 {"type": "EXECUTE_JOB", "data": {"job_id": "w0!b", "alloc": "0"}}]}]
    engine = build_engine(FIX / "platform.xml", [w])
    write_outputs(engine.run(ScriptPort(rules)), tmp_path / "out_", energy=False)
    return _rows(tmp_path / "out_jobs.csv")


def test_job_metadata_in_out_jobs_between_double_quotes(tmp_path):
    rows = _metadata_run(tmp_path, {"job_id": "w0!a", "metadata": "user 7, run 3"})
    text = (tmp_path / "out_jobs.csv").read_text().splitlines()
    assert text[1].endswith(',"user 7, run 3"') and text[2].endswith(',""')   # as Batsim writes it
    assert [(r["job_id"], r["metadata"]) for r in rows] == [("a", "user 7, run 3"), ("b", "")]


def test_job_metadata_after_the_job_ended_is_not_written(tmp_path):
    # the row was written when the job ended (Batsim's JobsTracer::write_job)
    rows = _metadata_run(tmp_path, {"job_id": "w0!a", "metadata": "late"}, when="JOB_COMPLETED")
    assert [r["metadata"] for r in rows] == ["", ""]


@pytest.mark.parametrize("data, words", [
    ({"job_id": "w0!a", "metadata": 'say "hi"'}, "holds a double quote"),
    ({"job_id": "w0!zz", "metadata": "x"}, "unknown job 'w0!zz'"),
    ({"job_id": "w0!a"}, "'data' must be"),
    ({"job_id": "w0!a", "metadata": 3}, "'data' must be"),
])
def test_bad_job_metadata_refused_in_one_line(tmp_path, data, words):
    with pytest.raises(EngineError, match="SET_JOB_METADATA at t=0: ") as err:
        _metadata_run(tmp_path, data)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_change_job_state_refused_with_what_real_batsim_does(tmp_path):
    # recorded on real Batsim 4.2.1 (scripted scheduler, this folder's platform): CHANGE_JOB_STATE
    # of a waiting job to REJECTED, or of a job set RUNNING to COMPLETED_SUCCESSFULLY, aborts it
    # ("[root/CRITICAL] Job b did not complete", src/export.cpp:1181; exit status 134)
    from scripted_scheduler import ScriptPort

    w = {"nb_res": 1, "jobs": [{"id": "b", "subtime": 1, "res": 1, "profile": "d"}],
         "profiles": {"d": {"type": "delay", "delay": 2}}}
    rules = [{"when": ["JOB_SUBMITTED", "w0!b"], "decisions": [
        {"type": "CHANGE_JOB_STATE", "data": {"job_id": "w0!b", "job_state": "REJECTED"}}]}]
    with pytest.raises(EngineError, match=r"CHANGE_JOB_STATE at t=1: .*did not complete") as err:
        build_engine(FIX / "platform.xml", [w]).run(ScriptPort(rules))
    assert "\n" not in str(err.value)


def test_a_job_on_a_storage_host_refused_naming_it(tmp_path):
    # pybatsim 4.0.0a0's backfill-easy allocates every resource Batsim announces, storage ones
    # too. Recorded on real Batsim 4.2.1 (this folder's platform, `-r h1:storage`, storage id 4):
    # a delay job there completes; a computing one aborts Batsim ("Some computation (5e+09) is
    # assigned to storage node (id=6, name='host6')", on Batsim's 7-host energy platform).
    from scripted_scheduler import ScriptPort

    w = {"nb_res": 1, "jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "d"}],
         "profiles": {"d": {"type": "delay", "delay": 2}}}
    rules = [{"when": ["JOB_SUBMITTED", "w0!a"], "decisions": [
        {"type": "EXECUTE_JOB", "data": {"job_id": "w0!a", "alloc": "4"}}]}]
    engine = build_engine(FIX / "platform.xml", [w], roles={"h1": "storage"})
    # (the engine runs a job on storage hosts beside a compute host: tests/test_storage_jobs.py)
    with pytest.raises(EngineError, match=r"EXECUTE_JOB w0!a: allocation 4 holds storage hosts only: not simulated"):
        engine.run(ScriptPort(rules))
