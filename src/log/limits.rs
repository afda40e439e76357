//! The rate-limited warnings of the bridge: one [`RateLimited`] per kind of warning that the
//! upstream or the editor can cause once per frame, each with its summary line. Every kind
//! belongs to one bridge ([`BridgeLimits`], created with its Supervisor, handed to its
//! Frontend, Upstream and Listener, and flushed by the Supervisor at its end), so that one
//! bridge's flood neither silences nor flushes another's (an embedded HTTP server runs one
//! bridge per session).

use std::sync::Arc;

use super::limit::RateLimited;

/// The kinds of warning of one bridge (its Frontend, its Upstream and its Listener).
#[derive(Debug)]
pub struct BridgeLimits {
    /// A line of the upstream that is not a JSON-RPC message.
    pub upstream_not_jsonrpc: Arc<RateLimited>,
    /// A line of the upstream over `--max-line-bytes`.
    pub upstream_line_too_long: Arc<RateLimited>,
    /// A request of the upstream (2026-07-28 servers send none).
    pub upstream_request: Arc<RateLimited>,
    /// The loss of a listen stream that a new stream follows (its info or warn line): a
    /// server that ends each stream right after its acknowledgment causes one per
    /// `--listen-backoff-max`.
    pub listen_lost: Arc<RateLimited>,
    /// A subscription change whose listen stream failed.
    pub change_failed: Arc<RateLimited>,
    /// A line of the editor over `--max-line-bytes`.
    pub editor_line_too_long: Arc<RateLimited>,
    /// A URL of an input request that the bridge declined.
    pub declined_url: Arc<RateLimited>,
    /// A result of the upstream that the result rules cannot shape (`shape::Unusable`).
    pub unusable_result: Arc<RateLimited>,
}

impl BridgeLimits {
    /// The limits of a new bridge: nothing counted.
    pub fn new() -> Arc<Self> {
        Arc::new(BridgeLimits {
            upstream_not_jsonrpc: Arc::new(RateLimited::new(
                |n| tracing::warn!(target: "upstream", "{n} more frames of the upstream that are not JSON-RPC messages were not logged"),
            )),
            upstream_line_too_long: Arc::new(RateLimited::new(
                |n| tracing::warn!(target: "upstream", "{n} more lines of the upstream over the limit were not logged"),
            )),
            upstream_request: Arc::new(RateLimited::new(
                |n| tracing::warn!(target: "upstream", "{n} more requests from the upstream (answered -32601, or ignored over HTTP) were not logged"),
            )),
            listen_lost: Arc::new(RateLimited::new(
                |n| tracing::info!(target: "listener", "{n} more losses of the listen stream were not logged"),
            )),
            change_failed: Arc::new(RateLimited::new(
                |n| tracing::warn!(target: "listener", "{n} more failed subscription changes were not logged"),
            )),
            editor_line_too_long: Arc::new(RateLimited::new(
                |n| tracing::warn!(target: "frontend", "{n} more lines of the client over the limit were not logged"),
            )),
            declined_url: Arc::new(RateLimited::new(
                |n| tracing::warn!(target: "input", "{n} more declined URLs of input requests were not logged"),
            )),
            unusable_result: Arc::new(RateLimited::new(
                |n| tracing::warn!(target: "translate", "{n} more results of the upstream that the bridge cannot use were not logged"),
            )),
        })
    }

    /// Writes the summary of every kind of this bridge that has warnings counted and not yet
    /// summarized (the bridge stops).
    pub fn flush(&self) {
        for kind in [
            &self.unusable_result,
            &self.editor_line_too_long,
            &self.declined_url,
            &self.upstream_not_jsonrpc,
            &self.listen_lost,
            &self.upstream_line_too_long,
            &self.upstream_request,
            &self.change_failed,
        ] {
            kind.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::limit::WARN_BURST;

    #[test]
    fn one_bridges_flood_leaves_another_bridges_warnings_logged() {
        let flooded = BridgeLimits::new();
        let quiet = BridgeLimits::new();
        for _ in 0..WARN_BURST {
            assert!(flooded.upstream_not_jsonrpc.allow_shared());
        }
        assert!(!flooded.upstream_not_jsonrpc.allow_shared());
        assert!(quiet.upstream_not_jsonrpc.allow_shared());
    }
}
