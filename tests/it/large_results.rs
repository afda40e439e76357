//! Large results through the real bridge: the child's stdout is read
//! with a spare read buffer that the next large line reuses and that is dropped
//! `SPARE_BUFFER_KEEP` (2 s) after the last one; every result still arrives byte-exact, back to
//! back, one after another, and after the spare was dropped.

use crate::common;

use common::{Bridge, text_of};
use serde_json::json;
use std::time::Duration;

const MIB: usize = 1024 * 1024;

/// The text of `large_text` of `bytes` is `bytes` times "x", nothing else.
fn assert_all_x(text: &str, bytes: usize) {
    assert_eq!(text.len(), bytes);
    assert!(text.bytes().all(|b| b == b'x'), "a byte other than x");
}

#[test]
fn large_results_arrive_exact_back_to_back_in_turn_and_after_the_spare_is_dropped() {
    let mut b = Bridge::start(&["--log-level", "debug"], &[]);
    b.initialize();
    // Two at once: the second is read while the first may still be written.
    b.send_tools_call(json!(1), "large_text", json!({"bytes": 3 * MIB}));
    b.send_tools_call(json!(2), "large_text", json!({"bytes": 2 * MIB + 1}));
    let first = b.recv_response(&json!(1));
    let second = b.recv_response(&json!(2));
    assert_all_x(&text_of(&first), 3 * MIB);
    assert_all_x(&text_of(&second), 2 * MIB + 1);
    // One after the other: read into the block the last one gave back.
    for (id, bytes) in [(3, 3 * MIB), (4, MIB + 7), (5, 4 * MIB)] {
        let r = b.tools_call(json!(id), "large_text", json!({"bytes": bytes}));
        assert_all_x(&text_of(&r), bytes);
    }
    // 2 s after the last large line the spare goes; the next large result reads into a new one.
    b.wait_stderr_within(
        "transport: debug: dropped the spare read buffer",
        Duration::from_secs(30),
    );
    let r = b.tools_call(json!(6), "large_text", json!({"bytes": 3 * MIB}));
    assert_all_x(&text_of(&r), 3 * MIB);
    assert_eq!(
        b.tools_call(json!(7), "echo", json!({"text": "small"}))["result"]["content"][0]["text"],
        "small"
    );
}
