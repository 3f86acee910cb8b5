#!/usr/bin/env python3
"""Validate docker-compose files without Docker: what ``docker compose config`` checks, offline.

    python scripts/check_compose.py                      # ./docker-compose.yml
    python scripts/check_compose.py path/compose.yml --env-file .env.test -q
    python scripts/check_compose.py --print              # the resolved file, as YAML

Exit status: 0 valid; 1 invalid (one line per problem on stderr); 2 cannot check (file missing,
dependency missing, unreadable YAML).

How (a fresh Debian + Python 3.11 machine has neither the compose plugin nor a Docker daemon):

1. the file is read with PyYAML;
2. variables are interpolated as Compose does (Compose specification, "Interpolation":
   ``$VAR``, ``${VAR}``, ``${VAR:-default}``, ``${VAR-default}``, ``${VAR:?error}``,
   ``${VAR?error}``, ``${VAR:+alt}``, ``${VAR+alt}``, ``$$`` for ``$``, nested defaults), from the
   environment and a ``.env`` file beside the compose file (the environment wins); an unset
   variable without default becomes "" with a warning, as in Compose;
3. the result is validated against the **Compose Specification JSON schema**
   (``compose-spec.json``, https://github.com/compose-spec/compose-spec) as vendored by the PyPI
   package ``check-jsonschema`` (``check_jsonschema/builtin_schemas/vendor/compose-spec.json``,
   its ``vendor.compose-spec`` built-in schema), with ``jsonschema``; ``--schema FILE`` uses
   another copy;
4. the cross-references Compose resolves are checked: every service has ``image`` or ``build``,
   ``depends_on``/``links``/``extends`` name defined services, named volumes/networks/secrets/
   configs used by services are declared, a local ``build.context`` exists with its Dockerfile;
5. when a working ``docker compose`` (plugin) or ``docker-compose`` command is on PATH and
   ``--no-docker`` is not given, ``docker compose -f FILE config --quiet`` is run too (60 s max)
   and must succeed.

Dependencies: ``PyYAML``, ``jsonschema``, ``check-jsonschema`` (gridsched's ``test`` extra).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.resources
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])(.*))?", re.S)


class ComposeError(ValueError):
    """The compose file is invalid (message: where and what)."""


# ------------------------------------------------------------------------------ interpolation
def read_env_file(path: Path) -> dict[str, str]:
    """Variables of a ``.env`` file (``KEY=VALUE`` lines, ``#`` comments, optional quotes and
    ``export``); {} when the file does not exist."""
    env: dict[str, str] = {}
    if not path.is_file():
        return env
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not _NAME.fullmatch(key):
            raise ComposeError(f"{path}:{n}: expected KEY=VALUE, got {line!r}")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        env[key] = value
    return env


def interpolate(text: str, env: dict[str, str], where: str, warnings: list[str]) -> str:
    """Compose variable interpolation of one string (see the module docstring).

    Raises:
        ComposeError: malformed expression, or ``${VAR:?msg}``/``${VAR?msg}`` with VAR unset.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c != "$":
            out.append(c)
            i += 1
            continue
        if i + 1 < n and text[i + 1] == "$":
            out.append("$")
            i += 2
            continue
        if i + 1 < n and text[i + 1] == "{":
            depth, j = 1, i + 2
            while j < n and depth:
                if text[j] == "{":
                    depth += 1
                elif text[j] == "}":
                    depth -= 1
                j += 1
            if depth:
                raise ComposeError(f"{where}: unclosed '${{' in {text!r}")
            out.append(_expand(text[i + 2:j - 1], env, where, warnings, text))
            i = j
            continue
        m = _NAME.match(text, i + 1)
        if m is None:
            raise ComposeError(f"{where}: invalid interpolation in {text!r} (use $$ for a literal $)")
        out.append(_lookup(m.group(), env, where, warnings))
        i = m.end()
    return "".join(out)


def _lookup(name: str, env: dict[str, str], where: str, warnings: list[str]) -> str:
    if name not in env:
        warnings.append(f"{where}: variable {name} is not set, defaulting to a blank string")
        return ""
    return env[name]


def _expand(expr: str, env: dict[str, str], where: str, warnings: list[str], text: str) -> str:
    m = _BRACED.fullmatch(expr)
    if m is None:
        raise ComposeError(f"{where}: invalid interpolation format ${{{expr}}} in {text!r}")
    name, op, arg = m.group(1), m.group(2), m.group(3)
    if op is None:
        return _lookup(name, env, where, warnings)
    value = env.get(name)
    is_set = value is not None
    non_empty = bool(value)
    ok = non_empty if op.startswith(":") else is_set
    kind = op[-1]
    if kind == "-":
        return value if ok else interpolate(arg, env, where, warnings)  # type: ignore[return-value]
    if kind == "+":
        return interpolate(arg, env, where, warnings) if ok else ""
    # "?": required variable
    if not ok:
        msg = interpolate(arg, env, where, warnings) or f"variable {name} is required"
        raise ComposeError(f"{where}: required variable {name} is missing a value: {msg}")
    return value  # type: ignore[return-value]


def interpolate_tree(node: Any, env: dict[str, str], warnings: list[str], where: str = "") -> Any:
    """Interpolate every string value of a parsed compose document (keys are left as they are)."""
    if isinstance(node, dict):
        return {k: interpolate_tree(v, env, warnings, f"{where}.{k}" if where else str(k)) for k, v in node.items()}
    if isinstance(node, list):
        return [interpolate_tree(v, env, warnings, f"{where}[{i}]") for i, v in enumerate(node)]
    if isinstance(node, str):
        return interpolate(node, env, where or "<root>", warnings)
    return node


def load_compose(path: str | os.PathLike[str], env: dict[str, str] | None = None,
                 env_file: str | os.PathLike[str] | None = None,
                 warnings: list[str] | None = None) -> dict[str, Any]:
    """Read and interpolate a compose file.

    Args:
        path: the compose file.
        env: variables (default: ``os.environ``), overriding those of the env file.
        env_file: ``.env`` file (default: ``.env`` beside the compose file, if any).
        warnings: list receiving interpolation warnings (unset variables).

    Returns:
        The interpolated document (a dict).

    Raises:
        OSError: unreadable file. ComposeError: not a YAML mapping, or bad interpolation.
    """
    import yaml

    p = Path(path)
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ComposeError(f"{p}: not valid YAML: {exc}") from None
    if not isinstance(doc, dict):
        raise ComposeError(f"{p}: a compose file must be a YAML mapping, got {type(doc).__name__}")
    variables = read_env_file(Path(env_file) if env_file is not None else p.parent / ".env")
    variables.update(os.environ if env is None else env)
    return interpolate_tree(doc, variables, warnings if warnings is not None else [])


# ------------------------------------------------------------------------------ validation
def compose_schema(schema_path: str | os.PathLike[str] | None = None) -> tuple[dict[str, Any], str]:
    """The Compose Specification JSON schema and a description of where it came from.

    Raises:
        ModuleNotFoundError: no ``schema_path`` and check-jsonschema is not installed.
    """
    if schema_path is not None:
        return json.loads(Path(schema_path).read_text(encoding="utf-8")), str(schema_path)
    res = importlib.resources.files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json")
    version = importlib.metadata.version("check-jsonschema")
    return json.loads(res.read_text(encoding="utf-8")), f"compose-spec.json vendored by check-jsonschema {version}"


def _path(parts: Any) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "<root>"


def schema_errors(doc: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """Messages of every violation of ``schema`` by ``doc`` (``services.x.command: ...``)."""
    import jsonschema

    cls = jsonschema.validators.validator_for(schema)
    validator = cls(schema)
    errors = [jsonschema.exceptions.best_match([e]) for e in validator.iter_errors(doc)]
    errors.sort(key=lambda e: [str(x) for x in e.absolute_path])
    paths = {tuple(e.absolute_path) for e in errors}
    out = []
    for err in errors:
        path = tuple(err.absolute_path)
        if err.validator == "unevaluatedProperties" and isinstance(err.instance, dict):
            # When a sibling key is invalid, its whole allOf branch fails and every key of that
            # branch is reported "unevaluated". Re-check the object without the keys that have
            # errors of their own: what is still unevaluated is really unknown.
            bad = {p[len(path)] for p in paths if len(p) > len(path) and p[:len(path)] == path}
            rest = {k: v for k, v in err.instance.items() if k not in bad}
            names = sorted({n for e in validator.evolve(schema=err.schema).iter_errors(rest)
                            if e.validator == "unevaluatedProperties" and not e.absolute_path
                            for n in re.findall(r"'([^']*)'", e.message)} & set(rest))
            if not names:
                continue
            out.append(f"{_path(path)}: unknown or misplaced key{'s' if len(names) > 1 else ''} "
                       f"{', '.join(repr(n) for n in names)}")
            continue
        out.append(f"{_path(path)}: {err.message}")
    return out


def _as_names(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [str(k) for k in value]
    if isinstance(value, list):
        return [v if isinstance(v, str) else str(v.get("source", v.get("target", ""))) if isinstance(v, dict) else str(v)
                for v in value]
    return []


def _volume_sources(service: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(kind, source) of each volume entry: kind 'named', 'bind' or 'other'."""
    for v in service.get("volumes", []) or []:
        if isinstance(v, str):
            source = v.split(":", 1)[0] if ":" in v else ""
            if not source:
                continue  # anonymous volume
            kind = "bind" if source.startswith((".", "/", "~")) or "$" in source else "named"
            yield kind, source
        elif isinstance(v, dict):
            t = v.get("type", "volume")
            src = v.get("source")
            if t == "volume" and src:
                yield "named", str(src)
            elif t == "bind" and src:
                yield "bind", str(src)


def reference_errors(doc: dict[str, Any], base: Path) -> list[str]:
    """Cross-reference problems Compose would report (see the module docstring, point 4)."""
    errs: list[str] = []
    services = doc.get("services") or {}
    if not isinstance(services, dict):
        return errs
    declared = {k: set((doc.get(k) or {}).keys()) if isinstance(doc.get(k), dict) else set()
                for k in ("volumes", "networks", "secrets", "configs")}
    for name, svc in services.items():
        if not isinstance(svc, dict):
            continue
        where = f"services.{name}"
        if "image" not in svc and "build" not in svc and "extends" not in svc and "provider" not in svc:
            errs.append(f"{where}: has neither 'image' nor 'build'")
        for key in ("depends_on", "links"):
            for dep in _as_names(svc.get(key)):
                dep = dep.split(":", 1)[0] if key == "links" else dep
                if dep not in services:
                    errs.append(f"{where}.{key}: service {dep!r} is not defined")
                elif dep == name:
                    errs.append(f"{where}.{key}: a service cannot depend on itself")
        ext = svc.get("extends")
        if isinstance(ext, dict) and "file" not in ext and ext.get("service") not in services:
            errs.append(f"{where}.extends: service {ext.get('service')!r} is not defined")
        for kind, src in _volume_sources(svc):
            if kind == "named" and src not in declared["volumes"]:
                errs.append(f"{where}.volumes: named volume {src!r} is not declared in the top-level 'volumes'")
        nets = svc.get("networks")
        for net in _as_names(nets):
            if net != "default" and net not in declared["networks"]:
                errs.append(f"{where}.networks: network {net!r} is not declared in the top-level 'networks'")
        for key in ("secrets", "configs"):
            for ref in _as_names(svc.get(key)):
                if ref not in declared[key]:
                    errs.append(f"{where}.{key}: {ref!r} is not declared in the top-level {key!r}")
        build = svc.get("build")
        if build is not None:
            context = build if isinstance(build, str) else (build.get("context", ".") if isinstance(build, dict) else ".")
            if isinstance(context, str) and "://" not in context and not context.startswith("git@"):
                ctx = (base / context).resolve()
                if not ctx.is_dir():
                    errs.append(f"{where}.build.context: directory {context!r} does not exist")
                elif isinstance(build, dict) and "dockerfile_inline" in build:
                    pass
                else:
                    dockerfile = build.get("dockerfile", "Dockerfile") if isinstance(build, dict) else "Dockerfile"
                    if not (ctx / str(dockerfile)).is_file():
                        errs.append(f"{where}.build.dockerfile: {dockerfile!r} not found in {context!r}")
    return errs


def docker_compose_command() -> list[str] | None:
    """``["docker", "compose"]`` or ``["docker-compose"]`` when one works here, else None."""
    candidates = []
    if shutil.which("docker"):
        candidates.append(["docker", "compose"])
    if shutil.which("docker-compose"):
        candidates.append(["docker-compose"])
    for cmd in candidates:
        try:
            r = subprocess.run(cmd + ["version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0:
            return cmd
    return None


def check(path: str | os.PathLike[str], *, env_file: str | os.PathLike[str] | None = None,
          schema_path: str | os.PathLike[str] | None = None, use_docker: bool = True) -> tuple[list[str], list[str], list[str]]:
    """Validate one compose file.

    Returns:
        ``(errors, warnings, notes)``: errors make it invalid; notes say what was checked.

    Raises:
        OSError: unreadable file. ModuleNotFoundError: a dependency is missing.
    """
    p = Path(path)
    warnings: list[str] = []
    notes: list[str] = []
    try:
        doc = load_compose(p, env_file=env_file, warnings=warnings)
    except ComposeError as exc:
        return [str(exc)], warnings, notes
    schema, origin = compose_schema(schema_path)
    notes.append(f"schema: {origin}")
    errors = schema_errors(doc, schema)
    errors += reference_errors(doc, p.resolve().parent)
    if use_docker:
        cmd = docker_compose_command()
        if cmd is None:
            notes.append("docker compose: not available here (schema validation only)")
        else:
            full = cmd + ["-f", str(p), "config", "--quiet"]
            try:
                r = subprocess.run(full, capture_output=True, text=True, timeout=60)
            except subprocess.TimeoutExpired:
                errors.append(f"`{' '.join(full)}` did not finish within 60 s")
            else:
                notes.append(f"docker compose: `{' '.join(full)}` exit {r.returncode}")
                if r.returncode != 0:
                    errors.append(f"`{' '.join(full)}` failed: {(r.stderr or r.stdout).strip()}")
    return errors, warnings, notes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Validate docker-compose files against the Compose Specification "
                                             "(no Docker needed).")
    ap.add_argument("files", nargs="*", default=["docker-compose.yml"], help="compose files (default: docker-compose.yml)")
    ap.add_argument("--env-file", help="variables file (default: .env beside each compose file)")
    ap.add_argument("--schema", help="compose-spec JSON schema to use instead of check-jsonschema's copy")
    ap.add_argument("--no-docker", action="store_true", help="do not run `docker compose config` even if available")
    ap.add_argument("--print", action="store_true", help="print the interpolated file(s) as YAML")
    ap.add_argument("-q", "--quiet", action="store_true", help="print nothing when valid")
    args = ap.parse_args(argv)
    status = 0
    for f in args.files:
        try:
            errors, warnings, notes = check(f, env_file=args.env_file, schema_path=args.schema,
                                            use_docker=not args.no_docker)
        except ModuleNotFoundError as exc:
            print(f"check_compose: cannot check {f}: missing Python package {exc.name!r}; install the test "
                  f"dependencies: pip install -e '.[test]' (PyYAML, jsonschema, check-jsonschema)", file=sys.stderr)
            return 2
        except OSError as exc:
            print(f"check_compose: cannot read {f}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        for w in warnings:
            print(f"{f}: warning: {w}", file=sys.stderr)
        if errors:
            status = 1
            print(f"{f}: INVALID ({len(errors)} problem{'s' if len(errors) > 1 else ''})", file=sys.stderr)
            for e in errors:
                print(f"{f}: {e}", file=sys.stderr)
        elif not args.quiet:
            print(f"{f}: valid ({'; '.join(notes)})")
        if args.print and not errors:
            import yaml

            print(yaml.safe_dump(load_compose(f, env_file=args.env_file), sort_keys=False), end="")
    return status


if __name__ == "__main__":
    sys.exit(main())
