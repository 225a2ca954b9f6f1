#!/usr/bin/env bash
# Copies Gymnasium's MuJoCo task models (the 14 XMLs of gymnasium/envs/mujoco/assets) and its
# MIT licence from the pinned `gymnasium` wheel on PyPI into assets/gymnasium-mujoco/, and checks
# every file against assets/gymnasium-mujoco/SHA256SUMS (issue 84: the models ship in the
# repository, nothing is downloaded at run time). Idempotent: with the files present and their
# sums right it downloads nothing.
#
# usage: scripts/gym_assets.sh          copy if needed, then check
#        scripts/gym_assets.sh --check  check only (exit 1 on any difference)
# Exit status: 0 when every file matches its recorded sum.
set -euo pipefail
VERSION=1.2.2
WHEEL="gymnasium-${VERSION}-py3-none-any.whl"
WHEEL_SHA256=f04ec362b1fdf73a8b327db5ef89384a3f2ba411e05d3521513414fbbb2199c8
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/assets/gymnasium-mujoco"
sums="$out/SHA256SUMS"

check() { (cd "$out" && sha256sum --quiet -c SHA256SUMS); }

if [[ "${1:-}" == "--check" ]]; then
  check
  exit
fi
if [[ -f "$sums" ]] && check >/dev/null 2>&1; then
  echo "assets/gymnasium-mujoco: every file matches SHA256SUMS (gymnasium $VERSION)"
  exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps "gymnasium==$VERSION" -d "$tmp"
echo "$WHEEL_SHA256  $tmp/$WHEEL" | sha256sum --quiet -c -
python3 - "$tmp/$WHEEL" "$out" <<'PY'
import pathlib, sys, zipfile
wheel, out = sys.argv[1], pathlib.Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith("gymnasium/envs/mujoco/assets/") and name.endswith(".xml"):
            (out / pathlib.Path(name).name).write_bytes(z.read(name))
        elif name.endswith("licenses/LICENSE"):
            (out / "LICENSE").write_bytes(z.read(name))
PY
check
echo "assets/gymnasium-mujoco: copied from $WHEEL and checked"
