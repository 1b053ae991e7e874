#!/usr/bin/env bash
# Runs the test suite. Test data: $AZDB_DATA_DIR, else ../shared/data beside the checkout.
# Extra arguments go to pytest (e.g. `bash scripts/test.sh tests/test_nim.py -x`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
if [ -z "${AZDB_DATA_DIR:-}" ] && [ -d ../shared/data ]; then
  export AZDB_DATA_DIR="$(cd ../shared/data && pwd)"
fi
exec .venv/bin/python -m pytest -n "${AZDB_TEST_WORKERS:-2}" --dist loadfile "$@"
