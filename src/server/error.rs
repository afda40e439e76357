//! The JSON-RPC error a handler or the dispatcher answers with.
//! Owns the error codes this server emits (JSON-RPC 2.0 plus the 2026-07-28 range);
//! never decides when to use them.

use serde_json::{Map, Value, json};

/// JSON-RPC 2.0 `Parse error`: the line is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0 `Invalid Request`: JSON, but not a request, notification or response.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC 2.0 `Method not found`, also for a method gated by an unadvertised capability.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC 2.0 `Invalid params`: missing `_meta` keys, unknown tool/prompt/resource, bad cursor.
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC 2.0 `Internal error`.
pub const INTERNAL_ERROR: i64 = -32603;
/// 2026-07-28 `MissingRequiredClientCapability`; `data.requiredCapabilities` names what is missing.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// 2026-07-28 `UnsupportedProtocolVersion`; `data` is `{supported, requested}`.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// A JSON-RPC error object (`code`, `message`, optional `data`), sent as the response to a request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("JSON-RPC error {code}: {message}")]
pub struct RpcError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// A short description of the error.
    pub message: String,
    /// Optional extra information, sent as `error.data`.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with this code and message and no `data`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with `data` set.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32602 Invalid params`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    /// `-32601 Method not found`, with the method in `data.method`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(METHOD_NOT_FOUND, "Method not found").with_data(json!({ "method": method }))
    }

    /// `-32603 Internal error`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }

    /// `-32022 UnsupportedProtocolVersion` (2026-07-28 basic/versioning).
    pub fn unsupported_version(supported: &[&str], requested: &str) -> Self {
        Self::new(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
            .with_data(json!({ "supported": supported, "requested": requested }))
    }

    /// `-32021 MissingRequiredClientCapability` (2026-07-28 basic/index).
    pub fn missing_capability(required: Value) -> Self {
        Self::new(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Missing required client capability",
        )
        .with_data(json!({ "requiredCapabilities": required }))
    }

    /// The `error` member of a JSON-RPC error response.
    pub(crate) fn to_json(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".into(), self.code.into());
        error.insert("message".into(), self.message.clone().into());
        if let Some(data) = &self.data {
            error.insert("data".into(), data.clone());
        }
        Value::Object(error)
    }
}
