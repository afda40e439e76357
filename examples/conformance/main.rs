//! The conformance fixture: the reference tools that the official conformance suite's server
//! scenarios call (`@modelcontextprotocol/conformance`, `test_simple_text` and the others),
//! written on the server API and served over Streamable HTTP with `--http ADDR` (on stdio
//! without it). `scripts/conformance.sh` runs the scenarios of
//! `tests/conformance/server-scenarios.tsv` that name it against it.
use mcp_bridge::server::{
    ListenEvent, LogLevel, Outcome, PromptDef, RequestContext, RpcError, Server, ToolDef,
    elicit_form,
};
use serde_json::{Value, json};

/// A 1x1 red PNG.
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV header with no samples (44 bytes).
const WAV_BASE64: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

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

async fn missing_capability(_: Value, ctx: RequestContext) -> Result<Outcome, RpcError> {
    // The tool needs sampling: without the capability it must not run (2026-07-28 basic/index).
    if ctx.client_capabilities().get("sampling").is_none() {
        return Err(RpcError::missing_capability(json!({"sampling": {}})));
    }
    Ok(Outcome::text("The client can sample."))
}

fn main() -> std::io::Result<()> {
    let server = Server::builder("mcp-bridge-conformance-fixture", "1.0.0")
        .tool(tool("test_simple_text", "Answers with one text block."), |_, _| "This is a simple text response for testing.")
        .tool(tool("test_image_content", "Answers with an image (a 1x1 PNG)."), |_, _| Outcome::Complete(json!({"content": [image()]})))
        .tool(tool("test_audio_content", "Answers with audio (an empty WAV)."), |_, _| {
            Outcome::Complete(json!({"content": [{"type": "audio", "data": WAV_BASE64, "mimeType": "audio/wav"}]}))
        })
        .tool(tool("test_embedded_resource", "Answers with an embedded text resource."), |_, _| Outcome::Complete(json!({"content": [embedded()]})))
        .tool(tool("test_multiple_content_types", "Answers with text, an image and a resource."), |_, _| {
            let text = json!({"type": "text", "text": "Multiple content types test:"});
            Outcome::Complete(json!({"content": [text, image(), embedded()]}))
        })
        .tool(tool("test_error_handling", "Answers with a tool error."), |_, _| Outcome::tool_error("This tool intentionally returns an error for testing"))
        .tool(tool("test_tool_with_progress", "Sends three progress notifications, then answers."), progress)
        .tool(tool("test_logging_tool", "Sends three log messages at info, then answers."), logging)
        .tool(tool("test_missing_capability", "Needs the sampling capability."), missing_capability)
        .tool(tool("test_streaming_elicitation", "Asks for a name (input_required)."), |_, _| Outcome::ask("name", elicit_form("Your name?", &["name"])))
        .tool(tool("test_trigger_tool_change", "Publishes a tools list change."), |_, c| c.publish(ListenEvent::ToolsListChanged, "Tools changed."))
        .tool(tool("test_trigger_prompt_change", "Publishes a prompts list change."), |_, c| c.publish(ListenEvent::PromptsListChanged, "Prompts changed."))
        .prompt(PromptDef::new("test_simple_prompt").description("A prompt without arguments."), |_, _| "This is a simple prompt for testing.")
        .build();
    if let Some(addr) = http_addr()? {
        use mcp_bridge::server::http::HttpOptions;
        return mcp_bridge::embed::serve_http(server, addr, HttpOptions::default());
    }
    mcp_bridge::embed::serve_stdio(server)
}

/// `--http ADDR` (PORT or IP:PORT) from the command line, if given.
fn http_addr() -> std::io::Result<Option<std::net::SocketAddr>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = match args.as_slice() {
        [] => return Ok(None),
        [flag, addr] if flag == "--http" => addr.as_str(),
        _ => return Err(std::io::Error::other("usage: conformance [--http ADDR]")),
    };
    mcp_bridge::server::http::parse_addr(value).map(Some).map_err(std::io::Error::other)
}
