//! Black-box tests of `mcp-dap`'s tools beyond the first session: `env`, conditions and hit
//! conditions, `threads`, `pause`, `scopes`, `disconnect` against `terminate`, and adapters
//! given with `--adapter NAME=COMMAND...` on stdio and on TCP. Real debugpy and lldb-dap.

use crate::common;
use crate::dap::{
    call, descendants, frame_id, launch_stopped, listen_to, modern, start, start_with,
    write_program,
};
use crate::dap_lldb::{build_program, require_lldb_dap, state_at_update};

use common::*;
use serde_json::{Value, json};

fn write(tag: &str, name: &str, text: &str) -> String {
    let path = scratch_dir(tag).join(name);
    std::fs::write(&path, text).expect("write the program");
    path.to_string_lossy().into_owned()
}

fn at(state: &Value) -> (Value, Value, Value) {
    (
        state["top_frame"]["name"].clone(),
        state["top_frame"]["line"].clone(),
        state["reason"].clone(),
    )
}

fn output_of(b: &mut Bridge, id: &str, session: &str) -> Value {
    let uri = format!("dap://sessions/{session}/output");
    let r = b.request(json!(id), "resources/read", modern(json!({"uri": uri})));
    r["result"]["contents"][0]["text"].clone()
}

const LOOP: &str = "\
import os
print(\"FOO is\", os.environ.get(\"FOO\"))
for i in range(10):
    n = i * 2
print(\"done\")
";

#[test]
fn launch_env_a_condition_and_a_hit_condition_choose_the_stop() {
    let program = write("dap-cond", "loop.py", LOOP);
    let mut b = start();
    call(
        &mut b,
        "1",
        "launch",
        json!({"program": program, "env": {"FOO": "bar"}}),
    );
    call(
        &mut b,
        "2",
        "set_breakpoints",
        json!({"session": "s1", "source": program, "lines": [4], "condition": "i == 5"}),
    );
    call(&mut b, "3", "continue", json!({"session": "s1"}));
    let stopped = call(&mut b, "4", "wait", json!({"session": "s1"}));
    assert_eq!(
        at(&stopped),
        (json!("<module>"), json!(4), json!("breakpoint"))
    );
    let i = call(
        &mut b,
        "5",
        "evaluate",
        json!({"session": "s1", "expression": "i"}),
    );
    assert_eq!(i["result"], "5", "{i}");
    // A hit condition: the breakpoint set anew counts its hits from 1 (i = 6, 7, ...).
    let set = call(
        &mut b,
        "6",
        "set_breakpoints",
        json!({"session": "s1", "source": program, "lines": [4], "hit_condition": "2"}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true, "{set}");
    call(&mut b, "7", "continue", json!({"session": "s1"}));
    call(&mut b, "8", "wait", json!({"session": "s1"}));
    let i = call(
        &mut b,
        "9",
        "evaluate",
        json!({"session": "s1", "expression": "i"}),
    );
    assert_eq!(i["result"], "7", "{i}");
    call(
        &mut b,
        "10",
        "set_breakpoints",
        json!({"session": "s1", "source": program, "lines": []}),
    );
    call(&mut b, "11", "continue", json!({"session": "s1"}));
    let exited = call(&mut b, "12", "wait", json!({"session": "s1"}));
    assert_eq!(
        exited,
        json!({"session": "s1", "status": "exited", "exit_code": 0})
    );
    assert_eq!(output_of(&mut b, "13", "s1"), "FOO is bar\ndone\n");
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

/// Launches the test program as session s1 under the adapter `adapter` (the adapter's own
/// launch argument `console: internalConsole`), stopped at its entry, and runs it to its exit
/// (code 3) and its output.
fn runs_to_its_exit(b: &mut Bridge, program: &str, adapter: &str) {
    let launched = call(
        b,
        "1",
        "launch",
        json!({"program": program, "adapter": adapter,
            "launch_arguments": {"console": "internalConsole"}}),
    );
    assert_eq!(
        at(&launched["state"]),
        (json!("<module>"), json!(1), json!("entry"))
    );
    call(b, "2", "continue", json!({"session": "s1"}));
    let exited = call(b, "3", "wait", json!({"session": "s1"}));
    assert_eq!(
        (&exited["status"], &exited["exit_code"]),
        (&json!("exited"), &json!(3))
    );
    assert_eq!(output_of(b, "4", "s1"), "y is 42\n");
}

// The loop on one line: a pause after the program's first line of output lands on that
// line whatever the moment (Python's tracer reports the next line event there).
const SPIN: &str = "\
import time
print(\"looping\", flush=True)
while True: time.sleep(0.01)
";

#[test]
fn a_running_program_is_listed_by_threads_paused_and_its_scopes_read() {
    let program = write("dap-pause", "spin.py", SPIN);
    let mut b = start();
    let output_uri = "dap://sessions/s1/output";
    listen_to(&mut b, &[output_uri]);
    let launched = call(
        &mut b,
        "1",
        "launch",
        json!({"program": program, "stop_on_entry": false}),
    );
    assert_eq!(launched["state"]["status"], "running", "{launched}");
    // The program is in its loop once it has printed its line: the output's updates say so.
    // `print` writes the text and its end apart, and debugpy may send them as two `output`
    // events, each with its own update: read again at each update until the line is whole.
    let mut read = 0;
    loop {
        let update = b.recv_notification("notifications/resources/updated");
        assert_eq!(update["params"]["uri"], output_uri);
        let output = output_of(&mut b, &format!("1b{read}"), "s1");
        if output == "looping\n" {
            break;
        }
        assert_eq!(output, "looping", "the line so far");
        read += 1;
    }
    let threads = call(&mut b, "2", "threads", json!({"session": "s1"}));
    assert_eq!(
        threads,
        json!({"threads": [{"id": 1, "name": "MainThread"}]})
    );
    let paused = call(&mut b, "3", "pause", json!({"session": "s1"}));
    assert_eq!(
        at(&paused),
        (json!("<module>"), json!(3), json!("pause")),
        "{paused}"
    );
    let scopes = call(&mut b, "4", "scopes", json!({"session": "s1"}));
    let frame = frame_id(&paused);
    let listed = scopes["scopes"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        scopes,
        json!({"frameId": frame, "scopes": [
            {"name": "Locals", "variablesReference": listed[0]["variablesReference"],
                "namedVariables": null, "indexedVariables": null, "expensive": false},
            {"name": "Globals", "variablesReference": listed[1]["variablesReference"],
                "namedVariables": null, "indexedVariables": null, "expensive": false},
        ]})
    );
    // A pause of a program that is not running is a tool error.
    let r = b.request(
        json!("5"),
        "tools/call",
        modern(json!({"name": "pause", "arguments": {"session": "s1"}})),
    );
    assert_eq!(
        text_of(&r),
        "the program is not running (status \"stopped\")"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

const MARK: &str = "\
import pathlib, sys
pathlib.Path(sys.argv[1]).write_text(\"ran\")
";

/// The pid of the debuggee whose command line holds `marker`.
fn debuggee(b: &Bridge, marker: &str) -> i32 {
    descendants(b.child.id() as i32)
        .into_iter()
        .find(|&pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(marker))
                .unwrap_or(false)
        })
        .expect("the debuggee")
}

#[test]
fn disconnect_lets_the_program_run_on_and_terminate_ends_it() {
    let program = write("dap-detach", "mark.py", MARK);
    let dir = scratch_dir("dap-detach-out");
    let (ran_on, ended) = (dir.join("detached"), dir.join("terminated"));
    let mut b = start();
    for (id, marker) in [("1", &ran_on), ("2", &ended)] {
        let launched = call(
            &mut b,
            id,
            "launch",
            json!({"program": program, "args": [marker]}),
        );
        assert_eq!(launched["state"]["status"], "stopped", "{launched}");
    }
    let ended_pid = debuggee(&b, &ended.to_string_lossy());
    let detached = call(&mut b, "3", "disconnect", json!({"session": "s1"}));
    assert_eq!(detached["disconnected"], "s1", "{detached}");
    assert!(
        wait_until(|| std::fs::read_to_string(&ran_on).is_ok_and(|t| t == "ran")),
        "the disconnected program did not run on"
    );
    let terminated = call(&mut b, "4", "terminate", json!({"session": "s2"}));
    assert_eq!(terminated["terminated"], "s2", "{terminated}");
    assert!(
        wait_until(|| !process_alive(ended_pid)),
        "the debuggee runs"
    );
    assert!(!ended.exists(), "the terminated program ran on");
    let listed = b.request(json!("5"), "resources/list", modern(json!({})));
    assert_eq!(listed["result"]["resources"], json!([]));
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

#[test]
fn an_adapter_given_by_its_command_runs_on_stdio_and_on_tcp() {
    require_lldb_dap();
    let program = write_program();
    let lldb_dap = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .flat_map(|dir| std::fs::read_dir(dir).into_iter().flatten().flatten())
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("lldb-dap"))
        })
        .expect("lldb-dap");
    let tcp = format!("native={} --port {{port}}", lldb_dap.display());
    let mut b = start_with(&[
        "--adapter",
        "py=python3 -m debugpy.adapter",
        "--adapter",
        &tcp,
    ]);
    // A custom adapter gets the plain launch arguments; the adapter's own come in
    // launch_arguments.
    runs_to_its_exit(&mut b, &program, "py");

    let (source, binary) = build_program("dap-tcp");
    let state_uri = "dap://sessions/s2/state";
    listen_to(&mut b, &[state_uri]);
    let launched = call(
        &mut b,
        "5",
        "launch",
        json!({"program": binary, "adapter": "native"}),
    );
    assert_eq!(launched["state"]["status"], "stopped", "{launched}");
    call(
        &mut b,
        "6",
        "set_breakpoints",
        json!({"session": "s2", "source": source, "lines": [9]}),
    );
    call(&mut b, "7", "continue", json!({"session": "s2"}));
    let stopped = state_at_update(&mut b, state_uri, "stopped");
    assert_eq!(
        at(&stopped),
        (json!("square"), json!(9), json!("breakpoint"))
    );
    let n = call(
        &mut b,
        "8",
        "evaluate",
        json!({"session": "s2", "expression": "n"}),
    );
    assert_eq!(n["result"], "3", "{n}");
    call(&mut b, "9", "terminate", json!({"session": "s2"}));
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

const LISTENER: &str = "\
import debugpy, sys, time
debugpy.listen((\"127.0.0.1\", int(sys.argv[1])))
print(\"listening\", flush=True)
while True: time.sleep(0.01)
";

/// A process of the test's own, killed when the test ends, passed or not.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn attach_to_a_program_that_listens_pauses_it_and_terminate_ends_it() {
    use std::io::BufRead;
    let program = write("dap-attach", "listener.py", LISTENER);
    let port = std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let mut debuggee = KillOnDrop(
        std::process::Command::new(crate::dap::venv_bin().join("python3"))
            .arg(&program)
            .arg(port.to_string())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("start the program"),
    );
    // Its first line says the port listens.
    let stdout = debuggee.0.stdout.take().expect("its stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    assert_eq!(rx.recv_timeout(RECV_TIMEOUT).as_deref(), Ok("listening\n"));
    let mut b = start();
    let attached = call(&mut b, "1", "attach", json!({"port": port}));
    assert_eq!(
        attached,
        json!({"session": "s1", "state": {"session": "s1", "status": "running"},
            "resources": ["dap://sessions/s1/state", "dap://sessions/s1/output"]})
    );
    let paused = call(&mut b, "2", "pause", json!({"session": "s1"}));
    assert_eq!(
        at(&paused),
        (json!("<module>"), json!(4), json!("pause")),
        "{paused}"
    );
    let two = call(
        &mut b,
        "3",
        "evaluate",
        json!({"session": "s1", "expression": "1 + 1"}),
    );
    assert_eq!(two["result"], "2", "{two}");
    call(&mut b, "4", "terminate", json!({"session": "s1"}));
    assert!(
        wait_until(|| matches!(debuggee.0.try_wait(), Ok(Some(_)))),
        "the attached program runs on after terminate"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

/// An adapter that chooses its port and prints it (`--adapter-printing-port`): mcp-dap reads
/// the port from its stdout (after other lines) and connects there; one whose output ends
/// before it prints a port is a tool error that says so.
#[test]
fn an_adapter_that_prints_its_port_is_reached_on_that_port() {
    use std::os::unix::fs::PermissionsExt;
    let program = write_program();
    let dir = scratch_dir("printing-adapter");
    let printing = dir.join("printing.sh");
    std::fs::write(
        &printing,
        "#!/bin/sh\n\
         port=$(python3 -c 'import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])')\n\
         echo 'starting the adapter'\n\
         echo \"DAP server listening on port $port\"\n\
         exec python3 -m debugpy.adapter --host 127.0.0.1 --port \"$port\"\n",
    )
    .expect("write the adapter");
    let silent = dir.join("silent.sh");
    std::fs::write(&silent, "#!/bin/sh\necho 'no port here'\nexit 0\n").expect("write");
    for f in [&printing, &silent] {
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let mut b = start_with(&[
        "--adapter-printing-port",
        &format!("printed={}", printing.display()),
        "--adapter-printing-port",
        &format!("silent={}", silent.display()),
    ]);
    runs_to_its_exit(&mut b, &program, "printed");

    let r = b.request(
        json!("5"),
        "tools/call",
        modern(json!({"name": "launch", "arguments": {"program": program, "adapter": "silent"}})),
    );
    assert_eq!(r["result"]["isError"], json!(true), "{r}");
    assert_eq!(
        r["result"]["content"][0]["text"],
        json!(format!(
            "cannot start the adapter: {}: its output ended before it printed the port it listens on",
            silent.display()
        )),
        "{r}"
    );
}

/// debugpy: a variable that holds others is expanded by its `variablesReference`, twice
/// down (a dict, then the list it holds).
#[test]
fn a_python_variable_is_expanded_by_its_reference() {
    let program = write(
        "dap-expand",
        "expand.py",
        "data = {\"k\": [10, 20]}\nprint(\"ok\")\n",
    );
    let mut b = start();
    launch_stopped(&mut b, &program);
    let step = call(&mut b, "2", "next", json!({"session": "s1"}));
    assert_eq!(step["top_frame"]["line"], json!(2), "{step}");
    let vars = call(&mut b, "3", "variables", json!({"session": "s1"}));
    let find = |list: &Value, name: &str| -> Value {
        list.as_array()
            .and_then(|l| l.iter().find(|v| v["name"] == name).cloned())
            .unwrap_or_else(|| panic!("no {name} in {list}"))
    };
    let data = find(&vars["scopes"][0]["variables"], "data");
    assert_eq!(
        (&data["value"], &data["type"]),
        (&json!("{'k': [10, 20]}"), &json!("dict")),
        "{data}"
    );
    let children = call(
        &mut b,
        "4",
        "variables",
        json!({"session": "s1", "variables_reference": data["variablesReference"]}),
    );
    let k = find(&children["variables"], "'k'");
    assert_eq!(
        (&k["value"], &k["type"]),
        (&json!("[10, 20]"), &json!("list")),
        "{k}"
    );
    let items = call(
        &mut b,
        "5",
        "variables",
        json!({"session": "s1", "variables_reference": k["variablesReference"]}),
    );
    let values: Vec<(Value, Value)> = ["0", "1"]
        .iter()
        .map(|n| {
            let v = find(&items["variables"], n);
            (v["name"].clone(), v["value"].clone())
        })
        .collect();
    assert_eq!(
        values,
        vec![(json!("0"), json!("10")), (json!("1"), json!("20"))],
        "{items}"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

/// debugpy pages no variable (it answers its whole list of a variable, the first 100 items
/// and groups of its own, whatever `start` and `count` ask: microsoft/debugpy#1179): a page from `start` is that part of its
/// list, `next` leads to the part after it, and a page past the end is empty.
#[test]
fn a_page_of_a_python_list_is_that_part_of_what_debugpy_lists() {
    let program = write(
        "dap-page",
        "page.py",
        "big = list(range(1000, 1080))\nprint(\"ok\")\n",
    );
    let mut b = start();
    launch_stopped(&mut b, &program);
    let step = call(&mut b, "2", "next", json!({"session": "s1"}));
    assert_eq!(step["top_frame"]["line"], json!(2), "{step}");
    let vars = call(&mut b, "3", "variables", json!({"session": "s1"}));
    let big = vars["scopes"][0]["variables"]
        .as_array()
        .and_then(|l| l.iter().find(|v| v["name"] == "big").cloned())
        .unwrap_or_else(|| panic!("no big in {vars}"));
    let reference = big["variablesReference"].clone();
    let page = |b: &mut Bridge, id: &str, start: Value, count: u64| {
        call(
            b,
            id,
            "variables",
            json!({"session": "s1", "variables_reference": reference, "start": start,
                "count": count}),
        )
    };
    // debugpy gives its groups a new reference at each request: pages are compared by name.
    let names = |page: &Value| -> Vec<Value> {
        page["variables"]
            .as_array()
            .map(|l| l.iter().map(|v| v["name"].clone()).collect())
            .unwrap_or_default()
    };
    let whole = page(&mut b, "4", json!(0), 1000);
    let listed = whole["variables"].as_array().cloned().unwrap_or_default();
    assert!(listed.len() >= 80, "{whole}");
    assert_eq!(whole["more"], json!(false), "{whole}");
    let part = page(&mut b, "5", json!(50), 10);
    assert_eq!(part["variables"], json!(listed[50..60]), "{part}");
    assert_eq!(part["start"], json!(50), "{part}");
    assert_eq!(part["more"], json!(true), "{part}");
    assert_eq!(part["next"]["start"], json!(60), "{part}");
    // A page that reaches the end: the rest of the list, not the whole list again.
    let rest = page(&mut b, "9", json!(50), 1000);
    assert_eq!(
        names(&rest),
        names(&json!({"variables": listed[50..]})),
        "{rest}"
    );
    assert_eq!(rest["more"], json!(false), "{rest}");
    let past = page(&mut b, "6", json!(5000), 10);
    assert_eq!(
        (&past["variables"], &past["more"]),
        (&json!([]), &json!(false)),
        "{past}"
    );
    let last = page(&mut b, "7", json!(u64::MAX), 10);
    assert_eq!(
        (&last["variables"], &last["more"]),
        (&json!([]), &json!(false)),
        "{last}"
    );
    // A count of 0 reads one variable (a page of none would name itself as the next page).
    let none = page(&mut b, "8", json!(0), 0);
    assert_eq!(names(&none), vec![listed[0]["name"].clone()], "{none}");
    assert_eq!(none["next"]["start"], json!(1), "{none}");
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}
