//! One executable, both revisions: a 2026-07-28 server that `serve_stdio` also serves to
//! 2025-11-25 clients (`initialize` first) through the in-process bridge. Tools `echo`,
//! `ask_name` (an input request) and `add_tool` (a list change), the prompt `greet` and the
//! resource `example://readme`.
use mcp_bridge::server::{ListenEvent, ResourceDef, Server};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    text: String,
}

fn main() -> std::io::Result<()> {
    let server = Server::builder("embedded-example", "1.0.0")
        .typed_tool("echo", |Echo { text }, _| text)
        .tool("ask_name", |_, c| c.ask_text("name", "Your name?", |n| format!("Hi, {n}!")))
        .tool("add_tool", |_, c| c.publish(ListenEvent::ToolsListChanged, "The tool list changed."))
        .prompt("greet", |_, _| "Say hi.")
        .resource(ResourceDef::new("example://readme", "readme"), |_, _| "Hi.")
        .build();
    mcp_bridge::embed::serve_stdio(server)
}
