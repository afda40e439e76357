//! The error table: every error the editor can see, as a [`Cause`] with a JSON-RPC code, a fixed
//! message and the `data.cause` name. Messages never contain a secret, the upstream URL or
//! the stderr output of the child process.

use serde_json::{Map, Value, json};

/// JSON-RPC 2.0 code of a line that is not JSON or not UTF-8.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0 code of a message that is not a valid request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC 2.0 code of an unknown method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC 2.0 code of invalid params.
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC 2.0 code of an internal error.
pub const INTERNAL_ERROR: i64 = -32603;
/// MCP 2025-11-25 `URLElicitationRequiredError`; never passed to the editor (its data holds URLs
/// that editors open).
pub const URL_ELICITATION_REQUIRED: i64 = -32042;

/// Every cause of an error that the bridge itself gives the editor (the reference's error table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    /// A line that is not valid JSON or not valid UTF-8 (-32700).
    ParseError,
    /// Valid JSON that is not a JSON-RPC 2.0 message (-32600).
    InvalidRequestShape,
    /// A line over `--max-line-bytes` (-32600, the limit in `data.detail`).
    LineTooLong,
    /// A message nested deeper than the limit (-32600, the limit in `data.detail`).
    TooDeep,
    /// A request before `initialize` (-32600).
    NotInitialized,
    /// A second `initialize` (-32600).
    AlreadyInitialized,
    /// A request whose id is the id of a request still in flight (-32600).
    DuplicateId,
    /// `server/discover`, an unknown method, a 2026-07-28 request before `initialize` (-32601).
    MethodNotFound,
    /// The params of a request the bridge reads are not valid (-32602).
    InvalidParams,
    /// The upstream command could not be started (-32603).
    SpawnFailed,
    /// `server/discover` failed or did not answer in time (-32603 or the upstream's code).
    DiscoverFailed,
    /// The upstream process stopped (-32603).
    UpstreamExited,
    /// The limit of requests in flight (-32603).
    TooManyRequests,
    /// The queue toward the upstream is full (the upstream does not read its input fast
    /// enough); the request was not sent (-32603, the limit in bytes in `data.detail`).
    UpstreamBusy,
    /// The upstream did not answer within the time limit of the method (-32603).
    Timeout,
    /// The upstream sent a frame the bridge cannot use as the answer (-32603).
    InvalidResponse,
    /// The upstream asked for input in a way the bridge cannot relay (-32603).
    InvalidInputRequest,
    /// More input requests in one round than allowed (-32603).
    TooManyInputRequests,
    /// More rounds of input requests than allowed (-32603).
    TooManyRounds,
    /// The editor did not answer a round of input requests in time (-32603).
    InputTimeout,
    /// The editor's answer to an input request failed a check (-32603).
    InvalidClientAnswer,
    /// The upstream asked for an input kind the editor did not declare (-32603).
    UndeclaredInputRequest,
    /// The bridge is closing and starts no new request (-32603).
    Closed,
    /// An upstream error without a JSON-RPC error object (-32603).
    Rpc,
}

impl Cause {
    /// The JSON-RPC error code of the cause.
    pub fn code(self) -> i64 {
        use Cause::*;
        match self {
            ParseError => PARSE_ERROR,
            InvalidRequestShape | LineTooLong | TooDeep | NotInitialized | AlreadyInitialized
            | DuplicateId => INVALID_REQUEST,
            MethodNotFound => METHOD_NOT_FOUND,
            InvalidParams => INVALID_PARAMS,
            _ => INTERNAL_ERROR,
        }
    }

    /// The `data.cause` name of the cause (snake case, stable: editors and tests match on it).
    pub fn name(self) -> &'static str {
        use Cause::*;
        match self {
            ParseError => "parse_error",
            InvalidRequestShape => "invalid_request_shape",
            LineTooLong => "line_too_long",
            TooDeep => "too_deep",
            NotInitialized => "not_initialized",
            AlreadyInitialized => "already_initialized",
            DuplicateId => "duplicate_id",
            MethodNotFound => "method_not_found",
            InvalidParams => "invalid_params",
            SpawnFailed => "spawn_failed",
            DiscoverFailed => "discover_failed",
            UpstreamExited => "upstream_exited",
            TooManyRequests => "too_many_requests",
            UpstreamBusy => "upstream_busy",
            Timeout => "timeout",
            InvalidResponse => "invalid_response",
            InvalidInputRequest => "invalid_input_request",
            TooManyInputRequests => "too_many_input_requests",
            TooManyRounds => "too_many_rounds",
            InputTimeout => "input_timeout",
            InvalidClientAnswer => "invalid_client_answer",
            UndeclaredInputRequest => "undeclared_input_request",
            Closed => "closed",
            Rpc => "rpc",
        }
    }

    /// The fixed, human-readable message of the cause (one sentence, no variable parts).
    pub fn message(self) -> &'static str {
        use Cause::*;
        match self {
            ParseError => "Parse error",
            InvalidRequestShape => "Invalid request: not a JSON-RPC 2.0 message",
            LineTooLong => "Invalid request: the line is longer than the limit",
            TooDeep => "Invalid request: the message is nested too deeply",
            NotInitialized => "Invalid request: the server is not initialized",
            AlreadyInitialized => "Invalid request: the server is already initialized",
            DuplicateId => "Invalid request: the id is in use by a request in flight",
            MethodNotFound => "Method not found",
            InvalidParams => "Invalid params",
            SpawnFailed => "The bridge could not start the upstream server",
            DiscoverFailed => "The upstream server did not complete server/discover",
            UpstreamExited => "The upstream server exited",
            TooManyRequests => "Too many requests in flight",
            UpstreamBusy => "The upstream server is not reading its input; try again later",
            Timeout => "The upstream server did not answer in time",
            InvalidResponse => "The upstream server sent an invalid response",
            InvalidInputRequest => "The upstream server sent an invalid input request",
            TooManyInputRequests => "The upstream server sent too many input requests",
            TooManyRounds => "The upstream server asked for input too many times",
            InputTimeout => "The client did not answer the input requests in time",
            InvalidClientAnswer => "The client's answer to an input request is not valid",
            UndeclaredInputRequest => {
                "The upstream server asked for input the client did not declare"
            }
            Closed => "The bridge is closing",
            Rpc => "The upstream server failed the request",
        }
    }

    /// The JSON-RPC error object `{code, message, data: {cause, detail?}}` of the cause.
    pub fn error_object(self, detail: Option<Value>) -> Value {
        let mut data = Map::new();
        data.insert("cause".into(), Value::String(self.name().into()));
        if let Some(d) = detail {
            data.insert("detail".into(), d);
        }
        json!({"code": self.code(), "message": self.message(), "data": Value::Object(data)})
    }
}

/// An upstream JSON-RPC error as the editor gets it: code, message and data are kept, except
/// -32042 (`URLElicitationRequiredError`), which becomes -32603 without data, because editors
/// open the URLs in its data.
pub fn relay_upstream_error(error: &Value) -> Value {
    let code = error.get("code").and_then(Value::as_i64);
    let message = error.get("message").and_then(Value::as_str);
    let (Some(code), Some(message)) = (code, message) else {
        return Cause::Rpc.error_object(None);
    };
    if code == URL_ELICITATION_REQUIRED {
        return json!({"code": INTERNAL_ERROR, "message": message});
    }
    let mut out = Map::new();
    out.insert("code".into(), code.into());
    out.insert("message".into(), message.into());
    if let Some(data) = error.get("data") {
        out.insert("data".into(), data.clone());
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_has_the_code_of_the_table() {
        let table = [
            (Cause::ParseError, -32700, "parse_error"),
            (Cause::InvalidRequestShape, -32600, "invalid_request_shape"),
            (Cause::LineTooLong, -32600, "line_too_long"),
            (Cause::TooDeep, -32600, "too_deep"),
            (Cause::NotInitialized, -32600, "not_initialized"),
            (Cause::AlreadyInitialized, -32600, "already_initialized"),
            (Cause::MethodNotFound, -32601, "method_not_found"),
            (Cause::InvalidParams, -32602, "invalid_params"),
            (Cause::SpawnFailed, -32603, "spawn_failed"),
            (Cause::UpstreamExited, -32603, "upstream_exited"),
            (Cause::TooManyRequests, -32603, "too_many_requests"),
            (Cause::UpstreamBusy, -32603, "upstream_busy"),
            (Cause::Timeout, -32603, "timeout"),
            (Cause::TooManyRounds, -32603, "too_many_rounds"),
        ];
        for (cause, code, name) in table {
            assert_eq!(cause.code(), code, "{name}");
            assert_eq!(cause.name(), name);
            let e = cause.error_object(Some(json!(7)));
            assert_eq!(e["data"], json!({"cause": name, "detail": 7}));
            assert_eq!(e["code"], json!(code));
        }
    }

    #[test]
    fn an_upstream_error_keeps_code_message_and_data() {
        let e = json!({"code": -32602, "message": "Unknown tool", "data": {"x": 1}});
        assert_eq!(relay_upstream_error(&e), e);
    }

    #[test]
    fn url_elicitation_required_becomes_internal_error_without_data() {
        let e = json!({"code": -32042, "message": "go", "data": {"elicitations": []}});
        assert_eq!(
            relay_upstream_error(&e),
            json!({"code": -32603, "message": "go"})
        );
    }

    #[test]
    fn an_error_without_code_becomes_rpc() {
        assert_eq!(
            relay_upstream_error(&json!({"message": "x"}))["data"]["cause"],
            "rpc"
        );
    }
}
