#!/usr/bin/env python3
"""The code of an executable by crate: the sizes of its text symbols (`nm --size-sort -S -C`),
each counted under the first crate its demangled name names, or under `mcp_bridge` when the
name holds `mcp_bridge::` anywhere (a generic of another crate instantiated for the crate's
types is code the crate asked for).

Build the executable with symbols first, with the release profile otherwise unchanged:
    CARGO_PROFILE_RELEASE_STRIP=false cargo build --locked --release --bin mcp-bridge
    python3 scripts/bench/size-by-crate.py target/release/mcp-bridge [N]
"""
import collections
import re
import subprocess
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    out = subprocess.run(["nm", "--size-sort", "-S", "-C", sys.argv[1]],
                         check=True, capture_output=True, text=True).stdout
    by_crate = collections.Counter()
    total = 0
    for line in out.splitlines():
        parts = line.split(" ", 3)
        if len(parts) < 4 or parts[2] not in "tTwW":
            continue
        size, name = int(parts[1], 16), parts[3]
        total += size
        if "mcp_bridge::" in name:
            crate = "mcp_bridge"
        else:
            m = re.search(r"([a-z_][a-z0-9_]*)::", name)
            crate = m.group(1) if m else "(no path)"
        by_crate[crate] += size
    print(f"{total:>10}  text symbols in all")
    for crate, size in by_crate.most_common(top):
        print(f"{size:>10}  {100 * size / total:5.1f} %  {crate}")


if __name__ == "__main__":
    main()
