"""The ``gridsched`` command.

Sub-commands:

* ``run``      — the main job: simulate a workload (Batsim JSON, or a SWF/GWF trace converted on
  the fly) on a platform with a policy, on the embedded engine (default) or real Batsim; write
  Batsim's output files and print a summary.
* ``engine``   — the embedded engine as Batsim's side of the ZMQ protocol (Batsim's flag names),
  for any external Batsim scheduler (``gridsched serve``, pybatsim, batsched...).
* ``serve``    — a policy as an external Batsim scheduler (ZMQ REP server).
* ``convert``  — trace (SWF, GWF, Batsim JSON) to a validated Batsim workload.
* ``policies`` — list the registered policies.
* ``scenario`` — write a registered scenario generator's platform and workload to a folder.
* ``campaign`` — many simulations on Dask from a TOML file: ``run``, ``status``, ``collect``,
  ``plot``, ``report`` (:mod:`schedulers.campaign`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from . import __version__


def _policy_options(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    text = text.strip()
    try:
        if text.startswith("@"):
            return json.loads(Path(text[1:]).read_text(encoding="utf-8"))
        return json.loads(text)
    except (OSError, json.JSONDecodeError) as exc:
        raise SystemExit(f"gridsched: --policy-options: cannot read JSON ({exc})") from None


class _Progress:
    """tqdm progress bar over jobs, showing simulated time; refreshed at most 10 times a second."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.bar = None
        self.last = 0.0
        self.done = 0
        if enabled and total:
            from tqdm import tqdm
            self.bar = tqdm(total=total, unit="job", desc="simulating", dynamic_ncols=True, mininterval=0.1)

    def __call__(self, now: float, done: int, total: int) -> None:
        if self.bar is None:
            return
        t = time.monotonic()
        if t - self.last < 0.1 and done < total:
            return
        self.last = t
        self.bar.update(done - self.done)
        self.done = done
        self.bar.set_postfix_str(f"t={now:,.0f} s", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


#: ``--fit`` for traces: the converter drops oversized jobs by default (a trace from a bigger machine
#: is the usual case) and has no proportional rescaling, so ``scale`` clamps.
_TRACE_OVERSIZED = {"error": "drop", "drop": "drop", "clamp": "clamp", "scale": "clamp"}


def _prepare_workloads(args: argparse.Namespace, nb_hosts: int, cores: int, out: Path) -> list[str]:
    """Convert traces on the fly (SWF/GWF) and fit JSON workloads to the platform if asked."""
    from .inputs.convert import convert_trace

    paths: list[str] = []
    for i, w in enumerate(args.workload):
        p = Path(w)
        name = p.name.lower()
        if name.endswith((".swf", ".swf.gz", ".gwf", ".gwf.gz")):
            target = out / f"workload_w{i}.json"
            opts: dict[str, Any] = {"cores_per_host": args.cores_per_host or cores, "nb_hosts": nb_hosts,
                                    "oversized": _TRACE_OVERSIZED[args.fit]}
            if args.max_jobs:
                opts["max_jobs"] = args.max_jobs
            report = convert_trace(p, target, **opts)
            print(f"converted {p.name}: {report.summary()}", file=sys.stderr)
            paths.append(str(target))
        elif args.fit != "error" or args.max_jobs:
            target = out / f"workload_w{i}.json"
            data = json.loads(p.read_text(encoding="utf-8"))
            if args.max_jobs:
                data["jobs"] = sorted(data["jobs"], key=lambda j: j["subtime"])[: args.max_jobs]
            if args.fit != "error":
                from .inputs.rescale import rescale_workload
                data = rescale_workload(data, nb_hosts, mode=args.fit, source=str(p))
            target.write_text(json.dumps(data), encoding="utf-8")
            paths.append(str(target))
        else:
            paths.append(str(p))
    return paths


def cmd_run(args: argparse.Namespace) -> int:
    from .core.metrics import summarize_outputs
    from .engine import build_engine, write_outputs
    from .engine.platform import read_platform
    from .registry import get_policy

    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    missing = [w for w in args.workload if not Path(w).exists()]
    if missing and args.fallback_workload:
        print(f"note: {', '.join(missing)} not found (is ../shared beside the project?); "
              f"running the shipped scenario {args.fallback_workload} instead", file=sys.stderr)
        args.workload = [args.fallback_workload]
    prefix = str(out / "out_")
    spec = read_platform(args.platform)
    nb_hosts = len(spec.compute)
    cores = min(h.cores for h in spec.compute)
    workloads = _prepare_workloads(args, nb_hosts, cores, out)
    options = _policy_options(args.policy_options)
    if args.engine == "batsim":
        from .batsim.runner import batsim_kwargs_from_args, run_with_batsim
        run_with_batsim(args.platform, workloads, args.policy, options, prefix, energy=args.energy,
                        **batsim_kwargs_from_args(args))
    else:
        policy = get_policy(args.policy, options)
        engine = build_engine(spec, workloads, energy=args.energy, compute_sharing=args.compute_sharing,
                              forward_profiles=args.forward_profiles)
        progress = _Progress(engine.nb_jobs, enabled=not args.no_progress)
        engine.progress = progress
        from .engine import InProcessPort
        import gc
        gc.disable()  # the run allocates many long-lived objects and no cycles: ~25 % faster
        try:
            result = engine.run(InProcessPort(policy))
        finally:
            gc.enable()
            progress.close()
        write_outputs(result, prefix, energy=args.energy)
    summary = summarize_outputs(prefix, nb_hosts)
    (out / "summary.json").write_text(json.dumps(summary.as_dict(), indent=2) + "\n", encoding="utf-8")
    print(f"policy {args.policy} on {Path(args.platform).name} ({nb_hosts} hosts), "
          f"{args.engine} engine; outputs in {out}/")
    print(summary.format())
    return 0


def cmd_engine(args: argparse.Namespace) -> int:
    from .engine import build_engine, write_outputs
    from .engine.zmq_client import ZmqPort

    engine = build_engine(args.platform, args.workload, energy=args.energy,
                          compute_sharing=args.enable_compute_sharing,
                          forward_profiles=args.forward_profiles_on_submission,
                          dynamic_jobs=args.enable_dynamic_jobs,
                          acknowledge_dynamic_jobs=args.acknowledge_dynamic_jobs, master_host=args.master_host)
    port = ZmqPort(args.socket_endpoint, timeout=args.timeout)
    try:
        result = engine.run(port)
    finally:
        port.close()
    write_outputs(result, args.export + "_", energy=args.energy)
    print(f"simulation finished at t={result.end_time:.6f} s: {len(result.jobs)} jobs, "
          f"{result.messages} messages; outputs {args.export}_*.csv", file=sys.stderr)
    return 0


def cmd_policies(args: argparse.Namespace) -> int:
    from .registry import POLICIES

    for name, cls in sorted(POLICIES.items()):
        doc = (cls.__doc__ or "").strip().splitlines()
        print(f"{name:12s} {doc[0] if doc else ''}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gridsched", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"gridsched {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="simulate a workload with a policy (the main job)",
                         description="Simulate WORKLOAD(s) on PLATFORM with POLICY and write Batsim's output files.")
    run.add_argument("--policy", required=True, help="policy name (see `gridsched policies`)")
    run.add_argument("--platform", "-p", required=True, help="SimGrid platform XML")
    run.add_argument("--workload", "-w", required=True, action="append",
                     help="Batsim JSON workload, or a SWF/GWF trace converted on the fly (repeatable)")
    run.add_argument("--output", "-o", default="out", help="output folder (default: out)")
    run.add_argument("--energy", "-E", action="store_true", help="energy model and energy outputs")
    run.add_argument("--policy-options", help="policy options as JSON or @file.json")
    run.add_argument("--engine", choices=("embedded", "batsim"), default="embedded",
                     help="embedded engine (default) or a real `batsim` binary on PATH")
    run.add_argument("--compute-sharing", action="store_true", help="Batsim's --enable-compute-sharing")
    run.add_argument("--forward-profiles", action="store_true", help="Batsim's --forward-profiles-on-submission")
    run.add_argument("--fit", choices=("error", "scale", "clamp", "drop"), default="error",
                     help="jobs larger than the platform: error (as Batsim), scale res, clamp res, drop the job; "
                          "traces drop them unless clamp/scale")
    run.add_argument("--fallback-workload", help="workload to use instead when a --workload file does not exist")
    run.add_argument("--cores-per-host", type=int, help="trace processors per host (default: the platform's cores)")
    run.add_argument("--max-jobs", type=int, help="keep only the first N jobs")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--timeout", type=float, default=3600.0, help="real-Batsim run timeout (s)")
    from .batsim.runner import add_batsim_run_args
    add_batsim_run_args(run)
    run.set_defaults(func=cmd_run)

    eng = sub.add_parser("engine", help="the embedded engine as Batsim's side of the ZMQ protocol",
                         description="Play Batsim (same flags) against an external scheduler over ZeroMQ.")
    eng.add_argument("-p", "--platform", required=True)
    eng.add_argument("-w", "--workload", required=True, action="append")
    eng.add_argument("-E", "--energy", action="store_true")
    eng.add_argument("-s", "--socket-endpoint", default="tcp://localhost:28000")
    eng.add_argument("-e", "--export", default="out",
                     help="output prefix, as Batsim: files PREFIX_jobs.csv, ... (default: out)")
    eng.add_argument("-m", "--master-host", default="master_host")
    eng.add_argument("--enable-compute-sharing", action="store_true")
    eng.add_argument("--forward-profiles-on-submission", action="store_true")
    eng.add_argument("--enable-dynamic-jobs", action="store_true",
                     help="accept REGISTER_JOB/REGISTER_PROFILE; the run ends after NOTIFY registration_finished")
    eng.add_argument("--acknowledge-dynamic-jobs", action="store_true",
                     help="answer JOB_SUBMITTED for registered jobs (needs --enable-dynamic-jobs, as in Batsim)")
    eng.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for each scheduler reply")
    eng.set_defaults(func=cmd_engine)

    pol = sub.add_parser("policies", help="list the policies")
    pol.set_defaults(func=cmd_policies)

    try:
        from .batsim.server import add_serve_parser
        add_serve_parser(sub)
    except ImportError:  # pragma: no cover
        pass
    from .inputs.convert import add_convert_parser
    add_convert_parser(sub)
    from .campaign.cli import add_campaign_parser
    add_campaign_parser(sub)
    from .inputs.scenario_cli import add_scenario_parser
    add_scenario_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gridsched`` command. Returns the exit status."""
    from .batsim.runner import BatsimRunError
    from .engine.simulator import EngineError
    from .inputs.errors import PlatformError, WorkloadError
    from .campaign.errors import CampaignError
    from .registry import PolicyOptionError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (PlatformError, WorkloadError, EngineError, KeyError, FileNotFoundError, PolicyOptionError,
            CampaignError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"gridsched: error: {msg}", file=sys.stderr)
        return 2
    except (BatsimRunError, TimeoutError) as exc:
        print(f"gridsched: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
