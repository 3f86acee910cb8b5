"""ZeroMQ endpoints given on the command line (``gridsched serve --socket``, ``gridsched engine
-s``): what ZeroMQ would do with them silently.

libzmq (checked with 4.3.5, ``tcp_address_t::resolve``) reads a TCP port and keeps it in 16
bits: ``tcp://*:99999`` binds port 34463 (99999 mod 65536) without a word, and a Batsim told
``tcp://localhost:99999`` connects to that same port 34463 (real Batsim uses the same libzmq).
:func:`port_problem` says so before the socket is made.
"""

from __future__ import annotations

__all__ = ["EndpointError", "port_problem"]


class EndpointError(OSError):
    """A ZeroMQ endpoint that cannot be bound or connected (bad syntax, an address of another
    machine, a port in use): a bad option value."""


def port_problem(endpoint: str) -> str | None:
    """What is wrong with the TCP port of ``endpoint``, or None (a port of 0-65535 or ``*``,
    or a transport other than ``tcp``; ZeroMQ itself refuses other mistakes).

    Args:
        endpoint: a ZeroMQ endpoint such as ``tcp://localhost:28000``.

    Returns:
        One phrase such as ``"port 99999 is not in 0-65535 (ZeroMQ takes it modulo 65536: port
        34463)"``, or None.
    """
    transport, sep, rest = endpoint.partition("://")
    if not sep or transport != "tcp" or ":" not in rest:
        return None
    port = rest.rsplit(":", 1)[1]
    if port.isdigit() and int(port) > 65535:
        return f"port {port} is not in 0-65535 (ZeroMQ takes it modulo 65536: port {int(port) % 65536})"
    return None
