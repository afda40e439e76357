#!/usr/bin/env bash
# Installs the Python packages of the tests into tests/interop/.venv: the interop peers
# (run.sh) and debugpy, the adapter of the mcp-dap tests (tests/it/dap.rs). Idempotent: the
# venv is recreated only when requirements.txt or the interpreter changed.
#   PYTHON   interpreter used to create the venv (default python3)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$HERE/.venv"
PY="${PYTHON:-python3}"
venv_stamp="$VENV/.interop-stamp"
venv_want="$(sha256sum <"$HERE/requirements.txt" | cut -d' ' -f1) $("$PY" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
if [[ ! -f "$venv_stamp" || "$(cat "$venv_stamp")" != "$venv_want" || ! -x "$VENV/bin/python" ]]; then
  echo "interop: installing Python packages into tests/interop/.venv" >&2
  rm -rf "$VENV"
  "$PY" -m venv "$VENV" || { echo "venv.sh: '$PY -m venv' failed (on Debian: apt-get install python3-venv)" >&2; exit 2; }
  "$VENV/bin/pip" install -q -r "$HERE/requirements.txt" >/dev/null \
    || { echo "venv.sh: pip install -r requirements.txt failed" >&2; exit 2; }
  echo "$venv_want" >"$venv_stamp"
fi

