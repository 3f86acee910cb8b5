"""``gridsched scenario NAME [--PARAM VALUE ...] --seed N -o DIR``: write a generated scenario.

Any registered scenario generator (:mod:`schedulers.inputs.generators`, ``gridsched campaign
generators`` lists them) becomes a sub-command whose options are its parameters (``tasks_per_user``
is ``--tasks-per-user``; booleans are ``--x`` / ``--no-x``); unset options keep the generator's
defaults. The scenario is written to ``DIR/platform.xml`` and ``DIR/workload.json`` (several
workloads: ``DIR/workload_w0.json``, ``DIR/workload_w1.json``, ...), ready for
``gridsched run -p DIR/platform.xml -w DIR/workload.json``. A folder that holds a scenario
already is refused unless ``--overwrite`` is given. Example::

    gridsched scenario hosep --demand large --late user1 --seed 3 -o out/hosep-large-u1-3

Wired into ``gridsched`` by :func:`add_scenario_parser`; also runs alone:
``python -m schedulers.inputs.scenario_cli hosep ...``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..exits import one_line
from ..outfiles import OutputWriteError, atomic_output, atomic_write_text, make_folder
from .generators import GENERATORS, GeneratorError, generate

__all__ = ["add_scenario_parser", "write_scenario", "run_scenario", "main"]


def write_scenario(name: str, params: dict[str, Any], seed: int, out: str | Path, *,
                   overwrite: bool = True) -> list[Path]:
    """Generate scenario ``name`` with ``params`` and ``seed`` and write it in folder ``out``
    (created if needed): ``platform.xml`` and ``workload.json`` (or ``workload_w<i>.json``).

    A scenario already in the folder (its ``platform.xml``, ``workload.json``,
    ``workload_w<i>.json``) is replaced whole when ``overwrite`` is true: its workload files are
    removed first, so that none of a scenario of more workloads is left beside the new one.

    Returns:
        The paths written, platform first.

    Raises:
        GeneratorError: unknown generator or bad parameters (see
            :func:`~schedulers.inputs.generators.check_params`).
        GeneratorError: also when ``out`` exists and is not a folder.
        FileExistsError: ``overwrite`` is false and the folder holds a scenario's file.
        OSError: the folder or a file cannot be written (``OutputWriteError``, naming the file,
            for a full disk: no file is left cut).
    """
    scenario = generate(name, params, seed)
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise GeneratorError(f"-o {folder}: exists and is not a folder")
    old = scenario_files(folder)
    if old and not overwrite:
        raise FileExistsError(f"{folder}: holds a scenario already ({', '.join(p.name for p in old)}); "
                              "give --overwrite to replace it, or choose another -o")
    make_folder(folder)
    for p in old:
        if p.name != "platform.xml":
            p.unlink()
    written = [folder / "platform.xml"]
    if scenario.platform_xml is not None:
        atomic_write_text(written[0], scenario.platform_xml)   # (whole or not at all)
    elif scenario.platform is not None:
        _copy(scenario.platform, written[0])
    else:
        raise GeneratorError(f"generator {name!r} returned no platform")
    many = len(scenario.workloads) > 1
    for i, w in enumerate(scenario.workloads):
        path = folder / (f"workload_w{i}.json" if many else "workload.json")
        if isinstance(w, dict):
            atomic_write_text(path, json.dumps(w, indent=1) + "\n")
        else:
            _copy(w, path)
        written.append(path)
    return written


def scenario_files(folder: Path) -> list[Path]:
    """The files of a written scenario in ``folder`` (platform, then workloads; none when the
    folder does not exist)."""
    if not folder.is_dir():
        return []
    names = ["platform.xml", "workload.json"]
    found = [folder / n for n in names if (folder / n).exists()]
    return found + sorted(folder.glob("workload_w*.json"))


def _copy(src: str | Path, dst: Path) -> None:
    with atomic_output(dst, "wb") as f:
        f.write(Path(src).read_bytes())


def run_scenario(args: argparse.Namespace) -> int:
    """The sub-command: write the scenario, print what was written. Exit status 2 on bad
    parameters or an unwritable folder (one line on stderr)."""
    gen = GENERATORS[args.generator]
    params = {k: getattr(args, k) for k in gen.params if getattr(args, k, None) is not None}
    try:
        paths = write_scenario(args.generator, params, args.seed, args.output, overwrite=args.overwrite)
    except OutputWriteError:
        raise   # (a full disk: exit status 4, gridsched's main)
    except FileExistsError as exc:
        print(f"gridsched: error: {exc}", file=sys.stderr)
        return 2
    except (GeneratorError, OSError) as exc:
        print(f"gridsched: error: {one_line(exc)}", file=sys.stderr)
        return 2
    print(f"{args.generator} seed {args.seed}: wrote {', '.join(str(p) for p in paths)}")
    return 0


def _option_type(default: Any) -> Any:
    return float if isinstance(default, float) else type(default)


def add_scenario_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``scenario`` (one sub-command per registered generator) to the ``gridsched`` parser
    (``sub`` is the result of ``add_subparsers()``). Returns the new parser."""
    p = sub.add_parser("scenario", help="write a generated scenario (platform.xml, workload.json)",
                       description="Write the platform and workload of a registered scenario generator "
                                   "(`gridsched campaign generators` lists them) to a folder.")
    gs = p.add_subparsers(dest="generator", required=True, metavar="GENERATOR")
    for name, gen in sorted(GENERATORS.items()):
        g = gs.add_parser(name, help=gen.doc.replace("%", "%%"), description=gen.doc)
        for key, default in gen.params.items():
            flag = "--" + key.replace("_", "-")
            words = gen.param_docs.get(key, "").replace("%", "%%")
            if isinstance(default, bool):
                g.add_argument(flag, dest=key, action=argparse.BooleanOptionalAction, default=None,
                               help=f"{words} (default {default})".lstrip())
            else:
                g.add_argument(flag, dest=key, type=_option_type(default), default=None,
                               help=f"{words} (default {default!r})".lstrip())
        g.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
        g.add_argument("-o", "--output", required=True, metavar="FOLDER",
                       help="folder to write platform.xml and workload.json in")
        g.add_argument("--overwrite", action="store_true",
                       help="replace the scenario already in the folder (refused without it)")
        g.set_defaults(func=run_scenario)
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m schedulers.inputs.scenario_cli GENERATOR ...`` (same options as
    ``gridsched scenario``)."""
    parser = argparse.ArgumentParser(prog="gridsched")
    add_scenario_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["scenario", *(sys.argv[1:] if argv is None else argv)])
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
