//! Doctor's side of the bridge: a 2025-11-25 editor in this process. Its frames go to the
//! bridge's actors (`supervisor::start_with`, the real Upstream and its transport) over a
//! channel, and the lines the bridge writes toward the editor come back over another, so what
//! doctor sees is what an editor would see, through the same machinery.

use serde_json::{Value, json};
use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

use crate::actors::config::BridgeConfig;
use crate::actors::supervisor::{self, Host, StartSignIn};
use crate::protocol::revisions::errors::ErrorCode;
use crate::protocol::wire::framing::Frame;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc;
use crate::transport::children::ChildRegistry;
use crate::transport::queue::{EDITOR_QUEUE, QueueStats};
use crate::transport::writer::Writer;

/// Frames queued toward the bridge (doctor sends one request at a time).
const INPUT_QUEUE_FRAMES: usize = 16;

/// Everything the bridge writes toward the editor, chunk by chunk, to doctor's task.
struct Capture(mpsc::UnboundedSender<Vec<u8>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .send(buf.to_vec())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The host of doctor's bridge: the exit code goes to doctor (the System keeps running: doctor
/// may start a second bridge, and reports after the last one); its child server joins the
/// registry of doctor's process.
struct DoctorHost {
    exit: RefCell<Option<oneshot::Sender<i32>>>,
    children: Arc<ChildRegistry>,
}

impl Host for DoctorHost {
    fn step(&self, step: &'static str) {
        tracing::debug!(target: "doctor", "shutdown step: {step}");
    }
    fn start_watchdog(&self, _after: Duration) {}
    fn exit(&self, code: i32) {
        if let Some(tx) = self.exit.borrow_mut().take() {
            let _ = tx.send(code);
        }
    }
    fn children(&self) -> Arc<ChildRegistry> {
        self.children.clone()
    }
}

/// An answer of the bridge to one of doctor's requests.
#[derive(Clone, Debug, PartialEq)]
pub enum EditorAnswer {
    /// The `result`.
    Result(Value),
    /// The `error` object.
    Error(Value),
}

/// The in-process editor (see the module doc).
pub struct Editor {
    input: Option<mpsc::Sender<Frame>>,
    output: mpsc::UnboundedReceiver<Vec<u8>>,
    buffered: Vec<u8>,
    next_id: i64,
    exited: Option<oneshot::Receiver<i32>>,
}

impl Editor {
    /// Starts the bridge's actors with `config` (and the SignIn actor that `sign_in` starts)
    /// in front of this editor; a child server joins `children`. Call inside the actix System.
    pub fn start(
        config: BridgeConfig,
        sign_in: Option<StartSignIn>,
        children: Arc<ChildRegistry>,
    ) -> Editor {
        let (input, rx) = mpsc::channel::<Frame>(INPUT_QUEUE_FRAMES);
        let frames =
            futures_util::stream::unfold(
                rx,
                |mut rx| async move { rx.recv().await.map(|f| (f, rx)) },
            );
        let (out_tx, output) = mpsc::unbounded_channel();
        let writer = Writer::for_blocking(
            Capture(out_tx),
            EDITOR_QUEUE,
            QueueStats::new("editor_queue"),
        );
        let (exit_tx, exited) = oneshot::channel();
        supervisor::start_with(
            config,
            Box::pin(frames),
            writer,
            Box::pin(std::future::pending()),
            Rc::new(DoctorHost {
                exit: RefCell::new(Some(exit_tx)),
                children,
            }),
            sign_in,
        );
        Editor {
            input: Some(input),
            output,
            buffered: Vec::new(),
            next_id: 0,
            exited: Some(exited),
        }
    }

    async fn send(&self, message: &Value) {
        let Ok(line) = serde_json::to_vec(message) else {
            return;
        };
        if let Some(input) = &self.input {
            let _ = input.send(Frame::Line(line.into())).await;
        }
    }

    /// A notification to the bridge.
    pub async fn notify(&self, method: &str, params: Value) {
        self.send(&jsonrpc::notification(method, params)).await;
    }

    /// Sends a request and waits at most `limit` for its answer; the bridge's requests to the
    /// editor meanwhile get -32601 (doctor declares no capability), its notifications are
    /// read and left. `None`: no answer within `limit`, or the bridge stopped writing.
    pub async fn request(
        &mut self,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Option<EditorAnswer> {
        self.next_id += 1;
        let id = Id::Int(self.next_id);
        self.send(&jsonrpc::request(&id, method, params)).await;
        let wanted = json!(self.next_id);
        let read = async {
            loop {
                let message = self.next_line().await?;
                if message.get("method").is_some() {
                    if let Some(their) = message.get("id") {
                        let refusal = json!({"jsonrpc": "2.0", "id": their, "error": {
                            "code": ErrorCode::METHOD_NOT_FOUND.0, "message": "Method not found"}});
                        self.send(&refusal).await;
                    }
                    continue;
                }
                if message.get("id") != Some(&wanted) {
                    continue;
                }
                if let Some(e) = message.get("error") {
                    return Some(EditorAnswer::Error(e.clone()));
                }
                return Some(EditorAnswer::Result(
                    message.get("result").cloned().unwrap_or(Value::Null),
                ));
            }
        };
        tokio::time::timeout(limit, read).await.ok().flatten()
    }

    /// The next line the bridge wrote, read as JSON (a line that is not is skipped); `None`
    /// once the writer closed.
    async fn next_line(&mut self) -> Option<Value> {
        loop {
            if let Some(n) = self.buffered.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buffered.drain(..=n).collect();
                if let Ok(v) = serde_json::from_slice::<Value>(&line[..n]) {
                    return Some(v);
                }
                continue;
            }
            let chunk = self.output.recv().await?;
            self.buffered.extend_from_slice(&chunk);
        }
    }

    /// Ends the editor's input (as an editor closes the bridge's stdin) and waits at most
    /// `limit` for the bridge's shutdown; its exit code, when it came.
    pub async fn close(mut self, limit: Duration) -> Option<i32> {
        drop(self.input.take());
        let exited = self.exited.take()?;
        // The bridge writes nothing more that doctor reads; its lines are drained so that its
        // writer never waits on doctor.
        let drain = async {
            while self.output.recv().await.is_some() {}
            std::future::pending::<()>().await;
        };
        tokio::select! {
            code = tokio::time::timeout(limit, exited) => code.ok().and_then(Result::ok),
            () = drain => None,
        }
    }
}
