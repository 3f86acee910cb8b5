"""Compute-only platforms: Batsim's messages and zero-flop tasks each take one step of SimGrid's
clock, of 0 s; recorded on real Batsim 4.2.1 in ``fixtures/batsim_zero_work_steps`` (its README
explains the order)."""

from __future__ import annotations

from pathlib import Path

from schedulers.core.events import JobCompleted, JobSubmitted, Notify
from schedulers.engine import simulate
from schedulers.engine import simulator
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_zero_work_steps"


class _Recording:
    """A port that remembers every message the engine sends, as messages.txt writes them."""

    def __init__(self, policy) -> None:
        from schedulers.engine import InProcessPort
        self.port = InProcessPort(policy)
        self.lines: list[str] = []

    def exchange(self, now, events):
        def show(e):
            name = {JobSubmitted: "JOB_SUBMITTED", JobCompleted: "JOB_COMPLETED", Notify: "NOTIFY"}.get(type(e))
            if name is None:
                return type(e).__name__
            if isinstance(e, JobSubmitted):
                return f"{name} {e.job.id}"
            if isinstance(e, JobCompleted):
                return f"{name} {e.job_id}"
            return f"{name} {e.type}"
        self.lines.append(f"{round(now, 6)} | " + "; ".join(show(e) for e in events))
        return self.port.exchange(now, events)


def _run(tmp_path):
    rec = _Recording(get_policy("fcfs"))
    simulate(FIX / "platform.xml", [FIX / "workload.json"], rec, energy=True, export_prefix=tmp_path / "out_")
    return rec.lines


def test_zero_flop_stages_end_between_the_decisions_as_in_batsim(tmp_path):
    lines = _run(tmp_path)
    recorded = (FIX / "messages.txt").read_text().splitlines()
    names = {"SimulationBegins": "SIMULATION_BEGINS", "SimulationEnds": "SIMULATION_ENDS"}
    lines = [" | ".join([a, "; ".join(names.get(x, x) for x in b.split("; "))]) for a, b in (ln.split(" | ") for ln in lines)]
    assert lines == recorded
    assert recorded[3] == "0.0 | JOB_COMPLETED w0!e"   # e's four steps outlast the reply
    for name in ("jobs", "consumed_energy"):
        assert (tmp_path / f"out_{name}.csv").read_text() == (FIX / f"{name}.csv").read_text(), name


def test_the_fast_grouping_would_not_see_it(tmp_path, monkeypatch):
    # the engine's own grouping of one step's messages (server.py) ends e with c: the actor
    # model is what this workload needs (and gets: it has a computing profile of no flops)
    assert simulator._zero_work_profile([simulator.Workload("w0", "", [], {"z": {"type": "parallel", "cpu": [0, 0]}})])
    monkeypatch.setattr(simulator, "_needs_actor_model", lambda *args: False)
    lines = _run(tmp_path)
    assert not any(ln.endswith("| JOB_COMPLETED w0!e") for ln in lines)
