"""EXECUTE_JOB's ``additional_io_job`` in the embedded engine (:mod:`schedulers.engine.iojobs`),
against real Batsim 4.2.1's outputs recorded in ``fixtures/batsim_io_job`` (README there: the
cases, the hand-worked numbers and the recording commands), and Batsim's aborts on bad input."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from schedulers.engine import simulate
from schedulers.engine.ports import EngineError
from recorded import rows, schedule_rows

FIX = Path(__file__).parent / "fixtures" / "batsim_io_job"
ONE = Path(__file__).parent / "fixtures" / "batsim_pfs" / "platform_one.xml"   # h0-h3, pfs = machine 4
POWER = Path(__file__).parent / "fixtures" / "batsim_pfs_energy" / "platform_power.xml"   # bb = 4, pfs = 5
sys.path.insert(0, str(Path(__file__).parent.parent / "scripts"))
from compare_with_batsim import same_file  # noqa: E402

#: case -> (platform, workload, options file, -E, compute sharing)
CASES = {
    "one": (ONE, "io.json", "one.options.json", False, False),
    "crowd": (POWER, "crowd.json", "crowd.options.json", False, False),
    "crowd_energy": (POWER, "crowd.json", "crowd.options.json", True, False),
    "crowd_sharing": (POWER, "crowd.json", "pack.options.json", True, True),
}


def _policy(options: dict):
    spec = importlib.util.spec_from_file_location("batsim_io_job_policy", FIX / "iojob.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.IOJob(options)


def _run(platform: Path, workload, options: dict, energy: bool = False, out: Path | None = None,
         sharing: bool = False):
    return simulate(platform, [workload if isinstance(workload, dict) else FIX / workload], _policy(options),
                    energy=energy, compute_sharing=sharing, export_prefix=None if out is None else out / "out_")


def _jobs(case: str) -> dict[str, dict]:
    return {r["job_id"]: r for r in rows(FIX / case / "jobs.csv")}


def test_recordings_hold_the_hand_worked_numbers():
    one = {k: (r["final_state"], float(r["execution_time"])) for k, r in _jobs("one").items()}
    # ph: 1e9 flops on h0, h1 (1 s) merged with h0 -> pfs 1e9, h1 -> pfs 5e8, pfs -> h0 2e8 bytes:
    # l0 (1 GBps) carries 1.2e9 bytes (both directions share it): 1.2 s, after 100 + 0 + 50 us
    assert one["ph"] == ("COMPLETED_SUCCESSFULLY", pytest.approx(1.2 + 150e-6, abs=1e-6))
    # par on h0-h1 (5e8, 1e9 flops) with IO flops 5e8 on h1 (alloc "1 4"): h1 computes 1.5e9,
    # after the latency of h0 <-> h1 (100 + 0 + 100 us)
    assert one["par"] == ("COMPLETED_SUCCESSFULLY", pytest.approx(1.5 + 200e-6, abs=1e-6))
    # composed ph, delay 1, ph with the IO sequence io_a x 3: the delay ignores its IO profile
    assert one["seq"][1] == pytest.approx(2 * (1.2 + 150e-6) + 1, abs=1e-6)
    # one host: 1e9 flops, 1e8 bytes each way between h0 and pfs (IO parallel_homogeneous, cpu 0)
    assert one["inline"][1] == pytest.approx(1 + 150e-6, abs=1e-6)
    # walltime 0.5 and a kill at +0.7 s cut the merged task; without IO job: 1 s of flops
    assert one["wall"] == ("COMPLETED_WALLTIME_REACHED", 0.5)
    assert one["killed"] == ("COMPLETED_KILLED", pytest.approx(0.7))
    assert one["plain"] == ("COMPLETED_SUCCESSFULLY", 1.0)
    # beside: the job on h0, its IO job moves bytes from h1 too; h1 is not allocated (idle)
    assert one["beside"][1] == pytest.approx(1 + 150e-6, abs=1e-6)
    states = {float(r["time"]): int(r["nb_computing"]) for r in rows(FIX / "one" / "machine_states.csv")}
    assert states[50] == 1
    # a job's consumed_energy counts its own hosts only: c on h3 at 200 W for 1.00015 s
    assert float(_jobs("crowd_energy")["c"]["consumed_energy"]) == pytest.approx(200 * 1.00015, abs=1e-6)


@pytest.fixture(scope="module")
def engine_runs(tmp_path_factory) -> dict[str, Path]:
    out = {}
    for case, (platform, workload, options, energy, sharing) in CASES.items():
        d = tmp_path_factory.mktemp(case)
        _run(platform, workload, json.loads((FIX / options).read_text()), energy, d, sharing)
        out[case] = d
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_engine_equals_real_batsim(engine_runs, case):
    got = engine_runs[case]
    names = ["jobs.csv", "machine_states.csv"] + (["consumed_energy.csv", "pstate_changes.csv"]
                                                  if CASES[case][3] else [])
    for name in names:
        assert same_file(got / f"out_{name}", FIX / case / name), (case, name)
    assert schedule_rows(got / "out_schedule.csv") == schedule_rows(FIX / case / "schedule.csv")


def _io(value: dict, profiles: dict | None = None, res: int = 2) -> tuple[dict, dict]:
    w = {"nb_res": 4, "jobs": [{"id": "j", "subtime": 0, "walltime": 100, "res": res, "profile": "p"}],
         "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}, **(profiles or {})}}
    return w, {"io": {"j": value}}


IO3 = {"type": "parallel", "cpu": [0, 0, 0], "com": [0, 0, 1e9, 0, 0, 0, 0, 0, 0]}

#: (additional_io_job, extra profiles, message): Batsim 4.2.1's aborts (recorded: README), and
#: the cases the engine does not simulate
BAD = [
    ({"alloc": "0-1 4", "profile_name": "x", "profile": {**IO3, "cpu": [0, 0, 5]}}, None,
     "Some computation (5) is assigned to storage node"),
    ({"alloc": "0-1 4", "profile_name": "x", "profile": {"type": "delay", "delay": 3}}, None, "Should not be reached"),
    ({"alloc": "0-1 4", "profile_name": "x", "profile": {"type": "parallel", "cpu": [0, 0], "com": [0, 0, 0, 0]}},
     None, "the number of resources given by the allocation (3) is different"),
    ({"alloc": "0-1 4", "profile_name": "p", "profile": IO3}, None, "The given profile name 'p' already exists!"),
    ({"alloc": "0-1 4", "profile_name": "unused"}, {"unused": IO3}, "it existed some time ago but is no longer"),
    ({"alloc": "0-1 4", "profile_name": "nope"}, None, "The given profile name 'nope' does not exists"),
    ({"alloc": "0-1 9", "profile_name": "x", "profile": IO3}, None, "Cannot get machine 9: it does not exist"),
    ({"alloc": "0-1 4"}, None, "the 'profile_name' field is mandatory"),
    ({"profile_name": "x", "profile": IO3}, None, "'alloc' must be a string"),
    ({"alloc": "0-1,4", "profile_name": "x", "profile": IO3}, None, "bad IO allocation"),
    ({"alloc": "0-1 4", "profile_name": "x", "profile": {"type": "parallel_homogeneous", "cpu": 0, "com": 0}}, None,
     "moves no bytes"),
    ({"alloc": "0-1 3", "profile_name": "x", "profile": {**IO3, "cpu": [0, 0, 5e8]}}, None,
     "outside the job's allocation: not simulated"),
    ({"alloc": "0-1 4", "profile_name": "x", "profile": {"type": "composed", "seq": ["p"]}}, None,
     "composed profile given inline"),
    ([1], None, "must be an object"),
]


@pytest.mark.parametrize("value,profiles,message", BAD)
def test_bad_io_job_is_refused_in_one_line(value, profiles, message):
    w, options = _io(value, profiles)
    with pytest.raises(EngineError) as exc:
        _run(ONE, w, options)
    text = str(exc.value)
    assert message in text and "\n" not in text and "w0!j" in text


def test_composed_io_profile_needs_a_composed_job_of_its_length():
    seq = {"type": "composed", "seq": ["io", "io"]}
    w, options = _io({"alloc": "0-1 4", "profile_name": "s"}, {"io": IO3, "s": seq})
    w["jobs"].append({"id": "user", "subtime": 50, "walltime": 100, "res": 3, "profile": "s"})
    with pytest.raises(EngineError, match="they must have compatible profile"):
        _run(ONE, w, options)
    w["profiles"]["p0"] = w["profiles"]["p"]
    w["profiles"]["p"] = {"type": "composed", "seq": ["p0"]}
    with pytest.raises(EngineError, match="should be the same"):
        _run(ONE, w, options)


def test_io_job_with_another_field_is_refused():
    # Batsim 4.2.1 reads job_id, alloc and one optional field ("should be of size in {2,3}")
    w, options = _io({"alloc": "0-1 4", "profile_name": "x", "profile": IO3})
    pol = _policy(options)
    execute = pol.execute
    pol.execute = lambda job, hosts, **extra: execute(job, hosts, storage_mapping={"pfs": 4}, **extra)
    with pytest.raises(EngineError, match=r"should be of size in \{2,3\} \(size=4\)"):
        simulate(ONE, [w], pol)


def test_the_policy_api_example_runs():
    # Policy.execute's docstring example: job ph (1e9 flops on h0, h1) with each host writing 1e9
    # bytes to pfs: the backbone (1.5 GBps) carries 2e9 bytes: 4/3 s after 100 + 0 + 50 us
    from procset import ProcSet

    from schedulers.core.policy import Policy

    class Example(Policy):
        def on_job_submitted(self, job):
            self.execute(job, [0, 1], additional_io_job={
                "profile_name": "io_" + job.name, "alloc": str(ProcSet(0, 1, self.storage_hosts[0].id)),
                "profile": {"type": "parallel", "cpu": [0, 0, 0], "com": [0, 0, 1e9, 0, 0, 1e9, 0, 0, 0]}})

    w = {"nb_res": 4, "jobs": [{"id": "ph", "subtime": 0, "walltime": 100, "res": 2, "profile": "ph"}],
         "profiles": {"ph": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}}
    job = simulate(ONE, [w], Example()).jobs[0]
    assert job.runtime == pytest.approx(2e9 / 1.5e9 + 150e-6, abs=1e-9)
