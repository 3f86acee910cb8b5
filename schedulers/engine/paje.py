"""Batsim's Pajé schedule trace, ``PREFIXschedule.trace`` (Batsim 4.2.1 writes it unless
``--disable-schedule-tracing``).

What Batsim writes (``src/export.cpp``, ``PajeTracer``; called from ``src/machines.cpp`` and
``src/jobs_execution.cpp``):

* a fixed header (Pajé event definitions 1-10, container, event and variable types), then one
  container ``m<id>`` per machine (compute machines in id order, named by host) created at t = 0,
  every machine in state ``w`` (Waiting);
* at a job's start (``Machines::update_machines_on_job_run``), for each machine of its allocation
  in increasing id order: the machine's top job (the first of its running jobs, a
  ``std::set<JobPtr>`` ordered by the jobs' addresses) becomes that job when it changed; the first
  time a job is shown, its entity value ``5 j<id> machine_state "<id>" "<r g b>"`` is declared;
* at a job's end (``update_machines_on_job_end``): a machine left without job goes back to ``w``,
  one still running jobs shows its new top job when it changed. A job that reached its walltime,
  or that a KILL_JOB stopped in a parallel task (return code -2: Batsim cancels the task and the
  job's own actor traces it), first gets ``8 <t> kk k "<id>"`` and one ``8 <t> km m<id> "<id>"``
  per machine; a job killed during a ``delay`` (its actor is killed, ``killer_process``) gets none;
* at the end, every machine container then the root are destroyed at the final clock.

Times are ``%lf`` (6 decimals). Colours: the 64 hues of ``PajeTracer::generate_colors``
(HSV, s = v = 1, ``"%lf %lf %lf"``), given to jobs in the order they are first shown. Batsim
shuffles them with ``std::random_device`` (a different order at each run); the engine shuffles
them once with a fixed seed, so its file is the same from run to run and equal to Batsim's but
for the colour of each job. The top job under compute sharing is the first in Batsim's order
of the jobs' heap addresses: as recorded on Batsim 4.2.1 for one workload file, file order with
the second and third jobs swapped; the engine takes the workloads in order and registered jobs
after them, which Batsim's addresses need not follow (:meth:`~.jobs.JobBook.load_rank`,
``tests/fixtures/batsim_paje_sharing``).

Cost: 16 bytes per job start or end during the run (:class:`ScheduleTraceRows`); the lines are
made when the file is written.
"""

from __future__ import annotations

import math
import random
from array import array
from typing import Any, Iterator

from procset import ProcSet

#: Number of job colours Batsim makes (``PajeTracer`` constructor, ``generate_colors(64)``).
N_COLORS = 64

_HEADER = """\
%EventDef PajeDefineContainerType 1
% Type string
% Alias string
% Name string
%EndEventDef

%EventDef PajeCreateContainer 2
% Time date 
% Type string  
% Alias string 
% Name string   
% Container string  
%EndEventDef

%EventDef PajeDestroyContainer 3
% Time date
% Name string 
% Type string
%EndEventDef

%EventDef PajeDefineStateType 4
% Alias string 
% Type string 
% Name string 
%EndEventDef

%EventDef PajeDefineEntityValue 5
% Alias string  
% Type string  
% Name string  
% Color color 
%EndEventDef

%EventDef PajeSetState 6
% Time date  
% Type string  
% Container string  
% Value string  
%EndEventDef 

%EventDef PajeDefineEventType 7
% Type string
% Alias string
% Name string
%EndEventDef

%EventDef PajeNewEvent 8
% Time date
% Type string
% Container string
% Value string
%EndEventDef

%EventDef PajeDefineVariableType 9
% Type string
% Alias string
% Name string
% Color string
%EndEventDef

%EventDef PajeSetVariable 10
% Time date
% Type string
% Container string
% Value double
%EndEventDef

# Container types creation
1 0 root_ct "Machines"
1 root_ct machine_ct "Machine"
1 0 scheduler_ct "Scheduler"
1 scheduler_ct killer_ct "Killer"

# Event types creation
7 killer_ct kk "Job kill"
7 machine_ct km "Job kill"

# Variable types creation
9 scheduler_ct vu_vt "Utilization" "0.0 0.5 0.0"
"""

# event kinds (low 2 bits of a code; the job's start number above them, or for _AVAILABILITY the
# machine id and whether it became available)
_RUN, _END, _KILLED_END, _AVAILABILITY = 0, 1, 2, 3


def hsv_to_rgb(h: float, s: float, v: float) -> tuple[float, float, float]:
    """``PajeTracer::hsv_to_rgb``: ``h`` in degrees [0, 360), ``s`` and ``v`` in [0, 1]."""
    if s == 0:
        return v, v, v
    h /= 60
    i = math.floor(h)
    f = h - i
    p, q, t = v * (1 - s), v * (1 - s * f), v * (1 - s * (1 - f))
    return ((v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v))[i] if 0 <= i <= 4 else (v, p, q)


def job_colors(seed: int = 0) -> list[str]:
    """The 64 colours (``'"r g b"'``, ``%lf``) of ``PajeTracer::generate_colors(64)``, shuffled
    with ``random.Random(seed)`` (Batsim: ``std::shuffle`` with a ``std::random_device`` seed)."""
    out = []
    for i in range(N_COLORS):
        r, g, b = hsv_to_rgb(i * (360.0 / N_COLORS), 1.0, 1.0)
        out.append(f'"{r:f} {g:f} {b:f}"')
    random.Random(seed).shuffle(out)
    return out


class ScheduleTraceRows:
    """The job starts and ends of a run, in the order Batsim traces them, for
    ``PREFIXschedule.trace``: a time (s) and a code per event (16 bytes). Jobs are numbered in
    the order they start; the record of a started job is found at write time from its row in
    the finished jobs (:class:`~.results.DoneJobs`), or from the job itself if it never ended."""

    __slots__ = ("host_names", "_time", "_code", "_row", "_rank", "_open")

    def __init__(self, host_names: list[str]) -> None:
        self.host_names = host_names  # the machines by id
        self._time = array("d")
        self._code = array("q")
        self._row = array("q")    # per started job: its row in the finished jobs (-1: not ended)
        self._rank = array("q")   # per started job: its load order (the top job under sharing)
        self._open: dict[int, Any] = {}  # started jobs not ended yet, by start number

    def run(self, now: float, job: Any, rank: int) -> None:
        """``job`` (an :class:`~.workload.EngineJob`) starts at ``now`` on ``job.hosts``;
        ``rank`` orders the jobs sharing a machine (smaller: shown)."""
        n = len(self._row)
        job.trace_seq = n
        self._row.append(-1)
        self._rank.append(rank)
        self._open[n] = job
        self._time.append(now)
        self._code.append(n << 2 | _RUN)

    def end(self, now: float, job: Any, killed: bool) -> None:
        """``job`` ends at ``now``; ``killed``: Batsim traces a kill (walltime reached, or a
        parallel task cancelled by KILL_JOB)."""
        n = job.trace_seq
        self._time.append(now)
        self._code.append(n << 2 | (_KILLED_END if killed else _END))

    def availability(self, now: float, machines: Any, available: bool) -> None:
        """External events made ``machines`` (ids) unavailable or available again: Batsim does
        not trace it, but a machine left without job while unavailable is not shown waiting
        (``Machines::update_machines_on_job_end``, ``src/machines.cpp``)."""
        for m in machines:
            self._time.append(now)
            self._code.append((m << 1 | available) << 2 | _AVAILABILITY)

    def ended(self, job: Any) -> None:
        """``job`` has its row in the finished jobs now (``job.row``)."""
        n = job.trace_seq
        self._row[n] = job.row
        self._open.pop(n, None)

    def __len__(self) -> int:
        return len(self._time)

    def lines(self, done: Any, end_time: float, seed: int = 0) -> Iterator[str]:
        """The lines of the file (without line breaks): ``done`` the run's
        :class:`~.results.DoneJobs`, ``end_time`` the final clock (s)."""
        host_names = self.host_names
        yield _HEADER
        yield "# Containers creation"
        yield '2 0.000000 root_ct root "Machines" 0'
        for i, name in enumerate(host_names):
            yield f'2 0.000000 machine_ct m{i} "{name}" root'
        yield '2 0.000000 scheduler_ct sc "Scheduler" 0'
        yield '2 0.000000 killer_ct k "Killer" sc'
        yield ""
        yield "# States creation"
        yield '4 machine_state machine_ct "Machine state"'
        yield ""
        yield "# Creation of the different values the machine state can be"
        yield '5 w machine_state "Waiting" "0.0 0.0 0.0"'
        yield '5 l machine_state "Launching" "0.3 0.3 0.3"'
        yield ""
        yield "# Begin of events"
        for i in range(len(host_names)):
            yield f"6 0.000000 machine_state m{i} w"
        colors = job_colors(seed)
        shown: set[int] = set()
        on: dict[int, list[int]] = {}   # machine -> start numbers of its running jobs
        rank, rows = self._rank, self._row
        info: dict[int, tuple[str, list[int]]] = {}
        hosts_of: dict[str, list[int]] = {}   # allocation text -> machine ids (allocations repeat)

        def job(n: int) -> tuple[str, list[int]]:
            got = info.get(n)
            if got is None:
                row = rows[n]
                if row >= 0:
                    jid, text = done.id_and_alloc(row)
                    machines = hosts_of.get(text)
                    if machines is None:
                        machines = hosts_of[text] = list(ProcSet.from_str(text))
                    got = (jid, machines)
                else:
                    j = self._open[n]
                    got = (j.id, sorted(j.hosts))
                info[n] = got
            return got

        def top(jobs: list[int]) -> int:
            return min(jobs, key=rank.__getitem__)

        def show(t: str, m: int, n: int) -> Iterator[str]:
            jid = job(n)[0]
            if n not in shown:
                shown.add(n)
                yield f'5 j{jid} machine_state "{jid}" {colors[(len(shown) - 1) % N_COLORS]}'
            yield f"6 {t} machine_state m{m} j{jid}"

        unavailable: set[int] = set()
        for now, code in zip(self._time, self._code):
            n, kind = code >> 2, code & 3
            if kind == _AVAILABILITY:
                (unavailable.discard if n & 1 else unavailable.add)(n >> 1)
                continue
            t = f"{now:f}"
            jid, machines = job(n)
            if kind == _RUN:
                for m in machines:
                    running = on.get(m)
                    if not running:   # (the common case: a machine of one job at a time)
                        on[m] = [n]
                        if n not in shown:
                            shown.add(n)
                            yield f'5 j{jid} machine_state "{jid}" {colors[(len(shown) - 1) % N_COLORS]}'
                        yield f"6 {t} machine_state m{m} j{jid}"
                        continue
                    before = top(running)
                    running.append(n)
                    new = top(running)
                    if new != before:
                        yield from show(t, m, new)
                continue
            if kind == _KILLED_END:
                yield f'8 {t} kk k "{jid}"'
                for m in machines:
                    yield f'8 {t} km m{m} "{jid}"'
            for m in machines:
                running = on[m]
                if len(running) == 1:   # (its one job ends)
                    running.clear()
                    if m not in unavailable:
                        yield f"6 {t} machine_state m{m} w"
                    continue
                before = top(running)
                running.remove(n)
                if not running:
                    if m not in unavailable:
                        yield f"6 {t} machine_state m{m} w"
                elif top(running) != before:
                    yield from show(t, m, top(running))
            if rows[n] >= 0:
                info.pop(n, None)
        end = f"{end_time:f}"
        yield ""
        yield "# End of events, containers destruction"
        for i in range(len(host_names)):
            yield f"3 {end} m{i} machine_ct"
        yield f"3 {end} root root_ct"
