"""Run summaries computed from Batsim's output files (embedded engine or real Batsim alike).

Metrics (standard definitions, Feitelson et al. "Metrics and benchmarking for parallel job
scheduling", JSSPP 1998):

* waiting time ``w = start - submission`` (s); turnaround ``start + run - submission`` (s);
* bounded slowdown ``max(1, (w + run) / max(run, tau))`` with ``tau = 10`` s;
* utilisation ``sum(res * run) / (nb_hosts * makespan)`` over executed jobs;
* makespan: last finish time (s); energy in joules and kWh (1 kWh = 3.6e6 J).

Pure Python (no numpy, no pandas), so that ``gridsched run`` starts without the analysis stack.
The sums and means are numpy's to the last bit: :func:`pairwise_sum` is numpy's summation
algorithm, and these summaries were computed with numpy before (same ``summary.json`` values).
"""

from __future__ import annotations

import csv
import math
from array import array
from itertools import compress
from operator import mul, sub as sub_
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Iterable, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Threshold of the bounded slowdown (s).
BSLD_TAU = 10.0
JOULES_PER_KWH = 3.6e6


@dataclass
class RunSummary:
    """Headline numbers of one simulation (times in s, energy in J and kWh, utilisation in [0, 1]).

    ``jobs``, ``success``, ``killed``, ``rejected`` count Batsim's jobs (rows of ``out_jobs.csv``);
    the jobs that ended ``COMPLETED_FAILED`` (a profile's ``ret`` > 0) are the rest,
    :attr:`failed`. The waiting times and the bounded slowdown are None (``null`` in
    ``summary.json``) when no job started (every job rejected): they have no value then, and a
    bounded slowdown is never below 1. So is the energy then (:attr:`energy_unmeasured`): Batsim's
    ``consumed_joules`` is the energy at the last job end minus the energy at the first
    submission, and with no job end Batsim 4.2.1 (``export.cpp``) prints -1 minus the latter, a
    negative number of joules that measures nothing; ``out_schedule.csv`` keeps it, as Batsim's.
    A run of a preemptive owner-share policy (OSEP, HOSEP, EHOSEP) also has ``tasks`` (the
    workload's jobs), ``restarts`` (the jobs it registered to run a preempted task again,
    ``<task>#<k>``) and ``preemptions`` (jobs killed to give their hosts away, each followed by a
    restart): :func:`task_counts`. They are None (and left out of :meth:`as_dict`) otherwise.
    """

    jobs: int
    success: int
    killed: int
    rejected: int
    makespan: float
    mean_waiting_time: float | None
    mean_bounded_slowdown: float | None
    max_waiting_time: float | None
    utilisation: float
    energy_joules: float | None
    energy_kwh: float | None
    tasks: int | None = None
    restarts: int | None = None
    preemptions: int | None = None
    #: True when the run had energy (``-E``) but no job ran: ``energy_joules`` is then None
    #: (not in :meth:`as_dict`).
    energy_unmeasured: bool = False

    #: The fields :meth:`as_dict` may hold (``summary.json``, a campaign's runs table), in order.
    COLUMNS: ClassVar[tuple[str, ...]]

    @property
    def failed(self) -> int:
        """Jobs that ended ``COMPLETED_FAILED`` (their profile's return code ``ret`` > 0): the jobs
        neither succeeded, killed nor rejected."""
        return self.jobs - self.success - self.killed - self.rejected

    def as_dict(self) -> dict:
        """The fields as a dict (``summary.json``); ``tasks``, ``restarts`` and ``preemptions``
        only when known."""
        d = asdict(self)
        del d["energy_unmeasured"]
        for k in ("tasks", "restarts", "preemptions"):
            if d[k] is None:
                del d[k]
        return d

    def format(self) -> str:
        """A short human-readable block."""
        lines = []
        failed = f", {self.failed:,} failed (return code > 0)" if self.failed else ""
        if self.tasks is not None:
            lines.append(f"tasks                 {self.tasks:,} ({_count(self.preemptions, 'preemption')}, "
                         f"{_count(self.restarts, 'restart')})")
            lines.append(f"Batsim jobs           {self.jobs:,}: {self.success:,} succeeded, {self.killed:,} killed "
                         f"of which {self.preemptions:,} preempted, {self.rejected:,} rejected{failed}")
        else:
            lines.append(f"jobs                  {self.jobs:,} ({self.success:,} succeeded, {self.killed:,} killed, "
                         f"{self.rejected:,} rejected{failed})")
        lines.append(f"makespan              {self.makespan:,.1f} s")
        if self.mean_waiting_time is None or self.max_waiting_time is None or self.mean_bounded_slowdown is None:
            lines += ["mean waiting time     none: no job started",
                      "mean bounded slowdown none: no job started"]
        else:
            lines += [f"mean waiting time     {self.mean_waiting_time:,.1f} s (max {self.max_waiting_time:,.1f} s)",
                      f"mean bounded slowdown {self.mean_bounded_slowdown:,.3f} (tau = {BSLD_TAU:g} s)"]
        lines.append(f"utilisation           {100 * self.utilisation:.1f} %")
        if self.energy_unmeasured:
            lines.append("energy                none: no job ran")
        elif self.energy_joules is not None:
            lines.append(f"energy                {self.energy_joules:,.0f} J = {self.energy_kwh:,.3f} kWh")
        return "\n".join(lines)


RunSummary.COLUMNS = tuple(f.name for f in fields(RunSummary) if f.name != "energy_unmeasured")


def task_counts(out_jobs: str | Path) -> dict[str, int]:
    """``{"tasks", "restarts", "preemptions"}`` of a run of a preemptive owner-share policy, from
    the ``job_id``, ``workload_name`` and ``final_state`` columns of its ``out_jobs.csv``.

    A task preempted for the ``k``-th time runs again as job ``<task>#<k>`` of the task's own
    workload (:func:`schedulers.core.preemption.restart_name`). A job is a restart when its id is
    ``<base>#<k>`` (``k`` an integer >= 1) and the job it runs again (``<base>`` for ``k`` = 1,
    ``<base>#<k-1>`` after) is in the file and was killed; every other job is a task, a
    workload's own ``a#b`` or ``x#1`` included. A preemption is a killed job whose next restart
    exists (a job killed at its walltime has none). A job is its workload and its id, as
    Batsim's ``w0!1``: a run of two workloads with the same ids (``-w a.json -w a.json``) has the
    tasks of both (a file without ``workload_name`` counts its ids alone).

    Raises:
        FileNotFoundError: no such file. ValueError: no ``job_id`` or ``final_state`` column.
    """
    with open(out_jobs, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, [])
        if "job_id" not in header or "final_state" not in header:
            raise ValueError(f"{out_jobs}: no job_id or final_state column")
        i, j = header.index("job_id"), header.index("final_state")
        w = header.index("workload_name") if "workload_name" in header else None
        state = {((r[w] if w is not None else ""), r[i]): r[j] for r in reader}

    def runs_again(key: tuple[str, str]) -> tuple[str, str] | None:
        """The killed job that job ``key`` runs again, when it is a restart (else None)."""
        wl, jid = key
        base, sep, k = jid.rpartition("#")
        if not sep or not (k.isascii() and k.isdigit()) or k[0] == "0":
            return None
        prev = (wl, base if k == "1" else f"{base}#{int(k) - 1}")
        return prev if state.get(prev) == "COMPLETED_KILLED" else None

    restarted = [prev for prev in map(runs_again, state) if prev is not None]
    return {"tasks": len(state) - len(restarted), "restarts": len(restarted), "preemptions": len(set(restarted))}


def pairwise_sum(values: Sequence[float], lo: int = 0, n: int | None = None) -> float:
    """``sum(values[lo:lo + n])`` computed as numpy sums a contiguous float64 array
    (``np.add.reduce``: ``0.0 +`` the pairwise sum of ``pairwise_sum_DOUBLE`` in numpy's
    ``loops_utils.h.src``: below 8 values a plain loop, up to 128 values 8 interleaved partial
    sums, above that the two halves (split at a multiple of 8) summed recursively), so that the
    result is bit-for-bit ``float(np.asarray(values, dtype=float).sum())``. Units: those of the
    values."""
    if n is None:
        n = len(values) - lo
    return 0.0 + _pairwise(values, lo, n)


def _pairwise(a: Sequence[float], lo: int, n: int) -> float:
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= 128:
        r0, r1, r2, r3, r4, r5, r6, r7 = a[lo:lo + 8]
        end = lo + n - n % 8
        for b in range(lo + 8, end, 8):
            r0 += a[b]
            r1 += a[b + 1]
            r2 += a[b + 2]
            r3 += a[b + 3]
            r4 += a[b + 4]
            r5 += a[b + 5]
            r6 += a[b + 6]
            r7 += a[b + 7]
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        for i in range(end, lo + n):
            res += a[i]
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise(a, lo, n2) + _pairwise(a, lo + n2, n - n2)


def _max(values: Sequence[float]) -> float:
    """``max(values)`` (non-empty), NaN when one is NaN (as numpy's ``max``)."""
    m = max(values)
    if m != m or any(v != v for v in values):
        return float("nan")
    return m


def busy_host_seconds(starting: Iterable[float], execution: Iterable[float], hosts: Iterable[Iterable[int]]) -> float:
    """Host-seconds during which at least one job ran (s): for each host the length of the union
    of the intervals ``[start, start + execution)`` of the jobs on it, summed over the hosts.

    Without compute sharing a host runs one job at a time and this is the sum of ``res x
    execution``; with it (Batsim's ``--enable-compute-sharing``) jobs may overlap on a host, whose
    busy time is then counted once (the sum would exceed the hosts' time: a utilisation above 1).

    Args:
        starting, execution: each executed job's start and execution time (s).
        hosts: each job's host ids (an iterable of ints, e.g. a ProcSet or
            :func:`parse_hosts` of ``allocated_resources``).
    """
    per_host: dict[int, list[tuple[float, float]]] = {}
    for start, run, on in zip(starting, execution, hosts):
        for h in on:
            per_host.setdefault(h, []).append((start, start + run))
    total: list[float] = []
    for spans in per_host.values():
        spans.sort()
        lo, hi = spans[0]
        for a, b in spans[1:]:
            if a > hi:
                total.append(hi - lo)
                lo, hi = a, b
            elif b > hi:
                hi = b
        total.append(hi - lo)
    return math.fsum(total)


def parse_hosts(text: str) -> list[int]:
    """The host ids of Batsim's interval set ``text`` (``allocated_resources``: ``"0-3 5"``)."""
    out: list[int] = []
    for part in text.split():
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def summarize_columns(final_state: Sequence[str], submission: Sequence[float], starting: Sequence[float],
                      execution: Sequence[float], finish: Sequence[float], res: Sequence[float], nb_hosts: int,
                      energy_joules: float | None = None, tau: float = BSLD_TAU,
                      busy: float | None = None) -> RunSummary:
    """Summarise the columns of an ``out_jobs.csv`` table (one value per job, same order).

    Args:
        final_state: Batsim's ``final_state`` (``COMPLETED_SUCCESSFULLY``, ``COMPLETED_KILLED``,
            ``COMPLETED_WALLTIME_REACHED``, ``REJECTED``).
        submission, starting, execution, finish: times (s); ignored for rejected jobs.
        res: requested number of resources (hosts).
        nb_hosts: number of compute hosts (for utilisation).
        energy_joules: Batsim's ``consumed_joules`` of out_schedule.csv (J, from the first job
            submission to the last job end), None without energy; ignored when no job ran
            (every job rejected: Batsim's value then measures no span, :class:`RunSummary`).
        tau: bounded-slowdown threshold (s).
        busy: the hosts' busy time (host-s, :func:`busy_host_seconds`) under compute sharing,
            where jobs may overlap on a host; None: the sum of ``res x execution`` (exact when a
            host runs one job at a time).

    Raises:
        ValueError: ``nb_hosts`` < 1 or columns of different lengths.
    """
    if nb_hosts < 1:
        raise ValueError("nb_hosts must be >= 1")
    state = final_state if isinstance(final_state, list) else list(final_state)
    # columns as arrays of doubles (8 bytes a value: a million-job summary stays small)
    cols = [c if isinstance(c, array) and c.typecode == "d" else array("d", map(float, c))
            for c in (submission, starting, execution, finish, res)]
    if any(len(c) != len(state) for c in cols):
        raise ValueError("out_jobs columns of different lengths")
    executed = [st != "REJECTED" for st in state]
    if all(executed):
        sub, start, run, fin, req = cols
    else:
        sub, start, run, fin, req = (array("d", compress(c, executed)) for c in cols)
    n_ex = len(sub)
    wait = array("d", map(sub_, start, sub))
    # np.maximum propagates NaN: ``x if not x < y else y`` does too
    bsld = array("d")
    for w, r in zip(wait, run):
        b = (w + r) / (r if not r < tau else tau)
        bsld.append(b if not b < 1.0 else 1.0)
    makespan = _max(fin) if n_ex else 0.0
    area = pairwise_sum(array("d", map(mul, req, run)))
    return RunSummary(
        jobs=len(state),
        success=sum(1 for st in state if st == "COMPLETED_SUCCESSFULLY"),
        killed=sum(1 for st in state if st in ("COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED")),
        rejected=len(state) - n_ex,
        makespan=makespan,
        mean_waiting_time=pairwise_sum(wait) / n_ex if n_ex else None,
        mean_bounded_slowdown=pairwise_sum(bsld) / n_ex if n_ex else None,
        max_waiting_time=_max(wait) if n_ex else None,
        utilisation=(area if busy is None else busy) / (nb_hosts * makespan) if makespan > 0 else 0.0,
        energy_joules=energy_joules if n_ex else None,
        energy_kwh=None if energy_joules is None or not n_ex else energy_joules / JOULES_PER_KWH,
        energy_unmeasured=energy_joules is not None and not n_ex,
    )


def summarize_jobs(jobs: pd.DataFrame, nb_hosts: int, energy_joules: float | None = None,
                   tau: float = BSLD_TAU) -> RunSummary:
    """Summarise an ``out_jobs.csv`` table (see :func:`summarize_columns`).

    Raises:
        ValueError: ``nb_hosts`` < 1 or columns missing.
    """
    need = ["final_state", "submission_time", "starting_time", "execution_time", "finish_time",
            "requested_number_of_resources"]
    missing = set(need) - set(jobs.columns)
    if missing:
        raise ValueError(f"out_jobs table lacks columns {sorted(missing)}")
    state = jobs["final_state"].tolist()
    cols = [jobs[c].to_numpy(dtype=float, na_value=0.0) for c in need[1:]]
    submission, starting, execution, finish, res = cols
    return summarize_columns(state, submission, starting, execution, finish, res, nb_hosts=nb_hosts,
                             energy_joules=energy_joules, tau=tau)


def summarize_outputs(prefix: str | Path, nb_hosts: int | None = None, compute_sharing: bool = False) -> RunSummary:
    """Summarise the files ``PREFIXjobs.csv`` and ``PREFIXschedule.csv`` of a run;
    ``compute_sharing``: the run had it (the utilisation then counts each host's busy time once,
    from ``allocated_resources``: :func:`busy_host_seconds`).

    Raises:
        FileNotFoundError: the jobs file is missing.
    """
    prefix = str(prefix)
    need = ("final_state", "submission_time", "starting_time", "execution_time", "finish_time",
            "requested_number_of_resources")
    with open(prefix + "jobs.csv", newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, [])
        missing = set(need) - set(header)
        if missing:
            raise ValueError(f"out_jobs table lacks columns {sorted(missing)}")
        idx = [header.index(c) for c in need]
        alloc = header.index("allocated_resources") if compute_sharing and "allocated_resources" in header else None
        state: list[str] = []
        states: dict[str, str] = {}  # one string per final state, not one per job
        cols = [array("d") for _ in range(5)]
        spans: list[tuple[float, float, list[int]]] = []   # (start, execution, hosts) of executed jobs
        for row in reader:
            st = row[idx[0]]
            state.append(states.setdefault(st, st))
            for col, k in zip(cols, idx[1:]):
                v = row[k]
                col.append(float(v) if v else 0.0)  # rejected jobs: empty times (pandas' NaN -> 0.0)
            if alloc is not None and st != "REJECTED" and row[alloc]:
                spans.append((cols[1][-1], cols[2][-1], parse_hosts(row[alloc])))
    energy = None
    sched_path = Path(prefix + "schedule.csv")
    if sched_path.exists():
        with open(sched_path, newline="", encoding="utf-8") as f:
            sched = next(csv.DictReader(f))
        if nb_hosts is None:
            nb_hosts = int(float(sched["nb_computing_machines"]))
        if Path(prefix + "consumed_energy.csv").exists():
            energy = float(sched["consumed_joules"])
    if nb_hosts is None:
        raise ValueError(f"{prefix}schedule.csv is missing: give nb_hosts")
    submission, starting, execution, finish, res = cols
    busy = busy_host_seconds(*zip(*spans)) if spans else (0.0 if alloc is not None else None)
    return summarize_columns(state, submission, starting, execution, finish, res, nb_hosts=nb_hosts,
                             energy_joules=energy, busy=busy)


def _count(n: int | None, word: str) -> str:
    """``n`` and ``word``, plural but for 1: ``1 restart``, ``0 restarts``, ``2,000 restarts``."""
    n = n or 0
    return f"{n:,} {word}{'' if n == 1 else 's'}"
