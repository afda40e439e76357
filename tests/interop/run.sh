#!/usr/bin/env bash
# Interop tests of mcp-bridge with real third-party MCP peers:
#   client.mjs   a real 2025-11-25 client (npm @modelcontextprotocol/sdk 1.32.2, TS SDK 1.x)
#   inspector.sh the MCP Inspector CLI (npm @modelcontextprotocol/inspector 0.15.0) as a client
#   upstream.py  a real 2026-07-28 server (PyPI mcp 2.3.0, Python SDK 2.x), spawned by the bridge
#
#   bash tests/interop/run.sh [--direct | --http | --http-ts2] [SCENARIO...]   (default scenario: basic)
#
#   SCENARIO  basic | elicit | elicit-2rounds | sampling | list-changed | subscribe |
#             legacy-everything (the upstream is server-everything, 2025-11-25 only: the
#             bridge's era fallback, pass-through) |
#             py-legacy (client_legacy.py: the Python mcp 2.3.0 client in legacy mode) |
#             upstream-discover (--direct only) | inspector (the README's MCP Inspector CLI
#             recipe in front of mcp-example-server, by inspector.sh; not --direct) |
#             gateway (`mcp-bridge --config FILE`: upstream.py, server-everything,
#             mcp-example-server and the sign-in fixture's protected endpoint, which wants an
#             OAuth sign-in, behind one bridge, the file written by gateway_config.py; with
#             --http, upstream.py is at its URL; not --direct, not --http-ts2) |
#             inspector-gateway (the MCP Inspector CLI against that gateway; not --direct) |
#             embedded (TS SDK 1.x client against examples/embedded, the legacy path) |
#             embedded-ts2 / embedded-py / embedded-rmcp (TS SDK v2 / Python mcp 2.x / rmcp
#             3.x clients against it, the modern path; rmcp built from tests/interop/rmcp);
#             see client.mjs and README.md
#   --direct  run the client straight against upstream.py, without the bridge (proves the
#             test scripts and the peers; the Python server also accepts a 2025-11-25 initialize)
#   --http    the URL form: upstream.py serves Streamable HTTP on a free loopback port (one
#             server per scenario, so state starts fresh) and the client drives
#             `mcp-bridge http://127.0.0.1:PORT/mcp`
#             legacy-everything with --http/--http-ts2: server-everything serves 2025-11-25
#             Streamable HTTP instead (its `streamableHttp` mode): the era fallback over HTTP
#   --http-ts2  the same with upstream_ts2.mjs (npm @modelcontextprotocol/server 2.4.0, the
#             TypeScript SDK v2, on its own Streamable HTTP handler) as the upstream
#
# Environment:
#   MCP_BRIDGE_BIN    bridge binary (default <repo>/target/debug/mcp-bridge); this script builds nothing
#   MCP_EMBEDDED_BIN  the embedded bridge's example (default: examples/embedded beside the bridge)
#   MCP_SIGNIN_FIXTURE_BIN  the sign-in fixture of the gateway scenarios (default:
#                     examples/signin-fixture beside the bridge; built by
#                     `cargo build -p mcp-test-fixtures --example signin-fixture`)
#   MCP_BRIDGE_OPTS   extra bridge options, word-split, put before the bridge's `--`
#   INTEROP_TRACE=1   the client prints every JSON-RPC message to stderr
#   INTEROP_STDERR=inherit   show the bridge's/upstream's stderr live (default: only on failure)
#   INTEROP_TAP=FILE  put tap.py between the bridge and upstream.py and log every line of the
#                     bridge's upstream traffic to FILE (`C>` bridge to upstream, `S>` back)
#   PYTHON            interpreter used to create the venv (default python3)
#
# Installs (idempotent; redone only when package-lock.json / requirements.txt / the interpreter change):
#   tests/interop/node_modules  via `npm ci`
#   tests/interop/.venv         via `python3 -m venv` + `pip install -r requirements.txt`
# Last line of output: `interop: N passed, M failed`; the exit status is non-zero if M > 0.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="$HERE/.venv"
PY="${PYTHON:-python3}"
SCENARIO_TIMEOUT_S=40   # hard backstop; client.mjs has its own 25 s deadline per scenario
SIGNIN_FIXTURE_START_TIMEOUT_S=20   # for the sign-in fixture's JSON line (a debug build, 2 busy cores)
SIGNIN_FIXTURE_STOP_TIMEOUT_S=10    # for its end once its stdin is closed

direct=0
http=0
scenarios=()
for a in "$@"; do
  case "$a" in
    --direct) direct=1 ;;
    --http) http=1 ;;
    -h|--help) sed -n '2,/^set -euo pipefail$/p' "$0" | sed '$d'; exit 0 ;;
    --http-ts2) http=2 ;;
    -*) echo "run.sh: unknown option $a" >&2; exit 2 ;;
    *) scenarios+=("$a") ;;
  esac
done
[[ ${#scenarios[@]} -gt 0 ]] || scenarios=(basic)

MCP_BRIDGE_BIN="${MCP_BRIDGE_BIN:-$REPO/target/debug/mcp-bridge}"
if [[ $direct -eq 0 && ! -x "$MCP_BRIDGE_BIN" ]]; then
  echo "run.sh: bridge binary not found or not executable: $MCP_BRIDGE_BIN" >&2
  echo "run.sh: build it first (cargo build) or set MCP_BRIDGE_BIN; use --direct to test without the bridge" >&2
  exit 2
fi
command -v node >/dev/null || { echo "run.sh: node (>= 20) is required" >&2; exit 2; }
command -v npm >/dev/null || { echo "run.sh: npm is required" >&2; exit 2; }
command -v "$PY" >/dev/null || { echo "run.sh: $PY is required" >&2; exit 2; }

export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
export PIP_DISABLE_PIP_VERSION_CHECK=1

# ---- node_modules: npm ci when absent or when package-lock.json changed (tests/interop/npm.sh;
# scripts/test runs it before cargo test too: tests/it/dap_clients.rs needs the TS SDK 1.x)
bash "$HERE/npm.sh" || exit 2

# ---- .venv: recreated when absent or when requirements.txt / the interpreter changed
# (tests/interop/venv.sh; scripts/test runs it before cargo test too: tests/it/dap.rs needs
# its debugpy)
PYTHON="$PY" bash "$HERE/venv.sh" || exit 2

# ---- warm-up: the peers' modules are read once, outside any time limit, so that the first
# scenario does not pay for a cold start (a fresh venv and node_modules on a busy machine: the
# first initialize of a CI run, which includes starting upstream.py, once took over 10 s)
"$VENV/bin/python" -c 'import anyio, pydantic, mcp.server, mcp.server.mcpserver, mcp.server.stdio, mcp.client.session' \
  || { echo "run.sh: the Python peers do not import" >&2; exit 2; }
(cd "$HERE" && node -e "import('@modelcontextprotocol/sdk/client/index.js').then(() => import('@modelcontextprotocol/sdk/client/stdio.js'))") \
  || { echo "run.sh: the TypeScript SDK does not load" >&2; exit 2; }

# ---- scenarios
read -r -a bridge_opts <<<"${MCP_BRIDGE_OPTS:-}"
upstream=("$VENV/bin/python" "$HERE/upstream.py")
if [[ -n "${INTEROP_TAP:-}" ]]; then
  upstream=("$VENV/bin/python" "$HERE/tap.py" "$INTEROP_TAP" -- "${upstream[@]}")
  echo "interop: logging upstream traffic to $INTEROP_TAP" >&2
fi
# server-everything 2026.8.31: a real 2025-11-25-only server (TS SDK 1.x), for the era fallback.
everything=(node "$HERE/node_modules/@modelcontextprotocol/server-everything/dist/index.js" stdio)
if [[ $direct -eq 1 ]]; then
  server=("${upstream[@]}")
  legacy_server=("${everything[@]}")
  export INTEROP_DIRECT=1
  echo "interop: --direct: client -> upstream.py / server-everything (no bridge)" >&2
else
  server=("$MCP_BRIDGE_BIN" "${bridge_opts[@]}" -- "${upstream[@]}")
  legacy_server=("$MCP_BRIDGE_BIN" "${bridge_opts[@]}" -- "${everything[@]}")
fi

# --http: one upstream.py HTTP server per scenario, stopped after it.
http_pid=""
http_url=""
stop_http() { if [[ -n "$http_pid" ]]; then kill "$http_pid" 2>/dev/null || true; wait "$http_pid" 2>/dev/null || true; http_pid=""; fi; }

# The gateway scenarios: the sign-in fixture (fixtures/examples/signin-fixture.rs: the fixture
# authorization server and a protected MCP endpoint in front of the crate's server with the
# tool `echo`), one per scenario, a coprocess that serves until its stdin closes. bash forgets
# a coprocess's pid and descriptors once it has ended, so they are kept here.
SIGNIN_FIXTURE_BIN="${MCP_SIGNIN_FIXTURE_BIN:-$(dirname "$MCP_BRIDGE_BIN")/examples/signin-fixture}"
signin_pid=""
signin_in=""
signin_out=""
signin_url=""
start_signin() {
  if [[ ! -x "$SIGNIN_FIXTURE_BIN" ]]; then
    echo "run.sh: the sign-in fixture is not built: $SIGNIN_FIXTURE_BIN" >&2
    echo "run.sh: build it (cargo build -p mcp-test-fixtures --example signin-fixture) or set MCP_SIGNIN_FIXTURE_BIN" >&2
    return 1
  fi
  command -v curl >/dev/null || { echo "run.sh: curl is required (the \$BROWSER of the sign-in)" >&2; return 1; }
  coproc SIGNIN_FIXTURE { exec "$SIGNIN_FIXTURE_BIN" 2>"$HERE/.signin-fixture.log"; }
  signin_pid="${SIGNIN_FIXTURE_PID:-}"
  signin_in="${SIGNIN_FIXTURE[1]:-}"
  signin_out="${SIGNIN_FIXTURE[0]:-}"
  local line=""
  if [[ -z "$signin_out" ]] || ! IFS= read -r -t "$SIGNIN_FIXTURE_START_TIMEOUT_S" line <&"$signin_out"; then
    echo "run.sh: the sign-in fixture printed no line within ${SIGNIN_FIXTURE_START_TIMEOUT_S} s; see $HERE/.signin-fixture.log" >&2
    return 1
  fi
  signin_url="$("$VENV/bin/python" -c 'import json, sys; print(json.loads(sys.argv[1])["mcp_url"])' "$line")" \
    || { echo "run.sh: the sign-in fixture's line has no mcp_url: $line" >&2; return 1; }
}
# Closes the fixture's stdin, then reads its stdout to the end (its counters, then the end of
# the process); a fixture that has not ended within SIGNIN_FIXTURE_STOP_TIMEOUT_S is killed.
# Once bash has reaped the coprocess it has closed the descriptors too: the read then fails at
# once (status 1, not a timeout's status above 128), and its message is dropped.
stop_signin() {
  [[ -n "$signin_pid" ]] || return 0
  local rest rc=0
  if [[ -n "$signin_in" ]]; then exec {signin_in}>&-; fi
  if [[ -n "$signin_out" ]]; then
    while true; do
      { IFS= read -r -t "$SIGNIN_FIXTURE_STOP_TIMEOUT_S" rest <&"$signin_out"; } 2>/dev/null || { rc=$?; break; }
    done
  fi
  if [[ $rc -gt 128 ]]; then
    echo "run.sh: the sign-in fixture did not end within ${SIGNIN_FIXTURE_STOP_TIMEOUT_S} s of its stdin closing: killed" >&2
    kill -KILL "$signin_pid" 2>/dev/null || true
  fi
  wait "$signin_pid" 2>/dev/null || true
  if [[ -n "$signin_out" ]]; then exec {signin_out}<&-; fi
  signin_pid="" signin_in="" signin_out="" signin_url=""
}
trap 'stop_http; stop_signin' EXIT
start_http() {
  local port scenario="$1"
  port="$("$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  if [[ "$scenario" == legacy-everything ]]; then
    (cd "$HERE" && PORT="$port" exec node "$HERE/node_modules/@modelcontextprotocol/server-everything/dist/index.js" streamableHttp) >"$HERE/.http-upstream.log" 2>&1 &
  elif [[ $http -eq 2 ]]; then
    (cd "$HERE" && exec node "$HERE/upstream_ts2.mjs" http "$port") >"$HERE/.http-upstream.log" 2>&1 &
  else
    "$VENV/bin/python" "$HERE/upstream.py" http "$port" >"$HERE/.http-upstream.log" 2>&1 &
  fi
  http_pid=$!
  for _ in $(seq 1 150); do
    if "$VENV/bin/python" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2)' "$port" 2>/dev/null; then
      http_url="http://127.0.0.1:$port/mcp"
      server=("$MCP_BRIDGE_BIN" "${bridge_opts[@]}" "$http_url")
      return 0
    fi
    sleep 0.1
  done
  echo "run.sh: upstream.py http did not start; see $HERE/.http-upstream.log" >&2
  return 1
}

passed=0
failed=0
for s in "${scenarios[@]}"; do
  rc=0
  if [[ $http -ne 0 ]]; then
    stop_http
    start_http "$s" || { echo "FAIL $s: the HTTP upstream did not start"; failed=$((failed + 1)); continue; }
  fi
  if [[ "$s" == embedded || "$s" == embedded-* ]]; then
    # The embedded bridge's example is client-facing itself: no bridge, no upstream.py.
    embedded_bin="${MCP_EMBEDDED_BIN:-$(dirname "$MCP_BRIDGE_BIN")/examples/embedded}"
    case "$s" in
      embedded) out="$(cd "$HERE" && timeout -k 5 "$SCENARIO_TIMEOUT_S" node "$HERE/client.mjs" embedded -- "$embedded_bin")" || rc=$? ;;
      embedded-ts2) out="$(cd "$HERE" && timeout -k 5 "$SCENARIO_TIMEOUT_S" node "$HERE/client_v2.mjs" -- "$embedded_bin")" || rc=$? ;;
      embedded-rmcp)
        # rmcp is built here, on its own (tests/interop/rmcp is no member of the package).
        rmcp_dir="$HERE/rmcp"
        if ! cargo build --quiet --locked --manifest-path "$rmcp_dir/Cargo.toml" --target-dir "$rmcp_dir/target" --bin client >&2; then
          out="FAIL $s: cargo build of tests/interop/rmcp failed"; rc=1
        else
          out="$(timeout -k 5 "$SCENARIO_TIMEOUT_S" "$rmcp_dir/target/debug/client" -- "$embedded_bin")" || rc=$?
        fi ;;
      embedded-py) out="$(cd "$HERE" && timeout -k 5 "$SCENARIO_TIMEOUT_S" "$VENV/bin/python" "$HERE/modern_client.py" -- "$embedded_bin")" || rc=$? ;;
      *) out="FAIL $s: unknown scenario"; rc=2 ;;
    esac
  elif [[ "$s" == gateway || "$s" == inspector-gateway ]]; then
    if [[ $direct -eq 1 ]]; then echo "FAIL $s: needs the bridge (not --direct)"; failed=$((failed + 1)); continue; fi
    if [[ "$s" == gateway && $http -eq 2 ]]; then
      echo "FAIL gateway: not with --http-ts2: its expected values are upstream.py's (stdio or --http)"; failed=$((failed + 1)); continue
    fi
    # The file of the gateway, in a folder of this scenario; with --http the server `py` is
    # the HTTP upstream.py of this scenario, at its URL. The server `signed` is the sign-in
    # fixture of this scenario; the gateway's $BROWSER follows the sign-in's start URL as a
    # consenting user would (the fixture grants at once), so no human signs in. The gateway's
    # state (the lock file of each sign-in, even with the memory token store) goes to the
    # scenario's folder, not the user's.
    gw_dir="$(mktemp -d "${TMPDIR:-/tmp}/mcp-bridge-test-gateway.XXXXXX")"
    browser="$gw_dir/follow-browser"
    printf '#!/bin/sh\nexec curl -s -L -o /dev/null "$1"\n' >"$browser"
    chmod +x "$browser"
    gw_opts=()
    if [[ $http -ne 0 ]]; then gw_opts+=(--py-url "$http_url"); fi
    if [[ -n "${INTEROP_TAP:-}" ]]; then gw_opts+=(--tap "$INTEROP_TAP"); fi
    if ! start_signin; then
      out="FAIL $s: setup: the sign-in fixture did not start"; rc=1
    elif ! "$VENV/bin/python" "$HERE/gateway_config.py" "$gw_dir/claude_desktop_config.json" "$MCP_BRIDGE_BIN" \
        --signed-url "$signin_url" "${gw_opts[@]}" >&2; then
      out="FAIL $s: gateway_config.py could not write the file"; rc=1
    elif [[ "$s" == gateway ]]; then
      out="$(cd "$HERE" && BROWSER="$browser" XDG_STATE_HOME="$gw_dir/state" timeout -k 5 "$SCENARIO_TIMEOUT_S" node "$HERE/client.mjs" gateway -- \
        "$MCP_BRIDGE_BIN" "${bridge_opts[@]}" --config "$gw_dir/claude_desktop_config.json")" || rc=$?
    else
      out="$(BROWSER="$browser" XDG_STATE_HOME="$gw_dir/state" timeout -k 5 "$SCENARIO_TIMEOUT_S" bash "$HERE/inspector.sh" "$MCP_BRIDGE_BIN" --config "$gw_dir/claude_desktop_config.json")" || rc=$?
    fi
    stop_signin
    rm -rf "$gw_dir"
  elif [[ "$s" == inspector ]]; then
    if [[ $direct -eq 1 ]]; then echo "FAIL inspector: needs the bridge (not --direct)"; failed=$((failed + 1)); continue; fi
    out="$(timeout -k 5 "$SCENARIO_TIMEOUT_S" bash "$HERE/inspector.sh" "$MCP_BRIDGE_BIN")" || rc=$?
  elif [[ "$s" == py-legacy ]]; then
    out="$(cd "$HERE" && timeout -k 5 "$SCENARIO_TIMEOUT_S" "$VENV/bin/python" "$HERE/client_legacy.py" -- "${server[@]}")" || rc=$?
  else
    cmd=("${server[@]}")
    if [[ "$s" == legacy-everything && $http -eq 0 ]]; then cmd=("${legacy_server[@]}"); fi
    if [[ "$s" == legacy-everything && $http -ne 0 ]]; then export INTEROP_LEGACY_HTTP=1; else unset INTEROP_LEGACY_HTTP; fi
    out="$(cd "$HERE" && timeout -k 5 "$SCENARIO_TIMEOUT_S" node "$HERE/client.mjs" "$s" -- "${cmd[@]}")" || rc=$?
  fi
  if [[ $rc -eq 0 && "$out" == "ok $s:"* ]]; then
    echo "$out"
    passed=$((passed + 1))
  else
    if [[ -n "$out" ]]; then echo "$out"; fi
    if [[ "$out" != *"FAIL $s:"* ]]; then
      if [[ $rc -eq 124 || $rc -eq 137 ]]; then echo "FAIL $s: killed after ${SCENARIO_TIMEOUT_S} s (exit $rc)"
      else echo "FAIL $s: client exited with status $rc without a result line"; fi
    fi
    failed=$((failed + 1))
  fi
done

echo "interop: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
