"""Times in the engine's error lines are printed as the user's input has them (the 6 decimals
Batsim prints), not with the engine's internal offsets (SimGrid's 1e-10-s messages, float
rounding): "deadlock at t=5.000001", not "t=5.000001238418579"; "at t=0", not "at t=2e-10"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from schedulers.cli import main
from schedulers.engine.clock import shown_time

FIX = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("t, text", [
    (3.0000000001, "3"),             # one loopback message after t=3
    (2e-10, "0"),                    # two, after t=0
    (0.1 + 0.2, "0.3"),              # 0.30000000000000004
    (20.1244571, "20.124457"),       # a 7th decimal is below what Batsim prints
    (1e14, "100000000000000"),
    (0.005, "0.005"),
    (-1e-12, "0"),
    (float("inf"), "inf"),
])
def test_shown_time(t: float, text: str) -> None:
    assert shown_time(t) == text


def test_a_deadlock_line_shows_the_clock_to_batsims_precision(tmp_path: Path, capsys) -> None:
    # tiny_net.xml: a message from the master host to itself takes m = 0.5 + 1/GAMMA s (0.5 s of
    # latency, the TCP-gamma bound: worked by hand in tests/test_network.py). One job submitted at
    # t=3 and never executed: the SUBMIT, the scheduler's reply, the submitter's goodbye and its
    # reply make the deadlock found about 4 m later, t = 5 s plus some 1e-6 s of the network model
    # (the line used to print all 16 digits of the clock: 5.000001238418579); at most 6 decimals.
    pol = tmp_path / "idle.py"
    pol.write_text("from schedulers.core.policy import Policy\n\n\nclass Idle(Policy):\n    pass\n")
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 1, "jobs": [{"id": "a", "subtime": 3, "res": 1, "profile": "p",
                                                    "walltime": 100}],
                             "profiles": {"p": {"type": "delay", "delay": 2}}}))
    code = main(["run", "--policy", f"{pol}:Idle", "-p", str(FIX / "batsim_network" / "tiny_net.xml"), "-w", str(w),
                 "-o", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    m = re.match(r"gridsched: error: deadlock at t=(\d+(?:\.\d{1,6})?): nothing left to simulate", err[0])
    assert m is not None, err[0]
    assert float(m.group(1)) == pytest.approx(5.0, abs=5e-6)


def test_a_call_for_the_time_the_scheduler_reads_says_the_clock_is_past_it(tmp_path: Path, capsys) -> None:
    # hetero4.xml (one Full zone, no route: SimGrid's loopback, 1e-10 s a message): the job
    # submitted at t=3 reaches the scheduler two messages later (the submitter's to the server, the
    # server's to the request-reply actor: a REGISTER_JOB is refused at 2e-10 for a job at 0,
    # test_bad_inputs_round3), which reads now = 3.000000 (6 decimals) and asks for a call at 3;
    # the server reads the reply one message later, at 3 + 3e-10: not before the call's time, and
    # Batsim aborts. The time shown, 3, would hide why: the line gives the clock.
    pol = tmp_path / "caller.py"
    pol.write_text("from schedulers.core.policy import Policy\n\n\nclass Caller(Policy):\n"
                   "    def on_job_submitted(self, job):\n        self.call_me_later(self.now)\n")
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 1, "jobs": [{"id": "a", "subtime": 3, "res": 1, "profile": "p",
                                                    "walltime": 100}],
                             "profiles": {"p": {"type": "delay", "delay": 2}}}))
    code = main(["run", "--policy", f"{pol}:Caller", "-p", str(FIX / "hetero4.xml"), "-w", str(w), "-o",
                 str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    m = re.match(r"gridsched: error: CALL_ME_LATER at t=3: it asks to be called at 3\.0, not after the current "
                 r"time \(the clock is at (3\.\d+): past the time the scheduler reads, printed with 6 decimals\) "
                 r"\(Batsim 4\.2\.1 aborts", err[0])
    assert m is not None, err[0]
    assert float(m.group(1)) == pytest.approx(3 + 3e-10, abs=1e-14)
