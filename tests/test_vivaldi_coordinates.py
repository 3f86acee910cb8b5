"""Hosts of a ``Vivaldi`` zone and their ``coordinates`` (SimGrid 3.32,
``src/kernel/routing/VivaldiZone.cpp``: a route's latency is ``(sqrt(dx^2 + dy^2) + |z1| + |z2|)
/ 1000`` s; a host without coordinates aborts the run when a route from or to it is computed).

Recorded on real Batsim 4.2.1 (release build, SimGrid 3.32, 2026-11-24) with the platforms and
workloads written below, FCFS through ``gridsched run --engine batsim``:

* ``host1`` without coordinates, one job on ``host0``: the run ends normally, job ``a`` on
  [0, 5] s; a second job on ``host1`` (submitted at 1 s, 5 s long): Batsim aborts at t = 6 s
  (``[6.000000] ... Please specify the Vivaldi coordinates of Host host1``), when the job's end
  is sent from ``host1``;
* ``host1`` without coordinates, one job on ``host0`` and ``host1`` sending bytes between them
  (``parallel_homogeneous``, ``com`` 1e6): Batsim aborts at t = 0, when the task starts;
* ``master_host`` without coordinates: Batsim aborts at t = 0;
* ``master_host`` at ``0 0 5`` and ``host0`` at ``3 4 0``: the run ends normally, job ``a`` on
  [0.05, 5.05] s (each message takes 0.01 s: SimGrid 3.32 via python3-simgrid gives a 1-byte
  message between those hosts 0.01 s), as the embedded engine gives it (messages timed as
  SimGrid does, :func:`schedulers.engine.platform.vivaldi_routes`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedulers.engine import EngineError, InProcessPort, build_engine
from schedulers.engine.platform import read_platform, vivaldi_error
from schedulers.fcfs import FCFS


def _platform(tmp: Path, master: str | None, hosts: list[str | None]) -> Path:
    def attr(c: str | None) -> str:
        return f' coordinates="{c}"' if c is not None else ""

    text = ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            '<platform version="4.1"><zone id="AS0" routing="Vivaldi">\n'
            f'<host id="master_host"{attr(master)} speed="100Mf"/>\n'
            + "".join(f'<host id="host{i}"{attr(c)} speed="100Mf"/>\n' for i, c in enumerate(hosts))
            + "</zone></platform>\n")
    path = tmp / "p.xml"
    path.write_text(text)
    return path


def _workload(tmp: Path, second_job: bool) -> Path:
    jobs = [{"id": "a", "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}]
    if second_job:
        jobs.append({"id": "b", "subtime": 1, "walltime": -1, "res": 1, "profile": "d"})
    path = tmp / "w.json"
    path.write_text(json.dumps({"nb_res": 2, "jobs": jobs, "profiles": {"d": {"type": "delay", "delay": 5}}}))
    return path


def _run(plat: Path, wl: Path):
    return build_engine(plat, [str(wl)]).run(InProcessPort(FCFS()))


def test_a_host_without_coordinates_that_never_sends_is_no_error(tmp_path):
    res = _run(_platform(tmp_path, "0 0 0", ["0 0 0", None]), _workload(tmp_path, second_job=False))
    (a,) = res.jobs
    assert (a.start, a.finish) == (0.0, 5.0)


def test_a_job_ending_on_a_host_without_coordinates_stops_the_run_there(tmp_path):
    with pytest.raises(EngineError) as info:
        _run(_platform(tmp_path, "0 0 0", ["0 0 0", None]), _workload(tmp_path, second_job=True))
    msg = str(info.value)
    assert "t=6:" in msg and "'host1'" in msg and "w0!b" in msg and "Please specify the Vivaldi" in msg


def test_a_communication_with_a_host_without_coordinates_stops_the_run_when_it_starts(tmp_path):
    wl = tmp_path / "wc.json"
    wl.write_text(json.dumps({"nb_res": 2, "jobs": [{"id": "a", "subtime": 0, "walltime": -1, "res": 2, "profile": "p"}],
                              "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 1e8, "com": 1e6}}}))
    with pytest.raises(EngineError) as info:
        _run(_platform(tmp_path, "0 0 0", ["0 0 0", None]), wl)
    msg = str(info.value)
    assert "t=0:" in msg and "'host1'" in msg and "communications of job w0!a" in msg


def test_a_master_host_without_coordinates_is_refused_at_once(tmp_path):
    plat = read_platform(_platform(tmp_path, None, ["0 0 0", "0 0 0"]))
    assert plat.vivaldi_error is not None and "'master_host'" in plat.vivaldi_error and "t = 0" in plat.vivaldi_error
    with pytest.raises(EngineError, match="master_host"):
        build_engine(plat, [str(_workload(tmp_path, second_job=False))])


def test_coordinates_give_each_message_the_latency_of_its_hosts_distance(tmp_path):
    # recorded: master at (0, 0, 5), host0 at (3, 4, 0): every message takes (5 + 0 + 5) / 1000 =
    # 0.01 s (the master to itself: 2 x 5 / 1000), and job a runs on [0.05, 5.05]
    res = _run(_platform(tmp_path, "0 0 5", ["3 4 0", "0 0 0"]), _workload(tmp_path, second_job=False))
    (a,) = res.jobs
    assert (round(a.start, 9), round(a.finish, 9)) == (0.05, 5.05)
    spec = read_platform(_platform(tmp_path, "0 0 5", ["3 4 0", "0 0 0"]))
    assert spec.message_delays.master == 0.01 and spec.message_delays.hosts == {"host0": 0.01, "host1": 0.005}


def test_coordinates_outside_one_vivaldi_zone_are_refused_not_ignored(tmp_path):
    # the master in a Full zone, the hosts in a Vivaldi zone beside it: not timed by the engine
    p = tmp_path / "p.xml"
    p.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                 '<platform version="4.1"><zone id="AS0" routing="Full">'
                 '<zone id="v" routing="Vivaldi"><host id="host0" coordinates="3 4 0" speed="100Mf"/>'
                 '<router id="rv" coordinates="0 0 0"/></zone>'
                 '<zone id="m" routing="Full"><host id="master_host" speed="100Mf"/></zone>'
                 '<link id="l" bandwidth="1GBps" latency="0us"/>'
                 '<zoneRoute src="v" dst="m" gw_src="rv" gw_dst="master_host"><link_ctn id="l"/></zoneRoute>'
                 "</zone></platform>\n")
    with pytest.raises(EngineError) as info:
        _run(p, _workload(tmp_path, second_job=False))
    assert "'3 4 0'" in str(info.value) and "--engine batsim" in str(info.value)


FIX = Path(__file__).parent / "fixtures" / "batsim_vivaldi"


@pytest.mark.parametrize("case, policy, options, energy", [
    ("s120", "conservative", {"idle_timeout": 5}, True), ("s34", "heft", None, False)])
def test_recorded_vivaldi_runs(case, policy, options, energy):
    from schedulers.engine.outputs import energy_rows, job_rows, machine_state_rows
    from schedulers.registry import get_policy

    d = FIX / case
    result = build_engine(d / "p.xml", [str(d / "w.json")], energy=energy).run(InProcessPort(get_policy(policy, options)))
    assert job_rows(result) == (d / "out_jobs.csv").read_text().splitlines()
    assert machine_state_rows(result) == (d / "out_machine_states.csv").read_text().splitlines()
    if energy:
        assert energy_rows(result) == (d / "out_consumed_energy.csv").read_text().splitlines()
    if case == "s34":   # job 21: no flop, the h0-h2 latency alone (README)
        assert "21,w0,x33,17.493827,2,-1.000000,1,COMPLETED_SUCCESSFULLY,28.060574,0.006921," in \
            (d / "out_jobs.csv").read_text()


@pytest.mark.parametrize("coords, expected", [
    ("0 0 0", None), ("-0 0.0 0e3", None), ("0 0", "3 dimensions"), ("0  0 0", "3 dimensions"),
    ("0 0 x", "not a number"), ("0 0 1e-3", "distance / 1000 s"),
])
def test_coordinates_are_read_as_simgrid_reads_them(coords, expected):
    # boost::split on single spaces (an empty part counts), std::stod for each part
    err = vivaldi_error("p.xml", {"master_host": "0 0 0", "host0": coords}, "master_host")
    if expected is None:
        assert err is None
    else:
        assert err is not None and expected in err and "'host0'" in err
