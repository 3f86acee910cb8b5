"""Read Batsim JSON workloads for the embedded engine.

A workload file holds ``jobs`` (``id``, ``subtime``, ``walltime`` (-1 = none), ``res``,
``profile``, any extra field) and ``profiles``. Several workloads can be simulated at once; they
are named ``w0``, ``w1``, ... in command-line order, as Batsim does, and job ids become
``"<workload>!<id>"``.

Profiles the engine simulates (Batsim 4.2.1 semantics, checked against
``shared/batsim-4.2.1/outputs/run3``): ``delay``, ``parallel_homogeneous``,
``parallel_homogeneous_total``, ``parallel``, ``composed`` (alias ``sequence``) with ``repeat``.
Other types (SMPI, usage traces, data staging, ...) raise :class:`WorkloadError` pointing to real
Batsim.

Numbers are bounded where they are read, so that no output can hold a NaN, an infinity or a
time that lost its precision: every number must be finite; ``subtime`` >= 0, ``walltime`` > 0
(or -1), ``delay`` > 0, flops >= 0; and every time (``subtime``, ``walltime``, ``delay``) is at
most :data:`MAX_TIME` = 2**33 s (about 272 years). Below it a double still resolves the
microsecond the outputs print (its spacing is at most 2**-20 s), and the sums the engine and the
metrics make of such times (start + run, sums over jobs) stay finite. A job's whole profile,
``composed`` ones expanded with their ``repeat``, has at most :data:`MAX_STAGES` stages; the stages
are never materialised (:class:`Stages` computes each one when the engine reaches it).

Job ids follow Batsim 4.2.1 (:func:`job_name`).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from ..inputs.errors import WorkloadError
from ..inputs.jsonfile import read_json

SUPPORTED_PROFILES = ("delay", "parallel_homogeneous", "parallel_homogeneous_total", "parallel",
                      "composed", "sequence")


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
    pos: int = -1  # position in its workload's ``jobs`` (-1: a job registered during the run)
    state: str = "NOT_SUBMITTED"
    start: float = -1.0
    finish: float = -1.0
    runtime: float = 0.0
    alloc: Any = None  # ProcSet
    hosts: tuple[int, ...] = ()
    return_code: int = 0
    energy: float = -1.0
    energy_start: float = 0.0
    # execution state
    stages: Sequence[tuple[str, dict]] = ()  # a Stages, or a list
    stage: int = 0
    stage_start: float = 0.0
    remaining: float = 1.0   # fraction of the current compute stage left
    rate: float = 0.0        # fraction of the current stage done per second
    flops: Sequence[float] = ()  # per allocated host, current stage (empty: not computing)
    version: int = 0
    kill_time: float = math.inf


@dataclass(slots=True)
class Workload:
    """One workload: name (``w0``), file path, jobs sorted by subtime, profiles."""

    name: str
    path: str
    jobs: list[EngineJob]
    profiles: dict[str, dict[str, Any]]
    #: names of profiles garbage-collected after their job ended (Batsim's null profile entries)
    collected: set[str] = field(default_factory=set)


#: Largest time (s) accepted in a workload: 2**33 s, about 272 years (see the module docstring).
MAX_TIME = float(2 ** 33)

#: Largest number of stages of one job's profile (``composed`` expanded with ``repeat``).
MAX_STAGES = 1_000_000

#: Characters Batsim 4.2.1 cannot keep in a job id (see :func:`job_name`).
_ID_BAD_CHARS = frozenset('(),|}"\\$') | frozenset(chr(c) for c in range(32))


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


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


def check_profile(src: str, name: str, p: Any, profiles: dict, has_network: bool) -> None:
    where = f"{src}: profile {name!r}"
    if not isinstance(p, dict) or "type" not in p:
        raise WorkloadError(f"{where}: a profile must be an object with a 'type'")
    t = p["type"]
    if t not in SUPPORTED_PROFILES:
        raise WorkloadError(
            f"{where}: profile type {t!r} is not simulated by the embedded engine "
            f"(supported: {', '.join(SUPPORTED_PROFILES)}); run it on real Batsim (--engine batsim)")
    if t == "delay":
        if not _time(p.get("delay")) or p["delay"] <= 0:  # Batsim refuses non-positive delays
            raise WorkloadError(f"{where}: 'delay' must be a number of seconds > 0 and <= {MAX_TIME:.0f} "
                                f"(2**33), got {p.get('delay')!r}")
    elif t in ("parallel_homogeneous", "parallel_homogeneous_total"):
        for k in ("cpu", "com"):
            if not _num(p.get(k)) or p[k] < 0:
                raise WorkloadError(f"{where}: '{k}' must be a number >= 0, got {p.get(k)!r}")
        if p["com"] > 0 and has_network:
            raise WorkloadError(
                f"{where}: communications (com={p['com']}) need SimGrid's network model, which the "
                "embedded engine does not simulate on a platform with links; use a *_no_net* "
                "platform or real Batsim (--engine batsim)")
    elif t == "parallel":
        cpu, com = p.get("cpu"), p.get("com")
        if not isinstance(cpu, list) or not all(_num(x) and x >= 0 for x in cpu):
            raise WorkloadError(f"{where}: 'cpu' must be a list of numbers >= 0")
        if not isinstance(com, list) or len(com) != len(cpu) ** 2 or not all(_num(x) and x >= 0 for x in com):
            raise WorkloadError(f"{where}: 'com' must be a list of {len(cpu)}x{len(cpu)} numbers >= 0")
        if has_network and any(x > 0 for x in com):
            raise WorkloadError(
                f"{where}: communications need SimGrid's network model, which the embedded engine "
                "does not simulate on a platform with links; use real Batsim (--engine batsim)")
    else:  # composed / sequence
        seq = p.get("seq")
        if not isinstance(seq, list) or not seq or not all(isinstance(s, str) for s in seq):
            raise WorkloadError(f"{where}: 'seq' must be a non-empty list of profile names")
        for s in seq:
            if s not in profiles:
                raise WorkloadError(f"{where}: 'seq' names missing profile {s!r}")
        rep = p.get("repeat", 1)
        if not isinstance(rep, int) or isinstance(rep, bool) or rep < 1:
            raise WorkloadError(f"{where}: 'repeat' must be an integer >= 1, got {rep!r}")


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
        composed = ("composed", "sequence")
        if profiles[root]["type"] not in composed:
            return 1  # a leaf (the common case: a million one-job delay profiles)
        stack: list[tuple[str, bool]] = [(root, False)]  # (profile, its children are counted)
        on_path: set[str] = set()  # the composed profiles being counted (ancestors)
        while stack:
            n, expanded = stack.pop()
            if n in memo:
                continue
            p = profiles[n]
            if p["type"] not in composed:
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
    composed = ("composed", "sequence")
    counts: dict[str, int] = {n: 1 for n, p in profiles.items() if p["type"] not in composed}
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


def build_job(where: str, workload: str, name: str, j: dict[str, Any], subtime: float,
              profiles: dict[str, dict], nb_hosts: int, flat_cache: dict[str, Stages] | None = None,
              memo: dict[str, tuple[int, list[int]]] | None = None, own: bool = False) -> EngineJob:
    """Check the ``walltime``, ``res`` and ``profile`` of job ``j`` (``subtime`` already checked
    by the caller) and build it as ``workload!name``; used for workload files and for jobs
    registered by the scheduler (``REGISTER_JOB``). ``flat_cache`` (profile name -> its
    :class:`Stages`) and ``memo`` (see :class:`Stages`) are shared by the jobs of one workload.
    ``own``: ``j`` belongs to the engine (parsed from a file here), so it becomes the job's ``raw``
    object instead of a copy (one JSON object per job in memory, not two).

    Raises:
        WorkloadError: a message starting with ``where``.
    """
    wall = j.get("walltime", -1)
    if not _time(wall) or (wall <= 0 and wall != -1):
        raise WorkloadError(f"{where}: 'walltime' must be a number of seconds > 0 and <= {MAX_TIME:.0f} "
                            f"(2**33), or -1 (none), got {wall!r}")
    res = j.get("res")
    if not isinstance(res, int) or isinstance(res, bool) or res < 1:
        raise WorkloadError(f"{where}: 'res' must be an integer >= 1, got {res!r}")
    if res > nb_hosts:
        raise WorkloadError(f"{where}: requests {res} hosts but the platform has {nb_hosts} compute hosts")
    prof = j.get("profile")
    if not isinstance(prof, str) or prof not in profiles:
        raise WorkloadError(f"{where}: profile {prof!r} is not defined in 'profiles'")
    cache = {} if flat_cache is None else flat_cache
    stages = cache.get(prof)
    if stages is None:
        stages = cache[prof] = Stages(prof, profiles, memo, where)
    top = profiles[prof]
    leaves = stages.leaves() if top["type"] in ("composed", "sequence") else ((prof, top),)
    for leaf_name, leaf in leaves:
        if leaf["type"] == "parallel" and len(leaf["cpu"]) != res:
            raise WorkloadError(f"{where}: profile {leaf_name!r} is 'parallel' on {len(leaf['cpu'])} "
                                f"hosts but the job requests {res}")
    raw = j if own else dict(j)
    full = f"{workload}!{name}"
    raw["id"] = full
    return EngineJob(id=full, name=name, workload=workload, subtime=subtime, walltime=float(wall),
                     res=res, profile=prof, raw=raw, stages=stages)


def load_workload(path: str | Path, name: str, nb_hosts: int, *, has_network: bool = False,
                  data: dict | None = None) -> Workload:
    """Read and check one Batsim workload for the engine.

    Args:
        path: the JSON file, plain or gzip-compressed (also used in error messages).
        name: workload name (``w0``...).
        nb_hosts: number of compute hosts of the platform.
        has_network: the platform has links (then communications are refused).
        data: the already-parsed JSON, if any.

    Raises:
        WorkloadError: one line naming the file and the job or profile: unreadable file or not
            strict JSON (:func:`schedulers.inputs.jsonfile.read_json`), ids Batsim refuses
            (:func:`job_name`), no integer ``nb_res`` > 0, duplicate ids, missing fields, numbers out of their bounds (see
            the module docstring), missing or unsupported profiles, cycles of composed profiles,
            ``res`` larger than the platform.
    """
    src = str(path)
    own = data is None  # the parsed objects are the engine's: no copies (see build_job, _share_delays)
    if data is None:
        data = read_json(src, WorkloadError, "workload")
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
    if not isinstance(jobs_in, list):
        raise WorkloadError(f"{src}: 'jobs' must be a list")
    for pname, p in profiles.items():
        check_profile(src, pname, p, profiles, has_network)
    check_composed(src, profiles)
    if own:
        _share_delays(profiles)
    flat_cache: dict[str, Stages] = {}
    memo: dict[str, tuple[int, list[int]]] = {}
    jobs: list[EngineJob] = []
    seen: set[str] = set()
    for k, j in enumerate(jobs_in):
        if not isinstance(j, dict):
            raise WorkloadError(f"{src}: job #{k} is not an object")
        if "id" not in j:
            raise WorkloadError(f"{src}: job #{k} has no 'id'")
        jid = job_name(f"{src}: job #{k}", name, j["id"])
        where = f"{src}: job {jid!r}"
        if jid in seen:
            raise WorkloadError(f"{where}: duplicate job id")
        seen.add(jid)
        for key in ("subtime", "res", "profile"):
            if key not in j:
                raise WorkloadError(f"{where}: missing field {key!r}")
        sub = j["subtime"]
        if not _time(sub) or sub < 0:
            raise WorkloadError(f"{where}: 'subtime' must be a number of seconds >= 0 and <= {MAX_TIME:.0f} "
                                f"(2**33), got {sub!r}")
        jobs.append(build_job(where, name, jid, j, float(sub), profiles, nb_hosts, flat_cache, memo, own))
    # Batsim submits in job_comparator_subtime_number order (src/jobs.cpp): subtime, then full id string.
    jobs.sort(key=lambda x: (x.subtime, x.id))
    for k, job in enumerate(jobs):
        job.pos = k
    # a copy: registrations and Batsim's profile garbage collection change the engine's profiles,
    # never the caller's workload (a dict given to simulate() twice must give the same run twice)
    return Workload(name=name, path=src, jobs=jobs, profiles=dict(profiles))


def _share_delays(profiles: dict[str, Any]) -> None:
    """Make the ``delay`` profiles of ``profiles`` that are equal (same delay, of the same JSON
    type, no other field) one shared object: a trace converted with one profile per job (a
    million ``{"type": "delay", "delay": d}``) then holds one object per distinct delay. The
    profile names and their contents are unchanged."""
    canon: dict[tuple[type, Any], dict] = {}
    for pname, p in profiles.items():
        if len(p) == 2 and p["type"] == "delay":
            d = p["delay"]
            profiles[pname] = canon.setdefault((type(d), d), p)


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
