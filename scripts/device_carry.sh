#!/usr/bin/env bash
# Prepares what scripts/device_pack.sh needs on an accelerator machine that cannot reach a
# package registry: .whl/ (the wheels of the packages its image lacks, for Python 3.12 on
# x86-64: pgx, mctx, python-chess, tensorboardX and svgwrite, pgx's own need missing there)
# and .bin/fairy-stockfish (the solve-rate reference engine). Both are ignored by git
# (.git/info/exclude); carry them with the call:
#
#   bash scripts/device_carry.sh
#   (then, on the device: bash scripts/device_pack.sh OUT, carrying .whl and .bin)
set -euo pipefail
cd "$(dirname "$0")/.."
for path in /.whl/ /.bin/; do
  grep -qxF "$path" .git/info/exclude 2>/dev/null || echo "$path" >> .git/info/exclude
done
rm -rf .whl && mkdir -p .whl .bin
# Versions: the pins of setup.py (BUILD.md says why).
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform any -d .whl "pgx>=2.6.0,<2.7" "mctx>=0.0.5,<0.1" "chess>=1.10.0,<2" "tensorboardX>=2.6" svgwrite
engine=$(command -v fairy-stockfish || echo /usr/games/fairy-stockfish)
if [ -x "$engine" ]; then
  cp "$engine" .bin/fairy-stockfish
else
  echo "device_carry.sh: no fairy-stockfish here (apt-get install -y fairy-stockfish); the pack's solve rates need it" >&2
fi
du -sh .whl .bin
