"""A campaign folder holding results of another gridsched code (an upgrade, an edited checkout):
the run ids hash what a run simulates, not gridsched, so such records used to be resumed and
mixed with new ones without a word. Each record now names its code; a mismatch is refused by
``campaign run`` (``--rerun-stale`` runs those again), counted by ``status`` and warned about by
``collect`` / ``report``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from schedulers import __version__
from schedulers.campaign.provenance import CODE, VERSION, code_sha256
from schedulers.campaign.store import ResultStore
from schedulers.cli import main

from helpers_campaign import tiny_green

CAMPAIGN = """
seeds = 2
[[policy]]
name = "fcfs"
[[scenario]]
name = "s"
generator = "synthetic"
params = { jobs = 5, hosts = 4 }
"""
OLD = "0" * 64   # the code of an "older gridsched": any other digest


def _campaign(tmp_path: Path) -> tuple[Path, Path]:
    f = tmp_path / "c.toml"
    f.write_text(textwrap.dedent(CAMPAIGN), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["campaign", "run", str(f), "--out", str(out), "--serial", "--no-progress"]) == 0
    return f, out


def _age(path: Path, code: str | None) -> dict:
    """Make the record at ``path`` look made by another code (``None``: by a gridsched that did
    not record its code)."""
    rec = json.loads(path.read_text())
    if code is None:
        del rec[CODE]
    else:
        rec[CODE] = code
    rec["summary"]["makespan"] = 1e9   # (a number no run of this campaign gives: seen if it is kept)
    path.write_text(json.dumps(rec))
    return rec


def test_records_name_the_code_that_made_them(tmp_path: Path) -> None:
    _, out = _campaign(tmp_path)
    store = ResultStore(out)
    recs = [store.read(i) for i in sorted(store.ids())]
    assert len(recs) == 2
    for r in recs:
        assert r[VERSION] == __version__ and r[CODE] == code_sha256()
        assert len(r[CODE]) == 64 and int(r[CODE], 16) >= 0   # (a SHA-256 in hex)


def test_resuming_among_results_of_another_code_is_refused_then_rerun_on_request(tmp_path: Path, capsys) -> None:
    f, out = _campaign(tmp_path)
    first, second = sorted((out / "results").glob("*.json"))
    _age(first, OLD)
    kept = first.read_text()
    capsys.readouterr()
    assert main(["campaign", "run", str(f), "--out", str(out), "--serial", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (f"gridsched: error: {out}: 1 of its 2 stored results were made by gridsched {__version__} "
                   f"(code 000000000000), not by this gridsched {__version__} (code {code_sha256()[:12]}): resuming "
                   "would mix the results of two codes; --rerun-stale runs them again with this one (or give "
                   "another --out)")
    assert first.read_text() == kept   # (nothing was run)
    assert main(["campaign", "status", str(out)]) == 1
    assert ("2 runs: 2 done, 0 failed, 0 missing; 1 of them made by gridsched "
            f"{__version__} (code 000000000000)") in capsys.readouterr().out
    assert main(["campaign", "collect", str(out)]) == 0
    warning = capsys.readouterr().err.strip()
    assert warning == (f"warning: {out}: its results were made by 2 different gridsched codes (1 by gridsched "
                       f"{__version__} (code 000000000000), 1 by gridsched {__version__} (code {code_sha256()[:12]})): "
                       "the tables mix them; `gridsched campaign run FILE --out DIR --rerun-stale` runs the others "
                       "again with this one")
    assert main(["campaign", "report", str(out)]) == 0
    assert f"- **Warning: {out}: its results were made by 2 different gridsched codes" in \
        (out / "report.md").read_text()
    capsys.readouterr()
    assert main(["campaign", "run", str(f), "--out", str(out), "--serial", "--no-progress", "--rerun-stale"]) == 0
    assert "ran 1 (0 failed), 1 already present" in capsys.readouterr().out
    rec = json.loads(first.read_text())
    assert rec[CODE] == code_sha256() and rec["summary"]["makespan"] != 1e9
    assert main(["campaign", "collect", str(out)]) == 0
    assert "warning" not in capsys.readouterr().err
    assert main(["campaign", "status", str(out)]) == 0
    assert main(["campaign", "report", str(out)]) == 0   # (the code that made every result, in its header)
    assert f"- Made by: gridsched {__version__} (code {code_sha256()[:12]}).\n" in (out / "report.md").read_text()


def test_a_record_of_a_gridsched_that_did_not_record_its_code_is_stale(tmp_path: Path, capsys) -> None:
    f, out = _campaign(tmp_path)
    for p in (out / "results").glob("*.json"):
        _age(p, None)
    capsys.readouterr()
    assert main(["campaign", "run", str(f), "--out", str(out), "--serial", "--no-progress"]) == 2
    assert (f"2 of its 2 stored results were made by gridsched {__version__} (code not recorded), not by this"
            in capsys.readouterr().err)
    # one other code throughout: the tables do not mix codes, no warning
    assert main(["campaign", "collect", str(out)]) == 0
    assert "warning" not in capsys.readouterr().err
    assert main(["campaign", "run", str(f), "--out", str(out), "--serial", "--no-progress", "--rerun-stale"]) == 0
    assert "ran 2 (0 failed), 0 already present" in capsys.readouterr().out


def test_the_green_campaigns_refuse_and_rerun_results_of_another_code_too(tmp_path: Path, capsys) -> None:
    camp = tmp_path / "tiny.toml"
    camp.write_text(tiny_green())
    out, rep = tmp_path / "out", tmp_path / "rep"
    run = ["campaign", "green", "run", str(camp), "--out", str(out), "--report", str(rep), "--no-progress"]
    assert main(run) == 0
    records = sorted((out / "tiny" / "results").glob("*.json"))
    assert len(records) == 12   # 2 policies x 6 deltas
    rec = json.loads(records[0].read_text())
    rec[CODE] = OLD
    records[0].write_text(json.dumps(rec))
    capsys.readouterr()
    assert main(run) == 2
    assert "1 of its 12 stored results were made by gridsched" in capsys.readouterr().err
    assert main(run + ["--rerun-stale"]) == 0
    assert json.loads(records[0].read_text())[CODE] == code_sha256()
