//! The answer to one upstream request. It travels in messages to the Frontend as well
//! ([`FromUpstream::ListenEnded`](crate::actors::frontend::messages::FromUpstream)), so it
//! lives in this file, which imports no actor.

use serde_json::Value;

/// The answer to one upstream request.
#[derive(Debug)]
pub enum Reply {
    /// A JSON-RPC result.
    Result(Value),
    /// A JSON-RPC error object.
    Error(Value),
    /// The upstream went away before answering.
    Closed,
    /// The upstream answered with a frame the bridge cannot read.
    Invalid,
    /// The queue toward the upstream was full: the request was not sent.
    Busy,
}

impl Reply {
    /// The outcome word of the exchange log line.
    pub(crate) fn outcome(&self) -> &'static str {
        match self {
            Reply::Result(_) => "result",
            Reply::Error(_) => "error",
            Reply::Closed => "closed",
            Reply::Invalid => "invalid",
            Reply::Busy => "busy",
        }
    }
}
