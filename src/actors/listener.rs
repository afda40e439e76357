//! The Listener actor: keeps a `subscriptions/listen` stream of the upstream open for the
//! editor. The Supervisor runs it when the Frontend asks: after `notifications/initialized`,
//! when the `initialize` result declared a list change or `resources.subscribe`. It owns the streams, the subscribed
//! URIs and the generation number; it opens a stream with the full set of URIs for each change
//! of `resources/subscribe` and `resources/unsubscribe` (one change at a time), and a new
//! stream after a loss, after a wait that doubles from 0.5 s to 30 s.
//!
//! What reaches the editor from a stream is decided by the Frontend's [`ListenGate`], which sees
//! the upstream notifications in upstream order: the Listener registers each stream there
//! before its request goes out, and learns the stream's acknowledgment and end from it as a
//! [`ListenFact`], in the same order. The Listener writes only the answers to changes that
//! need no new stream, the errors of failed changes and the events after a gap.
//!
//! [`ListenGate`]: crate::protocol::listen::ListenGate

use actix::prelude::*;
use serde_json::{Value, json};
use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use super::frontend::messages::{ChangeAnswer, GateUpdate};
use super::link::{ActorStats, Link};
use super::supervisor::messages::{ActorEnded, ActorKind};
use super::upstream;
use crate::log::limits::BridgeLimits;
use crate::protocol::listen::{self, Backoff, Declared, Fact, ListenTimings, StreamEnd};
use crate::protocol::revisions::errors::Cause;
use crate::protocol::revisions::log_level::LogLevel;
use crate::protocol::revisions::modern::RequestMeta;
use crate::protocol::revisions::note::LineLevel;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc;
use crate::transport::queue::Delivery;
use crate::transport::writer::Writer;
/// Subscription changes that wait behind the one in flight; the next gets
/// `too_many_requests` at once.
pub const MAX_QUEUED_CHANGES: usize = 256;

/// The links a Listener sends on.
pub struct ListenerOut {
    /// The Frontend's gate: streams registered, retired, expired.
    pub gate: Link<GateUpdate>,
    /// The Frontend: answers to subscription changes.
    pub answer: Link<ChangeAnswer>,
    /// The Upstream: listen requests.
    pub listen: Link<upstream::Listen>,
    /// The Upstream: cancels of listen requests.
    pub cancel: Link<upstream::Cancel>,
    /// The writer toward the editor.
    pub output: Writer,
    /// The Supervisor: the end of the actor.
    pub ended: Link<ActorEnded>,
}

/// The links to the Listener: one per message it handles, counted in its stats. Taken from
/// its address before it runs (the Supervisor runs it when the Frontend asks).
#[derive(Clone)]
pub struct ListenerLinks {
    pub change: Link<Change>,
    pub log_level: Link<SetLogLevel>,
    pub fact: Link<ListenFact>,
    pub stop: Link<StopListener>,
}

impl ListenerLinks {
    /// The links to the Listener at `addr`, counted in `stats`.
    pub fn new(addr: &Addr<Listener>, stats: &Arc<ActorStats>) -> Self {
        ListenerLinks {
            change: Link::new(addr, stats),
            log_level: Link::new(addr, stats),
            fact: Link::new(addr, stats),
            stop: Link::new(addr, stats),
        }
    }
}

crate::counted_handlers!(Listener: ListenFact, Change, SetLogLevel, StopListener);

/// A fact of the gate (acknowledgment or end of a stream), in upstream order.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct ListenFact(pub Fact);

/// `resources/subscribe` (`subscribe: true`) or `resources/unsubscribe` of the editor.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct Change {
    /// The editor's request id, answered `{}` or with an error.
    pub id: Id,
    pub subscribe: bool,
    pub uri: String,
}

/// The level of the last `logging/setLevel`; the next listen requests carry it.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct SetLogLevel(pub Option<LogLevel>);

/// Why the Listener stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopCause {
    /// The end of the editor's input: the streams are cancelled, changes get no answer.
    EndOfInput,
    /// The upstream exited: changes in flight get `upstream_exited`.
    UpstreamGone,
}

/// Stop: no new stream, cancel the open ones, then the actor stops.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct StopListener(pub StopCause);

enum Purpose {
    /// The stream of the current URIs: the first one, or a new one after a loss.
    Base,
    /// The stream of a subscription change, with the URIs after the change.
    Change { editor: Id, uris: BTreeSet<String> },
}

/// The stream that waits for its acknowledgment (at most one at a time).
struct Opening {
    id: Id,
    purpose: Purpose,
    ack_timer: SpawnHandle,
}

/// The acknowledged stream whose events reach the editor.
struct Active {
    id: Id,
    acked_at: Instant,
}

/// The new stream after a loss.
enum Retry {
    /// None is wanted.
    Idle,
    /// One follows after the wait.
    Waiting(SpawnHandle),
    /// The wait is over: one opens when no other stream is opening.
    Due,
}

/// The Listener actor.
pub struct Listener {
    timings: ListenTimings,
    declared: Declared,
    meta: RequestMeta,
    links: ListenerOut,
    uris: BTreeSet<String>,
    generation: u64,
    active: Option<Active>,
    opening: Option<Opening>,
    changes: VecDeque<Change>,
    /// The next acknowledged stream ends a gap (the first stream, and after each loss).
    gap_pending: bool,
    retry: Retry,
    /// The upstream refused a stream: only a subscription change opens a new one.
    halted: bool,
    /// The refusal was a 401/403 (HTTP): the next sign-in also opens a new one.
    awaiting_sign_in: bool,
    backoff: Backoff,
    stopped: bool,
    /// What the last acknowledgment left out (a warning when it changes).
    unacknowledged: Vec<String>,
    /// The rate limits of its warnings: its bridge's.
    limits: Arc<BridgeLimits>,
}

impl Listener {
    /// A Listener for what the editor was told, with the `_meta` of every listen request; its
    /// rate-limited warnings count in `limits` (its bridge's).
    pub fn new(
        timings: ListenTimings,
        declared: Declared,
        meta: RequestMeta,
        links: ListenerOut,
        limits: Arc<BridgeLimits>,
    ) -> Listener {
        Listener {
            limits,
            timings,
            declared,
            meta,
            links,
            uris: BTreeSet::new(),
            generation: 0,
            active: None,
            opening: None,
            changes: VecDeque::new(),
            gap_pending: true,
            retry: Retry::Due,
            halted: false,
            awaiting_sign_in: false,
            backoff: Backoff::new(timings.backoff_initial, timings.backoff_max),
            stopped: false,
            unacknowledged: Vec::new(),
        }
    }

    /// The answer to a subscription change goes through the Frontend, which knows whether the
    /// editor cancelled it (then nothing is written) and frees its id.
    fn answer(&self, frame: Value) {
        self.links.answer.do_send(ChangeAnswer(frame));
    }

    /// Gap events and answers are never dropped (list changes are not request-scoped).
    fn write(&self, v: &Value) {
        self.links.output.send_message(v, Delivery::Always);
    }

    /// Registers a new stream at the gate, then sends its request, and starts the time limit
    /// of its acknowledgment.
    fn open(&mut self, purpose: Purpose, ctx: &mut Context<Self>) {
        self.generation += 1;
        let generation = self.generation;
        let id = listen::listen_id(generation);
        let (uris, respond) = match &purpose {
            Purpose::Base => (self.uris.clone(), None),
            Purpose::Change { editor, uris } => (uris.clone(), Some(editor.clone())),
        };
        let params = listen::listen_params(&self.meta, self.declared.filter(&uris));
        tracing::debug!(target: "listener", "opens the listen stream {id} ({} subscribed URIs)", uris.len());
        self.links.gate.do_send(GateUpdate::Register {
            id: id.clone(),
            generation,
            uris,
            respond,
        });
        self.links.listen.do_send(upstream::Listen {
            id: id.clone(),
            params,
        });
        let expire = id.clone();
        let ack_timer = ctx.run_later(self.timings.ack_timeout, move |act, _| {
            act.links.gate.do_send(GateUpdate::Expire { id: expire });
        });
        self.opening = Some(Opening {
            id,
            purpose,
            ack_timer,
        });
    }

    /// The bridge stops a stream: the gate forgets it, the upstream gets
    /// `notifications/cancelled`.
    fn retire(&self, id: &Id) {
        self.links
            .gate
            .do_send(GateUpdate::Retire { id: id.clone() });
        self.links.cancel.do_send(upstream::Cancel {
            id: id.clone(),
            reason: None,
        });
    }

    fn cancel_retry(&mut self, ctx: &mut Context<Self>) {
        if let Retry::Waiting(h) = std::mem::replace(&mut self.retry, Retry::Idle) {
            ctx.cancel_future(h);
        }
    }

    /// Opens the next stream when none is opening: the next subscription change first (a
    /// change that changes nothing is answered at once), else the stream after a loss once
    /// its wait is over.
    fn settle(&mut self, ctx: &mut Context<Self>) {
        if self.stopped || self.opening.is_some() {
            return;
        }
        while let Some(c) = self.changes.pop_front() {
            match listen::changed(&self.uris, c.subscribe, &c.uri) {
                None => self.answer(jsonrpc::response(&c.id, json!({}))),
                Some(uris) => {
                    return self.open(Purpose::Change { editor: c.id, uris }, ctx);
                }
            }
        }
        if self.active.is_none() && !self.halted && matches!(self.retry, Retry::Due) {
            self.retry = Retry::Idle;
            self.open(Purpose::Base, ctx);
        }
    }

    /// A stream that was not a change ended (or the active one was lost): wait and open a new
    /// one, or stop the new attempts after a refusal or the end of the upstream.
    fn after_loss(
        &mut self,
        end: &StreamEnd,
        lived: Option<std::time::Duration>,
        ctx: &mut Context<Self>,
    ) {
        self.cancel_retry(ctx);
        let wait = end
            .retries()
            .then(|| self.backoff.after_loss(lived, self.timings.stable));
        let (level, line) = listen::loss_line(end, wait);
        // A loss that a new stream follows can come with every stream: limited per kind.
        if wait.is_none() || self.limits.listen_lost.allow_shared() {
            log(level, &line);
        }
        match wait {
            Some(w) => {
                let h = ctx.run_later(w, |act, ctx| {
                    act.retry = Retry::Due;
                    act.settle(ctx);
                });
                self.retry = Retry::Waiting(h);
            }
            None => {
                self.halted = end.halts();
                self.awaiting_sign_in = end.needs_sign_in();
            }
        }
    }

    fn on_acked(&mut self, id: Id, ctx: &mut Context<Self>) {
        let Some(op) = self.opening.take_if(|o| o.id == id) else {
            tracing::debug!(target: "listener", "ignored an acknowledgment of {id}");
            return;
        };
        ctx.cancel_future(op.ack_timer);
        let old = self.active.replace(Active {
            id: id.clone(),
            acked_at: Instant::now(),
        });
        if let Purpose::Change { uris, .. } = op.purpose {
            self.uris = uris;
        }
        self.cancel_retry(ctx);
        self.halted = false;
        self.awaiting_sign_in = false;
        tracing::debug!(target: "listener", "the listen stream {id} is active");
        if self.gap_pending {
            self.gap_pending = false;
            for e in self.declared.gap_events(&self.uris) {
                self.write(&e.to_editor());
            }
        }
        if let Some(old) = old {
            self.retire(&old.id);
        }
    }

    fn on_ended(&mut self, id: Id, end: StreamEnd, ctx: &mut Context<Self>) {
        if let Some(op) = self.opening.take_if(|o| o.id == id) {
            ctx.cancel_future(op.ack_timer);
            if matches!(end, StreamEnd::AckTimeout { .. }) {
                self.retire(&id);
            }
            match op.purpose {
                Purpose::Change { editor, .. } => {
                    if self.limits.change_failed.allow_shared() {
                        tracing::warn!(target: "listener", "{}", listen::change_failed_line(&end));
                    }
                    self.answer(jsonrpc::error_response(Some(&editor), end.change_error()));
                    // Without an active stream the change was also the attempt after a loss
                    // or a refusal; a refusal or the end of the upstream stops the attempts.
                    if self.active.is_none() && !end.retries() {
                        self.cancel_retry(ctx);
                        self.halted = end.halts();
                        self.awaiting_sign_in = end.needs_sign_in();
                    }
                }
                Purpose::Base => self.after_loss(&end, None, ctx),
            }
        } else if let Some(a) = self.active.take_if(|a| a.id == id) {
            self.gap_pending = true;
            self.after_loss(&end, Some(a.acked_at.elapsed()), ctx);
        } else {
            tracing::debug!(target: "listener", "ignored the end of {id}");
        }
    }
}

fn log(level: LineLevel, line: &str) {
    match level {
        LineLevel::Debug => tracing::debug!(target: "listener", "{line}"),
        LineLevel::Info => tracing::info!(target: "listener", "{line}"),
        LineLevel::Warn => tracing::warn!(target: "listener", "{line}"),
    }
}

impl Actor for Listener {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.settle(ctx);
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.links.ended.do_send(ActorEnded(ActorKind::Listener));
    }
}

impl Handler<ListenFact> for Listener {
    type Result = ();
    fn handle(&mut self, ListenFact(fact): ListenFact, ctx: &mut Context<Self>) {
        if self.stopped {
            return;
        }
        match fact {
            Fact::Acked { id, missing } => {
                if !missing.is_empty() && missing != self.unacknowledged {
                    tracing::warn!(target: "listener", "the upstream server acknowledged the listen stream without {}: the client gets none of these notifications", missing.join(", "));
                }
                self.unacknowledged = missing;
                self.on_acked(id, ctx)
            }
            Fact::Ended { id, end, .. } => self.on_ended(id, end, ctx),
            Fact::SignedIn => {
                if self.halted && self.awaiting_sign_in {
                    tracing::info!(target: "listener", "signed in: a new listen stream follows");
                    self.halted = false;
                    self.awaiting_sign_in = false;
                    self.retry = Retry::Due;
                }
            }
        }
        self.settle(ctx);
    }
}

impl Handler<Change> for Listener {
    type Result = ();
    fn handle(&mut self, c: Change, ctx: &mut Context<Self>) {
        if self.changes.len() >= MAX_QUEUED_CHANGES {
            let e = Cause::TooManyRequests.error_object(Some(json!(MAX_QUEUED_CHANGES)));
            return self.answer(jsonrpc::error_response(Some(&c.id), e));
        }
        self.changes.push_back(c);
        self.settle(ctx);
    }
}

impl Handler<SetLogLevel> for Listener {
    type Result = ();
    fn handle(&mut self, SetLogLevel(level): SetLogLevel, _: &mut Context<Self>) {
        self.meta.log_level = level;
    }
}

impl Handler<StopListener> for Listener {
    type Result = ();
    fn handle(&mut self, StopListener(cause): StopListener, ctx: &mut Context<Self>) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        self.cancel_retry(ctx);
        let gone = cause == StopCause::UpstreamGone;
        let mut unanswered: Vec<Id> = Vec::new();
        if let Some(op) = self.opening.take() {
            ctx.cancel_future(op.ack_timer);
            self.retire(&op.id);
            if let Purpose::Change { editor, .. } = op.purpose {
                unanswered.push(editor);
            }
        }
        if let Some(a) = self.active.take() {
            self.retire(&a.id);
        }
        unanswered.extend(self.changes.drain(..).map(|c| c.id));
        if gone {
            for id in unanswered {
                self.answer(jsonrpc::error_response(
                    Some(&id),
                    Cause::UpstreamExited.error_object(None),
                ));
            }
        }
        tracing::debug!(target: "listener", "stopped ({cause:?})");
        ctx.stop();
    }
}
