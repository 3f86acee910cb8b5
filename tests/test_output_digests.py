"""The engine's output files and its messages to the scheduler, byte for byte, on 39 fixed cases
(``scripts/output_digests.py``: energy, idle-host shutdown, sleep pstates, compute sharing,
networked platforms and the actor model, dynamic jobs, external events, kills), against the
digests recorded in ``benchmarks/results/output_digests.json``.

The cases' outputs are those checked against real Batsim 4.2.1 elsewhere (their fixtures); these
digests keep them from moving when the engine's code is reorganised. A change of output that is
meant (a fidelity fix) re-records them with ``--save`` and says why in its commit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "batsim-examples"


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"{SHARED} is absent (Batsim's example platforms)")
def test_engine_outputs_and_messages_are_unchanged_to_the_byte() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "output_digests.py"), "--check",
                           str(ROOT / "benchmarks" / "results" / "output_digests.json")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("39/39 cases equal"), proc.stdout[-500:]
