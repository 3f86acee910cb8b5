"""Run gridsched policies as **pybatsim 4.0.0a0** plugins (entry-point group ``pybatsim.schedulers``).

pybatsim (https://gitlab.inria.fr/batsim/pybatsim, 4.0.0a0 on PyPI) drives a scheduler object
derived from ``pybatsim.batsim.batsim.BatsimScheduler`` through callbacks. For every Batsim message
its ``Batsim._read_bat_msg`` calls ``onBeforeEvents()``, then one callback per event
(``onSimulationBegins``, ``onJobSubmission``, ``onJobCompletion``, ``onJobsKilled``,
``onMachinePStateChanged``, ``onRequestedCall``, ``onReportEnergyConsumed``,
``onNoMoreJobsInWorkloads``, ``onSimulationEnds``, ...), then ``onNoMoreEvents()``, and finally
sends the events queued by its own calls (``execute_jobs``, ``reject_jobs``, ``kill_jobs``,
``wake_me_up_at``, ``set_resource_state``, ``request_consumed_energy``, ...), sorted by timestamp,
as the reply (Python's ``json.dumps``).

The glue classes made by :func:`make_pybatsim_scheduler` rebuild, from those callbacks, the
protocol event objects Batsim sent (``{"timestamp", "type", "data"}``), buffer them between
``onBeforeEvents`` and ``onNoMoreEvents``, decode them with our codec
(:func:`schedulers.batsim.protocol.decode_message`, so a policy sees exactly the typed events it
sees behind ``gridsched serve`` or in the embedded engine), call ``policy.decide(now, events)``
**once per Batsim message**, and turn the decisions into pybatsim calls (so pybatsim's own
bookkeeping of job states and counters stays right).

Event timestamps: pybatsim does not pass them to the callbacks; the message's ``now`` is used,
except for JOB_COMPLETED (the job's ``finish_time``, which pybatsim takes from the event) and
FROM_JOB_MSG (given). Batsim 4.2.1 stamps its events with the message's ``now`` in every recorded
run (``shared/batsim-4.2.1/transcripts``). pybatsim reports RESOURCE_STATE_CHANGED one interval at
a time; consecutive intervals with the same pstate and timestamp are merged back into one event.

Entry points (``pyproject.toml``): ``gridsched-fcfs`` / ``fcfs`` -> :data:`FCFSPyBatsim`,
``gridsched-easy`` / ``easy`` -> :data:`EASYPyBatsim`, ``gridsched`` -> :data:`GridschedPyBatsim`
(any registered policy: ``-o '{"policy": "easy", ...}'``). Run one with::

    pybatsim gridsched-easy -s tcp://*:28000 -t 60000 -o '{}'

Host speeds: Batsim's SIMULATION_BEGINS has no host speeds, cores or initial pstates. The
scheduler option ``"platform"`` (pybatsim's ``-o/--scheduler-options`` JSON object) names the
platform file Batsim runs on; it is read at once with the engine's reader, checked against the
hosts Batsim announces (same names and properties) and fills them in, exactly as ``gridsched serve
--platform FILE`` does (:mod:`schedulers.batsim.platform_file`)::

    pybatsim gridsched-easy -s tcp://*:28000 -o '{"platform": "platforms/g5k_nantes_econome.xml"}'
    pybatsim gridsched -o '{"policy": "easy", "platform": "p.xml", "policy_options": {}}'

The glue consumes ``"platform"``: the policy's options never contain it. Without it, a policy that
reads host speeds or cores gets :class:`~schedulers.core.model.HostInfoUnknown`. Likewise the
option ``"energy"`` (true or false, as ``gridsched serve --energy`` / ``--no-energy``) says whether
Batsim runs with ``-E``, which its messages do not say; without ``-E`` Batsim ignores the hosts'
``sleep_pstates`` and so does the policy given ``"energy": false``
(:attr:`~schedulers.core.model.Host.energy`).

This module imports without pybatsim; the classes are created on first access (module
``__getattr__``), which imports pybatsim and raises :class:`ImportError` with the install recipe
when it is missing. pybatsim 4.0.0a0 pins ``pyzmq<23``, which does not build on Python 3.11:
install it with ``pip install --no-deps pybatsim==4.0.0a0 docopt sortedcontainers`` (pyzmq and
procset come with gridsched).
"""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

from procset import ProcSet

from ..core.events import (
    CallMeLater,
    Decision,
    ExecuteJob,
    KillJobs,
    NotifyBatsim,
    Query,
    RejectJob,
    SetResourceState,
)
from ..core.failure import located
from ..core.policy import Policy, PolicyError
from .platform_file import PlatformFile, set_energy_model
from .protocol import decode_message, encode_decisions

# FCFSPyBatsim, EASYPyBatsim and GridschedPyBatsim are module attributes too, created on first access
# (they need pybatsim, so they are not in __all__: ``import *`` must work without it).
__all__ = [
    "ENTRY_POINT_CLASSES",
    "ENERGY_OPTION",
    "PLATFORM_OPTION",
    "PYBATSIM_INSTALL_HINT",
    "make_pybatsim_scheduler",
    "pybatsim_available",
    "scheduler_class",
]

log = logging.getLogger(__name__)

#: How to install pybatsim 4.0.0a0 on Python 3.11 (its ``pyzmq<23`` pin does not build there).
PYBATSIM_INSTALL_HINT = ("pip install --no-deps pybatsim==4.0.0a0 docopt sortedcontainers "
                         "(or: pip install 'gridsched[pybatsim]' && pip install --no-deps pybatsim==4.0.0a0)")

#: Scheduler option naming the platform file (consumed by the glue, not passed to the policy).
PLATFORM_OPTION = "platform"

#: Scheduler option saying whether Batsim runs with ``-E`` (consumed by the glue).
ENERGY_OPTION = "energy"

#: Module attribute -> registered policy name (None: the policy is chosen by the ``policy`` option).
ENTRY_POINT_CLASSES: dict[str, str | None] = {
    "FCFSPyBatsim": "fcfs",
    "EASYPyBatsim": "easy",
    "GridschedPyBatsim": None,
}

_CLASS_CACHE: dict[str, type] = {}

# EXECUTE_JOB fields pybatsim can send besides job_id/alloc (``Batsim.execute_job``).
_EXECUTE_EXTRAS = ("mapping", "storage_mapping", "additional_io_job")


def _base_class() -> type:
    """pybatsim's ``BatsimScheduler``.

    Raises:
        ImportError: pybatsim is not installed (the message gives :data:`PYBATSIM_INSTALL_HINT`).
    """
    try:
        from pybatsim.batsim.batsim import BatsimScheduler
    except ImportError as exc:
        raise ImportError(f"pybatsim is not importable ({exc}); install it with: {PYBATSIM_INSTALL_HINT}") from exc
    return BatsimScheduler


def pybatsim_available() -> bool:
    """True when pybatsim's ``BatsimScheduler`` can be imported."""
    try:
        _base_class()
    except ImportError:
        return False
    return True


class _PyBatsimGlue:
    """Callbacks of a pybatsim scheduler that drive a gridsched :class:`Policy` (mixed in first).

    Class attributes set by :func:`make_pybatsim_scheduler`: ``policy_class`` (a :class:`Policy`
    subclass, or None to pick it by name from the ``policy`` option through the registry).

    Attributes:
        policy: the policy instance (one simulation per scheduler object, as pybatsim does).
        messages: Batsim messages handled so far (``decide`` calls).
        platform_file: the :class:`~schedulers.batsim.platform_file.PlatformFile` of the
            ``"platform"`` option, or None.
        energy: the ``"energy"`` option (whether Batsim runs with ``-E``), or None when not given.

    Raises (at construction):
        schedulers.inputs.errors.PlatformError: the ``"platform"`` file cannot be read.
        TypeError: ``"platform"`` is not a path string, or ``"energy"`` not true or false.
    """

    policy_class: type[Policy] | None = None
    bs: Any  # pybatsim's Batsim object, set by pybatsim before the first callback

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        opts = dict(options or {})
        super().__init__(dict(opts))  # type: ignore[call-arg]  # BatsimScheduler.__init__(options)
        platform = opts.pop(PLATFORM_OPTION, None)
        if platform is not None and not isinstance(platform, str):
            raise TypeError(f"scheduler option {PLATFORM_OPTION!r} must be the path of the platform file "
                            f"Batsim runs on (a string), got {platform!r}")
        self.platform_file: PlatformFile | None = PlatformFile(platform) if platform else None
        energy = opts.pop(ENERGY_OPTION, None)
        if energy is not None and not isinstance(energy, bool):
            raise TypeError(f"scheduler option {ENERGY_OPTION!r} must be true or false (whether Batsim runs "
                            f"with -E), got {energy!r}")
        self.energy: bool | None = energy
        self.policy: Policy = self.make_policy(opts)
        self.messages = 0
        self._pending: list[dict[str, Any]] = []

    # ------------------------------------------------------------------------------ policy
    def make_policy(self, options: dict[str, Any]) -> Policy:
        """The policy to drive, built from pybatsim's ``-o/--scheduler-options`` JSON object.

        With ``policy_class`` None, ``options["policy"]`` names a registered policy
        (:mod:`schedulers.registry`) and ``options["policy_options"]`` (default: the other keys)
        are its options. The ``"platform"`` and ``"energy"`` options have already been taken out.

        Raises:
            KeyError: unknown policy name, or no ``policy`` option when one is needed.
            TypeError: ``policy`` is not a string, or ``policy_options`` is given beside other
                options (they were ignored without a word).
        """
        if self.policy_class is not None:
            try:
                return self.policy_class(options)
            except (Exception, SystemExit) as exc:  # the user's constructor: its class, file and line
                failure = located(self.policy_class, exc, "__init__")
                if failure is None:
                    raise
                raise failure from exc
        from .. import registry

        if "policy" not in options:
            known = ", ".join(sorted(registry.POLICIES))
            raise KeyError(f"scheduler option 'policy' is required (e.g. -o '{{\"policy\": \"easy\"}}'); "
                           f"known policies: {known}")
        name = options["policy"]
        if not isinstance(name, str):
            raise TypeError(f"scheduler option 'policy' must be a policy name (a string such as \"easy\" or "
                            f"\"FILE.py:Class\"), got {name!r}")
        rest = {k: v for k, v in options.items() if k != "policy"}
        policy_options = rest.pop("policy_options", rest)
        if rest and policy_options is not rest:
            raise TypeError(f"scheduler option {sorted(rest)[0]!r} is given beside 'policy_options', which holds "
                            "the policy's options: give them all inside 'policy_options', or all beside 'policy' "
                            "without it")
        return registry.get_policy(name, policy_options)

    # ------------------------------------------------------------------------ event buffer
    def _now(self) -> float:
        return float(self.bs.time())

    def _push(self, type_: str, data: dict[str, Any], timestamp: float | None = None) -> None:
        now = self._now()
        ts = now if timestamp is None else min(float(timestamp), now)
        self._pending.append({"timestamp": ts, "type": type_, "data": data})

    def onBeforeEvents(self) -> None:  # noqa: N802 - pybatsim's callback names
        self._pending = []

    def onNoMoreEvents(self) -> None:  # noqa: N802
        """End of one Batsim message: decode the buffered events, decide, send the decisions."""
        now = self._now()
        pending, self._pending = self._pending, []
        _, events = decode_message({"now": now, "events": pending})
        if self.platform_file is not None:
            self.platform_file.fill_events(events)
        set_energy_model(events, self.energy)
        # a failure of the policy's code names its class, callback, file and line (as in run and serve)
        try:
            decisions = self.policy.decide(now, events)
        except (Exception, SystemExit) as exc:
            failure = located(self.policy, exc)
            if failure is None:
                raise
            raise failure from exc
        self.messages += 1
        self._apply(decisions)

    # ---------------------------------------------------------------- pybatsim -> events
    def onAfterBatsimInit(self) -> None:  # noqa: N802
        pass

    def onSimulationBegins(self) -> None:  # noqa: N802
        bs = self.bs
        data = {
            "nb_resources": bs.nb_resources,
            "nb_compute_resources": bs.nb_compute_resources,
            "nb_storage_resources": bs.nb_storage_resources,
            "allow_compute_sharing": bs.allow_compute_sharing,
            "allow_storage_sharing": bs.allow_storage_sharing,
            "config": copy.deepcopy(bs.batconf),
            "compute_resources": copy.deepcopy(bs.machines["compute"]),
            "storage_resources": copy.deepcopy(bs.machines["storage"]),
            "workloads": copy.deepcopy(bs.workloads),
            "profiles": copy.deepcopy(bs.profiles),
        }
        self._push("SIMULATION_BEGINS", data)

    def onSimulationEnds(self) -> None:  # noqa: N802
        self._push("SIMULATION_ENDS", {})

    def onJobSubmission(self, job: Any) -> None:  # noqa: N802
        data: dict[str, Any] = {"job_id": job.id, "job": copy.deepcopy(job.json_dict)}
        if getattr(self.bs, "profiles_forwarded_on_submission", False) and job.profile_dict is not None:
            data["profile"] = copy.deepcopy(job.profile_dict)
        self._push("JOB_SUBMITTED", data)

    def onJobCompletion(self, job: Any) -> None:  # noqa: N802
        alloc = "" if job.allocation is None else str(ProcSet(job.allocation))
        self._push("JOB_COMPLETED", {
            "job_id": job.id,
            "job_state": job.job_state.name,
            "return_code": job.return_code,
            "alloc": alloc,
        }, timestamp=job.finish_time)

    def onJobsKilled(self, jobs: list[Any]) -> None:  # noqa: N802
        self._push("JOB_KILLED", {"job_ids": [j.id for j in jobs],
                                  "job_progress": {j.id: copy.deepcopy(j.progress) for j in jobs}})

    def onMachinePStateChanged(self, nodeid: Any, pstate: Any) -> None:  # noqa: N802
        # pybatsim passes one (first, last) interval per call.
        if isinstance(nodeid, tuple) and len(nodeid) == 2:
            res = ProcSet((int(nodeid[0]), int(nodeid[1])))
        else:
            res = ProcSet(int(nodeid))
        state = str(pstate)
        now = self._now()
        last = self._pending[-1] if self._pending else None
        if (last is not None and last["type"] == "RESOURCE_STATE_CHANGED" and last["timestamp"] == now
                and last["data"]["state"] == state):
            last["data"]["resources"] = str(ProcSet.from_str(last["data"]["resources"]) | res)
            return
        self._push("RESOURCE_STATE_CHANGED", {"resources": str(res), "state": state})

    def onReportEnergyConsumed(self, consumed_energy: float) -> None:  # noqa: N802
        self._push("ANSWER", {"consumed_energy": consumed_energy})

    def onRequestedCall(self) -> None:  # noqa: N802
        self._push("REQUESTED_CALL", {})

    def onNoMoreJobsInWorkloads(self) -> None:  # noqa: N802
        self._push("NOTIFY", {"type": "no_more_static_job_to_submit"})

    def onNoMoreExternalEvents(self) -> None:  # noqa: N802
        self._push("NOTIFY", {"type": "no_more_external_event_to_occur"})

    def onNotifyEventMachineUnavailable(self, machines: ProcSet) -> None:  # noqa: N802
        self._push("NOTIFY", {"type": "event_machine_unavailable", "resources": str(machines)})

    def onNotifyEventMachineAvailable(self, machines: ProcSet) -> None:  # noqa: N802
        self._push("NOTIFY", {"type": "event_machine_available", "resources": str(machines)})

    def onNotifyGenericEvent(self, event_data: dict[str, Any]) -> None:  # noqa: N802
        self._push("NOTIFY", copy.deepcopy(dict(event_data)))

    def onAddResources(self, to_add: ProcSet) -> None:  # noqa: N802
        self._push("ADD_RESOURCES", {"resources": str(to_add)})

    def onRemoveResources(self, to_remove: ProcSet) -> None:  # noqa: N802
        self._push("REMOVE_RESOURCES", {"resources": str(to_remove)})

    def onJobMessage(self, timestamp: float, job: Any, message: Any) -> None:  # noqa: N802
        self._push("FROM_JOB_MSG", {"job_id": job.id, "msg": message}, timestamp=timestamp)

    # -------------------------------------------------------------- decisions -> pybatsim
    def _job(self, job_id: str) -> Any:
        try:
            return self.bs.jobs[job_id]
        except KeyError:
            raise PolicyError(f"policy {self.policy.name!r} decided about job {job_id!r}, "
                              f"which pybatsim does not know") from None

    def _apply(self, decisions: list[Decision]) -> None:
        bs = self.bs
        now = bs.time()
        for d in decisions:
            ts = d.timestamp
            at = None if ts is None else float(ts)
            shifted = at is not None and at != float(now)
            if shifted:
                # pybatsim stamps every event with bs.time(); it has no per-event timestamp argument.
                bs._current_time = at
            try:
                self._apply_one(d)
            finally:
                if shifted:
                    bs._current_time = now

    def _apply_one(self, d: Decision) -> None:
        bs = self.bs
        if isinstance(d, ExecuteJob):
            job = self._job(d.job_id)
            job.allocation = ProcSet(d.alloc)
            unknown = sorted(set(d.extra) - set(_EXECUTE_EXTRAS))
            if unknown:
                log.warning("EXECUTE_JOB %s: pybatsim cannot send the fields %s; dropped", d.job_id, unknown)
            for key in ("mapping", "storage_mapping"):
                if key in d.extra:
                    setattr(job, key, d.extra[key])
            io_job = d.extra.get("additional_io_job")
            bs.execute_jobs([job], io_jobs=None if io_job is None else {job.id: io_job})
        elif isinstance(d, RejectJob):
            bs.reject_jobs([self._job(d.job_id)])
        elif isinstance(d, KillJobs):
            if d.job_ids:
                bs.kill_jobs([self._job(j) for j in d.job_ids])
        elif isinstance(d, CallMeLater):
            bs.wake_me_up_at(float(d.at))
        elif isinstance(d, SetResourceState):
            bs.set_resource_state(ProcSet(d.resources), str(d.state))
        elif isinstance(d, Query) and d.requests == {"consumed_energy": {}}:
            bs.request_consumed_energy()
        elif isinstance(d, NotifyBatsim) and d.type == "registration_finished" and not d.data:
            bs.notify_registration_finished()
        elif isinstance(d, NotifyBatsim) and d.type == "continue_registration" and not d.data:
            bs.notify_registration_continue()
        else:
            # No pybatsim call for this decision (other QUERY requests, other NOTIFY types, generic
            # decisions): queue the event exactly as gridsched serve would send it.
            event = json.loads(encode_decisions(float(bs.time()), [d]))["events"][0]
            bs._events_to_send.append(event)


def make_pybatsim_scheduler(policy_cls: type[Policy] | None, name: str | None = None) -> type:
    """A pybatsim scheduler class (subclass of ``BatsimScheduler``) that runs ``policy_cls``.

    Args:
        policy_cls: a :class:`~schedulers.core.policy.Policy` subclass, instantiated with pybatsim's
            scheduler options (``cls(options)``, a dict); None: the policy is chosen at run time by
            the ``policy`` option among :data:`schedulers.registry.POLICIES`.
        name: class name (default ``<PolicyClass>PyBatsim``); the class's ``__module__`` is this
            module, so ``module:name`` entry points and pickling find it.

    Returns:
        The new class; instances expose ``policy`` (the policy object) and ``messages``.

    Raises:
        ImportError: pybatsim is not installed (with the install recipe).
        TypeError: ``policy_cls`` is not a Policy subclass.
    """
    if policy_cls is not None and not (isinstance(policy_cls, type) and issubclass(policy_cls, Policy)):
        raise TypeError(f"policy_cls must be a Policy subclass or None, got {policy_cls!r}")
    base = _base_class()
    cls_name = name or (f"{policy_cls.__name__}PyBatsim" if policy_cls is not None else "GridschedPyBatsim")
    doc = (f"pybatsim scheduler running gridsched's {policy_cls.__name__} policy "
           f"({policy_cls.__module__}); see schedulers.batsim.pybatsim_glue." if policy_cls is not None else
           "pybatsim scheduler running the gridsched policy named by the 'policy' scheduler option.")
    return type(cls_name, (_PyBatsimGlue, base), {
        "policy_class": policy_cls,
        "__module__": __name__,
        "__qualname__": cls_name,
        "__doc__": doc,
    })


def scheduler_class(attr: str) -> type:
    """The pybatsim scheduler class exported as ``attr`` (one of :data:`ENTRY_POINT_CLASSES`).

    Created once (cached), on first use.

    Raises:
        AttributeError: ``attr`` is not an exported class name.
        ImportError: pybatsim is not installed.
    """
    if attr not in ENTRY_POINT_CLASSES:
        raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
    cls = _CLASS_CACHE.get(attr)
    if cls is None:
        policy_name = ENTRY_POINT_CLASSES[attr]
        policy_cls = None
        if policy_name is not None:
            from .. import registry

            policy_cls = registry.POLICIES[policy_name]
        cls = make_pybatsim_scheduler(policy_cls, attr)
        _CLASS_CACHE[attr] = cls
    return cls


def __getattr__(attr: str) -> type:
    """Lazy ``FCFSPyBatsim`` / ``EASYPyBatsim`` / ``GridschedPyBatsim`` (PEP 562)."""
    return scheduler_class(attr)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(ENTRY_POINT_CLASSES))
