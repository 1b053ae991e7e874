#!/usr/bin/env bash
# Installs the system packages the tests use, when they are missing:
#   stockfish        the chess reference engine (Debian: /usr/games/stockfish)
#   fairy-stockfish  the Gardner chess reference engine (Debian: /usr/games/fairy-stockfish)
# As root with apt-get it installs them; otherwise it names what is missing and how to
# install it, and exits 0: the tests that need an engine then skip with that hint
# (unless AZDB_REQUIRE_DATA=1, where they fail). Used by .ci/run and scripts/test.sh.
# An engine given by $AZDB_STOCKFISH / $AZDB_FAIRY_STOCKFISH decides alone, as it does for
# the code: an executable there counts as installed, anything else as missing.
set -euo pipefail

found() {  # found COMMAND ENV_VAR
  if [ -n "${!2:-}" ]; then
    command -v "${!2}" >/dev/null 2>&1
  else
    command -v "$1" >/dev/null 2>&1 || [ -x "/usr/games/$1" ]
  fi
}

missing=()
found stockfish AZDB_STOCKFISH || missing+=(stockfish)
found fairy-stockfish AZDB_FAIRY_STOCKFISH || missing+=(fairy-stockfish)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${missing[*]} (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "note: ${missing[*]} not installed, so the tests that need them skip;" \
       "install with: sudo apt-get install ${missing[*]}" >&2
fi
