//! The era fallback over HTTP: the real binary in the URL form in front of a
//! scripted 2025-11-25 Streamable HTTP server (`common/legacy_http_fixture.rs`, axum). What
//! the editor gets and what the server receives (verbs, headers, bodies, the status it
//! answered): the session id on every request after `initialize` and on the DELETE at close,
//! the negotiated `MCP-Protocol-Version`, `202` for notifications and responses, a stateless
//! server, the GET stream refused (405) or bringing a server request and a notification, a
//! `404` on the session (a new session, and the end at a second one), resumable streams
//! (`Last-Event-ID`), a cancel as `notifications/cancelled`, and a modern error that never
//! falls back.

use crate::common;
use crate::common::legacy_http_fixture;

use common::{Bridge, RECV_TIMEOUT, wait_until};
use legacy_http_fixture::{LegacyFixture, Script};
use mcp_test_fixtures::recording::Seen;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

const ACCEPT_BOTH: &str = "application/json, text/event-stream";

fn initialize_params() -> Value {
    json!({"protocolVersion": "2025-11-25", "capabilities": {},
           "clientInfo": {"name": "blackbox-test", "version": "1.0.0"}})
}

fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

/// The fixture's `initialize` result, as the editor must get it (unchanged).
fn initialize_result() -> Value {
    json!({"protocolVersion": "2025-11-25",
           "capabilities": {"tools": {"listChanged": true}},
           "serverInfo": {"name": "legacy-http-fixture", "version": "1.0.0"}})
}

/// The headers of a request that the MCP transports define (`accept`, `content-type`,
/// `authorization` and every `mcp-*`), by name.
fn mcp_headers(s: &Seen) -> Vec<(String, String)> {
    let mut h: Vec<(String, String)> = s
        .headers
        .iter()
        .filter(|(n, _)| {
            n.starts_with("mcp-")
                || matches!(n.as_str(), "accept" | "content-type" | "authorization")
        })
        .cloned()
        .collect();
    h.sort();
    h
}

fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    v.sort();
    v
}

/// What the fixture received, as (verb, method, status).
fn trail(f: &LegacyFixture) -> Vec<(String, String, u16)> {
    f.seen()
        .iter()
        .map(|s| (s.verb.clone(), s.method().to_string(), s.status))
        .collect()
}

fn step(verb: &str, method: &str, status: u16) -> (String, String, u16) {
    (verb.to_string(), method.to_string(), status)
}

/// `initialize` (answered unchanged) and `notifications/initialized`.
fn start_session(b: &mut Bridge) {
    let init = b.request(json!(0), "initialize", initialize_params());
    assert_eq!(
        init,
        json!({"jsonrpc": "2.0", "id": 0, "result": initialize_result()})
    );
    b.send(&initialized());
}

/// The POSTs the fixture got after `server/discover`, in order: (verb, method, status).
fn posts_after_discover(f: &LegacyFixture) -> Vec<(String, String, u16)> {
    trail(f)
        .into_iter()
        .filter(|(verb, m, _)| verb == "POST" && m != "server/discover")
        .collect()
}

/// The fixture with `script`, the bridge in front of it, the session started, and the GET
/// stream asked for (refused, or open, as the script says).
fn started(script: Script) -> (LegacyFixture, Bridge) {
    let f = LegacyFixture::start(script);
    let mut b = Bridge::start_url(&[], &f.url(), &[]);
    start_session(&mut b);
    f.wait_for(RECV_TIMEOUT, |s| s.verb == "GET");
    (f, b)
}

/// The `mcp-*` and content headers of every request after `initialize` with a body: the
/// session id and the negotiated version.
fn headers_after_initialize() -> Vec<(String, String)> {
    h(&[
        ("accept", ACCEPT_BOTH),
        ("content-type", "application/json"),
        ("mcp-protocol-version", "2025-11-25"),
        ("mcp-session-id", "sess-1"),
    ])
}

/// Calls `slow` (never answered, its SSE response held open) and waits until the fixture has it.
fn slow_call_in_flight(b: &mut Bridge, f: &LegacyFixture, id: i64) {
    b.send_tools_call(json!(id), "slow", json!({}));
    f.wait_for(RECV_TIMEOUT, |s| s.body["id"] == json!(id));
}

/// Waits until the client closed exactly one of the fixture's SSE streams.
fn one_stream_closed(f: &LegacyFixture) -> bool {
    wait_until(|| f.state.streams_closed.load(Ordering::SeqCst) == 1)
}

/// An editor that does not wait for the `initialize` result (a pipe of lines): its
/// `notifications/initialized` and `tools/list` wait for the session id of the `initialize`
/// response, as they would on stdio, instead of going without it (`400` from a server with
/// sessions).
#[test]
fn the_messages_sent_before_the_initialize_result_wait_for_its_session() {
    let f = LegacyFixture::start(Script {
        initialize_delay: std::time::Duration::from_millis(300),
        ..Script::default()
    });
    let mut b = Bridge::start_url(&[], &f.url(), &[]);
    b.send(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize_params()}),
    );
    b.send(&initialized());
    b.send(&json!({"jsonrpc": "2.0", "id": "l", "method": "tools/list", "params": {}}));
    assert_eq!(
        b.recv_response(&json!(0)),
        json!({"jsonrpc": "2.0", "id": 0, "result": initialize_result()})
    );
    assert_eq!(
        b.recv_response(&json!("l"))["result"]["tools"][0],
        json!({"name": "echo", "inputSchema": {"type": "object"}})
    );
    // `tools/list` goes after the `202` of `notifications/initialized`.
    assert_eq!(
        posts_after_discover(&f),
        vec![
            step("POST", "initialize", 200),
            step("POST", "notifications/initialized", 202),
            step("POST", "tools/list", 200),
        ]
    );
}

/// Each POST is a connection of its own, so a request sent beside `notifications/initialized`
/// could reach the server before it, and servers refuse a request before it (the Python SDK's
/// session: "Received request before initialization was complete"): the request goes once
/// the server has answered the notification with `202`, as the SDK clients send it.
#[test]
fn a_request_after_notifications_initialized_waits_for_its_202() {
    let f = LegacyFixture::start(Script {
        initialized_delay: std::time::Duration::from_millis(500),
        ..Script::default()
    });
    let mut b = Bridge::start_url(&[], &f.url(), &[]);
    start_session(&mut b);
    assert_eq!(
        b.tools_call(json!(1), "echo", json!({"text": "after"})),
        json!({"jsonrpc": "2.0", "id": 1,
            "result": {"content": [{"type": "text", "text": "after"}]}})
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
    assert_eq!(
        posts_after_discover(&f),
        vec![
            step("POST", "initialize", 200),
            step("POST", "notifications/initialized", 202),
            step("POST", "tools/call", 200),
        ]
    );
}

#[test]
fn the_session_and_the_negotiated_version_go_on_every_request_and_the_session_gets_a_delete() {
    // The GET stream is refused: the bridge goes on.
    let (f, mut b) = started(Script::default());
    let list = json!({"jsonrpc": "2.0", "id": "l", "method": "tools/list", "params": {}});
    b.send(&list);
    assert_eq!(
        b.recv_response(&json!("l")),
        json!({"jsonrpc": "2.0", "id": "l", "result": {"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"name": "slow", "inputSchema": {"type": "object"}}]}})
    );
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hé"}}});
    b.send(&call);
    assert_eq!(
        b.recv_response(&json!(2)),
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "hé"}]}})
    );
    b.wait_stderr("speaks 2025-11-25");
    assert!(
        b.stderr_text().contains(
            "the upstream server speaks 2025-11-25 or earlier (it answered server/discover with HTTP 400): passing the 2025-11-25 protocol through unchanged"
        ),
        "{}",
        b.stderr_text()
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));

    assert_eq!(
        trail(&f),
        vec![
            step("POST", "server/discover", 400),
            step("POST", "initialize", 200),
            step("POST", "notifications/initialized", 202),
            step("GET", "", 405),
            step("POST", "tools/list", 200),
            step("POST", "tools/call", 200),
            step("DELETE", "", 200),
        ],
        "one GET only: a 405 is never retried"
    );
    let seen = f.seen();
    // initialize: no session and no version yet, no 2026-07-28 header.
    assert_eq!(
        mcp_headers(&seen[1]),
        h(&[
            ("accept", ACCEPT_BOTH),
            ("content-type", "application/json")
        ])
    );
    assert_eq!(seen[1].body["params"], initialize_params());
    let after = headers_after_initialize();
    for (i, want) in [(2, initialized()), (4, list), (5, call)] {
        assert_eq!(mcp_headers(&seen[i]), after, "{:?}", seen[i]);
        assert_eq!(seen[i].body, want);
    }
    assert_eq!(
        mcp_headers(&seen[3]),
        h(&[
            ("accept", "text/event-stream"),
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-session-id", "sess-1"),
        ])
    );
    assert_eq!(
        mcp_headers(&seen[6]),
        h(&[
            ("accept", ACCEPT_BOTH),
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-session-id", "sess-1"),
        ])
    );
    // The notification's 202 brought the editor nothing: only the two responses came.
    assert_eq!(
        b.seen
            .iter()
            .filter(|f| f.get("id").is_none())
            .collect::<Vec<_>>(),
        Vec::<&Value>::new()
    );
}

#[test]
fn a_server_without_a_session_gets_none_and_no_delete() {
    let (f, mut b) = started(Script {
        session: None,
        ..Script::default()
    });
    let r = b.tools_call(json!(3), "echo", json!({"text": "x"}));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "x"}]}})
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
    // A stateless 2025-11-25 server refuses the 2026-07-28 version with a 400 of its own.
    assert_eq!(
        trail(&f),
        vec![
            step("POST", "server/discover", 400),
            step("POST", "initialize", 200),
            step("POST", "notifications/initialized", 202),
            step("GET", "", 405),
            step("POST", "tools/call", 200),
        ]
    );
    let seen = f.seen();
    for s in &seen {
        assert_eq!(s.header("mcp-session-id"), None, "{s:?}");
    }
    for s in &seen[2..] {
        assert_eq!(
            s.header("mcp-protocol-version"),
            Some("2025-11-25"),
            "{s:?}"
        );
    }
}

#[test]
fn the_get_stream_brings_a_server_request_and_a_notification_and_the_answer_is_posted() {
    let (f, mut b) = started(Script {
        get_stream: true,
        ..Script::default()
    });
    f.wait_for(RECV_TIMEOUT, |s| s.verb == "GET" && s.status == 200);
    let ping = json!({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"});
    let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "logger": "fixture", "data": "from the GET stream"}});
    assert!(f.push(&ping));
    assert!(f.push(&log));
    assert_eq!(b.recv(), ping);
    assert_eq!(b.recv(), log);
    let answer = json!({"jsonrpc": "2.0", "id": "srv-1", "result": {}});
    b.send(&answer);
    let posted = f.wait_for(RECV_TIMEOUT, |s| s.body == answer);
    assert_eq!(posted.verb, "POST");
    assert_eq!(posted.status, 202);
    assert_eq!(mcp_headers(&posted), headers_after_initialize());
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
    // The stream was closed at the end, and opened once.
    assert!(one_stream_closed(&f));
    assert_eq!(f.seen().iter().filter(|s| s.verb == "GET").count(), 1);
}

#[test]
fn a_404_again_right_after_a_new_session_fails_the_requests_in_flight_and_ends_the_bridge() {
    let (f, mut b) = started(Script::default());
    slow_call_in_flight(&mut b, &f, 5);
    // Every session is refused from now on, a new one too.
    f.end_session();
    b.send_tools_call(json!(6), "echo", json!({"text": "late"}));
    let lost = json!({"code": -32603, "message": "The upstream server exited",
        "data": {"cause": "upstream_exited"}});
    assert_eq!(b.recv_response(&json!(5))["error"], lost);
    assert_eq!(b.recv_response(&json!(6))["error"], lost);
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(1));
    b.wait_stderr("the server ended the HTTP session (HTTP 404)");
    // The held stream was closed; the ended session gets no DELETE.
    assert!(one_stream_closed(&f));
    let tail: Vec<_> = trail(&f).into_iter().skip(4).collect();
    assert_eq!(
        tail,
        vec![
            step("POST", "tools/call", 200),
            step("POST", "tools/call", 404),
            step("POST", "initialize", 200),
            step("POST", "notifications/initialized", 404),
        ]
    );
}

#[test]
fn a_404_on_the_session_starts_a_new_one_with_the_editor_s_initialize_and_state_and_sends_the_request_again()
 {
    let (f, mut b) = started(Script {
        get_stream: true,
        ..Script::default()
    });
    f.wait_for(RECV_TIMEOUT, |s| s.verb == "GET" && s.status == 200);
    for (id, method, params) in [
        (1, "resources/subscribe", json!({"uri": "file:///a"})),
        (2, "resources/subscribe", json!({"uri": "file:///b"})),
        (3, "resources/unsubscribe", json!({"uri": "file:///b"})),
        (4, "logging/setLevel", json!({"level": "warning"})),
    ] {
        assert_eq!(
            b.request(json!(id), method, params),
            json!({"jsonrpc": "2.0", "id": id, "result": {}})
        );
    }
    let before = f.seen().len();
    f.forget_session();
    assert_eq!(
        b.tools_call(json!(5), "echo", json!({"text": "after"})),
        json!({"jsonrpc": "2.0", "id": 5,
               "result": {"content": [{"type": "text", "text": "after"}]}})
    );
    // The GET stream of the new session brings the server's messages, and nothing of the
    // bridge's own requests came before.
    let get = f.wait_for(RECV_TIMEOUT, |s| {
        s.verb == "GET" && s.header("mcp-session-id") == Some("sess-2")
    });
    assert_eq!(get.status, 200);
    let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "warning", "logger": "fixture", "data": "new session"}});
    assert!(f.push(&log));
    assert_eq!(b.recv(), log);
    let posts: Vec<Seen> = f.seen()[before..]
        .iter()
        .filter(|s| s.verb == "POST")
        .cloned()
        .collect();
    assert_eq!(
        posts
            .iter()
            .map(|s| (s.method(), s.status, s.header("mcp-session-id")))
            .collect::<Vec<_>>(),
        vec![
            ("tools/call", 404, Some("sess-1")),
            ("initialize", 200, None),
            ("notifications/initialized", 202, Some("sess-2")),
            ("resources/subscribe", 200, Some("sess-2")),
            ("logging/setLevel", 200, Some("sess-2")),
            ("tools/call", 200, Some("sess-2")),
        ]
    );
    assert_eq!(
        posts[1].body,
        json!({"jsonrpc": "2.0", "id": "mcp-bridge-session-1", "method": "initialize",
               "params": initialize_params()})
    );
    assert_eq!(posts[1].header("mcp-protocol-version"), None);
    assert_eq!(posts[2].body, initialized());
    assert_eq!(
        posts[3].body,
        json!({"jsonrpc": "2.0", "id": "mcp-bridge-session-1-subscribe-0",
               "method": "resources/subscribe", "params": {"uri": "file:///a"}})
    );
    assert_eq!(
        posts[4].body,
        json!({"jsonrpc": "2.0", "id": "mcp-bridge-session-1-log-level",
               "method": "logging/setLevel", "params": {"level": "warning"}})
    );
    assert_eq!(posts[5].body, posts[0].body);
    assert_eq!(mcp_headers(&posts[5]), {
        let mut h = headers_after_initialize();
        h.retain(|(n, _)| n != "mcp-session-id");
        h.push(("mcp-session-id".into(), "sess-2".into()));
        h.sort();
        h
    });
    // The dead session id is never sent again: the DELETE at close carries the new one.
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
    let after = &f.seen()[before + 1..];
    assert!(
        after
            .iter()
            .all(|s| s.header("mcp-session-id") != Some("sess-1")),
        "{after:#?}"
    );
    let delete = f.wait_for(RECV_TIMEOUT, |s| s.verb == "DELETE");
    assert_eq!(delete.header("mcp-session-id"), Some("sess-2"));
}

/// The resumptions the fixture got: GETs with `Last-Event-ID`.
fn resumptions(f: &LegacyFixture) -> Vec<Seen> {
    f.seen()
        .into_iter()
        .filter(|s| s.verb == "GET" && s.header("last-event-id").is_some())
        .collect()
}

#[test]
fn a_stream_the_server_closes_before_the_response_is_resumed_with_last_event_id() {
    let (f, mut b) = started(Script::default());
    let r = b.request(
        json!(5),
        "tools/call",
        json!({"name": "resumable", "arguments": {"closes": 2, "retry_ms": 300},
               "_meta": {"progressToken": "tok"}}),
    );
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 5,
               "result": {"content": [{"type": "text", "text": "resumed"}]}})
    );
    // Every stream replays the progress event: it is passed on once.
    assert_eq!(
        b.take_notifications("notifications/progress"),
        vec![json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": "tok", "progress": 1}})]
    );
    let gets = resumptions(&f);
    assert_eq!(
        gets.iter()
            .map(|g| (
                g.header("last-event-id"),
                g.header("mcp-session-id"),
                g.header("accept"),
                g.status
            ))
            .collect::<Vec<_>>(),
        vec![(Some("s5-1"), Some("sess-1"), Some("text/event-stream"), 200); 2]
    );
    // The stream's `retry` (300 ms) is waited before each resumption.
    let post = f.wait_for(RECV_TIMEOUT, |s| s.method() == "tools/call");
    let retry = std::time::Duration::from_millis(300);
    assert!(gets[0].at.duration_since(post.at) >= retry);
    assert!(gets[1].at.duration_since(gets[0].at) >= retry);
}

#[test]
fn a_stream_resumed_without_a_new_event_fails_after_the_bound() {
    let (f, mut b) = started(Script::default());
    let r = b.request(
        json!(6),
        "tools/call",
        json!({"name": "resumable", "arguments": {"closes": 100, "retry_ms": 10},
               "_meta": {"progressToken": "t6"}}),
    );
    assert_eq!(
        r["error"],
        json!({"code": -32603, "message": "The request to the upstream server failed",
               "data": {"cause": "transport_failed",
                        "detail": "the response stream ended before the response (resumed 5 times in a row with Last-Event-ID without a new event)"}})
    );
    assert_eq!(resumptions(&f).len(), 5);
    // The session goes on.
    assert_eq!(
        b.tools_call(json!(7), "echo", json!({"text": "on"})),
        json!({"jsonrpc": "2.0", "id": 7,
               "result": {"content": [{"type": "text", "text": "on"}]}})
    );
}

#[test]
fn the_server_s_get_stream_is_resumed_with_last_event_id_when_it_ends() {
    let (f, mut b) = started(Script {
        get_stream: true,
        ..Script::default()
    });
    f.wait_for(RECV_TIMEOUT, |s| s.verb == "GET" && s.status == 200);
    let log = |text: &str| {
        json!({"jsonrpc": "2.0", "method": "notifications/message",
               "params": {"level": "info", "logger": "fixture", "data": text}})
    };
    assert!(f.push_raw(&format!("retry: 20\nid: g-1\ndata: {}\n\n", log("first"))));
    assert_eq!(b.recv(), log("first"));
    f.close_stream();
    let resumed = f.wait_for(RECV_TIMEOUT, |s| {
        s.verb == "GET" && s.header("last-event-id") == Some("g-1")
    });
    assert_eq!(
        (resumed.status, resumed.header("mcp-session-id")),
        (200, Some("sess-1"))
    );
    // The server replays from the start: the event passed on already is not passed on again.
    assert!(f.push_raw(&format!(
        "id: g-1\ndata: {}\n\nid: g-2\ndata: {}\n\n",
        log("first"),
        log("second")
    )));
    assert_eq!(b.recv(), log("second"));
}

#[test]
fn a_cancel_from_the_editor_is_posted_as_notifications_cancelled() {
    let (f, mut b) = started(Script::default());
    slow_call_in_flight(&mut b, &f, 7);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "the user pressed stop"}});
    b.send(&cancel);
    let posted = f.wait_for(RECV_TIMEOUT, |s| s.method() == "notifications/cancelled");
    assert_eq!(posted.body, cancel);
    assert_eq!(posted.status, 202);
    assert_eq!(posted.header("mcp-session-id"), Some("sess-1"));
    assert_eq!(posted.header("mcp-protocol-version"), Some("2025-11-25"));
    // The request's stream is closed as well.
    assert!(one_stream_closed(&f));
    let r = b.tools_call(json!(8), "echo", json!({"text": "after"}));
    assert_eq!(r["result"]["content"][0]["text"], "after");
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
    // The cancelled request got no response.
    assert_eq!(
        b.seen
            .iter()
            .filter(|v| v.get("id") == Some(&json!(7)))
            .count(),
        0
    );
    assert_eq!(
        f.seen()
            .iter()
            .filter(|s| s.method() == "notifications/cancelled")
            .count(),
        1
    );
}

#[test]
fn a_modern_error_to_discover_never_falls_back() {
    let f = LegacyFixture::start(Script {
        discover: Some((
            400,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2027-03-01"],"requested":"2026-07-28"}}}"#
                .into(),
        )),
        ..Script::default()
    });
    let mut b = Bridge::start_url(&[], &f.url(), &[]);
    let r = b.request(json!(0), "initialize", initialize_params());
    assert_eq!(
        r["error"],
        json!({"code": -32022, "message": "The upstream server did not complete server/discover",
               "data": {"cause": "discover_failed", "detail": "Unsupported protocol version"}})
    );
    // The bridge goes on: a second initialize tries server/discover again.
    let r = b.request(json!(1), "initialize", initialize_params());
    assert_eq!(r["error"]["code"], -32022);
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
    assert_eq!(
        trail(&f),
        vec![
            step("POST", "server/discover", 400),
            step("POST", "server/discover", 400)
        ],
        "never an initialize"
    );
    assert!(
        !b.stderr_text().contains("speaks 2025-11-25"),
        "{}",
        b.stderr_text()
    );
}

/// A 2025-11-25 HTTP server that answers the `server/discover` POST with `200` and the
/// result `{}` (as the official conformance suite's 2025-11-25 test server and other lenient
/// servers answer a method they do not know) is taken for a legacy server: the line says
/// why, the editor's `initialize` is POSTed as it came, and the session works.
#[test]
fn a_result_that_is_not_a_discover_result_falls_back_over_http() {
    let f = LegacyFixture::start(Script {
        discover: Some((
            200,
            r#"{"jsonrpc":"2.0","id":"mcp-bridge-probe-1","result":{}}"#.into(),
        )),
        ..Script::default()
    });
    let mut b = Bridge::start_url(&[], &f.url(), &[]);
    start_session(&mut b);
    assert_eq!(
        b.tools_call(json!(1), "echo", json!({"text": "over http"})),
        json!({"jsonrpc": "2.0", "id": 1,
            "result": {"content": [{"type": "text", "text": "over http"}]}})
    );
    b.wait_stderr("mcp-bridge: frontend: info: the upstream server speaks 2025-11-25 or earlier (it answered server/discover with a result that is not a DiscoverResult): passing the 2025-11-25 protocol through unchanged\n");
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
    let methods: Vec<(String, String, u16)> = trail(&f)
        .into_iter()
        .filter(|(verb, _, _)| verb == "POST")
        .collect();
    assert_eq!(
        methods,
        vec![
            step("POST", "server/discover", 200),
            step("POST", "initialize", 200),
            step("POST", "notifications/initialized", 202),
            step("POST", "tools/call", 200),
        ]
    );
}

/// An internal error (-32603) in the body of a `400` to `server/discover` is no legacy sign
/// (a legacy server refuses a POST it does not take before it handles anything): the
/// `initialize` fails with `discover_failed`, the upstream's code and message.
#[test]
fn an_internal_error_to_discover_never_falls_back_over_http() {
    let f = LegacyFixture::start(Script {
        discover: Some((
            400,
            r#"{"jsonrpc":"2.0","id":"mcp-bridge-probe-1","error":{"code":-32603,"message":"missing required _meta"}}"#
                .into(),
        )),
        ..Script::default()
    });
    let mut b = Bridge::start_url(&[], &f.url(), &[]);
    let r = b.request(json!(0), "initialize", initialize_params());
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32603,
            "message": "The upstream server did not complete server/discover",
            "data": {"cause": "discover_failed", "detail": "missing required _meta"}}})
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
    assert_eq!(trail(&f), vec![step("POST", "server/discover", 400)]);
    assert!(
        !b.stderr_text().contains("speaks 2025-11-25"),
        "{}",
        b.stderr_text()
    );
}

/// A URL whose path is mistyped gets 404 at `server/discover` (read as a legacy server, as the
/// era fallback says) and 404 again at the `initialize` passed through: one warning names the
/// path as the likely cause, and never the query (it may hold a secret).
#[test]
fn a_404_to_discover_and_to_initialize_names_the_url_path_and_never_its_query() {
    let f = LegacyFixture::start(Script::default());
    let url = format!("http://{}/mcpp?key=sekret-value", f.addr);
    let mut b = Bridge::start_url(&[], &url, &[]);
    let r = b.request(json!(0), "initialize", initialize_params());
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32603,
            "message": "The request to the upstream server failed",
            "data": {"cause": "transport_failed", "detail": "HTTP 404"}}})
    );
    // The failed initialize leaves the bridge awaiting one: a request now is not forwarded.
    assert_eq!(
        b.request(json!(1), "tools/list", json!({})),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600,
            "message": "Invalid request: the server is not initialized",
            "data": {"cause": "not_initialized"}}})
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
    assert!(f.seen().is_empty(), "nothing reached the fixture's /mcp");
    let lines = b.stderr_lines_to_the_end(|l| {
        l.starts_with("mcp-bridge: frontend: info: the upstream server speaks")
            || l.starts_with("mcp-bridge: frontend: warn: ")
    });
    assert_eq!(
        lines,
        vec![
            "mcp-bridge: frontend: info: the upstream server speaks 2025-11-25 or earlier (it answered server/discover with HTTP 404, as a URL with a wrong path would): passing the 2025-11-25 protocol through unchanged",
            "mcp-bridge: frontend: warn: the server answers 404 at /mcpp for both server/discover and initialize: check the URL path",
            "mcp-bridge: frontend: warn: initialize failed: The request to the upstream server failed (transport_failed, -32603): HTTP 404",
        ]
    );
    assert!(
        !b.stderr_text().contains("sekret-value"),
        "{}",
        b.stderr_text()
    );
}
