"""HEFT's and green-heft's option ``reservations``: only the first R waiting jobs are placed.

Checked three ways: a case worked by hand where the depth changes a decision; message by message
against a plain reference pass (every job looked at in rank order, no index of the queue) on
homogeneous and heterogeneous hosts; and, under a backlog, the pass's cost (placements) bounded by
the depth while a depth at least the queue's length makes the decisions of the default.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_easy_backlog import backlog_workload  # noqa: E402
from test_green import begins, run, sub  # noqa: E402
from test_heft_early_stop import _Counting, _decisions, _full_pass, message_by_message  # noqa: E402

import schedulers.easy as easy_module  # noqa: E402
from schedulers.core.policy import PolicyOptionError  # noqa: E402
from schedulers.green import GreenHEFT  # noqa: E402
from schedulers.heft import HEFT  # noqa: E402


class PlainHEFT(HEFT):
    name = "heft-plain-depth"
    backfill_pass = _full_pass


class PlainGreenHEFT(GreenHEFT):
    name = "green-heft-plain-depth"
    backfill_pass = _full_pass


class CountingHEFT(_Counting, HEFT):
    name = "heft-counting-depth"
    passes = 0

    def backfill_pass(self):
        self.passes += 1
        return super().backfill_pass()


def _case(options):
    # 3 hosts of one speed. t=0: B (1 host, wt 1000) starts on host 0, A (1 host, wt 10) on host 1;
    # host 2 stays free. Then J3 (3 hosts, wt 1000), J4 (2 hosts, wt 300), J5 (1 host, wt 100)
    # arrive (rank = walltime: that order).
    p = HEFT(options)
    run(p, 0.0, begins([1e9] * 3))
    assert run(p, 0.0, sub(0.0, 1, 1, 1000), sub(0.0, 2, 1, 10)) == [("1", "0"), ("2", "1")]
    return p, run(p, 0.0, sub(0.0, 3, 3, 1000), sub(0.0, 4, 2, 300), sub(0.0, 5, 1, 100))


@pytest.mark.parametrize("threshold", [1, 256])  # EASY's index of the queue, or its scan
def test_depth_hand_worked(monkeypatch, threshold):
    monkeypatch.setattr(easy_module, "INDEX_MIN_QUEUE", threshold)
    # Every job placed (the default, or a depth of 2): J3 needs all 3 hosts, free from 1000
    # (B's walltime): [1000, 2000). J4 needs 2: only host 2 is free at 0, hosts 1 and 2 from 10
    # until 1000: [10, 310) on 1-2. J5 (100 s on 1 host): host 2 is free for 10 s only before
    # J4's slot, host 0 is B's until 1000: its slot is [310, 410) on host 1. Nothing starts.
    for options in ({}, {"reservations": 2}, {"reservations": 3}):
        p, started = _case(options)
        assert started == []
        assert (p.reservation.job.id, p.reservation.start, p.reservation.hosts_mask) == ("w0!3", 1000.0, 0b111)
    # Depth 1: J3 is placed as before; J4 would be placed at 10, not now, so it holds nothing,
    # and J5 fits now on host 2 (free until J3's slot at 1000): it starts there.
    p, started = _case({"reservations": 1})
    assert started == [("5", "2")]
    assert (p.reservation.job.id, p.reservation.start) == ("w0!3", 1000.0)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_depth_option_checked(bad):
    with pytest.raises(PolicyOptionError, match="'reservations' must be an integer >= 1"):
        HEFT({"reservations": bad})
    with pytest.raises(PolicyOptionError, match="'reservations' must be an integer >= 1"):
        GreenHEFT({"reservations": bad})


@given(seed=st.integers(0, 10**6), speeds=st.sampled_from([[1e9] * 5, [1e9, 1e9, 2e9, 2e9, 4e9], [1e9, 3e9]]),
       green=st.booleans(), delta=st.sampled_from([0.0, 10.0, 50.0]), depth=st.sampled_from([1, 2, 3, 5]))
@settings(max_examples=60, deadline=None)
def test_same_decisions_as_the_plain_rule(seed, speeds, green, delta, depth):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(easy_module, "INDEX_MIN_QUEUE", 1)
        opts = {"reservations": depth, **({"delta": delta} if green else {})}
        fast = (GreenHEFT if green else HEFT)(dict(opts))
        plain = (PlainGreenHEFT if green else PlainHEFT)(dict(opts))
        message_by_message(seed, speeds, green, fast, plain)


def test_depth_bounds_the_pass_under_a_backlog(tmp_path):
    # 600 jobs of 1-12 hosts on 32 hosts, arriving faster than they run: the queue grows. With a
    # depth of 4 a pass places at most 4 jobs that wait, plus the jobs it starts (each start after
    # the depth is one more placement), so placements <= 4 * passes + jobs; the default places far
    # more. A depth beyond any queue length makes the default's decisions.
    wl = backlog_workload(600, 71, 32, 12)
    deep = CountingHEFT({"reservations": 4})
    full = CountingHEFT()
    got = _decisions(tmp_path, deep, wl, 32)
    ref = _decisions(tmp_path, full, wl, 32)
    assert len(got) == len(ref) == 600
    assert deep.placed <= 4 * deep.passes + 600
    assert deep.placed < full.placed / 3
    same = CountingHEFT({"reservations": 10**6})
    assert _decisions(tmp_path, same, wl, 32) == ref


def test_depth_from_the_command_line(tmp_path):
    # The hand-worked case above as files and a whole `gridsched run`. 3 hosts; t=0: B (1 host,
    # walltime 1000, runs 999 s) on host 0, A (1 host, walltime 10, runs 9 s) on host 1; t=1: J3
    # (3 hosts, 1000 s), J4 (2 hosts, 300 s, runs 299 s), J5 (1 host, 100 s, runs 99 s).
    # Default: nothing starts at 1 (J4 holds [10, 310) on hosts 1-2, J5 [310, 410)); at 9 A ends
    # and J4 starts on 1-2 until 308, then J5 on host 1; J3 starts when B ends, at 999.
    # Depth 1: J5 starts at 1 on host 2 (until 100); at 9 J4 cannot start (host 2 is J5's until
    # its walltime, 101), at 100 it starts on 1-2; J3 at 999.
    import csv
    import json
    from schedulers.inputs.generators import homogeneous_platform_xml
    from test_bad_inputs import run_main

    plat = tmp_path / "p.xml"
    plat.write_text(homogeneous_platform_xml(3, 1, 1e9))
    jobs = [("B", 0, 1, 1000, 999), ("A", 0, 1, 10, 9), ("J3", 1, 3, 1000, 999), ("J4", 1, 2, 300, 299),
            ("J5", 1, 1, 100, 99)]
    wl = {"nb_res": 3,
          "jobs": [{"id": n, "subtime": t, "res": r, "walltime": w, "profile": n} for n, t, r, w, _ in jobs],
          "profiles": {n: {"type": "delay", "delay": d} for n, _, _, _, d in jobs}}
    (tmp_path / "w.json").write_text(json.dumps(wl))
    starts = {}
    for name, opts in (("default", "{}"), ("depth1", '{"reservations": 1}')):
        code, _, err = run_main(["run", "--policy", "heft", "-p", str(plat), "-w", str(tmp_path / "w.json"),
                                 "--policy-options", opts, "-o", str(tmp_path / name), "--no-progress"])
        assert code == 0, err
        with open(tmp_path / name / "out_jobs.csv", newline="") as f:
            starts[name] = {r["job_id"]: (float(r["starting_time"]), r["allocated_resources"])
                            for r in csv.DictReader(f)}
    assert starts["default"] == {"B": (0.0, "0"), "A": (0.0, "1"), "J4": (9.0, "1-2"), "J5": (308.0, "1"),
                                 "J3": (999.0, "0-2")}
    assert starts["depth1"] == {"B": (0.0, "0"), "A": (0.0, "1"), "J5": (1.0, "2"), "J4": (100.0, "1-2"),
                                "J3": (999.0, "0-2")}
