"""The embedded Batsim-compatible engine: Batsim's side of the protocol, in Python.

Semantics follow real Batsim 4.2.1 + SimGrid 3.32 for compute-only workloads, as recorded in
``shared/batsim-4.2.1`` (transcripts and output files):

Execution
    ``delay`` profiles sleep (the hosts stay at idle power). Computing profiles run as SimGrid
    parallel tasks: on each allocated host ``h`` a part of ``f_h`` flops runs on one core; all
    parts progress in lockstep at rate ``r = min_h speed_h / f_h`` (fraction of the task per
    second), so the slowest host sets the pace and host ``h`` carries a load of
    ``f_h * r / speed_h`` cores. ``parallel_homogeneous``: ``f_h = cpu``;
    ``parallel_homogeneous_total``: ``f_h = cpu / res``; ``parallel``: ``f_h = cpu[i]``;
    ``composed``: the sub-profiles one after the other, ``repeat`` times. Communications cost
    nothing (``*_no_net*`` platforms); on platforms with links they are refused at load time.
    A task of zero flops lasts 0 s, and Batsim then records an execution time of 1e-5 s in
    ``out_jobs.csv`` (``run3``: ``homo_no_cpu``). With compute sharing, parts sharing a host get
    max-min fair shares of its ``cores x speed`` (each part at most one core).
Walltime
    A job is killed at ``start + walltime`` (``COMPLETED_WALLTIME_REACHED``, return code -1); a
    delay equal to the walltime is killed (Batsim compares ``delay < remaining``), a computation
    ending exactly at the walltime succeeds.
Energy
    SimGrid host-energy model (see :mod:`schedulers.engine.platform`); sleeping goes through the
    virtual pstates of ``sleep_pstates`` where 1 flop is computed (so a switch lasts
    ``1 / speed`` s at that pstate's AllCores... power, one core busy).
Protocol timing
    Batsim sends a message when the scheduler is ready *and* its server mailbox is empty. Events
    whose simulated actors wake at the same instant reach the server together and are sent in one
    message, ordered by when their timers were armed; a submitter's "bye" (which becomes NOTIFY
    ``no_more_static_job_to_submit``) joins them only when other messages were still being
    handled; simultaneous ends of separate switch requests are delivered one message each. This
    reproduces every message grouping of the four recorded transcripts; it is an observed model,
    not SimGrid's scheduler. Event times are rounded to 1e-9 s so that instants reached along
    different floating-point paths coincide (Batsim writes 6 decimals, so this is invisible).
"""

from __future__ import annotations

import heapq
import math
import time as _time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from procset import ProcSet

from ..core.events import (
    Answer, CallMeLater, Decision, Event, ExecuteJob, GenericDecision, JobCompleted, JobKilled,
    JobSubmitted, KillJobs, Notify, NotifyBatsim, Query, RejectJob, RequestedCall,
    ResourceStateChanged, SetResourceState, SimulationBegins, SimulationEnds,
)
from ..core.model import Host, HostState, Job
from .platform import HostSpec, PlatformSpec
from .workload import EngineJob, Workload

# machine states, as Batsim counts them in out_machine_states.csv
SLEEPING, SWITCHING_ON, SWITCHING_OFF, IDLE, COMPUTING = range(5)
_STATE_NAMES = ("sleeping", "switching_on", "switching_off", "idle", "computing")

# heap entry kinds
_SUBMIT, _JOB_END, _SWITCH, _WAITER, _KILL, _BYE = range(6)

#: Batsim replaces a null execution time by this epsilon in out_jobs.csv (s).
NULL_RUNTIME_EPSILON = 1e-5


def execution_time(job: EngineJob) -> float:
    """The execution time Batsim reports for a finished job (s): its runtime, or
    :data:`NULL_RUNTIME_EPSILON` when the job took no time."""
    return job.runtime if job.runtime > 0 else NULL_RUNTIME_EPSILON


class EngineError(RuntimeError):
    """The simulation cannot go on: invalid decision, deadlock, unsupported feature."""


class SchedulerPort(Protocol):
    """How the engine talks to a scheduler: one call per Batsim message."""

    def exchange(self, now: float, events: list[Event]) -> list[Decision]:
        """Send the events of one message, return the scheduler's decisions."""
        ...


class InProcessPort:
    """Call a :class:`~schedulers.core.policy.Policy` directly (the fast path)."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy

    def exchange(self, now: float, events: list[Event]) -> list[Decision]:
        return self.policy.decide(now, events)


@dataclass(slots=True)
class HostRun:
    """Run-time state of one compute host."""

    spec: HostSpec
    pstate: int
    state: int = IDLE
    state_since: float = 0.0
    jobs: set = field(default_factory=set)
    load: float = 0.0
    power: float = 0.0
    energy: float = 0.0
    last: float = 0.0


@dataclass(slots=True)
class _Switch:
    hosts: list[int]
    target: int
    remaining: int
    done_at: dict = field(default_factory=dict)


@dataclass
class EngineResult:
    """What a run produced (also written to files when an export prefix is given).

    Attributes:
        jobs: every job (EngineJob) in completion/rejection order.
        makespan: finish time of the last job (s).
        consumed_joules: energy of all compute hosts at the end (J), 0 without energy.
        schedule: the out_schedule.csv row as a dict.
        rows: lists of output rows (``jobs``, ``machine_states``, ``energy``, ``pstates``).
        messages: number of Batsim messages sent to the scheduler.
    """

    jobs: list[EngineJob]
    makespan: float
    consumed_joules: float
    schedule: dict[str, Any]
    rows: dict[str, list]
    messages: int
    end_time: float


class Engine:
    """Simulate workloads on a platform, driving a scheduler through a :class:`SchedulerPort`.

    Args:
        platform: the platform read by :func:`schedulers.engine.platform.read_platform`.
        workloads: workloads read by :func:`schedulers.engine.workload.load_workload` (w0, w1...).
        energy: Batsim's ``-E`` (energy model, pstate switches, energy outputs).
        compute_sharing: Batsim's ``--enable-compute-sharing``.
        forward_profiles: Batsim's ``--forward-profiles-on-submission``.
        trace_outputs: keep the output rows (needed to write files).
        progress: called as ``progress(now, nb_finished, nb_jobs)`` after each message.

    Raises:
        EngineError: during :meth:`run`, on invalid decisions or deadlocks.
    """

    def __init__(self, platform: PlatformSpec, workloads: list[Workload], *, energy: bool = False,
                 compute_sharing: bool = False, forward_profiles: bool = False,
                 trace_outputs: bool = True, progress: Callable[[float, int, int], None] | None = None) -> None:
        self.platform = platform
        self.workloads = workloads
        self.energy = energy
        self.sharing = compute_sharing
        self.forward_profiles = forward_profiles
        self.trace = trace_outputs
        self.progress = progress
        if energy and not platform.has_energy:
            missing = [h.name for h in platform.compute if h.power is None][:5]
            raise EngineError(f"{platform.source}: energy (-E) needs 'wattage_per_state' on every compute "
                              f"host; missing on {', '.join(missing)}")
        self.hosts = [HostRun(spec=h, pstate=h.pstate) for h in platform.compute]
        self.workloads_by_name = {w.name: w for w in workloads}
        self.jobs: dict[str, EngineJob] = {}
        for w in workloads:
            for j in w.jobs:
                self.jobs[j.id] = j
        self.nb_jobs = len(self.jobs)
        self.now = 0.0
        self._heap: list = []
        self._seq = 0
        self._buffer: list[Event] = []
        self._finished_jobs = 0
        self._running = 0
        self._switching = 0
        self._waiters = 0
        self._killers = 0
        self._submitters_left = 0
        self._messages = 0
        self._sched_time = 0.0
        self._ended = False
        # energy aggregates
        self._p_total = 0.0
        self._e_acc = 0.0
        self._e_last = 0.0
        self._wattmin = 0.0
        # machine states
        self._counts = [0, 0, 0, len(self.hosts), 0]
        self._time_in = [0.0] * 5
        self._nb_grouped_switches = 0
        self._nb_machine_switches = 0
        # outputs
        self.rows: dict[str, list] = {"jobs": [], "machine_states": [], "energy": [], "pstates": []}
        self._done_jobs: list[EngineJob] = []
        self._last_energy_row: tuple[float, float] | None = None
        for h in self.hosts:
            if h.spec.sleep_pstates and h.pstate == h.spec.sleep_pstates[0]:
                h.state = SLEEPING
                self._counts[IDLE] -= 1
                self._counts[SLEEPING] += 1
            if energy:
                h.power = self._host_power(h)
                self._p_total += h.power
                self._wattmin += h.spec.power[h.pstate].idle

    # ------------------------------------------------------------------------------ helpers
    def _push(self, t: float, kind: int, payload: Any) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t, self._seq, kind, payload))

    def _host_power(self, h: HostRun) -> float:
        return h.spec.power[h.pstate].power(h.load, h.spec.cores)

    def _host_energy(self, h: HostRun, t: float) -> float:
        return h.energy + h.power * (t - h.last)

    def total_energy(self, t: float | None = None) -> float:
        """Energy consumed by all compute hosts since time 0 (J) — Batsim's ``consumed_energy``."""
        t = self.now if t is None else t
        return self._e_acc + self._p_total * (t - self._e_last)

    def _set_power(self, h: HostRun) -> None:
        """Re-evaluate the power of ``h`` after its load or pstate changed."""
        if not self.energy:
            return
        t = self.now
        new = self._host_power(h)
        if new != h.power:
            h.energy += h.power * (t - h.last)
            h.last = t
            self._e_acc += self._p_total * (t - self._e_last)
            self._e_last = t
            self._p_total += new - h.power
            h.power = new
        else:
            h.energy += h.power * (t - h.last)
            h.last = t

    def _set_pstate(self, h: HostRun, pstate: int) -> None:
        if self.energy:
            self._wattmin += h.spec.power[pstate].idle - h.spec.power[h.pstate].idle
        h.pstate = pstate
        self._set_power(h)

    def _set_state(self, h: HostRun, state: int) -> None:
        if h.state == state:
            return
        self._time_in[h.state] += self.now - h.state_since
        self._counts[h.state] -= 1
        self._counts[state] += 1
        h.state = state
        h.state_since = self.now

    def _machine_row(self) -> None:
        if self.trace:
            c = self._counts
            self.rows["machine_states"].append((self.now, c[SLEEPING], c[SWITCHING_ON], c[SWITCHING_OFF],
                                                c[IDLE], c[COMPUTING]))

    def _energy_row(self, kind: str) -> None:
        if not (self.trace and self.energy):
            return
        e = self.total_energy()
        last = self._last_energy_row
        epower = None
        if last is not None and self.now > last[0]:
            epower = (e - last[1]) / (self.now - last[0])
        self.rows["energy"].append((self.now, e, kind, self._wattmin, epower))
        self._last_energy_row = (self.now, e)

    # ------------------------------------------------------------------------- job execution
    def _stage_flops(self, job: EngineJob, prof: dict) -> list[float]:
        t = prof["type"]
        n = len(job.hosts)
        if t == "parallel_homogeneous":
            return [float(prof["cpu"])] * n
        if t == "parallel_homogeneous_total":
            return [float(prof["cpu"]) / n] * n
        return [float(x) for x in prof["cpu"]]

    def _start_stage(self, job: EngineJob) -> None:
        """Start the current stage of ``job`` at ``now`` and arm its end timer."""
        name, prof = job.stages[job.stage]
        job.stage_start = self.now
        job.version += 1
        if prof["type"] == "delay":
            had_load = bool(job.flops)
            job.flops = []
            job.rate = 0.0
            if had_load:  # a computing stage just ended: the hosts go back to idle power
                if self.sharing:
                    self._resolve_sharing()
                else:
                    for hid in job.hosts:
                        self.hosts[hid].load = 0.0
                        self._set_power(self.hosts[hid])
            end = round(self.now + float(prof["delay"]), 9)
            # Batsim: the delay completes only if strictly shorter than the remaining walltime.
            if end >= job.kill_time:
                self._push(job.kill_time, _JOB_END, (job, job.version, True))
            else:
                self._push(end, _JOB_END, (job, job.version, False))
            return
        job.flops = self._stage_flops(job, prof)
        job.remaining = 1.0
        if self.sharing:
            self._resolve_sharing()
        else:
            self._set_rate(job)
            self._arm_compute_end(job)

    def _set_rate(self, job: EngineJob) -> None:
        hosts = self.hosts
        rate = math.inf
        for hid, f in zip(job.hosts, job.flops):
            if f > 0:
                s = hosts[hid].spec.speeds[hosts[hid].pstate]
                r = s / f if s > 0 else 0.0
                if r < rate:
                    rate = r
        job.rate = rate
        for hid, f in zip(job.hosts, job.flops):
            h = hosts[hid]
            s = h.spec.speeds[h.pstate]
            h.load = (f * rate / s) if (f > 0 and s > 0 and rate != math.inf) else 0.0
            self._set_power(h)

    def _arm_compute_end(self, job: EngineJob) -> None:
        job.version += 1
        if job.rate == math.inf or job.remaining <= 0:
            end = self.now
        elif job.rate <= 0:
            end = math.inf
        else:
            end = self.now + job.remaining / job.rate
        end = round(end, 9) if end != math.inf else end
        if end > job.kill_time:
            self._push(job.kill_time, _JOB_END, (job, job.version, True))
        elif end != math.inf:
            self._push(end, _JOB_END, (job, job.version, False))

    def _progress_compute(self, job: EngineJob) -> None:
        """Account the work done since the last rate change (compute stages only)."""
        if job.flops and job.rate not in (0.0, math.inf):
            job.remaining = max(0.0, job.remaining - job.rate * (self.now - job.stage_start))
        job.stage_start = self.now

    def _resolve_sharing(self) -> None:
        """Max-min fair rates of all running compute stages (compute sharing)."""
        active = [j for j in self.jobs.values() if j.state == "RUNNING" and j.flops]
        for j in active:
            self._progress_compute(j)
        # progressive filling
        cap = {}
        for j in active:
            for hid, f in zip(j.hosts, j.flops):
                if f > 0 and hid not in cap:
                    h = self.hosts[hid]
                    cap[hid] = h.spec.cores * h.spec.speeds[h.pstate]
        rates: dict[int, float] = {}
        bound = {}
        for j in active:
            b = math.inf
            for hid, f in zip(j.hosts, j.flops):
                if f > 0:
                    s = self.hosts[hid].spec.speeds[self.hosts[hid].pstate]
                    b = min(b, s / f if s > 0 else 0.0)
            bound[id(j)] = b
        unfrozen = [j for j in active if bound[id(j)] != math.inf]
        for j in active:
            if bound[id(j)] == math.inf:
                rates[id(j)] = math.inf
        used = {hid: 0.0 for hid in cap}
        level = 0.0
        while unfrozen:
            # the next level at which a host saturates or a job hits its one-core bound
            best = min(bound[id(j)] for j in unfrozen)
            for hid in cap:
                coef = sum(f for j in unfrozen for h2, f in zip(j.hosts, j.flops) if h2 == hid and f > 0)
                if coef > 0:
                    lvl = level + (cap[hid] - used[hid]) / coef
                    best = min(best, lvl)
            inc = best - level
            for hid in cap:
                used[hid] += inc * sum(f for j in unfrozen for h2, f in zip(j.hosts, j.flops) if h2 == hid and f > 0)
            level = best
            saturated = {hid for hid in cap if used[hid] >= cap[hid] * (1 - 1e-12)}
            still = []
            for j in unfrozen:
                if bound[id(j)] <= level * (1 + 1e-12) or any(h in saturated for h, f in zip(j.hosts, j.flops) if f > 0):
                    rates[id(j)] = level
                else:
                    still.append(j)
            unfrozen = still
        loads: dict[int, float] = {}
        for j in active:
            j.rate = rates[id(j)]
            for hid, f in zip(j.hosts, j.flops):
                s = self.hosts[hid].spec.speeds[self.hosts[hid].pstate]
                if f > 0 and s > 0 and j.rate != math.inf:
                    loads[hid] = loads.get(hid, 0.0) + f * j.rate / s
        touched = {hid for j in active for hid in j.hosts}
        for hid in touched | {i for i, h in enumerate(self.hosts) if h.load > 0}:
            h = self.hosts[hid]
            h.load = loads.get(hid, 0.0)
            self._set_power(h)
        for j in active:
            self._arm_compute_end(j)

    def _job_progress(self, job: EngineJob) -> dict[str, Any]:
        name, prof = job.stages[job.stage]
        if prof["type"] == "delay":
            d = float(prof["delay"])
            prog = (self.now - job.stage_start) / d if d > 0 else 1.0
        else:
            self._progress_compute(job)
            prog = 1.0 - job.remaining
        leaf = {"profile_name": name, "progress": prog}
        top = self.workloads_by_name[job.workload].profiles[job.profile]
        if top["type"] in ("composed", "sequence"):
            return {"profile_name": job.profile, "current_task_index": job.stage, "current_task": leaf}
        return leaf

    def _end_job(self, job: EngineJob, state: str, code: int) -> None:
        """Free the hosts of ``job`` and record its completion at ``now``."""
        job.state = state
        job.return_code = code
        job.finish = self.now
        job.runtime = self.now - job.start
        job.version += 1
        job.flops = []
        self._running -= 1
        self._finished_jobs += 1
        energy = 0.0
        with_energy = self.energy
        all_hosts = self.hosts
        for hid in job.hosts:
            h = all_hosts[hid]
            h.jobs.discard(job.id)
            if with_energy:
                if not self.sharing:
                    h.load = 0.0
                self._set_power(h)
                energy += h.energy
            if not h.jobs and h.state == COMPUTING:
                self._set_state(h, IDLE)
        if self.sharing:
            self._resolve_sharing()
            if self.energy:
                energy = sum(self.hosts[hid].energy for hid in job.hosts)
        job.energy = (energy - job.energy_start) if self.energy else -1.0
        self._machine_row()
        self._energy_row("e")
        self._done_jobs.append(job)

    # --------------------------------------------------------------------------- the server
    def _handle(self, kind: int, payload: Any) -> list:
        """Handle one message reaching Batsim's server; return follow-up messages."""
        t = self.now
        if kind == _SUBMIT:
            w, start = payload
            jobs = w.jobs
            k = start
            sub = jobs[start].subtime
            while k < len(jobs) and jobs[k].subtime == sub:
                j = jobs[k]
                j.state = "SUBMITTED"
                prof = w.profiles[j.profile] if self.forward_profiles else None
                self._buffer.append(JobSubmitted(t, job=Job.from_json(j.id, j.raw, prof)))
                k += 1
            if k < len(jobs):
                self._push(round(jobs[k].subtime, 9) if jobs[k].subtime > t else t, _SUBMIT, (w, k))
                return []
            return [(_BYE, w)]
        if kind == _BYE:
            self._submitters_left -= 1
            if self._submitters_left == 0:
                self._buffer.append(Notify(t, type="no_more_static_job_to_submit"))
            return []
        if kind == _JOB_END:
            job, version, walltime = payload
            if version != job.version or job.state != "RUNNING":
                return []
            if walltime:
                self._end_job(job, "COMPLETED_WALLTIME_REACHED", -1)
            else:
                self._progress_compute(job)
                if job.stage + 1 < len(job.stages):
                    job.stage += 1
                    self._start_stage(job)
                    return []
                self._end_job(job, "COMPLETED_SUCCESSFULLY", 0)
            self._buffer.append(JobCompleted(t, job_id=job.id, job_state=job.state,
                                             return_code=job.return_code, alloc=job.alloc))
            self._write_job_row(job)
            return []
        if kind == _SWITCH:
            sw, hid = payload
            h = self.hosts[hid]
            self._switching -= 1
            self._set_pstate(h, sw.target)
            h.load = 0.0
            self._set_power(h)
            sp = h.spec.sleep_pstates
            self._set_state(h, SLEEPING if sp and sw.target == sp[0] else IDLE)
            sw.remaining -= 1
            if sw.remaining == 0:
                self._machine_row()
                self._switch_group_done(sw)
            return []
        if kind == _WAITER:
            self._waiters -= 1
            self._buffer.append(RequestedCall(t))
            return []
        if kind == _KILL:
            ids, really = payload
            self._killers -= 1
            progress = {}
            for job in really:
                if job.state != "RUNNING":
                    continue
                progress[job.id] = self._job_progress(job)
                self._end_job(job, "COMPLETED_KILLED", -2)
                self._buffer.append(JobCompleted(t, job_id=job.id, job_state=job.state,
                                                 return_code=job.return_code, alloc=job.alloc))
                self._write_job_row(job)
            self._buffer.append(JobKilled(t, job_ids=list(ids), job_progress=progress))
            return []
        raise AssertionError(kind)

    def _write_job_row(self, job: EngineJob) -> None:
        if self.trace:
            self.rows["jobs"].append(job)

    # ------------------------------------------------------------------------- decisions
    def _apply(self, decisions: list[Decision]) -> None:
        for d in decisions:
            if d.timestamp is not None and d.timestamp > self.now + 1e-6:
                raise EngineError(f"decision {type(d).__name__} has timestamp {d.timestamp} > now {self.now}")
            if isinstance(d, ExecuteJob):
                self._execute(d)
            elif isinstance(d, RejectJob):
                job = self._job(d.job_id, "REJECT_JOB")
                if job.state != "SUBMITTED":
                    raise EngineError(f"REJECT_JOB {job.id} at t={self.now}: the job is {job.state}, not waiting")
                job.state = "REJECTED"
                job.finish = self.now
                self._finished_jobs += 1
                self._done_jobs.append(job)
                self._write_job_row(job)
            elif isinstance(d, KillJobs):
                really = []
                for jid in d.job_ids:
                    job = self._job(jid, "KILL_JOB")
                    if job.state == "RUNNING":
                        really.append(job)
                self._killers += 1
                self._push(self.now, _KILL, (list(d.job_ids), really))
            elif isinstance(d, CallMeLater):
                self._waiters += 1
                self._push(max(round(d.at, 9), self.now), _WAITER, None)
            elif isinstance(d, SetResourceState):
                self._set_resource_state(d)
            elif isinstance(d, Query):
                for key in d.requests:
                    if key != "consumed_energy":
                        raise EngineError(f"QUERY {key!r} is not supported by the embedded engine "
                                          "(only consumed_energy)")
                    if not self.energy:
                        raise EngineError("QUERY consumed_energy needs the energy model (-E / --energy)")
                    self._buffer.append(Answer(self.now, data={"consumed_energy": self.total_energy()}))
            elif isinstance(d, NotifyBatsim):
                if d.type not in ("registration_finished", "continue_registration"):
                    raise EngineError(f"NOTIFY {d.type!r} from the scheduler is not supported by the engine")
            elif isinstance(d, GenericDecision):
                raise EngineError(f"decision {d.type!r} is not supported by the embedded engine; "
                                  "use real Batsim (--engine batsim)")
            else:
                raise EngineError(f"unsupported decision {d!r}")

    def _job(self, jid: str, what: str) -> EngineJob:
        job = self.jobs.get(jid)
        if job is None:
            raise EngineError(f"{what} at t={self.now}: unknown job {jid!r}")
        return job

    def _execute(self, d: ExecuteJob) -> None:
        job = self._job(d.job_id, "EXECUTE_JOB")
        if d.extra:
            raise EngineError(f"EXECUTE_JOB {job.id}: fields {sorted(d.extra)} (mapping, storage, IO jobs) "
                              "are not simulated by the embedded engine; use real Batsim")
        if job.state != "SUBMITTED":
            raise EngineError(f"EXECUTE_JOB {job.id} at t={self.now}: the job is {job.state}, not waiting")
        alloc = d.alloc
        hosts = tuple(alloc)
        if len(hosts) != job.res:
            raise EngineError(f"EXECUTE_JOB {job.id} at t={self.now}: allocation {alloc} has {len(hosts)} "
                              f"hosts but the job requests {job.res}")
        all_hosts = self.hosts
        nb_hosts = len(all_hosts)
        for hid in hosts:
            if not 0 <= hid < nb_hosts:
                raise EngineError(f"EXECUTE_JOB {job.id}: host {hid} does not exist "
                                  f"(platform has {nb_hosts} compute hosts)")
            h = all_hosts[hid]
            if h.state not in (IDLE, COMPUTING):
                raise EngineError(f"EXECUTE_JOB {job.id} at t={self.now}: host {hid} ({h.spec.name}) is "
                                  f"{_STATE_NAMES[h.state]}")
            if h.jobs and not self.sharing:
                raise EngineError(f"EXECUTE_JOB {job.id} at t={self.now}: host {hid} ({h.spec.name}) already "
                                  f"runs {sorted(h.jobs)} and compute sharing is disabled")
        now = self.now
        job.state = "RUNNING"
        job.start = now
        job.alloc = alloc
        job.hosts = hosts
        job.stage = 0
        job.kill_time = round(now + job.walltime, 9) if job.walltime > 0 else math.inf
        self._running += 1
        e0 = 0.0
        energy = self.energy
        for hid in hosts:
            h = all_hosts[hid]
            h.jobs.add(job.id)
            if h.state != COMPUTING:
                self._set_state(h, COMPUTING)
            if energy:
                e0 += h.energy + h.power * (now - h.last)  # _host_energy(h, now)
        job.energy_start = e0
        self._machine_row()
        self._energy_row("s")
        self._start_stage(job)

    def _set_resource_state(self, d: SetResourceState) -> None:
        if not self.energy:
            raise EngineError("SET_RESOURCE_STATE needs the energy model (-E / --energy), as in Batsim")
        try:
            target = int(d.state)
        except ValueError:
            raise EngineError(f"SET_RESOURCE_STATE: state {d.state!r} is not a pstate number") from None
        hids = list(d.resources)
        if not hids:
            return
        for hid in hids:
            if not 0 <= hid < len(self.hosts):
                raise EngineError(f"SET_RESOURCE_STATE: host {hid} does not exist")
            if not 0 <= target < len(self.hosts[hid].spec.speeds):
                raise EngineError(f"SET_RESOURCE_STATE: host {hid} ({self.hosts[hid].spec.name}) has no pstate {target}")
        first = self.hosts[hids[0]]
        sp = first.spec.sleep_pstates
        to_sleep = bool(sp and target == sp[0])
        self._nb_grouped_switches += 1
        self._nb_machine_switches += len(hids)
        self._energy_row("p")
        if self.trace:  # Batsim: a transition row (-2 towards sleep, -1 towards computation) for the request
            self.rows["pstates"].append((self.now, str(ProcSet(*hids)), -2 if to_sleep else -1))
        # one group per request: RESOURCE_STATE_CHANGED when all its machines are done
        sw = _Switch(hosts=hids, target=target, remaining=len(hids))
        dvfs = False
        for hid in hids:
            h = self.hosts[hid]
            sp = h.spec.sleep_pstates
            cur_sleep = bool(sp and h.pstate == sp[0])
            if sp and target in (sp[1], sp[2]):
                raise EngineError(f"SET_RESOURCE_STATE: pstate {target} of host {h.spec.name} is a virtual "
                                  "switching pstate; it cannot be requested")
            if h.state in (SWITCHING_ON, SWITCHING_OFF):
                raise EngineError(f"SET_RESOURCE_STATE at t={self.now}: host {h.spec.name} is already switching")
            if not cur_sleep and not to_sleep:
                # DVFS: computation -> computation, instantaneous; running computations change pace
                dvfs = True
                running = [self.jobs[jid] for jid in h.jobs] if not self.sharing else []
                for job in running:
                    self._progress_compute(job)
                self._set_pstate(h, target)
                for job in running:
                    if job.flops:
                        self._set_rate(job)
                        self._arm_compute_end(job)
                sw.remaining -= 1
                continue
            if cur_sleep and to_sleep:
                raise EngineError(f"SET_RESOURCE_STATE at t={self.now}: host {h.spec.name} is already asleep")
            if to_sleep and h.jobs:
                raise EngineError(f"SET_RESOURCE_STATE at t={self.now}: host {h.spec.name} runs jobs "
                                  f"{sorted(h.jobs)}; it cannot be switched off")
            virt = sp[1] if to_sleep else sp[2]
            self._set_state(h, SWITCHING_OFF if to_sleep else SWITCHING_ON)
            self._set_pstate(h, virt)
            h.load = 1.0   # the switch computes 1 flop on one core
            self._set_power(h)
            speed = h.spec.speeds[virt]
            if speed <= 0:
                raise EngineError(f"host {h.spec.name}: virtual pstate {virt} has speed 0; the switch never ends")
            self._switching += 1
            self._push(round(self.now + 1.0 / speed, 9), _SWITCH, (sw, hid))
        if dvfs and self.sharing:
            self._resolve_sharing()
        if sw.remaining == 0:
            self._switch_group_done(sw)
        self._machine_row()

    def _switch_group_done(self, sw: _Switch) -> None:
        """All machines of one SET_RESOURCE_STATE request reached their pstate."""
        res = ProcSet(*sw.hosts)
        self._energy_row("p")
        if self.trace:
            self.rows["pstates"].append((self.now, str(res), sw.target))
        self._buffer.append(ResourceStateChanged(self.now, resources=res, state=str(sw.target)))

    # ------------------------------------------------------------------------------- main loop
    def _finished(self) -> bool:
        return (self._submitters_left == 0 and self._running == 0 and self._switching == 0
                and self._waiters == 0 and self._killers == 0 and self._finished_jobs == self.nb_jobs)

    def _exchange(self, port: SchedulerPort) -> list[Decision]:
        events, self._buffer = self._buffer, []
        self._messages += 1
        t0 = _time.perf_counter()
        decisions = port.exchange(self.now, events)
        self._sched_time += _time.perf_counter() - t0
        return decisions

    def _send_loop(self, port: SchedulerPort, pending_byes: list) -> None:
        """Batsim's server check after a message: send while ready and there is something to send."""
        while True:
            if self._buffer:
                decisions = self._exchange(port)
                # messages posted before the reply's decisions reach the server first
                for kind, payload in pending_byes:
                    self._handle(kind, payload)
                pending_byes.clear()
                self._apply(decisions)
                continue
            if pending_byes:
                for kind, payload in pending_byes:
                    self._handle(kind, payload)
                pending_byes.clear()
                continue
            if self._finished() and not self._ended:
                self._buffer.append(SimulationEnds(self.now))
                self._exchange(port)
                self._ended = True
            return

    def _process_wave(self, entries: list, port: SchedulerPort) -> None:
        if len(entries) == 1:  # the common case: one message reaches the server alone
            _, _, kind, payload = entries[0]
            self._send_loop(port, self._handle(kind, payload))
            return
        mailbox: deque = deque()
        deferred_switches: deque = deque()
        switch_seen = False
        for _, _, kind, payload in entries:
            if kind == _SWITCH:
                if switch_seen:
                    deferred_switches.append((kind, payload))
                    continue
                switch_seen = True
            mailbox.append((kind, payload))
        while mailbox:
            kind, payload = mailbox.popleft()
            follow = self._handle(kind, payload)
            nxt_switch = [deferred_switches.popleft()] if (kind == _SWITCH and deferred_switches) else []
            if mailbox:
                mailbox.extend(follow)
                mailbox.extend(nxt_switch)
                continue
            self._send_loop(port, follow)
            mailbox.extend(nxt_switch)

    def run(self, port: SchedulerPort) -> EngineResult:
        """Run the simulation to its end.

        Raises:
            EngineError: invalid decision, or a deadlock (jobs left waiting with nothing scheduled).
        """
        wall0 = _time.perf_counter()
        if self.trace:
            by_ps: dict[int, list[int]] = {}
            for i, h in enumerate(self.hosts):
                by_ps.setdefault(h.pstate, []).append(i)
            for ps in sorted(by_ps):
                self.rows["pstates"].append((0.0, str(ProcSet(*by_ps[ps])), ps))
        # SIMULATION_BEGINS goes first, alone; the submitters start while it is in flight.
        self._buffer.append(self._simulation_begins())
        decisions = self._exchange(port)
        for w in self.workloads:
            self._submitters_left += 1
            if w.jobs:
                self._push(round(w.jobs[0].subtime, 9), _SUBMIT, (w, 0))
            else:  # an empty workload: its submitter says goodbye at once
                self._push(0.0, _BYE, w)
        pending = []
        while self._heap and self._heap[0][0] == 0.0:
            _, _, kind, payload = heapq.heappop(self._heap)
            pending.extend(self._handle(kind, payload))
        for kind, payload in pending:
            self._handle(kind, payload)
        self._apply(decisions)
        self._send_loop(port, [])
        nb_jobs = self.nb_jobs
        while not self._ended:
            if not self._heap:
                waiting = [j.id for j in self.jobs.values() if j.state == "SUBMITTED"][:10]
                asleep = self._counts[SLEEPING]
                hint = (f"; {asleep} of {len(self.hosts)} hosts are asleep and the policy never woke them"
                        if asleep else "")
                raise EngineError(
                    f"deadlock at t={self.now}: nothing left to simulate but the scheduler never executed or "
                    f"rejected {self.nb_jobs - self._finished_jobs} job(s) (e.g. {', '.join(waiting)}){hint}")
            t = self._heap[0][0]
            entries = []
            while self._heap and self._heap[0][0] == t:
                entries.append(heapq.heappop(self._heap))
            self.now = t
            self._process_wave(entries, port)
            if self.progress is not None:
                self.progress(self.now, self._finished_jobs, nb_jobs)
        # close the machine-state accounting like Batsim: the current period is not flushed
        return self._result(_time.perf_counter() - wall0)

    def _simulation_begins(self) -> SimulationBegins:
        hosts = []
        for i, h in enumerate(self.hosts):
            st = HostState.SLEEPING if h.state == SLEEPING else HostState.IDLE
            hosts.append(Host(id=i, name=h.spec.name, speeds=list(h.spec.speeds), cores=h.spec.cores,
                              properties=dict(h.spec.properties), zone_properties=dict(h.spec.zone_properties),
                              pstate=h.pstate, state=st))
        config = {
            "redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379,
            "redis-prefix": "default", "profiles-forwarded-on-submission": self.forward_profiles,
            "dynamic-jobs-enabled": False, "dynamic-jobs-acknowledged": False,
            "profile-reuse-enabled": False, "sched-config": "", "forward-unknown-events": False,
        }
        return SimulationBegins(
            0.0, nb_resources=len(hosts), nb_compute_resources=len(hosts), nb_storage_resources=0,
            allow_compute_sharing=self.sharing, allow_storage_sharing=True, config=config,
            compute_resources=hosts, storage_resources=[],
            workloads={w.name: w.path for w in self.workloads},
            profiles={w.name: w.profiles for w in self.workloads})

    def _result(self, wall: float) -> EngineResult:
        jobs = self._done_jobs
        n = len(jobs)
        executed = [j for j in jobs if j.state != "REJECTED"]
        ex = [execution_time(j) for j in executed]
        makespan = max((j.start + e for j, e in zip(executed, ex)), default=0.0)
        turn = [j.start + e - j.subtime for j, e in zip(executed, ex)]
        wait = [j.start - j.subtime for j in executed]
        slow = [t / e for t, e in zip(turn, ex)]
        success = sum(1 for j in jobs if j.state == "COMPLETED_SUCCESSFULLY")
        killed = sum(1 for j in jobs if j.state in ("COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED"))
        rejected = sum(1 for j in jobs if j.state == "REJECTED")
        consumed = self.total_energy(self.now) if self.energy else 0.0
        sched = {
            "batsim_version": "v4.2.1", "consumed_joules": consumed, "makespan": makespan,
            "max_slowdown": max(slow, default=0.0), "max_turnaround_time": max(turn, default=0.0),
            "max_waiting_time": max(wait, default=0.0),
            "mean_slowdown": sum(slow) / n if n else 0.0, "mean_turnaround_time": sum(turn) / n if n else 0.0,
            "mean_waiting_time": sum(wait) / n if n else 0.0,
            "nb_computing_machines": len(self.hosts), "nb_grouped_switches": self._nb_grouped_switches,
            "nb_jobs": n, "nb_jobs_finished": n - rejected, "nb_jobs_killed": killed,
            "nb_jobs_rejected": rejected, "nb_jobs_success": success,
            "nb_machine_switches": self._nb_machine_switches, "scheduling_time": self._sched_time,
            "simulation_time": wall, "success_rate": success / n if n else 0.0,
            "time_computing": self._time_in[COMPUTING], "time_idle": self._time_in[IDLE],
            "time_sleeping": self._time_in[SLEEPING], "time_switching_off": self._time_in[SWITCHING_OFF],
            "time_switching_on": self._time_in[SWITCHING_ON], "time_unavailable": 0.0,
        }
        return EngineResult(jobs=jobs, makespan=makespan, consumed_joules=consumed, schedule=sched,
                            rows=self.rows, messages=self._messages, end_time=self.now)
