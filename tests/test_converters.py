"""Workload converters: SWF and GWF traces -> Batsim JSON, rescaling, validation, CLI.

Expected numbers for the hand-written fixtures are worked out in comments. The fixtures:

tests/fixtures/tiny.swf (header MaxProcs 16; job lines at file lines 8-12 and 14-16):
    job submit  run  alloc reqp reqtime status user   -> fate with default options
     1    100    50    4    4     60     1     3      kept
     2    110   120    8   -1    100     1     7      kept, procs from field 5, run > walltime
     3    115    -1    2    2    300     5     3      dropped: cancelled
     4    120  12.5    6    6     -1     0    -1      kept, no walltime, no user
     5    105    50   16   16   3600     1     3      kept (out of submit order)
     6    130     0    1    1     60     1     4      dropped: run time 0
     7    140    45   -1   -1     60     1     4      dropped: processors unknown
     8    150    20    3    3    600     5     9      dropped: cancelled (but it ran)

tests/fixtures/tiny.gwf (no header):
    JobID Submit Run NProcs ReqNProcs ReqTime Status UserID OrigSiteID -> default fate
     1    1000   200   2      2        300     1      7      lyon        kept
     2    1010    -1   4      4        600     5      7      lyon        dropped: cancelled
     3    1020   400   4     -1        300     0      U12    nancy       kept, run > walltime
     4    1005    50   1      1         -1     1      -1     -1          kept, no walltime/user/site
     5    1030     0   1      1         60     1      7      lyon        dropped: run time 0
     6    1040   100   8      8       3600     1      7      lyon        kept
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import shutil
from pathlib import Path

import pytest

from schedulers.inputs.convert import add_convert_parser, convert_trace, dumps_workload, run_convert
from schedulers.inputs.errors import PlatformError, WorkloadError
from schedulers.inputs.gwf import gwf_to_batsim
from schedulers.inputs.rescale import rescale_workload
from schedulers.inputs.swf import ConversionReport, swf_to_batsim
from schedulers.inputs.validate import load_workload_json, schema, validate_workload

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TINY_SWF = FIXTURES / "tiny.swf"
TINY_GWF = FIXTURES / "tiny.gwf"
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
TRACES = SHARED / "data" / "traces"


def _ids(workload):
    return [job["id"] for job in workload["jobs"]]


def _consistent(report: ConversionReport, workload) -> None:
    assert report.jobs_kept == len(workload["jobs"])
    assert report.records_read == report.jobs_kept + report.jobs_dropped
    assert report.nb_res == workload["nb_res"]


def _shared(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared reference data not available: {path}")
    return path


# ------------------------------------------------------------------------------------------
# SWF
# ------------------------------------------------------------------------------------------

def test_swf_default_conversion_worked_by_hand():
    w = swf_to_batsim(TINY_SWF)
    # Kept jobs 1, 2, 4, 5 sorted by submit time: 100 (1), 105 (5), 110 (2), 120 (4).
    # Origin "first" = 100 s -> subtimes 0, 5, 10, 20.
    # res = ceil(procs / 1): job 1 field 8 = 4; job 5 field 8 = 16; job 2 field 8 = -1 so
    # field 5 = 8; job 4 field 8 = 6.
    # walltime = field 9 when > 0: 60, 3600, 100; job 4 has -1 -> -1.
    # Profiles, one per distinct runtime (field 4): 50 (jobs 1, 5), 120 (job 2), 12.5 (job 4).
    # nb_res: header MaxProcs 16 / 1 core per host = 16.
    assert dict(w) == {
        "nb_res": 16,
        "jobs": [
            {"id": "1", "subtime": 0, "res": 4, "walltime": 60, "profile": "delay_50", "user": "u3"},
            {"id": "5", "subtime": 5, "res": 16, "walltime": 3600, "profile": "delay_50", "user": "u3"},
            {"id": "2", "subtime": 10, "res": 8, "walltime": 100, "profile": "delay_120", "user": "u7"},
            {"id": "4", "subtime": 20, "res": 6, "walltime": -1, "profile": "delay_12.5"},
        ],
        "profiles": {
            "delay_12.5": {"type": "delay", "delay": 12.5},
            "delay_50": {"type": "delay", "delay": 50},
            "delay_120": {"type": "delay", "delay": 120},
        },
    }
    r = w.report
    # 8 records = 4 kept + 2 cancelled (jobs 3, 8) + 1 run time 0 (job 6) + 1 no processors (job 7).
    assert (r.records_read, r.jobs_kept, r.jobs_dropped) == (8, 4, 4)
    assert r.dropped == {
        "cancelled (field 11 = 5)": 2,
        "run time 0 (field 4 = 0, never ran)": 1,
        "processors unknown (field 8 and field 5 = -1)": 1,
    }
    # Every -1 substitution of the kept jobs is noted, once per job.
    assert r.notes == {
        "processors from field 5 (allocated): field 8 = -1": 1,      # job 2
        "runtime > walltime: Batsim kills the job at its walltime": 1,  # job 2: 120 > 100
        "no walltime (field 9 = -1): walltime -1": 1,                # job 4
        "user unknown (field 12 = -1): no 'user' field": 1,           # job 4
    }
    assert r.header["MaxProcs"] == "16" and r.header["UnixStartTime"] == "1000000000"
    assert r.time_origin == 100 and r.format == "swf"
    _consistent(r, w)
    validate_workload(w, str(TINY_SWF))


def test_swf_cores_per_host_maps_processors_to_hosts():
    w = swf_to_batsim(TINY_SWF, cores_per_host=4)
    # res = ceil(procs / 4): job 1: 4/4 = 1; job 5: 16/4 = 4; job 2: 8/4 = 2; job 4: ceil(1.5) = 2.
    assert [j["res"] for j in w["jobs"]] == [1, 4, 2, 2]
    # nb_res = ceil(MaxProcs 16 / 4) = 4.
    assert w["nb_res"] == 4
    # Only job 4 (6 processors) is not a multiple of 4.
    assert w.report.notes["processors not a multiple of cores_per_host: res rounded up"] == 1
    # The report a user reads says the grouping it applied.
    assert w.report.cores_per_host == 4
    assert "\n  nb_res: 4\n  processors per host: 4 (res = ceil(processors / 4))\n" in w.report.summary()


def test_swf_oversized_drop_clamp_error():
    # nb_hosts = 4 with 1 core per host: jobs 5 (16), 2 (8) and 4 (6) need more than 4 hosts.
    w = swf_to_batsim(TINY_SWF, nb_hosts=4)
    assert _ids(w) == ["1"] and w["nb_res"] == 4
    assert w.report.dropped["needs more hosts than nb_res (oversized='drop')"] == 3
    # 8 records = 1 kept + 4 (as before) + 3 oversized.
    assert w.report.jobs_dropped == 7
    _consistent(w.report, w)

    w = swf_to_batsim(TINY_SWF, nb_hosts=4, oversized="clamp")
    assert [j["res"] for j in w["jobs"]] == [4, 4, 4, 4]
    assert w.report.notes["res clamped to nb_res (oversized='clamp')"] == 3

    # The first oversized job in file order is job 2, on file line 9.
    with pytest.raises(WorkloadError) as info:
        swf_to_batsim(TINY_SWF, nb_hosts=4, oversized="error")
    message = str(info.value)
    assert "tiny.swf" in message and "line 9" in message and "'2'" in message


def test_swf_keep_cancelled():
    w = swf_to_batsim(TINY_SWF, keep_cancelled=True)
    # Job 8 (cancelled after running 20 s) is kept: subtime 150 - 100 = 50, res 3, walltime 600.
    # Job 3 (cancelled, run time -1) is now dropped by the run-time rule instead.
    assert _ids(w) == ["1", "5", "2", "4", "8"]
    assert w["jobs"][-1] == {"id": "8", "subtime": 50, "res": 3, "walltime": 600,
                             "profile": "delay_20", "user": "u9"}
    assert w.report.dropped == {
        "run time unknown (field 4 = -1)": 1,
        "run time 0 (field 4 = 0, never ran)": 1,
        "processors unknown (field 8 and field 5 = -1)": 1,
    }
    assert w.report.notes["cancelled job kept (field 11 = 5, keep_cancelled)"] == 1
    _consistent(w.report, w)


def test_swf_time_window_and_max_jobs():
    w = swf_to_batsim(TINY_SWF, start=105, end=130)
    # Window [105, 130): job 1 (100) is before start; jobs 5 (105), 2 (110), 4 (120) are in;
    # job 6 (130) is dropped earlier by its run time 0, 7 by processors, 3 and 8 as cancelled.
    # Origin = 105 -> subtimes 0, 5, 15.
    assert _ids(w) == ["5", "2", "4"]
    assert [j["subtime"] for j in w["jobs"]] == [0, 5, 15]
    assert w.report.dropped["submitted before start"] == 1
    _consistent(w.report, w)

    w = swf_to_batsim(TINY_SWF, end=110)
    # Submitted at or after 110: jobs 2 (110) and 4 (120).
    assert _ids(w) == ["1", "5"]
    assert w.report.dropped["submitted at or after end"] == 2

    w = swf_to_batsim(TINY_SWF, max_jobs=2)
    # The 2 earliest kept jobs: 1 (100) and 5 (105); jobs 2 and 4 dropped.
    assert _ids(w) == ["1", "5"]
    assert w.report.dropped["beyond max_jobs"] == 2
    _consistent(w.report, w)


def test_swf_time_origin():
    w = swf_to_batsim(TINY_SWF, time_origin="zero")
    assert [j["subtime"] for j in w["jobs"]] == [100, 105, 110, 120]
    w = swf_to_batsim(TINY_SWF, time_origin=102.0)
    # Job 1 (100 < 102) dropped; 105 - 102 = 3, 110 - 102 = 8, 120 - 102 = 18.
    assert [j["subtime"] for j in w["jobs"]] == [3, 8, 18]
    assert w.report.dropped["submitted before the time origin"] == 1
    assert w.report.time_origin == 102


def test_swf_walltime_and_runtime_sources():
    w = swf_to_batsim(TINY_SWF, walltime="runtime")
    # walltime = runtime: jobs 1, 5, 2, 4 ran 50, 50, 120, 12.5 s.
    assert [j["walltime"] for j in w["jobs"]] == [50, 50, 120, 12.5]
    assert w.report.notes["runtime == walltime: Batsim ends the job as walltime reached"] == 4

    w = swf_to_batsim(TINY_SWF, walltime="none")
    assert all(j["walltime"] == -1 for j in w["jobs"])

    w = swf_to_batsim(TINY_SWF, runtime_source="requested")
    # runtime = field 9 when > 0: job 1 60, job 5 3600, job 2 100; job 4 has -1 -> field 4 = 12.5.
    # Job 6 stays dropped: its field 4 is 0 (it never ran), even though its field 9 is 60.
    assert [j["profile"] for j in w["jobs"]] == ["delay_60", "delay_3600", "delay_100", "delay_12.5"]
    assert list(w["profiles"]) == ["delay_12.5", "delay_60", "delay_100", "delay_3600"]
    assert w.report.notes["runtime from field 4 (run time): field 9 = -1"] == 1
    assert w.report.dropped["run time 0 (field 4 = 0, never ran)"] == 1


def test_swf_without_users():
    w = swf_to_batsim(TINY_SWF, users=False)
    assert all("user" not in j for j in w["jobs"])
    assert not any("user" in note for note in w.report.notes)


def test_swf_gzip_is_transparent(tmp_path):
    packed = tmp_path / "tiny.swf.gz"
    with open(TINY_SWF, "rb") as src, gzip.open(packed, "wb") as dst:
        shutil.copyfileobj(src, dst)
    assert dict(swf_to_batsim(packed)) == dict(swf_to_batsim(TINY_SWF))


def test_swf_malformed_lines_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.swf"
    bad.write_text(
        "; MaxProcs: 4\n"
        "1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
        "2 5 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1\n"  # 17 fields
    )
    with pytest.raises(WorkloadError) as info:
        swf_to_batsim(bad)
    assert "bad.swf" in str(info.value) and "line 3" in str(info.value) and "17" in str(info.value)

    bad.write_text("; comment\n1 0 0 ten 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n")
    with pytest.raises(WorkloadError) as info:
        swf_to_batsim(bad)
    assert "bad.swf" in str(info.value) and "line 2" in str(info.value) and "field 4" in str(info.value)


@pytest.mark.parametrize("options", [
    {"cores_per_host": 0}, {"nb_hosts": 0}, {"walltime": "max"}, {"oversized": "keep"},
    {"time_origin": "last"}, {"start": 10, "end": 5}, {"profile_kind": "parallel_homogeneous"},
])
def test_swf_rejects_bad_options(options):
    with pytest.raises(ValueError):
        swf_to_batsim(TINY_SWF, **options)


def test_swf_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        swf_to_batsim(tmp_path / "absent.swf")


# ------------------------------------------------------------------------------------------
# GWF
# ------------------------------------------------------------------------------------------

def test_gwf_default_conversion_worked_by_hand():
    w = gwf_to_batsim(TINY_GWF)
    # Kept 1, 3, 4, 6 sorted by SubmitTime: 1000 (1), 1005 (4), 1020 (3), 1040 (6);
    # origin 1000 -> subtimes 0, 5, 20, 40.
    # res: ReqNProcs 2, 1; job 3 ReqNProcs -1 -> NProcs 4; job 6 8. nb_res = largest res = 8
    # (GWF has no machine-size header).
    # user: numeric 7 -> "u7"; string "U12" kept; -1 -> no field. site = OrigSiteID unless -1.
    assert dict(w) == {
        "nb_res": 8,
        "jobs": [
            {"id": "1", "subtime": 0, "res": 2, "walltime": 300, "profile": "delay_200",
             "user": "u7", "site": "lyon"},
            {"id": "4", "subtime": 5, "res": 1, "walltime": -1, "profile": "delay_50"},
            {"id": "3", "subtime": 20, "res": 4, "walltime": 300, "profile": "delay_400",
             "user": "U12", "site": "nancy"},
            {"id": "6", "subtime": 40, "res": 8, "walltime": 3600, "profile": "delay_100",
             "user": "u7", "site": "lyon"},
        ],
        "profiles": {
            "delay_50": {"type": "delay", "delay": 50},
            "delay_100": {"type": "delay", "delay": 100},
            "delay_200": {"type": "delay", "delay": 200},
            "delay_400": {"type": "delay", "delay": 400},
        },
    }
    r = w.report
    # 6 records = 4 kept + 1 cancelled (job 2) + 1 run time 0 (job 5).
    assert (r.records_read, r.jobs_kept) == (6, 4)
    assert r.dropped == {"cancelled (Status = 5)": 1, "run time 0 (RunTime = 0, never ran)": 1}
    assert r.notes == {
        "processors from NProcs (allocated): ReqNProcs = -1": 1,       # job 3
        "runtime > walltime: Batsim kills the job at its walltime": 1,  # job 3: 400 > 300
        "no walltime (ReqTime = -1): walltime -1": 1,                 # job 4
        "user unknown (UserID = -1): no 'user' field": 1,              # job 4
        "site unknown (OrigSiteID = -1): no 'site' field": 1,          # job 4
    }
    _consistent(r, w)
    validate_workload(w, str(TINY_GWF))


def test_gwf_site_filter_and_hosts():
    w = gwf_to_batsim(TINY_GWF, site="lyon")
    # Lyon jobs that survive the other rules: 1 (1000) and 6 (1040) -> subtimes 0, 40.
    # Job 3 (nancy) and job 4 (unknown site) are dropped by the site filter.
    assert _ids(w) == ["1", "6"] and [j["subtime"] for j in w["jobs"]] == [0, 40]
    assert w.report.dropped["other site (site filter)"] == 2
    _consistent(w.report, w)
    assert _ids(gwf_to_batsim(TINY_GWF, site=["lyon", "nancy"])) == ["1", "3", "6"]

    w = gwf_to_batsim(TINY_GWF, cores_per_host=2, nb_hosts=2, oversized="clamp")
    # res = ceil(procs / 2): job 1 2/2 = 1; job 4 ceil(0.5) = 1; job 3 4/2 = 2; job 6 8/2 = 4 -> 2.
    assert [j["res"] for j in w["jobs"]] == [1, 1, 2, 2] and w["nb_res"] == 2


def test_gwf_malformed_line(tmp_path):
    bad = tmp_path / "bad.gwf"
    lines = TINY_GWF.read_text().splitlines()
    lines[7] = lines[7].rsplit(" ", 1)[0]  # file line 8 (job 2) loses its last column
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(WorkloadError) as info:
        gwf_to_batsim(bad)
    assert "bad.gwf" in str(info.value) and "line 8" in str(info.value) and "28" in str(info.value)


# ------------------------------------------------------------------------------------------
# Rescaling
# ------------------------------------------------------------------------------------------

def _workload_48():
    return {
        "description": "kept as is",
        "nb_res": 48,
        "jobs": [{"id": str(i), "subtime": i, "res": res, "walltime": 60, "profile": "p", "user": 0}
                 for i, res in enumerate([1, 16, 24, 48, 30])],
        "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 1e6, "com": 0},
                     "unused": {"type": "delay", "delay": 3}},
    }


def test_rescale_modes_worked_by_hand():
    data = _workload_48()
    before = copy.deepcopy(data)
    w = rescale_workload(data, 22)
    # scale: ceil(res * 22 / 48): 1 -> ceil(0.458) = 1; 16 -> ceil(7.33) = 8; 24 -> 11 exactly;
    # 48 -> 22; 30 -> ceil(13.75) = 14.
    assert [j["res"] for j in w["jobs"]] == [1, 8, 11, 22, 14]
    assert w["nb_res"] == 22 and w["description"] == "kept as is"
    assert w["profiles"] == data["profiles"] and w["profiles"] is not data["profiles"]
    assert all(j["user"] == 0 for j in w["jobs"])
    assert data == before  # the input is untouched
    assert w.report.notes == {"res scaled": 4}  # all but the 1-host job changed
    _consistent(w.report, w)

    w = rescale_workload(data, 22, mode="clamp")
    assert [j["res"] for j in w["jobs"]] == [1, 16, 22, 22, 22]

    w = rescale_workload(data, 22, mode="drop")
    # 24, 48 and 30 > 22 are removed; the profiles stay, even if unused.
    assert _ids(w) == ["0", "1"] and set(w["profiles"]) == {"p", "unused"}
    assert w.report.jobs_dropped == 3
    _consistent(w.report, w)

    with pytest.raises(ValueError):
        rescale_workload(data, 0)
    with pytest.raises(ValueError):
        rescale_workload(data, 22, mode="squeeze")


def test_lyon_workloads_rescale_to_22_hosts_and_validate():
    root = _shared("data", "traces", "g5k-lyon-gridgym", "workloads")
    files = sorted(root.rglob("*.json"))
    assert files, f"no workload in {root}"
    for path in files:
        data = load_workload_json(path)
        w = rescale_workload(data, 22, source=str(path))
        validate_workload(w, str(path))
        assert w["nb_res"] == 22 and len(w["jobs"]) == len(data["jobs"])
        assert all(1 <= j["res"] <= 22 for j in w["jobs"])
        assert w["profiles"] == data["profiles"]


# ------------------------------------------------------------------------------------------
# Real traces (Parallel Workloads Archive)
# ------------------------------------------------------------------------------------------

def _swf_traces():
    folder = TRACES / "pwa-swf"
    if not folder.exists():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"shared traces not available: {folder}"))]
    return sorted(p for p in folder.iterdir() if p.name.endswith((".swf", ".swf.gz")))


def _job_lines(path: Path) -> int:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as stream:
        return sum(1 for line in stream if line.strip() and not line.lstrip().startswith(";"))


@pytest.mark.parametrize("trace", _swf_traces(), ids=lambda p: getattr(p, "name", "absent"))
def test_real_swf_traces_convert_and_validate(trace):
    # Sampled to 5,000 jobs to keep the schema validation fast; every record is still read.
    w = swf_to_batsim(trace, max_jobs=5000)
    validate_workload(w, str(trace))
    r = w.report
    assert r.records_read == _job_lines(trace)
    _consistent(r, w)
    assert 0 < len(w["jobs"]) <= 5000
    assert w["jobs"][0]["subtime"] == 0
    subtimes = [j["subtime"] for j in w["jobs"]]
    assert subtimes == sorted(subtimes)
    used = {j["profile"] for j in w["jobs"]}
    assert used == set(w["profiles"])
    # nb_res comes from the header's MaxProcs (1 core per host).
    assert w["nb_res"] == int(r.header["MaxProcs"])


def test_real_kth_trace_counts():
    trace = _shared("data", "traces", "pwa-swf", "KTH-SP2-1996-2.1-cln.swf.gz")
    w = swf_to_batsim(trace)
    # Facts of this file (checked with awk): 28,476 job lines, status only 0 or 1, 8 jobs with
    # run time 0 and one job (27313) with fields 5 and 8 both -1 -> 28,476 - 9 = 28,467 kept.
    r = w.report
    assert (r.records_read, r.jobs_kept) == (28476, 28467)
    assert r.dropped == {"run time 0 (field 4 = 0, never ran)": 8,
                         "processors unknown (field 8 and field 5 = -1)": 1}
    # First kept job is job 15 submitted at 599850 s of trace time.
    assert w["jobs"][0] == {"id": "15", "subtime": 0, "res": 4, "walltime": 53940,
                            "profile": "delay_3477", "user": "u12"}
    assert r.time_origin == 599850 and w["nb_res"] == 100


# ------------------------------------------------------------------------------------------
# Validation
# ------------------------------------------------------------------------------------------

def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def _valid():
    return {
        "nb_res": 4,
        "jobs": [{"id": "a", "subtime": 0, "res": 2, "walltime": 10, "profile": "d"},
                 {"id": 7, "subtime": 1.5, "res": 4, "walltime": -1, "profile": "seq"}],
        "profiles": {"d": {"type": "delay", "delay": 5},
                     "h": {"type": "parallel_homogeneous_total", "cpu": 1e9, "com": 0},
                     "p": {"type": "parallel", "cpu": [1, 2], "com": [0, 0, 0, 0]},
                     "seq": {"type": "composed", "repeat": 2, "seq": ["d", "h"]},
                     "x": {"type": "smpi", "trace": "t.txt"}},
    }


def test_valid_workload_passes(tmp_path):
    path = _write(tmp_path, "ok.json", _valid())
    assert load_workload_json(path) == _valid()
    assert schema()["$schema"].endswith("2020-12/schema")


def test_malformed_json_names_file_line_and_column(tmp_path):
    path = _write(tmp_path, "broken.json", '{"nb_res": 2,\n "jobs": [\n  {"id": "a",, "res": 1}\n]}')
    with pytest.raises(WorkloadError) as info:
        load_workload_json(path)
    message = str(info.value)
    assert "broken.json" in message and "line 3" in message and "column" in message


@pytest.mark.parametrize("change, expected", [
    # duplicate job id: "7" and 7 are the same id for Batsim
    (lambda d: d["jobs"].append({"id": "7", "subtime": 2, "res": 1, "profile": "d"}),
     ["duplicate job id", "'7'"]),
    (lambda d: d["jobs"].append({"id": "lost", "subtime": 2, "res": 1, "profile": "nope"}),
     ["'lost'", "missing profile 'nope'"]),
    (lambda d: d["jobs"].append({"id": "big", "subtime": 2, "res": 5, "profile": "d"}),
     ["'big'", "res 5 > nb_res 4"]),
    (lambda d: d["profiles"]["seq"]["seq"].append("ghost"),
     ["profile 'seq'", "missing profile 'ghost'"]),
    (lambda d: d["profiles"]["d"].pop("delay"), ["profile 'd'", "'delay' is a required property"]),
    (lambda d: d["jobs"][0].update(walltime=0), ["job 'a'", "walltime"]),
    (lambda d: d["jobs"][0].update(subtime="1"), ["job 'a'", "subtime"]),
    (lambda d: d["jobs"][0].update(res=-1), ["job 'a'", "res"]),
    (lambda d: d["profiles"]["seq"].update(repeat=0), ["profile 'seq'", "repeat"]),
    (lambda d: d["profiles"]["h"].pop("com"), ["profile 'h'", "'com' is a required property"]),
    (lambda d: d["profiles"]["p"].update(com=[0]), ["profile 'p'", "len(cpu)^2"]),
    (lambda d: d["profiles"]["x"].pop("type"), ["profile 'x'", "'type' is a required property"]),
    (lambda d: d.update(nb_res=0), ["nb_res"]),
])
def test_invalid_workloads_name_file_and_item(tmp_path, change, expected):
    data = _valid()
    change(data)
    path = _write(tmp_path, "wrong.json", data)
    with pytest.raises(WorkloadError) as info:
        load_workload_json(path)
    message = str(info.value)
    assert "wrong.json" in message
    for fragment in expected:
        assert fragment in message


def test_duplicate_profile_key_is_refused(tmp_path):
    text = '{"nb_res": 1, "jobs": [], "profiles": {"d": {"type": "delay", "delay": 1}, "d": {"type": "delay", "delay": 2}}}'
    with pytest.raises(WorkloadError) as info:
        load_workload_json(_write(tmp_path, "dup.json", text))
    assert "dup.json" in str(info.value) and "'d'" in str(info.value)


def test_errors_are_value_errors():
    assert issubclass(WorkloadError, ValueError) and issubclass(PlatformError, ValueError)
    assert str(PlatformError("p.xml: host 'a'")) == "p.xml: host 'a'"


def test_real_batsim_workloads_pass_the_schema():
    files = []
    for folder in (SHARED / "batsim-4.2.1" / "inputs", SHARED / "data" / "batsim-examples"):
        files += sorted(folder.glob("*.json")) if folder.exists() else []
    if not files:
        pytest.skip(f"shared Batsim workloads not available under {SHARED}")
    for path in files:
        types = {p.get("type") for p in json.loads(path.read_text()).get("profiles", {}).values()}
        if types & {"DelayProfile", "ParallelTaskHomogeneousProfile"}:
            # Batsim 1.x's profile types (the examples of ../shared/data): real Batsim 4.2.1 reads
            # an unknown type as 'usage_trace' and refuses them (recorded, 2026-11-24, on
            # example_workload_hpc_seed1_jobs250.json: "profile 'ft.C.16' has no 'trace' field"),
            # and so does the schema
            with pytest.raises(WorkloadError, match="'trace' is a required property"):
                load_workload_json(path)
            continue
        load_workload_json(path)


# ------------------------------------------------------------------------------------------
# convert_trace and the CLI
# ------------------------------------------------------------------------------------------

def test_convert_trace_writes_one_job_per_line(tmp_path):
    out = tmp_path / "sub" / "tiny.json"
    report = convert_trace(TINY_SWF, out, cores_per_host=4)
    assert report.output == str(out) and report.jobs_kept == 4
    assert load_workload_json(out) == dict(swf_to_batsim(TINY_SWF, cores_per_host=4))
    text = out.read_text()
    assert sum(1 for line in text.splitlines() if line.lstrip().startswith('{"id"')) == 4
    first = text
    convert_trace(TINY_SWF, out, cores_per_host=4)
    assert out.read_text() == first  # deterministic, byte for byte
    assert json.loads(dumps_workload({"nb_res": 1, "jobs": [], "profiles": {}})) == {
        "nb_res": 1, "jobs": [], "profiles": {}}


def test_convert_trace_dispatch_and_errors(tmp_path):
    report = convert_trace(TINY_GWF, tmp_path / "g.json", site="lyon")
    assert report.format == "gwf" and report.jobs_kept == 2

    src = _write(tmp_path, "w48.json", _workload_48())
    report = convert_trace(src, tmp_path / "w22.json", nb_hosts=22, mode="drop")
    assert report.format == "batsim-json" and report.jobs_kept == 2
    assert load_workload_json(tmp_path / "w22.json")["nb_res"] == 22

    with pytest.raises(ValueError, match="nb_hosts"):
        convert_trace(src, tmp_path / "x.json")
    with pytest.raises(ValueError, match="unknown trace type"):
        convert_trace(tmp_path / "trace.csv", tmp_path / "x.json")
    with pytest.raises(ValueError, match="site"):
        convert_trace(TINY_SWF, tmp_path / "x.json", site="lyon")
    with pytest.raises(WorkloadError):
        convert_trace(TINY_SWF, tmp_path / "never.json", nb_hosts=4, oversized="error")
    assert not (tmp_path / "never.json").exists()


def _cli(argv):
    parser = argparse.ArgumentParser(prog="gridsched")
    add_convert_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    assert args.func is run_convert
    return args.func(args)


def test_cli_convert(tmp_path, capsys):
    out = tmp_path / "tiny.json"
    code = _cli(["convert", str(TINY_SWF), "-o", str(out), "--cores-per-host", "4",
                 "--keep-cancelled", "--no-users", "--walltime", "none", "--max-jobs", "3"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "8 records read, 3 jobs kept, 5 dropped" in printed and str(out) in printed
    data = load_workload_json(out)
    assert [j["id"] for j in data["jobs"]] == ["1", "5", "2"]
    assert all("user" not in j and j["walltime"] == -1 for j in data["jobs"])

    code = _cli(["convert", str(tmp_path / "absent.swf"), "-o", str(out)])
    assert code == 2 and "absent.swf" in capsys.readouterr().err

    code = _cli(["convert", str(TINY_SWF), "-o", str(out), "--nb-hosts", "4", "--oversized", "error"])
    err = capsys.readouterr().err
    assert code == 2 and "tiny.swf" in err and "line 9" in err


def test_rescaling_a_json_workload_without_a_host_count_says_which_option(tmp_path, capsys):
    src = Path(__file__).resolve().parents[1] / "docs" / "examples" / "tutorial.json"
    args = argparse.Namespace(trace=str(src), output=str(tmp_path / "w.json"))
    assert run_convert(args) == 2
    assert capsys.readouterr().err == (f"gridsched convert: error: {src}: rescaling a Batsim JSON workload needs "
                                       "nb_hosts, the hosts of the target platform (gridsched convert --nb-hosts N)\n")
    assert not (tmp_path / "w.json").exists()
