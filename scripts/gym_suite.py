#!/usr/bin/env python3
"""Runs gait's PPO on Gymnasium's MuJoCo tasks, seed by seed, and tabulates the returns against
the published PPO figures (issue 84; docs/benchmarks.md).

    scripts/gym_suite.py OUT [--tasks Hopper Walker2d ...] [--seeds 0 1 2] [--timesteps 1e6]
                             [--gait target/release/gait] [--workers N] [--extra "--flag v"]
                             [--gymnasium-defaults]

Each task x seed is one `gait train ppo --env gym/TASK-v5 --seed S` (the task's preset: the
Gymnasium one, HalfCheetah's own; Ant without the contact forces in its observation, as the published figures' Ant: TASK_FLAGS),
one after another, logged under OUT/runs. A run already complete there is read, not rerun,
so the script continues where an interrupted one stopped. Per run it records:

* `return_last10`: the mean undiscounted return of the last 10 training episodes, from
  `progress.csv` (each row's `Train/Return` is its iteration's mean over
  `Time/Timesteps per Iteration / Train/Episode Length` episodes; whole iterations are taken
  from the end until they hold at least 10 episodes, weighted by their episode counts);
* `return_eval`: the final deterministic evaluation of the last weights (`summary.json`);
* `wall_s` (the script's clock around the process) and `steps_per_s`.

Per task it also gives Tianshou's own metric (its README's reward-metric note: the maximum
over the first 1M steps of the test return averaged over seeds): at every 50k steps each
seed's latest evaluation (`Test/Return`, deterministic, every 10 iterations), averaged over
the seeds, and the best of those means.

It writes OUT/results.csv (one row per run), OUT/results.md (per task: mean and spread over
seeds beside the published figures) and OUT/curves.svg (training return against steps, one
line per seed, the published figure as a dashed line). Standard library only.
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import time

# Published PPO returns at 1M steps. Tianshou: thu-ml/tianshou
# examples/mujoco/README.md (10 seeds, v3 tasks), the figure issue 84 sets as the bar.
# cleanrl: vwxyzjn/cleanrl docs/benchmark/ppo_continuous_action.md (openrlbenchmark, tag pr-424,
# v4 tasks, mean over seeds of the episodic return; no Ant). SB3: DLR-RM/rl-baselines3-zoo
# benchmark.md (one run per task, v3 tasks, mean of a deterministic evaluation; no Humanoid).
PUBLISHED = {
    "Hopper": {"tianshou": 2609, "cleanrl": 2383, "sb3": 2410},
    "Walker2d": {"tianshou": 3589, "cleanrl": 2288, "sb3": 3479},
    "HalfCheetah": {"tianshou": 5784, "cleanrl": 1443, "sb3": 5819},
    "Ant": {"tianshou": 3258, "sb3": 1327},
    "Humanoid": {"tianshou": 787, "cleanrl": 716},
}

DEFAULT_TASKS = ["Hopper", "Walker2d", "HalfCheetah", "Ant", "Humanoid"]

# Flags per task that make gait's v5 task observe what the published figures' tasks observed
# (docs/decisions.md D-052). Ant: Ant-v3's contact forces read zero under MuJoCo 2.0 and later
# (openai/gym#1541), so Tianshou's and SB3's Ant trained without them, and Ant-v4, cleanrl's,
# leaves them out by default; Ant-v5 observes them (Gymnasium's
# `include_cfrc_ext_in_observation=True`, gait's default too). `--gymnasium-defaults` drops these.
TASK_FLAGS = {"Ant": ["--include-cfrc-ext-in-observation", "false"]}


def run_dir(out, task, seed):
    """The one run directory of task x seed under OUT/runs, or None."""
    base = os.path.join(out, "runs", "gym", f"{task}-v5")
    if not os.path.isdir(base):
        return None
    found = []
    for name in sorted(os.listdir(base)):
        if not name.startswith(f"suite-seed{seed}"):
            continue
        for stamp in sorted(os.listdir(os.path.join(base, name))):
            found.append(os.path.join(base, name, stamp))
    return found[-1] if found else None


def completed(path):
    summary = os.path.join(path, "summary.json") if path else ""
    if not os.path.isfile(summary):
        return False
    with open(summary) as f:
        return json.load(f).get("status") == "completed"


def last_episodes_return(rows, episodes=10):
    """Mean return of the last `episodes` training episodes, from whole iterations."""
    total, count = 0.0, 0.0
    for row in reversed(rows):
        length = float(row["Train/Episode Length"] or "nan")
        steps = float(row["Time/Timesteps per Iteration"])
        ret = float(row["Train/Return"] or "nan")
        if not (length > 0 and ret == ret):
            continue
        n = steps / length
        total += ret * n
        count += n
        if count >= episodes:
            break
    return total / count if count else float("nan")


def train(args, task, seed):
    cmd = [
        args.gait, "train", "ppo", "--env", f"gym/{task}-v5", "--seed", str(seed),
        "--timesteps", str(int(float(args.timesteps))), "--logdir", os.path.join(args.out, "runs"),
        "--run-name", f"suite-seed{seed}",
    ]
    if args.workers:
        cmd += ["--workers", str(args.workers)]
    if not args.gymnasium_defaults:
        cmd += TASK_FLAGS.get(task, [])
    cmd += args.extra.split()
    print("+", " ".join(cmd), flush=True)
    start = time.monotonic()
    with open(os.path.join(args.out, f"{task}-seed{seed}.log"), "w") as log:
        rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT)
    wall = time.monotonic() - start
    if rc != 0:
        sys.exit(f"{task} seed {seed}: gait exited {rc}; see {args.out}/{task}-seed{seed}.log")
    with open(os.path.join(args.out, "wall.csv"), "a") as f:
        f.write(f"{task},{seed},{wall:.1f}\n")


def walls(out):
    path = os.path.join(out, "wall.csv")
    got = {}
    if os.path.isfile(path):
        with open(path) as f:
            for task, seed, wall in csv.reader(f):
                got[(task, int(seed))] = float(wall)
    return got


def measure(args, task, seed, wall):
    path = run_dir(args.out, task, seed)
    with open(os.path.join(path, "progress.csv")) as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(path, "summary.json")) as f:
        summary = json.load(f)
    steps = summary["total_timesteps"]
    final = summary.get("final_eval") or {}
    return {
        "task": task,
        "seed": seed,
        "steps": steps,
        "return_last10": last_episodes_return(rows),
        "return_eval": final.get("mean_return", float("nan")),
        "wall_s": wall,
        "steps_per_s": steps / wall if wall else float("nan"),
        "curve": [(int(r["Time/Total Timesteps"]), float(r["Train/Return"] or "nan")) for r in rows],
        "evals": [(int(r["Time/Total Timesteps"]), float(r["Test/Return"]))
                  for r in rows if r.get("Test/Return")],
    }


def best_seed_mean(rs, every=50_000):
    """Tianshou's metric: the best, over marks every `every` steps, of the seeds' mean latest
    evaluation at that mark (marks before every seed has one are skipped)."""
    best = float("nan")
    for mark in range(every, max(r["steps"] for r in rs) + 1, every):
        latest = [[y for x, y in r["evals"] if x <= mark] for r in rs]
        if all(latest):
            m = sum(ys[-1] for ys in latest) / len(latest)
            best = m if not best >= m else best
    return best


def mean_std(xs):
    m = sum(xs) / len(xs)
    return m, (sum((x - m) ** 2 for x in xs) / len(xs)) ** 0.5


def write_tables(out, results):
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["task", "seed", "steps", "return_last10", "return_eval", "wall_s", "steps_per_s"])
        for r in results:
            w.writerow([r["task"], r["seed"], r["steps"], f"{r['return_last10']:.1f}",
                        f"{r['return_eval']:.1f}", f"{r['wall_s']:.1f}", f"{r['steps_per_s']:.0f}"])
    lines = [
        "| task | seeds | gait, last 10 episodes | gait, deterministic eval | gait, best seed-mean eval "
        "| Tianshou | cleanrl | SB3 | minutes per 1M steps |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for task in dict.fromkeys(r["task"] for r in results):
        rs = [r for r in results if r["task"] == task]
        m10, s10 = mean_std([r["return_last10"] for r in rs])
        me, se = mean_std([r["return_eval"] for r in rs])
        minutes = mean_std([r["wall_s"] / r["steps"] * 1e6 / 60 for r in rs])[0]
        pub = [str(PUBLISHED.get(task, {}).get(k, "")) for k in ("tianshou", "cleanrl", "sb3")]
        lines.append(f"| {task} | {len(rs)} | {m10:.0f} ± {s10:.0f} | {me:.0f} ± {se:.0f} | "
                     f"{best_seed_mean(rs):.0f} | {' | '.join(pub)} | {minutes:.1f} |")
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def write_svg(out, results):
    tasks = list(dict.fromkeys(r["task"] for r in results))
    w, h, pad = 360, 240, 40
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w * len(tasks)}" height="{h}" '
           'font-family="sans-serif" font-size="11">']
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]
    for i, task in enumerate(tasks):
        rs = [r for r in results if r["task"] == task]
        xmax = max(x for r in rs for x, _ in r["curve"])
        ys = [y for r in rs for _, y in r["curve"] if y == y]
        pub = PUBLISHED.get(task, {}).get("tianshou")
        ymin, ymax = min(ys + [0]), max(ys + ([pub] if pub else []))
        ymax = ymax if ymax > ymin else ymin + 1
        sx = lambda x: i * w + pad + (w - 2 * pad) * x / xmax
        sy = lambda y: h - pad - (h - 2 * pad) * (y - ymin) / (ymax - ymin)
        svg.append(f'<text x="{i * w + w / 2}" y="16" text-anchor="middle">{task}</text>')
        svg.append(f'<rect x="{i * w + pad}" y="{pad}" width="{w - 2 * pad}" height="{h - 2 * pad}" '
                   'fill="none" stroke="#999"/>')
        svg.append(f'<text x="{i * w + pad}" y="{h - pad + 14}">0</text>')
        svg.append(f'<text x="{i * w + w - pad}" y="{h - pad + 14}" text-anchor="end">{xmax:.3g} steps</text>')
        svg.append(f'<text x="{i * w + pad - 4}" y="{pad + 4}" text-anchor="end">{ymax:.0f}</text>')
        svg.append(f'<text x="{i * w + pad - 4}" y="{h - pad}" text-anchor="end">{ymin:.0f}</text>')
        for k, r in enumerate(rs):
            pts = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in r["curve"] if y == y)
            svg.append(f'<polyline points="{pts}" fill="none" stroke="{colours[k % 5]}" '
                       f'stroke-width="1.2"><title>seed {r["seed"]}</title></polyline>')
        if pub:
            svg.append(f'<line x1="{sx(0):.1f}" x2="{sx(xmax):.1f}" y1="{sy(pub):.1f}" y2="{sy(pub):.1f}" '
                       'stroke="#000" stroke-dasharray="4 3"><title>Tianshou PPO at 1M</title></line>')
    svg.append("</svg>")
    with open(os.path.join(out, "curves.svg"), "w") as f:
        f.write("\n".join(svg) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--tasks", nargs="+", default=DEFAULT_TASKS)
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--timesteps", default="1e6")
    p.add_argument("--gait", default="target/release/gait")
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--extra", default="", help="more gait flags, e.g. \"--scale-rewards false\"")
    p.add_argument("--gymnasium-defaults", action="store_true",
                   help="every task at Gymnasium's v5 keyword arguments (no TASK_FLAGS)")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results = []
    for task in args.tasks:
        for seed in args.seeds:
            if not completed(run_dir(args.out, task, seed)):
                train(args, task, seed)
            wall = walls(args.out).get((task, seed), float("nan"))
            results.append(measure(args, task, seed, wall))
    write_tables(args.out, results)
    write_svg(args.out, results)


if __name__ == "__main__":
    main()
