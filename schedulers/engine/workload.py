"""Read Batsim JSON workloads for the embedded engine.

A workload file holds ``jobs`` (``id``, ``subtime``, ``walltime`` (-1 = none), ``res``,
``profile``, any extra field) and ``profiles``. Several workloads can be simulated at once; they
are named ``w0``, ``w1``, ... in command-line order, as Batsim does, and job ids become
``"<workload>!<id>"``.

Profiles the engine simulates (Batsim 4.2.1 semantics, checked against
``shared/batsim-4.2.1/outputs/run3``): ``delay``, ``parallel_homogeneous``,
``parallel_homogeneous_total``, ``parallel``, ``composed`` with ``repeat`` (Batsim 4.2.1 has no
``sequence`` alias: see :data:`BATSIM_ONLY_PROFILES`), and the IO profiles on platforms with
storage hosts, ``parallel_homogeneous_pfs`` and ``data_staging`` (:mod:`.iotasks`).
Other types (SMPI, usage traces, ...) raise :class:`WorkloadError` pointing to real
Batsim.

Numbers are bounded where they are read, so that no output can hold a NaN, an infinity or a
time that lost its precision: every number must be finite; ``walltime`` > 0 (or -1), ``delay`` >
0, flops >= 0, ``res`` >= 0; and every time (``subtime``, ``walltime``, ``delay``) is at most
:data:`MAX_TIME` = 2**33 s (about 272 years) from 0. A negative ``subtime`` is accepted, as Batsim
4.2.1 accepts it (``Job::from_json`` reads any number): its job is submitted at 0 with the jobs
due then, and keeps its own ``subtime`` (``submission_time`` and ``waiting_time`` of
``out_jobs.csv``, recorded in ``tests/fixtures/batsim_negative_subtime``). Below it a double still resolves the
microsecond the outputs print (its spacing is at most 2**-20 s), and the sums the engine and the
metrics make of such times (start + run, sums over jobs) stay finite. A job's whole profile,
``composed`` ones expanded with their ``repeat``, has at most :data:`MAX_STAGES` stages; the stages
are never materialised (:class:`Stages` computes each one when the engine reaches it).

Job ids follow Batsim 4.2.1 (:func:`job_name`).

Memory: :func:`load_workload` checks every job and profile before the simulation (Batsim
validates the whole workload when it loads it), reading the file piece by piece
(:mod:`schedulers.inputs.jsonstream`) and checking each job as it is read (:class:`JobChecks`);
the jobs are then kept packed (about 85 bytes a job) until the engine submits them
(:class:`~.jobtable.JobTable` makes the :class:`EngineJob`), and the engine keeps an ended job
only as a row of its finished jobs (:class:`~.results.DoneJobs`).
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from itertools import chain
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NoReturn, Sequence, cast

from ..core.limits import MAX_TIME, NO_DOUBLE
from ..inputs.errors import WorkloadError

SUPPORTED_PROFILES = ("delay", "parallel_homogeneous", "parallel_homogeneous_total", "parallel", "composed",
                      "parallel_homogeneous_pfs", "data_staging")
#: The other profile types Batsim 4.2.1 knows (``src/profiles.cpp``, ``Profile::from_json``): real
#: Batsim runs them (``--engine batsim``), the engine does not. Batsim reads any *other* type as a
#: ``usage_trace`` (its test is ``profile_type == "smpi" || "usage_trace"``, always true), so such a
#: profile needs a ``trace`` field naming a file, else Batsim aborts ("profile 'x' has no 'trace'
#: field"): older names such as ``sequence`` (for ``composed``) included.
BATSIM_ONLY_PROFILES = ("send", "recv", "smpi", "usage_trace")


@dataclass(slots=True, eq=False)
class EngineJob:
    """A job inside the engine (mutable run-time state included)."""

    id: str
    name: str
    workload: str
    subtime: float
    walltime: float
    res: int
    profile: str
    raw: dict[str, Any]
    index: int = 0
    pos: int = -1  # position in its workload's submission order (-1: a job registered during the run)
    row: int = -1  # its row in the engine's finished jobs (:class:`~.results.DoneJobs`) once ended
    state: str = "NOT_SUBMITTED"
    start: float = -1.0
    finish: float = -1.0
    runtime: float = 0.0
    alloc: Any = None  # ProcSet
    hosts: tuple[int, ...] = ()
    return_code: int = 0
    energy: float = -1.0
    energy_start: tuple = ()  # its hosts' energies at its start (J), Machines.energy_of
    # execution state
    stages: Stages | Sequence[tuple[str, dict]] = ()  # a Stages (composed profiles), or a tuple of the one stage
    stage: int = 0
    stage_start: float = 0.0
    remaining: float = 1.0   # fraction of the current compute stage left
    rate: float = 0.0        # fraction of the current stage done per second
    flops: Sequence[float] = ()  # per allocated host, current stage (empty: not computing)
    version: int = 0
    #: links the current stage's communications load, ``[(link, bytes), ...]`` in SimGrid's
    #: element order (empty: no communication on a link); see :mod:`.execution`
    links: Sequence[tuple[Any, float]] = ()
    net_bound: float = math.inf  # TCP-gamma bound of the current stage (fraction/s)
    pending: bool = False        # in the latency phase of its communications (no progress)
    #: the current compute stage's action on SimGrid's clock (its work left: ``queue.remains``)
    action: Any = None
    #: Batsim's ``remaining_time`` (s, < 0: none; ``execute_job``, ``src/task_execution.cpp``) and
    #: the clock when the current compute stage's ``wait_for`` began (s)
    wall_left: float = -1.0
    wall_t0: float = 0.0
    #: that ``wait_for``'s timeout on SimGrid's clock, armed once for the stage (:mod:`.execution`)
    wall_timer: Any = None
    #: its start number in the Pajé trace (:class:`~.paje.ScheduleTraceRows`), -1 before it starts
    trace_seq: int = -1
    #: Batsim's actor model: ``(clock, play, sub-round)`` (:class:`~.subrounds.Rounds`) from
    #: which the current compute stage's parallel task is known to a killer (``btask->ptask``,
    #: set once ``exec_init``'s three simcalls are done); empty: from the stage's start
    task_known: tuple[float, int, int] | tuple[()] = ()
    #: EXECUTE_JOB's ``storage_mapping`` (storage label -> machine id; empty: none given), which
    #: the IO profiles read (:mod:`.iotasks`)
    storage: dict[str, int] = field(default_factory=dict)
    #: the current stage's IO task (:mod:`.iotasks`): its compute hosts (ids; none for a
    #: ``data_staging``) and its storage hosts (indices among the storage hosts); None otherwise
    io_hosts: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    #: EXECUTE_JOB's ``additional_io_job`` (:class:`.iojobs.IOJob`), None without
    io_job: Any = None
    #: the storage hosts of its allocation (indices among the storage hosts; ``hosts`` holds its
    #: compute hosts), which Batsim lets a job use when no flops go there (:mod:`.execution`)
    st_hosts: tuple[int, ...] = ()


@dataclass(slots=True)
class Workload:
    """One workload: name (``w0``), file path, jobs in submission order (a
    :class:`~.jobtable.JobTable`: ``jobs[k]`` makes a new :class:`EngineJob`), profiles."""

    name: str
    path: str
    jobs: Any  # a JobTable
    profiles: dict[str, dict[str, Any]]
    #: names of profiles garbage-collected after their job ended (Batsim's null profile entries)
    collected: set[str] = field(default_factory=set)
    #: names of profiles no job used when the workload was loaded: Batsim 4.2.1 removed them then
    #: (:func:`unreferenced_profiles`); also in ``collected``
    unreferenced: set[str] = field(default_factory=set)
    #: names of ``composed`` profiles added by REGISTER_PROFILE: Batsim 4.2.1 never resolves their
    #: ``seq`` (``Workload::check_validity``, which fills a sequence's ``profile_sequence``, runs
    #: only when a workload file is loaded), so a job running one crashes it
    #: (:meth:`.execution.Executions.execute`)
    registered_composed: set[str] = field(default_factory=set)


#: Largest number of stages of one job's profile (``composed`` expanded with ``repeat``).
MAX_STAGES = 1_000_000

#: Largest ``res`` of a job (2**63 - 1): the jobs' ``res`` are kept as 64-bit integers while a
#: workload is read (JSON integers have no bound; RapidJSON, Batsim's reader, holds integers up
#: to 2**64 - 1 and reads larger ones as doubles). No platform has that many hosts.
MAX_RES = 2**63 - 1

#: Characters Batsim 4.2.1 cannot keep in a job id (see :func:`job_name`).
_ID_BAD_CHARS = frozenset('(),|}"\\$') | frozenset(chr(c) for c in range(32))


def _num(v: Any) -> bool:
    """A JSON number a double holds: finite, and an integer below 2**1024 in magnitude (JSON
    integers have no bound; RapidJSON, Batsim's parser, refuses one a double cannot hold; Python's
    ``math.isfinite`` raised OverflowError on it)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return -NO_DOUBLE < v < NO_DOUBLE if isinstance(v, int) else math.isfinite(v)



def _time(v: Any) -> bool:
    """A finite number no larger than :data:`MAX_TIME` (sign checked by the caller)."""
    return _num(v) and v <= MAX_TIME


def job_name(where: str, workload: str, raw: Any) -> str:
    """The job name (the part after ``!``) of a job whose ``id`` field is ``raw`` in workload
    ``workload``, checked as Batsim 4.2.1 checks it (``Job::from_json`` and ``JobIdentifier``
    in ``src/jobs.cpp`` of oar-team/batsim, tag v4.2.1).

    Batsim's rules, each refused here with a one-line :class:`WorkloadError` (Batsim aborts):

    * the id is a JSON string or a JSON integer that fits in 32 bits (rapidjson's ``IsInt``);
      ``null``, booleans, floats, arrays and objects are refused; an integer becomes its decimal
      text;
    * an id whose text contains the workload's name (``w0``) is read as ``workload!job``: split
      at ``!`` (runs of ``!`` count as one) it must give exactly two parts, and here the first
      must be this workload (Batsim would file the job under another workload name);
      any other id is the job name and must not contain ``!``;
    * Batsim then rewrites the job's JSON with a regular expression that stops at any of
      ``( ) , | }`` and inserts the id unescaped, so an id holding one of those, a double quote,
      a backslash or a control character (newline, tab...) makes Batsim abort ("not valid
      JSON") or, for a backslash, silently change the id; ``$`` is refused too, as
      ``std::regex_replace`` reads ``$&``, ``$1``... in the inserted id as substitutions.

    Stricter than Batsim: the empty id is refused (it would give an empty ``job_id`` column).
    With these rules an id never needs quoting in ``out_jobs.csv``.
    """
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        got = "null" if raw is None else type(raw).__name__
        raise WorkloadError(f"{where}: job id {raw!r} is a {got}; Batsim 4.2.1 needs a string or an integer")
    if isinstance(raw, int):
        if not -2 ** 31 <= raw < 2 ** 31:
            raise WorkloadError(f"{where}: job id {raw} does not fit in 32 bits (Batsim 4.2.1 reads integer "
                                "ids as int); write it as a string")
        return str(raw)
    if not raw:
        raise WorkloadError(f"{where}: empty job id")
    bad = sorted(set(raw) & _ID_BAD_CHARS)
    if bad:
        shown = ", ".join(repr(c) for c in bad)
        raise WorkloadError(f"{where}: job id {raw!r} contains {shown}, which Batsim 4.2.1 cannot keep in an "
                            "id (it rewrites the job's JSON around the id and aborts); "
                            "ids may not contain ( ) , | } \" \\ $ or control characters")
    if workload in raw:
        # boost::split with token_compress_on: runs of '!' are one separator
        head, *rest = raw.split("!")
        compressed = [head] + [p for p in rest if p]
        if len(compressed) != 2 or compressed[0] != workload or not compressed[1]:
            raise WorkloadError(f"{where}: job id {raw!r} contains the workload name {workload!r}, so Batsim "
                                f"4.2.1 reads it as 'workload!job' and needs exactly '{workload}!NAME' "
                                "(NAME without '!')")
        return compressed[1]
    if "!" in raw:
        raise WorkloadError(f"{where}: job id {raw!r} contains '!', which Batsim 4.2.1 reserves for "
                            "'workload!job'")
    return raw


#: What :func:`oversized` tells a ``gridsched run`` user to do about the job.
FIT_HINT = ("--fit keep runs it as Batsim does, for the policy to reject; --fit scale, clamp or drop "
            "changes it")


def oversized(where: str, res: int, nb_hosts: int, hint: str = FIT_HINT) -> WorkloadError:
    """The error of a job (named by ``where``) asking for more hosts than the platform's
    ``nb_hosts``, under ``--fit error`` (or in a campaign, with another ``hint``: what the user
    can do about it): real Batsim runs it and leaves it to the policy."""
    return WorkloadError(f"{where}: requests {res} hosts but the platform has {nb_hosts} compute hosts ({hint})")


def first_oversized(data: Any, nb_hosts: int) -> dict[str, Any] | None:
    """The first job (in file order) of the parsed workload ``data`` (its ``jobs`` a list, or the
    :class:`~schedulers.inputs.jsonstream.PackedJobs` of :func:`read_workload_json
    <schedulers.inputs.jsonstream.read_workload_json>`) whose ``res`` is an integer above
    ``nb_hosts``, or None. Nothing else is checked here: a ``res`` that is no integer, or a
    workload that is no object, is left to the reader that runs it (the engine's
    :func:`load_workload`, or real Batsim)."""
    from ..inputs.jsonstream import PackedJobs

    jobs = data.get("jobs") if isinstance(data, dict) else None
    for j in jobs if isinstance(jobs, (list, PackedJobs)) else ():
        res = j.get("res") if isinstance(j, dict) else None
        if type(res) is int and res > nb_hosts:
            return j
    return None


def check_profile(src: str, name: str, p: Any, profiles: dict) -> None:
    """Refuse a profile the engine cannot run as Batsim 4.2.1 would (``Profile::from_json``,
    ``src/profiles.cpp``): not an object with a ``type``, a ``ret`` that is not a 32-bit integer,
    a type Batsim does not know or the engine does not simulate, or fields its type does not
    accept.

    Args:
        src: the workload file (or the message) named in errors.
        name: the profile's name; ``p``: the profile; ``profiles``: the workload's profiles (the
            names a ``composed`` profile's ``seq`` may use).

    Raises:
        WorkloadError: one line naming ``src``, the profile and what is wrong.
    """
    where = f"{src}: profile {name!r}"
    if not isinstance(p, dict) or "type" not in p:
        raise WorkloadError(f"{where}: a profile must be an object with a 'type'")
    t = p["type"]
    ret = p.get("ret", 0)
    if type(ret) is not int or not -2 ** 31 <= ret < 2 ** 31:   # rapidjson's GetInt
        raise WorkloadError(f"{where}: 'ret' (the return code of a profile, Batsim 4.2.1) must be a 32-bit "
                            f"integer, got {ret!r}")
    if t not in SUPPORTED_PROFILES:
        _refuse_type(where, t, p)
    _FIELD_CHECKS[t](where, p, profiles)


def _refuse_type(where: str, t: Any, p: dict) -> NoReturn:
    """The error of a profile type the engine does not simulate (one real Batsim runs, or one it
    does not know)."""
    if t in BATSIM_ONLY_PROFILES or (isinstance(t, str) and isinstance(p.get("trace"), str)):
        raise WorkloadError(
            f"{where}: profile type {t!r} is not simulated by the embedded engine "
            f"(supported: {', '.join(SUPPORTED_PROFILES)}); run it on real Batsim (--engine batsim)")
    hint = " (Batsim 4.2.1's name for it is 'composed')" if t == "sequence" else ""
    raise WorkloadError(
        f"{where}: unknown profile type {t!r}{hint}; real Batsim 4.2.1 reads an unknown type as "
        f"'usage_trace' and aborts: the profile has no 'trace' field (known types: "
        f"{', '.join(SUPPORTED_PROFILES + BATSIM_ONLY_PROFILES)})")


def _check_delay(where: str, p: dict, profiles: dict) -> None:
    if not _time(p.get("delay")) or p["delay"] <= 0:  # Batsim refuses non-positive delays
        raise WorkloadError(f"{where}: 'delay' must be a number of seconds > 0 and <= {MAX_TIME:.0f} "
                            f"(2**33), got {p.get('delay')!r}")


def _check_homogeneous(where: str, p: dict, profiles: dict) -> None:
    for k in ("cpu", "com"):
        if not _num(p.get(k)) or p[k] < 0:
            raise WorkloadError(f"{where}: '{k}' must be a number >= 0, got {p.get(k)!r}")


def _check_parallel(where: str, p: dict, profiles: dict) -> None:
    cpu, com = p.get("cpu"), p.get("com")
    if not isinstance(cpu, list) or not all(_num(x) and x >= 0 for x in cpu):
        raise WorkloadError(f"{where}: 'cpu' must be a list of numbers >= 0")
    if not cpu:   # (Profile::from_json, src/profiles.cpp: a job of res 0 cannot have one)
        raise WorkloadError(f"{where}: 'cpu' is empty; Batsim 4.2.1 aborts (\"invalid-sized array 'cpu' (size=0): "
                            "must be strictly positive\")")
    if not isinstance(com, list) or len(com) != len(cpu) ** 2 or not all(_num(x) and x >= 0 for x in com):
        raise WorkloadError(f"{where}: 'com' must be a list of {len(cpu)}x{len(cpu)} numbers >= 0")


def _check_composed(where: str, p: dict, profiles: dict) -> None:
    seq = p.get("seq")
    if not isinstance(seq, list) or not seq or not all(isinstance(s, str) for s in seq):
        raise WorkloadError(f"{where}: 'seq' must be a non-empty list of profile names")
    for s in seq:
        if s not in profiles:
            raise WorkloadError(f"{where}: 'seq' names missing profile {s!r}")
    rep = p.get("repeat", 1)
    if not isinstance(rep, int) or isinstance(rep, bool) or rep < 1:
        raise WorkloadError(f"{where}: 'repeat' must be an integer >= 1, got {rep!r}")


def _check_pfs(where: str, p: dict, profiles: dict) -> None:
    # Profile::from_json, src/profiles.cpp: one of the byte fields at least, numbers (any sign: a
    # value <= 0 moves nothing), an optional string label ('storage', else 'host'; default 'pfs')
    if "bytes_to_read" not in p and "bytes_to_write" not in p:
        raise WorkloadError(f"{where}: a 'parallel_homogeneous_pfs' profile needs 'bytes_to_read' or "
                            "'bytes_to_write' (bytes per allocated host; 0 if not set); Batsim 4.2.1 aborts")
    for k in ("bytes_to_read", "bytes_to_write"):
        if k in p and not _num(p[k]):
            raise WorkloadError(f"{where}: '{k}' must be a number (bytes), got {p[k]!r}")
    key = "storage" if "storage" in p else "host"
    if key in p and not isinstance(p[key], str):
        raise WorkloadError(f"{where}: '{key}' (the storage label) must be a string, got {p[key]!r}")


def _check_staging(where: str, p: dict, profiles: dict) -> None:
    # Profile::from_json, src/profiles.cpp: 'nb_bytes' a number >= 0, 'from' and 'to' string labels
    if "nb_bytes" not in p:
        raise WorkloadError(f"{where}: a 'data_staging' profile needs 'nb_bytes'; Batsim 4.2.1 aborts")
    if not _num(p["nb_bytes"]) or p["nb_bytes"] < 0:
        raise WorkloadError(f"{where}: 'nb_bytes' must be a number of bytes >= 0, got {p['nb_bytes']!r}")
    for k in ("from", "to"):
        if k not in p:
            raise WorkloadError(f"{where}: a 'data_staging' profile needs '{k}' (a storage label); "
                                "Batsim 4.2.1 aborts")
        if not isinstance(p[k], str):
            raise WorkloadError(f"{where}: '{k}' (a storage label) must be a string, got {p[k]!r}")


#: The fields each profile type of :data:`SUPPORTED_PROFILES` needs, checked as Batsim 4.2.1
#: reads them: ``(where, profile, profiles) -> None``, raising WorkloadError.
_FIELD_CHECKS: dict[str, Callable[[str, dict, dict], None]] = {
    "delay": _check_delay,
    "parallel_homogeneous": _check_homogeneous,
    "parallel_homogeneous_total": _check_homogeneous,
    "parallel": _check_parallel,
    "composed": _check_composed,
    "parallel_homogeneous_pfs": _check_pfs,
    "data_staging": _check_staging,
}


#: The :class:`Stages` memo entry of a leaf profile, which the memo does not store: one stage,
#: no ``seq`` prefix sums.
_LEAF: tuple[int, tuple] = (1, ())


class Stages:
    """The leaf stages of profile ``name`` in execution order, as a read-only sequence of ``(leaf
    name, leaf profile)``, computed on access: a ``composed`` profile is never expanded, so its
    ``repeat`` costs no memory (a list of the 10**6 stages :data:`MAX_STAGES` allows takes about
    70 MB; a workload with many such profiles took gigabytes).

    ``stages[i]`` walks down the composed profiles: ``i`` modulo one repetition's stage count,
    then the element of ``seq`` holding it (a bisection on the stage counts of ``seq``), in
    ``O(depth x log len(seq))``.

    Args:
        name: the profile (every profile it names already passed :func:`check_profile`).
        profiles: the workload's profiles.
        memo: stage counts and ``seq`` prefix sums by profile name, shared by the
            :class:`Stages` of one workload (filled here as needed).
        where: prefix of error messages (default ``profile 'NAME'``).

    Raises:
        WorkloadError: composed profiles in a cycle, or more than :data:`MAX_STAGES` stages.
    """

    __slots__ = ("name", "_profiles", "_memo", "_len")

    def __init__(self, name: str, profiles: dict[str, dict], memo: dict[str, tuple[int, list[int]]] | None = None,
                 where: str = "") -> None:
        self.name = name
        self._profiles = profiles
        self._memo = {} if memo is None else memo
        self._len = self._count(name, where or f"profile {name!r}")

    def _count(self, root: str, where: str) -> int:
        """Stages of ``root`` (memoised with the prefix sums of each composed profile's ``seq``),
        by an explicit depth-first walk (no recursion limit on long chains)."""
        memo, profiles = self._memo, self._profiles
        if profiles[root]["type"] != "composed":
            return 1  # a leaf (the common case: a million one-job delay profiles)
        stack: list[tuple[str, bool]] = [(root, False)]  # (profile, its children are counted)
        on_path: set[str] = set()  # the composed profiles being counted (ancestors)
        while stack:
            n, expanded = stack.pop()
            if n in memo:
                continue
            p = profiles[n]
            if p["type"] != "composed":
                continue  # a leaf: no memo entry (_LEAF), a million one-job profiles cost nothing here
            if not expanded:
                if n in on_path:
                    raise WorkloadError(f"{where}: composed profiles form a cycle through {n!r}")
                on_path.add(n)
                stack.append((n, True))
                stack.extend((x, False) for x in reversed(p["seq"]) if x not in memo)
                continue
            on_path.discard(n)
            prefix, total = [], 0
            for x in p["seq"]:
                total += memo.get(x, _LEAF)[0]
                prefix.append(total)
            count = int(p.get("repeat", 1)) * total
            if count > MAX_STAGES:
                raise WorkloadError(f"{where}: profile {n!r} expands to {count:,} stages (composed profiles "
                                    f"with 'repeat'); at most {MAX_STAGES:,}")
            memo[n] = (count, prefix)
        return memo.get(root, _LEAF)[0]

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, i: int) -> tuple[str, dict]:
        if not 0 <= i < self._len:
            raise IndexError(f"stage {i} of profile {self.name!r}, which has {self._len}")
        n, profiles, memo = self.name, self._profiles, self._memo
        while True:
            p = profiles[n]
            prefix = memo.get(n, _LEAF)[1]
            if not prefix:  # a leaf
                return n, p
            i %= prefix[-1]  # within one repetition
            k = bisect_right(prefix, i)
            if k:
                i -= prefix[k - 1]
            n = p["seq"][k]

    def __iter__(self) -> Iterator[tuple[str, dict]]:
        for i in range(self._len):
            yield self[i]

    def path(self, i: int) -> list[tuple[str, int]]:
        """The composed profiles from the root down to stage ``i``'s leaf, each with the index of
        the child being run in its repeated sequence (``repetition * len(seq) + position``, as
        Batsim's ``BatTask::current_task_index``, ``src/jobs_execution.cpp``)."""
        if not 0 <= i < self._len:
            raise IndexError(f"stage {i} of profile {self.name!r}, which has {self._len}")
        n, profiles, memo = self.name, self._profiles, self._memo
        out: list[tuple[str, int]] = []
        while True:
            p = profiles[n]
            prefix = memo.get(n, _LEAF)[1]
            if not prefix:
                return out
            rep, i = divmod(i, prefix[-1])
            k = bisect_right(prefix, i)
            if k:
                i -= prefix[k - 1]
            out.append((n, rep * len(p["seq"]) + k))
            n = p["seq"][k]

    def leaves(self) -> list[tuple[str, dict]]:
        """The distinct leaf profiles, each once, in order of first appearance."""
        out: dict[str, dict] = {}
        stack = [self.name]
        seen: set[str] = set()
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            p = self._profiles[n]
            if self._memo.get(n, _LEAF)[1]:
                stack.extend(reversed(p["seq"]))
            else:
                out.setdefault(n, p)
        return list(out.items())


def check_composed(src: str, profiles: dict[str, dict]) -> None:
    """Refuse cycles of ``composed`` profiles (naming the cycle) and profiles expanding to more than
    :data:`MAX_STAGES` stages, before any job expands them. Profiles already passed
    :func:`check_profile`.

    Raises:
        WorkloadError: ``"<src>: profile 'a': composed profiles form a cycle 'a' -> 'b' -> 'a'"``.
    """
    counts: dict[str, int] = {n: 1 for n, p in profiles.items() if p["type"] != "composed"}
    for root in profiles:
        if root in counts:
            continue
        stack: list[tuple[str, Any]] = [(root, iter(profiles[root]["seq"]))]  # the path being explored
        on_path = {root}
        while stack:
            n, it = stack[-1]
            sub = next(it, None)
            if sub is None:
                stack.pop()
                on_path.discard(n)
                p = profiles[n]
                total = int(p.get("repeat", 1)) * sum(counts[x] for x in p["seq"])
                if total > MAX_STAGES:
                    raise WorkloadError(f"{src}: profile {n!r} expands to {total:,} stages (composed "
                                        f"profiles with 'repeat'); at most {MAX_STAGES:,}")
                counts[n] = total
            elif sub in on_path:
                path = [x for x, _ in stack]
                cycle = path[path.index(sub):] + [sub]
                raise WorkloadError(f"{src}: profile {sub!r}: composed profiles form a cycle "
                                    f"{' -> '.join(map(repr, cycle))}")
            elif sub not in counts:
                stack.append((sub, iter(profiles[sub]["seq"])))
                on_path.add(sub)


def check_job_fields(where: str, j: dict[str, Any], nb_hosts: int | None) -> tuple[Any, Any]:
    """Check the ``walltime`` and ``res`` of job ``j`` (``id`` and ``subtime`` already checked by
    the caller), as Batsim 4.2.1's ``Job::from_json`` does; return its ``res`` and ``profile``
    (the profile is checked by :func:`check_job_profile`).

    A ``res`` of 0 is accepted, as Batsim 4.2.1 accepts it ("negative 'res'" is its only
    bound): the scheduler can reject such a job, or run it on hosts when its profile runs on any
    number of them (:func:`.execution.any_size`).

    ``nb_hosts``: refuse a ``res`` above it (``gridsched run --fit error``); None (the engine):
    any ``res`` is accepted, as Batsim 4.2.1 accepts it (neither ``Job::from_json`` nor
    ``Workload::check_validity`` compares it with the platform): the scheduler has to reject
    such a job, an EXECUTE_JOB for it cannot have ``res`` existing hosts.

    Raises:
        WorkloadError: a message starting with ``where``.
    """
    wall = j.get("walltime", -1)
    if not _time(wall) or (wall <= 0 and wall != -1):
        raise WorkloadError(f"{where}: 'walltime' must be a number of seconds > 0 and <= {MAX_TIME:.0f} "
                            f"(2**33), or -1 (none), got {wall!r}")
    res = j.get("res")
    if not isinstance(res, int) or isinstance(res, bool) or res < 0:
        raise WorkloadError(f"{where}: 'res' must be an integer >= 0, got {res!r}")
    if res > MAX_RES:   # (no platform has them; the jobs' res are kept as 64-bit integers)
        raise WorkloadError(f"{where}: 'res' {res} is more hosts than a job may ask for (at most 2**63 - 1)")
    if nb_hosts is not None and res > nb_hosts:
        raise oversized(where, res, nb_hosts)
    return res, j.get("profile")


def check_job_profile(where: str, res: int, prof: Any, profiles: dict[str, dict], composed: dict[str, Stages],
                      memo: dict[str, tuple[int, list[int]]]) -> None:
    """Check the profile ``prof`` of a job of ``res`` hosts: defined, and every ``parallel``
    leaf of it on ``res`` hosts. ``composed`` (profile name -> its :class:`Stages`) and ``memo``
    (see :class:`Stages`) are shared by the jobs of one workload; only composed profiles get an
    entry.

    Raises:
        WorkloadError: a message starting with ``where``.
    """
    if not isinstance(prof, str) or prof not in profiles:
        raise WorkloadError(f"{where}: profile {prof!r} is not defined in 'profiles'")
    top = profiles[prof]
    if top["type"] == "composed":
        stages = composed.get(prof)
        if stages is None:
            stages = composed[prof] = Stages(prof, profiles, memo, where)
        leaves: Any = stages.leaves()
    elif top["type"] != "parallel":
        return
    else:
        leaves = ((prof, top),)
    for leaf_name, leaf in leaves:
        if leaf["type"] == "parallel" and len(leaf["cpu"]) != res:
            raise WorkloadError(f"{where}: profile {leaf_name!r} is 'parallel' on {len(leaf['cpu'])} "
                                f"hosts but the job requests {res}")


class _Strings:
    """Strings in one UTF-8 buffer (``surrogatepass``: any Python string), without an object
    each: ``append``, ``len``, ``[k]``."""

    __slots__ = ("_buf", "_ends")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._ends = array("q")

    def append(self, text: str) -> None:
        self._buf += text.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._buf))

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, k: int) -> str:
        return self._buf[self._ends[k - 1] if k else 0:self._ends[k]].decode("utf-8", "surrogatepass")

    def ascii_slice(self, start: int, stop: int) -> list[str] | None:
        """The strings ``start`` to ``stop - 1`` (``0 <= start <= stop <= len``), or None when
        their bytes are not all ASCII (the texts are then decoded once, not one by one)."""
        ends = self._ends
        a = ends[start - 1] if start else 0
        raw = self._buf[a:ends[stop - 1] if stop else 0]
        if not raw.isascii():
            return None
        text = raw.decode("ascii")
        bounds = ends[start:stop]
        return [text[x - a:y - a] for x, y in zip(chain((a,), bounds), bounds)]


def _common_job(j: Any, workload: str, nb_hosts: int | None) -> tuple[str, float | int, int, Any] | None:
    """``(id, subtime, res, profile)`` of a job (a decoded JSON value) that passes every check of
    its id and fields at once, else None: an object with a string id without '!', the workload's
    name or a character Batsim cannot keep, a ``subtime`` and a ``walltime`` (-1 or positive) of
    number type within :data:`MAX_TIME`, an integer ``res`` from 1 to ``nb_hosts``, a
    ``profile``. A job it refuses takes :class:`JobChecks`' full checks, which name what is wrong."""
    if type(j) is not dict:
        return None
    jid, sub, res, wall = j.get("id"), j.get("subtime"), j.get("res"), j.get("walltime", -1)
    if (type(jid) is str and jid and "!" not in jid and workload not in jid
            and _ID_BAD_CHARS.isdisjoint(jid)
            and (type(sub) is float or type(sub) is int) and -MAX_TIME <= sub <= MAX_TIME
            and type(res) is int and 1 <= res <= (MAX_RES if nb_hosts is None else nb_hosts)
            and (wall == -1 or ((type(wall) is float or type(wall) is int) and 0 < wall <= MAX_TIME))
            and "profile" in j):
        return jid, sub, res, j["profile"]
    return None


class JobChecks:
    """The checks of a workload's jobs, in file order, made as the jobs are read (called as
    ``checks(k, job)`` for job ``#k``, a decoded JSON value) and ended by :meth:`finish` once the
    profiles are known: each job is decoded once to be checked, and what is kept of it until
    then is a few numbers and its name and profile name as bytes (no object per job: a million
    small objects made while reading would keep their memory pages when freed, as the profiles
    read after them fill the same pages).

    The error reported is the one a check of every job in file order, after the profiles, gives:
    the first job's failing check, in the order id, duplicate id, fields, profile. Reading stops
    checking at the first job whose id or fields fail (its error is kept); :meth:`finish` finds
    the first duplicate id (by the names' hashes), checks the profiles of the jobs before the
    first failing job, then raises that job's error.
    """

    def __init__(self, src: str, workload: str, nb_hosts: int | None) -> None:
        self.src, self.workload, self.nb_hosts = src, workload, nb_hosts
        self.names = _Strings()      # job names, file order (also of the first failing job, if known)
        self.subtimes = array("d")   # s, file order, of the jobs that passed
        self._hashes = array("q")    # hash of each name
        self._res = array("q")
        self._profiles = _Strings()  # profile names ("" for a profile that is not a string)
        self._odd_profiles: dict[int, Any] = {}  # a profile that is not a string, by job
        self._error: WorkloadError | None = None
        self._failed = -1            # the job whose id or fields failed

    def __call__(self, k: int, j: Any) -> None:
        if self._error is not None:
            return
        # The common job, checked at less cost (no message text made, _common_job). Any other
        # job takes the full checks below, which name what is wrong.
        common = _common_job(j, self.workload, self.nb_hosts)
        if common is not None:
            jid, sub, res, prof = common
            self.names.append(jid)
            self._hashes.append(hash(jid))
            self._keep(k, sub, res, prof)
            return
        src = self.src
        try:
            if not isinstance(j, dict):
                raise WorkloadError(f"{src}: job #{k} is not an object")
            if "id" not in j:
                raise WorkloadError(f"{src}: job #{k} has no 'id'")
            jid = job_name(f"{src}: job #{k}", self.workload, j["id"])
            self.names.append(jid)
            self._hashes.append(hash(jid))
            where = f"{src}: job {jid!r}"
            for key in ("subtime", "res", "profile"):
                if key not in j:
                    raise WorkloadError(f"{where}: missing field {key!r}")
            sub = j["subtime"]
            if not _time(sub) or sub < -MAX_TIME:
                raise WorkloadError(f"{where}: 'subtime' must be a number of seconds from -{MAX_TIME:.0f} to "
                                    f"{MAX_TIME:.0f} (2**33), got {sub!r}")
            res, prof = check_job_fields(where, j, self.nb_hosts)
        except WorkloadError as exc:
            self._error, self._failed = exc, k
            return
        self._keep(k, sub, res, prof)

    def many(self, k0: int, jobs: Iterable[Any]) -> None:
        """``self(k, job)`` for each job of ``jobs``, numbered from ``k0``: the common job of
        :meth:`__call__` (:func:`_common_job`) with a string profile is kept in this loop, its
        names appended in place."""
        if self._error is not None:
            return
        nb_hosts, workload = self.nb_hosts, self.workload
        names, profiles = self.names, self._profiles
        name_buf, name_ends, prof_buf, prof_ends = names._buf, names._ends, profiles._buf, profiles._ends
        hashes, subtimes, reqs = self._hashes, self.subtimes, self._res
        for k, j in enumerate(jobs, k0):
            common = _common_job(j, workload, nb_hosts)
            if common is not None and type(common[3]) is str:   # (what __call__ then _keep do)
                jid, sub, res, prof = common
                name_buf += jid.encode("utf-8", "surrogatepass")   # (in place: names.append)
                name_ends.append(len(name_buf))
                hashes.append(hash(jid))
                subtimes.append(float(sub))
                reqs.append(res)
                prof_buf += prof.encode("utf-8", "surrogatepass")
                prof_ends.append(len(prof_buf))
                continue
            self(k, j)
            if self._error is not None:
                return

    def _keep(self, k: int, sub: float, res: int, prof: Any) -> None:
        """What is kept of job ``#k`` whose id and fields passed."""
        self.subtimes.append(float(sub))
        self._res.append(res)
        if type(prof) is str:
            self._profiles.append(prof)
        else:
            self._odd_profiles[k] = prof
            self._profiles.append("")

    def _first_duplicate(self) -> int:
        """The first job (file order) whose name an earlier job has, or -1."""
        hashes, names = self._hashes, self.names
        if len(set(hashes)) == len(hashes):  # the common case: no two names with the same hash
            return -1
        by_hash = sorted(range(len(hashes)), key=hashes.__getitem__)
        first = -1
        i = 0
        while i < len(by_hash):
            j = i + 1
            while j < len(by_hash) and hashes[by_hash[j]] == hashes[by_hash[i]]:
                j += 1
            if j - i > 1:  # same hash: compare the names (sorted() kept file order)
                group = [(names[k], k) for k in by_hash[i:j]]
                seen: set[str] = set()
                for name, k in group:
                    if name in seen and (first < 0 or k < first):
                        first = k
                    seen.add(name)
            i = j
        return first

    def finish(self, profiles: dict[str, dict]) -> None:
        """Check the profiles of the jobs read (``profiles`` already checked), then raise the
        error of the first failing job, if any.

        Raises:
            WorkloadError: one line naming the file and the job.
        """
        error, failed = self._error, self._failed
        dup = self._first_duplicate()
        if dup >= 0 and (error is None or dup <= failed):
            error = WorkloadError(f"{self.src}: job {self.names[dup]!r}: duplicate job id")
            failed = dup
        end = len(self.subtimes) if error is None else failed
        # the profiles no job names (the profiles dict's own key objects: no string made per job)
        self.unused: set[str] = set(profiles)
        composed: dict[str, Stages] = {}
        memo: dict[str, tuple[int, list[int]]] = {}
        src, names, res, odd = self.src, self.names, self._res, self._odd_profiles
        unused = self.unused
        if not odd and self._only_named(profiles, end):
            self._profiles = _Strings()
            if error is not None:
                raise error
            return
        for k in range(end):
            prof: Any = odd[k] if k in odd else self._profiles[k]
            if type(prof) is str:
                unused.discard(prof)
            if type(prof) is not str or prof not in profiles or profiles[prof]["type"] in _CHECKED_TYPES:
                check_job_profile(f"{src}: job {names[k]!r}", res[k], prof, profiles, composed, memo)
        self._profiles = _Strings()
        if error is not None:
            raise error

    def _only_named(self, profiles: dict[str, dict], end: int) -> bool:
        """The profile checks of :meth:`finish` for jobs ``0`` to ``end - 1`` made by sets of
        names, when no profile is of a type whose jobs are checked further and every name is
        ASCII: True when every job's profile is defined (``unused`` is then left with the
        profiles no job names), False when :meth:`finish` must check job by job."""
        if any(p["type"] in _CHECKED_TYPES for p in profiles.values()):
            return False
        step = 1 << 16
        for start in range(0, end, step):
            named = self._profiles.ascii_slice(start, min(end, start + step))
            if named is None:
                return False
            chunk = set(named)
            if not chunk.issubset(profiles.keys()):
                return False
            self.unused.difference_update(chunk)
        return True


#: Profile types whose jobs :meth:`JobChecks.finish` checks further (``delay`` and the
#: homogeneous ones fit any ``res``).
_CHECKED_TYPES = frozenset(("parallel", "composed"))


def check_job(where: str, j: dict[str, Any], profiles: dict[str, dict], nb_hosts: int | None,
              composed: dict[str, Stages], memo: dict[str, tuple[int, list[int]]]) -> str:
    """Check the ``walltime``, ``res`` and ``profile`` of job ``j`` (:func:`check_job_fields`
    then :func:`check_job_profile`); return its profile name.

    Raises:
        WorkloadError: a message starting with ``where``.
    """
    res, prof = check_job_fields(where, j, nb_hosts)
    check_job_profile(where, res, prof, profiles, composed, memo)
    return prof


def build_job(where: str, workload: str, name: str, j: dict[str, Any], subtime: float,
              profiles: dict[str, dict], nb_hosts: int | None = None) -> EngineJob:
    """Check job ``j`` (:func:`check_job`) and build it as ``workload!name`` from a copy of
    ``j``; used for jobs registered by the scheduler (``REGISTER_JOB``).

    Raises:
        WorkloadError: a message starting with ``where``.
    """
    composed: dict[str, Stages] = {}
    prof = check_job(where, j, profiles, nb_hosts, composed, {})
    raw = dict(j)
    full = f"{workload}!{name}"
    raw["id"] = full
    return EngineJob(id=full, name=name, workload=workload, subtime=subtime, walltime=float(raw.get("walltime", -1)),
                     res=raw["res"], profile=prof, raw=raw, stages=composed.get(prof) or ((prof, profiles[prof]),))


def load_workload(path: str | Path, name: str, nb_hosts: int, *,
                  data: dict | None = None, refuse_oversized: bool = False) -> Workload:
    """Read and check one Batsim workload for the engine: every job and profile is checked here,
    before any simulation (Batsim validates the whole workload when it loads it); the jobs are
    then kept compactly until submitted (:class:`~.jobtable.JobTable`).

    Args:
        path: the JSON file, plain or gzip-compressed (also used in error messages), read
            piece by piece (:func:`schedulers.inputs.jsonstream.read_workload_json`).
        name: workload name (``w0``...).
        nb_hosts: number of compute hosts of the platform.
        data: the already-parsed JSON, if any. Its job objects are not copied here but when
            each job is submitted, and never changed; its profiles dict is copied.
        refuse_oversized: refuse a job whose ``res`` exceeds ``nb_hosts`` (``gridsched run``'s
            default ``--fit error``). Off by default: Batsim 4.2.1 accepts such a job
            (:func:`check_job_fields`).

    Raises:
        WorkloadError: one line naming the file and the job or profile: unreadable file or not
            strict JSON (:func:`schedulers.inputs.jsonfile.read_json`), ids Batsim refuses
            (:func:`job_name`), no integer ``nb_res`` > 0, duplicate ids, missing fields, numbers out of their bounds (see
            the module docstring), missing or unsupported profiles, cycles of composed profiles,
            ``res`` larger than the platform with ``refuse_oversized``.
    """
    from ..inputs.jsonstream import PackedJobs, read_workload_json
    from .jobtable import JobTable, submission_order  # (jobtable imports this module)

    src = str(path)
    limit = nb_hosts if refuse_oversized else None
    own = data is None  # the parsed objects are the engine's: no copies (equal delay profiles shared)
    if data is None:
        data = read_workload_json(src, WorkloadError, "workload", checks=lambda: JobChecks(src, name, limit))
    if not isinstance(data, dict):
        raise WorkloadError(f"{src}: a workload must be a JSON object with 'jobs' and 'profiles', "
                            f"got a JSON {_json_type(data)}")
    # Batsim 4.2.1 (src/workload.cpp, Workload::load_from_json) aborts unless 'nb_res' is a JSON
    # integer (RapidJSON IsInt: no fraction, 32-bit) > 0; it only limits the platform with --mmax-workload.
    nb_res = data.get("nb_res")
    if "nb_res" not in data:
        raise WorkloadError(f"{src}: the 'nb_res' field is missing (Batsim 4.2.1 refuses the workload; give the "
                            "number of resources it was made for, e.g. the platform's host count)")
    if isinstance(nb_res, bool) or not isinstance(nb_res, int) or not 0 < nb_res < 2**31:
        raise WorkloadError(f"{src}: 'nb_res' must be an integer > 0 (at most 2**31 - 1), got {nb_res!r}")
    profiles = data.get("profiles", {})
    jobs_in = data.get("jobs")
    if not isinstance(profiles, dict):
        raise WorkloadError(f"{src}: 'profiles' must be an object")
    if not isinstance(jobs_in, (list, PackedJobs)):
        raise WorkloadError(f"{src}: 'jobs' must be a list")
    # a delay profile object shared by several names (jsonstream.share_delays) is checked once: its
    # check reads only the object (the first name, in file order, is the one an error names)
    checked_delays: set[int] = set()
    for pname, p in profiles.items():
        if id(p) in checked_delays:
            continue
        check_profile(src, pname, p, profiles)
        if p["type"] == "delay":
            checked_delays.add(id(p))
    check_composed(src, profiles)
    checks: JobChecks | None = None
    if isinstance(jobs_in, PackedJobs):  # checked as they were read: what the checks kept goes now
        checks, jobs_in.checks = cast("JobChecks | None", jobs_in.checks), None
    if checks is None:  # a workload given parsed, or read by read_json
        checks = JobChecks(src, name, limit)
        checks.many(0, jobs_in)
    checks.finish(profiles)
    unused = _unreached(profiles, checks.unused)
    subtimes = checks.subtimes
    order = submission_order(subtimes, cast(Sequence[str], checks.names))   # (a compact sequence of str)
    del checks
    # a copy of a caller's profiles: registrations and Batsim's profile garbage collection change the
    # engine's profiles, never the caller's workload (a dict given to simulate() twice gives the same run twice)
    engine_profiles = profiles if own else dict(profiles)
    packed = isinstance(jobs_in, PackedJobs)
    table = JobTable(name, cast(Sequence[Any], jobs_in) if packed else tuple(jobs_in), copy=not (packed or own), order=order,
                     subtimes=array("d", (subtimes[i] for i in order)), profiles=engine_profiles)
    return Workload(name=name, path=src, jobs=table, profiles=engine_profiles, collected=set(unused),
                    unreferenced=unused)


def unreferenced_profiles(profiles: dict[str, dict], used: Iterable[str]) -> set[str]:
    """The profiles Batsim 4.2.1 removes once it has loaded a workload (``Workload::load_from_json``
    ends with ``Profiles::remove_unreferenced_profiles``, ``src/profiles.cpp``): visiting its
    profile map in the map's order (:func:`.stdhash.iteration_order` of the file's order), it
    empties every profile held only by the map -- no job uses it, and no ``composed`` profile still
    alive has it in its ``seq``; emptying a ``composed`` profile releases its stages. So a profile
    reached only through a ``composed`` profile no job uses survives when it is visited before
    that profile. The removed profiles are not in SIMULATION_BEGINS, and a job registered with
    one later makes Batsim abort ("it existed some time ago but is no longer accessible"); the
    name stays taken. Recorded on real Batsim 4.2.1 (``tests/test_engine_fidelity.py``,
    ``tests/fixtures/batsim_profile_order``).
    """
    unused = set(profiles)
    unused.difference_update(used)
    return _unreached(profiles, unused)


def _unreached(profiles: dict[str, dict], unused: set[str]) -> set[str]:
    """Of ``unused`` (the profiles no job names), those Batsim removes (:func:`unreferenced_profiles`),
    as a new set (``unused`` may be changed; a set emptied by discards keeps its table, so its
    copy is the one kept)."""
    holders = [p for p in profiles if profiles[p].get("type") == "composed"]
    if not unused or not holders:
        return set(unused)
    from .stdhash import iteration_order

    refs: dict[str, int] = {}   # the shared pointers to each profile held by the sequences alive
    for name in holders:
        for x in profiles[name].get("seq", ()):
            refs[str(x)] = refs.get(str(x), 0) + 1
    removed: set[str] = set()
    for name in iteration_order(profiles):
        if name in unused and not refs.get(name):
            removed.add(name)
            if profiles[name].get("type") == "composed":
                for x in profiles[name].get("seq", ()):
                    refs[str(x)] -= 1
    return removed


def _json_type(v: Any) -> str:
    if isinstance(v, list):
        return "array"
    if isinstance(v, str):
        return "string"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    return "number" if isinstance(v, (int, float)) else type(v).__name__
