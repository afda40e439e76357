//! Black-box tests of the embedded bridge: the example binary `examples/embedded/main.rs` (one
//! 2026-07-28 server, `serve_stdio_auto`) over real pipes, no upstream process. As a
//! 2025-11-25 client (`initialize` first: the legacy path, every frame validated against the
//! 2025-11-25 schema) and as a 2026-07-28 client (any other first request: the modern path,
//! every frame validated against the 2026-07-28 schema).

use crate::common;

use common::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
const SUB: &str = "io.modelcontextprotocol/subscriptionId";

fn start(revision: Revision) -> Bridge {
    Bridge::start_program(&embedded_example_bin().to_string_lossy(), revision)
}

fn info() -> Value {
    json!({"name": "embedded-example", "version": "1.0.0"})
}

/// The `_meta` every 2026-07-28 request carries.
fn meta(capabilities: Value) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": capabilities})
}

/// `params` with the 2026-07-28 `_meta` added.
fn modern(mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = meta(capabilities);
    params
}

/// A result of the modern path: `resultType: complete`, the body, then `_meta.serverInfo`.
fn complete(body: Value) -> Value {
    let mut result = json!({"resultType": "complete"});
    if let (Some(r), Some(b)) = (result.as_object_mut(), body.as_object()) {
        r.extend(b.clone());
        r.insert("_meta".into(), json!({SERVER_INFO: info()}));
    }
    result
}

/// A cacheable result of the modern path (`ttlMs`, `cacheScope` before `_meta`).
fn cacheable(body: Value) -> Value {
    let mut body = body;
    body["ttlMs"] = json!(60000);
    body["cacheScope"] = json!("public");
    complete(body)
}

fn tools() -> Value {
    json!([
        // Generated from the example's `struct Echo { text: String }`.
        {"name": "echo", "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
        {"name": "ask_name", "inputSchema": {"type": "object"}},
        {"name": "add_tool", "inputSchema": {"type": "object"}},
    ])
}

fn elicitation_params() -> Value {
    json!({"message": "Your name?", "requestedSchema": {"type": "object",
        "properties": {"name": {"type": "string"}}, "required": ["name"]}})
}

fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

// ---- the legacy path (a 2025-11-25 client) ----

#[test]
fn legacy_initialize_then_tools_prompts_and_resources_as_the_bridge_serves_them() {
    let mut b = start(Revision::Legacy);
    let r = b.initialize();
    assert_eq!(
        r["result"],
        json!({"protocolVersion": "2025-11-25",
               "capabilities": {"logging": {}, "tools": {"listChanged": true},
                   "prompts": {"listChanged": true},
                   "resources": {"listChanged": true, "subscribe": true}},
               "serverInfo": info()})
    );
    // The listen stream toward the in-process server is up: one change per declared list.
    assert_eq!(
        b.opening_events,
        ["tools", "prompts", "resources"].map(
            |l| json!({"jsonrpc": "2.0", "method": format!("notifications/{l}/list_changed")})
        )
    );
    let r = b.request(json!(1), "tools/list", json!({}));
    assert_eq!(r["result"], json!({"tools": tools()}));
    let r = b.request(
        json!(2),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "über ✓"}}),
    );
    assert_eq!(r["result"], text_result("über ✓"));
    let r = b.request(json!(3), "prompts/list", json!({}));
    assert_eq!(r["result"], json!({"prompts": [{"name": "greet"}]}));
    let r = b.request(json!(4), "prompts/get", json!({"name": "greet"}));
    assert_eq!(
        r["result"],
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Say hi."}}]})
    );
    let r = b.request(json!(5), "resources/list", json!({}));
    assert_eq!(
        r["result"],
        json!({"resources": [{"name": "readme", "uri": "example://readme"}]})
    );
    let r = b.request(
        json!(6),
        "resources/read",
        json!({"uri": "example://readme"}),
    );
    assert_eq!(
        r["result"],
        json!({"contents": [{"uri": "example://readme", "text": "Hi."}]})
    );
    let r = b.request(json!(7), "ping", json!({}));
    assert_eq!(r["result"], json!({}));
    assert!(b.recv_for(Duration::from_millis(200)).is_empty());
}

#[test]
fn legacy_an_input_request_becomes_an_elicitation_of_the_editor_and_the_call_completes() {
    let mut b = start(Revision::Legacy);
    b.initialize_with(json!({"elicitation": {}}));
    b.send_request(json!(1), "tools/call", json!({"name": "ask_name"}));
    let ask = b.recv();
    let mut params = elicitation_params();
    params["mode"] = json!("form");
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert_eq!(ask["params"], params);
    let ask_id = ask["id"].clone();
    b.send(&json!({"jsonrpc": "2.0", "id": ask_id,
                   "result": {"action": "accept", "content": {"name": "Ada"}}}));
    let r = b.recv_response(&json!(1));
    assert_eq!(r["result"], text_result("Hi, Ada!"));
}

/// A server of the test whose one tool, `again`, asks the user once more at each answer: the
/// bridge ends the call after `input::MAX_ROUNDS` (10) rounds with its `too_many_rounds`,
/// whose message names the server behind it.
fn server_that_asks_for_ever() -> mcp_bridge::server::Server {
    use mcp_bridge::server::{Outcome, Server, ToolDef, elicit_form};
    Server::builder("asker", "1.0.0")
        .tool(ToolDef::no_input("again"), |_, _| async {
            Ok(Outcome::ask("again", elicit_form("Again?", &["again"])))
        })
        .build()
}

/// The server is in the process of the bridge (`serve_stdio_auto`, here on in-memory pipes):
/// the bridge's errors name no upstream server.
#[test]
fn legacy_an_error_of_the_bridge_names_the_server_not_an_upstream_server() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (mut to_server, server_input) = tokio::io::duplex(1 << 16);
    let (server_output, from_server) = tokio::io::duplex(1 << 16);
    let serving = std::thread::spawn(move || {
        mcp_bridge::embed::serve_stdio_auto(
            server_that_asks_for_ever(),
            server_input,
            server_output,
            mcp_bridge::embed::AutoOptions::default(),
        )
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let error = runtime.block_on(async move {
        let mut lines = BufReader::new(from_server).lines();
        let requests = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "it", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "again"}}),
        ];
        for request in requests {
            let line = format!("{request}\n");
            to_server
                .write_all(line.as_bytes())
                .await
                .expect("write a request");
        }
        let read = async {
            while let Ok(Some(line)) = lines.next_line().await {
                let frame: Value = serde_json::from_str(&line).expect("a JSON line");
                if frame["id"] == 2 {
                    return frame["error"].clone();
                }
                if frame["method"] == "elicitation/create" {
                    let answer = json!({"jsonrpc": "2.0", "id": frame["id"],
                        "result": {"action": "accept", "content": {"again": "yes"}}});
                    let line = format!("{answer}\n");
                    to_server
                        .write_all(line.as_bytes())
                        .await
                        .expect("write an answer");
                }
            }
            Value::Null
        };
        let error = tokio::time::timeout(RECV_TIMEOUT, read)
            .await
            .expect("the answer to tools/call");
        drop(to_server);
        error
    });
    assert_eq!(
        error,
        json!({"code": -32603, "message": "The server asked for input too many times",
            "data": {"cause": "too_many_rounds", "detail": 10}})
    );
    let served = serving.join().expect("the server's thread");
    assert!(served.is_ok(), "{served:?}");
}

#[test]
fn legacy_a_list_change_that_a_call_publishes_reaches_the_editor_before_its_result() {
    let mut b = start(Revision::Legacy);
    b.initialize();
    for i in 0..20i64 {
        b.send_request(json!(i), "tools/call", json!({"name": "add_tool"}));
        assert_eq!(
            b.recv(),
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            "call {i}"
        );
        let r = b.recv();
        assert_eq!(r["id"], json!(i));
        assert_eq!(r["result"], text_result("The tool list changed."));
    }
}

#[test]
fn legacy_bad_lines_and_modern_requests_get_the_bridges_error_table() {
    let mut b = start(Revision::Legacy);
    b.initialize();
    b.send_raw(b"this is not json\n");
    assert_eq!(
        b.recv(),
        json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error",
               "data": {"cause": "parse_error"}}})
    );
    let r = b.request(json!(1), "server/discover", json!({}));
    assert_eq!(error_of(&r).0, -32601);
    assert_eq!(r["error"]["data"]["cause"], "method_not_found");
    let r = b.request(
        json!(2),
        "initialize",
        json!({"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}),
    );
    assert_eq!(error_of(&r).0, -32600);
    assert_eq!(r["error"]["data"]["cause"], "already_initialized");
    let r = b.request(
        json!(3),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "ok"}}),
    );
    assert_eq!(r["result"], text_result("ok"));
}

/// Bytes of the text of the large `echo` call: more than the 16 MiB of the queue toward the
/// in-process server (`UPSTREAM_QUEUE_MAX_BYTES`), which an empty queue takes whole.
const LARGE_ECHO_TEXT_BYTES: usize = 20_000_000;
/// Small `echo` calls written right behind the large one.
const SMALL_CALLS_BEHIND: i64 = 5;

#[test]
fn legacy_small_calls_right_behind_a_call_over_the_queue_bound_all_get_their_results() {
    let mut b = start(Revision::Legacy);
    b.initialize();
    let large = "x".repeat(LARGE_ECHO_TEXT_BYTES);
    // One write: the small calls reach the bridge while the large one is still on its way
    // to the in-process server.
    let mut calls = vec![json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": large}}})];
    for id in 2..2 + SMALL_CALLS_BEHIND {
        calls.push(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": format!("small {id}")}}}));
    }
    b.send_at_once(&calls);
    for id in 2..2 + SMALL_CALLS_BEHIND {
        let r = b.recv_response(&json!(id));
        assert_eq!(
            r,
            json!({"jsonrpc": "2.0", "id": id, "result": text_result(&format!("small {id}"))})
        );
    }
    let r = b.recv_response(&json!(1));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 1, "result": text_result(&large)})
    );
}

#[test]
fn legacy_end_of_input_ends_the_process_with_0_without_the_watchdog() {
    let mut b = start(Revision::Legacy);
    b.initialize();
    let started = Instant::now();
    b.close_stdin();
    let status = b.wait_exit(RECV_TIMEOUT).expect("the example exits");
    assert_eq!(status.code(), Some(0));
    // The bridge's watchdog (42 s) is not armed; the cascade alone ends it.
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert!(b.recv_to_the_end().is_empty());
}

#[test]
fn a_discover_before_initialize_is_answered_and_initialize_still_selects_the_legacy_path() {
    let mut b = start(Revision::Modern);
    let r = b.request(
        json!("d"),
        "server/discover",
        json!({"_meta": meta(json!({}))}),
    );
    assert_eq!(r["result"]["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(r["result"]["_meta"][SERVER_INFO], info());
    b.revision = Revision::Legacy;
    let r = b.initialize();
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(r["result"]["serverInfo"], info());
    let r = b.request(
        json!(1),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x"}}),
    );
    assert_eq!(r["result"], text_result("x"));
}

// ---- the modern path (a 2026-07-28 client) ----

#[test]
fn modern_discover_tools_prompts_and_resources() {
    let mut b = start(Revision::Modern);
    let r = b.request(
        json!(1),
        "server/discover",
        json!({"_meta": meta(json!({}))}),
    );
    assert_eq!(
        r["result"],
        cacheable(json!({"supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {"listChanged": true}, "prompts": {"listChanged": true},
                "resources": {"subscribe": true, "listChanged": true}, "logging": {}}}))
    );
    let r = b.request(json!(2), "tools/list", modern(json!({}), json!({})));
    assert_eq!(r["result"], cacheable(json!({"tools": tools()})));
    let r = b.request(
        json!(3),
        "tools/call",
        modern(
            json!({"name": "echo", "arguments": {"text": "hi"}}),
            json!({}),
        ),
    );
    assert_eq!(r["result"], complete(text_result("hi")));
    let r = b.request(json!(4), "prompts/list", modern(json!({}), json!({})));
    assert_eq!(
        r["result"],
        cacheable(json!({"prompts": [{"name": "greet"}]}))
    );
    let r = b.request(
        json!(5),
        "prompts/get",
        modern(json!({"name": "greet"}), json!({})),
    );
    assert_eq!(
        r["result"],
        complete(json!({"messages": [{"role": "user",
            "content": {"type": "text", "text": "Say hi."}}]}))
    );
    let r = b.request(json!(6), "resources/list", modern(json!({}), json!({})));
    assert_eq!(
        r["result"],
        cacheable(json!({"resources": [{"name": "readme", "uri": "example://readme"}]}))
    );
    let r = b.request(
        json!(7),
        "resources/read",
        modern(json!({"uri": "example://readme"}), json!({})),
    );
    assert_eq!(
        r["result"],
        cacheable(json!({"contents": [{"uri": "example://readme", "text": "Hi."}]}))
    );
    // `initialize` after the modern path was selected is the server's: it speaks only
    // 2026-07-28 (UnsupportedProtocolVersion).
    let r = b.request(
        json!(8),
        "initialize",
        json!({"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}),
    );
    assert_eq!(error_of(&r).0, -32022);
    assert_eq!(
        r["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "2025-11-25"})
    );
}

#[test]
fn modern_an_input_request_and_its_retry() {
    let mut b = start(Revision::Modern);
    let caps = json!({"elicitation": {"form": {}}});
    let r = b.request(
        json!(1),
        "tools/call",
        modern(json!({"name": "ask_name"}), caps.clone()),
    );
    assert_eq!(
        r["result"],
        json!({"resultType": "input_required",
               "inputRequests": {"name": {"method": "elicitation/create",
                   "params": elicitation_params()}},
               "_meta": {SERVER_INFO: info()}})
    );
    let retry = modern(
        json!({"name": "ask_name", "inputResponses": {"name":
            {"action": "accept", "content": {"name": "Ada"}}}}),
        caps,
    );
    let r = b.request(json!(2), "tools/call", retry);
    assert_eq!(r["result"], complete(text_result("Hi, Ada!")));
    // Without the capability the request is refused (-32021) instead.
    let r = b.request(
        json!(3),
        "tools/call",
        modern(json!({"name": "ask_name"}), json!({})),
    );
    assert_eq!(error_of(&r).0, -32021);
}

#[test]
fn modern_a_list_change_of_a_call_comes_on_the_listen_stream_before_the_result() {
    let mut b = start(Revision::Modern);
    b.send_request(
        json!("L"),
        "subscriptions/listen",
        modern(
            json!({"notifications": {"toolsListChanged": true}}),
            json!({}),
        ),
    );
    assert_eq!(
        b.recv(),
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
               "params": {"_meta": {SUB: "L"}, "notifications": {"toolsListChanged": true}}})
    );
    for i in 0..20i64 {
        b.send_request(
            json!(i),
            "tools/call",
            modern(json!({"name": "add_tool"}), json!({})),
        );
        assert_eq!(
            b.recv(),
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                   "params": {"_meta": {SUB: "L"}}}),
            "call {i}"
        );
        let r = b.recv();
        assert_eq!(r["id"], json!(i));
        assert_eq!(r["result"], complete(text_result("The tool list changed.")));
    }
    // At the end of the input the open listen ends with its result, and the process exits 0.
    b.close_stdin();
    let end = b.recv_response(&json!("L"));
    assert_eq!(
        end["result"],
        json!({"resultType": "complete", "_meta": {SUB: "L", SERVER_INFO: info()}})
    );
    assert_eq!(b.wait_exit(RECV_TIMEOUT).and_then(|s| s.code()), Some(0));
}

#[test]
fn modern_the_request_past_the_in_flight_limit_is_refused_at_once() {
    const LIMIT: usize = 256;
    let mut b = start(Revision::Modern);
    // Open listen streams stay in flight: 256 of them fill every slot.
    for i in 0..LIMIT {
        b.send_request(
            json!(format!("L{i}")),
            "subscriptions/listen",
            modern(
                json!({"notifications": {"toolsListChanged": true}}),
                json!({}),
            ),
        );
    }
    for _ in 0..LIMIT {
        let ack = b.recv();
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{ack}"
        );
    }
    let r = b.request(
        json!("over"),
        "tools/call",
        modern(
            json!({"name": "echo", "arguments": {"text": "x"}}),
            json!({}),
        ),
    );
    assert_eq!(
        r["error"],
        json!({"code": -32603, "message": "Too many requests in flight",
               "data": {"cause": "too_many_requests", "detail": LIMIT}})
    );
}

#[test]
fn modern_bad_lines_get_the_error_table_and_the_path_stays_modern() {
    let mut b = start(Revision::Modern);
    b.send_raw(b"this is not json\n");
    assert_eq!(
        b.recv(),
        json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error",
               "data": {"cause": "parse_error"}}})
    );
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{{"x":{}1{}}}}}"#,
        "[".repeat(70),
        "]".repeat(70)
    );
    b.send_raw_request(&json!(9), "tools/list", deep.as_bytes());
    let r = b.recv_response(&json!(9));
    assert_eq!(
        r["error"],
        json!({"code": -32600, "message": "Invalid request: the message is nested too deeply",
               "data": {"cause": "too_deep", "detail": 64}})
    );
    let r = b.request(json!(1), "tools/list", modern(json!({}), json!({})));
    assert_eq!(r["result"], cacheable(json!({"tools": tools()})));
    let call = json!({"name": "echo", "arguments": {"wrong": "x"}});
    // A typed tool's bad arguments are a tool execution error the model sees (MCP 2025-11-25
    // server/tools), not a JSON-RPC error.
    let r = b.request(json!(2), "tools/call", modern(call, json!({})));
    assert_eq!(
        (
            r["result"]["content"].clone(),
            r["result"]["isError"].clone()
        ),
        (
            json!([{"type": "text", "text": "Invalid arguments: missing field `text`"}]),
            json!(true)
        )
    );
}

// ---- the README's minimal server (`examples/minimal.rs`) ----

/// The minimal example's one tool, as both paths list it.
fn adder_tools() -> Value {
    json!([{"name": "add", "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object", "properties": {"a": {"type": "integer", "format": "int64"},
            "b": {"type": "integer", "format": "int64"}}, "required": ["a", "b"]}}])
}

#[test]
fn the_minimal_example_serves_its_tool_to_clients_of_both_revisions() {
    let program = minimal_example_bin();
    let mut b = Bridge::start_program(&program.to_string_lossy(), Revision::Legacy);
    let r = b.initialize();
    assert_eq!(
        r["result"],
        json!({"protocolVersion": "2025-11-25",
               "capabilities": {"logging": {}, "tools": {"listChanged": true}},
               "serverInfo": {"name": "adder", "version": "1.0.0"}})
    );
    let r = b.request(json!(1), "tools/list", json!({}));
    assert_eq!(r["result"], json!({"tools": adder_tools()}));
    let r = b.request(
        json!(2),
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 40}}),
    );
    assert_eq!(r["result"], text_result("42"));

    let mut b = Bridge::start_program(&program.to_string_lossy(), Revision::Modern);
    let r = b.request(
        json!(1),
        "tools/call",
        modern(
            json!({"name": "add", "arguments": {"a": -1, "b": 1}}),
            json!({}),
        ),
    );
    assert_eq!(
        r["result"],
        json!({"resultType": "complete", "content": [{"type": "text", "text": "0"}],
               "_meta": {SERVER_INFO: {"name": "adder", "version": "1.0.0"}}})
    );
}

/// The bytes of a string argument a tester sent where a number belongs.
const HUGE_ARGUMENT_BYTES: usize = 5_000_000;

/// What an error shows of a long input: its first bytes (`protocol::wire::excerpt::EXCERPT_BYTES`).
const SHOWN_INPUT_BYTES: usize = 120;

#[test]
fn an_argument_of_the_wrong_type_is_echoed_bounded_and_a_number_out_of_range_says_what_was_expected()
 {
    let program = minimal_example_bin();
    let mut b = Bridge::start_program(&program.to_string_lossy(), Revision::Modern);
    let huge = "x".repeat(HUGE_ARGUMENT_BYTES);
    let shown = "x".repeat(SHOWN_INPUT_BYTES);
    let i64_range = "an integer from -9223372036854775808 to 9223372036854775807";
    let cases = [
        (
            json!({"a": huge, "b": 1}),
            format!(
                "Invalid arguments: invalid type: string \"{shown}\"… ({HUGE_ARGUMENT_BYTES} \
                 bytes), expected i64"
            ),
        ),
        (
            json!({"a": 1, "b": 1.5}),
            format!("Invalid arguments: b: 1.5 is not {i64_range}"),
        ),
        (
            json!({"a": 9_223_372_036_854_775_808_u64, "b": 1}),
            format!("Invalid arguments: a: 9223372036854775808 is not {i64_range}"),
        ),
    ];
    for (n, (arguments, expected)) in cases.into_iter().enumerate() {
        let r = b.request(
            json!(n),
            "tools/call",
            modern(json!({"name": "add", "arguments": arguments}), json!({})),
        );
        assert_eq!(
            r["result"],
            json!({"resultType": "complete", "isError": true,
                "content": [{"type": "text", "text": expected}],
                "_meta": {SERVER_INFO: {"name": "adder", "version": "1.0.0"}}})
        );
    }
}

#[test]
fn the_readme_quotes_the_minimal_example_whole() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = std::fs::read_to_string(root.join("examples/minimal.rs")).expect("the example");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("the README");
    let quoted = format!("```rust\n{example}```\n");
    assert!(
        readme.contains(&quoted),
        "README.md does not quote examples/minimal.rs whole:\n{example}"
    );
    // At most 15 lines of code: what a user copies stays short.
    let code = example
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("//"))
        .count();
    assert!(code <= 15, "{code} lines of code");
}
