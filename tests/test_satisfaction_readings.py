"""The three readings of HOSEP's satisfaction on a case worked by hand: one 80-minute task of user1
on an i3 host, one of user4 on an i7, on the HOSEP grid (000 Table 1, 001 §5.2).

The grid (``schedulers.inputs.hosep_scenario``; MFlops)::

    user1: 3 x i7 (132,250)          mean 132,250
    user2: 1 x i7 + 2 x i5 (54,760)  mean  80,590
    user3: 1 x i3 (29,750) + 2 x i5  mean  46,423.3
    user4: 3 x i3                    mean  29,750
    grid: 867,040 / 12 hosts = 72,253.33 (the mean machine of iSPD)

A task "of 80 minutes" runs 80 min on the best machine (000 L466-468 size tasks so): 80 x 60 x
132,250 = 634,800,000 MFLOP. Both arrive at 0 s and start at once: user1's on ``user4_i3_0``
(id 9) runs 634,800,000 / 29,750 = 21,337.815126 s; user4's on ``user1_i7_0`` (id 0) runs
4,800 s. ``US = ideal / real x 100`` (000 eq. 1; no waiting, so real = run time):

=============  ===========================  ===============================  ===================
reading        ideal machine                user1 (ran on an i3)             user4 (ran on an i7)
=============  ===========================  ===============================  ===================
Definition 5   the user's own mean host     4,800 / 21,337.8 = 22.50 %       21,337.8 / 4,800 = 444.5 %
OSEP original  the host it ran on           100 %                            100 %
iSPD           the grid's mean host         29,750 / 72,253.3 = 41.17 %      132,250 / 72,253.3 = 183.0 %
=============  ===========================  ===============================  ===================

And each on its own share (user1 on an i7, user4 on an i3; the ``own-share`` reference): 100 %
for both under Definition 5 (scale invariance: a user's ideal and real times both scale as 1 /
speed), 132,250 / 72,253.3 = 183.0 % and 41.17 % under iSPD.
"""

from __future__ import annotations

import json

import pytest

from schedulers.core.satisfaction import satisfaction_metrics
from schedulers.inputs.hosep_scenario import hosep_platform_xml

MFLOP = 1e6
WORK = 80 * 60 * 132_250 * MFLOP          # flops: 80 min on an i7
I3_RUN = 634_800_000 / 29_750             # s: 21,337.815126...
I7_RUN = 4800.0
GRID_MEAN = 867_040 / 12                  # MFlops

HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,"
          "success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,"
          "stretch,allocated_resources,consumed_energy,metadata")


def _run(tmp_path, placement: dict[str, tuple[int, float]]):
    """A two-task run: ``placement[user] = (host id, run time)``, both from 0 s."""
    (tmp_path / "platform.xml").write_text(hosep_platform_xml())
    jobs = [{"id": f"{u}-0", "subtime": 0, "res": 1, "walltime": -1, "profile": "t80", "user": u}
            for u in placement]
    wl = {"nb_res": 12, "jobs": jobs, "profiles": {"t80": {"type": "parallel_homogeneous", "cpu": WORK, "com": 0}}}
    (tmp_path / "workload.json").write_text(json.dumps(wl))
    rows = [f"{u}-0,w0,t80,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,{run:f},{run:f},0.000000,"
            f"{run:f},1.000000,{host},-1.000000,\"\"" for u, (host, run) in placement.items()]
    (tmp_path / "out_jobs.csv").write_text("\n".join([HEADER, *rows]) + "\n")
    return tmp_path / "out_jobs.csv", [tmp_path / "workload.json"], tmp_path / "platform.xml"


def readings(files) -> dict[str, dict[str, float]]:
    return {mode: satisfaction_metrics(*files, mode=mode, prefix=mode) for mode in ("hosep", "osep", "ispd")}


def test_three_readings_of_the_swapped_hosts(tmp_path):
    got = readings(_run(tmp_path, {"user1": (9, I3_RUN), "user4": (0, I7_RUN)}))
    # out_jobs.csv prints times to the microsecond: 21,337.815126 s
    assert got["hosep"] == pytest.approx({"hosep.user1": 29_750 / 132_250 * 100,      # 22.4953 %
                                          "hosep.user4": 132_250 / 29_750 * 100}, rel=1e-9)  # 444.538 %
    assert got["hosep"]["hosep.user1"] == pytest.approx(22.4953, abs=1e-4)
    assert got["hosep"]["hosep.user4"] == pytest.approx(444.538, abs=1e-3)
    assert got["osep"] == pytest.approx({"osep.user1": 100.0, "osep.user4": 100.0}, rel=1e-9)
    assert got["ispd"] == pytest.approx({"ispd.user1": 29_750 / GRID_MEAN * 100,       # 41.1746 %
                                         "ispd.user4": 132_250 / GRID_MEAN * 100}, rel=1e-9)  # 183.037 %
    assert got["ispd"]["ispd.user1"] == pytest.approx(41.1746, abs=1e-4)
    assert got["ispd"]["ispd.user4"] == pytest.approx(183.037, abs=1e-3)


def test_definition_5_rates_every_user_alike_on_its_own_share(tmp_path):
    got = readings(_run(tmp_path, {"user1": (0, I7_RUN), "user4": (9, I3_RUN)}))
    # scale invariance: user1 (46 % of the power) and user4 (10 %) both get 100 %
    assert got["hosep"] == pytest.approx({"hosep.user1": 100.0, "hosep.user4": 100.0}, rel=1e-9)
    assert got["osep"] == pytest.approx({"osep.user1": 100.0, "osep.user4": 100.0}, rel=1e-9)
    # iSPD's yardstick is the same for all: the user with fast hosts is the more satisfied
    assert got["ispd"] == pytest.approx({"ispd.user1": 132_250 / GRID_MEAN * 100,
                                         "ispd.user4": 29_750 / GRID_MEAN * 100}, rel=1e-9)
