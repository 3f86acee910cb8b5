"""Typed model of a Batsim simulation as a scheduling policy sees it: jobs, hosts, the platform.

Units everywhere: times in seconds (float, simulation time from 0), speeds in flops per second,
power in watts, energy in joules. Resource (host) ids are Batsim's compute-resource ids: integers
from 0, given in lexicographic order of the host names; the master host is not one (Batsim 4.2.1
behaviour, recorded on real runs). Sets of host ids are :class:`procset.ProcSet` interval sets,
written like Batsim writes them (``"0-3 7"``).
"""

from __future__ import annotations

import enum
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from procset import ProcSet

NO_WALLTIME = -1.0
"""Batsim's value for "no walltime" (:attr:`Job.walltime`): the job may run for ever and is
never killed for its duration. Test :attr:`Job.has_walltime` rather than comparing."""


def as_index(v: Any) -> int | None:
    """``v`` as an int when it is an integer, Python's or numpy's (``__index__``), but not a
    bool; None otherwise (a float, a string...)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    index = getattr(v, "__index__", None)
    if index is None:
        return None
    try:
        return index()
    except TypeError:   # (a NumPy array of floats has __index__, which refuses it)
        return None


class JobState(str, enum.Enum):
    """Life cycle of a job as seen by a policy: Batsim's job states, the values of the
    ``final_state`` column of ``out_jobs.csv`` and of JOB_COMPLETED's ``job_state``."""

    SUBMITTED = "SUBMITTED"
    """Arrived (JOB_SUBMITTED), waiting: neither started nor rejected."""
    RUNNING = "RUNNING"
    """Started by the policy (EXECUTE_JOB), not ended yet."""
    COMPLETED_SUCCESSFULLY = "COMPLETED_SUCCESSFULLY"
    """Ended normally: its profile finished with return code 0."""
    COMPLETED_FAILED = "COMPLETED_FAILED"
    """Ended with a profile return code ``ret`` > 0."""
    COMPLETED_WALLTIME_REACHED = "COMPLETED_WALLTIME_REACHED"
    """Killed by Batsim at ``start_time + walltime``."""
    COMPLETED_KILLED = "COMPLETED_KILLED"
    """Killed by the policy (:meth:`Policy.kill <schedulers.core.policy.Policy.kill>`)."""
    REJECTED = "REJECTED"
    """Rejected by the policy (:meth:`Policy.reject <schedulers.core.policy.Policy.reject>`); it
    never runs."""

    @property
    def finished(self) -> bool:
        """True for every state a job never leaves."""
        return self not in (JobState.SUBMITTED, JobState.RUNNING)


# Field names of a Batsim job description that have a dedicated attribute in :class:`Job`.
_JOB_FIELDS = frozenset(("id", "subtime", "walltime", "res", "profile"))


@dataclass(slots=True, eq=False)
class Job:
    """One job of a Batsim workload, as the policy receives it in JOB_SUBMITTED.

    A workload's job object ``{"id": 3, "subtime": 12.5, "walltime": 600, "res": 4, "profile":
    "p1", "user": "alice"}`` in workload ``w0`` becomes ``Job(id="w0!3", workload="w0",
    subtime=12.5, walltime=600.0, res=4, profile="p1", extra={"user": "alice"})``. The base class
    (:class:`~schedulers.core.policy.Policy`) keeps ``state``, ``start_time``, ``finish_time`` and
    ``allocation`` up to date; a policy reads them and never sets them.

    Attributes:
        id: full Batsim job id, ``"<workload>!<name>"`` (e.g. ``"w0!3"``); unique in a simulation.
        workload: name of the job's workload: ``"w0"`` for the first ``--workload``, ``"w1"`` for
            the second...; a job the policy registers (:meth:`~schedulers.core.policy.Policy.
            register_job`) is in the workload it names.
        subtime: submission time (s): when the job arrived.
        walltime: the most the job may run (s): Batsim kills it at ``start_time + walltime``
            (state ``COMPLETED_WALLTIME_REACHED``). ``-1`` (:data:`NO_WALLTIME`) means none:
            test :attr:`has_walltime`.
        res: number of hosts the job needs (>= 0); :meth:`~schedulers.core.policy.Policy.execute`
            must give it exactly that many. Batsim 4.2.1 accepts 0: such a job is rejected by the
            base class at its submission unless the policy sets
            :attr:`~schedulers.core.policy.Policy.takes_jobs_of_no_host`.
        profile: name of the job's profile (what it does: a ``delay``, a parallel computation...)
            in its workload; its description is :attr:`profile_data` when Batsim forwards it.
        extra: every other field of the workload's job object (``user``, ``cpu_load``...), as the
            workload gives it (Batsim forwards them unchanged); ``{}`` when there is none.
        profile_data: the profile's description (``{"type": "delay", "delay": 90}``...) when
            Batsim forwards profiles on submission (``--forward-profiles-on-submission``; policies
            that need it say so in :attr:`~schedulers.core.policy.Policy.requires`), else None.
        raw: the job object exactly as Batsim sent it (kept for exact protocol round trips).
        state: where the job is in its life cycle (:class:`JobState`).
        start_time: when the policy started it (s); None while it has not started.
        finish_time: when it ended (s, from JOB_COMPLETED); None while it has not ended.
        allocation: the ids of the hosts it runs or ran on; None while it has not started.
    """

    id: str
    workload: str
    subtime: float
    walltime: float
    res: int
    profile: str
    extra: dict[str, Any] = field(default_factory=dict)
    profile_data: dict[str, Any] | None = None
    raw: dict[str, Any] | None = None
    state: JobState = JobState.SUBMITTED
    start_time: float | None = None
    finish_time: float | None = None
    allocation: ProcSet | None = None

    @property
    def user(self) -> str | None:
        """The job's owner: its workload field ``user`` as a string, or None when the job has
        none (owner-share policies refuse such a job: ``PolicyInputError``).

        Raises:
            PolicyInputError: ``user`` is not a non-empty string nor an integer (a list, an object,
                a boolean, a float, ``""``: it would silently be a user named ``['a']``).
        """
        u = self.extra.get("user")
        if u is None:
            return None
        if type(u) is str and u:
            return u
        if type(u) is int:
            return str(u)
        raise PolicyInputError(f"job {self.id!r}: workload field 'user' must be a non-empty string or an integer, "
                               f"got {u!r}", job_id=self.id)

    @property
    def has_walltime(self) -> bool:
        """True when the job has a walltime; False when it is Batsim's ``-1`` ("no walltime")."""
        return self.walltime is not None and self.walltime >= 0

    @property
    def name(self) -> str:
        """The job name without its workload prefix (``"3"`` for ``"w0!3"``)."""
        return self.id.split("!", 1)[1] if "!" in self.id else self.id

    @classmethod
    def from_json(cls, job_id: str, obj: dict[str, Any], profile: dict | None = None) -> "Job":
        """Build a job from the ``job`` object of a JOB_SUBMITTED event.

        Raises:
            ValueError: when ``res``, ``subtime`` or ``profile`` is missing or of the wrong type.
        """
        try:
            res = obj["res"]
            subtime = obj["subtime"]
            prof = obj["profile"]
        except KeyError as exc:
            raise ValueError(f"job {job_id!r} lacks field {exc.args[0]!r}: {obj!r}") from None
        if isinstance(res, bool) or not isinstance(res, int) or res < 0:
            raise ValueError(f"job {job_id!r}: 'res' must be an integer >= 0, got {res!r}")
        if not isinstance(subtime, (int, float)) or isinstance(subtime, bool):
            raise ValueError(f"job {job_id!r}: 'subtime' must be a number, got {subtime!r}")
        walltime = obj.get("walltime", NO_WALLTIME)
        # one string per workload name, not one per job
        workload = sys.intern(job_id.partition("!")[0]) if "!" in job_id else ""
        # raw: not copied, the event's object (a job of a million-job run costs one, not two)
        return cls.of_fields(job_id, workload, float(subtime), float(walltime), int(res), str(prof), obj, profile)

    @classmethod
    def of_fields(cls, job_id: str, workload: str, subtime: float, walltime: float, res: int, profile: str,
                  obj: dict[str, Any], profile_data: dict | None = None) -> "Job":
        """:meth:`from_json` of a job object whose fields were already checked and read (the
        engine's workload reader): the same job, without checking them again. ``obj`` (which
        holds ``subtime``, ``res`` and ``profile``) is kept as :attr:`raw`; its other fields are
        :attr:`extra`."""
        # (no other field than those five: no extra, without looking at each)
        if len(obj) == 3 + ("id" in obj) + ("walltime" in obj):
            extra: dict[str, Any] = {}
        else:
            extra = {k: v for k, v in obj.items() if k not in _JOB_FIELDS}
        return cls(job_id, workload, subtime, walltime, res, profile, extra, profile_data, obj)

    def to_json(self) -> dict[str, Any]:
        """The job object as Batsim writes it in JOB_SUBMITTED (the original when known)."""
        if self.raw is not None:
            return dict(self.raw)
        out: dict[str, Any] = {
            "id": self.id,
            "subtime": self.subtime,
            "walltime": self.walltime,
            "res": self.res,
            "profile": self.profile,
        }
        out.update(self.extra)
        return out


class HostState(str, enum.Enum):
    """Machine states as Batsim's ``out_machine_states.csv`` counts them (:attr:`Host.state`)."""

    IDLE = "idle"
    """Awake (in a computation pstate) and running no job."""
    COMPUTING = "computing"
    """Running at least one job."""
    SLEEPING = "sleeping"
    """In a sleep pstate (``sleep_pstates``); it runs nothing until woken."""
    SWITCHING_ON = "switching_on"
    """Waking up: going from its sleep pstate to a computation pstate."""
    SWITCHING_OFF = "switching_off"
    """Going to sleep: from a computation pstate to its sleep pstate."""
    UNAVAILABLE = "unavailable"
    """Made unavailable by an external event (``--events``): takes no new job."""


#: ``sleep_pstates`` strings already parsed (see :func:`parse_sleep_pstates`).
_SLEEP_PSTATES: dict[str, tuple[tuple[int, int, int], ...]] = {}
_SPECIAL_PSTATES: dict[str, frozenset[int]] = {}   # (Host.special_pstates)
_UINT = re.compile(r"[+-]?[0-9]+")


def parse_sleep_pstates(raw: str) -> tuple[tuple[int, int, int], ...]:
    """The ``(sleep, switch_off_virtual, switch_on_virtual)`` triples of a host's
    ``sleep_pstates`` property, in order: one or several ``S:OFF:ON`` separated by commas
    (``"1:3:2, 4:3:2"``), read as Batsim 4.2.1 reads them (``Machines::create_machines``,
    ``src/machines.cpp``): parts split at commas, then at colons, runs of separators counting as
    one (``boost::split`` with ``token_compress_on``), each number trimmed of blanks and read as an
    unsigned int (``boost::lexical_cast``: a sign is accepted, ``-1`` wraps to 4294967295 and
    then to the int -1). Pstate numbers are not checked against the host here.

    Raises:
        ValueError: a part without three numbers, or a number that is not an unsigned integer
            (Batsim's reason, quoted).
    """
    parsed = _SLEEP_PSTATES.get(raw)
    if parsed is not None:
        return parsed
    out: list[tuple[int, int, int]] = []
    for part in re.split(r",+", raw):
        nums = re.split(r":+", part)
        if len(nums) != 3:
            raise ValueError(f"each comma-separated part must be three colon-separated pstates S:OFF:ON, whereas "
                             f"{part!r} is not valid")
        triple = []
        for n in nums:
            n = n.strip(" \t\n\v\f\r")
            if _UINT.fullmatch(n) is None or abs(int(n)) > 0xFFFFFFFF:
                raise ValueError(f"the pstates of the comma-separated sleep pstate {part!r} are invalid: impossible "
                                 "to convert the pstates to unsigned integers")
            v = int(n) % (1 << 32)
            triple.append(v - (1 << 32) if v >= 1 << 31 else v)   # unsigned int, then static_cast<int>
        out.append((triple[0], triple[1], triple[2]))
    parsed = tuple(out)
    if len(_SLEEP_PSTATES) < 1024:
        _SLEEP_PSTATES[raw] = parsed
    return parsed


class PolicyError(RuntimeError):
    """A policy asked for something impossible: starting a job that is not waiting, or on a
    number of hosts other than its ``res``, more hosts than are free (:func:`~schedulers.core.
    policy.first_hosts`)... Raised by the decisions of :class:`~schedulers.core.policy.Policy`,
    the policy's own mistake: the run stops with the message. Also importable from
    :mod:`schedulers.core.policy`."""

    #: ``(callback, file, line)`` of the policy's code that raised it (each None when unknown),
    #: once :func:`~schedulers.core.failure.located` has added them to the message (the
    #: attribute is absent before).
    policy_location: tuple[str | None, str | None, int | None]


class PolicyInputError(PolicyError):
    """The inputs lack what a policy needs (a job without the ``user`` field an owner-share policy
    reads, hosts without power states, host data Batsim does not send): bad input, reported by
    ``gridsched`` as one line with exit status 2, not as an internal error. A policy raises it
    (with the file, job or host and what is missing) when it finds such input.

    Args:
        message: what is missing, naming the job or host.
        job_id: the job at fault (``w0!7``), when there is one: ``gridsched run`` then names the
            workload file it comes from.
    """

    def __init__(self, message: str = "", *, job_id: str | None = None) -> None:
        super().__init__(message)
        self.job_id = job_id


class HostInfoUnknown(PolicyInputError):
    """A policy read host data that Batsim does not send (speeds per pstate, cores, initial
    pstate) and that no platform file filled in (see :attr:`Host.speeds`): the message says to give
    the platform file (``gridsched serve --platform FILE``)."""


#: How to get the host data Batsim does not send (the end of :class:`HostInfoUnknown` messages).
HOST_INFO_HINT = ("Batsim's SIMULATION_BEGINS does not carry it: give the scheduler the platform "
                  "file Batsim runs on, `gridsched serve --platform FILE` (pybatsim plugin: "
                  "-o '{\"platform\": \"FILE\"}')")


class Host:
    """One compute resource (a SimGrid host of the platform file, not the master host).

    ``self.platform.hosts[i]`` is the host of id ``i``. The base class keeps :attr:`pstate` and
    :attr:`state` up to date; a policy reads them and changes them only through its decisions
    (:meth:`~schedulers.core.policy.Policy.set_pstate`). Hosts compare by identity.

    Attributes:
        id: Batsim resource id (int, from 0, in lexicographic order of host names).
        name: SimGrid host name (the ``id`` attribute of its ``<host>``, or a ``<cluster>``'s
            generated name such as ``node-3.site``).
        speeds: speed of each pstate in flops/s per core (``speeds[p]`` for pstate ``p``), from the
            ``speed`` attribute of the platform file (``"100Mf, 50Mf"``). Known in the embedded
            engine; behind real Batsim only with the platform file (Batsim does not send speeds:
            ``gridsched serve --platform FILE``). Reading it while unknown raises
            :class:`HostInfoUnknown`, never a silent 0 or None: test :attr:`speeds_known` first
            when the policy can do without.
        cores: number of cores (>= 1), the ``core`` attribute (default 1); same rules as
            :attr:`speeds` (:attr:`cores_known`). A job part keeps one core busy.
        properties: the host's ``<prop>`` values as strings: ``wattage_per_state`` (W per pstate,
            ``"Idle:Epsilon:AllCores, ..."``), ``wattage_off`` (W), ``sleep_pstates``
            (``"S:OFF:ON"``), ``role``, and the platform's own properties such as ``owner``;
            ``{}`` when it has none.
        zone_properties: the ``<prop>`` values of the host's zone (``{}`` when none).
        pstate: current pstate index (0 unless the platform file gives another ``pstate``).
            Known in the embedded engine; behind real Batsim only with the platform file (Batsim
            does not send it), or once Batsim reported a switch of the host
            (RESOURCE_STATE_CHANGED): reading it while unknown raises :class:`HostInfoUnknown`
            (test :attr:`pstate_known`). A host whose pstate is unknown is awake when Batsim says
            it is idle.
        state: current :class:`HostState`.
        energy: whether the simulation runs Batsim's energy model (``-E``): True or False when
            the transport knows (the embedded engine; ``gridsched serve --energy`` or
            ``--no-energy``; the pybatsim option ``"energy"``), None when it does not (Batsim's
            SIMULATION_BEGINS does not say). Batsim 4.2.1 reads ``sleep_pstates`` only with
            ``-E`` (``Machines::create_machines``, ``src/machines.cpp``): with False,
            :attr:`sleep_pstates` is None and :attr:`special_pstates` empty, so a host declared at
            its sleep pstate is an ordinary idle host computing at that pstate's speed, as in
            Batsim; with None the property is read.
    """

    __slots__ = ("id", "name", "_speeds", "_cores", "properties", "zone_properties", "_pstate", "state", "energy")

    def __init__(self, id: int, name: str, speeds: list[float] | None = None, cores: int | None = None,  # noqa: A002
                 properties: dict[str, str] | None = None, zone_properties: dict[str, str] | None = None,
                 pstate: int | None = 0, state: HostState = HostState.IDLE, energy: bool | None = None) -> None:
        self.id = id
        self.name = name
        self.speeds = speeds  # the setters normalise None / [] to unknown
        self.cores = cores
        self.properties: dict[str, str] = {} if properties is None else properties
        self.zone_properties: dict[str, str] = {} if zone_properties is None else zone_properties
        self._pstate = pstate
        self.state = state
        self.energy = energy

    def __repr__(self) -> str:
        speeds = "unknown" if self._speeds is None else repr(self._speeds)
        cores = "unknown" if self._cores is None else repr(self._cores)
        return (f"Host(id={self.id!r}, name={self.name!r}, speeds={speeds}, cores={cores}, "
                f"properties={self.properties!r}, zone_properties={self.zone_properties!r}, "
                f"pstate={'unknown' if self._pstate is None else repr(self._pstate)}, state={self.state!r})")

    def _unknown(self, what: str) -> HostInfoUnknown:
        return HostInfoUnknown(f"host {self.name!r} (id {self.id}): {what} unknown; {HOST_INFO_HINT}")

    @property
    def pstate_known(self) -> bool:
        """True when the current pstate is known (see :attr:`pstate`)."""
        return self._pstate is not None

    @property
    def pstate(self) -> int:
        """Current pstate index.

        Raises:
            HostInfoUnknown: the initial pstate is unknown (real Batsim without the platform file).
        """
        if self._pstate is None:
            raise self._unknown("the initial pstate is")
        return self._pstate

    @pstate.setter
    def pstate(self, value: int | None) -> None:
        self._pstate = value

    @property
    def speeds_known(self) -> bool:
        """True when the speeds per pstate are known (see :attr:`speeds`)."""
        return self._speeds is not None

    @property
    def cores_known(self) -> bool:
        """True when the number of cores is known (see :attr:`cores`)."""
        return self._cores is not None

    @property
    def speeds(self) -> list[float]:
        """Speed of each pstate in flops/s (per core).

        Raises:
            HostInfoUnknown: unknown (behind real Batsim without the platform file).
        """
        if self._speeds is None:
            raise self._unknown("speeds per pstate are")
        return self._speeds

    @speeds.setter
    def speeds(self, value: list[float] | None) -> None:
        self._speeds = [float(s) for s in value] if value else None

    @property
    def cores(self) -> int:
        """Number of cores.

        Raises:
            HostInfoUnknown: unknown (behind real Batsim without the platform file).
        """
        if self._cores is None:
            raise self._unknown("the number of cores is")
        return self._cores

    @cores.setter
    def cores(self, value: int | None) -> None:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"host {self.name!r}: cores must be an integer >= 1 or None, got {value!r}")
        self._cores = value

    @property
    def owner(self) -> str | None:
        """The host's ``owner`` property (the user who provides it, on the owner-share grids), or
        None when it has none."""
        return self.properties.get("owner")

    @property
    def sleep_pstates(self) -> tuple[int, int, int] | None:
        """``(sleep, switch_off_virtual, switch_on_virtual)`` pstate indexes from the property
        ``sleep_pstates="S:OFF:ON"``, or None when the host has no sleep pstate (it can never be
        switched off). When the property gives several triples (``"1:3:2, 4:3:2"``,
        :func:`parse_sleep_pstates`), the first: the sleep pstate policies switch the host to.
        None too when :attr:`energy` is False (Batsim ignores the property without ``-E``).

        Raises:
            ValueError: a malformed property (naming the host).
        """
        raw = self.properties.get("sleep_pstates")
        if not raw or self.energy is False:
            return None
        return self._sleep_triples(raw)[0]

    @property
    def special_pstates(self) -> frozenset[int]:
        """Every pstate ``sleep_pstates`` names (its sleep pstates and their virtual switching
        pstates, all triples): the pstates that do not compute. Empty without the property,
        and when :attr:`energy` is False (Batsim ignores the property without ``-E``).

        Raises:
            ValueError: a malformed property (naming the host)."""
        raw = self.properties.get("sleep_pstates")
        if not raw or self.energy is False:
            return frozenset()
        out = _SPECIAL_PSTATES.get(raw)
        if out is None:
            out = frozenset(p for t in self._sleep_triples(raw) for p in t)
            if len(_SPECIAL_PSTATES) < 1024:
                _SPECIAL_PSTATES[raw] = out
        return out

    def in_sleep_pstate(self) -> bool:
        """Whether the host's pstate is known and one of :attr:`special_pstates` (a sleep pstate
        or a virtual switching one): False when the pstate is unknown (see :attr:`pstate`).

        Raises:
            ValueError: a malformed ``sleep_pstates`` property (naming the host)."""
        p = self._pstate
        if p is None or self.energy is False:
            return False
        raw = self.properties.get("sleep_pstates")
        if not raw:
            return False
        special = _SPECIAL_PSTATES.get(raw)   # (special_pstates' cache, read first: once a job's end)
        return p in (special if special is not None else self.special_pstates)

    def _sleep_triples(self, raw) -> tuple[tuple[int, int, int], ...]:
        try:
            return parse_sleep_pstates(str(raw))
        except ValueError as exc:
            raise ValueError(f"host {self.name!r}: sleep_pstates {raw!r}: {exc}") from None

    @property
    def speed(self) -> float | None:
        """Speed of the current pstate in flops/s; None when the pstate has no speed listed.

        Raises:
            HostInfoUnknown: speeds unknown (see :attr:`speeds`).
        """
        speeds = self.speeds
        if 0 <= self.pstate < len(speeds):
            return speeds[self.pstate]
        return None


@dataclass(slots=True)
class Platform:
    """The compute resources of a simulation, indexed by Batsim id (``self.platform`` of a
    policy, known from SIMULATION_BEGINS on; empty before).

    Attributes:
        hosts: the compute hosts in id order (``hosts[i].id == i``); ``len(platform)`` is their
            number. Storage hosts (role ``storage``) are not in it.
        config: Batsim's ``config`` object of SIMULATION_BEGINS: which of its options are on
            (``"dynamic-jobs-enabled"``, ``"profiles-forwarded-on-submission"``...).
        allow_compute_sharing: True when several jobs may share a host (Batsim's
            ``--enable-compute-sharing``); otherwise a host runs one job at a time.
    """

    hosts: list[Host]
    config: dict[str, Any] = field(default_factory=dict)
    allow_compute_sharing: bool = False

    def __len__(self) -> int:
        return len(self.hosts)

    @property
    def speeds_known(self) -> bool:
        """True when every host's speeds and cores are known (see :attr:`Host.speeds`)."""
        return all(h.speeds_known and h.cores_known for h in self.hosts)

    def require_speeds(self, who: str = "this policy") -> None:
        """Fail early, with the way out, unless every host's speeds and cores are known.

        Args:
            who: what needs them, for the message (e.g. ``"policy 'heft'"``).

        Raises:
            HostInfoUnknown: some host lacks speeds or cores (the message names the first one, how
                many lack them, and how to give the platform file).
        """
        missing = [h for h in self.hosts if not (h.speeds_known and h.cores_known)]
        if missing:
            h = missing[0]
            raise HostInfoUnknown(
                f"{who} needs the speeds and cores of the hosts, but they are unknown for {len(missing)} of "
                f"{len(self.hosts)} hosts (first: {h.name!r}, id {h.id}); {HOST_INFO_HINT}")

    @property
    def all_ids(self) -> ProcSet:
        """Every resource id as an interval set."""
        return ProcSet((0, len(self.hosts) - 1)) if self.hosts else ProcSet()

    def by_name(self, name: str) -> Host:
        """The host called ``name``.

        Raises:
            KeyError: no such host.
        """
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(f"no host named {name!r}")

    def with_property(self, key: str, value: str) -> ProcSet:
        """Ids of the hosts whose property ``key`` equals ``value`` (e.g. ``owner=user1``)."""
        return ProcSet(*[h.id for h in self.hosts if h.properties.get(key) == value])
