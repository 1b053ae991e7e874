#!/usr/bin/env bash
# The accelerator check: what one lease of a GPU (or a TPU host) measures, in one command
# that ends within its time budget, writing each result under OUT as soon as it exists.
#
#   bash scripts/device_check.sh OUT            # on the accelerator: parts a, b, c in ~8 minutes
#   bash scripts/device_check.sh OUT tiny       # parts a and b at tiny sizes on a CPU (its test)
#
# Parts, in order (BUILD.md, "The accelerator check"):
#   a  benchmarks/scaling.py --real: per-device flops, collectives and memory of every
#      program of demo, gardner_cpu and (not tiny) azdb_fast's self-play and learner, on
#      the machine's own devices -> OUT/scaling_<preset>.json
#   b  populations: benchmarks/population_drift.py with member_map vmap and map (each
#      member against the plain run of its seed on this device) and benchmarks/population.py
#      timing vmap against map -> OUT/drift_vmap.json, OUT/drift_map.json, OUT/population.json
#   c  scripts/device_pack.sh on the lease16 scale (tiny: not run; tests/test_population.py
#      runs the pack at ci_pack size) -> OUT/pack/
# Each part runs under `timeout` with what is left of $AZDB_CHECK_SECONDS (default 470); a
# part whose estimate exceeds what is left is skipped and says so in OUT/log.txt. Killed at
# any point, everything finished is under OUT. Python is $PYTHON (default python3); packages
# the image lacks come from .whl/ as for scripts/device_pack.sh (scripts/device_carry.sh).
set -uo pipefail

OUT=${1:?usage: bash scripts/device_check.sh OUT [tiny]}
SIZE=${2:-full}
case "$SIZE" in full|tiny) ;; *) echo "device_check.sh: size $SIZE is neither full nor tiny" >&2; exit 2;; esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if compgen -G "$ROOT/.whl/*.whl" > /dev/null; then
  SITE=/tmp/azdb_pack_site
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" "$ROOT"/.whl/*.whl
  export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
BUDGET=${AZDB_CHECK_SECONDS:-470}
START=$(date +%s)
LOG="$OUT/log.txt"
cd "$ROOT"

left() { echo $(( BUDGET - ($(date +%s) - START) )); }
say() { echo "device_check: $*" | tee -a "$LOG"; }

# part NAME ESTIMATE_S COMMAND...: runs COMMAND under what is left of the budget, or skips it.
part() {
  local name=$1 estimate=$2 rest
  shift 2
  rest=$(left)
  if [ "$rest" -lt "$estimate" ]; then
    say "$name skipped: $rest s left, estimated $estimate s"
    return 0
  fi
  local t0=$(date +%s) status=0
  timeout --signal=TERM --kill-after=5 "$rest" "$@" >> "$LOG" 2>&1 || status=$?
  say "$name: exit $status after $(( $(date +%s) - t0 )) s ($(left) s left)"
}

say "size $SIZE, budget $BUDGET s, $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
"$PY" -c "import jax; print('jax', jax.__version__, jax.devices())" >> "$LOG" 2>&1

if [ "$SIZE" = tiny ]; then
  TINY=(--override=env.name=tic_tac_toe --override=network.channels=4 --override=network.num_blocks=1
        --override=search.num_simulations=4 --override=selfplay.num_games=4 --override=selfplay.num_plies=4
        --override=replay.capacity=256 --override=run.batch_size=8 --override=run.eval_games=2
        --override=run.eval_simulations=2)
  part a_scaling_demo 20 "$PY" benchmarks/scaling.py --real --devices=1 --preset=demo "${TINY[@]}" \
    --programs=selfplay,learner --out="$OUT/scaling_demo.json"
  part b_drift_vmap 20 "$PY" benchmarks/population_drift.py --members=2 --iterations=1 --member_map=vmap \
    --override=run.eval_every=0 --out="$OUT/drift_vmap.json"
  part b_population 20 "$PY" benchmarks/population.py --preset=demo "${TINY[@]}" --sizes=2 --maps=vmap,map \
    --iterations=1 --out="$OUT/population.json"
else
  # Estimates: compiling dominates parts a and b on a fresh machine (an H200 compiled a
  # gardner_cpu run in ~20 s, docs/performance.md); part c from the H200's 3.1-3.2 s an
  # iteration of 16 members plus compiling and the evaluation (BUILD.md).
  part a_scaling_demo 40 "$PY" benchmarks/scaling.py --real --devices=1 --preset=demo --repeats=3 --out="$OUT/scaling_demo.json"
  part a_scaling_gardner 40 "$PY" benchmarks/scaling.py --real --devices=1 --preset=gardner_cpu --repeats=3 \
    --out="$OUT/scaling_gardner_cpu.json"
  part b_drift_vmap 30 "$PY" benchmarks/population_drift.py --members=8 --iterations=4 --member_map=vmap \
    --out="$OUT/drift_vmap.json"
  part b_drift_map 30 "$PY" benchmarks/population_drift.py --members=8 --iterations=4 --member_map=map \
    --out="$OUT/drift_map.json"
  part b_population 60 "$PY" benchmarks/population.py --preset=gardner_cpu --sizes=1,16 --maps=vmap,map \
    --iterations=2 --out="$OUT/population.json"
  part c_pack 240 bash scripts/device_pack.sh "$OUT/pack" lease16
  part a_scaling_chess 60 "$PY" benchmarks/scaling.py --real --devices=1 --preset=azdb_fast \
    --programs=selfplay,learner --out="$OUT/scaling_azdb_fast.json"
fi
say "done after $(( $(date +%s) - START )) s"
