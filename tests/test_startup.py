"""Start-up of ``gridsched run`` (issue 13, "Scale"): a plain run on the embedded engine must not
import the analysis stack (numpy, pandas, matplotlib, evalys, dask, scipy, jsonschema) nor ZeroMQ
or tqdm, and the pure-Python summary it prints must be numpy's to the last bit."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from schedulers.core.metrics import pairwise_sum, summarize_outputs

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures"

#: Modules a plain ``gridsched run`` does not need (top-level names).
HEAVY = ("numpy", "pandas", "matplotlib", "evalys", "dask", "distributed", "scipy", "jsonschema", "zmq",
         "tqdm", "pyarrow")

_PROBE = """
import json, sys
from schedulers.cli import main
rc = main(sys.argv[1:])
print(json.dumps({"rc": rc, "loaded": sorted(m for m in %r if m in sys.modules)}))
"""


def _probe(args: list[str], names: tuple[str, ...] = HEAVY) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", _PROBE % (names,), *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("extra", [[], ["--energy", "--policy-options", '{"idle_timeout": 25}']],
                         ids=["plain", "energy+shutdown"])
def test_plain_run_imports_no_heavy_module(tmp_path: Path, extra: list[str]) -> None:
    out = tmp_path / "run"
    got = _probe(["run", "--policy", "easy", "-p", str(FIX / "batsim_shutdown" / "platform.xml"),
                  "-w", str(FIX / "batsim_shutdown" / "workload.json"), "-o", str(out), "--no-progress", *extra])
    assert got == {"rc": 0, "loaded": []}
    assert json.loads((out / "summary.json").read_text())["jobs"] == 12


def test_a_json_run_imports_only_its_policy(tmp_path: Path) -> None:
    """The other policies and the trace converters are imported only when a run needs them."""
    mine = ("schedulers.fcfs", "schedulers.easy", "schedulers.conservative", "schedulers.ehosep",
            "schedulers.inputs.swf", "schedulers.inputs.gwf", "schedulers.inputs.convert")
    got = _probe(["run", "--policy", "fcfs", "-p", str(FIX / "batsim_shutdown" / "platform.xml"),
                  "-w", str(FIX / "batsim_shutdown" / "workload.json"), "-o", str(tmp_path / "run"), "--no-progress"],
                 mine)
    assert got == {"rc": 0, "loaded": ["schedulers.fcfs"]}


def test_the_probe_sees_a_heavy_import(tmp_path: Path) -> None:
    """The probe can fail: ``gridsched run`` with a progress bar does load tqdm."""
    got = _probe(["run", "--policy", "fcfs", "-p", str(FIX / "batsim_shutdown" / "platform.xml"),
                  "-w", str(FIX / "batsim_shutdown" / "workload.json"), "-o", str(tmp_path / "run")])
    assert got == {"rc": 0, "loaded": ["tqdm"]}


def test_pairwise_sum_by_hand() -> None:
    # ten values of 0.1: eight partial sums r0..r7 = 0.1, combined ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)),
    # then the two values left added one by one; a plain loop gives 0.9999999999999999 instead
    by_hand = (((0.1 + 0.1) + (0.1 + 0.1)) + ((0.1 + 0.1) + (0.1 + 0.1))) + 0.1 + 0.1
    assert pairwise_sum([0.1] * 10) == by_hand == 1.0
    assert sum([0.1] * 10) == 0.9999999999999999
    # below 8 values: the plain loop from 0.0
    assert pairwise_sum([0.1] * 7) == 0.1 + 0.1 + 0.1 + 0.1 + 0.1 + 0.1 + 0.1
    assert pairwise_sum([]) == 0.0
    # above 128: halves at n // 2 rounded down to a multiple of 8 (here 136 -> 64 + 72)
    a = [float(i % 13) / 7.0 for i in range(136)]
    assert pairwise_sum(a) == pairwise_sum(a[:64]) + pairwise_sum(a[64:])


def test_pairwise_sum_is_numpys_sum() -> None:
    np = pytest.importorskip("numpy")
    rng = random.Random(5)
    for n in (1, 7, 8, 9, 127, 128, 129, 1000, 4097, 70001):
        a = [rng.choice((rng.uniform(0, 1e6), rng.expovariate(1e-3), rng.uniform(-1, 1) * 1e9)) for _ in range(n)]
        assert pairwise_sum(a) == float(np.asarray(a).sum()), n
        assert pairwise_sum(a) / n == float(np.asarray(a).mean()), n


def test_summary_of_written_files_by_hand(tmp_path: Path) -> None:
    # 3 jobs on 2 hosts: a (1 host, submitted 0, starts 0, runs 5), b (2 hosts, submitted 1, starts 5,
    # runs 20, killed at its walltime), c rejected (empty time columns).
    # waits 0, 4 -> mean 2, max 4; bounded slowdowns max(1, 5/10) = 1, (4+20)/20 = 1.2 -> mean 1.1;
    # makespan 25; utilisation (1*5 + 2*20) / (2 * 25) = 0.9; energy 1234.5 J = 1234.5/3.6e6 kWh.
    head = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,"
            "final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
            "allocated_resources,consumed_energy,metadata")
    (tmp_path / "out_jobs.csv").write_text("\n".join([
        head,
        'a,w0,p,0.000000,1,10.000000,1,COMPLETED_SUCCESSFULLY,0.000000,5.000000,5.000000,0.000000,5.000000,'
        '1.000000,0,-1.000000,""',
        'b,w0,p,1.000000,2,20.000000,0,COMPLETED_WALLTIME_REACHED,5.000000,20.000000,25.000000,4.000000,'
        '24.000000,1.200000,0-1,-1.000000,""',
        'c,w0,p,2.000000,3,10.000000,0,REJECTED,,,,,,,,,""']) + "\n")
    (tmp_path / "out_schedule.csv").write_text("nb_computing_machines,consumed_joules\n2,1234.500000\n")
    (tmp_path / "out_consumed_energy.csv").write_text("time,energy,event_type,wattmin,epower\n")
    s = summarize_outputs(tmp_path / "out_").as_dict()
    assert s == {"jobs": 3, "success": 1, "killed": 1, "rejected": 1, "makespan": 25.0, "mean_waiting_time": 2.0,
                 "mean_bounded_slowdown": 1.1, "max_waiting_time": 4.0, "utilisation": 0.9,
                 "energy_joules": 1234.5, "energy_kwh": 1234.5 / 3.6e6}


# ------------------------------------------------------------------ the faster paths of the run
_FOUR_HOSTS = FIX / "batsim_events" / "p.xml"   # 4 compute hosts at 100 Mflop/s (and a master host)


def _three_jobs() -> dict:
    # j1: 2 hosts, 10 s from t = 0; j2: 3 hosts, 5 s, submitted at 1 s, waits for j1's hosts (FCFS);
    # j3: 5 hosts on a 4-host platform: rejected
    return {"nb_res": 4, "profiles": {"d10": {"type": "delay", "delay": 10}, "d5": {"type": "delay", "delay": 5}},
            "jobs": [{"id": "j1", "subtime": 0, "res": 2, "profile": "d10"},
                     {"id": "j2", "subtime": 1, "res": 3, "profile": "d5", "walltime": 60},
                     {"id": "j3", "subtime": 2, "res": 5, "profile": "d5"}]}


def test_summary_kept_while_writing_by_hand(tmp_path: Path) -> None:
    from schedulers.engine import InProcessPort, build_engine, write_outputs
    from schedulers.engine.outputs import JobColumns
    from schedulers.fcfs import FCFS

    result = build_engine(str(_FOUR_HOSTS), [_three_jobs()]).run(InProcessPort(FCFS()))
    cols = JobColumns()
    write_outputs(result, tmp_path / "out_", energy=False, columns=cols)
    assert cols.final_state == ["REJECTED", "COMPLETED_SUCCESSFULLY", "COMPLETED_SUCCESSFULLY"]
    # j3 rejected at 2 s; j1 runs 0 -> 10; j2 waits from 1 s to 10 s and runs to 15 s
    assert list(cols.submission) == [2.0, 0.0, 1.0] and list(cols.res) == [5.0, 2.0, 3.0]
    assert list(cols.starting) == [0.0, 0.0, 10.0] and list(cols.finish) == [0.0, 10.0, 15.0]
    s = cols.summary(4).as_dict()
    # waits 0 and 9 s (mean 4.5); bounded slowdowns 10/10 = 1 and (9 + 5)/max(5, 10) = 1.4 (mean 1.2);
    # makespan 15 s; utilisation (2 x 10 + 3 x 5) / (4 x 15) = 35/60
    assert s == {"jobs": 3, "success": 2, "killed": 0, "rejected": 1, "makespan": 15.0, "mean_waiting_time": 4.5,
                 "mean_bounded_slowdown": 1.2, "max_waiting_time": 9.0, "utilisation": 35 / 60,
                 "energy_joules": None, "energy_kwh": None}
    # the same summary as of the files read back, to the last bit
    assert summarize_outputs(tmp_path / "out_", 4).as_dict() == s
    # an energy as out_schedule.csv prints it (6 decimals)
    assert cols.summary(4, 1234.56789012).energy_joules == 1234.56789


def test_summary_kept_while_writing_equals_the_files(tmp_path: Path) -> None:
    """Random times (not 6-decimal numbers), energy, a rejected job: the summary gridsched run
    prints is the one of the files it wrote, to the last bit."""
    from schedulers.engine import InProcessPort, build_engine, write_outputs
    from schedulers.engine.outputs import JobColumns
    from schedulers.easy import EASY

    rng = random.Random(11)
    jobs, profiles, t = [], {}, 0.0
    for k in range(300):
        t += rng.expovariate(1 / 3.7)
        profiles[f"p{k}"] = {"type": "delay", "delay": rng.uniform(0.5, 40.0)}
        jobs.append({"id": f"j{k}", "subtime": t, "res": rng.choice((1, 1, 2, 3, 4, 5)), "profile": f"p{k}",
                     "walltime": 60})
    engine = build_engine(str(_FOUR_HOSTS), [{"nb_res": 4, "jobs": jobs, "profiles": profiles}], energy=True)
    result = engine.run(InProcessPort(EASY()))
    cols = JobColumns()
    write_outputs(result, tmp_path / "out_", energy=True, columns=cols)
    mine = cols.summary(4, result.schedule["consumed_joules"]).as_dict()
    assert mine == summarize_outputs(tmp_path / "out_", 4).as_dict()
    assert mine["rejected"] > 0 and mine["energy_joules"] > 0


def test_execute_mask_and_an_overridden_execute() -> None:
    from procset import ProcSet

    from schedulers.core.model import PolicyError
    from schedulers.engine import simulate
    from schedulers.fcfs import FCFS

    class Seen(FCFS):   # FCFS starts jobs with execute_mask: an overridden execute still sees them
        def __init__(self) -> None:
            super().__init__()
            self.starts: list[tuple[str, ProcSet]] = []

        def execute(self, job, hosts, **extra):
            self.starts.append((job.id, hosts))
            super().execute(job, hosts, **extra)

    policy = Seen()
    simulate(str(_FOUR_HOSTS), [_three_jobs()], policy)
    # j1 on the two lowest ids; j2, once j1 ended, on the three lowest
    assert policy.starts == [("w0!j1", ProcSet((0, 1))), ("w0!j2", ProcSet((0, 2)))]

    class Wrong(FCFS):
        def schedule(self) -> None:
            if len(self.queue) == 2:
                self.execute_mask(self.queue[0], 0b101)   # 2 hosts for a job of 2: fine
                self.execute_mask(self.queue[1], 0b1)     # 1 host for a job of 3

    both_at_0 = [{**j, "subtime": 0} for j in _three_jobs()["jobs"][:2]]
    with pytest.raises(PolicyError, match=r"w0!j2 requests 3 hosts but the allocation 0 has 1"):
        simulate(str(_FOUR_HOSTS), [{**_three_jobs(), "jobs": both_at_0}], Wrong())


def test_policies_imported_when_first_looked_up() -> None:
    code = ("import sys; from schedulers.registry import POLICIES, get_policy; "
            "before = sorted(m for m in ('schedulers.easy', 'schedulers.conservative', 'schedulers.fcfs') "
            "if m in sys.modules); get_policy('fcfs'); "
            "after = sorted(m for m in ('schedulers.easy', 'schedulers.fcfs') if m in sys.modules); "
            "print(before, after, POLICIES['easy'].__name__, 'easy' in POLICIES, len(POLICIES))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=60).stdout.split()
    assert out == ["[]", "['schedulers.fcfs']", "EASY", "True", "13"]


@pytest.mark.parametrize("seed", range(3))
def test_mask_to_procset_matches_procset(seed: int) -> None:
    from procset import ProcSet

    from schedulers.core.backfilling import mask_to_procset

    rng = random.Random(seed)
    for _ in range(2000):
        if rng.random() < 0.5:   # one interval [a, b]
            a = rng.randrange(200)
            ids = list(range(a, rng.randrange(a, 260) + 1))
        else:
            ids = sorted(rng.sample(range(150), rng.randrange(1, 40)))
        mask = sum(1 << i for i in ids)
        got = mask_to_procset(mask)
        assert got == ProcSet(*ids) and str(got) == str(ProcSet(*ids)), ids
    assert len(mask_to_procset(0)) == 0
    with pytest.raises(ValueError):
        mask_to_procset(-3)
