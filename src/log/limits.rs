//! The rate-limited warnings of the bridge: one [`RateLimited`] per kind of warning that the
//! upstream or the editor can cause once per frame, each with its summary line. Statics: the
//! process serves one editor (an embedded bridge shares them with the others in its process).

use super::limit::RateLimited;

/// A line of the upstream that is not a JSON-RPC message.
pub static UPSTREAM_NOT_JSONRPC: RateLimited = RateLimited::new(
    |n| tracing::warn!(target: "upstream", "{n} more frames of the upstream that are not JSON-RPC messages were not logged"),
);
/// A line of the upstream over `--max-line-bytes`.
pub static UPSTREAM_LINE_TOO_LONG: RateLimited = RateLimited::new(
    |n| tracing::warn!(target: "upstream", "{n} more lines of the upstream over the limit were not logged"),
);
/// A request of the upstream (2026-07-28 servers send none).
pub static UPSTREAM_REQUEST: RateLimited = RateLimited::new(
    |n| tracing::warn!(target: "upstream", "{n} more requests from the upstream (answered -32601, or ignored over HTTP) were not logged"),
);
/// A line of the editor over `--max-line-bytes`.
pub static EDITOR_LINE_TOO_LONG: RateLimited = RateLimited::new(
    |n| tracing::warn!(target: "frontend", "{n} more lines of the client over the limit were not logged"),
);
/// A URL of an input request that the bridge declined.
pub static DECLINED_URL: RateLimited = RateLimited::new(
    |n| tracing::warn!(target: "input", "{n} more declined URLs of input requests were not logged"),
);
/// A subscription change whose listen stream failed.
pub static CHANGE_FAILED: RateLimited = RateLimited::new(
    |n| tracing::warn!(target: "listener", "{n} more failed subscription changes were not logged"),
);

/// A result of the upstream that the result rules cannot shape (`shape::Unusable`).
pub static UNUSABLE_RESULT: RateLimited = RateLimited::new(
    |n| tracing::warn!(target: "translate", "{n} more results of the upstream that the bridge cannot use were not logged"),
);

/// The loss of a listen stream that a new stream follows (its info or warn line): a server
/// that ends each stream right after its acknowledgment causes one per
/// `--listen-backoff-max`.
pub static LISTEN_LOST: RateLimited = RateLimited::new(
    |n| tracing::info!(target: "listener", "{n} more losses of the listen stream were not logged"),
);

/// Every kind, for [`flush_all`].
const ALL: [&RateLimited; 8] = [
    &UPSTREAM_NOT_JSONRPC,
    &UNUSABLE_RESULT,
    &LISTEN_LOST,
    &UPSTREAM_LINE_TOO_LONG,
    &UPSTREAM_REQUEST,
    &EDITOR_LINE_TOO_LONG,
    &DECLINED_URL,
    &CHANGE_FAILED,
];

/// Writes the summary of every kind that has warnings counted and not yet summarized.
pub fn flush_all() {
    for kind in ALL {
        kind.flush();
    }
}
