"""Energy readings of a run beside Batsim's platform total (the green-heuristic reproduction).

The green-heuristic paper (``../shared/papers/004_256d972a5ab7dee1.txt``, Table 2, L220-244)
prints energies below what the 22 Nantes hosts draw idle over its makespans (16.2 x 10^3 J for 10
jobs over 37.0 s, Table 3 L258, where 22 idle hosts alone draw 22 x 100 W x 37 s = 81.4 x 10^3 J).
Two readings can give such magnitudes, computed here from ``out_jobs.csv``:

* ``jobs_energy_j``: the sum over jobs of Batsim's per-job ``consumed_energy`` (J; the energy of
  the job's hosts between its start and its end, Batsim's ``consumed_energy_on_machines``; hosts
  shared by overlapping jobs are counted once per job);
* the platform total with the hosts no job ever used switched off from time 0 (10 W instead of
  100 W idle): ``energy_joules - (hosts - hosts_used) * (P_idle - P_off) * end_time``, which the
  report computes from ``hosts_used`` and ``end_time`` (s, last job end) given here.
"""

from __future__ import annotations

import csv
from pathlib import Path

from procset import ProcSet

from ..inputs.errors import WorkloadError


def energy_readings(out_jobs: str | Path) -> dict[str, float]:
    """``{"jobs_energy_j": J, "hosts_used": n, "end_time": s}`` from a Batsim ``out_jobs.csv``.

    Raises:
        WorkloadError: the file lacks a column or has a bad number (one line naming the file).
    """
    total, used, end = 0.0, ProcSet(), 0.0
    path = Path(out_jobs)
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            try:
                if row["allocated_resources"]:
                    used |= ProcSet.from_str(row["allocated_resources"])
                if row["finish_time"]:
                    end = max(end, float(row["finish_time"]))
                e = float(row["consumed_energy"])
            except (KeyError, ValueError) as exc:
                raise WorkloadError(f"{path}: job {row.get('job_id')!r}: bad or missing column ({exc})") from None
            if e > 0:
                total += e
    return {"jobs_energy_j": total, "hosts_used": float(len(used)), "end_time": end}
