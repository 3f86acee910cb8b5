"""Tests of the Batsim 4.x protocol codec against the messages recorded on real Batsim 4.2.1.

Ground truth: ``shared/batsim-4.2.1/transcripts/*.jsonl`` (read in place, never copied).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from schedulers.batsim.protocol import (
    REQUIRED_DECISION_FIELDS,
    REQUIRED_EVENT_FIELDS,
    ProtocolError,
    decode_decisions,
    decode_message,
    dumps_batsim,
    encode_decisions,
    encode_message,
    parse_interval_set,
)
from schedulers.core.events import (
    Answer,
    CallMeLater,
    ExecuteJob,
    GenericDecision,
    GenericEvent,
    JobCompleted,
    JobKilled,
    JobSubmitted,
    KillJobs,
    Notify,
    NotifyBatsim,
    Query,
    RegisterJob,
    RegisterProfile,
    RejectJob,
    RequestedCall,
    ResourceStateChanged,
    SetResourceState,
    SimulationBegins,
    SimulationEnds,
)
from schedulers.core.model import HostState, Job

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
TRANSCRIPTS = SHARED / "batsim-4.2.1" / "transcripts"
TRANSCRIPT_FILES = sorted(TRANSCRIPTS.glob("*.jsonl")) if TRANSCRIPTS.is_dir() else []

needs_transcripts = pytest.mark.skipif(
    not TRANSCRIPT_FILES, reason=f"Batsim 4.2.1 transcripts not found in {TRANSCRIPTS}"
)

EVENT_CLASSES = {
    "SIMULATION_BEGINS": SimulationBegins,
    "JOB_SUBMITTED": JobSubmitted,
    "JOB_COMPLETED": JobCompleted,
    "JOB_KILLED": JobKilled,
    "RESOURCE_STATE_CHANGED": ResourceStateChanged,
    "REQUESTED_CALL": RequestedCall,
    "NOTIFY": Notify,
    "ANSWER": Answer,
    "SIMULATION_ENDS": SimulationEnds,
}
DECISION_CLASSES = {
    "EXECUTE_JOB": ExecuteJob,
    "REJECT_JOB": RejectJob,
    "KILL_JOB": KillJobs,
    "CALL_ME_LATER": CallMeLater,
    "SET_RESOURCE_STATE": SetResourceState,
    "QUERY": Query,
    "NOTIFY": NotifyBatsim,
}


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def records(direction: str) -> list[dict]:
    return [r for f in TRANSCRIPT_FILES for r in load(f) if r["dir"] == direction]


# ------------------------------------------------------------------------ transcripts round trips
@needs_transcripts
@pytest.mark.parametrize("path", TRANSCRIPT_FILES, ids=lambda p: p.stem)
def test_batsim_messages_decode_typed_and_reencode(path: Path) -> None:
    differing = []
    for rec in load(path):
        if rec["dir"] != "batsim->sched":
            continue
        now, events = decode_message(rec["raw"])
        assert now == rec["msg"]["now"]
        assert len(events) == len(rec["msg"]["events"])
        for ev, raw_ev in zip(events, rec["msg"]["events"]):
            assert type(ev) is EVENT_CLASSES[raw_ev["type"]], raw_ev["type"]
            assert ev.timestamp == raw_ev["timestamp"]
        out = encode_message(now, events)
        assert json.loads(out) == rec["msg"], f"seq {rec['seq']}: not JSON-equal"
        if out != rec["raw"]:
            differing.append(rec["seq"])
        # the three input forms decode alike
        assert encode_message(*decode_message(rec["raw"].encode("utf-8"))) == out
        assert encode_message(*decode_message(rec["msg"])) == out
    assert differing == [], f"{path.name}: messages not byte-identical to Batsim's: seq {differing}"


@needs_transcripts
@pytest.mark.parametrize("path", TRANSCRIPT_FILES, ids=lambda p: p.stem)
def test_scheduler_replies_decode_typed_and_reencode(path: Path) -> None:
    differing = []
    for rec in load(path):
        if rec["dir"] != "sched->batsim":
            continue
        now, decisions = decode_decisions(rec["raw"])
        assert now == rec["msg"]["now"]
        for d, raw_ev in zip(decisions, rec["msg"]["events"], strict=True):
            assert type(d) is DECISION_CLASSES[raw_ev["type"]], raw_ev["type"]
        out = encode_decisions(now, decisions)
        assert json.loads(out) == rec["msg"], f"seq {rec['seq']}"
        if out != rec["raw"]:
            differing.append(rec["seq"])
    # pybatsim-style output: identical to the recorded replies too
    assert differing == [], f"{path.name}: replies not byte-identical: seq {differing}"


@needs_transcripts
def test_decode_does_not_modify_a_parsed_message() -> None:
    rec = next(r for r in records("batsim->sched") if "SIMULATION_BEGINS" in r["raw"])
    msg = copy.deepcopy(rec["msg"])
    _, events = decode_message(msg)
    events[0].compute_resources[0].properties["owner"] = "x"
    events[0].profiles["w0"].clear()
    assert msg == rec["msg"]


@needs_transcripts
def test_simulation_begins_128_hosts_lexicographic() -> None:
    path = TRANSCRIPTS / "pybatsim_easyBackfill_energy128_various.jsonl"
    if not path.exists():
        pytest.skip(f"{path.name} absent")
    _, (ev,) = decode_message(load(path)[0]["raw"])
    assert isinstance(ev, SimulationBegins)
    assert ev.nb_resources == ev.nb_compute_resources == 128 and ev.nb_storage_resources == 0
    hosts = ev.compute_resources
    assert [h.id for h in hosts] == list(range(128))
    assert [h.name for h in hosts] == sorted(h.name for h in hosts)
    assert hosts[2].name == "host10"
    assert hosts[0].state is HostState.IDLE
    assert hosts[0].sleep_pstates == (13, 14, 15)
    assert ev.config["redis-port"] == 6379
    assert ev.workloads == {"w0": "batsim-repo/workloads/test_various_profile_types.json"}
    assert ev.profiles["w0"]["delay"] == {"type": "delay", "delay": 20.2}
    assert ev.extra == {}


@needs_transcripts
def test_forwarded_profiles_and_job_killed() -> None:
    path = TRANSCRIPTS / "mini_sched_reject_kill_forwardprofiles.jsonl"
    if not path.exists():
        pytest.skip(f"{path.name} absent")
    recs = load(path)
    _, evs = decode_message(recs[2]["raw"])
    job = evs[1].job
    assert (job.id, job.workload, job.res, job.profile, job.walltime) == ("w0!1", "w0", 4, "phomog", 100.0)
    assert job.profile_data == {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6}
    killed = [ev for r in recs if r["dir"] == "batsim->sched" for ev in decode_message(r["raw"])[1]
              if isinstance(ev, JobKilled)]
    assert len(killed) == 1
    assert killed[0].job_ids == ["w0!1"]
    assert killed[0].job_progress == {"w0!1": {"profile_name": "phomog", "progress": 0.7}}


# --------------------------------------------------------------------------- unit: Batsim side
def begins_msg(**extra) -> dict:
    data = {
        "nb_resources": 2, "nb_compute_resources": 2, "nb_storage_resources": 0,
        "allow_compute_sharing": False, "allow_storage_sharing": True, "config": {},
        "compute_resources": [
            {"id": 0, "name": "a1", "state": "idle", "properties": {"owner": "user1"}, "zone_properties": {}},
            {"id": 1, "name": "b1", "state": "sleeping", "properties": {}, "zone_properties": {"site": "x"}},
        ],
        "storage_resources": [], "workloads": {}, "profiles": {},
    }
    data.update(extra)
    return {"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": data}]}


def test_simulation_begins_properties_extra_and_host_extra() -> None:
    msg = begins_msg(jobs={"w0": []})
    msg["events"][0]["data"]["compute_resources"][0]["speed"] = 1e9
    now, (ev,) = decode_message(msg)
    assert ev.compute_resources[0].owner == "user1"
    assert ev.compute_resources[1].state is HostState.SLEEPING
    assert ev.compute_resources[1].zone_properties == {"site": "x"}
    assert ev.extra["jobs"] == {"w0": []}
    assert json.loads(encode_message(now, [ev])) == msg


def test_job_submitted_keeps_extra_fields() -> None:
    raw = ('{"now":3.500000,"events":[{"timestamp":3.500000,"type":"JOB_SUBMITTED","data":{"job_id":"w1!7",'
           '"job":{"id":"w1!7","subtime":3.5,"walltime":-1,"res":2,"profile":"p","user":"user2","site":"lille"}}}]}')
    now, (ev,) = decode_message(raw)
    assert now == 3.5
    assert ev.job.user == "user2" and ev.job.extra == {"user": "user2", "site": "lille"}
    assert not ev.job.has_walltime and ev.job.profile_data is None
    assert encode_message(now, [ev]) == raw.replace('"subtime":3.5', '"subtime":3.500000')


def test_encode_job_without_raw_and_defaults() -> None:
    job = Job(id="w0!1", workload="w0", subtime=0.0, walltime=10.0, res=1, profile="d", extra={"user": "u"})
    out = encode_message(2, [JobSubmitted(timestamp=1, job=job), RequestedCall(timestamp=None),
                             Answer(timestamp=2, data={"consumed_energy": 12}),
                             JobKilled(timestamp=2, job_ids=["w0!1"], job_progress={"w0!1": {"profile_name": "d", "progress": 1}}),
                             GenericEvent(timestamp=2, type="FROM_THE_FUTURE")])
    assert out == (
        '{"now":2.000000,"events":[{"timestamp":1.000000,"type":"JOB_SUBMITTED","data":{"job_id":"w0!1","job":'
        '{"id":"w0!1","subtime":0.000000,"walltime":10.000000,"res":1,"profile":"d","user":"u"}}},'
        '{"timestamp":2.000000,"type":"REQUESTED_CALL","data":{}},'
        '{"timestamp":2.000000,"type":"ANSWER","data":{"consumed_energy":12.000000}},'
        '{"timestamp":2.000000,"type":"JOB_KILLED","data":{"job_ids":["w0!1"],"job_progress":'
        '{"w0!1":{"profile_name":"d","progress":1.000000}}}},'
        '{"timestamp":2.000000,"type":"FROM_THE_FUTURE","data":{}}]}'
    )


def test_notify_unknown_event_and_answer() -> None:
    raw = {"now": 5, "events": [
        {"timestamp": 5, "type": "NOTIFY", "data": {"type": "event_resource_unavailable", "resources": "0 5-8"}},
        {"timestamp": 5, "type": "SOMETHING_NEW", "data": [1, 2]},
        {"timestamp": 5, "type": "ANSWER", "data": {"consumed_energy": 7157.115367}},
    ]}
    now, (n, g, a) = decode_message(raw)
    assert n.type == "event_resource_unavailable" and n.data == {"resources": "0 5-8"}
    assert isinstance(g, GenericEvent) and g.type == "SOMETHING_NEW" and g.data == [1, 2]
    assert a.consumed_energy == pytest.approx(7157.115367)
    assert json.loads(encode_message(now, [n, g, a])) == raw


def test_dumps_batsim_strings_and_numbers() -> None:
    assert dumps_batsim({"s": 'a"b\\c/é\n\x01', "i": -2, "f": -0.5, "b": [True, None]}) == (
        '{"s":"a\\"b\\\\c/é\\n\\u0001","i":-2,"f":-0.500000,"b":[true,null]}')
    assert dumps_batsim(1e20) == "100000000000000000000.000000"
    with pytest.raises(ProtocolError):
        dumps_batsim(float("nan"))


def test_encode_message_rejects_future_events() -> None:
    with pytest.raises(ProtocolError, match="later than now"):
        encode_message(1.0, [RequestedCall(timestamp=2.0)])


# --------------------------------------------------------------------------- unit: scheduler side
def test_decisions_roundtrip_all_types() -> None:
    decisions = [
        ExecuteJob(job_id="w0!1", alloc=ProcSet((0, 3), 7), extra={"mapping": {"0": "0", "1": "0"}}),
        RejectJob(job_id="w0!2"),
        KillJobs(job_ids=["w0!3", "w0!4"]),
        CallMeLater(at=15),
        SetResourceState(resources=ProcSet(5), state=3),  # int state written as Batsim's string
        Query(requests={"consumed_energy": {}}),
        NotifyBatsim(type="registration_finished"),
        RegisterJob(job_id="dyn!1", job={"id": "1", "res": 1}, timestamp=9.5),
        RegisterProfile(workload="dyn", name="p", profile={"type": "delay", "delay": 5}, timestamp=9.5),
        GenericDecision(type="SET_JOB_METADATA", data={"job_id": "w0!1", "metadata": "x"}, timestamp=9.5),
    ]
    text = encode_decisions(10, decisions)
    msg = json.loads(text)
    assert msg["now"] == 10.0
    assert [e["timestamp"] for e in msg["events"]] == [10.0] * 7 + [9.5] * 3
    assert msg["events"][7] == {"timestamp": 9.5, "type": "REGISTER_JOB",
                                "data": {"job_id": "dyn!1", "job": {"id": "1", "res": 1}}}
    assert msg["events"][8]["data"] == {"workload_name": "dyn", "profile_name": "p",
                                        "profile": {"type": "delay", "delay": 5}}
    assert msg["events"][0]["data"] == {"job_id": "w0!1", "alloc": "0-3 7", "mapping": {"0": "0", "1": "0"}}
    assert msg["events"][3]["data"] == {"timestamp": 15.0}
    assert msg["events"][4]["data"] == {"resources": "5", "state": "3"}
    now, back = decode_decisions(text)
    assert [type(d) for d in back] == [type(d) for d in decisions]
    assert back[0].alloc == ProcSet((0, 3), 7) and back[0].extra == {"mapping": {"0": "0", "1": "0"}}
    assert back[4].state == "3"
    assert encode_decisions(now, back) == text


def test_encode_decisions_errors() -> None:
    with pytest.raises(ProtocolError, match="later than now"):
        encode_decisions(1.0, [RejectJob(job_id="w0!1", timestamp=2.0)])
    with pytest.raises(ProtocolError, match="empty allocation"):
        encode_decisions(1.0, [ExecuteJob(job_id="w0!1", alloc=ProcSet())])
    with pytest.raises(ProtocolError):
        encode_decisions(1.0, [RequestedCall(timestamp=1.0)])  # an event, not a decision


# ------------------------------------------------------------------------ errors: specific cases
@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b"\xff\xfe", "not UTF-8"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"events": []}', "lacks 'now'"),
        ('{"now": "1", "events": []}', "'now' must be a finite number"),
        ('{"now": NaN, "events": []}', "not valid JSON"),
        ('{"now": 1}', "lacks 'events'"),
        ('{"now": 1, "events": {}}', "'events' must be an array"),
        ('{"now": 1, "events": [3]}', "must be a JSON object"),
        ('{"now": 1, "events": [{"timestamp": 1, "data": {}}]}', "lacks 'type'"),
        ('{"now": 1, "events": [{"type": "REQUESTED_CALL", "data": {}}]}', "lacks 'timestamp'"),
        ('{"now": 1, "events": [{"timestamp": true, "type": "REQUESTED_CALL", "data": {}}]}', "'timestamp' must be"),
        ('{"now": 1, "events": [{"timestamp": 2, "type": "REQUESTED_CALL", "data": {}}]}', "later than the message's now"),
        ('{"now": 1, "events": [{"timestamp": 1, "type": "REQUESTED_CALL"}]}', "lacks 'data'"),
        ('{"now": 1, "events": [{"timestamp": 1, "type": "JOB_COMPLETED", "data": {"job_id": "w0!1", '
         '"job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": "3-1"}}]}', "bad interval string '3-1'"),
        ('{"now": 1, "events": [{"timestamp": 1, "type": "JOB_COMPLETED", "data": {"job_id": "w0!1", '
         '"job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": "1,2"}}]}', "bad interval string"),
        ('{"now": 1, "events": [{"timestamp": 1, "type": "JOB_SUBMITTED", "data": {"job_id": "w0!1", '
         '"job": {"id": "w0!1", "subtime": 0, "res": -1, "profile": "p"}}}]}', "res must be an integer >= 0"),
        ('{"now": 1, "events": [{"timestamp": 1, "type": "JOB_SUBMITTED", "data": {"job_id": "w0!1"}}]}', "Redis"),
        ('{"now": 1, "events": [{"timestamp": 1, "type": "RESOURCE_STATE_CHANGED", "data": {"resources": "1", '
         '"state": 3}}]}', "state must be a string"),
        ('{"now": 1, "events": [{"timestamp": 1, "type": "NOTIFY", "data": "x"}]}', "'data' must be an object"),
    ],
)
def test_malformed_batsim_messages(raw, fragment) -> None:
    with pytest.raises(ProtocolError) as info:
        decode_message(raw)
    assert fragment in str(info.value)


def test_error_quotes_event_truncated() -> None:
    ev = {"timestamp": 1, "type": "JOB_COMPLETED",
          "data": {"job_id": "w0!" + "x" * 1000, "job_state": "COMPLETED_SUCCESSFULLY", "return_code": "0", "alloc": "0"}}
    with pytest.raises(ProtocolError) as info:
        decode_message({"now": 1, "events": [{"timestamp": 0, "type": "REQUESTED_CALL", "data": {}}, ev]})
    err = info.value
    assert err.index == 1 and err.event == ev
    text = str(err)
    assert "event 1 (JOB_COMPLETED)" in text and "return_code must be an integer" in text
    assert '{"timestamp":1,"type":"JOB_COMPLETED"' in text and text.endswith("...")
    assert len(text) < 500


@pytest.mark.parametrize(
    ("event", "fragment"),
    [
        ({"timestamp": 0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": ""}}, "at least one resource"),
        ({"timestamp": 0, "type": "EXECUTE_JOB", "data": {"job_id": 1, "alloc": "0"}}, "job_id must be a string"),
        ({"timestamp": 0, "type": "SET_RESOURCE_STATE", "data": {"resources": "0", "state": "on"}}, "integer pstate"),
        ({"timestamp": 0, "type": "CALL_ME_LATER", "data": {"timestamp": "5"}}, "must be a finite number"),
        ({"timestamp": 0, "type": "KILL_JOB", "data": {"job_ids": "w0!1"}}, "array of strings"),
        ({"timestamp": 0, "type": "QUERY", "data": {}}, "lacks required field 'requests'"),
        ({"timestamp": 3, "type": "REJECT_JOB", "data": {"job_id": "w0!1"}}, "later than the message's now"),
    ],
)
def test_malformed_decisions(event, fragment) -> None:
    with pytest.raises(ProtocolError) as info:
        decode_decisions({"now": 2, "events": [event]})
    assert fragment in str(info.value)
    assert info.value.event == event


# ------------------------------------------------------------------------------- property tests
intervals = st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 300)), max_size=12).map(
    lambda pairs: ProcSet(*[(a, a + n) for a, n in pairs])
)


@given(ps=intervals)
@settings(max_examples=200, deadline=None)
def test_procset_roundtrips_through_codec(ps: ProcSet) -> None:
    s = str(ps)
    assert parse_interval_set(s) == ps
    now, evs = decode_message(encode_message(7.0, [
        JobCompleted(timestamp=7.0, job_id="w0!1", alloc=ps),
        ResourceStateChanged(timestamp=7.0, resources=ps, state="2"),
    ]))
    assert evs[0].alloc == ps and evs[1].resources == ps
    assert json.loads(encode_message(now, evs))["events"][0]["data"]["alloc"] == s
    if ps:
        _, ds = decode_decisions(encode_decisions(7.0, [ExecuteJob(job_id="w0!1", alloc=ps),
                                                        SetResourceState(resources=ps, state="1")]))
        assert ds[0].alloc == ps and ds[1].resources == ps


@given(ps=intervals)
@settings(max_examples=100, deadline=None)
def test_noncanonical_interval_strings_parse(ps: ProcSet) -> None:
    # one id per item, reversed: "9 8 7" is what a naive scheduler may write
    s = " ".join(str(i) for i in reversed(list(ps)[:50]))
    assert parse_interval_set(s) == ProcSet(*list(ps)[:50])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


@given(raw=st.one_of(st.binary(max_size=200), st.text(max_size=200)))
@settings(max_examples=300, deadline=None)
def test_random_junk_raises_protocol_error_only(raw) -> None:
    for decode in (decode_message, decode_decisions):
        try:
            decode(raw)
        except ProtocolError:
            pass


@given(data=json_values, typ=st.sampled_from(sorted(EVENT_CLASSES) + sorted(DECISION_CLASSES) + ["X"]),
       ts=st.one_of(st.integers(-5, 5), st.floats(allow_nan=False), st.text(max_size=3), st.none()))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_events_decode_or_raise_protocol_error(data, typ, ts) -> None:
    msg = {"now": 1.0, "events": [{"timestamp": ts, "type": typ, "data": data}]}
    for decode in (decode_message, decode_decisions):
        for form in (msg, json.dumps(msg)):
            try:
                decode(form)
            except ProtocolError as exc:
                assert exc.index in (None, 0)


def _wrong_kind(value):
    """A JSON value of another kind than ``value`` (always wrong for a typed field)."""
    if isinstance(value, str):
        return [1]
    return "x"


def _mutations(rec: dict, required: dict[str, tuple[str, ...]]):
    """(description, mutated message, index of the offending event) for every event of ``rec``."""
    msg = rec["msg"]
    for i, ev in enumerate(msg["events"]):
        for field in ("timestamp", "type", "data"):
            m = copy.deepcopy(msg)
            del m["events"][i][field]
            yield f"drop {field}", m, i
        m = copy.deepcopy(msg)
        m["events"][i]["timestamp"] = msg["now"] + 1.0
        yield "timestamp > now", m, i
        m = copy.deepcopy(msg)
        m["events"][i]["timestamp"] = "0"
        yield "string timestamp", m, i
        for field in required.get(ev["type"], ()):
            m = copy.deepcopy(msg)
            del m["events"][i]["data"][field]
            yield f"drop data.{field}", m, i
            m = copy.deepcopy(msg)
            m["events"][i]["data"][field] = _wrong_kind(ev["data"][field])
            yield f"wrong type data.{field}", m, i
        if ev["type"] == "JOB_SUBMITTED":
            for field in ("res", "subtime", "profile"):
                m = copy.deepcopy(msg)
                del m["events"][i]["data"]["job"][field]
                yield f"drop job.{field}", m, i
                m = copy.deepcopy(msg)
                m["events"][i]["data"]["job"][field] = _wrong_kind(ev["data"]["job"][field])
                yield f"wrong type job.{field}", m, i


BATSIM_RECORDS = records("batsim->sched") if TRANSCRIPT_FILES else []
SCHED_RECORDS = [r for r in records("sched->batsim") if r["msg"]["events"]] if TRANSCRIPT_FILES else []


def _check_mutation(decode, rec, required, choice) -> None:
    muts = list(_mutations(rec, required))
    what, mutated, i = muts[choice % len(muts)]
    raw = json.dumps(mutated)
    with pytest.raises(ProtocolError) as info:
        decode(raw)
    err = info.value
    assert err.index == i, what
    assert err.event == mutated["events"][i], what
    quoted = json.dumps(mutated["events"][i], ensure_ascii=False, separators=(",", ":"))[:60]
    assert quoted in str(err), (what, str(err))


@needs_transcripts
@given(data=st.data())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_mutated_batsim_messages_raise_quoting_event(data) -> None:
    rec = data.draw(st.sampled_from(BATSIM_RECORDS))
    _check_mutation(decode_message, rec, REQUIRED_EVENT_FIELDS, data.draw(st.integers(0, 10_000)))


@needs_transcripts
@given(data=st.data())
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_mutated_scheduler_replies_raise_quoting_event(data) -> None:
    rec = data.draw(st.sampled_from(SCHED_RECORDS))
    _check_mutation(decode_decisions, rec, REQUIRED_DECISION_FIELDS, data.draw(st.integers(0, 10_000)))


@needs_transcripts
def test_every_mutation_of_every_message_raises() -> None:
    """Exhaustive version of the two property tests above (small: ~2,000 messages)."""
    n = 0
    for recs, decode, required in ((BATSIM_RECORDS, decode_message, REQUIRED_EVENT_FIELDS),
                                   (SCHED_RECORDS, decode_decisions, REQUIRED_DECISION_FIELDS)):
        for rec in recs:
            if "SIMULATION_BEGINS" in rec["raw"]:
                continue  # large; covered by the property tests
            for what, mutated, i in _mutations(rec, required):
                with pytest.raises(ProtocolError) as info:
                    decode(json.dumps(mutated))
                assert info.value.index == i, (rec["seq"], what)
                n += 1
    assert n > 500
