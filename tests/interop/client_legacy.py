#!/usr/bin/env python3
"""A second real 2025-11-25 client for the interop tests: the Python SDK in legacy mode
(PyPI `mcp` 2.3.0, `Client(..., mode="legacy")`: the `initialize` handshake), as an editor
built on Python would be. Scenario `py-legacy` of run.sh; expected values come from
upstream.py / upstream_ts2.mjs and are checked EXACTLY.

  python client_legacy.py -- SERVER_CMD [ARGS...]

Checks: initialize negotiates 2025-11-25 with serverInfo.name "interop-upstream"; tools/list
has echo, add, ask_name, ask_llm, flip_tools; echo gives exactly "Echo: <msg>"; add 2 + 3 gives
"5"; resources/read config://app gives exactly {"feature":true}; prompts/get review-code gives
exactly "Review this rust:\\nfn main() {}"; ask_name causes one elicitation/create
("What is your name?"), answered accept {name: "Ada"}, result "Hello, Ada!"; ask_llm causes
one sampling/createMessage, answered with a canned text, result "LLM said: canned answer".
Prints `ok py-legacy: ...` or `FAIL py-legacy: <step>: <why>`; exit 0 only on ok.
"""
import asyncio
import sys

from mcp import Client, StdioServerParameters
from mcp.types import CreateMessageResult, ElicitResult, TextContent

SCENARIO = "py-legacy"
STEP_TIMEOUT_S = 20
asked = {"elicitation": [], "sampling": 0}


async def on_elicit(ctx, params):
    asked["elicitation"].append(params.message)
    return ElicitResult(action="accept", content={"name": "Ada"})


async def on_sampling(ctx, params):
    asked["sampling"] += 1
    return CreateMessageResult(role="assistant", content=TextContent(type="text", text="canned answer"),
                               model="interop-fake-model", stop_reason="endTurn")


class Fail(Exception):
    pass


def expect_equal(got, want, what):
    if got != want:
        raise Fail(f"{what}: expected {want!r}, got {got!r}")


def text_of(result):
    return result.content[0].text if result.content else None


async def run(server):
    step = "initialize"
    try:
        async with Client(server, mode="legacy", elicitation_callback=on_elicit,
                          sampling_callback=on_sampling) as client:
            expect_equal(client.protocol_version, "2025-11-25", "protocol version")
            expect_equal(client.server_info.name, "interop-upstream", "serverInfo.name")
            step = "tools/list"
            tools = await asyncio.wait_for(client.list_tools(), STEP_TIMEOUT_S)
            names = {t.name for t in tools.tools}
            for n in ("echo", "add", "ask_name", "ask_llm", "flip_tools"):
                if n not in names:
                    raise Fail(f"tools/list lacks {n}: {sorted(names)}")
            step = "tools/call echo"
            msg = 'héllo "quoted" \\ line\nnext'
            r = await asyncio.wait_for(client.call_tool("echo", {"message": msg}), STEP_TIMEOUT_S)
            expect_equal(text_of(r), f"Echo: {msg}", "echo")
            step = "tools/call add"
            r = await asyncio.wait_for(client.call_tool("add", {"a": 2, "b": 3}), STEP_TIMEOUT_S)
            expect_equal(text_of(r), "5", "add")
            step = "resources/read"
            r = await asyncio.wait_for(client.read_resource("config://app"), STEP_TIMEOUT_S)
            expect_equal(r.contents[0].text, '{"feature":true}', "config://app")
            step = "prompts/get"
            r = await asyncio.wait_for(
                client.get_prompt("review-code", {"language": "rust", "code": "fn main() {}"}), STEP_TIMEOUT_S)
            expect_equal(r.messages[0].content.text, "Review this rust:\nfn main() {}", "review-code")
            step = "tools/call ask_name"
            r = await asyncio.wait_for(client.call_tool("ask_name", {}), STEP_TIMEOUT_S)
            expect_equal(asked["elicitation"], ["What is your name?"], "elicitation/create messages")
            expect_equal(text_of(r), "Hello, Ada!", "ask_name")
            step = "tools/call ask_llm"
            r = await asyncio.wait_for(client.call_tool("ask_llm", {"prompt": "say hi"}), STEP_TIMEOUT_S)
            expect_equal(asked["sampling"], 1, "sampling/createMessage requests")
            expect_equal(text_of(r), "LLM said: canned answer", "ask_llm")
    except Exception as e:  # noqa: BLE001 (every failure is reported as the step's)
        print(f"FAIL {SCENARIO}: {step}: {e!r}")
        return 1
    print(f"ok {SCENARIO}: initialize 2025-11-25 (Python mcp legacy client), echo + add exact, "
          f"resources/read + prompts/get exact, elicitation and sampling answered")
    return 0


def main(argv):
    if len(argv) < 2 or argv[0] != "--":
        raise SystemExit(__doc__)
    server = StdioServerParameters(command=argv[1], args=argv[2:])
    return asyncio.run(run(server))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
