"""The Pajé trace under compute sharing (``--compute-sharing``): which of the jobs running on a
machine Batsim shows, against real Batsim 4.2.1's traces (``fixtures/batsim_paje_sharing``, see
its README), on a compute-only platform and on one with links, with and without ``-E``.

Batsim shows the first job of the machine's ``std::set<JobPtr>``, ordered by the jobs' heap
addresses; as recorded, for the jobs of one workload file: file order, the second and third job
swapped (``schedulers.engine.jobs.JobBook.load_rank``)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from schedulers.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
FIX = FIXTURES / "batsim_paje_sharing"
SCRIPTED = f"{FIXTURES / 'batsim_paje' / 'scripted.py'}:Scripted"
PLATFORMS = {"compute": FIX / "p.xml", "network": FIXTURES / "batsim_network_ptask" / "platform.xml"}
_COLOR = re.compile(r'^(5 j.* machine_state ".*") "[0-9. ]+"$', re.M)


def _trace(tmp_path: Path, platform: str, workload: str, energy: bool) -> str:
    out = tmp_path / "out"
    args = ["run", "--policy", SCRIPTED, "-p", str(PLATFORMS[platform]), "-w", str(FIX / workload),
            "--compute-sharing", "-o", str(out), "--no-progress"] + (["-E"] if energy else [])
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = main(args)
    assert code == 0, err.getvalue()
    return (out / "out_schedule.trace").read_text()


def _events(trace: str, machine: str) -> list[str]:
    """The state lines of ``machine`` (``m0``...), as ``"<time> <value>"``."""
    return [f"{f[1]} {f[4]}" for f in (line.split() for line in trace.splitlines())
            if len(f) == 5 and f[0] == "6" and f[3] == machine]


CASES = [(w, p, e) for w in ("w.json", "six.json") for p in PLATFORMS for e in (False, True)]


@pytest.mark.parametrize("workload,platform,energy", CASES)
def test_trace_as_real_batsim(tmp_path: Path, workload: str, platform: str, energy: bool) -> None:
    name = ("six_" if workload == "six.json" else "") + platform + ("_E" if energy else "")
    batsim = (FIX / name / "out_schedule.trace").read_text()
    mine = _trace(tmp_path, platform, workload, energy)
    assert _COLOR.sub(r"\1", mine) == _COLOR.sub(r"\1", batsim)


@pytest.mark.parametrize("platform,end", [("compute", "1.500000"), ("network", "0.600000")])
def test_six_jobs_started_together(platform: str, end: str) -> None:
    # Six jobs of one file started at 0 on m0-m2, all ending at `end` in file order (walltime
    # 1.5 s on the 100 Mflop/s hosts: 1e8 flops at 1/6 of the speed would take 6 s; 0.6 s on the
    # 1 Gflop/s ones). Set order 1, 3, 2, 4, 5, 6: job 1 shown; when it ends, job 3; job 2's end
    # changes nothing; then 4, 5, 6, and the machine waits.
    trace = (FIX / f"six_{platform}" / "out_schedule.trace").read_text()
    assert _events(trace, "m0") == ["0.000000 w", "0.000000 jw0!1"] + [
        f"{end} jw0!{k}" for k in (3, 4, 5, 6)] + [f"{end} w"]
    assert "jw0!2" not in trace
    killed = platform == "compute"
    assert (f'8 {end} kk k "w0!2"' in trace) is killed


def test_kills_walltimes_and_late_starts_on_shared_machines() -> None:
    # w.json, set order x, z, y (file order x, y, z; the 2nd and 3rd swapped), then s1..k3 in file
    # order. m1: s1 shown until the six walltimes at 1.5; e1..e4 (4 x 1e8 flops sharing 100 Mf/s,
    # end at 9) shown in turn; y from 20; z (before y in the set) from 25 to 28; y again.
    # m3: k1 from 10, killed at 12 in a delay (no kill event), k2 until its kill at 13 (its task
    # cancelled: kk), k3 until its walltime at 14 (kk). m0: x (first of all) from 30 to 35.
    trace = (FIX / "compute" / "out_schedule.trace").read_text()
    assert _events(trace, "m1") == (
        ["0.000000 w", "0.000000 jw0!s1"] + [f"1.500000 jw0!s{k}" for k in range(2, 7)] + ["1.500000 w"]
        + ["5.000000 jw0!e1"] + [f"9.000000 jw0!e{k}" for k in (2, 3, 4)] + ["9.000000 w"]
        + ["20.000000 jw0!y", "25.000000 jw0!z", "28.000000 jw0!y", "40.000000 w"])
    assert _events(trace, "m3") == ["0.000000 w", "5.000000 jw0!e1", "9.000000 jw0!e2", "9.000000 jw0!e3",
                                    "9.000000 jw0!e4", "9.000000 w", "10.000000 jw0!k1", "12.000000 jw0!k2",
                                    "13.000000 jw0!k3", "14.000000 w"]
    assert 'kk k "w0!k1"' not in trace
    assert '8 13.000000 kk k "w0!k2"' in trace and '8 14.000000 kk k "w0!k3"' in trace
    assert _events(trace, "m0")[-4:] == ["28.000000 jw0!y", "30.000000 jw0!x", "35.000000 jw0!y", "40.000000 w"]
