#!/usr/bin/env bash
# The MuJoCo backend's speed side by side (docs/benchmarks.md): `gait bench env --env cassie`
# on rapier and on MuJoCo, and the bare MuJoCo loop of shared/bench/mujoco_cassie.py (PD inside
# MuJoCo, one mj_step call per policy step) on the same libmujoco version (3.17.0, in a cached
# venv), interleaved, REPS times per timestep; prints each run and the medians.
# usage: scripts/bench_mujoco.sh [SECONDS=6] [REPS=3]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
secs="${1:-6}"; reps="${2:-3}"
cache="${GAIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gait}"
venv="$cache/bench-mujoco-3.17.0"
if [[ ! -f "$venv/.gait-installed" ]]; then
  rm -rf "$venv" && python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check mujoco==3.17.0 numpy
  touch "$venv/.gait-installed"
fi
bare="$root/../shared/bench/mujoco_cassie.py"
[[ -f "$bare" ]] || { echo "bench_mujoco: $bare not found (the team's shared/ checkout)" >&2; exit 2; }
gait="$root/target/release/gait"
xml="$root/assets/cassie-mujoco/cassie_fast.xml"
rate() { grep -o 'policy_steps_per_s=[0-9]*' | head -1 | cut -d= -f2; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for dt in 0.0005 0.002; do
  : >/tmp/bench_rapier; : >/tmp/bench_mujoco; : >/tmp/bench_bare
  for _ in $(seq "$reps"); do
    "$gait" bench env --env cassie --sim rapier --sim-dt "$dt" --seconds "$secs" | rate >>/tmp/bench_rapier
    "$gait" bench env --env cassie --sim mujoco --sim-dt "$dt" --seconds "$secs" | rate >>/tmp/bench_mujoco
    "$venv/bin/python" "$bare" "$xml" "$dt" "$secs" | rate >>/tmp/bench_bare
  done
  r=$(median </tmp/bench_rapier); m=$(median </tmp/bench_mujoco); b=$(median </tmp/bench_bare)
  echo "dt=$dt rapier=[$(paste -sd, /tmp/bench_rapier)] mujoco=[$(paste -sd, /tmp/bench_mujoco)] bare_mujoco=[$(paste -sd, /tmp/bench_bare)]"
  echo "dt=$dt median policy_steps_per_s: rapier=$r mujoco=$m bare_mujoco=$b mujoco/bare=$(awk "BEGIN {printf \"%.3f\", $m/$b}")"
done
