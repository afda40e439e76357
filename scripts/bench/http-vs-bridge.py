#!/usr/bin/env python3
"""The latency the URL form adds, like for like: one raw Python client
(buffered reads, no HTTP or MCP library) times the same `tools/call` two ways against the SAME
upstream process, in interleaved batches:

- direct: a 2026-07-28 `tools/call` POSTed to the upstream on one keep-alive connection (the
  headers and `_meta` the bridge sends; a JSON body with Content-Length or chunked, or an SSE
  body up to the response's event);
- bridge: a 2025-11-25 `tools/call` line to `mcp-bridge URL` over its stdio pipes, which POSTs
  it to the same upstream.

    python3 scripts/bench/http-vs-bridge.py URL [--bridge target/release/mcp-bridge]
        [--runs 5] [--batches 20] [--batch 100] [--tool echo] [--args '{"message":"hello"}']

Each run: --batches pairs of batches of --batch calls (direct then bridge, the order swapped
every other pair; the first call of each batch is a warm-up, not counted). Prints one JSON line
per run (median and p99 in ms of both, and median(bridge) - median(direct)) and a summary line:
the median over runs of each figure. Start the upstream first, e.g. the TS SDK v2 server of
../shared/peers: `PEERS_NODE_MODULES_DIR=$PEERS/npm-sdk node ts2-upstream.mjs http 3990`.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "http-vs-bridge", "version": "1"}}
ANSWER_TIMEOUT_S = 30.0   # one call's answer, on a loaded machine


class Direct:
    """A raw HTTP/1.1 client on one keep-alive connection (reconnects when the server closes
    an idle one; such a call is not counted)."""

    def __init__(self, url, tool):
        self.url = urllib.parse.urlsplit(url)
        self.tool = tool
        self.sock = None
        self.reconnected = False

    def connect(self):
        if self.sock is not None:
            self.sock.close()
        self.sock = socket.create_connection((self.url.hostname, self.url.port), ANSWER_TIMEOUT_S)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.rfile = self.sock.makefile("rb", buffering=65536)
        self.reconnected = True

    def request(self, rid, args):
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                           "params": {"name": self.tool, "arguments": args, "_meta": META}}).encode()
        head = (f"POST {self.url.path} HTTP/1.1\r\nHost: {self.url.netloc}\r\n"
                "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                f"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {self.tool}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        return head + body

    def call(self, rid, args):
        """One call; returns (seconds, counted)."""
        self.reconnected = False
        if self.sock is None:
            self.connect()
        req = self.request(rid, args)
        t0 = time.perf_counter()
        try:
            self.sock.sendall(req)
            body = self.read_response(rid)
        except (ConnectionError, EOFError):
            self.connect()
            t0 = time.perf_counter()
            self.sock.sendall(req)
            body = self.read_response(rid)
        dt = time.perf_counter() - t0
        if b'"result"' not in body:
            raise SystemExit(f"direct call {rid}: {body[:200]!r}")
        return dt, not self.reconnected

    def read_response(self, rid):
        status = self.rfile.readline()
        if not status:
            raise EOFError
        if b" 200 " not in status:
            raise SystemExit(f"direct call {rid}: {status!r}")
        headers = {}
        while True:
            line = self.rfile.readline()
            if line in (b"\r\n", b""):
                break
            k, _, v = line.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        sse = headers.get("content-type", "").startswith("text/event-stream")
        if "content-length" in headers:
            body = self.rfile.read(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = self.read_chunked(sse)
        else:
            raise SystemExit(f"direct call {rid}: neither Content-Length nor chunked: {headers}")
        if headers.get("connection", "").lower() == "close":
            self.sock.close()
            self.sock = None
        if sse:  # the response's event: the data line holding "id"
            for line in body.split(b"\n"):
                if line.startswith(b"data:") and b'"id"' in line:
                    return line[5:]
        return body

    def read_chunked(self, sse):
        out = bytearray()
        while True:
            size = int(self.rfile.readline().split(b";")[0], 16)
            if size == 0:
                self.rfile.readline()
                return bytes(out)
            out += self.rfile.read(size)
            self.rfile.readline()


class Bridge:
    """`mcp-bridge URL` on pipes, initialized as a 2025-11-25 editor."""

    def __init__(self, bridge, url, tool):
        self.tool = tool
        self.proc = subprocess.Popen([bridge, url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "http-vs-bridge", "version": "1"}}})
        if b'"result"' not in self.answer("init"):
            raise SystemExit("bridge: initialize failed")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self, rid):
        needle = f'"id":{json.dumps(rid)}'.encode()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("bridge: stdout closed")
            if needle in line.replace(b" ", b""):
                return line

    def call(self, rid, args):
        line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                           "params": {"name": self.tool, "arguments": args}}).encode() + b"\n"
        t0 = time.perf_counter()
        self.proc.stdin.write(line)
        self.proc.stdin.flush()
        body = self.answer(rid)
        dt = time.perf_counter() - t0
        if b'"result"' not in body:
            raise SystemExit(f"bridge call {rid}: {body[:200]!r}")
        return dt, True

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)


def pct(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def one_run(direct, bridge, args, next_id):
    lat = {"direct": [], "bridge": []}
    for pair in range(args.batches):
        order = [("direct", direct), ("bridge", bridge)]
        if pair % 2:
            order.reverse()
        for name, client in order:
            for i in range(args.batch + 1):
                next_id += 1
                dt, counted = client.call(next_id, json.loads(args.args))
                if i > 0 and counted:
                    lat[name].append(dt * 1000)
    fig = {name: {"calls": len(v), "median_ms": round(statistics.median(v), 3),
                  "p99_ms": round(pct(v, 0.99), 3)} for name, v in lat.items()}
    fig["added_median_ms"] = round(fig["bridge"]["median_ms"] - fig["direct"]["median_ms"], 3)
    fig["added_p99_ms"] = round(fig["bridge"]["p99_ms"] - fig["direct"]["p99_ms"], 3)
    return fig, next_id


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("url")
    ap.add_argument("--bridge", default=os.path.join(REPO, "target/release/mcp-bridge"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--batches", type=int, default=20, help="pairs of batches per run")
    ap.add_argument("--batch", type=int, default=100, help="calls per batch")
    ap.add_argument("--tool", default="echo")
    ap.add_argument("--args", default='{"message":"hello"}')
    args = ap.parse_args()
    direct = Direct(args.url, args.tool)
    bridge = Bridge(args.bridge, args.url, args.tool)
    runs, next_id = [], 0
    for r in range(args.runs):
        fig, next_id = one_run(direct, bridge, args, next_id)
        fig["run"] = r + 1
        runs.append(fig)
        print(json.dumps(fig), flush=True)
    bridge.close()
    med = lambda f: round(statistics.median(f(x) for x in runs), 3)  # noqa: E731
    print(json.dumps({"summary": {
        "runs": args.runs, "calls_per_run_each": args.batches * args.batch,
        "direct_median_ms": med(lambda x: x["direct"]["median_ms"]),
        "bridge_median_ms": med(lambda x: x["bridge"]["median_ms"]),
        "added_median_ms": med(lambda x: x["added_median_ms"]),
        "direct_p99_ms": med(lambda x: x["direct"]["p99_ms"]),
        "bridge_p99_ms": med(lambda x: x["bridge"]["p99_ms"]),
        "load_avg_1min": os.getloadavg()[0]}}))


if __name__ == "__main__":
    main()
