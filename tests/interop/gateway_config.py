#!/usr/bin/env python3
"""Writes the configuration file of the `gateway` and `inspector-gateway` scenarios of run.sh:
a Claude Desktop file (`{"mcpServers": {...}}`) of real servers for `mcp-bridge --config`,
each in its own era and language, every program by its full path as an editor's file needs:

  py          upstream.py (PyPI mcp 2.3.0, 2026-07-28) on stdio, or at URL with --py-url
  everything  server-everything 2026.8.31 (npm, TS SDK 1.x, 2025-11-25 only) on stdio
  example     the crate's mcp-example-server (2026-07-28), found beside the bridge
  signed      with --signed-url: the protected MCP endpoint at URL that wants an OAuth
              sign-in (the sign-in fixture, fixtures/examples/signin-fixture.rs, which run.sh
              starts), with a redirect port of its own and the memory token store

  python gateway_config.py FILE BRIDGE_BIN [--py-url URL] [--signed-url URL] [--tap LOG]

The sign-in of `signed` needs no human when the gateway's $BROWSER follows the start URL
(run.sh's follow-browser: the fixture grants at once). Its tokens stay in the gateway's memory
(`"tokenStore": "memory"`: a sign-in at each start, no token written anywhere). Its
redirect port is a free loopback port, so that runs side by side do not share the default one.

--tap LOG puts tap.py between the gateway and upstream.py (its lines to LOG), as INTEROP_TAP
does for the other scenarios. Prints nothing; exit status 2 when a program is missing.
"""
import argparse
import json
import os
import shutil
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port() -> int:
    """A loopback port that no one listens on now (the gateway binds it at the sign-in)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("bridge_bin")
    parser.add_argument("--py-url")
    parser.add_argument("--signed-url")
    parser.add_argument("--tap")
    args = parser.parse_args()

    python = os.path.join(HERE, ".venv", "bin", "python")
    everything = os.path.join(HERE, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
    example = os.path.join(os.path.dirname(os.path.abspath(args.bridge_bin)), "mcp-example-server")
    node = shutil.which("node")
    for what, path in [("the venv's python", python), ("server-everything", everything), ("mcp-example-server", example)]:
        if not os.path.exists(path):
            print(f"gateway_config.py: {what} not found: {path}", file=sys.stderr)
            return 2
    if node is None:
        print("gateway_config.py: node not found in PATH", file=sys.stderr)
        return 2

    if args.py_url:
        py = {"url": args.py_url}
    else:
        upstream = [os.path.join(HERE, "upstream.py")]
        if args.tap:
            upstream = [os.path.join(HERE, "tap.py"), args.tap, "--", python] + upstream
        py = {"command": python, "args": upstream}
    servers = {
        "py": py,
        "everything": {"command": node, "args": [everything, "stdio"]},
        "example": {"command": example},
    }
    if args.signed_url:
        servers["signed"] = {
            "url": args.signed_url,
            "mcp-bridge": {"redirectPort": free_port(), "tokenStore": "memory"},
        }
    with open(args.file, "w", encoding="utf-8") as f:
        json.dump({"mcpServers": servers}, f, indent=2)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
