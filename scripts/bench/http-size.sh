#!/usr/bin/env bash
# Builds the binaries of scripts/bench/http-serve.py and prints the stripped sizes of the HTTP
# servers for docs/performance.md ("The server API over HTTP, against rmcp"):
#   - examples/embedded with the features an HTTP server needs (`--no-default-features
#     --features http-server`: no URL form, no sign-in, no schema checks), in the release
#     profile and in the profile `small`;
#   - the same server on rmcp 3.11 (tests/interop/rmcp/src/bin/server.rs with its feature
#     `http`) in its release profile (strip, lto = "fat", codegen-units = 1, opt-level 3,
#     unwinding) and in its profile `small` (the same lines as ours: opt-level "z",
#     panic = "abort");
#   - the load generator (scripts/bench/http-load) in release.
#
#   bash scripts/bench/http-size.sh     (CARGO_TARGET_DIR is honoured; rmcp's and the load
#                                        generator's builds go to $CARGO_TARGET_DIR/rmcp and
#                                        $CARGO_TARGET_DIR/http-load)
#
# Every cargo runs under the machine-wide build lock (/work/.cargo.lock) when it exists.
set -euo pipefail
cd "$(dirname "$0")/../.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
lock=/work/.cargo.lock
held() { if [ -e "$lock" ]; then flock "$lock" "$@"; else "$@"; fi; }
rmcp=(--locked --manifest-path tests/interop/rmcp/Cargo.toml --target-dir "$target/rmcp" --features http --bin server)
for profile in release small; do
  held cargo build --profile "$profile" --locked --no-default-features --features http-server --example embedded >&2
  held cargo build --profile "$profile" "${rmcp[@]}" >&2
done
held cargo build --release --locked --manifest-path scripts/bench/http-load/Cargo.toml \
  --target-dir "$target/http-load" >&2
size() { stat -c %s "$1" | sed -e ':a' -e 's/\B[0-9]\{3\}\>/,&/' -e 'ta'; }
echo "| stripped binary (bytes) | mcp-bridge \`serve_http\` (examples/embedded) | rmcp 3.11 (tests/interop/rmcp, \`--features http\`) |"
echo "|---|---|---|"
echo "| release profile | $(size "$target/release/examples/embedded") | $(size "$target/rmcp/release/server") |"
echo "| profile \`small\` | $(size "$target/small/examples/embedded") | $(size "$target/rmcp/small/server") |"
