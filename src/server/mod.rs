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

mod connection;
mod context;
mod defs;
mod dispatch;
mod error;
mod listen;
mod mrtr;
mod output;
mod results;
mod wire;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::broadcast;

pub use context::{LogLevel, RequestContext};
pub use defs::{PromptDef, ResourceDef, ResourceTemplateDef, ToolDef};
pub use error::{ErrorCode, ErrorObject, RpcError};
pub use listen::{Event, ListenEnd, SUBSCRIPTION_ID_KEY};

/// The only protocol revision this server speaks.
pub const PROTOCOL_VERSION: &str = "2026-07-28";
/// The `_meta` key of the server's identity on every result.
pub use crate::protocol::modern::META_SERVER_INFO as SERVER_INFO_KEY;
/// Published events that may wait for a slow listen stream; past this it gets a catch-up.
const EVENT_QUEUE: usize = 256;

/// What a handler produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The result object without `resultType` (for example `{"content": [...]}`).
    Complete(Value),
    /// An `InputRequiredResult` (2026-07-28 basic/patterns/mrtr). At least one of the two must
    /// be given. Each input request is a bare `{method, params}` object; the server answers
    /// `-32021` instead if the request's client capabilities do not cover one of them.
    InputRequired {
        /// `inputRequests`, keyed by names the handler chooses (left out when empty).
        input_requests: Map<String, Value>,
        /// `requestState`, echoed byte-exact by the client on the retry.
        request_state: Option<String>,
    },
}

impl Outcome {
    /// A `CallToolResult` with one text content block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Complete(json!({ "content": [{ "type": "text", "text": text.into() }] }))
    }

    /// A `CallToolResult` with one text block and `isError: true`: a tool execution error the
    /// model can see (as opposed to a JSON-RPC error).
    pub fn tool_error(text: impl Into<String>) -> Self {
        Self::Complete(json!({
            "content": [{ "type": "text", "text": text.into() }],
            "isError": true,
        }))
    }
}

/// What every handler returns.
pub type HandlerFuture = BoxFuture<'static, Result<Outcome, RpcError>>;
type Handler = Arc<dyn Fn(Value, RequestContext) -> HandlerFuture + Send + Sync>;
type DiscoverHook =
    Arc<dyn Fn(RequestContext) -> BoxFuture<'static, Result<(), RpcError>> + Send + Sync>;
type ListenHook =
    Arc<dyn Fn(RequestContext, Value) -> BoxFuture<'static, Result<(), RpcError>> + Send + Sync>;

fn boxed<F, Fut>(handler: F) -> Handler
where
    F: Fn(Value, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Outcome, RpcError>> + Send + 'static,
{
    Arc::new(move |value, ctx| Box::pin(handler(value, ctx)))
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

struct Inner {
    info: Value,
    send_server_info: bool,
    instructions: Option<String>,
    ttl_ms: u64,
    cache_scope: CacheScope,
    page_size: Option<usize>,
    tools: Vec<(ToolDef, Handler)>,
    prompts: Vec<(PromptDef, Handler)>,
    resources: Vec<(ResourceDef, Handler)>,
    templates: Vec<(ResourceTemplateDef, Handler)>,
    completion: Option<Handler>,
    discover_hook: Option<DiscoverHook>,
    listen_hook: Option<ListenHook>,
    listen: bool,
    trace_input: Option<PathBuf>,
    events: broadcast::Sender<listen::Broadcast>,
}

impl Server {
    /// Starts building a server that calls itself `name` `version` in `serverInfo`.
    pub fn builder(name: &str, version: &str) -> ServerBuilder {
        ServerBuilder {
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
            completion: None,
            discover_hook: None,
            listen_hook: None,
            listen: true,
            trace_input: None,
        }
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

    /// Publishes an event to every open listen stream whose acknowledged filter covers it.
    /// Listens opened later do not see it.
    pub fn notify(&self, event: Event) {
        // An error only means that no listen is open.
        let _ = self.inner.events.send(listen::Broadcast::Event(event));
    }

    /// Ends every open listen stream from the server side, in the way given.
    pub fn end_listens(&self, how: ListenEnd) {
        let _ = self.inner.events.send(listen::Broadcast::End(how));
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

/// Collects what a [`Server`] offers.
pub struct ServerBuilder {
    info: Value,
    send_server_info: bool,
    instructions: Option<String>,
    ttl_ms: u64,
    cache_scope: CacheScope,
    page_size: Option<usize>,
    tools: Vec<(ToolDef, Handler)>,
    prompts: Vec<(PromptDef, Handler)>,
    resources: Vec<(ResourceDef, Handler)>,
    templates: Vec<(ResourceTemplateDef, Handler)>,
    completion: Option<Handler>,
    discover_hook: Option<DiscoverHook>,
    listen_hook: Option<ListenHook>,
    listen: bool,
    trace_input: Option<PathBuf>,
}

impl ServerBuilder {
    /// Sets `instructions` of the `DiscoverResult`.
    #[must_use]
    pub fn instructions(mut self, instructions: &str) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Whether results carry `_meta["io.modelcontextprotocol/serverInfo"]` (default: yes,
    /// as the spec says they SHOULD).
    #[must_use]
    pub fn server_info(mut self, send: bool) -> Self {
        self.send_server_info = send;
        self
    }

    /// `ttlMs` and `cacheScope` of cacheable results (discover, the lists, `resources/read`
    /// when its handler sets none). Default: 60 000 ms, public.
    #[must_use]
    pub fn cache(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.ttl_ms = ttl_ms;
        self.cache_scope = scope;
        self
    }

    /// Splits list results into pages of this many items, with an opaque `nextCursor`.
    /// Default: one page.
    #[must_use]
    pub fn page_size(mut self, items: usize) -> Self {
        self.page_size = Some(items.max(1));
        self
    }

    /// Adds a tool. The handler gets `params.arguments` (`{}` if absent).
    #[must_use]
    pub fn tool<F, Fut>(mut self, def: ToolDef, handler: F) -> Self
    where
        F: Fn(Value, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Outcome, RpcError>> + Send + 'static,
    {
        self.tools.push((def, boxed(handler)));
        self
    }

    /// Adds a prompt. The handler gets `params.arguments` (`{}` if absent, string values only)
    /// and returns a `GetPromptResult` body (`{"messages": [...]}`).
    #[must_use]
    pub fn prompt<F, Fut>(mut self, def: PromptDef, handler: F) -> Self
    where
        F: Fn(Value, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Outcome, RpcError>> + Send + 'static,
    {
        self.prompts.push((def, boxed(handler)));
        self
    }

    /// Adds a resource. The handler gets `{"uri": …}` and returns a `ReadResourceResult` body
    /// (`{"contents": [...]}`).
    #[must_use]
    pub fn resource<F, Fut>(mut self, def: ResourceDef, handler: F) -> Self
    where
        F: Fn(Value, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Outcome, RpcError>> + Send + 'static,
    {
        self.resources.push((def, boxed(handler)));
        self
    }

    /// Adds a resource template. Its handler serves `resources/read` of URIs that match it and
    /// no resource: it gets `{"uri": …, "variables": {name: value}}`.
    #[must_use]
    pub fn resource_template<F, Fut>(mut self, def: ResourceTemplateDef, handler: F) -> Self
    where
        F: Fn(Value, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Outcome, RpcError>> + Send + 'static,
    {
        self.templates.push((def, boxed(handler)));
        self
    }

    /// Sets the `completion/complete` handler and advertises `completions`. It gets
    /// `{ref, argument, context?}` (already checked) and returns
    /// `{"completion": {"values": [...]}}`;
    /// more than 100 values are cut to 100 with `hasMore: true`.
    #[must_use]
    pub fn completion<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Value, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Outcome, RpcError>> + Send + 'static,
    {
        self.completion = Some(boxed(handler));
        self
    }

    /// Runs before `server/discover` is answered (after `_meta` validation). An error is sent
    /// instead of the `DiscoverResult`. Meant for test fixtures (delays, errors, exit after
    /// discover with [`RequestContext::close_connection`]).
    #[must_use]
    pub fn discover_hook<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), RpcError>> + Send + 'static,
    {
        self.discover_hook = Some(Arc::new(move |ctx| Box::pin(hook(ctx))));
        self
    }

    /// Whether the server offers `subscriptions/listen` (default: yes). Without it, discover
    /// declares no `listChanged` and no `resources.subscribe`, and a listen gets -32601.
    #[must_use]
    pub fn listen(mut self, offered: bool) -> Self {
        self.listen = offered;
        self
    }

    /// Runs before a `subscriptions/listen` is acknowledged (after `_meta` and filter
    /// validation), with the requested filter. An error answers the listen request instead of
    /// the acknowledgement. Meant for test fixtures (refused listens).
    #[must_use]
    pub fn listen_hook<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(RequestContext, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), RpcError>> + Send + 'static,
    {
        self.listen_hook = Some(Arc::new(move |ctx, filter| Box::pin(hook(ctx, filter))));
        self
    }

    /// Appends every received line, verbatim, to this file (flushed line by line), so tests can
    /// assert what the server received.
    #[must_use]
    pub fn trace_input(mut self, path: PathBuf) -> Self {
        self.trace_input = Some(path);
        self
    }

    /// Finishes the server.
    pub fn build(self) -> Server {
        let (events, _) = broadcast::channel(EVENT_QUEUE);
        Server {
            inner: Arc::new(Inner {
                info: self.info,
                send_server_info: self.send_server_info,
                instructions: self.instructions,
                ttl_ms: self.ttl_ms,
                cache_scope: self.cache_scope,
                page_size: self.page_size,
                tools: self.tools,
                prompts: self.prompts,
                resources: self.resources,
                templates: self.templates,
                completion: self.completion,
                discover_hook: self.discover_hook,
                listen_hook: self.listen_hook,
                listen: self.listen,
                trace_input: self.trace_input,
                events,
            }),
        }
    }
}
