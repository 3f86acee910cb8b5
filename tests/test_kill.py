"""KILL_JOB of a job that is not running: when real Batsim 4.2.1 accepts it and when it aborts
(``fixtures/batsim_kill``, recorded; its README gives the rules and each script), played on the
engine by the same scripted scheduler (``tests/scripted_scheduler.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schedulers.engine import build_engine
from schedulers.engine.outputs import energy_rows, job_rows
from schedulers.engine.ports import EngineError

sys.path.insert(0, str(Path(__file__).parent))
from scripted_scheduler import ScriptPort  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "batsim_kill"


def _play(script: str, platform: str = "p.xml", energy: bool = False):
    port = ScriptPort(json.loads((FIX / f"{script}.json").read_text()))
    engine = build_engine(FIX / platform, [str(FIX / "w.json")], energy=energy)
    return port, engine, port


def _sent(port) -> list[dict]:
    return [m for m in port.messages if not any(e["type"] == "SIMULATION_BEGINS" for e in m["events"])]


def _recorded(folder: str) -> list[dict]:
    return [json.loads(line) for line in (FIX / folder / "messages.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("script, folder, platform, energy", [
    ("unsent", "unsent", "p.xml", False),
    ("unsent", "unsent_E", "p.xml", True),
    ("twice", "twice_E", "p.xml", True),
    ("inflight", "inflight", "e.xml", False),
])
def test_kills_batsim_accepts_give_its_messages_and_rows(script, folder, platform, energy):
    port, engine, _ = _play(script, platform, energy)
    result = engine.run(port)
    assert _sent(port) == _recorded(folder)
    assert job_rows(result) == (FIX / folder / "out_jobs.csv").read_text().splitlines()
    if energy:
        assert energy_rows(result) == (FIX / folder / "out_consumed_energy.csv").read_text().splitlines()


def test_a_job_ended_unsent_is_listed_killed_once_without_progress():
    # unsent: a ended at 0.005, its JOB_COMPLETED still held by the server (the scheduler busy
    # until 0.006) when KILL_JOB [a, a, b] comes: a counts once, only b (running) is killed
    port, engine, _ = _play("unsent")
    engine.run(port)
    killed = [e for m in port.messages for e in m["events"] if e["type"] == "JOB_KILLED"]
    assert [k["data"]["job_ids"] for k in killed] == [["w0!a", "w0!b"]]
    assert list(killed[0]["data"]["job_progress"]) == ["w0!b"]


def test_two_kills_of_one_job_in_a_reply_give_one_job_killed():
    port, engine, _ = _play("twice")
    engine.run(port)
    killed = [e for m in port.messages for e in m["events"] if e["type"] == "JOB_KILLED"]
    assert [k["data"]["job_ids"] for k in killed] == [["w0!b"]]


@pytest.mark.parametrize("script, words", [
    ("ended", "job 'w0!a' ended at t=0.005 and the message telling it has been sent: real Batsim 4.2.1 has "
              "deleted it and aborts (\"Cannot get job 'w0!a': it does not exist\")"),
    ("waiting", "job 'w0!b' is waiting: real Batsim 4.2.1 aborts (\"Invalid KILL_JOB: job_id 'w0!b' refers to a "
                "job not being executed nor completed.\")"),
    ("future", "job 'w0!f' is not submitted yet: real Batsim 4.2.1 aborts (\"Invalid KILL_JOB: job_id 'w0!f'"),
    ("unknown", "job 'w0!zz' does not exist; real Batsim 4.2.1 aborts (\"Trying to kill job 'w0!zz' but it "
                "does not exist.\")"),
    ("unknown_wl", "job 'w9!a': there is no workload 'w9'"),
    ("again", "job 'w0!b' ended at t=0 and the message telling it has been sent"),
    ("rejected", "job 'w0!c' was rejected: real Batsim 4.2.1's killer aborts (\"Bad kill: job w0!c has not "
                 "been started\")"),
])
def test_kills_batsim_aborts_on_are_one_line_errors(script, words):
    port, engine, _ = _play(script)
    with pytest.raises(EngineError) as exc:
        engine.run(port)
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith("KILL_JOB at t=") and words in msg
    if script == "ended":   # the same messages as Batsim before it aborts
        assert _sent(port) == _recorded("ended")


def test_gridsched_run_stops_with_one_line_naming_the_kill(tmp_path):
    # a policy killing each job whose JOB_COMPLETED it receives: Batsim aborts at the first
    pol = tmp_path / "late_kill.py"
    pol.write_text(
        "from schedulers.fcfs import FCFS\n"
        "class LateKill(FCFS):\n"
        "    def on_job_completed(self, job):\n"
        "        self.kill([job])\n")
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", "schedulers.cli", "run", "--policy", f"{pol}:LateKill", "-p",
                        str(FIX / "p.xml"), "-w", str(FIX / "w.json"), "-o", str(out), "--no-progress"],
                       capture_output=True, text=True, timeout=120)
    err = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(err) == 1
    assert err[0].startswith("gridsched: error: KILL_JOB at t=0.005: job 'w0!a' ended at t=0.005") and \
        "Cannot get job 'w0!a'" in err[0]


STAGE = Path(__file__).parent / "fixtures" / "batsim_kill_stage_start"


def test_a_kill_as_a_stage_ends_finds_no_task_and_traces_no_kill(tmp_path):
    # fixtures/batsim_kill_stage_start/README.md: job 1's stage t2 ends as the KILL_JOB reaches the
    # server; the killer runs before the next stage's exec_init is done: no kill traced for job 1
    # (Batsim kills its actor), while the jobs killed in a running task have theirs
    import re
    from helpers_cli import run_main
    recorded = (STAGE / "out_schedule.trace").read_text()
    killed = {line.split('"')[1] for line in recorded.splitlines() if line.startswith("8 ") and " kk k " in line}
    assert "w0!1" not in killed and {"w0!3", "w0!9", "w0!13", "w0!15"} <= killed
    out = tmp_path / "out"
    code, _, err = run_main(["run", "--policy", str(Path(__file__).parents[1] / "scripts" / "kill_policy.py") + ":KillingFCFS",
                             "-p", str(STAGE / "platform.xml"), "-w", str(STAGE / "workload.json"), "-E",
                             "--policy-options", '{"seed": 558573322, "kill_rate": 0.6, "pstates": true}',
                             "-o", str(out), "--no-progress"])
    assert code == 0, err
    colour = re.compile(r'^(5 j.* machine_state ".*") "[0-9. ]+"$', re.M)
    assert colour.sub(r"\1", (out / "out_schedule.trace").read_text()) == colour.sub(r"\1", recorded)
    assert (out / "out_jobs.csv").read_text() == (STAGE / "out_jobs.csv").read_text()
