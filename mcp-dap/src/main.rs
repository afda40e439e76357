//! `mcp-dap`: an MCP server that drives Debug Adapter Protocol adapters (debugpy, lldb-dap),
//! written on the bridge's server API (docs/mcp-dap.md). This reads the command line; the
//! library serves it (`mcp_dap::serve`).

use clap::Parser;

use mcp_dap::adapters::Registry;

/// The command line.
#[derive(Parser)]
#[command(
    name = "mcp-dap",
    version,
    about = "An MCP server that drives debug adapters (DAP)"
)]
struct Cli {
    /// An adapter by its command, `NAME=COMMAND [ARG...]` (split at whitespace), for
    /// `launch`'s `adapter: NAME`; an argument `{port}` makes it a TCP adapter, given a free
    /// port to listen on. Repeatable; a built-in name (debugpy, lldb) is replaced.
    #[arg(long = "adapter", value_name = "NAME=COMMAND...")]
    adapters: Vec<String>,
    /// An adapter that chooses its port and prints it (`Listening on port N`, `listening at
    /// HOST:N`: the last number of the first line of its stdout that names a port or a
    /// listen), `NAME=COMMAND [ARG...]`; mcp-dap connects to 127.0.0.1 at that port.
    #[arg(long = "adapter-printing-port", value_name = "NAME=COMMAND...")]
    adapters_printing_port: Vec<String>,
}

/// The exit code of a command line that names an adapter wrongly (as clap's own usage errors).
const EXIT_USAGE: i32 = 2;

fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    let registry = match Registry::with_all_options(&cli.adapters, &cli.adapters_printing_port) {
        Ok(registry) => registry,
        Err(e) => {
            eprintln!("mcp-dap: {e}");
            std::process::exit(EXIT_USAGE);
        }
    };
    mcp_dap::serve::serve_stdio(registry)
}
