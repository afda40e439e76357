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

pub(crate) mod connection;
mod context;
mod defs;
mod dispatch;
mod error;
mod listen;
mod method;
mod mrtr;
mod output;
mod results;

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
pub use listen::{ListenEnd, ListenEvent, SUBSCRIPTION_ID_KEY};

/// The only protocol revision this server speaks.
pub const PROTOCOL_VERSION: &str = "2026-07-28";
/// The `_meta` key of the server's identity on every result.
pub use crate::protocol::modern::META_SERVER_INFO as SERVER_INFO_KEY;
/// [`Server::end_listens`] calls that may wait for a listen stream that is busy writing.
const END_QUEUE: usize = 16;

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

    /// A `GetPromptResult` with one user message of text.
    ///
    /// ```
    /// # use mcp_bridge::server::Outcome;
    /// # use serde_json::json;
    /// assert_eq!(Outcome::user_text("Hi"), Outcome::Complete(json!({"messages": [
    ///     {"role": "user", "content": {"type": "text", "text": "Hi"}}]})));
    /// ```
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::Complete(json!({
            "messages": [{ "role": "user", "content": { "type": "text", "text": text.into() } }],
        }))
    }

    /// A `ReadResourceResult` with the text contents of one resource.
    ///
    /// ```
    /// # use mcp_bridge::server::Outcome;
    /// # use serde_json::json;
    /// assert_eq!(Outcome::resource_text("a://b", "Hi"),
    ///     Outcome::Complete(json!({"contents": [{"uri": "a://b", "text": "Hi"}]})));
    /// ```
    pub fn resource_text(uri: &str, text: impl Into<String>) -> Self {
        Self::Complete(json!({ "contents": [{ "uri": uri, "text": text.into() }] }))
    }

    /// An `InputRequiredResult` with one input request under `key` and no `requestState`: the
    /// client answers it and retries, and the handler reads the answer with
    /// [`RequestContext::input_response`]`(key)`. `request` is a bare `{method, params}`
    /// object, such as [`elicit_form`] makes.
    ///
    /// ```
    /// # use mcp_bridge::server::{Outcome, elicit_form};
    /// let ask = Outcome::ask("name", elicit_form("Your name?", &["name"]));
    /// let Outcome::InputRequired { input_requests, request_state } = ask else { panic!() };
    /// assert_eq!(input_requests["name"]["method"], "elicitation/create");
    /// assert_eq!(request_state, None);
    /// ```
    pub fn ask(key: &str, request: Value) -> Self {
        let mut input_requests = Map::new();
        input_requests.insert(key.into(), request);
        Self::InputRequired {
            input_requests,
            request_state: None,
        }
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

/// An `elicitation/create` input request (form mode) for the required string `fields`;
/// the answer's `content` holds them (`answer["content"]["name"]`).
///
/// ```
/// # use mcp_bridge::server::elicit_form;
/// # use serde_json::json;
/// assert_eq!(elicit_form("Your name?", &["name"]), json!({
///     "method": "elicitation/create",
///     "params": {"message": "Your name?", "requestedSchema": {"type": "object",
///         "properties": {"name": {"type": "string"}}, "required": ["name"]}}}));
/// ```
pub fn elicit_form(message: &str, fields: &[&str]) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|field| ((*field).to_owned(), json!({ "type": "string" })))
        .collect();
    json!({
        "method": crate::protocol::methods::ELICITATION_CREATE,
        "params": {
            "message": message,
            "requestedSchema": { "type": "object", "properties": properties, "required": fields },
        },
    })
}

/// What every handler returns.
pub type HandlerFuture = BoxFuture<'static, Result<Outcome, RpcError>>;
type BoxedHandler = Arc<dyn Fn(Value, RequestContext) -> HandlerFuture + Send + Sync>;
type DiscoverHook =
    Arc<dyn Fn(RequestContext) -> BoxFuture<'static, Result<(), RpcError>> + Send + Sync>;
type ListenHook =
    Arc<dyn Fn(RequestContext, Value) -> BoxFuture<'static, Result<(), RpcError>> + Send + Sync>;

/// A handler's answer before the server knows which request it answers: an [`Outcome`], bare
/// text, which becomes the text result of the handler's kind (a tool: [`Outcome::text`]; a
/// prompt: [`Outcome::user_text`]; a resource or template: [`Outcome::resource_text`] of the
/// requested URI; completion: the one value `{"completion": {"values": [text]}}`), or an error.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Answered as it is.
    Outcome(Outcome),
    /// The text result of the handler's kind.
    Text(String),
    /// Answered as a JSON-RPC error.
    Error(RpcError),
}

/// What a handler may produce: [`Outcome`], [`Reply`], `String`, `&'static str`, or
/// `Result<Outcome, RpcError>` (an `Err` is answered as a JSON-RPC error). The one `Result`
/// type means a handler that only returns `Err(...)` needs no type annotation.
///
/// ```
/// use mcp_bridge::server::{IntoReply, Outcome, Reply, RpcError};
/// assert_eq!("Hi".into_reply(), Reply::Text("Hi".into()));
/// assert_eq!(Outcome::text("Hi").into_reply(), Reply::Outcome(Outcome::text("Hi")));
/// let no = RpcError::invalid_params("no");
/// assert_eq!(Err(no.clone()).into_reply(), Reply::Error(no));
/// ```
pub trait IntoReply {
    /// The answer.
    fn into_reply(self) -> Reply;
}

impl IntoReply for Reply {
    fn into_reply(self) -> Reply {
        self
    }
}

impl IntoReply for Outcome {
    fn into_reply(self) -> Reply {
        Reply::Outcome(self)
    }
}

impl IntoReply for String {
    fn into_reply(self) -> Reply {
        Reply::Text(self)
    }
}

impl IntoReply for &'static str {
    fn into_reply(self) -> Reply {
        Reply::Text(self.to_owned())
    }
}

impl IntoReply for Result<Outcome, RpcError> {
    fn into_reply(self) -> Reply {
        match self {
            Ok(outcome) => Reply::Outcome(outcome),
            Err(error) => Reply::Error(error),
        }
    }
}

/// Marks a handler that returns a future ([`HandlerReturn`]).
#[derive(Debug)]
pub enum Asynchronous {}
/// Marks a handler that returns its answer directly ([`HandlerReturn`]).
#[derive(Debug)]
pub enum Synchronous {}

/// What a handler closure returns: a future of an [`IntoReply`] (`|_, _| async { ... }`,
/// marker [`Asynchronous`]) or an [`IntoReply`] itself (`|_, _| "text"`, marker
/// [`Synchronous`]). The marker is inferred; a handler never names it.
///
/// ```
/// use mcp_bridge::server::{Outcome, RpcError, Server};
/// let server = Server::builder("both", "1.0.0")
///     .tool("now", |_, _| "answered at once")
///     .tool("later", |_, _| async { Ok(Outcome::text("answered by a future")) })
///     .tool("never", |_, _| Err(RpcError::invalid_params("not today")))
///     .tool("never_later", |_, _| async { Err(RpcError::invalid_params("not today")) })
///     .build();
/// # let _ = server;
/// ```
pub trait HandlerReturn<Marker>: Send + 'static {
    /// The answer as a future.
    fn into_future(self) -> BoxFuture<'static, Reply>;
}

impl<F> HandlerReturn<Asynchronous> for F
where
    F: Future + Send + 'static,
    F::Output: IntoReply,
{
    fn into_future(self) -> BoxFuture<'static, Reply> {
        Box::pin(async move { self.await.into_reply() })
    }
}

impl<T: IntoReply + Send + 'static> HandlerReturn<Synchronous> for T {
    fn into_future(self) -> BoxFuture<'static, Reply> {
        Box::pin(std::future::ready(self.into_reply()))
    }
}

/// A handler of the builder ([`ServerBuilder::tool`], `prompt`, `resource`,
/// `resource_template`, `completion`): any `Fn(Value, RequestContext) -> R` whose `R` is a
/// [`HandlerReturn`]; the one bound every registration method names. Implemented for every
/// such closure; a handler never implements it itself.
///
/// ```
/// use mcp_bridge::server::{Handler, RequestContext};
/// use serde_json::Value;
/// fn check<R, M>(_: impl Handler<R, M>) {}
/// check(|arguments: Value, _ctx: RequestContext| arguments.to_string());
/// ```
pub trait Handler<R, M>: Fn(Value, RequestContext) -> R + Send + Sync + 'static {
    /// Calls the handler; its answer as a future.
    fn answer(&self, input: Value, ctx: RequestContext) -> BoxFuture<'static, Reply>;
}

impl<F, R, M> Handler<R, M> for F
where
    F: Fn(Value, RequestContext) -> R + Send + Sync + 'static,
    R: HandlerReturn<M>,
{
    fn answer(&self, input: Value, ctx: RequestContext) -> BoxFuture<'static, Reply> {
        self(input, ctx).into_future()
    }
}

/// Which request a handler answers: what its bare text becomes ([`Reply::Text`]).
#[derive(Clone, Copy)]
enum Kind {
    Tool,
    Prompt,
    Resource,
    Completion,
}

fn boxed<R, M>(kind: Kind, handler: impl Handler<R, M>) -> BoxedHandler {
    Arc::new(move |value, ctx| {
        let uri = match kind {
            Kind::Resource => value.get("uri").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        };
        let reply = handler.answer(value, ctx);
        Box::pin(async move {
            Ok(match reply.await {
                Reply::Outcome(outcome) => outcome,
                Reply::Error(error) => return Err(error),
                Reply::Text(text) => match kind {
                    Kind::Tool => Outcome::text(text),
                    Kind::Prompt => Outcome::user_text(text),
                    Kind::Resource => Outcome::resource_text(uri.as_deref().unwrap_or(""), text),
                    Kind::Completion => {
                        Outcome::Complete(json!({ "completion": { "values": [text] } }))
                    }
                },
            })
        })
    })
}

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
            max_line_bytes: crate::protocol::framing::DEFAULT_MAX_LINE_BYTES,
            max_depth: crate::protocol::jsonrpc::MAX_CLIENT_DEPTH,
            max_in_flight: crate::protocol::defaults::MAX_IN_FLIGHT_REQUESTS,
            shutdown_grace: crate::protocol::defaults::SHUTDOWN_GRACE,
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
        id: &crate::protocol::jsonrpc::Id,
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

/// Collects what a [`Server`] offers.
pub struct ServerBuilder(Registry);

impl ServerBuilder {
    /// Sets `instructions` of the `DiscoverResult`.
    #[must_use]
    pub fn instructions(mut self, instructions: &str) -> Self {
        self.0.instructions = Some(instructions.into());
        self
    }

    /// Whether results carry `_meta["io.modelcontextprotocol/serverInfo"]` (default: yes,
    /// as the spec says they SHOULD).
    #[must_use]
    pub fn server_info(mut self, send: bool) -> Self {
        self.0.send_server_info = send;
        self
    }

    /// `ttlMs` and `cacheScope` of cacheable results (discover, the lists, `resources/read`
    /// when its handler sets none). Default: 60 000 ms, public.
    ///
    /// ```
    /// use mcp_bridge::server::{CacheScope, Server};
    /// // server/discover and the lists say: cache me for 5 minutes, per user.
    /// let server = Server::builder("cached", "1.0.0").cache(300_000, CacheScope::Private).build();
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn cache(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.0.ttl_ms = ttl_ms;
        self.0.cache_scope = scope;
        self
    }

    /// Splits list results into pages of this many items, with an opaque `nextCursor`.
    /// Default: one page.
    ///
    /// ```
    /// use mcp_bridge::server::{Outcome, Server, ToolDef};
    /// let mut builder = Server::builder("many", "1.0.0").page_size(2);
    /// for name in ["a", "b", "c"] {
    ///     builder = builder.tool(ToolDef::no_input(name), |_, _| async { Ok(Outcome::text("x")) });
    /// }
    /// // tools/list answers [a, b] with a nextCursor, then [c].
    /// let server = builder.build();
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn page_size(mut self, items: usize) -> Self {
        self.0.page_size = Some(items.max(1));
        self
    }

    /// Adds a tool. The handler gets `params.arguments` (`{}` if absent) and returns its answer
    /// or a future of it ([`HandlerReturn`]); bare text becomes [`Outcome::text`]. A name alone
    /// is a tool without input ([`ToolDef::no_input`]).
    ///
    /// ```
    /// use mcp_bridge::server::{Server, ToolDef};
    /// use serde_json::json;
    /// let server = Server::builder("tools", "1.0.0")
    ///     .tool("ping", |_, _| "pong")
    ///     .tool(ToolDef::new("shout", json!({"type": "object"})), |args, _| {
    ///         args["text"].as_str().unwrap_or("").to_uppercase()
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn tool<R, M>(mut self, def: impl Into<ToolDef>, handler: impl Handler<R, M>) -> Self {
        self.0.tools.push((def.into(), boxed(Kind::Tool, handler)));
        self
    }

    /// Adds a tool whose arguments are a Rust type: its `inputSchema` is generated from `A`
    /// ([`ToolDef::typed`]), and the handler gets `params.arguments` deserialized into `A`.
    /// Arguments that do not fit `A` are answered with -32602 (Invalid params) naming the
    /// problem, and the handler is not called.
    ///
    /// ```
    /// use mcp_bridge::server::{Outcome, Server};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Add {
    ///     a: i64,
    ///     b: i64,
    /// }
    ///
    /// let server = Server::builder("calc", "1.0.0")
    ///     .typed_tool("add", |Add { a, b }, _| async move { Ok(Outcome::text((a + b).to_string())) })
    ///     .build();
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn typed_tool<A, F, R, M>(self, name: &str, handler: F) -> Self
    where
        A: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(A, RequestContext) -> R + Send + Sync + 'static,
        R: HandlerReturn<M>,
    {
        let handler = Arc::new(handler);
        self.tool(ToolDef::typed::<A>(name), move |arguments, ctx| {
            let handler = handler.clone();
            async move {
                match serde_json::from_value::<A>(arguments) {
                    Ok(arguments) => handler(arguments, ctx).into_future().await,
                    Err(e) => {
                        Reply::Error(RpcError::invalid_params(format!("Invalid arguments: {e}")))
                    }
                }
            }
        })
    }

    /// Adds a prompt. The handler gets `params.arguments` (`{}` if absent, string values only)
    /// and returns a `GetPromptResult` body (`{"messages": [...]}`).
    ///
    /// ```
    /// use mcp_bridge::server::{Outcome, PromptDef, Server};
    /// let server = Server::builder("prompts", "1.0.0")
    ///     .prompt(PromptDef::new("review").argument("code", "The code", true), |args, _| async move {
    ///         Ok(Outcome::user_text(format!("Review: {}", args["code"].as_str().unwrap_or(""))))
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn prompt<R, M>(mut self, def: impl Into<PromptDef>, handler: impl Handler<R, M>) -> Self {
        self.0
            .prompts
            .push((def.into(), boxed(Kind::Prompt, handler)));
        self
    }

    /// Adds a resource. The handler gets `{"uri": …}` and returns a `ReadResourceResult` body
    /// (`{"contents": [...]}`).
    ///
    /// ```
    /// use mcp_bridge::server::{Outcome, ResourceDef, Server};
    /// let server = Server::builder("files", "1.0.0")
    ///     .resource(ResourceDef::new("file:///notes.txt", "notes").mime_type("text/plain"), |_, _| async {
    ///         Ok(Outcome::resource_text("file:///notes.txt", "Buy milk."))
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn resource<R, M>(mut self, def: ResourceDef, handler: impl Handler<R, M>) -> Self {
        self.0.resources.push((def, boxed(Kind::Resource, handler)));
        self
    }

    /// Adds a resource template. Its handler serves `resources/read` of URIs that match it and
    /// no resource: it gets `{"uri": …, "variables": {name: value}}`.
    ///
    /// ```
    /// use mcp_bridge::server::{Outcome, ResourceTemplateDef, Server};
    /// let server = Server::builder("users", "1.0.0")
    ///     .resource_template(ResourceTemplateDef::new("users://{id}", "user"), |read, _| async move {
    ///         let id = read["variables"]["id"].as_str().unwrap_or("?").to_owned();
    ///         Ok(Outcome::resource_text(read["uri"].as_str().unwrap_or(""), format!("User {id}")))
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn resource_template<R, M>(
        mut self,
        def: ResourceTemplateDef,
        handler: impl Handler<R, M>,
    ) -> Self {
        self.0.templates.push((def, boxed(Kind::Resource, handler)));
        self
    }

    /// Sets the `completion/complete` handler and advertises `completions`. It gets
    /// `{ref, argument, context?}` (already checked) and returns
    /// `{"completion": {"values": [...]}}`;
    /// more than 100 values are cut to 100 with `hasMore: true`.
    ///
    /// ```
    /// use mcp_bridge::server::{Outcome, Server};
    /// use serde_json::json;
    /// let server = Server::builder("complete", "1.0.0")
    ///     .completion(|request, _| async move {
    ///         let typed = request["argument"]["value"].as_str().unwrap_or("").to_owned();
    ///         let values: Vec<&str> = ["rust", "ruby"].into_iter().filter(|v| v.starts_with(&typed)).collect();
    ///         Ok(Outcome::Complete(json!({"completion": {"values": values}})))
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn completion<R, M>(mut self, handler: impl Handler<R, M>) -> Self {
        self.0.completion = Some(boxed(Kind::Completion, handler));
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
        self.0.discover_hook = Some(Arc::new(move |ctx| Box::pin(hook(ctx))));
        self
    }

    /// Whether the server offers `subscriptions/listen` (default: yes). Without it, discover
    /// declares no `listChanged` and no `resources.subscribe`, and a listen gets -32601.
    #[must_use]
    pub fn listen(mut self, offered: bool) -> Self {
        self.0.listen = offered;
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
        self.0.listen_hook = Some(Arc::new(move |ctx, filter| Box::pin(hook(ctx, filter))));
        self
    }

    /// Appends every received line, verbatim, to this file (flushed line by line), so tests can
    /// assert what the server received.
    #[must_use]
    pub fn trace_input(mut self, path: PathBuf) -> Self {
        self.0.trace_input = Some(path);
        self
    }

    /// Finishes the server.
    pub fn build(self) -> Server {
        let (ends, _) = broadcast::channel(END_QUEUE);
        Server {
            inner: Arc::new(Inner {
                registry: self.0,
                listens: listen::Listens::default(),
                ends,
            }),
        }
    }
}
