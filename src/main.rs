//! The `mcp-bridge` executable: parses the command line, installs the logger, runs the actor
//! system and exits with its code (0 end of stdin, 1 loss of the upstream or an internal
//! error, 2 invalid arguments).

use mcp_bridge::cli::{self, EXIT_USAGE, Parsed};

fn main() {
    let cli = match cli::parse(std::env::args_os()) {
        Parsed::Run(cli) => cli,
        Parsed::Print(text) => {
            print!("{text}");
            std::process::exit(0);
        }
        Parsed::Usage(text) => {
            eprint!("{text}");
            std::process::exit(EXIT_USAGE);
        }
    };
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
