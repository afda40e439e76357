//! The era fallback: a 2025-11-25-only server behind the bridge, over real pipes. The
//! upstream is `mcp-legacy-server`, which answers `server/discover` the way the TypeScript SDK
//! 1.x (-32601) and Python `mcp` 1.x (-32602) servers do, or not at all. After one info line,
//! the 2025-11-25 protocol passes through unchanged, both ways; the bridge still answers what
//! it must itself (docs/errors.md).

use crate::common;

use common::{Bridge, error_of, text_of};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn legacy_bin() -> String {
    common::legacy_server_bin().to_string()
}

/// `mcp-bridge <bridge_args> -- mcp-legacy-server <server_args>`.
fn start(bridge_args: &[&str], server_args: &[&str]) -> Bridge {
    let mut upstream = vec![legacy_bin()];
    upstream.extend(server_args.iter().map(|s| s.to_string()));
    Bridge::start_cmd(bridge_args, &upstream)
}

/// The lines the upstream received, verbatim, once there are at least `n`.
fn upstream_lines(b: &Bridge, n: usize) -> Vec<String> {
    let end = Instant::now() + common::RECV_TIMEOUT;
    loop {
        let text = std::fs::read_to_string(&b.trace).unwrap_or_default();
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        if lines.len() >= n {
            return lines;
        }
        assert!(
            Instant::now() < end,
            "the upstream received {} lines, not {n}: {lines:#?}",
            lines.len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn line(v: &Value) -> String {
    serde_json::to_string(v).expect("serialize")
}

fn initialize_request(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"sampling": {}},
            "clientInfo": {"name": "blackbox-test", "version": "1.0.0"}}})
}

fn legacy_initialize_result() -> Value {
    json!({"protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": true}, "logging": {}},
        "serverInfo": {"name": "mcp-legacy-server", "version": env!("CARGO_PKG_VERSION")}})
}

fn info_lines(b: &Bridge) -> Vec<String> {
    b.stderr_text()
        .lines()
        .filter(|l| l.contains("speaks 2025-11-25"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_legacy_server_gets_the_editors_messages_unchanged_after_one_info_line() {
    for (mode, sign) in [
        (
            "method-not-found",
            r#"it answered server/discover with -32601 "Method not found""#,
        ),
        (
            "invalid-params",
            r#"it answered server/discover with -32602 "Invalid request parameters""#,
        ),
    ] {
        let mut b = start(&[], &["--discover-answer", mode]);
        let init = initialize_request(0);
        b.send(&init);
        assert_eq!(
            b.recv_response(&json!(0)),
            json!({"jsonrpc": "2.0", "id": 0, "result": legacy_initialize_result()})
        );
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        b.send(&initialized);
        let list = json!({"jsonrpc": "2.0", "id": "l", "method": "tools/list", "params": {"_meta": {"k": 1.50}}});
        b.send(&list);
        let tools = b.recv_response(&json!("l"));
        assert_eq!(
            tools["result"]["tools"][0],
            json!({"name": "echo", "inputSchema": {"type": "object"}})
        );
        assert_eq!(tools["result"]["tools"].as_array().map(Vec::len), Some(8));
        let r = b.tools_call(json!(12), "echo", json!({"text": "hé"}));
        assert_eq!(
            r,
            json!({"jsonrpc": "2.0", "id": 12, "result": {"content": [{"type": "text", "text": "hé"}]}})
        );

        let got = upstream_lines(&b, 5);
        let discover: Value = serde_json::from_str(&got[0]).expect("json");
        assert_eq!(discover["method"], "server/discover", "{mode}");
        // Byte for byte what the editor wrote, in its order.
        assert_eq!(got[1], line(&init), "{mode}");
        assert_eq!(got[2], line(&initialized), "{mode}");
        assert_eq!(got[3], line(&list), "{mode}");
        assert_eq!(got.len(), 5, "{mode}: {got:#?}");

        b.wait_stderr("speaks 2025-11-25");
        assert_eq!(
            info_lines(&b),
            vec![format!(
                "mcp-bridge: frontend: info: the upstream server speaks 2025-11-25 or earlier ({sign}): passing the 2025-11-25 protocol through unchanged"
            )],
            "{mode}"
        );
        b.close_stdin();
        assert_eq!(b.exit_code(Duration::from_secs(10)), Some(0), "{mode}");
    }
}

#[test]
fn server_to_client_requests_progress_and_list_changes_pass_both_ways() {
    let mut b = start(&[], &[]);
    b.send(&initialize_request(0));
    b.recv_response(&json!(0));
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    // Sampling: the upstream's request reaches the editor with the upstream's id, and the
    // editor's answer reaches the upstream unchanged.
    b.send_tools_call(json!("c1"), "ask", json!({"prompt": "hi"}));
    let sampling = b.recv();
    assert_eq!(
        sampling,
        json!({"jsonrpc": "2.0", "id": "s-1", "method": "sampling/createMessage",
            "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 10}})
    );
    let answer = json!({"jsonrpc": "2.0", "id": "s-1", "result": {"role": "assistant",
        "content": {"type": "text", "text": "hello"}, "model": "m"}});
    b.send(&answer);
    assert_eq!(text_of(&b.recv_response(&json!("c1"))), "hello");
    assert!(upstream_lines(&b, 5).contains(&line(&answer)));

    // Progress with the editor's own token, in order, then the result.
    b.send_request(
        json!(2),
        "tools/call",
        json!({"name": "count", "arguments": {"n": 3}, "_meta": {"progressToken": "p"}}),
    );
    let r = b.recv_response(&json!(2));
    assert_eq!(text_of(&r), "counted 3");
    let progress = b.take_notifications("notifications/progress");
    assert_eq!(
        progress,
        (1..=3)
            .map(
                |i| json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": "p", "progress": i, "total": 3}})
            )
            .collect::<Vec<_>>()
    );

    // A list change, before the result it came before.
    b.send_tools_call(json!(3), "flip", json!({}));
    assert_eq!(
        b.recv(),
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    assert_eq!(text_of(&b.recv_response(&json!(3))), "flipped");
    // The bridge started no listen stream and sent nothing of its own after discover.
    let sent: Vec<Value> = upstream_lines(&b, 7)
        .iter()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(sent.len(), 7, "{sent:#?}");
    assert_eq!(
        sent.iter()
            .filter(|v| v["method"] == "server/discover" || v["method"] == "subscriptions/listen")
            .count(),
        1
    );
}

#[test]
fn a_cancel_passes_unchanged_and_the_request_is_never_answered() {
    let mut b = start(&[], &[]);
    b.send(&initialize_request(0));
    b.recv_response(&json!(0));
    b.send_tools_call(json!(7), "slow", json!({}));
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "user stop"}});
    b.send(&cancel);
    let r = b.tools_call(json!(8), "cancelled", json!({}));
    assert_eq!(text_of(&r), "[7]");
    let got = upstream_lines(&b, 5);
    assert_eq!(got[3], line(&cancel));
    // The id is free again: the editor may reuse it.
    let r = b.tools_call(json!(7), "echo", json!({"text": "again"}));
    assert_eq!(text_of(&r), "again");
    assert!(
        b.seen.iter().filter(|f| f["id"] == json!(7)).count() == 1,
        "{:#?}",
        b.seen
    );
}

#[test]
fn a_response_after_the_editors_cancel_is_not_passed_on() {
    let mut b = start(&[], &[]);
    b.send(&initialize_request(0));
    b.recv_response(&json!(0));
    b.send_tools_call(json!(9), "stubborn", json!({}));
    b.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}),
    );
    // The server answers 9 ("too late") before it reads the next call: that answer would
    // arrive first.
    let r = b.tools_call(json!(10), "echo", json!({"text": "next"}));
    assert_eq!(text_of(&r), "next");
    assert_eq!(
        b.seen.iter().map(|f| f["id"].clone()).collect::<Vec<_>>(),
        vec![json!(0), json!(10)]
    );
    b.wait_stderr("mcp-legacy-server: notification notifications/cancelled");
}

#[test]
fn requests_pipelined_after_initialize_wait_for_the_era_and_keep_their_order() {
    // The upstream does not answer discover: the era is decided after --discover-timeout.
    let mut b = start(
        &["--discover-timeout", "0.5"],
        &["--discover-answer", "none"],
    );
    let init = initialize_request(1);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let mut all = Vec::new();
    for v in [&init, &initialized, &list] {
        all.extend_from_slice(line(v).as_bytes());
        all.push(b'\n');
    }
    b.send_raw(&all);
    // A ping during the decision is answered at once, by the bridge.
    let ping = b.request(json!("p"), "ping", json!({}));
    assert_eq!(ping, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
    assert_eq!(
        b.recv_response(&json!(1)),
        json!({"jsonrpc": "2.0", "id": 1, "result": legacy_initialize_result()})
    );
    assert_eq!(
        b.recv_response(&json!(2))["result"]["tools"]
            .as_array()
            .map(Vec::len),
        Some(8)
    );
    let got = upstream_lines(&b, 4);
    let methods: Vec<Value> = got
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).expect("json")["method"].clone())
        .collect();
    // The timed-out probe is left running (not cancelled: a late answer is read and dropped),
    // and its id is the bridge's own, never the editor's 1.
    assert_eq!(
        methods,
        vec![
            json!("server/discover"),
            json!("initialize"),
            json!("notifications/initialized"),
            json!("tools/list")
        ]
    );
    let discover: Value = serde_json::from_str(&got[0]).expect("json");
    assert_eq!(discover["id"], json!("mcp-bridge-probe-1"));
    assert_eq!(&got[1..4], &[line(&init), line(&initialized), line(&list)]);
    b.wait_stderr("speaks 2025-11-25");
    assert_eq!(
        info_lines(&b),
        vec!["mcp-bridge: frontend: info: the upstream server speaks 2025-11-25 or earlier (it did not answer server/discover within --discover-timeout, 0.5 s): passing the 2025-11-25 protocol through unchanged".to_string()]
    );
}

#[test]
fn the_upstream_going_away_answers_every_request_in_flight() {
    let mut b = start(&[], &[]);
    b.send(&initialize_request(0));
    b.recv_response(&json!(0));
    b.send_tools_call(json!(5), "slow", json!({}));
    b.send_tools_call(json!("x"), "exit", json!({"code": 3}));
    let frames = b.recv_to_the_end();
    let exited = |id: Value| {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603,
            "message": "The upstream server exited", "data": {"cause": "upstream_exited"}}})
    };
    let mut got = frames.clone();
    got.sort_by_key(|f| f["id"].to_string());
    // Sorted by the id's JSON text: "\"x\"" before "5".
    assert_eq!(
        got,
        vec![exited(json!("x")), exited(json!(5))],
        "{frames:#?}"
    );
    assert_eq!(b.exit_code(Duration::from_secs(10)), Some(1));
    b.wait_stderr("mcp-bridge: upstream: error: the upstream server exited (exit code 3)");
}

#[test]
fn the_bridge_still_answers_bad_lines_duplicate_ids_and_the_in_flight_limit() {
    let mut b = start(&["--max-in-flight", "2"], &[]);
    b.send(&initialize_request(0));
    b.recv_response(&json!(0));
    b.send_tools_call(json!(1), "slow", json!({}));
    let dup = b.tools_call(json!(1), "echo", json!({"text": "x"}));
    assert_eq!(error_of(&dup), (-32600, "duplicate_id".into()));
    b.send_tools_call(json!(2), "slow", json!({}));
    let over = b.tools_call(json!(3), "echo", json!({"text": "x"}));
    assert_eq!(
        over["error"],
        json!({"code": -32603, "message": "Too many requests in flight",
            "data": {"cause": "too_many_requests", "detail": 2}})
    );
    b.send_raw(b"{not json\n");
    assert_eq!(
        b.recv(),
        json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error",
            "data": {"cause": "parse_error"}}})
    );
    // None of these reached the upstream: discover, initialize and the two slow calls.
    let got = upstream_lines(&b, 4);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(upstream_lines(&b, 4).len(), 4, "{got:#?}");
}

#[test]
fn a_modern_error_to_discover_never_falls_back() {
    let mut b = Bridge::start(
        &[],
        &["--discover-error", "-32022:Unsupported protocol version"],
    );
    let r = b.request(
        json!(0),
        "initialize",
        initialize_request(0)["params"].clone(),
    );
    assert_eq!(
        r["error"],
        json!({"code": -32022, "message": "The upstream server did not complete server/discover",
            "data": {"cause": "discover_failed", "detail": "Unsupported protocol version"}})
    );
    assert!(info_lines(&b).is_empty());
    let methods: Vec<Value> = b
        .upstream_received()
        .iter()
        .map(|v| v["method"].clone())
        .collect();
    assert_eq!(methods, vec![json!("server/discover")]);
}

/// The warning for a 2026-07-28 server that answers the probe after `--discover-timeout`.
const LATE_DISCOVER_WARNING: &str = "mcp-bridge: upstream: warn: the upstream server answered server/discover late: it speaks 2026-07-28, but the bridge took it for a 2025-11-25 server when it did not answer within --discover-timeout; start the bridge with a longer --discover-timeout\n";

/// A legacy server that starts late (`--start-gate`: it reads nothing until the test opens
/// the gate, after the era was decided by its silence) reads the probe and then the editor's
/// `initialize`, both with "id 1" before the fix. The probe has the bridge's own id, its
/// late -32601 is dropped, and the editor's `initialize` gets the server's real result. (The
/// passed-through `initialize` has `--discover-timeout` too: 5 s leave a busy machine room to
/// start the server once the gate opens.)
#[test]
fn a_late_legacy_server_answers_the_editors_initialize_never_the_probes() {
    let gate = common::scratch_dir("gate").join("open");
    let gate_arg = gate.to_string_lossy().into_owned();
    let mut b = start(
        &["--discover-timeout", "5", "--log-level", "debug"],
        &["--start-gate", &gate_arg],
    );
    let init = initialize_request(1);
    b.send(&init);
    b.wait_stderr("it did not answer server/discover within --discover-timeout, 5 s");
    std::fs::write(&gate, b"").expect("open the gate");
    assert_eq!(
        b.recv_response(&json!(1)),
        json!({"jsonrpc": "2.0", "id": 1, "result": legacy_initialize_result()})
    );
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    b.send(&initialized);
    let r = b.tools_call(json!(2), "echo", json!({"text": "after a late start"}));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 2,
            "result": {"content": [{"type": "text", "text": "after a late start"}]}})
    );
    // The probe's answer came before the initialize result: had it been relayed, it would
    // have reached the editor first.
    assert_eq!(
        b.seen.iter().map(|f| f["id"].clone()).collect::<Vec<_>>(),
        vec![json!(1), json!(2)],
        "{:#?}",
        b.seen
    );
    b.wait_stderr(r#"upstream: debug: id="mcp-bridge-probe-1" method=server/discover outcome=dropped in pass-through time_ms="#);
    let got = upstream_lines(&b, 4);
    let discover: Value = serde_json::from_str(&got[0]).expect("json");
    assert_eq!(
        (&discover["id"], &discover["method"]),
        (&json!("mcp-bridge-probe-1"), &json!("server/discover"))
    );
    assert_eq!(got[1], line(&init));
    assert_eq!(got[2], line(&initialized));
    assert_eq!(got.len(), 4, "{got:#?}");
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(10)), Some(0));
    assert!(
        !b.stderr_to_the_end()
            .contains("answered server/discover late"),
        "a legacy server's late -32601 is no modern sign"
    );
}

/// A bridge with `--discover-timeout 0.5` in front of the fixture server that answers
/// `server/discover` only once the returned gate file exists; the editor's `initialize` (id 1)
/// has been sent and answered (the answer is returned): the bridge is in pass-through.
fn slow_modern_server_initialized() -> (Bridge, std::path::PathBuf, Value) {
    let gate = common::scratch_dir("gate").join("open");
    let gate_arg = gate.to_string_lossy().into_owned();
    let mut b = Bridge::start(
        &["--discover-timeout", "0.5"],
        &["--discover-gate", &gate_arg],
    );
    let r = b.request(
        json!(1),
        "initialize",
        initialize_request(1)["params"].clone(),
    );
    (b, gate, r)
}

/// The risk of the no-answer rule (2026-07-28 basic/versioning): a 2026-07-28 server too slow
/// for `--discover-timeout` is taken for a legacy one. The fixture server (`--discover-gate`:
/// it answers discover when the test says) refuses the passed-through `initialize` with -32022
/// naming its versions (2026-07-28 basic/versioning), not with "Request id already in flight"
/// (the probe's id is not the editor's 1); its late `DiscoverResult` is dropped with one
/// warning naming `--discover-timeout`.
#[test]
fn a_modern_server_too_slow_for_discover_is_taken_for_legacy_and_the_late_answer_says_so() {
    let (mut b, gate, r) = slow_modern_server_initialized();
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"}}})
    );
    b.wait_stderr("it did not answer server/discover within --discover-timeout, 0.5 s");
    std::fs::write(&gate, b"").expect("open the gate");
    b.wait_stderr(LATE_DISCOVER_WARNING);
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(10)), Some(0));
    assert_eq!(
        b.stderr_lines_to_the_end(|l| l.contains(": warn: ")),
        vec![LATE_DISCOVER_WARNING.trim_end().to_string()]
    );
    assert_eq!(
        b.seen.iter().map(|f| f["id"].clone()).collect::<Vec<_>>(),
        vec![json!(1)]
    );
}

/// The probe's id is reserved while the probe is unanswered: an editor request passed through
/// with that very id is not sent (its answer could not be told from the probe's, and the
/// probe's late `DiscoverResult` would reach the editor as its answer); it gets
/// `duplicate_id` at once, the late answer is still dropped with its warning, and other ids
/// pass.
#[test]
fn an_editor_request_with_the_id_of_the_unanswered_probe_gets_duplicate_id_and_is_not_sent() {
    let (mut b, gate, r) = slow_modern_server_initialized();
    assert_eq!(r["error"]["code"], json!(-32022), "{r}");
    let list =
        |id: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}});
    b.send(&list(json!("mcp-bridge-probe-1")));
    assert_eq!(
        b.recv_response(&json!("mcp-bridge-probe-1")),
        json!({"jsonrpc": "2.0", "id": "mcp-bridge-probe-1", "error": {"code": -32600,
            "message": "Invalid request: the id is in use by a request in flight",
            "data": {"cause": "duplicate_id"}}})
    );
    std::fs::write(&gate, b"").expect("open the gate");
    b.wait_stderr(LATE_DISCOVER_WARNING);
    // Another id passes: answered by the server itself (a 2026-07-28 server refuses a
    // request without _meta).
    b.send(&list(json!("mcp-bridge-probe-2")));
    let r = b.recv_response(&json!("mcp-bridge-probe-2"));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": "mcp-bridge-probe-2", "error": {"code": -32602,
            "message": "params._meta is required and must be an object"}})
    );
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(10)), Some(0));
    assert_eq!(
        b.seen.iter().map(|f| f["id"].clone()).collect::<Vec<_>>(),
        vec![
            json!(1),
            json!("mcp-bridge-probe-1"),
            json!("mcp-bridge-probe-2")
        ]
    );
}

/// In pass-through too, an answer of the server over `--max-line-bytes` fails its request with
/// `invalid_response` (its detail names the limit and the option) and one warning, never a
/// second "not a JSON-RPC message" warning.
#[test]
fn an_answer_over_the_line_limit_fails_its_request_with_invalid_response_and_one_warning() {
    let mut b = start(
        &["--max-line-bytes", "4096"],
        &["--discover-answer", "method-not-found"],
    );
    b.send(&initialize_request(0));
    assert_eq!(
        b.recv_response(&json!(0)),
        json!({"jsonrpc": "2.0", "id": 0, "result": legacy_initialize_result()})
    );
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let r = b.tools_call(json!(5), "large", json!({"bytes": 5000}));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32603,
            "message": "The upstream server sent an invalid response",
            "data": {"cause": "invalid_response",
                "detail": "the upstream's answer is a line over the limit of 4096 bytes (--max-line-bytes raises it)"}}})
    );
    assert_eq!(
        b.tools_call(json!(6), "echo", json!({"text": "still"}))["result"]["content"][0]["text"],
        "still"
    );
    b.close_stdin();
    let warnings = b.stderr_lines_to_the_end(|l| l.starts_with("mcp-bridge: upstream: warn: "));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("mcp-bridge: upstream: warn: the upstream sent a line of ")
            && warnings[0].ends_with(" bytes, over the limit of 4096 bytes"),
        "{}",
        warnings[0]
    );
}

/// A failed `initialize` says why on both sides: the editor's error carries the upstream's
/// code and message (`data.detail`), and the bridge's stderr line says the same.
#[test]
fn a_failed_initialize_says_why_to_the_editor_and_on_stderr() {
    let mut b = Bridge::start(&[], &["--discover-error", "-32022:too new"]);
    let r = b.initialize_request(json!(1), json!({}));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022,
            "message": "The upstream server did not complete server/discover",
            "data": {"cause": "discover_failed", "detail": "too new"}}})
    );
    b.wait_stderr("mcp-bridge: frontend: warn: initialize failed: The upstream server did not complete server/discover (discover_failed, -32022): too new\n");
}

/// A command whose shell or `env` exits 127 or 126 at `server/discover` (the program it was to
/// run not found, or not executable) never ran: it is not started again for `initialize` as a
/// server that ended its session is, and the detail says what the code means.
#[test]
fn a_launcher_that_exits_127_or_126_is_not_started_again_and_the_detail_says_why() {
    for (code, why) in [
        (
            127,
            "a program it runs was not found (the code of a shell or env: a #! interpreter, a command of a script, an npx or uvx package)",
        ),
        (
            126,
            "a program it runs cannot be executed (the code of a shell or env: no permission, or not a program)",
        ),
    ] {
        let d = common::scratch_dir(&format!("exit-{code}"));
        let starts = d.join("starts");
        let script = format!("echo started >> '{}'; exit {code}", starts.display());
        let mut b = Bridge::start_cmd(&[], &["sh".into(), "-c".into(), script]);
        let r = b.initialize_request(json!(1), json!({}));
        let detail = format!("exit code {code}: {why}");
        assert_eq!(
            r,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603,
                "message": "The upstream server exited",
                "data": {"cause": "upstream_exited", "detail": detail}}})
        );
        b.wait_stderr(&format!("mcp-bridge: frontend: warn: initialize failed: The upstream server exited (upstream_exited, -32603): {detail}\n"));
        assert_eq!(
            std::fs::read_to_string(&starts)
                .expect("starts")
                .lines()
                .count(),
            1,
            "started once"
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// An upstream that exits during `initialize`: the editor's `upstream_exited` names the exit
/// status (a code or a signal), and so does the stderr line of the failed `initialize`; one
/// that closes its stdout and keeps running is killed by the bridge after `EXIT_STATUS_WAIT`
/// (500 ms), and the detail says so.
#[test]
fn an_upstream_that_exits_during_initialize_is_named_with_its_exit_status() {
    for (script, status, detail) in [
        (
            "echo oops >&2; exit 3",
            "exit code 3",
            "exit code 3; its stderr ended with: \"oops\"",
        ),
        ("kill -9 $$", "signal 9", "signal 9"),
        (
            "exec >&-; exec sleep 600",
            "it closed its stdout and was still running 500 ms later: the bridge killed it (SIGKILL)",
            "it closed its stdout and was still running 500 ms later: the bridge killed it (SIGKILL)",
        ),
    ] {
        let mut b = Bridge::start_cmd(&[], &["sh".into(), "-c".into(), script.into()]);
        let r = b.initialize_request(json!(1), json!({}));
        assert_eq!(
            r,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603,
                "message": "The upstream server exited",
                "data": {"cause": "upstream_exited", "detail": detail}}}),
            "{script}"
        );
        b.wait_stderr(&format!("mcp-bridge: frontend: warn: initialize failed: The upstream server exited (upstream_exited, -32603): {detail}\n"));
        // The first exit, at server/discover, made the bridge start the server again (the
        // expected exit of a legacy server): only the second one is warned of.
        b.close_stdin();
        let warnings = b.stderr_lines_to_the_end(|l| l.contains(": warn: "));
        assert_eq!(
            warnings,
            vec![
                format!(
                    "mcp-bridge: upstream: warn: the upstream server failed to start: it exited ({status}) before it answered initialize (it had exited at server/discover and was started again)"
                ),
                format!(
                    "mcp-bridge: frontend: warn: initialize failed: The upstream server exited (upstream_exited, -32603): {detail}"
                ),
            ],
            "{script}"
        );
        // A failed start is no legacy server.
        assert_eq!(info_lines(&b), Vec::<String>::new(), "{script}");
    }
}

/// A server that exits at start (a missing script, a crash): it exits at `server/discover`,
/// is started again for the editor's `initialize` (an rmcp 1.x server would answer it), and
/// exits again before it answers. That is a failed start, not a legacy server: the editor's
/// `upstream_exited` names the exit status and quotes the last `STDERR_TAIL_LINES` (5)
/// non-blank lines of its stderr, each escaped and cut at `STDERR_TAIL_LINE_BYTES` (120)
/// bytes; the log says "failed to start" and never "speaks 2025-11-25".
#[test]
fn a_server_that_exits_at_both_starts_failed_to_start_and_the_error_quotes_its_stderr() {
    let d = common::scratch_dir("failed-start");
    let starts = d.join("starts");
    let long = "y".repeat(130);
    let script = format!(
        "echo started >> '{}'; for i in 1 2 3; do echo \"early $i\" >&2; done; echo >&2; \
         echo 'Traceback (most recent call last):' >&2; printf 'tab\\there\\033[31m\\n' >&2; \
         echo {long} >&2; echo \"FileNotFoundError: 'server.py'\" >&2; exit 2",
        starts.display()
    );
    let mut b = Bridge::start_cmd(&[], &["sh".into(), "-c".into(), script]);
    let r = b.initialize_request(json!(1), json!({}));
    let detail = format!(
        "exit code 2; its stderr ended with: \"early 3\" \"Traceback (most recent call last):\" \"tab\\there\\u{{1b}}[31m\" \"{}\"… (130 bytes) \"FileNotFoundError: 'server.py'\"",
        &long[..120]
    );
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603,
            "message": "The upstream server exited",
            "data": {"cause": "upstream_exited", "detail": detail}}})
    );
    b.close_stdin();
    let lines = b.stderr_lines_to_the_end(|l| {
        l.starts_with("mcp-bridge: ")
            && (l.contains(": warn: ") || l.contains(": info: the upstream"))
    });
    assert_eq!(
        lines,
        vec![
            "mcp-bridge: upstream: warn: the upstream server failed to start: it exited (exit code 2) before it answered initialize (it had exited at server/discover and was started again)".to_string(),
            format!("mcp-bridge: frontend: warn: initialize failed: The upstream server exited (upstream_exited, -32603): {detail}"),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(&starts)
            .expect("starts")
            .lines()
            .count(),
        2,
        "started twice: once for server/discover, once for initialize"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A server that writes a banner to stderr and then works is no failed start: a 2026-07-28
/// server is translated, and an rmcp-like legacy server that exits at `server/discover` (after
/// its banner) answers the `initialize` once started again; no warning, and the info line of
/// the legacy server comes once it answered.
#[test]
fn a_server_that_writes_a_banner_to_stderr_and_then_works_is_no_failed_start() {
    let failed = |l: &str| l.contains("failed") || l.contains("exited");
    let mut b = Bridge::start(&[], &["--stderr-line", "listening on stdio"]);
    b.initialize();
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(10)), Some(0));
    let lines = b.stderr_lines_to_the_end(|l| failed(l) || l.contains("listening on stdio"));
    assert_eq!(lines, vec!["listening on stdio".to_string()]);
    let script = format!(
        "echo 'legacy server starting' >&2; exec '{}' --discover-answer exit",
        legacy_bin()
    );
    let mut b = Bridge::start_cmd(&[], &["sh".into(), "-c".into(), script]);
    b.send(&initialize_request(0));
    assert_eq!(
        b.recv_response(&json!(0)),
        json!({"jsonrpc": "2.0", "id": 0, "result": legacy_initialize_result()})
    );
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(10)), Some(0));
    let banners = b.stderr_lines_to_the_end(|l| l == "legacy server starting");
    assert_eq!(banners.len(), 2, "one banner a start: {banners:?}");
    let lines = b.stderr_lines_to_the_end(|l| failed(l) || l.contains("speaks 2025-11-25"));
    assert_eq!(
        lines,
        vec![
            "mcp-bridge: frontend: info: the upstream server speaks 2025-11-25 or earlier (it exited at server/discover without an answer, as servers of the rmcp SDK do, and answered the initialize once started again): passing the 2025-11-25 protocol through unchanged".to_string(),
        ]
    );
}

/// The official conformance suite's 2025-11-25 test server, like other lenient legacy
/// servers, answers a method it does not know with the result `{}`. That is no
/// `DiscoverResult`, and it is no sign of a 2026-07-28 server either: the bridge falls back,
/// its line says why, and the editor's `initialize` gets the server's own result.
#[test]
fn a_result_that_is_not_a_discover_result_falls_back_and_the_line_says_why() {
    falls_back_and_says_why(
        "empty-result",
        "it answered server/discover with a result that is not a DiscoverResult",
    );
}

/// `mcp-legacy-server --discover-answer <mode>`: the editor's `initialize` gets the server's
/// own result, a call passes through, the one info line gives `sign`, and the server's second
/// line is the editor's `initialize` as written.
fn falls_back_and_says_why(mode: &str, sign: &str) -> Bridge {
    let mut b = start(&[], &["--discover-answer", mode]);
    let init = initialize_request(0);
    b.send(&init);
    assert_eq!(
        b.recv_response(&json!(0)),
        json!({"jsonrpc": "2.0", "id": 0, "result": legacy_initialize_result()})
    );
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(
        b.tools_call(json!(1), "echo", json!({"text": "passed"})),
        json!({"jsonrpc": "2.0", "id": 1,
            "result": {"content": [{"type": "text", "text": "passed"}]}})
    );
    b.wait_stderr("speaks 2025-11-25");
    assert_eq!(
        info_lines(&b),
        vec![format!(
            "mcp-bridge: frontend: info: the upstream server speaks 2025-11-25 or earlier ({sign}): passing the 2025-11-25 protocol through unchanged"
        )]
    );
    let got = upstream_lines(&b, 4);
    let discover: Value = serde_json::from_str(&got[0]).expect("json");
    assert_eq!(discover["method"], "server/discover");
    assert_eq!(got[1], line(&init));
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(10)), Some(0));
    b
}

/// A 2026-07-28 server whose `server/discover` fails with -32603 (an internal error: its
/// discover failed, here for a missing `_meta` key) is no legacy server: the editor's
/// `initialize` gets `discover_failed` with the upstream's code and message, and the
/// `initialize` is never passed to the server (which would refuse it with its own error).
#[test]
fn an_internal_error_to_discover_fails_initialize_with_the_upstreams_message() {
    let mut b = Bridge::start(&[], &["--discover-error", "-32603:missing required _meta"]);
    let r = b.initialize_request(json!(1), json!({}));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603,
            "message": "The upstream server did not complete server/discover",
            "data": {"cause": "discover_failed", "detail": "missing required _meta"}}})
    );
    b.wait_stderr("mcp-bridge: frontend: warn: initialize failed: The upstream server did not complete server/discover (discover_failed, -32603): missing required _meta\n");
    assert!(info_lines(&b).is_empty(), "{}", b.stderr_text());
    let methods: Vec<Value> = b
        .upstream_received()
        .iter()
        .map(|v| v["method"].clone())
        .collect();
    assert_eq!(methods, vec![json!("server/discover")]);
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(10)), Some(0));
}

/// The error of an `initialize` passed through to a server that answered neither it nor
/// `server/discover` within `--discover-timeout` 0.5 s.
fn both_silences_error(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603,
        "message": "The upstream server did not answer in time",
        "data": {"cause": "timeout", "detail": "no answer to server/discover within --discover-timeout (0.5 s), nor to the initialize passed through to the server within 0.5 s more: the server reads nothing or answers nothing; --discover-timeout sets both limits"}}})
}

/// `mcp-bridge --discover-timeout 0.5 sleep 1000` (a command that reads nothing), and a
/// server that reads everything and answers nothing: silence to `server/discover` means a
/// legacy server, so the editor's `initialize` is passed through; it waits at most
/// `--discover-timeout` once more, and then the editor gets an error naming both silences
/// and the option. A request pipelined after the `initialize` gets `not_initialized`. The
/// bridge keeps serving (a `ping`, a second `initialize` that fails the same way), and ends
/// cleanly at the end of its input.
#[test]
fn a_server_that_answers_neither_discover_nor_initialize_gets_the_editor_an_error() {
    for upstream in [
        vec!["sleep".to_string(), "1000".to_string()],
        // The shell keeps its stdout (the pipe to the bridge) open while `cat` reads.
        vec!["sh".into(), "-c".into(), "cat >/dev/null; exit 0".into()],
    ] {
        let mut b = Bridge::start_cmd(&["--discover-timeout", "0.5"], &upstream);
        b.send(&initialize_request(1));
        b.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        assert_eq!(b.recv(), both_silences_error(1), "{upstream:?}");
        assert_eq!(
            b.recv(),
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32600,
                "message": "Invalid request: the server is not initialized",
                "data": {"cause": "not_initialized"}}}),
            "{upstream:?}"
        );
        b.wait_stderr("mcp-bridge: frontend: info: the upstream server speaks 2025-11-25 or earlier (it did not answer server/discover within --discover-timeout, 0.5 s): passing the 2025-11-25 protocol through unchanged\n");
        b.wait_stderr("mcp-bridge: frontend: warn: initialize failed: The upstream server did not answer in time (timeout, -32603): no answer to server/discover within --discover-timeout (0.5 s), nor to the initialize passed through to the server within 0.5 s more: the server reads nothing or answers nothing; --discover-timeout sets both limits\n");
        assert_eq!(
            b.request(json!(3), "ping", json!({})),
            json!({"jsonrpc": "2.0", "id": 3, "result": {}})
        );
        b.send(&initialize_request(4));
        assert_eq!(b.recv(), both_silences_error(4), "{upstream:?}");
        b.close_stdin();
        assert_eq!(
            b.exit_code(Duration::from_secs(10)),
            Some(0),
            "{upstream:?}"
        );
        assert!(b.recv_to_the_end().is_empty());
    }
}

/// A legacy server that answers `server/discover` (-32601) and then never answers the
/// `initialize` passed through to it: the `initialize` has a time limit too
/// (`--discover-timeout`), and the error names it.
#[test]
fn a_legacy_server_that_never_answers_initialize_gets_the_editor_an_error() {
    let script = r#"read probe; echo '{"jsonrpc":"2.0","id":"mcp-bridge-probe-1","error":{"code":-32601,"message":"Method not found"}}'; cat >/dev/null; exit 0"#;
    let mut b = Bridge::start_cmd(
        &["--discover-timeout", "0.5"],
        &["sh".into(), "-c".into(), script.into()],
    );
    b.send(&initialize_request(1));
    assert_eq!(
        b.recv(),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603,
            "message": "The upstream server did not answer in time",
            "data": {"cause": "timeout", "detail": "no answer to the initialize passed through to the server within --discover-timeout (0.5 s)"}}})
    );
    b.wait_stderr(r#"(it answered server/discover with -32601 "Method not found")"#);
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(10)), Some(0));
}

/// A stdio server of the rmcp SDK (0.x, 1.x) ends its session, and exits, when its first
/// message is not `initialize`: `server/discover` makes it exit without an answer. That is a
/// legacy server: the bridge starts it again and passes the editor's `initialize` to the new
/// one, whose first message it is, and the info line says so. That exit is the expected one:
/// no warning.
#[test]
fn a_server_that_exits_at_discover_is_started_again_for_the_editors_initialize() {
    // The first server read the probe and exited; the second reads the editor's messages
    // from the start.
    let b = falls_back_and_says_why(
        "exit",
        "it exited at server/discover without an answer, as servers of the rmcp SDK do, and answered the initialize once started again",
    );
    let warnings = b.stderr_lines_to_the_end(|l| l.contains(": warn: "));
    assert_eq!(warnings, Vec::<String>::new());
}

/// The summary at the end counts the requests passed through to a legacy server and their
/// errors (any method the editor sends; the legacy server answers an unknown one -32601).
#[test]
fn the_exit_summary_counts_the_passed_through_requests() {
    let mut b = start(&[], &[]);
    b.send(&initialize_request(0));
    b.recv_response(&json!(0));
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(
        text_of(&b.tools_call(json!(1), "echo", json!({"text": "x"}))),
        "x"
    );
    b.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "vendor/unknown"}));
    assert_eq!(error_of(&b.recv_response(&json!(2))).0, -32601);
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(10)), Some(0));
    let metrics = b.stderr_lines_to_the_end(|l| l.starts_with("mcp-bridge: metrics: "));
    assert_eq!(metrics.len(), 1, "{metrics:?}");
    assert!(
        metrics[0].starts_with("mcp-bridge: metrics: info: summary: 3 requests, 1 error; slowest ")
            && metrics[0].ends_with(" ms; nothing dropped"),
        "{metrics:?}"
    );
}
