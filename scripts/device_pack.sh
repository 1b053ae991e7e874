#!/usr/bin/env bash
# The accelerator pack: the cpu scale's AZ, AZdb and control arms for 16 fresh seeds (10-25),
# trained as populations (azdb_jax.population: AZ's 16 seeds as one, AZdb's and the control's
# 32 runs as another, since the two arms differ only in λ), then the claims on
# distinct moves, solve rates and Table 2 (144 games a pairing) decided over the 16 seeds.
#
#   bash scripts/device_pack.sh OUT            # one GPU: the cpu16 scale
#   bash scripts/device_pack.sh OUT lease16    # cut to one accelerator lease (scripts/device_check.sh)
#   bash scripts/device_pack.sh OUT ci_pack    # the same pack in minutes on a CPU (its test)
#
# Writes 7 files under OUT: claims.md (the claims table, experiments/claims_table.py),
# claims.json (its rows), manifest.json (the runs, their training seconds, the reports),
# openings.json, solve_rates.json and matches.json (the figure groups' reports), log.txt
# (the console); a pack stopped early (an error, a time limit) leaves there what it had made.
# The results folder itself stays in $AZDB_PACK_WORK (default /tmp/azdb_pack_<scale>); a
# second call resumes it (finished runs and reports are kept).
#
# On a machine without a package registry the packages the accelerator's image lacks come
# as wheels in .whl/, and Fairy-Stockfish (the solve-rate reference) as .bin/fairy-stockfish:
# scripts/device_carry.sh prepares both here. Python is $PYTHON (default python3), which
# must already hold jax for the accelerator, flax, optax, chex and orbax-checkpoint.
set -euo pipefail

OUT=${1:?usage: bash scripts/device_pack.sh OUT [cpu16|lease16|ci_pack]}
SCALE=${2:-cpu16}
case "$SCALE" in cpu16|lease16|ci_pack) ;; *) echo "device_pack.sh: scale $SCALE is none of cpu16, lease16, ci_pack" >&2; exit 2;; esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=${AZDB_PACK_WORK:-/tmp/azdb_pack_$SCALE}

if compgen -G "$ROOT/.whl/*.whl" > /dev/null; then
  SITE=/tmp/azdb_pack_site
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" "$ROOT"/.whl/*.whl
  export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
if [ -x "$ROOT/.bin/fairy-stockfish" ]; then
  export AZDB_FAIRY_STOCKFISH="$ROOT/.bin/fairy-stockfish"
fi
export PYTHONUNBUFFERED=1

# What the pack has made so far goes to OUT also when it stops early (an error, a time
# limit): the manifest with each finished run's training seconds, the reports written.
copy_out() {
  [ -f "$WORK/manifest.json" ] && cp "$WORK/manifest.json" "$OUT/manifest.json"
  for group in openings solve_rates matches; do
    [ -f "$WORK/eval/$group.json" ] && cp "$WORK/eval/$group.json" "$OUT/$group.json"
  done
  return 0
}
trap copy_out EXIT

cd "$ROOT"
{
  echo "device_pack: scale $SCALE, results in $WORK, $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  "$PY" -c "import jax; print('jax', jax.__version__, jax.devices())"
  start=$(date +%s)
  "$PY" experiments/reproduce.py --scale="$SCALE" --out="$WORK" --populations=on
  "$PY" experiments/claims_table.py --results="$WORK" --out="$OUT/claims.json" | tee "$OUT/claims.md"
  echo "device_pack: $(( $(date +%s) - start )) s"
} 2>&1 | tee "$OUT/log.txt"
