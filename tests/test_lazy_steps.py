"""SimGrid's step clock kept lazily on compute-only platforms (``schedulers.engine.lazysteps``):
the same steps, bit for bit, as the full update of ``schedulers.engine.steps.StepQueue`` (each
SimGrid 3.32's rules), and the clock of real Batsim 4.2.1 recorded in
``fixtures/batsim_rapidjson_clock`` (its README works the numbers by hand)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from schedulers.engine import lazysteps, simulate
from schedulers.engine.lazysteps import LazyStepQueue
from schedulers.engine.queue import Kind
from schedulers.engine.steps import StepQueue
from schedulers.registry import get_policy

FIX = Path(__file__).parent / "fixtures" / "batsim_rapidjson_clock"


class _Job:
    """What a JOB_END payload points to: its version moves when the engine re-arms it."""

    def __init__(self) -> None:
        self.version = 0


def _play(seed: int, steps: int, long_lived: bool = False) -> list:
    """Arm the same random sleeps and computations on both queues, step by step; return the two
    step sequences ``(clock, [payload ids])``."""
    rng = random.Random(seed)
    full, lazy = StepQueue(), LazyStepQueue()
    jobs = [_Job() for _ in range(8)]
    seen = ([], [])
    if long_lived:
        for q in (full, lazy):
            q.sleep(1e7 / 3, Kind.WAITER, "long")
    for _ in range(steps):
        for _ in range(rng.randint(0, 3) or (0 if lazy else 1)):
            r = rng.random()
            if r < 0.4:
                d = rng.choice([rng.uniform(0, 50), round(rng.uniform(0, 50), 2), 0.0, rng.uniform(0, 2e-9)])
                args = ("sleep", d, Kind.WAITER, f"s{rng.random()}")
            elif r < 0.7:
                args = ("work", rng.uniform(1e-3, 1e3), rng.choice([1.0, rng.uniform(0.01, 100.0), 1e8]),
                        Kind.SWITCH, f"w{rng.random()}")
            else:  # a job's end timer; some jobs move on (their old timers go stale)
                j = rng.choice(jobs)
                if rng.random() < 0.3:
                    j.version += 1
                args = ("sleep", rng.uniform(0, 40), Kind.JOB_END, (j, j.version, False))
            for q in (full, lazy):
                getattr(q, args[0])(*args[1:])
        for q, out in zip((full, lazy), seen):
            t, entries = q.pop_instant()
            out.append((t.hex(), [p if isinstance(p, str) else (id(p[0]), p[1]) for _, p in entries]))
        assert full.now == lazy.now
    return seen


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("in_c", [True, False])
def test_the_lazy_clock_makes_simgrids_steps_bit_for_bit(seed, in_c, monkeypatch):
    # in_c: the replay as a negated sum in C (CPython 3.11); else the Python loop (3.12 and later)
    monkeypatch.setattr(lazysteps, "_SEQUENTIAL_SUM", in_c and lazysteps._SEQUENTIAL_SUM)
    full, lazy = _play(seed, 400)
    assert len(full) == 400
    assert lazy == full


def test_an_action_waiting_through_many_compactions_stays_exact(monkeypatch):
    monkeypatch.setattr(lazysteps, "_KEEP", 64)   # compact every 32 steps
    monkeypatch.setattr(lazysteps, "_TOL", 2 * 64 * 3 * 2.0 ** -53)
    full, lazy = _play(99, 3000, long_lived=True)
    assert lazy == full


def test_the_engine_clock_is_simgrids_on_a_vivaldi_zone(tmp_path, monkeypatch):
    clocks = []
    pop = LazyStepQueue.pop_instant

    def spy(self):
        t, entries = pop(self)
        clocks.append(t)
        return t, entries

    monkeypatch.setattr(LazyStepQueue, "pop_instant", spy)
    simulate(FIX / "platform.xml", [FIX / "workload.json"], get_policy("fcfs"), energy=True,
             export_prefix=tmp_path / "out_")
    recorded = [float(x) for x in (FIX / "clock.txt").read_text().split()]
    # by hand (README): the subtime as RapidJSON reads it, then a's end one ulp below 121.7
    sub = 53816294074764112.0 / 1e15
    assert recorded[1:] == [sub, sub + (121.7 - sub), 121.70000000000000284, 131.69999999999998863]
    distinct = [t for k, t in enumerate(clocks) if k == 0 or t != clocks[k - 1]]
    assert [t for t in distinct if t > 0] == recorded[1:]
    for name in ("jobs", "consumed_energy"):
        assert (tmp_path / f"out_{name}.csv").read_text() == (FIX / f"{name}.csv").read_text(), name
    energy = (FIX / "consumed_energy.csv").read_text().splitlines()
    assert energy[3] == "121.700000,12170.000000,s,100.000000,128.000000"   # 1 ulp of J / 1 ulp of s


@pytest.mark.parametrize("queue", [StepQueue, LazyStepQueue])
def test_a_computations_work_left_is_taken_off_step_by_step(queue):
    # SimGrid's HostL07Model::update_actions_state: remains -= rate x delta at every step. A task
    # at 0.3 of its work per second through seven steps of 0.1 s: by hand, 1 - 0.03 seven times
    # is 0.7899999999999998 in doubles, where 1 - 0.3 x 0.7 gives 0.79
    q = queue()
    a = q.work(1.0, 0.3, Kind.SWITCH, "task")
    for k in range(7):
        q.sleep(0.1, Kind.WAITER, k)
        q.pop_instant()
    assert q.now == 0.7 and 1.0 - 0.3 * q.now == 0.79
    assert q.remains(a) == 0.7899999999999998
    # once it ended, its work left is 0 (below precision/work-amount: double_update sets 0)
    while q:
        q.pop_instant()
    assert q.remains(a) == 0.0


def test_each_platform_kind_gets_its_clock():
    # simulator.Engine: links or a Full zone's loopback -> the full step clock (timed messages);
    # compute-only -> the lazy one; a Full zone whose routing the reader does not know (no
    # message delays) -> the clock rounded to 1e-9 s
    import dataclasses

    from schedulers.engine import build_engine
    from schedulers.engine.queue import EventQueue
    from schedulers.engine.platform import read_platform

    loop = read_platform(Path(__file__).parent / "fixtures" / "batsim_full_loopback" / "platform.xml")
    vivaldi = read_platform(FIX / "platform.xml")
    wl = [str(FIX / "workload.json")]
    assert type(build_engine(loop, wl)._queue) is StepQueue
    assert type(build_engine(vivaldi, wl)._queue) is LazyStepQueue
    unknown = dataclasses.replace(loop, message_delays=None)
    assert type(build_engine(unknown, wl)._queue) is EventQueue


@pytest.mark.parametrize("queue", [StepQueue, LazyStepQueue])
def test_a_computation_given_a_new_rate_keeps_its_creation_order(queue):
    # SimGrid changes the rate of the running action, which stays in started_action_set: the
    # computation (created first) ends before a sleep created after it, both ending at t = 10 s
    job = _Job()
    q = queue()
    a = q.work(20.0, 1.0, Kind.JOB_END, (job, 0, False))
    q.sleep(10.0, Kind.WAITER, "sleep")
    job.version = 1
    q.work(10.0, 1.0, Kind.JOB_END, (job, 1, False), replace=a)   # re-armed: 10 left at 1/s
    t, entries = q.pop_instant()
    assert t == 10.0
    assert [p if isinstance(p, str) else p[1] for _, p in entries] == [1, "sleep"]
    # without `replace` the new action is created last and ends after the sleep
    job2 = _Job()
    q = queue()
    q.work(20.0, 1.0, Kind.JOB_END, (job2, 0, False))
    q.sleep(10.0, Kind.WAITER, "sleep")
    job2.version = 1
    q.work(10.0, 1.0, Kind.JOB_END, (job2, 1, False))
    assert [p if isinstance(p, str) else p[1] for _, p in q.pop_instant()[1]] == ["sleep", 1]


@pytest.mark.parametrize("queue", [StepQueue, LazyStepQueue])
def test_replacing_an_ended_computation_arms_a_new_one(queue):
    job = _Job()
    q = queue()
    a = q.work(5.0, 1.0, Kind.JOB_END, (job, 0, False))
    assert q.pop_instant() == (5.0, [(Kind.JOB_END, (job, 0, False))])
    q.sleep(3.0, Kind.WAITER, "sleep")
    job.version = 1
    q.work(3.0, 1.0, Kind.JOB_END, (job, 1, False), replace=a)   # a left the clock: a new action
    assert [p if isinstance(p, str) else p[1] for _, p in q.pop_instant()[1]] == ["sleep", 1]
