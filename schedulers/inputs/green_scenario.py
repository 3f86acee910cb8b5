"""Scenario generator ``green-nantes``: jobs of a given CPU load on Grid'5000 Nantes econome.

Source: the green-heuristic paper, ``../shared/papers/004_256d972a5ab7dee1.txt`` (``L<n>`` = its
line): 10, 20, 100, 1000, 3500 and 7500 jobs (L204), every job of a set with the same CPU load,
100, 75 or 50 % (L218), on the 22 econome nodes (L208) under Batsim; loads of 0, 25, 50, 75 or
100 % modelled by "alternating 0 % and 100 % load for the time needed to represent the wanted
load" over the job's whole execution (§4.2, L191).

**CPU-load profiles** (:func:`load_profile`). A job of duration ``T`` (s) and load ``L`` (%) on
hosts of core speed ``s`` (flops/s) is a Batsim ``composed`` profile repeated ``periods`` times
over ``[compute, delay]``: ``compute`` is ``parallel_homogeneous`` with ``cpu = s * T * L / 100 /
periods`` flops per host (one core of each host busy at full speed for ``T * L / 100 / periods``
s), ``delay`` sleeps ``T * (100 - L) / 100 / periods`` s (hosts at idle power). ``L = 100`` is one
``parallel_homogeneous`` of ``s * T`` flops, ``L = 0`` one ``delay`` of ``T``. On a dedicated
host the job lasts ``T`` and keeps one core busy ``L`` % of that time. (``composed`` and not
``sequence``: Batsim 4.2.1 knows only ``composed``, ``src/profiles.cpp``; it reads any unknown
type as a trace profile and stops on "has no 'trace' field". The engine takes both alike.)

**What the paper does not give, and what we assume** (documented choices, not tuned to its
numbers; the campaign sweeps them): job sizes, durations, arrivals, switching time and how
overlapping jobs share a node.

* **Jobs.** Jobs ``0 .. jobs-1`` each ask for ``res`` hosts uniform in ``1 .. max_res`` and last
  ``T`` uniform in ``[runtime_min, runtime_max]`` s (rounded to the ms) on dedicated hosts; the
  walltime is ``ceil((T + switch_time) * U(1, walltime_factor))`` s. Each job carries
  ``cpu_load`` (%) for the per-gap Δ of :mod:`schedulers.green`.
* **Arrivals.** A Poisson process (first job at 0) of mean gap ``interarrival`` s, or, when
  ``offered_load`` ``rho > 0``, of mean gap ``E[res] * E[T] / (22 * rho)`` with ``E[res] = (1 +
  max_res) / 2`` and ``E[T] = (runtime_min + runtime_max) / 2``: the jobs then offer on average
  ``rho`` host-seconds of work per host-second of the platform (``rho`` < 1 leaves hosts idle,
  ``rho`` > 1 makes the queue grow). The paper calls its sets of 10, 20 and 100 jobs "low
  arrival rates, little use of the resources" and those of 1000, 3500 and 7500 "high arrival
  rates ... queues form" (L204); which rates, it does not say. The gaps are one exponential
  draw scaled by the mean, so one seed gives the same jobs at every ``rho``, only closer or
  further apart in time.
* **Switching time.** ``switch_time`` s (default 0) appended to every job as a ``delay``: its
  hosts stay allocated and idle after the job's work, as between the end of a job, its
  notification to the RMS, the scheduler's call and the next launch (L153, L283), which the
  heuristic aims at. The walltime covers it.
* **Sharing a node.** ``host_cores = 16`` (default): ``platforms/g5k_nantes_econome.xml``, 22
  hosts of 16 cores at 12.9625 Gflops each, Idle 100 W, OneCore 120 W, AllCores 200 W, Off
  10 W as SimGrid reads them; each one-host part of a job keeps one core, so two jobs overlapping
  on a host neither slow down nor draw much more (125.3 W instead of 120 W). ``host_cores = 1``:
  ``platforms/g5k_nantes_econome_1core.xml``, the *contention model*: one core of the same speed
  per host, Idle 100 W, busy 200 W (the whole node), so overlapping jobs share the processor
  and slow down, as under the SimGrid 3.13 the paper ran (L208; see that file's comment).

The defaults (4 s, 1-4 hosts, 10-60 s, factor 1.5, no switching time, 16 cores) offer about
one host-second of work per host-second (``rho`` about 0.99) and make the workloads the engine's
recorded comparisons with real Batsim use. Determinism: ``numpy.random.default_rng(seed)``, the
draws in a fixed order (sizes, run times, walltime factors, gaps) that does not depend on
``cpu_load``, ``offered_load``, ``switch_time`` or ``host_cores``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .generators import RUNTIME_RESOLUTION, GeneratorError, Scenario, check_job_count, register_generator

__all__ = ["NANTES_PLATFORM", "NANTES_PLATFORM_1CORE", "NANTES_CORE_SPEED", "NANTES_HOSTS", "PAPER_JOB_COUNTS",
           "PAPER_LOADS", "load_profile", "mean_interarrival", "green_nantes"]

#: The platform files (in the project): the 16-core nodes, and the contention model (one core).
NANTES_PLATFORM = Path(__file__).resolve().parents[2] / "platforms" / "g5k_nantes_econome.xml"
NANTES_PLATFORM_1CORE = NANTES_PLATFORM.with_name("g5k_nantes_econome_1core.xml")
#: Core speed of an econome node (flops/s): 207.4 GFlops per node / 16 cores (platform file).
NANTES_CORE_SPEED = 12.9625e9
NANTES_HOSTS = 22
#: The paper's job counts (L204) and CPU loads (%, L218).
PAPER_JOB_COUNTS = (10, 20, 100, 1000, 3500, 7500)
PAPER_LOADS = (100, 75, 50)


def load_profile(name: str, duration: float, load: float, speed: float, periods: int,
                 switch_time: float = 0.0) -> dict[str, dict]:
    """Batsim profiles of one job of ``duration`` s at ``load`` % on cores of ``speed`` flops/s.

    Args:
        switch_time: s of idle hosts appended after the work (``delay``), 0 for none.

    Returns:
        ``{profile name: profile}``: the job's profile ``name`` (a ``composed`` with ``repeat =
        periods`` over ``name + "_c"`` and ``name + "_d"``, or a single compute / delay profile
        at 100 % / 0 %) and the profiles it refers to (see the module docstring). With a switch
        time, ``name`` is one flat ``composed`` (repeat 1) of the same steps followed by the
        ``delay`` ``name + "_s"`` (a 0 % job: one delay of ``duration + switch_time``).

    Raises:
        GeneratorError: duration not finite and > 0, load outside [0, 100], speed <= 0,
            periods < 1, switch_time not finite and >= 0.
    """
    if not (math.isfinite(duration) and duration > 0) or not 0 <= load <= 100 or not speed > 0 \
            or periods < 1 or not (math.isfinite(switch_time) and switch_time >= 0):
        raise GeneratorError(f"load profile {name!r}: need duration > 0 s, load in [0, 100] %, speed > 0, "
                             f"periods >= 1 and switch_time >= 0 s; got {duration}, {load}, {speed}, "
                             f"{periods}, {switch_time}")
    if load == 0:
        return {name: {"type": "delay", "delay": duration + switch_time}}
    if load == 100:
        steps, parts = [name + "_c"], {name + "_c": {"type": "parallel_homogeneous", "cpu": speed * duration,
                                                     "com": 0.0}}
        if not switch_time:
            return {name: parts[name + "_c"]}
        repeat = 1
    else:
        busy = duration * load / 100.0 / periods
        idle = duration * (100.0 - load) / 100.0 / periods
        parts = {name + "_c": {"type": "parallel_homogeneous", "cpu": speed * busy, "com": 0.0},
                 name + "_d": {"type": "delay", "delay": idle}}
        steps, repeat = [name + "_c", name + "_d"], periods
        if switch_time:
            steps, repeat = steps * periods, 1
    if switch_time:
        steps = steps + [name + "_s"]
        parts[name + "_s"] = {"type": "delay", "delay": switch_time}
    return {name: {"type": "composed", "repeat": repeat, "seq": steps}, **parts}


def mean_interarrival(offered_load: float, max_res: int, runtime_min: float, runtime_max: float,
                      hosts: int = NANTES_HOSTS) -> float:
    """Mean gap (s) between arrivals that offers ``offered_load`` host-seconds of work per
    host-second: ``E[res] * E[T] / (hosts * offered_load)`` with ``res`` uniform in ``1 ..
    max_res`` and ``T`` uniform in ``[runtime_min, runtime_max]`` s (module docstring).

    Raises:
        GeneratorError: offered_load not > 0.
    """
    if not offered_load > 0:
        raise GeneratorError(f"offered load must be > 0, got {offered_load}")
    return (1 + max_res) / 2.0 * (runtime_min + runtime_max) / 2.0 / (hosts * offered_load)


@register_generator("green-nantes", params={
    "job_count": 100, "cpu_load": 100, "interarrival": 4.0, "offered_load": 0.0, "max_res": 4,
    "runtime_min": 10.0, "runtime_max": 60.0, "walltime_factor": 1.5, "periods": 10, "switch_time": 0.0,
    "host_cores": 16}, docs={
    "job_count": "number of jobs",
    "cpu_load": "CPU load of every job (%): 0, 25, 50, 75 or 100",
    "interarrival": "mean gap between arrivals (s), used when offered_load is 0",
    "offered_load": "work submitted per host-second of the arrival span (> 0; 0: use interarrival)",
    "max_res": "largest job: hosts per job drawn uniformly in 1..max_res",
    "runtime_min": "shortest run time (s, >= 0.001: run times are rounded to the ms)",
    "runtime_max": "longest run time (s)",
    "walltime_factor": "walltime = run time x U(1, factor), >= 1",
    "periods": "compute/idle periods each job alternates to make its CPU load",
    "switch_time": "idle time appended to every job (s), the time lost between jobs",
    "host_cores": "cores per node: 16 (the econome nodes) or 1 (overlapping jobs share one processor)"})
def green_nantes(params: dict[str, Any], seed: int) -> Scenario:
    """Jobs at 0/25/50/75/100 % CPU load on Nantes econome (the green heuristic paper §4.2, §5.1; assumptions in the module).

    Parameters: ``job_count`` (number of jobs); ``cpu_load`` (%: 0, 25, 50, 75 or 100);
    ``interarrival`` (mean gap, s), unless ``offered_load`` (host-s of work per host-s, > 0; 0:
    use ``interarrival``); ``max_res`` (hosts per job, uniform 1..max_res);
    ``runtime_min``/``runtime_max`` (s); ``walltime_factor`` (>= 1); ``periods`` (compute/delay
    periods per job); ``switch_time`` (s of idle hosts after each job, >= 0); ``host_cores`` (16:
    the nodes' cores; 1: the contention model).

    Raises:
        GeneratorError: a parameter outside these ranges; a runtime_min below 0.001 s (run times
            are rounded to the ms: it could round to a job of 0 s).
    """
    n, load, gap = params["job_count"], params["cpu_load"], params["interarrival"]
    max_res, lo, hi = params["max_res"], params["runtime_min"], params["runtime_max"]
    wf, periods, rho = params["walltime_factor"], params["periods"], params["offered_load"]
    switch, cores = params["switch_time"], params["host_cores"]
    if n < 1 or load not in (0, 25, 50, 75, 100) or not gap > 0 or not 1 <= max_res <= NANTES_HOSTS \
            or not 0 < lo <= hi or wf < 1 or periods < 1 or rho < 0 or switch < 0 or cores not in (1, 16):
        raise GeneratorError(
            "generator 'green-nantes': need job_count >= 1, cpu_load in 0/25/50/75/100, interarrival > 0, "
            f"offered_load >= 0, 1 <= max_res <= {NANTES_HOSTS}, 0 < runtime_min <= runtime_max, "
            f"walltime_factor >= 1, periods >= 1, switch_time >= 0, host_cores 1 or 16; got {params}")
    if lo < RUNTIME_RESOLUTION:
        raise GeneratorError(f"generator 'green-nantes': runtime_min {lo:g} s is below 0.001 s: run times are "
                             "rounded to the millisecond, and a job of 0 s is a profile Batsim refuses")
    check_job_count("green-nantes", "job_count", n)
    from ..engine.workload import MAX_STAGES

    if 2 * periods + 1 > MAX_STAGES:   # (a compute and a delay stage a period, and a switch: run refused more)
        raise GeneratorError(f"generator 'green-nantes': periods {periods:,} makes profiles of {2 * periods:,} stages "
                             f"or more, beyond the {MAX_STAGES:,} a job's profile may expand to (at most "
                             f"{(MAX_STAGES - 1) // 2:,} periods)")
    if rho > 0:
        gap = mean_interarrival(rho, max_res, lo, hi)
    import numpy as np  # here, not at the top: `gridsched` starts without numpy
    rng = np.random.default_rng(seed)
    res = rng.integers(1, max_res + 1, size=n)
    runtime = np.round(rng.uniform(lo, hi, size=n), 3)
    walltime = np.ceil((runtime + switch) * rng.uniform(1.0, wf, size=n))
    gaps = rng.exponential(gap, size=n)
    gaps[0] = 0.0
    arrivals = np.cumsum(gaps)
    jobs, profiles = [], {}
    for i in range(n):
        rt = float(runtime[i])
        pname = f"p{i}"
        profiles.update(load_profile(pname, rt, float(load), NANTES_CORE_SPEED, periods, switch))
        jobs.append({"id": str(i), "subtime": round(float(arrivals[i]), 6), "res": int(res[i]),
                     "walltime": float(walltime[i]), "profile": pname, "cpu_load": load})
    platform = NANTES_PLATFORM if cores == 16 else NANTES_PLATFORM_1CORE
    desc = (f"green-nantes seed {seed}: {n} jobs at {load} % CPU load, {NANTES_HOSTS} econome hosts of "
            f"{cores} core{'s' if cores > 1 else ''}")
    workload = {"nb_res": NANTES_HOSTS, "jobs": jobs, "profiles": profiles, "description": desc}
    return Scenario(platform=str(platform), workloads=[workload], description=desc)
