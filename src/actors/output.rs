//! The Output actor: the only writer of stdout. One frame is one line, written whole. When
//! stdout is a pipe or a socket (an editor), a writer task on the actor thread writes it
//! non-blocking; otherwise a writer thread does. Either way a slow editor never stalls the
//! actors. After `Close` nothing more is written.

use actix::prelude::*;
use std::io::Write;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::sync::mpsc as tokio_mpsc;

use super::metrics::ActorStats;
use crate::transport::stdio;

/// How long `Close` waits for the queued frames to reach a pipe that the editor does not read.
pub const CLOSE_DRAIN: Duration = Duration::from_secs(2);

/// The Output actor.
pub struct Output {
    tx: Option<mpsc::Sender<Vec<u8>>>,
    thread: Option<JoinHandle<()>>,
    task_tx: Option<tokio_mpsc::UnboundedSender<Vec<u8>>>,
    task: Option<tokio::task::JoinHandle<()>>,
    stats: Arc<ActorStats>,
}

impl Output {
    /// The Output actor of the process: non-blocking writes to stdout from the actor thread
    /// when stdout is a pipe or a socket, else a writer thread. Call inside the actor system.
    pub fn for_stdout(stats: Arc<ActorStats>) -> Self {
        match stdio::nonblocking_stdout() {
            Some(fd) => {
                let (tx, rx) = tokio_mpsc::unbounded_channel();
                let task = actix::spawn(stdio::write_frames(fd, rx));
                Output {
                    tx: None,
                    thread: None,
                    task_tx: Some(tx),
                    task: Some(task),
                    stats,
                }
            }
            None => Output::new(std::io::stdout(), stats),
        }
    }

    /// An Output actor writing to `sink` (stdout in the binary).
    pub fn new<W: Write + Send + 'static>(sink: W, stats: Arc<ActorStats>) -> Self {
        let (tx, rx) = mpsc::channel::<Vec<u8>>();
        let thread = std::thread::Builder::new()
            .name("mcp-bridge-output".into())
            .spawn(move || write_loop(sink, rx))
            .ok();
        Output {
            tx: Some(tx),
            thread,
            task_tx: None,
            task: None,
            stats,
        }
    }
}

fn write_loop<W: Write>(mut sink: W, rx: mpsc::Receiver<Vec<u8>>) {
    while let Ok(frame) = rx.recv() {
        if sink.write_all(&frame).is_err() {
            break;
        }
        drop(frame);
        // Write everything that is queued, then flush once.
        while let Ok(more) = rx.try_recv() {
            if sink.write_all(&more).is_err() {
                return;
            }
        }
        if sink.flush().is_err() {
            break;
        }
    }
}

impl Actor for Output {
    type Context = Context<Self>;
}

/// One frame: a serialized JSON-RPC message that ends with `\n`.
#[derive(Message)]
#[rtype(result = "()")]
pub struct WriteFrame(pub Vec<u8>);

impl Handler<WriteFrame> for Output {
    type Result = ();
    fn handle(&mut self, WriteFrame(frame): WriteFrame, _: &mut Context<Self>) {
        let _h = self.stats.handling();
        if let Some(tx) = &self.task_tx {
            if tx.send(frame).is_err() {
                self.task_tx = None;
            }
        } else if let Some(tx) = &self.tx
            && tx.send(frame).is_err()
        {
            self.tx = None;
        }
    }
}

/// Close the output: write what is queued, then nothing more.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Close;

impl Handler<Close> for Output {
    type Result = ResponseFuture<()>;
    fn handle(&mut self, _: Close, _: &mut Context<Self>) -> Self::Result {
        let _h = self.stats.handling();
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.task_tx = None;
        let task = self.task.take();
        Box::pin(async move {
            if let Some(t) = task {
                let _ = tokio::time::timeout(CLOSE_DRAIN, t).await;
            }
        })
    }
}
