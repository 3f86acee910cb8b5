"""The Gymnasium environment (``schedulers.gym``): Gymnasium's checker, seeding, masks, the stall
rule, rewards equal to the run's totals, and a fixed rule that reproduces ``gridsched run
--policy fcfs`` file for file."""

from __future__ import annotations

import contextlib
import gc
import io
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="gymnasium is not installed (pip install 'gridsched[gym]')")

from gymnasium.utils.env_checker import check_env  # noqa: E402

import schedulers.gym  # noqa: E402,F401  (registers gridsched/Batsim-v0)
from schedulers.cli import main  # noqa: E402
from schedulers.gym import ENV_ID, BatsimEnv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ROOT / "platforms" / "g5k_nantes_econome.xml"
WORKLOAD = Path(__file__).parent / "fixtures" / "batsim_py" / "fcfs_workload.json"   # 200 jobs, walltimes
SMALL = {"hosts": 8, "jobs": 30, "max_res": 3, "runtime_min": 60.0, "runtime_max": 600.0, "users": 3}


def fcfs_rule(env: BatsimEnv, info: dict) -> int:
    """Strict FCFS as an agent: start the head of the queue if it fits, else wait (never skip it)."""
    return 0 if info["action_mask"][0] else env.layout.wait


def first_fit_rule(env: BatsimEnv, info: dict) -> int:
    """Start the first queued job that fits (skipping the head): not FCFS."""
    fits = np.flatnonzero(info["action_mask"][:env.layout.window])
    return int(fits[0]) if len(fits) else env.layout.wait


def play(env: BatsimEnv, rule, seed: int | None = 0, options: dict | None = None):
    obs, info = env.reset(seed=seed, options=options)
    rewards, infos, observations = [], [info], [obs]
    while True:
        obs, r, term, trunc, info = env.step(rule(env, info))
        rewards.append(r)
        infos.append(info)
        observations.append(obs)
        if term or trunc:
            return rewards, infos, observations, term, trunc


def _gridsched_run(out: Path, *extra: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["run", "--policy", "fcfs", "-p", str(PLATFORM), "-w", str(WORKLOAD), "-o", str(out),
                     "--no-progress", *extra])
    assert code == 0


@pytest.mark.parametrize("energy", [False, True])
def test_fixed_fcfs_rule_gives_gridsched_run_fcfs_files(tmp_path, energy):
    _gridsched_run(tmp_path / "run", *(["-E"] if energy else []))
    env = BatsimEnv(PLATFORM, WORKLOAD, energy=energy, export_prefix=tmp_path / "env" / "out_")
    _, _, _, term, trunc = play(env, fcfs_rule)
    assert term and not trunc
    files = ["jobs", "machine_states"] + (["consumed_energy", "pstate_changes"] if energy else [])
    for name in files:
        assert (tmp_path / "env" / f"out_{name}.csv").read_bytes() == \
            (tmp_path / "run" / f"out_{name}.csv").read_bytes(), name
    # the rule matters: starting the first job that fits (overtaking the head) is another schedule
    env2 = BatsimEnv(PLATFORM, WORKLOAD, energy=energy, export_prefix=tmp_path / "ff" / "out_")
    play(env2, first_fit_rule)
    assert (tmp_path / "ff" / "out_jobs.csv").read_bytes() != (tmp_path / "run" / "out_jobs.csv").read_bytes()


def test_check_env_and_registration():
    env = gymnasium.make(ENV_ID, platform=str(PLATFORM), workload=str(WORKLOAD))
    check_env(env.unwrapped)
    env = gymnasium.make(ENV_ID, scenario="synthetic", scenario_params=SMALL, energy=True,
                         reward={"waiting_time": 1.0, "energy": 0.5}, render_mode="ansi")
    check_env(env.unwrapped)
    env.reset(seed=1)
    assert env.render().startswith("t=")
    env = gymnasium.make(ENV_ID, platform=str(PLATFORM), workload=str(WORKLOAD), energy=True, power_actions=True)
    check_env(env.unwrapped)


def test_rewards_add_up_to_the_runs_totals(tmp_path):
    # each component's total over an episode is the run's own figure, read from Batsim's files:
    # waiting time (job-hours), bounded slowdowns (tau = 10 s), energy (kWh)
    for reward in ("waiting_time", "bounded_slowdown", "energy"):
        env = BatsimEnv(PLATFORM, WORKLOAD, energy=True, reward=reward, export_prefix=tmp_path / reward / "out_")
        rewards, _, _, _, _ = play(env, fcfs_rule)
        jobs = pd.read_csv(tmp_path / reward / "out_jobs.csv")
        if reward == "waiting_time":
            expected = jobs.waiting_time.sum() / 3600
        elif reward == "bounded_slowdown":
            expected = np.maximum(1.0, jobs.turnaround_time / np.maximum(jobs.execution_time, 10.0)).sum()
        else:
            expected = pd.read_csv(tmp_path / reward / "out_schedule.csv").consumed_joules[0] / 3.6e6
        assert -sum(rewards) == pytest.approx(expected, rel=1e-7), reward


def test_seeded_scenarios_are_deterministic():
    env = BatsimEnv(scenario="synthetic", scenario_params=SMALL)

    def episode(seed):
        rng = np.random.default_rng(42)   # the agent's own randomness, fixed

        def rnd(e, info):
            return int(rng.choice(np.flatnonzero(info["action_mask"])))
        rewards, _, obs, _, _ = play(env, rnd, seed=seed)
        return rewards, [o["queue"].tobytes() + o["hosts"].tobytes() for o in obs], env.result.end_time

    a, b, c = episode(7), episode(7), episode(8)
    assert a == b
    assert a[2] != c[2]                   # another seed, another generated workload
    # the generator's seed can be given directly, whatever the environment's seed
    first = env.reset(seed=1, options={"scenario_seed": 3})[0]["queue"]
    assert np.array_equal(first, env.reset(seed=2, options={"scenario_seed": 3})[0]["queue"])


def test_masks_and_invalid_actions():
    env = BatsimEnv(PLATFORM, WORKLOAD, window=4)
    obs, info = env.reset(seed=0)
    seen_blocked = False
    for _ in range(300):
        mask = info["action_mask"]
        assert mask.shape == (env.action_space.n,) and mask[env.layout.wait]
        assert np.array_equal(mask, env.action_masks())
        free = int((obs["hosts"] == 0).sum())
        res = obs["queue"][:, 0]
        assert list(mask[:4]) == [0 < r <= free for r in res]
        seen_blocked |= bool(res[0] > free)
        slot = int(np.flatnonzero(~mask[:4] & (res > 0))[0]) if (~mask[:4] & (res > 0)).any() else None
        if slot is not None:           # an invalid start is played as a wait, and said so
            t0, n0 = info["time"], obs["queue_length"][0]
            obs, _, term, _, info = env.step(slot)
            assert info["invalid_action"] and (info["time"] > t0 or obs["queue_length"][0] != n0 or term)
        else:
            obs, _, term, _, info = env.step(fcfs_rule(env, info))
            assert not info["invalid_action"]
        if term:
            break
    assert seen_blocked


def test_waiting_forever_does_not_deadlock():
    # an agent that never starts a job: once every job is submitted and nothing runs, each wait
    # asks for a call stall_wait seconds later, where the agent decides again
    env = BatsimEnv(scenario="synthetic", scenario_params=SMALL, stall_wait=100.0, max_steps=80)
    _, infos, _, term, trunc = play(env, lambda e, i: e.layout.wait, seed=0)
    assert trunc and not term
    times = [i["time"] for i in infos]
    assert np.allclose(np.diff(times[-10:]), 100.0)


def test_power_actions_switch_hosts(tmp_path):
    env = BatsimEnv(PLATFORM, WORKLOAD, energy=True, power_actions=True, export_prefix=tmp_path / "out_")
    lay = env.layout
    codes = set()

    def rule(e, info):   # FCFS, and every idle host switched off while nothing waits
        m = info["action_mask"]
        if m[0]:
            return 0
        hosts = e.policy.platform.hosts
        for h in hosts:
            if m[lay.wait + 1 + h.id] and (h.state.value == "sleeping") == bool(e.policy.queue):
                return lay.wait + 1 + h.id
        return lay.wait

    obs, info = env.reset(seed=0)
    while True:
        obs, _, term, _, info = env.step(rule(env, info))
        codes |= set(obs["hosts"].tolist())
        if term:
            break
    assert {0, 1, 2, 3, 4} <= codes              # free, busy, asleep, switching off, switching on
    pstates = pd.read_csv(tmp_path / "out_pstate_changes.csv")
    assert (pstates.new_pstate == 1).any()     # the sleep pstate of the Nantes hosts
    assert len(pd.read_csv(tmp_path / "out_jobs.csv")) == 200


def test_an_abandoned_environment_ends_its_engine_thread():
    before = threading.active_count()
    env = BatsimEnv(PLATFORM, WORKLOAD)
    env.reset(seed=0)
    assert threading.active_count() == before + 1
    env.reset(seed=0)                           # a new episode ends the old one's thread
    assert threading.active_count() == before + 1
    del env
    gc.collect()
    assert threading.active_count() == before


def test_bad_options_are_one_line_errors():
    with pytest.raises(ValueError, match="energy reward needs energy=True"):
        BatsimEnv(PLATFORM, WORKLOAD, reward="energy")
    with pytest.raises(ValueError, match="unknown reward component 'slowdown'"):
        BatsimEnv(PLATFORM, WORKLOAD, reward={"slowdown": 1.0})
    with pytest.raises(ValueError, match="either a platform"):
        BatsimEnv(PLATFORM, WORKLOAD, scenario="synthetic")
    no_sleep = Path(__file__).parent / "fixtures" / "hetero4.xml"   # pstates with power, no sleep_pstates
    with pytest.raises(ValueError, match=r"no compute host of .*hetero4\.xml has the property sleep_pstates"):
        BatsimEnv(no_sleep, WORKLOAD, energy=True, power_actions=True)
    env = BatsimEnv(PLATFORM, WORKLOAD)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)


def test_odd_arguments(tmp_path):
    # NumPy integers (from np.arange sweeps) are integers; they were refused ("got np.int64(4)")
    env = BatsimEnv(scenario="synthetic", scenario_params=SMALL, window=np.int64(4), max_steps=np.int32(3))
    assert env.layout.window == 4 and env.max_steps == 3 and type(env.max_steps) is int
    with pytest.raises(ValueError, match=r"window must be an integer from 1 to 1,000,000 .*got True"):
        BatsimEnv(scenario="synthetic", scenario_params=SMALL, window=True)
    # a string flag was true, "false" included: power actions on, without a word
    with pytest.raises(ValueError, match="power_actions must be True or False, got 'false'"):
        BatsimEnv(scenario="synthetic", scenario_params=SMALL, power_actions="false")
    with pytest.raises(ValueError, match="energy must be True or False, got 1"):
        BatsimEnv(scenario="synthetic", scenario_params=SMALL, energy=1)
    # a window of 1e9 slots: refused, where it ran out of memory (a (1e9, 4) array) in reset
    with pytest.raises(ValueError, match=r"window must be an integer from 1 to 1,000,000 .*got 1000000000"):
        BatsimEnv(scenario="synthetic", scenario_params=SMALL, window=10**9)
    # an export folder that cannot be made: said when the environment is built, not as a bare
    # FileNotFoundError at the end of the first episode
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ValueError, match=r"export_prefix '.*file/sub/env_': cannot create its folder"):
        BatsimEnv(scenario="synthetic", scenario_params=SMALL, export_prefix=blocker / "sub" / "env_")


def test_reset_options_that_do_not_apply_are_refused():
    # a workload given to a generator's environment, a seed to a file one, were ignored; a seed of
    # 1.5 was read as 1
    env = BatsimEnv(scenario="synthetic", scenario_params=SMALL)
    with pytest.raises(ValueError, match="reset option 'workload' applies to an environment built with a platform"):
        env.reset(options={"workload": WORKLOAD})
    for bad in (1.5, -1, "3", True):
        with pytest.raises(ValueError, match=r"'scenario_seed' must be an integer >= 0, got "):
            env.reset(options={"scenario_seed": bad})
    obs, _ = env.reset(options={"scenario_seed": np.int64(3)})
    assert obs["queue_length"][0] >= 0
    files = BatsimEnv(PLATFORM, WORKLOAD)
    with pytest.raises(ValueError, match="reset option 'scenario_seed' applies to an environment built with a "
                                         "scenario generator; this one has files"):
        files.reset(options={"scenario_seed": 3})


@pytest.mark.parametrize("reward, message", [
    # a negative weight made the agent learn to make jobs wait: the reward is minus the weighted costs
    ({"waiting_time": -1}, "reward weight of 'waiting_time' must be >= 0 (the reward is minus the weighted costs: a "
                           "negative weight would reward the waiting time), got -1"),
    ({"waiting_time": 0, "bounded_slowdown": 0.0}, "are all 0: every reward would be 0"),
])
def test_reward_weights_that_reward_nothing_or_the_cost_are_refused(reward, message):
    with pytest.raises(ValueError) as err:
        BatsimEnv(scenario="synthetic", scenario_params=SMALL, reward=reward)
    assert message in str(err.value) and "\n" not in str(err.value)
    env = BatsimEnv(scenario="synthetic", scenario_params=SMALL, reward={"waiting_time": np.float32(0.5)})
    assert env.weights == {"waiting_time": 0.5}   # (a NumPy weight is a number)


@pytest.mark.parametrize("jobs", [[], [{"id": "big", "subtime": 0, "res": 99, "profile": "p", "walltime": 10}]],
                         ids=["no-job", "only-a-job-too-large"])
def test_an_episode_without_decisions_ends_at_its_first_step(jobs):
    # it raised "RuntimeError: the run is over: nothing to resume" at the first step: the
    # simulation had ended within reset (no job, or the only job rejected at submission: 99 hosts
    # on Nantes' 16); hand-worked: nothing waits, so no waiting time, a return of 0
    workload = {"nb_res": 16, "jobs": jobs, "profiles": {"p": {"type": "delay", "delay": 1}}}
    env = BatsimEnv(PLATFORM, workload)
    rewards, infos, _, term, trunc = play(env, fcfs_rule)
    assert (len(rewards), rewards[0], term, trunc) == (1, 0.0, True, False)
    assert [j.state for j in env.result.jobs] == (["REJECTED"] if jobs else [])
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)


def test_guide_examples_run(monkeypatch, capsys):
    # every ```python block of docs/guides/gym.md runs, in order, from the repository root, except
    # one marked as not run (it needs a learning library)
    import re

    text = (ROOT / "docs" / "guides" / "gym.md").read_text()
    blocks = re.findall(r"(<!-- not run[^>]*-->\n)?```python\n(.*?)```", text, re.S)
    runnable = [code for marker, code in blocks if not marker]
    assert len(runnable) == 2 and len(blocks) == 3
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    for code in runnable:
        exec(compile(code, "docs/guides/gym.md", "exec"), namespace)
    out = capsys.readouterr().out.splitlines()
    waits = {line.split()[0]: float(line.split()[3]) for line in out if "job-hours" in line}
    assert set(waits) == {"random_agent", "shortest_first"}
    assert waits["shortest_first"] < waits["random_agent"]
