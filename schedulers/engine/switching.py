"""Pstate switching: SET_RESOURCE_STATE and the switches of machines (Batsim 4.2.1).

A component of :class:`schedulers.engine.simulator.Engine`: :class:`Switches` owns the pending
switch groups (one per SET_RESOURCE_STATE request), the count of machines switching and the
counts of ``out_schedule.csv`` (``nb_grouped_switches``, ``nb_machine_switches``). It asks the
:class:`.hosts.Machines` component for pstate, power and machine-state changes and for the rows
of ``out_consumed_energy.csv``, ``out_machine_states.csv`` and ``out_pstate_changes.csv``; the
event queue to arm a switch's 1-flop execution; the executions for DVFS (re-pacing their tasks)
and, on platforms with uncoordinated hosts, a check that the switch's message can be timed.

Switching (``server_on_pstate_modification`` in ``src/server.cpp`` and ``src/pstate.cpp``)
    A SET_RESOURCE_STATE request becomes one *switch group* (``CurrentSwitches::add_switch``);
    it writes an energy row ``p`` and a transition row (-1 towards a computation pstate, -2
    towards a sleep pstate, -42 towards any other) at once, and counts one grouped switch and one
    machine switch per host. Per host:

    * computation -> computation pstate (DVFS): instantaneous; running computations change pace;
    * computation -> sleep pstate ``S``: the host computes 1 flop at ``S``'s virtual switch-off
      pstate (``sleep_pstates="S:OFF:ON"``, one triple per sleep pstate, comma-separated:
      :func:`.platform.classify_sleep_pstates`), then reaches ``S`` (Batsim aborts if jobs run
      there);
    * sleep pstate ``S`` -> computation pstate: 1 flop at ``S``'s virtual switch-on pstate;
    * a host in a virtual pstate (still switching) or a request for a virtual pstate: Batsim
      logs an error and does nothing for that host — the request's group then never completes
      (no RESOURCE_STATE_CHANGED), and the host stays where its running switch takes it;
    * sleep -> sleep: Batsim aborts; so does the engine (:class:`EngineError`).

    Storage machines (ids after the compute hosts) are switched as any machine: between two
    computation pstates at once (their power changes, :meth:`.hosts.Machines.set_storage_pstate`;
    no task computes there), counted in both counts and listed in ``out_pstate_changes.csv``,
    never in ``out_machine_states.csv`` (recorded on real Batsim 4.2.1,
    ``tests/fixtures/batsim_pfs_energy/switch_storage_io``). Switching a storage host off or on
    is refused (not simulated).

    A host that reaches its target completes the *first* pending group towards that pstate that
    contains it (``CurrentSwitches::mark_switch_as_done``); when a group has no host left, Batsim
    writes the pstate rows and sends RESOURCE_STATE_CHANGED for the whole group.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from procset import ProcSet

from ..core.events import ResourceStateChanged, SetResourceState
from ..core.model import HostState
from .clock import Clock, shown_time
from .hosts import HostRun, Machines
from .ports import EngineError
from .queue import Kind, at


@dataclass(slots=True)
class SwitchGroup:
    """One SET_RESOURCE_STATE request: its hosts, those still switching, the target pstate."""

    hosts: list[int]
    waiting: set[int]
    target: int


class Switches:
    """Batsim's ``CurrentSwitches`` and switch actors (see the module docstring).

    Args:
        machines: the hosts (:class:`.hosts.Machines`), switched through its methods.
        clock: the simulation clock (:class:`.clock.Clock`), read for the current time (s).
        timers: the event queue (:mod:`.queue`, :mod:`.steps` or :mod:`.lazysteps`) where a
            switch's 1-flop execution is armed (``Kind.SWITCH``, payload ``(host id, target)``).
        steps: ``timers`` is SimGrid's step clock (``work``), not timed events (``push``).
        post: called with each event for the scheduler (RESOURCE_STATE_CHANGED).
        dvfs: ``dvfs(host ids, pstate)``: change computation pstates now (the parallel tasks
            change pace, :meth:`.ptasks.ParallelTasks.dvfs`); the switches are then marked done.
        routed: ``routed(host ids, what)``: check that messages of those hosts can be timed
            (:meth:`.ptasks.ParallelTasks.routed`; called only on platforms with
            ``uncoordinated`` hosts).
    """

    def __init__(self, machines: Machines, *, clock: Clock, timers: Any, steps: bool, post: Callable[[Any], None],
                 dvfs: Callable[[list[int], int], None], routed: Callable[[Any, str], None]) -> None:
        self.machines = machines
        self.clock = clock
        self.timers = timers
        self.steps = steps
        self.post = post
        self.dvfs = dvfs
        self.routed = routed
        self.switching = 0     # machines switching (Batsim's nb_switching_machines)
        self.groups: dict[int, list[SwitchGroup]] = {}
        self.nb_grouped_switches = 0
        self.nb_machine_switches = 0

    def set_resource_state(self, d: SetResourceState, later=None) -> None:
        """``server_on_pstate_modification``: the request's group, its rows, then host by host.
        ``later(k, fn)``: Batsim's actor model (:mod:`.netserver`), where each host's
        ``set_pstate`` (a pstate change) or ``Actor::create`` (a switching actor, whose
        ``set_pstate`` to the virtual pstate comes a sub-round later) is a simcall of the
        server: the ``k``-th host's change is done ``k`` sub-rounds on, and the machine-state row
        after the last one, so that an actor running at this instant (a job ending) sees the
        hosts before their change (recorded on real Batsim 4.2.1,
        ``tests/fixtures/batsim_zero_work_order``); None: all at once."""
        if not self.machines.energy:
            raise EngineError("SET_RESOURCE_STATE needs the energy model (-E / --energy), as in Batsim")
        try:
            target = int(d.state)
        except ValueError:
            raise EngineError(f"SET_RESOURCE_STATE: state {d.state!r} is not a pstate number") from None
        hids = list(d.resources)
        if not hids:
            return
        nc = len(self.machines.hosts)
        for hid in hids:
            if 0 <= hid - nc < len(self.machines.storage):
                self._check_storage(hid, target)
                continue
            if not 0 <= hid < nc:
                raise EngineError(f"SET_RESOURCE_STATE at t={shown_time(self.clock.now)}: host {hid} does not exist "
                                  f"(platform has {nc} compute hosts"
                                  + (f" and {len(self.machines.storage)} storage hosts)" if self.machines.storage
                                     else ")"))
            if not 0 <= target < len(self.machines.hosts[hid].spec.speeds):
                raise EngineError(f"SET_RESOURCE_STATE at t={shown_time(self.clock.now)}: host {hid} "
                                  f"({self.machines.hosts[hid].spec.name}) has no pstate {target}")
        group = SwitchGroup(hosts=hids, waiting=set(hids), target=target)
        self.groups.setdefault(target, []).append(group)
        self.machines.energy_row("p", decided=True)
        first = min(hids)   # Batsim classifies the request by its first machine
        target_kind = (self.machines.hosts[first].spec if first < nc else self.machines.storage[first - nc]) \
            .pstate_kinds.get(target, "computation")
        if self.machines.trace:
            transition = {"computation": -1, "sleep": -2}.get(target_kind, -42)
            self.machines.rows["pstates"].append((self.clock.now, str(ProcSet(*hids)), transition))
        self.nb_grouped_switches += 1
        self.nb_machine_switches += len(hids)
        dvfs = []
        k = 0   # the server's simcalls so far (with later)
        for hid in hids:
            if hid >= nc:   # a storage host: DVFS only (_check_storage)
                if later is None:
                    self._storage_dvfs(hid, target)
                else:
                    k += 1
                    later(k, lambda hid=hid: self._storage_dvfs(hid, target))
                continue
            h = self.machines.hosts[hid]
            cur, want = h.pstate_kind(h.pstate), h.pstate_kind(target)
            if cur == "computation" and want == "computation":
                if later is None:
                    dvfs.append(hid)
                else:
                    k += 1
                    later(k, lambda hid=hid: self._dvfs([hid], target))
            elif cur == "computation" and want == "sleep":
                if h.jobs:
                    raise EngineError(f"SET_RESOURCE_STATE at t={shown_time(self.clock.now)}: host {h.spec.name} runs jobs "
                                      f"{sorted(h.jobs)}; it cannot be switched off (Batsim aborts)")
                self.machines.set_state(h, HostState.SWITCHING_OFF)
                k += 1
                self._later_or_now(later, k, self._start_switch, h, hid, h.spec.sleep_switch[target][0], target)
            elif cur == "sleep":
                if want != "computation":
                    raise EngineError(f"SET_RESOURCE_STATE at t={shown_time(self.clock.now)}: host {h.spec.name} is asleep in "
                                      f"pstate {h.pstate}; it can only be switched to a computation pstate, "
                                      f"not {target} (Batsim aborts)")
                self.machines.set_state(h, HostState.SWITCHING_ON)
                k += 1
                self._later_or_now(later, k, self._start_switch, h, hid, h.spec.sleep_switch[h.pstate][1], target)
            else:
                what = "is still switching" if cur == "transition" else f"cannot go to virtual pstate {target}"
                import logging   # (imported when needed: gridsched starts sooner)
                logging.getLogger("schedulers.engine").warning(
                    "t=%s: SET_RESOURCE_STATE ignored for host %d (%s): it %s; Batsim logs an error and the "
                    "request never completes", self.clock.now, hid, h.spec.name, what)
        if dvfs:
            self._dvfs(dvfs, target)
        self._later_or_now(later, k, self.machines.machine_row)

    def _check_storage(self, hid: int, target: int) -> None:
        """A SET_RESOURCE_STATE on storage machine ``hid``: Batsim changes its pstate as any
        machine's; the engine simulates a computation-to-computation change (DVFS) only.

        Raises:
            EngineError: the storage host has no pstate ``target``, or the change is not between
                two computation pstates (switching a storage host off or on: not simulated)."""
        j = hid - len(self.machines.hosts)
        s = self.machines.storage[j]
        where = f"SET_RESOURCE_STATE at t={shown_time(self.clock.now)}: machine {hid} ({s.name}, a storage host)"
        if not 0 <= target < len(s.speeds):
            raise EngineError(f"{where} has no pstate {target}")
        cur = self.machines.st_pstate[j]
        kinds = (s.pstate_kinds.get(cur, "computation"), s.pstate_kinds.get(target, "computation"))
        if kinds != ("computation", "computation"):
            raise EngineError(f"{where}: pstate {cur} ({kinds[0]}) to {target} ({kinds[1]}): the embedded engine "
                              "changes a storage host's pstate between computation pstates only; use real "
                              "Batsim (--engine batsim)")

    def _storage_dvfs(self, hid: int, target: int) -> None:
        """Storage machine ``hid`` takes computation pstate ``target`` now (no task computes
        there: nothing changes pace), then its switch is done."""
        self.machines.set_storage_pstate(hid - len(self.machines.hosts), target)
        self.mark_switch_done(hid, target, machine_row=False)

    def _dvfs(self, hids: list[int], target: int) -> None:
        """Hosts ``hids`` change computation pstate to ``target`` now (DVFS: their tasks change
        pace), then their switches are done (``CurrentSwitches::mark_switch_as_done``)."""
        self.dvfs(hids, target)
        for hid in hids:
            self.mark_switch_done(hid, target, machine_row=False)

    @staticmethod
    def _later_or_now(later, k: int, fn, *args) -> None:
        if later is None:
            fn(*args)
        else:
            later(k, lambda: fn(*args))

    def _start_switch(self, h: HostRun, hid: int, virtual: int, target: int) -> None:
        """Batsim's switch actor (the machine already in its switching state): compute 1 flop
        at the virtual pstate, then reach ``target``."""
        speed = h.spec.speeds[virtual]
        if speed <= 0:
            raise EngineError(f"host {h.spec.name}: virtual pstate {virtual} has speed 0; the switch never ends")
        self.machines.set_pstate(h, virtual)
        h.load = 1.0   # the flop keeps one core busy
        self.machines.set_power(h)
        self.switching += 1
        if self.steps:   # the switch actor's 1-flop execution at the virtual pstate's speed
            self.timers.work(1.0, speed, Kind.SWITCH, (hid, target))
        else:
            self.timers.push(at(self.clock.now + 1.0 / speed), Kind.SWITCH, (hid, target))

    def on_switched(self, hid: int, target: int) -> None:
        """A machine reached ``target`` at the end of its switch (``server_on_switched``)."""
        self.switching -= 1
        self.switch_reached(hid, target)
        self.mark_switch_done(hid, target, machine_row=True)

    def switch_reached(self, hid: int, target: int, state: bool = True) -> None:
        """The switch actor's side (``switch_on/off_machine_process``, ``src/pstate.cpp``): the
        flop is computed, the host takes ``target`` (``set_pstate``, a simcall) and then its new
        machine state (``update_machine_state``; ``state`` False: later, :meth:`switch_state`)."""
        if self.machines.platform.uncoordinated:
            self.routed((hid,), "its SWITCHED_ON/OFF message")
        h = self.machines.hosts[hid]
        self.machines.set_pstate(h, target)
        h.load = 0.0
        self.machines.set_power(h)
        if state:
            self.switch_state(hid, target)

    def switch_state(self, hid: int, target: int) -> None:
        """The machine state a switch ends in (``Machine::update_machine_state``)."""
        h = self.machines.hosts[hid]
        self.machines.set_state(h, HostState.SLEEPING if h.pstate_kind(target) == "sleep" else HostState.IDLE)

    def mark_switch_done(self, hid: int, target: int, *, machine_row: bool) -> bool:
        """``CurrentSwitches::mark_switch_as_done``: the first pending group towards ``target``
        holding ``hid`` loses it; a group left empty is reported (returns True)."""
        groups = self.groups.get(target, [])
        for k, g in enumerate(groups):
            if hid in g.waiting:
                g.waiting.discard(hid)
                if not g.waiting:
                    del groups[k]
                    res = ProcSet(*g.hosts)
                    if self.machines.trace:
                        self.machines.rows["pstates"].append((self.clock.now, str(res), g.target))
                    self.machines.energy_row("p")
                    if machine_row:
                        self.machines.machine_row()
                    self.post(ResourceStateChanged(self.clock.now, resources=res, state=str(g.target)))
                    return True
                return False
        raise EngineError(f"internal: host {hid} reached pstate {target} that no request asked for")
