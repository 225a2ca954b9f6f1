#!/usr/bin/env bash
# The course check of an omnidirectional Cassie policy (docs/cassie.md "Walking in every
# direction"): `gait eval --course` over a scripted course that changes command every 3-4 s
# (walk, walking turn, turn in place, sidestep both ways, backward, slow walk, stop), on
# gait's rapier model and on the lab's MuJoCo model (0.5 ms), 5 episodes each. One line per
# leg: the falls during it, the episodes that reached it past its first second, then their
# means of forward speed, lateral speed and yaw rate from 1 s into the leg on (each with its
# worst episode's error), and whether the leg is met: every episode reached it, none fell in
# it, and every axis is within the task's tolerance (0.15 m/s, 0.1 rad/s; standing:
# |speed| <= 0.1).
#
# usage: scripts/check_course.sh RUN [extra gait eval flags, e.g. --latest or --push 0.45]
# GAIT_CHECK_EPISODES, GAIT_CHECK_SIMS and GAIT_COURSE change 5, "mujoco rapier" and the course.
set -euo pipefail
run="$1"; shift
episodes="${GAIT_CHECK_EPISODES:-5}"
sims="${GAIT_CHECK_SIMS:-mujoco rapier}"
course="${GAIT_COURSE:-4:1,0,0 4:0.6,0,0.3 4:0,0,-0.4 3:0,0.2,0 4:-0.3,0,0 3:0,-0.2,0 4:0.5,0,-0.3 4:0,0,0.4 3:0,0,0}"
gait="$(dirname "${BASH_SOURCE[0]}")/../target/release/gait"
printf '%-7s %-4s %-14s %-6s %-8s %-16s %-16s %-16s %s\n' sim leg command falls reached "forward (err)" "lateral (err)" "yaw rate (err)" ok
for sim in $sims; do
  dt=(); [[ "$sim" == mujoco ]] && dt=(--sim-dt 0.0005)
  # shellcheck disable=SC2086
  "$gait" eval --path "$run" --course $course --episodes "$episodes" --sim "$sim" "${dt[@]}" "$@" |
    awk -v sim="$sim" -v episodes="$episodes" '
    function abs(v) { return v < 0 ? -v : v }
    /^episode/ { ran++ }
    /^  leg [0-9]+:/ {
      leg = $2; sub(":", "", leg); legs = (leg + 1 > legs) ? leg + 1 : legs
      cmd[leg] = $6; sub(",$", "", cmd[leg]); sub(":$", "", cmd[leg]); sub(";$", "", cmd[leg])
      if ($0 ~ /fell at/) { fell[leg]++; falls++ }
      if ($0 ~ /not reached/) next
      split(cmd[leg], c, ",")
      reached[leg]++
      for (i = 1; i <= NF; i++) {
        v = $(i+1); sub(",", "", v); v += 0
        if ($i == "forward_speed") { f[leg] += v; if (abs(v - c[1]) > ef[leg]) ef[leg] = abs(v - c[1]) }
        if ($i == "lateral_speed") { l[leg] += v; if (abs(v - c[2]) > el[leg]) el[leg] = abs(v - c[2]) }
        if ($i == "yaw_rate") { w[leg] += v; if (abs(v - c[3]) > ew[leg]) ew[leg] = abs(v - c[3]) }
      }
    }
    END {
      if (ran == 0) { printf "%-7s no episode ran\n", sim; exit 1 }
      for (k = 0; k < legs; k++) {
        n = reached[k]
        if (n == 0) { printf "%-7s %-4d %-14s %d/%-4d 0/%-6d not reached%18s no\n", sim, k, cmd[k], fell[k], episodes, episodes, ""; continue }
        split(cmd[k], c, ",")
        stand = (c[1] == 0 && c[2] == 0 && c[3] == 0)
        ok = (n == episodes && fell[k] == 0 && ef[k] <= (stand ? 0.1 : 0.15) && el[k] <= (stand ? 0.1 : 0.15) && ew[k] <= 0.1) ? "yes" : "no"
        printf "%-7s %-4d %-14s %d/%-4d %d/%-6d %6.3f (%.3f)   %6.3f (%.3f)   %6.3f (%.3f)   %s\n", sim, k, cmd[k], fell[k], episodes, n, episodes, f[k] / n, ef[k], l[k] / n, el[k], w[k] / n, ew[k], ok
      }
      printf "%-7s falls: %d of %d episodes\n", sim, falls, episodes
    }'
done
