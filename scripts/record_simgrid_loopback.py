#!/usr/bin/python3
"""Record SimGrid 3.32's timing of 1-byte messages over the ptask model's ``__loopback__`` while
a parallel task also sends bytes from a host to itself (the oracle of
``tests/test_loopback_sharing.py``).

Regenerate the fixture (Debian's ``python3-simgrid`` 3.32, from the repository root)::

    /usr/bin/python3 scripts/record_simgrid_loopback.py --out tests/fixtures/simgrid_loopback.json

What is simulated: a platform written here (one ``Full`` zone without links: a ``master_host`` and
``host0``-``host2`` of 1e8 flops/s, so SimGrid routes each host to itself through
``__loopback__``, 10 GBps, FATPIPE), SimGrid configured with ``--cfg=host/model:ptask_L07`` as
Batsim configures it. On ``host0`` an actor sleeps 0.5 s then runs
``this_actor.parallel_execute([host0, host1, host2], [1e6, 5e8, flops2], bytes)`` where
``bytes`` has ``w`` bytes from ``host0`` to itself and nothing else; on ``master_host`` an actor
sleeps 1 s then puts two 1-byte messages, one after the other, to a mailbox that a third actor
reads; the clock at each reception is recorded (as ``float.hex``). ``alone`` is the same without
the parallel task. Each case runs in its own process (a SimGrid engine runs once per process).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="AS0" routing="Full">
  <host id="master_host" speed="100Mf"/>
  <host id="host0" speed="100Mf"/>
  <host id="host1" speed="100Mf"/>
  <host id="host2" speed="100Mf"/>
</zone>
</platform>
"""

#: (bytes host0 -> host0, flops on host2): the task's rate is min(1e8/1e6, 1e8/5e8, 1e8/flops2)
CASES = [(1e6, 1e9), (1e6, 1e7), (1e7, 1e9), (1e7, 1e7), (5e8, 1e9), (5e8, 1e7)]


def run_one(platform: str, w: float, flops2: float) -> dict:
    """One SimGrid run (in this process): the clocks at which the messages were sent and received."""
    from simgrid import Actor, Engine, Mailbox, this_actor

    e = Engine([sys.argv[0], "--cfg=host/model:ptask_L07", "--log=root.thres:critical"])
    e.load_platform(platform)
    got: list[float] = []
    sent: list[float] = []

    def receiver() -> None:
        mb = Mailbox.by_name("server")
        for _ in range(2):
            mb.get()
            got.append(Engine.clock)

    def sender() -> None:
        this_actor.sleep_for(1.0)
        sent.append(Engine.clock)
        mb = Mailbox.by_name("server")
        for i in range(2):
            mb.put(i, 1)

    def task() -> None:
        hosts = [e.host_by_name(h) for h in ("host0", "host1", "host2")]
        this_actor.sleep_for(0.5)
        this_actor.parallel_execute(hosts, [1e6, 5e8, flops2], [w, 0, 0, 0, 0, 0, 0, 0, 0])

    master = e.host_by_name("master_host")
    Actor.create("receiver", master, receiver)
    Actor.create("sender", master, sender)
    if w > 0:
        Actor.create("task", e.host_by_name("host0"), task)
    e.run()
    return {"sent": sent[0].hex(), "received": [t.hex() for t in got]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="the fixture to write")
    ap.add_argument("--run-one", nargs=3, metavar=("PLATFORM", "BYTES", "FLOPS2"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.run_one:
        plat, w, f2 = args.run_one
        print(json.dumps(run_one(plat, float(w), float(f2))))
        return 0
    if args.out is None:
        ap.error("--out is required")
    import simgrid

    with tempfile.TemporaryDirectory() as tmp:
        plat = Path(tmp) / "loopback.xml"
        plat.write_text(PLATFORM)

        def one(w: float, f2: float) -> dict:
            p = subprocess.run([sys.executable, __file__, "--run-one", str(plat), repr(w), repr(f2)],
                               capture_output=True, text=True, check=True)
            return json.loads(p.stdout.strip().splitlines()[-1])

        cases = [{"bytes": w, "flops2": f2, **one(w, f2)} for w, f2 in CASES]
        alone = one(0.0, 1e9)
    out = {"command": "/usr/bin/python3 scripts/record_simgrid_loopback.py --out " + str(args.out),
           "simgrid": getattr(simgrid, "__version__", "3.32"), "platform": PLATFORM, "cases": cases, "alone": alone}
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
