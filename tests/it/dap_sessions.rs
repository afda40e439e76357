//! Black-box tests of `mcp-dap`: steps into and out of a function with debugpy, and two
//! sessions at once (debugpy and lldb-dap) in one server.

use crate::common;
use crate::dap::{call, frame_id, modern, read_text, start, write_program};
use crate::dap_lldb::{build_program, require_lldb_dap};

use common::*;
use serde_json::{Value, json};

/// The top frame's place and the reason of a state.
fn at(state: &Value) -> (Value, Value, Value) {
    (
        state["top_frame"]["name"].clone(),
        state["top_frame"]["line"].clone(),
        state["reason"].clone(),
    )
}

#[test]
fn a_python_program_is_stepped_into_and_out_of_a_function() {
    let program = write_program();
    let mut b = start();
    let launched = call(&mut b, "1", "launch", json!({"program": program}));
    assert_eq!(
        at(&launched["state"]),
        (json!("<module>"), json!(1), json!("entry"))
    );
    let step = call(&mut b, "2", "next", json!({"session": "s1"}));
    assert_eq!(
        at(&step),
        (json!("<module>"), json!(6), json!("step")),
        "{step}"
    );
    let step = call(&mut b, "3", "next", json!({"session": "s1"}));
    assert_eq!(
        at(&step),
        (json!("<module>"), json!(7), json!("step")),
        "{step}"
    );
    let step = call(&mut b, "4", "step_in", json!({"session": "s1"}));
    assert_eq!(at(&step), (json!("add"), json!(2), json!("step")), "{step}");
    let stack = call(&mut b, "5", "stack_trace", json!({"session": "s1"}));
    assert_eq!(
        stack["frames"]
            .as_array()
            .map(|f| f.iter().map(|f| f["at"].clone()).collect::<Vec<_>>()),
        Some(vec![
            json!(format!("{program}:2")),
            json!(format!("{program}:7"))
        ]),
        "{stack}"
    );
    let step = call(&mut b, "6", "step_out", json!({"session": "s1"}));
    assert_eq!(
        at(&step),
        (json!("<module>"), json!(7), json!("step")),
        "{step}"
    );
    let y = call(
        &mut b,
        "7",
        "evaluate",
        json!({"session": "s1", "expression": "add(1, 2)", "frame_id": frame_id(&step)}),
    );
    assert_eq!(y["result"], "3", "{y}");
    call(&mut b, "8", "continue", json!({"session": "s1"}));
    let exited = call(&mut b, "9", "wait", json!({"session": "s1"}));
    assert_eq!(
        exited,
        json!({"session": "s1", "status": "exited", "exit_code": 3})
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

#[test]
fn two_sessions_at_once_keep_their_own_state_and_output_and_one_ends_alone() {
    require_lldb_dap();
    let python = write_program();
    let (source, binary) = build_program("dap-two");
    let mut b = start();
    let py = call(&mut b, "1", "launch", json!({"program": python}));
    let native = call(
        &mut b,
        "2",
        "launch",
        json!({"program": binary, "adapter": "lldb"}),
    );
    assert_eq!(
        (&py["session"], &native["session"]),
        (&json!("s1"), &json!("s2"))
    );
    let listed = b.request(json!("3"), "resources/list", modern(json!({})));
    let uris: Vec<Value> = listed["result"]["resources"]
        .as_array()
        .map(|all| all.iter().map(|r| r["uri"].clone()).collect())
        .unwrap_or_default();
    assert_eq!(
        uris,
        [
            "dap://sessions/s1/state",
            "dap://sessions/s1/output",
            "dap://sessions/s2/state",
            "dap://sessions/s2/output"
        ]
    );

    call(
        &mut b,
        "4",
        "set_breakpoints",
        json!({"session": "s1", "source": python, "lines": [3]}),
    );
    call(
        &mut b,
        "5",
        "set_breakpoints",
        json!({"session": "s2", "source": source, "lines": [17]}),
    );
    call(&mut b, "6", "continue", json!({"session": "s1"}));
    call(&mut b, "7", "continue", json!({"session": "s2"}));
    let s1 = call(&mut b, "8", "wait", json!({"session": "s1"}));
    let s2 = call(&mut b, "9", "wait", json!({"session": "s2"}));
    assert_eq!(
        at(&s1),
        (json!("add"), json!(3), json!("breakpoint")),
        "{s1}"
    );
    assert_eq!(
        at(&s2),
        (json!("main"), json!(17), json!("breakpoint")),
        "{s2}"
    );
    let total = call(
        &mut b,
        "10",
        "evaluate",
        json!({"session": "s1", "expression": "total"}),
    );
    let s = call(
        &mut b,
        "11",
        "evaluate",
        json!({"session": "s2", "expression": "s"}),
    );
    assert_eq!(
        (&total["result"], &s["result"]),
        (&json!("42"), &json!("9"))
    );

    // The Python session ends; the native one goes on to its exit.
    let ended = call(&mut b, "12", "terminate", json!({"session": "s1"}));
    assert_eq!(ended["terminated"], "s1");
    let r = b.request(
        json!("13"),
        "tools/call",
        modern(json!({"name": "stack_trace", "arguments": {"session": "s1"}})),
    );
    assert_eq!(
        text_of(&r),
        "no session \"s1\" is open (it was terminated, or never launched)"
    );
    call(&mut b, "14", "continue", json!({"session": "s2"}));
    let exited = call(&mut b, "15", "wait", json!({"session": "s2"}));
    assert_eq!(
        (&exited["status"], &exited["exit_code"]),
        (&json!("exited"), &json!(7)),
        "{exited}"
    );
    let thread = &s2["thread_id"];
    assert_eq!(
        read_text(&mut b, "16", "dap://sessions/s2/output"),
        format!("s is 9\r\nProcess {thread} exited with status = 7 (0x00000007) \n")
    );
    assert_eq!(
        read_text(&mut b, "17", "dap://sessions/s1/output"),
        "no session \"s1\" is open"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}
