//! `mcp-dap` used by real MCP clients of the interop set: the TypeScript SDK 1.x client
//! (npm `@modelcontextprotocol/sdk` 1.32.2, a 2025-11-25 client: the embedded bridge's path)
//! and the Python `mcp` 2.x client (PyPI `mcp` 2.3.0, mode auto: 2026-07-28 directly). Each
//! lists the tools, launches debugpy on a small program, hears of the stop at a breakpoint as
//! a resource update, and reads the state resource.

use crate::common::sdk_client;
use crate::dap::{venv_bin, write_program};

use serde_json::{Value, json};

/// The tools of `mcp-dap`, in the order it lists them.
const TOOLS: [&str; 16] = [
    "launch",
    "attach",
    "set_breakpoints",
    "continue",
    "next",
    "step_in",
    "step_out",
    "stack_trace",
    "variables",
    "evaluate",
    "wait",
    "scopes",
    "threads",
    "pause",
    "terminate",
    "disconnect",
];

/// PATH with the venv first, so that `python3` has debugpy.
fn venv_path() -> String {
    format!(
        "{}:{}",
        venv_bin().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Runs a client script (`program args`) of the interop set with `DAP_BIN` and
/// `DAP_PROGRAM`, and the venv first in `PATH`.
fn run_client(program: &str, args: &[&str], python_program: &str) -> Value {
    let path = venv_path();
    let env = [
        ("PATH", path.as_str()),
        ("DAP_BIN", crate::common::dap_bin()),
        ("DAP_PROGRAM", python_program),
    ];
    sdk_client::run(program, args, &env)
}

const TS1_CLIENT: &str = r#"
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
const program = process.env.DAP_PROGRAM;
const transport = new StdioClientTransport({ command: process.env.DAP_BIN, args: [], env: process.env });
const client = new Client({ name: 'ts-sdk-1', version: '1.0.0' });
const updates = [];
let heard = () => {};
client.setNotificationHandler(ResourceUpdatedNotificationSchema, n => { updates.push(n.params.uri); heard(); });
await client.connect(transport);
const out = { server: client.getServerVersion().name };
out.tools = (await client.listTools()).tools.map(t => t.name);
const launched = await client.callTool({ name: 'launch', arguments: { program } });
out.launched = launched.structuredContent.session;
const uri = 'dap://sessions/s1/state';
out.subscribed = await client.subscribeResource({ uri });
await client.callTool({ name: 'set_breakpoints', arguments: { session: 's1', source: program, lines: [3] } });
await client.callTool({ name: 'continue', arguments: { session: 's1' } });
for (;;) {
  const state = JSON.parse((await client.readResource({ uri })).contents[0].text);
  if (state.status === 'stopped') { out.stopped = state.top_frame.line; break; }
  await new Promise(resolve => { heard = resolve; });
}
out.updated = updates.includes(uri);
out.ended = (await client.callTool({ name: 'terminate', arguments: { session: 's1' } })).structuredContent.terminated;
await client.close();
console.log(JSON.stringify(out));
"#;

#[test]
fn the_typescript_sdk_1x_client_uses_mcp_dap_through_the_embedded_path() {
    sdk_client::require_npm("@modelcontextprotocol/sdk", "the TypeScript SDK 1.x");
    let program = write_program();
    let report = run_client("node", &["--input-type=module", "-e", TS1_CLIENT], &program);
    assert_eq!(
        report,
        json!({"server": "mcp-dap", "tools": TOOLS, "launched": "s1", "subscribed": {},
            "stopped": 3, "updated": true, "ended": "s1"})
    );
}

const PY2_CLIENT: &str = r#"
import anyio, json, os
from mcp import Client, StdioServerParameters

async def main():
    program = os.environ["DAP_PROGRAM"]
    server = StdioServerParameters(command=os.environ["DAP_BIN"], args=[], env=dict(os.environ))
    out = {}
    async with Client(server) as client:
        out["protocol"] = client.protocol_version
        out["tools"] = [t.name for t in (await client.list_tools()).tools]
        launched = await client.call_tool("launch", {"program": program})
        out["launched"] = launched.structured_content["session"]
        state = await client.read_resource("dap://sessions/s1/state")
        out["state"] = json.loads(state.contents[0].text)["status"]
        await client.call_tool("set_breakpoints", {"session": "s1", "source": program, "lines": [3]})
        await client.call_tool("continue", {"session": "s1"})
        stopped = await client.call_tool("wait", {"session": "s1"})
        out["stopped"] = stopped.structured_content["top_frame"]["line"]
        ended = await client.call_tool("terminate", {"session": "s1"})
        out["ended"] = ended.structured_content["terminated"]
    print(json.dumps(out))

anyio.run(main)
"#;

#[test]
fn the_python_mcp_2x_client_uses_mcp_dap_at_2026_07_28() {
    let python = venv_bin().join("python3");
    let program = write_program();
    let report = run_client(&python.to_string_lossy(), &["-c", PY2_CLIENT], &program);
    assert_eq!(
        report,
        json!({"protocol": "2026-07-28", "tools": TOOLS, "launched": "s1", "state": "stopped",
            "stopped": 3, "ended": "s1"})
    );
}
