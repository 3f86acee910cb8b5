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


def _probe(args: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", _PROBE % (HEAVY,), *args], capture_output=True, text=True,
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
