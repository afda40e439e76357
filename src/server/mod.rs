//! A small MCP 2026-07-28 server over newline-delimited JSON-RPC (stdio or any byte stream).
//!
//! The server is stateless per 2026-07-28 basic/index: every request carries its own version
//! and client capabilities in `params._meta`, and nothing is inferred from earlier requests.
//! Register tools, prompts, resources, resource templates and a completion handler on a
//! [`ServerBuilder`], then [`Server::serve`] a connection. The server answers `server/discover`
//! from what was registered, validates every request's `_meta`, runs each request in its own
//! task (so many may be in flight, and `notifications/cancelled` drops one without a response),
//! and keeps `subscriptions/listen` streams fed with what [`Server::notify`] publishes.
//!
//! ```no_run
//! use mcp_bridge::server::{Outcome, Server, ToolDef};
//! use serde_json::json;
//!
//! # async fn run() -> std::io::Result<()> {
//! let server = Server::builder("demo", "1.0.0")
//!     .tool(
//!         ToolDef::new("echo", json!({"type": "object", "properties": {"text": {}}})),
//!         |arguments, _ctx| async move {
//!             let text = arguments["text"].as_str().unwrap_or_default().to_owned();
//!             Ok(Outcome::text(text))
//!         },
//!     )
//!     .build();
//! server.serve_stdio().await
//! # }
//! ```
//!
//! Handlers return [`Outcome::Complete`] with the result object *without* `resultType`; the
//! server adds `resultType: "complete"`, `ttlMs`/`cacheScope` where the schema requires them, and
//! `_meta["io.modelcontextprotocol/serverInfo"]`. `tools/call`, `prompts/get` and
//! `resources/read` handlers may instead return [`Outcome::InputRequired`] (MRTR); the client
//! retries with a new request whose `inputResponses`/`requestState` the handler reads from its
//! [`RequestContext`].

mod builder;
pub(crate) mod connection;
mod context;
mod defs;
mod dispatch;
mod error;
mod handler;
#[cfg(feature = "http-server")]
pub mod http;
mod invalid_arguments;
mod listen;
mod method;
mod mrtr;
mod outcome;
mod output;
mod results;

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::broadcast;

pub use builder::ServerBuilder;
pub use context::{LogLevel, RequestContext};
pub use defs::{PromptDef, ResourceDef, ResourceTemplateDef, ToolDef};
pub use error::{ErrorCode, ErrorObject, RpcError};
use handler::BoxedHandler;
pub use handler::{Asynchronous, Handler, HandlerFuture, HandlerReturn, Synchronous};
pub use listen::{ListenEnd, ListenEvent, SUBSCRIPTION_ID_KEY};
pub use outcome::{IntoReply, Outcome, Reply, elicit_form};

/// The only protocol revision this server speaks.
pub const PROTOCOL_VERSION: &str = "2026-07-28";
/// The `_meta` key of the server's identity on every result.
pub use crate::protocol::revisions::modern::META_SERVER_INFO as SERVER_INFO_KEY;
/// [`Server::end_listens`] calls that may wait for a listen stream that is busy writing.
const END_QUEUE: usize = 16;

type DiscoverHook =
    Arc<dyn Fn(RequestContext) -> BoxFuture<'static, Result<(), RpcError>> + Send + Sync>;
/// The resources a server lists beside its fixed ones, asked at each `resources/list`.
type ResourceLister = Arc<dyn Fn() -> Vec<ResourceDef> + Send + Sync>;
type ListenHook =
    Arc<dyn Fn(RequestContext, Value) -> BoxFuture<'static, Result<(), RpcError>> + Send + Sync>;

/// The limits of one connection served by [`crate::embed::serve_stdio_auto`]; both of its
/// paths take them. [`Limits::default`] gives the values the bridge itself uses.
///
/// ```
/// use mcp_bridge::server::Limits;
/// use std::time::Duration;
///
/// let limits = Limits { max_in_flight: 16, shutdown_grace: Duration::from_millis(500), ..Limits::default() };
/// assert_eq!(limits.max_line_bytes, 64 * 1024 * 1024);
/// assert_eq!(limits.max_depth, 64);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The longest line read, in bytes, newline excluded (64 MiB). A longer line gets -32600
    /// `line_too_long` with the id recovered from it.
    pub max_line_bytes: usize,
    /// The deepest nesting of `{`/`[` of a client message (64 levels); deeper gets -32600
    /// `too_deep`.
    pub max_depth: usize,
    /// Requests in flight at once (256). One more is answered at once with -32603
    /// `too_many_requests`: the reader never waits for a free slot.
    pub max_in_flight: usize,
    /// At the end of the input, how long the requests in flight may still finish (2 s)
    /// before they are cancelled.
    pub shutdown_grace: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_line_bytes: crate::protocol::wire::framing::DEFAULT_MAX_LINE_BYTES,
            max_depth: crate::protocol::wire::jsonrpc::MAX_CLIENT_DEPTH,
            max_in_flight: crate::protocol::revisions::defaults::MAX_IN_FLIGHT_REQUESTS,
            shutdown_grace: crate::protocol::revisions::defaults::SHUTDOWN_GRACE,
        }
    }
}

/// `cacheScope` of cacheable results (2026-07-28 server/utilities/caching).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheScope {
    /// `"public"`: no user-specific data; may be shared across authorization contexts.
    Public,
    /// `"private"`: reusable only within the same authorization context.
    Private,
}

impl CacheScope {
    fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Private => "private",
        }
    }
}

/// An MCP 2026-07-28 server. Cheap to clone; clones share registrations and listen streams.
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

/// What a server offers and how it answers: everything the builder collects.
struct Registry {
    info: Value,
    send_server_info: bool,
    instructions: Option<String>,
    ttl_ms: u64,
    cache_scope: CacheScope,
    page_size: Option<usize>,
    tools: Vec<(ToolDef, BoxedHandler)>,
    prompts: Vec<(PromptDef, BoxedHandler)>,
    resources: Vec<(ResourceDef, BoxedHandler)>,
    templates: Vec<(ResourceTemplateDef, BoxedHandler)>,
    resource_lister: Option<ResourceLister>,
    completion: Option<BoxedHandler>,
    discover_hook: Option<DiscoverHook>,
    listen_hook: Option<ListenHook>,
    listen: bool,
    trace_input: Option<PathBuf>,
}

/// A built server: its registry and its open listen streams.
struct Inner {
    registry: Registry,
    listens: listen::Listens,
    ends: broadcast::Sender<ListenEnd>,
}

impl std::ops::Deref for Inner {
    type Target = Registry;
    fn deref(&self) -> &Registry {
        &self.registry
    }
}

impl Server {
    /// Starts building a server that calls itself `name` `version` in `serverInfo`.
    pub fn builder(name: &str, version: &str) -> ServerBuilder {
        ServerBuilder(Registry {
            info: json!({ "name": name, "version": version }),
            send_server_info: true,
            instructions: None,
            ttl_ms: 60_000,
            cache_scope: CacheScope::Public,
            page_size: None,
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            resource_lister: None,
            completion: None,
            discover_hook: None,
            listen_hook: None,
            listen: true,
            trace_input: None,
        })
    }

    /// Serves one connection of newline-delimited JSON-RPC, one message per line, until the
    /// input ends (requests in flight are then cancelled and get no response), a handler calls
    /// [`RequestContext::close_connection`], or writing fails (that error is returned).
    ///
    /// # Errors
    /// A read or write error of the connection, or failure to open the input trace file.
    pub async fn serve<R, W>(&self, input: R, output: W) -> std::io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        connection::serve(self, input, output).await
    }

    /// [`Server::serve`] in memory, above the framing: each item of `input` is one message
    /// (its newline optional; a longer one than the line limit gets the same error), and each
    /// message of the server goes to `output` as one `String` without its newline. Ends as
    /// [`Server::serve`] does: at the end of `input` (every sender dropped), at
    /// [`RequestContext::close_connection`], or with `BrokenPipe` once `output`'s receiver is
    /// dropped. The bridge's in-process upstream (`transport::memory`) uses it.
    ///
    /// # Errors
    /// `BrokenPipe` when the receiver of `output` went away; failure to open the input trace.
    pub async fn serve_memory(
        &self,
        input: tokio::sync::mpsc::Receiver<Vec<u8>>,
        output: tokio::sync::mpsc::Sender<String>,
    ) -> std::io::Result<()> {
        connection::serve_memory(self, input, output).await
    }

    /// [`Server::serve`] on the process's stdin and stdout.
    ///
    /// # Errors
    /// As [`Server::serve`].
    pub async fn serve_stdio(&self) -> std::io::Result<()> {
        self.serve(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Answers one request outside any connection (see `connection::answer_alone`).
    pub(crate) async fn answer_alone(
        &self,
        id: &crate::protocol::wire::id::Id,
        method: &str,
        params: Option<Value>,
    ) -> Option<Value> {
        connection::answer_alone(self, id, method, params).await
    }

    /// Publishes an event to every open listen stream whose acknowledged filter covers it.
    /// Listens opened later do not see it. The event is queued on each stream's connection
    /// before `notify` returns, so a handler that publishes and then returns has its event
    /// written before its result. A stream whose connection's output queue is full gets one
    /// event of every kind it wants once there is room (a catch-up) instead.
    ///
    /// ```
    /// use mcp_bridge::server::{ListenEvent, Outcome, Server, ToolDef};
    /// let server = Server::builder("changing", "1.0.0")
    ///     .tool(ToolDef::no_input("touch"), |_, ctx| async move {
    ///         // Reaches every listen stream with `toolsListChanged` (and, through the embedded
    ///         // bridge, a 2025-11-25 editor) before this call's result.
    ///         ctx.server().notify(ListenEvent::ToolsListChanged);
    ///         ctx.server().notify(ListenEvent::ResourceUpdated { uri: "file:///notes.txt".into() });
    ///         Ok(Outcome::text("touched"))
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn notify(&self, event: ListenEvent) {
        self.inner.listens.publish(&event);
    }

    /// Ends every open listen stream from the server side, in the way given.
    ///
    /// ```
    /// use mcp_bridge::server::{ListenEnd, Server};
    /// let server = Server::builder("s", "1.0.0").build();
    /// server.end_listens(ListenEnd::Result); // no listen open: nothing happens
    /// ```
    pub fn end_listens(&self, how: ListenEnd) {
        // An error only means that no listen is open.
        let _ = self.inner.ends.send(how);
    }

    /// `{name, version}` as sent in `serverInfo`.
    pub fn info(&self) -> &Value {
        &self.inner.info
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Server({})", self.inner.info)
    }
}
