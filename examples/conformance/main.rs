//! The conformance fixture: the reference tools, resources, prompts and completions that the
//! official conformance suite's server scenarios call (`@modelcontextprotocol/conformance`,
//! `test_simple_text` and the others, with the names and contents its scenarios check),
//! written on the server API and served over Streamable HTTP with `--http ADDR` (on stdio
//! without it). `scripts/conformance.sh` runs the scenarios of
//! `tests/conformance/server-scenarios.tsv` that name it against it.
//!
//! The 2025-11-25 scenarios' tools (`test_sampling`, `test_elicitation`, ...) ask the client
//! with an input request (2026-07-28 basic/patterns/mrtr): the in-process bridge turns it into
//! the server request a 2025-11-25 client expects, and its answer into the retry.
mod mrtr;
mod schemas;

use std::time::Duration;

use mcp_bridge::server::{
    ListenEvent, LogLevel, Outcome, PromptDef, RequestContext, ResourceDef, ResourceTemplateDef,
    RpcError, Server, ServerBuilder, ToolDef, elicit_form,
};
use serde_json::{Value, json};

/// A 1x1 red PNG.
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV header with no samples (44 bytes).
const WAV_BASE64: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";
/// The pause between the log messages of `test_tool_with_logging`: the scenario checks that a
/// client receives messages sent apart during a call, not in one burst.
const LOG_INTERVAL: Duration = Duration::from_millis(50);
/// The values `completion/complete` offers for a prompt argument, filtered by what is typed.
const COMPLETIONS: [&str; 3] = ["paris", "park", "party"];

fn tool(name: &str, description: &str) -> ToolDef {
    ToolDef::no_input(name).description(description)
}

fn image() -> Value {
    json!({"type": "image", "data": PNG_BASE64, "mimeType": "image/png"})
}

fn embedded() -> Value {
    json!({"type": "resource", "resource": {"uri": "test://embedded-resource",
        "mimeType": "text/plain", "text": "This is an embedded resource content."}})
}

fn mixed() -> Outcome {
    let text = json!({"type": "text", "text": "Multiple content types test:"});
    let resource = json!({"type": "resource", "resource": {"uri": "test://mixed-content-resource",
        "mimeType": "application/json", "text": json!({"test": "data", "value": 123}).to_string()}});
    Outcome::Complete(json!({"content": [text, image(), resource]}))
}

async fn progress(_: Value, ctx: RequestContext) -> Result<Outcome, RpcError> {
    for step in [0.0, 50.0, 100.0] {
        ctx.progress(step, Some(100.0), None).await;
    }
    Ok(Outcome::text("Progress complete."))
}

async fn logging(_: Value, ctx: RequestContext) -> Result<Outcome, RpcError> {
    for text in ["Tool execution started", "Tool processing data", "Tool execution completed"] {
        ctx.log(LogLevel::Info, Some("conformance"), json!(text)).await;
    }
    Ok(Outcome::text("Logging complete."))
}

/// Three log messages at info, 50 ms apart (the 2025-11-25 `tools-call-with-logging`).
async fn logging_apart(_: Value, ctx: RequestContext) -> Result<Outcome, RpcError> {
    let texts = ["Tool execution started", "Tool processing data", "Tool execution completed"];
    for (i, text) in texts.into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(LOG_INTERVAL).await;
        }
        ctx.log(LogLevel::Info, None, json!(text)).await;
    }
    Ok(Outcome::text("Tool with logging executed successfully"))
}

async fn missing_capability(_: Value, ctx: RequestContext) -> Result<Outcome, RpcError> {
    // The tool needs sampling: without the capability it must not run (2026-07-28 basic/index).
    if ctx.client_capabilities().get("sampling").is_none() {
        return Err(RpcError::missing_capability(json!({"sampling": {}})));
    }
    Ok(Outcome::text("The client can sample."))
}

/// A tool with one required string argument, which it passes on to the client.
fn with_text_argument(name: &str, description: &str, argument: &str, about: &str) -> ToolDef {
    let schema = json!({"type": "object",
        "properties": {argument: {"type": "string", "description": about}}, "required": [argument]});
    ToolDef::new(name, schema).description(description)
}

/// `action=…, content=…` of an elicitation answer.
fn elicited(answer: &Value) -> String {
    let content = answer.get("content").cloned().unwrap_or_else(|| json!({}));
    format!("action={}, content={content}", answer["action"].as_str().unwrap_or("unknown"))
}

/// The form `form` asked under `key`, then `{prefix} action=…, content=…` of the answer.
fn ask_form(ctx: &RequestContext, key: &str, message: &str, form: Value, prefix: &str) -> Outcome {
    match ctx.input_response(key) {
        Some(answer) => Outcome::text(format!("{prefix} {}", elicited(answer))),
        None => {
            let request = json!({"method": "elicitation/create",
                "params": {"message": message, "requestedSchema": form}});
            Outcome::ask(key, request)
        }
    }
}

fn sampling(arguments: Value, ctx: RequestContext) -> Outcome {
    match ctx.input_response("sampling") {
        Some(answer) => {
            let text = answer["content"]["text"].as_str().unwrap_or("No response");
            Outcome::text(format!("LLM response: {text}"))
        }
        None => {
            let prompt = arguments["prompt"].as_str().unwrap_or_default();
            Outcome::ask(
                "sampling",
                json!({"method": "sampling/createMessage", "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                "maxTokens": 100}}),
            )
        }
    }
}

fn elicitation(arguments: Value, ctx: RequestContext) -> Outcome {
    // The form of the scenario's description (tools-call-elicitation, 0.1.x), whose client
    // answers `username` and `email`.
    let form = json!({"type": "object", "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"}},
        "required": ["username", "email"]});
    let message = arguments["message"].as_str().unwrap_or_default();
    ask_form(&ctx, "response", message, form, "User response:")
}

/// The `x-mcp-header` tool of `http-custom-header-server-validation`: its `region` argument
/// also travels as the `Mcp-Param-Region` header, which the HTTP server checks against the
/// body (2026-07-28 basic/transports/http, custom headers).
fn header_tool() -> ToolDef {
    let region = json!({"type": "string", "description": "The region, also sent as Mcp-Param-Region.",
        "x-mcp-header": "Region"});
    let schema =
        json!({"type": "object", "properties": {"region": region}, "required": ["region"]});
    ToolDef::new("test_x_mcp_header", schema)
        .description("Echoes its region (an x-mcp-header argument).")
}

fn resource_contents(uri: &str, mime_type: &str, body: (&str, &str)) -> Outcome {
    let (key, value) = body;
    Outcome::Complete(json!({"contents": [{"uri": uri, "mimeType": mime_type, key: value}]}))
}

fn resources(builder: ServerBuilder) -> ServerBuilder {
    let text = ResourceDef::new("test://static-text", "static-text")
        .field("title", json!("Static Text Resource"))
        .description("A static text resource for testing")
        .mime_type("text/plain");
    let binary = ResourceDef::new("test://static-binary", "static-binary")
        .field("title", json!("Static Binary Resource"))
        .description("A static binary resource (image) for testing")
        .mime_type("image/png");
    let watched = ResourceDef::new("test://watched-resource", "watched-resource")
        .field("title", json!("Watched Resource"))
        .description("A resource to subscribe to")
        .mime_type("text/plain");
    let template = ResourceTemplateDef::new("test://template/{id}/data", "template")
        .field("title", json!("Resource Template"))
        .description("A resource template with parameter substitution")
        .mime_type("application/json");
    builder
        .resource(text, |read, _| {
            let text = "This is the content of the static text resource.";
            resource_contents(
                read["uri"].as_str().unwrap_or_default(),
                "text/plain",
                ("text", text),
            )
        })
        .resource(binary, |read, _| {
            resource_contents(
                read["uri"].as_str().unwrap_or_default(),
                "image/png",
                ("blob", PNG_BASE64),
            )
        })
        .resource(watched, |read, _| {
            let text = "Watched resource content";
            resource_contents(
                read["uri"].as_str().unwrap_or_default(),
                "text/plain",
                ("text", text),
            )
        })
        .resource_template(template, |read, _| {
            let id = read["variables"]["id"].as_str().unwrap_or_default();
            let text =
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            let uri = read["uri"].as_str().unwrap_or_default();
            resource_contents(uri, "application/json", ("text", &text.to_string()))
        })
}

fn prompts(builder: ServerBuilder) -> ServerBuilder {
    let with_arguments = PromptDef::new("test_prompt_with_arguments")
        .description("A prompt with required arguments")
        .argument("arg1", "First test argument", true)
        .argument("arg2", "Second test argument", true);
    let with_resource = PromptDef::new("test_prompt_with_embedded_resource")
        .description("A prompt that includes an embedded resource")
        .argument("resourceUri", "URI of the resource to embed", true);
    let with_image = PromptDef::new("test_prompt_with_image")
        .description("A prompt that includes image content");
    builder
        .prompt(PromptDef::new("test_simple_prompt").description("A prompt without arguments."), |_, _| "This is a simple prompt for testing.")
        .prompt(with_arguments, |arguments, _| {
            let (arg1, arg2) = (arguments["arg1"].as_str().unwrap_or_default(), arguments["arg2"].as_str().unwrap_or_default());
            format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
        })
        .prompt(with_resource, |arguments, _| {
            let uri = arguments["resourceUri"].as_str().unwrap_or_default();
            let resource = json!({"type": "resource", "resource": {"uri": uri, "mimeType": "text/plain",
                "text": "Embedded resource content for testing."}});
            let text = json!({"type": "text", "text": "Please process the embedded resource above."});
            Outcome::Complete(json!({"messages": [{"role": "user", "content": resource}, {"role": "user", "content": text}]}))
        })
        .prompt(with_image, |_, _| {
            let text = json!({"type": "text", "text": "Please analyze the image above."});
            Outcome::Complete(json!({"messages": [{"role": "user", "content": image()}, {"role": "user", "content": text}]}))
        })
}

/// `completion/complete`: the values of [`COMPLETIONS`] that start with what is typed.
fn complete(request: Value, _: RequestContext) -> Outcome {
    let typed = request["argument"]["value"].as_str().unwrap_or_default();
    let values: Vec<&str> =
        COMPLETIONS.into_iter().filter(|value| value.starts_with(typed)).collect();
    Outcome::Complete(
        json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}),
    )
}

fn main() -> std::io::Result<()> {
    let addr = http_addr();
    let builder = Server::builder("mcp-bridge-conformance-fixture", "1.0.0")
        .tool(tool("test_simple_text", "Answers with one text block."), |_, _| "This is a simple text response for testing.")
        .tool(tool("test_image_content", "Answers with an image (a 1x1 PNG)."), |_, _| Outcome::Complete(json!({"content": [image()]})))
        .tool(tool("test_audio_content", "Answers with audio (an empty WAV)."), |_, _| {
            Outcome::Complete(json!({"content": [{"type": "audio", "data": WAV_BASE64, "mimeType": "audio/wav"}]}))
        })
        .tool(tool("test_embedded_resource", "Answers with an embedded text resource."), |_, _| Outcome::Complete(json!({"content": [embedded()]})))
        .tool(tool("test_multiple_content_types", "Answers with text, an image and a resource."), |_, _| mixed())
        .tool(tool("test_error_handling", "Answers with a tool error."), |_, _| Outcome::tool_error("This tool intentionally returns an error for testing"))
        .tool(tool("test_tool_with_progress", "Sends three progress notifications, then answers."), progress)
        .tool(tool("test_logging_tool", "Sends three log messages at info, then answers."), logging)
        .tool(tool("test_tool_with_logging", "Sends three log messages at info, 50 ms apart, then answers."), logging_apart)
        .tool(tool("test_missing_capability", "Needs the sampling capability."), missing_capability)
        .tool(tool("test_streaming_elicitation", "Asks for a name (input_required)."), |_, _| Outcome::ask("name", elicit_form("Your name?", &["name"])))
        .tool(tool("test_trigger_tool_change", "Publishes a tools list change."), |_, c| c.publish(ListenEvent::ToolsListChanged, "Tools changed."))
        .tool(tool("test_trigger_prompt_change", "Publishes a prompts list change."), |_, c| c.publish(ListenEvent::PromptsListChanged, "Prompts changed."))
        .tool(with_text_argument("test_sampling", "Asks the client's model the prompt.", "prompt", "The prompt to send to the LLM"), sampling)
        .tool(with_text_argument("test_elicitation", "Asks the user for a response.", "message", "The message to show the user"), elicitation)
        .tool(tool("test_elicitation_sep1034_defaults", "Asks for a form whose fields have defaults."), |_, c| {
            ask_form(&c, "form", "Please review and update the form fields with defaults", schemas::defaults_form(), "Elicitation completed:")
        })
        .tool(tool("test_elicitation_sep1330_enums", "Asks for a form of the five enum forms."), |_, c| {
            ask_form(&c, "form", "Please select options from the enum fields", schemas::enums_form(), "Elicitation completed:")
        })
        .tool(ToolDef::new("json_schema_2020_12_tool", schemas::json_schema_2020_12()).description("Lists a JSON Schema 2020-12 inputSchema as written."), |arguments, _| {
            format!("JSON Schema 2020-12 tool called with: {arguments}")
        })
        .tool(header_tool(), |arguments, _| format!("Region: {}", arguments["region"].as_str().unwrap_or_default()))
        .completion(complete);
    let server = mrtr::register(prompts(resources(builder))).build();
    if let Some(addr) = addr {
        use mcp_bridge::server::http::HttpOptions;
        return mcp_bridge::embed::serve_http(server, addr, HttpOptions::default());
    }
    mcp_bridge::embed::serve_stdio(server)
}

const USAGE: &str = "usage: conformance [--http ADDR]

Serves the conformance suite's reference tools, resources and prompts on stdin/stdout, or
with --http over Streamable HTTP on ADDR (PORT, or IP:PORT; a port alone is on 127.0.0.1).

  --http ADDR  serve HTTP on ADDR instead of stdio
  -h, --help   print this text
";

/// `--http ADDR` from the command line, if given. `--help` prints the usage and exits 0; a
/// bad argument prints why and the usage to stderr and exits 2 (the code of a usage error).
fn http_addr() -> Option<std::net::SocketAddr> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = match args.as_slice() {
        [] => return None,
        [flag] if flag == "--help" || flag == "-h" => {
            print!("{USAGE}");
            std::process::exit(0)
        }
        [flag, addr] if flag == "--http" => addr.as_str(),
        [flag] if flag.starts_with("--http=") => &flag["--http=".len()..],
        [flag] if flag == "--http" => usage_error("--http needs an ADDR"),
        [flag, ..] => usage_error(&format!("unexpected argument {flag:?}")),
    };
    Some(
        mcp_bridge::server::http::parse_addr(value).unwrap_or_else(|e| usage_error(&e.to_string())),
    )
}

fn usage_error(why: &str) -> ! {
    eprint!("conformance: {why}\n\n{USAGE}");
    std::process::exit(2)
}
