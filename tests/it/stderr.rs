//! The bridge's stderr: a stderr nobody reads never blocks the JSON-RPC path (lines are
//! dropped and counted in the metrics totals), and the warnings a peer causes once per frame
//! are rate-limited (the first `WARN_BURST`, then one summary per `WARN_SUMMARY_INTERVAL`).

use crate::common;

use common::{Bridge, RECV_TIMEOUT, TOTALS_PREFIX, text_of};
use mcp_bridge::log::limit::{WARN_BURST, WARN_SUMMARY_INTERVAL};
use mcp_bridge::protocol::wire::excerpt::EXCERPT_BYTES;
use mcp_bridge::protocol::wire::framing::TOO_LONG_HEAD_BYTES;
use mcp_bridge::transport::child::MAX_STDERR_LINE_BYTES;
use serde_json::json;
use std::time::{Duration, Instant};

const FLOOD: u64 = 100_000;
const NOT_JSONRPC: &str =
    "mcp-bridge: upstream: warn: the upstream sent a frame that is not a JSON-RPC message";
const NOT_JSONRPC_SUMMARY: &str =
    " more frames of the upstream that are not JSON-RPC messages were not logged";

/// The counts of the summary lines `mcp-bridge: <scope>: warn: N<text>`.
fn summaries(stderr: &str, scope: &str, text: &str) -> Vec<u64> {
    let prefix = format!("mcp-bridge: {scope}: warn: ");
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix)?.strip_suffix(text)?.parse().ok())
        .collect()
}

/// Most summary lines of one kind in `elapsed`: one per interval begun, and the one at exit.
fn most_summaries(elapsed: Duration) -> usize {
    (elapsed.as_secs_f64() / WARN_SUMMARY_INTERVAL.as_secs_f64()).floor() as usize + 1
}

/// How long the test waits for the upstream's stderr backlog to drain, and for the answer
/// behind `FLOOD` bad frames: the debug build on a busy machine took 13 s for the frames
/// alone (load 5.6, 2026-12-01), near [`RECV_TIMEOUT`], so these waits are longer.
const STDERR_BACKLOG_WAIT: Duration = Duration::from_secs(120);

fn flood(b: &mut Bridge, id: i64, count: u64, stderr_count: u64, tag: &str) {
    b.send_request(
        json!(id),
        "tools/call",
        json!({"name": "garbage_flood",
               "arguments": {"count": count, "stderr_count": stderr_count, "tag": tag}}),
    );
    let r = b.recv_response_within(&json!(id), STDERR_BACKLOG_WAIT);
    assert_eq!(text_of(&r), "flooded", "{r}");
}

/// How long one end line may take to reach the bridge's stderr before another is sent.
const END_LINE_WAIT: Duration = Duration::from_secs(2);

/// Has the upstream write one stderr line (`fixture stderr end<k> 1`) after all it wrote
/// before, and again, until one reaches the bridge's stderr; returns how many were sent (ids
/// from `first_id`). Once the editor reads stderr again, the bridge's queue takes lines as
/// soon as its writer has written some of what it held; a line that comes before that finds
/// the queue full and is dropped (and counted), which on a busy machine happened to the first.
fn end_lines_until_one_arrives(b: &mut Bridge, first_id: i64) -> u64 {
    // Behind the 100,000 lines of the upstream's stderr: on a busy machine the debug build
    // took over 15 s to drain them (seen once in scripts/stress-tests), so the wait is longer.
    let end = Instant::now() + STDERR_BACKLOG_WAIT;
    let mut k = 0;
    loop {
        let tag = format!("end{k}");
        flood(b, first_id + k, 0, 1, &tag);
        let line = format!("fixture stderr {tag} 1\n");
        let wait = Instant::now() + END_LINE_WAIT;
        while Instant::now() < wait {
            if b.stderr_text().contains(&line) {
                return k as u64 + 1;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            Instant::now() < end,
            "no end line reached stderr; stderr:\n{}",
            b.stderr_text()
        );
        k += 1;
    }
}

#[test]
fn a_stderr_nobody_reads_blocks_neither_ping_nor_a_tool_call() {
    let mut b = Bridge::start_stderr_unread(&["--log-level", "debug"], &[]);
    let started = Instant::now();
    b.initialize();
    // 100,000 lines that are not JSON-RPC on the upstream's stdout and 100,000 lines (2 MB)
    // on its stderr, while nothing reads the bridge's stderr (a pipe of 64 KiB).
    flood(&mut b, 1, FLOOD, FLOOD, "flood");
    assert_eq!(b.request(json!(2), "ping", json!({}))["result"], json!({}));
    let r = b.tools_call(json!(3), "echo", json!({"text": "still here"}));
    assert_eq!(text_of(&r), "still here");
    // Read stderr again; one more upstream line, after every flood line, shows when the relay
    // has handled them all.
    b.resume_stderr();
    let ends = end_lines_until_one_arrives(&mut b, 4);
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
    let elapsed = started.elapsed();
    let stderr = b.stderr_to_the_end();
    let totals = b.metrics_totals("stderr");
    let lines: Vec<&str> = stderr.lines().collect();
    let totals_at = lines
        .iter()
        .position(|l| l.starts_with(TOTALS_PREFIX))
        .expect("the totals line");
    // Every line taken into the queue before the totals line is written before it.
    assert_eq!(totals["lines"], totals_at as u64, "{totals:?}");
    // Each flood line of the upstream is written whole and in order, or dropped and counted.
    let seen: Vec<u64> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("fixture stderr flood ")?.parse().ok())
        .collect();
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "flood lines out of order"
    );
    let ends_seen = lines
        .iter()
        .filter(|l| l.starts_with("fixture stderr end"))
        .count() as u64;
    assert!(ends_seen >= 1, "the line that ended the wait");
    // The end lines that found the queue still full were dropped and counted too.
    let dropped = totals["upstream_dropped_lines"];
    assert_eq!(
        seen.len() as u64 + dropped,
        FLOOD + ends - ends_seen,
        "{totals:?}"
    );
    assert!(
        dropped > 0,
        "2 MB went through a stderr nobody read: {totals:?}"
    );
    assert!(totals["dropped_lines"] >= dropped, "{totals:?}");
    // The upstream's lines taken: the flood lines and the end lines seen.
    assert_eq!(
        totals["upstream_lines"],
        seen.len() as u64 + ends_seen,
        "{totals:?}"
    );
    // The warnings of the 100,000 bad frames: at most the burst and the summaries.
    let warnings = lines.iter().filter(|l| l.starts_with(NOT_JSONRPC)).count();
    assert!(warnings <= WARN_BURST as usize, "{warnings} warnings");
    let sums = summaries(&stderr, "upstream", NOT_JSONRPC_SUMMARY);
    assert!(
        sums.len() <= most_summaries(elapsed),
        "{sums:?} in {elapsed:?}"
    );
    assert!(warnings as u64 + sums.iter().sum::<u64>() <= FLOOD);
}

#[test]
fn the_upstreams_bad_frames_give_the_burst_then_summaries_with_exact_counts() {
    let mut b = Bridge::start(&["--log-level", "debug"], &[]);
    let started = Instant::now();
    b.initialize();
    flood(&mut b, 1, FLOOD, 0, "");
    assert_eq!(b.request(json!(2), "ping", json!({}))["result"], json!({}));
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
    let elapsed = started.elapsed();
    let stderr = b.stderr_to_the_end();
    // Each quotes its line.
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with(NOT_JSONRPC))
        .collect();
    let expected: Vec<String> = (1..=WARN_BURST)
        .map(|n| format!("{NOT_JSONRPC}: \"not json {n}\""))
        .collect();
    assert_eq!(warnings, expected, "stderr:\n{stderr}");
    let sums = summaries(&stderr, "upstream", NOT_JSONRPC_SUMMARY);
    assert!(
        !sums.is_empty() && sums.len() <= most_summaries(elapsed),
        "{sums:?} in {elapsed:?}"
    );
    assert_eq!(sums.iter().sum::<u64>(), FLOOD - WARN_BURST as u64);
    let totals = b.metrics_totals("stderr");
    assert_eq!(totals["dropped_lines"], 0, "{totals:?}");
    assert_eq!(totals["upstream_dropped_lines"], 0, "{totals:?}");
}

/// A server that prints its log on stdout can be spotted: the warning quotes the line, its
/// first `EXCERPT_BYTES` bytes, with control characters escaped so that they cannot garble the
/// terminal (invalid UTF-8 too: `protocol::wire::excerpt`'s unit test, JSON cannot carry it here).
#[test]
fn a_frame_that_is_not_json_rpc_is_quoted_escaped_and_cut_in_its_warning() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    let long = format!("[INFO] {}", "x".repeat(300));
    let r = b.tools_call(
        json!(1),
        "emit",
        json!({"lines": ["2026-12-01 \u{1b}[31mERROR\u{1b}[0m\tstarting \"db\"", long]}),
    );
    assert_eq!(text_of(&r), "emitted");
    b.wait_stderr(&format!(
        "{NOT_JSONRPC}: \"2026-12-01 \\u{{1b}}[31mERROR\\u{{1b}}[0m\\tstarting \\\"db\\\"\"\n"
    ));
    b.wait_stderr(&format!(
        "{NOT_JSONRPC}: \"[INFO] {}\"… (307 bytes)\n",
        "x".repeat(EXCERPT_BYTES - "[INFO] ".len())
    ));
}

/// A child's stderr line over 64 KiB (`MAX_STDERR_LINE_BYTES`) comes out as its first
/// `TOO_LONG_HEAD_BYTES` bytes and a marker with its length; the next line is whole.
#[test]
fn a_child_stderr_line_over_the_limit_is_cut_with_a_marker() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    let tag = "y".repeat(70_000);
    flood(&mut b, 1, 0, 1, &tag);
    flood(&mut b, 2, 0, 1, "short");
    let line = format!("fixture stderr {tag} 1");
    let head = &line[..TOO_LONG_HEAD_BYTES];
    b.wait_stderr("fixture stderr short 1\n");
    let stderr = b.stderr_text();
    let relayed: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("fixture stderr "))
        .collect();
    assert_eq!(
        relayed,
        [
            format!("{head}… ({} bytes, cut)", line.len()).as_str(),
            "fixture stderr short 1"
        ]
    );
    assert_eq!(line.len(), 70_017);
    assert!(line.len() > MAX_STDERR_LINE_BYTES);
}

#[test]
fn the_editors_long_lines_give_the_burst_then_summaries_with_exact_counts() {
    const LINES: u64 = 1000;
    let mut b = Bridge::start(&["--max-line-bytes", "100"], &[]);
    let started = Instant::now();
    let pad = "p".repeat(200);
    for id in 0..LINES {
        b.send_raw(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":\"r{id:04}\",\"method\":\"ping\",\"params\":{{\"pad\":\"{pad}\"}}}}\n")
                .as_bytes(),
        );
    }
    for id in 0..LINES {
        let r = b.recv_response(&json!(format!("r{id:04}")));
        assert_eq!(r["error"]["data"]["cause"], "line_too_long", "{r}");
    }
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
    let elapsed = started.elapsed();
    let stderr = b.stderr_to_the_end();
    let warning = "mcp-bridge: frontend: warn: a line of 266 bytes is over the limit of 100 bytes";
    let warnings = stderr.lines().filter(|l| *l == warning).count();
    assert_eq!(warnings, WARN_BURST as usize, "stderr:\n{stderr}");
    let sums = summaries(
        &stderr,
        "frontend",
        " more lines of the client over the limit were not logged",
    );
    assert!(
        !sums.is_empty() && sums.len() <= most_summaries(elapsed),
        "{sums:?} in {elapsed:?}"
    );
    assert_eq!(sums.iter().sum::<u64>(), LINES - WARN_BURST as u64);
}
