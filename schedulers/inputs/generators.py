"""Scenario generators: functions ``(params, seed) -> Scenario`` registered by name.

A campaign (``[[scenario]] generator = "NAME"``) asks a generator for each run's platform and
workload in memory, so that a 24,000-run campaign writes no workload file. A generator declares
its parameters with their defaults; the defaults' types are the parameters' types (an ``int``
is accepted where the default is a ``float``), and any other key is refused.

Writing one::

    from schedulers.inputs.generators import Scenario, register_generator

    @register_generator("my-case", params={"jobs": 40, "hosts": 8})
    def my_case(params, seed):
        \"\"\"One line shown by `gridsched campaign generators`.\"\"\"
        rng = numpy.random.default_rng(seed)
        ...
        return Scenario(platform_xml=xml_text, workloads=[workload_dict])

The paper reproductions register theirs in their own modules, imported at the end of this one
(:mod:`.hosep_scenario`: HOSEP's test cases; :mod:`.buc_scenario`: BUC's Lille scenario;
:mod:`.green_scenario`: the green heuristic's Nantes loads; :mod:`.ehosep_scenario`: EHOSEP's
64-host grid). :func:`synthetic` is the generic one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..core.limits import NO_DOUBLE

__all__ = ["Scenario", "Generator", "GENERATORS", "register_generator", "generate", "check_params",
           "GeneratorError", "homogeneous_platform_xml", "synthetic", "hosep_scenario", "buc_scenario"]


class GeneratorError(ValueError):
    """Unknown generator, unknown or mistyped parameter, or parameters a generator cannot honour."""


@dataclass
class Scenario:
    """A platform and its workloads, as Batsim takes them.

    Attributes:
        platform: path of a SimGrid platform XML file, or None when ``platform_xml`` is given.
        platform_xml: the platform XML text (in memory).
        workloads: Batsim workloads, each a path or an already-built dict (``w0``, ``w1``... in order).
        description: one line saying what was generated (recorded in run results).
    """

    platform: str | Path | None = None
    platform_xml: str | None = None
    workloads: list[dict | str | Path] = field(default_factory=list)
    description: str = ""


@dataclass(frozen=True)
class Generator:
    """A registered generator: ``func(params, seed) -> Scenario``, its parameter defaults, the
    first line of its docstring (``doc``) and what each parameter is, with its unit
    (``param_docs``: ``gridsched scenario NAME --help``, ``gridsched campaign generators``)."""

    name: str
    func: Callable[[dict[str, Any], int], Scenario]
    params: dict[str, Any]
    doc: str
    param_docs: dict[str, str] = field(default_factory=dict)
    check: Callable[[dict[str, Any]], None] | None = None


#: Every registered generator, by name.
GENERATORS: dict[str, Generator] = {}


def register_generator(name: str, params: dict[str, Any], docs: dict[str, str] | None = None,
                       check: Callable[[dict[str, Any]], None] | None = None) -> Callable:
    """Decorator registering ``func(params, seed) -> Scenario`` as generator ``name``.

    Args:
        name: registry name (``generator = "NAME"`` in campaign files).
        params: every parameter with its default value (bool, int, float or str).
        docs: what each parameter is, in words, with its unit (``"mean gap between arrivals
            (s)"``); shown by ``gridsched scenario NAME --help``.
        check: ``check(full_params)`` raises :class:`GeneratorError` for values the generator
            cannot honour (ranges), without generating: :func:`check_params` calls it, so that a
            campaign refuses such values when it is loaded, not run by run.

    Raises:
        ValueError: a name registered twice, or ``docs`` naming a parameter ``params`` lacks.
    """
    extra = sorted(set(docs or {}) - set(params))
    if extra:
        raise ValueError(f"scenario generator {name!r}: docs for unknown parameters {extra}")

    def deco(func: Callable[[dict[str, Any], int], Scenario]) -> Callable:
        if name in GENERATORS:
            raise ValueError(f"scenario generator {name!r} registered twice")
        doc = (func.__doc__ or "").strip().splitlines()
        GENERATORS[name] = Generator(name, func, dict(params), doc[0] if doc else "", dict(docs or {}), check)
        return func
    return deco


#: What a parameter must be, by the type of its default, in the words of the error ("float,
#: got nan" said nothing: nan is a float).
_KIND_WORDS = {float: "a finite number", int: "an integer", bool: "true or false", str: "a string"}


def _type_ok(value: Any, default: Any) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(default, bool)
    if isinstance(default, float):   # (an integer of 2**1024 or more is no double: isfinite raised)
        return (isinstance(value, float) and math.isfinite(value)
                or isinstance(value, int) and -NO_DOUBLE < value < NO_DOUBLE)
    return isinstance(value, type(default))


def check_params(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """The full parameter set of generator ``name``: its defaults overridden by ``params``.

    Raises:
        GeneratorError: unknown generator (lists the known ones), unknown parameter (lists the
            generator's parameters), a value of the wrong type, or values the generator's
            ``check`` refuses.
    """
    gen = GENERATORS.get(name)
    if gen is None:
        raise GeneratorError(f"unknown scenario generator {name!r}; known generators: "
                             f"{', '.join(sorted(GENERATORS)) or 'none'}")
    unknown = sorted(set(params) - set(gen.params))
    if unknown:
        raise GeneratorError(f"generator {name!r} has no parameter {', '.join(map(repr, unknown))}; "
                             f"its parameters: {', '.join(sorted(gen.params))}")
    full = dict(gen.params)
    for k, v in params.items():
        if not _type_ok(v, gen.params[k]):
            kind = _KIND_WORDS.get(type(gen.params[k]), type(gen.params[k]).__name__)
            raise GeneratorError(f"generator {name!r}: parameter {k!r} must be {kind}, got {v!r}")
        full[k] = float(v) if isinstance(gen.params[k], float) else v
    if gen.check is not None:
        gen.check(full)
    return full


def generate(name: str, params: dict[str, Any], seed: int) -> Scenario:
    """Run generator ``name`` with ``params`` (checked, defaults filled in) and ``seed``.

    Raises:
        GeneratorError: see :func:`check_params`, a seed that is not an integer >= 0 (NumPy's
            and Python's generators take no other), parameters the generator refuses, or a
            generated workload holding a time beyond 2**33 s (a submission, walltime or delay
            that ``gridsched run`` and the engine refuse: the parameters that made it are named).
    """
    full = check_params(name, params)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise GeneratorError(f"generator {name!r}: seed {seed!r} is not an integer >= 0")
    scenario = GENERATORS[name].func(full, seed)
    _check_times(name, full, seed, scenario)
    return scenario


def _check_times(name: str, params: dict[str, Any], seed: int, scenario: Scenario) -> None:
    """Refuse a generated workload whose times pass 2**33 s (:data:`schedulers.engine.workload.
    MAX_TIME`): a parameter far out of its range (a tiny load, a huge delay)."""
    from ..core.limits import MAX_TIME

    for w in scenario.workloads:
        if not isinstance(w, dict):
            continue
        for job in w.get("jobs", ()):
            for key in ("subtime", "walltime"):
                v = job.get(key)
                if isinstance(v, (int, float)) and not v <= MAX_TIME:
                    raise GeneratorError(f"generator {name!r} (seed {seed}): job {job.get('id')!r} gets {key} {v:.6g} s, "
                                         f"beyond the {MAX_TIME:.0f} s (2**33) a workload's times may reach; its "
                                         f"parameters: {params}")
        for pname, prof in (w.get("profiles") or {}).items():
            v = prof.get("delay") if isinstance(prof, dict) else None
            if isinstance(v, (int, float)) and not v <= MAX_TIME:
                raise GeneratorError(f"generator {name!r} (seed {seed}): profile {pname!r} gets delay {v:.6g} s, "
                                     f"beyond the {MAX_TIME:.0f} s (2**33) a workload's times may reach; its "
                                     f"parameters: {params}")


# ------------------------------------------------------------------------------ platforms
#: Power of the synthetic hosts (W): Idle 100, OneCore 120, AllCores 200, Off 10 -- the figures
#: the project's Grid'5000 platforms use (SimGrid's energy documentation example and the green
#: heuristic paper's values; see platforms/README.md), documented assumptions, not measurements.
SYNTHETIC_POWER = {"idle": 100.0, "one_core": 120.0, "all_cores": 200.0, "off": 10.0}


def owned_hosts_platform_xml(zone: str, hosts: list[tuple[str, str, str, str, str, str, str]]) -> str:
    """SimGrid platform XML (DTD 4.1) of one-core hosts with owners, in one ``Full`` zone, no
    network, with Batsim's ``master_host`` at the :data:`SYNTHETIC_POWER` figures (the owner-share
    grids of the ``hosep`` and ``ehosep`` generators).

    Args:
        zone: the zone id.
        hosts: ``(name, owner, speed, model, idle W, all-cores W, off W)`` per host, as the XML
            strings to write (speed with its unit, e.g. ``"132250Mf"``).
    """
    p = SYNTHETIC_POWER
    lines = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">', f'<zone id="{zone}" routing="Full">',
             '  <host id="master_host" speed="100Mf">',
             f'    <prop id="wattage_per_state" value="{p["idle"]!r}:{p["all_cores"]!r}"/>',
             f'    <prop id="wattage_off" value="{p["off"]!r}"/>', "  </host>"]
    for name, owner, speed, model, idle, full, off in hosts:
        lines += [f'  <host id="{name}" speed="{speed}" core="1">',
                  f'    <prop id="owner" value="{owner}"/>',
                  f'    <prop id="model" value="{model}"/>',
                  f'    <prop id="wattage_per_state" value="{idle}:{full}"/>',
                  f'    <prop id="wattage_off" value="{off}"/>', "  </host>"]
    lines += ["</zone>", "</platform>", ""]
    return "\n".join(lines)


def homogeneous_platform_xml(hosts: int, cores: int, speed: float, *, name: str = "synthetic") -> str:
    """SimGrid platform XML (DTD 4.1) of ``hosts`` identical hosts ``host-0`` ... with ``cores``
    cores of ``speed`` flops/s each, the :data:`SYNTHETIC_POWER` power states, and Batsim's
    ``master_host``; no network (as Batsim's ``*_no_net*`` examples).

    Epsilon (SimGrid's ``Idle:Epsilon:AllCores``) is derived from the OneCore figure as SimGrid
    documents it: ``Epsilon = OneCore - (AllCores - OneCore) / (cores - 1)``; a 1-core host has
    ``Idle:AllCores`` (Epsilon = Idle, SimGrid 3.32 ``host_energy.cpp``). Each host also carries
    ``watt_per_state`` = ``Idle:OneCore:AllCores`` (OneCore = AllCores on a 1-core host), the
    older spelling batsim-py 1.0.5 reads (see :meth:`schedulers.inputs.g5k.PowerModel.watt_per_state`);
    SimGrid 3.32 and the engine ignore it.

    Raises:
        GeneratorError: hosts or cores < 1, speed not finite and > 0.
    """
    if hosts < 1 or cores < 1 or not (math.isfinite(speed) and speed > 0):
        raise GeneratorError(f"platform {name!r}: need hosts >= 1, cores >= 1 and a finite speed > 0 "
                             f"(got {hosts}, {cores}, {speed})")
    p = SYNTHETIC_POWER
    if cores == 1:
        watts = f"{p['idle']!r}:{p['all_cores']!r}"
        legacy = f"{p['idle']!r}:{p['all_cores']!r}:{p['all_cores']!r}"
    else:
        eps = p["one_core"] - (p["all_cores"] - p["one_core"]) / (cores - 1)
        watts = f"{p['idle']!r}:{eps!r}:{p['all_cores']!r}"
        legacy = f"{p['idle']!r}:{p['one_core']!r}:{p['all_cores']!r}"
    lines = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">', f'<zone id="{name}" routing="Full">',
             '  <host id="master_host" speed="100Mf">',
             f'    <prop id="wattage_per_state" value="{p["idle"]!r}:{p["all_cores"]!r}"/>',
             f'    <prop id="wattage_off" value="{p["off"]!r}"/>', "  </host>"]
    width = len(str(hosts - 1))
    for i in range(hosts):
        lines += [f'  <host id="host-{i:0{width}d}" speed="{speed!r}f" core="{cores}">',
                  f'    <prop id="wattage_per_state" value="{watts}"/>',
                  f'    <prop id="wattage_off" value="{p["off"]!r}"/>',
                  f'    <prop id="watt_per_state" value="{legacy}"/>', "  </host>"]
    lines += ["</zone>", "</platform>", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------ synthetic
#: Most jobs a generator makes: it builds the workload in memory, about 0.8 GB a million jobs
#: (measured: 805 MB of resident memory for 1,000,000 jobs of :func:`synthetic`, ``/usr/bin/time
#: -v``); beyond, a MemoryError or the system's out-of-memory killer, after minutes.
MAX_GENERATED_JOBS = 10_000_000


def check_job_count(generator: str, what: str, value: int, jobs: int | None = None) -> None:
    """Refuse a parameter ``what`` = ``value`` of ``generator`` that makes ``jobs`` jobs
    (``value`` itself when None) beyond :data:`MAX_GENERATED_JOBS`.

    Raises:
        GeneratorError: one line naming the generator, the parameter and the bound.
    """
    n = value if jobs is None else jobs
    if n > MAX_GENERATED_JOBS:
        makes = "is" if jobs is None else f"makes {n:,} jobs,"
        raise GeneratorError(f"generator {generator!r}: {what} {value:,} {makes} more than a generator builds "
                             f"({MAX_GENERATED_JOBS:,} jobs: the workload is built in memory, about 0.8 GB a million "
                             "jobs)")


#: The resolution of the run times the synthetic and green-nantes generators draw (s): they are
#: rounded to the millisecond, so a shortest run time below it could round to 0 s, a ``delay``
#: Batsim 4.2.1 refuses (``delay`` must be > 0).
RUNTIME_RESOLUTION = 0.001


def _check_synthetic(params: dict[str, Any]) -> None:
    """The ranges of :func:`synthetic`'s parameters (GeneratorError), its hosts' included, and
    times a workload may hold (at most 2**33 s: :data:`schedulers.core.limits.MAX_TIME`)."""
    from ..core.limits import MAX_TIME

    h, n, load, max_res = params["hosts"], params["jobs"], params["load"], params["max_res"]
    lo, hi, wf = params["runtime_min"], params["runtime_max"], params["walltime_factor"]
    if n < 1 or not load > 0 or not 1 <= max_res <= h or not 0 < lo <= hi or wf < 1 \
            or params["profile"] not in ("delay", "compute") or params["users"] < 1:
        raise GeneratorError(
            "generator 'synthetic': need jobs >= 1, load > 0, 1 <= max_res <= hosts, "
            "0 < runtime_min <= runtime_max, walltime_factor >= 1, profile 'delay' or 'compute', "
            f"users >= 1; got {params}")
    if lo < RUNTIME_RESOLUTION:
        raise GeneratorError(f"generator 'synthetic': runtime_min {lo:g} s is below 0.001 s: run times are rounded "
                             "to the millisecond, and a run time of 0 s is a delay Batsim refuses")
    if hi * wf > MAX_TIME:
        raise GeneratorError(f"generator 'synthetic': runtime_max x walltime_factor = {hi * wf:g} s, beyond the "
                             f"{MAX_TIME:.0f} s (2**33) a workload's walltimes may reach")
    if h < 1 or params["cores"] < 1 or not params["speed"] > 0:
        raise GeneratorError(f"platform 'synthetic': need hosts >= 1, cores >= 1 and a finite speed > 0 "
                             f"(got {h}, {params['cores']}, {params['speed']})")
    from ..engine.platform import MAX_HOSTS

    if h > MAX_HOSTS:   # (the platform's XML was written, for minutes, and then refused)
        raise GeneratorError(f"platform 'synthetic': hosts {h:,} is more than a platform may have ({MAX_HOSTS:,}: "
                             "schedulers.engine.platform.MAX_HOSTS)")
    check_job_count("synthetic", "jobs", n)


@register_generator("synthetic", params={
    "hosts": 16, "cores": 1, "speed": 1e9, "jobs": 40, "load": 0.8, "max_res": 4,
    "runtime_min": 60.0, "runtime_max": 3600.0, "walltime_factor": 2.0, "profile": "delay",
    "users": 1}, docs={
    "hosts": "number of identical hosts",
    "cores": "cores per host",
    "speed": "speed of each core (flops/s)",
    "jobs": "number of jobs",
    "load": "offered load: work submitted / (hosts x arrival span), > 0",
    "max_res": "largest job: hosts per job drawn uniformly in 1..max_res",
    "runtime_min": "shortest run time (s, >= 0.001: run times are rounded to the ms); run times are log-uniform",
    "runtime_max": "longest run time (s)",
    "walltime_factor": "walltime = run time x U(1, factor), >= 1 (never short)",
    "profile": "'delay' (hosts stay at idle power) or 'compute' (one core of each host busy)",
    "users": "number of users (u0, u1...) the jobs are drawn among"}, check=_check_synthetic)
def synthetic(params: dict[str, Any], seed: int) -> Scenario:
    """Poisson arrivals at a given offered load on identical hosts (seeded, in memory).

    Parameters (``params``): ``hosts``, ``cores`` (per host), ``speed`` (flops/s per core);
    ``jobs``; ``load`` (offered load rho, the work submitted divided by ``hosts`` x the arrival
    span); ``max_res`` (hosts per job, uniform in 1..max_res); ``runtime_min``/``runtime_max``
    (s, log-uniform); ``walltime_factor`` (walltime = runtime x U(1, factor), rounded up to the
    second: estimates are never short); ``profile``: ``"delay"`` (Batsim ``delay``, hosts stay at
    idle power) or ``"compute"`` (``parallel_homogeneous`` of runtime x speed flops per host, one
    core of each host busy); ``users`` (jobs owned by ``u0`` ... round-robin on a random draw).

    Arrivals: exponential gaps, rescaled so that the last job arrives at the span
    ``S = sum(res x runtime) / (load x hosts)``: the offered load is ``load`` exactly, not only in
    expectation. The first job arrives at 0. Job ids ``0`` ... ``jobs-1`` in arrival order.

    Raises:
        GeneratorError: jobs < 1, load <= 0, max_res outside 1..hosts, runtime bounds not
            0 < min <= max, a min below 0.001 s (run times are rounded to the ms: it could round
            to 0 s), walltime_factor < 1, unknown profile, users < 1, walltimes that may pass
            2**33 s; arrivals spread beyond 2**33 s (a load too small for the jobs).
    """
    from ..core.limits import MAX_TIME

    _check_synthetic(params)
    h, n, load, max_res = params["hosts"], params["jobs"], params["load"], params["max_res"]
    lo, hi, wf = params["runtime_min"], params["runtime_max"], params["walltime_factor"]
    import numpy as np  # here, not at the top: `gridsched` starts without numpy
    rng = np.random.default_rng(seed)
    res = rng.integers(1, max_res + 1, size=n)
    runtime = np.round(np.exp(rng.uniform(math.log(lo), math.log(hi), size=n)), 3)
    walltime = np.ceil(runtime * rng.uniform(1.0, wf, size=n))
    gaps = rng.exponential(1.0, size=n)
    gaps[0] = 0.0
    arrivals = np.cumsum(gaps)
    span = float((res * runtime).sum()) / (load * h)
    if not span <= MAX_TIME:
        raise GeneratorError(f"generator 'synthetic': load {load!r} spreads the {n} arrivals of seed {seed} over "
                             f"{span:.6g} s, beyond the {MAX_TIME:.0f} s (2**33) a workload's times may reach: raise "
                             "load, or lower jobs or the runtimes")
    if arrivals[-1] > 0:
        arrivals = arrivals * (span / arrivals[-1])
    users = rng.integers(0, params["users"], size=n)
    jobs, profiles = [], {}
    for i in range(n):
        rt = float(runtime[i])
        if params["profile"] == "delay":
            pname = f"delay_{rt!r}"
            profiles[pname] = {"type": "delay", "delay": rt}
        else:
            pname = f"compute_{rt!r}"
            profiles[pname] = {"type": "parallel_homogeneous", "cpu": rt * params["speed"], "com": 0.0}
        jobs.append({"id": str(i), "subtime": round(float(arrivals[i]), 6), "res": int(res[i]),
                     "walltime": float(walltime[i]), "profile": pname, "user": f"u{int(users[i])}"})
    workload = {"nb_res": h, "jobs": jobs, "profiles": profiles,
                "description": f"synthetic seed {seed}: {n} jobs, load {load}, {h} hosts"}
    return Scenario(platform_xml=homogeneous_platform_xml(h, params["cores"], params["speed"]),
                    workloads=[workload], description=workload["description"])


# ------------------------------------------------------------------------------ papers' generators
# Imported last: they register themselves with the decorator defined above.
from . import hosep_scenario  # noqa: E402  (the module; registers "hosep")
from . import buc_scenario  # noqa: E402,F401  (the module; registers "buc")
from . import green_scenario  # noqa: E402,F401  (registers "green-nantes")
from . import ehosep_scenario  # noqa: E402,F401  (registers "ehosep")
from . import owner_lille_scenario  # noqa: E402,F401  (registers "owner-lille")
