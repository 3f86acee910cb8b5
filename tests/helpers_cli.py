"""Helpers for tests of the command line: ``gridsched`` called in-process, its output captured."""

from __future__ import annotations

import contextlib
import io

from schedulers.cli import main


def run_main(argv: list) -> tuple[int, str, str]:
    """``main(argv)`` (each argument made a string: paths may be given as they are) with stdout
    and stderr captured: ``(exit status, stdout, stderr)``."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def one_error_line(err: str) -> str:
    """The only ``error`` line of ``err`` (an assertion error when there are none or several)."""
    errors = [ln for ln in err.splitlines() if "error" in ln]
    assert len(errors) == 1, err
    return errors[0]


def engine_with_client(client: list[str], engine_args: list, timeout: float = 180) -> tuple[object, int, str]:
    """``gridsched engine ENGINE_ARGS -s tcp://127.0.0.1:PORT`` (a process) against the Batsim
    client process ``client`` (its arguments with ``{PORT}`` replaced by a free port); the client
    is killed if it outlives the engine by 30 s. Returns the engine's completed process, the
    client's exit status and its output (stdout and stderr together)."""
    import subprocess
    import sys

    from test_engine_zmq import free_port

    port = free_port()
    sched = subprocess.Popen([a.replace("{PORT}", str(port)) for a in client], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    try:
        proc = subprocess.run([sys.executable, "-m", "schedulers.cli", "engine", *map(str, engine_args),
                               "-s", f"tcp://127.0.0.1:{port}"], capture_output=True, text=True, timeout=timeout)
        sched.wait(timeout=30)
    finally:
        if sched.poll() is None:
            sched.kill()
        out = sched.communicate()[0]
    return proc, sched.returncode, out
