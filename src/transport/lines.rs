//! A stream of frames read from any byte source with the bounded [`LineFramer`].

use futures_util::Stream;
use std::collections::VecDeque;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::protocol::framing::{Frame, LineFramer};

/// Size of one read from the source, in bytes.
pub const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Frames of `reader`, cut at `max_line_bytes`; the stream ends at the end of input or at a
/// read error.
pub fn frames<R: AsyncRead + Unpin + 'static>(
    reader: R,
    max_line_bytes: usize,
) -> impl Stream<Item = Frame> {
    let state = (
        reader,
        LineFramer::new(max_line_bytes),
        VecDeque::<Frame>::new(),
        vec![0u8; READ_CHUNK_BYTES],
        false,
    );
    futures_util::stream::unfold(
        state,
        |(mut r, mut framer, mut queue, mut buf, mut done)| async move {
            loop {
                if let Some(f) = queue.pop_front() {
                    return Some((f, (r, framer, queue, buf, done)));
                }
                if done {
                    return None;
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
        },
    )
}
