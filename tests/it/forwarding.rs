//! The forwarding rule, the result rules and the adaptations of 2026-07-28 shapes, with exact
//! values; every frame is validated against the official schemas by the harness.

use crate::common;

use common::{Bridge, text_of};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn ready() -> Bridge {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    b
}

fn upstream_call(b: &Bridge, name: &str) -> Value {
    b.wait_upstream(|v| v["method"] == "tools/call" && v["params"]["name"] == name)
}

#[test]
fn tools_call_returns_the_exact_result() {
    let mut b = ready();
    let r = b.tools_call(json!(1), "echo", json!({"text": "héllo \"x\"\n"}));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "héllo \"x\"\n"}]}})
    );
    let r = b.tools_call(json!(2), "add", json!({"a": 2, "b": 3.5}));
    assert_eq!(r["result"]["structuredContent"], json!({"sum": 5.5}));
    assert_eq!(text_of(&r), r#"{"sum":5.5}"#);
}

#[test]
fn missing_params_become_an_object_with_the_required_meta() {
    let mut b = ready();
    b.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    let r = b.recv_response(&json!(3));
    assert!(r["result"]["tools"].is_array());
    let up = b.wait_upstream(|v| v["method"] == "tools/list");
    let params = up["params"].as_object().expect("params object");
    assert_eq!(params.keys().collect::<Vec<_>>(), vec!["_meta"]);
    assert_eq!(
        up["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        up["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
        json!({})
    );
}

#[test]
fn meta_keeps_trace_and_vscode_keys_and_drops_the_rest() {
    let mut b = ready();
    b.request(json!(4), "logging/setLevel", json!({"level": "warning"}));
    let r = b.request(
        json!(5),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "m"}, "task": {"ttl": 1000},
               "_meta": {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                         "tracestate": "a=b", "baggage": "k=v", "vscode.conversationId": "c1",
                         "vscode.mcp/secret": 1, "io.modelcontextprotocol/related-task": {"taskId": "t"},
                         "com.example/x": 2}}),
    );
    assert_eq!(text_of(&r), "m");
    let up = upstream_call(&b, "echo");
    assert!(up["params"].get("task").is_none());
    assert_eq!(
        up["params"]["_meta"],
        json!({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
               "tracestate": "a=b", "baggage": "k=v", "vscode.conversationId": "c1",
               "io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {},
               "io.modelcontextprotocol/clientInfo": {"name": "mcp-bridge", "version": env!("CARGO_PKG_VERSION")},
               "io.modelcontextprotocol/logLevel": "warning"})
    );
}

#[test]
fn results_lose_the_2026_fields_and_tool_schemas_are_adapted() {
    let mut b = ready();
    let r = b.request(json!(6), "tools/list", json!({}));
    let result = r["result"].as_object().expect("result");
    for k in ["resultType", "ttlMs", "cacheScope", "_meta"] {
        assert!(!result.contains_key(k), "{k} must be dropped: {r}");
    }
    let tools = r["result"]["tools"].as_array().expect("tools");
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no tool {name}"))
    };
    // An array without items gets items: {}; boolean property schemas become objects;
    // an outputSchema whose root is not an object is dropped.
    let t = tool("schema_array_without_items");
    assert_eq!(
        t["inputSchema"]["properties"]["list"],
        json!({"type": "array", "items": {}})
    );
    let t = tool("schema_boolean_properties");
    assert_eq!(t["inputSchema"]["properties"]["flag"], json!({}));
    assert_eq!(t["inputSchema"]["properties"]["never"], json!({"not": {}}));
    let t = tool("schema_array_output");
    assert!(t.get("outputSchema").is_none(), "{t}");
    assert_eq!(tool("add")["outputSchema"]["type"], "object");
    // The info line is on stderr before the response is on stdout; the reader of stderr
    // may still be behind.
    b.wait_stderr("an array schema without items got items");
}

#[test]
fn a_non_object_structured_content_becomes_text_and_is_dropped() {
    let mut b = ready();
    let r = b.tools_call(json!(7), "structured_array", json!({}));
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "[1,2,3]"}]})
    );
}

#[test]
fn upstream_errors_keep_code_message_and_data_except_url_elicitation() {
    let mut b = ready();
    let r = b.tools_call(
        json!(8),
        "fail",
        json!({"code": -32050, "message": "no disk", "data": {"path": "/x"}}),
    );
    assert_eq!(
        r["error"],
        json!({"code": -32050, "message": "no disk", "data": {"path": "/x"}})
    );
    let r = b.tools_call(
        json!(9),
        "fail",
        json!({"code": -32042, "message": "open this", "data": {"elicitations": []}}),
    );
    assert_eq!(r["error"], json!({"code": -32603, "message": "open this"}));
    let r = b.tools_call(json!(10), "no_such_tool", json!({}));
    assert_eq!(r["error"]["code"], -32602);
}

#[test]
fn progress_goes_to_the_editors_token() {
    let mut b = ready();
    let r = b.request(json!(11), "tools/call",
        json!({"name": "slow", "arguments": {"steps": 3, "delay_ms": 10}, "_meta": {"progressToken": "tok-1"}}));
    assert_eq!(text_of(&r), "done after 3 steps");
    let progress = b.take_notifications("notifications/progress");
    assert_eq!(progress.len(), 3, "{progress:?}");
    for (i, p) in progress.iter().enumerate() {
        assert_eq!(p["params"]["progressToken"], "tok-1");
        assert_eq!(p["params"]["progress"], json!(i as u64 + 1));
    }
    // Upstream saw the bridge's own token, not the editor's.
    let up = upstream_call(&b, "slow");
    let token = &up["params"]["_meta"]["progressToken"];
    assert!(token.is_string() && token != "tok-1", "{token}");
}

#[test]
fn progress_is_limited_to_50_per_second_per_request() {
    let mut b = ready();
    // Every progress frame passed the bridge's bucket between the moment the request was sent
    // and the moment its response arrived (the response is written after them): on a busy
    // machine that time grows, and so does the bound.
    let sent = Instant::now();
    let r = b.request(json!(12), "tools/call",
        json!({"name": "progress_flood", "arguments": {"count": 1000}, "_meta": {"progressToken": 5}}));
    let elapsed_secs = sent.elapsed().as_secs_f64();
    assert_eq!(text_of(&r), "flooded");
    let progress = b.take_notifications("notifications/progress");
    let n = progress.len();
    // The bucket holds at most PROGRESS_BURST tokens and refills at MAX_PROGRESS_PER_SEC.
    let most = 50.0 + 50.0 * elapsed_secs;
    assert!(
        n >= 50 && n as f64 <= most,
        "a burst of 50 passes, then 50/s: got {n} in {elapsed_secs:.3} s (at most {most:.1})"
    );
    // The first 50 are the burst: the fixture's first 50 steps, in order.
    for (i, p) in progress.iter().take(50).enumerate() {
        assert_eq!(p["params"]["progress"], json!(i + 1));
        assert_eq!(p["params"]["progressToken"], json!(5));
    }
}

#[test]
fn log_messages_are_filtered_by_the_last_set_level() {
    let mut b = ready();
    b.request(json!(13), "logging/setLevel", json!({"level": "warning"}));
    let r = b.tools_call(
        json!(14),
        "log",
        json!({"level": "info", "message": "quiet"}),
    );
    assert_eq!(text_of(&r), "logged");
    let r = b.tools_call(
        json!(15),
        "log",
        json!({"level": "error", "message": "loud"}),
    );
    assert_eq!(text_of(&r), "logged");
    let logs = b.take_notifications("notifications/message");
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert_eq!(logs[0]["params"]["level"], "error");
    assert_eq!(logs[0]["params"]["data"], "loud");
    let up = b.upstream_received();
    let logs_up: Vec<&Value> = up.iter().filter(|v| v["params"]["name"] == "log").collect();
    assert!(
        logs_up
            .iter()
            .all(|v| v["params"]["_meta"]["io.modelcontextprotocol/logLevel"] == "warning")
    );
}

#[test]
fn prompts_resources_and_completion_are_forwarded() {
    let mut b = ready();
    let r = b.request(json!(20), "prompts/list", json!({}));
    assert!(
        r["result"]["prompts"]
            .as_array()
            .is_some_and(|p| p.iter().any(|p| p["name"] == "greet"))
    );
    let r = b.request(
        json!(21),
        "prompts/get",
        json!({"name": "greet", "arguments": {"name": "Ada"}}),
    );
    assert_eq!(
        r["result"]["messages"][0]["content"]["text"],
        "Say hello to Ada."
    );
    let r = b.request(json!(22), "resources/list", json!({}));
    assert!(
        r["result"]["resources"]
            .as_array()
            .is_some_and(|v| v.iter().any(|x| x["uri"] == "example://readme"))
    );
    let r = b.request(json!(23), "resources/templates/list", json!({}));
    assert_eq!(
        r["result"]["resourceTemplates"][0]["uriTemplate"],
        "example://notes/{id}"
    );
    let r = b.request(
        json!(24),
        "resources/read",
        json!({"uri": "example://readme"}),
    );
    assert_eq!(r["result"]["contents"][0]["uri"], "example://readme");
    assert!(r["result"]["contents"][0]["text"].is_string());
    let r = b.request(json!(25), "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "A"}}));
    let values = r["result"]["completion"]["values"]
        .as_array()
        .expect("values");
    assert!(
        !values.is_empty()
            && values
                .iter()
                .all(|v| v.as_str().is_some_and(|s| s.starts_with('A')))
    );
}

#[test]
fn upstream_cancellations_and_list_changes_never_reach_the_editor() {
    let mut b = ready();
    let before = b.seen.len();
    let lines = json!([
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"x"}}}"#,
        "not json at all",
        r#"{"jsonrpc":"2.0","id":"ask","method":"roots/list"}"#
    ]);
    let r = b.tools_call(json!(30), "emit", json!({"lines": lines}));
    assert_eq!(text_of(&r), "emitted");
    assert!(b.recv_for(Duration::from_millis(200)).is_empty());
    // The list change names a subscription the bridge never opened: it stays inside.
    assert!(
        b.seen[before..].iter().all(|f| f.get("method").is_none()),
        "{:?}",
        b.seen
    );
    let r = b.tools_call(json!(31), "echo", json!({"text": "still here"}));
    assert_eq!(text_of(&r), "still here");
}

#[test]
fn a_new_log_level_reaches_the_upstream_with_the_next_request() {
    let mut b = ready();
    let level_of = |b: &Bridge, text: &str| {
        b.wait_upstream(|v| v["method"] == "tools/call" && v["params"]["arguments"]["text"] == text)
            ["params"]["_meta"]
            .get("io.modelcontextprotocol/logLevel")
            .cloned()
    };
    b.tools_call(json!(1), "echo", json!({"text": "a"}));
    assert_eq!(level_of(&b, "a"), None);
    b.request(json!(2), "logging/setLevel", json!({"level": "error"}));
    b.tools_call(json!(3), "echo", json!({"text": "b"}));
    assert_eq!(level_of(&b, "b"), Some(json!("error")));
    b.request(json!(4), "logging/setLevel", json!({"level": "debug"}));
    b.tools_call(json!(5), "echo", json!({"text": "c"}));
    assert_eq!(level_of(&b, "c"), Some(json!("debug")));
}

#[test]
fn a_response_in_a_batch_fails_its_call_at_once_with_invalid_response() {
    let mut b = ready();
    // JSON-RPC 2.0 §6 batches are gone from MCP: the answer comes as an array of one response.
    b.send_tools_call(
        json!(40),
        "respond_raw",
        json!({"before": r#"[{"jsonrpc":"2.0","id":"#,
            "after": r#","result":{"content":[{"type":"text","text":"in a batch"}]}}]"#}),
    );
    let r = b.recv_response_within(&json!(40), Duration::from_secs(10));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 40, "error": {"code": -32603,
            "message": "The upstream server sent an invalid response",
            "data": {"cause": "invalid_response"}}})
    );
    b.wait_stderr(
        r#"mcp-bridge: upstream: warn: the upstream sent a JSON-RPC batch (an array), which MCP does not allow: each request it answers fails with invalid_response: "[{\"jsonrpc\":\"2.0\",\"id\":"#,
    );
    let r = b.tools_call(json!(41), "echo", json!({"text": "still here"}));
    assert_eq!(text_of(&r), "still here");
    // A batch of requests names ids of the server's own: the call in flight with the same
    // upstream id is not failed by it.
    b.send_tools_call(json!(44), "sleep", json!({"ms": 500}));
    let sleeping = upstream_call(&b, "sleep")["id"].clone();
    let batch = json!([{"jsonrpc": "2.0", "id": sleeping, "method": "ping"}]).to_string();
    let r = b.tools_call(json!(45), "emit", json!({"lines": [batch]}));
    assert_eq!(text_of(&r), "emitted");
    assert_eq!(text_of(&b.recv_response(&json!(44))), "slept");
}

#[test]
fn the_upstreams_ping_gets_an_empty_result_and_its_other_requests_get_method_not_found() {
    let mut b = ready();
    let lines = json!([
        r#"{"jsonrpc":"2.0","id":"keep-alive-1","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":9,"method":"roots/list","params":{}}"#
    ]);
    let r = b.tools_call(json!(42), "emit", json!({"lines": lines}));
    assert_eq!(text_of(&r), "emitted");
    let pong = b.wait_upstream(|v| v["id"] == "keep-alive-1");
    assert_eq!(
        pong,
        json!({"jsonrpc": "2.0", "id": "keep-alive-1", "result": {"resultType": "complete"}})
    );
    let refused = b.wait_upstream(|v| v["id"] == 9 && v.get("method").is_none());
    assert_eq!(
        refused,
        json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -32601,
            "message": "Method not found", "data": {"method": "roots/list"}}})
    );
    // Nothing of it reaches the editor: the next frame is the answer to the next call.
    let before = b.seen.len();
    let r = b.tools_call(json!(43), "echo", json!({"text": "next"}));
    assert_eq!(text_of(&r), "next");
    assert_eq!(b.seen.len(), before + 1, "{:?}", &b.seen[before..]);
}
