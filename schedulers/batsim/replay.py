"""Replay of recorded scheduler replies: a policy that answers with what a transcript says.

Transcripts are JSON Lines files as in ``shared/batsim-4.2.1/transcripts/*.jsonl``: one object per
message with ``seq``, ``dir`` (``"batsim->sched"`` or ``"sched->batsim"``), ``msg`` (parsed) and
``raw`` (text as sent). :class:`ReplayPolicy` returns the recorded ``sched->batsim`` decisions in
order, one reply per Batsim message, which lets the transport (codec, ZMQ server) be tested
against real Batsim 4.2.1 recordings, and an engine be checked against a recorded run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

from ..core.events import Decision, Event
from ..core.policy import Option, Policy, PolicyError, PolicyOptionError, option_flag
from ..inputs.jsonfile import loads_strict, regular_file
from .protocol import decode_decisions

__all__ = ["ReplayError", "ReplayPolicy", "batsim_messages", "load_transcript", "scheduler_messages"]

BATSIM_TO_SCHED = "batsim->sched"
SCHED_TO_BATSIM = "sched->batsim"


class ReplayError(PolicyError):
    """The replay ran out of recorded replies, or the simulation diverged from the recording."""


def load_transcript(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a transcript (JSON Lines) into a list of records (``seq``, ``dir``, ``msg``, ``raw``).

    Raises:
        OSError: the file cannot be read.
        ValueError: a line is not a JSON object with ``dir`` and one of ``msg``/``raw``
            (the message names the file and the line number).
    """
    p = Path(path)
    records: list[dict[str, Any]] = []
    regular_file(p, "transcript")
    with p.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            rec = loads_strict(line, f"{p}:{lineno}")   # (ValueError: not strict JSON)
            if not isinstance(rec, dict) or rec.get("dir") not in (BATSIM_TO_SCHED, SCHED_TO_BATSIM) or (
                "msg" not in rec and "raw" not in rec
            ):
                raise ValueError(f"{p}:{lineno}: expected an object with 'dir' "
                                 f"({BATSIM_TO_SCHED!r}/{SCHED_TO_BATSIM!r}) and 'msg' or 'raw'")
            records.append(rec)
    return records


def _records(source: str | os.PathLike[str] | Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(source, (str, os.PathLike)):
        return load_transcript(source)
    return list(source)


def _payload(rec: dict[str, Any]) -> Any:
    return rec["raw"] if "raw" in rec else rec["msg"]


def batsim_messages(source: str | os.PathLike[str] | Iterable[dict[str, Any]]) -> list[str | dict]:
    """The Batsim -> scheduler messages of a transcript (``raw`` text when recorded, else ``msg``)."""
    return [_payload(r) for r in _records(source) if r.get("dir") == BATSIM_TO_SCHED]


def scheduler_messages(source: str | os.PathLike[str] | Iterable[dict[str, Any]]) -> list[str | dict]:
    """The scheduler -> Batsim replies of a transcript (``raw`` text when recorded, else ``msg``)."""
    return [_payload(r) for r in _records(source) if r.get("dir") == SCHED_TO_BATSIM]


class ReplayPolicy(Policy):
    """A policy whose decisions are the recorded replies of a transcript, in order.

    Args:
        recorded: a transcript path (``.jsonl``), or a list of recorded scheduler -> Batsim
            messages (raw text, bytes or parsed dicts); None takes the path from
            ``options["transcript"]`` (so ``gridsched serve --policy replay --policy-options
            '{"transcript": "run.jsonl"}'`` works once the policy is registered). A dict given as
            the only argument is taken as ``options`` (the registry calls ``cls(options)``).
        options: policy options; ``transcript`` (path) and ``check_now`` (bool) are read.
        check_now: raise :class:`ReplayError` when a Batsim message's ``now`` differs from the
            ``now`` of the recorded reply (the simulation diverged from the recording).

    Each :meth:`decide` call returns the next recorded reply's decisions with their recorded
    timestamps, so re-encoding them reproduces the recorded reply. Events still go through the
    base class bookkeeping and ``on_*`` callbacks (no :meth:`schedule` decisions are added).

    Raises:
        ReplayError: (from :meth:`decide`) no recorded reply left, or ``now`` mismatch.
        ProtocolError: (from the constructor) a recorded reply is malformed.
        PolicyOptionError (a ValueError): no transcript given, or it cannot be read.
    """

    name = "replay"
    summary = "Answers each Batsim message with the next reply of a recorded transcript (protocol checks)."
    idle_shutdown = False  # plays recorded decisions only (decide is overridden)
    option_docs = {"transcript": Option("path of the recorded transcript (.jsonl) whose replies are played",
                                        type="string (a path)", default="none: required"),
                   "check_now": Option("check each reply's now against the recording", type="true or false",
                                       default="true")}

    def __init__(
        self,
        recorded: str | os.PathLike[str] | list[str | bytes | dict[str, Any]] | None = None,
        options: dict[str, Any] | None = None,
        *,
        check_now: bool | None = None,
    ) -> None:
        if isinstance(recorded, dict) and options is None:  # ReplayPolicy(options), as the registry calls it
            recorded, options = None, recorded
        super().__init__(options)
        if recorded is None:
            recorded = self.options.get("transcript")
            if recorded is None:
                raise PolicyOptionError("policy 'replay' needs a transcript path or a list of recorded replies "
                                        "(option 'transcript')")
        if isinstance(recorded, (str, os.PathLike)):
            self.source = str(recorded)
            try:
                messages: list[Any] = scheduler_messages(recorded)
            except OSError as exc:   # (a bad option value: bad input, not the policy's failure)
                raise PolicyOptionError(f"policy 'replay': option 'transcript': {recorded}: cannot read it: "
                                        f"{exc.strerror or exc}") from None
            except ValueError as exc:   # (not a transcript: bad input too, the file and line named)
                raise PolicyOptionError(f"policy 'replay': option 'transcript': {exc}") from None
            if not messages:   # (else the first message fails, as the policy's failure)
                raise PolicyOptionError(f"policy 'replay': option 'transcript': {recorded}: no recorded reply "
                                        f"({SCHED_TO_BATSIM!r} line) to play")
        elif isinstance(recorded, (list, tuple)):
            self.source = "<list>"
            messages = list(recorded)
        else:   # (an int failed in __init__ as the policy's own TypeError)
            raise PolicyOptionError(f"policy 'replay': option 'transcript' must be the path of a transcript "
                                    f"(.jsonl) or a list of recorded replies, got {recorded!r}")
        # ("false", a string, was true)
        self.check_now = option_flag("replay", self.options, "check_now", True) if check_now is None else check_now
        try:
            self.replies: list[tuple[float, list[Decision]]] = [decode_decisions(m) for m in messages]
        except ValueError as exc:   # (a recorded reply that is no protocol message: the transcript's fault)
            raise PolicyOptionError(f"policy 'replay': option 'transcript': {self.source}: a recorded reply is not "
                                    f"a valid message: {' '.join(str(exc).split())}") from None
        self.position = 0

    @property
    def remaining(self) -> int:
        """Recorded replies not yet returned."""
        return len(self.replies) - self.position

    def decide(self, now: float, events: list[Event]) -> list[Decision]:
        """Return the next recorded reply's decisions (see the class docstring).

        Raises:
            ReplayError: the recording is exhausted, or ``now`` differs from the recorded reply's.
        """
        if self.position >= len(self.replies):
            raise ReplayError(f"replay of {self.source}: Batsim message at now={now!r} but all "
                              f"{len(self.replies)} recorded replies were used")
        rec_now, decisions = self.replies[self.position]
        if self.check_now and rec_now != float(now):
            raise ReplayError(f"replay of {self.source}: reply {self.position} was recorded at now={rec_now!r} "
                              f"but the Batsim message says now={now!r}")
        self.position += 1
        self.now = float(now)
        self._decisions = []
        for ev in events:
            self._dispatch(ev)
        self._decisions = []
        return list(decisions)
