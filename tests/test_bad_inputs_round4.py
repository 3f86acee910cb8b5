"""Bad input, fourth round: settings a run was labelled with but never used, values accepted that
made the run fail much later (or crash in gridsched's own code), and command lines real Batsim
4.2.1 reads otherwise than the engine did.

Each test runs the command as a user would (``schedulers.cli.main``) or the Python API, and checks
the exit status, the one error or warning line (its exact words, the file and item named) or the
correct number, worked out by hand in the test.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from schedulers.cli import main

FIX = Path(__file__).parent / "fixtures"
HETERO = FIX / "hetero4.xml"   # 4 hosts a1 a2 b1 b2, 4 cores each


def run_main(argv: list) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def one_error_line(err: str) -> str:
    """The only ``error`` line of ``err``."""
    errors = [ln for ln in err.splitlines() if "error" in ln]
    assert len(errors) == 1, err
    return errors[0]


def write_workload(path: Path, jobs: list, delay: float = 10) -> Path:
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs,
                                "profiles": {"d": {"type": "delay", "delay": delay}}}))
    return path


# ------------------------------------------------------------------ the gym environment
def _two_jobs(tmp_path: Path) -> Path:
    return write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d"},
                                                {"id": 2, "subtime": 500, "res": 1, "profile": "d"}])


def test_a_bool_action_is_an_invalid_action_not_a_crash_in_the_agent(tmp_path: Path) -> None:
    """``False``/``True`` are Python ints, and numpy read ``mask[True]`` as a boolean index: the
    step failed with "policy AgentPolicy failed in schedule (.../agent.py...)". A bool is no
    action: played as a wait and flagged, as a float is. Job 1 (10 s delay, submitted at 0) then
    waits for the next decision, job 2's submission at t = 500; action 0 (an int) starts it at 0."""
    pytest.importorskip("gymnasium", reason="gymnasium is not installed (pip install 'gridsched[gym]')")
    import numpy as np

    from schedulers.gym import BatsimEnv

    env = BatsimEnv(HETERO, str(_two_jobs(tmp_path)), window=4)
    try:
        for action in (False, True, np.bool_(False), 0.0):
            env.reset()
            _, _, terminated, _, info = env.step(action)
            assert info["invalid_action"] is True and info["time"] == 500.0 and not terminated, action
            assert [j.id for j in env.policy.queue] == ["w0!1", "w0!2"]   # job 1 not started at t = 0
        env.reset()
        _, _, _, _, info = env.step(np.int64(0))   # what action_space.sample() gives
        assert info["invalid_action"] is False and info["time"] == 500.0
        assert [j.id for j in env.policy.queue] == ["w0!2"]
    finally:
        env.close()


@pytest.mark.parametrize("kwargs, message", [
    ({"stall_wait": float("inf")}, "stall_wait must be a finite number of seconds > 0, got inf"),
    ({"stall_wait": True}, "stall_wait must be a finite number of seconds > 0, got True"),
    ({"window": True}, "window must be an integer >= 1, got True"),
    ({"max_steps": True}, "max_steps must be an integer >= 1 or None, got True"),
])
def test_gym_settings_that_cannot_work_are_refused_when_the_environment_is_made(tmp_path: Path, kwargs: dict,
                                                                              message: str) -> None:
    """``stall_wait=inf`` was accepted and the episode failed at its first stall ("policy
    AgentPolicy failed in schedule ... call_me_later: the time must be a finite number"); ``True``
    was taken for 1 as a window, a step limit or a stall wait."""
    pytest.importorskip("gymnasium", reason="gymnasium is not installed (pip install 'gridsched[gym]')")
    from schedulers.gym import BatsimEnv

    with pytest.raises(ValueError) as err:
        BatsimEnv(HETERO, str(_two_jobs(tmp_path)), **kwargs)
    assert str(err.value) == message
