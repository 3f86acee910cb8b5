"""The engine's compute sharing against SimGrid 3.32 itself.

``tests/fixtures/simgrid_sharing.json`` holds random small scenarios (heterogeneous multi-core
hosts, multi-host parallel tasks overlapping on shared hosts, more tasks than cores, pstate
changes mid-run) run through SimGrid's own ``ptask_L07`` model and host-energy plugin (the
command that regenerates it is in the file and in ``scripts/record_simgrid_sharing.py``). Here
every scenario runs through the whole engine — as Batsim jobs with ``parallel`` profiles, under
``--enable-compute-sharing -E`` — and must give SimGrid's finish times and host energies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from procset import ProcSet

from schedulers.core.policy import Policy
from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.platform import read_platform

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "simgrid_sharing.json").read_text())
# Batsim allocations are host sets: a task listing one host twice needs a mapping, which the
# engine refuses (like Batsim without SMPI), so such scenarios are checked by tests/test_sharing.py only.
SCENARIOS = [s for s in FIXTURE["scenarios"] if all(len(set(t["hosts"])) == len(t["hosts"]) for t in s["tasks"])]


def platform_xml(s: dict) -> str:
    hosts = ["<host id='master_host' speed='1Gf'/>"]
    for h in s["hosts"]:
        speeds = ", ".join(f"{v!r}f" for v in h["speeds"])
        watts = ", ".join(":".join(repr(x) for x in w) for w in h["watts"])
        hosts.append(f"<host id='{h['name']}' speed='{speeds}' core='{h['cores']}'>"
                     f"<prop id='wattage_per_state' value='{watts}'/>"
                     f"<prop id='wattage_off' value='{h['wattage_off']!r}'/></host>")
    return ("<?xml version='1.0'?><platform version='4.1'><zone id='z' routing='Full'>"
            + "".join(hosts) + "</zone></platform>")


def workload(s: dict) -> dict:
    jobs, profiles = [], {}
    for i, t in enumerate(s["tasks"]):
        order = sorted(range(len(t["hosts"])), key=lambda k: t["hosts"][k])  # Batsim: cpu[i] -> i-th host of the set
        n = len(order)
        profiles[f"p{i}"] = {"type": "parallel", "cpu": [t["flops"][k] for k in order], "com": [0.0] * (n * n)}
        jobs.append({"id": str(i), "subtime": t["start"], "walltime": -1, "res": n, "profile": f"p{i}"})
    return {"nb_res": 64, "jobs": jobs, "profiles": profiles}


class Scripted(Policy):
    """Runs job i on the hosts of task i at once; applies the scenario's pstate changes."""

    def __init__(self, s):
        super().__init__()
        self.s = s
        self.changes = sorted(s["pstate_changes"], key=lambda c: c["time"])

    def on_simulation_begins(self, platform):
        for t in sorted({c["time"] for c in self.changes}):
            self.call_me_later(t)

    def on_job_submitted(self, job):
        self.execute(job, ProcSet(*self.s["tasks"][int(job.name)]["hosts"]))

    def on_requested_call(self):
        for c in self.changes:
            if c["time"] == self.now:
                self.set_pstate([c["host"]], c["pstate"])


def run(s, tmp_path):
    xml = tmp_path / "p.xml"
    xml.write_text(platform_xml(s))
    engine = build_engine(read_platform(xml), [workload(s)], energy=True, compute_sharing=True,
                          trace_outputs=False)
    return engine, engine.run(InProcessPort(Scripted(s)))


@pytest.mark.parametrize("s", SCENARIOS, ids=lambda s: f"scenario{s['index']}")
def test_engine_matches_simgrid_finish_times(s, tmp_path):
    engine, result = run(s, tmp_path)
    finish = {int(j.name): j.finish for j in result.jobs}
    for i, want in enumerate(s["results"]["finish"]):
        assert finish[i] == pytest.approx(want, rel=1e-6, abs=1e-6), f"task {i}"
    assert engine.now == pytest.approx(s["results"]["end_time"], rel=1e-9, abs=1e-6)


# Energies in the fixture's "batsim" mode: SimGrid's plugin integrates lazily, and the reads
# Batsim makes (every host at each job start and end, and in the energy row of each
# SET_RESOURCE_STATE) are what make the lazy integration exact.
@pytest.mark.parametrize("s", SCENARIOS, ids=lambda s: f"scenario{s['index']}")
def test_engine_matches_simgrid_host_energies(s, tmp_path):
    engine, _ = run(s, tmp_path)
    end = s["results"]["end_time"]
    for i, want in enumerate(s["results"]["energy_batsim"]):
        h = engine.hosts[i]
        got = h.energy + h.power * (end - h.last)
        assert got == pytest.approx(want, rel=1e-6), f"energy of host {i}"


def test_fixture_has_enough_engine_scenarios():
    # the oracle is only worth its name if it exercises sharing on many cases
    assert len(SCENARIOS) >= 20
