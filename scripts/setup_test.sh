#!/usr/bin/env bash
# Idempotent set-up for the tests beyond scripts/setup.sh: Debian's Chromium, which the replay
# page test drives headless (installed only when missing), the ONNX Runtime venv of
# scripts/setup_onnx.sh for the export tests, TensorBoard (scripts/setup_tensorboard.sh) for the
# README test, and Open MPI for the `mpi` feature's tests.
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
  echo "setup: installing chromium (Debian package) for the replay page test" >&2
  if [[ "$(id -u)" == 0 ]]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get install -y -qq chromium >/dev/null 2>&1 || {
    $sudo apt-get update -qq >/dev/null 2>&1 && $sudo apt-get install -y -qq chromium >/dev/null
  }
fi
echo "setup: chromium ready ($(command -v chromium))" >&2

# ONNX Runtime and onnx (Python venv) for the export tests.
"$(dirname "${BASH_SOURCE[0]}")/setup_onnx.sh"

# TensorBoard (Python venv): the README test reads event files with its reader.
"$(dirname "${BASH_SOURCE[0]}")/setup_tensorboard.sh"

# Open MPI and libclang (Debian packages) for the `mpi` feature the tests build with
# (rsmpi's bindings are generated with libclang); installed only when missing.
if ! command -v mpirun >/dev/null 2>&1 || ! pkg-config --exists ompi 2>/dev/null \
  || ! ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1; then
  echo "setup: installing Open MPI and libclang (Debian packages) for --features mpi" >&2
  if [[ "$(id -u)" == 0 ]]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get install -y -qq libopenmpi-dev openmpi-bin libclang-dev clang pkg-config >/dev/null 2>&1 || {
    $sudo apt-get update -qq >/dev/null 2>&1 &&
      $sudo apt-get install -y -qq libopenmpi-dev openmpi-bin libclang-dev clang pkg-config >/dev/null
  }
fi
echo "setup: Open MPI ready ($(mpirun --version 2>/dev/null | head -n1))" >&2
