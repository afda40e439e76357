//! Black-box tests of `mcp-example-server`, the README's demo, started as a user starts it
//! (over `common::stdio_server`, every message checked against the official 2026-07-28
//! schema; through the bridge with `common::Bridge`): its typed tools, prompt, resources and
//! completion, the envelope rules of the server API it is written on, and the README's first
//! run.

use crate::common::stdio_server::{StdioServer, meta, text, with_meta};
use crate::common::{self, Bridge, schema};
use serde_json::{Value, json};

// ---- envelope rules -------------------------------------------------------------------------

#[tokio::test]
async fn a_request_without_version_or_capabilities_in_meta_gets_invalid_params() {
    let mut up = StdioServer::demo();
    let only_version = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    let only_caps = json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}});
    for params in [json!({}), only_version, only_caps] {
        let error = up.error("server/discover", params).await;
        assert_eq!(error["code"], -32602);
    }
    let id = up.call("tools/list", Value::Null).await;
    up.send(&json!({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}))
        .await;
    // `"params": null` is no structured value: JSON-RPC 2.0's Invalid Request (the protocol
    // layer's one classifier, as the bridge answers it).
    let (_, response) = up.response_to(&id).await;
    assert_eq!(response["error"]["code"], -32600);
    assert_eq!(response["error"]["data"]["cause"], "invalid_request_shape");
    let (_, response) = up.response_to(&json!(99)).await;
    assert_eq!(response["error"]["code"], -32602);
    up.finish().await;
}

#[tokio::test]
async fn an_unsupported_version_gets_32022_naming_the_supported_ones() {
    let mut up = StdioServer::demo();
    let mut old = meta(json!({}));
    old["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let error = up.error("tools/list", json!({"_meta": old})).await;
    assert_eq!(error["code"], -32022);
    assert_eq!(
        error["data"],
        json!({"supported": ["2026-07-28"], "requested": "2025-11-25"})
    );
    // A legacy initialize is told the same.
    let error = up
        .error(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "x", "version": "1"}}),
        )
        .await;
    assert_eq!(error["code"], -32022);
    up.finish().await;
}

#[tokio::test]
async fn unknown_methods_garbage_and_bad_envelopes_get_the_json_rpc_errors() {
    let mut up = StdioServer::demo();
    let error = up.error("ping", with_meta(json!({}))).await;
    assert_eq!(error["code"], -32601);
    up.send_line("this is not json").await;
    let message = up.recv().await;
    assert_eq!(
        message,
        json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error",
               "data": {"cause": "parse_error"}}})
    );
    up.send_line(r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#)
        .await;
    let message = up.recv().await;
    assert_eq!(message["error"]["code"], -32600);
    assert!(message.get("id").is_none());
    up.send_line(r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#)
        .await;
    assert_eq!(up.recv().await["error"]["code"], -32600);
    // Responses and unknown notifications from the client are ignored.
    up.send_line(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#)
        .await;
    up.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    let result = up.tool("echo", json!({"text": "still here"})).await;
    assert_eq!(text(&result), "still here");
    up.finish().await;
}

#[tokio::test]
async fn an_unknown_tool_prompt_or_resource_is_invalid_params() {
    let mut up = StdioServer::demo();
    let error = up
        .error("tools/call", with_meta(json!({"name": "nope"})))
        .await;
    assert_eq!(error["code"], -32602);
    let error = up
        .error("prompts/get", with_meta(json!({"name": "nope"})))
        .await;
    assert_eq!(error["code"], -32602);
    let error = up
        .error(
            "resources/read",
            with_meta(json!({"uri": "example://nope"})),
        )
        .await;
    assert_eq!(
        (error["code"].clone(), error["data"]["uri"].clone()),
        (json!(-32602), json!("example://nope"))
    );
    up.finish().await;
}

// ---- tools, prompts, resources, completion ---------------------------------------------------

#[tokio::test]
async fn the_demo_lists_its_six_typed_tools_with_input_schemas_from_their_argument_types() {
    let mut up = StdioServer::demo();
    let discover = up.result("server/discover", json!({})).await;
    assert_eq!(
        discover["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "mcp-example-server", "version": env!("CARGO_PKG_VERSION")})
    );
    // Each list declares listChanged: the bridge's first run relies on it (README).
    assert_eq!(
        discover["capabilities"],
        json!({"tools": {"listChanged": true}, "prompts": {"listChanged": true},
               "resources": {"subscribe": true, "listChanged": true},
               "completions": {}, "logging": {}})
    );
    let tools = up.result("tools/list", json!({})).await["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["echo", "add", "slow", "log", "fail", "ask_name"]);
    // No boolean sub-schema (a `Value` argument): nothing for the bridge to repair.
    assert_eq!(
        tools[4]["inputSchema"]["properties"]["data"],
        json!({"description": "The error's data: any JSON value."})
    );
    let schema_2020 = "https://json-schema.org/draft/2020-12/schema";
    assert_eq!(
        tools[0]["inputSchema"],
        json!({"$schema": schema_2020, "type": "object", "required": ["text"],
               "properties": {"text": {"type": "string", "description": "Returned as it is."}}})
    );
    let slow = &tools[2]["inputSchema"]["properties"];
    assert_eq!(
        (
            slow["steps"]["maximum"].clone(),
            slow["delay_ms"]["maximum"].clone()
        ),
        (json!(10_000), json!(600_000))
    );
    assert_eq!(
        tools[3]["inputSchema"]["properties"]["level"]["enum"],
        json!([
            "debug",
            "info",
            "notice",
            "warning",
            "error",
            "critical",
            "alert",
            "emergency"
        ])
    );
    assert_eq!(tools[5]["inputSchema"], json!({"type": "object"}));
    up.finish().await;
}

/// MCP 2025-11-25 server/tools (SEP-1303): input validation errors are tool execution errors,
/// so that the model sees them and can correct its call.
#[tokio::test]
async fn arguments_that_do_not_fit_a_typed_tool_get_a_tool_error_naming_the_problem() {
    let mut up = StdioServer::demo();
    for (tool, arguments, message) in [
        (
            "add",
            json!({"a": "two", "b": 3}),
            "Invalid arguments: invalid type: string \"two\", expected a JSON number",
        ),
        ("echo", json!({}), "Invalid arguments: missing field `text`"),
        (
            "log",
            json!({"level": "loud", "message": "m"}),
            "Invalid arguments: unknown variant `loud`, expected one of `debug`, `info`, \
             `notice`, `warning`, `error`, `critical`, `alert`, `emergency`",
        ),
    ] {
        let result = up.tool(tool, arguments).await;
        assert_eq!(
            (result["content"].clone(), result["isError"].clone()),
            (json!([{"type": "text", "text": message}]), json!(true)),
            "{tool}"
        );
    }
    // Within the type but beyond the schema's maximum: a tool error the model sees.
    let beyond = up
        .tool("slow", json!({"steps": 10_001, "delay_ms": 1}))
        .await;
    assert_eq!(
        (beyond["isError"].clone(), text(&beyond)),
        (json!(true), "at most 10000 steps of at most 600000 ms")
    );
    let sum = up.tool("add", json!({"a": 2.5, "b": 1})).await;
    assert_eq!(sum["structuredContent"], json!({"sum": 3.5}));
    up.finish().await;
}

#[tokio::test]
async fn the_demo_tools_answer_as_documented() {
    let mut up = StdioServer::demo();
    assert_eq!(text(&up.tool("echo", json!({"text": "hi"})).await), "hi");
    let sum = up.tool("add", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum["structuredContent"], json!({"sum": 5}));
    assert_eq!(text(&sum), r#"{"sum":5}"#);
    let error = up
        .error(
            "tools/call",
            with_meta(json!({"name": "fail", "arguments":
            {"code": -32000, "message": "boom", "data": {"why": 1}}})),
        )
        .await;
    assert_eq!(
        error,
        json!({"code": -32000, "message": "boom", "data": {"why": 1}})
    );
    up.finish().await;
}

#[tokio::test]
async fn prompts_resources_and_completion_answer_as_documented() {
    let mut up = StdioServer::demo();
    let prompt = up
        .result(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(prompt["messages"][0]["role"], "user");
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "Say hello to Ada."
    );
    let error = up
        .error("prompts/get", with_meta(json!({"name": "greet"})))
        .await;
    assert_eq!(error["code"], -32602);

    let readme = up
        .result("resources/read", json!({"uri": "example://readme"}))
        .await;
    assert_eq!(readme["contents"][0]["mimeType"], "text/plain");
    assert!(
        readme["contents"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("mcp-example-server"))
    );
    let note = up
        .result("resources/read", json!({"uri": "example://notes/42"}))
        .await;
    assert_eq!(note["contents"][0]["text"], "Note 42.");

    let completion = up
        .result(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
                                              "argument": {"name": "name", "value": "A"}}),
        )
        .await;
    assert_eq!(
        completion["completion"]["values"],
        json!(["Ada", "Alan", "Alice"])
    );
    up.finish().await;
}

// ---- progress, logging, MRTR ----------------------------------------------------------------

#[tokio::test]
async fn progress_and_log_notifications_come_before_the_response_and_only_when_asked() {
    let mut up = StdioServer::demo();
    let mut asked = meta(json!({}));
    asked["progressToken"] = json!("tok");
    asked["io.modelcontextprotocol/logLevel"] = json!("warning");
    let id = up
        .call(
            "tools/call",
            json!({"name": "slow", "arguments": {"steps": 3, "delay_ms": 1}, "_meta": asked}),
        )
        .await;
    let (seen, response) = up.response_to(&id).await;
    assert_eq!(text(&response["result"]), "done after 3 steps");
    let progress: Vec<Value> = seen
        .iter()
        .map(|n| n["params"]["progress"].clone())
        .collect();
    assert_eq!(progress, vec![json!(1), json!(2), json!(3)]);
    assert!(seen.iter().all(|n| n["params"]["progressToken"] == "tok"));

    for (level, expected) in [("info", 0), ("error", 1)] {
        let id = up
            .call(
                "tools/call",
                json!({"name": "log", "arguments": {"level": level, "message": "m"},
                                       "_meta": asked}),
            )
            .await;
        let (seen, _) = up.response_to(&id).await;
        assert_eq!(
            seen.len(),
            expected,
            "log at {level} with threshold warning"
        );
        if let Some(message) = seen.first() {
            assert_eq!(message["method"], "notifications/message");
            assert_eq!(message["params"]["level"], "error");
        }
    }
    // Without a token or a level, nothing but the response.
    let id = up
        .call(
            "tools/call",
            with_meta(json!({"name": "slow", "arguments": {"steps": 2, "delay_ms": 1}})),
        )
        .await;
    let (seen, _) = up.response_to(&id).await;
    assert!(seen.is_empty());
    up.finish().await;
}

#[tokio::test]
async fn ask_name_elicits_a_form_and_the_retry_with_the_state_gets_the_greeting() {
    let mut up = StdioServer::demo();
    let caps = json!({"elicitation": {}});
    let first = up
        .result(
            "tools/call",
            json!({"name": "ask_name", "arguments": {}, "_meta": meta(caps.clone())}),
        )
        .await;
    assert_eq!(first["resultType"], "input_required");
    let request = &first["inputRequests"]["name"];
    assert_eq!(request["method"], "elicitation/create");
    schema::assert_valid_2026("ElicitRequest", request);
    let state = first["requestState"].clone();

    let retry = json!({"name": "ask_name", "arguments": {}, "requestState": state,
                       "inputResponses": {"name": {"action": "accept", "content": {"name": "Zoe"}}},
                       "_meta": meta(caps.clone())});
    let done = up.result("tools/call", retry).await;
    assert_eq!(text(&done), "Hello, Zoe!");

    let forged = json!({"name": "ask_name", "requestState": "forged",
                        "inputResponses": {"name": {"action": "accept", "content": {"name": "Eve"}}},
                        "_meta": meta(caps)});
    assert_eq!(up.error("tools/call", forged).await["code"], -32602);
    up.finish().await;
}

// ---- as a user runs it ----------------------------------------------------------------------

#[test]
fn the_demo_takes_no_options_and_its_help_lists_its_tools() {
    let help = std::process::Command::new(common::example_server_bin())
        .arg("--help")
        .output()
        .expect("run --help");
    assert!(help.status.success());
    let help = String::from_utf8_lossy(&help.stdout);
    for tool in [
        "echo {text}",
        "add {a, b}",
        "slow {steps, delay_ms}",
        "ask_name {}",
    ] {
        assert!(help.contains(tool), "--help lacks {tool}: {help}");
    }
    assert!(!help.contains("--test-tools"), "{help}");
    let version = std::process::Command::new(common::example_server_bin())
        .arg("--version")
        .output()
        .expect("run --version");
    assert_eq!(
        String::from_utf8_lossy(&version.stdout),
        format!("mcp-example-server {}\n", env!("CARGO_PKG_VERSION"))
    );
    let bogus = std::process::Command::new(common::example_server_bin())
        .arg("--test-tools")
        .output()
        .expect("run with an option");
    assert_eq!(bogus.status.code(), Some(2));
}

/// The README's "First run": the three lines, one at a time, through `mcp-bridge
/// mcp-example-server`; the answers byte for byte as the README shows them.
#[test]
fn the_readme_first_run_through_the_bridge_answers_as_the_readme_shows() {
    let mut b = Bridge::start_cmd(&[], &[common::example_server_bin().to_string()]);
    let initialize = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"1"}}}"#;
    b.send_raw_request(&json!(1), "initialize", initialize);
    b.recv_response(&json!(1));
    let first = b.response_line(&json!(1));
    assert!(
        first.starts_with(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","#),
        "{first}"
    );
    let server_info = format!(
        "\"serverInfo\":{{\"name\":\"mcp-example-server\",\"version\":\"{}\"}}}}}}\n",
        env!("CARGO_PKG_VERSION")
    );
    assert!(first.ends_with(&server_info), "{first}");
    b.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    let changes: Vec<Value> = (0..3).map(|_| b.recv()).collect();
    assert_eq!(
        changes,
        ["tools", "prompts", "resources"].map(
            |list| json!({"jsonrpc": "2.0", "method": format!("notifications/{list}/list_changed")})
        )
    );
    let echo = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;
    b.send_raw_request(&json!(2), "tools/call", echo);
    b.recv_response(&json!(2));
    assert_eq!(
        b.response_line(&json!(2)),
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n"
    );
    b.close_stdin();
    assert_eq!(b.recv_to_the_end(), Vec::<Value>::new());
    assert_eq!(b.exit_code(common::RECV_TIMEOUT), Some(0));
    let stderr = b.stderr_to_the_end();
    for line in [
        "mcp-bridge: frontend: info: the upstream server is ready (protocol 2026-07-28)\n",
        "mcp-bridge: supervisor: info: the upstream server stopped (exit code 0)\n",
        "mcp-bridge: metrics: info: summary: 1 request, 0 errors; slowest tools/call, ",
    ] {
        assert!(stderr.contains(line), "stderr lacks {line:?}:\n{stderr}");
    }
}
