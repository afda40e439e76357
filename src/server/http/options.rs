//! The options of [`bind`](super::bind): the endpoint's path, the limits with their defaults,
//! the allowed origins, the bearer check and the sessions; and the addresses a command line
//! gives.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use super::bearer::{Bearer, TokenVerifier};
use super::session::{
    DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_CLAIM_TIME_LIMIT, DEFAULT_SESSION_IDLE_TIME_LIMIT,
    SessionFactory, Sessions,
};

/// The endpoint's path unless [`HttpOptions::path`] says otherwise.
pub const DEFAULT_PATH: &str = "/mcp";
/// The largest request body (4 MiB): a 2026-07-28 request is one JSON-RPC message.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// The largest header section, request line included (16 KiB); hyper answers 431 past it.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 16 * 1024;
/// The most header fields of one request (hyper's own default).
pub const DEFAULT_MAX_HEADERS: usize = 100;
/// The time a client has to send a request's header section (10 s): a client that trickles
/// its headers holds a connection (the "slowloris" attack).
pub const DEFAULT_HEADER_READ_TIME_LIMIT: Duration = Duration::from_secs(10);
/// The time to receive a request's body once its header section is in: a body that is not
/// whole by then gets 408 and its connection closes, so that a client that sends a body
/// slowly or never finishes it (Slowloris) holds a connection this long at most.
pub const DEFAULT_BODY_READ_TIME_LIMIT: Duration = Duration::from_secs(30);
/// The longest a request other than `subscriptions/listen` may run (5 minutes): then it is
/// cancelled and answered with -32603 (2026-07-28 basic/patterns/cancellation: a request
/// should time out and then be cancelled).
pub const DEFAULT_REQUEST_TIME_LIMIT: Duration = Duration::from_secs(300);
/// Requests in flight at once, listen streams included (256, as on stdio).
pub const DEFAULT_MAX_IN_FLIGHT: usize =
    crate::protocol::revisions::defaults::MAX_IN_FLIGHT_REQUESTS;
/// Connections open at once (1024): past it the server accepts no more until one closes.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// The interval of the SSE keep-alive comments (15 s): proxies drop idle streams, and the
/// spec encourages them on listen streams.
pub const DEFAULT_KEEP_ALIVE_INTERVAL: Duration = Duration::from_secs(15);
/// How long the server waits, once told to stop, for its open answers to end (1 s): every
/// listen and session stream ends at once, and a request still running has this long to
/// answer; then its answer ends without its response (an SSE stream) or with a -32603
/// (503), and the request is cancelled.
pub const DEFAULT_SHUTDOWN_GRACE_TIME_LIMIT: Duration = Duration::from_secs(1);
/// How long the server waits, after the grace time, for the answers it then ends to reach
/// their clients (100 ms): their last chunk is a write away.
pub(super) const SHUTDOWN_CUT_TIME_LIMIT: Duration = Duration::from_millis(100);
/// The well-known path of the RFC 9728 protected-resource metadata (RFC 9728 §3); the
/// endpoint's path follows it (§3.1: `/mcp` is served at
/// `/.well-known/oauth-protected-resource/mcp`).
pub const PROTECTED_RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource";
/// The usual path of [`HttpOptions::health_path`] (the Kubernetes convention).
pub const HEALTH_PATH: &str = "/healthz";
/// The usual path of [`HttpOptions::ready`] (the Kubernetes convention).
pub const READY_PATH: &str = "/readyz";
/// hyper's smallest read buffer: the header limit cannot be set below it.
pub(super) const MIN_HEADER_BYTES: usize = 8 * 1024;
/// The pause after a failed `accept` (out of file descriptors, say), so that the loop does
/// not spin while the condition lasts.
pub(super) const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);

/// The options of [`bind`](super::bind). [`HttpOptions::default`] gives the `DEFAULT_*`
/// values, the path `/mcp`, and loopback origins only.
///
/// ```
/// use mcp_bridge::server::http::HttpOptions;
/// let options = HttpOptions {
///     allowed_origins: vec!["https://app.example".into()],
///     max_body_bytes: 64 * 1024,
///     ..HttpOptions::default()
/// };
/// assert_eq!(options.path, "/mcp");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpOptions {
    /// The endpoint's path ([`DEFAULT_PATH`]).
    pub path: String,
    /// The largest request body; a larger one gets 413 ([`DEFAULT_MAX_BODY_BYTES`]).
    pub max_body_bytes: usize,
    /// The largest header section; a larger one gets 431 ([`DEFAULT_MAX_HEADER_BYTES`], at
    /// least 8 KiB).
    pub max_header_bytes: usize,
    /// The most header fields of a request; more get 431 ([`DEFAULT_MAX_HEADERS`]).
    pub max_headers: usize,
    /// The time to receive a request's header section ([`DEFAULT_HEADER_READ_TIME_LIMIT`]).
    pub header_read_time_limit: Duration,
    /// The time to receive a request's body once its headers are in; a body not whole by
    /// then gets 408 ([`DEFAULT_BODY_READ_TIME_LIMIT`]).
    pub body_read_time_limit: Duration,
    /// The longest a request other than a listen runs ([`DEFAULT_REQUEST_TIME_LIMIT`]).
    pub request_time_limit: Duration,
    /// Requests in flight at once; one more gets 503 ([`DEFAULT_MAX_IN_FLIGHT`]).
    pub max_in_flight: usize,
    /// Connections open at once ([`DEFAULT_MAX_CONNECTIONS`]).
    pub max_connections: usize,
    /// The deepest nesting of a request body (64 levels, as on stdio).
    pub max_depth: usize,
    /// The interval of the keep-alive comments of SSE streams
    /// ([`DEFAULT_KEEP_ALIVE_INTERVAL`]).
    pub keep_alive_interval: Duration,
    /// Origins (`scheme://host[:port]`, compared without regard to case) whose requests are
    /// served besides the loopback ones; a request with another `Origin` gets 403. A request
    /// without `Origin` (not from a browser) is served.
    pub allowed_origins: Vec<String>,
    /// Whether an `Origin` on a loopback host (`localhost`, `127.0.0.0/8`, `[::1]`, any
    /// port) is allowed (true).
    pub allow_loopback_origins: bool,
    /// Host names (with or without port) served besides the loopback ones when the server
    /// is bound to a loopback address: there, a request whose `Host` is another name gets
    /// 403 (a DNS rebinding attack reaches a local server under the attacker's name).
    pub allowed_hosts: Vec<String>,
    /// The bearer-token check ([`HttpOptions::bearer`]); none: requests are served without
    /// one, and no protected-resource metadata is served.
    pub bearer: Option<Bearer>,
    /// The `authorization_servers` of the protected-resource metadata (RFC 9728 §2): the
    /// issuers whose tokens the verifier accepts.
    pub authorization_servers: Vec<String>,
    /// The `resource` of the protected-resource metadata, the endpoint's URL as clients reach
    /// it (behind a reverse proxy, its public URL); none: `http://ADDR/PATH` as bound. Its
    /// metadata URL in `WWW-Authenticate` is made from it (RFC 9728 §3.1).
    pub resource: Option<String>,
    /// The 2025-11-25 sessions ([`HttpOptions::sessions`]); none: an `initialize` gets
    /// -32601 with 404, as every method 2026-07-28 does not have.
    pub sessions: Option<Sessions>,
    /// How long a session lives without a request and without an open stream
    /// ([`DEFAULT_SESSION_IDLE_TIME_LIMIT`]).
    pub session_idle_time_limit: Duration,
    /// How long a new session waits for a message after its `initialize`; then it ends, as
    /// its client never got its id ([`DEFAULT_SESSION_CLAIM_TIME_LIMIT`]).
    pub session_claim_time_limit: Duration,
    /// Sessions at once; one more `initialize` gets 503 ([`DEFAULT_MAX_SESSIONS`]).
    pub max_sessions: usize,
    /// How long [`HttpServer::run_until`](super::HttpServer::run_until) waits, once stopped,
    /// for the open answers to end ([`DEFAULT_SHUTDOWN_GRACE_TIME_LIMIT`]).
    pub shutdown_grace_time_limit: Duration,
    /// A path whose GET answers 200 `{"status":"alive"}` while the server runs, without the
    /// `Origin`, `Host` and bearer checks (a container's or a load balancer's liveness probe
    /// sends none of them); none: no such path ([`HEALTH_PATH`] is the usual one).
    pub health_path: Option<String>,
    /// A path whose GET answers the readiness report of its [`Readiness`]: 200 with
    /// its JSON when ready, else 503 with it, without the `Origin`, `Host` and bearer checks
    /// (a readiness probe sends none of them); none: no such path ([`READY_PATH`] is the
    /// usual one).
    pub ready: Option<(String, Readiness)>,
}

/// The readiness report of [`HttpOptions::ready`]: whether the server is ready, and what it
/// says of itself (`mcp-bridge --serve-http`: its upstream's state). Two are equal when they
/// are the same function.
#[derive(Clone)]
pub struct Readiness(pub(super) Arc<dyn Fn() -> (bool, serde_json::Value) + Send + Sync>);

impl Readiness {
    /// The report that `report` makes at each request.
    pub fn new(report: impl Fn() -> (bool, serde_json::Value) + Send + Sync + 'static) -> Self {
        Readiness(Arc::new(report))
    }
}

impl std::fmt::Debug for Readiness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Readiness(..)")
    }
}

impl PartialEq for Readiness {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Readiness {}

impl HttpOptions {
    /// Turns the bearer-token check on: a POST to the endpoint is served only with
    /// `Authorization: Bearer <token>` that `verifier` accepts, and the protected-resource
    /// metadata is served.
    ///
    /// ```
    /// use mcp_bridge::server::http::HttpOptions;
    /// let options = HttpOptions {
    ///     authorization_servers: vec!["https://auth.example".into()],
    ///     ..HttpOptions::default()
    /// }
    /// .bearer(|token: &str| token == "s3cret");
    /// assert!(options.bearer.is_some());
    /// ```
    #[must_use]
    pub fn bearer(mut self, verifier: impl TokenVerifier) -> Self {
        self.bearer = Some(Bearer(Arc::new(verifier)));
        self
    }

    /// Turns the 2025-11-25 sessions on: an `initialize` POST starts one, which `factory`
    /// serves (see the module doc; `embed::serve_http` serves them with the in-process
    /// bridge).
    #[must_use]
    pub fn sessions(mut self, factory: impl SessionFactory) -> Self {
        self.sessions = Some(Sessions(Arc::new(factory)));
        self
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            path: DEFAULT_PATH.into(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            max_headers: DEFAULT_MAX_HEADERS,
            header_read_time_limit: DEFAULT_HEADER_READ_TIME_LIMIT,
            body_read_time_limit: DEFAULT_BODY_READ_TIME_LIMIT,
            request_time_limit: DEFAULT_REQUEST_TIME_LIMIT,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_depth: crate::protocol::wire::jsonrpc::MAX_CLIENT_DEPTH,
            keep_alive_interval: DEFAULT_KEEP_ALIVE_INTERVAL,
            allowed_origins: Vec::new(),
            allow_loopback_origins: true,
            allowed_hosts: Vec::new(),
            bearer: None,
            authorization_servers: Vec::new(),
            resource: None,
            sessions: None,
            session_idle_time_limit: DEFAULT_SESSION_IDLE_TIME_LIMIT,
            session_claim_time_limit: DEFAULT_SESSION_CLAIM_TIME_LIMIT,
            max_sessions: DEFAULT_MAX_SESSIONS,
            shutdown_grace_time_limit: DEFAULT_SHUTDOWN_GRACE_TIME_LIMIT,
            health_path: None,
            ready: None,
        }
    }
}

/// `127.0.0.1:port`: where a local server listens (the spec: local servers should bind to
/// 127.0.0.1 only).
pub fn loopback(port: u16) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)
}

/// An address as a command line gives it: `PORT` (on 127.0.0.1), `:PORT` (the same), or
/// `HOST:PORT` with an IP address (`0.0.0.0:8000`, `[::1]:8000`).
///
/// ```
/// use mcp_bridge::server::http::parse_addr;
/// assert_eq!(parse_addr("8000").map(|a| a.to_string()), Ok("127.0.0.1:8000".into()));
/// assert_eq!(parse_addr("[::1]:9").map(|a| a.to_string()), Ok("[::1]:9".into()));
/// assert!(parse_addr("localhost:80").is_err());
/// ```
///
/// # Errors
/// [`AddrError`]: the text is none of these forms.
pub fn parse_addr(text: &str) -> Result<SocketAddr, AddrError> {
    let port = text.strip_prefix(':').unwrap_or(text);
    if let Ok(port) = port.parse::<u16>() {
        return Ok(loopback(port));
    }
    text.parse::<SocketAddr>()
        .map_err(|_| AddrError(text.to_owned()))
}

/// An address of the command line that is neither `PORT` nor `IP:PORT` (a host name is not
/// resolved): the text as given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not PORT or IP:PORT")]
pub struct AddrError(pub String);
