"""Run the engine step by step for a caller that decides, by handing control back and forth.

The embedded engine calls its scheduler (:meth:`Engine.run` -> ``port.exchange``) from deep inside
its loops -- Batsim's server and, with energy or networks, SimGrid's actors and sub-rounds
(:mod:`schedulers.engine.netserver`) -- and keeps most of its state on that call stack. A
Gymnasium environment needs the opposite: the caller's ``step(action)`` runs the engine up to the
next decision and returns. Without rewriting every loop of the engine as a generator (and Python
cannot suspend a call stack otherwise without an extension such as greenlet), the engine runs in
one worker thread and the two sides *hand over* control: at any moment exactly one of them runs,
the other waits on a lock. The run is therefore as deterministic as a single-threaded one, and
the GIL is never contended.

:class:`EngineThread` is that hand-over: the worker calls :meth:`EngineThread.pause` where a
decision is wanted (from the policy's callback, inside ``port.exchange``); the caller's
:meth:`EngineThread.resume` lets it continue up to the next pause or the end of the run.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

__all__ = ["EngineThread", "RunAborted"]


class RunAborted(BaseException):
    """Raised in the worker at its pause when the caller abandons the run (:meth:`EngineThread.abort`).

    A ``BaseException``, so that no ``except Exception`` on the engine's call stack swallows it."""


class EngineThread:
    """A function (the engine's run) executed in a worker thread that alternates with its caller.

    Args:
        run: called once in the worker; its return value becomes :attr:`result`.

    Attributes:
        done: the run returned or raised.
        result: what ``run`` returned (None before, or when it raised).
        error: the exception ``run`` raised (re-raised in the caller by :meth:`start` and
            :meth:`resume`), or None.
    """

    def __init__(self, run: Callable[[], Any]) -> None:
        self._run = run
        self._caller_turn = threading.Lock()
        self._caller_turn.acquire()
        self._worker_turn = threading.Lock()
        self._worker_turn.acquire()
        self._abort = False
        self._started = False
        self.done = False
        self.result: Any = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="gridsched-engine", daemon=True)

    def _main(self) -> None:
        try:
            self.result = self._run()
        except RunAborted:
            pass
        except BaseException as exc:   # handed to the caller
            self.error = exc
        finally:
            self.done = True
            self._caller_turn.release()

    def _raise(self) -> None:
        if self.error is not None:
            err, self.error = self.error, None
            raise err

    def start(self) -> None:
        """Start the run and wait for its first pause or its end (the caller's side).

        Raises:
            whatever the run raised before its first pause.
        """
        self._started = True
        self._thread.start()
        self._caller_turn.acquire()
        self._raise()

    def resume(self) -> None:
        """Let the paused run continue up to its next pause or its end (the caller's side).

        Raises:
            RuntimeError: the run is over (or was never started).
            whatever the run raised meanwhile.
        """
        if not self._started or self.done:
            raise RuntimeError("the run is over: nothing to resume")
        self._worker_turn.release()
        self._caller_turn.acquire()
        self._raise()

    def pause(self) -> None:
        """Hand control to the caller and wait until it resumes (the worker's side).

        Raises:
            RunAborted: the caller abandoned the run meanwhile.
        """
        self._caller_turn.release()
        self._worker_turn.acquire()
        if self._abort:
            raise RunAborted()

    def abort(self) -> None:
        """Abandon a paused run: the worker unwinds (:class:`RunAborted`) and ends. No-op when the
        run is over or was never started."""
        if not self._started or self.done:
            return
        self._abort = True
        self._worker_turn.release()
        self._thread.join()
