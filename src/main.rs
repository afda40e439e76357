//! The `mcp-bridge` executable: parses the command line, installs the logger, runs the actor
//! system and exits with its code (0 end of stdin, 1 loss of the upstream or an internal
//! error, 2 invalid arguments).

use mcp_bridge::cli::{self, EXIT_USAGE, Parsed};
use mcp_bridge::transport::child::{CHILD_PGID, signal_group};
use std::io::Write;
use std::sync::atomic::Ordering;

fn main() {
    let cli = match cli::parse(std::env::args_os()) {
        Parsed::Run(cli) => cli,
        Parsed::Print(text) => {
            let _ = std::io::stdout().write_all(text.as_bytes());
            std::process::exit(0);
        }
        Parsed::Usage(text) => {
            let _ = std::io::stderr().write_all(text.as_bytes());
            std::process::exit(EXIT_USAGE);
        }
    };
    // An internal error (a panic anywhere) stops the child's whole group and exits 1, instead
    // of leaving a half-dead bridge or an orphaned server.
    std::panic::set_hook(Box::new(|info| {
        signal_group(CHILD_PGID.load(Ordering::SeqCst), libc::SIGKILL);
        mcp_bridge::log::raw_line("supervisor", "error", &format!("internal error: {info}"));
        std::process::exit(1);
    }));
    mcp_bridge::log::init(cli.log_level.filter());
    let config = cli.config();
    let system = actix::System::new();
    system.block_on(async move {
        mcp_bridge::actors::start(config);
    });
    let code = match system.run_with_code() {
        Ok(code) => code,
        Err(e) => {
            tracing::error!(target: "supervisor", "the actor system failed: {e}");
            1
        }
    };
    std::process::exit(code);
}
