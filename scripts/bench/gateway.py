#!/usr/bin/env python3
"""The gateway of many servers (`mcp-bridge --config FILE`) against one bridge of one server,
for docs/performance.md ("Many servers behind one bridge"). Four figures, each against the
issue's target:

  latency  `tools/call echo` through a gateway of 8 fixture servers (to the first one) and
           through the single-server bridge on the same server, the two arms interleaved in
           batches within one run, each run new processes; the median per-call time of each
           arm and their difference (target: at most 5 us more at the median); and the CPU
           time per call of each bridge process itself (its children excluded), which the
           machine's load disturbs less.
  start    8 servers that each wait 1 s before they answer server/discover
           (`--discover-delay-ms 1000`): the time from the gateway's start to its initialize
           answer (target: within 1.5 s, not 8).
  memory   the gateway's own RSS (VmRSS of its process, children excluded) with 8 idle
           servers, after initialize and a tools/list (target: at most 16 MB).
  lists    8 servers of 500 tools each (`--tool-named`): the time of the editor's tools/list,
           every page of it, answered from the lists the gateway keeps (target: within 20 ms).

  python3 scripts/bench/gateway.py [--runs R] [--calls N] BRIDGE SERVER

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


class Client:
    def __init__(self, argv):
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
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "bench", "version": "1"}}})
        r = self.recv(0)
        elapsed = time.perf_counter() - self.t0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r, elapsed

    def call(self, i, name):
        self.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                   "params": {"name": name, "arguments": {"text": "hello"}}})
        self.recv(i)

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
    arms = {"single": ([bridge, "--", server, "--test-tools"], "echo"),
            "gateway": ([bridge, "--config", gw_file], "s1__echo")}
    medians = {a: [] for a in arms}
    cpu = {a: [] for a in arms}
    for _ in range(runs):
        clients = {a: Client(argv) for a, (argv, _) in arms.items()}
        for c in clients.values():
            c.initialize()
        for a, (_, tool) in arms.items():
            clients[a].call(0, tool)
        cpu0 = {a: c.cpu_s() for a, c in clients.items()}
        times = {a: [] for a in arms}
        i = 1
        batch = 100
        for _ in range(max(1, calls // batch)):
            for a, (_, tool) in arms.items():
                c = clients[a]
                for _ in range(batch):
                    t = time.perf_counter()
                    c.call(i, tool)
                    times[a].append(time.perf_counter() - t)
                    i += 1
        for a, c in clients.items():
            cpu[a].append((c.cpu_s() - cpu0[a]) / len(times[a]) * 1e6)
            c.close()
            medians[a].append(statistics.median(times[a]) * 1e6)
    os.unlink(gw_file)
    single = statistics.median(medians["single"])
    gateway = statistics.median(medians["gateway"])
    print(f"latency: single {single:.1f} us, gateway {gateway:.1f} us, "
          f"difference {gateway - single:+.1f} us (medians of {runs} runs of {calls} calls; "
          f"runs: single {[round(m, 1) for m in medians['single']]}, "
          f"gateway {[round(m, 1) for m in medians['gateway']]}); target <= +5 us")
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
    ap.add_argument("bridge")
    ap.add_argument("server")
    a = ap.parse_args()
    load = open("/proc/loadavg").read().split()[0]
    print(f"load {load} at the start")
    latency(a.bridge, a.server, a.runs, a.calls)
    start(a.bridge, a.server, a.runs)
    memory(a.bridge, a.server, a.runs)
    lists(a.bridge, a.server, a.runs)
    print(f"load {open('/proc/loadavg').read().split()[0]} at the end")


if __name__ == "__main__":
    main()
