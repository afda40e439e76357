//! [`ServerBuilder`]: the tools, prompts, resources, templates and hooks of a [`Server`],
//! checked once at [`ServerBuilder::build`].

use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::broadcast;

use super::context::RequestContext;
use super::defs::{PromptDef, ResourceDef, ResourceTemplateDef, ToolDef};
use super::error::RpcError;
use super::handler::{Handler, HandlerKind, HandlerReturn, boxed};
use super::outcome::{Outcome, Reply};
use super::{CacheScope, END_QUEUE, Inner, Registry, Server, invalid_arguments, listen};

/// Collects what a [`Server`] offers.
pub struct ServerBuilder(pub(super) Registry);

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
        self.0
            .tools
            .push((def.into(), boxed(HandlerKind::Tool, handler)));
        self
    }

    /// Adds a tool whose arguments are a Rust type: its `inputSchema` is generated from `A`
    /// ([`ToolDef::typed`]), and the handler gets `params.arguments` deserialized into `A`.
    /// Arguments that do not fit `A` get a tool execution error (`isError: true`, the text
    /// `Invalid arguments: ...` naming the problem; a long string of the arguments is shown
    /// as its excerpt, a number that fits no integer field with the range expected), and the
    /// handler is not called: MCP 2025-11-25 server/tools counts input validation errors as
    /// tool execution errors, so that the model sees them and can correct its call
    /// (SEP-1303). A definition with a
    /// description or an `outputSchema`: [`Self::typed_tool_def`].
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
        self.typed_tool_def(ToolDef::typed::<A>(name), handler)
    }

    /// [`Self::typed_tool`] with a definition of its own, made with [`ToolDef::typed`] (its
    /// `inputSchema` is `A`'s) and any other field: a title, a description, an `outputSchema`,
    /// annotations.
    ///
    /// ```
    /// use mcp_bridge::server::{Outcome, Server, ToolDef};
    /// use serde_json::json;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Add {
    ///     a: i64,
    ///     b: i64,
    /// }
    ///
    /// let add = ToolDef::typed::<Add>("add")
    ///     .description("Adds two integers")
    ///     .output_schema(json!({"type": "object", "properties": {"sum": {"type": "integer"}}}));
    /// let server = Server::builder("calc", "1.0.0")
    ///     .typed_tool_def(add, |Add { a, b }, _| async move {
    ///         let sum = a + b;
    ///         Ok(Outcome::Complete(json!({"content": [{"type": "text", "text": sum.to_string()}],
    ///             "structuredContent": {"sum": sum}})))
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn typed_tool_def<A, F, R, M>(self, def: ToolDef, handler: F) -> Self
    where
        A: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(A, RequestContext) -> R + Send + Sync + 'static,
        R: HandlerReturn<M>,
    {
        let handler = Arc::new(handler);
        let schema = Arc::new(def.input_schema().clone());
        self.tool(def, move |arguments, ctx| {
            let handler = handler.clone();
            let schema = schema.clone();
            async move {
                match <A as serde::Deserialize>::deserialize(&arguments) {
                    Ok(arguments) => handler(arguments, ctx).into_future().await,
                    Err(e) => Reply::Outcome(Outcome::tool_error(
                        invalid_arguments::invalid_arguments(&e, &arguments, &schema),
                    )),
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
            .push((def.into(), boxed(HandlerKind::Prompt, handler)));
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
        self.0
            .resources
            .push((def, boxed(HandlerKind::Resource, handler)));
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
        self.0
            .templates
            .push((def, boxed(HandlerKind::Resource, handler)));
        self
    }

    /// Lists resources that come and go beside the fixed ones: `lister` runs at each
    /// `resources/list`, and its items follow those of [`Self::resource`]. A resource template
    /// serves their reads; the server announces a change of the list with
    /// [`Server::notify`]`(ListenEvent::ResourcesListChanged)`.
    ///
    /// ```
    /// use mcp_bridge::server::{ResourceDef, Server};
    /// let server = Server::builder("sessions", "1.0.0")
    ///     .resource_lister(|| vec![ResourceDef::new("s://1", "session 1")])
    ///     .build();
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn resource_lister(
        mut self,
        lister: impl Fn() -> Vec<ResourceDef> + Send + Sync + 'static,
    ) -> Self {
        self.0.resource_lister = Some(Arc::new(lister));
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
        self.0.completion = Some(boxed(HandlerKind::Completion, handler));
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
