#!/usr/bin/env bash
# Scenarios `inspector` and `inspector-gateway` of run.sh: the MCP Inspector CLI from npm
# (@modelcontextprotocol/inspector 0.15.0, pinned in package.json) as the client.
#
# `inspector`: the README's recipe, run as written:
#   mcp-inspector --cli mcp-bridge mcp-example-server --method tools/list
# The Inspector strips a `--` it is given, so the bridge must find the command without one; the
# form with `--` is run too. Checks the exact tool names the Inspector lists.
#   bash tests/interop/inspector.sh BRIDGE_BIN     (mcp-example-server is taken from its directory)
#
# `inspector-gateway`: many servers behind one bridge (`mcp-bridge --config FILE`, FILE written
# by gateway_config.py: py, everything, example, and signed, which wants an OAuth sign-in). The
# Inspector has a `--config FILE --server NAME` of its own (an editor's file), so
# `mcp-inspector --cli mcp-bridge --config FILE` is the Inspector's option, not the bridge's.
# Two forms that reach the bridge are checked: the editor's entry of the gateway read by the
# Inspector (`--config EDITOR_FILE --server all`), and the command after a `--`
# (`mcp-inspector --cli --method tools/list -- mcp-bridge --config FILE`). tools/list in both
# (exact names: the Inspector declares no capability, so server-everything registers none of
# its conditional tools), and one tools/call of each server (exact content). Each Inspector run
# starts a gateway of its own, which signs in to `signed` before it answers `initialize`
# (the memory token store: a sign-in at each start) through $BROWSER, which the Inspector
# passes on to the bridge with the rest of its environment: run.sh gives its follow-browser
# script, which follows the start URL with curl (the sign-in fixture grants at once).
#   BROWSER=SCRIPT bash tests/interop/inspector.sh BRIDGE_BIN --config FILE
#
# Prints `ok inspector[-gateway]: ...` or `FAIL inspector[-gateway]: <step>: <why>`; exit
# status 0 or 1. The CLI mode starts no web server and opens no browser; it reaches no network.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BRIDGE="$1"
BIN_DIR="$(cd "$(dirname "$BRIDGE")" && pwd)"
INSPECTOR="$HERE/node_modules/.bin/mcp-inspector"
TIMEOUT_S=30
GATEWAY_FILE=""
if [[ $# -eq 3 && "$2" == --config ]]; then GATEWAY_FILE="$3"; fi
NAME=inspector
if [[ -n "$GATEWAY_FILE" ]]; then NAME=inspector-gateway; fi

# The recipe names the programs as found on PATH.
export PATH="$BIN_DIR:$PATH"
# Belt and braces: no browser, even if a later version tried to open one. The gateway keeps
# the $BROWSER it is given (the sign-in of `signed`), else none.
export MCP_AUTO_OPEN_ENABLED=false
if [[ -n "$GATEWAY_FILE" ]]; then export BROWSER="${BROWSER:-none}"; else export BROWSER=none; fi

[[ -x "$INSPECTOR" ]] || { echo "FAIL $NAME: setup: $INSPECTOR not installed (npm ci)"; exit 1; }
[[ -x "$BIN_DIR/mcp-example-server" ]] || { echo "FAIL $NAME: setup: no mcp-example-server in $BIN_DIR"; exit 1; }

err="$(mktemp)"
trap 'rm -f "$err"' EXIT

# inspect WHAT ARGS...: runs the Inspector CLI with ARGS; its stdout in $out, or FAIL and exit.
inspect() {
  local what="$1"
  shift
  out="$(cd "$HERE" && timeout -k 5 "$TIMEOUT_S" "$INSPECTOR" --cli "$@" 2>"$err")"
  local rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "FAIL $NAME: $what: the Inspector exited with status $rc; stderr:"
    sed 's/^/  /' "$err"
    exit 1
  fi
}

# pick EXPR: the value of the JS expression EXPR of the JSON result `r` in $out, as JSON.
pick() {
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{const r=JSON.parse(s);console.log(JSON.stringify(eval(process.argv[1])))}catch(e){console.log("not JSON: "+e.message)}})' "$1" <<<"$out"
}

# expect WHAT GOT WANT
expect() {
  if [[ "$2" != "$3" ]]; then
    echo "FAIL $NAME: $1: got $2, want $3"
    exit 1
  fi
}

if [[ -z "$GATEWAY_FILE" ]]; then
  WANT='["echo","add","slow","log","fail","ask_name"]'
  for form in "mcp-bridge mcp-example-server" "mcp-bridge -- mcp-example-server"; do
    read -r -a cmd <<<"$form"
    cmd[0]="$BRIDGE"
    inspect "'$form'" "${cmd[@]}" --method tools/list
    expect "'$form': tools/list" "$(pick 'r.tools.map(t => t.name)')" "$WANT"
  done
  echo "ok inspector: the Inspector CLI listed exactly $WANT through 'mcp-bridge mcp-example-server', with and without --"
  exit 0
fi

WANT='["py__echo","py__add","py__ask_name","py__ask_llm","py__plan_trip","py__countdown","py__flip_tools","py__increment",'
WANT+='"everything__echo","everything__get-annotated-message","everything__get-env","everything__get-resource-links",'
WANT+='"everything__get-resource-reference","everything__get-structured-content","everything__get-sum",'
WANT+='"everything__get-tiny-image","everything__gzip-file-as-resource","everything__toggle-simulated-logging",'
WANT+='"everything__toggle-subscriber-updates","everything__trigger-long-running-operation",'
WANT+='"example__echo","example__add","example__slow","example__log","example__fail","example__ask_name",'
WANT+='"signed__echo"]'
# The editor's entry of the gateway (docs/usage.md), in an editor's file of its own.
editor_file="$(dirname "$GATEWAY_FILE")/editor.json"
BRIDGE="$BRIDGE" GATEWAY_FILE="$GATEWAY_FILE" node -e '
  const entry = { command: process.env.BRIDGE, args: ["--config", process.env.GATEWAY_FILE] };
  process.stdout.write(JSON.stringify({ mcpServers: { all: entry } }, null, 2) + "\n");' >"$editor_file" \
  || { echo "FAIL $NAME: setup: cannot write $editor_file"; exit 1; }
trap 'rm -f "$err" "$editor_file"' EXIT

inspect "--config EDITOR_FILE --server all: tools/list" --config "$editor_file" --server all --method tools/list
expect "--config EDITOR_FILE --server all: tools/list" "$(pick 'r.tools.map(t => t.name)')" "$WANT"
inspect "-- mcp-bridge --config FILE: tools/list" --method tools/list -- "$BRIDGE" --config "$GATEWAY_FILE"
expect "-- mcp-bridge --config FILE: tools/list" "$(pick 'r.tools.map(t => t.name)')" "$WANT"

for call in 'py__echo message=hi|[{"type":"text","text":"Echo: hi"}]' \
            'everything__echo message=hi|[{"type":"text","text":"Echo: hi"}]' \
            'example__echo text=hi|[{"type":"text","text":"hi"}]' \
            'signed__echo text=hi|[{"type":"text","text":"hi"}]'; do
  read -r tool arg <<<"${call%%|*}"
  inspect "tools/call $tool" --config "$editor_file" --server all --method tools/call --tool-name "$tool" --tool-arg "$arg"
  expect "tools/call $tool $arg: content" "$(pick 'r.isError === true ? "isError: " + JSON.stringify(r) : r.content')" "${call#*|}"
done
echo "ok inspector-gateway: the Inspector CLI listed exactly the 27 tools of py, everything, example and signed (an OAuth sign-in) through 'mcp-bridge --config FILE' (the editor's entry, and after --), and called one of each"
