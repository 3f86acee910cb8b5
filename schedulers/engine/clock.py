"""The simulation clock: the current time of the run, shared by the engine's components.

:class:`Clock` owns ``now`` (s), the instant the engine is playing: SimGrid's clock as Batsim's
actors read it (``simgrid::s4u::Engine::get_clock``). Only the engine's main loop moves it
(:meth:`.server.ServerMixin._next_instant`, from the event queue of :mod:`.queue`,
:mod:`.steps` or :mod:`.lazysteps`); the components (:class:`.hosts.Machines`, the executions,
the server) read it.
"""

from __future__ import annotations


class Clock:
    """The current simulation time.

    Attributes:
        now: the current instant (s, a float >= 0), 0 at the start of the run.
    """

    __slots__ = ("now",)

    def __init__(self) -> None:
        self.now = 0.0
