//! Every bad-input row of the error table; the bridge keeps serving after each.

use crate::common;

use common::{Bridge, error_of};
use serde_json::{Value, json};

fn still_serving(b: &mut Bridge, id: i64) {
    assert_eq!(b.request(json!(id), "ping", json!({}))["result"], json!({}));
}

#[test]
fn not_json_gets_parse_error_without_an_id() {
    let mut b = Bridge::start(&[], &[]);
    b.send_raw(b"this is not json\n");
    let r = b.recv();
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error", "data": {"cause": "parse_error"}}})
    );
    still_serving(&mut b, 1);
}

#[test]
fn bad_utf8_gets_parse_error_with_the_recovered_id() {
    let mut b = Bridge::start(&[], &[]);
    let mut line = br#"{"jsonrpc":"2.0","id":"u8","method":"ping","params":{"x":""#.to_vec();
    line.extend_from_slice(&[0xc3, 0x28]);
    line.extend_from_slice(b"\"}}\n");
    b.send_raw(&line);
    let r = b.recv();
    assert_eq!(r["id"], "u8");
    assert_eq!(error_of(&r), (-32700, "parse_error".into()));
    still_serving(&mut b, 2);
}

#[test]
fn a_line_over_the_limit_gets_line_too_long_with_the_id_first_or_last() {
    let mut b = Bridge::start(&["--max-line-bytes", "1000"], &[]);
    let pad = "p".repeat(5000);
    b.send_raw(format!("{{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"ping\",\"params\":{{\"pad\":\"{pad}\"}}}}\n").as_bytes());
    let r = b.recv();
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 41, "error": {"code": -32600,
            "message": "Invalid request: the line is longer than the limit",
            "data": {"cause": "line_too_long", "detail": 1000}}})
    );
    // The TypeScript SDK 1.x writes the id as the last member.
    b.send_raw(format!("{{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"params\":{{\"pad\":\"{pad}\"}},\"id\":\"last\"}}\n").as_bytes());
    let r = b.recv();
    assert_eq!(r["id"], "last");
    assert_eq!(error_of(&r), (-32600, "line_too_long".into()));
    // No id anywhere: no id member.
    b.send_raw(format!("{{\"x\":\"{pad}\"}}\n").as_bytes());
    let r = b.recv();
    assert!(r.get("id").is_none());
    assert_eq!(error_of(&r), (-32600, "line_too_long".into()));
    still_serving(&mut b, 3);
}

#[test]
fn a_message_deeper_than_64_levels_gets_too_deep() {
    let mut b = Bridge::start(&[], &[]);
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"ping","params":{{"a":{}1{}}}}}"#,
        "[".repeat(70),
        "]".repeat(70)
    );
    b.send_raw(format!("{deep}\n").as_bytes());
    let r = b.recv();
    assert_eq!(r["id"], 7);
    assert_eq!(
        r["error"]["data"],
        json!({"cause": "too_deep", "detail": 64})
    );
    assert_eq!(r["error"]["code"], -32600);
    // 64 levels exactly are fine.
    let ok = format!(
        r#"{{"jsonrpc":"2.0","id":8,"method":"ping","params":{{"a":{}1{}}}}}"#,
        "[".repeat(62),
        "]".repeat(62)
    );
    b.send_raw(format!("{ok}\n").as_bytes());
    assert_eq!(b.recv(), json!({"jsonrpc": "2.0", "id": 8, "result": {}}));
}

#[test]
fn json_that_is_not_json_rpc_gets_invalid_request_shape() {
    let mut b = Bridge::start(&[], &[]);
    let cases: Vec<(&str, Option<Value>)> = vec![
        (
            r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#,
            Some(json!(5)),
        ),
        (r#"[{"jsonrpc":"2.0","id":6,"method":"ping"}]"#, None),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"ping","params":"x"}"#,
            Some(json!(7)),
        ),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, None),
        (r#"42"#, None),
    ];
    for (line, id) in cases {
        b.send_raw(format!("{line}\n").as_bytes());
        let r = b.recv();
        assert_eq!(
            error_of(&r),
            (-32600, "invalid_request_shape".into()),
            "{line}"
        );
        assert_eq!(r.get("id").cloned(), id, "{line}");
    }
    still_serving(&mut b, 9);
}

#[test]
fn responses_with_a_null_or_non_scalar_id_are_dropped() {
    let mut b = Bridge::start(&[], &[]);
    b.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":[1],\"error\":{\"code\":1,\"message\":\"x\"}}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n");
    // Lines are handled in order: whatever the three got would come before the pong.
    still_serving(&mut b, 10);
    assert_eq!(
        b.seen,
        vec![json!({"jsonrpc": "2.0", "id": 10, "result": {}})]
    );
}

/// An answer of the editor to an id the bridge never used is dropped with a debug line that
/// names the id as JSON text (`"25"` for a string, `25` for a number).
#[test]
fn an_answer_to_an_id_the_bridge_never_used_names_the_id_as_json_in_its_debug_line() {
    let mut b = Bridge::start(&["--log-level", "debug"], &[]);
    b.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":\"25\",\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":26,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}\n");
    still_serving(&mut b, 10);
    b.wait_stderr(
        "mcp-bridge: pending: debug: dropped an answer with an id the bridge never used (\"25\")\n",
    );
    b.wait_stderr(
        "mcp-bridge: pending: debug: dropped an answer with an id the bridge never used (26)\n",
    );
    b.wait_stderr("mcp-bridge: pending: debug: dropped an answer without an id\n");
}

#[test]
fn requests_cut_at_every_byte_boundary_are_read_whole() {
    let mut b = Bridge::start(&[], &[]);
    let mut all = Vec::new();
    for i in 0..5 {
        all.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}\r\n").as_bytes(),
        );
    }
    for byte in all {
        b.send_raw(&[byte]);
    }
    for i in 0..5 {
        assert_eq!(b.recv(), json!({"jsonrpc": "2.0", "id": i, "result": {}}));
    }
}

#[test]
fn an_id_nested_in_params_is_never_taken_for_the_request_id() {
    let mut b = Bridge::start(&["--max-line-bytes", "1000"], &[]);
    b.send_raw(br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"lookup","arguments":{"id":50}},"id":51,}"#);
    b.send_raw(b"\n");
    let r = b.recv();
    assert_eq!(r["id"], 51);
    assert_eq!(error_of(&r), (-32700, "parse_error".into()));
    let pad = "x".repeat(2000);
    b.send_raw(format!(r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"arguments":{{"id":5,"text":"{pad}"}}}},"id":103}}"#).as_bytes());
    b.send_raw(b"\n");
    let r = b.recv();
    assert_eq!(r["id"], 103);
    assert_eq!(error_of(&r), (-32600, "line_too_long".into()));
}

#[test]
fn a_request_with_the_id_of_a_request_in_flight_gets_duplicate_id() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize_with(json!({"elicitation": {}}));
    // The request stays in flight until the editor answers its question: no time involved.
    b.send_tools_call(json!(3), "ask_name", json!({}));
    let q = b.recv();
    assert_eq!(q["id"], "b-1");
    b.send_request(json!(3), "ping", json!({}));
    let r = b.recv();
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32600,
            "message": "Invalid request: the id is in use by a request in flight", "data": {"cause": "duplicate_id"}}})
    );
    b.send(&json!({"jsonrpc": "2.0", "id": "b-1", "result": {"action": "accept", "content": {"name": "Ada"}}}));
    let done = b.recv();
    assert_eq!(done["id"], 3);
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!");
}

#[test]
fn blank_lines_are_skipped_and_a_last_line_without_newline_is_answered() {
    let mut b = Bridge::start(&[], &[]);
    b.send_raw(b"\n \t\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\n");
    b.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
    b.close_stdin();
    assert_eq!(
        b.recv_to_the_end(),
        vec![
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
            json!({"jsonrpc": "2.0", "id": 2, "result": {}}),
        ]
    );
}

/// An upstream answer over `--max-line-bytes` fails its request with `invalid_response`
/// (-32603: the upstream's fault; `line_too_long` is -32600, which would tell the editor that
/// its own request was invalid) whose detail names the limit and the option that raises it,
/// with one warning that names the length and the limit and no second "not a JSON-RPC
/// message" warning; the bridge keeps serving.
#[test]
fn an_upstream_answer_over_the_limit_fails_its_request_with_invalid_response_and_one_warning() {
    let mut b = Bridge::start(&["--max-line-bytes", "4096"], &[]);
    b.initialize();
    let r = b.tools_call(json!(5), "large_text", json!({"bytes": 5000}));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32603,
            "message": "The upstream server sent an invalid response",
            "data": {"cause": "invalid_response",
                "detail": "the upstream's answer is a line over the limit of 4096 bytes (--max-line-bytes raises it)"}}})
    );
    still_serving(&mut b, 6);
    b.close_stdin();
    let warnings = b.stderr_lines_to_the_end(|l| l.starts_with("mcp-bridge: upstream: warn: "));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let len: usize = warnings[0]
        .strip_prefix("mcp-bridge: upstream: warn: the upstream sent a line of ")
        .and_then(|rest| rest.strip_suffix(" bytes, over the limit of 4096 bytes"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not the over-long line warning: {}", warnings[0]));
    assert!((5000..6000).contains(&len), "{len}");
}

/// A CRLF line is measured without its `\r`, as an LF line is: a line of exactly the limit
/// passes either way, one byte more gets `line_too_long`.
#[test]
fn a_crlf_line_of_exactly_the_limit_passes() {
    let ping = br#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#;
    let limit = ping.len().to_string();
    let mut b = Bridge::start(&["--max-line-bytes", &limit], &[]);
    let mut line = ping.to_vec();
    line.extend_from_slice(b"\r\n");
    b.send_raw(&line);
    assert_eq!(b.recv(), json!({"jsonrpc": "2.0", "id": 8, "result": {}}));
    b.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\" }\r\n");
    assert_eq!(
        b.recv(),
        json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -32600,
            "message": "Invalid request: the line is longer than the limit",
            "data": {"cause": "line_too_long", "detail": ping.len()}}})
    );
}

/// RFC 8259 §8.1: one UTF-8 byte order mark at the very start of the editor's input (what
/// PowerShell and other Windows tools write) is ignored; a mark at the start of any later line
/// is a parse error under the id the rest of the line names; the bridge keeps serving.
#[test]
fn a_byte_order_mark_at_the_start_of_the_input_is_ignored_and_elsewhere_is_a_parse_error_with_the_id()
 {
    let mut b = Bridge::start(&[], &[]);
    b.send_raw(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
    assert_eq!(b.recv(), json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    b.send_raw(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
    assert_eq!(
        b.recv(),
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32700, "message": "Parse error",
            "data": {"cause": "parse_error"}}})
    );
    b.initialize();
    still_serving(&mut b, 3);
}

/// The same rule for the upstream's stdout: a server that writes a UTF-8 byte order mark
/// before its first line (a Windows server's UTF-8 preamble) is read as if it did not; a
/// mark at the start of a later answer fails that request with `invalid_response`.
#[test]
fn a_byte_order_mark_before_the_upstreams_first_line_is_ignored_and_elsewhere_fails_its_request() {
    let mut b = Bridge::start(&[], &["--stdout-bom"]);
    let init = b.initialize();
    assert_eq!(
        init["result"]["serverInfo"]["name"],
        json!("mcp-fixture-server"),
        "{init}"
    );
    let r = b.tools_call(json!(4), "echo", json!({"text": "hi"}));
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": "hi"}]}})
    );
    let r = b.tools_call(
        json!(5),
        "respond_raw",
        json!({"before": "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":", "after": ",\"result\":{}}"}),
    );
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32603,
            "message": "The upstream server sent an invalid response",
            "data": {"cause": "invalid_response"}}})
    );
    still_serving(&mut b, 6);
}
