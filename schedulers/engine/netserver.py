"""Batsim's server where internal messages take time: every message takes its route's time.

Part of :class:`schedulers.engine.simulator.Engine` (a mixin over :mod:`.server`), used when the
platform has network links, or when its master host sits in a ``routing="Full"`` zone (SimGrid's
loopback: 1e-10 s a message, e.g. ``hetero_4hosts_owners.xml`` and gridsched's Grid'5000
platforms) (:attr:`PlatformSpec.message_delays`, :mod:`.netroute`). On other compute-only
platforms (Vivaldi zones) Batsim's internal messages take no time and :mod:`.server` reproduces
their grouping; here they take the latency of their route (on Batsim's ``cluster_energy_128.xml``,
0.6 ms from the master host to itself and 1.6 ms from a compute host; 1e-10 s across a loopback),
and the order in which Batsim's actors and its server meet decides every time. Recorded on real
Batsim 4.2.1: the README's KTH-SP2 run (28,467 jobs, EASY, ``g5k_nantes_econome.xml``, ``-E``)
gives every job the start, end and hosts Batsim gives it; with the messages timed as instantaneous
(the step clock) 110 jobs started at another time and 151 on other hosts (ties between job ends
and submissions that these 1e-10 s decide). Time moves as
SimGrid's clock does, one step at a time, to the last bit of a double (:mod:`.steps`: each
message is a latency then one byte, each sleep a ``max_duration``), and each step is an instant
below. The model follows Batsim 4.2.1 and SimGrid 3.32 actor by actor:

* **Sub-rounds** (``EngineImpl::run``, SimGrid 3.32 ``src/kernel/EngineImpl.cpp``). At one
  instant SimGrid runs every actor woken by an action that ended (sub-round 1) until its next
  simcall, then handles their simcalls in order; the actors those answer run in the next
  sub-round, and so on. A message is in the server's mailbox only at the end of the sub-round
  of its ``put``; so what an actor does before its ``put`` decides the order of messages posted
  at one instant. The simcalls counted: creating an actor (the server, for a job, a waiter, a
  killer, the request-reply actor), ``set_pstate``, and reading a host's energy that nothing
  updated yet at this instant (with ``-E``, a job's end reads its hosts then every host for
  the energy row before its JOB_COMPLETED: ``execute_job_process``, ``src/jobs_execution.cpp``).
  Recorded on Batsim 4.2.1, ``test_walltime.json`` on ``cluster_energy_128.xml``: a job reaching
  its walltime at the instant the request-reply actor's EXECUTE_JOB arrives posts its
  JOB_COMPLETED after the actor's next decision.
* **The mailbox** (``send_message``, ``src/ipp.cpp``: a blocking 1-byte ``put`` to the mailbox
  ``server``). Every ``send_message``, ``receive_message`` and ``mailbox_empty`` first looks
  the mailbox up (``Mailbox::by_name``, a simcall in SimGrid 3.32): a ``put`` or ``get`` comes
  a sub-round after the actor decides it, the server's test of its mailbox a sub-round after
  it handled a message; the ``put`` and ``get`` of one sub-round are matched in the order the
  actors ran (recorded on Batsim 4.2.1, ``tests/fixtures/batsim_mailbox_lookup``: a job ending
  as a message arrives, after two energy reads, puts its JOB_COMPLETED before the reply's
  EXECUTE_JOB). The server receives one message at a time, oldest first; a message posted while
  the server waits is matched at once, otherwise it waits in the mailbox; its transfer takes its
  route's delay from the moment it is matched: the route's latency, then its byte, which shares
  the route's links with the jobs' communications and the other messages (an ``L07Action`` of
  SimGrid's ``ptask_L07`` model, ``NetworkL07Model::communicate``; :class:`.execution.MessageFlow`;
  worked by hand and recorded, ``tests/fixtures/batsim_message_sharing``). The server handles a message and looks at its
  mailbox before any message posted in the same sub-round is in it: the sender's next one, or
  one from a job that ended at that instant (recorded on Batsim 4.2.1,
  ``tests/fixtures/batsim_network/tiny_net.xml``: the submitter's last JOB_SUBMITTED reaches
  the scheduler alone, its goodbye comes in the next message; ``test_same_submit_time.json``
  on ``cluster512.xml``: a job ending at the instant a JOB_SUBMITTED arrives does not hold the
  submission back).
* **The server** (``server_process``, ``src/server.cpp``) handles the message, then, after
  its handler's simcalls, sends the events gathered so far to the scheduler if the scheduler is
  ready and the mailbox is empty, then receives again.
* **The request-reply actor** (``request_reply_scheduler_process``, ``JsonProtocolReader``) starts
  after the server's send, posts each decision at ``max(clock, timestamp)`` as one message, one
  after the other, then SCHED_READY at ``max(clock, now)``. A job starts when the server receives
  its EXECUTE_JOB (on its first host); a CALL_ME_LATER's waiter sleeps ``max(t - clock, 1e-5)``
  from its receipt (``waiter_process``), then posts WAITING_DONE from the master host.
* **Job submitters** (``static_job_submitter_process``, master host) post a hello, then, for the
  jobs whose ``subtime`` is not after the submitter's clock, one JOB_SUBMITTED; then sleep
  ``next subtime - clock of the last wake-up``, so each wake-up is late by the time the previous
  post took; woken, a submitter takes the job it slept for even when the clock stops 1e-16 s short
  of its ``subtime``; the jobs are SUBMITTED when the server receives them (``subtime`` in the
  outputs stays the workload's).
* **Event submitters** (``static_event_submitter_process``, master host, one per ``--events``
  file, created after the job submitters) post a hello, then the events due at each instant in one
  EVENT_OCCURRED message, sleeping between instants as the job submitters do, and a goodbye
  (:mod:`.extevents`); the server changes the machines' states and tells the scheduler when it
  receives them.
* **Jobs, switches, killers** end on their host at the model's time (``finish_time``, machine
  states, energy rows), then post JOB_COMPLETED from the job's first host, SWITCHED_ON/OFF from
  the machine, KILLING_DONE from the master host; the scheduler hears of them, and
  ``out_jobs.csv`` gets their rows, when the server receives them.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from typing import Any

from ..core.events import (
    CallMeLater, ExecuteJob, JobSubmitted, KillJobs, Notify, RequestedCall, SetResourceState, SimulationEnds,
)
from ..core.model import Job
from .execution import RUNNING, SUBMITTED, HeldTask, MessageFlow
from .extevents import GENERIC, MACHINE_AVAILABLE
from .instants import for_engine
from .ports import EngineError
from .queue import Kind

#: The server's ``get`` among the sub-round's simcalls (:meth:`NetworkServerMixin._end_round`).
_GET = object()

# message types (the IPMessageType of src/ipp.hpp that the engine models)
_HELLO, _SUBMITTED, _BYE, _COMPLETED, _SWITCHED, _WAITED, _KILLED, _DECISION, _READY, _EVENTS, _EVENTS_BYE = range(11)
_RECV, _JOB_END = Kind.RECV, Kind.JOB_END


class _Submitter:
    """A static job submitter's state: its workload, next job index, clock of its last wake-up."""

    __slots__ = ("w", "k", "clock")

    def __init__(self, w) -> None:
        self.w, self.k, self.clock = w, 0, 0.0


class _EventSubmitter:
    """An external event submitter's state (``static_event_submitter_process``): its event list
    (:class:`.extevents.EventList`) and their timestamps, next event index, clock of its last
    wake-up."""

    __slots__ = ("lst", "times", "k", "clock")

    def __init__(self, lst) -> None:
        self.lst, self.k, self.clock = lst, 0, 0.0
        self.times = [e.timestamp for e in lst.events]


def _due_end(times, k: int, clock: float, woke: bool) -> int:
    """The index after the items a submitter takes at its clock ``clock`` from index ``k``:
    woken from a sleep (``woke``), the item it slept for even if SimGrid's clock stops short of
    its time (1e-16 s early after a sleep of ``time - clock``: the next item of that time then
    waits for a second sleep and a second message), then every next one whose time is not after
    the clock (``static_job_submitter_process``, ``static_event_submitter_process``)."""
    n = len(times)
    if woke and k < n:
        k += 1
    while k < n and times[k] <= clock:
        k += 1
    return k


class _HostOrder:
    """The hosts an actor reads the energy of, in order: ``own`` (a job's hosts), then every
    host ``0 .. n-1``; ``i`` is how many it has read. It knows whether what is left still
    covers every host, or is the end ``k .. n-1`` of the sweep."""

    __slots__ = ("own", "n", "i")

    def __init__(self, own, n: int) -> None:
        self.own, self.n, self.i = own, n, 0

    def all_left(self) -> bool:
        """Whether the hosts left to read include every host (the sweep has not begun)."""
        return self.i <= len(self.own)

    def read(self, upd, walked: dict, every, r: int) -> bool:
        """One sub-round ``r`` of an energy reader going through these hosts
        (:meth:`NetworkServerMixin._read_on`): pass the hosts updated at this instant before
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
    """A reader of hosts' energy between two sub-rounds (:meth:`NetworkServerMixin._read_on`)."""

    __slots__ = ("server", "hosts", "then", "extra")

    def __init__(self, server, hosts, then, extra: int) -> None:
        self.server, self.hosts, self.then, self.extra = server, hosts, then, extra

    def __call__(self) -> None:
        self.server._read_on(self.hosts, self.then, self.extra)


class NetworkServerMixin:
    """Batsim's actors and server with message delays (see the module docstring)."""

    # switches ending at this instant (host id -> target pstate) and those already applied
    # (as :class:`.execution.ExecutionMixin` declares them)
    _instant_switches: dict | None = None
    _switches_applied: set | None = None

    # ------------------------------------------------------------------------------ mailbox
    def _net_init(self) -> None:
        d = self.platform.message_delays
        # a message's route: (latency s, rate B/s, the links its byte may share), played on
        # SimGrid's clock (.steps). A FATPIPE link is shared too: SimGrid's solver takes off it,
        # each round, the smallest amount among its flows, those that left included, so a job's
        # flow speeds up the messages there (.sharing._fatpipe_rounds)
        def route(r, links):
            shared = tuple((ln, 1.0) for ln in links)
            return (*r, shared)
        self._d_master = route(d.master_route, d.master_links)
        self._d_host = [route(d.host_routes[h.spec.name], d.host_links.get(h.spec.name, ())) for h in self.hosts]
        self._flows: dict[int, MessageFlow] = {}   # id(message) -> its byte's flow, while in the system
        self._mailbox: deque = deque()   # posted, not yet matched
        self._waiting = False            # the server is blocked in receive with nothing matched
        self._in_flight = 0              # posted and not yet handled by the server
        # sub-rounds of the current instant (see "Sub-rounds" in the module docstring)
        self._round = 1                  # the sub-round running now
        self._outbox: list = []          # posted in this sub-round: in the mailbox at its end
        self._later: dict[int, list] = {}   # sub-round -> what actors do in it
        self._walked: dict[int, int] = {}   # host -> sub-round whose end updates its energy
        self._walked_all: int | None = None   # the sub-round of every host not in _walked
        self._walks: list = []           # energy reads started by the instant's wake-ups
        self._waking = False             # the instant's wake-ups are being handled

    def _post(self, mtype: int, payload: Any, delay: float, then=None, sender: int = -1) -> None:
        """An actor sends a message to the server (``send_message``, ``src/ipp.cpp``): it looks
        the mailbox up (``Mailbox::by_name``, a simcall), then its ``put`` reaches the mailbox
        at the end of the next sub-round. ``then``: what the sender does once the transfer is
        over; ``sender``: the compute host it is sent from (-1: the master host)."""
        self._in_flight += 1
        msg = (mtype, payload, delay, then, sender)
        self._after(1, lambda: self._outbox.append(msg))

    def _end_round(self) -> None:
        """End of a sub-round: SimGrid handles the simcalls issued in it, in the order the
        actors ran: each ``put`` is matched by a server blocked in receive, else waits in the
        mailbox; the server's ``get`` (:data:`_GET`) takes the oldest message there, or blocks."""
        out = self._outbox
        if not out:
            return
        self._outbox = []
        for msg in out:
            if msg is _GET:
                if self._mailbox:
                    self._transfer(self._mailbox.popleft())
                else:
                    self._waiting = True
            elif self._waiting:
                self._waiting = False
                self._transfer(msg)
            else:
                self._mailbox.append(msg)

    def _receive(self) -> None:
        """The server calls ``receive_message``: ``Mailbox::by_name`` (a simcall), then its
        ``get`` in the next sub-round, in order with the ``put`` of that sub-round."""
        self._after(1, lambda: self._outbox.append(_GET))

    def _transfer(self, msg: tuple) -> None:
        """A message is matched: its transfer starts (a latency, then its byte)."""
        lat, rate, links = msg[2]
        a = self._queue.message(lat, rate, _RECV, msg, links)
        if links and a is not None and not lat > 0:
            self._flow_starts(a)

    def _flow_starts(self, action) -> None:
        """A message's byte starts crossing its links (its latency is paid): its flow joins the
        sharing system, and, where jobs' communications or other messages use those links, every
        rate there is solved again (SimGrid's next solve): the jobs' tasks slow down while the
        byte crosses, and a host's energy read before the byte is through charges its interval
        at the lowered load (``HostEnergy::update``).

        A byte alone on its links (no job's flow, no other message there) gets its route's rate
        whatever the solver (one variable of weight 1): it stays out of the system, *quiet*,
        its creation number kept, until a job's flow or another message comes onto one of its
        links (:meth:`_wake_quiet`); on a ``Full`` zone's loopback that is nearly every message."""
        self._ptasks += 1
        users = self._link_users
        links = action.links
        if self._quiet:
            self._wake_quiet(links)
        if not any(ln in users for ln, _ in links):
            self._quiet[id(action.payload)] = (action, self._ptasks)
            return
        flow = MessageFlow(action, self._ptasks, action.payload[2][0])
        self._link(flow)
        self._flows[id(action.payload)] = flow
        self._reshare((), links=flow.links)

    def _wake_quiet(self, links) -> None:
        """The quiet message bytes on ``links`` (``[(link, weight)]``) join the sharing system,
        each with its creation number (the caller solves the system again)."""
        on = {ln for ln, _ in links}
        for key, (action, number) in list(self._quiet.items()):
            if any(ln in on for ln, _ in action.links):
                del self._quiet[key]
                flow = MessageFlow(action, number, action.payload[2][0])
                self._link(flow)
                self._flows[key] = flow

    def _flow_ends(self, flow: MessageFlow) -> None:
        """A message's byte is through: its flow leaves the system; the rates it lowered are
        solved again."""
        links = flow.links
        self._unlink(flow)
        if any(ln in self._link_users for ln, _ in links):
            self._reshare((), links=links)

    # --------------------------------------------------------------------------- sub-rounds
    def _after(self, k: int, fn) -> None:
        """The actor running now does ``fn`` ``k`` sub-rounds later (``k`` simcalls first)."""
        if k <= 0:
            fn()
        else:
            self._later.setdefault(self._round + k, []).append(fn)

    def _read_energy(self, hosts: _HostOrder, then, extra: int = 0) -> None:
        """The actor running now reads the energy of ``hosts`` one by one
        (``sg_host_get_consumed_energy``), then makes ``extra`` other simcalls, then does
        ``then``. Reading a host that nothing updated yet at this instant is a simcall
        (``HostEnergy::get_consumed_energy``, SimGrid 3.32 ``src/plugins/host_energy.cpp``): the
        actor stops there for the sub-round, and the update is made at the sub-round's end, so
        that every reader after it, this actor's next reads included, finds the host updated
        from the next sub-round on. The readers of one instant thus advance together, sub-round
        by sub-round: two jobs ending at one instant, each reading its own hosts and then every
        host, post their JOB_COMPLETED in the same sub-round, in the order they woke."""
        if self._waking:   # which hosts this instant's ends update is known once all are handled
            self._walks.append((hosts, then, extra, len(self._outbox),
                                len(self._later.get(self._round + 1, ()))))
            return
        self._read_on(hosts, then, extra)

    def _read_on(self, hosts, then, extra: int) -> None:
        """One sub-round of a reader (:meth:`_read_energy`): read the hosts already updated,
        stop at the first that is not (a simcall) or finish."""
        r = self._round
        if hosts.read(self.machines.upd_now, self._walked, self._walked_all, r):
            self._later.setdefault(r + 1, []).append(_Walk(self, hosts, then, extra))
        else:
            self._after(extra, then)

    def _walk_sweeps(self, walks: list) -> None:
        """The sub-rounds of several readers that nothing else acts beside, all past their own
        hosts (each sweeping hosts ``k .. n-1``), up to the first sub-round in which one of them
        finishes, at once; that one is played by :meth:`_walk_round`.

        The same reads as :meth:`_read_on` sub-round by sub-round: at the start of a sub-round
        every host is updated (in ``Machines.upd_now`` or marked at an earlier sub-round) or not yet
        touched at this instant (``free``); in the sub-round each reader passes the updated hosts
        and stops at the first host of ``free`` from its position (marked by it or by a reader
        before it in this sub-round), whatever the readers' order; those hosts are then marked.
        Readers at one position move together, one host of ``free`` a sub-round; the readers
        behind catch up, passing the hosts marked ahead of them."""
        r = self._round
        upd, walked = self.machines.upd_now, self._walked
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
        self._round = r
        self._walk_round(walks)

    def _walk_round(self, walks: list) -> None:
        """Sub-round ``_round`` of several readers that nothing else acts beside
        (:meth:`_run_rounds`), as :meth:`_read_on` plays it for each in turn (same reads, marks
        and order), the readers that read on kept for the next sub-round as they are."""
        r = self._round
        upd, walked, every = self.machines.upd_now, self._walked, self._walked_all
        nxt = None
        for walk in walks:
            if walk.hosts.read(upd, walked, every, r):
                if nxt is None:
                    nxt = self._later.setdefault(r + 1, [])
                nxt.append(walk)
            else:
                self._after(walk.extra, walk.then)

    def _walk_alone(self, walk: "_Walk") -> None:
        """The sub-rounds of a reader that nothing else acts beside (:meth:`_run_rounds`), at
        once: each host it reaches that nobody updated yet at this instant is one sub-round (it
        is updated at that sub-round's end), as :meth:`_read_on` plays them one by one."""
        r = self._round
        walked = self._walked
        hosts = walk.hosts
        if self._walked_all is not None:   # every host is marked already: none left to wait for
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
            self._walked_all = r   # every host not marked yet (all at or after k): marked r
        self._round = r + left
        self._after(walk.extra, walk.then)

    def _switches_before_row(self, job) -> None:
        """A job ends at an instant at which switching actors also end (their flop computed):
        SimGrid runs them all in sub-round 1, and each switching actor's ``set_pstate`` is a
        simcall, done once that sub-round is over. The job actor writes its energy row after
        reading every host (``add_job_end``): if one is not up to date, the read is a simcall and
        the row comes in a later sub-round, after the new pstates (its ``wattmin`` counts them);
        else it comes in sub-round 1, before them. Recorded on real Batsim 4.2.1
        (``tests/fixtures/batsim_switch_wattmin``: 570 W, not 690)."""
        now, sw = self.clock.now, self._instant_switches
        if self.machines.all_upd >= now:
            return   # every host already read at this instant: no simcall
        upd = self.machines.upd_now
        if all(h.last >= now or h.hid in upd or h.hid in sw for h in self.hosts):
            return   # every host up to date: the row is written in sub-round 1
        for hid, target in sw.items():
            self.switches.switch_reached(hid, target, state=False)
        self._switches_applied, self._instant_switches = set(sw), None

    def _run_rounds(self) -> None:
        """Play the sub-rounds of the current instant, after its wake-ups (sub-round 1)."""
        self._waking = False
        if self._walks:
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
            walks, self._walks = self._walks, []
            r2 = self._round + 1
            out, nxt = self._outbox, self._later.setdefault(r2, [])
            d_out = d_nxt = 0   # entries the readers before this one spliced into out, into nxt
            for hosts, then, extra, at, at2 in walks:
                c_out, c_nxt = at + d_out, at2 + d_nxt
                t_out, t_nxt = out[c_out:], nxt[c_nxt:]
                del out[c_out:], nxt[c_nxt:]
                self._read_on(hosts, then, extra)
                d_out += len(out) - c_out
                d_nxt += len(nxt) - c_nxt
                out += t_out
                nxt += t_nxt
            if not nxt:
                del self._later[r2]
        if self._outbox:
            self._end_round()
        later = self._later
        while later and not self._ended:
            self._round = r = min(later)
            fns = later.pop(r)
            if not later and all(type(fn) is _Walk for fn in fns):
                if len(fns) == 1:
                    self._walk_alone(fns[0])   # a lone reader: its sub-rounds at once
                elif self._walked_all is None and all(fn.hosts.swept() for fn in fns):
                    self._walk_sweeps(fns)     # readers alone, all past their own hosts: at once
                else:
                    self._walk_round(fns)      # readers alone: their reads without the queue's calls
            else:
                for fn in fns:
                    fn()
            self._end_round()
        if later:
            later.clear()
        self._round = 1
        if self._walked:
            self._walked.clear()
        self._walked_all = None
        if self.machines.upd_now:
            self.machines.upd_now.clear()

    def _on_received(self, msg: tuple, port) -> None:
        mtype, payload, _, then, sender = msg
        flow = self._flows.pop(id(msg), None) if self._flows else None
        if self._quiet:
            self._quiet.pop(id(msg), None)
        if sender >= 0:
            # the message is a ptask-model action on the sender's and the master's hosts: its
            # end updates their energy (host_energy.cpp, on_action_state_change), at the loads
            # of the last solve (its byte still in it)
            self.machines.updated((sender,))
        self._server_handle(mtype, payload, port)
        if then is not None:
            then()
        if flow is not None:
            self._flow_ends(flow)

    # ------------------------------------------------------------------------------- server
    def _server_handle(self, mtype: int, payload: Any, port) -> None:
        """``server_process``: handle one message; after the handler's simcalls, maybe talk to
        the scheduler, then receive again."""
        self._in_flight -= 1
        simcalls, reads = 0, None
        if mtype == _DECISION:
            self._apply(payload)
            simcalls, reads = self._decision_simcalls(payload)
        elif mtype == _READY:
            self._ready = True
            if self._closing:   # the ACK of SIMULATION_ENDS: the run is over
                self._ended = True
                self.clock.end = self.clock.now
                return
        elif mtype == _SUBMITTED:
            for j in payload:
                j.state = SUBMITTED
                w = self.workloads_by_name[j.workload]
                prof = w.profiles[j.profile] if self.forward_profiles else None
                self._buffer.append(JobSubmitted(self.clock.now, job=Job.from_json(j.id, j.raw, prof)))
        elif mtype == _COMPLETED:
            self._job_completed(payload)
        elif mtype == _SWITCHED:
            self.switches.switching -= 1
            if self.switches.mark_switch_done(*payload, machine_row=True) and self.energy:
                reads = _HostOrder((), len(self.hosts))   # the group's energy row reads every host
        elif mtype == _WAITED:
            self._waiters -= 1
            self._buffer.append(RequestedCall(self.clock.now))
        elif mtype == _KILLED:
            self._killers -= 1
            self._killing_done(*payload)
        elif mtype == _BYE:
            self._submitters_left -= 1
            if self._submitters_left == 0:
                self._buffer.append(Notify(self.clock.now, type="no_more_static_job_to_submit"))
        elif mtype == _EVENTS:
            self._events_occurred(payload)
        elif mtype == _EVENTS_BYE:
            self._event_submitters_left -= 1
            if self._event_submitters_left == 0:
                self._buffer.append(Notify(self.clock.now, type="no_more_external_event_to_occur"))
        if reads is not None:
            self._read_energy(reads, lambda: self._server_check(port), simcalls)
        elif simcalls:
            self._after(simcalls, lambda: self._server_check(port))
        else:
            self._server_check(port)

    def _decision_simcalls(self, d) -> tuple[int, Any]:
        """The simcalls Batsim's server makes handling decision ``d`` (``src/server.cpp``):
        an actor created for EXECUTE_JOB (the job), CALL_ME_LATER (its waiter) and KILL_JOB
        (the killer); for SET_RESOURCE_STATE the energy row reads every host, then one
        ``set_pstate`` or switching actor per host. Returns (simcalls, hosts read first)."""
        if isinstance(d, (ExecuteJob, CallMeLater, KillJobs)):
            return 1, None
        if isinstance(d, SetResourceState):
            return len(d.resources), _HostOrder((), len(self.hosts))
        return 0, None

    def _killer(self, ids: list[str], really: list) -> None:
        """``killer_process`` (``src/jobs_execution.cpp``), created by the server handling a
        KILL_JOB (a simcall): it runs in the next sub-round of this instant, kills each running
        job of ``really`` (``Actor::kill`` or ``Exec::cancel``: one simcall each) and posts its
        KILLING_DONE: before a message posted in a later step, such as the request-reply actor's
        SCHED_READY once the server has received it (recorded on real Batsim 4.2.1,
        ``tests/fixtures/batsim_kill``: a kill at the end of a reply's delay reports in the same
        message as the job ends of that instant)."""
        def kill() -> None:
            progress = self._kill_running(really)
            self._after(len(really), lambda: self._post(_KILLED, (ids, progress), self._d_master))

        self._after(1, kill)

    def _server_check(self, port) -> None:
        """Back in ``server_process``'s loop: if the scheduler is ready, look at the mailbox
        (``mailbox_empty``: ``Mailbox::by_name``, a simcall, then the test a sub-round later);
        else receive."""
        if self._ready and not self._closing:
            self._after(1, lambda: self._server_test(port))
        else:
            self._receive()

    def _server_test(self, port) -> None:
        """The mailbox empty (messages posted in this sub-round are not in it yet), send the
        scheduler the events gathered so far, or end the simulation; then receive."""
        if not self._mailbox:
            if self._buffer:
                self._send(port)
                return
            if self._finished() and self._in_flight == 0 and not self.jobs:
                # (not self.jobs: every job's JOB_COMPLETED was received, not only its end in the
                # model; with messages of no duration a job actor may still be reading energy)
                self._buffer.append(SimulationEnds(self.clock.now))
                ready_at, _ = self._reply_parts(self._exchange(port))
                # the server leaves its loop when the request-reply actor's SCHED_READY arrives
                # (server_process): that message's time is SimGrid's final clock
                self._closing = True
                self._ready = False
                self._after(1, lambda: self._reqrep(deque(), ready_at))
                self._after(1, self._receive)   # (after the Actor::create simcall)
                return
        self._receive()

    def _send(self, port) -> None:
        """``generate_and_send_message``: the request-reply actor talks to the scheduler and
        starts posting its decisions later in this instant."""
        ready_at, decisions = self._reply_parts(self._exchange(port))
        self._ready = False
        # the server's Actor::create is a simcall: the request-reply actor runs a sub-round later,
        # and so does the server (it receives then)
        self._after(1, lambda: self._reqrep(deque(decisions), ready_at))
        self._after(1, self._receive)

    def _reqrep(self, decisions: deque, ready_at: float, woke: bool = False) -> None:
        """The request-reply actor posts its next decision (or SCHED_READY) at its time
        (``JsonProtocolReader::send_message_at_time``: ``sleep_for(when - clock)`` if ``when`` is
        later, then the message). ``woke``: that sleep is over; the message goes even if
        SimGrid's clock stopped short of ``when`` (a sleep ends in the first step that leaves it
        less than ``precision/timing``: at 2e6 s, where a double's spacing is 2.3e-10 s, a
        timestamp of the next printed microsecond is reached by a message step that does not move
        the clock; recorded on real Batsim 4.2.1, ``tests/fixtures/batsim_full_loopback``,
        ``late.json``: a job starts before its ``subtime``)."""
        if decisions:
            ts = decisions[0].timestamp
            if ts is None:   # dated by the reply's now
                ts = ready_at
            if not woke and ts > self.clock.now:
                self._queue.sleep(ts - self.clock.now, Kind.DECISION, (decisions, ready_at, True))
                return
            self._post(_DECISION, decisions.popleft(), self._d_master, lambda: self._reqrep(decisions, ready_at))
        elif not woke and ready_at > self.clock.now:
            self._queue.sleep(ready_at - self.clock.now, Kind.DECISION, (decisions, ready_at, True))
        else:
            self._post(_READY, None, self._d_master)

    # ------------------------------------------------------------------------------- actors
    def _submit_step(self, s: _Submitter, woke: bool = False) -> None:
        """``static_job_submitter_process`` from its clock ``s.clock``: post the jobs due
        (:func:`_due_end`), sleep (:meth:`_submitter_next`). Before its first job, with energy, it
        reads every host's energy (``total_consumed_energy``)."""
        table, subtimes = s.w.jobs, s.w.jobs.subtimes
        k0 = s.k
        s.k = _due_end(subtimes, k0, s.clock, woke)
        first_read = s.k > k0 and self.energy and self.record.first_submission[0] < 0
        if first_read:
            self.record.first_submission = self.machines.total_exact()
        batch = []
        for k in range(k0, s.k):
            job = table.job(k)  # the engine's from now on (state NOT_SUBMITTED until received)
            self.jobs[job.id] = job
            batch.append(job)
        step = self._submitter_next(s, batch, _SUBMITTED, _BYE, s.w, subtimes, Kind.SUBMIT)
        if first_read:
            self._read_energy(_HostOrder((), len(self.hosts)), step)
        else:
            step()

    def _event_step(self, s: _EventSubmitter, woke: bool = False) -> None:
        """``static_event_submitter_process`` (``src/event_submitter.cpp``, the job submitter's
        twin) from its clock ``s.clock``: post the events due in one EVENT_OCCURRED message, then
        sleep or say goodbye."""
        k0 = s.k
        s.k = _due_end(s.times, k0, s.clock, woke)
        self._submitter_next(s, s.lst.events[k0:s.k], _EVENTS, _EVENTS_BYE, s, s.times, Kind.EVENT)()

    def _submitter_next(self, s, batch: list, msg: int, bye: int, bye_payload: Any, times, wake: Kind):
        """What a submitter (job or event) does once it has taken ``batch``: post it as one
        message ``msg`` (nothing when empty), then sleep ``times[s.k] - clock of its last
        wake-up`` (``sleep_for``, woken by a ``wake`` entry), or post its goodbye ``bye`` after the
        last item. Returns that as a callable (the job submitter may read energy first)."""
        if s.k == len(times):
            then = lambda: self._post(bye, bye_payload, self._d_master)  # noqa: E731
        else:
            nxt = times[s.k]
            then = lambda: self._queue.sleep(nxt - s.clock, wake, s)  # noqa: E731
        return (lambda: self._post(msg, batch, self._d_master, then)) if batch else then

    def _events_occurred(self, events: list) -> None:
        """``server_on_event_occurred``: each event in turn; a machine event changes the machines'
        state and is told to the scheduler (NOTIFY ``event_machine_(un)available``), a generic
        event is forwarded as it is (NOTIFY whose data is the event's object); a machine event
        without machines does nothing."""
        for ev in events:
            if ev.kind == GENERIC:
                self._buffer.append(Notify(self.clock.now, type=ev.type,
                                           data={k: v for k, v in ev.data.items() if k != "type"}))
            elif ev.resources:
                available = ev.kind == MACHINE_AVAILABLE
                try:
                    self.machines.availability(ev.resources, available)
                except EngineError as exc:   # the events file's fault: name it and the line
                    raise EngineError(f"{ev.source}: {exc}" if ev.source else str(exc)) from None
                if self.record.paje is not None:
                    self.record.paje.availability(self.clock.now, ev.resources, available)
                self._buffer.append(Notify(self.clock.now, type="event_machine_available" if available
                                           else "event_machine_unavailable", data={"resources": str(ev.resources)}))

    def _net_event(self, kind: int, payload: Any, port) -> None:
        if kind == _RECV:
            self._on_received(payload, port)
        elif kind == Kind.MSG_ACTIVE:
            self._flow_starts(payload)
        elif kind == Kind.DECISION:
            self._reqrep(*payload)
        elif kind == _JOB_END:
            end = self._job_end_of(payload)
            if end is None:
                return
            job, version, walltime = end
            if isinstance(job, HeldTask):
                self._held_ended(job, version)
                return
            # at its walltime the job actor stops waiting for its task but holds it until its
            # JOB_COMPLETED has been received ("Held tasks" in .execution)
            live = walltime and version == job.version and job.state == RUNNING
            held = self._hold_task(job) if live else None
            if not self._stage_ended(job, version, walltime):
                return
            first = min(job.hosts)

            def completed() -> None:
                self._post(_COMPLETED, job, self._d_host[first], lambda: self._release_task(held), sender=first)

            if self.energy:
                # execute_job_process: the job's energy (its hosts), then the energy row (all hosts)
                self._read_energy(_HostOrder(sorted(job.hosts), len(self.hosts)), completed)
            else:
                completed()
        elif kind == Kind.SUBMIT:
            payload.clock = self.clock.now
            self._submit_step(payload, woke=True)
        elif kind == Kind.SWITCH:
            hid, target = payload
            if not (self._switches_applied and hid in self._switches_applied):
                self.switches.switch_reached(hid, target, state=False)
            # switch_on/off_machine_process: set_pstate (a simcall), then the machine state and
            # the message: a job ending at this instant writes its machine-state row first
            # (recorded on Batsim 4.2.1: pybatsim_fcfsSchedSleep_intfix_6pstates, t = 43)

            def switched() -> None:
                self.switches.switch_state(hid, target)
                self._post(_SWITCHED, (hid, target), self._d_host[hid], sender=hid)

            self._after(1, switched)
        elif kind == Kind.EVENT:
            payload.clock = self.clock.now
            self._event_step(payload, woke=True)
        elif kind == Kind.WAITER:
            self._post(_WAITED, None, self._d_master)
        elif kind == Kind.LATENCY:  # a model event, no message to the server
            self._latency_paid(*payload)
        else:
            raise AssertionError(kind)

    # ---------------------------------------------------------------------------------- run
    def _run_network(self, port) -> None:
        """The simulation loop with message delays, from t = 0 to the end."""
        self._net_init()
        # t = 0: the submitters (created first) say hello; the server sends SIMULATION_BEGINS,
        # its request-reply actor will post the reply; the server then receives.
        for w in self.workloads:
            self._submitters_left += 1
            s = _Submitter(w)
            self._post(_HELLO, s.w, self._d_master, lambda s=s: self._start_submitter(s))
        # then the event submitters (created after them, batsim.cpp), one per events file
        for lst in self.events:
            self._event_submitters_left += 1
            es = _EventSubmitter(lst)
            self._post(_HELLO, lst, self._d_master, lambda es=es: self._start_event_submitter(es))
        self._buffer.append(self._simulation_begins())
        self._send(port)   # (then the server receives)
        self._run_rounds()
        nb_jobs = self.nb_jobs
        lone = getattr(self._queue, "pop_lone", None)
        quiet = for_engine(self)   # quiet instants played in one call (.instants), or None
        while not self._ended:
            self._waking = True
            z = lone() if lone is not None else None
            if z is not None:   # one message alone in a step of 0 s: _next_instant's work, inlined
                if self.machines.lazy_hosts:
                    self.machines.settle_lazy()
                self.clock.mark_live()
                self._net_event(z[1], z[2], port)
            else:
                entries = self._next_instant()
                if quiet is not None and len(entries) == 1 and quiet.play(entries[0], port):
                    entries = []   # (a quiet instant, played: .instants)
                if self.energy and len(entries) > 1:
                    self._instant_switches = {p[0]: p[1] for k, p in entries if k == Kind.SWITCH} or None
                for kind, payload in entries:
                    self._net_event(kind, payload, port)
                    if self._ended:
                        break
                self._instant_switches = self._switches_applied = None
            self._run_rounds()
            if self.progress is not None:
                self.progress(self.clock.now, self._finished_jobs, nb_jobs)

    def _start_submitter(self, s: _Submitter) -> None:
        s.clock = self.clock.now
        self._submit_step(s)

    def _start_event_submitter(self, s: _EventSubmitter) -> None:
        s.clock = self.clock.now
        self._event_step(s)


def network_refusal(platform) -> EngineError:
    """The error for a networked platform whose message timing the engine cannot compute."""
    return EngineError(f"{platform.network_error}; the embedded engine cannot time Batsim's messages on this "
                       "network: use real Batsim (gridsched run --engine batsim)")
