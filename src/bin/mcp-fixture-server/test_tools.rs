//! `--test-tools`: the tools (and two resource templates) that misbehave on purpose for the
//! bridge's tests, registered with their schemas; their handlers live by topic in `process`,
//! `output`, `listens` and `input_requests`.

use mcp_bridge::server::{Outcome, ResourceTemplateDef, RpcError, ServerBuilder, ToolDef};
use serde_json::{Value, json};

use crate::input_requests::{ask_url, roots, sample, script};
use crate::listens::{end_listens, notify};
use crate::output::{
    LARGE_TEXT_MAX_BYTES, chatter, close_stdout, emit, emit_and_exit, garbage_flood, large_text,
    log_flood, progress_flood, respond_raw,
};
use crate::process::{crash, sleep, spawn_grandchild};
use crate::tool::{Failure, Handler, Round, add_tool, object_schema, round, tool};

pub(crate) fn test_tools(builder: ServerBuilder) -> ServerBuilder {
    let empty = || object_schema(json!({}), &[]);
    let integer_schema =
        |name: &str| object_schema(json!({ name: {"type": "integer", "minimum": 0} }), &[name]);
    let string_schema = |name: &str| object_schema(json!({ name: {"type": "string"} }), &[name]);
    let lines = json!({"lines": {"type": "array", "items": {"type": "string"}}});
    let events = json!({"event": {"type": "string", "enum": [
        "tools_list_changed", "prompts_list_changed", "resources_list_changed", "resource_updated"
    ]}, "uri": {"type": "string"}});
    let ends = json!({"how": {"type": "string", "enum": ["result", "cancelled"]}});
    let tools: Vec<(ToolDef, Handler)> = vec![
        (
            ToolDef::new("sleep", integer_schema("ms"))
                .description("Sleeps (cancellable), then answers \"slept\"."),
            tool(sleep),
        ),
        (
            ToolDef::new(
                "crash",
                object_schema(json!({"code": {"type": "integer"}}), &["code"]),
            )
            .description("Exits the process at once with this status, without answering."),
            tool(crash),
        ),
        (
            ToolDef::new("spawn_grandchild", empty())
                .description("Starts `sleep 300` as a child process and returns its pid."),
            tool(spawn_grandchild),
        ),
        (
            ToolDef::new(
                "large_text",
                object_schema(
                    json!({"bytes": {"type": "integer", "minimum": 0, "maximum": LARGE_TEXT_MAX_BYTES}}),
                    &["bytes"],
                ),
            )
            .description("Answers with a text of that many x."),
            tool(large_text),
        ),
        (
            ToolDef::new("close_stdout", empty())
                .description("Closes the server's stdout and keeps running: its answers are lost."),
            tool(close_stdout),
        ),
        (
            ToolDef::new("emit", object_schema(lines, &["lines"]))
                .description("Writes each line to stdout verbatim, then answers \"emitted\"."),
            tool(emit),
        ),
        (
            ToolDef::new(
                "emit_and_exit",
                object_schema(
                    json!({"line": {"type": "string"}, "count": {"type": "integer", "minimum": 0},
                        "code": {"type": "integer"}}),
                    &["line", "count", "code"],
                ),
            )
            .description(
                "Writes the line count times, then its answer, to stdout, then exits with code.",
            ),
            tool(emit_and_exit),
        ),
        (
            ToolDef::new(
                "garbage_flood",
                object_schema(
                    json!({"count": {"type": "integer", "minimum": 0},
                           "stderr_count": {"type": "integer", "minimum": 0},
                           "tag": {"type": "string"}}),
                    &["count", "stderr_count"],
                ),
            )
            .description(
                "Writes `count` lines \"not json <n>\" to stdout and `stderr_count` lines \
                 \"fixture stderr <tag> <n>\" to stderr, then answers \"flooded\".",
            ),
            tool(garbage_flood),
        ),
        (
            ToolDef::new("progress_flood", integer_schema("count"))
                .description("Sends `count` progress notifications as fast as possible."),
            tool(progress_flood),
        ),
        (
            ToolDef::new(
                "chatter",
                object_schema(
                    json!({"interval_ms": {"type": "integer", "minimum": 1},
                           "late": {"type": "integer", "minimum": 0}}),
                    &["interval_ms", "late"],
                ),
            )
            .description(
                "Sends progress and an info log message \"tick <n>\" every interval_ms until \
                 cancelled; never answers. Once cancelled it still writes `late` progress and \
                 log messages \"late <n>\", then publishes a tools list change.",
            ),
            tool(chatter),
        ),
        (
            ToolDef::new("log_flood", integer_schema("count"))
                .description("Sends `count` log messages (info) as fast as possible."),
            tool(log_flood),
        ),
        (
            ToolDef::new("structured_array", empty())
                .description("structuredContent [1,2,3] and an empty content array."),
            tool(|_, _| async {
                let result = json!({"content": [], "structuredContent": [1, 2, 3]});
                Ok(Outcome::Complete(result))
            }),
        ),
        (
            ToolDef::new(
                "schema_array_without_items",
                object_schema(json!({"list": {"type": "array"}}), &[]),
            )
            .description("Its inputSchema has an array property without items."),
            tool(|_, _| async { Ok(Outcome::text("ok")) }),
        ),
        (
            ToolDef::new(
                "schema_boolean_properties",
                object_schema(json!({"flag": true, "never": false}), &[]),
            )
            .description("Its inputSchema has boolean property schemas."),
            tool(|_, _| async { Ok(Outcome::text("ok")) }),
        ),
        (
            ToolDef::new("schema_array_output", empty())
                .description("Its outputSchema root is an array.")
                .output_schema(json!({"type": "array"})),
            tool(|_, _| async {
                Ok(Outcome::Complete(json!({
                    "content": [{"type": "text", "text": "[1,2,3]"}],
                    "structuredContent": [1, 2, 3],
                })))
            }),
        ),
        (
            ToolDef::new(
                "schema_null_members",
                json!({"type": "object", "properties": null, "required": null}),
            )
            .description("Its inputSchema has null properties and required."),
            tool(|_, _| async { Ok(Outcome::text("ok")) }),
        ),
        (
            ToolDef::new("schema_nested_nulls", nested_nulls_input())
                .description("Null members deep in its input and output schemas.")
                .output_schema(json!({
                    "type": "object",
                    "properties": {"ok": {"type": "boolean", "description": null}},
                    "required": null,
                    "additionalProperties": null
                })),
            tool(|_, _| async {
                Ok(Outcome::Complete(json!({
                    "content": [{"type": "text", "text": "{\"ok\":true}"}],
                    "structuredContent": {"ok": true},
                })))
            }),
        ),
        (
            ToolDef::new("notify", object_schema(events, &["event"]))
                .description("Publishes an event to open listens."),
            tool(notify),
        ),
        (
            ToolDef::new("end_listens", object_schema(ends, &["how"]))
                .description("Ends every open listen from the server side."),
            tool(end_listens),
        ),
        (
            ToolDef::new("sample", string_schema("prompt"))
                .description("Asks the client's model (sampling) and returns its answer."),
            tool(sample),
        ),
        (
            ToolDef::new("roots", empty()).description("Asks the client for its roots."),
            tool(roots),
        ),
        (
            ToolDef::new("ask_url", string_schema("url"))
                .description("Asks the user to open a URL (URL-mode elicitation)."),
            tool(ask_url),
        ),
        (
            ToolDef::new(
                "script",
                object_schema(
                    json!({"rounds": {"type": "array", "items": {"type": "object"}},
                           "refuse_retry": {"type": "boolean"}}),
                    &["rounds"],
                ),
            )
            .description(
                "Answers with rounds[i] as inputRequests verbatim, unchecked (i from its \
                 requestState \"script/<i>\"), then the received inputResponses as text.",
            ),
            tool(script),
        ),
        (
            ToolDef::new("mirror", json!({"type": "object"}))
                .description("Returns its arguments verbatim as structuredContent."),
            tool(|a, _| async move {
                Ok(Outcome::Complete(json!({
                    "content": [{"type": "text", "text": "mirrored"}],
                    "structuredContent": a,
                })))
            }),
        ),
        (
            ToolDef::new(
                "respond_raw",
                object_schema(
                    json!({"before": {"type": "string"}, "after": {"type": "string"}}),
                    &["before", "after"],
                ),
            )
            .description(
                "Writes before + <the request id> + after as one line verbatim, then never \
                 answers otherwise.",
            ),
            tool(respond_raw),
        ),
        (
            ToolDef::new("load_shed", empty())
                .description("Answers input_required with only requestState, then \"retried\"."),
            tool(|_, ctx| async move {
                match round(&ctx, "", "load_shed/1", None)? {
                    Round::Ask(outcome) => Ok(outcome),
                    Round::Answer(_) => Ok(Outcome::text("retried")),
                }
            }),
        ),
    ];
    tools
        .into_iter()
        .fold(builder, |builder, (def, handler)| {
            add_tool(builder, def, handler)
        })
        .resource_template(
            ResourceTemplateDef::new(MOVED_TEMPLATE, "moved")
                .description("Every read answers -32602 naming another URI in data.uri."),
            |input, _| async move {
                let id = input["variables"]["id"].as_str().unwrap_or_default();
                Err(RpcError::invalid_params("Resource moved")
                    .with_data(json!({"uri": format!("example://notes/{id}")})))
            },
        )
        .resource_template(
            ResourceTemplateDef::new(GONE_TEMPLATE, "gone").description(
                "Every read asks for the roots, then answers -32602 with data.uri of the read.",
            ),
            |input, ctx| async move {
                let request = Some(json!({ "method": "roots/list" }));
                match round(&ctx, "roots", "gone/1", request) {
                    Ok(Round::Ask(outcome)) => Ok(outcome),
                    Ok(Round::Answer(_)) => Err(RpcError::invalid_params("Resource not found")
                        .with_data(json!({"uri": input["uri"]}))),
                    Err(Failure::Rpc(e)) => Err(e),
                    Err(Failure::Arguments(m)) => Err(RpcError::invalid_params(m)),
                }
            },
        )
}

/// The test-tools template whose reads fail with -32602 and a `data.uri` that is not the URI
/// that was read (not a resource-not-found).
const MOVED_TEMPLATE: &str = "example://moved/{id}";

/// The test-tools template whose reads ask for the roots first (one round of input
/// requests), then answer 2026-07-28's resource not found (-32602 with data.uri).
const GONE_TEMPLATE: &str = "example://gone/{id}";

/// The inputSchema of `schema_nested_nulls`: `null` members at several depths, as servers
/// that serialize absent fields as `null` send them (2026-07-28 admits them).
fn nested_nulls_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": null, "default": null},
            "options": {"type": "object", "properties": null, "required": null},
            "tags": {"type": "array", "items": null},
            "mode": {"anyOf": [null, {"type": "string", "enum": ["a", "b"]}]},
            "point": {"$ref": "#/$defs/point"}
        },
        "required": ["path"],
        "$defs": {"point": {"type": "object", "properties": {"x": null}, "required": null}}
    })
}
