//! The Upstream actor: the 2026-07-28 client, as JSON-RPC correlation over a transport. It
//! gives each request a new upstream id, correlates responses, keeps the listen streams,
//! carries the cancels of abandoned requests (the transport says how), writes one debug line
//! per exchange (id, method, outcome, time; never content), and reports notifications and the
//! end of the transport to the Supervisor. What carries the frames (a child process, an
//! in-process server, an HTTP URL) is behind [`crate::transport::upstream::Transport`].

use actix::prelude::*;
use foldhash::{HashMap, HashSet};
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context as TaskContext, Poll, ready};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

use super::frontend::messages::FromUpstream;
use super::link::{ActorStats, Counted, Link};
use super::supervisor::messages::{ActorEnded, UpstreamGone};
use crate::log::limits;
use crate::profile::PROBE_ID_PREFIX;
use crate::protocol::errors::ErrorObject;
use crate::protocol::framing::Frame;
use crate::protocol::jsonrpc::{self, Id, MAX_UPSTREAM_DEPTH, Message};
use crate::protocol::passthrough::{self, MessageKind};
use crate::protocol::raw::{self, Object, RawResult};
use crate::protocol::{era, listen, methods, modern};
use crate::transport::open::{self as seam, UpstreamSpec};
use crate::transport::program::SpawnError;
use crate::transport::queue::{Delivery, QueueStats, Sent};
use crate::transport::upstream::{
    Abandoned, EndCause, OpenOptions, RequestFailure, Transport, TransportEvent,
};
use crate::transport::writer::Writer;
use actix::dev::ToEnvelope;

pub use crate::transport::child_upstream::{EXIT_EOF_WAIT, EXIT_STATUS_WAIT};

pub mod reply;
pub use reply::{CancelReason, UpstreamReply};

struct Pending {
    tx: oneshot::Sender<UpstreamReply>,
    method: &'static str,
    /// The editor's request id, for the debug lines.
    client: Id,
    started: Instant,
}

/// The warning for an upstream frame that is not a JSON-RPC message (either mode), quoting
/// its start ([`Frame::excerpt`]); limited per kind ([`limits::UPSTREAM_NOT_JSONRPC`]).
fn warn_not_jsonrpc(frame: &Frame) {
    if limits::UPSTREAM_NOT_JSONRPC.allow() {
        tracing::warn!(target: "upstream", "the upstream sent a frame that is not a JSON-RPC message: {}", frame.excerpt());
    }
}

/// The `data.detail` of a request whose answer was a line over `--max-line-bytes`: the limit
/// and the option that raises it, so that the user of the editor can act on it.
fn line_over_limit(limit_bytes: usize) -> String {
    format!(
        "the upstream's answer is a line over the limit of {limit_bytes} bytes (--max-line-bytes raises it)"
    )
}

/// An upstream frame that is no usable JSON-RPC message (either mode): one warning, and the
/// requests it names, which then fail with `invalid_response` at once: the id recovered from
/// the line (`recovered`), or else, for a JSON-RPC batch (an array, which MCP does not
/// allow), the ids its responses answer ([`jsonrpc::batch_ids`]). A frame that names none is
/// only logged. Both warnings are limited ([`limits::UPSTREAM_NOT_JSONRPC`]).
fn unusable_frame(frame: &Frame, recovered: Option<&Id>) -> Vec<Id> {
    if let Some(id) = recovered {
        warn_not_jsonrpc(frame);
        return vec![id.clone()];
    }
    let batch = match frame {
        Frame::Line(l) => jsonrpc::batch_ids(l, MAX_UPSTREAM_DEPTH),
        Frame::TooLong { .. } => Vec::new(),
    };
    if batch.is_empty() {
        warn_not_jsonrpc(frame);
    } else if limits::UPSTREAM_NOT_JSONRPC.allow() {
        tracing::warn!(target: "upstream", "the upstream sent a JSON-RPC batch (an array), which MCP does not allow: each request it answers fails with invalid_response: {}", frame.excerpt());
    }
    batch
}

/// A request of the bridge's own still unanswered when the Upstream entered pass-through (in
/// practice the era probe, left running at `--discover-timeout`): its answer, if it comes, is
/// read and dropped, never relayed to the editor.
struct Unanswered {
    method: &'static str,
    started: Instant,
}

struct Conn {
    generation: u64,
    /// The transport (its queue toward the upstream: `UPSTREAM_QUEUE`).
    transport: Box<dyn Transport>,
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
    out: UpstreamOut,
    conn: Option<Conn>,
    generation: u64,
    /// The generation whose transport closed and whose [`TransportEvent::Ended`] is awaited.
    ending: Option<u64>,
    next_id: i64,
    pending: HashMap<Id, Pending>,
    listens: HashSet<Id>,
    /// Pass-through (a legacy upstream, from the first [`Relay`] until the next transport):
    /// the upstream's messages go to the Frontend as they came, not through the correlation.
    passthrough: bool,
    /// The bridge's own requests that were in flight when pass-through began (bounded by what
    /// was pending then: the probe), by upstream id; each is forgotten at its answer or at the
    /// next transport.
    unanswered: HashMap<Id, Unanswered>,
    /// How [`Connect`] opens the transport ([`seam::open_in_process`] unless
    /// [`Upstream::opening_with`] says otherwise).
    open: seam::OpenUpstream,
}

impl Upstream {
    /// An Upstream actor whose upstream frames are limited to `max_line_bytes`; its
    /// transport's reader is paced by `editor`, and its queue toward the upstream is counted
    /// in `queue_stats`.
    pub fn new(
        max_line_bytes: usize,
        stats: Arc<ActorStats>,
        editor: Writer,
        queue_stats: Arc<QueueStats>,
        out: UpstreamOut,
    ) -> Self {
        Upstream {
            max_line_bytes,
            stats,
            editor,
            queue_stats,
            out,
            conn: None,
            generation: 0,
            ending: None,
            next_id: 0,
            pending: HashMap::default(),
            listens: HashSet::default(),
            passthrough: false,
            unanswered: HashMap::default(),
            open: seam::open_in_process,
        }
    }

    /// Opens transports with `open` ([`seam::open`] for every transport of the build; the
    /// default, [`seam::open_in_process`], opens only in-process upstreams).
    #[must_use]
    pub fn opening_with(mut self, open: seam::OpenUpstream) -> Self {
        self.open = open;
        self
    }

    fn write(&self, v: &Value, delivery: Delivery) -> Sent {
        match &self.conn {
            Some(conn) => conn.transport.send(v, delivery),
            None => Sent::Closed,
        }
    }

    fn fail_all_pending(&mut self) {
        self.listens.clear();
        for (id, p) in self.pending.drain() {
            tracing::debug!(target: "upstream", "id={id} client={} method={} outcome=closed time_ms={:.3}",
                p.client, p.method, p.started.elapsed().as_secs_f64() * 1e3);
            let _ = p.tx.send(UpstreamReply::Closed);
        }
    }

    fn resolve(&mut self, id: &Id, reply: UpstreamReply) {
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
    fn listen_ended(&mut self, id: &Id, reply: UpstreamReply) {
        tracing::debug!(target: "upstream", "id={id} method={} outcome={}",
            listen::LISTEN_METHOD, reply.outcome());
        self.out.frontend.do_send(FromUpstream::ListenEnded {
            id: id.clone(),
            reply,
        });
    }

    /// Pass-through: one frame of the upstream to the Frontend as it came. A frame that is not
    /// a JSON-RPC message gets the warning of the correlation mode, and the editor's request
    /// it names, if any, gets `invalid_response` from the Frontend.
    fn relay_frame(&mut self, frame: Frame) {
        let read = match &frame {
            Frame::Line(l) => passthrough::read(l, MAX_UPSTREAM_DEPTH),
            Frame::TooLong { id, len_bytes, .. } => {
                if limits::UPSTREAM_LINE_TOO_LONG.allow() {
                    tracing::warn!(target: "upstream", "the upstream sent a line of {len_bytes} bytes, over the limit of {} bytes", self.max_line_bytes);
                }
                // As in the correlation mode: its request fails, with no second warning.
                if let Some(id) = id.clone() {
                    let reply = UpstreamReply::Invalid(Some(line_over_limit(self.max_line_bytes)));
                    self.out
                        .frontend
                        .do_send(FromUpstream::RelayFailed { id, reply });
                }
                return;
            }
        };
        match read {
            Ok((message, MessageKind::Response(Some(id)))) if self.unanswered.contains_key(&id) => {
                self.late_answer(&id, &message);
            }
            Ok((message, kind)) => self
                .out
                .frontend
                .do_send(FromUpstream::Relayed { message, kind }),
            Err(e) => {
                for id in unusable_frame(&frame, e.id()) {
                    self.out.frontend.do_send(FromUpstream::RelayFailed {
                        id,
                        reply: UpstreamReply::Invalid(None),
                    });
                }
            }
        }
    }

    /// Pass-through: the answer to a request of the bridge's own that was in flight when
    /// pass-through began (`id` is in `unanswered`). It is dropped with a debug line; when it is
    /// the probe's and says a 2026-07-28 server ([`era::late_probe_warning`]), one warning says
    /// so and names `--discover-timeout`.
    fn late_answer(&mut self, id: &Id, message: &Value) {
        let Some(u) = self.unanswered.remove(id) else {
            return;
        };
        tracing::debug!(target: "upstream", "id={id} method={} outcome=dropped in pass-through time_ms={:.3}",
            u.method, u.started.elapsed().as_secs_f64() * 1e3);
        if u.method == methods::SERVER_DISCOVER
            && let Some(warning) = era::late_probe_warning(message)
        {
            tracing::warn!(target: "upstream", "{warning}");
        }
    }

    /// Enters pass-through: the bridge's own requests still pending (the probe left running at
    /// `--discover-timeout`; nothing else is sent before the era is known) are kept in
    /// `unanswered`, and their callers, if still waiting, get [`UpstreamReply::Closed`].
    fn enter_passthrough(&mut self) {
        if let Some(conn) = &self.conn {
            conn.transport.pass_through();
        }
        self.passthrough = true;
        for (id, p) in self.pending.drain() {
            tracing::debug!(target: "upstream", "id={id} client={} method={} outcome=unanswered at pass-through",
                p.client, p.method);
            let _ = p.tx.send(UpstreamReply::Closed);
            self.unanswered.insert(
                id,
                Unanswered {
                    method: p.method,
                    started: p.started,
                },
            );
        }
    }

    fn on_frame(&mut self, frame: Frame) {
        if self.passthrough {
            return self.relay_frame(frame);
        }
        // A success response (nearly every frame) is read without a value tree: its result
        // goes on as the raw slice of the line, so a large result is neither parsed nor copied.
        if let Frame::Line(l) = &frame
            && let Some((id, result)) = raw::response(l.clone(), MAX_UPSTREAM_DEPTH)
        {
            return self.resolve(&id, UpstreamReply::Result(result));
        }
        let parsed = match &frame {
            Frame::Line(l) => jsonrpc::parse(l, MAX_UPSTREAM_DEPTH),
            Frame::TooLong { id, len_bytes, .. } => {
                if limits::UPSTREAM_LINE_TOO_LONG.allow() {
                    tracing::warn!(target: "upstream", "the upstream sent a line of {len_bytes} bytes, over the limit of {} bytes", self.max_line_bytes);
                }
                // Its request (the id recovered from the whole line) fails with
                // invalid_response; it is not also "not a JSON-RPC message".
                if let Some(id) = id {
                    let detail = line_over_limit(self.max_line_bytes);
                    self.resolve(id, UpstreamReply::Invalid(Some(detail)));
                }
                return;
            }
        };
        match parsed {
            Ok(Message::Response {
                id: Some(id),
                result,
            }) => self.resolve(&id, UpstreamReply::Result(RawResult::from_value(&result))),
            Ok(Message::ErrorResponse {
                id: Some(id),
                error,
            }) => self.resolve(&id, UpstreamReply::Error(error)),
            Ok(Message::Response { id: None, .. } | Message::ErrorResponse { id: None, .. }) => {
                tracing::debug!(target: "upstream", "dropped a response without a usable id");
            }
            Ok(Message::Notification { method, params }) => {
                self.out.frontend.do_send(FromUpstream::Notification {
                    method,
                    params: params.unwrap_or_else(|| json!({})),
                });
            }
            Ok(Message::Request { id, method, .. }) => self.answer_request(&id, &method),
            Err(e) => {
                for id in unusable_frame(&frame, e.id()) {
                    self.resolve(&id, UpstreamReply::Invalid(None));
                }
            }
        }
    }

    /// A request from the upstream gets a response (JSON-RPC 2.0 §4: a server may wait for
    /// one for ever, or end the session): `ping` (a keep-alive, as the Go SDK sends during a
    /// long call) gets an empty result, anything else -32601, since 2026-07-28 servers send
    /// the bridge no other request (input requests come as `input_required` results). The
    /// empty result carries `resultType` (2026-07-28 requires it on every result); a 2025-11-25
    /// reader's `EmptyResult` takes the extra member.
    ///
    /// The answers go as [`Delivery::DropWhenFull`]: a server that floods requests and does
    /// not read its input fills no queue without a bound (what it does not read it cannot
    /// wait for). Over a transport that carries no answers (HTTP) the request is only logged.
    fn answer_request(&self, id: &Id, method: &str) {
        let answers = self
            .conn
            .as_ref()
            .is_some_and(|c| c.transport.answers_requests());
        if !answers {
            if limits::UPSTREAM_REQUEST.allow() {
                tracing::warn!(target: "upstream", "ignored a request from the upstream ({method}): 2026-07-28 servers send none, and this transport carries no answer to one");
            }
            return;
        }
        let answer = if method == methods::PING {
            jsonrpc::response(id, json!({"resultType": "complete"}))
        } else {
            if limits::UPSTREAM_REQUEST.allow() {
                tracing::warn!(target: "upstream", "the upstream sent a request ({method}); 2026-07-28 servers send none: answered -32601");
            }
            jsonrpc::error_response(Some(id), ErrorObject::method_not_found(method).to_value())
        };
        let sent = self.write(&answer, Delivery::DropWhenFull);
        tracing::debug!(target: "upstream", "answered the upstream's request id={id} method={method}: {sent:?}");
    }

    /// The transport carries no more frames: every request still in flight gets
    /// [`UpstreamReply::Closed`]; the Frontend hears of it with the cause ([`TransportEvent::Ended`]).
    ///
    /// The replies go after every task that is ready now has run: an answer read just before
    /// the end woke its slot, and that slot writes it before the slots of the requests the
    /// upstream never answered write their `upstream_exited` (the editor gets them in the
    /// upstream's order; a slot woken in the same turn would otherwise be polled in spawn
    /// order, and an older request's error would overtake a newer answer).
    fn on_closed(&mut self, generation: u64, ctx: &mut Context<Self>) {
        if self.conn.take().is_none() {
            return;
        }
        self.ending = Some(generation);
        ctx.spawn(
            tokio::task::yield_now()
                .into_actor(self)
                .map(|(), act, _| act.fail_all_pending()),
        );
    }

    fn on_ended(&mut self, generation: u64, cause: EndCause) {
        if self.ending != Some(generation) {
            return;
        }
        self.ending = None;
        self.out.gone.do_send(UpstreamGone {
            status: cause.to_string(),
        });
    }

    /// One request failed in the transport alone (HTTP): it gets [`UpstreamReply::Failed`], the
    /// upstream goes on.
    fn on_failed(&mut self, id: &Id, failure: RequestFailure) {
        if self.passthrough {
            // A request of the editor (the bridge sends none of its own in pass-through).
            let reply = UpstreamReply::Failed(failure);
            let id = id.clone();
            return self
                .out
                .frontend
                .do_send(FromUpstream::RelayFailed { id, reply });
        }
        if self.listens.remove(id) {
            tracing::debug!(target: "upstream", "id={id} method={} outcome=failed ({})",
                listen::LISTEN_METHOD, failure.detail);
            return self.listen_ended(id, UpstreamReply::Failed(failure));
        }
        let Some(p) = self.pending.remove(id) else {
            return;
        };
        tracing::debug!(target: "upstream", "id={id} client={} method={} outcome=failed time_ms={:.3} ({})",
            p.client, p.method, p.started.elapsed().as_secs_f64() * 1e3, failure.detail);
        let _ = p.tx.send(UpstreamReply::Failed(failure));
    }
}

impl Actor for Upstream {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.out.ended.do_send(ActorEnded("upstream"));
    }
}

/// The links the Upstream sends on: the Frontend gets the upstream's notifications and listen
/// responses in upstream order, the Supervisor the end of the upstream and of the actor.
#[derive(Clone)]
pub struct UpstreamOut {
    pub frontend: Link<FromUpstream>,
    pub gone: Link<UpstreamGone>,
    pub ended: Link<ActorEnded>,
}

/// The links to an upstream actor (the [`Upstream`], or a fake in a test): one per message
/// it handles, counted in its stats.
#[derive(Clone)]
pub struct UpstreamLinks {
    pub connect: Link<Connect>,
    pub call: Link<Call>,
    pub cancel: Link<Cancel>,
    pub listen: Link<Listen>,
    pub relay: Link<Relay>,
    pub disconnect: Link<Disconnect>,
    pub close: Link<Close>,
}

impl UpstreamLinks {
    /// The links to the actor at `addr`, counted in `stats`.
    pub fn new<A>(addr: &Addr<A>, stats: &Arc<ActorStats>) -> Self
    where
        A: Actor
            + Handler<Counted<Connect>>
            + Handler<Counted<Call>>
            + Handler<Counted<Cancel>>
            + Handler<Counted<Listen>>
            + Handler<Counted<Relay>>
            + Handler<Counted<Disconnect>>
            + Handler<Counted<Close>>,
        A::Context: ToEnvelope<A, Counted<Connect>>
            + ToEnvelope<A, Counted<Call>>
            + ToEnvelope<A, Counted<Cancel>>
            + ToEnvelope<A, Counted<Listen>>
            + ToEnvelope<A, Counted<Relay>>
            + ToEnvelope<A, Counted<Disconnect>>
            + ToEnvelope<A, Counted<Close>>,
    {
        UpstreamLinks {
            connect: Link::new(addr, stats),
            call: Link::new(addr, stats),
            cancel: Link::new(addr, stats),
            listen: Link::new(addr, stats),
            relay: Link::new(addr, stats),
            disconnect: Link::new(addr, stats),
            close: Link::new(addr, stats),
        }
    }
}

crate::counted_handlers!(Upstream: Connect, Call, Cancel, Listen, Relay, Disconnect, Close);

/// An event of the transport, tagged with its generation so that the events of an earlier
/// transport are ignored.
#[derive(Message)]
#[rtype(result = "()")]
struct TransportItem(u64, TransportEvent);

impl StreamHandler<TransportItem> for Upstream {
    fn handle(&mut self, TransportItem(generation, event): TransportItem, ctx: &mut Context<Self>) {
        let _h = self.stats.stream_item();
        if let TransportEvent::Ended(cause) = event {
            return self.on_ended(generation, cause);
        }
        if self.conn.as_ref().map(|c| c.generation) != Some(generation) {
            return;
        }
        match event {
            TransportEvent::Frame(f) => self.on_frame(f),
            // Read by the transport as `on_frame` reads a success response (HTTP only, never
            // in pass-through).
            TransportEvent::Response { id, result } => {
                self.resolve(&id, UpstreamReply::Result(result))
            }
            TransportEvent::Failed { id, failure } => self.on_failed(&id, failure),
            TransportEvent::SignedIn => self.out.frontend.do_send(FromUpstream::SignedIn),
            TransportEvent::Closed => self.on_closed(generation, ctx),
            TransportEvent::Ended(_) => {}
        }
    }

    fn finished(&mut self, _: &mut Context<Self>) {}
}

/// Open the transport to the upstream (for a child: start the command). Errors with the
/// `spawn_failed` detail: the program and why it cannot start (never an argument or an
/// environment value).
#[derive(Message)]
#[rtype(result = "Result<(), SpawnError>")]
pub struct Connect(pub UpstreamSpec);

impl Handler<Connect> for Upstream {
    type Result = Result<(), SpawnError>;
    fn handle(
        &mut self,
        Connect(spec): Connect,
        ctx: &mut Context<Self>,
    ) -> Result<(), SpawnError> {
        if self.conn.is_some() {
            return Ok(());
        }
        let opened = (self.open)(
            &spec,
            OpenOptions {
                max_line_bytes: self.max_line_bytes,
                pace: self.editor.clone(),
                queue_stats: self.queue_stats.clone(),
            },
        )?;
        self.generation += 1;
        self.passthrough = false;
        self.unanswered.clear();
        let generation = self.generation;
        ctx.add_stream(opened.events.map(move |e| TransportItem(generation, e)));
        self.conn = Some(Conn {
            generation,
            transport: opened.transport,
        });
        Ok(())
    }
}

/// Send a request upstream (one message, whose answer comes on its own channel,
/// so the caller is woken once, by the reply). Made with [`Call::new`], which gives the
/// [`CallAnswer`] the caller waits on: [`UpstreamReply::Closed`] at once when there is no upstream,
/// [`UpstreamReply::Busy`] at once when the queue toward the upstream is full
/// ([`UPSTREAM_QUEUE`](crate::transport::queue::UPSTREAM_QUEUE); the request is not sent),
/// else the upstream's answer. A `Call` whose [`CallAnswer`] is gone before the actor handles it
/// (the slot was cancelled meanwhile) is not sent at all.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Call {
    /// The method.
    pub method: &'static str,
    /// The params, with the full 2026-07-28 `_meta` (members the bridge did not build keep
    /// the editor's bytes).
    pub params: Object,
    /// The editor's request id, for the debug lines (written only when they are: no text
    /// is made per call).
    pub client: Id,
    /// Where the reply goes.
    reply: oneshot::Sender<UpstreamReply>,
    /// The upstream id, once the request is sent (read by the [`CallAnswer`] when dropped).
    sent: SentId,
    /// The era probe ([`Call::probe`]): its id is `mcp-bridge-probe-N`, not `N`.
    probe: bool,
}

impl Call {
    /// A request of `method` with `params` for the editor's request `client`, and the
    /// [`CallAnswer`] that waits for its reply; dropped unanswered, the answer sends [`Cancel`] on
    /// `links` with the editor's reason in `reason` then.
    pub fn new(
        method: &'static str,
        params: Object,
        client: Id,
        links: Arc<UpstreamLinks>,
        reason: CancelReason,
    ) -> (Call, CallAnswer) {
        let (tx, rx) = oneshot::channel();
        let sent = SentId::default();
        let call = Call {
            method,
            params,
            client,
            reply: tx,
            sent: sent.clone(),
            probe: false,
        };
        let answer = CallAnswer {
            rx,
            sent,
            answered: false,
            links,
            reason,
        };
        (call, answer)
    }

    /// The call as the era probe, the request the bridge sends before it knows the era
    /// (`server/discover`, `protocol::era`): its upstream id is the string
    /// [`PROBE_ID_PREFIX`]`N` instead of the number `N`, so that it does not equal the id of
    /// an editor's request passed through afterwards to a legacy server (editors number their
    /// requests). The prefix is reserved: an editor request with the very string id of a probe
    /// still unanswered in pass-through is not sent ([`Relay`]; it gets `duplicate_id`).
    #[must_use]
    pub fn probe(mut self) -> Call {
        self.probe = true;
        self
    }

    /// Answers at once (no upstream, a full queue; a fake upstream in a test).
    pub fn answer(self, reply: UpstreamReply) {
        let _ = self.reply.send(reply);
    }

    /// The request went out as `id`: the reply is sent on the returned channel.
    pub fn sent_as(self, id: Id) -> oneshot::Sender<UpstreamReply> {
        let _ = self.sent.0.set(id);
        self.reply
    }

    /// The caller no longer waits (its [`CallAnswer`] is gone).
    pub fn is_abandoned(&self) -> bool {
        self.reply.is_closed()
    }
}

/// The upstream id of a [`Call`] once it is sent, shared by the call and its [`CallAnswer`].
#[derive(Clone, Debug, Default)]
struct SentId(Arc<OnceLock<Id>>);

/// The answer to one [`Call`]: a future of its [`UpstreamReply`] that owns the cancel of the request.
/// Dropped before the reply came (the slot was cancelled, its time limit passed, the input
/// ended) after the request was sent, it sends [`Cancel`] with the upstream id and the
/// editor's reason: the request is taken out of the queue unsent or followed by
/// `notifications/cancelled`, and the Upstream forgets it at once, so an abandoned request
/// holds no memory (2025-11-25 basic/utilities/cancellation); dropped before the actor handled
/// the `Call`, the request is never sent. Resolves as a `oneshot::Receiver` does: an error when
/// the Upstream forgot the request without a reply (or stopped).
pub struct CallAnswer {
    rx: oneshot::Receiver<UpstreamReply>,
    sent: SentId,
    /// The reply came, or the Upstream forgot the request: nothing is left to cancel.
    answered: bool,
    /// The Upstream's links (a cancel goes on `cancel`).
    links: Arc<UpstreamLinks>,
    reason: CancelReason,
}

impl CallAnswer {
    /// The upstream id of the request, once it is sent.
    pub fn sent_id(&self) -> Option<Id> {
        self.sent.0.get().cloned()
    }

    /// Stops waiting without cancelling: the request stays in flight upstream, and its answer,
    /// if it ever comes, is the Upstream's alone to read. For the era probe at
    /// `--discover-timeout`: a late answer is what tells a slow 2026-07-28 server from a
    /// legacy one (a cancel would have the modern server drop its answer).
    pub fn let_run(mut self) {
        self.answered = true;
    }
}

impl std::fmt::Debug for CallAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Answer(sent: {:?}, answered: {})",
            self.sent.0.get(),
            self.answered
        )
    }
}

impl Future for CallAnswer {
    type Output = Result<UpstreamReply, oneshot::error::RecvError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let out = ready!(Pin::new(&mut self.rx).poll(cx));
        self.answered = true;
        Poll::Ready(out)
    }
}

impl Drop for CallAnswer {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        if let Some(id) = self.sent.0.get() {
            self.links.cancel.do_send(Cancel {
                id: id.clone(),
                reason: self.reason.get(),
            });
        }
    }
}

impl Handler<Call> for Upstream {
    type Result = ();
    fn handle(&mut self, mut m: Call, _: &mut Context<Self>) {
        if self.conn.is_none() {
            return m.answer(UpstreamReply::Closed);
        }
        if m.is_abandoned() {
            tracing::debug!(target: "upstream", "client={} method={} outcome=cancelled before it was sent",
                m.client, m.method);
            return;
        }
        self.next_id += 1;
        // Modern requests keep plain numbers: the era is known by then, and no editor id
        // reaches the upstream in the modern mode (the ids in exact-frame tests stay).
        let id = if m.probe {
            Id::Str(format!("{PROBE_ID_PREFIX}{}", self.next_id))
        } else {
            Id::Int(self.next_id)
        };
        let frame = raw::request_frame(&id, m.method, m.params.to_parts());
        let sent = match &self.conn {
            Some(conn) => conn
                .transport
                .send_frame(frame.into(), Delivery::Request(id.clone())),
            None => Sent::Closed,
        };
        match sent {
            Sent::Queued => {
                if let Some(c) = &self.conn {
                    let (frames, bytes) = c.transport.queued();
                    if frames > 1 {
                        tracing::debug!(target: "upstream", "id={id} client={} method={} waits in the queue toward the upstream ({frames} frames, {bytes} bytes)",
                            m.client, m.method);
                    }
                }
            }
            Sent::Refused => {
                tracing::debug!(target: "upstream", "id={id} client={} method={} outcome=busy time_ms=0.000",
                    m.client, m.method);
                return m.answer(UpstreamReply::Busy);
            }
            Sent::Dropped | Sent::Closed => return m.answer(UpstreamReply::Closed),
        }
        let method = m.method;
        let client = std::mem::replace(&mut m.client, Id::Int(0));
        let tx = m.sent_as(id.clone());
        self.pending.insert(
            id,
            Pending {
                tx,
                method,
                client,
                started: Instant::now(),
            },
        );
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
        let Some(conn) = &self.conn else {
            return;
        };
        match conn.transport.abandon(&id) {
            Abandoned::Unsent => {
                tracing::debug!(target: "upstream", "id={id} was taken out of the queue unsent");
                return;
            }
            Abandoned::Carried => return,
            Abandoned::NotifyCancelled => {}
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
        let frame = listen::listen_request(&m.id, m.params);
        // A listen is never refused for a full queue: there is at most one change at a time,
        // and losing the stream would lose list changes.
        if self.conn.is_none() || self.write(&frame, Delivery::Always) != Sent::Queued {
            return false;
        }
        tracing::debug!(target: "upstream", "id={} method={} outcome=sent", m.id, listen::LISTEN_METHOD);
        self.listens.insert(m.id);
        true
    }
}

/// Pass-through (a legacy upstream, `protocol::era`): send one message of the editor as it
/// came. The first `Relay` puts the actor in pass-through until the next transport: from then
/// on every frame of the upstream goes to the Frontend as [`FromUpstream::Relayed`], but an
/// answer to a request of the bridge's own still in flight then (the probe, whose id is never
/// an editor's: [`Call::probe`]), which is dropped.
///
/// `delivery` is [`Delivery::Request`] for a request of the editor (refused when the queue
/// toward the upstream is full: the Frontend gets [`FromUpstream::RelayFailed`] with
/// [`UpstreamReply::Busy`]; no transport: [`UpstreamReply::Closed`]), [`Delivery::Always`] for the rest.
/// `cancels` names the request an editor's `notifications/cancelled` is about: when none of
/// that request's bytes was written it is taken out of the queue and the notification is not
/// sent either (the upstream never saw the request); when the transport carried the cancel
/// itself, nothing is sent.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Relay {
    /// The message, as the editor wrote it.
    pub message: Value,
    /// How it is queued.
    pub delivery: Delivery,
    /// For `notifications/cancelled`: the editor's request it cancels.
    pub cancels: Option<Id>,
}

impl Handler<Relay> for Upstream {
    type Result = ();
    fn handle(&mut self, m: Relay, _: &mut Context<Self>) {
        if !self.passthrough {
            self.enter_passthrough();
        }
        if let (Some(id), Some(conn)) = (&m.cancels, &self.conn) {
            match conn.transport.abandon(id) {
                Abandoned::Unsent => {
                    tracing::debug!(target: "upstream", "id={id} was taken out of the queue unsent (pass-through)");
                    return;
                }
                Abandoned::Carried => return,
                Abandoned::NotifyCancelled => {}
            }
        }
        let request = match &m.delivery {
            Delivery::Request(id) => Some(id.clone()),
            _ => None,
        };
        if let Some(id) = request
            .as_ref()
            .filter(|id| self.unanswered.contains_key(id))
        {
            // Its answer could not be told from the probe's: not sent.
            tracing::debug!(target: "upstream", "id={id} of the editor is the id of the bridge's own request still unanswered: not sent (duplicate_id)");
            self.out
                .frontend
                .do_send(FromUpstream::IdInUse { id: id.clone() });
            return;
        }
        let reply = match self.write(&m.message, m.delivery) {
            Sent::Queued => return,
            Sent::Refused => UpstreamReply::Busy,
            Sent::Dropped | Sent::Closed => UpstreamReply::Closed,
        };
        if let Some(id) = request {
            self.out
                .frontend
                .do_send(FromUpstream::RelayFailed { id, reply });
        }
    }
}

/// Stop the transport at once (a failed discover): for a child, kill its group, fail what is
/// pending, then stop every other descendant that was handed to the bridge (one that left the
/// group with `setsid`). The actor handles no other message until this is done, so the sweep
/// can never meet the child of a later `Connect`.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Disconnect;

impl Handler<Disconnect> for Upstream {
    type Result = AtomicResponse<Self, ()>;
    fn handle(&mut self, _: Disconnect, _: &mut Context<Self>) -> Self::Result {
        let conn = self.conn.take();
        self.fail_all_pending();
        AtomicResponse::new(Box::pin(
            async move {
                if let Some(c) = conn {
                    c.transport.kill().await;
                }
            }
            .into_actor(self),
        ))
    }
}

/// Stop the transport with its shutdown steps, each waiting at most `grace` (a child: close
/// stdin, wait, SIGTERM, wait, SIGKILL to the group). Resolves with how it ended; then the
/// actor stops (the last shutdown step of the Upstream).
#[derive(Message)]
#[rtype(result = "Option<String>")]
pub struct Close {
    pub grace: Duration,
}

impl Handler<Close> for Upstream {
    type Result = ResponseActFuture<Self, Option<String>>;
    fn handle(&mut self, m: Close, _: &mut Context<Self>) -> Self::Result {
        let conn = self.conn.take();
        self.fail_all_pending();
        Box::pin(
            async move {
                let c = conn?;
                c.transport.close(m.grace).await.map(|e| e.to_string())
            }
            .into_actor(self)
            .map(|status, _, ctx| {
                ctx.stop();
                status
            }),
        )
    }
}
