"""Bad input, sixth round: mistakes a researcher makes in their own policy, a trace's odd
fields, and what the commands said about them.

Each test runs the command as a user would (``schedulers.cli.main``) and checks the exit status
and the one error line (its words, the file and item named), or the number worked out by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers_cli import one_error_line, run_main

FIX = Path(__file__).parent / "fixtures"
HETERO = FIX / "hetero4.xml"   # 4 compute hosts a1 a2 b1 b2 (ids 0-3), 4 cores each

#: The head of the user policies below: a queue of the submitted jobs.
_HEAD = '''from procset import ProcSet
from schedulers.core.policy import Policy, first_hosts


class P(Policy):
    name = "p"

    def __init__(self, options=None):
        super().__init__(options)
        self.queue = []

    def on_job_submitted(self, job):
        self.queue.append(job)

'''   # (line 14 is the blank line: a policy's schedule begins on line 15)


def _two_jobs(tmp_path: Path, second_at: float = 1) -> Path:
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": 1, "subtime": 0, "res": 2, "walltime": 100, "profile": "d"},
        {"id": 2, "subtime": second_at, "res": 1, "walltime": 100, "profile": "d"}],
        "profiles": {"d": {"type": "delay", "delay": 10}}}))
    return w


def _run_policy(tmp_path: Path, body: str, second_at: float = 1, energy: bool = False) -> tuple[int, str, Path]:
    """``gridsched run`` of the policy ``_HEAD + body`` (file ``mine.py``) on two jobs: (exit
    status, its one error line, the policy file)."""
    f = tmp_path / "mine.py"
    f.write_text(_HEAD + body)
    code, _, err = run_main(["run", "--policy", f"{f}:P", "-p", HETERO, "-w", _two_jobs(tmp_path, second_at),
                             "-o", tmp_path / "out", "--no-progress", "--overwrite", *(["-E"] if energy else [])])
    return code, one_error_line(err) if code else "", f


# ------------------------------------------------ a user policy's decisions Batsim aborts on
@pytest.mark.parametrize("body, line, what", [
    # hosts 100-101 for job 1 (the platform has ids 0-3): "EXECUTE_JOB w0!1: host 100 does not
    # exist (platform has 4 compute hosts)", exit 2, as if the input were bad
    ("    def schedule(self):\n        while self.queue:\n            job = self.queue.pop(0)\n"
     "            self.execute(job, ProcSet((100, 99 + job.res)))\n", 18,
     "job w0!1 cannot start on host 100: it does not exist (the platform has 4 compute hosts, ids 0-3)"),
    # the same through execute_mask: bit 4 is no host
    ("    def schedule(self):\n        while self.queue:\n            self.execute_mask(self.queue.pop(0), 0b10001)\n",
     17, "job w0!1 cannot start on host 4: it does not exist (the platform has 4 compute hosts, ids 0-3)"),
    # a job rejected twice: "REJECT_JOB w0!1 at t=0: the job is REJECTED, not waiting"
    ("    def schedule(self):\n        for job in self.queue:\n            self.reject(job)\n"
     "            self.reject(job)\n", 18,
     "job w0!1 cannot be rejected: it is REJECTED, not waiting (Batsim 4.2.1 aborts on it)"),
    # a job started, then rejected
    ("    def schedule(self):\n        while self.queue:\n            job = self.queue.pop(0)\n"
     "            self.execute(job, first_hosts(self.available, job.res))\n            self.reject(job)\n", 19,
     "job w0!1 cannot be rejected: it is RUNNING, not waiting (Batsim 4.2.1 aborts on it)"),
    # a waiting job killed: "KILL_JOB at t=0: job 'w0!1' is waiting: real Batsim 4.2.1 aborts..."
    ("    def schedule(self):\n        self.kill(self.queue)\n", 16,
     "job w0!1 cannot be killed: it is waiting (Batsim 4.2.1 aborts: \"Invalid KILL_JOB: job_id 'w0!1' refers "
     "to a job not being executed nor completed.\"); reject a waiting job instead: self.reject(job)"),
    # a rejected job killed: "KILL_JOB at t=0: job 'w0!1' was rejected: real Batsim 4.2.1's killer aborts"
    ("    def schedule(self):\n        for job in self.queue:\n            self.reject(job)\n"
     "        self.kill(self.queue)\n", 18,
     "job w0!1 cannot be killed: it was rejected (Batsim 4.2.1's killer aborts: \"Bad kill: job w0!1 has not "
     "been started\")"),
    # Batsim's switches and energy query without -E: "SET_RESOURCE_STATE needs the energy model
    # (-E / --energy), as in Batsim" / "QUERY consumed_energy needs the energy model (-E / --energy)"
    ("    def schedule(self):\n        self.set_pstate([0], 1)\n", 16,
     "set_pstate (SET_RESOURCE_STATE) needs Batsim's energy model, and this simulation runs without it: run with "
     "--energy (-E)"),
    ("    def schedule(self):\n        self.query_consumed_energy()\n", 16,
     "query_consumed_energy (QUERY consumed_energy) needs Batsim's energy model, and this simulation runs without "
     "it: run with --energy (-E)"),
    # a profile registered without --enable-dynamic-jobs: "REGISTER_PROFILE ... dynamic job
    # registration is disabled (Batsim aborts)"
    ("    def schedule(self):\n        self.register_profile('w0', 'x', {'type': 'delay', 'delay': 1})\n", 16,
     "register_profile w0/x: dynamic job registration is disabled (Batsim aborts); enable it with Batsim's "
     "--enable-dynamic-jobs (a policy declares requires = {\"dynamic-jobs\"}, which gridsched run and campaigns "
     "honour)"),
    # "NOTIFY 'done' from the scheduler: unknown type (Batsim aborts)"
    ("    def schedule(self):\n        self.notify('done')\n", 16,
     "notify: Batsim 4.2.1 takes a NOTIFY of type 'registration_finished' or 'continue_registration' from the "
     "scheduler, got 'done' (it aborts on another)"),
    # a misspelt field: "EXECUTE_JOB w0!1: fields ['storage_maping'] are not part of Batsim 4.2.1's EXECUTE_JOB"
    ("    def schedule(self):\n        while self.queue:\n            job = self.queue.pop(0)\n"
     "            self.execute(job, first_hosts(self.available, job.res), storage_maping={'pfs': 4})\n", 18,
     "job w0!1: execute got storage_maping, not a field of Batsim 4.2.1's EXECUTE_JOB (its optional fields: "
     "mapping, storage_mapping, additional_io_job)"),
])
def test_a_decision_batsim_aborts_on_names_the_users_file_and_line(tmp_path: Path, body: str, line: int,
                                                                   what: str) -> None:
    """Decisions refused by the engine (as Batsim 4.2.1 aborts on them) were one line of exit
    status 2, bad input, without the policy's file and line: the researcher was not sent to
    their own code. The base class now refuses them where the policy makes them (exit status 1,
    the policy's class, callback, file and line), the engine's refusal still behind it."""
    code, err, f = _run_policy(tmp_path, body)
    assert code == 1
    assert err.startswith(f"gridsched: error: policy P failed in schedule ({f}, line {line}): {what}; the run "
                          "stopped at simulated time t=0.000 s with 0 of 2 jobs done"), err


def test_a_call_me_later_given_a_delay_names_the_users_line(tmp_path: Path) -> None:
    """``call_me_later(60)`` at t=100 s, meaning "in 60 s": the time is absolute, and Batsim
    4.2.1 aborts on a call in the past ("You asked to be awaken in the past!"). The engine said
    so with exit status 2 and no file; the base class now names the policy's line and says how
    to ask for a call in 60 s."""
    body = ("    def schedule(self):\n        if self.now == 100:\n            self.call_me_later(60)\n"
            "        while self.queue and self.queue[0].res <= self.nb_available:\n"
            "            job = self.queue.pop(0)\n            self.execute(job, first_hosts(self.available, job.res))\n")
    code, err, f = _run_policy(tmp_path, body, second_at=100)
    assert code == 1
    assert err.startswith(f"gridsched: error: policy P failed in schedule ({f}, line 17): call_me_later(60) at "
                          "t=100.0: the time is in the past (Batsim 4.2.1 aborts: 'You asked to be awaken in the "
                          "past!'); it is the absolute time of the call, s since the start: call_me_later(self.now "
                          "+ delay) for a call in delay s; the run stopped at simulated time t=100.000 s with 1 of "
                          "2 jobs done"), err

    # in the future it runs: job 1 (0-10 s) and job 2 (100-110 s), the call at 160 s
    code, err, f = _run_policy(tmp_path, body.replace("call_me_later(60)", "call_me_later(self.now + 60)"),
                               second_at=100)
    assert code == 0, err
    rows = (tmp_path / "out" / "out_schedule.csv").read_text().splitlines()
    header, values = rows[0].split(","), rows[1].split(",")
    assert float(values[header.index("makespan")]) == 110.0


def test_call_me_later_leaves_times_within_the_printed_clocks_rounding_to_the_engine() -> None:
    """``now`` is Batsim's clock printed with 6 decimals: it may be up to 5e-7 s after the
    clock, and a call between the two is one Batsim takes. Only a time more than 1e-6 s before
    ``now`` is refused by the base class; closer ones are sent (the engine decides, as Batsim)."""
    from schedulers.core.model import PolicyError
    from schedulers.core.policy import Policy

    p = Policy()
    p.now = 10.0
    p.call_me_later(10.0)
    p.call_me_later(10.0 - 5e-7)
    assert [d.at for d in p._decisions] == [10.0, 10.0 - 5e-7]
    with pytest.raises(PolicyError, match=r"^call_me_later\(9\.999998\) at t=10\.0: the time is in the past"):
        p.call_me_later(9.999998)


def test_a_host_past_the_storage_hosts_says_where_they_end() -> None:
    """Storage hosts are numbered after the compute hosts (Batsim 4.2.1 numbers them by name
    after them), and a job may use them beside compute hosts: only an id past them all is
    refused, and the line says up to which id the storage hosts go."""
    from schedulers.core.model import Job, PolicyError
    from schedulers.core.policy import Policy

    p = Policy()
    p.platform.hosts = [object()] * 2            # (only their number is read)
    p.storage_hosts = [object()] * 3             # ids 2, 3, 4
    job = Job.from_json("w0!1", {"id": 1, "subtime": 0, "res": 2, "profile": "d"})
    with pytest.raises(PolicyError, match=r"^job w0!1 cannot start on host 5: it does not exist \(the platform has 2 "
                                          r"compute hosts, ids 0-1, and 3 storage hosts after them \(up to id 4\)\)$"):
        p.execute(job, [0, 5])
    assert not p._decisions


# ------------------------------------------------------------------ traces' odd numbers
_LINE = "{id} {submit} 0 {run} {procs} -1 -1 {procs} 200 -1 1 1 1 -1 1 -1 -1 -1\n"


def test_a_trace_field_of_0_or_below_is_not_reported_as_minus_1(tmp_path: Path) -> None:
    """SWF writes -1 for "unknown"; a job of 0 processors, a submit time of -5 s or a run time of
    -3 s were counted as "processors unknown (field 8 and field 5 = -1)", "submit time unknown
    (field 2 = -1)" and "run time unknown (field 4 = -1)": the report said the trace holds what
    it does not. They are now counted under their own reason; the -1 cases keep theirs."""
    t = tmp_path / "t.swf"
    t.write_text("; MaxProcs: 8\n" + "".join(_LINE.format(id=i, submit=s, run=r, procs=p) for i, s, r, p in [
        (1, 0, 100, 4), (2, 10, 100, 0), (3, 20, 100, -1), (4, -5, 100, 2), (5, -1, 100, 2),
        (6, 30, -3, 2), (7, 40, -1, 2)]))
    code, out, _ = run_main(["convert", t, "-o", tmp_path / "w.json"])
    assert code == 0
    dropped = {line.split(None, 2)[2]: int(line.split()[1]) for line in out.splitlines()
               if line.strip().startswith("dropped")}
    assert dropped == {"no processors (field 8 and field 5 0 or negative, not -1)": 1,
                       "processors unknown (field 8 and field 5 = -1)": 1,
                       "submit time negative (field 2 < 0, not -1)": 1,
                       "submit time unknown (field 2 = -1)": 1,
                       "run time negative (field 4 < 0, not -1)": 1,
                       "run time unknown (field 4 = -1)": 1}, out
    assert [j["id"] for j in json.loads((tmp_path / "w.json").read_text())["jobs"]] == ["1"]


@pytest.mark.parametrize("header, cores, value", [("MaxProcs: inf", 1, "inf"), ("MaxProcs: 1e30", 1, "1e30"),
                                                  ("MaxNodes: 4294967296", 1, "4294967296"),
                                                  ("MaxProcs: 8589934592", 3, "8589934592")])
def test_a_trace_header_of_more_hosts_than_a_workload_may_have_is_refused(tmp_path: Path, header: str, cores: int,
                                                                          value: str) -> None:
    """``MaxProcs: inf`` was an internal error (OverflowError); 1e30 or 2**32 processors wrote a
    workload of that nb_res, which ``gridsched run`` then refused (nb_res at most 2**31 - 1, as
    Batsim 4.2.1 reads it as an int). 8589934592 processors on 3-core hosts: 2863311531 hosts,
    still too many. Now one line naming the file, the header and the way out."""
    t = tmp_path / "t.swf"
    t.write_text(f"; {header}\n" + _LINE.format(id=1, submit=0, run=100, procs=4))
    code, _, err = run_main(["convert", t, "-o", tmp_path / "w.json", "--cores-per-host", cores])
    assert code == 2
    assert one_error_line(err) == (f"gridsched convert: error: {t}: header {header.split(':')[0]}: {value} makes more "
                                   "hosts than a workload may have (nb_res at most 2**31 - 1); give the hosts of the "
                                   "target platform (gridsched convert --nb-hosts N)")
    assert not (tmp_path / "w.json").exists()
    # 8589934588 processors on 4-core hosts: 2147483647 hosts, the largest nb_res
    t.write_text("; MaxProcs: 8589934588\n" + _LINE.format(id=1, submit=0, run=100, procs=4))
    code, _, err = run_main(["convert", t, "-o", tmp_path / "w.json", "--cores-per-host", 4])
    assert code == 0, err
    assert json.loads((tmp_path / "w.json").read_text())["nb_res"] == 2**31 - 1


def test_nb_hosts_beyond_a_workloads_nb_res_is_refused(tmp_path: Path) -> None:
    """``--nb-hosts 4000000000`` wrote a workload (trace or rescaled JSON) ``gridsched run``
    then refused ('nb_res' must be an integer > 0 (at most 2**31 - 1)); and a job of 1e30
    processors in a trace without header made a workload of that nb_res. Both refused in one line."""
    t = tmp_path / "t.swf"
    t.write_text(_LINE.format(id=1, submit=0, run=100, procs=4))
    w = _two_jobs(tmp_path)
    for src in (t, w):
        code, _, err = run_main(["convert", src, "-o", tmp_path / "o.json", "--nb-hosts", 4_000_000_000])
        assert code == 2
        assert one_error_line(err) == ("gridsched convert: error: --nb-hosts must be at most 2**31 - 1 (a workload's "
                                       "largest nb_res), got 4000000000")
    t.write_text(_LINE.format(id=1, submit=0, run=100, procs="1e30"))
    code, _, err = run_main(["convert", t, "-o", tmp_path / "o.json"])
    assert code == 2
    assert one_error_line(err) == (f"gridsched convert: error: {t}, line 1: job '1' needs "
                                   f"{10**30 + 19884624838656} hosts ({10**30 + 19884624838656} processors / 1 cores "
                                   "per host), more than a workload may have (nb_res at most 2**31 - 1); give the "
                                   "hosts of the target platform (gridsched convert --nb-hosts N) to drop or clamp it")
    assert not (tmp_path / "o.json").exists()


# ---------------------------------------------------------------------------- gym and CLI
def test_a_gym_stall_wait_below_the_printed_clocks_resolution_is_refused(tmp_path: Path) -> None:
    """``stall_wait=1e-300`` was accepted; the first stall (one job submitted at 5 s, the agent
    waiting) asked for a call at now + 1e-300 = now, and the episode failed in ``step`` with the
    engine's "CALL_ME_LATER at t=5: it asks to be called at 5.0, not after the current time"
    (Batsim 4.2.1 aborts there). ``now`` is the clock printed with 6 decimals, up to 5e-7 s
    before it: 1e-6 s is the least wait sure to be after it, and is accepted."""
    pytest.importorskip("gymnasium", reason="gymnasium is not installed (pip install 'gridsched[gym]')")
    from schedulers.gym import BatsimEnv

    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": 1, "subtime": 5, "res": 1, "walltime": 10, "profile": "d"}],
                             "profiles": {"d": {"type": "delay", "delay": 1}}}))
    with pytest.raises(ValueError, match=r"^stall_wait must be a finite number of seconds >= 1e-6, got 1e-300 \(the "
                                         r"call it asks is at now \+ stall_wait"):
        BatsimEnv(HETERO, str(w), stall_wait=1e-300)
    env = BatsimEnv(HETERO, str(w), stall_wait=1e-6)
    try:
        env.reset()
        times = []
        for _ in range(3):   # waits: the stall's calls come 1e-5 s apart (Batsim's waiter sleeps at least that)
            _, _, done, _, info = env.step(env.layout.wait)
            times.append(info["time"])
        assert not done and times == [5.0, 5.00001, 5.00002]
    finally:
        env.close()


def test_an_options_file_that_is_a_folder_is_named_with_its_article(tmp_path: Path) -> None:
    """"is a folder, not a options file": the article follows the word."""
    code, _, err = run_main(["run", "--policy", "easy", "-p", HETERO, "-w", _two_jobs(tmp_path), "-o",
                             tmp_path / "out", "--policy-options", f"@{tmp_path}"])
    assert code == 2
    assert one_error_line(err) == f"gridsched: error: --policy-options: {tmp_path}: is a folder, not an options file"


# ---------------------------------------------------------------------------- pybatsim plugin
def test_pybatsim_options_beside_policy_options_are_refused_not_ignored() -> None:
    """``pybatsim gridsched -o '{"policy": "easy", "policy_options": {}, "idle_timeout": 60}'``
    ran EASY without its idle_timeout: the keys beside ``policy_options`` were dropped without a
    word. And ``"policy": null`` said "unknown policy 'None'". Both are one line now; either
    place alone still works."""
    from schedulers.batsim.pybatsim_glue import pybatsim_available

    if not pybatsim_available():
        pytest.skip("pybatsim is not importable (pip install --no-deps pybatsim==4.0.0a0 docopt sortedcontainers)")
    from schedulers.batsim.pybatsim_glue import GridschedPyBatsim

    with pytest.raises(TypeError, match=r"^scheduler option 'idle_timeout' is given beside 'policy_options', which "
                                        r"holds the policy's options: give them all inside 'policy_options', or all "
                                        r"beside 'policy' without it$"):
        GridschedPyBatsim({"policy": "easy", "policy_options": {}, "idle_timeout": 60})
    with pytest.raises(TypeError, match=r"^scheduler option 'policy' must be a policy name \(a string such as \"easy\" "
                                        r"or \"FILE\.py:Class\"\), got None$"):
        GridschedPyBatsim({"policy": None})
    for options in ({"policy": "easy", "policy_options": {"idle_timeout": 60}}, {"policy": "easy", "idle_timeout": 60}):
        assert GridschedPyBatsim(options).policy.options == {"idle_timeout": 60}


# ---------------------------------------------------------------------------- campaign store
def test_a_cut_run_record_says_how_to_run_that_run_again_and_the_others_are_kept(tmp_path: Path) -> None:
    """A run record cut short (a copy of the folder interrupted, a disk error: gridsched itself
    writes records whole) stopped ``campaign run``, ``status`` and ``collect`` with the file's
    JSON error and no way on: the only way out, not said, is to move the file away. The line
    now says so; once it is moved, ``campaign run`` runs that one run again and keeps the
    others (their files untouched)."""
    toml = tmp_path / "c.toml"
    toml.write_text(f'seeds = 1\n[[policy]]\nname = "fcfs"\n[[policy]]\nname = "easy"\n[[scenario]]\nname = "f"\n'
                    f'platform = "{HETERO}"\nworkloads = ["{_two_jobs(tmp_path)}"]\n')
    out = tmp_path / "out"
    assert run_main(["campaign", "run", toml, "--out", out, "--serial", "--no-progress"])[0] == 0
    cut, kept = sorted((out / "results").glob("*.json"))
    whole, kept_text = cut.read_text(), kept.read_text()
    cut.write_text(whole[:100])
    hint = "; move it out of results/ (`gridsched campaign run` runs again a run whose record is missing)"
    for command in (["campaign", "run", toml, "--out", out, "--serial", "--no-progress"], ["campaign", "status", out],
                    ["campaign", "collect", out]):
        code, _, err = run_main(command)
        assert code == 2
        line = one_error_line(err)
        assert f": {cut}: malformed JSON at line " in line and line.endswith(hint), line
    cut.rename(tmp_path / "cut.json")
    code, stdout, _ = run_main(["campaign", "run", toml, "--out", out, "--serial", "--no-progress"])
    assert code == 0 and "ran 1 (0 failed), 1 already present" in stdout, stdout
    assert kept.read_text() == kept_text
    assert json.loads(cut.read_text())["status"] == "done"


# ---------------------------------------------------------------------------- scenario generators
@pytest.mark.parametrize("args, message", [
    # wrote a 100-million-host platform for minutes, which gridsched run then refused (250,000 at most)
    (["--hosts", "100000000"], "platform 'synthetic': hosts 100,000,000 is more than a platform may have (250,000: "
                               "schedulers.engine.platform.MAX_HOSTS)"),
    # "internal error: MemoryError: Unable to allocate 745. GiB for an array"
    (["--jobs", "100000000000"], "generator 'synthetic': jobs 100,000,000,000 is more than a generator builds "
                                 "(10,000,000 jobs: the workload is built in memory, about 0.8 GB a million jobs)"),
    # "parameter 'speed' must be float, got nan": nan is a float
    (["--speed", "nan"], "generator 'synthetic': parameter 'speed' must be a finite number, got nan"),
    # ran for minutes (4 users' tasks), then out of memory
    (["hosep", "--tasks-per-user", "100000000000"],
     "generator 'hosep': tasks_per_user 100,000,000,000 makes 400,000,000,000 jobs, more than a generator builds "
     "(10,000,000 jobs: the workload is built in memory, about 0.8 GB a million jobs)"),
    (["ehosep", "--tasks-per-user", "100000000000"],
     "generator 'ehosep': tasks_per_user 100,000,000,000 makes 400,000,000,000 jobs, more than a generator builds "
     "(10,000,000 jobs: the workload is built in memory, about 0.8 GB a million jobs)"),
    (["green-nantes", "--job-count", "100000000000"],
     "generator 'green-nantes': job_count 100,000,000,000 is more than a generator builds (10,000,000 jobs: the "
     "workload is built in memory, about 0.8 GB a million jobs)"),
    # 50 % jobs alternating 10**8 periods: composed profiles gridsched run refused ("profile 'p0' expands
    # to 200,000,000 stages (composed profiles with 'repeat'); at most 1,000,000")
    (["green-nantes", "--periods", "100000000", "--cpu-load", "50"],
     "generator 'green-nantes': periods 100,000,000 makes profiles of 200,000,000 stages or more, beyond the "
     "1,000,000 a job's profile may expand to (at most 499,999 periods)"),
])
def test_generator_sizes_beyond_what_runs_are_refused_in_words(tmp_path: Path, args: list, message: str) -> None:
    if args[0].startswith("--"):
        args = ["synthetic", *args]
    code, _, err = run_main(["scenario", args[0], "-o", tmp_path / "sc", *args[1:]])
    assert code == 2
    assert one_error_line(err) == f"gridsched: error: {message}"
    assert not (tmp_path / "sc").exists()


# ---------------------------------------------------------------------------- a policy named by its file
def test_a_policy_named_by_its_file_alone_says_which_class_to_add(tmp_path: Path) -> None:
    """``--policy mine.py`` (the class forgotten) said "unknown policy 'mine.py'; known policies:
    buc, buc-easy, ..." as for a misspelt built-in name. It now says to add the class and names
    the file's classes (read, not run: a file that does not parse gets no list)."""
    f = tmp_path / "mine.py"
    f.write_text("from schedulers.fcfs import FCFS\n\n\nclass Mine(FCFS):\n    pass\n\n\nclass Other(FCFS):\n    pass\n")
    args = ["-p", HETERO, "-w", _two_jobs(tmp_path), "-o", tmp_path / "out", "--no-progress"]
    code, _, err = run_main(["run", "--policy", f, *args])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: policy '{f}' names a file: give its class too, FILE.py:Class: "
                                   f"{f}:Mine (its classes: Mine, Other)")
    f.write_text("class Mine(\n")
    assert one_error_line(run_main(["run", "--policy", f, *args])[2]) == (
        f"gridsched: error: policy '{f}' names a file: give its class too, FILE.py:Class")
    code, _, err = run_main(["run", "--policy", tmp_path / "absent.py", *args])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: policy '{tmp_path / 'absent.py'}': no such Python file (a policy "
                                   "of your own is named FILE.py:Class)")


# ---------------------------------------------------------------------------- policy options
@pytest.mark.parametrize("policy", ["osep", "hosep", "ehosep", "own-share"])
def test_an_owner_share_period_too_short_to_be_after_now_is_refused(tmp_path: Path, policy: str) -> None:
    """``period`` 1e-300 s: OSEP's next round, ``(floor(now / period) + 1) x period``, is the
    current time in doubles; at t=10 s the run stopped with the engine's "CALL_ME_LATER at t=10:
    it asks to be called at 10.0, not after the current time" (Batsim 4.2.1 aborts there). The
    option now takes 0 (a round after every message) or at least 1 ms, checked when the policy
    is made, as its other options are."""
    w = tmp_path / "u.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": 1, "subtime": 0, "res": 2, "walltime": 100, "profile": "p", "user": "user1"},
        {"id": 2, "subtime": 1, "res": 3, "walltime": 100, "profile": "p", "user": "user2"},
        {"id": 3, "subtime": 2, "res": 4, "walltime": 100, "profile": "p", "user": "user1"}],
        "profiles": {"p": {"type": "delay", "delay": 10}}}))
    args = ["run", "--policy", policy, "-p", HETERO, "-w", w, "-E", "--no-progress", "--policy-options"]
    code, _, err = run_main([*args, '{"period": 1e-300}', "-o", tmp_path / "a"])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: policy {policy!r}: option 'period' must be 0 (a round after "
                                   "every message) or at least 0.001 s, got 1e-300: a shorter one puts the next round "
                                   "at the current time, a call Batsim 4.2.1 aborts on")
    for period in ("0", "0.001"):
        code, _, err = run_main([*args, f'{{"period": {period}}}', "-o", tmp_path / period])
        assert code == 0, err


def test_a_seed_beyond_64_bits_runs_and_is_collected_exactly(tmp_path: Path) -> None:
    """TOML and JSON take integers of any size, and NumPy's seed sequence a seed of 2**64: the
    runs of ``seeds = [18446744073709551616, 3]`` were done, then ``collect`` and ``report``
    stopped with "internal error: OverflowError: Python int too large to convert to C long"
    (the seed column made 64-bit): the finished results could not be read. The column now
    keeps such integers exact."""
    toml = tmp_path / "c.toml"
    toml.write_text('seeds = [18446744073709551616, 3]\n[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "g"\n'
                    'generator = "synthetic"\nparams = { max_res = 4, hosts = 4, jobs = 5 }\n')
    out = tmp_path / "out"
    assert run_main(["campaign", "run", toml, "--out", out, "--serial", "--no-progress"])[0] == 0
    for command in ("collect", "report"):
        code, _, err = run_main(["campaign", command, out])
        assert code == 0, err
    rows = (out / "runs.csv").read_text().splitlines()
    seed = rows[0].split(",").index("seed")
    assert sorted(int(r.split(",")[seed]) for r in rows[1:]) == [3, 2**64]


# ---------------------------------------------------------------------------- workloads' huge numbers
@pytest.mark.parametrize("res", [2**63, 10**20])
def test_a_res_beyond_64_bits_is_refused_not_an_internal_error(tmp_path: Path, res: int) -> None:
    """``"res": 9223372036854775808`` (or 1e20 written as an integer) with ``--fit keep`` (the
    jobs larger than the platform run, for the policy to reject, as Batsim runs them) was
    "internal error: OverflowError: int too big to convert": the jobs' res are kept as 64-bit
    integers. One line now, naming the file, the job and the bound; 2**63 - 1 still runs (FCFS
    rejects the job)."""
    w = tmp_path / "w.json"
    args = ["run", "--policy", "fcfs", "-p", HETERO, "-w", w, "--fit", "keep", "--no-progress"]
    for value, out in ((res, "a"), (2**63 - 1, "b")):
        w.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": value, "profile": "d"}],
                                 "profiles": {"d": {"type": "delay", "delay": 1}}}))
        code, _, err = run_main([*args, "-o", tmp_path / out])
        if value == res:
            assert code == 2
            assert one_error_line(err) == (f"gridsched: error: {w}: job '1': 'res' {res} is more hosts than a job may "
                                           "ask for (at most 2**63 - 1)")
        else:
            assert code == 0, err
            assert json.loads((tmp_path / out / "summary.json").read_text())["rejected"] == 1


_BIG = 10**400   # a JSON integer no double holds (RapidJSON, Batsim's parser, refuses it)


@pytest.mark.parametrize("where, field", [("profile", "delay"), ("profile", "cpu"), ("job", "walltime"),
                                          ("job", "subtime")])
def test_an_integer_no_double_holds_in_a_workload_is_refused_in_one_line(tmp_path: Path, where: str,
                                                                         field: str) -> None:
    """A 401-digit integer (JSON has no bound on integers; 1e400 written as a float was already
    refused) as a delay, a cpu amount, a walltime or a subtime: "internal error: OverflowError:
    int too large to convert to float" when the engine checked it was finite. It is now the
    field's own line, as any number out of its range."""
    job = {"id": 1, "subtime": 0, "res": 1, "walltime": 100, "profile": "p"}
    profile = {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0} if field == "cpu" else {"type": "delay", "delay": 1}
    (job if where == "job" else profile)[field] = _BIG
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [job], "profiles": {"p": profile}}))
    code, _, err = run_main(["run", "--policy", "fcfs", "-p", HETERO, "-w", w, "-o", tmp_path / "out", "--no-progress"])
    assert code == 2
    line = one_error_line(err)
    who = "job '1'" if where == "job" else "profile 'p'"
    assert line.startswith(f"gridsched: error: {w}: {who}: '{field}' must be a number") and line.endswith(f"got {_BIG}")


def test_an_integer_no_double_holds_in_options_and_events_is_refused_as_1e400_is(tmp_path: Path) -> None:
    """The same integer as a policy option (inline, in a file, or in a campaign's TOML, whose
    integers have no bound either) or as an event's timestamp: "policy HEFT failed in __init__
    (.../heft.py, line 113): OverflowError" (status 1, gridsched's own line named as the
    user's), and an internal error for the event. JSON inputs refuse it as they refuse 1e400."""
    args = ["run", "-p", HETERO, "-w", _two_jobs(tmp_path), "--no-progress"]
    code, _, err = run_main([*args, "--policy", "heft", "-o", tmp_path / "a", "--policy-options",
                             json.dumps({"idle_timeout": _BIG})])
    assert code == 2
    assert one_error_line(err) == ("gridsched: error: --policy-options: not valid JSON: number "
                                   f"{str(_BIG)[:30]}... (401 digits) is too large for a double")
    events = tmp_path / "ev.txt"
    events.write_text(json.dumps({"timestamp": _BIG, "type": "machine_unavailable", "resources": "0"}) + "\n")
    code, _, err = run_main([*args, "--policy", "fcfs", "-o", tmp_path / "b", "--events", events])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: {events}, line 1: not valid JSON: number {str(_BIG)[:30]}... "
                                   "(401 digits) is too large for a double")
    toml = tmp_path / "c.toml"
    toml.write_text(f'[[policy]]\nname = "heft"\noptions = {{ idle_timeout = {_BIG} }}\n[[scenario]]\nname = "g"\n'
                    'generator = "synthetic"\nparams = { max_res = 4, hosts = 4, jobs = 5, speed = 1 }\n')
    code, _, err = run_main(["campaign", "run", toml, "--out", tmp_path / "out", "--serial", "--no-progress"])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: {toml}: run policy=heft scenario=g: policy 'heft': option "
                                   f"'idle_timeout' must be a number >= 0, got {_BIG}")
    toml.write_text(f'[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "g"\ngenerator = "synthetic"\n'
                    f'params = {{ speed = {_BIG} }}\n')
    code, _, err = run_main(["campaign", "run", toml, "--out", tmp_path / "out", "--serial", "--no-progress"])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: {toml}: scenario[0].params: generator 'synthetic': parameter "
                                   f"'speed' must be a finite number, got {_BIG}")


def test_an_init_without_the_options_parameter_names_the_users_def_line(tmp_path: Path) -> None:
    """``def __init__(self):`` (the options parameter left out): "policy P failed in __init__
    (.../schedulers/registry.py, line 309): TypeError: P.__init__() takes 1 positional argument
    but 2 were given": gridsched's file and line, as the user's. The line is now the user's
    ``def``, with the signature a policy's constructor has."""
    f = tmp_path / "mine.py"
    f.write_text("from schedulers.fcfs import FCFS\n\n\nclass P(FCFS):\n    def __init__(self):\n"
                 "        super().__init__()\n")
    code, _, err = run_main(["run", "--policy", f"{f}:P", "-p", HETERO, "-w", _two_jobs(tmp_path), "-o",
                             tmp_path / "out", "--no-progress"])
    assert code == 1
    assert one_error_line(err) == (f"gridsched: error: policy P failed in __init__ ({f}, line 5): TypeError: "
                                   "P.__init__() takes 1 positional argument but 2 were given; a policy's __init__ "
                                   "takes its options: def __init__(self, options=None), then "
                                   "super().__init__(options)")
    # a TypeError of its own code keeps its line, without the advice
    f.write_text("from schedulers.fcfs import FCFS\n\n\nclass P(FCFS):\n    def __init__(self, options=None):\n"
                 "        super().__init__(options)\n        len(5)\n")
    code, _, err = run_main(["run", "--policy", f"{f}:P", "-p", HETERO, "-w", _two_jobs(tmp_path), "-o",
                             tmp_path / "out2", "--no-progress"])
    assert code == 1
    assert one_error_line(err) == (f"gridsched: error: policy P failed in __init__ ({f}, line 7): TypeError: "
                                   "object of type 'int' has no len()")


@pytest.mark.parametrize("hook, signature, line_of_call", [
    ("on_job_submitted(self)", "def on_job_submitted(self, job)", "takes 1 positional argument but 2 were given"),
    ("schedule(self, now)", "def schedule(self)", "missing 1 required positional argument: 'now'"),
])
def test_a_hook_with_another_signature_names_the_users_def_line(tmp_path: Path, hook: str, signature: str,
                                                                line_of_call: str) -> None:
    """``def on_job_submitted(self):`` or ``def schedule(self, now):``: "policy P failed
    (.../schedulers/core/policy.py, line 484): TypeError: P.on_job_submitted() takes 1
    positional argument but 2 were given", without the callback, gridsched's line given as the
    policy's. Now the hook, the user's def line and how the base class calls it."""
    f = tmp_path / "mine.py"
    f.write_text(f"from schedulers.fcfs import FCFS\n\n\nclass P(FCFS):\n    def {hook}:\n        pass\n")
    code, _, err = run_main(["run", "--policy", f"{f}:P", "-p", HETERO, "-w", _two_jobs(tmp_path), "-o",
                             tmp_path / "out", "--no-progress"])
    name = hook.split("(")[0]
    assert code == 1
    assert one_error_line(err).startswith(
        f"gridsched: error: policy P failed in {name} ({f}, line 5): TypeError: P.{name}() {line_of_call}; the base "
        f"class calls it as {signature}; the run stopped at simulated time t=0.000 s"), err


def test_a_batsim_that_logged_nothing_says_its_log_is_empty(tmp_path: Path) -> None:
    """``--batsim /bin/true`` (a wrong executable that exits at once, status 0) ended its line
    with "Batsim log (out/out_batsim.log):" and nothing after the colon. It now says the log is
    empty."""
    import shutil

    true = shutil.which("true")
    if true is None:
        pytest.skip("no `true` executable on PATH")
    out = tmp_path / "out"
    code, _, err = run_main(["run", "--policy", "fcfs", "-p", HETERO, "-w", _two_jobs(tmp_path), "-o", out,
                             "--no-progress", "--engine", "batsim", "--batsim", true, "--batsim-connect-timeout", "20"])
    assert code == 1
    line = one_error_line(err)
    assert line.startswith("gridsched: error: Batsim exited before the simulation ended (command: ")
    assert line.endswith(f"); Batsim's log ({out}/out_batsim.log) is empty"), line


# ---------------------------------------------------------------------------- outputs under a file
def test_an_output_under_a_file_names_the_file(tmp_path: Path) -> None:
    """An output path whose parent is a file: "cannot prepare the output folder: Not a
    directory" (run), "f: File exists" (convert), "f/sc: Not a directory" (scenario, campaign
    run), and gridsched engine's ``-e f/x_`` said the folder "does not exist". Each now names the
    file in the way."""
    f = tmp_path / "f"
    f.write_text("not a folder\n")
    w = _two_jobs(tmp_path)
    t = tmp_path / "t.swf"
    t.write_text("1 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n")
    toml = tmp_path / "c.toml"
    toml.write_text('[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "g"\ngenerator = "synthetic"\n')
    cases = [
        (["run", "--policy", "fcfs", "-p", HETERO, "-w", w, "-o", f / "out", "--no-progress"],
         f"gridsched: error: {f / 'out'}: cannot make this folder: {f} is a file, not a folder"),
        (["convert", t, "-o", f / "w.json"], f"gridsched convert: error: {f}: is a file, where a folder is needed"),
        (["convert", t, "-o", f / "sub" / "w.json"],
         f"gridsched convert: error: {f / 'sub'}: cannot make this folder: {f} is a file, not a folder"),
        (["scenario", "synthetic", "-o", f / "sc"],
         f"gridsched: error: {f / 'sc'}: cannot make this folder: {f} is a file, not a folder"),
        (["campaign", "run", toml, "--out", f / "c", "--serial", "--no-progress"],
         f"gridsched: error: {f / 'c'}: cannot make this folder: {f} is a file, not a folder"),
        (["engine", "-p", HETERO, "-w", w, "-e", f"{f}/x_"],
         f"gridsched: error: -e {f}/x_: {f} is a file, not a folder; real Batsim 4.2.1 aborts: give a prefix in a "
         "folder"),
    ]
    for argv, line in cases:
        code, _, err = run_main(argv)
        assert code == 2, (argv, err)
        assert one_error_line(err) == line
    assert f.read_text() == "not a folder\n"


def test_a_trace_given_to_the_gym_environment_says_to_convert_it(tmp_path: Path) -> None:
    """``BatsimEnv(platform, "trace.swf")`` failed in its constructor with "trace.swf: malformed
    JSON at line 1, column 1: Expecting value" (the environment reads Batsim JSON workloads, as
    campaigns do): it now says what the file is and how to convert it, in the constructor and
    in ``reset(options={"workload": ...})``."""
    pytest.importorskip("gymnasium", reason="gymnasium is not installed (pip install 'gridsched[gym]')")
    from schedulers.gym import BatsimEnv

    t = tmp_path / "t.swf"
    t.write_text("1 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n")
    words = (f"workload '{t}' is an SWF/GWF trace, and the environment reads Batsim JSON workloads: convert it first "
             f"(gridsched convert {t} -o NEW.json; --nb-hosts N for the platform's hosts)")
    with pytest.raises(ValueError) as err:
        BatsimEnv(HETERO, str(t))
    assert str(err.value) == words
    env = BatsimEnv(HETERO, str(_two_jobs(tmp_path)))
    try:
        with pytest.raises(ValueError) as err:
            env.reset(options={"workload": t})
        assert str(err.value) == words
    finally:
        env.close()


def test_a_pstate_a_host_does_not_have_names_the_users_line(tmp_path: Path) -> None:
    """``set_pstate([0], 7)`` with energy on hetero4.xml (one speed a host): the engine's
    "SET_RESOURCE_STATE at t=0: host 0 (a1) has no pstate 7", status 2, without the policy's
    line. The base class knows the hosts' speeds in the embedded engine (and behind real Batsim
    with serve --platform): it refuses it at the user's line."""
    code, err, f = _run_policy(tmp_path, "    def schedule(self):\n        self.set_pstate([0], 7)\n", energy=True)
    assert code == 1
    assert err.startswith(f"gridsched: error: policy P failed in schedule ({f}, line 16): set_pstate: host 0 (a1) has "
                          "no pstate 7 (its pstates: 0-0; Batsim 4.2.1 aborts); the run stopped"), err


@pytest.mark.parametrize("hook, value, words", [
    ("hosts_wanted(self)", "'x'", "it returned 'x', not a number of hosts (an integer >= 0)"),
    # -5 kept every sleeping host asleep: a deadlock at t=841 s, "the policy never woke them"
    ("hosts_wanted(self)", "-5", "it returned -5, not a number of hosts (an integer >= 0)"),
    ("hosts_to_wake(self, asleep, n)", "3.5", "it returned 3.5, not a bit mask of hosts (an int: bit i set = host i)"),
])
def test_an_idle_shutdown_hook_answering_what_it_cannot_names_the_users_def(tmp_path: Path, hook: str, value: str,
                                                                             words: str) -> None:
    """The idle-host shutdown (``idle_timeout``) asks the policy ``hosts_wanted()`` and
    ``hosts_to_wake(asleep, n)``. A string or a float answer was "policy P failed
    (.../schedulers/core/shutdown.py, line 216): TypeError: '<=' not supported between instances
    of 'str' and 'int'": gridsched's line as the policy's, no hook named. The hook's own def line
    and what it returned are named now."""
    nantes = Path(__file__).resolve().parents[1] / "platforms" / "g5k_nantes_econome.xml"
    demo = Path(__file__).resolve().parents[1] / "workloads" / "demo_nantes.json"
    f = tmp_path / "mine.py"
    f.write_text(f"from schedulers.fcfs import FCFS\n\n\nclass P(FCFS):\n    def {hook}:\n        return {value}\n")
    code, _, err = run_main(["run", "--policy", f"{f}:P", "-p", nantes, "-w", demo, "--max-jobs", "8", "-E",
                             "-o", tmp_path / "out", "--no-progress", "--policy-options", '{"idle_timeout": 10}'])
    assert code == 1
    assert one_error_line(err).startswith(f"gridsched: error: policy P failed in {hook.split('(')[0]} ({f}, line 5): "
                                          f"{words}; the run stopped at simulated time t="), err


@pytest.mark.parametrize("hook, body, words", [
    # "policy P failed in schedule (.../schedulers/easy.py, line 493): TypeError: bad operand type for unary -: 'list'"
    ("select_hosts(self, candidates, job)", "return [0]",
     "select_hosts ({f}, line 5): it returned [0], not a bit mask of hosts (an int: bit i set = host i)"),
    # host 40 of a 4-host platform: the base class's refusal, at a line of easy.py
    ("select_hosts(self, candidates, job)", "return 1 << 40",
     "select_hosts ({f}, line 5): it returned hosts 40 for job w0!1 of res 2, where 2 of 0-3 were asked for"),
    # NaN compares false with every key: the queue had no order, and the run went on without a word
    ("queue_key(self, job)", "return float('nan')",
     "queue_key ({f}, line 5): it returned nan for job w0!1, which no key is before or after: the queue would "
     "have no order"),
])
def test_an_easy_variants_hook_answering_what_it_cannot_names_the_users_def(tmp_path: Path, hook: str, body: str,
                                                                            words: str) -> None:
    """The EASY hooks a researcher overrides (the tutorial's way to write a variant): a
    ``select_hosts`` that answers a list or hosts not among the candidates failed at a line of
    gridsched's easy.py, given as the user's; a ``queue_key`` of NaN ran with the queue in no
    order. Each is now the hook's error at the user's def line."""
    f = tmp_path / "mine.py"
    f.write_text(f"from schedulers.easy import EASY\n\n\nclass P(EASY):\n    def {hook}:\n        {body}\n")
    code, _, err = run_main(["run", "--policy", f"{f}:P", "-p", HETERO, "-w", _two_jobs(tmp_path), "-o",
                             tmp_path / "out", "--no-progress"])
    assert code == 1
    assert one_error_line(err).startswith(f"gridsched: error: policy P failed in {words.format(f=f)}; the run "
                                          "stopped at simulated time t=0.000 s"), err
