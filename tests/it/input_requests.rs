//! Input requests (2026-07-28 mrtr) completed through the bridge: every kind, several
//! rounds, and every check with its exact cause.

use crate::common;

use common::{Bridge, error_of, text_of};
use serde_json::{Value, json};
use std::time::Duration;

const ALL_KINDS: &str =
    r#"{"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {"listChanged": true}}"#;

fn ready(caps: &str) -> Bridge {
    let mut b = Bridge::start(&[], &[]);
    b.initialize_with(serde_json::from_str(caps).expect("caps"));
    b
}

/// Sends a tools/call and returns the next request the bridge sends to the editor.
fn call_and_expect_question(b: &mut Bridge, id: Value, tool: &str, args: Value) -> Value {
    b.send_request(id, "tools/call", json!({"name": tool, "arguments": args}));
    let q = b.recv();
    assert!(
        q.get("method").is_some() && q.get("id").is_some(),
        "expected a request to the editor, got {q}"
    );
    q
}

fn answer(b: &mut Bridge, q: &Value, result: Value) {
    b.send(&json!({"jsonrpc": "2.0", "id": q["id"], "result": result}));
}

fn retries_of(b: &Bridge, tool: &str) -> Vec<Value> {
    b.upstream_received()
        .into_iter()
        .filter(|v| {
            v["method"] == "tools/call"
                && v["params"]["name"] == tool
                && v["params"].get("requestState").is_some()
        })
        .collect()
}

fn form(message: &str, props: Value, required: &[&str]) -> Value {
    json!({"method": "elicitation/create", "params": {"message": message,
        "requestedSchema": {"type": "object", "properties": props, "required": required}}})
}

#[test]
fn a_form_elicitation_completes_and_the_upstream_gets_the_answer_and_the_exact_state() {
    let mut b = ready(ALL_KINDS);
    let q = call_and_expect_question(&mut b, json!(1), "ask_name", json!({}));
    assert_eq!(q["id"], "b-1");
    assert_eq!(q["method"], "elicitation/create");
    assert_eq!(q["params"]["mode"], "form");
    assert_eq!(q["params"]["message"], "What is your name?");
    assert_eq!(q["params"]["requestedSchema"]["required"], json!(["name"]));
    answer(
        &mut b,
        &q,
        json!({"action": "accept", "content": {"name": "Ada"}}),
    );
    let r = b.recv_response(&json!(1));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "Hello, Ada!"}]}})
    );
    let retry = &retries_of(&b, "ask_name")[0];
    assert_eq!(
        retry["params"]["inputResponses"],
        json!({"name": {"action": "accept", "content": {"name": "Ada"}}})
    );
    assert_eq!(retry["params"]["requestState"], "ask_name/1");
    assert_eq!(retry["params"]["arguments"], json!({}));
    // The retry is a new upstream request with a new id.
    let first = b.wait_upstream(|v| {
        v["params"]["name"] == "ask_name" && v["params"].get("requestState").is_none()
    });
    assert_ne!(first["id"], retry["id"]);
}

#[test]
fn a_url_elicitation_gets_an_elicitation_id_and_then_complete() {
    let mut b = ready(ALL_KINDS);
    let q = call_and_expect_question(
        &mut b,
        json!(2),
        "ask_url",
        json!({"url": "https://example.com/consent"}),
    );
    assert_eq!(q["params"]["mode"], "url");
    assert_eq!(q["params"]["url"], "https://example.com/consent");
    let eid = q["params"]["elicitationId"]
        .as_str()
        .expect("elicitationId")
        .to_string();
    assert_eq!(eid, "mcp-bridge-elicitation-b-1");
    answer(&mut b, &q, json!({"action": "accept"}));
    let r = b.recv_response(&json!(2));
    assert_eq!(text_of(&r), "action: accept");
    let done = b.take_notifications("notifications/elicitation/complete");
    assert_eq!(
        done,
        vec![
            json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": eid}})
        ]
    );
    assert_eq!(
        retries_of(&b, "ask_url")[0]["params"]["inputResponses"],
        json!({"open": {"action": "accept"}})
    );
}

#[test]
fn a_sampling_request_completes() {
    let mut b = ready(ALL_KINDS);
    let q = call_and_expect_question(
        &mut b,
        json!(3),
        "sample",
        json!({"prompt": "What is 6*7?"}),
    );
    assert_eq!(q["method"], "sampling/createMessage");
    assert!(q["params"]["messages"].is_array() && q["params"]["maxTokens"].is_number());
    answer(
        &mut b,
        &q,
        json!({"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "test-model", "stopReason": "endTurn"}),
    );
    let r = b.recv_response(&json!(3));
    assert_eq!(text_of(&r), "model said: 42");
}

#[test]
fn a_roots_request_completes_and_only_file_roots_pass() {
    let mut b = ready(ALL_KINDS);
    let q = call_and_expect_question(&mut b, json!(4), "roots", json!({}));
    assert_eq!(q["method"], "roots/list");
    answer(
        &mut b,
        &q,
        json!({"roots": [{"uri": "file:///work/a", "name": "a"}, {"uri": "https://example.com/b"}, {"uri": "file:///work/c"}]}),
    );
    let r = b.recv_response(&json!(4));
    assert_eq!(text_of(&r), "file:///work/a\nfile:///work/c");
    let retry = &retries_of(&b, "roots")[0];
    let responses = retry["params"]["inputResponses"]
        .as_object()
        .expect("inputResponses");
    let roots = &responses.values().next().expect("one answer")["roots"];
    assert_eq!(
        roots,
        &json!([{"uri": "file:///work/a", "name": "a"}, {"uri": "file:///work/c"}])
    );
}

#[test]
fn a_tool_that_asks_in_two_rounds_completes() {
    let mut b = ready(ALL_KINDS);
    let rounds = json!([
        {"city": form("Which city?", json!({"city": {"type": "string"}}), &["city"])},
        {"nights": form("How many nights?", json!({"nights": {"type": "integer", "minimum": 1}}), &["nights"])}
    ]);
    let q1 = call_and_expect_question(&mut b, json!(5), "script", json!({"rounds": rounds}));
    assert_eq!(q1["id"], "b-1");
    answer(
        &mut b,
        &q1,
        json!({"action": "accept", "content": {"city": "Oslo"}}),
    );
    let q2 = b.recv();
    assert_eq!(q2["id"], "b-2");
    assert_eq!(q2["params"]["message"], "How many nights?");
    answer(
        &mut b,
        &q2,
        json!({"action": "accept", "content": {"nights": 3}}),
    );
    let r = b.recv_response(&json!(5));
    assert_eq!(
        text_of(&r),
        r#"{"nights":{"action":"accept","content":{"nights":3}}}"#
    );
    let states: Vec<Value> = retries_of(&b, "script")
        .iter()
        .map(|v| v["params"]["requestState"].clone())
        .collect();
    assert_eq!(states, vec![json!("script/1"), json!("script/2")]);
}

#[test]
fn seventeen_input_requests_fail_with_too_many_input_requests() {
    let mut b = ready(ALL_KINDS);
    let round: serde_json::Map<String, Value> = (0..17)
        .map(|i| (format!("r{i}"), json!({"method": "roots/list"})))
        .collect();
    let r = b.tools_call(json!(6), "script", json!({"rounds": [round]}));
    assert_eq!(error_of(&r), (-32603, "too_many_input_requests".into()));
    assert!(
        b.seen.iter().all(|f| f.get("method").is_none()),
        "no request of that round goes out"
    );
}

#[test]
fn an_eleventh_round_fails_with_too_many_rounds() {
    let mut b = ready(ALL_KINDS);
    let rounds: Vec<Value> = (0..11)
        .map(|_| json!({"root": {"method": "roots/list"}}))
        .collect();
    b.send_tools_call(json!(7), "script", json!({"rounds": rounds}));
    for i in 1..=10 {
        let q = b.recv();
        assert_eq!(q["id"], format!("b-{i}"));
        answer(&mut b, &q, json!({"roots": []}));
    }
    let r = b.recv_response(&json!(7));
    assert_eq!(
        r["error"],
        json!({"code": -32603, "message": "The upstream server asked for input too many times",
        "data": {"cause": "too_many_rounds", "detail": 10}})
    );
}

#[test]
fn an_undeclared_kind_fails_with_its_key_and_nothing_goes_out() {
    let mut b = ready(r#"{"elicitation": {}}"#);
    let rounds = json!([{"ok": form("Name?", json!({"n": {"type": "string"}}), &[]),
                         "llm": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 10}}}]);
    let r = b.tools_call(json!(8), "script", json!({"rounds": rounds}));
    assert_eq!(
        r["error"]["data"],
        json!({"cause": "undeclared_input_request", "detail": "llm"})
    );
    assert!(b.seen.iter().all(|f| f.get("method").is_none()));
    // Sampling with tools needs sampling.tools.
    let mut b = ready(r#"{"sampling": {}}"#);
    let rounds = json!([{"t": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 10, "tools": []}}}]);
    let r = b.tools_call(json!(9), "script", json!({"rounds": rounds}));
    assert_eq!(
        r["error"]["data"],
        json!({"cause": "undeclared_input_request", "detail": "t"})
    );
}

#[test]
fn urls_that_are_not_https_or_loopback_http_get_decline_without_asking() {
    let mut b = ready(ALL_KINDS);
    let url = |u: &str| json!({"method": "elicitation/create", "params": {"mode": "url", "message": "open", "url": u}});
    let rounds = json!([{"file": url("file:///etc/passwd"), "js": url("javascript:alert(1)"),
        "backslash": url("https://example.com\\@evil.example/"), "userinfo": url("https://trusted@evil.example/")}]);
    let r = b.tools_call(json!(10), "script", json!({"rounds": rounds}));
    let got: Value = serde_json::from_str(&text_of(&r)).expect("json text");
    assert_eq!(
        got,
        json!({"file": {"action": "decline"}, "js": {"action": "decline"},
        "backslash": {"action": "decline"}, "userinfo": {"action": "decline"}})
    );
    assert!(
        b.seen.iter().all(|f| f.get("method").is_none()),
        "the editor never saw those URLs"
    );
    // The warning is on stderr before the response is on stdout, but the harness reads the
    // two pipes in separate threads: wait for the line.
    for (key, why) in [
        ("file", "not https, and not http to a loopback host"),
        ("js", "not https, and not http to a loopback host"),
        (
            "backslash",
            "not a URL, or with a control character, whitespace or a backslash",
        ),
        ("userinfo", "it has user information"),
    ] {
        b.wait_stderr(&format!(
            "mcp-bridge: input: warn: declined the URL of input request \"{key}\": {why}\n"
        ));
    }
}

#[test]
fn the_editor_is_shown_the_url_the_bridge_parsed_re_serialized() {
    let mut b = ready(ALL_KINDS);
    let url = |u: &str| json!({"method": "elicitation/create", "params": {"mode": "url", "message": "open", "url": u}});
    let rounds = json!([{"no_slashes": url("https:evil.example"), "hex": url("http://0x7f000001/"),
        "short": url("http://127.1/"), "dotdot": url("https://example.com/a/../b")}]);
    b.send_tools_call(json!(24), "script", json!({"rounds": rounds}));
    let mut shown = Vec::new();
    for i in 1..=4 {
        let q = b.recv();
        assert_eq!(q["id"], format!("b-{i}"));
        assert_eq!(q["method"], "elicitation/create");
        assert_eq!(
            q["params"],
            json!({"mode": "url", "message": "open", "url": q["params"]["url"],
                   "elicitationId": format!("mcp-bridge-elicitation-b-{i}")})
        );
        shown.push(q["params"]["url"].clone());
        answer(&mut b, &q, json!({"action": "accept"}));
    }
    assert_eq!(
        shown,
        vec![
            json!("https://evil.example/"),
            json!("http://127.0.0.1/"),
            json!("http://127.0.0.1/"),
            json!("https://example.com/b")
        ]
    );
    let r = b.recv_response(&json!(24));
    let accepted = json!({"no_slashes": {"action": "accept"}, "hex": {"action": "accept"},
        "short": {"action": "accept"}, "dotdot": {"action": "accept"}});
    assert_eq!(
        serde_json::from_str::<Value>(&text_of(&r)).expect("json text"),
        accepted
    );
    assert_eq!(
        retries_of(&b, "script")[0]["params"]["inputResponses"],
        accepted
    );
}

#[test]
fn a_url_with_invisible_or_non_ascii_characters_in_its_host_gets_decline_without_asking() {
    let mut b = ready(ALL_KINDS);
    let url = |u: &str| json!({"method": "elicitation/create", "params": {"mode": "url", "message": "open", "url": u}});
    let cases = [
        ("zwsp", "https://x.example\u{200b}/"),
        ("zwsp_no_slashes", "https:x.example\u{200b}"),
        ("zwj", "https://x\u{200d}.example/"),
        ("bidi", "https://\u{202e}elpmaxe.x/"),
        ("bom", "https://x.example\u{feff}/"),
        ("soft_hyphen", "https://x.ex\u{ad}ample/"),
        ("tag", "https://x.example\u{e0001}/"),
        ("umlaut", "https://b\u{fc}cher.example/"),
        ("cyrillic", "https://\u{430}pple.com/"),
        ("ideographic_dot", "https://evil\u{3002}example/"),
        ("loopback_zwsp", "http://127.0.0.1\u{200b}/"),
        ("percent", "https://x.example%E2%80%8B/"),
    ];
    let round: serde_json::Map<String, Value> =
        cases.iter().map(|(k, u)| (k.to_string(), url(u))).collect();
    let r = b.tools_call(json!(25), "script", json!({"rounds": [round]}));
    let declined: serde_json::Map<String, Value> = cases
        .iter()
        .map(|(k, _)| (k.to_string(), json!({"action": "decline"})))
        .collect();
    let declined = Value::Object(declined);
    assert_eq!(
        serde_json::from_str::<Value>(&text_of(&r)).expect("json text"),
        declined
    );
    assert_eq!(
        retries_of(&b, "script")[0]["params"]["inputResponses"],
        declined
    );
    assert!(
        b.seen.iter().all(|f| f.get("method").is_none()),
        "the editor never saw those URLs"
    );
    // The first WARN_BURST declines are logged one by one (in the order of the round), the
    // others in the summary written when the bridge stops.
    let burst = mcp_bridge::log::limit::WARN_BURST as usize;
    b.close_stdin();
    assert!(b.wait_exit(common::RECV_TIMEOUT).is_some());
    let stderr = b.stderr_to_the_end();
    let logged: Vec<&str> = stderr
        .lines()
        .filter_map(|l| {
            l.strip_prefix("mcp-bridge: input: warn: declined the URL of input request \"")
        })
        .collect();
    let expected: Vec<String> = cases[..burst]
        .iter()
        .map(|(key, _)| {
            format!("{key}\": its host has invisible, non-ASCII or percent-encoded characters")
        })
        .collect();
    assert_eq!(logged, expected, "stderr:\n{stderr}");
    assert!(
        stderr.contains(&format!(
            "mcp-bridge: input: warn: {} more declined URLs of input requests were not logged\n",
            cases.len() - burst
        )),
        "stderr:\n{stderr}"
    );
}

#[test]
fn invalid_form_content_fails_with_invalid_client_answer_and_nothing_more_goes_upstream() {
    let mut b = ready(ALL_KINDS);
    let q = call_and_expect_question(&mut b, json!(11), "ask_name", json!({}));
    answer(
        &mut b,
        &q,
        json!({"action": "accept", "content": {"name": ""}}),
    );
    let r = b.recv_response(&json!(11));
    assert_eq!(
        r["error"],
        json!({"code": -32603, "message": "The client's answer to an input request is not valid",
        "data": {"cause": "invalid_client_answer", "detail": "name"}})
    );
    assert!(retries_of(&b, "ask_name").is_empty());
}

#[test]
fn a_bad_line_with_a_b_id_is_an_invalid_answer() {
    let mut b = ready(ALL_KINDS);
    let q = call_and_expect_question(&mut b, json!(12), "ask_name", json!({}));
    assert_eq!(q["id"], "b-1");
    b.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":\"b-1\",\"result\":{\"action\":\n");
    let r = b.recv_response(&json!(12));
    assert_eq!(error_of(&r), (-32603, "invalid_client_answer".into()));
    assert!(b.seen.iter().all(|f| {
        f.get("id")
            .is_none_or(|id| id == &json!(12) || id == &json!(0) || id == &json!("b-1"))
    }));
}

/// An answer over `--max-line-bytes` with the id of a `b-` request fails the waiting round at
/// once (the id recovered from the line), and the editor gets no `line_too_long` for its own
/// answer.
#[test]
fn an_answer_over_the_line_limit_with_a_b_id_fails_the_round_at_once() {
    let mut b = Bridge::start(&["--max-line-bytes", "4096"], &[]);
    b.initialize_with(serde_json::from_str(ALL_KINDS).expect("caps"));
    let q = call_and_expect_question(&mut b, json!(12), "ask_name", json!({}));
    assert_eq!(q["id"], "b-1");
    let pad = "x".repeat(5000);
    b.send(&json!({"jsonrpc": "2.0", "id": "b-1",
        "result": {"action": "accept", "content": {"name": pad}}}));
    let r = b.recv_response(&json!(12));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 12, "error": {"code": -32603,
            "message": "The client's answer to an input request is not valid",
            "data": {"cause": "invalid_client_answer", "detail": "name"}}})
    );
    assert!(
        b.seen
            .iter()
            .all(|f| f.get("id") != Some(&json!("b-1")) || f.get("method").is_some())
    );
    assert!(retries_of(&b, "ask_name").is_empty());
}

#[test]
fn late_duplicate_numeric_and_unknown_answers_are_dropped() {
    let mut b = ready(ALL_KINDS);
    let q = call_and_expect_question(&mut b, json!(13), "ask_name", json!({}));
    // Not ours: numeric, null, unprefixed, unknown. Nothing happens.
    b.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"action\":\"accept\"}}\n");
    b.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}\n");
    b.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":\"x-1\",\"result\":{}}\n");
    b.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":\"b-99\",\"result\":{}}\n");
    assert!(b.recv_for(Duration::from_millis(300)).is_empty());
    answer(
        &mut b,
        &q,
        json!({"action": "accept", "content": {"name": "Bo"}}),
    );
    assert_eq!(text_of(&b.recv_response(&json!(13))), "Hello, Bo!");
    // A repeated answer is dropped.
    answer(
        &mut b,
        &q,
        json!({"action": "accept", "content": {"name": "Again"}}),
    );
    assert!(b.recv_for(Duration::from_millis(300)).is_empty());
    assert_eq!(retries_of(&b, "ask_name").len(), 1);
}

#[test]
fn cancelling_the_original_request_cancels_its_open_b_requests_and_late_answers_are_dropped() {
    let mut b = ready(ALL_KINDS);
    let q = call_and_expect_question(&mut b, json!(14), "ask_name", json!({}));
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 14}}));
    let n = b.recv();
    assert_eq!(
        n,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": "b-1", "reason": "the request was cancelled"}})
    );
    answer(
        &mut b,
        &q,
        json!({"action": "accept", "content": {"name": "Late"}}),
    );
    assert!(
        b.recv_for(Duration::from_millis(300)).is_empty(),
        "no response to 14, nothing for the late answer"
    );
    assert!(retries_of(&b, "ask_name").is_empty());
}

#[test]
fn a_refused_request_state_tells_the_user_to_run_the_tool_again() {
    let mut b = ready(ALL_KINDS);
    let rounds = json!([{"r": {"method": "roots/list"}}]);
    let q = call_and_expect_question(
        &mut b,
        json!(15),
        "script",
        json!({"rounds": rounds, "refuse_retry": true}),
    );
    answer(&mut b, &q, json!({"roots": []}));
    let r = b.recv_response(&json!(15));
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        text_of(&r),
        "The server no longer accepts the answers to its questions (they may have expired). Run the tool again."
    );
}

#[test]
fn an_editor_error_on_elicitation_becomes_cancel_and_on_sampling_fails_the_request() {
    let mut b = ready(ALL_KINDS);
    let q = call_and_expect_question(&mut b, json!(16), "ask_name", json!({}));
    b.send(&json!({"jsonrpc": "2.0", "id": q["id"], "error": {"code": -32000, "message": "user closed the dialog"}}));
    assert_eq!(
        text_of(&b.recv_response(&json!(16))),
        "No name was given (cancel)."
    );
    let q = call_and_expect_question(&mut b, json!(17), "sample", json!({"prompt": "x"}));
    b.send(&json!({"jsonrpc": "2.0", "id": q["id"], "error": {"code": -32000, "message": "sampling refused", "data": {"why": "policy"}}}));
    let r = b.recv_response(&json!(17));
    assert_eq!(
        r["error"],
        json!({"code": -32000, "message": "sampling refused", "data": {"why": "policy"}})
    );
}

#[test]
fn a_form_without_properties_becomes_a_continue_form() {
    let mut b = ready(ALL_KINDS);
    let rounds = json!([{"go": {"method": "elicitation/create", "params": {"message": "Deploy now?", "requestedSchema": {"type": "object", "properties": {}}}}}]);
    let q = call_and_expect_question(&mut b, json!(18), "script", json!({"rounds": rounds}));
    assert_eq!(q["params"]["message"], "Deploy now?");
    assert_eq!(
        q["params"]["requestedSchema"]["properties"]["choice"]["enum"],
        json!(["Continue"])
    );
    answer(
        &mut b,
        &q,
        json!({"action": "accept", "content": {"choice": "Continue"}}),
    );
    assert_eq!(
        text_of(&b.recv_response(&json!(18))),
        r#"{"go":{"action":"accept","content":{}}}"#
    );
}

#[test]
fn the_capabilities_sent_upstream_declare_exactly_the_editors_input_kinds() {
    let mut b = ready(r#"{"elicitation": {"form": {}}, "roots": {"listChanged": true}}"#);
    let r = b.tools_call(json!(19), "echo", json!({"text": "x"}));
    assert_eq!(text_of(&r), "x");
    let up = b.wait_upstream(|v| v["params"]["name"] == "echo");
    assert_eq!(
        up["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
        json!({"elicitation": {"form": {}}, "roots": {}})
    );
}

#[test]
fn the_end_of_input_during_a_round_exits_0_without_responses() {
    let mut b = ready(ALL_KINDS);
    call_and_expect_question(&mut b, json!(20), "ask_name", json!({}));
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(8)), Some(0));
    assert!(b.seen.iter().all(|f| f.get("id") != Some(&json!(20))));
}

#[test]
fn the_editor_has_a_time_limit_per_round_and_its_open_requests_are_cancelled() {
    let mut b = Bridge::start(&["--input-timeout", "0.5"], &[]);
    b.initialize_with(serde_json::from_str(ALL_KINDS).expect("caps"));
    let q = call_and_expect_question(&mut b, json!(21), "ask_name", json!({}));
    let r = b.recv_response(&json!(21));
    assert_eq!(
        r["error"]["data"],
        json!({"cause": "input_timeout", "detail": 0.5})
    );
    // The cancel may come after the response: wait for it, then for any second one.
    let mut cancels = b.take_notifications("notifications/cancelled");
    if cancels.is_empty() {
        cancels.push(b.recv_notification("notifications/cancelled"));
    }
    cancels.extend(
        b.recv_for(Duration::from_millis(300))
            .into_iter()
            .filter(|f| f["method"] == "notifications/cancelled"),
    );
    assert_eq!(cancels.len(), 1);
    assert_eq!(cancels[0]["params"]["requestId"], q["id"]);
}

#[test]
fn progress_of_every_round_goes_to_the_original_token() {
    let mut b = ready(ALL_KINDS);
    let rounds = json!([{"a": {"method": "roots/list"}}, {"b": {"method": "roots/list"}}]);
    b.send_request(json!(22), "tools/call",
        json!({"name": "script", "arguments": {"rounds": rounds}, "_meta": {"progressToken": "pt-22"}}));
    let mut progress = Vec::new();
    let mut answered = 0;
    let response = loop {
        let f = b.recv();
        if f["method"] == "notifications/progress" {
            progress.push(f["params"].clone());
        } else if f["method"] == "roots/list" {
            answer(&mut b, &f, json!({"roots": []}));
            answered += 1;
        } else {
            break f;
        }
    };
    assert_eq!(response["id"], 22);
    assert_eq!(answered, 2);
    // The fixture reports progress once per round it asks.
    assert_eq!(
        progress,
        vec![
            json!({"progressToken": "pt-22", "progress": 1}),
            json!({"progressToken": "pt-22", "progress": 2})
        ]
    );
}

#[test]
fn a_url_asked_again_becomes_a_continue_form_and_completes_once() {
    let mut b = ready(ALL_KINDS);
    let url = json!({"method": "elicitation/create", "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/login"}});
    let rounds = json!([{"login": url.clone()}, {"login": url}]);
    let q1 = call_and_expect_question(&mut b, json!(23), "script", json!({"rounds": rounds}));
    assert_eq!(q1["params"]["mode"], "url");
    answer(&mut b, &q1, json!({"action": "accept"}));
    let q2 = b.recv();
    assert_eq!(q2["params"]["mode"], "form");
    assert_eq!(q2["params"]["message"], "Sign in");
    answer(
        &mut b,
        &q2,
        json!({"action": "accept", "content": {"choice": "Continue"}}),
    );
    let r = b.recv_response(&json!(23));
    assert_eq!(text_of(&r), r#"{"login":{"action":"accept"}}"#);
    let done = b.take_notifications("notifications/elicitation/complete");
    assert_eq!(done.len(), 1);
    assert_eq!(
        done[0]["params"]["elicitationId"],
        q1["params"]["elicitationId"]
    );
}
