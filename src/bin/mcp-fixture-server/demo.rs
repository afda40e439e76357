//! The default tools, prompt, resources and completion: those of `mcp-example-server`, here as
//! `Value` handlers with hand-written schemas, whose frames (the schemas, a tool error for a
//! bad argument) the bridge's tests assert byte for byte. The example server writes the same
//! tools as typed tools; their generated schemas and the texts of their argument errors differ.

use std::time::Duration;

use mcp_bridge::server::{
    LogLevel, Outcome, PromptDef, RequestContext, ResourceDef, ResourceTemplateDef, RpcError,
    ServerBuilder, ToolDef,
};
use serde_json::{Value, json};

use crate::tool::{
    Failure, Round, ToolResult, add_tool, integer, number, object_schema, round, string, tool,
};

const README_URI: &str = "example://readme";
const README_TEXT: &str = "mcp-example-server is a small MCP 2026-07-28 server.\n\
Tools: echo, add, slow, log, fail, ask_name. Prompt: greet.\n\
Resources: example://readme, example://notes/{id}.\n";
pub(crate) const NOTES_TEMPLATE: &str = "example://notes/{id}";
const NAMES: [&str; 8] = [
    "Ada", "Alan", "Alice", "Barbara", "Bob", "Carol", "Dennis", "Grace",
];
const NOTE_IDS: [&str; 3] = ["1", "2", "3"];

pub(crate) fn demo(builder: ServerBuilder) -> ServerBuilder {
    let builder = add_tool(
        builder,
        ToolDef::new(
            "echo",
            object_schema(json!({"text": {"type": "string"}}), &["text"]),
        )
        .description("Returns the text it is given."),
        tool(|a, _| async move { Ok(Outcome::text(string(&a, "text")?)) }),
    );
    let builder = add_tool(
        builder,
        ToolDef::new(
            "add",
            object_schema(
                json!({"a": {"type": "number"}, "b": {"type": "number"}}),
                &["a", "b"],
            ),
        )
        .description("Adds two numbers.")
        .output_schema(object_schema(json!({"sum": {"type": "number"}}), &["sum"])),
        tool(|a, _| async move { add(&a) }),
    );
    let builder = add_tool(
        builder,
        ToolDef::new(
            "slow",
            object_schema(
                json!({"steps": {"type": "integer", "minimum": 0},
                       "delay_ms": {"type": "integer", "minimum": 0}}),
                &["steps", "delay_ms"],
            ),
        )
        .description("Takes `steps` steps of `delay_ms` each, reporting progress after each."),
        tool(slow),
    );
    let levels: Vec<&str> = LogLevel::ALL.iter().map(|l| l.as_str()).collect();
    let builder = add_tool(
        builder,
        ToolDef::new(
            "log",
            object_schema(
                json!({"level": {"type": "string", "enum": levels}, "message": {"type": "string"}}),
                &["level", "message"],
            ),
        )
        .description("Sends a log message at the given level."),
        tool(log),
    );
    let builder = add_tool(
        builder,
        ToolDef::new(
            "fail",
            object_schema(
                json!({"code": {"type": "integer"}, "message": {"type": "string"}, "data": {}}),
                &["code", "message"],
            ),
        )
        .description("Answers with the given JSON-RPC error."),
        tool(|a, _| async move {
            let code = integer(&a, "code", i64::MIN..=i64::MAX)?;
            let mut error = RpcError::new(code, string(&a, "message")?);
            error.data = a.get("data").cloned();
            Err(Failure::Rpc(error))
        }),
    );
    let builder = add_tool(
        builder,
        ToolDef::new("ask_name", object_schema(json!({}), &[]))
            .description("Asks the user for their name (form elicitation) and greets them."),
        tool(ask_name),
    );
    builder
        .resource(
            ResourceDef::new(README_URI, "readme")
                .mime_type("text/plain")
                .description("About this server."),
            |_, _| async move {
                Ok(Outcome::Complete(json!({"contents": [
                    {"uri": README_URI, "mimeType": "text/plain", "text": README_TEXT}
                ]})))
            },
        )
        .resource_template(
            ResourceTemplateDef::new(NOTES_TEMPLATE, "note")
                .mime_type("text/plain")
                .description("A note by id."),
            |input, _| async move {
                let uri = input["uri"].as_str().unwrap_or_default().to_owned();
                let id = input["variables"]["id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                Ok(Outcome::Complete(json!({"contents": [
                    {"uri": uri, "mimeType": "text/plain", "text": format!("Note {id}.")}
                ]})))
            },
        )
        .prompt(
            PromptDef::new("greet")
                .description("Asks the model to greet someone.")
                .argument("name", "Who to greet", true),
            |arguments, _| async move {
                let Some(name) = arguments.get("name").and_then(Value::as_str) else {
                    return Err(RpcError::invalid_params("missing required argument: name"));
                };
                let content = json!({"type": "text", "text": format!("Say hello to {name}.")});
                Ok(Outcome::Complete(json!({
                    "description": "A greeting",
                    "messages": [{"role": "user", "content": content}]
                })))
            },
        )
        .completion(|params, _| async move { Ok(complete(&params)) })
}

fn add(a: &Value) -> ToolResult {
    let (x, y) = (number(a, "a")?, number(a, "b")?);
    let sum = match (x.as_i64(), y.as_i64()) {
        (Some(x), Some(y)) if x.checked_add(y).is_some() => Value::from(x + y),
        _ => {
            let sum = x.as_f64().unwrap_or_default() + y.as_f64().unwrap_or_default();
            if !sum.is_finite() {
                return Err(Failure::Arguments("the sum is out of range".into()));
            }
            Value::from(sum)
        }
    };
    let structured = json!({ "sum": sum });
    // A tool with structured content SHOULD also return it serialized as text (server/tools).
    Ok(Outcome::Complete(json!({
        "content": [{"type": "text", "text": structured.to_string()}],
        "structuredContent": structured,
    })))
}

async fn slow(a: Value, ctx: RequestContext) -> ToolResult {
    let steps = integer(&a, "steps", 0..=10_000)?;
    let delay = Duration::from_millis(integer(&a, "delay_ms", 0..=600_000)?.unsigned_abs());
    for step in 1..=steps {
        tokio::time::sleep(delay).await;
        let message = format!("step {step} of {steps}");
        ctx.progress(step as f64, Some(steps as f64), Some(&message))
            .await;
    }
    Ok(Outcome::text(format!("done after {steps} steps")))
}

async fn log(a: Value, ctx: RequestContext) -> ToolResult {
    let level = string(&a, "level")?;
    let level = level
        .parse::<LogLevel>()
        .map_err(|()| Failure::Arguments(format!("unknown log level: {level}")))?;
    let message = string(&a, "message")?;
    ctx.log(level, Some("mcp-example-server"), Value::String(message))
        .await;
    Ok(Outcome::text("logged"))
}

async fn ask_name(_: Value, ctx: RequestContext) -> ToolResult {
    let request = json!({
        "method": "elicitation/create",
        "params": {
            "message": "What is your name?",
            "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string", "title": "Name", "minLength": 1}},
                "required": ["name"]
            }
        }
    });
    let answer = match round(&ctx, "name", "ask_name/1", Some(request))? {
        Round::Ask(outcome) => return Ok(outcome),
        Round::Answer(answer) => answer,
    };
    let action = answer.get("action").and_then(Value::as_str);
    let name = answer
        .get("content")
        .and_then(|c| c.get("name"))
        .and_then(Value::as_str);
    Ok(match (action, name) {
        (Some("accept"), Some(name)) => Outcome::text(format!("Hello, {name}!")),
        (Some("accept"), None) => Outcome::tool_error("The form came back without a name."),
        (Some(action), _) => Outcome::text(format!("No name was given ({action}).")),
        (None, _) => {
            return Err(Failure::Rpc(RpcError::invalid_params(
                "inputResponses.name must be an ElicitResult",
            )));
        }
    })
}

fn complete(params: &Value) -> Outcome {
    let reference = &params["ref"];
    let argument = params["argument"]["name"].as_str().unwrap_or_default();
    let prefix = params["argument"]["value"].as_str().unwrap_or_default();
    let candidates: &[&str] = match (reference["type"].as_str(), argument) {
        (Some("ref/prompt"), "name") if reference["name"] == "greet" => &NAMES,
        (Some("ref/resource"), "id") if reference["uri"] == NOTES_TEMPLATE => &NOTE_IDS,
        _ => &[],
    };
    let values: Vec<&str> = candidates
        .iter()
        .copied()
        .filter(|value| value.starts_with(prefix))
        .collect();
    Outcome::Complete(json!({
        "completion": {"values": values, "total": values.len(), "hasMore": false}
    }))
}
