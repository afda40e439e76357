//! The SSE answers of the server (WHATWG HTML, server-sent events; 2026-07-28
//! basic/transports/http): one message as an event, the response headers of a stream, a
//! stream whose events are all known, a request's stream of lines up to its response with
//! keep-alive comments, and a JSON answer turned into a stream for a client that takes only
//! SSE.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::Response;
use hyper::StatusCode;
use hyper::body::Frame;
use hyper::header::{self, HeaderValue};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::{Body, accept};

/// A 200 JSON answer as an SSE stream of its one message, the same event a streamed answer
/// ends with; other answers as they are (an error status is the answer's meaning, and RFC
/// 9110 §12.5.1 lets a server disregard `Accept` for it).
pub(super) async fn as_sse(response: Response<Body>) -> Response<Body> {
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes() == accept::JSON.as_bytes());
    if response.status() != StatusCode::OK || !is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // A JSON answer's body is whole (`Full`): this collects at once.
    let Ok(collected) = body.collect().await;
    let text = String::from_utf8_lossy(&collected.to_bytes()).into_owned();
    let streamed = sse_done(vec![text]);
    parts.headers.remove(header::CONTENT_LENGTH);
    for (name, value) in streamed.headers() {
        parts.headers.insert(name, value.clone());
    }
    Response::from_parts(parts, streamed.into_body())
}

pub(super) fn drain(lines: &mut mpsc::Receiver<String>) -> Vec<String> {
    let mut queued = Vec::new();
    while let Ok(line) = lines.try_recv() {
        queued.push(line);
    }
    queued
}

/// One SSE event of one message. A line break inside the text (JSON whitespace) starts
/// another `data:` line, which the client joins back (WHATWG HTML, server-sent events).
pub(super) fn sse_event(message: impl AsRef<[u8]>) -> Bytes {
    let message = message.as_ref();
    let mut event = Vec::with_capacity(message.len() + 24);
    event.extend_from_slice(b"event: message\n");
    for line in message
        .split(|b| matches!(b, b'\r' | b'\n'))
        .filter(|l| !l.is_empty())
    {
        event.extend_from_slice(b"data: ");
        event.extend_from_slice(line);
        event.push(b'\n');
    }
    event.push(b'\n');
    Bytes::from(event)
}

pub(super) const KEEP_ALIVE_COMMENT: &str = ": keep-alive\n\n";

pub(super) fn sse_headers(body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // The spec: SSE responses should tell proxies not to buffer them.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// An SSE answer whose events are all known: the request has ended.
pub(super) fn sse_done(events: Vec<String>) -> Response<Body> {
    let frames = events
        .iter()
        .map(|e| Ok::<_, Infallible>(Frame::data(sse_event(e))));
    let stream = futures_util::stream::iter(frames.collect::<Vec<_>>());
    sse_headers(StreamBody::new(stream).boxed_unsync())
}

/// The ticks of an SSE stream's keep-alive comments: the first one period after now, late
/// ones not bunched up.
pub(super) fn keep_alive_ticks(every: Duration) -> tokio::time::Interval {
    let mut interval = tokio::time::interval(every);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    interval.reset();
    interval
}

/// What an SSE answer's stream holds while its request runs.
pub(super) struct Streaming {
    pending: std::collections::VecDeque<String>,
    lines: mpsc::Receiver<String>,
    response: oneshot::Receiver<Option<Value>>,
    /// Cancels the request when the stream is dropped before the response.
    guard: Option<DropGuard>,
    keep_alive: tokio::time::Interval,
    done: bool,
    /// [`Shared::cutting`]: the stream ends, and its request is cancelled.
    cut: CancellationToken,
}

/// An SSE answer: `first` and the lines that follow, then the response, with keep-alive
/// comments in between. The client closing it drops the stream, and with it the guard.
pub(super) fn sse(
    first: Vec<String>,
    lines: mpsc::Receiver<String>,
    response: oneshot::Receiver<Option<Value>>,
    guard: DropGuard,
    keep_alive: Duration,
    cut: CancellationToken,
) -> Response<Body> {
    let interval = keep_alive_ticks(keep_alive);
    let state = Streaming {
        pending: first.into(),
        lines,
        response,
        guard: Some(guard),
        keep_alive: interval,
        done: false,
        cut,
    };
    let stream = futures_util::stream::unfold(state, |mut state| async move {
        if let Some(line) = state.pending.pop_front() {
            return Some((Ok(Frame::data(sse_event(&line))), state));
        }
        if state.done {
            return None;
        }
        let frame = tokio::select! {
            biased;
            line = state.lines.recv() => match line {
                Some(line) => sse_event(&line),
                // Every sender is gone: the response is in (or the request ended without one).
                None => return finish(state),
            },
            answer = &mut state.response => {
                state.pending.extend(drain(&mut state.lines));
                state.pending.extend(answer.ok().flatten().map(|a| a.to_string()));
                state.done = true;
                if let Some(guard) = state.guard.take() {
                    guard.disarm();
                }
                match state.pending.pop_front() {
                    Some(line) => sse_event(&line),
                    None => return None,
                }
            }
            _ = state.keep_alive.tick() => Bytes::from_static(KEEP_ALIVE_COMMENT.as_bytes()),
            () = state.cut.cancelled() => return None,
        };
        Some((Ok(Frame::data(frame)), state))
    });
    sse_headers(StreamBody::new(stream).boxed_unsync())
}

/// The end of a stream whose line channel closed: the response, if one was sent.
pub(super) fn finish(
    mut state: Streaming,
) -> Option<(Result<Frame<Bytes>, Infallible>, Streaming)> {
    state.done = true;
    if let Some(guard) = state.guard.take() {
        guard.disarm();
    }
    let answer = state.response.try_recv().ok().flatten()?;
    Some((Ok(Frame::data(sse_event(answer.to_string()))), state))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sse_event_splits_line_breaks_into_data_lines() {
        assert_eq!(
            sse_event(r#"{"a":1}"#),
            Bytes::from("event: message\ndata: {\"a\":1}\n\n")
        );
        assert_eq!(
            sse_event("{\n\"a\":1\r\n}"),
            Bytes::from("event: message\ndata: {\ndata: \"a\":1\ndata: }\n\n")
        );
    }
}
