//! The headers of one POST to a 2026-07-28 server (2026-07-28 basic/transports/http,
//! "Standard headers"), and the check of the headers a user may add (`--header`,
//! `--header-env`): the ones the bridge or HTTP sets are refused.

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::probe::Outgoing;
use crate::protocol::rules::remote::{self, HeaderParam};

/// `Accept` of every POST: both response kinds (the spec's MUST).
pub const ACCEPT_BOTH: &str = "application/json, text/event-stream";
/// `MCP-Protocol-Version`: equal to the `_meta` protocol version of the body.
pub const PROTOCOL_VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// `Mcp-Method`: the JSON-RPC method.
pub const METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
/// `Mcp-Name`: `params.name` or `params.uri` of `tools/call`, `prompts/get`, `resources/read`.
pub const NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");

/// Headers of [`for_message`] besides the user's and the `Mcp-Param-*` ones: `Accept`,
/// `Content-Type`, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (the map's first room).
const STANDARD_HEADERS: usize = 5;

/// Header names a user may not set: what HTTP or the bridge sets, and every `Mcp-*` name.
const REFUSED: &[&str] = &[
    "host",
    "content-type",
    "content-length",
    "accept",
    "accept-encoding",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "expect",
    "proxy-authorization",
    "proxy-connection",
    "last-event-id",
];

/// Names that usually carry a secret: given with `--header`, they get a warning (the command
/// line shows in process lists and editor logs; `--header-env` is the way).
const SECRET_LIKE: &[&str] = &["authorization", "cookie", "x-api-key", "api-key"];

/// Why a header name a user gives is refused: each names the header as typed, never a value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// A header that the bridge or HTTP itself sets (`Mcp-*`, `Content-Length`, ...).
    #[error("the header {0} is set by the bridge or by HTTP and cannot be given")]
    Reserved(String),
    /// Not an RFC 9110 field name.
    #[error("{0:?} is not a header name")]
    NotAName(String),
}

/// Checks a header name a user gives. Errors: [`HeaderError`].
pub fn check_user_header(name: &str) -> Result<HeaderName, HeaderError> {
    let lower = name.to_ascii_lowercase();
    if REFUSED.contains(&lower.as_str()) || lower.starts_with("mcp-") {
        return Err(HeaderError::Reserved(name.to_owned()));
    }
    HeaderName::from_bytes(lower.as_bytes()).map_err(|_| HeaderError::NotAName(name.to_owned()))
}

/// Whether a header name usually carries a secret (a warning for `--header`).
pub fn looks_secret(name: &HeaderName) -> bool {
    let n = name.as_str();
    SECRET_LIKE.contains(&n) || n.contains("token") || n.contains("secret") || n.contains("key")
}

fn value(text: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(text).ok()
}

/// The headers of the POST of `msg` (a request or notification, read by
/// [`Outgoing::read`]): `Accept`, `Content-Type`, `MCP-Protocol-Version` from `params._meta`,
/// `Mcp-Method`, `Mcp-Name`, the `Mcp-Param-*` of a `tools/call` whose tool has annotations
/// (`tool_params`), then the user's headers.
pub fn for_message(
    msg: &Outgoing<'_>,
    tool_params: Option<&[HeaderParam]>,
    user: &[(HeaderName, HeaderValue)],
) -> HeaderMap {
    let mut h = HeaderMap::with_capacity(STANDARD_HEADERS + user.len());
    h.insert(ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(v) = msg.protocol_version.as_deref().and_then(value) {
        h.insert(PROTOCOL_VERSION_HEADER, v);
    }
    if let Some(v) = value(&remote::header_value(&msg.method)) {
        h.insert(METHOD_HEADER, v);
    }
    if let Some(v) = msg
        .mcp_name()
        .map(remote::header_value)
        .as_deref()
        .and_then(value)
    {
        h.insert(NAME_HEADER, v);
    }
    if let Some(tp) = tool_params {
        // Read into a value only for a tool with annotations (numbers keep their text).
        let args = msg
            .arguments
            .and_then(|a| serde_json::from_str::<Value>(a.get()).ok())
            .unwrap_or(Value::Null);
        for (name, text) in remote::param_headers(tp, &args) {
            if let (Ok(n), Some(v)) = (HeaderName::from_bytes(name.as_bytes()), value(&text)) {
                h.insert(n, v);
            }
        }
    }
    for (n, v) in user {
        h.append(n.clone(), v.clone());
    }
    h
}

/// The `Authorization` header of a bearer token (sensitive: never logged).
pub fn bearer(token: &str) -> Option<(HeaderName, HeaderValue)> {
    let mut v = HeaderValue::from_str(&format!("Bearer {token}")).ok()?;
    v.set_sensitive(true);
    Some((AUTHORIZATION, v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pairs(h: &HeaderMap) -> Vec<(String, String)> {
        h.iter()
            .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("?").to_string()))
            .collect()
    }

    #[test]
    fn a_tools_call_carries_every_standard_header() {
        let text = serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "météo", "arguments": {"region": "eu"},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}),
        )
        .unwrap_or_default();
        let msg = Outgoing::read(&text).unwrap_or_default();
        let tp = remote::header_params(&json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}))
        .unwrap_or_default();
        let user = vec![(
            HeaderName::from_static("x-team"),
            HeaderValue::from_static("a"),
        )];
        assert_eq!(
            pairs(&for_message(&msg, Some(&tp), &user)),
            vec![
                (
                    "accept".into(),
                    "application/json, text/event-stream".into()
                ),
                ("content-type".into(), "application/json".into()),
                ("mcp-protocol-version".into(), "2026-07-28".into()),
                ("mcp-method".into(), "tools/call".into()),
                ("mcp-name".into(), "=?base64?bcOpdMOpbw==?=".into()),
                ("mcp-param-region".into(), "eu".into()),
                ("x-team".into(), "a".into()),
            ]
        );
    }

    #[test]
    fn headers_the_bridge_or_http_sets_are_refused() {
        for name in [
            "Host",
            "content-type",
            "Accept",
            "Mcp-Method",
            "MCP-Protocol-Version",
            "mcp-param-x",
            "Proxy-Authorization",
            "Content-Length",
            "Transfer-Encoding",
        ] {
            assert_eq!(
                check_user_header(name)
                    .map_err(|e| e.to_string())
                    .map(|_| ()),
                Err(format!(
                    "the header {name} is set by the bridge or by HTTP and cannot be given"
                )),
                "{name}"
            );
        }
        assert_eq!(
            check_user_header("bad name")
                .map_err(|e| e.to_string())
                .map(|_| ()),
            Err("\"bad name\" is not a header name".into())
        );
        assert_eq!(
            check_user_header("Authorization").map(|n| n.to_string()),
            Ok("authorization".into())
        );
        assert!(looks_secret(&HeaderName::from_static("authorization")));
        assert!(looks_secret(&HeaderName::from_static("x-api-key")));
        assert!(!looks_secret(&HeaderName::from_static("x-team")));
    }
}
