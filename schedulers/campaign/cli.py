"""``gridsched campaign run|status|collect|plot|report|generators``.

Exit status (:mod:`schedulers.exits`): 0 when every run of the campaign is done; 1 when some run
failed (its error is in its record and ``status`` lists it), or, for ``status``, some run is
missing or its result was made by another gridsched code; 2 for a bad campaign file or folder, a
folder another ``campaign run`` is writing into, or one holding results of another gridsched code
(``run`` without ``--rerun-stale``: one line on stderr); 4 a record could not be
written (disk full); 130 when interrupted by Ctrl-C, 143 by SIGTERM (what finished is kept: the
same command resumes).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .errors import CampaignError
from .green_cli import add_commands as add_green_commands


def _out_for(args: argparse.Namespace, name: str) -> Path:
    return Path(args.out) if args.out else Path("out") / name


def cmd_run(args: argparse.Namespace) -> int:
    from .runner import run_campaign
    from .spec import load_campaign

    _check_where(args)
    camp = load_campaign(args.file)
    out = _out_for(args, camp.name)
    where = args.scheduler_address or ("this process" if args.serial else
                                       f"{args.workers or 1} {args.jobqueue} batch job(s)" if args.jobqueue else
                                       f"a local Dask cluster ({args.workers or 'one worker per core'})")
    print(f"campaign {camp.name}: {len(camp.runs())} runs, results in {out}/, on {where}", file=sys.stderr)
    try:
        stats = run_campaign(camp, out, address=args.scheduler_address, workers=args.workers, serial=args.serial,
                             jobqueue=args.jobqueue,
                             retry_failed=args.retry_failed, rerun_stale=args.rerun_stale,
                             progress=not args.no_progress)
    except KeyboardInterrupt as exc:   # Ctrl-C, or SIGTERM (exits.Terminated)
        from ..exits import interrupt_status, interrupt_word
        from .store import ResultStore
        done = len(ResultStore(out).ids())
        print(f"gridsched: {interrupt_word(exc)}; {done} results are stored in {out}/results/ "
              "(run the same command again to run the rest)", file=sys.stderr)
        return interrupt_status(exc)
    print(f"ran {stats.executed} ({stats.failed} failed), {stats.skipped} already present, "
          f"{stats.wall_s:.1f} s; {stats.status.line()}")
    _print_failed(out, stats.status.failed)
    if args.report and stats.status.done:
        from .report import write_report
        print(f"wrote {write_report(out)}")
    elif args.report:
        print(f"no report: none of the runs finished (gridsched campaign status {out} --failed)", file=sys.stderr)
    return 1 if stats.status.failed else 0


def _check_where(args: argparse.Namespace) -> None:
    """Refuse the ``campaign run`` options that name where runs go when they contradict each other
    (the runner would use one and drop the other without a word: ``--serial`` with
    ``--scheduler-address`` ran in this process, yet the first line said on the address).

    Raises:
        CampaignError: one line naming the options.
    """
    from .runner import JOBQUEUES

    given = [f for f, v in (("--serial", args.serial), ("--scheduler-address", args.scheduler_address),
                            ("--jobqueue", args.jobqueue)) if v]
    if len(given) > 1:
        raise CampaignError(f"{given[0]} and {given[1]} both say where the runs go: give one (--serial: this "
                            "process; --scheduler-address: a running Dask scheduler; --jobqueue: batch jobs)")
    if args.workers is not None:
        if args.workers < 1:
            raise CampaignError(f"--workers must be >= 1, got {args.workers}")
        if given and given[0] != "--jobqueue":
            raise CampaignError(f"--workers sets the local cluster's processes (or --jobqueue's batch jobs); with "
                                f"{given[0]} it would be ignored")
    if args.jobqueue and args.jobqueue not in JOBQUEUES:
        raise CampaignError(f"--jobqueue {args.jobqueue!r}: unknown; known: {', '.join(JOBQUEUES)}")


def _print_failed(out: Path, failed: list[str], limit: int = 10) -> None:
    from .store import ResultStore

    store = ResultStore(out)
    for rid in failed[:limit]:
        rec = store.read(rid)
        params = " ".join(f"{k}={v}" for k, v in rec["params"].items() if v is not None)
        print(f"  failed {rid} ({params}): {rec['error']}")
    if len(failed) > limit:
        print(f"  ... and {len(failed) - limit} more (gridsched campaign status {out} --failed)")


def cmd_status(args: argparse.Namespace) -> int:
    from .spec import load_campaign
    from .store import ResultStore

    target = Path(args.target)
    if target.is_dir():
        out = target
        ids = [r["id"] for r in ResultStore(out).read_manifest()["runs"]]
    else:
        camp = load_campaign(target)
        out = _out_for(args, camp.name)
        ids = [r.id for r in camp.runs()]
    st = ResultStore(out).status(ids)
    print(f"{out}: {st.line()}")
    _print_failed(out, st.failed, limit=len(st.failed) if args.failed else 10)
    return 1 if st.failed or st.missing or st.stale else 0


def cmd_collect(args: argparse.Namespace) -> int:
    from .collect import collect

    runs, summary = collect(args.dir, fmt=args.format)
    print(f"wrote {runs} and {summary}")
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    import pandas as pd

    from .collect import collect, load_manifest
    from .plot import plot_bars, plot_lines, summary_metrics
    from .report import campaign_params, check_names, manifest_report

    _, summary_path = collect(args.dir)
    summary = pd.read_csv(summary_path)
    manifest = load_manifest(args.dir) or {}
    spec, where = manifest_report(manifest)   # the campaign file's words and orders
    labels, order = dict(spec.labels), dict(spec.order)
    check_names(spec, campaign_params(manifest, summary), where, summary_metrics(summary))
    fn = plot_bars if args.kind == "bar" else plot_lines
    out = Path(args.dir) / "plots" / f"{args.kind}_{args.metric}_by_{args.x}{'_' + args.hue if args.hue else ''}"
    try:
        paths = fn(summary, args.metric, args.x, hue=args.hue or None, out=out, labels=labels, order=order)
    except CampaignError as exc:   # (the folder whose results the plot was asked of)
        raise CampaignError(f"{args.dir}: {exc}") from None
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .report import write_report

    print(f"wrote {write_report(args.dir)}")
    return 0


def cmd_generators(args: argparse.Namespace) -> int:
    from ..inputs.generators import GENERATORS

    for name, gen in sorted(GENERATORS.items()):
        print(f"{name:16s} {gen.doc}")
        for k, v in gen.params.items():
            words = gen.param_docs.get(k)
            print(f"{'':16s}   {k} = {v!r}" + (f": {words}" if words else ""))
    return 0


def add_campaign_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``campaign`` and its sub-commands to the ``gridsched`` parser."""
    p = sub.add_parser("campaign", help="many simulations on Dask: run, status, collect, plot, report",
                       description="Campaigns: policies x scenarios x seeds x option axes, from a TOML file "
                                   "(format: docs/reference/campaign-toml.md, or "
                                   "`python -m pydoc schedulers.campaign.spec`).")
    cs = p.add_subparsers(dest="campaign_command", required=True)

    r = cs.add_parser("run", help="run what is missing (resumes an interrupted campaign)",
                      description="Run the campaign's runs that have no result yet in its output folder, one "
                                  "result file each (OUT/results/<id>.json): the same command resumes an "
                                  "interrupted campaign.")
    r.add_argument("file", help="campaign TOML file")
    r.add_argument("--out", "-o", help="output folder (default: out/<campaign name>)")
    r.add_argument("--scheduler-address", help="a running Dask scheduler (tcp://host:8786); default: a LocalCluster")
    r.add_argument("--workers", type=int, help="LocalCluster worker processes (default: one per core); "
                                               "with --jobqueue, batch jobs to submit")
    r.add_argument("--jobqueue", metavar="SYSTEM",
                   help="start the Dask workers as batch jobs with dask-jobqueue: slurm, oar, pbs, sge, lsf, htcondor")
    r.add_argument("--serial", action="store_true", help="run in this process, without Dask")
    r.add_argument("--retry-failed", action="store_true", help="run the failed runs again")
    r.add_argument("--rerun-stale", action="store_true",
                   help="run again the runs whose results another gridsched code made (an upgrade, an edited "
                        "checkout); without it such results stop the campaign before anything runs")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    r.add_argument("--report", action="store_true",
                   help="then write the report (as `gridsched campaign report OUT`): one command runs a "
                        "paper's campaign and writes its report")
    r.set_defaults(func=cmd_run)

    s = cs.add_parser("status", help="done / failed / missing runs",
                      description="Count the campaign's runs that are done, failed or missing (exit status 1 "
                                  "when some failed or are missing).")
    s.add_argument("target", help="campaign TOML file, or its output folder")
    s.add_argument("--out", "-o", help="output folder (with a TOML file; default: out/<campaign name>)")
    s.add_argument("--failed", action="store_true", help="list every failed run")
    s.set_defaults(func=cmd_status)

    c = cs.add_parser("collect", help="one table of runs and a summary per group (mean, std, 95 %% CI, n)",
                      description="Write DIR/runs.csv (one row per run) and DIR/summary.csv (per group of runs "
                                  "differing only by their seed: n, and each metric's mean, standard deviation "
                                  "and 95 % Student-t confidence interval).")
    c.add_argument("dir", help="campaign output folder")
    c.add_argument("--format", choices=("csv", "parquet"), default="csv", help="runs table format (default csv)")
    c.set_defaults(func=cmd_collect)

    pl = cs.add_parser("plot", help="grouped bars or lines with 95 %% CI error bars (PNG and SVG)",
                       description="Plot one summary metric's means with their 95 % confidence intervals "
                                   "into DIR/plots/ (PNG and SVG).")
    pl.add_argument("dir", help="campaign output folder")
    pl.add_argument("--metric", required=True, help="summary metric, e.g. mean_waiting_time")
    pl.add_argument("--x", default="scenario", help="column on the x axis (default: scenario)")
    pl.add_argument("--hue", default="policy", help="column giving the bars/lines (default: policy; '' for none)")
    pl.add_argument("--kind", choices=("bar", "line"), default="bar",
                    help="grouped bars, or lines over a numeric --x (default bar)")
    pl.set_defaults(func=cmd_plot)

    rp = cs.add_parser("report", help="Markdown report with tables, plots and the paper's numbers",
                       description="Write DIR/report.md: what was run, a table per metric (mean ± 95 % CI, "
                                   "n), the campaign file's plots and the paper's numbers beside ours.")
    rp.add_argument("dir", help="campaign output folder")
    rp.set_defaults(func=cmd_report)

    gr = cs.add_parser("green", help="the green heuristic's reproduction: run its campaigns, write its report",
                       description="Run the green heuristic's campaigns (campaigns/green_nantes) and write "
                                   "the report that sets them beside the paper (docs/papers/green.md).")
    add_green_commands(gr)

    g = cs.add_parser("generators", help="list the scenario generators and their parameters",
                      description="List the registered scenario generators, their parameters and defaults.")
    g.set_defaults(func=cmd_generators)
    return p
