//! Validation of frames against the official MCP schemas (2025-11-25 in `src/protocol/schemas/`,
//! the copy the bridge embeds; 2026-07-28 in `tests/schemas/`): what the bridge writes to the editor against 2025-11-25, what the
//! upstream receives against 2026-07-28.

use jsonschema::Validator;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::OnceLock;

const URI_2025: &str = "https://modelcontextprotocol.io/schema/2025-11-25.json";
const URI_2026: &str = "https://modelcontextprotocol.io/schema/2026-07-28.json";

struct Schemas {
    v2025: HashMap<&'static str, Validator>,
    v2026: HashMap<&'static str, Validator>,
}

const DEFS_2025: &[&str] = &[
    "JSONRPCResultResponse",
    "JSONRPCErrorResponse",
    "ServerNotification",
    "ServerRequest",
    "InitializeResult",
    "ListToolsResult",
    "CallToolResult",
    "ListPromptsResult",
    "GetPromptResult",
    "ListResourcesResult",
    "ListResourceTemplatesResult",
    "ReadResourceResult",
    "CompleteResult",
    "EmptyResult",
];

const DEFS_2026: &[&str] = &[
    "ClientRequest",
    "ClientNotification",
    "JSONRPCResultResponse",
    "JSONRPCErrorResponse",
    "ServerNotification",
    "DiscoverResult",
    "InputRequiredResult",
    "ListToolsResult",
    "CallToolResult",
    "ListPromptsResult",
    "GetPromptResult",
    "ListResourcesResult",
    "ListResourceTemplatesResult",
    "ReadResourceResult",
    "CompleteResult",
    "SubscriptionsListenResult",
];

fn load(path: &str) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    serde_json::from_str(&text).expect("schema is JSON")
}

fn build(uri: &str, schema: Value, defs: &[&'static str]) -> HashMap<&'static str, Validator> {
    let registry = jsonschema::Registry::new()
        .add(uri, schema)
        .expect("add schema")
        .prepare()
        .expect("prepare registry");
    defs.iter()
        .map(|d| {
            let v = jsonschema::draft202012::options()
                .with_registry(&registry)
                .build(&json!({"$ref": format!("{uri}#/$defs/{d}")}))
                .unwrap_or_else(|e| panic!("compile {d}: {e}"));
            (*d, v)
        })
        .collect()
}

fn schemas() -> &'static Schemas {
    static S: OnceLock<Schemas> = OnceLock::new();
    S.get_or_init(|| {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/schemas");
        let dir_2025 = concat!(env!("CARGO_MANIFEST_DIR"), "/src/protocol/schemas");
        Schemas {
            v2025: build(
                URI_2025,
                load(&format!("{dir_2025}/schema-2025-11-25.json")),
                DEFS_2025,
            ),
            v2026: build(
                URI_2026,
                load(&format!("{dir}/schema-2026-07-28.json")),
                DEFS_2026,
            ),
        }
    })
}

fn check(v: &Validator, def: &str, value: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not validate against {def}: {value}\n{}",
        errors.join("\n")
    );
}

fn result_def(method: &str) -> &'static str {
    match method {
        "initialize" => "InitializeResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "completion/complete" => "CompleteResult",
        _ => "EmptyResult",
    }
}

/// Validates a response (`v` has no `method`) against `JSONRPCErrorResponse` or
/// `JSONRPCResultResponse` of `s`; for a result, the method of its request when `methods`
/// knows its id (the caller checks the result against that method's result type).
fn check_response<'m>(
    s: &HashMap<&str, Validator>,
    v: &Value,
    methods: &'m HashMap<String, String>,
    what: &str,
) -> Option<&'m str> {
    if v.get("error").is_some() {
        check(&s["JSONRPCErrorResponse"], "JSONRPCErrorResponse", v, what);
        return None;
    }
    check(
        &s["JSONRPCResultResponse"],
        "JSONRPCResultResponse",
        v,
        what,
    );
    let method = v.get("id").and_then(|id| methods.get(&id.to_string()));
    method.map(String::as_str)
}

/// Validates a frame written to the editor; `methods` maps request ids (as JSON text) to
/// the method of the request, so a result is checked against its own result type.
pub fn validate_to_editor(v: &Value, methods: &HashMap<String, String>) {
    let s = &schemas().v2025;
    let what = "a frame to the editor";
    if v.get("method").is_some() {
        let def = if v.get("id").is_some() {
            "ServerRequest"
        } else {
            "ServerNotification"
        };
        check(&s[def], def, v, what);
    } else if let Some(m) = check_response(s, v, methods, what) {
        let def = result_def(m);
        check(&s[def], def, &v["result"], what);
    }
}

/// Validates a frame the upstream received (the bridge sends requests and notifications).
pub fn validate_to_upstream(v: &Value) {
    let s = &schemas().v2026;
    let def = match (v.get("method"), v.get("id")) {
        (Some(_), Some(_)) => "ClientRequest",
        (Some(_), None) => "ClientNotification",
        // The bridge's answer to a request of the upstream (a `ping`, or -32601).
        (None, _) if v.get("error").is_some() => "JSONRPCErrorResponse",
        (None, _) => "JSONRPCResultResponse",
    };
    check(&s[def], def, v, "a frame to the upstream");
}

/// Validates a frame a 2026-07-28 server wrote to its client; `methods` as in
/// [`validate_to_editor`]. A result is checked against `InputRequiredResult` when its
/// `resultType` says so, else against the result type of its method.
pub fn validate_to_client_2026(v: &Value, methods: &HashMap<String, String>) {
    let s = &schemas().v2026;
    let what = "a frame to the 2026-07-28 client";
    if v.get("method").is_some() {
        check(&s["ServerNotification"], "ServerNotification", v, what);
    } else if let Some(m) = check_response(s, v, methods, what) {
        let def = match m {
            _ if v["result"]["resultType"] == "input_required" => "InputRequiredResult",
            "server/discover" => "DiscoverResult",
            "subscriptions/listen" => "SubscriptionsListenResult",
            m => result_def(m),
        };
        check(&s[def], def, &v["result"], what);
    }
}

/// Asserts that `value` is a valid `$defs/<def>` of the 2026-07-28 schema, its `format`s
/// (`uri`, `date-time`, ...) checked too: what a server writes, checked by its type.
pub fn assert_valid_2026(def: &str, value: &Value) {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    let schema = SCHEMA.get_or_init(|| {
        load(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/schemas/schema-2026-07-28.json"
        ))
    });
    let registry = jsonschema::Registry::new()
        .add(URI_2026, schema.clone())
        .expect("add the schema")
        .prepare()
        .expect("prepare the registry");
    let validator = jsonschema::draft202012::options()
        .with_registry(&registry)
        .should_validate_formats(true)
        .offline()
        .build(&json!({ "$ref": format!("{URI_2026}#/$defs/{def}") }))
        .unwrap_or_else(|e| panic!("compile {def}: {e}"));
    check(&validator, def, value, "a message of the server");
}
