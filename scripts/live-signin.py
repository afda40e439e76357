#!/usr/bin/env python3
"""Live sign-in in a long-running bridge (a script, not CI).

Starts the sign-in fixture (`cargo run -p mcp-test-fixtures --example signin-fixture`: the fixture
authorization server and protected MCP endpoint of fixtures/src/auth_fixture.rs in front of the crate's server with
the tool `echo`) with access tokens that expire every --expires-in seconds and a revocation of
every refresh token --revoke-after seconds into the run, and one bridge process in front of
it (memory token store, a free redirect port). The script is the editor: it initializes with
URL elicitation, sends one `tools/call` a second for --duration seconds, and answers each
`elicitation/create` of the bridge with `accept` and follows the URL with curl, as the
$BROWSER script of the e2e tests does (the first sign-in, during `initialize`, goes through
that $BROWSER script).

It passes when every call was answered with its result (no error), the bridge refreshed the
token before it expired without a failed call, the revocation led to exactly one sign-in
through a URL elicitation (followed by `notifications/elicitation/complete`), and the bridge
never restarted. Prints the figures as one JSON object.

Usage: python3 scripts/live-signin.py [--duration 600] [--expires-in 60] [--revoke-after 300]
"""

import argparse
import json
import os
import queue
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
# Longest wait for one answer (a call that meets the sign-in waits for the elicitation and
# the redirect).
ANSWER_DEADLINE_S = 60.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=600.0, help="seconds of calls (600)")
    ap.add_argument("--expires-in", type=int, default=60, help="token lifetime, s (60)")
    ap.add_argument("--revoke-after", type=int, default=300,
                    help="revoke every refresh token this long after the start, s (300)")
    args = ap.parse_args()

    subprocess.run(["cargo", "build", "-q", "--bin", "mcp-bridge"], cwd=ROOT, check=True)
    subprocess.run(["cargo", "build", "-q", "-p", "mcp-test-fixtures", "--example", "signin-fixture"],
                   cwd=ROOT, check=True)
    scratch = tempfile.mkdtemp(prefix="mcp-bridge-live-signin-")
    browser = os.path.join(scratch, "follow-browser")
    with open(browser, "w") as f:
        f.write('#!/bin/sh\nexec curl -s -L -o /dev/null "$1"\n')
    os.chmod(browser, 0o755)

    fixture = subprocess.Popen(
        [os.path.join(TARGET, "debug", "examples", "signin-fixture"),
         "--expires-in", str(args.expires_in), "--revoke-refresh-after", str(args.revoke_after)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    urls = json.loads(fixture.stdout.readline())
    started = time.monotonic()

    stderr_path = os.path.join(scratch, "bridge.stderr")
    stderr_file = open(stderr_path, "w")
    env = dict(os.environ, BROWSER=browser, RUST_LOG="info")
    bridge = subprocess.Popen(
        # debug: the metrics totals line (the SignIn actor's counters) is a debug line.
        [os.path.join(TARGET, "debug", "mcp-bridge"), "--log-level", "debug",
         "--redirect-port", str(free_port()),
         "--token-store", "memory", urls["mcp_url"]],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr_file, env=env,
        bufsize=0)
    write_lock = threading.Lock()

    def send(msg):
        with write_lock:
            bridge.stdin.write((json.dumps(msg) + "\n").encode())
            bridge.stdin.flush()

    responses = queue.Queue()
    elicitations = []
    completes = []
    followed = []

    def follow(url):
        r = subprocess.run(["curl", "-s", "-L", "-o", "/dev/null", "-w", "%{http_code}", url],
                           capture_output=True, text=True)
        followed.append(r.stdout)

    def reader():
        for line in bridge.stdout:
            msg = json.loads(line)
            if "method" in msg and "id" in msg:
                # A request of the bridge: the sign-in's URL elicitation.
                elicitations.append({"t": time.monotonic() - started,
                                     "method": msg["method"],
                                     "mode": msg["params"].get("mode"),
                                     "elicitationId": msg["params"].get("elicitationId")})
                send({"jsonrpc": "2.0", "id": msg["id"], "result": {"action": "accept"}})
                threading.Thread(target=follow, args=(msg["params"]["url"],)).start()
            elif msg.get("method") == "notifications/elicitation/complete":
                completes.append(msg["params"]["elicitationId"])
            elif "id" in msg:
                responses.put((time.monotonic(), msg))
        responses.put(None)

    threading.Thread(target=reader, daemon=True).start()

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {"form": {}, "url": {}}},
        "clientInfo": {"name": "live-signin", "version": "1"}}})
    item = responses.get(timeout=ANSWER_DEADLINE_S)
    init = item[1]
    assert init.get("result", {}).get("serverInfo", {}).get("name") == "protected", init
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    sent = {}
    answers = {}
    failures = []

    def drain(block_until=None):
        while True:
            timeout = None if block_until is None else max(0.0, block_until - time.monotonic())
            try:
                item = responses.get(timeout=timeout) if block_until else responses.get_nowait()
            except queue.Empty:
                return
            if item is None:
                return
            t, msg = item
            i = msg["id"]
            answers[i] = t - sent.get(i, t)
            text = (msg.get("result", {}).get("content") or [{}])[0].get("text")
            if "error" in msg or text != str(i):
                failures.append(msg)

    begin = time.monotonic()
    n = 0
    while time.monotonic() - begin < args.duration:
        n += 1
        sent[n] = time.monotonic()
        send({"jsonrpc": "2.0", "id": n, "method": "tools/call",
              "params": {"name": "echo", "arguments": {"text": str(n)}}})
        drain(block_until=begin + n)  # one call a second
    deadline = time.monotonic() + ANSWER_DEADLINE_S
    while len(answers) < n and time.monotonic() < deadline:
        drain(block_until=min(deadline, time.monotonic() + 1))
    pid = bridge.pid
    bridge.stdin.close()
    code = bridge.wait(timeout=30)
    stderr_file.close()
    stats = json.loads(urllib.request.urlopen(urls["stats_url"]).read())
    fixture.stdin.close()
    fixture.wait(timeout=10)
    with open(stderr_path) as f:
        log = f.read()

    lat = sorted(answers.values())
    result = {
        "duration_s": args.duration,
        "token_lifetime_s": args.expires_in,
        "revoked_after_s": args.revoke_after,
        "calls": n,
        "answered": len(answers),
        "failed": len(failures),
        "latency_ms": {
            "median": round(statistics.median(lat) * 1000, 2) if lat else None,
            "p99": round(lat[int(len(lat) * 0.99) - 1] * 1000, 2) if lat else None,
            "max": round(lat[-1] * 1000, 2) if lat else None,
        },
        "fixture": stats,
        "elicitations": elicitations,
        "elicitation_complete": completes,
        "followed_status": followed,
        "bridge_pid": pid,
        "bridge_exit": code,
        "sign_in_lines": log.count("sign in at"),
        "refreshed_lines": log.count("refreshed the access token"),
        "warn_or_error_lines": [l for l in log.splitlines()
                                if ": warn: " in l or ": error: " in l],
        "sign_in_actor": next((p.strip() for l in log.splitlines() if "totals:" in l
                               for p in l.split(";") if p.strip().startswith("sign-in:")), None),
    }
    shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(result, indent=1))
    ok = (len(answers) == n and not failures and code == 0
          and stats["authorizes"] == 2 and stats["code_grants"] == 2
          and stats["refresh_grants"] >= 1 and stats["revocations"] == 1
          and len(elicitations) == 1 and completes == [elicitations[0]["elicitationId"]])
    if failures:
        print("failed calls:", json.dumps(failures[:5]), file=sys.stderr)
    print("PASS" if ok else "FAIL", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
