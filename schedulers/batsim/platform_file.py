"""Host data Batsim does not send, filled in from the platform file Batsim runs on.

Batsim 4.2.1's SIMULATION_BEGINS gives each compute resource its ``id``, ``name``, ``state``,
``properties`` and ``zone_properties``, but neither its speeds per pstate, nor its cores, nor its
initial pstate (``shared/batsim-4.2.1/transcripts``). The embedded engine gives a policy all of
them; so that a policy sees the same hosts behind real Batsim, the transports (``gridsched serve
--platform FILE``, the pybatsim option ``"platform"``) read the same platform file with the
engine's own reader (:func:`schedulers.engine.platform.read_platform`) and fill them in.

Nor does it say whether Batsim runs its energy model (``-E``), without which Batsim ignores the
hosts' ``sleep_pstates``: the transports take it from their caller (``gridsched serve --energy`` or
``--no-energy``, the pybatsim option ``"energy"``) and mark the hosts with
:func:`set_energy_model`.

Hosts are matched by **name** (Batsim numbers compute resources in lexicographic order of host
names and leaves the master host out; the reader does the same). Before anything is filled the
file is checked against what Batsim announced: the same compute host names, and for each host the
same ``properties`` and ``zone_properties``. Any difference raises :class:`PlatformMismatch`,
whose one-line message names the file and the host.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterable

from ..core.events import Event, SimulationBegins
from ..core.model import Host

if TYPE_CHECKING:
    from ..engine.platform import HostSpec

__all__ = ["PlatformFile", "PlatformMismatch", "set_energy_model"]


class PlatformMismatch(ValueError):
    """The platform file is not the platform Batsim announced (hosts or properties differ).

    Attributes:
        source: the platform file.
        host: name of the (first) host that differs.
    """

    def __init__(self, message: str, *, source: str, host: str) -> None:
        super().__init__(message)
        self.source = source
        self.host = host


def _show(value: str | None) -> str:
    return "absent" if value is None else repr(value)


class PlatformFile:
    """A SimGrid platform file read for its compute hosts, to complete Batsim's SIMULATION_BEGINS.

    Args:
        path: the platform XML (the file given to ``batsim -p``).
        master_host: Batsim's master host name (``batsim --master-host``, default ``master_host``);
            it is not a compute resource.

    Attributes:
        source: the path as given (used in messages).
        hosts: the compute hosts of the file by name (:class:`~schedulers.engine.platform.HostSpec`).

    Raises:
        schedulers.inputs.errors.PlatformError: the file cannot be read or is malformed (the
            message names the file).
    """

    def __init__(self, path: str | os.PathLike[str], master_host: str = "master_host") -> None:
        from ..engine.platform import read_platform  # only when a platform file is given

        self.source = os.fspath(path)
        spec = read_platform(path, master_host)
        self.hosts: dict[str, HostSpec] = {h.name: h for h in spec.compute}

    def __repr__(self) -> str:
        return f"PlatformFile({self.source!r}, {len(self.hosts)} compute hosts)"

    def _mismatch(self, host: str, problem: str, more: int) -> PlatformMismatch:
        tail = f" (and {more} other difference{'s' if more > 1 else ''})" if more else ""
        return PlatformMismatch(
            f"platform file {self.source!r} does not match the platform Batsim announced: {problem}{tail}; "
            f"give the file Batsim was started with (batsim -p)", source=self.source, host=host)

    def differences(self, hosts: Iterable[Host]) -> list[tuple[str, str]]:
        """Every difference between the file and the compute resources Batsim announced.

        Returns:
            ``[(host name, what differs), ...]``: announced hosts missing from the file (in id
            order), then file hosts Batsim did not announce (by name), then differing properties
            and zone properties (by host id, then key). Empty when the file matches.
        """
        hosts = list(hosts)
        out: list[tuple[str, str]] = []
        announced = {h.name for h in hosts}
        for h in hosts:
            if h.name not in self.hosts:
                out.append((h.name, f"Batsim announced compute host {h.name!r} (id {h.id}), which the file "
                                    f"does not have"))
        for name in sorted(set(self.hosts) - announced):
            out.append((name, f"the file has compute host {name!r}, which Batsim did not announce "
                              f"({len(hosts)} compute hosts announced)"))
        for h in hosts:
            spec = self.hosts.get(h.name)
            if spec is None:
                continue
            for what, got, ref in (("property", h.properties, spec.properties),
                                   ("zone property", h.zone_properties, spec.zone_properties)):
                for key in sorted(set(got) | set(ref)):
                    if got.get(key) != ref.get(key):
                        out.append((h.name, f"host {h.name!r}: {what} {key!r} is {_show(ref.get(key))} in the file "
                                            f"but {_show(got.get(key))} from Batsim"))
        return out

    def fill(self, hosts: Iterable[Host]) -> None:
        """Check ``hosts`` (Batsim's compute resources) against the file, then set each host's
        ``speeds``, ``cores`` and ``pstate`` (the initial pstate) from the file.

        Ids, names, states and properties stay as Batsim sent them.

        Raises:
            PlatformMismatch: the file and Batsim disagree (nothing is filled); the message names
                the file, the first differing host and how many other differences there are.
        """
        hosts = list(hosts)
        diffs = self.differences(hosts)
        if diffs:
            name, problem = diffs[0]
            raise self._mismatch(name, problem, len(diffs) - 1)
        for h in hosts:
            spec = self.hosts[h.name]
            h.speeds = list(spec.speeds)
            h.cores = spec.cores
            h.pstate = spec.pstate

    def fill_events(self, events: Iterable[Event]) -> None:
        """:meth:`fill` the compute resources of every SIMULATION_BEGINS among ``events``
        (decoded events of one Batsim message, before the policy sees them).

        Raises:
            PlatformMismatch: see :meth:`fill`.
        """
        for ev in events:
            if isinstance(ev, SimulationBegins):
                self.fill(ev.compute_resources)


def set_energy_model(events: Iterable[Event], energy: bool | None) -> None:
    """Mark the compute and storage resources of every SIMULATION_BEGINS among ``events``
    (decoded events of one Batsim message, before the policy sees them) with whether Batsim runs
    its energy model: :attr:`~schedulers.core.model.Host.energy`. Batsim 4.2.1 reads a host's
    ``sleep_pstates`` only with ``-E`` (``Machines::create_machines``, ``src/machines.cpp``) and
    its SIMULATION_BEGINS does not say whether ``-E`` was given.

    Args:
        events: the events of one message.
        energy: True (``batsim -E``), False (without), or None: unknown, nothing is changed.
    """
    if energy is None:
        return
    for ev in events:
        if isinstance(ev, SimulationBegins):
            for h in (*ev.compute_resources, *ev.storage_resources):
                h.energy = energy
