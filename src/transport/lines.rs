//! A stream of frames read from any byte source with the bounded [`LineFramer`].

use futures_util::Stream;
use std::collections::VecDeque;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::writer::Writer;
use crate::protocol::framing::{Frame, LineFramer};

/// Size of one read from the source, in bytes.
pub const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Frames of `reader`, cut at `max_line_bytes`; the stream ends at the end of input or at a
/// read error.
///
/// With `pace`, the reader is paced by the queue the frames end up in (back-pressure):
/// before each read it lets the consumers of the frames already given run once, then waits
/// until `pace` has room ([`Writer::room`]). While it waits nothing is read, so the peer
/// blocks on its own full pipe.
pub fn frames<R: AsyncRead + Unpin + 'static>(
    reader: R,
    max_line_bytes: usize,
    pace: Option<Writer>,
) -> impl Stream<Item = Frame> {
    let state = (
        reader,
        LineFramer::new(max_line_bytes),
        VecDeque::<Frame>::new(),
        vec![0u8; READ_CHUNK_BYTES],
        false,
        pace,
    );
    futures_util::stream::unfold(
        state,
        |(mut r, mut framer, mut queue, mut buf, mut done, pace)| {
            async move {
                loop {
                    if let Some(f) = queue.pop_front() {
                        return Some((f, (r, framer, queue, buf, done, pace)));
                    }
                    if done {
                        return None;
                    }
                    if let Some(w) = &pace {
                        // The frames given so far sit in mailboxes until their actors run: let
                        // them reach the queue before its room is judged.
                        tokio::task::yield_now().await;
                        w.room().await;
                    }
                    let mut out = Vec::new();
                    match r.read(&mut buf).await {
                        Ok(0) | Err(_) => {
                            framer.finish(&mut out);
                            done = true;
                        }
                        Ok(n) => framer.push(&buf[..n], &mut out),
                    }
                    queue.extend(out);
                }
            }
        },
    )
}
