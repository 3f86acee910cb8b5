"""``gridsched scenario NAME --help`` and ``gridsched campaign generators``: every parameter of a
registered scenario generator is said in words (with its unit), not only by its default."""

from __future__ import annotations

import pytest

from schedulers.cli import main
from schedulers.inputs.generators import GENERATORS, register_generator


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_every_generator_parameter_has_words_in_the_help(name, capsys) -> None:
    gen = GENERATORS[name]
    assert sorted(gen.param_docs) == sorted(gen.params), f"generator {name!r}: parameters without words"
    with pytest.raises(SystemExit) as stop:
        main(["scenario", name, "--help"])
    assert stop.value.code == 0
    text = " ".join(capsys.readouterr().out.split())   # (argparse wraps the lines)
    for key, default in gen.params.items():
        words = " ".join(gen.param_docs[key].split())
        assert f"{words} (default {default!r})" in text, (name, key)


def test_the_help_does_not_cite_papers_by_the_number_of_a_file() -> None:
    for name, gen in GENERATORS.items():
        for n in ("000", "001", "002", "003", "004"):
            assert f"{n} " not in gen.doc, f"generator {name!r}: {gen.doc!r} cites paper {n} by its file number"


def test_the_generator_list_gives_each_parameter_its_words(capsys) -> None:
    assert main(["campaign", "generators"]) == 0
    out = capsys.readouterr().out
    assert "   load = 0.8: offered load: work submitted / (hosts x arrival span), > 0\n" in out
    assert "   late_delay = 360.0: how late the late user submits (s)\n" in out


def test_words_for_a_parameter_the_generator_lacks_are_refused() -> None:
    with pytest.raises(ValueError, match=r"scenario generator 'typo-case': docs for unknown parameters \['jbos'\]"):
        register_generator("typo-case", params={"jobs": 4}, docs={"jbos": "number of jobs"})
    assert "typo-case" not in GENERATORS


def test_a_folder_holding_a_scenario_is_refused_unless_overwrite(tmp_path, capsys):
    """A second scenario written into one folder replaced platform.xml without a word; with
    --overwrite, the first scenario's extra workload files do not stay beside the new one."""
    from schedulers.inputs.scenario_cli import main as scenario_cli

    out = tmp_path / "case"
    assert scenario_cli(["synthetic", "--jobs", "5", "-o", str(out)]) == 0
    first = (out / "workload.json").read_text()
    (out / "workload_w1.json").write_text("{}")   # (as left by a scenario of two workloads)
    capsys.readouterr()
    assert scenario_cli(["synthetic", "--jobs", "7", "--seed", "1", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"gridsched: error: {out}: holds a scenario already (platform.xml, workload.json, "
                   "workload_w1.json); give --overwrite to replace it, or choose another -o")
    assert (out / "workload.json").read_text() == first   # untouched
    assert scenario_cli(["synthetic", "--jobs", "7", "--seed", "1", "-o", str(out), "--overwrite"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["platform.xml", "workload.json"]
    import json
    assert len(json.loads((out / "workload.json").read_text())["jobs"]) == 7


@pytest.mark.parametrize("name", ["synthetic", "hosep"])
def test_a_negative_seed_is_one_line(name, tmp_path, capsys):
    """``--seed -1`` was an internal error (NumPy's seed sequence takes no negative integer)."""
    from schedulers.inputs.scenario_cli import main as scenario_cli

    assert scenario_cli([name, "--seed", "-1", "-o", str(tmp_path / "case")]) == 2
    assert capsys.readouterr().err.strip() == f"gridsched: error: generator {name!r}: seed -1 is not an integer >= 0"
    assert not (tmp_path / "case").exists()


def test_an_output_that_is_a_file_is_one_line(tmp_path, capsys):
    """``-o`` naming an existing file printed Python's ``[Errno 17] File exists``."""
    from schedulers.inputs.scenario_cli import main as scenario_cli

    target = tmp_path / "afile"
    target.write_text("mine")
    assert scenario_cli(["synthetic", "-o", str(target)]) == 2
    assert capsys.readouterr().err.strip() == f"gridsched: error: -o {target}: exists and is not a folder"
    assert target.read_text() == "mine"
