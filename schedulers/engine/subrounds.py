"""The sub-rounds of one instant of Batsim's actor model, and the actors' energy reads.

A component of :class:`schedulers.engine.simulator.Engine`, used where Batsim's messages are
played one by one (:mod:`.netserver`): :class:`Rounds` owns the sub-round running now, what the
actors will do in each later sub-round of the instant, what they posted in this one (the
``put`` and ``get`` simcalls, matched at its end by the mailbox of :mod:`.netserver`), the
hosts whose energy the instant's readers wait for, and the switches ending at the instant
(whose ``set_pstate`` a job end's energy row may see). It asks :class:`.hosts.Machines` which
hosts were updated at this instant, the :class:`.clock.Clock` for the time and
:class:`.switching.Switches` to apply switches early; the actor server gives it, at each
instant, the end of a sub-round (its mailbox) and whether the run has ended.

Behaviour reproduced (``EngineImpl::run``, SimGrid 3.32 ``src/kernel/EngineImpl.cpp``): at one
instant SimGrid runs every actor woken by an action that ended (sub-round 1) until its next
simcall, then handles their simcalls in order; the actors those answer run in the next
sub-round, and so on. Reading a host's energy that nothing updated yet at this instant is a
simcall (``HostEnergy::get_consumed_energy``, ``src/plugins/host_energy.cpp``): the host is
updated at the sub-round's end, so the readers of one instant advance together, sub-round by
sub-round (see :mod:`.netserver` for what was recorded on Batsim 4.2.1).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any, Callable, Sequence

from .clock import Clock
from .hosts import Machines
from .switching import Switches


class HostOrder:
    """The hosts an actor reads the energy of, in order: ``own`` (a job's hosts), then every
    host ``0 .. n-1``; ``i`` is how many it has read. It knows whether what is left still
    covers every host, or is the end ``k .. n-1`` of the sweep."""

    __slots__ = ("own", "n", "i")

    def __init__(self, own: Sequence[int], n: int) -> None:
        self.own, self.n, self.i = own, n, 0

    def all_left(self) -> bool:
        """Whether the hosts left to read include every host (the sweep has not begun)."""
        return self.i <= len(self.own)

    def read(self, upd: set[int], walked: dict[int, int], every: int | None, r: int) -> bool:
        """One sub-round ``r`` of an energy reader going through these hosts
        (:meth:`Rounds.read_on`): pass the hosts updated at this instant before
        ``r`` (in ``upd``, or marked in ``walked``, else ``every``, with a sub-round below
        ``r``); stop after the first that is not, marking it ``r`` if nobody marked it yet.
        Returns True when it stopped (it reads on next sub-round), False when every host is read."""
        own, i = self.own, self.i
        lo = len(own)
        end = lo + self.n
        get = walked.get
        while i < end:
            h = own[i] if i < lo else i - lo
            i += 1
            if h in upd:
                continue
            w = get(h, every)
            if w is not None and w < r:
                continue
            if w is None:
                walked[h] = r
            self.i = i
            return True
        self.i = i
        return False

    def swept(self) -> bool:
        """Whether its own hosts are all read (what is left is a part of the sweep)."""
        return self.i >= len(self.own)

    def sweep_from(self) -> int:
        """Once the sweep has begun (not :meth:`all_left`): the first host it has still to
        read; what is left is hosts ``sweep_from() .. n-1``."""
        return self.i - len(self.own)


class _Walk:
    """A reader of hosts' energy between two sub-rounds (:meth:`Rounds.read_on`)."""

    __slots__ = ("rounds", "hosts", "then", "extra")

    def __init__(self, rounds: "Rounds", hosts: HostOrder, then: Callable[[], Any], extra: int) -> None:
        self.rounds, self.hosts, self.then, self.extra = rounds, hosts, then, extra

    def __call__(self) -> None:
        self.rounds.read_on(self.hosts, self.then, self.extra)



class Rounds:
    """The sub-rounds of the current instant (see the module docstring).

    Args:
        machines: the hosts (which were updated at this instant, ``upd_now``).
        switches: the pstate switches (applied early for a job end's energy row).
        clock: the current time.

    Attributes:
        round: the sub-round running now (1: the instant's wake-ups).
        outbox: what actors posted in this sub-round (in the mailbox at its end).
        later: sub-round -> what actors do in it.
        walked: host -> the sub-round whose end updates its energy.
        walked_all: the sub-round of every host not in ``walked`` (None: not known).
        walks: energy reads started by the instant's wake-ups (:meth:`read_energy`).
        waking: the instant's wake-ups are being handled.
        instant_switches: with energy, the switches (host id -> target pstate) ending at this
            instant whose ``set_pstate`` a job end's energy row may see; None elsewhere.
        switches_applied: those of them already applied (:meth:`switches_before_row`).
    """

    def __init__(self, machines: Machines, switches: Switches, *, clock: Clock) -> None:
        self.machines = machines
        self.hosts = machines.hosts
        self.switches = switches
        self.clock = clock
        self.round = 1
        #: how many times the sub-rounds were played (:meth:`run`): with :attr:`round` and the
        #: clock, it orders the actors' steps of one instant (a later play: a later sub-round)
        self.plays = 0
        self.outbox: list[Any] = []
        self.later: dict[int, list[Any]] = {}
        self.walked: dict[int, int] = {}
        self.walked_all: int | None = None
        self.walks: list[Any] = []
        self.waking = False
        self.instant_switches: dict[int, int] | None = None
        self.switches_applied: set[int] | None = None

    def after(self, k: int, fn: Callable[[], Any]) -> None:
        """The actor running now does ``fn`` ``k`` sub-rounds later (``k`` simcalls first)."""
        if k <= 0:
            fn()
        else:
            self.later.setdefault(self.round + k, []).append(fn)

    def read_energy(self, hosts: HostOrder, then: Callable[[], Any], extra: int = 0) -> None:
        """The actor running now reads the energy of ``hosts`` one by one
        (``sg_host_get_consumed_energy``), then makes ``extra`` other simcalls, then does
        ``then``. Reading a host that nothing updated yet at this instant is a simcall
        (``HostEnergy::get_consumed_energy``, SimGrid 3.32 ``src/plugins/host_energy.cpp``): the
        actor stops there for the sub-round, and the update is made at the sub-round's end, so
        that every reader after it, this actor's next reads included, finds the host updated
        from the next sub-round on. The readers of one instant thus advance together, sub-round
        by sub-round: two jobs ending at one instant, each reading its own hosts and then every
        host, post their JOB_COMPLETED in the same sub-round, in the order they woke."""
        if self.waking:   # which hosts this instant's ends update is known once all are handled
            self.walks.append((hosts, then, extra, len(self.outbox),
                                len(self.later.get(self.round + 1, ()))))
            return
        self.read_on(hosts, then, extra)

    def read_on(self, hosts: HostOrder, then: Callable[[], Any], extra: int) -> None:
        """One sub-round of a reader (:meth:`read_energy`): read the hosts already updated,
        stop at the first that is not (a simcall) or finish."""
        r = self.round
        if hosts.read(self.machines.upd_now, self.walked, self.walked_all, r):
            self.later.setdefault(r + 1, []).append(_Walk(self, hosts, then, extra))
        else:
            self.after(extra, then)

    def _walk_sweeps(self, walks: list) -> None:
        """The sub-rounds of several readers that nothing else acts beside, all past their own
        hosts (each sweeping hosts ``k .. n-1``), up to the first sub-round in which one of them
        finishes, at once; that one is played by :meth:`_walk_round`.

        The same reads as :meth:`read_on` sub-round by sub-round: at the start of a sub-round
        every host is updated (in ``Machines.upd_now`` or marked at an earlier sub-round) or not yet
        touched at this instant (``free``); in the sub-round each reader passes the updated hosts
        and stops at the first host of ``free`` from its position (marked by it or by a reader
        before it in this sub-round), whatever the readers' order; those hosts are then marked.
        Readers at one position move together, one host of ``free`` a sub-round; the readers
        behind catch up, passing the hosts marked ahead of them."""
        r = self.round
        upd, walked = self.machines.upd_now, self.walked
        pos = [w.hosts.sweep_from() for w in walks]
        n = walks[0].hosts.n
        free = [h for h in range(min(pos), n) if h not in upd and h not in walked]
        while True:
            ks = [bisect_left(free, p) for p in pos]
            if len(free) in ks:   # a reader finishes in this sub-round
                break
            if len(set(ks)) == 1:   # all together: one host of free a sub-round, to the end
                k = ks[0]
                for j in range(k, len(free)):
                    walked[free[j]] = r + j - k
                r += len(free) - k
                pos = [free[-1] + 1] * len(pos)
                break
            stops = {free[k] for k in ks}
            for h in stops:
                walked[h] = r
            pos = [free[k] + 1 for k in ks]
            free = [h for h in free if h not in stops]
            r += 1
        for w, p in zip(walks, pos):
            w.hosts.i = len(w.hosts.own) + p
        self.round = r
        self._walk_round(walks)

    def _walk_round(self, walks: list) -> None:
        """Sub-round ``_round`` of several readers that nothing else acts beside
        (:meth:`run`), as :meth:`read_on` plays it for each in turn (same reads, marks
        and order), the readers that read on kept for the next sub-round as they are."""
        r = self.round
        upd, walked, every = self.machines.upd_now, self.walked, self.walked_all
        nxt = None
        for walk in walks:
            if walk.hosts.read(upd, walked, every, r):
                if nxt is None:
                    nxt = self.later.setdefault(r + 1, [])
                nxt.append(walk)
            else:
                self.after(walk.extra, walk.then)

    def _walk_alone(self, walk: "_Walk") -> None:
        """The sub-rounds of a reader that nothing else acts beside (:meth:`run`), at
        once: each host it reaches that nobody updated yet at this instant is one sub-round (it
        is updated at that sub-round's end), as :meth:`read_on` plays them one by one."""
        r = self.round
        walked = self.walked
        hosts = walk.hosts
        if self.walked_all is not None:   # every host is marked already: none left to wait for
            left = 0
        else:
            # (the hot path of every job end with -E) what is left is every host, or the hosts
            # k .. n-1 of the sweep, those before k being read already, so updated or marked;
            # each left is read at its own sub-round r, r + 1, ...: any reader after this one
            # comes at r + left or later and finds them all updated, so r marks them all as well
            k = 0 if hosts.all_left() else hosts.sweep_from()
            upd = self.machines.upd_now
            if k == 0:
                left = hosts.n - len(upd | walked.keys())
            else:
                left = (hosts.n - k - sum(1 for h in upd if h >= k)
                        - sum(1 for h in walked if h >= k and h not in upd))
            self.walked_all = r   # every host not marked yet (all at or after k): marked r
        self.round = r + left
        self.after(walk.extra, walk.then)

    def switches_before_row(self) -> None:
        """A job ends at an instant at which switching actors also end (their flop computed):
        SimGrid runs them all in sub-round 1, and each switching actor's ``set_pstate`` is a
        simcall, done once that sub-round is over. The job actor writes its energy row after
        reading every host (``add_job_end``): if one is not up to date, the read is a simcall and
        the row comes in a later sub-round, after the new pstates (its ``wattmin`` counts them);
        else it comes in sub-round 1, before them. Recorded on real Batsim 4.2.1
        (``tests/fixtures/batsim_switch_wattmin``: 570 W, not 690)."""
        now, sw = self.clock.now, self.instant_switches
        if not sw:
            return
        if self.machines.all_upd >= now:
            return   # every host already read at this instant: no simcall
        upd = self.machines.upd_now
        if all(h.last >= now or h.hid in upd or h.hid in sw for h in self.hosts):
            return   # every host up to date: the row is written in sub-round 1
        for hid, target in sw.items():
            self.switches.switch_reached(hid, target, state=False)
        self.switches_applied, self.instant_switches = set(sw), None

    def run(self, end_round: Callable[[], None], stopped: Callable[[], bool]) -> None:
        """Play the sub-rounds of the current instant, after its wake-ups (sub-round 1)."""
        self.waking = False
        if self.walks:
            # the wake-ups' reads, now that every host this instant's ends update is known; a
            # reader that needs no simcall posts in sub-round 1 where it ran, before the actors
            # woken after it (SimGrid runs an instant's actors in the order they woke: recorded on
            # Batsim 4.2.1, a job reaching its walltime posts JOB_COMPLETED before the submitter
            # woken in the same step posts its JOB_SUBMITTED)
            # likewise a reader's next sub-round comes before those of the actors woken after it
            # (SimGrid answers a sub-round's simcalls in the order the actors ran: recorded on
            # Batsim 4.2.1, wide seed 1274 of compare_with_batsim: a job reaching its walltime
            # posts its JOB_COMPLETED after one energy simcall, before the EXECUTE_JOB of the
            # request-reply actor that the server, woken after it, created; the server then
            # receives the slower JOB_COMPLETED first)
            # so each reader's posts (this sub-round) and next steps (the next one) are spliced in at
            # the positions the two lists had when it woke, after those of the readers before it
            walks, self.walks = self.walks, []
            r2 = self.round + 1
            out, nxt = self.outbox, self.later.setdefault(r2, [])
            d_out = d_nxt = 0   # entries the readers before this one spliced into out, into nxt
            for hosts, then, extra, at, at2 in walks:
                c_out, c_nxt = at + d_out, at2 + d_nxt
                t_out, t_nxt = out[c_out:], nxt[c_nxt:]
                del out[c_out:], nxt[c_nxt:]
                self.read_on(hosts, then, extra)
                d_out += len(out) - c_out
                d_nxt += len(nxt) - c_nxt
                out += t_out
                nxt += t_nxt
            if not nxt:
                del self.later[r2]
        if self.outbox:
            end_round()
        later = self.later
        while later and not stopped():
            self.round = r = min(later)
            fns = later.pop(r)
            if not later and all(type(fn) is _Walk for fn in fns):
                if len(fns) == 1:
                    self._walk_alone(fns[0])   # a lone reader: its sub-rounds at once
                elif self.walked_all is None and all(fn.hosts.swept() for fn in fns):
                    self._walk_sweeps(fns)     # readers alone, all past their own hosts: at once
                else:
                    self._walk_round(fns)      # readers alone: their reads without the queue's calls
            else:
                for fn in fns:
                    fn()
            end_round()
        if later:
            later.clear()
        self.round = 1
        self.plays += 1
        if self.walked:
            self.walked.clear()
        self.walked_all = None
        if self.machines.upd_now:
            self.machines.upd_now.clear()

