"""Bad input, faults and misbehaving policies, second round: one test per class of problem.

Each test runs the command as a user would (``schedulers.cli.main``, or ``python -m
schedulers.cli`` in a subprocess where a signal, a hang or a resource limit is involved) and
checks the exit status (:mod:`schedulers.exits`), that stderr's error is one line and its words,
and, where data is at stake, that nothing was deleted, cut or lost.
"""

from __future__ import annotations

import csv
import errno
import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers_cli import one_error_line, run_main

from schedulers import exits
from helpers_policy import line_of
from schedulers.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIX = Path(__file__).parent / "fixtures"
HETERO = FIX / "hetero4.xml"   # 4 hosts a1 a2 b1 b2, 4 cores each
DELAY = {"d": {"type": "delay", "delay": 3}}
ENV = dict(os.environ, PYTHONPATH=str(ROOT))






def workload(path: Path, jobs: list | None = None, text: str | None = None) -> Path:
    path.write_text(text if text is not None else json.dumps(
        {"nb_res": 4, "jobs": jobs if jobs is not None else
         [{"id": i, "subtime": i, "res": 1, "profile": "d"} for i in range(1, 3)], "profiles": DELAY}))
    return path


def run_args(tmp: Path, w: Path, *more: object, policy: str = "fcfs", out: str = "out") -> list:
    return ["run", "--policy", policy, "-p", HETERO, "-w", w, "-o", tmp / out, "--no-progress", *more]


def campaign_file(tmp: Path, *policies: str) -> Path:
    """A campaign of ``policies`` on a two-job workload of HETERO, one seed."""
    w = workload(tmp / "w.json")
    toml = tmp / "c.toml"
    toml.write_text('name = "c"\nseeds = 1\n' + "".join(f'[[policy]]\nname = "{p}"\n' for p in policies)
                    + f'[[scenario]]\nname = "s"\nplatform = "{HETERO}"\nworkloads = ["{w}"]\n')
    return toml


# ------------------------------------------------------------------ a key twice in a JSON object
DUP_JOB = ('{"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "res": 2, "profile": "d"}], '
           '"profiles": {"d": {"type": "delay", "delay": 3}}}')
# a second "jobs" array would replace the first (140,000 jobs here) by its one job
DUP_TOP = ('{"nb_res": 4, "jobs": [' + ", ".join(f'{{"id": {i}, "subtime": 0, "res": 1, "profile": "d"}}'
                                                  for i in range(140_000))
           + '], "profiles": {"d": {"type": "delay", "delay": 3}}, "jobs": [{"id": "x", "subtime": 0, "res": 1, '
           '"profile": "d"}]}')


@pytest.mark.parametrize("text, gz, where", [
    (DUP_JOB, False, "key 'res' appears twice in jobs[0] (id 1)"),
    (DUP_JOB, True, "key 'res' appears twice in jobs[0] (id 1)"),            # read piece by piece
    (DUP_TOP, False, "key 'jobs' appears twice in the top-level object"),
    (DUP_TOP, True, "key 'jobs' appears twice in the top-level object"),
    ('{"nb_res": 4, "jobs": [], "profiles": {"d": {"type": "delay", "delay": 1}, "d": {"type": "delay", "delay": 2}}}',
     True, "key 'd' appears twice in profiles"),
])
def test_a_key_twice_in_a_workload_is_refused_naming_object_and_key(tmp_path: Path, text: str, gz: bool,
                                                                     where: str) -> None:
    w = tmp_path / ("w.json.gz" if gz else "w.json")
    w.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    code, _, err = run_main(run_args(tmp_path, w))
    assert code == exits.BAD_INPUT == 2
    assert one_error_line(err) == f"gridsched: error: {w}: {where}; a key may appear once in a JSON object"
    assert not (tmp_path / "out").exists()


def test_a_key_twice_in_options_events_records_and_messages(tmp_path: Path) -> None:
    from schedulers.batsim.protocol import ProtocolError, decode_message

    w = workload(tmp_path / "w.json")
    # --policy-options inline and from a file
    code, _, err = run_main(run_args(tmp_path, w, "--policy-options", '{"a": 1, "a": 2}'))
    assert code == 2 and "--policy-options: key 'a' appears twice in the top-level object" in one_error_line(err)
    (tmp_path / "o.json").write_text('{"a": 1, "a": 2}')
    code, _, err = run_main(run_args(tmp_path, w, "--policy-options", f"@{tmp_path / 'o.json'}"))
    assert code == 2 and f"{tmp_path / 'o.json'}: key 'a' appears twice" in one_error_line(err)
    # an events file: file and line
    ev = tmp_path / "ev.txt"
    ev.write_text('{"type": "machine_unavailable", "resources": "0", "timestamp": 1}\n'
                  '{"type": "machine_available", "resources": "0", "timestamp": 2, "timestamp": 0}\n')
    code, _, err = run_main(run_args(tmp_path, w, "--events", ev))
    assert code == 2 and f"{ev}, line 2: key 'timestamp' appears twice" in one_error_line(err)
    assert not (tmp_path / "out").exists()
    # a protocol message (both directions)
    with pytest.raises(ProtocolError, match=r"key 'job_id' appears twice in events\[0\]\.data"):
        decode_message('{"now": 1, "events": [{"timestamp": 1, "type": "JOB_COMPLETED", "data": '
                       '{"job_id": "w0!1", "job_id": "w0!2", "job_state": "COMPLETED_SUCCESSFULLY", "alloc": "0"}}]}')
    # a campaign record: collect refuses it by name, writes nothing
    folder = tmp_path / "camp"
    (folder / "results").mkdir(parents=True)
    rec = folder / "results" / "0123456789abcdef.json"
    rec.write_text('{"id": "0123456789abcdef", "status": "done", "status": "failed"}')
    code, _, err = run_main(["campaign", "collect", folder])
    assert code == 2 and f"{rec}: key 'status' appears twice" in one_error_line(err)
    assert not (folder / "runs.csv").exists()


# ---------------------------------------------------------------- a run that destroys its input
def test_run_and_convert_never_destroy_their_own_input(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    w = workload(out / "workload_w0.json")   # where --overwrite would delete it first
    before = w.read_bytes()
    (out / "out_jobs.csv").write_text("old run\n")
    code, _, err = run_main(["run", "--policy", "fcfs", "-p", HETERO, "-w", w, "-o", out, "--overwrite",
                             "--no-progress"])
    assert code == 2
    line = one_error_line(err)
    assert line.startswith(f"gridsched: error: {w}: this --workload file is in the output folder {out}/")
    assert w.read_bytes() == before and (out / "out_jobs.csv").read_text() == "old run\n"   # nothing touched
    # convert t.swf -o t.swf
    swf = tmp_path / "t.swf"
    swf.write_bytes((FIX / "tiny.swf").read_bytes())
    code, _, err = run_main(["convert", swf, "-o", swf])
    assert code == 2 and "is the input trace itself" in one_error_line(err)
    assert swf.read_bytes() == (FIX / "tiny.swf").read_bytes()


# ------------------------------------------------------------- a policy that fails or exits
POLICIES = '''import sys
from schedulers.fcfs import FCFS


class Exits(FCFS):
    def on_job_submitted(self, job):
        if job.id.endswith("!2"):
            sys.exit(0)
        super().on_job_submitted(job)


class Raises(FCFS):
    def on_job_completed(self, job):
        return {}["missing"]


class InitRaises(FCFS):
    def __init__(self, options=None):
        super().__init__(options)
        self.x = 1 / 0


class BadDecision(FCFS):
    def schedule(self):
        for job in list(self.queue):
            self.execute(job, [0, 1, 2])


class CallsAtNaN(FCFS):
    def on_job_submitted(self, job):
        self.call_me_later(float("nan"))


class Sleeps(FCFS):
    def on_job_submitted(self, job):
        import time
        from pathlib import Path
        Path(self.options["marker"]).write_text("started")
        time.sleep(60)
    option_docs = {"marker": "a file written when the first job is submitted"}
'''


def test_a_policy_that_calls_sys_exit_fails_the_run_and_the_jobs_done_are_kept(tmp_path: Path, user: Path) -> None:
    # jobs 1 (t=0) and 2 (t=1), 3 s each: the policy exits when job 2 is submitted, at t=1
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d"},
                                       {"id": 2, "subtime": 1, "res": 1, "profile": "d"}])
    code, out, err = run_main(run_args(tmp_path, w, policy=f"{user}:Exits"))
    assert code == exits.FAILED == 1
    line = one_error_line(err)
    assert line.startswith(f"gridsched: error: policy Exits called sys.exit(0) in on_job_submitted ({user}, line "
                           f"{line_of(user, 'sys.exit(0)')}): a policy returns decisions and must not end the process")
    assert "the run stopped at simulated time t=1.000 s with 0 of 2 jobs done" in line
    assert (tmp_path / "out" / "out_jobs.partial.csv").read_text().startswith("job_id,")
    assert not (tmp_path / "out" / "summary.json").exists()


def test_an_exception_in_a_policy_names_its_class_file_line_and_callback(tmp_path: Path, user: Path) -> None:
    w = workload(tmp_path / "w.json")
    code, _, err = run_main(run_args(tmp_path, w, policy=f"{user}:Raises"))
    assert code == 1
    line = one_error_line(err)
    assert line.startswith(f"gridsched: error: policy Raises failed in on_job_completed ({user}, line "
                           f"{line_of(user, 'missing')}): KeyError: 'missing'; the run stopped at simulated time "
                           "t=4.000 s with 1 of 2 jobs done")   # job 1 (1-4 s) done, job 2 ends at 5 s
    rows = list(csv.DictReader((tmp_path / "out" / "out_jobs.partial.csv").open()))
    assert [r["job_id"] for r in rows] == ["1"]
    # in the constructor: nothing written
    code, _, err = run_main(run_args(tmp_path, w, policy=f"{user}:InitRaises", out="out2"))
    assert code == 1 and one_error_line(err) == (f"gridsched: error: policy InitRaises failed in __init__ ({user}, line "
                                                 f"{line_of(user, '1 / 0')}): ZeroDivisionError: division by zero")
    assert not (tmp_path / "out2").exists()
    # a decision the base class refuses keeps its words and gains the policy's line
    code, _, err = run_main(run_args(tmp_path, w, policy=f"{user}:BadDecision", out="out3"))
    line = one_error_line(err)
    assert code == 1 and line.startswith(f"gridsched: error: policy BadDecision failed in schedule ({user}, line "
                                         f"{line_of(user, 'self.execute(job, [0, 1, 2])')}): ")
    assert "internal error" not in line
    # a call at a time that is no number is the policy's error, at its line (not the engine's, later)
    code, _, err = run_main(run_args(tmp_path, w, policy=f"{user}:CallsAtNaN", out="out4"))
    line = one_error_line(err)
    assert code == 1 and line.startswith(f"gridsched: error: policy CallsAtNaN failed in on_job_submitted ({user}, "
                                         f"line {line_of(user, 'call_me_later(float')}): call_me_later: the time must "
                                         "be a finite number of seconds, got nan")


def test_a_failing_policy_in_serve_is_one_line_and_refused_messages_stop_before_deciding(tmp_path: Path,
                                                                                       user: Path) -> None:
    from schedulers.batsim.protocol import ProtocolError
    from schedulers.batsim.server import _Checks, _exchange
    from schedulers.core.failure import PolicyFailure
    from schedulers.registry import get_policy

    def msg(now: float, *events: dict) -> str:
        return json.dumps({"now": now, "events": [{"timestamp": now, **e} for e in events]})

    hosts = [{"id": i, "name": f"h{i}", "state": "idle", "properties": {}, "zone_properties": {}} for i in range(2)]
    begins = {"type": "SIMULATION_BEGINS", "data": {
        "nb_resources": 2, "nb_compute_resources": 2, "nb_storage_resources": 0, "allow_compute_sharing": False,
        "allow_storage_sharing": True, "config": {}, "compute_resources": hosts, "storage_resources": [],
        "workloads": {}, "profiles": {}}}

    def submitted(jid: str) -> dict:
        return {"type": "JOB_SUBMITTED", "data": {"job_id": jid, "job": {"id": jid, "subtime": 0, "res": 1,
                                                                         "profile": "d"}}}

    def completed(jid: str) -> dict:
        return {"type": "JOB_COMPLETED", "data": {"job_id": jid, "job_state": "COMPLETED_SUCCESSFULLY",
                                                  "return_code": 0, "alloc": "0"}}

    for bad, words in [(msg(5, completed("w0!9")), "JOB_COMPLETED of job 'w0!9', which this scheduler never started"),
                       (msg(5, submitted("w0!1")), "JOB_SUBMITTED of job 'w0!1', which was already submitted"),
                       (msg(0.5), "'now' goes back in time, before the previous message's now=1.0 s")]:
        policy = get_policy("fcfs")
        checks = _Checks(lambda: "tcp://x")
        for m in (msg(0, begins), msg(1, submitted("w0!1"))):
            _exchange(policy, m, None, checks)
        running = dict(policy.running)
        assert list(running) == ["w0!1"]   # started on host 0
        with pytest.raises(ProtocolError) as info:
            _exchange(policy, bad, None, checks)
        assert words in str(info.value) and "stopped before deciding anything" in str(info.value)
        assert "\n" not in str(info.value) and policy.running == running   # the policy saw nothing
    # a policy's exception behind serve
    policy = get_policy(f"{user}:Raises")
    _exchange(policy, msg(0, begins))
    _exchange(policy, msg(1, submitted("w0!1")))
    with pytest.raises(PolicyFailure, match=rf"policy Raises failed in on_job_completed \({user}, line \d+\): "
                                            r"KeyError: 'missing'"):
        _exchange(policy, msg(4, completed("w0!1")))


@pytest.mark.parametrize("serial", [True, False], ids=["serial", "dask"])
def test_a_campaign_records_a_failing_policy_and_goes_on_one_line_per_run(tmp_path: Path, user: Path,
                                                                            serial: bool) -> None:
    toml = campaign_file(tmp_path, f"{user}:Exits", f"{user}:Raises", "fcfs")
    out = tmp_path / "cout"
    proc = subprocess.run([sys.executable, "-m", "schedulers.cli", "campaign", "run", str(toml), "--out", str(out),
                           "--no-progress", *(["--serial"] if serial else ["--workers", "1"])],
                          capture_output=True, text=True, env=ENV, timeout=300)
    assert proc.returncode == 1, proc.stderr   # some runs failed
    assert "Traceback" not in proc.stderr and "distributed" not in proc.stderr, proc.stderr
    records = [json.loads(p.read_text()) for p in sorted((out / "results").glob("*.json"))]
    by_policy = {r["policy_name"].rsplit(":", 1)[-1]: r for r in records}
    assert by_policy["fcfs"]["status"] == "done"
    assert by_policy["Exits"]["status"] == "failed" and by_policy["Exits"]["error"].startswith(
        f"PolicyFailure: policy Exits called sys.exit(0) in on_job_submitted ({user}, line ")
    assert by_policy["Raises"]["error"].startswith(f"PolicyFailure: policy Raises failed in on_job_completed ({user}")
    failed = [ln for ln in proc.stdout.splitlines() if ln.startswith("  failed ")]
    assert len(failed) == 2   # one line per failed run


def test_sigterm_is_handled_as_ctrl_c(tmp_path: Path, user: Path) -> None:
    w = workload(tmp_path / "w.json")
    marker, out = tmp_path / "started", tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "schedulers.cli", "run", "--policy", f"{user}:Sleeps", "-p",
                             str(HETERO), "-w", str(w), "-o", str(out), "--no-progress", "--policy-options",
                             json.dumps({"marker": str(marker)})], env=ENV, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert marker.exists(), proc.communicate(timeout=5)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == exits.TERMINATED == 143, err
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert line.startswith("gridsched: terminated (SIGTERM) at simulated time t=1.000 s with 0 of 2 jobs done; "
                           f"kept in {out}/: out_jobs.partial.csv")
    assert (out / "out_jobs.partial.csv").exists()


# ------------------------------------------------------------------ two runners on one folder
def test_one_campaign_runner_per_folder_and_a_dead_holder_is_taken_over(tmp_path: Path) -> None:
    toml = campaign_file(tmp_path, "fcfs")
    out = tmp_path / "cout"
    holder = subprocess.Popen([sys.executable, "-c", "import sys\nfrom schedulers.campaign.store import ResultStore\n"
                               f"with ResultStore({str(out)!r}).locked():\n    print('held', flush=True)\n"
                               "    sys.stdin.read()\n"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=ENV)
    try:
        assert holder.stdout.readline().strip() == "held"
        code, _, err = run_main(["campaign", "run", toml, "--out", out, "--serial", "--no-progress"])
        assert code == 2
        assert one_error_line(err).startswith(f"gridsched: error: {out}: another `gridsched campaign run` is writing "
                                              f"into this folder (pid {holder.pid} on ")
        assert not list((out / "results").glob("*.json"))   # nothing run, nothing replaced
    finally:
        holder.kill()   # kill -9: the lock of a process that is no longer running is taken over
        holder.wait()
    code, _, err = run_main(["campaign", "run", toml, "--out", out, "--serial", "--no-progress"])
    assert code == 0, err
    assert len(list((out / "results").glob("*.json"))) == 1


# --------------------------------------------------------------------------- external events
def test_event_times_are_bounded_and_event_errors_name_the_file_and_line(tmp_path: Path) -> None:
    w = workload(tmp_path / "w.json")
    ev = tmp_path / "ev.txt"
    ev.write_text('{"type": "machine_unavailable", "resources": "0", "timestamp": 1e300}\n')
    code, _, err = run_main(run_args(tmp_path, w, "--events", ev))
    assert code == 2 and one_error_line(err).startswith(f"gridsched: error: {ev}, line 1: 'timestamp' 1e+300 must be "
                                                        "a finite number >= 0 and <= 8589934592 s")
    ev.write_text('{"type": "machine_unavailable", "resources": "0", "timestamp": 1}\n'
                  '{"type": "machine_unavailable", "resources": "0", "timestamp": 2}\n')
    code, _, err = run_main(run_args(tmp_path, w, "--events", ev))
    assert code == 2 and one_error_line(err).startswith(f"gridsched: error: {ev}, line 2: ")
    assert "made unavailable but it is already unavailable" in err
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------- campaign collect, non-finite
def test_collect_refuses_a_record_with_a_non_finite_value_by_name(tmp_path: Path) -> None:
    toml = campaign_file(tmp_path, "fcfs", "easy")
    out = tmp_path / "cout"
    assert run_main(["campaign", "run", toml, "--out", out, "--serial", "--no-progress"])[0] == 0
    rec = sorted((out / "results").glob("*.json"))[0]
    data = json.loads(rec.read_text())
    data["summary"]["makespan"] = "HUGE"
    rec.write_text(json.dumps(data).replace('"HUGE"', "1e400"))   # (json.loads would read it as inf)
    code, _, err = run_main(["campaign", "collect", out])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: not a valid JSON file: {rec}: not valid JSON: number 1e400 "
                                   "is too large for a double; move it out of results/ (`gridsched campaign run` "
                                   "runs again a run whose record is missing)")
    assert not (out / "summary.csv").exists() and not (out / "runs.csv").exists()


# --------------------------------------------------------------------- non-regular input files
@pytest.mark.parametrize("which", ["platform", "workload", "events", "options"])
def test_a_fifo_given_as_an_input_is_refused_not_waited_for(tmp_path: Path, which: str) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    w = workload(tmp_path / "w.json")
    argv = ["run", "--policy", "fcfs", "-p", str(fifo if which == "platform" else HETERO), "-w",
            str(fifo if which == "workload" else w), "-o", str(tmp_path / "out"), "--no-progress"]
    argv += {"events": ["--events", str(fifo)], "options": ["--policy-options", f"@{fifo}"]}.get(which, [])
    proc = subprocess.run([sys.executable, "-m", "schedulers.cli", *argv], capture_output=True, text=True,
                          env=ENV, timeout=60)   # (it waited forever before)
    assert proc.returncode == 2
    assert f"{fifo}: is a FIFO (named pipe), not a regular file" in one_error_line(proc.stderr)


# ------------------------------------------------------------------------- lone surrogates
@pytest.mark.parametrize("field, where", [("id", "jobs[0].id"), ("profile", "jobs[0].profile")])
def test_a_lone_surrogate_is_refused_at_input(tmp_path: Path, field: str, where: str) -> None:
    job = {"id": "a", "subtime": 0, "res": 1, "profile": "d"}
    job[field] = "x\\ud800"   # the JSON escape of a lone surrogate
    profiles = '{"d": {"type": "delay", "delay": 3}' + (', "x\\ud800": {"type": "delay", "delay": 3}}'
                                                        if field == "profile" else "}")
    text = ('{"nb_res": 4, "jobs": [' + json.dumps(job).replace("\\\\ud800", "\\ud800") + '], "profiles": '
            + profiles + "}")
    w = workload(tmp_path / "w.json", text=text)
    code, _, err = run_main(run_args(tmp_path, w))
    assert code == 2
    assert one_error_line(err).startswith(f"gridsched: error: {w}: {where}: the string 'x\\ud800' holds a lone "
                                          "UTF-16 surrogate")
    assert not (tmp_path / "out").exists()


# -------------------------------------------------------------------------------- seeds bound
@pytest.mark.parametrize("seeds, words", [("10000000000", "seeds: a number of seeds must be >= 1 and <= 100,000"),
                                          ("[-1]", "seeds[0]: must be >= 0")])
def test_seeds_are_bounded(tmp_path: Path, seeds: str, words: str) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text(f'seeds = {seeds}\n[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "g"\ngenerator = "synthetic"\n')
    code, _, err = run_main(["campaign", "run", toml, "--out", tmp_path / "cout", "--serial", "--no-progress"])
    assert code == 2 and one_error_line(err) == f"gridsched: error: {toml}: {words}" + (
        ", got 10,000,000,000" if seeds.isdigit() else " (the generators' random streams take non-negative seeds), got -1")
    assert not (tmp_path / "cout").exists()


# ---------------------------------------------------------------------- convert and run agree
def test_convert_and_run_agree_on_a_trace_without_jobs(tmp_path: Path) -> None:
    empty = tmp_path / "e.swf"
    empty.write_text("; Version: 2.2\n; only a header\n")
    code_run, _, err_run = run_main(run_args(tmp_path, empty))
    code_conv, _, err_conv = run_main(["convert", empty, "-o", tmp_path / "e.json"])
    why = f"{empty}: no job to simulate: it has no job line (empty or header-only trace)"
    assert (code_run, code_conv) == (2, 2)
    assert why in one_error_line(err_run) and why in one_error_line(err_conv)
    assert not (tmp_path / "e.json").exists() and not (tmp_path / "out").exists()
    for opt in (["--start", "inf"], ["--end", "nan"]):
        code, _, err = run_main(["convert", FIX / "tiny.swf", "-o", tmp_path / "t.json", *opt])
        assert code == 2 and f"{opt[0][2:]} must be a finite number of seconds" in one_error_line(err)
        assert not (tmp_path / "t.json").exists()


# ------------------------------------------------------------------------ one readable line
def test_errors_are_one_readable_line(tmp_path: Path) -> None:
    w = workload(tmp_path / "w.json")
    # argparse: one line for one bad value (no usage block)
    proc = subprocess.run([sys.executable, "-m", "schedulers.cli", "run", "--policy", "fcfs", "-p", str(HETERO),
                           "-w", str(w), "--max-jobs", "x"], capture_output=True, text=True, env=ENV, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == ("gridsched run: error: argument --max-jobs: invalid int value: 'x' "
                           "(see gridsched run --help)\n")
    # a workload the schema refuses (convert): no "1 problem:" header on a line of its own
    bad = workload(tmp_path / "bad.json", [{"id": 1, "subtime": 0, "res": -1, "profile": "d"}])
    code, _, err = run_main(["convert", bad, "-o", tmp_path / "b.json", "--nb-hosts", "4"])
    assert code == 2 and err.count("\n") == 1 and "invalid Batsim workload: " in err
    # a value of 20 million characters echoed back: cut in its middle
    huge = workload(tmp_path / "huge.json", text=json.dumps(
        {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
         "profiles": {"d": {"type": "x" * 20_000_000, "delay": 1}}}))
    code, _, err = run_main(run_args(tmp_path, huge))
    line = one_error_line(err)
    assert code == 2 and len(line) < exits.MAX_MESSAGE + 200
    assert line.startswith(f"gridsched: error: {huge}: profile 'd': unknown profile type 'xxx")
    assert "characters in all: cut] ..." in line and line.endswith("usage_trace)")   # the known types, kept


# ---------------------------------------------------------------------------------- full disk
def test_a_full_disk_names_the_file_has_its_own_status_and_leaves_no_cut_file(tmp_path: Path, monkeypatch) -> None:
    from schedulers import outfiles

    w = workload(tmp_path / "w.json", [{"id": i, "subtime": i, "res": 1, "profile": "d"} for i in range(200)])
    real_open = open

    class Full:
        """A file that takes 1,000 bytes, then fails as a full disk does."""

        def __init__(self, f) -> None:
            self.f, self.n = f, 0

        def write(self, text):
            self.n += len(text)
            if self.n > 1000:
                self.f.write(text[:100])   # part of it reached the disk
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return self.f.write(text)

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    monkeypatch.setattr(outfiles, "open", lambda *a, **k: Full(real_open(*a, **k)), raising=False)
    code, _, err = run_main(run_args(tmp_path, w))
    out = tmp_path / "out"
    assert code == exits.NOT_WRITTEN == 4
    assert one_error_line(err) == f"gridsched: error: {out}/out_jobs.csv: cannot write the file: No space left on device"
    assert not out.exists() or not [p for p in out.iterdir()]   # no file cut mid-row, no temporary file


def test_a_file_size_limit_in_a_real_process(tmp_path: Path) -> None:
    # the same fault from the system: RLIMIT_FSIZE makes write() fail with EFBIG past 4 KB
    resource = pytest.importorskip("resource")
    w = workload(tmp_path / "w.json", [{"id": i, "subtime": i, "res": 1, "profile": "d"} for i in range(200)])

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-B", "-m", "schedulers.cli", "run", "--policy", "fcfs", "-p", str(HETERO),
                           "-w", str(w), "-o", str(out), "--no-progress"], capture_output=True, text=True, env=ENV,
                          timeout=120, preexec_fn=limit)
    assert proc.returncode == 4, proc.stderr
    assert one_error_line(proc.stderr) == f"gridsched: error: {out}/out_jobs.csv: cannot write the file: File too large"
    assert not out.exists() or not list(out.iterdir())


# ------------------------------------------------------------------------------ huge platform
def test_a_huge_platform_is_refused_before_it_is_parsed(tmp_path: Path, monkeypatch) -> None:
    from schedulers.engine import platform as plat
    from schedulers.inputs.errors import PlatformError

    monkeypatch.setattr(plat, "MAX_HOSTS", 100)

    def no_tree(*a, **k):
        raise AssertionError("the file was parsed into a tree")

    monkeypatch.setattr(plat.ET, "fromstring", no_tree)
    p = tmp_path / "p.xml"
    p.write_text("<?xml version='1.0'?>\n<platform version='4.1'>\n<zone id='z' routing='Full'>\n"
                 + "".join(f"<host id='h{i:04d}' speed='1Gf'/>\n" for i in range(2000)) + "</zone>\n</platform>\n")
    with pytest.raises(PlatformError) as info:
        plat.read_platform(p)
    assert str(info.value) == (f"{p}, line 104: host 'h0100': more than 100 hosts; a platform may have at most 100 "
                               "(schedulers.engine.platform.MAX_HOSTS)")


# --------------------------------------------------------------------------- the status table
def test_the_exit_status_page_is_the_table_of_the_code() -> None:
    page = (ROOT / "docs" / "reference" / "exit-statuses.md").read_text()
    rows = [ln for ln in page.splitlines() if ln.startswith("| ") and ln[2:3].isdigit()]
    assert [tuple(c.strip() for c in r.strip("|").split("|")) for r in rows] == \
        [(str(code), text) for code, text in exits.STATUSES]
    proc = subprocess.run([sys.executable, "-m", "schedulers.cli", "--help"], capture_output=True, text=True,
                          env=ENV, timeout=60)
    assert "exit status:" in proc.stdout and "  143  ended by SIGTERM" in proc.stdout


def test_a_stretch_beyond_a_double_is_printed_as_batsim_prints_it(tmp_path: Path) -> None:
    # Host h0 computes at 1e-300 flops/s: job 0 (1 flop on h0 and h1) ends at t = 1e300 s; job 1
    # (3 hosts, a 1-s delay) then starts at 1e300 s and, on a clock where 1e300 + 1 = 1e300, runs
    # 0 s. Batsim takes a runtime of 0 as 1e-5 s (src/jobs_execution.cpp) and divides in long
    # double: stretch = (1e300 + 1e-5 - 0) / 1e-5 = 1e305, a finite double once cast back, where
    # the quotient in double would overflow. It used to stop the run with an internal error.
    watts = "<prop id='wattage_per_state' value='100:120:200'/>"
    hosts = "".join(f"<host id='h{i}' speed='{'1e-300f' if i == 0 else '100Mf'}' core='1'>{watts}</host>" for i in range(4))
    plat = tmp_path / "p.xml"
    plat.write_text("<?xml version='1.0'?><platform version='4.1'><zone id='z' routing='Full'>"
                    f"<host id='master_host' speed='1Gf'/>{hosts}</zone></platform>")
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": 0, "subtime": 0.0, "walltime": -1, "res": 2, "profile": "c"},
        {"id": 1, "subtime": 0.0, "walltime": -1, "res": 3, "profile": "d"}],
        "profiles": {"d": {"type": "delay", "delay": 1.0},
                     "c": {"type": "parallel_homogeneous", "cpu": 1.0, "com": 0}}}))
    out = tmp_path / "out"
    assert main(["run", "--policy", "fcfs", "-p", str(plat), "-w", str(wl), "-o", str(out), "--no-progress"]) == 0
    with open(out / "out_jobs.csv", newline="") as f:
        rows = {r["job_id"]: r for r in csv.DictReader(f)}
    assert float(rows["0"]["finish_time"]) == pytest.approx(1e300, rel=1e-12)
    assert float(rows["1"]["starting_time"]) == pytest.approx(1e300, rel=1e-12)
    assert float(rows["1"]["stretch"]) == pytest.approx(1e305, rel=1e-12)
