#!/usr/bin/env python3
"""The bridge's own CPU per small call, for one or more bridge
binaries run alternately, so that a before/after comparison shares the machine's load.

Each run starts `BRIDGE -- SERVER`, initializes (2025-11-25 toward the bridge), makes WARMUP
untimed `tools/call echo {"text": "hello"}` calls, then CALLS calls one after the other, and
reads the CPU time of every thread of the bridge (/proc/PID/task/*/schedstat, in ns) and its
context switches (voluntary + involuntary, /proc/PID/task/*/status) before and after. CPU per
call is a figure the load of the machine disturbs far less than the latency (the wall time
per call is printed as well, for reference only).

  python3 scripts/bench/small-call-cpu.py [--runs 5] [--calls 20000] [--warmup 300]
      [--server target/release/mcp-fixture-server | --url URL] BRIDGE [BRIDGE ...]

With --url (the URL form) each run starts `BRIDGE URL` instead, and the calls
are `tools/call echo {"message": "hello"}` (the echo tool of ../shared/peers' upstreams).

With PERF=out.perf (one bridge only) the bridge is recorded by
`perf record -F 4000 --call-graph dwarf,16384` during the timed calls.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def bridge_cpu(pid):
    """CPU seconds (user + system, from the scheduler's nanosecond count of each thread's
    time on a CPU, /proc/PID/task/TID/schedstat) and context switches of every thread of
    `pid`."""
    cpu, switches = 0, 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            cpu += int(open(f"/proc/{pid}/task/{t}/schedstat").read().split()[0])
            for line in open(f"/proc/{pid}/task/{t}/status"):
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    switches += int(line.split()[1])
        except FileNotFoundError:
            continue  # a thread that ended meanwhile
    return cpu / 1e9, switches


def one_run(bridge, upstream, calls, warmup, perf_out=None):
    argv = [bridge, upstream] if upstream.startswith(("http://", "https://")) else [bridge, "--", upstream]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, bufsize=1 << 20)

    def send(m):
        p.stdin.write((json.dumps(m) + "\n").encode())
        p.stdin.flush()

    def recv(i):
        while True:
            line = p.stdout.readline()
            if not line:
                sys.exit(f"small-call-cpu: {bridge} closed its stdout")
            m = json.loads(line)
            if m.get("id") == i:
                return m

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    recv(0)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    key = "message" if argv[1] == upstream else "text"
    params = {"name": "echo", "arguments": {key: "hello"}}
    for i in range(1, 1 + warmup):
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
        r = recv(i)
    if warmup and "result" not in r:
        sys.exit(f"small-call-cpu: not a result: {r}")
    perf = None
    if perf_out:
        perf = subprocess.Popen(["perf", "record", "-F", "4000", "--call-graph", "dwarf,16384",
                                 "-o", perf_out, "-p", str(p.pid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
    c0, s0 = bridge_cpu(p.pid)
    t0 = time.monotonic()
    for i in range(1 + warmup, 1 + warmup + calls):
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
        recv(i)
    wall = time.monotonic() - t0
    c1, s1 = bridge_cpu(p.pid)
    if perf:
        perf.send_signal(2)
        perf.wait()
    p.stdin.close()
    p.wait()
    n = max(calls, 1)  # --calls 0: start-up and warm-up only (the base of an instruction count)
    return (c1 - c0) / n * 1e6, (s1 - s0) / n, wall / n * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--server", default="target/release/mcp-fixture-server")
    ap.add_argument("--url", help="a 2026-07-28 HTTP upstream: measure the URL form")
    ap.add_argument("bridges", nargs="+")
    a = ap.parse_args()
    perf = os.environ.get("PERF")
    results = {b: [] for b in a.bridges}
    print(f"load average at start: {os.getloadavg()[0]:.2f}", flush=True)
    for run in range(a.runs):
        order = a.bridges if run % 2 == 0 else list(reversed(a.bridges))
        for b in order:
            cpu, sw, wall = one_run(b, a.url or a.server, a.calls, a.warmup, perf if len(a.bridges) == 1 else None)
            results[b].append((cpu, sw, wall))
            print(f"run {run + 1} {b}: cpu/call {cpu:.1f} us, switches/call {sw:.2f}, "
                  f"wall/call {wall:.1f} us, load {os.getloadavg()[0]:.2f}", flush=True)
    print("medians:")
    for b, rs in results.items():
        cpus = [r[0] for r in rs]
        print(f"  {b}: cpu/call {statistics.median(cpus):.1f} us "
              f"(runs: {', '.join(f'{c:.1f}' for c in cpus)}), "
              f"switches/call {statistics.median(r[1] for r in rs):.2f}, "
              f"wall/call {statistics.median(r[2] for r in rs):.1f} us")


if __name__ == "__main__":
    main()
