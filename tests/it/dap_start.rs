//! Black-box tests of `mcp-dap`'s start of a session: DAP's launch sequence (a refusal ends
//! it at once, a program that ends before its configuration keeps its state), the error of
//! each wait naming what did not come, the adapter chosen from the program, a missing adapter
//! named with its install command, and SIGTERM as the end of stdin.

use crate::common;
use crate::dap::{
    assert_nothing_left, call, call_error, debugpy_processes, launch_scripted_to_a_breakpoint,
    launch_stopped, modern, read_text, start, start_scripted, start_scripted_with, venv_bin,
    write_program,
};
use crate::dap_lldb::{build_program, no_such_program, require_lldb_dap};

use common::*;
use serde_json::{Value, json};
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn a_launch_that_lldb_dap_refuses_ends_at_once_with_the_adapters_message() {
    require_lldb_dap();
    let missing = scratch_dir("dap-refused").join("no-such-program");
    let mut b = Bridge::start_command(&mut Command::new(common::dap_bin()), Revision::Modern);
    // The adapter's own words: a start that waited for an `initialized` event instead would
    // end with the wait's error.
    let error = call_error(
        &mut b,
        "1",
        "launch",
        json!({"program": missing, "adapter": "lldb"}),
    );
    assert_eq!(error, no_such_program(&missing));
    let listed = b.request(json!("2"), "resources/list", modern(json!({})));
    assert_eq!(listed["result"]["resources"], json!([]));
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

#[test]
fn a_no_debug_launch_that_exits_keeps_its_output_and_exit_code() {
    let program = write_program();
    let mut b = start();
    let launched = call(
        &mut b,
        "1",
        "launch",
        json!({"program": program, "launch_arguments": {"noDebug": true}}),
    );
    assert_eq!(launched["session"], "s1", "{launched}");
    let exited = call(&mut b, "2", "wait", json!({"session": "s1"}));
    assert_eq!(
        exited,
        json!({"session": "s1", "status": "exited", "exit_code": 3})
    );
    assert_eq!(
        read_text(&mut b, "3", "dap://sessions/s1/output"),
        "y is 42\n"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

#[test]
fn launch_without_an_adapter_picks_lldb_for_an_executable_and_language_names_map() {
    require_lldb_dap();
    let (_, binary) = build_program("dap-pick");
    let python = write_program();
    let mut b = start();
    call(
        &mut b,
        "1",
        "launch",
        json!({"program": binary, "stop_on_entry": false}),
    );
    let exited = call(&mut b, "2", "wait", json!({"session": "s1"}));
    assert_eq!(
        exited,
        json!({"session": "s1", "status": "exited", "exit_code": 7})
    );
    for (id, name, program, session) in [("3", "c", &binary, "s2"), ("5", "python", &python, "s3")]
    {
        call(
            &mut b,
            id,
            "launch",
            json!({"program": program, "adapter": name, "stop_on_entry": false}),
        );
        let exited = call(
            &mut b,
            &format!("{id}w"),
            "wait",
            json!({"session": session}),
        );
        assert_eq!(exited["status"], "exited", "{name}: {exited}");
    }
    let error = call_error(
        &mut b,
        "7",
        "launch",
        json!({"program": python, "adapter": "cobol"}),
    );
    assert_eq!(
        error,
        "unknown adapter \"cobol\"; the adapters: debugpy (or python), lldb (or c, cpp, c++, rust)"
    );
    let text = scratch_dir("dap-pick-text").join("notes.txt");
    std::fs::write(&text, "hello\n").expect("write a text file");
    let error = call_error(&mut b, "8", "launch", json!({"program": text}));
    assert_eq!(
        error,
        format!(
            "cannot tell the adapter of {:?} (neither a .py file nor an ELF executable): name it \
             with `adapter` (debugpy (or python), lldb (or c, cpp, c++, rust))",
            text.display().to_string()
        )
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

#[test]
fn a_python3_without_debugpy_is_named_with_its_install_command_and_the_adapter_option() {
    // A python3 that cannot import debugpy: the venv's, without its site-packages (-S).
    let dir = scratch_dir("dap-no-debugpy");
    let python3 = dir.join("python3");
    std::fs::write(
        &python3,
        format!(
            "#!/bin/sh\nexec {} -S \"$@\"\n",
            venv_bin().join("python3").display()
        ),
    )
    .expect("write python3");
    let made_executable = Command::new("chmod").arg("+x").arg(&python3).status();
    assert!(matches!(made_executable, Ok(s) if s.success()));
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let program = write_program();
    let mut cmd = Command::new(common::dap_bin());
    cmd.env("PATH", path);
    let mut b = Bridge::start_command(&mut cmd, Revision::Modern);
    let error = call_error(&mut b, "1", "launch", json!({"program": program}));
    assert_eq!(
        error,
        "launch failed: the adapter debugpy (`python3 -m debugpy.adapter`) ended before it \
         answered `initialize` (the adapter closed its output (it exited or crashed)): is \
         debugpy installed for it? install it with `python3 -m pip install debugpy`, or give \
         the adapter's command with `mcp-dap --adapter debugpy=COMMAND [ARG...]`"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

#[test]
fn sigterm_mid_session_leaves_no_adapter_nor_debuggee_and_exits_as_at_the_end_of_stdin() {
    let program = write_program();
    let mut b = start();
    launch_stopped(&mut b, &program);
    let (pids, groups) = debugpy_processes(&b);
    b.signal("-TERM");
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
    assert_nothing_left(&pids, &groups);
}

/// The time limits of a start's waits for the adapter (`adapter::REQUEST_TIME_LIMIT`) and of
/// `wait` as the test asks for it.
const REQUEST_TIME_LIMIT_SECS: u64 = 30;
const SHORT_WAIT_SECS: u64 = 1;

#[test]
fn a_wait_that_runs_out_names_what_it_waited_for() {
    let mut b = start_scripted();
    let launched = call(
        &mut b,
        "1",
        "launch",
        json!({"program": "/scripted/prog", "adapter": "script", "stop_on_entry": false}),
    );
    assert_eq!(launched["state"]["status"], "running", "{launched}");
    let error = call_error(
        &mut b,
        "2",
        "wait",
        json!({"session": "s1", "timeout_secs": SHORT_WAIT_SECS}),
    );
    assert_eq!(
        error,
        format!(
            "the program did not stop within {SHORT_WAIT_SECS} s; it is still running (wait \
             again, or pause it)"
        )
    );
    // An adapter that never answers `launch` (its `initialized` came first): the start ends at
    // the request's time limit, and says which answer never came.
    let began = Instant::now();
    let error = call_error(
        &mut b,
        "3",
        "launch",
        json!({"program": "/scripted/prog", "adapter": "script",
            "launch_arguments": {"silent_launch": true}}),
    );
    assert!(
        began.elapsed() >= Duration::from_secs(REQUEST_TIME_LIMIT_SECS),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(
        error,
        format!(
            "launch failed: the adapter did not answer launch within {REQUEST_TIME_LIMIT_SECS} s"
        )
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

/// The state resources of session `s1`.
const S1_RESOURCES: [&str; 2] = ["dap://sessions/s1/state", "dap://sessions/s1/output"];

/// The scripted adapter's events after its answer to `launch` for a program that runs and
/// ends before its configuration: one line of output, `exited` 4, `terminated`.
fn ends_before_its_configuration() -> Value {
    json!([
        {"event": "output", "body": {"category": "stdout", "output": "ran before its configuration\n"}},
        {"event": "exited", "body": {"exitCode": 4}},
        {"event": "terminated"},
    ])
}

#[test]
fn a_program_that_ends_before_its_configuration_keeps_its_output_and_exit_code() {
    // No `initialized` event ever comes: the configuration never starts, and the program ends
    // after the answer to `launch` (a launch with a debugger, not `noDebug`).
    let mut b = start_scripted_with(&["--no-initialized"]);
    let launched = call(
        &mut b,
        "1",
        "launch",
        json!({"program": "/scripted/prog", "adapter": "script",
            "launch_arguments": {"after_launch": ends_before_its_configuration()}}),
    );
    let exited = json!({"session": "s1", "status": "exited", "exit_code": 4});
    assert_eq!(
        launched,
        json!({"session": "s1", "state": exited, "resources": S1_RESOURCES})
    );
    assert_eq!(call(&mut b, "2", "wait", json!({"session": "s1"})), exited);
    assert_eq!(
        read_text(&mut b, "3", "dap://sessions/s1/output"),
        "ran before its configuration\n"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

/// The time limits of a start's wait for the `initialized` event
/// (`session::start::INITIALIZED_TIME_LIMIT`), of a step's wait for its stop
/// (`tools::STEP_TIME_LIMIT`) and of `attach`'s connection (`adapter::CONNECT_TIME_LIMIT`),
/// in seconds.
const INITIALIZED_TIME_LIMIT_SECS: u64 = 30;
const STEP_TIME_LIMIT_SECS: u64 = 30;
const CONNECT_TIME_LIMIT_SECS: u64 = 10;

#[test]
fn a_start_that_gets_neither_initialized_nor_the_launch_answer_names_both() {
    let mut b = start_scripted_with(&["--no-initialized"]);
    let error = call_error(
        &mut b,
        "1",
        "launch",
        json!({"program": "/scripted/prog", "adapter": "script",
            "launch_arguments": {"silent_launch": true}}),
    );
    // The `launch` request's own time limit (REQUEST_TIME_LIMIT) is as long as the start's
    // wait: whichever timer fires first, the error names both things that did not come.
    assert_eq!(
        error,
        format!(
            "launch failed: the adapter sent no `initialized` event nor answer to `launch` \
             within {INITIALIZED_TIME_LIMIT_SECS} s"
        )
    );
    let listed = b.request(json!("2"), "resources/list", modern(json!({})));
    assert_eq!(listed["result"]["resources"], json!([]));
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

#[test]
fn a_start_whose_launch_is_answered_but_never_initialized_names_the_event() {
    let mut b = start_scripted_with(&["--no-initialized"]);
    let error = call_error(
        &mut b,
        "1",
        "launch",
        json!({"program": "/scripted/prog", "adapter": "script"}),
    );
    assert_eq!(
        error,
        format!(
            "launch failed: the adapter sent no `initialized` event after the answer to \
             `launch` within {INITIALIZED_TIME_LIMIT_SECS} s"
        )
    );
    let listed = b.request(json!("2"), "resources/list", modern(json!({})));
    assert_eq!(listed["result"]["resources"], json!([]));
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

#[test]
fn a_step_that_never_stops_names_the_stop_and_the_program_can_be_paused() {
    let mut b = start_scripted();
    launch_scripted_to_a_breakpoint(&mut b, json!({"steps_never_stop": true}));
    let error = call_error(&mut b, "2", "next", json!({"session": "s1"}));
    assert_eq!(
        error,
        format!(
            "the program did not stop within {STEP_TIME_LIMIT_SECS} s; it is still running \
             (wait again, or pause it)"
        )
    );
    // As the error says: the program runs, and `pause` stops it.
    let paused = call(&mut b, "3", "pause", json!({"session": "s1"}));
    assert_eq!(
        paused,
        json!({"session": "s1", "status": "stopped", "reason": "pause", "thread_id": 1,
            "top_frame": {"file": "/scripted/prog.c", "line": 10, "name": "f1",
                "frameId": 100}})
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

#[test]
fn an_attach_to_a_port_nobody_accepts_on_names_the_port_and_the_refusal() {
    // A port that nobody listens on and nobody else takes meanwhile: the local port of a
    // connection of this test, bound while it lives (a connection to it is refused).
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("a listener");
    let connection = std::net::TcpStream::connect(listener.local_addr().expect("its address"))
        .expect("a connection");
    let port = connection.local_addr().expect("its local address").port();
    let mut b = Bridge::start_command(&mut Command::new(common::dap_bin()), Revision::Modern);
    let error = call_error(&mut b, "1", "attach", json!({"port": port}));
    assert_eq!(
        error,
        format!(
            "cannot attach: no debug adapter accepted a connection on 127.0.0.1:{port} within \
             {CONNECT_TIME_LIMIT_SECS} s: Connection refused (os error 111)"
        )
    );
    let listed = b.request(json!("2"), "resources/list", modern(json!({})));
    assert_eq!(listed["result"]["resources"], json!([]));
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}
