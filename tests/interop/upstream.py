#!/usr/bin/env python3
"""Upstream MCP server for the mcp-bridge interop tests, on the real Python SDK
(PyPI `mcp` 2.3.0, `MCPServer`). The SDK does the protocol; it is dual-era:
2026-07-28 (server/discover, inputRequired, subscriptions/listen) and, on a fresh
connection, 2025-11-25 (initialize), which is what `run.sh --direct` relies on.

  python upstream.py [stdio]
  python upstream.py http PORT     (Streamable HTTP at http://127.0.0.1:PORT/mcp)

Adapted from the project's peers/py-upstream.py. The values below are checked
EXACTLY by client.mjs; change both together.

Tools:
  echo(message)      -> "Echo: <message>"
  add(a, b)          -> the sum, as text ("5" for 2 + 3: integers)
  ask_name()         -> elicits {name} from the client, then "Hello, <name>!"
                        (2026-07-28: inputRequired round-trip; 2025-11-25: elicitation/create push)
  ask_llm(prompt)    -> sampling, then "LLM said: <text>"
  plan_trip()        -> two chained elicitations ({destination}, then {nights}),
                        then "trip: <destination>, <nights> nights"
  countdown(n=3)     -> n progress + info-log notifications, then "completed n/n"
  flip_tools()       -> adds/removes tool `farewell` and emits notifications/tools/list_changed,
                        returns "farewell enabled" / "farewell disabled"
  increment()        -> bumps counter://value and emits notifications/resources/updated
Resources: config://app (application/json, text {"feature":true}), counter://value,
           template greeting://{name}.
Prompt: review-code(language, code) -> one user message "Review this <language>:\\n<code>".
"""
import sys
import warnings
from typing import Annotated

import anyio
from pydantic import BaseModel

from mcp.server import MCPServer
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import Context, Elicit, Resolve, Sample
from mcp.server.stdio import stdio_server
from mcp.types import Completion, CreateMessageResult, SamplingMessage, TextContent

# ctx.info() works on both eras but warns on every call (SEP-2577); keep stderr readable.
warnings.filterwarnings("ignore", message="The logging capability is deprecated")

SERVER_NAME = "interop-upstream"
mcp = MCPServer(SERVER_NAME, version="1.0.0", instructions="mcp-bridge interop test upstream (Python mcp 2.3.0)")
state = {"counter": 0, "farewell": False}


@mcp.tool()
def echo(message: str) -> str:
    """Echo the message."""
    return f"Echo: {message}"


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Name(BaseModel):
    name: str


def ask() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@mcp.tool()
async def ask_name(who: Annotated[Name, Resolve(ask)]) -> str:
    """Asks the user for a name (elicitation)."""
    return f"Hello, {who.name}!"


def llm(prompt: str) -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=prompt))], max_tokens=100)


@mcp.tool()
async def ask_llm(prompt: str, answer: Annotated[CreateMessageResult, Resolve(llm)]) -> str:
    """Asks the host LLM (sampling)."""
    return "LLM said: " + (answer.content.text if answer.content.type == "text" else str(answer.content))


class Dest(BaseModel):
    destination: str


class Nights(BaseModel):
    nights: int


def ask_dest() -> Elicit[Dest]:
    return Elicit("Where to?", Dest)


def ask_nights(dest: Annotated[Dest, Resolve(ask_dest)]) -> Elicit[Nights]:
    return Elicit(f"How many nights in {dest.destination}?", Nights)


@mcp.tool()
async def plan_trip(dest: Annotated[Dest, Resolve(ask_dest)], nights: Annotated[Nights, Resolve(ask_nights)]) -> str:
    """Two chained elicitations (two inputRequired rounds on 2026-07-28)."""
    return f"trip: {dest.destination}, {nights.nights} nights"


@mcp.tool()
async def countdown(ctx: Context, n: int = 3) -> str:
    """Counts down, emitting progress and log notifications."""
    for i in range(n):
        await ctx.report_progress(i + 1, n, f"step {i + 1}/{n}")
        await ctx.info(f"step {i + 1}/{n}")
    return f"completed {n}/{n}"


def is_modern(ctx: Context) -> bool:
    """True on 2026-07-28 (and later) requests. The SDK's ctx.notify_* publish only to
    subscriptions/listen streams (2026-07-28); a 2025-11-25 connection needs the old
    session notifications, which the SDK does not send by itself."""
    return (ctx.protocol_version or "") >= "2026-07-28"


def farewell(name: str) -> str:
    """Says goodbye (added/removed by flip_tools)."""
    return f"goodbye, {name}"


@mcp.tool()
async def flip_tools(ctx: Context) -> str:
    """Toggle the farewell tool; emits notifications/tools/list_changed."""
    state["farewell"] = not state["farewell"]
    if state["farewell"]:
        mcp.add_tool(farewell)
    else:
        mcp.remove_tool("farewell")
    if is_modern(ctx):
        await ctx.notify_tools_changed()  # reaches subscriptions/listen streams only
    else:
        await ctx.session.send_tool_list_changed()  # 2025-11-25: a plain notification
    return "farewell " + ("enabled" if state["farewell"] else "disabled")


@mcp.tool()
async def increment(ctx: Context) -> str:
    """Bump counter://value; emits notifications/resources/updated."""
    state["counter"] += 1
    if is_modern(ctx):
        await ctx.notify_resource_updated("counter://value")
    else:
        await ctx.session.send_resource_updated("counter://value")
    return str(state["counter"])


@mcp.resource("config://app", mime_type="application/json")
def config() -> str:
    """Static app config."""
    return '{"feature":true}'


@mcp.resource("counter://value", mime_type="text/plain")
def counter() -> str:
    """Bumped by increment."""
    return str(state["counter"])


@mcp.resource("greeting://{name}")
def greeting(name: str) -> str:
    """Greeting."""
    return f"Hello, {name}!"


@mcp.prompt(name="review-code")
def review_code(language: str, code: str) -> str:
    """Review code."""
    return f"Review this {language}:\n{code}"


@mcp.completion()
async def complete(ref, argument, context):
    langs = ["python", "typescript", "rust", "go"]
    if argument.name == "language":
        return Completion(values=[l for l in langs if l.startswith(argument.value)])
    return None


async def run_stdio() -> None:
    """MCPServer.run() on stdio, except that a legacy (2025-11-25) initialize also
    advertises listChanged. Plain MCPServer.run() answers a 2025 initialize with
    tools/prompts/resources.listChanged = false although it does send the
    notifications; on 2026-07-28 (server/discover) the SDK derives the flags from
    subscriptions/listen and ignores these options. Only `run.sh --direct` sees this."""
    server = mcp._lowlevel_server  # the SDK's own run_stdio_async uses it the same way
    options = server.create_initialization_options(
        NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
    )
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, options)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "http" and len(sys.argv) == 3:
        # The SDK's own Streamable HTTP server (2026-07-28: one POST per message, SSE for
        # request streams and subscriptions/listen).
        mcp.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif mode != "stdio":
        raise SystemExit(f"usage: {sys.argv[0]} [stdio | http PORT]")
    else:
        anyio.run(run_stdio)
