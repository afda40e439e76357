//! Valid JSON passes through unchanged, each seen case over real pipes: numbers
//! keep their text both ways, unpaired surrogate escapes arrive as U+FFFD both ways, every depth
//! up to the limits parses, and id recovery answers under the id the parser would keep.

use crate::common;

use common::{Bridge, error_of};
use serde_json::{Value, json};

fn number_text(v: &Value) -> &str {
    v.as_number()
        .map(serde_json::Number::as_str)
        .unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Makes the fixture answer the `tools/call` with id `id` with this raw result text.
fn raw_result(b: &mut Bridge, id: i64, result_text: &str) -> Value {
    b.tools_call(
        json!(id),
        "respond_raw",
        json!({
            "before": r#"{"jsonrpc":"2.0","id":"#,
            "after": format!(r#","result":{result_text}}}"#),
        }),
    )
}

#[test]
fn integers_beyond_64_bits_and_1e400_in_tool_arguments_reach_the_upstream_with_their_text() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mirror","arguments":{"amount":123456789012345678901234567890,"negative":-98765432109876543210987654321,"huge":1e400,"tiny":-1E-400,"money":0.10,"zero":-0.0}}}"#;
    b.send_raw_request(&json!(1), "tools/call", line);
    let r = b.recv_response(&json!(1));
    // What the upstream got, byte for byte.
    let trace = std::fs::read_to_string(&b.trace).unwrap_or_default();
    let call = trace
        .lines()
        .find(|l| l.contains("\"mirror\""))
        .unwrap_or_else(|| panic!("the upstream got no mirror call: {trace}"));
    assert!(
        call.contains(r#""arguments":{"amount":123456789012345678901234567890,"negative":-98765432109876543210987654321,"huge":1e400,"tiny":-1E-400,"money":0.10,"zero":-0.0}"#),
        "{call}"
    );
    // And back: the mirror tool returns them as structuredContent (the fixture server parses
    // them into serde_json values, which write an exponent `e+N`; the bridge passes its bytes).
    let sc = &r["result"]["structuredContent"];
    assert_eq!(number_text(&sc["amount"]), "123456789012345678901234567890");
    assert_eq!(
        number_text(&sc["negative"]),
        "-98765432109876543210987654321"
    );
    assert_eq!(number_text(&sc["huge"]), "1e+400");
    assert_eq!(number_text(&sc["tiny"]), "-1e-400");
    assert_eq!(number_text(&sc["money"]), "0.10");
    assert_eq!(number_text(&sc["zero"]), "-0.0");
}

#[test]
fn integers_beyond_64_bits_and_1e400_in_a_result_reach_the_editor_with_their_text() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    let r = raw_result(
        &mut b,
        2,
        r#"{"content":[{"type":"text","text":"balance"}],"structuredContent":{"amount":123456789012345678901234567890,"huge":1e400,"list":[1E400,-0,1.50]}}"#,
    );
    let sc = &r["result"]["structuredContent"];
    assert_eq!(number_text(&sc["amount"]), "123456789012345678901234567890");
    assert_eq!(number_text(&sc["huge"]), "1e+400");
    assert_eq!(number_text(&sc["list"][0]), "1e+400");
    assert_eq!(number_text(&sc["list"][1]), "-0");
    assert_eq!(number_text(&sc["list"][2]), "1.50");
    assert_eq!(r["result"]["content"][0]["text"], "balance");
}

#[test]
fn an_unpaired_surrogate_in_a_result_arrives_as_the_replacement_character() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    let r = raw_result(
        &mut b,
        3,
        r#"{"content":[{"type":"text","text":"snippet \ud83d"}],"structuredContent":{"low":"\ude00 alone","pair":"\ud83d\ude00","escaped":"\\ud83d","k\udbff":1}}"#,
    );
    assert_eq!(r["result"]["content"][0]["text"], "snippet \u{fffd}");
    let sc = &r["result"]["structuredContent"];
    assert_eq!(sc["low"], "\u{fffd} alone");
    assert_eq!(sc["pair"], "\u{1f600}");
    assert_eq!(sc["escaped"], "\\ud83d");
    assert_eq!(sc["k\u{fffd}"], 1);
}

#[test]
fn an_unpaired_surrogate_in_tool_arguments_arrives_as_the_replacement_character() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    let line = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mirror","arguments":{"text":"snippet \ud83d","low":"\uDE00","pair":"\uD83D\uDE00"}}}"#;
    b.send_raw_request(&json!(4), "tools/call", line);
    let r = b.recv_response(&json!(4));
    let sc = &r["result"]["structuredContent"];
    assert_eq!(
        sc,
        &json!({"text": "snippet \u{fffd}", "low": "\u{fffd}", "pair": "\u{1f600}"})
    );
    let got = b
        .upstream_received()
        .into_iter()
        .find(|v| v["params"]["name"] == "mirror")
        .unwrap_or_else(|| panic!("the upstream got no mirror call"));
    assert_eq!(got["params"]["arguments"]["text"], "snippet \u{fffd}");
}

#[test]
fn a_result_at_the_upstream_depth_limit_arrives_and_one_level_more_is_invalid_response() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    // The response line's levels: the message, the result, then structuredContent's 198.
    let deep = |levels: usize| {
        format!(
            r#"{{"content":[],"structuredContent":{{"d":{}7{}}}}}"#,
            "[".repeat(levels - 1),
            "]".repeat(levels - 1)
        )
    };
    let r = raw_result(&mut b, 5, &deep(198));
    let mut v = &r["result"]["structuredContent"]["d"];
    for _ in 0..197 {
        v = &v[0];
    }
    assert_eq!(v, &json!(7));
    let r = raw_result(&mut b, 6, &deep(199));
    assert_eq!(r["id"], 6);
    assert_eq!(error_of(&r), (-32603, "invalid_response".into()));
}

/// Seen: a too-deep line with two top-level ids got its error under the first one, which
/// was the id of a request in flight: that request was answered twice.
#[test]
fn a_too_deep_line_with_two_ids_is_answered_under_the_last_and_the_request_in_flight_once() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    b.send_tools_call(json!(1), "sleep", json!({"ms": 300}));
    b.wait_upstream(|v| v["params"]["name"] == "sleep");
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{}1{}}},"id":2}}"#,
        "[".repeat(70),
        "]".repeat(70)
    );
    b.send_raw(format!("{deep}\n").as_bytes());
    let first = b.recv();
    assert_eq!(first["id"], 2, "{first}");
    assert_eq!(error_of(&first), (-32600, "too_deep".into()));
    let done = b.recv_response(&json!(1));
    assert_eq!(done["result"]["content"][0]["text"], "slept");
    // Frames come in order: after a ping's answer nothing more can come for either line.
    assert_eq!(b.request(json!(3), "ping", json!({}))["result"], json!({}));
    let answers_to_1 = b.seen.iter().filter(|f| f["id"] == 1).count();
    assert_eq!(answers_to_1, 1, "{:?}", b.seen);
}

/// The same line over the limit, cut into reads of different sizes, with a limit below the
/// 256 bytes the recovery used to keep of each end.
#[test]
fn a_line_too_long_with_two_ids_is_answered_under_the_last_whatever_the_reads() {
    let mut b = Bridge::start(&["--max-line-bytes", "100"], &[]);
    let pad = "p".repeat(300);
    for (last, chunk) in [(2, usize::MAX), (3, 1), (4, 7), (5, 64), (6, 255)] {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{pad}","id":9}},"id":{last}}}"#
        );
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        for part in bytes.chunks(chunk.min(bytes.len())) {
            b.send_raw(part);
        }
        let r = b.recv();
        assert_eq!(r["id"], last, "reads of {chunk} bytes: {r}");
        assert_eq!(error_of(&r), (-32600, "line_too_long".into()));
    }
    // An id that cannot be known for sure (cut off at the end) gets no id, never the first.
    b.send_raw(format!("{{\"id\":1,\"pad\":\"{pad}\",\"id\":\n").as_bytes());
    let r = b.recv();
    assert!(r.get("id").is_none(), "{r}");
    assert_eq!(error_of(&r), (-32600, "line_too_long".into()));
}

/// The upstream side: a response line too deep to parse with a wrong id first and the real
/// one last answers the request (before, the first id was taken and the request hung).
#[test]
fn a_too_deep_upstream_response_with_two_ids_fails_the_request_of_the_last() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    let before = format!(
        r#"{{"jsonrpc":"2.0","id":999999,"result":{{"x":{}{}}},"id":"#,
        "[".repeat(210),
        "]".repeat(210)
    );
    let r = b.tools_call(
        json!(7),
        "respond_raw",
        json!({"before": before, "after": "}"}),
    );
    assert_eq!(r["id"], 7);
    assert_eq!(error_of(&r), (-32603, "invalid_response".into()));
}

/// An id is a string or an integer written as one within 64 bits (docs/errors.md); other
/// numbers are no usable id, so the error has no id member.
#[test]
fn ids_written_with_a_fraction_an_exponent_or_beyond_64_bits_are_not_usable() {
    let mut b = Bridge::start(&[], &[]);
    for id in ["1.0", "1e2", "123456789012345678901234567890"] {
        b.send_raw(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).as_bytes());
        b.send_raw(b"\n");
        let r = b.recv();
        assert!(r.get("id").is_none(), "{id}: {r}");
        assert_eq!(error_of(&r), (-32600, "invalid_request_shape".into()));
    }
    for id in ["18446744073709551615", "-9223372036854775808"] {
        b.send_raw(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).as_bytes());
        b.send_raw(b"\n");
        let r = b.recv();
        assert_eq!(number_text(&r["id"]), id);
        assert_eq!(r["result"], json!({}));
    }
}

/// Every spelling of a number that serde_json would rewrite or that a float would lose, at
/// the top and deep inside (numbers keep their exact text, both ways).
const SPELLINGS: &str = r#"{"a":1E5,"b":1e400,"c":-0.0,"d":1.0,"e":1E-7,"f":12345678901234567890123,"g":-1e-400,"deep":[{"x":{"y":[1E5,{"z":[-1e-400,1E+2,0.10]}]}}]}"#;

#[test]
fn numbers_in_a_result_reach_the_editor_with_their_exact_text() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    // With a text block: structuredContent passes as its bytes.
    raw_result(
        &mut b,
        11,
        &format!(
            r#"{{"content":[{{"type":"text","text":"n","n":1E5}}],"structuredContent":{SPELLINGS},"resultType":"complete","_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"s","version":"1"}},"k":1E5}}}}"#
        ),
    );
    assert_eq!(
        b.response_line(&json!(11)),
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":11,\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"n\",\"n\":1E5}}],\"structuredContent\":{SPELLINGS},\"_meta\":{{\"k\":1E5}}}}}}\n"
        )
    );
    // Without one: the added text block holds the structuredContent's own text.
    let r = raw_result(
        &mut b,
        12,
        &format!(r#"{{"structuredContent":{SPELLINGS}}}"#),
    );
    assert_eq!(r["result"]["content"][0]["text"], SPELLINGS);
    assert_eq!(
        b.response_line(&json!(12)),
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":12,\"result\":{{\"structuredContent\":{SPELLINGS},\"content\":[{{\"type\":\"text\",\"text\":{}}}]}}}}\n",
            serde_json::to_string(SPELLINGS).unwrap_or_default()
        )
    );
}

#[test]
fn numbers_in_tool_arguments_reach_the_upstream_with_their_exact_text() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{{"name":"mirror","arguments":{SPELLINGS},"_meta":{{"progressToken":5,"traceparent":"00-a"}}}}}}"#
    );
    b.send_raw_request(&json!(13), "tools/call", line.as_bytes());
    b.recv_response(&json!(13));
    let sent =
        format!(r#"{{"name":"mirror","arguments":{SPELLINGS},"_meta":{{"traceparent":"00-a","#);
    let got = b.upstream_lines();
    assert!(
        got.iter().any(|l| l.contains(&sent)),
        "no upstream line holds {sent}: {got:#?}"
    );
}

#[test]
fn a_retry_after_input_requests_carries_the_arguments_with_their_exact_text() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize_with(json!({"elicitation": {"form": {}}}));
    let round = r#"[{"q":{"method":"elicitation/create","params":{"message":"ok?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}}]"#;
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{{"name":"script","arguments":{{"rounds":{round},"n":{SPELLINGS}}}}}}}"#
    );
    b.send_raw_request(&json!(14), "tools/call", line.as_bytes());
    let ask = b.recv();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    b.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"ok": true}}}));
    b.recv_response(&json!(14));
    let sent = format!(r#""arguments":{{"rounds":{round},"n":{SPELLINGS}}}"#);
    let calls: Vec<String> = b
        .upstream_lines()
        .into_iter()
        .filter(|l| l.contains("\"script\""))
        .collect();
    assert_eq!(calls.len(), 2, "{calls:#?}");
    assert!(calls.iter().all(|l| l.contains(&sent)), "{sent} {calls:#?}");
    assert!(calls[1].contains("\"inputResponses\""), "{calls:#?}");
}

/// The frame the bridge wrote whose text holds `needle` (received already).
fn line_holding(b: &Bridge, needle: &str) -> String {
    b.seen_lines
        .iter()
        .find(|l| l.contains(needle))
        .cloned()
        .unwrap_or_else(|| panic!("no frame holds {needle}: {:#?}", b.seen_lines))
}

#[test]
fn numbers_in_an_upstream_error_reach_the_editor_with_their_exact_text() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    b.tools_call(
        json!(21),
        "respond_raw",
        json!({
            "before": r#"{"jsonrpc":"2.0","id":"#,
            "after": format!(r#","error":{{"code":-32000,"message":"m","data":{SPELLINGS}}}}}"#),
        }),
    );
    assert_eq!(
        b.response_line(&json!(21)),
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":21,\"error\":{{\"code\":-32000,\"message\":\"m\",\"data\":{SPELLINGS}}}}}\n"
        )
    );
}

#[test]
fn numbers_in_progress_and_log_notifications_reach_the_editor_with_their_exact_text() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    // The first forwarded request of this bridge gets the upstream progress token bp-1.
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"bp-1","progress":1E5,"total":1e400}}"#;
    let log = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"error","data":{SPELLINGS}}}}}"#
    );
    let r = b.request(
        json!(22),
        "tools/call",
        json!({"name": "emit", "arguments": {"lines": [progress, log]},
               "_meta": {"progressToken": "p"}}),
    );
    assert_eq!(r["result"]["content"][0]["text"], "emitted");
    assert_eq!(
        line_holding(&b, "notifications/progress"),
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":1E5,\"total\":1e400}}\n"
    );
    assert_eq!(
        line_holding(&b, "notifications/message"),
        format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"error\",\"data\":{SPELLINGS}}}}}\n"
        )
    );
}

#[test]
fn numbers_in_an_input_request_and_in_the_answer_keep_their_exact_text() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize_with(json!({"elicitation": {"form": {}}}));
    // Upstream -> editor: the question as the upstream wrote it (respond_raw, which answers
    // every retry the same way, so the test cancels after the first question).
    let schema =
        r#"{"type":"object","properties":{"n":{"type":"number","maximum":1E5,"default":-0.0}}}"#;
    b.send_tools_call(json!(23), "respond_raw", json!({
            "before": r#"{"jsonrpc":"2.0","id":"#,
            "after": format!(r#","result":{{"resultType":"input_required","inputRequests":{{"q":{{"method":"elicitation/create","params":{{"message":"n?","requestedSchema":{schema}}}}}}},"requestState":"s"}}}}"#),
        }));
    let ask = b.recv();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert!(
        line_holding(&b, "elicitation/create").contains(&format!(r#""requestedSchema":{schema}"#)),
        "{:#?}",
        b.seen_lines
    );
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 23}}));
    // Editor -> upstream: the answer's content as the editor wrote it.
    let round = r#"[{"q":{"method":"elicitation/create","params":{"message":"n?","requestedSchema":{"type":"object","properties":{"n":{"type":"number"}}}}}}]"#;
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{{"name":"script","arguments":{{"rounds":{round}}}}}}}"#
    );
    b.send_raw_request(&json!(24), "tools/call", line.as_bytes());
    // The cancel of the first question comes first.
    let cancelled = b.recv();
    assert_eq!(
        cancelled["method"], "notifications/cancelled",
        "{cancelled}"
    );
    let ask = b.recv();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let id = ask["id"].as_str().unwrap_or_default().to_string();
    b.send_raw(
        format!(r#"{{"jsonrpc":"2.0","id":"{id}","result":{{"action":"accept","content":{{"n":1E2}}}}}}"#)
            .as_bytes(),
    );
    b.send_raw(b"\n");
    b.recv_response(&json!(24));
    let retry = b
        .upstream_lines()
        .into_iter()
        .find(|l| l.contains("\"inputResponses\""))
        .unwrap_or_default();
    assert!(
        retry.contains(r#""content":{"n":1E2}"#),
        "the retry: {retry}"
    );
}

/// A `tools/call` result always has a `content` array (docs/architecture.md, the result rules):
/// a missing or `null` one becomes `[]`; one of another kind fails the call with
/// `invalid_response` and a warning, never an empty array in place of what the upstream sent.
#[test]
fn a_tool_result_content_that_is_not_an_array_fails_the_call_and_a_null_one_becomes_empty() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    let r = raw_result(&mut b, 31, r#"{"content":"notalist"}"#);
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 31, "error": {"code": -32603,
            "message": "The upstream server sent an invalid response",
            "data": {"cause": "invalid_response",
                "detail": "tools/call: the result's content is a string, not an array"}}})
    );
    b.wait_stderr(
        "mcp-bridge: translate: warn: tools/call: the result's content is a string, not an array: the request gets invalid_response\n",
    );
    let r = raw_result(&mut b, 32, r#"{"content":{"type":"text","text":"hi"}}"#);
    assert_eq!(
        r["error"]["data"]["detail"],
        "tools/call: the result's content is an object, not an array"
    );
    let r = raw_result(&mut b, 33, r#"{"content":null,"isError":true}"#);
    assert_eq!(r["result"], json!({"content": [], "isError": true}));
    let r = raw_result(&mut b, 34, r#"{"isError":false}"#);
    assert_eq!(r["result"], json!({"isError": false, "content": []}));
}
