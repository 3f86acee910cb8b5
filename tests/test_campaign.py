"""Campaigns: files, run ids, the Dask runner, resume after kill -9, failing runs, bad files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from schedulers.campaign.errors import CampaignError
from schedulers.campaign.execute import execute_run
from schedulers.campaign.runner import batch_size, run_campaign
from schedulers.campaign.spec import load_campaign
from schedulers.campaign.store import ResultStore
from schedulers.cli import main
from schedulers.core.metrics import summarize_outputs
from schedulers.core.policy import Policy
from schedulers.engine import read_platform, simulate
from schedulers.inputs.generators import generate
from schedulers.registry import POLICIES, get_policy

ROOT = Path(__file__).resolve().parents[1]

SMALL = """
name = "small"
seeds = 3
energy = true
[[policy]]
name = "fcfs"
[[policy]]
name = "easy"
[[scenario]]
name = "s8"
generator = "synthetic"
params = { jobs = 30, hosts = 8 }
[[scenario]]
name = "s16"
generator = "synthetic"
params = { jobs = 30, hosts = 16, max_res = 8, profile = "compute", cores = 2 }
"""


def write(tmp_path: Path, text: str, name: str = "c.toml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def summaries(out: Path) -> dict[str, dict]:
    store = ResultStore(out)
    return {rid: store.read(rid)["summary"] for rid in store.ids()}


def alone(run, tmp_path: Path) -> dict:
    """The run's simulation as `gridsched run` does it: files written, summary read back."""
    sc = generate(run.scenario["generator"], run.scenario["params"], run.seed)
    prefix = tmp_path / "alone" / run.id / "out_"
    simulate(read_platform("<x>", text=sc.platform_xml), sc.workloads, get_policy(run.policy_name),
             energy=run.engine["energy"], export_prefix=prefix)
    return summarize_outputs(prefix).as_dict()


# ------------------------------------------------------------------------------ the runner
def test_local_cluster_equals_each_run_alone(tmp_path: Path) -> None:
    camp = load_campaign(write(tmp_path, SMALL))
    runs = camp.runs()
    assert len(runs) == 2 * 2 * 3
    assert len({r.id for r in runs}) == 12
    stats = run_campaign(camp, tmp_path / "out", workers=2, progress=False)
    assert (stats.executed, stats.failed, stats.skipped) == (12, 0, 0)
    got = summaries(tmp_path / "out")
    for r in runs:
        assert got[r.id] == alone(r, tmp_path), r.params
    # seeds differ, so do the workloads; policies see the same workload per (scenario, seed)
    assert len({json.dumps(s, sort_keys=True) for s in got.values()}) > 6
    # a second call runs nothing
    again = run_campaign(camp, tmp_path / "out", workers=2, progress=False)
    assert (again.executed, again.skipped) == (0, 12)
    manifest = json.loads((tmp_path / "out" / "campaign.json").read_text())
    assert manifest["axes"] == ["policy", "scenario", "seed"]
    assert [m["id"] for m in manifest["runs"]] == [r.id for r in runs]


def _sigint_ignored_here() -> bool:
    return signal.getsignal(signal.SIGINT) == signal.SIG_IGN


def test_local_cluster_workers_leave_ctrl_c_to_the_command() -> None:
    # Ctrl-C reaches every process of the terminal's group: the LocalCluster's worker processes
    # start with SIGINT ignored (so they print no traceback of their own), and this process keeps
    # its KeyboardInterrupt, with which `gridsched campaign run` closes the cluster and says how
    # many results are stored.
    from schedulers.campaign.runner import _dask_client

    before = signal.getsignal(signal.SIGINT)
    client = _dask_client(None, 1)
    try:
        assert list(client.run(_sigint_ignored_here).values()) == [True]
    finally:
        client.close()
        client.cluster.close()
    assert signal.getsignal(signal.SIGINT) is before and not _sigint_ignored_here()


def test_batch_size() -> None:
    # about 16 tasks per worker, between 1 and 50 runs per task
    assert batch_size(24000, 2) == 50
    assert batch_size(320, 2) == 10
    assert batch_size(12, 2) == 1


def test_failing_run_is_recorded_and_others_finish(tmp_path: Path) -> None:
    f = write(tmp_path, """
        seeds = [1, 2]
        [[policy]]
        name = "fcfs"
        [[scenario]]
        name = "ok"
        generator = "synthetic"
        params = { jobs = 10, hosts = 4 }
        [[scenario]]
        name = "bad"
        generator = "synthetic"
        params = { jobs = 10, hosts = 4, load = 1e-300 }
        """)   # (arrivals spread over ~1e303 s: refused when generated, run by run)
    code = main(["campaign", "run", str(f), "--out", str(tmp_path / "out"), "--serial", "--no-progress"])
    assert code == 1
    store = ResultStore(tmp_path / "out")
    recs = [store.read(i) for i in store.ids()]
    assert sorted((r["params"]["scenario"], r["status"]) for r in recs) == [
        ("bad", "failed"), ("bad", "failed"), ("ok", "done"), ("ok", "done")]
    bad = [r for r in recs if r["status"] == "failed"][0]
    assert bad["error"].startswith("GeneratorError: generator 'synthetic': load 1e-300 spreads") and "\n" not in bad["error"]
    assert bad["summary"] is None and "Traceback" in bad["traceback"]
    # failed runs are not run again unless asked
    camp = load_campaign(f)
    assert run_campaign(camp, tmp_path / "out", serial=True, progress=False).executed == 0
    assert run_campaign(camp, tmp_path / "out", serial=True, retry_failed=True, progress=False).executed == 2


def test_a_campaign_whose_runs_all_failed_says_so_instead_of_reporting(tmp_path: Path, capsys) -> None:
    f = write(tmp_path, """
        seeds = [1, 2]
        [[policy]]
        name = "fcfs"
        [[scenario]]
        name = "bad"
        generator = "synthetic"
        params = { jobs = 10, hosts = 4, load = 1e-300 }
        [report]
        metrics = ["mean_waiting_time"]
        """)
    out = tmp_path / "out"
    assert main(["campaign", "run", str(f), "--out", str(out), "--serial", "--no-progress", "--report"]) == 1
    err = capsys.readouterr().err
    assert f"no report: none of the runs finished (gridsched campaign status {out} --failed)" in err
    assert not (out / "report.md").exists()
    for command in ("report", "collect"):   # (it said: unknown metric 'mean_waiting_time')
        assert main(["campaign", command, str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.endswith(f"{out}: none of its 2 runs finished (all failed; `gridsched campaign status {out} "
                            f"--failed` gives their errors): no results to collect") and "\n" not in err


def test_keep_outputs_writes_batsim_files(tmp_path: Path) -> None:
    f = write(tmp_path, """
        keep_outputs = true
        energy = true
        [[policy]]
        name = "easy"
        [[scenario]]
        name = "nantes"
        platform = "%s"
        workloads = ["%s"]
        """ % (ROOT / "platforms/g5k_nantes_econome.xml", ROOT / "workloads/demo_nantes.json"))
    run_campaign(load_campaign(f), tmp_path / "out", serial=True, progress=False)
    (rid,) = ResultStore(tmp_path / "out").ids()
    files = sorted(p.name for p in (tmp_path / "out" / "outputs" / rid).iterdir())
    assert files == ["out_consumed_energy.csv", "out_jobs.csv", "out_machine_states.csv",
                     "out_pstate_changes.csv", "out_schedule.csv", "out_schedule.trace"]
    simulate(ROOT / "platforms/g5k_nantes_econome.xml", [ROOT / "workloads/demo_nantes.json"], get_policy("easy"),
             energy=True, export_prefix=tmp_path / "ref" / "out_")
    for name in files:
        got, ref = ((d / name).read_text().splitlines() for d in (tmp_path / "out" / "outputs" / rid, tmp_path / "ref"))
        if name == "out_schedule.csv":  # but the two wall-clock columns
            wall = [i for i, c in enumerate(ref[0].split(",")) if c in ("scheduling_time", "simulation_time")]
            got, ref = ([[v for i, v in enumerate(line.split(",")) if i not in wall] for line in x] for x in (got, ref))
            assert len(wall) == 2
        assert got == ref, name


KILL = """
name = "kill"
seeds = 8
[[policy]]
name = "fcfs"
[[policy]]
name = "easy"
[[scenario]]
name = "s"
generator = "synthetic"
params = { jobs = 800, hosts = 32, max_res = 8 }
"""


def _runner(f: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "schedulers.cli", "campaign", "run", str(f), "--out", str(out),
                             "--workers", "2", "--no-progress"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, cwd=ROOT)


def test_kill_9_then_resume_gives_every_run_once(tmp_path: Path) -> None:
    f = write(tmp_path, KILL)
    camp = load_campaign(f)
    ids = {r.id for r in camp.runs()}
    assert len(ids) == 16
    out = tmp_path / "out"
    first = _runner(f, out)
    try:
        deadline = time.monotonic() + 120
        while len(ResultStore(out).ids()) < 3:
            assert first.poll() is None, "the runner ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        partial = ResultStore(out).ids()
        assert 3 <= len(partial) < 16
        second = _runner(f, out)
        assert second.wait(timeout=300) == 0
    finally:
        for p in (first,):
            try:
                os.killpg(p.pid, signal.SIGKILL)  # worker processes orphaned by kill -9
            except ProcessLookupError:
                pass
    store = ResultStore(out)
    assert store.ids() == ids
    assert not [p for p in (out / "results").iterdir() if not p.name.endswith(".json")]
    assert all(store.read(i)["status"] == "done" for i in ids)
    # identical to an uninterrupted run
    run_campaign(camp, tmp_path / "ref", serial=True, progress=False)
    assert summaries(out) == summaries(tmp_path / "ref")


# ------------------------------------------------------------------------------ run ids
def test_run_ids_are_stable_across_processes_and_key_order(tmp_path: Path) -> None:
    f = write(tmp_path, SMALL)
    here = [r.id for r in load_campaign(f).runs()]
    code = ("import sys; from schedulers.campaign.spec import load_campaign; "
            "print(' '.join(r.id for r in load_campaign(sys.argv[1]).runs()))")
    for hashseed in ("1", "12345"):
        out = subprocess.run([sys.executable, "-c", code, str(f)], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": hashseed}, cwd=ROOT)
        assert out.stdout.split() == here
    # the same runs written in another key order have the same ids
    g = write(tmp_path, SMALL.replace("{ jobs = 30, hosts = 8 }", "{ hosts = 8, jobs = 30 }")
              .replace('name = "small"\nseeds = 3\nenergy = true', 'energy = true\nseeds = 3\nname = "renamed"'),
              "g.toml")
    assert [r.id for r in load_campaign(g).runs()] == here
    # a parameter that changes the simulation changes the id
    h = write(tmp_path, SMALL.replace("{ jobs = 30, hosts = 8 }", "{ jobs = 31, hosts = 8 }"), "h.toml")
    assert len(set(r.id for r in load_campaign(h).runs()) & set(here)) == 6
    # giving a generator parameter its default value is the same run
    d = write(tmp_path, SMALL.replace("{ jobs = 30, hosts = 8 }", "{ jobs = 30, hosts = 8, load = 0.8 }"), "d.toml")
    assert [r.id for r in load_campaign(d).runs()] == here


# ------------------------------------------------------------------------------ axes
class _Overlap(Policy):
    """A test policy with options."""

    name = "test-overlap"
    option_docs = {"delta": "overlap (%)", "seed": "random seed"}


def test_axes_route_and_do_not_multiply_runs_they_do_not_apply_to(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(POLICIES, "test-overlap", _Overlap)
    f = write(tmp_path, """
        seeds = 2
        [[policy]]
        name = "fcfs"
        [[policy]]
        name = "test-overlap"
        [[scenario]]
        name = "gen"
        generator = "synthetic"
        [[scenario]]
        name = "file"
        platform = "%s"
        workloads = ["%s"]
        [axes]
        delta = [0, 10, 20]
        compute_sharing = [false, true]
        [zip]
        "scenario.jobs" = [40, 400]
        hosts = [8, 64]
        """ % (ROOT / "platforms/g5k_nantes_econome.xml", ROOT / "workloads/demo_nantes.json"))
    camp = load_campaign(f)
    assert camp.axis_names == ["policy", "scenario", "delta", "compute_sharing", "scenario.jobs", "hosts", "seed"]
    runs = camp.runs()
    count = {}
    for r in runs:
        count[(r.params["policy"], r.params["scenario"])] = count.get((r.params["policy"], r.params["scenario"]), 0) + 1
    # fcfs has no delta: 2 sharing x 2 zip x 2 seeds on the generator; on the file scenario, FCFS
    # is deterministic (no seed option): 2 sharing, run once each; test-overlap takes a seed
    assert count == {("fcfs", "gen"): 8, ("fcfs", "file"): 2, ("test-overlap", "gen"): 24, ("test-overlap", "file"): 12}
    r = next(r for r in runs if r.params["policy"] == "test-overlap" and r.params["scenario"] == "gen"
             and r.params["delta"] == 10 and r.params["scenario.jobs"] == 400 and r.params["seed"] == 1
             and r.params["compute_sharing"])
    assert r.policy_options == {"delta": 10, "seed": 1}
    assert r.scenario["params"]["jobs"] == 400 and r.scenario["params"]["hosts"] == 64
    assert r.engine == {"simulator": "engine", "energy": False, "compute_sharing": True}
    fc = [r for r in runs if r.params["policy"] == "fcfs" and r.params["scenario"] == "file"]
    assert all(r.params["delta"] is None and r.params["scenario.jobs"] is None and r.params["seed"] is None
               and r.policy_options == {} for r in fc)


# ------------------------------------------------------------------------------ bad files
BAD = [
    ("unknown policy", 'seeds = 1\n[[policy]]\nname = "nope"\n[[scenario]]\nname = "s"\ngenerator = "synthetic"\n',
     "policy[0].name: unknown policy 'nope'; known policies: buc, buc-easy, conservative, easy, ehosep, fcfs"),
    ("unknown key", 'seed = 3\n[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "s"\ngenerator = "synthetic"\n',
     "seed: unknown key; allowed:"),
    ("unknown policy key", '[[policy]]\nname = "fcfs"\nopts = {}\n[[scenario]]\nname = "s"\ngenerator = "synthetic"\n',
     "policy[0].opts: unknown key"),
    ("empty axis", '[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "s"\ngenerator = "synthetic"\n[axes]\nload = []\n',
     "axes.load: empty axis: no run"),
    ("wrong type", 'seeds = "3"\n[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "s"\ngenerator = "synthetic"\n',
     "seeds: expected a number of seeds or a list of integer seeds, got a string '3'"),
    ("wrong param type", '[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "s"\ngenerator = "synthetic"\n'
     'params = { jobs = "40" }\n', "scenario[0].params: generator 'synthetic': parameter 'jobs' must be an integer, got '40'"),
    ("unknown generator", '[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "s"\ngenerator = "nope"\n',
     "scenario[0].generator: unknown scenario generator 'nope'; known generators: "),
    ("unknown option", '[[policy]]\nname = "easy"\noptions = { delta = 1 }\n[[scenario]]\nname = "s"\n'
     'generator = "synthetic"\n', "policy[0].options: policy 'easy' has no option 'delta'; its options: idle_timeout"),
    ("axis nobody has", '[[policy]]\nname = "easy"\n[[scenario]]\nname = "s"\ngenerator = "synthetic"\n'
     '[axes]\ndelta = [0, 10]\n', "axes.delta: 'delta' is not an option of the campaign's policies (idle_timeout)"),
    ("zip lengths", '[[policy]]\nname = "easy"\n[[scenario]]\nname = "s"\ngenerator = "synthetic"\n'
     '[zip]\n"scenario.jobs" = [1, 2]\nhosts = [4]\n', "zip: zip axes must have the same length, got scenario.jobs: 2, hosts: 1"),
    ("axis named as a results column", '[[policy]]\nname = "easy"\n[[scenario]]\nname = "s"\ngenerator = "synthetic"\n'
     '[axes]\njobs = [10, 20]\n', "axes.jobs: 'jobs' names a column the results table already has (a run metric or "
     'field); write "scenario.jobs" for this axis'),
    ("no scenario", '[[policy]]\nname = "easy"\n', "scenario: missing: at least one [[scenario]] table"),
    ("missing file", '[[policy]]\nname = "easy"\n[[scenario]]\nname = "s"\nplatform = "nope.xml"\n'
     'workloads = ["w.json"]\n', "scenario[0].platform: no such file"),
    ("duplicate label", '[[policy]]\nname = "easy"\n[[policy]]\nname = "easy"\n[[scenario]]\nname = "s"\n'
     'generator = "synthetic"\n', "policy[1].label: 'easy' is used twice"),
    ("axis set twice", '[[policy]]\nname = "easy"\n[[scenario]]\nname = "s"\ngenerator = "synthetic"\n'
     'params = { load = 0.5 }\n[axes]\nload = [0.5, 0.9]\n', "axes.load: also set in scenario[0].params"),
    ("bad simulator", 'simulator = "simgrid"\n[[policy]]\nname = "easy"\n[[scenario]]\nname = "s"\n'
     'generator = "synthetic"\n', "simulator: expected \"engine\" or \"batsim\", got 'simgrid'"),
    ("invalid toml", '[[policy]\nname = "easy"\n', "invalid TOML:"),
    ("infinite number", '[[policy]]\nname = "easy"\n[[scenario]]\nname = "s"\ngenerator = "synthetic"\n'
     'params = { load = inf }\n', "parameter 'load' must be a finite number, got inf"),
]


def test_axis_sets_one_key_of_a_mapping_option(tmp_path: Path) -> None:
    # EHOSEP's reproduction sweeps user1's limit: "policy.limits.user1" sets one key of the option
    # `limits`, merged into the [[policy]] table's own `limits`; HOSEP has no `limits`: run once
    # per value of the scenario axis it is zipped with, its options untouched.
    f = write(tmp_path, """
        seeds = 1
        [[policy]]
        name = "ehosep"
        options = { limits = { user2 = 150 } }
        [[policy]]
        name = "hosep"
        [[scenario]]
        name = "grid"
        generator = "ehosep"
        [zip]
        "scenario.u1_limit" = [80, 120]
        "policy.limits.user1" = [80, 120]
        """)
    runs = load_campaign(f).runs()
    eh = sorted((r.params["scenario.u1_limit"], r.policy_options["limits"]) for r in runs if r.policy_name == "ehosep")
    assert eh == [(80, {"user2": 150, "user1": 80}), (120, {"user2": 150, "user1": 120})]
    ho = [r for r in runs if r.policy_name == "hosep"]
    assert len(ho) == 2 and all(r.policy_options == {} and r.params["policy.limits.user1"] is None for r in ho)
    assert {r.scenario["params"]["u1_limit"] for r in runs} == {80, 120}


@pytest.mark.parametrize("case,text,message", BAD, ids=[b[0] for b in BAD])
def test_bad_campaign_files_give_one_line(tmp_path: Path, capsys, case: str, text: str, message: str) -> None:
    f = write(tmp_path, text)
    assert main(["campaign", "run", str(f), "--out", str(tmp_path / "out"), "--serial", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"gridsched: error: {f}: ") and message in err[0], err[0]
    assert not (tmp_path / "out").exists()


def test_status_command(tmp_path: Path, capsys) -> None:
    f = write(tmp_path, 'seeds = 2\n[[policy]]\nname = "fcfs"\n[[scenario]]\nname = "s"\ngenerator = "synthetic"\n'
                        'params = { jobs = 5, hosts = 4 }\n')
    out = tmp_path / "out"
    assert main(["campaign", "status", str(f), "--out", str(out)]) == 1
    assert "2 runs: 0 done, 0 failed, 2 missing" in capsys.readouterr().out
    camp = load_campaign(f)
    store = ResultStore(out)
    store.prepare()
    store.write(execute_run(camp.runs()[0]))
    assert main(["campaign", "status", str(f), "--out", str(out)]) == 1
    assert "2 runs: 1 done, 0 failed, 1 missing" in capsys.readouterr().out
    assert main(["campaign", "run", str(f), "--out", str(out), "--serial", "--no-progress"]) == 0
    assert main(["campaign", "status", str(out)]) == 0
    assert "2 runs: 2 done, 0 failed, 0 missing" in capsys.readouterr().out
    # a leftover temporary file of a killed runner is removed, never read as a result
    (out / "results" / ".abc.json.1.x.tmp").write_text("{half")
    assert main(["campaign", "run", str(f), "--out", str(out), "--serial", "--no-progress"]) == 0
    assert not list((out / "results").glob(".*"))
    assert main(["campaign", "status", str(tmp_path)]) == 2
    assert "not a campaign output folder (no campaign.json)" in capsys.readouterr().err


# ------------------------------------------------------------------------------ batch systems
def test_jobqueue_clusters_are_dask_jobqueue_ones(monkeypatch) -> None:
    dask = pytest.importorskip("dask", reason="dask not installed")
    pytest.importorskip("dask_jobqueue", reason="dask-jobqueue not installed (pip install 'gridsched[cluster]')")
    from schedulers.campaign.runner import jobqueue_cluster

    with pytest.raises(CampaignError, match="--jobqueue 'torque': unknown; known: slurm, oar"):
        jobqueue_cluster("torque")
    with dask.config.set({"jobqueue.slurm.cores": None, "jobqueue.slurm.memory": None}):
        with pytest.raises(CampaignError, match="--jobqueue slurm: You must specify how much cores"):
            jobqueue_cluster("slurm")
    for kind, directive in (("slurm", "#SBATCH"), ("oar", "#OAR")):
        extra = {"jobqueue.oar.memory_per_core_property_name": "memcore"} if kind == "oar" else {}
        with dask.config.set({f"jobqueue.{kind}.cores": 1, f"jobqueue.{kind}.memory": "2GB",
                              f"jobqueue.{kind}.walltime": "01:00:00", **extra}):
            cluster = jobqueue_cluster(kind)
            try:
                script = cluster.job_script()
            finally:
                cluster.close()
        assert directive in script and "distributed.cli.dask_worker" in script, script


def test_the_documented_campaign_example_is_valid() -> None:
    # docs/examples/campaign.toml, shown in full by docs/reference/campaign-toml.md
    camp = load_campaign(ROOT / "docs" / "examples" / "campaign.toml")
    runs = camp.runs()
    # easy x (synthetic: 3 loads x 2 zipped sizes x 10 seeds + nantes: once)
    assert len(runs) == 3 * 2 * 10 + 1
    assert camp.report["reference"][0]["source"] == "paper, Table 2"


def test_the_documented_campaign_example_runs_and_reports(tmp_path: Path) -> None:
    # The example with one seed (7 runs): it runs, and its [report] fits its results (an axis named
    # like a results column, and a reference matching two groups, each stopped it after the runs).
    text = (ROOT / "docs" / "examples" / "campaign.toml").read_text(encoding="utf-8")
    text = text.replace("seeds = 10 ", "seeds = [0] ").replace('"../../', f'"{ROOT}/')
    assert "seeds = [0]" in text and str(ROOT) in text
    camp = tmp_path / "example.toml"
    camp.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["campaign", "run", str(camp), "--out", str(out), "--serial", "--no-progress", "--report"]) == 0
    report = (out / "report.md").read_text(encoding="utf-8")
    # the paper's value (1,800 s, "paper, Table 2") beside EASY's mean at load 0.8, 100 jobs
    assert "paper, Table 2" in report and "1,800" in report


@pytest.mark.skipif(__import__("shutil").which("batsim") is None,
                    reason="no batsim on PATH (real Batsim 4.2.1; see docs/guides/real-batsim.md)")
def test_simulator_axis_engine_and_real_batsim_agree(tmp_path: Path) -> None:
    f = write(tmp_path, """
        seeds = 2
        energy = true
        [[policy]]
        name = "fcfs"
        [[policy]]
        name = "easy"
        [[scenario]]
        name = "s"
        generator = "synthetic"
        params = { jobs = 30, hosts = 8, profile = "compute", cores = 2 }
        [axes]
        simulator = ["engine", "batsim"]
        """)
    camp = load_campaign(f)
    stats = run_campaign(camp, tmp_path / "out", workers=2, progress=False)
    assert stats.failed == 0 and stats.executed == 8
    store = ResultStore(tmp_path / "out")
    by = {}
    for rid in store.ids():
        rec = store.read(rid)
        p = rec["params"]
        by[(p["policy"], p["seed"], p["simulator"])] = rec["summary"]
    for pol in ("fcfs", "easy"):
        for seed in (0, 1):
            e, b = by[(pol, seed, "engine")], by[(pol, seed, "batsim")]
            assert e.keys() == b.keys()
            for k in e:
                assert e[k] == pytest.approx(b[k], rel=1e-6, abs=1e-6), (pol, seed, k)


def test_run_metrics_join_the_summary(tmp_path: Path) -> None:
    from schedulers.core.satisfaction import satisfaction_metrics
    from schedulers.inputs.convert import write_workload

    f = write(tmp_path, """
        seeds = [4]
        metrics = ["satisfaction"]
        [[policy]]
        name = "easy"
        [[scenario]]
        name = "hosep"
        generator = "hosep"
        params = { late = "user4", demand = "medium" }
        """)
    camp = load_campaign(f)
    (run,) = camp.runs()
    rec = execute_run(run)
    assert rec["status"] == "done", rec["error"]
    # the same run alone, files written by hand, satisfaction read from them
    sc = generate("hosep", run.scenario["params"], 4)
    (tmp_path / "p.xml").write_text(sc.platform_xml)
    w = write_workload(sc.workloads[0], tmp_path / "w.json")
    simulate(tmp_path / "p.xml", [w], get_policy("easy"), export_prefix=tmp_path / "alone" / "out_")
    expected = satisfaction_metrics(tmp_path / "alone" / "out_jobs.csv", [w], tmp_path / "p.xml")
    assert sorted(expected) == [f"satisfaction.user{i}" for i in (1, 2, 3, 4)]
    for k, v in expected.items():
        assert rec["summary"][k] == v
    # asking for the metric makes other runs than not asking (every record has every metric)
    g = write(tmp_path, f.read_text().replace('metrics = ["satisfaction"]', ""), "g.toml")
    assert load_campaign(g).runs()[0].id != run.id
    bad = write(tmp_path, f.read_text().replace('"satisfaction"]', '"happiness"]'), "b.toml")
    with pytest.raises(CampaignError, match=r"metrics\[0\]: unknown run metric 'happiness'; known: satisfaction"):
        load_campaign(bad)


def test_a_campaign_needing_real_batsim_stops_at_once_without_it(tmp_path: Path, monkeypatch) -> None:
    """simulator = "batsim" with no real Batsim on PATH: one error before any run (each run used
    to fail in turn with the same message), and no run recorded; the engine's runs of the same
    file are not held back when only they are to do."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    f = write(tmp_path, """
        seeds = 2
        [[policy]]
        name = "fcfs"
        [[scenario]]
        name = "s"
        generator = "synthetic"
        params = { jobs = 5, hosts = 4 }
        [axes]
        simulator = ["engine", "batsim"]
        """)
    camp = load_campaign(f)
    with pytest.raises(CampaignError) as err:
        run_campaign(camp, tmp_path / "out", serial=True, progress=False)
    assert str(err.value).startswith(f"{f}: 2 run(s) to do have simulator = \"batsim\": no 'batsim' executable on "
                                     "PATH.")
    assert not ResultStore(tmp_path / "out").ids()
