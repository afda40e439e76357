//! One executable, both revisions: a 2026-07-28 server that `serve_stdio` also serves to
//! 2025-11-25 clients (`initialize` first) through the in-process bridge. Tools `echo`,
//! `ask_name` (an input request) and `add_tool` (a list change), the prompt `greet` and the
//! resource `example://readme`.
use mcp_bridge::server::{Event, Outcome, PromptDef, ResourceDef, Server, ToolDef, elicit_form};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    text: String,
}

fn main() -> std::io::Result<()> {
    let server = Server::builder("embedded-example", "1.0.0")
        .typed_tool(
            "echo",
            |Echo { text }, _| async move { Ok(Outcome::text(text)) },
        )
        .tool(ToolDef::no_input("ask_name"), |_, ctx| async move {
            Ok(match ctx.input_response("name") {
                None => Outcome::ask("name", elicit_form("Your name?", &["name"])),
                Some(a) => Outcome::text(format!(
                    "Hi, {}!",
                    a["content"]["name"].as_str().unwrap_or("?")
                )),
            })
        })
        .tool(ToolDef::no_input("add_tool"), |_, ctx| async move {
            ctx.server().notify(Event::ToolsListChanged);
            Ok(Outcome::text("The tool list changed."))
        })
        .prompt(PromptDef::new("greet"), |_, _| async {
            Ok(Outcome::user_text("Say hi."))
        })
        .resource(
            ResourceDef::new("example://readme", "readme"),
            |_, _| async { Ok(Outcome::resource_text("example://readme", "Hi.")) },
        )
        .build();
    mcp_bridge::embed::serve_stdio(server)
}
