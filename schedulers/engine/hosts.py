"""Hosts: machine states, power and energy (Batsim 4.2.1 + SimGrid 3.32).

A component of :class:`schedulers.engine.simulator.Engine`: :class:`Machines` owns the compute
hosts' run-time state (:class:`HostRun`: pstate, machine state, load, power, energy), the
platform's energy sums and the time spent in each machine state; it writes the rows of
``out_machine_states.csv`` and ``out_consumed_energy.csv``. It asks the others for nothing but
the current time (the :class:`.clock.Clock` it is given at construction).

Energy
    SimGrid's host-energy plugin (:mod:`schedulers.engine.platform`): a host whose busy load is
    ``L`` cores of ``C`` draws ``Epsilon + (AllCores - Epsilon) * min(L / C, 1)`` W at its
    current pstate, ``Idle`` when ``L = 0``, full load at a pstate of speed 0
    (:func:`schedulers.core.power.watts`). Each host's energy is a double brought up to date
    as the plugin does (below), with the same steps, so that its rounding is SimGrid's: Batsim
    prints ``epower`` = (E - E_prev) / dt over intervals as short as 1e-10 s (its messages across
    a loopback), where that rounding is most of the value. Batsim sums the hosts' energies in a
    ``long double`` (``Machines::total_consumed_energy``, ``consumed_energy_on_machines``), exact
    for such sums; the engine sums them exactly (:func:`math.fsum`), and takes ``epower`` from
    the hosts' own changes since the previous row. Measured against real Batsim 4.2.1: the
    ``out_consumed_energy.csv`` and ``out_jobs.csv`` of EASY, BUC, conservative and HEFT on 3,000
    backlogged jobs (``tests/test_easy_backlog.py``) are byte-identical to Batsim's.
Lazy energy updates (SimGrid 3.32 ``src/plugins/host_energy.cpp``, ``HostEnergy::update``)
    SimGrid does not integrate power continuously: a host's energy is brought up to date only
    when something *updates* it, and the whole interval since its previous update is charged at
    the power of the load the solver gave it last (``get_current_watts_value`` at the update).
    A host is updated when an action using its CPU ends or is cancelled
    (``CpuAction::on_state_change``: a parallel task's end, a ``delay`` stage's sleep on the job
    actor's host, the first host of the allocation), when a *single-host* execution starts
    (``Exec::on_start_cb``: only if ``get_host_number() == 1``), when its pstate or on/off state
    changes, and when its energy is read (``sg_host_get_consumed_energy``: Batsim reads every
    host at each job start and end and each pstate request, ``EnergyConsumptionTracer``, and
    the allocation's hosts at job start and end). So where a load changes at an instant at which
    nothing updates the host -- a parallel task of two or more hosts that starts inside a job
    (a ``composed`` profile's compute after a delay), or the rates of tasks sharing hosts with
    it -- the new power is charged back to the host's previous update. The engine keeps, per
    host, the power the plugin will charge at its next update (:attr:`HostRun.charged`): at a
    lazy change it stays the old one for the rest of the instant (updates then still charge the
    old power), and becomes the new one at the end of the instant
    (:meth:`Machines.settle_lazy`), charged from the host's last update on. Recorded on real Batsim 4.2.1: multi-host ``composed``
    compute/delay jobs (``tests/fixtures/batsim_green``, 75 % CPU load) draw the compute power
    during their delays on every host but the first.
Initial pstate (SimGrid 3.32 ``HostEnergy``: ``pstate_`` starts at 0 and ``update`` sets it
    from the host only after charging the interval since the previous update)
    The plugin charges a host declared with ``pstate="p"`` (p > 0) at pstate 0's power from
    time 0 until its first update (an energy read after t = 0 -- ``get_consumed_energy`` updates
    only when the clock has moved since the host's last update, which is 0 at its creation --, a
    pstate change, an action on it), then at its true pstate's. With ``-E`` Batsim reads every
    host when the first job is submitted, so the platform's energy until then is that of pstate 0
    on such hosts; a first submission at t = 0 updates nothing (recorded on real Batsim 4.2.1,
    ``tests/fixtures/batsim_sleep_pstates``: a host at sleep pstate 4 of 5 W draws pstate 0's
    100 W until the first job end at t = 3). Recorded on real Batsim
    4.2.1 (tests/test_engine_fidelity.py: a host at pstate 1 of "10:20, 100:200" idles at 10 W, not 100 W,
    until the first submission at t = 10: 200 J for two hosts, not 1,100). The engine gives
    such a host pstate 0's idle power at the start and its own at its first update
    (:meth:`Machines._first_update`).
``wattmin`` (``out_consumed_energy.csv``)
    Batsim sums ``sg_host_get_wattmin_at(pstate)`` over the machines (compute and storage
    hosts) at each row, which SimGrid 3.32 answers with the pstate's *Epsilon*
    (``HostEnergy::get_watt_min_at``), not its Idle power; the engine sums them exactly after each pstate change (:meth:`Machines.wattmin`).
Storage hosts (role ``storage``, energy runs)
    Batsim sums every machine's energy and ``wattmin``, the storage hosts' too
    (``Machines::total_consumed_energy``, ``total_wattmin``: ``_machines`` holds the compute
    hosts, then the storage hosts), and lists them in ``out_pstate_changes.csv``. No flops ever
    run on a storage host (Batsim aborts when a job's task puts some there: :mod:`.storagejobs`;
    an IO task puts none), so a storage host draws its pstate's *Idle* power while bytes flow to
    or from it, and while jobs run there (their machine states: :attr:`Machines.storage_runs`). Its energy is updated when
    Batsim reads every machine (each energy row, the first submission, the last job end) and
    when an IO task moving bytes to or from it ends or is cancelled (the task gives each of its
    hosts a CPU share of weight 0: ``CpuAction::on_state_change`` updates them all), one step of
    its power times the time since its previous update, with pstate 0's power until its first
    update as for compute hosts (:meth:`Machines.storage_updated`). The same end updates the
    compute hosts of a ``parallel_homogeneous_pfs`` task, but not the job's hosts of a
    ``data_staging``, whose task holds the two storage hosts only. A job's ``consumed_energy``
    reads its own hosts only. Without
    ``wattage_per_state`` on a storage host, Batsim aborts at its first energy read (refused
    by :class:`.simulator.Engine`). A SET_RESOURCE_STATE between two computation pstates of a
    storage host changes its pstate at once (:meth:`Machines.set_storage_pstate`): its energy is
    updated, then it draws the new pstate's Idle power and ``wattmin`` counts that pstate's
    Epsilon (switching one off or on is refused, :mod:`.switching`). Recorded on real Batsim
    4.2.1: ``tests/fixtures/batsim_pfs_energy``.
Machine states
    ``sleeping``, ``switching_on``, ``switching_off``, ``idle``, ``computing``, counted as in
    ``out_machine_states.csv``; the time spent in each is accumulated when a machine leaves a
    state (Batsim's ``machine_state_tracer`` and ``time_*`` columns of ``out_schedule.csv``).
Switching
    SET_RESOURCE_STATE requests and the switches of machines between pstates are the
    :class:`.switching.Switches` component, which asks this one for pstate, power and state
    changes and energy rows.
"""

from __future__ import annotations

from collections import Counter
from math import fsum, isfinite, ulp
from itertools import repeat
from operator import add, mul, sub
from dataclasses import dataclass, field
from typing import Any

from ..core.model import HostState
from ..core.power import PowerRange, watts
from .clock import Clock, shown_time
from .longdouble import epower as long_double_epower
from .longdouble import near_tie
from .platform import HostSpec, PlatformSpec
from .ports import EngineError


def exact_sum(values) -> float:
    """The exact sum of ``values`` (floats), rounded once (:func:`math.fsum`), as Batsim's
    ``long double`` sums of energies are exact; an overflow gives ``inf`` (or NaN) instead of
    an exception, for the output check to name (:func:`.outputs.check_finite`)."""
    if not isinstance(values, (list, tuple)):
        values = list(values)
    try:
        return fsum(values)
    except (OverflowError, ValueError):   # intermediate overflow, or inf - inf
        return sum(values)


#: Platforms with at most this many compute hosts, or whose hosts times jobs is at most
#: :data:`EXACT_WORK`, bring every host's energy up to date at each energy row, as SimGrid does,
#: and sum them exactly (O(hosts) a row): their ``out_consumed_energy.csv`` is Batsim's, digit for
#: digit. Larger runs keep the platform's total as a running sum (O(1) a row; its last printed
#: digit may differ from Batsim's ``long double`` sum of the hosts' doubles, whose roundings it
#: does not follow) and sum the hosts' own steps only over the intervals short enough for their
#: rounding to show in ``epower`` (:meth:`Machines._epower`): ``epower`` within 1e-7 relative of
#: the exact sums (``tests/test_energy_lazy.py``). Found by ``scripts/compare_with_batsim.py
#: --suite wide``: 5 of 200 cases on Batsim's 128-host platforms differed from real Batsim in
#: the last digit of one energy or epower value with the running sum, none with every host read.
#: Measured (2-core x86_64 machine, 2026-12-07, one other process running): 100k one-host jobs
#: (``bench_engine.make_workload``) on 128 hosts with energy, whole ``gridsched run``: 20.3 and
#: 22.7 s with every host read, 14.4 and 14.8 s with the running sum (two runs each, alternated).
EXACT_HOSTS = 64
#: See :data:`EXACT_HOSTS`: up to this many host-jobs (compute hosts x jobs of the workloads),
#: every host is read at each row whatever the platform's size (about 3.7 s more on 12.8M).
EXACT_WORK = 20_000_000

#: Column order of out_machine_states.csv.
MACHINE_STATES = (HostState.SLEEPING, HostState.SWITCHING_ON, HostState.SWITCHING_OFF, HostState.IDLE,
                  HostState.COMPUTING)
_SLEEPING, _SWITCHING_ON, _SWITCHING_OFF, _IDLE, _COMPUTING = MACHINE_STATES  # (unrolled in machine_row)
_ALL_STATES = (*MACHINE_STATES, HostState.UNAVAILABLE)


@dataclass(slots=True)
class HostRun:
    """Run-time state of one compute host.

    Attributes:
        spec: what the platform says (speeds in flops/s per pstate, cores, power states).
        pstate: current pstate (a virtual one while switching).
        state: current :class:`HostState`.
        jobs: ids of the jobs running on it.
        load: busy cores (float) as the energy plugin sees it.
        held: the parallel tasks on it whose job reached its walltime but whose job actor still
            holds them (:class:`~.execution.HeldTask`, networked platforms): they still compute.
        power: current power (W), that of its current load and pstate.
        charged: the power (W) SimGrid's energy plugin charges at its next update: ``power``
            but for a lazy load change of this instant (:meth:`Machines.settle_lazy`).
        energy: energy (J) up to time ``last`` (s), its last update by the plugin (every host
            is also updated at ``Machines.all_upd``), rounded as the plugin's double. Where
            every host is read at each row (:data:`EXACT_HOSTS`), a host not updated since the
            last read keeps its energy of then in that read's list, not here (``last`` is then
            before ``Machines.all_upd``: :meth:`Machines._update` brings it back).
        lazy: a lazy load change of this instant is pending.
        e_row, t_row: its energy (J) at the last all-host read ``t_row`` (s), kept when an update
            catches up on that read (running-sum platforms, :meth:`Machines._epower`).
        hid: its Batsim id (index among the compute hosts).
    """

    spec: HostSpec
    pstate: int
    state: HostState = HostState.IDLE
    state_since: float = 0.0
    jobs: set = field(default_factory=set)
    load: float = 0.0
    held: list = field(default_factory=list)
    power: float = 0.0
    charged: float = 0.0
    energy: float = 0.0
    last: float = 0.0
    lazy: bool = False
    e_row: float = 0.0
    t_row: float = -1.0
    hid: int = -1

    def pstate_kind(self, pstate: int) -> str:
        """``computation``, ``sleep`` or ``transition`` (a virtual switching pstate), as Batsim
        classifies the pstates of a machine (``Machine::pstates``)."""
        return self.spec.pstate_kinds.get(pstate, "computation")


def _ranges(h: HostRun) -> list[PowerRange]:
    """The power ranges of ``h``'s pstates (energy runs: the engine refuses ``-E`` on a platform
    whose compute hosts lack them, :class:`.simulator.Engine`)."""
    ranges = h.spec.power
    if ranges is None:
        raise EngineError(f"internal: host {h.spec.name} has no power states")
    return ranges


class Machines:
    """Power, energy and machine states of the compute hosts, and the storage hosts' power and
    energy (Batsim's ``Machines`` with SimGrid's host-energy plugin; see the module docstring).

    Args:
        platform: the platform (its compute hosts become :attr:`hosts`, in Batsim's id order).
        energy: Batsim's ``-E``: power, energy and pstate switching are modelled.
        trace: write the output rows (``machine_states``, ``energy``, ``pstates`` of ``rows``).
        rows: the run's output tables (:func:`.results.output_rows`), appended to.
        nb_jobs: jobs of the workloads (with the host count, chooses exact energy sums,
            :data:`EXACT_WORK`).
        clock: the simulation clock (:class:`.clock.Clock`), read for the current time (s).
        steps: the clock is SimGrid's step clock (:mod:`.steps`, :mod:`.lazysteps`); False: the
            clock rounded to 1e-9 s of Full zones of unknown routing (:mod:`.queue`), whose energy
            rows approximate Batsim's message intervals (:meth:`energy_row`).
    """

    def __init__(self, platform: PlatformSpec, *, energy: bool, trace: bool, rows: dict[str, Any], nb_jobs: int,
                 clock: Clock, steps: bool) -> None:
        self.platform = platform
        self.energy = energy
        self.trace = trace
        self.rows = rows
        self.clock = clock
        self.steps = steps
        self.hosts = [HostRun(spec=h, pstate=h.pstate, hid=i) for i, h in enumerate(platform.compute)]
        # (unavailable: external events, .extevents; not a column of out_machine_states.csv)
        self.counts = dict.fromkeys(_ALL_STATES, 0)
        # s in each state, all machines: a double and what it misses of the exact sum (Batsim
        # sums each machine's intervals, then the machines, in long doubles: exact here)
        self.time_in = dict.fromkeys(_ALL_STATES, 0.0)
        self.time_lo = dict.fromkeys(_ALL_STATES, 0.0)
        self.p_total = 0.0     # W, all machines (their current power; storage hosts included)
        n = len(self.hosts)
        self._exact = n <= EXACT_HOSTS or n * nb_jobs <= EXACT_WORK
        self._c_sum = 0.0       # W, the power the plugin charges, all hosts (running sum:)
        self._e_acc = 0.0       # J, all hosts up to _e_last
        self._e_last = 0.0
        # Batsim's wattmin (W): the sum of the Epsilon of the hosts' current pstates, summed
        # afresh at each row as Batsim does (exact: a running double drifts over many switches);
        # the hosts at each Epsilon, and the sum when they last changed (None: to redo)
        self._wattmin_hosts: Counter[float] = Counter()
        self._wattmin: float | None = 0.0
        # Batsim's EnergyConsumptionTracer starts from (0 s, 0 J): the first row's epower is its mean power
        # (exact mode: one energy per machine, the storage hosts after the compute hosts)
        self._last_energy_row: tuple = (0.0, [0.0] * (n + len(self._storage_of(platform)))
                                        if self._exact else 0.0)
        self.all_upd = 0.0     # s, when SimGrid's energy plugin last updated every host
        # Exact mode with rows: the hosts' energies at the last all-host read (by id), which hosts
        # not updated since do not copy into HostRun.energy (_read_all); the hosts updated since
        self._fast = self._exact and trace and energy
        self._es: list[float] | None = None
        self._since: list[HostRun] = []
        self._charged: list[float] = [0.0] * n   # HostRun.charged of each host, by id (for _read_all)
        self.lazy_hosts: list[HostRun] = []   # hosts with a lazy load change at this instant
        self.upd_now: set[int] = set()  # hosts a model event updated at this instant (networked runs)
        self._not_updated: dict[int, HostRun] = {}  # hosts the plugin still sees at pstate 0, by id (module docstring)
        for h in self.hosts:   # every machine starts idle, whatever its pstate (Machines::create_machines)
            self.counts[h.state] += 1
            if self.energy:
                ranges = _ranges(h)
                if h.pstate != 0:
                    h.power = watts(ranges[0], h.spec.speeds[0], 0.0, h.spec.cores)
                    self._not_updated[h.hid] = h
                else:
                    h.power = self._host_power(h)
                h.charged = self._charged[h.hid] = h.power
                self._c_sum += h.power
                self.p_total += h.power
                eps = ranges[h.pstate].epsilon
                self._wattmin_hosts[eps] += 1
                self._wattmin = None
        # Storage hosts (energy runs): each draws its pstate's Idle power (no flops ever run there), charged at each read of every machine (see "Storage
        # hosts" in the module docstring); pstate 0's until their first update, as compute hosts.
        self.storage = self._storage_of(platform)
        self._st_energy = [0.0] * len(self.storage)   # J, each at its last update _st_last (s)
        self._st_last = [0.0] * len(self.storage)
        self._st_row = list(self._st_energy)          # J, at the last energy row (running-sum mode)
        self._st_pending: set[int] = set()            # storage hosts still charged at pstate 0
        self.st_pstate = [s.pstate for s in self.storage]   # each storage host's current pstate
        # the storage machines' states and jobs (a job may hold one): idle, not counted in the
        # machine states until they change (Batsim counts the compute hosts at start)
        self.storage_runs = [HostRun(spec=s, pstate=s.pstate, hid=n + j) for j, s in enumerate(platform.storage)]
        for j, s in enumerate(self.storage):
            p0 = self._storage_power(s, 0)
            if s.pstate != 0:
                self._st_pending.add(j)
            self._charged.append(p0)
            self._c_sum += p0
            self.p_total += p0
            eps = self._storage_ranges(s)[s.pstate].epsilon
            self._wattmin_hosts[eps] += 1
            self._wattmin = None

    def _storage_of(self, platform: PlatformSpec) -> list[HostSpec]:
        """The storage hosts whose energy is modelled: all of them with energy, none without
        (the engine refuses ``-E`` when one lacks power states, :class:`.simulator.Engine`)."""
        if not self.energy:
            return []
        for s in platform.storage:
            self._storage_ranges(s)
        return list(platform.storage)

    @staticmethod
    def _storage_ranges(s: HostSpec) -> list[PowerRange]:
        """The power ranges of storage host ``s`` (refused without, :class:`.simulator.Engine`)."""
        if s.power is None:
            raise EngineError(f"internal: storage host {s.name} has no power states")
        return s.power

    def _storage_power(self, s: HostSpec, pstate: int) -> float:
        """The power (W) of storage host ``s`` at ``pstate``: its Idle power (no load ever),
        full load at a speed of 0 (:func:`schedulers.core.power.watts`)."""
        return watts(self._storage_ranges(s)[pstate], s.speeds[pstate], 0.0, s.cores)

    def storage_updated(self, ids) -> None:
        """SimGrid's energy plugin updates the storage hosts ``ids`` (indices in
        :attr:`storage`) now: one step of their power times the time since their previous
        update; the first after t = 0 charges pstate 0's power and sets their own
        (``HostEnergy::update``). Batsim reads them all at each energy read
        (:meth:`_storage_read`); an IO task that ends or is cancelled updates those it moves bytes
        to or from (``CpuAction::on_state_change``: ``ptask_L07`` gives every host of the task
        a CPU share, 0 flops included). Nothing without energy."""
        if not self.energy:
            return
        now, n = self.clock.now, len(self.hosts)
        energy, last, charged = self._st_energy, self._st_last, self._charged
        for j in ids:
            if now > last[j]:
                energy[j] += charged[n + j] * (now - last[j])
                last[j] = now
                if j in self._st_pending:
                    self._st_pending.discard(j)
                    new = self._storage_power(self.storage[j], self.st_pstate[j])
                    if new != charged[n + j]:
                        self._charge_sum(new - charged[n + j])
                        self.p_total += new - charged[n + j]
                        charged[n + j] = new

    def set_storage_pstate(self, j: int, pstate: int) -> None:
        """Storage host ``j`` (index in :attr:`storage`) takes computation pstate ``pstate`` now
        (Batsim's DVFS, ``server_on_pstate_modification``: ``Host::set_pstate``, whose
        ``on_speed_change`` makes SimGrid's energy plugin update the host): the time so far is
        charged at its power of before, then it draws the Idle power of ``pstate`` (no flops
        ever run there) and ``wattmin`` counts that pstate's Epsilon."""
        s, n = self.storage[j], len(self.hosts)
        self.storage_updated((j,))
        self._st_pending.discard(j)   # (an update at t = 0 leaves it pending: set below anyway)
        ranges = self._storage_ranges(s)
        old, new = ranges[self.st_pstate[j]].epsilon, ranges[pstate].epsilon
        if new != old:
            self._wattmin_hosts[old] -= 1
            self._wattmin_hosts[new] += 1
            self._wattmin = None
        self.st_pstate[j] = pstate
        power = self._storage_power(s, pstate)
        if power != self._charged[n + j]:
            self._charge_sum(power - self._charged[n + j])
            self.p_total += power - self._charged[n + j]
            self._charged[n + j] = power

    def _storage_read(self) -> list[float]:
        """Batsim reads every machine now: the storage hosts' energies (J, by id), each brought
        up to date (:meth:`storage_updated`)."""
        self.storage_updated(range(len(self.storage)))
        return list(self._st_energy)

    # ------------------------------------------------------------------------ power & energy
    def _host_power(self, h: HostRun) -> float:
        """The power (W) of ``h`` at its load and pstate (energy runs only)."""
        spec, p = h.spec, h.pstate
        return watts(_ranges(h)[p], spec.speeds[p], h.load, spec.cores)

    def _first_update(self, hids=None) -> None:
        """SimGrid's energy plugin updates hosts ``hids`` (default: all) for the first time now:
        those declared at a pstate other than 0 were charged at pstate 0's idle power until now,
        and draw their true power from now on (see "Initial pstate" in the module docstring)."""
        for hid in list(self._not_updated) if hids is None else hids:
            h = self._not_updated.pop(hid, None)
            if h is not None:
                self.set_power(h)

    def _update(self, h: HostRun) -> None:
        """``HostEnergy::update`` of host ``h`` now: charge the time since its last update at the
        power the plugin charges (:attr:`HostRun.charged`) -- in two steps when every host was
        read since (:attr:`all_upd`, a read the engine did not apply to ``h`` yet)."""
        last, a = h.last, self.all_upd
        now = self.clock.now
        if last < a and self._es is not None:   # its energy at that read is in the read's list
            h.energy = self._es[h.hid]
            last = a
        if last <= a < now:   # its energy at the last all-host read, kept for _epower
            if last < a:
                h.energy += h.charged * (a - last)
                last = a
            h.e_row, h.t_row = h.energy, a
        elif last < a:
            h.energy += h.charged * (a - last)
            last = a
        if last < now:
            h.energy += h.charged * (now - last)
            last = now
            if self._es is not None:
                self._since.append(h)
        h.last = last

    def _read_all(self) -> list[float]:
        """Update every compute host now and return their energies (J), in host order --
        ``Machines::total_consumed_energy`` reads each with ``sg_host_get_consumed_energy``.
        Each host's energy is its previous one plus its charged power times the time since, one
        step per read as the plugin's doubles take them; where every host is read at each row
        (``_fast``), a host not updated since the previous read takes its energy from that read's
        list and is not written back (:attr:`HostRun.energy`)."""
        if self._not_updated and self.clock.now > 0.0:   # (a read at t = 0 updates nothing)
            self._first_update()
        now, a = self.clock.now, self.all_upd
        d = now - a
        prev = self._es
        if prev is not None:
            out: list[float] = list(map(add, prev, map(mul, self._charged, repeat(d)))) if d else prev.copy()
            for h in self._since:   # updated after the previous read (a host may be listed twice)
                last = h.last
                if last < now:
                    h.energy += h.charged * (now - last)
                    h.last = now
                out[h.hid] = h.energy
            self._since.clear()
            if self.storage:
                out[len(self.hosts):] = self._storage_read()
            self._es = out
            self.all_upd = now
            return out
        out = []
        app = out.append
        for h in self.hosts:   # _update, inlined
            last = h.last
            if last == a:   # (most hosts: not updated since the last all-host read)
                if not d:
                    app(h.energy)
                    continue
                e = h.energy + h.charged * d
            elif last < now:
                e = h.energy
                if last < a:
                    e += h.charged * (a - last)
                    last = a
                if last < now:
                    e += h.charged * (now - last)
            else:
                app(h.energy)
                continue
            h.energy = e
            h.last = now
            app(e)
        if self.storage:
            out.extend(self._storage_read())
        self.all_upd = now
        if self._fast:
            self._es = out
        return out

    def total_energy(self, t: float | None = None) -> float:
        """Energy consumed by all machines (compute and storage hosts) since time 0 (J) --
        Batsim's ``consumed_energy``, the sum of the hosts' energies (exactly rounded,
        :func:`math.fsum`; the running sum on platforms of more than :data:`EXACT_HOSTS` hosts).
        Reading it updates every host (``sg_host_get_consumed_energy``). ``t``: only ``now`` (or None) is allowed."""
        if t is not None and t != self.clock.now:
            raise EngineError(f"internal: total energy asked at t={t} while the clock is at {self.clock.now}")
        return self.total_exact()[0]

    def energy_so_far(self) -> float:
        """Energy consumed by all machines (storage hosts too) from time 0 to now (J), read
        without updating any host: unlike :meth:`total_energy` (Batsim's own read, which
        SimGrid's plugin turns into host updates that the outputs show), reading it changes
        nothing in the run. The running
        sum of :meth:`_charge_sum`, within rounding of :meth:`total_energy`; 0 without energy.
        For observers of a paused run (the Gymnasium environment's energy reward)."""
        return self._e_acc + self._c_sum * (self.clock.now - self._e_last)

    def _running_total(self) -> float:
        """The running sum of every host's energy now (J), as the hosts are read now."""
        if self._not_updated and self.clock.now > 0.0:
            self._first_update()
        if self.storage:
            self._storage_read()
        self.all_upd = self.clock.now
        return self._e_acc + self._c_sum * (self.clock.now - self._e_last)

    def _charge_sum(self, d: float) -> None:
        """The power the plugin charges changes by ``d`` (W) now, in the running sum."""
        now = self.clock.now
        self._e_acc += self._c_sum * (now - self._e_last)
        self._e_last = now
        self._c_sum += d

    def total_exact(self, es: list[float] | None = None) -> tuple[float, float]:
        """The sum of the energies ``es`` (J; default: read every host now) as Batsim's
        ``long double`` holds it: ``(double, remainder)``, whose exact sum is the exact sum
        (the running sum and 0 on platforms of more than :data:`EXACT_HOSTS` hosts)."""
        if es is None:
            if not self._exact:
                return self._running_total(), 0.0
            es = self._read_all()
        hi = exact_sum(es)
        es.append(-hi)
        lo = exact_sum(es) if isfinite(hi) else 0.0
        es.pop()
        return hi, lo

    def energy_of(self, hids) -> tuple[float, ...]:
        """Energies consumed so far by the hosts ``hids`` (J each, in the order of ``hids``),
        read as Batsim's ``consumed_energy_on_machines`` reads a job's allocation (which updates
        them; Batsim sums them in a ``long double``, exact here: the caller sums with
        :func:`math.fsum`)."""
        if self._not_updated and self.clock.now > 0.0:
            self._first_update(hids)
        hosts, upd = self.hosts, self._update
        n = len(hosts)
        out = []
        for hid in hids:
            if hid >= n:   # a storage host (a job's allocation may hold one)
                self.storage_updated((hid - n,))
                out.append(self._st_energy[hid - n])
                continue
            h = hosts[hid]
            upd(h)
            out.append(h.energy)
        return tuple(out)

    def updated(self, hids) -> None:
        """SimGrid's energy plugin updates hosts ``hids`` now (an action on them ends, or a
        single-host execution starts on one): see "Lazy energy updates" above. Only energy
        readings depend on it (none without energy)."""
        if not self.energy:
            return
        if self._not_updated:
            self._first_update(hids)
        hosts, upd = self.hosts, self._update
        for hid in hids:
            upd(hosts[hid])
        self.upd_now.update(hids)

    def settle_lazy(self) -> None:
        """End of an instant: the hosts whose load changed lazily at this instant are charged
        their new power from their last update on (see "Lazy energy updates" above)."""
        a = self.all_upd
        now = self.clock.now
        for h in self.lazy_hosts:
            if h.last < a:   # every host was read at a, at the power of before
                if self._es is not None:
                    h.energy = self._es[h.hid]
                else:
                    h.energy += h.charged * (a - h.last)
                h.last = a
            d = h.power - h.charged
            if d:
                self._charge_sum(d)
                self._e_acc += d * (now - h.last)   # charged back to its last update
            h.charged = self._charged[h.hid] = h.power
            h.lazy = False
        self.lazy_hosts.clear()

    def set_power(self, h: HostRun, lazy: bool = False) -> None:
        """Re-evaluate the power of ``h`` after its load or pstate changed. Not ``lazy``: the
        change comes with an update of ``h`` (the time so far is charged at the power of
        before). ``lazy``: a load change that may happen with no energy update of ``h`` at this
        instant (a parallel task's rate), settled at the end of the instant by
        :meth:`settle_lazy`."""
        if not self.energy:
            return
        new = self._host_power(h)
        if lazy:
            if new != h.charged and not h.lazy:
                h.lazy = True
                self.lazy_hosts.append(h)
        else:
            self._update(h)
            if new != h.charged:
                self._charge_sum(new - h.charged)
                h.charged = self._charged[h.hid] = new
        if new != h.power:
            self.p_total += new - h.power
            h.power = new

    def set_pstate(self, h: HostRun, pstate: int) -> None:
        if self.energy:
            ranges = _ranges(h)
            old, new = ranges[h.pstate].epsilon, ranges[pstate].epsilon
            if new != old:
                self._wattmin_hosts[old] -= 1
                self._wattmin_hosts[new] += 1
                self._wattmin = None
            self._not_updated.pop(h.hid, None)  # charged at pstate 0 until now (set_power below)
        h.pstate = pstate
        self.upd_now.add(h.hid)
        self.set_power(h)   # Host::on_speed_change updates the host's energy

    # ------------------------------------------------------------------------ machine states
    def set_state(self, h: HostRun, state: HostState) -> None:
        if h.state is state:
            return
        old = h.state
        now = self.clock.now
        ti, lo = self.time_in, self.time_lo
        # time_in[old] += now - state_since, exactly: two of Knuth's TwoSum (rounding errors to lo)
        a = ti[old]
        s = a + now
        bp = s - a
        low = lo[old] + ((a - (s - bp)) + (now - bp))
        x = -h.state_since
        a = s
        s = a + x
        bp = s - a
        lo[old] = low + ((a - (s - bp)) + (x - bp))
        ti[old] = s
        c = self.counts
        c[old] -= 1
        c[state] += 1
        h.state = state
        h.state_since = now

    def availability(self, ids, available: bool) -> None:
        """An external event makes machines ``ids`` unavailable or available again
        (``server_on_event_machine_unavailable`` / ``_available``, ``src/server.cpp``): unavailable,
        a machine keeps its running jobs but takes no new one; available again, it is ``computing``
        if it still runs jobs, else ``idle`` (whatever its pstate). No row of
        ``out_machine_states.csv`` (Batsim writes none here; its columns have no unavailable count).

        Raises:
            EngineError: Batsim 4.2.1's abort: a machine made unavailable twice, or made available
                when it is not unavailable; a storage machine (not simulated).
        """
        n = len(self.hosts)
        for hid in ids:
            if hid >= n:
                raise EngineError(f"external event at t={shown_time(self.clock.now)}: machine {hid} is a storage machine; the "
                                  "embedded engine does not model their states: use real Batsim (--engine batsim)")
            h = self.hosts[hid]
            if available:
                if h.state is not HostState.UNAVAILABLE:
                    raise EngineError(f"external event at t={shown_time(self.clock.now)}: machine {hid} ('{h.spec.name}') made available "
                                      f"but it is not unavailable (its state: {h.state.value}); Batsim 4.2.1 aborts")
                self.set_state(h, HostState.COMPUTING if h.jobs else HostState.IDLE)
            else:
                if h.state is HostState.UNAVAILABLE:
                    raise EngineError(f"external event at t={shown_time(self.clock.now)}: machine {hid} ('{h.spec.name}') made unavailable "
                                      "but it is already unavailable; Batsim 4.2.1 aborts")
                self.set_state(h, HostState.UNAVAILABLE)

    def machine_row(self) -> None:
        if self.trace:
            c = self.counts
            self.rows["machine_states"].add(self.clock.now, (c[_SLEEPING], c[_SWITCHING_ON], c[_SWITCHING_OFF],
                                                       c[_IDLE], c[_COMPUTING]))

    def energy_row(self, kind: str, decided: bool = False,
                    p_before: float | None = None) -> tuple[float, float] | None:
        """One row of ``out_consumed_energy.csv`` (Batsim's ``EnergyConsumptionTracer::add_entry``).

        ``epower`` is ``(energy - previous energy) / (time - previous time)``, NA when no time
        passed. ``decided``: the row comes from a scheduler decision (a job start, a kill, a
        SET_RESOURCE_STATE). Where the messages are timed (:attr:`PlatformSpec.message_delays`)
        the engine's clock already carries these intervals. Otherwise, on a platform whose master
        host routes to itself through the loopback link (:attr:`PlatformSpec.master_loopback`:
        only when the route reader does not know the platform's routing, :func:`.read_platform`),
        the step clock approximates them: Batsim acts on each decision after
        its internal messages, 1e-10 s each: the row's true time is a hair after the previous
        row's even when both print the same time, and Batsim prints the power of that tiny interval
        (the platform's power before this row's change, up to a rounding noise of about 1e-5
        relative), not NA. Recorded on real Batsim 4.2.1 (``tests/fixtures/batsim_ehosep``):
        three job starts at t = 0 print 30, 120 and 210 W on 3 hosts idling at 10 W whose jobs
        draw 100 W. Rows from simulation events (job completions, walltimes, switches that end)
        happen at the exact time, and print NA after a row of the same time. ``p_before``: the
        platform's power (W) before the change this row records, when it has already been made
        (a killed job's end: its hosts' power fell before its row). Returns the total energy
        the row read (J, as :meth:`total_exact`), None when no row is written."""
        if not self.energy:
            return None
        if not self.trace:  # Batsim traces (and so reads every host's energy) all the same
            if self.storage:
                self._storage_read()
            self.all_upd = self.clock.now
            return None
        t_last, last = self._last_energy_row
        now = self.clock.now
        if not self._exact:
            # the running sum (many hosts or jobs: every long run): _running_total, _epower's
            # first case and wattmin inlined, as this runs twice a job
            if self._not_updated and now > 0.0:
                self._first_update()
            if self.storage:
                self._storage_read()
            self.all_upd = now
            c_sum = self._c_sum
            energy = self._e_acc + c_sum * (now - self._e_last)
            epower = None   # Batsim writes NA when no time passed since the previous row
            if now > t_last:
                dt = now - t_last
                if ulp(energy) < 1e-7 * c_sum * dt:   # the running sum's rounding is below 1e-7
                    epower = (energy - last) / dt
                else:
                    epower = self._epower(t_last, last, None, energy)
            elif decided and self.platform.master_loopback and not self.steps:  # (timed: the clock has them)
                epower = self.p_total if p_before is None else p_before
            wmin = self._wattmin
            if wmin is None:
                wmin = self.wattmin()
            self.rows["energy"].append((now, energy, kind, wmin, epower), 0.0)
            self._last_energy_row = (now, energy)
            self._st_row = list(self._st_energy)
            return energy, 0.0
        # every host read, their energies summed exactly (EXACT_HOSTS)
        es = self._read_all()
        total = self.total_exact(es)
        epower = None   # Batsim writes NA when no time passed since the previous row
        if now > t_last:
            epower = self._epower(t_last, last, es, total[0])
        elif decided and self.platform.master_loopback and not self.steps:  # (timed: the clock has them)
            epower = self.p_total if p_before is None else p_before
        self.rows["energy"].append((now, total[0], kind, self.wattmin(), epower), total[1])
        self._last_energy_row = (now, es)
        return total

    def wattmin(self) -> float:
        """Batsim's ``wattmin`` now (W): the sum over the machines (storage hosts too) of the Epsilon power of
        their current pstate (``Machines::total_wattmin``, ``src/machines.cpp``: a ``long
        double`` sum of ``sg_host_get_wattmin_at`` at each row, whose 64-bit significand holds
        the sum of a platform's powers exactly), summed exactly (:func:`math.fsum`) again after
        a host changed pstate. A running double updated at each change drifts: after thousands
        of switches on Batsim's 128-host platform it printed 8730.371925 where Batsim prints
        8730.371924 (``tests/fixtures/batsim_wattmin_sum``, ``tests/test_wattmin.py``)."""
        w = self._wattmin
        if w is None:
            w = self._wattmin = exact_sum(list(self._wattmin_hosts.elements()))
        return w

    def _epower(self, t_last: float, last, es: list[float] | None, total: float) -> float:
        """``epower`` of a row (W): (E - E_prev) / dt since the previous row at ``t_last``. Each
        host's energy is a double updated step by step; over a short interval the sum's change
        is mostly the rounding of those steps, which Batsim's exact ``long double`` sums keep.
        ``last``: the previous row's host energies ``es`` (exact mode) or its total."""
        dt = self.clock.now - t_last
        if es is not None:
            value = exact_sum(map(sub, es, last)) / dt
            if near_tie(value, total, value * dt, len(es)):   # (rare: Batsim's long doubles)
                value = long_double_epower(es, last, self.clock.now, t_last)
            return value
        if ulp(total) < 1e-7 * self._c_sum * dt:   # the running sum's rounding is below 1e-7
            return (total - last) / dt
        # each host's own step over dt from its energy at t_last (its binade decides the step's
        # rounding); hosts are not updated at rows here, so that energy is re-derived
        now = self.clock.now
        incs = []
        for h in self.hosts:
            c, last = h.charged, h.last
            if last > t_last:   # updated since: its energy at t_last was kept by that update
                x = h.e_row if h.t_row == t_last else h.energy + c * (t_last - last)
                incs.append((h.energy + c * (now - last) if last < now else h.energy) - x)
            else:
                x = h.energy + c * (t_last - last) if last < t_last else h.energy
                incs.append((x + c * dt) - x)
        incs.extend(map(sub, self._st_energy, self._st_row))   # (storage: read at each row)
        return exact_sum(incs) / dt
