#!/usr/bin/env bash
# Installs the npm packages of the tests into tests/interop/node_modules (`npm ci` from
# package-lock.json): the interop peers (run.sh) and the TypeScript SDK 1.x client of the
# mcp-dap tests (tests/it/dap_clients.rs). Idempotent: redone only when package-lock.json or
# the node version changed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
npm_stamp="$HERE/node_modules/.interop-stamp"
npm_want="$(sha256sum <"$HERE/package-lock.json" | cut -d' ' -f1) node $(node --version)"
if [[ ! -f "$npm_stamp" || "$(cat "$npm_stamp")" != "$npm_want" ]]; then
  echo "interop: installing npm packages (npm ci)" >&2
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) \
    || { echo "npm.sh: npm ci failed" >&2; exit 2; }
  echo "$npm_want" >"$npm_stamp"
fi
