//! `mcp-bridge --config FILE`: many servers behind one bridge. Reads the editor's
//! configuration file (`cli::config_file`), makes each enabled server's bridge configuration
//! exactly as `mcp-bridge` would for it alone (its sign-in included), and runs the gateway
//! (`actors::gateway`) on the process's stdin and stdout.

use futures_util::stream::LocalBoxStream;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::actors::gateway::member::ServerSetup;
use crate::actors::gateway::{GatewaySetup, Reload};
use crate::auth::opener::EnvSecrets;
use crate::auth::receiver::Receivers;
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
/// the supervision of `cli`; the file is watched, and read again at each change with the
/// environment of the start. `secrets` are the sign-in's variables, read at start. Call from
/// `main` before any other thread exists: the variables whose values went into a header leave
/// the environment. Errors: [`GatewayError`].
pub fn setup(path: &Path, cli: &Cli, secrets: &EnvSecrets) -> Result<GatewaySetup, GatewayError> {
    // The environment before the variables of headers leave it: a later reading of the file
    // resolves its variables as this one does.
    let snapshot: HashMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let file = config_file::load(path, secrets)?;
    // SAFETY: called from main before any other thread exists (see above): no server started
    // here inherits the secrets of another's headers.
    unsafe { crate::auth::opener::scrub_vars(&file.secret_vars) };
    // One table of sign-in listeners for every server, now and after each edit.
    let receivers = Receivers::default();
    let servers = servers_of(file, secrets, &receivers, cli.max_line_bytes as usize)?;
    if servers.is_empty() {
        tracing::warn!(target: "gateway", "{} has no enabled server: the editor gets empty lists until an edit of the file adds one",
            path.display());
    }
    let (reload_path, reload_secrets) = (path.to_owned(), secrets.clone());
    let max_line_bytes = cli.max_line_bytes as usize;
    let reload: Reload = Box::new(move || {
        let mut env = |name: &str| snapshot.get(name).cloned();
        let file = config_file::load_with(&reload_path, &reload_secrets, &mut env)
            .map_err(|e| e.to_string())?;
        servers_of(file, &reload_secrets, &receivers, max_line_bytes).map_err(|e| e.to_string())
    });
    Ok(GatewaySetup {
        servers,
        start_time_limit: std::time::Duration::from_secs_f64(cli.start_time_limit),
        restart: cli.restart_policy(),
        max_line_bytes: cli.max_line_bytes as usize,
        reload: Some(reload),
        changes: watch(path),
        metrics_interval: cli.metrics_interval.map(std::time::Duration::from_secs_f64),
    })
}

/// The enabled servers of `file`, each with its bridge's configuration and sign-in (on the
/// loopback listeners of `receivers`), and lines of at most `max_line_bytes`. A server's
/// program does not inherit a variable whose value went into a header of the file (unless its
/// entry sets it): at start they have left the process's environment, but one that an edit
/// puts in a header is still there, and the environment cannot change once threads run.
/// Errors: [`GatewayError::SignIn`].
fn servers_of(
    file: config_file::GatewayConfig,
    secrets: &EnvSecrets,
    receivers: &Receivers,
    max_line_bytes: usize,
) -> Result<Vec<ServerSetup>, GatewayError> {
    let mut servers = Vec::new();
    let secret_vars = file.secret_vars;
    for entry in file.servers.into_iter().filter(|s| s.enabled) {
        let Some(namespace) = entry.namespace else {
            continue;
        };
        let mut config = entry.cli.config();
        // `--max-line-bytes` holds for every line, the servers' too.
        config.max_line_bytes = max_line_bytes;
        if let UpstreamSpec::Child { env, .. } = &mut config.upstream {
            for var in &secret_vars {
                if !env.vars.iter().any(|(name, _)| name == var.as_str()) {
                    env.vars.push((var.into(), None));
                }
            }
        }
        config.member = Some(entry.name.as_str().into());
        super::sign_in::sign_in(&mut config, &entry.cli.sign_in, secrets).map_err(|cause| {
            GatewayError::SignIn {
                server: entry.name.clone(),
                cause,
            }
        })?;
        if let Some(setup) = config.sign_in.as_mut() {
            setup.config.receivers = receivers.clone();
        }
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
            fingerprint: entry.fingerprint,
        });
    }
    Ok(servers)
}

/// The changes of the file at `path`: an item for each event of its folder that names it
/// (editors save by writing a new file and renaming it over the old one, so the folder is
/// watched, not the file), and of the folder of the file it links to, if it is a link. `None`,
/// with a warning, when the system gives no watch.
fn watch(path: &Path) -> Option<LocalBoxStream<'static, ()>> {
    use notify::{EventKind, RecursiveMode, Watcher};
    // The file's folder, and the folder of the file it links to (a dotfiles manager links the
    // editor's file to a file elsewhere, and an edit changes the target, not the link).
    let mut places: Vec<(PathBuf, std::ffi::OsString)> = Vec::new();
    for p in [Some(path.to_owned()), std::fs::canonicalize(path).ok()]
        .into_iter()
        .flatten()
    {
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
            _ => PathBuf::from("."),
        };
        let Some(name) = p.file_name().map(|n| n.to_owned()) else {
            continue;
        };
        if !places.iter().any(|(d, n)| *d == dir && *n == name) {
            places.push((dir, name));
        }
    }
    let names: Vec<std::ffi::OsString> = places.iter().map(|(_, n)| n.clone()).collect();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let watched = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event
            && !matches!(event.kind, EventKind::Access(_))
            && event
                .paths
                .iter()
                .any(|p| names.iter().any(|n| p.file_name() == Some(n.as_os_str())))
        {
            let _ = tx.send(());
        }
    })
    .and_then(|mut watcher| {
        for (dir, _) in &places {
            watcher.watch(dir, RecursiveMode::NonRecursive)?;
        }
        Ok(watcher)
    });
    let watcher = match watched {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!(target: "gateway", "the configuration file is not watched ({e}): a change takes a restart of mcp-bridge");
            return None;
        }
    };
    Some(Box::pin(futures_util::stream::unfold(
        (rx, watcher),
        |(mut rx, watcher)| async move { rx.recv().await.map(|()| ((), (rx, watcher))) },
    )))
}
