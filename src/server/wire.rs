//! JSON-RPC 2.0 messages of one stdio line: classifying what was read and building what is written.
//! Values in, values out; no I/O and no MCP semantics beyond the 2026-07-28 envelope rules
//! (ids are strings or integers, never null; clients send no responses we care about).

use serde_json::{Map, Value, json};

use super::error::{ErrorCode, RpcError};

/// What one input line holds.
#[derive(Debug, PartialEq)]
pub(crate) enum Incoming {
    /// A request: it gets exactly one response unless it is cancelled.
    Request {
        id: Value,
        method: String,
        params: Option<Value>,
    },
    /// A notification: never answered.
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// A response from the client. 2026-07-28 clients send none, so it is ignored.
    Response,
    /// Not a valid message: answer with this error line (`id` only if it could be read).
    Invalid(Value),
}

/// Classifies one line (without its newline).
pub(crate) fn classify(line: &[u8]) -> Incoming {
    let Ok(value) = serde_json::from_slice::<Value>(line) else {
        return Incoming::Invalid(error_response(
            None,
            &RpcError::new(ErrorCode::PARSE_ERROR, "Parse error"),
        ));
    };
    let Value::Object(mut message) = value else {
        return invalid(None, "A message must be a JSON object");
    };
    let id = match message.remove("id") {
        None => None,
        Some(id) if is_request_id(&id) => Some(id),
        // Unreadable id: the error goes out without one (2026-07-28 basic/index).
        Some(_) => return invalid(None, "The id must be a string or an integer"),
    };
    if message.get("jsonrpc") != Some(&Value::from("2.0")) {
        return invalid(id, "jsonrpc must be \"2.0\"");
    }
    let params = message.remove("params");
    match (message.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Incoming::Request { id, method, params },
        (Some(Value::String(method)), None) => Incoming::Notification { method, params },
        (Some(_), id) => invalid(id, "method must be a string"),
        (None, Some(_)) if message.contains_key("result") || message.contains_key("error") => {
            Incoming::Response
        }
        (None, id) => invalid(id, "Not a request, notification or response"),
    }
}

/// A JSON-RPC id as 2026-07-28 allows it: a string or an integer.
pub(crate) fn is_request_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

fn invalid(id: Option<Value>, message: &str) -> Incoming {
    Incoming::Invalid(error_response(
        id.as_ref(),
        &RpcError::new(ErrorCode::INVALID_REQUEST, message),
    ))
}

/// `{"jsonrpc":"2.0","id":…,"result":…}`.
pub(crate) fn result_response(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// `{"jsonrpc":"2.0","id":…,"error":…}`; the id is left out when it could not be read.
pub(crate) fn error_response(id: Option<&Value>, error: &RpcError) -> Value {
    let mut response = Map::new();
    response.insert("jsonrpc".into(), "2.0".into());
    if let Some(id) = id {
        response.insert("id".into(), id.clone());
    }
    response.insert("error".into(), error.to_value());
    Value::Object(response)
}

/// `{"jsonrpc":"2.0","method":…,"params":…}`.
pub(crate) fn notification(method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "method": method, "params": params })
}

/// A JSON number for `value`, written as an integer when it is one (`3` rather than `3.0`).
pub(crate) fn number(value: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if value.fract() == 0.0 && value.abs() < EXACT {
        Value::from(value as i64)
    } else {
        Value::from(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_that_is_not_json_gets_a_parse_error_without_id() {
        let Incoming::Invalid(error) = classify(b"{not json") else {
            panic!("expected an error");
        };
        assert_eq!(
            error,
            json!({"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}})
        );
    }

    #[test]
    fn a_null_or_fractional_id_is_an_invalid_request_without_id() {
        for line in [
            r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
        ] {
            let Incoming::Invalid(error) = classify(line.as_bytes()) else {
                panic!("expected an error for {line}");
            };
            assert_eq!(error["error"]["code"], -32600);
            assert!(error.get("id").is_none());
        }
    }

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":"a","method":"m","params":{}}"#),
            Incoming::Request {
                id: json!("a"),
                method: "m".into(),
                params: Some(json!({}))
            }
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","method":"n"}"#),
            Incoming::Notification {
                method: "n".into(),
                params: None
            }
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            Incoming::Response
        );
    }

    #[test]
    fn a_wrong_jsonrpc_version_keeps_the_id_in_the_error() {
        let Incoming::Invalid(error) = classify(br#"{"jsonrpc":"1.0","id":7,"method":"m"}"#) else {
            panic!("expected an error");
        };
        assert_eq!(error["id"], 7);
        assert_eq!(error["error"]["code"], -32600);
    }

    #[test]
    fn integral_numbers_are_written_as_integers() {
        assert_eq!(number(3.0).to_string(), "3");
        assert_eq!(number(2.5).to_string(), "2.5");
    }
}
