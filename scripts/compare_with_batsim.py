#!/usr/bin/env python3
"""Compare the embedded engine with real Batsim 4.2.1 on seeded random cases, file by file.

Each case (seed ``s``) is a small platform and workload written here: 1-6 compute hosts in one
``Vivaldi`` (coordinates ``0 0 0``) or ``Full`` zone, 1-4 cores, with or without pstates (a
computing pstate pair, a sleep pstate and its two switching pstates); 3-25 jobs of ``delay``,
``parallel_homogeneous`` (with or without ``com``), ``parallel_homogeneous_total`` and
``composed`` profiles, submission times with ties and sub-microsecond parts, walltimes short
enough to kill some jobs; policy FCFS, EASY or conservative; ``-E`` and
``--compute-sharing`` drawn at random. Each case runs twice through ``gridsched run``, on the
embedded engine and with ``--engine batsim`` (the same policy behind gridsched's ZeroMQ server,
real Batsim from ``PATH``), and ``out_jobs.csv``, ``out_machine_states.csv``,
``out_consumed_energy.csv`` and ``out_pstate_changes.csv`` are compared byte for byte, and
``out_schedule.trace`` (the Pajé trace) byte for byte but for each job's colour (Batsim shuffles
its 64 colours with ``std::random_device``: they change from run to run).

``--suite wide`` draws each case's policy among all of gridsched's (FCFS, EASY, conservative, HEFT,
green-easy, green-heft, BUC, buc-easy, OSEP, HOSEP, EHOSEP; the owner-share ones on generated
platforms whose hosts get an ``owner``, every job a ``user``) and its platform among the
generated ones above, a generated ``<cluster>`` of 1-8 hosts with links (random bandwidth,
latency, sharing policy, backbone, loopback) joined to the master host's zone, and Batsim's and
the project's platforms (``small_platform.xml``, ``energy_platform_homogeneous.xml``,
``cluster_energy_128.xml``, ``cluster512.xml``, ``energy_platform_homogeneous_no_net_128.xml``
from ``../shared``, ``platforms/g5k_*.xml``); jobs also get ``parallel`` profiles (communication
matrices on networked platforms) and sizes up to one host more than the platform (``--fit
keep``: the policy rejects them); with ``-E`` on hosts with sleep pstates, half the cases
switch idle hosts off (``idle_timeout`` 0-30 s).

``--suite kills`` runs ``scripts/kill_policy.py`` (FCFS that kills running jobs at random, names a
job twice or one that just ended, and changes idle hosts' pstates with ``-E``) on the basic
suite's platforms and the generated clusters, ``-E`` and ``--compute-sharing`` at random.

``--suite platforms`` runs FCFS, EASY, conservative and HEFT on the basic suite's hosts in a
Vivaldi zone at random coordinates (the messages' latencies: 0.01 to 40 ms of distance), or on
a routing="Cluster" zone of ``<cabinet>``s, a host and the master host with ``<host_link>``s and
maybe a ``<backbone>``; jobs with communications.

``--suite events`` gives each case one or two external events files (``--events``; each machine's
events in one file) on 1-8 hosts, or 9-40 in a quarter of the cases, of the basic suite's
platforms or a generated ``<cluster>``: 0-3 unavailability windows a machine at random times, at
job submissions and ends, at 0 or long after the last job (one machine unavailable to the end in
a tenth of the files), the machines of one instant in one event or in several, generic events
with ``--forward-unknown-events`` in half the cases; 1-3 workloads, ``--forward-profiles``,
``-E`` (idle hosts switched off in some cases) and ``--compute-sharing`` at random; FCFS, EASY or
conservative. A few files hold a fault that Batsim refuses (a machine made unavailable twice or
available while it is not unavailable, a machine past the platform's, a timestamp below 0): both
sides must then refuse. ``--suite events-big`` draws the same on the wide suite's platforms of
22 to 512 hosts (Batsim's and the project's, read as they are).

``--suite io`` runs the IO profiles (``parallel_homogeneous_pfs``, ``data_staging``) on generated
platforms with 1-3 storage hosts, with storage mappings and kills (``scripts/io_cases.py``,
``scripts/io_policy.py``), EXECUTE_JOB's ``additional_io_job`` for some jobs, a storage host in
the allocation of some jobs that compute nothing, ``-E`` in half the cases (power on the compute
and storage hosts; SET_RESOURCE_STATE switching a storage host of two pstates in some).
Seeds 1-250 (before the IO jobs, storage-host jobs and switches were drawn): 215 equal (103 of the
119 with ``-E``), 35 refused by both alike (a pfs profile's default label ``pfs`` not in the
mapping, on platforms without a storage host of that name). Seeds 30200-30299: 87 equal (44 of
the 49 with ``-E``; 34 cases with IO jobs, 30 with jobs on storage hosts, 19 with switches), 13
refused by both alike (the same label).

``--suite traces`` runs real inputs of ``../shared``, read as they are: a Grid'5000 Lyon workload
(GridGym's weekly and daily files, ``parallel_homogeneous`` jobs) on ``lyon_taurus.xml`` or
``lyon_taurus_2.xml`` (without ``-E``: their power properties have names SimGrid 3.32 ignores), or
the first 200-2,000 jobs of a Parallel Workloads Archive log (KTH-SP2, NASA-iPSC, HPC2N,
LANL-CM5, converted on the fly) on the wide suite's platforms of 22 to 512 hosts; FCFS, EASY,
conservative, BUC or green-easy; ``-E`` (idle hosts switched off in some cases) and
``--compute-sharing`` at random where the platform has power states.

``--suite sharing`` runs ``scripts/sharing_policy.py`` (each job started at its submission on hosts
drawn at random, whatever runs there, some killed 0.23-2.71 s later) with ``--compute-sharing`` on
the basic suite's platforms and the generated clusters, ``-E`` at random: machines run several jobs
at once, which the Pajé trace shows by Batsim's order of the jobs' addresses in memory
(``docs/engine/fidelity.md``). Seeds 1-200: 198 equal; seeds 80 and 136 differ in the trace only
(Batsim's address order of those files on those platforms is not the usual one); seed 161 differed
in ``out_machine_states.csv`` and the trace until a task ending in the step of a walltime's kill
was no longer re-armed (``tests/fixtures/batsim_vivaldi_sharing_tie``). With the engine's former
rule (load order, no swap), seeds 1-100 gave 53 equal.

``--suite protocol`` runs Batsim's own command line against ``gridsched engine`` (this checkout),
the scheduler ``scripts/protocol_scheduler.py`` speaking the protocol itself over ZeroMQ on both
sides: late replies whose decisions are dated between the message's ``now`` and the reply's,
bursts of CALL_ME_LATER at submission times and delay ends, KILL_JOB of running jobs (``composed``
ones with ``repeat`` and nested sequences), REJECT_JOB, SET_JOB_METADATA, QUERY
``consumed_energy``, SET_RESOURCE_STATE switching idle hosts off and on or to another
computation pstate, dynamic jobs (REGISTER_PROFILE of ``delay``, ``parallel_homogeneous`` and
``parallel`` profiles with zeros in their matrices, REGISTER_JOB, ``registration_finished`` and
``continue_registration``); on the basic suite's platforms and the generated clusters, 0-3 or 11
workloads (``parallel`` matrices with zeros, ``composed`` profiles of ``repeat`` 1-3 nesting
others), at random ``-E``, ``--enable-compute-sharing``, ``--enable-dynamic-jobs``,
``--acknowledge-dynamic-jobs``, ``--enable-profile-reuse``, ``--forward-profiles-on-submission``,
``--mmax-workload``, ``--mmax``, ``-q``, ``--sched-cfg``, ``-r HOST:compute_node``,
``--disable-storage-sharing``, ``--disable-schedule-tracing``,
``--disable-machine-state-tracing``. Besides the output files, every message each side sent the
scheduler is compared byte for byte (``messages.jsonl``). Seeds 1-400 (30,472 messages): 339
equal, 25 refused by both alike (a job of a registered ``composed`` profile, on which Batsim
crashes; a busy compute host with ``--disable-storage-sharing``), 36 differ in the Pajé trace only
(compute sharing with several workloads or registered jobs: Batsim's address order), once seven
differences were followed (``docs/engine/fidelity.md``). Seeds 1000-1199: 167 equal, 11 refused by
both alike, 21 differ in the trace only, seed 1186 in the order of two events of one message.

Usage (real Batsim 4.2.1 on PATH, its libraries on LD_LIBRARY_PATH)::

    python scripts/compare_with_batsim.py --seeds 1000 --count 400 --out /tmp/cmp
    python scripts/compare_with_batsim.py --suite wide --seeds 1 --count 400 --out /tmp/cmp-wide
    python scripts/compare_with_batsim.py --suite events --seeds 1 --count 250 --out /tmp/cmp-events
    python scripts/compare_with_batsim.py --suite traces --seeds 1 --count 40 --out /tmp/cmp-traces
    python scripts/compare_with_batsim.py --suite protocol --seeds 1 --count 300 --out /tmp/cmp-protocol

Prints a JSON summary (``equal``, ``differ`` with the files, ``refused`` by both sides with their
last error lines, ``disagree`` when one side refuses and the other runs; when both refuse, the
output files both wrote, such as a deadlock's, are compared all the same); each case's inputs,
arguments and both output folders stay in ``OUT/s<seed>/`` for a closer look. Exit status 1 when
a case differs or the two sides disagree.

Against Batsim 4.2.1 (meson release build, Debian SimGrid 3.32): of 1,312 cases of the basic
suite (seeds 1-12, 100-199, 1000-1399, 2000-2799), 1,311 equal, seed 2304 differing in the last
printed digit of one ``epower`` value (490.833413 against 490.833412); of the wide suite's seeds
1-400 and 1000-1999, 1,397 of 1,400 equal, and of seeds 3300-3499, 197 of 200 (one ``epower``
value; two refused by both); the basic suite's seeds 1000-1199 with ``out_schedule.trace``, 200 of
200; with the rules for kills, several sleep pstates, cabinets, Vivaldi coordinates and mailbox
look-ups, wide seeds 6000-6079, 80 of 80 equal; basic 6000-6059, 60 of 60; ``--suite kills``
200-259, 58 equal and 2 refused by both (a kill of a job whose end was already sent); seeds 1-60
and 1000-1099, 153 equal and 7 refused by both (the same), and wide seeds 6000-6079, 80 of 80,
with the rules for tasks held at their walltime (``tests/fixtures/batsim_held_timeout``,
``batsim_pending_held``);
``--suite platforms`` 500-559, 60 of 60. ``--suite events``: seeds 1-150 and 1000-1149 first gave
five cases of several workloads submitted out of order with ``-E`` (``batsim_first_submission_read``)
and seed 104 a job end out of order after a rate change (``batsim_rate_change_order``); with both
fixed, seeds 1-250, 1000-1249, 2000-2249, 3000-3249 and 4000-4249: 959 of 1,250 equal, none
differing, 291 refused by both with the same files written (85 deadlocks where a machine stays
unavailable, 59 EXECUTE_JOB crossing an event, 9 hosts made unavailable while switching, 138
faults of the files); ``--suite events-big`` 7000-7059 (the first drawing of which, seed 7021, took 2.8e9 solver
rounds that the engine refused: ``batsim_long_solve``), 38 equal, 22 refused by both with the same
files (EXECUTE_JOB crossing an event, switches crossing one, faults); then basic 1000-1149, 150 of 150, wide
1-150 and 6000-6079, 230 of 230, platforms 500-559, 60 of 60, kills 200-259, 58 equal and 2
refused by both. With Batsim's ``long double`` ``epower`` followed and the steps of 0 s that end a
sleep shorter than SimGrid's precision (``batsim_epower_tie``, ``batsim_subprecision_step``, found
on basic seed 90125): basic 2000-2399, 90000-90199 and 93000-93299, 900 of 900; wide 1-400,
1000-1999 and 3300-3499, 1,598 of 1,600 and 2 refused by both (seed 2304 of the basic suite and
the ``epower`` cases above now equal too); kills 6100-6159, 59 equal and 1 refused by both. With a
job's ``consumed_energy`` printed from Batsim's ``long double`` and ``wattmin`` summed afresh
(``batsim_job_energy``, ``batsim_wattmin_sum``, found on real traces), ``--suite traces`` seeds
1-100: 100 of 100 equal (86,091 jobs; 45 cases with ``-E``, 14 of them switching idle hosts off,
31 with compute sharing), and wide 1-120, 120 of 120. The cases that differ are the known
differences of the documentation's fidelity page (``docs/engine/fidelity.md``).
"""

from __future__ import annotations

import argparse
import filecmp
import importlib.util
import json
import random
import re
import subprocess
import sys
from functools import partial
from pathlib import Path

from procset import ProcSet

FILES = ("out_jobs.csv", "out_machine_states.csv", "out_consumed_energy.csv", "out_pstate_changes.csv",
         "out_schedule.trace")
#: A job's entity value in the Pajé trace, its colour apart.
_PAJE_COLOR = re.compile(r'^(5 j.* machine_state ".*") "[0-9. ]+"$', re.M)


def same_file(a: Path, b: Path) -> bool:
    """``a`` and ``b`` hold the same bytes (a Pajé trace: but for the jobs' colours)."""
    if a.suffix == ".trace":
        return (_PAJE_COLOR.sub(r"\1", a.read_text(encoding="utf-8", errors="replace"))
                == _PAJE_COLOR.sub(r"\1", b.read_text(encoding="utf-8", errors="replace")))
    return filecmp.cmp(a, b, shallow=False)
WATTS = "95.0:95.0:190.0, 95.0:95.0:150.0, 9.75:9.75:9.75, 100.0:100.0:100.0, 125.0:125.0:125.0"
SPEEDS = "100Mf, 60Mf, 1e-9Mf, 0.1Mf, 0.2Mf"


def platform(rng: random.Random, n: int) -> tuple[str, bool]:
    """A platform of ``n`` compute hosts and whether its hosts have pstates (energy)."""
    routing = rng.choice(["Vivaldi", "Full"])
    energy = rng.random() < 0.7
    coords = ' coordinates="0 0 0"' if routing == "Vivaldi" else ""

    def host(name: str) -> str:
        core = rng.choice([1, 1, 2, 4])
        if energy:
            return (f'<host id="{name}"{coords} speed="{SPEEDS}" pstate="0" core="{core}">'
                    f'<prop id="wattage_per_state" value="{WATTS}"/><prop id="wattage_off" value="10"/>'
                    f'<prop id="sleep_pstates" value="2:3:4"/></host>')
        return f'<host id="{name}"{coords} speed="{rng.choice(["100Mf", "50Mf", "200Mf"])}" core="{core}"/>'

    hosts = "".join(host(f"h{i}") for i in range(n))
    master_props = '<prop id="wattage_per_state" value="100:100:200"/><prop id="wattage_off" value="10"/>' if energy else ""
    return ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            f'<platform version="4.1"><zone id="AS0" routing="{routing}">'
            f'<host id="master_host"{coords} speed="100Mf">{master_props}</host>{hosts}</zone></platform>\n'), energy


def workload(rng: random.Random, n: int) -> dict:
    """A Batsim workload for ``n`` hosts."""
    profiles: dict[str, dict] = {}

    def profile() -> str:
        k = rng.random()
        name = f"{len(profiles)}"
        if k < 0.4:
            name, prof = "d" + name, {"type": "delay", "delay": rng.choice([1, 2, 5, 7.5, 10, 0.001, 3.3333])}
        elif k < 0.75:
            name, prof = "p" + name, {"type": "parallel_homogeneous", "cpu": rng.choice([1e6, 1e8, 5e8, 3.3e7]),
                                      "com": rng.choice([0, 0, 1e6, 1e7])}
        elif k < 0.9:
            name, prof = "t" + name, {"type": "parallel_homogeneous_total", "cpu": rng.choice([1e8, 4e8]), "com": 0}
        else:
            seq = [profile(), profile()]
            name, prof = f"c{len(profiles)}", {"type": "composed", "repeat": rng.choice([1, 2]), "seq": seq}
        profiles[name] = prof
        return name

    jobs, t = [], 0.0
    for i in range(rng.randint(3, 25)):
        t += rng.choice([0, 0, 1, 0.5, 2, 0.123456789, 3])
        jobs.append({"id": str(i), "subtime": round(t, 9), "walltime": rng.choice([-1, -1, 3, 10, 50, 1.5]),
                     "res": rng.randint(1, n), "profile": profile()})
    return {"nb_res": n, "jobs": jobs, "profiles": profiles}


ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
#: Platforms of the wide suite read as they are: (path, compute hosts, sleep pstates, network).
FILE_PLATFORMS = (
    (SHARED / "batsim-examples" / "small_platform.xml", 4, False, True),
    (SHARED / "batsim-examples" / "energy_platform_homogeneous.xml", 4, True, True),
    (SHARED / "batsim-examples" / "cluster_energy_128.xml", 128, True, True),
    (SHARED / "batsim-examples" / "cluster512.xml", 512, False, True),
    (SHARED / "batsim-examples" / "energy_platform_homogeneous_no_net_128.xml", 128, True, False),
    (ROOT / "platforms" / "g5k_nantes_econome.xml", 22, True, False),
    (ROOT / "platforms" / "g5k_lille_2020.xml", 39, True, False),
)
POLICIES = ("fcfs", "easy", "conservative", "heft", "green-easy", "green-heft", "buc", "buc-easy",
            "osep", "hosep", "ehosep")
OWNER_SHARE = ("osep", "hosep", "ehosep")
POWERED = ("ehosep", "green-easy", "green-heft")  # read wattage_per_state


def cluster_platform(rng: random.Random, n: int) -> tuple[str, bool]:
    """A ``<cluster>`` of ``n`` hosts (random link bandwidth, latency, sharing policy, backbone,
    loopback) beside a master host, joined by a link: Batsim's usual networked layout."""
    energy = rng.random() < 0.7
    bw = rng.choice(["125MBps", "1.25GBps", "10MBps", "1GBps"])
    lat = rng.choice(["0us", "50us", "1ms", "100ns"])
    policy = rng.choice(["SHARED", "SPLITDUPLEX", "FATPIPE"])
    props = (f'<prop id="wattage_per_state" value="{WATTS}"/><prop id="wattage_off" value="10"/>'
             f'<prop id="sleep_pstates" value="2:3:4"/>') if energy else ""
    speed = SPEEDS if energy else rng.choice(["100Mf", "1Gf"])
    backbone = f' bb_bw="{rng.choice(["1GBps", "20MBps"])}" bb_lat="{rng.choice(["0us", "10us"])}"' \
        if rng.random() < 0.5 else ""
    loop = f' loopback_bw="{rng.choice(["10GBps", "100MBps"])}" loopback_lat="0us"' if rng.random() < 0.3 else ""
    master_props = '<prop id="wattage_per_state" value="100:100:200"/><prop id="wattage_off" value="10"/>' \
        if energy else ""
    return ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            '<platform version="4.1"><zone id="main" routing="Full">'
            f'<cluster id="c" prefix="n" suffix="" radical="0-{n - 1}" speed="{speed}" core="{rng.choice([1, 2])}" '
            f'bw="{bw}" lat="{lat}" sharing_policy="{policy}"{backbone}{loop}>{props}</cluster>'
            f'<zone id="m" routing="Full"><host id="master_host" speed="100Mf">{master_props}</host></zone>'
            f'<link id="up" bandwidth="{rng.choice(["1GBps", "50MBps"])}" latency="{rng.choice(["10us", "0us"])}"/>'
            '<zoneRoute src="c" dst="m" gw_src="nc_router" gw_dst="master_host"><link_ctn id="up"/></zoneRoute>'
            '</zone></platform>\n'), energy


def wide_workload(rng: random.Random, n: int, network: bool, users: int) -> dict:
    """A workload for ``n`` hosts with ``parallel`` and communicating profiles (``network``),
    ``users`` users (0: no ``user`` field) and jobs up to one host larger than the platform."""
    base = workload(rng, min(n, 8))
    profiles = base["profiles"]
    for name, prof in list(profiles.items()):
        if not network and prof.get("com"):
            prof["com"] = 0
    for job in base["jobs"]:
        r = rng.random()
        if r < 0.15:
            res = rng.randint(1, min(n, 4))
            cpu = [rng.choice([0, 1e6, 5e7, 2e8]) for _ in range(res)]
            com = [rng.choice([0, 0, 1e5, 4e6]) if network and i != j else 0 for i in range(res) for j in range(res)]
            name = f"x{len(profiles)}"
            profiles[name] = {"type": "parallel", "cpu": cpu, "com": com}
            job.update(res=res, profile=name)
        elif r < 0.2:
            job["res"] = n + 1 if rng.random() < 0.3 else rng.randint(1, n)
        if users:
            job["user"] = f"u{rng.randint(1, users)}"
    base["nb_res"] = n
    return base


def wide_args(rng: random.Random, d: Path) -> list[str]:
    """The ``wide`` suite's case (module docstring): its inputs written in ``d``, its arguments."""
    policy = rng.choice(POLICIES)
    users = rng.randint(1, 3) if policy in OWNER_SHARE or rng.random() < 0.3 else 0
    kind = rng.random()
    watts = policy in POWERED
    while True:  # (policies that read the hosts' power states draw again until the platform has them)
        if kind < 0.35 or policy in OWNER_SHARE:
            n = rng.randint(1, 6)
            text, energy = platform(rng, n)
            sleep, network = energy, False
        elif kind < 0.7:
            n = rng.randint(1, 8)
            text, energy = cluster_platform(rng, n)
            sleep, network = energy, True
        else:
            path, n, sleep, network = rng.choice(FILE_PLATFORMS)
            text, energy = path.read_text(), sleep
        if energy or not watts:
            break
    if policy in OWNER_SHARE:  # every host gets an owner
        text = re.sub(r'(<host id="h\d+"[^>]*[^/]>)', lambda m: m.group(1) + f'<prop id="owner" value="u{rng.randint(1, users)}"/>',
                      text)
        text = re.sub(r'(<host id="h\d+"[^>]*)/>', lambda m: m.group(1) + f'><prop id="owner" value="u{rng.randint(1, users)}"/></host>',
                      text)
    (d / "p.xml").write_text(text)
    (d / "w.json").write_text(json.dumps(wide_workload(rng, n, network, users)))
    args = ["--policy", policy, "-p", str(d / "p.xml"), "-w", str(d / "w.json"), "--fit", "keep"]
    if energy and rng.random() < 0.8:
        args.append("-E")
        if sleep and rng.random() < 0.5:
            args += ["--policy-options", json.dumps({"idle_timeout": rng.choice([0, 1, 5, 30])})]
    if rng.random() < 0.3 or policy.startswith("green"):  # green overlaps jobs (delta > 0)
        args.append("--compute-sharing")
    return args


def run(args: list[str], out: Path, batsim: bool) -> tuple[int, str]:
    cmd = ["gridsched", "run", *args, "-o", str(out), "--no-progress", "--overwrite"]
    if batsim:
        cmd += ["--engine", "batsim"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return p.returncode, (p.stderr.strip().splitlines() or [""])[-1][:200]


def basic_args(rng: random.Random, d: Path) -> list[str]:
    """The ``basic`` suite's case (module docstring): its inputs written in ``d``, its arguments."""
    n = rng.randint(1, 6)
    text, energy = platform(rng, n)
    (d / "p.xml").write_text(text)
    (d / "w.json").write_text(json.dumps(workload(rng, n)))
    args = ["--policy", rng.choice(["fcfs", "easy", "conservative"]), "-p", str(d / "p.xml"), "-w", str(d / "w.json")]
    if energy and rng.random() < 0.8:
        args.append("-E")
    if rng.random() < 0.3:
        args.append("--compute-sharing")
    return args


def vivaldi_platform(rng: random.Random, n: int) -> tuple[str, bool]:
    """:func:`platform`'s hosts in one Vivaldi zone at random coordinates (ms of latency)."""
    text, energy = platform(rng, n)
    scale = rng.choice([0.01, 0.5, 3.0, 40.0])

    def coord(_m) -> str:
        return ' coordinates="' + " ".join(f"{rng.uniform(-scale, scale):.6g}" for _ in range(3)) + '"'
    text = text.replace('routing="Full"', 'routing="Vivaldi"')
    text = re.sub(r' coordinates="0 0 0"', coord, text)
    text = re.sub(r'(<host id="[^"]+")(?! coordinates)', lambda m: m.group(1) + coord(m), text)
    return text, energy


def cabinet_platform(rng: random.Random, n: int) -> str:
    """``n`` compute hosts in cabinets (and a host with ``<host_link>``s) of a routing="Cluster"
    zone, the master host linked to it by its own links, maybe a backbone."""
    cabinets, k = [], 0
    while k < n - 1:
        m = rng.randint(1, n - 1 - k)
        cabinets.append(f'<cabinet id="cab{len(cabinets)}" prefix="c{len(cabinets)}-" suffix="{rng.choice(["", ".x"])}" '
                        f'speed="{rng.choice(["100Mf", "1Gf"])}" bw="{rng.choice(["125MBps", "10Gbps", "1GBps"])}" '
                        f'lat="{rng.choice(["0us", "1us", "50us", "1ms"])}" radical="0-{m - 1}"/>')
        k += m
    bb = (f'<backbone id="bb" bandwidth="{rng.choice(["1GBps", "20MBps"])}" latency="{rng.choice(["0us", "500us"])}"/>'
          if rng.random() < 0.6 else "")
    return ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            '<platform version="4.1"><zone id="AS0" routing="Full"><zone id="cl" routing="Cluster">'
            f'<host id="h" speed="{rng.choice(["100Mf", "1Gf"])}" core="2"/><host id="master_host" speed="1Gf"/>'
            f'<link id="lh" bandwidth="100MBps" latency="{rng.choice(["0us", "100us"])}" sharing_policy="SPLITDUPLEX"/>'
            f'<link id="lm" bandwidth="1GBps" latency="{rng.choice(["10us", "1ms"])}"/>'
            + "".join(cabinets)
            + '<host_link id="h" up="lh_UP" down="lh_DOWN"/><host_link id="master_host" up="lm" down="lm"/>'
            + bb + "</zone></zone></platform>\n")


def platforms_args(rng: random.Random, d: Path) -> list[str]:
    """The ``platforms`` suite's case (module docstring): its inputs written in ``d``, its arguments."""
    n = rng.randint(1, 6)
    if rng.random() < 0.6:
        text, energy = vivaldi_platform(rng, n)
    else:
        n = rng.randint(2, 8)
        text, energy = cabinet_platform(rng, n), False
    (d / "p.xml").write_text(text)
    (d / "w.json").write_text(json.dumps(wide_workload(rng, n, True, 0)))
    args = ["--policy", rng.choice(["fcfs", "easy", "conservative", "heft"]), "-p", str(d / "p.xml"),
            "-w", str(d / "w.json"), "--fit", "keep"]
    if energy and rng.random() < 0.8:
        args.append("-E")
        if rng.random() < 0.5:
            args += ["--policy-options", json.dumps({"idle_timeout": rng.choice([0, 1, 5])})]
    if rng.random() < 0.3:
        args.append("--compute-sharing")
    return args


def kills_args(rng: random.Random, d: Path) -> list[str]:
    """The ``kills`` suite's case (module docstring): its inputs written in ``d``, its arguments."""
    n = rng.randint(1, 6)
    text, energy = platform(rng, n) if rng.random() < 0.5 else cluster_platform(rng, n)
    (d / "p.xml").write_text(text)
    (d / "w.json").write_text(json.dumps(workload(rng, n)))
    options = {"seed": rng.randrange(1 << 30), "kill_rate": rng.choice([0.1, 0.3, 0.6])}
    args = ["--policy", f"{ROOT / 'scripts' / 'kill_policy.py'}:KillingFCFS", "-p", str(d / "p.xml"),
            "-w", str(d / "w.json")]
    if energy and rng.random() < 0.8:
        args.append("-E")
        options["pstates"] = True
    args += ["--policy-options", json.dumps(options)]
    if rng.random() < 0.3:
        args.append("--compute-sharing")
    return args


def sharing_args(rng: random.Random, d: Path) -> list[str]:
    """The ``sharing`` suite's case (module docstring): its inputs written in ``d``, its arguments."""
    n = rng.randint(1, 6)
    text, energy = platform(rng, n) if rng.random() < 0.5 else cluster_platform(rng, n)
    (d / "p.xml").write_text(text)
    w = workload(rng, n)
    (d / "w.json").write_text(json.dumps(w))
    hosts = [rng.sample(range(n), job["res"]) for job in w["jobs"]]
    ends = [job["subtime"] + rng.choice([0.23, 0.57, 1.31, 2.71]) for job in w["jobs"]]
    options = {"at": {job["id"]: sorted(h) for job, h in zip(w["jobs"], hosts)},
               "kills": {job["id"]: round(t, 9) for job, t in zip(w["jobs"], ends) if rng.random() < 0.35}}
    args = ["--policy", f"{ROOT / 'scripts' / 'sharing_policy.py'}:Placed", "-p", str(d / "p.xml"),
            "-w", str(d / "w.json"), "--compute-sharing", "--policy-options", json.dumps(options)]
    if energy and rng.random() < 0.5:
        args.append("-E")
    return args


def events_file(rng: random.Random, machines: list[int], n: int, instants: list[float],
                generic: bool) -> tuple[list[str], bool]:
    """Lines of an events file for ``machines`` of ``n``: 0-3 unavailability windows a machine,
    each a ``machine_unavailable`` then a ``machine_available`` (in a tenth of the files one
    machine stays unavailable to the end); the machines of one instant in one event or in
    several; at random times, at ``instants`` (job submissions and ends), at 0 or long after the
    last job; generic events when ``generic``. In a few files a machine made unavailable twice,
    one made available while it is not unavailable, a machine id past the platform's or a
    timestamp before 0: Batsim refuses those, and the two sides must agree. Returns the lines
    and whether such a fault was added."""
    def when() -> float:
        k = rng.random()
        if k < 0.45 and instants:
            return rng.choice(instants)
        if k < 0.55:
            return 0.0
        if k < 0.6:
            return rng.choice([500.0, 1e4, 123456.789])
        return rng.choice([round(rng.uniform(0, 60), rng.choice([0, 1, 3, 9])), round(rng.uniform(0, 5), 7)])

    by_time: dict[tuple[float, str], list[int]] = {}
    forever = rng.choice(machines) if machines and rng.random() < 0.1 else -1
    for m in machines:
        t = 0.0
        for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
            start = max(t, when()) + rng.choice([0, 0, 0.5, 1e-7])
            by_time.setdefault((start, "machine_unavailable"), []).append(m)
            if m == forever:  # unavailable until the end
                break
            end = start + rng.choice([1e-6, 0.5, 1, 3.3, 10, 40]) if rng.random() < 0.6 else when()
            if end <= start:  # (available and unavailable at one instant: available first, Batsim aborts)
                end = start + 2
            by_time.setdefault((end, "machine_available"), []).append(m)
            t = end + rng.choice([0, 0, 0.25])
    lines: list[dict] = []
    for (t, kind), machines in by_time.items():
        if rng.random() < 0.5:  # one event of all the instant's machines
            lines.append({"type": kind, "resources": str(ProcSet(*machines)), "timestamp": t})
        else:
            lines += [{"type": kind, "resources": str(m), "timestamp": t} for m in machines]
    if generic:
        for i in range(rng.randint(1, 6)):
            lines.append({"type": rng.choice(["tick", "operator_note"]), "timestamp": when(), "i": i})
    bad = rng.random() < 0.08
    if bad:
        k = rng.randrange(4)
        lines.append({"type": "machine_unavailable", "resources": str(n), "timestamp": when()} if k == 0 else
                     {"type": "machine_available", "resources": str(rng.randrange(n)), "timestamp": when()} if k == 1 else
                     {"type": "machine_unavailable", "resources": f"0-{n - 1}", "timestamp": when()} if k == 2 else
                     {"type": "tick" if generic else "machine_available", "resources": "0", "timestamp": -1})
    rng.shuffle(lines)
    text = []
    for e in lines:
        t = e["timestamp"]
        e["timestamp"] = int(t) if t == int(t) and rng.random() < 0.5 else t
        text.append(json.dumps(e))
    if rng.random() < 0.2:
        text.insert(rng.randint(0, len(text)), "")
    return text, bad


def _write_workloads(d: Path, workloads: list[dict], args: list[str]) -> list[float]:
    """Write ``workloads`` as ``d/w0.json``, ``d/w1.json``... and add each as ``-w`` to ``args``;
    returns the instants they make (every subtime, and the end of each ``delay`` job started at
    its subtime), for events and calls drawn at those instants."""
    instants: list[float] = []
    for i, w in enumerate(workloads):
        for job in w["jobs"]:
            instants.append(job["subtime"])
            prof = w["profiles"][job["profile"]]
            if prof["type"] == "delay":
                instants.append(round(job["subtime"] + prof["delay"], 9))
        (d / f"w{i}.json").write_text(json.dumps(w))
        args += ["-w", str(d / f"w{i}.json")]
    return instants


def events_args(rng: random.Random, d: Path, big: bool = False) -> list[str]:
    """The ``events`` suite's case (module docstring): its inputs written in ``d``, its arguments;
    ``big``: the ``events-big`` suite's, on the larger platforms of :data:`FILE_PLATFORMS`."""
    if big:
        path, n, energy, _ = rng.choice([p for p in FILE_PLATFORMS if p[1] >= 22])
        text = path.read_text()
    else:
        n = rng.randint(1, 8) if rng.random() < 0.75 else rng.randint(9, 40)
        text, energy = platform(rng, n) if rng.random() < 0.6 else cluster_platform(rng, n)
    (d / "p.xml").write_text(text)
    args = ["--policy", rng.choice(["fcfs", "easy", "conservative"]), "-p", str(d / "p.xml")]
    instants = _write_workloads(d, [workload(rng, n) for _ in range(rng.randint(1, 3))], args)
    generic = rng.random() < 0.5
    files = rng.choice([1, 1, 1, 2])
    owner = [rng.randrange(files) for _ in range(n)]  # each machine's events in one file
    for i in range(files):
        lines, _ = events_file(rng, [m for m in range(n) if owner[m] == i], n, instants, generic)
        (d / f"e{i}.txt").write_text("\n".join(lines) + "\n")
        args += ["--events", str(d / f"e{i}.txt")]
    if generic:
        args.append("--forward-unknown-events")
    if rng.random() < 0.5:
        args.append("--forward-profiles")
    if energy and rng.random() < 0.7:
        args.append("-E")
        if rng.random() < 0.4:  # idle hosts switched off, some of them then made unavailable
            args += ["--policy-options", json.dumps({"idle_timeout": rng.choice([0, 1, 5])})]
    if rng.random() < 0.3:
        args.append("--compute-sharing")
    return args


def _io_args(rng: random.Random, d: Path) -> list[str]:
    """The ``io`` suite's case: :func:`io_cases.io_args` (``scripts/io_cases.py``, beside this file)."""
    spec = importlib.util.spec_from_file_location("io_cases", Path(__file__).resolve().parent / "io_cases.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.io_args(rng, d)


#: Real traces of ``../shared`` for the ``traces`` suite: Grid'5000 Lyon workloads (Batsim JSON, on
#: their own platforms) and Parallel Workloads Archive logs (converted by ``gridsched run``).
LYON = SHARED / "traces" / "g5k-lyon-gridgym"
SWF = tuple(SHARED / "traces" / "pwa-swf" / f for f in (
    "KTH-SP2-1996-2.1-cln.swf.gz", "NASA-iPSC-1993-3.1-cln.swf.gz", "alea_hpc2n_subset3171.swf",
    "LANL-CM5-1994-4.1-cln.swf.gz"))


def traces_args(rng: random.Random, d: Path) -> list[str]:
    """The ``traces`` suite's case (module docstring): its arguments (the inputs are read in
    ``../shared`` as they are; ``d`` is not written)."""
    policy = rng.choice(["fcfs", "easy", "conservative", "buc", "green-easy"])
    if policy != "green-easy" and rng.random() < 0.4:   # (Lyon's power properties: names SimGrid 3.32 ignores)
        workloads = sorted((LYON / "workloads").glob("lyon_201*/*.json")) + [LYON / "workloads" / "2019-05-19.json"]
        return ["--policy", policy, "-p", str(LYON / "platforms" / rng.choice(["lyon_taurus.xml", "lyon_taurus_2.xml"])),
                "-w", str(rng.choice(workloads))]
    path, _, power, _ = rng.choice([p for p in FILE_PLATFORMS if p[1] >= 22 and (p[2] or policy != "green-easy")])
    args = ["--policy", policy, "-p", str(path), "-w", str(rng.choice(SWF)), "--max-jobs", str(rng.randint(200, 2000))]
    if power and (policy == "green-easy" or rng.random() < 0.7):
        args.append("-E")
        if rng.random() < 0.4:
            args += ["--policy-options", json.dumps({"idle_timeout": rng.choice([0, 60, 600])})]
    if policy == "green-easy" or rng.random() < 0.2:   # (green overlaps jobs: compute sharing)
        args.append("--compute-sharing")
    return args


def protocol_workload(rng: random.Random, n: int, nb_res: int) -> dict:
    """:func:`workload`'s jobs on ``nb_res`` hosts (``nb_res`` <= ``n``, for ``--mmax-workload``),
    with ``composed`` profiles of ``repeat`` 1-3 nesting other ``composed`` ones, and ``parallel``
    profiles whose ``cpu`` and ``com`` matrices hold zeros."""
    w = workload(rng, nb_res)
    profiles = w["profiles"]
    for job in w["jobs"]:
        k = rng.random()
        if k < 0.15:
            res = job["res"]
            name = f"x{len(profiles)}"
            profiles[name] = {"type": "parallel", "cpu": [rng.choice([0, 0, 1e6, 5e7]) for _ in range(res)],
                              "com": [rng.choice([0, 0, 0, 2e5]) if i != j else rng.choice([0, 0, 1e5])
                                      for i in range(res) for j in range(res)]}
            job["profile"] = name
        elif k < 0.3:
            inner = f"n{len(profiles)}"
            profiles[inner] = {"type": "composed", "repeat": rng.choice([1, 2, 3]),
                               "seq": [rng.choice([p for p, v in profiles.items() if v["type"] != "composed" and
                                                   (v["type"] != "parallel" or len(v["cpu"]) == job["res"])]
                                                  or [job["profile"]]) for _ in range(rng.randint(1, 3))]}
            outer = f"o{len(profiles)}"
            profiles[outer] = {"type": "composed", "repeat": rng.choice([1, 2]), "seq": [inner, job["profile"]]}
            job["profile"] = outer
    used = {j["profile"] for j in w["jobs"]}
    for prof in list(profiles.values()):
        used.update(prof.get("seq", ()))
    w["profiles"] = {k: v for k, v in profiles.items() if k in used}
    w["nb_res"] = nb_res
    return w


def protocol_case(rng: random.Random, d: Path) -> tuple[list[str], dict]:
    """The ``protocol`` suite's case (module docstring): its inputs written in ``d``; Batsim's
    command-line arguments (without ``-p``'s and ``-e``'s neighbours: ``-s``) and the options of
    ``scripts/protocol_scheduler.py``."""
    n = rng.randint(1, 6)
    text, energy = platform(rng, n) if rng.random() < 0.6 else cluster_platform(rng, n)
    (d / "p.xml").write_text(text)
    args = ["-p", str(d / "p.xml")]
    options: dict = {"seed": rng.randrange(1 << 30)}
    limit = n
    if rng.random() < 0.2:
        args.append("--mmax-workload")
        limit = rng.randint(1, n)
    elif rng.random() < 0.1:
        limit = rng.randint(1, n)
        args += ["--mmax", str(limit)]
    dynamic = rng.random() < 0.5
    count = 0 if dynamic and rng.random() < 0.1 else rng.choice([1, 1, 1, 2, 2, 3, 11])
    times = _write_workloads(d, [protocol_workload(rng, n, limit) for _ in range(count)], args)
    options["times"] = sorted(set(times))
    if energy and rng.random() < 0.8:
        args.append("-E")
        options["energy"] = True
    if rng.random() < 0.3:
        args.append("--enable-compute-sharing")
    if dynamic:
        args.append("--enable-dynamic-jobs")
        options.update(dynamic=True, registrations=rng.randint(1 if "-w" not in args else 0, 6))
        if rng.random() < 0.5:
            args.append("--acknowledge-dynamic-jobs")
            options["ack"] = True
        if rng.random() < 0.2:
            args.append("--enable-profile-reuse")
    if rng.random() < 0.3:
        args.append("--forward-profiles-on-submission")
    if rng.random() < 0.3:
        args.append("-q")
    if rng.random() < 0.2:
        args += ["--sched-cfg", rng.choice(['{"a": 1}', "x y, z", 'quote " and é'])]
    if rng.random() < 0.15:
        args += ["-r", f"h{rng.randrange(n)}:compute_node"] if "cluster" not in text else []
    if rng.random() < 0.1:
        args.append("--disable-storage-sharing")
    if rng.random() < 0.1:
        args.append("--disable-schedule-tracing")
    if rng.random() < 0.1:
        args.append("--disable-machine-state-tracing")
    return args, options


def run_protocol(args: list[str], options: dict, out: Path, batsim: bool) -> tuple[int, str]:
    """One side of a ``protocol`` case: ``scripts/protocol_scheduler.py`` on a free port, then
    real Batsim (``batsim`` on PATH) or ``gridsched engine`` (this checkout) connecting to it.
    Returns the simulator's exit status and its last error line."""
    import os
    import time
    out.mkdir(parents=True, exist_ok=True)
    for f in out.iterdir():
        f.unlink()
    (out / "command.json").write_text(json.dumps(["batsim" if batsim else "gridsched engine", *args]))
    port_file = out / "port"
    sched = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "protocol_scheduler.py"), "--options",
                              json.dumps(options), "--log", str(out / "messages.jsonl"), "--port-file",
                              str(port_file), "--timeout", "300"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists():
            if sched.poll() is not None or time.monotonic() > deadline:
                return 99, "the scheduler did not start: " + sched.stderr.read().decode()[-200:]
            time.sleep(0.02)
        endpoint = f"tcp://127.0.0.1:{port_file.read_text()}"
        if batsim:
            cmd = ["batsim", *args, "-e", str(out / "out"), "-s", endpoint]
            env = None
        else:
            cmd = [sys.executable, "-m", "schedulers.cli", "engine", *args, "-e", str(out / "out"), "-s", endpoint]
            env = dict(os.environ, PYTHONPATH=str(ROOT))
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
        (out / "stderr.txt").write_text(p.stderr[-20000:])
        lines = p.stderr.strip().splitlines()
        told = [x for x in lines if re.search(r"error|assert|abort|invalid|cannot", x, re.I)]
        return p.returncode, (told or lines or [""])[-1][-200:]
    finally:
        if sched.poll() is None:
            sched.kill()
        sched.wait()
        port_file.unlink(missing_ok=True)


def _protocol(seed: int, d: Path, rng: random.Random) -> tuple[str, object]:
    """Write and run case ``seed`` of the ``protocol`` suite; return its verdict and detail."""
    args, options = protocol_case(rng, d)
    (d / "args.json").write_text(json.dumps({"args": args, "options": options}))
    rb, eb = run_protocol(args, options, d / "batsim", True)
    re_, ee = run_protocol(args, options, d / "engine", False)
    return verdict(d, (rb, eb), (re_, ee), [*FILES, "messages.jsonl"])


def verdict(d: Path, batsim: tuple[int, str], engine: tuple[int, str], files: list[str]) -> tuple[str, object]:
    """A case's verdict from each side's ``(return code, last error line)`` and the ``files``
    both wrote in ``d/batsim`` and ``d/engine``: ``equal``, ``differ`` (the files that differ),
    ``refused`` (both refused, the files both wrote equal) or ``disagree`` (one side refused)."""
    (rb, eb), (re_, ee) = batsim, engine
    if rb and re_:   # both refuse: the files both wrote (a deadlock's, an abort's) must agree
        bad = [f for f in files if (d / "batsim" / f).exists() and (d / "engine" / f).exists()
               and not same_file(d / "batsim" / f, d / "engine" / f)]
        return ("differ", bad) if bad else ("refused", [eb, ee])
    if rb or re_:
        return "disagree", {"batsim": [rb, eb], "engine": [re_, ee]}
    bad = [f for f in files if (d / "batsim" / f).exists() != (d / "engine" / f).exists()
           or ((d / "batsim" / f).exists() and not same_file(d / "batsim" / f, d / "engine" / f))]
    return ("differ", bad) if bad else ("equal", None)


def case(seed: int, root: Path, suite: str = "basic") -> tuple[str, object]:
    """Write and run case ``seed`` of ``suite``; return its verdict and detail."""
    rng = random.Random(seed)
    d = root / f"s{seed}"
    d.mkdir(parents=True, exist_ok=True)
    if suite == "protocol":
        return _protocol(seed, d, rng)
    args = {"basic": basic_args, "wide": wide_args, "kills": kills_args, "platforms": platforms_args,
            "events": events_args, "events-big": partial(events_args, big=True), "io": _io_args,
            "traces": traces_args, "sharing": sharing_args}[suite](rng, d)
    (d / "args.json").write_text(json.dumps(args))
    rb, eb = run(args, d / "batsim", True)
    re_, ee = run(args, d / "engine", False)
    return verdict(d, (rb, eb), (re_, ee), list(FILES))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=1, metavar="FIRST",
                    help="seed of the first case; case k uses seed FIRST + k (default 1)")
    ap.add_argument("--count", type=int, default=100, metavar="N",
                    help="number of cases, one seed each (default 100)")
    ap.add_argument("--out", type=Path, required=True, metavar="FOLDER",
                    help="folder for the cases and the outputs of both sides (required)")
    ap.add_argument("--suite", choices=("basic", "wide", "kills", "platforms", "events", "events-big", "io",
                                        "traces", "sharing", "protocol"),
                    default="basic",
                    help="basic: the generated platforms and FCFS/EASY/conservative; wide: also networked "
                         "clusters, Batsim's and the project's platforms, every policy; kills: FCFS killing "
                         "jobs and changing pstates at random; platforms: Vivaldi coordinates and cabinets "
                         "(module docstring); events: external events files, several workloads; events-big: the same "
                         "on the project's and Batsim's platforms of 22-512 hosts; io: IO profiles on storage hosts "
                         "(scripts/io_cases.py); traces: real workloads "
                         "(Grid'5000 Lyon, Parallel Workloads Archive) on real platforms; sharing: jobs started at "
                         "submission on hosts drawn at random, shared (scripts/sharing_policy.py); protocol: "
                         "Batsim's command line against gridsched engine, a raw scheduler drawing protocol "
                         "features (scripts/protocol_scheduler.py)")
    args = ap.parse_args(argv)
    summary: dict = {"equal": 0, "differ": {}, "refused": {}, "disagree": {}}
    for seed in range(args.seeds, args.seeds + args.count):
        try:
            verdict, detail = case(seed, args.out, args.suite)
        except subprocess.TimeoutExpired:
            verdict, detail = "disagree", "timeout"
        if verdict == "equal":
            summary["equal"] += 1
        else:
            summary[verdict][seed] = detail
    print(json.dumps(summary, indent=1))
    return 1 if summary["differ"] or summary["disagree"] else 0


if __name__ == "__main__":
    sys.exit(main())
