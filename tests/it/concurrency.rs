//! Slots: cancellation, the limit of requests in flight, time limits.

use crate::common;

use common::{Bridge, text_of};
use serde_json::{Value, json};
use std::time::Duration;

fn ready(bridge_args: &[&str]) -> Bridge {
    let mut b = Bridge::start(bridge_args, &[]);
    b.initialize();
    b
}

#[test]
fn a_cancelled_request_gets_no_response_and_the_upstream_gets_the_cancel_with_its_own_id() {
    let mut b = ready(&[]);
    b.send_tools_call(json!("slow-1"), "sleep", json!({"ms": 30000}));
    let up = b.wait_upstream(|v| v["method"] == "tools/call" && v["params"]["name"] == "sleep");
    let upstream_id = up["id"].clone();
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow-1", "reason": "user"}}));
    let cancel = b.wait_upstream(|v| v["method"] == "notifications/cancelled");
    // The upstream id, not the editor's, and the editor's reason unchanged.
    assert_ne!(upstream_id, json!("slow-1"));
    assert_eq!(
        cancel,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": upstream_id, "reason": "user"}})
    );
    assert_eq!(b.request(json!(2), "ping", json!({}))["result"], json!({}));
    let later = b.recv_for(Duration::from_millis(300));
    assert!(
        later.iter().all(|f| f.get("id") != Some(&json!("slow-1"))),
        "{later:?}"
    );
    assert!(b.seen.iter().all(|f| f.get("id") != Some(&json!("slow-1"))));
}

#[test]
fn a_cancel_without_a_string_reason_reaches_the_upstream_without_one() {
    let mut b = ready(&[]);
    for (id, ms, reason) in [(1, 30001, None), (2, 30002, Some(json!(3)))] {
        b.send_tools_call(json!(id), "sleep", json!({"ms": ms}));
        let up = b.wait_upstream(|v| v["params"]["arguments"]["ms"] == ms);
        let mut params = json!({"requestId": id});
        if let Some(r) = reason {
            params["reason"] = r;
        }
        b.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}));
        let cancel = b.wait_upstream(|v| {
            v["method"] == "notifications/cancelled" && v["params"]["requestId"] == up["id"]
        });
        assert_eq!(
            cancel,
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": up["id"]}})
        );
    }
}

#[test]
fn progress_and_log_messages_of_a_cancelled_request_are_dropped() {
    let mut b = ready(&[]);
    b.request(json!(1), "logging/setLevel", json!({"level": "info"}));
    b.send_request(
        json!(2),
        "tools/call",
        json!({"name": "chatter", "arguments": {"interval_ms": 20, "late": 5},
               "_meta": {"progressToken": "p-2"}}),
    );
    // It chatters while it is in flight.
    let first = b.recv_notification("notifications/progress");
    assert_eq!(
        first["params"],
        json!({"progressToken": "p-2", "progress": 1, "message": "tick 1"})
    );
    let log = b.recv_notification("notifications/message");
    assert_eq!(
        log["params"],
        json!({"level": "info", "logger": "chatter", "data": "tick 1"})
    );
    b.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 2, "reason": "the user pressed stop"}}),
    );
    let up = b.wait_upstream(|v| v["method"] == "tools/call" && v["params"]["name"] == "chatter");
    let cancel = b.wait_upstream(|v| v["method"] == "notifications/cancelled");
    assert_eq!(
        cancel["params"],
        json!({"requestId": up["id"], "reason": "the user pressed stop"})
    );
    // The fixture writes 5 late progress and log messages after the cancel, then a tools
    // list change: once that is here, every late line has been handled.
    b.recv_notification("notifications/tools/list_changed");
    b.recv_for(Duration::ZERO); // the backlog: already in `seen`
    let frames: Vec<Value> = b.seen.clone();
    let ticks = |method: &str| -> Vec<Value> {
        frames
            .iter()
            .filter(|f| f["method"] == method)
            .map(|f| f["params"].clone())
            .collect()
    };
    // Only ticks, numbered without a gap, arrived: those written before the cancel.
    let progress = ticks("notifications/progress");
    let logs = ticks("notifications/message");
    for (i, p) in progress.iter().enumerate() {
        let n = i + 1;
        assert_eq!(
            p,
            &json!({"progressToken": "p-2", "progress": n, "message": format!("tick {n}")})
        );
    }
    for (i, l) in logs.iter().enumerate() {
        let n = i + 1;
        assert_eq!(
            l,
            &json!({"level": "info", "logger": "chatter", "data": format!("tick {n}")})
        );
    }
    assert!(
        frames.iter().all(|f| f.get("id") != Some(&json!(2))),
        "no response to the cancelled request"
    );
    // The bridge still forwards what belongs to a live request.
    let r = b.tools_call(
        json!(3),
        "log",
        json!({"level": "error", "message": "after"}),
    );
    assert_eq!(text_of(&r), "logged");
    let after = b.take_notifications("notifications/message");
    assert_eq!(
        after
            .iter()
            .map(|f| f["params"]["data"].clone())
            .collect::<Vec<_>>(),
        vec![json!("after")]
    );
}

#[test]
fn the_257th_request_in_flight_gets_too_many_requests_at_once() {
    let mut b = ready(&[]);
    for i in 0..256 {
        b.send_tools_call(json!(i), "sleep", json!({"ms": 600_000}));
    }
    // None of the 256 ends by itself: the answer can only be the error at once, never a
    // request that waited for a slot.
    let r = b.tools_call(json!(256), "echo", json!({"text": "x"}));
    assert_eq!(
        r["error"],
        json!({"code": -32603, "message": "Too many requests in flight", "data": {"cause": "too_many_requests", "detail": 256}})
    );
    // The reader still reads: a cancel frees a slot, and the next request is admitted.
    b.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 0}}),
    );
    let r = b.tools_call(json!(257), "echo", json!({"text": "in"}));
    assert_eq!(text_of(&r), "in");
    assert_eq!(
        b.request(json!(258), "ping", json!({}))["result"],
        json!({})
    );
}

#[test]
fn a_request_past_its_time_limit_gets_timeout_and_is_cancelled_upstream() {
    let mut b = ready(&["--call-timeout", "0.5"]);
    let r = b.tools_call(json!(1), "sleep", json!({"ms": 20000}));
    assert_eq!(
        r["error"],
        json!({"code": -32603, "message": "The upstream server did not answer in time",
               "data": {"cause": "timeout", "detail": {"method": "tools/call", "timeoutSeconds": 0.5}}})
    );
    let up = b.wait_upstream(|v| v["method"] == "tools/call");
    let cancel = b.wait_upstream(|v| v["method"] == "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], up["id"]);
}

#[test]
fn concurrent_requests_complete_independently_and_in_any_order() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize_with(json!({"elicitation": {}}));
    // "long" stays in flight until the editor answers its question: no time involved.
    b.send_tools_call(json!("long"), "ask_name", json!({}));
    b.send_tools_call(json!("short"), "echo", json!({"text": "fast"}));
    let first = b.recv_response(&json!("short"));
    assert_eq!(text_of(&first), "fast");
    assert!(b.seen.iter().all(|f| f.get("id") != Some(&json!("long"))));
    b.send(&json!({"jsonrpc": "2.0", "id": "b-1", "result": {"action": "accept", "content": {"name": "Bo"}}}));
    let second = b.recv_response(&json!("long"));
    assert_eq!(text_of(&second), "Hello, Bo!");
    // Upstream ids are the bridge's own, never the editor's (listen ids are strings of the
    // bridge's Listener): the era probe's is a string of its own, the others are numbers.
    let ids: Vec<Value> = b
        .upstream_received()
        .iter()
        .filter(|v| v["method"] != "subscriptions/listen")
        .filter_map(|v| v.get("id").cloned())
        .collect();
    assert_eq!(ids.first(), Some(&json!("mcp-bridge-probe-1")), "{ids:?}");
    assert!(ids[1..].iter().all(|id| id.is_i64()), "{ids:?}");
}
