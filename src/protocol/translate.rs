//! Translation between the revisions, without I/O: capability masks, the `initialize` result,
//! the params of a forwarded request and the rules that shape an upstream result for a
//! 2025-11-25 editor. What 2026-07-28 allows and the 2025-11-25 schema refuses is adapted here,
//! never passed through; every adaptation is reported as a [`Note`] for the log.

use super::errors::Cause;
use super::legacy::{self, Forwarded};
use super::modern::{self, Discovered, RequestMeta};
use serde_json::{Map, Value, json};

/// A line for the log about an adaptation of a result (the actor writes it; this layer has no
/// logger).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// True for an info line, false for a debug line.
    pub info: bool,
    /// What was changed, without any content of the message.
    pub text: String,
}

fn debug(notes: &mut Vec<Note>, text: String) {
    notes.push(Note { info: false, text });
}

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
    /// The params to send upstream, with the full 2026-07-28 `_meta`.
    pub params: Value,
    /// The editor's `progressToken` (string or integer), if it sent one.
    pub editor_progress_token: Option<Value>,
}

/// Builds the params of a forwarded request (the reference's forwarding rule): missing params
/// become `{}`; `task`, `inputResponses`, `requestState` and foreign `_meta` keys are removed;
/// the required `_meta` keys are added; the editor's progress token is replaced by
/// `upstream_progress_token` (the bridge routes progress back itself).
///
/// Errors: [`Cause::InvalidParams`] when params are not an object.
pub fn forward_params(
    params: Option<&Value>,
    meta: &RequestMeta,
    upstream_progress_token: Option<Value>,
) -> Result<Forward, Cause> {
    let mut p = match params {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(Cause::InvalidParams),
    };
    p.remove("task");
    p.remove("inputResponses");
    p.remove("requestState");
    let editor_meta = match p.remove("_meta") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let editor_progress_token = editor_meta
        .get(modern::META_PROGRESS_TOKEN)
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
        .cloned();
    let mut out_meta: Map<String, Value> = editor_meta
        .into_iter()
        .filter(|(k, _)| is_passed_meta_key(k))
        .collect();
    meta.write_into(&mut out_meta);
    if editor_progress_token.is_some()
        && let Some(t) = upstream_progress_token
    {
        out_meta.insert(modern::META_PROGRESS_TOKEN.into(), t);
    }
    p.insert("_meta".into(), Value::Object(out_meta));
    Ok(Forward {
        params: Value::Object(p),
        editor_progress_token,
    })
}

/// Shapes a complete upstream result for the editor (the reference's result rules).
///
/// Every result loses `resultType`, `ttlMs`, `cacheScope` and the server info in `_meta`; a
/// list result loses a `nextCursor` that is not a string; a `tools/call` result always has
/// `content`, with a text block of the serialized `structuredContent` when it has none, and a
/// non-object `structuredContent` is dropped after that; `tools/list` schemas are adapted with
/// [`adapt_tool`].
///
/// Errors: [`Cause::InvalidResponse`] when the result is not an object.
pub fn shape_result(
    method: Forwarded,
    result: Value,
    notes: &mut Vec<Note>,
) -> Result<Value, Cause> {
    let Value::Object(mut r) = result else {
        return Err(Cause::InvalidResponse);
    };
    r.remove("resultType");
    r.remove("ttlMs");
    r.remove("cacheScope");
    if let Some(Value::Object(meta)) = r.get_mut("_meta") {
        meta.remove(modern::META_SERVER_INFO);
        if meta.is_empty() {
            r.remove("_meta");
        }
    }
    if method.is_list() && r.get("nextCursor").is_some_and(|c| !c.is_string()) {
        r.remove("nextCursor");
        debug(
            notes,
            format!(
                "{}: dropped a nextCursor that is not a string",
                method.method()
            ),
        );
    }
    match method {
        Forwarded::ToolsCall => shape_call_result(&mut r, notes),
        Forwarded::ToolsList => {
            if let Some(Value::Array(tools)) = r.get_mut("tools") {
                for tool in tools.iter_mut() {
                    adapt_tool(tool, notes);
                }
            }
        }
        _ => {}
    }
    Ok(Value::Object(r))
}

fn shape_call_result(r: &mut Map<String, Value>, notes: &mut Vec<Note>) {
    if !r.get("content").is_some_and(Value::is_array) {
        r.insert("content".into(), Value::Array(Vec::new()));
    }
    let Some(structured) = r.get("structuredContent").cloned() else {
        return;
    };
    let has_text = r.get("content").and_then(Value::as_array).is_some_and(|c| {
        c.iter()
            .any(|b| b.get("type").and_then(Value::as_str) == Some("text"))
    });
    if !has_text && let Some(Value::Array(content)) = r.get_mut("content") {
        content.push(json!({"type": "text", "text": structured.to_string()}));
        debug(
            notes,
            "tools/call: added a text block with the structuredContent".into(),
        );
    }
    if !structured.is_object() {
        r.remove("structuredContent");
        debug(
            notes,
            "tools/call: dropped a structuredContent that is not an object".into(),
        );
    }
}

/// Adapts one tool of a `tools/list` result to the 2025-11-25 `Tool` schema: an array schema
/// without `items` gets `items: {}` (info line); a boolean property schema becomes `{}` (true)
/// or `{"not": {}}` (false); an `outputSchema` whose root is not `type: "object"` is dropped.
pub fn adapt_tool(tool: &mut Value, notes: &mut Vec<Note>) {
    let name = tool
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string();
    let Some(t) = tool.as_object_mut() else {
        return;
    };
    if let Some(schema) = t.get_mut("inputSchema") {
        adapt_schema(schema, &name, "inputSchema", notes);
    }
    let drop_output = t
        .get("outputSchema")
        .is_some_and(|s| s.get("type").and_then(Value::as_str) != Some("object"));
    if drop_output {
        t.remove("outputSchema");
        debug(
            notes,
            format!(
                "tools/list: tool {name:?}: dropped an outputSchema whose root is not an object"
            ),
        );
    } else if let Some(schema) = t.get_mut("outputSchema") {
        adapt_schema(schema, &name, "outputSchema", notes);
    }
}

fn adapt_schema(schema: &mut Value, tool: &str, at: &str, notes: &mut Vec<Note>) {
    let Some(s) = schema.as_object_mut() else {
        return;
    };
    let is_array = match s.get("type") {
        Some(Value::String(t)) => t == "array",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
        _ => false,
    };
    if is_array && !s.contains_key("items") {
        s.insert("items".into(), json!({}));
        notes.push(Note {
            info: true,
            text: format!(
                "tools/list: tool {tool:?}: {at}: an array schema without items got items: {{}}"
            ),
        });
    }
    if let Some(Value::Object(props)) = s.get_mut("properties") {
        for (key, prop) in props.iter_mut() {
            if let Value::Bool(b) = prop {
                *prop = if *b { json!({}) } else { json!({"not": {}}) };
                debug(
                    notes,
                    format!(
                        "tools/list: tool {tool:?}: {at}: property {key:?}: a boolean schema became an object"
                    ),
                );
            }
            adapt_schema(prop, tool, at, notes);
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(sub) = s.get_mut(key) {
            adapt_schema(sub, tool, at, notes);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(subs)) = s.get_mut(key) {
            for sub in subs {
                adapt_schema(sub, tool, at, notes);
            }
        }
    }
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = s.get_mut(key) {
            for sub in defs.values_mut() {
                adapt_schema(sub, tool, at, notes);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> RequestMeta {
        RequestMeta {
            protocol_version: "2026-07-28".into(),
            client_capabilities: json!({"elicitation": {}}),
            client_info: json!({"name": "b", "version": "1"}),
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
        let f = forward_params(Some(&editor), &meta(), Some(json!("bp-1")))
            .unwrap_or_else(|c| panic!("{c:?}"));
        assert_eq!(f.editor_progress_token, Some(json!(7)));
        assert_eq!(
            f.params,
            json!({"name": "t", "arguments": {"a": 1}, "_meta": {
                "traceparent": "00-a",
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                "io.modelcontextprotocol/clientInfo": {"name": "b", "version": "1"},
                "progressToken": "bp-1"
            }})
        );
        let none = forward_params(None, &meta(), None).unwrap_or_else(|c| panic!("{c:?}"));
        assert_eq!(
            none.params["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            forward_params(Some(&json!([1])), &meta(), None),
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
        assert_eq!(n.iter().filter(|n| n.info).count(), 2);
        assert_eq!(n.len(), 5);
        let mut ok = json!({"name": "o", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}});
        let before = ok.clone();
        adapt_tool(&mut ok, &mut n);
        assert_eq!(ok, before);
    }
}
