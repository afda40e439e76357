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
//! - A 2025-11-25 server cannot be shared: its bridges would each send it an `initialize`.
//!   A connection's `initialize` gets an error that says so
//!   ([`NOT_SHARED_MESSAGE`]), and that session's era fallback fails.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;
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

/// Messages queued toward each connection, and from it (256): past it the shared upstream's
/// reader waits for that connection, so nothing is dropped.
pub const SHARED_CHANNEL_MESSAGES: usize = 256;

/// The error of a connection's `initialize`: a server that answers only 2025-11-25 cannot be
/// shared, as each session would initialize it again.
pub const NOT_SHARED_MESSAGE: &str = "The server speaks MCP 2025-11-25, which keeps one session per connection: serve it with --upstream-lifetime per-session";

/// The handle of a shared upstream: clones share it, and it may travel in the actors'
/// messages; the upstream itself lives in a task of the actor thread.
#[derive(Clone)]
pub struct SharedUpstream {
    commands: mpsc::UnboundedSender<Command>,
    /// The name the editor sees when the server gives none (the spec's).
    fallback_name: Option<String>,
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
        down: mpsc::Sender<Down>,
        up: mpsc::Receiver<Vec<u8>>,
        max_line_bytes: usize,
        children: Arc<ChildRegistry>,
    },
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
    /// Each connection's channel.
    connections: HashMap<ConnectionId, mpsc::Sender<Down>>,
    next_connection: ConnectionId,
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
}

impl SharedUpstream {
    /// Starts the task of a shared upstream, whose runs `open` opens (the first at the first
    /// connection), named `fallback_name` when the server gives no name. Call on the actor
    /// thread.
    pub fn start(fallback_name: Option<String>, open: OpenRun) -> SharedUpstream {
        let (to_pace, paced) = mpsc::channel(1);
        let pace = Writer::for_line_channel(to_pace, EDITOR_QUEUE, QueueStats::new("shared_pace"));
        let hub = HubRef(Rc::new(RefCell::new(Hub {
            open,
            routes: Routes::default(),
            connections: HashMap::new(),
            next_connection: 0,
            upstream: None,
            generation: 0,
            pace,
            _paced: paced,
            stats: QueueStats::new("upstream_queue"),
        })));
        let (commands, received) = mpsc::unbounded_channel();
        tokio::task::spawn_local(hub.run(received));
        SharedUpstream {
            commands,
            fallback_name,
        }
    }

    /// The name the editor sees when the server gives none (the spec's).
    pub fn fallback_name(&self) -> Option<String> {
        self.fallback_name.clone()
    }

    /// Opens one bridge's connection; the upstream opens first when none runs. When it
    /// cannot open, the connection ends at once with the cause (its bridge reports the loss
    /// of its upstream to its client).
    pub fn connect(&self, options: OpenOptions) -> Opened {
        let (down, from_upstream) = mpsc::channel(SHARED_CHANNEL_MESSAGES);
        let (up, from_bridge) = mpsc::channel::<Vec<u8>>(SHARED_CHANNEL_MESSAGES);
        let _ = self.commands.send(Command::Connect {
            down,
            up: from_bridge,
            max_line_bytes: options.max_line_bytes,
            children: options.children.clone(),
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

impl HubRef {
    /// The task of the shared upstream: connections come and go until [`Command::Close`].
    async fn run(self, mut commands: mpsc::UnboundedReceiver<Command>) {
        while let Some(command) = commands.recv().await {
            match command {
                Command::Connect {
                    down,
                    up,
                    max_line_bytes,
                    children,
                } => self.connect(down, up, max_line_bytes, children),
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

    /// Registers a connection, opening the upstream first when none runs.
    fn connect(
        &self,
        down: mpsc::Sender<Down>,
        up: mpsc::Receiver<Vec<u8>>,
        max_line_bytes: usize,
        children: Arc<ChildRegistry>,
    ) {
        let mut hub = self.0.borrow_mut();
        if hub.upstream.is_none() {
            let options = OpenOptions {
                max_line_bytes,
                pace: hub.pace.clone(),
                queue_stats: hub.stats.clone(),
                children,
            };
            match (hub.open)(options) {
                Ok(opened) => {
                    hub.generation += 1;
                    hub.upstream = Some(opened.transport);
                    tokio::task::spawn_local(read_upstream(
                        self.clone(),
                        hub.generation,
                        opened.events,
                    ));
                }
                Err(e) => {
                    tracing::error!(target: "upstream", "the shared upstream did not start: {e}");
                    let cause = EndCause::NotStarted(e.to_string());
                    tokio::task::spawn_local(async move {
                        let _ = down.send(Down::End(cause)).await;
                    });
                    return;
                }
            }
        }
        hub.next_connection += 1;
        let connection = hub.next_connection;
        hub.connections.insert(connection, down);
        tokio::task::spawn_local(read_connection(self.clone(), connection, up));
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
    /// Queues `answer` toward `connection` without waiting: an answer the hub itself makes
    /// (the channel has room for it: the bridge that sent the request reads its answers).
    fn reply(&self, connection: ConnectionId, answer: Value) {
        if let Some(channel) = self.connections.get(&connection) {
            let channel = channel.clone();
            tokio::task::spawn_local(async move {
                let _ = channel.send(Down::Line(answer.to_string())).await;
            });
        }
    }
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
            let channel = hub.0.borrow().connections.get(&connection).cloned();
            if let Some(channel) = channel {
                // Waits for that connection's room: nothing is dropped.
                let _ = channel.send(Down::Line(message.to_string())).await;
            }
        }
    }
    let channels: Vec<mpsc::Sender<Down>> = {
        let mut hub = hub.0.borrow_mut();
        if hub.generation != generation {
            return;
        }
        hub.upstream = None;
        hub.routes = Routes::default();
        hub.connections
            .drain()
            .map(|(_, channel)| channel)
            .collect()
    };
    tracing::info!(target: "upstream", "the shared upstream ended ({cause}): its sessions end, and the next one starts it again");
    for channel in channels {
        let _ = channel.send(Down::End(cause.clone())).await;
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
