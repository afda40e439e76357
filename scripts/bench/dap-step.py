#!/usr/bin/env python3
"""Step latency of mcp-dap against raw DAP, on the same debugpy adapter and program.

Arms, interleaved in one run (each round runs every arm once, in turn):
  raw     a minimal DAP client (this script) on `python -m debugpy.adapter` over stdio: the
          time from writing `next` to reading the `stopped` event that ends it.
  raw+stackTrace  the same, then a `stackTrace` of one frame: where it stopped, which a
          client needs and mcp-dap's result gives (file:line).
  mcp-dap the `mcp-dap` binary over stdio (a 2025-11-25 client: initialize, then tools/call):
          the time from writing the `next` tools/call to reading its result, which mcp-dap
          sends at the stop.
  mcp-debugger (with --mcp-debugger DIR, DIR holding node_modules/@debugmcp/mcp-debugger):
          the same steps through its `step_over` tool (0.17 answers it before the stop).
Each arm launches the program once per round, stopped on entry, then steps STEPS times
through a loop; a round's figure is the median of its steps; the figure of an arm is the
median of its rounds. Also: the peak RSS of mcp-dap with 4 sessions open (VmHWM), and its
start (spawn to the answer of `initialize`), with --start-baseline in turn with an embedded
server's.

    cargo build --release -p mcp-dap    # the package mcp-dap/ of the workspace
    python3 scripts/bench/dap-step.py --mcp-dap target/release/mcp-dap \
        --python tests/interop/.venv/bin/python [--rounds 7] [--steps 30] [--mcp-debugger DIR] \
        [--start-baseline target/release/examples/embedded]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

PROGRAM = """\
i = 0
while True:
    i += 1
    j = i * 2
    k = j + 1
"""

READ_LIMIT_SECS = 30.0


class Framed:
    """A DAP peer over pipes: Content-Length framing, buffered reads."""

    def __init__(self, argv, env=None):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
        self.seq = 0

    def send(self, command, arguments=None):
        self.seq += 1
        body = json.dumps({"seq": self.seq, "type": "request", "command": command,
                           "arguments": arguments or {}}).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()
        return self.seq

    def read(self):
        length = None
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise EOFError("the adapter closed its output")
            line = line.strip()
            if not line:
                break
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        return json.loads(self.p.stdout.read(length))

    def until(self, pred):
        while True:
            m = self.read()
            if pred(m):
                return m

    def close(self):
        try:
            self.send("disconnect", {"terminateDebuggee": True})
        except (BrokenPipeError, OSError):
            pass
        self.p.stdin.close()
        try:
            self.p.wait(5)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def raw_round(python, program, steps, stack=False):
    a = Framed([python, "-m", "debugpy.adapter"])
    a.send("initialize", {"adapterID": "debugpy", "linesStartAt1": True,
                          "columnsStartAt1": True, "pathFormat": "path"})
    a.until(lambda m: m.get("type") == "response" and m.get("command") == "initialize")
    a.send("launch", {"program": program, "stopOnEntry": True, "console": "internalConsole"})
    a.until(lambda m: m.get("event") == "initialized")
    a.send("configurationDone")
    stopped = a.until(lambda m: m.get("event") == "stopped")
    thread = stopped["body"]["threadId"]
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        a.send("next", {"threadId": thread})
        a.until(lambda m: m.get("event") == "stopped")
        if stack:
            # Where it stopped: what mcp-dap's result says (file:line).
            seq = a.send("stackTrace", {"threadId": thread, "levels": 1})
            a.until(lambda m: m.get("type") == "response" and m.get("request_seq") == seq)
        times.append(time.perf_counter() - t0)
    a.close()
    return times


class Mcp:
    """A 2025-11-25 MCP client over stdio: one JSON-RPC message per line."""

    def __init__(self, argv, env=None):
        self.t0 = time.perf_counter()
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
        self.next_id = 0
        self.started = None

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": rid, "method": method,
                                        "params": params}) + "\n").encode())
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise EOFError("the server closed its output")
            m = json.loads(line)
            if m.get("id") == rid and "method" not in m:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m["result"]

    def initialize(self):
        r = self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                        "clientInfo": {"name": "dap-step", "version": "1"}})
        self.started = time.perf_counter() - self.t0
        self.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.p.stdin.flush()
        return r

    def call(self, name, arguments):
        r = self.request("tools/call", {"name": name, "arguments": arguments})
        if r.get("isError"):
            raise RuntimeError(f"{name}: {r}")
        return r

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def structured(result):
    if "structuredContent" in result:
        return result["structuredContent"]
    return json.loads(result["content"][0]["text"])


def mcp_dap_env(python):
    env = dict(os.environ)
    # mcp-dap runs `python3 -m debugpy.adapter` from PATH: the venv's first.
    env["PATH"] = os.path.dirname(os.path.abspath(python)) + os.pathsep + env.get("PATH", "")
    return env


def mcp_dap_round(binary, python, program, steps):
    m = Mcp([binary], env=mcp_dap_env(python))
    m.initialize()
    session = structured(m.call("launch", {"program": program}))["session"]
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        m.call("next", {"session": session})
        times.append(time.perf_counter() - t0)
    m.call("terminate", {"session": session})
    m.close()
    return times, m.started


def mcp_debugger_round(directory, python, program, steps):
    entry = os.path.join(directory, "node_modules", "@debugmcp", "mcp-debugger")
    with open(os.path.join(entry, "package.json")) as f:
        pkg = json.load(f)
    main = pkg.get("bin")
    main = os.path.join(entry, main if isinstance(main, str) else next(iter(main.values())))
    if os.path.isdir(main):
        main += ".mjs"  # 0.17's bin names the directory beside its entry point
    m = Mcp(["node", main, "stdio"], env=mcp_dap_env(python))
    m.initialize()
    created = structured(m.call("create_debug_session", {"language": "python",
                                                          "executablePath": python}))
    sid = created.get("sessionId") or created.get("id")
    m.call("set_breakpoint", {"sessionId": sid, "file": program, "line": 3})
    m.call("start_debugging", {"sessionId": sid, "scriptPath": program})
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        m.call("step_over", {"sessionId": sid})
        times.append(time.perf_counter() - t0)
    m.call("close_debug_session", {"sessionId": sid})
    m.close()
    return times


def peak_rss_with_sessions(binary, python, program, n):
    m = Mcp([binary], env=mcp_dap_env(python))
    m.initialize()
    sessions = [structured(m.call("launch", {"program": program}))["session"] for _ in range(n)]
    for s in sessions:
        m.call("next", {"session": s})
    with open(f"/proc/{m.p.pid}/status") as f:
        hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    for s in sessions:
        m.call("terminate", {"session": s})
    m.close()
    return hwm


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mcp-dap", required=True)
    ap.add_argument("--python", required=True, help="an interpreter that has debugpy")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--mcp-debugger", help="a directory with @debugmcp/mcp-debugger installed")
    ap.add_argument("--start-baseline",
                    help="an embedded server (the example: target/release/examples/embedded) "
                         "whose start is measured in turn with mcp-dap's")
    ap.add_argument("--starts", type=int, default=30, help="starts of each, interleaved")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        program = os.path.join(d, "loop.py")
        with open(program, "w") as f:
            f.write(PROGRAM)
        arms = {"raw": [], "raw+stackTrace": [], "mcp-dap": []}
        if a.mcp_debugger:
            arms["mcp-debugger"] = []
        starts = []
        for r in range(a.rounds):
            arms["raw"].append(statistics.median(raw_round(a.python, program, a.steps)))
            arms["raw+stackTrace"].append(
                statistics.median(raw_round(a.python, program, a.steps, stack=True)))
            times, started = mcp_dap_round(a.mcp_dap, a.python, program, a.steps)
            arms["mcp-dap"].append(statistics.median(times))
            starts.append(started)
            if a.mcp_debugger:
                arms["mcp-debugger"].append(
                    statistics.median(mcp_debugger_round(a.mcp_debugger, a.python, program,
                                                         a.steps)))
            print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1] * 1e3:.2f} ms"
                                                 for k, v in arms.items()), file=sys.stderr)
        raw = statistics.median(arms["raw"])
        located = statistics.median(arms["raw+stackTrace"])
        for k, v in arms.items():
            med = statistics.median(v)
            extra = "" if k == "raw" else f" (raw + {(med - raw) * 1e3:.2f} ms)"
            if k != "raw" and k != "raw+stackTrace":
                extra += f" (raw+stackTrace + {(med - located) * 1e3:.2f} ms)"
            print(f"step latency, {k}: median {med * 1e3:.2f} ms{extra}; rounds: "
                  + ", ".join(f"{x * 1e3:.2f}" for x in v))
        print(f"mcp-dap start to the initialize answer (in the rounds): median "
              f"{statistics.median(starts) * 1e3:.1f} ms")
        if a.start_baseline:
            mine, base = [], []
            for _ in range(a.starts):
                for binary, out in ((a.mcp_dap, mine), (a.start_baseline, base)):
                    m = Mcp([binary], env=mcp_dap_env(a.python))
                    m.initialize()
                    out.append(m.started)
                    m.close()
            print(f"start to the initialize answer, {a.starts} each, interleaved: mcp-dap "
                  f"median {statistics.median(mine) * 1e3:.2f} ms, the embedded example "
                  f"median {statistics.median(base) * 1e3:.2f} ms")
        hwm = peak_rss_with_sessions(a.mcp_dap, a.python, program, 4)
        print(f"mcp-dap peak RSS with 4 sessions open: {hwm / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
