//! The handlers of tools, prompts and resources: synchronous or asynchronous closures
//! ([`Handler`], [`HandlerReturn`]), boxed once when they are registered.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::Arc;

use super::context::RequestContext;
use super::error::RpcError;
use super::outcome::{IntoReply, Outcome, Reply};

/// What every handler returns.
pub type HandlerFuture = BoxFuture<'static, Result<Outcome, RpcError>>;

pub(crate) type BoxedHandler = Arc<dyn Fn(Value, RequestContext) -> HandlerFuture + Send + Sync>;

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

/// A handler of the builder ([`ServerBuilder::tool`](super::ServerBuilder::tool), `prompt`, `resource`,
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
pub(crate) enum HandlerKind {
    Tool,
    Prompt,
    Resource,
    Completion,
}

pub(crate) fn boxed<R, M>(kind: HandlerKind, handler: impl Handler<R, M>) -> BoxedHandler {
    Arc::new(move |value, ctx| {
        let uri = match kind {
            HandlerKind::Resource => value.get("uri").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        };
        let reply = handler.answer(value, ctx);
        Box::pin(async move {
            Ok(match reply.await {
                Reply::Outcome(outcome) => outcome,
                Reply::Error(error) => return Err(error),
                Reply::Text(text) => match kind {
                    HandlerKind::Tool => Outcome::text(text),
                    HandlerKind::Prompt => Outcome::user_text(text),
                    HandlerKind::Resource => {
                        Outcome::resource_text(uri.as_deref().unwrap_or(""), text)
                    }
                    HandlerKind::Completion => {
                        Outcome::Complete(json!({ "completion": { "values": [text] } }))
                    }
                },
            })
        })
    })
}
