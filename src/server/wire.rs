//! The JSON-RPC 2.0 messages the server writes, with the ids as the client sent them (JSON
//! values). What is read is classified by the protocol layer ([`crate::protocol::jsonrpc`]).

use serde_json::{Map, Value, json};

use super::error::RpcError;

/// A JSON-RPC id as 2026-07-28 allows it: a string or an integer.
pub(crate) fn is_request_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
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
    fn integral_numbers_are_written_as_integers() {
        assert_eq!(number(3.0).to_string(), "3");
        assert_eq!(number(2.5).to_string(), "2.5");
    }
}
