//! The body of the `mcp-bridge` executable (`src/main.rs` calls it through
//! `run_executable`): parses the command line, installs the logger, runs the actor
//! system and exits with its code (0 end of stdin or a signal, 1 loss of the upstream or an
//! internal error, 2 invalid arguments, 128 + the signal's number when a second signal cuts
//! the shutdown short: `actors::supervisor`).

use crate::cli::{self, EXIT_USAGE, Parsed};
use crate::transport::children::ChildRegistry;
use crate::transport::open::UpstreamSpec;
use crate::transport::{isolation, program};
use std::io::Write;

/// Runs the executable to its end and exits the process with its code.
pub fn run() -> ! {
    // SAFETY: the first statement of the executable's `main`, before any other thread exists. The secrets of the
    // sign-in leave the environment, so no program the bridge starts inherits them.
    let secrets = unsafe { crate::auth::opener::scrub_secret_env() };
    if std::env::args_os().nth(1).is_some_and(|a| a == "doctor") {
        let code = crate::app::doctor::run(std::env::args_os(), &secrets);
        std::process::exit(code);
    }
    if std::env::args_os().nth(1).is_some_and(|a| a == "logout") {
        let code = crate::app::logout::run(std::env::args_os(), secrets.token_key.as_deref());
        std::process::exit(code);
    }
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
    // SAFETY: still before any other thread exists. The `--header-env` variables were read
    // into the headers; they leave the environment, so the browser never inherits them.
    unsafe { crate::auth::opener::scrub_vars(&cli.header_env_vars()) };
    // Descendants of the upstream that lose their parent (also after a `setsid`) become the
    // bridge's children, so the sweep at the end of every shutdown finds them.
    let subreaper = isolation::become_subreaper();
    // The process's children: the panic hook, the watchdog and the signals reach each of them.
    let children = ChildRegistry::new();
    // An internal error (a panic anywhere) stops every child's whole group and every other
    // descendant, and exits 1, instead of leaving a half-dead bridge or an orphaned server.
    crate::app::process::stop_children_at_panic(children.clone(), "supervisor", 1);
    crate::log::init(cli.log_level.filter());
    for w in &cli.warnings {
        tracing::warn!(target: "cli", "{w}");
    }
    if !subreaper && cfg!(target_os = "linux") {
        tracing::warn!(target: "supervisor", "could not become a child subreaper: descendants that leave the upstream's process group may outlive the bridge");
    }
    if let Some(path) = &cli.config {
        run_gateway(path, &cli, &secrets, children);
    }
    let mut config = cli.config();
    // The URL form signs in (unless a static Authorization header is given): the options are
    // checked and an explicit token store opens now, before any thread of the actor system
    // (`auto` opens at its first use: a stored sign-in or the first 401/403).
    if let Err(cause) = crate::app::sign_in::sign_in(&mut config, &cli.sign_in, &secrets) {
        crate::log::raw_line("cli", "error", &cause.to_string());
        crate::log::flush(crate::log::STDERR_EXIT_FLUSH);
        std::process::exit(EXIT_USAGE);
    }
    // A command that cannot start is reported now, before any initialize; the bridge keeps
    // serving (the editor then sees the cause in its `initialize` answer), and `initialize` gets
    // `spawn_failed` naming the program.
    if let UpstreamSpec::Child { command, .. } = &config.upstream
        && let Err(e) = program::resolve(command, std::env::var_os("PATH").as_deref())
    {
        let cwd = std::env::current_dir().ok();
        tracing::error!(target: "bridge", "{}", e.log_message(cwd.as_deref()));
        // A service over HTTP that cannot start its server says so by its exit: a container
        // or a supervisor sees it, where /healthz would answer.
        if cli.serve_http.is_some() {
            crate::log::flush(crate::log::STDERR_EXIT_FLUSH);
            std::process::exit(crate::app::serve_http::EXIT_CANNOT_SERVE);
        }
    }
    if let Some(addr) = cli.serve_http {
        run_serve_http(addr, config, &cli, &secrets, children);
    }
    run_system(move || {
        crate::app::process::start(config, children);
    })
}

/// Serves the upstream over HTTP (`--serve-http ADDR`) until a signal, and exits the process
/// with its code: 0 after a signal, 1 when the address cannot be served or no token can be
/// made.
fn run_serve_http(
    addr: std::net::SocketAddr,
    config: crate::actors::config::BridgeConfig,
    cli: &cli::Cli,
    secrets: &crate::auth::opener::EnvSecrets,
    children: std::sync::Arc<ChildRegistry>,
) -> ! {
    use crate::app::serve_http::{self, ServeSetup};
    if cli.upstream_lifetime == cli::UpstreamLifetime::Shared && cli.http.is_some() {
        crate::log::raw_line(
            "cli",
            "error",
            "--upstream-lifetime shared serves a command: the server at a URL is shared by its clients already",
        );
        crate::log::flush(crate::log::STDERR_EXIT_FLUSH);
        std::process::exit(EXIT_USAGE);
    }
    let (access, source) = match serve_http::access(
        addr,
        secrets.listen_token.clone(),
        cli.no_auth,
        serve_http::make_token,
    ) {
        Ok(access) => access,
        Err(e) => {
            let code = match e {
                serve_http::AccessError::NotAToken => EXIT_USAGE,
                serve_http::AccessError::NoRandom => serve_http::EXIT_CANNOT_SERVE,
            };
            crate::log::raw_line("http", "error", &e.to_string());
            crate::log::flush(crate::log::STDERR_EXIT_FLUSH);
            std::process::exit(code);
        }
    };
    let setup = ServeSetup {
        addr,
        access,
        source,
        config,
        max_sessions: cli.max_sessions as usize,
        lifetime: cli.upstream_lifetime,
    };
    run_system(move || serve_http::start(setup, children))
}

/// Runs the actor system that `start` starts to its end and exits the process with its code.
fn run_system(start: impl FnOnce() + 'static) -> ! {
    let system = actix::System::new();
    system.block_on(async move { start() });
    let code = match system.run_with_code() {
        Ok(code) => code,
        Err(e) => {
            tracing::error!(target: "supervisor", "the actor system failed: {e}");
            1
        }
    };
    // The last step of every shutdown that stopped the System (end of stdin, a signal, the
    // loss of the upstream): no descendant outlives the bridge.
    isolation::stop_descendants();
    crate::log::flush(crate::log::STDERR_EXIT_FLUSH);
    std::process::exit(code);
}

/// Runs the gateway of many servers (`--config FILE`) to its end and exits the process with
/// its code: 2 when the file cannot be used, else 0 at the end of stdin or a signal.
fn run_gateway(
    path: &std::path::Path,
    cli: &cli::Cli,
    secrets: &crate::auth::opener::EnvSecrets,
    children: std::sync::Arc<ChildRegistry>,
) -> ! {
    let setup = match crate::app::gateway::setup(path, cli, secrets) {
        Ok(setup) => setup,
        Err(e) => {
            crate::log::raw_line("config", "error", &e.to_string());
            crate::log::flush(crate::log::STDERR_EXIT_FLUSH);
            std::process::exit(EXIT_USAGE);
        }
    };
    run_system(move || {
        crate::app::process::start_gateway(setup, children);
    })
}
