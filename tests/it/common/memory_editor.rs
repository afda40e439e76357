//! An editor of the bridge's actors in this process: its frames go into
//! `supervisor::start_on` over a channel, and the lines the bridge writes toward it come back
//! over another (no pipe and no process).

use mcp_bridge::actors::config::{BridgeConfig, Timeouts};
use mcp_bridge::actors::supervisor;
use mcp_bridge::protocol::listen::ListenTimings;
use mcp_bridge::protocol::wire::framing::{DEFAULT_MAX_LINE_BYTES, Frame};
use mcp_bridge::server::Server;
use mcp_bridge::transport::open::UpstreamSpec;
use mcp_bridge::transport::queue::{EDITOR_QUEUE, QueueStats};
use mcp_bridge::transport::writer::Writer;
use serde_json::{Value, json};
use std::io::Write;
use std::time::Duration;
use tokio::sync::mpsc;

/// How long a test waits for one event of the actors.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// The bridge's configuration with every default, in front of the in-process `server`.
pub fn memory_config(server: Server) -> BridgeConfig {
    BridgeConfig {
        upstream: UpstreamSpec::Memory(server),
        name: None,
        discover_timeout: DEADLINE,
        open_upstream: mcp_bridge::transport::open::open_in_process,
        max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        max_depth: mcp_bridge::protocol::wire::jsonrpc::MAX_CLIENT_DEPTH,
        timeouts: Timeouts::default(),
        max_in_flight: 256,
        shutdown_grace: Duration::from_secs(2),
        listen: ListenTimings::default(),
        sign_in: None,
        metrics_interval: None,
        item_filter: None,
        observer: None,
        in_process: false,
        member: None,
    }
}

/// Everything written toward the editor, chunk by chunk.
pub struct Capture(pub mpsc::UnboundedSender<Vec<u8>>);

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

/// The editor: frames in, the lines the bridge wrote out.
pub struct Editor {
    input: Option<mpsc::Sender<Frame>>,
    output: mpsc::UnboundedReceiver<Vec<u8>>,
    buffered: Vec<u8>,
}

impl Editor {
    /// Starts the bridge's actors with `config` and this editor (call inside an actix System).
    pub fn start(config: BridgeConfig) -> Editor {
        let (input, rx) = mpsc::channel::<Frame>(64);
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
        supervisor::start_on(config, frames, writer);
        Editor {
            input: Some(input),
            output,
            buffered: Vec::new(),
        }
    }

    /// Ends the editor's input (the end of its stdin).
    pub fn close_input(&mut self) {
        drop(self.input.take());
    }

    /// Sends one message.
    pub async fn send(&self, message: Value) {
        let line = serde_json::to_vec(&message).unwrap_or_default();
        if let Some(input) = &self.input {
            assert!(input.send(Frame::Line(line.into())).await.is_ok());
        }
    }

    /// The next line written toward the editor, or `None` once the writer closed; fails the
    /// test after [`DEADLINE`] without one.
    pub async fn recv(&mut self) -> Option<Value> {
        loop {
            if let Some(n) = self.buffered.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buffered.drain(..=n).collect();
                return Some(serde_json::from_slice(&line[..n]).unwrap_or(Value::Null));
            }
            let chunk = tokio::time::timeout(DEADLINE, self.output.recv()).await;
            match chunk {
                Ok(Some(c)) => self.buffered.extend_from_slice(&c),
                Ok(None) => return None,
                Err(_) => panic!("nothing written toward the editor within {DEADLINE:?}"),
            }
        }
    }

    /// The next line written toward the editor; fails the test when the writer closed.
    pub async fn next(&mut self) -> Value {
        self.recv().await.expect("a line toward the editor")
    }

    /// `initialize` as a 2025-11-25 editor with form elicitation; its response.
    pub async fn initialize(&mut self) -> Value {
        self.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "actor-test", "version": "1"}}}),
        )
        .await;
        self.recv().await.unwrap_or(Value::Null)
    }

    /// A `tools/call` of `tool` with `arguments`, id `id` (its answer is read by the test).
    pub async fn call(&self, id: i64, tool: &str, arguments: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}))
            .await;
    }
}
