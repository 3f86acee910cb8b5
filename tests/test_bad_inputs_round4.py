"""Bad input, fourth round: settings a run was labelled with but never used, values accepted that
made the run fail much later (or crash in gridsched's own code), and command lines real Batsim
4.2.1 reads otherwise than the engine did.

Each test runs the command as a user would (``schedulers.cli.main``) or the Python API, and checks
the exit status, the one error or warning line (its exact words, the file and item named) or the
correct number, worked out by hand in the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers_cli import one_error_line, run_main


FIX = Path(__file__).parent / "fixtures"
HETERO = FIX / "hetero4.xml"   # 4 hosts a1 a2 b1 b2, 4 cores each






def write_workload(path: Path, jobs: list, delay: float = 10) -> Path:
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs,
                                "profiles": {"d": {"type": "delay", "delay": delay}}}))
    return path


# ------------------------------------------------------------------ the gym environment
def _two_jobs(tmp_path: Path) -> Path:
    return write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d"},
                                                {"id": 2, "subtime": 500, "res": 1, "profile": "d"}])


def test_a_bool_action_is_an_invalid_action_not_a_crash_in_the_agent(tmp_path: Path) -> None:
    """``False``/``True`` are Python ints, and numpy read ``mask[True]`` as a boolean index: the
    step failed with "policy AgentPolicy failed in schedule (.../agent.py...)". A bool is no
    action: played as a wait and flagged, as a float is. Job 1 (10 s delay, submitted at 0) then
    waits for the next decision, job 2's submission at t = 500; action 0 (an int) starts it at 0."""
    pytest.importorskip("gymnasium", reason="gymnasium is not installed (pip install 'gridsched[gym]')")
    import numpy as np

    from schedulers.gym import BatsimEnv

    env = BatsimEnv(HETERO, str(_two_jobs(tmp_path)), window=4)
    try:
        for action in (False, True, np.bool_(False), 0.0):
            env.reset()
            _, _, terminated, _, info = env.step(action)
            assert info["invalid_action"] is True and info["time"] == 500.0 and not terminated, action
            assert [j.id for j in env.policy.queue] == ["w0!1", "w0!2"]   # job 1 not started at t = 0
        env.reset()
        _, _, _, _, info = env.step(np.int64(0))   # what action_space.sample() gives
        assert info["invalid_action"] is False and info["time"] == 500.0
        assert [j.id for j in env.policy.queue] == ["w0!2"]
    finally:
        env.close()


_STALL = (" (the call it asks is at now + stall_wait, and now is Batsim's clock printed with 6 decimals: a call "
          "sooner may fall before the clock, where Batsim 4.2.1 aborts)")


@pytest.mark.parametrize("kwargs, message", [
    ({"stall_wait": float("inf")}, "stall_wait must be a finite number of seconds >= 1e-6, got inf"
     + _STALL),
    ({"stall_wait": True}, "stall_wait must be a finite number of seconds >= 1e-6, got True"
     + _STALL),
    ({"window": True}, "window must be an integer from 1 to 1,000,000 (queue slots observed), got True"),
    ({"max_steps": True}, "max_steps must be an integer >= 1 or None, got True"),
])
def test_gym_settings_that_cannot_work_are_refused_when_the_environment_is_made(tmp_path: Path, kwargs: dict,
                                                                              message: str) -> None:
    """``stall_wait=inf`` was accepted and the episode failed at its first stall ("policy
    AgentPolicy failed in schedule ... call_me_later: the time must be a finite number"); ``True``
    was taken for 1 as a window, a step limit or a stall wait."""
    pytest.importorskip("gymnasium", reason="gymnasium is not installed (pip install 'gridsched[gym]')")
    from schedulers.gym import BatsimEnv

    with pytest.raises(ValueError) as err:
        BatsimEnv(HETERO, str(_two_jobs(tmp_path)), **kwargs)
    assert str(err.value) == message


# ------------------------------------------------------------------ energy of a run where no job ran
def test_the_energy_of_a_run_where_every_job_was_rejected_is_none_not_a_negative_number(tmp_path: Path) -> None:
    """Batsim's ``consumed_joules`` is the energy at the last job end minus the energy at the first
    submission; with no job end real Batsim 4.2.1 prints -1 minus the latter. Two 5-host jobs on
    the 4 hosts of hetero4.xml (``--fit keep``: FCFS rejects them), submitted at t = 100: the
    4 compute hosts idle at 100 W for 100 s, 40,000 J, so ``out_schedule.csv`` says -40001, as
    real Batsim 4.2.1 wrote it (``gridsched run --engine batsim --policy fcfs -p hetero4.xml -w
    w.json -E --fit keep`` with ``PATH`` holding Batsim 4.2.1). The summary said "energy -40,001 J
    = -0.011 kWh" and summary.json ``energy_joules: -40001.0``: no span was measured, so it is
    none, said as the waiting times are."""
    w = write_workload(tmp_path / "w.json", [{"id": i, "subtime": 100, "res": 5, "profile": "d"} for i in (1, 2)])
    out = tmp_path / "out"
    code, stdout, err = run_main(["run", "--policy", "fcfs", "-p", HETERO, "-w", w, "-o", out, "--no-progress",
                                  "-E", "--fit", "keep"])
    assert code == 0, err
    assert "energy                none: no job ran" in stdout.splitlines()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rejected"] == 2 and summary["energy_joules"] is None and summary["energy_kwh"] is None
    assert "energy_unmeasured" not in summary
    sched = (out / "out_schedule.csv").read_text().splitlines()
    assert sched[1].split(",")[1] == "-40001.000000"   # Batsim's own file, unchanged
    # one job runs (10 s from t = 100): the energy is measured again, from 100 to 110 s
    w2 = write_workload(tmp_path / "w2.json", [{"id": 1, "subtime": 100, "res": 1, "profile": "d"}])
    code, stdout, err = run_main(["run", "--policy", "fcfs", "-p", HETERO, "-w", w2, "-o", tmp_path / "o2",
                                  "--no-progress", "-E"])
    assert code == 0, err
    # 10 s x 4 hosts x 100 W (a delay job leaves its host at idle power)
    assert json.loads((tmp_path / "o2" / "summary.json").read_text())["energy_joules"] == 4000.0


# ------------------------------------------------------------------ policy options a run never used
def test_an_ehosep_limit_for_a_user_who_owns_no_host_is_refused(tmp_path: Path) -> None:
    """``limits`` of a user owning nothing never limits anything: a misspelt ``User1`` for the
    owner ``user1`` ran user1 unlimited, labelled with a 50 % limit."""
    w = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d", "user": "user1"}])
    code, _, err = run_main(["run", "--policy", "ehosep", "-p", HETERO, "-w", w, "-o", tmp_path / "out",
                             "--no-progress", "-E", "--policy-options", '{"limits": {"user1": 50, "User1": 50}}'])
    assert code == 2
    assert one_error_line(err) == (
        "gridsched: error: policy 'ehosep': option 'limits' names user 'User1', who owns no host of the platform "
        "(owners, by the hosts' 'owner' property: 'user1', 'user2'): its limit would have no effect")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("policy, options, message", [
    ("buc", {"rule": "ema", "up": 0.5},
     "option 'up' has no effect with rule 'ema' (only rule 'threshold' reads it)"),
    ("buc-easy", {"down": 0.5, "rule": "linear"},
     "option 'down' has no effect with rule 'linear' (only rule 'threshold' reads it)"),
    ("buc", {"alpha": 0.5}, "option 'alpha' has no effect with rule 'threshold' (only rule 'ema' reads it)"),
    ("buc", {"gain": 3, "rule": "ema"}, "option 'gain' has no effect with rule 'ema' (only rule 'linear' reads it)"),
    ("buc", {"p0": 0.3, "rule": "ema"},
     "option 'p0' has no effect with rule 'ema' (only rules 'threshold' and 'linear' read it)"),
    ("conservative", {"recompute": True, "rjms_delay": 100},
     "option 'rjms_delay' has no effect with recompute true (its rebuild adds no delay)"),
    ("green-easy", {"delta_min": 5}, "option 'delta_min' has no effect with per_gap false (every job's Δ is delta)"),
    ("green-heft", {"delta_min": 5, "per_gap": False},
     "option 'delta_min' has no effect with per_gap false (every job's Δ is delta)"),
])
def test_an_option_the_chosen_mode_ignores_is_refused(tmp_path: Path, policy: str, options: dict,
                                                      message: str) -> None:
    """Each was accepted and the run made the same decisions as without it, its folder and
    campaign records labelled with a value that was never used."""
    w = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "walltime": 20, "profile": "d",
                                              "user": "u"}])
    code, _, err = run_main(["run", "--policy", policy, "-p", HETERO, "-w", w, "-o", tmp_path / "out",
                             "--no-progress", "--compute-sharing", "--policy-options", json.dumps(options)])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: policy {policy!r}: {message}: drop it (a run would be "
                                   "labelled with a value it never used)")


@pytest.mark.parametrize("policy, options", [
    ("buc", {"rule": "ema", "alpha": 0.5}), ("buc", {"rule": "linear", "gain": 3, "p0": 0.2}),
    ("buc", {"up": 0.1, "down": 0.1, "p0": 0.4}), ("conservative", {"recompute": False, "rjms_delay": 0}),
    ("green-easy", {"per_gap": True, "delta_min": 5}),
])
def test_the_options_each_mode_reads_are_still_accepted(policy: str, options: dict) -> None:
    from schedulers.registry import get_policy

    get_policy(policy, options)


# ------------------------------------------------------------------ gridsched engine, Batsim's command line
def test_a_role_for_a_host_the_platform_does_not_have_is_run_as_batsim_runs_it_with_a_warning(tmp_path: Path) -> None:
    """Real Batsim 4.2.1 runs ``-r unknown:storage -r h0,,zz:compute_node`` without a word, its
    files the same as without the option (recorded: ``batsim -q -p p.xml -w w.json -s
    tcp://127.0.0.1:PORT -e OUT/out -r unknown:storage -r h0,,zz:compute_node`` against
    ``gridsched serve --policy fcfs``, one compute host ``h0`` and one 10 s delay job: out_jobs.csv
    and out_machine_states.csv byte for byte as the engine's). A misspelt host name silently
    gives no host the role: the engine runs it the same and says so, one line a host."""
    import threading

    from schedulers.batsim.server import serve
    from schedulers.registry import get_policy
    from test_engine_zmq import free_port

    w = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}], delay=3)
    port = free_port()
    th = threading.Thread(target=serve, args=(get_policy("fcfs"), f"tcp://127.0.0.1:{port}"),
                          kwargs={"connect_timeout": 20, "idle_timeout": 20}, daemon=True)
    th.start()
    code, _, err = run_main(["engine", "-p", HETERO, "-w", w, "-s", f"tcp://127.0.0.1:{port}", "-e", tmp_path / "out",
                             "--timeout", "20", "-r", "a9:storage", "-r", "b1,,zz:compute_node"])
    th.join(20)
    assert code == 0, err
    assert [ln for ln in err.splitlines() if "warning" in ln] == [
        f"gridsched engine: warning: -r a9:storage: {HETERO} has no host 'a9'; real Batsim 4.2.1 ignores it "
        "(no host gets that role)",
        f"gridsched engine: warning: -r :compute_node: {HETERO} has no host ''; real Batsim 4.2.1 ignores it "
        "(no host gets that role)",
        f"gridsched engine: warning: -r zz:compute_node: {HETERO} has no host 'zz'; real Batsim 4.2.1 ignores it "
        "(no host gets that role)"]
    rows = (tmp_path / "out_jobs.csv").read_text().splitlines()
    # the job on host 0 (a1) from 0 to 3 s: every host still a compute host
    assert rows[1].split(",")[8:11] == ["0.000000", "3.000000", "3.000000"] and rows[1].split(",")[14] == "0"


@pytest.mark.parametrize("flag", ["-e", "--export", "-s", "-m", "--redis-hostname", "--redis-prefix", "--sched-cfg",
                                  "-p", "-w", "--events", "--sg-cfg"])
def test_an_empty_argument_to_a_batsim_option_is_refused_as_batsim_refuses_it(tmp_path: Path, flag: str) -> None:
    """Batsim 4.2.1's parser (docopt) refuses an option followed by an empty argument, printing
    "FLAG requires an argument" and its usage, exit status 255 (recorded: ``batsim -p p.xml -w
    w.json --dump-execution-context -e ''``, and likewise for each flag here). The engine took the
    empty string: ``-e ''`` wrote ``_jobs.csv``... in the current folder. The attached form
    (``--export=``) is an empty value for Batsim too, and for the engine."""
    w = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}])
    base = ["engine", "-p", HETERO, "-w", w, "--dump-execution-context"]
    code, out, err = run_main([*base, flag, ""])
    assert code == 2 and out == ""
    assert one_error_line(err) == (f"gridsched: error: {flag} '': real Batsim 4.2.1 refuses an empty argument "
                                   f"(\"{flag} requires an argument\")")
    code, out, err = run_main([*base, "--export="])
    assert code == 0 and json.loads(out)["export_prefix"] == "", err


# ------------------------------------------------------------------ traces
def test_fit_scale_on_a_trace_is_refused_not_run_as_clamp(tmp_path: Path) -> None:
    """``--fit scale`` on a trace clamped each oversized job to the platform (the conversion report
    said "res clamped to nb_res (oversized='clamp')"): the run was labelled scale and run as
    clamp, and the jobs that fit were left as they were, where scale changes every job's res."""
    swf = tmp_path / "t.swf"
    swf.write_text("; MaxProcs: 1000\n"
                   "1 0 0 100 4 -1 -1 4 200 -1 1 1 -1 -1 -1 -1 -1 -1\n"
                   "2 10 0 50 40 -1 -1 40 100 -1 1 2 -1 -1 -1 -1 -1 -1\n")
    code, _, err = run_main(["run", "--policy", "fcfs", "-p", HETERO, "-w", swf, "-o", tmp_path / "out",
                             "--no-progress", "--fit", "scale"])
    assert code == 2
    assert one_error_line(err) == (
        f"gridsched: error: {swf}: --fit scale applies to JSON workloads; a trace's jobs larger than the platform "
        "are dropped (default) or clamped (--fit clamp); to scale, convert it first (gridsched convert), then "
        "--fit scale scales each res by the platform's hosts / the workload's nb_res")
    assert not (tmp_path / "out").exists()
    # --fit clamp says what it does: job 2 (40 processors, 10 hosts of 4 cores) clamped to the 4 hosts
    code, _, err = run_main(["run", "--policy", "fcfs", "-p", HETERO, "-w", swf, "-o", tmp_path / "o2",
                             "--no-progress", "--fit", "clamp"])
    assert code == 0, err
    rows = [ln.split(",") for ln in (tmp_path / "o2" / "out_jobs.csv").read_text().splitlines()[1:]]
    assert sorted((r[0], r[4]) for r in rows) == [("1", "1"), ("2", "4")]


@pytest.mark.parametrize("trace, more, message", [
    ("t.swf", ["--site", "X"], "{trace}: --site does not apply to a .swf input (it takes: --cores-per-host, "
     "--nb-hosts, --time-origin, --start, --end, --max-jobs, --keep-cancelled, --walltime, --runtime-source, "
     "--no-users, --oversized)"),
    ("t.swf", ["--rescale-mode", "clamp"], "{trace}: --rescale-mode does not apply to a .swf input (it takes: "
     "--cores-per-host, --nb-hosts, --time-origin, --start, --end, --max-jobs, --keep-cancelled, --walltime, "
     "--runtime-source, --no-users, --oversized)"),
    ("w.json", ["--nb-hosts", "2", "--walltime", "none", "--no-users"],
     "{trace}: --walltime, --no-users do not apply to a .json input (it takes: --nb-hosts, --rescale-mode)"),
    ("t.swf", ["--cores-per-host", "0"], "--cores-per-host must be an integer >= 1, got 0"),
    ("t.swf", ["--nb-hosts", "0"], "--nb-hosts must be an integer >= 1, got 0"),
    ("t.swf", ["--start", "10", "--end", "5"], "--end (5.0) must be greater than --start (10.0)"),
    ("t.swf", ["--time-origin", "inf"], "--time-origin must be 'first', 'zero' or a number of seconds, got inf"),
])
def test_convert_names_the_flags_the_user_typed(tmp_path: Path, trace: str, more: list, message: str) -> None:
    """The messages named the converter's Python parameters ("option(s) site, mode do not
    apply...", "cores_per_host must be...", "accepted: ..., profile_kind, ..."), not the flags
    of ``gridsched convert``."""
    (tmp_path / "t.swf").write_text("1 0 0 100 4 -1 -1 4 200 -1 1 1 -1 -1 -1 -1 -1 -1\n")
    write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}])
    path = tmp_path / trace
    code, out, err = run_main(["convert", path, "-o", tmp_path / "o.json", *more])
    assert code == 2 and out == ""
    assert err.splitlines() == ["gridsched convert: error: " + message.format(trace=path)]
    assert not (tmp_path / "o.json").exists()


@pytest.mark.parametrize("policy", ["green-easy", "green-heft"])
@pytest.mark.parametrize("load", ["50", 150, -1, True])
def test_a_cpu_load_per_gap_cannot_read_is_refused_naming_the_job(tmp_path: Path, policy: str, load) -> None:
    """With ``per_gap`` a job's Δ comes from its ``cpu_load`` (%); a string "50", 150 or -1 was
    read as 100 % without a word (Δ = delta_min instead of the Δ the researcher meant)."""
    w = write_workload(tmp_path / "w.json", [
        {"id": 1, "subtime": 0, "res": 4, "walltime": 200, "profile": "d", "cpu_load": 50},
        {"id": 2, "subtime": 0, "res": 4, "walltime": 200, "profile": "d", "cpu_load": load}], delay=100)
    code, _, err = run_main(["run", "--policy", policy, "-p", HETERO, "-w", w, "-o", tmp_path / "out", "--no-progress",
                             "--compute-sharing", "--policy-options", '{"per_gap": true, "delta": 50}'])
    assert code == 2
    assert one_error_line(err) == (
        f"gridsched: error: {w}: job 'w0!2': workload field 'cpu_load' must be a number in [0, 100] (% of CPU load, "
        f"policy {policy!r} with per_gap), got {load!r}")
    assert not (tmp_path / "out").exists()
    # without per_gap the field is not read: the run goes on
    code, _, err = run_main(["run", "--policy", policy, "-p", HETERO, "-w", w, "-o", tmp_path / "o2", "--no-progress",
                             "--compute-sharing", "--policy-options", '{"delta": 50}'])
    assert code == 0, err


@pytest.mark.parametrize("policy", ["osep", "hosep", "ehosep", "own-share"])
def test_an_owner_share_policy_on_a_platform_without_owners_is_refused(tmp_path: Path, policy: str) -> None:
    """No host with an ``owner`` property (forgotten, or spelt ``Owner``): every user owned
    nothing, OSEP, HOSEP and EHOSEP ran as first-come first-served without a preemption, and
    own-share rejected every job; each exited 0, labelled with the policy's name."""
    platform = tmp_path / "p.xml"
    platform.write_text(HETERO.read_text().replace('id="owner"', 'id="Owner"'))
    w = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d", "user": "user1"}])
    code, _, err = run_main(["run", "--policy", policy, "-p", platform, "-w", w, "-o", tmp_path / "out",
                             "--no-progress", "-E"])
    assert code == 2
    assert one_error_line(err) == (
        f"gridsched: error: policy {policy!r} enforces owner shares, but no compute host has the property 'owner' "
        "(<prop id=\"owner\" value=\"USER\"/> in the platform): every user would own nothing")
    code, _, err = run_main(["run", "--policy", policy, "-p", HETERO, "-w", w, "-o", tmp_path / "o2",
                             "--no-progress", "-E"])
    assert code == 0, err   # user1 owns a1 and b2 there


# ------------------------------------------------------------------ campaign reports
def test_a_report_says_how_many_runs_a_mean_is_over_when_some_have_no_value(tmp_path: Path) -> None:
    """A metric with no value in some done runs (no job started: no waiting time) was averaged
    over the others while the n column gave every done run: "12.5 (n = 1)" beside n = 3. The n
    now says "1 of 3", and a paper's number for a group whose runs all lack the metric says so
    rather than "no done run"."""
    toml = tmp_path / "c.toml"
    toml.write_text('name = "c"\nseeds = 3\n[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "g"\n'
                    'generator = "synthetic"\nparams = { hosts = 4, jobs = 5, max_res = 2 }\n'
                    '[report]\nmetrics = ["mean_waiting_time", "makespan"]\n'
                    '[[report.reference]]\nwhere = { policy = "fcfs" }\nmetric = "max_waiting_time"\n'
                    'value = 5.0\nsource = "paper"\n')
    out = tmp_path / "out"
    code, _, err = run_main(["campaign", "run", toml, "--out", out, "--serial", "--no-progress"])
    assert code == 0, err
    records = sorted((out / "results").glob("*.json"))
    assert len(records) == 3
    kept = None
    for k, path in enumerate(records):   # seeds whose runs started no job: two of the three, then all
        rec = json.loads(path.read_text())
        if k < 2:
            rec["summary"]["mean_waiting_time"] = None
        else:
            kept = rec["summary"]["mean_waiting_time"]
        rec["summary"]["max_waiting_time"] = None
        path.write_text(json.dumps(rec))
    code, _, err = run_main(["campaign", "report", out])
    assert code == 0, err
    report = (out / "report.md").read_text()
    from schedulers.campaign import fmt
    assert f"| {fmt.mean_ci(kept)} | 1 of 3 |" in report          # the mean of the one run with a value
    assert "| fcfs | max waiting time (s) | — | 0 of 3 | 5 | paper | — | n/a (no value in its done runs) |" in report
    assert "| 3 |" in report.split("## makespan")[1]                 # every run has a makespan



@pytest.mark.parametrize("line2, message", [
    ("2 10 0 1e12 1 -1 -1 1 200", "{trace}, line 2: job '2': run time (field 4) 1000000000000 s is over 2**33 s "
     "(8589934592), the longest time of a workload gridsched runs"),
    ("2 10 0 77 1 -1 -1 1 1e300", "{trace}, line 2: job '2': requested time (field 9) 1.0000000000000001e+300 s is "
     "over 2**33 s (8589934592), the longest time of a workload gridsched runs"),
    ("2 9e9 0 77 1 -1 -1 1 200", "{trace}: job '2': 'subtime' must be a number of seconds from -8589934592 to 8589934592 "
     "(2**33), got 9000000000 (its submit time after the time origin: keep an earlier part of the trace)"),
])
def test_convert_refuses_a_trace_gridsched_run_would_refuse(tmp_path: Path, line2: str, message: str) -> None:
    """``gridsched convert`` wrote delay 1e12, a 301-digit walltime (1e300 as an integer) or a
    subtime of 9e9 s, a workload that ``gridsched run`` then refused (times are at most 2**33 s,
    docs/reference/formats.md); run refused such a trace, naming the job but not the line. Both now
    refuse it while converting, with the line when the time is the record's own."""
    trace = tmp_path / "t.swf"
    trace.write_text("1 0 0 100 1 -1 -1 1 200 -1 1 1 -1 -1 -1 -1 -1 -1\n"
                     f"{line2} -1 1 1 -1 -1 -1 -1 -1 -1\n")
    code, out, err = run_main(["convert", trace, "-o", tmp_path / "w.json", "--nb-hosts", "4"])
    assert code == 2 and out == ""
    assert err.splitlines() == ["gridsched convert: error: " + message.format(trace=trace)]
    assert not (tmp_path / "w.json").exists()
    code, _, err = run_main(["run", "--policy", "fcfs", "-p", HETERO, "-w", trace, "-o", tmp_path / "out",
                             "--no-progress", "--cores-per-host", "1"])
    assert code == 2
    assert one_error_line(err) == "gridsched: error: " + message.format(trace=trace)
    # at 2**33 s exactly each is a workload time gridsched runs
    trace.write_text("1 0 0 100 1 -1 -1 1 200 -1 1 1 -1 -1 -1 -1 -1 -1\n"
                     f"2 {2 ** 33} 0 {2 ** 33} 1 -1 -1 1 {2 ** 33} -1 1 1 -1 -1 -1 -1 -1 -1\n")
    code, _, err = run_main(["convert", trace, "-o", tmp_path / "w.json", "--nb-hosts", "4"])
    assert code == 0, err
    job2 = json.loads((tmp_path / "w.json").read_text())["jobs"][1]
    assert (job2["subtime"], job2["walltime"]) == (2 ** 33, 2 ** 33)


# ------------------------------------------------------------------ --fit on JSON workloads
def test_fit_drop_that_drops_every_job_is_refused_as_a_trace_without_jobs_is(tmp_path: Path) -> None:
    """``--fit drop`` on a workload whose every job is larger than the platform ran a simulation
    of no job, exit status 0 ("jobs 0"); a trace whose every job is dropped is refused. Both are
    refused now, saying why; so is ``gridsched convert --rescale-mode drop``."""
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 10, "jobs": [{"id": i, "subtime": 0, "res": 9, "profile": "d"} for i in (1, 2)],
                             "profiles": {"d": {"type": "delay", "delay": 5}}}))
    message = f"{w}: no job to simulate: none of its 2 job(s) is kept (2 res > 4 hosts (mode='drop'))"
    code, _, err = run_main(["run", "--policy", "fcfs", "-p", HETERO, "-w", w, "-o", tmp_path / "out", "--no-progress",
                             "--fit", "drop"])
    assert code == 2
    assert one_error_line(err) == f"gridsched: error: {message}"
    assert not (tmp_path / "out").exists()
    code, out, err = run_main(["convert", w, "-o", tmp_path / "c.json", "--nb-hosts", "4", "--rescale-mode", "drop"])
    assert code == 2 and err.splitlines() == [f"gridsched convert: error: {message}"]
    assert not (tmp_path / "c.json").exists()


def test_fit_clamp_does_not_say_it_scaled_and_fit_scale_says_what_it_divided_by(tmp_path: Path) -> None:
    """Without a valid ``nb_res`` (0 here), ``--fit clamp`` noted "no valid nb_res: scaled from
    the largest res (9)" though it scales nothing, and ``--fit scale`` said it divided by "nb_res
    0 of the file" while it divided by the largest res, 9: res 9 x 4 hosts / 9 = 4."""
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 0, "jobs": [{"id": 1, "subtime": 0, "res": 9, "profile": "d"}],
                             "profiles": {"d": {"type": "delay", "delay": 5}}}))
    code, out, err = run_main(["run", "--policy", "fcfs", "-p", HETERO, "-w", w, "-o", tmp_path / "c", "--no-progress",
                               "--fit", "clamp"])
    assert code == 0, err
    assert "scaled" not in err and "  note           1  res clamped to 4" in err.splitlines()
    code, out, err = run_main(["run", "--policy", "fcfs", "-p", HETERO, "-w", w, "-o", tmp_path / "s", "--no-progress",
                               "--fit", "scale"])
    assert code == 0, err
    assert ("  every job's res x 4 hosts / its largest res 9 (no valid nb_res), rounded up: its share of the machine "
            "(jobs that fit too)") in err.splitlines()
    assert json.loads((tmp_path / "s" / "workload_w0.json").read_text())["jobs"][0]["res"] == 4


# ------------------------------------------------------------------ energy: nonsense real Batsim runs
@pytest.mark.parametrize("sleep", ["2:2:2", "1:1:2"])
def test_a_sleep_pstate_that_is_its_own_switching_pstate_runs_as_batsim_runs_it_with_a_warning(
        tmp_path: Path, sleep: str) -> None:
    """``sleep_pstates="2:2:2"`` (or ``1:1:2``) makes pstate 2 (1) a sleep pstate and a virtual
    transition one; Batsim 4.2.1 classes it a transition pstate, which no request can reach.
    Recorded with real Batsim 4.2.1 (``gridsched run --engine batsim --policy easy -E -p e2.xml -w
    w2.json --policy-options '{"idle_timeout": 5}'``, PATH holding Batsim 4.2.1, two hosts of
    pstates ``100Mf,1f,2f,1f``): the run starts, the first switch to sleep never completes and
    Batsim ends at a deadlock; the engine's files are the same, byte for byte. Batsim says nothing
    when it reads the platform: the engine runs it the same, with one warning line naming the first
    such host and how many more."""
    hosts = "".join(f'<host id="h{i}" speed="100Mf,1f,2f,1f"><prop id="wattage_per_state" value="100:200, 10:10, '
                    f'90:150, 125:125"/><prop id="sleep_pstates" value="{sleep}"/></host>' for i in (0, 1))
    platform = tmp_path / "e2.xml"
    platform.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                        '<platform version="4.1"><zone id="z" routing="Full"><host id="master_host" speed="100Mf"/>'
                        f"{hosts}</zone></platform>\n")
    w = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}])
    code, _, err = run_main(["run", "--policy", "fcfs", "-p", platform, "-w", w, "-o", tmp_path / "out",
                             "--no-progress", "-E"])
    assert code == 0, err
    p = sleep.split(":")[0]
    assert [ln for ln in err.splitlines() if "warning" in ln] == [
        f"gridsched: warning: {platform}: host 'h0' (and 1 more): sleep_pstates {sleep!r}: pstate {p} is a sleep "
        "pstate and a virtual transition one, which no request can reach: real Batsim 4.2.1 runs it, and a switch to "
        "it never completes"]


def test_a_campaign_run_again_after_its_policy_file_was_edited_runs_it_again(tmp_path: Path) -> None:
    """A policy of the user's own code (``FILE.py:Class``) edited between two ``campaign run``:
    the runs were "already present" and the first code's results were reported under the same
    label. The file defining the class is now part of the run's identity, as a file scenario's
    workload is. One 3 s job on hetero4.xml: FCFS runs it (makespan 3 s), the edited policy
    rejects it (makespan 0, rejected 1)."""
    from schedulers.campaign.collect import load_records

    pol = tmp_path / "mine.py"
    pol.write_text("from schedulers.fcfs import FCFS\n\nclass Mine(FCFS):\n    name = 'mine'\n")
    w = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}], delay=3)
    toml = tmp_path / "c.toml"
    toml.write_text(f'[[policy]]\nname = "{pol}:Mine"\n[[scenario]]\nname = "f"\nplatform = "{HETERO}"\n'
                    f'workloads = ["{w.name}"]\n')
    out = tmp_path / "cout"
    code, _, err = run_main(["campaign", "run", toml, "--out", out, "--serial", "--no-progress"])
    assert code == 0, err
    pol.write_text("from schedulers.core.policy import Policy\n\nclass Mine(Policy):\n    name = 'mine'\n\n"
                   "    def on_job_submitted(self, job):\n        self.reject(job)\n")
    # (this process imported the first version: it imports the edited file again, as a new
    # `gridsched` process or a long-lived Dask worker must)
    code, stdout, err = run_main(["campaign", "run", toml, "--out", out, "--serial", "--no-progress"])
    assert code == 0, err
    assert "ran 1 (0 failed), 0 already present" in stdout
    from schedulers.campaign.spec import load_campaign
    (run,) = load_campaign(toml).runs()
    (rec,) = [r for r in load_records(out) if r["id"] == run.id]
    assert (rec["summary"]["rejected"], rec["summary"]["makespan"]) == (1, 0.0)
    # unchanged, it is present; a registered policy's run id does not change
    code, stdout, _ = run_main(["campaign", "run", toml, "--out", out, "--serial", "--no-progress"])
    assert code == 0 and "ran 0 (0 failed), 1 already present" in stdout
    assert run.policy_sha256 is not None and len(run.policy_sha256) == 64
    toml.write_text(toml.read_text().replace(f"{pol}:Mine", "fcfs"))
    (builtin,) = load_campaign(toml).runs()
    assert builtin.policy_sha256 is None and "policy_sha256" not in builtin.identity()


# ------------------------------------------------------------------ utilisation under compute sharing
def test_utilisation_under_compute_sharing_counts_a_shared_host_once(tmp_path: Path) -> None:
    """green-easy (Δ = 90 %, compute sharing) starts job 3 (2 hosts, 150 s) at t = 1 beside job 1
    (hosts 0-1, 0-99 s); job 2 (4 hosts) starts at 100, sharing hosts 2-3 with job 3 until 151.
    Busy time: hosts 0-1 [0, 99) and [100, 199): 198 s each; hosts 2-3 [1, 199): 198 s each; 792
    host-s over 4 hosts x 199 s = 0.994975 (99.5 %). The sum of res x execution (2 x 99 + 2 x 150
    + 4 x 99 = 894 host-s) gave 112.3 %, and summary.json 1.123: a utilisation above 1."""
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": 1, "subtime": 0, "res": 2, "walltime": 100, "profile": "a"},
        {"id": 2, "subtime": 0.5, "res": 4, "walltime": 100, "profile": "a"},
        {"id": 3, "subtime": 1, "res": 2, "walltime": 200, "profile": "b"}],
        "profiles": {"a": {"type": "delay", "delay": 99}, "b": {"type": "delay", "delay": 150}}}))
    out = tmp_path / "out"
    code, stdout, err = run_main(["run", "--policy", "green-easy", "-p", HETERO, "-w", w, "-o", out, "--no-progress",
                                  "--compute-sharing", "--policy-options", '{"delta": 90}'])
    assert code == 0, err
    rows = {r.split(",")[0]: r.split(",") for r in (out / "out_jobs.csv").read_text().splitlines()[1:]}
    assert [(rows[i][8], rows[i][14]) for i in "123"] == [("0.000000", "0-1"), ("100.000000", "0-3"),
                                                          ("1.000000", "2-3")]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["utilisation"] == pytest.approx(792 / (4 * 199), abs=1e-12)
    assert "utilisation           99.5 %" in stdout.splitlines()
    # the files read back give the same number; the campaign path too
    from schedulers.core.metrics import summarize_outputs
    assert summarize_outputs(out / "out_", 4, compute_sharing=True).utilisation == summary["utilisation"]
    from schedulers.campaign.execute import summary_of_result
    from schedulers.engine import simulate
    from schedulers.registry import get_policy
    result = simulate(HETERO, [str(w)], get_policy("green-easy", {"delta": 90}), compute_sharing=True)
    assert summary_of_result(result, 4, False, compute_sharing=True)["utilisation"] == summary["utilisation"]


def test_a_line_plot_says_which_groups_it_leaves_out_for_want_of_x(tmp_path: Path) -> None:
    """An axis of conservative's option ``rjms_delay`` does not apply to fcfs: its runs have no x,
    and the line plot by ``rjms_delay`` dropped the fcfs series without a word."""
    toml = tmp_path / "c.toml"
    toml.write_text('name = "c"\nseeds = 2\n[[policy]]\nname = "fcfs"\n[[policy]]\nname = "conservative"\n'
                    '[[scenario]]\nname = "g"\ngenerator = "synthetic"\nparams = { hosts = 4, jobs = 5, max_res = 2 }\n'
                    '[axes]\nrjms_delay = [0, 5]\n[report]\nmetrics = ["makespan"]\n'
                    '[[report.plot]]\nkind = "line"\nmetric = "makespan"\nx = "rjms_delay"\nhue = "policy"\n')
    out = tmp_path / "out"
    code, _, err = run_main(["campaign", "run", toml, "--out", out, "--serial", "--no-progress", "--report"])
    assert code == 0, err
    lines = (out / "report.md").read_text().splitlines()
    k = lines.index("![makespan (s) by rjms delay](plots/line_makespan_by_rjms_delay_policy.png)")
    assert lines[k + 2] == "- Not in this plot: policy fcfs, which has no rjms delay (the axis does not apply to it)."


def test_an_swf_status_that_is_no_integer_is_unknown_as_in_gwf(tmp_path: Path) -> None:
    """SWF field 11 ``5.5`` was truncated to 5 (cancelled: the job dropped) and ``1.5`` to 1
    (completed); the GWF reader reads such a status as unknown (-1, the job kept and noted)."""
    swf = tmp_path / "t.swf"
    swf.write_text("1 0 0 100 1 -1 -1 1 200 -1 5.5 1 -1 -1 -1 -1 -1 -1\n"
                   "2 0 0 100 1 -1 -1 1 200 -1 1.5 1 -1 -1 -1 -1 -1 -1\n"
                   "3 0 0 100 1 -1 -1 1 200 -1 5 1 -1 -1 -1 -1 -1 -1\n")
    code, out, err = run_main(["convert", swf, "-o", tmp_path / "w.json"])
    assert code == 0, err
    assert f"{swf} (swf): 3 records read, 2 jobs kept, 1 dropped" in out.splitlines()
    assert "  note           2  status unknown (field 11 = -1), job kept" in out.splitlines()
    assert [j["id"] for j in json.loads((tmp_path / "w.json").read_text())["jobs"]] == ["1", "2"]


def test_a_trace_on_hosts_of_different_core_counts_says_which_count_makes_a_host(tmp_path: Path) -> None:
    """``--cores-per-host`` defaults to the platform's cores; on hosts of 2 and 8 cores the fewest
    (2) was taken without a word: a 8-processor job became 4 hosts. The conversion note says so."""
    platform = tmp_path / "p.xml"
    platform.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                        '<platform version="4.1"><zone id="z" routing="Full"><host id="master_host" speed="1Gf"/>'
                        '<host id="a" speed="1Gf" core="2"/><host id="b" speed="1Gf" core="8"/>'
                        '<host id="c" speed="1Gf" core="8"/><host id="d" speed="1Gf" core="8"/></zone></platform>\n')
    swf = tmp_path / "t.swf"
    swf.write_text("1 0 0 100 8 -1 -1 8 200 -1 1 1 -1 -1 -1 -1 -1 -1\n")
    code, _, err = run_main(["run", "--policy", "fcfs", "-p", platform, "-w", swf, "-o", tmp_path / "out",
                             "--no-progress"])
    assert code == 0, err
    assert ("  the platform's hosts have 2 to 8 cores: a host is 2 processors, the fewest (--cores-per-host N to "
            "choose)") in err.splitlines()
    assert json.loads((tmp_path / "out" / "workload_w0.json").read_text())["jobs"][0]["res"] == 4
    code, _, err = run_main(["run", "--policy", "fcfs", "-p", platform, "-w", swf, "-o", tmp_path / "o2",
                             "--no-progress", "--cores-per-host", "8"])
    assert code == 0 and "the fewest" not in err


@pytest.mark.parametrize("command", ["run", "serve"])
def test_policy_options_at_sign_without_a_file_name_says_so(tmp_path: Path, command: str) -> None:
    """``--policy-options @`` said "--policy-options: : no such options file" (an empty name)."""
    w = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}])
    argv = (["run", "--policy", "fcfs", "-p", HETERO, "-w", w, "-o", tmp_path / "out", "--no-progress"]
            if command == "run" else ["serve", "--policy", "fcfs", "--connect-timeout", "1"])
    code, _, err = run_main([*argv, "--policy-options", "@"])
    assert code == 2
    lead = "gridsched: error: " if command == "run" else "gridsched serve: "
    assert err.splitlines() == [f"{lead}--policy-options @: no file name after '@' (@FILE reads the options from FILE)"]


def test_a_policy_file_edited_is_imported_again_by_the_same_process(tmp_path: Path) -> None:
    """A long-lived process (a Dask worker of ``--scheduler-address``, a notebook) asked again
    for ``FILE.py:Class`` after the file was edited runs the new code, even an edit of the same
    size within the same second (no bytecode cache in the way); an unchanged file is not imported
    again (the same class)."""
    from schedulers.registry import policy_class

    pol = tmp_path / "mine.py"
    pol.write_text("from schedulers.fcfs import FCFS\n\nclass Mine(FCFS):\n    name = 'mine'\n    K = 1\n")
    first = policy_class(f"{pol}:Mine")
    assert first.K == 1 and policy_class(f"{pol}:Mine") is first
    pol.write_text("from schedulers.fcfs import FCFS\n\nclass Mine(FCFS):\n    name = 'mine'\n    K = 2\n")
    second = policy_class(f"{pol}:Mine")
    assert second.K == 2 and second is not first
    assert second.__module__ != first.__module__   # (each version its own module, as workers name it)
