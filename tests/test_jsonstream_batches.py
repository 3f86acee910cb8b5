"""The piecewise workload reader decodes the items of a buffer in one call of the C scanner
(``schedulers.inputs.jsonstream._whole_items``): the values must be those of ``read_json``
(the module's contract), and every file ``read_json`` refuses must be refused with its message.

Small chunks and batches (``CHUNK`` 4096 characters, ``BATCH_MIN`` 512) put many batch ends
in each file, including ends on a ``}`` followed by a comma that is in a string or closes an
object nested in a job (then the batch text is not whole items and the reader goes on item by
item). Expected values: the same file parsed at once by ``read_json`` with Batsim's numbers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schedulers.inputs import jsonstream
from schedulers.inputs.jsonfile import batsim_number, read_json


@pytest.fixture(autouse=True)
def _small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonstream, "WHOLE_FILE_BYTES", -1)   # every file piece by piece
    monkeypatch.setattr(jsonstream, "CHUNK", 4096)
    monkeypatch.setattr(jsonstream, "BATCH_MIN", 512)


def _workload(n: int) -> dict[str, Any]:
    jobs: list[dict[str, Any]] = []
    profiles: dict[str, Any] = {}
    for k in range(n):
        job: dict[str, Any] = {"id": str(k), "subtime": k * 0.1, "walltime": 60.0, "res": 1, "profile": f"p{k}"}
        if k % 7 == 3:   # a '},' in a string: a batch ending there is not whole items
            job["id"] = f"odd}}, {{job {k}"
        if k % 11 == 5:  # objects nested in a job, a '},' between them
            job["extra"] = [{"a": k}, {"b": [1, 2, {"c": "}, {"}]}]
        jobs.append(job)
        profiles[f"p{k}"] = ({"type": "delay", "delay": 10 + k % 13} if k % 5 else
                             {"type": "parallel_homogeneous", "cpu": 1e6, "com": 0, "note": {"x": "},"}})
    return {"nb_res": 4, "jobs": jobs, "profiles": profiles}


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "w.json"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("indent", [None, 1])
def test_values_are_read_jsons(tmp_path: Path, indent: int | None) -> None:
    path = _write(tmp_path, json.dumps(_workload(3000), indent=indent))
    got = jsonstream.read_workload_json(path)
    want = read_json(path, ValueError, "workload", batsim_number)
    assert type(got["jobs"]) is jsonstream.PackedJobs   # read piecewise, not by the fallback
    assert list(got) == list(want)
    jobs = list(got["jobs"])
    assert jobs == want["jobs"]
    # same number types (an int stays an int) and key order
    assert [[(k, type(v)) for k, v in j.items()] for j in jobs] == \
           [[(k, type(v)) for k, v in j.items()] for j in want["jobs"]]
    assert list(got["profiles"].items()) == list(want["profiles"].items())
    assert jobs[3]["id"] == "odd}, {job 3" and jobs[5]["extra"][1]["b"][2] == {"c": "}, {"}


def test_batches_are_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain jobs (no '},' but between items): all but the items at a buffer's end are batched."""
    calls: list[int] = []
    whole = jsonstream._whole_items

    def counting(buf: str, i: int, close: str) -> Any:
        out = whole(buf, i, close)
        calls.append(-1 if isinstance(out, int) else len(out[0]))
        return out

    monkeypatch.setattr(jsonstream, "_whole_items", counting)
    wl = {"nb_res": 4, "jobs": [{"id": str(k), "subtime": k, "res": 1, "profile": "p"} for k in range(5000)],
          "profiles": {"p": {"type": "delay", "delay": 5}}}
    path = _write(tmp_path, json.dumps(wl))
    got = jsonstream.read_workload_json(path)
    assert list(got["jobs"]) == wl["jobs"]
    batched = sum(c for c in calls if c > 0)
    # about 60 characters a job, 4096-character pieces: a piece's last 512 characters (about 9
    # jobs) are read one at a time, so at least 5000 * (1 - 10 / 68) jobs come in batches
    assert batched > 4200 and -1 not in calls


@pytest.mark.parametrize("where", ["job", "profiles", "profiles-far"])
def test_repeated_key_refused_as_read_json(tmp_path: Path, where: str) -> None:
    wl = _workload(2000)
    text = json.dumps(wl)
    if where == "job":   # a key twice in job 1500, inside a batch
        text = text.replace('{"id": "1500", ', '{"id": "1500", "res": 2, ', 1)
    elif where == "profiles":   # a profile name twice, next to each other (same batch)
        text = text.replace('"p1500": {', '"p1501": {"type": "delay", "delay": 3}, "p1500": {', 1)
    else:   # the second far from the first (another batch)
        text = text.replace('"p1900": {', '"p10": {"type": "delay", "delay": 3}, "p1900": {', 1)
    path = _write(tmp_path, text)
    with pytest.raises(ValueError) as want:
        read_json(path, ValueError, "workload", batsim_number)
    with pytest.raises(ValueError) as got:
        jsonstream.read_workload_json(path)
    assert str(got.value) == str(want.value)
    assert str(got.value).endswith("appears twice in " + {"job": "jobs[1500] (id '1500'); a key may appear once in a JSON object",
                                                          "profiles": "profiles; a key may appear once in a JSON object",
                                                          "profiles-far": "profiles; a key may appear once in a JSON object"}[where])


def test_bad_number_in_a_batch_refused_as_read_json(tmp_path: Path) -> None:
    text = json.dumps(_workload(2000)).replace('"subtime": 150.0', '"subtime": NaN', 1)
    path = _write(tmp_path, text)
    assert "NaN" in text
    with pytest.raises(ValueError) as want:
        read_json(path, ValueError, "workload", batsim_number)
    with pytest.raises(ValueError) as got:
        jsonstream.read_workload_json(path)
    assert str(got.value) == str(want.value)


def test_shared_delay_profile_checked_once_error_names_first(tmp_path: Path) -> None:
    """Equal delay profiles are one object after reading (share_delays); the loader checks such an
    object once: a bad one is reported under its first name in file order, as when each name
    was checked."""
    from schedulers.engine.workload import load_workload
    from schedulers.inputs.errors import WorkloadError

    jobs = [{"id": str(k), "subtime": k, "res": 1, "profile": f"p{k % 3}"} for k in range(600)]
    good = {"p0": {"type": "delay", "delay": 5}, "p1": {"type": "delay", "delay": 7}, "p2": {"type": "delay", "delay": 5}}
    path = _write(tmp_path, json.dumps({"nb_res": 2, "jobs": jobs, "profiles": good}))
    wl = load_workload(path, "w0", 2)
    assert wl.profiles["p0"] is wl.profiles["p2"] and wl.profiles["p2"] == {"type": "delay", "delay": 5}
    assert len(wl.jobs) == 600
    bad = {"z": {"type": "delay", "delay": 5}, "b": {"type": "delay", "delay": -1},
           "a": {"type": "delay", "delay": -1}}
    path = _write(tmp_path, json.dumps({"nb_res": 2, "jobs": jobs, "profiles": {**bad, "p0": good["p0"],
                                                                             "p1": good["p1"], "p2": good["p2"]}}))
    with pytest.raises(WorkloadError) as err:
        load_workload(path, "w0", 2)
    assert str(err.value) == (f"{path}: profile 'b': 'delay' must be a number of seconds > 0 and <= 8589934592 "
                              "(2**33), got -1")


@pytest.mark.parametrize("name", ["c", "\u00e9t\u00e9"])   # an ASCII name, and one that is not
def test_profiles_no_job_names_and_undefined_ones(tmp_path: Path, name: str) -> None:
    """The jobs' profile names are checked by sets when every profile is of a type that fits
    any job: the unreferenced profiles are those no job names; a name not defined is reported
    at the first job (file order) using it."""
    from schedulers.engine.workload import load_workload
    from schedulers.inputs.errors import WorkloadError

    profiles = {"a": {"type": "delay", "delay": 1}, name: {"type": "delay", "delay": 2},
                "u": {"type": "delay", "delay": 3}}
    jobs = [{"id": str(k), "subtime": k, "res": 1, "profile": "a" if k % 2 else name} for k in range(700)]
    path = _write(tmp_path, json.dumps({"nb_res": 2, "jobs": jobs, "profiles": profiles}))
    wl = load_workload(path, "w0", 2)
    assert wl.unreferenced == {"u"}
    jobs[401]["profile"] = "nope"
    jobs[650]["profile"] = "nope2"
    path = _write(tmp_path, json.dumps({"nb_res": 2, "jobs": jobs, "profiles": profiles}))
    with pytest.raises(WorkloadError) as err:
        load_workload(path, "w0", 2)
    assert str(err.value) == f"{path}: job '401': profile 'nope' is not defined in 'profiles'"


@pytest.mark.parametrize("bad, message", [
    ({"res": -1}, "job '1200': 'res' must be an integer >= 0, got -1"),
    ({"subtime": -9e9}, "job '1200': 'subtime' must be a number of seconds from -8589934592 to 8589934592 (2**33), "
     "got -9000000000.0"),
    ({"profile": 3}, "job '1200': profile 3 is not defined in 'profiles'"),
    ({"id": "1100"}, "job '1100': duplicate job id"),   # job 1200 named as job 1100 before it
])
def test_first_bad_job_of_a_batch_is_reported(tmp_path: Path, bad: dict, message: str) -> None:
    """Jobs checked a run at a time (JobChecks.many) report the first failing job, file order,
    with the message of the job-by-job checks; a later bad job (2500: res 0) is not the one named."""
    from schedulers.engine.workload import load_workload
    from schedulers.inputs.errors import WorkloadError

    jobs = [{"id": str(k), "subtime": k, "res": 1, "profile": "p"} for k in range(3000)]
    jobs[1200].update(bad)
    jobs[2500]["res"] = 0
    path = _write(tmp_path, json.dumps({"nb_res": 2, "jobs": jobs, "profiles": {"p": {"type": "delay", "delay": 5}}}))
    with pytest.raises(WorkloadError) as err:
        load_workload(path, "w0", 2)
    assert str(err.value) == f"{path}: {message}"
