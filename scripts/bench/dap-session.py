#!/usr/bin/env python3
"""One debug session as an agent runs it, through mcp-dap and through @debugmcp/mcp-debugger:
the tool calls it takes and the size of their results (the text a model reads).

The task, on the same Python program under the same debugpy: start it, break in `add` at
line 3, read the locals there, run to the end, learn the exit code and the output, end the
session. Each server gets the calls its tools need; a call whose result does not yet show
the stop (mcp-debugger answers `start_debugging` and `continue_execution` before it) is
followed by `get_stack_trace` until it does, as an agent would poll, and each poll counts.
Sizes are the characters of each result's content text; tokens are estimated at 4
characters each.

    cargo build --release -p mcp-dap    # the package mcp-dap/ of the workspace
    python3 scripts/bench/dap-session.py --mcp-dap target/release/mcp-dap \
        --python tests/interop/.venv/bin/python --mcp-debugger DIR
"""
import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("dap_step", os.path.join(HERE, "dap-step.py"))
dap_step = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dap_step)

PROGRAM = """\
def add(a, b):
    total = a + b
    return total


x = 40
y = add(x, 2)
print("y is", y)
raise SystemExit(3)
"""

# How many `get_stack_trace` polls a stop may take before the run gives up.
MAX_POLLS = 200
# The pause between two polls, in seconds.
POLL_INTERVAL_SECS = 0.05
# Characters per token, for the estimate.
CHARS_PER_TOKEN = 4


class Counted:
    """An MCP client that counts tool calls and the characters of their results."""

    def __init__(self, mcp):
        self.mcp = mcp
        self.calls = []

    def call(self, name, arguments, method="tools/call"):
        if method == "tools/call":
            r = self.mcp.request(method, {"name": name, "arguments": arguments})
            text = "".join(c.get("text", "") for c in r.get("content", []))
        else:
            r = self.mcp.request(method, arguments)
            text = "".join(c.get("text", "") for c in r.get("contents", []))
        self.calls.append((name, len(text)))
        return r, text


def mcp_dap(binary, python, program):
    m = dap_step.Mcp([binary], env=dap_step.mcp_dap_env(python))
    m.initialize()
    c = Counted(m)
    r, _ = c.call("launch", {"program": program})
    sid = dap_step.structured(r)["session"]
    c.call("set_breakpoints", {"session": sid, "source": program, "lines": [3]})
    c.call("continue", {"session": sid})
    r, _ = c.call("wait", {"session": sid})
    assert dap_step.structured(r)["top_frame"]["line"] == 3, r
    c.call("variables", {"session": sid})
    c.call("continue", {"session": sid})
    r, _ = c.call("wait", {"session": sid})
    assert dap_step.structured(r)["exit_code"] == 3, r
    _, out = c.call("output", {"uri": f"dap://sessions/{sid}/output"}, "resources/read")
    assert "y is 42" in out, out
    c.call("terminate", {"session": sid})
    m.close()
    return c.calls


def poll_stop(c, sid, line):
    for _ in range(MAX_POLLS):
        _, text = c.call("get_stack_trace", {"sessionId": sid})
        if f'"line":{line}' in text.replace(" ", ""):
            return
        time.sleep(POLL_INTERVAL_SECS)
    raise RuntimeError(f"no stop at line {line}")


def mcp_debugger(directory, python, program):
    entry = os.path.join(directory, "node_modules", "@debugmcp", "mcp-debugger", "dist",
                         "cli.mjs")
    m = dap_step.Mcp(["node", entry, "stdio"], env=dap_step.mcp_dap_env(python))
    m.initialize()
    c = Counted(m)
    _, text = c.call("create_debug_session", {"language": "python", "executablePath": python})
    sid = json.loads(text)["sessionId"]
    c.call("set_breakpoint", {"sessionId": sid, "file": program, "line": 3})
    # 0.17 stops at the first line (`Current state: paused`) whatever is asked.
    c.call("start_debugging", {"sessionId": sid, "scriptPath": program})
    c.call("continue_execution", {"sessionId": sid})
    poll_stop(c, sid, 3)
    c.call("get_local_variables", {"sessionId": sid})
    c.call("continue_execution", {"sessionId": sid})
    # The end: its session list shows a session's state (`stopped` once the program ended);
    # no tool gives the exit code or the output.
    for _ in range(MAX_POLLS):
        _, text = c.call("list_debug_sessions", {})
        if '"state":"stopped"' in text.replace(" ", ""):
            break
        time.sleep(POLL_INTERVAL_SECS)
    c.call("close_debug_session", {"sessionId": sid})
    m.close()
    return c.calls


def report(name, calls):
    chars = sum(n for _, n in calls)
    print(f"{name}: {len(calls)} calls, {chars} characters (~{chars // CHARS_PER_TOKEN} tokens)")
    for call, n in calls:
        print(f"  {call:22} {n:6}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mcp-dap", required=True)
    ap.add_argument("--python", required=True, help="an interpreter that has debugpy")
    ap.add_argument("--mcp-debugger", help="a directory with @debugmcp/mcp-debugger installed")
    args = ap.parse_args()
    # mcp-debugger starts its proxy in another directory: a relative interpreter fails there.
    args.python = os.path.abspath(args.python)
    with tempfile.TemporaryDirectory() as d:
        program = os.path.join(d, "prog.py")
        with open(program, "w") as f:
            f.write(PROGRAM)
        report("mcp-dap", mcp_dap(args.mcp_dap, args.python, program))
        if args.mcp_debugger:
            report("mcp-debugger", mcp_debugger(args.mcp_debugger, args.python, program))
    return 0


if __name__ == "__main__":
    sys.exit(main())
