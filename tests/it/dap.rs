//! Black-box tests of `mcp-dap`: the real binary over real pipes as a 2026-07-28 client, with
//! real debugpy (the adapter of `tests/interop/.venv`, which `scripts/test` installs from
//! `tests/interop/requirements.txt`) debugging a small Python program.

use crate::common;

use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The venv whose `python3` has debugpy.
pub(crate) fn venv_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/.venv/bin")
}

/// Starts `mcp-dap` with the venv first in PATH; fails (never skips) without debugpy.
pub(crate) fn start() -> Bridge {
    start_with(&[])
}

/// [`start`] with `mcp-dap`'s arguments `args`.
pub(crate) fn start_with(args: &[&str]) -> Bridge {
    let bin = venv_bin();
    let probe = Command::new(bin.join("python3"))
        .args(["-c", "import debugpy"])
        .output();
    assert!(
        matches!(&probe, Ok(out) if out.status.success()),
        "debugpy is not installed in {}: run `python3 -m venv tests/interop/.venv && \
         tests/interop/.venv/bin/pip install -r tests/interop/requirements.txt` \
         (scripts/test does); the probe gave {probe:?}",
        bin.display()
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new(common::dap_bin());
    cmd.args(args).env("PATH", path);
    Bridge::start_command(&mut cmd, Revision::Modern)
}

/// `params` with the 2026-07-28 `_meta`.
pub(crate) fn modern(mut params: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    params
}

/// The text of the resource `uri`, read with `resources/read`.
pub(crate) fn read_text(b: &mut Bridge, id: &str, uri: &str) -> String {
    let r = b.request(json!(id), "resources/read", modern(json!({"uri": uri})));
    r["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Launches `program` as the first session, `s1`, with its stop at the entry (the default),
/// and gives the launch's answer, which says so.
pub(crate) fn launch_stopped(b: &mut Bridge, program: &str) -> Value {
    let launched = call(b, "1", "launch", json!({"program": program}));
    assert_eq!(
        (
            &launched["session"],
            &launched["state"]["status"],
            &launched["state"]["reason"]
        ),
        (&json!("s1"), &json!("stopped"), &json!("entry")),
        "{launched}"
    );
    launched
}

/// Subscribes to the resources `uris` on a listen stream, once it is acknowledged.
pub(crate) fn listen_to(b: &mut Bridge, uris: &[&str]) {
    b.send_request(
        json!("L"),
        "subscriptions/listen",
        modern(json!({"notifications": {"resourceSubscriptions": uris}})),
    );
    assert_eq!(
        b.recv()["method"],
        "notifications/subscriptions/acknowledged"
    );
}

/// The processes below mcp-dap with one debugpy session (the adapter, debugpy's launcher
/// and the debuggee), and their process groups.
pub(crate) fn debugpy_processes(b: &Bridge) -> (Vec<i32>, Vec<i32>) {
    let pids = descendants(b.child.id() as i32);
    assert_eq!(pids.len(), 3, "descendants of mcp-dap: {pids:?}");
    let groups = pids.iter().map(|&p| process_group(p)).collect();
    (pids, groups)
}

/// The longest wait for a tool's answer: above mcp-dap's own limit on one DAP request (30 s,
/// `REQUEST_TIME_LIMIT`), so that the server's limit decides, not the test's. A cold
/// lldb-dap (liblldb read from disk) under a parallel test run can take more than
/// `RECV_TIMEOUT` to answer its first request.
pub(crate) const CALL_LIMIT: std::time::Duration = std::time::Duration::from_secs(45);

/// The tool call `name` with `arguments`, with request id `id`: its `structuredContent`
/// (the call must succeed).
pub(crate) fn call(b: &mut Bridge, id: &str, name: &str, arguments: Value) -> Value {
    let r = call_result(b, id, name, arguments);
    assert_eq!(r["result"]["isError"], Value::Null, "{name}: {r}");
    r["result"]["structuredContent"].clone()
}

/// The tool call `name` with `arguments`: the text of its tool error (the call must fail).
pub(crate) fn call_error(b: &mut Bridge, id: &str, name: &str, arguments: Value) -> String {
    let r = call_result(b, id, name, arguments);
    assert_eq!(r["result"]["isError"], true, "{name}: {r}");
    text_of(&r)
}

/// The response to the tool call `name`, within [`CALL_LIMIT`].
fn call_result(b: &mut Bridge, id: &str, name: &str, arguments: Value) -> Value {
    b.send_request(
        json!(id),
        "tools/call",
        modern(json!({"name": name, "arguments": arguments})),
    );
    b.recv_response_within(&json!(id), CALL_LIMIT)
}

/// mcp-dap started with the scripted adapter (`common/dap_script.py`) as `script`.
pub(crate) fn start_scripted() -> Bridge {
    start_scripted_with(&[])
}

/// [`start_scripted`] with the scripted adapter's command-line options `options`.
pub(crate) fn start_scripted_with(options: &[&str]) -> Bridge {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/common/dap_script.py");
    let mut adapter = format!("script=python3 {}", script.display());
    for option in options {
        adapter.push(' ');
        adapter.push_str(option);
    }
    Bridge::start_command(
        Command::new(common::dap_bin()).args(["--adapter", &adapter]),
        Revision::Modern,
    )
}

/// Launches the scripted adapter's program as session `s1` (request id `1`) with the
/// adapter's `launch_arguments`, and has the adapter stop with `stop` (a DAP `stopped` event's
/// body) once the configuration is done: the launch's answer.
pub(crate) fn launch_scripted(b: &mut Bridge, mut launch_arguments: Value, stop: Value) -> Value {
    launch_arguments["after_configuration"] = json!([{"event": "stopped", "body": stop}]);
    call(
        b,
        "1",
        "launch",
        json!({"program": "/scripted/prog", "adapter": "script",
            "launch_arguments": launch_arguments}),
    )
}

/// [`launch_scripted`] to a stop at a breakpoint in thread 1, which the launch's answer
/// shows.
pub(crate) fn launch_scripted_to_a_breakpoint(b: &mut Bridge, launch_arguments: Value) -> Value {
    let stop = json!({"reason": "breakpoint", "threadId": 1});
    let launched = launch_scripted(b, launch_arguments, stop);
    assert_eq!(launched["state"]["status"], "stopped", "{launched}");
    launched
}

const PROGRAM: &str = "\
def add(a, b):
    total = a + b
    return total


x = 40
y = add(x, 2)
print(\"y is\", y)
raise SystemExit(3)
";

pub(crate) fn write_program() -> String {
    let dir = scratch_dir("dap");
    let path = dir.join("prog.py");
    std::fs::write(&path, PROGRAM).expect("write the program");
    path.to_string_lossy().into_owned()
}

/// The frame id of a state's top frame (the adapter numbers frames itself).
pub(crate) fn frame_id(state: &Value) -> Value {
    let id = state["top_frame"]["frameId"].clone();
    assert!(id.is_i64(), "no frame id in {state}");
    id
}

#[test]
fn a_python_program_breaks_steps_is_inspected_and_exits_with_its_code_and_output() {
    let program = write_program();
    let mut b = start();
    let state_uri = "dap://sessions/s1/state";
    // Subscribed before the session exists: its URI is known from the handle's form.
    b.send_request(
        json!("L"),
        "subscriptions/listen",
        modern(json!({"notifications": {"resourcesListChanged": true,
            "resourceSubscriptions": [state_uri]}})),
    );
    assert_eq!(
        b.recv()["method"],
        "notifications/subscriptions/acknowledged"
    );

    let launched = call(&mut b, "1", "launch", json!({"program": program}));
    let entry = launched["state"].clone();
    assert_eq!(
        launched,
        json!({"session": "s1", "state": {"session": "s1", "status": "stopped",
            "reason": "entry", "thread_id": 1, "top_frame": {"file": program, "line": 1,
            "name": "<module>", "frameId": frame_id(&entry)}},
            "resources": [state_uri, "dap://sessions/s1/output"]})
    );
    let listed = b.request(json!("2"), "resources/list", modern(json!({})));
    assert_eq!(
        listed["result"]["resources"],
        json!([
            {"name": "session s1 state", "uri": state_uri, "mimeType": "application/json"},
            {"name": "session s1 output", "uri": "dap://sessions/s1/output",
                "mimeType": "text/plain"},
        ])
    );

    let set = call(
        &mut b,
        "3",
        "set_breakpoints",
        json!({"session": "s1", "source": program, "lines": [3]}),
    );
    assert_eq!(
        set,
        json!({"source": program, "breakpoints": [{"id": 0, "verified": true, "source": program,
            "line": 3}]})
    );
    let running = call(&mut b, "4", "continue", json!({"session": "s1"}));
    assert_eq!(
        running,
        json!({"session": "s1", "status": "running", "resumed_thread_id": 1})
    );
    // The stop comes as resource updates; the state is read after each one, never polled.
    let mut stopped = Value::Null;
    for n in 0..10 {
        let update = b.recv_notification("notifications/resources/updated");
        assert_eq!(update["params"]["uri"], state_uri);
        let read = b.request(
            json!(format!("r{n}")),
            "resources/read",
            modern(json!({"uri": state_uri})),
        );
        let text = read["result"]["contents"][0]["text"].as_str().unwrap_or("");
        let state: Value = serde_json::from_str(text).expect("the state is JSON");
        if state["status"] == "stopped" {
            stopped = state;
            break;
        }
    }
    let frame = frame_id(&stopped);
    assert_eq!(
        stopped,
        json!({"session": "s1", "status": "stopped", "reason": "breakpoint", "thread_id": 1,
            "top_frame": {"file": program, "line": 3, "name": "add", "frameId": frame},
            "breakpoints": [{"id": 0, "verified": true, "source": program, "line": 3}]})
    );

    let stack = call(&mut b, "5", "stack_trace", json!({"session": "s1"}));
    let frames = stack["frames"].as_array().cloned().unwrap_or_default();
    assert_eq!(frames.len(), 2, "{stack}");
    assert_eq!(
        stack,
        json!({"threadId": 1, "frames": [
            {"frameId": frame, "name": "add", "at": format!("{program}:3"), "file": program,
                "line": 3, "text": "    return total"},
            {"frameId": frames[1]["frameId"], "name": "<module>",
                "at": format!("{program}:7"), "file": program, "line": 7,
                "text": "y = add(x, 2)"},
        ]})
    );

    let variables = call(&mut b, "6", "variables", json!({"session": "s1"}));
    let locals = &variables["scopes"][0];
    assert_eq!(locals["name"], "Locals", "{variables}");
    assert_eq!(
        locals["variables"],
        json!([
            {"name": "a", "value": "40", "type": "int", "variablesReference": 0},
            {"name": "b", "value": "2", "type": "int", "variablesReference": 0},
            {"name": "total", "value": "42", "type": "int", "variablesReference": 0},
        ])
    );

    let evaluated = call(
        &mut b,
        "7",
        "evaluate",
        json!({"session": "s1", "expression": "total * 2"}),
    );
    assert_eq!(
        evaluated,
        json!({"result": "84", "type": "int", "variablesReference": 0})
    );

    // A step over the `return` ends in the caller, in the middle of line 7: Python's tracer
    // reports no new line event for a line already begun, so the stop is at line 8.
    let stepped = call(&mut b, "8", "next", json!({"session": "s1"}));
    let frame = frame_id(&stepped);
    assert_eq!(
        stepped,
        json!({"session": "s1", "status": "stopped", "reason": "step", "thread_id": 1,
            "top_frame": {"file": program, "line": 8, "name": "<module>", "frameId": frame},
            "resumed_thread_id": 1})
    );

    call(&mut b, "9", "continue", json!({"session": "s1"}));
    let exited = call(&mut b, "10", "wait", json!({"session": "s1"}));
    assert_eq!(
        exited,
        json!({"session": "s1", "status": "exited", "exit_code": 3,
            "breakpoints": [{"id": 0, "verified": true, "source": program, "line": 3}]})
    );
    let output = b.request(
        json!("11"),
        "resources/read",
        modern(json!({"uri": "dap://sessions/s1/output"})),
    );
    assert_eq!(
        output["result"]["contents"],
        json!([{"uri": "dap://sessions/s1/output", "text": "y is 42\n"}])
    );

    let ended = call(&mut b, "12", "terminate", json!({"session": "s1"}));
    assert_eq!(ended["terminated"], "s1");
    let listed = b.request(json!("13"), "resources/list", modern(json!({})));
    assert_eq!(listed["result"]["resources"], json!([]));
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

/// The pids of every descendant of `root`, read from `/proc`.
pub(crate) fn descendants(root: i32) -> Vec<i32> {
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        for pid in children_of(found[i]) {
            if !found.contains(&pid) {
                found.push(pid);
            }
        }
        i += 1;
    }
    found.remove(0);
    found
}

pub(crate) fn process_group(pid: i32) -> i32 {
    // SAFETY: getpgid of one pid; no memory is shared.
    unsafe { libc::getpgid(pid) }
}

pub(crate) fn group_exists(pgid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks; no memory is shared.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

/// Waits until none of `pids` runs and none of the process groups `groups` exists (both read
/// while mcp-dap ran: its descendants are reparented once it ends).
pub(crate) fn assert_nothing_left(pids: &[i32], groups: &[i32]) {
    assert!(
        wait_until(|| pids.iter().all(|&p| !process_alive(p))),
        "still running: {:?}",
        pids.iter()
            .filter(|&&p| process_alive(p))
            .collect::<Vec<_>>()
    );
    assert!(
        wait_until(|| groups.iter().all(|&g| !group_exists(g))),
        "a process group is left: {groups:?}"
    );
}

#[test]
fn the_end_of_stdin_mid_session_leaves_no_adapter_nor_debuggee() {
    let program = write_program();
    let mut b = start();
    launch_stopped(&mut b, &program);
    let (pids, groups) = debugpy_processes(&b);
    let server = b.child.id() as i32;
    assert!(
        groups.iter().all(|&g| g > 0 && g != process_group(server)),
        "{groups:?}"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
    assert_nothing_left(&pids, &groups);
}

/// The command line of `pid`.
fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| String::from_utf8_lossy(&c).into_owned())
        .unwrap_or_default()
}

#[test]
fn an_adapter_killed_mid_session_ends_the_wait_at_once_with_the_cause_and_the_other_session_runs_on()
 {
    let dir = scratch_dir("dap-kill");
    let program = dir.join("sleeper.py");
    std::fs::write(&program, "import time\ntime.sleep(60)\n").expect("write the program");
    let program = program.to_string_lossy().into_owned();
    let other = write_program();
    let mut b = start();
    launch_stopped(&mut b, &program);
    // A second session, which must not notice the loss of the first one's adapter.
    let second = call(&mut b, "1b", "launch", json!({"program": other}));
    assert_eq!(second["session"], "s2", "{second}");
    call(&mut b, "2", "continue", json!({"session": "s1"}));
    b.send_request(
        json!("3"),
        "tools/call",
        modern(json!({"name": "wait", "arguments": {"session": "s1", "timeout_secs": 60}})),
    );
    // The adapter of s1: the one whose descendants run the sleeper.
    let adapter = descendants(b.child.id() as i32)
        .into_iter()
        .find(|&pid| {
            cmdline(pid).contains("debugpy.adapter")
                && descendants(pid)
                    .into_iter()
                    .any(|d| cmdline(d).contains("sleeper.py"))
        })
        .expect("the adapter process");
    // SAFETY: kill of one pid; no memory is shared.
    unsafe { libc::kill(adapter, libc::SIGKILL) };
    // Within RECV_TIMEOUT, far below the wait's own 60 s.
    let r = b.recv_response(&json!("3"));
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"session": "s1", "status": "terminated",
            "cause": "the adapter closed its output (it exited or crashed)"})
    );
    assert_eq!(
        call_error(&mut b, "4", "stack_trace", json!({"session": "s1"})),
        "the program is not stopped: no stack to read"
    );
    call(&mut b, "5", "continue", json!({"session": "s2"}));
    let exited = call(&mut b, "6", "wait", json!({"session": "s2"}));
    assert_eq!(
        exited,
        json!({"session": "s2", "status": "exited", "exit_code": 3})
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}
