#!/usr/bin/env python3
"""Where the bridge's time goes with the TS SDK v2 server: a raw client sends the
exact bytes the bridge sends (its `_meta`, its `subscriptions/listen`) to
scripts/bench/ts2-server.mjs directly, through socat, and compares with the bridge itself, on
the same (2026-07-28) arm; plus the server's legacy arm. Interleaved in batches of 100.
Per path: the median latency, the CPU time per call of the server (node, all its threads) and
of the hop (socat or mcp-bridge), from /proc (clock ticks, so +-3 us at 3000 calls).

  cargo build --release && python3 scripts/bench/node-arms.py [--requests 2000] [--runs 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = ["node", os.path.join(ROOT, "scripts", "bench", "ts2-server.mjs")]
BRIDGE = os.path.join(ROOT, "target", "release", "mcp-bridge")
SOCAT = ["socat", "-b", "1048576", "-", "EXEC:" + " ".join(SERVER)]
# What mcp-bridge 0.1.0 puts in every request's params (seen with scripts/../stdio-tap.py).
BRIDGE_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {},
               "io.modelcontextprotocol/clientInfo": {"name": "mcp-bridge", "version": "0.1.0"}}
TICK = os.sysconf("SC_CLK_TCK")
BATCH = 100


def compact(msg):
    return (json.dumps(msg, separators=(",", ":")) + "\n").encode()


def cpu_s(pid):
    """CPU seconds (user + system) of every thread of pid."""
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{t}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / TICK


class Path:
    def __init__(self, name, argv, modern, listen=False):
        self.name, self.modern, self.next_id = name, modern, 0
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, bufsize=1 << 20)
        if modern:
            self.call("server/discover", {})
            if listen:
                self.send(compact({"jsonrpc": "2.0", "id": "listen-1",
                                   "method": "subscriptions/listen",
                                   "params": {"_meta": BRIDGE_META,
                                              "notifications": {"toolsListChanged": True}}}))
        else:
            self.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "bench", "version": "1"}})
            self.send(compact({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        hop = self.p.pid
        with open(f"/proc/{hop}/task/{hop}/children") as f:
            kids = [int(k) for k in f.read().split()]
        self.server, self.hop = (hop, None) if not kids else (kids[0], hop)
        self.samples, self.server_cpu, self.hop_cpu = [], 0.0, 0.0

    def send(self, frame):
        self.p.stdin.write(frame)
        self.p.stdin.flush()

    def call(self, method, params):
        self.next_id += 1
        if self.modern:
            params = dict(params, _meta=BRIDGE_META)
        self.send(compact({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                           "params": params}))
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.next_id:
                return msg["result"]

    def batch(self, n, timed):
        s0 = cpu_s(self.server)
        h0 = cpu_s(self.hop) if self.hop else 0
        for _ in range(n):
            t0 = time.perf_counter_ns()
            self.call("tools/call", {"name": "echo", "arguments": {"text": "hello"}})
            if timed:
                self.samples.append((time.perf_counter_ns() - t0) / 1000.0)
        if timed:
            self.server_cpu += cpu_s(self.server) - s0
            self.hop_cpu += (cpu_s(self.hop) - h0) if self.hop else 0

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def one_run(requests, warmup):
    paths = [Path("direct, legacy arm", SERVER, False),
             Path("direct, bridge's bytes", SERVER, True, listen=True),
             Path("socat, legacy arm", SOCAT, False),
             Path("socat, bridge's bytes", SOCAT, True, listen=True),
             Path("bridge", [BRIDGE, "--"] + SERVER, False)]
    for p in paths:
        p.batch(warmup, False)
    for _ in range(requests // BATCH):
        for p in paths:
            p.batch(BATCH, True)
    out = {}
    for p in paths:
        n = len(p.samples)
        out[p.name] = (statistics.median(p.samples), 1e6 * p.server_cpu / n, 1e6 * p.hop_cpu / n)
        p.close()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    runs = [one_run(a.requests, a.warmup) for _ in range(a.runs)]
    print("| path | median latency (runs) | server CPU/call | hop CPU/call |")
    print("|---|---|---|---|")
    for name in runs[0]:
        lat = [r[name][0] for r in runs]
        srv = statistics.median(r[name][1] for r in runs)
        hop = statistics.median(r[name][2] for r in runs)
        print(f"| {name} | {statistics.median(lat):.0f} us ({', '.join(f'{x:.0f}' for x in lat)}) "
              f"| {srv:.0f} us | {hop:.0f} us |")


if __name__ == "__main__":
    main()
