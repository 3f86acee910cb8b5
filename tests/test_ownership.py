"""Owner-share accounting (schedulers/core/ownership.py) on small grids worked out by hand.

Papers: 000 = HOSEP paper (eqs. 3-4, Defs. 1-4), 001 = monograph (eqs. 4.1-4.3, §3.3.2, §4.2).
Speeds are in Gflop/s (x 1e9 flops/s); PowerDiff, RP and PR_Aloc are dimensionless.

The grid of most tests (one core per host, one pstate)::

    id  host  speed  owner        alice provides 6, bob 3 + 1 = 4, carol 2     (total 12)
    0   A0    6      alice        dave owns nothing
    1   B0    3      bob
    2   B1    1      bob
    3   C0    2      carol
"""

from __future__ import annotations

import math

import pytest

from schedulers.core.model import Host, HostInfoUnknown, Job
from schedulers.core.ownership import Ownership, OwnershipError, host_power, relative

G = 1e9


def grid() -> list[Host]:
    spec = [("A0", 6, "alice"), ("B0", 3, "bob"), ("B1", 1, "bob"), ("C0", 2, "carol")]
    return [Host(id=i, name=n, speeds=[s * G], cores=1, properties={"owner": o})
            for i, (n, s, o) in enumerate(spec)]


def job(name: str, user: str | None) -> Job:
    extra = {} if user is None else {"user": user}
    return Job(id=f"w0!{name}", workload="w0", subtime=0.0, walltime=-1.0, res=1, profile="p", extra=extra)


def busy_grid() -> tuple[Ownership, dict[str, Job]]:
    """alice runs on B0 and B1 (bob's), bob runs on A0 (alice's), carol runs nothing, C0 idle."""
    own = Ownership(grid(), users=["dave"])
    jobs = {n: job(n, u) for n, u in [("a1", "alice"), ("a2", "alice"), ("b1", "bob"), ("c1", "carol")]}
    for j in jobs.values():
        own.submit(j)
    own.start(jobs["a1"], [1])
    own.start(jobs["a2"], [2])
    own.start(jobs["b1"], [0])
    return own, jobs


def test_shares_and_provided_power():
    own = Ownership(grid())
    assert own.owners == ("alice", "bob", "carol")
    assert own.share("bob") == (1, 2)
    assert own.share("dave") == ()
    assert own.provided("alice") == 6 * G
    assert own.provided("bob") == 4 * G          # 3 + 1
    assert own.provided("carol") == 2 * G
    assert own.provided("dave") == 0.0
    assert own.total_power == 12 * G
    assert own.share_fraction("alice") == pytest.approx(0.5)       # 6 / 12
    assert own.share_fraction("bob") == pytest.approx(1 / 3)       # 4 / 12
    assert own.owner_of(3) == "carol"


def test_host_power_is_fastest_pstate_times_cores():
    # 4 cores, pstates 2 Gf, 1 Gf and a sleep pstate: 4 x 2 Gf = 8 Gf
    h = Host(id=0, name="n0", speeds=[2 * G, 1 * G, 1e-9], cores=4)
    assert host_power(h) == 8 * G
    with pytest.raises(HostInfoUnknown):
        host_power(Host(id=1, name="n1"))


def test_power_diff_remaining_power_and_pr_aloc_by_hand():
    own, _ = busy_grid()
    # Allocated: alice B0 + B1 = 3 + 1 = 4; bob A0 = 6; carol 0
    assert own.allocated("alice") == 4 * G
    assert own.allocated("bob") == 6 * G
    assert own.allocated("carol") == 0.0
    # PowerDiff (000 eq. 3 / 001 eq. 4.1): (Alloc - Prov) / Prov
    assert own.power_diff("alice") == pytest.approx((4 - 6) / 6)    # -1/3
    assert own.power_diff("bob") == pytest.approx((6 - 4) / 4)      # +0.5
    assert own.power_diff("carol") == pytest.approx(-1.0)           # owner without jobs: (0 - 2) / 2
    # RP (000 eq. 4 / 001 eq. 4.2): (Alloc - Prov - Power_y) / Prov
    assert own.remaining_power("alice", 2) == pytest.approx((4 - 6 - 1) / 6)   # -0.5
    assert own.remaining_power("alice", 1) == pytest.approx((4 - 6 - 3) / 6)   # -5/6
    assert own.remaining_power("bob", 0) == pytest.approx((6 - 4 - 6) / 4)     # -1
    # omega (000 Def. 3): RP on the least powerful host running the user's jobs: alice's is B1
    assert own.omega("alice") == (pytest.approx(-0.5), 2)
    assert own.omega("carol") is None
    # PR_Aloc (001 eq. 4.3, denominator read as Porcao_w): (Alloc_w - Prov_w + Power_y) / Prov_w
    assert own.pr_aloc("carol", 3) == pytest.approx((0 - 2 + 2) / 2)          # 0
    assert own.pr_aloc("carol", 0) == pytest.approx((0 - 2 + 6) / 2)          # 2
    assert own.pr_aloc("alice", 3) == pytest.approx((4 - 6 + 2) / 6)          # 0
    # ... and as printed, divided by another user's share (Porcao_z, z = alice): 4 / 6
    assert own.pr_aloc("carol", 0, divide_by="alice") == pytest.approx((0 - 2 + 6) / 6)


def test_sorted_users_deficits_and_excesses():
    own, jobs = busy_grid()
    # PowerDiff: carol -1, alice -1/3, dave 0 (non-owner running nothing), bob +0.5
    assert own.by_power_diff() == ["carol", "alice", "dave", "bob"]
    assert own.deficits() == ["carol", "alice"]
    assert own.excesses() == ["bob"]
    # carol's task c1 waits, alice has no waiting task
    assert own.deficits(with_demand=True) == ["carol"]
    own.start(jobs["c1"], [3])                  # carol on C0: (2 - 2) / 2 = 0, no longer a deficit
    assert own.power_diff("carol") == 0.0
    assert own.deficits(with_demand=True) == []
    assert own.deficits() == ["alice"]


def test_osep_counts():
    own, jobs = busy_grid()
    # f_u = hosts owned - active tasks (001 §3.3.2): alice 1 - 2, bob 2 - 1, carol 1 - 0
    assert (own.osep_f("alice"), own.osep_f("bob"), own.osep_f("carol")) == (-1, 1, 1)
    assert own.active_tasks("alice") == 2
    # i_u = waiting tasks: only carol's c1
    assert (own.unmet_demand("alice"), own.unmet_demand("carol")) == (0, 1)
    assert own.waiting_jobs("carol") == ("w0!c1",)
    assert own.idle_hosts() == (3,)


def test_fairness_criterion():
    own, jobs = busy_grid()
    # carol (-1): the only user at or above its share with a host is bob, RP(bob, A0) = -1, not
    # > -1: taking A0 would leave bob as badly off as carol is now -> fair (001 §4.2, case 2)
    assert own.is_fair("carol")
    assert own.is_fair("bob")                   # PowerDiff >= 0 (case 1)
    # alice (-1/3): same single candidate, RP -1 <= -1/3 -> fair
    assert own.is_fair("alice")
    # dave (non-owner) takes C0: PowerDiff = +inf, RP(dave, C0) = 0 > -1 -> carol no longer fair
    d = job("d1", "dave")
    own.start(d, [3])
    assert not own.is_fair("carol")
    assert own.is_fair("alice") is False        # RP(dave, C0) = 0 > -1/3 too


def test_non_owner():
    own = Ownership(grid())
    d1, d2 = job("d1", "dave"), job("d2", "dave")
    assert "dave" not in own.users              # not known until one of its jobs is seen
    own.submit(d1)
    assert "dave" in own.users
    assert own.power_diff("dave") == 0.0        # owns nothing, uses nothing: neutral
    assert own.deficits() == ["alice", "bob", "carol"]   # all at -1, ties by name; never dave
    own.start(d1, [3])
    own.start(d2, [2])
    assert own.allocated("dave") == 3 * G       # C0 + B1 = 2 + 1
    assert own.power_diff("dave") == math.inf
    assert own.excesses() == ["dave"]
    # RP after losing B1: still runs C0 with no share -> +inf; after losing one of two: as below
    assert own.remaining_power("dave", 2) == math.inf
    own.end(d2)
    assert own.remaining_power("dave", 3) == 0.0   # its last host: left with nothing, owning nothing
    assert own.pr_aloc("dave", 0) == math.inf
    assert own.osep_f("dave") == -1             # owns 0 hosts, runs 1
    assert relative(0.0, 0.0) == 0.0 and relative(-1.0, 0.0) == 0.0 and relative(2.0, 4.0) == 0.5


def test_all_hosts_busy():
    own, jobs = busy_grid()
    own.start(jobs["c1"], [3])
    assert own.idle_hosts() == ()
    # every host is allocated: allocations add up to the grid's power (000 §3.3, L355-366)
    assert sum(own.allocated(u) for u in own.users) == own.total_power
    # alice -1/3 and bob +0.5 and carol 0: the deficit and excess sums weighted by shares cancel:
    # sum(PowerDiff_u x Provided_u) = sum(Alloc_u - Prov_u) = 12 - 12 = 0
    assert sum(own.power_diff(u) * own.provided(u) for u in own.owners) == pytest.approx(0.0, abs=1e-6)


def test_life_cycle_preempt_and_end():
    own = Ownership(grid())
    a = job("a1", "alice")
    own.submit(a)
    assert own.unmet_demand("alice") == 1
    a.allocation = None
    own.start(a, [0])
    assert own.unmet_demand("alice") == 0 and own.allocated("alice") == 6 * G
    own.preempt(a)                               # back to the waiting tasks, host released
    assert own.unmet_demand("alice") == 1 and own.allocated("alice") == 0.0
    assert own.idle_hosts() == (0, 1, 2, 3)
    with pytest.raises(OwnershipError, match="w0!a1.*not running"):
        own.end(a)
    own.start(a, [1])
    own.end(a)
    assert own.running_jobs("alice") == () and own.unmet_demand("alice") == 0
    b = job("b1", "bob")
    own.submit(b)
    own.withdraw(b)
    assert own.unmet_demand("bob") == 0


def test_compute_sharing_splits_a_host():
    own = Ownership(grid())
    own.start(job("b1", "bob"), [1])
    own.start(job("c1", "carol"), [1])
    # B0 (3 Gf) runs one job of each: 1.5 Gf each
    assert own.allocated("bob") == 1.5 * G
    assert own.allocated("carol") == 1.5 * G
    assert own.remaining_power("carol", 1) == pytest.approx((0 - 2) / 2)


def test_a_job_starting_or_ending_beside_another_changes_its_users_allocation():
    # Each quantity is read before and after every change: a value kept from before must not survive.
    own = Ownership(grid())
    b, c = job("b1", "bob"), job("c1", "carol")
    own.start(b, [1])
    assert own.allocated("bob") == 3 * G                               # B0 (3 Gf) alone
    assert own.power_diff("bob") == pytest.approx((3 - 4) / 4)
    assert own.remaining_power("bob", 1) == pytest.approx((0 - 4) / 4)
    own.start(c, [1])                                                  # carol's job on B0 too
    assert own.allocated("bob") == 1.5 * G and own.allocated("carol") == 1.5 * G
    assert own.power_diff("bob") == pytest.approx((1.5 - 4) / 4)
    own.end(c)                                                         # bob alone on B0 again
    assert own.allocated("bob") == 3 * G and own.allocated("carol") == 0.0
    assert own.power_diff("carol") == -1.0
    own.start(c, [2])                                                  # carol on B1 (1 Gf), bob untouched
    assert own.allocated("carol") == 1 * G and own.allocated("bob") == 3 * G
    assert own.remaining_power("carol", 2) == pytest.approx((0 - 2) / 2)
    with pytest.raises(OwnershipError, match="host id 1 runs no job of user 'carol'"):
        own.remaining_power("carol", 1)


def test_remaining_power_follows_a_co_runner():
    # bob runs on B0 (3 Gf) and B1 (1 Gf); RP after losing B0 is read before and after carol's
    # job comes to share B1 (bob then holds 0.5 Gf of it) and after it leaves.
    own = Ownership(grid())
    own.start(job("b1", "bob"), [1])
    own.start(job("b2", "bob"), [2])
    assert own.remaining_power("bob", 1) == (1 * G - 4 * G) / (4 * G)          # -0.75
    assert own.remaining_power("bob", (1,)) == -0.75
    c = job("c1", "carol")
    own.start(c, [2])
    assert own.remaining_power("bob", 1) == (0.5 * G - 4 * G) / (4 * G)        # -0.875
    assert own.remaining_power("bob", (1,)) == -0.875
    assert own.remaining_power("bob", (1, 2)) == -1.0                          # nothing left
    own.end(c)
    assert own.remaining_power("bob", 1) == -0.75


def test_errors_name_the_job_or_host():
    own = Ownership(grid())
    with pytest.raises(OwnershipError, match=r"job 'w0!x' has no workload field 'user'"):
        own.submit(job("x", None))
    with pytest.raises(OwnershipError, match="unknown host id 9"):
        own.start(job("y", "bob"), [9])
    own.start(job("z", "bob"), [1])
    with pytest.raises(OwnershipError, match="already running"):
        own.start(job("z", "bob"), [2])
    with pytest.raises(OwnershipError, match="host id 0 runs no job of user 'bob'"):
        own.remaining_power("bob", 0)
    with pytest.raises(OwnershipError, match="duplicate host id 0"):
        Ownership([Host(id=0, name="a", speeds=[1.0], cores=1), Host(id=0, name="b", speeds=[1.0], cores=1)])


def test_job_allocation_is_the_default_hosts():
    from procset import ProcSet
    own = Ownership(grid())
    j = job("a1", "alice")
    j.allocation = ProcSet((1, 2))
    own.start(j)
    assert own.running_hosts("alice") == (1, 2)
    assert own.allocated("alice") == 4 * G      # B0 + B1 = 3 + 1


def test_fed_by_a_policy_in_the_engine(tmp_path):
    """The users reach the policy (workload field ``user`` -> ``Job.user``) and the accounting
    follows a whole run: FCFS on HOSEP's grid, user1 late by 360 s."""
    from schedulers.engine import simulate
    from schedulers.fcfs import FCFS
    from schedulers.inputs.generators import generate

    class CountingFCFS(FCFS):
        def on_simulation_begins(self, platform):
            self.own = Ownership(platform.hosts)
            self.busiest = 0.0

        def on_job_submitted(self, job):
            super().on_job_submitted(job)
            self.own.submit(job)

        def execute(self, job, hosts, **extra):
            super().execute(job, hosts, **extra)
            self.own.start(job)
            self.busiest = max(self.busiest, sum(self.own.allocated(u) for u in self.own.users))

        def on_job_completed(self, job):
            self.own.end(job)

    scn = generate("hosep", {"demand": "large", "late": "user1"}, 3)
    (tmp_path / "p.xml").write_text(scn.platform_xml)
    policy = CountingFCFS()
    simulate(str(tmp_path / "p.xml"), scn.workloads, policy)
    own = policy.own
    assert own.users == ("user1", "user2", "user3", "user4")
    # 30 tasks on 12 hosts at t = 0: the grid is full, 867,040 MFlops in use
    assert policy.busiest == 867_040e6
    assert all(own.allocated(u) == 0.0 and own.unmet_demand(u) == 0 for u in own.users)
    assert own.idle_hosts() == tuple(range(12))
