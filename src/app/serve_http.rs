//! `mcp-bridge --serve-http ADDR ...`: the bridge as a Streamable HTTP server, for clients
//! that reach the server over the network instead of starting it on stdio.
//!
//! Each 2025-11-25 session (`Mcp-Session-Id`, started by an `initialize` POST; 2025-11-25
//! basic/transports) is a whole bridge of its own: the same actors as on stdio, on the
//! session's two channels of lines (`server::http`'s [`SessionEnds`]), with a run of the
//! upstream of its own (a command's process, or a client of the URL). So a session is served,
//! translated and ended exactly as an editor on stdio is, and a server that keeps state per
//! connection keeps it per session. A session's end (DELETE, its idle time limit, the stop)
//! ends its input: its bridge stops its server as at the end of stdin. The loss of its server
//! ends that session only.
//!
//! A request without `Mcp-Session-Id` other than an `initialize` gets 400 `session_required`
//! (`server::http::bind_sessions`): a 2026-07-28 client that probes first falls back to
//! `initialize` (2026-07-28 basic/transports/http).
//!
//! Who may connect ([`Access`]): on a loopback address every local client, as a stdio server
//! is open to its editor; beyond loopback only clients with the bearer token of
//! `MCP_BRIDGE_LISTEN_TOKEN`, or of a token made at start and written once to stderr, unless
//! `--no-auth` says otherwise. The `Origin` and `Host` checks of `server::http` apply on every
//! address. `GET /healthz` answers while the process runs.
//!
//! SIGTERM, SIGINT or SIGHUP stops it: no new connection, the sessions end (their streams
//! close; each bridge stops its server with the shutdown steps of the end of stdin), and the
//! process exits 0 once every session's bridge has ended; the watchdog bounds that wait, and
//! a second signal stops at once, as on stdio.

use std::cell::Cell;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use actix::System;
use tokio::sync::{Notify, mpsc, oneshot};

use crate::actors::config::BridgeConfig;
use crate::actors::supervisor::{self, Host, watchdog_after};
use crate::cli::UpstreamLifetime;
use crate::log;
use crate::protocol::revisions::errors::Cause;
use crate::protocol::revisions::methods;
use crate::protocol::revisions::modern::{
    self, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION,
};
use crate::protocol::rules::era::{self, Era, LegacySign, ProbeAnswer};
use crate::protocol::wire::framing::Frame;
use crate::server::http::{
    self, HEALTH_PATH, HttpOptions, READY_PATH, SessionEnds, SessionFactory, SessionStart,
};
use crate::transport::children::ChildRegistry;
use crate::transport::open::UpstreamSpec;
use crate::transport::queue::{EDITOR_QUEUE, QueueStats};
use crate::transport::shared::SharedUpstream;
use crate::transport::writer::Writer;
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::process::{reap_orphans, sign_in_actor, start_watchdog_after, termination_signal};

/// The variable of the bearer token that clients send beyond loopback (read and removed from
/// the environment at start with the bridge's other secrets: `auth::opener::SECRET_ENV`).
pub const LISTEN_TOKEN_ENV: &str = "MCP_BRIDGE_LISTEN_TOKEN";
/// The characters of a session's id that its log lines show (of 32).
pub const SESSION_LABEL_CHARS: usize = 8;
/// The random bytes of a token made at start (256 bits, written as 64 hex digits).
pub const MADE_TOKEN_BYTES: usize = 32;
/// The exit code when the server cannot be served: the address is taken or not this
/// machine's, the command cannot start, or no token can be made.
pub const EXIT_CANNOT_SERVE: i32 = 1;

/// Who may use the endpoint.
#[derive(Clone, PartialEq, Eq)]
pub enum Access {
    /// Every client that reaches the address: a loopback address without
    /// `MCP_BRIDGE_LISTEN_TOKEN`, or `--no-auth`.
    Open,
    /// Clients that send `Authorization: Bearer <token>` with this token.
    Token(String),
}

impl std::fmt::Debug for Access {
    // The token is a secret: never in a log line or a panic message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Access::Open => f.write_str("Open"),
            Access::Token(_) => f.write_str("Token(..)"),
        }
    }
}

/// Where the token of [`Access::Token`] came from, or why there is none: what the start line
/// tells the user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessSource {
    /// A loopback address without `MCP_BRIDGE_LISTEN_TOKEN`: open to local clients.
    Loopback,
    /// `MCP_BRIDGE_LISTEN_TOKEN`.
    Environment,
    /// Made at start (beyond loopback, no variable, no `--no-auth`): written to stderr once.
    Made,
    /// `--no-auth` beyond loopback: open to anyone who reaches the address.
    NoAuth,
}

/// Why the access rule cannot be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AccessError {
    /// `MCP_BRIDGE_LISTEN_TOKEN` is no bearer token: no client could send it.
    #[error(
        "{LISTEN_TOKEN_ENV} is no bearer token (RFC 6750: letters, digits and -._~+/, then = padding): no client could send it"
    )]
    NotAToken,
    /// A token was needed and the system gave no random bytes for one.
    #[error("no random bytes for a token: set {LISTEN_TOKEN_ENV}")]
    NoRandom,
}

/// Whether `token` is a `b64token` (RFC 6750 §2.1), the text a client sends after `Bearer `.
fn is_bearer_token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

/// The access rule of `--serve-http ADDR`: a token from the environment applies on every
/// address; beyond loopback without one a token is made (`make`), unless `no_auth`, which
/// beyond loopback wins over the variable.
///
/// # Errors
/// The variable is no bearer token; a token was needed and `make` made none.
pub fn access(
    addr: SocketAddr,
    env_token: Option<String>,
    no_auth: bool,
    make: impl FnOnce() -> Option<String>,
) -> Result<(Access, AccessSource), AccessError> {
    let loopback = addr.ip().is_loopback();
    if env_token.as_deref().is_some_and(|t| !is_bearer_token(t)) {
        return Err(AccessError::NotAToken);
    }
    Ok(match (env_token, no_auth) {
        (_, true) if !loopback => (Access::Open, AccessSource::NoAuth),
        (Some(token), _) => (Access::Token(token), AccessSource::Environment),
        (None, _) if loopback => (Access::Open, AccessSource::Loopback),
        (None, _) => (
            Access::Token(make().ok_or(AccessError::NoRandom)?),
            AccessSource::Made,
        ),
    })
}

/// A token for this run: [`MADE_TOKEN_BYTES`] random bytes in hex (`None`: the system gave
/// no random bytes).
pub fn make_token() -> Option<String> {
    let mut bytes = [0u8; MADE_TOKEN_BYTES];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `sent` is `token`, in a time that does not depend on where they differ (a
/// client that measures answers learns nothing of the token).
fn same_token(sent: &str, token: &str) -> bool {
    use subtle::ConstantTimeEq;
    sent.len() == token.len() && bool::from(sent.as_bytes().ct_eq(token.as_bytes()))
}

/// What `--serve-http` runs: the address, who may use it, and the bridge of each session.
pub struct ServeSetup {
    /// `--serve-http ADDR`.
    pub addr: SocketAddr,
    /// Who may use the endpoint ([`access`]).
    pub access: Access,
    /// Where the access rule came from, for the start lines.
    pub source: AccessSource,
    /// The bridge of every session: the command line's, as one bridge on stdio has it.
    pub config: BridgeConfig,
    /// `--max-sessions`: sessions at once.
    pub max_sessions: usize,
    /// `--upstream-lifetime`: a run of the server for each session, or one for all.
    pub lifetime: UpstreamLifetime,
}

/// The HTTP options of the endpoint: the server API's defaults, the body bound by
/// `--max-line-bytes` (one message, as a line on stdio), the bridge's nesting depth, the
/// health path, and the bearer check of a token.
fn options(setup: &ServeSetup) -> HttpOptions {
    let options = HttpOptions {
        max_body_bytes: setup.config.max_line_bytes,
        max_depth: setup.config.max_depth,
        health_path: Some(HEALTH_PATH.into()),
        max_sessions: setup.max_sessions,
        ..HttpOptions::default()
    };
    match &setup.access {
        Access::Open => options,
        Access::Token(token) => {
            let token = token.clone();
            options.bearer(move |sent: &str| same_token(sent, &token))
        }
    }
}

/// Starts the HTTP server inside the current actix `System`: it binds, writes its URL, serves
/// until a termination signal, then ends every session, waits for their bridges to end and
/// stops the System with 0 (1 when the address cannot be bound). Every session's child
/// joins `children`.
pub fn start(setup: ServeSetup, children: Arc<ChildRegistry>) {
    let (starts, requests) = mpsc::unbounded_channel();
    let live = Rc::new(Live::default());
    let grace = setup.config.shutdown_grace;
    let options = options(&setup).sessions(Sessions { starts });
    actix::spawn(reap_orphans(children.clone()));
    let ServeSetup {
        addr,
        access,
        source,
        mut config,
        lifetime,
        ..
    } = setup;
    let token = match &access {
        Access::Token(token) if source == AccessSource::Made => Some(token.clone()),
        _ => None,
    };
    actix::spawn(async move {
        // Bound first: a taken address is said before any server starts.
        let listener = match tokio::net::TcpListener::bind(addr).await {
            Ok(listener) => listener,
            Err(e) => {
                log::raw_line("http", "error", &format!("cannot listen on {addr}: {e}"));
                System::current().stop_with_code(EXIT_CANNOT_SERVE);
                return;
            }
        };
        // Installed before the probe: a signal during it stops the process as any other.
        let mut signal = Box::pin(termination_signal(children.clone()));
        let (shared, era) = tokio::select! {
            decided = lifetime_of(lifetime, &config, &children) => match decided {
                Ok(decided) => decided,
                Err(why) => {
                    log::raw_line("http", "error", &why);
                    System::current().stop_with_code(EXIT_CANNOT_SERVE);
                    return;
                }
            },
            stop = &mut signal => {
                tracing::info!(target: "http", "received {stop} before the server was served");
                System::current().stop_with_code(0);
                return;
            }
        };
        let mut options = options;
        options.ready = Some((
            READY_PATH.into(),
            readiness(&config, shared.clone(), era, live.count.clone()),
        ));
        if let Some(shared) = &shared {
            config.upstream = UpstreamSpec::Shared(shared.clone());
        }
        let config_discover_timeout = config.discover_timeout;
        actix::spawn(start_sessions(
            requests,
            config,
            children.clone(),
            live.clone(),
        ));
        let tools = match &shared {
            Some(shared) => tools_of(shared, config_discover_timeout).await,
            None => Vec::new(),
        };
        let relay = shared
            .clone()
            .map(|shared| Arc::new(shared) as Arc<dyn http::Relay>);
        let bound = match http::bind_sessions(listener, options, relay, &tools) {
            Ok(bound) => bound,
            Err(e) => {
                log::raw_line("http", "error", &format!("cannot listen on {addr}: {e}"));
                System::current().stop_with_code(EXIT_CANNOT_SERVE);
                return;
            }
        };
        start_lines(&bound.url(), addr, source, token.as_deref());
        let served = bound
            .run_until(async move {
                let signal = signal.await;
                tracing::info!(target: "http", "received {signal}: the sessions end, and each stops its server");
            })
            .await;
        if let Err(e) = served {
            tracing::error!(target: "http", "the HTTP server failed: {e}");
        }
        // Every session's input has closed: each bridge stops its server. The watchdog bounds
        // the wait, as at the end of stdin.
        start_watchdog_after(watchdog_after(grace), "the stop signal", children);
        live.none_left().await;
        if let Some(shared) = shared {
            shared.close(grace).await;
        }
        System::current().stop_with_code(0);
    });
}

/// The shared run of the server, when there is one: `shared`, or `auto` with a command
/// whose server answers `server/discover` as a 2026-07-28 server does (the run of the probe
/// stays, as the shared one); none with `per-session`, a URL, or another answer (a
/// 2025-11-25 server keeps one session per connection). With the protocol revision the probe
/// found, if any. Says which on stderr.
///
/// # Errors
/// `shared` with a server that is no 2026-07-28 server: why (it cannot be shared, and a
/// 2026-07-28 client's request would reach a server that was never initialized).
async fn lifetime_of(
    lifetime: UpstreamLifetime,
    config: &BridgeConfig,
    children: &Arc<ChildRegistry>,
) -> Result<(Option<SharedUpstream>, Option<&'static str>), String> {
    let is_command = matches!(config.upstream, UpstreamSpec::Child { .. });
    match lifetime {
        UpstreamLifetime::PerSession => return Ok((None, None)),
        UpstreamLifetime::Auto if !is_command => return Ok((None, None)),
        UpstreamLifetime::Shared | UpstreamLifetime::Auto => {}
    }
    let shared = shared_run(config, children);
    let era = probe(&shared, config.discover_timeout).await;
    if let Era::Modern(_) = era {
        tracing::info!(target: "http", "the server speaks MCP 2026-07-28: one run of it serves every session and 2026-07-28 client (--upstream-lifetime shared)");
        return Ok((Some(shared), Some(modern::PROTOCOL_VERSION)));
    }
    let (why, revision) = match era {
        // A server that answered, as a 2025-11-25 server answers; silence says no revision.
        Era::Legacy(LegacySign::NoReply) => (LegacySign::NoReply.to_string(), None),
        Era::Legacy(sign) => (sign.to_string(), Some(LEGACY_REVISION)),
        Era::Error(error) => (error.message, None),
        Era::Modern(_) => (String::new(), None),
    };
    shared.close(config.shutdown_grace).await;
    if lifetime == UpstreamLifetime::Shared {
        return Err(format!(
            "--upstream-lifetime shared: the server is no 2026-07-28 server ({why}), so it cannot be shared: serve it with --upstream-lifetime per-session"
        ));
    }
    tracing::info!(target: "http", "the server is no 2026-07-28 server ({why}): each session gets a run of its own (--upstream-lifetime per-session)");
    Ok((None, revision))
}

/// A shared run that ended within this time of its start (10 s) makes the readiness report
/// `failed` until a run is up again: it crashed at start or in a loop.
pub const SHORT_RUN: Duration = Duration::from_secs(10);

/// The revision of a server that answered the probe as no 2026-07-28 server does, as the
/// readiness report names it.
const LEGACY_REVISION: &str = "2025-11-25";

/// The readiness report of `GET /readyz`: the server's name, how its runs live, the revision
/// the probe found (`era`), its state, the runs started again, and the sessions open. Not
/// ready while the shared run's last start failed.
fn readiness(
    config: &BridgeConfig,
    shared: Option<SharedUpstream>,
    era: Option<&'static str>,
    sessions: Arc<AtomicUsize>,
) -> http::Readiness {
    let name = config
        .name
        .clone()
        .or_else(|| config.upstream.fallback_name())
        .unwrap_or_else(|| "server".into());
    http::Readiness::new(move || {
        let sessions = sessions.load(Ordering::Relaxed);
        let (lifetime, state, restarts, detail) = match &shared {
            None => ("per-session", "ready", 0, None),
            Some(shared) => {
                let runs = shared.runs();
                let short_lived = runs.last_lived.is_some_and(|lived| lived < SHORT_RUN);
                let state = match (runs.running, &runs.failed) {
                    (true, _) => "ready",
                    (false, Some(_)) => "failed",
                    // A run that ended soon after its start is one that cannot run: a crash
                    // at start, or a crash loop.
                    (false, None) if short_lived => "failed",
                    // The next session or request starts it again.
                    (false, None) => "restarting",
                };
                let detail = runs.failed.clone().or(runs.last_end.clone());
                ("shared", state, runs.started.saturating_sub(1), detail)
            }
        };
        let mut upstream = serde_json::json!({"name": name, "lifetime": lifetime, "era": era,
            "state": state, "restarts": restarts, "sessions": sessions});
        if let Some(detail) = detail {
            upstream["detail"] = Value::from(detail);
        }
        let ready = state != "failed";
        (
            ready,
            serde_json::json!({"ready": ready, "upstreams": [upstream]}),
        )
    })
}

/// The most pages of `tools/list` read from the shared run at start.
pub const MAX_TOOL_PAGES: usize = 100;

/// The names and input schemas of the shared run's tools, each page within `limit`, for the
/// `Mcp-Param-*` checks of the 2026-07-28 requests relayed to it (read once, at start: a
/// later change of the list is not seen). Empty when the server does not list them.
async fn tools_of(shared: &SharedUpstream, limit: Duration) -> Vec<(String, Value)> {
    let mut tools = Vec::new();
    let mut cursor: Option<Value> = None;
    for page in 0..MAX_TOOL_PAGES {
        let mut params = serde_json::json!({"_meta": probe_meta()});
        if let Some(cursor) = cursor.take() {
            params["cursor"] = cursor;
        }
        let list = serde_json::json!({"jsonrpc": "2.0", "id": format!("mcp-bridge-tools-{page}"),
            "method": methods::TOOLS_LIST, "params": params});
        let (lines, _unread) = mpsc::channel(1);
        let answer = tokio::time::timeout(limit, http::Relay::relay(shared, list, lines)).await;
        let Ok(Some(answer)) = answer else { break };
        let Some(result) = answer.get("result") else {
            break;
        };
        for tool in result
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let (Some(name), Some(schema)) = (
                tool.get("name").and_then(Value::as_str),
                tool.get("inputSchema"),
            ) {
                tools.push((name.to_owned(), schema.clone()));
            }
        }
        match result.get("nextCursor") {
            Some(next) if !next.is_null() => cursor = Some(next.clone()),
            _ => break,
        }
    }
    tools
}

/// The `_meta` of the bridge's own requests to the shared run (the probe, the tools' list).
fn probe_meta() -> Value {
    serde_json::json!({
        META_PROTOCOL_VERSION: modern::PROTOCOL_VERSION,
        META_CLIENT_CAPABILITIES: {},
        META_CLIENT_INFO: {"name": "mcp-bridge", "version": env!("CARGO_PKG_VERSION")}})
}

/// A shared run of the configuration's upstream.
fn shared_run(config: &BridgeConfig, children: &Arc<ChildRegistry>) -> SharedUpstream {
    let spec = config.upstream.clone();
    let open = config.open_upstream;
    SharedUpstream::start(
        spec.fallback_name(),
        Box::new(move |options| open(&spec, options)),
        config.max_line_bytes,
        children.clone(),
    )
}

/// The era of the shared run's server, by its answer to one `server/discover` within
/// `limit` (`protocol::rules::era::decide`, as a bridge decides it).
async fn probe(shared: &SharedUpstream, limit: Duration) -> Era {
    let discover = serde_json::json!({"jsonrpc": "2.0", "id": "mcp-bridge-probe",
        "method": methods::SERVER_DISCOVER, "params": {"_meta": probe_meta()}});
    // Its notifications (none are asked for) are not read.
    let (lines, _unread) = mpsc::channel(1);
    let answer = tokio::time::timeout(limit, http::Relay::relay(shared, discover, lines)).await;
    let answer = match &answer {
        Ok(Some(answer)) => answer,
        Ok(None) => return era::decide(ProbeAnswer::Closed),
        Err(_) => return era::decide(ProbeAnswer::NoReply),
    };
    if let Some(result) = answer.get("result") {
        return era::decide(ProbeAnswer::Result(result));
    }
    match answer.get("error") {
        // The run ended before it answered (the hub's own answer).
        Some(error)
            if error.pointer("/data/cause") == Some(&Value::from(Cause::UpstreamExited.name())) =>
        {
            era::decide(ProbeAnswer::Closed)
        }
        Some(error) => era::decide(ProbeAnswer::Error(error)),
        None => era::decide(ProbeAnswer::Invalid),
    }
}

/// The lines of a start: the URL (always written, whatever `--log-level`: a client needs it),
/// and what guards it.
fn start_lines(url: &str, addr: SocketAddr, source: AccessSource, made: Option<&str>) {
    log::raw_line("http", "info", &format!("listening on {url}"));
    match (source, made) {
        (AccessSource::Made, Some(token)) => log::raw_line(
            "http",
            "warn",
            &format!(
                "clients of {addr} need the header \"Authorization: Bearer {token}\": a token made for this run ({LISTEN_TOKEN_ENV} sets one)"
            ),
        ),
        (AccessSource::NoAuth, _) => log::raw_line(
            "http",
            "warn",
            &format!(
                "--no-auth: anyone who reaches {addr} can use the server (a {LISTEN_TOKEN_ENV} is not used)"
            ),
        ),
        _ => {}
    }
}

/// The session factory of the endpoint: it hands each session's ends to the actor thread,
/// where [`start_sessions`] starts its bridge (the actors are not `Send`).
struct Sessions {
    starts: mpsc::UnboundedSender<(SessionEnds, oneshot::Sender<io::Result<()>>)>,
}

impl SessionFactory for Sessions {
    fn start(&self, ends: SessionEnds) -> SessionStart {
        let (started, reply) = oneshot::channel();
        let sent = self.starts.send((ends, started)).is_ok();
        Box::pin(async move {
            let stopping = || Err(io::Error::other("the bridge is stopping"));
            if !sent {
                return stopping();
            }
            reply.await.unwrap_or_else(|_| stopping())
        })
    }
}

/// Starts a bridge for each session that the HTTP server hands over, on the actor thread.
async fn start_sessions(
    mut requests: mpsc::UnboundedReceiver<(SessionEnds, oneshot::Sender<io::Result<()>>)>,
    config: BridgeConfig,
    children: Arc<ChildRegistry>,
    live: Rc<Live>,
) {
    while let Some((ends, started)) = requests.recv().await {
        start_session(&config, ends, &children, &live);
        let _ = started.send(Ok(()));
    }
}

/// One session's bridge: the command line's configuration, the session's input as the
/// editor's frames and its output as the editor's writer.
fn start_session(
    config: &BridgeConfig,
    ends: SessionEnds,
    children: &Arc<ChildRegistry>,
    live: &Rc<Live>,
) {
    let SessionEnds { input, output, id } = ends;
    // Its log lines name it (`frontend: info: session 3f2a9c01: ...`), as a gateway's name
    // their server; its summary line is at debug then, unless it dropped something.
    let mut config = config.clone();
    let label: String = id.chars().take(SESSION_LABEL_CHARS).collect();
    config.member = Some(format!("session {label}").into());
    let frames = futures_util::stream::unfold(input, |mut input| async move {
        let line = input.recv().await?;
        Some((Frame::Line(line), input))
    });
    let output = Writer::for_line_channel(output, EDITOR_QUEUE, QueueStats::new("editor_queue"));
    live.begin();
    let host = Rc::new(SessionHost {
        output: output.clone(),
        children: children.clone(),
        live: live.clone(),
        ended: Cell::new(false),
    });
    supervisor::start_with(
        config,
        Box::pin(frames),
        output,
        // The process's signal stops the HTTP server, which ends every session's input.
        Box::pin(std::future::pending()),
        host,
        sign_in_actor(),
    );
}

/// The count of the sessions' bridges still running, which the stop waits for.
#[derive(Default)]
struct Live {
    running: Cell<usize>,
    changed: Notify,
    /// The same count, for the readiness report (read on the HTTP server's tasks).
    count: Arc<AtomicUsize>,
}

impl Live {
    fn begin(&self) {
        self.running.set(self.running.get() + 1);
        self.count.store(self.running.get(), Ordering::Relaxed);
    }

    fn end(&self) {
        self.running.set(self.running.get().saturating_sub(1));
        self.count.store(self.running.get(), Ordering::Relaxed);
        self.changed.notify_one();
    }

    /// Waits until no session's bridge runs.
    async fn none_left(&self) {
        while self.running.get() > 0 {
            self.changed.notified().await;
        }
    }
}

/// The host of a session's bridge: its end is the session's, not the process's; its child
/// joins the process's registry, which the panic hook, the watchdog and a second signal
/// reach.
struct SessionHost {
    output: Writer,
    children: Arc<ChildRegistry>,
    live: Rc<Live>,
    /// Whether [`Host::exit`] ran: the count goes down once.
    ended: Cell<bool>,
}

impl Host for SessionHost {
    fn step(&self, step: &'static str) {
        tracing::debug!(target: "supervisor", "shutdown step: {step}");
    }
    // The process's own watchdog starts at the stop; a session's end is no reason to end
    // the process.
    fn start_watchdog(&self, _after: Duration) {}
    fn exit(&self, code: i32) {
        tracing::debug!(target: "supervisor", "a session's bridge ended with exit code {code}");
        // The writer's channel closes once it is empty: the HTTP server ends the session.
        self.output.close();
        if !self.ended.replace(true) {
            self.live.end();
        }
    }
    fn children(&self) -> Arc<ChildRegistry> {
        self.children.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(text: &str) -> SocketAddr {
        match text.parse() {
            Ok(addr) => addr,
            Err(e) => panic!("{text}: {e}"),
        }
    }

    fn made() -> Option<String> {
        Some("made".into())
    }

    #[test]
    fn a_loopback_address_is_open_unless_a_token_is_set() {
        for text in ["127.0.0.1:8000", "[::1]:8000", "127.0.0.2:1"] {
            assert_eq!(
                access(addr(text), None, false, made),
                Ok((Access::Open, AccessSource::Loopback)),
                "{text}"
            );
            assert_eq!(
                access(addr(text), Some("t".into()), false, made),
                Ok((Access::Token("t".into()), AccessSource::Environment)),
                "{text}"
            );
        }
    }

    #[test]
    fn beyond_loopback_a_token_is_made_unless_one_is_set_or_no_auth_is_said() {
        let any = addr("0.0.0.0:8000");
        assert_eq!(
            access(any, None, false, made),
            Ok((Access::Token("made".into()), AccessSource::Made))
        );
        assert_eq!(
            access(any, Some("t".into()), false, made),
            Ok((Access::Token("t".into()), AccessSource::Environment))
        );
        assert_eq!(
            access(any, Some("t".into()), true, made),
            Ok((Access::Open, AccessSource::NoAuth))
        );
        assert_eq!(
            access(any, None, false, || None),
            Err(AccessError::NoRandom)
        );
    }

    #[test]
    fn a_token_of_the_environment_that_no_client_could_send_is_refused() {
        let local = addr("127.0.0.1:8000");
        for bad in ["a b", "t\u{e9}", "abc\n", "=", "a=b", "Bearer x"] {
            assert_eq!(
                access(local, Some(bad.into()), false, made),
                Err(AccessError::NotAToken),
                "{bad:?}"
            );
        }
        for good in ["abc", "a-b.c_d~e+f/g==", "0123456789abcdef"] {
            assert!(
                access(local, Some(good.into()), false, made).is_ok(),
                "{good:?}"
            );
        }
    }

    #[test]
    fn a_made_token_is_64_hex_digits_and_new_each_time() {
        let (Some(a), Some(b)) = (make_token(), make_token()) else {
            panic!("random bytes");
        };
        assert_eq!(a.len(), 2 * MADE_TOKEN_BYTES);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn only_the_same_token_is_the_token() {
        assert!(same_token("abc", "abc"));
        assert!(!same_token("abd", "abc"));
        assert!(!same_token("ab", "abc"));
        assert!(!same_token("", "abc"));
        assert!(!same_token("abcd", "abc"));
    }

    #[test]
    fn the_token_is_never_in_a_debug_line() {
        assert_eq!(format!("{:?}", Access::Token("s3cret".into())), "Token(..)");
    }
}
