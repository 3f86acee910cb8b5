"""Memory of long runs (issue 13, "Scale"): an ended job is kept only as its output record, the
output rows are compact, FCFS and EASY forget completed jobs; nothing of what a run reports
changes. Expected values worked out by hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from procset import ProcSet

from schedulers.engine import EngineError, InProcessPort, build_engine, simulate
from schedulers.engine.results import DoneJob, DoneJobs, EnergyRows, MachineStateRows
from schedulers.engine.workload import EngineJob, load_workload
from schedulers.fcfs import FCFS
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures"
PLATFORM = FIX / "batsim_shutdown" / "platform.xml"  # 4 hosts s0-s3


@pytest.fixture(autouse=True)
def _stream_every_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the piecewise reader: read every file with it, however small (a file
    of at most WHOLE_FILE_BYTES is otherwise parsed at once, see the test below)."""
    from schedulers.inputs import jsonstream

    monkeypatch.setattr(jsonstream, "WHOLE_FILE_BYTES", -1)


def test_a_small_plain_file_is_parsed_at_once_a_big_or_compressed_one_piece_by_piece(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gzip

    from schedulers.inputs import jsonstream

    text = json.dumps({"nb_res": 1, "profiles": {"p": {"type": "delay", "delay": 1}},
                       "jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "p"}]})
    plain, packed = tmp_path / "w.json", tmp_path / "w.json.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    size = plain.stat().st_size
    monkeypatch.setattr(jsonstream, "WHOLE_FILE_BYTES", size)  # at the limit: at once
    got = jsonstream.read_workload_json(str(plain))
    assert type(got["jobs"]) is list and got == json.loads(text)
    assert type(jsonstream.read_workload_json(str(packed))["jobs"]) is jsonstream.PackedJobs
    monkeypatch.setattr(jsonstream, "WHOLE_FILE_BYTES", size - 1)  # one byte over: piece by piece
    got = jsonstream.read_workload_json(str(plain))
    assert type(got["jobs"]) is jsonstream.PackedJobs and list(got["jobs"]) == json.loads(text)["jobs"]


def _workload(tmp_path: Path) -> Path:
    # 3 single-host delay jobs: a [0, 10] and b [0, 5] at once, c submitted at 1, starts when b
    # ends (FCFS, 4 hosts: c starts at 1 on the third host). d asks 8 hosts: rejected.
    wl = {"nb_res": 4, "profiles": {"p10": {"type": "delay", "delay": 10}, "p5": {"type": "delay", "delay": 5},
                                    "q5": {"type": "delay", "delay": 5}, "r5": {"type": "delay", "delay": 5.0}},
          "jobs": [{"id": "a", "subtime": 0, "walltime": -1, "res": 1, "profile": "p10"},
                   {"id": "b", "subtime": 0, "walltime": 20, "res": 1, "profile": "p5", "user": "u1"},
                   {"id": "c", "subtime": 1, "walltime": 3, "res": 1, "profile": "q5"},
                   {"id": "d", "subtime": 2, "walltime": -1, "res": 1, "profile": "r5"}]}
    p = tmp_path / "w.json"
    p.write_text(json.dumps(wl))
    return p


@pytest.mark.parametrize("policy", ["fcfs", "easy"])
def test_ended_jobs_are_records_and_policies_forget_them(tmp_path: Path, policy: str) -> None:
    engine = build_engine(PLATFORM, [str(_workload(tmp_path))], energy=True)
    pol = get_policy(policy)
    result = engine.run(InProcessPort(pol))
    # a [0,10] on host 0, b [0,5] on host 1, c [1,4] on host 2 killed by its 3 s walltime,
    # d [2,7] on host 3 (delay 5.0)
    # (times as Batsim prints them: on this Full zone each message takes 1e-10 s)
    got = [(j.name, j.state, round(j.start, 6), round(j.finish, 6), str(j.alloc)) for j in result.jobs]
    assert got == [("c", "COMPLETED_WALLTIME_REACHED", 1.0, 4.0, "2"),
                   ("b", "COMPLETED_SUCCESSFULLY", 0.0, 5.0, "1"),
                   ("d", "COMPLETED_SUCCESSFULLY", 2.0, 7.0, "3"),
                   ("a", "COMPLETED_SUCCESSFULLY", 0.0, 10.0, "0")]
    assert all(type(j) is DoneJob for j in result.jobs) and type(result.jobs) is DoneJobs
    assert engine.jobs == {}  # the engine keeps no job object once every job ended
    assert result.rows["jobs"] is result.jobs
    # the policy dropped the completed jobs, and counted all four
    assert pol.jobs == {} and pol.jobs_seen == 4


class _KeepingFCFS(FCFS):
    forget_finished_jobs = False  # as the policies that look jobs up after they end (owner share)


def test_a_policy_that_keeps_jobs_keeps_them(tmp_path: Path) -> None:
    engine = build_engine(PLATFORM, [str(_workload(tmp_path))])
    pol = _KeepingFCFS()
    engine.run(InProcessPort(pol))
    assert sorted(pol.jobs) == ["w0!a", "w0!b", "w0!c", "w0!d"] and pol.jobs_seen == 4


def test_workload_from_a_file_is_not_copied_and_equal_delays_are_shared(tmp_path: Path) -> None:
    w = load_workload(_workload(tmp_path), "w0", 4)
    prof = w.profiles
    # p5 and q5 are equal (delay 5, an integer): one object; r5 (5.0, a float) and p10 stay apart
    assert prof["p5"] is prof["q5"] and prof["r5"] is not prof["p5"] and prof["p10"] is not prof["p5"]
    assert prof["r5"] == {"type": "delay", "delay": 5.0} and prof["q5"] == {"type": "delay", "delay": 5}
    b = next(j for j in w.jobs if j.name == "b")
    assert b.raw == {"id": "w0!b", "subtime": 0, "walltime": 20, "res": 1, "profile": "p5", "user": "u1"}
    # a dict given by the caller is copied: the caller's workload is left as it was
    data = json.loads(_workload(tmp_path).read_text())
    w2 = load_workload("<dict>", "w0", 4, data=data)
    assert data["jobs"][1]["id"] == "b" and w2.profiles["p5"] is not w2.profiles["q5"]


def test_done_job_is_smaller_than_the_engine_job() -> None:
    job = EngineJob(id="w0!1", name="1", workload="w0", subtime=0.0, walltime=10.0, res=1, profile="p",
                    raw={"id": "w0!1"})
    done = DoneJob.of(job)
    assert (done.id, done.state, done.walltime) == ("w0!1", "NOT_SUBMITTED", 10.0)
    assert sys.getsizeof(done) < sys.getsizeof(job) / 1.5


def test_machine_state_rows_behave_as_a_list_of_tuples() -> None:
    rows = MachineStateRows()
    assert len(rows) == 0 and list(rows) == []
    rows.append((0.0, 0, 0, 0, 4, 0))
    rows.append((1.5, 1, 0, 1, 1, 1))
    assert len(rows) == 2 and list(rows) == [(0.0, 0, 0, 0, 4, 0), (1.5, 1, 0, 1, 1, 1)]
    assert rows[-1] == (1.5, 1, 0, 1, 1, 1) and rows[0] == (0.0, 0, 0, 0, 4, 0)
    with pytest.raises(IndexError):
        rows[2]


def test_energy_rows_keep_na_and_kinds() -> None:
    rows = EnergyRows()
    rows.append((0.0, 0.0, "s", 40.0, None))
    rows.append((2.5, 250.0, "e", 40.0, 100.0))
    rows.append((2.5, 250.0, "p", 30.0, 0.0))
    assert list(rows) == [(0.0, 0.0, "s", 40.0, None), (2.5, 250.0, "e", 40.0, 100.0),
                          (2.5, 250.0, "p", 30.0, 0.0)]
    assert rows[-1] == (2.5, 250.0, "p", 30.0, 0.0) and rows[0][4] is None and len(rows) == 3


# ------------------------------------------------------------------ streaming (issue 13, "Memory")
def _engine_jobs_alive() -> int:
    """Engine jobs still reachable (garbage that other tests left in reference cycles, which the
    cycle collector frees when it next runs, is collected first: it is not held by anything)."""
    import gc
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is EngineJob)


def test_engine_holds_only_the_jobs_submitted_and_not_finished(tmp_path: Path) -> None:
    # 40 single-host delay jobs, job i submitted at t = i and running 2.5 s (FCFS starts it at
    # once on 4 hosts): at time t the jobs submitted and not finished are those with
    # i <= t < i + 2.5, at most 3. The engine's job table must be exactly those at every
    # instant, and no more engine jobs may exist than that (plus the one whose end the engine is
    # still handling); before the run, none at all (all 40 are in the compact table).
    n = 40
    wl = {"nb_res": 4, "profiles": {"p": {"type": "delay", "delay": 2.5}},
          "jobs": [{"id": str(i), "subtime": i, "walltime": -1, "res": 1, "profile": "p"} for i in range(n)]}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(wl))
    engine = build_engine(PLATFORM, [str(path)])
    assert engine.nb_jobs == n and engine.jobs == {}
    assert _engine_jobs_alive() == 0
    seen: list[tuple[float, int, int, int]] = []

    def progress(now: float, finished: int, total: int) -> None:
        # (times as Batsim prints them: on this Full zone each message takes 1e-10 s)
        expected = sum(1 for i in range(n) if i <= round(now, 6) < i + 2.5)
        seen.append((now, expected, len(engine.jobs), _engine_jobs_alive()))

    engine.progress = progress
    result = engine.run(InProcessPort(FCFS()))
    assert len(result.jobs) == n and all(j.state == "COMPLETED_SUCCESSFULLY" for j in result.jobs)
    assert len(seen) >= 2 * n - 1  # a submission and an end instant per job
    # a job whose end the model reached stays in the table until its JOB_COMPLETED reaches
    # Batsim's server, one SimGrid step later (netserver.py): at most one more at the end instants
    assert all(expected <= table <= expected + 1 for _, expected, table, _ in seen), seen
    assert sum(table == expected for _, expected, table, _ in seen) >= n  # (the submission instants)
    assert max(expected for _, expected, _, _ in seen) == 3
    assert all(alive <= expected + 1 for _, expected, _, alive in seen), seen
    assert engine.jobs == {} and _engine_jobs_alive() == 0


def test_jobs_not_held_by_the_engine_are_still_known(tmp_path: Path) -> None:
    # "a" [0, 1] ends before "late" (subtime 10) is submitted. At t = 2 the policy names both:
    # a kill of the finished "a" (its end already told the scheduler) is refused as real Batsim
    # 4.2.1 aborts on it (tests/test_kill.py), an execution of "a" or a rejection of "late" (not
    # submitted yet) is refused with the job's state, an unknown id is refused, a registration
    # reusing an id too.
    from schedulers.core.events import ExecuteJob, KillJobs, RegisterJob, RejectJob

    wl = {"nb_res": 4, "profiles": {"p": {"type": "delay", "delay": 1}},
          "jobs": [{"id": "a", "subtime": 0, "walltime": -1, "res": 1, "profile": "p"},
                   {"id": "late", "subtime": 10, "walltime": -1, "res": 1, "profile": "p"}]}

    def run(decision, **kw):
        class P(FCFS):
            sent = False

            def schedule(self) -> None:
                super().schedule()
                if self.now == 0 and not self.sent:
                    self.call_me_later(2)
                if self.now == 2 and not self.sent:
                    self.emit(decision)
                    self.sent = True

            def on_jobs_killed(self, jobs, progress) -> None:
                killed.append(progress)

        killed: list = []
        result = simulate(PLATFORM, [wl], P(), **kw)
        return result, killed

    with pytest.raises(EngineError, match=r"KILL_JOB at t=2: job 'w0!a' ended at t=1 .*Cannot get job"):
        run(KillJobs(job_ids=["w0!a"]))
    with pytest.raises(EngineError, match=r"EXECUTE_JOB w0!a at t=2: the job is COMPLETED_SUCCESSFULLY"):
        run(ExecuteJob(job_id="w0!a", alloc=ProcSet(0)))
    with pytest.raises(EngineError, match=r"REJECT_JOB w0!late at t=2: the job is NOT_SUBMITTED, not waiting"):
        run(RejectJob(job_id="w0!late"))
    with pytest.raises(EngineError, match=r"KILL_JOB at t=2: job 'w0!nope' does not exist"):
        run(KillJobs(job_ids=["w0!nope"]))
    for name in ("a", "late"):
        job = {"id": name, "subtime": 2, "res": 1, "profile": "p", "walltime": -1}
        with pytest.raises(EngineError, match=rf"job 'w0!{name}' already exists"):
            run(RegisterJob(job_id=f"w0!{name}", job=job), dynamic_jobs=True)


def test_packed_jobs_read_as_json_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The piecewise reader gives the values of read_json (same dicts, key order, number types),
    # whatever the layout of the file and where its chunks end (7 characters at a time here).
    import gzip

    from schedulers.inputs import jsonstream
    from schedulers.inputs.jsonfile import read_json

    monkeypatch.setattr(jsonstream, "CHUNK", 7)
    data = {"nb_res": 4, "jobs": [{"id": "é\\u00e9", "subtime": 0, "walltime": 1e3, "res": 1, "profile": "p",
                                    "user": {"n": [1, 2.5, None, True]}},
                                   {"id": 7, "res": 2, "subtime": 1.25, "profile": "q", "id2": "x"}],
            "profiles": {"p": {"type": "delay", "delay": 3}, "q": {"type": "delay", "delay": 3},
                         "r": {"type": "delay", "delay": 3.0}}, "extra": [1, {"a": "b"}]}
    texts = [json.dumps(data), json.dumps(data, indent=3), json.dumps(data, separators=(",", ":")),
             '{"jobs": [1, {"id": "z"}], "nb_res": 1, "profiles": {"x": {}}}',
             '  [1, 2]  ', '{}', '"text"']
    for k, text in enumerate(texts):
        for packed in (False, True):
            path = tmp_path / f"w{k}{'.gz' if packed else ''}.json"
            path.write_bytes(gzip.compress(text.encode()) if packed else text.encode())
            got, want = jsonstream.read_workload_json(str(path)), read_json(path)
            if isinstance(want, dict) and isinstance(want.get("jobs"), list):
                assert type(got["jobs"]) is jsonstream.PackedJobs
                assert list(got["jobs"]) == want["jobs"] and list(got) == list(want)
                assert [list(j) for j in got["jobs"] if isinstance(j, dict)] == \
                    [list(j) for j in want["jobs"] if isinstance(j, dict)]
                got = dict(got, jobs=list(got["jobs"]))
            assert got == want and json.dumps(got) == json.dumps(want)
    # a key repeated in an object (top level, a job, the profiles) is refused by both, with the same line
    for k, text in enumerate(['{"jobs": [], "jobs": [1], "profiles": {}, "nb_res": 1}',
                              '{"nb_res": 1, "jobs": [{"id": 1, "res": 1, "res": 2}], "profiles": {}}',
                              '{"nb_res": 1, "jobs": [], "profiles": {"x": {}, "x": {"a": 1}}}']):
        path = tmp_path / f"dup{k}.json.gz"
        path.write_bytes(gzip.compress(text.encode()))
        with pytest.raises(ValueError, match="appears twice in") as streamed:
            jsonstream.read_workload_json(str(path))
        with pytest.raises(ValueError) as whole:
            read_json(path)
        assert str(streamed.value) == str(whole.value)
    # equal delay profiles are one object (3 and 3.0 are not equal: the type is kept)
    got = jsonstream.read_workload_json(str(tmp_path / "w0.json"))
    assert got["profiles"]["p"] is got["profiles"]["q"] and got["profiles"]["r"] is not got["profiles"]["p"]


@pytest.mark.parametrize("tail, message", [
    ('{"id": "z", "subtime": 1, "res": 1, "profile": "p"}, ]}', "malformed JSON at line 1"),
    ('{"id": "z", "subtime": NaN, "res": 1, "profile": "p"}]}', "NaN is not a JSON value"),
    ('{"id": "z", "subtime": 1e400, "res": 1, "profile": "p"}]}', "too large for a double"),
    ('{"id": "z", "subtime": 1, "res": 1, "profile": "p"}]} x', "malformed JSON at line 1"),
    ('{"id": "z", "subtime": 1, "res": 1, "profile": "p"}', "malformed JSON at line 1"),
])
def test_a_late_error_is_the_one_read_json_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  tail: str, message: str) -> None:
    # 300 good jobs, then a fault at the end of the file: the error of read_json, word for word,
    # before anything is simulated (the first job's bad walltime is not reported: the file is
    # not JSON, as with the whole-file parser).
    from schedulers.inputs import jsonstream
    from schedulers.inputs.errors import WorkloadError
    from schedulers.inputs.jsonfile import read_json

    monkeypatch.setattr(jsonstream, "CHUNK", 64)
    jobs = [{"id": str(i), "subtime": i, "walltime": -5 if i == 0 else 10, "res": 1, "profile": "p"}
            for i in range(300)]
    text = json.dumps({"nb_res": 4, "profiles": {"p": {"type": "delay", "delay": 1}}, "jobs": jobs})
    path = tmp_path / "late.json"
    path.write_text(text[:-2] + ", " + tail)
    with pytest.raises(WorkloadError) as want:
        read_json(path, WorkloadError, "workload")
    with pytest.raises(WorkloadError, match=message) as got:
        build_engine(PLATFORM, [str(path)])
    assert str(got.value) == str(want.value) and "\n" not in str(got.value)


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 8, 13, 64])
def test_packed_jobs_whatever_the_chunk_boundaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    # every cut of the file between two reads (whitespace after a comma, inside a number, a key,
    # a string): the jobs are read piecewise, never by the whole-file fallback
    from schedulers.inputs import jsonstream

    monkeypatch.setattr(jsonstream, "CHUNK", chunk)
    monkeypatch.setattr(jsonstream, "read_json", None)  # the fallback would fail
    data = {"nb_res": 4, "jobs": [{"id": str(i), "subtime": i * 1.125, "res": 1, "profile": "p"} for i in range(30)],
            "profiles": {f"p{i}": {"type": "delay", "delay": 12345.5} for i in range(20)}}
    for text in (json.dumps(data), json.dumps(data, indent=1), json.dumps(data, separators=(",", ":"))):
        path = tmp_path / "w.json"
        path.write_text(text)
        got = jsonstream.read_workload_json(str(path))
        assert type(got["jobs"]) is jsonstream.PackedJobs and list(got["jobs"]) == data["jobs"]
        assert got["profiles"] == data["profiles"] and len({id(p) for p in got["profiles"].values()}) == 1


_OK = {"subtime": 0, "walltime": 10, "res": 1, "profile": "d"}


@pytest.mark.parametrize("jobs, top, needle", [
    # job a's profile is checked before job b's fields, though the file is read first
    ([dict(_OK, id="a", profile="missing"), dict(_OK, id="a")], {}, "job 'a': profile 'missing' is not defined"),
    ([dict(_OK, id="a"), dict(_OK, id="b", walltime=-5), dict(_OK, id="c", profile="missing")], {},
     "job 'b': 'walltime' must be"),
    ([dict(_OK, id="a", profile="par"), 5], {}, "job 'a': profile 'par' is 'parallel' on 2 hosts but the job requests 1"),
    ([dict(_OK, id="a", profile="seq"), dict(_OK, id="b", res=9)], {}, "job 'a': profile 'par' is 'parallel' on 2"),
    ([dict(_OK, id="a"), dict(_OK, id="b", res=9)], {}, "job 'b': requests 9 hosts but the platform has 4"),
    # a duplicate id is found after reading, in its place: before the job's fields, after the
    # jobs before it
    ([dict(_OK, id="a"), {"id": "b"}, dict(_OK, id="a")], {}, "job 'b': missing field 'subtime'"),
    ([dict(_OK, id="a"), {"id": "a"}], {}, "job 'a': duplicate job id"),
    ([dict(_OK, id="x"), dict(_OK, id="a", profile="nope"), dict(_OK, id="a")], {}, "job 'a': profile 'nope'"),
    ([dict(_OK, id=str(i)) for i in range(50)] + [dict(_OK, id="7"), dict(_OK, id="3")], {}, "job '7': duplicate"),
    ([dict(_OK, id="a", profile=5)], {}, "job 'a': profile 5 is not defined"),
    # the workload's fields and profiles are checked before any job
    ([dict(_OK, id="a", profile="missing")], {"nb_res": None}, "'nb_res' must be an integer"),
    ([5], {"profiles": {"d": {"type": "delay", "delay": -1}}}, "profile 'd': 'delay' must be"),
])
def test_job_errors_come_in_file_order_after_the_profiles(tmp_path: Path, jobs: list, top: dict, needle: str) -> None:
    # jobs before profiles in the file (as Batsim's own workloads): the jobs are checked as they
    # are read, their profiles once the profiles are known; the error is the first one a check
    # of the profiles, then of every job in order (fields, then profile), finds
    profiles = {"d": {"type": "delay", "delay": 1},
                "par": {"type": "parallel", "cpu": [1, 1], "com": [0, 0, 0, 0]},
                "seq": {"type": "composed", "seq": ["d", "par"]}}
    wl = {"nb_res": 4, "jobs": jobs, "profiles": profiles}
    wl.update(top)
    path = tmp_path / "w.json"
    path.write_text(json.dumps(wl))
    from schedulers.inputs.errors import WorkloadError
    for source in (str(path), wl):  # read piecewise, or given parsed; with gridsched run's --fit error
        with pytest.raises(WorkloadError, match=needle):
            load_workload(str(path), "w0", 4, data=None if isinstance(source, str) else source,
                          refuse_oversized=True)


def test_done_jobs_table_round_trip_and_finite_check() -> None:
    # records rebuilt from the table equal the jobs' fields (a lone surrogate and a comma in
    # names survive); a finish that overflows is found by check_finite in the table as in a list
    from schedulers.engine.outputs import check_finite, job_lines
    from schedulers.engine.results import EngineResult, JobRows, output_rows

    def job(name: str, start: float, runtime: float, state: str = "COMPLETED_SUCCESSFULLY") -> EngineJob:
        j = EngineJob(id=f"w0!{name}", name=name, workload="w0", subtime=0.5, walltime=-1.0, res=2,
                      profile="p,\ud800", raw={})
        j.state, j.start, j.runtime, j.finish = state, start, runtime, start + runtime
        j.alloc = None if state == "REJECTED" else ProcSet((0, 1))
        j.energy, j.return_code = 12.5, -2
        return j

    jobs = [job("a", 1.0, 2.0), job("r", -1.0, 0.0, "REJECTED"), job("b\ud800", 3.0, 0.0)]
    for alloc in (ProcSet(4), ProcSet(0), ProcSet((3, 9)), ProcSet(1, (3, 4), 8)):
        jobs[0].alloc = alloc
        table = DoneJobs()
        table.append(jobs[0])
        assert next(table.fields())[9] == f"{alloc}" and table[0].alloc == alloc
    jobs[0].alloc = ProcSet((0, 1))
    done = DoneJobs()
    for j in jobs:
        assert done.append(j) == len(done) - 1
    assert list(done) == [DoneJob.of(j) for j in jobs] and done[-1] == DoneJob.of(jobs[-1])
    assert done[0].alloc == ProcSet((0, 1)) and done[1].alloc is None and done.state(1) == "REJECTED"
    rows = JobRows(done)
    for r in (2, 0, 1):
        rows.append(r)
    assert not rows.in_done_order() and [j.name for j in rows] == ["b\ud800", "a", "r"]
    assert job_lines(rows) == job_lines([DoneJob.of(jobs[k]) for k in (2, 0, 1)])
    done.append(job("big", 1e308, 1e308))
    for table in (done, list(done)):
        result = EngineResult(jobs=table, makespan=0.0, consumed_joules=0.0, schedule={},
                              rows=dict(output_rows(), jobs=table), messages=0, end_time=0.0)
        with pytest.raises(EngineError, match=r"job w0!big: its finish is inf, not a finite number"):
            check_finite(result)
