//! The era probe: what the upstream's answer to the first modern request (`server/discover`)
//! says about the server. A 2026-07-28 server answers with a `DiscoverResult` or a recognized
//! modern error; anything else (another error, no answer in time, an HTTP status without a
//! modern error body) means a legacy (2025-11-25 or earlier) server, and the bridge passes the
//! 2025-11-25 protocol through unchanged. Notes §9.3 (stdio) and §10.4 (HTTP), VER26: "the
//! fallback MUST NOT depend on one specific error code", and a modern error never falls back.
//!
//! Transport-neutral: [`ProbeAnswer`] has a variant for each way a stdio and an HTTP upstream
//! can answer, and [`decide`] is the one place that reads it.

use serde_json::{Value, json};
use std::fmt;

use super::errors::{Cause, ErrorCode, ErrorObject};
use super::modern::{self, Discovered};

/// The `_meta` member name a modern `-32602` (a missing or bad required `_meta` key, HTTP26)
/// names in its message or data; a `-32602` that does not name it is a legacy answer (Python
/// `mcp` 1.x answers every unknown method with `-32602 "Invalid request parameters"`).
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
    /// POST it does not take with a status (notes §10.4), so silence is no legacy sign.
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
    NotJson,
    /// A JSON-RPC error response: its `error` object.
    RpcError(&'a Value),
    /// JSON that is not a JSON-RPC error response.
    OtherJson,
}

/// The body of a non-2xx HTTP answer to the probe, read once by the HTTP transport; its
/// [`ReadBody::as_body`] is the [`HttpBody`] of [`ProbeAnswer::Http`].
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
    /// No answer within the time limit.
    NoReply,
    /// HTTP 400/404/405 without a modern error body.
    HttpStatus { status: u16 },
}

impl fmt::Display for LegacySign {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LegacySign::Error { code, message } => {
                write!(f, "it answered server/discover with {code} {message:?}")
            }
            LegacySign::NoReply => f.write_str("it did not answer server/discover in time"),
            // A 404 is also what a wrong URL path gets: say so, the user may have mistyped.
            LegacySign::HttpStatus { status: 404 } => f.write_str(
                "it answered server/discover with HTTP 404, as a URL with a wrong path would",
            ),
            LegacySign::HttpStatus { status } => {
                write!(f, "it answered server/discover with HTTP {status}")
            }
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
/// `-32022` UnsupportedProtocolVersion, or `-32602` naming `_meta` (notes §9.3, §10.4, §11).
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

fn names_meta(v: Option<&Value>) -> bool {
    match v {
        Some(Value::String(s)) => s.contains(META_MEMBER),
        Some(v @ (Value::Object(_) | Value::Array(_))) => v.to_string().contains(META_MEMBER),
        _ => false,
    }
}

/// The error the editor's `initialize` gets for a modern error answer: `discover_failed`
/// with the upstream's code, its message as the detail.
fn modern_error(error: &Value) -> ErrorObject {
    let mut e = Cause::DiscoverFailed.error(error.get("message").cloned());
    if let Some(code) = error.get("code").and_then(Value::as_i64) {
        e.code = ErrorCode(code);
    }
    e
}

/// Decides the era from the answer to `server/discover` (notes §9.3, §10.4):
///
/// | answer | era |
/// |---|---|
/// | a valid `DiscoverResult` | Modern |
/// | another result | Error `discover_failed` (a modern server must implement discover) |
/// | a modern error ([`is_modern_error`]) | Error `discover_failed` with its code: never a fallback |
/// | any other JSON-RPC error (`-32601`, `-32602` without `_meta`, `-32603`, `-32000`, ...) | Legacy |
/// | no answer in time | Legacy |
/// | HTTP: no answer in time (no response, or an SSE stream without one) | Error `discover_failed`, detail the time limit |
/// | the upstream went away / an invalid frame / a full queue | Error (`upstream_exited`, `discover_failed`, `upstream_busy`) |
/// | HTTP 400, 404, 405 with a modern error body | Error `discover_failed` with its code |
/// | HTTP 400, 404, 405 with no body, a non-JSON body, other JSON or another JSON-RPC error | Legacy |
/// | any other HTTP status (401, 403, 408, 429, 5xx, ...) | Error `discover_failed`, detail `HTTP <status>` |
pub fn decide(answer: ProbeAnswer<'_>) -> Era {
    match answer {
        ProbeAnswer::Result(v) => match modern::read_discover(v) {
            Ok(d) => Era::Modern(d),
            Err(e) => Era::Error(Cause::DiscoverFailed.error(Some(json!(e.to_string())))),
        },
        ProbeAnswer::Error(e) if is_modern_error(e) => Era::Error(modern_error(e)),
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
            (400 | 404 | 405, HttpBody::RpcError(e)) if is_modern_error(e) => {
                Era::Error(modern_error(e))
            }
            (400 | 404 | 405, _) => Era::Legacy(LegacySign::HttpStatus { status }),
            _ => Era::Error(Cause::DiscoverFailed.error(Some(json!(format!("HTTP {status}"))))),
        },
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

    #[test]
    fn every_kind_of_stdio_answer() {
        let ok = discover_result();
        let Era::Modern(d) = decide(ProbeAnswer::Result(&ok)) else {
            panic!("a DiscoverResult is modern");
        };
        assert_eq!(d.protocol_version, "2026-07-28");

        let table: Vec<(&str, Value, Era)> = vec![
            // TS SDK 1.x (server-everything): the unknown method before initialize.
            (
                "TS SDK 1.x",
                json!({"code": -32601, "message": "Method not found"}),
                legacy(-32601, "Method not found"),
            ),
            // Python mcp 1.x: the request fails its ClientRequest validation.
            (
                "Python mcp 1.x",
                json!({"code": -32602, "message": "Invalid request parameters", "data": ""}),
                legacy(-32602, "Invalid request parameters"),
            ),
            (
                "not initialized",
                json!({"code": -32000, "message": "Server not initialized"}),
                legacy(-32000, "Server not initialized"),
            ),
            (
                "internal error",
                json!({"code": -32603, "message": "boom"}),
                legacy(-32603, "boom"),
            ),
            ("no message", json!({"code": -32600}), legacy(-32600, "")),
            ("no code", json!({"message": "x"}), legacy(0, "x")),
            (
                "-32022",
                json!({"code": -32022, "message": "Unsupported protocol version",
                    "data": {"supported": ["2027-01-01"], "requested": "2026-07-28"}}),
                failed(
                    -32022,
                    "discover_failed",
                    json!("Unsupported protocol version"),
                ),
            ),
            (
                "-32021",
                json!({"code": -32021, "message": "Missing capability"}),
                failed(-32021, "discover_failed", json!("Missing capability")),
            ),
            (
                "-32020",
                json!({"code": -32020, "message": "Header mismatch"}),
                failed(-32020, "discover_failed", json!("Header mismatch")),
            ),
            (
                "-32602 naming _meta in the message",
                json!({"code": -32602, "message": "missing _meta.io.modelcontextprotocol/protocolVersion"}),
                failed(
                    -32602,
                    "discover_failed",
                    json!("missing _meta.io.modelcontextprotocol/protocolVersion"),
                ),
            ),
            (
                "-32602 naming _meta in the data",
                json!({"code": -32602, "message": "Invalid params", "data": {"path": ["params", "_meta"]}}),
                failed(-32602, "discover_failed", json!("Invalid params")),
            ),
        ];
        for (name, error, want) in table {
            assert_eq!(decide(ProbeAnswer::Error(&error)), want, "{name}");
        }
    }

    #[test]
    fn answers_that_say_nothing_about_the_era() {
        let not_discover = json!({"tools": []});
        let cases = [
            (
                decide(ProbeAnswer::Result(&not_discover)),
                failed(
                    -32603,
                    "discover_failed",
                    json!("the discover result is not a DiscoverResult"),
                ),
            ),
            (
                decide(ProbeAnswer::NoReply),
                Era::Legacy(LegacySign::NoReply),
            ),
            (
                decide(ProbeAnswer::HttpNoReply {
                    limit: std::time::Duration::from_millis(1500),
                }),
                failed(
                    -32603,
                    "discover_failed",
                    json!("no answer to server/discover within its time limit of 1.5 s"),
                ),
            ),
            (
                decide(ProbeAnswer::Closed),
                Era::Error(Cause::UpstreamExited.error(None)),
            ),
            (
                decide(ProbeAnswer::Invalid),
                failed(
                    -32603,
                    "discover_failed",
                    json!("the upstream sent an invalid response"),
                ),
            ),
            (
                decide(ProbeAnswer::Busy),
                Era::Error(Cause::UpstreamBusy.error(None)),
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn every_kind_of_http_answer() {
        let modern = json!({"code": -32022, "message": "Unsupported protocol version"});
        let meta = json!({"code": -32602, "message": "Missing _meta"});
        let not_found = json!({"code": -32601, "message": "Method not found"});
        let not_init = json!({"code": -32000, "message": "Bad Request: Server not initialized"});
        let http = |status, body| decide(ProbeAnswer::Http(HttpAnswer { status, body }));
        let legacy_status = |status| Era::Legacy(LegacySign::HttpStatus { status });
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
            // TS SDK 1.x Streamable HTTP without a session (server-everything).
            (http(400, HttpBody::RpcError(&not_init)), legacy_status(400)),
            (http(400, HttpBody::Empty), legacy_status(400)),
            (http(400, HttpBody::NotJson), legacy_status(400)),
            (http(400, HttpBody::OtherJson), legacy_status(400)),
            (
                http(404, HttpBody::RpcError(&not_found)),
                legacy_status(404),
            ),
            (http(404, HttpBody::Empty), legacy_status(404)),
            (http(405, HttpBody::NotJson), legacy_status(405)),
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
