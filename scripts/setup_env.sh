#!/usr/bin/env bash
# Creates ./.venv and installs azdb_jax with its test extras into it (idempotent:
# re-installs only when setup.py changed). Needs only python3 (>= 3.10) with venv.
# The test extras include the rbc extra (reconchess) that azdb_jax.rbc and its tests need.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=".venv/.azdb_installed"
want="$(sha256sum setup.py | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[test]"
  echo "$want" > "$stamp"
fi
