#!/usr/bin/env bash
# Idempotent set-up of ONNX Runtime for `gait eval --onnx` and the export tests: a venv with
# PyPI's onnxruntime 1.32.0, onnx 1.23.2, numpy and mujoco 3.17.0 (the Python bindings of the
# libmujoco gait links; scripts/sidecar_mujoco.py runs an export on the lab's model with
# them), cached per user like libtorch:
#   ${GAIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gait}/onnx-1.32.0
# gait loads the wheel's libonnxruntime.so.1.32.0 at run time (the `ort` crate, load-dynamic);
# the repo-local link `.onnxruntime` points at the wheel's capi/ directory holding it, and the
# Python side (`onnx.checker`, `onnxruntime.InferenceSession`) checks exported files in tests.
# A marker file is written only after a successful install; a venv of an earlier version of this
# script (without mujoco) gets mujoco added.
set -euo pipefail

ORT_VERSION=1.32.0
ONNX_VERSION=1.23.2
GYMNASIUM_VERSION=1.2.2
MUJOCO_VERSION=3.17.0
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${GAIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gait}"
venv="$cache/onnx-$ORT_VERSION"
marker="$venv/.gait-installed"
if [[ ! -f "$marker" ]]; then
  echo "setup: installing onnxruntime $ORT_VERSION and onnx $ONNX_VERSION into $venv" >&2
  mkdir -p "$cache"
  exec 7>"$cache/.lock-onnx"
  flock 7
  if [[ ! -f "$marker" ]]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
    "$venv/bin/pip" install --quiet --disable-pip-version-check --only-binary=:all: \
      "onnxruntime==$ORT_VERSION" "onnx==$ONNX_VERSION" numpy
    touch "$marker"
  fi
  flock -u 7
fi
mujoco_marker="$venv/.gait-installed-mujoco-$MUJOCO_VERSION"
if [[ ! -f "$mujoco_marker" ]]; then
  echo "setup: installing mujoco $MUJOCO_VERSION (Python) into $venv" >&2
  exec 7>"$cache/.lock-onnx"
  flock 7
  if [[ ! -f "$mujoco_marker" ]]; then
    "$venv/bin/pip" install --quiet --disable-pip-version-check --only-binary=:all: \
      "mujoco==$MUJOCO_VERSION"
    touch "$mujoco_marker"
  fi
  flock -u 7
fi
# Gymnasium with its MuJoCo extra (the pinned version whose models ship in
# assets/gymnasium-mujoco; mujoco stays at the version gait links): the reference the gym envs'
# step-for-step test compares against.
gym_marker="$venv/.gait-installed-gymnasium-mujoco-$GYMNASIUM_VERSION"
if [[ ! -f "$gym_marker" ]]; then
  echo "setup: installing gymnasium $GYMNASIUM_VERSION (Python) into $venv" >&2
  exec 7>"$cache/.lock-onnx"
  flock 7
  if [[ ! -f "$gym_marker" ]]; then
    "$venv/bin/pip" install --quiet --disable-pip-version-check --only-binary=:all: \
      "gymnasium[mujoco]==$GYMNASIUM_VERSION" "mujoco==$MUJOCO_VERSION"
    touch "$gym_marker"
  fi
  flock -u 7
fi
capi="$(ls -d "$venv"/lib/python3*/site-packages/onnxruntime/capi | head -n1)"
if [[ ! -f "$capi/libonnxruntime.so.$ORT_VERSION" ]]; then
  echo "setup: $capi has no libonnxruntime.so.$ORT_VERSION; delete $venv and rerun" >&2
  exit 1
fi
if [[ "$(readlink "$root/.onnxruntime" 2>/dev/null || true)" != "$capi" ]]; then
  ln -sfn "$capi" "$root/.onnxruntime"
fi
echo "setup: onnxruntime ready at $capi" >&2
