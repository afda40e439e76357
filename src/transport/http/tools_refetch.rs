//! The re-fetch of `tools/list` after a `tools/call` refused with -32020 (HeaderMismatch):
//! 2026-07-28 transports/http: if a `-32020` arrives because of `Mcp-Param-*`, the client
//! SHOULD re-fetch `tools/list` and retry. The annotations the bridge knew came
//! from an older `tools/list`; the server's may have changed since. The HTTP transport
//! (`transport/http/refetch.rs`) fetches the list again (at most [`MAX_PAGES`] pages) and
//! sends the call once more, only when the tool's annotations changed (the same headers
//! would get the same refusal); never a second re-fetch for the same call.

use serde_json::{Map, Value, json};

use crate::protocol::revisions::errors::ErrorCode;
use crate::protocol::rules::remote::HeaderParam;

/// Most pages of `tools/list` one re-fetch reads while it looks for the tool.
pub const MAX_PAGES: usize = 16;

/// The prefix of the `_meta` keys that the spec reserves (protocol version, client info,
/// client capabilities, log level): those of the call go on the re-fetch.
const RESERVED_META_PREFIX: &str = "io.modelcontextprotocol/";

/// True when `error` (a JSON-RPC error object) is -32020 HeaderMismatch.
pub fn is_header_mismatch(error: &Value) -> bool {
    error.get("code").and_then(Value::as_i64) == Some(ErrorCode::HEADER_MISMATCH.0)
}

/// The `tools/list` request of a re-fetch for `call` (a `tools/call` request): id `id`, the
/// reserved `_meta` keys of the call (its other `_meta` keys, such as `progressToken`, and its
/// arguments stay out), and `cursor` for a page after the first.
pub fn list_request(id: &str, call: &Value, cursor: Option<&Value>) -> Value {
    let meta: Map<String, Value> = call
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter(|(k, _)| k.starts_with(RESERVED_META_PREFIX))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    let mut params = json!({"_meta": meta});
    if let Some(c) = cursor {
        params["cursor"] = c.clone();
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params})
}

/// What one page of a re-fetched `tools/list` (after the remote rules dropped the tools with
/// broken annotations) says about the tool `name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// The tool is on this page with these annotations: retry when they differ from `sent`.
    Retry(Vec<HeaderParam>),
    /// The tool is on this page with the annotations the call was sent with: no retry.
    Same,
    /// Not on this page: read the page at this cursor.
    Next(Value),
    /// Not in the list (gone, or dropped for a broken annotation): no retry.
    Missing,
}

/// Reads one page: `tools` the valid tools of the page, `params` their annotations (as
/// `remote::check_tools_list` gave them), `sent` the annotations the failed call used.
pub fn look_up(
    result: &Value,
    name: &str,
    params: Option<&[HeaderParam]>,
    sent: &[HeaderParam],
) -> Found {
    let listed = result
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| {
            t.iter()
                .any(|t| t.get("name").and_then(Value::as_str) == Some(name))
        });
    if listed {
        let now = params.unwrap_or(&[]);
        return if now == sent {
            Found::Same
        } else {
            Found::Retry(now.to_vec())
        };
    }
    match result.get("nextCursor") {
        Some(c) if c.is_string() => Found::Next(c.clone()),
        _ => Found::Missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::rules::remote::ParamType;

    fn region() -> HeaderParam {
        HeaderParam {
            name: "Region".into(),
            path: vec!["region".into()],
            kind: ParamType::String,
        }
    }

    #[test]
    fn only_minus_32020_is_a_header_mismatch() {
        for (error, want) in [
            (json!({"code": -32020, "message": "Header mismatch"}), true),
            (json!({"code": -32022, "message": "Unsupported"}), false),
            (json!({"code": "-32020"}), false),
            (json!({}), false),
        ] {
            assert_eq!(is_header_mismatch(&error), want, "{error}");
        }
    }

    #[test]
    fn the_list_request_keeps_only_the_reserved_meta_keys_of_the_call() {
        let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
            "name": "where", "arguments": {"region": "eu"},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientInfo": {"name": "e", "version": "1"},
                      "progressToken": 7, "other": 1}}});
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                          "io.modelcontextprotocol/clientInfo": {"name": "e", "version": "1"}});
        assert_eq!(
            list_request("r", &call, None),
            json!({"jsonrpc": "2.0", "id": "r", "method": "tools/list", "params": {"_meta": meta}})
        );
        assert_eq!(
            list_request("r", &call, Some(&json!("p2"))),
            json!({"jsonrpc": "2.0", "id": "r", "method": "tools/list",
                   "params": {"_meta": meta, "cursor": "p2"}})
        );
        assert_eq!(
            list_request("r", &json!({"method": "tools/call"}), None)["params"],
            json!({"_meta": {}})
        );
    }

    #[test]
    fn a_page_says_retry_same_next_or_missing() {
        let page = json!({"tools": [{"name": "where"}], "nextCursor": "p2"});
        let sent: Vec<HeaderParam> = vec![];
        assert_eq!(
            look_up(&page, "where", Some(&[region()]), &sent),
            Found::Retry(vec![region()])
        );
        assert_eq!(
            look_up(&page, "where", Some(&[region()]), &[region()]),
            Found::Same
        );
        // Annotations removed on the server: the call goes again without the header.
        assert_eq!(
            look_up(&page, "where", None, &[region()]),
            Found::Retry(vec![])
        );
        assert_eq!(look_up(&page, "where", None, &[]), Found::Same);
        assert_eq!(look_up(&page, "other", None, &[]), Found::Next(json!("p2")));
        assert_eq!(
            look_up(&json!({"tools": []}), "other", None, &[]),
            Found::Missing
        );
        assert_eq!(
            look_up(&json!({"tools": [], "nextCursor": 3}), "x", None, &[]),
            Found::Missing
        );
    }
}
