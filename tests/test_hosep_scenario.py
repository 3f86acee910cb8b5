"""The ``hosep`` scenario generator: HOSEP's 12-host / 4-user grid and demands.

Figures from the papers: 000 Table 1 (L472-482) and 001 §5.2 (L533-551) for the grid and the
shares; 001 §5.3 (L557-579) for the task sizes and mixes, 000 L484-487 for the mixes' totals;
001 §5.4 (L604) for the 6-minute delay.
"""

from __future__ import annotations

import csv
import json
from collections import Counter

import pytest

from schedulers.cli import main as gridsched
from schedulers.core.ownership import Ownership
from schedulers.core.run_outputs import read_hosts
from schedulers.inputs.generators import GENERATORS, GeneratorError, generate
from schedulers.inputs.hosep_scenario import class_counts
from schedulers.inputs.scenario_cli import main as scenario_cli
from schedulers.inputs.validate import validate_workload

MF = 1e6  # flops/s per MFlops (and flops per MFLOP)


def hosts_of(scenario, tmp_path):
    path = tmp_path / "platform.xml"
    path.write_text(scenario.platform_xml)
    return read_hosts(path)


def test_registered_with_its_parameters():
    assert GENERATORS["hosep"].params == {"demand": "large", "late": "user1", "tasks_per_user": 10,
                                          "large_max_minutes": 420.0, "late_delay": 360.0}


def test_grid_hosts_owners_and_shares(tmp_path):
    hosts = hosts_of(generate("hosep", {}, 0), tmp_path)
    assert len(hosts) == 12
    assert all(h.cores == 1 for h in hosts)
    assert Counter(h.speeds[0] for h in hosts) == {132_250 * MF: 4, 54_760 * MF: 4, 29_750 * MF: 4}
    own = Ownership(hosts)
    assert own.owners == ("user1", "user2", "user3", "user4")
    assert [len(own.share(u)) for u in own.owners] == [3, 3, 3, 3]
    # Provided (MFlops): user1 3 x 132,250 = 396,750; user2 132,250 + 2 x 54,760 = 241,770;
    # user3 29,750 + 2 x 54,760 = 139,270; user4 3 x 29,750 = 89,250; total 867,040
    assert [own.provided(u) / MF for u in own.owners] == [396_750, 241_770, 139_270, 89_250]
    assert own.total_power / MF == 867_040
    # the papers' percentages, to 2 decimals: 45.76 / 27.88 / 16.06 / 10.29 (000 Table 1 prints
    # user3's as "16,6", a misprint: 139,270 / 867,040 = 16.06 %, as 001 L546 prints it)
    assert [round(100 * own.share_fraction(u), 2) for u in own.owners] == [45.76, 27.88, 16.06, 10.29]
    # energy runs need power states on every compute host
    assert all(h.properties["wattage_per_state"] == "100.0:200.0" for h in hosts)


@pytest.mark.parametrize("demand, mix, totals", [
    ("small", (6, 3, 1), (24, 12, 4)),      # 001 L567-570; 000 L484-486 (all users)
    ("medium", (3, 6, 1), (12, 24, 4)),     # 001 L571-574; 000 L486
    ("large", (1, 3, 6), (4, 12, 24)),      # 001 L575-578; 000 L486-487
])
def test_task_counts_per_class(demand, mix, totals):
    w = generate("hosep", {"demand": demand}, 5).workloads[0]
    assert len(w["jobs"]) == 40
    per_user = Counter((j["user"], j["size_class"]) for j in w["jobs"])
    for u in ("user1", "user2", "user3", "user4"):
        assert (per_user[u, "small"], per_user[u, "medium"], per_user[u, "large"]) == mix
    total = Counter(j["size_class"] for j in w["jobs"])
    assert (total["small"], total["medium"], total["large"]) == totals


def test_task_sizes_in_the_monograph_ranges():
    w = generate("hosep", {"demand": "medium"}, 11).workloads[0]
    # MFLOP bounds (001 L560-563) = 5 / 30 / 80 / 420 min on the best machine, 132,250 MFlops
    bounds = {"small": (39_675_000, 238_050_000), "medium": (238_050_000, 634_800_000),
              "large": (634_800_000, 3_332_700_000)}
    for j in w["jobs"]:
        p = w["profiles"][j["profile"]]
        assert p["type"] == "parallel_homogeneous" and p["com"] == 0
        lo, hi = bounds[j["size_class"]]
        assert lo * MF <= p["cpu"] < hi * MF, j
        assert j["res"] == 1 and j["walltime"] == -1
    # the paper's large tasks (80-240 min, 000 L467-468): at most 132,250 x 60 x 240 MFLOP
    w240 = generate("hosep", {"demand": "large", "large_max_minutes": 240.0}, 11).workloads[0]
    large = [w240["profiles"][j["profile"]]["cpu"] for j in w240["jobs"] if j["size_class"] == "large"]
    assert len(large) == 24 and max(large) < 1_904_400_000 * MF


@pytest.mark.parametrize("late", ["user1", "user4"])
def test_late_user_submits_six_minutes_later(late):
    w = generate("hosep", {"late": late}, 1).workloads[0]
    for j in w["jobs"]:
        assert j["subtime"] == (360.0 if j["user"] == late else 0.0)
    none = generate("hosep", {"late": "none"}, 1).workloads[0]
    assert {j["subtime"] for j in none["jobs"]} == {0.0}


def test_deterministic_per_seed():
    a = generate("hosep", {"demand": "small"}, 3)
    b = generate("hosep", {"demand": "small"}, 3)
    c = generate("hosep", {"demand": "small"}, 4)
    assert json.dumps(a.workloads[0]) == json.dumps(b.workloads[0])
    assert a.platform_xml == b.platform_xml
    assert json.dumps(a.workloads[0]["profiles"]) != json.dumps(c.workloads[0]["profiles"])


def test_other_task_counts_and_bad_parameters():
    # 20 tasks: twice the mix; 5 tasks: 3 / 1.5 / 0.5 -> 3 / 1 / 0, one more to the tie of
    # remainders 0.5 / 0.5 broken towards the smaller class -> 3 / 2 / 0
    assert class_counts("small", 20) == (12, 6, 2)
    assert class_counts("small", 5) == (3, 2, 0)
    assert len(generate("hosep", {"tasks_per_user": 20}, 0).workloads[0]["jobs"]) == 80
    with pytest.raises(GeneratorError, match="demand must be one of small, medium, large, got 'huge'"):
        generate("hosep", {"demand": "huge"}, 0)
    with pytest.raises(GeneratorError, match="late must be"):
        generate("hosep", {"late": "user9"}, 0)
    with pytest.raises(GeneratorError, match="large_max_minutes must be > 80"):
        generate("hosep", {"large_max_minutes": 60.0}, 0)


def test_workload_is_valid_batsim():
    w = generate("hosep", {}, 2).workloads[0]
    validate_workload(w, "<hosep>")          # raises WorkloadError when not valid


def test_command_writes_files_and_fcfs_runs_them(tmp_path, capsys):
    out = tmp_path / "scn"
    assert scenario_cli(["hosep", "--demand", "large", "--late", "user1", "--seed", "3", "-o", str(out)]) == 0
    written = json.loads((out / "workload.json").read_text())
    assert written == generate("hosep", {"demand": "large", "late": "user1"}, 3).workloads[0]
    assert scenario_cli(["hosep", "--demand", "huge", "-o", str(tmp_path / "bad")]) == 2
    assert "demand must be one of" in capsys.readouterr().err
    code = gridsched(["run", "--policy", "fcfs", "-p", str(out / "platform.xml"), "-w", str(out / "workload.json"),
                      "-o", str(tmp_path / "run"), "-E", "--no-progress"])
    assert code == 0
    with open(tmp_path / "run" / "out_jobs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 40
    assert {r["final_state"] for r in rows} == {"COMPLETED_SUCCESSFULLY"}
    assert all("-" not in r["allocated_resources"] and " " not in r["allocated_resources"] for r in rows)
    # user1 is late: none of its tasks starts before 360 s
    assert min(float(r["starting_time"]) for r in rows if r["job_id"].startswith("user1-")) >= 360.0
