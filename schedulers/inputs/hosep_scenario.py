"""Scenario generator ``hosep``: the 12-host, 4-user grid and the 10-task demands of HOSEP's tests.

Sources (``shared/papers``, ``L<n>`` = line of the plain-text file): ``000`` is the HOSEP paper
(``000_e546516683445c97.txt``, §4 and Table 1, L451-500), ``001`` the monograph
(``001_e7d938ca075b7e80.txt``, §5.2-5.4, L533-606).

The grid (001 §5.2 L533-551, 000 Table 1 L472-482), one core per host (one task at a time)::

    4 x 132,250 MFlops ("i7"), 4 x 54,760 MFlops ("i5"), 4 x 29,750 MFlops ("i3")
    user1: 3 x i7                  396,750 MFlops  45.76 % of 867,040
    user2: 1 x i7 + 2 x i5         241,770 MFlops  27.88 %
    user3: 1 x i3 + 2 x i5         139,270 MFlops  16.06 %
    user4: 3 x i3                   89,250 MFlops  10.29 %

(The monograph prints user4's machines as "3 x 132250" (L551) and the paper user3's share as
"16,6" (L479): both misprints, since there are four i3 machines and the percentages above are the
ones both texts give for the other users; they follow from the speeds, as the tests check.)

Each host is written ``<host id="userN_iK_m" speed="132250Mf" core="1">`` with the properties
``owner`` (``user1`` ... ``user4``), ``model`` (``i7``/``i5``/``i3``) and power states
``wattage_per_state="100.0:200.0"`` (Idle:AllCores; one core, so Epsilon = Idle) and
``wattage_off="10.0"``: the project's documented assumption
(:data:`~schedulers.inputs.generators.SYNTHETIC_POWER`); the HOSEP papers give no power figures.
Batsim's ``master_host``; no network links (the engine refuses them; tasks do not communicate).

The demand (001 §5.3 L557-579, 000 L462-493): each user submits ``tasks_per_user`` (10) tasks,
mixed by demand level (small / medium / large tasks per 10)::

    small 6 / 3 / 1      medium 3 / 6 / 1      large 1 / 3 / 6

(000 L484-487 gives the totals over the 4 users, 24/12/4, 12/24/4, 4/12/24: the same mixes.) For
another ``tasks_per_user`` the mix is apportioned by largest remainder (ties to the smaller class).
Task sizes (001 L560-563), in MFLOP, uniform in each class (the papers name no distribution)::

    small   39,675,000 - 238,050,000       5 - 30 min on the best machine (132,250 MFlops)
    medium 238,050,000 - 634,800,000      30 - 80 min
    large  634,800,000 - 3,332,700,000    80 - 420 min

The large class follows the monograph (80-420 min, with its MFLOP bounds); the paper says 80-240
min (000 L467-468): ``large_max_minutes = 240`` gives that. Sizes are drawn as whole MFLOP and
written in flops (x 1e6) as ``parallel_homogeneous`` profiles (``cpu`` = size, ``com`` = 0) of
single-host jobs. Within a user the classes come in a random order (seeded).

Submission: every task at 0 s, but the ``late`` user's at ``late_delay`` = 360 s (the 6-minute
delay of 001 §5.4 L604; ``late = "none"``: nobody late). The 12 cases of 001 §5.4 are ``late`` x ``demand`` x
checkpointing (a policy option, not part of the scenario).

Walltime: -1 (none). The papers' tasks have no walltime (iSPD runs them to completion) and OSEP /
HOSEP never read one; a finite walltime would make Batsim kill tasks delayed by preemption.

Jobs: ids ``user1-0`` ... (user, then index), fields ``user`` and ``size_class``, profile named as
the job. Determinism: ``numpy.random.default_rng(seed)``, users drawn in order user1 ... user4.
"""

from __future__ import annotations

from typing import Any

from .generators import (SYNTHETIC_POWER, GeneratorError, Scenario, check_job_count, owned_hosts_platform_xml,
                         register_generator)

__all__ = ["HOSEP_MACHINES", "HOSEP_HOSTS", "DEMAND_MIX", "SIZE_RANGES_MFLOP", "LATE_DELAY", "BEST_MFLOPS",
           "hosep_platform_xml", "class_counts", "hosep_scenario"]

#: Machine models and their speeds in MFlops (001 §5.2 L535-537).
HOSEP_MACHINES = {"i7": 132_250.0, "i5": 54_760.0, "i3": 29_750.0}

#: The 12 hosts: (name, owner, model), in Batsim id order (lexicographic order of the names).
HOSEP_HOSTS: tuple[tuple[str, str, str], ...] = (
    ("user1_i7_0", "user1", "i7"), ("user1_i7_1", "user1", "i7"), ("user1_i7_2", "user1", "i7"),
    ("user2_i5_0", "user2", "i5"), ("user2_i5_1", "user2", "i5"), ("user2_i7_0", "user2", "i7"),
    ("user3_i3_0", "user3", "i3"), ("user3_i5_0", "user3", "i5"), ("user3_i5_1", "user3", "i5"),
    ("user4_i3_0", "user4", "i3"), ("user4_i3_1", "user4", "i3"), ("user4_i3_2", "user4", "i3"),
)

USERS = ("user1", "user2", "user3", "user4")
CLASSES = ("small", "medium", "large")

#: Small / medium / large tasks per 10 tasks of one user (001 §5.3 L567-579).
DEMAND_MIX = {"small": (6, 3, 1), "medium": (3, 6, 1), "large": (1, 3, 6)}

#: The best machine's speed (MFlops): the papers size tasks by their run time on it.
BEST_MFLOPS = HOSEP_MACHINES["i7"]

#: Size range of each class in MFLOP (001 L560-563); the large class's upper bound is set by
#: ``large_max_minutes`` (default 420 min: 3,332,700,000 MFLOP).
SIZE_RANGES_MFLOP = {"small": (39_675_000.0, 238_050_000.0), "medium": (238_050_000.0, 634_800_000.0),
                     "large": (634_800_000.0, 3_332_700_000.0)}

#: Delay of the late user's submissions (s): 6 minutes (001 §5.4 L604).
LATE_DELAY = 360.0


def hosep_platform_xml() -> str:
    """The SimGrid platform XML (DTD 4.1) of the 12-host grid (see the module docstring)."""
    p = SYNTHETIC_POWER
    return owned_hosts_platform_xml("hosep", [
        (name, owner, f"{HOSEP_MACHINES[model]:.0f}Mf", model, repr(p["idle"]), repr(p["all_cores"]), repr(p["off"]))
        for name, owner, model in HOSEP_HOSTS])


def class_counts(demand: str, tasks: int) -> tuple[int, int, int]:
    """Small, medium and large task counts of one user: :data:`DEMAND_MIX` scaled to ``tasks``
    by largest remainder (ties to the smaller class); ``tasks = 10`` gives the mix itself.

    Raises:
        GeneratorError: unknown demand, ``tasks < 1``.
    """
    if demand not in DEMAND_MIX:
        raise GeneratorError(f"generator 'hosep': demand must be one of {', '.join(DEMAND_MIX)}, got {demand!r}")
    if tasks < 1:
        raise GeneratorError(f"generator 'hosep': tasks_per_user must be >= 1, got {tasks}")
    check_job_count("hosep", "tasks_per_user", tasks, 4 * tasks)
    mix = DEMAND_MIX[demand]
    exact = [m * tasks / 10 for m in mix]
    counts = [int(x) for x in exact]
    order = sorted(range(3), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in order[: tasks - sum(counts)]:
        counts[i] += 1
    return counts[0], counts[1], counts[2]


@register_generator("hosep", params={"demand": "large", "late": "user1", "tasks_per_user": 10,
                                     "large_max_minutes": 420.0, "late_delay": LATE_DELAY}, docs={
    "demand": "task mix: 'small', 'medium' or 'large' (the monograph's §5.3)",
    "late": "the user whose tasks arrive late_delay s after the others': 'user1', 'user4' or 'none'",
    "tasks_per_user": "tasks each user submits",
    "large_max_minutes": "longest large task on the best host (min): 420 as the monograph, 240 as the paper",
    "late_delay": "how late the late user submits (s)"})
def hosep_scenario(params: dict[str, Any], seed: int) -> Scenario:
    """HOSEP's 12-host / 4-user grid and demand (the HOSEP paper §4, the monograph §5.2-5.4); one user 6 min late.

    Parameters: ``demand`` (``"small"``, ``"medium"``, ``"large"``: the task mix of 001 §5.3),
    ``late`` (``"user1"``, ``"user4"``, or ``"none"``: whose tasks arrive ``late_delay`` s
    after the others'), ``tasks_per_user`` (10), ``large_max_minutes`` (upper bound of large
    tasks on the best machine, min: 420 as the monograph, 240 as the paper), ``late_delay``
    (s, 360 as the monograph: shorter than the 10-min checkpoint block, so that a task preempted
    when the late user arrives has no block to keep). See the module docstring.

    Raises:
        GeneratorError: a parameter outside these values, ``large_max_minutes <= 80``,
            ``late_delay < 0``.
    """
    demand, late, n = params["demand"], params["late"], params["tasks_per_user"]
    counts = class_counts(demand, n)
    if late not in USERS + ("none",):
        raise GeneratorError(f"generator 'hosep': late must be user1, user2, user3, user4 or none, got {late!r}")
    delay = float(params["late_delay"])
    if not delay >= 0:
        raise GeneratorError(f"generator 'hosep': late_delay must be >= 0 s, got {params['late_delay']}")
    large_max = params["large_max_minutes"]
    if not large_max > 80:
        raise GeneratorError(f"generator 'hosep': large_max_minutes must be > 80 (large tasks run 80 min "
                             f"and more on the best machine), got {large_max}")
    ranges = dict(SIZE_RANGES_MFLOP)
    ranges["large"] = (SIZE_RANGES_MFLOP["large"][0], BEST_MFLOPS * 60.0 * large_max)
    import numpy as np  # here, not at the top: `gridsched` starts without numpy
    rng = np.random.default_rng(seed)
    width = len(str(n - 1))
    jobs: list[dict[str, Any]] = []
    profiles: dict[str, dict[str, Any]] = {}
    for user in USERS:
        classes = [c for c, k in zip(CLASSES, counts) for _ in range(k)]
        classes = [classes[i] for i in rng.permutation(len(classes))]
        subtime = delay if user == late else 0.0
        for k, cls in enumerate(classes):
            lo, hi = ranges[cls]
            mflop = float(np.floor(rng.uniform(lo, hi)))
            jid = f"{user}-{k:0{width}d}"
            profiles[jid] = {"type": "parallel_homogeneous", "cpu": mflop * 1e6, "com": 0.0}
            jobs.append({"id": jid, "subtime": subtime, "res": 1, "walltime": -1, "profile": jid,
                         "user": user, "size_class": cls})
    who = "nobody late" if late == "none" else f"{late} late by {delay:g} s"
    desc = (f"hosep seed {seed}: {demand} demand ({counts[0]}/{counts[1]}/{counts[2]} small/medium/large "
            f"tasks per user), {who}, 12 hosts, 4 users")
    workload = {"nb_res": len(HOSEP_HOSTS), "jobs": jobs, "profiles": profiles, "description": desc}
    return Scenario(platform_xml=hosep_platform_xml(), workloads=[workload], description=desc)
