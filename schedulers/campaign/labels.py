"""Words and units for the metrics and columns of a campaign (report headings, axis labels).

A campaign's columns are names (``satisfaction.user1``, ``ehosep.S.user1``,
``scenario.u1_limit``); reports and plots print them as :func:`metric_label` and
:func:`column_label` say: the campaign file's ``[report.labels]`` first (``"scenario.u1_limit" =
"user1's power limit (% of its hosts' full-load power)"``), then the built-in labels of the
project's metrics (:data:`METRIC_LABELS` and the families of :data:`FAMILIES`), then the name
itself with its ``policy.`` / ``scenario.`` prefix dropped and underscores as spaces.

Percentages carry ``(%)`` in their label; :func:`is_percent` tells the plots so.
"""

from __future__ import annotations

import re
from typing import Mapping

__all__ = ["METRIC_LABELS", "FAMILIES", "metric_label", "column_label", "is_percent"]

#: Labels (with units) of the metrics every run has.
METRIC_LABELS: dict[str, str] = {
    "jobs": "Batsim jobs (tasks and restarts)",
    "success": "jobs completed successfully",
    "killed": "jobs killed",
    "rejected": "jobs rejected",
    "makespan": "makespan (s)",
    "mean_waiting_time": "mean waiting time (s)",
    "max_waiting_time": "max waiting time (s)",
    "mean_bounded_slowdown": "mean bounded slowdown (τ = 10 s)",
    "utilisation": "utilisation (fraction of host time)",
    "energy_joules": "platform energy (J)",
    "energy_kwh": "platform energy (kWh)",
    "wall_time_s": "wall-clock time of the run (s)",
    "policy.preemptions": "preemptions",
    "policy.restarted_tasks": "tasks restarted after a preemption",
    "policy.wasted_flops": "work lost to preemptions (flops)",
    "policy.backfilled_jobs": "backfilled jobs",
    "policy.su_updates": "Su updates",
    "policy.su_skipped": "jobs ending without a Su update",
    "ehosep.system_energy": "energy of all hosts, ConsTotalSist (J)",
    "ehosep.total_time": "total execution time, TempoTotalExec (s)",
}

_BUC_ROLES = {"inj0": "injected user P = 0", "inj50": "injected user P = 0.5", "inj100": "injected user P = 1",
              "real_low": "real user, low Su", "real_mid": "real user, medium Su", "real_high": "real user, high Su",
              "gamer_long": "gaming user's long jobs"}

#: ``(pattern, label)``: a metric matching ``pattern`` (a regular expression with one group, a
#: user or role) is labelled ``label`` with ``{0}`` the group.
FAMILIES: tuple[tuple[str, str], ...] = (
    (r"satisfaction\.(.+)", "{0}: mean satisfaction, HOSEP Definition 5 (%)"),
    (r"satisfaction_osep\.(.+)", "{0}: mean satisfaction, OSEP's ideal time (%)"),
    (r"satisfaction_ispd\.(.+)", "{0}: mean satisfaction, iSPD's grid-mean ideal time (%)"),
    (r"ehosep\.S\.(.+)", "{0}: satisfaction S, EHOSEP eq. (1) (%)"),
    (r"ehosep\.S_grid\.(.+)", "{0}: S with the grid-mean ideal time (%)"),
    (r"ehosep\.S_ispd\.(.+)", "{0}: S with iSPD's energy factor (1 + ...) (%)"),
    (r"ehosep\.S_sum\.(.+)", "{0}: S as printed, a sum over the tasks (%)"),
    (r"ehosep\.time_factor\.(.+)", "{0}: time factor, mean ideal / real time"),
    (r"ehosep\.share_factor\.(.+)", "{0}: share factor ConMaxPorcao / ConsTotalPorcao"),
    (r"ehosep\.energy_factor\.(.+)", "{0}: energy factor (ConsTotalSist - ConsTotal) / (Limite x T)"),
    (r"ehosep\.CSP\.(.+)", "{0}: CSP coefficient"),
    (r"ehosep\.energy\.(.+)", "{0}: energy of its jobs (J)"),
    (r"ehosep\.mean_power\.(.+)", "{0}: mean power of its jobs (W)"),
    (r"ehosep\.limit_w\.(.+)", "{0}: power limit (W)"),
    (r"ehosep\.share_energy\.(.+)", "{0}'s hosts: energy drawn (J)"),
    (r"policy\.preemptions\.(.+)", "{0}: preemptions suffered"),
    (r"policy\.wasted_flops\.(.+)", "{0}: work lost to preemptions (flops)"),
    (r"policy\.su\.(.+)", "{0}: final Su"),
    (r"buc\.wait_reduction\.(.+)", "{0}: waiting time less than under FCFS (%)"),
    (r"buc\.wait\.(.+)", "{0}: mean waiting time (s)"),
    (r"buc\.su_mean\.(.+)", "{0}: mean Su at submission"),
    (r"buc\.su_final\.(.+)", "{0}: final Su"),
    (r"buc\.gain_kp(\d+)\.median\.su(\d+)_(\d+)",
     "median queue-position gain, Su {1}-{2}, Kp = {0} (%)"),
    (r"buc\.gain_kp(\d+)\.n\.su(\d+)_(\d+)", "jobs joining a queue of more than 5, Su {1}-{2}, Kp = {0}"),
)


def _who(name: str) -> str:
    return _BUC_ROLES.get(name, name)


def metric_label(metric: str, labels: Mapping[str, str] | None = None) -> str:
    """The label of a metric: ``labels[metric]``, a built-in label, or the name (``policy.x`` ->
    ``policy: x``)."""
    if labels and metric in labels:
        return labels[metric]
    if metric in METRIC_LABELS:
        return METRIC_LABELS[metric]
    for pattern, text in FAMILIES:
        m = re.fullmatch(pattern, metric)
        if m:
            return text.format(*(_who(g) for g in m.groups()))
    if metric.startswith("policy."):
        return f"policy: {metric[len('policy.'):]}"
    return metric


def column_label(column: str, labels: Mapping[str, str] | None = None) -> str:
    """The label of a group column (``policy``, ``scenario``, an axis): ``labels[column]``, or the
    name without its ``policy.`` / ``scenario.`` / ``engine.`` prefix, underscores as spaces."""
    if labels and column in labels:
        return labels[column]
    for prefix in ("policy.", "scenario.", "engine."):
        if column.startswith(prefix):
            column = column[len(prefix):]
    return column.replace("_", " ")


def is_percent(label: str) -> bool:
    """Whether a label says its values are percentages (it holds ``(%)`` or ends in ``%)``)."""
    return "(%)" in label or label.rstrip().endswith("%)")
