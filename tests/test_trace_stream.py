"""Traces converted as they are read (issue 13, "Scale/Memory"): ``gridsched run`` on an SWF or
GWF trace writes the Batsim workload straight to its staged file
(:meth:`schedulers.inputs.swf.TraceConversion.write`) and the engine reads that file piece by
piece; the file is the one the dict path (``swf_to_batsim`` then ``dumps_workload``) writes, byte
for byte. Expected values worked out by hand in the comments.

The hand-made trace ``MIXED`` (header MaxProcs 8; with 1 core per host the capacity is 8 hosts):

    file line  job submit  run   procs reqtime status user -> fate
        3       1    200   30      2     60      1      5     kept
        4       2    100   30      1     20      1      5     kept, run 30 > walltime 20
        5       3    100  45.5     3     -1      0     -1     kept (tie with job 2: after it, file
                                                               order), no walltime, no user
        6       2    150   30      1     60      1      5     dropped: duplicate id
        7       4    150   10     16     60      1      5     dropped: 16 hosts > 8 (oversized)
        8       5    300   30      8     30      1      6     kept, run 30 == walltime 30
        9       6    120   10      1     60      5      5     dropped: cancelled

Kept jobs sorted by submit time: 2 (100), 3 (100), 1 (200), 5 (300); origin 100 s, so subtimes
0, 0, 100, 200; profiles delay_30 (jobs 2, 1, 5) and delay_45.5 (job 3).
"""

from __future__ import annotations

import csv
import json
import shutil
import tracemalloc
from pathlib import Path

import pytest

from schedulers.cli import main
from schedulers.inputs.convert import convert_trace, dumps_workload
from schedulers.inputs.errors import WorkloadError
from schedulers.inputs.gwf import gwf_conversion, gwf_to_batsim
from schedulers.inputs.swf import _SeenIds, swf_conversion, swf_to_batsim

FIX = Path(__file__).parent / "fixtures"
HETERO = FIX / "hetero4.xml"  # 4 hosts of 4 cores
TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "traces" / "pwa-swf"


def _line(job: int, submit: float, run: float, procs: int, reqtime: float, status: int, user: int) -> str:
    return f"{job} {submit} -1 {run} {procs} -1 -1 {procs} {reqtime} -1 {status} {user} -1 -1 -1 -1 -1 -1\n"


MIXED = ("; Version: 2.2\n; MaxProcs: 8\n"
         + _line(1, 200, 30, 2, 60, 1, 5) + _line(2, 100, 30, 1, 20, 1, 5) + _line(3, 100, 45.5, 3, -1, 0, -1)
         + _line(2, 150, 30, 1, 60, 1, 5) + _line(4, 150, 10, 16, 60, 1, 5) + _line(5, 300, 30, 8, 30, 1, 6)
         + _line(6, 120, 10, 1, 60, 5, 5))


def _report(report) -> dict:
    d = report.to_dict()
    d["output"] = None
    return d


def _both(tmp_path: Path, trace: Path, conversion, to_batsim, **options) -> tuple[str, dict]:
    """The streamed file and the dict path's text must be the same bytes, with the same report;
    returns the text and the streamed report."""
    folder = tmp_path / "out"
    shutil.rmtree(folder, ignore_errors=True)
    out = folder / "streamed.json"
    streamed = conversion(trace, **options).write(out)
    data = to_batsim(trace, **options)
    text = out.read_text(encoding="utf-8")
    assert text == dumps_workload(data)
    assert _report(streamed) == _report(data.report)
    assert streamed.output == str(out)
    assert list(folder.iterdir()) == [out]  # no temporary file or spool left
    return text, _report(streamed)


def test_streamed_file_is_the_dict_path_worked_by_hand(tmp_path: Path) -> None:
    trace = tmp_path / "mixed.swf"
    trace.write_text(MIXED)
    text, report = _both(tmp_path, trace, swf_conversion, swf_to_batsim)
    assert text == (
        '{\n  "nb_res": 8,\n  "jobs": [\n'
        '    {"id": "2", "subtime": 0, "res": 1, "walltime": 20, "profile": "delay_30", "user": "u5"},\n'
        '    {"id": "3", "subtime": 0, "res": 3, "walltime": -1, "profile": "delay_45.5"},\n'
        '    {"id": "1", "subtime": 100, "res": 2, "walltime": 60, "profile": "delay_30", "user": "u5"},\n'
        '    {"id": "5", "subtime": 200, "res": 8, "walltime": 30, "profile": "delay_30", "user": "u6"}\n'
        '  ],\n  "profiles": {\n'
        '    "delay_30": {"type": "delay", "delay": 30},\n'
        '    "delay_45.5": {"type": "delay", "delay": 45.5}\n'
        '  }\n}\n')
    assert (report["records_read"], report["jobs_kept"], report["nb_res"], report["time_origin"]) == (7, 4, 8, 100)
    assert report["dropped"] == {"duplicate job id (first occurrence kept)": 1,
                                 "needs more hosts than nb_res (oversized='drop')": 1,
                                 "cancelled (field 11 = 5)": 1}
    # noted in the order of the kept jobs: job 2, job 3 (two notes), job 5
    assert list(report["notes"].items()) == [
        ("runtime > walltime: Batsim kills the job at its walltime", 1),
        ("no walltime (field 9 = -1): walltime -1", 1),
        ("user unknown (field 12 = -1): no 'user' field", 1),
        ("runtime == walltime: Batsim ends the job as walltime reached", 1)]


def test_streamed_max_jobs_keeps_the_earliest_and_their_profiles(tmp_path: Path) -> None:
    trace = tmp_path / "mixed.swf"
    trace.write_text(MIXED)
    # max_jobs 1: job 2 only (submitted first); its profile only; the 3 others counted as dropped,
    # and their notes not counted
    text, report = _both(tmp_path, trace, swf_conversion, swf_to_batsim, max_jobs=1)
    data = json.loads(text)
    assert [j["id"] for j in data["jobs"]] == ["2"] and list(data["profiles"]) == ["delay_30"]
    assert report["dropped"]["beyond max_jobs"] == 3 and report["jobs_kept"] == 1
    assert report["notes"] == {"runtime > walltime: Batsim kills the job at its walltime": 1}
    # max_jobs 0: no job, no profile
    text, report = _both(tmp_path, trace, swf_conversion, swf_to_batsim, max_jobs=0)
    assert text == '{\n  "nb_res": 8,\n  "jobs": [],\n  "profiles": {}\n}\n'
    assert report["dropped"]["beyond max_jobs"] == 4 and report["notes"] == {}


@pytest.mark.parametrize("options", [
    {}, {"cores_per_host": 4}, {"nb_hosts": 4, "oversized": "clamp"}, {"time_origin": "zero"},
    {"time_origin": 150}, {"start": 110, "end": 300}, {"walltime": "runtime", "users": False},
    {"runtime_source": "requested", "keep_cancelled": True},
])
def test_streamed_equals_dict_path_on_the_fixtures(tmp_path: Path, options: dict) -> None:
    trace = tmp_path / "mixed.swf"
    trace.write_text(MIXED)
    _both(tmp_path, trace, swf_conversion, swf_to_batsim, **options)
    tiny = tmp_path / "tiny.swf"
    tiny.write_bytes((FIX / "tiny.swf").read_bytes())
    _both(tmp_path, tiny, swf_conversion, swf_to_batsim, **options)


@pytest.mark.parametrize("options", [{}, {"site": "lyon"}, {"nb_hosts": 2, "max_jobs": 2}, {"cores_per_host": 3}])
def test_streamed_equals_dict_path_on_gwf(tmp_path: Path, options: dict) -> None:
    # without nb_hosts, GWF has no capacity: nb_res is the largest res of the jobs kept
    trace = tmp_path / "tiny.gwf"
    trace.write_bytes((FIX / "tiny.gwf").read_bytes())
    text, report = _both(tmp_path, trace, gwf_conversion, gwf_to_batsim, **options)
    if not options:
        assert json.loads(text)["nb_res"] == 8  # job 6: 8 processors on 1-core hosts


@pytest.mark.parametrize("name", ["KTH-SP2-1996-2.1-cln.swf.gz", "alea_hpc2n_subset3171.swf"])
def test_streamed_equals_dict_path_on_real_traces(tmp_path: Path, name: str) -> None:
    if not (TRACES / name).is_file():
        pytest.skip(f"shared trace not available: {TRACES / name}")
    trace = tmp_path / name
    trace.write_bytes((TRACES / name).read_bytes())
    _, report = _both(tmp_path, trace, swf_conversion, swf_to_batsim, cores_per_host=16, nb_hosts=22)
    assert report["jobs_kept"] > 1000


def test_a_bad_line_after_jobs_leaves_no_file(tmp_path: Path) -> None:
    trace = tmp_path / "bad.swf"
    trace.write_text(MIXED + "7 400 -1 nan 1 -1 -1 1 60 -1 1 5 -1 -1 -1 -1 -1 -1\n")
    out = tmp_path / "stage" / "w.json"
    with pytest.raises(WorkloadError, match=r"bad\.swf, line 10: field 4 \(run_time\) is not a finite number"):
        convert_trace(trace, out, validate=False)
    assert list(out.parent.iterdir()) == []  # neither the output, its temporary file nor the spool


def test_streaming_does_not_hold_the_jobs(tmp_path: Path) -> None:
    # Python memory per job, from the peaks at 5,000 and 15,000 kept jobs (tracemalloc): the dict
    # path holds every job as a dict (about 700 bytes a job); the stream keeps 32 bytes a job in
    # arrays and a bit a job for the ids seen (rule 7), and a batch of spool lines
    per_job = {}
    for name, run in (("streamed", lambda t: swf_conversion(t).write(tmp_path / "w.json")), ("dict", swf_to_batsim)):
        peaks = []
        for n in (5_000, 15_000):
            trace = tmp_path / f"big{n}.swf"
            if not trace.exists():
                trace.write_text("; MaxProcs: 4\n" + "".join(_line(i, i, 10 + i % 50, 1, 60, 1, i % 7)
                                                             for i in range(1, n + 1)))
            tracemalloc.start()
            result = run(trace)
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
            del result
        per_job[name] = (peaks[1] - peaks[0]) / 10_000
    assert per_job["streamed"] < 100 < 400 < per_job["dict"], per_job


def test_seen_ids_bits_and_set() -> None:
    seen = _SeenIds()
    # job numbers below 2**26 are bits; "015" is not how _job_id writes 15, so it is another id
    # (set), as are -1, 2**26 and "x"
    first = ["1", "0", "15", "015", "67108863", "67108864", "-1", "x"]
    assert [seen.add(i) for i in first] == [True] * 8
    assert [seen.add(i) for i in first] == [False] * 8
    assert len(seen._bits) == 2**23  # bit 67108863 is in the last of 2**26 / 8 bytes


def _run(tmp_path: Path, trace: Path, *args: str) -> tuple[int, str, Path]:
    import contextlib
    import io

    out = tmp_path / "out"
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["run", "--policy", "fcfs", "-p", str(HETERO), "-w", str(trace), "-o", str(out),
                     "--no-progress", *args])
    return code, err.getvalue(), out


def test_run_max_jobs_on_a_trace_runs_the_earliest(tmp_path: Path) -> None:
    trace = tmp_path / "mixed.swf"
    trace.write_text(MIXED)
    # 4 cores a host (HETERO), 4 hosts: job 4 (16 processors) needs 4 hosts and is kept; kept
    # jobs by submit time 2, 3 (100), 4 (150), 1 (200), 5 (300): --max-jobs 2 keeps 2 and 3,
    # both at 0 s. FCFS: 2 on a1 killed by its 20 s walltime, 3 on a2 for 45.5 s.
    code, err, out = _run(tmp_path, trace, "--max-jobs", "2")
    assert code == 0, err
    assert "7 records read, 2 jobs kept, 5 dropped" in err
    staged = json.loads((out / "workload_w0.json").read_text())
    assert [j["id"] for j in staged["jobs"]] == ["2", "3"] and staged["nb_res"] == 4
    with open(out / "out_jobs.csv", newline="") as f:
        rows = sorted((r["job_id"], r["final_state"], float(r["finish_time"])) for r in csv.DictReader(f))
    assert rows == [("2", "COMPLETED_WALLTIME_REACHED", 20.0), ("3", "COMPLETED_SUCCESSFULLY", 45.5)]


def test_run_engine_error_on_a_converted_trace_names_the_trace(tmp_path: Path) -> None:
    # job 2's subtime, 9e9 s after job 1, is over the engine's 2**33 s (8,589,934,592 s): the
    # engine refuses it while reading the staged file; the line names the user's trace
    trace = tmp_path / "far.swf"
    trace.write_text(_line(1, 0, 10, 1, 60, 1, 1) + _line(2, 9_000_000_000, 10, 1, 60, 1, 1))
    code, err, out = _run(tmp_path, trace)
    assert code == 2
    assert err.count("\n") == 1
    assert err.startswith(f"gridsched: error: {trace}: job '2': 'subtime' must be a number of seconds from "
                          "-8589934592 to 8589934592 (2**33), got 9000000000")
    assert "gridsched-run-" not in err and not out.exists()
