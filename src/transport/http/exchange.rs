//! One message over HTTP: its POST (with the token of the provider, and once more after each
//! challenge it answers with a retry), then its response: `202` for a notification, a JSON
//! body, or an SSE stream of the request's notifications and its response; an error status
//! becomes a [`Failure`] with the status and, when the body is a JSON-RPC error, that error.

use bytes::Bytes;
use futures_util::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap, WWW_AUTHENTICATE};
use serde_json::Value;
use std::cell::Cell;
use std::error::Error as _;
use std::rc::Rc;

use super::Shared;
use super::headers;
use super::limit::{self, BodyError};
use super::refetch;
use crate::protocol::era::ReadBody;
use crate::protocol::framing::Frame;
use crate::protocol::jsonrpc::Id;
use crate::protocol::remote;
use crate::transport::token::{
    AccessToken, Challenge, ChallengeOutcome, MAX_CHALLENGES_PER_REQUEST,
};
use crate::transport::upstream::{Event, Failure};

/// Sends `msg` and reports its response; a request that fails gets [`Event::Failed`].
pub(super) async fn run(sh: Rc<Shared>, msg: Value) {
    let id = msg.get("id").and_then(Id::from_value);
    let outcome = exchange(&sh, &msg, id.as_ref()).await;
    if let Some(id) = &id {
        sh.in_flight.borrow_mut().remove(id);
    }
    match (outcome, id) {
        (Err(failure), Some(id)) => {
            let _ = sh.events.send(Event::Failed { id, failure });
        }
        (Err(failure), None) => {
            tracing::debug!(target: "http", "a notification to the upstream failed: {}", failure.detail);
        }
        (Ok(()), _) => {}
    }
}

/// Why a request got no response, for `data.detail`: the kind of failure and the innermost
/// cause (an OS error), never the URL.
pub(super) fn send_detail(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "the connection to the upstream timed out"
    } else if e.is_connect() {
        "the connection to the upstream failed"
    } else {
        "the request to the upstream failed"
    };
    let mut cause: Option<&dyn std::error::Error> = e.source();
    let mut last = None;
    while let Some(c) = cause {
        last = Some(c.to_string());
        cause = c.source();
    }
    match last {
        Some(c) => format!("{kind}: {c}"),
        None => kind.to_string(),
    }
}

async fn exchange(sh: &Rc<Shared>, msg: &Value, id: Option<&Id>) -> Result<(), Failure> {
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let body = Bytes::from(serde_json::to_vec(msg).unwrap_or_default());
    let tool_params = (method == "tools/call")
        .then(|| {
            let name = msg.get("params")?.get("name")?.as_str()?;
            sh.tool_params.borrow().get(name).cloned()
        })
        .flatten();
    let base = headers::for_message(msg, tool_params.as_deref(), &sh.headers);
    let resp = post(sh, &base, &body).await?;
    if method == "tools/call" && resp.status() == StatusCode::BAD_REQUEST {
        // A -32020 may come from annotations older than the server's: one re-fetch of
        // tools/list, and one retry when they changed (`refetch.rs`).
        let failure = error_status(resp, sh.max_response_bytes).await;
        let sent = tool_params.as_deref().unwrap_or(&[]);
        let Some(fresh) = refetch::fresh_params(sh, msg, sent, &failure).await else {
            return Err(failure);
        };
        let base = headers::for_message(msg, Some(&fresh), &sh.headers);
        let resp = post(sh, &base, &body).await?;
        return respond(sh, resp, id, method).await;
    }
    respond(sh, resp, id, method).await
}

/// POSTs `body` with the headers `base` and the provider's token ([`send_signed`]).
pub(super) async fn post(
    sh: &Shared,
    base: &HeaderMap,
    body: &Bytes,
) -> Result<reqwest::Response, Failure> {
    send_signed(sh, |token| {
        let mut h = base.clone();
        if let Some((n, v)) = token.and_then(|t| headers::bearer(t.secret())) {
            h.insert(n, v);
        }
        sh.client.post(sh.url.clone()).headers(h).body(body.clone())
    })
    .await
}

/// Sends the request that `request` builds with the provider's token, and once more after
/// each 401/403 challenge the provider answers with [`ChallengeOutcome::Retry`] (at most
/// [`MAX_CHALLENGES_PER_REQUEST`]; each retry reports [`Event::SignedIn`]). Errors: no
/// response (the connection's cause), or the status with the provider's cause
/// (`sign_in_unavailable: ...`, `sign_in_declined: ...`). Any other response is returned,
/// a 401/403 too once the challenges are spent.
pub(super) async fn send_signed(
    sh: &Shared,
    request: impl Fn(Option<&AccessToken>) -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, Failure> {
    let mut challenges = 0;
    loop {
        let token = sh.tokens.access_token().await;
        let resp = request(token.as_ref())
            .send()
            .await
            .map_err(|e| Failure::no_response(send_detail(&e)))?;
        let status = resp.status().as_u16();
        if !(matches!(status, 401 | 403) && challenges < MAX_CHALLENGES_PER_REQUEST) {
            return Ok(resp);
        }
        challenges += 1;
        let www_authenticate = resp
            .headers()
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect();
        drop(resp);
        let outcome = sh
            .tokens
            .challenge(Challenge {
                status,
                www_authenticate,
                rejected: token,
            })
            .await;
        match outcome {
            ChallengeOutcome::Retry => {
                let _ = sh.events.send(Event::SignedIn);
            }
            ChallengeOutcome::Fail(cause) => return Err(Failure::status(status, cause)),
        }
    }
}

async fn respond(
    sh: &Rc<Shared>,
    resp: reqwest::Response,
    id: Option<&Id>,
    method: &str,
) -> Result<(), Failure> {
    let status = resp.status();
    if !status.is_success() {
        return Err(error_status(resp, sh.max_response_bytes).await);
    }
    let Some(id) = id else {
        // A notification: 202 (or any success) is all there is to it.
        return Ok(());
    };
    match response_body(resp, sh.max_response_bytes).await? {
        ResponseBody::Events(resp) => sse(sh, resp, id, method).await,
        ResponseBody::Json(body) => match deliver(sh, id, method, body).await {
            true => Ok(()),
            false => Err(unanswered()),
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
/// whole (at most `max_bytes`). Errors: any other content type, a JSON body over the limit
/// or cut off.
pub(super) async fn response_body(
    resp: reqwest::Response,
    max_bytes: usize,
) -> Result<ResponseBody, Failure> {
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
        return Err(Failure::no_response(format!(
            "the upstream answered HTTP {} with neither JSON nor an event stream",
            status.as_u16()
        )));
    }
    let body = limit::read_body(resp, max_bytes)
        .await
        .map_err(|e| Failure::no_response(e.to_string()))?;
    Ok(ResponseBody::Json(body))
}

/// The failure of a JSON response that holds no response to its request.
pub(super) fn unanswered() -> Failure {
    Failure::no_response("the upstream's JSON response did not answer the request".into())
}

/// An error status: its JSON-RPC error body passes through; an empty or non-JSON body (or
/// one over the limit) leaves only the status.
pub(super) async fn error_status(resp: reqwest::Response, max_bytes: usize) -> Failure {
    let status = resp.status().as_u16();
    let error = match limit::read_body(resp, max_bytes)
        .await
        .map(|b| ReadBody::read(&b))
    {
        Ok(ReadBody::Json { value, error: true }) => Some(value),
        _ => None,
    };
    Failure {
        status: Some(status),
        error,
        detail: format!("HTTP {status}"),
    }
}

/// The events of an SSE response, until the response of request `id`.
async fn sse(
    sh: &Rc<Shared>,
    resp: reqwest::Response,
    id: &Id,
    method: &str,
) -> Result<(), Failure> {
    match sse_events(resp, sh.max_response_bytes, |data| {
        deliver(sh, id, method, data)
    })
    .await?
    {
        true => Ok(()),
        false => Err(ended_before_the_response()),
    }
}

/// Hands the data of each event of the SSE body of `resp` (at most `max_bytes` in all) to
/// `deliver`, skipping events without data, until `deliver` returns true (the response came:
/// `Ok(true)`) or the stream ends (`Ok(false)`). Errors: the body over the limit, or broken.
pub(super) async fn sse_events<F, Fut>(
    resp: reqwest::Response,
    max_bytes: usize,
    mut deliver: F,
) -> Result<bool, Failure>
where
    F: FnMut(Bytes) -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let over = Rc::new(Cell::new(false));
    let bytes = limit::sse_bytes(resp, max_bytes, over.clone());
    let mut events = std::pin::pin!(sse_stream::SseByteStream::new(bytes));
    while let Some(item) = events.next().await {
        match item {
            Ok(event) => {
                let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
                    continue;
                };
                if deliver(Bytes::from(data)).await {
                    return Ok(true);
                }
            }
            Err(_) if over.get() => {
                return Err(Failure::no_response(BodyError::Over(max_bytes).to_string()));
            }
            Err(_) => return Err(Failure::no_response(BodyError::Broken.to_string())),
        }
    }
    Ok(false)
}

/// The failure of a response stream that ended before the response of its request.
pub(super) fn ended_before_the_response() -> Failure {
    Failure::no_response("the response stream ended before the response".into())
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
/// room). True when it was the response of request `id`.
async fn deliver(sh: &Rc<Shared>, id: &Id, method: &str, body: Bytes) -> bool {
    if body.trim_ascii().is_empty() {
        // Nothing to hand over (a frame is never empty); the request fails if nothing else
        // answers it.
        return false;
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
        // A frame is one line: a pretty-printed body is written again on one.
        if rewritten || memchr::memchr2(b'\n', b'\r', &frame).is_some() {
            frame = Bytes::from(serde_json::to_vec(&v).unwrap_or_default());
        }
    }
    sh.pace.room().await;
    let _ = sh.events.send(Event::Frame(Frame::Line(frame)));
    answers
}

/// The rules of a remote server on a result: tools with broken `x-mcp-header` annotations
/// dropped (and the others' annotations kept for their calls), only `data:` icons.
pub(super) fn rewrite(sh: &Shared, method: &str, result: &mut Value) {
    if method == "tools/list" {
        let (params, warnings) = remote::check_tools_list(result);
        for w in warnings {
            tracing::warn!(target: "http", "{w}");
        }
        let mut known = sh.tool_params.borrow_mut();
        if let Some(tools) = result.get("tools").and_then(Value::as_array) {
            for name in tools.iter().filter_map(|t| t.get("name")?.as_str()) {
                known.remove(name);
            }
        }
        known.extend(params);
    }
    let n = remote::filter_icons(method, result);
    if n > 0 {
        tracing::debug!(target: "http", "{method}: removed the icons of {n} items that are not data: URLs (a URL upstream)");
    }
}
