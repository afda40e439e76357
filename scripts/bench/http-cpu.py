#!/usr/bin/env python3
"""CPU per call of mcp-bridge in the URL form (issue 9 item 5): binaries alternated.

Starts each bridge binary in turn as `BRIDGE URL`, drives it as a 2025-11-25 editor over its
stdio pipes (initialize, WARMUP `tools/call echo {"message":"hello"}`, then CALLS more), and
prints the bridge's CPU per call over the CALLS (user + system of all its threads, from
/proc/PID/task/*/stat) and the wall time per call. Rounds alternate the binaries (order swapped
every other round). CPU per call is what load disturbs least; wall time is noisy under load.

    python3 scripts/bench/http-cpu.py URL BRIDGE [BRIDGE...] [--calls 3000] [--rounds 3]

PERF=out.perf records `perf record --call-graph dwarf` of the first binary during its first
round's calls.
"""
import argparse, json, os, statistics, subprocess, time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / TICK


def run(bridge, url, calls, warmup, perf_out=None):
    p = subprocess.Popen([bridge, url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, bufsize=1 << 20)

    def send(m):
        p.stdin.write((json.dumps(m) + "\n").encode())
        p.stdin.flush()

    def recv(i):
        while True:
            line = p.stdout.readline()
            if not line:
                raise SystemExit(f"{bridge}: the bridge closed its stdout")
            m = json.loads(line)
            if m.get("id") == i:
                return m

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "http-cpu", "version": "1"}}})
    recv(0)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(i):
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": "echo", "arguments": {"message": "hello"}}})
        r = recv(i)
        if "result" not in r:
            raise SystemExit(f"{bridge}: call {i} failed: {r}")

    for i in range(1, warmup + 1):
        call(i)
    perf = None
    if perf_out:
        perf = subprocess.Popen(["perf", "record", "-F", "4000", "--call-graph", "dwarf,16384",
                                 "-o", perf_out, "-p", str(p.pid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
    c0, t0 = cpu_seconds(p.pid), time.monotonic()
    for i in range(warmup + 1, warmup + 1 + calls):
        call(i)
    c, dt = cpu_seconds(p.pid) - c0, time.monotonic() - t0
    if perf:
        perf.send_signal(2)
        perf.wait()
    p.stdin.close()
    p.wait()
    return c / calls * 1e6, dt / calls * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("bridges", nargs="+")
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    results = {b: [] for b in a.bridges}
    perf_out = os.environ.get("PERF")
    for r in range(a.rounds):
        order = a.bridges if r % 2 == 0 else list(reversed(a.bridges))
        for b in order:
            cpu, wall = run(b, a.url, a.calls, a.warmup, perf_out if r == 0 and b == a.bridges[0] else None)
            results[b].append((cpu, wall))
            print(f"round {r + 1} {b}: cpu/call {cpu:.1f} us, wall/call {wall:.1f} us, "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
    for b, rs in results.items():
        cpus = [c for c, _ in rs]
        walls = [w for _, w in rs]
        print(f"{b}: cpu/call median {statistics.median(cpus):.1f} us "
              f"(runs {', '.join(f'{c:.1f}' for c in cpus)}), wall/call median "
              f"{statistics.median(walls):.1f} us")


if __name__ == "__main__":
    main()
