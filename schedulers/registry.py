"""Policies by name (``--policy NAME`` on the command line, campaign descriptions)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, MutableMapping
from typing import Any

from .core.policy import Policy, PolicyOptionError

#: The built-in policies: name -> (module, class), imported when first looked up (a run imports
#: its own policy's module only: ``gridsched run`` starts sooner).
_BUILT_IN = {"fcfs": ("schedulers.fcfs", "FCFS"), "easy": ("schedulers.easy", "EASY"),
             "conservative": ("schedulers.conservative", "Conservative"),
             "osep": ("schedulers.osep", "OSEP"), "hosep": ("schedulers.hosep", "HOSEP"),
             "ehosep": ("schedulers.ehosep", "EHOSEP"), "own-share": ("schedulers.ownshare", "OwnShare"),
             "buc": ("schedulers.buc", "BUC"), "buc-easy": ("schedulers.buc", "BUCEasy"),
             "heft": ("schedulers.heft", "HEFT"), "green-easy": ("schedulers.green", "GreenEASY"),
             "green-heft": ("schedulers.green", "GreenHEFT"),
             "replay": ("schedulers.batsim.replay", "ReplayPolicy")}


class _Registry(MutableMapping):
    """Policy classes by name: a dict whose built-in entries are imported on first use."""

    def __init__(self, lazy: dict[str, tuple[str, str]]) -> None:
        self._entries: dict[str, Any] = dict(lazy)   # a class, or (module, class name) not yet imported

    def __getitem__(self, name: str) -> type[Policy]:
        got = self._entries[name]
        if isinstance(got, tuple):
            got = self._entries[name] = getattr(importlib.import_module(got[0]), got[1])
        return got

    def __setitem__(self, name: str, cls: type[Policy]) -> None:
        self._entries[name] = cls

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __repr__(self) -> str:
        return f"POLICIES({sorted(self._entries)})"


#: Every registered policy class, by :attr:`Policy.name` (a mapping; the built-in classes are
#: imported when first looked up). ``replay`` answers the decisions of a recorded transcript
#: (``--policy-options '{"transcript": "path.jsonl"}'``), for protocol checks.
POLICIES: MutableMapping = _Registry(_BUILT_IN)


def policy_class(name: str) -> type[Policy]:
    """The class registered as ``name``, or a policy of the user's own code named
    ``FILE.py:Class`` (a Python file, path absolute or relative to the working directory) or
    ``package.module:Class`` (an importable module): a :class:`Policy` subclass, used as the
    registered ones are (options, the three ways to run, campaigns).

    Raises:
        KeyError: unknown name (one line: the closest registered name when one is close, else
            the known names, and the ``FILE.py:Class`` form); a file or module that cannot be
            found or imported (the message names it, with the error and its line), or whose
            ``Class`` is missing or not a Policy.
    """
    try:
        return POLICIES[name]
    except KeyError:
        pass
    if ":" in name:
        return _user_policy(name)
    if name.endswith(".py"):
        raise KeyError(_file_without_class(name)) from None
    raise KeyError(unknown_policy_message(name)) from None


def _file_without_class(name: str) -> str:
    """The one-line error for a policy named by its file alone (``--policy mine.py``): the
    classes the file defines (read with :mod:`ast`, the file not run), to name one."""
    import ast

    try:
        with open(name, "rb") as f:
            tree = ast.parse(f.read(), name)
    except OSError:
        return f"policy {name!r}: no such Python file (a policy of your own is named FILE.py:Class)"
    except (SyntaxError, ValueError):
        tree = None
    classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)] if tree is not None else []
    which = (f": {name}:{classes[0]}" + (f" (its classes: {', '.join(classes)})" if len(classes) > 1 else "")
             if classes else "" if tree is None else " (the file defines no class)")
    return f"policy {name!r} names a file: give its class too, FILE.py:Class{which}"


def unknown_policy_message(name: str) -> str:
    """The one-line error for a policy name that is not registered: the closest registered name
    (:func:`difflib.get_close_matches`, case ignored) when one is close enough, else the list of
    registered names; and how to name a policy of one's own."""
    import difflib

    names = sorted(POLICIES)
    lower = {n.lower(): n for n in names}
    close = difflib.get_close_matches(str(name).lower(), list(lower), n=1, cutoff=0.6)
    if close:
        hint = f"did you mean {lower[close[0]]!r}? (`gridsched policies` lists them all)"
    else:
        hint = f"known policies: {', '.join(names)}"
    return (f"unknown policy {name!r}; {hint}; a policy of your own is named FILE.py:Class or "
            "package.module:Class")


def policy_summary(cls: type[Policy]) -> str:
    """What ``cls`` does, in one line: its :attr:`~Policy.summary`, else the first line of its
    class docstring, else ``""``."""
    if cls.summary:
        return " ".join(cls.summary.split())
    doc = (cls.__doc__ or "").strip().splitlines()
    return doc[0].strip() if doc else ""


def describe_policy(name: str, width: int = 100) -> str:
    """The text of ``gridsched policies NAME``: what the policy does, the works it follows (full
    references), its options with the values they take and their defaults, the Batsim features it
    needs, and where its code is.

    Raises:
        KeyError: unknown name (see :func:`policy_class`).
    """
    import textwrap

    from .core.options import describe_options
    from .core.policy import batsim_flags
    from .references import cite

    cls = policy_class(name)
    user_file = getattr(sys.modules.get(cls.__module__), "__file__", None) \
        if cls.__module__.startswith(_USER_PREFIX) else None
    where = f"{user_file}:{cls.__qualname__}" if user_file else f"{cls.__module__}.{cls.__qualname__}"

    def para(text: str, indent: str = "  ") -> list[str]:
        return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent) or [indent.rstrip()]

    out = [f"{name}: {where}", *para(policy_summary(cls) or "(no description)")]
    out += ["", "Sources:"]
    refs = cite(cls.references) if cls.references else []
    for ref in refs:
        out += textwrap.wrap(ref, width, initial_indent="  - ", subsequent_indent="    ")
    if not refs:
        out += para("none cited by the policy")
    out += ["", "Options (--policy-options JSON object, or a campaign's [[policy]] options):"]
    for opt, kind, default, doc in describe_options(cls.option_docs):
        head = f"  {opt}: {kind or 'see the description'}; default: {default or 'see the description'}"
        out += textwrap.wrap(head, width, subsequent_indent="      ") + para(doc, "      ")
    if not cls.option_docs:
        out += para("none")
    flags = batsim_flags(cls)
    if flags:
        out += ["", "Needs Batsim's " + " and ".join(flags) + " (gridsched run and campaigns set them)."]
    if cls.needs_speeds:
        out += ["", "Reads host speeds and cores: behind real Batsim, give `gridsched serve --platform FILE`."]
    if not user_file:
        out += ["", f"More: the docstring of {cls.__module__} (python -m pydoc {cls.__module__})."]
    return "\n".join(out)


_USER_POLICIES: dict[tuple[str, int], type[Policy]] = {}
#: The module name prefix of a policy file imported by path (``FILE.py:Class``).
_USER_PREFIX = "gridsched_user_"


def _user_policy(name: str) -> type[Policy]:
    """The :class:`Policy` subclass ``name`` = ``FILE.py:Class`` or ``module:Class`` names,
    imported once per process and version of its file: a file edited since is imported again
    (a long-lived process, such as a Dask worker of ``--scheduler-address`` or a notebook, runs
    the code the file holds now, as a new process would)."""
    import importlib.util
    import zlib
    from pathlib import Path

    where, _, attr = name.rpartition(":")
    if not where or not attr.isidentifier():
        raise KeyError(f"policy {name!r}: expected FILE.py:Class or package.module:Class")
    if where.endswith(".py") or "/" in where or "\\" in where:
        path = Path(where).expanduser().resolve()
        try:
            source = path.read_bytes()
        except OSError:
            raise KeyError(f"policy {name!r}: {where}: no such Python file") from None
        version = zlib.crc32(source)
        cls = _USER_POLICIES.get((name, version))
        if cls is not None:
            return cls
        # the same name in every process for one version of the file (str hashes are salted
        # per process: not hash())
        modname = f"{_USER_PREFIX}{zlib.crc32(str(path).encode()):08x}_{version:08x}_{path.stem}"
        what = str(path)
        try:
            spec = importlib.util.spec_from_file_location(modname, path)
            if spec is None or spec.loader is None:   # (a file name without the .py suffix)
                raise ImportError("Python imports only files named *.py")
            module = importlib.util.module_from_spec(spec)
            sys.modules[modname] = module   # (dataclasses, pickling and dask workers look it up)
            # the bytes read above, not a bytecode cache that an edit within a second may leave
            exec(compile(source, str(path), "exec"), module.__dict__)
        except (Exception, SystemExit) as exc:   # (a sys.exit() at import: the file's failure too)
            sys.modules.pop(modname, None)
            raise KeyError(f"policy {name!r}: importing {what} failed: {_where(exc, path)}") from None
    else:
        what = where
        try:
            module = importlib.import_module(where)
            version = _source_version(module)
            cls = _USER_POLICIES.get((name, version))
            if cls is not None:
                return cls
            if any(n == name for n, _ in _USER_POLICIES):   # (its source changed since: import it again)
                module = importlib.reload(module)
        except (Exception, SystemExit) as exc:
            if isinstance(exc, ModuleNotFoundError) and exc.name == where.strip("/") and Path(where).is_dir():
                raise KeyError(f"policy {name!r}: {where} is a folder; name a file of it: "
                               f"{where.rstrip('/')}/FILE.py:{attr}") from None
            raise KeyError(f"policy {name!r}: importing module {where!r} failed: {_where(exc, None)}") from None
    cls = getattr(module, attr, None)
    if cls is None:
        raise KeyError(f"policy {name!r}: {what} defines no {attr!r}")
    if not (isinstance(cls, type) and issubclass(cls, Policy)):
        raise KeyError(f"policy {name!r}: {attr} in {what} is not a subclass of "
                       "schedulers.core.policy.Policy")
    _USER_POLICIES[(name, version)] = cls
    return cls


def _source_version(module: Any) -> int:
    """A checksum of ``module``'s source file (0 when it has none, or it cannot be read)."""
    import zlib

    try:
        with open(module.__file__, "rb") as f:
            return zlib.crc32(f.read())
    except (OSError, TypeError, AttributeError):
        return 0


def _where(exc: BaseException, path: Any) -> str:
    """``exc`` in one line, with the file and line of user code where it was raised."""
    text = f"{type(exc).__name__}: {exc}".splitlines()[0]
    if isinstance(exc, SyntaxError):
        return text
    tb = exc.__traceback__
    line = None
    while tb is not None:
        f = tb.tb_frame.f_code.co_filename
        if (f == str(path)) if path is not None else not (f.startswith("<frozen") or "importlib" in f
                                                          or f == __file__):   # (not gridsched's own call)
            line = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return f"{text} ({line[0]}, line {line[1]})" if line else text


def check_options(name: str, options: dict[str, Any] | None) -> None:
    """Check that ``options`` only holds keys that policy ``name`` declares in
    :attr:`Policy.option_docs`.

    Raises:
        KeyError: unknown policy. PolicyOptionError: an unknown option key (or options that are
        not a mapping); the message lists the policy's options.
    """
    cls = policy_class(name)
    if options is None:
        return
    if not isinstance(options, dict):
        raise PolicyOptionError(f"policy {name!r}: options must be a JSON object / TOML table, "
                                f"got {type(options).__name__}")
    unknown = sorted(set(options) - set(cls.option_docs))
    if unknown:
        known = ", ".join(sorted(cls.option_docs)) or "none"
        raise PolicyOptionError(f"policy {name!r} has no option {', '.join(map(repr, unknown))}; "
                                f"its options: {known}")


def get_policy(name: str, options: dict[str, Any] | None = None) -> Policy:
    """A new instance of the policy registered as ``name``.

    Args:
        name: registered name (see :data:`POLICIES`).
        options: policy options (``--policy-options`` JSON), passed to the constructor; every key
            must be one of the policy's :attr:`~Policy.option_docs`.

    Raises:
        KeyError: unknown name; the message lists the known names.
        PolicyOptionError: an option the policy does not read, or a bad value (the policy's
            constructor checks values).
        PolicyFailure: the constructor raised another exception or called ``sys.exit()``, or
            did not call ``super().__init__(options)`` (:mod:`schedulers.core.failure`: the class,
            ``__init__``, the file and line).
    """
    from .core.failure import check_runnable, located

    check_options(name, options)
    cls = policy_class(name)
    try:
        policy = cls(options)
    except (Exception, SystemExit) as exc:
        failure = located(cls, exc, "__init__")
        if failure is None:
            raise
        raise failure from exc
    check_runnable(policy)   # (its __init__ called the base class's)
    return policy
