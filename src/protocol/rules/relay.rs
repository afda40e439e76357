//! The request-scoped notifications of the upstream on their way to the editor: progress,
//! whose token goes back to the editor's own, and log messages, filtered by the level of
//! `logging/setLevel`. Pure: the caller owns the routes from tokens to requests, the slots
//! and the rate limits.

use crate::protocol::revisions::log_level::LogLevel;
use crate::protocol::revisions::methods;
use crate::protocol::wire::jsonrpc;
use serde_json::{Map, Value};

/// The prefix of the progress tokens the bridge sends upstream in place of the editor's.
pub const UPSTREAM_PROGRESS_TOKEN_PREFIX: &str = "bp-";

/// The progress token the bridge sends upstream for its `n`-th forwarded request (`bp-<n>`):
/// a string, unique per connection, so a progress notification names one request of the
/// editor whatever token the editor chose.
pub fn upstream_progress_token(n: u64) -> String {
    format!("{UPSTREAM_PROGRESS_TOKEN_PREFIX}{n}")
}

/// The upstream token of `notifications/progress` params; `None` when it is not a string
/// (the bridge only sends string tokens, so no request of the bridge has another one).
pub fn progress_token(params: &Value) -> Option<&str> {
    params.get("progressToken").and_then(Value::as_str)
}

/// The editor's `notifications/progress` frame for the upstream's params (2025-11-25
/// `ProgressNotificationParams`): `progressToken` is the editor's token, `progress`, `total`
/// and `message` are copied when present, nothing else goes along (no `_meta`). `None` when
/// `progress` is missing or not a number.
pub fn progress_for_editor(params: &Value, editor_token: Value) -> Option<Value> {
    if !params.get("progress").is_some_and(Value::is_number) {
        return None;
    }
    let mut p = Map::new();
    p.insert("progressToken".into(), editor_token);
    for k in ["progress", "total", "message"] {
        if let Some(v) = params.get(k) {
            p.insert(k.into(), v.clone());
        }
    }
    Some(jsonrpc::notification(methods::PROGRESS, Value::Object(p)))
}

/// Why a log message of the upstream does not reach the editor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LogDropped {
    /// `level` is missing or not a logging level.
    #[error("the log message has no valid level")]
    NoLevel,
    /// The level is below the editor's `logging/setLevel`.
    #[error("the log message is below the level the client set")]
    BelowLevel,
}

/// The editor's `notifications/message` frame for the upstream's params (2025-11-25
/// `LoggingMessageNotificationParams`): `level`, `logger` when it is a string, and `data`
/// (`null` when absent); nothing else goes along. Errors: [`LogDropped::NoLevel`],
/// [`LogDropped::BelowLevel`] when `min` (the editor's level) is more severe.
pub fn log_for_editor(params: &Value, min: Option<LogLevel>) -> Result<Value, LogDropped> {
    let level = params
        .get("level")
        .and_then(Value::as_str)
        .and_then(LogLevel::parse)
        .ok_or(LogDropped::NoLevel)?;
    if min.is_some_and(|min| level < min) {
        return Err(LogDropped::BelowLevel);
    }
    let mut p = Map::new();
    p.insert("level".into(), level.as_str().into());
    if let Some(l) = params.get("logger").filter(|l| l.is_string()) {
        p.insert("logger".into(), l.clone());
    }
    p.insert(
        "data".into(),
        params.get("data").cloned().unwrap_or(Value::Null),
    );
    Ok(jsonrpc::notification(methods::MESSAGE, Value::Object(p)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn upstream_tokens_are_numbered_strings() {
        assert_eq!(upstream_progress_token(1), "bp-1");
        assert_eq!(upstream_progress_token(u64::MAX), "bp-18446744073709551615");
        assert_eq!(
            progress_token(&json!({"progressToken": "bp-3"})),
            Some("bp-3")
        );
        assert_eq!(progress_token(&json!({"progressToken": 3})), None);
        assert_eq!(progress_token(&json!({})), None);
    }

    #[test]
    fn progress_goes_back_to_the_editor_token() {
        let table = [
            (
                json!({"progressToken": "bp-1", "progress": 1, "total": 10, "message": "m",
                       "_meta": {"k": 1}, "extra": true}),
                json!("editor-token"),
                Some(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": "editor-token", "progress": 1, "total": 10, "message": "m"}})),
            ),
            (
                json!({"progressToken": "bp-1", "progress": 0.5}),
                json!(7),
                Some(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": 7, "progress": 0.5}})),
            ),
            (json!({"progressToken": "bp-1"}), json!(7), None),
            (
                json!({"progressToken": "bp-1", "progress": "1"}),
                json!(7),
                None,
            ),
            (
                json!({"progressToken": "bp-1", "progress": null}),
                json!(7),
                None,
            ),
        ];
        for (params, token, want) in table {
            assert_eq!(progress_for_editor(&params, token), want, "{params}");
        }
    }

    #[test]
    fn log_messages_are_filtered_by_level_and_reshaped() {
        let frame = |params: Value| json!({"jsonrpc": "2.0", "method": "notifications/message", "params": params});
        let table = [
            (
                json!({"level": "error", "logger": "db", "data": {"x": 1}, "_meta": {}}),
                None,
                Ok(frame(
                    json!({"level": "error", "logger": "db", "data": {"x": 1}}),
                )),
            ),
            (
                json!({"level": "info", "logger": 3}),
                Some(LogLevel::Info),
                Ok(frame(json!({"level": "info", "data": null}))),
            ),
            (
                json!({"level": "debug", "data": "d"}),
                Some(LogLevel::Info),
                Err(LogDropped::BelowLevel),
            ),
            (
                json!({"level": "emergency", "data": "d"}),
                Some(LogLevel::Alert),
                Ok(frame(json!({"level": "emergency", "data": "d"}))),
            ),
            (
                json!({"level": "loud", "data": "d"}),
                None,
                Err(LogDropped::NoLevel),
            ),
            (json!({"level": 3}), None, Err(LogDropped::NoLevel)),
            (json!({"data": "d"}), None, Err(LogDropped::NoLevel)),
        ];
        for (params, min, want) in table {
            assert_eq!(log_for_editor(&params, min), want, "{params} {min:?}");
        }
    }
}
