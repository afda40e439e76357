//! `--bad-list-items`: list items that 2025-11-25 (and 2026-07-28) refuse, among items a
//! client can repair.

use mcp_bridge::server::{Outcome, PromptDef, ResourceDef, ServerBuilder, ToolDef};
use serde_json::{Value, json};

use crate::tool::{add_tool, tool};

/// Tools, prompts and a resource as servers in the wild list them: some a client can repair
/// (an `inputSchema` that is `true` or `null`, `null` optional members), some it must drop.
pub(crate) fn bad_list_items(builder: ServerBuilder) -> ServerBuilder {
    let object = json!({"type": "object"});
    let tools = [
        ToolDef::new("bad_input_true", json!(true)),
        ToolDef::new("bad_array_root", json!({"type": "array"})),
        ToolDef::new("bad_input_null", Value::Null),
        ToolDef::new("bad_nullable_root", json!({"type": ["object", "null"]})),
        ToolDef::new("bad_any_of", json!({"anyOf": [{"type": "object"}]})),
        ToolDef::new("bad_unnamed", object.clone()).listed_without_name(),
        ToolDef::new("bad_null_members", object.clone())
            .annotations(Value::Null)
            .field("title", Value::Null)
            .field("_meta", Value::Null),
        ToolDef::new("bad_title", object).field("title", json!(5)),
    ];
    let mut builder = tools.into_iter().fold(builder, |b, def| {
        add_tool(b, def, tool(|_, _| async move { Ok(Outcome::text("ok")) }))
    });
    for def in [
        PromptDef::new("bad_prompt_arguments").field("arguments", json!([{}])),
        PromptDef::new("bad_prompt_null_title").field("title", Value::Null),
    ] {
        builder = builder.prompt(def, |_, _| async move {
            Ok(Outcome::Complete(json!({"messages": []})))
        });
    }
    builder.resource(
        ResourceDef::new("example://bad", "bad_resource_uri").field("uri", json!(5)),
        |_, _| async move { Ok(Outcome::Complete(json!({"contents": []}))) },
    )
}
