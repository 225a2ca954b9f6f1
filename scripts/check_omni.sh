#!/usr/bin/env bash
# The omnidirectional check of a Cassie policy (docs/cassie.md "Walking in every direction"):
# `gait eval` at the ten commands of the omnidirectional walking task, on gait's rapier model
# and on the lab's MuJoCo model (0.5 ms); 5 episodes of 1000 steps (20 s) each. One line per
# case: falls, then the means over the episodes of forward speed, lateral speed and yaw rate
# (each with its worst episode's error against the command), and whether every axis is within
# the task's tolerance (0.15 m/s, 0.1 rad/s; standing: |speed| <= 0.1). Last, the count of
# cells within and of falls over all episodes.
#
# usage: scripts/check_omni.sh RUN [extra gait eval flags, e.g. --latest or --push 1.0]
# GAIT_CHECK_EPISODES, GAIT_CHECK_STEPS and GAIT_CHECK_SIMS change 5, 1000 and "mujoco rapier";
# GAIT_CHECK_COMMANDS (space-separated x,y,turn) replaces the task's ten commands, e.g. to check
# commands the task does not list.
set -euo pipefail
run="$1"; shift
episodes="${GAIT_CHECK_EPISODES:-5}"
steps="${GAIT_CHECK_STEPS:-1000}"
sims="${GAIT_CHECK_SIMS:-mujoco rapier}"
commands="${GAIT_CHECK_COMMANDS:-1,0,0 0.5,0,0 -0.3,0,0 0,0.2,0 0,-0.2,0 0,0,0.4 0,0,-0.4 0.6,0,0.3 0.6,0,-0.3 0,0,0}"
gait="$(dirname "${BASH_SOURCE[0]}")/../target/release/gait"
printf '%-7s %-12s %-6s %-16s %-16s %-16s %s\n' sim command falls "forward (err)" "lateral (err)" "yaw rate (err)" ok
cells="$(mktemp)"; trap 'rm -f "$cells"' EXIT
for sim in $sims; do
  dt=(); [[ "$sim" == mujoco ]] && dt=(--sim-dt 0.0005)
  for c in $commands; do
    "$gait" eval --path "$run" --command "$c" --traj-len "$steps" --episodes "$episodes" --sim "$sim" \
      "${dt[@]}" "$@" | awk -v steps="$steps" -v sim="$sim" -v c="$c" '
      function abs(v) { return v < 0 ? -v : v }
      BEGIN { split(c, cmd, ",") }
      /^episode/ {
        n++; for (i = 1; i <= NF; i++) {
          v = $(i+1) + 0
          if ($i == "length" && v < steps) falls++
          if ($i == "forward_speed") { f += v; if (abs(v - cmd[1]) > ef) ef = abs(v - cmd[1]) }
          if ($i == "lateral_speed") { l += v; if (abs(v - cmd[2]) > el) el = abs(v - cmd[2]) }
          if ($i == "yaw_rate") { w += v; if (abs(v - cmd[3]) > ew) ew = abs(v - cmd[3]) }
        }
      }
      END {
        if (n == 0) { printf "%-7s %-12s no episode ran\n", sim, c; exit 1 }
        stand = (cmd[1] == 0 && cmd[2] == 0 && cmd[3] == 0)
        ok = (falls == 0 && ef <= (stand ? 0.1 : 0.15) && el <= (stand ? 0.1 : 0.15) && ew <= 0.1) ? "yes" : "no"
        printf "%-7s %-12s %d/%-4d %6.3f (%.3f)   %6.3f (%.3f)   %6.3f (%.3f)   %s\n", sim, c, falls, n, f / n, ef, l / n, el, w / n, ew, ok
      }'
  done
done | tee "$cells"
awk '{ n++; if ($NF == "yes") ok++; split($3, f, "/"); falls += f[1]; eps += f[2] }
  END { printf "within: %d of %d cells; falls: %d of %d episodes\n", ok, n, falls, eps }' "$cells"
