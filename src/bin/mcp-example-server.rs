//! `mcp-example-server`: the README's example upstream (`mcp-bridge mcp-example-server`), a small
//! MCP 2026-07-28 server on stdio written on the crate's server API as its documentation tells:
//! typed tools (their arguments Rust types, their `inputSchema` generated from them), a prompt,
//! a resource, a resource template and completion. The bridge's tests start
//! `mcp-fixture-server` instead, which also misbehaves on request.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use mcp_bridge::server::{
    LogLevel, Outcome, PromptDef, RequestContext, ResourceDef, ResourceTemplateDef, RpcError,
    Server, elicit_form,
};
use serde::Deserialize;
use serde_json::{Map, Number, Value, json};

/// The `--help` text after the usage line.
const LONG_ABOUT: &str = "\
A small MCP server of revision 2026-07-28 on stdin/stdout (newline-delimited JSON-RPC),
for `mcp-bridge mcp-example-server`.

It has no initialize: every request must carry params._meta with
io.modelcontextprotocol/protocolVersion = \"2026-07-28\" and
io.modelcontextprotocol/clientCapabilities. Start with server/discover.

Tools (arguments that do not deserialize into the tool's type get -32602):
  echo {text}                 text content <text>
  add {a, b}                  the sum: structuredContent {\"sum\": n} and the same JSON as text
  slow {steps, delay_ms}      one notifications/progress per step (if the request has
                              _meta.progressToken), then \"done after N steps\"
  log {level, message}        a notifications/message at that level (if the request's
                              _meta logLevel lets it through), then \"logged\"
  fail {code, message, data?} answers with that JSON-RPC error
  ask_name {}                 input_required: an elicitation/create form asking for
                              `name` (needs the elicitation capability); the retry
                              returns \"Hello, <name>!\"
Resources: example://readme (text/plain); template example://notes/{id}.
Prompt: greet {name} -> one user message \"Say hello to <name>.\"
Completion: greet's `name` (names starting with the typed prefix), notes' `id`.
List changes are offered on subscriptions/listen.";

/// `mcp-example-server [--help | --version]`: it takes no options.
#[derive(Parser)]
#[command(name = "mcp-example-server", version, long_about = LONG_ABOUT)]
#[command(about = "A small MCP 2026-07-28 example server on stdio")]
struct Args {}

const README_URI: &str = "example://readme";
const README_TEXT: &str = "mcp-example-server is a small MCP 2026-07-28 server.\n\
Tools: echo, add, slow, log, fail, ask_name. Prompt: greet.\n\
Resources: example://readme, example://notes/{id}.\n";
const NOTES_TEMPLATE: &str = "example://notes/{id}";
const NAMES: [&str; 8] = [
    "Ada", "Alan", "Alice", "Barbara", "Bob", "Carol", "Dennis", "Grace",
];
const NOTE_IDS: [&str; 3] = ["1", "2", "3"];
/// Most steps of `slow`.
const SLOW_MAX_STEPS: u32 = 10_000;
/// Longest step of `slow`, in milliseconds (10 minutes).
const SLOW_MAX_DELAY_MS: u32 = 600_000;
/// The `requestState` of `ask_name`'s question; a retry must echo it.
const ASK_NAME_STATE: &str = "ask_name/1";

#[derive(Deserialize, schemars::JsonSchema)]
struct Echo {
    /// Returned as it is.
    text: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Add {
    a: Number,
    b: Number,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Slow {
    /// How many steps to take.
    #[schemars(range(max = SLOW_MAX_STEPS))]
    steps: u32,
    /// How long each step takes, in milliseconds.
    #[schemars(range(max = SLOW_MAX_DELAY_MS))]
    delay_ms: u32,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Log {
    level: LogLevel,
    message: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Fail {
    /// The JSON-RPC error code.
    code: i64,
    message: String,
    /// The error's data: any JSON value.
    #[schemars(schema_with = "any_json")]
    data: Option<Value>,
}

/// Any JSON value as the empty schema `{}`: schemars writes `true` for a `Value`, a boolean
/// schema that 2025-11-25 clients refuse where the spec asks for an object (the bridge repairs
/// it, and `mcp-bridge doctor` names the repair).
fn any_json(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({})
}

fn server() -> Server {
    Server::builder("mcp-example-server", env!("CARGO_PKG_VERSION"))
        .typed_tool("echo", |Echo { text }, _| text)
        .typed_tool("add", |Add { a, b }, _| add(&a, &b))
        .typed_tool("slow", slow)
        .typed_tool("log", log)
        .typed_tool("fail", fail)
        .tool("ask_name", ask_name)
        .resource(
            ResourceDef::new(README_URI, "readme")
                .mime_type("text/plain")
                .description("About this server."),
            |_, _| plain_text(README_URI, README_TEXT),
        )
        .resource_template(
            ResourceTemplateDef::new(NOTES_TEMPLATE, "note")
                .mime_type("text/plain")
                .description("A note by id."),
            |read, _| {
                let id = read["variables"]["id"].as_str().unwrap_or_default();
                plain_text(
                    read["uri"].as_str().unwrap_or_default(),
                    &format!("Note {id}."),
                )
            },
        )
        .prompt(
            PromptDef::new("greet")
                .description("Asks the model to greet someone.")
                .argument("name", "Who to greet", true),
            |arguments, _| match arguments["name"].as_str() {
                Some(name) => Ok(Outcome::user_text(format!("Say hello to {name}."))),
                None => Err(RpcError::invalid_params("missing required argument: name")),
            },
        )
        .completion(|request, _| complete(&request))
        .build()
}

/// The sum, exact for integers; `structuredContent` and, as a tool with structured content
/// SHOULD (server/tools), the same JSON as text.
fn add(a: &Number, b: &Number) -> Outcome {
    let sum = match (a.as_i64(), b.as_i64()) {
        (Some(a), Some(b)) if a.checked_add(b).is_some() => Value::from(a + b),
        _ => {
            let sum = a.as_f64().unwrap_or_default() + b.as_f64().unwrap_or_default();
            if !sum.is_finite() {
                return Outcome::tool_error("the sum is out of range");
            }
            Value::from(sum)
        }
    };
    let structured = json!({ "sum": sum });
    Outcome::Complete(json!({
        "content": [{"type": "text", "text": structured.to_string()}],
        "structuredContent": structured,
    }))
}

async fn slow(Slow { steps, delay_ms }: Slow, ctx: RequestContext) -> Outcome {
    if steps > SLOW_MAX_STEPS || delay_ms > SLOW_MAX_DELAY_MS {
        return Outcome::tool_error(format!(
            "at most {SLOW_MAX_STEPS} steps of at most {SLOW_MAX_DELAY_MS} ms"
        ));
    }
    for step in 1..=steps {
        tokio::time::sleep(Duration::from_millis(delay_ms.into())).await;
        let message = format!("step {step} of {steps}");
        ctx.progress(step.into(), Some(steps.into()), Some(&message))
            .await;
    }
    Outcome::text(format!("done after {steps} steps"))
}

fn fail(args: Fail, _: RequestContext) -> Result<Outcome, RpcError> {
    let error = RpcError::new(args.code, args.message);
    Err(RpcError {
        data: args.data,
        ..error
    })
}

async fn log(Log { level, message }: Log, ctx: RequestContext) -> &'static str {
    ctx.log(level, Some("mcp-example-server"), Value::String(message))
        .await;
    "logged"
}

/// Asks for the name (a form elicitation) unless this is the retry that carries the answer
/// (2026-07-28 basic/patterns/mrtr).
fn ask_name(_: Value, ctx: RequestContext) -> Result<Outcome, RpcError> {
    let answer = match ctx.request_state() {
        None => None,
        Some(ASK_NAME_STATE) => ctx.input_response("name"),
        Some(_) => return Err(RpcError::invalid_params("requestState was not issued here")),
    };
    let Some(answer) = answer else {
        // Also a retry without the answer gets the question again (MRTR: SHOULD, no error).
        let mut input_requests = Map::new();
        input_requests.insert("name".into(), elicit_form("What is your name?", &["name"]));
        let request_state = Some(ASK_NAME_STATE.into());
        return Ok(Outcome::InputRequired {
            input_requests,
            request_state,
        });
    };
    let name = answer["content"]["name"].as_str();
    match (answer["action"].as_str(), name) {
        (Some("accept"), Some(name)) => Ok(Outcome::text(format!("Hello, {name}!"))),
        (Some("accept"), None) => Ok(Outcome::tool_error("The form came back without a name.")),
        (Some(action), _) => Ok(Outcome::text(format!("No name was given ({action})."))),
        (None, _) => Err(RpcError::invalid_params(
            "inputResponses.name is no ElicitResult",
        )),
    }
}

fn plain_text(uri: &str, text: &str) -> Outcome {
    Outcome::Complete(json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]}))
}

fn complete(request: &Value) -> Outcome {
    let (reference, argument) = (&request["ref"], &request["argument"]);
    let candidates: &[&str] = match (reference["type"].as_str(), argument["name"].as_str()) {
        (Some("ref/prompt"), Some("name")) if reference["name"] == "greet" => &NAMES,
        (Some("ref/resource"), Some("id")) if reference["uri"] == NOTES_TEMPLATE => &NOTE_IDS,
        _ => &[],
    };
    let prefix = argument["value"].as_str().unwrap_or_default();
    let values: Vec<&str> = candidates
        .iter()
        .copied()
        .filter(|v| v.starts_with(prefix))
        .collect();
    Outcome::Complete(json!({
        "completion": {"values": values, "total": values.len(), "hasMore": false}
    }))
}

fn main() -> ExitCode {
    Args::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mcp-example-server: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let served = runtime.block_on(server().serve_stdio());
    // Exit without dropping the runtime: its stdin reader thread may be blocked in read(2)
    // (tokio::io::stdin cannot cancel it), and the drop would wait for it.
    std::process::exit(match served {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("mcp-example-server: {error}");
            1
        }
    })
}
