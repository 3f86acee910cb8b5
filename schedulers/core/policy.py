"""The one base class every scheduling policy derives from.

A policy is pure decision logic: it receives typed events (:mod:`schedulers.core.events`) and
returns decisions. It never touches sockets or files, so the same class runs

* in the embedded engine (:mod:`schedulers.engine`), called in-process,
* behind the ZeroMQ server against real Batsim (``gridsched serve``),
* as a pybatsim plugin (:mod:`schedulers.batsim.pybatsim_glue`).

The transport calls :meth:`Policy.decide` once per Batsim message. The base class keeps the
bookkeeping every policy needs (known jobs, running jobs, hosts free for a new job, pstates) and
dispatches each event to an ``on_*`` callback; after the events of a message it calls
:meth:`Policy.schedule`, where queue-based policies make their decisions. Callbacks a policy does
not need are no-ops; unknown event types go to :meth:`Policy.on_unknown_event` and are ignored by
default (never a crash). After :meth:`Policy.schedule`, the base runs the idle-host shutdown every
policy may switch on with the option ``idle_timeout`` (:mod:`schedulers.core.shutdown`).

Writing a policy (the documentation's tutorial has it in full)::

    class MyPolicy(Policy):
        name = "mine"

        def __init__(self, options=None):
            super().__init__(options)
            self.queue = []

        def on_job_submitted(self, job):
            self.queue.append(job)

        def schedule(self):
            while self.queue and self.queue[0].res <= self.nb_available:
                job = self.queue.pop(0)
                self.execute(job, first_hosts(self.available, job.res))
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Iterable, NoReturn

from procset import ProcSet

from .backfilling import lowest_bits, mask_to_procset, procset_to_mask
from .limits import NO_DOUBLE
from .events import (
    Answer,
    CallMeLater,
    Decision,
    EXECUTE_JOB_FIELDS,
    Event,
    ExecuteJob,
    GenericEvent,
    JobCompleted,
    JobKilled,
    JobSubmitted,
    KillJobs,
    Notify,
    NotifyBatsim,
    Query,
    RegisterJob,
    RegisterProfile,
    RejectJob,
    RequestedCall,
    ResourceStateChanged,
    SetResourceState,
    SimulationBegins,
    SimulationEnds,
)
from .model import Host, HostState, Job, JobState, Platform, as_index
from .model import HostInfoUnknown, PolicyError, PolicyInputError  # noqa: F401 - re-exported (defined beside Host, which raises them)
from .options import Option  # noqa: F401 - re-exported: what option_docs values may be
from . import shutdown as _shutdown


#: ``JobState(name)`` for every member name (names and values are the same strings).
_JOB_STATE_BY_NAME: dict[str, JobState] = {name: JobState(name) for name in JobState.__members__}

#: the NOTIFY types of Batsim's machine events (``--events``; :meth:`Policy._on_availability`)
_AVAILABILITY = ("event_machine_unavailable", "event_machine_available")
_RUNNING = JobState.RUNNING
#: host states in which a host is not awake (see :meth:`Policy._awake`)
_NOT_AWAKE = (HostState.SLEEPING, HostState.SWITCHING_OFF, HostState.SWITCHING_ON, HostState.UNAVAILABLE)


def as_procset(hosts: ProcSet | Iterable[int] | int) -> ProcSet:
    """Normalise host ids given as a ProcSet, an iterable of ints or one int (Python's or
    NumPy's: a NumPy array of host ids, ``np.int64(3)``).

    Raises:
        PolicyError: a host id that is not an integer >= 0 (a bool, a float, a string: ``True``
            would silently be host 1, ``"12"`` hosts 1 and 2), or ``hosts`` is none of the above.
    """
    if isinstance(hosts, ProcSet):
        return hosts
    if isinstance(hosts, int) and not isinstance(hosts, bool) and hosts >= 0:
        return ProcSet(hosts)
    one = as_index(hosts) if not isinstance(hosts, Iterable) else None   # (NumPy's integers too)
    if one is not None and one >= 0:
        return ProcSet(one)
    if isinstance(hosts, (bool, int, float, str, bytes)) or not isinstance(hosts, Iterable):
        raise PolicyError(f"host ids must be a ProcSet, integers >= 0 or one integer >= 0, got {hosts!r}")
    items = list(hosts)
    ids = []
    for h in items:
        k = as_index(h)
        if k is None or k < 0:
            raise PolicyError(f"host ids must be integers >= 0, got {h!r} in {_show_hosts(items)}")
        ids.append(k)   # (a Python int: ProcSet refuses NumPy's)
    return ProcSet(*ids)


def _check_extra(job: Job, extra: dict[str, Any]) -> None:
    """Refuse EXECUTE_JOB fields Batsim 4.2.1 does not have (a misspelt ``storage_maping``);
    the engine judges the values and their number, as Batsim does."""
    others = sorted(k for k in extra if k not in EXECUTE_JOB_FIELDS)
    if others:
        raise PolicyError(f"job {job.id}: execute got {', '.join(others)}, not a field of Batsim 4.2.1's "
                          f"EXECUTE_JOB (its optional fields: {', '.join(EXECUTE_JOB_FIELDS)})")


def _show_hosts(items: list) -> str:
    text = repr(items)
    return text if len(text) <= 80 else text[:77] + "..."


class _HostSet:
    """A set of host ids kept as an ``int`` bit mask, with a :class:`ProcSet` view made on demand.

    procset 1.0 is pure Python: ``-=`` / ``|=`` on a fragmented set cost tens of microseconds,
    while mask operations cost well under one. The view behaves like the plain ProcSet attribute it
    replaces: once handed out it stays the same object and follows every change of the set (it is
    updated in place), and changes made to it in place (``-=``, ``discard``...) are seen back by
    the mask (procset's in-place operations replace ``_itvs``, which :meth:`mask` detects). While
    nobody asks for the view (FCFS and EASY use :attr:`Policy.available_mask`), no ProcSet is built.
    """

    __slots__ = ("_mask", "_ps", "_itvs")

    def __init__(self, mask: int = 0) -> None:
        self._mask = mask
        self._ps: ProcSet | None = None   # the view, once somebody asked for it
        self._itvs: list | None = None    # the view's ``_itvs`` list when last synchronised

    def mask(self) -> int:
        ps = self._ps
        if ps is not None and ps._itvs is not self._itvs:  # noqa: SLF001 - changed in place by its holder
            self._mask = procset_to_mask(ps)
            self._itvs = ps._itvs  # noqa: SLF001
        return self._mask

    def procset(self) -> ProcSet:
        ps = self._ps
        if ps is None:
            ps = self._ps = mask_to_procset(self._mask)
            self._itvs = ps._itvs  # noqa: SLF001
        return ps

    def assign(self, hosts: ProcSet) -> None:
        """Replace the set by ``hosts`` (which becomes the view)."""
        ps = as_procset(hosts)
        self._mask = procset_to_mask(ps)
        self._ps = ps
        self._itvs = ps._itvs  # noqa: SLF001

    def reset(self, mask: int) -> None:
        """Replace the set by ``mask``; the next view is a new object (as after an assignment)."""
        self._mask = mask
        self._ps = self._itvs = None

    def set_mask(self, mask: int) -> None:
        """Change the set (the view, if handed out, follows in place)."""
        self._mask = mask
        ps = self._ps
        if ps is not None:  # update the view in place, as procset's own ``-=`` / ``|=`` do
            ps._itvs = mask_to_procset(mask)._itvs  # noqa: SLF001
            self._itvs = ps._itvs  # noqa: SLF001


#: Batsim features a policy may need (:attr:`Policy.requires`): name -> (Batsim's command-line
#: flag, the key of SIMULATION_BEGINS's ``config`` that reports it, the engine's keyword argument).
#: Keys and flags as Batsim 4.2.1 names them (``src/batsim.cpp`` options, ``protocol.cpp``
#: ``append_simulation_begins``; the recorded transcripts in ``shared/batsim-4.2.1`` carry them).
FEATURES: dict[str, tuple[str, str, str]] = {
    "dynamic-jobs": ("--enable-dynamic-jobs", "dynamic-jobs-enabled", "dynamic_jobs"),
    "forward-profiles": ("--forward-profiles-on-submission", "profiles-forwarded-on-submission",
                         "forward_profiles"),
}


def batsim_flags(policy: "type[Policy] | Policy") -> list[str]:
    """Batsim's command-line flags for the features ``policy`` requires (:attr:`Policy.requires`),
    e.g. ``["--enable-dynamic-jobs", "--forward-profiles-on-submission"]`` for OSEP."""
    return [FEATURES[f][0] for f in sorted(policy.requires)]


def engine_flags(policy: "type[Policy] | Policy") -> dict[str, bool]:
    """The embedded engine's keyword arguments (``dynamic_jobs=True``...) for the features
    ``policy`` requires."""
    return {FEATURES[f][2]: True for f in sorted(policy.requires)}


class PolicyOptionError(ValueError):
    """A policy option that is unknown to the policy or has a bad value (one line naming the
    policy, the option and what is accepted). Raised by :func:`schedulers.registry.get_policy`
    for unknown keys and by a policy's constructor for bad values."""


def option_number(policy: str, options: dict[str, Any], key: str, default: float, *,
                  low: float = -math.inf, high: float = math.inf, low_open: bool = False,
                  high_open: bool = False) -> float:
    """Option ``key`` of ``options`` (``default`` when absent) as a float, checked: a finite or
    infinite JSON number (not a boolean, nor an integer no double holds: 2**1024 and more, which
    a TOML file or Python may give) in the interval from ``low`` to ``high``, each end closed
    unless ``low_open`` / ``high_open``.

    Raises:
        PolicyOptionError: one line naming the policy, the option, the interval and the value.
    """
    v = options.get(key, default)
    ok = not isinstance(v, bool) and isinstance(v, (int, float)) and v == v \
        and (not isinstance(v, int) or -NO_DOUBLE < v < NO_DOUBLE) \
        and (v > low if low_open else v >= low) and (v < high if high_open else v <= high)
    if not ok:
        if high == math.inf:
            what = f"{'>' if low_open else '>='} {low:.15g}"
        else:
            what = f"in {'(' if low_open else '['}{low:.15g}, {high:.15g}{')' if high_open else ']'}"
        raise PolicyOptionError(f"policy {policy!r}: option {key!r} must be a number {what}, got {v!r}")
    return float(v)


def option_flag(policy: str, options: dict[str, Any], key: str, default: bool = False) -> bool:
    """Option ``key`` as a boolean (``default`` when absent).

    Raises:
        PolicyOptionError: not ``true`` / ``false`` (one line naming the policy and the option).
    """
    v = options.get(key, default)
    if not isinstance(v, bool):
        raise PolicyOptionError(f"policy {policy!r}: option {key!r} must be true or false, got {v!r}")
    return v


def option_choice(policy: str, options: dict[str, Any], key: str, default: str, choices: tuple[str, ...]) -> str:
    """Option ``key``, one of ``choices`` (``default`` when absent).

    Raises:
        PolicyOptionError: another value (one line listing the choices).
    """
    v = options.get(key, default)
    if v not in choices:
        raise PolicyOptionError(f"policy {policy!r}: option {key!r} must be one of "
                                f"{', '.join(map(repr, choices))}, got {v!r}")
    return v


def option_unused(policy: str, options: dict[str, Any], keys: tuple[str, ...], setting: str) -> None:
    """Refuse an option of ``keys`` given in ``options`` that ``setting`` (e.g. ``"rule 'ema'"``,
    the other options as given) makes the policy ignore: a run labelled with a value it never used.

    Raises:
        PolicyOptionError: one line naming the policy, the option and the setting.
    """
    for key in keys:
        if key in options:
            raise PolicyOptionError(f"policy {policy!r}: option {key!r} has no effect with {setting}: drop it "
                                    f"(a run would be labelled with a value it never used)")


class Policy:
    """Base class of all policies (see the module docstring).

    A subclass overrides the event hooks it needs (``on_*``, all no-ops here) and
    :meth:`schedule`, and decides with :meth:`execute`, :meth:`reject`, :meth:`kill`,
    :meth:`call_me_later`, :meth:`set_pstate`... Decisions are sent to Batsim in the order they
    are made, all dated at :attr:`now`. The base class keeps the attributes below up to date
    before each hook is called; a policy reads them and changes them only through decisions.

    Args:
        options: the policy's options (``--policy-options`` JSON object on the command line, a
            campaign's ``options``); every key is one of :attr:`option_docs` (checked by
            :func:`schedulers.registry.get_policy`). Subclasses read and check them in their
            constructor (:func:`option_number`, :func:`option_flag`, :func:`option_choice`).

    Raises:
        PolicyOptionError: a bad ``idle_timeout`` value (subclasses raise it for their own
            options).

    Attributes:
        options: the options given (a copy; ``{}`` when none).
        now: the current simulation time (s): the ``now`` of the Batsim message being handled.
        platform: the compute hosts (:class:`~schedulers.core.model.Platform`), known from
            SIMULATION_BEGINS on (:meth:`on_simulation_begins`); empty before.
        storage_hosts: the storage hosts (role ``storage``; :class:`~schedulers.core.model.Host`
            objects, their ``id`` after the compute hosts' ids), known from SIMULATION_BEGINS on:
            the machine ids a ``storage_mapping`` names (:meth:`execute`).
        jobs: the jobs seen so far, by id (``"w0!3"``): waiting, running and ended (a policy with
            :attr:`forget_finished_jobs` drops each ended job after the message reporting it).
        jobs_seen: how many jobs were ever added to :attr:`jobs`.
        running: the running jobs, by id.
        available: ids of the hosts a job may start on now: awake (in a computation pstate, not
            switching), available (no external event made them unavailable) and running no job.
            A ``ProcSet``; :meth:`execute` removes the job's hosts at once, a job's end puts them
            back before :meth:`on_job_completed`.
        allocated: ids of the hosts that run a job.
        available_mask: :attr:`available` as an ``int`` bit mask (bit ``i`` set = host ``i``),
            without building a ProcSet: the fast path for policies that choose hosts on masks.
        nb_available: the number of hosts in :attr:`available`.
        no_more_static_jobs: True once Batsim said ``no_more_static_job_to_submit`` (every job of
            the workload files has been submitted).
        no_more_external_events: True once Batsim said ``no_more_external_event_to_occur`` (every
            event of its ``--events`` files has occurred).
        simulation_ended: True once SIMULATION_ENDS arrived.
        consumed_energy: the last energy (J) Batsim answered to :meth:`query_consumed_energy`, or
            None.
    """

    name: ClassVar[str] = "policy"
    """The name the policy is known by (``--policy NAME`` once registered, messages)."""

    summary: ClassVar[str] = ""
    """One plain sentence saying what the policy does, shown by ``gridsched policies``; empty:
    the first line of the class docstring is shown instead."""

    references: ClassVar[tuple[str, ...]] = ()
    """The works the policy follows: keys of :data:`schedulers.references.REFERENCES`
    (``"easy"``, ``"hosep"``...), cited in full by ``gridsched policies NAME`` and the
    documentation."""

    needs_speeds: ClassVar[bool] = False
    """True for a policy that uses host speeds or cores (:attr:`Host.speeds`, :attr:`Host.cores`):
    the simulation then stops at SIMULATION_BEGINS with :class:`HostInfoUnknown` when they are
    unknown (real Batsim without ``--platform FILE``) instead of at the first use. Reading them
    while unknown raises it anyway; FCFS and EASY use neither."""

    option_docs: ClassVar[dict[str, str]] = dict(_shutdown.OPTION_DOCS)
    """The options this policy reads: name -> description, a string or an
    :class:`~schedulers.core.options.Option` (which also gives the values it takes and its
    default, shown by ``gridsched policies NAME``). :func:`schedulers.registry.get_policy` refuses
    any other key, so that a misspelt option is an error and not a silently ignored setting;
    campaigns route option axes by it. The base option ``idle_timeout``
    (:mod:`schedulers.core.shutdown`) is merged into every subclass's own ``option_docs``."""

    idle_shutdown: ClassVar[bool] = True
    """False for a policy that does not run the base's idle-host shutdown (``replay``, which
    overrides :meth:`decide`): ``idle_timeout`` is then not one of its options."""

    requires: ClassVar[frozenset[str]] = frozenset()
    """Batsim features the policy cannot run without (keys of :data:`FEATURES`:
    ``"dynamic-jobs"``, ``"forward-profiles"``): ``gridsched run`` and campaigns switch them on,
    and at SIMULATION_BEGINS the policy stops with a one-line :class:`PolicyError` naming Batsim's
    flag when Batsim reports one of them off (real Batsim behind ``gridsched serve`` started
    without it)."""

    forget_finished_jobs: ClassVar[bool] = False
    """True for a policy that never looks a job up once it completed (FCFS, EASY and the policies
    built on them): :attr:`jobs` then drops each job that completed at the end of the message
    reporting it (after :meth:`on_job_completed`, :meth:`on_jobs_killed`, :meth:`schedule` and
    the idle-host shutdown), so that a run keeps the waiting and running jobs only, not every
    job of a million-job trace. Rejected jobs stay. :attr:`jobs_seen` counts the jobs anyway."""

    takes_jobs_of_no_host: ClassVar[bool] = False
    """False (every gridsched policy): a job of ``res`` 0, which Batsim 4.2.1 accepts and submits,
    is rejected (REJECT_JOB) at its submission by the base class, without :meth:`on_job_submitted`:
    no host count fits it, and an EXECUTE_JOB without hosts makes Batsim abort. True: such jobs
    reach :meth:`on_job_submitted`, and :meth:`execute` starts one on any non-empty set of hosts,
    which Batsim runs only for a ``parallel_homogeneous_total`` profile, or a ``composed`` one of
    only such profiles (its work spread over the hosts given); for another profile it aborts."""

    #: A subclass overrides :meth:`execute`: :meth:`execute_mask` then goes through it.
    _own_execute: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        docs = cls.option_docs   # (checked here, at the class: a policy file's mistake names its class)
        bad = next((f"{k!r}: {v!r}" for k, v in docs.items() if not isinstance(k, str) or not isinstance(v, (str, Option))),
                   None) if isinstance(docs, dict) else f"{type(docs).__name__} {docs!r}"
        if bad is not None:
            raise TypeError(f"{cls.__name__}.option_docs must map option names to descriptions (a string or "
                            f"schedulers.core.options.Option), got {bad[:80]}")
        unknown = sorted(str(f) for f in cls.requires if f not in FEATURES) \
            if isinstance(cls.requires, (set, frozenset, tuple, list)) else [repr(cls.requires)]
        if unknown:
            raise TypeError(f"{cls.__name__}.requires names unknown Batsim features {', '.join(unknown)}; known: "
                            f"{', '.join(sorted(FEATURES))}")
        cls._own_execute = cls.execute is not Policy.execute
        if cls.idle_shutdown and not _shutdown.OPTION_DOCS.keys() <= cls.option_docs.keys():
            cls.option_docs = {**cls.option_docs, **_shutdown.OPTION_DOCS}

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        self.options: dict[str, Any] = dict(options or {})
        self._tracked: set[str] = set()   # ids registered with track=True, acknowledgement pending
        self._extra_jobs: dict[int, int] = {}  # host id -> running jobs on it beyond the first (sharing)
        self.now: float = 0.0
        self.platform: Platform = Platform(hosts=[])
        self.storage_hosts: list[Host] = []
        self.jobs: dict[str, Job] = {}
        self.jobs_seen = 0  # jobs ever added to ``jobs`` (it may drop completed ones, forget_finished_jobs)
        self._completed: list[str] = []  # ids to drop from ``jobs`` after this message
        self.running: dict[str, Job] = {}
        self._running_masks: dict[str, int] = {}  # job id -> its allocation as a bit mask, while it runs
        self._available = _HostSet()
        self._allocated = _HostSet()
        self.no_more_static_jobs: bool = False
        self.no_more_external_events: bool = False
        self.simulation_ended: bool = False
        self.consumed_energy: float | None = None
        self._decisions: list[Decision] = []
        self._shutdown = _shutdown.IdleShutdown.from_options(self)  # None: idle_timeout off

    # ------------------------------------------------------------------------------- host sets
    @property
    def available(self) -> ProcSet:
        """Ids of the hosts awake and not allocated (see the class docstring)."""
        return self._available.procset()

    @available.setter
    def available(self, hosts: ProcSet) -> None:
        self._available.assign(hosts)

    @property
    def allocated(self) -> ProcSet:
        """Ids of the hosts allocated to running jobs."""
        return self._allocated.procset()

    @allocated.setter
    def allocated(self, hosts: ProcSet) -> None:
        self._allocated.assign(hosts)

    @property
    def available_mask(self) -> int:
        """:attr:`available` as a bit mask (bit ``i`` set = host ``i``): the fast path for policies."""
        return self._available.mask()

    @property
    def nb_available(self) -> int:
        """``len(self.available)``, without building the ProcSet."""
        return self._available.mask().bit_count()

    # ------------------------------------------------------------------ driver (called by transports)
    def decide(self, now: float, events: list[Event]) -> list[Decision]:
        """Handle the events of one Batsim message and return the decisions to send back.

        Args:
            now: the message's ``now`` (s).
            events: decoded events, in message order.

        Returns:
            The decisions, in the order the policy made them (Batsim applies them in that order).
        """
        self.now = float(now)
        self._decisions = []
        for ev in events:
            self._dispatch(ev)
        if not self.simulation_ended:
            self.schedule()
            if self._shutdown is not None:
                self._shutdown.step()
        if self._completed:
            for jid in self._completed:
                self.jobs.pop(jid, None)
            self._completed.clear()
        out, self._decisions = self._decisions, []
        return out

    def _dispatch(self, ev: Event) -> None:
        job: Job | None
        if isinstance(ev, JobSubmitted):
            job = ev.job
            if job.id in self._tracked:  # the acknowledgement of a job registered with track=True
                self._tracked.discard(job.id)
                return
            self.jobs[job.id] = job
            self.jobs_seen += 1
            if job.res == 0 and not self.takes_jobs_of_no_host:
                self.reject(job)
                return
            self.on_job_submitted(job)
        elif isinstance(ev, JobCompleted):
            job = self.jobs.get(ev.job_id)
            if job is None:  # a job we never saw (e.g. replayed transcript): still free its hosts
                self._release(ev.alloc)
                return
            job.state = _JOB_STATE_BY_NAME.get(ev.job_state, job.state)
            job.finish_time = ev.timestamp
            mask = self._running_masks.pop(job.id, None)
            if self.running.pop(job.id, None) is not None or job.allocation is not None:
                self._release(job.allocation if job.allocation is not None else ev.alloc, mask)
            self.on_job_completed(job)
            if self.forget_finished_jobs:
                self._completed.append(job.id)
        elif isinstance(ev, ResourceStateChanged):
            self._on_pstate(ev.resources, int(ev.state))
            self.on_resource_state_changed(ev.resources, ev.state)
        elif isinstance(ev, RequestedCall):
            self.on_requested_call()
        elif isinstance(ev, JobKilled):
            self.on_jobs_killed([self.jobs[j] for j in ev.job_ids if j in self.jobs], ev.job_progress)
        elif isinstance(ev, Answer):
            if ev.consumed_energy is not None:
                self.consumed_energy = ev.consumed_energy
            self.on_answer(ev)
        elif isinstance(ev, Notify):
            if ev.type == "no_more_static_job_to_submit":
                self.no_more_static_jobs = True
            elif ev.type == "no_more_external_event_to_occur":
                self.no_more_external_events = True
            elif ev.type in _AVAILABILITY and isinstance(ev.data.get("resources"), str):
                self._on_availability(ProcSet.from_str(ev.data["resources"]), ev.type == "event_machine_available")
            self.on_notify(ev)
        elif isinstance(ev, SimulationBegins):
            for feature in sorted(self.requires):
                flag, key, _ = FEATURES[feature]
                if ev.config.get(key) is False:
                    raise PolicyInputError(f"policy {self.name!r} needs Batsim's {flag}, but SIMULATION_BEGINS "
                                           f"says {key}: false; start Batsim with {flag}")
            hosts = ev.compute_resources
            self.platform = Platform(hosts=hosts, config=ev.config,
                                     allow_compute_sharing=ev.allow_compute_sharing)
            self.storage_hosts = list(ev.storage_resources)
            if self.needs_speeds:
                self.platform.require_speeds(f"policy {self.name!r}")
            self._available.reset(procset_to_mask(
                [h.id for h in hosts if self._awake(h) and h.state == HostState.IDLE]))
            self.on_simulation_begins(self.platform)
        elif isinstance(ev, SimulationEnds):
            self.simulation_ended = True
            self.on_simulation_ends()
        else:
            self.on_unknown_event(ev)

    # ----------------------------------------------------------------------------- host bookkeeping
    @staticmethod
    def _is_sleep_pstate(host: Host, pstate: int) -> bool:
        return pstate in host.special_pstates

    @staticmethod
    def _awake(host: Host) -> bool:
        # (a pstate unknown behind real Batsim: Batsim's state says)
        return host.state not in _NOT_AWAKE and not host.in_sleep_pstate()

    def _release(self, alloc: ProcSet, mask: int | None = None) -> None:
        """Hosts ``alloc`` (bit mask ``mask`` when known) no longer run the job that ended."""
        if mask is None:
            mask = procset_to_mask(alloc)
        if self._extra_jobs:
            # a host another running job still holds (compute sharing) stays allocated
            keep = 0
            for i in alloc:
                n = self._extra_jobs.get(i)
                if n:
                    keep |= 1 << i
                    if n == 1:
                        del self._extra_jobs[i]
                    else:
                        self._extra_jobs[i] = n - 1
            if keep:
                mask &= ~keep
                if not mask:
                    return
                alloc = mask_to_procset(mask)
        hosts = self.platform.hosts
        computing = HostState.COMPUTING
        awake = 0
        awake_of = self._awake
        # (_compute_ids' one host, inlined: once a job's end)
        ids = ((mask.bit_length() - 1,) if not mask & (mask - 1) and mask.bit_length() <= len(hosts)
               else self._compute_ids(alloc, mask))
        for i in ids:
            h = hosts[i]
            if h.state == computing:
                h.state = HostState.IDLE
            if awake_of(h):
                awake |= 1 << i
        allocated = self._allocated
        allocated.set_mask(allocated.mask() & ~mask)
        if awake:
            available = self._available
            available.set_mask(available.mask() | awake)

    def _compute_ids(self, alloc: ProcSet, mask: int) -> Iterable[int]:
        """The ids of ``alloc`` (bit mask ``mask``) that are compute hosts (a storage machine's
        id comes after them), in increasing order; one host without iterating the ProcSet."""
        n = len(self.platform.hosts)
        if not mask & (mask - 1) and mask.bit_length() <= n:
            return (mask.bit_length() - 1,)
        return (i for first, end in alloc.intervals() for i in range(first, min(end, n - 1) + 1))

    def _on_availability(self, resources: ProcSet, available: bool) -> None:
        """Batsim's external events (``--events``): machines made unavailable take no new job
        (Batsim aborts on EXECUTE_JOB there; their running jobs go on) and leave :attr:`available`;
        made available again, a machine is ``computing`` if it still runs a job, else ``idle``
        (``server_on_event_machine_(un)available``, Batsim 4.2.1 ``src/server.cpp``). Then
        :meth:`on_machines_unavailable` / :meth:`on_machines_available`."""
        hosts = self.platform.hosts
        mask = 0
        for i in resources:
            if i >= len(hosts):   # (a storage machine)
                continue
            h = hosts[i]
            if available:
                h.state = HostState.COMPUTING if self._allocated.mask() >> i & 1 else HostState.IDLE
                if self._awake(h) and h.state == HostState.IDLE:
                    mask |= 1 << i
            else:
                h.state = HostState.UNAVAILABLE
                mask |= 1 << i
        if available:
            self._available.set_mask(self._available.mask() | mask)
            self.on_machines_available(resources)
        else:
            self._available.set_mask(self._available.mask() & ~mask)
            self.on_machines_unavailable(resources)

    def _on_pstate(self, resources: ProcSet, pstate: int) -> None:
        for i in resources:
            if i >= len(self.platform.hosts):
                continue
            h = self.platform.hosts[i]
            h.pstate = pstate
            if self._is_sleep_pstate(h, pstate):
                h.state = HostState.SLEEPING
                self._available.set_mask(self._available.mask() & ~(1 << i))
            else:
                if h.state != HostState.COMPUTING:
                    h.state = HostState.IDLE
                    if not self._allocated.mask() >> i & 1:
                        self._available.set_mask(self._available.mask() | 1 << i)

    # ------------------------------------------------------------------------ decisions (for policies)
    def execute(self, job: Job, hosts: ProcSet | Iterable[int] | int, **extra: Any) -> None:
        """Start ``job`` now on ``hosts`` (EXECUTE_JOB).

        The job becomes ``RUNNING`` (``start_time`` = :attr:`now`, ``allocation`` = the hosts) and
        its hosts leave :attr:`available` at once. Batsim runs the job's profile on them; it ends
        with JOB_COMPLETED (:meth:`on_job_completed`), at the latest at ``now + walltime``.

        Args:
            job: a waiting job (state ``SUBMITTED``).
            hosts: exactly ``job.res`` host ids: a ``ProcSet``, an iterable of ints or one int.
                They should be in :attr:`available`; a host that runs another job is shared with
                it (only allowed with Batsim's compute sharing, else Batsim stops the run).
            extra: other fields of Batsim's EXECUTE_JOB (rarely needed): ``storage_mapping``, the
                storage hosts of the job's IO profiles (``parallel_homogeneous_pfs``,
                ``data_staging``) by label, ``{"pfs": machine id}`` (ids of
                :attr:`storage_hosts`); ``mapping``, executors on hosts; ``additional_io_job``,
                an IO profile run inside the job's parallel tasks, ``{"profile_name": name,
                "alloc": "0-1 4", "profile": {...}}`` (``alloc``: machine ids, storage hosts
                included; ``profile``: optional, defines a new profile ``name``), e.g.
                ``self.execute(job, [0, 1], additional_io_job={"profile_name": "io_" + job.name,
                "alloc": str(ProcSet(0, 1, self.storage_hosts[0].id)), "profile": {"type":
                "parallel", "cpu": [0, 0, 0], "com": [0, 0, 1e9, 0, 0, 1e9, 0, 0, 0]}})`` (each
                host writes 1e9 bytes to the storage host while the job runs; the engine's
                fidelity page says how Batsim merges the two). Batsim 4.2.1 accepts one of them
                at a time.

        Raises:
            PolicyError: the job is not waiting, ``hosts`` has not exactly ``job.res`` hosts (a
                job of ``res`` 0, see :attr:`takes_jobs_of_no_host`: no host), or holds a host id
                that is not an integer >= 0 (``True``, ``0.5``, ``"1"``) or past every machine of
                the platform; ``extra`` names a field EXECUTE_JOB does not have.
        """
        alloc = as_procset(hosts)
        self._check_start(job, alloc, len(alloc))
        m = procset_to_mask(alloc)
        self._check_decision(job, m, extra)
        self._start(job, alloc, m, extra)

    def execute_mask(self, job: Job, mask: int, **extra: Any) -> None:
        """:meth:`execute` on the hosts of bit mask ``mask`` (bit ``i`` set = host ``i``): the
        fast path for policies that choose hosts on masks (:attr:`available_mask`,
        :func:`~schedulers.core.backfilling.lowest_bits`). A subclass that overrides
        :meth:`execute` still sees every start: this then calls it with the hosts' ProcSet.

        Raises:
            PolicyError: the job is not waiting, ``mask`` has not exactly ``job.res`` bits set or
                a bit past every machine of the platform, or ``extra`` names a field EXECUTE_JOB
                does not have.
            ValueError: ``mask`` is negative.
        """
        alloc = mask_to_procset(mask)
        if self._own_execute:
            self.execute(job, alloc, **extra)
            return
        self._check_start(job, alloc, mask.bit_count())
        self._check_decision(job, mask, extra)
        self._start(job, alloc, mask, extra)

    @staticmethod
    def _check_start(job: Job, alloc: ProcSet, count: int) -> None:
        """Refuse to start ``job`` unless it waits and ``alloc`` has ``count`` = ``job.res`` hosts."""
        if not isinstance(job, Job):
            raise PolicyError(f"execute takes a job (a Job object, e.g. self.jobs[job_id]), got {type(job).__name__} "
                              f"{job!r}")
        if job.state != JobState.SUBMITTED:
            raise PolicyError(f"job {job.id} cannot start: it is {job.state.value}")
        if count != job.res and not (job.res == 0 and count):
            raise PolicyError(f"job {job.id} requests {job.res} hosts but the allocation {alloc} has {count}")
        if not count:   # (res 0: the engine had no host to run it on; the protocol sends no empty alloc)
            raise PolicyError(f"job {job.id} of res 0 cannot start on no host: EXECUTE_JOB's allocation needs at "
                              "least one host, on which the job runs")

    def _check_decision(self, job: Job, mask: int, extra: dict[str, Any]) -> None:
        """Refuse an EXECUTE_JOB on a host past every machine of the platform, or with a field
        Batsim 4.2.1's EXECUTE_JOB does not have (:meth:`execute` and :meth:`execute_mask`)."""
        if extra:
            _check_extra(job, extra)
        if mask >> (len(self.platform.hosts) + len(self.storage_hosts)):
            self._no_such_host(job, mask)

    def _no_such_host(self, job: Job, mask: int) -> NoReturn:
        """Refuse to start ``job`` on the hosts of bit mask ``mask``, some of them past every
        machine of the platform (Batsim 4.2.1 aborts on such an id); the first of those is named."""
        n, s = len(self.platform.hosts), len(self.storage_hosts)
        beyond = mask >> (n + s)
        host = n + s + (beyond & -beyond).bit_length() - 1
        ids = f"ids 0-{n - 1}" if n else "no id"
        storage = f", and {s} storage host{'s' if s > 1 else ''} after them (up to id {n + s - 1})" if s else ""
        raise PolicyError(f"job {job.id} cannot start on host {host}: it does not exist (the platform has {n} "
                          f"compute hosts, {ids}{storage})")

    def running_mask(self, job: Job) -> int:
        """The hosts of running ``job`` as a bit mask (bit ``i`` set = host ``i``); 0 when it does
        not run (EASY's profile reads it for every running job)."""
        m = self._running_masks.get(job.id)
        if m is None:
            m = procset_to_mask(job.allocation) if job.allocation is not None else 0
        return m

    def _start(self, job: Job, alloc: ProcSet, m: int, extra: dict[str, Any]) -> None:
        """The bookkeeping of a job started on ``alloc`` (mask ``m``), and its EXECUTE_JOB."""
        jid = job.id
        job.state = _RUNNING
        job.start_time = self.now
        job.allocation = alloc
        self.running[jid] = job
        self._running_masks[jid] = m
        allocated, available = self._allocated, self._available
        was = allocated.mask()
        shared = m & was
        if shared:  # compute sharing: these hosts already run a job (see _release)
            for i in mask_to_procset(shared):
                self._extra_jobs[i] = self._extra_jobs.get(i, 0) + 1
        available.set_mask(available.mask() & ~m)
        allocated.set_mask(was | m)
        hosts = self.platform.hosts
        computing = HostState.COMPUTING
        if not m & (m - 1) and m.bit_length() <= len(hosts):   # (_compute_ids' one host, inlined)
            hosts[m.bit_length() - 1].state = computing
        else:
            for i in self._compute_ids(alloc, m):
                hosts[i].state = computing
        self._decisions.append(ExecuteJob(job_id=jid, alloc=alloc, extra=extra))

    def reject(self, job: Job) -> None:
        """Reject ``job`` (REJECT_JOB): it never runs and ends in state ``REJECTED``
        (``out_jobs.csv`` counts it, with ``success`` 0). Policies reject the jobs that could
        never start, e.g. larger than the platform.

        Raises:
            PolicyError: ``job`` is not a Job (an id ``"w0!1"``: use ``self.jobs[id]``), or is not
                waiting (running, rejected or ended: Batsim 4.2.1 aborts on it).
        """
        if not isinstance(job, Job):
            raise PolicyError(f"reject takes a job (a Job object, e.g. self.jobs[job_id]), got {type(job).__name__} "
                              f"{job!r}")
        if job.state is not JobState.SUBMITTED:
            raise PolicyError(f"job {job.id} cannot be rejected: it is {job.state.value}, not waiting (Batsim 4.2.1 "
                              "aborts on it)")
        job.state = JobState.REJECTED
        self._decisions.append(RejectJob(job_id=job.id))

    def kill(self, jobs: Iterable[Job]) -> None:
        """Kill running jobs (KILL_JOB). Each ends ``COMPLETED_KILLED``: Batsim answers with a
        JOB_COMPLETED per job (:meth:`on_job_completed`, which frees its hosts) and one JOB_KILLED
        with each job's progress (:meth:`on_jobs_killed`). Nothing is sent for an empty list.

        Raises:
            PolicyError: ``jobs`` holds something else than jobs (an id ``"w0!1"``: use
                ``self.jobs[id]``), or is one job not in a list; or a job waiting or rejected,
                where Batsim 4.2.1 aborts (a waiting job is rejected instead).
        """
        if isinstance(jobs, Job):
            raise PolicyError(f"kill takes a list of jobs, got the job {jobs.id!r} alone: kill([job])")
        jobs = list(jobs)
        bad = next((j for j in jobs if not isinstance(j, Job)), None)
        if bad is not None:
            raise PolicyError(f"kill takes jobs (Job objects, e.g. self.jobs[job_id]), got {type(bad).__name__} "
                              f"{bad!r}")
        for j in jobs:
            if j.state is JobState.SUBMITTED:
                raise PolicyError(f"job {j.id} cannot be killed: it is waiting (Batsim 4.2.1 aborts: \"Invalid KILL_JOB: "
                                  f"job_id '{j.id}' refers to a job not being executed nor completed.\"); reject a "
                                  "waiting job instead: self.reject(job)")
            if j.state is JobState.REJECTED:
                raise PolicyError(f"job {j.id} cannot be killed: it was rejected (Batsim 4.2.1's killer aborts: \"Bad "
                                  f"kill: job {j.id} has not been started\")")
        ids = [j.id for j in jobs]
        if ids:
            self._decisions.append(KillJobs(job_ids=ids))

    def call_me_later(self, at: float) -> None:
        """Ask Batsim for a REQUESTED_CALL at time ``at`` (s, absolute simulation time):
        :meth:`on_requested_call`, then :meth:`schedule`, run then. ``at`` must be later than
        :attr:`now` (Batsim 4.2.1 aborts on a call that is not in the future).

        Raises:
            PolicyError: ``at`` is not a finite number, or is more than 1e-6 s before :attr:`now`
                (a time in the past, where Batsim 4.2.1 aborts; often a delay given for the time:
                ``call_me_later(self.now + delay)``). Closer to :attr:`now`, Batsim's clock, of
                which ``now`` is printed with 6 decimals, decides.
        """
        try:
            when = float(at)
        except (TypeError, ValueError):
            when = math.nan
        if not math.isfinite(when):
            raise PolicyError(f"call_me_later: the time must be a finite number of seconds, got {at!r}")
        if self.now - when > 1e-6:
            raise PolicyError(f"call_me_later({at!r}) at t={self.now!r}: the time is in the past (Batsim 4.2.1 aborts: "
                              "'You asked to be awaken in the past!'); it is the absolute time of the call, s since "
                              "the start: call_me_later(self.now + delay) for a call in delay s")
        self._decisions.append(CallMeLater(at=when))

    def set_pstate(self, hosts: ProcSet | Iterable[int] | int, pstate: int) -> None:
        """Switch ``hosts`` to pstate index ``pstate`` (SET_RESOURCE_STATE; needs Batsim's energy
        model, ``--energy``).

        A computation pstate changes the hosts' speed (:attr:`Host.speeds`) and power at once.
        The sleep pstate ``S`` of ``sleep_pstates="S:OFF:ON"`` switches them off: they leave
        :attr:`available` at once, compute Batsim's one flop at the virtual pstate ``OFF``, then
        sleep; a sleeping host woken to a computation pstate computes one flop at ``ON`` first.
        Batsim reports the end of a switch with RESOURCE_STATE_CHANGED
        (:meth:`on_resource_state_changed`); the hosts are back in :attr:`available` then.

        Raises:
            PolicyError: a host id that is not an integer >= 0 or that the platform does not
                have, or a ``pstate`` that is not an integer >= 0 (``1.5`` was sent as pstate 1)
                or that a host whose speeds are known does not have; a simulation known to run
                without the energy model (Batsim aborts).
        """
        self._need_energy("set_pstate (SET_RESOURCE_STATE)")
        res = as_procset(hosts)
        index = as_index(pstate)
        if index is None or index < 0:
            raise PolicyError(f"set_pstate: the pstate must be an integer index >= 0, got {pstate!r}")
        pstate = index
        n = len(self.platform.hosts)
        if res and res.max >= n:   # (an IndexError of the base class otherwise)
            raise PolicyError(f"set_pstate: host {res.max} does not exist (the platform has {n} compute hosts, "
                              f"ids 0-{n - 1})")
        hosts = self.platform.hosts
        lacking = next((i for i in res if hosts[i].speeds_known and pstate >= len(hosts[i].speeds)), None)
        if lacking is not None:   # (known: the embedded engine, or serve --platform)
            h = hosts[lacking]
            raise PolicyError(f"set_pstate: host {lacking} ({h.name}) has no pstate {pstate} (its pstates: "
                              f"0-{len(h.speeds) - 1}; Batsim 4.2.1 aborts)")
        for i in res:
            h = self.platform.hosts[i]
            if self._is_sleep_pstate(h, pstate):
                h.state = HostState.SWITCHING_OFF
                self._available.set_mask(self._available.mask() & ~(1 << i))
            elif h.pstate_known and self._is_sleep_pstate(h, h.pstate):
                h.state = HostState.SWITCHING_ON
        self._decisions.append(SetResourceState(resources=res, state=str(int(pstate))))

    def query_consumed_energy(self) -> None:
        """Ask Batsim for the energy the platform consumed since the start (J; needs
        ``--energy``): the answer comes in the next message, in :meth:`on_answer` and
        :attr:`consumed_energy`.

        Raises:
            PolicyError: a simulation known to run without the energy model.
        """
        self._need_energy("query_consumed_energy (QUERY consumed_energy)")
        self._decisions.append(Query(requests={"consumed_energy": {}}))

    def _need_energy(self, what: str) -> None:
        """Refuse ``what`` in a simulation known to run without Batsim's energy model
        (:attr:`Host.energy` False: the embedded engine, ``serve --no-energy``); unknown, it is
        sent (Batsim decides)."""
        hosts = self.platform.hosts
        if hosts and hosts[0].energy is False:
            raise PolicyError(f"{what} needs Batsim's energy model, and this simulation runs without it: run with "
                              "--energy (-E)")

    def notify(self, type_: str, **data: Any) -> None:
        """Send Batsim a NOTIFY of type ``type_`` with fields ``data``: ``registration_finished``
        (no more dynamic jobs will be registered: the simulation may end) or
        ``continue_registration``.

        Raises:
            PolicyError: another type (Batsim 4.2.1 aborts on it)."""
        if type_ not in ("registration_finished", "continue_registration"):
            raise PolicyError(f"notify: Batsim 4.2.1 takes a NOTIFY of type 'registration_finished' or "
                              f"'continue_registration' from the scheduler, got {type_!r} (it aborts on another)")
        self._decisions.append(NotifyBatsim(type=type_, data=dict(data)))

    def register_profile(self, workload: str, name: str, profile: dict[str, Any]) -> None:
        """REGISTER_PROFILE (Batsim ``--enable-dynamic-jobs``): add ``profile`` as ``name`` to
        ``workload`` (created when new). Register a job's profile before the job. Raises
        PolicyError when SIMULATION_BEGINS said dynamic jobs are disabled (Batsim aborts)."""
        self._need_dynamic_jobs(f"register_profile {workload}/{name}")
        self._decisions.append(RegisterProfile(workload=workload, name=name, profile=dict(profile)))

    def register_job(self, workload: str, name: str, res: int, profile: str, *, walltime: float = -1.0,
                     subtime: float | None = None, track: bool = False,
                     profile_data: dict[str, Any] | None = None, **extra: Any) -> str:
        """REGISTER_JOB (Batsim ``--enable-dynamic-jobs``): submit job ``workload!name`` of ``res``
        hosts running ``profile`` (s of ``walltime``, -1 = none), submitted now unless
        ``subtime`` (s) is given; extra fields (``user``...) go into the job. Returns the job id.
        End registrations with ``notify("registration_finished")``. Raises PolicyError when
        ``res`` is not an integer (a float, a boolean), or when SIMULATION_BEGINS said dynamic
        jobs are disabled (Batsim aborts).

        Without ``track``, the policy learns of the job as Batsim tells it: with
        ``--acknowledge-dynamic-jobs`` a JOB_SUBMITTED comes back (and :meth:`on_job_submitted`
        runs), otherwise nothing does. With ``track=True`` the job is known at once, whatever
        Batsim's acknowledgement setting: it is in :attr:`jobs` (state SUBMITTED, ``profile_data``
        as given) and may be started in the same reply; an acknowledgement, if Batsim sends one,
        is absorbed (no second :meth:`on_job_submitted`)."""
        self._need_dynamic_jobs(f"register_job {workload}!{name}")
        hosts = as_index(res)   # (int(2.7) would silently ask for 2 hosts)
        if hosts is None:
            raise PolicyError(f"register_job {workload}!{name}: res must be an integer number of hosts, got {res!r}")
        job_id = f"{workload}!{name}"
        job = {"id": name, "subtime": self.now if subtime is None else float(subtime), "res": hosts,
               "profile": profile, "walltime": float(walltime), **extra}
        self._decisions.append(RegisterJob(job_id=job_id, job=job))
        if track:
            self.jobs[job_id] = Job.from_json(job_id, job, profile_data)
            self.jobs_seen += 1
            self._tracked.add(job_id)
        return job_id

    def _need_dynamic_jobs(self, what: str) -> None:
        """Refuse ``what`` when SIMULATION_BEGINS's config says dynamic jobs are disabled."""
        if self.platform.config.get("dynamic-jobs-enabled") is False:
            raise PolicyError(f"{what}: dynamic job registration is disabled (Batsim aborts); enable it with "
                              "Batsim's --enable-dynamic-jobs (a policy declares requires = {\"dynamic-jobs\"}, "
                              "which gridsched run and campaigns honour)")

    def emit(self, decision: Decision) -> None:
        """Send any decision of :mod:`schedulers.core.events` as it is (for protocol features
        without a method here).

        Raises:
            PolicyError: ``decision`` is not a :class:`~schedulers.core.events.Decision`.
        """
        if not isinstance(decision, Decision):
            raise PolicyError(f"emit: expects a decision of schedulers.core.events (ExecuteJob, RejectJob, "
                              f"CallMeLater...), got {type(decision).__name__} {_show_hosts([decision])[1:-1]}")
        for name in ("alloc", "resources"):   # (a str "0-3" would be read as 3 characters, not 4 hosts)
            hosts = getattr(decision, name, None)
            if hosts is not None and not isinstance(hosts, ProcSet):
                raise PolicyError(f"emit: {type(decision).__name__}.{name} must be a ProcSet (e.g. "
                                  f"ProcSet.from_str('0-3')), got {type(hosts).__name__} {hosts!r}")
        self._decisions.append(decision)

    # ----------------------------------------------------------------------------------- callbacks
    def on_simulation_begins(self, platform: Platform) -> None:
        """The simulation starts (SIMULATION_BEGINS, at time 0): :attr:`platform` and
        :attr:`available` are known (hosts, properties such as ``owner``; speeds and cores when
        the transport knows them, see :attr:`needs_speeds`). The place to read the platform once."""

    def on_job_submitted(self, job: Job) -> None:
        """``job`` arrived (JOB_SUBMITTED, at ``job.subtime``); it is in :attr:`jobs`, state
        ``SUBMITTED``. Queue it (or reject it); :meth:`schedule` follows."""

    def on_job_completed(self, job: Job) -> None:
        """``job`` ended (JOB_COMPLETED): ``job.state`` says how (``COMPLETED_SUCCESSFULLY``,
        ``COMPLETED_WALLTIME_REACHED``, ``COMPLETED_KILLED``, ``COMPLETED_FAILED``),
        ``job.finish_time`` when; its hosts are already back in :attr:`available`."""

    def on_jobs_killed(self, jobs: list[Job], progress: dict[str, Any]) -> None:
        """The jobs :meth:`kill` asked for are killed (JOB_KILLED, after their JOB_COMPLETED).
        ``progress`` is Batsim's ``job_progress``: job id -> how far its profile went (for a
        parallel task, ``{"profile": ..., "progress": fraction from 0 to 1}``; for a composed
        profile, the current stage and its own progress)."""

    def on_resource_state_changed(self, hosts: ProcSet, state: str) -> None:
        """``hosts`` reached pstate ``state`` (RESOURCE_STATE_CHANGED, the end of a
        :meth:`set_pstate`; ``state`` is the pstate index as a string). :attr:`available` is
        already updated."""

    def on_requested_call(self) -> None:
        """The time asked with :meth:`call_me_later` came (REQUESTED_CALL)."""

    def on_answer(self, answer: Answer) -> None:
        """Batsim answered a QUERY (:meth:`query_consumed_energy`): ``answer.data`` such as
        ``{"consumed_energy": 7157.1}`` (J), also in :attr:`consumed_energy`."""

    def on_notify(self, notify: Notify) -> None:
        """Batsim sent a NOTIFY (after the policy's own bookkeeping of it): the end of the static
        jobs or of the external events, a machine event (also :meth:`on_machines_unavailable` /
        :meth:`on_machines_available`), or an event of the user's own type forwarded with
        ``--forward-unknown-events`` (``notify.type`` and its other fields in ``notify.data``)."""

    def on_machines_unavailable(self, resources: ProcSet) -> None:
        """External event: machines ``resources`` became unavailable (already out of
        :attr:`available`; jobs running there go on unless the policy kills them)."""

    def on_machines_available(self, resources: ProcSet) -> None:
        """External event: machines ``resources`` are available again (idle ones back in
        :attr:`available`)."""

    def on_simulation_ends(self) -> None:
        """The simulation is over (SIMULATION_ENDS); no decision is taken any more."""

    def on_unknown_event(self, event: Event) -> None:
        """An event of a type this version does not model (a :class:`~schedulers.core.events.
        GenericEvent`): ignored by default, never a crash."""

    def schedule(self) -> None:
        """Called once after the events of every Batsim message (after their hooks), while the
        simulation runs: make the queue-based decisions here. The base does nothing."""

    def hosts_wanted(self) -> int:
        """How many hosts the waiting jobs need now (idle-host shutdown, option ``idle_timeout``:
        it keeps that many hosts awake or waking, and wakes sleeping hosts while fewer are).

        Default: the ``res`` of every job the base knows is waiting (submitted, neither started
        nor rejected), summed, at most the number of hosts. Override when the policy knows
        better, e.g. only the jobs it could start on more hosts."""
        return _shutdown.waiting_hosts(self)

    def hosts_to_wake(self, asleep: int, n: int) -> int:
        """Which ``n`` sleeping hosts idle-host shutdown wakes (option ``idle_timeout``): a bit
        mask of exactly ``n`` hosts among ``asleep`` (bit mask of the hosts asleep now; ``1 <= n
        <= |asleep|``), the hosts the waiting jobs would run on once awake.

        Default: the lowest ids (where :func:`first_hosts` places). Override with the policy's own
        host choice: EASY asks :meth:`select_hosts <schedulers.easy.EASY.select_hosts>`, HEFT
        takes the fastest hosts, the owner-share policies the hosts their waiting users own
        (:mod:`schedulers.core.shutdown`, step 2, checks the answer)."""
        return lowest_bits(asleep, n)

    def waking_hosts(self) -> list[tuple[float, int]]:
        """Hosts asleep or switching that idle-host shutdown can wake, each with the earliest
        time (s) it can be awake and free: ``[(time, mask), ...]``, for reservations (never free
        now; :meth:`schedulers.core.shutdown.IdleShutdown.waking`). Empty when ``idle_timeout``
        is off."""
        return [] if self._shutdown is None else self._shutdown.waking()

    def metrics(self) -> dict[str, float]:
        """The policy's own numbers at the end of a run (name -> finite number), recorded by
        campaigns beside the summary metrics (e.g. EASY's backfilled jobs, a preemptive policy's
        preemptions). The base class has none."""
        return {}

    def compute_sharing_needed(self) -> str | None:
        """Why this policy, with its options, cannot run without Batsim's compute sharing
        (``--enable-compute-sharing``: several jobs on one host), in words (``"delta > 0 overlaps
        jobs on shared hosts"``), or None: it runs either way (the base class). Campaigns refuse
        such a policy in a run without ``compute_sharing`` when they read the file, instead of
        every run failing at SIMULATION_BEGINS."""
        return None


def first_hosts(available: ProcSet, n: int) -> ProcSet:
    """The ``n`` lowest ids of ``available`` (FCFS's host choice), e.g. ``first_hosts(ProcSet((2,
    5), 9), 3)`` is ``ProcSet((2, 4))``.

    Args:
        available: host ids (usually :attr:`Policy.available`).
        n: how many (>= 0).

    Returns:
        A new ProcSet of ``n`` ids.

    Raises:
        PolicyError: fewer than ``n`` hosts available.
    """
    if n > len(available):
        raise PolicyError(f"{n} hosts requested but only {len(available)} available")
    out: list[tuple[int, int]] = []
    left = n
    for itv in available.intervals():
        take = min(left, itv.sup - itv.inf + 1)
        out.append((itv.inf, itv.inf + take - 1))
        left -= take
        if left == 0:
            break
    return ProcSet(*out)
