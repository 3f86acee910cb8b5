"""batsim-py 1.0.5, unchanged, on the embedded engine through ``gridsched batsim-launcher``.

batsim-py starts the ``batsim`` it finds on PATH with Batsim 4.x's command line; the launcher makes
that ``gridsched engine``. Its tutorial FCFS loop, a shutdown loop (``switch_off`` / ``switch_on``,
energy monitors), a run with compute sharing and external events and a loop of its other calls
(``reject_job``, ``kill_job``, ``switch_power_state``, ``set_callback``, ``proceed_time(t)``) and EASY
backfilling on its ``agenda`` must give the files recorded
on real Batsim 4.2.1 (``fixtures/batsim_py``, README: the command and script that recorded them).
Each loop runs in its own process (``scripts/batsim_py_loops.py``): batsim-py installs a SIGTERM
handler and an atexit hook in the process that uses it.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from schedulers.batsim.launcher import LauncherError, is_launcher, launcher_text, write_launcher
from schedulers.batsim.runner import BatsimNotFound, find_batsim
from schedulers.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIX = Path(__file__).parent / "fixtures" / "batsim_py"
PLATFORM = ROOT / "platforms" / "g5k_nantes_econome.xml"
SCRIPT = ROOT / "scripts" / "batsim_py_loops.py"

needs_batsim_py = pytest.mark.skipif(
    importlib.util.find_spec("batsim_py") is None,
    reason="batsim-py 1.0.5 is not installed (pip install --no-deps batsim-py==1.0.5; its pins do not install)")


def _env_with(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{folder}{os.pathsep}{env.get('PATH', '')}"
    return env


def _compare(mine: Path, recorded: Path) -> None:
    names = sorted(p.name for p in recorded.glob("*.csv"))
    assert sorted(p.name for p in mine.glob("*.csv")) == names
    for name in names:
        a, b = pd.read_csv(mine / name), pd.read_csv(recorded / name)
        pd.testing.assert_frame_equal(a, b, check_exact=True, obj=name)


@needs_batsim_py
@pytest.mark.parametrize("case, loop, workload, extra", [
    ("fcfs", "fcfs", "fcfs_workload.json", []),
    ("shutdown", "shutdown", "shutdown_workload.json", []),
    ("events", "fcfs", "shutdown_workload.json", ["--compute-sharing", "--events", str(FIX / "events.txt")]),
    ("api", "api", "api_workload.json", []),
    ("easy", "easy", "fcfs_workload.json", []),
])
def test_batsim_py_loop_on_engine_equals_real_batsim(tmp_path, case, loop, workload, extra):
    bindir = write_launcher(tmp_path / "bin").path.parent
    out = tmp_path / "out"
    platform = FIX / "dvfs4.xml" if case == "api" else PLATFORM
    proc = subprocess.run([sys.executable, str(SCRIPT), loop, "-p", str(platform), "-w", str(FIX / workload),
                           "-o", str(out), *extra], env=_env_with(bindir), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr == ""     # -v quiet: the engine says nothing either
    _compare(out, FIX / case)
    summary = pd.read_csv(out / "summary.csv").iloc[0]
    # every job succeeds, but in the api loop job 3 (4 hosts) is rejected and job 4 killed
    assert summary["nb_jobs_success"] == len(pd.read_csv(out / "jobs.csv")) - 2 * (case == "api")
    if case == "shutdown":
        # batsim-py saw the pstates of 'watt_per_state': hosts slept and its energy is not 0
        assert summary["nb_switches"] > 0 and summary["time_sleeping"] > 0 and summary["consumed_joules"] > 0
    if case == "easy":
        # backfilling on batsim-py's agenda: jobs start before others submitted earlier, and wait
        # less than under FCFS on the same workload (both recorded on real Batsim)
        easy, fcfs = pd.read_csv(out / "jobs.csv"), pd.read_csv(FIX / "fcfs" / "jobs.csv")
        assert easy["waiting_time"].mean() < fcfs["waiting_time"].mean()
        by_sub = easy.sort_values("submission_time")
        assert (by_sub["starting_time"].diff() < 0).any()
    if case == "api":
        # every call of the loop reached Batsim: a rejection, a kill, DVFS switches both ways
        jobs = pd.read_csv(out / "jobs.csv").set_index("job_id")
        assert jobs.loc[3, "final_state"] == "REJECTED" and jobs.loc[4, "final_state"] == "COMPLETED_KILLED"
        assert set(pd.read_csv(out / "pstates.csv")["new_pstate"]) == {0, 1}


# ----------------------------------------------------------------------------- the launcher
def test_launcher_runs_the_engine_with_this_python(tmp_path):
    done = write_launcher(tmp_path / "bin")
    text = done.path.read_text()
    assert text == launcher_text()
    assert text.startswith("#!/bin/sh\n") and f"'{sys.executable}' -m schedulers.cli engine --timeout 0 \"$@\"" in text
    assert os.access(done.path, os.X_OK) and is_launcher(done.path)
    proc = subprocess.run([str(done.path), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "--socket-endpoint" in proc.stdout


def test_launcher_never_overwrites_unless_forced(tmp_path):
    real = tmp_path / "bin" / "batsim"
    real.parent.mkdir()
    real.write_text("#!/bin/sh\necho real batsim\n")
    with pytest.raises(LauncherError, match="not a gridsched launcher.*not overwritten"):
        write_launcher(tmp_path / "bin")
    assert real.read_text() == "#!/bin/sh\necho real batsim\n"
    write_launcher(tmp_path / "bin", force=True)
    assert is_launcher(real)
    code = main(["batsim-launcher", str(tmp_path / "bin")])
    assert code == 2                          # already there, even a launcher: --force needed


def test_launcher_names_the_real_batsim_it_would_hide(tmp_path, monkeypatch, capsys):
    real = tmp_path / "real" / "batsim"
    real.parent.mkdir()
    real.write_text("#!/bin/sh\n")
    real.chmod(0o755)
    monkeypatch.setenv("PATH", str(real.parent))
    assert write_launcher(tmp_path / "mine").shadowed == str(real)
    assert main(["batsim-launcher", str(tmp_path / "mine2")]) == 0
    assert f"a real Batsim is on PATH ({real})" in capsys.readouterr().err
    # a launcher first on PATH is no real Batsim: `gridsched run --engine batsim` refuses it
    monkeypatch.setenv("PATH", f"{tmp_path / 'mine'}{os.pathsep}{real.parent}")
    with pytest.raises(BatsimNotFound, match="gridsched's launcher of the embedded engine"):
        find_batsim()
    assert write_launcher(tmp_path / "mine3").shadowed is None   # (the launcher found first hides nothing)


# ------------------------------------------------------------- the engine as batsim-py starts it
def _rep_server(endpoint: str, seen: list, stop: threading.Event) -> None:
    """A scheduler that answers every message with no decision (enough for an empty workload)."""
    import json

    import zmq

    sock = zmq.Context.instance().socket(zmq.REP)
    sock.bind(endpoint)
    try:
        while not stop.is_set():
            if not sock.poll(100):
                continue
            msg = json.loads(sock.recv())
            seen.append([e["type"] for e in msg["events"]])
            sock.send_string(json.dumps({"now": msg["now"], "events": []}))
    finally:
        sock.close(0)


def _batsim_py_command(endpoint: str, workload: Path, prefix: Path) -> list[str]:
    # batsim-py 1.0.5's SimulatorHandler.start, with both optional flags
    return ["-E", "--forward-profiles-on-submission", "--disable-schedule-tracing",
            "--disable-machine-state-tracing", "-s", endpoint, "-p", str(PLATFORM), "-w", str(workload),
            "-v", "quiet", "-e", str(prefix), "--enable-compute-sharing", "--events", str(FIX / "events.txt")]


def test_engine_takes_batsim_py_command_line_quiet_and_exits_after_simulation_ends(tmp_path):
    from test_engine_zmq import free_port

    empty = tmp_path / "empty.json"
    empty.write_text('{"nb_res": 22, "jobs": [], "profiles": {}}')
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    seen, stop = [], threading.Event()
    th = threading.Thread(target=_rep_server, args=(endpoint, seen, stop), daemon=True)
    th.start()
    launcher = write_launcher(tmp_path / "bin").path
    try:
        proc = subprocess.run([str(launcher), *_batsim_py_command(endpoint, empty, tmp_path / "batsim")],
                              capture_output=True, timeout=60)
    finally:
        stop.set()
        th.join(5)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"" and proc.stderr == b""
    assert seen[0][0] == "SIMULATION_BEGINS" and seen[-1] == ["SIMULATION_ENDS"]
    # -E without the two tracings: Batsim's jobs, energy and pstate files only
    assert sorted(p.name for p in tmp_path.glob("batsim_*")) == [
        "batsim_consumed_energy.csv", "batsim_jobs.csv", "batsim_pstate_changes.csv", "batsim_schedule.csv"]


def test_engine_exits_at_once_on_sigterm(tmp_path):
    from test_engine_zmq import free_port

    import zmq

    # the scheduler receives SIMULATION_BEGINS and never answers: the engine waits for the reply
    # forever (as Batsim, --timeout 0 in the launcher), until SIGTERM
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    sock = zmq.Context.instance().socket(zmq.REP)
    sock.bind(endpoint)
    launcher = write_launcher(tmp_path / "bin").path
    proc = subprocess.Popen([str(launcher), *_batsim_py_command(endpoint, FIX / "fcfs_workload.json",
                                                                tmp_path / "batsim")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert sock.poll(60_000), "the engine sent nothing within 60 s"
        assert b"SIMULATION_BEGINS" in sock.recv()
        time.sleep(0.5)
        assert proc.poll() is None
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        sock.close(0)
        if proc.poll() is None:
            proc.kill()
    assert time.monotonic() - t0 < 10
    assert proc.returncode == 143
    assert out == b""
    assert err.decode().strip() == ("gridsched engine: terminated (SIGTERM) before the simulation ended; "
                                    "no output written")
    assert not list(tmp_path.glob("batsim_*"))


# ------------------------------------------------------------------- both power property names
def test_watt_per_state_is_the_same_power_model_in_the_older_spelling():
    from schedulers.core.power import parse_watt_ranges
    from schedulers.inputs.g5k import PowerModel

    pm = PowerModel()
    # batsim-py reads Idle and OneCore; OneCore is what SimGrid 3.32 draws with one of 16 cores busy:
    # Epsilon + (AllCores - Epsilon) / 16 = 114.67 + 85.33 / 16 = 120 W
    assert pm.watt_per_state(16).split(", ")[0] == "100.0:120.0:200.0"
    r = parse_watt_ranges(pm.wattage_per_state(16))[0]
    assert r.epsilon + (r.all_cores - r.epsilon) / 16 == pytest.approx(120.0, abs=1e-12)
    assert r.power(1, 16) == pytest.approx(120.0, abs=1e-12)
    assert pm.watt_per_state(1, with_sleep=False) == "100.0:200.0:200.0"   # one core: AllCores
    assert pm.watt_per_state(16).split(", ")[1:] == pm.wattage_per_state(16).split(", ")[1:]


def test_engine_reads_both_names_as_wattage_per_state_alone(tmp_path):
    # recorded on real Batsim 4.2.1 too (fixtures/batsim_py/README.md): the same four files with and
    # without watt_per_state; a platform with watt_per_state ONLY is refused under -E as Batsim
    # aborts (tests/test_engine.py::test_older_simgrid_power_property_names_are_not_read)
    from schedulers.engine import read_platform, simulate
    from schedulers.registry import get_policy

    text = PLATFORM.read_text()
    assert text.count('<prop id="watt_per_state"') == 22
    stripped = tmp_path / "nantes_wattage_only.xml"
    stripped.write_text("\n".join(line for line in text.splitlines() if "watt_per_state\"" not in line))
    a, b = read_platform(PLATFORM), read_platform(stripped)
    assert [h.power for h in a.compute] == [h.power for h in b.compute]
    assert [h.wattage_off for h in a.compute] == [h.wattage_off for h in b.compute]
    for plat, prefix in ((PLATFORM, "a_"), (stripped, "b_")):
        simulate(plat, [FIX / "shutdown_workload.json"], get_policy("easy", {"idle_timeout": 30}), energy=True,
                 export_prefix=tmp_path / prefix)
    for name in ("jobs", "consumed_energy", "pstate_changes", "machine_states"):
        assert (tmp_path / f"a_{name}.csv").read_bytes() == (tmp_path / f"b_{name}.csv").read_bytes()
    # batsim-py's name alone gives SimGrid no power model: refused under -E, naming what to use
    from schedulers.engine import EngineError

    old_only = tmp_path / "nantes_watt_only.xml"
    old_only.write_text("\n".join(line for line in text.splitlines() if "wattage_per_state\"" not in line))
    with pytest.raises(EngineError, match="host 'econome-1' has 'watt_per_state'.*rename them 'wattage_per_state'"):
        simulate(old_only, [FIX / "shutdown_workload.json"], get_policy("fcfs"), energy=True)
