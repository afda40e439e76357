//! The DAP messages `mcp-dap` reads and sends, as serde types. Only the fields it uses are
//! named; every other field is ignored, and an unknown message `type` or event passes
//! ([`Incoming::Unknown`], [`Event`] with any name), because the DAP specification adds
//! fields and events between versions and adapters add their own (debugpy's
//! `debugpyWaitingForServer`, for one).
//!
//! The crates.io `dap` crate (dap-rs) is written for the adapter's side: it reads requests and
//! writes responses and events. A client needs the opposite direction, so these few types are
//! the crate's own.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A message from the adapter, by its `type` (DAP "ProtocolMessage").
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Incoming {
    /// The answer to one of our requests.
    Response(Response),
    /// An event.
    Event(Event),
    /// A reverse request of the adapter (`runInTerminal`, `startDebugging`).
    Request(ReverseRequest),
    /// Any other `type`.
    #[serde(other)]
    Unknown,
}

/// DAP "Response": `request_seq` names the request it answers.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    /// The `seq` of the request.
    #[serde(rename = "request_seq")]
    pub request_seq: i64,
    /// Whether the request succeeded.
    pub success: bool,
    /// The request's command.
    #[serde(default)]
    pub command: String,
    /// The error text of a failed request (or a short code such as `cancelled`).
    #[serde(default)]
    pub message: Option<String>,
    /// The result, or for a failure possibly an `error` with a `format`.
    #[serde(default)]
    pub body: Option<Value>,
}

impl Response {
    /// The adapter's words for a failed request: `body.error.format` when given (DAP
    /// "ErrorResponse"), else `message`, else a generic text.
    pub fn error_text(&self) -> String {
        if let Some(format) = self
            .body
            .as_ref()
            .and_then(|b| b.get("error"))
            .and_then(|e| e.get("format"))
            .and_then(Value::as_str)
        {
            return format.to_owned();
        }
        self.message
            .clone()
            .unwrap_or_else(|| format!("the adapter refused {}", self.command))
    }
}

/// DAP "Event".
#[derive(Debug, Deserialize)]
pub struct Event {
    /// The event's name.
    pub event: String,
    /// Its body.
    #[serde(default)]
    pub body: Option<Value>,
}

/// A request of the adapter to the client (DAP "Reverse Requests").
#[derive(Debug, Deserialize)]
pub struct ReverseRequest {
    /// Its `seq`, which the response names.
    pub seq: i64,
    /// Its command.
    pub command: String,
    /// Its arguments (`startDebugging`'s `request` and `configuration`).
    #[serde(default)]
    pub arguments: Option<Value>,
}

/// The body of a `stopped` event.
#[derive(Debug, Default, Deserialize, Serialize, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct StoppedBody {
    /// `step`, `breakpoint`, `exception`, `pause`, `entry`, ...
    #[serde(default)]
    pub reason: String,
    /// The thread that stopped.
    #[serde(default)]
    pub thread_id: Option<i64>,
    /// Text for the user.
    #[serde(default)]
    pub description: Option<String>,
    /// More text (an exception's message).
    #[serde(default)]
    pub text: Option<String>,
    /// Whether every thread stopped, not only `thread_id`.
    #[serde(default)]
    pub all_threads_stopped: bool,
}

/// The body of a `continued` event.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContinuedBody {
    /// The thread that continued.
    #[serde(default)]
    pub thread_id: Option<i64>,
    /// Whether every thread continued; omitted or false: only `thread_id` (DAP
    /// ContinuedEvent).
    #[serde(default)]
    pub all_threads_continued: bool,
}

/// The body of an `output` event.
#[derive(Debug, Deserialize)]
pub struct OutputBody {
    /// `console`, `stdout`, `stderr`, `telemetry`, ...
    #[serde(default)]
    pub category: Option<String>,
    /// The text.
    #[serde(default)]
    pub output: String,
}

/// The body of an `exited` event.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExitedBody {
    /// The debuggee's exit code.
    pub exit_code: i64,
}

/// One frame of a `stackTrace` response.
#[derive(Debug, Deserialize)]
pub struct StackFrame {
    /// The frame's id, for `scopes` and `evaluate`.
    pub id: i64,
    /// The function's name.
    #[serde(default)]
    pub name: String,
    /// The source file.
    #[serde(default)]
    pub source: Option<Source>,
    /// The line (1-based: the client's `initialize` says `linesStartAt1`).
    #[serde(default)]
    pub line: i64,
}

/// A source of a stack frame.
#[derive(Debug, Deserialize)]
pub struct Source {
    /// Its path on disk, if it has one.
    #[serde(default)]
    pub path: Option<String>,
}

/// One variable of a `variables` response.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// Its value as text.
    #[serde(default)]
    pub value: String,
    /// Its type, where the adapter gives one.
    #[serde(default, rename = "type")]
    pub type_name: Option<String>,
    /// Non-zero when it has children.
    #[serde(default)]
    pub variables_reference: i64,
    /// How many named children it has, where the adapter says.
    #[serde(default)]
    pub named_variables: Option<i64>,
    /// How many indexed children it has, where the adapter says.
    #[serde(default)]
    pub indexed_variables: Option<i64>,
}

/// One scope of a `scopes` response.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    /// Its name (`Locals`, `Globals`).
    pub name: String,
    /// The reference for `variables`.
    pub variables_reference: i64,
    /// How many named children it has, where the adapter says.
    #[serde(default)]
    pub named_variables: Option<i64>,
    /// How many indexed children it has, where the adapter says.
    #[serde(default)]
    pub indexed_variables: Option<i64>,
    /// Whether reading it is expensive (the adapter's hint: a client reads it on demand).
    #[serde(default)]
    pub expensive: bool,
}

/// A request to the adapter as its JSON body.
pub fn request(seq: i64, command: &str, arguments: Option<Value>) -> Value {
    let mut message = json!({"seq": seq, "type": "request", "command": command});
    if let Some(arguments) = arguments {
        message["arguments"] = arguments;
    }
    message
}

/// The answer `success: false` to a reverse request, with `message` (DAP ErrorResponse:
/// the adapter shows it, or acts on the failure).
pub fn refusal(seq: i64, request: &ReverseRequest, message: &str) -> Value {
    json!({"seq": seq, "type": "response", "request_seq": request.seq, "success": false,
        "command": request.command, "message": message})
}

/// The response of a reverse request the client carried out: `success: true`, no body.
pub fn acceptance(seq: i64, request: &ReverseRequest) -> Value {
    json!({"seq": seq, "type": "response", "request_seq": request.seq, "success": true,
        "command": request.command})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_response_gives_the_adapters_words() {
        let response: Response = serde_json::from_value(json!({"request_seq": 3,
            "success": false, "command": "evaluate", "message": "x",
            "body": {"error": {"id": 1, "format": "name 'y' is not defined"}}}))
        .expect("a response");
        assert_eq!(response.error_text(), "name 'y' is not defined");
        let response: Response = serde_json::from_value(json!({"request_seq": 3,
            "success": false, "command": "next"}))
        .expect("a response");
        assert_eq!(response.error_text(), "the adapter refused next");
    }

    #[test]
    fn a_stopped_body_with_unknown_fields_reads() {
        let body: StoppedBody = serde_json::from_value(json!({"reason": "breakpoint",
            "threadId": 1, "allThreadsStopped": true, "hitBreakpointIds": [1]}))
        .expect("a stopped body");
        assert_eq!(
            (body.reason.as_str(), body.thread_id),
            ("breakpoint", Some(1))
        );
    }
}
