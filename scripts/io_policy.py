"""FCFS for the IO profiles, for ``compare_with_batsim.py --suite io``.

Each EXECUTE_JOB carries a ``storage_mapping`` that maps every storage host's name to its id
(:attr:`~schedulers.core.policy.Policy.storage_hosts`), so that a profile's labels are the storage
hosts' names; option ``no_mapping``: send none (a pfs job then uses the platform's only storage
host). Option ``kills``: ``{job name: t}``, kill that job at time t (s) if it still runs then.

Used as ``gridsched run --policy scripts/io_policy.py:IOFCFS --policy-options '{"kills": {"3": 1.5}}'``.
"""

from __future__ import annotations

from typing import Any

from schedulers.fcfs import FCFS


class IOFCFS(FCFS):
    """FCFS sending storage mappings and killing jobs at given times (module docstring)."""

    name = "io-fcfs"
    option_docs = {"no_mapping": "send no storage_mapping (default false)",
                   "kills": "{job name: t}: kill the job at time t (s)"}

    def on_simulation_begins(self, platform: Any) -> None:
        super().on_simulation_begins(platform)
        for t in sorted(set(self.options.get("kills", {}).values())):
            self.call_me_later(t)

    def on_requested_call(self) -> None:
        kills = self.options.get("kills", {})
        self.kill([j for j in self.running.values() if kills.get(j.id.split("!", 1)[1]) == self.now])

    def execute(self, job: Any, hosts: Any, **extra: Any) -> None:
        if not self.options.get("no_mapping") and self.storage_hosts:
            extra["storage_mapping"] = {h.name: h.id for h in self.storage_hosts}
        super().execute(job, hosts, **extra)
