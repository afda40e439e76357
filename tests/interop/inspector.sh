#!/usr/bin/env bash
# Scenario `inspector` of run.sh: the README's MCP Inspector recipe, run as written, with the
# Inspector CLI from npm (@modelcontextprotocol/inspector 0.15.0, pinned in package.json):
#   mcp-inspector --cli mcp-bridge mcp-example-server --method tools/list
# The Inspector strips a `--` it is given, so the bridge must find the command without one; the
# form with `--` is run too. Checks the exact tool names the Inspector lists.
#   bash tests/interop/inspector.sh BRIDGE_BIN     (mcp-example-server is taken from its directory)
# Prints `ok inspector: ...` or `FAIL inspector: <step>: <why>`; exit status 0 or 1.
# The CLI mode starts no web server and opens no browser; it reaches no network.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BRIDGE="$1"
BIN_DIR="$(cd "$(dirname "$BRIDGE")" && pwd)"
INSPECTOR="$HERE/node_modules/.bin/mcp-inspector"
TIMEOUT_S=30
WANT='["echo","add","slow","log","fail","ask_name"]'

# The recipe names the programs as found on PATH.
export PATH="$BIN_DIR:$PATH"
# Belt and braces: no browser, even if a later version tried to open one.
export MCP_AUTO_OPEN_ENABLED=false BROWSER=none

[[ -x "$INSPECTOR" ]] || { echo "FAIL inspector: setup: $INSPECTOR not installed (npm ci)"; exit 1; }
[[ -x "$BIN_DIR/mcp-example-server" ]] || { echo "FAIL inspector: setup: no mcp-example-server in $BIN_DIR"; exit 1; }

err="$(mktemp)"
trap 'rm -f "$err"' EXIT
for form in "mcp-bridge mcp-example-server" "mcp-bridge -- mcp-example-server"; do
  read -r -a cmd <<<"$form"
  cmd[0]="$BRIDGE"
  out="$(cd "$HERE" && timeout -k 5 "$TIMEOUT_S" "$INSPECTOR" --cli "${cmd[@]}" --method tools/list 2>"$err")"
  rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "FAIL inspector: '$form': the Inspector exited with status $rc; stderr:"
    sed 's/^/  /' "$err"
    exit 1
  fi
  got="$(node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.stringify(JSON.parse(s).tools.map(t=>t.name)))}catch(e){console.log("not JSON: "+e.message)}})' <<<"$out")"
  if [[ "$got" != "$WANT" ]]; then
    echo "FAIL inspector: '$form': tools/list gave $got, want $WANT"
    exit 1
  fi
done
echo "ok inspector: the Inspector CLI listed exactly $WANT through 'mcp-bridge mcp-example-server', with and without --"
