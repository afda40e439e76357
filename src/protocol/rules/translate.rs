//! Translation between the revisions, without I/O: capability masks, the `initialize` result,
//! the params of a forwarded request and the rules that shape an upstream result for a
//! 2025-11-25 editor. What 2026-07-28 allows and the 2025-11-25 schema refuses is adapted here,
//! never passed through; every adaptation is reported as a [`Note`] for the log.

#[cfg(feature = "internals")]
use super::shape;
use crate::protocol::revisions::errors::{Cause, ErrorCode, ErrorObject};
use crate::protocol::revisions::legacy::{self, Forwarded};
use crate::protocol::revisions::modern::{self, Discovered, RequestMeta};
#[cfg(feature = "internals")]
use crate::protocol::revisions::note::Note;
use crate::protocol::wire::parts::FrameParts;
#[cfg(feature = "internals")]
use crate::protocol::wire::raw::RawResult;
use crate::protocol::wire::raw::{self, Object, Params, RawJson};
use serde_json::{Map, Value, json};

/// Which server capabilities the bridge can honour towards the editor besides plain
/// forwarding. `list_changed` and `subscribe` need the listen stream of the bridge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ReplyMask {
    /// Pass `listChanged` of tools, prompts and resources.
    pub list_changed: bool,
    /// Pass `resources.subscribe`.
    pub subscribe: bool,
}

/// The 2026-07-28 `ClientCapabilities` sent upstream, derived from the editor's 2025-11-25
/// capabilities: `roots` without `listChanged`, `sampling` with `context`/`tools`,
/// `elicitation` with `form`/`url`, `experimental`; never `tasks`.
pub fn upstream_client_capabilities(editor: &Value) -> Value {
    let mut out = Map::new();
    if editor.get("roots").is_some_and(Value::is_object) {
        out.insert("roots".into(), json!({}));
    }
    for (name, subs) in [
        ("sampling", ["context", "tools"]),
        ("elicitation", ["form", "url"]),
    ] {
        if let Some(Value::Object(cap)) = editor.get(name) {
            let kept: Map<String, Value> = subs
                .iter()
                .filter_map(|s| {
                    cap.get(*s)
                        .filter(|v| v.is_object())
                        .map(|v| ((*s).to_string(), v.clone()))
                })
                .collect();
            out.insert(name.into(), Value::Object(kept));
        }
    }
    if let Some(exp) = editor.get("experimental").filter(|v| v.is_object()) {
        out.insert("experimental".into(), exp.clone());
    }
    Value::Object(out)
}

/// The 2025-11-25 `ServerCapabilities` for the editor: the discovered capabilities through the
/// mask of what 2025-11-25 knows and the bridge honours. Never `tasks` or `extensions`.
pub fn editor_server_capabilities(discovered: &Value, mask: ReplyMask) -> Value {
    let mut out = Map::new();
    for name in ["experimental", "logging", "completions"] {
        if let Some(v) = discovered.get(name).filter(|v| v.is_object()) {
            let v = if name == "experimental" {
                v.clone()
            } else {
                json!({})
            };
            out.insert(name.into(), v);
        }
    }
    for name in ["tools", "prompts", "resources"] {
        let Some(cap) = discovered.get(name).filter(|v| v.is_object()) else {
            continue;
        };
        let mut kept = Map::new();
        if mask.list_changed
            && let Some(b) = cap.get("listChanged").filter(|v| v.is_boolean())
        {
            kept.insert("listChanged".into(), b.clone());
        }
        if name == "resources"
            && mask.subscribe
            && let Some(b) = cap.get("subscribe").filter(|v| v.is_boolean())
        {
            kept.insert("subscribe".into(), b.clone());
        }
        out.insert(name.into(), Value::Object(kept));
    }
    Value::Object(out)
}

/// The `initialize` result (2025-11-25 lifecycle): the bridge's protocol version, the masked
/// capabilities, `serverInfo` from discover (else `fallback_info`) and `instructions`.
pub fn initialize_result(discovered: &Discovered, fallback_info: &Value, mask: ReplyMask) -> Value {
    let mut out = Map::new();
    out.insert("protocolVersion".into(), legacy::PROTOCOL_VERSION.into());
    out.insert(
        "capabilities".into(),
        editor_server_capabilities(&discovered.capabilities, mask),
    );
    out.insert(
        "serverInfo".into(),
        discovered
            .server_info
            .clone()
            .unwrap_or_else(|| fallback_info.clone()),
    );
    if let Some(i) = &discovered.instructions {
        out.insert("instructions".into(), i.clone().into());
    }
    Value::Object(out)
}

/// Whether an editor `_meta` key goes upstream: `traceparent`, `tracestate`, `baggage`, and
/// `vscode.*` keys, except keys whose prefix is reserved (second label `mcp` or
/// `modelcontextprotocol`, such as `vscode.mcp/`). `progressToken` is handled apart.
pub fn is_passed_meta_key(key: &str) -> bool {
    if matches!(key, "traceparent" | "tracestate" | "baggage") {
        return true;
    }
    if !key.starts_with("vscode.") && !key.starts_with("vscode/") {
        return false;
    }
    match key.split_once('/') {
        Some((prefix, _)) => !matches!(
            prefix.split('.').nth(1),
            Some("mcp" | "modelcontextprotocol")
        ),
        None => true,
    }
}

/// The params of a forwarded request, and the editor's progress token.
#[derive(Clone, Debug, PartialEq)]
pub struct Forward {
    /// The params to send upstream, with the full 2026-07-28 `_meta`; every member but
    /// `_meta` keeps the editor's bytes (`arguments` passes raw: numbers keep their text).
    pub params: Object,
    /// The editor's `progressToken` (string or integer), if it sent one.
    pub editor_progress_token: Option<Value>,
}

/// The required 2026-07-28 `_meta` keys of every forwarded request
/// ([`RequestMeta::write_into`]), serialized once: the Frontend keeps them until the editor's
/// log level changes, so a request costs no clone and no serialization of them.
#[derive(Clone, Debug, PartialEq)]
pub struct MetaKeys {
    /// The members' text, `"k":v,...` (no braces), written once.
    text: Vec<u8>,
}

impl MetaKeys {
    /// The keys of `meta`, in [`RequestMeta::write_into`]'s order.
    pub fn of(meta: &RequestMeta) -> MetaKeys {
        let mut required = Map::new();
        meta.write_into(&mut required);
        let mut text = FrameParts::new();
        for (i, (k, v)) in required.iter().enumerate() {
            text.push_key(i == 0, k);
            text.push_raw(&RawJson::from_value(v));
        }
        MetaKeys {
            text: text.to_vec(),
        }
    }
}

/// Bytes a forwarded request's `_meta` has room for beyond the required keys before its buffer
/// grows (the editor's trace keys and the progress token, usually).
const META_BYTES: usize = 128;

/// Builds the params of a forwarded request: missing params
/// become `{}`; `task`, `inputResponses`, `requestState` and foreign `_meta` keys are removed;
/// the required `_meta` keys are added; the editor's progress token is replaced by the token
/// `upstream_progress_token` gives (the bridge routes progress back itself; called only when
/// the editor sent a token, so a request without one makes no token). Works on raw members:
/// every other member, and every `_meta` key that passes, keeps the editor's bytes.
///
/// Errors: [`Cause::InvalidParams`] when params are not an object.
pub fn forward_params(
    params: Option<Params>,
    meta: &MetaKeys,
    upstream_progress_token: impl FnOnce() -> Option<Value>,
) -> Result<Forward, Cause> {
    let mut p = match params {
        None => Object::default(),
        Some(Params::Object(o)) => o,
        Some(Params::Other(_)) => return Err(Cause::InvalidParams),
    };
    p.remove("task");
    p.remove("inputResponses");
    p.remove("requestState");
    let editor_meta = p
        .remove("_meta")
        .and_then(|m| raw::members(&m))
        .unwrap_or_default();
    let editor_progress_token = raw::member(&editor_meta, modern::META_PROGRESS_TOKEN)
        .and_then(RawJson::to_value)
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64());
    // `_meta` written into one buffer: the editor's keys that pass, the required keys (their
    // text made once), the bridge's progress token.
    let mut out = FrameParts::with_capacity(META_BYTES + meta.text.len());
    out.push(b"{");
    let mut first = true;
    for (k, v) in editor_meta.iter().filter(|(k, _)| is_passed_meta_key(k)) {
        out.push_key(first, k);
        out.push_raw(v);
        first = false;
    }
    if !meta.text.is_empty() {
        if !first {
            out.push(b",");
        }
        out.push(&meta.text);
        first = false;
    }
    if editor_progress_token.is_some()
        && let Some(t) = upstream_progress_token()
    {
        out.push_key(first, modern::META_PROGRESS_TOKEN);
        out.push_value(&t);
    }
    out.push(b"}");
    p.insert("_meta", RawJson::from_parts(out));
    Ok(Forward {
        params: p,
        editor_progress_token,
    })
}

/// Shapes a complete upstream result for the editor.
///
/// Every result loses `resultType`, `ttlMs`, `cacheScope` and the server info in `_meta`; a
/// list result loses a `nextCursor` that is not a string; a `tools/call` result always has a
/// `content` array (`[]` for a missing or `null` one; one of another kind is refused), with a
/// text block of the serialized `structuredContent` when it has none, and a non-object
/// `structuredContent` is dropped after that; the items of a list result are
/// repaired, adapted ([`adapt_tool`](super::tool_schema::adapt_tool)) and checked, and those that 2025-11-25 refuses are
/// dropped with a warning ([`list_items::shape_items`](super::list_items::shape_items)).
///
/// The bridge runs these rules on raw text ([`shape::shape_result`]: untouched members keep
/// their bytes); this form on a value tree is theirs for callers with a value.
///
/// Errors: [`Cause::InvalidResponse`] when the result is not an object, or a rule cannot shape
/// it ([`shape::Unusable`]).
#[cfg(feature = "internals")]
pub fn shape_result(
    method: Forwarded,
    result: Value,
    notes: &mut Vec<Note>,
) -> Result<Value, Cause> {
    let members = shape::ResultMembers::read(RawResult::from_value(&result))?;
    shape::shape_result(method, members, None, notes)
        .map_err(|_| Cause::InvalidResponse)?
        .to_value()
        .ok_or(Cause::InvalidResponse)
}

/// Whether an upstream error of a forwarded request is 2026-07-28's resource not found: a
/// `resources/read` error -32602 whose `data.uri` is exactly the `uri` of the request's
/// params (the editor's params, which the bridge forwards unchanged).
pub fn is_resource_not_found(method: Forwarded, params: &Object, error: &ErrorObject) -> bool {
    if method != Forwarded::ResourcesRead || error.code != ErrorCode::INVALID_PARAMS {
        return false;
    }
    let requested = params.get("uri").and_then(RawJson::to_str);
    let reported = error
        .data
        .as_ref()
        .and_then(|d| d.get("uri"))
        .and_then(Value::as_str);
    requested.is_some() && requested.as_deref() == reported
}

/// Adapts an upstream error (as [`relay_upstream_error`](crate::protocol::revisions::errors::relay_upstream_error)
/// gives it) for a 2025-11-25 editor: resource not found ([`is_resource_not_found`]) gets
/// code -32002 ([`ErrorCode::RESOURCE_NOT_FOUND`]) with the upstream message and data; every
/// other error, also every other -32602, is unchanged.
pub fn adapt_error(method: Forwarded, params: &Object, mut error: ErrorObject) -> ErrorObject {
    if is_resource_not_found(method, params, &error) {
        error.code = ErrorCode::RESOURCE_NOT_FOUND;
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::revisions::note::LineLevel;
    use crate::protocol::rules::tool_schema::adapt_tool;

    fn meta() -> RequestMeta {
        RequestMeta {
            protocol_version: "2026-07-28".into(),
            client_capabilities: json!({"elicitation": {}}),
            client_info: Some(json!({"name": "b", "version": "1"})),
            log_level: None,
        }
    }

    #[test]
    fn client_capabilities_take_the_2026_shape() {
        let editor = json!({
            "roots": {"listChanged": true},
            "sampling": {"tools": {}, "other": 1},
            "elicitation": {"form": {}, "url": {}},
            "tasks": {"list": {}},
            "experimental": {"x": {}}
        });
        assert_eq!(
            upstream_client_capabilities(&editor),
            json!({"roots": {}, "sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}, "experimental": {"x": {}}})
        );
        assert_eq!(upstream_client_capabilities(&json!({})), json!({}));
        assert_eq!(
            upstream_client_capabilities(&json!({"elicitation": {}})),
            json!({"elicitation": {}})
        );
    }

    #[test]
    fn server_capabilities_are_masked() {
        let up = json!({"tools": {"listChanged": true}, "resources": {"subscribe": true, "listChanged": true},
            "prompts": {}, "logging": {}, "completions": {}, "extensions": {"a/b": {}}, "tasks": {}});
        assert_eq!(
            editor_server_capabilities(&up, ReplyMask::default()),
            json!({"logging": {}, "completions": {}, "tools": {}, "prompts": {}, "resources": {}})
        );
        let full = ReplyMask {
            list_changed: true,
            subscribe: true,
        };
        assert_eq!(
            editor_server_capabilities(&up, full),
            json!({"logging": {}, "completions": {}, "tools": {"listChanged": true}, "prompts": {},
                   "resources": {"listChanged": true, "subscribe": true}})
        );
    }

    #[test]
    fn initialize_result_falls_back_to_the_bridge_identity() {
        let d = Discovered {
            protocol_version: "2026-07-28".into(),
            capabilities: json!({"tools": {}}),
            instructions: None,
            server_info: None,
        };
        let fb = json!({"name": "server", "version": "0.1.0"});
        assert_eq!(
            initialize_result(&d, &fb, ReplyMask::default()),
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": fb})
        );
    }

    #[test]
    fn meta_keys_that_pass() {
        for (k, pass) in [
            ("traceparent", true),
            ("tracestate", true),
            ("baggage", true),
            ("vscode.conversationId", true),
            ("vscode.requestId", true),
            ("vscode.example/x", true),
            ("vscode.mcp/x", false),
            ("vscode.modelcontextprotocol/x", false),
            ("io.modelcontextprotocol/related-task", false),
            ("com.example/x", false),
            ("progressToken", false),
        ] {
            assert_eq!(is_passed_meta_key(k), pass, "{k}");
        }
    }

    #[test]
    fn forwarded_params_follow_the_rule() {
        let editor = json!({"name": "t", "arguments": {"a": 1}, "task": {"ttl": 5}, "requestState": "x",
            "_meta": {"progressToken": 7, "traceparent": "00-a", "vscode.mcp/x": 1, "other": 2}});
        let f = forward_params(
            Some(Params::from_value(&editor)),
            &MetaKeys::of(&meta()),
            || Some(json!("bp-1")),
        )
        .unwrap_or_else(|c| panic!("{c:?}"));
        assert_eq!(f.editor_progress_token, Some(json!(7)));
        assert_eq!(
            f.params.to_value().unwrap_or_default(),
            json!({"name": "t", "arguments": {"a": 1}, "_meta": {
                "traceparent": "00-a",
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                "io.modelcontextprotocol/clientInfo": {"name": "b", "version": "1"},
                "progressToken": "bp-1"
            }})
        );
        // Without the editor's token the bridge makes none (the closure is not called).
        let made = std::cell::Cell::new(false);
        let no_token = forward_params(
            Some(Params::from_value(
                &json!({"name": "t", "_meta": {"traceparent": "00-b"}}),
            )),
            &MetaKeys::of(&meta()),
            || {
                made.set(true);
                Some(json!("bp-2"))
            },
        )
        .unwrap_or_else(|c| panic!("{c:?}"));
        assert!(!made.get());
        assert_eq!(no_token.editor_progress_token, None);
        assert_eq!(
            no_token.params.to_value().unwrap_or_default(),
            json!({"name": "t", "_meta": {
                "traceparent": "00-b",
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                "io.modelcontextprotocol/clientInfo": {"name": "b", "version": "1"}
            }})
        );
        let none = forward_params(None, &MetaKeys::of(&meta()), || None)
            .unwrap_or_else(|c| panic!("{c:?}"));
        assert_eq!(
            none.params.to_value().unwrap_or_default()["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            forward_params(
                Some(Params::from_value(&json!([1]))),
                &MetaKeys::of(&meta()),
                || None
            ),
            Err(Cause::InvalidParams)
        );
    }

    #[test]
    fn result_rules() {
        let mut n = Vec::new();
        let r = json!({"resultType": "complete", "ttlMs": 5, "cacheScope": "public", "tools": [],
            "nextCursor": null, "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "x", "version": "1"}}});
        assert_eq!(
            shape_result(Forwarded::ToolsList, r, &mut n),
            Ok(json!({"tools": []}))
        );
        let r = json!({"structuredContent": {"sum": 3}, "_meta": {"keep": 1}});
        assert_eq!(
            shape_result(Forwarded::ToolsCall, r, &mut n),
            Ok(
                json!({"structuredContent": {"sum": 3}, "_meta": {"keep": 1},
                "content": [{"type": "text", "text": "{\"sum\":3}"}]})
            )
        );
        let r = json!({"content": [], "structuredContent": [1, 2, 3]});
        assert_eq!(
            shape_result(Forwarded::ToolsCall, r, &mut n),
            Ok(json!({"content": [{"type": "text", "text": "[1,2,3]"}]}))
        );
        let r = json!({"content": [{"type": "text", "text": "hi"}], "structuredContent": {"a": 1}});
        assert_eq!(shape_result(Forwarded::ToolsCall, r.clone(), &mut n), Ok(r));
        assert_eq!(
            shape_result(Forwarded::ToolsCall, json!({}), &mut n),
            Ok(json!({"content": []}))
        );
        assert_eq!(
            shape_result(Forwarded::ToolsCall, json!(3), &mut n),
            Err(Cause::InvalidResponse)
        );
        assert_eq!(
            shape_result(Forwarded::ToolsCall, json!({"content": "notalist"}), &mut n),
            Err(Cause::InvalidResponse)
        );
    }

    #[cfg(not(feature = "schema-check"))]
    #[test]
    fn without_schema_check_list_items_are_repaired_and_adapted_but_not_checked() {
        let mut n = Vec::new();
        let r = json!({"tools": [
            {"name": "a", "inputSchema": true, "execution": 5, "annotations": null},
            {"name": "b", "inputSchema": {"type": "array"}}],
            "resultType": "complete"});
        assert_eq!(
            shape_result(Forwarded::ToolsList, r, &mut n),
            Ok(
                json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}},
                {"name": "b", "inputSchema": {"type": "array", "items": {}}}]})
            )
        );
    }

    /// The items against the 2025-11-25 schema (feature `schema-check`).
    #[cfg(feature = "schema-check")]
    #[test]
    fn list_items_are_repaired_adapted_then_checked() {
        let mut n = Vec::new();
        let r = json!({"tools": [
            {"name": "a", "inputSchema": true, "execution": 5, "annotations": null},
            {"name": "b", "inputSchema": {"type": "array"}},
            {"name": "c", "inputSchema": {"type": "object", "properties": {"x": true}}}],
            "resultType": "complete"});
        assert_eq!(
            shape_result(Forwarded::ToolsList, r, &mut n),
            Ok(
                json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}},
                {"name": "c", "inputSchema": {"type": "object", "properties": {"x": {}}}}]})
            )
        );
        let warned: Vec<&str> = n
            .iter()
            .filter(|n| n.level == LineLevel::Warn)
            .map(|n| n.text.as_str())
            .collect();
        assert_eq!(
            warned,
            vec![
                "tools/list: tool \"b\": dropped, the 2025-11-25 schema refuses it: /inputSchema/type: \"object\" was expected"
            ]
        );
        let r = json!({"prompts": [{"name": "p", "title": null}, {"title": "no name"}]});
        assert_eq!(
            shape_result(Forwarded::PromptsList, r, &mut n),
            Ok(json!({"prompts": [{"name": "p"}]}))
        );
        let call = json!({"content": [], "tools": [5]});
        assert_eq!(
            shape_result(Forwarded::ToolsCall, call.clone(), &mut n),
            Ok(call)
        );
    }

    #[test]
    fn tool_schemas_are_adapted() {
        let mut n = Vec::new();
        let mut tool = json!({"name": "t", "inputSchema": {"type": "object", "properties": {
            "list": {"type": "array"}, "yes": true, "no": false,
            "nested": {"type": "object", "properties": {"inner": {"type": ["array", "null"]}}}}},
            "outputSchema": {"type": "array"}});
        adapt_tool(&mut tool, &mut n);
        assert_eq!(
            tool,
            json!({"name": "t", "inputSchema": {"type": "object", "properties": {
                "list": {"type": "array", "items": {}}, "yes": {}, "no": {"not": {}},
                "nested": {"type": "object", "properties": {"inner": {"type": ["array", "null"], "items": {}}}}}}})
        );
        assert_eq!(n.iter().filter(|n| n.level == LineLevel::Info).count(), 2);
        assert_eq!(n.len(), 5);
        let mut ok = json!({"name": "o", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}});
        let before = ok.clone();
        adapt_tool(&mut ok, &mut n);
        assert_eq!(ok, before);
    }

    /// Runs `adapt_tool` on a tool with this inputSchema and this outputSchema.
    fn adapted(input: Value, output: Option<Value>) -> (Value, Option<Value>, Vec<Note>) {
        let mut tool = json!({"name": "t", "inputSchema": input});
        if let Some(o) = output {
            tool["outputSchema"] = o;
        }
        let mut n = Vec::new();
        adapt_tool(&mut tool, &mut n);
        (
            tool["inputSchema"].clone(),
            tool.get("outputSchema").cloned(),
            n,
        )
    }

    /// Each (schema, adapted) of `table`, as a tool's `inputSchema` and as its `outputSchema`.
    fn adapts_as_input_and_output_schema<const N: usize>(table: [(Value, Value); N]) {
        for (input, want) in table {
            let (got, _, _) = adapted(input.clone(), None);
            assert_eq!(got, want, "inputSchema {input}");
            let (_, got, _) = adapted(json!({"type": "object"}), Some(input.clone()));
            assert_eq!(got, Some(want), "outputSchema {input}");
        }
    }

    #[test]
    fn null_schema_members_become_their_empty_form_or_are_dropped() {
        let table = [
            // The two seen cases.
            (
                json!({"type": "object", "properties": null}),
                json!({"type": "object", "properties": {}}),
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": null}),
                json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            ),
            // Every null member that is not data is dropped; const and default keep null.
            (
                json!({"type": "object", "description": null, "additionalProperties": null,
                       "title": null, "$schema": "https://json-schema.org/draft/2020-12/schema"}),
                json!({"type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema"}),
            ),
            (
                json!({"type": "object", "properties": {"n": {"const": null, "default": null, "enum": null}}}),
                json!({"type": "object", "properties": {"n": {"const": null, "default": null}}}),
            ),
            // At any depth: properties, items, anyOf/oneOf/allOf, not, $defs, additionalProperties.
            (
                json!({"type": "object", "properties": {
                    "a": {"type": "object", "properties": null, "required": null},
                    "b": {"type": "array", "items": {"type": "object", "properties": {"c": null}}},
                    "d": {"anyOf": [null, {"type": "string", "format": null}]},
                    "e": {"oneOf": [null]},
                    "f": {"not": {"type": null}},
                    "g": {"type": "object", "additionalProperties": {"type": "integer", "minimum": null}},
                    "h": null
                }, "$defs": {"x": null, "y": {"type": "object", "properties": null}}}),
                json!({"type": "object", "properties": {
                    "a": {"type": "object", "properties": {}},
                    "b": {"type": "array", "items": {"type": "object", "properties": {"c": {}}}},
                    "d": {"anyOf": [{"type": "string"}]},
                    "e": {},
                    "f": {"not": {}},
                    "g": {"type": "object", "additionalProperties": {"type": "integer"}},
                    "h": {}
                }, "$defs": {"x": {}, "y": {"type": "object", "properties": {}}}}),
            ),
            // A null items is dropped, then the array rule gives items: {}; positions stay.
            (
                json!({"type": "object", "properties": {"l": {"type": "array", "items": null},
                       "t": {"type": "array", "prefixItems": [null, {"type": "string"}], "items": false},
                       "u": {"type": "array", "items": [null, {"type": "integer"}]}}}),
                json!({"type": "object", "properties": {"l": {"type": "array", "items": {}},
                       "t": {"type": "array", "prefixItems": [{}, {"type": "string"}], "items": false},
                       "u": {"type": "array", "items": [{}, {"type": "integer"}]}}}),
            ),
            // Nothing to do: unchanged.
            (
                json!({"type": "object", "properties": {"q": {"type": ["string", "null"], "default": null}},
                       "required": ["q"]}),
                json!({"type": "object", "properties": {"q": {"type": ["string", "null"], "default": null}},
                       "required": ["q"]}),
            ),
        ];
        adapts_as_input_and_output_schema(table);
    }

    #[test]
    fn properties_and_required_take_the_2025_shape() {
        let table = [
            (
                json!({"type": "object", "properties": 5, "required": "a"}),
                json!({"type": "object"}),
            ),
            (
                json!({"type": "object", "properties": [], "required": {"a": 1}}),
                json!({"type": "object"}),
            ),
            (
                json!({"type": "object", "properties": {"a": 1, "b": "x", "c": [], "d": true, "e": false},
                       "required": ["a", 1, null, "b", {}]}),
                json!({"type": "object", "properties": {"a": {}, "b": {}, "c": {}, "d": {}, "e": {"not": {}}},
                       "required": ["a", "b"]}),
            ),
            (
                json!({"type": "object", "properties": {"o": {"type": "object", "properties": 1, "required": [2]}}}),
                json!({"type": "object", "properties": {"o": {"type": "object", "required": []}}}),
            ),
        ];
        adapts_as_input_and_output_schema(table);
    }

    #[test]
    fn each_adaptation_is_noted_with_its_path() {
        let (_, _, n) = adapted(
            json!({"type": "object", "properties": {"a": {"type": "array", "items": null}}, "required": null}),
            None,
        );
        let texts: Vec<(bool, &str)> = n
            .iter()
            .map(|n| (n.level == LineLevel::Info, n.text.as_str()))
            .collect();
        assert_eq!(
            texts,
            vec![
                (
                    false,
                    "tools/list: tool \"t\": inputSchema: dropped a null \"required\""
                ),
                (
                    false,
                    "tools/list: tool \"t\": inputSchema/properties/a: dropped a null \"items\""
                ),
                (
                    true,
                    "tools/list: tool \"t\": inputSchema/properties/a: an array schema without items got items: {}"
                ),
            ]
        );
    }

    #[test]
    fn execution_is_dropped_whatever_its_value() {
        for execution in [
            json!({"taskSupport": "optional"}),
            json!({"taskSupport": "always"}),
            json!(null),
            json!(5),
            json!("required"),
        ] {
            let mut tool =
                json!({"name": "t", "inputSchema": {"type": "object"}, "execution": execution});
            let mut n = Vec::new();
            adapt_tool(&mut tool, &mut n);
            assert_eq!(
                tool,
                json!({"name": "t", "inputSchema": {"type": "object"}}),
                "{execution}"
            );
            assert_eq!(
                n,
                vec![Note {
                    level: LineLevel::Debug,
                    text: "tools/list: tool \"t\": dropped execution (the bridge offers no tasks)"
                        .into()
                }]
            );
        }
    }

    #[test]
    fn resource_not_found_becomes_32002_only_for_the_requested_uri() {
        let read =
            Object::from_value(&json!({"uri": "file:///a.txt", "_meta": {"progressToken": 1}}))
                .unwrap_or_default();
        let nf = json!({"code": -32602, "message": "Resource not found", "data": {"uri": "file:///a.txt"}});
        let table = [
            (
                Forwarded::ResourcesRead,
                nf.clone(),
                json!({"code": -32002, "message": "Resource not found", "data": {"uri": "file:///a.txt"}}),
            ),
            // Another URI, no data, no uri, a non-string uri, another code, another method.
            (
                Forwarded::ResourcesRead,
                json!({"code": -32602, "message": "m", "data": {"uri": "file:///b.txt"}}),
                json!({"code": -32602, "message": "m", "data": {"uri": "file:///b.txt"}}),
            ),
            (
                Forwarded::ResourcesRead,
                json!({"code": -32602, "message": "bad cursor"}),
                json!({"code": -32602, "message": "bad cursor"}),
            ),
            (
                Forwarded::ResourcesRead,
                json!({"code": -32602, "message": "m", "data": {"url": "file:///a.txt"}}),
                json!({"code": -32602, "message": "m", "data": {"url": "file:///a.txt"}}),
            ),
            (
                Forwarded::ResourcesRead,
                json!({"code": -32602, "message": "m", "data": {"uri": ["file:///a.txt"]}}),
                json!({"code": -32602, "message": "m", "data": {"uri": ["file:///a.txt"]}}),
            ),
            (
                Forwarded::ResourcesRead,
                json!({"code": -32603, "message": "m", "data": {"uri": "file:///a.txt"}}),
                json!({"code": -32603, "message": "m", "data": {"uri": "file:///a.txt"}}),
            ),
            (Forwarded::ToolsCall, nf.clone(), nf.clone()),
            (Forwarded::PromptsGet, nf.clone(), nf.clone()),
        ];
        for (method, raw, want) in table {
            let error = ErrorObject::from_value(&raw).expect("an error object of the table");
            assert_eq!(
                is_resource_not_found(method, &read, &error),
                want["code"] == -32002,
                "{method:?} {raw}"
            );
            assert_eq!(
                adapt_error(method, &read, error).to_value(),
                want,
                "{method:?} {raw}"
            );
        }
        assert!(!is_resource_not_found(
            Forwarded::ResourcesRead,
            &Object::default(),
            &ErrorObject::invalid_params("m").with_data(json!({"uri": null}))
        ));
    }
}
