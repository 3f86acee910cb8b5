"""Power-usage timelines of chosen runs in a campaign report (the monograph's Figs. 15-18).

A campaign keeps numbers, not files. ``[[report.timeline]]`` names one run by its params; the
report runs it again (the engine is deterministic: same scenario, seed and policy, same schedule),
keeps its files in a temporary folder, and draws the power each user holds over time with
:func:`schedulers.core.usage_plot.plot_run_usage`::

    [[report.timeline]]
    where = { policy = "osep", late = "user1", demand = "large", checkpoint = false, seed = 0 }
    title = "OSEP, user1 late (001 Fig. 15)"     # optional
    relative = true                               # optional: % of the grid instead of Gflop/s

``where`` must match exactly one run of the campaign (``policy`` is the label, as in
``runs.csv``). Only embedded-engine runs can be replayed this way.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import CampaignError

__all__ = ["TimelineSpec", "replay_usage"]


@dataclass(frozen=True)
class TimelineSpec:
    """One ``[[report.timeline]]``: the run's params, a title, relative or absolute power."""
    where: tuple[tuple[str, Any], ...]
    title: str | None = None
    relative: bool = False


def _spec_of(record: dict[str, Any], base_dir: str):
    from .spec import RunSpec
    params = record["params"]
    return RunSpec(id=record["id"], campaign=record["campaign"], params=params, policy_name=record["policy_name"],
                   policy_options=record["policy_options"], scenario=record["scenario_spec"],
                   engine=record["engine_options"], seed=params.get("seed") or 0, base_dir=base_dir)


def replay_usage(record: dict[str, Any], base_dir: str, out: Path, *, title: str | None = None,
                 relative: bool = False) -> list[Path]:
    """Run the campaign run of ``record`` again in the engine and write its power-usage plot as
    ``out.png`` and ``out.svg``.

    Args:
        record: the run's result record (``results/<id>.json``).
        base_dir: the campaign file's folder (relative scenario paths).
        out: the plot's path without extension.

    Raises:
        CampaignError: a real-Batsim run, or the replay or the plot failed (one line, naming the run).
    """
    from ..core.usage_plot import plot_run_usage
    from .execute import _engine_run, _scenario

    spec = _spec_of(record, base_dir)
    if spec.engine.get("simulator") == "batsim":
        raise CampaignError(f"run {spec.id}: a timeline replays a run in the embedded engine; this run used "
                            "real Batsim")
    digest = record.get("inputs_sha256")
    if digest is not None and "platform" in spec.scenario:   # (files edited since: another run's plot)
        from .spec import files_sha256
        names = [spec.scenario["platform"], *spec.scenario["workloads"], *spec.scenario.get("events", [])]
        if files_sha256(Path(base_dir), names) != digest:
            raise CampaignError(f"run {spec.id}: its files ({', '.join(names)}, in {base_dir}) changed since it "
                                "ran; run the campaign again before plotting its timeline")
    try:
        with tempfile.TemporaryDirectory(prefix="gridsched-timeline-") as tmp:
            work = Path(tmp)
            (work / "outputs").mkdir()
            platform, workloads = _scenario(spec, work)
            _engine_run(spec, platform, workloads, work / "outputs")
            return plot_run_usage(work / "outputs" / "out_jobs.csv", workloads, platform, out,
                                  title=title, relative=relative)
    except CampaignError:
        raise
    except Exception as exc:  # noqa: BLE001 -- one line naming the run, as for failed runs
        raise CampaignError(f"run {spec.id}: replaying it for its timeline failed: "
                            f"{type(exc).__name__}: {' '.join(str(exc).split())}") from None
