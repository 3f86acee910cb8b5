"""Bad input and misbehaving policies, third round: inputs that were accepted and gave a wrong
result without a word, and messages that named the wrong file or repeated themselves.

Each test runs the command as a user would (``schedulers.cli.main``) or the Python API, and checks
the exit status, the one error line (its exact words, the file and item named) or the correct
number, worked out by hand in the test.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers_cli import one_error_line, run_main

from helpers_policy import line_of
from schedulers.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIX = Path(__file__).parent / "fixtures"
HETERO = FIX / "hetero4.xml"   # 4 hosts a1 a2 b1 b2, 4 cores each
DELAY = {"d": {"type": "delay", "delay": 3}}






def workload(path: Path, jobs: list | None = None, profiles: dict | None = None) -> Path:
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs if jobs is not None else
                                [{"id": i, "subtime": i, "res": 1, "profile": "d"} for i in range(1, 3)],
                                "profiles": DELAY if profiles is None else profiles}))
    return path


def run_args(tmp: Path, w: Path, *more: object, policy: str = "fcfs", platform: Path = HETERO,
             out: str = "out") -> list:
    return ["run", "--policy", policy, "-p", platform, "-w", w, "-o", tmp / out, "--no-progress", *more]


# ------------------------------------------------------------- campaign axes that collide
SYNTH = '[[scenario]]\nname = "g"\ngenerator = "synthetic"\nparams = { jobs = 10, hosts = 4 }\n'


@pytest.mark.parametrize("body, words", [
    # "load" and "scenario.load" both set the generator's load: the runs labelled load = 0.5 and
    # 0.9 all ran with 0.1 or 0.2
    ('[[policy]]\nname = "fcfs"\n' + SYNTH + '[axes]\nload = [0.5, 0.9]\n"scenario.load" = [0.1, 0.2]\n',
     "axes.scenario.load: sets the same scenario parameter 'load' as axis 'load': give it in one place"),
    # an engine option in an axis and in a zip group under its two spellings
    ('[[policy]]\nname = "fcfs"\n' + SYNTH + '[axes]\nenergy = [true, false]\n[zip]\n"engine.energy" = [true, false]\n'
     'load = [0.5, 0.9]\n', "zip.engine.energy: sets the same engine option 'energy' as axis 'energy': give it in one "
                            "place"),
    # one key of a mapping option that the [[policy]] table already sets: the table's value was dropped
    ('[[policy]]\nname = "ehosep"\noptions = { limits = { user1 = 80 } }\n' + SYNTH
     + '[axes]\n"policy.limits.user1" = [100, 150]\n',
     "axes.policy.limits.user1: also set in policy[0].options: give it in one place"),
])
def test_two_axes_or_an_axis_and_a_table_setting_one_value_are_refused(tmp_path: Path, body: str,
                                                                        words: str) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text("seeds = 1\n" + body)
    code, _, err = run_main(["campaign", "run", toml, "--out", tmp_path / "cout", "--serial", "--no-progress"])
    assert code == 2
    assert one_error_line(err) == f"gridsched: error: {toml}: {words}"
    assert not (tmp_path / "cout").exists()


def test_two_keys_of_one_mapping_option_are_two_axes() -> None:
    from schedulers.campaign.spec import parse_campaign

    data = tomllib.loads('seeds = 1\n[[policy]]\nname = "ehosep"\n' + SYNTH
                         + '[axes]\n"policy.limits.user1" = [100, 150]\n"policy.limits.user2" = [90, 120]\n')
    runs = parse_campaign(data, ROOT / "c.toml").runs()
    assert sorted((r.policy_options["limits"]["user1"], r.policy_options["limits"]["user2"]) for r in runs) == [
        (100, 90), (100, 120), (150, 90), (150, 120)]


# ------------------------------------------------------------------ policies that misbehave
POLICIES = '''from schedulers.core.policy import Policy


def waiting(policy):
    return [j for j in policy.jobs.values() if j.state.name == "SUBMITTED"]


class OnTrue(Policy):
    def schedule(self):
        for job in waiting(self):
            self.execute(job, True)


class OnString(Policy):
    def schedule(self):
        for job in waiting(self):
            self.execute(job, "1")


class OnHalf(Policy):
    def schedule(self):
        for job in waiting(self):
            self.execute(job, [0.5])


class PstateHalf(Policy):
    def schedule(self):
        self.set_pstate([0], 1.5)
        for job in waiting(self):
            self.reject(job)


class EmitsText(Policy):
    def schedule(self):
        self.emit("EXECUTE_JOB w0!1")


class NoBase(Policy):
    def __init__(self, options=None):
        self.queue = []


class Registers(Policy):
    def schedule(self):
        self.register_job("w0", "x", 1, "d")
'''


@pytest.mark.parametrize("cls, at, words", [
    # True is the int 1 to Python: the job used to start on host 1 (a2); "1" on hosts of its characters
    ("OnTrue", "self.execute(job, True)", "host ids must be a ProcSet, integers >= 0 or one integer >= 0, got True"),
    ("OnString", 'self.execute(job, "1")', "host ids must be a ProcSet, integers >= 0 or one integer >= 0, got '1'"),
    ("OnHalf", "self.execute(job, [0.5])", "host ids must be integers >= 0, got 0.5 in [0.5]"),
    # pstate 1.5 used to be sent as pstate "1"
    ("PstateHalf", "self.set_pstate([0], 1.5)", "set_pstate: the pstate must be an integer index >= 0, got 1.5"),
    # it used to fail in gridsched's engine code (ports.py), not at the policy's line
    ("EmitsText", "self.emit(", "emit: expects a decision of schedulers.core.events (ExecuteJob, RejectJob, "
                                "CallMeLater...), got str 'EXECUTE_JOB w0!1'"),
])
def test_a_decision_of_the_wrong_type_is_the_policys_error_at_its_line(tmp_path: Path, user: Path, cls: str,
                                                                        at: str, words: str) -> None:
    w = workload(tmp_path / "w.json", [{"id": i, "subtime": 0, "res": 1, "profile": "d"} for i in range(1, 3)])
    code, _, err = run_main(run_args(tmp_path, w, "-E", policy=f"{user}:{cls}"))
    assert code == 1
    assert one_error_line(err) == (
        f"gridsched: error: policy {cls} failed in schedule ({user}, line {line_of(user, at)}): {words}; the run "
        "stopped at simulated time t=0.000 s with 0 of 2 jobs done; kept in " f"{tmp_path / 'out'}/: "
        "out_jobs.partial.csv (the 0 jobs done, in out_jobs.csv's format); no summary and no other output file "
        "(the run did not end)")


def test_a_policy_whose_init_skips_the_base_class_is_named_at_its_init(tmp_path: Path, user: Path) -> None:
    # it used to fail at the first event inside schedulers/core/policy.py
    w = workload(tmp_path / "w.json")
    code, _, err = run_main(run_args(tmp_path, w, policy=f"{user}:NoBase"))
    assert code == 1
    assert one_error_line(err) == (
        f"gridsched: error: policy NoBase failed in __init__ ({user}, line {line_of(user, 'def __init__')}): it does "
        "not call super().__init__(options), which sets up the jobs, hosts and decisions of the base class Policy")
    assert not (tmp_path / "out").exists()


def test_registering_a_job_without_dynamic_jobs_says_how_once(tmp_path: Path, user: Path) -> None:
    # the time was given twice ("at t=2e-10 at t=2e-10") and the option named was gridsched engine's only;
    # the job is registered at the first event, at t=0 (SUBMIT of the workload's job at 0): the
    # engine's clock is two 1e-10-s messages of SimGrid's loopback later, which the line does not show
    # (the base class refuses it now, SIMULATION_BEGINS having said dynamic-jobs-enabled: false, at
    # the policy's line; the engine's refusal, "REGISTER_JOB 'w0!x' at t=0: ...", is behind it)
    w = workload(tmp_path / "w.json")
    code, _, err = run_main(run_args(tmp_path, w, policy=f"{user}:Registers"))
    assert code == 1
    assert one_error_line(err).startswith(
        f"gridsched: error: policy Registers failed in schedule ({user}, line 45): register_job w0!x: dynamic job "
        "registration is disabled (Batsim aborts); enable it with Batsim's --enable-dynamic-jobs (a policy declares "
        "requires = {\"dynamic-jobs\"}, which gridsched run and campaigns honour); the run stopped")


# ------------------------------------------------------------------------- the Python API
def test_simulate_refuses_a_class_a_single_workload_and_a_policy_object_run_twice(tmp_path: Path) -> None:
    from schedulers.core.model import PolicyError
    from schedulers.engine import simulate
    from schedulers.fcfs import FCFS

    w = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}], "profiles": DELAY}
    with pytest.raises(TypeError, match=r"^the scheduler must be a policy object, got the class FCFS: pass FCFS\(\) "
                                        r"\(or get_policy\(name, options\)\)$"):
        simulate(HETERO, [w], FCFS)
    # one workload not in a list was read as the list of its keys ("nb_res: no such workload") or of
    # its characters ("/: is a folder")
    for one, kind in ((w, "dict"), (str(tmp_path / "w.json"), "str")):
        with pytest.raises(TypeError, match=rf"^workloads must be a list of workload files or dicts, got a {kind} "
                                            r"\(one workload: \[it\]\)$"):
            simulate(HETERO, one, FCFS())
    policy = FCFS()
    assert simulate(HETERO, [w], policy).makespan == pytest.approx(3.0, abs=1e-6)   # (+ message delays)
    # a second run on the same object used to end in a deadlock (its first run had ended)
    with pytest.raises(PolicyError, match=r"^policy FCFS: this object already ran a simulation \(it holds that "
                                          r"run's jobs and hosts\); make a new policy object for each run$"):
        simulate(HETERO, [w], policy)
    assert simulate(HETERO, [w], FCFS()).makespan == pytest.approx(3.0, abs=1e-6)


def test_a_policy_object_is_checked_once_on_each_path(tmp_path: Path, monkeypatch) -> None:
    # check_runnable ran twice per `gridsched run` and campaign run (get_policy, then the run's port)
    # and per simulate(policy) (simulate, then its port); each path a user reaches alone still checks
    import schedulers.core.failure as failure
    from schedulers.engine import InProcessPort, simulate
    from schedulers.fcfs import FCFS
    from schedulers.registry import get_policy

    checked: list[str] = []
    real = failure.check_runnable
    monkeypatch.setattr(failure, "check_runnable",
                        lambda policy, fresh=False: (checked.append(type(policy).__name__), real(policy, fresh))[1])
    w = workload(tmp_path / "w.json")
    code, _, err = run_main(run_args(tmp_path, w))
    assert code == 0, err
    assert checked == ["FCFS"]
    toml = tmp_path / "c.toml"
    toml.write_text(f'[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "f"\nplatform = "{HETERO}"\n'
                    f'workloads = ["{w}"]\n')
    for run, objects in ((lambda: simulate(HETERO, [w], FCFS()), 1), (lambda: get_policy("fcfs"), 1),
                         (lambda: InProcessPort(FCFS()), 1),
                         # (two objects, each checked once: one built when the campaign file is read,
                         # so that option values it refuses are errors of the file; the run's own)
                         (lambda: run_main(["campaign", "run", toml, "--out", tmp_path / "cout", "--serial",
                                            "--no-progress"]), 2)):
        checked.clear()
        run()
        assert checked == ["FCFS"] * objects
    assert (tmp_path / "cout" / "results").is_dir()


# ------------------------------------------------------------------- scenario generators
def test_generator_values_it_cannot_honour_are_refused_when_the_campaign_is_read(tmp_path: Path) -> None:
    # load = 0 used to pass the campaign's checks and fail run by run
    toml = tmp_path / "c.toml"
    toml.write_text('seeds = 2\n[[policy]]\nname = "fcfs"\n' + SYNTH + "[axes]\nload = [0.5, 0.0]\n")
    code, _, err = run_main(["campaign", "run", toml, "--out", tmp_path / "cout", "--serial", "--no-progress"])
    assert code == 2
    assert one_error_line(err).startswith(
        f"gridsched: error: {toml}: run policy=fcfs scenario=g load=0.0: generator 'synthetic': need jobs >= 1, "
        "load > 0, ")
    assert not (tmp_path / "cout").exists()


def test_a_generated_workload_never_holds_times_a_workload_may_not(tmp_path: Path) -> None:
    # The span of the arrivals is sum(res x runtime) / (load x hosts): with load 1e-300 the jobs
    # were written with subtimes near 1e303 s, a workload `gridsched run` then refused.
    # Runtimes of 1e12 s made delays and walltimes beyond 2**33 s the same way.
    code, _, err = run_main(["scenario", "synthetic", "-o", tmp_path / "s", "--load", "1e-300"])
    line = one_error_line(err)
    assert code == 2 and line.startswith("gridsched: error: generator 'synthetic': load 1e-300 spreads the 40 arrivals "
                                         "of seed 0 over ")
    assert line.endswith(" s, beyond the 8589934592 s (2**33) a workload's times may reach: raise load, or lower jobs "
                         "or the runtimes")
    code, _, err = run_main(["scenario", "synthetic", "-o", tmp_path / "s", "--runtime-min", "1e9", "--runtime-max",
                             "5e9"])
    assert code == 2 and one_error_line(err) == (
        "gridsched: error: generator 'synthetic': runtime_max x walltime_factor = 1e+10 s, beyond the 8589934592 s "
        "(2**33) a workload's walltimes may reach")
    assert not (tmp_path / "s").exists()
    # at the bound: 2**32 s x 2 = 2**33 s is accepted, and the run reads what was written
    code, _, err = run_main(["scenario", "synthetic", "-o", tmp_path / "s", "--runtime-min", "1e6",
                             "--runtime-max", str(2 ** 32), "--jobs", "3", "--load", "50"])
    assert code == 0, err
    code, _, err = run_main(run_args(tmp_path, tmp_path / "s" / "workload.json", platform=tmp_path / "s" / "platform.xml"))
    assert code == 0, err


# ------------------------------------------------------------------------- policy options
def test_conservative_rjms_delay_is_bounded_as_workload_times_are(tmp_path: Path) -> None:
    # Job 1 (2 hosts, walltime 10) runs from 0 to 3; job 2 (4 hosts) arrives at 1 and is reserved
    # at 0 + 10 + d; jobs 3 (1 host) and 4 (3 hosts) arrive at 2: job 3 would hold its host until
    # 2 + 10 + d, past job 2's reservation, so it waits; job 4 does not fit. Job 1 ends at 3: job
    # 2 runs 3-6, then jobs 3 (host 0) and 4 (hosts 1-3, 1e8 flops at b2's 50 Mf: 2 s) at 6.
    # With d = 1e308, 10 + d == 12 + d in doubles: jobs 3 and 4 started at 2 and 3, job 2 at 5.
    jobs = [{"id": 1, "subtime": 0, "res": 2, "profile": "d", "walltime": 10},
            {"id": 2, "subtime": 1, "res": 4, "profile": "d", "walltime": 10},
            {"id": 3, "subtime": 2, "res": 1, "profile": "d", "walltime": 10},
            {"id": 4, "subtime": 2, "res": 3, "profile": "c", "walltime": 100}]
    w = workload(tmp_path / "w.json", jobs, {"d": {"type": "delay", "delay": 3},
                                            "c": {"type": "parallel_homogeneous", "cpu": 1e8, "com": 0}})
    code, _, err = run_main(run_args(tmp_path, w, "--policy-options", '{"rjms_delay": 1e308}', policy="conservative"))
    assert code == 2 and one_error_line(err) == (
        "gridsched: error: policy 'conservative': option 'rjms_delay' must be a number >= 0 and <= 8589934592 (2**33) "
        "s, got 1e+308")
    assert not (tmp_path / "out").exists()
    code, _, err = run_main(run_args(tmp_path, w, "--policy-options", json.dumps({"rjms_delay": 2 ** 33}),
                                     policy="conservative"))
    assert code == 0, err
    with open(tmp_path / "out" / "out_jobs.csv", newline="") as f:
        starts = {r["job_id"]: (float(r["starting_time"]), r["allocated_resources"]) for r in csv.DictReader(f)}
    assert starts == {"1": (0.0, "0-1"), "2": (3.0, "0-3"), "3": (6.0, "0"), "4": (6.0, "1-3")}


def test_a_job_a_policy_cannot_schedule_is_named_with_its_workload_file(tmp_path: Path) -> None:
    # the line named the job ('w1!5') but not the file, among several -w
    with_users = workload(tmp_path / "a.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d", "user": "user1"}])
    without = workload(tmp_path / "b.json", [{"id": 5, "subtime": 1, "res": 1, "profile": "d"}])
    code, _, err = run_main(run_args(tmp_path, with_users, "-w", without, policy="osep"))
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: {without}: job 'w1!5' has no workload field 'user': policy "
                                   "'osep' needs the user of every job")
    assert not (tmp_path / "out").exists()


def test_a_campaign_run_again_after_its_workload_was_edited_runs_it_again(tmp_path: Path) -> None:
    # The run id hashed the scenario's file names only: the edited workload's runs were "already
    # present" and the old makespan reported as the new workload's.
    from schedulers.campaign.collect import load_records

    w = workload(tmp_path / "w.json")   # jobs at 1 and 2 s, 3 s each, one host each: makespan 5 s
    toml = tmp_path / "c.toml"
    toml.write_text(f'[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "f"\nplatform = "{HETERO}"\nworkloads = ["w.json"]\n')
    out = tmp_path / "cout"
    assert run_main(["campaign", "run", toml, "--out", out, "--serial", "--no-progress"])[0] == 0
    w.write_text(w.read_text().replace('"delay": 3', '"delay": 300'))   # makespan 2 + 300 s
    code, stdout, _ = run_main(["campaign", "run", toml, "--out", out, "--serial", "--no-progress"])
    assert code == 0 and "ran 1 (0 failed), 0 already present" in stdout
    assert "(1 other result files, not runs of this campaign: ignored)" in stdout
    from schedulers.campaign.spec import load_campaign
    (run,) = load_campaign(toml).runs()
    (rec,) = [r for r in load_records(out) if r["id"] == run.id]
    assert rec["summary"]["makespan"] == pytest.approx(302.0, abs=1e-6)
    assert len(rec["inputs_sha256"]) == 64
    # the run of the old file is not replayed on the new one for a timeline
    from schedulers.campaign.errors import CampaignError
    from schedulers.campaign.timeline import replay_usage
    w.write_text(w.read_text().replace('"delay": 300', '"delay": 30'))
    with pytest.raises(CampaignError, match=rf"^run {rec['id']}: its files \(.*w\.json, in {tmp_path}\) changed since "
                                            r"it ran; run the campaign again before plotting its timeline$"):
        replay_usage(rec, str(tmp_path), tmp_path / "plot")


# ------------------------------------------------------------------------ ZeroMQ endpoints
def test_a_port_above_65535_is_refused_by_serve_and_said_by_engine(tmp_path: Path) -> None:
    # libzmq keeps a TCP port in 16 bits: `serve --socket tcp://*:99999` listened on port 34463
    # (99999 - 65536) and said so only in passing; Batsim given tcp://localhost:99999 connects there.
    from schedulers.batsim.endpoints import port_problem

    assert port_problem("tcp://localhost:65535") is None and port_problem("tcp://*:*") is None
    assert port_problem("ipc:///tmp/x:99999") is None
    assert port_problem("tcp://[::1]:70000") == "port 70000 is not in 0-65535 (ZeroMQ takes it modulo 65536: port 4464)"
    code, _, err = run_main(["serve", "--policy", "fcfs", "--socket", "tcp://*:99999", "--connect-timeout", "1"])
    assert code == 2
    assert err.strip() == ("gridsched serve: --socket: cannot bind the scheduler's ZMQ REP socket to 'tcp://*:99999': "
                           "port 99999 is not in 0-65535 (ZeroMQ takes it modulo 65536: port 34463)")
    # a malformed endpoint is a bad option (2), not an internal error (1)
    code, _, err = run_main(["serve", "--policy", "fcfs", "--socket", "nonsense", "--connect-timeout", "1"])
    assert code == 2 and err.strip().startswith("gridsched serve: --socket: cannot bind the scheduler's ZMQ REP "
                                                "socket to 'nonsense': Invalid argument")
    code, _, err = run_main(["engine", "-p", HETERO, "-w", workload(tmp_path / "w.json"), "-s", "nonsense",
                             "-e", tmp_path / "o"])
    assert code == 2 and one_error_line(err).startswith("gridsched: error: -s 'nonsense': ZeroMQ cannot connect to "
                                                        "it: Invalid argument")
    # the engine plays Batsim, whose libzmq does the same: it connects to 34463, with a warning
    code, _, err = run_main(["engine", "-p", HETERO, "-w", tmp_path / "w.json", "-s", "tcp://localhost:99999",
                             "--timeout", "0.2", "-e", tmp_path / "o"])
    lines = err.splitlines()
    assert code == 2 and lines[0] == ("gridsched engine: warning: -s 'tcp://localhost:99999': port 99999 is not in "
                                      "0-65535 (ZeroMQ takes it modulo 65536: port 34463); real Batsim 4.2.1 connects "
                                      "there too")
    assert lines[1].startswith("gridsched: error: no reply from the scheduler at tcp://localhost:99999 within 0.2 s")


# ------------------------------------------ what real Batsim runs without a word: a warning
def test_communications_on_a_platform_without_links_are_run_as_batsim_runs_them_with_a_warning(
        tmp_path: Path) -> None:
    # 1e8 flops on a1 (100 Mf) and a2 (200 Mf), 1 MB between them: SimGrid finds an empty route
    # between two hosts of a Full zone without links, so the job takes 1e8 / 1e8 = 1 s
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 2, "profile": "p"}],
                 {"p": {"type": "parallel_homogeneous", "cpu": 1e8, "com": 1e6}})
    code, _, err = run_main(run_args(tmp_path, w))
    assert code == 0, err
    assert err.splitlines() == [
        f"gridsched: warning: {w}: profile 'p' sends bytes between hosts ('com'), but {HETERO} has no network links: "
        "SimGrid (and real Batsim 4.2.1) sends them in no time, only the computation is timed"]
    with open(tmp_path / "out" / "out_jobs.csv", newline="") as f:
        (row,) = csv.DictReader(f)
    assert row["execution_time"] == "1.000000"
    # no bytes between two hosts: no warning
    w2 = workload(tmp_path / "w2.json", [{"id": 1, "subtime": 0, "res": 2, "profile": "p"}],
                  {"p": {"type": "parallel", "cpu": [1e8, 1e8], "com": [0, 0, 0, 0]}})
    code, _, err = run_main(run_args(tmp_path, w2, out="out2"))
    assert code == 0 and err == ""


def test_a_busy_host_drawing_less_than_an_idle_one_is_run_with_a_warning(tmp_path: Path) -> None:
    # a2's power: idle 100 W, full load 50 W. One 2e8-flop job on a2 (200 Mf, 4 cores, one busy):
    # 1 s at 100 + (50 - 100) x 1/4 = 87.5 W (SimGrid's formula), the other 3 hosts idle at 100 W,
    # the master host is not counted: 387.5 J
    plat = tmp_path / "p.xml"
    plat.write_text(HETERO.read_text().replace('speed="200Mf" core="4"><prop id="wattage_per_state" '
                                               'value="100.0:114.67:200.0"/>',
                                               'speed="200Mf" core="4"><prop id="wattage_per_state" value="100:50"/>'))
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
                 {"p": {"type": "parallel_homogeneous", "cpu": 2e8, "com": 0}})
    code, _, err = run_main(["run", "--policy", on_a2(tmp_path), "-p", plat, "-w", w, "-o", tmp_path / "out",
                             "--no-progress", "-E"])
    assert code == 0, err
    assert err.splitlines() == [
        f"gridsched: warning: {plat}: host 'a2' pstate 0: wattage_per_state gives a full-load power of 50 W, below its "
        "idle (100 W) or epsilon (100 W) power: SimGrid (and real Batsim 4.2.1) charges a busy host less than an idle "
        "one"]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["energy_joules"] == pytest.approx(387.5, abs=1e-3)


def on_a2(tmp: Path) -> str:
    """A policy of the user's own that runs every job on host 1 (a2): its FILE:Class."""
    (tmp / "on_a2.py").write_text("from schedulers.core.policy import Policy\n\n\nclass OnA2(Policy):\n"
                                  "    def on_job_submitted(self, job):\n        self.execute(job, [1])\n")
    return f"{tmp / 'on_a2.py'}:OnA2"


def test_fit_scale_says_it_changed_every_job_not_only_the_large_ones(tmp_path: Path) -> None:
    # nb_res 2 on 4 hosts: res' = ceil(res x 4 / 2), at most 4: 3 -> 4, 1 -> 2, 99 -> 4. The job of
    # 1 host, which fits, doubles too; nothing said so (the trace conversion's report was not shown).
    # 3 and 99 ask for more than nb_res 2: clamped to the 4 hosts, not scaled (6 and 198), and said so
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 2, "jobs": [{"id": i, "subtime": 0, "res": r, "profile": "d"}
                                                   for i, r in ((1, 3), (2, 1), (3, 99))], "profiles": DELAY}))
    code, _, err = run_main(run_args(tmp_path, w, "--fit", "scale"))
    assert code == 0, err
    out = tmp_path / "out"
    assert err.splitlines() == [
        f"--fit scale: {w} (batsim-json): 3 records read, 3 jobs kept, 0 dropped", "  nb_res: 4",
        "  note           2  res above the workload's nb_res 2: clamped to 4, not scaled",
        "  note           1  res scaled",
        "  every job's res x 4 hosts / nb_res 2 of the file, rounded up: its share of the machine (jobs that fit too)",
        f"  written to {out}/workload_w0.json"]
    assert [j["res"] for j in json.loads((out / "workload_w0.json").read_text())["jobs"]] == [4, 2, 4]
    # clamp changes only the job too large, and says so
    code, _, err = run_main(run_args(tmp_path, w, "--fit", "clamp", out="out2"))
    assert code == 0 and "  note           1  res clamped to 4" in err.splitlines()


def test_max_jobs_keeps_n_jobs_of_each_workload_as_its_help_says(tmp_path: Path) -> None:
    # the help said "keep only the first N jobs": with two -w, N of each are kept
    w = workload(tmp_path / "w.json")
    code, stdout, err = run_main(run_args(tmp_path, w, "-w", w, "--max-jobs", "1"))
    assert code == 0, err
    assert "jobs                  2 (2 succeeded" in stdout
    text = " ".join(subprocess.run([sys.executable, "-m", "schedulers.cli", "run", "--help"], capture_output=True,
                                   text=True, cwd=ROOT, timeout=60).stdout.split())
    assert "--max-jobs N keep only the N jobs submitted first, in each --workload" in text


REPLIES = '''from schedulers.core.events import ExecuteJob, RejectJob
from schedulers.core.policy import Policy


class DecideNone(Policy):
    def decide(self, now, events):
        super().decide(now, events)


class DecideText(Policy):
    def decide(self, now, events):
        return super().decide(now, events) + ["EXECUTE_JOB"]


class AtNaN(Policy):
    def on_job_submitted(self, job):
        self.emit(RejectJob(job_id=job.id, timestamp=float("nan")))


class AllocText(Policy):
    def on_job_submitted(self, job):
        self.emit(ExecuteJob(job_id=job.id, alloc="0-1"))
'''


@pytest.mark.parametrize("cls, code, words", [
    # these failed inside gridsched's ports.py, which the line named as the policy's code
    ("DecideNone", 2, "policy 'DecideNone': its reply must be a list of decisions (schedulers.core.events), got "
                      "NoneType None"),
    ("DecideText", 2, "policy 'DecideText': its reply holds str 'EXECUTE_JOB', not a decision of "
                      "schedulers.core.events"),
    # a NaN timestamp was taken as "now" (its comparison with now is false): the jobs were rejected
    ("AtNaN", 2, "policy 'AtNaN': decision RejectJob has timestamp nan that is not a finite number (Batsim aborts "
                 "on such a reply)"),
    # "0-1" was taken as the 3 hosts of its 3 characters ("allocation 0-1 has 3 hosts")
    ("AllocText", 1, "policy AllocText failed in on_job_submitted ({user}, line 22): emit: ExecuteJob.alloc must be a "
                     "ProcSet (e.g. ProcSet.from_str('0-3')), got str '0-1'"),
])
def test_a_reply_that_holds_no_decisions_is_named_by_the_policys_class(tmp_path: Path, cls: str, code: int,
                                                                        words: str) -> None:
    user = tmp_path / "replies.py"
    user.write_text(REPLIES)
    assert user.read_text().splitlines()[21].strip().startswith("self.emit(ExecuteJob")
    w = workload(tmp_path / "w.json")
    got, _, err = run_main(run_args(tmp_path, w, policy=f"{user}:{cls}"))
    assert got == code
    assert one_error_line(err).startswith("gridsched: error: " + words.format(user=user))


@pytest.mark.parametrize("user, shown", [(["a"], "['a']"), ("", "''"), (1.5, "1.5"), (True, "True")])
def test_a_user_that_is_no_name_is_refused_not_made_a_user_named_by_its_repr(tmp_path: Path, user, shown) -> None:
    # ["a"] was the user "['a']", True the user "True": a user owning nothing, without a word
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d", "user": user},
                                       {"id": 2, "subtime": 0, "res": 1, "profile": "d", "user": 7}])
    code, _, err = run_main(run_args(tmp_path, w, policy="osep"))
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: {w}: job 'w0!1': workload field 'user' must be a non-empty "
                                   f"string or an integer, got {shown}")
    assert not (tmp_path / "out").exists()


def test_policy_metrics_that_are_no_numbers_fail_their_run_not_the_campaigns_collect(tmp_path: Path) -> None:
    # {"label": "x"} was recorded as it was; `campaign collect` then refused the whole campaign
    # ("policy_metrics must be an object of numbers or null"), the other runs' results included
    (tmp_path / "m.py").write_text("from schedulers.fcfs import FCFS\n\n\nclass Labels(FCFS):\n    def metrics(self):\n"
                                   "        return {'label': 'x', 'jobs': 2}\n\n\nclass Listed(FCFS):\n"
                                   "    def metrics(self):\n        return [1, 2]\n")
    toml = tmp_path / "c.toml"
    toml.write_text("".join(f'[[policy]]\nname = "{tmp_path / "m.py"}:{c}"\n' for c in ("Labels", "Listed"))
                    + '[[policy]]\nname = "fcfs"\n'
                    + f'[[scenario]]\nname = "f"\nplatform = "{HETERO}"\nworkloads = ["w.json"]\n')
    workload(tmp_path / "w.json")
    out = tmp_path / "cout"
    code, stdout, _ = run_main(["campaign", "run", toml, "--out", out, "--serial", "--no-progress"])
    assert code == 1
    failed = sorted(ln.split("): ", 1)[1] for ln in stdout.splitlines() if ln.startswith("  failed "))
    # (the user's file and the line of their metrics(): lines 5 and 10 of m.py)
    assert failed == [f"ValueError: policy Labels: metrics() ({tmp_path / 'm.py'}, line 5) must return a dict of "
                      "name -> finite number, got 'label': 'x'",
                      f"ValueError: policy Listed: metrics() ({tmp_path / 'm.py'}, line 10) must return a dict of "
                      "name -> finite number, got list [1, 2]"]
    code, _, err = run_main(["campaign", "collect", out])
    assert code == 0, err
    with open(out / "runs.csv", newline="") as f:
        assert sorted(r["status"] for r in csv.DictReader(f)) == ["done", "failed", "failed"]


def test_a_speed_or_bandwidth_without_unit_is_read_as_simgrid_reads_it_with_a_warning(tmp_path: Path) -> None:
    # SimGrid 3.32 reads "2e8" as 2e8 flops/s and only logs "Deprecated unit-less value": a2 then
    # computes 1e8 flops in 0.5 s, as with "200Mf"; gridsched showed no sign of it
    plat = tmp_path / "p.xml"
    plat.write_text(HETERO.read_text().replace('id="a2" speed="200Mf"', 'id="a2" speed="2e8"'))
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
                 {"p": {"type": "parallel_homogeneous", "cpu": 1e8, "com": 0}})
    code, _, err = run_main(["run", "--policy", on_a2(tmp_path), "-p", plat, "-w", w, "-o", tmp_path / "out",
                             "--no-progress"])
    assert code == 0, err
    assert err.splitlines() == [
        f"gridsched: warning: {plat}: speed='2e8' has no unit: SimGrid 3.32 (and real Batsim 4.2.1) reads it in f "
        "(flops/s) and only logs \"Deprecated unit-less value\"; write the unit"]
    with open(tmp_path / "out" / "out_jobs.csv", newline="") as f:
        (row,) = csv.DictReader(f)
    assert row["execution_time"] == "0.500000"


def test_the_platform_reader_records_each_value_without_unit_in_file_order(tmp_path: Path) -> None:
    # recorded while the file is read (PlatformSpec.unitless), not found again in its text: every
    # occurrence (a cluster's attributes in the order written, each pstate of a speed apart), 0 left
    # out (it may go without a unit, as in SimGrid), nothing from a comment, nor a peer's lat
    # (SimGrid 3.32 does not read it in its unit parser); hexadecimal numbers are not counted
    from schedulers.engine.platform import read_platform
    plat = tmp_path / "p.xml"
    plat.write_text('<?xml version="1.0"?>\n<platform version="4.1">\n<zone id="z" routing="Full">\n'
                    '  <!-- <host id="old" speed="3e9"/> -->\n'
                    '  <cluster id="c" prefix="n" suffix="" radical="0-1" speed="1e9" lat="5e-5" bw="10Gbps" '
                    "bb_bw='2e9' bb_lat=\"0\" loopback_bw=\"3e9\" limiter_link=\"4GBps\"/>\n"
                    '  <zone id="z1" routing="Full">\n'
                    '    <host id="master_host" speed="2e8, 1e8,0, 0x10"/>\n'
                    '    <link id="l" latency="1e-3" bandwidth="1.25e9"/>\n'
                    '    <link id="m" bandwidth="1.25e9" latency="0"/>\n'
                    '  </zone>\n</zone>\n</platform>\n')
    spec = read_platform(plat, master_host="master_host")
    assert spec.unitless == {"speed": ["1e9", "2e8", "1e8"], "lat": ["5e-5"], "bb_bw": ["2e9"], "loopback_bw": ["3e9"],
                             "latency": ["1e-3"], "bandwidth": ["1.25e9", "1.25e9"]}
    assert list(spec.unitless)[:3] == ["speed", "lat", "bb_bw"]   # (first seen in the cluster, lat before bw)
    from schedulers.engine.platform_build import check_build
    from schedulers.engine.platform import _parse_xml
    peer = tmp_path / "peer.xml"
    peer.write_text('<?xml version="1.0"?>\n<platform version="4.1">\n<zone id="z" routing="Vivaldi">\n'
                    '  <peer id="p" speed="1e9" bw_in="1GBps" bw_out="1GBps" lat="5e-5" coordinates="0 0 0"/>\n'
                    '</zone>\n</platform>\n')
    root, data = _parse_xml(str(peer), None)
    assert check_build(root, data, str(peer), 10).unitless == {"speed": ["1e9"]}
    from schedulers.engine.oddities import _UNITS
    from schedulers.engine.platform_build import UNIT_ATTRIBUTES
    assert set(_UNITS) == UNIT_ATTRIBUTES   # (each recorded attribute has its unit in the warning)


def test_a_policy_module_that_cannot_be_imported_is_not_located_in_gridscheds_code(tmp_path: Path,
                                                                                   monkeypatch) -> None:
    # the line ended "(.../schedulers/registry.py, line 191)": gridsched's import call, not the user's code
    w = workload(tmp_path / "w.json")
    code, _, err = run_main(run_args(tmp_path, w, policy="schedulers.nope:X"))
    assert code == 2 and one_error_line(err) == ("gridsched: error: policy 'schedulers.nope:X': importing module "
                                                 "'schedulers.nope' failed: ModuleNotFoundError: No module named "
                                                 "'schedulers.nope'")
    (tmp_path / "mine").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main(run_args(tmp_path, w, policy="mine:Greedy"))
    assert code == 2 and one_error_line(err) == ("gridsched: error: policy 'mine:Greedy': mine is a folder; name a "
                                                 "file of it: mine/FILE.py:Greedy")


def test_the_fallback_workload_says_it_replaces_every_workload(tmp_path: Path) -> None:
    # -w missing.json -w b.json --fallback-workload f.json ran f.json alone; the note named only the missing file
    b = workload(tmp_path / "b.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}])
    f = workload(tmp_path / "f.json", [{"id": 9, "subtime": 0, "res": 1, "profile": "d"}])
    missing = tmp_path / "missing.json"
    code, stdout, err = run_main(run_args(tmp_path, missing, "-w", b, "--fallback-workload", f))
    assert code == 0, err
    assert err.splitlines()[0] == (f"note: {missing} not found (is ../shared beside the project?); running the shipped "
                                   f"scenario {f} instead (alone: {b} not run either)")
    assert "jobs                  1 (1 succeeded" in stdout


@pytest.mark.parametrize("axes, words", [
    # 1 and 1.0: two runs of one simulation, one group of the tables with n doubled (± 0 from copies)
    ("[axes]\nload = [1, 1.0]\n", "axes.load[1]: 1.0 repeats the value axes.load[0]; each value is given once"),
    ('[axes]\nprofile = ["delay", "compute", "delay"]\n',
     "axes.profile[2]: 'delay' repeats the value axes.profile[0]; each value is given once"),
    ('[zip]\n"scenario.jobs" = [10, 20, 10]\nmax_res = [2, 2, 2]\n',
     "zip: values number 2 (10, 2) repeat values number 0; each combination is given once"),
])
def test_an_axis_value_given_twice_is_refused(tmp_path: Path, axes: str, words: str) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text('seeds = 1\n[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "g"\ngenerator = "synthetic"\n'
                    'params = { hosts = 4 }\n' + axes)
    code, _, err = run_main(["campaign", "run", toml, "--out", tmp_path / "cout", "--serial", "--no-progress"])
    assert code == 2 and one_error_line(err) == f"gridsched: error: {toml}: {words}"


def test_register_job_refuses_a_res_that_is_no_integer() -> None:
    # int(2.7) made it a job of 2 hosts
    from schedulers.core.model import PolicyError
    from schedulers.core.policy import Policy

    p = Policy()
    with pytest.raises(PolicyError, match=r"^register_job w0!x: res must be an integer number of hosts, got 2\.7$"):
        p.register_job("w0", "x", 2.7, "d")
    assert p.register_job("w0", "y", 2, "d") == "w0!y"


@pytest.mark.parametrize("toml", sorted(str(p.relative_to(ROOT)) for p in [*ROOT.glob("campaigns/**/*.toml"),
                                                                           *ROOT.glob("docs/examples/*.toml")]))
def test_every_shipped_campaign_file_passes_the_checks(toml: str) -> None:
    # the checks above must not refuse the project's own campaigns (several axes setting several
    # options of one policy, e.g. green_nantes/shutdown.toml's idle_timeout and delta)
    from schedulers.campaign.spec import load_campaign
    assert load_campaign(ROOT / toml).runs()


def test_buc_kp_is_bounded_as_times_are() -> None:
    # Sf = (Su x 0.8 + 1e5 / Wt x 0.2) x Kp + Te: with Kp = 1e308 every scored job had Sf = inf,
    # and BUC's order by Su was a tie
    from schedulers.buc import sf_index
    from schedulers.core.policy import PolicyOptionError
    from schedulers.registry import get_policy

    assert sf_index(60, 600, 5, 1e308) == sf_index(10, 600, 5, 1e308) == float("inf")
    with pytest.raises(PolicyOptionError, match=r"^policy 'buc': option 'kp' must be a number in \[0, 8589934592\], "
                                                r"got 1e\+308$"):
        get_policy("buc", {"kp": 1e308})
    assert get_policy("buc", {"kp": 2 ** 33}).kp == 2 ** 33
    assert sf_index(60, 600, 5, 2 ** 33) > sf_index(10, 600, 5, 2 ** 33)


def test_one_largest_time_bounds_workloads_events_and_policy_options() -> None:
    # 2**33 s was written out in the workload reader, conservative's rjms_delay and buc's kp: one
    # constant now, in schedulers.core (policies do not import the engine)
    from schedulers import buc, conservative
    from schedulers.core import limits
    from schedulers.engine import extevents, workload

    assert limits.MAX_TIME == 8589934592.0 == 2.0 ** limits.MAX_TIME_POWER
    assert workload.MAX_TIME is extevents.MAX_TIME is conservative.MAX_DELAY is buc.MAX_TIME is limits.MAX_TIME
    assert conservative.Conservative.option_docs["rjms_delay"].type == "number >= 0 and <= 2**33 (s)"
    assert buc.BUC.option_docs["kp"].type == "number in [0, 2**33] (s)"


def test_a_reader_that_goes_away_ends_the_command_quietly() -> None:
    # `gridsched policies easy | head -1` could print "gridsched: error: [Errno 32] Broken pipe" and
    # exit 2, as if the input were bad (when head is gone before the last write)
    class GoneReader(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    err = io.StringIO()
    with contextlib.redirect_stdout(GoneReader()), contextlib.redirect_stderr(err):
        code = main(["policies", "easy"])
    assert code == 0 and err.getvalue() == ""


# ------------------------------------------------------------- a UTF-8 byte-order mark (BOM)
BOM = b"\xef\xbb\xbf"
BOM_WORDS = ("the file starts with a UTF-8 byte-order mark (BOM): JSON is read without one, as real Batsim 4.2.1's "
             "parser (RapidJSON) reads it; save the file as UTF-8 without BOM")


def test_a_bom_is_refused_in_json_inputs_with_words_a_user_understands(tmp_path: Path) -> None:
    # Python's words were "Unexpected UTF-8 BOM (decode using utf-8-sig)"
    w = tmp_path / "w.json"
    w.write_bytes(BOM + workload(tmp_path / "plain.json").read_bytes())
    code, _, err = run_main(run_args(tmp_path, w))
    assert code == 2 and one_error_line(err) == f"gridsched: error: {w}: {BOM_WORDS}"
    ev = tmp_path / "ev.txt"
    ev.write_bytes(BOM + b'{"type": "machine_unavailable", "resources": "0", "timestamp": 1}\n')
    code, _, err = run_main(run_args(tmp_path, tmp_path / "plain.json", "--events", ev))
    assert code == 2 and one_error_line(err) == f"gridsched: error: {ev}, line 1: {BOM_WORDS}"


def test_a_bom_is_skipped_in_traces_and_campaign_files(tmp_path: Path) -> None:
    # gridsched's own formats: a BOM made the first line of a trace a bad job line and a campaign
    # file "invalid TOML: Invalid statement (at line 1, column 1)"
    swf = tmp_path / "t.swf"
    swf.write_bytes(BOM + (FIX / "tiny.swf").read_bytes())
    code, _, err = run_main(run_args(tmp_path, swf))
    assert code == 0, err
    plain = tmp_path / "plain.swf"
    plain.write_bytes((FIX / "tiny.swf").read_bytes())
    assert run_main(run_args(tmp_path, plain, out="out2"))[0] == 0
    assert (tmp_path / "out" / "out_jobs.csv").read_text() == (tmp_path / "out2" / "out_jobs.csv").read_text()
    from schedulers.campaign.spec import load_campaign
    toml = tmp_path / "c.toml"
    toml.write_bytes(BOM + ('[[policy]]\nname = "fcfs"\n' + SYNTH).encode())
    assert len(load_campaign(toml).runs()) == 1


@pytest.mark.parametrize("body, words", [
    # gridsched policies FILE:P stopped with "internal error: TypeError: expected string or bytes-like object"
    ('option_docs = {"a": 1}', "P.option_docs must map option names to descriptions (a string or "
                               "schedulers.core.options.Option), got 'a': 1"),
    ('option_docs = ["a"]', "P.option_docs must map option names to descriptions (a string or "
                            "schedulers.core.options.Option), got list ['a']"),
    # an unknown feature failed later, as a KeyError of gridsched's own tables
    ('requires = {"dynamic_jobs"}', "P.requires names unknown Batsim features dynamic_jobs; known: dynamic-jobs, "
                                    "forward-profiles"),
])
def test_a_policy_class_declaring_bad_options_or_features_is_refused_at_its_line(tmp_path: Path, body: str,
                                                                                   words: str) -> None:
    f = tmp_path / "p.py"
    f.write_text(f"from schedulers.core.policy import Policy\n\n\nclass P(Policy):\n    {body}\n")
    for argv in (["policies", f"{f}:P"], run_args(tmp_path, workload(tmp_path / "w.json"), policy=f"{f}:P")):
        code, _, err = run_main(argv)
        assert code == 2 and one_error_line(err) == (f"gridsched: error: policy '{f}:P': importing {f} failed: "
                                                     f"TypeError: {words} ({f}, line 4)")


@pytest.mark.parametrize("argv, words", [
    (["hosep", "--late-delay", "1e300"], "generator 'hosep' (seed 0): job 'user1-0' gets subtime 1e+300 s, beyond "
                                         "the 8589934592 s (2**33) a workload's times may reach; its parameters: "),
    (["green-nantes", "--runtime-max", "1e300"], "generator 'green-nantes' (seed 0): job '0' gets walltime "),
])
def test_no_generator_writes_a_workload_gridsched_run_then_refuses(tmp_path: Path, argv: list, words: str) -> None:
    # the files were written, and `gridsched run` refused them ("'subtime' must be ... <= 8589934592")
    code, _, err = run_main(["scenario", *argv, "-o", tmp_path / "s"])
    assert code == 2 and one_error_line(err).startswith(f"gridsched: error: {words}")
    assert not (tmp_path / "s").exists()


def test_set_pstate_on_a_host_that_does_not_exist_says_so(tmp_path: Path) -> None:
    # it failed with "IndexError: list index out of range" inside the base class
    f = tmp_path / "p.py"
    f.write_text("from schedulers.fcfs import FCFS\n\n\nclass Far(FCFS):\n    def on_simulation_begins(self, platform):\n"
                 "        self.set_pstate([99], 0)\n")
    code, _, err = run_main(run_args(tmp_path, workload(tmp_path / "w.json"), "-E", policy=f"{f}:Far"))
    assert code == 1 and one_error_line(err).startswith(
        f"gridsched: error: policy Far failed in on_simulation_begins ({f}, line 6): set_pstate: host 99 does not exist "
        "(the platform has 4 compute hosts, ids 0-3); the run stopped at simulated time t=0.000 s")


@pytest.mark.parametrize("text, words", [
    ("", "{t}: no recorded reply ('sched->batsim' line) to play"),
    ("garbage\n", "{t}:1: malformed JSON at line 1, column 1: Expecting value"),
    ('{"dir": "sched->batsim", "msg": {"now": "x", "events": []}}\n',
     "{t}: a recorded reply is not a valid message: scheduler->Batsim message: 'now' must be a finite number, got "
     "string x"),
])
def test_a_replay_transcript_that_is_no_transcript_is_bad_input(tmp_path: Path, text: str, words: str) -> None:
    # it was "policy ReplayPolicy failed in __init__ (.../schedulers/batsim/replay.py, line 46)", status 1
    t = tmp_path / "t.jsonl"
    t.write_text(text)
    code, _, err = run_main(run_args(tmp_path, workload(tmp_path / "w.json"), "--policy-options",
                                     json.dumps({"transcript": str(t)}), policy="replay"))
    assert code == 2
    assert one_error_line(err).startswith("gridsched: error: policy 'replay': option 'transcript': "
                                          + words.format(t=t))
    assert not (tmp_path / "out").exists()


def test_two_runs_into_one_folder_at_once_the_second_stops(tmp_path: Path) -> None:
    # Both found the folder empty and wrote their files: one run's out_jobs.csv could end beside the
    # other's summary.json. A run holds the folder's lock from its preparation to its last file.
    from schedulers.run_lock import LOCK_NAME
    out = tmp_path / "out"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import sys\nfrom pathlib import Path\n"
                               "from schedulers.run_lock import RunLock\n"
                               f"lock = RunLock(Path({str(out)!r}))\nlock.acquire()\nprint('held', flush=True)\n"
                               "sys.stdin.read()\nlock.release()\n"],
                              cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        code, _, err = run_main(run_args(tmp_path, workload(tmp_path / "w.json")))
        assert code == 2
        assert one_error_line(err).startswith(f"gridsched: error: {out}: another `gridsched run` is writing into this "
                                              f"folder (pid {holder.pid} on ")
        assert sorted(p.name for p in out.iterdir()) == [LOCK_NAME]   # nothing written
    finally:
        holder.kill()   # (kill -9: the system releases its lock; its file is left behind)
        holder.wait()
    code, _, err = run_main(run_args(tmp_path, tmp_path / "w.json"))
    assert code == 0, err   # the lock of a process that is gone is taken over, its file no user file
    assert sorted(p.name for p in out.iterdir()) == ["out_jobs.csv", "out_machine_states.csv", "out_schedule.csv",
                                                     "out_schedule.trace", "summary.json"]


def test_the_summary_counts_failed_jobs_so_that_the_counts_add_up(tmp_path: Path) -> None:
    # job 1 ends COMPLETED_FAILED (ret 1), job 2 at its walltime, job 3 succeeds, job 4 (9 hosts)
    # is rejected: "jobs 4 (1 succeeded, 1 killed, 1 rejected)" left job 1 out
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "f"},
                                       {"id": 2, "subtime": 0, "res": 1, "profile": "d", "walltime": 1},
                                       {"id": 3, "subtime": 0, "res": 1, "profile": "d"},
                                       {"id": 4, "subtime": 0, "res": 9, "profile": "d"}],
                 {"d": {"type": "delay", "delay": 3}, "f": {"type": "delay", "delay": 2, "ret": 1}})
    code, stdout, err = run_main(run_args(tmp_path, w, "--fit", "keep"))
    assert code == 0, err
    assert "jobs                  4 (1 succeeded, 1 killed, 1 rejected, 1 failed (return code > 0))" in stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (summary["jobs"], summary["success"], summary["killed"], summary["rejected"]) == (4, 1, 1, 1)


def test_cores_per_host_with_no_trace_is_refused_not_ignored(tmp_path: Path) -> None:
    # it was ignored without a word: a JSON workload's res counts hosts already
    w = workload(tmp_path / "w.json")
    code, _, err = run_main(run_args(tmp_path, w, "--cores-per-host", "4"))
    assert code == 2 and one_error_line(err) == (
        f"gridsched: error: --cores-per-host applies to SWF/GWF traces (their processors become hosts); {w} is a "
        "Batsim JSON workload, whose 'res' counts hosts: it would be ignored; drop the option")
    assert not (tmp_path / "out").exists()
    assert run_main(run_args(tmp_path, w, "-w", FIX / "tiny.swf", "--cores-per-host", "4"))[0] == 0   # a trace too


@pytest.mark.parametrize("option", [["--batsim-arg=--enable-compute-sharing"], ["--timeout", "60"],
                                    ["--batsim", "/opt/batsim"], ["--batsim-socket", "tcp://127.0.0.1:28001"]])
def test_real_batsim_options_without_engine_batsim_are_refused_not_ignored(tmp_path: Path, option: list) -> None:
    # --batsim-arg=--enable-compute-sharing ran the embedded engine without compute sharing, silently
    code, _, err = run_main(run_args(tmp_path, workload(tmp_path / "w.json"), *option))
    assert code == 2 and one_error_line(err) == (
        f"gridsched: error: {option[0].split('=')[0]} applies to --engine batsim (real Batsim); the embedded engine "
        "would ignore it: add --engine batsim, or drop it (Batsim's flags of the embedded engine are gridsched run's "
        "own: --compute-sharing, --forward-profiles, --events...)")
    assert not (tmp_path / "out").exists()


def test_forward_unknown_events_without_events_is_run_as_batsim_runs_it_with_a_warning(tmp_path: Path) -> None:
    code, _, err = run_main(run_args(tmp_path, workload(tmp_path / "w.json"), "--forward-unknown-events"))
    assert code == 0 and err.splitlines() == [
        "gridsched: warning: --forward-unknown-events without --events: real Batsim 4.2.1 reads it only with events "
        "files, and so does the engine: it changes nothing"]


def test_convert_to_a_folder_is_a_bad_option_not_a_write_failure(tmp_path: Path) -> None:
    # status 4 ("cannot write the file: Is a directory"), the status of a full disk
    (tmp_path / "d").mkdir()
    code, _, err = run_main(["convert", FIX / "tiny.swf", "-o", tmp_path / "d"])
    assert code == 2 and one_error_line(err) == (f"gridsched convert: error: -o {tmp_path / 'd'}: is a folder; -o names "
                                                 f"the workload file to write, e.g. {tmp_path / 'd' / 'tiny.json'}")
    assert not any((tmp_path / "d").iterdir())


def test_batsim_launcher_into_a_file_says_it_is_a_file(tmp_path: Path) -> None:
    # "f/batsim: cannot write the launcher: File exists"
    f = tmp_path / "f"
    f.write_text("x")
    code, _, err = run_main(["batsim-launcher", f])
    assert code == 2 and one_error_line(err) == f"gridsched: error: {f}: is a file, not a folder; give the folder to " \
                                                "write `batsim` into"
    assert f.read_text() == "x"


def test_a_trace_without_its_extension_is_said_to_look_like_one(tmp_path: Path) -> None:
    # it was "malformed JSON at line 1, column 1: Expecting value"
    t = tmp_path / "kth.txt"
    t.write_bytes((FIX / "tiny.swf").read_bytes())
    code, _, err = run_main(run_args(tmp_path, t))
    assert code == 2 and one_error_line(err) == (
        f"gridsched: error: {t}: not a Batsim JSON workload, but it looks like an SWF/GWF trace (lines of numbers): "
        "gridsched run reads traces named .swf, .swf.gz, .gwf or .gwf.gz; rename it")


def test_kill_of_job_ids_says_it_takes_jobs() -> None:
    # "AttributeError: 'str' object has no attribute 'id'" / "'Job' object is not iterable"
    from schedulers.core.model import Job, JobState, PolicyError
    from schedulers.core.policy import Policy

    p = Policy()
    job = Job.from_json("w0!1", {"id": 1, "subtime": 0, "res": 1, "profile": "d"})
    job.state = JobState.RUNNING   # (a waiting job is not killed: it is rejected)
    with pytest.raises(PolicyError, match=r"^kill takes jobs \(Job objects, e\.g\. self\.jobs\[job_id\]\), got str "
                                          r"'w0!1'$"):
        p.kill(["w0!1"])
    with pytest.raises(PolicyError, match=r"^kill takes a list of jobs, got the job 'w0!1' alone: kill\(\[job\]\)$"):
        p.kill(job)
    p.kill([job])
    assert [d.job_ids for d in p._decisions] == [["w0!1"]]


def test_execute_and_reject_of_a_job_id_say_they_take_a_job() -> None:
    from schedulers.core.model import PolicyError
    from schedulers.core.policy import Policy

    p = Policy()
    with pytest.raises(PolicyError, match=r"^execute takes a job \(a Job object, e\.g\. self\.jobs\[job_id\]\), got "
                                          r"str 'w0!1'$"):
        p.execute("w0!1", [0])
    with pytest.raises(PolicyError, match=r"^reject takes a job \(a Job object, e\.g\. self\.jobs\[job_id\]\), got "
                                          r"str 'w0!1'$"):
        p.reject("w0!1")


def test_simulate_refuses_one_events_file_not_in_a_list(tmp_path: Path) -> None:
    # "ev.txt" was read as the files "e", "v", ".", ...
    from schedulers.engine import simulate
    from schedulers.fcfs import FCFS

    ev = tmp_path / "ev.txt"
    ev.write_text('{"type": "machine_unavailable", "resources": "0", "timestamp": 1}\n')
    w = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}], "profiles": DELAY}
    with pytest.raises(TypeError, match=r"^events must be a list of events files, got str '.*ev\.txt' "
                                        r"\(one file: \[it\]\)$"):
        simulate(HETERO, [w], FCFS(), events=str(ev))
    assert simulate(HETERO, [w], FCFS(), events=[str(ev)]).makespan == pytest.approx(3.0, abs=1e-6)


def test_a_platform_that_is_no_xml_at_all_says_what_it_looks_like(tmp_path: Path) -> None:
    # -p and -w swapped gave "malformed XML: not well-formed (invalid token): line 1, column 0" only
    w = workload(tmp_path / "w.json")
    gz = tmp_path / "p.xml.gz"
    gz.write_bytes(gzip.compress(HETERO.read_bytes()))
    for platform, hint in ((w, "it looks like JSON (a Batsim workload?): the platform is SimGrid XML (were -p and -w "
                               "swapped?)"),
                           (FIX / "tiny.swf", "it looks like an SWF/GWF trace: the platform is SimGrid XML (were -p "
                                              "and -w swapped?)"),
                           (gz, "the file is gzip-compressed: SimGrid (and real Batsim) read a platform uncompressed")):
        code, _, err = run_main(run_args(tmp_path, w, platform=platform))
        assert code == 2 and one_error_line(err) == (f"gridsched: error: {platform}: malformed XML: not well-formed "
                                                     f"(invalid token): line 1, column 0; {hint}")


def test_a_platform_given_as_workload_says_it_looks_like_xml(tmp_path: Path) -> None:
    # "malformed JSON at line 1, column 1: Expecting value"
    code, _, err = run_main(run_args(tmp_path, HETERO))
    assert code == 2 and one_error_line(err) == (
        f"gridsched: error: {HETERO}: not a Batsim JSON workload, but it looks like XML (a SimGrid platform?): -w takes "
        "a workload or a trace (were -p and -w swapped?)")
