//! One executable, both revisions: a 2026-07-28 server that `serve_stdio` also serves to
//! 2025-11-25 clients (`initialize` first) through the in-process bridge, and that
//! `--http ADDR` serves over Streamable HTTP instead, to 2026-07-28 clients statelessly and
//! to 2025-11-25 clients in sessions (each through an in-process bridge). Tools `echo`,
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
    #[cfg(feature = "http-server")]
    if let Some(addr) = http_addr()? {
        use mcp_bridge::server::http::HttpOptions;
        return mcp_bridge::embed::serve_http(server, addr, HttpOptions::default());
    }
    mcp_bridge::embed::serve_stdio(server)
}

/// `--http ADDR` (PORT or IP:PORT) from the command line, if given.
#[cfg(feature = "http-server")]
fn http_addr() -> std::io::Result<Option<std::net::SocketAddr>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = match args.as_slice() {
        [] => return Ok(None),
        [flag, addr] if flag == "--http" => addr.as_str(),
        [flag] if flag.starts_with("--http=") => &flag["--http=".len()..],
        _ => return Err(std::io::Error::other("usage: embedded [--http ADDR]")),
    };
    mcp_bridge::server::http::parse_addr(value).map(Some).map_err(std::io::Error::other)
}
