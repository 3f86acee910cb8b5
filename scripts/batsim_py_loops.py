"""Four batsim-py 1.0.5 scheduling loops, run on whatever ``batsim`` is first on PATH.

Usage::

    python scripts/batsim_py_loops.py fcfs     -p PLATFORM -w WORKLOAD -o OUTDIR
    python scripts/batsim_py_loops.py shutdown -p PLATFORM -w WORKLOAD -o OUTDIR
    python scripts/batsim_py_loops.py fcfs -p PLATFORM -w WORKLOAD -o OUTDIR --compute-sharing --events FILE
    python scripts/batsim_py_loops.py api      -p PLATFORM -w WORKLOAD -o OUTDIR
    python scripts/batsim_py_loops.py easy     -p PLATFORM -w WORKLOAD -o OUTDIR

``fcfs``: the loop of batsim-py's scheduling tutorial -- ``start``, then while the simulation
runs, start queued jobs in order on the first hosts that are not allocated until the next one
does not fit, and ``proceed_time()`` to the next event (hosts made unavailable by an external
event are left out).

``shutdown``: the same FCFS on awake idle hosts only, with a shutdown policy: when no job
waits, every idle host is switched off (``switch_off``); when jobs wait for more hosts than are
idle or booting, sleeping hosts are switched on (``switch_on``).

``api``: the rest of batsim-py's scheduling calls, on hosts with two computation pstates.
It proceeds in steps of 50 s (``proceed_time(50)``: Batsim's CALL_ME_LATER) and sets one more
callback at 175 s (``set_callback``); each step rejects queued jobs of more than 3 hosts
(``reject_job``), kills jobs running for more than 150 s (``kill_job``), slows idle hosts to
computation pstate 1 when no job waits and brings the hosts it allocates back to pstate 0
(``switch_power_state``: DVFS), and starts queued jobs FCFS on idle hosts (``allocate``).

``easy``: EASY backfilling on batsim-py's ``agenda`` (each host's reservation: the walltime
left of the jobs on it): the first queued job starts when enough hosts are free, else it gets
a reservation at the time enough hosts are released, and later jobs start on free hosts when
their walltime ends before it (or they leave enough hosts for it).

``--compute-sharing`` and ``--events FILE`` are ``SimulatorHandler.start``'s
``allow_compute_sharing=True`` and ``external_events=FILE`` (Batsim's ``--enable-compute-sharing``
and ``--events``). Both loops record batsim-py's monitors in OUTDIR: ``jobs.csv`` (JobMonitor), ``summary.csv``
(SimulationMonitor without its wall-clock ``simulation_time``), ``energy.csv``
(ConsumedEnergyMonitor), ``host_states.csv`` (HostStateSwitchMonitor), ``pstates.csv``
(HostPowerStateSwitchMonitor), and copy the files the ``batsim`` process itself wrote under the
export prefix batsim-py gives it (``TMPDIR/batsim``; TMPDIR is set to ``OUTDIR/tmp`` here, so
that two runs never share it) as ``batsim_jobs.csv``, ``batsim_consumed_energy.csv``,
``batsim_pstate_changes.csv``.

Recorded on real Batsim 4.2.1 for ``tests/fixtures/batsim_py/`` (its README gives the command);
``tests/test_batsim_py.py`` runs it on the embedded engine through ``gridsched batsim-launcher``
and compares. batsim-py installs only without its pins: ``pip install --no-deps batsim-py==1.0.5``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

#: The files the batsim process writes under batsim-py's export prefix (schedule and machine-state
#: tracing are disabled by batsim-py's command line).
BATSIM_FILES = ("jobs.csv", "consumed_energy.csv", "pstate_changes.csv")


def fcfs_step(sim) -> None:
    """Start queued jobs in order on the first hosts not allocated, until one does not fit."""
    for job in sim.queue:
        free = [h for h in sim.platform.get_not_allocated_hosts() if not h.is_unavailable]
        if job.res > len(free):
            break
        sim.allocate(job.id, [h.id for h in free[:job.res]])


def shutdown_step(sim) -> None:
    """FCFS on awake idle hosts, then switch idle hosts off when no job waits, or switch sleeping
    hosts on when the waiting jobs need more hosts than are idle or booting."""
    for job in sim.queue:
        idle = [h for h in sim.platform.hosts if h.is_idle and not h.is_allocated]
        if job.res > len(idle):
            break
        sim.allocate(job.id, [h.id for h in idle[:job.res]])
    idle = [h.id for h in sim.platform.hosts if h.is_idle and not h.is_allocated]
    wanted = sum(j.res for j in sim.queue)
    if not wanted:
        if idle:
            sim.switch_off(idle)
        return
    booting = sum(1 for h in sim.platform.hosts if h.is_switching_on)
    asleep = [h.id for h in sim.platform.hosts if h.is_sleeping]
    need = wanted - len(idle) - booting
    if need > 0 and asleep:
        sim.switch_on(asleep[:need])


def api_step(sim) -> None:
    """One step of the ``api`` loop (module docstring)."""
    for job in list(sim.queue):
        if job.res > 3:
            sim.reject_job(job.id)
    for job in sim.jobs:
        if job.is_running and sim.current_time - job.start_time > 150:
            sim.kill_job(job.id)
    for job in sim.queue:
        idle = [h for h in sim.platform.hosts if h.is_idle and not h.is_allocated]
        if job.res > len(idle):
            break
        for h in idle[:job.res]:
            if h.pstate.id != 0:
                sim.switch_power_state(h.id, 0)
        sim.allocate(job.id, [h.id for h in idle[:job.res]])
    if not sim.queue:
        for h in sim.platform.hosts:
            if h.is_idle and not h.is_allocated and h.pstate.id == 0:
                sim.switch_power_state(h.id, 1)


def easy_step(sim) -> None:
    """One step of the ``easy`` loop (module docstring)."""
    queue = list(sim.queue)
    if not queue:
        return
    free = [h.id for h in sim.platform.get_not_allocated_hosts()]
    head = queue[0]
    if head.res <= len(free):
        sim.allocate(head.id, free[:head.res])
        return easy_step(sim)
    releases = sorted(r.release_time for r in sim.agenda if r.host.id not in free)
    shadow = releases[head.res - len(free) - 1]          # when the head job can start
    spare = len(free) + sum(1 for t in releases if t <= shadow) - head.res
    for job in queue[1:]:
        free = [h.id for h in sim.platform.get_not_allocated_hosts()]
        if job.res > len(free):
            continue
        if job.walltime <= shadow or job.res <= spare:
            if job.walltime > shadow:
                spare -= job.res
            sim.allocate(job.id, free[:job.res])


def run(policy: str, platform: str, workload: str, out: Path, *, compute_sharing: bool = False,
        events: str | None = None) -> None:
    import batsim_py
    from batsim_py import monitors

    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "tmp"
    tmp.mkdir(exist_ok=True)
    tempfile.tempdir = str(tmp)   # batsim-py's export prefix is tempfile.gettempdir() + "/batsim"
    sim = batsim_py.SimulatorHandler()
    mons = {
        "jobs.csv": monitors.JobMonitor(sim),
        "summary.csv": monitors.SimulationMonitor(sim),
        "energy.csv": monitors.ConsumedEnergyMonitor(sim),
        "host_states.csv": monitors.HostStateSwitchMonitor(sim),
        "pstates.csv": monitors.HostPowerStateSwitchMonitor(sim),
    }
    step = {"fcfs": fcfs_step, "shutdown": shutdown_step, "api": api_step, "easy": easy_step}[policy]
    sim.start(platform, workload, allow_compute_sharing=compute_sharing, external_events=events)
    if policy == "api":
        sim.set_callback(175, lambda now: None)
    while sim.is_running:
        step(sim)
        sim.proceed_time(50 if policy == "api" else 0)
    sim.close()
    for name, mon in mons.items():
        df = mon.to_dataframe()
        if name == "summary.csv":
            df = df.drop(columns=["simulation_time"])   # wall clock
        df.to_csv(out / name, index=False)
    for name in BATSIM_FILES:
        src = tmp / f"batsim_{name}"
        if src.exists():
            shutil.copyfile(src, out / f"batsim_{name}")
    shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("policy", choices=("fcfs", "shutdown", "api", "easy"))
    ap.add_argument("-p", "--platform", required=True)
    ap.add_argument("-w", "--workload", required=True)
    ap.add_argument("-o", "--output", required=True, type=Path)
    ap.add_argument("--compute-sharing", action="store_true", help="allow_compute_sharing=True")
    ap.add_argument("--events", help="external events file (Batsim's --events)")
    args = ap.parse_args(argv)
    run(args.policy, args.platform, args.workload, args.output, compute_sharing=args.compute_sharing,
        events=args.events)
    return 0


if __name__ == "__main__":
    sys.exit(main())
