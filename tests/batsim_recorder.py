"""A ZeroMQ proxy between Batsim and a scheduler that writes every message, for fixtures.

It binds a REP socket where Batsim connects (``batsim -s ENDPOINT``) and forwards each message
to the scheduler's REP socket through a REQ socket, then the scheduler's reply back to Batsim.
Each message is one JSON line ``{"dir": "batsim->sched" or "sched->batsim", "msg": {...}}``, the
format of ``../shared/batsim-4.2.1/transcripts`` that
``tests/test_batsim_clients.py`` replays on the embedded engine::

    batsched -v filler -s 'tcp://*:28001' &
    python tests/batsim_recorder.py --listen 'tcp://*:28000' --scheduler tcp://localhost:28001 --log t.jsonl &
    batsim -p PLATFORM -w WORKLOAD -s tcp://localhost:28000 -e OUT/out ...

It stops after forwarding the reply to SIMULATION_ENDS, or when a side is silent for
``--timeout`` seconds (exit status 3).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    import zmq

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--listen", default="tcp://*:28000", help="where Batsim connects")
    ap.add_argument("--scheduler", default="tcp://localhost:28001", help="the scheduler's endpoint")
    ap.add_argument("--log", type=Path, required=True, help="JSON lines: every message, both ways")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds of silence before giving up")
    args = ap.parse_args(argv)
    ctx = zmq.Context.instance()
    batsim, sched = ctx.socket(zmq.REP), ctx.socket(zmq.REQ)
    batsim.bind(args.listen)
    sched.connect(args.scheduler)
    wait = int(args.timeout * 1000)
    try:
        with args.log.open("w") as log:
            while True:
                if not batsim.poll(wait):
                    return 3
                raw = batsim.recv()
                msg = json.loads(raw)
                log.write(json.dumps({"dir": "batsim->sched", "msg": msg}) + "\n")
                sched.send(raw)
                if not sched.poll(wait):
                    return 3
                reply = sched.recv()
                log.write(json.dumps({"dir": "sched->batsim", "msg": json.loads(reply)}) + "\n")
                log.flush()
                batsim.send(reply)
                if any(e["type"] == "SIMULATION_ENDS" for e in msg["events"]):
                    return 0
    finally:
        batsim.close(0)
        sched.close(0)


if __name__ == "__main__":
    sys.exit(main())
