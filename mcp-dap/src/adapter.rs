//! The Adapter actor: owns one debug adapter process (in its own process group) and its DAP
//! `seq` table. Each request in flight has a time limit; the loss of the adapter (its stdout
//! ends, its framing breaks) answers every request in flight at once with the cause, and the
//! Session hears of it (`AdapterNews::Gone`). An answer too large to read fails its request alone:
//! the framing skips it and stays in step, so the adapter is not lost.

use std::collections::HashMap;
use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use futures_util::future::LocalBoxFuture;
use serde::{Serialize, Serializer};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::oneshot;
use tokio_util::codec::{Encoder, FramedRead};

use crate::dap::framing::{DapCodec, Frame, FramingError, MAX_BODY_BYTES, Oversized};
use crate::dap::types::{self, Event, Incoming, Response};
use mcp_bridge::process::{ChildEnv, ChildProcess, spawn};

use crate::adapters::{AdapterDef, PORT_PLACEHOLDER, Reach};

/// How long a DAP request may wait for its response. debugpy answers `launch` only after
/// `configurationDone`, and a `stackTrace` of a deep stack takes a while; the longest a
/// tool waits for its request.
pub const REQUEST_TIME_LIMIT: Duration = Duration::from_secs(30);

/// How long a stopped adapter gets after its stdin closes, and again after SIGTERM to its
/// group, before SIGKILL to the group (the stop steps of `transport::child`).
pub const STOP_GRACE: Duration = Duration::from_millis(500);
/// The longest line read from an adapter's output while looking for the port it printed.
pub const MAX_PRINTED_LINE_BYTES: usize = 4096;

/// How long a TCP adapter may take from its start to accepting the connection.
pub const CONNECT_TIME_LIMIT: Duration = Duration::from_secs(10);

/// How often a TCP adapter that is starting is tried again: a listening socket gives no
/// event before it exists, so the connection is retried.
pub const CONNECT_RETRY_INTERVAL: Duration = Duration::from_millis(25);

/// The adapter's side toward us.
type Writer = Box<dyn AsyncWrite + Unpin>;
/// The adapter's side toward us.
type Reader = Box<dyn AsyncRead + Unpin>;

/// Why a DAP request got no result.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DapError {
    /// The adapter answered `success: false`; its words.
    #[error("{0}")]
    Refused(String),
    /// No response within [`REQUEST_TIME_LIMIT`].
    #[error("the adapter did not answer {0} within {1} s")]
    Timeout(String, u64),
    /// The adapter is gone; the cause.
    #[error("the debug adapter is gone: {0}")]
    Gone(GoneCause),
    /// The response was over the framing's body limit and was skipped: the command, the
    /// body's length in bytes.
    #[error(
        "the adapter's answer to {0} is {1} bytes, over mcp-dap's limit of {MAX_BODY_BYTES} \
         bytes; it was skipped and the session goes on: ask for less (variables: `start` and \
         `count`)"
    )]
    TooLarge(String, usize),
    /// The adapter ended before it answered `initialize` (it is missing something, or it is
    /// not a debug adapter); the cause.
    #[error("the debug adapter ended before it answered initialize: {0}")]
    Broken(GoneCause),
    /// Nothing of what a wait waited for (named) came within its time limit, in seconds.
    #[error("the adapter sent no {0} within {1} s")]
    Silent(String, u64),
}

/// Why the adapter is gone: what every request in flight is answered with, and the state's
/// `cause` (as its text). Cloned to each request in flight, so an I/O error is shared.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GoneCause {
    /// A write to the adapter failed.
    #[error("cannot write to the adapter: {0}")]
    Write(Arc<std::io::Error>),
    /// The adapter's output broke its framing, or its read failed.
    #[error("the adapter's output cannot be read: {0}")]
    Read(FramingError),
    /// The adapter's output ended.
    #[error("the adapter closed its output (it exited or crashed)")]
    Closed,
    /// The session stopped the adapter ([`Stop`]), or ended during its start.
    #[error("the session ended")]
    SessionEnded,
    /// The Adapter actor ended before it answered.
    #[error("the adapter's actor ended")]
    ActorEnded,
}

impl Serialize for GoneCause {
    /// Its text: the state resource shows the cause as a string.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Why an adapter could not be started or connected to (the `launch` and `attach` tools'
/// error after `cannot start the adapter: ` or `cannot attach: `). `name` is the adapter's
/// command as configured; each time limit is [`CONNECT_TIME_LIMIT`].
#[derive(Debug, thiserror::Error)]
pub enum AdapterStartError {
    /// Nothing accepted a connection on the port of a DAP server that runs already.
    #[error(
        "no debug adapter accepted a connection on 127.0.0.1:{port} within {} s: {error}",
        CONNECT_TIME_LIMIT.as_secs()
    )]
    NotListening { port: u16, error: std::io::Error },
    /// The command cannot be run: its text names it and where it was looked for.
    #[error("{}", .0.log_message(None))]
    NotFound(mcp_bridge::process::StartError),
    /// No port of 127.0.0.1 was free for a TCP adapter.
    #[error("no free port: {0}")]
    NoFreePort(std::io::Error),
    /// The process did not start.
    #[error("{name}: {error}")]
    Spawn { name: String, error: std::io::Error },
    /// An adapter that prints its port printed none: its output failed, ended, or said
    /// nothing of a port in time.
    #[error("{name}: {why}")]
    NoPortPrinted { name: String, why: NoPortPrinted },
    /// A TCP adapter did not accept a connection on the port given to it.
    #[error(
        "{name} did not accept a connection on 127.0.0.1:{port} within {} s: {error}",
        CONNECT_TIME_LIMIT.as_secs()
    )]
    NotAccepting {
        name: String,
        port: u16,
        error: std::io::Error,
    },
    /// An adapter printed its port, then did not accept a connection on it.
    #[error(
        "{name} printed the port {port} but did not accept a connection on 127.0.0.1:{port} \
         within {} s: {error}",
        CONNECT_TIME_LIMIT.as_secs()
    )]
    PrintedNotAccepting {
        name: String,
        port: u16,
        error: std::io::Error,
    },
}

/// Why an adapter that prints the port it listens on gave none.
#[derive(Debug, thiserror::Error)]
pub enum NoPortPrinted {
    /// Its output could not be read.
    #[error("its output: {0}")]
    Unreadable(std::io::Error),
    /// Its output ended first.
    #[error("its output ended before it printed the port it listens on")]
    Ended,
    /// Nothing within [`CONNECT_TIME_LIMIT`].
    #[error(
        "it printed no port it listens on within {} s",
        CONNECT_TIME_LIMIT.as_secs()
    )]
    Silent,
}

/// Why no session opens for a child process that a session's adapter announced (DAP's
/// `startDebugging`, debugpy's `debugpyAttach`): the text of the refusal of `startDebugging`
/// and of the line in the parent's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NoChildSession {
    /// The most sessions are open (`sessions::MAX_SESSIONS`, the number).
    #[error("{0} sessions are open, the most at once")]
    Full(usize),
    /// The session does not hand its children to a supervisor.
    #[error("mcp-dap does not follow this session's children")]
    NotFollowed,
    /// The supervisor is gone: mcp-dap is ending.
    #[error("mcp-dap is ending")]
    Ending,
}

/// What the Adapter tells its Session.
#[derive(Message)]
#[rtype(result = "()")]
pub enum AdapterNews {
    /// A DAP event.
    Event(Event),
    /// The adapter is gone; the cause.
    Gone(GoneCause),
    /// The adapter answered `setBreakpoints` for `source`: told before the events read after
    /// the answer, so that the Session applies each word of the adapter in its order.
    BreakpointsSet {
        /// The source's path, as the request named it.
        source: String,
        /// The request's arguments, which a child session's start sends again.
        arguments: Value,
        /// The response's body.
        body: Value,
    },
    /// DAP's `startDebugging` reverse request: its arguments (`request`, `launch` or
    /// `attach`, and the `configuration` of the new session), and where to say whether a
    /// session opens for it (`Err` with the reason when none does). The request is answered
    /// only then, so that a child that gets no session is refused.
    StartDebugging(Value, oneshot::Sender<Result<(), NoChildSession>>),
}

/// Sends one DAP request; the answer is its response's `body` (`null` when none).
#[derive(Message)]
#[rtype(result = "Result<Value, DapError>")]
pub struct Request {
    /// The command.
    pub command: String,
    /// Its arguments.
    pub arguments: Option<Value>,
}

/// Sends a request whose answer is delivered on `reply` (a Session that must not wait in its
/// mailbox for `launch`, which debugpy answers after `configurationDone`).
#[derive(Message)]
#[rtype(result = "()")]
pub struct RequestThen {
    /// The request.
    pub request: Request,
    /// Where its answer goes.
    pub reply: oneshot::Sender<Result<Value, DapError>>,
}

/// Stops the adapter: its stdin closes, then the stop steps of its process group.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Stop;

/// A request in flight.
struct InFlight {
    command: String,
    /// The source path and the arguments of a `setBreakpoints`.
    source: Option<(String, Value)>,
    reply: oneshot::Sender<Result<Value, DapError>>,
    timer: SpawnHandle,
}

/// The actor.
pub struct Adapter {
    process: Option<ChildProcess>,
    writer: Option<Writer>,
    stdout: Option<Reader>,
    next_seq: i64,
    in_flight: HashMap<i64, InFlight>,
    session: Recipient<AdapterNews>,
    gone: Option<GoneCause>,
}

impl Adapter {
    /// Starts `adapter` in its own process group and connects to it: its stdio, or for a TCP
    /// adapter a connection to the port put in its arguments (retried until it listens, at
    /// most [`CONNECT_TIME_LIMIT`]). Call it on the DAP thread: the child gets SIGKILL when
    /// the thread that forked it ends (`transport::isolation`).
    ///
    /// Errors: [`AdapterStartError`], an adapter that cannot be started (its text names its
    /// command and where it was looked for) or that did not accept the connection.
    pub fn spawn(
        adapter: &AdapterDef,
        session: Recipient<AdapterNews>,
    ) -> Result<LocalBoxFuture<'static, Result<Self, AdapterStartError>>, AdapterStartError> {
        if let Reach::Listening(port) = adapter.reach {
            // A DAP server that runs already (debugpy.listen() in the program): no process of
            // ours, only the connection.
            return Ok(Box::pin(async move {
                let stream = connect(port)
                    .await
                    .map_err(|error| AdapterStartError::NotListening { port, error })?;
                let (read, write) = stream.into_split();
                Ok(Self::over(None, Box::new(write), Box::new(read), session))
            }));
        }
        let path_var = std::env::var_os("PATH");
        let resolved = mcp_bridge::process::resolve(&adapter.command, path_var.as_deref())
            .map_err(AdapterStartError::NotFound)?;
        let port = match adapter.reach {
            Reach::Stdio | Reach::Listening(_) | Reach::Printed => None,
            Reach::Tcp => Some(free_port().map_err(AdapterStartError::NoFreePort)?),
        };
        let printed = adapter.reach == Reach::Printed;
        let args: Vec<OsString> = adapter
            .args
            .iter()
            .map(|a| match port {
                Some(port) => a
                    .to_string_lossy()
                    .replace(PORT_PLACEHOLDER, &port.to_string())
                    .into(),
                None => a.clone(),
            })
            .collect();
        let name = adapter.command.to_string_lossy().into_owned();
        let (process, io) = spawn(
            &resolved.into_os_string(),
            &args,
            &ChildEnv::default(),
            &crate::children::CHILDREN,
        )
        .map_err(|error| AdapterStartError::Spawn {
            name: name.clone(),
            error,
        })?;
        Ok(Box::pin(async move {
            let port = match printed {
                false => port,
                true => match read_printed_port(io.stdout).await {
                    Ok((port, rest)) => {
                        // What it prints after the port is not DAP either.
                        drain(rest);
                        return Self::connected(port, process, session, name).await;
                    }
                    Err(why) => {
                        process.stop(STOP_GRACE).await;
                        return Err(AdapterStartError::NoPortPrinted { name, why });
                    }
                },
            };
            let (writer, reader): (Writer, Reader) = match port {
                None => (Box::new(io.stdin), Box::new(io.stdout)),
                Some(port) => match connect(port).await {
                    Ok(stream) => {
                        // What the adapter prints is not DAP: read and dropped, so that a
                        // full pipe never blocks it.
                        drain(io.stdout);
                        let (read, write) = stream.into_split();
                        (Box::new(write), Box::new(read))
                    }
                    Err(error) => {
                        process.stop(STOP_GRACE).await;
                        return Err(AdapterStartError::NotAccepting { name, port, error });
                    }
                },
            };
            Ok(Self::over(Some(process), writer, reader, session))
        }))
    }

    fn send(
        &mut self,
        ctx: &mut Context<Self>,
        request: Request,
        reply: oneshot::Sender<Result<Value, DapError>>,
    ) {
        if let Some(cause) = &self.gone {
            let _ = reply.send(Err(DapError::Gone(cause.clone())));
            return;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let source = request
            .arguments
            .as_ref()
            .filter(|_| request.command == "setBreakpoints")
            .and_then(|a| {
                Some((
                    a.get("source")?.get("path")?.as_str()?.to_owned(),
                    a.clone(),
                ))
            });
        let message = types::request(seq, &request.command, request.arguments);
        self.write(ctx, message);
        let timer = ctx.run_later(REQUEST_TIME_LIMIT, move |act, _| {
            if let Some(flight) = act.in_flight.remove(&seq) {
                let _ = flight.reply.send(Err(DapError::Timeout(
                    flight.command,
                    REQUEST_TIME_LIMIT.as_secs(),
                )));
            }
        });
        self.in_flight.insert(
            seq,
            InFlight {
                command: request.command,
                source,
                reply,
                timer,
            },
        );
    }

    /// Writes one message; the writes keep their order because each waits for the one before
    /// (the actor's `wait`).
    fn write(&mut self, ctx: &mut Context<Self>, message: Value) {
        let Some(mut writer) = self.writer.take() else {
            return;
        };
        let mut bytes = bytes::BytesMut::new();
        if let Err(e) = DapCodec::default().encode(&message, &mut bytes) {
            self.writer = Some(writer);
            tracing::debug!(target: "mcp-dap", "a request that cannot be written: {e}");
            return;
        }
        let write = async move {
            let result = writer.write_all(&bytes).await;
            (writer, result)
        };
        ctx.wait(
            write
                .into_actor(self)
                .map(|(writer, result), act, ctx| match result {
                    Ok(()) => act.writer = Some(writer),
                    Err(e) => act.lose(ctx, GoneCause::Write(Arc::new(e))),
                }),
        );
    }

    fn answer(&mut self, ctx: &mut Context<Self>, response: Response) {
        let Some(flight) = self.in_flight.remove(&response.request_seq) else {
            // A response to a request that timed out, or to none: nothing waits for it.
            return;
        };
        ctx.cancel_future(flight.timer);
        if let (true, Some((source, arguments))) = (response.success, flight.source) {
            self.session.do_send(AdapterNews::BreakpointsSet {
                source,
                arguments,
                body: response.body.clone().unwrap_or(Value::Null),
            });
        }
        let result = if response.success {
            Ok(response.body.unwrap_or(Value::Null))
        } else {
            Err(DapError::Refused(response.error_text()))
        };
        let _ = flight.reply.send(result);
    }

    /// A body too large to read: the request it answers fails with [`DapError::TooLarge`]. Its
    /// `request_seq` comes from the scan of the skipped body, wherever the adapter put it; a
    /// body without one (an event) is only logged.
    fn skipped(&mut self, ctx: &mut Context<Self>, oversized: Oversized) {
        let flight = oversized
            .request_seq()
            .and_then(|seq| self.in_flight.remove(&seq));
        let Some(flight) = flight else {
            tracing::debug!(target: "mcp-dap",
                "a message of {} bytes of the adapter skipped: {:?}",
                oversized.body_bytes, oversized.members);
            return;
        };
        ctx.cancel_future(flight.timer);
        let _ = flight.reply.send(Err(DapError::TooLarge(
            flight.command,
            oversized.body_bytes,
        )));
    }

    /// The adapter is gone: every request in flight gets the cause at once, the Session hears
    /// of it, and the process group is stopped.
    fn lose(&mut self, ctx: &mut Context<Self>, cause: GoneCause) {
        if self.gone.is_some() {
            return;
        }
        for (_, flight) in self.in_flight.drain() {
            ctx.cancel_future(flight.timer);
            let _ = flight.reply.send(Err(DapError::Gone(cause.clone())));
        }
        self.session.do_send(AdapterNews::Gone(cause.clone()));
        self.gone = Some(cause);
        self.writer = None;
        if let Some(process) = self.process.take() {
            ctx.spawn(
                async move {
                    process.stop(STOP_GRACE).await;
                }
                .into_actor(self),
            );
        }
    }
}

/// A port of 127.0.0.1 that was free a moment ago, for a TCP adapter to listen on.
fn free_port() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(listener.local_addr()?.port())
}

impl Adapter {
    /// The adapter actor over `writer` and `reader` (its process, when it started one),
    /// with no request in flight.
    fn over(
        process: Option<ChildProcess>,
        writer: Writer,
        reader: Reader,
        session: Recipient<AdapterNews>,
    ) -> Self {
        Self {
            process,
            writer: Some(writer),
            stdout: Some(reader),
            next_seq: 1,
            in_flight: HashMap::new(),
            session,
            gone: None,
        }
    }

    /// The adapter `process` that printed `port`, once connected to it.
    async fn connected(
        port: u16,
        process: ChildProcess,
        session: Recipient<AdapterNews>,
        name: String,
    ) -> Result<Self, AdapterStartError> {
        match connect(port).await {
            Ok(stream) => {
                let (read, write) = stream.into_split();
                Ok(Self::over(
                    Some(process),
                    Box::new(write),
                    Box::new(read),
                    session,
                ))
            }
            Err(error) => {
                process.stop(STOP_GRACE).await;
                Err(AdapterStartError::PrintedNotAccepting { name, port, error })
            }
        }
    }
}

/// Reads and drops what `out` holds until its end, so that a full pipe never blocks the
/// process writing it.
fn drain(mut out: impl AsyncRead + Unpin + 'static) {
    tokio::task::spawn_local(async move {
        let _ = tokio::io::copy(&mut out, &mut tokio::io::sink()).await;
    });
}

/// The port an adapter prints ([`adapters::printed_port`]) in the lines of `out`, within
/// [`CONNECT_TIME_LIMIT`], each line at most [`MAX_PRINTED_LINE_BYTES`]; then the rest of
/// `out`. Errors: [`NoPortPrinted`], the output failed or ended, or the time ran out, first.
async fn read_printed_port<R: AsyncRead + Unpin + 'static>(
    out: R,
) -> Result<(u16, tokio::io::BufReader<R>), NoPortPrinted> {
    use tokio::io::AsyncBufReadExt;
    let mut reader = tokio::io::BufReader::new(out);
    let find = async {
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = (&mut reader)
                .take(MAX_PRINTED_LINE_BYTES as u64)
                .read_until(b'\n', &mut line)
                .await
                .map_err(NoPortPrinted::Unreadable)?;
            if n == 0 {
                return Err(NoPortPrinted::Ended);
            }
            if let Some(port) = crate::adapters::printed_port(&String::from_utf8_lossy(&line)) {
                return Ok(port);
            }
        }
    };
    match tokio::time::timeout(CONNECT_TIME_LIMIT, find).await {
        Ok(Ok(port)) => Ok((port, reader)),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(NoPortPrinted::Silent),
    }
}

/// Connects to the adapter on `port`, trying again until it listens.
async fn connect(port: u16) -> std::io::Result<tokio::net::TcpStream> {
    let deadline = tokio::time::Instant::now() + CONNECT_TIME_LIMIT;
    loop {
        let past = || tokio::time::Instant::now() >= deadline;
        match tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            Ok(stream) if !to_itself(&stream) => return Ok(stream),
            // A connection to a port that nobody listens on can be given that same port as
            // its own and connect to itself (TCP's simultaneous open, RFC 9293 3.5): no
            // adapter is there, so it counts as refused.
            Ok(_) if past() => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionRefused,
                    "nothing listens on the port (a connection to it reached itself)",
                ));
            }
            Err(e) if past() => return Err(e),
            Ok(_) | Err(_) => tokio::time::sleep(CONNECT_RETRY_INTERVAL).await,
        }
    }
}

/// Whether `stream` is connected to itself (its local and peer addresses are one).
fn to_itself(stream: &tokio::net::TcpStream) -> bool {
    matches!((stream.local_addr(), stream.peer_addr()), (Ok(local), Ok(peer)) if local == peer)
}

impl Actor for Adapter {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        if let Some(stdout) = self.stdout.take() {
            ctx.add_stream(FramedRead::new(stdout, DapCodec::default()));
        }
    }
}

impl StreamHandler<Result<Frame, FramingError>> for Adapter {
    fn handle(&mut self, item: Result<Frame, FramingError>, ctx: &mut Context<Self>) {
        match item {
            Ok(Frame::Message(Incoming::Response(response))) => self.answer(ctx, response),
            Ok(Frame::Message(Incoming::Event(event))) => {
                self.session.do_send(AdapterNews::Event(event));
            }
            Ok(Frame::Message(Incoming::Request(request))) => {
                // DAP "Reverse Requests": a client that does not support one answers it with
                // `success: false` (runInTerminal is only sent to a client that declared
                // `supportsRunInTerminalRequest`, which this one does not). `startDebugging`
                // (a child session, declared with `supportsStartDebuggingRequest`) is
                // answered once the Sessions actor says whether a session opens for it: a
                // refusal makes debugpy run the child on without a debugger itself
                // (`adapter/servers.py`: "No clients to wait for - unblocking"), with no
                // client session of ours to end.
                if request.command != "startDebugging" {
                    let seq = self.next_seq;
                    self.next_seq += 1;
                    self.write(
                        ctx,
                        types::refusal(seq, &request, "not supported by mcp-dap"),
                    );
                    return;
                }
                let (reply, room) = oneshot::channel();
                let arguments = request.arguments.clone().unwrap_or(Value::Null);
                self.session
                    .do_send(AdapterNews::StartDebugging(arguments, reply));
                ctx.spawn(room.into_actor(self).map(move |room, act, ctx| {
                    let seq = act.next_seq;
                    act.next_seq += 1;
                    let answer = match room {
                        Ok(Ok(())) => types::acceptance(seq, &request),
                        Ok(Err(reason)) => types::refusal(seq, &request, &reason.to_string()),
                        Err(_) => types::refusal(seq, &request, "the session ended"),
                    };
                    act.write(ctx, answer);
                }));
            }
            Ok(Frame::Message(Incoming::Unknown)) => {}
            Ok(Frame::Oversized(oversized)) => self.skipped(ctx, oversized),
            Ok(Frame::Unreadable(why)) => {
                tracing::debug!(target: "mcp-dap", "an unreadable message of the adapter: {why}");
            }
            Err(e) => self.lose(ctx, GoneCause::Read(e)),
        }
    }

    fn finished(&mut self, ctx: &mut Context<Self>) {
        self.lose(ctx, GoneCause::Closed);
    }
}

impl Handler<Request> for Adapter {
    type Result = ResponseFuture<Result<Value, DapError>>;

    fn handle(&mut self, request: Request, ctx: &mut Context<Self>) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        self.send(ctx, request, reply);
        Box::pin(async move {
            answer
                .await
                .unwrap_or_else(|_| Err(DapError::Gone(GoneCause::ActorEnded)))
        })
    }
}

impl Handler<RequestThen> for Adapter {
    type Result = ();

    fn handle(&mut self, message: RequestThen, ctx: &mut Context<Self>) {
        self.send(ctx, message.request, message.reply);
    }
}

impl Handler<Stop> for Adapter {
    type Result = ();

    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        self.lose(ctx, GoneCause::SessionEnded);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_start_names_the_adapter_and_the_time_limit() {
        let refused = || std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let secs = CONNECT_TIME_LIMIT.as_secs();
        for (error, text) in [
            (
                AdapterStartError::NoPortPrinted {
                    name: "dap".into(),
                    why: NoPortPrinted::Ended,
                },
                "dap: its output ended before it printed the port it listens on".to_owned(),
            ),
            (
                AdapterStartError::NoPortPrinted {
                    name: "dap".into(),
                    why: NoPortPrinted::Silent,
                },
                format!("dap: it printed no port it listens on within {secs} s"),
            ),
            (
                AdapterStartError::NotAccepting {
                    name: "dap".into(),
                    port: 4711,
                    error: refused(),
                },
                format!(
                    "dap did not accept a connection on 127.0.0.1:4711 within {secs} s: {}",
                    refused()
                ),
            ),
            (
                AdapterStartError::PrintedNotAccepting {
                    name: "dap".into(),
                    port: 4711,
                    error: refused(),
                },
                format!(
                    "dap printed the port 4711 but did not accept a connection on \
                     127.0.0.1:4711 within {secs} s: {}",
                    refused()
                ),
            ),
            (
                AdapterStartError::NotListening {
                    port: 5678,
                    error: refused(),
                },
                format!(
                    "no debug adapter accepted a connection on 127.0.0.1:5678 within {secs} s: {}",
                    refused()
                ),
            ),
        ] {
            assert_eq!(error.to_string(), text);
        }
    }

    #[tokio::test]
    async fn a_connection_to_itself_is_told_from_one_to_a_listener() {
        // A socket bound to a port and connected to that same port: TCP's simultaneous open
        // connects it to itself, as a connect to a port nobody listens on may.
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket.bind(([127, 0, 0, 1], 0).into()).expect("bound");
        let own = socket.local_addr().expect("its address");
        let itself = socket.connect(own).await.expect("connected to itself");
        assert!(to_itself(&itself));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("a listener");
        let port = listener.local_addr().expect("its address").port();
        let other = connect(port).await.expect("connected to the listener");
        assert!(!to_itself(&other));
    }

    #[test]
    fn a_lost_adapter_is_told_with_its_cause() {
        let pipe = || std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        for (error, text) in [
            (
                DapError::Gone(GoneCause::Write(Arc::new(pipe()))),
                format!(
                    "the debug adapter is gone: cannot write to the adapter: {}",
                    pipe()
                ),
            ),
            (
                DapError::Gone(GoneCause::Read(FramingError::Truncated(2))),
                "the debug adapter is gone: the adapter's output cannot be read: the stream \
                 ended inside a message (2 bytes unread)"
                    .to_owned(),
            ),
            (
                DapError::Gone(GoneCause::Closed),
                "the debug adapter is gone: the adapter closed its output (it exited or crashed)"
                    .to_owned(),
            ),
            (
                DapError::Gone(GoneCause::SessionEnded),
                "the debug adapter is gone: the session ended".to_owned(),
            ),
            (
                DapError::Broken(GoneCause::ActorEnded),
                "the debug adapter ended before it answered initialize: the adapter's actor ended"
                    .to_owned(),
            ),
        ] {
            assert_eq!(error.to_string(), text);
        }
        // The state resource shows the cause as its text.
        assert_eq!(
            serde_json::to_value(GoneCause::Closed).ok(),
            Some(Value::from(
                "the adapter closed its output (it exited or crashed)"
            ))
        );
    }

    #[test]
    fn a_refused_child_session_says_why() {
        for (refusal, text) in [
            (
                NoChildSession::Full(8),
                "8 sessions are open, the most at once",
            ),
            (
                NoChildSession::NotFollowed,
                "mcp-dap does not follow this session's children",
            ),
            (NoChildSession::Ending, "mcp-dap is ending"),
        ] {
            assert_eq!(refusal.to_string(), text);
        }
    }
}
