#!/usr/bin/env bash
# Size and start of the embedded bridge's example (examples/embedded/main.rs) side by side with the
# same server written on rmcp 3.x (tests/interop/rmcp/src/bin/server.rs), for
# docs/performance.md:
#   - user code: lines that are neither blank nor comments, `use` lines included;
#   - the stripped binary: both in the profile `small` (the release profile: strip,
#     lto = "fat", codegen-units = 1, at opt-level "z" with panic = "abort"; the same lines in
#     both Cargo.toml files); ours without default features (no `schema-check`, `http`,
#     `auth`), as an embedded server ships it; rmcp with the features the interop needs;
#   - time from the start of the process to the first response line, for a first request of
#     each revision (server/discover of 2026-07-28, initialize of 2025-11-25), N runs each,
#     the two servers' runs interleaved (scripts/bench/first-response.py: median and 90th
#     percentile).
#
#   bash scripts/bench/embedded-size-start.sh [N]          (default N = 50)
#
# Builds both in the profile small (minutes each; one build each).
set -euo pipefail
cd "$(dirname "$0")/../.."
N="${1:-50}"
RMCP_DIR=tests/interop/rmcp

cargo build --profile small --locked --no-default-features --example embedded >&2
cargo build --profile small --locked --manifest-path "$RMCP_DIR/Cargo.toml" --target-dir "$RMCP_DIR/target" --bin server >&2
ours="${CARGO_TARGET_DIR:-$PWD/target}/small/examples/embedded"
theirs="$RMCP_DIR/target/small/server"

loc() { grep -cvE '^\s*($|//)' "$1"; }
echo "| | mcp-bridge embed (examples/embedded/main.rs) | rmcp 3.11 ($RMCP_DIR/src/bin/server.rs) |"
echo "|---|---|---|"
echo "| user code (lines, no blanks or comments) | $(loc examples/embedded/main.rs) | $(loc "$RMCP_DIR/src/bin/server.rs") |"
echo "| stripped binary, profile small (bytes) | $(stat -c %s "$ours") | $(stat -c %s "$theirs") |"
for first in discover initialize; do
  both="$(python3 scripts/bench/first-response.py "$N" "$first" "$ours" "$theirs")"
  echo "| start to the first response, first request $first (median / p90, ms, N=$N) | $both |"
done
