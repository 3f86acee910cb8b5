"""``Policy.available`` / ``Policy.allocated``: bit masks inside, ProcSet views outside.

The views must behave like the plain ProcSet attributes they replaced (kept for speed as masks):
a reference held across decisions follows the changes, in-place changes made through the view are
seen by the policy, assignment replaces the set.
"""

from __future__ import annotations

from procset import ProcSet

from schedulers.core.events import JobCompleted, JobSubmitted, ResourceStateChanged, SimulationBegins
from schedulers.core.model import Host, Job
from schedulers.core.policy import Policy


def _begins(n: int, sleep: bool = False) -> SimulationBegins:
    props = {"sleep_pstates": "2:3:4"} if sleep else {}
    hosts = [Host(id=i, name=f"host{i}", properties=dict(props)) for i in range(n)]
    return SimulationBegins(0.0, nb_resources=n, nb_compute_resources=n, compute_resources=hosts)


def _job(n: int, res: int) -> Job:
    return Job(id=f"w0!{n}", workload="w0", subtime=0.0, walltime=10.0, res=res, profile="p")


class Manual(Policy):
    """Starts what it is told to, on the hosts it is told to."""

    def __init__(self) -> None:
        super().__init__()
        self.todo: list[tuple[Job, ProcSet]] = []

    def schedule(self) -> None:
        for job, hosts in self.todo:
            self.execute(job, hosts)
        self.todo = []


def test_views_follow_execute_and_release():
    p = Manual()
    p.decide(0.0, [_begins(8)])
    held = p.available
    assert str(held) == "0-7" and str(p.allocated) == ""
    held_alloc = p.allocated
    j = _job(0, 3)
    p.todo = [(j, ProcSet((2, 4)))]
    p.decide(0.0, [JobSubmitted(0.0, job=j)])
    assert p.available is held and str(held) == "0-1 5-7"
    assert p.allocated is held_alloc and str(held_alloc) == "2-4"
    assert p.available_mask == 0b11100011 and p.nb_available == 5
    p.decide(5.0, [JobCompleted(5.0, job_id=j.id, alloc=ProcSet((2, 4)))])
    assert str(held) == "0-7" and str(held_alloc) == ""


def test_in_place_changes_and_assignment_are_seen():
    p = Manual()
    p.decide(0.0, [_begins(8)])
    p.available -= ProcSet((0, 1))          # in place on the view, then assigned back
    assert p.available_mask == 0b11111100
    view = p.available
    view.discard(7)                          # in place only
    assert p.nb_available == 5 and str(p.available) == "2-6"
    p.available = ProcSet(1, 3)              # assignment: the new object is the view
    assert p.available_mask == 0b1010 and str(p.available) == "1 3"
    assert str(view) == "2-6"                # the old object is no longer the policy's


def test_sleep_and_wake_update_the_masks():
    p = Manual()
    p.decide(0.0, [_begins(4, sleep=True)])
    assert p.nb_available == 4
    p.set_pstate(ProcSet(1), 2)              # switching off: no longer available
    assert str(p.available) == "0 2-3"
    p.decide(1.0, [ResourceStateChanged(1.0, resources=ProcSet(1), state="2")])
    assert str(p.available) == "0 2-3"
    p.decide(2.0, [ResourceStateChanged(2.0, resources=ProcSet(1), state="0")])
    assert str(p.available) == "0-3" and p.available_mask == 0b1111


def test_a_shared_host_stays_allocated_while_another_job_runs_on_it():
    # With compute sharing two jobs may hold host 0; when one ends the host is still busy.
    from schedulers.core.events import JobCompleted, JobSubmitted, SimulationBegins
    from schedulers.core.model import Host, Job
    from schedulers.core.policy import Policy

    p = Policy()
    hosts = [Host(id=i, name=f"h{i}", speeds=[1e9], cores=1) for i in range(2)]
    p.decide(0.0, [SimulationBegins(0.0, nb_resources=2, nb_compute_resources=2, nb_storage_resources=0,
                                    allow_compute_sharing=True, config={}, compute_resources=hosts)])
    a = Job.from_json("w0!a", {"res": 1, "subtime": 0, "profile": "p"})
    b = Job.from_json("w0!b", {"res": 1, "subtime": 0, "profile": "p"})
    p.decide(0.0, [JobSubmitted(0.0, job=a), JobSubmitted(0.0, job=b)])
    p.execute(a, [0])
    p.execute(b, [0])
    p.decide(5.0, [JobCompleted(5.0, job_id="w0!a", job_state="COMPLETED_SUCCESSFULLY", return_code=0,
                                alloc=a.allocation)])
    assert p.available_mask == 0b10
    p.decide(6.0, [JobCompleted(6.0, job_id="w0!b", job_state="COMPLETED_SUCCESSFULLY", return_code=0,
                                alloc=b.allocation)])
    assert p.available_mask == 0b11
