"""Errors raised by gridsched's input readers, writers and converters."""

from __future__ import annotations

__all__ = ["WorkloadError", "PlatformError", "EventsError"]


class WorkloadError(ValueError):
    """A workload (trace or Batsim JSON) is malformed or inconsistent.

    The message names the file, the line or item (job id, profile name) and what is wrong.
    """


class PlatformError(ValueError):
    """A platform description is malformed or inconsistent.

    The message names the file and the element (host, zone, link) that is wrong.
    """


class EventsError(ValueError):
    """A Batsim events file (``--events``) is malformed: the message names the file, the line and
    what is wrong (:mod:`schedulers.engine.extevents`)."""
