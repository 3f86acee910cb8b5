"""A scheduler that plays a script of raw Batsim decisions, for the engine and for real Batsim.

A script is a JSON list of rules ``{"when": [TYPE, JOB_ID or null], "now": S or null, "decisions":
[{"type": ..., "data": {...}, "timestamp": S (optional)}]}``: the first message holding an event of
type ``TYPE`` (and, when given, of job ``JOB_ID``: its ``job_id``, or one of its ``job_ids``) is
answered with the rule's decisions; each rule fires once, and several rules may answer one message
(their decisions in script order). A decision's ``timestamp`` defaults to the message's ``now``;
the reply's ``now`` is the rule's when given (a scheduler busy until then: Batsim applies each
decision at its ``timestamp``), else the message's. Every other message is answered with no decision.

:class:`ScriptPort` drives the embedded engine (``Engine.run(ScriptPort(script))``) and keeps the
messages it was sent, encoded as Batsim writes them. Run as a program, the same script answers
real Batsim over ZeroMQ and writes each message Batsim sent, one JSON line each, for a fixture::

    python tests/scripted_scheduler.py SCRIPT.json --socket tcp://*:28000 --log messages.jsonl &
    batsim -p PLATFORM -w WORKLOAD -s tcp://localhost:28000 -e OUT/out ...
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from schedulers.batsim.protocol import decode_decisions, encode_message
from schedulers.engine.ports import Reply


class Script:
    """The rules of a script and which have fired (module docstring)."""

    def __init__(self, rules: list[dict]) -> None:
        self.rules = rules
        self.fired = [False] * len(rules)

    def answer(self, message: dict) -> dict:
        """The raw reply (``{"now": ..., "events": [...]}``) to the raw ``message``."""
        at = now = message["now"]
        out = []
        for k, rule in enumerate(self.rules):
            if self.fired[k] or not any(_matches(rule["when"], e) for e in message["events"]):
                continue
            self.fired[k] = True
            if rule.get("now") is not None:
                now = rule["now"]
            out.extend(rule["decisions"])
        events = [{"timestamp": d.get("timestamp", at), "type": d["type"], "data": d["data"]} for d in out]
        return {"now": now, "events": events}


def _matches(when: list, event: dict) -> bool:
    kind, job = when
    if event["type"] != kind:
        return False
    data = event.get("data", {})
    return job is None or data.get("job_id") == job or job in data.get("job_ids", ())


class ScriptPort:
    """A :class:`~schedulers.engine.ports.SchedulerPort` playing ``rules``; :attr:`messages` keeps
    the messages the engine sent, as Batsim's JSON text reads back (dicts)."""

    def __init__(self, rules: list[dict]) -> None:
        self.script = Script(rules)
        self.messages: list[dict] = []

    def exchange(self, now, events) -> Reply:
        message = json.loads(encode_message(now, events))
        self.messages.append(message)
        return Reply(*decode_decisions(json.dumps(self.script.answer(message))))

    def __str__(self) -> str:
        return "the scripted scheduler"


def main(argv: list[str] | None = None) -> int:
    import zmq

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("script", type=Path)
    ap.add_argument("--socket", default="tcp://*:28000")
    ap.add_argument("--log", type=Path, required=True, help="JSON lines: each message Batsim sent")
    args = ap.parse_args(argv)
    script = Script(json.loads(args.script.read_text()))
    sock = zmq.Context.instance().socket(zmq.REP)
    sock.bind(args.socket)
    with args.log.open("w") as log:
        while True:
            message = json.loads(sock.recv())
            log.write(json.dumps(message) + "\n")
            log.flush()
            sock.send_string(json.dumps(script.answer(message)))
            if any(e["type"] == "SIMULATION_ENDS" for e in message["events"]):
                return 0


if __name__ == "__main__":
    sys.exit(main())
