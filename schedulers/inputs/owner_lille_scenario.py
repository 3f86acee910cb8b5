"""Scenario generator ``owner-lille``: owner-share scheduling on a real trace with multi-host jobs
(beyond the papers).

The papers' grids (``shared/papers`` 000 Table 1, 001 §5.2, 003 Table 1) are small, with one-host
tasks. This scenario asks OSEP, HOSEP and EHOSEP to run real jobs of many hosts:

* **Owners**: the four Grid'5000 Lille clusters of ``platforms/g5k_lille_2020.xml`` (39 nodes)
  belong to four teams named after them (host property ``owner`` = ``chetemi``, ``chiclet``,
  ``chifflet``, ``chifflot``): shares of 4,971, 3,040.8, 3,356 and 3,271.2 GFlops (nominal node
  power, per-core speed x cores, as :func:`schedulers.core.ownership.host_power` counts it).
* **Jobs**: the real HPC2N jobs that BUC's scenario uses (:func:`schedulers.inputs.buc_scenario.
  real_jobs`: the first ``max_jobs`` records, requested times as walltimes, res rescaled to the 39
  nodes keeping each job's share of the machine), each with its real user.
* **Users to teams**: each real user joins one team. The users, in a seeded random order, go one
  by one to the team whose demand so far (sum of res x run time, host-seconds) is the smallest
  relative to its share's power, so every team asks about its share of the grid. A job's
  ``user`` field is its team: the owner-share policies see four users, each owning one cluster.
  (The real user is kept as the job field ``trace_user``.)
* **Work**: a run time ``r`` s of the trace becomes a computing profile
  (``parallel_homogeneous``, ``cpu = r x S_ref`` flops per host, ``S_ref`` = the mean per-core
  speed of the 39 nodes, 15.378 GFlops): on a node of per-core speed ``S`` (Batsim runs one part
  per host, one core busy) it lasts ``r x S_ref / S``, so the clusters' speeds matter, as in the
  papers' heterogeneous grids, and checkpointing can shrink a restarted profile. A job the real
  system killed at its walltime keeps the run time it had (its requested time). Walltimes are
  scaled by ``S_ref / S_min`` (1.2946) and rounded up: no job reaches its walltime, even on the
  slowest cluster, so every task ends successfully and has a satisfaction (000 eq. 1).

How the owner-share quantities extend to jobs of several hosts (:mod:`schedulers.core.ownership`,
:mod:`schedulers.core.owner_share`): a job holds the whole power of every host it runs on
(``Allocated`` and PowerDiff sum them); preempting it frees all of them (``RP`` subtracts their
sum); a beneficiary's task gets them only if it needs no more hosts than the victim's task held
(the smallest such task of HOSEP's beneficiary; OSEP's first ready task that fits). One
preemption never gathers hosts from several victims: a beneficiary whose every task is larger
than any single running task of the users in excess waits for idle hosts.

Determinism: ``numpy.random.default_rng(seed)`` orders the users; the jobs are the trace's.

Errors: the trace file missing (``../shared`` absent): :class:`GeneratorError`, one line naming it.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .generators import GeneratorError, Scenario, register_generator

__all__ = ["owner_lille_scenario", "lille_owner_platform_xml", "TEAMS"]

#: Teams (owners), one per Lille cluster, named after it.
TEAMS = ("chetemi", "chiclet", "chifflet", "chifflot")

_HOST = re.compile(r'(<host id="(chetemi|chiclet|chifflet|chifflot)-\d+"[^>]*>)')
_SPEED = re.compile(r'<host id="(\w+)-\d+" speed="([0-9.eE+-]+)Gf[^"]*" core="(\d+)"')


def lille_owner_platform_xml() -> str:
    """``platforms/g5k_lille_2020.xml`` with ``<prop id="owner" value="CLUSTER"/>`` on each node.

    Raises:
        GeneratorError: the platform file is missing or has no Lille node.
    """
    from .buc_scenario import LILLE_PLATFORM   # here: buc_scenario imports generators, which imports us
    try:
        text = LILLE_PLATFORM.read_text()
    except OSError as exc:
        raise GeneratorError(f"generator 'owner-lille': cannot read {LILLE_PLATFORM}: {exc.strerror}") from None
    out, n = _HOST.subn(lambda m: f'{m.group(1)}\n      <prop id="owner" value="{m.group(2)}"/>', text)
    if n == 0:
        raise GeneratorError(f"generator 'owner-lille': {LILLE_PLATFORM} has no Lille node")
    return out


def _speeds(text: str) -> dict[str, tuple[float, int, int]]:
    """cluster -> (per-core speed flops/s, cores, nodes)."""
    out: dict[str, tuple[float, int, int]] = {}
    for cluster, gf, cores in _SPEED.findall(text):
        s, c, k = out.get(cluster, (float(gf) * 1e9, int(cores), 0))
        out[cluster] = (s, c, k + 1)
    return out


@register_generator("owner-lille", params={"max_jobs": 1000, "trace": "hpc2n", "trace_file": ""}, docs={
    "max_jobs": "keep the first N real jobs (0: all 3,171)",
    "trace": "the real jobs: 'hpc2n' or 'kth', from ../shared (as the buc generator)",
    "trace_file": "another SWF file for the real jobs ('': the trace's file in ../shared)"})
def owner_lille_scenario(params: dict[str, Any], seed: int) -> Scenario:
    """Lille's four clusters owned by four teams, the real HPC2N jobs mapped to the teams.

    Parameters: ``max_jobs`` (the first N real jobs, 1000; 0 = all 3,171), ``trace`` and
    ``trace_file`` (as the ``buc`` generator). See the module docstring.

    Raises:
        GeneratorError: missing trace or platform file, ``max_jobs < 0``, no job left.
    """
    if params["max_jobs"] < 0:
        raise GeneratorError("generator 'owner-lille': max_jobs must be >= 0")
    xml = lille_owner_platform_xml()
    clusters = _speeds(xml)
    if set(clusters) != set(TEAMS):
        raise GeneratorError(f"generator 'owner-lille': the Lille platform has clusters {sorted(clusters)}, "
                             f"expected {', '.join(TEAMS)}")
    share = {t: clusters[t][0] * clusters[t][1] * clusters[t][2] for t in TEAMS}          # flops/s
    s_ref = math.fsum(s * k for s, _, k in clusters.values()) / sum(k for *_, k in clusters.values())
    s_min = min(s for s, _, _ in clusters.values())
    from .buc_scenario import real_jobs
    wl = real_jobs(params["trace"], params["trace_file"], params["max_jobs"], "owner-lille")
    jobs_in = wl["jobs"]
    if not jobs_in:
        raise GeneratorError("generator 'owner-lille': the trace has no job left")
    runtime = {name: float(p["delay"]) for name, p in wl["profiles"].items()}
    # run time of each job (s): the trace's, capped at the walltime where the real system killed it
    used = [runtime[j["profile"]] if j["walltime"] <= 0 else min(runtime[j["profile"]], float(j["walltime"]))
            for j in jobs_in]
    demand: dict[str, float] = {}
    for j, r in zip(jobs_in, used):
        demand[j["user"]] = demand.get(j["user"], 0.0) + j["res"] * r
    users = sorted(demand)
    import numpy as np  # here, not at the top: `gridsched` starts without numpy
    order = [users[i] for i in np.random.default_rng(seed).permutation(len(users))]
    team_of: dict[str, str] = {}
    load = dict.fromkeys(TEAMS, 0.0)
    for u in order:
        t = min(TEAMS, key=lambda t: (load[t] / share[t], t))
        team_of[u] = t
        load[t] += demand[u]
    jobs: list[dict[str, Any]] = []
    profiles: dict[str, dict[str, Any]] = {}
    for j, r in zip(jobs_in, used):
        pname = f"cpu_{r:g}"
        profiles.setdefault(pname, {"type": "parallel_homogeneous", "cpu": r * s_ref, "com": 0.0})
        wt = j["walltime"]
        jobs.append({**j, "user": team_of[j["user"]], "trace_user": j["user"], "profile": pname,
                     "walltime": wt if wt <= 0 else math.ceil(wt * s_ref / s_min)})
    desc = (f"owner-lille seed {seed}: {len(jobs)} {params['trace']} jobs of {len(users)} users in 4 teams "
            f"owning the 4 Lille clusters (39 nodes)")
    workload = {"nb_res": 39, "jobs": jobs, "profiles": profiles, "description": desc}
    return Scenario(platform_xml=xml, workloads=[workload], description=desc)
