//! The era probe: what the upstream's answer to the first modern request (`server/discover`)
//! says about the server. A 2026-07-28 server answers with a `DiscoverResult` or an error only
//! it gives (a recognized modern error, or an internal error of its discover); anything else
//! (a result that is not a `DiscoverResult`, another error, no answer in time, an HTTP status
//! without a modern error body) means a legacy (2025-11-25 or earlier) server, and the bridge
//! passes the 2025-11-25 protocol through unchanged. 2026-07-28 basic/versioning and the
//! stdio and HTTP transports: the fallback MUST NOT depend on one specific error code, and a
//! modern error never falls back.
//!
//! Transport-neutral: [`ProbeAnswer`] has a variant for each way a stdio and an HTTP upstream
//! can answer, and [`decide`] is the one place that reads it. Its table (in `decide`'s
//! documentation, which `docs/architecture.md` links to) names the SDKs whose servers answer
//! each way, and each row has its unit test below.

use serde_json::{Value, json};
use std::fmt;

use crate::protocol::revisions::errors::{Cause, ErrorCode, ErrorObject};
use crate::protocol::revisions::modern::{self, Discovered};

/// The `_meta` member name a modern `-32602` (a missing or bad required `_meta` key,
/// 2026-07-28 basic/index) names in its message or data; a `-32602` that does not name it is
/// a legacy answer (Python `mcp` 1.x answers every unknown method with
/// `-32602 "Invalid request parameters"`).
pub const META_MEMBER: &str = "_meta";

/// How the upstream answered `server/discover`.
#[derive(Clone, Copy, Debug)]
pub enum ProbeAnswer<'a> {
    /// A JSON-RPC result (stdio, or an HTTP 200 with a JSON or SSE body).
    Result(&'a Value),
    /// A JSON-RPC error object (stdio, or an HTTP 200 with an error body).
    Error(&'a Value),
    /// Nothing within the time limit (`--discover-timeout`).
    NoReply,
    /// HTTP: no answer within the time limit (`limit`): no response, or a response (an SSE
    /// stream of keep-alive comments) that carries none. Over HTTP a legacy server answers a
    /// POST it does not take with a status (2026-07-28 transports/http), so silence is no
    /// legacy sign.
    HttpNoReply { limit: std::time::Duration },
    /// The upstream went away before it answered.
    Closed,
    /// The upstream answered with a frame that is not a JSON-RPC response.
    Invalid,
    /// The queue toward the upstream was full; the probe was not sent.
    Busy,
    /// HTTP: a status other than 2xx, with what its body held.
    Http(HttpAnswer<'a>),
}

/// An HTTP answer that is not 2xx (a transport that is not HTTP never makes one).
#[derive(Clone, Copy, Debug)]
pub struct HttpAnswer<'a> {
    /// The HTTP status code.
    pub status: u16,
    /// What the body held.
    pub body: HttpBody<'a>,
}

/// The body of an HTTP answer that is not 2xx.
#[derive(Clone, Copy, Debug)]
pub enum HttpBody<'a> {
    /// No body.
    Empty,
    /// A body that is not JSON (an HTML error page, text).
    #[cfg(test)]
    NotJson,
    /// A JSON-RPC error response: its `error` object.
    RpcError(&'a Value),
    /// JSON that is not a JSON-RPC error response.
    #[cfg(test)]
    OtherJson,
}

/// The body of a non-2xx HTTP answer to the probe, read once by the HTTP transport: the
/// `error` object of a JSON-RPC error response reaches [`ProbeAnswer::Http`] as
/// [`HttpBody::RpcError`], any other body as [`HttpBody::Empty`] (the tests' `as_body` keeps
/// each kind of body apart).
#[derive(Clone, Debug, PartialEq)]
pub enum ReadBody {
    /// No body (or only whitespace).
    Empty,
    /// Not JSON.
    NotJson,
    /// JSON: a JSON-RPC error response, whose `error` object this is when `error` is `true`.
    Json { value: Value, error: bool },
}

impl ReadBody {
    /// Reads the bytes of a body (any `Content-Type`: servers label error pages loosely).
    pub fn read(body: &[u8]) -> ReadBody {
        if body.iter().all(u8::is_ascii_whitespace) {
            return ReadBody::Empty;
        }
        let Ok(value) = serde_json::from_slice::<Value>(body) else {
            return ReadBody::NotJson;
        };
        match value.get("error") {
            Some(e) if e.is_object() && value.get("jsonrpc") == Some(&json!("2.0")) => {
                ReadBody::Json {
                    value: e.clone(),
                    error: true,
                }
            }
            _ => ReadBody::Json {
                value,
                error: false,
            },
        }
    }

    /// The body as [`decide`] reads it.
    #[cfg(test)]
    pub fn as_body(&self) -> HttpBody<'_> {
        match self {
            ReadBody::Empty => HttpBody::Empty,
            ReadBody::NotJson => HttpBody::NotJson,
            ReadBody::Json { value, error: true } => HttpBody::RpcError(value),
            ReadBody::Json { error: false, .. } => HttpBody::OtherJson,
        }
    }
}

/// Why the bridge takes the upstream for a legacy server (the text of the info line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LegacySign {
    /// A JSON-RPC error that no modern server answers to `server/discover`.
    Error { code: i64, message: String },
    /// A result without any member of a `DiscoverResult` (`{}`, `null`): what a lenient
    /// legacy server answers to a method it does not know.
    NotDiscoverResult,
    /// No answer within the time limit.
    NoReply,
    /// HTTP 400/404/405 without a modern error body.
    HttpStatus { status: u16 },
    /// A stdio server that exited at `server/discover` without an answer, as servers of
    /// the rmcp SDK (0.x, 1.x) do at any first message but `initialize`; the bridge starts it
    /// again for the editor's `initialize`.
    ExitedAtDiscover,
}

impl fmt::Display for LegacySign {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LegacySign::Error { code, message } => {
                write!(f, "it answered server/discover with {code} {message:?}")
            }
            LegacySign::NotDiscoverResult => f.write_str(
                "it answered server/discover with a result that is not a DiscoverResult",
            ),
            LegacySign::NoReply => f.write_str("it did not answer server/discover in time"),
            // A 404 is also what a wrong URL path gets: say so, the user may have mistyped.
            LegacySign::HttpStatus { status: 404 } => f.write_str(
                "it answered server/discover with HTTP 404, as a URL with a wrong path would",
            ),
            LegacySign::HttpStatus { status } => {
                write!(f, "it answered server/discover with HTTP {status}")
            }
            LegacySign::ExitedAtDiscover => f.write_str(
                "it exited at server/discover without an answer, as servers of the rmcp SDK do, and answered the initialize once started again",
            ),
        }
    }
}

/// The decision.
#[derive(Clone, Debug, PartialEq)]
pub enum Era {
    /// A 2026-07-28 server: the bridge translates.
    Modern(Discovered),
    /// A legacy server: the bridge passes the 2025-11-25 protocol through unchanged.
    Legacy(LegacySign),
    /// The probe failed without saying anything about the era (or a modern server refused
    /// it): the editor's `initialize` gets this error and the upstream is stopped.
    Error(ErrorObject),
}

/// Whether a JSON-RPC error object is one that only a modern server sends to a well-formed
/// `server/discover`: `-32020` HeaderMismatch, `-32021` MissingRequiredClientCapability,
/// `-32022` UnsupportedProtocolVersion, or `-32602` naming `_meta` (2026-07-28 basic/index,
/// basic/versioning).
pub fn is_modern_error(error: &Value) -> bool {
    let Some(code) = error.get("code").and_then(Value::as_i64).map(ErrorCode) else {
        return false;
    };
    match code {
        ErrorCode::HEADER_MISMATCH
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => true,
        ErrorCode::INVALID_PARAMS => {
            names_meta(error.get("message")) || names_meta(error.get("data"))
        }
        _ => false,
    }
}

/// How many times the probe is sent again after an `UnsupportedProtocolVersion` that offers
/// the bridge's revision ([`offers_version`]): once, so that a server that refuses every
/// request ends the `initialize` instead of a loop.
pub const DISCOVER_VERSION_RETRIES: u32 = 1;

/// Whether an error is `-32022` UnsupportedProtocolVersion whose `data.supported` lists the
/// bridge's revision: the client "SHOULD retry with a version from `data.supported`"
/// (2026-07-28 basic/versioning), and the one it can retry with is its own, so the request
/// goes once more as it was.
pub fn offers_version(error: &Value) -> bool {
    let refused = error.get("code").and_then(Value::as_i64)
        == Some(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0);
    refused
        && error
            .pointer("/data/supported")
            .and_then(Value::as_array)
            .is_some_and(|versions| {
                versions
                    .iter()
                    .any(|v| v.as_str() == Some(modern::PROTOCOL_VERSION))
            })
}

/// The code of JSON-RPC 2.0's internal error: the server failed while it handled the request.
/// A legacy server answers a method it does not know before it handles anything, so this is
/// never its answer to `server/discover`; a 2026-07-28 server gives it when its discover
/// failed, and falling back would only get the editor that server's refusal of `initialize`.
const INTERNAL_ERROR: i64 = -32603;
/// The codes the 2026-07-28 revision reserves for the specification, allocated in order from
/// `-32020` (basic/index): a server that sends one speaks 2026-07-28 or later.
const SPEC_RESERVED_CODES: std::ops::RangeInclusive<i64> = -32099..=-32020;
/// The one code of that range that 2025-11-25 defined (`URLElicitationRequiredError`) and
/// 2026-07-28 must not send: a legacy code.
const URL_ELICITATION_REQUIRED: i64 = -32042;

/// Whether a JSON-RPC error answer to `server/discover` fails the `initialize` instead of
/// meaning a legacy server: a modern error ([`is_modern_error`]), an internal error
/// (-32603), or another code the specification reserves from 2026-07-28 on (-32099 to
/// -32020, but -32042, which 2026-07-28 must not send). Every other error is what
/// legacy servers answer to a method they do not know: -32601 (TypeScript SDK 1.x), -32602
/// without `_meta` (Python `mcp` 1.x), -32600, `0` (the Go SDK), -32000 and the rest of the
/// implementation-defined range.
pub fn fails_discover(error: &Value) -> bool {
    if is_modern_error(error) {
        return true;
    }
    match error.get("code").and_then(Value::as_i64) {
        Some(INTERNAL_ERROR) => true,
        Some(URL_ELICITATION_REQUIRED) => false,
        Some(code) => SPEC_RESERVED_CODES.contains(&code),
        None => false,
    }
}

/// Whether a result that is not a `DiscoverResult` still has a member that only a
/// 2026-07-28 result has (`resultType`, `supportedVersions`): a broken `DiscoverResult` of a
/// modern server (or an `InputRequiredResult`, which discover may not send), never a legacy
/// server's answer.
fn is_modern_result(result: &Value) -> bool {
    result.get("resultType").is_some() || result.get("supportedVersions").is_some()
}

fn names_meta(v: Option<&Value>) -> bool {
    match v {
        Some(Value::String(s)) => s.contains(META_MEMBER),
        Some(v @ (Value::Object(_) | Value::Array(_))) => v.to_string().contains(META_MEMBER),
        _ => false,
    }
}

/// The error the editor's `initialize` gets for an error answer that is no legacy sign
/// ([`fails_discover`]): `discover_failed` with the upstream's code, its message as the
/// detail.
fn modern_error(error: &Value) -> ErrorObject {
    let mut e = Cause::DiscoverFailed.error(error.get("message").cloned());
    if let Some(code) = error.get("code").and_then(Value::as_i64) {
        e.code = ErrorCode(code);
    }
    e
}

/// Decides the era from the answer to `server/discover` (2026-07-28 basic/versioning). Each
/// row has its unit test (`row_N_...` below); `docs/architecture.md` ("The era fallback") links
/// here and says what the Frontend does around rows 5, 12, 13 and 15:
///
/// | # | answer | who answers so | era |
/// |---|---|---|---|
/// | 1 | a valid `DiscoverResult` | 2026-07-28 servers (TypeScript SDK 2.x, Python `mcp` 2.x, rmcp 3.x) | Modern |
/// | 2 | a `DiscoverResult` without 2026-07-28 in `supportedVersions` | a server of a later revision only | Error `discover_failed` |
/// | 3 | a result with `resultType` or `supportedVersions` that is no `DiscoverResult` | a broken 2026-07-28 server | Error `discover_failed` |
/// | 4 | any other result (`{}`, `null`, `{"tools": []}`) | lenient legacy servers (the conformance suite's 2025-11-25 test server: `{}`) | Legacy |
/// | 5 | a modern error ([`is_modern_error`]: -32020, -32021, -32022, -32602 naming `_meta`) | 2026-07-28 servers | Error `discover_failed` with its code |
/// | 6 | -32603 (internal error) | a 2026-07-28 server whose discover failed | Error `discover_failed`, -32603, detail its message |
/// | 7 | another code of -32099..=-32020 but -32042 | a later revision | Error `discover_failed` with its code |
/// | 8 | -32601 | TypeScript SDK 1.x (server-everything), mcp-go | Legacy |
/// | 9 | -32602 not naming `_meta` | Python `mcp` 1.x (`"Invalid request parameters"`) | Legacy |
/// | 10 | -32600 | servers whose request schema lacks the method (Python `mcp` 1.x over HTTP: 400 and -32600) | Legacy |
/// | 11 | any other error (code `0`, -32000..=-32019, -32042, no code) | Go SDK 1.x (code `0`, `method "server/discover" is invalid during session initialization`) | Legacy |
/// | 12 | no answer in time (stdio, in-process) | a server that drops what it cannot read | Legacy (the passed-through `initialize` has a time limit too) |
/// | 13 | the upstream went away | rmcp 0.x and 1.x (`ExpectedInitializeRequest`: the server ends) | Error `upstream_exited`; over stdio the Frontend starts the server again and passes the editor's `initialize` ([`LegacySign::ExitedAtDiscover`]) |
/// | 14 | an invalid frame / a full queue | | Error `discover_failed` / `upstream_busy` |
/// | 15 | HTTP: no answer in time (no response, or an SSE stream without one) | | Error `discover_failed`, detail the time limit |
/// | 16 | HTTP 400, 404, 405 with an error body of rows 5 to 7 | 2026-07-28 servers | Error `discover_failed` with its code |
/// | 17 | HTTP 400, 404, 405 with no body, a non-JSON body, other JSON or another JSON-RPC error | TypeScript SDK 1.x (400, -32000 `Bad Request: Server not initialized`), Python `mcp` 1.x (400, -32600 `Bad Request: Missing session ID`) | Legacy |
/// | 18 | any other HTTP status (401, 403, 408, 429, 5xx, ...) | | Error `discover_failed`, detail `HTTP <status>` |
pub fn decide(answer: ProbeAnswer<'_>) -> Era {
    match answer {
        ProbeAnswer::Result(v) => match modern::read_discover(v) {
            Ok(d) => Era::Modern(d),
            Err(modern::DiscoverError::Malformed) if !is_modern_result(v) => {
                Era::Legacy(LegacySign::NotDiscoverResult)
            }
            Err(e) => Era::Error(Cause::DiscoverFailed.error(Some(json!(e.to_string())))),
        },
        ProbeAnswer::Error(e) if fails_discover(e) => Era::Error(modern_error(e)),
        ProbeAnswer::Error(e) => Era::Legacy(LegacySign::Error {
            code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: e
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        }),
        ProbeAnswer::NoReply => Era::Legacy(LegacySign::NoReply),
        ProbeAnswer::HttpNoReply { limit } => {
            Era::Error(Cause::DiscoverFailed.error(Some(json!(format!(
                "no answer to server/discover within its time limit of {} s",
                limit.as_secs_f64()
            )))))
        }
        ProbeAnswer::Closed => Era::Error(Cause::UpstreamExited.error(None)),
        ProbeAnswer::Invalid => Era::Error(
            Cause::DiscoverFailed.error(Some(json!("the upstream sent an invalid response"))),
        ),
        ProbeAnswer::Busy => Era::Error(Cause::UpstreamBusy.error(None)),
        ProbeAnswer::Http(HttpAnswer { status, body }) => match (status, body) {
            (400 | 404 | 405, HttpBody::RpcError(e)) if fails_discover(e) => {
                Era::Error(modern_error(e))
            }
            (400 | 404 | 405, _) => Era::Legacy(LegacySign::HttpStatus { status }),
            _ => Era::Error(Cause::DiscoverFailed.error(Some(json!(status_detail(status))))),
        },
    }
}

/// The detail of an error status to `server/discover`. A server that does not implement POST
/// (501, RFC 9110 §15.6.2: `python -m http.server`, a static file server) or refuses its
/// media types (406, 415) is not a Streamable HTTP endpoint, which takes POSTs of JSON
/// (MCP 2025-11-25, Transports): the detail says so, since the status alone reads as a
/// server fault.
fn status_detail(status: u16) -> String {
    match status {
        501 => "HTTP 501: the server does not take POST at this URL, so it is no MCP endpoint \
                (Streamable HTTP takes the client's messages as POSTs); check the URL"
            .into(),
        406 | 415 => format!(
            "HTTP {status}: the server refuses MCP's JSON POST at this URL, so it is likely no \
             MCP endpoint; check the URL"
        ),
        _ => format!("HTTP {status}"),
    }
}

/// The warning for a late answer to the probe: the bridge took the upstream for a legacy
/// server because `server/discover` got no answer within `--discover-timeout`, and the answer
/// came afterwards (pass-through had begun; the answer itself is dropped). `Some` when
/// `message` is a JSON-RPC response whose result is a valid `DiscoverResult`
/// ([`modern::read_discover`]): the server speaks 2026-07-28 and was only slow, so the editor's
/// 2025-11-25 requests it now gets will fail, and the fix is a longer `--discover-timeout`.
/// `None` for anything else (a legacy server's late -32601, a result that is no
/// `DiscoverResult`). The era is not switched back: the editor's `initialize` already went.
pub fn late_probe_warning(message: &Value) -> Option<String> {
    let d = modern::read_discover(message.get("result")?).ok()?;
    Some(format!(
        "the upstream server answered server/discover late: it speaks {}, but the bridge took it for a 2025-11-25 server when it did not answer within --discover-timeout; start the bridge with a longer --discover-timeout",
        d.protocol_version
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unsupported_version_that_offers_the_bridges_is_retried_and_no_other() {
        let offer = |supported: Value| {
            json!({"code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": supported, "requested": "2026-07-28"}})
        };
        assert!(offers_version(&offer(json!(["2025-11-25", "2026-07-28"]))));
        assert!(!offers_version(&offer(json!(["2027-01-01"]))));
        assert!(!offers_version(&offer(json!("2026-07-28"))));
        assert!(!offers_version(
            &json!({"code": -32022, "message": "no data"})
        ));
        assert!(!offers_version(&json!({"code": -32602, "message": "x",
            "data": {"supported": ["2026-07-28"]}})));
    }

    fn discover_result() -> Value {
        json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "private"})
    }

    fn legacy(code: i64, message: &str) -> Era {
        Era::Legacy(LegacySign::Error {
            code,
            message: message.into(),
        })
    }

    fn failed(code: i64, cause: &str, detail: Value) -> Era {
        Era::Error(
            ErrorObject::new(ErrorCode(code), Cause::DiscoverFailed.message())
                .with_data(json!({"cause": cause, "detail": detail})),
        )
    }

    fn error(code: i64, message: &str) -> Value {
        json!({"code": code, "message": message})
    }

    fn http(status: u16, body: HttpBody<'_>) -> Era {
        decide(ProbeAnswer::Http(HttpAnswer { status, body }))
    }

    fn legacy_status(status: u16) -> Era {
        Era::Legacy(LegacySign::HttpStatus { status })
    }

    #[test]
    fn row_1_a_discover_result_is_modern() {
        let ok = discover_result();
        let Era::Modern(d) = decide(ProbeAnswer::Result(&ok)) else {
            panic!("a DiscoverResult is modern");
        };
        assert_eq!(d.protocol_version, "2026-07-28");
    }

    #[test]
    fn row_2_a_discover_result_of_other_versions_fails() {
        let later = json!({"resultType": "complete", "supportedVersions": ["2027-01-01"],
            "capabilities": {}, "ttlMs": 0, "cacheScope": "private"});
        assert_eq!(
            decide(ProbeAnswer::Result(&later)),
            failed(
                -32603,
                "discover_failed",
                json!("the server supports none of the bridge's protocol versions")
            )
        );
    }

    #[test]
    fn row_3_a_broken_discover_result_fails() {
        for result in [
            json!({"supportedVersions": ["2026-07-28"]}),
            json!({"resultType": "complete", "capabilities": {}}),
            json!({"resultType": "input_required", "inputRequests": {}}),
        ] {
            assert_eq!(
                decide(ProbeAnswer::Result(&result)),
                failed(
                    -32603,
                    "discover_failed",
                    json!("the discover result is not a DiscoverResult")
                ),
                "{result}"
            );
        }
    }

    #[test]
    fn row_4_another_result_is_legacy() {
        // `{}`: the conformance suite's 2025-11-25 test server, and lenient legacy servers.
        for result in [json!({}), json!(null), json!({"tools": []}), json!("ok")] {
            assert_eq!(
                decide(ProbeAnswer::Result(&result)),
                Era::Legacy(LegacySign::NotDiscoverResult),
                "{result}"
            );
        }
    }

    #[test]
    fn row_5_a_modern_error_fails_with_its_code() {
        let cases = [
            (
                json!({"code": -32022, "message": "Unsupported protocol version",
                    "data": {"supported": ["2027-01-01"], "requested": "2026-07-28"}}),
                -32022,
                "Unsupported protocol version",
            ),
            (
                error(-32021, "Missing capability"),
                -32021,
                "Missing capability",
            ),
            (error(-32020, "Header mismatch"), -32020, "Header mismatch"),
            (
                error(
                    -32602,
                    "missing _meta.io.modelcontextprotocol/protocolVersion",
                ),
                -32602,
                "missing _meta.io.modelcontextprotocol/protocolVersion",
            ),
            (
                json!({"code": -32602, "message": "Invalid params", "data": {"path": ["params", "_meta"]}}),
                -32602,
                "Invalid params",
            ),
        ];
        for (e, code, detail) in cases {
            assert_eq!(
                decide(ProbeAnswer::Error(&e)),
                failed(code, "discover_failed", json!(detail)),
                "{e}"
            );
        }
    }

    #[test]
    fn row_6_an_internal_error_fails_with_the_upstreams_message() {
        let e = error(-32603, "missing required _meta");
        assert_eq!(
            decide(ProbeAnswer::Error(&e)),
            failed(-32603, "discover_failed", json!("missing required _meta"))
        );
        // No message: the detail is absent, the cause still says what failed.
        assert_eq!(
            decide(ProbeAnswer::Error(&json!({"code": -32603}))),
            Era::Error(
                ErrorObject::new(ErrorCode(-32603), Cause::DiscoverFailed.message())
                    .with_data(json!({"cause": "discover_failed"}))
            )
        );
    }

    #[test]
    fn row_7_a_code_reserved_for_later_revisions_fails() {
        for code in [-32023, -32050, -32099] {
            let e = error(code, "new");
            assert_eq!(
                decide(ProbeAnswer::Error(&e)),
                failed(code, "discover_failed", json!("new")),
                "{code}"
            );
        }
    }

    #[test]
    fn row_8_method_not_found_is_legacy() {
        // TypeScript SDK 1.x (server-everything 2026.8.31), and mcp-go's wording.
        for message in ["Method not found", "Method server/discover not found"] {
            let e = error(-32601, message);
            assert_eq!(decide(ProbeAnswer::Error(&e)), legacy(-32601, message));
        }
    }

    #[test]
    fn row_9_invalid_params_without_meta_is_legacy() {
        // Python `mcp` 1.x: the request fails its `ClientRequest` validation.
        let e = json!({"code": -32602, "message": "Invalid request parameters", "data": ""});
        assert_eq!(
            decide(ProbeAnswer::Error(&e)),
            legacy(-32602, "Invalid request parameters")
        );
    }

    #[test]
    fn row_10_invalid_request_is_legacy() {
        let e = error(-32600, "Invalid Request");
        assert_eq!(
            decide(ProbeAnswer::Error(&e)),
            legacy(-32600, "Invalid Request")
        );
        assert_eq!(
            decide(ProbeAnswer::Error(&json!({"code": -32600}))),
            legacy(-32600, "")
        );
    }

    #[test]
    fn row_11_any_other_error_is_legacy() {
        let go = r#"method "server/discover" is invalid during session initialization"#;
        let cases = [
            // The Go SDK 1.x: a plain Go error before initialize goes out with code 0.
            (error(0, go), legacy(0, go)),
            (
                error(-32000, "Server not initialized"),
                legacy(-32000, "Server not initialized"),
            ),
            (error(-32019, "busy"), legacy(-32019, "busy")),
            (
                error(-32042, "URL elicitation required"),
                legacy(-32042, "URL elicitation required"),
            ),
            (error(-32700, "Parse error"), legacy(-32700, "Parse error")),
            (json!({"message": "x"}), legacy(0, "x")),
        ];
        for (e, want) in cases {
            assert_eq!(decide(ProbeAnswer::Error(&e)), want, "{e}");
        }
    }

    #[test]
    fn row_12_no_answer_in_time_is_legacy() {
        assert_eq!(
            decide(ProbeAnswer::NoReply),
            Era::Legacy(LegacySign::NoReply)
        );
    }

    #[test]
    fn row_13_an_upstream_that_went_away_fails() {
        assert_eq!(
            decide(ProbeAnswer::Closed),
            Era::Error(Cause::UpstreamExited.error(None))
        );
    }

    #[test]
    fn row_14_an_invalid_frame_or_a_full_queue_fails() {
        assert_eq!(
            decide(ProbeAnswer::Invalid),
            failed(
                -32603,
                "discover_failed",
                json!("the upstream sent an invalid response"),
            )
        );
        assert_eq!(
            decide(ProbeAnswer::Busy),
            Era::Error(Cause::UpstreamBusy.error(None))
        );
    }

    #[test]
    fn row_15_http_no_answer_in_time_fails() {
        assert_eq!(
            decide(ProbeAnswer::HttpNoReply {
                limit: std::time::Duration::from_millis(1500),
            }),
            failed(
                -32603,
                "discover_failed",
                json!("no answer to server/discover within its time limit of 1.5 s"),
            )
        );
    }

    #[test]
    fn row_16_http_with_an_error_body_only_modern_servers_give_fails() {
        let modern = error(-32022, "Unsupported protocol version");
        let meta = error(-32602, "Missing _meta");
        let internal = error(-32603, "boom");
        let reserved = error(-32030, "later");
        let cases = [
            (
                http(400, HttpBody::RpcError(&modern)),
                failed(
                    -32022,
                    "discover_failed",
                    json!("Unsupported protocol version"),
                ),
            ),
            (
                http(400, HttpBody::RpcError(&meta)),
                failed(-32602, "discover_failed", json!("Missing _meta")),
            ),
            (
                http(404, HttpBody::RpcError(&internal)),
                failed(-32603, "discover_failed", json!("boom")),
            ),
            (
                http(405, HttpBody::RpcError(&reserved)),
                failed(-32030, "discover_failed", json!("later")),
            ),
        ];
        for (i, (got, want)) in cases.into_iter().enumerate() {
            assert_eq!(got, want, "case {i}");
        }
    }

    #[test]
    fn row_17_http_400_404_405_without_such_a_body_is_legacy() {
        // TypeScript SDK 1.x Streamable HTTP, a POST without a session (server-everything).
        let not_init = error(-32000, "Bad Request: Server not initialized");
        // Python `mcp` 1.x Streamable HTTP, a POST without a session.
        let no_session = error(-32600, "Bad Request: Missing session ID");
        let not_found = error(-32601, "Method not found");
        let cases = [
            (http(400, HttpBody::RpcError(&not_init)), legacy_status(400)),
            (
                http(400, HttpBody::RpcError(&no_session)),
                legacy_status(400),
            ),
            (http(400, HttpBody::Empty), legacy_status(400)),
            (http(400, HttpBody::NotJson), legacy_status(400)),
            (http(400, HttpBody::OtherJson), legacy_status(400)),
            (
                http(404, HttpBody::RpcError(&not_found)),
                legacy_status(404),
            ),
            (http(404, HttpBody::Empty), legacy_status(404)),
            (http(405, HttpBody::NotJson), legacy_status(405)),
        ];
        for (i, (got, want)) in cases.into_iter().enumerate() {
            assert_eq!(got, want, "case {i}");
        }
    }

    #[test]
    fn row_18_any_other_http_status_fails() {
        let not_init = error(-32000, "Bad Request: Server not initialized");
        let cases = [
            (
                http(401, HttpBody::Empty),
                failed(-32603, "discover_failed", json!("HTTP 401")),
            ),
            (
                http(403, HttpBody::RpcError(&not_init)),
                failed(-32603, "discover_failed", json!("HTTP 403")),
            ),
            (
                http(500, HttpBody::Empty),
                failed(-32603, "discover_failed", json!("HTTP 500")),
            ),
            (
                http(503, HttpBody::NotJson),
                failed(-32603, "discover_failed", json!("HTTP 503")),
            ),
            (
                http(429, HttpBody::Empty),
                failed(-32603, "discover_failed", json!("HTTP 429")),
            ),
            (
                http(501, HttpBody::NotJson),
                failed(
                    -32603,
                    "discover_failed",
                    json!(
                        "HTTP 501: the server does not take POST at this URL, so it is no MCP endpoint (Streamable HTTP takes the client's messages as POSTs); check the URL"
                    ),
                ),
            ),
            (
                http(415, HttpBody::Empty),
                failed(
                    -32603,
                    "discover_failed",
                    json!(
                        "HTTP 415: the server refuses MCP's JSON POST at this URL, so it is likely no MCP endpoint; check the URL"
                    ),
                ),
            ),
        ];
        for (i, (got, want)) in cases.into_iter().enumerate() {
            assert_eq!(got, want, "case {i}");
        }
    }

    /// The bodies real servers send, read and decided as the HTTP transport will.
    #[test]
    fn http_bodies_are_read_then_decided() {
        let cases: [(u16, &[u8], Era); 7] = [
            // TS SDK 1.x Streamable HTTP, a POST without a session (server-everything).
            (
                400,
                br#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}"#,
                Era::Legacy(LegacySign::HttpStatus { status: 400 }),
            ),
            (
                400,
                br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2027-01-01"],"requested":"2026-07-28"}}}"#,
                failed(-32022, "discover_failed", json!("Unsupported protocol version")),
            ),
            (405, b"", Era::Legacy(LegacySign::HttpStatus { status: 405 })),
            (404, b"  \r\n", Era::Legacy(LegacySign::HttpStatus { status: 404 })),
            (
                404,
                b"<html>Not Found</html>",
                Era::Legacy(LegacySign::HttpStatus { status: 404 }),
            ),
            (
                400,
                br#"{"detail":"bad"}"#,
                Era::Legacy(LegacySign::HttpStatus { status: 400 }),
            ),
            (
                502,
                b"Bad Gateway",
                failed(-32603, "discover_failed", json!("HTTP 502")),
            ),
        ];
        for (status, body, want) in cases {
            let read = ReadBody::read(body);
            let got = decide(ProbeAnswer::Http(HttpAnswer {
                status,
                body: read.as_body(),
            }));
            assert_eq!(got, want, "{status} {}", String::from_utf8_lossy(body));
        }
        assert_eq!(ReadBody::read(b""), ReadBody::Empty);
        assert_eq!(ReadBody::read(b" \r\n"), ReadBody::Empty);
        assert_eq!(ReadBody::read(b"{"), ReadBody::NotJson);
    }

    #[test]
    fn a_late_discover_result_gets_the_warning_and_nothing_else_does() {
        let late =
            json!({"jsonrpc": "2.0", "id": "mcp-bridge-probe-1", "result": discover_result()});
        assert_eq!(
            late_probe_warning(&late).as_deref(),
            Some(
                "the upstream server answered server/discover late: it speaks 2026-07-28, but the bridge took it for a 2025-11-25 server when it did not answer within --discover-timeout; start the bridge with a longer --discover-timeout"
            )
        );
        let no_common = json!({"resultType": "complete", "supportedVersions": ["2027-01-01"],
            "capabilities": {}});
        for other in [
            json!({"jsonrpc": "2.0", "id": "mcp-bridge-probe-1",
                "error": {"code": -32601, "message": "Method not found"}}),
            json!({"jsonrpc": "2.0", "id": "mcp-bridge-probe-1", "result": {"tools": []}}),
            json!({"jsonrpc": "2.0", "id": "mcp-bridge-probe-1", "result": no_common}),
            json!({"jsonrpc": "2.0", "id": "mcp-bridge-probe-1", "result": null}),
        ] {
            assert_eq!(late_probe_warning(&other), None, "{other}");
        }
    }

    #[test]
    fn the_info_line_names_the_sign() {
        assert_eq!(
            legacy_sign(-32601, "Method not found").to_string(),
            "it answered server/discover with -32601 \"Method not found\""
        );
        assert_eq!(
            LegacySign::NotDiscoverResult.to_string(),
            "it answered server/discover with a result that is not a DiscoverResult"
        );
        assert_eq!(
            LegacySign::NoReply.to_string(),
            "it did not answer server/discover in time"
        );
        assert_eq!(
            LegacySign::HttpStatus { status: 405 }.to_string(),
            "it answered server/discover with HTTP 405"
        );
        assert_eq!(
            LegacySign::HttpStatus { status: 404 }.to_string(),
            "it answered server/discover with HTTP 404, as a URL with a wrong path would"
        );
    }

    fn legacy_sign(code: i64, message: &str) -> LegacySign {
        LegacySign::Error {
            code,
            message: message.into(),
        }
    }
}
