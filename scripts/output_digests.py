"""SHA-256 digests of the embedded engine's output files on a fixed set of runs.

A refactoring of :mod:`schedulers.engine` must leave every output byte unchanged: this script runs
a fixed set of cases (compute-only with and without ``-E``, idle-host shutdown switching pstates,
compute sharing, networked platforms of Batsim's examples, dynamic jobs, external events, kills
and walltimes, the Pajé trace) and prints, for each case, the SHA-256 of each output file
(``out_jobs.csv``, ``out_schedule.csv``, ``out_machine_states.csv``, ``out_pstate_changes.csv``,
``out_consumed_energy.csv``, ``out_schedule.trace``) and of the transcript of messages the engine
sent to the scheduler (``messages``: each message as Batsim's JSON text).

``out_schedule.csv``'s ``scheduling_time`` and ``simulation_time`` are wall clocks: they are
blanked before hashing. Cases whose inputs live in ``../shared`` (Batsim's example platforms) are
skipped, and said so, when it is absent.

Usage::

    python scripts/output_digests.py                       # print the digests (JSON)
    python scripts/output_digests.py --save benchmarks/results/output_digests.json
    python scripts/output_digests.py --check benchmarks/results/output_digests.json   # exit 1 on a difference
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from schedulers.batsim.protocol import encode_message  # noqa: E402
from schedulers.engine import Deadlock, InProcessPort, build_engine  # noqa: E402
from schedulers.engine.outputs import write_outputs  # noqa: E402
from schedulers.registry import get_policy  # noqa: E402

FIX = ROOT / "tests" / "fixtures"
_PLACES = [(str(ROOT.parent / "shared"), "<shared>"), (str((ROOT.parent / "shared").resolve()), "<shared>"),
           (str(ROOT), "<root>")]
SHARED = ROOT.parent / "shared" / "data" / "batsim-examples"
NO_NET_128 = SHARED / "energy_platform_homogeneous_no_net_128.xml"
E128 = SHARED / "cluster_energy_128.xml"
SMALL = SHARED / "small_platform.xml"
NANTES = ROOT / "platforms" / "g5k_nantes_econome.xml"

#: out_schedule.csv columns that are wall clocks
_WALL = ("scheduling_time", "simulation_time")


class Recording:
    """A scheduler port recording the SHA-256 of every message the engine sends (as JSON text)."""

    def __init__(self, port: Any) -> None:
        self.port = port
        self.digest = hashlib.sha256()
        self.count = 0

    def exchange(self, now: float, events: list) -> Any:
        # the workloads' paths in SIMULATION_BEGINS hold where the checkout lies: compared without it
        text = encode_message(now, events)
        for where, name in _PLACES:
            text = text.replace(where, name)
        self.digest.update(text.encode())
        self.digest.update(b"\n")
        self.count += 1
        return self.port.exchange(now, events)

    def __str__(self) -> str:
        return str(self.port)


def synthetic(n: int, seed: int, nb_res: int = 128) -> dict:
    """``n`` jobs of 1-8 hosts, delay and parallel_homogeneous profiles, some reaching their walltime."""
    rng = random.Random(seed)
    jobs, profiles, t = [], {}, 0.0
    for i in range(n):
        t += rng.expovariate(1 / 20.0)
        res = rng.choice((1, 1, 2, 4, 8))
        if rng.random() < 0.5:
            prof = {"type": "delay", "delay": round(rng.uniform(10, 2000), 3)}
        else:
            prof = {"type": "parallel_homogeneous", "cpu": rng.uniform(1e9, 3e12), "com": 0}
        name = f"p{i}"
        profiles[name] = prof
        wall = round(rng.uniform(50, 3000), 1) if rng.random() < 0.7 else -1
        jobs.append({"id": i, "subtime": round(t, 3), "res": res, "walltime": wall, "profile": name})
    return {"nb_res": nb_res, "jobs": jobs, "profiles": profiles}


def normalise(path: Path) -> bytes:
    """An output file's bytes, the wall-clock columns of ``out_schedule.csv`` (``scheduling_time``,
    ``simulation_time``) blanked: what two runs of the same case share."""
    data = path.read_bytes()
    if path.name.endswith("schedule.csv"):
        rows = list(csv.reader(io.StringIO(data.decode())))
        cols = [rows[0].index(c) for c in _WALL if c in rows[0]]
        for row in rows[1:]:
            for c in cols:
                row[c] = "-"
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(rows)
        data = out.getvalue().encode()
    return data


def run_case(platform: Path, workloads: list, scheduler: Any, *, energy: bool = False, **kw: Any) -> dict[str, str]:
    """Run one case and return {file name: sha256} (and ``messages``)."""
    port = Recording(scheduler if hasattr(scheduler, "exchange") else InProcessPort(scheduler))
    engine = build_engine(platform, workloads, energy=energy, **kw)
    try:
        result = engine.run(port)
        end = "ok"
    except Deadlock as dead:
        result = dead.result
        end = "deadlock"
    with tempfile.TemporaryDirectory() as tmp:
        write_outputs(result, Path(tmp) / "out_", energy=energy)
        digests = {p.name: hashlib.sha256(normalise(p)).hexdigest() for p in sorted(Path(tmp).iterdir())}
    digests["messages"] = f"{port.count}:{port.digest.hexdigest()}"
    digests["end"] = end
    return digests


def _script(name: str) -> Any:
    from scripted_scheduler import ScriptPort
    return ScriptPort(json.loads((FIX / "batsim_kill" / f"{name}.json").read_text()))


def _resubmitter() -> Any:
    """A policy registering a job (dynamic jobs) when each static job ends."""
    from procset import ProcSet

    from schedulers.core.events import NotifyBatsim
    from schedulers.core.policy import Policy

    class Resubmitter(Policy):
        def __init__(self) -> None:
            super().__init__()
            self.queue: list = []
            self.n = 0

        def on_job_submitted(self, job: Any) -> None:
            self.queue.append(job)

        def on_job_completed(self, job: Any) -> None:
            if self.n < 20:
                self.n += 1
                self.register_profile("dyn", f"p{self.n}", {"type": "parallel_homogeneous", "cpu": 2e9, "com": 0})
                self.register_job("dyn", f"r{self.n}", 1 + self.n % 2, f"p{self.n}")
                if self.n == 20:
                    self.emit(NotifyBatsim(type="registration_finished"))

        def schedule(self) -> None:
            for job in list(self.queue):
                if job.res <= len(self.available):
                    self.execute(job, ProcSet(*list(self.available)[:job.res]))
                    self.queue.remove(job)

    return Resubmitter()


def cases() -> dict[str, tuple[list[Path], Callable[[], dict[str, str]]]]:
    """Case name -> (inputs it needs, how to run it)."""
    sd = FIX / "batsim_shutdown"
    ev = FIX / "batsim_events"
    net = FIX / "batsim_network"
    pj = FIX / "batsim_paje"
    kill = FIX / "batsim_kill"
    ms = FIX / "batsim_message_sharing"
    zw = FIX / "batsim_zero_work_steps"
    le = FIX / "batsim_lazy_energy"
    sp = FIX / "batsim_sleep_pstates"
    eh = FIX / "batsim_ehosep"
    lp = FIX / "batsim_loopback_ptask"
    fl = FIX / "batsim_full_loopback"
    syn = synthetic(1500, 1)
    dyn_wl = {"nb_res": 4, "jobs": [{"id": i, "subtime": i * 3.0, "res": 1 + i % 2, "walltime": -1, "profile": "d"}
                                    for i in range(10)],
              "profiles": {"d": {"type": "delay", "delay": 7.5}}}
    c: dict[str, tuple[list[Path], Callable[[], dict[str, str]]]] = {
        "nocomm_easy": ([NO_NET_128], lambda: run_case(NO_NET_128, [syn], get_policy("easy"))),
        "nocomm_fcfs_E": ([NO_NET_128], lambda: run_case(NO_NET_128, [syn], get_policy("fcfs"), energy=True)),
        "nocomm_easy_E": ([NO_NET_128], lambda: run_case(NO_NET_128, [syn], get_policy("easy"), energy=True)),
        "nocomm_easy_E_shutdown": ([NO_NET_128], lambda: run_case(
            NO_NET_128, [syn], get_policy("easy", {"idle_timeout": 60}), energy=True)),
        "nantes_demo_easy_E": ([NANTES], lambda: run_case(
            NANTES, [str(ROOT / "workloads" / "demo_nantes.json")], get_policy("easy"), energy=True)),
        "shutdown_fcfs_E": ([sd], lambda: run_case(sd / "platform.xml", [str(sd / "workload.json")],
                                                   get_policy("fcfs", {"idle_timeout": 25}), energy=True)),
        "shutdown_easy_E": ([sd], lambda: run_case(sd / "platform.xml", [str(sd / "workload.json")],
                                                   get_policy("easy", {"idle_timeout": 25}), energy=True)),
        "sleep_pstates_init_E": ([sp], lambda: run_case(sp / "init.xml", [str(sp / "w1.json")], get_policy("fcfs"),
                                                        energy=True)),
        "message_sharing_E": ([ms], lambda: run_case(ms / "platform.xml", [str(ms / "workload.json")],
                                                     get_policy("fcfs"), energy=True)),
        "zero_work_steps_E": ([zw], lambda: run_case(zw / "platform.xml", [str(zw / "workload.json")],
                                                     get_policy("fcfs"), energy=True)),
        "lazy_energy_E": ([le], lambda: run_case(le / "platform.xml", [str(le / "workload.json")],
                                                 get_policy("fcfs"), energy=True)),
        "ehosep_csp_E": ([eh], lambda: run_case(eh / "csp_platform.xml", [str(eh / "csp_workload.json")],
                                                get_policy("ehosep", {"limits": {"B": 300, "C": 300}}), energy=True,
                                                dynamic_jobs=True, forward_profiles=True)),
        "dynamic_resubmit": ([FIX / "hetero4.xml"], lambda: run_case(
            FIX / "hetero4.xml", [dyn_wl], _resubmitter(), dynamic_jobs=True, acknowledge_dynamic_jobs=True)),
        "dynamic_resubmit_E": ([FIX / "hetero4.xml"], lambda: run_case(
            FIX / "hetero4.xml", [dyn_wl], _resubmitter(), energy=True, dynamic_jobs=True,
            acknowledge_dynamic_jobs=True)),
        "events_easy": ([ev], lambda: run_case(ev / "p.xml", [str(ev / "w.json")], get_policy("easy"),
                                               events=[ev / "events.txt"], forward_unknown_events=True)),
        "events_fcfs_E": ([ev], lambda: run_case(ev / "p.xml", [str(ev / "w.json")], get_policy("fcfs"),
                                                 energy=True, events=[ev / "events.txt"],
                                                 forward_unknown_events=True)),
        "events_ties_easy": ([ev], lambda: run_case(ev / "p.xml", [str(ev / "w.json")], get_policy("easy"),
                                                    events=[ev / "events_ties.txt"], forward_unknown_events=True)),
        "kill_unsent": ([kill], lambda: run_case(kill / "p.xml", [str(kill / "w.json")], _script("unsent"))),
        "kill_unsent_E": ([kill], lambda: run_case(kill / "p.xml", [str(kill / "w.json")], _script("unsent"),
                                                   energy=True)),
        "kill_twice_E": ([kill], lambda: run_case(kill / "p.xml", [str(kill / "w.json")], _script("twice"),
                                                  energy=True)),
        "kill_inflight_net": ([kill], lambda: run_case(kill / "e.xml", [str(kill / "w.json")], _script("inflight"))),
        "paje_heft_net_sharing": ([pj], lambda: run_case(pj / "network" / "p.xml", [str(pj / "network" / "w.json")],
                                                         get_policy("heft"), compute_sharing=True)),
        "net_tiny_fcfs": ([net], lambda: run_case(net / "tiny_net.xml", [str(net / "tiny_net.json")],
                                                  get_policy("fcfs"))),
        "net_tie_walltime_E": ([net], lambda: run_case(net / "tie_net.xml", [str(net / "tie_walltime.json")],
                                                       get_policy("fcfs"), energy=True)),
        "net_e128_easy_E": ([E128, net], lambda: run_case(E128, [str(net / "e128_workload.json")],
                                                          get_policy("easy"), energy=True)),
        "net_e128_sleep_E": ([E128, net], lambda: run_case(E128, [str(net / "e128_workload.json")],
                                                           get_policy("easy", {"idle_timeout": 60}), energy=True)),
        "net_e128_green_sharing_E": ([E128, net], lambda: run_case(
            E128, [str(net / "e128_workload.json")], get_policy("green-easy", {"delta": 30}), energy=True,
            compute_sharing=True)),
        "net_e128_clock_E": ([E128, net], lambda: run_case(E128, [str(net / "clock_workload.json")],
                                                           get_policy("fcfs"), energy=True)),
        "net_small_easy": ([SMALL, net], lambda: run_case(SMALL, [str(net / "small_workload.json")],
                                                          get_policy("easy"))),
        "net_e128_synthetic_easy_E": ([E128], lambda: run_case(E128, [synthetic(400, 2)], get_policy("easy"),
                                                               energy=True)),
        "net_e128_synthetic_sharing": ([E128], lambda: run_case(E128, [synthetic(300, 3)], get_policy("fcfs"),
                                                                compute_sharing=True)),
        "nocomm_heft_sharing": ([NO_NET_128], lambda: run_case(NO_NET_128, [synthetic(300, 4)], get_policy("heft"),
                                                               compute_sharing=True)),
        "loopback_ptask_E": ([lp], lambda: run_case(lp / "platform.xml", [str(lp / "workload.json")],
                                                    get_policy("fcfs"), energy=True)),
    }
    for w in ("late", "same_end", "tie"):
        c[f"full_loopback_{w}_E"] = ([fl], lambda w=w: run_case(fl / "platform.xml", [str(fl / f"{w}.json")],
                                                                  get_policy("fcfs"), energy=True))
        c[f"full_loopback_{w}"] = ([fl], lambda w=w: run_case(fl / "platform.xml", [str(fl / f"{w}.json")],
                                                                get_policy("easy")))
    return c


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--save", type=Path, help="write the digests (JSON) to this file")
    ap.add_argument("--check", type=Path, help="compare with the digests in this file; exit 1 on a difference")
    ap.add_argument("--only", help="comma-separated case names")
    args = ap.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    out: dict[str, Any] = {}
    for name, (needs, run) in cases().items():
        if only and name not in only:
            continue
        missing = [str(p) for p in needs if not p.exists()]
        out[name] = {"skipped": f"missing {', '.join(missing)}"} if missing else run()
    text = json.dumps(out, indent=1, sort_keys=True) + "\n"
    if args.save:
        args.save.write_text(text)
    if args.check:
        ref = json.loads(args.check.read_text())
        bad = [k for k in out if ref.get(k) != out[k]]
        for k in bad:
            print(f"DIFFERENT: {k}: {json.dumps(ref.get(k))} != {json.dumps(out[k])}")
        print(f"{len(out) - len(bad)}/{len(out)} cases equal")
        return 1 if bad else 0
    if not args.save:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
