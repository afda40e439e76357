//! A session's SSE stream: the messages that came first, then the stream's own up to its
//! response (a POST's) or the end of the session, with keep-alive comments in between.

use super::*;

/// What a session's SSE stream holds.
struct SessionStream {
    pending: VecDeque<Bytes>,
    lines: mpsc::Receiver<Out>,
    keep_alive: tokio::time::Interval,
    /// The response went out: the stream ends.
    done: bool,
    _guard: StreamGuard,
}

/// An SSE answer: `first`, then the stream's messages up to the response (a POST's) or the
/// end of the session, with keep-alive comments in between.
pub(super) fn stream_of(
    first: Vec<Bytes>,
    lines: mpsc::Receiver<Out>,
    guard: StreamGuard,
    keep_alive: Duration,
) -> Response<Body> {
    let state = SessionStream {
        pending: first.into(),
        lines,
        keep_alive: keep_alive_ticks(keep_alive),
        done: false,
        _guard: guard,
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
            out = state.lines.recv() => match out? {
                Out::Message(line) => sse_event(&line),
                Out::Response(line) => {
                    state.done = true;
                    sse_event(&line)
                }
            },
            _ = state.keep_alive.tick() => Bytes::from_static(KEEP_ALIVE_COMMENT.as_bytes()),
        };
        Some((Ok::<_, Infallible>(Frame::data(frame)), state))
    });
    sse_headers(StreamBody::new(stream).boxed_unsync())
}
