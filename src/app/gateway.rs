//! `mcp-bridge --config FILE`: many servers behind one bridge. Reads the editor's
//! configuration file (`cli::config_file`), makes each enabled server's bridge configuration
//! exactly as `mcp-bridge` would for it alone (its sign-in included), and runs the gateway
//! (`actors::gateway`) on the process's stdin and stdout.

use std::path::Path;

use crate::actors::gateway::GatewaySetup;
use crate::actors::gateway::member::ServerSetup;
use crate::auth::opener::EnvSecrets;
use crate::cli::Cli;
use crate::cli::config_file;
use crate::transport::open::UpstreamSpec;
use crate::transport::program;

/// Why the gateway cannot start: the text of its one error line (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The file cannot be used.
    #[error(transparent)]
    File(#[from] config_file::ConfigError),
    /// A server's sign-in options do not go together, or its token store does not open.
    #[error("{server}: {cause}")]
    SignIn {
        /// The server.
        server: String,
        /// Why.
        cause: super::sign_in::SetupError,
    },
}

/// The servers of the file at `path`, each with its bridge's configuration and sign-in, and
/// the supervision of `cli`. `secrets` are the sign-in's variables, read at start. Call from
/// `main` before any other thread exists: the variables whose values went into a header leave
/// the environment. Errors: [`GatewayError`].
pub fn setup(path: &Path, cli: &Cli, secrets: &EnvSecrets) -> Result<GatewaySetup, GatewayError> {
    let file = config_file::load(path, secrets)?;
    // SAFETY: called from main before any other thread exists (see above): no server started
    // here inherits the secrets of another's headers.
    unsafe { crate::auth::opener::scrub_vars(&file.secret_vars) };
    let mut servers = Vec::new();
    for entry in file.servers.into_iter().filter(|s| s.enabled) {
        let Some(namespace) = entry.namespace else {
            continue;
        };
        let mut config = entry.cli.config();
        super::sign_in::sign_in(&mut config, &entry.cli.sign_in, secrets).map_err(|cause| {
            GatewayError::SignIn {
                server: entry.name.clone(),
                cause,
            }
        })?;
        if let UpstreamSpec::Child { command, .. } = &config.upstream
            && let Err(e) = program::resolve(command, std::env::var_os("PATH").as_deref())
        {
            let cwd = std::env::current_dir().ok();
            tracing::error!(target: "gateway", "{}: {}", entry.name, e.log_message(cwd.as_deref()));
        }
        let sign_in = config
            .sign_in
            .is_some()
            .then(super::process::sign_in_starter)
            .flatten();
        servers.push(ServerSetup {
            name: entry.name,
            namespace,
            config,
            sign_in,
        });
    }
    Ok(GatewaySetup {
        servers,
        start_time_limit: std::time::Duration::from_secs_f64(cli.start_time_limit),
        restart: cli.restart_policy(),
        max_line_bytes: cli.max_line_bytes as usize,
    })
}
