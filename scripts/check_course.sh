#!/usr/bin/env bash
# The course check of an omnidirectional Cassie policy, now `gait check --course` (docs/cassie.md
# "Walking in every direction"); this script keeps the older spelling and its environment
# variables.
#
# usage: scripts/check_course.sh RUN [extra gait check flags, e.g. --latest or --push 0.45]
# GAIT_CHECK_EPISODES, GAIT_CHECK_SIMS and GAIT_COURSE change 5, "mujoco rapier" and the course.
# Exit code 3 when a leg is not within (as `gait check`).
set -euo pipefail
run="$1"; shift
sims="${GAIT_CHECK_SIMS:-mujoco rapier}"
# shellcheck disable=SC2206
course=(${GAIT_COURSE:-})
exec "$(dirname "${BASH_SOURCE[0]}")/../target/release/gait" check --path "$run" \
  --episodes "${GAIT_CHECK_EPISODES:-5}" --sims "${sims// /,}" "$@" --course "${course[@]}"
