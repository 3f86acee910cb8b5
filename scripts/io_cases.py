"""The cases of ``compare_with_batsim.py --suite io``: Batsim's IO profiles on storage hosts.

Each case: 1-5 compute hosts and 1-3 storage hosts (named ``s0``...; the pfs profiles' default
label ``pfs`` too, in half the cases) in a ``Full`` zone, each host on a private link of random
bandwidth and latency to a backbone (or no links at all in a tenth of the cases); 3-12 jobs of
``parallel_homogeneous_pfs`` (reads, writes, both, nothing, negative amounts, a label or none),
``data_staging`` between storage hosts (the same one included), ``delay``,
``parallel_homogeneous`` with or without ``com``, and ``composed`` sequences of them with
``repeat``; walltimes short enough to cut some jobs; kills at random times
(``scripts/io_policy.py``), no storage mapping in some single-storage cases; EXECUTE_JOB's
``additional_io_job`` for some ``parallel_homogeneous`` and ``delay`` jobs (drawn by the policy);
some jobs that compute nothing run with a storage host in their allocation;
``-E`` in half the cases, with power on the compute and storage hosts (a storage host at its second
pstate in a third, and then SET_RESOURCE_STATE requests switching it between its two pstates).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def io_platform(rng: random.Random, n: int, storage: list[str]) -> str:
    """A Full zone of ``n`` compute hosts ``h0``... and the storage hosts ``storage``."""
    hosts = ["master_host"] + [f"h{i}" for i in range(n)] + storage
    links = rng.random() > 0.1
    lines = ['<?xml version="1.0"?>', '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">', '<zone id="z" routing="Full">']
    for h in hosts:
        role = '<prop id="role" value="storage"/>' if h in storage else ""
        lines.append(f'  <host id="{h}" speed="{rng.choice(["1Gf", "500Mf", "2Gf"])}">{role}</host>')
    if links:
        for h in hosts:
            lines.append(f'  <link id="l_{h}" bandwidth="{rng.choice(["1GBps", "500MBps", "2GBps", "125MBps"])}" '
                         f'latency="{rng.choice(["0us", "10us", "100us", "1ms"])}"/>')
        lines.append(f'  <link id="bb" bandwidth="{rng.choice(["1GBps", "1.5GBps", "10GBps"])}" latency="0us"/>')
        for i, a in enumerate(hosts):
            for b in hosts[i + 1:]:
                lines.append(f'  <route src="{a}" dst="{b}"><link_ctn id="l_{a}"/><link_ctn id="bb"/>'
                             f'<link_ctn id="l_{b}"/></route>')
    lines += ["</zone>", "</platform>", ""]
    return "\n".join(lines)


def _leaf(rng: random.Random, storage: list[str]) -> dict:
    k = rng.random()
    if k < 0.15:
        return {"type": "delay", "delay": rng.choice([0.5, 1, 2.5])}
    if k < 0.3:
        return {"type": "parallel_homogeneous", "cpu": rng.choice([0, 5e8, 1e9, 2e9]), "com": rng.choice([0, 1e8, 5e8])}
    if k < 0.65 or len(storage) < 2 and k < 0.8:
        p: dict = {"type": "parallel_homogeneous_pfs"}
        for f in ("bytes_to_read", "bytes_to_write"):
            if rng.random() < 0.7:
                p[f] = rng.choice([0, -1e8, 1e7, 3e8, 1e9, 2.5e9])
        if "bytes_to_read" not in p and "bytes_to_write" not in p:
            p["bytes_to_write"] = 5e8
        if rng.random() < 0.7:
            p[rng.choice(["storage", "host"])] = rng.choice(storage)
        return p
    return {"type": "data_staging", "nb_bytes": rng.choice([0, 1e8, 7e8, 2e9]), "from": rng.choice(storage),
            "to": rng.choice(storage)}


def io_args(rng: random.Random, d: Path) -> list[str]:
    """The ``io`` suite's case (module docstring): its inputs written in ``d``, its arguments."""
    n = rng.randint(1, 5)
    storage = rng.choice([["pfs"], ["s0"], ["pfs", "s0"], ["s0", "pfs", "s1"], ["s1", "s0"]])
    (d / "p.xml").write_text(io_platform(rng, n, storage))
    profiles = {f"p{i}": _leaf(rng, storage) for i in range(rng.randint(2, 6))}
    if not any(p["type"] in ("parallel_homogeneous_pfs", "data_staging") for p in profiles.values()):
        profiles["io"] = {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e9}
    for i in range(rng.randint(0, 2)):
        profiles[f"c{i}"] = {"type": "composed", "repeat": rng.randint(1, 3),
                             "seq": rng.sample(sorted(profiles), rng.randint(1, min(3, len(profiles))))}
    jobs, t = [], 0.0
    for j in range(rng.randint(3, 12)):
        t += rng.choice([0, 0, 0.3, 1, 2])
        jobs.append({"id": str(j), "subtime": t, "walltime": rng.choice([-1, 100, 100, 1.5, 0.7]),
                     "res": rng.randint(1, n), "profile": rng.choice(sorted(profiles))})
    (d / "w.json").write_text(json.dumps({"nb_res": n, "jobs": jobs, "profiles": profiles}))
    options: dict = {}
    if len(storage) == 1 and rng.random() < 0.3 and not any(p["type"] == "data_staging" for p in profiles.values()):
        options["no_mapping"] = True
    if rng.random() < 0.4:
        options["kills"] = {str(rng.randrange(len(jobs))): round(rng.uniform(0, t + 2), 4) for _ in range(2)}
    if rng.random() < 0.5:
        plain = [j["id"] for j in jobs if profiles[j["profile"]]["type"] in ("parallel_homogeneous", "delay")]
        options["io_jobs"] = {k: rng.randrange(1 << 30) for k in plain if rng.random() < 0.7}
    if rng.random() < 0.4:   # (jobs of no flops: Batsim aborts when a task computes on a storage host)
        idle = [j["id"] for j in jobs if j["res"] >= 2 and _no_flops(profiles, j["profile"])]
        options["on_storage"] = {k: rng.randrange(1 << 30) for k in idle if rng.random() < 0.6}
    energy = ["-E"] if rng.random() < 0.5 else []
    if energy:
        two: list[str] = []
        (d / "p.xml").write_text(_with_power(rng, (d / "p.xml").read_text(), storage, two))
        ids = {name: n + k for k, name in enumerate(sorted(storage))}   # Batsim's: by name, after the compute hosts
        if two and rng.random() < 0.7:
            options["switches"] = [[round(rng.uniform(0, t + 2), 4), sorted(rng.sample([ids[s] for s in two],
                                                                                     rng.randint(1, len(two)))),
                                    rng.randint(0, 1)] for _ in range(rng.randint(1, 4))]
    return ["--policy", f"{ROOT / 'scripts' / 'io_policy.py'}:IOFCFS", "-p", str(d / "p.xml"),
            "-w", str(d / "w.json"), "--policy-options", json.dumps(options), *energy]


def _no_flops(profiles: dict, name: str) -> bool:
    """Whether profile ``name`` puts no flops on any host (composed: none of its stages)."""
    p = profiles[name]
    if p["type"] == "composed":
        return all(_no_flops(profiles, s) for s in p["seq"])
    return p["type"] != "parallel_homogeneous" or p["cpu"] == 0


def _with_power(rng: random.Random, text: str, storage: list[str], two: list[str]) -> str:
    """``text`` (a platform of :func:`io_platform`) with ``wattage_per_state`` on its compute
    and storage hosts; a storage host has two pstates, declared at the second, in a third of them
    (their names appended to ``two``)."""
    def power(m: re.Match) -> str:
        name, speed = m.group(1), m.group(2)
        if name == "master_host":
            return m.group(0)
        if name in storage:
            watts = rng.choice(["30:80", "12.5:40", "7:7", "0.3:1"])
            if rng.random() < 0.33:
                two.append(name)
                return (f'<host id="{name}" speed="{speed}, 1Mf" pstate="1">'
                        f'<prop id="wattage_per_state" value="{watts}, 3:9"/>')
            return f'<host id="{name}" speed="{speed}"><prop id="wattage_per_state" value="{watts}"/>'
        watts = rng.choice(["100:200", "95:190", "9.75:9.75"])
        return f'<host id="{name}" speed="{speed}"><prop id="wattage_per_state" value="{watts}"/>'
    return re.sub(r'<host id="([^"]+)" speed="([^"]+)">', power, text)
