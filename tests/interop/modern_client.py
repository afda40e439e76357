#!/usr/bin/env python3
"""A REAL 2026-07-28 client (PyPI `mcp` 2.x `Client`, mode "auto": it probes server/discover
first) against the embedded bridge's example (examples/embedded/main.rs, the modern path). Checks
exact values of tools, prompts, resources, one input request (elicitation, answered "Ada")
and one list change on a `subscriptions/listen` stream, then prints one line:

  ok embedded-py: <what was checked>      (exit 0)
  FAIL embedded-py: <step>: <why>          (exit 1)

  python modern_client.py -- SERVER_CMD [ARGS...]
"""
import asyncio
import sys

from mcp import Client, StdioServerParameters
from mcp.types import ElicitResult

STEP = ["start"]
TIMEOUT_S = 20


def expect_equal(actual, expected, what):
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


async def run(cmd):
    asked = []

    async def on_elicit(_ctx, params):
        asked.append(params.message)
        return ElicitResult(action="accept", content={"name": "Ada"})

    server = StdioServerParameters(command=cmd[0], args=cmd[1:])
    async with Client(server, elicitation_callback=on_elicit) as client:
        STEP[0] = "server/discover"
        expect_equal(client.protocol_version, "2026-07-28", "negotiated version")
        expect_equal(client.server_info.name, "embedded-example", "serverInfo.name")

        STEP[0] = "tools"
        tools = await client.list_tools()
        expect_equal([t.name for t in tools.tools], ["echo", "ask_name", "add_tool"], "tool names")
        r = await client.call_tool("echo", {"text": "h\u00e9 \u2713"})
        expect_equal([c.text for c in r.content], ["h\u00e9 \u2713"], "echo")

        STEP[0] = "prompts"
        prompts = await client.list_prompts()
        expect_equal([p.name for p in prompts.prompts], ["greet"], "prompt names")
        p = await client.get_prompt("greet")
        expect_equal([(m.role, m.content.text) for m in p.messages], [("user", "Say hi.")], "greet")

        STEP[0] = "resources"
        resources = await client.list_resources()
        expect_equal([str(r.uri) for r in resources.resources], ["example://readme"], "resource URIs")
        rr = await client.read_resource("example://readme")
        expect_equal([c.text for c in rr.contents], ["Hi."], "readme")

        STEP[0] = "input request"
        r = await client.call_tool("ask_name", {})
        expect_equal([c.text for c in r.content], ["Hi, Ada!"], "ask_name")
        expect_equal(asked, ["Your name?"], "elicitations")

        STEP[0] = "list change"
        async with client.listen(tools_list_changed=True) as sub:
            r = await client.call_tool("add_tool", {})
            expect_equal([c.text for c in r.content], ["The tool list changed."], "add_tool")
            event = await asyncio.wait_for(sub.__anext__(), TIMEOUT_S)
            expect_equal(type(event).__name__, "ToolsListChanged", "event")
    return ("server/discover then 2026-07-28, echo, prompts/get greet, resources/read "
            "example://readme, ask_name with one elicitation, a tools list change on the listen stream")


def main():
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") + 1 >= len(argv):
        print("usage: python modern_client.py -- SERVER_CMD [ARGS...]", file=sys.stderr)
        return 2
    cmd = argv[argv.index("--") + 1:]
    try:
        what = asyncio.run(asyncio.wait_for(run(cmd), TIMEOUT_S))
    except BaseException as e:  # report every failure as one line
        print(f"FAIL embedded-py: {STEP[0]}: {type(e).__name__}: {e}")
        return 1
    print(f"ok embedded-py: {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
