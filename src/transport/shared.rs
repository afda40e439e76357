//! One 2026-07-28 upstream shared by the bridges of many sessions (`mcp-bridge --serve-http
//! --upstream-lifetime shared`): one run of the server (a child process, or a client of a
//! URL) for every client. Each bridge opens a connection of it ([`SharedUpstream::connect`],
//! through [`super::open::UpstreamSpec::Shared`]) as it would open its own upstream: a
//! transport whose frames are the messages of that bridge's requests
//! (`protocol::rules::shared_upstream` gives each request an id of the upstream's own and
//! routes every message back).
//!
//! - The upstream opens at the first connection, and again at the first connection after it
//!   ended.
//! - A connection that closes (its session ended) has its requests in flight cancelled
//!   upstream; the upstream goes on.
//! - The upstream's end ends every connection with its cause: each bridge ends as at the
//!   loss of its own upstream (its session ends), and the next session starts a new run.
//! - A 2026-07-28 client's request without a session (`server::http`'s [`Relay`]) is a
//!   connection of its own for the time of that request: its notifications go to its
//!   answer's stream, its response ends it, and its client going away cancels it upstream.
//! - A 2025-11-25 server cannot be shared: its bridges would each send it an `initialize`.
//!   A connection's `initialize` gets an error that says so
//!   ([`NOT_SHARED_MESSAGE`]), and that session's era fallback fails.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::LocalBoxFuture;
use futures_util::stream::LocalBoxStream;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::children::ChildRegistry;
use super::memory::frame_message;
use super::program::SpawnError;
use super::queue::{Delivery, EDITOR_QUEUE, OutFrame, QueueStats, Sent, UPSTREAM_QUEUE};
use super::upstream::{Abandoned, EndCause, OpenOptions, Opened, Transport, TransportEvent};
use super::writer::Writer;
use crate::protocol::revisions::errors::{Cause, ErrorObject};
use crate::protocol::revisions::methods;
use crate::protocol::rules::shared_upstream::{ConnectionId, Routes, Up};
use crate::protocol::wire::framing::Frame;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc;
#[cfg(feature = "http-server")]
use crate::server::http::Relay;

/// Messages queued toward each connection, and from it (1024). The shared upstream's reader
/// never waits for one connection: a connection whose queue is full (its client reads
/// nothing, so its bridge takes nothing) ends, with its requests cancelled upstream, so that
/// one client that stops reading stalls no other (nothing is dropped silently: that session
/// ends, and its client starts a new one).
pub const SHARED_CHANNEL_MESSAGES: usize = 1024;

/// The error of a connection's `initialize`: a server that answers only 2025-11-25 cannot be
/// shared, as each session would initialize it again.
pub const NOT_SHARED_MESSAGE: &str = "The server speaks MCP 2025-11-25, which keeps one session per connection: serve it with --upstream-lifetime per-session";

/// The handle of a shared upstream: clones share it, and it may travel in the actors'
/// messages; the upstream itself lives in a task of the actor thread.
#[derive(Clone)]
pub struct SharedUpstream {
    commands: mpsc::UnboundedSender<Command>,
    /// The ids of the connections, given out here so that a relayed request knows its own.
    next_connection: Arc<AtomicU64>,
    /// The name the editor sees when the server gives none (the spec's).
    fallback_name: Option<String>,
    /// What the runs did, for a readiness report.
    runs: Arc<Mutex<Runs>>,
}

/// What the runs of a shared upstream did so far ([`SharedUpstream::runs`]).
#[derive(Clone, Debug, Default)]
pub struct Runs {
    /// A run is up.
    pub running: bool,
    /// Runs started so far.
    pub started: u64,
    /// Why the last run ended, when one did.
    pub last_end: Option<String>,
    /// Why the last start failed, when it did (cleared by the next run).
    pub failed: Option<String>,
    /// When the run that is up, or the last one, started.
    pub last_started: Option<std::time::Instant>,
    /// How long the last run that ended lived.
    pub last_lived: Option<Duration>,
}

impl fmt::Debug for SharedUpstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedUpstream(..)")
    }
}

/// What the handle asks of the task of the shared upstream.
enum Command {
    /// A bridge's new connection: its two channels.
    Connect {
        connection: ConnectionId,
        down: mpsc::Sender<Down>,
        up: mpsc::Receiver<Vec<u8>>,
    },
    /// A 2026-07-28 client's request, a connection for its time.
    Relay {
        connection: ConnectionId,
        request: Value,
        lines: mpsc::Sender<String>,
        done: oneshot::Sender<Option<Value>>,
    },
    /// A relayed request's client went away: it is cancelled upstream.
    Abandon(ConnectionId),
    /// Stop the upstream with its own shutdown steps.
    Close {
        grace: Duration,
        done: oneshot::Sender<Option<EndCause>>,
    },
}

/// What goes down one connection.
enum Down {
    /// A message of the upstream, in the connection's own ids.
    Line(String),
    /// The upstream ended, and why.
    End(EndCause),
}

/// The state of the shared upstream, in its task and the tasks it starts (on the actor
/// thread).
#[derive(Clone)]
struct HubRef(Rc<RefCell<Hub>>);

/// What opens a run of the upstream (a command or a URL: `transport::open::open` of its
/// spec).
pub type OpenRun = Box<dyn Fn(OpenOptions) -> Result<Opened, SpawnError>>;

struct Hub {
    /// Opens a run of the upstream.
    open: OpenRun,
    routes: Routes,
    /// Where each connection's messages go.
    connections: HashMap<ConnectionId, Sink>,
    upstream: Option<Box<dyn Transport>>,
    /// Counts the runs of the upstream: the reader of an earlier one changes nothing.
    generation: u64,
    /// The writer the upstream's transport is paced by: nothing is written to it, so it
    /// always has room (each connection is paced by its own channel instead).
    pace: Writer,
    /// The receiving end of `pace`'s channel, kept open.
    _paced: mpsc::Receiver<String>,
    /// The counters of the queue toward the upstream.
    stats: Arc<QueueStats>,
    /// What the runs did ([`SharedUpstream::runs`]).
    runs: Arc<Mutex<Runs>>,
    /// The longest line of the upstream (`--max-line-bytes`).
    max_line_bytes: usize,
    /// The registry of the process's children, which a run of a command joins.
    children: Arc<ChildRegistry>,
}

/// Where one connection's messages go.
enum Sink {
    /// A bridge's connection.
    Bridge(mpsc::Sender<Down>),
    /// A relayed request: its notifications to its answer's stream, its response to `done`.
    Post {
        lines: mpsc::Sender<String>,
        done: oneshot::Sender<Option<Value>>,
        /// The request's own id, for the error of the upstream's end.
        id: Value,
    },
}

impl SharedUpstream {
    /// Starts the task of a shared upstream, whose runs `open` opens (the first at the first
    /// connection) with lines up to `max_line_bytes` and its child in `children`, named
    /// `fallback_name` when the server gives no name. Call on the actor thread.
    pub fn start(
        fallback_name: Option<String>,
        open: OpenRun,
        max_line_bytes: usize,
        children: Arc<ChildRegistry>,
    ) -> SharedUpstream {
        let (to_pace, paced) = mpsc::channel(1);
        let pace = Writer::for_line_channel(to_pace, EDITOR_QUEUE, QueueStats::new("shared_pace"));
        let runs = Arc::new(Mutex::new(Runs::default()));
        let hub = HubRef(Rc::new(RefCell::new(Hub {
            runs: runs.clone(),
            open,
            routes: Routes::default(),
            connections: HashMap::new(),
            upstream: None,
            generation: 0,
            pace,
            _paced: paced,
            stats: QueueStats::new("upstream_queue"),
            max_line_bytes,
            children,
        })));
        let (commands, received) = mpsc::unbounded_channel();
        tokio::task::spawn_local(hub.run(received));
        SharedUpstream {
            commands,
            next_connection: Arc::new(AtomicU64::new(1)),
            fallback_name,
            runs,
        }
    }

    /// What the runs did so far.
    pub fn runs(&self) -> Runs {
        lock(&self.runs).clone()
    }

    /// The name the editor sees when the server gives none (the spec's).
    pub fn fallback_name(&self) -> Option<String> {
        self.fallback_name.clone()
    }

    fn new_connection(&self) -> ConnectionId {
        self.next_connection.fetch_add(1, Ordering::Relaxed)
    }

    /// Opens one bridge's connection; the upstream opens first when none runs. When it
    /// cannot open, the connection ends at once with the cause (its bridge reports the loss
    /// of its upstream to its client).
    pub fn connect(&self, options: OpenOptions) -> Opened {
        let (down, from_upstream) = mpsc::channel(SHARED_CHANNEL_MESSAGES);
        let (up, from_bridge) = mpsc::channel::<Vec<u8>>(SHARED_CHANNEL_MESSAGES);
        let _ = self.commands.send(Command::Connect {
            connection: self.new_connection(),
            down,
            up: from_bridge,
        });
        let sink = Writer::for_channel(up, Some, UPSTREAM_QUEUE, options.queue_stats);
        Opened {
            transport: Box::new(Connection { sink }),
            events: connection_events(from_upstream, options.max_line_bytes, options.pace),
        }
    }

    /// Stops the upstream with its own shutdown steps (the process's stop, once every
    /// session has ended): how it ended, when known.
    pub async fn close(&self, grace: Duration) -> Option<EndCause> {
        let (done, ended) = oneshot::channel();
        self.commands.send(Command::Close { grace, done }).ok()?;
        ended.await.ok().flatten()
    }
}

#[cfg(feature = "http-server")]
impl Relay for SharedUpstream {
    fn relay(
        &self,
        request: Value,
        lines: mpsc::Sender<String>,
    ) -> futures_util::future::BoxFuture<'static, Option<Value>> {
        let connection = self.new_connection();
        let (done, response) = oneshot::channel();
        let sent = self.commands.send(Command::Relay {
            connection,
            request,
            lines,
            done,
        });
        // Dropped before the response (its client went away): the request is cancelled.
        let abandon = Abandon {
            commands: self.commands.clone(),
            connection: Some(connection),
        };
        Box::pin(async move {
            // The whole guard moves into the future (not only the field set below).
            let mut abandon = abandon;
            sent.ok()?;
            let answer = response.await.ok().flatten();
            // Answered (or ended): nothing to cancel.
            abandon.connection = None;
            answer
        })
    }
}

/// Cancels a relayed request upstream when its future is dropped before its end.
struct Abandon {
    commands: mpsc::UnboundedSender<Command>,
    /// The request's connection while it runs.
    connection: Option<ConnectionId>,
}

impl Drop for Abandon {
    fn drop(&mut self) {
        if let Some(connection) = self.connection {
            let _ = self.commands.send(Command::Abandon(connection));
        }
    }
}

impl HubRef {
    /// The task of the shared upstream: connections come and go until [`Command::Close`].
    async fn run(self, mut commands: mpsc::UnboundedReceiver<Command>) {
        while let Some(command) = commands.recv().await {
            match command {
                Command::Connect {
                    connection,
                    down,
                    up,
                } => {
                    if let Err(cause) = self.running() {
                        tokio::task::spawn_local(async move {
                            let _ = down.send(Down::End(cause)).await;
                        });
                        continue;
                    }
                    self.0
                        .borrow_mut()
                        .connections
                        .insert(connection, Sink::Bridge(down));
                    tokio::task::spawn_local(read_connection(self.clone(), connection, up));
                }
                Command::Relay {
                    connection,
                    request,
                    lines,
                    done,
                } => {
                    let id = request.get("id").cloned().unwrap_or(Value::Null);
                    if let Err(cause) = self.running() {
                        let _ = done.send(Some(ended_answer(&id, &cause)));
                        continue;
                    }
                    self.0
                        .borrow_mut()
                        .connections
                        .insert(connection, Sink::Post { lines, done, id });
                    self.up(connection, request);
                }
                Command::Abandon(connection) => self.forget(connection),
                Command::Close { grace, done } => {
                    let upstream = {
                        let mut hub = self.0.borrow_mut();
                        hub.generation += 1;
                        hub.upstream.take()
                    };
                    let ended = match upstream {
                        Some(upstream) => upstream.close(grace).await,
                        None => None,
                    };
                    let _ = done.send(ended);
                    return;
                }
            }
        }
    }

    /// Opens a run of the upstream when none runs; why it cannot.
    fn running(&self) -> Result<(), EndCause> {
        let mut hub = self.0.borrow_mut();
        if hub.upstream.is_some() {
            return Ok(());
        }
        let options = OpenOptions {
            max_line_bytes: hub.max_line_bytes,
            pace: hub.pace.clone(),
            queue_stats: hub.stats.clone(),
            children: hub.children.clone(),
        };
        match (hub.open)(options) {
            Ok(opened) => {
                hub.generation += 1;
                hub.upstream = Some(opened.transport);
                {
                    let mut runs = lock(&hub.runs);
                    runs.running = true;
                    runs.started += 1;
                    runs.failed = None;
                    runs.last_started = Some(std::time::Instant::now());
                }
                tokio::task::spawn_local(read_upstream(
                    self.clone(),
                    hub.generation,
                    opened.events,
                ));
                Ok(())
            }
            Err(e) => {
                tracing::error!(target: "upstream", "the shared upstream did not start: {e}");
                lock(&hub.runs).failed = Some(e.to_string());
                Err(EndCause::NotStarted(e.to_string()))
            }
        }
    }

    /// Sends `message` of `connection` up, or answers it at once when it cannot go.
    fn up(&self, connection: ConnectionId, message: Value) {
        let mut hub = self.0.borrow_mut();
        if message.get("method").and_then(Value::as_str) == Some(methods::INITIALIZE) {
            // The era fallback of this connection's bridge: the server is a 2025-11-25 one.
            let id = message.get("id").and_then(Id::from_value);
            let mut error = Cause::Rpc.error(None);
            error.message = NOT_SHARED_MESSAGE.into();
            let answer = jsonrpc::error_response(id.as_ref(), error);
            hub.reply(connection, answer);
            return;
        }
        match hub.routes.up(connection, message) {
            Up::Request { id, message } => {
                let sent = match &hub.upstream {
                    Some(upstream) => upstream.send(&message, Delivery::Request(upstream_id(id))),
                    None => Sent::Closed,
                };
                let cause = match sent {
                    Sent::Queued => return,
                    Sent::Refused | Sent::Dropped => Cause::UpstreamBusy,
                    Sent::Closed => Cause::UpstreamExited,
                };
                if let Some((connection, own)) = hub.routes.take(id) {
                    let answer =
                        jsonrpc::error_response(Id::from_value(&own).as_ref(), cause.error(None));
                    hub.reply(connection, answer);
                }
            }
            Up::Notification(message) => {
                if let Some(upstream) = &hub.upstream {
                    upstream.send(&message, Delivery::Always);
                }
            }
            Up::Nothing(why) => {
                tracing::debug!(target: "upstream", "shared upstream: dropped {why}");
            }
        }
    }

    /// The connection closed: its requests in flight are cancelled upstream.
    fn forget(&self, connection: ConnectionId) {
        let mut hub = self.0.borrow_mut();
        hub.connections.remove(&connection);
        let cancels = hub.routes.forget(connection);
        if let Some(upstream) = &hub.upstream {
            for cancel in cancels {
                upstream.send(&cancel, Delivery::Always);
            }
        }
    }
}

impl Hub {
    /// Gives `answer` (an answer the hub makes itself) to `connection` without waiting.
    fn reply(&mut self, connection: ConnectionId, answer: Value) {
        match self.connections.get(&connection) {
            Some(Sink::Bridge(channel)) => {
                let channel = channel.clone();
                tokio::task::spawn_local(async move {
                    let _ = channel.send(Down::Line(answer.to_string())).await;
                });
            }
            Some(Sink::Post { .. }) => {
                if let Some(Sink::Post { done, .. }) = self.connections.remove(&connection) {
                    let _ = done.send(Some(answer));
                }
            }
            None => {}
        }
    }
}

/// The answer of a relayed request `id` when the upstream is not running (`cause`).
fn ended_answer(id: &Value, cause: &EndCause) -> Value {
    let error = Cause::UpstreamExited.error(Some(Value::from(cause.to_string())));
    jsonrpc::error_response(Id::from_value(id).as_ref(), error)
}

/// Gives the upstream's `message` to `connection` without waiting; a relayed request's
/// response ends its connection. A connection that has no room for it (its client reads
/// nothing) fell behind: it ends, as [`SHARED_CHANNEL_MESSAGES`] says.
fn deliver(hub: &HubRef, connection: ConnectionId, message: Value) {
    let is_response = message.get("method").is_none();
    let fell_behind = {
        let mut hub = hub.0.borrow_mut();
        match hub.connections.get(&connection) {
            // One place stays for the end, which says why.
            Some(Sink::Bridge(channel)) if channel.capacity() > 1 => {
                let _ = channel.try_send(Down::Line(message.to_string()));
                false
            }
            Some(Sink::Bridge(channel)) => {
                let waiting = channel.max_capacity() - channel.capacity();
                let _ = channel.try_send(Down::End(EndCause::FellBehind(waiting)));
                true
            }
            Some(Sink::Post { lines, .. }) if !is_response => {
                // The answer's stream takes its lines as its client reads them; a closed one
                // is a request whose client went away, which its relay abandons.
                matches!(
                    lines.try_send(message.to_string()),
                    Err(mpsc::error::TrySendError::Full(_))
                )
            }
            Some(Sink::Post { .. }) => {
                if let Some(Sink::Post { done, .. }) = hub.connections.remove(&connection) {
                    let _ = done.send(Some(message));
                }
                false
            }
            None => false,
        }
    };
    if fell_behind {
        tracing::warn!(target: "upstream", "a client of the shared server read none of its messages: its session or request ends, so the others go on");
        hub.forget(connection);
    }
}

/// The state behind `mutex`: nothing panics while one of these locks is held, so a poisoned
/// one holds a whole state.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The upstream id `id` as a JSON-RPC id.
fn upstream_id(id: u64) -> Id {
    i64::try_from(id).map_or(Id::UInt(id), Id::Int)
}

/// Reads one bridge's messages toward the upstream until the bridge closes its transport.
async fn read_connection(
    hub: HubRef,
    connection: ConnectionId,
    mut from_bridge: mpsc::Receiver<Vec<u8>>,
) {
    while let Some(bytes) = from_bridge.recv().await {
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(message) => hub.up(connection, message),
            Err(_) => {
                tracing::debug!(target: "upstream", "shared upstream: a frame of a bridge that is no JSON")
            }
        }
    }
    hub.forget(connection);
}

/// Reads the upstream of run `generation` and routes each message to its connection; at its
/// end, ends every connection.
async fn read_upstream(
    hub: HubRef,
    generation: u64,
    mut events: LocalBoxStream<'static, TransportEvent>,
) {
    let mut cause = EndCause::PeerDropped;
    while let Some(event) = events.next().await {
        let message = match event {
            TransportEvent::Frame(Frame::Line(line)) => {
                match serde_json::from_slice::<Value>(&line) {
                    Ok(message) => message,
                    Err(_) => {
                        tracing::warn!(target: "upstream", "the shared upstream sent a line that is no JSON");
                        continue;
                    }
                }
            }
            TransportEvent::Frame(Frame::TooLong { .. }) => {
                tracing::warn!(target: "upstream", "the shared upstream sent a line over --max-line-bytes");
                continue;
            }
            TransportEvent::Response { id, result } => {
                let result = result.to_value().unwrap_or(Value::Null);
                serde_json::json!({"jsonrpc": "2.0", "id": id.to_value(), "result": result})
            }
            TransportEvent::Failed { id, failure } => {
                let mut error = Cause::TransportFailed.error(Some(Value::from(failure.detail)));
                if let Some(upstream_error) =
                    failure.error.as_ref().and_then(ErrorObject::from_value)
                {
                    error = upstream_error;
                }
                jsonrpc::error_response(Some(&id), error)
            }
            TransportEvent::SignedIn | TransportEvent::Closed => continue,
            TransportEvent::Ended(ended) => {
                cause = ended;
                break;
            }
        };
        let routed = hub.0.borrow_mut().routes.down(message);
        for (connection, message) in routed {
            deliver(&hub, connection, message);
        }
    }
    let sinks: Vec<Sink> = {
        let mut hub = hub.0.borrow_mut();
        if hub.generation != generation {
            return;
        }
        hub.upstream = None;
        hub.routes = Routes::default();
        {
            let mut runs = lock(&hub.runs);
            runs.running = false;
            runs.last_end = Some(cause.to_string());
            runs.last_lived = runs.last_started.map(|started| started.elapsed());
        }
        hub.connections.drain().map(|(_, sink)| sink).collect()
    };
    tracing::info!(target: "upstream", "the shared upstream ended ({cause}): its sessions end, and the next one starts it again");
    for sink in sinks {
        match sink {
            // Its one place kept for the end (a full one closes without it).
            Sink::Bridge(channel) => {
                let _ = channel.try_send(Down::End(cause.clone()));
            }
            Sink::Post { done, id, .. } => {
                let _ = done.send(Some(ended_answer(&id, &cause)));
            }
        }
    }
}

/// The events of one connection: the upstream's messages for it as frames (each read only
/// while its bridge's queue toward its client has room), then the upstream's end.
fn connection_events(
    from_upstream: mpsc::Receiver<Down>,
    max_line_bytes: usize,
    pace: Writer,
) -> LocalBoxStream<'static, TransportEvent> {
    enum State {
        Open(mpsc::Receiver<Down>),
        Ending(EndCause),
        Done,
    }
    futures_util::stream::unfold(
        (State::Open(from_upstream), Vec::<Frame>::new()),
        move |(state, mut ready)| {
            let pace = pace.clone();
            async move {
                if !ready.is_empty() {
                    let frame = ready.remove(0);
                    return Some((TransportEvent::Frame(frame), (state, ready)));
                }
                match state {
                    State::Open(mut rx) => loop {
                        // As the child's reader: the frames given so far reach the queue
                        // toward the client first, then its room.
                        tokio::task::yield_now().await;
                        pace.room().await;
                        match rx.recv().await {
                            Some(Down::Line(line)) => {
                                let mut frames = frame_message(line, max_line_bytes);
                                if frames.is_empty() {
                                    continue;
                                }
                                let first = frames.remove(0);
                                return Some((
                                    TransportEvent::Frame(first),
                                    (State::Open(rx), frames),
                                ));
                            }
                            Some(Down::End(cause)) => {
                                return Some((
                                    TransportEvent::Closed,
                                    (State::Ending(cause), ready),
                                ));
                            }
                            None => {
                                let cause = EndCause::PeerDropped;
                                return Some((
                                    TransportEvent::Closed,
                                    (State::Ending(cause), ready),
                                ));
                            }
                        }
                    },
                    State::Ending(cause) => {
                        Some((TransportEvent::Ended(cause), (State::Done, ready)))
                    }
                    State::Done => None,
                }
            }
        },
    )
    .boxed_local()
}

/// One bridge's connection of the shared upstream.
struct Connection {
    sink: Writer,
}

impl Transport for Connection {
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

    /// The connection ends (its requests in flight are cancelled upstream); the upstream
    /// goes on for the other sessions.
    fn close(self: Box<Self>, _grace: Duration) -> LocalBoxFuture<'static, Option<EndCause>> {
        self.sink.close();
        Box::pin(async { None })
    }

    fn kill(self: Box<Self>) -> LocalBoxFuture<'static, ()> {
        self.sink.close();
        Box::pin(async {})
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.sink.close();
    }
}
