//! The listen stream, black-box over real pipes: list changes and resource updates reach the
//! editor without the subscription id, in upstream order with results; subscriptions answer
//! after the new stream's acknowledgment; gaps, losses, the waits and refusals. Every frame is
//! validated against the official schemas by the harness.

use crate::common;

use common::{Bridge, error_of, text_of};
use mcp_bridge::log::limit::WARN_BURST;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const SUB: &str = "io.modelcontextprotocol/subscriptionId";

fn ready(bridge_args: &[&str], server_args: &[&str]) -> Bridge {
    let mut b = Bridge::start(bridge_args, server_args);
    b.initialize();
    b
}

fn notify(b: &mut Bridge, id: Value, event: &str, uri: &str) {
    let r = b.tools_call(id, "notify", json!({"event": event, "uri": uri}));
    assert_eq!(text_of(&r), "notified");
}

fn bare(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": method})
}

fn updated(uri: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}})
}

fn list_changes() -> Vec<Value> {
    vec![
        bare("notifications/tools/list_changed"),
        bare("notifications/prompts/list_changed"),
        bare("notifications/resources/list_changed"),
    ]
}

/// `resources/subscribe` of `uri`: the response.
fn subscribe(b: &mut Bridge, id: i64, uri: &str) -> Value {
    b.request(json!(id), "resources/subscribe", json!({"uri": uri}))
}

/// `resources/unsubscribe` of `uri`: the response.
fn unsubscribe(b: &mut Bridge, id: i64, uri: &str) -> Value {
    b.request(json!(id), "resources/unsubscribe", json!({"uri": uri}))
}

/// A bridge whose upstream acknowledges the streams from listen-2 on only after
/// `delay_ms`, with a subscribe of example://readme (id 1) sent and its stream listen-2
/// received by the upstream: the change is in flight.
fn subscribe_in_flight(delay_ms: &str) -> Bridge {
    let mut b = ready(
        &[],
        &["--listen-delay-ms", delay_ms, "--listen-delay-from", "2"],
    );
    b.send_request(
        json!(1),
        "resources/subscribe",
        json!({"uri": "example://readme"}),
    );
    b.wait_upstream(|v| v["id"] == "listen-2");
    b
}

/// Publishes a tools list change and waits for it: whatever the stream delivered for earlier
/// events came before it. Returns the other frames that arrived meanwhile (responses taken).
fn sentinel(b: &mut Bridge, id: Value) -> Vec<Value> {
    notify(b, id, "tools_list_changed", "");
    b.recv_notification("notifications/tools/list_changed");
    b.recv_for(Duration::ZERO)
}

/// The listen requests the upstream received, in order.
fn listens(b: &Bridge) -> Vec<Value> {
    b.upstream_received()
        .into_iter()
        .filter(|v| v["method"] == "subscriptions/listen")
        .collect()
}

/// The position in the upstream's input of the first frame matching `pred`.
fn upstream_position(b: &Bridge, pred: impl Fn(&Value) -> bool) -> Option<usize> {
    b.upstream_received().iter().position(pred)
}

fn cancel_of(id: &str) -> impl Fn(&Value) -> bool + '_ {
    move |v| v["method"] == "notifications/cancelled" && v["params"]["requestId"] == id
}

/// The frames a gap gives: the three list changes, then one update per URI.
fn recv_gap(b: &mut Bridge, uris: &[&str]) -> Vec<Value> {
    (0..3 + uris.len()).map(|_| b.recv()).collect()
}

fn gap(uris: &[&str]) -> Vec<Value> {
    let mut v = list_changes();
    v.extend(uris.iter().map(|u| updated(u)));
    v
}

#[test]
fn the_first_acknowledgment_gives_one_list_change_per_declared_list() {
    let mut b = Bridge::start(&[], &[]);
    let r = b.initialize_only(json!({}));
    assert_eq!(
        r["result"]["capabilities"],
        json!({"logging": {}, "completions": {}, "tools": {"listChanged": true},
               "prompts": {"listChanged": true},
               "resources": {"listChanged": true, "subscribe": true}})
    );
    assert_eq!(recv_gap(&mut b, &[]), list_changes());
    let l = listens(&b);
    assert_eq!(l.len(), 1, "{l:?}");
    assert_eq!(l[0]["id"], "listen-1");
    assert_eq!(
        l[0]["params"]["notifications"],
        json!({"toolsListChanged": true, "promptsListChanged": true,
               "resourcesListChanged": true, "resourceSubscriptions": []})
    );
    assert_eq!(
        l[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(b.recv_for(Duration::from_millis(200)).is_empty());
    assert!(
        !b.stderr_text()
            .contains("acknowledged the listen stream without"),
        "{}",
        b.stderr_text()
    );
}

#[test]
fn list_changes_reach_the_editor_without_the_subscription_id() {
    let mut b = ready(&[], &[]);
    for (i, (event, method)) in [
        ("tools_list_changed", "notifications/tools/list_changed"),
        ("prompts_list_changed", "notifications/prompts/list_changed"),
        (
            "resources_list_changed",
            "notifications/resources/list_changed",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        notify(&mut b, json!(i), event, "");
        assert_eq!(b.recv_notification(method), bare(method));
    }
    assert!(b.recv_for(Duration::from_millis(200)).is_empty());
}

#[test]
fn a_change_written_before_a_result_reaches_the_editor_before_it() {
    let mut b = ready(&[], &[]);
    for i in 0..20i64 {
        let method = if i % 2 == 0 {
            "notifications/tools/list_changed"
        } else {
            "notifications/resources/list_changed"
        };
        let change =
            json!({"jsonrpc": "2.0", "method": method, "params": {"_meta": {SUB: "listen-1"}}});
        // The upstream id of this call: server/discover had 1, each call takes the next one.
        // The fixture writes the change and the result of the call in one write, so the bridge
        // reads both at once (its own result for the call comes later and is dropped).
        let upstream_id = 2 + i;
        let result = json!({"jsonrpc": "2.0", "id": upstream_id, "result": {
            "resultType": "complete", "content": [{"type": "text", "text": format!("result {i}")}]}});
        let chunk = format!("{change}\n{result}");
        b.send_tools_call(json!(i), "emit", json!({"lines": [chunk]}));
        assert_eq!(b.recv(), bare(method), "call {i}");
        let r = b.recv();
        assert_eq!(r["id"], json!(i));
        assert_eq!(text_of(&r), format!("result {i}"));
        let call = b.wait_upstream(|v| v["method"] == "tools/call" && v["id"] == upstream_id);
        assert_eq!(call["params"]["name"], "emit");
    }
}

#[test]
fn subscribe_and_unsubscribe_answer_after_the_new_streams_acknowledgment() {
    let mut b = ready(&[], &[]);
    let r = subscribe(&mut b, 1, "example://readme");
    assert_eq!(r, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    let l = listens(&b);
    assert_eq!(l.len(), 2, "{l:?}");
    assert_eq!(l[1]["id"], "listen-2");
    assert_eq!(
        l[1]["params"]["notifications"]["resourceSubscriptions"],
        json!(["example://readme"])
    );
    // The old stream is cancelled after the new one is acknowledged.
    b.wait_upstream(cancel_of("listen-1"));
    let new = upstream_position(&b, |v| v["id"] == "listen-2");
    assert!(new < upstream_position(&b, cancel_of("listen-1")));
    // A change of the URIs alone gives no list change and no update.
    assert!(b.recv_for(Duration::from_millis(200)).is_empty());

    notify(&mut b, json!(2), "resource_updated", "example://readme");
    assert_eq!(
        b.recv_notification("notifications/resources/updated"),
        updated("example://readme")
    );

    let r = unsubscribe(&mut b, 3, "example://readme");
    assert_eq!(r, json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
    let l = listens(&b);
    assert_eq!(l.len(), 3);
    assert_eq!(
        l[2]["params"]["notifications"]["resourceSubscriptions"],
        json!([])
    );
    b.wait_upstream(cancel_of("listen-2"));
    notify(&mut b, json!(4), "resource_updated", "example://readme");
    assert_eq!(sentinel(&mut b, json!(5)), Vec::<Value>::new());
}

#[test]
fn a_subscription_change_is_answered_only_at_the_late_acknowledgment() {
    let mut b = ready(
        &[],
        &["--listen-delay-ms", "400", "--listen-delay-from", "2"],
    );
    let asked = Instant::now();
    let r = subscribe(&mut b, 1, "example://readme");
    assert_eq!(r["result"], json!({}));
    let waited = asked.elapsed();
    assert!(
        waited >= Duration::from_millis(380),
        "answered after {waited:?}"
    );
    // The old stream was cancelled only after the new one was acknowledged.
    b.wait_upstream(cancel_of("listen-1"));
    assert!(
        upstream_position(&b, |v| v["id"] == "listen-2")
            < upstream_position(&b, cancel_of("listen-1"))
    );
}

#[test]
fn a_uri_already_subscribed_or_not_subscribed_is_answered_at_once() {
    let mut b = ready(&[], &[]);
    let sub = json!({"uri": "example://readme"});
    assert_eq!(
        b.request(json!(1), "resources/subscribe", sub.clone())["result"],
        json!({})
    );
    assert_eq!(
        b.request(json!(2), "resources/subscribe", sub.clone())["result"],
        json!({})
    );
    assert_eq!(
        unsubscribe(&mut b, 3, "example://other")["result"],
        json!({})
    );
    assert_eq!(
        listens(&b).len(),
        2,
        "only the first subscribe opened a stream"
    );
    for (id, params) in [
        (4, json!({})),
        (5, json!({"uri": 7})),
        (6, json!({"uri": ""})),
    ] {
        let r = b.request(json!(id), "resources/subscribe", params);
        assert_eq!(error_of(&r), (-32602, "invalid_params".into()));
    }
}

#[test]
fn updates_arrive_only_for_subscribed_uris() {
    let mut b = ready(&[], &[]);
    for (i, uri) in ["example://a", "example://b/"].into_iter().enumerate() {
        let r = b.request(json!(i), "resources/subscribe", json!({"uri": uri}));
        assert_eq!(r["result"], json!({}));
    }
    let table = [
        ("example://a", true),
        ("example://a/part", true),
        ("example://ab", false),
        ("example://b/x", true),
        ("example://c", false),
    ];
    for (i, (uri, delivered)) in table.into_iter().enumerate() {
        notify(&mut b, json!(format!("n{i}")), "resource_updated", uri);
        let others = sentinel(&mut b, json!(format!("s{i}")));
        let want = if delivered {
            vec![updated(uri)]
        } else {
            vec![]
        };
        assert_eq!(others, want, "{uri}");
    }
}

#[test]
fn only_the_active_streams_events_reach_the_editor() {
    let mut b = ready(&[], &[]);
    assert_eq!(
        subscribe(&mut b, 1, "example://readme")["result"],
        json!({})
    );
    // listen-1 was replaced by listen-2: a late event of listen-1 (or of a stream the bridge
    // never opened) stays inside; the same event of listen-2 reaches the editor.
    let event = |id: &str| {
        json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed",
               "params": {"_meta": {SUB: id}}})
        .to_string()
    };
    let r = b.tools_call(
        json!(2),
        "emit",
        json!({"lines": [event("listen-1"), event("listen-9"), event("listen-2")]}),
    );
    assert_eq!(text_of(&r), "emitted");
    assert_eq!(
        b.recv_for(Duration::ZERO),
        vec![bare("notifications/prompts/list_changed")]
    );
}

#[test]
fn an_older_stream_is_silent_from_the_acknowledgment_of_a_newer_one_on() {
    // listen-2 (the stream of a subscription) is acknowledged late by the fixture; the test
    // writes its acknowledgment itself, followed in the same write by an event of listen-1
    // (still open: the bridge cancels it only after the acknowledgment) and one of listen-2.
    let mut b = subscribe_in_flight("3000");
    let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {SUB: "listen-2"}, "notifications": {"toolsListChanged": true,
        "promptsListChanged": true, "resourcesListChanged": true,
        "resourceSubscriptions": ["example://readme"]}}});
    let event = |method: &str, id: &str| json!({"jsonrpc": "2.0", "method": method, "params": {"_meta": {SUB: id}}});
    let chunk = format!(
        "{ack}\n{}\n{}",
        event("notifications/prompts/list_changed", "listen-1"),
        event("notifications/tools/list_changed", "listen-2")
    );
    b.send_tools_call(json!(2), "emit", json!({"lines": [chunk]}));
    assert_eq!(b.recv(), json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(b.recv(), bare("notifications/tools/list_changed"));
    assert_eq!(text_of(&b.recv()), "emitted");
    b.wait_upstream(cancel_of("listen-1"));
}

#[test]
fn the_server_ending_a_stream_counts_as_a_loss_with_gap_events_both_ways() {
    let mut b = ready(&["--listen-backoff-initial", "0.1"], &[]);
    assert_eq!(
        subscribe(&mut b, 1, "example://readme")["result"],
        json!({})
    );
    for (i, how) in ["result", "cancelled"].into_iter().enumerate() {
        let r = b.tools_call(json!(10 + i), "end_listens", json!({"how": how}));
        assert_eq!(text_of(&r), "ended");
        assert_eq!(
            recv_gap(&mut b, &["example://readme"]),
            gap(&["example://readme"]),
            "{how}"
        );
        let l = listens(&b);
        assert_eq!(l.len(), 3 + i, "{how}");
        assert_eq!(
            l.last()
                .map(|l| l["params"]["notifications"]["resourceSubscriptions"].clone()),
            Some(json!(["example://readme"]))
        );
    }
    b.wait_stderr(
        "mcp-bridge: listener: info: the upstream server ended the listen stream. A new stream follows in 0.1 s.",
    );
    // The new stream works.
    notify(&mut b, json!(20), "resource_updated", "example://readme");
    assert_eq!(
        b.recv_notification("notifications/resources/updated"),
        updated("example://readme")
    );
    // The bridge never cancels a stream the server ended; it cancelled only listen-1.
    let cancels: Vec<Value> = b
        .upstream_received()
        .into_iter()
        .filter(|v| v["method"] == "notifications/cancelled")
        .map(|v| v["params"]["requestId"].clone())
        .collect();
    assert_eq!(cancels, vec![json!("listen-1")]);
}

/// A server that ends every stream at once: the shortest waits (`MIN_LISTEN_WAIT_SECS`) bound
/// the new streams, and the loss lines are limited like the per-frame warnings (the first
/// `WARN_BURST`, then a summary; here the one at exit).
#[test]
fn the_loss_lines_of_a_server_that_ends_every_stream_are_limited() {
    const LOSSES: u64 = 7;
    let mut b = ready(
        &[
            "--listen-backoff-initial",
            "0.05",
            "--listen-backoff-max",
            "0.05",
        ],
        &[],
    );
    for i in 0..LOSSES {
        let r = b.tools_call(json!(i), "end_listens", json!({"how": "result"}));
        assert_eq!(text_of(&r), "ended");
        assert_eq!(recv_gap(&mut b, &[]), list_changes());
    }
    b.close_stdin();
    assert_eq!(b.exit_code(common::RECV_TIMEOUT), Some(0));
    let stderr = b.stderr_to_the_end();
    let logged: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("mcp-bridge: listener: info: the upstream server ended"))
        .collect();
    assert_eq!(
        logged,
        vec![
            "mcp-bridge: listener: info: the upstream server ended the listen stream. A new stream follows in 0.05 s.";
            WARN_BURST as usize
        ],
        "{stderr}"
    );
    let summary = format!(
        "mcp-bridge: listener: info: {} more losses of the listen stream were not logged",
        LOSSES - u64::from(WARN_BURST)
    );
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.contains("more losses"))
            .collect::<Vec<_>>(),
        vec![summary.as_str()],
        "{stderr}"
    );
}

#[test]
fn the_wait_doubles_up_to_the_longest_and_a_stable_stream_resets_it() {
    let mut b = ready(
        &[
            "--listen-backoff-initial",
            "0.2",
            "--listen-backoff-max",
            "0.8",
            "--listen-stable",
            "4",
        ],
        &[],
    );
    let mut expected = Vec::new();
    // Each of these streams must end before it is stable (4 s after its acknowledgment): the
    // test ends it as soon as it has the gap, with 4 s of margin for a busy machine.
    for (i, wait_ms) in [200u64, 400, 800, 800].into_iter().enumerate() {
        // The loss, and so the bridge's wait, comes after the request: timed from here, the
        // new stream can never come sooner than the wait, however slow the pipes are.
        let asked = Instant::now();
        let r = b.tools_call(json!(i), "end_listens", json!({"how": "result"}));
        assert_eq!(text_of(&r), "ended");
        assert_eq!(recv_gap(&mut b, &[]), list_changes());
        let waited = asked.elapsed();
        assert!(
            waited >= Duration::from_millis(wait_ms),
            "loss {i}: the new stream came after {waited:?}, before the wait of {wait_ms} ms"
        );
        expected.push(format!(
            "A new stream follows in {} s.",
            wait_ms as f64 / 1000.0
        ));
    }
    // This stream lives longer than --listen-stable after its acknowledgment (which came
    // before the gap the test has read).
    std::thread::sleep(Duration::from_millis(4100));
    b.tools_call(json!(9), "end_listens", json!({"how": "result"}));
    assert_eq!(recv_gap(&mut b, &[]), list_changes());
    expected.push("A new stream follows in 0.2 s.".into());
    let waits = |stderr: &str| -> Vec<String> {
        let prefix = "mcp-bridge: listener: info: the upstream server ended the listen stream. ";
        stderr
            .lines()
            .filter_map(|l| l.strip_prefix(prefix).map(String::from))
            .collect()
    };
    // The line of the last loss is on stderr before its new stream; the reader may lag.
    common::wait_until(|| waits(&b.stderr_text()).len() >= expected.len());
    assert_eq!(waits(&b.stderr_text()), expected, "{}", b.stderr_text());
}

#[test]
fn a_refused_stream_stops_the_new_attempts() {
    let mut b = Bridge::start(
        &["--listen-backoff-initial", "0.05"],
        &["--listen-error", "-32000:no listens here"],
    );
    b.initialize_only(json!({}));
    b.wait_stderr(
        "mcp-bridge: listener: warn: the upstream server refused the listen stream with the error -32000: no listens here. The bridge sends no more list changes.",
    );
    assert!(b.recv_for(Duration::from_millis(500)).is_empty());
    assert_eq!(listens(&b).len(), 1);
    // Only a change of the subscriptions opens a stream again; its refusal reaches the editor.
    let r = subscribe(&mut b, 1, "example://readme");
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "no listens here"}})
    );
    b.wait_stderr(
        "mcp-bridge: listener: warn: the listen stream for a change of the subscriptions failed: the upstream server refused it with the error -32000: no listens here",
    );
    assert!(b.recv_for(Duration::from_millis(300)).is_empty());
    assert_eq!(listens(&b).len(), 2);
}

#[test]
fn a_refused_new_stream_after_a_loss_stops_the_new_attempts() {
    let mut b = ready(
        &["--listen-backoff-initial", "0.05"],
        &[
            "--listen-error",
            "-32001:gone for good",
            "--listen-error-from",
            "2",
        ],
    );
    b.tools_call(json!(1), "end_listens", json!({"how": "cancelled"}));
    b.wait_stderr(
        "the upstream server refused the listen stream with the error -32001: gone for good.",
    );
    assert!(b.recv_for(Duration::from_millis(500)).is_empty());
    assert_eq!(listens(&b).len(), 2);
}

#[test]
fn a_failed_change_keeps_the_old_stream_and_its_uris() {
    let mut b = ready(
        &[],
        &["--listen-error", "-32000:nope", "--listen-error-from", "3"],
    );
    let a = json!({"uri": "example://a"});
    assert_eq!(
        b.request(json!(1), "resources/subscribe", a.clone())["result"],
        json!({})
    );
    let r = subscribe(&mut b, 2, "example://b");
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32000, "message": "nope"}})
    );
    // listen-2 stays active with example://a only.
    assert!(upstream_position(&b, cancel_of("listen-2")).is_none());
    notify(&mut b, json!(3), "resource_updated", "example://a");
    assert_eq!(sentinel(&mut b, json!(4)), vec![updated("example://a")]);
    // example://b is not subscribed: its unsubscribe needs no stream.
    let r = unsubscribe(&mut b, 5, "example://b");
    assert_eq!(r["result"], json!({}));
    assert_eq!(listens(&b).len(), 3);
}

#[test]
fn a_stream_without_acknowledgment_in_time_is_cancelled_and_opened_again() {
    let mut b = Bridge::start(
        &[
            "--listen-ack-timeout",
            "0.2",
            "--listen-backoff-initial",
            "0.1",
        ],
        &["--listen-delay-ms", "5000"],
    );
    b.initialize_only(json!({}));
    b.wait_stderr(
        "mcp-bridge: listener: warn: the listen stream ended: no acknowledgment within 0.2 s. A new stream follows in 0.1 s.",
    );
    b.wait_upstream(cancel_of("listen-1"));
    b.wait_upstream(|v| v["id"] == "listen-2");
    b.wait_stderr("no acknowledgment within 0.2 s. A new stream follows in 0.2 s.");
    b.wait_upstream(cancel_of("listen-2"));
    assert!(b.recv_for(Duration::from_millis(100)).is_empty());
}

#[test]
fn a_change_without_acknowledgment_in_time_gets_timeout_and_keeps_the_old_stream() {
    let mut b = ready(
        &["--listen-ack-timeout", "0.3"],
        &["--listen-delay-ms", "5000", "--listen-delay-from", "2"],
    );
    let r = subscribe(&mut b, 1, "example://readme");
    assert_eq!(
        r["error"],
        json!({"code": -32603, "message": "The upstream server did not answer in time",
               "data": {"cause": "timeout",
                        "detail": {"method": "subscriptions/listen", "timeoutSeconds": 0.3}}})
    );
    b.wait_upstream(cancel_of("listen-2"));
    b.wait_stderr(
        "mcp-bridge: listener: warn: the listen stream for a change of the subscriptions failed: no acknowledgment within 0.3 s",
    );
    // listen-1 is still the active stream, and the URI is not subscribed.
    assert!(upstream_position(&b, cancel_of("listen-1")).is_none());
    assert_eq!(sentinel(&mut b, json!(2)), Vec::<Value>::new());
    let r = unsubscribe(&mut b, 3, "example://readme");
    assert_eq!(r["result"], json!({}));
    assert_eq!(listens(&b).len(), 2);
}

#[test]
fn the_exit_of_the_upstream_answers_a_change_in_flight() {
    // The acknowledgment never comes within the test: the change is in flight at the crash.
    let mut b = subscribe_in_flight("600000");
    b.send_tools_call(json!(2), "crash", json!({"code": 3}));
    for id in [1, 2] {
        let r = b.recv_response(&json!(id));
        assert_eq!(error_of(&r), (-32603, "upstream_exited".into()), "{id}");
    }
    assert_eq!(b.exit_code(Duration::from_secs(8)), Some(1));
}

#[test]
fn without_list_changes_or_subscribe_no_stream_opens_and_subscribe_is_method_not_found() {
    let mut b = Bridge::start(&[], &["--no-listen"]);
    let r = b.initialize();
    assert_eq!(
        r["result"]["capabilities"],
        json!({"logging": {}, "completions": {}, "tools": {}, "prompts": {}, "resources": {}})
    );
    for (i, m) in ["resources/subscribe", "resources/unsubscribe"]
        .into_iter()
        .enumerate()
    {
        let r = b.request(json!(i), m, json!({"uri": "example://readme"}));
        assert_eq!(error_of(&r), (-32601, "method_not_found".into()), "{m}");
    }
    assert!(b.recv_for(Duration::from_millis(300)).is_empty());
    assert!(listens(&b).is_empty());
}

#[test]
fn the_listen_request_carries_the_last_log_level() {
    let mut b = Bridge::start(&[], &[]);
    b.request(
        json!(0),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "x", "version": "1"}}),
    );
    let r = b.request(json!(1), "logging/setLevel", json!({"level": "warning"}));
    assert_eq!(r["result"], json!({}));
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(recv_gap(&mut b, &[]), list_changes());
    let r = b.request(json!(2), "logging/setLevel", json!({"level": "error"}));
    assert_eq!(r["result"], json!({}));
    subscribe(&mut b, 3, "example://readme");
    let levels: Vec<Value> = listens(&b)
        .iter()
        .map(|l| l["params"]["_meta"]["io.modelcontextprotocol/logLevel"].clone())
        .collect();
    assert_eq!(levels, vec![json!("warning"), json!("error")]);
}

#[test]
fn no_subscription_id_acknowledgment_or_upstream_cancellation_reaches_the_editor() {
    let mut b = ready(&["--listen-backoff-initial", "0.05"], &[]);
    subscribe(&mut b, 1, "example://readme");
    for (i, event) in [
        "tools_list_changed",
        "prompts_list_changed",
        "resources_list_changed",
    ]
    .into_iter()
    .enumerate()
    {
        notify(&mut b, json!(10 + i), event, "");
    }
    notify(&mut b, json!(20), "resource_updated", "example://readme");
    b.recv_notification("notifications/resources/updated");
    for (i, how) in ["cancelled", "result"].into_iter().enumerate() {
        b.tools_call(json!(30 + i), "end_listens", json!({"how": how}));
        recv_gap(&mut b, &["example://readme"]);
    }
    let active = listens(&b)
        .last()
        .map(|l| l["id"].clone())
        .unwrap_or_default();
    let lines = json!([
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
            .to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
               "params": {"_meta": {SUB: active}, "notifications": {}}})
        .to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": "x", "progress": 1, "_meta": {SUB: active}}})
        .to_string(),
    ]);
    b.tools_call(json!(40), "emit", json!({"lines": lines}));
    b.recv_for(Duration::from_millis(200));
    assert!(b.seen.len() > 10);
    for f in &b.seen {
        assert!(f["params"]["_meta"].get(SUB).is_none(), "{f}");
        assert_ne!(f["method"], "notifications/cancelled", "{f}");
        assert_ne!(
            f["method"], "notifications/subscriptions/acknowledged",
            "{f}"
        );
        assert!(
            !f["id"].as_str().is_some_and(|id| id.starts_with("listen-")),
            "{f}"
        );
    }
}

#[test]
fn the_end_of_the_input_cancels_the_stream() {
    let mut b = ready(&[], &[]);
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(5)), Some(0));
    assert!(upstream_position(&b, cancel_of("listen-1")).is_some());
}

#[test]
fn a_subscription_change_in_flight_holds_its_id_and_a_cancelled_one_gets_no_answer() {
    let mut b = ready(
        &[],
        &["--listen-delay-ms", "600", "--listen-delay-from", "2"],
    );
    b.send_request(
        json!(7),
        "resources/subscribe",
        json!({"uri": "example://a"}),
    );
    // Sent raw, so the harness keeps validating id 7's answers as the subscribe's.
    b.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"x\"}}}\n");
    let r = b.recv_response(&json!(7));
    assert_eq!(r["error"]["data"]["cause"], "duplicate_id");
    assert_eq!(b.recv_response(&json!(7))["result"], json!({}));
    // A cancelled change is not answered (the change itself still happens).
    b.send_request(
        json!(8),
        "resources/subscribe",
        json!({"uri": "example://b"}),
    );
    b.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 8}}),
    );
    // The change happens: its stream (listen-3) is acknowledged, then listen-2 is cancelled.
    // An answer to 8 would have been written at that acknowledgment, before the pong.
    b.wait_upstream(cancel_of("listen-2"));
    assert_eq!(b.request(json!(9), "ping", json!({}))["result"], json!({}));
    assert!(
        b.seen.iter().all(|f| f.get("id") != Some(&json!(8))),
        "{:?}",
        b.seen
    );
}
