"""Validation of Batsim workload files (JSON).

A Batsim workload (see Batsim's documentation, ``docs/input-workload.rst`` in oar-team/batsim) is a
JSON object with ``nb_res`` (resources the workload was designed for), ``jobs`` (user requests:
``id``, ``subtime``, ``res``, ``profile``, optional ``walltime``, any extra field) and ``profiles``
(name -> what a job does, e.g. ``{"type": "delay", "delay": 20.2}``). Times are in seconds.

:func:`validate_workload` checks a parsed workload against ``workload_schema.json`` (JSON Schema
draft 2020-12, shipped in this package) and then the cross-references the schema cannot express.
:func:`load_workload_json` reads a file (plain or ``.gz``), reports malformed JSON with its line and
column, and validates it.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jsonschema

from .errors import WorkloadError
from .jsonfile import read_json

__all__ = ["WorkloadError", "load_workload_json", "schema", "validate_workload"]

#: At most this many problems are listed in one WorkloadError message.
MAX_REPORTED_PROBLEMS = 10

#: Profile types whose ``seq`` names other profiles (Batsim 4.x writes ``composed``).
COMPOSED_TYPES = ("composed", "sequence")


@functools.cache
def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a Batsim workload, as a dict (cached; do not mutate)."""
    text = resources.files(__package__).joinpath("workload_schema.json").read_text(encoding="utf-8")
    return json.loads(text)


@functools.cache
def _validator() -> "jsonschema.protocols.Validator":  # noqa: F821
    import jsonschema  # here: reading a workload for a run does not validate it against the schema

    cls = jsonschema.validators.validator_for(schema())
    cls.check_schema(schema())
    return cls(schema())


def _job_label(data: dict[str, Any], index: int) -> str:
    jobs = data.get("jobs")
    job = jobs[index] if isinstance(jobs, list) and 0 <= index < len(jobs) else None
    if isinstance(job, dict) and "id" in job and isinstance(job["id"], (str, int)):
        return f"job {job['id']!r} (jobs[{index}])"
    return f"jobs[{index}]"


def _where(data: dict[str, Any], path: list[Any]) -> str:
    """Human description of a location in the workload given a JSON path."""
    if not path:
        return "top level"
    head = path[0]
    if head == "jobs" and len(path) >= 2 and isinstance(path[1], int):
        label = _job_label(data, path[1])
        rest = path[2:]
    elif head == "profiles" and len(path) >= 2:
        label = f"profile {path[1]!r}"
        rest = path[2:]
    else:
        label = repr(head)
        rest = path[1:]
    if rest:
        label += " field " + ".".join(str(p) for p in rest)
    return label


def _schema_problems(data: dict[str, Any]) -> list[str]:
    problems = []
    for error in sorted(_validator().iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path]):
        where = _where(data, list(error.absolute_path))
        message = error.message
        if error.validator == "anyOf" and list(error.absolute_path)[-1:] == ["walltime"]:
            message = f"{error.instance!r} is not a valid walltime (a number > 0, or -1 for none)"
        problems.append(f"{where}: {message}")
    return problems


def _reference_problems(data: dict[str, Any]) -> list[str]:
    problems = []
    given = data.get("profiles")
    profiles = given if isinstance(given, dict) else {}
    nb_res = data.get("nb_res")
    seen: dict[str, int] = {}
    for index, job in enumerate(data.get("jobs") or []):
        if not isinstance(job, dict):
            continue
        label = _job_label(data, index)
        if "id" in job:
            # Batsim turns integer ids into strings: 1 and "1" are the same job.
            key = str(job["id"])
            if key in seen:
                problems.append(f"{label}: duplicate job id {job['id']!r} (first at jobs[{seen[key]}])")
            else:
                seen[key] = index
        profile = job.get("profile")
        if isinstance(profile, str) and profile not in profiles:
            problems.append(f"{label}: references missing profile {profile!r}")
        res = job.get("res")
        if (
            isinstance(nb_res, int) and isinstance(res, int)
            and not isinstance(res, bool) and not isinstance(nb_res, bool)
            and res > nb_res
        ):
            problems.append(f"{label}: res {res} > nb_res {nb_res}")
    for name, profile in profiles.items():
        if not isinstance(profile, dict):
            continue
        if profile.get("type") in COMPOSED_TYPES and isinstance(profile.get("seq"), list):
            for sub in profile["seq"]:
                if isinstance(sub, str) and sub not in profiles:
                    problems.append(f"profile {name!r}: seq references missing profile {sub!r}")
        if profile.get("type") == "parallel":
            cpu, com = profile.get("cpu"), profile.get("com")
            if isinstance(cpu, list) and isinstance(com, list) and len(com) != len(cpu) ** 2:
                problems.append(
                    f"profile {name!r}: 'com' has {len(com)} values, Batsim needs "
                    f"len(cpu)^2 = {len(cpu) ** 2}"
                )
    return problems


def validate_workload(data: dict[str, Any], source: str) -> None:
    """Check that ``data`` is a valid Batsim workload; raise :class:`WorkloadError` otherwise.

    Args:
        data: the parsed workload (``{"nb_res": int, "jobs": [...], "profiles": {...}}``).
        source: name of the file (or other origin) the workload comes from; every message
            starts with it.

    Checks, in order: the JSON Schema ``workload_schema.json`` (field types and ranges: ``subtime``
    >= 0 s, ``res`` >= 1, ``walltime`` > 0 s or -1, per-type profile fields), then what a schema
    cannot express: duplicate job ids (``1`` and ``"1"`` are the same id for Batsim), jobs that
    reference a missing profile, ``composed``/``sequence`` profiles whose ``seq`` names a missing
    profile, ``parallel`` profiles whose ``com`` is not ``len(cpu)**2`` long (Batsim refuses them),
    and jobs with ``res`` > ``nb_res``.

    Raises:
        WorkloadError: one line listing up to :data:`MAX_REPORTED_PROBLEMS` problems (``; ``), each naming the job
            id (and its index) or the profile name and what is wrong.
    """
    if not isinstance(data, dict):
        raise WorkloadError(f"{source}: a Batsim workload must be a JSON object, got {type(data).__name__}")
    problems = _schema_problems(data)
    problems += _reference_problems(data)
    if problems:
        shown = problems[:MAX_REPORTED_PROBLEMS]
        more = len(problems) - len(shown)
        if len(problems) == 1:
            raise WorkloadError(f"{source}: invalid Batsim workload: {problems[0]}")
        tail = f"; and {more} more" if more else ""
        raise WorkloadError(f"{source}: invalid Batsim workload, {len(problems)} problems: {'; '.join(shown)}{tail}")


def load_workload_json(path: str | PathLike[str]) -> dict[str, Any]:
    """Read a Batsim workload JSON file (``.json`` or gzip-compressed ``.json.gz``) and validate it.

    Args:
        path: the file.

    Returns:
        The parsed workload dict (see :func:`validate_workload`).

    Raises:
        FileNotFoundError: the file does not exist.
        WorkloadError: the file is not UTF-8, is malformed JSON (the message gives the file name,
            line and column), repeats a key inside one object (e.g. two profiles with the same
            name, which Batsim refuses), or is not a valid workload (see :func:`validate_workload`).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such workload")
    data = read_json(path, WorkloadError, "workload")   # strict: inputs.jsonfile
    validate_workload(data, str(path))
    return data
