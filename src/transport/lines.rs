//! The codec of [`crate::protocol::wire::framing`] on byte sources: as a stream over an
//! `AsyncRead` (the editor's stdin pipe, the child's stdout and stderr), or driven by hand over
//! a blocking `Read` on a thread of its own (a stdin that is a terminal or a file). The rules of
//! the lines are the codec's; nothing here looks into a line. The stream also keeps the
//! codec's spare large buffer ([`SpareBuffer`]) for [`SPARE_BUFFER_KEEP`] after each large
//! line, with a timer of its own.

use bytes::BytesMut;
use futures_util::future::BoxFuture;
use futures_util::{Stream, StreamExt};
use std::future::Future;
use std::io::{self, Read};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::time::Sleep;
use tokio_util::codec::{Decoder, FramedRead};

use super::writer::Writer;
use crate::protocol::wire::framing::{Frame, FrameCodec, READ_CHUNK_BYTES};
use crate::protocol::wire::spare::SpareBuffer;

/// How long the stream of [`frames`] keeps its codec's spare large read buffer after it came
/// back (from a large line, one of
/// [`KEEP_BUFFER_BYTES`](crate::protocol::wire::spare::KEEP_BUFFER_BYTES) or more, or from a line
/// read into it and copied out) when no other line takes it (2 s): back-to-back large results
/// reuse one block of memory, and an idle bridge holds none a moment later.
pub const SPARE_BUFFER_KEEP: Duration = Duration::from_secs(2);

/// Frames of `reader` by `codec`; the stream ends at the end of input or at a read error
/// (which ends the input as the end of input does: a last line without its newline is still a
/// frame). Each wake-up reads once, up to [`READ_CHUNK_BYTES`] at a time, and every complete
/// line of a read is split off the read buffer without a copy.
///
/// With `pace`, the reader is paced by the queue the frames end up in (back-pressure):
/// before each read it lets the consumers of the frames already given run once (unless
/// `pace` is empty: its peer takes every frame at once, the usual case, and a yield would cost
/// every request a wake-up of its actor), then waits until `pace` has room
/// ([`Writer::room`]). While it waits nothing is read, so the peer blocks on its own full pipe.
/// Without the yield, what the consumers of one read's frames still produce (at most 16
/// frames of an actor's stream at a time) lands in the queue after the next read.
///
/// The codec gets a [`SpareBuffer`]: the block a large line took comes back when the line is
/// dropped (once written) and the next line of
/// [`SPARE_MOVE_BYTES`](crate::protocol::wire::framing::SPARE_MOVE_BYTES) or more is read into it;
/// the stream drops the block [`SPARE_BUFFER_KEEP`] after it came back if no line took it
/// meanwhile, and at the end of input.
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
    frames_keeping(reader, codec, SpareBuffer::new(), SPARE_BUFFER_KEEP)
}

/// [`frames`] of `reader` (already [`Paced`]), keeping the spare block for `keep`.
fn frames_keeping<R: AsyncRead + Unpin + 'static>(
    reader: R,
    codec: FrameCodec,
    spare: SpareBuffer,
    keep: Duration,
) -> impl Stream<Item = Frame> {
    let framed =
        FramedRead::with_capacity(reader, codec.with_spare(spare.clone()), READ_CHUNK_BYTES);
    KeepingSpare {
        inner: framed,
        spare,
        keep,
        timer: None,
    }
    .filter_map(|frame| std::future::ready(frame.ok()))
}

/// A stream of frames whose codec has `spare`: after each poll it arms (or fires) the timer
/// of the kept block's generation, and drops the block when the timer fires
/// ([`SPARE_BUFFER_KEEP`]) or the stream ends. While a line holds a block, a block that comes
/// back wakes the task that polls this stream, so that the timer starts then.
struct KeepingSpare<S> {
    inner: S,
    spare: SpareBuffer,
    /// [`SPARE_BUFFER_KEEP`] (shorter in tests).
    keep: Duration,
    /// The generation of the kept block and the timer that expires it.
    timer: Option<(u64, Pin<Box<Sleep>>)>,
}

impl<S: Stream + Unpin> Stream for KeepingSpare<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let me = self.get_mut();
        let item = Pin::new(&mut me.inner).poll_next(cx);
        if let Poll::Ready(None) = item {
            me.timer = None;
            let bytes = me.spare.close();
            if bytes > 0 {
                tracing::debug!(target: "transport", "dropped the spare read buffer ({bytes} bytes) at the end of input");
            }
        } else if me.spare.is_active() {
            me.tend(cx);
        }
        item
    }
}

impl<S> KeepingSpare<S> {
    fn tend(&mut self, cx: &mut Context<'_>) {
        loop {
            let Some(generation) = self.spare.watch(Some(cx.waker())) else {
                self.timer = None;
                return;
            };
            match &mut self.timer {
                Some((armed, sleep)) if *armed == generation => {
                    if sleep.as_mut().poll(cx).is_pending() {
                        return;
                    }
                    self.timer = None;
                    let bytes = self.spare.expire(generation);
                    if bytes > 0 {
                        tracing::debug!(target: "transport", "dropped the spare read buffer ({bytes} bytes) after {} ms unused", self.keep.as_millis());
                    }
                }
                _ => {
                    self.timer = Some((generation, Box::pin(tokio::time::sleep(self.keep))));
                }
            }
        }
    }
}

/// Reads `reader` to its end (or its first error other than `Interrupted`) with `codec`,
/// [`READ_CHUNK_BYTES`] at a time, and gives every frame to `each` in order; stops early when
/// `each` returns `false`. Blocks: for a thread of its own.
///
/// No spare large buffer here (a blocking read has no timer to drop one on while its input is
/// idle, a terminal's for ever): a large line takes its buffer with it, which is freed when the
/// line is dropped.
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
    use crate::protocol::wire::spare::KEEP_BUFFER_BYTES;
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

    /// A reader task over a pipe-like duplex, fed by `feed`, with a codec keeping its spare for
    /// `keep`; its frames arrive on the receiver.
    fn spawn_reader(
        keep: Duration,
    ) -> (
        tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
        tokio::sync::mpsc::UnboundedReceiver<Frame>,
        SpareBuffer,
    ) {
        spawn_reader_with(FrameCodec::new(64 << 20), keep)
    }

    /// [`spawn_reader`] with `codec`.
    fn spawn_reader_with(
        codec: FrameCodec,
        keep: Duration,
    ) -> (
        tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
        tokio::sync::mpsc::UnboundedReceiver<Frame>,
        SpareBuffer,
    ) {
        let (feed, mut chunks) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        let (out, frames_rx) = tokio::sync::mpsc::unbounded_channel();
        let (mut writer, reader) = tokio::io::duplex(256 * 1024);
        tokio::spawn(async move {
            while let Some(chunk) = chunks.recv().await {
                if writer.write_all(&chunk).await.is_err() {
                    return;
                }
            }
        });
        let spare = SpareBuffer::new();
        let stream = frames_keeping(reader, codec, spare.clone(), keep);
        tokio::spawn(async move {
            let mut stream = Box::pin(stream);
            while let Some(frame) = stream.next().await {
                if out.send(frame).is_err() {
                    return;
                }
            }
        });
        (feed, frames_rx, spare)
    }

    /// Waits (at most 15 s, checking every 10 ms) until `done()` holds; whether it did.
    async fn wait_until(mut done: impl FnMut() -> bool) -> bool {
        let end = tokio::time::Instant::now() + Duration::from_secs(15);
        while !done() {
            if tokio::time::Instant::now() > end {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        true
    }

    fn large_line(fill: u8) -> Vec<u8> {
        let mut line = vec![fill; 2 * KEEP_BUFFER_BYTES + 11];
        line.push(b'\n');
        line
    }

    #[tokio::test]
    async fn the_stream_reads_the_next_large_line_into_the_block_of_the_last_and_drops_it_at_the_end()
     {
        let (feed, mut got, spare) = spawn_reader(Duration::from_secs(3600));
        assert!(feed.send(large_line(b'a')).is_ok());
        let Some(Frame::Line(first)) = got.recv().await else {
            panic!("expected a line");
        };
        assert_eq!(&first[..], &large_line(b'a')[..2 * KEEP_BUFFER_BYTES + 11]);
        let block = first.as_ptr();
        drop(first);
        assert_eq!(spare.kept().map(|k| k.0), Some(block));
        let mut input = large_line(b'b');
        input.extend_from_slice(b"{}\n");
        assert!(feed.send(input).is_ok());
        let Some(Frame::Line(second)) = got.recv().await else {
            panic!("expected a line");
        };
        assert_eq!(&second[..], &large_line(b'b')[..2 * KEEP_BUFFER_BYTES + 11]);
        assert_eq!(second.as_ptr(), block, "read into the same block");
        assert_eq!(got.recv().await, Some(line(b"{}")));
        drop(second);
        assert!(spare.kept().is_some());
        // The end of input drops the spare.
        drop(feed);
        assert_eq!(got.recv().await, None);
        assert_eq!(spare.kept(), None);
    }

    #[tokio::test]
    async fn the_stream_drops_its_spare_block_at_its_keep_time() {
        let keep = Duration::from_millis(100);
        let (feed, mut got, spare) = spawn_reader(keep);
        assert!(feed.send(large_line(b'a')).is_ok());
        let Some(Frame::Line(first)) = got.recv().await else {
            panic!("expected a line");
        };
        // The reader waits for input; the block comes back from here, which wakes it to start
        // the keep time (nothing else would: no more input comes).
        let back = tokio::time::Instant::now();
        drop(first);
        assert!(spare.kept().is_some());
        assert!(wait_until(|| spare.kept().is_none()).await, "dropped");
        assert!(back.elapsed() >= keep, "not before its keep time");
        // A later large line still reads right.
        assert!(feed.send(large_line(b'c')).is_ok());
        let Some(Frame::Line(again)) = got.recv().await else {
            panic!("expected a line");
        };
        assert_eq!(&again[..], &large_line(b'c')[..2 * KEEP_BUFFER_BYTES + 11]);
    }

    /// A block the codec gives back itself (never lent to a line: the buffer of a line over
    /// the limit, or of a medium line that was read into the block and copied out) is kept
    /// for the keep time too, and dropped then, not at the end of input only.
    #[tokio::test]
    async fn a_block_the_codec_gives_back_is_dropped_at_its_keep_time_too() {
        let keep = Duration::from_millis(100);
        // Over the limit of 2 MiB: the line streams through, its large buffer is given back.
        let (feed, mut got, spare) =
            spawn_reader_with(FrameCodec::new(2 * KEEP_BUFFER_BYTES), keep);
        let mut too_long = vec![b'x'; 3 * KEEP_BUFFER_BYTES];
        too_long.push(b'\n');
        assert!(feed.send(too_long).is_ok());
        let Some(Frame::TooLong { len_bytes, .. }) = got.recv().await else {
            panic!("expected a line over the limit");
        };
        assert_eq!(len_bytes, 3 * KEEP_BUFFER_BYTES);
        assert!(wait_until(|| spare.kept().is_none()).await, "dropped");
        // A large line (its block kept), then a medium one read into that block and copied
        // out: the block goes back to the spare, and is dropped at its keep time.
        let (feed, mut got, spare) = spawn_reader(keep);
        assert!(feed.send(large_line(b'a')).is_ok());
        let Some(Frame::Line(first)) = got.recv().await else {
            panic!("expected a line");
        };
        drop(first);
        assert!(spare.kept().is_some());
        let mut medium = vec![b'y'; 100 * 1024];
        medium.push(b'\n');
        assert!(feed.send(medium.clone()).is_ok());
        let Some(Frame::Line(second)) = got.recv().await else {
            panic!("expected a line");
        };
        assert_eq!(&second[..], &medium[..100 * 1024]);
        drop(second);
        assert!(wait_until(|| spare.kept().is_none()).await, "dropped");
        // The input is still open: the timer dropped it, not the end of input.
        assert!(feed.send(b"{}\n".to_vec()).is_ok());
        assert_eq!(got.recv().await, Some(line(b"{}")));
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
