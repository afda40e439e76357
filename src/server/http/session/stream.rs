//! A session's SSE stream: a POST's (its first message, then the request's messages up to
//! its response) or the GET stream (the session's messages while it is the live one), with
//! keep-alive comments in between.

use super::routes::{Out, StreamGuard};
use crate::server::http::{Body, KEEP_ALIVE_COMMENT, keep_alive_ticks, sse_event, sse_headers};
use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::Response;
use hyper::body::Frame;
use std::convert::Infallible;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Where a session's SSE stream takes its messages.
pub(super) enum Source {
    /// A POST's stream: its first message, then its channel up to the response.
    Post(Option<Bytes>, mpsc::Receiver<Out>),
    /// The GET stream: the session's messages while it is the live one (its guard's serial);
    /// the token ends it when another takes over or the session ends.
    Get(CancellationToken),
}

/// What a session's SSE stream holds.
struct SessionStream {
    source: Source,
    keep_alive: tokio::time::Interval,
    /// The response went out: the stream ends.
    done: bool,
    guard: StreamGuard,
}

/// An SSE answer of `source`, with keep-alive comments in between.
pub(super) fn stream_of(
    source: Source,
    guard: StreamGuard,
    keep_alive: Duration,
) -> Response<Body> {
    let state = SessionStream {
        source,
        keep_alive: keep_alive_ticks(keep_alive),
        done: false,
        guard,
    };
    let stream = futures_util::stream::unfold(state, |mut state| async move {
        if state.done {
            return None;
        }
        let frame = match &mut state.source {
            Source::Post(first, lines) => match first.take() {
                Some(line) => sse_event(&line),
                None => tokio::select! {
                    biased;
                    out = lines.recv() => match out? {
                        Out::Message(line) => sse_event(&line),
                        Out::Response(line) => {
                            state.done = true;
                            sse_event(&line)
                        }
                    },
                    _ = state.keep_alive.tick() => Bytes::from_static(KEEP_ALIVE_COMMENT.as_bytes()),
                },
            },
            Source::Get(ended) => {
                let (session, serial) = (&state.guard.session, state.guard.serial);
                tokio::select! {
                    biased;
                    () = ended.cancelled() => return None,
                    line = std::future::poll_fn(|cx| session.poll_get(serial, cx)) => sse_event(&line?),
                    _ = state.keep_alive.tick() => Bytes::from_static(KEEP_ALIVE_COMMENT.as_bytes()),
                }
            }
        };
        Some((Ok::<_, Infallible>(Frame::data(frame)), state))
    });
    sse_headers(StreamBody::new(stream).boxed_unsync())
}
