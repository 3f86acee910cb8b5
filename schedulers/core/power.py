"""What a host draws, read from its power states as SimGrid's host-energy plugin reads them.

Policies that reason about power (EHOSEP's per-user limits) must use the same model as the
simulator that runs them, not a guess. Batsim 4.2.1 forwards every SimGrid host property in
SIMULATION_BEGINS (``compute_resources[i].properties``, see the recorded transcripts), so the
scheduler sees the ``wattage_per_state`` the energy plugin reads.

The model (SimGrid 3.32, ``src/plugins/host_energy.cpp``, the engine's
:mod:`schedulers.engine.platform`):

* ``wattage_per_state`` holds one ``Idle:Epsilon:AllCores`` triple per pstate, comma-separated, in
  watts; ``Idle:AllCores`` means Epsilon = Idle (``HostEnergy::init_watts_range_list``).
* A host of ``C`` cores with a busy load of ``L`` cores draws ``Epsilon + (AllCores - Epsilon) x
  min(L / C, 1)`` W when ``L > 0``, ``Idle`` when ``L = 0``; at a pstate of speed 0 the plugin
  takes the host as fully loaded (``L = C``) whatever runs (``get_current_watts_value``).
* A Batsim job puts one *part* (one SimGrid execution) on each host of its allocation
  (``parallel_homogeneous``, ``parallel_homogeneous_total``; ``parallel`` one per listed host), and
  SimGrid's L07 model bounds each part at one core (``L07Action::calculate_cpu_bound``): a job's
  part keeps one core busy when it has flops to compute, none when it has none. A ``delay`` job
  computes nothing: its hosts draw ``Idle``.

The *full-load* power of a host is ``AllCores`` of its nominal pstate (the fastest computation
pstate, the same pstate :func:`schedulers.core.ownership.host_power` takes the speed from).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cnumbers import parse_double
from .model import Host, PolicyInputError

__all__ = ["MAX_WATTS", "PowerError", "PowerRangeError", "PowerRange", "watts", "parse_watt_ranges", "watt_ranges", "nominal_pstate",
           "full_load_watts", "draw", "busy_parts", "csp_coefficient"]

#: Largest power accepted in ``wattage_per_state`` and ``wattage_off`` (W): a gigawatt per host.
#: A NaN, infinite or negative power would give NaN or negative energy, and the bound keeps every
#: energy finite: watts x seconds x hosts stays far below the largest double.
MAX_WATTS = 1e9


class PowerError(PolicyInputError):
    """A host without usable ``wattage_per_state`` (the message names the host)."""


class PowerRangeError(ValueError):
    """A power SimGrid 3.32 reads but outside ``[0, MAX_WATTS]`` (NaN, infinite, negative, above a
    gigawatt): real Batsim runs with it and writes NaN, infinite or negative energies."""


@dataclass(slots=True, frozen=True)
class PowerRange:
    """Power of one pstate (W): idle, epsilon (all cores at near-zero load), all cores busy."""

    idle: float
    epsilon: float
    all_cores: float

    def power(self, load: float, cores: int) -> float:
        """Power (W) with ``load`` cores busy (fractional allowed) out of ``cores`` (SimGrid's
        formula, module docstring)."""
        if load <= 0:
            return self.idle
        return self.epsilon + (self.all_cores - self.epsilon) * min(load / cores, 1.0)


def watts(pstate_power: PowerRange, speed: float, busy_cores: float, cores: int) -> float:
    """Power (W) the energy plugin charges at a pstate of ``pstate_power`` and ``speed``
    (flops/s) with ``busy_cores`` busy out of ``cores`` (``HostEnergy::get_current_watts_value``,
    SimGrid 3.32 ``src/plugins/host_energy.cpp``): :meth:`PowerRange.power`, except that a pstate
    of speed 0 counts as fully loaded whatever runs ("That's arbitrary but it avoids a NaN"):
    ``Epsilon + (AllCores - Epsilon) x 1``. The engine's hosts and :func:`draw` both use it."""
    if speed <= 0:
        busy_cores = cores
    return pstate_power.power(busy_cores, cores)


def parse_watt_ranges(raw: str) -> list[PowerRange]:
    """The :class:`PowerRange` of each pstate in a ``wattage_per_state`` value, pstate = index
    (``Idle:AllCores`` means Epsilon = Idle: SimGrid 3.32 ``HostEnergy::init_watts_range_list``).

    Each power is read as SimGrid reads it (``xbt_str_parse_double``, :mod:`.cnumbers`: decimal
    or hexadecimal, ``1e2``, ``0x1p4``), blanks around it allowed.

    Raises:
        ValueError: an entry that is not 2 or 3 numbers; :class:`PowerRangeError` (a ValueError)
            for a power outside ``[0, MAX_WATTS]`` (NaN, infinite, negative), which SimGrid reads.
            The message names the entry (callers prefix the file and host).
    """
    out = []
    for i, chunk in enumerate(raw.split(",")):
        parts = [p.strip() for p in chunk.split(":")]
        if len(parts) not in (2, 3):
            raise ValueError(f"wattage_per_state entry {i} is {chunk.strip()!r}; "
                             "expected 'Idle:AllCores' or 'Idle:Epsilon:AllCores'")
        read = [parse_double(p) for p in parts]   # (as strtod: 1e2, 0x1p4, .5, +7; not 1_000)
        vals = [v for v in read if v is not None]
        if len(vals) != len(read):
            raise ValueError(f"non-numeric wattage_per_state entry {chunk!r}")
        if not all(0 <= v <= MAX_WATTS for v in vals):  # also refuses NaN
            raise PowerRangeError(f"wattage_per_state entry {i} is {chunk.strip()!r}; "
                                  f"powers must be numbers of watts >= 0 and <= {MAX_WATTS:g}")
        if len(vals) == 2:
            vals = [vals[0], vals[0], vals[1]]
        out.append(PowerRange(*vals))
    return out


_CACHE: dict[str, tuple[PowerRange, ...]] = {}


def watt_ranges(host: Host) -> tuple[PowerRange, ...]:
    """The :class:`PowerRange` (W) of each pstate of ``host``, pstate = index.

    Raises:
        PowerError: no ``wattage_per_state`` property, or a bad entry (:func:`parse_watt_ranges`;
            one line naming the host).
    """
    raw = host.properties.get("wattage_per_state")  # SimGrid 3.32's only name (not watt_per_state)
    if not raw:
        raise PowerError(f"host {host.name!r} (id {host.id}) has no 'wattage_per_state' property: this policy "
                         "needs the platform's power states (SimGrid's host-energy plugin)")
    cached = _CACHE.get(raw)
    if cached is not None:
        return cached
    try:
        result = tuple(parse_watt_ranges(raw))
    except ValueError as exc:
        raise PowerError(f"host {host.name!r} (id {host.id}): {exc}") from None
    if len(_CACHE) < 4096:
        _CACHE[raw] = result
    return result


def nominal_pstate(host: Host) -> int:
    """The fastest computation pstate of ``host`` (lowest index among equals); sleep pstates
    and their switching pstates (every triple of ``sleep_pstates``) excluded.

    Raises:
        HostInfoUnknown: speeds unknown (real Batsim without the platform file).
    """
    sleep = host.special_pstates
    speeds = host.speeds
    candidates = [i for i in range(len(speeds)) if i not in sleep] or list(range(len(speeds)))
    return max(candidates, key=lambda i: (speeds[i], -i))


def full_load_watts(host: Host) -> float:
    """``AllCores`` of the host's nominal pstate (W): what it draws with every core busy.

    Raises:
        PowerError: no usable ``wattage_per_state``, or fewer entries than pstates.
    """
    ranges = watt_ranges(host)
    p = nominal_pstate(host)
    if p >= len(ranges):
        raise PowerError(f"host {host.name!r} (id {host.id}) has {len(host.speeds)} pstates but "
                         f"{len(ranges)} wattage_per_state entries")
    return ranges[p].all_cores


def draw(host: Host, busy_cores: float, pstate: int | None = None) -> float:
    """Power (W) ``host`` draws with ``busy_cores`` busy cores at ``pstate`` (default: its
    current one), SimGrid's formula (module docstring).

    Raises:
        PowerError: no usable ``wattage_per_state`` for that pstate.
        HostInfoUnknown: cores unknown.
    """
    ranges = watt_ranges(host)
    p = host.pstate if pstate is None else pstate
    if not 0 <= p < len(ranges):
        raise PowerError(f"host {host.name!r} (id {host.id}): pstate {p} has no wattage_per_state entry")
    speed = host.speeds[p] if host.speeds_known and p < len(host.speeds) else 1.0   # (unknown: not 0)
    if busy_cores <= 0 and speed > 0:
        return ranges[p].idle   # (the host's cores need not be known)
    return watts(ranges[p], speed, busy_cores, host.cores)


def busy_parts(profile: dict[str, Any] | None, index: int) -> int:
    """Cores a job with ``profile`` keeps busy on the ``index``-th host of its allocation: 1 for a
    part with flops to compute, 0 for ``delay``, the IO profiles (``parallel_homogeneous_pfs``,
    ``data_staging``: bytes only) and a ``parallel`` part of 0 flops. Unknown
    profiles (not forwarded, ``composed``) count 1: a computing part."""
    if not profile:
        return 1
    t = profile.get("type")
    if t in ("delay", "parallel_homogeneous_pfs", "data_staging"):   # (the IO profiles compute nothing)
        return 0
    if t in ("parallel_homogeneous", "parallel_homogeneous_total"):
        return 1 if float(profile.get("cpu", 0.0)) > 0 else 0
    if t == "parallel":
        cpu = profile.get("cpu", ())
        try:
            return 1 if float(cpu[index]) > 0 else 0
        except (IndexError, TypeError, ValueError):
            return 1
    return 1


def csp_coefficient(share_w: float, system_w: float, share_flops: float, system_flops: float) -> float:
    """``CSP = (ConsumoPorcao / ConsumoSistema) x (PoderSistema / PoderPorcao)`` (003 §3.1): full-load
    watts of the share and of the grid (W), nominal powers of the share and of the grid (flops/s);
    dimensionless. Needs ``system_w > 0`` and ``share_flops > 0`` (callers decide what a grid
    without watts or a user without hosts gets)."""
    return share_w / system_w * (system_flops / share_flops)
