#!/usr/bin/env python3
"""End-to-end benchmark of mcp-bridge: the latency it adds per request and its peak memory.

In one run, against the same upstream (the crate's example server), it times N sequential
`tools/call echo` requests, interleaved in batches of 100
  direct: a 2026-07-28 client (this script) -> mcp-example-server
  bridge: a 2025-11-25 client (this script) -> mcp-bridge -> mcp-example-server
and reports the median, p90 and p99 of each, the added median latency, and the bridge's peak
RSS (VmHWM from /proc, the bridge process alone, without its child).

  cargo build --release && python3 scripts/bench-e2e.py [--requests 5000] [--warmup 500]

Only the standard library is used; timings are wall clock on this machine.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}


class Peer:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, bufsize=0)
        self.next_id = 0

    def call(self, method, params):
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.p.stdin.write(line.encode() + b"\n")
        while True:
            out = self.p.stdout.readline()
            if not out:
                raise RuntimeError("peer closed its stdout")
            msg = json.loads(out)
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=15)


def timed_calls(peer, n, params):
    samples = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        peer.call("tools/call", params)
        samples.append((time.perf_counter_ns() - t0) / 1000.0)
    return samples


def quantile(s, q):
    s = sorted(s)
    return s[min(len(s) - 1, int(round((len(s) - 1) * q)))]


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=5000)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--profile", default="release", help="target/<profile> holding the binaries")
    a = ap.parse_args()
    bindir = os.path.join(ROOT, "target", a.profile)
    server = os.path.join(bindir, "mcp-example-server")
    bridge = os.path.join(bindir, "mcp-bridge")
    for b in (server, bridge):
        if not os.access(b, os.X_OK):
            sys.exit(f"bench-e2e: {b} is missing; run cargo build --{a.profile}")

    direct = Peer([server])
    direct.call("server/discover", {"_meta": META})
    modern_params = {"name": "echo", "arguments": {"text": "hello"}, "_meta": META}
    via = Peer([bridge, "--", server])
    via.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "bench", "version": "1"}})
    via.notify("notifications/initialized")
    legacy_params = {"name": "echo", "arguments": {"text": "hello"}}
    timed_calls(direct, a.warmup, modern_params)
    timed_calls(via, a.warmup, legacy_params)
    # Interleaved in batches of 100, so that whatever else the machine does weighs on both.
    d, b = [], []
    left = a.requests
    while left > 0:
        n = min(100, left)
        d += timed_calls(direct, n, modern_params)
        b += timed_calls(via, n, legacy_params)
        left -= n
    rss = peak_rss_kib(via.p.pid)
    direct.close()
    via.close()

    def row(name, s):
        return (f"{name:<7} median {statistics.median(s):8.1f} us   p90 {quantile(s, 0.9):8.1f} us   "
                f"p99 {quantile(s, 0.99):8.1f} us")

    print(f"requests: {a.requests} sequential tools/call echo on each path, interleaved in batches "
          f"of 100, after {a.warmup} warm-up calls each")
    print(row("direct", d))
    print(row("bridge", b))
    print(f"added median latency: {statistics.median(b) - statistics.median(d):.1f} us per call")
    print(f"bridge peak RSS: {rss / 1024:.1f} MiB ({rss} KiB, VmHWM of the bridge process)")


if __name__ == "__main__":
    main()
