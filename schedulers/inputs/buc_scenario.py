"""Scenario generator ``buc``: BUC's Lille experiment (paper 002 §4) rebuilt from a public trace.

Source: ``shared/papers/002_3dc427a6f94ba187.txt`` (``L<n>`` = line). The paper replays 2,785 jobs
of a 2019 Grid'5000 Lille trace (39 hosts in 4 clusters, L135-139; not public) plus 300 injected
jobs: three users submitting 100 jobs each, walltime 3600 s, at 0 %, 50 % and 100 % precision
(L145-147, L161-165).

What we build instead (documented substitution):

* **Real jobs**: a Parallel Workloads Archive trace with its real users (``user`` = ``u<SWF
  field 12>``), requested times as walltimes and recorded run times as ``delay`` profiles
  (:func:`~schedulers.inputs.swf.swf_to_batsim`), then res rescaled to the 39 hosts of
  ``platforms/g5k_lille_2020.xml`` keeping each job's share of the machine
  (:func:`~schedulers.inputs.rescale.rescale_workload`, ``mode="scale"``). The Grid'5000 Lyon
  traces of ``shared/data/traces`` carry no users, so they cannot be used. Traces (``trace``):
  ``"hpc2n"`` (default: the first 3,171 records of HPC2N, 120 nodes of 2 processors, 17 users,
  57 days: the closest in size to the paper's 2,785 jobs) or ``"kth"`` (KTH-SP2, 100 nodes,
  28,467 jobs, 214 users, 333 days; cut it with ``max_jobs``). Jobs whose run time exceeds their
  requested time are kept: the engine kills them at their walltime, as the real system did, and
  BUC does not score them (L106-111).
* **Density** (``jobs_per_year``): the paper's trace has 2,785 jobs in one year (L138-139) on the
  39 hosts; the HPC2N subset has 3,145 in 57 days, 6.4 times as dense. The real jobs' submission
  times are stretched (multiplied by one factor, the order and the run times unchanged) so that
  they arrive at ``jobs_per_year`` jobs a year: ``2785`` (default, the paper's density: the 3,145
  jobs then span 412 days) or any other rate; ``0`` keeps the trace's times. This is the load
  knob of the campaign: the offered load (work over 39 hosts x the span) falls as the rate.
* **Injected users** ``inj0``, ``inj50``, ``inj100``: ``injected_jobs`` (100) jobs each, walltime
  3600 s, run time ``P x 3600`` s with P = 0, 0.5, 1, bounded to [1, 3599] s (a 0 s job and a job
  reaching its walltime, which would be killed and never scored, are avoided): precisions 1/3600,
  0.5 and 3599/3600. Submission times uniform over the real jobs' (stretched) span, res drawn
  from the real jobs' res (both seeded). At the paper's density the 300 injected jobs arrive at
  266 a year (the paper: 300 in its year).
* **Gaming** (``gamer``, §4 L206-213): ``"none"`` (default); ``"long"``: user ``gamer`` submits
  ``gamer_long`` (30) jobs of walltime 36,000 s that run 3,600 s (P = 0.1), res drawn as above;
  ``"flood"``: the same, plus ``gamer_short`` (300) jobs of 1 host, walltime 60 s, run time 59 s
  (P = 0.98), all spread uniformly over the span. ``"long"`` is the honest baseline of ``"flood"``.

Job ids: the trace's job numbers; ``inj0-000``...; ``gamer-long-00``..., ``gamer-short-000``....
Determinism: ``numpy.random.default_rng(seed)`` draws injected then gamer jobs; the real jobs do
not depend on the seed (so the same real users are compared across seeds).

Errors: when the trace file is missing (``shared`` absent), :class:`GeneratorError` with one line
naming the file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..core.limits import MAX_TIME
from .generators import GeneratorError, Scenario, check_job_count, register_generator

__all__ = ["LILLE_PLATFORM", "TRACES", "SHARED_DIR", "INJECTED", "PAPER_JOBS_PER_YEAR", "stretch", "buc_scenario"]

_REPO = Path(__file__).resolve().parents[2]
#: The Lille platform (39 hosts).
LILLE_PLATFORM = _REPO / "platforms" / "g5k_lille_2020.xml"
LILLE_HOSTS = 39
#: The read-only data folder (``../shared`` beside the repository; ``GRIDSCHED_SHARED`` overrides).
SHARED_DIR = Path(os.environ.get("GRIDSCHED_SHARED", _REPO.parent / "shared"))
#: trace name -> (file under shared/data/traces/pwa-swf, processors per node)
TRACES = {"hpc2n": ("alea_hpc2n_subset3171.swf", 2), "kth": ("KTH-SP2-1996-2.1-cln.swf.gz", 1)}
#: injected user -> precision P (L161-165)
INJECTED = {"inj0": 0.0, "inj50": 0.5, "inj100": 1.0}
INJECTED_WALLTIME = 3600.0


def trace_path(trace: str, trace_file: str = "", generator: str = "buc") -> Path:
    """The SWF file of ``trace`` (or ``trace_file`` when given).

    Raises:
        GeneratorError: unknown trace name, or the file is missing (one line naming it and the
            generator ``generator`` whose parameters gave it).
    """
    if trace not in TRACES:
        raise GeneratorError(f"generator {generator!r}: trace must be one of {', '.join(TRACES)}, got {trace!r}")
    path = Path(trace_file) if trace_file else SHARED_DIR / "data" / "traces" / "pwa-swf" / TRACES[trace][0]
    if not path.is_file():
        raise GeneratorError(f"generator {generator!r}: trace file {path} not found (the read-only data folder "
                             f"../shared is needed; set GRIDSCHED_SHARED to its location)")
    return path


def real_jobs(trace: str, trace_file: str = "", max_jobs: int = 0, generator: str = "buc") -> dict[str, Any]:
    """The real trace as a Batsim workload on 39 hosts (see the module docstring); ``generator``:
    the generator named in the errors (``owner-lille`` reads the same jobs).

    Raises:
        GeneratorError: see :func:`trace_path`, or a malformed trace (the converter's one line).
    """
    from .errors import WorkloadError
    from .rescale import rescale_workload
    from .swf import swf_to_batsim

    path = trace_path(trace, trace_file, generator)
    try:
        data = swf_to_batsim(path, cores_per_host=TRACES[trace][1], max_jobs=max_jobs or None)
        return dict(rescale_workload(data, LILLE_HOSTS, mode="scale", source=str(path)))
    except (WorkloadError, ValueError, OSError) as exc:
        raise GeneratorError(f"generator {generator!r}: {exc}") from None


def _add(jobs: list, profiles: dict, jid: str, subtime: float, res: int, walltime: float, runtime: float,
         user: str) -> None:
    pname = f"delay_{runtime:g}"
    profiles.setdefault(pname, {"type": "delay", "delay": float(runtime)})
    jobs.append({"id": jid, "subtime": round(float(subtime), 3), "res": int(res), "walltime": float(walltime),
                 "profile": pname, "user": user})


#: The paper's density: 2,785 jobs in 2019 (002 L138-139).
PAPER_JOBS_PER_YEAR = 2785.0
YEAR = 365 * 86400.0


def stretch(jobs: list[dict], jobs_per_year: float) -> float:
    """Multiply the jobs' submission times (in place) so that they arrive at ``jobs_per_year`` a
    year (``len(jobs)`` jobs over ``len(jobs) / jobs_per_year`` years, from the first submission);
    ``jobs_per_year = 0`` leaves them. Returns the factor (1 when left; times rounded to the ms).

    Raises:
        GeneratorError: ``jobs_per_year < 0``, or so small that the last job would arrive more
            than 2**33 s (:data:`~schedulers.core.limits.MAX_TIME`) after time 0.
    """
    if jobs_per_year < 0:
        raise GeneratorError(f"generator 'buc': jobs_per_year must be >= 0 (0: the trace's times), got {jobs_per_year}")
    if not jobs_per_year or len(jobs) < 2:
        return 1.0
    first = min(j["subtime"] for j in jobs)
    span = max(j["subtime"] for j in jobs) - first
    if not span > 0:
        return 1.0
    k = len(jobs) / jobs_per_year * YEAR / span
    if not first + span * k <= MAX_TIME:
        raise GeneratorError(f"generator 'buc': jobs_per_year {jobs_per_year:g} spreads the {len(jobs):,} real jobs "
                             f"beyond the {MAX_TIME:.0f} s (2**33, about 272 years) a workload's times may reach: "
                             "raise jobs_per_year, or lower max_jobs")
    for j in jobs:
        j["subtime"] = round(first + (j["subtime"] - first) * k, 3)
    return k


@register_generator("buc", params={"trace": "hpc2n", "trace_file": "", "max_jobs": 0,
                                   "jobs_per_year": PAPER_JOBS_PER_YEAR, "injected_jobs": 100,
                                   "gamer": "none", "gamer_long": 30, "gamer_short": 300}, docs={
    "trace": "the real jobs: 'hpc2n' (HPC2N, 3,171 records) or 'kth' (KTH-SP2), from ../shared",
    "trace_file": "another SWF file for the real jobs ('': the trace's file in ../shared)",
    "max_jobs": "keep the first N real jobs (0: all)",
    "jobs_per_year": "arrival rate the real jobs are stretched to (jobs a year; 0: the trace's own times)",
    "injected_jobs": "jobs of each injected user inj0, inj50, inj100 (walltime 3,600 s)",
    "gamer": "a gaming user: 'none', 'long' (gamer_long imprecise long jobs) or 'flood' (plus gamer_short accurate short ones)",
    "gamer_long": "the gaming user's long jobs (walltime 36,000 s, run 3,600 s)",
    "gamer_short": "the gaming user's short jobs with 'flood' (1 host, walltime 60 s, run 59 s)"})
def buc_scenario(params: dict[str, Any], seed: int) -> Scenario:
    """BUC's Lille scenario: a real PWA trace on 39 hosts + 3 injected users (0/50/100 % precision).

    Parameters: ``trace`` (``"hpc2n"``, ``"kth"``), ``trace_file`` (another SWF file; default: the
    trace's file in ../shared), ``max_jobs`` (keep the first N real jobs; 0 = all),
    ``jobs_per_year`` (the real jobs' arrival rate: 2785, the paper's, by default; 0 = the trace's),
    ``injected_jobs`` (per injected user, 100), ``gamer`` (``"none"``, ``"long"``, ``"flood"``),
    ``gamer_long`` (30), ``gamer_short`` (300). See the module docstring.

    Raises:
        GeneratorError: missing trace file, unknown trace or gamer, negative counts or rate.
    """
    n_inj, gamer = params["injected_jobs"], params["gamer"]
    if gamer not in ("none", "long", "flood"):
        raise GeneratorError(f"generator 'buc': gamer must be none, long or flood, got {gamer!r}")
    if min(n_inj, params["max_jobs"], params["gamer_long"], params["gamer_short"]) < 0:
        raise GeneratorError("generator 'buc': max_jobs, injected_jobs, gamer_long and gamer_short must be >= 0")
    check_job_count("buc", "injected_jobs", n_inj, 3 * n_inj)
    for what in ("gamer_long", "gamer_short"):
        check_job_count("buc", what, params[what])
    wl = real_jobs(params["trace"], params["trace_file"], params["max_jobs"])
    jobs, profiles = [dict(j) for j in wl["jobs"]], dict(wl["profiles"])
    if not jobs:
        raise GeneratorError("generator 'buc': the trace has no job left")
    k = stretch(jobs, float(params["jobs_per_year"]))
    span = max(j["subtime"] for j in jobs)
    import numpy as np  # here, not at the top: `gridsched` starts without numpy
    real_res = np.array([j["res"] for j in jobs])
    rng = np.random.default_rng(seed)
    for user, p in INJECTED.items():
        sub = np.sort(rng.uniform(0.0, span, size=n_inj))
        res = rng.choice(real_res, size=n_inj)
        runtime = min(INJECTED_WALLTIME - 1.0, max(1.0, p * INJECTED_WALLTIME))
        for i in range(n_inj):
            _add(jobs, profiles, f"{user}-{i:03d}", sub[i], res[i], INJECTED_WALLTIME, runtime, user)
    if gamer != "none":
        n_long = params["gamer_long"]
        sub, res = np.sort(rng.uniform(0.0, span, size=n_long)), rng.choice(real_res, size=n_long)
        for i in range(n_long):
            _add(jobs, profiles, f"gamer-long-{i:02d}", sub[i], res[i], 36000.0, 3600.0, "gamer")
        if gamer == "flood":
            sub = np.sort(rng.uniform(0.0, span, size=params["gamer_short"]))
            for i in range(params["gamer_short"]):
                _add(jobs, profiles, f"gamer-short-{i:03d}", sub[i], 1, 60.0, 59.0, "gamer")
    jobs.sort(key=lambda j: (j["subtime"], str(j["id"])))
    rate = f"{params['jobs_per_year']:g} a year (times x {k:.3g})" if k != 1.0 else "the trace's times"
    desc = (f"buc seed {seed}: {params['trace']} trace ({len(wl['jobs'])} real jobs, {rate}) on {LILLE_HOSTS} Lille "
            f"hosts, 3 x {n_inj} injected jobs, gamer {gamer}")
    workload = {"nb_res": LILLE_HOSTS, "jobs": jobs, "profiles": profiles, "description": desc}
    return Scenario(platform=str(LILLE_PLATFORM), workloads=[workload], description=desc)
