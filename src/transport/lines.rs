//! The codec of [`crate::protocol::framing`] on byte sources: as a stream over an
//! `AsyncRead` (the editor's stdin pipe, the child's stdout and stderr), or driven by hand over
//! a blocking `Read` on a thread of its own (a stdin that is a terminal or a file). The rules of
//! the lines are the codec's; nothing here looks into a line.

use bytes::BytesMut;
use futures_util::future::BoxFuture;
use futures_util::{Stream, StreamExt};
use std::io::{self, Read};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::codec::{Decoder, FramedRead};

use super::writer::Writer;
use crate::protocol::framing::{Frame, FrameCodec, READ_CHUNK_BYTES};

/// Frames of `reader` by `codec`; the stream ends at the end of input or at a read error
/// (which ends the input as the end of input does: a last line without its newline is still a
/// frame). Each wake-up reads once, up to [`READ_CHUNK_BYTES`] at a time, and every complete
/// line of a read is split off the read buffer without a copy.
///
/// With `pace`, the reader is paced by the queue the frames end up in (back-pressure):
/// before each read it lets the consumers of the frames already given run once (unless
/// `pace` is empty: its peer takes every frame at once, the usual case, and a yield would cost
/// every request a wake-up of its actor; issue 8 §7), then waits until `pace` has room
/// ([`Writer::room`]). While it waits nothing is read, so the peer blocks on its own full pipe.
/// Without the yield, what the consumers of one read's frames still produce (at most 16
/// frames of an actor's stream at a time) lands in the queue after the next read.
pub fn frames<R: AsyncRead + Unpin + 'static>(
    reader: R,
    codec: FrameCodec,
    pace: Option<Writer>,
) -> impl Stream<Item = Frame> {
    let reader = Paced {
        inner: EndAtError(reader),
        pace,
        yielded: false,
        room: None,
    };
    FramedRead::with_capacity(reader, codec, READ_CHUNK_BYTES)
        .filter_map(|frame| std::future::ready(frame.ok()))
}

/// Reads `reader` to its end (or its first error other than `Interrupted`) with `codec`,
/// [`READ_CHUNK_BYTES`] at a time, and gives every frame to `each` in order; stops early when
/// `each` returns `false`. Blocks: for a thread of its own.
pub fn read_blocking<R: Read>(
    mut reader: R,
    mut codec: FrameCodec,
    mut each: impl FnMut(Frame) -> bool,
) {
    let mut buf = BytesMut::with_capacity(READ_CHUNK_BYTES);
    let mut chunk = vec![0u8; READ_CHUNK_BYTES];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
        while let Ok(Some(frame)) = codec.decode(&mut buf) {
            if !each(frame) {
                return;
            }
        }
    }
    while let Ok(Some(frame)) = codec.decode_eof(&mut buf) {
        if !each(frame) {
            return;
        }
    }
}

/// A reader whose read error is the end of its input, so the codec still gets its
/// `decode_eof` (the last line) and the stream ends without an error item.
struct EndAtError<R>(R);

impl<R: AsyncRead + Unpin> AsyncRead for EndAtError<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.0).poll_read(cx, buf) {
            Poll::Ready(Err(e)) => {
                tracing::debug!(target: "transport", "a read failed ({e}): end of input");
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

/// A reader that, with a `pace`, yields once before each read (unless the `pace` queue is
/// empty) and then waits for room in the `pace` queue (the codec asks for a read only when it
/// has given every complete frame).
struct Paced<R> {
    inner: R,
    pace: Option<Writer>,
    /// This read has yielded once already.
    yielded: bool,
    /// The wait for room, while the queue is full.
    room: Option<BoxFuture<'static, ()>>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Paced<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = &mut *self;
        if let Some(pace) = &me.pace {
            if !me.yielded {
                // The frames given so far sit in mailboxes until their actors run: let them
                // reach the queue before its room is judged, unless nothing waits in it.
                me.yielded = true;
                if !pace.is_empty() {
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
            }
            if me.room.is_none() && pace.is_full() {
                let pace = pace.clone();
                me.room = Some(Box::pin(async move { pace.room().await }));
            }
            if let Some(room) = &mut me.room {
                if room.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                me.room = None;
            }
        }
        let read = Pin::new(&mut me.inner).poll_read(cx, buf);
        if read.is_ready() {
            me.yielded = false;
        }
        read
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use tokio::io::AsyncWriteExt;

    fn line(b: &[u8]) -> Frame {
        Frame::Line(Bytes::copy_from_slice(b))
    }

    #[tokio::test]
    async fn a_stream_gives_the_codecs_frames_and_the_last_line_at_the_end() {
        let (mut writer, reader) = tokio::io::duplex(4);
        let feeder = tokio::spawn(async move {
            for chunk in [&b"ab"[..], b"c\nd", b"e\r\n\n", b"0123456789", b"\ntail"] {
                if writer.write_all(chunk).await.is_err() {
                    return;
                }
            }
        });
        let got: Vec<Frame> = frames(reader, FrameCodec::new(8), None).collect().await;
        assert!(feeder.await.is_ok());
        assert_eq!(
            got,
            vec![
                line(b"abc"),
                line(b"de"),
                Frame::TooLong {
                    len_bytes: 10,
                    head: b"0123456789".to_vec(),
                    id: None
                },
                line(b"tail"),
            ]
        );
    }

    /// A source whose reads give these chunks, then fail.
    struct Failing(Vec<&'static [u8]>);

    impl Read for Failing {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::Error::other("gone"));
            }
            let chunk = self.0.remove(0);
            out[..chunk.len()].copy_from_slice(chunk);
            Ok(chunk.len())
        }
    }

    impl AsyncRead for Failing {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            let mut tmp = [0u8; 64];
            let n = Read::read(&mut *self, &mut tmp)?;
            buf.put_slice(&tmp[..n]);
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn a_read_error_ends_the_input_and_the_last_line_still_counts() {
        let source = Failing(vec![b"{\"a\":1}\n{\"b\"", b":2}"]);
        let got: Vec<Frame> = frames(source, FrameCodec::new(100), None).collect().await;
        assert_eq!(got, vec![line(b"{\"a\":1}"), line(b"{\"b\":2}")]);
        let mut blocking = Vec::new();
        read_blocking(
            Failing(vec![b"{\"a\":1}\n{\"b\"", b":2}"]),
            FrameCodec::new(100),
            |f| {
                blocking.push(f);
                true
            },
        );
        assert_eq!(blocking, got);
    }

    #[test]
    fn read_blocking_stops_when_told() {
        let mut seen = Vec::new();
        read_blocking(&b"a\nb\nc\n"[..], FrameCodec::new(100), |f| {
            seen.push(f);
            seen.len() < 2
        });
        assert_eq!(seen, vec![line(b"a"), line(b"b")]);
    }
}
