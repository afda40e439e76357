#!/usr/bin/env python3
"""End-to-end benchmark of mcp-bridge: the latency it adds per request, over the floor of a
zero-logic relay, and its peak memory.

Three paths to the same kind of upstream, timed interleaved in batches of 100 in one run, so
that whatever else the machine does weighs on all of them alike:

  direct  the client talks to the server itself
  socat   the client talks to the server through `socat -b 1048576 - EXEC:<server>`: the same
          two extra process hops as the bridge (pipe writes, reads, wake-ups), and no parsing.
          This is the floor of any stdio bridge.
  bridge  the client talks 2025-11-25 to mcp-bridge, which talks 2026-07-28 to the server

Drivers (each path reads with buffered reads, so no path pays one read(2) per byte):
  raw (default)  this script writes JSON-RPC lines itself; the server is the crate's
                 mcp-fixture-server (direct and socat speak 2026-07-28 with _meta, the bridge
                 path 2025-11-25); `tools/call echo {"text": "hello"}`.
  --node         the real TS SDK 1.x client (as in VS Code, 2025-11-25) against the real TS SDK
                 v2 server (scripts/bench/ts2-server.mjs), which serves direct and socat on its
                 2025-11-25 arm and the bridge on its 2026-07-28 arm. So that the figure
                 measures the bridge and not the arms, two more paths run interleaved: socat
                 with a raw client on each arm (the modern one sends exactly the bridge's
                 frames); their difference is the modern arm's cost with the same client, and
                 the **same-arm floor** is socat + that cost. Installs scripts/bench's pinned
                 npm packages on first use (`npm ci`).
  --large-result-mib M
                 the issue's case: a small request (`large_text {"bytes": ...}` of the fixture
                 server with --test-tools) and a result of M MiB of text (M <= 16), a few
                 calls per run; reports the added time as a share of the direct time and the
                 bridge's peak RSS as a multiple of the payload (the result).
  --large-mib M  M MiB of text echoed through each path: request AND result are each M MiB (a
                 harder case: the bridge keeps the request for a possible input_required retry
                 while the result comes in); the same figures, the payload being one direction.

Every row also gives the 1-minute load average at the end of its run (/proc/loadavg): the
machine is shared, so a figure is only as good as the quiet it was measured in.

Each run starts new processes; the summary gives the median over the runs of each run's
median. Peak RSS is VmHWM of the bridge process alone (from /proc), without its child; the
large rows also give it without the file-backed pages mapped at the end (RssFile: the
binary's own pages, 8-10 MiB of this binary depending on the page cache, not the payload).

  cargo build --release --workspace && python3 scripts/bench-e2e.py [--runs 5] [--requests 5000]
  python3 scripts/bench-e2e.py --node --runs 5 --requests 2000
  python3 scripts/bench-e2e.py --large-result-mib 16 --runs 5 --calls 3
  python3 scripts/bench-e2e.py --large-mib 16 --runs 5 --calls 3

Needs socat (Debian: apt-get install socat) and, for --node, node >= 20 with npm.
Timings are wall clock on this machine; compare medians of several runs.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_DIR = os.path.join(ROOT, "scripts", "bench")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
BATCH = 100
PATHS = ("direct", "socat", "bridge")
# --node: socat with a raw client on each arm of the server (see node-driver.mjs).
SAME_ARM_PATHS = {"socat raw legacy": "raw-legacy", "socat raw modern": "raw-modern"}


class Peer:
    """A JSON-RPC peer over the pipes of a child process; stdout is read through a buffer."""

    def __init__(self, name, argv, modern):
        self.name = name
        self.modern = modern
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, bufsize=1 << 20)
        self.next_id = 0
        if modern:
            self.call("server/discover", {})
        else:
            self.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "bench", "version": "1"}})
            self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()

    def call(self, method, params):
        self.next_id += 1
        if self.modern:
            params = dict(params, _meta=META)
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            out = self.p.stdout.readline()
            if not out:
                raise RuntimeError(f"{self.name}: the peer closed its stdout")
            msg = json.loads(out)
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{self.name}: {method}: {msg['error']}")
                return msg["result"]

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


class Call:
    """One kind of timed call: `tools/call NAME ARGUMENTS`, whose first text block must be
    `text`."""

    def __init__(self, name, arguments, text):
        self.params = {"name": name, "arguments": arguments}
        self.text = text


def echo(text):
    return Call("echo", {"text": text}, text)


def large_text(nbytes):
    return Call("large_text", {"bytes": nbytes}, "x" * nbytes)


def timed_calls(peer, n, call):
    samples = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        result = peer.call("tools/call", call.params)
        samples.append((time.perf_counter_ns() - t0) / 1000.0)
        if result["content"][0]["text"] != call.text:
            raise RuntimeError(f"{peer.name}: {call.params['name']} came back changed")
    return samples


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def quantile(s, q):
    s = sorted(s)
    return s[min(len(s) - 1, int(round((len(s) - 1) * q)))]


def peak_rss_kib(pid):
    """VmHWM of pid, and the part of it that is file-backed now (RssFile: the pages of the
    binary and its libraries, shared with the page cache; how many are mapped depends on
    what the page cache holds, not on the payload)."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "RssFile"):
                fields[key] = int(value.split()[0])
    return fields.get("VmHWM", -1), fields.get("RssFile", 0)


def argvs(server_argv, bridge):
    # socat splits EXEC's string on spaces itself, so the server's argv must not hold any.
    if any(" " in a for a in server_argv):
        sys.exit("bench-e2e: the server's command must have no spaces for socat's EXEC")
    return {
        "direct": server_argv,
        "socat": ["socat", "-b", "1048576", "-", "EXEC:" + " ".join(server_argv)],
        "bridge": [bridge, "--"] + server_argv,
    }


def raw_run(a, server_argv, bridge, call, n, warmup):
    cmds = argvs(server_argv, bridge)
    peers = {name: Peer(name, cmds[name], modern=(name != "bridge")) for name in PATHS}
    samples = {name: [] for name in PATHS}
    for name in PATHS:
        timed_calls(peers[name], warmup, call)
    left = n
    while left > 0:
        k = min(BATCH, left)
        for name in PATHS:
            samples[name] += timed_calls(peers[name], k, call)
        left -= k
    rss = peak_rss_kib(peers["bridge"].p.pid)
    for p in peers.values():
        p.close()
    return samples, rss


def node_run(a, bridge):
    if not os.path.isdir(os.path.join(BENCH_DIR, "node_modules")):
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--silent"], cwd=BENCH_DIR,
                       check=True)
    server = ["node", os.path.join(BENCH_DIR, "ts2-server.mjs")]
    cmds = argvs(server, bridge)
    paths = [{"name": name, "argv": cmds[name], "client": "sdk"} for name in PATHS]
    paths += [{"name": name, "argv": cmds["socat"], "client": client}
              for name, client in SAME_ARM_PATHS.items()]
    out = subprocess.run(["node", os.path.join(BENCH_DIR, "node-driver.mjs"), str(a.requests),
                          str(a.warmup), str(BATCH), json.dumps(paths)],
                         cwd=BENCH_DIR, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1]), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="runs, each with new processes (5)")
    ap.add_argument("--requests", type=int, default=5000, help="timed calls per path per run")
    ap.add_argument("--warmup", type=int, default=500, help="untimed calls per path first")
    ap.add_argument("--node", action="store_true", help="TS SDK 1.x client, TS SDK v2 server")
    ap.add_argument("--large-result-mib", type=float, default=0,
                    help="a small request and a result of this many MiB (at most 16)")
    ap.add_argument("--large-mib", type=float, default=0,
                    help="echo this many MiB (request and result each this large)")
    ap.add_argument("--calls", type=int, default=5, help="timed calls per path when large")
    ap.add_argument("--profile", default="release", help="target/<profile> holding the binaries")
    a = ap.parse_args()
    bindir = os.path.join(ROOT, "target", a.profile)
    server = os.path.join(bindir, "mcp-fixture-server")
    bridge = os.path.join(bindir, "mcp-bridge")
    for b in (server, bridge):
        if not os.access(b, os.X_OK):
            sys.exit(f"bench-e2e: {b} is missing; run cargo build --workspace --{a.profile}")
    if not shutil.which("socat"):
        sys.exit("bench-e2e: socat is missing (Debian: apt-get install socat)")

    if a.large_mib > 0 and a.large_result_mib > 0:
        sys.exit("bench-e2e: --large-mib and --large-result-mib are two rows: run them apart")
    large = a.large_mib > 0 or a.large_result_mib > 0
    server_argv = [server]
    if a.large_result_mib > 0:
        payload = int(a.large_result_mib * 1024 * 1024)
        if payload > 16 * 1024 * 1024:
            sys.exit("bench-e2e: --large-result-mib is at most 16 (the fixture server's limit)")
        call = large_text(payload)
        server_argv = [server, "--test-tools"]
        what = (f"{a.calls} sequential tools/call large_text (a small request, a result of "
                f"{a.large_result_mib:g} MiB of text) per path per run, interleaved, after 1 "
                f"warm-up call each")
    elif large:
        payload = int(a.large_mib * 1024 * 1024)
        call = echo("x" * payload)
        what = (f"{a.calls} sequential tools/call echo of {a.large_mib:g} MiB of text EACH WAY "
                f"(request and result) per path per run, interleaved, after 1 warm-up call "
                f"each")
    elif a.node:
        what = (f"{a.requests} sequential tools/call echo per path per run, TS SDK 1.32.2 client "
                f"-> TS SDK v2 2.4.0 server, interleaved in batches of {BATCH}, after "
                f"{a.warmup} warm-up calls each")
    else:
        what = (f"{a.requests} sequential tools/call echo per path per run, raw driver -> "
                f"mcp-fixture-server, interleaved in batches of {BATCH}, after {a.warmup} "
                f"warm-up calls each")
    print(what)
    unit = "ms" if large else "us"
    scale = 1000.0 if large else 1.0
    print(f"| run | direct median | socat median | bridge median | socat - direct | "
          f"**bridge - socat** | bridge - direct | bridge p99 | bridge peak RSS | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    per_run = []
    for run in range(1, a.runs + 1):
        if large:
            samples, rss = raw_run(a, server_argv, bridge, call, a.calls, 1)
        elif a.node:
            samples, rss = node_run(a, bridge)
        else:
            samples, rss = raw_run(a, server_argv, bridge, echo("hello"), a.requests, a.warmup)
        load = load_average()
        med = {k: statistics.median(v) / scale for k, v in samples.items()}
        p99 = quantile(samples["bridge"], 0.99) / scale
        per_run.append((med, rss))
        rss_s = "n/a (Node driver)" if rss is None else f"{rss[0] / 1024:.1f} MiB"
        if large and rss is not None:
            anon = rss[0] - rss[1]
            rss_s += (f" ({rss[0] * 1024 / payload:.2f}x payload; without the {rss[1] / 1024:.1f} "
                      f"MiB file-backed: {anon / 1024:.1f} MiB = {anon * 1024 / payload:.2f}x)")
        print(f"| {run} | {med['direct']:.1f} {unit} | {med['socat']:.1f} {unit} | "
              f"{med['bridge']:.1f} {unit} | {med['socat'] - med['direct']:.1f} {unit} | "
              f"**{med['bridge'] - med['socat']:.1f} {unit}** | "
              f"{med['bridge'] - med['direct']:.1f} {unit} | {p99:.1f} {unit} | {rss_s} | "
              f"{load:.2f} |",
              flush=True)

    def over_runs(f):
        return statistics.median(f(m) for m, _ in per_run)

    if a.node:
        def arm(m):
            return m["socat raw modern"] - m["socat raw legacy"]

        def floor(m):
            return m["socat"] + arm(m)

        print()
        print("The same arm: socat with a raw client on each arm of the server; the modern arm's "
              "cost is their difference, the same-arm floor socat + that cost.")
        print("| run | socat raw legacy | socat raw modern | modern arm cost | same-arm floor | "
              "**bridge - same-arm floor** |")
        print("|---|---|---|---|---|---|")
        for run, (m, _) in enumerate(per_run, 1):
            print(f"| {run} | {m['socat raw legacy']:.1f} us | {m['socat raw modern']:.1f} us | "
                  f"{arm(m):.1f} us | {floor(m):.1f} us | **{m['bridge'] - floor(m):.1f} us** |")
        print()
        print(f"median over {a.runs} runs: modern arm cost {over_runs(arm):.1f} us, bridge - "
              f"same-arm floor {over_runs(lambda m: m['bridge'] - floor(m)):.1f} us")

    print()
    print(f"median over {a.runs} runs: bridge - socat "
          f"{over_runs(lambda m: m['bridge'] - m['socat']):.1f} {unit}, socat - direct "
          f"{over_runs(lambda m: m['socat'] - m['direct']):.1f} {unit}, bridge - direct "
          f"{over_runs(lambda m: m['bridge'] - m['direct']):.1f} {unit}")
    if large:
        share = over_runs(lambda m: (m["bridge"] - m["direct"]) / m["direct"] * 100.0)
        worst = max(r[0] for _, r in per_run)
        worst_anon = max(r[0] - r[1] for _, r in per_run)
        print(f"added time {share:.0f}% of the direct time (target <= 25%); bridge peak RSS "
              f"{worst / 1024:.1f} MiB = {worst * 1024 / payload:.2f}x the payload (target <= 1.5x); "
              f"without its file-backed pages {worst_anon / 1024:.1f} MiB = "
              f"{worst_anon * 1024 / payload:.2f}x")


if __name__ == "__main__":
    main()
