//! Memory stays bounded whatever the peers do, over real pipes: a slow editor
//! gets every response while progress and log notifications give way (dropped and counted in
//! the metrics line), log messages are limited per request, a request cancelled while it
//! waits in the queue toward the upstream is never sent (and one already written is followed
//! by its cancel, whenever the editor cancels it), and a full queue toward the upstream
//! answers a new request `upstream_busy` at once. Bounds: `src/transport/writer.rs`.

use crate::common;

use common::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Log messages per second per request, and the burst (src/actors/slots.rs).
const LOG_PER_SEC: f64 = 50.0;
const LOG_BURST: usize = 50;
/// `UPSTREAM_QUEUE_MAX_BYTES` (src/transport/writer.rs).
const UPSTREAM_QUEUE_MAX_BYTES: u64 = 16 * 1024 * 1024;

fn echo(b: &mut Bridge, id: u64, text: &str) {
    b.send_tools_call(json!(id), "echo", json!({"text": text}));
}

fn end(b: &mut Bridge) {
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(10)), Some(0));
}

/// An upstream that stops reading its stdin after `server/discover`, until `resume` exists.
fn stalled_upstream(resume: &std::path::Path) -> Bridge {
    let resume = resume.to_string_lossy().into_owned();
    let mut b = Bridge::start(
        &["--log-level", "debug"],
        &[
            "--no-listen",
            "--stall-stdin-after",
            "1",
            "--resume-stdin-file",
            &resume,
        ],
    );
    b.initialize();
    b
}

#[test]
fn a_slow_editor_gets_every_response_and_the_dropped_notifications_are_counted() {
    const COUNT: usize = 20_000;
    let mut b = Bridge::start(&["--log-level", "debug"], &[]);
    b.initialize();
    b.request(json!(1), "logging/setLevel", json!({"level": "info"}));
    b.pause_reading();
    // A 2 MiB response waits for the editor: the queue is over the 1 MiB bound of
    // notifications, under the 8 MiB at which the readers pause, so the flood goes on. The
    // flood starts once the pipe is full, that is once the writer holds the response.
    let big = "x".repeat(2 * 1024 * 1024);
    echo(&mut b, 2, &big);
    b.wait_stdout_pipe_full();
    b.send_tools_call(json!(3), "log_flood", json!({"count": COUNT}));
    // The flood is over at the bridge (its result came from the upstream) while the editor
    // still reads nothing.
    b.wait_stderr("client=3 method=tools/call outcome=result");
    b.resume_reading();
    let r = b.recv_response(&json!(2));
    assert!(text_of(&r) == big, "the 2 MiB response arrives whole");
    let r = b.recv_response(&json!(3));
    assert_eq!(text_of(&r), "flooded");
    let logs = b.take_notifications("notifications/message");
    let mut last = 0;
    for l in &logs {
        let n: usize = l["params"]["data"]
            .as_str()
            .and_then(|d| d.strip_prefix("flood "))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("unexpected log message {l}"));
        assert!(n > last, "in order: {n} after {last}");
        last = n;
    }
    // The editor reads again: ping is answered.
    assert_eq!(b.request(json!(4), "ping", json!({}))["result"], json!({}));
    end(&mut b);
    let q = b.metrics_totals("editor_queue");
    let (dropped, limited) = (q["dropped_full"] as usize, q["rate_limited"] as usize);
    assert_eq!(
        logs.len() + dropped + limited,
        COUNT,
        "every log message is delivered, dropped for the full queue, or rate-limited: {q:?}"
    );
    assert!(dropped >= 1, "the full queue dropped notifications: {q:?}");
}

#[test]
fn log_messages_of_one_request_are_limited_per_second() {
    const COUNT: usize = 20_000;
    let mut b = Bridge::start(&["--log-level", "debug"], &[]);
    b.initialize();
    b.request(json!(1), "logging/setLevel", json!({"level": "info"}));
    let started = Instant::now();
    let r = b.tools_call(json!(2), "log_flood", json!({"count": COUNT}));
    let elapsed = started.elapsed().as_secs_f64();
    assert_eq!(text_of(&r), "flooded");
    let n = b.take_notifications("notifications/message").len();
    // A burst of 50, then 50 per second, over at most the time this test measured.
    let bound = LOG_BURST + (LOG_PER_SEC * elapsed).ceil() as usize;
    assert!(
        (LOG_BURST..=bound).contains(&n),
        "{n} log messages in {elapsed:.3} s (bound {bound})"
    );
    end(&mut b);
    let q = b.metrics_totals("editor_queue");
    assert_eq!(
        n + q["rate_limited"] as usize + q["dropped_full"] as usize,
        COUNT,
        "{q:?}"
    );
}

#[test]
fn a_request_cancelled_while_queued_never_reaches_the_upstream() {
    let dir = scratch_dir("cancel-queued");
    let resume = dir.join("resume");
    let mut b = stalled_upstream(&resume);
    // 256 KiB: the pipe (64 KiB) takes the start of it, the rest waits in the queue; a frame
    // that is started goes out whole.
    let big = "y".repeat(256 * 1024);
    echo(&mut b, 1, &big);
    echo(&mut b, 2, "cancel me");
    b.wait_stderr("client=2 method=tools/call waits in the queue toward the upstream");
    b.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 2, "reason": "changed my mind"}}),
    );
    b.wait_stderr("was taken out of the queue unsent");
    echo(&mut b, 3, "after");
    std::fs::write(&resume, b"").expect("resume file");
    assert!(text_of(&b.recv_response(&json!(1))) == big);
    assert_eq!(text_of(&b.recv_response(&json!(3))), "after");
    assert_eq!(b.request(json!(4), "ping", json!({}))["result"], json!({}));
    end(&mut b);
    assert!(
        !b.seen.iter().any(|f| f["id"] == json!(2)),
        "a cancelled request gets no response"
    );
    let up = b.upstream_received();
    let texts: Vec<&str> = up
        .iter()
        .filter_map(|v| v["params"]["arguments"]["text"].as_str())
        .filter(|t| t.len() < 100)
        .collect();
    assert_eq!(texts, vec!["after"]);
    assert!(
        !up.iter().any(|v| v["method"] == "notifications/cancelled"),
        "a request never sent needs no cancel: {up:?}"
    );
    let q = b.metrics_totals("upstream_queue");
    assert_eq!((q["removed"], q["refused"]), (1, 0), "{q:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_full_upstream_queue_answers_a_new_request_upstream_busy_at_once() {
    let dir = scratch_dir("busy");
    let resume = dir.join("resume");
    let mut b = stalled_upstream(&resume);
    // Frames of about 1,000,300 bytes: 16 fit in the 16 MiB of the queue, the 17th does not.
    let text = "z".repeat(1_000_000);
    for id in 1..=20 {
        echo(&mut b, id, &text);
    }
    // The upstream still reads nothing: these errors come at once.
    for id in 17..=20 {
        let r = b.recv_response(&json!(id));
        assert_eq!(error_of(&r), (-32603, "upstream_busy".into()), "{id}");
        assert_eq!(
            r["error"]["data"]["detail"],
            json!(UPSTREAM_QUEUE_MAX_BYTES)
        );
    }
    assert_eq!(b.request(json!(30), "ping", json!({}))["result"], json!({}));
    std::fs::write(&resume, b"").expect("resume file");
    for id in 1..=16 {
        let r = b.recv_response(&json!(id));
        assert!(text_of(&r) == text, "{id} is answered");
    }
    // The upstream reads again: a new request goes through, ping is answered.
    echo(&mut b, 31, "again");
    assert_eq!(text_of(&b.recv_response(&json!(31))), "again");
    assert_eq!(b.request(json!(32), "ping", json!({}))["result"], json!({}));
    end(&mut b);
    let q = b.metrics_totals("upstream_queue");
    assert_eq!((q["refused"], q["removed"]), (4, 0), "{q:?}");
    let errors: Vec<&Value> = b.seen.iter().filter(|f| f.get("error").is_some()).collect();
    assert_eq!(errors.len(), 4, "{errors:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The upstream ids of the Upstream actor's debug lines (`id=N ...`) that hold `what`.
fn upstream_ids_in(log: &str, what: &str) -> Vec<i64> {
    log.lines()
        .filter(|l| l.contains(what))
        .filter_map(|l| l.split("id=").nth(1))
        .filter_map(|rest| rest.split(' ').next())
        .filter_map(|n| n.parse().ok())
        .collect()
}

/// The upstream id of the Upstream actor's debug line (`id=N client=C ...`) of the editor's
/// request `client` that holds `what`, if there is one.
fn upstream_id_of(log: &str, client: i64, what: &str) -> Option<i64> {
    let tag = format!(" client={client} ");
    log.lines()
        .filter(|l| l.contains(&tag) && l.contains(what))
        .find_map(|l| upstream_ids_in(l, what).first().copied())
}

/// Bounded memory and the cancellation rules: a cancelled request that was sent (it has its
/// upstream id) is taken out of the queue toward the upstream unsent while none of its bytes
/// is written, else followed by `notifications/cancelled` with its upstream id and the
/// editor's reason; either way the bridge forgets it at once (never pending until
/// `--call-timeout`). Each step waits for a debug line of the bridge, never for a number of
/// actor turns or a scheduling order: the editor cancels once the Upstream actor logged the
/// last call as waiting in the queue (so every call has its upstream id: the first ones in
/// the pipe, the others queued), and the upstream reads again once a call sent after the
/// cancels is logged as waiting (so every cancel was handled and logged). The windows that
/// only exist inside the process (a cancel before the Upstream handled the `Call`, or after
/// it but before the slot woke) are tests/transport_seam.rs's
/// `a_call_whose_answer_never_reached_its_waiter_is_abandoned`.
#[test]
fn every_cancelled_request_is_taken_out_unsent_or_followed_by_its_cancel() {
    const N: i64 = 12;
    const FIRST: i64 = 100;
    const REASON: &str = "the user stopped it";
    let dir = scratch_dir("cancel-race");
    let resume = dir.join("resume");
    let mut b = stalled_upstream(&resume);
    // 1500 bytes less than the pipe toward the stalled upstream holds (`PIPE_BUFFER_BYTES`):
    // the pipe takes it whole and has room for a few of the calls below (each then needs its
    // cancel); the others wait in the queue (each is then taken out and never sent).
    let capacity = pipe_size_of(only_child(b.child.id()), 0);
    assert_eq!(capacity, PIPE_BUFFER_BYTES);
    let filler = "y".repeat(capacity - 1500);
    echo(&mut b, 1, &filler);
    let burst = |frame: &dyn Fn(i64) -> Value| {
        let mut bytes = Vec::new();
        for id in FIRST..FIRST + N {
            bytes.extend(serde_json::to_vec(&frame(id)).expect("json"));
            bytes.push(b'\n');
        }
        bytes
    };
    b.send_raw(&burst(&|id| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "sleep", "arguments": {"ms": 600_000}}})
    }));
    // The Upstream actor handles the calls in order: once the last waits in the queue, every
    // call of the burst has its upstream id.
    let last = FIRST + N - 1;
    let waits = "waits in the queue toward the upstream";
    b.wait_stderr(&format!("client={last} method=tools/call {waits}"));
    b.send_raw(&burst(&|id| {
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": id, "reason": REASON}})
    }));
    // Two echoes behind the cancels. The first is larger than the room left in the pipe (a
    // part of a page; all its pages are taken), so it waits in the queue, whole or in part,
    // and the second is logged as waiting behind it. The Upstream actor handles the cancels
    // the Frontend sent before these calls: once the second waits, every cancel of the burst
    // was handled (in no particular order) and logged.
    let before = "b".repeat(8 * 1024);
    echo(&mut b, 2, &before);
    echo(&mut b, 3, "after");
    b.wait_stderr("client=3 method=tools/call waits in the queue toward the upstream");
    let log = b.stderr_text();
    std::fs::write(&resume, b"").expect("resume file");
    assert!(text_of(&b.recv_response(&json!(1))) == filler);
    assert!(text_of(&b.recv_response(&json!(2))) == before);
    assert_eq!(text_of(&b.recv_response(&json!(3))), "after");
    assert_eq!(b.request(json!(4), "ping", json!({}))["result"], json!({}));
    end(&mut b);
    let mut answered: Vec<i64> = b
        .seen
        .iter()
        .filter(|f| f.get("method").is_none())
        .filter_map(|f| f["id"].as_i64())
        .collect();
    answered.sort_unstable();
    assert_eq!(
        answered,
        [0, 1, 2, 3, 4],
        "a cancelled request gets no response: {:?}",
        b.seen
    );
    let err = b.stderr_to_the_end();
    assert!(
        !err.contains("outcome=closed") && !err.contains("before it was sent"),
        "every call was sent, and nothing was left pending:\n{err}"
    );
    let up = b.upstream_received();
    let echo_id = |text: &str| {
        up.iter()
            .find(|v| v["params"]["arguments"]["text"] == text)
            .and_then(|v| v["id"].as_i64())
            .unwrap_or_else(|| panic!("the echo did not reach the upstream: {up:?}"))
    };
    // Upstream ids are given in order: the burst's follow the filler's, one per call, and
    // each call was forgotten at once, before the upstream read again.
    let burst_ids: Vec<i64> = (1..=N).map(|k| echo_id(&filler) + k).collect();
    let cancelled: Vec<Option<i64>> = (FIRST..FIRST + N)
        .map(|client| upstream_id_of(&log, client, "method=tools/call outcome=cancelled"))
        .collect();
    assert_eq!(
        cancelled,
        burst_ids.iter().map(|&id| Some(id)).collect::<Vec<_>>(),
        "each call has its upstream id and is forgotten at once:\n{log}"
    );
    assert_eq!(echo_id(&before), burst_ids[N as usize - 1] + 1);
    // The calls the pipe took reached the upstream, each followed by its cancel with the
    // editor's reason; the rest were taken out and never reached it.
    let received: Vec<i64> = up
        .iter()
        .filter(|v| v["method"] == "tools/call" && v["params"]["name"] == "sleep")
        .filter_map(|v| v["id"].as_i64())
        .collect();
    let mut removed = upstream_ids_in(&log, "was taken out of the queue unsent");
    removed.sort_unstable();
    let split = received.len();
    assert!(
        (1..N as usize).contains(&split),
        "some calls were in the pipe, some still in the queue: received {received:?}, taken out {removed:?}"
    );
    assert_eq!(
        received,
        burst_ids[..split],
        "the pipe took the first calls"
    );
    assert_eq!(removed, burst_ids[split..], "the queue held the others");
    // The first call the pipe refused was tried at once (the queue was empty), the others
    // waited behind it.
    let waited: Vec<i64> = (FIRST..FIRST + N)
        .filter_map(|client| upstream_id_of(&log, client, waits))
        .collect();
    assert_eq!(waited, burst_ids[split + 1..], "{log}");
    for id in &received {
        let at = up.iter().position(|v| v["id"] == json!(id));
        let cancel = up.iter().position(|v| {
            v == &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": id, "reason": REASON}})
        });
        assert!(
            matches!((at, cancel), (Some(a), Some(c)) if a < c),
            "call {id} received without its cancel after it: {up:?}"
        );
    }
    let cancels = up
        .iter()
        .filter(|v| v["method"] == "notifications/cancelled")
        .count();
    assert_eq!(cancels, split, "one cancel per call received: {up:?}");
    let q = b.metrics_totals("upstream_queue");
    assert_eq!(
        (q["removed"], q["refused"]),
        (N as u64 - split as u64, 0),
        "{q:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `PIPE_BUFFER_BYTES` (src/transport/stdio.rs).
const PIPE_BUFFER_BYTES: usize = 256 * 1024;

/// The buffer of the pipe `fd` (`F_GETPIPE_SZ`).
fn pipe_size(fd: i32) -> usize {
    // SAFETY: fcntl on a descriptor the caller holds open.
    let size = unsafe { libc::fcntl(fd, libc::F_GETPIPE_SZ) };
    usize::try_from(size).unwrap_or_else(|_| panic!("F_GETPIPE_SZ of fd {fd}: {size}"))
}

/// The buffer of the pipe that is descriptor `fd` of process `pid` (opened through /proc,
/// which gives a new descriptor of the same pipe).
fn pipe_size_of(pid: u32, fd: i32) -> usize {
    use std::os::unix::fs::OpenOptionsExt;
    let path = format!("/proc/{pid}/fd/{fd}");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    pipe_size(std::os::fd::AsRawFd::as_raw_fd(&file))
}

/// The upstream child of the bridge `pid` (its only child, from /proc/<pid>/task/*/children).
fn only_child(pid: u32) -> u32 {
    let mut children = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("tasks")
        .flatten()
    {
        let text = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        children.extend(
            text.split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok()),
        );
    }
    assert_eq!(children.len(), 1, "children of the bridge: {children:?}");
    children[0]
}

/// Large results: the bridge asks for buffers of `PIPE_BUFFER_BYTES` on its four
/// pipes (the editor's stdin and stdout, the child's stdin and stdout), so a large message
/// crosses each with fewer wake-ups; what crosses them is unchanged.
#[test]
fn every_pipe_of_the_bridge_has_the_larger_buffer() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    let (stdin, stdout) = b.pipe_fds();
    assert_eq!(pipe_size(stdin.expect("stdin open")), PIPE_BUFFER_BYTES);
    assert_eq!(pipe_size(stdout), PIPE_BUFFER_BYTES);
    let child = only_child(b.child.id());
    assert_eq!(pipe_size_of(child, 0), PIPE_BUFFER_BYTES);
    assert_eq!(pipe_size_of(child, 1), PIPE_BUFFER_BYTES);
    // A result larger than a pipe buffer arrives whole.
    let text = "y".repeat(3 * PIPE_BUFFER_BYTES + 17);
    echo(&mut b, 2, &text);
    let r = b.recv_response(&json!(2));
    assert_eq!(r["result"]["content"][0]["text"], json!(text));
    end(&mut b);
}
