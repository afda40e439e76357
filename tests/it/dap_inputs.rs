//! Black-box tests of what `mcp-dap` does with a client's odd inputs: breakpoint lines below
//! 1, adapter names in another case, inputs of megabytes in an error, and the size of the
//! resume answers.

use crate::common;
use crate::dap::{call, call_error, launch_stopped, read_text, start, write_program};
use crate::dap_lldb::{no_such_program, require_lldb_dap};

use common::*;
use serde_json::{Value, json};

/// An input of 5 MB, as a tester sent it.
const HUGE_INPUT_BYTES: usize = 5_000_000;

#[test]
fn a_breakpoint_line_below_one_is_invalid_and_never_reaches_the_adapter() {
    let program = write_program();
    let mut b = start();
    launch_stopped(&mut b, &program);
    for (id, line) in [("2", 0), ("3", -3)] {
        let error = call_error(
            &mut b,
            id,
            "set_breakpoints",
            json!({"session": "s1", "source": program, "lines": [7, line]}),
        );
        assert_eq!(
            error,
            format!("Invalid arguments: lines: {line} is not a line (lines start at 1)")
        );
    }
    let state: Value =
        parse_json(&read_text(&mut b, "4", "dap://sessions/s1/state")).expect("the state is JSON");
    assert_eq!(state["breakpoints"], Value::Null, "{state}");
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

#[test]
fn a_resume_answer_carries_no_breakpoint_list() {
    let program = write_program();
    let mut b = start();
    let launched = launch_stopped(&mut b, &program);
    let thread = launched["state"]["thread_id"].clone();
    assert!(thread.is_i64(), "{launched}");
    let lines: Vec<i64> = (1..=9).collect();
    let set = call(
        &mut b,
        "2",
        "set_breakpoints",
        json!({"session": "s1", "source": program, "lines": lines}),
    );
    assert_eq!(
        set["breakpoints"].as_array().map(Vec::len),
        Some(9),
        "{set}"
    );
    let next = call(&mut b, "3", "next", json!({"session": "s1"}));
    assert_eq!(next["breakpoints"], Value::Null, "{next}");
    assert_eq!(
        (&next["status"], &next["resumed_thread_id"]),
        (&json!("stopped"), &thread),
        "{next}"
    );
    let continued = call(&mut b, "4", "continue", json!({"session": "s1"}));
    assert_eq!(
        continued,
        json!({"session": "s1", "status": "running", "resumed_thread_id": thread})
    );
    // The state resource keeps the whole list.
    let state: Value =
        parse_json(&read_text(&mut b, "5", "dap://sessions/s1/state")).expect("the state is JSON");
    assert_eq!(
        state["breakpoints"].as_array().map(Vec::len),
        Some(9),
        "{state}"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

#[test]
fn an_error_repeats_at_most_256_bytes_of_a_huge_input() {
    let mut b = start();
    let huge = "a".repeat(HUGE_INPUT_BYTES);
    let cut = "a".repeat(256);
    let error = call_error(&mut b, "1", "wait", json!({"session": huge}));
    assert_eq!(
        error,
        format!(
            "no session \"{cut}\"... ({HUGE_INPUT_BYTES} bytes) is open (it was terminated, or \
             never launched)"
        )
    );
    // An absolute path of the same length: a relative one is made absolute first.
    let path = format!("/{}", &huge[1..]);
    let path_cut = format!("/{}", &cut[1..]);
    let error = call_error(&mut b, "2", "launch", json!({"program": path}));
    assert_eq!(
        error,
        format!(
            "cannot read the program \"{path_cut}\"... ({HUGE_INPUT_BYTES} bytes): File name too long \
             (os error 36); name its adapter with `adapter` (debugpy (or python), lldb (or c, \
             cpp, c++, rust))"
        )
    );
    let error = call_error(
        &mut b,
        "3",
        "launch",
        json!({"program": "/bin/true", "adapter": huge}),
    );
    assert_eq!(
        error,
        format!(
            "unknown adapter \"{cut}\"... ({HUGE_INPUT_BYTES} bytes); the adapters: debugpy (or \
             python), lldb (or c, cpp, c++, rust)"
        )
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

#[test]
fn adapter_names_are_matched_in_any_case() {
    require_lldb_dap();
    let program = write_program();
    let mut b = start();
    let launched = call(
        &mut b,
        "1",
        "launch",
        json!({"program": program, "adapter": "Python"}),
    );
    assert_eq!(
        (&launched["session"], &launched["state"]["reason"]),
        (&json!("s1"), &json!("entry")),
        "{launched}"
    );
    // lldb-dap named `LLDB` is started: its own refusal of a program that does not exist.
    let missing = scratch_dir("dap-case").join("no-such-program");
    let error = call_error(
        &mut b,
        "2",
        "launch",
        json!({"program": missing, "adapter": "LLDB"}),
    );
    assert_eq!(error, no_such_program(&missing));
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

/// serde_json gives `invalid number` alone for a number that an unsigned field cannot hold:
/// the error names the argument and the range instead.
#[test]
fn a_negative_number_for_an_unsigned_argument_says_what_was_expected() {
    let mut b = start();
    let error = call_error(
        &mut b,
        "1",
        "wait",
        json!({"session": "s1", "timeout_secs": -1}),
    );
    assert_eq!(
        error,
        "Invalid arguments: timeout_secs: -1 is not an integer from 0 to 18446744073709551615"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}
