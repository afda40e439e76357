//! Black-box tests of the server API under the flags and test tools of `mcp-fixture-server`
//! (over `common::stdio_server`, every message checked against the official 2026-07-28
//! schema): paging, cache fields, MRTR rounds, cancellation, listens from both ends, and the
//! lifecycle flags the bridge's tests rely on.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common;
use crate::common::schema;
use crate::common::stdio_server::{
    SERVER_INFO, SUBSCRIPTION_ID, StdioServer, WAIT, assert_valid_result, meta, text, with_meta,
};
use serde_json::{Value, json};

// ---- discover and lists ---------------------------------------------------------------------

#[tokio::test]
async fn discover_advertises_what_is_registered_with_server_info_and_cache_fields() {
    let mut up = StdioServer::fixture(&["--instructions", "Use echo."]);
    let result = up.result("server/discover", json!({})).await;
    assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(
        result["capabilities"],
        json!({"tools": {"listChanged": true}, "prompts": {"listChanged": true},
               "resources": {"subscribe": true, "listChanged": true},
               "completions": {}, "logging": {}})
    );
    assert_eq!(result["instructions"], "Use echo.");
    assert_eq!(result["ttlMs"], 60_000);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(result["_meta"][SERVER_INFO]["name"], "mcp-fixture-server");
    let (_, status) = up.finish().await;
    assert!(status.success());
}

#[tokio::test]
async fn every_list_is_schema_valid_and_test_tools_add_the_translation_cases() {
    let mut up =
        StdioServer::fixture(&["--test-tools", "--ttl-ms", "5", "--cache-scope", "private"]);
    let tools = up.result("tools/list", json!({})).await;
    assert_eq!(
        (tools["ttlMs"].clone(), tools["cacheScope"].clone()),
        (json!(5), json!("private"))
    );
    let find = |name: &str| {
        tools["tools"]
            .as_array()
            .and_then(|tools| tools.iter().find(|t| t["name"] == name).cloned())
            .unwrap_or_else(|| panic!("no tool {name}"))
    };
    for name in [
        "echo", "add", "slow", "log", "fail", "ask_name", "sleep", "crash", "emit",
    ] {
        find(name);
    }
    assert_eq!(
        find("add")["outputSchema"]["properties"]["sum"]["type"],
        "number"
    );
    assert_eq!(
        find("schema_array_without_items")["inputSchema"]["properties"]["list"],
        json!({"type": "array"})
    );
    assert_eq!(
        find("schema_boolean_properties")["inputSchema"]["properties"],
        json!({"flag": true, "never": false})
    );
    assert_eq!(
        find("schema_array_output")["outputSchema"],
        json!({"type": "array"})
    );

    let prompts = up.result("prompts/list", json!({})).await;
    assert_eq!(prompts["prompts"][0]["name"], "greet");
    let resources = up.result("resources/list", json!({})).await;
    assert_eq!(resources["resources"][0]["uri"], "example://readme");
    let templates = up.result("resources/templates/list", json!({})).await;
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "example://notes/{id}"
    );
    up.finish().await;
}

#[tokio::test]
async fn lists_are_paged_with_an_opaque_cursor_and_a_bad_cursor_is_invalid_params() {
    let mut up = StdioServer::fixture(&["--page-size", "4"]);
    let mut names = Vec::new();
    let mut cursor: Option<Value> = None;
    loop {
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let page = up.result("tools/list", params).await;
        let tools = page["tools"].as_array().cloned().unwrap_or_default();
        assert!(tools.len() <= 4);
        names.extend(tools.iter().map(|t| t["name"].clone()));
        match page.get("nextCursor") {
            Some(next) => cursor = Some(next.clone()),
            None => break,
        }
    }
    assert_eq!(names.len(), 6);
    let error = up
        .error("tools/list", with_meta(json!({"cursor": "bogus"})))
        .await;
    assert_eq!(error["code"], -32602);
    up.finish().await;
}

// ---- progress, logging, MRTR ----------------------------------------------------------------

#[tokio::test]
async fn an_input_request_the_client_cannot_answer_is_missing_capability() {
    let mut up = StdioServer::fixture(&["--test-tools"]);
    let error = up
        .error("tools/call", with_meta(json!({"name": "ask_name"})))
        .await;
    assert_eq!(error["code"], -32021);
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({"elicitation": {"form": {}}})
    );
    let error = up
        .error(
            "tools/call",
            json!({"name": "ask_url", "arguments": {"url": "https://example.com"},
                                    "_meta": meta(json!({"elicitation": {"form": {}}}))}),
        )
        .await;
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({"elicitation": {"url": {}}})
    );
    up.finish().await;
}

#[tokio::test]
async fn sampling_roots_and_load_shedding_round_trips_complete() {
    let mut up = StdioServer::fixture(&["--test-tools"]);
    let caps = json!({"sampling": {}, "roots": {}});
    for (tool, arguments, key, answer, expected) in [
        (
            "sample",
            json!({"prompt": "hi"}),
            "sample",
            json!({"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}),
            "model said: hello",
        ),
        (
            "roots",
            json!({}),
            "roots",
            json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}),
            "file:///a\nfile:///b",
        ),
    ] {
        let first = up
            .result(
                "tools/call",
                json!({"name": tool, "arguments": arguments, "_meta": meta(caps.clone())}),
            )
            .await;
        schema::assert_valid_2026("InputRequest", &first["inputRequests"][key]);
        let retry = json!({"name": tool, "arguments": arguments, "requestState": first["requestState"],
                           "inputResponses": {key: answer}, "_meta": meta(caps.clone())});
        assert_eq!(text(&up.result("tools/call", retry).await), expected);
    }
    let first = up.tool("load_shed", json!({})).await;
    assert!(first.get("inputRequests").is_none());
    let retry = json!({"name": "load_shed", "requestState": first["requestState"]});
    assert_eq!(text(&up.result("tools/call", retry).await), "retried");
    up.finish().await;
}

// ---- concurrency and cancellation -----------------------------------------------------------

#[tokio::test]
async fn a_cancelled_request_gets_no_response_while_others_are_answered() {
    let mut up = StdioServer::fixture(&["--test-tools"]);
    // The sleep outlasts the test: the echo overtakes it however busy the machine is.
    let slow = up
        .call(
            "tools/call",
            with_meta(json!({"name": "sleep", "arguments": {"ms": 600_000}})),
        )
        .await;
    let fast = up
        .call(
            "tools/call",
            with_meta(json!({"name": "echo", "arguments": {"text": "x"}})),
        )
        .await;
    let (seen, _) = up.response_to(&fast).await;
    assert!(seen.is_empty(), "the echo overtakes the sleep");
    up.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": slow, "reason": "test"}}),
    )
    .await;
    // Lines are read in order: the cancel is handled before the next request.
    let after = up
        .call(
            "tools/call",
            with_meta(json!({"name": "echo", "arguments": {"text": "y"}})),
        )
        .await;
    let (seen, _) = up.response_to(&after).await;
    assert!(
        seen.is_empty(),
        "no response for the cancelled request: {seen:?}"
    );
    up.finish().await;
}

#[tokio::test]
async fn end_of_input_cancels_requests_in_flight_and_exits_cleanly() {
    let mut up = StdioServer::fixture(&["--test-tools"]);
    // The sleep outlasts the deadline of `finish`: the exit within it is the cancellation.
    up.call(
        "tools/call",
        with_meta(json!({"name": "sleep", "arguments": {"ms": 600_000}})),
    )
    .await;
    let (rest, status) = up.finish().await;
    assert!(rest.is_empty(), "nothing is answered after EOF: {rest:?}");
    assert!(status.success());
}

#[tokio::test]
async fn a_request_id_already_in_flight_is_an_invalid_request() {
    let mut up = StdioServer::fixture(&["--test-tools"]);
    // The second line is read within microseconds; the sleep leaves a second of margin.
    let sleep = json!({"jsonrpc": "2.0", "id": "dup", "method": "tools/call",
                       "params": with_meta(json!({"name": "sleep", "arguments": {"ms": 1000}}))});
    up.send(&sleep).await;
    up.send(&sleep).await;
    let first = up.recv().await;
    assert_eq!(
        (first["id"].clone(), first["error"]["code"].clone()),
        (json!("dup"), json!(-32600))
    );
    let second = up.recv().await;
    assert_eq!(text(&second["result"]), "slept");
    up.finish().await;
}

// ---- subscriptions/listen -------------------------------------------------------------------

async fn listen(up: &mut StdioServer, id: &str, filter: Value) -> Value {
    up.send(
        &json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
                    "params": with_meta(json!({"notifications": filter}))}),
    )
    .await;
    let ack = up.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], id);
    ack["params"]["notifications"].clone()
}

#[tokio::test]
async fn a_listen_is_acknowledged_then_gets_only_the_events_it_asked_for() {
    let mut up = StdioServer::fixture(&["--test-tools"]);
    let honoured = listen(
        &mut up,
        "L1",
        json!({"toolsListChanged": true, "promptsListChanged": false,
        "resourceSubscriptions": ["example://readme"], "taskIds": ["t1"]}),
    )
    .await;
    assert_eq!(
        honoured,
        json!({"toolsListChanged": true, "resourceSubscriptions": ["example://readme"]})
    );

    let mut events = Vec::new();
    for (event, uri) in [
        ("prompts_list_changed", ""),
        ("resource_updated", "example://other"),
        ("tools_list_changed", ""),
        ("resource_updated", "example://readme"),
    ] {
        let arguments = json!({"event": event, "uri": uri});
        let id = up
            .call(
                "tools/call",
                with_meta(json!({"name": "notify", "arguments": arguments})),
            )
            .await;
        // An event may overtake the response of the tool that published it.
        events.extend(up.response_to(&id).await.0);
    }
    while events.len() < 2 {
        events.push(up.recv().await);
    }
    assert_eq!(events[0]["method"], "notifications/tools/list_changed");
    assert_eq!(events[0]["params"]["_meta"][SUBSCRIPTION_ID], "L1");
    assert_eq!(events[1]["method"], "notifications/resources/updated");
    assert_eq!(events[1]["params"]["uri"], "example://readme");
    assert_eq!(events[1]["params"]["_meta"][SUBSCRIPTION_ID], "L1");

    // The client ends it: no response, and no more events.
    // Lines are read in order: the listen is cancelled before the next request is read, and
    // a cancelled listen sends nothing more.
    up.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "L1"}}))
        .await;
    let id = up
        .call(
            "tools/call",
            with_meta(json!({"name": "notify", "arguments": {"event": "tools_list_changed"}})),
        )
        .await;
    let (seen, _) = up.response_to(&id).await;
    assert!(seen.is_empty(), "{seen:?}");
    let (rest, _) = up.finish().await;
    assert!(rest.is_empty(), "{rest:?}");
}

#[tokio::test]
async fn the_server_ends_listens_with_a_result_or_with_notifications_cancelled() {
    let mut up = StdioServer::fixture(&["--test-tools"]);
    listen(&mut up, "A", json!({"toolsListChanged": true})).await;
    let id = up
        .call(
            "tools/call",
            with_meta(json!({"name": "end_listens", "arguments": {"how": "result"}})),
        )
        .await;
    let messages = [up.recv().await, up.recv().await];
    let end = messages
        .iter()
        .find(|m| m["id"] == "A")
        .cloned()
        .unwrap_or_default();
    assert!(messages.iter().any(|m| m["id"] == id));
    assert_valid_result("subscriptions/listen", &end["result"]);
    assert_eq!(end["result"]["_meta"][SUBSCRIPTION_ID], "A");

    listen(&mut up, "B", json!({"toolsListChanged": true})).await;
    let id = up
        .call(
            "tools/call",
            with_meta(json!({"name": "end_listens", "arguments": {"how": "cancelled"}})),
        )
        .await;
    let mut seen = vec![up.recv().await, up.recv().await];
    seen.retain(|m| m.get("id") != Some(&id));
    assert_eq!(
        seen,
        vec![
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                 "params": {"requestId": "B"}})
        ]
    );
    let (rest, _) = up.finish().await;
    assert!(
        rest.is_empty(),
        "no response for B after its cancellation: {rest:?}"
    );
}

#[tokio::test]
async fn listen_error_refuses_listens_from_the_given_one_on() {
    let mut up = StdioServer::fixture(&[
        "--listen-error",
        "-32000:no listens here",
        "--listen-error-from",
        "2",
    ]);
    listen(&mut up, "A", json!({"toolsListChanged": true})).await;
    for id in ["B", "C"] {
        up.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
                        "params": with_meta(json!({"notifications": {"toolsListChanged": true}}))}),
        )
        .await;
        let refused = up.recv().await;
        assert_eq!(
            refused,
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": "no listens here"}})
        );
    }
    let (rest, _) = up.finish().await;
    assert!(rest.iter().all(|m| m["id"] == "A"), "{rest:?}");
}

#[tokio::test]
async fn no_listen_declares_no_list_changes_and_refuses_listens() {
    let mut up = StdioServer::fixture(&["--no-listen"]);
    let id = up.call("server/discover", with_meta(json!({}))).await;
    let (_, discover) = up.response_to(&id).await;
    assert_eq!(
        discover["result"]["capabilities"],
        json!({"tools": {}, "prompts": {}, "resources": {}, "completions": {}, "logging": {}})
    );
    let id = up
        .call(
            "subscriptions/listen",
            with_meta(json!({"notifications": {"toolsListChanged": true}})),
        )
        .await;
    let (_, refused) = up.response_to(&id).await;
    assert_eq!(refused["error"]["code"], -32601);
    up.finish().await;
}

// ---- misbehaving tools and lifecycle flags ---------------------------------------------------

#[tokio::test]
async fn crash_exits_with_the_code_and_emit_writes_raw_lines() {
    let mut up = StdioServer::fixture(&["--test-tools"]);
    let id = up
        .call("tools/call", with_meta(json!({"name": "emit", "arguments": {"lines": ["{\"jsonrpc\":\"2.0\",\"method\":\"x/y\"}"]}})))
        .await;
    let raw = up.stdout.next_line().await.ok().flatten();
    assert_eq!(
        raw.as_deref(),
        Some("{\"jsonrpc\":\"2.0\",\"method\":\"x/y\"}")
    );
    assert_eq!(text(&up.response_to(&id).await.1["result"]), "emitted");

    let flood = up.tool("structured_array", json!({})).await;
    assert_eq!(
        (flood["content"].clone(), flood["structuredContent"].clone()),
        (json!([]), json!([1, 2, 3]))
    );

    up.call(
        "tools/call",
        with_meta(json!({"name": "crash", "arguments": {"code": 7}})),
    )
    .await;
    // Keep stdin open: end of input would end the server (status 0) before the crash.
    let status = tokio::time::timeout(WAIT, up.child.wait()).await;
    let status = status.expect("exits").expect("wait");
    assert_eq!(status.code(), Some(7));
    assert_eq!(
        up.stdout.next_line().await.ok().flatten(),
        None,
        "no answer"
    );
}

#[tokio::test]
async fn progress_flood_sends_count_notifications_and_spawn_grandchild_returns_a_pid() {
    let mut up = StdioServer::fixture(&["--test-tools"]);
    let mut with_token = meta(json!({}));
    with_token["progressToken"] = json!(1);
    let id = up
        .call(
            "tools/call",
            json!({"name": "progress_flood", "arguments": {"count": 500}, "_meta": with_token}),
        )
        .await;
    let (seen, response) = up.response_to(&id).await;
    assert_eq!(seen.len(), 500);
    assert_eq!(text(&response["result"]), "flooded");

    let pid: i32 = text(&up.tool("spawn_grandchild", json!({})).await)
        .parse()
        .expect("a pid");
    // SAFETY: kill(2) on a pid this test's child just created; no memory is involved.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    up.finish().await;
}

#[tokio::test]
async fn exit_after_discover_answers_then_exits_zero() {
    let mut up = StdioServer::fixture(&[
        "--exit-after-discover",
        "--no-server-info",
        "--discover-delay-ms",
        "200",
    ]);
    let started = Instant::now();
    let result = up.result("server/discover", json!({})).await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(result.get("_meta").is_none(), "--no-server-info: {result}");
    let status = tokio::time::timeout(WAIT, up.child.wait())
        .await
        .expect("exits")
        .expect("wait");
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn discover_error_answers_discover_with_that_error() {
    let mut up = StdioServer::fixture(&["--discover-error", "-32601:Method not found"]);
    let error = up.error("server/discover", with_meta(json!({}))).await;
    assert_eq!(
        error,
        json!({"code": -32601, "message": "Method not found"})
    );
    up.finish().await;
}

#[tokio::test]
async fn the_trace_file_gets_every_received_line_verbatim() {
    let path = std::env::temp_dir().join(format!("mcp-example-trace-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let path_text = path.to_string_lossy().to_string();
    let mut up = StdioServer::fixture_with(&[], &[("MCP_FIXTURE_TRACE", &path_text)]);
    let line = r#"{"jsonrpc":"2.0", "id":"t","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    up.send_line(line).await;
    up.send_line("not json").await;
    let (seen, _) = up.response_to(&json!("t")).await;
    let mut rest = up.finish().await.0;
    rest.extend(seen);
    assert_eq!(rest.len(), 1, "one parse error: {rest:?}");
    let trace = std::fs::read_to_string(&path).expect("the trace exists");
    assert_eq!(trace, format!("{line}\nnot json\n"));
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn stderr_line_is_written_and_help_documents_the_flags() {
    let output = std::process::Command::new(common::server_bin())
        .args(["--stderr-line", "hello stderr"])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stderr), "hello stderr\n");
    assert!(output.stdout.is_empty());

    let help = std::process::Command::new(common::server_bin())
        .arg("--help")
        .output()
        .expect("run --help");
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--test-tools",
        "--discover-delay-ms",
        "--discover-error",
        "--no-server-info",
        "--exit-after-discover",
        "--stderr-line",
        "--instructions",
        "MCP_FIXTURE_TRACE",
        "spawn_grandchild",
        "end_listens",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}");
    }
}
