#!/usr/bin/env python3
"""Steps Gymnasium's own MuJoCo tasks along a recording of gait's (tests/gym.rs).

usage: gym_compare.py RECORDING.json

For each recorded episode: makes the task with `gymnasium.make` (its default keyword
arguments, or the recording's `kwargs`) under the `ClipAction` wrapper (gait's envs clip actions to the action space, as
every published PPO baseline's wrappers do), resets it, puts it in gait's start state with `set_state`, then steps gait's
actions (as float64, the values gait stepped) and compares every observation, reward, reward
term and termination with gait's. Prints one JSON object per task with the largest deviations
and the first termination mismatch, if any; exit status 0 (the test judges the numbers).
"""
import json
import sys

import gymnasium as gym
import numpy as np


def compare(case):
    # Stepping on past a termination is what this comparison wants: no checker wrappers.
    env = gym.make(case["task"], disable_env_checker=True, **case.get("kwargs", {})).unwrapped
    env.reset(seed=0)
    raw = env
    raw.set_state(np.array(case["qpos"]), np.array(case["qvel"]))
    env = gym.wrappers.ClipAction(raw)
    obs = raw._get_obs()
    worst = {"obs": float(np.max(np.abs(obs - np.array(case["obs0"])) / np.maximum(1.0, np.abs(obs)))),
             "reward": 0.0, "terms": 0.0}
    mismatch, terminations = None, 0
    for t, action in enumerate(case["actions"]):
        obs, reward, terminated, _, info = env.step(np.array(action, dtype=np.float64))
        want = case["steps"][t]
        worst["obs"] = max(worst["obs"], float(np.max(np.abs(obs - np.array(want["obs"])) / np.maximum(1.0, np.abs(obs)))))
        worst["reward"] = max(worst["reward"], abs(float(reward) - want["reward"]) / max(1.0, abs(float(reward))))
        for name, value in want["info"].items():
            worst["terms"] = max(worst["terms"], abs(float(info[name]) - value) / max(1.0, abs(float(info[name]))))
        terminations += bool(terminated)
        if bool(terminated) != want["terminated"] and mismatch is None:
            mismatch = t
    return {"task": case["task"], "steps": t + 1, "worst": worst, "termination_mismatch": mismatch,
            "terminations": terminations}


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    for case in cases:
        print(json.dumps(compare(case)))


if __name__ == "__main__":
    main()
