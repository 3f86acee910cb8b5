"""FCFS for the IO profiles, for ``compare_with_batsim.py --suite io``.

Each EXECUTE_JOB carries a ``storage_mapping`` that maps every storage host's name to its id
(:attr:`~schedulers.core.policy.Policy.storage_hosts`), so that a profile's labels are the storage
hosts' names; option ``no_mapping``: send none (a pfs job then uses the platform's only storage
host). Option ``kills``: ``{job name: t}``, kill that job at time t (s) if it still runs then.
Option ``io_jobs``: ``{job name: seed}``, send that job an ``additional_io_job`` instead of the
mapping: an inline ``parallel`` IO profile drawn from the seed on the job's hosts, 1 to all storage
hosts and maybe one compute host outside the allocation (flops on the job's compute hosts only,
bytes between any two of them). Option ``on_storage``: ``{job name: seed}``, run that job (of 2 hosts or
more) with its last host swapped for a storage host drawn from the seed. Option ``switches``: ``[[t, [machine ids], pstate], ...]``, raw
SET_RESOURCE_STATE requests at time t (s), storage machines included.

Used as ``gridsched run --policy scripts/io_policy.py:IOFCFS --policy-options '{"kills": {"3": 1.5}}'``.
"""

from __future__ import annotations

import random
from typing import Any

from procset import ProcSet

from schedulers.core.events import SetResourceState
from schedulers.fcfs import FCFS


class IOFCFS(FCFS):
    """FCFS sending storage mappings and IO jobs, killing jobs and switching machines at given
    times (module docstring)."""

    name = "io-fcfs"
    option_docs = {"no_mapping": "send no storage_mapping (default false)",
                   "kills": "{job name: t}: kill the job at time t (s)",
                   "io_jobs": "{job name: seed}: send the job an additional_io_job drawn from the seed",
                   "on_storage": "{job name: seed}: swap the job's last host for a storage host",
                   "switches": "[[t, [machine ids], pstate], ...]: SET_RESOURCE_STATE at time t (s)"}

    def on_simulation_begins(self, platform: Any) -> None:
        super().on_simulation_begins(platform)
        times = set(self.options.get("kills", {}).values()) | {s[0] for s in self.options.get("switches", [])}
        for t in sorted(times):
            self.call_me_later(t)

    def on_requested_call(self) -> None:
        kills = self.options.get("kills", {})
        self.kill([j for j in self.running.values() if kills.get(j.id.split("!", 1)[1]) == self.now])
        for t, ids, pstate in self.options.get("switches", []):
            if t == self.now:
                self._decisions.append(SetResourceState(resources=ProcSet(*ids), state=str(pstate)))

    def execute(self, job: Any, hosts: Any, **extra: Any) -> None:
        name = job.id.split("!", 1)[1]
        hosts = [hosts] if isinstance(hosts, int) else sorted(hosts)   # (a ProcSet or ints)
        on_storage = self.options.get("on_storage", {}).get(name)
        if on_storage is not None and job.res >= 2 and self.storage_hosts:
            hosts = hosts[:-1] + [random.Random(on_storage).choice(self.storage_hosts).id]
        seed = self.options.get("io_jobs", {}).get(name)
        if seed is not None:
            extra["additional_io_job"] = self._io_job(job, hosts, seed)
        elif not self.options.get("no_mapping") and self.storage_hosts:
            extra["storage_mapping"] = {h.name: h.id for h in self.storage_hosts}
        super().execute(job, hosts, **extra)

    def _io_job(self, job: Any, hosts: list[int], seed: int) -> dict:
        rng = random.Random(seed)
        storage = [h.id for h in self.storage_hosts]
        ids = set(hosts) | set(rng.sample(storage, rng.randint(1, len(storage))))
        others = [h for h in range(len(self.platform.hosts)) if h not in hosts]
        if others and rng.random() < 0.4:
            ids.add(rng.choice(others))
        alloc = sorted(ids)
        n = len(alloc)
        cpu = rng.choice([0.0, 0.0, 2e8, 1e9])
        com = [rng.choice([0.0, 0.0, 0.0, 1e7, 3e8, 1e9]) if i != j or rng.random() < 0.1 else 0.0
               for i in range(n) for j in range(n)]
        if not any(com):
            com[1] = 5e8   # (bytes from the first host to the second: an IO profile moves bytes)
        return {"profile_name": f"io_{job.id.split('!', 1)[1]}", "alloc": str(ProcSet(*alloc)),
                "profile": {"type": "parallel", "com": com,
                            "cpu": [cpu if h in hosts and h < len(self.platform.hosts) else 0.0 for h in alloc]}}
