//! The Output actor: the only writer of stdout. One frame is one line, written whole by a
//! writer thread (so a slow editor never stalls the actors, and freeing a large frame happens
//! off the actor). After `Close` nothing more is written.

use actix::prelude::*;
use std::io::Write;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;

use super::metrics::ActorStats;

/// The Output actor.
pub struct Output {
    tx: Option<mpsc::Sender<Vec<u8>>>,
    thread: Option<JoinHandle<()>>,
    stats: Arc<ActorStats>,
}

impl Output {
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
        if let Some(tx) = &self.tx
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
    type Result = ();
    fn handle(&mut self, _: Close, _: &mut Context<Self>) {
        let _h = self.stats.handling();
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
