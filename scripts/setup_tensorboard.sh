#!/usr/bin/env bash
# Idempotent set-up of TensorBoard 2.21.0 (PyPI) in a venv cached per user like libtorch:
#   ${GAIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gait}/tensorboard-2.21.0
# `make test` runs it so that the README test reads a run's event files with TensorBoard's own
# reader (scripts/check_tensorboard.py), which is what `tensorboard --logdir logs` shows.
# A marker file is written only after a successful install. Prints the venv's python.
set -euo pipefail

TB_VERSION=2.21.0
cache="${GAIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gait}"
venv="$cache/tensorboard-$TB_VERSION"
marker="$venv/.gait-installed"
if [[ ! -f "$marker" ]]; then
  echo "setup: installing tensorboard $TB_VERSION into $venv" >&2
  mkdir -p "$cache"
  exec 7>"$cache/.lock-tensorboard"
  flock 7
  if [[ ! -f "$marker" ]]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --only-binary=:all: \
      "tensorboard==$TB_VERSION" >&2
    touch "$marker"
  fi
  flock -u 7
fi
echo "setup: tensorboard ready in $venv" >&2
