//! The answer to one upstream request, and the editor's reason for cancelling one. The answer
//! travels in messages to the Frontend as well
//! ([`FromUpstream::ListenEnded`](crate::actors::frontend::messages::FromUpstream)), the reason
//! in `Call`, so they live in this file, which imports no actor.

use crate::protocol::wire::raw::RawResult;
use serde_json::Value;
use std::sync::{Arc, OnceLock};

use crate::transport::upstream::RequestFailure;

/// The answer to one upstream request.
#[derive(Debug)]
pub enum UpstreamReply {
    /// A JSON-RPC result: an object's members as raw slices of the upstream's line (see
    /// [`crate::protocol::wire::raw`]), or the text of any other value.
    Result(RawResult),
    /// A JSON-RPC error object.
    Error(Value),
    /// The upstream went away before answering.
    Closed,
    /// The upstream answered with a frame the bridge cannot read; the detail for the editor,
    /// when there is one to give (a line over `--max-line-bytes` names the limit).
    Invalid(Option<String>),
    /// The queue toward the upstream was full: the request was not sent.
    Busy,
    /// The request failed in the transport alone (HTTP: an error status, a broken stream, a
    /// limit); the upstream goes on.
    Failed(RequestFailure),
}

impl UpstreamReply {
    /// A transport failure whose response body was a JSON-RPC error is that error (HTTP 404 +
    /// -32601, 400 + -32020 pass through to the editor as the upstream's error); the rest
    /// unchanged.
    pub fn passed_through(self) -> UpstreamReply {
        match self {
            UpstreamReply::Failed(RequestFailure {
                error: Some(error), ..
            }) => UpstreamReply::Error(error),
            other => other,
        }
    }

    /// The outcome word of the exchange log line.
    pub(crate) fn outcome(&self) -> &'static str {
        match self {
            UpstreamReply::Result(_) => "result",
            UpstreamReply::Error(_) => "error",
            UpstreamReply::Closed => "closed",
            UpstreamReply::Invalid(_) => "invalid",
            UpstreamReply::Busy => "busy",
            UpstreamReply::Failed(_) => "failed",
        }
    }
}

/// The editor's `reason` for cancelling a request (2025-11-25 `notifications/cancelled`): the
/// Frontend sets it just before it drops the slot's future, and the cancel of the upstream
/// request (the dropped `Answer` of its `Call`, which carries this cell) reads it, so the
/// upstream gets the editor's reason unchanged. Shared, because a dropped future cannot be
/// told anything.
#[derive(Clone, Debug, Default)]
pub struct CancelReason(Arc<OnceLock<String>>);

impl CancelReason {
    /// Records the editor's reason (the first one counts).
    pub fn set(&self, reason: String) {
        let _ = self.0.set(reason);
    }

    /// The editor's reason, if it cancelled with one.
    pub fn get(&self) -> Option<String> {
        self.0.get().cloned()
    }
}
