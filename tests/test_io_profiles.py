"""Batsim's IO profiles (``parallel_homogeneous_pfs``, ``data_staging``) and EXECUTE_JOB's
``storage_mapping`` in the embedded engine, against real Batsim 4.2.1's outputs recorded in
``fixtures/batsim_pfs`` (README there: the platforms, the cases, the hand-worked numbers and the
recording commands) and Batsim's aborts on bad IO input."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from schedulers.engine import simulate
from schedulers.engine.platform import read_platform
from schedulers.engine.ports import EngineError
from schedulers.inputs.errors import WorkloadError
from schedulers.registry import get_policy
from recorded import rows, schedule_rows

FIX = Path(__file__).parent / "fixtures" / "batsim_pfs"
sys.path.insert(0, str(Path(__file__).parent.parent / "scripts"))
from compare_with_batsim import same_file  # noqa: E402

MAP = {"pfs": 5, "bb": 4, "scratch": 4}   # Batsim's ids: compute 0-3, then storage by name: bb 4, pfs 5
KILL = {"read": 0.5, "stage": 1.5, "seq": 1.2, "after": 3.0001}

#: case -> (platform, workload, policy options (None: fcfs), compute sharing)
CASES = {
    "one": ("platform_one.xml", "one.json", None, False),
    "two": ("platform_two.xml", "two.json", {"storage_mapping": MAP}, False),
    "sharing": ("platform_two.xml", "two.json", {"storage_mapping": MAP, "pack": True}, True),
    "kill": ("platform_two.xml", "kill.json", {"storage_mapping": {"pfs": 5, "bb": 4}, "kill_at": KILL}, False),
    "odd": ("platform_two.xml", "odd.json", {"storage_mapping": MAP}, False),
    "nolinks": ("platform_nolinks.xml", "one.json", None, False),
    "cluster": ("platform_cluster.xml", "two.json", {"storage_mapping": MAP, "kill_at": {"stage": 1.5}}, False),
}


def _mapper(options: dict):
    spec = importlib.util.spec_from_file_location("batsim_pfs_mapper", FIX / "mapper.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Mapper(options)


def _run(platform: str, workload: str | dict, options: dict | None, sharing: bool, out: Path | None = None):
    policy = get_policy("fcfs") if options is None else _mapper(options)
    return simulate(FIX / platform, [workload if isinstance(workload, dict) else FIX / workload], policy,
                    compute_sharing=sharing, export_prefix=None if out is None else out / "out_")


def _times(case: str) -> dict[str, tuple[str, float]]:
    return {r["job_id"]: (r["final_state"], float(r["execution_time"])) for r in rows(FIX / case / "jobs.csv")}


def test_recordings_hold_the_hand_worked_numbers():
    # one storage host: 1e8 bytes written from h0 to pfs, alone: l0 (1 GBps) is the bottleneck
    # (backbone 1.5 GBps, pfs link 2 GBps), after the route's latency 100 + 0 + 50 us
    assert _times("one")["label"] == ("COMPLETED_SUCCESSFULLY", pytest.approx(1e8 / 1e9 + 150e-6, abs=1e-6))
    # two storage hosts: 1e9 bytes from h3 to pfs (label 'pfs' -> machine 5, the storage host 'pfs')
    assert _times("two")["write_pfs"] == ("COMPLETED_SUCCESSFULLY", pytest.approx(1.0 + 150e-6, abs=1e-6))
    odd = _times("odd")
    # pfs -> pfs: the model's loopback (10 GBps, no latency)
    assert odd["same"] == ("COMPLETED_SUCCESSFULLY", pytest.approx(1e8 / 10e9, abs=1e-6))
    # a negative amount moves nothing: 1e9 read from bb (500 MBps link) only, latency 20 + 0 + 100 us
    assert odd["mixneg"] == ("COMPLETED_SUCCESSFULLY", pytest.approx(2.0 + 120e-6, abs=1e-6))
    assert odd["neg"] == ("COMPLETED_SUCCESSFULLY", pytest.approx(1e-5))   # no work: Batsim's 1e-5 s
    # without links the bytes cost nothing: every IO job has no work
    nolinks = _times("nolinks")
    assert nolinks["read2"] == ("COMPLETED_SUCCESSFULLY", pytest.approx(1e-5))
    assert nolinks["seq"][1] == pytest.approx(2.0)   # 1 s of compute, the write, a 1 s delay
    assert _times("kill")["read"] == ("COMPLETED_KILLED", pytest.approx(0.5))


@pytest.fixture(scope="module")
def engine_runs(tmp_path_factory) -> dict[str, Path]:
    out = {}
    for case, (platform, workload, options, sharing) in CASES.items():
        d = tmp_path_factory.mktemp(case)
        _run(platform, workload, options, sharing, d)
        out[case] = d
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_engine_equals_real_batsim(engine_runs, case):
    got = engine_runs[case]
    for name in ("jobs.csv", "machine_states.csv", "schedule.trace"):
        assert same_file(got / f"out_{name}", FIX / case / name), (case, name)
    assert schedule_rows(got / "out_schedule.csv") == schedule_rows(FIX / case / "schedule.csv")


def test_storage_hosts_are_numbered_by_name():
    # Batsim 4.2.1 numbers storage hosts after the compute hosts in name order, not file order
    spec = read_platform(FIX / "platform_two.xml")
    assert [h.name for h in spec.storage] == ["bb", "pfs"]


def _one_job(profile: dict, res: int = 1) -> dict:
    return {"nb_res": 4, "jobs": [{"id": "j", "subtime": 0, "walltime": 100, "res": res, "profile": "p"}],
            "profiles": {"p": profile}}


PFS = {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e8}
STAGE = {"type": "data_staging", "nb_bytes": 1e8, "from": "pfs", "to": "bb"}

#: Batsim 4.2.1's aborts, recorded (README): (platform, profile, options) -> Batsim's message
ABORTS = [
    ("platform_two.xml", PFS, None, "No storage/host mapping given and there is no (or more than one) storage node"),
    ("platform_one.xml", STAGE, None, "Cannot generate a data staging task: : Unknown storage label='pfs'"),
    ("platform_two.xml", {**PFS, "storage": "nope"}, {"storage_mapping": MAP},
     "Cannot generate a homogeneous parallel task with pfs: : Unknown storage label='nope'"),
    ("platform_two.xml", PFS, {"storage_mapping": {"pfs": 0}},
     "The host(id=0, name='h0') pointed to by label='pfs' is not a storage host"),
    ("platform_two.xml", STAGE, {"storage_mapping": {"pfs": 4, "bb": 2}},
     "Cannot generate a data staging task: The host(id=2, name='h2') pointed to by label='bb' is not a storage host"),
    ("platform_two.xml", PFS, {"storage_mapping": {"pfs": 99}}, "Cannot get machine 99: it does not exist"),
    ("platform_two.xml", PFS, {"storage_mapping": {"pfs": -1}}, "Cannot get machine -1: it does not exist"),
    ("platform_two.xml", PFS, {"storage_mapping": {}}, "must be a non-empty object"),
    ("platform_two.xml", PFS, {"storage_mapping": {"pfs": 5.0}}, "not an integer machine id"),
    ("platform_two.xml", PFS, {"storage_mapping": {"pfs": "5"}}, "not an integer machine id"),
    ("platform_two.xml", PFS, {"storage_mapping": [5]}, "must be an object"),
    ("platform_two.xml", PFS, {"storage_mapping": {"pfs": 5}, "identity_mapping": True},
     "should be of size in {2,3} (size=4)"),
]


@pytest.mark.parametrize("platform,profile,options,message", ABORTS)
def test_bad_io_input_is_refused_in_one_line(platform, profile, options, message):
    with pytest.raises(EngineError) as exc:
        _run(platform, _one_job(profile), options, False)
    text = str(exc.value)
    assert message in text and "\n" not in text
    assert "w0!j" in text


def test_no_storage_host_is_refused():
    with pytest.raises(EngineError, match="platform has 0 storage hosts"):
        simulate(FIX.parent / "batsim_network_ptask" / "platform.xml", [_one_job(PFS)], get_policy("fcfs"))


@pytest.mark.parametrize("profile,message", [
    ({"type": "parallel_homogeneous_pfs", "storage": "pfs"}, "needs 'bytes_to_read' or 'bytes_to_write'"),
    ({"type": "parallel_homogeneous_pfs", "bytes_to_read": "1e8"}, "'bytes_to_read' must be a number"),
    ({"type": "parallel_homogeneous_pfs", "bytes_to_write": 1, "storage": 4}, "'storage' (the storage label) must be a string"),
    ({"type": "parallel_homogeneous_pfs", "bytes_to_write": 1, "host": None}, "'host' (the storage label) must be a string"),
    ({"type": "data_staging", "nb_bytes": -1, "from": "a", "to": "b"}, "'nb_bytes' must be a number of bytes >= 0"),
    ({"type": "data_staging", "from": "a", "to": "b"}, "needs 'nb_bytes'"),
    ({"type": "data_staging", "nb_bytes": 1, "to": "b"}, "needs 'from'"),
    ({"type": "data_staging", "nb_bytes": 1, "from": "a", "to": 5}, "'to' (a storage label) must be a string"),
])
def test_bad_io_profile_is_refused(tmp_path, profile, message):
    w = tmp_path / "w.json"
    w.write_text(json.dumps(_one_job(profile)))
    with pytest.raises(WorkloadError) as exc:
        simulate(FIX / "platform_two.xml", [w], get_policy("fcfs"))
    assert message in str(exc.value) and "profile 'p'" in str(exc.value) and str(w) in str(exc.value)


def test_io_on_a_routeless_zone_is_refused(tmp_path):
    # real Batsim 4.2.1 on this platform in a Floyd zone (recorded, README): "No route from 'pfs' to 'h0'"
    p = tmp_path / "floyd.xml"
    p.write_text((FIX / "platform_nolinks.xml").read_text().replace('routing="Full"', 'routing="Floyd"'))
    with pytest.raises(EngineError, match=r"job w0!j's profile 'p' .* between 'pfs' and 'h0' on a platform without "
                                          r"links outside a Full zone.*--engine batsim"):
        simulate(p, [_one_job(PFS)], get_policy("fcfs"))


def test_io_without_links_is_warned():
    from schedulers.engine.oddities import input_warnings
    from schedulers.engine.workload import load_workload
    spec = read_platform(FIX / "platform_nolinks.xml")
    lines = input_warnings(spec, [load_workload(FIX / "one.json", "w0", 4)], energy=False)
    assert any("IO profile 'labelled' (and 4 more) moves bytes to or from storage hosts" in x for x in lines)


def test_a_policy_maps_labels_to_the_storage_hosts_it_is_given(tmp_path):
    from schedulers.fcfs import FCFS

    seen = []

    class ByName(FCFS):
        def on_simulation_begins(self, platform):
            super().on_simulation_begins(platform)
            seen.append([(h.name, h.id) for h in self.storage_hosts])

        def execute(self, job, hosts, **extra):
            super().execute(job, hosts, storage_mapping={h.name: h.id for h in self.storage_hosts}, **extra)

    simulate(FIX / "platform_two.xml", [FIX / "odd.json"], ByName(), export_prefix=tmp_path / "out_")
    assert seen == [[("bb", 4), ("pfs", 5)]]   # Batsim's ids (README)
    assert same_file(tmp_path / "out_jobs.csv", FIX / "odd" / "jobs.csv")


def test_killed_io_jobs_progress_as_in_batsim():
    # JOB_KILLED's job_progress recorded on real Batsim 4.2.1 in the `kill` case (README)
    want = [
        (0.5, {"w0!read": {"profile_name": "read1g", "progress": 0.062485}}),
        (1.2, {"w0!seq": {"current_task": {"profile_name": "write", "progress": 0.69985}, "current_task_index": 1,
                          "profile_name": "seq"}}),
        (1.5, {"w0!stage": {"profile_name": "stage1g", "progress": 0.624995}}),
        (3.0001, {"w0!after": {"profile_name": "read1g", "progress": 0.0}}),
    ]
    seen = []
    policy = _mapper(CASES["kill"][2])
    policy.on_jobs_killed = lambda jobs, progress: seen.append((policy.now, progress))
    simulate(FIX / "platform_two.xml", [FIX / "kill.json"], policy)
    assert seen == want


def test_io_profiles_keep_no_core_busy_and_take_no_time_without_a_network():
    from schedulers.core.power import busy_parts
    from schedulers.core.run_outputs import Task, ideal_duration
    assert busy_parts(PFS, 0) == 0 and busy_parts(STAGE, 0) == 0
    assert busy_parts({"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}, 0) == 1
    task = Task(workload="w0", name="j", user="", subtime=0.0, res=2, source="w.json",
                stages=[PFS, {"type": "parallel_homogeneous", "cpu": 2e9, "com": 0}, STAGE, {"type": "delay", "delay": 3}])
    assert ideal_duration(task, 1e9) == 2.0 + 3.0   # the compute stage and the delay only
