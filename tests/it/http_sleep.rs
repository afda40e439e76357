//! A long-running bridge in front of a URL upstream outlives its connections (users' reports:
//! after a laptop sleeps, the first request fails on a dead pooled connection and the editor
//! shows the server as broken). A relay (`common/relay.rs`) between the bridge and the fixture
//! makes the open connections die the way a sleep does (silently: the next bytes on one get a
//! reset) or the way a restart of the server on the same port does (closed, the port refusing
//! connections for a while). A request lost on a reused connection before any byte of its
//! response is sent once more on a new connection; the listen stream comes back after its
//! backoff. (An expired token is refreshed before the request goes:
//! `auth_signin::an_expired_token_is_refreshed_on_401_and_a_nearly_expired_one_before_the_request`;
//! its expiry is wall-clock time, which a sleep advances.)

use crate::common;
use crate::common::relay::Relay;
use mcp_test_fixtures::http_fixture::HttpFixture;

use common::{Bridge, text_of, wait_until};
use mcp_bridge::server::{ListenEvent, Outcome, Server, ToolDef};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Short listen waits, so that a stream comes back soon after a loss.
const FAST_LISTEN: &[&str] = &[
    "--listen-backoff-initial",
    "0.05",
    "--listen-backoff-max",
    "0.2",
];

/// How long the restarted server's port refuses connections.
const RESTART_DOWN: Duration = Duration::from_millis(300);

/// A server with `echo` and `notify` (a tools list change on the listen stream); `listen`:
/// whether it offers `subscriptions/listen` (without it the bridge opens no stream, and the
/// only connection of the pool is the last request's).
fn server(listen: bool) -> Server {
    let text = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    Server::builder("fixture-sleep", "1.0.0")
        .listen(listen)
        .tool(ToolDef::new("echo", text), |a, _| async move {
            Ok(Outcome::text(a["text"].as_str().unwrap_or_default()))
        })
        .tool(
            ToolDef::new("notify", json!({"type": "object"})),
            |_, ctx| async move {
                ctx.server().notify(ListenEvent::ToolsListChanged);
                Ok(Outcome::text("notified"))
            },
        )
        .build()
}

fn echo(b: &mut Bridge, id: u64, text: &str) -> Value {
    b.tools_call(json!(id), "echo", json!({ "text": text }))
}

fn listens(f: &HttpFixture) -> usize {
    f.state.listens_opened.load(Ordering::SeqCst)
}

#[test]
fn a_request_lost_on_a_connection_that_died_in_a_sleep_is_sent_once_more_on_a_new_one() {
    let f = HttpFixture::start(server(false), vec![]);
    let relay = Relay::start(f.addr);
    let mut b = Bridge::start_url(&[], &relay.url(), &[]);
    b.initialize();
    assert_eq!(text_of(&echo(&mut b, 1, "before")), "before");
    let accepted = relay.accepted();
    relay.sleep();
    assert_eq!(text_of(&echo(&mut b, 2, "after")), "after");
    // The pooled connection took the POST and was reset; the POST went once more on a new
    // connection, and the server got it once.
    assert_eq!(relay.resets(), 1);
    assert_eq!(relay.accepted(), accepted + 1);
    let calls: Vec<Value> = f
        .seen_of("tools/call")
        .iter()
        .map(|s| s.body["params"]["arguments"]["text"].clone())
        .collect();
    assert_eq!(calls, vec![json!("before"), json!("after")]);
    b.wait_stderr("a POST failed on a reused connection before any byte of its response");
    b.wait_stderr("sent once more on a new connection");
    assert_eq!(text_of(&echo(&mut b, 3, "again")), "again");
}

#[test]
fn after_a_sleep_the_listen_stream_comes_back_and_a_call_goes() {
    let f = HttpFixture::start(server(true), vec![]);
    let relay = Relay::start(f.addr);
    let mut b = Bridge::start_url(FAST_LISTEN, &relay.url(), &[]);
    b.initialize();
    assert!(wait_until(|| listens(&f) == 1));
    relay.sleep();
    // The server's next keep-alive on the dead stream gets a reset: the stream is lost, and
    // the Listener opens a new one after its backoff.
    assert!(
        wait_until(|| listens(&f) == 2),
        "the listen stream came back"
    );
    assert!(relay.resets() >= 1);
    assert_eq!(text_of(&echo(&mut b, 1, "awake")), "awake");
    assert_eq!(
        text_of(&b.tools_call(json!(2), "notify", json!({}))),
        "notified"
    );
    assert_eq!(
        b.recv_notification("notifications/tools/list_changed"),
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
}

#[test]
fn after_the_server_restarts_on_the_same_port_a_call_succeeds_and_the_listen_stream_is_back() {
    let before = HttpFixture::start(server(true), vec![]);
    let relay = Relay::start(before.addr);
    let mut b = Bridge::start_url(FAST_LISTEN, &relay.url(), &[]);
    b.initialize();
    assert_eq!(text_of(&echo(&mut b, 1, "first")), "first");
    assert!(wait_until(|| listens(&before) == 1));
    let after = HttpFixture::start(server(true), vec![]);
    relay.restart(after.addr, RESTART_DOWN);
    assert!(
        wait_until(|| listens(&after) == 1),
        "the listen stream is back on the restarted server"
    );
    assert_eq!(text_of(&echo(&mut b, 2, "second")), "second");
    assert_eq!(after.seen_of("tools/call").len(), 1);
    assert_eq!(before.seen_of("tools/call").len(), 1);
    assert_eq!(
        text_of(&b.tools_call(json!(3), "notify", json!({}))),
        "notified"
    );
    assert_eq!(
        b.recv_notification("notifications/tools/list_changed"),
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
}
