#!/usr/bin/env bash
# The main job on the CPU default: trains the `demo` preset (a diverse team of 3 on
# connect four, about ten minutes on 2 CPU cores) into runs/demo_<time>/, then prints
# the team's summary table and the path of its picture (summary.png). Extra arguments
# go to azdb_jax/cli/train.py (e.g. --override=team.lam=1.0 for the plain-AZ control,
# --workdir=..., --resume, --verbosity=0 for library logs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
exec .venv/bin/python experiments/train.py --preset=demo --workdir="runs/demo_$(date +%Y%m%d_%H%M%S)" "$@"
