//! Every row of the lifecycle table, through the real binary over real pipes.

use crate::common;

use common::{Bridge, error_of};
use serde_json::{Value, json};
use std::time::Duration;

#[test]
fn ping_and_set_level_are_answered_before_initialize() {
    let mut b = Bridge::start(&[], &[]);
    assert_eq!(
        b.request(json!(1), "ping", json!({})),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    assert_eq!(
        b.request(json!(2), "logging/setLevel", json!({"level": "debug"})),
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    let bad = b.request(json!(3), "logging/setLevel", json!({"level": "loud"}));
    assert_eq!(error_of(&bad), (-32602, "invalid_params".into()));
    // No upstream was started for any of these.
    assert!(b.upstream_received().is_empty());
}

#[test]
fn server_discover_gets_method_not_found_in_every_state() {
    let mut b = Bridge::start(&[], &[]);
    let r = b.request(json!("d1"), "server/discover", json!({}));
    assert_eq!(error_of(&r), (-32601, "method_not_found".into()));
    b.initialize();
    let r = b.request(json!("d2"), "server/discover", json!({}));
    assert_eq!(error_of(&r), (-32601, "method_not_found".into()));
}

#[test]
fn a_request_before_initialize_gets_not_initialized() {
    let mut b = Bridge::start(&[], &[]);
    let r = b.request(json!(5), "tools/list", json!({}));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32600,
            "message": "Invalid request: the server is not initialized", "data": {"cause": "not_initialized"}}})
    );
}

#[test]
fn a_modern_request_before_initialize_gets_method_not_found() {
    let mut b = Bridge::start(&[], &[]);
    let r = b.request(
        json!(6),
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                         "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    assert_eq!(error_of(&r), (-32601, "method_not_found".into()));
}

#[test]
fn a_second_initialize_gets_already_initialized() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    let r = b.request(
        json!(9),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}),
    );
    assert_eq!(
        r["error"],
        json!({"code": -32600, "message": "Invalid request: the server is already initialized",
            "data": {"cause": "already_initialized"}})
    );
}

#[test]
fn while_initializing_requests_wait_for_the_era_and_a_ping_for_nothing() {
    // The discover waits for the gate, so the bridge stays initializing until the test is done
    // with its checks, however busy the machine is.
    let gate = common::scratch_dir("gate").join("open");
    let gate_arg = gate.to_string_lossy().into_owned();
    let mut b = Bridge::start(&[], &["--discover-gate", &gate_arg]);
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}});
    b.send_request(json!(0), "initialize", init.clone());
    // Held until the era of the upstream is known (a legacy upstream must get it after the
    // initialize).
    b.send_request(json!(2), "tools/list", json!({}));
    // Answered at once: a second initialize (it says that the first still runs), a ping, and
    // a request id in use.
    assert_eq!(
        b.request(json!(1), "initialize", init)["error"],
        json!({"code": -32600, "message": "Invalid request: initialize is still running",
            "data": {"cause": "already_initialized"}})
    );
    assert_eq!(b.request(json!(3), "ping", json!({}))["result"], json!({}));
    assert_eq!(
        error_of(&b.request(json!(2), "tools/list", json!({}))),
        (-32600, "duplicate_id".into())
    );
    std::fs::write(&gate, b"").expect("open the gate");
    let r = b.recv_response(&json!(0));
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    // Then the held request, served in the state the decision left.
    assert!(b.recv_response(&json!(2))["result"]["tools"].is_array());
    let order: Vec<Value> = b.seen.iter().map(|f| f["id"].clone()).collect();
    assert_eq!(
        order,
        vec![json!(1), json!(3), json!(2), json!(0), json!(2)]
    );
}

#[test]
fn requests_held_behind_initialize_count_against_the_in_flight_limit() {
    let gate = common::scratch_dir("gate").join("open");
    let gate_arg = gate.to_string_lossy().into_owned();
    let mut b = Bridge::start(&["--max-in-flight", "3"], &["--discover-gate", &gate_arg]);
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}});
    b.send_request(json!(0), "initialize", init);
    for i in 1..=3 {
        b.send_request(json!(i), "tools/list", json!({}));
    }
    // One more than the limit: answered at once.
    assert_eq!(
        b.request(json!(4), "tools/list", json!({}))["error"],
        json!({"code": -32603, "message": "Too many requests in flight",
            "data": {"cause": "too_many_requests", "detail": 3}})
    );
    // A held request the editor cancels never gets an answer.
    b.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}),
    );
    assert_eq!(
        b.seen.len(),
        1,
        "only the request over the limit was answered"
    );
    std::fs::write(&gate, b"").expect("open the gate");
    b.recv_response(&json!(0));
    for i in [1, 3] {
        assert!(
            b.recv_response(&json!(i))["result"]["tools"].is_array(),
            "{i}"
        );
    }
    assert_eq!(b.request(json!(5), "ping", json!({}))["result"], json!({}));
    assert!(b.seen.iter().all(|f| f["id"] != json!(2)), "{:#?}", b.seen);
}

const INIT: &str = r#"{"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}"#;

fn init_params() -> Value {
    serde_json::from_str(INIT).expect("initialize params")
}

/// A bridge whose discover waits until the test opens the gate (the file it returns), so it
/// stays initializing until the test is done with its checks, however busy the machine is.
fn gated(server_args: &[&str]) -> (Bridge, std::path::PathBuf) {
    let gate = common::scratch_dir("gate").join("open");
    let gate_arg = gate.to_string_lossy().into_owned();
    let mut args = vec!["--discover-gate", gate_arg.as_str()];
    args.extend_from_slice(server_args);
    (Bridge::start(&[], &args), gate)
}

/// Editors pipeline their first requests (2025-11-25 says a client SHOULD send only pings
/// before the initialize response; many do not): what comes while `initialize` runs is held
/// and handled, in order, once it completes. `ping` and a second `initialize` are answered at
/// once, a cancelled held request gets nothing.
#[test]
fn a_pipelined_initialized_and_requests_are_handled_in_order_once_initialize_completes() {
    let (mut b, gate) = gated(&[]);
    b.send_request(json!(0), "initialize", init_params());
    // Lines are handled in order: the bridge is initializing when the next one arrives.
    assert_eq!(
        error_of(&b.request(json!(1), "initialize", init_params())),
        (-32600, "already_initialized".into())
    );
    b.send_request(json!(2), "tools/list", json!({}));
    b.send_request(json!(3), "prompts/list", json!({}));
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    b.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}),
    );
    b.send_tools_call(json!(4), "echo", json!({"text": "hi"}));
    assert_eq!(b.request(json!(5), "ping", json!({}))["result"], json!({}));
    let ids: Vec<&Value> = b.seen.iter().filter_map(|f| f.get("id")).collect();
    assert_eq!(ids, [&json!(1), &json!(5)]);
    std::fs::write(&gate, b"").expect("open the gate");
    let r = b.recv_response(&json!(0));
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    assert!(b.recv_response(&json!(2))["result"]["tools"].is_array());
    assert_eq!(
        b.recv_response(&json!(4))["result"]["content"],
        json!([{"type": "text", "text": "hi"}])
    );
    // The held notifications/initialized started the listen stream; nothing for the cancelled 3.
    b.recv_notification("notifications/tools/list_changed");
    b.recv_for(Duration::from_millis(200));
    // The initialize response first, then the answers of the held requests (in the order
    // the upstream answers them).
    let ids: Vec<&Value> = b.seen.iter().filter_map(|f| f.get("id")).collect();
    assert_eq!(ids[..3], [&json!(1), &json!(5), &json!(0)]);
    let mut held: Vec<String> = ids[3..].iter().map(|id| id.to_string()).collect();
    held.sort();
    assert_eq!(held, ["2", "4"]);
    // The listen stream's request and the held requests go out on their own paths.
    let mut sent: Vec<String> = b
        .upstream_received()
        .iter()
        .filter_map(|v| v["method"].as_str().map(str::to_owned))
        .filter(|m| m != "subscriptions/listen")
        .collect();
    assert_eq!(sent.first().map(String::as_str), Some("server/discover"));
    sent.sort();
    assert_eq!(sent, ["server/discover", "tools/call", "tools/list"]);
}

/// When `initialize` fails, each request held behind it gets `not_initialized`.
#[test]
fn requests_held_behind_a_failed_initialize_get_not_initialized() {
    // A modern error fails the probe (any other would mean a legacy server).
    let (mut b, gate) = gated(&["--discover-error", "-32022:versions refused"]);
    b.send_request(json!(0), "initialize", init_params());
    b.send_request(json!(1), "tools/list", json!({}));
    assert_eq!(b.request(json!(2), "ping", json!({}))["result"], json!({}));
    std::fs::write(&gate, b"").expect("open the gate");
    assert_eq!(
        error_of(&b.recv_response(&json!(0))),
        (-32022, "discover_failed".into())
    );
    assert_eq!(
        b.recv_response(&json!(1)),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600,
            "message": "Invalid request: the server is not initialized", "data": {"cause": "not_initialized"}}})
    );
}

/// A signal while `initialize` runs: the editor still reads, so `initialize` and the requests
/// held behind it get `closed` with the signal before the bridge exits 0.
#[test]
fn a_signal_while_initializing_answers_initialize_with_closed() {
    let (mut b, _gate) = gated(&[]);
    b.send_request(json!(0), "initialize", init_params());
    b.send_request(json!(1), "tools/list", json!({}));
    b.wait_upstream(|v| v["method"] == "server/discover");
    b.signal("-TERM");
    let closed = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603,
            "message": "The bridge is closing", "data": {"cause": "closed", "detail": "SIGTERM"}}})
    };
    assert_eq!(b.recv_response(&json!(0)), closed(0));
    assert_eq!(b.recv_response(&json!(1)), closed(1));
    assert_eq!(b.recv_to_the_end(), Vec::<Value>::new());
    let exit = b.wait_exit(common::RECV_TIMEOUT).expect("the bridge exits");
    assert_eq!(exit.code(), Some(0));
}

/// A signal with a call in flight: the call is cancelled upstream and gets no response (the
/// rule of the end of the input), and one line says so, as at the end of the input.
#[test]
fn a_signal_counts_the_requests_it_cancels_without_a_response() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    b.send_tools_call(json!(7), "sleep", json!({"ms": 60000}));
    b.wait_upstream(|v| v["method"] == "tools/call");
    b.signal("-TERM");
    assert_eq!(b.recv_to_the_end(), Vec::<Value>::new());
    let exit = b.wait_exit(common::RECV_TIMEOUT).expect("the bridge exits");
    assert_eq!(exit.code(), Some(0));
    b.wait_stderr(
        "mcp-bridge: frontend: info: the stop at SIGTERM cancelled 1 request in flight: it gets no response\n",
    );
}

#[test]
fn the_initialize_result_comes_from_discover() {
    let mut b = Bridge::start(&[], &["--instructions", "Use the echo tool."]);
    let r = b.initialize_with(
        json!({"roots": {"listChanged": true}, "elicitation": {"form": {}},
        "tasks": {"list": {}}, "sampling": {}}),
    );
    let result = &r["result"];
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(result["serverInfo"]["name"], "mcp-fixture-server");
    assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(result["instructions"], "Use the echo tool.");
    let caps = result["capabilities"]
        .as_object()
        .expect("capabilities object");
    assert!(
        caps.contains_key("tools")
            && caps.contains_key("prompts")
            && caps.contains_key("resources")
    );
    assert!(!caps.contains_key("tasks") && !caps.contains_key("extensions"));
    // The upstream got server/discover with the required 2026-07-28 _meta, the capabilities in
    // the 2026-07-28 shape (no roots.listChanged, no tasks) and the bridge's clientInfo.
    let discover = b.wait_upstream(|v| v["method"] == "server/discover");
    let meta = &discover["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({"roots": {}, "sampling": {}, "elicitation": {"form": {}}})
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"]["name"],
        "mcp-bridge"
    );
}

#[test]
fn without_server_info_the_fallback_name_is_the_name_option_or_the_command() {
    let mut b = Bridge::start(&[], &["--no-server-info"]);
    let r = b.initialize();
    // The file name of the command, `common::server_bin()`.
    assert_eq!(
        r["result"]["serverInfo"],
        json!({"name": "mcp-fixture-server", "version": env!("CARGO_PKG_VERSION")})
    );
    let mut b = Bridge::start(&["--name", "my-files"], &["--no-server-info"]);
    assert_eq!(b.initialize()["result"]["serverInfo"]["name"], "my-files");
}

#[test]
fn a_failed_discover_returns_to_awaiting_initialize() {
    // A modern error (here -32022) fails the probe; any other error would mean a legacy
    // server (tests/era_fallback.rs).
    let mut b = Bridge::start(&[], &["--discover-error", "-32022:versions refused"]);
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}});
    let r = b.request(json!(0), "initialize", init.clone());
    assert_eq!(
        r["error"],
        json!({"code": -32022, "message": "The upstream server did not complete server/discover",
               "data": {"cause": "discover_failed", "detail": "versions refused"}})
    );
    // The state went back: a new initialize starts the upstream again (and fails the same way).
    let r = b.request(json!(1), "initialize", init);
    assert_eq!(error_of(&r), (-32022, "discover_failed".into()));
    assert_eq!(
        error_of(&b.request(json!(2), "tools/list", json!({}))),
        (-32600, "not_initialized".into())
    );
    let discovers = b
        .upstream_received()
        .iter()
        .filter(|v| v["method"] == "server/discover")
        .count();
    assert_eq!(discovers, 2);
}

// A discover that does not answer in time means a legacy server (2026-07-28 basic/versioning):
// tests/it/era_fallback.rs,
// a_modern_server_too_slow_for_discover_is_taken_for_legacy_and_the_late_answer_says_so.

#[test]
fn a_command_that_cannot_start_gets_spawn_failed_and_the_bridge_keeps_serving() {
    let mut b = Bridge::start_cmd(&[], &["/nonexistent/mcp-server".to_string()]);
    let r = b.request(
        json!(0),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}),
    );
    assert_eq!(error_of(&r), (-32603, "spawn_failed".into()));
    assert_eq!(b.request(json!(1), "ping", json!({}))["result"], json!({}));
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(5)), Some(0));
}

#[test]
fn unknown_methods_get_method_not_found_when_ready() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    for (i, m) in ["tasks/list", "sampling/createMessage", "server/discover"]
        .iter()
        .enumerate()
    {
        let r = b.request(json!(100 + i), m, json!({"uri": "example://readme"}));
        assert_eq!(error_of(&r), (-32601, "method_not_found".into()), "{m}");
    }
}

#[test]
fn an_initialize_whose_protocol_version_is_no_string_gets_invalid_params_and_a_good_one_follows() {
    let mut b = Bridge::start_cmd(&[], &[common::example_server_bin().to_string()]);
    for (id, version) in [(1, json!(5)), (2, json!(null)), (3, json!(["2025-11-25"]))] {
        let r = b.request(
            json!(id),
            "initialize",
            json!({"protocolVersion": version, "capabilities": {},
                   "clientInfo": {"name": "me", "version": "1"}}),
        );
        assert_eq!(
            r,
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602,
                "message": "Invalid params", "data": {"cause": "invalid_params",
                    "detail": "params.protocolVersion must be a string"}}})
        );
    }
    // The bridge still waits for its initialize.
    let r = b.initialize();
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
}
