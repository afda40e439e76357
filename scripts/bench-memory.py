#!/usr/bin/env python3
"""Memory benchmark of mcp-bridge: peak RSS while a peer misbehaves. Not in CI.

  cargo build --release --workspace && python3 scripts/bench-memory.py [--seconds 20] [--requests 1500]

Case A, a flooding upstream and a slow editor: after `logging/setLevel info`, one
`tools/call log_flood` makes the fixture server write `notifications/message` as fast as the
bridge reads them, while this script reads the bridge's stdout slowly (4 KiB every 100 ms)
for --seconds. Then it reads at full speed again and times a `ping`.

Case A2, the same slow editor and log flood, and large responses: a sender thread sends
--big-requests `tools/call echo` requests of 1 MiB each while the editor reads 64 KiB every
100 ms; the queue toward the editor fills to its bound and the readers pause (the sender
blocks on the bridge's full stdin, and the upstream, blocked on its stdout, stops reading,
so later requests may get `upstream_busy`). Then the editor reads at full speed: every
request must get its response (the echo or `upstream_busy`), and a `ping` is timed.

Case B, an upstream that never reads its stdin (`--stall-stdin-after 1`): --requests
`tools/call echo` requests of 1 MiB each, each followed at once by its
`notifications/cancelled`. Then the upstream reads again (its resume file is created) and a
`ping` and an `echo` are timed.

Case B2, the same without cancels: the queue toward the upstream fills, later requests get
`upstream_busy` at once.

Peak RSS is VmHWM of the bridge process alone (not its child), read before the bridge exits.
Targets: A <= 160 MiB, B <= 200 MiB. Only the standard library is used.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BRIDGE = os.path.join(ROOT, "target", "release", "mcp-bridge")
SERVER = os.path.join(ROOT, "target", "release", "mcp-fixture-server")
MIB = 1024 * 1024


def vm(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024.0
    return 0.0


class Bridge:
    """The bridge over pipes; a reader thread collects responses by id and counts the rest."""

    def __init__(self, server_args):
        # The full counters are a debug line (info has the short summary).
        argv = [BRIDGE, "--log-level", "debug", "--", SERVER, "--test-tools", *server_args]
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, bufsize=0)
        self.responses = {}
        self.notifications = 0
        self.cond = threading.Condition()
        self.slow = False
        self.slow_chunk = 4096
        self.stderr = b""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stderr(self):
        while True:
            chunk = self.p.stderr.read(65536)
            if not chunk:
                return
            self.stderr += chunk

    def _read(self):
        buf = b""
        while True:
            if self.slow:
                chunk = self.p.stdout.read(self.slow_chunk)
                time.sleep(0.1)
            else:
                chunk = self.p.stdout.read(1 << 20)
            if not chunk:
                with self.cond:
                    self.cond.notify_all()
                return
            buf += chunk
            *lines, buf = buf.split(b"\n")
            with self.cond:
                for line in lines:
                    msg = json.loads(line)
                    if "id" in msg and "method" not in msg:
                        self.responses[msg["id"]] = msg
                    else:
                        self.notifications += 1
                self.cond.notify_all()

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")

    def request(self, rid, method, params):
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})

    def wait(self, rid, timeout=60.0):
        end = time.monotonic() + timeout
        with self.cond:
            while rid not in self.responses:
                left = end - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"no response to {rid}")
                self.cond.wait(left)
            return self.responses[rid]

    def initialize(self):
        self.request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                       "clientInfo": {"name": "bench-memory", "version": "1"}})
        r = self.wait(0)
        assert "result" in r, r
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def timed_ping(self, rid):
        t0 = time.monotonic()
        self.request(rid, "ping", {})
        r = self.wait(rid)
        assert r.get("result") == {}, r
        return (time.monotonic() - t0) * 1e3

    def peak(self):
        return vm(self.p.pid, "VmHWM")

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=20)
        text = self.stderr.decode(errors="replace")
        totals = [l for l in text.splitlines() if "metrics: debug: totals:" in l]
        return totals[-1] if totals else ""


def queue_part(totals, name):
    for part in totals.split("; "):
        if part.split("totals: ")[-1].startswith(name + ":"):
            return part.split("totals: ")[-1]
    return ""


def case_a(seconds):
    b = Bridge([])
    b.initialize()
    b.request(1, "logging/setLevel", {"level": "info"})
    b.wait(1)
    start_rss = vm(b.p.pid, "VmRSS")
    b.slow = True
    b.request(2, "tools/call", {"name": "log_flood", "arguments": {"count": 100_000_000}})
    time.sleep(seconds)
    peak_slow = b.peak()
    b.slow = False
    ping_ms = b.timed_ping(3)
    b.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
    peak = b.peak()
    totals = b.close()
    return {"start_rss_mib": start_rss, "peak_rss_mib_while_slow": peak_slow,
            "peak_rss_mib": peak, "ping_after_resume_ms": ping_ms,
            "notifications_read": b.notifications,
            "editor_queue": queue_part(totals, "editor_queue")}


def case_a2(seconds, big_requests):
    b = Bridge([])
    b.initialize()
    b.request(1, "logging/setLevel", {"level": "info"})
    b.wait(1)
    b.slow_chunk = 65536
    b.slow = True
    b.request(2, "tools/call", {"name": "log_flood", "arguments": {"count": 100_000_000}})
    text = "r" * MIB

    def sender():
        for i in range(big_requests):
            b.request(100 + i, "tools/call", {"name": "echo", "arguments": {"text": text}})

    t = threading.Thread(target=sender, daemon=True)
    t.start()
    time.sleep(seconds)
    peak_slow = b.peak()
    b.slow = False
    t0 = time.monotonic()
    busy = 0
    for i in range(big_requests):
        r = b.wait(100 + i, timeout=120)
        if r.get("error", {}).get("data", {}).get("cause") == "upstream_busy":
            # The upstream, blocked on its own stdout by the paused reader, stopped reading:
            # the queue toward it filled.
            busy += 1
            continue
        assert "result" in r and r["result"]["content"][0]["text"] == text, \
            f"response {100 + i}: {json.dumps(r)[:300]}"
    all_ms = (time.monotonic() - t0) * 1e3
    ping_ms = b.timed_ping(3)
    b.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
    peak = b.peak()
    totals = b.close()
    return {"peak_rss_mib_while_slow": peak_slow, "peak_rss_mib": peak,
            "all_responses_after_resume_ms": all_ms, "ping_after_resume_ms": ping_ms,
            "upstream_busy_answers": busy,
            "editor_queue": queue_part(totals, "editor_queue"),
            "upstream_queue": queue_part(totals, "upstream_queue")}


def case_b(requests, cancel):
    d = tempfile.mkdtemp(prefix="bench-memory-")
    resume = os.path.join(d, "resume")
    b = Bridge(["--no-listen", "--stall-stdin-after", "1", "--resume-stdin-file", resume])
    b.initialize()
    text = "m" * MIB
    t0 = time.monotonic()
    for i in range(requests):
        rid = 100 + i
        b.request(rid, "tools/call", {"name": "echo", "arguments": {"text": text}})
        if cancel:
            b.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": rid}})
    sent_s = time.monotonic() - t0
    ping_stalled_ms = b.timed_ping(1)
    peak_stalled = b.peak()
    open(resume, "w").close()
    t1 = time.monotonic()
    ping_ms = b.timed_ping(2)
    b.request(3, "tools/call", {"name": "echo", "arguments": {"text": "again"}})
    r = b.wait(3)
    assert r["result"]["content"][0]["text"] == "again", r
    echo_ms = (time.monotonic() - t1) * 1e3
    busy = sum(1 for m in b.responses.values()
               if m.get("error", {}).get("data", {}).get("cause") == "upstream_busy")
    peak = b.peak()
    totals = b.close()
    os.remove(resume)
    os.rmdir(d)
    return {"peak_rss_mib_while_stalled": peak_stalled, "peak_rss_mib": peak,
            "send_seconds": sent_s, "ping_while_stalled_ms": ping_stalled_ms,
            "ping_after_resume_ms": ping_ms, "echo_after_resume_ms": echo_ms,
            "upstream_busy_answers": busy,
            "upstream_queue": queue_part(totals, "upstream_queue")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--requests", type=int, default=1500)
    ap.add_argument("--big-requests", type=int, default=40)
    ap.add_argument("--case", choices=["A", "A2", "B", "B2", "all"], default="all")
    args = ap.parse_args()
    for exe in (BRIDGE, SERVER):
        if not os.path.exists(exe):
            sys.exit(f"missing {exe}: run cargo build --release --workspace first")
    ok = True
    if args.case in ("A", "all"):
        a = case_a(args.seconds)
        print("case A (log flood, slow editor):", json.dumps(a, indent=1))
        ok &= a["peak_rss_mib"] <= 160
    if args.case in ("A2", "all"):
        a = case_a2(args.seconds, args.big_requests)
        print("case A2 (log flood and 1 MiB responses, slow editor):", json.dumps(a, indent=1))
        ok &= a["peak_rss_mib"] <= 160
    if args.case in ("B", "all"):
        r = case_b(args.requests, cancel=True)
        print("case B (never-reading upstream, cancels):", json.dumps(r, indent=1))
        ok &= r["peak_rss_mib"] <= 200
    if args.case in ("B2", "all"):
        r = case_b(args.requests, cancel=False)
        print("case B2 (never-reading upstream, no cancels):", json.dumps(r, indent=1))
        ok &= r["peak_rss_mib"] <= 200
    print("targets met" if ok else "TARGET MISSED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
