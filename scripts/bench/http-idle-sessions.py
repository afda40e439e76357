#!/usr/bin/env python3
"""The memory of idle 2025-11-25 sessions of a server over Streamable HTTP (docs/performance.md,
"The server API over HTTP, against rmcp"): each arm's resident memory when it has started, and
with N sessions open and idle (each one `initialize` and `notifications/initialized`, then
nothing), the arms interleaved round by round.

Each arm is a server command that takes `--http 127.0.0.1:0` (appended here) and prints
`listening on http://...` on stderr, as for scripts/bench/http-serve.py: examples/embedded
(`embed::serve_http`: one in-process bridge per session) or tests/interop/rmcp's server with the
feature `http` and `--sessions` (rmcp's session mode). Every round starts each arm anew (the
order alternates), opens the sessions one after another on one keep-alive connection, waits
`--settle-secs`, then reads VmRSS and VmHWM of /proc/PID/status, while holding the machine-wide
build lock (/work/.cargo.lock when it exists).

  python3 scripts/bench/http-idle-sessions.py [--rounds 5] [--sessions 100] [--settle-secs 1]
      NAME=COMMAND ...

Prints one JSON line per run, then a Markdown table of the medians over the rounds (the runs in
brackets): RSS at start, RSS and peak with the sessions, and the RSS per session.
"""
import argparse
import http.client
import json
import os
import shlex
import statistics
import sys
import time
import urllib.parse

from http_arm import Lock, start, status_kib

REQUEST_TIME_LIMIT_S = 10
VERSION = "2025-11-25"


def post(conn, path, message, session=None):
    """One POST; returns (status, session id header, body bytes). An SSE answer is read whole:
    the server ends it after the response."""
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    if session:
        headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = VERSION
    conn.request("POST", path, body=json.dumps(message), headers=headers)
    response = conn.getresponse()
    body = response.read()
    return response.status, response.getheader("Mcp-Session-Id"), body


def open_sessions(url, count):
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=REQUEST_TIME_LIMIT_S)
    ids = []
    for n in range(count):
        status, session, body = post(conn, parts.path, {
            "jsonrpc": "2.0", "id": n, "method": "initialize",
            "params": {"protocolVersion": VERSION, "capabilities": {},
                       "clientInfo": {"name": "idle-sessions", "version": "1.0.0"}}})
        if status != 200 or not session or b'"result"' not in body:
            raise SystemExit(f"initialize {n}: HTTP {status}, session {session!r}: {body[:200]!r}")
        status, _, body = post(conn, parts.path, {
            "jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        if status != 202:
            raise SystemExit(f"initialized {n}: HTTP {status}: {body[:200]!r}")
        ids.append(session)
    conn.close()
    return ids


def one_run(name, command, sessions, settle_secs):
    proc, url = start(command, "http-idle-sessions")
    try:
        time.sleep(settle_secs)
        at_start = status_kib(proc.pid, "VmRSS")
        began = time.monotonic()
        open_sessions(url, sessions)
        opened_secs = time.monotonic() - began
        time.sleep(settle_secs)
        rss = status_kib(proc.pid, "VmRSS")
        hwm = status_kib(proc.pid, "VmHWM")
    finally:
        proc.kill()
        proc.wait()
    return {"arm": name, "sessions": sessions, "rss_start_kib": at_start, "rss_kib": rss,
            "hwm_kib": hwm, "per_session_kib": round((rss - at_start) / sessions, 1),
            "open_secs": round(opened_secs, 3)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--sessions", type=int, default=100)
    p.add_argument("--settle-secs", type=float, default=1.0)
    p.add_argument("arms", nargs="+", metavar="NAME=COMMAND")
    args = p.parse_args()
    arms = []
    for arm in args.arms:
        name, _, command = arm.partition("=")
        if not command:
            raise SystemExit(f"an arm is NAME=COMMAND: {arm!r}")
        arms.append((name, shlex.split(command)))
    print(f"load: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    runs = {name: [] for name, _ in arms}
    for r in range(args.rounds):
        order = arms if r % 2 == 0 else list(reversed(arms))
        for name, command in order:
            with Lock():
                run = one_run(name, command, args.sessions, args.settle_secs)
            print(json.dumps(run), flush=True)
            runs[name].append(run)
    mib = lambda kib: f"{kib / 1024:.1f}"
    print(f"\n| arm ({args.sessions} idle sessions, {args.rounds} rounds) | RSS at start (MiB) "
          "| RSS with the sessions (MiB) | peak (MiB) | per session (KiB) |")
    print("|---|---|---|---|---|")
    for name, _ in arms:
        rs = runs[name]
        def cell(key, fmt):
            median = statistics.median(x[key] for x in rs)
            return f"**{fmt(median)}** ({', '.join(fmt(x[key]) for x in rs)})"
        print(f"| {name} | {cell('rss_start_kib', mib)} | {cell('rss_kib', mib)} "
              f"| {cell('hwm_kib', mib)} | {cell('per_session_kib', lambda v: f'{v:.0f}')} |")
    print(f"load: {os.getloadavg()[0]:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
