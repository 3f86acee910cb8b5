"""EHOSEP's metrics: the CSP coefficient and the satisfaction ``S_i`` (eq. 1), from a run's files.

Source: ``shared/papers/003_97c4ff2275ee8bc0.txt`` (the EHOSEP paper, "003"; ``L<n>`` = line of
the plain-text file): §3.1 (limits L116-120, CSP L130-134), §4 (test case L237-257, Fig. 1 L258)
and eq. (1) (L260-277). Units: s, flops, flops/s, W, J.

Inputs: the run's ``out_jobs.csv`` (Batsim 4.2.1's format, a run with energy: ``-E``), its
workload(s) with the users' limits recorded as the top-level entry ``"ehosep": {"limits": {"user1":
80.0, ...}}`` (percent; written by the ``ehosep`` scenario generator,
:mod:`schedulers.inputs.ehosep_scenario`), and its platform (hosts' ``owner``, speeds,
``wattage_per_state``). Nothing else: Batsim's energy files are not needed (see "Host energy").

Platform quantities (static)
---------------------------

* ``Poder`` of a host (flops/s): its nominal power, the fastest pstate's speed times its cores
  (:func:`schedulers.core.ownership.host_power`). ``PoderPorcao_i``: the sum over the hosts user
  ``i`` owns (property ``owner``); ``PoderSistema``: over all compute hosts, owned or not.
* Full-load power of a host (W): the ``AllCores`` figure of its fastest pstate in
  ``wattage_per_state`` (003 Table 1's "Consumo (W)" figures, see the generator).
  ``ConsumoPorcao_i`` / ``ConsumoSistema``: the sums over ``i``'s hosts / all hosts.
* **CSP** (003 §3.1)::

      CSP_i = (ConsumoPorcao_i / ConsumoSistema) x (PoderSistema / PoderPorcao_i)

  dimensionless: the share's fraction of the grid's power draw over its fraction of the grid's
  speed, i.e. the grid's GFlops/W over the share's. ``> 1``: a share less efficient than the grid.
  A user owning nothing has no share (0/0): no CSP column. Nor has anybody on a platform whose
  full-load powers are all 0 W.

Run quantities (read from the files)
------------------------------------

Time base: the simulation, from 0 s (every generated workload's first arrival) to
``TempoTotalExec``.

* **Job energy**: ``consumed_energy`` of an ``out_jobs.csv`` row (J): Batsim's energy of the job's
  hosts between its start and its end. A task preempted by kill and resubmission
  (``name``, ``name#1``...: :mod:`schedulers.core.run_outputs`) has one row per run; every run
  counts (the energy was drawn for that user, even for the work a kill lost).
* **Host energy** (Batsim writes none per host): over ``[0, TempoTotalExec]``, the energy of the
  jobs that ran on the host plus its ``Idle`` power (of its initial pstate) for the time it ran
  none. A multi-host job's energy is split among its hosts in proportion to their full-load
  powers (exact for compute jobs on one-core hosts; the EHOSEP grid's jobs are single-host). Two
  jobs on one host at once are refused (their energies would both count the host). Pstate changes
  are not in ``out_jobs.csv``: a policy switching pstates (EHOSEP does not) makes this an
  approximation. Without pstate changes the sum over all hosts is the platform energy Batsim
  reports at the last job end (``consumed_joules`` of ``out_schedule.csv``), as the tests check.

Eq. (1), as printed (003 §4)::

    S_i = 100 x sum_{t=1..N} TempoIdealTar_t / TempoRealTar_t
              x ConMaxPorcao / ConsTotalPorcao x (ConsTotalSist - ConsTotal_i) / (Limite_i x TempoTotalExec)

Each term as read here (the paper defines none of them beyond their names):

* ``N``: the tasks of user ``i`` (its jobs in the workloads; restarts are the same task).
* ``TempoIdealTar_t`` (s): the task's work (flops, its profile) over the mean nominal speed of the
  hosts ``i`` owns (flops/s): HOSEP's ideal machine (HOSEP paper 000 Def. 5), as
  :func:`schedulers.core.satisfaction.task_satisfactions` computes it (mode ``hosep``). (003
  sizes its tasks on a machine of the *grid's* mean power, L241-245, but never calls that time
  ideal; EHOSEP extends HOSEP, whose satisfaction this is. A user whose own hosts are slow, user3
  on the EHOSEP grid, gets time factors above 1 when its tasks run on faster hosts.)
* ``TempoRealTar_t`` (s): the end of the task's successful run minus its arrival (``subtime``):
  waiting, runs lost to preemption and the final run (same function).
* ``ConMaxPorcao`` (J): the most ``i``'s share can draw over the run, its full-load power (W)
  times ``TempoTotalExec`` (s).
* ``ConsTotalPorcao`` (J): what ``i``'s hosts drew over the run, whoever's jobs ran on them (host
  energy above, summed over ``i``'s hosts).
* ``ConsTotalSist`` (J): what all compute hosts drew over the run (host energy, summed).
* ``ConsTotal_i`` (J): the energy of ``i``'s jobs, wherever they ran (sum of their rows'
  ``consumed_energy``).
* ``Limite_i`` (W): the recorded limit (percent) / 100 x the full-load power of ``i``'s hosts
  (003 §3.1: "a percentage of the total consumption of the machines it owns").
* ``TempoTotalExec`` (s): the run's total execution time, the last job end (no index ``i``: one
  figure for the run).

So ``ConMaxPorcao / ConsTotalPorcao`` (>= 1; 1 when ``i``'s hosts ran at full load the whole run)
and ``(ConsTotalSist - ConsTotal_i) / (Limite_i x TempoTotalExec)`` are both dimensionless (J/J),
and the share's full-load power cancels out of their product:
``S_i = 100 x mean_t(TempoIdeal/TempoReal) x (ConsTotalSist - ConsTotal_i) / (Limite_i[%] / 100 x
ConsTotalPorcao)``.

Two readings are choices:

* **The sum**: printed without ``1/N``, it would grow with the number of tasks (a user with twice
  as many tasks, twice as satisfied); Fig. 1 plots "the mean of the users' satisfactions" and
  HOSEP's satisfaction, which EHOSEP extends, is a mean over the tasks (000 eq. 2). ``S`` is
  therefore the mean over the ``N`` tasks; ``S_sum`` is eq. (1) as printed (``N x S``).
* **The share terms**: printed without the index ``i`` (which the text keeps on ``ConsTotal_i``
  and ``Limite_i``), read as user ``i``'s share (the share of eq. 1's user, as ``Porcao_i`` in
  §3.1), ``ConMax`` its most and ``ConsTotal`` what it drew, the names' pattern
  (``ConsTotalSist``, ``ConsTotal_i``: energy drawn over the run). Reading them as grid-wide
  constants would scale every user's ``S`` alike. Another reading, ``ConMaxPorcao /
  ConsTotalPorcao`` = the share's full-load power over the grid's (W/W, CSP's first factor), is
  not computed; it would give ``S_i = 100 x mean_t(...) x (ConsTotalSist - ConsTotal_i) /
  (Limite_i[%] / 100 x ConsumoSistema x TempoTotalExec)``.

Two more readings, computed beside the printed one (:meth:`UserReading.reading`):

* **Ideal time on the grid's mean machine** (``ideal="grid"``): 003 itself sizes its tasks "de
  10 a 60 minutos de execução numa máquina de poder equivalente ao poder médio do sistema"
  (L243-245), and the authors' simulator iSPD computes the ideal time so ("máquina média do
  sistema": ``src/ispd/motor/metricas/Metricas.java`` of the public repository
  ``gspd-unesp/ispd``, the mean computing power of all the grid's machines): ``TempoIdealTar_t``
  = work / the mean nominal speed of all compute hosts (:func:`schedulers.core.satisfaction.
  task_satisfactions`, mode ``ispd``). Column ``S_grid``; its time factor ``time_factor_grid``.
* **iSPD's energy factor** (``energy="ispd"``): the same file multiplies the mean time ratio by
  ``alpha x beta`` with ``alpha = ConsumoMaxLocal x TempoSim / ConsumoLocal`` (our share factor)
  and ``beta = 1 + (ConsumoTotalSistema - ConsumoTotalUsuario) / (Limite x TempoSim)``: the
  printed energy factor plus 1, so that a user whose jobs drew all of the grid's energy keeps a
  factor of 1 instead of 0. Column ``S_ispd`` = iSPD's reading as a whole: grid-mean ideal time
  and ``1 + energy_factor``. (iSPD also counts only the tasks' energy in ``ConsumoLocal`` and
  ``ConsumoTotalSistema``, no idle power; here both include the hosts' idle power, as Batsim's
  host energy does.)

Magnitudes: since ``ConsTotalSist - ConsTotal_i`` is set against user ``i``'s own allowance, a
small share draws a large ``energy_factor``: on the EHOSEP grid, user4 (536 W of 9,192) at 150 %
sees the others draw several times its allowance, and its ``S`` can be far above 100 %. Nothing
caps ``S`` (nor HOSEP's satisfaction, 000).

Users: every user with tasks or hosts. ``S`` needs ``N > 0``, ``Limite_i > 0`` W (a user owning
nothing has a limit of 0 W: no ``S``) and ``ConsTotalPorcao > 0`` J; a user lacking one of them
gets no ``S`` columns (never NaN or inf). A user with tasks and a share but no recorded limit is
an error. Every task must have completed (:class:`~schedulers.core.satisfaction.SatisfactionError`
otherwise).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..inputs.errors import PlatformError, WorkloadError
from .model import Host
from .ownership import host_power
from .power import csp_coefficient, full_load_watts, watt_ranges
from .run_outputs import OutputsError, RunFiles, load_run, out_jobs_rows, read_hosts, task_key
from .satisfaction import task_satisfactions

#: Ideal machines of ``TempoIdealTar`` and energy factors of the readings (module docstring).
IDEALS = ("share", "grid")
ENERGY_FACTORS = ("printed", "ispd")

__all__ = ["IDEALS", "ENERGY_FACTORS", "Grid", "UserReading", "RunReading", "read_grid", "csp", "recorded_limits", "job_energies", "host_energies",
           "ehosep_reading", "ehosep_metrics"]


@dataclass(frozen=True)
class Grid:
    """The compute hosts (Batsim id order) with their full-load and idle powers (W)."""

    hosts: list[Host]
    full_w: list[float]
    idle_w: list[float]

    def owned(self, user: str) -> list[int]:
        """Ids of the hosts ``user`` owns."""
        return [h.id for h in self.hosts if h.owner == user]

    def owners(self) -> list[str]:
        """Users owning at least one host, sorted."""
        return sorted({h.owner for h in self.hosts if h.owner})

    def power(self, ids: Sequence[int] | None = None) -> float:
        """Nominal power (flops/s) of hosts ``ids`` (all when None)."""
        ids = range(len(self.hosts)) if ids is None else ids
        return math.fsum(host_power(self.hosts[i]) for i in ids)

    def watts(self, ids: Sequence[int] | None = None) -> float:
        """Full-load power (W) of hosts ``ids`` (all when None)."""
        ids = range(len(self.hosts)) if ids is None else ids
        return math.fsum(self.full_w[i] for i in ids)


def read_grid(platform: str | Path, hosts: list[Host] | None = None) -> Grid:
    """The hosts of a platform file with their powers: full load = ``AllCores`` of the fastest
    computation pstate (:func:`~schedulers.core.power.full_load_watts`, what the ``ehosep``
    policy reads too), idle = ``Idle`` of the initial pstate (W).

    Args:
        hosts: the hosts already read from that file (:func:`~schedulers.core.run_outputs.read_hosts`).

    Raises:
        PlatformError: unreadable platform; a compute host without ``wattage_per_state``.
    """
    hosts = read_hosts(platform) if hosts is None else hosts
    full, idle = [], []
    for h in hosts:
        if not h.properties.get("wattage_per_state"):
            raise PlatformError(f"{platform}: host {h.name!r} has no wattage_per_state: the ehosep metrics need "
                                "every compute host's idle and full-load power")
        full.append(full_load_watts(h))
        idle.append(watt_ranges(h)[h.pstate].idle)
    return Grid(hosts, full, idle)


def csp(grid: Grid) -> dict[str, float]:
    """``CSP_i`` of every owner (003 §3.1, see the module docstring), users sorted; empty when the
    grid's full-load power is 0 W."""
    total_w, total_p = grid.watts(), grid.power()
    if not total_w > 0:
        return {}
    out = {}
    for u in grid.owners():
        ids = grid.owned(u)
        out[u] = csp_coefficient(grid.watts(ids), total_w, grid.power(ids), total_p)
    return out


def recorded_limits(workloads: list[str | Path | dict]) -> dict[str, float]:
    """The users' limits (percent) recorded in the workloads' ``"ehosep": {"limits": {...}}``
    entries (workloads without the entry record none).

    Raises:
        WorkloadError: unreadable workload, a malformed entry, a limit not a number >= 0, or one
            user given two different limits (names the file and the user).
    """
    from ..inputs.jsonfile import read_json

    limits: dict[str, float] = {}
    where: dict[str, str] = {}
    for i, w in enumerate(workloads):
        src = f"<workload w{i}>" if isinstance(w, dict) else str(w)
        data = w if isinstance(w, dict) else read_json(w, WorkloadError, "workload")
        entry = data.get("ehosep") if isinstance(data, dict) else None
        if entry is None:
            continue
        lim = entry.get("limits") if isinstance(entry, dict) else None
        if not isinstance(lim, dict):
            raise WorkloadError(f"{src}: entry 'ehosep' must be an object {{\"limits\": {{user: percent, ...}}}}, "
                                f"got {entry!r}")
        for user, v in lim.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v >= 0):
                raise WorkloadError(f"{src}: ehosep limit of user {user!r} must be a number of percent >= 0, "
                                    f"got {v!r}")
            if user in limits and limits[user] != float(v):
                raise WorkloadError(f"{src}: ehosep limit of user {user!r} is {v} here but {limits[user]} in "
                                    f"{where[user]}")
            limits[user], where[user] = float(v), src
    return limits


def job_energies(out_jobs: str | Path, run: RunFiles) -> dict[str, float]:
    """``consumed_energy`` (J) of every row of ``out_jobs.csv`` that ran on hosts, by full job id.

    Raises:
        OutputsError: no ``consumed_energy`` column, or a row with hosts whose value is not a
            number >= 0 (-1: a run without energy).
    """
    path, rows = out_jobs_rows(out_jobs, ("job_id", "workload_name", "consumed_energy"))
    text = {f"{r['workload_name']}!{r['job_id']}": r["consumed_energy"] for r in rows}
    out = {}
    for r in run.runs:
        if not r.hosts:
            continue
        raw = text.get(r.id, "")
        try:
            e = float(raw)
        except ValueError:
            e = math.nan
        if not (math.isfinite(e) and e >= 0):
            raise OutputsError(f"{path}: job {r.id}: consumed_energy is {raw!r}, not joules >= 0 (the ehosep "
                               "metrics need a run with energy: gridsched run -E, Batsim -E)")
        out[r.id] = e
    return out


def host_energies(run: RunFiles, grid: Grid, energies: dict[str, float], end: float) -> list[float]:
    """Energy (J) of every compute host over ``[0, end]``: its jobs' energies plus idle power for
    the time it ran none (see the module docstring).

    Raises:
        OutputsError: two jobs on one host at once (names the host and the jobs).
    """
    spans: list[list[tuple[float, float, float, str]]] = [[] for _ in grid.hosts]
    for r in run.runs:
        if not r.hosts:
            continue
        weights = [grid.full_w[h] for h in r.hosts]
        total = math.fsum(weights)
        for h, wgt in zip(r.hosts, weights):
            part = energies[r.id] * (wgt / total if total > 0 else 1.0 / len(r.hosts))
            spans[h].append((r.start, r.finish, part, r.id))
    out = []
    for h, jobs in enumerate(spans):
        jobs.sort()
        busy = 0.0
        for k, (start, finish, _, jid) in enumerate(jobs):
            if k and start < jobs[k - 1][1]:
                raise OutputsError(f"{run.out_jobs}: host {grid.hosts[h].name!r} (id {h}) runs jobs {jobs[k - 1][3]} "
                                   f"and {jid} at once (from {start} s): the ehosep metrics read a host's "
                                   "energy from the one job it runs")
            busy += finish - start
        out.append(math.fsum(j[2] for j in jobs) + grid.idle_w[h] * max(0.0, end - busy))
    return out


def _defined(x: float | None) -> float:
    """``x``, a factor of S or S itself where S is defined (:class:`UserReading`'s factors are
    None only all together, when S is not defined).

    Raises:
        ValueError: ``x`` is None there (a reading built with some factors only).
    """
    if x is None:
        raise ValueError("ehosep reading: a factor of S is undefined where S is defined")
    return x


@dataclass(frozen=True)
class UserReading:
    """One user's terms of eq. (1) (see the module docstring); the factors and ``S`` are None when
    ``S`` is not defined for the user."""

    user: str
    tasks: int
    energy: float                    # ConsTotal_i (J)
    share_energy: float              # ConsTotalPorcao (J)
    share_watts: float               # full-load power of the user's hosts (W)
    limit_w: float | None            # Limite_i (W)
    time_factor: float | None        # mean of TempoIdealTar / TempoRealTar (ideal: the user's mean host)
    share_factor: float | None       # ConMaxPorcao / ConsTotalPorcao
    energy_factor: float | None      # (ConsTotalSist - ConsTotal_i) / (Limite_i x TempoTotalExec)
    time_factor_grid: float | None = None   # the same with TempoIdealTar on the grid's mean host

    @property
    def satisfaction(self) -> float | None:
        """``S_i`` (%, the mean reading)."""
        return self.reading()

    def reading(self, ideal: str = "share", energy: str = "printed") -> float | None:
        """``S_i`` (%) under a reading (module docstring): ``ideal`` ``"share"`` (the user's mean
        host, HOSEP's Definition 5) or ``"grid"`` (the grid's mean host, 003 L243-245 and iSPD);
        ``energy`` ``"printed"`` (eq. 1) or ``"ispd"`` (1 + the printed factor). None when S is
        not defined for the user.

        Raises:
            ValueError: an unknown ``ideal`` or ``energy``.
        """
        if ideal not in IDEALS or energy not in ENERGY_FACTORS:
            raise ValueError(f"ehosep reading: ideal must be one of {', '.join(IDEALS)} and energy one of "
                             f"{', '.join(ENERGY_FACTORS)}, got {ideal!r}, {energy!r}")
        if self.time_factor is None:
            return None
        time = _defined(self.time_factor if ideal == "share" else self.time_factor_grid)
        ef = _defined(self.energy_factor)
        factor = ef if energy == "printed" else 1.0 + ef
        return 100.0 * time * _defined(self.share_factor) * factor


@dataclass(frozen=True)
class RunReading:
    """Eq. (1)'s terms for a run: per user, and the grid's ``ConsTotalSist`` (J),
    ``TempoTotalExec`` (s) and CSP."""

    users: dict[str, UserReading]
    system_energy: float
    total_time: float
    csp: dict[str, float]


def ehosep_reading(out_jobs: str | Path, workloads: list[str | Path | dict], platform: str | Path) -> RunReading:
    """Every term of eq. (1) and the CSP for a run (see the module docstring).

    Raises:
        OutputsError, SatisfactionError: see :func:`job_energies`, :func:`host_energies`,
            :func:`~schedulers.core.satisfaction.task_satisfactions`, ``load_run``.
        WorkloadError: see :func:`recorded_limits`; a user with tasks and hosts but no limit.
        PlatformError: see :func:`read_grid`.
    """
    run = load_run(out_jobs, workloads, platform)
    grid = read_grid(platform, run.hosts)
    limits = recorded_limits(workloads)
    energies = job_energies(out_jobs, run)
    end = max((r.finish for r in run.runs if r.hosts), default=0.0)
    per_host = host_energies(run, grid, energies, end)
    system = math.fsum(per_host)
    ratios: dict[str, list[float]] = {}
    for t in task_satisfactions(run, "hosep"):
        ratios.setdefault(t.user, []).append((t.ideal_end - t.arrival) / (t.end - t.arrival))
    grid_ratios: dict[str, list[float]] = {}
    for t in task_satisfactions(run, "ispd"):
        grid_ratios.setdefault(t.user, []).append((t.ideal_end - t.arrival) / (t.end - t.arrival))
    used: dict[str, list[float]] = {}
    for r in run.runs:
        if r.hosts:
            used.setdefault(run.tasks[task_key(r.workload, r.job_id, run.tasks)].user, []).append(energies[r.id])
    users = sorted({t.user for t in run.tasks.values()} | set(grid.owners()))
    out = {}
    for u in users:
        ids = grid.owned(u)
        share_w, share_e = grid.watts(ids), math.fsum(per_host[i] for i in ids)
        energy = math.fsum(used.get(u, []))
        n = len(ratios.get(u, []))
        if n and share_w > 0 and u not in limits:
            sources = ", ".join(f"<workload w{i}>" if isinstance(w, dict) else str(w) for i, w in enumerate(workloads))
            raise WorkloadError(f"{sources}: no ehosep limit recorded for user {u!r} (top-level entry "
                                "\"ehosep\": {\"limits\": {user: percent}})")
        limit_w = limits[u] / 100.0 * share_w if u in limits and share_w > 0 else None
        factors: tuple[Any, Any, Any, Any] = (None, None, None, None)
        if n and limit_w and share_e > 0 and end > 0:
            factors = (math.fsum(ratios[u]) / n, share_w * end / share_e, (system - energy) / (limit_w * end),
                       math.fsum(grid_ratios[u]) / n)
        out[u] = UserReading(u, n, energy, share_e, share_w, limit_w, *factors)
    return RunReading(out, system, end, csp(grid))


def ehosep_metrics(out_jobs: str | Path, workloads: list[str | Path | dict], platform: str | Path, *,
                   prefix: str = "ehosep") -> dict[str, float]:
    """A run's EHOSEP numbers as campaign metrics (columns ``<prefix>.<name>.<user>``):

    * ``S`` (%): eq. (1), mean over the user's tasks; ``S_sum``: eq. (1) as printed (``N x S``);
    * ``S_grid`` (%): eq. (1) with the ideal time on the grid's mean host; ``S_ispd`` (%): iSPD's
      reading, that ideal time and ``1 + energy_factor`` (module docstring);
    * ``time_factor``, ``share_factor``, ``energy_factor``: its three factors
      (``S = 100 x time x share x energy``), and ``time_factor_grid`` (the grid-mean ideal);
    * ``CSP``: the user's CSP (owners);
    * ``energy`` (J): ``ConsTotal_i``, its jobs' energy; ``mean_power`` (W): that over
      ``TempoTotalExec``, to set against ``limit_w`` (W): ``Limite_i``;
    * ``share_energy`` (J): ``ConsTotalPorcao``, what its hosts drew;

    and ``<prefix>.system_energy`` (J, ``ConsTotalSist``) and ``<prefix>.total_time`` (s,
    ``TempoTotalExec``). Users and undefined values: see the module docstring.

    Raises:
        see :func:`ehosep_reading`.
    """
    reading = ehosep_reading(out_jobs, workloads, platform)
    end = reading.total_time
    out: dict[str, float] = {}
    for u, r in reading.users.items():
        s = r.satisfaction
        if s is not None:
            out[f"{prefix}.S.{u}"] = s
            out[f"{prefix}.S_sum.{u}"] = s * r.tasks
            out[f"{prefix}.S_grid.{u}"] = _defined(r.reading("grid"))
            out[f"{prefix}.S_ispd.{u}"] = _defined(r.reading("grid", "ispd"))
            out[f"{prefix}.time_factor_grid.{u}"] = _defined(r.time_factor_grid)
            out[f"{prefix}.time_factor.{u}"] = _defined(r.time_factor)
            out[f"{prefix}.share_factor.{u}"] = _defined(r.share_factor)
            out[f"{prefix}.energy_factor.{u}"] = _defined(r.energy_factor)
        if u in reading.csp:
            out[f"{prefix}.CSP.{u}"] = reading.csp[u]
        out[f"{prefix}.energy.{u}"] = r.energy
        out[f"{prefix}.mean_power.{u}"] = r.energy / end if end > 0 else 0.0
        if r.limit_w is not None:
            out[f"{prefix}.limit_w.{u}"] = r.limit_w
        out[f"{prefix}.share_energy.{u}"] = r.share_energy
    out[f"{prefix}.system_energy"] = reading.system_energy
    out[f"{prefix}.total_time"] = end
    return out
