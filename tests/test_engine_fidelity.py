"""Engine behaviours read from Batsim 4.2.1's source, with hand-worked numbers.

Each test names the Batsim function whose behaviour it checks (``src/<file>.cpp`` of Batsim
v4.2.1): ``consumed_joules``, decision delays, dynamic job registration, the switching state
machine, livelock and network refusals.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from procset import ProcSet

from schedulers.core.events import ExecuteJob, JobSubmitted, NotifyBatsim, RegisterJob
from schedulers.core.policy import Policy
from schedulers.engine import EngineError, Reply, simulate

FIX = Path(__file__).parent / "fixtures"
HETERO = FIX / "hetero4.xml"   # a1, a2, b1, b2: 4 cores, Idle 100 W
DVFS = FIX / "dvfs2.xml"       # n0, n1: 1 core, sleep pstate 2 (off 2 s at 150 W, on 10 s at 180 W)


def r6(x):
    """``x`` with every float rounded to 6 decimals, as Batsim prints times: on the Full zone of
    these platforms each of Batsim's messages crosses SimGrid's loopback (1e-10 s), so the engine's
    times sit a few 1e-10 s after the printed ones (:mod:`schedulers.engine.netserver`)."""
    if isinstance(x, float):
        return round(x, 6)
    if isinstance(x, (list, tuple)):
        return type(x)(r6(v) for v in x)
    return x


def wl(jobs, profiles):
    return {"nb_res": 64, "jobs": jobs, "profiles": profiles}


def schedule_row(prefix: Path) -> dict:
    return next(csv.DictReader((prefix.parent / (prefix.name + "schedule.csv")).open()))


class Eager(Policy):
    """Starts every job at once on the lowest free hosts; ``hook(policy)`` after each message."""

    def __init__(self, hook=None):
        super().__init__()
        self.hook = hook
        self.queue = []

    def on_job_submitted(self, job):
        self.queue.append(job)

    def schedule(self):
        for job in list(self.queue):
            if job.res <= len(self.available):
                self.execute(job, ProcSet(*list(self.available)[:job.res]))
                self.queue.remove(job)
        if self.hook:
            self.hook(self)


# ---------------------------------------------------------------- consumed_joules (export.cpp)
def test_consumed_joules_counts_from_the_first_submission_to_the_last_job_end(tmp_path):
    # JobsTracer::finalize: consumed_joules = E(last job end) - E(first job submission).
    # 4 hosts idle at 100 W = 400 W (a delay job keeps its host idle). Job submitted at 5 s, runs
    # 10 s: E(5) = 2000 J, E(15) = 6000 J -> consumed_joules = 4000 J (the whole run: 6000 J).
    w = wl([{"id": 1, "subtime": 5, "walltime": -1, "res": 1, "profile": "d"}],
           {"d": {"type": "delay", "delay": 10}})
    prefix = tmp_path / "out_"
    r = simulate(HETERO, [w], Eager(), energy=True, export_prefix=prefix)
    assert r.consumed_joules == pytest.approx(4000.0)
    assert r.total_joules == pytest.approx(6000.0)
    assert schedule_row(prefix)["consumed_joules"] == "4000.000000"
    # EnergyConsumptionTracer::add_entry starts from (0 s, 0 J): the first row (job start at 5 s,
    # 2000 J) has epower 2000 / 5 = 400 W; the end row 4000 J / 10 s = 400 W. wattmin is the sum of
    # the hosts' Epsilon (SimGrid's get_watt_min_at): 4 x 114.67 = 458.68 W.
    assert (tmp_path / "out_consumed_energy.csv").read_text().splitlines()[1:] == [
        "5.000000,2000.000000,s,458.680000,400.000000", "15.000000,6000.000000,e,458.680000,400.000000"]


def test_consumed_joules_with_only_rejected_jobs_is_minus_one_minus_first_energy(tmp_path):
    # No job ever ends: energy_last_job_completion keeps its initial -1, so Batsim writes
    # -1 - E(first submission) = -1 - 400 W * 5 s = -2001 J.
    class Rejecter(Policy):
        def on_job_submitted(self, job):
            self.reject(job)

    w = wl([{"id": 1, "subtime": 5, "walltime": -1, "res": 1, "profile": "d"}],
           {"d": {"type": "delay", "delay": 10}})
    prefix = tmp_path / "out_"
    simulate(HETERO, [w], Rejecter(), energy=True, export_prefix=prefix)
    assert schedule_row(prefix)["consumed_joules"] == "-2001.000000"


# ------------------------------------------------- decision delays (protocol.cpp, server.cpp)
class DelayedPort:
    """A scheduler that needs 2 s of simulated time to answer a message with submissions: its
    reply says now = t + 2 and its EXECUTE_JOBs carry that timestamp (as pybatsim's schedulers
    that consume time do). Records every message as (now, [(type, timestamp)])."""

    def __init__(self):
        self.log = []
        self.free = [0, 1, 2, 3]

    def exchange(self, now, events):
        self.log.append((now, [(type(e).__name__, e.timestamp) for e in events]))
        subs = [e for e in events if isinstance(e, JobSubmitted)]
        if not subs:
            return []
        return Reply(now + 2.0, [ExecuteJob(job_id=e.job.id, alloc=ProcSet(self.free.pop(0)), timestamp=now + 2.0)
                                 for e in subs])


def test_decision_delay_plays_decisions_at_their_timestamp_and_gathers_events_meanwhile():
    # t=0: A submitted; the reply (now=2) starts A at 2 -> A ends at 12.
    # t=1: B submitted (and the submitter's bye) while the scheduler is busy: sent together at 2,
    # with their own timestamps (1); the reply (now=4) starts B at 4 -> ends at 14, waited 3 s.
    w = wl([{"id": "A", "subtime": 0, "walltime": -1, "res": 1, "profile": "d"},
            {"id": "B", "subtime": 1, "walltime": -1, "res": 1, "profile": "d"}],
           {"d": {"type": "delay", "delay": 10}})
    port = DelayedPort()
    r = simulate(HETERO, [w], port)
    jobs = {j.name: j for j in r.jobs}
    assert r6((jobs["A"].start, jobs["A"].finish)) == (2.0, 12.0)
    assert r6((jobs["B"].start, jobs["B"].finish)) == (4.0, 14.0)
    assert r6(port.log[2]) == (2.0, [("JobSubmitted", 1.0), ("Notify", 1.0)])
    assert r6([now for now, _ in port.log]) == [0.0, 0.0, 2.0, 12.0, 14.0, 14.0]


def test_decision_later_than_its_reply_now_is_refused():
    class Bad:
        def exchange(self, now, events):
            subs = [e for e in events if isinstance(e, JobSubmitted)]
            return Reply(now, [ExecuteJob(job_id=e.job.id, alloc=ProcSet(0), timestamp=now + 1) for e in subs])

    w = wl([{"id": "A", "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}], {"d": {"type": "delay", "delay": 1}})
    with pytest.raises(EngineError, match="later than its reply's now"):
        simulate(HETERO, [w], Bad())


# ------------------------------------------------------------------------------ livelock
def test_call_me_later_that_rounds_to_now_is_refused_as_batsim_aborts():
    # server_on_call_me_later (src/server.cpp) asserts target_time > clock: "You asked to be
    # awaken in the past!". At t = 1e14 s, 1e14 + 1e-3 == 1e14 in double precision: the call is
    # for the current time. (Workload times stop at 2**33 s; the policy asks for 1e14 s itself.)
    class Spinner(Policy):
        name = "spinner"

        def on_job_submitted(self, job):
            self.call_me_later(1e14)

        def schedule(self):
            if self.now >= 1e14:  # once called back there
                self.call_me_later(self.now + 1e-3)

    w = wl([{"id": "A", "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}],
           {"d": {"type": "delay", "delay": 1}})
    with pytest.raises(EngineError, match=r"CALL_ME_LATER at t=100000000000000: .*awaken in the past"):
        simulate(HETERO, [w], Spinner())


def test_a_scheduler_that_never_lets_time_advance_is_a_livelock_naming_the_policy_and_time():
    # A scheduler that answers every consumed-energy answer with a new query keeps Batsim at one
    # instant forever (each QUERY is answered at once); the engine stops after LIVELOCK_EXCHANGES.
    class Asker(Policy):
        name = "asker"

        def on_job_submitted(self, job):
            self.query_consumed_energy()

        def on_answer(self, answer):
            self.query_consumed_energy()

    w = wl([{"id": "A", "subtime": 5, "walltime": -1, "res": 1, "profile": "d"}],
           {"d": {"type": "delay", "delay": 1}})
    with pytest.raises(EngineError, match=r"livelock at t=5: policy 'asker'"):
        simulate(HETERO, [w], Asker(), energy=True)


# --------------------------------------------------------- dynamic jobs (server.cpp, protocol.cpp)
class Resubmitter(Policy):
    """Runs w0!1 (a 100 s delay), kills it at t=10 and resubmits what is left (90 s) as dyn!1r,
    then says registration_finished. With acknowledgement the resubmitted job comes back as a
    JOB_SUBMITTED and is started then."""

    def __init__(self, finish=True, subtime=True):
        super().__init__()
        self.finish, self.subtime = finish, subtime
        self.got = []

    def on_job_submitted(self, job):
        self.got.append((self.now, job.id))
        self.execute(job, [0])

    def on_simulation_begins(self, platform):
        self.call_me_later(10)

    def on_requested_call(self):
        self.kill([self.jobs["w0!1"]])

    def on_jobs_killed(self, jobs, progress):
        left = 100 * (1 - progress["w0!1"]["progress"])
        self.register_profile("dyn", "rest", {"type": "delay", "delay": left})
        if self.subtime:
            self.register_job("dyn", "1r", 1, "rest")
        else:  # what a scheduler that forgets the submission time sends
            self.emit(RegisterJob(job_id="dyn!1r", job={"id": "1r", "res": 1, "profile": "rest", "walltime": -1}))
        if self.finish:
            self.emit(NotifyBatsim(type="registration_finished"))


def test_dynamic_job_registered_after_a_kill_runs_and_is_written(tmp_path):
    # w0!1 killed at 10 s after 10 % of its 100 s delay; dyn!1r (90 s) submitted and started at 10,
    # ends at 100. out_jobs.csv: the kill first, then the dynamic job in workload "dyn".
    w = wl([{"id": 1, "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}],
           {"d": {"type": "delay", "delay": 100}})
    pol = Resubmitter()
    prefix = tmp_path / "out_"
    r = simulate(HETERO, [w], pol, dynamic_jobs=True, acknowledge_dynamic_jobs=True, export_prefix=prefix)
    assert pol.got == [(0.0, "w0!1"), (10.0, "dyn!1r")]
    rows = list(csv.DictReader((tmp_path / "out_jobs.csv").open()))
    assert [(x["job_id"], x["workload_name"], x["final_state"], x["starting_time"], x["finish_time"])
            for x in rows] == [("1", "w0", "COMPLETED_KILLED", "0.000000", "10.000000"),
                               ("1r", "dyn", "COMPLETED_SUCCESSFULLY", "10.000000", "100.000000")]
    assert rows[1]["submission_time"] == "10.000000" and rows[1]["profile"] == "rest"
    # killed while in a delay: Batsim kills the job's actor, JOB_COMPLETED says return_code -1
    # (-2 only when a running parallel task is cancelled), as real Batsim 4.2.1 sends it
    assert [j.return_code for j in r.jobs] == [-1, 0]
    assert r.schedule["nb_jobs"] == 2 and r6(r.end_time) == 100.0


def test_dynamic_jobs_need_registration_finished_to_end():
    w = wl([{"id": 1, "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}], {"d": {"type": "delay", "delay": 100}})
    with pytest.raises(EngineError, match="never sent NOTIFY registration_finished"):
        simulate(HETERO, [w], Resubmitter(finish=False), dynamic_jobs=True, acknowledge_dynamic_jobs=True)


def test_registered_job_without_subtime_is_a_clear_error():
    w = wl([{"id": 1, "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}], {"d": {"type": "delay", "delay": 100}})
    with pytest.raises(EngineError, match=r"REGISTER_JOB 'dyn!1r' at t=10: the job has no numeric 'subtime'"):
        simulate(HETERO, [w], Resubmitter(subtime=False), dynamic_jobs=True, acknowledge_dynamic_jobs=True)


def test_registration_without_the_option_is_refused():
    # the policy base class refuses it where the policy registers (SIMULATION_BEGINS said
    # dynamic-jobs-enabled: false); the engine, when the decision comes as it is (emit)
    from schedulers.core.model import PolicyError
    from schedulers.core.events import RegisterProfile

    w = wl([{"id": 1, "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}], {"d": {"type": "delay", "delay": 100}})
    with pytest.raises(PolicyError, match="--enable-dynamic-jobs"):
        simulate(HETERO, [w], Resubmitter())
    emitting = Resubmitter()
    emitting.register_profile = lambda workload, name, profile: emitting.emit(  # type: ignore[method-assign]
        RegisterProfile(workload=workload, name=name, profile=dict(profile)))
    emitting.register_job = lambda *args, **kw: None   # type: ignore[method-assign]  # (the profile is refused first)
    with pytest.raises(EngineError, match="--enable-dynamic-jobs"):
        simulate(HETERO, [w], emitting)


def test_simulation_begins_announces_dynamic_job_options():
    seen = {}

    class Look(Policy):
        def on_simulation_begins(self, platform):
            seen.update(platform.config)
            self.notify("registration_finished")

    simulate(HETERO, [wl([], {})], Look(), dynamic_jobs=True, acknowledge_dynamic_jobs=True)
    assert seen["dynamic-jobs-enabled"] is True and seen["dynamic-jobs-acknowledged"] is True


# ----------------------------------------------------- switching (server.cpp, pstate.cpp)
def test_wake_request_while_switching_off_is_ignored_until_asked_again(tmp_path):
    # t=0: n1 -> sleep: 1 flop at 0.5 f/s = 2 s at 150 W. t=1: wake request while n1 is in the
    # virtual switch-off pstate: Batsim logs an error, keeps the request's group pending, and n1
    # falls asleep at 2 (RESOURCE_STATE_CHANGED "2"). t=5: wake again: 10 s at 180 W; at 15 n1
    # completes the *first* pending group towards pstate 0 (the one of t=1): one
    # RESOURCE_STATE_CHANGED "0" at 15. Job on n0: 20 s delay.
    # Energy at 20: n1 = 2*150 + 3*10 + 10*180 + 5*100 = 2630 J; n0 = 20*100 = 2000 J -> 4630 J.
    seen = []

    def hook(p):
        if p.now == 0 and not hasattr(p, "a"):
            p.a = p.set_pstate([1], 2) or p.call_me_later(1) or p.call_me_later(5)
        elif p.now == 1 and not hasattr(p, "b"):
            p.b = p.set_pstate([1], 0)
        elif p.now == 5 and not hasattr(p, "c"):
            p.c = p.set_pstate([1], 0)

    class S(Eager):
        def on_resource_state_changed(self, hosts, state):
            seen.append((self.now, str(hosts), state))

    w = wl([{"id": "j", "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}], {"d": {"type": "delay", "delay": 20}})
    prefix = tmp_path / "out_"
    r = simulate(DVFS, [w], S(hook), energy=True, export_prefix=prefix)
    assert seen == [(2.0, "1", "2"), (15.0, "1", "0")]
    assert (tmp_path / "out_pstate_changes.csv").read_text().splitlines() == [
        "time,machine_id,new_pstate", "0,0-1,0", "2e-10,1,-2", "1,1,-1", "2,1,2", "5,1,-1", "15,1,0"]
    sched = schedule_row(prefix)
    assert sched["nb_grouped_switches"] == "3" and sched["nb_machine_switches"] == "3"
    assert r.consumed_joules == pytest.approx(4630.0)


def test_switching_off_a_host_that_runs_a_job_is_an_error():
    def hook(p):
        if p.jobs and not hasattr(p, "a"):  # the job was just started on host 0
            p.a = p.set_pstate([0], 2)

    w = wl([{"id": "j", "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}], {"d": {"type": "delay", "delay": 20}})
    with pytest.raises(EngineError, match="runs jobs.*cannot be switched off"):
        simulate(DVFS, [w], Eager(hook), energy=True)


# --------------------------------------------------------------------------------- network
def test_platform_with_network_links_delays_the_messages_to_the_master(tmp_path):
    # h0 -> master_host is the (symmetrical) route through l: 500 us + 1 B at 1 GBps. The master
    # host's messages to itself cross the Full zone's loopback (1e-10 s). The 1 s job starts at once
    # (up to the loopback's 1e-10 s) and the scheduler hears of its end 500 us + 1 ns after it.
    xml = tmp_path / "net.xml"
    xml.write_text("<?xml version='1.0'?><platform version='4.1'><zone id='z' routing='Full'>"
                   "<host id='master_host' speed='1Gf'/><host id='h0' speed='1Gf'/>"
                   "<link id='l' bandwidth='1GBps' latency='500us'/>"
                   "<route src='master_host' dst='h0'><link_ctn id='l'/></route></zone></platform>")
    w = wl([{"id": 1, "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}], {"d": {"type": "delay", "delay": 1}})
    heard = []

    class NotePort:  # a port sees the engine's clock; a policy in-process reads 6 decimals, as from Batsim
        policy = Eager()

        def exchange(self, now, events):
            heard.extend(now for e in events if type(e).__name__ == "JobCompleted")
            return self.policy.decide(now, events)

    r = simulate(xml, [w], NotePort())
    assert r.jobs[0].finish == pytest.approx(1.0, abs=1e-8)
    assert heard == [pytest.approx(1.0 + 500e-6 + 1e-9, abs=1e-9)]


# ------------------------------------------------------------------ sharing must be invisible
def test_compute_sharing_changes_nothing_for_a_policy_that_never_shares(tmp_path):
    # EASY never puts two jobs on one host: Batsim with --enable-compute-sharing gives the same
    # schedule (each ptask alone on its hosts runs at its lockstep rate), so every output file
    # but the wall-clock columns must be identical, message for message.
    from schedulers.registry import get_policy

    root = Path(__file__).resolve().parents[1]
    platform, work = root / "platforms" / "g5k_nantes_econome.xml", root / "workloads" / "demo_nantes.json"
    runs = {}
    for sharing in (False, True):
        prefix = tmp_path / f"s{int(sharing)}_"
        r = simulate(platform, [work], get_policy("easy"), energy=True, compute_sharing=sharing,
                     export_prefix=prefix)
        runs[sharing] = (r.messages, [(tmp_path / f"s{int(sharing)}_{f}").read_text()
                                      for f in ("jobs.csv", "machine_states.csv", "consumed_energy.csv")])
    assert runs[False][0] == runs[True][0]
    assert runs[False][1] == runs[True][1]


_BYE0 = Path(__file__).parent / "fixtures" / "batsim_bye_time0"


def _recorded_types(name: str) -> list[list[str]]:
    """The event types of each message Batsim sent in a recording of ``batsim_bye_time0``, as the
    engine's event class names (JOB_SUBMITTED -> JobSubmitted)."""
    out = []
    for line in (_BYE0 / name).read_text().splitlines():
        if line.startswith("B->S "):
            types = json.loads(line[5:])["events"]
            out.append(["".join(w.capitalize() for w in t.split("_")) for t in types])
    return out


@pytest.mark.parametrize("routing, recording", [
    # Real Batsim 4.2.1 (tests/fixtures/batsim_bye_time0): with every job submitted at t=0, their
    # JOB_SUBMITTED go in one message and the submitter's bye (NOTIFY) alone in the next, after the
    # scheduler's reply, on a Full-routing zone (where the bye also crosses SimGrid's loopback link)
    # as on a Vivaldi zone (the recording). The grouped path joined the bye to the jobs on Vivaldi.
    ("Full", "messages_vivaldi.txt"),
    ("Vivaldi", "messages_vivaldi.txt"),
])
def test_time_zero_submissions_and_the_submitters_bye(routing, recording, tmp_path):
    class Recorder:
        def __init__(self):
            self.policy, self.log = Eager(), []

        def exchange(self, now, events):
            self.log.append([type(e).__name__ for e in events])
            return self.policy.decide(now, events)

    messages = _recorded_types(recording)
    assert messages[:3] == [["SimulationBegins"], ["JobSubmitted"] * 3, ["Notify"]]   # (the recording)
    coords = " coordinates='0 0 0'" if routing == "Vivaldi" else ""
    xml = tmp_path / "p.xml"
    xml.write_text(f"<?xml version='1.0'?><platform version='4.1'><zone id='z' routing='{routing}'>"
                   + "".join(f"<host id='{n}' speed='1Gf'{coords}/>" for n in ("master_host", "h0", "h1", "h2"))
                   + "</zone></platform>")
    w = json.loads((_BYE0 / "workload.json").read_text())
    port = Recorder()
    simulate(xml, [w], port)
    assert port.log == messages


def test_time_zero_bye_on_the_tutorial_platform_as_batsim_sends_it_to_fcfs() -> None:
    # docs/examples/four_hosts.xml (Vivaldi), 3 jobs at t=0 under FCFS: the recorded messages of
    # real Batsim, to gridsched serve's fcfs and to batsched's, one list of event types each.
    from schedulers.registry import get_policy

    root = Path(__file__).resolve().parents[1]
    w = json.loads((_BYE0 / "workload_four_hosts.json").read_text())
    for name in ("messages_four_hosts_three_jobs.txt", "messages_four_hosts_batsched.txt"):
        log = []
        policy = get_policy("fcfs")

        class Recorder:
            def exchange(self, now, events):
                log.append([type(e).__name__ for e in events])
                return policy.decide(now, events)

        simulate(root / "docs" / "examples" / "four_hosts.xml", [w], Recorder())
        assert log == _recorded_types(name), name


class ReuseAfterKill(Resubmitter):
    """As Resubmitter, but registers w0!1r with the killed job's own profile name d."""

    def on_jobs_killed(self, jobs, progress):
        self.register_job("w0", "1r", 1, "d", track=True)
        self.execute(self.jobs["w0!1r"], [0])
        self.notify("registration_finished")


def test_profile_of_an_ended_job_is_garbage_collected_unless_reuse(tmp_path):
    # server_process (src/server.cpp) deletes the jobs whose end it has just sent and, unless
    # --enable-profile-reuse, Profiles::remove_profile empties their profile's entry: a later
    # REGISTER_JOB naming it aborts Batsim 4.2.1 ("it existed some time ago but is no longer
    # accessible"). With reuse the restart runs its full 100 s from 10 s: ends at 110.
    w = wl([{"id": 1, "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}],
           {"d": {"type": "delay", "delay": 100}})
    with pytest.raises(EngineError, match="garbage-collected"):
        simulate(HETERO, [w], ReuseAfterKill(), dynamic_jobs=True)
    r = simulate(HETERO, [w], ReuseAfterKill(), dynamic_jobs=True, profile_reuse=True)
    assert r6([(j.id, j.state, j.start, j.finish) for j in r.jobs]) == [
        ("w0!1", "COMPLETED_KILLED", 0.0, 10.0), ("w0!1r", "COMPLETED_SUCCESSFULLY", 10.0, 110.0)]
    with pytest.raises(EngineError, match="needs dynamic jobs"):
        simulate(HETERO, [w], ReuseAfterKill(), profile_reuse=True)


# ------------------------------------------------------------------- jobs larger than the platform
def test_a_job_larger_than_the_platform_is_accepted_and_left_to_the_policy_as_batsim_does(tmp_path):
    # Batsim 4.2.1 accepts a job whose res exceeds the platform (Job::from_json and
    # Workload::check_validity never compare them); FCFS rejects it. Recorded on real Batsim 4.2.1
    # (hetero_4hosts_owners.xml, same workload, gridsched serve --policy fcfs): the rejected row
    # first, empty times; mean_slowdown 0.5 (the rejected job counts 0), success_rate 0.5.
    from schedulers.fcfs import FCFS

    w = {"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 5}},
         "jobs": [{"id": 1, "subtime": 0, "walltime": -1, "res": 1, "profile": "d"},
                  {"id": 2, "subtime": 0, "walltime": -1, "res": 5, "profile": "d"}]}
    prefix = tmp_path / "out_"
    simulate(HETERO, [w], FCFS(), export_prefix=prefix)
    rows = list(csv.DictReader(open(f"{prefix}jobs.csv")))
    assert [(r["job_id"], r["final_state"], r["starting_time"], r["finish_time"]) for r in rows] == [
        ("2", "REJECTED", "", ""), ("1", "COMPLETED_SUCCESSFULLY", "0.000000", "5.000000")]
    sched = next(csv.DictReader(open(f"{prefix}schedule.csv")))
    assert (sched["nb_jobs_rejected"], sched["mean_slowdown"], sched["success_rate"]) == ("1", "0.500000", "0.500000")


def test_gridsched_run_refuses_a_job_larger_than_the_platform_unless_fit_keep(tmp_path, capsys):
    from schedulers.cli import main

    w = {"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 5}},
         "jobs": [{"id": 1, "subtime": 0, "walltime": -1, "res": 1, "profile": "d"},
                  {"id": 2, "subtime": 0, "walltime": -1, "res": 5, "profile": "d"}]}
    wp = tmp_path / "w.json"
    wp.write_text(json.dumps(w))
    assert main(["run", "--policy", "fcfs", "-p", str(HETERO), "-w", str(wp), "-o", str(tmp_path / "a"),
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "job '2': requests 5 hosts but the platform has 4 compute hosts" in err and "--fit keep" in err
    assert main(["run", "--policy", "fcfs", "-p", str(HETERO), "-w", str(wp), "-o", str(tmp_path / "b"),
                 "--no-progress", "--fit", "keep"]) == 0
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert (summary["jobs"], summary["success"], summary["rejected"]) == (2, 1, 1)


# ------------------------------------------------------------------- profiles no job uses
def test_profiles_no_job_uses_are_removed_at_load_as_batsim_does():
    # Batsim 4.2.1 (Profiles::remove_unreferenced_profiles after loading a workload; recorded:
    # SIMULATION_BEGINS without the unused profile, then an abort when a job is registered with it)
    from schedulers.core.events import SimulationBegins

    profiles = {"used": {"type": "delay", "delay": 5}, "unused": {"type": "delay", "delay": 3},
                "seq": {"type": "composed", "seq": ["leaf"]}, "leaf": {"type": "delay", "delay": 1}}
    w = wl([{"id": "1", "subtime": 0, "walltime": -1, "res": 1, "profile": "used"},
            {"id": "2", "subtime": 0, "walltime": -1, "res": 1, "profile": "seq"}], profiles)

    class Register:
        begins = None

        def exchange(self, now, events):
            for e in events:
                if isinstance(e, SimulationBegins):
                    self.begins = e
            subs = [e for e in events if isinstance(e, JobSubmitted)]
            out = [ExecuteJob(job_id=e.job.id, alloc=ProcSet(k)) for k, e in enumerate(subs)]
            if any(e.job.id == "w0!1" for e in subs):
                out.append(RegisterJob(job_id="w0!3", job={"id": "3", "subtime": now, "res": 1, "profile": "unused",
                                                           "walltime": -1}))
            return out

    port = Register()
    with pytest.raises(EngineError, match=r"REGISTER_JOB.*profile 'unused' of workload 'w0' was removed when the "
                                          r"workload was loaded, because no job of it used the profile"):
        simulate(HETERO, [w], port, dynamic_jobs=True, acknowledge_dynamic_jobs=True)
    assert sorted(port.begins.profiles["w0"]) == ["leaf", "seq", "used"]


def test_unreferenced_profiles_follow_composed_profiles_jobs_use():
    from schedulers.engine.workload import unreferenced_profiles

    profiles = {"a": {"type": "delay", "delay": 1}, "c": {"type": "composed", "seq": ["a", "b"]},
                "b": {"type": "delay", "delay": 2}, "u": {"type": "composed", "seq": ["m"]},
                "m": {"type": "delay", "delay": 3}, "z": {"type": "delay", "delay": 4}}
    # m, held only by u (no job uses u), survives: Batsim's map visits m before u
    # (tests/fixtures/batsim_profile_order, small_c.json: these very profiles)
    assert unreferenced_profiles(profiles, {"c"}) == {"u", "z"}
    assert unreferenced_profiles(profiles, {"b", "m"}) == {"a", "c", "u", "z"}
    # no job: the map's order is z m u b c a; m and b, visited while u and c still hold them, survive
    assert unreferenced_profiles(profiles, set()) == {"a", "c", "u", "z"}


# ------------------------------------------------------------------- a host declared at pstate 1
def test_a_host_declared_at_another_pstate_is_charged_at_pstate_0_until_its_first_energy_update(tmp_path):
    # SimGrid 3.32's energy plugin starts every host at pstate 0 and reads the true pstate only at
    # its first update; Batsim reads all hosts when the first job is submitted (t = 10). host0
    # (pstate 1 of "10:20, 100:200") idles at 10 W until then, 100 W after; host1 (pstate 0) 10 W.
    # [0, 10]: 10 + 10 W -> 200 J; [10, 15]: 100 + 10 W -> 550 J more: 750 J at the job's end.
    # Recorded on real Batsim 4.2.1 (same platform and workload): rows (10, 200, s, wattmin 110,
    # epower 20) and (15, 750, e, 110, 110).
    from schedulers.core.policy import Policy

    class OnHost1(Policy):
        def on_job_submitted(self, job):
            self.execute(job, [1])

    w = wl([{"id": "1", "subtime": 10, "walltime": -1, "res": 1, "profile": "d"}], {"d": {"type": "delay", "delay": 5}})
    w["nb_res"] = 2
    prefix = tmp_path / "out_"
    simulate(FIX / "initial_pstate.xml", [w], OnHost1(), energy=True, export_prefix=prefix)
    rows = [(r["time"], r["energy"], r["event_type"], r["wattmin"], r["epower"])
            for r in csv.DictReader(open(f"{prefix}consumed_energy.csv"))]
    assert rows == [("10.000000", "200.000000", "s", "110.000000", "20.000000"),
                    ("15.000000", "750.000000", "e", "110.000000", "110.000000")]


# ------------------------------------------ compute-only platforms: what happens between decisions
class _Script:
    """A scheduler port that answers the message whose events include ``trigger`` (an event type
    name and job id) with ``decisions``, and starts nothing else; logs every message's events."""

    def __init__(self, plan):
        self.plan, self.log = plan, []

    def exchange(self, now, events):
        names = [(type(e).__name__, getattr(e, "job_id", None) or getattr(getattr(e, "job", None), "id", None))
                 for e in events]
        self.log.append(names)
        out = []
        for trigger, decisions in self.plan:
            if trigger in names:
                out.extend(decisions(now))
        return out


def _machine_rows(prefix):
    return [(r["time"], r["nb_idle"], r["nb_computing"]) for r in csv.DictReader(open(f"{prefix}machine_states.csv"))]


def test_a_job_without_work_ends_before_the_next_decision_of_its_reply(tmp_path):
    # Batsim 4.2.1 (recorded, Full-routing and Vivaldi platforms): EXECUTE_JOB 1
    # (zero flops) then EXECUTE_JOB 2 in one reply: job 1 starts and ends, then job 2 starts.
    w = wl([{"id": "1", "subtime": 10, "walltime": -1, "res": 1, "profile": "z"},
            {"id": "2", "subtime": 10, "walltime": -1, "res": 1, "profile": "d"}],
           {"z": {"type": "parallel_homogeneous", "cpu": 0, "com": 0}, "d": {"type": "delay", "delay": 5}})
    port = _Script([(("JobSubmitted", "w0!1"), lambda now: [ExecuteJob(job_id="w0!1", alloc=ProcSet(0)),
                                                             ExecuteJob(job_id="w0!2", alloc=ProcSet(1))])])
    prefix = tmp_path / "out_"
    simulate(HETERO, [w], port, energy=True, export_prefix=prefix)
    assert _machine_rows(prefix) == [("10", "3", "1"), ("10", "4", "0"), ("10", "3", "1"), ("15", "4", "0")]
    kinds = [(r["time"], r["event_type"]) for r in csv.DictReader(open(f"{prefix}consumed_energy.csv"))]
    assert kinds == [("10.000000", "s"), ("10.000000", "e"), ("10.000000", "s"), ("15.000000", "e")]
    # and, as recorded, job 1's JOB_COMPLETED goes with the submitter's NOTIFY (its bye crosses
    # the Full zone's loopback after the reply)
    assert port.log[2] == [("Notify", None), ("JobCompleted", "w0!1")]


def test_a_kill_ends_its_job_before_the_next_decision_and_reports_after_the_reply(tmp_path):
    # Batsim 4.2.1 (recorded, energy_6pstates_4hosts.xml and
    # energy_platform_homogeneous_no_net_1.xml): a reply KILL_JOB w0!1 then QUERY consumed_energy;
    # the killer ends job 1 before the query is answered, and its JOB_COMPLETED and JOB_KILLED
    # come after the ANSWER, in the same message.
    from schedulers.core.events import KillJobs, Query

    w = wl([{"id": "1", "subtime": 0, "walltime": -1, "res": 1, "profile": "c"},
            {"id": "2", "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}],
           {"c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}, "d": {"type": "delay", "delay": 5}})
    port = _Script([(("JobSubmitted", "w0!1"), lambda now: [ExecuteJob(job_id="w0!1", alloc=ProcSet(0)),
                                                             ExecuteJob(job_id="w0!2", alloc=ProcSet(2))]),
                    (("JobCompleted", "w0!2"), lambda now: [KillJobs(job_ids=["w0!1"]),
                                                            Query(requests={"consumed_energy": {}})])])
    prefix = tmp_path / "out_"
    simulate(HETERO, [w], port, energy=True, export_prefix=prefix)
    after = port.log[port.log.index(next(m for m in port.log if ("JobCompleted", "w0!2") in m)) + 1]
    assert after == [("Answer", None), ("JobCompleted", "w0!1"), ("JobKilled", None)]
    # t = 5: job 2 ends (host 2 idle), then the kill (host 0 idle)
    assert _machine_rows(prefix)[-2:] == [("5", "3", "1"), ("5", "4", "0")]


# ------------------------------------------------------------ job_progress of nested composed profiles
def test_job_progress_of_nested_composed_profiles_has_one_level_per_profile():
    # Batsim 4.2.1 (recorded): outer = [inner], inner = [leaf, leaf], leaf a
    # delay of 7 s, killed at t = 10: outer runs its child 0 (inner), inner its child 1, 3 of 7 s
    # done. With repeat, a level's index counts the repeated sequence (repetition * len + position).
    from schedulers.core.events import CallMeLater, JobKilled, KillJobs
    from schedulers.engine.workload import Stages

    profiles = {"outer": {"type": "composed", "seq": ["inner"]},
                "inner": {"type": "composed", "seq": ["leaf", "leaf"]}, "leaf": {"type": "delay", "delay": 7},
                "rep": {"type": "composed", "repeat": 3, "seq": ["leaf", "inner"]}}
    assert Stages("outer", profiles).path(1) == [("outer", 0), ("inner", 1)]
    # rep: 3 stages a repetition (leaf, then inner's two); stage 7 = 3rd repetition (7 // 3 = 2), its
    # stage 1 = inner (position 1), inner's first leaf: index 2 * 2 + 1 = 5
    assert Stages("rep", profiles).path(7) == [("rep", 5), ("inner", 0)]
    w = wl([{"id": "1", "subtime": 0, "walltime": -1, "res": 1, "profile": "outer"}], profiles)
    got = {}

    class Killer:
        def exchange(self, now, events):
            for e in events:
                if isinstance(e, JobKilled):
                    got.update(e.job_progress)
            if any(isinstance(e, JobSubmitted) for e in events):
                return [ExecuteJob(job_id="w0!1", alloc=ProcSet(0)), CallMeLater(at=10.0)]
            if r6(now) == 10.0 and not got:
                return [KillJobs(job_ids=["w0!1"])]
            return []

    simulate(HETERO, [w], Killer())
    assert got["w0!1"] == {"profile_name": "outer", "current_task_index": 0, "current_task": {
        "profile_name": "inner", "current_task_index": 1, "current_task": {"profile_name": "leaf",
                                                                            "progress": 0.428571}}}
