"""Energy readings of one run for the green-heuristic reproduction, and the bound of its workload.

The green-heuristic paper (Pillon et al., ``../shared/papers/004_256d972a5ab7dee1.txt``, ``L<n>``
= its line) compares "the total consumption of the Nantes Econome cluster" (L218, Table 2) as
Batsim reports it (L168). Batsim's ``consumed_joules`` integrates the platform's power from 0 to
the end of the simulation, so two runs of one workload that end at different times are measured
over different spans: the shorter one is not charged for the hosts that stay on after it. The
readings here let a report compare runs over **one common window** ``[0, W]``:

* ``energy_at_end_j``, ``energy_end_s``: the platform's energy (J) and the time (s) of the last
  row of Batsim's ``out_consumed_energy.csv`` (the last job end or host switch, where Batsim's
  total stops); ``end_power_w``: the power (W) the platform draws after that, every compute host
  idle at its final pstate (``Idle`` of that pstate's ``wattage_per_state``: 100 W awake, 10 W
  asleep on Nantes). Over ``[0, W]`` with ``W >= energy_end_s`` the run's platform energy is
  :func:`window_energy` ``= energy_at_end_j + end_power_w * (W - energy_end_s)``: the hosts stay
  as the run left them.
* ``jobs_energy_j``: the sum over jobs of Batsim's per-job ``consumed_energy`` (J: the energy of
  the job's hosts between its start and its end). It counts a host shared by two overlapping jobs
  once per job (``shared_host_s`` host-seconds of such sharing) and never counts idle hosts;
  with fixed run times on unshared hosts it is the same for every schedule.
* ``walltime_kills``: jobs Batsim killed at their walltime (``COMPLETED_WALLTIME_REACHED``): on
  the contention platform, jobs slowed down by an overlap.
* ``end_time``: the last job end (s).

:func:`workload_bound` gives the makespan no schedule that runs one job per host at a time can
beat: ``max(max_i (r_i + p_i), min_i r_i + sum_i q_i p_i / hosts)`` (``r`` arrival, ``q`` hosts,
``p`` run time on dedicated hosts, all in s), the classic bounds of the last arrival and of the
work over the capacity.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Iterable

from procset import ProcSet

from ..inputs.errors import WorkloadError

__all__ = ["energy_readings", "dedicated_time", "workload_bound", "window_energy"]

KILLED_AT_WALLTIME = "COMPLETED_WALLTIME_REACHED"


def _rows(path: Path) -> Iterable[dict[str, str]]:
    try:
        with path.open(newline="") as f:
            yield from csv.DictReader(f)
    except OSError as exc:
        raise WorkloadError(f"{path}: cannot read ({exc.strerror or exc}); the run needs energy outputs (-E)") \
            from None


def _num(path: Path, row: dict[str, str], col: str) -> float:
    try:
        return float(row[col])
    except (KeyError, TypeError, ValueError):
        raise WorkloadError(f"{path}: row {row!r}: bad or missing column {col!r}") from None


def _shared_host_seconds(jobs: list[tuple[float, float, ProcSet]]) -> float:
    """Host-seconds during which two or more jobs ran on one host."""
    per_host: dict[int, list[tuple[float, int]]] = {}
    for start, end, hosts in jobs:
        if end <= start:
            continue
        for h in hosts:
            per_host.setdefault(h, []).extend(((start, 1), (end, -1)))
    total = 0.0
    for events in per_host.values():
        events.sort()  # ends before starts at the same time: no sharing across a hand-over
        level, last = 0, 0.0
        for t, d in events:
            if level >= 2:
                total += t - last
            level += d
            last = t
    return total


def _end_power(prefix: str, platform: Any) -> float:
    """Sum over compute hosts of the idle watts of their final pstate (from out_pstate_changes.csv)."""
    from ..engine.platform import PlatformSpec, read_platform

    spec = platform if isinstance(platform, PlatformSpec) else read_platform(platform)
    pstates = [h.pstate for h in spec.compute]
    path = Path(prefix + "pstate_changes.csv")
    for row in _rows(path):
        try:
            p = int(row["new_pstate"])
            hosts = ProcSet.from_str(row["machine_id"])
        except (KeyError, TypeError, ValueError):
            raise WorkloadError(f"{path}: row {row!r}: bad machine_id or new_pstate") from None
        for h in hosts:
            if not 0 <= h < len(pstates):
                raise WorkloadError(f"{path}: machine {h} is not a compute host of {spec.source}")
            pstates[h] = p
    total = 0.0
    for h, p in zip(spec.compute, pstates):
        if h.power is None or not 0 <= p < len(h.power):
            raise WorkloadError(f"{spec.source}: host {h.name!r} has no wattage_per_state for pstate {p}")
        total += h.power[p].idle
    return total


def energy_readings(out_jobs: str | Path, workloads: list[Any] | None = None, platform: Any = None) -> dict[str, float]:
    """The readings of the module docstring from one run's Batsim output files.

    Args:
        out_jobs: the run's ``out_jobs.csv``; ``out_consumed_energy.csv`` and
            ``out_pstate_changes.csv`` are read next to it (same prefix) when ``platform`` is given.
        workloads: the run's workloads (dicts or paths); with ``platform``, adds
            :func:`workload_bound`'s ``lb_makespan_s``, ``work_host_s`` and ``last_arrival_s``.
        platform: the platform (path or parsed); None: only the readings of ``out_jobs.csv``
            (``jobs_energy_j``, ``shared_host_s``, ``walltime_kills``, ``end_time``).

    Returns:
        ``{name: number}``: J, s, W, host-s and counts as named.

    Raises:
        WorkloadError: a file is missing (energy outputs need ``-E``), lacks a column or has a bad
            number, or the platform has no power for a host's final pstate (one line naming the file).
    """
    path = Path(out_jobs)
    total, end, kills = 0.0, 0.0, 0
    spans: list[tuple[float, float, ProcSet]] = []
    for row in _rows(path):
        e = _num(path, row, "consumed_energy")
        if e > 0:
            total += e
        if row.get("final_state") == KILLED_AT_WALLTIME:
            kills += 1
        if row.get("allocated_resources"):
            try:
                hosts = ProcSet.from_str(row["allocated_resources"])
            except ValueError:
                raise WorkloadError(f"{path}: job {row.get('job_id')!r}: bad allocated_resources") from None
            start, fin = _num(path, row, "starting_time"), _num(path, row, "finish_time")
            spans.append((start, fin, hosts))
            end = max(end, fin)
    out = {"jobs_energy_j": total, "shared_host_s": _shared_host_seconds(spans), "walltime_kills": float(kills),
           "end_time": end}
    if platform is None:
        return out
    name = path.name
    prefix = str(path)[: -len("jobs.csv")] if name.endswith("jobs.csv") else str(path.with_name("out_"))
    epath = Path(prefix + "consumed_energy.csv")
    last = None
    for row in _rows(epath):
        last = row
    if last is None:
        raise WorkloadError(f"{epath}: no energy row")
    out["energy_end_s"] = _num(epath, last, "time")
    out["energy_at_end_j"] = _num(epath, last, "energy")
    out["end_power_w"] = _end_power(prefix, platform)
    if workloads:
        out.update(workload_bound(workloads, platform))
    return out


def window_energy(energy_at_end_j: float, energy_end_s: float, end_power_w: float, window_s: float) -> float:
    """Platform energy (J) of a run over ``[0, window_s]``: its energy at its last event plus its
    final power (W) until the window's end (module docstring).

    Raises:
        ValueError: ``window_s`` before the run's last event.
    """
    if window_s < energy_end_s - 1e-9 * max(1.0, energy_end_s):
        raise ValueError(f"window end {window_s} s is before the run's last event at {energy_end_s} s")
    return energy_at_end_j + end_power_w * max(0.0, window_s - energy_end_s)


def dedicated_time(profile: str, profiles: dict[str, dict], speed: float) -> float:
    """Run time (s) of a job of ``profile`` whose every part has one core of ``speed`` flops/s to
    itself: ``parallel_homogeneous`` ``cpu / speed``, ``delay`` its delay, ``composed`` the sum of
    its steps times ``repeat``.

    Raises:
        WorkloadError: another profile type, or an unknown profile name.
    """
    p = profiles.get(profile)
    if p is None:
        raise WorkloadError(f"profile {profile!r} is not in the workload")
    kind = p.get("type")
    if kind == "delay":
        return float(p["delay"])
    if kind == "parallel_homogeneous":
        return float(p["cpu"]) / speed
    if kind in ("composed", "sequence"):
        return int(p.get("repeat", 1)) * sum(dedicated_time(s, profiles, speed) for s in p["seq"])
    raise WorkloadError(f"profile {profile!r}: type {kind!r} has no dedicated run time here "
                        "(delay, parallel_homogeneous and composed only)")


def workload_bound(workloads: list[Any], platform: Any) -> dict[str, float]:
    """Makespan lower bound of the jobs of ``workloads`` on ``platform`` (module docstring).

    Every job's part on a host is assumed to run on one core of the first compute host's
    computation speed (a homogeneous platform, such as Nantes econome).

    Returns:
        ``{"lb_makespan_s": s, "work_host_s": sum of hosts x dedicated run time (host-s),
        "last_arrival_s": s}``.

    Raises:
        WorkloadError: a workload file that cannot be read, a job without ``res``, ``subtime``
            or a known profile.
    """
    from ..engine.platform import PlatformSpec, read_platform

    spec = platform if isinstance(platform, PlatformSpec) else read_platform(platform)
    first = spec.compute[0]
    speed = first.speeds[first.pstate]
    hosts = len(spec.compute)
    first_arrival, last_arrival, latest_end, work = float("inf"), 0.0, 0.0, 0.0
    for w in workloads:
        if not isinstance(w, dict):
            try:
                w = json.loads(Path(w).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise WorkloadError(f"{w}: cannot read the workload ({exc})") from None
        profiles = w.get("profiles", {})
        for job in w.get("jobs", []):
            try:
                r, q = float(job["subtime"]), int(job["res"])
                p = dedicated_time(job["profile"], profiles, speed)
            except (KeyError, TypeError, ValueError) as exc:
                raise WorkloadError(f"job {job.get('id')!r}: no subtime, res or profile ({exc})") from None
            first_arrival, last_arrival = min(first_arrival, r), max(last_arrival, r)
            latest_end = max(latest_end, r + p)
            work += q * p
    if work == 0.0:
        return {"lb_makespan_s": 0.0, "work_host_s": 0.0, "last_arrival_s": 0.0}
    return {"lb_makespan_s": max(latest_end, first_arrival + work / hosts), "work_host_s": work,
            "last_arrival_s": last_arrival}
