//! Pass-through over HTTP: the 2025-11-25 Streamable HTTP transport (2025-11-25
//! basic/transports), after the era fallback chose a legacy server.
//!
//! - Every message of the editor is its own POST with no 2026-07-28 header: `Accept` (JSON and
//!   SSE), `Content-Type`, the user's headers, the token, `MCP-Protocol-Version` (the version
//!   of the `initialize` result, from then on) and `Mcp-Session-Id` (the session of the
//!   `initialize` response, from then on).
//! - A request's response (JSON, or an SSE stream of the server's messages ending with the
//!   response) comes back as frames, server requests included; a notification or response
//!   expects `202`.
//! - The messages after the editor's `initialize` wait for its response headers (its session
//!   id), and those after `notifications/initialized` for its `202` ([`Opening`]), so that the
//!   server sees them in the editor's order.
//! - After `notifications/initialized` is accepted, a GET opens the server's stream (`405`:
//!   the server offers none); its messages come back as frames.
//! - Sign-in as on the modern path: the provider's token on every message, and a POST
//!   answered 401/403 goes again after each challenge the provider answers with a retry. The
//!   GET stream hands no challenge over: refused with 401/403, it opens again after the next
//!   POST that gets through.
//! - A `404` to a message carrying the session: the server forgot it, and the client "MUST
//!   start a new session by sending a new InitializeRequest without a session ID" (2025-11-25
//!   basic/transports, session management). The new session ([`renew`]) sends the editor's
//!   own `initialize` params again (no session id, an id of the bridge's own), then
//!   `notifications/initialized`, opens the GET stream again, and sends again the editor's
//!   `resources/subscribe` (those not unsubscribed) and its last `logging/setLevel`; their
//!   answers stay in the transport. Then the message that got the 404 goes once more. The
//!   dead session id is never sent again, and every message waits for the new session. A
//!   `404` right after a new session (to that message once more, to a step of the new
//!   session, or to anything before a message got through on it) ends the upstream
//!   ([`EndCause::SessionEnded`]).
//! - Resumable streams (SEP-1699; the Python and Go SDK servers): a server may send a priming
//!   event with an `id` (and `retry`) and close a request's SSE response before the response.
//!   When a request's stream ends or breaks before its response after an event `id` came, a
//!   GET with `Last-Event-ID` (the last id of that stream) resumes it, after the stream's
//!   `retry` (at most [`MAX_RESUME_WAIT`]; [`RESUME_WAIT`] without one); the events of the
//!   resumed stream are those of the request. An event whose id was already passed on is not
//!   passed on again (the last [`MAX_REMEMBERED_EVENT_IDS`] ids of the stream are kept). At
//!   most [`MAX_RESUMPTIONS`] resumptions in a row that bring no new event; then the request
//!   fails as a stream that ended early does (`transport_failed`). The server's GET stream is
//!   resumed the same way when it ends after an event id.
//! - At close the session gets a DELETE.

use bytes::Bytes;
use futures_util::FutureExt;
use futures_util::future::{LocalBoxFuture, Shared as SharedFuture};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};
use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::rc::Rc;
use std::time::Duration;
use tracing::Instrument;

use super::Shared;
use super::exchange::{
    Lost, ResponseBody, SseState, ended_before_the_response, error_status, response_body,
    sse_events, sse_events_tracked, unanswered,
};
use super::headers;
use super::signed::{send_detail, send_signed};
use crate::protocol::wire::framing::Frame;
use crate::protocol::wire::id::Id;
use crate::transport::token::AccessToken;
use crate::transport::upstream::{EndCause, RequestFailure, TransportEvent};

/// The session header of 2025-11-25 Streamable HTTP.
pub const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
/// The protocol version header (sent once the version is negotiated).
pub const PROTOCOL_VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// The start of the ids of the requests a new session sends itself (`initialize`, the
/// subscriptions, the log level); the session's number follows. Never an editor's: answered
/// on their own POSTs, they never reach the correlation layer.
pub const RENEWAL_ID_PREFIX: &str = "mcp-bridge-session-";

/// The most resumptions of one request's stream in a row that bring no new event.
pub const MAX_RESUMPTIONS: u32 = 5;
/// The wait before a resumption when the stream gave no `retry` (SSE leaves the default
/// reconnection time to the client).
pub const RESUME_WAIT: Duration = Duration::from_secs(1);
/// The longest wait before a resumption, whatever the stream's `retry` says.
pub const MAX_RESUME_WAIT: Duration = Duration::from_secs(30);
/// The event ids of one stream kept to drop an event passed on already (the most recent).
pub const MAX_REMEMBERED_EVENT_IDS: usize = 1024;
/// `Last-Event-ID` of a resumption (2025-11-25 basic/transports, resumability).
pub const LAST_EVENT_ID_HEADER: HeaderName = HeaderName::from_static("last-event-id");

/// What a new session sends again, as the editor sent it.
#[derive(Default)]
pub(super) struct Replay {
    /// The params of the editor's `initialize`.
    initialize: Option<Value>,
    /// The URIs of the editor's `resources/subscribe` that were answered and not
    /// unsubscribed, in order.
    subscriptions: Vec<String>,
    /// The params of the editor's last `logging/setLevel` that was answered.
    log_level: Option<Value>,
}

/// A new session under way (true once it is in place), shared by every message that waits
/// for it.
pub(super) type Renewal = SharedFuture<LocalBoxFuture<'static, bool>>;

/// The messages that open a session, under way: the editor's `initialize`, then its
/// `notifications/initialized`. An editor may send its next messages before the `initialize`
/// result (`notifications/initialized`, a `tools/list`); the server takes them only with the
/// session id of that result (2025-11-25 basic/transports, session management: "MUST include
/// it in the Mcp-Session-Id header on all of their subsequent HTTP requests"; a request without
/// it gets 400), so they wait for the response headers of the `initialize` (or its failure),
/// as they would wait on stdio behind it. Each POST is a connection of its own, so a request
/// sent beside `notifications/initialized` may reach the server first, and servers refuse a
/// request before it (the Python SDK's session: "Received request before initialization was
/// complete"): the messages after it wait for its `202` (or its failure) too, as the SDK
/// clients, which await the notification's POST, do.
pub(super) struct Opening {
    /// Resolves when the [`Opened`] of the last opening message is dropped, and the one
    /// before it has resolved.
    gate: Gate,
}

/// A gate of [`Opening`]: resolves once.
type Gate = SharedFuture<LocalBoxFuture<'static, ()>>;

/// Held by the task of an opening message under way: dropped at its response headers, at its
/// failure, or with the task (cancelled), which lets the messages behind it go.
pub(super) struct Opened {
    _done: tokio::sync::oneshot::Sender<()>,
    /// The gate of the opening message before this one (the `initialize` under way when this
    /// is `notifications/initialized`): this message goes after it.
    behind: Option<Gate>,
}

impl Opening {
    /// Whether `method` opens the session: the messages after it wait for it.
    pub(super) fn opens(method: Option<&str>) -> bool {
        matches!(method, Some("initialize" | "notifications/initialized"))
    }

    /// An opening message is about to go: it waits for the one before it, and the messages
    /// after it wait ([`Opening::wait`]) until the [`Opened`] its task holds is dropped.
    pub(super) fn begin(sh: &Shared) -> Opened {
        let (done, rx) = tokio::sync::oneshot::channel::<()>();
        let behind = sh.legacy.opening.borrow().as_ref().map(|o| o.gate.clone());
        let before = behind.clone();
        let gate = async move {
            if let Some(before) = before {
                before.await;
            }
            let _ = rx.await;
        }
        .boxed_local()
        .shared();
        *sh.legacy.opening.borrow_mut() = Some(Opening { gate });
        Opened {
            _done: done,
            behind,
        }
    }

    /// Waits for the `initialize` under way, if any.
    async fn wait(sh: &Shared) {
        let gate = sh.legacy.opening.borrow().as_ref().map(|o| o.gate.clone());
        if let Some(gate) = gate {
            gate.await;
        }
    }
}

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

/// POSTs `msg` and reports what came back; a request that fails gets [`TransportEvent::Failed`].
/// `opened`: held while this message is the editor's `initialize` under way.
pub(super) async fn run(sh: Rc<Shared>, msg: Value, mut opened: Option<Opened>) {
    let id = msg.get("id").and_then(Id::from_value);
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let is_request = id.is_some() && !method.is_empty();
    if method == "initialize" {
        sh.legacy.replay.borrow_mut().initialize = msg.get("params").cloned();
    }
    match opened.as_mut().map(|o| o.behind.take()) {
        None => Opening::wait(&sh).await,
        Some(Some(behind)) => behind.await,
        Some(None) => {}
    }
    let outcome = post(
        &sh,
        &msg,
        method,
        id.as_ref().filter(|_| is_request),
        &mut opened,
    )
    .await;
    // Failed before its headers, or answered: nothing waits on it any longer.
    drop(opened);
    if outcome.is_ok() && is_request {
        remember(&sh, method, &msg);
    }
    if let Some(id) = id.as_ref().filter(|_| is_request) {
        sh.in_flight.borrow_mut().remove(id);
    }
    match (outcome, id) {
        (Err(failure), Some(id)) if is_request => {
            let _ = sh.events.send(TransportEvent::Failed { id, failure });
        }
        (Err(failure), _) => {
            tracing::debug!(target: "http", "a message to the upstream failed: {}", failure.detail);
        }
        (Ok(()), _) if method == "notifications/initialized" => open_stream(&sh),
        (Ok(()), _) => {}
    }
}

/// Keeps what a new session sends again of the editor's request `msg`, answered.
fn remember(sh: &Shared, method: &str, msg: &Value) {
    let params = msg.get("params");
    let uri = params
        .and_then(|p| p.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut replay = sh.legacy.replay.borrow_mut();
    match (method, uri) {
        ("resources/subscribe", Some(uri)) if !replay.subscriptions.contains(&uri) => {
            replay.subscriptions.push(uri);
        }
        ("resources/unsubscribe", Some(uri)) => replay.subscriptions.retain(|u| *u != uri),
        ("logging/setLevel", _) => replay.log_level = params.cloned(),
        _ => {}
    }
}

/// POSTs `body` once with the headers of the session now (after the new session under way,
/// if any). The number of the session it carried, if it carried one.
async fn send(
    sh: &Rc<Shared>,
    body: &Bytes,
) -> Result<(reqwest::Response, Option<u64>), RequestFailure> {
    let renewal = sh.legacy.renewal.borrow().as_ref().map(|(_, r)| r.clone());
    if let Some(r) = renewal {
        r.await;
    }
    let h = base(sh, headers::ACCEPT_BOTH);
    let carried = h
        .contains_key(SESSION_HEADER)
        .then(|| sh.legacy.generation.get());
    // The sign-in of the modern path: the token, and a retry after each challenge the
    // provider answers (a refresh, a sign-in, a step-up).
    let resp = send_signed(sh, |token, url| {
        sh.client()
            .post(url.clone())
            .headers(signed(&h, token))
            .body(body.clone())
            .build()
    })
    .await?;
    Ok((resp, carried))
}

/// The failure of a message that got 404 for its session and ended it.
fn session_lost() -> RequestFailure {
    RequestFailure::status(404, "the server ended the HTTP session".into())
}

/// POSTs `body`; a 404 to the session starts a new one ([`renewal`]) and `body` goes once
/// more. A 404 again ends the session.
async fn send_in_session(
    sh: &Rc<Shared>,
    body: &Bytes,
) -> Result<reqwest::Response, RequestFailure> {
    let (resp, carried) = send(sh, body).await?;
    let Some(carried) = carried.filter(|_| resp.status().as_u16() == 404) else {
        if carried.is_some() && resp.status().is_success() {
            sh.legacy.renewed_in_vain.set(false);
        }
        return Ok(resp);
    };
    drop(resp);
    if !renewal(sh, carried).await {
        return Err(session_lost());
    }
    let (resp, carried) = send(sh, body).await?;
    if carried.is_some() && resp.status().as_u16() == 404 {
        session_ended(sh);
        return Err(session_lost());
    }
    if carried.is_some() && resp.status().is_success() {
        sh.legacy.renewed_in_vain.set(false);
    }
    Ok(resp)
}

async fn post(
    sh: &Rc<Shared>,
    msg: &Value,
    method: &str,
    id: Option<&Id>,
    opened: &mut Option<Opened>,
) -> Result<(), RequestFailure> {
    let body = Bytes::from(serde_json::to_vec(msg).unwrap_or_default());
    let resp = send_in_session(sh, &body).await?;
    if sh.legacy.stream_awaits_sign_in.get() && resp.status().is_success() {
        // The GET stream was refused for its token: a request went through, so reopen it.
        sh.legacy.stream_awaits_sign_in.set(false);
        open_stream(sh);
    }
    let status = resp.status();
    if !status.is_success() {
        return Err(error_status(resp, sh.max_response_bytes).await);
    }
    let Some(id) = id else {
        // A notification or a response: 202 is all there is to it.
        return Ok(());
    };
    if method == "initialize" {
        keep_session(sh, resp.headers());
        opened.take();
    }
    match response_body(resp, sh.max_response_bytes).await? {
        ResponseBody::Events(resp) => resumable(sh, resp, Some((id, method))).await,
        ResponseBody::Json(body) => match deliver(sh, body, Some((id, method))).await {
            true => Ok(()),
            false => Err(unanswered()),
        },
    }
}

/// The ids of the events of one stream passed on already (the last
/// [`MAX_REMEMBERED_EVENT_IDS`]).
#[derive(Default)]
struct PassedOn {
    order: VecDeque<String>,
    ids: HashSet<String>,
    /// Events passed on in all (with an id or not).
    count: u64,
}

impl PassedOn {
    /// True when an event with this id was passed on already; else it is counted as passed on.
    fn seen_before(&mut self, id: Option<&String>) -> bool {
        if let Some(id) = id {
            if self.ids.contains(id) {
                return true;
            }
            if self.order.len() == MAX_REMEMBERED_EVENT_IDS
                && let Some(old) = self.order.pop_front()
            {
                self.ids.remove(&old);
            }
            self.order.push_back(id.clone());
            self.ids.insert(id.clone());
        }
        self.count += 1;
        false
    }
}

/// The SSE response of the request `answers` (or the server's GET stream: `None`), resumed
/// with a GET and `Last-Event-ID` each time it ends or breaks (before the response) after an
/// event id came (see the module doc). Ends with the response (`Ok`), or when it ends and
/// cannot be resumed (`Err`: why).
async fn resumable(
    sh: &Rc<Shared>,
    resp: reqwest::Response,
    answers: Option<(&Id, &str)>,
) -> Result<(), RequestFailure> {
    let mut state = SseState::default();
    let mut passed = PassedOn::default();
    let mut fruitless = 0;
    let mut resp = resp;
    loop {
        let before = passed.count;
        let read = sse_events_tracked(resp, sh.max_response_bytes, &mut state, |event| {
            let again = passed.seen_before(event.id.as_ref());
            async move {
                if again {
                    tracing::debug!(target: "http", "an event passed on already came again on a resumed stream: dropped");
                    return false;
                }
                deliver(sh, event.data, answers).await
            }
        })
        .await;
        let mut lost = match read {
            Ok(true) => return Ok(()),
            Ok(false) if answers.is_none() => {
                RequestFailure::no_response("the stream ended".into())
            }
            Ok(false) => ended_before_the_response(),
            Err(Lost::Broken(f)) => f,
            Err(Lost::Failed(f)) => return Err(f),
        };
        let Some(last) = state.last_event_id.clone() else {
            // No event id: the server offers no resumption.
            return Err(lost);
        };
        fruitless = if passed.count > before {
            0
        } else {
            fruitless + 1
        };
        if fruitless >= MAX_RESUMPTIONS {
            lost.detail = format!(
                "{} (resumed {MAX_RESUMPTIONS} times in a row with Last-Event-ID without a new event)",
                lost.detail
            );
            return Err(lost);
        }
        let wait = state
            .retry_ms
            .map_or(RESUME_WAIT, Duration::from_millis)
            .min(MAX_RESUME_WAIT);
        let (id, method) = answers.unwrap_or((&Id::Int(0), "the server's GET stream"));
        tracing::debug!(target: "http", "id={id} method={method}: {} after event ids: resumed with a GET in {} ms", lost.detail, wait.as_millis());
        tokio::time::sleep(wait).await;
        resp = resume(sh, &last).await?;
    }
}

/// The GET that resumes a stream after its event `last` (2025-11-25: resumption is always by
/// GET): its SSE response. Errors: no response, a status that is not a success, a body that is
/// not an event stream.
async fn resume(sh: &Shared, last: &str) -> Result<reqwest::Response, RequestFailure> {
    let mut h = base(sh, "text/event-stream");
    h.remove(CONTENT_TYPE);
    let mut v = HeaderValue::from_str(last).map_err(|_| {
        RequestFailure::no_response("the stream's event id is not header text".into())
    })?;
    v.set_sensitive(true);
    h.insert(LAST_EVENT_ID_HEADER, v);
    let resp = send_signed(sh, |token, url| {
        sh.client()
            .get(url.clone())
            .headers(signed(&h, token))
            .build()
    })
    .await?;
    if !resp.status().is_success() {
        let mut f = error_status(resp, sh.max_response_bytes).await;
        f.detail = format!("resuming the response stream: {}", f.detail);
        return Err(f);
    }
    match response_body(resp, sh.max_response_bytes).await? {
        ResponseBody::Events(resp) => Ok(resp),
        ResponseBody::Json(_) => Err(RequestFailure::no_response(
            "resuming the response stream: the server answered with JSON, not an event stream"
                .into(),
        )),
    }
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
    let _ = sh.events.send(TransportEvent::Frame(Frame::Line(frame)));
    answered
}

/// Keeps the `Mcp-Session-Id` of an `initialize` response (visible ASCII only; sensitive).
fn keep_session(sh: &Shared, headers: &HeaderMap) {
    if let Some(v) = headers.get(SESSION_HEADER)
        && v.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b))
        && !v.is_empty()
    {
        let mut v = v.clone();
        v.set_sensitive(true);
        *sh.legacy.session.borrow_mut() = Some(v);
    }
}

/// The new session that replaces session number `carried` (which got a 404): the one under
/// way or done, or a new one started now on a task of its own (a cancelled message does not
/// stop it). Resolves true once it is in place; false: the session ended.
fn renewal(sh: &Rc<Shared>, carried: u64) -> Renewal {
    let mut slot = sh.legacy.renewal.borrow_mut();
    if let Some((replaced, r)) = slot.as_ref()
        && *replaced == carried
    {
        return r.clone();
    }
    if sh.legacy.generation.get() != carried {
        // An older session's 404, after its new session was in place.
        return futures_util::future::ready(true).boxed_local().shared();
    }
    let task = tokio::task::spawn_local(renew(sh.clone()).in_current_span());
    let r = async move { task.await.unwrap_or(false) }
        .boxed_local()
        .shared();
    *slot = Some((carried, r.clone()));
    r
}

/// Starts a new session ([`renewal`]; see the module doc); on failure the session ends.
async fn renew(sh: Rc<Shared>) -> bool {
    let ok = renew_steps(&sh).await;
    if let Err(why) = &ok {
        tracing::warn!(target: "http", "a new HTTP session could not be started: {why}");
        session_ended(&sh);
    }
    ok.is_ok()
}

/// Why a new session could not be started (the warning line of [`renew`]); a failed request
/// of the renewal names its method (`initialize: HTTP 500`), never a URL or a token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum RenewalError {
    #[error("the transport is closed")]
    Closed,
    /// The session that the last renewal started was forgotten at once: no loop of renewals.
    #[error("the server answered 404 right after a new session")]
    RenewedInVain,
    #[error("no initialize to send again")]
    NoInitialize,
    #[error("the new initialize result has no protocolVersion")]
    NoProtocolVersion,
    /// A request of the renewal got no response, or its response broke (the transport's
    /// detail).
    #[error("{method}: {detail}")]
    Unanswered { method: String, detail: String },
    /// A request of the renewal got a status other than a success (a 404 too).
    #[error("{method}: HTTP {status}")]
    Status { method: String, status: u16 },
    /// The response of a request of the renewal holds no response to it.
    #[error("{method}: no response")]
    NoResponse { method: String },
    /// A request of the renewal got a JSON-RPC error.
    #[error("{method}: an error response")]
    ErrorResponse { method: String },
}

async fn renew_steps(sh: &Rc<Shared>) -> Result<(), RenewalError> {
    if sh.closed.get() {
        return Err(RenewalError::Closed);
    }
    if sh.legacy.renewed_in_vain.get() {
        return Err(RenewalError::RenewedInVain);
    }
    let Some(params) = sh.legacy.replay.borrow().initialize.clone() else {
        return Err(RenewalError::NoInitialize);
    };
    tracing::warn!(target: "http", "the server forgot the HTTP session (HTTP 404): starting a new one");
    // The dead session is never sent again; the version comes from the new result.
    *sh.legacy.session.borrow_mut() = None;
    *sh.legacy.version.borrow_mut() = None;
    if let Some(h) = sh.legacy.stream.borrow_mut().take() {
        h.abort();
    }
    sh.legacy.stream_awaits_sign_in.set(false);
    let n = sh.legacy.generation.get() + 1;
    let id = format!("{RENEWAL_ID_PREFIX}{n}");
    let init = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params});
    let (head, result) = own_request(sh, &init).await?;
    keep_session(sh, &head);
    let version = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .and_then(|s| HeaderValue::from_str(s).ok())
        .ok_or(RenewalError::NoProtocolVersion)?;
    *sh.legacy.version.borrow_mut() = Some(version);
    sh.legacy.generation.set(n);
    sh.legacy.renewed_in_vain.set(true);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    drop(own_post(sh, &initialized).await?);
    open_stream(sh);
    let (subscriptions, log_level) = {
        let r = sh.legacy.replay.borrow();
        (r.subscriptions.clone(), r.log_level.clone())
    };
    for (k, uri) in subscriptions.iter().enumerate() {
        let sub = json!({"jsonrpc": "2.0", "id": format!("{id}-subscribe-{k}"),
            "method": "resources/subscribe", "params": {"uri": uri}});
        own_request(sh, &sub).await?;
    }
    if let Some(level) = log_level {
        let set = json!({"jsonrpc": "2.0", "id": format!("{id}-log-level"),
            "method": "logging/setLevel", "params": level});
        own_request(sh, &set).await?;
    }
    tracing::info!(target: "http", "a new HTTP session is in place");
    Ok(())
}

/// POSTs a message of the new session (the headers of the session now, no waiting for a
/// renewal: it is the renewal). Errors: no response, or not a success (a 404 too).
async fn own_post(sh: &Shared, msg: &Value) -> Result<reqwest::Response, RenewalError> {
    let body = Bytes::from(serde_json::to_vec(msg).unwrap_or_default());
    let h = base(sh, headers::ACCEPT_BOTH);
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let resp = send_signed(sh, |token, url| {
        sh.client()
            .post(url.clone())
            .headers(signed(&h, token))
            .body(body.clone())
            .build()
    })
    .await
    .map_err(|f| RenewalError::Unanswered {
        method: method.to_owned(),
        detail: f.detail,
    })?;
    if !resp.status().is_success() {
        return Err(RenewalError::Status {
            method: method.to_owned(),
            status: resp.status().as_u16(),
        });
    }
    Ok(resp)
}

/// POSTs a request of the new session and reads its result (JSON, or an SSE stream whose
/// other messages are dropped: they belong to no request of the editor). Errors: as
/// [`own_post`], an error response, or no response. The result and the response's headers.
async fn own_request(sh: &Shared, msg: &Value) -> Result<(HeaderMap, Value), RenewalError> {
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let want = msg.get("id").and_then(Id::from_value);
    let resp = own_post(sh, msg).await?;
    let head = resp.headers().clone();
    let found = RefCell::new(None);
    let read = |body: &[u8]| {
        let v = serde_json::from_slice::<Value>(body).ok()?;
        (v.get("id").and_then(Id::from_value) == want).then_some(v)
    };
    match response_body(resp, sh.max_response_bytes)
        .await
        .map_err(|l| RenewalError::Unanswered {
            method: method.to_owned(),
            detail: RequestFailure::from(l).detail,
        })? {
        ResponseBody::Json(body) => *found.borrow_mut() = read(&body),
        ResponseBody::Events(resp) => {
            let _ = sse_events(resp, sh.max_response_bytes, |event| {
                let v = read(&event.data);
                let done = v.is_some();
                if v.is_some() {
                    *found.borrow_mut() = v;
                }
                async move { done }
            })
            .await;
        }
    }
    let Some(mut v) = found.into_inner() else {
        return Err(RenewalError::NoResponse {
            method: method.to_owned(),
        });
    };
    let Some(result) = v.get_mut("result").map(Value::take) else {
        return Err(RenewalError::ErrorResponse {
            method: method.to_owned(),
        });
    };
    Ok((head, result))
}

/// Opens the server's GET stream (once, after `notifications/initialized`).
fn open_stream(sh: &Rc<Shared>) {
    if sh.closed.get() || sh.legacy.stream.borrow().is_some() {
        return;
    }
    let task = tokio::task::spawn_local(get_stream(sh.clone()).in_current_span());
    *sh.legacy.stream.borrow_mut() = Some(task.abort_handle());
}

async fn get_stream(sh: Rc<Shared>) {
    let mut h = base(&sh, "text/event-stream");
    h.remove(CONTENT_TYPE);
    let carried = h
        .contains_key(SESSION_HEADER)
        .then(|| sh.legacy.generation.get());
    let token = sh.tokens.access_token().await;
    let get = sh
        .client()
        .get(sh.url.clone())
        .headers(signed(&h, token.as_ref()));
    let resp = match get.send().await {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!(target: "http", "the server's stream did not open: {}", send_detail(&e, &sh.url));
            return;
        }
    };
    let status = resp.status().as_u16();
    if status == 404
        && let Some(carried) = carried
    {
        // The new session (on a task of its own) opens the stream again.
        *sh.legacy.stream.borrow_mut() = None;
        drop(renewal(&sh, carried));
        return;
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
    // Resumed with `Last-Event-ID` as a request's stream is, when it gave event ids.
    if let Err(f) = resumable(&sh, resp, None).await {
        tracing::debug!(target: "http", "the server's stream ended: {}", f.detail);
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
    let _ = sh.events.send(TransportEvent::Closed);
    let _ = sh
        .events
        .send(TransportEvent::Ended(EndCause::SessionEnded));
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
        .client()
        .delete(sh.url.clone())
        .headers(signed(&h, token.as_ref()))
        .send();
    match tokio::time::timeout(grace, delete).await {
        Ok(Ok(r)) => {
            tracing::debug!(target: "http", "the session was ended: HTTP {}", r.status().as_u16())
        }
        Ok(Err(e)) => {
            tracing::debug!(target: "http", "the session's DELETE failed: {}", send_detail(&e, &sh.url))
        }
        Err(_) => tracing::debug!(target: "http", "the session's DELETE timed out"),
    }
}
