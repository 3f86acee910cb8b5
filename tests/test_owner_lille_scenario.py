"""The ``owner-lille`` scenario (issue 9 item 8): Lille's clusters owned by four teams, real
HPC2N jobs of several hosts mapped to them, run by OSEP, HOSEP and EHOSEP."""

from __future__ import annotations

import csv
import math
import re

import pytest

from schedulers.core.satisfaction import satisfaction_metrics
from schedulers.engine import read_platform, simulate
from schedulers.inputs.buc_scenario import SHARED_DIR, TRACES
from schedulers.inputs.generators import generate
from schedulers.inputs.owner_lille_scenario import TEAMS, lille_owner_platform_xml
from schedulers.registry import get_policy

HPC2N = SHARED_DIR / "data" / "traces" / "pwa-swf" / TRACES["hpc2n"][0]
needs_trace = pytest.mark.skipif(not HPC2N.is_file(), reason=f"{HPC2N} absent (the read-only ../shared data)")

# Per-core speeds of the Lille nodes (GFlops, platforms/g5k_lille_2020.xml header):
# 15 chetemi 16.57, 8 chiclet 11.878125, 8 chifflet 14.982142857142858, 8 chifflot 17.0375.
S_REF = (15 * 16.57 + 8 * 11.878125 + 8 * 14.982142857142858 + 8 * 17.0375) / 39 * 1e9   # 15.3777 GFlops
S_MIN = 11.878125e9


def test_platform_gives_each_cluster_to_its_team():
    xml = lille_owner_platform_xml()
    owners = re.findall(r'<host id="(\w+)-\d+"[^>]*>\s*<prop id="owner" value="(\w+)"/>', xml)
    assert len(owners) == 39 and all(cluster == team for cluster, team in owners)
    assert {t: sum(1 for c, _ in owners if c == t) for t in TEAMS} == {"chetemi": 15, "chiclet": 8, "chifflet": 8,
                                                                       "chifflot": 8}
    spec = read_platform("<owner-lille>", text=xml)
    assert spec.compute[0].properties["owner"] == "chetemi"      # chetemi-1, resource 0


@needs_trace
def test_jobs_profiles_walltimes_and_teams():
    a, b = generate("owner-lille", {"max_jobs": 300}, 4), generate("owner-lille", {"max_jobs": 300}, 4)
    assert a.workloads == b.workloads and a.platform_xml == b.platform_xml
    real = generate("buc", {"max_jobs": 300, "injected_jobs": 0}, 0).workloads[0]
    wl = a.workloads[0]
    assert wl["nb_res"] == 39 and len(wl["jobs"]) == 300
    by_id = {j["id"]: j for j in real["jobs"]}
    team_of: dict[str, str] = {}
    for j in wl["jobs"]:
        src = by_id[j["id"]]
        assert j["trace_user"] == src["user"] and j["user"] in TEAMS and j["res"] == src["res"]
        assert team_of.setdefault(j["trace_user"], j["user"]) == j["user"]     # one team per real user
        r = min(real["profiles"][src["profile"]]["delay"], src["walltime"])     # capped at the request
        assert wl["profiles"][j["profile"]] == {"type": "parallel_homogeneous", "cpu": pytest.approx(r * S_REF),
                                                "com": 0.0}
        assert j["walltime"] == math.ceil(src["walltime"] * S_REF / S_MIN)
        assert r * S_REF / S_MIN <= j["walltime"]                                # never killed, even on chiclet
    assert len(set(team_of.values())) == 4
    other = generate("owner-lille", {"max_jobs": 300}, 5).workloads[0]
    assert [j["user"] for j in other["jobs"]] != [j["user"] for j in wl["jobs"]]  # the seed orders the users


@needs_trace
@pytest.mark.parametrize("policy, options", [("osep", {}), ("hosep", {"checkpoint": True}),
                                             ("ehosep", {"limits": {t: 150 for t in TEAMS}})])
def test_owner_share_policies_run_multi_host_jobs(tmp_path, policy, options):
    sc = generate("owner-lille", {"max_jobs": 300}, 0)
    (tmp_path / "p.xml").write_text(sc.platform_xml)
    simulate(tmp_path / "p.xml", sc.workloads, get_policy(policy, options), export_prefix=tmp_path / "out_",
             energy=True, dynamic_jobs=True, forward_profiles=True)
    rows = list(csv.DictReader(open(tmp_path / "out_jobs.csv")))
    done = {r["job_id"].split("#")[0] for r in rows if r["final_state"] == "COMPLETED_SUCCESSFULLY"}
    assert done == {str(j["id"]) for j in sc.workloads[0]["jobs"]}
    assert max(int(r["requested_number_of_resources"]) for r in rows) > 8
    for r in rows:   # a job's hosts: as many as it asked for
        n = sum(b - a + 1 for a, b in (map(int, (p.split("-") * 2)[:2]) for p in r["allocated_resources"].split()))
        assert n == int(r["requested_number_of_resources"]), r["job_id"]
    sat = satisfaction_metrics(tmp_path / "out_jobs.csv", sc.workloads, tmp_path / "p.xml", mode="hosep",
                               prefix="s")
    assert set(sat) == {f"s.{t}" for t in TEAMS} and all(v > 0 for v in sat.values())
