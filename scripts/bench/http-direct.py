#!/usr/bin/env python3
"""The floor of the URL form: a raw 2026-07-28 client that POSTs tools/call straight to a
Streamable HTTP server (one keep-alive connection, the standard headers, the `_meta` the
bridge sends), N sequential calls; prints median/p90/p99 per call in ms as one JSON line.
Compare with the bridge on the same server (../shared/peers/bench.sh ... bridge).

  python3 scripts/bench/http-direct.py URL [N] [TOOL] [ARGS_JSON]
"""
import http.client
import json
import statistics
import sys
import time
import urllib.parse

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "http-direct", "version": "1"}}


def main(argv):
    url = urllib.parse.urlsplit(argv[0])
    n = int(argv[1]) if len(argv) > 1 else 1000
    tool = argv[2] if len(argv) > 2 else "echo"
    args = json.loads(argv[3]) if len(argv) > 3 else {"message": "hello"}
    conn = http.client.HTTPConnection(url.hostname, url.port)
    lat = []
    for i in range(n + 50):
        body = json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                           "params": {"name": tool, "arguments": args, "_meta": META}})
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
        t0 = time.perf_counter()
        conn.request("POST", url.path, body, headers)
        resp = conn.getresponse()
        data = resp.read()
        dt = (time.perf_counter() - t0) * 1000
        if resp.status != 200 or b'"result"' not in data:
            raise SystemExit(f"call {i}: HTTP {resp.status}: {data[:200]!r}")
        if i >= 50:  # warm-up
            lat.append(dt)
    lat.sort()
    print(json.dumps({"calls": n, "median_ms": round(statistics.median(lat), 3),
                      "p90_ms": round(lat[int(0.9 * n)], 3), "p99_ms": round(lat[min(n - 1, int(0.99 * n))], 3)}))


if __name__ == "__main__":
    main(sys.argv[1:])
