"""ZeroMQ server running one :class:`~schedulers.core.policy.Policy` as Batsim's external scheduler.

Batsim 4.x protocol (Batsim documentation, "Protocol"; observed on Batsim 4.2.1, see
``shared/batsim-4.2.1/README.md``): the scheduler binds a ZMQ REP socket (default
``tcp://*:28000``), Batsim connects with a REQ socket and speaks first; every Batsim message gets
exactly one reply; after the reply to the message holding SIMULATION_ENDS the run is over.

Batsim waits forever for a scheduler, and a scheduler would wait forever for a Batsim that never
comes or died mid-run: :func:`serve` gives up with :class:`SchedulerTimeout` instead.

Command line (registered by :func:`add_serve_parser`)::

    gridsched serve --policy NAME [--socket tcp://*:28000] [--policy-options JSON|@file.json]
                    [--connect-timeout S] [--idle-timeout S]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import zmq

from ..core.events import SimulationEnds
from ..core.policy import Policy, PolicyError
from .protocol import ProtocolError, decode_message, encode_decisions

__all__ = [
    "DEFAULT_ENDPOINT",
    "SchedulerTimeout",
    "ServeStats",
    "add_serve_parser",
    "handle_raw",
    "run_serve",
    "serve",
]

#: Where Batsim connects by default (its ``--socket-endpoint`` default is ``tcp://localhost:28000``).
DEFAULT_ENDPOINT = "tcp://*:28000"

#: How long (ms) the final reply may take to leave the socket when the run ends normally.
_FINAL_LINGER_MS = 2000

#: Longest single poll (s), so that Ctrl-C is handled promptly even with no timeout.
_POLL_SLICE = 0.5


class SchedulerTimeout(TimeoutError):
    """Batsim did not connect in time, or stopped talking mid-run.

    Attributes:
        endpoint: the endpoint the server was bound to.
        waited: seconds waited for the message that never came.
        last_now: ``now`` of the last Batsim message received (None before the first one).
        phase: ``"connect"`` (no message at all yet) or ``"idle"`` (mid-run).
    """

    def __init__(self, message: str, *, endpoint: str, waited: float, last_now: float | None, phase: str) -> None:
        super().__init__(message)
        self.endpoint = endpoint
        self.waited = waited
        self.last_now = last_now
        self.phase = phase


@dataclass
class ServeStats:
    """What one :func:`serve` run did.

    Attributes:
        endpoint: the endpoint bound (the actual one, e.g. with the port chosen for ``tcp://*:*``).
        messages: Batsim messages received and answered.
        events: events in those messages.
        decisions: decisions sent back.
        decision_times: seconds spent in ``policy.decide`` for each message, in order.
        last_now: ``now`` of the last message (simulation seconds), None if none arrived.
        wall_time: seconds from binding to the end.
        ended: True when the run ended with SIMULATION_ENDS.
    """

    endpoint: str = ""
    messages: int = 0
    events: int = 0
    decisions: int = 0
    decision_times: list[float] = field(default_factory=list)
    last_now: float | None = None
    wall_time: float = 0.0
    ended: bool = False

    @property
    def total_decision_time(self) -> float:
        """Seconds spent deciding, over all messages."""
        return float(sum(self.decision_times))

    @property
    def mean_decision_time(self) -> float:
        """Mean seconds per message spent deciding (0 when no message)."""
        return self.total_decision_time / len(self.decision_times) if self.decision_times else 0.0

    @property
    def max_decision_time(self) -> float:
        """Longest ``decide`` call (s), 0 when no message."""
        return max(self.decision_times, default=0.0)


@dataclass
class _Exchange:
    reply: str
    now: float
    n_events: int
    n_decisions: int
    decide_time: float
    ended: bool


def _exchange(policy: Policy, raw: bytes | str) -> _Exchange:
    now, events = decode_message(raw)
    t0 = time.perf_counter()
    decisions = policy.decide(now, events)
    dt = time.perf_counter() - t0
    reply = encode_decisions(now, decisions)
    ended = any(isinstance(ev, SimulationEnds) for ev in events)
    return _Exchange(reply, now, len(events), len(decisions), dt, ended)


def handle_raw(policy: Policy, raw: bytes | str) -> str:
    """One protocol exchange without sockets: decode a Batsim message, decide, encode the reply.

    Args:
        policy: the policy (its state advances as with a real run).
        raw: one Batsim -> scheduler message (bytes or text).

    Returns:
        The reply text (see :func:`~schedulers.batsim.protocol.encode_decisions`).

    Raises:
        ProtocolError: the message or the policy's decisions are malformed.
        Exception: whatever ``policy.decide`` raises.
    """
    return _exchange(policy, raw).reply


def _make_logger(log: Any) -> Callable[[str], None]:
    if log is None:
        return lambda msg: None
    if isinstance(log, logging.Logger) or hasattr(log, "info"):
        return log.info
    if callable(log):
        return log
    raise TypeError(f"log must be None, a logging.Logger or a callable taking a string, got {log!r}")


def serve(
    policy: Policy,
    endpoint: str = DEFAULT_ENDPOINT,
    *,
    connect_timeout: float | None = 60.0,
    idle_timeout: float | None = 600.0,
    log: Callable[[str], Any] | logging.Logger | None = None,
) -> ServeStats:
    """Run ``policy`` as Batsim's scheduler until the simulation ends.

    Binds a ZMQ REP socket on ``endpoint`` and loops: receive a Batsim message, decode it
    (:func:`~schedulers.batsim.protocol.decode_message`), ``policy.decide(now, events)``, send the
    encoded decisions (:func:`~schedulers.batsim.protocol.encode_decisions`). Returns after
    answering the message that holds SIMULATION_ENDS.

    Args:
        policy: the policy to drive (fresh: one simulation per policy object).
        endpoint: ZMQ endpoint to bind, e.g. ``tcp://*:28000`` (Batsim's ``--socket-endpoint``
            must point at it); ``tcp://127.0.0.1:*`` picks a free port (see ``ServeStats.endpoint``).
        connect_timeout: seconds to wait for Batsim's first message; None waits forever.
        idle_timeout: seconds to wait for each later message; None waits forever.
        log: None, a :class:`logging.Logger` (``info`` is used) or a callable taking a string;
            receives life-cycle lines (bound, first message, end summary), not every message.

    Returns:
        :class:`ServeStats` of the run.

    Raises:
        SchedulerTimeout: no message within ``connect_timeout`` (Batsim never connected) or
            ``idle_timeout`` (Batsim stopped mid-run); the message gives the endpoint, the seconds
            waited and the last ``now``.
        ProtocolError: Batsim sent a malformed message, or the policy produced an unwritable
            decision (Batsim is left waiting: stop it).
        OSError: the endpoint cannot be bound (address in use, bad endpoint).
        Exception: whatever ``policy.decide`` raises.

    The socket and the ZMQ context are always closed: with linger 0 on errors and timeouts, and
    with a bounded linger (2 s) after the final reply so that it reaches Batsim, which waits for it.
    """
    say = _make_logger(log)
    for name, value in (("connect_timeout", connect_timeout), ("idle_timeout", idle_timeout)):
        if value is not None and not value > 0:
            raise ValueError(f"{name} must be a positive number of seconds or None, got {value!r}")
    stats = ServeStats(endpoint=endpoint)
    t_start = time.monotonic()
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    linger_ms = 0
    try:
        sock.setsockopt(zmq.LINGER, 0)
        try:
            sock.bind(endpoint)
        except zmq.ZMQError as exc:
            raise OSError(f"cannot bind the scheduler's ZMQ REP socket to {endpoint!r}: {exc}") from None
        try:
            stats.endpoint = sock.getsockopt_string(zmq.LAST_ENDPOINT) or endpoint
        except zmq.ZMQError:  # pragma: no cover - transports without LAST_ENDPOINT
            stats.endpoint = endpoint
        say(f"policy {getattr(policy, 'name', type(policy).__name__)!r} waiting for Batsim on {stats.endpoint}")
        poller = zmq.Poller()
        poller.register(sock, zmq.POLLIN)
        while True:
            first = stats.messages == 0
            timeout = connect_timeout if first else idle_timeout
            t_wait = time.monotonic()
            while True:
                waited = time.monotonic() - t_wait
                if timeout is not None and waited >= timeout:
                    if first:
                        msg = (f"Batsim never connected: no message on {stats.endpoint} within {timeout:g} s "
                               f"(connect_timeout); is Batsim running with --socket-endpoint pointing here?")
                    else:
                        msg = (f"Batsim went silent: no message on {stats.endpoint} for {timeout:g} s "
                               f"(idle_timeout) after {stats.messages} messages; last now={stats.last_now!r} s")
                    raise SchedulerTimeout(msg, endpoint=stats.endpoint, waited=waited, last_now=stats.last_now,
                                           phase="connect" if first else "idle")
                slice_s = _POLL_SLICE if timeout is None else max(0.0, min(_POLL_SLICE, timeout - waited))
                if poller.poll(int(slice_s * 1000) or 1):
                    break
            raw = sock.recv()
            if first:
                say(f"Batsim connected ({len(raw)} bytes)")
            ex = _exchange(policy, raw)
            sock.send_string(ex.reply)
            stats.messages += 1
            stats.events += ex.n_events
            stats.decisions += ex.n_decisions
            stats.decision_times.append(ex.decide_time)
            stats.last_now = ex.now
            if ex.ended:
                stats.ended = True
                linger_ms = _FINAL_LINGER_MS
                break
        stats.wall_time = time.monotonic() - t_start
        say(f"simulation ended at now={stats.last_now!r} s: {stats.messages} messages, {stats.events} events, "
            f"{stats.decisions} decisions, {stats.total_decision_time:.3f} s deciding "
            f"(max {stats.max_decision_time * 1000:.1f} ms), {stats.wall_time:.3f} s wall")
        return stats
    finally:
        sock.close(linger=linger_ms)
        ctx.term()


# ------------------------------------------------------------------------------ command line
def _policy_options(text: str | None) -> dict[str, Any]:
    if text is None or text == "":
        return {}
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"cannot read policy options file {str(path)!r}: {exc.strerror or exc}") from None
        origin = f"file {str(path)!r}"
    else:
        origin = "--policy-options"
    try:
        opts = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{origin} is not valid JSON ({exc}): {text[:200]!r}") from None
    if not isinstance(opts, dict):
        raise ValueError(f"{origin} must be a JSON object such as '{{\"key\": 1}}', got {type(opts).__name__}")
    return opts


def _seconds_or_none(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        if text.strip().lower() in ("none", "inf", "never"):
            return None
        raise argparse.ArgumentTypeError(f"expected seconds (a number; 0 = wait forever), got {text!r}") from None
    if v != v or v < 0:
        raise argparse.ArgumentTypeError(f"expected seconds >= 0 (0 = wait forever), got {text!r}")
    return None if v == 0 or v == float("inf") else v


def add_serve_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``serve`` sub-command on an ``argparse`` sub-parsers object.

    Options: ``--policy NAME`` (required; names from :mod:`schedulers.registry`), ``--socket``
    (default ``tcp://*:28000``), ``--policy-options`` (a JSON object, or ``@file.json``),
    ``--connect-timeout S`` (default 60) and ``--idle-timeout S`` (default 600); 0 waits forever.
    The handler is :func:`run_serve` (``args.func``).

    Returns:
        The ``serve`` parser.
    """
    p = subparsers.add_parser(
        "serve",
        help="run a policy as the external scheduler of a real Batsim 4.x",
        description="Bind a ZMQ REP socket and answer Batsim's messages with the decisions of a policy, "
                    "until SIMULATION_ENDS. Start Batsim with --socket-endpoint pointing here "
                    "(e.g. tcp://localhost:28000).",
    )
    p.add_argument("--policy", required=True, metavar="NAME", help="policy to run (see the registry)")
    p.add_argument("--socket", default=DEFAULT_ENDPOINT, metavar="ENDPOINT",
                   help=f"ZMQ endpoint to bind (default {DEFAULT_ENDPOINT})")
    p.add_argument("--policy-options", default=None, metavar="JSON|@FILE",
                   help="policy options: a JSON object, or @path to a JSON file")
    p.add_argument("--connect-timeout", type=_seconds_or_none, default=60.0, metavar="S",
                   help="give up if Batsim sends nothing within S seconds of start (default 60; 0 = never)")
    p.add_argument("--idle-timeout", type=_seconds_or_none, default=600.0, metavar="S",
                   help="give up if Batsim goes silent for S seconds mid-run (default 600; 0 = never)")
    p.set_defaults(func=run_serve)
    return p


def run_serve(args: argparse.Namespace) -> int:
    """Handler of ``gridsched serve``.

    Returns:
        Exit status: 0 the simulation ended normally; 1 protocol error, :class:`PolicyError` or
        socket error (other exceptions of the policy propagate with their traceback); 2 bad arguments (unknown policy, bad ``--policy-options``); 3 timeout (Batsim never
        connected or went silent). Errors are reported on stderr in one line.
    """
    err = sys.stderr
    try:
        options = _policy_options(getattr(args, "policy_options", None))
    except ValueError as exc:
        print(f"gridsched serve: {exc}", file=err)
        return 2
    try:
        from .. import registry
    except ImportError as exc:  # pragma: no cover - registry is part of the package
        print(f"gridsched serve: cannot load the policy registry: {exc}", file=err)
        return 1
    try:
        policy = registry.get_policy(args.policy, options)
    except (KeyError, ValueError, TypeError) as exc:
        msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        known = ", ".join(sorted(getattr(registry, "POLICIES", {}) or {}))
        if known and "known" not in msg:
            msg += f" (known policies: {known})"
        print(f"gridsched serve: cannot create policy {args.policy!r}: {msg}", file=err)
        return 2

    def log(line: str) -> None:
        print(f"gridsched serve: {line}", file=err, flush=True)

    try:
        serve(policy, args.socket, connect_timeout=args.connect_timeout, idle_timeout=args.idle_timeout, log=log)
    except SchedulerTimeout as exc:
        print(f"gridsched serve: {exc}", file=err)
        return 3
    except ProtocolError as exc:
        print(f"gridsched serve: protocol error: {exc}", file=err)
        return 1
    except PolicyError as exc:
        print(f"gridsched serve: policy error: {exc}", file=err)
        return 1
    except OSError as exc:
        print(f"gridsched serve: {exc}", file=err)
        return 1
    except KeyboardInterrupt:
        print("gridsched serve: interrupted", file=err)
        return 130
    return 0
