#!/usr/bin/env bash
# The main job on a CPU default. Extra arguments go to experiments/play.py.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
exec .venv/bin/python experiments/play.py "$@"
