"""The jobs of one workload before the engine submits them: compact, made into jobs one by one.

A :class:`JobTable` holds a workload's jobs in Batsim's submission order (``subtime``, then the
job id string: ``job_comparator_subtime_number`` in ``src/jobs.cpp`` of Batsim 4.2.1, as the
static job submitter walks them) without an :class:`~.workload.EngineJob` or a decoded JSON
object per job: their submission times in an array (8 bytes a job), the submission order in
another (8 bytes), and the jobs' source, either the jobs packed in one buffer
(:class:`~schedulers.inputs.jsonstream.PackedJobs`, about 85 bytes a job) or, for a workload
given as a dict, the caller's job objects. :meth:`JobTable.job` makes the engine job when the
submitter reaches it: its JSON object unpacked (or copied), ``id`` rewritten to
``workload!name`` as Batsim forwards it in JOB_SUBMITTED. Every job was checked when the
workload was read (:func:`~.workload.load_workload`), so making one cannot fail.

Looking a job up by name (:meth:`JobTable.find`, for a decision naming a job that is not
running: already finished, or not submitted yet) uses an index of the names' hashes (16 bytes a
job), built the first time it is needed.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from typing import Any, Iterator, Sequence

from .workload import EngineJob, Stages, job_name


def due_end(times: Sequence[float], k: int, clock: float, woke: bool) -> int:
    """The index after the items a submitter takes at its clock ``clock`` from index ``k``:
    woken from a sleep (``woke``), the item it slept for even if SimGrid's clock stops short of
    its time (1e-16 s early after a sleep of ``time - clock``: the next item of that time then
    waits for a second sleep and a second message), then every next one whose time is not after
    the clock (``static_job_submitter_process``, ``static_event_submitter_process``)."""
    n = len(times)
    if woke and k < n:
        k += 1
    while k < n and times[k] <= clock:
        k += 1
    return k


def submission_order(subtimes: Sequence[float], names: Sequence[str]) -> array:
    """The indices of jobs sorted by ``subtime`` (s), then by name (the job id string
    ``workload!name``, whose workload prefix is the same for all), as Batsim submits them."""
    order = sorted(range(len(subtimes)), key=subtimes.__getitem__)
    n = len(order)
    i = 0
    while i < n:
        t = subtimes[order[i]]
        j = i + 1
        while j < n and subtimes[order[j]] == t:
            j += 1
        if j - i > 1:
            order[i:j] = sorted(order[i:j], key=names.__getitem__)
        i = j
    return array("q", order)


class JobTable:
    """The jobs of workload ``workload`` in submission order (see the module docstring).

    Args:
        workload: the workload name (``w0``).
        source: the jobs' JSON objects in file order (``source[i]`` a dict, checked).
        copy: ``source[i]`` is the caller's object: copy it before changing its ``id``
            (``False`` for a :class:`~schedulers.inputs.jsonstream.PackedJobs`, which decodes a
            fresh object each time).
        order: ``order[k]`` is the index in ``source`` of the ``k``-th job submitted.
        subtimes: submission times (s) in submission order.
        profiles: the workload's profiles (the engine's dict).
    """

    __slots__ = ("workload", "subtimes", "_source", "_copy", "_order", "_profiles", "_composed", "_memo",
                 "_hash", "_hpos")

    def __init__(self, workload: str, source: Sequence[Any], copy: bool, order: array, subtimes: array,
                 profiles: dict[str, dict]) -> None:
        self.workload = workload
        self.subtimes = subtimes
        self._source = source
        self._copy = copy
        self._order = order
        self._profiles = profiles
        self._composed: dict[str, Stages] = {}  # Stages of composed profiles, by name
        self._memo: dict[str, tuple[int, list[int]]] = {}
        self._hash: array | None = None
        self._hpos: array | None = None

    @classmethod
    def empty(cls, workload: str, profiles: dict[str, dict]) -> "JobTable":
        """A table without jobs (a workload created by REGISTER_PROFILE)."""
        return cls(workload, (), False, array("q"), array("d"), profiles)

    def __len__(self) -> int:
        return len(self._order)

    def file_index(self, k: int) -> int:
        """The position in the workload file of the ``k``-th job submitted."""
        return self._order[k]

    def name(self, k: int) -> str:
        """The name (the part after ``!``) of the ``k``-th job submitted."""
        return job_name("", self.workload, self._source[self._order[k]]["id"])

    def job(self, k: int) -> EngineJob:
        """A new :class:`EngineJob` for the ``k``-th job submitted (state ``NOT_SUBMITTED``,
        ``pos`` = ``k``), its ``raw`` object the job's JSON with ``id`` = ``workload!name``."""
        raw = self._source[self._order[k]]
        if self._copy:
            raw = dict(raw)
        rid = raw["id"]
        # a checked id without '!' is the name itself (see job_name)
        name = rid if type(rid) is str and "!" not in rid else job_name("", self.workload, rid)
        full = f"{self.workload}!{name}"
        raw["id"] = full
        prof = raw["profile"]
        top = self._profiles[prof]
        if top["type"] == "composed":
            stages: Any = self._composed.get(prof)
            if stages is None:
                stages = self._composed[prof] = Stages(prof, self._profiles, self._memo)
        else:
            stages = ((prof, top),)  # a leaf: one stage (no Stages object kept per profile)
        return EngineJob(full, name, self.workload, self.subtimes[k], float(raw.get("walltime", -1)), raw["res"],
                         prof, raw, pos=k, stages=stages)

    def __getitem__(self, k: int) -> EngineJob:
        if not -len(self) <= k < len(self):
            raise IndexError(f"job {k} of workload {self.workload}, which has {len(self)}")
        return self.job(k % len(self))

    def __iter__(self) -> Iterator[EngineJob]:
        for k in range(len(self)):
            yield self.job(k)

    def find(self, name: str) -> int | None:
        """The submission index of the job named ``name``, or None."""
        hs, pos = self._hash, self._hpos
        if hs is None or pos is None:
            hashes = [hash(self.name(k)) for k in range(len(self))]
            by_hash = sorted(range(len(hashes)), key=hashes.__getitem__)
            self._hash = hs = array("q", (hashes[k] for k in by_hash))
            self._hpos = pos = array("q", by_hash)
        h = hash(name)
        i = bisect_left(hs, h)
        while i < len(hs) and hs[i] == h:
            k = pos[i]
            if self.name(k) == name:
                return k
            i += 1
        return None
