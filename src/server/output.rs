//! The single writer of a connection: every output line goes through one bounded channel to one
//! task, which writes each line with its newline in one `write_all` and flushes when the queue is
//! empty. Never parses or reorders what it is given.

use crate::protocol::wire::framing::message_text;
use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Lines that may wait for the writer before senders are slowed down.
pub(crate) const OUTPUT_QUEUE_LINES: usize = 1024;

/// A cheap handle that queues lines for the connection's writer.
#[derive(Clone, Debug)]
pub(crate) struct Outbox {
    lines: mpsc::Sender<String>,
}

impl Outbox {
    /// Queues one JSON-RPC message. Returns `false` if the writer has stopped.
    pub(crate) async fn send(&self, message: &Value) -> bool {
        self.send_raw(message_text(message)).await
    }

    /// An outbox whose writer has already stopped: every send returns `false`.
    pub(crate) fn detached() -> Self {
        let (lines, _) = mpsc::channel(1);
        Outbox { lines }
    }

    /// An outbox and the receiving end of its lines, each one message without its newline:
    /// the lines of one request served alone (`server::http`), read by its response stream.
    #[cfg(feature = "http-server")]
    pub(crate) fn channel() -> (Self, mpsc::Receiver<String>) {
        let (lines, receiver) = mpsc::channel(OUTPUT_QUEUE_LINES);
        (Outbox { lines }, receiver)
    }

    /// Queues a line verbatim (a newline is appended). Returns `false` if the writer has stopped.
    pub(crate) async fn send_raw(&self, line: String) -> bool {
        self.lines.send(line).await.is_ok()
    }

    /// Queues a line verbatim without waiting: [`Queued::Full`] when the queue has no room (the
    /// line is not sent), [`Queued::Closed`] when the writer has stopped.
    pub(crate) fn try_send_raw(&self, line: String) -> Queued {
        match self.lines.try_send(line) {
            Ok(()) => Queued::Yes,
            Err(mpsc::error::TrySendError::Full(_)) => Queued::Full,
            Err(mpsc::error::TrySendError::Closed(_)) => Queued::Closed,
        }
    }
}

/// What [`Outbox::try_send_raw`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Queued {
    /// The line is queued.
    Yes,
    /// The queue was full; the line was dropped.
    Full,
    /// The writer has stopped.
    Closed,
}

/// Starts the writer task for `output`. The task ends when every `Outbox` is dropped (after
/// flushing) or on the first write error, which it returns.
pub(crate) fn spawn_writer<W>(output: W) -> (Outbox, JoinHandle<std::io::Result<()>>)
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (lines, receiver) = mpsc::channel(OUTPUT_QUEUE_LINES);
    (
        Outbox { lines },
        tokio::spawn(write_lines(receiver, output)),
    )
}

/// [`spawn_writer`] in memory: every line goes to `to` as it is (no newline). The task ends
/// when every `Outbox` is dropped, or with `BrokenPipe` when the receiver of `to` is gone.
pub(crate) fn spawn_forwarder(
    to: mpsc::Sender<String>,
) -> (Outbox, JoinHandle<std::io::Result<()>>) {
    let (lines, mut receiver) = mpsc::channel::<String>(OUTPUT_QUEUE_LINES);
    let task = tokio::spawn(async move {
        while let Some(line) = receiver.recv().await {
            if to.send(line).await.is_err() {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
        }
        Ok(())
    });
    (Outbox { lines }, task)
}

async fn write_lines<W>(mut lines: mpsc::Receiver<String>, mut output: W) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    while let Some(mut line) = lines.recv().await {
        loop {
            line.push('\n');
            output.write_all(line.as_bytes()).await?;
            match lines.try_recv() {
                Ok(next) => line = next,
                Err(_) => break,
            }
        }
        output.flush().await?;
    }
    output.flush().await?;
    output.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn lines_come_out_in_order_each_with_one_newline() {
        let (writer, mut reader) = tokio::io::duplex(1 << 16);
        let (outbox, task) = spawn_writer(writer);
        assert!(outbox.send(&serde_json::json!({"a": 1})).await);
        assert!(outbox.send_raw("raw line".into()).await);
        drop(outbox);
        assert!(task.await.is_ok_and(|r| r.is_ok()));
        let mut text = String::new();
        assert!(reader.read_to_string(&mut text).await.is_ok());
        assert_eq!(text, "{\"a\":1}\nraw line\n");
    }
}
