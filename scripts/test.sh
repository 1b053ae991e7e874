#!/usr/bin/env bash
# Runs the tests. Two tiers (docs/contributing.md, "Tests: two tiers"):
#   bash scripts/test.sh          the quick tier: every module's behaviour, tiny games (minutes)
#   bash scripts/test.sh --all    the whole suite: adds the tests marked `slow` (end-to-end
#                                 training runs, notebooks, several processes, installs); CI runs it
# Test data: $AZDB_DATA_DIR, else ../shared/data beside the checkout. Reference engines:
# installed first when run as root (scripts/install_system_deps.sh); otherwise the tests that
# need them skip with the install hint.
# Further arguments go to pytest (e.g. `bash scripts/test.sh tests/test_nim.py -x`; a `-m`
# given there replaces the tier's).
set -euo pipefail
cd "$(dirname "$0")/.."
tier=(-m "not slow")
if [ "${1:-}" = "--all" ]; then
  tier=()
  shift
fi
bash scripts/setup_env.sh
bash scripts/install_system_deps.sh
if [ -z "${AZDB_DATA_DIR:-}" ] && [ -d ../shared/data ]; then
  export AZDB_DATA_DIR="$(cd ../shared/data && pwd)"
fi
# A test process that dies in native code (scripts/pytest_resume.py)
# ends the run with its test named (pytest-xdist's own restart once waited for the lost worker's
# tests until CI's time limit); when that was the run's only failure, the same command runs once
# more without the tests that finished.
record="$(mktemp -d)"
trap 'rm -rf "$record"' EXIT
# Longest test files first (scripts/pytest_order.py, by tests/file_seconds.json), so that
# both processes finish together.
run=(.venv/bin/python -m pytest -n "${AZDB_TEST_WORKERS:-2}" --dist loadfile --max-worker-restart=0
     --no-loadscope-reorder -p scripts.pytest_order -p scripts.pytest_resume "${tier[@]}" "$@")
status=0
"${run[@]}" --resume-record="$record" || status=$?
if [ "$status" -ne 0 ] && .venv/bin/python scripts/pytest_resume.py "$record"; then
  status=0
  "${run[@]}" --resume-done="$record/done" || status=$?
fi
exit "$status"
