#!/usr/bin/env bash
# Runs the test suite. Test data: $AZDB_DATA_DIR, else ../shared/data beside the checkout.
# Reference engines: installed first when run as root (scripts/install_system_deps.sh);
# otherwise the tests that need them skip with the install hint.
# Extra arguments go to pytest (e.g. `bash scripts/test.sh tests/test_nim.py -x`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
bash scripts/install_system_deps.sh
if [ -z "${AZDB_DATA_DIR:-}" ] && [ -d ../shared/data ]; then
  export AZDB_DATA_DIR="$(cd ../shared/data && pwd)"
fi
exec .venv/bin/python -m pytest -n "${AZDB_TEST_WORKERS:-2}" --dist loadfile "$@"
