#!/usr/bin/env python3
"""Fixture upstream of the schema fuzz test (schema_fuzz.py): a raw JSON-RPC 2026-07-28 stdio
server without an SDK, spawned by mcp-bridge.

    fuzz_upstream.py CASES.json

CASES.json maps each forwarded method to a list of cases; a case is {"result": R} (a complete
2026-07-28 result), {"error": E} (a JSON-RPC error object) or {"notFound": MESSAGE} (the
2026-07-28 resource-not-found error: -32602 with data.uri = the requested URI). Each request
names its case by an index in its params (see case_index); `server/discover` is answered with a
DiscoverResult that declares tools, prompts, resources and completions without listChanged or
subscribe (so the bridge opens no listen stream). Notifications are read and ignored; a
request it does not know gets -32601. Ends at the end of stdin.
"""
import json
import sys

DISCOVER = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}, "prompts": {}, "resources": {}, "completions": {}},
    "ttlMs": 0,
    "cacheScope": "private",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fuzz-upstream", "version": "1"}},
}


def case_index(method, params):
    """The case index a request carries (schema_fuzz.py's request_params writes it)."""
    if method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list"):
        return int(params["cursor"])
    if method == "tools/call":
        return int(params["arguments"]["case"])
    if method == "prompts/get":
        return int(params["arguments"]["case"])
    if method == "resources/read":
        return int(params["uri"].rsplit("/", 1)[1])
    if method == "completion/complete":
        return int(params["argument"]["value"])
    raise KeyError(method)


def answer(cases, msg):
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "server/discover":
        return {"result": DISCOVER}
    if method not in cases:
        return {"error": {"code": -32601, "message": "Method not found", "data": {"method": method}}}
    case = cases[method][case_index(method, params)]
    if "notFound" in case:
        return {"error": {"code": -32602, "message": case["notFound"], "data": {"uri": params["uri"]}}}
    return case


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            continue
        reply = {"jsonrpc": "2.0", "id": msg["id"]}
        reply.update(answer(cases, msg))
        out.write(json.dumps(reply, ensure_ascii=False) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
