#!/usr/bin/env python3
"""Regenerate the Grid'5000 platforms shipped in platforms/ from the reference snapshot in ../shared.

    python scripts/make_g5k_platforms.py                 # writes platforms/g5k_*.xml
    python scripts/make_g5k_platforms.py --check         # exit 1 if a shipped file differs
    python scripts/make_g5k_platforms.py --output-dir /tmp/p --reference-dir /path/to/sites-2020-03-31

Input: Grid'5000 reference-API node descriptions (grid5000/reference-repository, snapshot of
2020-03-31, commit ab3e7be2), read from ../shared/data/g5k-reference/sites-2020-03-31 relative to the
repository root (never copied into the repository). Output:

* platforms/g5k_nantes_econome.xml: Nantes econome, 22 nodes, all in one zone (no link at all);
* platforms/g5k_lille_2020.xml: Lille chetemi 15 + chiclet 8 + chifflet 8 + chifflot 8 = 39 nodes,
  one zone per cluster;
* platforms/g5k_nantes_econome_1core.xml: the green heuristic's contention model of Nantes econome
  (:data:`ONE_CORE_NOTE`): each node as ONE core of its per-core speed, drawing the whole node's
  watts (Idle 100 W, busy 200 W), so that jobs sharing a node share its processor.

Both with the default PowerModel (Idle 100 W / OneCore 120 W / AllCores 200 W / Off 10 W, switch
times of Batsim's cluster_energy_128.xml example) and Batsim's master_host. For another site or for
the live API, see platforms/README.md.
"""

from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REFERENCE = REPO.parent / "shared" / "data" / "g5k-reference" / "sites-2020-03-31"
SOURCE = ("Grid'5000 reference repository (grid5000/reference-repository), snapshot of 2020-03-31,"
          " commit ab3e7be2: node descriptions {site}/clusters/<cluster>/nodes/<node>.json")

#: The contention variant's note, first in its XML comment (why one core; sources).
ONE_CORE_NOTE = (
    "CONTENTION VARIANT for the green-heuristic reproduction (Pillon et al., Batsim 2.0 on SimGrid"
    " 3.13.91): every node is written as ONE core of the node's per-core speed (so a job alone"
    " lasts as long as on the 16-core file), drawing the whole node's power: Idle 100 W, busy"
    " 200 W. Jobs that overlap on a node share that one processor (each part gets its max-min"
    " share and slows down) and a busy node draws AllCores, as under the SimGrid of that era:"
    " its ptask_L07 host model gave a host one constraint of the first pstate's speed whatever"
    " its core count (src/surf/ptask_L07.cpp, CpuL07), and its energy plugin took the load as"
    " usage / speed capped at 1 (src/surf/plugins/energy.cpp, HostEnergy::update). Not a model"
    " of the real econome nodes. Source of the nodes:"
)

#: (output file, site, clusters, zones, one core per node)
PLATFORMS = [
    ("g5k_nantes_econome.xml", "nantes", ["econome"], "single", False),
    ("g5k_lille_2020.xml", "lille", ["chetemi", "chiclet", "chifflet", "chifflot"], "cluster", False),
    ("g5k_nantes_econome_1core.xml", "nantes", ["econome"], "single", True),
]


def one_core(node):
    """``node`` as one core of its per-core speed (:data:`ONE_CORE_NOTE`)."""
    from dataclasses import replace

    return replace(node, cores=1, gflops=node.core_speed_gflops)


def build_all(output_dir: Path, reference_dir: Path) -> list[Path]:
    """Write every platform of PLATFORMS into output_dir; return the paths written."""
    from schedulers.inputs.g5k import build_site_platform, load_g5k_nodes, write_simgrid_platform

    written = []
    for filename, site, clusters, zones, single_core in PLATFORMS:
        target = output_dir / filename
        if single_core:
            nodes = [one_core(n) for n in load_g5k_nodes(reference_dir / site, site=site, clusters=clusters)]
            note = textwrap.fill(f"{ONE_CORE_NOTE} {SOURCE.format(site=site)}", width=92,
                                 initial_indent=" " * len("Source: "), subsequent_indent="  ")
            write_simgrid_platform(nodes, target, zones=zones, comment=note.strip())
        else:
            build_site_platform(site, clusters, target, reference_dir, zones=zones,
                                source=SOURCE.format(site=site))
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-dir", type=Path, default=DEFAULT_REFERENCE,
                        help="snapshot folder holding <site>/clusters/<cluster>/nodes/*.json"
                             " (default: %(default)s)")
    parser.add_argument("--output-dir", type=Path, default=REPO / "platforms",
                        help="where to write the XML files (default: %(default)s)")
    parser.add_argument("--check", action="store_true",
                        help="regenerate into a temporary folder and compare with --output-dir"
                             " instead of writing")
    args = parser.parse_args(argv)
    if not args.reference_dir.is_dir():
        print(f"error: {args.reference_dir}: no such folder (the Grid'5000 reference snapshot)",
              file=sys.stderr)
        return 2
    if not args.check:
        for path in build_all(args.output_dir, args.reference_dir):
            print(f"wrote {path}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        status = 0
        for fresh in build_all(Path(tmp), args.reference_dir):
            shipped = args.output_dir / fresh.name
            same = shipped.is_file() and filecmp.cmp(fresh, shipped, shallow=False)
            print(f"{'ok' if same else 'DIFFERS'} {shipped}")
            status |= not same
        return status


if __name__ == "__main__":
    sys.exit(main())
