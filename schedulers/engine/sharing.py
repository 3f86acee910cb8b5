"""How SimGrid 3.32 shares hosts between parallel tasks (Batsim's ``--enable-compute-sharing``).

Batsim 4.2.1 runs every job as a SimGrid parallel task under the ``ptask_L07`` host model. This
module reproduces, operation for operation, the linear system that model builds and the solver
that shares it, so that rates (and hence finish times and energies) match SimGrid bit for bit.
Facts below are from the SimGrid v3.32 sources (file and function named at each fact).

The system (``src/surf/ptask_L07.cpp``)
    * ``surf_host_model_init_ptask_L07``: one LMM system for CPUs and links, solver
      ``host/solver``, default ``"fairbottleneck"`` (``maxmin`` is refused).
    * ``CpuImpl::seal`` (``src/kernel/resource/CpuImpl.cpp``) and ``CpuL07::on_speed_change``:
      each host's CPU is one constraint of capacity ``core_count * speed`` (flops/s) where
      ``speed`` is the peak speed of the current pstate (times an availability ratio that is 1
      without speed profiles).
    * ``L07Action::L07Action``: each task is one variable (sharing penalty 1, cost 1 so its
      value is the *fraction of the task done per second*), expanded on the CPU constraint of
      every listed host, in list order, with consumption weight ``flops[i]`` (flops). The
      expansion forces a new element each time (``System::expand(..., force_creation=true)``), so
      a host listed twice gets two elements on the same constraint. Zero-flops parts get an
      element of weight 0. A task with no positive flops (and no communication) has cost 1 and
      remains 0: it ends at once.
    * With communications (``bytes_amount``): after the CPU elements, one element per link of
      the routes of the pairs with bytes > 0, in order of first use, weighing the bytes of the
      pairs crossing it (``System::expand`` without forced creation adds them up; a
      ``FATPIPE`` link keeps the largest, ``expand_add_to_elem``); link constraints have the
      link's bandwidth as capacity (B/s). See :mod:`schedulers.engine.execution`.
    * ``L07Action::update_bound`` / ``calculate_cpu_bound``: the variable is bounded by
      ``min over parts with flops > 0 of speed(1 core) / flops[i]`` (each part gets at most one
      core); no bound when no part computes. On a host of speed 0 the bound is 0, which SimGrid
      does not treat as a limit (see below).

The solver (``src/kernel/lmm/fair_bottleneck.cpp``, ``FairBottleneck::do_solve``)
    Variables with a positive penalty and a non-zero weight take part; the others get value
    1.0. Every active constraint starts with ``remaining = capacity``. Then rounds, until no
    variable is left:

    1. for each remaining constraint, ``nb`` = number of its elements (not variables, not
       weighted) with weight > 0 whose variable is still in play; ``nb == 0`` drops the
       constraint, otherwise ``usage = remaining / nb``;
    2. for each variable in play, ``mu = min(usage_c / weight_c over its elements of weight
       > 0, bound - value if bound > 0)``, ``value += mu``; it leaves when ``value == bound``
       (exact float equality);
    3. for each remaining constraint, ``remaining -= weight * mu`` over **all** its enabled
       elements, newest element first, through ``double_update`` (``src/surf/surf_interface.hpp``:
       subtract, then set to 0 if below ``sg_maxmin_precision`` = 1e-5, absolute, after every
       single subtraction). Variables that left in an earlier round still hold their last
       ``mu`` and are subtracted **again** (stale ``mu``): a constraint can lose capacity it
       never gave out. A constraint whose remaining is ``<= 0`` is dropped and all its
       variables in play (weight > 0) leave.

    ``FATPIPE`` constraints (links) count ``nb = 1`` in step 1 and in step 3 lose, once,
    ``min(usage, weight * mu)`` over their elements instead of the sum.

    Consequences (quirks versus textbook max-min fairness): a host's capacity is split
    equally between *parts* (equal flops/s per part, capped at one core by the bound), not so
    as to equalise the tasks' progress rates; a multi-host task limited elsewhere is charged
    again at every later round on its other hosts, leaving capacity unused; a bound of 0 (host
    of speed 0) is no limit, but its task leaves as soon as its value stays 0; on a ``FATPIPE``
    link, a flow that left early (small ``weight * mu``) makes every later round take only that
    much off, so the flows still in play gain the whole rest again and again: a 1-byte message
    over ``__loopback__`` beside a task sending itself 1e7 B at 0.1 of the task per second gets
    about 5e13 B/s (10,000 rounds, played at once by :func:`_fatpipe_rounds`; recorded on
    SimGrid 3.32 and Batsim 4.2.1, ``tests/test_loopback_sharing.py``).

Time and completion (``src/surf/ptask_L07.cpp`` ``HostL07Model::update_actions_state``,
``src/kernel/resource/Model.cpp`` ``Model::next_occurring_event_full``,
``src/kernel/resource/Action.cpp`` ``Action::update_remains``)
    The next event is ``min(remains / rate)`` over running tasks with rate > 0 (0 when remains
    is already 0) and the other models' events; the clock jumps by that delta, every task's
    ``remains`` (fraction, starts at 1) is decreased by ``rate * delta`` through
    ``double_update`` with precision ``sg_maxmin_precision * sg_surf_precision`` = 1e-14, and a
    task is finished when ``remains <= 0``. The system is solved again before every step.
    Sleeping actors hold L07 actions too (``CpuL07::sleep``: penalty 0, so outside the solve)
    whose ``max_duration`` takes part in the min and is decreased through ``double_update``
    with ``sg_surf_precision`` (1e-9); the sleep is over when it is ``<= 0``.

Energy (``src/plugins/host_energy.cpp``), see :func:`cpu_load` and :func:`host_power`
    The plugin reads ``Host::get_load()`` = ``Constraint::get_usage()``
    (``src/kernel/lmm/System.cpp``): the sum over the constraint's enabled elements with weight
    > 0 of ``weight * value``, in flops/s (what :func:`l07_rates` returns as ``usage``).
    ``HostEnergy::get_current_watts_value``: ``load = usage / speed(pstate) / cores``, capped
    at 1 (1 if the pstate's speed is <= 0); power is ``Epsilon + load * (AllCores - Epsilon)``
    if ``load > 0``, else ``Idle`` (so the load is a fraction of the whole host, i.e. busy
    cores ``usage / speed`` over ``cores``; zero-flops parts and stalled tasks add nothing).
    ``HostEnergy::update`` integrates lazily: it adds ``power * (now - last_update)`` with the
    load of the *current* LMM values and the pstate recorded at the previous update, then
    records the current pstate. It runs only (``sg_host_energy_plugin_init``,
    ``on_action_state_change``, ``on_host_change``) when a CPU action using the host changes
    state (a task ends: every host it lists, zero-flops parts included, while the finishing
    tasks still count in the load; also suspend/resume/failure, and the end of a sleep on the
    sleeping actor's host), when a *single-host* execution starts (``Exec::on_start`` hook,
    the new task still at value 0), when the host changes pstate or on/off state (old pstate,
    old load), and when someone reads the energy. So in raw SimGrid a host whose load changed
    without such a call (a multi-host task started on it, or its rates changed because a
    coupled task started or ended elsewhere, or a coupled host changed pstate) is charged the
    newer power for the whole interval since its last update. Batsim 4.2.1 reads every
    compute host's energy right before each job starts and right after it ends
    (``src/jobs_execution.cpp`` ``execute_job``: ``consumed_energy_on_machines`` and
    ``EnergyConsumptionTracer::add_job_start``/``add_job_end`` -> ``Machines::total_consumed_energy``)
    and on QUERY ``consumed_energy``, but not on a pstate change (``src/pstate.cpp`` only calls
    ``set_pstate``): between job events the plugin's lazy rule still applies.

Components
    Tasks that share a host (through parts with flops > 0; elements of weight 0 are never
    counted in ``nb`` and subtract 0) form a component; see :func:`components`. Solving each
    component alone gives bit-for-bit the values of solving the whole system: every quantity
    of a round (``nb``, ``usage``, ``mu``, ``remaining``) reads only the constraint's own
    elements and the variable's own constraints, the order in which constraints and variables
    are visited changes no value, and the extra rounds that another component may need only
    drop this component's leftover constraints (``nb == 0``) without touching a value. The one
    thing to keep is the order of the elements inside each constraint, i.e. pass the tasks of
    a component in their global creation order.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

__all__ = ["MAXMIN_PRECISION", "SURF_PRECISION", "REMAINS_PRECISION", "double_update",
           "fair_bottleneck", "l07_bound", "l07_rates", "components", "cpu_load", "host_power"]

#: ``sg_maxmin_precision`` (``src/kernel/lmm/System.cpp``; ``--cfg=maxmin/precision``).
MAXMIN_PRECISION = 1e-5
#: ``sg_surf_precision`` (``src/kernel/lmm/System.cpp``; ``--cfg=surf/precision``).
SURF_PRECISION = 1e-9
#: Precision of ``Action::update_remains`` (``src/kernel/resource/Action.cpp``).
REMAINS_PRECISION = MAXMIN_PRECISION * SURF_PRECISION

_DBL_MAX = sys.float_info.max
_INF = math.inf

Element = tuple[Hashable, float]  # (constraint id: a host id or a link, weight)


class SolverLoop(ArithmeticError):
    """SimGrid's ``FairBottleneck::do_solve`` never ends on this system: a round leaves every
    remaining capacity as it was, no variable leaves and none in play has a bound to reach, so
    every later round repeats it (or it would take more than :data:`MAX_ROUNDS` rounds). Real
    Batsim 4.2.1 hangs there (fuzz case s97, ``tests/test_solver_hang.py``: a message over
    ``__loopback__`` beside tasks that left it with ``weight x mu`` below the last bit of its
    capacity)."""

    def __init__(self, in_play: int, rounds: float = math.inf) -> None:
        #: the rounds the solve would take (``math.inf``: it never ends)
        self.rounds = rounds
        what = ("never ends here" if rounds == math.inf else
                f"needs about {rounds:.1e} rounds here (more than {MAX_ROUNDS:.0e}: several minutes to hours "
                "in SimGrid, and as long in the engine)")
        super().__init__(f"SimGrid's fair-bottleneck solver {what} ({in_play} variable(s) in play, "
                         "a link's capacity taken off by a last bit or less each round)")


#: Rounds of :func:`fair_bottleneck` beyond which a solve counts as one that never ends
#: (:class:`SolverLoop`). Real Batsim 4.2.1 (release build, Debian SimGrid 3.32) ran a solve of
#: about 2.8e9 rounds to its end in about 90 s of wall clock, about 3e7 rounds a second, and the
#: engine plays such rounds at about the same pace (``tests/fixtures/batsim_long_solve``): below
#: this bound both run the case, above it Batsim takes many minutes to hours.
MAX_ROUNDS = 1e10


def double_update(value: float, delta: float, precision: float) -> float:
    """``double_update`` (``src/surf/surf_interface.hpp``): ``value - delta``, 0.0 if below ``precision``."""
    value -= delta
    return 0.0 if value < precision else value


def fair_bottleneck(capacity: Mapping[Hashable, float],
                    variables: Sequence[tuple[Sequence[Element], float]],
                    fatpipe: frozenset | set = frozenset()) -> list[float]:
    """Solve a system as SimGrid 3.32's ``FairBottleneck::do_solve`` does (same float operations).

    Args:
        capacity: constraint id -> capacity (``bound_``; flops/s for a CPU). Every constraint
            used by an element must be present.
        variables: in the order SimGrid created them (oldest first), each
            ``(elements, bound)``: ``elements`` lists ``(constraint id, consumption weight)`` in
            expansion order (a constraint may appear twice: two elements); ``bound`` follows
            SimGrid: ``> 0`` limits the value (``math.inf`` or any value ``<= 0`` other than 0
            means no bound; 0 is no limit but the variable leaves when its value is exactly 0).
            All variables are enabled with sharing penalty 1.
        fatpipe: ids of ``FATPIPE`` constraints (links whose every flow may use the whole
            bandwidth): they count one element in a round (``nb = 1``) and lose, once per
            round, the smallest ``weight * mu`` of their elements instead of the sum.

    Returns:
        The value of each variable, in input order (fraction of the task per second for L07).
        Variables without a positive weight get 1.0.

    Inside a constraint, elements are visited newest first (``System::expand_create_elem``
    pushes at the front), which fixes the order of the subtractions from ``remaining``.
    """
    n = len(variables)
    value = [0.0] * n
    mu = [0.0] * n
    bound = [b for _, b in variables]
    # per constraint: list of (variable index, weight), newest element first
    index_of: dict[Hashable, int] = {}
    celems: list[list[tuple[int, float]]] = []
    velems: list[list[tuple[int, float]]] = []  # per variable: (local constraint, weight > 0)
    in_play = [False] * n
    for v in range(n):
        elems, _ = variables[v]
        mine = []
        for cid, w in elems:
            c = index_of.get(cid)
            if c is None:
                c = index_of[cid] = len(celems)
                celems.append([])
            if w > 0:
                mine.append((c, w))
            if w != 0:
                in_play[v] = True
        velems.append(mine)
        if not in_play[v]:
            value[v] = 1.0
    for v in range(n - 1, -1, -1):
        for cid, w in reversed(variables[v][0]):
            celems[index_of[cid]].append((v, w))
    remaining = [0.0] * len(celems)
    for cid, c in index_of.items():
        remaining[c] = float(capacity[cid])
    fat = {index_of[cid] for cid in fatpipe if cid in index_of}
    usage = [0.0] * len(celems)
    cnst_list = list(range(len(celems)))
    var_list = [v for v in range(n - 1, -1, -1) if in_play[v]]  # variable_set: newest first
    precision = MAXMIN_PRECISION

    while var_list:
        if len(cnst_list) == 1 and cnst_list[0] in fat:
            _fatpipe_rounds(cnst_list[0], var_list, velems, celems, bound, in_play, value, mu, remaining, usage)
        kept = []
        for c in cnst_list:
            nb = 0
            for v, w in celems[c]:
                if w > 0 and in_play[v]:
                    nb += 1
            if nb > 0 and c in fat:
                nb = 1
            if nb == 0:
                remaining[c] = 0.0
                usage[c] = 0.0
            else:
                usage[c] = remaining[c] / nb
                kept.append(c)
        cnst_list = kept

        still = []
        for v in var_list:
            m = _DBL_MAX
            for c, w in velems[v]:
                x = usage[c] / w
                if x < m:
                    m = x
            b = bound[v]
            if b > 0:
                x = b - value[v]
                if x < m:
                    m = x
            mu[v] = m
            value[v] += m
            if value[v] == b:
                in_play[v] = False
            else:
                still.append(v)

        kept = []
        moved = len(still) < len(var_list)   # a variable left at its bound
        for c in cnst_list:
            r = remaining[c]
            r_before = r
            elems = celems[c]
            if c in fat:
                u = usage[c]
                for v, w in elems:
                    x = w * mu[v]
                    if x < u:
                        u = x
                usage[c] = u
                r -= u
                if r < precision:
                    r = 0.0
            else:
                for v, w in elems:  # every enabled element, stale mu included
                    r -= w * mu[v]
                    if r < precision:
                        r = 0.0
            remaining[c] = r
            if r != r_before:
                moved = True
            if r <= 0.0:
                for v, w in elems:
                    if w > 0:
                        in_play[v] = False
            else:
                kept.append(c)
        cnst_list = kept
        var_list = [v for v in still if in_play[v]]
        if not moved and var_list and not any(0.0 < bound[v] < _INF for v in var_list):
            # nothing left, no capacity taken, no bound to reach: every later round is this one
            raise SolverLoop(len(var_list))
    return value


def _fatpipe_rounds(c: int, var_list: list[int], velems: list, celems: list, bound: list[float], in_play: list[bool],
                    value: list[float], mu: list[float], remaining: list[float], usage: list[float]) -> None:
    """Play at once the rounds of :func:`fair_bottleneck` that only take a fixed amount off one
    ``FATPIPE`` constraint ``c`` (updating ``value``, ``mu``, ``remaining`` and ``usage`` in
    place, with the same float operations one by one); leave the other rounds to the loop.

    When the variables in play are unbounded and only on ``c``, a round sets ``usage = R``
    (``remaining``), gives each of them ``mu = R / w``, and takes off ``c`` the smallest
    ``w x mu`` of its elements, among them those of variables that left in earlier rounds and
    keep their last ``mu``: while that stale amount ``s`` is the smallest, ``R`` falls by ``s``
    a round and each variable gains ``R / w``. SimGrid plays them one by one: a message's byte
    over the ptask model's ``__loopback__`` (capacity 1e10 B/s) beside a job whose task sends
    1e7 B to itself at 0.1 of its task per second (``s`` = 1e6 B/s) takes 10,000 rounds and gets
    a value of about 5e13 (the message crosses in 2e-14 s instead of 1e-10 s; recorded on
    SimGrid 3.32, ``tests/test_loopback_sharing.py``). Stops before any round that differs (``s`` no
    longer the smallest, ``R`` below the precision)."""
    if not 0.0 < remaining[c]:
        return
    ws = []
    for v in var_list:
        b = bound[v]
        if 0.0 < b < _INF:
            return
        el = velems[v]
        if len(el) != 1 or el[0][0] != c:
            return
        ws.append(el[0][1])
    s = _INF
    for v, w in celems[c]:
        if in_play[v]:
            if not w > 0:
                return
        else:
            x = w * mu[v]
            if x < s:
                s = x
    r0 = remaining[c]
    if not 0.0 < s < r0:   # (s = 0: SimGrid's loop never ends; the plain loop says so)
        return
    if r0 - s == r0:   # s is below r0's last bit: SimGrid's loop never ends
        raise SolverLoop(len(var_list))
    if r0 / s > MAX_ROUNDS:
        raise SolverLoop(len(var_list), r0 / s)
    import numpy as np   # (only here: a rare case, and numpy costs start-up time)
    while True:
        k = min(int(r0 / s) + 2, 1 << 22)
        rs = np.subtract.accumulate(np.concatenate(([r0], np.full(k, s))))
        ok = (rs[:-1] >= s) & (rs[1:] >= MAXMIN_PRECISION)
        ms = []
        for w in ws:
            m = rs[:-1] / w
            ok &= (m * w) >= s
            ms.append(m)
        bad = np.flatnonzero(~ok)
        n = int(bad[0]) if bad.size else k
        if n == 0:
            return
        for v, m in zip(var_list, ms):
            value[v] = float(np.add.accumulate(np.concatenate(([value[v]], m[:n])))[-1])
            mu[v] = float(m[n - 1])
        r0 = remaining[c] = float(rs[n])
        usage[c] = s
        if n < k:
            return


def l07_bound(hosts: Sequence[int], flops: Sequence[float], speed: Mapping[int, float]) -> float:
    """Bound of a task's variable (``L07Action::calculate_cpu_bound``), fraction/s.

    ``min over parts with flops > 0 of speed[host] / flops`` (one core per part); ``math.inf``
    when no part computes. ``speed`` is flops/s of one core at the host's current pstate.
    """
    b = math.inf
    for h, f in zip(hosts, flops):
        if f > 0:
            x = speed[h] * 1.0 * 1.0 / f  # get_speed(1.0) * get_speed_ratio() / flops
            if x < b:
                b = x
    return b


def l07_rates(tasks: Sequence[tuple[Sequence[int], Sequence[float]]],
              hosts: Mapping[int, tuple[int, float]],
              net: Sequence[tuple[Sequence[tuple[Any, float]], float]] | None = None,
              ) -> tuple[list[float], dict[int, float]]:
    """Rates of running parallel tasks as SimGrid's ``ptask_L07`` model gives them.

    Args:
        tasks: the running tasks in the order they were started (SimGrid's creation order),
            each ``(hosts, flops)``: host ids (a host may be listed twice) and flops per part.
        hosts: host id -> ``(cores, speed)``, speed in flops/s of one core at the current
            pstate. Must cover every host of ``tasks``.
        net: on a platform with links, per task ``(links, bound)``: ``links`` lists
            ``(link, bytes)`` in SimGrid's element order (objects hashed by identity, with
            ``bandwidth`` in B/s and ``fatpipe``; see :mod:`schedulers.engine.netroute`; each
            link object is its constraint's id beside the host ids), each an element of
            the link's constraint (capacity: the bandwidth) after the task's CPU elements
            (``L07Action::L07Action``); ``bound`` (fraction/s) is the task's TCP-gamma bound,
            the variable's bound being the smaller of it and the CPU bound.

    Returns:
        ``(rates, usage)``: ``rates[i]`` is task ``i``'s progress in fraction of the task per
        second (a part of ``f`` flops computes ``f * rate`` flops/s; the task ends after
        ``1 / rate`` s if nothing changes; 1.0 for a task with no positive flops, which ends at
        once); ``usage[h]`` is ``Constraint::get_usage()`` of every host of ``tasks``, flops/s
        (divide by ``speed`` for busy cores), what the energy plugin reads.
    """
    capacity: dict[Any, float] = {}
    speed: dict[int, float] = {}
    for hs, _ in tasks:
        for h in hs:
            if h not in capacity:
                cores, s = hosts[h]
                speed[h] = s
                capacity[h] = cores * s
    variables: list[tuple[list[tuple[Any, float]], float]] = [(list(zip(hs, fs)), l07_bound(hs, fs, speed))
                                                               for hs, fs in tasks]
    fatpipe = set()
    if net is not None:
        for (elems, b), (links, nb) in zip(variables, net):
            for ln, w in links:
                capacity[ln] = ln.bandwidth
                if ln.fatpipe:
                    fatpipe.add(ln)
                elems.append((ln, w))
        variables = [(elems, min(b, nb)) for (elems, b), (_, nb) in zip(variables, net)]
    rates = fair_bottleneck(capacity, variables, fatpipe)
    usage = dict.fromkeys(speed, 0.0)
    # Constraint::get_usage sums weight * value over the elements, newest first
    for i in range(len(tasks) - 1, -1, -1):
        hs, fs = tasks[i]
        for h, f in zip(reversed(hs), reversed(fs)):
            if f > 0:
                usage[h] += f * rates[i]
    return rates, usage


def components(tasks: Sequence[tuple[Sequence[int], Sequence[float]]]) -> list[list[int]]:
    """Split tasks into groups that share no host (through parts with flops > 0).

    Args:
        tasks: ``(hosts, flops)`` per task, as for :func:`l07_rates`.

    Returns:
        Lists of task indices, each in increasing order; groups ordered by their first task.
        Tasks with no positive flops are alone. Solving each group with :func:`l07_rates`
        (keeping the increasing order, i.e. creation order) gives exactly the rates of solving
        all tasks together (see the module docstring), so an engine only re-solves the groups
        whose hosts saw a task start or end or a speed change.
    """
    parent = list(range(len(tasks)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[int, int] = {}
    for i, (hs, fs) in enumerate(tasks):
        for h, f in zip(hs, fs):
            if f > 0:
                j = owner.setdefault(h, i)
                a, b = find(i), find(j)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in range(len(tasks)):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def cpu_load(usage: float, speed: float, cores: int) -> float:
    """Load fraction the energy plugin uses (``HostEnergy::get_current_watts_value()``).

    ``usage`` flops/s (:func:`l07_rates`), ``speed`` flops/s of one core at the pstate the
    plugin recorded, ``cores``. Returns ``min(usage / speed / cores, 1)``, or 1 when
    ``speed <= 0``.
    """
    if speed <= 0:
        return 1.0
    load = usage / speed
    load /= cores
    return 1.0 if load > 1 else load


def host_power(load: float, idle: float, epsilon: float, all_cores: float) -> float:
    """Watts at a load fraction (``HostEnergy::get_current_watts_value(double)``).

    ``epsilon + load * (all_cores - epsilon)`` when ``load > 0``, else ``idle``; the
    ``wattage_per_state`` triple of the pstate (``Idle:AllCores`` means ``epsilon = idle``).
    """
    if load > 0:
        return epsilon + load * (all_cores - epsilon)
    return idle
