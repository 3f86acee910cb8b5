"""Batsim's external events (``--events``, :mod:`schedulers.engine.extevents`) against real Batsim
4.2.1 (``fixtures/batsim_events``, see its README): machines made unavailable and available
again, events of the user's own types forwarded as NOTIFY, the order Batsim's ``std::sort`` gives
events of one instant, the messages the scheduler receives, the output files; the built-in
policies keep off unavailable machines; bad events files are one-line errors."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedulers.batsim.protocol import encode_message
from schedulers.cli import main
from schedulers.core.events import SimulationBegins
from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.extevents import std_sort
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_events"
_COLOR = re.compile(r'^(5 j.* machine_state ".*") ("[0-9. ]+")$', re.M)


def _run(tmp_path: Path, *args: str) -> tuple[int, Path, str]:
    out = tmp_path / "out"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = main(["run", *args, "-o", str(out), "--no-progress"])
    return code, out, err.getvalue()


def _schedule(path: Path) -> dict:
    row = next(csv.DictReader(path.open()))
    for k in ("batsim_version", "scheduling_time", "simulation_time"):   # the build, the wall clock
        row.pop(k)
    return row


class _Recorder:
    """The scheduler's side of each message, as Batsim encodes it (SIMULATION_BEGINS left out)."""

    def __init__(self, policy) -> None:
        self.port = InProcessPort(policy)
        self.messages: list[dict] = []

    def exchange(self, now, events):
        msg = json.loads(encode_message(now, events))
        msg["events"] = [e for e in msg["events"] if e["type"] != "SIMULATION_BEGINS"]
        self.messages.append(msg)
        return self.port.exchange(now, events)


def _recorded(path: Path) -> list[dict]:
    out = []
    for line in path.read_text().splitlines():
        msg = json.loads(line)
        msg["events"] = [e for e in msg["events"] if e["type"] != "SIMULATION_BEGINS"]
        out.append(msg)
    return out


def _engine_messages(policy: str, events: list[Path], **kw) -> list[dict]:
    engine = build_engine(FIX / "p.xml", [FIX / "w.json"], events=events, forward_unknown_events=True,
                          trace_outputs=False, **kw)
    rec = _Recorder(get_policy(policy))
    engine.run(rec)
    return rec.messages


# ----------------------------------------------------------------------------------- recorded runs
def test_easy_with_machine_events_as_real_batsim(tmp_path: Path) -> None:
    code, out, err = _run(tmp_path, "--policy", "easy", "-p", str(FIX / "p.xml"), "-w", str(FIX / "w.json"),
                          "--events", str(FIX / "events.txt"), "--forward-unknown-events")
    assert code == 0, err
    want = FIX / "easy"
    assert (out / "out_jobs.csv").read_text() == (want / "out_jobs.csv").read_text()
    assert (out / "out_machine_states.csv").read_text() == (want / "out_machine_states.csv").read_text()
    assert _schedule(out / "out_schedule.csv") == _schedule(want / "out_schedule.csv")
    mine, batsim = (out / "out_schedule.trace").read_text(), (want / "out_schedule.trace").read_text()
    assert _COLOR.sub(r"\1", mine) == _COLOR.sub(r"\1", batsim)
    # by hand: h0 unavailable 0-5 s, h2 5-26.5 s, h3 5-60 s
    assert float(_schedule(want / "out_schedule.csv")["time_unavailable"]) == 5 + 21.5 + 55
    # job b ends at 11 on h2, then unavailable: no "waiting" state for m2 at 11 (Batsim's rule)
    assert "6 11.000000 machine_state m2 w" not in batsim
    jobs = {r["job_id"]: r for r in csv.DictReader((want / "out_jobs.csv").open())}
    assert jobs["a"]["allocated_resources"] == "1"        # h0 unavailable at t = 0
    assert jobs["d"]["starting_time"] == "60.000000"      # 4 hosts: h3 back at 60


def test_messages_the_scheduler_receives_as_real_batsim() -> None:
    want = _recorded(FIX / "easy" / "batsim_messages.jsonl")
    got = _engine_messages("easy", [FIX / "events.txt"])
    assert got == want
    notifies = [(m["now"], e["data"]) for m in want for e in m["events"] if e["type"] == "NOTIFY"]
    assert notifies[:4] == [
        (0.0, {"type": "event_machine_unavailable", "resources": "0"}),
        (5.0, {"type": "event_machine_available", "resources": "0"}),        # available first, then
        (5.0, {"type": "event_machine_unavailable", "resources": "2-3"}),    # unavailable, then generic
        (5.0, {"type": "operator_note", "timestamp": 5, "text": "rack 2 down", "ids": [2, 3]}),
    ]
    assert notifies[-1] == (60.0, {"type": "no_more_external_event_to_occur"})


def test_energy_run_as_real_batsim(tmp_path: Path) -> None:
    code, out, err = _run(tmp_path, "--policy", "fcfs", "-p", str(FIX / "p.xml"), "-w", str(FIX / "w.json"),
                          "--events", str(FIX / "events.txt"), "--forward-unknown-events", "-E")
    assert code == 0, err
    want = FIX / "fcfs_energy"
    for name in ("out_jobs.csv", "out_consumed_energy.csv", "out_machine_states.csv"):
        assert (out / name).read_text() == (want / name).read_text(), name
    assert _schedule(out / "out_schedule.csv") == _schedule(want / "out_schedule.csv")


def test_events_of_one_instant_in_std_sort_order() -> None:
    # 20 events (more than std::sort's 16): ties of one timestamp and type do not keep the file order
    want = _recorded(FIX / "ties_batsim_messages.jsonl")
    got = _engine_messages("easy", [FIX / "events_ties.txt"])
    assert got == want
    order = [e["data"].get("n", e["data"].get("resources")) for m in want for e in m["events"]
             if e["type"] == "NOTIFY" and e["data"]["type"] in ("tick", "event_machine_available")]
    assert order == [1, 2, 3, 4, 5, 0, "0", "3", "2", "1", 6, 7, 8, 9, 10, 11]


# ---------------------------------------------------------------------------- std::sort, by itself
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 2)), max_size=80))
def test_std_sort_sorts_and_keeps_order_up_to_16(items: list) -> None:
    tagged = [(k, i) for i, k in enumerate(items)]
    out = list(tagged)
    std_sort(out, lambda a, b: a[0] < b[0])
    assert [k for k, _ in out] == sorted(items)
    assert sorted(out) == sorted(tagged)                  # a permutation
    if len(items) <= 16:                                  # insertion sort alone: stable
        assert out == sorted(tagged, key=lambda x: x[0])


def test_std_sort_heapsort_fallback_sorts() -> None:
    # median-of-three killer patterns are not needed: depth 0 forces the heapsort branch
    from schedulers.engine import extevents as ev

    v = [(7 * i) % 31 for i in range(31)]
    ev._introsort(v, 0, len(v), 0, lambda a, b: a < b)
    assert v == sorted(v)


# ------------------------------------------------------------------------- policies, by hand
def test_fcfs_keeps_off_an_unavailable_machine(tmp_path: Path) -> None:
    # 2 hosts; h0 unavailable 0-5 s. a (1 host, 10 s) at 0 goes to h1; b (1 host) at 1 waits for
    # h0 back at 5; c (2 hosts) at 2 waits for both: a ends at 10, b at 15 -> c starts at 15.
    wl = {"nb_res": 2, "profiles": {"d": {"type": "delay", "delay": 10}},
          "jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "d"},
                   {"id": "b", "subtime": 1, "res": 1, "profile": "d"},
                   {"id": "c", "subtime": 2, "res": 2, "profile": "d"}]}
    (tmp_path / "w.json").write_text(json.dumps(wl))
    (tmp_path / "e.txt").write_text('{"type": "machine_unavailable", "resources": "0", "timestamp": 0}\n'
                                    '{"type": "machine_available", "resources": "0", "timestamp": 5}\n')
    plat = tmp_path / "p.xml"
    plat.write_text('<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                    '<platform version="4.1"><zone id="z" routing="Vivaldi">'
                    '<host id="master_host" coordinates="0 0 0" speed="1Gf"/>'
                    '<host id="h0" coordinates="0 0 0" speed="1Gf"/><host id="h1" coordinates="0 0 0" speed="1Gf"/>'
                    '</zone></platform>\n')
    code, out, err = _run(tmp_path, "--policy", "fcfs", "-p", str(plat), "-w", str(tmp_path / "w.json"),
                          "--events", str(tmp_path / "e.txt"))
    assert code == 0, err
    jobs = {r["job_id"]: r for r in csv.DictReader((out / "out_jobs.csv").open())}
    assert (jobs["a"]["starting_time"], jobs["a"]["allocated_resources"]) == ("0.000000", "1")
    assert (jobs["b"]["starting_time"], jobs["b"]["allocated_resources"]) == ("5.000000", "0")
    assert jobs["c"]["starting_time"] == "15.000000"
    assert float(_schedule(out / "out_schedule.csv")["time_unavailable"]) == 5.0


def test_simulation_waits_for_the_last_event(tmp_path: Path) -> None:
    # the jobs end at 80 s; the last event (h3 back) at 60; an event at 500 s keeps Batsim running
    (tmp_path / "e.txt").write_text('{"type": "later", "timestamp": 500}\n')
    code, out, err = _run(tmp_path, "--policy", "fcfs", "-p", str(FIX / "p.xml"), "-w", str(FIX / "w.json"),
                          "--events", str(tmp_path / "e.txt"), "--forward-unknown-events")
    assert code == 0, err
    trace = (out / "out_schedule.trace").read_text()
    assert trace.endswith("3 500.000000 root root_ct\n")   # SimGrid's final clock


def test_simulation_begins_says_forward_unknown_events() -> None:
    seen = []

    class Port:
        def exchange(self, now, events):
            seen.extend(e for e in events if isinstance(e, SimulationBegins))
            return InProcessPort(pol).exchange(now, events)

    pol = get_policy("fcfs")
    build_engine(FIX / "p.xml", [FIX / "w.json"], events=[FIX / "events.txt"], forward_unknown_events=True,
                 trace_outputs=False).run(Port())
    assert seen[0].config["forward-unknown-events"] is True
    seen.clear()
    pol = get_policy("fcfs")
    build_engine(FIX / "p.xml", [FIX / "w.json"], forward_unknown_events=True, trace_outputs=False).run(Port())
    assert seen[0].config["forward-unknown-events"] is False   # Batsim ignores the flag without events


def _rejecting_scheduler(endpoint: str, seen: list) -> None:
    """A ZeroMQ scheduler that keeps Batsim's messages and rejects every job (ends any run)."""
    import zmq

    sock = zmq.Context.instance().socket(zmq.REP)
    sock.bind(endpoint)
    try:
        while sock.poll(30_000):
            msg = json.loads(sock.recv())
            seen.append(msg)
            answer = [{"timestamp": msg["now"], "type": "REJECT_JOB", "data": {"job_id": e["data"]["job_id"]}}
                      for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]
            sock.send_string(json.dumps({"now": msg["now"], "events": answer}))
            if any(e["type"] == "SIMULATION_ENDS" for e in msg["events"]):
                break
    finally:
        sock.close(0)


def test_engine_command_line_says_forward_unknown_events_as_real_batsim(tmp_path: Path) -> None:
    # `gridsched engine --events F --forward-unknown-events` once said false in SIMULATION_BEGINS
    # (its command-line configuration replaced the flag's), and pybatsim 4.0.0a0, which reads it,
    # then stopped at the first generic event ("Unknown NOTIFY type operator_note")
    import threading

    from test_engine_zmq import free_port

    recorded = json.loads((FIX / "easy" / "batsim_messages.jsonl").read_text().splitlines()[0])
    want = recorded["events"][0]["data"]["config"]
    assert want["forward-unknown-events"] is True
    endpoint, seen = f"tcp://127.0.0.1:{free_port()}", []
    th = threading.Thread(target=_rejecting_scheduler, args=(endpoint, seen), daemon=True)
    th.start()
    with contextlib.redirect_stderr(io.StringIO()) as err:
        code = main(["engine", "-p", str(FIX / "p.xml"), "-w", str(FIX / "w.json"), "-s", endpoint,
                     "-e", str(tmp_path / "out"), "--events", str(FIX / "events.txt"),
                     "--forward-unknown-events", "--timeout", "30"])
    th.join(30)
    assert code == 0, err.getvalue()
    assert seen[0]["events"][0]["data"]["config"] == want
    generic = [e["data"] for m in seen for e in m["events"] if e["type"] == "NOTIFY"
               and e["data"]["type"] == "operator_note"]
    assert generic == [{"type": "operator_note", "timestamp": 5, "text": "rack 2 down", "ids": [2, 3]}]


# --------------------------------------------------------------------------------- bad inputs
BAD = [
    ('{"type": "my_type", "timestamp": 1}', "unknown event type 'my_type'"),
    ('{"type": "machine_unavailable", "timestamp": 1}', "needs a 'resources' field"),
    ('{"type": "machine_unavailable", "resources": "0-9", "timestamp": 1}', "machine 9 does not exist"),
    ('{"type": "machine_unavailable", "resources": "", "timestamp": 1}', "bad part ''"),
    ('{"type": "machine_unavailable", "resources": "0  2", "timestamp": 1}', "bad part ''"),
    ('{"type": "machine_unavailable", "resources": "a", "timestamp": 1}', "bad part 'a'"),
    ('{"type": "machine_unavailable", "resources": 1, "timestamp": 1}', "'resources' must be a string"),
    ('{"type": "machine_unavailable", "resources": "3-1", "timestamp": 1}', "bad interval '3-1'"),
    ('[1]', "an event must be a JSON object"),
    ('{"type": "tick"}', "has no 'timestamp' field"),
    ('{"timestamp": 1}', "has no 'type' field"),
    ('{"type": 3, "timestamp": 1}', "'type' must be a string"),
    ('{"type": "tick", "timestamp": true}', "'timestamp' must be a number"),
    ('{"type": "tick", "timestamp": -1}', "must be a finite number >= 0"),
    ('{"type": "tick", "timestamp": NaN}', "NaN is not a JSON value"),
    ('{"type": "tick", "timestamp": 1e400}', "'timestamp' inf must be a finite number"),
    ('garbage', "malformed JSON"),
    ('   ', "malformed JSON"),
]


@pytest.mark.parametrize("line,message", BAD)
def test_bad_events_file_is_one_line_naming_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text('{"type": "machine_unavailable", "resources": "1", "timestamp": 0}\n\n' + line + "\n")
    code, out, err = _run(tmp_path, "--policy", "fcfs", "-p", str(FIX / "p.xml"), "-w", str(FIX / "w.json"),
                          "--events", str(bad))
    assert code == 2
    first = err.splitlines()[0]
    assert first.startswith(f"gridsched: error: {bad}, line 3: ") and message in first, err
    assert "Traceback" not in err and not out.exists()


def test_missing_events_file(tmp_path: Path) -> None:
    code, _, err = _run(tmp_path, "--policy", "fcfs", "-p", str(FIX / "p.xml"), "-w", str(FIX / "w.json"),
                        "--events", str(tmp_path / "none.txt"))
    assert code == 2 and "none.txt: events file cannot be read" in err


def test_machine_made_unavailable_twice_aborts_as_batsim(tmp_path: Path) -> None:
    # recorded on Batsim 4.2.1: "The making of machine 0 ('h0') unavailable was requested but this
    # machine was already in UNAVAILABLE state."
    (tmp_path / "e.txt").write_text('{"type": "machine_unavailable", "resources": "0", "timestamp": 0}\n'
                                    '{"type": "machine_unavailable", "resources": "0-1", "timestamp": 3}\n')
    code, _, err = _run(tmp_path, "--policy", "fcfs", "-p", str(FIX / "p.xml"), "-w", str(FIX / "w.json"),
                        "--events", str(tmp_path / "e.txt"))
    assert code == 2
    assert "t=3: machine 0 ('h0') made unavailable but it is already unavailable" in err.splitlines()[0]


# ---------------------------------------------------------------------------------- campaigns
def _campaign(tmp_path: Path, *scenarios: tuple[str, str]) -> Path:
    """A campaign file: EASY on the fixture's platform and workload, one scenario per (name, extra
    TOML lines)."""
    text = 'keep_outputs = true\n[[policy]]\nname = "easy"\n'
    for name, extra in scenarios:
        text += (f'[[scenario]]\nname = "{name}"\nplatform = "{FIX / "p.xml"}"\n'
                 f'workloads = ["{FIX / "w.json"}"]\n{extra}\n')
    f = tmp_path / "c.toml"
    f.write_text(text)
    return f


def test_campaign_scenario_with_events_as_real_batsim(tmp_path: Path) -> None:
    from schedulers.campaign.runner import run_campaign
    from schedulers.campaign.spec import load_campaign
    from schedulers.campaign.store import ResultStore

    camp = load_campaign(_campaign(tmp_path, ("events", f'events = ["{FIX / "events.txt"}"]\n'
                                                         "forward_unknown_events = true"), ("plain", "")))
    run_campaign(camp, tmp_path / "out", serial=True, progress=False)
    store = ResultStore(tmp_path / "out")
    by_label = {r.scenario.get("events") is not None: r.id for r in camp.runs()}
    got = (tmp_path / "out" / "outputs" / by_label[True] / "out_jobs.csv").read_text()
    assert got == (FIX / "easy" / "out_jobs.csv").read_text()                   # real Batsim's run
    plain = (tmp_path / "out" / "outputs" / by_label[False] / "out_jobs.csv").read_text()
    assert plain != got and len(store.ids()) == 2


def test_campaign_refuses_events_without_file(tmp_path: Path) -> None:
    from schedulers.campaign.errors import CampaignError
    from schedulers.campaign.spec import load_campaign

    with pytest.raises(CampaignError, match=r"scenario\[0\]\.events\[0\]: no such file"):
        load_campaign(_campaign(tmp_path, ("events", 'events = ["nothere.txt"]')))


def test_events_arguments_for_real_batsim(tmp_path: Path, monkeypatch) -> None:
    from schedulers.batsim.runner import events_args

    monkeypatch.chdir(tmp_path)
    path = str(tmp_path.resolve() / "e.txt")
    assert events_args(["e.txt"], True) == ("--events", path, "--forward-unknown-events")
    assert events_args(["e.txt"], False) == ("--events", path)
    assert events_args([], True) == ()   # Batsim reads --forward-unknown-events only with events files
