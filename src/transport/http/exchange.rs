//! One message over HTTP: its POST (with the token of the provider, and once more after each
//! challenge it answers with a retry), then its response: `202` for a notification, a JSON
//! body, or an SSE stream of the request's notifications and its response; an error status
//! becomes a [`RequestFailure`] with the status and, when the body is a JSON-RPC error, that error.
//!
//! A response that was accepted (a 2xx) and whose body then broke or ended before the
//! response of its request is a broken response stream ([`Lost::Broken`]). 2026-07-28
//! changelog, major 9: "A broken response stream loses the in-flight request; clients MUST
//! re-issue it as a new request with a new request ID." The request is sent again with an id
//! of the transport's own ([`REISSUE_ID_PREFIX`]`N`; the correlation layer's ids are numbers
//! and the probe's `mcp-bridge-probe-N`), at most [`MAX_REISSUES`] times after a wait
//! ([`REISSUE_BACKOFF`], doubled each time); its response goes on with the id the
//! correlation layer gave, so nothing above the transport sees the new one. The body is the
//! same but for the id, so the progress token is the same and progress reaches the editor's
//! token. A cancel aborts the request's task, so a cancelled request is never sent again.

use bytes::Bytes;
use futures_util::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap};
use serde_json::Value;
use std::cell::Cell;
use std::rc::Rc;

use super::Shared;
use super::headers;
use super::limit::{self, BodyError};
use super::probe::{self, Outgoing};
use super::refetch;
use super::rewrite::rewrite;
use super::signed::post;
use crate::protocol::listen;
use crate::protocol::rules::era::ReadBody;
use crate::protocol::rules::item_filter;
use crate::protocol::rules::list_items::ItemKind;
use crate::protocol::rules::remote::HeaderParam;
use crate::protocol::wire::framing::Frame;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc::MAX_UPSTREAM_DEPTH;
use crate::protocol::wire::raw;
use crate::transport::upstream::{RequestFailure, TransportEvent};

/// The most times one request is sent again after its response stream broke.
pub const MAX_REISSUES: u32 = 3;
/// The wait before the first re-issue of a request; each later one waits twice as long.
pub const REISSUE_BACKOFF: std::time::Duration = std::time::Duration::from_millis(100);
/// The start of the id of a re-issued request; a number follows, counted per transport.
pub const REISSUE_ID_PREFIX: &str = "mcp-bridge-reissue-";

/// Why one attempt of a request got no response.
#[derive(Debug)]
pub(super) enum Lost {
    /// It failed (no response, an error status, a limit, content that is no answer): it is
    /// not sent again.
    Failed(RequestFailure),
    /// A broken response stream: the request was accepted (a 2xx came) and its body broke or
    /// ended before the response.
    Broken(RequestFailure),
}

impl From<RequestFailure> for Lost {
    fn from(f: RequestFailure) -> Lost {
        Lost::Failed(f)
    }
}

impl From<Lost> for RequestFailure {
    fn from(l: Lost) -> RequestFailure {
        match l {
            Lost::Failed(f) | Lost::Broken(f) => f,
        }
    }
}

/// The ids of one attempt of a request: the one the correlation layer gave (its response
/// goes on with it), and the one on the wire (another after a re-issue).
#[derive(Clone, Copy)]
struct Ids<'a> {
    given: &'a Id,
    wire: &'a Id,
}

/// One message to POST, read once when it was sent ([`Post::read`]).
pub(super) struct Post {
    /// The message's text: the body.
    body: Bytes,
    /// Its id (`None`: a notification).
    pub(super) id: Option<Id>,
    /// Its method (empty when it has none).
    method: Box<str>,
    /// The headers of its first POST.
    headers: HeaderMap,
    /// The `x-mcp-header` annotations of its tool, when it is a `tools/call` of a tool that
    /// has some (the `Mcp-Param-*` headers it carries).
    tool_params: Option<Vec<HeaderParam>>,
    /// A `tools/call` of a tool dropped from `tools/list` ([`remote::check_tools_list`]): the
    /// error it gets instead of a POST.
    refused: Option<Value>,
}

impl Post {
    /// Reads the message `body` (one JSON-RPC message, no line end) for its POST. `None`
    /// when it is not a JSON object.
    pub(super) fn read(sh: &Shared, body: Bytes) -> Option<Post> {
        let msg = Outgoing::read(&body)?;
        let tool_params = tool_params(sh, &msg);
        let refused = refusal(sh, &msg);
        let headers = headers::for_message(&msg, tool_params.as_deref(), &sh.headers);
        let (id, method) = (msg.id.clone(), msg.method.as_ref().into());
        Some(Post {
            id,
            method,
            headers,
            tool_params,
            refused,
            body,
        })
    }
}

/// The error of a `tools/call` of a tool the bridge dropped from `tools/list` for its
/// annotations: what a server without the tool answers (`item_filter::unknown`), so that an
/// editor with an older list, or one that calls a name it was never shown, cannot reach a
/// tool the 2026-07-28 rules say a client MUST drop (transports/http, `x-mcp-header`).
fn refusal(sh: &Shared, msg: &Outgoing<'_>) -> Option<Value> {
    if msg.method != "tools/call" {
        return None;
    }
    let gone = sh.dropped_tools.borrow();
    if gone.is_empty() {
        return None;
    }
    let name = msg.name.as_deref()?;
    gone.contains(name)
        .then(|| item_filter::unknown(ItemKind::Tool, name).to_value())
}

/// The known `x-mcp-header` annotations of the tool a `tools/call` names.
fn tool_params(sh: &Shared, msg: &Outgoing<'_>) -> Option<Vec<HeaderParam>> {
    if msg.method != "tools/call" {
        return None;
    }
    let known = sh.tool_params.borrow();
    // Most servers annotate no tool: no lookup at all then.
    if known.is_empty() {
        return None;
    }
    known.get(msg.name.as_deref()?).cloned()
}

/// The headers of `body` once more (a POST sent again after a sign-in challenge), with the
/// annotations `tool_params`.
fn headers_again(sh: &Shared, body: &[u8], tool_params: Option<&[HeaderParam]>) -> HeaderMap {
    Outgoing::read(body)
        .map(|m| headers::for_message(&m, tool_params, &sh.headers))
        .unwrap_or_default()
}

/// Sends the message and reports its response; a request that fails gets [`TransportEvent::Failed`].
pub(super) async fn run(sh: Rc<Shared>, mut post: Post) {
    let id = post.id.clone();
    let outcome = match post.refused.take() {
        Some(error) => Err(RequestFailure {
            status: None,
            error: Some(error),
            detail: "the tool was dropped from tools/list (2026-07-28 x-mcp-header rules)".into(),
        }),
        None => exchange(&sh, post).await,
    };
    if let Some(id) = &id {
        sh.in_flight.borrow_mut().remove(id);
    }
    match (outcome, id) {
        (Err(failure), Some(id)) => {
            let _ = sh.events.send(TransportEvent::Failed { id, failure });
        }
        (Err(failure), None) => {
            tracing::debug!(target: "http", "a notification to the upstream failed: {}", failure.detail);
        }
        (Ok(()), _) => {}
    }
}

async fn exchange(sh: &Rc<Shared>, p: Post) -> Result<(), RequestFailure> {
    let Post {
        body,
        id,
        method,
        headers,
        tool_params,
        refused: _,
    } = p;
    let tp = tool_params.as_deref();
    let Some(given) = id else {
        return Ok(attempt(sh, headers, &body, None, &method, tp).await?);
    };
    let ids = Ids {
        given: &given,
        wire: &given,
    };
    let mut outcome = attempt(sh, headers, &body, Some(ids), &method, tp).await;
    let mut wait = REISSUE_BACKOFF;
    for n in 1..=MAX_REISSUES {
        let failure = match outcome {
            Ok(()) => return Ok(()),
            Err(Lost::Failed(f)) => return Err(f),
            // A listen stream that breaks is opened again by the Listener, with its own
            // waits and a new listen id.
            Err(Lost::Broken(f)) if &*method == listen::LISTEN_METHOD => return Err(f),
            Err(Lost::Broken(f)) => f,
        };
        let wire = Id::Str(format!("{REISSUE_ID_PREFIX}{}", sh.reissued.get() + 1));
        sh.reissued.set(sh.reissued.get() + 1);
        let Some(again) = probe::with_id(&body, &wire) else {
            return Err(failure);
        };
        tracing::debug!(target: "http", "id={given} method={method}: {} after the request was accepted: sent again as id={wire} in {} ms ({n} of {MAX_REISSUES})",
            failure.detail, wait.as_millis());
        tokio::time::sleep(wait).await;
        wait *= 2;
        let ids = Ids {
            given: &given,
            wire: &wire,
        };
        let h = headers_again(sh, &again, tp);
        outcome = attempt(sh, h, &again, Some(ids), &method, tp).await;
    }
    match outcome {
        Ok(()) => Ok(()),
        Err(Lost::Failed(f)) => Err(f),
        Err(Lost::Broken(mut f)) => {
            f.detail = format!(
                "{} (sent {MAX_REISSUES} times more with a new id, each time in vain)",
                f.detail
            );
            Err(f)
        }
    }
}

/// One attempt of a request (or the one POST of a notification, `ids` `None`): its POST with
/// the headers `headers`, the re-fetch of a -32020 of a `tools/call`, its response.
async fn attempt(
    sh: &Rc<Shared>,
    headers: HeaderMap,
    body: &Bytes,
    ids: Option<Ids<'_>>,
    method: &str,
    tool_params: Option<&[HeaderParam]>,
) -> Result<(), Lost> {
    let resp = post(sh, headers, body, || headers_again(sh, body, tool_params)).await?;
    if method == "tools/call" && resp.status() == StatusCode::BAD_REQUEST {
        // A -32020 may come from annotations older than the server's: one re-fetch of
        // tools/list, and one retry when they changed (`refetch.rs`).
        let failure = error_status(resp, sh.max_response_bytes).await;
        let Ok(msg) = serde_json::from_slice::<Value>(body) else {
            return Err(failure.into());
        };
        let sent = tool_params.unwrap_or(&[]);
        let Some(fresh) = refetch::fresh_params(sh, &msg, sent, &failure).await else {
            return Err(failure.into());
        };
        let again = || headers_again(sh, body, Some(&fresh));
        let resp = post(sh, again(), body, again).await?;
        return respond(sh, resp, ids, method).await;
    }
    respond(sh, resp, ids, method).await
}

async fn respond(
    sh: &Rc<Shared>,
    resp: reqwest::Response,
    ids: Option<Ids<'_>>,
    method: &str,
) -> Result<(), Lost> {
    let status = resp.status();
    if !status.is_success() {
        return Err(error_status(resp, sh.max_response_bytes).await.into());
    }
    let Some(ids) = ids else {
        // A notification: 202 (or any success) is all there is to it.
        return Ok(());
    };
    match response_body(resp, sh.max_response_bytes).await? {
        ResponseBody::Events(resp) => sse(sh, resp, ids, method).await,
        ResponseBody::Json(body) => match deliver(sh, ids, method, body).await {
            true => Ok(()),
            false => Err(unanswered().into()),
        },
    }
}

/// The body of a success response to a request, by its `Content-Type` (2026-07-28 and
/// 2025-11-25 basic/transports: a JSON body or an SSE stream).
pub(super) enum ResponseBody {
    /// `text/event-stream`: the response, still to be read as a stream.
    Events(reqwest::Response),
    /// `application/json`: the whole body.
    Json(Bytes),
}

/// Tells a success response to a request by its `Content-Type`, and reads a JSON body
/// whole (at most `max_bytes`). Errors: any other content type, a JSON body over the limit,
/// or cut off ([`Lost::Broken`]).
pub(super) async fn response_body(
    resp: reqwest::Response,
    max_bytes: usize,
) -> Result<ResponseBody, Lost> {
    let status = resp.status();
    let content_type = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if content_type.starts_with("text/event-stream") {
        return Ok(ResponseBody::Events(resp));
    }
    if !content_type.starts_with("application/json") {
        return Err(RequestFailure::no_response(format!(
            "the upstream answered HTTP {} with neither JSON nor an event stream",
            status.as_u16()
        ))
        .into());
    }
    match limit::read_body(resp, max_bytes).await {
        Ok(body) => Ok(ResponseBody::Json(body)),
        Err(e @ BodyError::Broken) => Err(Lost::Broken(RequestFailure::no_response(e.to_string()))),
        Err(e @ BodyError::Over(_)) => {
            Err(Lost::Failed(RequestFailure::no_response(e.to_string())))
        }
    }
}

/// The failure of a JSON response that holds no response to its request.
pub(super) fn unanswered() -> RequestFailure {
    RequestFailure::no_response("the upstream's JSON response did not answer the request".into())
}

/// An error status: its JSON-RPC error body passes through; an empty or non-JSON body (or
/// one over the limit) leaves only the status.
pub(super) async fn error_status(resp: reqwest::Response, max_bytes: usize) -> RequestFailure {
    let status = resp.status().as_u16();
    let error = match limit::read_body(resp, max_bytes)
        .await
        .map(|b| ReadBody::read(&b))
    {
        Ok(ReadBody::Json { value, error: true }) => Some(value),
        _ => None,
    };
    RequestFailure {
        status: Some(status),
        error,
        detail: format!("HTTP {status}"),
    }
}

/// The events of an SSE response, until the response of the request.
async fn sse(
    sh: &Rc<Shared>,
    resp: reqwest::Response,
    ids: Ids<'_>,
    method: &str,
) -> Result<(), Lost> {
    match sse_events(resp, sh.max_response_bytes, |event| {
        deliver(sh, ids, method, event.data)
    })
    .await?
    {
        true => Ok(()),
        false => Err(Lost::Broken(ended_before_the_response())),
    }
}

/// One event of an SSE body that carries data.
pub(super) struct SseEvent {
    /// Its `data` (lines joined with LF).
    pub(super) data: Bytes,
    /// Its `id` field, when it has one.
    pub(super) id: Option<String>,
}

/// What an SSE body brought besides the events it handed on: the last event id and
/// reconnection time it set (SSE, WHATWG HTML §9.2.6), for a 2025-11-25 resumption.
#[derive(Debug, Default)]
pub(super) struct SseState {
    /// The last `id` field seen, on an event with data or not (a priming event).
    pub(super) last_event_id: Option<String>,
    /// The last `retry` field, in milliseconds.
    pub(super) retry_ms: Option<u64>,
}

/// Hands each event of the SSE body of `resp` that carries data (at most `max_bytes` in
/// all) to `deliver`, until `deliver` returns true (the response came: `Ok(true)`) or the
/// stream ends (`Ok(false)`). Errors: the body over the limit ([`Lost::Failed`]), or broken
/// ([`Lost::Broken`]).
pub(super) async fn sse_events<F, Fut>(
    resp: reqwest::Response,
    max_bytes: usize,
    deliver: F,
) -> Result<bool, Lost>
where
    F: FnMut(SseEvent) -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    sse_events_tracked(resp, max_bytes, &mut SseState::default(), deliver).await
}

/// [`sse_events`], keeping the event id and reconnection time of the stream in `state`.
pub(super) async fn sse_events_tracked<F, Fut>(
    resp: reqwest::Response,
    max_bytes: usize,
    state: &mut SseState,
    mut deliver: F,
) -> Result<bool, Lost>
where
    F: FnMut(SseEvent) -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let over = Rc::new(Cell::new(false));
    let bytes = limit::sse_bytes(resp, max_bytes, over.clone());
    let mut events = std::pin::pin!(sse_stream::SseByteStream::new(bytes));
    while let Some(item) = events.next().await {
        match item {
            Ok(event) => {
                if let Some(ms) = event.retry {
                    state.retry_ms = Some(ms);
                }
                if let Some(id) = &event.id {
                    state.last_event_id = Some(id.clone());
                }
                let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
                    continue;
                };
                let event = SseEvent {
                    data: Bytes::from(data),
                    id: event.id,
                };
                if deliver(event).await {
                    return Ok(true);
                }
            }
            Err(_) if over.get() => {
                return Err(Lost::Failed(RequestFailure::no_response(
                    BodyError::Over(max_bytes).to_string(),
                )));
            }
            Err(_) => {
                return Err(Lost::Broken(RequestFailure::no_response(
                    BodyError::Broken.to_string(),
                )));
            }
        }
    }
    Ok(false)
}

/// The failure of a response stream that ended before the response of its request.
pub(super) fn ended_before_the_response() -> RequestFailure {
    RequestFailure::no_response("the response stream ended before the response".into())
}

/// Methods whose results a remote server's rules change (icons, `x-mcp-header`).
const REWRITTEN: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
];

/// Hands one message of the response to the correlation layer (after the editor's queue has
/// room). True when it was the response of the request (its id on the wire: `ids.wire`); that
/// response goes on with the id the correlation layer gave (`ids.given`).
///
/// The response of a request whose result no rule rewrites is read here once, as the
/// correlation layer reads a success frame ([`raw::response`]), and handed on read
/// ([`TransportEvent::Response`]); any other message goes on as its frame.
async fn deliver(sh: &Rc<Shared>, ids: Ids<'_>, method: &str, body: Bytes) -> bool {
    if body.trim_ascii().is_empty() {
        // Nothing to hand over (a frame is never empty); the request fails if nothing else
        // answers it.
        return false;
    }
    let id = ids.wire;
    let one_line = memchr::memchr2(b'\n', b'\r', &body).is_none();
    // A re-issued request's messages are read into a value (its response gets its id back).
    let reissued = ids.wire != ids.given;
    if one_line && !REWRITTEN.contains(&method) && !reissued {
        if let Some((rid, result)) = raw::response(body.clone(), MAX_UPSTREAM_DEPTH)
            && rid == *id
        {
            hand_on(sh, TransportEvent::Response { id: rid, result }).await;
            return true;
        }
        // Not the success response of `id`: the frame goes on as it came; does it answer?
        let answers = probe::members(&body, &["id", "result", "error"]).is_some_and(|[i, r, e]| {
            probe::id(i).as_ref() == Some(id) && (r.is_some() || e.is_some())
        });
        hand_on(sh, TransportEvent::Frame(Frame::Line(body))).await;
        return answers;
    }
    let parsed = serde_json::from_slice::<Value>(&body).ok();
    let answers = parsed.as_ref().is_some_and(|v| {
        v.get("id").and_then(Id::from_value).as_ref() == Some(id)
            && (v.get("result").is_some() || v.get("error").is_some())
    });
    let mut frame = body;
    if let Some(mut v) = parsed {
        let rewritten = answers
            && REWRITTEN.contains(&method)
            && v.get_mut("result").is_some_and(|r| {
                rewrite(sh, method, r);
                true
            });
        let given_back = answers && reissued;
        if given_back && let Some(o) = v.as_object_mut() {
            o.insert("id".into(), ids.given.to_value());
        }
        // A frame is one line: a pretty-printed body is written again on one.
        if rewritten || given_back || !one_line {
            frame = Bytes::from(serde_json::to_vec(&v).unwrap_or_default());
        }
    }
    hand_on(sh, TransportEvent::Frame(Frame::Line(frame))).await;
    answers
}

/// Sends `event` once the editor's queue has room (back-pressure).
async fn hand_on(sh: &Shared, event: TransportEvent) {
    if sh.pace.is_full() {
        sh.pace.room().await;
    }
    let _ = sh.events.send(event);
}
