"""Tests of the Docker files: ``Dockerfile``, ``.dockerignore``, ``docker-compose.yml``.

``docker compose config`` needs the compose plugin, which CI machines do not have:
``scripts/check_compose.py`` validates the file against the Compose Specification JSON schema
(vendored by the ``check-jsonschema`` package, a test dependency) after Compose-style variable
interpolation, checks cross-references, and also runs ``docker compose config`` when it works.
The structure (services, Batsim image tag, command flags, volumes) is asserted here on the
interpolated document.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from schedulers import registry

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "check_compose.py"
COMPOSE = ROOT / "docker-compose.yml"
COMPOSE_VARS = ("POLICY", "PLATFORM", "WORKLOAD", "BATSIM_USER")


def _load_script():
    spec = importlib.util.spec_from_file_location("check_compose", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules.setdefault("check_compose", mod)
    spec.loader.exec_module(mod)
    return mod


cc = _load_script()


def run_check(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in COMPOSE_VARS}
    base.update(env or {})
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env=base)


# ------------------------------------------------------------------------------ validation
def test_compose_file_is_valid() -> None:
    r = run_check(str(COMPOSE))
    assert r.returncode == 0, r.stderr
    assert "valid" in r.stdout and "compose-spec.json" in r.stdout
    assert "warning" not in r.stderr  # every variable has a default


def test_compose_file_is_valid_with_overrides() -> None:
    r = run_check("-q", env={"POLICY": "fcfs", "PLATFORM": "g5k_lille_2020.xml", "BATSIM_USER": "1000:1000"})
    assert r.returncode == 0 and r.stdout == "", r.stderr


BAD_FILES = {
    "typo": ("services:\n  s:\n    image: x\n    imgae: y\n", "unknown or misplaced key 'imgae'"),
    "wrong_type": ("services:\n  s:\n    image: x\n    ports: 5\n", "services.s.ports"),
    "depends_on": ("services:\n  s:\n    image: x\n    depends_on: [nope]\n", "service 'nope' is not defined"),
    "no_image": ("services:\n  s:\n    command: [a]\n", "neither 'image' nor 'build'"),
    "named_volume": ("services:\n  s:\n    image: x\n    volumes: ['data:/d']\n", "named volume 'data'"),
    "build_context": ("services:\n  s:\n    build: ./missing\n", "does not exist"),
    "required_var": ("services:\n  s:\n    image: '${NOPE_VAR:?give an image}'\n", "give an image"),
    "bad_interpolation": ("services:\n  s:\n    image: 'a${'\n", "unclosed"),
    "not_a_mapping": ("- a\n- b\n", "must be a YAML mapping"),
    "bad_yaml": ("services: [\n", "not valid YAML"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_compose_files_are_rejected(name: str, tmp_path: Path) -> None:
    text, message = BAD_FILES[name]
    f = tmp_path / "docker-compose.yml"
    f.write_text(text, encoding="utf-8")
    r = run_check(str(f), "--no-docker", cwd=tmp_path)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "INVALID" in r.stderr and message in r.stderr, r.stderr


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    r = run_check(str(tmp_path / "nope.yml"))
    assert r.returncode == 2 and "cannot read" in r.stderr


def test_interpolation_rules() -> None:
    env = {"SET": "v", "EMPTY": ""}
    w: list[str] = []

    def f(s: str) -> str:
        return cc.interpolate(s, env, "x", w)

    assert f("a$$b") == "a$b"
    assert f("${SET}-$SET") == "v-v"
    assert f("${UNSET:-d}|${EMPTY:-d}|${EMPTY-d}|${UNSET-d}") == "d|d||d"
    assert f("${SET:+alt}|${EMPTY:+alt}|${EMPTY+alt}|${UNSET+alt}") == "alt||alt|"
    assert f("${UNSET:-${SET}x}") == "vx"
    assert f("${SET:?m}") == "v"
    assert w == []
    assert f("$UNSET") == "" and "UNSET is not set" in w[0]
    for bad in ("${EMPTY:?need it}", "${UNSET?need it}"):
        with pytest.raises(cc.ComposeError, match="need it"):
            f(bad)
    for bad in ("${", "${1A}", "$ x"):
        with pytest.raises(cc.ComposeError):
            f(bad)


def test_env_file_beside_the_compose_file(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("# comment\nexport IMG='img:1'\nTAG=2 # trailing\n", encoding="utf-8")
    f = tmp_path / "c.yml"
    f.write_text("services:\n  s:\n    image: ${IMG}-${TAG}\n", encoding="utf-8")
    assert cc.load_compose(f, env={})["services"]["s"]["image"] == "img:1-2"
    assert cc.load_compose(f, env={"TAG": "3"})["services"]["s"]["image"] == "img:1-3"


# ------------------------------------------------------------------------------- structure
def test_compose_structure() -> None:
    doc = cc.load_compose(COMPOSE, env={})
    services = doc["services"]
    assert set(services) == {"scheduler", "batsim"}

    sched = services["scheduler"]
    assert sched["build"]["context"] == "." and (ROOT / sched["build"]["dockerfile"]).is_file()
    # the scheduler reads the platform file Batsim runs on (host speeds and cores for the policy)
    # and is told that Batsim runs with -E (below), which Batsim's messages do not say
    assert sched["command"] == ["serve", "--policy", "easy", "--socket", "tcp://*:28000",
                                "--platform", "/data/platforms/g5k_nantes_econome.xml", "--energy"]
    assert sched["volumes"] == ["./platforms:/data/platforms:ro"]
    assert "easy" in registry.POLICIES

    bat = services["batsim"]
    assert re.fullmatch(r"oarteam/batsim:4\.\d+\.\d+", bat["image"]), bat["image"]
    assert bat["image"] == "oarteam/batsim:4.0.0"
    assert bat["depends_on"] == ["scheduler"]
    cmd = bat["command"]
    assert "entrypoint" not in bat  # the image's entrypoint is batsim itself
    flags = {cmd[i]: cmd[i + 1] for i in range(len(cmd) - 1) if cmd[i] in ("-p", "-w", "-e", "-s")}
    assert flags == {"-p": "/data/platforms/g5k_nantes_econome.xml", "-w": "/data/workloads/demo_nantes.json",
                     "-e": "/data/out/out", "-s": "tcp://scheduler:28000"}
    assert "-E" in cmd and len(cmd) == 9
    assert bat["volumes"] == ["./platforms:/data/platforms:ro", "./workloads:/data/workloads:ro", "./out:/data/out"]
    # the default inputs are shipped
    assert (ROOT / "platforms" / "g5k_nantes_econome.xml").is_file()
    assert (ROOT / "workloads" / "demo_nantes.json").is_file()


def test_compose_overrides() -> None:
    doc = cc.load_compose(COMPOSE, env={"POLICY": "fcfs", "PLATFORM": "p.xml", "WORKLOAD": "w.json",
                                        "BATSIM_USER": "1000:1000"})
    assert doc["services"]["scheduler"]["command"][2] == "fcfs"
    cmd = doc["services"]["batsim"]["command"]
    assert cmd[1] == "/data/platforms/p.xml" and cmd[3] == "/data/workloads/w.json"
    assert doc["services"]["batsim"]["user"] == "1000:1000"


def test_dockerfile() -> None:
    lines = [ln.strip() for ln in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines()
             if ln.strip() and not ln.lstrip().startswith("#")]
    assert lines[0] == "FROM python:3.11-slim"
    assert 'ENTRYPOINT ["gridsched"]' in lines
    assert any(ln.startswith("RUN pip install .") for ln in lines)
    assert "EXPOSE 28000" in lines
    copied = " ".join(ln for ln in lines if ln.startswith("COPY"))
    for needed in ("pyproject.toml", "README.md", "schedulers"):
        assert needed in copied
    ignore = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    for needed in ("!pyproject.toml", "!README.md", "!schedulers/"):
        assert needed in ignore
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["gridsched"] == "schedulers.cli:main"
