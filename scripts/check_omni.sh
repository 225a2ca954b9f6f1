#!/usr/bin/env bash
# The omnidirectional check of a Cassie policy, now `gait check` (docs/cassie.md "Walking in
# every direction"); this script keeps the older spelling and its environment variables.
#
# usage: scripts/check_omni.sh RUN [extra gait check flags, e.g. --latest or --push 0.45]
# GAIT_CHECK_EPISODES, GAIT_CHECK_STEPS and GAIT_CHECK_SIMS change 5, 1000 and "mujoco rapier";
# GAIT_CHECK_COMMANDS (space-separated x,y,turn) replaces the task's ten commands.
# Exit code 3 when a cell is not within (as `gait check`).
set -euo pipefail
run="$1"; shift
sims="${GAIT_CHECK_SIMS:-mujoco rapier}"
commands=()
for c in ${GAIT_CHECK_COMMANDS:-}; do commands+=(--command "$c"); done
exec "$(dirname "${BASH_SOURCE[0]}")/../target/release/gait" check --path "$run" \
  --episodes "${GAIT_CHECK_EPISODES:-5}" --traj-len "${GAIT_CHECK_STEPS:-1000}" \
  --sims "${sims// /,}" "${commands[@]}" "$@"
