"""``scripts/compare_with_batsim.py --suite protocol`` runs Batsim's command line with
``scripts/protocol_scheduler.py`` (a scheduler speaking the protocol itself): the arguments drawn
are ``gridsched engine``'s, and the scheduler's replies, late or not, drive it to the end."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import random
import threading
import time
from pathlib import Path

from schedulers.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_protocol_cases_run_on_gridsched_engine(tmp_path: Path) -> None:
    compare, sched = _load("compare_with_batsim"), _load("protocol_scheduler")
    kinds: set[str] = set()
    late = 0
    for seed in (3, 4, 5, 9):   # (energy, dynamic jobs with acknowledgements, several workloads)
        d = tmp_path / str(seed)
        d.mkdir()
        args, options = compare.protocol_case(random.Random(seed), d)
        port_file, log = d / "port", d / "messages.jsonl"
        th = threading.Thread(target=sched.main, daemon=True, args=(
            ["--options", json.dumps(options), "--log", str(log), "--port-file", str(port_file), "--timeout", "60"],))
        th.start()
        while not port_file.exists():
            time.sleep(0.01)
        with contextlib.redirect_stderr(io.StringIO()) as err:
            code = main(["engine", *args, "-e", str(d / "out"), "-s", f"tcp://127.0.0.1:{port_file.read_text()}",
                         "--timeout", "60"])
        th.join(60)
        assert code == 0, err.getvalue()
        messages = [json.loads(x) for x in log.read_text().splitlines()]
        assert messages[-1]["events"][-1]["type"] == "SIMULATION_ENDS"
        kinds |= {e["type"] for m in messages for e in m["events"]}
        late += sum(1 for a, b in zip(messages, messages[1:]) if b["now"] > a["now"])
    assert {"REQUESTED_CALL", "JOB_KILLED", "JOB_COMPLETED", "NOTIFY"} <= kinds
    assert late > 0
