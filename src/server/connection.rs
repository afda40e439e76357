//! One served connection: the read loop, the table of requests in flight (with the rule that a
//! cancelled request gets no response), the input trace, and the three ways a connection ends
//! (end of input, graceful close, write failure). Never interprets a request's method.

use crate::protocol::revisions::methods;
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::codec::FramedRead;
use tokio_util::sync::CancellationToken;

use super::dispatch::{self, ConnectionLink};
use super::error::{ErrorCode, RpcError};
use super::output::{spawn_forwarder, spawn_writer};
use super::{Limits, Server};
use crate::protocol::revisions::errors::Cause;
use crate::protocol::wire::framing::{
    DEFAULT_MAX_LINE_BYTES, Frame, FrameCodec, READ_CHUNK_BYTES, TOO_LONG_HEAD_BYTES,
};
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc::{self, Message, ParseError};

/// The longest input line accepted in memory, newline excluded (64 MiB, as the bridge's
/// default).
pub(crate) const MAX_LINE_BYTES: usize = DEFAULT_MAX_LINE_BYTES;

/// What a connection does with the requests in flight when its input ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AtEnd {
    /// Cancel them at once: they get no response ([`Server::serve`]).
    Cancel,
    /// The end of the modern path: end the open listens, wait for the others at most
    /// [`Limits::shutdown_grace`], then cancel the rest.
    Grace,
}

/// Requests in flight, by their id (so `1` and `"1"` differ).
#[derive(Clone, Default)]
struct InFlight {
    tokens: Arc<Mutex<HashMap<Id, CancellationToken>>>,
}

impl InFlight {
    /// Registers a request; `None` if its id is already in flight.
    fn start(&self, id: &Id) -> Option<CancellationToken> {
        let mut tokens = self.tokens.lock().ok()?;
        if tokens.contains_key(id) {
            return None;
        }
        let token = CancellationToken::new();
        tokens.insert(id.clone(), token.clone());
        Some(token)
    }

    /// Forgets a request; it can no longer be cancelled (its response may already be queued).
    fn finish(&self, id: &Id) {
        if let Ok(mut tokens) = self.tokens.lock() {
            tokens.remove(id);
        }
    }

    /// `notifications/cancelled`: unknown or finished ids, and a `requestId` that is no id,
    /// are ignored (2026-07-28 cancellation).
    fn cancel(&self, id: &Value) {
        if let Some(id) = Id::from_value(id)
            && let Ok(tokens) = self.tokens.lock()
            && let Some(token) = tokens.get(&id)
        {
            token.cancel();
        }
    }

    fn len(&self) -> usize {
        self.tokens.lock().map_or(0, |tokens| tokens.len())
    }

    fn cancel_all(&self) {
        if let Ok(tokens) = self.tokens.lock() {
            tokens.values().for_each(CancellationToken::cancel);
        }
    }
}

enum End {
    InputClosed(std::io::Result<()>),
    Closed,
    WriteFailed(std::io::Result<()>),
}

/// Where a connection's frames come from: a byte stream cut into lines (after the frames
/// already read from it), or whole lines handed over in memory (above the framing: no bytes
/// are scanned for newlines).
pub(crate) enum Input<R> {
    Lines(VecDeque<Frame>, Box<FramedRead<R, FrameCodec>>),
    Memory(mpsc::Receiver<Vec<u8>>),
}

impl<R: AsyncRead + Unpin> Input<R> {
    /// The next frame, or `None` at end of input. Cancel-safe, as both sources are.
    async fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        match self {
            Input::Lines(ready, lines) => match ready.pop_front() {
                Some(frame) => Ok(Some(frame)),
                None => lines.next().await.transpose(),
            },
            Input::Memory(frames) => Ok(frames.recv().await.map(memory_frame)),
        }
    }
}

/// One line handed over in memory (one message, its newline optional) as the line reader
/// would have framed it: the newline and a trailing `\r` go, the limit holds.
fn memory_frame(mut line: Vec<u8>) -> Frame {
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    if line.len() > MAX_LINE_BYTES {
        Frame::TooLong {
            len_bytes: line.len(),
            head: line[..TOO_LONG_HEAD_BYTES].to_vec(),
            id: jsonrpc::recover_id(&line),
        }
    } else {
        Frame::Line(line.into())
    }
}

/// Serves one connection until its input ends, it is closed or a write fails.
///
/// The input is read with the bridge's codec ([`FrameCodec`], 2026-07-28
/// basic/transports/stdio: one message per line) and the bridge's rules: a `\r` before the
/// `\n` is dropped, a blank line is no message and is skipped, a last line without its `\n`
/// is read like any other (a request in it is cancelled with the connection, as any request
/// in flight at the end of input), and a line longer than [`MAX_LINE_BYTES`] gets an
/// `Invalid Request` error with the id recovered from it (none when it is not known for sure).
pub(crate) async fn serve<R, W>(server: &Server, input: R, output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // Behind a bridge, the server reads what the bridge forwards (its upstream depth limit).
    let limits = Limits {
        max_depth: jsonrpc::MAX_UPSTREAM_DEPTH,
        max_in_flight: usize::MAX,
        ..Limits::default()
    };
    let input = FramedRead::with_capacity(
        input,
        FrameCodec::new(limits.max_line_bytes),
        READ_CHUNK_BYTES,
    );
    serve_framed(
        server,
        Input::Lines(VecDeque::new(), Box::new(input)),
        output,
        &limits,
        AtEnd::Cancel,
    )
    .await
}

/// [`serve`] on frames already cut (`Input::Lines` may start with frames read before), with
/// `limits` and the end of input as `at_end` says.
pub(crate) async fn serve_framed<R, W>(
    server: &Server,
    input: Input<R>,
    output: W,
    limits: &Limits,
    at_end: AtEnd,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let trace = open_trace(server)?;
    let (out, writer) = spawn_writer(output);
    serve_frames(server, trace, input, out, writer, limits, at_end).await
}

/// [`serve`] in memory: each item of `input` is one message (its newline optional), each item
/// sent to `output` is one message without its newline. The end of `input` is the end of
/// input; dropping the receiver of `output` is a failed write.
pub(crate) async fn serve_memory(
    server: &Server,
    input: mpsc::Receiver<Vec<u8>>,
    output: mpsc::Sender<String>,
) -> std::io::Result<()> {
    let trace = open_trace(server)?;
    let (out, writer) = spawn_forwarder(output);
    let input: Input<tokio::io::Empty> = Input::Memory(input);
    let limits = Limits {
        // The bridge in front admits the requests: no second limit here.
        max_in_flight: usize::MAX,
        max_depth: jsonrpc::MAX_UPSTREAM_DEPTH,
        ..Limits::default()
    };
    serve_frames(server, trace, input, out, writer, &limits, AtEnd::Cancel).await
}

/// Answers one request outside any connection (the embedded bridge's `server/discover` before
/// a path is selected): its response, or `None` when none is due. Whatever else the request
/// would write (progress, log messages) is dropped.
pub(crate) async fn answer_alone(
    server: &Server,
    id: &Id,
    method: &str,
    params: Option<Value>,
) -> Option<Value> {
    let link = ConnectionLink {
        out: super::output::Outbox::detached(),
        close: CancellationToken::new(),
    };
    dispatch::handle(server, &link, id, method, params, CancellationToken::new()).await
}

fn open_trace(server: &Server) -> std::io::Result<Option<File>> {
    match &server.inner.trace_input {
        Some(path) => Ok(Some(File::options().create(true).append(true).open(path)?)),
        None => Ok(None),
    }
}

async fn serve_frames<R: AsyncRead + Unpin>(
    server: &Server,
    mut trace: Option<File>,
    mut lines: Input<R>,
    out: super::output::Outbox,
    mut writer: tokio::task::JoinHandle<std::io::Result<()>>,
    limits: &Limits,
    at_end: AtEnd,
) -> std::io::Result<()> {
    let link = ConnectionLink {
        out,
        close: CancellationToken::new(),
    };
    let in_flight = InFlight::default();
    let mut tasks = JoinSet::new();

    let end = loop {
        tokio::select! {
            biased;
            () = link.close.cancelled() => break End::Closed,
            written = &mut writer => break End::WriteFailed(joined(written)),
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            frame = lines.next_frame() => match frame {
                Ok(Some(Frame::Line(line))) => {
                    if let Some(trace) = &mut trace {
                        write_trace(trace, &line);
                    }
                    let request = accept(server, &link, &in_flight, limits, &line).await;
                    if let Some(request) = request {
                        tasks.spawn(request);
                    }
                }
                Ok(Some(Frame::TooLong { id, .. })) => {
                    let error = Cause::LineTooLong.error(Some(limits.max_line_bytes.into()));
                    link.out.send(&jsonrpc::error_response(id.as_ref(), error)).await;
                }
                Ok(None) => break End::InputClosed(Ok(())),
                Err(error) => break End::InputClosed(Err(error)),
            },
        }
    };

    match end {
        End::Closed => {
            // Graceful: requests in flight finish (listens end with their result), then flush.
            while tasks.join_next().await.is_some() {}
            drop(link);
            joined(writer.await)
        }
        End::InputClosed(read) => {
            if at_end == AtEnd::Grace {
                // Open listens end with their result; the others get the grace to finish.
                link.close.cancel();
                let finished = async { while tasks.join_next().await.is_some() {} };
                let _ = tokio::time::timeout(limits.shutdown_grace, finished).await;
            }
            in_flight.cancel_all();
            tasks.shutdown().await;
            drop(link);
            let written = joined(writer.await);
            read.and(written)
        }
        End::WriteFailed(written) => {
            in_flight.cancel_all();
            tasks.shutdown().await;
            written
        }
    }
}

fn joined(written: Result<std::io::Result<()>, tokio::task::JoinError>) -> std::io::Result<()> {
    written.unwrap_or_else(|error| Err(std::io::Error::other(error)))
}

/// Appends one received line to the trace; a failing trace must not break the connection.
fn write_trace(trace: &mut File, line: &[u8]) {
    let mut record = Vec::with_capacity(line.len() + 1);
    record.extend_from_slice(line);
    record.push(b'\n');
    if let Err(error) = trace.write_all(&record).and_then(|()| trace.flush()) {
        tracing::warn!(%error, "could not write the input trace");
    }
}

type RequestTask = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Handles one line. Notifications and invalid lines are dealt with here; a request becomes a
/// task for the caller to spawn.
async fn accept(
    server: &Server,
    link: &ConnectionLink,
    in_flight: &InFlight,
    limits: &Limits,
    line: &[u8],
) -> Option<RequestTask> {
    match jsonrpc::parse(line, limits.max_depth) {
        Err(error) => {
            let (cause, detail) = match &error {
                ParseError::NotJson { .. } => (Cause::ParseError, None),
                ParseError::TooDeep { .. } => (Cause::TooDeep, Some(limits.max_depth.into())),
                ParseError::Shape { .. } => (Cause::InvalidRequestShape, None),
            };
            let response = jsonrpc::error_response(error.id(), cause.error(detail));
            link.out.send(&response).await;
            None
        }
        // 2026-07-28 clients send no responses this server waits for.
        Ok(Message::Response { .. } | Message::ErrorResponse { .. }) => None,
        Ok(Message::Notification { method, params }) => {
            if method == methods::CANCELLED
                && let Some(id) = params.as_ref().and_then(|p| p.get("requestId"))
            {
                in_flight.cancel(id);
            }
            None
        }
        Ok(Message::Request { id, method, params }) => {
            if in_flight.len() >= limits.max_in_flight {
                // The reader never waits for a free slot: the request is refused at once.
                let error = Cause::TooManyRequests.error(Some(limits.max_in_flight.into()));
                link.out
                    .send(&jsonrpc::error_response(Some(&id), error))
                    .await;
                return None;
            }
            let Some(cancel) = in_flight.start(&id) else {
                let error =
                    RpcError::new(ErrorCode::INVALID_REQUEST, "Request id already in flight");
                link.out
                    .send(&jsonrpc::error_response(Some(&id), error))
                    .await;
                return None;
            };
            let (server, link, in_flight) = (server.clone(), link.clone(), in_flight.clone());
            Some(Box::pin(async move {
                let work = dispatch::handle(&server, &link, &id, &method, params, cancel.clone());
                let response = tokio::select! {
                    () = cancel.cancelled() => None,
                    response = work => response,
                };
                // Forget the id before answering, so a client that reuses it right after the
                // response is never told it is still in flight.
                in_flight.finish(&id);
                if let Some(response) = response
                    && !cancel.is_cancelled()
                {
                    link.out.send(&response).await;
                }
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{Outcome, ToolDef};
    use serde_json::json;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

    struct Client {
        input: Option<DuplexStream>,
        output: Lines<BufReader<DuplexStream>>,
        served: tokio::task::JoinHandle<std::io::Result<()>>,
    }

    fn connect(server: Server) -> Client {
        let (input, server_input) = tokio::io::duplex(1 << 16);
        let (server_output, output) = tokio::io::duplex(1 << 16);
        let served = tokio::spawn(async move { server.serve(server_input, server_output).await });
        Client {
            input: Some(input),
            output: BufReader::new(output).lines(),
            served,
        }
    }

    impl Client {
        async fn request(&mut self, id: i64, method: &str, mut params: Value) -> Value {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            });
            let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            if let Some(input) = &mut self.input {
                let written = input.write_all(format!("{line}\n").as_bytes()).await;
                assert!(written.is_ok());
            }
            self.recv().await
        }

        async fn recv(&mut self) -> Value {
            let line = self
                .output
                .next_line()
                .await
                .ok()
                .flatten()
                .unwrap_or_default();
            serde_json::from_str(&line).unwrap_or(Value::Null)
        }
    }

    /// A handler's answer that panics (inside the handler's future).
    fn panic_on_purpose() -> Outcome {
        panic!("on purpose")
    }

    fn tool_only_server() -> Server {
        Server::builder("t", "1")
            .tool(
                ToolDef::new("panic", json!({"type": "object"})),
                |_, _| async { panic_on_purpose() },
            )
            .tool(
                ToolDef::new("close", json!({"type": "object"})),
                |_, ctx| async move {
                    ctx.close_connection();
                    Ok(Outcome::text("closing"))
                },
            )
            .completion(|_, _| async {
                Ok(Outcome::InputRequired {
                    input_requests: serde_json::Map::new(),
                    request_state: Some("s".into()),
                })
            })
            .build()
    }

    #[tokio::test]
    async fn only_registered_features_are_advertised_and_others_are_method_not_found() {
        let mut client = connect(tool_only_server());
        let discover = client.request(1, "server/discover", json!({})).await;
        assert_eq!(
            discover["result"]["capabilities"],
            json!({"tools": {"listChanged": true}, "completions": {}, "logging": {}})
        );
        for method in ["prompts/list", "resources/read", "resources/templates/list"] {
            let response = client.request(2, method, json!({})).await;
            assert_eq!(response["error"]["code"], -32601, "{method}");
        }
    }

    #[tokio::test]
    async fn a_panicking_handler_or_input_required_outside_mrtr_is_an_internal_error() {
        let mut client = connect(tool_only_server());
        let response = client
            .request(1, "tools/call", json!({"name": "panic"}))
            .await;
        assert_eq!(response["error"]["code"], -32603);
        let complete = json!({"ref": {"type": "ref/resource", "uri": "a://{x}"},
                              "argument": {"name": "x", "value": ""}});
        let response = client.request(2, "completion/complete", complete).await;
        assert_eq!(response["error"]["code"], -32603);
    }

    #[tokio::test]
    async fn close_connection_answers_ends_open_listens_with_their_result_and_returns() {
        let mut client = connect(tool_only_server());
        let ack = client
            .request(
                1,
                "subscriptions/listen",
                json!({"notifications": {"toolsListChanged": true}}),
            )
            .await;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        let first = client
            .request(2, "tools/call", json!({"name": "close"}))
            .await;
        let second = client.recv().await;
        let mut ids = vec![first["id"].clone(), second["id"].clone()];
        ids.sort_by_key(Value::to_string);
        assert_eq!(ids, vec![json!(1), json!(2)]);
        let listen_end = if first["id"] == 1 { &first } else { &second };
        assert_eq!(
            listen_end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            1
        );
        // The server has returned although the client never closed its side.
        let served = tokio::time::timeout(std::time::Duration::from_secs(5), &mut client.served);
        assert!(matches!(served.await, Ok(Ok(Ok(())))));
        assert_eq!(client.output.next_line().await.ok().flatten(), None);
        drop(client.input.take());
    }

    #[tokio::test]
    async fn blank_lines_are_skipped_crlf_ends_a_line_and_a_last_line_without_newline_is_read() {
        let trace = std::env::temp_dir().join(format!(
            "mcp-bridge-server-trace-{}.jsonl",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&trace);
        let server = Server::builder("t", "1").trace_input(trace.clone()).build();
        let mut client = connect(server);
        let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let last = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        if let Some(input) = &mut client.input {
            let sent = input
                .write_all(format!("\n \t\r\n{discover}\r\n\n").as_bytes())
                .await;
            assert!(sent.is_ok());
        }
        // The blank lines got no parse error: the first line out is the answer.
        let answer = client.recv().await;
        assert_eq!(answer["id"], 1);
        assert!(answer["result"].is_object(), "{answer}");
        if let Some(mut input) = client.input.take() {
            assert!(input.write_all(last.as_bytes()).await.is_ok());
        }
        let served = tokio::time::timeout(std::time::Duration::from_secs(5), &mut client.served);
        assert!(matches!(served.await, Ok(Ok(Ok(())))));
        assert_eq!(client.output.next_line().await.ok().flatten(), None);
        let traced = std::fs::read_to_string(&trace).unwrap_or_default();
        let _ = std::fs::remove_file(&trace);
        assert_eq!(traced, format!("{discover}\n{last}\n"));
    }
}
