#!/usr/bin/env python3
"""Time from the start of a stdio MCP server to its first response line, for one or more
servers side by side (their runs interleaved, so a busy machine slows each alike).

  python3 first-response.py N discover|initialize SERVER [SERVER...]

Starts each server N times; each time writes one request (a 2026-07-28 `server/discover`, or
a 2025-11-25 `initialize`) at once, and measures from just before the spawn to the first line
on its stdout (which must be the response to that request). Prints one "median / p90" in ms
per server, separated by " | ".
"""
import json
import statistics
import subprocess
import sys
import time

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}
REQUESTS = {
    "discover": {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}},
    "initialize": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}},
}


def once(server, request):
    line = (json.dumps(request) + "\n").encode()
    t0 = time.perf_counter()
    p = subprocess.Popen([server], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    p.stdin.write(line)
    p.stdin.flush()
    first = p.stdout.readline()
    elapsed = time.perf_counter() - t0
    p.stdin.close()
    p.wait(timeout=10)
    response = json.loads(first)
    if response.get("id") != 1 or "result" not in response:
        sys.exit(f"{server}: unexpected first line: {first!r}")
    return elapsed * 1000


def summary(times):
    times = sorted(times)
    p90 = times[min(len(times) - 1, int(round(0.9 * len(times))) - 1)]
    return f"{statistics.median(times):.2f} / {p90:.2f}"


def main():
    n, kind, servers = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    times = {s: [] for s in servers}
    for _ in range(n):
        for s in servers:
            times[s].append(once(s, REQUESTS[kind]))
    print(" | ".join(summary(times[s]) for s in servers))


if __name__ == "__main__":
    main()
