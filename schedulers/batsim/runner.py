"""Run a gridsched policy against a real ``batsim`` binary (Batsim 4.x), both under timeouts.

:func:`run_with_batsim` starts our ZMQ scheduler server (:func:`schedulers.batsim.server.serve`)
in a thread, then the ``batsim`` executable as a subprocess::

    batsim -p PLATFORM -w W0 [-w W1 ...] -e EXPORT_PREFIX [-E] -s ENDPOINT [EXTRA ...]

(Batsim 4.x command line, ``batsim --help``: ``-p/--platform``, ``-w/--workload`` (repeatable),
``-e/--export`` (output prefix, default ``out``), ``-E/--energy``, ``-s/--socket-endpoint``
(default ``tcp://localhost:28000``); see https://batsim.readthedocs.io, "Command-line interface").

Batsim connects to the scheduler and waits forever for each reply, and the scheduler waits for
Batsim: when one side fails the other is stopped here: Batsim's process group is terminated
(SIGTERM, then SIGKILL after a grace period) when the scheduler fails or the overall ``timeout``
expires, and the server thread is ended through :func:`~schedulers.batsim.server.serve`'s ``stop``
event when Batsim exits early (the policy then sees no SIMULATION_ENDS).

Output prefix convention: gridsched names outputs ``prefix + "jobs.csv"`` (``out/run/out_`` ->
``out/run/out_jobs.csv``, as :func:`schedulers.engine.write_outputs` and
:func:`schedulers.core.metrics.summarize_outputs` do), while Batsim appends ``"_jobs.csv"`` to its
``-e`` value. :func:`batsim_export_prefix` converts (``out/run/out_`` -> ``-e out/run/out``), so the
same prefix works for both engines.

No ``batsim`` on PATH raises :class:`BatsimNotFound` (a :class:`FileNotFoundError`) that points to
``docker compose up`` (see ``docs/guides/real-batsim.md``) and to the embedded engine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import subprocess

    from ..core.policy import Policy
    from .server import ServeStats

__all__ = [
    "DEFAULT_BATSIM_ENDPOINT",
    "BatsimNotFound",
    "BatsimRunError",
    "BatsimRunResult",
    "BatsimRunTimeout",
    "add_batsim_run_args",
    "batsim_command",
    "batsim_export_prefix",
    "batsim_kwargs_from_args",
    "connect_endpoint",
    "find_batsim",
    "free_tcp_endpoint",
    "run_with_batsim",
]

#: Where the scheduler binds by default for a local run (Batsim gets the same address).
DEFAULT_BATSIM_ENDPOINT = "tcp://127.0.0.1:28000"

#: Seconds between SIGTERM and SIGKILL when stopping Batsim.
KILL_GRACE_S = 5.0

#: Seconds Batsim may take to exit after the scheduler answered SIMULATION_ENDS.
EXIT_GRACE_S = 30.0

_NOT_FOUND_HELP = (
    "Batsim 4.x is not installed here. Either run Batsim in Docker (`docker compose up` with the "
    "project's docker-compose.yml, see docs/guides/real-batsim.md), install it (e.g. with Nix: "
    "https://batsim.readthedocs.io/en/latest/installation.html) and put `batsim` on PATH or pass its "
    "path, or use the embedded Batsim-compatible engine (`gridsched run --engine embedded`, the default)."
)


class BatsimNotFound(FileNotFoundError):
    """No ``batsim`` executable: the message says how to get one or what to use instead."""


class BatsimRunError(RuntimeError):
    """A real-Batsim run failed: Batsim exited non-zero, or the scheduler side failed.

    Attributes:
        result: the :class:`BatsimRunResult` of the run (exit status, log path...), or None.
    """

    def __init__(self, message: str, result: "BatsimRunResult | None" = None) -> None:
        super().__init__(message)
        self.result = result


class BatsimRunTimeout(BatsimRunError, TimeoutError):
    """The run exceeded its ``timeout``; Batsim was killed."""


@dataclass
class BatsimRunResult:
    """What one :func:`run_with_batsim` did.

    Attributes:
        returncode: Batsim's exit status (negative: killed by that signal, e.g. -15, -9).
        output_prefix: gridsched-convention prefix: outputs are ``output_prefix + "jobs.csv"``...
        export_prefix: the ``-e`` value Batsim got (it writes ``export_prefix + "_jobs.csv"``...).
        command: Batsim's command line.
        log_path: file holding Batsim's stdout and stderr.
        stats: the scheduler server's :class:`ServeStats`; None when it did not end normally.
        policy: the policy object (its state after the run).
        wall_time: seconds from start to end.
        scheduler_error: the exception the scheduler side raised, if any.
    """

    returncode: int
    output_prefix: str
    export_prefix: str
    command: list[str]
    log_path: Path
    stats: ServeStats | None
    policy: Policy
    wall_time: float
    scheduler_error: BaseException | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        """Batsim exited 0 and the scheduler answered SIMULATION_ENDS."""
        return self.returncode == 0 and self.stats is not None and self.stats.ended

    def output_files(self) -> dict[str, Path]:
        """Batsim's output files that exist, by kind (``"jobs"``, ``"schedule"``, ``"consumed_energy"``...)."""
        out: dict[str, Path] = {}
        for kind in ("jobs", "schedule", "machine_states", "consumed_energy", "pstate_changes"):
            p = Path(self.output_prefix + kind + ".csv")
            if p.is_file():
                out[kind] = p
        return out

    def log_tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines of Batsim's log ("" when there is none)."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


# ----------------------------------------------------------------------------------- helpers
def _log_lines(res: "BatsimRunResult", log_path: Path) -> str:
    """The end of an error message: the last lines of Batsim's log, or that it wrote none."""
    tail = res.log_tail()
    return f"\nBatsim log ({log_path}):\n{tail}" if tail.strip() else f"; Batsim's log ({log_path}) is empty"


def find_batsim(batsim: str | os.PathLike[str] = "batsim") -> str:
    """Absolute path of the Batsim executable.

    Args:
        batsim: a command name looked up on PATH (``"batsim"``), or a path to the executable.

    Raises:
        BatsimNotFound: not on PATH / not an executable file (the message says what to do), or
            the ``batsim`` found on PATH is gridsched's own launcher of the embedded engine
            (:mod:`schedulers.batsim.launcher`), which is no real Batsim (an explicit path is
            taken as given).
    """
    name = os.fspath(batsim)
    if os.sep in name or (os.altsep and os.altsep in name):
        p = Path(name)
        if p.is_file() and os.access(p, os.X_OK):
            return str(p.resolve())
        raise BatsimNotFound(f"Batsim executable {name!r} does not exist or is not executable. {_NOT_FOUND_HELP}")
    found = shutil.which(name)
    if found is None:
        raise BatsimNotFound(f"no {name!r} executable on PATH. {_NOT_FOUND_HELP}")
    from .launcher import is_launcher

    if is_launcher(found):
        raise BatsimNotFound(f"the {name!r} on PATH ({found}) is gridsched's launcher of the embedded engine "
                             "(gridsched batsim-launcher), not real Batsim: take its folder off PATH, or run "
                             "without --engine batsim")
    return found


def batsim_export_prefix(output_prefix: str | os.PathLike[str]) -> str:
    """Batsim's ``-e`` value for a gridsched output prefix (one trailing ``_`` removed).

    ``"out/run/out_"`` -> ``"out/run/out"`` (Batsim then writes ``out/run/out_jobs.csv``);
    a prefix without trailing ``_`` is passed unchanged.
    """
    p = os.fspath(output_prefix)
    return p[:-1] if p.endswith("_") else p


def connect_endpoint(bind_endpoint: str) -> str:
    """The endpoint Batsim must connect to for a scheduler bound on ``bind_endpoint``.

    Wildcard hosts become ``localhost``: ``tcp://*:28000`` -> ``tcp://localhost:28000``;
    ``tcp://0.0.0.0:28000`` likewise; other endpoints are returned unchanged.

    Raises:
        ValueError: a wildcard port (``tcp://host:*``): give a port, or pass ``socket=None`` to
            :func:`run_with_batsim` to pick a free one.
    """
    if bind_endpoint.startswith("tcp://"):
        host, sep, port = bind_endpoint[len("tcp://"):].rpartition(":")
        if not sep:
            raise ValueError(f"bad ZMQ TCP endpoint {bind_endpoint!r} (expected tcp://HOST:PORT)")
        if port in ("*", "0", ""):
            raise ValueError(f"endpoint {bind_endpoint!r} has no fixed port: Batsim needs one to connect to")
        if host in ("*", "0.0.0.0", "[::]", ""):
            host = "localhost"
        return f"tcp://{host}:{port}"
    return bind_endpoint


def free_tcp_endpoint(host: str = "127.0.0.1") -> str:
    """``tcp://host:PORT`` with a port free at the time of the call (the OS picks it)."""
    import socket as _socket   # (imported when used: gridsched starts sooner)

    with _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return f"tcp://{host}:{s.getsockname()[1]}"


def batsim_command(
    batsim_exe: str,
    platform: str | os.PathLike[str],
    workloads: Sequence[str | os.PathLike[str]],
    export_prefix: str,
    *,
    energy: bool,
    endpoint: str,
    extra_args: Iterable[str] = (),
) -> list[str]:
    """Batsim 4.x's command line: ``batsim -p P -w W... -e PREFIX [-E] -s ENDPOINT EXTRA...``."""
    cmd = [batsim_exe, "-p", os.fspath(platform)]
    for w in workloads:
        cmd += ["-w", os.fspath(w)]
    cmd += ["-e", export_prefix]
    if energy:
        cmd.append("-E")
    cmd += ["-s", endpoint]
    cmd += [str(a) for a in extra_args]
    return cmd


def _stop_process(proc: subprocess.Popen, grace: float = KILL_GRACE_S) -> None:
    """Terminate ``proc``'s process group (we started it in a new session), then kill it."""
    import subprocess

    if proc.poll() is not None:
        return

    def send(sig: int) -> None:
        try:
            if hasattr(os, "killpg"):
                os.killpg(proc.pid, sig)
            else:  # pragma: no cover - non-POSIX
                proc.send_signal(sig)
        except (ProcessLookupError, PermissionError):
            pass

    send(signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
        return
    except subprocess.TimeoutExpired:
        pass
    send(getattr(signal, "SIGKILL", signal.SIGTERM))
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:  # pragma: no cover - unkillable process
        pass


class _ServerThread(threading.Thread):
    """Runs :func:`serve` and keeps its outcome; ``bound`` is set once it logged its first line
    (serve logs right after binding) or ended; setting ``stop`` makes serve return (within 0.1 s
    while it waits for Batsim; a final reply being flushed is not cut short)."""

    def __init__(self, policy: Policy, endpoint: str, connect_timeout: float, idle_timeout: float,
                 log: Callable[[str], Any] | None, platform: str | None = None,
                 energy: bool | None = None) -> None:
        super().__init__(name="gridsched-batsim-server", daemon=True)
        self.policy = policy
        self.endpoint = endpoint
        self.connect_timeout = connect_timeout
        self.idle_timeout = idle_timeout
        self.user_log = log
        self.platform = platform
        self.energy = energy
        self.bound = threading.Event()
        self.stop = threading.Event()
        self.stats: ServeStats | None = None
        self.error: BaseException | None = None

    def _log(self, line: str) -> None:
        self.bound.set()
        if self.user_log is not None:
            self.user_log(line)

    def run(self) -> None:
        try:
            from .server import serve
            self.stats = serve(self.policy, self.endpoint, connect_timeout=self.connect_timeout,
                               idle_timeout=self.idle_timeout, log=self._log, stop=self.stop,
                               platform=self.platform, energy=self.energy)
        except BaseException as exc:  # reported by run_with_batsim
            self.error = exc
        finally:
            self.bound.set()


# --------------------------------------------------------------------------------- the runner
def run_with_batsim(
    platform: str | os.PathLike[str],
    workloads: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    policy_name: str | Policy,
    options: dict[str, Any] | None,
    output_prefix: str | os.PathLike[str],
    *,
    energy: bool,
    batsim: str | os.PathLike[str] = "batsim",
    socket: str | None = DEFAULT_BATSIM_ENDPOINT,
    timeout: float = 3600.0,
    connect_timeout: float = 60.0,
    extra_batsim_args: Iterable[str] = (),
    check: bool = True,
    log: Callable[[str], Any] | None = None,
) -> BatsimRunResult:
    """Simulate ``workloads`` on ``platform`` with real Batsim, ``policy_name`` deciding.

    Args:
        platform: SimGrid platform XML (path as Batsim will see it; checked to exist).
        workloads: one workload JSON or several (Batsim's ``w0``, ``w1``, ... in this order).
        policy_name: a registered policy name (:mod:`schedulers.registry`), or a Policy object.
        options: policy options (ignored when a Policy object is given).
        output_prefix: gridsched-convention prefix (``out/run/out_`` -> ``out/run/out_jobs.csv``);
            its folder is created; Batsim gets ``-e`` = :func:`batsim_export_prefix` of it.
            Batsim's stdout+stderr go to ``output_prefix + "batsim.log"``.
        energy: pass ``-E`` (energy plugin, energy outputs).
        batsim: Batsim command name on PATH or path to the executable.
        socket: ZMQ endpoint the scheduler binds (``tcp://127.0.0.1:28000``; ``tcp://*:PORT``
            too, Batsim then connects to ``tcp://localhost:PORT``); None picks a free local port.
        timeout: seconds for the whole run; past it Batsim is killed (> 0).
        connect_timeout: seconds Batsim has to send its first message (capped by ``timeout``).
        extra_batsim_args: more Batsim arguments, e.g. ``("--enable-compute-sharing",)``.
        check: raise :class:`BatsimRunError` when Batsim exits non-zero or the scheduler did not
            see SIMULATION_ENDS (like ``subprocess.run(check=True)``); False returns the result.
        log: callable receiving the scheduler's life-cycle lines, or None.

    Batsim runs in the current directory: relative paths are relative to it.

    Returns:
        :class:`BatsimRunResult` (``returncode``, ``output_prefix``, ``stats``, ``log_path``...).

    Raises:
        BatsimNotFound: no Batsim executable (use docker compose or the embedded engine).
        FileNotFoundError: the platform or a workload file does not exist.
        KeyError: unknown policy name.
        ValueError: bad ``timeout``/``connect_timeout`` or endpoint.
        BatsimRunTimeout: the run took longer than ``timeout`` (Batsim was killed).
        BatsimRunError: the scheduler failed (policy exception, protocol error, Batsim never
            connected: Batsim was killed; ``__cause__`` is the scheduler's exception), or, with
            ``check``, Batsim exited non-zero.
        OSError: the scheduler endpoint cannot be bound (address in use...).
    """
    import subprocess

    if not timeout > 0 or not connect_timeout > 0:
        raise ValueError(f"timeout and connect_timeout must be > 0 s, got {timeout!r} and {connect_timeout!r}")
    exe = find_batsim(batsim)
    wl = [workloads] if isinstance(workloads, (str, os.PathLike)) else list(workloads)
    if not wl:
        raise ValueError("at least one workload is needed")
    for kind, p in [("platform", platform)] + [("workload", w) for w in wl]:
        if not Path(p).is_file():
            raise FileNotFoundError(f"{kind} file {os.fspath(p)!r} does not exist")
    from ..core.policy import Policy

    if isinstance(policy_name, Policy):
        policy = policy_name
    else:
        from .. import registry

        policy = registry.get_policy(policy_name, options)

    bind = socket if socket is not None else free_tcp_endpoint()
    endpoint = connect_endpoint(bind)
    out_prefix = os.fspath(output_prefix)
    export = batsim_export_prefix(out_prefix)
    Path(out_prefix).parent.mkdir(parents=True, exist_ok=True)
    log_path = Path(out_prefix + "batsim.log")
    cmd = batsim_command(exe, platform, wl, export, energy=energy, endpoint=endpoint, extra_args=extra_batsim_args)

    t0 = time.monotonic()
    deadline = t0 + timeout
    # the policy sees the hosts of the platform file Batsim runs on (speeds, cores) and whether
    # Batsim runs -E, as in the embedded engine (`gridsched serve --platform FILE --energy`)
    server = _ServerThread(policy, bind, min(connect_timeout, timeout), timeout, log, os.fspath(platform),
                           energy=energy)
    server.start()
    server.bound.wait(min(10.0, timeout))
    if not server.is_alive() and server.error is not None:
        if isinstance(server.error, OSError):
            raise server.error
        raise BatsimRunError(f"the scheduler failed before Batsim started: {server.error}") from server.error

    def result(returncode: int) -> BatsimRunResult:
        stats = server.stats
        ok_stats = stats if (stats is not None and not stats.stopped) else None
        return BatsimRunResult(returncode=returncode, output_prefix=out_prefix, export_prefix=export,
                               command=cmd, log_path=log_path, stats=ok_stats, policy=policy,
                               wall_time=time.monotonic() - t0, scheduler_error=server.error)

    def stop_server() -> None:
        """End the server thread: at once if it waits for Batsim, after its final reply otherwise."""
        server.stop.set()
        server.join(KILL_GRACE_S + 5.0)

    with open(log_path, "wb") as log_file:
        proc = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            while True:
                if not server.is_alive():
                    if server.error is not None:
                        _stop_process(proc)
                        res = result(proc.returncode)
                        raise BatsimRunError(
                            f"the scheduler failed, Batsim was stopped: {type(server.error).__name__}: "
                            f"{server.error}{_log_lines(res, log_path)}", res) from server.error
                    try:
                        proc.wait(timeout=max(0.1, min(EXIT_GRACE_S, deadline - time.monotonic())))
                    except subprocess.TimeoutExpired:
                        _stop_process(proc)
                        res = result(proc.returncode)
                        if time.monotonic() >= deadline:
                            raise BatsimRunTimeout(f"Batsim did not exit within the {timeout:g} s timeout "
                                                   f"after the simulation ended; it was killed", res) from None
                        raise BatsimRunError(f"Batsim did not exit {EXIT_GRACE_S:g} s after the simulation "
                                             f"ended; it was killed", res) from None
                    break
                if proc.poll() is not None:
                    # Batsim is gone. After a normal end the server is flushing its last reply
                    # (bounded linger) and ``stop`` does not cut that short; after a crash it waits
                    # for a message that will never come, and ``stop`` ends that wait.
                    server.join(0.2)
                    stop_server()
                    break
                if time.monotonic() >= deadline:
                    _stop_process(proc)
                    stop_server()
                    res = result(proc.returncode)
                    raise BatsimRunTimeout(f"the Batsim run exceeded its {timeout:g} s timeout; Batsim was "
                                           f"killed{_log_lines(res, log_path)}", res)
                server.join(0.05)
        finally:
            if proc.poll() is None:
                _stop_process(proc)
            if server.is_alive():
                stop_server()

    res = result(proc.returncode)
    if check and not res.ok:
        if res.returncode != 0:
            why = f"Batsim exited with status {res.returncode}"
        elif server.error is not None:
            why = f"the scheduler failed: {server.error}"
        else:
            why = "Batsim exited before the simulation ended"
        raise BatsimRunError(f"{why} (command: {' '.join(cmd)}){_log_lines(res, log_path)}", res)
    return res


# ---------------------------------------------------------------------------- command line
def add_batsim_run_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the real-Batsim options of ``gridsched run --engine batsim`` to ``parser``.

    Options: ``--batsim PATH`` (executable, default ``batsim`` on PATH), ``--batsim-socket
    ENDPOINT`` (scheduler endpoint, default a free local port), ``--batsim-connect-timeout S``
    (default 60) and ``--batsim-arg ARG`` (repeatable, appended to Batsim's command line, e.g.
    ``--batsim-arg=--enable-compute-sharing``). The run's overall timeout stays the caller's
    ``--timeout``. Read them back with :func:`batsim_kwargs_from_args`.
    """
    g = parser.add_argument_group("real Batsim (--engine batsim)")
    g.add_argument("--batsim", default="batsim", metavar="PATH",
                   help="Batsim 4.x executable (default: `batsim` on PATH)")
    g.add_argument("--batsim-socket", default=None, metavar="ENDPOINT",
                   help="ZMQ endpoint for the scheduler (default: a free port on 127.0.0.1)")
    g.add_argument("--batsim-connect-timeout", type=float, default=60.0, metavar="S",
                   help="seconds Batsim has to connect (default 60)")
    g.add_argument("--batsim-arg", action="append", default=[], metavar="ARG",
                   help="extra Batsim argument, repeatable (e.g. --batsim-arg=--enable-compute-sharing)")
    return parser


def events_args(files: Sequence[str | os.PathLike[str]], forward_unknown: bool) -> tuple[str, ...]:
    """Batsim's command-line arguments for external events files ``files`` (``--events``, each
    path made absolute) and ``--forward-unknown-events`` (given only with files: Batsim reads it
    only then, ``parse_main_args``)."""
    out: tuple[str, ...] = ()
    for f in files:
        out += ("--events", str(Path(f).resolve()))
    return out + ("--forward-unknown-events",) if files and forward_unknown else out


def batsim_kwargs_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments of :func:`run_with_batsim` from options added by :func:`add_batsim_run_args`
    (``batsim``, ``socket``, ``connect_timeout``, ``extra_batsim_args``; plus ``timeout`` when the
    namespace has one). ``--compute-sharing``/``--forward-profiles`` (when present and set) become
    Batsim's ``--enable-compute-sharing``/``--forward-profiles-on-submission``."""
    extra = list(getattr(args, "batsim_arg", []) or [])
    if getattr(args, "compute_sharing", False) and "--enable-compute-sharing" not in extra:
        extra.append("--enable-compute-sharing")
    if getattr(args, "forward_profiles", False) and "--forward-profiles-on-submission" not in extra:
        extra.append("--forward-profiles-on-submission")
    kw: dict[str, Any] = {
        "batsim": getattr(args, "batsim", "batsim"),
        "socket": getattr(args, "batsim_socket", None),
        "connect_timeout": getattr(args, "batsim_connect_timeout", 60.0),
        "extra_batsim_args": tuple(extra),
    }
    if getattr(args, "timeout", None) is not None:
        kw["timeout"] = float(args.timeout)
    return kw
