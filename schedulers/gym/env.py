"""``BatsimEnv``: a Gymnasium environment over the embedded Batsim-compatible engine, in-process.

One episode is one simulation of a workload on a platform, exactly as ``gridsched run`` simulates
it (same engine, same Batsim semantics, energy and pstates included), with the decisions taken by
the agent: :meth:`BatsimEnv.reset` starts the simulation and runs it to the first point where a
decision is possible, :meth:`BatsimEnv.step` applies one action and runs on to the next such point.
Nothing goes through a socket; the engine runs in a worker thread that strictly alternates with
the caller (:mod:`schedulers.gym.handoff` says why).

Actions, masks and the stall rule: :mod:`schedulers.gym.agent`; observations:
:mod:`schedulers.gym.observe`; rewards: :mod:`schedulers.gym.reward`.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import gymnasium
import numpy as np
from gymnasium import spaces

from ..engine import build_engine, read_platform, write_outputs
from ..engine.ports import InProcessPort
from .agent import ActionLayout, AgentPolicy
from .handoff import EngineThread
from .observe import observation_space, observe
from .reward import Costs, reward_weights

__all__ = ["BatsimEnv"]

Workloads = str | os.PathLike | dict | Sequence[str | os.PathLike | dict]


#: Most queue slots of the observation (``window``): its arrays hold ``window`` rows per step.
MAX_WINDOW = 1_000_000

#: Least ``stall_wait`` (s): the policy's ``now`` is Batsim's clock printed with 6 decimals, up
#: to 5e-7 s before it, so a call at ``now + stall_wait`` is after the clock (Batsim 4.2.1
#: aborts on a call that is not) only from 1e-6 s on (1e-300 was ``now`` itself).
MIN_STALL_WAIT = 1e-6


def _whole(n: Any) -> bool:
    """Whether ``n`` is an integer (a NumPy one too), not a boolean."""
    return isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_))


def _as_list(workload: Workloads | None) -> list:
    if workload is None:
        return []
    if isinstance(workload, (str, os.PathLike, dict)):
        return [workload]
    return list(workload)


def _refuse_traces(workloads: list) -> None:
    """Refuse an SWF/GWF trace among workload paths: the environment reads Batsim JSON workloads
    (a trace was "malformed JSON at line 1, column 1")."""
    from ..inputs import TRACE_SUFFIXES

    for w in workloads:
        if isinstance(w, (str, os.PathLike)) and os.fspath(w).lower().endswith(TRACE_SUFFIXES):
            raise ValueError(f"workload {os.fspath(w)!r} is an SWF/GWF trace, and the environment reads Batsim JSON "
                             f"workloads: convert it first (gridsched convert {os.fspath(w)} -o NEW.json; --nb-hosts N "
                             "for the platform's hosts)")


class _Mailbox:
    """The action handed from :meth:`BatsimEnv.step` to the paused policy."""

    def __init__(self) -> None:
        self.action: Any = None

    def wait_action(self, run: EngineThread) -> Any:
        """The policy's ``ask``: hand control to the caller until its next step, then its action."""
        run.pause()
        action, self.action = self.action, None
        return action


class BatsimEnv(gymnasium.Env):
    """Schedule a Batsim workload step by step (see the module docstring).

    Args:
        platform: SimGrid platform XML (path); with ``scenario``, leave it None.
        workload: Batsim workload(s): JSON paths or dicts (workloads ``w0``, ``w1``...).
        scenario: instead of files, a registered scenario generator (``gridsched campaign
            generators`` lists them; :mod:`schedulers.inputs.generators`), called with
            ``scenario_params`` and a seed at every reset (see :meth:`reset`).
        scenario_params: the generator's parameters.
        energy: Batsim's ``-E`` (energy model and outputs; needed by power actions and the energy
            reward).
        window: queue slots in the observation and the action space.
        power_actions: add one action per host that switches it off (idle) or on (asleep);
            needs energy and a platform with hosts that have ``sleep_pstates``.
        reward: a reward component or a mapping component -> weight (:mod:`.reward`).
        stall_wait: seconds to the call asked when a wait would leave waiting jobs with nothing
            to wake the simulation (:mod:`.agent`): a finite number >= 1e-6.
        max_steps: truncate an episode after this many steps (None: never).
        export_prefix: write Batsim's output files of each finished episode with this prefix
            (``out/env_`` -> ``out/env_jobs.csv``...), as ``gridsched run`` writes them; its
            folder is created by the constructor.
        render_mode: None or ``"ansi"`` (a text line per call of :meth:`render`).

    Raises:
        ValueError: a bad option (one line), an ``export_prefix`` whose folder cannot be created or
            written; PlatformError / WorkloadError / GeneratorError: bad
            inputs, as ``gridsched run`` reports them.

    Attributes:
        result: the :class:`~schedulers.engine.EngineResult` of the last finished episode, or None.
        policy: the running :class:`~schedulers.gym.agent.AgentPolicy` (its queue, hosts, time).
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, platform: str | os.PathLike | None = None, workload: Workloads | None = None, *,
                 scenario: str | None = None, scenario_params: Mapping[str, Any] | None = None,
                 energy: bool = False, window: int = 16, power_actions: bool = False,
                 reward: str | Mapping[str, float] = "waiting_time", stall_wait: float = 60.0,
                 max_steps: int | None = None, export_prefix: str | os.PathLike | None = None,
                 render_mode: str | None = None) -> None:
        super().__init__()
        if (scenario is None) == (platform is None):
            raise ValueError("give either a platform (and a workload) or a scenario generator, not both")
        if scenario is None and not _as_list(workload):
            raise ValueError("a workload is needed with a platform file")
        _refuse_traces(_as_list(workload))
        for flag, value in (("energy", energy), ("power_actions", power_actions)):
            if not isinstance(value, (bool, np.bool_)):   # ("false" would be true)
                raise ValueError(f"{flag} must be True or False, got {value!r}")
        energy, power_actions = bool(energy), bool(power_actions)
        if not (_whole(window) and 1 <= window <= MAX_WINDOW):
            raise ValueError(f"window must be an integer from 1 to {MAX_WINDOW:,} (queue slots observed), got "
                             f"{window!r}")
        if isinstance(stall_wait, bool) or not (isinstance(stall_wait, (int, float, np.integer, np.floating))
                                                and MIN_STALL_WAIT <= stall_wait < math.inf):
            # (the call it asks is a CALL_ME_LATER at now + stall_wait: a finite time, after the clock)
            raise ValueError(f"stall_wait must be a finite number of seconds >= 1e-6, got {stall_wait!r} (the call "
                             "it asks is at now + stall_wait, and now is Batsim's clock printed with 6 decimals: a "
                             "call sooner may fall before the clock, where Batsim 4.2.1 aborts)")
        if max_steps is not None and not (_whole(max_steps) and max_steps >= 1):
            raise ValueError(f"max_steps must be an integer >= 1 or None, got {max_steps!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.weights = reward_weights(reward)
        if "energy" in self.weights and not energy:
            raise ValueError("the energy reward needs energy=True (Batsim's -E)")
        if power_actions and not energy:
            raise ValueError("power actions switch hosts through their sleep pstates: they need energy=True")
        if export_prefix is not None:   # (its folder made now: not a failure at the end of the first episode)
            folder = Path(export_prefix).parent
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ValueError(f"export_prefix {str(export_prefix)!r}: cannot create its folder {str(folder)!r}: "
                                 f"{exc.strerror or exc}") from None
            if not os.access(folder, os.W_OK):
                raise ValueError(f"export_prefix {str(export_prefix)!r}: its folder {str(folder)!r} is not writable")
        window, max_steps = int(window), None if max_steps is None else int(max_steps)
        self.platform_path = platform
        self.workloads = _as_list(workload)
        self.scenario = scenario
        self.scenario_params = dict(scenario_params or {})
        self.energy = energy
        self.stall_wait = float(stall_wait)
        self.max_steps = max_steps
        self.export_prefix = export_prefix
        self.render_mode = render_mode
        spec = self._platform_spec(self._scenario(0) if scenario is not None else None)
        self._nb_hosts = len(spec.compute)
        self._pstates = [len(h.speeds) for h in spec.compute]
        if power_actions and not any(h.properties.get("sleep_pstates") for h in spec.compute):
            raise ValueError(f"power actions switch hosts through their sleep pstates, and no compute host of "
                             f"{spec.source} has the property sleep_pstates: every power action would be masked")
        self.layout = ActionLayout(window, self._nb_hosts, power_actions)
        self.action_space = spaces.Discrete(self.layout.size)
        self.observation_space = observation_space(window, self._pstates)
        self.result = None
        self.policy: AgentPolicy | None = None
        self._run: EngineThread | None = None
        self._engine: Any = None   # the episode's Engine
        self._users: dict[str, int] = {}
        self._costs = Costs(self.weights)
        self._steps = 0
        self._box = _Mailbox()
        self._over = True

    # ----------------------------------------------------------------------------------- inputs
    def _scenario(self, seed: int):
        from ..inputs.generators import generate

        assert self.scenario is not None   # (called only with a scenario generator)
        return generate(self.scenario, self.scenario_params, seed)

    def _platform_spec(self, sc):
        if sc is None:
            return read_platform(self._platform_file())
        if sc.platform_xml is not None:
            return read_platform(f"<generator {self.scenario}>", text=sc.platform_xml)
        return read_platform(sc.platform)

    def _platform_file(self) -> str | os.PathLike:
        assert self.platform_path is not None   # (without a scenario generator the constructor asks for one)
        return self.platform_path

    # ------------------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start a new simulation and run it to the first decision.

        Args:
            seed: seeds :attr:`np_random`; with a scenario generator, the generator's seed is drawn
                from it (so ``reset(seed=s)`` gives the same episode every time). With files the
                simulation does not depend on it (it is deterministic).
            options: ``{"workload": path/dict/list}`` to simulate another workload on the same
                platform; ``{"scenario_seed": n}`` to give the generator's seed directly.

        Returns:
            ``(observation, info)``; ``info`` has ``action_mask``, ``time``, ``invalid_action``,
            ``costs`` (each reward component over the step, in its unit).

        Raises:
            ValueError: an unknown option, one that does not apply (``workload`` with a scenario
                generator, ``scenario_seed`` with files), or a ``scenario_seed`` that is not an
                integer >= 0.
        """
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - {"workload", "scenario_seed"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {', '.join(sorted(unknown))}; known: workload, scenario_seed")
        wrong = "workload" if self.scenario is not None else "scenario_seed"
        if wrong in options:   # (it was ignored without a word)
            raise ValueError(f"reset option {wrong!r} applies to an environment built with "
                             f"{'a platform and workloads' if wrong == 'workload' else 'a scenario generator'}; "
                             f"this one has {'scenario ' + repr(self.scenario) if self.scenario else 'files'}")
        sseed = options.get("scenario_seed")
        if sseed is not None and not (_whole(sseed) and sseed >= 0):
            raise ValueError(f"reset option 'scenario_seed' must be an integer >= 0, got {sseed!r}")
        self._stop()
        if self.scenario is not None:
            if sseed is None:
                sseed = int(self.np_random.integers(0, 2**31 - 1))
            sc = self._scenario(int(sseed))
            spec, workloads = self._platform_spec(sc), list(sc.workloads)
            if len(spec.compute) != self._nb_hosts or [len(h.speeds) for h in spec.compute] != self._pstates:
                raise ValueError(f"scenario {self.scenario!r} seed {sseed}: {len(spec.compute)} hosts, the "
                                 f"environment was built for {self._nb_hosts} (the spaces cannot change)")
        else:
            spec = read_platform(self._platform_file())
            workloads = _as_list(options["workload"]) if "workload" in options else self.workloads
            _refuse_traces(workloads)
        engine = self._engine = build_engine(spec, workloads, energy=self.energy,
                                             trace_outputs=self.export_prefix is not None)
        # (the worker's closures hold the engine, the policy and the mailbox, not the environment:
        # an environment dropped mid-episode is collected, and its __del__ ends the worker)
        box = self._box = _Mailbox()
        policy = self.policy = AgentPolicy(self.layout, lambda: box.wait_action(run), stall_wait=self.stall_wait)
        run = self._run = EngineThread(lambda: engine.run(InProcessPort(policy)))
        self._users = {}
        self._costs = Costs(self.weights)
        self._steps = 0
        self._over = False
        self.result = None
        run.start()
        obs, _, info = self._observe()
        return obs, info

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Apply ``action`` (an invalid one is played as a wait and flagged in ``info``) and run
        the simulation to the next decision or its end.

        Returns:
            ``(observation, reward, terminated, truncated, info)``: ``terminated`` once the
            simulation ended (Batsim's SIMULATION_ENDS), ``truncated`` after ``max_steps``. An
            episode that ended within :meth:`reset` (no job to decide on: an empty workload, or
            every job rejected as too large) ends at its first step, with reward 0.

        Raises:
            RuntimeError: the episode is over (call :meth:`reset`).
        """
        if self._over or self._run is None:
            raise RuntimeError("the episode is over: call reset()")
        self._box.action = action.item() if isinstance(action, np.ndarray) and action.ndim == 0 else action
        if not self._run.done:   # (a workload with no job to decide on ends in reset: terminated at once)
            self._run.resume()
        self._steps += 1
        obs, reward, info = self._observe()
        terminated = self._run.done
        truncated = not terminated and self.max_steps is not None and self._steps >= self.max_steps
        if terminated or truncated:
            self._over = True
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The valid actions now (bool array; wait is always valid), as ``info["action_mask"]``
        (the method sb3-contrib's ``MaskablePPO`` calls)."""
        if self.policy is None or self._run is None or self._run.done or self.policy.mask is None:
            mask = np.zeros(self.layout.size, dtype=bool)
            mask[self.layout.wait] = True
            return mask
        return self.policy.mask.copy()   # (computed when the paused policy asked)

    def render(self) -> str | None:
        """With ``render_mode="ansi"``: one line (time, queue, host states)."""
        if self.render_mode != "ansi":
            return None
        p = self.policy
        if p is None:
            return "no simulation"
        states = "".join("fBsoaU"[c] for c in observe(p, 0, self._nb_hosts, {})["hosts"])
        return f"t={p.now:.3f} s queue={len(p.queue)} running={len(p.running)} hosts={states}"

    def close(self) -> None:
        """Abandon the running simulation, if any (its engine thread ends)."""
        self._stop()
        super().close()

    # ----------------------------------------------------------------------------------- internals
    def _observe(self) -> tuple[dict, float, dict]:
        p, run = self.policy, self._run
        assert p is not None and run is not None   # (an episode is under way)
        if run.done:
            self.result = run.result
            if self.export_prefix is not None and self.result is not None:
                Path(self.export_prefix).parent.mkdir(parents=True, exist_ok=True)
                write_outputs(self.result, self.export_prefix, energy=self.energy)
        obs = observe(p, self.layout.window, self._nb_hosts, self._users)
        reward, costs = self._costs.step_reward(Costs.totals(p, self._engine))
        info = {"action_mask": self.action_masks(), "time": p.now, "invalid_action": p.invalid,
                "costs": costs}
        return obs, reward, info

    def _stop(self) -> None:
        if self._run is not None:
            self._run.abort()
        self._run = None
        self._over = True

    def __del__(self) -> None:   # (an environment dropped mid-episode ends its thread)
        try:
            self._stop()
        except Exception:
            pass
