"""A job started at the instant a walltime and a parallel task end on its hosts, on a Vivaldi zone
with compute sharing: real Batsim 4.2.1's files (``fixtures/batsim_vivaldi_sharing_tie``, see its
README). The walltime's kill solves the rates again; the parallel task that ended in the same
SimGrid step is out of the system already, so its end stands and reaches the server before the
scheduler's decision (the engine used to re-arm it, ending it after the new job's start)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from schedulers.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures" / "batsim_vivaldi_sharing_tie"
AT = {"9": [2, 3], "10": [3], "11": [0, 1, 2], "13": [0, 1, 2, 3, 4]}


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("tie") / "out"
    args = ["run", "--policy", f"{ROOT / 'scripts' / 'sharing_policy.py'}:Placed", "-p", str(FIX / "p.xml"),
            "-w", str(FIX / "w.json"), "--compute-sharing", "--policy-options", json.dumps({"at": AT}),
            "-o", str(d), "--no-progress"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = main(args)
    assert code == 0, err.getvalue()
    return d


def test_jobs_as_real_batsim(out: Path) -> None:
    # by hand: 10 killed at 19.246913578 + 1.5, 11 done at 19.746913578 + 1e8 / 1e8 (no links),
    # 13 started at its subtime 20.746913578 and killed at its walltime 1.5 s later
    batsim = (FIX / "out_jobs.csv").read_text()
    assert "10,w0,p12,19.246914,1,1.500000,0,COMPLETED_WALLTIME_REACHED,19.246914,1.500000,20.746914" in batsim
    assert ",COMPLETED_SUCCESSFULLY,19.746914,1.000000,20.746914," in batsim
    assert (out / "out_jobs.csv").read_text() == batsim


def test_rows_of_the_tied_instant_as_real_batsim(out: Path) -> None:
    # 10's end (host 3 idle: 1 idle, 4 computing), 11's (hosts 0-2: 3 idle), then 13 (5 computing)
    batsim = (FIX / "out_machine_states.csv").read_text()
    assert "20.7469,0,0,0,1,4\n20.7469,0,0,0,3,2\n20.7469,0,0,0,0,5\n" in batsim
    assert (out / "out_machine_states.csv").read_text() == batsim
