"""``gridsched policies [NAME]`` and the suggestion for a misspelt policy name."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedulers.cli import main
from schedulers.references import REFERENCES
from schedulers.registry import POLICIES, unknown_policy_message

ROOT = Path(__file__).resolve().parents[1]


def test_policies_gives_every_policy_one_plain_line(capsys) -> None:
    assert main(["policies"]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    rows = {ln.split()[0]: ln for ln in lines if ln.split()[0] in POLICIES}
    assert set(rows) == set(POLICIES)
    for name, line in rows.items():
        text = line[len(name):].strip()
        assert len(text) > 20 and "module docstring" not in text, (name, text)
    assert "EASY backfilling" in rows["easy"] and "reservation" in rows["easy"]


def test_policies_name_shows_summary_sources_and_options_with_values_and_defaults(capsys) -> None:
    assert main(["policies", "green-easy"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("green-easy: schedulers.green.GreenEASY\n")
    flat = " ".join(out.split())
    assert REFERENCES["green"].full in flat                                   # the green paper, in full
    assert REFERENCES["easy"].full in flat                                    # EASY (Lifka 1995)
    assert "  delta: number in [0, 100); default: 10\n" in out
    assert "  per_gap: true or false; default: false\n" in out
    assert "  idle_timeout: number >= 0 (s), or null; default: off\n" in out


def test_policies_name_says_which_batsim_flags_a_policy_needs(capsys) -> None:
    assert main(["policies", "osep"]) == 0
    out = capsys.readouterr().out
    assert "--enable-dynamic-jobs and --forward-profiles-on-submission" in out
    assert "  maxt: integer >= 0; default: the number of hosts\n" in out


def test_policies_name_of_your_own_file(capsys, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["policies", "docs/examples/easy_ordered.py:EasyOrdered"]) == 0
    out = capsys.readouterr().out
    assert "easy_ordered.py:EasyOrdered" in out.splitlines()[0]
    assert "  by: 'walltime' or 'hosts'; default: 'walltime'\n" in out


@pytest.mark.parametrize("argv", [
    ["policies", "eays"],
    ["run", "--policy", "eays", "-p", "docs/examples/four_hosts.xml", "-w", "docs/examples/tutorial.json",
     "-o", "OUT"],
])
def test_a_misspelt_policy_gets_the_closest_name_in_one_line(argv, capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(ROOT)
    argv = [str(tmp_path / "o") if a == "OUT" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("gridsched: error: unknown policy 'eays'; did you mean 'easy'?")
    assert not (tmp_path / "o").exists()


def test_a_misspelt_policy_in_a_campaign(tmp_path, capsys) -> None:
    f = tmp_path / "c.toml"
    f.write_text('[[policy]]\nname = "hosepp"\n[[scenario]]\nname = "s"\ngenerator = "synthetic"\n')
    assert main(["campaign", "run", str(f), "--out", str(tmp_path / "out"), "--serial"]) == 2
    err = capsys.readouterr().err
    assert "policy[0].name: unknown policy 'hosepp'; did you mean 'hosep'?" in err and err.count("\n") == 1


def test_serve_suggests_too(capsys) -> None:
    code = main(["serve", "--policy", "Conservativ", "--socket", "tcp://127.0.0.1:1"])
    assert code == 2
    assert "did you mean 'conservative'?" in capsys.readouterr().err


def test_a_name_close_to_nothing_lists_the_known_policies() -> None:
    msg = unknown_policy_message("zzzz")
    assert "did you mean" not in msg
    assert "known policies: " + ", ".join(sorted(POLICIES)) in msg


def test_serve_with_an_option_the_policy_lacks_names_its_options_not_every_policy(capsys) -> None:
    code = main(["serve", "--policy", "easy", "--policy-options", '{"x": 1}', "--socket", "tcp://127.0.0.1:1"])
    assert code == 2
    assert capsys.readouterr().err == ("gridsched serve: cannot create policy 'easy': policy 'easy' has no option "
                                       "'x'; its options: idle_timeout\n")
