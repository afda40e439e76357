#!/bin/bash
# The cold install of docs/performance.md ("Install and binary size"), interleaved over
# revisions in one session: each round clones every revision afresh and runs the install
# that its README gives (with a `mcp-dap/` package, the bridge's `cargo install` and then
# mcp-dap's, both in the clone's own target/, cargo's default for `--path`; without one, the
# single `cargo install --path .`), timing each command. The crates are downloaded first
# (`cargo fetch`), so the figure is the compile, not the network. Each install holds the
# machine-wide build lock (/work/.cargo.lock when it exists), so that no build runs beside it.
#
#   bash scripts/bench/install-time.sh [--rounds N] REV [REV ...]
#
# Prints one line per round and revision: the seconds of each command and their sum, the
# packages compiled, and the installed executables with their sizes.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
rounds=1
if [ "${1:-}" = "--rounds" ]; then rounds=$2; shift 2; fi
[ $# -ge 1 ] || { echo "usage: $0 [--rounds N] REV [REV ...]" >&2; exit 2; }
for rev in "$@"; do git rev-parse --verify --quiet "$rev^{commit}" >/dev/null \
  || { echo "install-time: no such revision: $rev" >&2; exit 2; }; done
lock=/work/.cargo.lock
held() { if [ -e "$lock" ]; then flock "$lock" "$@"; else "$@"; fi; }
work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-bridge-install-time.XXXXXX")
trap 'rm -rf "$work"' EXIT
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR
timed() { # label dir args...: runs cargo install in dir; prints "label seconds compiled"
  # The clock runs inside the lock: a wait for another build is not the install's time.
  local label=$1 dir=$2; shift 2
  (cd "$dir" && held bash -c 'start=$(date +%s.%N); cargo install --locked "$@" >"$0" 2>&1;
    rc=$?; end=$(date +%s.%N); echo "$end - $start" | bc > "$0.seconds"; exit $rc' \
    "$work/$label.log" "$@")
  printf '%s %.0f %s\n' "$label" "$(cat "$work/$label.log.seconds")" \
    "$(grep -c '^ *Compiling' "$work/$label.log")"
}
for r in $(seq "$rounds"); do
  for rev in "$@"; do
    clone="$work/clone" root="$work/root"
    rm -rf "$clone" "$root"
    git clone --quiet "$repo" "$clone"
    git -C "$clone" checkout --quiet "$rev"
    (cd "$clone" && cargo fetch --locked --quiet)
    out=$(timed bridge "$clone" --path . --root "$root")
    if [ -f "$clone/mcp-dap/Cargo.toml" ]; then
      out="$out; $(timed mcp-dap "$clone" --path mcp-dap --root "$root")"
    fi
    total=$(echo "$out" | tr ';' '\n' | awk '{s += $2} END {print s}')
    bins=$(cd "$root/bin" && for b in *; do printf '%s=%s ' "$b" "$(stat -c %s "$b")"; done)
    echo "round $r $rev: total ${total} s ($out) installed: $bins"
  done
done
