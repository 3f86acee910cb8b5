"""Campaign files (TOML) and their expansion into runs with stable ids.

A campaign file (read with the standard library's :mod:`tomllib`)::

    name = "small"                 # default: the file's stem
    description = "..."            # optional, free text (kept in the campaign's campaign.json)
    seeds = 3                      # seeds 0, 1, 2; or a list: seeds = [7, 11]
    energy = true                  # Batsim's -E (default false)
    compute_sharing = false        # Batsim's --enable-compute-sharing (default false)
    simulator = "engine"           # "engine" (default) or "batsim" (a real batsim on PATH)
    keep_outputs = false           # keep Batsim's output files of every run (default false)
    metrics = ["satisfaction"]     # metrics computed from each run's files (run_metrics.RUN_METRICS)
    batsim_timeout = 3600          # s, per run, simulator = "batsim" only

    [[policy]]                     # one table per policy: registry name, options, label
    name = "easy"
    [[policy]]
    name = "fcfs"
    label = "FCFS"                 # default: the name (labels must be unique)
    options = {}                   # the policy's options (see `gridsched policies`)

    [[scenario]]                   # a platform and workload files (paths relative to this file)...
    name = "nantes"
    platform = "../platforms/g5k_nantes_econome.xml"
    workloads = ["../workloads/demo_nantes.json"]   # or workload = "FILE" for one
    events = ["failures.txt"]      # optional: Batsim's --events files (machine (un)availability)
    forward_unknown_events = false # optional: Batsim's --forward-unknown-events
    [[scenario]]                   # ... or a registered generator with its parameters
    name = "synthetic-40"
    generator = "synthetic"
    params = { jobs = 40, hosts = 8 }

    [axes]                         # product axes: every combination
    load = [0.5, 0.9]              # a generator parameter, a policy option or an engine option
    "policy.limits.user1" = [80, 150]   # one key of a mapping option (merged into [[policy]] options)
    [zip]                          # values that go together (same length): one axis
    "scenario.jobs" = [40, 400]    # (prefixed: a bare `jobs` is the results' column of that name)
    hosts = [8, 64]

    [report]                       # read by `gridsched campaign report` (schedulers.campaign.report)

Runs are the product policies x scenarios x axes x seeds. An axis name is routed to what it sets:
``policy.NAME`` / ``scenario.NAME`` / ``engine.NAME`` say it explicitly; a bare ``NAME`` is a
policy option when some policy of the campaign declares it (:attr:`Policy.option_docs`), a
generator parameter when some generator scenario declares it, or an engine option (``energy``,
``compute_sharing``, ``simulator``); a name that fits two of these must be prefixed. A setting is
given in one place: two axes that set it (``load`` and ``scenario.load``, a mapping option and one
of its keys), or an axis and a ``[[policy]]`` / ``[[scenario]]`` table, are refused. An axis that
does not apply to a run (an option its policy does not have, a parameter of another generator or of
a file scenario) does not multiply that run: the run is made once, with the axis value null in its
parameters. The seed goes to generator scenarios and to policies that declare a ``seed`` option (which
``[[policy]]`` options and axes therefore may not set: ``seeds`` gives it);
a file scenario run by a policy without one is deterministic and is run once (seed null).
An axis is a column of the results table under the name it is given, so a bare name that is
already one of its columns (``jobs``, ``makespan``... of the run summary, ``id``, ``status``,
``error``...) is refused: prefix it (``"scenario.jobs"``).

Every run has an id: the first 16 hex digits of the SHA-256 of its canonical parameters (JSON with
sorted keys: its params, the policy's registry name and effective options, the scenario's
definition with the generator's defaults filled in, the engine options, for a file scenario
the SHA-256 of its files' contents, and for a policy of the user's own code the SHA-256 of the
file defining its class). The same file means the same ids, in any process, whatever
the order of keys in the file; the campaign's name, ``keep_outputs`` and ``batsim_timeout`` do
not enter it. A platform, workload or events file, or a policy file, edited since a run makes a
new run (the old record is ignored), never a result of the old file reused. A file scenario's
inputs are checked as ``gridsched run`` checks them by default: its workloads are Batsim JSON
files (a SWF/GWF trace is refused: convert it first), and a job asking for more hosts than the
platform has, or a compute host real Batsim refuses (a speed of 0), fails the run (rescale the
file first: ``gridsched convert FILE --nb-hosts N``). What needs Batsim's energy model (the
policy option ``idle_timeout``, the run metrics ``green-energy`` and ``ehosep``) is refused for a
run without ``energy``, and a policy that needs Batsim's compute sharing (``green-easy`` or
``green-heft`` with ``delta`` > 0: :meth:`~schedulers.core.policy.Policy.compute_sharing_needed`)
for a run without ``compute_sharing``. Every policy is built once per distinct options when the
file is read, so that an option value it refuses (``delta = 150``) is an error of the file, not of
each run; ``[report.order]`` or a ``where`` of ``[report]`` naming a column or a value no run has
is refused too.

Errors: :class:`~schedulers.campaign.errors.CampaignError`, one line
``FILE: KEY: what is wrong`` (KEY a dotted path such as ``policy[1].options``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.metrics import RunSummary
from ..inputs import TRACE_SUFFIXES
from ..inputs.generators import GENERATORS, GeneratorError, check_params
from ..registry import POLICIES, PolicyOptionError, check_options, policy_class
from .columns import FIRST_COLUMNS, LAST_COLUMNS, RUN_COLUMNS, SIMULATOR
from .errors import CampaignError

__all__ = ["Campaign", "RunSpec", "load_campaign", "parse_campaign", "run_id", "ENGINE_OPTIONS"]

#: Most seeds of a campaign (``seeds = N`` or a list): a campaign's runs are expanded in memory
#: (about 1 KB a run) and each is a simulation.
MAX_SEEDS = 100_000
#: Most runs of a campaign (policies x scenarios x axis values x seeds, counted before the runs are
#: expanded): a million runs take about a gigabyte of run descriptions.
MAX_RUNS = 1_000_000

#: Why a policy's ``seed`` option is not given in a campaign file.
SEED_GIVEN = ("a policy's seed option is the run's seed, which the campaign gives from `seeds`: set seeds = [N, ...] "
              "(one run per seed) instead")
#: Engine options an axis may set, with their defaults (Batsim's flags and the simulator choice).
ENGINE_OPTIONS: dict[str, Any] = {"simulator": "engine", "energy": False, "compute_sharing": False}
SIMULATORS = ("engine", "batsim")
_TOP = {"name", "description", "seeds", "metrics", "energy", "compute_sharing", "simulator", "keep_outputs",
        "batsim_timeout", "policy", "scenario", "axes", "zip", "report"}
_KINDS = ("policy", "scenario", "engine")


@dataclass(frozen=True)
class PolicyEntry:
    """A ``[[policy]]`` table: its label, registry name and options."""

    label: str
    name: str
    options: dict[str, Any]


@dataclass(frozen=True)
class ScenarioEntry:
    """A ``[[scenario]]`` table: a generator and its parameters, or a platform and workload files
    (paths as written, relative to the campaign file)."""

    label: str
    generator: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    platform: str | None = None
    workloads: tuple[str, ...] = ()
    events: tuple[str, ...] = ()
    forward_unknown_events: bool = False

    def declares(self, name: str) -> bool:
        return self.generator is not None and name in GENERATORS[self.generator].params


@dataclass(frozen=True)
class Axis:
    """One product axis: a single name, or a zip group of names whose values go together.

    ``names[i]`` is the key in the runs' params, ``kinds[i]`` what it sets ("policy",
    "scenario", "engine") and ``keys[i]`` the option/parameter name; ``values`` is a list of
    tuples (one value per name)."""

    names: tuple[str, ...]
    kinds: tuple[str, ...]
    keys: tuple[str, ...]
    values: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True)
class RunSpec:
    """One simulation of a campaign, everything a worker needs (picklable).

    Attributes:
        id: stable id (:func:`run_id`).
        campaign: the campaign's name.
        params: the run's coordinates: ``policy`` (label), ``scenario`` (label), every axis name,
            ``seed``; scalars, null where an axis (or the seed) does not apply.
        policy_name, policy_options: what the registry builds.
        scenario: ``{"generator": NAME, "params": {...}}`` (defaults filled in) or
            ``{"platform": PATH, "workloads": [PATH, ...]}`` (as written in the file).
        engine: ``simulator``, ``energy``, ``compute_sharing``.
        seed: the run's seed.
        base_dir: the campaign file's folder (relative paths are resolved against it).
        keep_outputs: keep Batsim's output files. batsim_timeout: s (real Batsim only).
        metrics: run metrics computed from the run's files (:mod:`.run_metrics`).
    """

    id: str
    campaign: str
    params: dict[str, Any]
    policy_name: str
    policy_options: dict[str, Any]
    scenario: dict[str, Any]
    engine: dict[str, Any]
    seed: int
    base_dir: str
    keep_outputs: bool = False
    batsim_timeout: float = 3600.0
    metrics: tuple[str, ...] = ()
    inputs_sha256: str | None = None
    policy_sha256: str | None = None

    def identity(self) -> dict[str, Any]:
        """The parameters the id is the hash of (run metrics included: asking for one more
        metric makes new runs, so that every record has every metric; a file scenario's
        contents too: an edited workload makes new runs; and the file defining a policy of the
        user's own code: an edited policy makes new runs)."""
        ident = {"params": self.params, "policy_name": self.policy_name,
                 "policy_options": self.policy_options, "scenario": self.scenario, "engine": self.engine}
        if self.metrics:
            ident["metrics"] = list(self.metrics)
        if self.inputs_sha256 is not None:
            ident["inputs_sha256"] = self.inputs_sha256
        if self.policy_sha256 is not None:
            ident["policy_sha256"] = self.policy_sha256
        return ident


def run_id(identity: dict[str, Any]) -> str:
    """16 hex digits of the SHA-256 of ``identity`` as canonical JSON (sorted keys, no spaces,
    ASCII): the same parameters give the same id in every process and on every machine."""
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


@dataclass
class Campaign:
    """A parsed, validated campaign file (see the module docstring)."""

    path: Path
    name: str
    description: str
    seeds: list[int]
    engine: dict[str, Any]
    keep_outputs: bool
    batsim_timeout: float
    policies: list[PolicyEntry]
    scenarios: list[ScenarioEntry]
    axes: list[Axis]
    report: dict[str, Any] | None
    metrics: tuple[str, ...] = ()
    _runs: list[RunSpec] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def axis_names(self) -> list[str]:
        """The params keys of every run, in order: policy, scenario, the axes, seed."""
        return ["policy", "scenario"] + [n for a in self.axes for n in a.names] + ["seed"]

    def runs(self) -> list[RunSpec]:
        """Every run, in a fixed order (policy, scenario, axes, seed); duplicates (an axis that
        does not apply) removed.

        Raises:
            CampaignError: an axis value the policy or the generator refuses (names the axis).
        """
        if self._runs is None:  # expanded once (24,000 runs take about a second)
            self._runs = self._expand()
        return self._runs

    def _expand(self) -> list[RunSpec]:
        out: dict[str, RunSpec] = {}
        self._digests: dict[str, str] = {}   # scenario label -> SHA-256 of its files
        self._code: dict[str, str | None] = {}   # policy name -> SHA-256 of the user's file defining it
        self._built: dict[str, str | None] = {}   # policy and options -> what needs compute sharing
        for pol in self.policies:
            for sc in self.scenarios:
                seeded = sc.generator is not None or "seed" in policy_class(pol.name).option_docs
                for combo in itertools.product(*(self._values(a, pol, sc) for a in self.axes)):
                    for seed in self.seeds if seeded else [None]:
                        r = self._run(pol, sc, combo, seed)
                        out.setdefault(r.id, r)
        return list(out.values())

    def _policy_built(self, name: str, options: dict[str, Any], where: str) -> str | None:
        """Build policy ``name`` with ``options`` once per distinct options (its seed aside: the
        campaign gives it, a valid one), so that a value its constructor refuses is an error of
        the file, not of every run; returns what it needs compute sharing for
        (:meth:`~schedulers.core.policy.Policy.compute_sharing_needed`), or None.

        Raises:
            CampaignError: ``where`` (the file and the run), then the policy's one-line error (a
                bad option value; a policy of the user's own code that raised in ``__init__``:
                its file and line).
        """
        from ..core.model import PolicyError
        from ..registry import get_policy

        key = json.dumps([name, {k: v for k, v in options.items() if k != "seed"}], sort_keys=True)
        if key not in self._built:
            try:
                self._built[key] = get_policy(name, options).compute_sharing_needed()
            except (PolicyOptionError, PolicyError) as exc:   # (PolicyFailure: the user's file and line)
                raise CampaignError(f"{where}: {exc}") from None
        return self._built[key]

    def _applies(self, kind: str, key: str, pol: PolicyEntry, sc: ScenarioEntry) -> bool:
        if kind == "policy":
            return key.split(".", 1)[0] in policy_class(pol.name).option_docs
        if kind == "scenario":
            return sc.declares(key)
        return True

    def _values(self, axis: Axis, pol: PolicyEntry, sc: ScenarioEntry) -> list[tuple[Any, ...]]:
        mask = [self._applies(k, key, pol, sc) for k, key in zip(axis.kinds, axis.keys)]
        if not any(mask):
            return [tuple(None for _ in mask)]
        return [tuple(v if m else None for v, m in zip(vals, mask)) for vals in axis.values]

    def _run(self, pol: PolicyEntry, sc: ScenarioEntry, combo: tuple, seed: int | None) -> RunSpec:
        params: dict[str, Any] = {"policy": pol.label, "scenario": sc.label}
        options = dict(pol.options)
        gen_params = dict(sc.params)
        engine = dict(self.engine)
        for axis, vals in zip(self.axes, combo):
            for name, kind, key, v in zip(axis.names, axis.kinds, axis.keys, vals):
                params[name] = v
                if v is None:
                    continue
                if kind == "policy" and "." in key:   # one key of a mapping option
                    head, sub = key.split(".", 1)
                    base = options.get(head, {})
                    if not isinstance(base, dict):
                        raise CampaignError(f"{self.path}: axis policy.{key}: policy {pol.label!r} sets option "
                                            f"{head!r} to {base!r}, not a table")
                    options[head] = {**base, sub: v}
                    continue
                {"policy": options, "scenario": gen_params, "engine": engine}[kind][key] = v
        params["seed"] = seed
        if "seed" in policy_class(pol.name).option_docs:
            options["seed"] = seed
        where = f"{self.path}: run " + " ".join(f"{k}={v}" for k, v in params.items() if k != "seed" and v is not None)
        why = self._policy_built(pol.name, options, where)
        scenario: dict[str, Any]
        if sc.generator is not None:
            try:
                scenario = {"generator": sc.generator, "params": check_params(sc.generator, gen_params)}
            except GeneratorError as exc:
                raise CampaignError(f"{where}: {exc}") from None
        else:
            scenario = {"platform": sc.platform, "workloads": list(sc.workloads)}
            if sc.events:   # (only then: the ids of scenarios without events stay as they were)
                scenario["events"] = list(sc.events)
                scenario["forward_unknown_events"] = sc.forward_unknown_events
            if sc.label not in self._digests:
                assert sc.platform is not None   # (a scenario without a generator has one: _scenarios)
                self._digests[sc.label] = files_sha256(self.path.parent, [sc.platform, *sc.workloads, *sc.events])
        if engine["simulator"] not in SIMULATORS or not isinstance(engine["energy"], bool) \
                or not isinstance(engine["compute_sharing"], bool):
            raise CampaignError(f"{where}: engine options {engine}: simulator must be 'engine' or 'batsim', "
                                "energy and compute_sharing true or false")
        if not engine["energy"]:
            _refuse_without_energy(where, options, self.metrics)
        if why is not None and not engine["compute_sharing"]:
            raise CampaignError(f"{where}: policy {pol.name!r} with {why}, which needs Batsim's compute sharing: "
                                "set compute_sharing = true (in the file, or as an engine axis)")
        if pol.name not in self._code:
            self._code[pol.name] = policy_code_sha256(pol.name)
        spec = RunSpec(id="", campaign=self.name, params=params, policy_name=pol.name, policy_options=options,
                       scenario=scenario, engine=engine, seed=self.seeds[0] if seed is None else seed, base_dir=str(self.path.parent),
                       keep_outputs=self.keep_outputs, batsim_timeout=self.batsim_timeout, metrics=self.metrics,
                       inputs_sha256=None if sc.generator is not None else self._digests[sc.label],
                       policy_sha256=self._code[pol.name])
        return RunSpec(**{**spec.__dict__, "id": run_id(spec.identity())})


def _refuse_without_energy(where: str, options: dict[str, Any], metrics: tuple[str, ...]) -> None:
    """Refuse, for a run without Batsim's energy model, what needs it: the policy option
    ``idle_timeout`` (Batsim 4.2.1 aborts on the first SET_RESOURCE_STATE without ``-E``, and
    ``gridsched run`` refuses it without ``--energy``) and the run metrics that read the energy
    outputs (:mod:`.run_metrics`, ``needs_energy``). Raises :class:`CampaignError` (``where``: the
    file and the run)."""
    from .run_metrics import RUN_METRICS

    if options.get("idle_timeout") is not None:
        raise CampaignError(f"{where}: policy option 'idle_timeout' switches hosts to their sleep pstate, which "
                            "Batsim allows only with its energy model: set energy = true")
    for m in metrics:
        if getattr(RUN_METRICS[m], "needs_energy", False):
            raise CampaignError(f"{where}: run metric {m!r} reads the energy outputs, which a run has only with "
                                "Batsim's energy model: set energy = true")


def policy_code_sha256(name: str) -> str | None:
    """The SHA-256 (hex) of the file that defines policy ``name`` when it is the user's own code
    (``FILE.py:Class`` or ``package.module:Class``), so that a campaign run again after the policy
    was edited runs it again instead of keeping the old code's results; None for a registered
    policy (gridsched's own, its version in every record) or when the source cannot be found.

    Raises:
        CampaignError: the file cannot be read.
    """
    if name in POLICIES:
        return None
    import inspect

    try:
        source = inspect.getsourcefile(policy_class(name))
    except TypeError:   # (a class without a source file)
        return None
    return None if source is None else files_sha256(Path(source).parent, [Path(source).name])


def files_sha256(base: Path, names: list[str]) -> str:
    """The SHA-256 (hex) of the contents of files ``names`` (relative to ``base``), in order,
    each prefixed by its length (so that two lists of files never hash alike by accident).

    Raises:
        CampaignError: a file cannot be read.
    """
    h = hashlib.sha256()
    for name in names:
        p = base / name
        try:
            with open(p, "rb") as f:
                h.update(f"{p.stat().st_size}:".encode())
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        except OSError as exc:
            raise CampaignError(f"{p}: cannot read: {exc.strerror or exc}") from None
    return h.hexdigest()


# ------------------------------------------------------------------------------ parsing
class _Checker:
    """Type checks that raise one-line CampaignErrors ``FILE: KEY: ...``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, key: str, what: str) -> CampaignError:
        return CampaignError(f"{self.path}: {key}: {what}")

    def keys(self, table: dict, allowed: set[str], key: str) -> None:
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise self.fail(f"{key}.{unknown[0]}" if key else unknown[0],
                            f"unknown key; allowed: {', '.join(sorted(allowed))}")

    def typed(self, value: Any, types: type | tuple, key: str, what: str) -> Any:
        ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in
                                               (types if isinstance(types, tuple) else (types,)))
        if not ok:
            raise self.fail(key, f"expected {what}, got {_show(value)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(key, f"expected a finite number, got {value!r}")
        return value

    def label(self, value: Any, key: str) -> str:
        self.typed(value, str, key, "a string")
        if not value.strip():
            raise self.fail(key, "must not be empty")
        return value

    def plain(self, value: Any, key: str) -> None:
        """A value a run can record in JSON: str, int, finite float, bool, lists and tables of them."""
        if isinstance(value, dict):
            for k, v in value.items():
                self.plain(v, f"{key}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                self.plain(v, f"{key}[{i}]")
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise self.fail(key, f"expected a finite number, got {value!r}")
        elif not isinstance(value, (str, int, bool)):
            raise self.fail(key, f"expected a string, number, boolean, list or table, got {_show(value)}")


def _show(v: Any) -> str:
    name = {str: "a string", bool: "a boolean", int: "an integer", float: "a number", list: "a list",
            dict: "a table"}.get(type(v), type(v).__name__)
    text = repr(v)
    return f"{name} {text if len(text) <= 40 else text[:37] + '...'}"


def load_campaign(path: str | Path) -> Campaign:
    """Read and validate a campaign file.

    Raises:
        CampaignError: unreadable file, invalid TOML, unknown key, wrong type, empty axis,
            unknown policy, option or generator (one line naming the file and the key).
    """
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8-sig"))   # (a BOM, as editors on Windows write it)
    except OSError as exc:
        raise CampaignError(f"{p}: cannot read campaign file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise CampaignError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise CampaignError(f"{p}: invalid TOML: {exc}") from None
    return parse_campaign(data, p)


def parse_campaign(data: dict[str, Any], path: Path) -> Campaign:
    """Validate an already-parsed campaign table (``path`` names it in messages and is the base
    of relative paths). Raises CampaignError (see :func:`load_campaign`)."""
    c = _Checker(path)
    c.keys(data, _TOP, "")
    name = c.label(data.get("name", path.stem), "name")
    description = c.typed(data.get("description", ""), str, "description", "a string")
    seeds = _seeds(c, data.get("seeds", 1))
    engine = dict(ENGINE_OPTIONS)
    for k in ("energy", "compute_sharing"):
        engine[k] = c.typed(data.get(k, engine[k]), bool, k, "true or false")
    engine["simulator"] = c.typed(data.get("simulator", "engine"), str, "simulator", "a string")
    if engine["simulator"] not in SIMULATORS:
        raise c.fail("simulator", f"expected \"engine\" or \"batsim\", got {engine['simulator']!r}")
    keep = c.typed(data.get("keep_outputs", False), bool, "keep_outputs", "true or false")
    timeout = float(c.typed(data.get("batsim_timeout", 3600.0), (int, float), "batsim_timeout", "a number (s)"))
    if not timeout > 0:   # (nan too)
        raise c.fail("batsim_timeout", f"must be > 0 s, got {timeout!r}")
    metrics = c.typed(data.get("metrics", []), list, "metrics", "a list of run metric names")
    from .run_metrics import RUN_METRICS
    for i, m in enumerate(metrics):
        if m not in RUN_METRICS:
            raise c.fail(f"metrics[{i}]", f"unknown run metric {m!r}; known: {', '.join(RUN_METRICS)}")
    policies = _policies(c, data.get("policy"))
    scenarios = _scenarios(c, data.get("scenario"), path.parent)
    axes = _axes(c, data, policies, scenarios)
    report = data.get("report")
    shown = None
    if report is not None:
        from .report import check_report_section
        shown = check_report_section(c.typed(report, dict, "report", "a table"), str(path))
    camp = Campaign(path=path, name=name, description=description, seeds=seeds, engine=engine,
                    keep_outputs=keep, batsim_timeout=timeout, policies=policies, scenarios=scenarios,
                    axes=axes, report=report, metrics=tuple(metrics))
    most = len(policies) * len(scenarios) * len(seeds) * math.prod(len(a.values) for a in axes)
    if most > MAX_RUNS:   # (an upper bound: an axis that does not apply to a run does not multiply it)
        raise c.fail("seeds" if len(seeds) > 1 else "axes",
                     f"up to {most:,} runs ({len(policies)} policies x {len(scenarios)} scenarios x "
                     f"{math.prod(len(a.values) for a in axes):,} axis combinations x {len(seeds):,} seeds): at most "
                     f"{MAX_RUNS:,}; split the campaign")
    runs = camp.runs()  # values that policies or generators refuse are errors now, not at run time
    if shown is not None:   # (an order or a where naming no column or value of the runs: a typo)
        from .report import check_names
        check_names(shown, [r.params for r in runs], str(path))
    return camp


def _seeds(c: _Checker, value: Any) -> list[int]:
    if isinstance(value, int) and not isinstance(value, bool):
        if not 1 <= value <= MAX_SEEDS:
            raise c.fail("seeds", f"a number of seeds must be >= 1 and <= {MAX_SEEDS:,}, got {value:,}")
        return list(range(value))
    c.typed(value, list, "seeds", "a number of seeds or a list of integer seeds")
    if not value:
        raise c.fail("seeds", "empty list: no run")
    if len(value) > MAX_SEEDS:
        raise c.fail("seeds", f"{len(value):,} seeds: at most {MAX_SEEDS:,}")
    for i, s in enumerate(value):
        c.typed(s, int, f"seeds[{i}]", "an integer")
        if s < 0:
            raise c.fail(f"seeds[{i}]", f"must be >= 0 (the generators' random streams take non-negative seeds), "
                                        f"got {s}")
    if len(set(value)) != len(value):
        raise c.fail("seeds", "a seed appears twice")
    return list(value)


def _entries(c: _Checker, value: Any, key: str, example: str) -> list[dict]:
    if value is None:
        raise c.fail(key, f"missing: at least one [[{key}]] table ({example})")
    c.typed(value, list, key, f"an array of tables [[{key}]]")
    if not value:
        raise c.fail(key, "empty: no run")
    for i, t in enumerate(value):
        c.typed(t, dict, f"{key}[{i}]", "a table")
    return value


def _policies(c: _Checker, value: Any) -> list[PolicyEntry]:
    out: list[PolicyEntry] = []
    for i, t in enumerate(_entries(c, value, "policy", 'name = "easy"')):
        k = f"policy[{i}]"
        c.keys(t, {"name", "label", "options"}, k)
        if "name" not in t:
            raise c.fail(f"{k}.name", "missing (a registered policy, see `gridsched policies`)")
        name = c.label(t["name"], f"{k}.name")
        if name not in POLICIES:
            try:   # a policy of the user's own code: FILE.py:Class or package.module:Class
                policy_class(name)
            except KeyError as exc:
                raise c.fail(f"{k}.name", str(exc.args[0])) from None
        options = c.typed(t.get("options", {}), dict, f"{k}.options", "a table")
        c.plain(options, f"{k}.options")
        try:
            check_options(name, options)
        except PolicyOptionError as exc:
            raise c.fail(f"{k}.options", str(exc)) from None
        if "seed" in options:   # (the run's seed replaced it without a word)
            raise c.fail(f"{k}.options.seed", SEED_GIVEN)
        out.append(PolicyEntry(c.label(t.get("label", name), f"{k}.label"), name, dict(options)))
    _unique(c, [p.label for p in out], "policy", "label")
    return out


def _scenarios(c: _Checker, value: Any, base: Path) -> list[ScenarioEntry]:
    out: list[ScenarioEntry] = []
    for i, t in enumerate(_entries(c, value, "scenario", 'name = "s", generator = "synthetic"')):
        k = f"scenario[{i}]"
        c.keys(t, {"name", "generator", "params", "platform", "workloads", "workload", "events",
                   "forward_unknown_events"}, k)
        if "name" not in t:
            raise c.fail(f"{k}.name", "missing (the scenario's label)")
        label = c.label(t["name"], f"{k}.name")
        if "generator" in t:
            extra = sorted({"platform", "workloads", "workload", "events", "forward_unknown_events"} & set(t))
            if extra:
                raise c.fail(f"{k}.{extra[0]}", "a scenario has a generator, or a platform and workloads (and "
                                                "events), not both")
            gen = c.label(t["generator"], f"{k}.generator")
            params = c.typed(t.get("params", {}), dict, f"{k}.params", "a table")
            try:
                check_params(gen, params)
            except GeneratorError as exc:
                raise c.fail(f"{k}.generator" if gen not in GENERATORS else f"{k}.params", str(exc)) from None
            out.append(ScenarioEntry(label, generator=gen, params=dict(params)))
            continue
        if "params" in t:
            raise c.fail(f"{k}.params", "parameters belong to a generator scenario (generator = ...)")
        if "platform" not in t:
            raise c.fail(k, "needs generator = \"NAME\", or platform = \"FILE\" and workloads = [\"FILE\", ...]")
        platform = c.label(t["platform"], f"{k}.platform")
        if "workloads" in t and "workload" in t:
            raise c.fail(f"{k}.workload", "give workload or workloads, not both")
        wl = t.get("workloads", t.get("workload"))
        wkey = f"{k}.workloads" if "workloads" in t else f"{k}.workload"
        if wl is None:
            raise c.fail(f"{k}.workloads", "missing (a list of Batsim workload files)")
        wl = [wl] if isinstance(wl, str) else c.typed(wl, list, wkey, "a list of file names")
        if not wl:
            raise c.fail(wkey, "empty list: a scenario needs at least one workload")
        for j, w in enumerate(wl):
            c.label(w, f"{wkey}[{j}]")
        ev = c.typed(t.get("events", []), list, f"{k}.events", "a list of Batsim events files")
        for j, e in enumerate(ev):
            c.label(e, f"{k}.events[{j}]")
        fwd = c.typed(t.get("forward_unknown_events", False), bool, f"{k}.forward_unknown_events", "true or false")
        for key, f in ([(f"{k}.platform", platform)] + [(f"{wkey}[{j}]", w) for j, w in enumerate(wl)]
                       + [(f"{k}.events[{j}]", e) for j, e in enumerate(ev)]):
            if not (base / f).is_file():
                raise c.fail(key, f"no such file {str(base / f)!r}")
        for j, w in enumerate(wl):
            if w.lower().endswith(TRACE_SUFFIXES):
                raise c.fail(f"{wkey}[{j}]", f"{w!r} is an SWF/GWF trace, and a campaign runs Batsim JSON workloads "
                                             f"as they are: convert it first (gridsched convert {w} -o NEW.json; "
                                             "--nb-hosts N for the platform's hosts)")
        out.append(ScenarioEntry(label, platform=platform, workloads=tuple(wl), events=tuple(ev),
                                 forward_unknown_events=fwd))
    _unique(c, [s.label for s in out], "scenario", "name")
    return out


def _unique(c: _Checker, labels: list[str], key: str, field_: str) -> None:
    seen: set[str] = set()
    for i, lab in enumerate(labels):
        if lab in seen:
            raise c.fail(f"{key}[{i}].{field_}", f"{lab!r} is used twice (labels must be unique)")
        seen.add(lab)


def _route(c: _Checker, name: str, key: str, policies: list[PolicyEntry],
           scenarios: list[ScenarioEntry]) -> tuple[str, str]:
    """(kind, option key) of axis ``name``."""
    if name in ("policy", "scenario", "seed", "seeds"):
        raise c.fail(key, f"{name!r} is not an axis (use [[policy]], [[scenario]], seeds)")
    # policy.OPTION.KEY: one key of a mapping option (e.g. policy.limits.user1 for EHOSEP's limits)
    opt_head = name.split(".", 1)[-1].split(".", 1)[0] if name.startswith("policy.") else name.split(".", 1)[-1]
    pol = any(opt_head in policy_class(p.name).option_docs for p in policies)
    gen = any(s.declares(name.split(".", 1)[-1]) for s in scenarios)
    if "." in name:
        kind, opt = name.split(".", 1)
        ok = {"policy": pol, "scenario": gen, "engine": opt in ENGINE_OPTIONS}
        if kind not in ok:
            raise c.fail(key, f"prefix {kind!r} unknown; use policy.NAME, scenario.NAME or engine.NAME")
        if not ok[kind]:
            raise c.fail(key, f"no {kind} of this campaign has the {'option' if kind != 'scenario' else 'parameter'} "
                              f"{opt!r}")
        return kind, opt
    found = [k for k, ok in (("policy", pol), ("scenario", gen), ("engine", name in ENGINE_OPTIONS)) if ok]
    if not found:
        opts = sorted({o for p in policies for o in policy_class(p.name).option_docs})
        gps = sorted({g for s in scenarios if s.generator for g in GENERATORS[s.generator].params})
        raise c.fail(key, f"{name!r} is not an option of the campaign's policies ({', '.join(opts) or 'none'}), "
                          f"a parameter of its generators ({', '.join(gps) or 'none'}) or an engine option "
                          f"({', '.join(ENGINE_OPTIONS)})")
    if len(found) > 1:
        raise c.fail(key, f"{name!r} is both a {found[0]} and a {found[1]} setting; "
                          f"write {found[0]}.{name} or {found[1]}.{name}")
    return found[0], name


#: Columns of a campaign's runs table besides its axes (:mod:`schedulers.campaign.columns`, the
#: summary metrics): an axis may not take one of these names (``simulator`` may: that axis is the
#: column itself).
RESULT_COLUMNS = frozenset({*FIRST_COLUMNS, *RUN_COLUMNS, *RunSummary.COLUMNS, *LAST_COLUMNS}
                           - {SIMULATOR})


def _axis_values(c: _Checker, value: Any, key: str) -> list:
    c.typed(value, list, key, "a non-empty list of values")
    if not value:
        raise c.fail(key, "empty axis: no run")
    for i, v in enumerate(value):
        c.plain(v, f"{key}[{i}]")
        if isinstance(v, (list, dict)):
            raise c.fail(f"{key}[{i}]", f"axis values must be strings, numbers or booleans, got {_show(v)}")
    return value


def _distinct(c: _Checker, rows: list[tuple], key: str, zipped: bool = False) -> None:
    """Refuse an axis (or zip group) that gives one value twice: ``1`` and ``1.0`` are one load
    to the simulation, two runs to the campaign, and one group of twice the runs to its tables."""
    seen: dict[tuple, int] = {}
    for i, row in enumerate(rows):
        norm = tuple(("n", float(v)) if isinstance(v, (int, float)) and not isinstance(v, bool) else (type(v).__name__, v)
                     for v in row)
        if norm in seen:
            if zipped:
                raise c.fail(key, f"values number {i} {row!r} repeat values number {seen[norm]}; each combination "
                                  "is given once")
            raise c.fail(f"{key}[{i}]", f"{row[0]!r} repeats the value {key}[{seen[norm]}]; each value is given once")
        seen[norm] = i


def _sets_option(options: dict[str, Any], opt: str) -> bool:
    """Whether a [[policy]]'s ``options`` set ``opt`` (``NAME``, or ``NAME.KEY``: one key of a
    mapping option)."""
    head, _, sub = opt.partition(".")
    if not sub:
        return opt in options
    value = options.get(head)
    return isinstance(value, dict) and sub in value


def _axes(c: _Checker, data: dict, policies: list[PolicyEntry], scenarios: list[ScenarioEntry]) -> list[Axis]:
    axes: list[Axis] = []
    names: set[str] = set()
    targets: dict[tuple[str, str], str] = {}   # (kind, option) -> the axis that sets it

    def add(group: dict, where: str, zipped: bool) -> None:
        ns, kinds, keys, cols = [], [], [], []
        for name, value in group.items():
            key = f"{where}.{name}"
            if name in names:
                raise c.fail(key, "this axis is given twice")
            names.add(name)
            kind, opt = _route(c, name, key, policies, scenarios)
            if kind == "policy" and opt == "seed":   # (recorded as an axis, replaced by the run's seed)
                raise c.fail(key, SEED_GIVEN)
            if name in RESULT_COLUMNS:
                raise c.fail(key, f"{name!r} names a column the results table already has (a run metric or "
                                  f"field); write \"{kind}.{name}\" for this axis")
            # two spellings of one setting ("load" and "scenario.load", or a mapping option and
            # one of its keys): the later would silently replace the earlier in every run
            for (k2, o2), other in targets.items():
                if k2 == kind and (o2 == opt or (kind == "policy" and (opt.split(".", 1)[0] == o2
                                                                       or o2.split(".", 1)[0] == opt))):
                    raise c.fail(key, f"sets the same {kind} {'option' if kind != 'scenario' else 'parameter'} "
                                      f"{opt!r} as axis {other!r}: give it in one place")
            targets[(kind, opt)] = name
            ns.append(name)
            kinds.append(kind)
            keys.append(opt)
            cols.append(_axis_values(c, value, key))
            fixed = [f"policy[{i}].options" for i, p in enumerate(policies) if _sets_option(p.options, opt)] \
                if kind == "policy" \
                else [f"scenario[{i}].params" for i, s in enumerate(scenarios) if opt in s.params] \
                if kind == "scenario" else ([opt] if opt in data else [])
            if fixed:
                raise c.fail(key, f"also set in {fixed[0]}: give it in one place")
        if zipped:
            if len({len(col) for col in cols}) > 1:
                raise c.fail(where, "zip axes must have the same length, got "
                                    + ", ".join(f"{n}: {len(col)}" for n, col in zip(ns, cols)))
            _distinct(c, list(zip(*cols)), where, zipped=True)
            axes.append(Axis(tuple(ns), tuple(kinds), tuple(keys), tuple(zip(*cols))))
        else:
            for n, k, o, col in zip(ns, kinds, keys, cols):
                _distinct(c, [(v,) for v in col], f"{where}.{n}")
                axes.append(Axis((n,), (k,), (o,), tuple((v,) for v in col)))

    if "axes" in data:
        add(c.typed(data["axes"], dict, "axes", "a table of name = [values]"), "axes", False)
    z = data.get("zip")
    if z is not None:
        groups = [z] if isinstance(z, dict) else c.typed(z, list, "zip", "a table, or an array of tables")
        for i, g in enumerate(groups):
            where = "zip" if isinstance(z, dict) else f"zip[{i}]"
            c.typed(g, dict, where, "a table of name = [values]")
            if not g:
                raise c.fail(where, "empty zip group")
            add(g, where, True)
    return axes
