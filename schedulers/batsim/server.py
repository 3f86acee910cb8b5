"""ZeroMQ server running one :class:`~schedulers.core.policy.Policy` as Batsim's external scheduler.

Batsim 4.x protocol (Batsim documentation, "Protocol"; observed on Batsim 4.2.1, see
``shared/batsim-4.2.1/README.md``): the scheduler binds a ZMQ REP socket (default
``tcp://*:28000``), Batsim connects with a REQ socket and speaks first; every Batsim message gets
exactly one reply; after the reply to the message holding SIMULATION_ENDS the run is over.

One :func:`serve` answers one simulation: a second SIMULATION_BEGINS (a second Batsim connected
to the same endpoint, whose messages ZMQ would interleave with the first one's into the same
policy state) stops the run with a :class:`~schedulers.batsim.protocol.ProtocolError` before the
policy sees it; so do the other messages real Batsim never sends (``now`` going back in time, a
job submitted twice, the completion of a job never started or already completed).

Batsim waits forever for a scheduler, and a scheduler would wait forever for a Batsim that never
comes or died mid-run: :func:`serve` gives up with :class:`SchedulerTimeout` instead, and a caller
that runs it in a thread can end it at any time with its ``stop`` event.

Batsim's SIMULATION_BEGINS carries no host speeds, cores or initial pstates; given the platform
file Batsim runs on (``platform``, ``--platform FILE``), :func:`serve` fills them in before the
policy sees the hosts, after checking that the file is the platform Batsim announced
(:mod:`schedulers.batsim.platform_file`). Without it, a policy that reads them gets
:class:`~schedulers.core.model.HostInfoUnknown`. Nor does it say whether Batsim runs its energy
model (``-E``), without which Batsim ignores the hosts' ``sleep_pstates``: ``energy``
(``--energy`` / ``--no-energy``) tells the policy (:attr:`~schedulers.core.model.Host.energy`).

Command line (registered by :func:`add_serve_parser`)::

    gridsched serve --policy NAME [--socket tcp://*:28000] [--policy-options JSON|@file.json]
                    [--platform FILE] [--energy | --no-energy] [--connect-timeout S] [--idle-timeout S]
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..core.events import ExecuteJob, JobCompleted, JobSubmitted, SimulationBegins, SimulationEnds
from ..core.failure import located
from ..core.model import PolicyInputError
from ..core.policy import Policy, PolicyError
from ..exits import interrupt_status, interrupt_word, one_line
from ..inputs.errors import PlatformError
from .endpoints import EndpointError, port_problem
from .platform_file import PlatformFile, PlatformMismatch, set_energy_model
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

#: Longest single poll (s) when a ``stop`` switch is given: how late :func:`serve` may notice it.
_STOP_POLL_SLICE = 0.1


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
        stopped: True when the caller's ``stop`` switch ended the run first.
    """

    endpoint: str = ""
    messages: int = 0
    events: int = 0
    decisions: int = 0
    decision_times: list[float] = field(default_factory=list)
    last_now: float | None = None
    wall_time: float = 0.0
    ended: bool = False
    stopped: bool = False

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


class _Checks:
    """What real Batsim never sends, refused before the policy sees the message (a buggy or
    mismatched simulator could send it; believing it would corrupt the policy's state: hosts
    freed while still in use, a job executed twice): a second SIMULATION_BEGINS (another Batsim
    on the same endpoint), a ``now`` earlier than the previous message's, a JOB_SUBMITTED of a
    job already submitted, a JOB_COMPLETED of a job this scheduler never started (no
    EXECUTE_JOB sent for it) or that already completed.

    Raises (:meth:`check`):
        ProtocolError: one line naming the message (number and ``now``), the job and what is
            impossible; nothing is decided.
    """

    def __init__(self, endpoint: Callable[[], str]) -> None:
        self.endpoint = endpoint
        self.messages = 0
        self.began: tuple[int, float] | None = None   # (message number, now) of SIMULATION_BEGINS
        self.last_now: float | None = None
        self.submitted: set[str] = set()
        self.started: set[str] = set()
        self.completed: set[str] = set()

    def check(self, now: float, events: list) -> None:
        n = self.messages + 1
        where = f"message {n} (now={now!r} s)"
        if self.last_now is not None and now < self.last_now:
            raise ProtocolError(f"{where}: 'now' goes back in time, before the previous message's "
                                f"now={self.last_now!r} s; real Batsim never sends this: stopped before deciding "
                                "anything")
        submitted, completed = set(), set()
        for ev in events:
            if isinstance(ev, SimulationBegins):
                if self.began is not None:
                    m, t = self.began
                    raise ProtocolError(
                        f"a second SIMULATION_BEGINS (message {n}, now={now!r} s) after the one of message {m} "
                        f"(now={t!r} s): another "
                        f"Batsim connected to {self.endpoint()}; one scheduler answers one simulation, start one "
                        "gridsched serve per Batsim, each on its own --socket")
            elif isinstance(ev, JobSubmitted):
                jid = ev.job.id
                if jid in self.submitted or jid in submitted:
                    raise ProtocolError(f"{where}: JOB_SUBMITTED of job {jid!r}, which was already submitted; real "
                                        "Batsim submits a job once: stopped before deciding anything")
                submitted.add(jid)
            elif isinstance(ev, JobCompleted):
                jid = ev.job_id
                if jid not in self.started:
                    raise ProtocolError(f"{where}: JOB_COMPLETED of job {jid!r}, which this scheduler never started "
                                        "(no EXECUTE_JOB was sent for it); real Batsim never sends this: stopped "
                                        "before deciding anything")
                if jid in self.completed or jid in completed:
                    raise ProtocolError(f"{where}: JOB_COMPLETED of job {jid!r}, which already completed; real Batsim "
                                        "completes a job once: stopped before deciding anything")
                completed.add(jid)
        if self.began is None and any(isinstance(ev, SimulationBegins) for ev in events):
            self.began = (n, now)
        self.messages = n
        self.last_now = now
        self.submitted |= submitted
        self.completed |= completed

    def decided(self, decisions: list) -> None:
        for d in decisions:
            if isinstance(d, ExecuteJob):
                self.started.add(d.job_id)


def _exchange(policy: Policy, raw: bytes | str, platform: PlatformFile | None = None,
              checks: _Checks | None = None, energy: bool | None = None) -> _Exchange:
    now, events = decode_message(raw)
    if checks is not None:  # may refuse the message before the policy sees it
        checks.check(now, events)
    if platform is not None:
        platform.fill_events(events)
    set_energy_model(events, energy)
    t0 = time.perf_counter()
    try:
        decisions = policy.decide(now, events)
    except (Exception, SystemExit) as exc:   # the policy's own failure: its class, callback and line
        failure = located(policy, exc)
        if failure is None:
            raise
        raise failure from exc
    dt = time.perf_counter() - t0
    if checks is not None:
        checks.decided(decisions)
    reply = encode_decisions(now, decisions)
    ended = any(isinstance(ev, SimulationEnds) for ev in events)
    return _Exchange(reply, now, len(events), len(decisions), dt, ended)


def handle_raw(policy: Policy, raw: bytes | str, platform: PlatformFile | None = None,
               energy: bool | None = None) -> str:
    """One protocol exchange without sockets: decode a Batsim message, decide, encode the reply.

    Args:
        policy: the policy (its state advances as with a real run).
        raw: one Batsim -> scheduler message (bytes or text).
        platform: fills in the hosts of a SIMULATION_BEGINS (see :func:`serve`), or None.
        energy: whether Batsim runs with ``-E`` (see :func:`serve`), or None (unknown).

    Returns:
        The reply text (see :func:`~schedulers.batsim.protocol.encode_decisions`).

    Raises:
        ProtocolError: the message or the policy's decisions are malformed.
        PlatformMismatch: ``platform`` is not the platform of the SIMULATION_BEGINS.
        Exception: whatever ``policy.decide`` raises.
    """
    return _exchange(policy, raw, platform, energy=energy).reply


def _platform_file(platform: PlatformFile | str | os.PathLike[str] | None) -> PlatformFile | None:
    if platform is None or isinstance(platform, PlatformFile):
        return platform
    return PlatformFile(platform)


def _stop_switch(stop: Any) -> Callable[[], bool] | None:
    """``stop`` as a no-argument predicate: a ``threading.Event`` (anything with ``is_set``) or a
    callable returning True to stop; None: never."""
    if stop is None:
        return None
    if hasattr(stop, "is_set"):
        return stop.is_set
    if callable(stop):
        return lambda: bool(stop())
    raise TypeError(f"stop must be None, a threading.Event or a callable returning a bool, got {stop!r}")


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
    platform: PlatformFile | str | os.PathLike[str] | None = None,
    stop: threading.Event | Callable[[], bool] | None = None,
    energy: bool | None = None,
) -> ServeStats:
    """Run ``policy`` as Batsim's scheduler until the simulation ends (or ``stop`` says so).

    Binds a ZMQ REP socket on ``endpoint`` and loops: receive a Batsim message, decode it
    (:func:`~schedulers.batsim.protocol.decode_message`), fill in the hosts of SIMULATION_BEGINS
    from ``platform``, ``policy.decide(now, events)``, send the encoded decisions
    (:func:`~schedulers.batsim.protocol.encode_decisions`). Returns after answering the message
    that holds SIMULATION_ENDS.

    Args:
        policy: the policy to drive (fresh: one simulation per policy object).
        endpoint: ZMQ endpoint to bind, e.g. ``tcp://*:28000`` (Batsim's ``--socket-endpoint``
            must point at it); ``tcp://127.0.0.1:*`` picks a free port (see ``ServeStats.endpoint``).
        connect_timeout: seconds to wait for Batsim's first message; None waits forever.
        idle_timeout: seconds to wait for each later message; None waits forever.
        log: None, a :class:`logging.Logger` (``info`` is used) or a callable taking a string;
            receives life-cycle lines (bound, first message, end summary), not every message.
        platform: the platform file Batsim runs on (a path, read at once, or a
            :class:`~schedulers.batsim.platform_file.PlatformFile`): the hosts of SIMULATION_BEGINS
            get their speeds per pstate, cores and initial pstate from it, after a check that the
            file has the same compute hosts and properties. None: Batsim's hosts as sent (speeds
            and cores unknown).
        energy: whether Batsim runs its energy model (``batsim -E``), which its messages do not
            say: True or False sets :attr:`~schedulers.core.model.Host.energy` on the hosts of
            SIMULATION_BEGINS; without ``-E`` Batsim ignores ``sleep_pstates``, and so does the
            policy then (a host declared at its sleep pstate is an idle host that computes at
            that pstate's speed). None (unknown): the policy reads ``sleep_pstates`` as with ``-E``.
        stop: a ``threading.Event`` (or a callable returning True) that ends the run when set,
            for a caller running ``serve`` in a thread (e.g. Batsim died): checked at least every
            0.1 s while waiting for Batsim, and between messages. The socket is then closed at once
            and the returned stats have ``stopped`` True, ``ended`` False; the policy sees no
            SIMULATION_ENDS.

    Returns:
        :class:`ServeStats` of the run.

    Raises:
        SchedulerTimeout: no message within ``connect_timeout`` (Batsim never connected) or
            ``idle_timeout`` (Batsim stopped mid-run); the message gives the endpoint, the seconds
            waited and the last ``now``.
        ProtocolError: Batsim sent a malformed message, the policy produced an unwritable
            decision, or a message real Batsim never sends arrived, refused before the policy
            sees it (:class:`_Checks`: a second SIMULATION_BEGINS, another Batsim connected to
            ``endpoint``; ``now`` going back; a job submitted twice; a JOB_COMPLETED of a job
            never started or already completed); Batsim is left waiting: stop it.
        PolicyFailure: the policy's code raised or called ``sys.exit()``
            (:mod:`schedulers.core.failure`: its class, callback, file and line).
        PlatformError: ``platform`` cannot be read (raised before binding).
        PlatformMismatch: ``platform`` is not the platform Batsim announced (Batsim is left
            waiting: stop it).
        OSError: the endpoint cannot be bound (address in use, bad endpoint).

    The socket and the ZMQ context are always closed: with linger 0 on errors and timeouts, and
    with a bounded linger (2 s) after the final reply so that it reaches Batsim, which waits for it.
    """
    say = _make_logger(log)
    for name, value in (("connect_timeout", connect_timeout), ("idle_timeout", idle_timeout)):
        if value is not None and not value > 0:
            raise ValueError(f"{name} must be a positive number of seconds or None, got {value!r}")
    should_stop = _stop_switch(stop)
    poll_slice = _POLL_SLICE if should_stop is None else _STOP_POLL_SLICE
    platform_file = _platform_file(platform)
    stats = ServeStats(endpoint=endpoint)
    t_start = time.monotonic()
    import zmq  # here, not at the top: `gridsched run` on the embedded engine never loads it

    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    linger_ms = 0
    try:
        sock.setsockopt(zmq.LINGER, 0)
        problem = port_problem(endpoint)
        if problem is not None:   # (ZeroMQ would bind another port without a word)
            raise EndpointError(f"cannot bind the scheduler's ZMQ REP socket to {endpoint!r}: {problem}")
        try:
            sock.bind(endpoint)
        except zmq.ZMQError as exc:
            raise EndpointError(f"cannot bind the scheduler's ZMQ REP socket to {endpoint!r}: {exc}") from None
        try:
            stats.endpoint = sock.getsockopt_string(zmq.LAST_ENDPOINT) or endpoint
        except zmq.ZMQError:  # pragma: no cover - transports without LAST_ENDPOINT
            stats.endpoint = endpoint
        say(f"policy {getattr(policy, 'name', type(policy).__name__)!r} waiting for Batsim on {stats.endpoint}")
        if platform_file is not None:
            say(f"host speeds and cores from {platform_file.source!r} ({len(platform_file.hosts)} compute hosts)")
        poller = zmq.Poller()
        poller.register(sock, zmq.POLLIN)
        checks = _Checks(lambda: stats.endpoint)   # what real Batsim never sends: refused

        while True:
            first = stats.messages == 0
            timeout = connect_timeout if first else idle_timeout
            t_wait = time.monotonic()
            while True:
                if should_stop is not None and should_stop():
                    stats.stopped = True
                    break
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
                slice_s = poll_slice if timeout is None else max(0.0, min(poll_slice, timeout - waited))
                if poller.poll(int(slice_s * 1000) or 1):
                    break
            if stats.stopped:
                stats.wall_time = time.monotonic() - t_start
                say(f"stopped by the caller after {stats.messages} messages (last now={stats.last_now!r} s)")
                return stats
            raw = sock.recv()
            if first:
                say(f"Batsim connected ({len(raw)} bytes)")
            ex = _exchange(policy, raw, platform_file, checks, energy)
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
    from ..inputs.jsonfile import loads_strict, read_json

    if text is None or text == "":
        return {}
    if text.startswith("@"):
        if not text[1:].strip():
            raise ValueError("--policy-options @: no file name after '@' (@FILE reads the options from FILE)")
        path = Path(text[1:])
        try:
            opts = read_json(path, ValueError, "policy options file")   # (strict: see inputs.jsonfile)
        except ValueError as exc:
            raise ValueError(f"cannot read the policy options file: {exc}") from None
        origin = f"file {str(path)!r}"
    else:
        origin = "--policy-options"
        opts = loads_strict(text, f"{origin} is not valid JSON")
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
    ``--platform FILE`` (the platform XML Batsim runs on: host speeds, cores and initial pstates
    for the policy, see :func:`serve`), ``--energy`` / ``--no-energy`` (whether Batsim runs with
    ``-E``: see ``energy`` of :func:`serve`), ``--connect-timeout S`` (default 60) and
    ``--idle-timeout S`` (default 600); 0 waits forever.
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
    p.add_argument("--policy", required=True, metavar="NAME", help="the policy to run: a name (see `gridsched policies`), or your own as FILE.py:Class or "
                        "package.module:Class")
    p.add_argument("--socket", default=DEFAULT_ENDPOINT, metavar="ENDPOINT",
                   help=f"ZMQ endpoint to bind (default {DEFAULT_ENDPOINT})")
    p.add_argument("--policy-options", default=None, metavar="JSON|@FILE",
                   help="policy options: a JSON object, or @path to a JSON file")
    p.add_argument("--platform", default=None, metavar="FILE",
                   help="the SimGrid platform XML Batsim runs on (batsim -p FILE): gives the policy the host "
                        "speeds per pstate, cores and initial pstates, which Batsim does not send; checked "
                        "against the hosts and properties Batsim announces")
    p.add_argument("--energy", action=argparse.BooleanOptionalAction, default=None,
                   help="say whether Batsim runs with its energy model (batsim -E), which its messages do not "
                        "say: without it Batsim ignores the hosts' sleep_pstates, and so does the policy with "
                        "--no-energy (a host declared at its sleep pstate is then an idle host computing at that "
                        "pstate's speed); by default the policy reads sleep_pstates as under -E")
    p.add_argument("--connect-timeout", type=_seconds_or_none, default=60.0, metavar="S",
                   help="give up if Batsim sends nothing within S seconds of start (default 60; 0 = never)")
    p.add_argument("--idle-timeout", type=_seconds_or_none, default=600.0, metavar="S",
                   help="give up if Batsim goes silent for S seconds mid-run (default 600; 0 = never)")
    p.set_defaults(func=run_serve)
    return p


def run_serve(args: argparse.Namespace) -> int:
    """Handler of ``gridsched serve``.

    Returns:
        Exit status (:mod:`schedulers.exits`): 0 the simulation ended normally; 1 protocol error
        (a malformed message, or one real Batsim never sends), a failure of the policy's code (its
        exception or ``sys.exit()``, named by class, callback, file and line:
        :mod:`schedulers.core.failure`) or socket error; 2 bad arguments (unknown policy, bad
        ``--policy-options``, a ``--socket`` that cannot be bound or whose port is above 65535
        (ZeroMQ would silently take it modulo 65536), unreadable ``--platform``, or a
        ``--platform`` file that does not
        match the platform Batsim announced) or inputs that lack what the policy needs (host
        speeds or cores unknown without ``--platform``: :class:`~schedulers.core.model.
        PolicyInputError`); 3 timeout (Batsim never connected or went silent); 130 Ctrl-C, 143
        SIGTERM. Errors are reported on stderr in one line.
    """
    err = sys.stderr
    try:
        options = _policy_options(getattr(args, "policy_options", None))
    except ValueError as exc:
        print(f"gridsched serve: {one_line(exc)}", file=err)
        return 2
    platform = None
    if getattr(args, "platform", None):
        try:
            platform = PlatformFile(args.platform)
        except PlatformError as exc:
            print(f"gridsched serve: --platform: {one_line(exc)}", file=err)
            return 2
    try:
        from .. import registry
    except ImportError as exc:  # pragma: no cover - registry is part of the package
        print(f"gridsched serve: cannot load the policy registry: {one_line(exc)}", file=err)
        return 1
    try:
        policy = registry.get_policy(args.policy, options)
    except (KeyError, ValueError, TypeError) as exc:
        msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        known = ", ".join(sorted(getattr(registry, "POLICIES", {}) or {}))
        if known and "known" not in msg and not isinstance(exc, registry.PolicyOptionError):   # (a bad option)
            msg += f" (known policies: {known})"
        print(f"gridsched serve: cannot create policy {args.policy!r}: {one_line(msg)}", file=err)
        return 2

    def log(line: str) -> None:
        print(f"gridsched serve: {line}", file=err, flush=True)

    try:
        serve(policy, args.socket, connect_timeout=args.connect_timeout, idle_timeout=args.idle_timeout, log=log,
              platform=platform, energy=getattr(args, "energy", None))
    except SchedulerTimeout as exc:
        print(f"gridsched serve: {one_line(exc)}", file=err)
        return 3
    except PlatformMismatch as exc:
        print(f"gridsched serve: --platform: {one_line(exc)}", file=err)
        return 2
    except ProtocolError as exc:
        print(f"gridsched serve: protocol error: {one_line(exc)}", file=err)
        return 1
    except PolicyInputError as exc:
        print(f"gridsched serve: bad input: {one_line(exc)}", file=err)
        return 2
    except PolicyError as exc:
        print(f"gridsched serve: policy error: {one_line(exc)}", file=err)
        return 1
    except EndpointError as exc:   # (--socket: a bad option value)
        print(f"gridsched serve: --socket: {one_line(exc)}", file=err)
        return 2
    except OSError as exc:
        print(f"gridsched serve: {one_line(exc)}", file=err)
        return 1
    except KeyboardInterrupt as exc:   # Ctrl-C, or SIGTERM (exits.Terminated)
        print(f"gridsched serve: {interrupt_word(exc)}", file=err)
        return interrupt_status(exc)
    return 0
