"""Bad input, fifth round: campaigns that ran what ``gridsched run`` refuses, and left the
difference out of their numbers or said it in words that do not name the cause.

Each test runs the command as a user would (``schedulers.cli.main``) and checks the exit status,
the one error line (its words, the file and item named) or the number, worked out by hand.
"""

from __future__ import annotations

import csv
import gzip
import json
import shutil
from pathlib import Path

import pytest
from helpers_cli import one_error_line, run_main

FIX = Path(__file__).parent / "fixtures"
HETERO = FIX / "hetero4.xml"   # 4 compute hosts a1 a2 b1 b2 (100, 200, 100, 50 Mf), 4 cores each


def _records(out: Path) -> list[dict]:
    from schedulers.campaign.collect import load_records

    return load_records(out)


# ------------------------------------------------------------ jobs larger than the platform
def test_a_campaign_refuses_a_job_larger_than_its_platform_as_run_does(tmp_path: Path) -> None:
    """A job of 9 hosts on the 4 hosts of hetero4.xml: ``gridsched run`` refuses the workload
    (``--fit error``, its default), but a campaign ran it as Batsim does: FCFS rejected the job,
    the run was "done" and its mean waiting time (0 s, job 'a' alone, started at its submission)
    left job 'big' out without a word. The run now fails with the line ``gridsched run`` gives,
    naming the file, the job and both sizes, and how to rescale the file."""
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": "a", "subtime": 0, "walltime": 100, "res": 1, "profile": "d"},
        {"id": "big", "subtime": 1, "walltime": 100, "res": 9, "profile": "d"}],
        "profiles": {"d": {"type": "delay", "delay": 10}}}))
    code, _, err = run_main(["run", "--policy", "fcfs", "-p", HETERO, "-w", w, "-o", tmp_path / "alone",
                             "--no-progress"])
    assert code == 2
    assert f"{w}: job 'big': requests 9 hosts but the platform has 4 compute hosts" in one_error_line(err)

    toml = tmp_path / "c.toml"
    toml.write_text(f'[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "f"\nplatform = "{HETERO}"\n'
                    'workloads = ["w.json"]\n')
    code, stdout, _ = run_main(["campaign", "run", toml, "--out", tmp_path / "out", "--serial", "--no-progress"])
    assert code == 1 and "1 done" not in stdout
    (rec,) = _records(tmp_path / "out")
    assert rec["status"] == "failed" and rec["summary"] is None
    assert rec["error"] == (f"WorkloadError: {w}: job 'big': requests 9 hosts but the platform has 4 compute "
                            "hosts (a campaign refuses it as gridsched run does; rescale the file first: gridsched "
                            f"convert {w} --nb-hosts 4 -o NEW.json, with --rescale-mode clamp or drop to change "
                            "only the jobs too large)")

    # the job made to fit (4 hosts): the run is done; 'a' holds a1 from 0 to 10 s, so 'big'
    # (submitted at 1 s) starts at 10 s: waiting times 0 and 9 s, mean 4.5 s, makespan 20 s
    w.write_text(w.read_text().replace('"res": 9', '"res": 4'))
    code, _, _ = run_main(["campaign", "run", toml, "--out", tmp_path / "out", "--serial", "--no-progress"])
    assert code == 0
    (rec,) = [r for r in _records(tmp_path / "out") if r["status"] == "done"]
    assert rec["summary"]["mean_waiting_time"] == 4.5 and rec["summary"]["makespan"] == 20.0
    assert rec["summary"]["rejected"] == 0


def test_a_campaign_refuses_a_compute_host_real_batsim_refuses_as_run_does(tmp_path: Path) -> None:
    """hetero4.xml with host b2 at speed "0f": real Batsim 4.2.1 aborts as it creates its machines
    ("host 'b2' is a compute node but has an invalid (non-positive) computing speed", recorded
    with ``batsim -p p.xml -w w.json -e out``) and ``gridsched run`` refuses it, but a campaign
    ran it on the engine (which, as SimGrid, accepts it): with delay jobs the run was "done",
    with numbers of a platform Batsim never runs. The run now fails with ``gridsched run``'s line."""
    p = tmp_path / "p.xml"
    p.write_text(HETERO.read_text().replace('id="b2" speed="50Mf"', 'id="b2" speed="0f"'))
    assert 'speed="0f"' in p.read_text()
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": "a", "subtime": 0, "res": 4, "profile": "d"}],
                             "profiles": {"d": {"type": "delay", "delay": 10}}}))
    code, _, err = run_main(["run", "--policy", "fcfs", "-p", p, "-w", w, "-o", tmp_path / "alone", "--no-progress"])
    words = f"{p}: host 'b2': computation pstate 0 has speed 0 flops/s; Batsim 4.2.1 needs a speed > 0 on a compute host"
    assert code == 2 and one_error_line(err) == f"gridsched: error: {words}"
    toml = tmp_path / "c.toml"
    toml.write_text('[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "f"\nplatform = "p.xml"\nworkloads = ["w.json"]\n')
    code, _, _ = run_main(["campaign", "run", toml, "--out", tmp_path / "out", "--serial", "--no-progress"])
    assert code == 1
    (rec,) = _records(tmp_path / "out")
    assert rec["status"] == "failed" and rec["error"] == f"PlatformError: {words}"


def test_gridsched_engine_refuses_a_compute_host_real_batsim_refuses(tmp_path: Path) -> None:
    """``gridsched engine`` plays Batsim with Batsim's flags, but ran the platform above (b2 at
    speed 0) that real Batsim 4.2.1 aborts on as it creates its machines; it now refuses it before
    it waits for a scheduler, in one line, with nothing written."""
    p = tmp_path / "p.xml"
    p.write_text(HETERO.read_text().replace('id="b2" speed="50Mf"', 'id="b2" speed="0f"'))
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "d"}],
                             "profiles": {"d": {"type": "delay", "delay": 10}}}))
    (tmp_path / "o").mkdir()
    code, _, err = run_main(["engine", "-p", p, "-w", w, "-e", tmp_path / "o" / "out", "-s", "tcp://127.0.0.1:9",
                             "--timeout", "5"])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: {p}: host 'b2': computation pstate 0 has speed 0 flops/s; "
                                   "Batsim 4.2.1 needs a speed > 0 on a compute host")
    assert list((tmp_path / "o").iterdir()) == []


# ------------------------------------------------------------------ traces in a campaign
def test_a_trace_as_a_campaign_workload_is_refused_when_the_file_is_read(tmp_path: Path) -> None:
    """``gridsched run -w t.swf`` converts the trace; a campaign does not, and each of its runs
    failed with "WorkloadError: t.swf: malformed JSON at line 1, column 1: Expecting value", a
    cause the user had to guess. The campaign file is now refused before any run, in one line
    naming the key and saying what to do."""
    (tmp_path / "t.swf").write_text("; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 20 -1 1 1 -1 -1 -1 -1 -1 -1\n")
    toml = tmp_path / "c.toml"
    toml.write_text(f'[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "f"\nplatform = "{HETERO}"\n'
                    'workloads = ["t.swf"]\n')
    code, _, err = run_main(["campaign", "run", toml, "--out", tmp_path / "out", "--serial", "--no-progress"])
    assert code == 2
    assert one_error_line(err) == (
        f"gridsched: error: {toml}: scenario[0].workloads[0]: 't.swf' is an SWF/GWF trace, and a campaign runs "
        "Batsim JSON workloads as they are: convert it first (gridsched convert t.swf -o NEW.json; --nb-hosts N "
        "for the platform's hosts)")
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------ what needs Batsim's energy model
def test_what_needs_the_energy_model_is_refused_for_a_campaign_run_without_it(tmp_path: Path) -> None:
    """``idle_timeout`` without ``energy``: ``gridsched run`` refuses it (Batsim 4.2.1 aborts on
    SET_RESOURCE_STATE without ``-E``); a campaign ran it, and the run failed only when a host
    was first switched, or was "done" when none was. The run metrics ``green-energy`` and
    ``ehosep`` read the energy outputs: each run failed, naming a temporary file
    (``/tmp/gridsched-.../out_consumed_energy.csv: cannot read``). All are now refused when the
    campaign is read, in one line naming the run and the setting to add; with ``energy =
    [true, false]`` as an axis, the runs without energy are the ones named."""
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "d"}],
                             "profiles": {"d": {"type": "delay", "delay": 10}}}))
    scenario = f'[[scenario]]\nname = "f"\nplatform = "{HETERO}"\nworkloads = ["w.json"]\n'
    cases = [('[[policy]]\nname = "easy"\noptions = {idle_timeout = 60}\n' + scenario,
              "run policy=easy scenario=f: policy option 'idle_timeout' switches hosts to their sleep pstate, "
              "which Batsim allows only with its energy model: set energy = true"),
             ('[[policy]]\nname = "easy"\noptions = {idle_timeout = 60}\n' + scenario + "[axes]\nenergy = [true, false]\n",
              "run policy=easy scenario=f energy=False: policy option 'idle_timeout'"),
             ('metrics = ["green-energy"]\n[[policy]]\nname = "fcfs"\n' + scenario,
              "run policy=fcfs scenario=f: run metric 'green-energy' reads the energy outputs, which a run has only "
              "with Batsim's energy model: set energy = true"),
             ('metrics = ["satisfaction", "ehosep"]\n[[policy]]\nname = "fcfs"\n' + scenario,
              "run policy=fcfs scenario=f: run metric 'ehosep' reads the energy outputs")]
    for text, words in cases:
        toml = tmp_path / "c.toml"
        toml.write_text(text)
        code, _, err = run_main(["campaign", "run", toml, "--out", tmp_path / "out", "--serial", "--no-progress"])
        assert code == 2, text
        assert one_error_line(err).startswith(f"gridsched: error: {toml}: {words}"), err
        assert not (tmp_path / "out").exists()
    # with energy the same option and metric are accepted
    toml.write_text('energy = true\nmetrics = ["green-energy"]\n[[policy]]\nname = "easy"\n'
                    'options = {idle_timeout = 60}\n' + scenario)
    from schedulers.campaign.spec import load_campaign

    (run,) = load_campaign(toml).runs()
    assert run.engine["energy"] is True and run.policy_options == {"idle_timeout": 60}


# ------------------------------------------------------------- platforms real Batsim refuses
def _two_hosts(tmp_path: Path, watts: str) -> Path:
    p = tmp_path / "p.xml"
    hosts = "".join(f'<host id="h{i}" speed="1Gf,0.5Gf"><prop id="wattage_per_state" value="{watts}"/>'
                    '<prop id="wattage_off" value="10"/></host>' for i in range(2))
    p.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                 '<platform version="4.1"><zone id="z" routing="Full"><host id="master_host" speed="1Gf">'
                 f'<prop id="wattage_per_state" value="100:200"/></host>{hosts}</zone></platform>')
    return p


def test_a_power_followed_by_blanks_is_refused_with_energy_as_simgrid_refuses_it(tmp_path: Path) -> None:
    """SimGrid 3.32's energy plugin reads each power of ``wattage_per_state`` with
    ``xbt_str_parse_double``: ``strtod`` must read the whole text, so blanks may come before a
    number but not after it. Real Batsim 4.2.1 ``-E`` aborts on ``"100 :150:200, 90:100:120"``
    ("Uncaught exception std::invalid_argument: Invalid Idle value for pstate 0 on host h0: 100 ";
    likewise "Invalid Epsilon value" for ``"100:150 :200"`` and "Invalid AllCores value for pstate
    1" for ``"..., 90:100:120 "``; "Invalid Idle value for pstate 0 on host h0: 1_00" for
    ``"1_00:200, 90:120"``, which Python's float reads as 100), while the engine read the powers
    stripped and gave a result. Recorded with real Batsim 4.2.1 on this platform: ``batsim -p
    p.xml -w w.json -e out -E`` aborts as it loads the platform. ``" 100: 150: 200, 90:100:120"`` (blanks before the numbers only) runs on both: one
    2e9-flop job on both 1 Gf hosts, 2 s at 200 W each (AllCores, one core busy of one), 800 J,
    as real Batsim wrote in out_schedule.csv (consumed_joules 800.000000)."""
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 2, "jobs": [{"id": "a", "subtime": 0, "res": 2, "profile": "c"}],
                             "profiles": {"c": {"type": "parallel_homogeneous", "cpu": 2e9, "com": 0}}}))
    for watts, what, pstate, part in (("100 :150:200, 90:100:120", "Idle", 0, "100 "),
                                      ("100:150 :200, 90:100:120", "Epsilon", 0, "150 "),
                                      ("100:150:200, 90:100:120 ", "AllCores", 1, "120 "),
                                      ("1_00:200, 90:120", "Idle", 0, "1_00")):
        p = _two_hosts(tmp_path, watts)
        code, _, err = run_main(["run", "--policy", "fcfs", "-p", p, "-w", w, "-o", tmp_path / "o", "-E",
                                 "--no-progress"])
        assert code == 2, watts
        line = one_error_line(err)
        assert line.startswith(f"gridsched: error: {p}: host 'h0': wattage_per_state entry {pstate} is "), line
        assert f"(\"Invalid {what} value for pstate {pstate} on host h0: {part}\")" in line, line
        assert line.endswith("(SimGrid's energy plugin aborts with -E)"), line
        assert not (tmp_path / "o").exists()
        # without -E the plugin reads nothing: the run is Batsim's (2e9 flops at 1 Gf: 2 s)
        code, _, _ = run_main(["run", "--policy", "fcfs", "-p", p, "-w", w, "-o", tmp_path / "o", "--no-progress"])
        assert code == 0
        assert json.loads((tmp_path / "o" / "summary.json").read_text())["makespan"] == 2.0
        shutil.rmtree(tmp_path / "o")
    p = _two_hosts(tmp_path, " 100: 150: 200, 90:100:120")
    code, _, _ = run_main(["run", "--policy", "fcfs", "-p", p, "-w", w, "-o", tmp_path / "o", "-E", "--no-progress"])
    assert code == 0
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["energy_joules"] == 800.0


# ------------------------------------------------------------------- owner-share policies
def test_own_share_refuses_a_job_without_user_as_the_other_owner_share_policies_do(tmp_path: Path) -> None:
    """osep, hosep and ehosep refuse a workload whose job has no 'user' field ("policy 'osep'
    needs the user of every job"); own-share took it for a user owning no host and rejected it,
    so the run ended with exit status 0 and the job counted among the rejected, as if its user
    had no share. It is refused now with the same line. Job 'b' of user1 (who owns a1 and b2 in
    hetero4.xml) alone then runs: 1 host, 1e9 flops at 100 Mf (a1, the most powerful of user1's
    idle hosts), 10 s: from 1 s to 11 s."""
    jobs = [{"id": "a", "subtime": 0, "walltime": 100, "res": 1, "profile": "c"},
            {"id": "b", "subtime": 1, "walltime": 100, "res": 1, "profile": "c", "user": "user1"}]
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": jobs,
                             "profiles": {"c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}}))
    code, _, err = run_main(["run", "--policy", "own-share", "-p", HETERO, "-w", w, "-o", tmp_path / "o",
                             "--no-progress"])
    assert code == 2
    assert one_error_line(err) == (f"gridsched: error: {w}: job 'w0!a' has no workload field 'user': policy "
                                   "'own-share' needs the user of every job")
    w.write_text(json.dumps({"nb_res": 4, "jobs": jobs[1:],
                             "profiles": {"c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}}))
    code, _, _ = run_main(["run", "--policy", "own-share", "-p", HETERO, "-w", w, "-o", tmp_path / "o",
                           "--no-progress"])
    assert code == 0
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert (summary["success"], summary["rejected"], summary["makespan"]) == (1, 0, 11.0)



def test_osep_counts_the_hosts_of_a_multi_host_task_in_a_users_deficit(tmp_path: Path) -> None:
    """OSEP's deficit is ``f_u = hosts owned - active tasks`` (001 L356), where the papers' tasks
    hold one host each. A task of 4 hosts counted as 1: user2 (owning a2 and b1 of hetero4.xml)
    running job 'a' on all four hosts had f = 2 - 1 = +1, a deficit, so user1 (owning a1 and b2)
    never got its share back: its job 'b' waited until 'a' ended at 400 s (waiting 390 s); on
    the Lille campaign's real multi-host jobs OSEP made no preemption in any run. Counted in
    hosts, f(user2) = 2 - 4 = -2 at 'b''s arrival (t = 10 s, ``period`` 0: a round after every
    message): 'a' (user2's only active task) is preempted, 'b' starts at once on the lowest ids
    0-1 (a1, a2; OSEP sees hosts as equal) and computes 1e9 flops at the slower a1's 100 Mf in
    10 s; 'a' runs again (a#1) when 'b' ends, on the four hosts at b2's 50 Mf: 2e10 / 5e7 = 400 s,
    from 20 to 420 s."""
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": "a", "subtime": 0, "walltime": 1000, "res": 4, "profile": "long", "user": "user2"},
        {"id": "b", "subtime": 10, "walltime": 1000, "res": 2, "profile": "short", "user": "user1"}],
        "profiles": {"long": {"type": "parallel_homogeneous", "cpu": 2e10, "com": 0},
                     "short": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}}))
    code, _, err = run_main(["run", "--policy", "osep", "--policy-options", '{"period": 0}', "-p", HETERO, "-w", w,
                             "-o", tmp_path / "o", "--no-progress"])
    assert code == 0, err
    with open(tmp_path / "o" / "out_jobs.csv", newline="") as f:
        rows = {r["job_id"]: r for r in csv.DictReader(f)}
    got = {k: (r["final_state"], float(r["starting_time"]), float(r["finish_time"]), r["allocated_resources"])
           for k, r in rows.items()}
    assert got == {"a": ("COMPLETED_KILLED", 0.0, 10.0, "0-3"), "b": ("COMPLETED_SUCCESSFULLY", 10.0, 20.0, "0-1"),
                   "a#1": ("COMPLETED_SUCCESSFULLY", 20.0, 420.0, "0-3")}
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert (summary["tasks"], summary["preemptions"], summary["restarts"]) == (2, 1, 1)


def test_wattage_off_is_read_as_simgrid_reads_it(tmp_path: Path) -> None:
    """SimGrid 3.32's energy plugin reads ``wattage_off`` with ``std::stod``: its leading number,
    whatever follows ("10W" is 10 W); only a text that starts with no number aborts ("Invalid
    value for property wattage_off of host a2: abc"). The engine read it with Python's float and
    refused "10W" with -E (with --engine batsim too, before Batsim started), where real Batsim 4.2.1
    runs it: hetero4.xml with a2's wattage_off "10W" and one 10 s delay job gives consumed_joules
    4000.000000 (4 hosts at their idle 100 W for 10 s; a delay leaves its host idle), recorded with
    ``PATH=/work/scratch/bin:$PATH gridsched run --engine batsim -E``."""
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "d"}],
                             "profiles": {"d": {"type": "delay", "delay": 10}}}))
    old = '<host id="a2" speed="200Mf" core="4"><prop id="wattage_per_state" value="100.0:114.67:200.0"/><prop id="wattage_off" value="10"/>'
    assert old in HETERO.read_text()
    for value, code_wanted in (("10W", 0), ("abc", 2)):
        p = tmp_path / f"p_{value}.xml"
        p.write_text(HETERO.read_text().replace(old, old.replace('value="10"', f'value="{value}"')))
        code, _, err = run_main(["run", "--policy", "fcfs", "-p", p, "-w", w, "-o", tmp_path / value, "-E",
                                 "--no-progress"])
        assert code == code_wanted, err
    assert json.loads((tmp_path / "10W" / "summary.json").read_text())["energy_joules"] == 4000.0
    assert one_error_line(err) == (f"gridsched: error: {tmp_path / 'p_abc.xml'}: host 'a2': wattage_off 'abc' is not a "
                                   "number (\"Invalid value for property wattage_off of host a2: abc\") (SimGrid's "
                                   "energy plugin aborts with -E)")


def test_energy_on_hosts_without_power_is_refused_before_real_batsim_starts(tmp_path: Path) -> None:
    """With -E, a compute host without ``wattage_per_state`` makes real Batsim 4.2.1 abort at its
    first energy read, the first job's submission ("No power range properties specified for host
    h0", after a warning per host; recorded with ``gridsched run --engine batsim -E``). The
    embedded engine refuses it in one line; ``--engine batsim`` (and a campaign with simulator =
    "batsim") started Batsim and reported its abort with its log. The line is now the same on
    both, before Batsim is started (here an executable that does not exist is never looked for)."""
    p = tmp_path / "p.xml"
    p.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                 '<platform version="4.1"><zone id="z" routing="Full"><host id="master_host" speed="1Gf"/>'
                 '<host id="h0" speed="1Gf"/><host id="h1" speed="1Gf"/></zone></platform>')
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 2, "jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "d"}],
                             "profiles": {"d": {"type": "delay", "delay": 10}}}))
    words = f"gridsched: error: {p}: energy (-E) needs 'wattage_per_state' on every compute host; missing on h0, h1"
    for engine in (["--engine", "embedded"], ["--engine", "batsim", "--batsim", tmp_path / "no-batsim"]):
        code, _, err = run_main(["run", "--policy", "fcfs", "-p", p, "-w", w, "-o", tmp_path / "o", "-E",
                                 "--no-progress", *engine])
        assert code == 2 and one_error_line(err) == words, err


# ------------------------------------------------------------- gzip workloads on real Batsim
def test_a_gzip_workload_runs_on_real_batsim_as_on_the_engine(tmp_path: Path) -> None:
    """The engine reads a gzip-compressed JSON workload whatever its name; real Batsim 4.2.1
    aborts on one ("Invalid JSON file 'w.json.gz': could not be parsed", recorded with ``batsim
    -p p.xml -w w.json.gz``), so ``gridsched run --engine batsim`` failed with Batsim's log where
    the embedded engine ran. It now gives Batsim the file decompressed (kept as
    workload_w0.json) and says so. FCFS on 4 hosts of 1 Gf: 'a' (2 hosts, 10 s delay) 0-10 s,
    'b' (4 hosts, 2e9 flops each) 10-12 s, 'c' (walltime 5 s, 10 s delay) 12-17 s, killed."""
    if shutil.which("batsim") is None:
        pytest.skip("no batsim on PATH (real Batsim 4.2.1; see docs/guides/real-batsim.md)")
    p = tmp_path / "p.xml"
    p.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                 '<platform version="4.1"><zone id="z" routing="Full"><host id="master_host" speed="1Gf"/>'
                 + "".join(f'<host id="h{i}" speed="1Gf"/>' for i in range(4)) + "</zone></platform>")
    w = tmp_path / "w.json.gz"
    w.write_bytes(gzip.compress(json.dumps({"nb_res": 4, "jobs": [
        {"id": "a", "subtime": 0, "walltime": 100, "res": 2, "profile": "d10"},
        {"id": "b", "subtime": 1, "walltime": 100, "res": 4, "profile": "c"},
        {"id": "c", "subtime": 2, "walltime": 5, "res": 1, "profile": "d10"}],
        "profiles": {"d10": {"type": "delay", "delay": 10},
                     "c": {"type": "parallel_homogeneous", "cpu": 2e9, "com": 0}}}).encode()))
    code, _, err = run_main(["run", "--engine", "batsim", "--policy", "fcfs", "-p", p, "-w", w, "-o", tmp_path / "o",
                             "--no-progress"])
    assert code == 0, err
    assert f"{w} is gzip-compressed and real Batsim 4.2.1 reads plain JSON only: decompressed\n" in err
    with open(tmp_path / "o" / "out_jobs.csv", newline="") as f:
        got = [(r["job_id"], r["final_state"], float(r["starting_time"]), float(r["finish_time"]))
               for r in csv.DictReader(f)]
    assert got == [("a", "COMPLETED_SUCCESSFULLY", 0.0, 10.0), ("b", "COMPLETED_SUCCESSFULLY", 10.0, 12.0),
                   ("c", "COMPLETED_WALLTIME_REACHED", 12.0, 17.0)]
    assert json.loads((tmp_path / "o" / "workload_w0.json").read_text())["jobs"][1]["id"] == "b"
