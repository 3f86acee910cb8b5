"""``scripts/compare_with_batsim.py --suite io`` draws inputs that both sides read: platforms with
1-3 storage hosts (numbered by name after the compute hosts) and workloads whose IO profiles pass
the engine's checks, every profile type of the suite drawn; with ``-E`` in some, power on every
compute and storage host (a storage host at its second pstate in some, then switched between its
two pstates in some); EXECUTE_JOB's ``additional_io_job`` for some jobs that can take one, and a
storage host in the allocation of some jobs that compute nothing."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

from schedulers.engine.platform import read_platform
from schedulers.engine.workload import load_workload

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "io_cases.py"


def test_io_suite_draws_readable_inputs(tmp_path):
    spec = importlib.util.spec_from_file_location("io_cases", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    types = set()
    energy, storage_pstates, io_jobs, switches, on_storage = 0, set(), 0, 0, 0
    for seed in range(40):
        d = tmp_path / str(seed)
        d.mkdir()
        args = mod.io_args(random.Random(seed), d)
        assert args[args.index("--policy") + 1].endswith("io_policy.py:IOFCFS")
        spec_ = read_platform(d / "p.xml")
        assert 1 <= len(spec_.storage) <= 3
        assert [h.name for h in spec_.storage] == sorted(h.name for h in spec_.storage)
        w = load_workload(d / "w.json", "w0", len(spec_.compute))
        types |= {p["type"] for p in w.profiles.values()}
        options = json.loads(args[args.index("--policy-options") + 1])
        for name in options.get("io_jobs", {}):   # (only jobs whose profile merges with an IO job)
            io_jobs += 1
            job = next(j for j in json.loads((d / "w.json").read_text())["jobs"] if j["id"] == name)
            assert w.profiles[job["profile"]]["type"] in ("parallel_homogeneous", "delay")
        for name in options.get("on_storage", {}):   # (2 hosts or more, no flops on any host)
            on_storage += 1
            job = next(j for j in json.loads((d / "w.json").read_text())["jobs"] if j["id"] == name)
            assert job["res"] >= 2 and mod._no_flops(w.profiles, job["profile"])
        for _t, ids, pstate in options.get("switches", []):   # storage hosts of two pstates only, with -E
            switches += 1
            assert "-E" in args and pstate in (0, 1)
            assert all(len(spec_.storage[i - len(spec_.compute)].speeds) == 2 for i in ids)
        if "-E" in args:   # power on every compute and storage host, for real Batsim and the engine
            energy += 1
            assert spec_.has_energy and all(h.power is not None for h in spec_.storage)
            storage_pstates |= {h.pstate for h in spec_.storage}
        else:
            assert not any(h.power for h in spec_.compute + spec_.storage)
    assert 10 <= energy <= 30 and storage_pstates == {0, 1} and io_jobs >= 10 and switches >= 3 and on_storage >= 5
    assert {"parallel_homogeneous_pfs", "data_staging", "delay", "parallel_homogeneous", "composed"} <= types
