#!/usr/bin/env bash
# Builds the documentation site as HTML, warnings as errors:
#   bash scripts/docs.sh [OUT]      (default OUT: build/docs; then open OUT/index.html)
# The API reference (docs/api), the tutorial (colabs/tutorial.ipynb, as stored) and the
# pages of docs/. Needs the docs extras: pip install -e ".[docs]" (the test extras include them).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-build/docs}"
python="${PYTHON:-python}"
if [ -x .venv/bin/python ] && [ -z "${PYTHON:-}" ]; then python=.venv/bin/python; fi
src="$(mktemp -d)"
trap 'rm -rf "$src"' EXIT
# The sources laid out as in the checkout, so the pages' relative links and images resolve.
mkdir -p "$src/colabs"
cp -r docs "$src/docs"
cp colabs/tutorial.ipynb "$src/colabs/"
cp docs/site/conf.py docs/site/index.md "$src/"
rm -rf "$out.partial"
"$python" -m sphinx -W --keep-going -q -E -b html "$src" "$out.partial"
rm -rf "$out"
mv "$out.partial" "$out"
echo "docs: $out/index.html"
