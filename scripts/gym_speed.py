#!/usr/bin/env python3
"""Times gait's PPO against cleanrl's `ppo_continuous_action.py` on Gymnasium's MuJoCo tasks,
one run after the other on the same machine (issue 84; docs/benchmarks.md).

    scripts/gym_speed.py OUT --cleanrl PATH/ppo_continuous_action.py --python PY
                         [--tasks Hopper Walker2d ...] [--seed 1] [--timesteps 1e6]
                         [--gait target/release/gait] [--only gait|cleanrl|cleanrl-nets]

Per task it runs `gait train ppo --env gym/TASK-v5 --seed S --timesteps T` (the task's preset,
with the suite's task flags: scripts/gym_suite.py TASK_FLAGS) and then cleanrl's script as
`PY SCRIPT --env-id TASK-v4 --seed S --no-cuda --num-envs 2 --total-timesteps T` with the same
number of envs as gait's 2 workers and the same steps per iteration and minibatches as gait's
preset for that task (CLEANRL_FLAGS), and records each wall clock (the script's clock around
the process: start-up, evaluations and, for gait, its checkpoints included). cleanrl's script
keeps its own 64x64 tanh networks (it has no flag for them), so where gait's preset uses wider
ones (HalfCheetah's 256x256 ReLU) cleanrl does less arithmetic per update than gait; for those
tasks a third run, `cleanrl-nets`, times a copy of the script (written to OUT) whose two
networks have gait's widths and activation (GAIT_NETS), the same work per update as gait's.

cleanrl's script is not vendored: take it from vwxyzjn/cleanrl (`cleanrl/ppo_continuous_action.py`;
the measurements in docs/benchmarks.md used commit fe8d8a0) and run it in a venv of its own
pins (`pip install torch gymnasium==0.29.1 mujoco==2.3.3 'numpy<2' tyro tensorboard`). Measure
on an otherwise idle machine: the two runs of a task share nothing but the host.

It appends one line per finished run to OUT/speed.csv (task, who, seed, steps, wall_s) and
rewrites OUT/speed.md (minutes per 1M steps for each and the ratios); a run already in
speed.csv is not rerun, so an interrupted script continues. Standard library only.
"""

import argparse
import csv
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gym_suite import DEFAULT_TASKS, TASK_FLAGS  # noqa: E402

# cleanrl's flags that give it gait's preset's iteration: 2 envs x 1024 steps and 32 minibatches
# of 64 (the Gymnasium preset: 2048 steps, minibatches of 64, 10 epochs, cleanrl's defaults);
# HalfCheetah's preset (rl-baselines3-zoo's settings) has 20 epochs of minibatches of 64 over
# about 1000 steps, and the zoo's learning rate, discounts, clip, entropy and gradient norm.
CLEANRL_FLAGS = {
    "default": ["--num-steps", "1024"],
    "HalfCheetah": [
        "--num-steps", "512", "--num-minibatches", "16", "--update-epochs", "20",
        "--learning-rate", "2.0633e-5", "--no-anneal-lr", "--gamma", "0.98", "--gae-lambda", "0.92",
        "--clip-coef", "0.1", "--ent-coef", "0.000401762", "--vf-coef", "0.58096",
        "--max-grad-norm", "0.8", "--no-clip-vloss",
    ],
}

# Tasks whose gait preset uses other networks than cleanrl's 64x64 tanh: (width, torch module).
GAIT_NETS = {"HalfCheetah": (256, "ReLU")}


def cleanrl_with_nets(script, out, width, activation):
    """A copy of cleanrl's script in OUT whose Agent has `width`-wide layers and `activation`;
    exits if the Agent's text is not the one this substitution was written against."""
    with open(script) as f:
        text = f.read()
    head, sep, rest = text.partition("class Agent(nn.Module):")
    agent, sep2, tail = rest.partition("    def get_value(self, x):")
    if not sep or not sep2 or agent.count("64") != 8 or agent.count("nn.Tanh()") != 4:
        sys.exit(f"{script}: its Agent is not the 64x64 tanh one this script patches")
    agent = agent.replace("64", str(width)).replace("nn.Tanh()", f"nn.{activation}()")
    path = os.path.join(out, f"ppo_continuous_action_{width}{activation.lower()}.py")
    with open(path, "w") as f:
        f.write(head + sep + agent + sep2 + tail)
    return path


def done_runs(out):
    path = os.path.join(out, "speed.csv")
    if not os.path.isfile(path):
        return []
    with open(path) as f:
        return [row for row in csv.reader(f) if len(row) == 5]


def timed(cmd, log_path, cwd=None):
    print("+", " ".join(cmd), flush=True)
    start = time.monotonic()
    with open(log_path, "w") as log:
        rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=cwd)
    wall = time.monotonic() - start
    if rc != 0:
        sys.exit(f"exited {rc}; see {log_path}")
    return wall


def commands(args, task):
    steps = str(int(float(args.timesteps)))
    gait = [
        args.gait, "train", "ppo", "--env", f"gym/{task}-v5", "--seed", str(args.seed),
        "--timesteps", steps, "--logdir", os.path.join(args.out, "gait"),
        "--run-name", f"speed-seed{args.seed}",
    ] + TASK_FLAGS.get(task, [])
    cleanrl = [
        args.python, os.path.abspath(args.cleanrl), "--env-id", f"{task}-v4", "--seed",
        str(args.seed), "--no-cuda", "--num-envs", "2", "--total-timesteps", steps,
    ] + CLEANRL_FLAGS.get(task, CLEANRL_FLAGS["default"])
    runs = {"gait": gait, "cleanrl": cleanrl}
    # The patched copy is written only when its run can happen.
    if task in GAIT_NETS and args.only in (None, "cleanrl-nets"):
        patched = cleanrl_with_nets(args.cleanrl, args.out, *GAIT_NETS[task])
        runs["cleanrl-nets"] = [args.python, os.path.abspath(patched)] + cleanrl[2:]
    return runs


def write_table(out, rows):
    minutes = {}
    for task, who, _seed, steps, wall in rows:
        minutes.setdefault(task, {})[who] = float(wall) / int(steps) * 1e6 / 60
    lines = ["| task | gait | cleanrl | cleanrl / gait | cleanrl with gait's nets | that / gait |",
             "|---|---|---|---|---|---|"]
    nan = float("nan")
    for task, m in minutes.items():
        g, c, n = m.get("gait"), m.get("cleanrl"), m.get("cleanrl-nets")
        ratio = f"{c / g:.1f}×" if g and c else ""
        nets = f"{n:.1f} | {n / g:.1f}×" if g and n else " | "
        lines.append(f"| {task} | {g or nan:.1f} | {c or nan:.1f} | {ratio} | {nets} |")
    with open(os.path.join(out, "speed.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--cleanrl", required=True, help="path of cleanrl's ppo_continuous_action.py")
    p.add_argument("--python", required=True, help="the python of cleanrl's venv")
    p.add_argument("--tasks", nargs="+", default=DEFAULT_TASKS)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timesteps", default="1e6")
    p.add_argument("--gait", default="target/release/gait")
    p.add_argument("--only", choices=["gait", "cleanrl", "cleanrl-nets"])
    args = p.parse_args()
    if not os.path.isfile(args.cleanrl):
        sys.exit(f"--cleanrl {args.cleanrl}: no such file")
    os.makedirs(args.out, exist_ok=True)
    for task in args.tasks:
        for who, cmd in commands(args, task).items():
            if args.only and who != args.only:
                continue
            if any(r[0] == task and r[1] == who and r[2] == str(args.seed) for r in done_runs(args.out)):
                continue
            cwd = os.path.join(args.out, "cleanrl") if who.startswith("cleanrl") else None
            if cwd:
                os.makedirs(cwd, exist_ok=True)
            wall = timed(cmd, os.path.join(os.path.abspath(args.out), f"{task}-{who}-seed{args.seed}.log"), cwd)
            with open(os.path.join(args.out, "speed.csv"), "a") as f:
                f.write(f"{task},{who},{args.seed},{int(float(args.timesteps))},{wall:.1f}\n")
            write_table(args.out, done_runs(args.out))
    write_table(args.out, done_runs(args.out))


if __name__ == "__main__":
    main()
