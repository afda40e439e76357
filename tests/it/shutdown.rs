//! The end of the input, the loss of the upstream, and what is left behind (nothing).

use crate::common;

use common::{Bridge, error_of, process_alive, text_of, wait_until};
use serde_json::json;
use std::time::Duration;

/// Calls `spawn_grandchild` (id 1): the pid of the upstream's child it started.
fn spawn_grandchild(b: &mut Bridge) -> i32 {
    let r = b.tools_call(json!(1), "spawn_grandchild", json!({}));
    text_of(&r).trim().parse().expect("pid")
}

/// Sends a `sleep` of 30 s as request `id` and waits until the upstream has it.
fn sleep_in_flight(b: &mut Bridge, id: i64) {
    b.send_tools_call(json!(id), "sleep", json!({"ms": 30000}));
    b.wait_upstream(|v| v["params"]["name"] == "sleep");
}

#[test]
fn end_of_stdin_exits_0_and_no_process_of_the_upstream_group_survives() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    let pid = spawn_grandchild(&mut b);
    assert!(process_alive(pid));
    sleep_in_flight(&mut b, 2);
    b.close_stdin();
    let status = b
        .wait_exit(Duration::from_secs(8))
        .expect("the bridge exits");
    assert_eq!(status.code(), Some(0));
    // The request in flight got no response, and one line says so.
    let rest = b.recv_to_the_end();
    assert!(
        rest.iter().all(|f| f.get("id") != Some(&json!(2))),
        "{rest:?}"
    );
    b.wait_stderr(
        "mcp-bridge: frontend: info: the end of the input cancelled 1 request in flight: it gets no response\n",
    );
    assert!(
        wait_until(|| !process_alive(pid)),
        "grandchild {pid} survived the bridge"
    );
}

#[test]
fn end_of_stdin_before_initialize_exits_0() {
    let mut b = Bridge::start(&[], &[]);
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(5)), Some(0));
}

#[test]
fn loss_of_the_upstream_answers_in_flight_requests_and_exits_1() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    let pid = spawn_grandchild(&mut b);
    sleep_in_flight(&mut b, 2);
    b.send_tools_call(json!(3), "crash", json!({"code": 3}));
    for id in [2, 3] {
        let r = b.recv_response(&json!(id));
        assert_eq!(
            r["error"],
            json!({"code": -32603, "message": "The upstream server exited", "data": {"cause": "upstream_exited"}})
        );
    }
    let status = b
        .wait_exit(Duration::from_secs(8))
        .expect("the bridge exits");
    assert_eq!(status.code(), Some(1));
    b.wait_stderr("mcp-bridge: upstream: error: the upstream server exited (exit code 3)");
    assert!(
        wait_until(|| !process_alive(pid)),
        "grandchild {pid} survived the loss of the upstream"
    );
}

#[test]
fn the_childs_stderr_passes_through_and_the_bridges_lines_have_the_fixed_form() {
    let mut b = Bridge::start(
        &["--log-level", "debug"],
        &["--stderr-line", "upstream says hi"],
    );
    b.initialize();
    let r = b.tools_call(json!(1), "echo", json!({"text": "x"}));
    assert_eq!(text_of(&r), "x");
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(5)), Some(0));
    // The reader of stderr may lag behind the exit: read to the end of the pipe.
    let err = b.stderr_to_the_end();
    assert!(err.lines().any(|l| l == "upstream says hi"), "{err}");
    let ours: Vec<&str> = err.lines().filter(|l| *l != "upstream says hi").collect();
    assert!(!ours.is_empty());
    for line in &ours {
        let parts: Vec<&str> = line.splitn(4, ": ").collect();
        assert_eq!(parts.len(), 4, "{line}");
        assert_eq!(parts[0], "mcp-bridge", "{line}");
        assert!(
            ["error", "warn", "info", "debug", "trace"].contains(&parts[2]),
            "{line}"
        );
        assert!(!line.chars().any(|c| c.is_control()), "{line:?}");
    }
    // One debug line per upstream exchange: id, method, outcome, time; never content.
    assert!(
        ours.iter()
            .any(|l| l.starts_with("mcp-bridge: upstream: debug: id=")
                && l.contains("method=tools/call outcome=result time_ms="))
    );
    assert!(!err.contains("\"text\""), "no frame content in the log");
    assert!(
        ours.iter()
            .any(|l| l.starts_with("mcp-bridge: metrics: debug: totals: ")
                && l.contains("tools/call: requests=1 errors=0"))
    );
}

/// At its end a bridge that ran writes one short summary at info: the requests, the errors,
/// the slowest method and its time, and what was dropped; the full counters are at debug.
#[test]
fn the_end_writes_a_short_summary_at_info_and_the_counters_at_debug_only() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    assert_eq!(
        text_of(&b.tools_call(json!(1), "echo", json!({"text": "x"}))),
        "x"
    );
    b.tools_call(json!(2), "fail", json!({"code": -32000, "message": "no"}));
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(5)), Some(0));
    let metrics = b.stderr_lines_to_the_end(|l| l.starts_with("mcp-bridge: metrics: "));
    assert_eq!(metrics.len(), 1, "{metrics:?}");
    let ms: f64 = metrics[0]
        .strip_prefix(
            "mcp-bridge: metrics: info: summary: 2 requests, 1 error; slowest tools/call, ",
        )
        .and_then(|rest| rest.strip_suffix(" ms; nothing dropped"))
        .and_then(|ms| ms.parse().ok())
        .unwrap_or_else(|| panic!("not the summary: {}", metrics[0]));
    assert!(ms > 0.0, "{ms}");
}

/// `--metrics-interval SECONDS` writes the metrics line at info while the bridge runs.
#[test]
fn metrics_interval_writes_the_counters_at_info() {
    let mut b = Bridge::start(&["--metrics-interval", "0.2"], &[]);
    b.initialize();
    assert_eq!(
        text_of(&b.tools_call(json!(1), "echo", json!({"text": "x"}))),
        "x"
    );
    b.wait_stderr("tools/call: requests=1 errors=0 ");
    let line = b
        .stderr_text()
        .lines()
        .find(|l| l.contains("tools/call: requests=1 errors=0 "))
        .map(str::to_string)
        .unwrap_or_default();
    assert!(
        line.starts_with("mcp-bridge: metrics: info: frontend: handled="),
        "{line}"
    );
    assert!(line.contains("; editor_queue: frames="), "{line}");
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(5)), Some(0));
}

#[test]
fn after_the_loss_a_new_request_gets_upstream_exited() {
    let mut b = Bridge::start(&["--shutdown-grace", "1"], &[]);
    b.initialize();
    b.send_tools_call(json!(1), "crash", json!({"code": 0}));
    let r = b.recv_response(&json!(1));
    assert_eq!(error_of(&r), (-32603, "upstream_exited".into()));
    assert_eq!(b.exit_code(Duration::from_secs(8)), Some(1));
}

#[test]
fn sigterm_stops_the_bridge_like_the_end_of_input_and_the_group_goes_with_it() {
    for signal in [libc_signal::TERM, libc_signal::INT, libc_signal::HUP] {
        let mut b = Bridge::start(&[], &[]);
        b.initialize();
        let pid = spawn_grandchild(&mut b);
        b.signal(signal);
        let exit = b
            .wait_exit(Duration::from_secs(8))
            .expect("the bridge exits");
        assert_eq!(exit.code(), Some(0), "{signal}");
        assert!(
            wait_until(|| !process_alive(pid)),
            "grandchild {pid} survived {signal}"
        );
        b.wait_stderr("stopping as at the end of the input");
    }
}

mod libc_signal {
    pub const TERM: &str = "-TERM";
    pub const INT: &str = "-INT";
    pub const HUP: &str = "-HUP";
}

#[test]
fn stdin_and_stdout_that_are_files_use_the_blocking_path_and_work_too() {
    let dir = common::scratch_dir("files");
    let input = dir.join("in.jsonl");
    let output = dir.join("out.jsonl");
    std::fs::write(
        &input,
        // CRLF and blank lines as on a pipe (the same codec); the last line has no newline.
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\n \r\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\nnot json",
    )
    .expect("write input");
    let status = std::process::Command::new(common::bridge_bin())
        .args(["--", common::server_bin()])
        .stdin(std::fs::File::open(&input).expect("open input"))
        .stdout(std::fs::File::create(&output).expect("create output"))
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run");
    assert_eq!(status.code(), Some(0));
    let out = std::fs::read_to_string(&output).expect("read output");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(lines[1]["error"]["data"]["cause"], "not_initialized");
    assert_eq!(lines[2]["error"]["data"]["cause"], "parse_error");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_stderr_that_nobody_reads_never_stops_the_bridge() {
    use std::io::{BufRead, BufReader, Write};
    let mut child = std::process::Command::new(common::bridge_bin())
        .args(["--log-level", "debug", "--", common::server_bin()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stderr.take()); // the read end closes: every write to stderr fails (EPIPE)
    let mut stdin = child.stdin.take().expect("stdin");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    for (id, method, params) in [
        (
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        ),
        (2, "ping", json!({})),
    ] {
        let req = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        stdin
            .write_all(format!("{req}\n").as_bytes())
            .expect("write");
        loop {
            line.clear();
            assert!(
                out.read_line(&mut line).expect("read") > 0,
                "the bridge closed stdout"
            );
            let v: serde_json::Value = serde_json::from_str(&line).expect("json");
            if v["id"] == json!(id) {
                assert!(v.get("result").is_some(), "{v}");
                break;
            }
        }
    }
    drop(stdin);
    wait_until(|| child.try_wait().ok().flatten().is_some());
    let status = child.try_wait().expect("wait");
    let _ = child.kill();
    assert_eq!(status.and_then(|s| s.code()), Some(0));
}

/// An editor that closes its reading end of the bridge's stdout while the bridge's stdin stays
/// open: no answer can be delivered any more, so the bridge runs the steps of the end of input
/// at once (the request in flight is cancelled upstream), with one warn line, and exits 0.
#[test]
fn a_closed_stdout_stops_the_bridge_while_stdin_stays_open() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    b.send_tools_call(json!(7), "sleep", json!({"ms": 600_000}));
    b.wait_upstream(|v| v["method"] == "tools/call");
    b.close_stdout_reading_end();
    let exit = b
        .wait_exit(common::RECV_TIMEOUT)
        .expect("the bridge exits with its stdin still open");
    assert_eq!(exit.code(), Some(0));
    let lines = b.stderr_lines_to_the_end(|l| l.contains("closed its end of stdout"));
    assert_eq!(
        lines,
        [
            "mcp-bridge: supervisor: warn: the editor closed its end of stdout: stopping as at the end of the input"
        ]
    );
    let cancelled = b.wait_upstream(|v| v["method"] == "notifications/cancelled");
    let call = b.wait_upstream(|v| v["method"] == "tools/call");
    assert_eq!(cancelled["params"]["requestId"], call["id"]);
}

/// A second SIGTERM or SIGINT during a shutdown that waits (an upstream that ignores the end
/// of its input, a long grace) stops the bridge at once: the child's group is killed, one warn
/// line, exit status 128 + the signal's number. Without it the watchdog would end the bridge
/// with status 0 after 30 s + 2 x the grace + 8 s.
#[test]
fn a_second_signal_stops_the_bridge_at_once() {
    for (signal, name, code) in [("-TERM", "SIGTERM", 143), ("-INT", "SIGINT", 130)] {
        let mut b = Bridge::start(&["--shutdown-grace", "60"], &["--keep-running-after-eof"]);
        b.initialize();
        let pid = spawn_grandchild(&mut b);
        b.signal(signal);
        b.wait_stderr(&format!(
            "received {name}: stopping as at the end of the input"
        ));
        b.signal(signal);
        let exit = b.wait_exit(common::RECV_TIMEOUT).expect("the bridge exits");
        assert_eq!(exit.code(), Some(code), "{name}");
        assert!(
            wait_until(|| !process_alive(pid)),
            "grandchild {pid} survived {name} twice"
        );
        let stderr = b.stderr_to_the_end();
        let again: Vec<&str> = stderr.lines().filter(|l| l.contains("again")).collect();
        assert_eq!(
            again,
            [format!(
                "mcp-bridge: supervisor: warn: received {name} again: stopped at once, without the rest of the shutdown steps"
            )]
        );
    }
}

/// An upstream that closes its stdout and keeps running is lost like one that exits: its
/// requests get `upstream_exited`, the bridge exits 1, and the log says what happened (its
/// stdout closed, the bridge killed it after the wait), not `signal 9` as if it had been
/// killed from outside.
#[test]
fn an_upstream_that_closes_its_stdout_is_logged_as_such_and_killed_by_the_bridge() {
    // It does not exit at the end of its stdin either (which the bridge closes once the
    // upstream is lost): only the bridge's SIGKILL ends it.
    let mut b = Bridge::start(&[], &["--keep-running-after-eof"]);
    b.initialize();
    let r = b.tools_call(json!(1), "close_stdout", json!({}));
    assert_eq!(
        r["error"],
        json!({"code": -32603, "message": "The upstream server exited", "data": {"cause": "upstream_exited"}})
    );
    let status = b.wait_exit(common::RECV_TIMEOUT).expect("the bridge exits");
    assert_eq!(status.code(), Some(1));
    let lost = b.stderr_lines_to_the_end(|l| l.contains("the upstream server exited"));
    assert_eq!(
        lost,
        [
            "mcp-bridge: upstream: error: the upstream server exited (it closed its stdout and was still running 500 ms later: the bridge killed it (SIGKILL))"
        ]
    );
}

/// Lines the upstream writes before its answer and its exit in the tests of a slow editor:
/// more than the queue toward the editor, the pipes and the reader hold together, so that the
/// child exits while the bridge's reader is paused and frames are still in the child's pipe.
const LINES_BEFORE_THE_EXIT: usize = 10_000;

/// The editor reads this many frames, then rests [`SLOW_EDITOR_REST`]: about 2,000 frames a
/// second, a busy editor; the last frames reach it seconds after the upstream exited.
const SLOW_EDITOR_LINES: usize = 100;
const SLOW_EDITOR_REST: Duration = Duration::from_millis(50);

/// A tools list change on the bridge's listen stream, as the upstream writes it.
fn tools_list_changed_line(b: &Bridge) -> String {
    let listen = b.wait_upstream(|v| v["method"] == "subscriptions/listen");
    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": listen["id"]}}})
    .to_string()
}

/// With a `sleep` (id 2) in flight, a slow editor, and the upstream writing
/// [`LINES_BEFORE_THE_EXIT`] list changes, then its answer to id 3, then exiting 0: every
/// frame reaches the editor in order, the answer after the list changes, then id 2's
/// `upstream_exited`, and the bridge exits 1. Call after `initialize`.
fn a_slow_editor_gets_everything_the_upstream_wrote_before_its_exit(b: &mut Bridge) {
    b.read_slowly(SLOW_EDITOR_LINES, SLOW_EDITOR_REST);
    the_editor_gets_everything_the_upstream_wrote_before_its_exit(b, LINES_BEFORE_THE_EXIT);
}

/// As [`a_slow_editor_gets_everything_the_upstream_wrote_before_its_exit`], with `count` list
/// changes and the editor reading as it reads now.
fn the_editor_gets_everything_the_upstream_wrote_before_its_exit(b: &mut Bridge, count: usize) {
    let line = tools_list_changed_line(b);
    sleep_in_flight(b, 2);
    let before = b.seen.len();
    b.send_tools_call(
        json!(3),
        "emit_and_exit",
        json!({"line": line, "count": count, "code": 0}),
    );
    b.recv_to_the_end();
    let frames = &b.seen[before..];
    let changes = frames
        .iter()
        .take_while(|f| f["method"] == "notifications/tools/list_changed")
        .count();
    assert_eq!(changes, count, "{:?}", frames.get(changes));
    let rest = &frames[changes..];
    assert_eq!(rest.len(), 2, "after the list changes: {rest:?}");
    assert_eq!(rest[0]["id"], json!(3), "{rest:?}");
    assert_eq!(text_of(&rest[0]), "emitted");
    assert_eq!(
        rest[1],
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32603,
            "message": "The upstream server exited", "data": {"cause": "upstream_exited"}}})
    );
    assert_eq!(b.exit_code(Duration::from_secs(8)), Some(1));
}

#[test]
fn what_the_upstream_wrote_before_it_exited_reaches_a_slow_editor_in_order() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    a_slow_editor_gets_everything_the_upstream_wrote_before_its_exit(&mut b);
    b.wait_stderr("mcp-bridge: upstream: error: the upstream server exited (exit code 0)");
}

/// The answer the upstream wrote before it exited reaches the editor before the
/// `upstream_exited` of the request it never answered, also when both come in one turn of
/// the actors (a fast editor, a thousand frames before the answer: the older request's error
/// used to overtake the answer in most runs). Five bridges, one after the other.
#[test]
fn the_answer_written_before_the_exit_comes_before_the_upstream_exited_of_an_older_request() {
    for _ in 0..5 {
        let mut b = Bridge::start(&[], &[]);
        b.initialize();
        the_editor_gets_everything_the_upstream_wrote_before_its_exit(&mut b, 1_000);
    }
}

#[test]
fn a_process_that_holds_the_upstreams_stdout_does_not_cut_what_a_slow_editor_still_reads() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    // `sleep 300` inherits the server's stdout: the pipe stays open after the server's exit,
    // and only the wait for its end while the pipe is empty is limited.
    let pid = spawn_grandchild(&mut b);
    assert!(process_alive(pid));
    a_slow_editor_gets_everything_the_upstream_wrote_before_its_exit(&mut b);
    assert!(
        wait_until(|| !process_alive(pid)),
        "grandchild {pid} survived the loss of the upstream"
    );
}

/// Echo calls in the test of the end of stdin with a slow editor: more answers than that
/// editor reads in the seconds the shutdown used to give it, and fewer frames than the queue
/// toward the upstream holds (`UPSTREAM_QUEUE_MAX_FRAMES`), so that none gets `upstream_busy`.
const ECHOES_BEFORE_THE_END: usize = 1_000;
/// Answers the editor has read when the input ends.
const ANSWERED_BEFORE_THE_END: usize = 100;

#[test]
fn at_the_end_of_stdin_a_slow_editor_gets_every_answer_the_upstream_gave() {
    // Room for every echo in flight at once: none gets too_many_requests.
    let limit = ECHOES_BEFORE_THE_END.to_string();
    let mut b = Bridge::start(&["--max-in-flight", &limit], &[]);
    b.initialize();
    // About 250 frames a second: the answers take about 4 s to read.
    b.read_slowly(25, Duration::from_millis(100));
    // 1 KiB answers: what is queued at the end is far more than the bridge's stdout pipe holds.
    let pad = "x".repeat(1024);
    for n in 0..ECHOES_BEFORE_THE_END {
        b.send_tools_call(
            json!(100 + n),
            "echo",
            json!({"text": format!("e{n} {pad}")}),
        );
    }
    let last = format!("e{} {pad}", ECHOES_BEFORE_THE_END - 1);
    b.wait_upstream(|v| v["params"]["arguments"]["text"] == last);
    // The end of the input comes once the editor has read the 100th answer: answers arrive in
    // order, so the bridge has read at least 100 by then, and what it read beyond them waits
    // in its queue toward the slow editor. How many more it read depends on the machine's load
    // (on a loaded machine the end of the input came after 77 once); every one must arrive.
    b.recv_response(&json!(100 + ANSWERED_BEFORE_THE_END - 1));
    b.close_stdin();
    b.recv_to_the_end();
    assert_eq!(b.exit_code(Duration::from_secs(8)), Some(0));
    // Every echo is answered or was still in flight at the end of the input, where it is
    // cancelled without a response (one line counts them). Every answer the bridge had
    // reaches the editor, however slowly it reads.
    let stderr = b.stderr_to_the_end();
    let cancelled: usize = stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix("mcp-bridge: frontend: info: the end of the input cancelled ")?
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0);
    let answers: Vec<&serde_json::Value> = b
        .seen
        .iter()
        .filter(|f| f["id"].as_i64().is_some_and(|id| id >= 100))
        .collect();
    for f in &answers {
        let text = text_of(f);
        let n: usize = text[1..].split(' ').next().unwrap().parse().unwrap();
        assert_eq!(f["id"], json!(100 + n), "{text}");
    }
    assert_eq!(
        answers.len() + cancelled,
        ECHOES_BEFORE_THE_END,
        "{} answers, {cancelled} cancelled at the end",
        answers.len()
    );
    assert!(
        answers.len() >= ANSWERED_BEFORE_THE_END,
        "answers: {}",
        answers.len()
    );
}

/// Requests held behind an `initialize` that still runs are in flight too: at the end of the
/// input they are cancelled with it, and the line counts them.
#[test]
fn the_end_of_the_input_counts_the_requests_held_behind_initialize() {
    let mut b = Bridge::start_cmd(&[], &["sleep".into(), "1000".into()]);
    b.send_request(
        json!(1),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "blackbox-test", "version": "1.0.0"}}),
    );
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for id in 10..13 {
        b.send_tools_call(json!(id), "echo", json!({"text": "held"}));
    }
    b.close_stdin();
    assert_eq!(b.recv_to_the_end(), Vec::<serde_json::Value>::new());
    assert_eq!(b.exit_code(Duration::from_secs(8)), Some(0));
    b.wait_stderr(
        "mcp-bridge: frontend: info: the end of the input cancelled 4 requests in flight: they get no response\n",
    );
}
