#!/usr/bin/env bash
# The transfer check of a Cassie policy (README "Results", docs/cassie.md): `gait eval` on gait's rapier model
# and on the lab's MuJoCo model (0.5 ms), at 1.0, 0.5 and 0 m/s, 5 episodes of 500 steps, then
# the same with pushes of up to 0.45 m/s (issue 23's 15 N·s on the 33.3 kg robot), of up to 1 m/s
# (the preset's training pushes, --push 1.0) and of exactly 1 m/s (--push-exact, the harder check).
# One line per case: falls, forward speed (min-max over episodes), largest |lateral speed|, mean
# pelvis height.
#
# usage: scripts/check_transfer.sh RUN [extra gait eval flags, e.g. --latest or --seed 3]
# GAIT_CHECK_EPISODES and GAIT_CHECK_STEPS change the 5 episodes of 500 steps (the README test
# runs it short); GAIT_CHECK_PUSHES picks the push cases: 0 (none), a top speed V (--push V) or
# exact (--push 1.0 --push-exact); default "0 0.45 1.0 exact".
set -euo pipefail
run="$1"; shift
episodes="${GAIT_CHECK_EPISODES:-5}"
steps="${GAIT_CHECK_STEPS:-500}"
pushes="${GAIT_CHECK_PUSHES:-0 0.45 1.0 exact}"
gait="$(dirname "${BASH_SOURCE[0]}")/../target/release/gait"
printf '%-7s %-6s %-8s %-6s %-13s %-9s %s\n' sim push command falls forward "|lateral|" height
for push in $pushes; do
  for sim in "mujoco --sim-dt 0.0005" "rapier"; do
    for c in 1,0,0 0.5,0,0 0,0,0; do
      pflag=()
      case "$push" in
        0) ;;
        exact) pflag=(--push 1.0 --push-exact) ;;
        *) pflag=(--push "$push") ;;
      esac
      # shellcheck disable=SC2086
      "$gait" eval --path "$run" --command "$c" --traj-len "$steps" --episodes "$episodes" --sim $sim \
        "${pflag[@]}" "$@" | awk -v steps="$steps" -v sim="${sim%% *}" -v push="$push" -v c="${c%%,*}" '
        /^episode/ {
          n++; for (i = 1; i <= NF; i++) {
            if ($i == "length") { l = $(i+1) + 0; if (l < steps) falls++ }
            if ($i == "forward_speed") { f = $(i+1) + 0; if (n == 1 || f < lo) lo = f; if (n == 1 || f > hi) hi = f }
            if ($i == "lateral_speed") { y = $(i+1) + 0; if (y < 0) y = -y; if (y > lat) lat = y }
            if ($i == "pelvis_height") { h += $(i+1) + 0 }
          }
        }
        END { printf "%-7s %-6s %-8s %d/%-4d %.3f-%.3f   %.3f     %.3f\n", sim, push, c, falls, n, lo, hi, lat, h / n }'
    done
  done
done
