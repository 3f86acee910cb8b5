"""Inputs real Batsim 4.2.1 runs without a word although they make little sense: the engine runs
them as Batsim does (the results are Batsim's), and ``gridsched run`` / ``gridsched engine`` print
one warning line for each, so that a researcher learns why a number looks wrong.

* Communications (``com`` of a ``parallel_homogeneous``, ``parallel_homogeneous_total`` or
  ``parallel`` profile, between two different hosts; the bytes of the IO profiles
  ``parallel_homogeneous_pfs`` and ``data_staging``) on a platform without network links: in a
  ``Full`` or ``Vivaldi`` zone without links SimGrid 3.32 finds an empty route between two hosts,
  and an empty route takes no time, so the bytes cost nothing (:mod:`.execution`, "Communications
  on ``Full`` zones without links"); only the computation is timed.
* A pstate whose full-load power (``AllCores`` of ``wattage_per_state``) is below its idle or
  epsilon power: SimGrid's host-energy plugin then charges a busy host less than an idle one
  (:mod:`schedulers.core.power`).
* A speed, bandwidth or latency written without its unit (``speed="1e9"``, ``bw="1e9"``):
  SimGrid 3.32 (``xbt_parse_get_value_with_unit``, ``src/xbt/xbt_parse_units.cpp``) reads it in
  its default unit, flops/s, bytes/s (not bits) or seconds, and only logs "Deprecated unit-less
  value", which ``gridsched`` would not show otherwise.
"""

from __future__ import annotations

from typing import Any

from .iotasks import IO_PROFILES
from .platform import PlatformSpec

__all__ = ["input_warnings"]


def _between_hosts(profile: dict[str, Any]) -> bool:
    """Whether ``profile`` sends bytes from a host to another (not only to itself)."""
    kind = profile.get("type")
    if kind in ("parallel_homogeneous", "parallel_homogeneous_total"):
        com = profile.get("com", 0)
        return isinstance(com, (int, float)) and com > 0
    if kind == "parallel_homogeneous_pfs":   # to and from a storage host (iotasks)
        return any(isinstance(v, (int, float)) and v > 0 for v in (profile.get("bytes_to_read"), profile.get("bytes_to_write")))
    if kind == "data_staging":
        nb = profile.get("nb_bytes")
        return isinstance(nb, (int, float)) and nb > 0 and profile.get("from") != profile.get("to")
    if kind == "parallel":
        cpu, com = profile.get("cpu"), profile.get("com")
        if not isinstance(cpu, list) or not isinstance(com, list):
            return False
        n = len(cpu)
        return any(v > 0 for k, v in enumerate(com) if isinstance(v, (int, float)) and k // n != k % n)
    return False


#: Attributes read with a unit (:data:`.platform_build.UNIT_ATTRIBUTES`), by what they are:
#: (default unit, what it means).
_UNITS = {"speed": ("f", "flops/s"), "bandwidth": ("Bps", "bytes/s, not bits/s"), "bw": ("Bps", "bytes/s, not bits/s"),
          "bb_bw": ("Bps", "bytes/s, not bits/s"), "loopback_bw": ("Bps", "bytes/s, not bits/s"),
          "limiter_link": ("Bps", "bytes/s, not bits/s"), "latency": ("s", "seconds"), "lat": ("s", "seconds"),
          "bb_lat": ("s", "seconds"), "loopback_lat": ("s", "seconds")}


def input_warnings(spec: PlatformSpec, workloads: list[Any], energy: bool) -> list[str]:
    """One line per oddity of the inputs (see the module docstring), each naming the file and the
    profile or host; [] when there is none.

    Args:
        spec: the platform as read (its values without a unit: :attr:`.PlatformSpec.unitless`).
        workloads: the engine's :class:`~.workload.Workload` objects (``path``, ``profiles``: the
            profiles the jobs use).
        energy: whether the energy model is on (powers are read only then, as in Batsim).
    """
    lines: list[str] = []
    for attr, values in spec.unitless.items():   # (recorded while the platform was read)
        unit, meaning = _UNITS[attr]
        more = f" (and {len(values) - 1} more)" if len(values) > 1 else ""
        lines.append(f"{spec.source}: {attr}={values[0]!r}{more} has no unit: SimGrid 3.32 (and real Batsim 4.2.1) "
                     f"reads it in {unit} ({meaning}) and only logs \"Deprecated unit-less value\"; write the unit")
    if not spec.has_network:
        for w in workloads:
            names = sorted(name for name, p in w.profiles.items() if isinstance(p, dict) and _between_hosts(p)
                           and p.get("type") not in IO_PROFILES)
            io = sorted(name for name, p in w.profiles.items() if isinstance(p, dict) and _between_hosts(p)
                        and p.get("type") in IO_PROFILES)
            if io:
                more = f" (and {len(io) - 1} more)" if len(io) > 1 else ""
                lines.append(f"{w.path}: IO profile {io[0]!r}{more} moves bytes to or from storage hosts, but "
                             f"{spec.source} has no network links: SimGrid (and real Batsim 4.2.1) moves them in no "
                             "time")
            if names:
                more = f" (and {len(names) - 1} more)" if len(names) > 1 else ""
                lines.append(f"{w.path}: profile {names[0]!r}{more} sends bytes between hosts ('com'), but "
                             f"{spec.source} has no network links: SimGrid (and real Batsim 4.2.1) sends them in no "
                             "time, only the computation is timed")
    if energy:
        # a pstate given as S and as OFF or ON of its triple ends a transition pstate (platform.
        # classify_sleep_pstates): Batsim reads it without a word, and a switch to it never ends
        own = []   # (host, its lowest such pstate)
        for h in spec.compute:
            both = [s for s in h.sleep_switch if h.pstate_kinds.get(s) == "transition"]
            if both:
                own.append((h, min(both)))
        if own:
            h, s = own[0]
            more = f" (and {len(own) - 1} more)" if len(own) > 1 else ""
            lines.append(f"{spec.source}: host {h.name!r}{more}: sleep_pstates {h.properties.get('sleep_pstates')!r}: "
                         f"pstate {s} is a sleep pstate and a virtual transition one, which no request can reach: "
                         "real Batsim 4.2.1 runs it, and a switch to it never completes")
        odd = [(h.name, k, r) for h in spec.compute for k, r in enumerate(h.power or ())
               if r.all_cores < max(r.idle, r.epsilon)]
        if odd:
            name, k, r = odd[0]
            more = f" (and {len(odd) - 1} more)" if len(odd) > 1 else ""
            lines.append(f"{spec.source}: host {name!r} pstate {k}{more}: wattage_per_state gives a full-load power "
                         f"of {r.all_cores:g} W, below its idle ({r.idle:g} W) or epsilon ({r.epsilon:g} W) power: "
                         "SimGrid (and real Batsim 4.2.1) charges a busy host less than an idle one")
    return lines
