//! The HTTP requests of a session: the `initialize` that starts it, then the GET, POST and
//! DELETE with its `Mcp-Session-Id`.

use super::routes::{GetStream, OUTPUT_MAX_DEPTH, Out, Routes, StreamGuard, Waiter, route_output};
use super::stream::{Source, stream_of};
use super::table::{SessionTable, session_id};
use super::{
    SESSION_ID_HEADER, SESSION_INPUT_QUEUE_MESSAGES, SESSION_OUTPUT_QUEUE_MESSAGES, Session,
    SessionEnds,
};
use crate::protocol::revisions::errors::Cause;
use crate::protocol::revisions::methods;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc::{self, Message, ParseError};
use crate::protocol::wire::raw;
use crate::server::RpcError;
use crate::server::dispatch;
use crate::server::http::{
    Body, Shared, accept, bad_body, check_bearer, empty, error_answer, not_allowed, read_body,
    stopped_answer, with_body,
};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method as HttpMethod, Request, Response, StatusCode};
use serde_json::Value;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Messages queued toward one response stream (64): past it the session's output waits for
/// the client to read (its own queue is bounded: [`crate::transport::writer`]).
const STREAM_QUEUE_MESSAGES: usize = 64;

fn with_session(mut response: Response<Body>, session: &Session) -> Response<Body> {
    response
        .headers_mut()
        .insert(SESSION_ID_HEADER, session.id_header.clone());
    response
}

fn unknown_session(id: Option<&Id>) -> Response<Body> {
    error_answer(StatusCode::NOT_FOUND, id, Cause::UnknownSession.error(None))
}

/// The answer to the request `id` whose session ended before its response: the stop's 503
/// when the server is stopping (as a 2026-07-28 request gets it), else 404.
fn ended_before_response(shared: &Shared, id: &Id) -> Response<Body> {
    if shared.stopping.is_cancelled() {
        stopped_answer(id)
    } else {
        unknown_session(Some(id))
    }
}

/// Starts a session with the `initialize` request `id` (its message `body`) and answers it.
pub(in crate::server::http) async fn start(
    shared: &Shared,
    table: &Arc<SessionTable>,
    id: &Id,
    body: Value,
) -> Response<Body> {
    if !table.reserve() {
        let error = Cause::TooManySessions.error(Some(table.max.into()));
        return error_answer(StatusCode::SERVICE_UNAVAILABLE, Some(id), error);
    }
    let (input, input_end) = mpsc::channel(SESSION_INPUT_QUEUE_MESSAGES);
    let (output_end, output) = mpsc::channel(SESSION_OUTPUT_QUEUE_MESSAGES);
    let started = match session_id() {
        Some(session_id) => {
            let ends = SessionEnds {
                input: input_end,
                output: output_end,
                id: session_id.clone(),
            };
            table.factory.0.start(ends).await.map(|()| session_id)
        }
        None => Err(io::Error::other("no random bytes for a session id")),
    };
    let session_id = match started {
        Ok(session_id) => session_id,
        Err(error) => {
            table.release();
            tracing::warn!(%error, "an HTTP session did not start");
            let error = RpcError::internal("Internal error: the session did not start");
            return error_answer(StatusCode::INTERNAL_SERVER_ERROR, Some(id), error);
        }
    };
    let Ok(id_header) = HeaderValue::from_str(&session_id) else {
        table.release();
        return error_answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            Some(id),
            RpcError::internal("Internal error"),
        );
    };
    let session = Arc::new(Session {
        id: session_id,
        id_header,
        input: Mutex::new(Some(input)),
        routes: Mutex::new(Routes::new()),
        serial: AtomicU64::new(0),
    });
    table.insert(session.clone());
    tokio::spawn(route_output(table.clone(), session.clone(), output));
    tracing::debug!(session = %session.label(), "an HTTP session started");
    // An `initialize` has no progress to report: a token of it is not read.
    let progress = progress_token(&body).ok().flatten();
    let line = Bytes::from(body.to_string());
    let response = serve_in_session(shared, &session, id, progress, line).await;
    settle_initialize(table, &session, response).await
}

/// The answer to a session's `initialize`. When it is a JSON-RPC error the session ends (its
/// bridge's input closes) and the answer carries no `Mcp-Session-Id`: the id goes "on the
/// HTTP response containing the InitializeResult" (2025-11-25 basic/transports), and a
/// session whose initialization failed serves nothing.
async fn settle_initialize(
    table: &SessionTable,
    session: &Session,
    response: Response<Body>,
) -> Response<Body> {
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes() == accept::JSON.as_bytes());
    if !is_json {
        // An SSE answer (server messages came before the response) has sent its headers
        // before its response is known.
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // A JSON answer's body is whole (`Full`): this collects at once.
    let Ok(collected) = body.collect().await;
    let bytes = collected.to_bytes();
    let failed = jsonrpc::parse_value_bounded(&bytes, OUTPUT_MAX_DEPTH)
        .is_ok_and(|answer| answer.get("error").is_some());
    if failed {
        parts.headers.remove(SESSION_ID_HEADER);
        if table.end(&session.id) {
            tracing::debug!(session = %session.label(), "an HTTP session ended: its initialize failed");
        }
    }
    Response::from_parts(parts, Full::new(bytes).boxed_unsync())
}

/// Answers a request to the endpoint with `Mcp-Session-Id`.
pub(in crate::server::http) async fn answer(
    shared: &Shared,
    table: &Arc<SessionTable>,
    request: Request<Incoming>,
    session_id: &HeaderValue,
) -> Response<Body> {
    if let Some(auth) = &shared.auth
        && let Some(refused) = check_bearer(auth, request.headers()).await
    {
        return refused;
    }
    let Some(session) = session_id.to_str().ok().and_then(|id| table.get(id)) else {
        return unknown_session(None);
    };
    session.routes().claimed = true;
    match *request.method() {
        HttpMethod::GET => open_stream(shared, &session, request.headers()),
        HttpMethod::DELETE => {
            table.end(&session.id);
            tracing::debug!(session = %session.label(), "an HTTP session ended: deleted");
            empty(StatusCode::NO_CONTENT)
        }
        HttpMethod::POST => post(shared, &session, request).await,
        _ => not_allowed("GET, POST, DELETE"),
    }
}

/// A POST into a session: a request is answered on it, anything else gets 202.
async fn post(
    shared: &Shared,
    session: &Arc<Session>,
    request: Request<Incoming>,
) -> Response<Body> {
    let (_, body) = match read_body(&shared.options, request).await {
        Ok(read) => read,
        Err(refused) => return refused,
    };
    let max_depth = shared.options.max_depth;
    // Nearly every POST is a request: its envelope is read without a value tree (the
    // session's bridge parses the message itself), and a body on one line goes in as it came.
    if let Some((id, _, params)) = raw::request(body.clone(), max_depth)
        && memchr::memchr2(b'\n', b'\r', &body).is_none()
    {
        let Ok(progress) = params.as_ref().map_or(Ok(None), raw_progress_token) else {
            return invalid_progress_token(session, &id);
        };
        return serve_in_session(shared, session, &id, progress, body).await;
    }
    let message = match jsonrpc::parse(&body, max_depth) {
        Ok(message) => message,
        Err(error) => return bad_body(&error, max_depth),
    };
    let Ok(value) = jsonrpc::parse_value_bounded(&body, max_depth) else {
        return bad_body(&ParseError::NotJson { id: None }, max_depth);
    };
    match message {
        Message::Request { id, .. } => {
            let Ok(progress) = progress_token(&value) else {
                return invalid_progress_token(session, &id);
            };
            let line = Bytes::from(value.to_string());
            serve_in_session(shared, session, &id, progress, line).await
        }
        _ => {
            if value.get("method").and_then(Value::as_str) == Some(methods::CANCELLED)
                && let Some(id) = value.pointer("/params/requestId").and_then(Id::from_value)
            {
                session.routes().cancelled_by_client(&id);
            }
            if session.send(Bytes::from(value.to_string())).await {
                session.routes().last_active = Instant::now();
                with_session(empty(StatusCode::ACCEPTED), session)
            } else {
                unknown_session(None)
            }
        }
    }
}

/// The `_meta.progressToken` of a request's params, as JSON text (serde_json's, as
/// [`Session::target`] writes the token of a progress notification); `Err` when it is no
/// usable id.
fn progress_token(message: &Value) -> Result<Option<String>, ()> {
    message
        .pointer("/params/_meta/progressToken")
        .map(token_text)
        .transpose()
}

/// [`progress_token`] of params read without a value tree.
fn raw_progress_token(params: &raw::Params) -> Result<Option<String>, ()> {
    let raw::Params::Object(params) = params else {
        return Ok(None);
    };
    let Some(meta) = params.get("_meta") else {
        return Ok(None);
    };
    let Some(meta) = raw::Object::read(meta) else {
        return Ok(None);
    };
    let Some(token) = meta.get("progressToken") else {
        return Ok(None);
    };
    token
        .to_value()
        .as_ref()
        .map_or(Err(()), token_text)
        .map(Some)
}

/// A progress token as JSON text, if it is a usable id (a string, or an integer in 64 bits:
/// docs/errors.md, "Ids").
fn token_text(token: &Value) -> Result<String, ()> {
    Id::from_value(token).map(|_| token.to_string()).ok_or(())
}

/// The answer to the request `id` whose progress token is no usable id: 400 -32602, as the
/// stateless path answers it (the session's bridge would run it with no progress).
fn invalid_progress_token(session: &Session, id: &Id) -> Response<Body> {
    let error = dispatch::invalid_progress_token();
    with_session(
        error_answer(StatusCode::BAD_REQUEST, Some(id), error),
        session,
    )
}

/// Sends the request `id` (its message `line`, whose `_meta.progressToken` is `progress`) into
/// the session and answers with what the session writes for it.
async fn serve_in_session(
    shared: &Shared,
    session: &Arc<Session>,
    id: &Id,
    progress: Option<String>,
    line: Bytes,
) -> Response<Body> {
    let (stream, mut lines) = mpsc::channel(STREAM_QUEUE_MESSAGES);
    let serial = session.serial.fetch_add(1, Ordering::Relaxed);
    {
        let mut routes = session.routes();
        if routes.ended {
            return unknown_session(Some(id));
        }
        if routes.in_use(id) {
            // Its response could not be told from the other's.
            let error = Cause::DuplicateId.error(None);
            return with_session(
                error_answer(StatusCode::BAD_REQUEST, Some(id), error),
                session,
            );
        }
        // A cancellation of an earlier request of this id is no concern of this one.
        routes.take_cancelled(id);
        routes.waiting.insert(
            id.clone(),
            Waiter {
                serial,
                stream,
                progress,
            },
        );
        routes.open += 1;
    }
    let guard = StreamGuard {
        session: session.clone(),
        serial,
        request: Some(id.clone()),
    };
    if !session.send(line).await {
        return ended_before_response(shared, id);
    }
    match lines.recv().await {
        Some(Out::Response(line)) => {
            drop(guard);
            with_session(
                with_body(StatusCode::OK, line, Some("application/json")),
                session,
            )
        }
        Some(Out::Message(line)) => with_session(
            stream_of(
                Source::Post(Some(line), lines),
                guard,
                shared.options.keep_alive_interval,
            ),
            session,
        ),
        // The client cancelled the request: no response comes, and the POST gets none.
        None if session.routes().take_cancelled(id) => {
            drop(guard);
            with_session(empty(StatusCode::NO_CONTENT), session)
        }
        // The session ended meanwhile.
        None => ended_before_response(shared, id),
    }
}

/// Opens the session's GET stream: the messages that waited for it, then the session's. A
/// GET while one is open takes over from it: the old answer ends, and the messages it had
/// not taken go to the new one (a client that lost its stream without the server noticing,
/// behind a proxy or after a sleep, opens a new one; 2025-11-25 basic/transports lets a
/// client hold several, and a message goes on one of them only).
fn open_stream(shared: &Shared, session: &Arc<Session>, headers: &HeaderMap) -> Response<Body> {
    if !accept::takes_sse(headers) {
        return empty(StatusCode::NOT_ACCEPTABLE);
    }
    let serial = session.serial.fetch_add(1, Ordering::Relaxed);
    let ended = CancellationToken::new();
    {
        let mut routes = session.routes();
        if routes.ended {
            return unknown_session(None);
        }
        match routes.get.as_mut() {
            Some(old) => {
                old.ended.cancel();
                old.serial = serial;
                old.ended = ended.clone();
                tracing::debug!(session = %session.label(), "an HTTP session's GET stream was taken over by a new one");
            }
            None => {
                let (sender, lines) = mpsc::channel(STREAM_QUEUE_MESSAGES);
                routes.get = Some(GetStream {
                    serial,
                    sender,
                    lines,
                    ended: ended.clone(),
                });
            }
        }
        routes.open += 1;
    }
    let guard = StreamGuard {
        session: session.clone(),
        serial,
        request: None,
    };
    with_session(
        stream_of(
            Source::Get(ended),
            guard,
            shared.options.keep_alive_interval,
        ),
        session,
    )
}
