"""notebooks/analyse_run.ipynb: committed clean, and runs top to bottom (nbclient, ``python3`` kernel)
on the shipped demo workload from a fresh working directory, writing its three figures; the demo
workload itself is valid and regenerates identically from scripts/make_demo_workload.py."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "analyse_run.ipynb"
WORKLOAD = REPO / "workloads" / "demo_nantes.json"
FIGURES = ("gantt.png", "machine_states.png", "power_energy.png")
PARAMETERS = ("OUTPUT", "PLATFORM", "WORKLOAD", "POLICY", "RUN")
KERNEL = "python3"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def kernel_name() -> str:
    """The ``python3`` kernel spec, installed for this interpreter (``--user``) only if missing."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(KERNEL)
    except NoSuchKernel:
        subprocess.run([sys.executable, "-m", "ipykernel", "install", "--user", "--name", KERNEL],
                       check=True, capture_output=True)
    return KERNEL


def first_code_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if c.cell_type == "code")


def set_parameter(cell: nbformat.NotebookNode, name: str, value: object) -> None:
    """Replace the line ``NAME = ...`` of the parameters cell by ``NAME = repr(value)``."""
    source, n = re.subn(rf"^{name} = .*$", f"{name} = {value!r}", cell.source, flags=re.M)
    assert n == 1, f"the parameters cell must assign {name} exactly once"
    cell.source = source


def test_committed_notebook_is_clean_and_parametrised():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, "commit the notebook with outputs cleared"
    params = first_code_cell(nb)
    assert "parameters" in params.metadata.get("tags", [])
    for name in PARAMETERS:
        assert re.search(rf"^{name} = ", params.source, flags=re.M), name
    assert re.search(r'^OUTPUT = "out/notebook_demo"', params.source, flags=re.M)
    assert re.search(r'^POLICY = "easy"', params.source, flags=re.M)
    assert re.search(r"^RUN = True", params.source, flags=re.M)


def test_demo_workload_is_valid_and_reproducible(capsys):
    from schedulers.inputs.validate import load_workload_json

    data = load_workload_json(WORKLOAD)   # schema + references
    assert data["nb_res"] == 22 and len(data["jobs"]) == 60
    assert {j["user"] for j in data["jobs"]} == {"u1", "u2", "u3", "u4"}
    assert {p["type"] for p in data["profiles"].values()} == {"delay", "parallel_homogeneous"}
    assert all(1 <= j["res"] <= 8 for j in data["jobs"])
    spec = importlib.util.spec_from_file_location("make_demo_workload", REPO / "scripts" / "make_demo_workload.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main(["--check", "--output", str(WORKLOAD)]) == 0, capsys.readouterr().out


def test_notebook_runs_and_writes_figures(tmp_path, monkeypatch, kernel_name):
    workdir = tmp_path / "cwd"   # outside the checkout: the notebook must find the shipped inputs itself
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    out = tmp_path / "out"
    nb = nbformat.read(NOTEBOOK, as_version=4)
    set_parameter(first_code_cell(nb), "OUTPUT", str(out))

    NotebookClient(nb, timeout=300, kernel_name=kernel_name,
                   resources={"metadata": {"path": str(workdir)}}).execute()

    for name in FIGURES:
        png = out / name
        assert png.is_file(), f"{name} not written"
        data = png.read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 10_000, f"{name} is not a real figure"
    jobs = pd.read_csv(out / "out_jobs.csv")
    assert len(jobs) == 60
    assert set(jobs["final_state"]) == {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"}
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["jobs"] == 60 and summary["energy_joules"] > 0
    # the inline figures are there too (one per figure), and no cell printed a traceback
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    assert len(images) == len(FIGURES)
    assert not [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not list(workdir.iterdir()), "the notebook wrote into its working directory"
