"""Scenario generator ``ehosep``: the 64-host, 4-user grid of EHOSEP's tests, saturated by every user.

Source: ``shared/papers/003_97c4ff2275ee8bc0.txt`` (the EHOSEP paper, "003"; ``L<n>`` = line of
the plain-text file): §3.1 (per-user energy limit L116-120, CSP L130-134), Table 1 (the grid,
L155-189), §4 (the test case, L237-257: tasks L241-245, limits L247-253), eq. (1) (satisfaction,
L260-277; see :mod:`schedulers.core.ehosep_metrics`).

The grid (003 Table 1), one core per host (the papers' machines run one task at a time)::

    user   hosts  speed (GFlops)  full load (W)   share (GFlops)  share (W)  GFlops/W (Table 1)
    user1   16       133.47          220             2,999.52        5,048       0.5942
             8       108.00          191
    user2   12        84.53           99             1,778.28        2,096       0.8484
             8        95.49          113.5
    user3    6        32.43          134               298.86        1,512       0.1976
             6        17.38          118
    user4    8        42.25           67               338.00          536       0.6306
    grid    64                                       5,414.66        9,192       0.5891

The mean host speed is 5,414.66 / 64 = 84.6040625 GFlops. The largest limit 003 §4 gives user1,
182.09 %, is 9,192 / 5,048: the limit at which user1 could draw the whole grid's full-load power.

Hosts are ``<host id="user1_a_00" speed="133470Mf" core="1">`` (user, machine type ``a``/``b`` in
Table 1's order, index; Batsim ids follow the names' order: user1's 24 hosts are ids 0-23, user2's
24-43, user3's 44-55, user4's 56-63) with properties ``owner`` (``user1`` ... ``user4``),
``model`` (``133.47GF/220W``), and the power states of SimGrid's host-energy plugin.

Power states (W). Table 1 gives one figure per machine, read as its **full-load** power (003 §3.1,
L118-120, sets a user's limit as a percentage of "the consumption of the machines it owns"; the
EHOSEP policy's ``limits`` are percents of these figures). The paper gives no idle or off power.
Assumed here, as parameters: **idle = 50 %** and **off = 5 %** of the full-load figure -- the
ratios of the only measured power states in the project's papers, Grid'5000 Nantes ``econome``
nodes in the green-heuristic paper (004: Idle 100 W, AllCores 200 W, Off 10 W), which the project
already uses for its synthetic hosts (:data:`~schedulers.inputs.generators.SYNTHETIC_POWER`). So
user1's 133.47-GFlops host is ``wattage_per_state="110.0:220.0"`` (``Idle:AllCores``: one core, so
Epsilon = Idle, SimGrid's reading of a two-value entry) and ``wattage_off="11.0"``; watts are
written rounded to 1e-6 W. With one core a host draws ``Idle`` when no task runs and ``AllCores``
while a (compute) task runs on it.

The demand. 003 §4 L241-245: tasks "of 10 to 60 minutes of execution on a machine of the system's
mean power"; neither the number of tasks per user nor their arrivals are given. Chosen here so that
the grid is **saturated**, every user asking more than its share over most of the run (the test
case of 003 §4 needs it: users 2-4, with limits above their shares, "occupy the whole system" when
user1's limit holds it back):

* **Sizes**: a duration uniform in [10, 60] min, drawn per task; the work is that duration times
  the mean host speed, in whole MFLOP (flops = MFLOP x 1e6): 50.76-304.57 TFLOP.
* **Counts**: ``4 x tasks_per_user`` tasks in all, apportioned to the users in proportion to the
  power (GFlops) of their shares (largest remainder, ties to the earlier user; a user given none
  gets one). The default ``tasks_per_user = 150`` gives 332 / 197 / 33 / 38 tasks. Equal counts
  cannot saturate: user1's share (55 % of the grid) would finish its tasks when user3's (5.5 %)
  has done a tenth of its own.
* **Arrivals**: per user, a Poisson process (exponential gaps, seeded) whose first task arrives at
  0 s and last at ``A_u = W_u / (overload x P_u)`` (the gaps rescaled to that span), ``W_u`` the
  user's total work (flops) and ``P_u`` its share's power (flops/s). Over its arrival window each
  user submits exactly ``overload`` (default 1.5) times what its share can run, so that even a
  user served exactly at its share has a growing backlog until ``A_u`` and work left after it
  (``(overload - 1) x P_u x A_u``, another third of the window at 1.5). The windows are about
  equal (``W_u / P_u`` is nearly the same for every user): expected ``tasks x 35 min x 84.6
  GFlops / (1.5 x P_u)``, 13,110 s (3.6 h) for user1 at the defaults.
* **Why 150 tasks per user**: whatever the policy, the tasks started last run to their end, up to
  292 min (a 60-min task on a 17.38-GFlops host) after the backlog is gone; the arrival windows
  must be long against that tail for the saturated part to be most of the run. Measured with
  FCFS, seed 0, overload 1.5: all 64 hosts busy during 22 % of the run with 50 tasks per user,
  61 % with 150, 70 % with 300 (a larger ``overload`` does not help: the total work, not its
  arrival rate, sets how long the backlog lasts).
* **Walltime**: the task's run time on the slowest host (17.38 GFlops), rounded up to the minute,
  plus one minute: a task running alone on any host ends before it (the papers' tasks have none;
  iSPD runs them to completion). ``parallel_homogeneous`` single-host jobs (``cpu`` = work,
  ``com`` = 0), ids ``user1-000`` ..., profile named as the job, field ``user``; jobs sorted by
  arrival (then id).

Limits: ``u1_limit`` (user1's, default 100 %) and ``limits`` (each of users 2-4, default 150 %:
above their shares, as in 003 §4) are **not** used to shape jobs. They are recorded in the
workload as the top-level entry ``"ehosep": {"limits": {"user1": 100.0, ...}}`` (percent of the
full-load power of the user's own hosts) for the metrics computed from the files
(:mod:`schedulers.core.ehosep_metrics`: ``Limite_i`` of eq. 1). In a campaign the EHOSEP policy's
option ``limits`` and this ``u1_limit`` are set together (a zip axis). Batsim ignores the entry.

Determinism: ``numpy.random.default_rng(seed)``; users in order, for each the durations then the
gaps: the same seed and parameters give the same files.
"""

from __future__ import annotations

import math
from typing import Any

from .generators import GeneratorError, Scenario, check_job_count, owned_hosts_platform_xml, register_generator

__all__ = ["EHOSEP_MACHINES", "USERS", "TASK_MINUTES", "IDLE_FRACTION", "OFF_FRACTION", "ehosep_hosts",
           "share_mflops", "share_watts", "mean_mflops", "task_counts", "ehosep_platform_xml",
           "ehosep_scenario"]

#: 003 Table 1: (owner, machine type, hosts, speed in MFlops, full-load power in W).
EHOSEP_MACHINES: tuple[tuple[str, str, int, int, float], ...] = (
    ("user1", "a", 16, 133_470, 220.0), ("user1", "b", 8, 108_000, 191.0),
    ("user2", "a", 12, 84_530, 99.0), ("user2", "b", 8, 95_490, 113.5),
    ("user3", "a", 6, 32_430, 134.0), ("user3", "b", 6, 17_380, 118.0),
    ("user4", "a", 8, 42_250, 67.0),
)

USERS = ("user1", "user2", "user3", "user4")

#: Task durations (min) on a host of the grid's mean speed (003 §4).
TASK_MINUTES = (10.0, 60.0)

#: Assumed idle and off powers as fractions of the full-load power (004's 100 W / 10 W of 200 W).
IDLE_FRACTION = 0.5
OFF_FRACTION = 0.05


def ehosep_hosts() -> list[tuple[str, str, int, float]]:
    """The 64 compute hosts in Batsim id order: (name, owner, speed in MFlops, full-load W)."""
    return [(f"{user}_{kind}_{k:02d}", user, mflops, watts)
            for user, kind, count, mflops, watts in EHOSEP_MACHINES for k in range(count)]


def share_mflops(user: str) -> int:
    """Power of ``user``'s share (MFlops): the sum of its hosts' speeds (003 Table 1)."""
    return sum(count * mflops for u, _, count, mflops, _ in EHOSEP_MACHINES if u == user)


def share_watts(user: str) -> float:
    """Full-load power of ``user``'s share (W): the sum of its hosts' Table 1 figures."""
    return math.fsum(count * watts for u, _, count, _, watts in EHOSEP_MACHINES if u == user)


def mean_mflops() -> float:
    """The grid's mean host speed (MFlops): 5,414,660 / 64 = 84,604.0625."""
    return sum(share_mflops(u) for u in USERS) / sum(m[2] for m in EHOSEP_MACHINES)


def task_counts(tasks_per_user: int) -> dict[str, int]:
    """Tasks of each user: ``4 x tasks_per_user`` apportioned by share power (largest remainder,
    ties to the earlier user), at least one each.

    Raises:
        GeneratorError: ``tasks_per_user < 1``.
    """
    if tasks_per_user < 1:
        raise GeneratorError(f"generator 'ehosep': tasks_per_user must be >= 1, got {tasks_per_user}")
    check_job_count("ehosep", "tasks_per_user", tasks_per_user, len(USERS) * tasks_per_user)
    total = len(USERS) * tasks_per_user
    grid = sum(share_mflops(u) for u in USERS)
    exact = [total * share_mflops(u) / grid for u in USERS]
    counts = [int(x) for x in exact]
    order = sorted(range(len(USERS)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in order[: total - sum(counts)]:
        counts[i] += 1
    return {u: max(c, 1) for u, c in zip(USERS, counts)}


def _watts(value: float) -> str:
    return repr(round(value, 6))


def ehosep_platform_xml(idle_fraction: float = IDLE_FRACTION, off_fraction: float = OFF_FRACTION) -> str:
    """The SimGrid platform XML (DTD 4.1) of the 64-host grid (see the module docstring)."""
    return owned_hosts_platform_xml("ehosep", [
        (name, owner, f"{mflops}Mf", f"{mflops / 1000:g}GF/{watts:g}W", _watts(idle_fraction * watts), _watts(watts),
         _watts(off_fraction * watts)) for name, owner, mflops, watts in ehosep_hosts()])


def _check(params: dict[str, Any]) -> None:
    if not params["u1_limit"] > 0 or not params["limits"] > 0:
        raise GeneratorError(f"generator 'ehosep': u1_limit and limits must be percents > 0, got "
                             f"{params['u1_limit']} and {params['limits']}")
    if not params["overload"] > 0:
        raise GeneratorError(f"generator 'ehosep': overload must be > 0 (above 1 saturates), got {params['overload']}")
    idle, off = params["idle_fraction"], params["off_fraction"]
    if not 0 <= off <= idle <= 1:
        raise GeneratorError(f"generator 'ehosep': need 0 <= off_fraction <= idle_fraction <= 1, got "
                             f"off_fraction {off}, idle_fraction {idle}")


@register_generator("ehosep", params={"tasks_per_user": 150, "u1_limit": 100.0, "limits": 150.0,
                                      "overload": 1.5, "idle_fraction": IDLE_FRACTION,
                                      "off_fraction": OFF_FRACTION}, docs={
    "tasks_per_user": "mean tasks per user, apportioned by the power of its share",
    "u1_limit": "user1's power limit (% of its hosts' full-load power)",
    "limits": "the power limit of each of users 2-4 (% of its hosts' full-load power)",
    "overload": "work each user submits over its arrival window / what its share runs in it",
    "idle_fraction": "idle power / full-load power of every host",
    "off_fraction": "switched-off power / full-load power of every host"})
def ehosep_scenario(params: dict[str, Any], seed: int) -> Scenario:
    """EHOSEP's 64-host / 4-user grid (the EHOSEP paper's Table 1), saturated by every user; limits recorded.

    Parameters: ``tasks_per_user`` (150: mean tasks per user, apportioned by share power),
    ``u1_limit`` (user1's energy limit, % of its hosts' full-load power, default 100),
    ``limits`` (the same for each of users 2-4, default 150), ``overload`` (work submitted over
    each user's arrival window / what its share runs in it, default 1.5), ``idle_fraction`` and
    ``off_fraction`` (idle and off power / full-load power, 0.5 and 0.05). See the module docstring.

    Raises:
        GeneratorError: ``tasks_per_user < 1``, a limit or ``overload`` not > 0, fractions not
            ``0 <= off <= idle <= 1``.
    """
    _check(params)
    counts = task_counts(params["tasks_per_user"])
    mean_speed = mean_mflops() * 1e6                       # flops/s
    slowest = min(m[3] for m in EHOSEP_MACHINES) * 1e6      # flops/s
    lo, hi = TASK_MINUTES
    import numpy as np  # here, not at the top: `gridsched` starts without numpy
    rng = np.random.default_rng(seed)
    width = len(str(max(counts.values()) - 1))
    jobs: list[dict[str, Any]] = []
    profiles: dict[str, dict[str, Any]] = {}
    for user in USERS:
        n = counts[user]
        seconds = rng.uniform(lo * 60.0, hi * 60.0, size=n)
        flops = [float(np.floor(s * mean_speed / 1e6)) * 1e6 for s in seconds]
        gaps = rng.exponential(1.0, size=n)
        gaps[0] = 0.0
        arrivals = np.cumsum(gaps)
        window = math.fsum(flops) / (params["overload"] * share_mflops(user) * 1e6)
        if arrivals[-1] > 0:
            arrivals = arrivals * (window / arrivals[-1])
        for k in range(n):
            jid = f"{user}-{k:0{width}d}"
            walltime = 60.0 * (math.ceil(flops[k] / slowest / 60.0) + 1)
            profiles[jid] = {"type": "parallel_homogeneous", "cpu": flops[k], "com": 0.0}
            jobs.append({"id": jid, "subtime": round(float(arrivals[k]), 6), "res": 1, "walltime": walltime,
                         "profile": jid, "user": user})
    jobs.sort(key=lambda j: (j["subtime"], j["id"]))
    limits = {u: float(params["u1_limit"] if u == "user1" else params["limits"]) for u in USERS}
    desc = (f"ehosep seed {seed}: 64 hosts, 4 users, "
            f"{'/'.join(str(counts[u]) for u in USERS)} tasks, overload {params['overload']:g}, "
            f"limits {'/'.join(f'{limits[u]:g}' for u in USERS)} %")
    workload = {"nb_res": 64, "description": desc, "ehosep": {"limits": limits}, "jobs": jobs, "profiles": profiles}
    xml = ehosep_platform_xml(params["idle_fraction"], params["off_fraction"])
    return Scenario(platform_xml=xml, workloads=[workload], description=desc)
