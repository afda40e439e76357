//! Black-box tests of `mcp-dap` with real debugpy and programs that start child processes
//! (`multiprocessing`, `os.fork`, `subprocess` running python): debugpy announces each child
//! (DAP's `startDebugging` reverse request), which then waits for a client to attach. Each
//! child is debugged as a session of its own, or runs without a debugger; none waits for ever.

use crate::common;
use crate::dap::{call, launch_stopped, listen_to, modern, read_text, start};

use common::*;
use serde_json::{Value, json};

const MULTIPROCESSING: &str = "\
import multiprocessing


def work(queue):
    print(\"child works\", flush=True)
    queue.put(6 * 7)


if __name__ == \"__main__\":
    context = multiprocessing.get_context(\"spawn\")
    queue = context.Queue()
    child = context.Process(target=work, args=(queue,))
    child.start()
    value = queue.get()
    child.join()
    print(\"parent got\", value, \"child exit\", child.exitcode, flush=True)
    raise SystemExit(5)
";

const FORK: &str = "\
import os

pid = os.fork()
if pid == 0:
    print(\"child works\", flush=True)
    os._exit(4)
_, status = os.waitpid(pid, 0)
print(\"child exit\", os.waitstatus_to_exitcode(status), flush=True)
raise SystemExit(5)
";

const SUBPROCESS: &str = "\
import subprocess
import sys

done = subprocess.run([sys.executable, \"-c\", \"print('child works'); raise SystemExit(4)\"],
                      capture_output=True, text=True)
print(\"child said\", done.stdout.strip(), \"exit\", done.returncode, flush=True)
raise SystemExit(5)
";

fn write(tag: &str, text: &str) -> String {
    let path = scratch_dir(tag).join("prog.py");
    std::fs::write(&path, text).expect("write the program");
    path.to_string_lossy().into_owned()
}

/// The URIs of the resource list.
fn listed(b: &mut Bridge, id: &str) -> Vec<Value> {
    let listed = b.request(json!(id), "resources/list", modern(json!({})));
    listed["result"]["resources"]
        .as_array()
        .map(|all| all.iter().map(|r| r["uri"].clone()).collect())
        .unwrap_or_default()
}

/// Launches `program` without a stop at the entry (and with `extra`), waits for its exit,
/// and gives its final state, its output, the resource list, and the final state of each
/// child session (`s2` on, while the list names them).
fn run(program: &str, extra: Value) -> (Value, String, Vec<Value>, Vec<Value>) {
    let mut b = start();
    let mut arguments = json!({"program": program, "stop_on_entry": false});
    if let (Some(all), Some(more)) = (arguments.as_object_mut(), extra.as_object()) {
        all.extend(more.clone());
    }
    let launched = call(&mut b, "1", "launch", arguments);
    assert_eq!(launched["session"], "s1", "{launched}");
    let exited = call(&mut b, "2", "wait", json!({"session": "s1"}));
    let output = read_text(&mut b, "3", "dap://sessions/s1/output");
    let uris = listed(&mut b, "4");
    let mut children = Vec::new();
    for n in 2.. {
        let session = format!("s{n}");
        if !uris.contains(&json!(format!("dap://sessions/{session}/state"))) {
            break;
        }
        children.push(call(
            &mut b,
            &format!("w{n}"),
            "wait",
            json!({"session": session}),
        ));
    }
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
    (exited, output, uris, children)
}

/// The URIs of sessions `s1` to `sN`.
fn uris_of(sessions: usize) -> Vec<Value> {
    (1..=sessions)
        .flat_map(|n| {
            [
                json!(format!("dap://sessions/s{n}/state")),
                json!(format!("dap://sessions/s{n}/output")),
            ]
        })
        .collect()
}

/// The final state of a child session of `s1`: debugpy ends an attached child's session
/// with `terminated`, without `exited`.
fn child_of_s1(session: &str) -> Value {
    json!({"session": session, "status": "terminated", "parent": "s1"})
}

#[test]
fn a_multiprocessing_child_is_a_session_of_its_own_and_the_program_ends() {
    let (exited, output, uris, children) = run(&write("dap-mp", MULTIPROCESSING), json!({}));
    assert_eq!(
        exited,
        json!({"session": "s1", "status": "exited", "exit_code": 5})
    );
    assert_eq!(output, "child works\nparent got 42 child exit 0\n");
    // The spawn start method starts multiprocessing's resource tracker too, a python
    // process of its own: two children, two sessions.
    assert_eq!(uris, uris_of(3));
    assert_eq!(children, [child_of_s1("s2"), child_of_s1("s3")]);
}

#[test]
fn an_os_fork_child_is_a_session_of_its_own_and_the_program_ends() {
    let (exited, output, uris, children) = run(&write("dap-fork", FORK), json!({}));
    assert_eq!(
        exited,
        json!({"session": "s1", "status": "exited", "exit_code": 5})
    );
    assert_eq!(output, "child works\nchild exit 4\n");
    assert_eq!(uris, uris_of(2));
    assert_eq!(children, [child_of_s1("s2")]);
}

#[test]
fn a_python_subprocess_is_a_session_of_its_own_and_the_program_ends() {
    let (exited, output, uris, children) = run(&write("dap-sub", SUBPROCESS), json!({}));
    assert_eq!(
        exited,
        json!({"session": "s1", "status": "exited", "exit_code": 5})
    );
    assert_eq!(output, "child said child works exit 4\n");
    assert_eq!(uris, uris_of(2));
    assert_eq!(children, [child_of_s1("s2")]);
}

#[test]
fn without_follow_children_the_children_run_without_a_debugger() {
    let (exited, output, uris, children) = run(
        &write("dap-nofollow", MULTIPROCESSING),
        json!({"follow_children": false}),
    );
    assert_eq!(
        exited,
        json!({"session": "s1", "status": "exited", "exit_code": 5})
    );
    assert_eq!(output, "child works\nparent got 42 child exit 0\n");
    assert_eq!(uris, uris_of(1));
    assert_eq!(children, Vec::<Value>::new());
}

/// The notification of a resource list change on the listen stream `L`.
fn list_changed() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "L"}}})
}

#[test]
fn a_child_session_opens_with_a_list_change_and_its_resources_stay_listed_until_it_is_terminated() {
    let program = write("dap-fork-list", FORK);
    let mut b = start();
    b.send_request(
        json!("L"),
        "subscriptions/listen",
        modern(json!({"notifications": {"resourcesListChanged": true}})),
    );
    assert_eq!(
        b.recv()["method"],
        "notifications/subscriptions/acknowledged"
    );
    let method = "notifications/resources/list_changed";
    // A change is written before the result of the call that made it: here `s1` opened.
    let launched = call(
        &mut b,
        "1",
        "launch",
        json!({"program": program, "stop_on_entry": false}),
    );
    assert_eq!(launched["session"], "s1", "{launched}");
    assert_eq!(b.take_notifications(method), [list_changed()]);
    let exited = call(&mut b, "2", "wait", json!({"session": "s1"}));
    assert_eq!(
        exited,
        json!({"session": "s1", "status": "exited", "exit_code": 5})
    );
    let child = call(&mut b, "3", "wait", json!({"session": "s2"}));
    assert_eq!(child, child_of_s1("s2"));
    // One change: `s2` opened (before the parent's end, which waited for the child). The
    // child's end changes nothing in the list: its state and output stay readable until it
    // is terminated.
    assert_eq!(b.take_notifications(method), [list_changed()]);
    assert_eq!(listed(&mut b, "4"), uris_of(2));
    // Terminated, it leaves the list: one change, written before the result. Had the child's
    // end made one, it would be here too (mcp-dap's supervisor hears of that end before
    // this call).
    let ended = call(&mut b, "5", "terminate", json!({"session": "s2"}));
    assert_eq!(
        ended,
        json!({"terminated": "s2", "last_state": child_of_s1("s2")})
    );
    assert_eq!(b.take_notifications(method), [list_changed()]);
    assert_eq!(listed(&mut b, "6"), uris_of(1));
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

const CHILD_WORKS: &str = "\
import subprocess
import sys

def work():
    value = 6 * 7
    print(\"child got\", value, flush=True)

if len(sys.argv) > 1:
    work()
    raise SystemExit(4)
done = subprocess.run([sys.executable, \"-Xfrozen_modules=off\", __file__, \"child\"])
print(\"child exit\", done.returncode, flush=True)
raise SystemExit(5)
";

/// The line of `value = 6 * 7`, which only the child runs.
const CHILD_LINE: i64 = 5;

#[test]
fn a_breakpoint_set_in_the_parent_stops_the_child_session() {
    let program = write("dap-child-break", CHILD_WORKS);
    let mut b = start();
    launch_stopped(&mut b, &program);
    let set = call(
        &mut b,
        "2",
        "set_breakpoints",
        json!({"session": "s1", "source": program, "lines": [CHILD_LINE]}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true, "{set}");
    call(&mut b, "3", "continue", json!({"session": "s1"}));
    // The child's session opens once debugpy announces the child: its state is listed then.
    let child_state = json!("dap://sessions/s2/state");
    let mut asked = 0;
    let opened = wait_until(|| {
        asked += 1;
        listed(&mut b, &format!("list{asked}")).contains(&child_state)
    });
    assert!(opened, "no child session was listed");
    let stopped = call(&mut b, "4", "wait", json!({"session": "s2"}));
    assert_eq!(
        (
            &stopped["status"],
            &stopped["reason"],
            &stopped["top_frame"]["name"],
            &stopped["top_frame"]["line"],
            &stopped["parent"],
        ),
        (
            &json!("stopped"),
            &json!("breakpoint"),
            &json!("work"),
            &json!(CHILD_LINE),
            &json!("s1")
        ),
        "{stopped}"
    );
    assert_eq!(
        stopped["breakpoints"],
        json!([{"id": stopped["breakpoints"][0]["id"], "verified": true, "source": program,
            "line": CHILD_LINE}])
    );
    call(&mut b, "5", "continue", json!({"session": "s2"}));
    let exited = call(&mut b, "6", "wait", json!({"session": "s1"}));
    assert_eq!(
        exited,
        json!({"session": "s1", "status": "exited", "exit_code": 5, "breakpoints": set["breakpoints"]})
    );
    assert_eq!(
        read_text(&mut b, "7", "dap://sessions/s1/output"),
        "child got 42\nchild exit 4\n"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

/// Eight children alive at once: each says `ready` once debugpy let it run (attached, or
/// refused), then waits for its stdin to close, so that no child ends (freeing its session)
/// before the eighth is announced.
const MANY: &str = "\
import subprocess
import sys

children = []
for i in range(8):
    code = f\"import sys; print('ready', flush=True); sys.stdin.read(); print({i})\"
    child = subprocess.Popen([sys.executable, \"-c\", code], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    child.stdout.readline()
    children.append(child)
for child in children:
    out, _ = child.communicate()
    print(out.strip(), flush=True)
raise SystemExit(5)
";

#[test]
// A child beyond the limit is refused (`startDebugging` answered `success: false`): debugpy
// runs it on without a debugger itself, and nothing of it is finalized as a client session
// (a disconnected client session at times made debugpy's adapter `os._exit(1)`, losing the
// parent's `exited`).
fn a_child_beyond_the_session_limit_runs_without_a_debugger_and_the_parent_hears_of_it() {
    let (exited, output, uris, children) = run(&write("dap-many", MANY), json!({}));
    assert_eq!(
        exited,
        json!({"session": "s1", "status": "exited", "exit_code": 5})
    );
    // s1 and seven live children fill the eight sessions; the eighth child is refused.
    assert_eq!(uris, uris_of(8));
    let expected: Vec<Value> = (2..=8).map(|n| child_of_s1(&format!("s{n}"))).collect();
    assert_eq!(children, expected);
    let (notes, lines): (Vec<&str>, Vec<&str>) =
        output.lines().partition(|l| l.starts_with("mcp-dap: "));
    assert_eq!(lines, ["0", "1", "2", "3", "4", "5", "6", "7"], "{output}");
    assert_eq!(notes.len(), 1, "{output}");
    assert!(
        notes[0].starts_with("mcp-dap: Subprocess ")
            && notes[0]
                .ends_with(" runs without a debugger: 8 sessions are open, the most at once"),
        "{output}"
    );
}

/// A scripted adapter (DAP over stdio) that announces a child with debugpy's older form, the
/// `debugpyAttach` event (what debugpy sends a client without
/// `supportsStartDebuggingRequest`), after `configurationDone`: its body the child's attach
/// configuration, `connect` a listener of its own. The child's connection gets the start
/// sequence, then one line of output, `exited` 4 and `terminated`; once that connection
/// ends, the parent prints, exits 5 and ends.
const DEBUGPY_ATTACH_ADAPTER: &str = r#"
import json, socket, sys

def read(f):
    length = None
    while True:
        line = f.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"content-length":
            length = int(value)
    return json.loads(f.read(length))

class Peer:
    def __init__(self, rf, wf):
        self.rf, self.wf, self.seq = rf, wf, 1
    def send(self, message):
        message["seq"] = self.seq
        self.seq += 1
        body = json.dumps(message).encode()
        self.wf.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.wf.flush()
    def answer(self, request, body=None):
        self.send({"type": "response", "request_seq": request["seq"], "success": True,
                   "command": request["command"], "body": body or {}})
    def event(self, name, body=None):
        self.send({"type": "event", "event": name, "body": body or {}})

def serve(peer, configured):
    while True:
        request = read(peer.rf)
        if request is None:
            return
        if request.get("type") != "request":
            continue
        command = request["command"]
        peer.answer(request)
        if command in ("launch", "attach"):
            peer.event("initialized")
        elif command == "configurationDone":
            configured(peer)
        elif command == "disconnect":
            return

def child_configured(child):
    child.event("output", {"category": "stdout", "output": "child works\n"})
    child.event("exited", {"exitCode": 4})
    child.event("terminated")

def parent_configured(parent):
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    parent.event("debugpyAttach", {"name": "Subprocess 7", "request": "attach",
                                   "connect": {"host": "127.0.0.1", "port": port},
                                   "subProcessId": 7})
    connection, _ = listener.accept()
    serve(Peer(connection.makefile("rb"), connection.makefile("wb")), child_configured)
    parent.event("output", {"category": "stdout", "output": "parent done\n"})
    parent.event("exited", {"exitCode": 5})
    parent.event("terminated")

serve(Peer(sys.stdin.buffer, sys.stdout.buffer), parent_configured)
"#;

#[test]
fn a_child_announced_with_debugpy_attach_is_a_session_of_its_own() {
    let script = scratch_dir("dap-debugpy-attach").join("adapter.py");
    std::fs::write(&script, DEBUGPY_ATTACH_ADAPTER).expect("write the adapter");
    let adapter = format!("scripted=python3 {}", script.display());
    let mut b = crate::dap::start_with(&["--adapter", &adapter]);
    let launched = call(
        &mut b,
        "1",
        "launch",
        json!({"program": "/bin/true", "adapter": "scripted", "stop_on_entry": false}),
    );
    assert_eq!(launched["session"], "s1", "{launched}");
    let exited = call(&mut b, "2", "wait", json!({"session": "s1"}));
    assert_eq!(
        exited,
        json!({"session": "s1", "status": "exited", "exit_code": 5})
    );
    assert_eq!(listed(&mut b, "3"), uris_of(2));
    let child = call(&mut b, "4", "wait", json!({"session": "s2"}));
    assert_eq!(
        child,
        json!({"session": "s2", "status": "exited", "exit_code": 4, "parent": "s1"})
    );
    assert_eq!(
        (
            read_text(&mut b, "5", "dap://sessions/s1/output"),
            read_text(&mut b, "6", "dap://sessions/s2/output")
        ),
        ("parent done\n".to_owned(), "child works\n".to_owned())
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

/// More children than `MAX_SESSIONS` (8), one after another, then a line in the parent after
/// them (`AFTER_CHILDREN_LINE`).
const SHORT_LIVED: &str = "\
import subprocess
import sys

for i in range(10):
    subprocess.run([sys.executable, \"-c\", \"pass\"], stderr=subprocess.DEVNULL)
print(\"children done\", flush=True)
";

/// The line of `print(\"children done\")`.
const AFTER_CHILDREN_LINE: i64 = 6;

#[test]
fn children_that_ended_free_their_sessions_and_a_launch_is_accepted_after_them() {
    let program = write("dap-short-lived", SHORT_LIVED);
    let mut b = start();
    launch_stopped(&mut b, &program);
    call(
        &mut b,
        "2",
        "set_breakpoints",
        json!({"session": "s1", "source": program, "lines": [AFTER_CHILDREN_LINE]}),
    );
    call(&mut b, "3", "continue", json!({"session": "s1"}));
    let stopped = call(&mut b, "4", "wait", json!({"session": "s1"}));
    assert_eq!(
        (
            &stopped["status"],
            &stopped["reason"],
            &stopped["top_frame"]["line"]
        ),
        (
            &json!("stopped"),
            &json!("breakpoint"),
            &json!(AFTER_CHILDREN_LINE)
        ),
        "{stopped}"
    );
    // Ten children had sessions s2 to s11, each ended with its child, none refused; each
    // got the parent's breakpoint in its configuration.
    let children: Vec<Value> = (2..=11)
        .map(|n| {
            call(
                &mut b,
                &format!("w{n}"),
                "wait",
                json!({"session": format!("s{n}")}),
            )
        })
        .collect();
    let expected: Vec<Value> = (2..=11)
        .map(|n| {
            let mut child = child_of_s1(&format!("s{n}"));
            child["breakpoints"] = stopped["breakpoints"].clone();
            child
        })
        .collect();
    assert_eq!(children, expected);
    assert_eq!(read_text(&mut b, "5", "dap://sessions/s1/output"), "");
    let other = write("dap-short-lived-other", "value = 1\n");
    let second = call(&mut b, "6", "launch", json!({"program": other}));
    assert_eq!(
        (&second["session"], &second["state"]["reason"]),
        (&json!("s12"), &json!("entry")),
        "{second}"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

/// mcp-dap's bound on sessions open at once (`sessions::MAX_SESSIONS`).
const MAX_SESSIONS: usize = 8;

/// The line the parent's output gets for a child announced with `debugpyAttach` that gets no
/// session: debugpy holds such a child until the parent's `launch` session ends, then ends it
/// (its `adapter/sessions.py`), so the line says how long it waits.
const NOT_ATTACHED: &str = "mcp-dap: Subprocess 9 waits for a debugger until this session ends: \
                            8 sessions are open, the most at once\n";

#[test]
fn a_debugpy_attach_child_beyond_the_session_limit_is_not_attached_and_the_parent_says_so() {
    let mut b = crate::dap::start_scripted();
    for n in 1..=MAX_SESSIONS {
        let launched = call(
            &mut b,
            &format!("launch-{n}"),
            "launch",
            json!({"program": "/scripted/prog", "adapter": "script", "stop_on_entry": false}),
        );
        assert_eq!(launched["session"], json!(format!("s{n}")), "{launched}");
    }
    let pids = crate::dap::descendants(b.child.id() as i32);
    assert_eq!(pids.len(), MAX_SESSIONS, "{pids:?}");
    let groups: Vec<i32> = pids.iter().map(|&p| crate::dap::process_group(p)).collect();
    let output_uri = "dap://sessions/s1/output";
    listen_to(&mut b, &[output_uri]);
    // The scripted adapter sends the events of an `evaluate` after its answer.
    let announce = json!([{"event": "debugpyAttach", "body": {"name": "Subprocess 9",
        "request": "attach", "connect": {"host": "127.0.0.1", "port": 9}, "subProcessId": 9}}]);
    call(
        &mut b,
        "announce",
        "evaluate",
        json!({"session": "s1", "expression": announce.to_string(), "frame_id": 0}),
    );
    let update = b.recv_notification("notifications/resources/updated");
    assert_eq!(update["params"]["uri"], output_uri, "{update}");
    assert_eq!(read_text(&mut b, "output", output_uri), NOT_ATTACHED);
    // No session opened for the child.
    assert_eq!(listed(&mut b, "list"), uris_of(MAX_SESSIONS));
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
    crate::dap::assert_nothing_left(&pids, &groups);
}
