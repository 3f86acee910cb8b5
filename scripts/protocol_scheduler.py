#!/usr/bin/env python3
"""A Batsim scheduler that draws protocol features at random, for ``compare_with_batsim.py --suite protocol``.

It speaks Batsim 4.2.1's JSON protocol over ZeroMQ itself (no policy class), so that the same
program drives real Batsim and ``gridsched engine`` and both receive the very same replies: its
decisions depend only on the messages it receives and on its own seeded generator. At each
message it runs FCFS (first-fit on the awake, unswitching hosts; with compute sharing, sometimes
on busy hosts too) and draws, from option ``seed``:

- a reply late by up to a few seconds (``now`` after the message's), its decisions dated between
  the two, in order or not (Batsim applies each at its timestamp);
- bursts of CALL_ME_LATER, several at one time, at the workload's submission times and delay
  ends given in option ``times`` (ties with submissions and ends), or a little later;
- KILL_JOB of running jobs (``composed`` ones at any stage; a job named twice), at messages and
  at REQUESTED_CALLs (never a job whose end was sent: Batsim aborts, ``--suite kills`` draws that);
- REJECT_JOB of waiting jobs; SET_JOB_METADATA of waiting and running jobs; QUERY
  ``consumed_energy`` (option ``energy``);
- with ``energy``: SET_RESOURCE_STATE of idle hosts to their sleep pstate (switch off) or to
  another computation pstate, and of sleeping hosts back on (when jobs wait, always);
- with ``dynamic`` (Batsim's ``--enable-dynamic-jobs``): REGISTER_PROFILE (``delay``,
  ``parallel_homogeneous``, ``parallel`` matrices with zeros; rarely a ``composed`` one with
  ``repeat`` and nested sequences, whose job real Batsim 4.2.1 crashes on and the engine refuses) and REGISTER_JOB (option ``ack``: ``--acknowledge-dynamic-jobs``, jobs are
  queued at their JOB_SUBMITTED; else at once), then NOTIFY ``registration_finished``, sometimes
  ``continue_registration`` and more jobs after it.

Run as ``python scripts/protocol_scheduler.py --options JSON --log messages.jsonl --port-file F``:
it binds a free TCP port (written to ``F``), writes every message it receives (one JSON line
each) and exits after answering SIMULATION_ENDS or after ``--timeout`` s of silence (status 3).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from procset import ProcSet


class Scheduler:
    """The scheduler's state and decisions (module docstring)."""

    def __init__(self, options: dict) -> None:
        self.o = options
        self.rng = random.Random(options.get("seed", 0))
        self.energy = bool(options.get("energy"))
        self.dynamic = bool(options.get("dynamic"))
        self.ack = bool(options.get("ack"))
        self.sharing = False
        self.times = sorted(set(options.get("times", [])))
        self.budget = int(options.get("registrations", 0))   # jobs still to register
        self.calls_left = int(options.get("calls", 40))
        self.hosts: list[dict] = []
        self.queue: list[tuple[str, int]] = []   # waiting jobs: (id, res)
        self.running: dict[str, list[int]] = {}  # job id -> hosts
        self.finished_registration = not self.dynamic
        self.static_done = False
        self.pending_calls: list[float] = []
        self.nreg = 0
        self.out: list[tuple[float | None, str, dict]] = []

    # ----------------------------------------------------------------- events
    def on_message(self, msg: dict) -> dict:
        now = msg["now"]
        self.now = now
        called = False
        ended: list[str] = []
        for e in msg["events"]:
            kind, data = e["type"], e.get("data", {})
            if kind == "SIMULATION_BEGINS":
                self.begin(data)
            elif kind == "JOB_SUBMITTED":
                self.queue.append((data["job_id"], int(data["job"]["res"])))
            elif kind == "JOB_COMPLETED":
                self.release(data["job_id"])
                ended.append(data["job_id"])
            elif kind == "JOB_KILLED":
                for j in data["job_ids"]:
                    self.release(j)
            elif kind == "RESOURCE_STATE_CHANGED":
                for h in ProcSet.from_str(data["resources"]):
                    host = self.hosts[h]
                    host["pstate"] = int(data["state"])
                    host["switching"] = False
            elif kind == "REQUESTED_CALL":
                called = True
                self.pending_calls = [t for t in self.pending_calls if t > now]
            elif kind == "NOTIFY" and data.get("type") == "no_more_static_job_to_submit":
                self.static_done = True
            elif kind == "SIMULATION_ENDS":
                return {"now": now, "events": []}
        self.out = []
        if self.hosts:
            self.decide(now, called, ended)
        return self.reply(now)

    def begin(self, data: dict) -> None:
        self.sharing = bool(data.get("allow_compute_sharing"))
        for r in data["compute_resources"]:
            props = r.get("properties", {})
            sleep = None
            triples = [t for t in str(props.get("sleep_pstates", "")).replace(" ", "").split(",") if t]
            special: set[int] = set()
            for t in triples:
                s, off, on = (int(x) for x in t.split(":"))
                special |= {s, off, on}
                sleep = s if sleep is None else sleep
            nps = len([w for w in str(props.get("wattage_per_state", "")).split(",") if w.strip()])
            compute = [p for p in range(nps) if p not in special] or [0]
            self.hosts.append({"id": r["id"], "jobs": set(), "pstate": 0, "switching": False,
                               "sleep": sleep if self.energy else None, "compute": compute})

    def release(self, job_id: str) -> None:
        for h in self.running.pop(job_id, []):
            self.hosts[h]["jobs"].discard(job_id)

    # ----------------------------------------------------------------- decisions
    def emit(self, kind: str, data: dict) -> None:
        self.out.append((None, kind, data))

    def awake(self, h: dict) -> bool:
        return not h["switching"] and (h["sleep"] is None or h["pstate"] != h["sleep"])

    def decide(self, now: float, called: bool, ended: list[str]) -> None:
        rng = self.rng
        # kills, at messages and more often at requested calls
        if self.running and rng.random() < (0.6 if called else 0.2):
            victims = rng.sample(sorted(self.running), min(len(self.running), rng.choice([1, 1, 2])))
            if rng.random() < 0.1:
                victims.append(victims[0])
            self.emit("KILL_JOB", {"job_ids": victims})
        if self.queue and rng.random() < 0.08:
            job, _ = self.queue.pop(rng.randrange(len(self.queue)))
            self.emit("REJECT_JOB", {"job_id": job})
        if rng.random() < 0.15:
            known = [j for j, _ in self.queue] + sorted(self.running)
            if known:
                self.emit("SET_JOB_METADATA", {"job_id": rng.choice(known),
                                               "metadata": rng.choice(["m", "a b", "x,y", "", "k=1;v=2", "é"])})
        if self.energy and rng.random() < 0.1:
            self.emit("QUERY", {"requests": {"consumed_energy": {}}})
        if self.dynamic:
            self.register(now)
        if self.energy:
            self.switch()
        self.fcfs()
        self.call_me_later(now)

    def register(self, now: float) -> None:
        rng = self.rng
        if not self.finished_registration and self.budget > 0 and rng.random() < 0.35:
            for _ in range(min(self.budget, rng.choice([1, 1, 2, 3]))):
                self.budget -= 1
                self.register_one(now)
        idle = not self.running and not self.queue and not self.pending_calls
        if not self.finished_registration and idle and self.static_done and self.budget > 0 and rng.random() < 0.5:
            self.budget -= 1   # nothing else will send a message: register now, or finish
            self.register_one(now)
        elif not self.finished_registration and (self.budget == 0 or (idle and self.static_done)):
            self.emit("NOTIFY", {"type": "registration_finished"})
            self.finished_registration = True
        elif self.finished_registration and (self.running or self.pending_calls) and rng.random() < 0.04:
            self.emit("NOTIFY", {"type": "continue_registration"})
            self.finished_registration = False
            self.budget += rng.randint(1, 3)

    def profile(self, depth: int = 0) -> str:
        """REGISTER_PROFILE of a new profile (nested ``composed`` ones register their stages first)."""
        rng = self.rng
        name = f"p{self.nreg}"
        self.nreg += 1
        k = rng.random()
        if k < 0.3:
            prof = {"type": "delay", "delay": rng.choice([0.5, 1, 2.25, 4, 0.000001])}
        elif k < 0.55:
            prof = {"type": "parallel_homogeneous", "cpu": rng.choice([0, 1e6, 5e7, 2e8]),
                    "com": rng.choice([0, 0, 1e6])}
        elif k < 0.99 or depth >= 1:
            size = self.pending_size
            prof = {"type": "parallel", "cpu": [rng.choice([0, 0, 1e6, 1e8]) for _ in range(size)],
                    "com": [rng.choice([0, 0, 0, 1e5]) if i != j else 0 for i in range(size) for j in range(size)]}
        else:
            seq = [self.profile(depth + 1) for _ in range(rng.randint(1, 3))]
            prof = {"type": "composed", "repeat": rng.choice([1, 2, 3]), "seq": seq}
        self.emit("REGISTER_PROFILE", {"workload_name": "dyn", "profile_name": name, "profile": prof})
        return name

    def register_one(self, now: float) -> None:
        rng = self.rng
        res = rng.randint(1, len(self.hosts))
        self.pending_size = res
        prof = self.profile()
        name = f"j{self.nreg}"
        self.nreg += 1
        job = {"id": name, "subtime": now, "res": res, "profile": prof,
               "walltime": rng.choice([-1, -1, 2, 5.5, 30])}
        self.emit("REGISTER_JOB", {"job_id": f"dyn!{name}", "job": job})
        if not self.ack:
            self.queue.append((f"dyn!{name}", res))

    def switch(self) -> None:
        rng = self.rng
        idle = [h for h in self.hosts if not h["jobs"] and self.awake(h) and h["sleep"] is not None]
        asleep = [h for h in self.hosts if not h["switching"] and h["sleep"] is not None and h["pstate"] == h["sleep"]]
        if idle and rng.random() < 0.3:
            chosen = rng.sample(idle, rng.randint(1, len(idle)))
            if rng.random() < 0.6:
                target = chosen[0]["sleep"]
                chosen = [h for h in chosen if h["sleep"] == target]
                for h in chosen:
                    h["switching"] = True
            else:
                target = rng.choice(chosen[0]["compute"])
                chosen = [h for h in chosen if target in h["compute"]]
                for h in chosen:
                    h["pstate"] = target
            self.emit("SET_RESOURCE_STATE", {"resources": str(ProcSet(*(h["id"] for h in chosen))), "state": str(target)})
        need = sum(r for _, r in self.queue[:1])
        awake = sum(1 for h in self.hosts if self.awake(h))
        if asleep and ((need > awake and not any(h["switching"] for h in self.hosts)) or rng.random() < 0.15):
            chosen = rng.sample(asleep, rng.randint(1, len(asleep)))
            target = rng.choice(chosen[0]["compute"])
            chosen = [h for h in chosen if target in h["compute"]]
            for h in chosen:
                h["switching"] = True
            self.emit("SET_RESOURCE_STATE", {"resources": str(ProcSet(*(h["id"] for h in chosen))), "state": str(target)})

    def fcfs(self) -> None:
        rng = self.rng
        while self.queue:
            job, res = self.queue[0]
            free = [h["id"] for h in self.hosts if self.awake(h) and not h["jobs"]]
            if self.sharing and rng.random() < 0.3:
                free = [h["id"] for h in self.hosts if self.awake(h)]
            if res > len(self.hosts):
                self.queue.pop(0)
                self.emit("REJECT_JOB", {"job_id": job})
                continue
            if len(free) < res:
                break
            self.queue.pop(0)
            alloc = sorted(rng.sample(free, res)) if rng.random() < 0.5 else free[:res]
            for h in alloc:
                self.hosts[h]["jobs"].add(job)
            self.running[job] = alloc
            self.emit("EXECUTE_JOB", {"job_id": job, "alloc": str(ProcSet(*alloc))})

    def call_me_later(self, now: float) -> None:
        rng = self.rng
        if self.calls_left <= 0 or rng.random() > 0.3:
            return
        self.want_calls = []
        for _ in range(rng.choice([1, 1, 2, 4])):
            later = [t for t in self.times if t > now + 0.01]   # (now: printed with 6 decimals; messages take time)
            if later and rng.random() < 0.5:
                self.want_calls.append(rng.choice(later[:4]))
            else:
                self.want_calls.append(round(now + rng.choice([0.01, 0.25, 1, 2, 3.3]), 9))
            if rng.random() < 0.2:
                self.want_calls.append(self.want_calls[-1])
        self.calls_left -= len(self.want_calls)
        for t in self.want_calls:
            self.out.append((None, "CALL_ME_LATER", {"timestamp": t}))

    # ----------------------------------------------------------------- the reply
    def reply(self, now: float) -> dict:
        """The decisions dated: at ``now``, or (a late reply) between ``now`` and the reply's
        ``now``, never after a CALL_ME_LATER's target."""
        rng = self.rng
        events = self.out
        reply_now = now
        if events and rng.random() < 0.25:
            calls = [d["timestamp"] for _, k, d in events if k == "CALL_ME_LATER"]
            late = rng.choice([1e-7, 0.3, 1.0, 2.5])
            if calls:
                late = max(0.0, min(late, (min(calls) - now - 0.01) / 2))
            reply_now = now + late
        stamps = [now if reply_now == now or rng.random() < 0.3 else rng.uniform(now, reply_now) for _ in events]
        if rng.random() < 0.8:
            stamps.sort()
        for t, (_, k, d) in zip(stamps, events):
            if k == "CALL_ME_LATER":
                self.pending_calls.append(d["timestamp"])
        return {"now": reply_now, "events": [{"timestamp": t, "type": k, "data": d}
                                             for t, (_, k, d) in zip(stamps, events)]}


def main(argv: list[str] | None = None) -> int:
    import zmq

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--options", default="{}", help="JSON options (module docstring)")
    ap.add_argument("--log", type=Path, required=True, help="JSON lines: every message received")
    ap.add_argument("--port-file", type=Path, required=True, help="where to write the TCP port bound")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds of silence before giving up")
    args = ap.parse_args(argv)
    sched = Scheduler(json.loads(args.options))
    ctx = zmq.Context()   # (its own: terminated at the end, whoever else runs in the process)
    sock = ctx.socket(zmq.REP)
    port = sock.bind_to_random_port("tcp://127.0.0.1")
    tmp = args.port_file.with_suffix(".tmp")
    tmp.write_text(str(port))
    tmp.rename(args.port_file)
    try:
        with args.log.open("w") as log:
            while True:
                if not sock.poll(int(args.timeout * 1000)):
                    return 3
                raw = sock.recv()
                msg = json.loads(raw)
                log.write(raw.decode("utf-8", "replace") + "\n")   # as sent: the order of keys too
                log.flush()
                sock.send_string(json.dumps(sched.on_message(msg)))
                if any(e["type"] == "SIMULATION_ENDS" for e in msg["events"]):
                    return 0
    finally:   # (the last reply delivered before the process ends: else the simulator may wait for it)
        sock.close(linger=10_000)
        ctx.term()


if __name__ == "__main__":
    sys.exit(main())
