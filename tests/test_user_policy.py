"""A policy of the user's own code by ``--policy FILE.py:Class`` or ``package.module:Class``
(:func:`schedulers.registry.policy_class`): run as the registered ones, clear errors otherwise."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path

import pytest

from schedulers.cli import main
from schedulers.registry import policy_class

FIX = Path(__file__).parent / "fixtures"

GREEDY = '''
from schedulers.core.policy import Policy, first_hosts

class Greedy(Policy):
    """Start any waiting job that fits, in arrival order (no reservation)."""
    name = "greedy"
    option_docs = {"reverse": "walk the queue from its end"}

    def __init__(self, options=None):
        super().__init__(options)
        self.queue = []
        self.reverse = bool(self.options.get("reverse", False))

    def on_job_submitted(self, job):
        self.queue.append(job)

    def schedule(self):
        for job in (list(reversed(self.queue)) if self.reverse else list(self.queue)):
            if job.res <= len(self.available):
                self.execute(job, first_hosts(self.available, job.res))
                self.queue.remove(job)
'''


def _main(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, err.getvalue()


@pytest.fixture()
def case(tmp_path: Path) -> Path:
    (tmp_path / "greedy.py").write_text(GREEDY)
    # a (2 hosts, 10 s) at 0, b (1 host, 5 s) at 1, c (2 hosts, 5 s) at 2, d (1 host, 5 s) at 3
    jobs = [("a", 0, 2, 10), ("b", 1, 1, 5), ("c", 2, 2, 5), ("d", 3, 1, 5)]
    (tmp_path / "w.json").write_text(json.dumps({
        "nb_res": 2, "jobs": [{"id": i, "subtime": t, "res": r, "profile": f"d{d}"} for i, t, r, d in jobs],
        "profiles": {"d10": {"type": "delay", "delay": 10}, "d5": {"type": "delay", "delay": 5}}}))
    return tmp_path


def _starts(out: Path) -> dict[str, float]:
    with (out / "out_jobs.csv").open() as f:
        return {r["job_id"]: float(r["starting_time"]) for r in csv.DictReader(f)}


def _run(case: Path, policy: str, *more: str) -> tuple[int, str]:
    return _main("run", "--policy", policy, "-p", str(FIX / "hetero4.xml"), "-w", str(case / "w.json"),
                 "-o", str(case / "out"), "--no-progress", *more)


def test_a_policy_from_a_file_runs_as_a_registered_one(case: Path) -> None:
    code, err = _run(case, f"{case / 'greedy.py'}:Greedy")
    assert code == 0, err
    # by hand, 4 hosts on hetero4.xml: a (0-10) and b (1-6) leave 1 host for c at 2, d takes it at 3
    # (greedy: no reservation for c), c starts when d ends (8) and 2 hosts are free
    assert _starts(case / "out") == {"a": 0.0, "b": 1.0, "c": 8.0, "d": 3.0}


def test_its_options_are_checked_as_a_registered_policys(case: Path) -> None:
    code, err = _run(case, f"{case / 'greedy.py'}:Greedy", "--policy-options", '{"revers": true}')
    assert code == 2 and "has no option 'revers'" in err and "its options:" in err and "reverse" in err


def test_a_module_path(monkeypatch, case: Path) -> None:
    monkeypatch.syspath_prepend(str(case))
    assert policy_class("greedy:Greedy").name == "greedy"
    assert policy_class("schedulers.fcfs:FCFS") is policy_class("fcfs")


@pytest.mark.parametrize("spec, words", [
    ("nothere.py:Greedy", ["nothere.py: no such Python file"]),
    ("{d}/greedy.py:Nope", ["defines no 'Nope'"]),
    ("json:dumps", ["dumps in json is not a subclass of schedulers.core.policy.Policy"]),
    ("no_such_module_x:A", ["importing module 'no_such_module_x' failed: ModuleNotFoundError"]),
    ("{d}/bad.py:A", ["importing", "bad.py failed: ZeroDivisionError: division by zero", "bad.py, line 2)"]),
    ("{d}/syntax.py:A", ["failed: SyntaxError", "syntax.py, line 1)"]),
    ("fcfss", ["unknown policy 'fcfss'", "FILE.py:Class"]),
])
def test_errors_name_the_file_and_what_is_wrong(case: Path, spec: str, words: list[str]) -> None:
    (case / "bad.py").write_text("import math\nx = 1 / 0\n")
    (case / "syntax.py").write_text("def f(:\n")
    code, err = _run(case, spec.format(d=case))
    assert code == 2 and err.count("\n") == 1, err
    for w in words:
        assert w in err, (w, err)
    assert not (case / "out").exists()
