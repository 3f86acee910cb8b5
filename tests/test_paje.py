"""Batsim's Pajé schedule trace, ``out_schedule.trace`` (:mod:`schedulers.engine.paje`), against
real Batsim 4.2.1's (``fixtures/batsim_paje``, see its README): job starts, ends, kills (a
killed ``delay`` has no kill event, a cancelled parallel task and a walltime have), the top job of
a shared machine, the final clock on a network; the colours Batsim draws from."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from schedulers.cli import main
from schedulers.engine.paje import N_COLORS, hsv_to_rgb, job_colors

FIX = Path(__file__).parent / "fixtures" / "batsim_paje"
_COLOR = re.compile(r'^(5 j.* machine_state ".*") ("[0-9. ]+")$', re.M)


def _run(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "out"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = main(["run", *args, "-o", str(out), "--no-progress"])
    assert code == 0, err.getvalue()
    return out


def _without_colors(text: str) -> str:
    return _COLOR.sub(r"\1", text)


def test_kills_and_shared_machines_as_real_batsim(tmp_path: Path) -> None:
    out = _run(tmp_path, "--policy", f"{FIX / 'scripted.py'}:Scripted", "-p", str(FIX / "p.xml"),
               "-w", str(FIX / "w.json"), "--compute-sharing")
    assert (out / "out_jobs.csv").read_text() == (FIX / "out_jobs.csv").read_text()
    mine, batsim = (out / "out_schedule.trace").read_text(), (FIX / "out_schedule.trace").read_text()
    # by hand, from Batsim's rules (module docstring of schedulers.engine.paje):
    events = batsim[batsim.index("# Begin of events"):]
    assert '8 3.000000 kk k "w0!delay_killed"' not in events                 # its actor is killed
    assert '6 3.000000 machine_state m1 w' in events
    assert ('8 6.000000 kk k "w0!ptask_killed"\n8 6.000000 km m1 "w0!ptask_killed"\n'
            '8 6.000000 km m2 "w0!ptask_killed"\n6 6.000000 machine_state m1 w\n') in events
    assert '8 9.000000 kk k "w0!walltime"\n8 9.000000 km m2 "w0!walltime"\n' in events
    assert '8 12.500000 kk k "w0!composed_killed"' in events
    assert "6 2.000000 machine_state m0 jw0!late\n" in events                 # loaded first: on top
    assert "6 4.000000 machine_state m0" not in events                        # early's end: no change
    assert events.endswith("3 12.500000 m2 machine_ct\n3 12.500000 root root_ct\n")
    assert _without_colors(mine) == _without_colors(batsim)


def test_containers_destroyed_at_the_acknowledgement_of_simulation_ends(tmp_path: Path) -> None:
    net = FIX / "network"
    out = _run(tmp_path, "--policy", "heft", "-p", str(net / "p.xml"), "-w", str(net / "w.json"),
               "--fit", "keep", "--compute-sharing")
    mine, batsim = (out / "out_schedule.trace").read_text(), (net / "out_schedule.trace").read_text()
    assert "3 10.625508 root root_ct\n" in batsim          # SIMULATION_ENDS at 10.625493, + 15 us
    assert _without_colors(mine) == _without_colors(batsim)


def test_odd_host_names_and_job_ids_as_real_batsim(tmp_path: Path) -> None:
    """A host named with a double quote, one with a space, job ids with a space, an apostrophe
    and non-ASCII letters: written as they are, as real Batsim 4.2.1 writes them."""
    odd = FIX / "odd_names"
    out = _run(tmp_path, "--policy", "fcfs", "-p", str(odd / "p.xml"), "-w", str(odd / "w.json"))
    assert (out / "out_jobs.csv").read_text() == (odd / "out_jobs.csv").read_text()
    mine, batsim = (out / "out_schedule.trace").read_text(), (odd / "out_schedule.trace").read_text()
    assert '2 0.000000 machine_ct m0 "ho"st0" root' in batsim.splitlines()
    assert _without_colors(mine) == _without_colors(batsim)


def test_colors_are_batsims_64_hues() -> None:
    # generate_colors(64): hue i * 5.625 degrees, s = v = 1
    assert hsv_to_rgb(0.0, 1.0, 1.0) == (1.0, 0.0, 0.0)
    assert hsv_to_rgb(45.0, 1.0, 1.0) == (1.0, 0.75, 0.0)
    assert hsv_to_rgb(240.0, 1.0, 1.0) == (0.0, 0.0, 1.0)
    assert hsv_to_rgb(300.0, 1.0, 1.0) == (1.0, 0.0, 1.0)
    colors = job_colors()
    assert len(set(colors)) == N_COLORS == 64
    assert '"1.000000 0.750000 0.000000"' in colors and '"0.000000 0.812500 1.000000"' in colors
    assert job_colors() == colors and job_colors(1) != colors        # one fixed shuffle per seed
    for trace in (FIX / "out_schedule.trace", FIX / "network" / "out_schedule.trace"):
        used = [m.group(2) for m in _COLOR.finditer(trace.read_text())]
        assert used and set(used) <= set(colors)                     # Batsim's are among them


def test_same_file_from_run_to_run(tmp_path: Path) -> None:
    args = ("--policy", f"{FIX / 'scripted.py'}:Scripted", "-p", str(FIX / "p.xml"), "-w", str(FIX / "w.json"),
            "--compute-sharing")
    a = (_run(tmp_path / "a", *args) / "out_schedule.trace").read_text()
    b = (_run(tmp_path / "b", *args) / "out_schedule.trace").read_text()
    assert a == b
