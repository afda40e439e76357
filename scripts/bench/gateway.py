#!/usr/bin/env python3
"""The gateway of many servers (`mcp-bridge --config FILE`) against one bridge of one server,
for docs/performance.md ("Many servers behind one bridge"). Four figures, each against the
issue's target:

  latency  `tools/call echo` through a gateway of 8 fixture servers (to the first one),
           through the single-server bridge on the same server, and to the server directly
           (2026-07-28 with `_meta`, no bridge), the three arms interleaved in batches within
           one run, each run new processes; the median per-call time of each arm and the
           differences (target: the gateway at most 5 us more than the single bridge at the
           median); and the CPU time per call of each bridge process itself (its children
           excluded), which the machine's load disturbs less.
  start    8 servers that each wait 1 s before they answer server/discover
           (`--discover-delay-ms 1000`): the time from the gateway's start to its initialize
           answer (target: within 1.5 s, not 8).
  memory   the gateway's own RSS (VmRSS of its process, children excluded) with 8 idle
           servers, after initialize and a tools/list (target: at most 16 MB).
  lists    8 servers of 500 tools each (`--tool-named`): the time of the editor's tools/list,
           every page of it, answered from the lists the gateway keeps (target: within 20 ms).

  python3 scripts/bench/gateway.py [--runs R] [--calls N] [--only FIGURE] BRIDGE SERVER

BRIDGE is mcp-bridge and SERVER mcp-fixture-server, both release builds
(cargo build --release -p mcp-bridge -p mcp-test-fixtures).
"""
import argparse, json, os, statistics, subprocess, tempfile, time

SERVERS = 8


def config(server, args):
    servers = {f"s{n}": {"command": server, "args": args} for n in range(1, SERVERS + 1)}
    f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump({"mcpServers": servers}, f)
    f.close()
    return f.name


META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}


class Client:
    def __init__(self, argv, modern=False):
        self.modern = modern
        self.t0 = time.perf_counter()
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, bufsize=1 << 20)

    def send(self, m):
        self.p.stdin.write((json.dumps(m) + "\n").encode())
        self.p.stdin.flush()

    def recv(self, i):
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit(f"the bridge ended before answering {i}")
            m = json.loads(line)
            if m.get("id") == i:
                return m

    def initialize(self):
        if self.modern:
            self.send({"jsonrpc": "2.0", "id": 0, "method": "server/discover",
                       "params": {"_meta": META}})
            return self.recv(0), time.perf_counter() - self.t0
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "bench", "version": "1"}}})
        r = self.recv(0)
        elapsed = time.perf_counter() - self.t0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r, elapsed

    def call(self, i, name):
        params = {"name": name, "arguments": {"text": "hello"}}
        if self.modern:
            params["_meta"] = META
        self.send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
        r = self.recv(i)
        if r.get("result", {}).get("content") != [{"type": "text", "text": "hello"}]:
            raise SystemExit(f"an unexpected answer to {name}: {r}")

    def cpu_s(self):
        # utime + stime of the process itself (every thread), children excluded.
        f = open(f"/proc/{self.p.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

    def rss_kib(self):
        for line in open(f"/proc/{self.p.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def latency(bridge, server, runs, calls):
    gw_file = config(server, ["--test-tools"])
    arms = {"direct": ([server, "--test-tools"], "echo", True),
            "single": ([bridge, "--", server, "--test-tools"], "echo", False),
            "gateway": ([bridge, "--config", gw_file], "s1__echo", False)}
    medians = {a: [] for a in arms}
    cpu = {a: [] for a in arms if a != "direct"}
    for _ in range(runs):
        clients = {a: Client(argv, modern) for a, (argv, _, modern) in arms.items()}
        for c in clients.values():
            c.initialize()
        for a, (_, tool, _) in arms.items():
            clients[a].call(0, tool)
        cpu0 = {a: clients[a].cpu_s() for a in cpu}
        times = {a: [] for a in arms}
        i = 1
        batch = 100
        for _ in range(max(1, calls // batch)):
            for a, (_, tool, _) in arms.items():
                c = clients[a]
                for _ in range(batch):
                    t = time.perf_counter()
                    c.call(i, tool)
                    times[a].append(time.perf_counter() - t)
                    i += 1
        for a, c in clients.items():
            if a in cpu:
                cpu[a].append((c.cpu_s() - cpu0[a]) / len(times[a]) * 1e6)
            c.close()
            medians[a].append(statistics.median(times[a]) * 1e6)
    os.unlink(gw_file)
    m = {a: statistics.median(v) for a, v in medians.items()}
    print(f"latency: direct {m['direct']:.1f} us, single {m['single']:.1f} us, "
          f"gateway {m['gateway']:.1f} us; gateway - single {m['gateway'] - m['single']:+.1f} us "
          f"(target <= +5 us), single - direct {m['single'] - m['direct']:+.1f} us "
          f"(medians of {runs} runs of {calls} calls; runs: "
          + ", ".join(f"{a} {[round(x, 1) for x in v]}" for a, v in medians.items()) + ")")
    cs, cg = statistics.median(cpu["single"]), statistics.median(cpu["gateway"])
    print(f"cpu: the bridge process's own CPU per call: single {cs:.1f} us, gateway {cg:.1f} us, "
          f"difference {cg - cs:+.1f} us (medians of {runs} runs)")


def start(bridge, server, runs):
    f = config(server, ["--discover-delay-ms", "1000"])
    seen = []
    for _ in range(runs):
        c = Client([bridge, "--config", f])
        r, elapsed = c.initialize()
        assert "result" in r, r
        seen.append(elapsed)
        c.close()
    os.unlink(f)
    print(f"start: initialize answered after {statistics.median(seen):.2f} s (median of {runs}; "
          f"{[round(s, 2) for s in seen]}) with 8 servers of 1 s each; target <= 1.5 s")


def memory(bridge, server, runs):
    f = config(server, [])
    seen = []
    for _ in range(runs):
        c = Client([bridge, "--config", f])
        c.initialize()
        c.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        c.recv(1)
        time.sleep(0.5)
        seen.append(c.rss_kib() / 1024)
        c.close()
    os.unlink(f)
    print(f"memory: the gateway's RSS with 8 idle servers {statistics.median(seen):.1f} MiB "
          f"(median of {runs}; {[round(s, 1) for s in seen]}); target <= 16 MB")


def lists(bridge, server, runs):
    args = []
    for n in range(500 - 6):
        args += ["--tool-named", f"tool_{n}"]
    f = config(server, args)
    seen = []
    for _ in range(runs):
        c = Client([bridge, "--config", f])
        c.initialize()
        i = 1
        for _ in range(5):
            t = time.perf_counter()
            tools, cursor = 0, None
            while True:
                params = {"cursor": cursor} if cursor else {}
                c.send({"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": params})
                r = c.recv(i)
                i += 1
                tools += len(r["result"]["tools"])
                cursor = r["result"].get("nextCursor")
                if not cursor:
                    break
            seen.append((time.perf_counter() - t) * 1000)
            assert tools == 8 * 500, tools
        c.close()
    os.unlink(f)
    print(f"lists: tools/list of 8 x 500 tools in {statistics.median(seen):.1f} ms (median of "
          f"{len(seen)}; max {max(seen):.1f}); target <= 20 ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--only", choices=["latency", "start", "memory", "lists"],
                    help="measure this figure only")
    ap.add_argument("bridge")
    ap.add_argument("server")
    a = ap.parse_args()
    load = open("/proc/loadavg").read().split()[0]
    print(f"load {load} at the start")
    if a.only in (None, "latency"):
        latency(a.bridge, a.server, a.runs, a.calls)
    if a.only in (None, "start"):
        start(a.bridge, a.server, a.runs)
    if a.only in (None, "memory"):
        memory(a.bridge, a.server, a.runs)
    if a.only in (None, "lists"):
        lists(a.bridge, a.server, a.runs)
    print(f"load {open('/proc/loadavg').read().split()[0]} at the end")


if __name__ == "__main__":
    main()
