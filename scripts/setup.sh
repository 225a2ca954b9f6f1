#!/usr/bin/env bash
# Idempotent set-up of libtorch for tch 0.26 (PyTorch 2.13.0 wheels from PyPI).
#
# * The venv lives in a per-user cache dir so every clone of the project reuses it:
#   ${GAIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gait}/torch-2.13.0-{cpu,cuda}
# * Flavour: "cuda" (full wheel, 4.7 GB) when `nvidia-smi` sees a GPU, else "cpu" (lean, 1.3 GB:
#   torch without deps + the two CUDA runtime libs libtorch_cpu.so links against).
#   Override with GAIT_TORCH=cpu|cuda.
# * The repo-local symlink `.libtorch` points at the venv's torch dir; `.cargo/config.toml`
#   sets LIBTORCH to it (relative), so plain `cargo build/test/run` work after this script.
# * A marker file is written only after a successful install, so an interrupted install is redone.
set -euo pipefail

TORCH_VERSION=2.13.0
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${GAIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gait}"

flavour="${GAIT_TORCH:-}"
if [[ -z "$flavour" ]]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    flavour=cuda
  else
    flavour=cpu
  fi
fi
case "$flavour" in
  cpu|cuda) ;;
  *) echo "setup: GAIT_TORCH must be 'cpu' or 'cuda', got '$flavour'" >&2; exit 2 ;;
esac

venv="$cache/torch-$TORCH_VERSION-$flavour"
marker="$venv/.gait-installed"
if [[ ! -f "$marker" ]]; then
  echo "setup: installing PyTorch $TORCH_VERSION ($flavour) into $venv" >&2
  mkdir -p "$cache"
  # A lock so two clones setting up at once do not corrupt the shared venv.
  exec 9>"$cache/.lock"
  flock 9
  if [[ ! -f "$marker" ]]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
    if [[ "$flavour" == cuda ]]; then
      "$venv/bin/pip" install --quiet --disable-pip-version-check "torch==$TORCH_VERSION"
    else
      "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps \
        "torch==$TORCH_VERSION" nvidia-cuda-runtime==13.0.96 nvidia-cuda-cupti==13.0.85
    fi
    echo "$flavour" >"$marker"
  fi
  flock -u 9
fi

torch_dir="$(ls -d "$venv"/lib/python3*/site-packages/torch | head -n1)"
if [[ ! -f "$torch_dir/lib/libtorch_cpu.so" ]]; then
  echo "setup: $torch_dir has no lib/libtorch_cpu.so; delete $venv and rerun" >&2
  exit 1
fi
# Point the repo-local link at it (replace only if it differs, so cargo does not rebuild).
link="$root/.libtorch"
if [[ "$(readlink "$link" 2>/dev/null || true)" != "$torch_dir" ]]; then
  ln -sfn "$torch_dir" "$link"
fi
echo "setup: libtorch ready at $torch_dir ($flavour)" >&2

# libmujoco for `--sim mujoco` (mujoco-rs 7.0.0 binds MuJoCo 3.17.0), from PyPI's mujoco==3.17.0
# wheel: only its libmujoco.so.3.17.0 is used (the wheel is a zip; no Python import). Cached per
# user like libtorch; `.mujoco` points at "$cache/mujoco-3.17.0", whose lib/ holds the library and
# the unversioned libmujoco.so link the linker looks for. `.cargo/config.toml` sets
# MUJOCO_DYNAMIC_LINK_DIR to `.mujoco/lib` for every cargo command, and build.rs writes an rpath
# to it, so the binary runs without environment variables.
MUJOCO_VERSION=3.17.0
mujoco_dir="$cache/mujoco-$MUJOCO_VERSION"
if [[ ! -f "$mujoco_dir/.gait-installed" ]]; then
  echo "setup: installing libmujoco $MUJOCO_VERSION (PyPI wheel) into $mujoco_dir" >&2
  mkdir -p "$cache"
  exec 8>"$cache/.lock-mujoco"
  flock 8
  if [[ ! -f "$mujoco_dir/.gait-installed" ]]; then
    rm -rf "$mujoco_dir" && mkdir -p "$mujoco_dir/lib" "$mujoco_dir/wheel"
    "$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
      -d "$mujoco_dir/wheel" "mujoco==$MUJOCO_VERSION"
    "$venv/bin/python" - "$mujoco_dir" "$MUJOCO_VERSION" <<'PY'
import glob, sys, zipfile
out, version = sys.argv[1], sys.argv[2]
(wheel,) = glob.glob(f"{out}/wheel/mujoco-{version}-*.whl")
name = f"libmujoco.so.{version}"
with zipfile.ZipFile(wheel) as z:
    member = next(m for m in z.namelist() if m.endswith("/" + name))
    with z.open(member) as src, open(f"{out}/lib/{name}", "wb") as dst:
        dst.write(src.read())
PY
    ln -sfn "libmujoco.so.$MUJOCO_VERSION" "$mujoco_dir/lib/libmujoco.so"
    rm -rf "$mujoco_dir/wheel"
    touch "$mujoco_dir/.gait-installed"
  fi
  flock -u 8
fi
if [[ "$(readlink "$root/.mujoco" 2>/dev/null || true)" != "$mujoco_dir" ]]; then
  ln -sfn "$mujoco_dir" "$root/.mujoco"
fi
echo "setup: libmujoco ready at $mujoco_dir/lib" >&2

# three.js for `gait eval --record` pages (embedded into each page with its licence), from the
# npm registry, pinned and cached like libtorch. 0.149.0 is the last release with the classic
# `build/three.min.js` (global THREE), so a page opened from file:// needs no module loader.
# The binary embeds it when built after this step (build.rs); without Node/npm gait still builds
# and `--record` says how to get it.
THREE_VERSION=0.149.0
three_dir="$cache/three-$THREE_VERSION"
if [[ ! -f "$three_dir/.gait-installed" ]]; then
  if command -v npm >/dev/null 2>&1; then
    echo "setup: installing three.js $THREE_VERSION into $three_dir" >&2
    rm -rf "$three_dir" && mkdir -p "$three_dir"
    # Not fatal: training does not need it (the replay page test does, and fails loudly).
    if npm install --silent --no-audit --no-fund --prefix "$three_dir" "three@$THREE_VERSION" >&2; then
      touch "$three_dir/.gait-installed"
    else
      echo "setup: npm could not install three.js: gait eval --record will be unavailable" >&2
    fi
  else
    echo "setup: npm not found: skipping three.js (gait eval --record needs it)" >&2
  fi
fi
if [[ -f "$three_dir/.gait-installed" ]]; then
  three_pkg="$three_dir/node_modules/three"
  if [[ "$(readlink "$root/.three" 2>/dev/null || true)" != "$three_pkg" ]]; then
    ln -sfn "$three_pkg" "$root/.three"
  fi
fi
