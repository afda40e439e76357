//! What 2026-07-28 admits and 2025-11-25 refuses reaches the editor adapted: null
//! members of tool schemas, and 2026's resource-not-found -32602, over real pipes with exact
//! values. The harness validates every frame against the official 2025-11-25 schema, so a
//! `tools/list` with one refused tool fails the test by itself.

use crate::common;

use common::{Bridge, text_of};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

fn ready() -> Bridge {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    b
}

fn tools(b: &mut Bridge, id: i64) -> Vec<Value> {
    let r = b.request(json!(id), "tools/list", json!({}));
    r["result"]["tools"].as_array().cloned().expect("tools")
}

/// The `tools/list` result of `mcp-fixture-server --test-tools` asked directly (no bridge).
fn upstream_tools() -> Vec<Value> {
    let mut child = Command::new(common::server_bin())
        .arg("--test-tools")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn mcp-fixture-server");
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}
    }}});
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "{request}").expect("write");
    // stdin stays open until the answer is read: the server cancels what is in flight at EOF.
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut tools = None;
    for line in stdout.lines() {
        let v: Value = serde_json::from_str(&line.expect("read")).expect("JSON");
        if v["id"] == 1 {
            tools = v["result"]["tools"].as_array().cloned();
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    tools.expect("tools/list result")
}

fn find<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {tools:?}"))
}

#[test]
fn null_properties_and_required_become_empty_or_are_dropped_and_every_tool_is_listed() {
    let mut b = Bridge::start(&["--log-level", "debug"], &[]);
    b.initialize();
    let list = tools(&mut b, 1);
    // Every tool of the upstream is there, in its order (the seen editor refused them all).
    let names: Vec<&Value> = list.iter().map(|t| &t["name"]).collect();
    let upstream = upstream_tools();
    assert_eq!(
        names,
        upstream.iter().map(|t| &t["name"]).collect::<Vec<_>>()
    );
    assert_eq!(
        find(&upstream, "schema_null_members")["inputSchema"],
        json!({"type": "object", "properties": null, "required": null})
    );
    assert_eq!(
        find(&list, "schema_null_members")["inputSchema"],
        json!({"type": "object", "properties": {}})
    );
    // The tool still works.
    let r = b.tools_call(json!(2), "schema_null_members", json!({}));
    assert_eq!(text_of(&r), "ok");
    b.wait_stderr("tool \"schema_null_members\": inputSchema: dropped a null \"required\"");
}

#[test]
fn null_members_deep_in_input_and_output_schemas_are_adapted() {
    let mut b = ready();
    let list = tools(&mut b, 3);
    let t = find(&list, "schema_nested_nulls");
    assert_eq!(
        t["inputSchema"],
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "default": null},
                "options": {"type": "object", "properties": {}},
                "tags": {"type": "array", "items": {}},
                "mode": {"anyOf": [{"type": "string", "enum": ["a", "b"]}]},
                "point": {"$ref": "#/$defs/point"}
            },
            "required": ["path"],
            "$defs": {"point": {"type": "object", "properties": {"x": {}}}}
        })
    );
    assert_eq!(
        t["outputSchema"],
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}})
    );
    let r = b.tools_call(json!(4), "schema_nested_nulls", json!({"path": "/x"}));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 4, "result": {
            "content": [{"type": "text", "text": "{\"ok\":true}"}],
            "structuredContent": {"ok": true}
        }})
    );
}

#[test]
fn resource_not_found_reaches_the_editor_as_32002_with_the_upstream_message_and_data() {
    let mut b = ready();
    let r = b.request(json!(5), "resources/read", json!({"uri": "example://nope"}));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 5, "error": {
            "code": -32002, "message": "Resource not found", "data": {"uri": "example://nope"}
        }})
    );
    // The upstream got the request as sent, and answered 2026's -32602.
    let up = b.wait_upstream(|v| v["method"] == "resources/read");
    assert_eq!(up["params"]["uri"], "example://nope");
}

#[test]
fn other_invalid_params_errors_pass_unchanged() {
    let mut b = ready();
    // resources/read: -32602 whose data.uri is another URI than the one read.
    let r = b.request(
        json!(6),
        "resources/read",
        json!({"uri": "example://moved/7"}),
    );
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 6, "error": {
            "code": -32602, "message": "Resource moved", "data": {"uri": "example://notes/7"}
        }})
    );
    // Other methods keep -32602, also with data.
    let r = b.request(json!(7), "tools/call", json!({"name": "nope"}));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 7, "error": {
            "code": -32602, "message": "Unknown tool: nope", "data": {"name": "nope"}
        }})
    );
    let r = b.request(json!(8), "prompts/get", json!({"name": "nope"}));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 8, "error": {
            "code": -32602, "message": "Unknown prompt: nope", "data": {"name": "nope"}
        }})
    );
}

#[test]
fn resource_not_found_after_a_round_of_input_requests_is_32002_too() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize_with(json!({"roots": {"listChanged": true}}));
    b.send_request(
        json!(9),
        "resources/read",
        json!({"uri": "example://gone/1"}),
    );
    let q = b.recv();
    assert_eq!(q["method"], "roots/list", "{q}");
    b.send(&json!({"jsonrpc": "2.0", "id": q["id"], "result": {"roots": []}}));
    let r = b.recv_response(&json!(9));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 9, "error": {
            "code": -32002, "message": "Resource not found", "data": {"uri": "example://gone/1"}
        }})
    );
    // The retry carried the state: the error came from the second round.
    let retry = b.wait_upstream(|v| {
        v["method"] == "resources/read" && v["params"].get("requestState").is_some()
    });
    assert_eq!(retry["params"]["requestState"], "gone/1");
}
