//! Pass-through over HTTP: the 2025-11-25 Streamable HTTP transport (2025-11-25
//! basic/transports, notes §10.5), after the era fallback chose a legacy server.
//!
//! - Every message of the editor is its own POST with no 2026-07-28 header: `Accept` (JSON and
//!   SSE), `Content-Type`, the user's headers, the token, `MCP-Protocol-Version` (the version
//!   of the `initialize` result, from then on) and `Mcp-Session-Id` (the session of the
//!   `initialize` response, from then on).
//! - A request's response (JSON, or an SSE stream of the server's messages ending with the
//!   response) comes back as frames, server requests included; a notification or response
//!   expects `202`.
//! - After `notifications/initialized` is accepted, a GET opens the server's stream (`405`:
//!   the server offers none); its messages come back as frames.
//! - Sign-in as on the modern path: the provider's token on every message, and a POST
//!   answered 401/403 goes again after each challenge the provider answers with a retry. The
//!   GET stream hands no challenge over: refused with 401/403, it opens again after the next
//!   POST that gets through.
//! - A `404` to a message carrying the session ends the upstream ([`EndCause::SessionEnded`]);
//!   at close the session gets a DELETE.

use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use std::rc::Rc;
use std::time::Duration;

use super::Shared;
use super::exchange::{
    ResponseBody, ended_before_the_response, error_status, response_body, send_detail, send_signed,
    sse_events, unanswered,
};
use super::headers;
use crate::protocol::framing::Frame;
use crate::protocol::jsonrpc::Id;
use crate::transport::token::AccessToken;
use crate::transport::upstream::{EndCause, Event, Failure};

/// The session header of 2025-11-25 Streamable HTTP.
pub const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
/// The protocol version header (sent once the version is negotiated).
pub const PROTOCOL_VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// The headers of every message of the pass-through: no `Mcp-Method`, `Mcp-Name` or
/// `Mcp-Param-*`, no `_meta`-derived version; the token is added per attempt ([`signed`]).
fn base(sh: &Shared, accept: &'static str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(ACCEPT, HeaderValue::from_static(accept));
    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(v) = sh.legacy.version.borrow().clone() {
        h.insert(PROTOCOL_VERSION_HEADER, v);
    }
    if let Some(v) = sh.legacy.session.borrow().clone() {
        h.insert(SESSION_HEADER, v);
    }
    for (n, v) in &sh.headers {
        h.append(n.clone(), v.clone());
    }
    h
}

/// `h` with the provider's token, when there is one.
fn signed(h: &HeaderMap, token: Option<&AccessToken>) -> HeaderMap {
    let mut h = h.clone();
    if let Some((n, v)) = token.and_then(|t| headers::bearer(t.secret())) {
        h.insert(n, v);
    }
    h
}

/// POSTs `msg` and reports what came back; a request that fails gets [`Event::Failed`].
pub(super) async fn run(sh: Rc<Shared>, msg: Value) {
    let id = msg.get("id").and_then(Id::from_value);
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let is_request = id.is_some() && !method.is_empty();
    let outcome = post(&sh, &msg, method, id.as_ref().filter(|_| is_request)).await;
    if let Some(id) = id.as_ref().filter(|_| is_request) {
        sh.in_flight.borrow_mut().remove(id);
    }
    match (outcome, id) {
        (Err(failure), Some(id)) if is_request => {
            let _ = sh.events.send(Event::Failed { id, failure });
        }
        (Err(failure), _) => {
            tracing::debug!(target: "http", "a message to the upstream failed: {}", failure.detail);
        }
        (Ok(()), _) if method == "notifications/initialized" => open_stream(&sh),
        (Ok(()), _) => {}
    }
}

async fn post(sh: &Rc<Shared>, msg: &Value, method: &str, id: Option<&Id>) -> Result<(), Failure> {
    let body = Bytes::from(serde_json::to_vec(msg).unwrap_or_default());
    let h = base(sh, headers::ACCEPT_BOTH);
    // The sign-in of the modern path: the token, and a retry after each challenge the
    // provider answers (a refresh, a sign-in, a step-up).
    let resp = send_signed(sh, |token, url| {
        sh.client
            .post(url.clone())
            .headers(signed(&h, token))
            .body(body.clone())
            .build()
    })
    .await?;
    if sh.legacy.stream_awaits_sign_in.get() && resp.status().is_success() {
        // The GET stream was refused for its token: a request went through, so reopen it.
        sh.legacy.stream_awaits_sign_in.set(false);
        open_stream(sh);
    }
    let status = resp.status();
    if status.as_u16() == 404 && sh.legacy.session.borrow().is_some() {
        session_ended(sh);
        return Err(Failure::status(
            404,
            "the server ended the HTTP session".into(),
        ));
    }
    if !status.is_success() {
        return Err(error_status(resp, sh.max_response_bytes).await);
    }
    let Some(id) = id else {
        // A notification or a response: 202 is all there is to it.
        return Ok(());
    };
    if method == "initialize"
        && let Some(v) = resp.headers().get(SESSION_HEADER)
        && v.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b))
        && !v.is_empty()
    {
        let mut v = v.clone();
        v.set_sensitive(true);
        *sh.legacy.session.borrow_mut() = Some(v);
    }
    match response_body(resp, sh.max_response_bytes).await? {
        ResponseBody::Events(resp) => match stream(sh, resp, Some((id, method))).await? {
            true => Ok(()),
            false => Err(ended_before_the_response()),
        },
        ResponseBody::Json(body) => match deliver(sh, body, Some((id, method))).await {
            true => Ok(()),
            false => Err(unanswered()),
        },
    }
}

/// The messages of an SSE body as frames; with `answers`, until the response of that
/// request (true when it came).
async fn stream(
    sh: &Rc<Shared>,
    resp: reqwest::Response,
    answers: Option<(&Id, &str)>,
) -> Result<bool, Failure> {
    Ok(sse_events(resp, sh.max_response_bytes, |event| {
        deliver(sh, event.data, answers)
    })
    .await?)
}

/// Hands one message to the correlation layer as one line (after the editor's queue has
/// room). True when it is the response of `answers`' request; the result of `initialize`
/// gives the protocol version of every later message.
async fn deliver(sh: &Shared, body: Bytes, answers: Option<(&Id, &str)>) -> bool {
    if body.trim_ascii().is_empty() {
        return false;
    }
    let parsed = serde_json::from_slice::<Value>(&body).ok();
    let answered = match (&parsed, answers) {
        (Some(v), Some((id, method))) => {
            let is = v.get("id").and_then(Id::from_value).as_ref() == Some(id)
                && (v.get("result").is_some() || v.get("error").is_some());
            if is
                && method == "initialize"
                && let Some(version) = v
                    .get("result")
                    .and_then(|r| r.get("protocolVersion"))
                    .and_then(Value::as_str)
                    .and_then(|s| HeaderValue::from_str(s).ok())
            {
                *sh.legacy.version.borrow_mut() = Some(version);
            }
            is
        }
        _ => false,
    };
    let mut frame = body;
    if let Some(v) = &parsed
        && memchr::memchr2(b'\n', b'\r', &frame).is_some()
    {
        // A frame is one line: a pretty-printed body is written again on one.
        frame = Bytes::from(serde_json::to_vec(v).unwrap_or_default());
    }
    sh.pace.room().await;
    let _ = sh.events.send(Event::Frame(Frame::Line(frame)));
    answered
}

/// Opens the server's GET stream (once, after `notifications/initialized`).
fn open_stream(sh: &Rc<Shared>) {
    if sh.closed.get() || sh.legacy.stream.borrow().is_some() {
        return;
    }
    let task = tokio::task::spawn_local(get_stream(sh.clone()));
    *sh.legacy.stream.borrow_mut() = Some(task.abort_handle());
}

async fn get_stream(sh: Rc<Shared>) {
    let mut h = base(&sh, "text/event-stream");
    h.remove(CONTENT_TYPE);
    let token = sh.tokens.access_token().await;
    let get = sh
        .client
        .get(sh.url.clone())
        .headers(signed(&h, token.as_ref()));
    let resp = match get.send().await {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!(target: "http", "the server's stream did not open: {}", send_detail(&e));
            return;
        }
    };
    let status = resp.status().as_u16();
    if status == 404 && sh.legacy.session.borrow().is_some() {
        return session_ended(&sh);
    }
    if status == 405 {
        tracing::debug!(target: "http", "the server offers no stream of its own (GET: HTTP 405)");
        return;
    }
    if matches!(status, 401 | 403) {
        // No sign-in for a background stream: it opens again after the next POST that
        // gets through (the challenge of a request signs in).
        tracing::debug!(target: "http", "the server's stream was refused (HTTP {status}): it opens again after the next request that gets through");
        *sh.legacy.stream.borrow_mut() = None;
        sh.legacy.stream_awaits_sign_in.set(true);
        return;
    }
    if !resp.status().is_success() {
        tracing::debug!(target: "http", "the server's stream did not open: HTTP {status}");
        return;
    }
    match stream(&sh, resp, None).await {
        Ok(_) => tracing::debug!(target: "http", "the server's stream ended"),
        Err(f) => tracing::debug!(target: "http", "the server's stream broke: {}", f.detail),
    }
}

/// The server ended the session: the upstream ends (every request in flight fails with the
/// error of the table, then the bridge's shutdown).
fn session_ended(sh: &Shared) {
    if sh.closed.replace(true) {
        return;
    }
    tracing::warn!(target: "http", "the server ended the HTTP session (HTTP 404)");
    *sh.legacy.session.borrow_mut() = None;
    for (_, h) in sh.in_flight.borrow_mut().drain() {
        h.abort();
    }
    if let Some(h) = sh.legacy.stream.borrow_mut().take() {
        h.abort();
    }
    let _ = sh.events.send(Event::Closed);
    let _ = sh.events.send(Event::Ended(EndCause::SessionEnded));
}

/// Ends the session at close: a DELETE carrying it, waiting at most `grace` (`405`: the
/// server does not let clients end sessions; nothing more to do).
pub(super) async fn end_session(sh: Rc<Shared>, grace: Duration) {
    if sh.legacy.session.borrow().is_none() {
        return;
    }
    let mut h = base(&sh, headers::ACCEPT_BOTH);
    h.remove(CONTENT_TYPE);
    let token = sh.tokens.access_token().await;
    let delete = sh
        .client
        .delete(sh.url.clone())
        .headers(signed(&h, token.as_ref()))
        .send();
    match tokio::time::timeout(grace, delete).await {
        Ok(Ok(r)) => {
            tracing::debug!(target: "http", "the session was ended: HTTP {}", r.status().as_u16())
        }
        Ok(Err(e)) => {
            tracing::debug!(target: "http", "the session's DELETE failed: {}", send_detail(&e))
        }
        Err(_) => tracing::debug!(target: "http", "the session's DELETE timed out"),
    }
}
