"""Jobs placed by hand on shared hosts, for ``compare_with_batsim.py --suite sharing``.

Each job starts as soon as it is submitted, on the hosts the option ``at`` gives it (``{job
name: [host ids]}``), whether or not other jobs run there (runs need ``--compute-sharing``).
Option ``kills``: ``{job name: t}``, kill that job at time t (s) if it still runs then.

Used as ``gridsched run --policy scripts/sharing_policy.py:Placed --compute-sharing
--policy-options '{"at": {"0": [0, 1], "1": [1]}, "kills": {"0": 2.5}}'``.
"""

from __future__ import annotations

from typing import Any

from schedulers.core.policy import Policy


class Placed(Policy):
    """Starts each job at submission on its given hosts; kills at given times (module docstring)."""

    name = "placed"
    option_docs = {"at": "{job name: [host ids]}: the hosts of each job",
                   "kills": "{job name: t}: kill the job at time t (s)"}

    def on_simulation_begins(self, platform: Any) -> None:
        super().on_simulation_begins(platform)
        for t in sorted(set(self.options.get("kills", {}).values())):
            self.call_me_later(t)

    def on_job_submitted(self, job: Any) -> None:
        self.execute(job, self.options["at"][job.name])

    def on_requested_call(self) -> None:
        kills = self.options.get("kills", {})
        self.kill([j for j in self.running.values() if kills.get(j.name) == self.now])
