//! The smallest server on the crate's server API: one typed tool, served on stdin/stdout to
//! 2026-07-28 clients directly and to 2025-11-25 clients through the in-process bridge.
use mcp_bridge::server::Server;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

fn main() -> std::io::Result<()> {
    let server = Server::builder("adder", "1.0.0")
        .typed_tool("add", |Add { a, b }, _| (a + b).to_string())
        .build();
    mcp_bridge::embed::serve_stdio(server)
}
