#!/usr/bin/env python3
"""Time from the start of a stdio MCP server to its first response line.

  python3 first-response.py N discover|initialize SERVER [ARGS...]

Starts the server N times; each time writes one request (a 2026-07-28 `server/discover`, or a
2025-11-25 `initialize`) at once, and measures from just before the spawn to the first line
on its stdout (which must be the response to that request). Prints "median / p90" in ms.
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


def once(cmd, request):
    line = (json.dumps(request) + "\n").encode()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdin.write(line)
    p.stdin.flush()
    first = p.stdout.readline()
    elapsed = time.perf_counter() - t0
    p.stdin.close()
    p.wait(timeout=10)
    response = json.loads(first)
    if response.get("id") != 1 or "result" not in response:
        sys.exit(f"unexpected first line: {first!r}")
    return elapsed * 1000


def main():
    n, kind, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    times = sorted(once(cmd, REQUESTS[kind]) for _ in range(n))
    p90 = times[min(len(times) - 1, int(round(0.9 * len(times))) - 1)]
    print(f"{statistics.median(times):.2f} / {p90:.2f}")


if __name__ == "__main__":
    main()
