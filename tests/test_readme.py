"""README.md is the front door: short, its two set-up commands first and unchanged (CI runs the
second one), its links and policy table true to the project, no development history."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")

MAIN_JOB = ("pip install -e . && gridsched run --policy easy --platform platforms/g5k_nantes_econome.xml "
            "--workload ../shared/data/traces/pwa-swf/KTH-SP2-1996-2.1-cln.swf.gz --fallback-workload "
            "workloads/demo_nantes.json --output out/kth-easy --energy")
TESTS = "pip install -e '.[test,pybatsim]' && pip install --no-deps pybatsim==4.0.0a0 batsim-py==1.0.5 && python -m pytest -q"


def _shell_commands(text: str) -> list[str]:
    """The commands of the ```bash blocks, in order (continuation lines joined, comments dropped)."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line and not line.startswith("#"):
                out.append(re.sub(r"\s+", " ", line))
    return out


def test_the_readme_is_at_most_about_two_hundred_lines() -> None:
    assert len(README.splitlines()) <= 200


def test_the_set_up_commands_are_the_first_two_and_ci_runs_the_second() -> None:
    assert _shell_commands(README)[:2] == [MAIN_JOB, TESTS]
    ci = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
          if ln.strip() and not ln.startswith("#")]
    assert ci[-1] == TESTS


def test_no_development_history_in_the_readme() -> None:
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", README), "a date"
    assert not re.search(r"\bsessions?\b", README, re.I), "'session'"
    assert not re.search(r"\bissues?\s+#?\d+", README, re.I), "an issue number"
    assert not re.search(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b", README), "a commit hash"


def test_every_local_link_and_picture_exists() -> None:
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    local = [t for t in targets if not re.match(r"[a-z]+://", t)]
    assert local, "no local link"
    for t in local:
        assert (ROOT / t).exists(), t


def test_the_readme_policy_is_the_tutorial_file() -> None:
    block = re.search(r"```python\n(.*?)```", README, flags=re.S).group(1)
    code = (ROOT / "docs" / "examples" / "sjf.py").read_text(encoding="utf-8").split("\n", 2)[2]
    assert block == code


def test_the_policy_table_has_every_policy_with_its_paper_in_full() -> None:
    from schedulers.references import REFERENCES
    from schedulers.registry import POLICIES

    table = README.split("## Policies", 1)[1].split("\n## ", 1)[0]
    for name in POLICIES:
        if name == "replay":   # (protocol checks, not a scheduling policy)
            continue
        row = next((ln for ln in table.splitlines() if f"`{name}`" in ln), None)
        assert row is not None, f"policy {name} is not in the README's table"
        refs = POLICIES[name].references
        if refs:
            assert REFERENCES[refs[0]].full in row, f"{name}: the full reference of {refs[0]!r}"


def test_license_files_are_the_lgpl_and_gpl_version_3_the_package_declares() -> None:
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["license"]["text"]
    assert declared == "LGPL-3.0-or-later"
    lgpl = (ROOT / "LICENSE").read_text(encoding="utf-8")
    gpl = (ROOT / "COPYING").read_text(encoding="utf-8")
    assert lgpl.split()[:7] == ["GNU", "LESSER", "GENERAL", "PUBLIC", "LICENSE", "Version", "3,"]
    assert "incorporates\nthe terms and conditions of version 3 of the GNU General Public" in lgpl
    assert gpl.split()[:6] == ["GNU", "GENERAL", "PUBLIC", "LICENSE", "Version", "3,"]


def test_citation_file_is_valid_cff_1_2_0() -> None:
    import subprocess
    import sys

    import yaml

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["license"] == "LGPL-3.0-or-later"
    import tomllib
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert cff["version"] == version
    # the CFF 1.2.0 JSON schema shipped inside check-jsonschema (no network)
    proc = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema",
                           "vendor.citation-file-format", str(ROOT / "CITATION.cff")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_test_extra_installs_what_the_documentation_build_needs() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert set(extras["docs"]) <= set(extras["test"])   # CI installs only .[test,pybatsim]


def test_a_single_policy_row_says_what_gridsched_policies_says() -> None:
    from schedulers.registry import POLICIES

    table = README.split("## Policies", 1)[1].split("\n## ", 1)[0]
    for row in table.splitlines():
        cells = row.split(" | ")
        names = re.findall(r"`([\w-]+)`", cells[0])
        if len(names) == 1 and names[0] in POLICIES:
            assert cells[1] == POLICIES[names[0]].summary, f"{names[0]}: the README and `gridsched policies` differ"
