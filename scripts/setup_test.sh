#!/usr/bin/env bash
# Idempotent set-up for the tests beyond scripts/setup.sh: Debian's Chromium, which the replay
# page test drives headless (installed only when missing), and the ONNX Runtime venv of
# scripts/setup_onnx.sh for the export tests.
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
