"""The engine is a composition of components (docs/engine/architecture.md): no mixin, the whole
package type-checked, and no reference from a component back to one that holds it, so that an
engine and its components are freed by reference counting alone as soon as they are dropped."""

from __future__ import annotations

import gc
import json
import tomllib
import weakref
from pathlib import Path

import pytest

from schedulers.engine import InProcessPort, build_engine
from schedulers.engine.grouping import GroupedServer
from schedulers.engine.netserver import ActorServer
from schedulers.engine.simulator import Engine
from schedulers.registry import get_policy

ROOT = Path(__file__).resolve().parents[1]
FIX = Path(__file__).parent / "fixtures"
FULL = FIX / "batsim_shutdown" / "platform.xml"   # a Full zone: messages cross the loopback
SHARED = ROOT.parent / "shared" / "data" / "batsim-examples"
NETWORK = SHARED / "cluster_energy_128.xml"
NO_NET = SHARED / "energy_platform_homogeneous_no_net_128.xml"

COMPONENTS = ("book", "clock", "record", "machines", "ptasks", "dynamic", "switches", "rounds", "executions",
              "server", "delivery")


def test_the_engine_inherits_nothing_and_no_module_is_left_out_of_mypy() -> None:
    assert Engine.__bases__ == (object,)
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert not any(o.get("ignore_errors") for o in conf.get("overrides", []))


def _workload(tmp_path: Path) -> Path:
    # 12 jobs, one a second: delays of 3 s on 1 host and computations with communications on 2
    # hosts; every third job has a 2-s walltime (the delays it cuts are killed)
    wl = {"nb_res": 4,
          "profiles": {"d": {"type": "delay", "delay": 3},
                       "c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6}},
          "jobs": [{"id": str(i), "subtime": i, "walltime": 2 if i % 3 == 0 else -1, "res": 1 + i % 2,
                    "profile": "dc"[i % 2]} for i in range(12)]}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(wl))
    return path


@pytest.mark.parametrize("platform, energy, delivery", [
    (FULL, False, ActorServer), (FULL, True, ActorServer), (NETWORK, False, ActorServer),
    (NETWORK, True, ActorServer), (NO_NET, True, ActorServer), (NO_NET, False, GroupedServer)])
def test_an_engine_and_its_components_are_freed_without_the_cycle_collector(
        tmp_path: Path, platform: Path, energy: bool, delivery: type) -> None:
    if not platform.exists():
        pytest.skip(f"{platform} (../shared) not found")
    wl = _workload(tmp_path)
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        engine = build_engine(platform, [str(wl)], energy=energy)
        assert type(engine.delivery) is delivery
        parts = {name: getattr(engine, name) for name in COMPONENTS}
        refs = {name: weakref.ref(part) for name, part in parts.items() if hasattr(part, "__weakref__")}
        refs["engine"] = weakref.ref(engine)
        assert len(refs) >= len(COMPONENTS)   # (every component but the slotted clock)
        # no component holds the engine
        assert not any(v is engine for part in parts.values() for v in getattr(part, "__dict__", {}).values())
        del parts
        result = engine.run(InProcessPort(get_policy("easy")))
        # the jobs with a walltime (0, 3, 6, 9) reach it: 0 and 6 are 3-s delays, 3 and 9
        # computations of 1e9 flops at 100 Mflop/s (10 s); the 8 others complete
        states = {j.name: j.state for j in result.jobs}
        assert sorted(n for n, s in states.items() if s == "COMPLETED_WALLTIME_REACHED") == ["0", "3", "6", "9"]
        assert sum(s == "COMPLETED_SUCCESSFULLY" for s in states.values()) == 8
        del engine, result
        alive = sorted(name for name, ref in refs.items() if ref() is not None)
        assert alive == []
    finally:
        if was_enabled:
            gc.enable()
