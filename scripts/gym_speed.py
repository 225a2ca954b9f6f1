#!/usr/bin/env python3
"""Times gait's PPO against cleanrl's `ppo_continuous_action.py` on Gymnasium's MuJoCo tasks,
one run after the other on the same machine (issue 84; docs/benchmarks.md).

    scripts/gym_speed.py OUT --cleanrl PATH/ppo_continuous_action.py --python PY
                         [--tasks Hopper Walker2d ...] [--seed 1] [--timesteps 1e6]
                         [--gait target/release/gait] [--only gait|cleanrl|cleanrl-like|cleanrl-nets]

Per task it runs `gait train ppo --env gym/TASK-v5 --seed S --timesteps T` (the task's preset,
with the suite's task flags: scripts/gym_suite.py TASK_FLAGS) and then cleanrl's script as
`PY SCRIPT --env-id TASK-v4 --seed S --no-cuda --num-envs 2 --total-timesteps T --num-steps 1024`:
cleanrl at its defaults with the same number of envs as gait's 2 workers (its 2048-step rollout
split over them). Where gait's preset does other work per iteration than cleanrl's defaults
(steps per iteration, minibatches, epochs: HalfCheetah's rl-baselines3-zoo settings), a run
`cleanrl-like` gives cleanrl the preset's iteration and coefficients, read from `gait train ppo
--env gym/TASK-v5 --print-config` (cleanrl_like_flags); where the preset's networks differ
from cleanrl's 64x64 tanh (HalfCheetah's 256x256 ReLU), `cleanrl-nets` runs those flags on a
copy of the script (written to OUT) with gait's widths and activation, the same arithmetic per
update as gait's. Each wall clock is the script's clock around the process (start-up,
evaluations and, for gait, its checkpoints included).

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
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gym_suite import DEFAULT_TASKS, TASK_FLAGS  # noqa: E402

# cleanrl at its defaults with 2 envs: its 2048-step rollout split over them.
CLEANRL_DEFAULTS = ["--num-steps", "1024"]
# What sets cleanrl's work per iteration at those defaults: (steps per env, minibatches, epochs),
# and its networks (width, activation).
CLEANRL_WORK = (1024, 32, 10)
CLEANRL_NETS = (64, "Tanh")


def gait_preset(gait, task):
    """The settings `gait train ppo --env gym/TASK-v5` runs with, from its --print-config."""
    cmd = [gait, "train", "ppo", "--env", f"gym/{task}-v5", "--print-config"] + TASK_FLAGS.get(task, [])
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()}")
    return tomllib.loads(done.stdout)


def cleanrl_like_flags(preset):
    """cleanrl's flags for gait's preset: 2 envs of half its steps per iteration, as many
    minibatches as the preset's iteration holds (cleanrl's minibatches are then within a row
    or two of the preset's), its epochs and the coefficients cleanrl has a flag for.
    Returns (flags, work, nets) where work is (steps per env, minibatches, epochs) and nets
    (width, activation), to compare with cleanrl's defaults."""
    sampler, ppo, net = preset["sampler"], preset["ppo"], preset["net"]
    steps = sampler["num_steps"] // 2
    minibatches = max(1, round(sampler["num_steps"] / ppo["batch_size"]))
    work = (steps, minibatches, ppo["epochs"])
    flags = [
        "--num-steps", str(steps), "--num-minibatches", str(minibatches),
        "--update-epochs", str(ppo["epochs"]), "--learning-rate", repr(ppo["a_lr"]),
        "--gamma", repr(sampler["discount"]), "--gae-lambda", repr(sampler["gae_lambda"]),
        "--clip-coef", repr(ppo["clip"]), "--ent-coef", repr(ppo["entropy_coeff"]),
        "--max-grad-norm", repr(ppo["grad_clip"]),
        # cleanrl anneals to 0; gait's lr_decay 1 is that, any other value is held constant.
        "--anneal-lr" if ppo["lr_decay"] == 1.0 else "--no-anneal-lr",
        "--clip-vloss" if ppo["value_clip"] > 0 else "--no-clip-vloss",
        "--norm-adv" if ppo["normalize_advantages"] else "--no-norm-adv",
    ]
    widths = set(net["layers"])
    if len(widths) != 1 or net["nonlinearity"] != net["critic_nonlinearity"]:
        sys.exit(f"the preset's networks ({net['layers']}, {net['nonlinearity']} / "
                 f"{net['critic_nonlinearity']}) are not ones cleanrl_with_nets can copy")
    activation = {"tanh": "Tanh", "relu": "ReLU"}.get(net["nonlinearity"])
    if activation is None:
        sys.exit(f"no torch module for the preset's nonlinearity {net['nonlinearity']!r}")
    return flags, work, (widths.pop(), activation)


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
    ]
    runs = {"gait": gait, "cleanrl": cleanrl + CLEANRL_DEFAULTS}
    like, work, nets = cleanrl_like_flags(gait_preset(args.gait, task))
    if work != CLEANRL_WORK or nets != CLEANRL_NETS:
        runs["cleanrl-like"] = cleanrl + like
    # The patched copy is written only when its run can happen.
    if nets != CLEANRL_NETS and args.only in (None, "cleanrl-nets"):
        patched = cleanrl_with_nets(args.cleanrl, args.out, *nets)
        runs["cleanrl-nets"] = [args.python, os.path.abspath(patched)] + cleanrl[2:] + like
    return runs


def write_table(out, rows):
    minutes = {}
    for task, who, _seed, steps, wall in rows:
        minutes.setdefault(task, {})[who] = float(wall) / int(steps) * 1e6 / 60
    others = ["cleanrl", "cleanrl-like", "cleanrl-nets"]
    lines = ["| task | gait | cleanrl (defaults) | that / gait | cleanrl like gait's preset "
             "| that / gait | the same with gait's nets | that / gait |",
             "|---|---|---|---|---|---|---|---|"]
    for task, m in minutes.items():
        g = m.get("gait")
        cells = [f"{g:.1f}" if g else ""]
        for who in others:
            c = m.get(who)
            cells += [f"{c:.1f}" if c else "", f"{c / g:.1f}×" if c and g else ""]
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
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
    p.add_argument("--only", choices=["gait", "cleanrl", "cleanrl-like", "cleanrl-nets"])
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
