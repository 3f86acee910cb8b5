"""A policy's own code failed: where, in one line.

A policy is user code: its constructor or one of its callbacks (``on_job_submitted``,
``schedule``...) may raise any exception, or call ``sys.exit()``. The transports that call it
(the engine's :class:`~schedulers.engine.ports.InProcessPort`, ``gridsched serve``, the registry
that builds it) turn that into a :class:`PolicyFailure` whose message names the policy's class,
the callback, and the file and line of the policy's own code where it happened, for example::

    policy Greedy failed in schedule (/home/me/greedy.py, line 21): KeyError: 'w0!7'

so that a researcher is sent to their own line, not to gridsched's internals, and a ``SystemExit``
is the policy's failure (the run fails, a campaign records it and goes on) instead of ending the
simulator. :class:`~schedulers.core.model.PolicyInputError` (the inputs lack what the policy needs:
bad input) and :class:`~schedulers.core.policy.PolicyOptionError` (a bad option) are not failures
of the code and pass unchanged, as does ``KeyboardInterrupt`` (Ctrl-C, SIGTERM); a
:class:`~schedulers.core.model.PolicyError` (a decision refused, e.g. a job started on too few
hosts) keeps its type and gains the class, callback, file and line in its message
(:func:`located`).
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any

from .model import PolicyError, PolicyInputError
from .policy import Policy, PolicyOptionError

__all__ = ["PolicyFailure", "policy_failure", "located", "call_policy", "check_runnable", "hook_error",
           "unordered_key", "key_type_error", "PASS_THROUGH"]

#: Longest text of the original error kept in the message (characters).
_ERROR_TEXT = 300


class PolicyFailure(PolicyError):
    """A policy's constructor or callback raised an exception or called ``sys.exit()``.

    Attributes:
        policy: the policy's class name.
        callback: the method that failed (``__init__``, ``on_job_completed``, ``schedule``...),
            None when unknown.
        path, line: the file and line of the policy's code where it failed (None when no frame
            of the policy's classes is in the traceback).
        error: the original exception (also ``__cause__``).
    """

    def __init__(self, message: str, *, policy: str, callback: str | None, path: str | None,
                 line: int | None, error: BaseException) -> None:
        super().__init__(message)
        self.policy = policy
        self.callback = callback
        self.path = path
        self.line = line
        self.error = error


#: Exceptions of a policy that are not failures of its code (bad input, a bad option value, one
#: already located): passed on unchanged.
PASS_THROUGH: tuple[type[BaseException], ...] = (PolicyInputError, PolicyOptionError, PolicyFailure)


def _class_files(cls: type) -> list[str]:
    """The source files of ``cls`` and its bases, most derived first (the base :class:`Policy`
    and ``object`` left out: their code is gridsched's, not the policy's)."""
    files: list[str] = []
    for c in cls.__mro__:
        if c is object or c is Policy:
            continue
        f = getattr(sys.modules.get(c.__module__), "__file__", None)
        if f and f not in files:
            files.append(f)
    return files


def _frames(tb: TracebackType | None) -> list[tuple[str, int, str]]:
    """(file, line, function) of each frame of ``tb``, outermost first."""
    out = []
    while tb is not None:
        code = tb.tb_frame.f_code
        out.append((code.co_filename, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    return out


def _init_code(cls: type) -> Any:
    """The code object of the ``__init__`` ``cls`` runs (its own or a base's), None for the base
    :class:`Policy`'s or ``object``'s."""
    init = next((c.__dict__["__init__"] for c in cls.__mro__ if "__init__" in c.__dict__), None)
    code = getattr(init, "__code__", None)
    return None if code is None or code is Policy.__init__.__code__ else code


def _refused_hook(cls: type, exc: BaseException, files: list[str]) -> str | None:
    """The method of ``cls`` (defined in one of its ``files``) whose call ``exc``, a TypeError
    raised before its body ran, names (``"P.schedule() missing 1 required positional argument"``);
    None otherwise."""
    import re

    m = re.match(r"\w+\.(\w+)\(\) ", str(exc)) if isinstance(exc, TypeError) else None
    if m is None:
        return None
    code = getattr(getattr(cls, m.group(1), None), "__code__", None)
    return m.group(1) if code is not None and code.co_filename in files else None


def _signature(name: str) -> str:
    """How the base class calls its method ``name``: ``def on_job_submitted(self, job)``."""
    import inspect

    return f"def {name}({', '.join(inspect.signature(getattr(Policy, name)).parameters)})"


def _locate(cls: type, exc: BaseException, callback: str | None) -> tuple[str | None, str | None, int | None]:
    """(callback, file, line) of ``exc`` in the code of policy class ``cls`` (:func:`policy_failure`)."""
    frames = _frames(exc.__traceback__)
    files = _class_files(cls)
    where = None
    for f in files:
        hits = [fr for fr in frames if fr[0] == f]
        if hits:
            where = hits[-1]
            break
    if callback is None:
        outer = [fr for fr in frames if fr[0] in files]
        callback = outer[0][2] if outer else None
    if where is None and callback == "__init__":
        # the constructor never ran (a call its signature refuses: ``def __init__(self)``): its def line
        code = _init_code(cls)
        if code is not None:
            where = (code.co_filename, code.co_firstlineno, "__init__")
    if where is None and callback is None:
        # a hook the base class called never ran: its signature refused the call
        # ("P.on_job_submitted() takes 1 positional argument but 2 were given"): its def line
        hook = _refused_hook(cls, exc, files)
        if hook is not None:
            code = getattr(cls, hook).__code__
            where, callback = (code.co_filename, code.co_firstlineno, hook), hook
    if where is None and frames:
        where = frames[-1]
    path, line = (where[0], where[1]) if where else (None, None)
    return callback, path, line


def policy_failure(cls: type, exc: BaseException, callback: str | None = None) -> PolicyFailure:
    """The :class:`PolicyFailure` of ``exc``, raised by the code of a policy of class ``cls``.

    The line is the innermost frame of the traceback in the file of ``cls`` (else of its
    nearest base that has one): the user's own line, even when the error surfaced in a
    built-in base class their code called. The callback, unless given, is the outermost frame
    in any of those files (the hook the transport called, e.g. ``on_job_completed``).

    Args:
        cls: the policy's class.
        exc: what it raised (with its traceback).
        callback: the method called, when the caller knows it (``"__init__"``).
    """
    callback, path, line = _locate(cls, exc, callback)
    at = f" in {callback}" if callback else ""
    loc = f" ({path}, line {line})" if path else ""
    if isinstance(exc, SystemExit):
        text = (f"policy {cls.__name__} called sys.exit({_short(repr(exc.code))}){at}{loc}: a policy returns "
                "decisions and must not end the process")
    else:
        detail = " ".join(str(exc).split())
        text = f"policy {cls.__name__} failed{at}{loc}: {type(exc).__name__}"
        if detail:
            text += f": {_short(detail)}"
        if isinstance(exc, TypeError) and callback is not None and not any(
                fr[0] == path for fr in _frames(exc.__traceback__)):   # (its signature refused the call)
            if callback == "__init__":
                text += ("; a policy's __init__ takes its options: def __init__(self, options=None), then "
                         "super().__init__(options)")
            elif callable(getattr(Policy, callback, None)):
                text += f"; the base class calls it as {_signature(callback)}"
    return PolicyFailure(text, policy=cls.__name__, callback=callback, path=path, line=line, error=exc)


def _short(text: str) -> str:
    return text if len(text) <= _ERROR_TEXT else text[:_ERROR_TEXT] + f"... ({len(text):,} characters)"


def located(policy: Any, exc: BaseException, callback: str | None = None) -> PolicyFailure | None:
    """What to raise for ``exc``, raised by ``policy`` (an instance, or the class for its
    constructor): its :class:`PolicyFailure`;
    or None, to raise ``exc`` itself: one of :data:`PASS_THROUGH`, or a :class:`PolicyError` (a
    decision the base class or the policy refused, with its own message and type, which callers
    may catch), whose message gains the policy's class, callback, file and line in place."""
    cls = policy if isinstance(policy, type) else type(policy)
    if isinstance(exc, PASS_THROUGH):
        return None
    if isinstance(exc, PolicyError):
        if getattr(exc, "policy_location", None) is None and exc.args and isinstance(exc.args[0], str):
            cb, path, line = _locate(cls, exc, callback)
            exc.policy_location = (cb, path, line)
            at = f" in {cb}" if cb else ""
            loc = f" ({path}, line {line})" if path else ""
            exc.args = (f"policy {cls.__name__} failed{at}{loc}: {exc.args[0]}", *exc.args[1:])
        return None
    return policy_failure(cls, exc, callback)


def hook_error(policy: Any, hook: str, text: str) -> PolicyError:
    """The error of a bad answer of ``policy``'s hook ``hook`` (``hosts_wanted``,
    ``select_hosts``...: ``text`` says what it returned), located at the hook's ``def`` line when
    the policy's class overrides the base class's (the traceback, raised after the hook
    returned, holds no line of the policy's code). :func:`located` keeps that place."""
    cls = type(policy)
    code = getattr(getattr(cls, hook, None), "__code__", None)
    base = next((c for c in reversed(cls.__mro__) if hook in c.__dict__), None)
    if code is None or base is None or code is getattr(base.__dict__[hook], "__code__", None):
        return PolicyError(f"{hook}: {text}")
    exc = PolicyError(f"policy {cls.__name__} failed in {hook} ({code.co_filename}, line {code.co_firstlineno}): "
                      f"{text}")
    exc.policy_location = (hook, code.co_filename, code.co_firstlineno)
    return exc


def unordered_key(key: Any) -> str | None:
    """Why a queue key (``queue_key``'s answer) gives the queue no order, in words that follow
    ``"it returned KEY for job J, "``; None when it is an ordinary key. A float NaN compares
    false with every key, a tuple or list holding one orders nothing after it, and a set is
    ordered by inclusion only (``{2} < {3}`` and ``{3} < {2}`` are both False)."""
    if isinstance(key, float):
        return "which no key is before or after" if key != key else None
    if isinstance(key, (set, frozenset)):
        return "a set, and sets are ordered by inclusion only"
    if isinstance(key, (tuple, list)):
        for item in key:
            if unordered_key(item) is not None:
                return f"which holds {item!r}, {unordered_key(item)}"
    return None


def key_type_error(policy: Any, keyed: list[tuple[Any, Any]], exc: TypeError) -> PolicyError:
    """The :func:`hook_error` of ``queue_key`` answers Python cannot compare (``exc``, raised
    while the queue was sorted or a job inserted): ``keyed`` is the ``(key, job)`` pairs compared,
    of which the first pair whose keys do not compare is named."""
    a, job_a = keyed[0]
    for b, job_b in keyed[1:]:
        try:
            _ = a < b, b < a
        except TypeError:
            return hook_error(policy, "queue_key", f"it returned {a!r} for job {job_a.id} and {b!r} for job "
                                                   f"{job_b.id}, which cannot be compared ({exc}): the queue would "
                                                   "have no order")
    return hook_error(policy, "queue_key", f"it returned keys that cannot be compared ({exc}): the queue would have "
                                           "no order")


def call_policy(obj: Any, method: str, *args: Any) -> Any:
    """``getattr(obj, method)(*args)``, a failure of the policy's code raised as
    :class:`PolicyFailure` (for calls outside the hot path, e.g. ``metrics``)."""
    try:
        return getattr(obj, method)(*args)
    except (Exception, SystemExit) as exc:
        failure = located(obj, exc, method)
        if failure is None:
            raise
        raise failure from exc


def check_runnable(policy: Any, fresh: bool = False) -> None:
    """Refuse, before the simulation starts, a policy object the engine cannot run (``fresh``:
    nor one that already ran a simulation).

    Raises:
        TypeError: ``policy`` is a class (``FCFS`` for ``FCFS()``), or has no ``decide`` method.
        PolicyFailure: its class's ``__init__`` did not call ``super().__init__(options)``: the
            base class's bookkeeping (jobs, hosts, decisions) is missing, and the first event
            would fail inside gridsched's code; the message names that ``__init__``'s file and line.
        PolicyError: with ``fresh``, the object already ran a simulation (it keeps that run's
            jobs and hosts, and a second run would start from them): make a new one per run.
    """
    if isinstance(policy, type):
        raise TypeError(f"the scheduler must be a policy object, got the class {policy.__name__}: "
                        f"pass {policy.__name__}() (or get_policy(name, options))")
    if not callable(getattr(policy, "decide", None)):
        raise TypeError(f"the scheduler must be a Policy (schedulers.core.policy) or a SchedulerPort, got "
                        f"{type(policy).__name__} {repr(policy)[:60]}")
    if not isinstance(policy, Policy):
        return   # (an object of its own kind with a decide method: it keeps its own state)
    cls = type(policy)
    if "_decisions" not in vars(policy):
        init = next((c.__dict__["__init__"] for c in cls.__mro__ if "__init__" in c.__dict__), None)
        code = getattr(init, "__code__", None)
        where = f" ({code.co_filename}, line {code.co_firstlineno})" if code is not None else ""
        raise PolicyFailure(f"policy {cls.__name__} failed in __init__{where}: it does not call "
                            "super().__init__(options), which sets up the jobs, hosts and decisions of the base "
                            "class Policy", policy=cls.__name__, callback="__init__",
                            path=code.co_filename if code is not None else None,
                            line=code.co_firstlineno if code is not None else None,
                            error=AttributeError("_decisions"))
    if fresh and (policy.jobs_seen or policy.simulation_ended or policy.now):
        raise PolicyError(f"policy {cls.__name__}: this object already ran a simulation (it holds that run's jobs "
                          "and hosts); make a new policy object for each run")
