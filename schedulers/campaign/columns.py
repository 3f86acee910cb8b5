"""The columns of a campaign's runs table (``runs.csv``, :func:`.collect.runs_table`) that are
not its axes, named once for the table and for the campaign file's check of axis names
(:data:`.spec.RESULT_COLUMNS`: an axis may not take one of them).

In order, a runs table holds :data:`FIRST_COLUMNS`, the axes (params), :data:`RUN_COLUMNS`, the
run's summary metrics (the fields of :class:`schedulers.core.metrics.RunSummary`), ``policy.<name>``
for each policy metric, then :data:`LAST_COLUMNS`.
"""

from __future__ import annotations

__all__ = ["FIRST_COLUMNS", "LAST_COLUMNS", "RUN_COLUMNS", "SIMULATOR"]

#: Before the axes: the run's id and its status (``done``, ``failed``...).
FIRST_COLUMNS = ("id", "status")
#: After the axes: the policy's name and the simulator that ran it (``engine`` or ``batsim``).
RUN_COLUMNS = ("policy_name", "simulator")
#: Last: the run's wall-clock time (s) and its error (empty when it ran).
LAST_COLUMNS = ("wall_time_s", "error")
#: The column an axis may take the name of (an axis ``simulator``, engine against real Batsim, is
#: the simulator column itself).
SIMULATOR = "simulator"
