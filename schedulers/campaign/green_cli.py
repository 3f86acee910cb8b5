"""Command line of the green heuristic's reproduction: ``gridsched campaign green run|report``
(also ``python -m schedulers.campaign.green_report``).

Only the arguments live here, so that ``gridsched`` starts without importing the report's
tables and plots (:mod:`schedulers.campaign.green_report`, imported when a command runs).
"""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_OUT = Path("out/green_nantes")


def _run(args: argparse.Namespace) -> int:
    from .green_report import cmd_run
    return _bad_values_named(cmd_run, args)


def _report(args: argparse.Namespace) -> int:
    from .green_report import cmd_report
    return _bad_values_named(cmd_report, args)


def _bad_values_named(cmd, args: argparse.Namespace) -> int:
    """Run ``cmd``; a ``ValueError`` (a record or table the report cannot read) becomes a
    :class:`~schedulers.campaign.errors.CampaignError`, which every command line prints in one line."""
    from .errors import CampaignError
    try:
        return cmd(_with_report_dir(args))
    except ValueError as exc:
        raise CampaignError(str(exc)) from None


def _with_report_dir(args: argparse.Namespace) -> argparse.Namespace:
    if args.report is None:
        args.report = args.out / "report"
    return args


def add_commands(parent: argparse.ArgumentParser, default_campaigns: str = "campaigns/green_nantes") -> None:
    """Add the ``run`` and ``report`` commands under ``parent``; each sets ``func`` (returns the
    exit status; raises :class:`~schedulers.campaign.errors.CampaignError`, ``OSError`` or
    ``ValueError`` on bad input).

    Args:
        parent: the parser of ``gridsched campaign green`` or of the module's own command line.
        default_campaigns: the campaign files or folders ``run`` takes when given none.
    """
    sub = parent.add_subparsers(dest="green_command", required=True, metavar="{run,report}")
    for name, fn, helptext in (("run", _run, "run (or resume) the campaigns, then write the report"),
                               ("report", _report, "write the report from finished campaign folders")):
        p = sub.add_parser(name, help=helptext, description=helptext[0].upper() + helptext[1:] + ".")
        if name == "run":
            p.add_argument("campaigns", nargs="*", help=f"campaign files or folders (default {default_campaigns})")
            p.add_argument("--no-progress", action="store_true", help="no progress bar")
            p.add_argument("--rerun-stale", action="store_true",
                           help="run again the runs whose results another gridsched code made (as campaign run)")
        else:
            p.add_argument("dirs", nargs="*", help="campaign output folders (default: every one in --out)")
        p.add_argument("--out", type=Path, default=DEFAULT_OUT,
                       help=f"folder of the campaigns' outputs, one sub-folder each (default {DEFAULT_OUT})")
        p.add_argument("--report", type=Path, default=None,
                       help="where the report goes (default OUT/report)")
        p.add_argument("--docs", type=Path, default=None,
                       help="also copy the figures the documentation page shows here (docs/papers/images/green)")
        p.add_argument("--page", type=Path, default=None,
                       help="also refresh the generated tables of this documentation page (docs/papers/green.md)")
        p.set_defaults(func=fn)
