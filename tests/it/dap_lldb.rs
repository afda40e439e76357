//! Black-box tests of `mcp-dap` with real lldb-dap (Debian's `lldb-19`, which `scripts/test`
//! installs) debugging a small C program built with `cc -g` in the test.

use crate::common;
use crate::dap::{call, call_error, frame_id, listen_to, modern, read_text};

use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

const PROGRAM: &str = "\
#include <stdio.h>

struct point {
    int x;
    int y;
};

static int square(int n) {
    int result = n * n;
    return result;
}

int main(void) {
    struct point p = {3, 4};
    int values[3] = {10, 20, 30};
    int s = square(p.x);
    printf(\"s is %d\\n\", s);
    fflush(stdout);
    return s + values[0] - 12;
}
";

/// The source and the program built from it with `cc -g -O0`.
pub(crate) fn build_program(tag: &str) -> (String, String) {
    build_c(tag, PROGRAM)
}

/// The C program `text` written to a scratch folder of `tag` and built with `cc -g -O0`: its
/// source's and its binary's paths.
pub(crate) fn build_c(tag: &str, text: &str) -> (String, String) {
    let dir = scratch_dir(tag);
    let source = dir.join("prog.c");
    std::fs::write(&source, text).expect("write the program");
    let binary = dir.join("prog");
    let built = Command::new("cc")
        .args(["-g", "-O0", "-o"])
        .arg(&binary)
        .arg(&source)
        .output();
    assert!(
        matches!(&built, Ok(out) if out.status.success()),
        "cc -g failed (on Debian: apt-get install gcc): {built:?}"
    );
    let text = |p: PathBuf| p.to_string_lossy().into_owned();
    (text(source), text(binary))
}

/// The `launch` tool's error for a `program` that does not exist: lldb-dap's own refusal.
pub(crate) fn no_such_program(program: &Path) -> String {
    let missing = program.display();
    format!(
        "launch failed: Could not create a target for a program '{missing}': '{missing}' does \
         not exist."
    )
}

/// Fails (never skips) when no lldb-dap is in PATH, with the command that installs it.
pub(crate) fn require_lldb_dap() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path).any(|dir| {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name == "lldb-dap" || name.starts_with("lldb-dap-")
            })
    });
    assert!(
        found,
        "no lldb-dap in PATH: install it with `apt-get install -y lldb-19` (scripts/test does)"
    );
}

fn start() -> Bridge {
    require_lldb_dap();
    Bridge::start_command(&mut Command::new(common::dap_bin()), Revision::Modern)
}

/// The state resource after each of its updates until `status` is `want` (updates of other
/// resources are passed over): the updates are awaited, never polled.
pub(crate) fn state_at_update(b: &mut Bridge, uri: &str, want: &str) -> Value {
    for n in 0..8 {
        next_update_of(b, uri);
        let read = b.request(
            json!(format!("read-{uri}-{n}")),
            "resources/read",
            modern(json!({"uri": uri})),
        );
        let text = read["result"]["contents"][0]["text"].as_str().unwrap_or("");
        let state: Value = serde_json::from_str(text).expect("the state is JSON");
        if state["status"] == want {
            return state;
        }
    }
    panic!("{uri} did not become {want}");
}

/// Waits for the next `notifications/resources/updated` of `uri`; those of other resources
/// before it are passed over.
fn next_update_of(b: &mut Bridge, uri: &str) {
    while b.recv_notification("notifications/resources/updated")["params"]["uri"] != uri {}
}

#[test]
fn a_c_program_under_lldb_dap_breaks_steps_is_inspected_and_exits_with_its_code_and_output() {
    let (source, binary) = build_program("dap-lldb");
    let mut b = start();
    let state_uri = "dap://sessions/s1/state";
    let output_uri = "dap://sessions/s1/output";
    listen_to(&mut b, &[state_uri, output_uri]);

    // lldb-dap stops a program launched with stopOnEntry at its first instruction, in the
    // dynamic loader: no source there. Its reason, `exception`, is kept beside `entry`.
    let launched = call(
        &mut b,
        "1",
        "launch",
        json!({"program": binary, "adapter": "lldb"}),
    );
    let thread = launched["state"]["thread_id"].clone();
    assert!(thread.is_i64(), "{launched}");
    assert_eq!(
        launched["state"],
        json!({"session": "s1", "status": "stopped", "reason": "entry",
            "adapter_reason": "exception", "thread_id": thread,
            "top_frame": {"file": "", "line": 0, "name": "_start",
            "frameId": frame_id(&launched["state"])}})
    );

    let set = call(
        &mut b,
        "2",
        "set_breakpoints",
        json!({"session": "s1", "source": source, "lines": [16]}),
    );
    assert_eq!(
        set,
        json!({"source": source, "breakpoints": [{"id": 1, "verified": true, "source": source,
            "line": 16}]})
    );
    call(&mut b, "3", "continue", json!({"session": "s1"}));
    let stopped = state_at_update(&mut b, state_uri, "stopped");
    let frame = frame_id(&stopped);
    assert_eq!(
        stopped,
        json!({"session": "s1", "status": "stopped", "reason": "breakpoint",
            "thread_id": thread, "top_frame": {"file": source, "line": 16, "name": "main",
            "frameId": frame},
            "breakpoints": [{"id": 1, "verified": true, "source": source, "line": 16}]})
    );

    let stack = call(
        &mut b,
        "4",
        "stack_trace",
        json!({"session": "s1", "levels": 1}),
    );
    assert_eq!(
        stack,
        json!({"threadId": thread, "frames": [{"frameId": frame, "name": "main",
            "at": format!("{source}:16"), "file": source, "line": 16,
            "text": "    int s = square(p.x);"}]})
    );

    // The locals: the struct and the array have children; `s` is not set yet (any value).
    let variables = call(&mut b, "5", "variables", json!({"session": "s1"}));
    let locals = &variables["scopes"][0];
    assert_eq!(
        (
            &locals["name"],
            locals["variables"].as_array().map(Vec::len),
            &locals["more"]
        ),
        (&json!("Locals"), Some(3), &json!(false)),
        "{variables}"
    );
    let named = |name: &str| -> Value {
        locals["variables"]
            .as_array()
            .and_then(|all| all.iter().find(|v| v["name"] == name).cloned())
            .unwrap_or(Value::Null)
    };
    let (p, values) = (named("p"), named("values"));
    // Small aggregates show their fields inline (lldb-dap's own text is `point @ 0x...`).
    assert_eq!(
        (&p["type"], &p["value"], &values["type"], &values["value"]),
        (
            &json!("point"),
            &json!("{x: 3, y: 4}"),
            &json!("int[3]"),
            &json!("[10, 20, 30]")
        ),
        "{variables}"
    );
    let fields = call(
        &mut b,
        "6",
        "variables",
        json!({"session": "s1", "variables_reference": p["variablesReference"]}),
    );
    assert_eq!(
        fields,
        json!({"variables": [
            {"name": "x", "value": "3", "type": "int", "variablesReference": 0},
            {"name": "y", "value": "4", "type": "int", "variablesReference": 0}],
            "start": 0, "more": false})
    );
    // One page of the array: its second element, and one more after it.
    let page = call(
        &mut b,
        "7",
        "variables",
        json!({"session": "s1", "variables_reference": values["variablesReference"],
            "start": 1, "count": 1}),
    );
    assert_eq!(
        page,
        json!({"variables": [{"name": "[1]", "value": "20", "type": "int",
            "variablesReference": 0}], "start": 1, "more": true,
            "next": {"variables_reference": values["variablesReference"], "start": 2}})
    );
    let evaluated = call(
        &mut b,
        "8",
        "evaluate",
        json!({"session": "s1", "expression": "p.x + p.y"}),
    );
    assert_eq!(
        evaluated,
        json!({"result": "7", "type": "int", "variablesReference": 0})
    );

    let at = |state: &Value| {
        (
            state["top_frame"]["name"].clone(),
            state["top_frame"]["line"].clone(),
            state["reason"].clone(),
        )
    };
    let step = call(&mut b, "9", "step_in", json!({"session": "s1"}));
    assert_eq!(
        at(&step),
        (json!("square"), json!(9), json!("step")),
        "{step}"
    );
    let step = call(&mut b, "10", "next", json!({"session": "s1"}));
    assert_eq!(
        at(&step),
        (json!("square"), json!(10), json!("step")),
        "{step}"
    );
    // Out of `square`: back in the middle of line 16, the assignment of its result still to
    // come.
    let step = call(&mut b, "11", "step_out", json!({"session": "s1"}));
    assert_eq!(
        at(&step),
        (json!("main"), json!(16), json!("step")),
        "{step}"
    );
    let step = call(&mut b, "12", "next", json!({"session": "s1"}));
    assert_eq!(
        at(&step),
        (json!("main"), json!(17), json!("step")),
        "{step}"
    );

    call(&mut b, "13", "continue", json!({"session": "s1"}));
    let exited = call(&mut b, "14", "wait", json!({"session": "s1"}));
    assert_eq!(
        (&exited["status"], &exited["exit_code"]),
        (&json!("exited"), &json!(7)),
        "{exited}"
    );
    // The program's line (lldb-dap runs it on a terminal: `\r\n`), then lldb's own, which
    // lldb-dap may send after its `exited` event: read again at each update of the output
    // until it is there (each update since the listen began is kept, so none is missed).
    let expected = format!("s is 9\r\nProcess {thread} exited with status = 7 (0x00000007) \n");
    let mut read = 0;
    loop {
        read += 1;
        let text = read_text(&mut b, &format!("15-{read}"), output_uri);
        if text == expected {
            break;
        }
        assert!(
            expected.starts_with(&text),
            "the output is not a beginning of {expected:?}: {text:?}"
        );
        next_update_of(&mut b, output_uri);
    }
    let ended = call(&mut b, "16", "terminate", json!({"session": "s1"}));
    assert_eq!(ended["terminated"], "s1");
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

#[test]
fn no_lldb_dap_in_path_is_a_tool_error_that_names_what_was_looked_for() {
    let empty = scratch_dir("dap-no-lldb");
    let mut cmd = Command::new(common::dap_bin());
    cmd.env("PATH", &empty);
    let mut b = Bridge::start_command(&mut cmd, Revision::Modern);
    let error = call_error(
        &mut b,
        "1",
        "launch",
        json!({"program": "/bin/true", "adapter": "lldb"}),
    );
    assert_eq!(
        error,
        format!(
            "no lldb-dap found: looked for lldb-dap, lldb-dap-NN, lldb-vscode and \
             lldb-vscode-NN in PATH ({}); install it (on Debian: apt-get install lldb-19), or \
             give its command with `mcp-dap --adapter lldb=/path/to/lldb-dap`",
            empty.display()
        )
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

const LIBRARY: &str = "\
int sq(int n) {
    int r = n * n;
    return r;
}
";

const LOADER: &str = "\
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
    void *lib = dlopen(argv[1], RTLD_NOW);
    int (*sq)(int) = (int (*)(int))dlsym(lib, \"sq\");
    printf(\"%d\\n\", sq(5));
    return 0;
}
";

fn cc(args: &[&str]) {
    let built = Command::new("cc").args(args).output();
    assert!(
        matches!(&built, Ok(out) if out.status.success()),
        "cc {args:?} failed: {built:?}"
    );
}

#[test]
fn a_breakpoint_the_adapter_verifies_later_shows_verified_in_the_state() {
    let dir = scratch_dir("dap-bp-event");
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    std::fs::write(path("sq.c"), LIBRARY).expect("write the library");
    std::fs::write(path("dl.c"), LOADER).expect("write the program");
    cc(&[
        "-g",
        "-O0",
        "-shared",
        "-fPIC",
        "-o",
        &path("libsq.so"),
        &path("sq.c"),
    ]);
    cc(&["-g", "-O0", "-o", &path("dl"), &path("dl.c")]);
    let mut b = start();
    call(
        &mut b,
        "1",
        "launch",
        json!({"program": path("dl"), "args": [path("libsq.so")], "adapter": "lldb"}),
    );
    // The library is not loaded yet: the breakpoint is not verified...
    let set = call(
        &mut b,
        "2",
        "set_breakpoints",
        json!({"session": "s1", "source": path("sq.c"), "lines": [2]}),
    );
    assert_eq!(
        set["breakpoints"],
        json!([{"id": 1, "verified": false, "source": path("sq.c"), "line": 2}])
    );
    // ...until the program loads it: lldb-dap's `breakpoint` event, then the stop there.
    call(&mut b, "3", "continue", json!({"session": "s1"}));
    let stopped = call(&mut b, "4", "wait", json!({"session": "s1"}));
    assert_eq!(
        (&stopped["top_frame"]["name"], &stopped["breakpoints"]),
        (
            &json!("sq"),
            &json!([{"id": 1, "verified": true, "source": path("sq.c"), "line": 2}])
        ),
        "{stopped}"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}
