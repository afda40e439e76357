//! The pass-through mode (a legacy upstream, `era::Era::Legacy`): each message of either side
//! is read into a JSON value once, kept as it is (ids, members and their order, numbers as
//! written: `preserve_order` and `arbitrary_precision`), and classified by reference, so the
//! bridge knows what it must still answer itself (the requests of the editor in flight)
//! without rebuilding the message.

use serde_json::Value;

use crate::protocol::revisions::methods;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc::{self, ParseError};

/// Whether a notification of the upstream may be dropped when the queue toward the editor is
/// over its notification bound: progress and log messages (as in the translating mode);
/// everything else (list changes, resource updates, cancellations, ...) is never dropped.
pub fn droppable(method: &str) -> bool {
    matches!(method, methods::PROGRESS | methods::MESSAGE)
}

/// What one message is, read without taking it apart (the rules of [`jsonrpc::classify`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MessageKind {
    /// A request, with its id.
    Request(Id),
    /// A notification, with its method.
    Notification(String),
    /// A response or an error response, with its id (`None` when it is `null` or unusable).
    Response(Option<Id>),
}

/// One line into a JSON value with the bridge's limits (depth check first, then the parser;
/// an unpaired surrogate escape is repaired as [`jsonrpc::parse`] does), and what it is.
///
/// Errors: the [`ParseError`] of [`jsonrpc::parse`] for the same line.
pub fn read(line: &[u8], max_depth: usize) -> Result<(Value, MessageKind), ParseError> {
    let value = jsonrpc::parse_value_bounded(line, max_depth)?;
    let kind = kind(&value)?;
    Ok((value, kind))
}

/// What a JSON value is as a JSON-RPC 2.0 message ([`jsonrpc::classify`]'s rules, by
/// reference). Errors: [`ParseError::Shape`] with the id when it is not one.
pub fn kind(value: &Value) -> Result<MessageKind, ParseError> {
    let Value::Object(obj) = value else {
        return Err(ParseError::Shape { id: None });
    };
    let raw_id = obj.get("id");
    let id = raw_id.and_then(Id::from_value);
    let shape = || Err(ParseError::Shape { id: id.clone() });
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return shape();
    }
    let params = obj.get("params");
    if params.is_some_and(|p| !(p.is_object() || p.is_array())) {
        return shape();
    }
    match obj.get("method") {
        Some(Value::String(method)) => {
            if obj.contains_key("result") || obj.contains_key("error") {
                return shape();
            }
            match (raw_id, &id) {
                (None, _) => Ok(MessageKind::Notification(method.clone())),
                (Some(_), Some(id)) => Ok(MessageKind::Request(id.clone())),
                (Some(_), None) => Err(ParseError::Shape { id: None }),
            }
        }
        Some(_) => shape(),
        None => {
            if params.is_some() || raw_id.is_none() {
                return shape();
            }
            match (obj.get("result"), obj.get("error")) {
                (Some(_), None) => Ok(MessageKind::Response(id)),
                (None, Some(e)) if e.is_object() => Ok(MessageKind::Response(id)),
                _ => shape(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::wire::jsonrpc::{MAX_CLIENT_DEPTH, Message, nested_arrays};

    /// The same answer as `jsonrpc::parse` for every line of the table.
    #[test]
    fn kind_agrees_with_the_parser() {
        let lines: &[&str] = &[
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":5}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{}}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"[1]"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
            r#"not json"#,
        ];
        for line in lines {
            let want = jsonrpc::parse(line.as_bytes(), MAX_CLIENT_DEPTH).map(|m| match m {
                Message::Request { id, .. } => MessageKind::Request(id),
                Message::Notification { method, .. } => MessageKind::Notification(method),
                Message::Response { id, .. } | Message::ErrorResponse { id, .. } => {
                    MessageKind::Response(id)
                }
            });
            let got = read(line.as_bytes(), MAX_CLIENT_DEPTH).map(|(_, k)| k);
            assert_eq!(got, want, "{line}");
        }
    }

    #[test]
    fn the_value_is_the_message_as_written() {
        let line = r#"{"id":"x","jsonrpc":"2.0","method":"tools/call","params":{"z":1,"a":12345678901234567890123,"f":1.50}}"#;
        let (v, _) = read(line.as_bytes(), MAX_CLIENT_DEPTH).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(v.to_string(), line);
    }

    #[test]
    fn only_progress_and_log_messages_are_droppable() {
        for (method, want) in [
            ("notifications/progress", true),
            ("notifications/message", true),
            ("notifications/tools/list_changed", false),
            ("notifications/resources/updated", false),
            ("notifications/cancelled", false),
            ("notifications/elicitation/complete", false),
        ] {
            assert_eq!(droppable(method), want, "{method}");
        }
    }

    #[test]
    fn too_deep_is_refused_before_parsing() {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"x","params":{}}}"#,
            nested_arrays(200)
        );
        assert_eq!(
            read(line.as_bytes(), 64),
            Err(ParseError::TooDeep {
                id: Some(Id::Int(3))
            })
        );
    }
}
