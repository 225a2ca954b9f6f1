#!/usr/bin/env bash
# `make train-terrain` (issue 83): the shipped walker (pretrained/cassie-walk) continued blind on
# the terrain mix (rough ground, slopes, stairs, random flights) with adaptive levels per kind.
# Rerunning continues the latest run where it stopped (Ctrl-C saves it); TIMESTEPS=30e6 trains
# longer, GAIT=path runs another build, and extra arguments go to `gait train ppo`. Why these
# flags: docs/decisions.md D-050 (levels), D-062 (--terrain-forward), D-065
# (--terrain-promote), D-067 (stairs both ways), D-068 (--best-by last), D-069
# (--terrain-forward-max).
set -euo pipefail
cd "$(dirname "$0")/.."
gait=${GAIT:-./target/release/gait}
base=logs/cassie/terrain-base
runs=logs/cassie/cassie-terrain
if [ ! -f "$base/resume.safetensors" ]; then
  rm -rf "$base.tmp" && mkdir -p "$base.tmp" && cp pretrained/cassie-walk/* "$base.tmp"/
  rm -rf "$base" && mv "$base.tmp" "$base"
fi
latest=$base
for dir in "$runs"/*/; do
  [ -f "$dir/resume.safetensors" ] && latest=${dir%/}
done
exec "$gait" train ppo --previous "$latest" --run-name cassie-terrain --logdir logs \
  --terrain mix --terrain-levels --terrain-difficulty 1 --terrain-forward 1.0 --terrain-forward-max 1.5 \
  --terrain-promote 0.6 --best-by last --time-limit 0 --timesteps "${TIMESTEPS:-25e6}" "$@"
