//! The choice of a transport: an [`UpstreamSpec`] names the upstream, [`open`] opens the
//! transport of any kind the build has, and [`open_in_process`] only those that start no
//! process (an embedded server links no code that starts one).

use std::ffi::OsString;

use super::program::SpawnError;
use super::upstream::{OpenOptions, Opened};
use crate::server::Server;

/// Which upstream the bridge talks to, and how (chosen by the configuration; the command line
/// always gives [`UpstreamSpec::Child`]).
#[derive(Clone, Debug)]
pub enum UpstreamSpec {
    /// A child process on stdio: `command args`, verbatim (2026-07-28 basic/transports/stdio).
    Child {
        /// The program.
        command: OsString,
        /// Its arguments, unchanged.
        args: Vec<OsString>,
        /// Its variables and working directory besides the bridge's.
        env: super::child::ChildEnv,
    },
    /// An in-process [`Server`]: frames cross as bytes through bounded channels, no pipe and
    /// no process (the embedded bridge, actor tests).
    Memory(Server),
    /// A connection of an upstream that many bridges share (`mcp-bridge --serve-http
    /// --upstream-lifetime shared`: one run of the server for every session).
    Shared(super::shared::SharedUpstream),
    /// A transport opened by a function of the tests (a scripted transport).
    #[cfg(feature = "internals")]
    Opener(Opener),
    /// A 2026-07-28 server at a URL over Streamable HTTP (`mcp-bridge [options] <url>`;
    /// feature `http`).
    #[cfg(feature = "http")]
    Http(super::http::HttpSpec),
}

/// A function that opens a transport ([`UpstreamSpec::Opener`]); its error is what
/// `initialize` reports as `spawn_failed`.
#[cfg(feature = "internals")]
#[derive(Clone)]
pub struct Opener(
    pub std::sync::Arc<dyn Fn(OpenOptions) -> Result<Opened, SpawnError> + Send + Sync>,
);

#[cfg(feature = "internals")]
impl std::fmt::Debug for Opener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Opener")
    }
}

impl UpstreamSpec {
    /// Whether the upstream is at a URL (always false in a build without the feature `http`).
    pub fn is_http(&self) -> bool {
        #[cfg(feature = "http")]
        if let UpstreamSpec::Http(_) = self {
            return true;
        }
        false
    }

    /// The name the editor sees when the upstream gives none: the command's file name, or
    /// `None` (the caller's default) for an in-process server.
    pub fn fallback_name(&self) -> Option<String> {
        match self {
            UpstreamSpec::Child { command, .. } => std::path::Path::new(command)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned()),
            #[cfg(feature = "http")]
            UpstreamSpec::Http(spec) => spec.url.host_str().map(str::to_owned),
            UpstreamSpec::Memory(_) => None,
            UpstreamSpec::Shared(shared) => shared.fallback_name(),
            #[cfg(feature = "internals")]
            UpstreamSpec::Opener(_) => None,
        }
    }
}

/// Opens the transport that `spec` describes. Call on the actor thread (inside the actix
/// System: the child's death signal follows the thread that forks it).
///
/// Errors: a child that cannot start ([`SpawnError`]: its text is the `spawn_failed` detail,
/// the program and why, never an argument or an environment value); an opener's own error.
pub fn open(spec: &UpstreamSpec, options: OpenOptions) -> Result<Opened, SpawnError> {
    match spec {
        UpstreamSpec::Child { command, args, env } => {
            super::child_upstream::open(command, args, env, options)
        }
        UpstreamSpec::Memory(server) => Ok(super::memory::open(server.clone(), options)),
        UpstreamSpec::Shared(shared) => Ok(shared.connect(options)),
        #[cfg(feature = "internals")]
        UpstreamSpec::Opener(Opener(open)) => open(options),
        #[cfg(feature = "http")]
        UpstreamSpec::Http(spec) => super::http::open(spec, options).map_err(SpawnError::Connect),
    }
}

/// How the bridge opens its upstream ([`crate::actors::config::BridgeConfig::open_upstream`]): [`open`]
/// (every transport of the build) for the executable, [`open_in_process`] for an embedded
/// server, so that a server that never starts a child process does not link the code that
/// starts one (the spec is only known at run time; the function is chosen at build time).
pub type OpenUpstream = fn(&UpstreamSpec, OpenOptions) -> Result<Opened, SpawnError>;

/// Opens only the in-process transports ([`UpstreamSpec::Memory`], [`UpstreamSpec::Opener`]);
/// any other spec fails with [`SpawnError::NotInProcess`] (`spawn_failed`), without starting
/// anything. The opener of an embedded server ([`crate::embed`]) and of the actor tests.
///
/// Errors: an opener's own error; a child or URL spec.
pub fn open_in_process(spec: &UpstreamSpec, options: OpenOptions) -> Result<Opened, SpawnError> {
    match spec {
        UpstreamSpec::Memory(server) => Ok(super::memory::open(server.clone(), options)),
        #[cfg(feature = "internals")]
        UpstreamSpec::Opener(Opener(open)) => open(options),
        _ => Err(SpawnError::NotInProcess),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::queue::QueueStats;
    use crate::transport::writer::Writer;
    #[test]
    fn the_in_process_opener_starts_no_child() {
        let options = OpenOptions {
            max_line_bytes: 1024,
            pace: Writer::for_blocking(
                std::io::sink(),
                crate::transport::queue::EDITOR_QUEUE,
                QueueStats::new("editor"),
            ),
            queue_stats: QueueStats::new("upstream_queue"),
            children: crate::transport::children::ChildRegistry::new(),
        };
        let child = UpstreamSpec::Child {
            command: "true".into(),
            args: Vec::new(),
            env: Default::default(),
        };
        match open_in_process(&child, options) {
            Err(e @ SpawnError::NotInProcess) => {
                assert_eq!(
                    e.to_string(),
                    "this bridge opens only an in-process upstream"
                );
            }
            Err(other) => panic!("another error: {other}"),
            Ok(_) => panic!("a child spec opened"),
        }
    }
}
