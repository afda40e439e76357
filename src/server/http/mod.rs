//! A [`Server`] over Streamable HTTP for 2026-07-28 clients (2026-07-28
//! basic/transports/http), stateless: every POST to the endpoint carries one JSON-RPC message
//! and is served on its own, with nothing kept between POSTs. With
//! [`HttpOptions::sessions`], 2025-11-25 clients are served too, in sessions that an
//! `initialize` POST starts (`Mcp-Session-Id`; 2025-11-25 basic/transports) and that the
//! application's [`SessionFactory`] serves as pipes of JSON-RPC lines (`embed::serve_http`:
//! an in-process bridge each), by the rules at the end of this doc. Requests without
//! `Mcp-Session-Id` are served statelessly:
//!
//! - A request is answered with `application/json` when it produces only its response, and
//!   with `text/event-stream` as soon as it produces a notification first (progress, log
//!   messages; a `subscriptions/listen` stream starts with its acknowledgement): the
//!   notifications, then the response, which ends the stream. SSE streams carry keep-alive
//!   comments ([`HttpOptions::keep_alive_interval`]).
//! - `Accept` (RFC 9110 §12.5.1, media ranges with their quality; `q=0` takes nothing): a
//!   POST that takes `application/json` is answered as above; one that takes only
//!   `text/event-stream` gets every 200 answer as SSE; one that takes neither gets 406. No
//!   `Accept`, or one that names no valid range (`Accept:` empty, `;;;`), is served as one
//!   that takes both; a comma inside a quoted parameter separates nothing. Both paths,
//!   sessions too.
//! - A response stream that the client closes cancels its request: the handler's
//!   [`RequestContext::cancelled`](super::RequestContext::cancelled) fires and nothing more
//!   is written (2026-07-28 basic/patterns/cancellation: on HTTP, closing the stream is the
//!   cancellation).
//! - The standard headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, and
//!   `Mcp-Param-*` for the tools' `x-mcp-header` arguments) are checked against the body
//!   (`request_headers`): -32020 with 400 on a mismatch.
//! - A notification gets 202; GET, DELETE and every other method without `Mcp-Session-Id`
//!   get 405 with `Allow: POST`, but OPTIONS; another path gets 404.
//! - CORS for the origins that the `Origin` check admits, and only for them: OPTIONS (a
//!   preflight) gets 204 with the methods and request headers allowed, and every answer to
//!   such an origin echoes it in `Access-Control-Allow-Origin` and exposes `Mcp-Session-Id`
//!   and `MCP-Protocol-Version`; a foreign origin gets 403, preflight included.
//! - An `Origin` that is not allowed gets 403 (the spec's protection against DNS rebinding);
//!   on a loopback address, so does a `Host` that is not a loopback name. Two `Origin` or
//!   two `Host` fields get 400.
//! - The body, the header section, the time to read the headers, each request's run time,
//!   the requests in flight and the connections are bounded ([`HttpOptions`]).
//! - With [`HttpOptions::bearer`], a POST must carry `Authorization: Bearer <token>` that the
//!   application's [`TokenVerifier`] accepts (RFC 6750 §2.1); otherwise it gets 401 with
//!   `WWW-Authenticate: Bearer resource_metadata="..."` (RFC 6750 §3, RFC 9728 §5.1), and the
//!   RFC 9728 protected-resource metadata is served at
//!   `/.well-known/oauth-protected-resource` plus the endpoint's path (RFC 9728 §3.1).
//!
//! 2025-11-25 sessions ([`HttpOptions::sessions`]):
//!
//! - A POST of a 2025-11-25 `initialize` (without the protocol version key in `_meta`, which
//!   marks a 2026-07-28 request) without `Mcp-Session-Id` starts a session: its answer carries
//!   `Mcp-Session-Id`, 128 random bits in hex. At [`HttpOptions::max_sessions`] an idle session
//!   ends to make room (an unclaimed one first, then the one idle longest); a busy one (a stream open, or a request whose POST
//!   stream closed still running) never does, and when every session is busy it gets 503
//!   with `too_many_sessions`. A request with two `Mcp-Session-Id` fields gets 400. When the session answers it with a JSON-RPC error, the
//!   answer carries no `Mcp-Session-Id` and the session ends.
//! - A POST with `Mcp-Session-Id`: a request goes into the session and is answered on that
//!   POST, with JSON when only its response comes and with SSE when server messages come
//!   first; a notification or a response (to a server request: an elicitation) gets 202.
//!   A request whose id waits on a POST, or whose POST stream closed before its response
//!   (the request goes on; at most [`SESSION_ORPHAN_MAX_IDS`] such ids), gets 400
//!   `duplicate_id`.
//! - The session's messages: a response goes to the POST that waits on its id. A server
//!   request or notification goes to the POST whose `progressToken` it carries
//!   (`notifications/progress`: it belongs to that request) or whose stream carried the
//!   server request it cancels (`notifications/cancelled`), and nowhere when that POST's
//!   stream has closed; else to the GET stream when one is open, else to the only POST
//!   waiting (an elicitation of a `tools/call`) unless it is a list change, a resource
//!   update or a cancellation (they concern the session, not a request), else it waits (at
//!   most [`SESSION_BUFFER_MAX_MESSAGES`]) for the next GET stream.
//! - GET opens the session's SSE stream; a GET while one is open takes over from it (the
//!   old one ends, and the messages it had not taken go to the new one). DELETE ends the
//!   session (the pipe's input closes) and gets 204; then its id gets 404, as does any id
//!   that names no session. A session also ends
//!   when its pipe's output closes, and when it had no request and no open stream for
//!   [`HttpOptions::session_idle_time_limit`].
//! - The 2026-07-28 header checks do not apply inside a session; the `Origin`, `Host`,
//!   bearer and body checks do.
//! - Streams are not resumable: events carry no id and `Last-Event-ID` is not read. A client
//!   that loses a POST's stream loses that request's answer (2025-11-25 lets a server do
//!   without resumption).
//!
//! [`HttpServer::run_until`] stops: listen and session streams end at once, requests still
//! running have [`HttpOptions::shutdown_grace_time_limit`], and every stream ends whole.
//! Every connection that the server ends closes lingering (RFC 9112 §9.6): its write half
//! first, then its client's input read and dropped until the client closes (at most
//! [`LINGER_TIME_LIMIT`]), so that no reset takes the answers in transit from the client.
//!
//! Status codes of JSON answers: 400 for -32020, -32021, -32022, a request without the
//! required `_meta` (-32602) and a body that is no JSON-RPC request (-32700, -32600); 404
//! for -32601; 503 for a request past [`HttpOptions::max_in_flight`]; 200 otherwise.
//!
//! ```no_run
//! use mcp_bridge::server::{Server, http};
//!
//! # async fn run() -> std::io::Result<()> {
//! let server = Server::builder("hello", "1.0.0").tool("hello", |_, _| "Hello!").build();
//! let bound = http::bind(server, http::loopback(8000), http::HttpOptions::default()).await?;
//! eprintln!("serving {}", bound.url());
//! bound.run().await
//! # }
//! ```

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method as HttpMethod, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::dispatch::{self, ConnectionLink};
use super::method::Method;
use super::output::Outbox;
use super::{ErrorCode, RpcError, Server};
use crate::protocol::revisions::errors::{Cause, ErrorObject};
use crate::protocol::revisions::methods;
use crate::protocol::rules::remote::{HeaderParam, header_params};
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc::{self, Message, ParseError};
use request_headers::HeaderText;

mod accept;
mod bearer;
mod cors;
mod linger;
mod options;
mod origin;
mod request_headers;
mod session;
mod sse;

use bearer::{Auth, check_bearer, metadata};
pub use bearer::{Bearer, TokenVerifier, Verdict};
pub use linger::LINGER_TIME_LIMIT;
pub use options::*;
use options::{ACCEPT_ERROR_PAUSE, MIN_HEADER_BYTES, SHUTDOWN_CUT_TIME_LIMIT};
use origin::{check_origin_and_host, origin_allowed};
use session::SessionTable;
pub use session::{
    DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_CLAIM_TIME_LIMIT, DEFAULT_SESSION_IDLE_TIME_LIMIT,
    SESSION_BUFFER_MAX_MESSAGES, SESSION_ID_HEADER, SESSION_INPUT_QUEUE_MESSAGES,
    SESSION_ORPHAN_MAX_IDS, SESSION_OUTPUT_QUEUE_MESSAGES, SessionEnds, SessionFactory,
    SessionStart, Sessions,
};
use sse::{
    KEEP_ALIVE_COMMENT, as_sse, drain, keep_alive_ticks, sse, sse_done, sse_event, sse_headers,
};

/// A bound HTTP server: [`HttpServer::run`] serves it.
pub struct HttpServer {
    listener: TcpListener,
    shared: Arc<Shared>,
}

/// What every request of one HTTP server shares.
struct Shared {
    /// What answers the requests without a session.
    front: Front,
    options: HttpOptions,
    /// The `x-mcp-header` annotations of the tools, by tool name (tools are fixed at build).
    tool_params: HashMap<String, Vec<HeaderParam>>,
    in_flight: Arc<Semaphore>,
    /// Whether the listener is on a loopback address (the `Host` check applies).
    loopback: bool,
    /// Cancelled when the server stops: open listens end with their result.
    stopping: CancellationToken,
    /// Cancelled when the shutdown grace time ends: the answers of the requests still
    /// running end (without their response; the requests are cancelled).
    cutting: CancellationToken,
    /// The bearer-token check and its metadata, when [`HttpOptions::bearer`] is on.
    auth: Option<Auth>,
    /// The 2025-11-25 sessions, when [`HttpOptions::sessions`] is on.
    sessions: Option<Arc<SessionTable>>,
    /// The request headers that a preflight allows (with the tools' `Mcp-Param-*`).
    cors_allowed_headers: HeaderValue,
}

/// Binds `addr` for `server`. Nothing is served until [`HttpServer::run`].
///
/// # Errors
/// The address cannot be bound; with [`HttpOptions::bearer`], [`HttpOptions::resource`] is
/// no absolute URL (`InvalidInput`).
pub async fn bind(
    server: Server,
    addr: SocketAddr,
    options: HttpOptions,
) -> io::Result<HttpServer> {
    let tool_params = tool_params(
        server
            .inner
            .tools
            .iter()
            .map(|(def, _)| (def.name(), def.input_schema())),
    );
    bind_with(
        Front::Server(server),
        TcpListener::bind(addr).await?,
        options,
        tool_params,
    )
}

/// The `x-mcp-header` arguments of each tool of `tools` (name, input schema) that has some.
/// A tool whose annotations break a rule is dropped by HTTP clients (2026-07-28
/// server/tools): no header of it is checked.
fn tool_params<'a>(
    tools: impl Iterator<Item = (&'a str, &'a Value)>,
) -> HashMap<String, Vec<HeaderParam>> {
    tools
        .filter_map(|(name, schema)| {
            let params = header_params(schema).ok()?;
            (!params.is_empty()).then(|| (name.to_owned(), params))
        })
        .collect()
}

/// What answers the requests without a session (2026-07-28 clients).
#[derive(Clone)]
pub(crate) enum Front {
    /// A [`Server`] of the process ([`bind`]).
    Server(Server),
    /// A relay to another server ([`Relay`]: `mcp-bridge --serve-http` in front of one run
    /// of a 2026-07-28 server).
    Relay(Arc<dyn Relay>),
    /// Nobody: the endpoint serves only 2025-11-25 sessions, and such a request gets 400
    /// `session_required`.
    SessionsOnly,
}

/// Answers the requests without a session in place of a [`Server`]: each is relayed whole to
/// a server elsewhere (`mcp-bridge --serve-http --upstream-lifetime shared`), which checks
/// its params and its `x-mcp-header` arguments itself.
pub(crate) trait Relay: Send + Sync + 'static {
    /// Relays `request` (a 2026-07-28 client's JSON-RPC request, checked as far as HTTP
    /// goes: its headers but those of tool arguments, its `_meta`). Its notifications go to
    /// `lines`, one message each, as they come; the future's output is its response (`None`:
    /// none will come). Dropping the future before its end abandons the request: the server
    /// gets its cancellation.
    fn relay(
        &self,
        request: Value,
        lines: mpsc::Sender<String>,
    ) -> futures_util::future::BoxFuture<'static, Option<Value>>;
}

/// Binds `addr` for the 2025-11-25 sessions of `options` only (`mcp-bridge --serve-http`,
/// whose every client is served by a bridge of its own): a request without
/// `Mcp-Session-Id` other than an `initialize` gets 400 with `session_required`, which is
/// no 2026-07-28 error, so that a client that probes with a 2026-07-28 request falls back to
/// `initialize` (2026-07-28 basic/transports/http).
///
/// # Errors
/// As [`bind`]; `InvalidInput` when `options` has no sessions.
///
/// With `relay`, the requests without a session are relayed instead ([`Front::Relay`]),
/// their `Mcp-Param-*` headers checked against the `x-mcp-header` arguments of `tools` (the
/// names and input schemas of the relayed server's tools). `listener` is bound already (the
/// caller learns at once that the address is taken).
pub(crate) fn bind_sessions(
    listener: TcpListener,
    options: HttpOptions,
    relay: Option<Arc<dyn Relay>>,
    tools: &[(String, Value)],
) -> io::Result<HttpServer> {
    if options.sessions.is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "an endpoint of sessions only needs HttpOptions::sessions",
        ));
    }
    let front = relay.map_or(Front::SessionsOnly, Front::Relay);
    let tool_params = tool_params(tools.iter().map(|(name, schema)| (name.as_str(), schema)));
    bind_with(front, listener, options, tool_params)
}

fn bind_with(
    front: Front,
    listener: TcpListener,
    options: HttpOptions,
    tool_params: HashMap<String, Vec<HeaderParam>>,
) -> io::Result<HttpServer> {
    let auth = match &options.bearer {
        Some(verifier) => Some(Auth::new(
            verifier.clone(),
            &options,
            listener.local_addr()?,
        )?),
        None => None,
    };
    let sessions = options
        .sessions
        .clone()
        .map(|factory| SessionTable::new(factory, &options));
    let shared = Arc::new(Shared {
        cors_allowed_headers: cors::allowed_headers(&tool_params),
        sessions,
        in_flight: Arc::new(Semaphore::new(options.max_in_flight)),
        loopback: listener.local_addr()?.ip().is_loopback(),
        front,
        options,
        tool_params,
        stopping: CancellationToken::new(),
        cutting: CancellationToken::new(),
        auth,
    });
    Ok(HttpServer { listener, shared })
}

/// [`bind`], then [`HttpServer::run`].
///
/// # Errors
/// As [`bind`].
pub async fn serve(server: Server, addr: SocketAddr, options: HttpOptions) -> io::Result<()> {
    bind(server, addr, options).await?.run().await
}

impl HttpServer {
    /// The address bound (with the port the system chose for port 0).
    ///
    /// # Errors
    /// The socket's address cannot be read.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// `http://ADDR/PATH`, the endpoint's URL (`ADDR` as bound; empty if it cannot be read).
    pub fn url(&self) -> String {
        match self.listener.local_addr() {
            Ok(addr) => format!("http://{addr}{}", self.shared.options.path),
            Err(_) => String::new(),
        }
    }

    /// Serves until the process ends.
    ///
    /// # Errors
    /// None in practice: a failed `accept` is logged and the loop goes on.
    pub async fn run(self) -> io::Result<()> {
        self.run_until(std::future::pending()).await
    }

    /// Serves until `stop` completes; then accepts no more connections, ends the open listen
    /// streams with their result and the sessions with their streams, closes the idle
    /// connections, and waits up to [`HttpOptions::shutdown_grace_time_limit`] for the
    /// answers under way to end (each ended stream's last chunk reaches its client).
    ///
    /// # Errors
    /// As [`HttpServer::run`].
    pub async fn run_until(self, stop: impl Future<Output = ()>) -> io::Result<()> {
        let max_connections = self.shared.options.max_connections;
        let connections = Arc::new(Semaphore::new(max_connections));
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.shared.options.header_read_time_limit)
            .max_buf_size(self.shared.options.max_header_bytes.max(MIN_HEADER_BYTES))
            .max_header_size(self.shared.options.max_header_bytes.max(MIN_HEADER_BYTES))
            .max_headers(self.shared.options.max_headers);
        let mut stop = std::pin::pin!(stop);
        if let Some(sessions) = &self.shared.sessions {
            tokio::spawn(sessions.clone().end_idle(self.shared.stopping.clone()));
        }
        loop {
            // Past the bound, connections wait in the kernel's backlog.
            let permit = tokio::select! {
                () = &mut stop => break,
                permit = connections.clone().acquire_owned() => permit,
            };
            let Ok(permit) = permit else { break };
            let accepted = tokio::select! {
                () = &mut stop => break,
                accepted = self.listener.accept() => accepted,
            };
            let stream = match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                    continue;
                }
            };
            let shared = self.shared.clone();
            let mut connection = builder.serve_connection(
                TokioIo::new(stream),
                hyper::service::service_fn(move |request| {
                    let shared = shared.clone();
                    // Boxed: a connection is polled without its shutdown (below) only when
                    // its service's future is `Unpin`.
                    Box::pin(async move { Ok::<_, Infallible>(answer(&shared, request).await) })
                }),
            );
            let stopping = self.shared.stopping.clone();
            tokio::spawn(async move {
                // hyper hands the socket back at the end instead of closing it: the close
                // lingers (`linger`).
                let ended = tokio::select! {
                    ended = std::future::poll_fn(|cx| connection.poll_without_shutdown(cx)) => ended,
                    () = stopping.cancelled() => {
                        // No more requests on it: an idle connection closes now, one with an
                        // answer under way once that answer has ended.
                        Pin::new(&mut connection).graceful_shutdown();
                        std::future::poll_fn(|cx| connection.poll_without_shutdown(cx)).await
                    }
                };
                // A connection's error (a reset, a header timeout) concerns that client only.
                if let Err(error) = ended {
                    tracing::debug!(%error, "HTTP connection ended with an error");
                }
                linger::close(connection.into_parts().io.into_inner()).await;
                drop(permit);
            });
        }
        drop(self.listener);
        self.shared.stopping.cancel();
        if let Some(sessions) = &self.shared.sessions {
            sessions.end_all();
        }
        // Every connection's permit back: every connection has ended.
        let all = u32::try_from(max_connections).unwrap_or(u32::MAX);
        let grace = self.shared.options.shutdown_grace_time_limit;
        if tokio::time::timeout(grace, connections.acquire_many(all))
            .await
            .is_err()
        {
            tracing::debug!(
                ?grace,
                "HTTP requests still running after the grace time: their answers end"
            );
            self.shared.cutting.cancel();
            let _ =
                tokio::time::timeout(SHUTDOWN_CUT_TIME_LIMIT, connections.acquire_many(all)).await;
        }
        Ok(())
    }
}

type Body = UnsyncBoxBody<Bytes, Infallible>;

fn empty(status: StatusCode) -> Response<Body> {
    with_body(status, Bytes::new(), None)
}

fn with_body(status: StatusCode, body: Bytes, content_type: Option<&str>) -> Response<Body> {
    let mut response = Response::new(Full::new(body).boxed_unsync());
    *response.status_mut() = status;
    if let Some(content_type) = content_type
        && let Ok(value) = HeaderValue::from_str(content_type)
    {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}

fn json_response(status: StatusCode, message: &Value) -> Response<Body> {
    with_body(
        status,
        Bytes::from(message.to_string()),
        Some("application/json"),
    )
}

/// An error answer that belongs to no request (a refused origin, a body that is no request):
/// a JSON-RPC error without id, or with the id when it is known.
fn error_answer(status: StatusCode, id: Option<&Id>, error: ErrorObject) -> Response<Body> {
    json_response(status, &jsonrpc::error_response(id, error))
}

/// The answer to the request `id` that the server's stop ended before its response.
fn stopped_answer(id: &Id) -> Response<Body> {
    error_answer(
        StatusCode::SERVICE_UNAVAILABLE,
        Some(id),
        RpcError::internal("Internal error: the server stopped before the request finished"),
    )
}

/// Answers one HTTP request; a POST whose `Accept` takes SSE and not JSON gets its answer
/// as an SSE stream.
async fn answer(shared: &Shared, request: Request<Incoming>) -> Response<Body> {
    let sse_only = request.method() == HttpMethod::POST
        && accept::post_takes(request.headers()) == accept::Takes::SseOnly;
    let origin = cors::admitted_origin(&shared.options, request.headers());
    let response = route(shared, request).await;
    let mut response = if sse_only {
        as_sse(response).await
    } else {
        response
    };
    if let Some(origin) = origin {
        cors::allow(&mut response, origin);
    }
    response
}

/// Answers one HTTP request by its path, method and session.
async fn route(shared: &Shared, request: Request<Incoming>) -> Response<Body> {
    let options = &shared.options;
    if let Some(auth) = &shared.auth
        && request.uri().path() == auth.metadata_path
    {
        return metadata(auth, request.method());
    }
    if options.health_path.as_deref() == Some(request.uri().path()) {
        return health(request.method());
    }
    if let Some((path, readiness)) = &options.ready
        && path == request.uri().path()
    {
        return ready(request.method(), readiness);
    }
    if request.uri().path() != options.path {
        return empty(StatusCode::NOT_FOUND);
    }
    let authority = request.uri().authority().map(|a| a.as_str());
    if let Some(refused) = check_origin_and_host(shared, request.headers(), authority) {
        return refused;
    }
    if request.method() == HttpMethod::OPTIONS {
        return cors::preflight(shared);
    }
    if let Some(sessions) = &shared.sessions {
        let mut ids = request.headers().get_all(SESSION_ID_HEADER).iter();
        if let Some(session_id) = ids.next().cloned() {
            if ids.next().is_some() {
                // Which session is meant cannot be told (RFC 9110 §5.3: a field that is no
                // list cannot be sent twice), as a second `Host` is refused.
                let error = RpcError::new(
                    ErrorCode::INVALID_REQUEST,
                    "Bad request: more than one Mcp-Session-Id",
                );
                return error_answer(StatusCode::BAD_REQUEST, None, error);
            }
            return session::answer(shared, sessions, request, &session_id).await;
        }
    }
    if request.method() != HttpMethod::POST {
        // 2026-07-28 has no GET stream and no sessions to DELETE: 405 (basic/transports/http).
        return not_allowed("POST");
    }
    // Before the body is read: a client without a good token costs no more than its headers.
    if let Some(auth) = &shared.auth
        && let Some(refused) = check_bearer(auth, request.headers()).await
    {
        return refused;
    }
    let (parts, body) = match read_body(options, request).await {
        Ok(read) => read,
        Err(refused) => return refused,
    };
    match jsonrpc::parse(&body, options.max_depth) {
        Err(error) => bad_body(&error, options.max_depth),
        // 2026-07-28 clients send no responses: a POST carries a request or a notification.
        Ok(Message::Response { .. } | Message::ErrorResponse { .. }) => error_answer(
            StatusCode::BAD_REQUEST,
            None,
            Cause::InvalidRequestShape.error(None),
        ),
        // Accepted: the core protocol defines no client notification over HTTP (closing the
        // stream is the cancellation), so there is nothing to act on.
        Ok(Message::Notification { .. }) => empty(StatusCode::ACCEPTED),
        Ok(Message::Request { id, method, params }) => match &shared.sessions {
            // A 2025-11-25 client: a new session. An `initialize` with the protocol version
            // key in `_meta` is a 2026-07-28 request, which gets its 404 -32601 (2026-07-28
            // basic/transports/http: the removed methods), as the bridge's Frontend answers it.
            Some(sessions)
                if method == methods::INITIALIZE && !names_modern_version(params.as_ref()) =>
            {
                match jsonrpc::parse_value_bounded(&body, options.max_depth) {
                    Ok(message) => session::start(shared, sessions, &id, message).await,
                    Err(error) => bad_body(&error, options.max_depth),
                }
            }
            _ => match &shared.front {
                Front::Server(server) => {
                    serve_request(shared, server, &parts.headers, id, method, params).await
                }
                Front::Relay(relay) => {
                    let relay = relay.clone();
                    relay_request(shared, &relay, &parts.headers, &body, id, method, params).await
                }
                Front::SessionsOnly => error_answer(
                    StatusCode::BAD_REQUEST,
                    Some(&id),
                    Cause::SessionRequired.error(None),
                ),
            },
        },
    }
}

/// The answer of [`HttpOptions::ready`]: its report, 200 when ready, else 503 (GET or HEAD;
/// another method gets 405). Before the checks, as [`health`].
fn ready(method: &HttpMethod, readiness: &Readiness) -> Response<Body> {
    if method != HttpMethod::GET && method != HttpMethod::HEAD {
        return not_allowed("GET, HEAD");
    }
    let (ready, report) = (readiness.0)();
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    json_response(status, &report)
}

/// The answer of [`HttpOptions::health_path`]: the process is alive and serving (GET or
/// HEAD; another method gets 405). It is served before the `Origin`, `Host` and bearer
/// checks: a health probe (a container's, a load balancer's) sends none of them, and the
/// answer says nothing but that the process runs.
fn health(method: &HttpMethod) -> Response<Body> {
    if method == HttpMethod::GET || method == HttpMethod::HEAD {
        json_response(StatusCode::OK, &json!({"status": "alive"}))
    } else {
        not_allowed("GET, HEAD")
    }
}

/// Whether `params._meta` has the 2026-07-28 protocol version key (2026-07-28 basic: every
/// request carries it; a 2025-11-25 request never does).
fn names_modern_version(params: Option<&Value>) -> bool {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(crate::protocol::revisions::modern::META_PROTOCOL_VERSION))
        .is_some()
}

/// A POST's body, after the checks of its headers (a JSON body, an answer the client takes,
/// the declared length) and within the size limit.
async fn read_body(
    options: &HttpOptions,
    request: Request<Incoming>,
) -> Result<(hyper::http::request::Parts, Bytes), Response<Body>> {
    if !is_json(request.headers()) {
        return Err(empty(StatusCode::UNSUPPORTED_MEDIA_TYPE));
    }
    if accept::post_takes(request.headers()) == accept::Takes::Neither {
        return Err(empty(StatusCode::NOT_ACCEPTABLE));
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > options.max_body_bytes as u64) {
        return Err(empty(StatusCode::PAYLOAD_TOO_LARGE));
    }
    let (parts, body) = request.into_parts();
    let read = Limited::new(body, options.max_body_bytes).collect();
    let Ok(read) = tokio::time::timeout(options.body_read_time_limit, read).await else {
        // RFC 9110 §15.5.9: 408 with `Connection: close`; the rest of the body is not read.
        let mut response = empty(StatusCode::REQUEST_TIMEOUT);
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        return Err(response);
    };
    match read {
        Ok(collected) => Ok((parts, collected.to_bytes())),
        Err(error) => {
            if error.is::<http_body_util::LengthLimitError>() {
                return Err(empty(StatusCode::PAYLOAD_TOO_LARGE));
            }
            // The client stopped sending: nobody reads this answer.
            Err(empty(StatusCode::BAD_REQUEST))
        }
    }
}

/// The answer to a body that is no JSON-RPC message (400, without id unless it is known).
fn bad_body(error: &ParseError, max_depth: usize) -> Response<Body> {
    let (cause, detail) = match error {
        ParseError::NotJson { .. } => (Cause::ParseError, None),
        ParseError::TooDeep { .. } => (Cause::TooDeep, Some(max_depth.into())),
        ParseError::Shape { .. } => (Cause::InvalidRequestShape, None),
    };
    error_answer(StatusCode::BAD_REQUEST, error.id(), cause.error(detail))
}

fn not_allowed(allow: &'static str) -> Response<Body> {
    let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}

/// `Content-Type: application/json`, parameters (`; charset=utf-8`) allowed.
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

fn header_text<'h>(headers: &'h HeaderMap, name: &str) -> HeaderText<'h> {
    match headers.get(name) {
        None => HeaderText::Absent,
        Some(value) => value.to_str().map_or(HeaderText::Invalid, HeaderText::Text),
    }
}

/// The status of a JSON answer, by its error code (2026-07-28 basic/transports/http).
fn status_of(response: &Value) -> StatusCode {
    let code = response
        .get("error")
        .and_then(|e| e.get("code"))
        .and_then(Value::as_i64);
    match code.map(ErrorCode) {
        None => StatusCode::OK,
        Some(ErrorCode::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(
            ErrorCode::HEADER_MISMATCH
            | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        ) => StatusCode::BAD_REQUEST,
        Some(_) => StatusCode::OK,
    }
}

/// Serves one request: the header check, the `_meta` check, then the handler on its own task,
/// its lines read by the answer.
async fn serve_request(
    shared: &Shared,
    server: &Server,
    headers: &HeaderMap,
    id: Id,
    method: String,
    params: Option<Value>,
) -> Response<Body> {
    let Some(known) = Method::parse(&method) else {
        // A method 2026-07-28 does not have (`initialize`, `ping`, `logging/setLevel`, ...):
        // 404 with -32601 (2026-07-28 basic/transports/http), before any header check.
        let error = RpcError::method_not_found(&method);
        return error_answer(StatusCode::NOT_FOUND, Some(&id), error);
    };
    // A method the server does not offer gets its -32601 from the server.
    if server.offers(known)
        && let Err(refused) = check_request(shared, headers, &id, &method, params.as_ref())
    {
        return *refused;
    }
    let permit = match in_flight_permit(shared, &id) {
        Ok(permit) => permit,
        Err(refused) => return *refused,
    };
    let is_listen = method == methods::SUBSCRIPTIONS_LISTEN;
    let answer_id = id.clone();
    let cancel = CancellationToken::new();
    // Dropped with the answer (or the answer's stream) before the request ends: the client
    // went away, and that cancels the request.
    let guard = cancel.clone().drop_guard();
    let (out, lines) = Outbox::channel();
    let (done, response) = oneshot::channel::<Option<Value>>();
    let link = ConnectionLink {
        out,
        close: shared.stopping.child_token(),
    };
    let server = server.clone();
    let time_limit = (!is_listen).then_some(shared.options.request_time_limit);
    tokio::spawn(async move {
        let work = dispatch::handle(&server, &link, &id, &method, params, cancel.clone());
        let answer = tokio::select! {
            () = cancel.cancelled() => None,
            answer = within(time_limit, work) => match answer {
                Ok(answer) => answer,
                Err(limit) => {
                    cancel.cancel();
                    Some(past_time_limit(&id, limit))
                }
            },
        };
        // The lines the request queued are in the channel before its response is sent.
        let _ = done.send(answer);
        drop(link);
        drop(permit);
    });

    respond(shared, &answer_id, lines, response, guard).await
}

/// The checks of a 2026-07-28 request over HTTP before it is served: its standard headers
/// against its body (`Mcp-Param-*` by [`Shared::tool_params`]), and its `_meta` (a request
/// without the required keys is 400 on HTTP, 2026-07-28 basic/index); the 400 answer of the
/// first that fails.
fn check_request(
    shared: &Shared,
    headers: &HeaderMap,
    id: &Id,
    method: &str,
    params: Option<&Value>,
) -> Result<(), Box<Response<Body>>> {
    let refused = |error| Box::new(error_answer(StatusCode::BAD_REQUEST, Some(id), error));
    request_headers::check(
        method,
        params,
        |name| header_text(headers, name),
        |tool| shared.tool_params.get(tool).map(Vec::as_slice),
    )
    .map_err(refused)?;
    let meta = params.and_then(|p| p.get("_meta")).cloned();
    dispatch::parse_meta(meta).map(|_| ()).map_err(refused)
}

/// A slot of [`HttpOptions::max_in_flight`] for request `id`, or its 503 answer.
fn in_flight_permit(
    shared: &Shared,
    id: &Id,
) -> Result<tokio::sync::OwnedSemaphorePermit, Box<Response<Body>>> {
    shared.in_flight.clone().try_acquire_owned().map_err(|_| {
        let error = Cause::TooManyRequests.error(Some(shared.options.max_in_flight.into()));
        let mut response = error_answer(StatusCode::SERVICE_UNAVAILABLE, Some(id), error);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        Box::new(response)
    })
}

/// The answer of request `id` that ran past [`HttpOptions::request_time_limit`] (`limit`).
fn past_time_limit(id: &Id, limit: Duration) -> Value {
    let error = RpcError::internal(
        "Internal error: the request did not finish within the server's time limit",
    )
    .with_data(json!({ "limitSecs": limit.as_secs() }));
    jsonrpc::error_response(Some(id), error)
}

/// Relays one request ([`Front::Relay`]): the 2026-07-28 header checks (those of the tools'
/// `x-mcp-header` arguments by the tools the relayed server listed when it was bound), the
/// `_meta` check, then the relay on its own task, its lines read by the answer. A listen stream ends at the server's stop; the other requests have
/// [`HttpOptions::request_time_limit`].
async fn relay_request(
    shared: &Shared,
    relay: &Arc<dyn Relay>,
    headers: &HeaderMap,
    body: &Bytes,
    id: Id,
    method: String,
    params: Option<Value>,
) -> Response<Body> {
    if Method::parse(&method).is_none() {
        // As [`serve_request`]: a method 2026-07-28 does not have, before any header check.
        let error = RpcError::method_not_found(&method);
        return error_answer(StatusCode::NOT_FOUND, Some(&id), error);
    }
    if let Err(refused) = check_request(shared, headers, &id, &method, params.as_ref()) {
        return *refused;
    }
    let request = match jsonrpc::parse_value_bounded(body, shared.options.max_depth) {
        Ok(request) => request,
        Err(error) => return bad_body(&error, shared.options.max_depth),
    };
    let permit = match in_flight_permit(shared, &id) {
        Ok(permit) => permit,
        Err(refused) => return *refused,
    };
    let is_listen = method == methods::SUBSCRIPTIONS_LISTEN;
    let cancel = CancellationToken::new();
    // Dropped with the answer before the request ends: the client went away, and the relay
    // abandons the request.
    let guard = cancel.clone().drop_guard();
    let (out, lines) = mpsc::channel(super::output::OUTPUT_QUEUE_LINES);
    let (done, response) = oneshot::channel::<Option<Value>>();
    // Held until the response is handed over: the lines' channel closes after it, so the
    // answer's stream never ends before the response (as `serve_request`'s link).
    let held = out.clone();
    let work = relay.relay(request, out);
    let time_limit = (!is_listen).then_some(shared.options.request_time_limit);
    let stopping = shared.stopping.clone();
    let answer_id = id.clone();
    tokio::spawn(async move {
        let answer = tokio::select! {
            () = cancel.cancelled() => None,
            // The stop ends a listen stream (its request abandoned), as it ends the server's.
            () = stopping.cancelled(), if is_listen => None,
            answer = within(time_limit, work) => match answer {
                Ok(answer) => answer,
                Err(limit) => Some(past_time_limit(&id, limit)),
            },
        };
        let _ = done.send(answer);
        drop(held);
        drop(permit);
    });
    respond(shared, &answer_id, lines, response, guard).await
}

/// The answer of a request whose work runs on its own task: JSON when only its response
/// comes (`response`), an SSE stream as soon as a line of it comes first (`lines`); the
/// request is cancelled (`guard` dropped) when its client goes away before its end.
async fn respond(
    shared: &Shared,
    answer_id: &Id,
    mut lines: mpsc::Receiver<String>,
    mut response: oneshot::Receiver<Option<Value>>,
    guard: DropGuard,
) -> Response<Body> {
    let keep_alive = shared.options.keep_alive_interval;
    let cut = shared.cutting.clone();
    tokio::select! {
        // `None` (every sender gone) disables this branch: the response has been sent then.
        Some(first) = lines.recv() => sse(vec![first], lines, response, guard, keep_alive, cut),
        // The server's grace time ended before the answer: the request is cancelled (the
        // guard goes), and the client learns why.
        () = shared.cutting.cancelled() => stopped_answer(answer_id),
        answer = &mut response => {
            let queued = drain(&mut lines);
            match answer {
                Ok(Some(answer)) if queued.is_empty() => {
                    guard.disarm();
                    json_response(status_of(&answer), &answer)
                }
                Ok(answer) => {
                    let mut events = queued;
                    events.extend(answer.map(|a| a.to_string()));
                    guard.disarm();
                    sse_done(events)
                }
                // The task ended without a word (it cannot, but the client is owed an answer).
                Err(_) => {
                    guard.disarm();
                    error_answer(StatusCode::INTERNAL_SERVER_ERROR, None, RpcError::internal("Internal error"))
                }
            }
        }
    }
}

/// `work` within `limit` (none: no limit); `Err(limit)` when it ran out.
async fn within<T>(limit: Option<Duration>, work: impl Future<Output = T>) -> Result<T, Duration> {
    match limit {
        None => Ok(work.await),
        Some(limit) => tokio::time::timeout(limit, work).await.map_err(|_| limit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_follows_the_error_code() {
        let error =
            |code: i64| json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "m"}});
        assert_eq!(
            status_of(&json!({"jsonrpc": "2.0", "id": 1, "result": {}})),
            StatusCode::OK
        );
        assert_eq!(status_of(&error(-32601)), StatusCode::NOT_FOUND);
        for code in [-32020, -32021, -32022] {
            assert_eq!(status_of(&error(code)), StatusCode::BAD_REQUEST);
        }
        assert_eq!(status_of(&error(-32602)), StatusCode::OK);
        assert_eq!(status_of(&error(-32603)), StatusCode::OK);
    }
}
