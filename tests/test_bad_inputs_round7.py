"""Bad input, seventh round: generators, campaigns, reports and conversions given odd but
plausible values, and what the commands said about them.

Each test runs the command as a user would (``schedulers.cli.main``) and checks the exit status
and the one error line (its words, the file and item named), or the number worked out by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers_cli import one_error_line, run_main


# ------------------------------------------------ generators
@pytest.mark.parametrize("generator", ["synthetic", "green-nantes"])
def test_a_shortest_run_time_that_rounds_to_0_ms_is_refused_not_written(tmp_path: Path, generator: str) -> None:
    # Run times are rounded to the millisecond: runtime_min 1e-4 wrote jobs of delay 0.0 and walltime
    # 0.0 (synthetic), which `gridsched run` then refused ("'delay' must be a number of seconds > 0"),
    # or stopped on "load profile 'p0': need duration > 0 s" (green-nantes), naming no parameter.
    code, _, err = run_main(["scenario", generator, "--runtime-min", "1e-4", "--runtime-max", "1",
                             "-o", tmp_path / "s"])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: generator '{generator}': runtime_min 0.0001 s is below 0.001 s: "
                                   "run times are rounded to the millisecond, and a "
                                   + ("run time of 0 s is a delay" if generator == "synthetic" else
                                      "job of 0 s is a profile") + " Batsim refuses")
    assert not (tmp_path / "s").exists()
    # 1 ms is the shortest run time kept: every job then runs 0.001 s
    code, _, err = run_main(["scenario", generator, "--runtime-min", "0.001", "--runtime-max", "0.001",
                             "-o", tmp_path / "s"])
    assert code == 0, err
    w = json.loads((tmp_path / "s" / "workload.json").read_text())
    if generator == "synthetic":
        assert {p["delay"] for p in w["profiles"].values()} == {0.001}
    else:   # 100 % CPU load: cpu = 0.001 s x the econome core's 12.9625 Gflop/s
        assert {p["cpu"] for p in w["profiles"].values()} == {0.001 * 12962500000.0}
    code, _, err = run_main(["run", "--policy", "fcfs", "-p", tmp_path / "s" / "platform.xml",
                             "-w", tmp_path / "s" / "workload.json", "-o", tmp_path / "out", "--no-progress"])
    assert code == 0, err


def _swf(tmp_path: Path) -> Path:
    """Two jobs of one user, submitted at 0 and 3600 s (trace time), on 39 two-processor nodes."""
    swf = tmp_path / "t.swf"
    swf.write_text("; MaxProcs: 78\n"
                   "1 0 0 100 2 -1 -1 2 200 -1 1 5 -1 -1 -1 -1 -1 -1\n"
                   "2 3600 0 50 2 -1 -1 2 100 -1 1 5 -1 -1 -1 -1 -1 -1\n")
    return swf


def test_the_buc_scenarios_description_gives_its_stretch_factor(tmp_path: Path) -> None:
    # The factor printed was the last injected job's index: "2785 a year (times x 99)" for any rate,
    # and "0 a year (times x 99)" when the trace's own times were kept.
    # 2 jobs at 365 a year span 2 / 365 years = 2 days = 172,800 s (the stretch's definition: n jobs
    # over n / jobs_per_year years): the 3,600 s between them x 48.
    swf = _swf(tmp_path)
    code, _, err = run_main(["scenario", "buc", "--trace-file", swf, "--jobs-per-year", "365", "-o", tmp_path / "a"])
    assert code == 0, err
    w = json.loads((tmp_path / "a" / "workload.json").read_text())
    assert "2 real jobs, 365 a year (times x 48)" in w["description"]
    assert [j["subtime"] for j in w["jobs"] if j["id"] in ("1", "2")] == [0, 172800]
    code, _, err = run_main(["scenario", "buc", "--trace-file", swf, "--jobs-per-year", "0", "-o", tmp_path / "b"])
    assert code == 0, err
    assert "2 real jobs, the trace's times)" in json.loads((tmp_path / "b" / "workload.json").read_text())["description"]


@pytest.mark.parametrize("rate", ["1e-300", "0.0001"])
def test_a_buc_rate_too_low_for_a_workloads_times_is_refused_in_words(tmp_path: Path, rate: str) -> None:
    # 1e-300 was "internal error: OverflowError: high - low range exceeds valid bounds" (NumPy's
    # uniform draw over an infinite span); 0.0001 (2 jobs over 20,000 years) named an injected job.
    code, _, err = run_main(["scenario", "buc", "--trace-file", _swf(tmp_path), "--jobs-per-year", rate,
                             "-o", tmp_path / "s"])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: generator 'buc': jobs_per_year {float(rate):g} spreads the 2 "
                                   "real jobs beyond the 8589934592 s (2**33, about 272 years) a workload's times may "
                                   "reach: raise jobs_per_year, or lower max_jobs")
    assert not (tmp_path / "s").exists()


def test_owner_lilles_trace_errors_name_owner_lille(tmp_path: Path) -> None:
    # They named the generator 'buc', whose code reads the jobs for both.
    code, _, err = run_main(["scenario", "owner-lille", "--trace-file", tmp_path / "nope.swf", "-o", tmp_path / "s"])
    assert code == 2
    assert one_error_line(err).startswith(f"gridsched: error: generator 'owner-lille': trace file {tmp_path / 'nope.swf'} "
                                          "not found")


# ------------------------------------------------ summaries
@pytest.mark.parametrize("second_id", [1, "a#b"])
def test_an_owner_share_summary_counts_the_tasks_of_every_workload_and_ids_with_a_hash(tmp_path: Path,
                                                                                      second_id: object) -> None:
    # Tasks were counted by job id alone: one workload given twice (-w w.json -w w.json) had 2 tasks,
    # not 4; a workload's own id 'a#b' was counted as a restart, and once preempted (its restart
    # 'a#b#1') the summary was "internal error: ValueError: invalid literal for int() ... 'b'".
    # Each workload: job 1 of user1 (2 hosts, t = 0), job 2 of user2 (1 host, t = 10). hetero4's
    # hosts: user1 owns a1, b2, user2 owns a2, b1. At 0 the two user1 jobs take the 4 hosts; at 10
    # user2 (2 hosts owned, none used) gets 2 back: one user1 job is preempted and restarted.
    w = tmp_path / "w.json"
    jobs = [{"id": 1, "subtime": 0, "res": 2, "walltime": 1000, "profile": "d", "user": "user1"},
            {"id": 2, "subtime": 10, "res": 1, "walltime": 1000, "profile": "d", "user": "user2"}]
    w.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": {"d": {"type": "delay", "delay": 500}}}))
    w2 = tmp_path / "w2.json"
    jobs[0]["id"] = second_id
    w2.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": {"d": {"type": "delay", "delay": 500}}}))
    code, _, err = run_main(["run", "--policy", "osep", "-p", Path(__file__).parent / "fixtures" / "hetero4.xml",
                             "-w", w, "-w", w2, "-o", tmp_path / "out", "--no-progress",
                             "--policy-options", '{"period": 0}'])
    assert code == 0, err
    s = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (s["jobs"], s["tasks"], s["restarts"], s["preemptions"], s["killed"]) == (5, 4, 1, 1, 1)


def test_a_campaigns_satisfaction_reads_a_workload_id_with_a_hash_as_its_own_task(tmp_path: Path) -> None:
    # 'job#2' was read as a restart of a task 'job', and the run failed: "job w0!job#2 belongs to no
    # task of the workloads given". OSEP on hetero4 (user1 owns a1, b2; user2 a2, b1): user1's job
    # (2 hosts, delay 500 s, t = 0) runs at once; user2's 'job#2' (3 hosts, t = 10) finds 2 free
    # hosts and no excess to preempt (user1 runs on as many hosts as it owns), so it starts at 500 and
    # ends at 1000. HOSEP satisfaction = ideal / real time: 500 / 500 = 100 %, 500 / 990 = 50.50... %.
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": 1, "subtime": 0, "res": 2, "walltime": 1000, "profile": "d", "user": "user1"},
        {"id": "job#2", "subtime": 10, "res": 3, "walltime": 1000, "profile": "d", "user": "user2"}],
        "profiles": {"d": {"type": "delay", "delay": 500}}}))
    (tmp_path / "c.toml").write_text(
        f'name = "c"\nmetrics = ["satisfaction"]\n[[policy]]\nname = "osep"\noptions = {{ period = 0 }}\n'
        f'[[scenario]]\nname = "s"\nplatform = "{Path(__file__).parent / "fixtures" / "hetero4.xml"}"\n'
        'workload = "w.json"\n')
    code, out, err = run_main(["campaign", "run", tmp_path / "c.toml", "-o", tmp_path / "out", "--serial", "--no-progress"])
    assert code == 0, out + err
    code, _, err = run_main(["campaign", "collect", tmp_path / "out"])
    assert code == 0, err
    import csv
    with open(tmp_path / "out" / "runs.csv", newline="") as f:
        row = next(csv.DictReader(f))
    assert row["status"] == "done"
    assert float(row["satisfaction.user1"]) == 100.0
    assert float(row["satisfaction.user2"]) == pytest.approx(500 / 990 * 100, rel=1e-12)


# ------------------------------------------------ reports
def test_a_report_says_why_it_has_no_waiting_time_table_when_no_job_started(tmp_path: Path) -> None:
    # Every job of res 0 is rejected by every policy: no run has a waiting time or a bounded
    # slowdown, and the report left both default tables out without a word.
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": 1, "subtime": 0, "res": 0, "walltime": 100, "profile": "d"}],
        "profiles": {"d": {"type": "delay", "delay": 5}}}))
    (tmp_path / "c.toml").write_text(
        '[[policy]]\nname = "fcfs"\n[[policy]]\nname = "easy"\n[[scenario]]\nname = "s"\n'
        f'platform = "{Path(__file__).parent / "fixtures" / "hetero4.xml"}"\nworkload = "w.json"\n')
    code, _, err = run_main(["campaign", "run", tmp_path / "c.toml", "-o", tmp_path / "out", "--serial", "--no-progress"])
    assert code == 0, err
    code, _, err = run_main(["campaign", "report", tmp_path / "out"])
    assert code == 0, err
    text = (tmp_path / "out" / "report.md").read_text()
    assert ("No table of mean waiting time (s) or mean bounded slowdown (τ = 10 s): no job started in any done run "
            "(every job rejected, or none submitted), so no run has a value.") in text.splitlines()
    assert "## makespan (s)" in text and "## mean waiting time (s)" not in text


# ------------------------------------------------ a researcher's own policy
_FOUR_JOBS = {"nb_res": 4, "jobs": [
    {"id": 1, "subtime": 0, "res": 4, "walltime": 100, "profile": "d"},
    {"id": 2, "subtime": 1, "res": 2, "walltime": 100, "profile": "d"},
    {"id": 3, "subtime": 2, "res": 1, "walltime": 100, "profile": "d"},
    {"id": 4, "subtime": 3, "res": 3, "walltime": 100, "profile": "d"}],
    "profiles": {"d": {"type": "delay", "delay": 10}}}


@pytest.mark.parametrize("base, dynamic, body, at, words", [
    # a set: {3} < {2} and {2} < {3} are both False; the run went on, the queue in no order, without a word
    ("easy.EASY", False, "return {job.res}", 0, "it returned {4} for job w0!1, a set, and sets are ordered by "
                                               "inclusion only"),
    # NaN inside a tuple: the tuple compares as NaN does, and the run went on as with a set
    ("easy.EASY", False, "return (float('nan'), job.res)", 0,
     "it returned (nan, 4) for job w0!1, which holds nan, which no key is before or after"),
    # "policy P failed in on_job_submitted (.../schedulers/easy.py, line 291): TypeError: '>=' not
    # supported between instances of 'NoneType' and 'int'": gridsched's line given as the policy's
    ("easy.EASY", False, "return None if job.res > 2 else job.res", 3,
     "it returned None for job w0!4 and 1 for job w0!3, which cannot be compared ('>=' not supported between "
     "instances of 'NoneType' and 'int')"),
    ("easy.EASY", True, "return str(job.res) if job.res > 2 else job.res", 3,
     "it returned '3' for job w0!4 and 1 for job w0!3, which cannot be compared ('>=' not supported between "
     "instances of 'str' and 'int')"),
    # (FCFS's re-sort: "failed in schedule (.../schedulers/fcfs.py, line 73)")
    ("fcfs.FCFS", True, "return None if job.res > 2 else job.res", 3,
     "it returned 1 for job w0!3 and None for job w0!4, which cannot be compared ('<' not supported between "
     "instances of 'NoneType' and 'int')"),
])
def test_a_queue_key_that_gives_no_order_names_the_users_def(tmp_path: Path, base: str, dynamic: bool, body: str,
                                                            at: int, words: str) -> None:
    # Jobs 1 (4 hosts, t = 0), 2 (2 hosts, t = 1), 3 (1 host, t = 2), 4 (3 hosts, t = 3) on 4 hosts:
    # job 1 runs 0-10, so jobs 2-4 wait, and the keys are compared from the second waiting job on.
    w = tmp_path / "w.json"
    w.write_text(json.dumps(_FOUR_JOBS))
    module, cls = base.split(".")
    f = tmp_path / "mine.py"
    f.write_text(f"from schedulers.{module} import {cls}\n\n\nclass P({cls}):\n    dynamic_queue_order = {dynamic}\n\n"
                 f"    def queue_key(self, job):\n        {body}\n")
    code, _, err = run_main(["run", "--policy", f"{f}:P", "-p", Path(__file__).parent / "fixtures" / "hetero4.xml",
                             "-w", w, "-o", tmp_path / "out", "--no-progress"])
    assert code == 1
    assert one_error_line(err).startswith(f"gridsched: error: policy P failed in queue_key ({f}, line 7): {words}: the "
                                          f"queue would have no order; the run stopped at simulated time t={at}.000 s")


def test_a_queue_key_of_one_type_still_orders_the_queue(tmp_path: Path) -> None:
    # The checks leave ordinary keys alone: smallest job first (-res largest first here) under EASY.
    # Job 1 (4 hosts) runs 0-10; at 10, of jobs 2 (2 hosts), 3 (1), 4 (3) waiting, the key -res puts
    # job 4 first (3 hosts, 10-20), then job 3 beside it (1 host, 10-20), then job 2 (20-30).
    w = tmp_path / "w.json"
    w.write_text(json.dumps(_FOUR_JOBS))
    f = tmp_path / "mine.py"
    f.write_text("from schedulers.easy import EASY\n\n\nclass P(EASY):\n    def queue_key(self, job):\n"
                 "        return (-job.res,)\n")
    code, _, err = run_main(["run", "--policy", f"{f}:P", "-p", Path(__file__).parent / "fixtures" / "hetero4.xml",
                             "-w", w, "-o", tmp_path / "out", "--no-progress"])
    assert code == 0, err
    import csv
    with open(tmp_path / "out" / "out_jobs.csv", newline="") as fh:
        starts = {r["job_id"]: float(r["starting_time"]) for r in csv.DictReader(fh)}
    assert starts == {"1": 0.0, "4": 10.0, "3": 10.0, "2": 20.0}


@pytest.mark.parametrize("hook, body, words", [
    # NaN: the running job held its hosts "until NaN", never and always: no job was backfilled, without a word
    ("busy_until(self, job)", "return float('nan')", "busy_until ({f}, line 5): it returned nan for running job w0!1, "
                                                     "not a time (s) or None"),
    # "failed in schedule (.../schedulers/easy.py, line 341): TypeError: '<=' not supported ..."
    ("busy_until(self, job)", "return 'x'", "busy_until ({f}, line 5): it returned 'x' for running job w0!1, not a "
                                            "time (s) or None"),
    # "failed in schedule (.../schedulers/easy.py, line 559): TypeError: '<' not supported ..."
    ("gap_limit(self, now, resv)", "return None", "gap_limit ({f}, line 5): it returned None for the reservation of "
                                                  "job w0!2 at 100.0 s, not a time (s)"),
])
def test_an_easy_time_hook_answering_no_time_names_the_users_def(tmp_path: Path, hook: str, body: str,
                                                                 words: str) -> None:
    # Job 1 (3 of 4 hosts, walltime 100) runs from 0; job 2 (4 hosts, t = 1) is reserved at 100; at
    # t = 2 job 3 (1 host) is the first backfilling candidate: the pass reads both hooks.
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": 1, "subtime": 0, "res": 3, "walltime": 100, "profile": "d"},
        {"id": 2, "subtime": 1, "res": 4, "walltime": 100, "profile": "d"},
        {"id": 3, "subtime": 2, "res": 1, "walltime": 50, "profile": "d"}],
        "profiles": {"d": {"type": "delay", "delay": 10}}}))
    f = tmp_path / "mine.py"
    f.write_text(f"from schedulers.easy import EASY\n\n\nclass P(EASY):\n    def {hook}:\n        {body}\n")
    code, _, err = run_main(["run", "--policy", f"{f}:P", "-p", Path(__file__).parent / "fixtures" / "hetero4.xml",
                             "-w", w, "-o", tmp_path / "out", "--no-progress"])
    assert code == 1
    assert one_error_line(err).startswith(f"gridsched: error: policy P failed in {words.format(f=f)}; the run stopped "
                                          "at simulated time t=2.000 s")


# ------------------------------------------------ the analysis notebook
def test_the_analysis_notebook_runs_on_a_run_where_no_job_started(tmp_path: Path, monkeypatch) -> None:
    # Every job rejected (res 0): the Gantt cell failed with "ValueError: Axis limits cannot be NaN or
    # Inf" (its makespan, the largest finish time, was NaN), the machine-states cell indexed an empty
    # table, and the summary cell formatted the waiting time None.
    pytest.importorskip("evalys")
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient
    from test_notebook import KERNEL, NOTEBOOK, first_code_cell, set_parameter
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    try:
        KernelSpecManager().get_kernel_spec(KERNEL)
    except NoSuchKernel:
        pytest.skip(f"no {KERNEL} kernel (test_notebook.py installs it)")
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": 1, "subtime": 0, "res": 0, "walltime": 100, "profile": "d", "user": "a"}],
        "profiles": {"d": {"type": "delay", "delay": 5}}}))
    monkeypatch.chdir(tmp_path)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    params = first_code_cell(nb)
    set_parameter(params, "OUTPUT", str(tmp_path / "out"))
    set_parameter(params, "PLATFORM", str(Path(__file__).parent / "fixtures" / "hetero4.xml"))
    set_parameter(params, "WORKLOAD", str(w))
    set_parameter(params, "POLICY", "fcfs")
    NotebookClient(nb, timeout=300, kernel_name=KERNEL, resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "no job started (every job rejected, or none submitted): the figures below have nothing to draw" in text
    assert "no Gantt chart: no job started" in text
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (summary["jobs"], summary["rejected"], summary["mean_waiting_time"]) == (1, 1, None)
    assert not list((tmp_path / "out").glob("*.png"))


@pytest.mark.parametrize("body, words", [
    # "failed in schedule (.../schedulers/easy.py, line 451): IndexError: list assignment index out of range"
    ("return [7]", "it returned [7]: position 7 is not an integer from 0 to 0"),
    ("return [1, 0]", "it returned [1, 0]: position 1 is not an integer from 0 to 0"),
    # the head left the queue without running: "deadlock at t=3: ... never executed or rejected 4
    # submitted job(s)", a Batsim abort (status 2) for the variant's own bug
    ("return [0]", "it returned [0]: position 0 is job w0!1, which it did not start (it would leave the queue "
                   "without running)"),
])
def test_a_backfill_pass_answering_positions_it_did_not_start_names_the_users_def(tmp_path: Path, body: str,
                                                                                  words: str) -> None:
    w = tmp_path / "w.json"
    w.write_text(json.dumps(_FOUR_JOBS))
    f = tmp_path / "mine.py"
    f.write_text(f"from schedulers.easy import EASY\n\n\nclass P(EASY):\n    def backfill_pass(self):\n        {body}\n")
    code, _, err = run_main(["run", "--policy", f"{f}:P", "-p", Path(__file__).parent / "fixtures" / "hetero4.xml",
                             "-w", w, "-o", tmp_path / "out", "--no-progress"])
    assert code == 1
    assert one_error_line(err).startswith(
        f"gridsched: error: policy P failed in backfill_pass ({f}, line 5): {words}; it returns the increasing queue "
        "positions (0 = head) of the jobs it started; the run stopped at simulated time t=0.000 s")


@pytest.mark.parametrize("hosts, on", [("np.int64(1)", "1"), ("np.array([1, 2])", "1-2"), ("[np.int32(3), 0]", "0 3")])
def test_execute_takes_numpy_host_ids(tmp_path: Path, hosts: str, on: str) -> None:
    # np.int64(1) was refused as "host ids must be a ProcSet, integers >= 0 or one integer >= 0, got
    # np.int64(1)", and an array of them passed the check, then failed inside procset: "TypeError:
    # ProcInt() argument inf must be int" (register_job and set_pstate took NumPy integers already).
    pytest.importorskip("numpy")
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": on.count(" ") + on.count("-") + 1,
                                                   "walltime": 100, "profile": "d"}],
                             "profiles": {"d": {"type": "delay", "delay": 5}}}))
    f = tmp_path / "mine.py"
    f.write_text("import numpy as np\nfrom schedulers.fcfs import FCFS\n\n\nclass P(FCFS):\n    def schedule(self):\n"
                 f"        while self.queue:\n            self.execute(self.queue.popleft(), {hosts})\n")
    code, _, err = run_main(["run", "--policy", f"{f}:P", "-p", Path(__file__).parent / "fixtures" / "hetero4.xml",
                             "-w", w, "-o", tmp_path / "out", "--no-progress"])
    assert code == 0, err
    import csv
    with open(tmp_path / "out" / "out_jobs.csv", newline="") as fh:
        row = next(csv.DictReader(fh))
    assert (row["final_state"], row["allocated_resources"]) == ("COMPLETED_SUCCESSFULLY", on)


def test_policy_metrics_of_numpy_numbers_are_recorded(tmp_path: Path) -> None:
    # np.int64(3) (np.sum of ints) and np.float32(1.5) failed their run: "metrics() ... must return a
    # dict of name -> finite number, got 'n': np.int64(3)"; an np.array(2.0) failed inside the check
    # ("TypeError: only integer scalar arrays can be converted to a scalar index").
    pytest.importorskip("numpy")
    (tmp_path / "m.py").write_text(
        "import numpy as np\nfrom schedulers.fcfs import FCFS\n\n\nclass NumPy(FCFS):\n    def metrics(self):\n"
        "        return {'n': np.int64(3), 'f': np.float32(1.5), 'd': np.float64(0.25)}\n\n\n"
        "class Array(FCFS):\n    def metrics(self):\n        return {'a': np.array(2.0)}\n")
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": 1, "subtime": 0, "res": 1, "walltime": 100, "profile": "d"}],
        "profiles": {"d": {"type": "delay", "delay": 5}}}))
    (tmp_path / "c.toml").write_text(
        "".join(f'[[policy]]\nname = "{tmp_path / "m.py"}:{c}"\n' for c in ("NumPy", "Array"))
        + f'[[scenario]]\nname = "s"\nplatform = "{Path(__file__).parent / "fixtures" / "hetero4.xml"}"\n'
        'workload = "w.json"\n')
    code, stdout, _ = run_main(["campaign", "run", tmp_path / "c.toml", "-o", tmp_path / "out", "--serial",
                                "--no-progress"])
    assert code == 1   # (the Array run)
    failed = [ln.split("): ", 1)[1] for ln in stdout.splitlines() if ln.startswith("  failed ")]
    assert failed == [f"ValueError: policy Array: metrics() ({tmp_path / 'm.py'}, line 11) must return a dict of "
                      "name -> finite number, got 'a': array(2.)"]
    code, _, err = run_main(["campaign", "collect", tmp_path / "out"])
    assert code == 0, err
    import csv
    with open(tmp_path / "out" / "runs.csv", newline="") as fh:
        row = next(r for r in csv.DictReader(fh) if r["status"] == "done")
    assert (float(row["policy.n"]), float(row["policy.f"]), float(row["policy.d"])) == (3.0, 1.5, 0.25)


def test_a_notify_or_registration_holding_numpy_numbers_is_written_as_their_values(tmp_path: Path) -> None:
    # The embedded engine took self.notify("registration_finished", x=np.int64(3)) as it was; behind
    # real Batsim (gridsched serve, run --engine batsim) the reply could not be written: "the scheduler
    # failed, Batsim was stopped: ProtocolError: cannot write the reply at now=0.0: int64 is not JSON
    # serialisable".
    np = pytest.importorskip("numpy")
    import sys

    from helpers_cli import engine_with_client

    from schedulers.batsim.protocol import encode_decisions
    from schedulers.core.events import NotifyBatsim
    assert encode_decisions(0.0, [NotifyBatsim(type="registration_finished", data={
        "x": np.int64(3), "y": np.float32(1.5), "z": np.array([1, 2])})]) == (
        '{"now": 0.0, "events": [{"timestamp": 0.0, "type": "NOTIFY", "data": {"type": "registration_finished", '
        '"x": 3, "y": 1.5, "z": [1, 2]}}]}')
    f = tmp_path / "mine.py"
    f.write_text("import numpy as np\nfrom schedulers.fcfs import FCFS\n\n\nclass P(FCFS):\n"
                 "    def on_simulation_begins(self, platform):\n"
                 "        self.notify('registration_finished', x=np.int64(3))\n")
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "walltime": 100, "profile": "d"}],
                             "profiles": {"d": {"type": "delay", "delay": 5}}}))
    (tmp_path / "out").mkdir()
    proc, code, out = engine_with_client(
        [sys.executable, "-m", "schedulers.cli", "serve", "--policy", f"{f}:P", "--socket", "tcp://127.0.0.1:{PORT}",
         "--connect-timeout", "60"],
        ["-p", Path(__file__).parent / "fixtures" / "hetero4.xml", "-w", w, "-e", tmp_path / "out" / "out"])
    assert (proc.returncode, code) == (0, 0), (proc.stderr, out)
    assert "COMPLETED_SUCCESSFULLY" in (tmp_path / "out" / "out_jobs.csv").read_text()


def test_a_workload_job_named_as_a_restart_says_so_when_the_task_is_preempted(tmp_path: Path) -> None:
    # Job 1 of user1 takes the 4 hosts at 0; job '1#1' of user2 (who owns 2 of them) arrives at 10:
    # OSEP preempts job 1 and registers its restart, named '1#1' too. It was "REGISTER_JOB 'w0!1#1'
    # at t=10: job 'w0!1#1' already exists (Batsim aborts)", which did not say that the name is the
    # policy's own restart naming.
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": 1, "subtime": 0, "res": 4, "walltime": 1000, "profile": "d", "user": "user1"},
        {"id": "1#1", "subtime": 10, "res": 1, "walltime": 1000, "profile": "d", "user": "user2"}],
        "profiles": {"d": {"type": "delay", "delay": 500}}}))
    code, _, err = run_main(["run", "--policy", "osep", "-p", Path(__file__).parent / "fixtures" / "hetero4.xml",
                             "-w", w, "-o", tmp_path / "out", "--no-progress", "--policy-options", '{"period": 0}'])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: {w}: policy 'osep' preempted job w0!1 and runs it again as job "
                                   "w0!1#1, but the workload has a job of that id: ids of the form <job>#<k> are the "
                                   "names of the restarts of the preemptive policies (OSEP, HOSEP, EHOSEP); rename the "
                                   "workload's job")


@pytest.mark.parametrize("options", ['{"period": 0}', '{"period": 0, "checkpoint": true}'])
def test_a_preempted_job_of_a_composed_profile_is_bad_input_naming_the_workload(tmp_path: Path, options: str) -> None:
    # It was "policy OSEP failed in on_jobs_killed (.../schedulers/core/owner_share.py, line 457):
    # ... restarts support single-phase profiles only", status 1: a failure located in gridsched's
    # code, for a workload the policy cannot run (with checkpointing: "its profile's work is unknown
    # (Batsim must forward profiles ...)", which they were).
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": 1, "subtime": 0, "res": 4, "walltime": 1000, "profile": "c", "user": "user1"},
        {"id": 2, "subtime": 10, "res": 1, "walltime": 1000, "profile": "d", "user": "user2"}],
        "profiles": {"d": {"type": "delay", "delay": 500}, "c": {"type": "composed", "seq": ["d", "d"]}}}))
    code, _, err = run_main(["run", "--policy", "osep", "-p", Path(__file__).parent / "fixtures" / "hetero4.xml",
                             "-w", w, "-o", tmp_path / "out", "--no-progress", "--policy-options", options])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: {w}: policy 'osep' preempted job w0!1, whose profile is "
                                   "'composed': a preempted job runs again from a single-phase profile (delay, "
                                   "parallel, parallel_homogeneous...), which a composed one is not; give the job a "
                                   "single-phase profile, or use a policy that does not preempt")


def test_a_checkpointed_restart_of_a_parallel_profile_is_bad_input_naming_the_workload(tmp_path: Path) -> None:
    # It was "policy OSEP failed in on_jobs_killed (.../schedulers/core/owner_share.py, line 465):
    # checkpointing needs single-phase profiles ...", status 1. Job 1 ('parallel', 1e11 flops on each
    # of hetero4's 4 hosts) runs at the pace of b2 (50 Mflop/s): 2,000 s. Preempted at 700 s for
    # user2, it has done 7 blocks of 100 s: 7/20 of its 4e11 flops = 1.4e11 flops checkpointed.
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": 1, "subtime": 0, "res": 4, "walltime": 10000, "profile": "p", "user": "user1"},
        {"id": 2, "subtime": 700, "res": 1, "walltime": 1000, "profile": "d", "user": "user2"}],
        "profiles": {"d": {"type": "delay", "delay": 500},
                     "p": {"type": "parallel", "cpu": [1e11] * 4, "com": [0] * 16}}}))
    code, _, err = run_main(["run", "--policy", "osep", "-p", Path(__file__).parent / "fixtures" / "hetero4.xml",
                             "-w", w, "-o", tmp_path / "out", "--no-progress", "--policy-options",
                             '{"period": 0, "checkpoint": true, "block": 100}'])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: {w}: policy 'osep' preempted job w0!1 with checkpointing on after "
                                   "1.4e+11 flops of checkpointed blocks, but its profile is 'parallel': a restart "
                                   "keeps the flops done of parallel_homogeneous and parallel_homogeneous_total "
                                   "profiles only; turn checkpoint off, or give the job such a profile")


# ------------------------------------------------ outputs
def test_an_output_that_is_a_fifo_or_a_link_to_one_is_refused_not_replaced(tmp_path: Path) -> None:
    # `gridsched convert t.swf -o /dev/stdout` (or /dev/null) renamed its written file over the path:
    # as root (a container) /dev/stdout became a regular file, for every process of the machine. A
    # FIFO and a link to one (as /dev/stdout links to the pipe of the process) stand in for a device.
    import os
    import stat
    swf = tmp_path / "t.swf"
    swf.write_text("1 0 0 100 1 -1 -1 1 200 -1 1 1 -1 -1 -1 -1 -1 -1\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "stdout"
    link.symlink_to(fifo)
    for out in (fifo, link):
        code, _, err = run_main(["convert", swf, "-o", out])
        assert code == 2
        assert one_error_line(err) == (f"gridsched convert: error: {out}: is a FIFO, not a file: gridsched writes an "
                                       "output whole into a new file renamed over its path, which would replace it; "
                                       "give the path of a file")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and link.is_symlink()
    # every whole-file output: a scenario's platform.xml (kept by --overwrite, rewritten in place)
    (tmp_path / "s").mkdir()
    os.mkfifo(tmp_path / "s" / "platform.xml")
    code, _, err = run_main(["scenario", "synthetic", "-o", tmp_path / "s", "--overwrite"])
    assert code == 2
    assert one_error_line(err).startswith(f"gridsched: error: {tmp_path / 's' / 'platform.xml'}: is a FIFO, not a file")
    assert stat.S_ISFIFO(os.stat(tmp_path / "s" / "platform.xml").st_mode)


# ------------------------------------------------ a Batsim flag the policy needs is missing
def test_a_batsim_flag_the_policy_needs_is_bad_input_not_a_failure_of_gridsched_code() -> None:
    # hosep needs Batsim's --enable-dynamic-jobs (its restarts are registered jobs). Behind a
    # Batsim started without it, SIMULATION_BEGINS says dynamic-jobs-enabled: false. That is the
    # user's command line, not a failure of code: before, `gridsched serve` printed "policy HOSEP
    # failed (.../schedulers/core/policy.py, line 508): ...", naming gridsched's own file as the
    # policy's; now it is PolicyInputError (bad input, exit 2), its message unchanged.
    from schedulers.core.events import SimulationBegins
    from schedulers.core.failure import located
    from schedulers.core.model import Host, PolicyInputError
    from schedulers.registry import get_policy

    policy = get_policy("hosep")
    hosts = [Host(id=i, name=f"h{i}", speeds=[1e9]) for i in range(2)]
    begins = SimulationBegins(0.0, nb_resources=2, nb_compute_resources=2, compute_resources=hosts,
                              config={"dynamic-jobs-enabled": False})
    with pytest.raises(PolicyInputError) as info:
        policy.decide(0.0, [begins])
    assert located(policy, info.value) is None   # passed on as it is: no file or line added
    assert str(info.value) == ("policy 'hosep' needs Batsim's --enable-dynamic-jobs, but SIMULATION_BEGINS says "
                               "dynamic-jobs-enabled: false; start Batsim with --enable-dynamic-jobs")


def test_a_campaign_run_into_another_campaigns_folder_is_refused(tmp_path: Path) -> None:
    # `campaign run b.toml -o A` where A holds campaign 'a' replaced a's campaign.json: collect and
    # report then read a's results as stray files of 'b' ("other result files: ignored"). It is
    # refused now, naming both campaigns; the same campaign (edited) still goes on in its folder.
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": 1, "subtime": 0, "res": 1, "walltime": 100, "profile": "d"}],
        "profiles": {"d": {"type": "delay", "delay": 5}}}))
    platform = Path(__file__).parent / "fixtures" / "hetero4.xml"
    for name, policy in (("a", "fcfs"), ("b", "easy")):
        (tmp_path / f"{name}.toml").write_text(
            f'name = "{name}"\n[[policy]]\nname = "{policy}"\n'
            f'[[scenario]]\nname = "s"\nplatform = "{platform}"\nworkload = "w.json"\n')
    out = tmp_path / "out"
    code, _, err = run_main(["campaign", "run", tmp_path / "a.toml", "-o", out, "--serial", "--no-progress"])
    assert code == 0, err
    manifest = (out / "campaign.json").read_text()
    code, _, err = run_main(["campaign", "run", tmp_path / "b.toml", "-o", out, "--serial", "--no-progress"])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: {out}: holds the results of campaign 'a' (its campaign.json), "
                                   "not of 'b': running here would replace that campaign's manifest; give another "
                                   "--out, or move the folder away")
    assert (out / "campaign.json").read_text() == manifest
    # campaign 'a' edited (another policy): it goes on in its own folder
    (tmp_path / "a.toml").write_text((tmp_path / "a.toml").read_text().replace('"fcfs"', '"easy"'))
    code, _, err = run_main(["campaign", "run", tmp_path / "a.toml", "-o", out, "--serial", "--no-progress"])
    assert code == 0, err


def test_a_reward_weight_that_overflows_the_reward_is_said_not_returned_as_minus_inf() -> None:
    # A weight of 1e308 is finite and accepted, but 1e308 x 2 job-hours of waiting is inf: the step's
    # reward was -inf, handed to the agent without a word. The step now stops with a ValueError
    # naming the weights and the costs; 1e300 x 2 = 2e300 is still a reward.
    from schedulers.gym.reward import Costs

    costs = Costs({"waiting_time": 1e308})
    with pytest.raises(ValueError, match=r"the reward of this step is -inf \(weights \{'waiting_time': 1e\+308\} "
                                         r"times the step's costs \{'waiting_time': 2\.0, .*overflow a double"):
        costs.step_reward({"waiting_time": 2.0, "bounded_slowdown": 0.0, "energy": 0.0})
    ok = Costs({"waiting_time": 1e300})
    assert ok.step_reward({"waiting_time": 2.0, "bounded_slowdown": 0.0, "energy": 0.0})[0] == -2e300


def test_a_workload_dict_built_with_numpy_numbers_runs_as_its_json_would() -> None:
    # simulate([workload dict]) refused np.int64 numbers ("'nb_res' must be an integer > 0 ..., got
    # np.int64(4)"), though a researcher building a workload with np.arange or np.random gets them
    # everywhere, and json.dump of the same values (after .item()) is a workload Batsim reads. Now
    # they are read as the numbers they hold: 3 jobs of 5.5 s at 0, 1 and 2 s on 4 free hosts
    # start at their submission and end 5.5 s later.
    np = pytest.importorskip("numpy")
    from schedulers.engine import plain_numbers, simulate
    from schedulers.registry import get_policy

    w = {"nb_res": np.int64(4),
         "jobs": [{"id": int(i), "subtime": np.float64(i), "walltime": np.int32(100), "res": np.int64(1),
                   "profile": "d"} for i in range(3)],
         "profiles": {"d": {"type": "delay", "delay": np.float32(5.5)}}}
    plain = plain_numbers(w)
    assert plain["nb_res"] == 4 and type(plain["nb_res"]) is int
    assert type(plain["jobs"][1]["subtime"]) is float and type(plain["profiles"]["d"]["delay"]) is float
    assert type(w["nb_res"]) is np.int64   # (the caller's dict is not changed)
    r = simulate(Path(__file__).parents[1] / "docs" / "examples" / "four_hosts.xml", [w], get_policy("fcfs"))
    assert [(j.id, j.start, j.finish) for j in r.jobs] == [("w0!0", 0.0, 5.5), ("w0!1", 1.0, 6.5),
                                                           ("w0!2", 2.0, 7.5)]
    same = {"nb_res": 1, "jobs": [], "profiles": {}}
    assert plain_numbers(same) is same   # (nothing to convert: no copy)
