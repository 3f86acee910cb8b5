"""The documentation site: it builds with warnings as errors, its generated pages hold what the
code defines, and the tutorial's policies (``docs/examples/``) give the start times that
``docs/tutorial/writing-a-policy.md`` works out by hand."""

from __future__ import annotations

import csv
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from schedulers.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"
PLATFORM = EXAMPLES / "four_hosts.xml"
WORKLOAD = EXAMPLES / "tutorial.json"

_spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
hooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hooks)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built as the documentation says (``mkdocs build --strict``), into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    took = time.monotonic() - t0
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    assert took < 120, f"the documentation build took {took:.0f} s"
    return out


def _text(site: Path, page: str) -> str:
    return (site / page / "index.html").read_text(encoding="utf-8")


def test_the_site_builds_strictly_and_every_nav_page_is_there(site: Path) -> None:
    import yaml

    def pages(nav):
        for item in nav:
            for v in (item.values() if isinstance(item, dict) else [item]):
                yield from (pages(v) if isinstance(v, list) else [v])

    class Loader(yaml.SafeLoader):   # mkdocs.yml may use !!python tags; none are needed here
        pass
    nav = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)["nav"]
    for md in pages(nav):
        html = site / (md.removesuffix(".md").removesuffix("index") + "/index.html").lstrip("/")
        assert html.is_file(), f"{md}: no page built at {html}"


def test_the_cli_reference_has_every_command_and_option(site: Path) -> None:
    from schedulers.cli import build_parser
    import argparse

    html = _text(site, "reference/cli")
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in sub.choices.items():
        assert f"gridsched {name}" in html, name
        for action in p._actions:
            if action.help == argparse.SUPPRESS:
                continue
            for flag in action.option_strings:
                assert flag in html, f"gridsched {name} {flag} is not in the CLI reference"


def test_the_policy_reference_lists_every_policy_and_option(site: Path) -> None:
    from schedulers.registry import POLICIES

    html = _text(site, "reference/policies")
    for name in POLICIES:
        assert f'id="{name}"' in html, name
        for opt in POLICIES[name].option_docs:
            assert f"<code>{opt}</code>" in html, (name, opt)


def test_the_bibliography_has_the_anchors_the_pages_link_to(site: Path) -> None:
    html = _text(site, "bibliography")
    for key in ("osep", "hosep", "ehosep", "buc", "green", "easy", "conservative", "heft"):
        assert f'id="{key}"' in html, key


def test_every_built_in_option_says_its_values_and_default() -> None:
    from schedulers.core.options import describe_options
    from schedulers.registry import POLICIES

    for name in POLICIES:
        for opt, kind, default, doc in describe_options(POLICIES[name].option_docs):
            assert kind and default and doc, f"policy {name!r}, option {opt!r}: values, default or text missing"


def test_no_option_text_cites_a_paper_by_the_number_of_a_file() -> None:
    """`gridsched policies NAME` is read by users who never saw ../shared/papers: an option's text
    names the paper, not its file number and line (``002 L168-169``)."""
    import re

    from schedulers.core.options import describe_options
    from schedulers.registry import POLICIES

    for name in POLICIES:
        for opt, _kind, _default, doc in describe_options(POLICIES[name].option_docs):
            assert not re.search(r"\b00[0-4] (L\d|§|Fig|Table|eq)", doc), f"policy {name!r}, option {opt!r}: {doc}"


def test_an_unknown_marker_is_an_error_not_an_empty_page() -> None:
    assert "gridsched run" in hooks.expand("<!-- generated: cli -->")
    with pytest.raises(ValueError, match="unknown generated section 'clii'"):
        hooks.expand("<!-- generated: clii -->")


# ----------------------------------------------------------------------------------- the tutorial
def _starts(tmp_path: Path, policy: str, *options: str) -> dict[str, float]:
    out = tmp_path / policy.replace("/", "_").replace(":", "_")
    code = main(["run", "--policy", policy, "-p", str(PLATFORM), "-w", str(WORKLOAD), "-o", str(out),
                 "--no-progress", *options])
    assert code == 0
    with open(out / "out_jobs.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert {r["final_state"] for r in rows} == {"COMPLETED_SUCCESSFULLY"}
    return {r["job_id"]: float(r["starting_time"]) for r in rows}


# Start times (s) worked out by hand on the tutorial page (jobs 1 and 2 start at 0 s under every
# policy; job 3 needs the four hosts and starts when job 1 ends, 590 s).
TUTORIAL = [
    ("fcfs", (), {"4": 780.0, "5": 780.0}),
    ("docs/examples/sjf.py:ShortestJobFirst", (), {"4": 780.0, "5": 90.0}),
    ("easy", (), {"4": 90.0, "5": 330.0}),
    ("docs/examples/easy_sjf.py:EasySJF", (), {"4": 230.0, "5": 90.0}),
    ("docs/examples/easy_ordered.py:EasyOrdered", (), {"4": 230.0, "5": 90.0}),
    ("docs/examples/easy_ordered.py:EasyOrdered", ("--policy-options", '{"by": "hosts"}'), {"4": 90.0, "5": 330.0}),
]


@pytest.mark.parametrize("policy, options, later", TUTORIAL)
def test_the_tutorial_policies_start_the_jobs_when_the_page_says(tmp_path, monkeypatch, policy, options, later):
    monkeypatch.chdir(ROOT)   # the page's commands run from the project folder
    starts = _starts(tmp_path, policy, *options)
    assert starts == {"1": 0.0, "2": 0.0, "3": 590.0, **later}


def test_the_tutorial_option_refuses_a_value_it_does_not_know(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    code = main(["run", "--policy", "docs/examples/easy_ordered.py:EasyOrdered", "--policy-options",
                 '{"by": "area"}', "-p", str(PLATFORM), "-w", str(WORKLOAD), "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == ("gridsched: error: policy 'easy-ordered': option 'by' must be one of 'walltime', 'hosts', "
                   "got 'area'")


def test_the_tutorial_test_file_passes_as_the_page_runs_it() -> None:
    """``python -m pytest docs/examples/test_sjf.py`` from the project folder, as the tutorial's
    section "Testing a policy" runs it: its three tests (start times worked out by hand) pass."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "docs/examples/test_sjf.py"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout


def test_the_shortest_job_first_example_is_about_twenty_lines() -> None:
    code = [ln for ln in (EXAMPLES / "sjf.py").read_text(encoding="utf-8").splitlines()
            if ln.strip() and not ln.lstrip().startswith(("#", '"""', "import", "from"))]
    assert len(code) <= 22, len(code)


def test_the_campaign_reference_names_every_key_the_reader_accepts() -> None:
    # docs/reference/campaign-toml.md renders schedulers.campaign.spec's docstring: every key the
    # reader checks (spec._TOP, [[policy]] and [[scenario]] keys) must be in it
    import re

    import schedulers.campaign.spec as spec

    doc = spec.__doc__
    src = (ROOT / "schedulers" / "campaign" / "spec.py").read_text(encoding="utf-8")
    keys = set(spec._TOP)
    for group in re.findall(r"c\.keys\(t, \{([^}]*)\}", src):
        keys |= set(re.findall(r'"([a-z_]+)"', group))
    missing = sorted(k for k in keys if not re.search(rf"(^|\s|\[|\.){k}\b", doc, re.M))
    assert not missing, f"keys the campaign reader accepts but its docstring does not show: {missing}"


def test_every_option_of_the_cli_reference_is_said_in_words() -> None:
    """An option described only by its default (``--interarrival INTERARRIVAL: default 4.0``), and
    argparse's ``%%`` escape shown as it is (``95 %% CI``), are what the reference must not hold."""
    import re

    text = hooks.cli_reference()
    assert "%%" not in text
    bare = [ln for ln in text.splitlines() if re.match(r"- `[^`]*`: (default |see the description)", ln)]
    assert not bare, f"options without words: {bare}"
    assert "mean, standard deviation and 95 % Student-t confidence interval" in text   # campaign collect
    # a usage's continuation lines line up under the first argument, as in `--help` (they were
    # indented by the width of the "usage: " that the page leaves out)
    lines = text.splitlines()
    k = lines.index("gridsched campaign run [-h] [--out OUT]")
    assert lines[k + 1] == " " * len("gridsched campaign run ") + "[--scheduler-address SCHEDULER_ADDRESS]"


GETTING_STARTED = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")


def test_the_main_job_summary_on_the_page_is_as_gridsched_run_prints_it() -> None:
    """The page's summary block, but its first line, is what :meth:`RunSummary.format` prints for
    the numbers it shows (the thousands separators included)."""
    from schedulers.core.metrics import RunSummary

    block = GETTING_STARTED.split("then a summary:\n\n```text\n", 1)[1].split("```", 1)[0]
    shown = block.splitlines()[1:]
    summary = RunSummary(jobs=28467, success=27954, killed=513, rejected=0, makespan=28763776.0,
                         mean_waiting_time=633.9, mean_bounded_slowdown=9.582, max_waiting_time=139716.0,
                         utilisation=0.461, energy_joules=63280307200.0, energy_kwh=17577.863)
    assert shown == summary.format().splitlines()


def test_the_getting_started_page_lists_every_exit_status_and_extra() -> None:
    import tomllib

    from schedulers.exits import STATUSES

    table = [ln for ln in GETTING_STARTED.splitlines() if ln.startswith("| ")]
    cli_page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8").split("<!--", 1)[0]
    for code, _ in STATUSES:
        assert any(ln.startswith(f"| {code} |") for ln in table), f"exit status {code} is not in the table"
        assert f" {code} " in cli_page.replace("\n", " "), f"exit status {code} is not on the CLI page"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    sentence = GETTING_STARTED.split("Extras: ", 1)[1].split("\n\n", 1)[0]
    for extra in extras:
        assert f"`{extra}`" in sentence, f"the extra {extra!r} is not on the getting-started page"


@pytest.mark.parametrize("options, kwh, wait", [(None, "2.967", "129.5"), ('{"idle_timeout": 300}', "2.719", "170.0")])
def test_the_idle_shutdown_page_example_gives_what_real_batsim_gives(tmp_path, options, kwh, wait) -> None:
    """docs/guides/idle-shutdown.md's command, with and without the option. Energy and mean waiting
    time recorded from real Batsim 4.2.1 (`gridsched run --engine batsim --energy --policy easy -p
    platforms/g5k_nantes_econome.xml -w workloads/demo_nantes.json [--policy-options
    '{"idle_timeout": 300}']`, batsim 4.2.1 on PATH): 10,680,100.000002 J and 129.47 s without,
    9,787,687.650801 J and 170.025333 s with; the page quotes them in kWh (/ 3.6e6) and s."""
    import json

    page = (ROOT / "docs" / "guides" / "idle-shutdown.md").read_text(encoding="utf-8")
    assert f"{kwh} kWh" in page and f"{wait} s" in page
    argv = ["run", "--energy", "--policy", "easy", "-p", str(ROOT / "platforms" / "g5k_nantes_econome.xml"),
            "-w", str(ROOT / "workloads" / "demo_nantes.json"), "-o", str(tmp_path / "out"), "--no-progress"]
    assert main(argv + (["--policy-options", options] if options else [])) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    recorded = {None: (10_680_100.000002, 129.47), '{"idle_timeout": 300}': (9_787_687.650801, 170.025333)}[options]
    assert summary["energy_joules"] == pytest.approx(recorded[0], abs=1e-3)
    assert summary["mean_waiting_time"] == pytest.approx(recorded[1], abs=1e-6)
    assert f"{summary['energy_kwh']:.3f}" == kwh and f"{summary['mean_waiting_time']:.1f}" == wait


def test_the_external_events_page_example_gives_what_real_batsim_gives(tmp_path, capsys) -> None:
    """docs/guides/external-events.md's command on docs/examples/failures.txt. Makespan and mean
    waiting time recorded from real Batsim 4.2.1 (`gridsched run --engine batsim --policy easy -p
    platforms/g5k_nantes_econome.xml -w workloads/demo_nantes.json --events
    docs/examples/failures.txt --forward-unknown-events`, batsim 4.2.1 on PATH): 4883.4 s and
    160.551667 s (out_schedule.csv); without the events 4771.8 s and 129.47 s (as the idle-shutdown
    test above). Without --forward-unknown-events the file is refused (real Batsim aborts on
    "Unknown event type: rack_maintenance")."""
    import json

    page = (ROOT / "docs" / "guides" / "external-events.md").read_text(encoding="utf-8")
    assert "4,883.4 s" in page and "160.6 s" in page and "4,771.8 s" in page and "129.5 s" in page
    argv = ["run", "--policy", "easy", "-p", str(ROOT / "platforms" / "g5k_nantes_econome.xml"),
            "-w", str(ROOT / "workloads" / "demo_nantes.json"), "--events", str(EXAMPLES / "failures.txt"),
            "--no-progress"]
    assert main(argv + ["--forward-unknown-events", "-o", str(tmp_path / "out")]) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["makespan"] == pytest.approx(4883.4, abs=1e-6)
    assert summary["mean_waiting_time"] == pytest.approx(160.551667, abs=1e-6)
    capsys.readouterr()
    assert main(argv + ["-o", str(tmp_path / "refused")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gridsched: error: ") and "line 3: unknown event type 'rack_maintenance'" in err
