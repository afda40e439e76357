//! Error codes and error objects of JSON-RPC 2.0 and MCP, shared by the bridge and the server
//! API ([`crate::server`]), and the bridge's error table: every error the editor can see, as a
//! [`Cause`] with a JSON-RPC code, a fixed message and the `data.cause` name. Messages never
//! contain a secret, the upstream URL or the stderr output of the child process.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::fmt;

/// A JSON-RPC error code (`error.code`, an integer). Any integer is a code: the constants name
/// the ones JSON-RPC 2.0 and the two MCP revisions define. 2026-07-28 (basic/index) reserves
/// `-32020..-32099` for the spec; `-32000..-32019` is implementation-defined, except the
/// historical -32002.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// JSON-RPC 2.0 `Parse error`: the line is not JSON (or not UTF-8).
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// JSON-RPC 2.0 `Invalid Request`: JSON, but not a valid request.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// JSON-RPC 2.0 `Method not found`; MCP also uses it for a method gated by a capability
    /// that was not advertised.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// JSON-RPC 2.0 `Invalid params`; 2026-07-28 also for a missing `_meta` key and for a
    /// resource that does not exist.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// JSON-RPC 2.0 `Internal error`.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// MCP 2025-11-25 resource not found (`resources/read`); 2026-07-28 must not emit it and
    /// sends -32602 instead.
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// MCP 2026-07-28 `HeaderMismatch` (HTTP 400; no data defined).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// MCP 2026-07-28 `MissingRequiredClientCapability`; `data.requiredCapabilities` names
    /// what is missing.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// MCP 2026-07-28 `UnsupportedProtocolVersion`; `data` is `{supported, requested}`.
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
    /// MCP 2025-11-25 `URLElicitationRequiredError`; 2026-07-28 must not emit it, and the
    /// bridge never passes it to the editor (its data holds URLs that editors open).
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
}

impl From<i64> for ErrorCode {
    fn from(code: i64) -> Self {
        ErrorCode(code)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A JSON-RPC 2.0 error object `{code, message, data?}`: the `error` member of an error
/// response. The bridge builds its own from a `Cause`; the server API's handlers answer with
/// one (`server::RpcError` is this type).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("JSON-RPC error {code}: {message}")]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// A short description of the error (one sentence).
    pub message: String,
    /// Extra information, sent as `error.data` when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with this code and message and no `data`.
    pub fn new(code: impl Into<ErrorCode>, message: impl Into<String>) -> Self {
        ErrorObject {
            code: code.into(),
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

    /// `-32602 Invalid params` with this message.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// `-32601 Method not found`, with the method in `data.method`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(ErrorCode::METHOD_NOT_FOUND, "Method not found")
            .with_data(json!({ "method": method }))
    }

    /// `-32603 Internal error` with this message.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// `-32022 UnsupportedProtocolVersion` (2026-07-28 basic/versioning), data
    /// `{supported, requested}`.
    pub fn unsupported_version(supported: &[&str], requested: &str) -> Self {
        Self::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        )
        .with_data(json!({ "supported": supported, "requested": requested }))
    }

    /// `-32021 MissingRequiredClientCapability` (2026-07-28 basic/index), data
    /// `{requiredCapabilities}`.
    pub fn missing_capability(required: Value) -> Self {
        Self::new(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Missing required client capability",
        )
        .with_data(json!({ "requiredCapabilities": required }))
    }

    /// Reads an error object a peer sent: `code` an integer that fits in `i64`, `message` a
    /// string, `data` any value; `None` when `code` or `message` is missing or of another type.
    pub fn from_value(error: &Value) -> Option<ErrorObject> {
        Some(ErrorObject {
            code: ErrorCode(error.get("code")?.as_i64()?),
            message: error.get("message")?.as_str()?.to_string(),
            data: error.get("data").cloned(),
        })
    }

    /// The object as JSON, members in the order `code`, `message`, `data`.
    pub fn to_value(&self) -> Value {
        self.clone().into()
    }

    /// The same error with `data.detail` set to `detail` (`data` becomes an object when it
    /// was none).
    #[must_use]
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        let data = self.data.get_or_insert_with(|| json!({}));
        if let Some(obj) = data.as_object_mut() {
            obj.insert("detail".into(), Value::String(detail.into()));
        }
        self
    }

    /// The error in one line for a stderr line, with everything that says why: the message,
    /// `data.cause` and the code, then `data.detail` (or, for an error without a cause, the
    /// whole `data` as JSON): `The upstream server did not complete server/discover
    /// (discover_failed, -32022): too new`. Control characters become spaces.
    pub fn log_text(&self) -> String {
        let data = self.data.as_ref();
        let cause = data.and_then(|d| d.get("cause")).and_then(Value::as_str);
        let why = match cause {
            Some(_) => data.and_then(|d| d.get("detail")),
            None => data,
        };
        let mut text = match cause {
            Some(cause) => format!("{} ({cause}, {})", self.message, self.code),
            None => format!("{} ({})", self.message, self.code),
        };
        match why {
            Some(Value::String(s)) => text.push_str(&format!(": {s}")),
            Some(v) => text.push_str(&format!(": {v}")),
            None => {}
        }
        crate::protocol::wire::excerpt::sanitize(&text)
    }
}

impl From<ErrorObject> for Value {
    fn from(e: ErrorObject) -> Value {
        let mut out = Map::new();
        out.insert("code".into(), e.code.0.into());
        out.insert("message".into(), e.message.into());
        if let Some(data) = e.data {
            out.insert("data".into(), data);
        }
        Value::Object(out)
    }
}

/// Every cause of an error that the bridge itself gives the editor (the table of docs/errors.md).
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
    /// An HTTP request with an `Mcp-Session-Id` that names no session: it ended (deleted,
    /// idle past its time limit) or never was (-32600; HTTP 404, 2025-11-25
    /// basic/transports).
    UnknownSession,
    /// An HTTP request without `Mcp-Session-Id` to an endpoint that serves only 2025-11-25
    /// sessions (`mcp-bridge --serve-http`): not a 2026-07-28 error, so that a client that
    /// probes with a 2026-07-28 request falls back to `initialize` (2026-07-28
    /// basic/transports/http, the era fallback) (-32600; HTTP 400).
    SessionRequired,
    /// An `initialize` over HTTP past the bound of sessions (-32603; HTTP 503, the bound in
    /// `data.detail`).
    TooManySessions,
    /// `server/discover`, an unknown method, a 2026-07-28 request before `initialize` (-32601).
    MethodNotFound,
    /// The params of a request the bridge reads are not valid (-32602).
    InvalidParams,
    /// The upstream command could not be started (-32603).
    SpawnFailed,
    /// The HTTP client for the upstream URL could not be made (-32603).
    ConnectFailed,
    /// One request to a URL upstream failed (-32603, the HTTP status or why in `data.detail`);
    /// the upstream goes on.
    TransportFailed,
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
    pub fn code(self) -> ErrorCode {
        use Cause::*;
        match self {
            ParseError => ErrorCode::PARSE_ERROR,
            InvalidRequestShape | LineTooLong | TooDeep | NotInitialized | AlreadyInitialized
            | DuplicateId | UnknownSession | SessionRequired => ErrorCode::INVALID_REQUEST,
            MethodNotFound => ErrorCode::METHOD_NOT_FOUND,
            InvalidParams => ErrorCode::INVALID_PARAMS,
            _ => ErrorCode::INTERNAL_ERROR,
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
            UnknownSession => "unknown_session",
            SessionRequired => "session_required",
            TooManySessions => "too_many_sessions",
            MethodNotFound => "method_not_found",
            InvalidParams => "invalid_params",
            SpawnFailed => "spawn_failed",
            ConnectFailed => "connect_failed",
            TransportFailed => "transport_failed",
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
            UnknownSession => "Invalid request: no such session (it ended, or never started)",
            SessionRequired => {
                "Invalid request: this endpoint serves MCP 2025-11-25 sessions: initialize first"
            }
            TooManySessions => "Too many sessions",
            MethodNotFound => "Method not found",
            InvalidParams => "Invalid params",
            SpawnFailed => "The bridge could not start the upstream server",
            ConnectFailed => "The bridge could not make the HTTP client for the upstream server",
            TransportFailed => "The request to the upstream server failed",
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
    pub fn error(self, detail: Option<Value>) -> ErrorObject {
        let mut data = Map::new();
        data.insert("cause".into(), Value::String(self.name().into()));
        if let Some(d) = detail {
            data.insert("detail".into(), d);
        }
        ErrorObject::new(self.code(), self.message()).with_data(Value::Object(data))
    }

    /// [`Cause::error`] as JSON.
    pub fn error_object(self, detail: Option<Value>) -> Value {
        self.error(detail).into()
    }
}

/// The message of an `initialize` sent while the first one still runs.
pub const INITIALIZE_RUNNING_MESSAGE: &str = "Invalid request: initialize is still running";

/// The error of an `initialize` sent while the first one still runs: the cause of any second
/// `initialize` (`already_initialized`, -32600), with a message that is true then
/// ([`INITIALIZE_RUNNING_MESSAGE`]).
pub fn initialize_running() -> ErrorObject {
    let mut e = Cause::AlreadyInitialized.error(None);
    e.message = INITIALIZE_RUNNING_MESSAGE.into();
    e
}

/// An error response of the table ([`Cause::error`]: `data.cause` is set) in the words for a
/// server in the bridge's own process (the embedded bridge), which is no upstream server: `The
/// upstream server exited` reads `The server exited`. `None` when `frame` is no such error, or
/// its message names no upstream server.
pub fn in_process_error(frame: &Value) -> Option<Value> {
    let error = frame.get("error")?;
    error.get("data")?.get("cause")?.as_str()?;
    let message = error.get("message")?.as_str()?;
    if !message.contains(UPSTREAM_SERVER) {
        return None;
    }
    let worded = message.replace(UPSTREAM_SERVER, "server");
    let mut frame = frame.clone();
    frame["error"]["message"] = Value::String(worded);
    Some(frame)
}

/// The words of the table's messages for the server behind the bridge (`The upstream server
/// exited`).
const UPSTREAM_SERVER: &str = "upstream server";

/// An upstream JSON-RPC error as the editor gets it: code, message and data are kept, except
/// -32042 (`URLElicitationRequiredError`), which becomes -32603 without data, because editors
/// open the URLs in its data.
pub fn relay_upstream_error(error: &Value) -> ErrorObject {
    match ErrorObject::from_value(error) {
        None => Cause::Rpc.error(None),
        Some(e) if e.code == ErrorCode::URL_ELICITATION_REQUIRED => {
            ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.message)
        }
        Some(e) => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_of_the_table_names_no_upstream_server_in_process() {
        let frame = json!({"jsonrpc": "2.0", "id": 1,
            "error": Cause::UpstreamBusy.error_object(Some(json!(16)))});
        assert_eq!(
            in_process_error(&frame),
            Some(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603,
                "message": "The server is not reading its input; try again later",
                "data": {"cause": "upstream_busy", "detail": 16}}}))
        );
        let spawn = json!({"error": Cause::SpawnFailed.error_object(None)});
        assert_eq!(
            in_process_error(&spawn).map(|f| f["error"]["message"].clone()),
            Some(json!("The bridge could not start the server"))
        );
        // The server's own error (no `data.cause`) and a message without the words pass.
        let own = json!({"error": {"code": -32603, "message": "The upstream server is down"}});
        assert_eq!(in_process_error(&own), None);
        let parse = json!({"error": Cause::ParseError.error_object(None)});
        assert_eq!(in_process_error(&parse), None);
    }

    #[test]
    fn the_log_text_says_why() {
        for (e, want) in [
            (
                Cause::DiscoverFailed.error(Some(json!("too new"))),
                "The upstream server did not complete server/discover (discover_failed, -32603): too new",
            ),
            (
                Cause::UpstreamExited.error(Some(json!("exit code 3"))),
                "The upstream server exited (upstream_exited, -32603): exit code 3",
            ),
            (
                Cause::UpstreamExited.error(None),
                "The upstream server exited (upstream_exited, -32603)",
            ),
            (
                ErrorObject::new(-32000, "boom\nnext").with_data(json!({"why": 1})),
                "boom next (-32000): {\"why\":1}",
            ),
            (ErrorObject::new(-32000, "plain"), "plain (-32000)"),
        ] {
            assert_eq!(e.log_text(), want);
        }
    }

    #[test]
    fn each_code_is_defined_once_with_the_value_of_its_spec() {
        let table = [
            (ErrorCode::PARSE_ERROR, -32700),
            (ErrorCode::INVALID_REQUEST, -32600),
            (ErrorCode::METHOD_NOT_FOUND, -32601),
            (ErrorCode::INVALID_PARAMS, -32602),
            (ErrorCode::INTERNAL_ERROR, -32603),
            (ErrorCode::RESOURCE_NOT_FOUND, -32002),
            (ErrorCode::HEADER_MISMATCH, -32020),
            (ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, -32021),
            (ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, -32022),
            (ErrorCode::URL_ELICITATION_REQUIRED, -32042),
        ];
        for (code, value) in table {
            assert_eq!(code, ErrorCode(value));
            assert_eq!(code, ErrorCode::from(value));
            assert_eq!(code.to_string(), value.to_string());
            assert_eq!(serde_json::to_value(code).ok(), Some(json!(value)));
        }
    }

    #[test]
    fn an_error_object_is_code_message_and_data_in_that_order() {
        let table = [
            (
                ErrorObject::new(-32000, "custom"),
                r#"{"code":-32000,"message":"custom"}"#,
            ),
            (
                ErrorObject::invalid_params("bad").with_data(json!({"uri": "a"})),
                r#"{"code":-32602,"message":"bad","data":{"uri":"a"}}"#,
            ),
            (
                ErrorObject::method_not_found("x/y"),
                r#"{"code":-32601,"message":"Method not found","data":{"method":"x/y"}}"#,
            ),
            (
                ErrorObject::internal("boom"),
                r#"{"code":-32603,"message":"boom"}"#,
            ),
            (
                ErrorObject::unsupported_version(&["2026-07-28"], "2025-11-25"),
                r#"{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}"#,
            ),
            (
                ErrorObject::missing_capability(json!({"sampling": {}})),
                r#"{"code":-32021,"message":"Missing required client capability","data":{"requiredCapabilities":{"sampling":{}}}}"#,
            ),
        ];
        for (error, text) in table {
            assert_eq!(error.to_value().to_string(), text);
            assert_eq!(serde_json::to_string(&error).ok().as_deref(), Some(text));
            let back = serde_json::from_str::<Value>(text).ok();
            assert_eq!(back.as_ref().and_then(ErrorObject::from_value), Some(error));
        }
    }

    #[test]
    fn a_peer_error_needs_an_integer_code_and_a_string_message() {
        for bad in [
            json!({"message": "x"}),
            json!({"code": -32602}),
            json!({"code": "-32602", "message": "x"}),
            json!({"code": -32602.5, "message": "x"}),
            serde_json::from_str(r#"{"code": 99999999999999999999, "message": "x"}"#)
                .unwrap_or_default(),
            json!({"code": -32602, "message": 3}),
        ] {
            assert_eq!(ErrorObject::from_value(&bad), None, "{bad}");
        }
    }

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
            (Cause::TooManySessions, -32603, "too_many_sessions"),
            (Cause::UnknownSession, -32600, "unknown_session"),
            (Cause::SessionRequired, -32600, "session_required"),
            (Cause::UpstreamBusy, -32603, "upstream_busy"),
            (Cause::Timeout, -32603, "timeout"),
            (Cause::TooManyRounds, -32603, "too_many_rounds"),
        ];
        for (cause, code, name) in table {
            assert_eq!(cause.code(), ErrorCode(code), "{name}");
            assert_eq!(cause.name(), name);
            let e = cause.error_object(Some(json!(7)));
            assert_eq!(e["data"], json!({"cause": name, "detail": 7}));
            assert_eq!(e["code"], json!(code));
        }
    }

    #[test]
    fn an_upstream_error_keeps_code_message_and_data() {
        let e = json!({"code": -32602, "message": "Unknown tool", "data": {"x": 1}});
        assert_eq!(relay_upstream_error(&e).to_value(), e);
    }

    #[test]
    fn url_elicitation_required_becomes_internal_error_without_data() {
        let e = json!({"code": -32042, "message": "go", "data": {"elicitations": []}});
        assert_eq!(
            relay_upstream_error(&e).to_value(),
            json!({"code": -32603, "message": "go"})
        );
    }

    #[test]
    fn an_error_without_code_becomes_rpc() {
        assert_eq!(
            relay_upstream_error(&json!({"message": "x"})).to_value()["data"]["cause"],
            "rpc"
        );
    }
}
