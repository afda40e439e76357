//! The listen stream's rules, each on its own.

use super::*;
use crate::protocol::revisions::modern::UpstreamNotification;
use crate::protocol::revisions::note::LineLevel;
use std::collections::BTreeSet;
use std::time::Duration;

const ALL: Declared = Declared {
    tools: true,
    prompts: true,
    resources: true,
    subscribe: true,
};

fn set(uris: &[&str]) -> BTreeSet<String> {
    uris.iter().map(|s| s.to_string()).collect()
}

fn note(method: &str, params: &Value) -> UpstreamNotification {
    UpstreamNotification::from_notification(method.into(), params.clone())
}

fn sub(id: &str) -> Value {
    json!({"_meta": {META_SUBSCRIPTION_ID: id}})
}

fn updated(id: &str, uri: &str) -> Value {
    json!({"uri": uri, "_meta": {META_SUBSCRIPTION_ID: id}})
}

#[test]
fn declared_comes_from_the_masked_capabilities() {
    let table = [
        (json!({}), Declared::default()),
        (
            json!({"tools": {"listChanged": true}, "resources": {"subscribe": true}}),
            Declared {
                tools: true,
                subscribe: true,
                ..Declared::default()
            },
        ),
        (
            json!({"prompts": {"listChanged": true}, "resources": {"listChanged": true, "subscribe": false}}),
            Declared {
                prompts: true,
                resources: true,
                ..Declared::default()
            },
        ),
        (
            json!({"tools": {"listChanged": "yes"}}),
            Declared::default(),
        ),
    ];
    for (caps, want) in table {
        assert_eq!(Declared::from_capabilities(&caps), want, "{caps}");
    }
    assert!(!Declared::default().any());
    assert!(
        Declared {
            subscribe: true,
            ..Declared::default()
        }
        .any()
    );
}

#[test]
fn the_filter_asks_for_what_was_declared_and_the_subscribed_uris() {
    let table = [
        (
            ALL,
            set(&["b://2", "a://1"]),
            json!({"toolsListChanged": true,
            "promptsListChanged": true, "resourcesListChanged": true,
            "resourceSubscriptions": ["a://1", "b://2"]}),
        ),
        (
            ALL,
            set(&[]),
            json!({"toolsListChanged": true, "promptsListChanged": true,
            "resourcesListChanged": true, "resourceSubscriptions": []}),
        ),
        (
            Declared {
                tools: true,
                ..Declared::default()
            },
            set(&["a://1"]),
            json!({"toolsListChanged": true}),
        ),
    ];
    for (declared, uris, want) in table {
        assert_eq!(declared.filter(&uris), want);
    }
}

#[test]
fn listen_params_carry_the_meta_and_the_filter() {
    let meta = RequestMeta {
        protocol_version: "2026-07-28".into(),
        client_capabilities: json!({}),
        client_info: Some(json!({"name": "mcp-bridge", "version": "0"})),
        log_level: Some(crate::protocol::revisions::log_level::LogLevel::Warning),
    };
    let p = listen_params(&meta, json!({"toolsListChanged": true}));
    assert_eq!(p["notifications"], json!({"toolsListChanged": true}));
    assert_eq!(p["_meta"]["io.modelcontextprotocol/logLevel"], "warning");
    assert_eq!(
        p["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(listen_id(3), Id::Str("listen-3".into()));
}

#[test]
fn events_become_2025_notifications_without_the_subscription_id() {
    let table = [
        (
            "notifications/tools/list_changed",
            sub("listen-1"),
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
        ),
        (
            "notifications/prompts/list_changed",
            sub("listen-1"),
            json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}),
        ),
        (
            "notifications/resources/list_changed",
            sub("listen-1"),
            json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}),
        ),
        (
            "notifications/resources/updated",
            json!({"uri": "file:///a", "title": "x", "_meta": {META_SUBSCRIPTION_ID: "listen-1", "k": 1}}),
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                   "params": {"uri": "file:///a"}}),
        ),
    ];
    for (method, params, want) in table {
        let e = ListenEvent::from_notification(&note(method, &params));
        assert_eq!(e.map(|e| e.to_editor()), Some(want), "{method}");
    }
    assert_eq!(
        ListenEvent::from_notification(&note("notifications/resources/updated", &sub("x"))),
        None
    );
    assert_eq!(
        ListenEvent::from_notification(&note("notifications/progress", &sub("x"))),
        None
    );
}

#[test]
fn updates_are_allowed_for_subscribed_uris_and_their_sub_resources() {
    let uris = set(&["file:///a", "dir://x/"]);
    let table = [
        ("file:///a", true),
        ("file:///a/b.txt", true),
        ("file:///ab", false),
        ("dir://x/y", true),
        ("dir://x", false),
        ("other://z", false),
    ];
    for (uri, want) in table {
        let e = ListenEvent::ResourceUpdated { uri: uri.into() };
        assert_eq!(ALL.allows(&e, &uris), want, "{uri}");
    }
    let no_subscribe = Declared {
        subscribe: false,
        ..ALL
    };
    let e = ListenEvent::ResourceUpdated {
        uri: "file:///a".into(),
    };
    assert!(!no_subscribe.allows(&e, &uris));
    assert!(!Declared::default().allows(&ListenEvent::ToolsListChanged, &uris));
}

#[test]
fn gap_events_are_one_per_declared_list_and_one_per_uri() {
    let events = ALL.gap_events(&set(&["b://2", "a://1"]));
    assert_eq!(
        events,
        vec![
            ListenEvent::ToolsListChanged,
            ListenEvent::PromptsListChanged,
            ListenEvent::ResourcesListChanged,
            ListenEvent::ResourceUpdated {
                uri: "a://1".into()
            },
            ListenEvent::ResourceUpdated {
                uri: "b://2".into()
            },
        ]
    );
    let only_prompts = Declared {
        prompts: true,
        ..Declared::default()
    };
    assert_eq!(
        only_prompts.gap_events(&set(&["a://1"])),
        vec![ListenEvent::PromptsListChanged]
    );
}

#[test]
fn the_acknowledged_subset_is_compared_with_the_filter() {
    let asked = json!({"toolsListChanged": true, "promptsListChanged": true,
                       "resourceSubscriptions": ["a://1", "b://2"]});
    let table = [
        (asked.clone(), vec![]),
        (
            json!({"toolsListChanged": true, "resourceSubscriptions": ["a://1"]}),
            vec!["promptsListChanged", "resourceSubscriptions"],
        ),
        (
            json!({}),
            vec![
                "toolsListChanged",
                "promptsListChanged",
                "resourceSubscriptions",
            ],
        ),
        (
            json!("not a filter"),
            vec![
                "toolsListChanged",
                "promptsListChanged",
                "resourceSubscriptions",
            ],
        ),
    ];
    for (acked, want) in table {
        assert_eq!(unacknowledged(&asked, &acked), want, "{acked}");
    }
    // An empty set of URIs needs nothing back.
    assert_eq!(
        unacknowledged(&json!({"resourceSubscriptions": []}), &json!({})),
        Vec::<String>::new()
    );
}

#[test]
fn subscription_params_and_changes() {
    assert_eq!(
        resource_uri(Some(&json!({"uri": "a://1"}))),
        Some("a://1".into())
    );
    for bad in [json!({}), json!({"uri": 3}), json!({"uri": ""}), json!([1])] {
        assert_eq!(resource_uri(Some(&bad)), None, "{bad}");
    }
    assert_eq!(resource_uri(None), None);
    let uris = set(&["a://1"]);
    assert_eq!(changed(&uris, true, "a://1"), None);
    assert_eq!(changed(&uris, false, "b://2"), None);
    assert_eq!(
        changed(&uris, true, "b://2"),
        Some(set(&["a://1", "b://2"]))
    );
    assert_eq!(changed(&uris, false, "a://1"), Some(set(&[])));
}

#[test]
fn the_backoff_doubles_up_to_the_longest_wait_and_a_stable_stream_resets_it() {
    let timings = ListenTimings::default();
    let mut b = Backoff::new(timings.backoff_initial, timings.backoff_max);
    let waits: Vec<f64> = (0..9)
        .map(|_| b.after_loss(None, timings.stable).as_secs_f64())
        .collect();
    assert_eq!(waits, vec![0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]);
    // A stream that lived less than 10 s after its acknowledgment keeps the waits growing.
    assert_eq!(
        b.after_loss(Some(Duration::from_millis(9_999)), timings.stable),
        Duration::from_secs(30)
    );
    // One that lived 10 s starts them again.
    assert_eq!(
        b.after_loss(Some(Duration::from_secs(10)), timings.stable),
        Duration::from_millis(500)
    );
    assert_eq!(b.after_loss(None, timings.stable), Duration::from_secs(1));
    let mut odd = Backoff::new(Duration::from_secs(5), Duration::from_secs(2));
    assert_eq!(odd.after_loss(None, timings.stable), Duration::from_secs(2));
    assert_eq!(odd.after_loss(None, timings.stable), Duration::from_secs(2));
}

#[test]
fn stream_ends_decide_the_new_attempts_and_the_editor_error() {
    let refused = StreamEnd::Refused {
        error: json!({"code": -32000, "message": "no listens", "data": {"x": 1}}),
    };
    let timeout = StreamEnd::AckTimeout {
        limit: Duration::from_secs(10),
    };
    let table = [
        (
            StreamEnd::ServerResult,
            true,
            true,
            -32603,
            Some("invalid_response"),
        ),
        (
            StreamEnd::ServerCancelled,
            true,
            true,
            -32603,
            Some("invalid_response"),
        ),
        (
            StreamEnd::Invalid,
            true,
            false,
            -32603,
            Some("invalid_response"),
        ),
        (timeout.clone(), true, false, -32603, Some("timeout")),
        (refused.clone(), false, false, -32000, None),
        (
            StreamEnd::Closed,
            false,
            false,
            -32603,
            Some("upstream_exited"),
        ),
    ];
    for (end, retries, by_server, code, cause) in table {
        assert_eq!(end.retries(), retries, "{end:?}");
        assert_eq!(end.by_server(), by_server, "{end:?}");
        let e = end.change_error().to_value();
        assert_eq!(e["code"], json!(code), "{end:?}");
        assert_eq!(e["data"]["cause"].as_str(), cause, "{end:?}");
    }
    assert_eq!(refused.change_error().to_value()["data"], json!({"x": 1}));
    assert_eq!(
        timeout.change_error().to_value()["data"]["detail"],
        json!({"method": "subscriptions/listen", "timeoutSeconds": 10.0})
    );
}

#[test]
fn log_lines_name_the_wait_or_the_refusal() {
    let wait = Some(Duration::from_millis(500));
    let table = [
        (
            StreamEnd::ServerResult,
            wait,
            LineLevel::Info,
            "the upstream server ended the listen stream. A new stream follows in 0.5 s.",
        ),
        (
            StreamEnd::ServerCancelled,
            Some(Duration::from_secs(30)),
            LineLevel::Info,
            "the upstream server ended the listen stream. A new stream follows in 30 s.",
        ),
        (
            StreamEnd::Invalid,
            Some(Duration::from_secs(2)),
            LineLevel::Warn,
            "the listen stream ended: the upstream server sent an invalid response. A new stream follows in 2 s.",
        ),
        (
            StreamEnd::AckTimeout {
                limit: Duration::from_secs(10),
            },
            wait,
            LineLevel::Warn,
            "the listen stream ended: no acknowledgment within 10 s. A new stream follows in 0.5 s.",
        ),
        (
            StreamEnd::Refused {
                error: json!({"code": -32601, "message": "Method not found"}),
            },
            None,
            LineLevel::Warn,
            "the upstream server refused the listen stream with the error -32601: Method not found. The bridge sends no more list changes.",
        ),
    ];
    for (end, wait, level, text) in table {
        assert_eq!(loss_line(&end, wait), (level, text.to_string()));
    }
    assert_eq!(
        change_failed_line(&StreamEnd::Refused {
            error: json!({"code": 7, "message": "m"})
        }),
        "the listen stream for a change of the subscriptions failed: the upstream server refused it with the error 7: m"
    );
    assert_eq!(seconds(Duration::from_millis(200)), "0.2 s");
    assert_eq!(seconds(Duration::from_millis(1600)), "1.6 s");
}

fn handled(step: Step) -> (Vec<Value>, Option<Fact>) {
    match step {
        Step::Handled { frames, fact } => (frames, fact),
        Step::Pass => panic!("expected the gate to handle it"),
    }
}

#[test]
fn only_the_active_stream_reaches_the_editor_and_an_older_one_never_again() {
    let mut g = ListenGate::new(ALL);
    let (l1, l2) = (listen_id(1), listen_id(2));
    g.register(l1.clone(), 1, set(&[]), None);
    // Nothing before the acknowledgment.
    let (frames, fact) =
        handled(g.on_notification(&note("notifications/tools/list_changed", &sub("listen-1"))));
    assert!(frames.is_empty() && fact.is_none());
    let (frames, fact) = handled(g.on_notification(&note(ACKNOWLEDGED, &sub("listen-1"))));
    assert!(frames.is_empty());
    let all_lists: Vec<String> = [
        "toolsListChanged",
        "promptsListChanged",
        "resourcesListChanged",
    ]
    .map(String::from)
    .to_vec();
    assert_eq!(
        fact,
        Some(Fact::Acked {
            id: l1.clone(),
            missing: all_lists
        })
    );
    assert_eq!(g.active_generation(), 1);
    let (frames, _) =
        handled(g.on_notification(&note("notifications/tools/list_changed", &sub("listen-1"))));
    assert_eq!(frames, vec![ListenEvent::ToolsListChanged.to_editor()]);
    // A second acknowledgment is no new fact.
    assert_eq!(
        handled(g.on_notification(&note(ACKNOWLEDGED, &sub("listen-1")))),
        (vec![], None)
    );

    // A subscription change: the new stream answers the editor at its acknowledgment.
    g.register(l2.clone(), 2, set(&["a://1"]), Some(Id::Int(7)));
    let (frames, _) = handled(g.on_notification(&note(
        "notifications/resources/updated",
        &updated("listen-2", "a://1"),
    )));
    assert!(frames.is_empty(), "not acknowledged yet");
    let (frames, _) = handled(g.on_notification(&note(
        "notifications/prompts/list_changed",
        &sub("listen-1"),
    )));
    assert_eq!(frames.len(), 1, "the old stream is still the active one");
    let honoured = json!({"_meta": {META_SUBSCRIPTION_ID: "listen-2"}, "notifications": {
        "toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true,
        "resourceSubscriptions": ["a://1"]}});
    let (frames, fact) = handled(g.on_notification(&note(ACKNOWLEDGED, &honoured)));
    assert_eq!(
        frames,
        vec![json!({"jsonrpc": "2.0", "id": 7, "result": {}})]
    );
    assert_eq!(
        fact,
        Some(Fact::Acked {
            id: l2.clone(),
            missing: vec![]
        })
    );
    assert_eq!(g.active_generation(), 2);
    // The old stream is not retired yet, but its events no longer reach the editor.
    let (frames, _) =
        handled(g.on_notification(&note("notifications/tools/list_changed", &sub("listen-1"))));
    assert!(frames.is_empty());
    let (frames, _) = handled(g.on_notification(&note(
        "notifications/resources/updated",
        &updated("listen-2", "a://1/x"),
    )));
    assert_eq!(frames.len(), 1);
    let (frames, _) = handled(g.on_notification(&note(
        "notifications/resources/updated",
        &updated("listen-2", "b://2"),
    )));
    assert!(frames.is_empty(), "not a subscribed URI");
    assert!(g.retire(&l1));
    assert!(!g.retire(&l1));
    // A stream the gate does not know: kept inside.
    assert_eq!(
        handled(g.on_notification(&note("notifications/tools/list_changed", &sub("x")))),
        (vec![], None)
    );
    assert_eq!(
        handled(g.on_notification(&note(
            ACKNOWLEDGED,
            &json!({"_meta": {META_SUBSCRIPTION_ID: 5}})
        ))),
        (vec![], None)
    );
}

#[test]
fn ends_are_reported_once_and_a_late_time_limit_does_not_end_an_acknowledged_stream() {
    let mut g = ListenGate::new(ALL);
    let l1 = listen_id(1);
    g.register(l1.clone(), 1, set(&[]), Some(Id::Int(1)));
    let limit = Duration::from_secs(10);
    assert_eq!(
        g.end(&l1, StreamEnd::AckTimeout { limit }),
        Some(Fact::Ended {
            id: l1.clone(),
            end: StreamEnd::AckTimeout { limit },
            acked: false
        })
    );
    // Retired by its end: a late acknowledgment answers nobody.
    assert_eq!(
        handled(g.on_notification(&note(ACKNOWLEDGED, &sub("listen-1")))),
        (vec![], None)
    );
    assert_eq!(g.end(&l1, StreamEnd::ServerResult), None);

    let l2 = listen_id(2);
    g.register(l2.clone(), 2, set(&[]), None);
    handled(g.on_notification(&note(ACKNOWLEDGED, &sub("listen-2"))));
    assert_eq!(g.end(&l2, StreamEnd::AckTimeout { limit }), None);
    // The server ends it with notifications/cancelled.
    let (frames, fact) = handled(g.on_notification(&note(
        "notifications/cancelled",
        &json!({"requestId": "listen-2"}),
    )));
    assert!(frames.is_empty());
    assert_eq!(
        fact,
        Some(Fact::Ended {
            id: l2,
            end: StreamEnd::ServerCancelled,
            acked: true
        })
    );
    // Other cancellations and other notifications pass to the caller.
    assert_eq!(
        g.on_notification(&note("notifications/cancelled", &json!({"requestId": 1}))),
        Step::Pass
    );
    assert_eq!(
        g.on_notification(&note(
            "notifications/progress",
            &json!({"progressToken": "bp-1"})
        )),
        Step::Pass
    );
    assert_eq!(
        g.on_notification(&note("notifications/tools/list_changed", &json!({}))),
        Step::Pass
    );
}

#[test]
fn an_http_listen_failure_reopens_by_the_status_rules() {
    let table: &[(Option<u16>, bool, bool, bool)] = &[
        // status, retries, halts, needs a sign-in
        (None, true, false, false),
        (Some(408), true, false, false),
        (Some(429), true, false, false),
        (Some(500), true, false, false),
        (Some(501), false, true, false),
        (Some(502), true, false, false),
        (Some(503), true, false, false),
        (Some(599), true, false, false),
        (Some(400), false, true, false),
        (Some(401), false, true, true),
        (Some(403), false, true, true),
        (Some(404), false, true, false),
        (Some(405), false, true, false),
    ];
    for &(status, retries, halts, sign_in) in table {
        let end = StreamEnd::Failed {
            status,
            detail: "x".into(),
        };
        assert_eq!(
            (
                end.retries(),
                end.halts(),
                http_status_needs_sign_in(status)
            ),
            (retries, halts, sign_in),
            "{status:?}"
        );
    }
    let e = StreamEnd::Failed {
        status: Some(503),
        detail: "HTTP 503".into(),
    }
    .change_error()
    .to_value();
    assert_eq!(
        e["data"],
        json!({"cause": "transport_failed", "detail": "HTTP 503"})
    );
}
