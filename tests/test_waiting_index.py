"""The waiting-job index (``schedulers.core.waiting``) finds the job a scan of the queue finds.

Hand-worked searches first (each naming the job a scan stops at), then random sequences of
appends, removals and rebuilds checked against a brute-force scan written from the definition
(``cap(w) = caps[j]``, ``j`` = number of limits ``t < now + w``).
"""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unittest.mock import patch

from schedulers.core import waiting
from schedulers.core.model import Job
from schedulers.core.waiting import QueueScan, WaitingIndex, class_low, size_class, walltime_key

INF = math.inf


def job(n: int, res: int, wt: float) -> Job:
    return Job(id=f"w0!{n}", workload="w0", subtime=0.0, walltime=wt, res=res, profile="p")


def brute(jobs_by_slot: list[tuple[int, Job]], slot: int, now: float, limits, caps) -> int:
    for s, j in jobs_by_slot:
        if s < slot:
            continue
        crossed = sum(1 for t in limits if t < now + walltime_key(j))
        if j.res <= caps[crossed]:
            return s
    return -1


def test_size_classes():
    assert [size_class(r) for r in (1, 2, 63, 64, 79, 80, 127, 128, 159, 160, 1000)] == \
        [1, 2, 63, 64, 64, 65, 67, 68, 68, 69, 64 + 4 * 3 + 3]
    assert [class_low(c) for c in (1, 63, 64, 65, 67, 68, 69, 79)] == [1, 63, 64, 80, 112, 128, 160, 896]
    for r in range(1, 3000):  # classes grow with res and start at class_low
        assert class_low(size_class(r)) <= r < class_low(size_class(r) + 1)


def test_hand_worked_searches():
    # queue (slot: res, walltime): 0: 4h 100s, 1: 2h 500s, 2: 1h no walltime, 3: 3h 50s, 4: 1h 400s
    jobs = [job(0, 4, 100), job(1, 2, 500), job(2, 1, -1), job(3, 3, 50), job(4, 1, 400)]
    for idx in (WaitingIndex(jobs), QueueScan(jobs)):
        # res alone: the first with res <= 2 is slot 1, from slot 2 on slot 2, <= 0 none
        assert [idx.first(0, 0.0, (), (2,)), idx.first(2, 0.0, (), (2,)), idx.first(0, 0.0, (), (0,))] == [1, 2, -1]
        # EASY at now=1000 with the head's reservation at 1200 (gap 200 s), 3 hosts free, none
        # spare: slot 0 (4 hosts) too large, 1 (500 s) too long, 2 (no walltime) crosses the
        # limit, slot 3 (3 hosts, ends 1050 <= 1200) fits
        assert idx.first(0, 1000.0, (1200.0,), (3, 0)) == 3
        # one spare host: slot 2 (1 host) fits on it although it has no walltime
        assert idx.first(0, 1000.0, (1200.0,), (3, 1)) == 2
        # a gap of exactly 50 s: slot 3 ends at the limit (1050 <= 1050), fits
        assert idx.first(0, 1000.0, (1050.0,), (3, 0)) == 3
        # three steps: 3 hosts until 1060, 2 until 1450, then none: slot 1 needs 2 hosts until
        # 1500 (crosses both limits: cap 0), slot 3 fits, and from slot 4: 1 host for 400 s
        # crosses 1060 only (cap 2): fits
        assert idx.first(0, 1000.0, (1060.0, 1450.0), (3, 2, 0)) == 3
        assert idx.first(4, 1000.0, (1060.0, 1450.0), (3, 2, 0)) == 4
    idx = WaitingIndex(jobs)
    idx.remove(jobs[3])
    assert idx.first(0, 1000.0, (1200.0,), (3, 0)) == -1 and len(idx) == 4
    # a reservation that never starts (limit inf): every 1-host job fits; the removed slot 2
    # (walltime inf as well) must not be taken for one
    idx.remove(jobs[2])
    assert idx.first(0, 1000.0, (INF,), (1, 0)) == 4
    idx.append(jobs[2])  # back, behind every other job (slot 5)
    # the same beyond the first slots a search looks at one by one (PROBE): the trees answer
    many = [job(n, 5, 100) for n in range(10)] + [job(10, 1, -1), job(11, 1, 400)]
    far = WaitingIndex(many)
    far.remove(many[10])
    assert far.first(0, 1000.0, (INF,), (1, 0)) == 11
    assert far.first(0, 1000.0, (1300.0,), (1, 0)) == -1 and far.first(0, 1000.0, (1400.0,), (1, 0)) == 11
    idx.append(job(5, 3, 10))
    assert idx.first(0, 1000.0, (1200.0,), (3, 0)) == 6 and idx.job(6).id == "w0!5"
    assert [j.id for j in idx.jobs()] == ["w0!0", "w0!1", "w0!4", "w0!2", "w0!5"]


def test_update_reaches_the_root_when_only_the_walltime_changes():
    # two 2-host jobs in one class: the long one first. The short one, appended beside it, leaves
    # the smallest res of their parent at 2 but lowers its smallest walltime; its removal raises
    # it back. A search for 2 hosts during 60 s must see both changes.
    long_, short = job(0, 2, 1000), job(1, 2, 50)
    idx = WaitingIndex([long_])
    assert idx.first(0, 1000.0, (1060.0,), (2, 0)) == -1
    idx.append(short)
    assert idx.first(0, 1000.0, (1060.0,), (2, 0)) == 1
    idx.remove(short)
    idx.append(job(2, 2, 500))
    assert idx.first(0, 1000.0, (1060.0,), (2, 0)) == -1
    for n in range(3, 40):  # grows past the tree's slots (rebuilt), the short one last
        idx.append(job(n, 2, 1000 if n < 39 else 60))
    assert idx.first(0, 1000.0, (1060.0,), (2, 0)) == 39
    assert idx.first(0, 1000.0, (1060.0,), (2, 2)) == 0


ops = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(1, 200), st.sampled_from([-1.0, 10.0, 50.0, 60.0, 100.0, 1000.0])),
    st.tuples(st.just("add"), st.integers(1, 6), st.sampled_from([-1.0, 10.0, 50.0, 100.0])),
    st.tuples(st.just("remove"), st.integers(0, 10 ** 6), st.just(0.0)),
    st.tuples(st.just("rebuild"), st.just(0), st.just(0.0)),
    st.tuples(st.just("insert"), st.integers(0, 10 ** 6), st.sampled_from([-1.0, 10.0, 50.0, 60.0, 100.0, 1000.0])),
), min_size=1, max_size=120)


@st.composite
def queries(draw):
    nlim = draw(st.integers(0, 3))
    limits = sorted(draw(st.lists(st.sampled_from([1000.0, 1010.0, 1050.0, 1060.0, 1100.0, INF]),
                                  min_size=nlim, max_size=nlim)))
    caps = sorted(draw(st.lists(st.one_of(st.integers(0, 8), st.integers(0, 220)), min_size=nlim + 1,
                                max_size=nlim + 1)), reverse=True)
    return draw(st.one_of(st.just(0), st.integers(0, 130))), limits, caps


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops, st.lists(queries(), min_size=1, max_size=8), st.sampled_from([0, 1, 8]))
def test_random_operations_match_a_scan(operations, qs, probe):
    # probe: how many slots a search looks at one by one before the trees (0: trees only)
    with patch.object(waiting, "PROBE", probe):
        _random_operations(operations, qs)


def _random_operations(operations, qs):
    idx = WaitingIndex()
    live: list[tuple[int, Job]] = []  # (slot, job) in queue order
    n = 0
    for op, a, b in operations:
        if op == "add":
            j = job(n, a, b)
            n += 1
            idx.append(j, key=("k", n))
            live.append((idx.slot(j), j))
        elif op == "remove" and live:
            _, j = live.pop(a % len(live))
            idx.remove(j)
            assert j not in idx
        elif op == "rebuild":
            idx.rebuild([j for _, j in live], [("r", j.id) for _, j in live])
            live = [(idx.slot(j), j) for _, j in live]
        elif op == "insert" and live:
            # before the job at position p (a queue kept in another order than arrival)
            p = a % len(live)
            j = job(n, 1 + (a // 7) % (6 if a % 3 else 200), b)
            n += 1
            idx.insert(j, ("i", n), live[p][1], live[p - 1][1] if p else None)
            live = [(idx.slot(x), x) for _, x in live[:p]] + [(idx.slot(j), j)] + \
                [(idx.slot(x), x) for _, x in live[p:]]
    assert [j for _, j in live] == idx.jobs() and len(idx) == len(live)
    assert [s for s, _ in live] == sorted(s for s, _ in live)  # slots follow queue order
    assert len({s for s, _ in live}) == len(live)
    scan = QueueScan([j for _, j in live])
    # the drawn start slots, and the slots of the live jobs and one past them (as searches resume)
    starts = [(q, limits, caps) for q, limits, caps in qs]
    if live:
        starts += [(live[q % len(live)][0] + (q // len(live)) % 2, limits, caps) for q, limits, caps in qs]
    for slot, limits, caps in starts:
        got = idx.first(slot, 1000.0, limits, caps)
        assert got == brute(live, slot, 1000.0, limits, caps), (slot, limits, caps)
        if got >= 0:
            assert idx.job(got) is next(j for s, j in live if s == got)
        # the scan, from the position of the first job at or after ``slot``
        pos = next((k for k, (s, _) in enumerate(live) if s >= slot), len(live))
        found = scan.first(pos, 1000.0, limits, caps)
        assert (live[found][0] if found >= 0 else -1) == got


def test_insert_hand_worked():
    # queue 0: 4h 100s, 1: 2h 500s; a 1-host job of 50 s queued between them (an order other than
    # arrival): the first job of at most 1 host is the inserted one, and it is found through its
    # class's tree as well as by the first slots looked at one by one
    jobs = [job(0, 4, 100), job(1, 2, 500)]
    for probe in (0, 8):
        with patch.object(waiting, "PROBE", probe):
            idx = WaitingIndex(jobs)
            new = job(2, 1, 50)
            idx.insert(new, "k2", before=jobs[1], after=jobs[0])
            assert [j.id for j in idx.jobs()] == ["w0!0", "w0!2", "w0!1"]
            assert idx.slot(jobs[0]) < idx.slot(new) < idx.slot(jobs[1])
            s = idx.first(0, 0.0, (), (1,))
            assert idx.job(s) is new and idx.key(s) == "k2"
            # 2 hosts free until 1060 (now 1000): the 50 s job fits, the 500 s one does not
            assert idx.job(idx.first(0, 1000.0, (1060.0,), (2, 0))) is new
            assert idx.first(idx.slot(new) + 1, 1000.0, (1060.0,), (2, 0)) == -1
            # at the front, then removed again
            front = job(3, 2, 10)
            idx.insert(front, None, before=jobs[0], after=None)
            assert [j.id for j in idx.jobs()] == ["w0!3", "w0!0", "w0!2", "w0!1"]
            assert idx.job(idx.first(0, 1000.0, (1060.0,), (2, 0))) is front
            idx.remove(front)
            idx.remove(new)
            assert idx.first(0, 1000.0, (1060.0,), (2, 0)) == -1 and len(idx) == 2


def test_runs_of_equal_keys_do_not_renumber():
    # a queue by decreasing walltime: jobs of one walltime each go behind the last of theirs, so
    # a run of them is inserted one behind the other before the same job. After the first
    # insertion (which gives the slots their gaps), 2,000 such insertions renumber nothing.
    jobs = [job(0, 1, 1000), job(1, 1, 10)]
    idx = WaitingIndex(jobs)
    calls = []
    real = WaitingIndex.rebuild
    with patch.object(WaitingIndex, "rebuild", lambda self, *a: (calls.append(1), real(self, *a))[1]):
        last = jobs[0]
        for n in range(2, 2002):
            j = job(n, 1 + n % 5, 100)
            idx.insert(j, None, before=jobs[1], after=last)
            last = j
    assert len(calls) == 1
    assert [j.id for j in idx.jobs()] == [f"w0!{n}" for n in [0, *range(2, 2002), 1]]
    assert idx.job(idx.first(0, 0.0, (50.0,), (1, 0))) is jobs[1]  # the only one ending by 50
