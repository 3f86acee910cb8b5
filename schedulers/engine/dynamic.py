"""Dynamic jobs: REGISTER_PROFILE, REGISTER_JOB, the end of registration, profile collection.

A component of :class:`schedulers.engine.simulator.Engine`: :class:`DynamicJobs` owns whether
registration is finished (NOTIFY ``registration_finished`` / ``continue_registration``) and the
ended jobs whose profiles Batsim collects once a message has been sent (Batsim's
``jobs_to_be_deleted``). It asks the :class:`.jobs.JobBook` for the workloads and the jobs (a
registered job is added to its held jobs and counted), the :class:`.clock.Clock` for the time,
and is given a way to post JOB_SUBMITTED to the scheduler. The server calls
:meth:`DynamicJobs.ended` when a job's end reaches it and :meth:`DynamicJobs.collect` when it
sends a message.

Dynamic jobs (``--enable-dynamic-jobs``, ``handle_register_job``/``handle_register_profile``)
    REGISTER_PROFILE adds a profile to a workload, created if new (an existing profile is an
    error); REGISTER_JOB adds a job to an existing workload with the checks of Batsim's
    ``Job::from_json`` (``subtime`` required: Batsim 4.2.1 aborts without it, the engine says
    so); with ``--acknowledge-dynamic-jobs`` the server answers JOB_SUBMITTED at once. The
    simulation ends only after NOTIFY ``registration_finished`` (``is_simulation_finished``).
Profile garbage collection (``server_process``, ``Jobs::delete_job``, ``Profiles::remove_profile``)
    Once a message carrying a job's end (completed, killed or rejected) has been sent, Batsim
    deletes the job and, unless ``--enable-profile-reuse``, empties its profile's entry (and the
    sub-profiles of a ``composed`` one): the name stays taken (REGISTER_PROFILE of it aborts) but a
    later REGISTER_JOB naming it aborts ("it existed some time ago but is no longer accessible"),
    even if other jobs still run with it. The engine refuses the same, with that reason.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable

from ..core.events import JobSubmitted
from ..core.model import Job
from ..inputs.errors import WorkloadError
from .clock import Clock, shown_time
from .execution import SUBMITTED
from .jobs import JobBook
from .jobtable import JobTable
from .ports import EngineError
from .workload import EngineJob, Workload, build_job, check_profile, job_name


class DynamicJobs:
    """Batsim's dynamic job registration and profile garbage collection (module docstring).

    Args:
        book: the run's jobs (:class:`.jobs.JobBook`).
        clock: the simulation clock (:class:`.clock.Clock`).
        post: called with each event for the scheduler (JOB_SUBMITTED).
        enabled: Batsim's ``--enable-dynamic-jobs``.
        acknowledge: Batsim's ``--acknowledge-dynamic-jobs``.
        forward_profiles: Batsim's ``--forward-profiles-on-submission``.
        profile_reuse: Batsim's ``--enable-profile-reuse``.

    Attributes:
        registration_finished: the scheduler sent NOTIFY ``registration_finished`` (and no
            ``continue_registration`` since).
    """

    def __init__(self, book: JobBook, *, clock: Clock, post: Callable[[Any], None], enabled: bool, acknowledge: bool,
                 forward_profiles: bool, profile_reuse: bool) -> None:
        self.book = book
        self.clock = clock
        self.post = post
        self.enabled = enabled
        self.acknowledge = acknowledge
        self.forward_profiles = forward_profiles
        self.registration_finished = False
        # Batsim's profile garbage collection only shows through REGISTER_JOB and additional IO
        # jobs: track ended jobs (Batsim's jobs_to_be_deleted) only when the scheduler can register
        # jobs, or from its first additional IO job on (track_collection)
        self._collect = enabled and not profile_reuse
        self._reuse = profile_reuse
        self._to_delete: list[EngineJob] = []

    def track_collection(self) -> None:
        """A decision looks a profile up by name (EXECUTE_JOB's ``additional_io_job``): from now on
        the profiles of ended jobs are collected as Batsim does (unless profile reuse), those of the
        jobs ended so far at once."""
        if self._collect or self._reuse:
            return
        self._collect = True
        self._collect_profiles(list(self.book.done))

    def ended(self, job: EngineJob) -> None:
        """``job``'s end (completed, killed, rejected) reached the server."""
        if self._collect:
            self._to_delete.append(job)

    def collect(self) -> None:
        """A message is sent to the scheduler: the profiles of the jobs ended since are collected."""
        if self._to_delete:
            self._collect_profiles(self._to_delete)
            self._to_delete = []

    def _check(self, what: str) -> None:
        """Raise Batsim's abort for a registration ``what`` when it is not allowed now."""
        if not self.enabled:
            raise EngineError(f"{what} at t={shown_time(self.clock.now)}: dynamic job registration is disabled (Batsim aborts); "
                              "enable it with Batsim's --enable-dynamic-jobs (a policy declares requires = "
                              "{\"dynamic-jobs\"}, which gridsched run and campaigns honour)")
        if self.registration_finished:
            raise EngineError(f"{what} at t={shown_time(self.clock.now)}: the scheduler already sent NOTIFY "
                              "registration_finished (Batsim aborts)")

    def register_profile(self, workload: str, name: str, profile: dict) -> None:
        """REGISTER_PROFILE: ``profile`` named ``name`` in ``workload`` (created if new).

        Raises:
            EngineError: Batsim 4.2.1's abort: dynamic jobs disabled, registration finished, the
                profile exists, or the profile is invalid.
        """
        self._check(f"REGISTER_PROFILE {workload}/{name}")
        w = self.book.by_name.get(workload)
        if w is None:
            profiles: dict[str, dict] = {}
            w = Workload(name=workload, path="dynamic", jobs=JobTable.empty(workload, profiles), profiles=profiles)
            self.book.by_name[workload] = w
        if name in w.profiles:
            raise EngineError(f"REGISTER_PROFILE at t={shown_time(self.clock.now)}: profile {name!r} already exists in workload "
                              f"{workload!r} (Batsim aborts)")
        try:
            check_profile(f"REGISTER_PROFILE at t={shown_time(self.clock.now)}", name, profile, w.profiles)
        except WorkloadError as exc:
            raise EngineError(str(exc)) from None
        w.profiles[name] = profile
        if profile.get("type") == "composed":
            w.registered_composed.add(name)

    def register_job(self, job_id: str, obj: dict) -> None:
        """REGISTER_JOB: the job ``obj`` (Batsim's job JSON) as ``job_id`` (``workload!name``),
        submitted now; JOB_SUBMITTED posted with ``--acknowledge-dynamic-jobs``.

        Raises:
            EngineError: Batsim 4.2.1's abort (the message names the job and the reason).
        """
        where = f"REGISTER_JOB {job_id!r} at t={shown_time(self.clock.now)}"
        self._check(f"REGISTER_JOB {job_id!r}")
        wname, sep, jname = job_id.partition("!")
        if not sep or not wname or not jname:
            raise EngineError(f"{where}: job_id must be 'workload!name'")
        w = self.book.by_name.get(wname)
        if w is None:
            raise EngineError(f"{where}: workload {wname!r} does not exist; register a profile in it first "
                              "(REGISTER_PROFILE) or use an existing workload (Batsim aborts)")
        if job_id in self.book.live or self.book.known(job_id) is not None:
            raise EngineError(f"{where}: job {job_id!r} already exists (Batsim aborts)")
        if not isinstance(obj, dict) or "id" not in obj:
            raise EngineError(f"{where}: the job object has no 'id' field")
        raw_id = obj["id"]
        try:
            own = f"{wname}!{job_name(where, wname, raw_id)}"
        except WorkloadError as exc:
            raise EngineError(str(exc)) from None
        if own != job_id:
            raise EngineError(f"{where}: the job object's id {raw_id!r} names another job than {job_id!r}")
        sub = obj.get("subtime")
        if "subtime" not in obj or isinstance(sub, bool) or not isinstance(sub, (int, float)) or not math.isfinite(sub):
            raise EngineError(f"{where}: the job has no numeric 'subtime' (Batsim 4.2.1 aborts); send the "
                              f"submission time, e.g. the current time {shown_time(self.clock.now)}")
        prof = obj.get("profile")
        if isinstance(prof, str) and prof in w.unreferenced:
            raise EngineError(f"{where}: profile {prof!r} of workload {wname!r} was removed when the workload was "
                              "loaded, because no job of it used the profile (Batsim 4.2.1 removes such profiles, "
                              "then aborts: 'it existed some time ago but is no longer accessible'); register the "
                              "profile under a new name (REGISTER_PROFILE)")
        if isinstance(prof, str) and prof in w.collected:
            raise EngineError(f"{where}: profile {prof!r} of workload {wname!r} was garbage-collected when a job "
                              "using it ended (Batsim 4.2.1 aborts: 'it existed some time ago but is no longer "
                              "accessible'); register a new profile, or enable profile reuse "
                              "(--enable-profile-reuse)")
        if isinstance(prof, str) and prof not in w.profiles:
            raise EngineError(f"{where}: profile {prof!r} does not exist in workload {wname!r} "
                              "(register it first with REGISTER_PROFILE)")
        try:
            job = build_job(where, wname, jname, obj, float(sub), w.profiles, None)
        except WorkloadError as exc:
            raise EngineError(str(exc)) from None
        job.state = SUBMITTED
        # not in w.jobs: that table is the static submitter's, walked by index until its last
        # arrival; a registered job there would be submitted a second time
        self.book.live[job_id] = job
        self.book.nb_jobs += 1
        if self.acknowledge:
            fwd = w.profiles[job.profile] if self.forward_profiles else None
            self.post(JobSubmitted(self.clock.now, job=Job.from_json(job_id, job.raw, fwd)))

    def _collect_profiles(self, jobs: Iterable[Any]) -> None:
        """Batsim's garbage collection of the profiles of ended jobs (see the module docstring);
        ``jobs``: :class:`~.workload.EngineJob` or :class:`~.results.DoneJob` (``workload``, ``profile``)."""
        for job in jobs:
            w = self.book.by_name[job.workload]
            todo = [job.profile]
            while todo:
                name = todo.pop()
                if name in w.collected or name not in w.profiles:
                    continue
                w.collected.add(name)
                prof = w.profiles[name]
                if prof.get("type") == "composed":
                    todo.extend(str(s) for s in prof.get("seq", ()))
