"""Play Batsim's side of the protocol over ZeroMQ, so any Batsim scheduler can drive the engine.

Batsim connects a REQ socket to the scheduler's REP socket (default ``tcp://localhost:28000``) and
speaks first; every message is answered by exactly one reply. :class:`ZmqPort` does the same,
encoding messages exactly as Batsim 4.2.1 writes them (:func:`schedulers.batsim.protocol.encode_message`).
"""

from __future__ import annotations

import math
import time

import zmq

from ..batsim.protocol import decode_decisions, encode_message
from ..core.events import Event
from .ports import Reply
from .simulator import EngineError


class SchedulerUnreachable(EngineError):
    """The scheduler did not answer within the timeout (is it running and bound to the endpoint?)."""


#: Longest single wait on the socket (s): long timeouts are waited in slices of this length, so a
#: timeout of any size is valid for ZMQ's millisecond ``int`` and Ctrl-C is seen between slices.
_POLL_SLICE_S = 1.0


def check_timeout(timeout: float | None, what: str = "timeout") -> float | None:
    """A reply timeout as :class:`ZmqPort` takes it: seconds > 0, or None to wait forever.

    Returns:
        ``timeout`` (a float), or None for None and ``inf``.

    Raises:
        ValueError: 0, negative or NaN (one line naming ``what``).
    """
    if timeout is None or timeout == math.inf:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"{what} must be a number of seconds > 0 (or None / inf to wait forever), got {timeout!r}")
    return float(timeout)


class ZmqPort:
    """A :class:`~schedulers.engine.simulator.SchedulerPort` over a ZeroMQ REQ socket.

    Args:
        endpoint: the scheduler's address, e.g. ``tcp://localhost:28000`` (Batsim's ``-s``).
        timeout: seconds to wait for each reply (> 0; None or ``inf``: forever, like Batsim).

    Raises:
        ValueError: at construction, a timeout of 0, negative or NaN (:func:`check_timeout`).
        SchedulerUnreachable: no reply within ``timeout``.
        EngineError: the reply is not valid protocol.

    A reply is returned as a :class:`~schedulers.engine.ports.Reply` with the scheduler's ``now``
    and the decisions' own timestamps, so that decision delays are played as Batsim plays them
    (:mod:`schedulers.engine.ports`).
    """

    def __init__(self, endpoint: str = "tcp://localhost:28000", timeout: float | None = 60.0) -> None:
        self.endpoint = endpoint
        self.timeout = check_timeout(timeout)
        self._ctx: zmq.Context = zmq.Context.instance()
        self._sock = self._ctx.socket(zmq.REQ)
        self._sock.setsockopt(zmq.LINGER, 0)
        self._sock.connect(endpoint)

    def __str__(self) -> str:
        return f"the scheduler at {self.endpoint}"

    def exchange(self, now: float, events: list[Event]) -> Reply:
        self._sock.send_string(encode_message(now, events))
        if not self._wait():
            raise SchedulerUnreachable(f"no reply from the scheduler at {self.endpoint} within {self.timeout} s "
                                       f"(simulation time {now:.6f})")
        raw = self._sock.recv()
        try:
            reply_now, decisions = decode_decisions(raw)
        except ValueError as exc:
            raise EngineError(f"invalid reply from the scheduler at t={now:.6f}: {exc}") from None
        return Reply(reply_now, decisions)

    def _wait(self) -> bool:
        """Wait for the reply, at most :attr:`timeout` seconds (forever when None): True once it
        can be read."""
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while True:
            left = _POLL_SLICE_S if deadline is None else min(_POLL_SLICE_S, deadline - time.monotonic())
            if left <= 0:
                return False
            if self._sock.poll(max(1, int(left * 1000))):
                return True

    def close(self) -> None:
        """Close the socket (the engine does not wait for unsent messages)."""
        self._sock.close(0)
