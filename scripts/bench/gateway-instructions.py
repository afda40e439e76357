#!/usr/bin/env python3
"""User-space instructions per `tools/call echo` of the bridge process, under cachegrind, for
docs/performance.md ("Many servers behind one bridge"): the single-server bridge, and gateways
of 1 and of 8 fixture servers (the call to the first). Each arm runs twice under
`valgrind --tool=cachegrind`, with 0 and with N calls after the same warm-up, and the figure is
`(Ir(N) - Ir(0)) / N`: the start and the end cancel out, and the machine's load does not
change it. Only the bridge process is counted (valgrind does not follow its children).

  python3 scripts/bench/gateway-instructions.py [--calls N] BRIDGE SERVER

BRIDGE and SERVER (mcp-fixture-server) as release builds with symbols, so that cg_annotate can
name the functions of the output files it keeps (printed):
  CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_DEBUG=1 \\
      cargo build --release -p mcp-bridge -p mcp-test-fixtures --target-dir target/prof
"""
import argparse, json, os, subprocess, tempfile

WARMUP = 100


def drive(argv, tool, calls, out):
    """Runs argv under cachegrind into `out`: initialize, WARMUP + calls calls, end of input."""
    cg = ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}"]
    p = subprocess.Popen(cg + argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, bufsize=1 << 20)

    def send(m):
        p.stdin.write((json.dumps(m) + "\n").encode())
        p.stdin.flush()

    def recv(i):
        while True:
            line = p.stdout.readline()
            if not line:
                raise SystemExit(f"{argv[0]} ended before answering {i}")
            m = json.loads(line)
            if m.get("id") == i:
                return m

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                     "clientInfo": {"name": "bench", "version": "1"}}})
    recv(0)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i in range(1, 1 + WARMUP + calls):
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": tool, "arguments": {"text": "hello"}}})
        r = recv(i)
        if r.get("result", {}).get("content") != [{"type": "text", "text": "hello"}]:
            raise SystemExit(f"an unexpected answer to {tool}: {r}")
    p.stdin.close()
    p.wait(timeout=120)
    for line in open(out):
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise SystemExit(f"no summary in {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("bridge")
    ap.add_argument("server")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="mcp-bridge-gateway-instructions.")
    arms = {"single": ([a.bridge, "--", a.server, "--test-tools"], "echo")}
    for n in (1, 8):
        path = os.path.join(work, f"gateway-{n}.json")
        servers = {f"s{k}": {"command": a.server, "args": ["--test-tools"]} for k in range(1, n + 1)}
        with open(path, "w") as f:
            json.dump({"mcpServers": servers}, f)
        arms[f"gateway of {n}"] = ([a.bridge, "--config", path], "s1__echo")
    for arm, (argv, tool) in arms.items():
        outs = [os.path.join(work, f"{arm.replace(' ', '-')}-{c}.cg") for c in (0, a.calls)]
        base = drive(argv, tool, 0, outs[0])
        full = drive(argv, tool, a.calls, outs[1])
        print(f"{arm}: {(full - base) / a.calls:,.0f} instructions per call "
              f"(where: cg_diff {outs[0]} {outs[1]} > diff.cg; cg_annotate diff.cg)")


if __name__ == "__main__":
    main()
