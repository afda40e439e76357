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
    let addr = http_addr();
    let server = Server::builder("embedded-example", "1.0.0")
        .typed_tool("echo", |Echo { text }, _| text)
        .tool("ask_name", |_, c| c.ask_text("name", "Your name?", |n| format!("Hi, {n}!")))
        .tool("add_tool", |_, c| c.publish(ListenEvent::ToolsListChanged, "The tool list changed."))
        .prompt("greet", |_, _| "Say hi.")
        .resource(ResourceDef::new("example://readme", "readme"), |_, _| "Hi.")
        .build();
    match addr {
        #[cfg(feature = "http-server")]
        Some(addr) => {
            use mcp_bridge::server::http::HttpOptions;
            mcp_bridge::embed::serve_http(server, addr, HttpOptions::default())
        }
        _ => mcp_bridge::embed::serve_stdio(server),
    }
}

const USAGE: &str = "usage: embedded [--http ADDR]

Serves the example MCP server on stdin/stdout, or with --http over Streamable HTTP on ADDR
(PORT, or IP:PORT; a port alone is on 127.0.0.1).

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
    #[cfg(feature = "http-server")]
    return Some(
        mcp_bridge::server::http::parse_addr(value).unwrap_or_else(|e| usage_error(&e.to_string())),
    );
    #[cfg(not(feature = "http-server"))]
    usage_error(&format!("--http {value}: this build has no HTTP server (feature http-server)"))
}

fn usage_error(why: &str) -> ! {
    eprint!("embedded: {why}\n\n{USAGE}");
    std::process::exit(2)
}
