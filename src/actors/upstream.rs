//! The Upstream actor: the 2026-07-28 client towards the child process. It owns the child,
//! gives each request a new upstream id, correlates responses, sends `notifications/cancelled`
//! for abandoned requests, writes one debug line per exchange (id, method, outcome, time;
//! never content), and reports notifications and the loss of the child to the Frontend.

use actix::prelude::*;
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

use super::metrics::ActorStats;
use crate::protocol::framing::Frame;
use crate::protocol::jsonrpc::{self, Id, MAX_UPSTREAM_DEPTH, Message, ParseError};
use crate::protocol::{modern, notify};
use crate::transport::child::{self, ChildProcess};
use crate::transport::isolation;
use crate::transport::lines;
use crate::transport::program::{self, SpawnError};
use crate::transport::writer::{Delivery, QueueStats, Sent, UPSTREAM_QUEUE, Writer};

/// How long the bridge waits for the exit status of a child that closed its stdout.
pub const EXIT_STATUS_WAIT: Duration = Duration::from_millis(500);
/// After the child exits, how long frames already in its stdout pipe are still read before
/// the upstream counts as lost (a grandchild may hold the pipe open).
pub const EXIT_DRAIN: Duration = Duration::from_millis(100);

/// The answer to one upstream request.
#[derive(Debug)]
pub enum Reply {
    /// A JSON-RPC result.
    Result(Value),
    /// A JSON-RPC error object.
    Error(Value),
    /// The upstream went away before answering.
    Closed,
    /// The upstream answered with a frame the bridge cannot read.
    Invalid,
    /// The queue toward the upstream was full: the request was not sent.
    Busy,
}

impl Reply {
    /// The outcome word of the exchange log line.
    fn outcome(&self) -> &'static str {
        match self {
            Reply::Result(_) => "result",
            Reply::Error(_) => "error",
            Reply::Closed => "closed",
            Reply::Invalid => "invalid",
            Reply::Busy => "busy",
        }
    }
}

/// What the Upstream actor tells the Frontend.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub enum FromUpstream {
    /// A notification of the upstream (progress, message, list changes, ...).
    Notification { method: String, params: Value },
    /// The child closed its stdout; `status` is how it ended.
    Gone { status: String },
    /// The response to a listen request (see [`Listen`]), in upstream order with the
    /// notifications.
    ListenEnded { id: Id, reply: Reply },
}

struct Pending {
    tx: oneshot::Sender<Reply>,
    method: String,
    client: String,
    started: Instant,
}

struct Conn {
    generation: u64,
    /// The writer of the child's stdin (its queue: [`UPSTREAM_QUEUE`]).
    stdin: Writer,
    child: Option<ChildProcess>,
}

impl Drop for Conn {
    /// The child's stdin is closed once what is queued is written.
    fn drop(&mut self) {
        self.stdin.close();
    }
}

/// The Upstream actor.
pub struct Upstream {
    max_line_bytes: usize,
    stats: Arc<ActorStats>,
    /// The writer toward the editor: the reader of the child's stdout pauses while its queue
    /// is full (back-pressure).
    editor: Writer,
    /// Counters of the queue toward the child (one for every child started).
    queue_stats: Arc<QueueStats>,
    frontend: Option<Recipient<FromUpstream>>,
    conn: Option<Conn>,
    generation: u64,
    next_id: i64,
    pending: HashMap<Id, Pending>,
    listens: HashSet<Id>,
}

impl Upstream {
    /// An Upstream actor whose child frames are limited to `max_line_bytes`; its reader of
    /// the child's stdout is paced by `editor`, and its queue toward the child is counted in
    /// `queue_stats`.
    pub fn new(
        max_line_bytes: usize,
        stats: Arc<ActorStats>,
        editor: Writer,
        queue_stats: Arc<QueueStats>,
    ) -> Self {
        Upstream {
            max_line_bytes,
            stats,
            editor,
            queue_stats,
            frontend: None,
            conn: None,
            generation: 0,
            next_id: 0,
            pending: HashMap::new(),
            listens: HashSet::new(),
        }
    }

    fn write(&self, v: &Value, delivery: Delivery) -> Sent {
        match &self.conn {
            Some(conn) => conn.stdin.send_message(v, delivery),
            None => Sent::Closed,
        }
    }

    fn fail_all_pending(&mut self) {
        self.listens.clear();
        for (id, p) in self.pending.drain() {
            tracing::debug!(target: "upstream", "id={id} client={} method={} outcome=closed time_ms={:.3}",
                p.client, p.method, p.started.elapsed().as_secs_f64() * 1e3);
            let _ = p.tx.send(Reply::Closed);
        }
    }

    fn resolve(&mut self, id: &Id, reply: Reply) {
        if self.listens.remove(id) {
            return self.listen_ended(id, reply);
        }
        let Some(p) = self.pending.remove(id) else {
            tracing::debug!(target: "upstream", "dropped a response for unknown id {id}");
            return;
        };
        let outcome = reply.outcome();
        tracing::debug!(target: "upstream", "id={id} client={} method={} outcome={outcome} time_ms={:.3}",
            p.client, p.method, p.started.elapsed().as_secs_f64() * 1e3);
        let _ = p.tx.send(reply);
    }

    /// A listen request got its response: it goes to the Frontend like a notification, so
    /// that it keeps its place among the stream's notifications.
    fn listen_ended(&mut self, id: &Id, reply: Reply) {
        tracing::debug!(target: "upstream", "id={id} method={} outcome={}",
            notify::LISTEN_METHOD, reply.outcome());
        if let Some(f) = &self.frontend {
            f.do_send(FromUpstream::ListenEnded {
                id: id.clone(),
                reply,
            });
        }
    }

    fn on_frame(&mut self, frame: Frame) {
        let parsed = match &frame {
            Frame::Line(l) => jsonrpc::parse(l, MAX_UPSTREAM_DEPTH),
            Frame::TooLong { id, len_bytes, .. } => {
                tracing::warn!(target: "upstream", "the upstream sent a line of {len_bytes} bytes, over the limit of {} bytes", self.max_line_bytes);
                Err(ParseError::NotJson { id: id.clone() })
            }
        };
        match parsed {
            Ok(Message::Response {
                id: Some(id),
                result,
            }) => self.resolve(&id, Reply::Result(result)),
            Ok(Message::ErrorResponse {
                id: Some(id),
                error,
            }) => self.resolve(&id, Reply::Error(error)),
            Ok(Message::Response { id: None, .. } | Message::ErrorResponse { id: None, .. }) => {
                tracing::debug!(target: "upstream", "dropped a response without a usable id");
            }
            Ok(Message::Notification { method, params }) => {
                if let Some(f) = &self.frontend {
                    f.do_send(FromUpstream::Notification {
                        method,
                        params: params.unwrap_or_else(|| json!({})),
                    });
                }
            }
            Ok(Message::Request { method, .. }) => {
                tracing::warn!(target: "upstream", "ignored a request from the upstream ({method}): 2026-07-28 servers send no requests");
            }
            Err(e) => {
                tracing::warn!(target: "upstream", "the upstream sent a frame that is not a JSON-RPC message");
                if let Some(id) = e.id().cloned() {
                    self.resolve(&id, Reply::Invalid);
                }
            }
        }
    }

    fn on_eof(&mut self, ctx: &mut Context<Self>) {
        let Some(mut conn) = self.conn.take() else {
            return;
        };
        self.fail_all_pending();
        let frontend = self.frontend.clone();
        let child = conn.child.take();
        ctx.spawn(
            async move {
                let status = match child {
                    Some(mut c) => {
                        let mut status = c.wait_for(EXIT_STATUS_WAIT).await;
                        let killed = c.kill().await;
                        if status.is_none() {
                            status = killed;
                        }
                        status.map_or_else(
                            || "unknown status".to_string(),
                            |s| child::describe_status(&s),
                        )
                    }
                    None => "unknown status".to_string(),
                };
                if let Some(f) = frontend {
                    f.do_send(FromUpstream::Gone { status });
                }
            }
            .into_actor(self),
        );
    }
}

impl Actor for Upstream {
    type Context = Context<Self>;
}

/// A frame from the child's stdout (`None`: end of its stdout), tagged with the child's
/// generation so frames of an earlier child are ignored.
#[derive(Message)]
#[rtype(result = "()")]
struct ChildFrame(u64, Option<Frame>);

impl StreamHandler<ChildFrame> for Upstream {
    fn handle(&mut self, ChildFrame(generation, frame): ChildFrame, ctx: &mut Context<Self>) {
        if self.conn.as_ref().map(|c| c.generation) != Some(generation) {
            return;
        }
        match frame {
            Some(f) => self.on_frame(f),
            None => self.on_eof(ctx),
        }
    }

    fn finished(&mut self, _: &mut Context<Self>) {}
}

/// Set the Frontend that receives [`FromUpstream`].
#[derive(Message)]
#[rtype(result = "()")]
pub struct SetFrontend(pub Recipient<FromUpstream>);

impl Handler<SetFrontend> for Upstream {
    type Result = ();
    fn handle(&mut self, m: SetFrontend, _: &mut Context<Self>) {
        self.frontend = Some(m.0);
    }
}

/// Start the upstream command. Errors with the `spawn_failed` detail: the program and why it
/// cannot start (never an argument or an environment value).
#[derive(Message)]
#[rtype(result = "Result<(), SpawnError>")]
pub struct Connect {
    pub command: OsString,
    pub args: Vec<OsString>,
}

impl Handler<Connect> for Upstream {
    type Result = Result<(), SpawnError>;
    fn handle(&mut self, m: Connect, ctx: &mut Context<Self>) -> Result<(), SpawnError> {
        let _h = self.stats.handling();
        if self.conn.is_some() {
            return Ok(());
        }
        let (proc_, io) = child::spawn(&m.command, &m.args)
            .map_err(|e| SpawnError::Start(program::spawn_error_detail(&m.command, &e)))?;
        self.generation += 1;
        let generation = self.generation;
        tracing::debug!(target: "upstream", "started the upstream command (pid {})", proc_.pgid());
        let stdin = child::stdin_pipe(io.stdin).map_err(SpawnError::Stdin)?;
        let stdin = Writer::for_pipe(stdin, UPSTREAM_QUEUE, self.queue_stats.clone());
        let stream = lines::frames(io.stdout, self.max_line_bytes, Some(self.editor.clone()))
            .map(move |f| ChildFrame(generation, Some(f)))
            .chain(futures_util::stream::once(async move {
                ChildFrame(generation, None)
            }));
        ctx.add_stream(stream);
        let mut exit = proc_.exit_watch();
        ctx.spawn(
            async move {
                while exit.borrow_and_update().is_none() {
                    if exit.changed().await.is_err() {
                        break;
                    }
                }
                tokio::time::sleep(EXIT_DRAIN).await;
            }
            .into_actor(self)
            .map(move |(), act, ctx| {
                if act.conn.as_ref().map(|c| c.generation) == Some(generation) {
                    act.on_eof(ctx);
                }
            }),
        );
        self.conn = Some(Conn {
            generation,
            stdin,
            child: Some(proc_),
        });
        Ok(())
    }
}

/// Send a request upstream. The reply is the upstream id and a receiver of the answer, or at
/// once [`Reply::Closed`] when there is no upstream, or [`Reply::Busy`] when the queue toward
/// the upstream is full ([`UPSTREAM_QUEUE`]; the request is not sent).
#[derive(Message)]
#[rtype(result = "Result<(Id, oneshot::Receiver<Reply>), Reply>")]
pub struct Call {
    /// The method.
    pub method: String,
    /// The params, with the full 2026-07-28 `_meta`.
    pub params: Value,
    /// The editor's request id, for the debug line.
    pub client: String,
}

impl Handler<Call> for Upstream {
    type Result = Result<(Id, oneshot::Receiver<Reply>), Reply>;
    fn handle(&mut self, m: Call, _: &mut Context<Self>) -> Self::Result {
        let _h = self.stats.handling();
        if self.conn.is_none() {
            return Err(Reply::Closed);
        }
        self.next_id += 1;
        let id = Id::Int(self.next_id);
        let frame = jsonrpc::request(&id, &m.method, m.params);
        match self.write(&frame, Delivery::Request(id.clone())) {
            Sent::Queued => {
                if let Some(c) = &self.conn {
                    let (frames, bytes) = c.stdin.queued();
                    if frames > 1 {
                        tracing::debug!(target: "upstream", "id={id} client={} method={} waits in the queue toward the upstream ({frames} frames, {bytes} bytes)",
                            m.client, m.method);
                    }
                }
            }
            Sent::Refused => {
                tracing::debug!(target: "upstream", "id={id} client={} method={} outcome=busy time_ms=0.000",
                    m.client, m.method);
                return Err(Reply::Busy);
            }
            Sent::Dropped | Sent::Closed => return Err(Reply::Closed),
        }
        let (tx, rx) = oneshot::channel();
        self.pending.insert(
            id.clone(),
            Pending {
                tx,
                method: m.method,
                client: m.client,
                started: Instant::now(),
            },
        );
        Ok((id, rx))
    }
}

/// Abandon an upstream request: forget it; if it is still queued (not a byte written), take
/// it out of the queue (it is never sent and needs no cancel), else send
/// `notifications/cancelled` with its id and the editor's `reason`, if any.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Cancel {
    pub id: Id,
    pub reason: Option<String>,
}

impl Handler<Cancel> for Upstream {
    type Result = ();
    fn handle(&mut self, Cancel { id, reason }: Cancel, _: &mut Context<Self>) {
        let _h = self.stats.handling();
        let known = match self.pending.remove(&id) {
            Some(p) => {
                tracing::debug!(target: "upstream", "id={id} client={} method={} outcome=cancelled time_ms={:.3}",
                    p.client, p.method, p.started.elapsed().as_secs_f64() * 1e3);
                true
            }
            None => self.listens.remove(&id),
        };
        if !known {
            return;
        }
        if self.conn.as_ref().is_some_and(|c| c.stdin.remove(&id)) {
            tracing::debug!(target: "upstream", "id={id} was taken out of the queue unsent");
            return;
        }
        let n = modern::cancelled_notification(id.to_value(), reason.as_deref());
        self.write(&n, Delivery::Always);
    }
}

/// Open a listen stream: send `subscriptions/listen` with the id the Listener chose (its
/// generation), with no time limit. Its response comes as [`FromUpstream::ListenEnded`];
/// [`Cancel`] ends it. False when there is no upstream.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct Listen {
    /// The listen id.
    pub id: Id,
    /// The params, with the full 2026-07-28 `_meta` and the filter.
    pub params: Value,
}

impl Handler<Listen> for Upstream {
    type Result = bool;
    fn handle(&mut self, m: Listen, _: &mut Context<Self>) -> bool {
        let _h = self.stats.handling();
        let frame = notify::listen_request(&m.id, m.params);
        // A listen is never refused for a full queue: there is at most one change at a time,
        // and losing the stream would lose list changes.
        if self.conn.is_none() || self.write(&frame, Delivery::Always) != Sent::Queued {
            return false;
        }
        tracing::debug!(target: "upstream", "id={} method={} outcome=sent", m.id, notify::LISTEN_METHOD);
        self.listens.insert(m.id);
        true
    }
}

/// Stop the child at once (a failed discover): kill its group, fail what is pending, then
/// stop every other descendant that was handed to the bridge (one that left the group with
/// `setsid`). The actor handles no other message until this is done, so the sweep can never
/// meet the child of a later `Connect`.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Disconnect;

impl Handler<Disconnect> for Upstream {
    type Result = AtomicResponse<Self, ()>;
    fn handle(&mut self, _: Disconnect, _: &mut Context<Self>) -> Self::Result {
        let _h = self.stats.handling();
        let conn = self.conn.take();
        self.fail_all_pending();
        AtomicResponse::new(Box::pin(
            async move {
                if let Some(mut c) = conn
                    && let Some(child) = c.child.take()
                {
                    drop(c);
                    child.kill().await;
                    let _ = tokio::task::spawn_blocking(isolation::stop_descendants).await;
                }
            }
            .into_actor(self),
        ))
    }
}

/// Stop the child with the shutdown steps (close stdin, wait `grace`, SIGTERM, wait `grace`,
/// SIGKILL to the group). Resolves with how it ended.
#[derive(Message)]
#[rtype(result = "Option<String>")]
pub struct Close {
    pub grace: Duration,
}

impl Handler<Close> for Upstream {
    type Result = ResponseFuture<Option<String>>;
    fn handle(&mut self, m: Close, _: &mut Context<Self>) -> Self::Result {
        let _h = self.stats.handling();
        let conn = self.conn.take();
        self.fail_all_pending();
        Box::pin(async move {
            let mut c = conn?;
            let child = c.child.take()?;
            drop(c); // closes the child's stdin once the writer has flushed
            child
                .stop(m.grace)
                .await
                .map(|s| child::describe_status(&s))
        })
    }
}
