"""``scripts/compare_with_batsim.py --suite sharing`` draws jobs placed on shared hosts:
every job gets as many distinct hosts of the platform as it requests, and
``scripts/sharing_policy.py`` starts each at its submission, on hosts other jobs still use."""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import io
import json
import random
from pathlib import Path

from procset import ProcSet

from schedulers.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location("compare_with_batsim", ROOT / "scripts" / "compare_with_batsim.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sharing_suite_places_every_job_on_its_own_count_of_hosts(tmp_path: Path) -> None:
    mod = _script()
    for seed in range(30):
        d = tmp_path / str(seed)
        d.mkdir()
        args = mod.sharing_args(random.Random(seed), d)
        assert "--compute-sharing" in args
        w = json.loads((d / "w.json").read_text())
        options = json.loads(args[args.index("--policy-options") + 1])
        for job in w["jobs"]:
            hosts = options["at"][job["id"]]
            assert len(set(hosts)) == len(hosts) == job["res"] and 0 <= min(hosts) and max(hosts) < w["nb_res"]
        assert set(options["kills"]) <= {j["id"] for j in w["jobs"]}


def test_placed_policy_starts_each_job_at_its_submission_on_shared_hosts(tmp_path: Path) -> None:
    mod = _script()
    d = tmp_path / "case"
    d.mkdir()
    args = mod.sharing_args(random.Random(80), d)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = main(["run", *args, "-o", str(d / "out"), "--no-progress"])
    assert code == 0, err.getvalue()
    rows = list(csv.DictReader((d / "out" / "out_jobs.csv").open()))
    assert rows and all(r["starting_time"] == r["submission_time"] for r in rows)
    spans = [(float(r["starting_time"]), float(r["finish_time"]), ProcSet.from_str(r["allocated_resources"]))
             for r in rows]
    # one machine at least runs two jobs at once: a job starts on a host while another runs there
    overlap = [(a, b) for a in spans for b in spans if a is not b and a[0] <= b[0] < a[1] and a[2] & b[2]]
    assert overlap
