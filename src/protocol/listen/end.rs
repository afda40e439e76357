//! How a listen stream ends, what comes after (a new stream, and when), and the log lines of
//! a loss.

use super::LISTEN_METHOD;
use crate::protocol::revisions::errors::{Cause, ErrorObject};
use crate::protocol::revisions::note::LineLevel;
use serde_json::{Value, json};
use std::time::Duration;

/// How a stream ended.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEnd {
    /// The server answered the listen request with a result.
    ServerResult,
    /// The server sent `notifications/cancelled` naming the listen request (stdio).
    ServerCancelled,
    /// The server answered the listen request with a JSON-RPC error object.
    Refused {
        /// The error object.
        error: Value,
    },
    /// The server answered with a frame the bridge cannot read.
    Invalid,
    /// No acknowledgment within the time limit.
    AckTimeout {
        /// The time limit.
        limit: Duration,
    },
    /// The upstream went away.
    Closed,
    /// The transport failed the stream alone (HTTP): an error status, no response, or the
    /// stream broke.
    Failed {
        /// The HTTP status of an error response (`None`: no response, or the stream broke).
        status: Option<u16>,
        /// Why, for the log and `data.detail`.
        detail: String,
    },
}

/// Whether a listen stream that failed with this HTTP status opens again after the wait:
/// no response at all (a broken connection or stream), 408,
/// 429 and 5xx except 501 do; 401 and 403 wait for the next sign-in; every other status stops
/// the new attempts.
pub fn http_status_retries(status: Option<u16>) -> bool {
    match status {
        None => true,
        Some(408 | 429) => true,
        Some(501) => false,
        Some(s) => (500..=599).contains(&s),
    }
}

/// A listen stream refused with 401 or 403: it waits for the next sign-in.
pub fn http_status_needs_sign_in(status: Option<u16>) -> bool {
    matches!(status, Some(401 | 403))
}

impl StreamEnd {
    /// Whether a new stream follows after the wait. A refusal, the end of the upstream and
    /// an HTTP status of [`http_status_retries`] that is not retried stop the new attempts.
    pub fn retries(&self) -> bool {
        match self {
            StreamEnd::Refused { .. } | StreamEnd::Closed => false,
            StreamEnd::Failed { status, .. } => http_status_retries(*status),
            _ => true,
        }
    }

    /// Whether only a subscription change opens a new stream after this end (a refusal, an
    /// HTTP status that is not retried).
    pub fn halts(&self) -> bool {
        match self {
            StreamEnd::Refused { .. } => true,
            StreamEnd::Failed { status, .. } => !http_status_retries(*status),
            _ => false,
        }
    }

    /// Whether only the next sign-in opens a new stream (HTTP 401/403).
    pub fn needs_sign_in(&self) -> bool {
        matches!(self, StreamEnd::Failed { status, .. } if http_status_needs_sign_in(*status))
    }

    /// Whether the server itself ended the stream (an info line, not a warning).
    pub fn by_server(&self) -> bool {
        matches!(self, StreamEnd::ServerResult | StreamEnd::ServerCancelled)
    }

    /// A short text for the log, without any content of a message.
    pub fn describe(&self) -> String {
        match self {
            StreamEnd::ServerResult => "the upstream server answered the listen request".into(),
            StreamEnd::ServerCancelled => "the upstream server cancelled the listen request".into(),
            StreamEnd::Refused { error } => {
                let (code, message) = error_parts(error);
                format!("the upstream server refused it with the error {code}: {message}")
            }
            StreamEnd::Invalid => "the upstream server sent an invalid response".into(),
            StreamEnd::AckTimeout { limit } => {
                format!("no acknowledgment within {}", seconds(*limit))
            }
            StreamEnd::Closed => "the upstream server exited".into(),
            StreamEnd::Failed { detail, .. } => detail.clone(),
        }
    }

    /// The error for the editor when the stream of a subscription change ends before its
    /// acknowledgment: the upstream error as it came, else an error of the table.
    pub fn change_error(&self) -> ErrorObject {
        match self {
            StreamEnd::Refused { error } => {
                crate::protocol::revisions::errors::relay_upstream_error(error)
            }
            StreamEnd::AckTimeout { limit } => Cause::Timeout.error(Some(json!({
                "method": LISTEN_METHOD, "timeoutSeconds": limit.as_secs_f64()
            }))),
            StreamEnd::Closed => Cause::UpstreamExited.error(None),
            StreamEnd::Failed { detail, .. } => Cause::TransportFailed.error(Some(json!(detail))),
            StreamEnd::ServerResult | StreamEnd::ServerCancelled | StreamEnd::Invalid => {
                Cause::InvalidResponse.error(Some(json!(
                    "the listen stream ended before its acknowledgment"
                )))
            }
        }
    }
}

pub(crate) fn error_parts(error: &Value) -> (String, String) {
    let code = error
        .get("code")
        .and_then(Value::as_i64)
        .map_or_else(|| "?".to_string(), |c| c.to_string());
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("(no message)")
        .to_string();
    (code, message)
}

/// A duration as the log writes it: `0.5 s`, `2 s`, `30 s`.
pub fn seconds(d: Duration) -> String {
    format!("{} s", d.as_millis() as f64 / 1000.0)
}

/// The log line after the loss of a stream that was not a subscription change; `wait` is the
/// wait before the new stream when one follows.
pub fn loss_line(end: &StreamEnd, wait: Option<Duration>) -> (LineLevel, String) {
    let next = wait.map_or_else(String::new, |w| {
        format!(" A new stream follows in {}.", seconds(w))
    });
    match end {
        StreamEnd::Refused { error } => {
            let (code, message) = error_parts(error);
            (
                LineLevel::Warn,
                format!(
                    "the upstream server refused the listen stream with the error {code}: {message}. The bridge sends no more list changes."
                ),
            )
        }
        StreamEnd::Closed => (
            LineLevel::Debug,
            "the listen stream ended with the upstream server".into(),
        ),
        StreamEnd::Failed { status, detail } if http_status_needs_sign_in(*status) => (
            LineLevel::Warn,
            format!(
                "the upstream server refused the listen stream ({detail}): it needs a sign-in. A new stream follows after the next sign-in."
            ),
        ),
        StreamEnd::Failed { detail, .. } if wait.is_none() => (
            LineLevel::Warn,
            format!(
                "the upstream server refused the listen stream ({detail}). The bridge sends no more list changes."
            ),
        ),
        e if e.by_server() => (
            LineLevel::Info,
            format!("the upstream server ended the listen stream.{next}"),
        ),
        e => (
            LineLevel::Warn,
            format!("the listen stream ended: {}.{next}", e.describe()),
        ),
    }
}

/// The log line after the stream of a subscription change failed before its acknowledgment.
pub fn change_failed_line(end: &StreamEnd) -> String {
    format!(
        "the listen stream for a change of the subscriptions failed: {}",
        end.describe()
    )
}
