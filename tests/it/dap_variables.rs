//! Black-box tests of `mcp-dap` reading large variables: a page of a huge array read from
//! real lldb-dap with DAP's `start` and `count`, and an answer over the DAP body limit, which
//! a scripted adapter (`common/dap_script.py`) sends on demand, skipped without losing the
//! session.

use crate::common;
use crate::dap::{call, call_error, launch_scripted_to_a_breakpoint, read_text, start_scripted};
use crate::dap_lldb::{build_c, require_lldb_dap};

use common::*;
use serde_json::{Value, json};
use std::process::Command;

/// 12,000 strings of 2,000 bytes: lldb-dap's answer for every element is 26.8 MB, over the
/// DAP body limit (16 MiB).
const BIG_ARRAY: &str = "\
#include <stdio.h>
#include <string.h>

#define COUNT 12000
#define LENGTH 2000

static char names[COUNT][LENGTH];

int main(void) {
    for (int i = 0; i < COUNT; i++) {
        memset(names[i], 'x', LENGTH - 1);
        char head[16];
        int n = snprintf(head, sizeof head, \"item-%05d-\", i);
        memcpy(names[i], head, (size_t)n);
    }
    printf(\"%zu\\n\", strlen(names[COUNT - 1]));
    return 0;
}
";

/// The most a `variables` result carries, in bytes of the JSON of its variables
/// (`tools::MAX_VARIABLES_RESULT_BYTES`).
const MAX_VARIABLES_RESULT_BYTES: usize = 64 * 1024;

/// How many strings of [`BIG_ARRAY`] a page of 1000 lists within
/// [`MAX_VARIABLES_RESULT_BYTES`]: each is about 1,130 bytes of JSON (its value cut at
/// 1024 bytes, its name, type and `variablesReference`), and the 58 first take 65,530.
const BOUNDED_PAGE_LENGTH: usize = 58;

#[test]
fn a_page_of_a_huge_array_is_read_from_lldb_dap_and_the_session_goes_on() {
    require_lldb_dap();
    let (source, binary) = build_c("dap-big-array", BIG_ARRAY);
    let mut b = Bridge::start_command(&mut Command::new(common::dap_bin()), Revision::Modern);
    call(
        &mut b,
        "1",
        "launch",
        json!({"program": binary, "adapter": "lldb"}),
    );
    call(
        &mut b,
        "2",
        "set_breakpoints",
        json!({"session": "s1", "source": source, "lines": [16]}),
    );
    let stopped = call(&mut b, "3", "continue", json!({"session": "s1"}));
    assert_eq!(stopped["status"], "running", "{stopped}");
    let stopped = call(&mut b, "3b", "wait", json!({"session": "s1"}));
    assert_eq!(stopped["top_frame"]["line"], 16, "{stopped}");
    let all = call(&mut b, "4", "variables", json!({"session": "s1"}));
    let globals = all["scopes"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == "Globals").cloned())
        .expect("a Globals scope");
    let names = globals["variables"][0].clone();
    assert_eq!(names["name"], "names", "{names}");
    let reference = names["variablesReference"].clone();
    let page = call(
        &mut b,
        "5",
        "variables",
        json!({"session": "s1", "variables_reference": reference, "start": 11990,
            "count": 2}),
    );
    // lldb shows the first 1024 bytes of a string, then `...`; mcp-dap cuts a value at 1024
    // bytes (MAX_VALUE_BYTES).
    let value = |i: usize| format!("\"item-{i:05}-{}", "x".repeat(1024 - 12));
    assert_eq!(
        page,
        json!({"variables": [
            {"name": "[11990]", "value": value(11990), "cut": true, "type": "char[2000]",
                "variablesReference": page["variables"][0]["variablesReference"],
                "indexedVariables": 2000},
            {"name": "[11991]", "value": value(11991), "cut": true, "type": "char[2000]",
                "variablesReference": page["variables"][1]["variablesReference"],
                "indexedVariables": 2000}],
            "start": 11990, "more": true,
            "next": {"variables_reference": reference, "start": 11992}})
    );
    // The size the adapter gave, for the client to page by.
    assert_eq!(names["indexedVariables"], 12000, "{names}");
    // The last page says that nothing follows.
    let last = call(
        &mut b,
        "6",
        "variables",
        json!({"session": "s1", "variables_reference": reference, "start": 11999}),
    );
    assert_eq!(
        (
            &last["variables"][0]["name"],
            last["variables"].as_array().map(Vec::len),
            &last["more"]
        ),
        (&json!("[11999]"), Some(1), &json!(false)),
        "{last}"
    );
    // A page of 1000 such strings passes the result's bound (64 KiB): it stops before the
    // string that would pass it. Each string is the same size, so the count is fixed.
    let bounded = call(
        &mut b,
        "7",
        "variables",
        json!({"session": "s1", "variables_reference": reference, "count": 1000}),
    );
    let listed = bounded["variables"].as_array().cloned().unwrap_or_default();
    let bytes: usize = listed.iter().map(|v| v.to_string().len()).sum();
    let following = call(
        &mut b,
        "7b",
        "variables",
        json!({"session": "s1", "variables_reference": reference, "start": listed.len(),
            "count": 1}),
    );
    let one_more = following["variables"][0].to_string().len();
    assert_eq!(
        (
            listed.len(),
            bytes <= MAX_VARIABLES_RESULT_BYTES,
            bytes + one_more > MAX_VARIABLES_RESULT_BYTES
        ),
        (BOUNDED_PAGE_LENGTH, true, true),
        "{bytes} bytes listed, {one_more} more"
    );
    assert_eq!(
        (&bounded["start"], &bounded["more"], &bounded["next"]),
        (
            &json!(0),
            &json!(true),
            &json!({"variables_reference": reference, "start": BOUNDED_PAGE_LENGTH})
        )
    );
    call(&mut b, "8", "continue", json!({"session": "s1"}));
    let exited = call(&mut b, "9", "wait", json!({"session": "s1"}));
    assert_eq!(
        (&exited["status"], &exited["exit_code"]),
        (&json!("exited"), &json!(0)),
        "{exited}"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

#[test]
fn an_answer_over_the_body_limit_fails_its_request_and_the_session_goes_on() {
    let mut b = start_scripted();
    launch_scripted_to_a_breakpoint(&mut b, json!({"oversized_reference": 7}));
    let error = call_error(
        &mut b,
        "2",
        "variables",
        json!({"session": "s1", "variables_reference": 7}),
    );
    assert_eq!(
        error,
        format!(
            "variables: the adapter's answer to variables is {} bytes, over mcp-dap's limit \
             of 16777216 bytes; it was skipped and the session goes on: ask for less \
             (variables: `start` and `count`)",
            17 << 20
        )
    );
    // The framing stayed in step: the next answer is read, the session is stopped still.
    let page = call(
        &mut b,
        "3",
        "variables",
        json!({"session": "s1", "variables_reference": 1}),
    );
    assert_eq!(
        page,
        json!({"variables": [{"name": "n", "value": "1", "type": null,
            "variablesReference": 0}], "start": 0, "more": false})
    );
    let state: Value =
        parse_json(&read_text(&mut b, "4", "dap://sessions/s1/state")).expect("the state is JSON");
    assert_eq!(state["status"], "stopped", "{state}");
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

/// The bounds of an aggregate shown inline (`tools::variables::MAX_INLINE_FIELDS`,
/// `tools::variables::MAX_INLINE_BYTES`, `tools::variables::MAX_INLINE_REQUESTS`).
const MAX_INLINE_FIELDS: usize = 8;
const MAX_INLINE_BYTES: usize = 256;
const MAX_INLINE_REQUESTS: usize = 32;

/// A DAP Variable of the scripted adapter: its children behind `reference` (0: none).
fn scripted(name: &str, value: &str, reference: i64) -> Value {
    json!({"name": name, "value": value, "variablesReference": reference})
}

/// `count` children `f0`, `f1`, ..., each of the value `value(i)`.
fn fields(count: usize, value: impl Fn(usize) -> String) -> Value {
    (0..count)
        .map(|i| scripted(&format!("f{i}"), &value(i), 0))
        .collect()
}

/// The variables `mcp-dap` lists: `value` as shown, no `type`.
fn shown(name: &str, value: &str, reference: i64) -> Value {
    json!({"name": name, "value": value, "type": null, "variablesReference": reference})
}

#[test]
fn aggregates_are_shown_inline_within_their_bounds() {
    // Each aggregate's value shows nothing of its contents (lldb-dap's `TYPE @ 0xADDRESS`),
    // so mcp-dap reads its children to show them inline.
    let long_field = "y".repeat(40);
    let mut hinted = scripted("hinted", "Hinted @ 0x1200", 12);
    hinted["namedVariables"] = json!(MAX_INLINE_FIELDS + 1);
    let mut listed = serde_json::Map::new();
    listed.insert(
        "1".into(),
        json!([
            scripted("wide", "Wide @ 0x1000", 10),
            scripted("eight", "Eight @ 0x1100", 11),
            hinted,
            scripted("deep", "Outer @ 0x2000", 20),
            scripted("long", "Long @ 0x3000", 30),
        ]),
    );
    listed.insert(
        "10".into(),
        fields(MAX_INLINE_FIELDS + 1, |i| i.to_string()),
    );
    listed.insert("11".into(), fields(MAX_INLINE_FIELDS, |i| i.to_string()));
    listed.insert("12".into(), json!([scripted("a", "1", 0)]));
    listed.insert("20".into(), json!([scripted("mid", "Mid @ 0x2100", 21)]));
    listed.insert(
        "21".into(),
        json!([scripted("inner", "Inner @ 0x2200", 22)]),
    );
    listed.insert("22".into(), json!([scripted("x", "1", 0)]));
    listed.insert(
        "30".into(),
        fields(MAX_INLINE_FIELDS, |_| long_field.clone()),
    );
    // More aggregates in one result than it may read: each one request.
    let many = MAX_INLINE_REQUESTS + 1;
    listed.insert(
        "40".into(),
        (0..many)
            .map(|i| scripted(&format!("p{i}"), "P @ 0x4000", 400 + i as i64))
            .collect(),
    );
    for i in 0..many {
        listed.insert(
            (400 + i).to_string(),
            json!([scripted("v", &i.to_string(), 0)]),
        );
    }
    let mut b = start_scripted();
    launch_scripted_to_a_breakpoint(&mut b, json!({"variables": listed}));
    let locals = call(&mut b, "2", "variables", json!({"session": "s1"}));
    let eight: Vec<String> = (0..MAX_INLINE_FIELDS)
        .map(|i| format!("f{i}: {i}"))
        .collect();
    let long: Vec<String> = (0..MAX_INLINE_FIELDS)
        .map(|i| format!("f{i}: {long_field}"))
        .collect();
    let long = format!("{{{}}}", long.join(", "));
    assert!(long.len() > MAX_INLINE_BYTES, "{long}");
    let mut hinted = shown("hinted", "Hinted @ 0x1200", 12);
    hinted["namedVariables"] = json!(MAX_INLINE_FIELDS + 1);
    assert_eq!(
        locals,
        json!({"frameId": 100, "scopes": [{"name": "Locals", "variablesReference": 1,
        "start": 0, "more": false, "variables": [
            // Nine children: more than MAX_INLINE_FIELDS, left as the adapter wrote it.
            shown("wide", "Wide @ 0x1000", 10),
            // Eight: inline.
            shown("eight", &format!("{{{}}}", eight.join(", ")), 11),
            // Nine by the adapter's count: not even read.
            hinted,
            // MAX_INLINE_DEPTH levels inline; the third as the adapter wrote it.
            shown("deep", "{mid: {inner: Inner @ 0x2200}}", 20),
            // Cut at MAX_INLINE_BYTES, and `...` says so.
            shown("long", &format!("{}...", &long[..MAX_INLINE_BYTES]), 30),
        ]}]})
    );
    // One result reads at most MAX_INLINE_REQUESTS aggregates; the next is left as it is.
    let page = call(
        &mut b,
        "3",
        "variables",
        json!({"session": "s1", "variables_reference": 40}),
    );
    let expected: Vec<Value> = (0..many)
        .map(|i| {
            let value = match i < MAX_INLINE_REQUESTS {
                true => format!("{{v: {i}}}"),
                false => "P @ 0x4000".to_owned(),
            };
            shown(&format!("p{i}"), &value, 400 + i as i64)
        })
        .collect();
    assert_eq!(
        page,
        json!({"variables": expected, "start": 0, "more": false})
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}
