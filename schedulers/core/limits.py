"""Bounds on the numbers a simulation reads, shared by the engine and the policies.

A policy imports them from here, never from the engine (:mod:`schedulers.engine` may be absent
when a policy runs against real Batsim).
"""

from __future__ import annotations

__all__ = ["MAX_TIME", "MAX_TIME_POWER", "MAX_NB_RES", "NO_DOUBLE"]

#: ``MAX_TIME`` is ``2 ** MAX_TIME_POWER`` s (the messages write the bound as ``2**33``).
MAX_TIME_POWER = 33

#: Largest time (s) the project accepts: 2**33 s, about 272 years. It bounds every time of a
#: workload (``subtime``, ``walltime``, a ``delay`` profile's ``delay``:
#: :mod:`schedulers.engine.workload`), an external event's ``timestamp``
#: (:mod:`schedulers.engine.extevents`) and the policy options added to such times
#: (``conservative``'s ``rjms_delay``, ``buc``'s ``kp``). Why: Batsim and the engine keep times
#: in doubles; below 2**33 s a double still resolves the microsecond that Batsim's outputs
#: print (its spacing is at most 2**-20 s; beyond it, 2**-19 s and more), and the sums made of
#: such times (start + walltime + delay, sums over jobs) stay finite.
MAX_TIME = float(2 ** MAX_TIME_POWER)

#: Largest ``nb_res`` of a workload: 2**31 - 1, the largest JSON integer Batsim 4.2.1 reads as
#: one (``src/workload.cpp`` aborts unless ``nb_res`` is an ``int``, RapidJSON's IsInt); the
#: hosts a conversion writes (``gridsched convert --nb-hosts``, a trace header's ``MaxProcs``)
#: are bounded by it.
MAX_NB_RES = 2**31 - 1

#: The least integer magnitude no double holds: 2**1024 (the largest double is 2**1024 - 2**971).
#: JSON and TOML integers have no bound and Python's ints none either; RapidJSON, Batsim's
#: parser, refuses an integer a double cannot hold ("Number too big to be stored in double"), and
#: ``math.isfinite`` or ``float`` raise OverflowError on one. So a number read is kept only when
#: ``-NO_DOUBLE < value < NO_DOUBLE``.
NO_DOUBLE = 2**1024
