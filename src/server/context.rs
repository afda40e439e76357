//! What a handler knows about the request it serves: the per-request `_meta` (version, client
//! capabilities, progress token, log level), MRTR retry data, cancellation, and the request-scoped
//! notifications (progress, log) it may send before its response. Owns none of the routing.

use crate::protocol::revisions::methods;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use super::output::Outbox;
use super::{IntoReply, Outcome, Reply, Server, elicit_form};
use crate::protocol::revisions::modern::RequestMeta;
use crate::protocol::wire::jsonrpc;

pub use crate::protocol::revisions::log_level::LogLevel;

/// The per-request keys of `params._meta` as the server read them (2026-07-28 basic/index,
/// `RequestMetaObject`, the type the bridge writes its own requests with) and the request's
/// progress token.
#[derive(Debug, Clone)]
pub(crate) struct ReceivedMeta {
    /// The keys every request carries.
    pub(crate) meta: RequestMeta,
    pub(crate) progress_token: Option<Value>,
}

/// The request a handler is serving. Cheap to clone; every clone refers to the same request.
#[derive(Clone)]
pub struct RequestContext {
    inner: Arc<Inner>,
}

struct Inner {
    request_id: Value,
    meta: ReceivedMeta,
    input_responses: Option<Map<String, Value>>,
    request_state: Option<String>,
    cancel: CancellationToken,
    finished: AtomicBool,
    last_progress: Mutex<Option<f64>>,
    out: Outbox,
    server: Server,
    close_connection: CancellationToken,
}

/// What the dispatcher hands over to build a context.
pub(crate) struct ContextParts {
    pub(crate) request_id: Value,
    pub(crate) meta: ReceivedMeta,
    pub(crate) input_responses: Option<Map<String, Value>>,
    pub(crate) request_state: Option<String>,
    pub(crate) cancel: CancellationToken,
    pub(crate) out: Outbox,
    pub(crate) server: Server,
    pub(crate) close_connection: CancellationToken,
}

impl RequestContext {
    pub(crate) fn new(parts: ContextParts) -> Self {
        Self {
            inner: Arc::new(Inner {
                request_id: parts.request_id,
                meta: parts.meta,
                input_responses: parts.input_responses,
                request_state: parts.request_state,
                cancel: parts.cancel,
                finished: AtomicBool::new(false),
                last_progress: Mutex::new(None),
                out: parts.out,
                server: parts.server,
                close_connection: parts.close_connection,
            }),
        }
    }

    /// The JSON-RPC id of this request (a string or an integer).
    pub fn request_id(&self) -> &Value {
        &self.inner.request_id
    }

    /// `_meta["io.modelcontextprotocol/protocolVersion"]` of this request.
    pub fn protocol_version(&self) -> &str {
        &self.inner.meta.meta.protocol_version
    }

    /// `_meta["io.modelcontextprotocol/clientCapabilities"]` of this request (an object). Only
    /// these apply: a server must not infer capabilities from earlier requests.
    pub fn client_capabilities(&self) -> &Value {
        &self.inner.meta.meta.client_capabilities
    }

    /// `_meta["io.modelcontextprotocol/clientInfo"]`, if sent. For display and logging only.
    pub fn client_info(&self) -> Option<&Value> {
        self.inner.meta.meta.client_info.as_ref()
    }

    /// `params.inputResponses` of an MRTR retry (2026-07-28 basic/patterns/mrtr).
    pub fn input_responses(&self) -> Option<&Map<String, Value>> {
        self.inner.input_responses.as_ref()
    }

    /// One entry of `params.inputResponses`, by the key the server chose in `inputRequests`.
    ///
    /// Two rounds, the second one carrying `requestState`:
    ///
    /// ```
    /// use mcp_bridge::server::{Outcome, Server, ToolDef, elicit_form};
    /// use serde_json::Map;
    /// let server = Server::builder("trip", "1.0.0")
    ///     .tool(ToolDef::no_input("plan"), |_, ctx| async move {
    ///         Ok(match (ctx.request_state(), ctx.input_response("where")) {
    ///             (None, _) => {
    ///                 let mut input_requests = Map::new();
    ///                 input_requests.insert("where".into(), elicit_form("Where to?", &["where"]));
    ///                 Outcome::InputRequired { input_requests, request_state: Some("asked".into()) }
    ///             }
    ///             (Some(_), Some(answer)) => Outcome::text(format!("Going to {}", answer["content"]["where"])),
    ///             (Some(_), None) => Outcome::tool_error("no answer"),
    ///         })
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn input_response(&self, key: &str) -> Option<&Value> {
        self.inner.input_responses.as_ref()?.get(key)
    }

    /// One text field asked of the user: before the answer, [`Outcome::ask`] of an
    /// [`elicit_form`] request under `field` for the field `field` (the client answers and
    /// retries); on the retry, `then` of the answer's `content[field]`, or of `""` when the
    /// user declined or cancelled or the field is not a string (a handler that must tell these
    /// apart reads [`RequestContext::input_response`] itself).
    ///
    /// ```
    /// use mcp_bridge::server::Server;
    /// let server = Server::builder("hello", "1.0.0")
    ///     .tool("ask_name", |_, ctx| ctx.ask_text("name", "Your name?", |name| format!("Hi, {name}!")))
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn ask_text<T: IntoReply>(
        &self,
        field: &str,
        message: &str,
        then: impl FnOnce(&str) -> T,
    ) -> Reply {
        match self.input_response(field) {
            None => Reply::Outcome(Outcome::ask(field, elicit_form(message, &[field]))),
            Some(answer) => then(answer["content"][field].as_str().unwrap_or("")).into_reply(),
        }
    }

    /// Publishes `event` to the open listen streams ([`Server::notify`]) and answers with
    /// `answer`: a handler that changes a list and says so, in one expression. The event
    /// reaches the client before this request's result (also through the embedded bridge).
    ///
    /// ```
    /// use mcp_bridge::server::{ListenEvent, Server};
    /// let server = Server::builder("changing", "1.0.0")
    ///     .tool("add_tool", |_, ctx| ctx.publish(ListenEvent::ToolsListChanged, "Added."))
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn publish<T: IntoReply>(&self, event: super::ListenEvent, answer: T) -> T {
        self.inner.server.notify(event);
        answer
    }

    /// `params.requestState` of an MRTR retry, byte-exact as the client echoed it. It is
    /// attacker-controlled: verify it before it affects anything that matters.
    pub fn request_state(&self) -> Option<&str> {
        self.inner.request_state.as_deref()
    }

    /// Whether `notifications/cancelled` named this request (or the connection ended).
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Completes when this request is cancelled. The dispatcher also drops the handler's future
    /// then, so this is only needed for work the handler spawned elsewhere.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.inner.cancel.cancelled()
    }

    /// The server this request came to, for example to [`Server::notify`] a list change.
    pub fn server(&self) -> &Server {
        &self.inner.server
    }

    /// Ends the connection gracefully once this request has been answered: stop reading input,
    /// let requests in flight finish, end open listens with their result, flush, return from
    /// `serve`.
    pub fn close_connection(&self) {
        self.inner.close_connection.cancel();
    }

    /// Sends `notifications/progress` for this request (2026-07-28 basic/patterns/progress).
    ///
    /// Sends nothing and returns `false` if the request had no `_meta.progressToken`, if it was
    /// cancelled or answered, or if `progress` does not increase on the previous value.
    ///
    /// ```
    /// use mcp_bridge::server::{Outcome, Server, ToolDef};
    /// let server = Server::builder("slow", "1.0.0")
    ///     .tool(ToolDef::no_input("count"), |_, ctx| async move {
    ///         for step in 1..=3 {
    ///             ctx.progress(f64::from(step), Some(3.0), Some("counting")).await;
    ///         }
    ///         Ok(Outcome::text("done"))
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let Some(token) = &self.inner.meta.progress_token else {
            return false;
        };
        if !self.may_send() {
            return false;
        }
        {
            let Ok(mut last) = self.inner.last_progress.lock() else {
                return false;
            };
            if last.is_some_and(|last| progress <= last) {
                return false;
            }
            *last = Some(progress);
        }
        let mut params = Map::new();
        params.insert("progressToken".into(), token.clone());
        params.insert("progress".into(), number(progress));
        if let Some(total) = total {
            params.insert("total".into(), number(total));
        }
        if let Some(message) = message {
            params.insert("message".into(), message.into());
        }
        let notification = jsonrpc::notification(methods::PROGRESS, Value::Object(params));
        self.inner.out.send(&notification).await
    }

    /// Sends `notifications/message` for this request (2026-07-28 server/utilities/logging).
    ///
    /// Sends nothing and returns `false` unless the request set
    /// `_meta["io.modelcontextprotocol/logLevel"]` at `level` or below it, or if the request was
    /// cancelled or answered.
    ///
    /// ```
    /// use mcp_bridge::server::{LogLevel, Outcome, Server, ToolDef};
    /// use serde_json::json;
    /// let server = Server::builder("chatty", "1.0.0")
    ///     .tool(ToolDef::no_input("work"), |_, ctx| async move {
    ///         ctx.log(LogLevel::Info, Some("work"), json!("started")).await;
    ///         Ok(Outcome::text("done"))
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    pub async fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) -> bool {
        let Some(threshold) = self.inner.meta.meta.log_level else {
            return false;
        };
        if level < threshold || !self.may_send() {
            return false;
        }
        let mut params = Map::new();
        params.insert("level".into(), level.as_str().into());
        if let Some(logger) = logger {
            params.insert("logger".into(), logger.into());
        }
        params.insert("data".into(), data);
        let notification = jsonrpc::notification(methods::MESSAGE, Value::Object(params));
        self.inner.out.send(&notification).await
    }

    /// Writes `line` and a newline to the output verbatim, through the same writer as every
    /// other message. For test fixtures that must misbehave; a real server has no use for it.
    pub async fn write_raw_line(&self, line: String) -> bool {
        self.may_send() && self.inner.out.send_raw(line).await
    }

    /// Writes `line` and a newline to the output verbatim, even after the request was cancelled
    /// or answered. For test fixtures of a server that does not stop at once; a real server
    /// has no use for it.
    pub async fn write_raw_line_even_after_the_end(&self, line: String) -> bool {
        self.inner.out.send_raw(line).await
    }

    /// `_meta.progressToken` of this request, if the client sent one.
    pub fn progress_token(&self) -> Option<&Value> {
        self.inner.meta.progress_token.as_ref()
    }

    /// Writes a JSON-RPC notification outside any request scope (listen streams use this).
    pub(crate) async fn send(&self, message: &Value) -> bool {
        !self.is_cancelled() && self.inner.out.send(message).await
    }

    /// The connection's outbox (listen streams queue their events on it).
    pub(crate) fn outbox(&self) -> &Outbox {
        &self.inner.out
    }

    /// After the response is produced nothing more may be sent for the request.
    pub(crate) fn mark_finished(&self) {
        self.inner.finished.store(true, Ordering::SeqCst);
    }

    fn may_send(&self) -> bool {
        !self.is_cancelled() && !self.inner.finished.load(Ordering::SeqCst)
    }

    pub(crate) fn connection_closing(&self) -> WaitForCancellationFuture<'_> {
        self.inner.close_connection.cancelled()
    }

    /// A JSON summary for `Debug`.
    fn summary(&self) -> Value {
        json!({ "id": self.inner.request_id, "cancelled": self.is_cancelled() })
    }
}

impl std::fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RequestContext({})", self.summary())
    }
}

/// A JSON number for `value`, written as an integer when it is one (`3` rather than `3.0`).
fn number(value: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if value.fract() == 0.0 && value.abs() < EXACT {
        Value::from(value as i64)
    } else {
        Value::from(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_order_by_rfc_5424_severity_and_parse_by_name() {
        assert!(LogLevel::Debug < LogLevel::Info);
        assert!(LogLevel::Warning < LogLevel::Error);
        assert!(LogLevel::Alert < LogLevel::Emergency);
        assert_eq!("notice".parse(), Ok(LogLevel::Notice));
        assert_eq!("warn".parse::<LogLevel>(), Err(()));
    }

    #[test]
    fn integral_numbers_are_written_as_integers() {
        assert_eq!(number(3.0).to_string(), "3");
        assert_eq!(number(2.5).to_string(), "2.5");
    }
}
