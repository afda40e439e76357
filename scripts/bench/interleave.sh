#!/bin/bash
# Interleaves the stdio benchmarks of docs/performance.md over builds in one session: each
# build's binaries are copied to target/<profile>/ first (mcp-bridge, mcp-fixture-server), and
# every run alternates the builds, so that the machine's load and regime fall on all of them.
# Each run holds the machine-wide build lock (/work/.cargo.lock when it exists), so that no
# build runs beside a measurement.
#
#   bash scripts/bench/interleave.sh [--rounds N] PROFILE [PROFILE ...]
#
# Prints, per round and build: the raw driver's bridge - socat, the Node same-arm figure, the
# 16 MiB result, the soak's peak RSS, and the CPU per small call of all builds together.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=3
if [ "${1:-}" = "--rounds" ]; then rounds=$2; shift 2; fi
[ $# -ge 1 ] || { echo "usage: $0 [--rounds N] PROFILE [PROFILE ...]" >&2; exit 2; }
for p in "$@"; do
  for b in mcp-bridge mcp-fixture-server; do
    [ -x "target/$p/$b" ] || { echo "interleave: target/$p/$b is missing" >&2; exit 2; }
  done
done
lock=/work/.cargo.lock
held() { if [ -e "$lock" ]; then flock "$lock" "$@"; else "$@"; fi; }
drop_cache() {
  sync
  python3 - "$@" <<'PY'
import os, sys
for p in sys.argv[1:]:
    for b in ("mcp-bridge", "mcp-fixture-server"):
        fd = os.open(f"target/{p}/{b}", os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
PY
}
say() { echo "### $1 $(cut -d' ' -f1-3 /proc/loadavg)"; }
for r in $(seq "$rounds"); do
  for p in "$@"; do
    say "raw round $r $p"
    held python3 scripts/bench-e2e.py --runs 5 --requests 3000 --warmup 300 --profile "$p" | tail -1
  done
done
for r in $(seq "$rounds"); do
  for p in "$@"; do
    say "node round $r $p"
    held python3 scripts/bench-e2e.py --node --runs 5 --requests 1000 --warmup 200 --profile "$p" | grep median
  done
done
for r in $(seq "$rounds"); do
  for p in "$@"; do
    drop_cache "$@"
    say "large round $r $p"
    held python3 scripts/bench-e2e.py --large-result-mib 16 --runs 5 --calls 3 --profile "$p" | tail -2
  done
done
for r in $(seq "$rounds"); do
  for p in "$@"; do
    drop_cache "$@"
    say "soak round $r $p"
    held python3 scripts/bench/soak-memory.py --requests 200000 --in-flight 64 --cancel-percent 7 \
      --bridge "target/$p/mcp-bridge" --server "target/$1/mcp-fixture-server" --json
  done
done
bridges=()
for p in "$@"; do bridges+=("target/$p/mcp-bridge"); done
for r in $(seq "$rounds"); do
  say "cpu round $r"
  held python3 scripts/bench/small-call-cpu.py --runs 7 --calls 20000 \
    --server "target/$1/mcp-fixture-server" "${bridges[@]}" | tail -"$(( $# + 1 ))"
done
