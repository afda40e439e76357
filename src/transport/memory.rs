//! The in-process upstream: a [`Server`] served on a task of the bridge's runtime through two
//! bounded channels of whole messages ([`Server::serve_memory`]), with no pipe, no process and
//! no line scanning. The queue toward it is the one bounded
//! [`Writer`]; what it writes is framed as the child's stdout would be (same line limit, same
//! pacing by the queue toward the editor).

use futures_util::StreamExt;
use futures_util::future::LocalBoxFuture;
use serde_json::Value;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

use super::queue::{Delivery, OutFrame, Sent, UPSTREAM_QUEUE};
use super::upstream::{Abandoned, EndCause, OpenOptions, Opened, Transport, TransportEvent};
use super::writer::Writer;
use crate::protocol::wire::framing::{Frame, FrameCodec};
use crate::protocol::wire::id::Id;
use crate::server::Server;
use tokio_util::codec::Decoder;

/// Messages in each channel between the bridge and the in-process server, beyond the
/// bridge's [`UPSTREAM_QUEUE`] and the server's own output queue: a small hand-off, so that a
/// server that does not read holds the bridge's writer task (and then its bounded queue),
/// not the actors.
pub const MEMORY_CHANNEL_MESSAGES: usize = 64;
/// How long the end of an in-process server waits for its serve task's result.
pub const SERVER_RESULT_WAIT: Duration = Duration::from_millis(500);

/// The handle of an in-process upstream.
pub struct Memory {
    sink: Writer,
    /// The serve task's result, taken by whoever waits for it first (the events' end or
    /// [`Transport::close`]).
    done: Arc<Mutex<Option<oneshot::Receiver<io::Result<()>>>>>,
    task: tokio::task::AbortHandle,
}

/// Starts serving `server` on a task and returns the bridge's end (see [`super::open::open`]).
pub fn open(server: Server, options: OpenOptions) -> Opened {
    let (to_server, server_input) = mpsc::channel::<Vec<u8>>(MEMORY_CHANNEL_MESSAGES);
    let (server_output, from_server) = mpsc::channel::<String>(MEMORY_CHANNEL_MESSAGES);
    let (done_tx, done_rx) = oneshot::channel();
    let served = tokio::spawn(async move {
        let result = server.serve_memory(server_input, server_output).await;
        let _ = done_tx.send(result);
    });
    // Each frame (one whole line, `\n` included) is one message; a server that went away is
    // a broken pipe. A task writes it: no thread per in-process server.
    let sink = Writer::for_channel(to_server, Some, UPSTREAM_QUEUE, options.queue_stats);
    let done = Arc::new(Mutex::new(Some(done_rx)));
    let end = done.clone();
    let frames = paced_frames(from_server, options.max_line_bytes, options.pace);
    let events = frames
        .map(TransportEvent::Frame)
        .chain(futures_util::stream::once(async { TransportEvent::Closed }))
        .chain(futures_util::stream::once(async move {
            let waited = take(&end);
            TransportEvent::Ended(match waited {
                Some(done) => ended(done).await,
                None => EndCause::PeerDropped,
            })
        }));
    Opened {
        transport: Box::new(Memory {
            sink,
            done,
            task: served.abort_handle(),
        }),
        events: events.boxed_local(),
    }
}

/// Takes the wait for the serve task's result (whoever ends the transport first).
fn take(
    done: &Mutex<Option<oneshot::Receiver<io::Result<()>>>>,
) -> Option<oneshot::Receiver<io::Result<()>>> {
    done.lock().ok().and_then(|mut d| d.take())
}

/// The frames of the server's messages, each checked against the line limit as the child's
/// stdout would be, read only while the queue toward the editor has room.
fn paced_frames(
    from_server: mpsc::Receiver<String>,
    max_line_bytes: usize,
    pace: Writer,
) -> impl futures_util::Stream<Item = Frame> {
    futures_util::stream::unfold(
        (from_server, Vec::<Frame>::new()),
        move |(mut rx, mut ready)| {
            let pace = pace.clone();
            async move {
                loop {
                    if !ready.is_empty() {
                        let f = ready.remove(0);
                        return Some((f, (rx, ready)));
                    }
                    // As the child's reader: let the frames given so far reach the queue, then
                    // wait for its room.
                    tokio::task::yield_now().await;
                    pace.room().await;
                    let line = rx.recv().await?;
                    ready = frame_message(line, max_line_bytes);
                }
            }
        },
    )
}

/// One message of the server as frames: a plain line passes as it is; anything else (over
/// the limit, an embedded newline or `\r`, empty) goes through the [`FrameCodec`] so that it
/// gets exactly the frames the child's stdout would give.
pub(super) fn frame_message(line: String, max_line_bytes: usize) -> Vec<Frame> {
    let bytes = line.into_bytes();
    let plain = !bytes.is_empty()
        && bytes.len() <= max_line_bytes
        && !bytes.contains(&b'\n')
        && bytes.last() != Some(&b'\r');
    if plain {
        return vec![Frame::Line(bytes.into())];
    }
    let mut codec = FrameCodec::new(max_line_bytes);
    let mut buf = bytes::BytesMut::from(&bytes[..]);
    buf.extend_from_slice(b"\n");
    let mut out = Vec::new();
    while let Ok(Some(frame)) = codec.decode(&mut buf) {
        out.push(frame);
    }
    out
}

/// Why the server stopped, from its serve task's result (waited for at most
/// [`SERVER_RESULT_WAIT`]).
async fn ended(done: oneshot::Receiver<io::Result<()>>) -> EndCause {
    match tokio::time::timeout(SERVER_RESULT_WAIT, done).await {
        Ok(Ok(Ok(()))) => EndCause::ServerClosed,
        Ok(Ok(Err(e))) => EndCause::ServerFailed(e.to_string()),
        Ok(Err(_)) | Err(_) => EndCause::PeerDropped,
    }
}

impl Transport for Memory {
    fn send(&self, msg: &Value, delivery: Delivery) -> Sent {
        self.sink.send_message(msg, delivery)
    }

    fn send_frame(&self, frame: OutFrame, delivery: Delivery) -> Sent {
        self.sink.send_frame(frame, delivery)
    }

    fn queued(&self) -> (usize, usize) {
        self.sink.queued()
    }

    fn abandon(&self, id: &Id) -> Abandoned {
        if self.sink.remove(id) {
            Abandoned::Unsent
        } else {
            Abandoned::NotifyCancelled
        }
    }

    /// The end of input for the server (what is queued goes first), then its result, waited
    /// for at most `grace`; a server still serving after it is aborted.
    fn close(self: Box<Self>, grace: Duration) -> LocalBoxFuture<'static, Option<EndCause>> {
        self.sink.close();
        let done = take(&self.done);
        let task = self.task.clone();
        Box::pin(async move {
            let done = done?;
            match tokio::time::timeout(grace, done).await {
                Ok(Ok(Ok(()))) => Some(EndCause::ServerClosed),
                Ok(Ok(Err(e))) => Some(EndCause::ServerFailed(e.to_string())),
                Ok(Err(_)) => Some(EndCause::PeerDropped),
                Err(_) => {
                    task.abort();
                    Some(EndCause::PeerDropped)
                }
            }
        })
    }

    fn kill(self: Box<Self>) -> LocalBoxFuture<'static, ()> {
        self.sink.close();
        self.task.abort();
        Box::pin(async {})
    }
}

impl Drop for Memory {
    /// The server sees the end of its input once what is queued is delivered.
    fn drop(&mut self) {
        self.sink.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_framed_as_the_child_stdout_would_frame_it() {
        assert_eq!(
            frame_message("{\"a\":1}".into(), 100),
            vec![Frame::Line(b"{\"a\":1}".to_vec().into())]
        );
        assert_eq!(
            frame_message("a\r".into(), 100),
            vec![Frame::Line(b"a".to_vec().into())]
        );
        assert_eq!(
            frame_message("a\nb".into(), 100),
            vec![
                Frame::Line(b"a".to_vec().into()),
                Frame::Line(b"b".to_vec().into())
            ]
        );
        assert_eq!(frame_message(String::new(), 100), vec![]);
        let long = format!("{{\"id\":7,\"x\":\"{}\"}}", "y".repeat(40));
        let len_bytes = long.len();
        match frame_message(long, 16).as_slice() {
            [
                Frame::TooLong {
                    len_bytes: n, id, ..
                },
            ] => {
                assert_eq!((*n, id.clone()), (len_bytes, Some(Id::Int(7))));
            }
            other => panic!("expected one TooLong frame, got {other:?}"),
        }
    }
}
