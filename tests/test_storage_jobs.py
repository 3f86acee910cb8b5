"""Jobs allocated on storage hosts in the embedded engine (:mod:`schedulers.engine.storagejobs`),
against real Batsim 4.2.1's outputs recorded in ``fixtures/batsim_storage_jobs`` (README there:
the cases, the hand-worked numbers and the recording commands), and Batsim's aborts."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from schedulers.engine import InProcessPort, build_engine, simulate
from schedulers.engine.ports import EngineError
from recorded import rows, schedule_rows

FIX = Path(__file__).parent / "fixtures" / "batsim_storage_jobs"
POWER = Path(__file__).parent / "fixtures" / "batsim_pfs_energy" / "platform_power.xml"   # bb = 4, pfs = 5
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from compare_with_batsim import same_file  # noqa: E402

CASES = {"storage": False, "storage_energy": True}   # case -> -E


def _policy(options: dict):
    spec = importlib.util.spec_from_file_location("sharing_policy", ROOT / "scripts" / "sharing_policy.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Placed(options)


def _run(workload, options: dict, energy: bool = False, out: Path | None = None, **kw):
    return simulate(POWER, [workload], _policy(options), energy=energy,
                    export_prefix=None if out is None else out / "out_", **kw)


def test_recordings_hold_the_hand_worked_numbers():
    jobs = {r["job_id"]: r for r in rows(FIX / "storage_energy" / "jobs.csv")}
    # c: cpu 0 and 1e8 bytes each way between h1 and pfs: l1 (1 GBps) carries 2e8 bytes after
    # 100 + 0 + 50 us; its energy counts pfs too, at its idle 30 W: (100 + 30) W x 0.20015 s
    assert float(jobs["c"]["execution_time"]) == pytest.approx(0.2 + 150e-6, abs=1e-6)
    assert float(jobs["c"]["consumed_energy"]) == pytest.approx(130 * 0.20015, abs=1e-6)
    # d (a 2 s delay on h0 and pfs) shares pfs with c and e, without compute sharing
    assert jobs["d"]["allocated_resources"] == "0 5"
    assert float(jobs["d"]["consumed_energy"]) == pytest.approx(130 * 2, abs=1e-6)
    # the machine states count pfs once it runs a job: h0, h1 and pfs computing at t = 0
    states = rows(FIX / "storage" / "machine_states.csv")
    assert (states[1]["nb_idle"], states[1]["nb_computing"]) == ("1", "3")
    assert [r["nb_idle"] for r in states if r["time"] == "2.5"] == ["4"]


@pytest.fixture(scope="module")
def engine_runs(tmp_path_factory) -> dict[str, Path]:
    out = {}
    options = json.loads((FIX / "storage.options.json").read_text())
    for case, energy in CASES.items():
        d = tmp_path_factory.mktemp(case)
        _run(FIX / "storage.json", options, energy, d)
        out[case] = d
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_engine_equals_real_batsim(engine_runs, case):
    got = engine_runs[case]
    names = ["jobs.csv", "machine_states.csv", "schedule.trace"] + (
        ["consumed_energy.csv", "pstate_changes.csv"] if CASES[case] else [])
    for name in names:
        assert same_file(got / f"out_{name}", FIX / case / name), (case, name)
    assert schedule_rows(got / "out_schedule.csv") == schedule_rows(FIX / case / "schedule.csv")


W1 = {"nb_res": 4, "jobs": [{"id": "k", "subtime": 0, "walltime": 100, "res": 2, "profile": "ph"},
                            {"id": "m", "subtime": 0, "walltime": 100, "res": 2, "profile": "d"}],
      "profiles": {"ph": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}, "d": {"type": "delay", "delay": 1}}}


def test_flops_on_a_storage_host_are_refused_as_batsim_aborts():
    # recorded on Batsim 4.2.1 (README): "Some computation (1e+09) is assigned to storage node (id=5, name='pfs')"
    with pytest.raises(EngineError) as exc:
        _run(W1, {"at": {"k": [2, 5], "m": [1, 4]}})
    text = str(exc.value)
    assert "\n" not in text and "w0!k" in text
    assert "Some computation (1e+09) is assigned to storage node (id=5, name='pfs')" in text


def test_storage_only_jobs_and_disabled_storage_sharing_are_refused():
    # Batsim runs a job on storage hosts only (its actor on the storage host): not simulated
    with pytest.raises(EngineError, match=r"w0!m: allocation 4-5 holds storage hosts only: not simulated"):
        _run(W1, {"at": {"k": [0, 1], "m": [4, 5]}})
    # --disable-storage-sharing (gridsched engine): a second job on pfs aborts as Batsim does
    # (server_on_execute_job: "whereas time-sharing on storage machines is disabled"); shared by default
    for sharing in (True, False):
        engine = build_engine(POWER, [{**W1, "profiles": {"ph": W1["profiles"]["d"], "d": W1["profiles"]["d"]}}])
        engine.storage_sharing = sharing
        run = lambda: engine.run(InProcessPort(_policy({"at": {"k": [0, 5], "m": [1, 5]}})))  # noqa: E731
        if sharing:
            assert len(run().jobs) == 2
        else:
            with pytest.raises(EngineError, match=r"machine 5 \(pfs, a storage host\) already runs \['w0!k'\] and "
                                                  "storage sharing is disabled"):
                run()
