#!/usr/bin/python3
"""Record SimGrid 3.32's own answer for hosts shared by parallel tasks (the sharing oracle).

Regenerate the fixture (Debian's ``python3-simgrid`` 3.32, run from the repository root)::

    /usr/bin/python3 scripts/record_simgrid_sharing.py --count 60 --seed 20240611 --out tests/fixtures/simgrid_sharing.json

Other uses::

    /usr/bin/python3 scripts/record_simgrid_sharing.py --replay tests/fixtures/simgrid_sharing.json --index 3 --index 7
        # re-runs those scenarios in SimGrid, prints {"index": results} as JSON
    /usr/bin/python3 scripts/record_simgrid_sharing.py --run-one lazy < scenario.json
        # internal: one SimGrid run of one scenario (a SimGrid engine can run once per process)

What is simulated, as Batsim 4.2.1 does with ``--enable-compute-sharing``: a platform written
like Batsim's (one ``Full`` zone, no links, a ``master_host``; hosts with ``core``, one speed
per pstate, ``wattage_per_state`` ``Idle:Epsilon:AllCores`` per pstate and ``wattage_off``),
SimGrid configured with ``--cfg=host/model:ptask_L07 --cfg=plugin:host_energy``; one actor per
task on the master host sleeps until the task's start time, then runs
``this_actor.parallel_execute(hosts, flops, zero bytes)`` and records the clock when it
returns; in some scenarios, one actor per pstate change sleeps then sets ``Host.pstate``. A
main actor joins them all and reads every compute host's energy with
``sg_host_get_consumed_energy`` (the Python bindings of 3.32 have no energy API: it is called
through ``ctypes`` in the already loaded ``libsimgrid.so.3.32``).

Each scenario runs twice: ``lazy`` makes no other energy call, so the plugin integrates only
when SimGrid triggers it (see ``schedulers/engine/sharing.py``); ``batsim`` also calls
``sg_host_energy_update_all()`` right before every task starts and right after it ends, as
Batsim 4.2.1 reads the energy of every compute host at each job start and end
(``src/jobs_execution.cpp`` ``execute_job``: ``consumed_energy_on_machines`` and
``EnergyConsumptionTracer::add_job_start``/``add_job_end`` -> ``Machines::total_consumed_energy``),
and right before each pstate change, as Batsim's SET_RESOURCE_STATE writes an energy row
(``server_on_pstate_modification``: ``EnergyConsumptionTracer::add_pstate_change`` reads every
host) before it sets the pstate. Finish times do not depend on the mode (checked).

Scenarios are seeded (``random.Random(seed * 1000 + i)``): 1-4 hosts of 1-8 cores, speeds
1e8..2e9 flops/s, 1 or 2 pstates, 2-8 tasks of 1-3 parts (sometimes a host twice, sometimes
a zero-flops part, rarely a task with no flops at all), 1e8..5e10 flops per part, start times
0..50 s (often shared), sometimes one or two pstate changes, and sometimes a pstate of speed 0
entered then left. The output JSON holds the command, SimGrid's version, the scenarios and
SimGrid's results.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile

COMMAND = ("/usr/bin/python3 scripts/record_simgrid_sharing.py --count {count} --seed {seed} "
           "--out {out}")


# --------------------------------------------------------------------------- scenarios

def make_scenario(seed: int, index: int) -> dict:
    """One random scenario (pure Python, no SimGrid needed)."""
    rng = random.Random(seed * 1000 + index)
    nh = rng.randint(1, 4)
    hosts = []
    for h in range(nh):
        cores = rng.choice([1, 1, 2, 2, 3, 4, 4, 6, 8])
        s0 = round(math.exp(rng.uniform(math.log(1e8), math.log(2e9))) / 1e6)  # Mf, integer
        speeds = [float(s0) * 1e6]
        if rng.random() < 0.4:
            speeds.append(float(max(1, round(s0 * rng.uniform(0.25, 0.8)))) * 1e6)
        watts = []
        for _ in speeds:
            idle = round(rng.uniform(50, 150), 2)
            eps = round(idle + rng.uniform(0, 40), 2)
            allc = round(eps + rng.uniform(20, 150), 2)
            watts.append([idle, eps, allc])
        hosts.append({"name": f"h{h}", "cores": cores, "speeds": speeds, "watts": watts,
                      "wattage_off": 10.0})
    nt = rng.randint(2, 8)
    starts_pool = [0.0]
    tasks = []
    for _ in range(nt):
        r = rng.random()
        if r < 0.45:
            start = rng.choice(starts_pool)
        else:
            start = round(rng.uniform(0, 50) * 4) / 4  # quarter seconds
            starts_pool.append(start)
        k = rng.randint(1, min(3, nh) if rng.random() < 0.9 else 3)
        if rng.random() < 0.12 or k > nh:
            parts = [rng.randrange(nh) for _ in range(k)]  # a host may appear twice
        else:
            parts = rng.sample(range(nh), k)
        flops = []
        for _ in parts:
            if rng.random() < 0.08:
                flops.append(0.0)
            else:
                flops.append(float(round(math.exp(rng.uniform(math.log(1e8), math.log(5e10))) / 1e6)) * 1e6)
        if rng.random() < 0.03:
            flops = [0.0] * len(parts)
        tasks.append({"hosts": parts, "flops": flops, "start": start})
    changes = []
    multi = [h for h in range(nh) if len(hosts[h]["speeds"]) > 1]
    if multi and rng.random() < 0.6:
        for _ in range(rng.randint(1, 2)):
            h = rng.choice(multi)
            t = round(rng.uniform(0.5, 60) * 4) / 4 + 0.1  # never a task start time
            changes.append({"time": t, "host": h, "pstate": rng.randrange(len(hosts[h]["speeds"]))})
    if rng.random() < 0.15:  # a pstate of speed 0 (parts there stall, the plugin counts it fully loaded)
        h = rng.randrange(nh)
        hosts[h]["speeds"].append(0.0)
        idle = round(rng.uniform(5, 50), 2)
        hosts[h]["watts"].append([idle, idle, round(idle + rng.uniform(0, 20), 2)])
        t = round(rng.uniform(0.5, 40) * 4) / 4 + 0.2
        changes.append({"time": t, "host": h, "pstate": len(hosts[h]["speeds"]) - 1})
        changes.append({"time": t + round(rng.uniform(1, 20) * 4) / 4, "host": h, "pstate": 0})
    changes.sort(key=lambda c: c["time"])
    return {"index": index, "seed": seed * 1000 + index, "hosts": hosts, "tasks": tasks,
            "pstate_changes": changes}


def platform_xml(sc: dict) -> str:
    """Batsim-style platform: one Full zone, no links, a master host."""
    lines = ["<?xml version='1.0'?>",
             '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">',
             '<zone id="AS0" routing="Full">',
             '  <host id="master_host" speed="100.0Mf"><prop id="wattage_per_state" value="100.0:200.0"/>'
             '<prop id="wattage_off" value="10"/></host>']
    for h in sc["hosts"]:
        speeds = ", ".join(f"{s / 1e6:.1f}Mf" for s in h["speeds"])
        watts = ", ".join(f"{i!r}:{e!r}:{a!r}" for i, e, a in h["watts"])
        lines.append(f'  <host id="{h["name"]}" speed="{speeds}" core="{h["cores"]}">'
                     f'<prop id="wattage_per_state" value="{watts}"/>'
                     f'<prop id="wattage_off" value="{h["wattage_off"]!r}"/></host>')
    lines.append("</zone></platform>")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- one SimGrid run

def run_one(sc: dict, mode: str) -> dict:
    """Run one scenario in this process's SimGrid (only once per process)."""
    import ctypes

    import simgrid
    from simgrid import Actor, Engine, Host, this_actor

    lib = ctypes.CDLL("libsimgrid.so.3.32")
    lib.sg_host_by_name.restype = ctypes.c_void_p
    lib.sg_host_by_name.argtypes = [ctypes.c_char_p]
    lib.sg_host_get_consumed_energy.restype = ctypes.c_double
    lib.sg_host_get_consumed_energy.argtypes = [ctypes.c_void_p]
    lib.sg_host_energy_update_all.restype = None
    lib.sg_host_energy_update_all.argtypes = []
    batsim = mode == "batsim"

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "platform.xml")
        with open(path, "w") as f:
            f.write(platform_xml(sc))
        e = Engine(["record_simgrid_sharing", "--cfg=host/model:ptask_L07", "--cfg=plugin:host_energy",
                    "--log=root.thres:critical"])
        e.load_platform(path)
        names = [h["name"] for h in sc["hosts"]]
        for h in sc["hosts"]:
            host = Host.by_name(h["name"])
            got = [host.pstate_speed(k) for k in range(host.pstate_count)]
            if got != h["speeds"] or host.core_count != h["cores"]:
                raise RuntimeError(f"{h['name']}: SimGrid reads speeds {got}, cores {host.core_count}")
        finish = [None] * len(sc["tasks"])
        out: dict = {}

        def task(i: int) -> None:
            t = sc["tasks"][i]
            if t["start"] > 0:
                this_actor.sleep_for(t["start"])
            hs = [Host.by_name(names[h]) for h in t["hosts"]]
            n = len(hs)
            if batsim:
                lib.sg_host_energy_update_all()
            this_actor.parallel_execute(hs, [float(x) for x in t["flops"]], [0.0] * (n * n))
            finish[i] = Engine.clock
            if batsim:
                lib.sg_host_energy_update_all()

        def change(c: dict) -> None:
            this_actor.sleep_for(c["time"])
            if batsim:  # Batsim's SET_RESOURCE_STATE writes an energy row first (all hosts read)
                lib.sg_host_energy_update_all()
            Host.by_name(names[c["host"]]).pstate = c["pstate"]

        def main() -> None:
            master = Host.by_name("master_host")
            actors = [Actor.create(f"task{i}", master, task, i) for i in range(len(sc["tasks"]))]
            actors += [Actor.create(f"pstate{k}", master, change, c)
                       for k, c in enumerate(sc["pstate_changes"])]
            for a in actors:
                a.join()
            out["end_time"] = Engine.clock
            out["energy"] = [lib.sg_host_get_consumed_energy(lib.sg_host_by_name(n.encode())) for n in names]

        Actor.create("main", Host.by_name("master_host"), main)
        e.run()
    out["finish"] = finish
    out["simgrid_version"] = simgrid.simgrid_version
    return out


def run_scenario(sc: dict, script: str) -> dict:
    """Both modes, each in a fresh /usr/bin/python3 process."""
    res = {}
    for mode in ("lazy", "batsim"):
        p = subprocess.run([sys.executable, script, "--run-one", mode], input=json.dumps(sc),
                           capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            raise RuntimeError(f"scenario {sc['index']} ({mode}) failed:\n{p.stderr[-3000:]}")
        res[mode] = json.loads(p.stdout.strip().splitlines()[-1])
    lazy, batsim = res["lazy"], res["batsim"]
    if lazy["finish"] != batsim["finish"] or lazy["end_time"] != batsim["end_time"]:
        raise RuntimeError(f"scenario {sc['index']}: finish times depend on the energy mode")
    return {"finish": lazy["finish"], "end_time": lazy["end_time"], "energy_lazy": lazy["energy"],
            "energy_batsim": batsim["energy"], "simgrid_version": lazy["simgrid_version"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=60)
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--out", default="tests/fixtures/simgrid_sharing.json")
    ap.add_argument("--run-one", choices=["lazy", "batsim"], help="internal: run the scenario on stdin")
    ap.add_argument("--replay", metavar="FIXTURE", help="re-run scenarios of a fixture, print results")
    ap.add_argument("--index", type=int, action="append", help="with --replay: scenario index (repeatable)")
    args = ap.parse_args(argv)
    script = os.path.abspath(__file__)

    if args.run_one:
        print(json.dumps(run_one(json.load(sys.stdin), args.run_one)))
        return 0
    if args.replay:
        with open(args.replay) as f:
            data = json.load(f)
        wanted = args.index if args.index else range(len(data["scenarios"]))
        out = {}
        for i in wanted:
            sc = {k: v for k, v in data["scenarios"][i].items() if k != "results"}
            out[str(i)] = run_scenario(sc, script)
        print(json.dumps(out))
        return 0

    scenarios = []
    for i in range(args.count):
        sc = make_scenario(args.seed, i)
        sc["results"] = run_scenario(sc, script)
        scenarios.append(sc)
        print(f"scenario {i}: {len(sc['tasks'])} tasks, end {sc['results']['end_time']:.6f} s",
              file=sys.stderr)
    data = {
        "command": COMMAND.format(count=args.count, seed=args.seed, out=args.out),
        "simgrid_version": scenarios[0]["results"]["simgrid_version"] if scenarios else None,
        "config": ["--cfg=host/model:ptask_L07", "--cfg=plugin:host_energy"],
        "notes": ("finish[i]: clock when task i's parallel_execute returned (s); energy_*: joules of each "
                  "compute host read at end_time with sg_host_get_consumed_energy; lazy: no other energy "
                  "call; batsim: also sg_host_energy_update_all() right before each task starts and right "
                  "after it ends and right before each pstate change (as Batsim 4.2.1 reads every host's energy at job "
                  "start and end and in the energy row of each SET_RESOURCE_STATE). "
                  "Speeds in flops/s, flops per part, watts [Idle, Epsilon, AllCores] per pstate."),
        "scenarios": scenarios,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
