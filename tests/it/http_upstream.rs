//! The URL form against a fixture HTTP upstream (the crate's own 2026-07-28 server behind
//! axum, `common/http_fixture.rs`): the headers of every POST, JSON and SSE responses, progress
//! and log messages on a request's stream, cancellation by closing the stream, the listen
//! stream over SSE and its reopening by HTTP status, the response-size limit, error bodies,
//! icons, `--header`/`--header-env`, and a URL upstream that never stops the bridge.

use crate::common;
use mcp_test_fixtures::http_fixture;

use common::{Bridge, error_of, text_of, wait_until};
use http_fixture::{Break, Canned, HttpFixture};
use mcp_bridge::server::{LogLevel, Outcome, PromptDef, ResourceDef, Server, ToolDef};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const V: &str = "2026-07-28";
const PNG: &str = "data:image/png;base64,iVBORw0KGgo=";

fn icons() -> Value {
    json!([{"src": "https://cdn.example/i.png"}, {"src": PNG}, {"src": "file:///i.png"},
           {"src": "http://cdn.example/i.png"}])
}

/// Adds one to its counter when dropped.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// The fixture server: tools for each case. `cancelled` counts the `wait` calls that saw
/// their cancellation.
fn server(cancelled: Arc<AtomicUsize>) -> Server {
    let text = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    Server::builder("fixture-http", "1.0.0")
        .tool(
            ToolDef::new("echo", text).field("icons", icons()),
            |a, _| async move { Ok(Outcome::text(a["text"].as_str().unwrap_or_default())) },
        )
        .tool(
            ToolDef::new(
                "weather",
                json!({"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "days": {"type": "integer", "x-mcp-header": "Days"}}}),
            ),
            |a, _| async move {
                Ok(Outcome::text(format!(
                    "{} for {} days",
                    a["region"].as_str().unwrap_or_default(),
                    a["days"]
                )))
            },
        )
        .tool(
            ToolDef::new(
                "broken",
                json!({"type": "object", "properties": {
                    "n": {"type": "number", "x-mcp-header": "N"}}}),
            ),
            |_, _| async move { Ok(Outcome::text("never listed")) },
        )
        .tool(
            ToolDef::new("Grüße ✓", json!({"type": "object"})),
            |_, _| async move { Ok(Outcome::text("hallo")) },
        )
        .tool(
            ToolDef::new("progress", json!({"type": "object"})),
            |_, ctx| async move {
                ctx.progress(1.0, Some(2.0), Some("half")).await;
                ctx.log(LogLevel::Info, Some("fixture"), json!("working"))
                    .await;
                Ok(Outcome::text("done"))
            },
        )
        .tool(ToolDef::new("wait", json!({"type": "object"})), {
            move |_, ctx| {
                let cancelled = cancelled.clone();
                async move {
                    // Counted when the server cancels the request: its token fires, or its
                    // task is dropped.
                    let _seen = Counted(cancelled);
                    ctx.cancelled().await;
                    Ok(Outcome::text("cancelled"))
                }
            }
        })
        .tool(
            ToolDef::new(
                "big",
                json!({"type": "object", "properties": {"bytes": {"type": "integer"}}}),
            ),
            |a, _| async move {
                let n = a["bytes"].as_u64().unwrap_or(0) as usize;
                Ok(Outcome::text("x".repeat(n)))
            },
        )
        .tool(
            ToolDef::new("notify", json!({"type": "object"})),
            |_, ctx| async move {
                ctx.server()
                    .notify(mcp_bridge::server::ListenEvent::ToolsListChanged);
                Ok(Outcome::text("notified"))
            },
        )
        .prompt(
            PromptDef::new("greet").field("icons", icons()),
            |_, _| async move {
                Ok(Outcome::Complete(json!({"messages": [
                    {"role": "user", "content": {"type": "text", "text": "hi"}}]})))
            },
        )
        .resource(
            ResourceDef::new("file:///a b/ü.txt", "a").field("icons", icons()),
            |a, _| async move {
                Ok(Outcome::Complete(json!({"contents": [
                    {"uri": a["uri"], "text": "A"}]})))
            },
        )
        .build()
}

fn fixture() -> (HttpFixture, Arc<AtomicUsize>) {
    let cancelled = Arc::new(AtomicUsize::new(0));
    let f = HttpFixture::start(
        server(cancelled.clone()),
        vec![("weather", "region", "Region"), ("weather", "days", "Days")],
    );
    (f, cancelled)
}

/// The fixture (answering with SSE streams when `sse`), the bridge in front of it with
/// `flags`, and `initialize` done; the counter of cancelled `wait` calls.
fn initialized(flags: &[&str], sse: bool) -> (HttpFixture, Arc<AtomicUsize>, Bridge) {
    let (f, cancelled) = fixture();
    f.state.sse.store(sse, Ordering::SeqCst);
    let mut b = Bridge::start_url(flags, &f.url(), &[]);
    b.initialize();
    (f, cancelled, b)
}

/// The headers of a POST that the 2026-07-28 transport defines, in a fixed order.
fn standard_headers(s: &mcp_test_fixtures::recording::Seen) -> Vec<(String, String)> {
    [
        "accept",
        "content-type",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
    ]
    .iter()
    .filter_map(|n| s.header(n).map(|v| (n.to_string(), v.to_string())))
    .collect()
}

fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

#[test]
fn json_responses_and_the_standard_headers_of_every_post() {
    let (f, _) = fixture();
    let mut b = Bridge::start_url(&[], &f.url(), &[]);
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "fixture-http");
    assert_eq!(
        text_of(&b.tools_call(json!(1), "echo", json!({"text": "hi"}))),
        "hi"
    );
    let p = b.request(json!(2), "prompts/get", json!({"name": "greet"}));
    assert_eq!(p["result"]["messages"][0]["content"]["text"], "hi");
    let r = b.request(
        json!(3),
        "resources/read",
        json!({"uri": "file:///a b/ü.txt"}),
    );
    assert_eq!(r["result"]["contents"][0]["text"], "A");
    let accept = ("accept", "application/json, text/event-stream");
    let ct = ("content-type", "application/json");
    let pv = ("mcp-protocol-version", V);
    assert_eq!(
        standard_headers(&f.seen_of("server/discover")[0]),
        h(&[accept, ct, pv, ("mcp-method", "server/discover")])
    );
    assert_eq!(
        standard_headers(&f.seen_of("tools/call")[0]),
        h(&[
            accept,
            ct,
            pv,
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo")
        ])
    );
    assert_eq!(
        standard_headers(&f.seen_of("prompts/get")[0]),
        h(&[
            accept,
            ct,
            pv,
            ("mcp-method", "prompts/get"),
            ("mcp-name", "greet")
        ])
    );
    assert_eq!(
        standard_headers(&f.seen_of("resources/read")[0]),
        h(&[
            accept,
            ct,
            pv,
            ("mcp-method", "resources/read"),
            ("mcp-name", "=?base64?ZmlsZTovLy9hIGIvw7wudHh0?=")
        ])
    );
    // Every POST of the bridge passed the fixture's checks: none got its 400.
    for s in f.seen() {
        assert_eq!(
            s.header("mcp-method"),
            s.body["method"].as_str(),
            "{:?}",
            s.body
        );
        assert_eq!(s.header("mcp-session-id"), None);
    }
    assert!(
        f.seen_of("notifications/cancelled").is_empty(),
        "no notification POSTs"
    );
}

#[test]
fn json_bodies_and_sse_streams_that_start_with_a_byte_order_mark_are_read() {
    let (f, _) = fixture();
    f.state.bom.store(true, Ordering::SeqCst);
    let mut b = Bridge::start_url(&[], &f.url(), &[]);
    // server/discover and every later answer come as JSON bodies that start with EF BB BF.
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "fixture-http");
    assert_eq!(
        b.tools_call(json!(1), "echo", json!({"text": "json"})),
        json!({"jsonrpc": "2.0", "id": 1,
               "result": {"content": [{"type": "text", "text": "json"}]}})
    );
    // An error body with the mark passes through as the upstream's error.
    f.script(
        "tools/call",
        Canned::new(
            404,
            Some("application/json"),
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}",
        ),
    );
    assert_eq!(
        b.tools_call(json!(2), "echo", json!({"text": "a"}))["error"],
        json!({"code": -32601, "message": "Method not found"})
    );
    // An SSE stream whose first bytes are the mark: its first event is read.
    f.state.sse.store(true, Ordering::SeqCst);
    assert_eq!(
        b.tools_call(json!(3), "echo", json!({"text": "sse"})),
        json!({"jsonrpc": "2.0", "id": 3,
               "result": {"content": [{"type": "text", "text": "sse"}]}})
    );
}

const TEAM_AND_AUTH: &[&str] = &[
    "--header",
    "X-Team: blue",
    "--header-env",
    "Authorization=HTTP_TEST_AUTH",
];
const AUTH_ENV: &[(&str, &str)] = &[("HTTP_TEST_AUTH", "Bearer s3cret-value")];

/// The body `transport_failed` error of a request, with `detail`.
fn transport_failed(detail: &str) -> Value {
    json!({"code": -32603, "message": "The request to the upstream server failed",
           "data": {"cause": "transport_failed", "detail": detail}})
}

#[test]
fn a_same_origin_307_or_308_is_followed_with_the_method_the_body_and_every_header() {
    let (f, _) = fixture();
    f.script("server/discover", Canned::redirect(308, "/v2/mcp"));
    let mut b = Bridge::start_url(TEAM_AND_AUTH, &f.url(), AUTH_ENV);
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "fixture-http");
    let discover = f.seen_of("server/discover");
    assert_eq!(
        discover
            .iter()
            .map(|s| (s.path.as_str(), s.status))
            .collect::<Vec<_>>(),
        vec![("/mcp", 308), ("/v2/mcp", 200)]
    );
    // An absolute Location, then a relative one, in one origin.
    f.script(
        "tools/call",
        Canned::redirect(307, &format!("http://{}/v2/mcp", f.addr)),
    );
    f.script("tools/call", Canned::redirect(308, "/mcp"));
    assert_eq!(
        b.tools_call(json!(1), "echo", json!({"text": "moved"})),
        json!({"jsonrpc": "2.0", "id": 1,
               "result": {"content": [{"type": "text", "text": "moved"}]}})
    );
    let calls = f.seen_of("tools/call");
    assert_eq!(
        calls
            .iter()
            .map(|s| (s.verb.as_str(), s.path.as_str(), s.status))
            .collect::<Vec<_>>(),
        vec![
            ("POST", "/mcp", 307),
            ("POST", "/v2/mcp", 308),
            ("POST", "/mcp", 200)
        ]
    );
    for s in &calls[1..] {
        // The same body, and every header the same (the MCP ones, the user's, the token).
        assert_eq!(s.body, calls[0].body);
        assert_eq!(s.headers, calls[0].headers);
    }
    assert_eq!(
        (
            calls[2].header("mcp-method"),
            calls[2].header("mcp-name"),
            calls[2].header("mcp-protocol-version"),
            calls[2].header("x-team"),
            calls[2].header("authorization")
        ),
        (
            Some("tools/call"),
            Some("echo"),
            Some(V),
            Some("blue"),
            Some("Bearer s3cret-value")
        )
    );
    // At most MAX_REDIRECTS (5) per POST: the sixth fails the request.
    for _ in 0..6 {
        f.script("tools/call", Canned::redirect(307, "/mcp"));
    }
    assert_eq!(
        b.tools_call(json!(2), "echo", json!({"text": "loop"}))["error"],
        transport_failed("the server redirected the POST more than 5 times")
    );
    assert_eq!(f.seen_of("tools/call").len(), 3 + 6);
    assert_eq!(
        text_of(&b.tools_call(json!(3), "echo", json!({"text": "on"}))),
        "on"
    );
}

#[test]
fn a_redirect_to_another_origin_is_not_followed_and_nothing_is_sent_there() {
    let (f, _) = fixture();
    let other = http_fixture::Elsewhere::start();
    let mut b = Bridge::start_url(TEAM_AND_AUTH, &f.url(), AUTH_ENV);
    b.initialize();
    let elsewhere = format!("http://{}", other.addr);
    // Another port, and the same port under another host name (the same listener here).
    let same_port = format!("http://localhost:{}", f.addr.port());
    for (id, status, location, origin) in [
        (1, 307, format!("{elsewhere}/mcp"), elsewhere.clone()),
        (2, 308, format!("{elsewhere}/v2/mcp?x=1"), elsewhere.clone()),
        (3, 307, format!("{same_port}/mcp"), same_port.clone()),
    ] {
        f.script("tools/call", Canned::redirect(status, &location));
        let before = f.seen().len();
        assert_eq!(
            b.tools_call(json!(id), "echo", json!({"text": "a"}))["error"],
            transport_failed(&format!(
                "the server redirected the POST (HTTP {status}) to another origin, {origin}: the bridge does not follow it (the token and the --header values go only to the origin of the upstream's URL)"
            )),
            "{location}"
        );
        assert_eq!(f.seen().len(), before + 1, "{location}");
    }
    assert_eq!(other.received.load(Ordering::SeqCst), 0);
    // The other listener does count what reaches it.
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(other.addr).expect("connect");
    c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .expect("write");
    let mut answer = String::new();
    c.read_to_string(&mut answer).expect("read");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(other.received.load(Ordering::SeqCst), 1);
    let err = b.stderr_text();
    assert!(!err.contains("s3cret-value"), "{err}");
}

#[test]
fn a_301_302_or_303_on_a_post_fails_saying_the_server_redirected() {
    let (f, _, mut b) = initialized(&[], false);
    for (id, status) in [(1, 301), (2, 302), (3, 303)] {
        f.script("tools/call", Canned::redirect(status, "/v2/mcp"));
        assert_eq!(
            b.tools_call(json!(id), "echo", json!({"text": "a"}))["error"],
            transport_failed(&format!(
                "the server redirected the POST (HTTP {status} to http://{}): the bridge follows only 307 and 308 for a POST, which keep its method and body",
                f.addr
            )),
            "{status}"
        );
    }
    assert!(f.seen().iter().all(|s| s.path == "/mcp"), "{:#?}", f.seen());
    assert_eq!(
        text_of(&b.tools_call(json!(4), "echo", json!({"text": "on"}))),
        "on"
    );
}

/// The ids of the `tools/call` POSTs the fixture got, in order.
fn call_ids(f: &HttpFixture) -> Vec<Value> {
    f.seen_of("tools/call")
        .iter()
        .map(|s| s.body["id"].clone())
        .collect()
}

#[test]
fn a_broken_response_stream_is_re_issued_with_a_new_id_and_the_editor_gets_the_result() {
    let (f, _, mut b) = initialized(&[], true);
    // Twice the stream ends before the response, after the request's progress.
    f.break_next("tools/call", Break::End);
    f.break_next("tools/call", Break::End);
    let r = b.request(
        json!(1),
        "tools/call",
        json!({"name": "progress", "arguments": {}, "_meta": {"progressToken": "tok"}}),
    );
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 1,
               "result": {"content": [{"type": "text", "text": "done"}]}})
    );
    // Each attempt's progress reaches the editor's token.
    let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": "tok", "progress": 1, "total": 2, "message": "half"}});
    assert_eq!(
        b.take_notifications("notifications/progress"),
        vec![progress.clone(), progress.clone(), progress]
    );
    let ids = call_ids(&f);
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert!(ids[0].is_i64(), "{ids:?}");
    assert_eq!(
        ids[1..],
        [json!("mcp-bridge-reissue-1"), json!("mcp-bridge-reissue-2")]
    );
    let calls = f.seen_of("tools/call");
    assert!(
        calls
            .iter()
            .all(|c| c.body["params"] == calls[0].body["params"])
    );
    // A stream that fails in the middle, and a JSON body cut in the middle, are broken
    // response streams too.
    for (id, sse) in [(2, true), (3, false)] {
        f.state.sse.store(sse, Ordering::SeqCst);
        f.break_next("tools/call", Break::Reset);
        assert_eq!(
            b.tools_call(json!(id), "echo", json!({"text": "again"})),
            json!({"jsonrpc": "2.0", "id": id,
                   "result": {"content": [{"type": "text", "text": "again"}]}}),
            "sse: {sse}"
        );
    }
    let ids = call_ids(&f);
    assert_eq!(ids.len(), 7, "{ids:?}");
    assert!(ids[3].is_i64() && ids[5].is_i64(), "{ids:?}");
    assert_eq!(
        [&ids[4], &ids[6]],
        [
            &json!("mcp-bridge-reissue-3"),
            &json!("mcp-bridge-reissue-4")
        ]
    );
}

#[test]
fn a_response_stream_that_always_breaks_fails_after_the_re_issues() {
    let (f, _, mut b) = initialized(&[], true);
    for _ in 0..4 {
        f.break_next("tools/call", Break::End);
    }
    assert_eq!(
        b.tools_call(json!(1), "echo", json!({"text": "a"}))["error"],
        transport_failed(
            "the response stream ended before the response (sent 3 times more with a new id, each time in vain)"
        )
    );
    let ids = call_ids(&f);
    assert_eq!(ids.len(), 4, "{ids:?}");
    assert_eq!(
        ids[1..],
        [
            json!("mcp-bridge-reissue-1"),
            json!("mcp-bridge-reissue-2"),
            json!("mcp-bridge-reissue-3")
        ]
    );
    // An error status is no broken stream: not sent again.
    f.script("tools/call", Canned::new(503, None, ""));
    assert_eq!(
        b.tools_call(json!(2), "echo", json!({"text": "a"}))["error"],
        transport_failed("HTTP 503")
    );
    assert_eq!(call_ids(&f).len(), 5);
    assert_eq!(
        text_of(&b.tools_call(json!(3), "echo", json!({"text": "on"}))),
        "on"
    );
}

#[test]
fn a_cancelled_request_is_never_re_issued() {
    let (f, _, mut b) = initialized(&[], true);
    // The first stream ends at once: the request goes again, and that stream stays open.
    f.break_next("tools/call", Break::AtOnce);
    b.send_tools_call(json!(7), "wait", json!({}));
    assert!(wait_until(|| f.seen_of("tools/call").len() == 2));
    b.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 7, "reason": "user"}}),
    );
    assert!(
        wait_until(|| f.state.streams_closed_early.load(Ordering::SeqCst) == 1),
        "the bridge closed the re-issued stream; stderr:\n{}",
        b.stderr_text()
    );
    // Longer than every wait of the re-issues (0.1 + 0.2 + 0.4 s): nothing more is sent.
    let after = b.recv_for(Duration::from_millis(1000));
    assert!(
        after.iter().all(|v| v.get("id") != Some(&json!(7))),
        "{after:?}"
    );
    assert_eq!(
        call_ids(&f)[1..],
        [json!("mcp-bridge-reissue-1")],
        "{:#?}",
        f.seen()
    );
    assert_eq!(
        text_of(&b.tools_call(json!(8), "echo", json!({"text": "next"}))),
        "next"
    );
}

#[test]
fn mcp_name_that_is_not_safe_header_text_goes_in_base64() {
    let (f, _, mut b) = initialized(&[], false);
    assert_eq!(
        text_of(&b.tools_call(json!(1), "Grüße ✓", json!({}))),
        "hallo"
    );
    assert_eq!(
        f.seen_of("tools/call")[0].header("mcp-name"),
        Some("=?base64?R3LDvMOfZSDinJM=?=")
    );
}

#[test]
fn sse_responses_bring_progress_and_log_messages_of_the_request() {
    let (_f, _, mut b) = initialized(&[], true);
    let lv = b.request(json!(1), "logging/setLevel", json!({"level": "info"}));
    assert_eq!(lv["result"], json!({}));
    let r = b.request(
        json!(2),
        "tools/call",
        json!({"name": "progress", "arguments": {}, "_meta": {"progressToken": "tok"}}),
    );
    assert_eq!(text_of(&r), "done");
    let progress = b.take_notifications("notifications/progress");
    assert_eq!(
        progress,
        vec![json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "tok", "progress": 1, "total": 2, "message": "half"}})]
    );
    let logs = b.take_notifications("notifications/message");
    assert_eq!(
        logs,
        vec![json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "logger": "fixture", "data": "working"}})]
    );
}

#[test]
fn x_mcp_header_arguments_become_headers_and_broken_annotations_drop_the_tool() {
    let (f, _, mut b) = initialized(&[], false);
    // Before tools/list the bridge knows no annotation: the server's 400 + -32020 makes it
    // fetch tools/list once and send the call once more, with the headers (2026-07-28
    // transports/http).
    let early = b.tools_call(json!(1), "weather", json!({"region": "eu", "days": 3}));
    assert_eq!(text_of(&early), "eu for 3 days");
    let seen = f.seen();
    let trail: Vec<(&str, Option<&str>, Option<&str>, u16)> = seen
        .iter()
        .filter(|s| matches!(s.method(), "tools/call" | "tools/list"))
        .map(|s| {
            (
                s.method(),
                s.body["id"].as_str(),
                s.header("mcp-param-region"),
                s.status,
            )
        })
        .collect();
    assert_eq!(
        trail,
        vec![
            ("tools/call", None, None, 400),
            ("tools/list", Some("mcp-bridge-tools-refetch"), None, 200),
            ("tools/call", None, Some("eu"), 200),
        ]
    );
    b.wait_stderr("tools/call weather: the upstream refused its Mcp-Param headers (-32020); its x-mcp-header annotations changed in tools/list: sending it once more");
    let refetch = seen
        .iter()
        .find(|s| s.method() == "tools/list")
        .expect("re-fetch");
    let call_meta = &seen[seen
        .iter()
        .position(|s| s.method() == "tools/call")
        .expect("call")]
    .body["params"]["_meta"];
    assert_eq!(refetch.body["params"], json!({"_meta": call_meta}));
    assert_eq!(refetch.header("mcp-method"), Some("tools/list"));
    let list = b.request(json!(2), "tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        names,
        vec![
            "echo",
            "weather",
            "Grüße ✓",
            "progress",
            "wait",
            "big",
            "notify"
        ]
    );
    b.wait_stderr(
        "dropped the tool \"broken\" from tools/list: the header \"N\" is on a property that is not a string, integer or boolean (2026-07-28 x-mcp-header rules)",
    );
    let r = b.tools_call(
        json!(3),
        "weather",
        json!({"region": "eu west ", "days": 3}),
    );
    assert_eq!(text_of(&r), "eu west  for 3 days");
    let seen = f.seen_of("tools/call");
    let last = seen.last().expect("a call");
    assert_eq!(
        (
            last.header("mcp-param-region"),
            last.header("mcp-param-days")
        ),
        (Some("=?base64?ZXUgd2VzdCA=?="), Some("3"))
    );
    // A call of the dropped tool (an editor with an older list, or one that calls a name it
    // was never shown) gets what a server without it answers, and is never posted.
    let calls_before = f.seen_of("tools/call").len();
    assert_eq!(
        b.tools_call(json!(4), "broken", json!({"n": 1})),
        json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32602,
               "message": "Unknown tool: broken", "data": {"name": "broken"}}})
    );
    let r = b.tools_call(json!(5), "echo", json!({"text": "after"}));
    assert_eq!(text_of(&r), "after");
    let calls = f.seen_of("tools/call");
    assert_eq!(calls.len(), calls_before + 1);
    assert_eq!(
        calls.last().map(|s| s.body["params"]["name"].clone()),
        Some(json!("echo"))
    );
}

#[test]
fn a_header_mismatch_gets_one_re_fetch_and_at_most_one_retry_never_a_loop() {
    // The server annotates `zone` as `Zone`, but the fixture (as an intermediary would) wants
    // `Mcp-Param-Area`: every call is refused, whatever the bridge learns.
    let server = Server::builder("fixture-http", "1.0.0")
        .tool(
            ToolDef::new(
                "zoned",
                json!({"type": "object", "properties": {
                    "zone": {"type": "string", "x-mcp-header": "Zone"}}}),
            ),
            |a, _| async move { Ok(Outcome::text(a["zone"].as_str().unwrap_or_default())) },
        )
        .build();
    let f = HttpFixture::start(server, vec![("zoned", "zone", "Area")]);
    // Answers as SSE streams: the re-fetch reads its tools/list from one.
    f.state.sse.store(true, Ordering::SeqCst);
    let mut b = Bridge::start_url(&[], &f.url(), &[]);
    b.initialize();
    let refused = json!({"code": -32020, "message": "Header mismatch: Mcp-Param-Area"});
    // No annotation known: the re-fetch brings `Zone`, and the one retry is refused too.
    let r = b.tools_call(json!(1), "zoned", json!({"zone": "eu"}));
    assert_eq!(r["error"], refused);
    // The annotation known, and the fresh list says the same: no retry.
    let r = b.tools_call(json!(2), "zoned", json!({"zone": "eu"}));
    assert_eq!(r["error"], refused);
    let trail: Vec<(String, Option<String>, u16)> = f
        .seen()
        .iter()
        .filter(|s| matches!(s.method(), "tools/call" | "tools/list"))
        .map(|s| {
            (
                s.method().to_string(),
                s.header("mcp-param-zone").map(str::to_string),
                s.status,
            )
        })
        .collect();
    let step = |m: &str, zone: Option<&str>, status: u16| {
        (m.to_string(), zone.map(str::to_string), status)
    };
    assert_eq!(
        trail,
        vec![
            step("tools/call", None, 400),
            step("tools/list", None, 200),
            step("tools/call", Some("eu"), 400),
            step("tools/call", Some("eu"), 400),
            step("tools/list", None, 200),
        ]
    );
}

#[test]
fn only_data_icons_reach_the_editor_from_a_url_upstream() {
    let (f, _, mut b) = initialized(&[], false);
    let want = json!([{"src": PNG}]);
    let tools = b.request(json!(1), "tools/list", json!({}));
    assert_eq!(tools["result"]["tools"][0]["icons"], want);
    let prompts = b.request(json!(2), "prompts/list", json!({}));
    assert_eq!(prompts["result"]["prompts"][0]["icons"], want);
    let resources = b.request(json!(3), "resources/list", json!({}));
    assert_eq!(resources["result"]["resources"][0]["icons"], want);
    drop(f);
}

#[test]
fn cancelling_a_request_closes_its_stream_and_posts_nothing() {
    let (f, cancelled, mut b) = initialized(&[], true);
    b.send_tools_call(json!(7), "wait", json!({}));
    assert!(wait_until(|| f.seen_of("tools/call").len() == 1));
    b.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 7, "reason": "user"}}),
    );
    assert!(
        wait_until(|| f.state.streams_closed_early.load(Ordering::SeqCst) == 1),
        "the bridge closed the stream; stderr:\n{}",
        b.stderr_text()
    );
    assert!(
        wait_until(|| cancelled.load(Ordering::SeqCst) == 1),
        "the server saw the cancel"
    );
    assert_eq!(f.state.streams_closed_early.load(Ordering::SeqCst), 1);
    // No response for the cancelled request, and no notification POST.
    let after = b.recv_for(Duration::from_millis(300));
    assert!(
        after.iter().all(|v| v.get("id") != Some(&json!(7))),
        "{after:?}"
    );
    assert!(f.seen_of("notifications/cancelled").is_empty());
    assert_eq!(
        text_of(&b.tools_call(json!(8), "echo", json!({"text": "next"}))),
        "next"
    );
}

#[test]
fn error_bodies_pass_through_and_other_failures_name_the_status() {
    let (f, _, mut b) = initialized(&[], false);
    let ct = Some("application/json");
    f.script(
        "tools/call",
        Canned::new(
            404,
            ct,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#,
        ),
    );
    f.script(
        "tools/call",
        Canned::new(
            400,
            ct,
            r#"{"jsonrpc":"2.0","error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"x"}}}"#,
        ),
    );
    f.script("tools/call", Canned::new(500, None, ""));
    f.script(
        "tools/call",
        Canned::new(502, Some("text/html"), "<html>bad gateway</html>"),
    );
    f.script("tools/call", Canned::new(200, Some("text/plain"), "hello"));
    f.script("tools/call", Canned::new(200, ct, ""));
    f.script(
        "tools/call",
        Canned::new(200, ct, r#"{"jsonrpc":"2.0","id":999,"result":{}}"#),
    );
    let r = b.tools_call(json!(1), "echo", json!({"text": "a"}));
    assert_eq!(
        r["error"],
        json!({"code": -32601, "message": "Method not found"})
    );
    let r = b.tools_call(json!(2), "echo", json!({"text": "a"}));
    assert_eq!(
        r["error"],
        json!({"code": -32022, "message": "Unsupported protocol version",
               "data": {"supported": ["2026-07-28"], "requested": "x"}})
    );
    for (id, detail) in [
        (3, "HTTP 500"),
        (4, "HTTP 502"),
        (
            5,
            "the upstream answered HTTP 200 with neither JSON nor an event stream",
        ),
        (6, "the upstream's JSON response did not answer the request"),
        (7, "the upstream's JSON response did not answer the request"),
    ] {
        let r = b.tools_call(json!(id), "echo", json!({"text": "a"}));
        assert_eq!(
            r["error"],
            json!({"code": -32603, "message": "The request to the upstream server failed",
                   "data": {"cause": "transport_failed", "detail": detail}}),
            "{id}"
        );
    }
    // The upstream goes on.
    assert_eq!(
        text_of(&b.tools_call(json!(8), "echo", json!({"text": "ok"}))),
        "ok"
    );
}

#[test]
fn a_response_over_the_limit_fails_at_once_as_json_and_as_an_sse_event() {
    let (f, _, mut b) = initialized(&["--max-response-bytes", "4000"], false);
    let over = json!({"code": -32603, "message": "The request to the upstream server failed",
        "data": {"cause": "transport_failed", "detail": "the response is over the limit of 4000 bytes (--max-response-bytes raises it)"}});
    assert_eq!(
        b.tools_call(json!(1), "big", json!({"bytes": 5000}))["error"],
        over
    );
    assert_eq!(
        text_of(&b.tools_call(json!(2), "big", json!({"bytes": 3000}))).len(),
        3000
    );
    f.state.sse.store(true, Ordering::SeqCst);
    assert_eq!(
        b.tools_call(json!(3), "big", json!({"bytes": 5000}))["error"],
        over
    );
    assert_eq!(
        text_of(&b.tools_call(json!(4), "big", json!({"bytes": 3000}))).len(),
        3000
    );
}

const FAST_LISTEN: &[&str] = &[
    "--listen-backoff-initial",
    "0.05",
    "--listen-backoff-max",
    "0.2",
];

#[test]
fn the_listen_stream_is_sse_with_keep_alives_and_reopens_after_408_429_5xx_and_a_broken_stream() {
    let (f, _) = fixture();
    f.script("subscriptions/listen", Canned::new(503, None, ""));
    f.script("subscriptions/listen", Canned::new(429, None, ""));
    f.script("subscriptions/listen", Canned::new(408, None, ""));
    f.script(
        "subscriptions/listen",
        Canned::new(200, Some("text/event-stream"), ": only a comment\n\n"),
    );
    let mut b = Bridge::start_url(FAST_LISTEN, &f.url(), &[]);
    b.initialize();
    assert_eq!(f.seen_of("subscriptions/listen").len(), 5);
    assert_eq!(f.state.listens_opened.load(Ordering::SeqCst), 1);
    // Keep-alive comments flow on the open stream (every 20 ms) and are ignored; an event
    // still arrives.
    std::thread::sleep(http_fixture::KEEP_ALIVE * 5);
    assert_eq!(
        text_of(&b.tools_call(json!(1), "notify", json!({}))),
        "notified"
    );
    assert_eq!(
        b.recv_notification("notifications/tools/list_changed"),
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    b.wait_stderr("the listen stream ended: HTTP 503. A new stream follows in 0.05 s.");
    b.wait_stderr("the listen stream ended: the response stream ended before the response.");
}

#[test]
fn the_listen_stream_stops_after_other_statuses() {
    for (status, line) in [
        (
            404,
            "the upstream server refused the listen stream (HTTP 404). The bridge sends no more list changes.",
        ),
        (
            501,
            "the upstream server refused the listen stream (HTTP 501). The bridge sends no more list changes.",
        ),
        (
            401,
            // The sign-in is on; after initialized an editor without URL elicitation cannot be
            // asked.
            "the upstream server refused the listen stream (reauthorization_required: a sign-in is needed and cannot reach the user now; restart the server (it signs in during initialize) (the editor declared no URL elicitation)): it needs a sign-in.",
        ),
    ] {
        let (f, _) = fixture();
        f.script("subscriptions/listen", Canned::new(status, None, ""));
        let mut b = Bridge::start_url(FAST_LISTEN, &f.url(), &[]);
        b.initialize_only(json!({}));
        b.wait_stderr(line);
        // With a wait of 0.05 s, a retry would have come many times over.
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(f.seen_of("subscriptions/listen").len(), 1, "{status}");
        assert_eq!(
            text_of(&b.tools_call(json!(1), "echo", json!({"text": "still"}))),
            "still"
        );
    }
}

#[test]
fn header_and_header_env_go_on_every_post() {
    let (f, _) = fixture();
    let mut b = Bridge::start_url(
        &[
            "--header",
            "X-Team: blue",
            "--header",
            "X-Api-Key: k1",
            "--header-env",
            "Authorization=HTTP_TEST_AUTH",
        ],
        &f.url(),
        &[("HTTP_TEST_AUTH", "Bearer s3cret-value")],
    );
    b.initialize();
    b.tools_call(json!(1), "echo", json!({"text": "x"}));
    let seen = f.seen();
    assert!(seen.len() >= 2);
    for s in &seen {
        assert_eq!(
            (
                s.header("x-team"),
                s.header("x-api-key"),
                s.header("authorization")
            ),
            (Some("blue"), Some("k1"), Some("Bearer s3cret-value")),
            "{}",
            s.method()
        );
    }
    b.wait_stderr("the header x-api-key given with --header usually carries a secret");
    b.close_stdin();
    let code = b.exit_code(common::RECV_TIMEOUT);
    assert_eq!(code, Some(0));
    let err = b.stderr_to_the_end();
    assert!(!err.contains("s3cret-value"), "{err}");
}

#[test]
fn an_unreachable_url_fails_initialize_and_never_stops_the_bridge() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut b = Bridge::start_url(&[], &url, &[]);
    for id in [0, 1] {
        b.send_request(
            json!(id),
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}),
        );
        let r = b.recv_response(&json!(id));
        assert_eq!(error_of(&r), (-32603, "discover_failed".into()));
        assert_eq!(
            r["error"]["message"],
            "The upstream server did not complete server/discover"
        );
        let detail = r["error"]["data"]["detail"].as_str().unwrap_or("");
        assert!(
            detail.starts_with("the connection to the upstream failed: "),
            "{detail}"
        );
        assert!(!detail.contains(&url), "{detail}");
    }
    b.close_stdin();
    assert_eq!(b.exit_code(common::RECV_TIMEOUT), Some(0));
}

#[test]
fn a_failing_upstream_mid_session_fails_the_request_alone() {
    let (f, _, mut b) = initialized(&[], false);
    f.script("tools/call", Canned::new(503, None, "busy"));
    assert_eq!(
        b.tools_call(json!(1), "echo", json!({"text": "a"}))["error"]["data"],
        json!({"cause": "transport_failed", "detail": "HTTP 503"})
    );
    assert_eq!(
        text_of(&b.tools_call(json!(2), "echo", json!({"text": "b"}))),
        "b"
    );
    assert!(
        b.child.try_wait().expect("status").is_none(),
        "still running"
    );
}

#[test]
fn the_first_server_discover_over_http_fails_initialize_by_its_status_and_body() {
    let (f, _) = fixture();
    f.script(
        "server/discover",
        Canned::new(
            400,
            Some("application/json"),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2027-01-01"]}}}"#,
        ),
    );
    f.script("server/discover", Canned::new(503, None, "later"));
    let mut b = Bridge::start_url(&[], &f.url(), &[]);
    for (id, want) in [
        (
            0,
            json!({"code": -32022, "message": "The upstream server did not complete server/discover",
                   "data": {"cause": "discover_failed", "detail": "Unsupported protocol version"}}),
        ),
        (
            1,
            json!({"code": -32603, "message": "The upstream server did not complete server/discover",
                   "data": {"cause": "discover_failed", "detail": "HTTP 503"}}),
        ),
    ] {
        b.send_request(
            json!(id),
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}),
        );
        assert_eq!(b.recv_response(&json!(id))["error"], want, "{id}");
    }
    // The third try reaches the server, which answers.
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "fixture-http");
}

/// A URL whose server is no MCP endpoint: a file server answers the POST of
/// `server/discover` with 501 and an HTML page (`python -m http.server`'s own words), and the
/// editor's `initialize` gets a detail that says what the status means.
#[test]
fn a_server_that_does_not_take_post_is_named_as_no_mcp_endpoint() {
    let (f, _) = fixture();
    f.script(
        "server/discover",
        Canned::new(
            501,
            Some("text/html;charset=utf-8"),
            "<html><body><h1>Error response</h1><p>Error code: 501</p><p>Message: Unsupported method ('POST').</p></body></html>",
        ),
    );
    let mut b = Bridge::start_url(&[], &f.url(), &[]);
    b.send_request(
        json!(0),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(
        b.recv_response(&json!(0))["error"],
        json!({"code": -32603, "message": "The upstream server did not complete server/discover",
               "data": {"cause": "discover_failed",
                        "detail": "HTTP 501: the server does not take POST at this URL, so it is no MCP endpoint (Streamable HTTP takes the client's messages as POSTs); check the URL"}})
    );
}

/// The body of an HTTP 400 that refuses the request's version and offers `supported`.
fn refused_version(supported: &str) -> Canned {
    Canned::new(
        400,
        Some("application/json"),
        &format!(
            r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32022,"message":"Unsupported protocol version","data":{{"supported":{supported},"requested":"2026-07-28"}}}}}}"#
        ),
    )
}

/// A refusal of the version that offers 2026-07-28 (2026-07-28 basic/versioning: the client
/// SHOULD retry with a version from `data.supported`) gets `server/discover` once more, with
/// a new id, and its answer decides the `initialize`.
#[test]
fn a_discover_refused_with_an_offer_of_2026_07_28_is_sent_once_more() {
    let (f, _) = fixture();
    f.script("server/discover", refused_version(r#"["2026-07-28"]"#));
    let mut b = Bridge::start_url(&[], &f.url(), &[]);
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "fixture-http");
    let discover = f.seen_of("server/discover");
    assert_eq!(
        discover.iter().map(|s| s.status).collect::<Vec<_>>(),
        vec![400, 200]
    );
    assert_ne!(discover[0].body["id"], discover[1].body["id"]);
    assert_eq!(discover[0].body["params"], discover[1].body["params"]);
}

/// A server that refuses every `server/discover` with that offer gets it twice, not more:
/// the second refusal fails the `initialize` as any modern error does.
#[test]
fn a_discover_refused_twice_with_the_offer_fails_initialize_after_two() {
    let (f, _) = fixture();
    f.script("server/discover", refused_version(r#"["2026-07-28"]"#));
    f.script("server/discover", refused_version(r#"["2026-07-28"]"#));
    let mut b = Bridge::start_url(&[], &f.url(), &[]);
    let r = b.request(
        json!(0),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(
        r["error"],
        json!({"code": -32022, "message": "The upstream server did not complete server/discover",
               "data": {"cause": "discover_failed", "detail": "Unsupported protocol version"}})
    );
    assert_eq!(
        f.seen_of("server/discover")
            .iter()
            .map(|s| s.status)
            .collect::<Vec<_>>(),
        vec![400, 400]
    );
}

/// A URL upstream that answers `server/discover` with an SSE stream of keep-alive comments
/// and then nothing is no legacy server (over HTTP a legacy server answers with a status,
/// 2026-07-28 transports/http): `initialize` gets `discover_failed` naming the time limit once
/// it ran out (`--discover-timeout`: no sign-in ran, so none of `--sign-in-timeout` is added), the
/// stderr line says the same, and a later `initialize` against the now answering server
/// succeeds.
#[test]
fn a_discover_stream_of_keep_alives_only_fails_initialize_at_the_discover_time_limit() {
    const DISCOVER: Duration = Duration::from_secs(1);
    const SIGN_IN: Duration = Duration::from_secs(3600);
    let (f, _) = fixture();
    f.script("server/discover", Canned::silent_sse());
    let mut b = Bridge::start_url(
        &["--discover-timeout", "1", "--sign-in-timeout", "3600"],
        &f.url(),
        &[],
    );
    let started = std::time::Instant::now();
    let r = b.initialize_request(json!(1), json!({}));
    let elapsed = started.elapsed();
    // The time limit ran out whole; the sign-in allowance (which, charged, would make the wait
    // an hour longer, far past the harness's wait for the response) was not charged.
    assert!(
        (DISCOVER..DISCOVER + SIGN_IN).contains(&elapsed),
        "{elapsed:?}: {r}"
    );
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603,
            "message": "The upstream server did not complete server/discover",
            "data": {"cause": "discover_failed",
                     "detail": "no answer to server/discover within its time limit of 1 s"}}})
    );
    b.wait_stderr("mcp-bridge: frontend: warn: initialize failed: The upstream server did not complete server/discover (discover_failed, -32603): no answer to server/discover within its time limit of 1 s\n");
    assert!(f.seen_of("initialize").is_empty(), "{:?}", f.seen());
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], json!("fixture-http"));
}
