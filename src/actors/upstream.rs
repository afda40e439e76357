//! The Upstream actor: the 2026-07-28 client, as JSON-RPC correlation over a transport. It
//! gives each request a new upstream id, correlates responses, keeps the listen streams,
//! carries the cancels of abandoned requests (the transport says how), writes one debug line
//! per exchange (id, method, outcome, time; never content), and reports notifications and the
//! end of the transport to the Supervisor. What carries the frames (a child process, an
//! in-process server, an HTTP URL) is behind [`crate::transport::upstream::Transport`].
//!
//! This file holds the actor, its links and the dispatch of the transport's events; its
//! messages and their handling live by topic: `call.rs` (a request sent and its cancel),
//! `frames.rs` (the upstream's frames correlated), `listen.rs` (the listen streams),
//! `pass_through.rs` (a legacy upstream), `connection.rs` (opening the transport, its end,
//! its stop).

use actix::prelude::*;
use foldhash::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::oneshot;

use super::frontend::messages::FromUpstream;
use super::link::{ActorStats, Counted, Link};
use super::supervisor::messages::{ActorEnded, ActorKind, UpstreamGone};
use crate::log::limits::BridgeLimits;
use crate::protocol::wire::id::Id;
use crate::transport::children::ChildRegistry;
use crate::transport::open as seam;
use crate::transport::queue::{Delivery, QueueStats, Sent};
use crate::transport::upstream::{Transport, TransportEvent};
use crate::transport::writer::Writer;
use actix::dev::ToEnvelope;
use serde_json::Value;

mod call;
mod connection;
mod frames;
mod listen;
mod pass_through;
pub mod reply;
pub use call::{Call, CallAnswer, Cancel};
pub use connection::{Close, Connect, Disconnect};
pub use listen::Listen;
pub use pass_through::Relay;
use pass_through::Unanswered;
use reply::UpstreamReply;

struct Pending {
    tx: oneshot::Sender<UpstreamReply>,
    method: &'static str,
    /// The editor's request id, for the debug lines.
    client: Id,
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
    /// The registry that a child upstream joins: the process's ([`Upstream::joining`]), or
    /// one of its own for an actor that opens only in-process upstreams.
    children: Arc<ChildRegistry>,
    /// The rate limits of its warnings: its bridge's ([`Upstream::limited_by`]).
    limits: Arc<BridgeLimits>,
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
            children: ChildRegistry::new(),
            limits: BridgeLimits::new(),
        }
    }

    /// Counts its rate-limited warnings in `limits` (its bridge's, which its Supervisor
    /// flushes).
    #[must_use]
    pub fn limited_by(mut self, limits: Arc<BridgeLimits>) -> Self {
        self.limits = limits;
        self
    }

    /// Registers every child upstream it starts in `children` (the process's registry).
    #[must_use]
    pub fn joining(mut self, children: Arc<ChildRegistry>) -> Self {
        self.children = children;
        self
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
}

impl Actor for Upstream {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.out.ended.do_send(ActorEnded(ActorKind::Upstream));
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
