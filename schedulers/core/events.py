"""Typed events (Batsim -> scheduler) and decisions (scheduler -> Batsim) of the Batsim 4.x protocol.

Each class mirrors one event ``type`` of the protocol (https://batsim.readthedocs.io, "Protocol"),
as recorded on real Batsim 4.2.1 in ``shared/batsim-4.2.1/transcripts``. Allocations and resource
sets are :class:`procset.ProcSet` interval sets (Batsim writes them ``"0-3 7"``).
Times are simulation seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from procset import ProcSet

from .model import Host, Job


# --------------------------------------------------------------------------- events (Batsim -> us)
@dataclass(slots=True)
class Event:
    """Base of all events; ``timestamp`` is when Batsim says the event happened (s)."""

    timestamp: float


@dataclass(slots=True)
class SimulationBegins(Event):
    """SIMULATION_BEGINS: the platform, the configuration and (static) workloads' profiles."""

    nb_resources: int = 0
    nb_compute_resources: int = 0
    nb_storage_resources: int = 0
    allow_compute_sharing: bool = False
    allow_storage_sharing: bool = True
    config: dict[str, Any] = field(default_factory=dict)
    compute_resources: list[Host] = field(default_factory=list)
    storage_resources: list[Host] = field(default_factory=list)
    workloads: dict[str, str] = field(default_factory=dict)
    profiles: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class JobSubmitted(Event):
    """JOB_SUBMITTED: a job arrives (its profile too with ``--forward-profiles-on-submission``)."""

    job: Job = None  # type: ignore[assignment]

    @property
    def job_id(self) -> str:
        return self.job.id


@dataclass(slots=True)
class JobCompleted(Event):
    """JOB_COMPLETED: a job ended (success, walltime reached, killed or failed)."""

    job_id: str = ""
    job_state: str = "COMPLETED_SUCCESSFULLY"
    return_code: int = 0
    alloc: ProcSet = field(default_factory=ProcSet)


@dataclass(slots=True)
class JobKilled(Event):
    """JOB_KILLED: acknowledges a KILL_JOB; ``job_progress`` maps job id -> progress tree."""

    job_ids: list[str] = field(default_factory=list)
    job_progress: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ResourceStateChanged(Event):
    """RESOURCE_STATE_CHANGED: hosts reached pstate ``state`` (a string in the protocol)."""

    resources: ProcSet = field(default_factory=ProcSet)
    state: str = "0"


@dataclass(slots=True)
class RequestedCall(Event):
    """REQUESTED_CALL: the wake-up asked by a CALL_ME_LATER."""


@dataclass(slots=True)
class Notify(Event):
    """NOTIFY from Batsim.

    Attributes:
        type: ``"no_more_static_job_to_submit"`` (every job of the workload files is submitted),
            ``"no_more_external_event_to_occur"``, ``"event_machine_unavailable"`` /
            ``"event_machine_available"`` (external events, with ``resources``), or the type of an
            event of the user's own forwarded with ``--forward-unknown-events``.
        data: the other fields of the notification (e.g. ``{"resources": "0-3"}``).
    """

    type: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Answer(Event):
    """ANSWER to a QUERY.

    Attributes:
        data: the answers by query, e.g. ``{"consumed_energy": 7157.115367}`` (J).
    """

    data: dict[str, Any] = field(default_factory=dict)

    @property
    def consumed_energy(self) -> float | None:
        """The energy the platform consumed since time 0 (J), when the answer carries it, else
        None."""
        v = self.data.get("consumed_energy")
        return None if v is None else float(v)


@dataclass(slots=True)
class SimulationEnds(Event):
    """SIMULATION_ENDS: the scheduler must answer once more, then stop."""


@dataclass(slots=True)
class GenericEvent(Event):
    """Any event type this codec does not model; kept verbatim so policies can ignore it."""

    type: str = ""
    data: Any = None


# ------------------------------------------------------------------------ decisions (us -> Batsim)
@dataclass(slots=True)
class Decision:
    """Base of all decisions. ``timestamp`` None means "the message's now"."""

    timestamp: float | None = field(default=None, kw_only=True)


#: The optional fields of Batsim 4.2.1's EXECUTE_JOB (the keys :attr:`ExecuteJob.extra` may have).
EXECUTE_JOB_FIELDS = ("mapping", "storage_mapping", "additional_io_job")


@dataclass(slots=True)
class ExecuteJob(Decision):
    """EXECUTE_JOB: run ``job_id`` on the hosts ``alloc``; ``extra`` keeps optional protocol fields
    (``mapping``, ``storage_mapping``, ``additional_io_job``)."""

    job_id: str = ""
    alloc: ProcSet = field(default_factory=ProcSet)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class RejectJob(Decision):
    """REJECT_JOB: the job will never run (final state REJECTED)."""

    job_id: str = ""


@dataclass(slots=True)
class KillJobs(Decision):
    """KILL_JOB: kill running jobs; Batsim answers JOB_COMPLETED (COMPLETED_KILLED) + JOB_KILLED."""

    job_ids: list[str] = field(default_factory=list)


@dataclass(slots=True)
class CallMeLater(Decision):
    """CALL_ME_LATER: ask for a REQUESTED_CALL at simulation time ``at`` (s)."""

    at: float = 0.0


@dataclass(slots=True)
class SetResourceState(Decision):
    """SET_RESOURCE_STATE: switch ``resources`` to pstate ``state`` (sleep via ``sleep_pstates``)."""

    resources: ProcSet = field(default_factory=ProcSet)
    state: str = "0"


@dataclass(slots=True)
class Query(Decision):
    """QUERY: e.g. ``{"consumed_energy": {}}``; Batsim answers at once with an ANSWER."""

    requests: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class NotifyBatsim(Decision):
    """NOTIFY from the scheduler (``registration_finished``, ``continue_registration``)."""

    type: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class RegisterProfile(Decision):
    """REGISTER_PROFILE (``--enable-dynamic-jobs``): add profile ``name`` to workload ``workload``
    (created when new). Batsim aborts if the profile already exists."""

    workload: str = ""
    name: str = ""
    profile: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class RegisterJob(Decision):
    """REGISTER_JOB (``--enable-dynamic-jobs``): submit a new job ``job_id`` (``"workload!name"``)
    described by ``job`` (``id``, ``subtime``, ``res``, ``profile``, optional ``walltime`` and any
    extra field). Its workload must exist (register a profile in it first); its profile must
    exist in that workload. With ``--acknowledge-dynamic-jobs`` Batsim answers JOB_SUBMITTED."""

    job_id: str = ""
    job: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class GenericDecision(Decision):
    """Any other decision type, sent verbatim (``type`` + ``data``)."""

    type: str = ""
    data: Any = None
