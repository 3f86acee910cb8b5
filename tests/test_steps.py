"""SimGrid's step clock (schedulers/engine/steps.py), worked by hand from SimGrid 3.32's rules.

A step lasts the smallest latency left, ``remains / rate`` or ``max_duration``
(``HostL07Model::next_occurring_event``); then a latency or a ``max_duration`` below 1e-9 s is 0
and a ``remains`` below 1e-14 is 0 (``double_update`` with ``precision/timing`` and
``precision/work-amount`` x ``precision/timing``)."""

from schedulers.engine.queue import Kind
from schedulers.engine.steps import StepQueue


def steps(q):
    out = []
    while q:
        t, ended = q.pop_instant()
        out.append((t, [p for _, p in ended]))
    return out


def test_a_message_pays_its_latency_then_its_byte():
    # 0.5 s latency (a step in which nothing ends), then 1 B at 2 B/s: 0.5 s more
    q = StepQueue()
    q.message(0.5, 2.0, Kind.RECV, "m")
    assert steps(q) == [(0.5, []), (1.0, ["m"])]


def test_ends_of_one_step_come_in_creation_order():
    # a sleep of 1.5 s and a message of 0.5 s + 1 B at 1 B/s both end at 1.5
    q = StepQueue()
    q.sleep(1.5, Kind.WAITER, "sleep")
    q.message(0.5, 1.0, Kind.RECV, "msg")
    assert steps(q) == [(0.5, []), (1.5, ["sleep", "msg"])]


def test_a_sleep_within_1e_9_s_ends_with_the_step():
    # the work ends at 1.0; the sleep has 5e-10 s left, below precision/timing: it ends too
    q = StepQueue()
    q.sleep(1.0 + 5e-10, Kind.WAITER, "sleep")
    q.work(1.0, 1.0, Kind.SWITCH, "work")
    assert steps(q) == [(1.0, ["sleep", "work"])]


def test_work_left_above_1e_14_is_one_more_step():
    # the sleep ends at 1.0; 1e-12 of work is left (above 1e-14): a second step of 1e-12 s
    q = StepQueue()
    q.work(1.0 + 1e-12, 1.0, Kind.SWITCH, "work")
    q.sleep(1.0, Kind.WAITER, "sleep")
    (t1, e1), (t2, e2) = steps(q)
    assert (t1, e1) == (1.0, ["sleep"])
    assert e2 == ["work"] and t2 == 1.0 + ((1.0 + 1e-12) - 1.0)


def test_a_timer_whose_job_moved_on_is_no_step():
    class Job:
        version = 2

    q = StepQueue()
    q.sleep(1.0, Kind.JOB_END, (Job, 1, False))   # stale: the job is at version 2
    q.latency(3.0, Kind.LATENCY, (Job, 2))
    assert steps(q) == [(3.0, [(Job, 2)])]
