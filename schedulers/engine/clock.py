"""The simulation clock: the current time of the run, shared by the engine's components.

:class:`Clock` owns ``now`` (s), the instant the engine is playing: SimGrid's clock as Batsim's
actors read it (``simgrid::s4u::Engine::get_clock``), the last instant at which something
happened (``live``: where SimGrid's clock stops when what is left are stale timers) and the
run's final clock when it ends later than its last instant (``end``: the scheduler's last reply
is later, SIMULATION_ENDS acknowledged after it). Only the engine's main loop moves ``now``
(:meth:`.server.Server.next_instant`, from the event queue of :mod:`.queue`,
:mod:`.steps` or :mod:`.lazysteps`); the components (:class:`.hosts.Machines`, the executions,
the server) read it. It asks the others for nothing.
"""

from __future__ import annotations

import math


def shown_time(t: float) -> str:
    """A time (s) as the engine's messages print it: with the 6 decimals Batsim prints times with
    (its ``"%f"``, what a scheduler reads), trailing zeros dropped, so that the engine's internal
    offsets (SimGrid's 1e-10 s messages, float rounding) do not show: ``3.0000000001`` -> ``"3"``,
    ``0.30000000000000004`` -> ``"0.3"``, ``20.1244571`` -> ``"20.124457"``. Not finite: its repr."""
    if not math.isfinite(t):
        return repr(t)
    text = f"{t:.6f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


class Clock:
    """The current simulation time.

    Attributes:
        now: the current instant (s, a float >= 0), 0 at the start of the run.
        live: the last instant at which something happened (s): a job, a host, a message or a
            timer changed (stage ends and latencies may be stale and do not count).
        end: the run's final clock (s) when it is later than its last instant, else None.
    """

    __slots__ = ("now", "live", "end")

    def __init__(self) -> None:
        self.now = 0.0
        self.live = 0.0
        self.end: float | None = None

    def mark_live(self) -> None:
        """Something happened now (:attr:`live`)."""
        self.live = self.now

    def end_time(self) -> float:
        """The run's end time (s): :attr:`end` if set, else :attr:`now`."""
        return self.now if self.end is None else self.end
