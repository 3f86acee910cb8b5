"""Bad input and misbehaving policies, third round: inputs that were accepted and gave a wrong
result without a word, and messages that named the wrong file or repeated themselves.

Each test runs the command as a user would (``schedulers.cli.main``) or the Python API, and checks
the exit status, the one error line (its exact words, the file and item named) or the correct
number, worked out by hand in the test.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from schedulers.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIX = Path(__file__).parent / "fixtures"
HETERO = FIX / "hetero4.xml"   # 4 hosts a1 a2 b1 b2, 4 cores each
DELAY = {"d": {"type": "delay", "delay": 3}}


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


def workload(path: Path, jobs: list | None = None, profiles: dict | None = None) -> Path:
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs if jobs is not None else
                                [{"id": i, "subtime": i, "res": 1, "profile": "d"} for i in range(1, 3)],
                                "profiles": DELAY if profiles is None else profiles}))
    return path


def run_args(tmp: Path, w: Path, *more: object, policy: str = "fcfs", platform: Path = HETERO,
             out: str = "out") -> list:
    return ["run", "--policy", policy, "-p", platform, "-w", w, "-o", tmp / out, "--no-progress", *more]


# ------------------------------------------------------------- campaign axes that collide
SYNTH = '[[scenario]]\nname = "g"\ngenerator = "synthetic"\nparams = { jobs = 10, hosts = 4 }\n'


@pytest.mark.parametrize("body, words", [
    # "load" and "scenario.load" both set the generator's load: the runs labelled load = 0.5 and
    # 0.9 all ran with 0.1 or 0.2
    ('[[policy]]\nname = "fcfs"\n' + SYNTH + '[axes]\nload = [0.5, 0.9]\n"scenario.load" = [0.1, 0.2]\n',
     "axes.scenario.load: sets the same scenario parameter 'load' as axis 'load': give it in one place"),
    # an engine option in an axis and in a zip group under its two spellings
    ('[[policy]]\nname = "fcfs"\n' + SYNTH + '[axes]\nenergy = [true, false]\n[zip]\n"engine.energy" = [true, false]\n'
     'load = [0.5, 0.9]\n', "zip.engine.energy: sets the same engine option 'energy' as axis 'energy': give it in one "
                            "place"),
    # one key of a mapping option that the [[policy]] table already sets: the table's value was dropped
    ('[[policy]]\nname = "ehosep"\noptions = { limits = { user1 = 80 } }\n' + SYNTH
     + '[axes]\n"policy.limits.user1" = [100, 150]\n',
     "axes.policy.limits.user1: also set in policy[0].options: give it in one place"),
])
def test_two_axes_or_an_axis_and_a_table_setting_one_value_are_refused(tmp_path: Path, body: str,
                                                                        words: str) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text("seeds = 1\n" + body)
    code, _, err = run_main(["campaign", "run", toml, "--out", tmp_path / "cout", "--serial", "--no-progress"])
    assert code == 2
    assert one_error_line(err) == f"gridsched: error: {toml}: {words}"
    assert not (tmp_path / "cout").exists()


def test_two_keys_of_one_mapping_option_are_two_axes() -> None:
    from schedulers.campaign.spec import parse_campaign

    import tomllib
    data = tomllib.loads('seeds = 1\n[[policy]]\nname = "ehosep"\n' + SYNTH
                         + '[axes]\n"policy.limits.user1" = [100, 150]\n"policy.limits.user2" = [90, 120]\n')
    runs = parse_campaign(data, ROOT / "c.toml").runs()
    assert sorted((r.policy_options["limits"]["user1"], r.policy_options["limits"]["user2"]) for r in runs) == [
        (100, 90), (100, 120), (150, 90), (150, 120)]
