"""The jobs of a run: those the engine holds, those ended, and how a job id is found.

A component of :class:`schedulers.engine.simulator.Engine`: :class:`JobBook` owns the workloads
by name (the static ones, then those REGISTER_PROFILE creates), the jobs the engine holds as
:class:`~.workload.EngineJob` (submitted and not yet forgotten), and the ended jobs
(:class:`~.results.DoneJobs`, in the order they ended: the result's jobs) with, for each job, its
row there. It also keeps Batsim's server counts of the jobs running and finished (the
executions count a start and an end, the server a rejection). It asks the others for nothing:
the server and the executions tell it when a job ends (:meth:`JobBook.ended`) and when its end
reached the server (:meth:`JobBook.forget`).

Batsim behaviour reproduced (``src/jobs.cpp``, ``src/server.cpp`` of Batsim 4.2.1): jobs stream
through the engine. A workload's jobs wait in its :class:`~.jobtable.JobTable`, packed, until
the static submitter reaches their ``subtime``; an ended job is forgotten once its end reached
the server (its ``out_jobs.csv`` row). A decision naming a job that is not held (ended, or not
submitted yet) still finds it (:meth:`JobBook.known`), as Batsim's workloads keep every job.
"""

from __future__ import annotations

from array import array

from .clock import shown_time
from .ports import EngineError
from .results import DoneJob, DoneJobs
from .workload import EngineJob, Workload


class JobBook:
    """The jobs of the workloads, held, ended and forgotten (see the module docstring).

    Args:
        workloads: the static workloads, in order (w0, w1...).

    Attributes:
        by_name: workload name -> :class:`~.workload.Workload` (registered workloads added).
        live: job id -> :class:`~.workload.EngineJob`: the jobs submitted and not forgotten.
        done: the ended jobs, in the order they ended.
        nb_jobs: jobs of the static workloads (registered ones added by :class:`.dynamic.DynamicJobs`).
        running: jobs started and not ended (Batsim's server count).
        finished: jobs ended: completed, killed or rejected (Batsim's server count).
    """

    def __init__(self, workloads: list[Workload]) -> None:
        self.by_name: dict[str, Workload] = {w.name: w for w in workloads}
        self._index = {w.name: i for i, w in enumerate(workloads)}
        self.live: dict[str, EngineJob] = {}
        self.nb_jobs = sum(len(w.jobs) for w in workloads)
        self.done = DoneJobs()
        # the row in ``done`` of each static job (-1: not ended), by workload and submission index
        self._rows = {w.name: array("q", [-1]) * len(w.jobs) for w in workloads}
        self._dynamic: dict[str, int] = {}  # the row of each ended registered job
        self.running = 0
        self.finished = 0

    def ended(self, job: EngineJob) -> None:
        """``job`` ended (completed, killed or rejected): its row in :attr:`done` (``job.row``)."""
        job.row = self.done.append(job)

    def forget(self, job: EngineJob) -> None:
        """``job``'s end reached the server: the :class:`EngineJob` is dropped; what is left of it
        is its row in :attr:`done` (:meth:`ended` first).

        Raises:
            KeyError: ``job`` is not held.
        """
        del self.live[job.id]
        if job.pos >= 0:
            self._rows[job.workload][job.pos] = job.row
        else:
            self._dynamic[job.id] = job.row

    def known(self, jid: str) -> EngineJob | DoneJob | None:
        """A job that is not held now: ended (its :class:`~.results.DoneJob` record), not
        submitted yet (a new :class:`EngineJob`, state ``NOT_SUBMITTED``, that is not kept), or
        None when no workload has it."""
        row = self._dynamic.get(jid)
        if row is None:
            wname, _, name = jid.partition("!")
            w = self.by_name.get(wname)
            k = w.jobs.find(name) if w is not None and name else None
            if k is None or w is None:
                return None
            row = self._rows[wname][k] if wname in self._rows else -1
            if row < 0:
                return w.jobs.job(k)
        return self.done[row]

    def named(self, jid: str, what: str, now: float) -> EngineJob | DoneJob:
        """The job ``jid`` a decision ``what`` (e.g. ``"EXECUTE_JOB"``) names at time ``now``
        (s): held (running or waiting), or else :meth:`known`.

        Raises:
            EngineError: no workload has such a job.
        """
        job = self.live.get(jid)
        if job is not None:
            return job
        known = self.known(jid)
        if known is None:
            raise EngineError(f"{what} at t={shown_time(now)}: unknown job {jid!r}")
        return known

    def load_rank(self, job: EngineJob, registered: int) -> int:
        """Where Batsim's ``std::set<JobPtr>`` of a machine's running jobs puts ``job`` (smaller
        first; the first is the job the Pajé trace shows). The set orders the jobs by the address
        of each ``Job``, made by ``Job::from_json`` (``src/jobs.cpp``) while the workload files
        are read; as recorded on Batsim 4.2.1 (``tests/fixtures/batsim_paje_sharing``), the jobs
        of one workload file lie, in most cases, in file order but for the second and third,
        swapped (where glibc's allocator puts each job among the first jobs' freed temporaries).
        Here: the first workload's jobs in that order, each other workload's after them in file
        order (as recorded, a later file's jobs are not swapped), then the registered jobs,
        ``registered`` being how many came before it. The true order also depends on the platform, the file's
        size, the number of workloads and ``-E``, and for registered jobs on the whole run:
        nothing the engine can know (``docs/engine/fidelity.md``)."""
        if job.pos < 0:
            return (1 << 62) + registered
        w = self.by_name[job.workload]
        index = self._index[job.workload]
        k = w.jobs.file_index(job.pos)
        if index == 0 and k in (1, 2):
            k = 3 - k
        return index << 40 | k

    def in_load_order(self) -> list[EngineJob]:
        """The jobs held, static jobs by workload then submission order, registered jobs after
        them in registration order."""
        index = self._index
        return sorted(self.live.values(), key=lambda j: (0, index[j.workload], j.pos) if j.pos >= 0 else (1, 0, 0))
