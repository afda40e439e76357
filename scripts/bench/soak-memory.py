#!/usr/bin/env python3
"""The long soak of the stdio bridge: many requests, many in flight, some cancelled. Not in CI.

  cargo build --release --workspace
  python3 scripts/bench/soak-memory.py [--requests 200000] [--in-flight 64] [--cancel-percent 7]
      [--bridge target/release/mcp-bridge] [--server target/release/mcp-fixture-server]

--requests `tools/call` requests go to the bridge in front of the fixture server, with
--in-flight of them unanswered at any time. About --cancel-percent of them are `sleep`
calls of 60 s that the editor cancels at once (`notifications/cancelled`): they must get no
response. The rest are `echo` calls, each of which must get exactly its own text back.
Nothing may be lost or duplicated; the script fails (exit 1) otherwise.

Reported: requests per second, and the bridge's peak RSS (VmHWM, read from /proc before its
stdin closes), with its anonymous part (RssAnon: at the end, and the peak of samples every
50 ms) and its file-backed part (RssFile: the pages of the binary itself) at the end. Target: peak RSS <= 8 MB. Reads are
buffered; only the standard library is used.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time

SAMPLE_SECS = 0.05
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
                out[key] = int(rest.split()[0]) / 1024.0
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=200_000)
    ap.add_argument("--in-flight", type=int, default=64)
    ap.add_argument("--cancel-percent", type=float, default=7.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bridge", default=os.path.join(ROOT, "target", "release", "mcp-bridge"))
    ap.add_argument("--server",
                    default=os.path.join(ROOT, "target", "release", "mcp-fixture-server"))
    ap.add_argument("--json", action="store_true", help="one JSON line instead of text")
    args = ap.parse_args()
    rng = random.Random(args.seed)

    p = subprocess.Popen([args.bridge, "--", args.server, "--test-tools"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, bufsize=1 << 16)
    out = p.stdout
    lock = threading.Condition()
    state = {"open": 0, "answered": {}, "other": 0, "bad": []}

    def read():
        for line in out:
            msg = json.loads(line)
            rid = msg.get("id")
            with lock:
                if rid is None:
                    state["other"] += 1
                    continue
                if rid in state["answered"]:
                    state["bad"].append(f"duplicate response to {rid}")
                state["answered"][rid] = msg
                if isinstance(rid, int) and rid >= 10:
                    state["open"] -= 1
                lock.notify_all()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    peak_anon = [0.0]
    sampling = threading.Event()

    def sample():
        # VmHWM has no anonymous counterpart: RssAnon is sampled every SAMPLE_SECS.
        while not sampling.wait(SAMPLE_SECS):
            try:
                peak_anon[0] = max(peak_anon[0], status(p.pid).get("RssAnon", 0.0))
            except OSError:
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()

    def send(obj):
        p.stdin.write((json.dumps(obj, separators=(",", ":")) + "\n").encode())

    def wait_for(rid):
        with lock:
            while rid not in state["answered"]:
                if not lock.wait(30):
                    sys.exit(f"no answer to {rid}")

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "soak", "version": "1"}}})
    p.stdin.flush()
    wait_for(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    cancelled = set()
    echoes = {}
    started = time.monotonic()
    for n in range(args.requests):
        rid = 10 + n
        cancel = rng.random() * 100 < args.cancel_percent
        with lock:
            while state["open"] >= args.in_flight:
                p.stdin.flush()
                if not lock.wait(30):
                    sys.exit(f"stuck at request {n} with {state['open']} in flight")
            if not cancel:
                state["open"] += 1
        if cancel:
            cancelled.add(rid)
            send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                  "params": {"name": "sleep", "arguments": {"ms": 60000}}})
            send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": rid, "reason": "soak"}})
        else:
            text = f"soak {n}"
            echoes[rid] = text
            send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                  "params": {"name": "echo", "arguments": {"text": text}}})
    p.stdin.flush()
    with lock:
        while state["open"] > 0:
            if not lock.wait(30):
                sys.exit(f"{state['open']} requests never answered")
    elapsed = time.monotonic() - started
    # A last round trip: a cancelled call whose answer was still coming would be here by now.
    send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    p.stdin.flush()
    wait_for(2)
    mem = status(p.pid)
    sampling.set()
    p.stdin.close()
    p.wait(timeout=60)
    reader.join(timeout=10)

    bad = list(state["bad"])
    answered = state["answered"]
    for rid, text in echoes.items():
        got = answered.get(rid)
        try:
            ok = got["result"]["content"][0]["text"] == text
        except (KeyError, IndexError, TypeError):
            ok = False
        if not ok:
            bad.append(f"request {rid}: {json.dumps(got)[:200]}")
    bad += [f"cancelled request {rid} got a response" for rid in cancelled if rid in answered]
    result = {
        "requests": args.requests, "in_flight": args.in_flight, "cancelled": len(cancelled),
        "echoes": len(echoes), "seconds": round(elapsed, 2),
        "requests_per_second": round(args.requests / elapsed),
        "peak_rss_mib": round(mem.get("VmHWM", 0), 2),
        "rss_anon_mib": round(mem.get("RssAnon", 0), 2),
        "peak_rss_anon_mib": round(max(peak_anon[0], mem.get("RssAnon", 0)), 2),
        "rss_file_mib": round(mem.get("RssFile", 0), 2),
        "bridge_exit": p.returncode, "lost_or_wrong": len(bad),
    }
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k}: {v}")
    for line in bad[:20]:
        print("error:", line, file=sys.stderr)
    sys.exit(1 if bad or p.returncode != 0 else 0)


if __name__ == "__main__":
    main()
