//! The server's check of the standard headers of one 2026-07-28 POST against its body
//! (2026-07-28 basic/transports/http, "Standard headers" and "Server validation"): the
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers and the `Mcp-Param-*` headers
//! of annotated tool arguments must be present and equal what the body says, after the
//! `=?base64?...?=` decoding, integers compared as numbers. A mismatch is -32020
//! HeaderMismatch (HTTP 400). The inverse of the client's rules in the bridge's `protocol::rules::remote`; nothing
//! here knows HTTP.

use base64::Engine;
use serde_json::{Value, json};

use crate::protocol::revisions::errors::{ErrorCode, ErrorObject};
use crate::protocol::revisions::methods;
use crate::protocol::revisions::modern::META_PROTOCOL_VERSION;
use crate::protocol::rules::remote::{HeaderParam, PARAM_HEADER_PREFIX, ParamType};

/// The header of the protocol version (case-insensitive, as every header name).
pub const PROTOCOL_VERSION_HEADER: &str = "MCP-Protocol-Version";
/// The header of the JSON-RPC method.
pub const METHOD_HEADER: &str = "Mcp-Method";
/// The header of `params.name` (`tools/call`, `prompts/get`) or `params.uri`
/// (`resources/read`).
pub const NAME_HEADER: &str = "Mcp-Name";

const BASE64_START: &str = "=?base64?";
const BASE64_END: &str = "?=";

/// One request header as the transport found it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderText<'a> {
    /// Not sent.
    Absent,
    /// Sent, but not header text (bytes outside visible ASCII, space and tab).
    Invalid,
    /// Sent, with this text.
    Text(&'a str),
}

/// A header value as the client meant it: `=?base64?<Base64>?=` decoded (standard alphabet
/// with its `=` padding) to UTF-8 text, any other value as it is. `None` when the encoded form
/// is not Base64 or not UTF-8.
///
/// The padding is required: RFC 4648 §3.2 makes it part of Base64 unless the referring
/// specification says otherwise, the 2026-07-28 examples carry it, and the test-case table of
/// SEP-2243 (the proposal that defines these headers) lists an unpadded value among those a
/// server rejects.
pub fn decode_header_value(value: &str) -> Option<String> {
    let Some(inner) = value
        .strip_prefix(BASE64_START)
        .and_then(|rest| rest.strip_suffix(BASE64_END))
    else {
        return Some(value.to_owned());
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(inner.trim())
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// The -32020 HeaderMismatch error naming the header and why (the spec defines no `data`:
/// this server says which header, so that a person reading the error can fix the client).
pub fn header_mismatch(header: &str, why: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::HEADER_MISMATCH, "Header mismatch")
        .with_data(json!({ "header": header, "detail": why }))
}

/// Checks the standard headers of one request against its `method` and `params`.
/// `header(name)` gives a header by its name (case-insensitive); `tool_params` gives the
/// `x-mcp-header` annotations of a tool by its name (checked only for `tools/call`).
///
/// What the body does not say is not checked here: a request without
/// `_meta.protocolVersion` or without `params.name` gets its -32602 from the server, which
/// reads the body.
///
/// # Errors
/// The -32020 error of the first header that is missing, not header text, or differs.
pub fn check<'h, 'p>(
    method: &str,
    params: Option<&Value>,
    header: impl Fn(&str) -> HeaderText<'h>,
    tool_params: impl Fn(&str) -> Option<&'p [HeaderParam]>,
) -> Result<(), ErrorObject> {
    let version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION));
    match header(PROTOCOL_VERSION_HEADER) {
        HeaderText::Absent => return Err(header_mismatch(PROTOCOL_VERSION_HEADER, "missing")),
        HeaderText::Invalid => return Err(invalid(PROTOCOL_VERSION_HEADER)),
        HeaderText::Text(text) => {
            if let Some(Value::String(version)) = version
                && text.trim() != version
            {
                return Err(header_mismatch(
                    PROTOCOL_VERSION_HEADER,
                    "differs from params._meta",
                ));
            }
        }
    }
    match header(METHOD_HEADER) {
        HeaderText::Absent => return Err(header_mismatch(METHOD_HEADER, "missing")),
        HeaderText::Invalid => return Err(invalid(METHOD_HEADER)),
        HeaderText::Text(text) if text.trim() != method => {
            return Err(header_mismatch(METHOD_HEADER, "differs from the method"));
        }
        HeaderText::Text(_) => {}
    }
    let name_key = match method {
        methods::TOOLS_CALL | methods::PROMPTS_GET => Some("name"),
        methods::RESOURCES_READ => Some("uri"),
        _ => None,
    };
    if let Some(key) = name_key
        && let Some(Value::String(name)) = params.and_then(|p| p.get(key))
    {
        expect_text(NAME_HEADER, header(NAME_HEADER), name)?;
        if method == methods::TOOLS_CALL
            && let Some(annotated) = tool_params(name)
        {
            let arguments = params.and_then(|p| p.get("arguments"));
            for param in annotated {
                check_param(param, arguments, &header)?;
            }
        }
    }
    Ok(())
}

fn invalid(header: &str) -> ErrorObject {
    header_mismatch(header, "not valid header text")
}

/// A header that must carry `want` (after decoding).
fn expect_text(name: &str, got: HeaderText<'_>, want: &str) -> Result<(), ErrorObject> {
    match got {
        HeaderText::Absent => Err(header_mismatch(name, "missing")),
        HeaderText::Invalid => Err(invalid(name)),
        HeaderText::Text(text) => match decode_header_value(text) {
            None => Err(header_mismatch(name, "not valid Base64 UTF-8")),
            Some(decoded) if decoded == want => Ok(()),
            Some(_) => Err(header_mismatch(name, "differs from the body")),
        },
    }
}

/// One annotated argument: when it is present, not null and of its declared type, its
/// `Mcp-Param-{Name}` header must carry it. A value of another type is left to the tool's
/// schema, as the client leaves its header out.
fn check_param<'h>(
    param: &HeaderParam,
    arguments: Option<&Value>,
    header: &impl Fn(&str) -> HeaderText<'h>,
) -> Result<(), ErrorObject> {
    let mut value = arguments;
    for key in &param.path {
        value = value.and_then(|v| v.get(key));
    }
    let name = format!("{PARAM_HEADER_PREFIX}{}", param.name);
    match (param.kind, value) {
        (ParamType::String, Some(Value::String(text))) => expect_text(&name, header(&name), text),
        (ParamType::Boolean, Some(Value::Bool(flag))) => {
            expect_text(&name, header(&name), if *flag { "true" } else { "false" })
        }
        (ParamType::Integer, Some(Value::Number(number))) => {
            let Some(want) = number.as_i64() else {
                return Ok(());
            };
            match header(&name) {
                HeaderText::Absent => Err(header_mismatch(&name, "missing")),
                HeaderText::Invalid => Err(invalid(&name)),
                HeaderText::Text(text) => {
                    let got = decode_header_value(text).and_then(|t| t.trim().parse::<i64>().ok());
                    if got == Some(want) {
                        Ok(())
                    } else {
                        Err(header_mismatch(&name, "differs from the body"))
                    }
                }
            }
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::rules::remote::header_params;
    use std::collections::HashMap;

    fn params(name: &str, arguments: Value) -> Value {
        json!({"name": name, "arguments": arguments,
               "_meta": {META_PROTOCOL_VERSION: "2026-07-28"}})
    }

    /// `check` with these headers and a tool `t` with annotated `region`, `n`, `dry`.
    fn check_with(
        method: &str,
        params: &Value,
        headers: &[(&str, &str)],
    ) -> Result<(), (i64, Value)> {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry"}}});
        let annotated: HashMap<String, Vec<HeaderParam>> =
            HashMap::from([("t".to_owned(), header_params(&schema).unwrap_or_default())]);
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map_or(HeaderText::Absent, |(_, v)| {
                    if v.bytes().any(|b| b == b'\n') {
                        HeaderText::Invalid
                    } else {
                        HeaderText::Text(v)
                    }
                })
        };
        check(method, Some(params), header, |tool| {
            annotated.get(tool).map(Vec::as_slice)
        })
        .map_err(|e| (e.code.0, e.data.unwrap_or_default()))
    }

    /// Headers sent, then the header and the detail of the error.
    type Case = (
        Vec<(&'static str, &'static str)>,
        &'static str,
        &'static str,
    );

    const BASE: [(&str, &str); 3] = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "t"),
    ];

    #[test]
    fn matching_headers_pass_with_base64_and_numeric_integers() {
        let body = params("t", json!({"region": "eu west ", "n": 42, "dry": false}));
        let mut headers = BASE.to_vec();
        headers.extend([
            ("Mcp-Param-Region", "=?base64?ZXUgd2VzdCA=?="),
            ("mcp-param-n", "042"),
            ("MCP-PARAM-DRY", "false"),
        ]);
        assert_eq!(check_with("tools/call", &body, &headers), Ok(()));
        // An argument that is absent or null needs no header.
        let body = params("t", json!({"region": null}));
        assert_eq!(check_with("tools/call", &body, &BASE), Ok(()));
    }

    #[test]
    fn each_missing_or_different_header_is_a_header_mismatch_naming_it() {
        let body = params("t", json!({"n": 7}));
        let cases: Vec<Case> = vec![
            (vec![], "MCP-Protocol-Version", "missing"),
            (
                vec![("mcp-protocol-version", "2025-11-25")],
                "MCP-Protocol-Version",
                "differs from params._meta",
            ),
            (
                vec![("mcp-protocol-version", "2026-07-28")],
                "Mcp-Method",
                "missing",
            ),
            (
                vec![
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/list"),
                ],
                "Mcp-Method",
                "differs from the method",
            ),
            (BASE[..2].to_vec(), "Mcp-Name", "missing"),
            (
                vec![BASE[0], BASE[1], ("mcp-name", "u")],
                "Mcp-Name",
                "differs from the body",
            ),
            (
                vec![BASE[0], BASE[1], ("mcp-name", "=?base64?!!?=")],
                "Mcp-Name",
                "not valid Base64 UTF-8",
            ),
            (
                vec![BASE[0], BASE[1], ("mcp-name", "a\nb")],
                "Mcp-Name",
                "not valid header text",
            ),
            (BASE.to_vec(), "Mcp-Param-N", "missing"),
            (
                vec![BASE[0], BASE[1], BASE[2], ("mcp-param-n", "8")],
                "Mcp-Param-N",
                "differs from the body",
            ),
        ];
        for (headers, header, detail) in cases {
            assert_eq!(
                check_with("tools/call", &body, &headers),
                Err((-32020, json!({"header": header, "detail": detail}))),
                "{headers:?}"
            );
        }
    }

    #[test]
    fn resources_read_names_its_uri_and_other_methods_need_no_name() {
        let read = json!({"uri": "file:///é", "_meta": {META_PROTOCOL_VERSION: "2026-07-28"}});
        let headers = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "resources/read"),
            ("mcp-name", "=?base64?ZmlsZTovLy/DqQ==?="),
        ];
        assert_eq!(check_with("resources/read", &read, &headers), Ok(()));
        let list = json!({"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}});
        let headers = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ];
        assert_eq!(check_with("tools/list", &list, &headers), Ok(()));
    }

    #[test]
    fn decoding_keeps_plain_values_and_refuses_bad_or_unpadded_base64() {
        assert_eq!(decode_header_value("plain").as_deref(), Some("plain"));
        assert_eq!(
            decode_header_value("=?base64?R3LDvMOfZQ==?=").as_deref(),
            Some("Grüße")
        );
        assert_eq!(decode_header_value("=?base64?R3LDvMOfZQ?="), None);
        assert_eq!(decode_header_value("=?base64?/w==?="), None);
    }
}
