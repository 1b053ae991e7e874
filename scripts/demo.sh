#!/usr/bin/env bash
# The main job on the CPU default: trains the `demo` preset (a team of 2 on connect four,
# about ten minutes on a laptop CPU) into runs/demo_<time>/. Extra arguments go to
# experiments/train.py (e.g. --override=env.name=tic_tac_toe, --workdir=..., --resume).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
exec .venv/bin/python experiments/train.py --preset=demo --workdir="runs/demo_$(date +%Y%m%d_%H%M%S)" "$@"
