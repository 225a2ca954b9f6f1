#!/usr/bin/env bash
# The robot-grade checks of a Cassie walking policy (issue 80; README "Results"): `gait check`
# on both models (the lab's MuJoCo at 0.5 ms, rapier at 2 ms), 5 episodes of 20 s per cell, as
# the task asks them, then the task's course. One line per check: the check's own summary
# (`within: N of M cells; falls: F of E episodes`), and each check's full table in OUT.
#
#   nominal        the ten commands
#   push 1.0       pushes of up to 1 m/s every 2-5 s in a random horizontal direction
#   push exact     every push exactly 1 m/s (the issue asks >= 80 % of episodes without a fall)
#   latency 20ms   one policy step of sensing latency
#   sensor noise   the reference's sensor noise levels (with the run's IMU bias)
#   course         the task's 33 s course, leg by leg
#
# usage: scripts/check_robot.sh RUN OUT [extra gait check flags, e.g. --latest or --seed 3]
# Exit status: 0 when every check ran (whatever it found; read the lines), 1 otherwise.
set -uo pipefail
run="$1"; out="$2"; shift 2
mkdir -p "$out"
gait="$(dirname "${BASH_SOURCE[0]}")/../target/release/gait"
status=0
check() {
  local name="$1"; shift
  "$gait" check --path "$run" "$@" > "$out/$name.txt" 2>&1
  local rc=$?
  # 0: every cell within; 3: some cell not within; anything else: the check did not run.
  if [[ $rc -ne 0 && $rc -ne 3 ]]; then status=1; fi
  printf '%-13s exit %d  %s\n' "$name" "$rc" "$(grep -E '^within' "$out/$name.txt" | tail -1)"
}
check nominal "$@"
check push-1.0 --push 1.0 "$@"
check push-exact --push 1.0 --push-exact "$@"
check latency-20ms --latency 0.02 "$@"
check sensor-noise --sensor-noise 1 "$@"
check course --course "$@"
exit $status
