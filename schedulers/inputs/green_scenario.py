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
numbers): job sizes, durations and arrivals. Jobs ``0 .. jobs-1`` arrive as a Poisson process of
mean gap ``interarrival`` s (first at 0); each asks for ``res`` hosts uniform in ``1 .. max_res``,
lasts ``T`` uniform in ``[runtime_min, runtime_max]`` s (rounded to the ms), and gives a walltime
``ceil(T * U(1, walltime_factor))`` s. The defaults (4 s, 1-4 hosts, 10-60 s, factor 1.5) offer
about one host-second of work per host-second of the platform (about 87.5 host-s per job, 88
host-s of capacity per arrival), so that queues form on the larger sets, as the paper describes
its sets of 1000 jobs and more (L204). Each job carries ``cpu_load`` (%) for the per-gap Δ of
:mod:`schedulers.green`.

Platform: ``platforms/g5k_nantes_econome.xml`` (22 x 16 cores, 12.9625 Gflops per core, Idle
100 W, OneCore 120 W, AllCores 200 W, Off 10 W as SimGrid reads them). Determinism:
``numpy.random.default_rng(seed)``; the draws do not depend on ``cpu_load``, so the three loads
of one seed have the same jobs.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .generators import GeneratorError, Scenario, register_generator

__all__ = ["NANTES_PLATFORM", "NANTES_CORE_SPEED", "NANTES_HOSTS", "PAPER_JOB_COUNTS", "PAPER_LOADS",
           "load_profile", "green_nantes"]

#: The platform file (in the project).
NANTES_PLATFORM = Path(__file__).resolve().parents[2] / "platforms" / "g5k_nantes_econome.xml"
#: Core speed of an econome node (flops/s): 207.4 GFlops per node / 16 cores (platform file).
NANTES_CORE_SPEED = 12.9625e9
NANTES_HOSTS = 22
#: The paper's job counts (L204) and CPU loads (%, L218).
PAPER_JOB_COUNTS = (10, 20, 100, 1000, 3500, 7500)
PAPER_LOADS = (100, 75, 50)


def load_profile(name: str, duration: float, load: float, speed: float, periods: int) -> dict[str, dict]:
    """Batsim profiles of one job of ``duration`` s at ``load`` % on cores of ``speed`` flops/s.

    Returns:
        ``{profile name: profile}``: the job's profile ``name`` (a ``composed`` with ``repeat =
        periods`` over ``name + "_c"`` and ``name + "_d"``, or a single compute / delay profile
        at 100 % / 0 %) and the profiles it refers to (see the module docstring).

    Raises:
        GeneratorError: duration not finite and > 0, load outside [0, 100], speed <= 0,
            periods < 1.
    """
    if not (math.isfinite(duration) and duration > 0) or not 0 <= load <= 100 or not speed > 0 \
            or periods < 1:
        raise GeneratorError(f"load profile {name!r}: need duration > 0 s, load in [0, 100] %, speed > 0 "
                             f"and periods >= 1; got {duration}, {load}, {speed}, {periods}")
    if load == 100:
        return {name: {"type": "parallel_homogeneous", "cpu": speed * duration, "com": 0.0}}
    if load == 0:
        return {name: {"type": "delay", "delay": duration}}
    busy = duration * load / 100.0 / periods
    idle = duration * (100.0 - load) / 100.0 / periods
    return {name: {"type": "composed", "repeat": periods, "seq": [name + "_c", name + "_d"]},
            name + "_c": {"type": "parallel_homogeneous", "cpu": speed * busy, "com": 0.0},
            name + "_d": {"type": "delay", "delay": idle}}


@register_generator("green-nantes", params={
    "job_count": 100, "cpu_load": 100, "interarrival": 4.0, "max_res": 4, "runtime_min": 10.0,
    "runtime_max": 60.0, "walltime_factor": 1.5, "periods": 10})
def green_nantes(params: dict[str, Any], seed: int) -> Scenario:
    """Jobs at 0/25/50/75/100 % CPU load on Nantes econome (004 §4.2, §5.1; assumptions in the module).

    Parameters: ``job_count`` (number of jobs); ``cpu_load`` (%: 0, 25, 50, 75 or 100); ``interarrival`` (mean gap, s);
    ``max_res`` (hosts per job, uniform 1..max_res); ``runtime_min``/``runtime_max`` (s);
    ``walltime_factor`` (>= 1); ``periods`` (compute/delay periods per job).

    Raises:
        GeneratorError: a parameter outside these ranges.
    """
    n, load, gap = params["job_count"], params["cpu_load"], params["interarrival"]
    max_res, lo, hi = params["max_res"], params["runtime_min"], params["runtime_max"]
    wf, periods = params["walltime_factor"], params["periods"]
    if n < 1 or load not in (0, 25, 50, 75, 100) or not gap > 0 or not 1 <= max_res <= NANTES_HOSTS \
            or not 0 < lo <= hi or wf < 1 or periods < 1:
        raise GeneratorError(
            "generator 'green-nantes': need job_count >= 1, cpu_load in 0/25/50/75/100, interarrival > 0, "
            f"1 <= max_res <= {NANTES_HOSTS}, 0 < runtime_min <= runtime_max, walltime_factor >= 1, "
            f"periods >= 1; got {params}")
    import numpy as np  # here, not at the top: `gridsched` starts without numpy
    rng = np.random.default_rng(seed)
    res = rng.integers(1, max_res + 1, size=n)
    runtime = np.round(rng.uniform(lo, hi, size=n), 3)
    walltime = np.ceil(runtime * rng.uniform(1.0, wf, size=n))
    gaps = rng.exponential(gap, size=n)
    gaps[0] = 0.0
    arrivals = np.cumsum(gaps)
    jobs, profiles = [], {}
    for i in range(n):
        rt = float(runtime[i])
        pname = f"p{i}"
        profiles.update(load_profile(pname, rt, float(load), NANTES_CORE_SPEED, periods))
        jobs.append({"id": str(i), "subtime": round(float(arrivals[i]), 6), "res": int(res[i]),
                     "walltime": float(walltime[i]), "profile": pname, "cpu_load": load})
    desc = f"green-nantes seed {seed}: {n} jobs at {load} % CPU load, {NANTES_HOSTS} econome hosts"
    workload = {"nb_res": NANTES_HOSTS, "jobs": jobs, "profiles": profiles, "description": desc}
    return Scenario(platform=str(NANTES_PLATFORM), workloads=[workload], description=desc)
