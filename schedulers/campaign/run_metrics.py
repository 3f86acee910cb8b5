"""Metrics computed from a finished run's files, asked for by ``metrics = [...]`` in a campaign.

Each entry maps a name to ``fn(out_jobs, workloads, platform) -> {metric: number}``, where
``out_jobs`` is the run's ``out_jobs.csv``, ``workloads`` its workloads (paths or dicts, ``w0``,
``w1``... in order) and ``platform`` its platform file; the numbers join the run's summary
(``runs.csv`` columns, grouped and summarised like the others). A function with the attribute
``takes_policy_options = True`` also gets the run's policy options (keyword ``policy_options``);
one with ``needs_energy = True`` reads the energy outputs, and a campaign refuses it for a run
without ``energy``.

* ``satisfaction``: per-user mean satisfaction US (%) with the HOSEP paper's Definition 5
  (:func:`schedulers.core.satisfaction.satisfaction_metrics`, mode ``hosep``), columns
  ``satisfaction.<user>``;
* ``satisfaction-osep``: the same with OSEP's original definition (mode ``osep``), columns
  ``satisfaction_osep.<user>``;
* ``satisfaction-ispd``: the same with the ideal time of the authors' simulator iSPD (a machine
  as fast as the grid's mean host; mode ``ispd``), columns ``satisfaction_ispd.<user>``;
* ``buc``: BUC's Fig. 1 and Fig. 2 numbers (per-role waiting time and its reduction against FCFS
  on the same inputs, queue-position gain at submission by Su range for Kp 1440 and 10800),
  columns ``buc.*`` (:func:`schedulers.core.buc_metrics.buc_metrics`; Su replayed with the run's
  score rule), with each role's final Su and the workload's offered load.
* ``green-energy``: the energy readings of the green-heuristic reproduction
  (:func:`schedulers.core.energy_readings.energy_readings`): the platform's energy and power at
  the run's last event (``energy_at_end_j``, ``energy_end_s``, ``end_power_w``, from which a
  report computes the energy over a window common to several runs), ``jobs_energy_j`` (sum of
  the jobs' ``consumed_energy``), ``shared_host_s``, ``walltime_kills``, ``end_time``, and the
  workload's makespan bound (``lb_makespan_s``, ``work_host_s``, ``last_arrival_s``); needs a
  run with energy.
* ``ehosep``: EHOSEP's satisfaction ``S_i`` of the paper's eq. (1) (003 §4; mean over the tasks,
  and ``S_sum`` as printed) with its three factors, each user's CSP (003 §3.1), the energy of its
  jobs (J), their mean power against its limit (W) and the energy its hosts drew (J), the grid's
  energy and the run's length (:func:`schedulers.core.ehosep_metrics.ehosep_metrics`), columns
  ``ehosep.S.<user>``, ``ehosep.CSP.<user>``, ``ehosep.energy.<user>``... ; needs a run with
  energy and the limits recorded in the workload (the ``ehosep`` scenario generator does it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable


def _satisfaction(mode: str, prefix: str) -> Callable[..., dict[str, float]]:
    def fn(out_jobs: Path, workloads: list[Any], platform: Path) -> dict[str, float]:
        from ..core.satisfaction import satisfaction_metrics
        return satisfaction_metrics(out_jobs, workloads, platform, mode=mode, prefix=prefix)
    return fn


def _buc(out_jobs: Path, workloads: list[Any], platform: Any, *, policy_options: dict | None = None) -> dict[str, float]:
    from ..core.buc_metrics import buc_metrics
    return buc_metrics(out_jobs, workloads, platform, policy_options=policy_options)


_buc.takes_policy_options = True  # type: ignore[attr-defined]


def _ehosep(out_jobs: Path, workloads: list[Any], platform: Path) -> dict[str, float]:
    from ..core.ehosep_metrics import ehosep_metrics
    return ehosep_metrics(out_jobs, workloads, platform)


def _green_energy(out_jobs: Path, workloads: list[Any], platform: Path) -> dict[str, float]:
    from ..core.energy_readings import energy_readings
    return energy_readings(out_jobs, workloads, platform)


_ehosep.needs_energy = True  # type: ignore[attr-defined]
_green_energy.needs_energy = True  # type: ignore[attr-defined]


#: Run metrics by name.
RUN_METRICS: dict[str, Callable[..., dict[str, float]]] = {
    "satisfaction": _satisfaction("hosep", "satisfaction"),
    "satisfaction-osep": _satisfaction("osep", "satisfaction_osep"),
    "satisfaction-ispd": _satisfaction("ispd", "satisfaction_ispd"),
    "buc": _buc,
    "green-energy": _green_energy,
    "ehosep": _ehosep,
}
