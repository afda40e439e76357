//! The PendingTable actor: the requests the bridge sends to the editor (input requests of the
//! upstream). Their ids are strings with the profile's prefix (`b-1`, `b-2`, ...), so they
//! never equal a numeric editor id. All entries of a round are registered before the first
//! request goes out; the reader resolves answers at once; an answer with a numeric, null,
//! unprefixed, unknown or repeated id is dropped with a debug line.

use actix::prelude::*;
use serde_json::json;
use std::collections::HashMap;
use tokio::sync::oneshot;

use super::link::{ActorStats, Link};
use super::supervisor::messages::{ActorEnded, ActorKind};
use crate::protocol::revisions::modern;
use crate::protocol::rules::input::InputAnswer;
use crate::protocol::rules::profile::REQUEST_ID_PREFIX;
use crate::protocol::wire::id::Id;
use crate::transport::queue::Delivery;
use crate::transport::writer::Writer;
use std::sync::Arc;

/// The PendingTable actor.
pub struct PendingTable {
    next: u64,
    entries: HashMap<String, oneshot::Sender<InputAnswer>>,
    output: Writer,
    ended: Link<ActorEnded>,
}

impl PendingTable {
    /// A table that writes its cancellations through `output` and reports its end on `ended`.
    pub fn new(output: Writer, ended: Link<ActorEnded>) -> Self {
        PendingTable {
            next: 0,
            entries: HashMap::new(),
            output,
            ended,
        }
    }
}

impl Actor for PendingTable {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.ended.do_send(ActorEnded(ActorKind::Pending));
    }
}

/// The links to the PendingTable: one per message it handles, counted in its stats.
#[derive(Clone)]
pub struct PendingLinks {
    pub register: Link<Register>,
    pub resolve: Link<Resolve>,
    pub abandon: Link<Abandon>,
}

impl PendingLinks {
    /// The links to the table at `addr`, counted in `stats`.
    pub fn new(addr: &Addr<PendingTable>, stats: &Arc<ActorStats>) -> Self {
        PendingLinks {
            register: Link::new(addr, stats),
            resolve: Link::new(addr, stats),
            abandon: Link::new(addr, stats),
        }
    }
}

crate::counted_handlers!(PendingTable: Register, Resolve, Abandon, StopPending);

/// Register `count` new requests to the editor; the reply is their ids and the receivers of
/// their answers, in order.
#[derive(Message)]
#[rtype(result = "Vec<(String, oneshot::Receiver<InputAnswer>)>")]
pub struct Register(pub usize);

impl Handler<Register> for PendingTable {
    type Result = Vec<(String, oneshot::Receiver<InputAnswer>)>;
    fn handle(&mut self, Register(count): Register, _: &mut Context<Self>) -> Self::Result {
        (0..count)
            .map(|_| {
                self.next += 1;
                let id = format!("{REQUEST_ID_PREFIX}{}", self.next);
                let (tx, rx) = oneshot::channel();
                self.entries.insert(id.clone(), tx);
                (id, rx)
            })
            .collect()
    }
}

/// An answer of the editor (or a bad line carrying an id) for the table.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Resolve {
    pub id: Option<Id>,
    pub answer: InputAnswer,
}

impl Handler<Resolve> for PendingTable {
    type Result = ();
    fn handle(&mut self, m: Resolve, _: &mut Context<Self>) {
        let key = match &m.id {
            Some(Id::Str(s)) if s.starts_with(REQUEST_ID_PREFIX) => s,
            Some(other) => {
                // The id as JSON text (`"25"`, `25`), as the editor wrote it.
                tracing::debug!(target: "pending", "dropped an answer with an id the bridge never used ({})", other.to_value());
                return;
            }
            None => {
                tracing::debug!(target: "pending", "dropped an answer without an id");
                return;
            }
        };
        match self.entries.remove(key) {
            Some(tx) => {
                let _ = tx.send(m.answer);
            }
            None => {
                tracing::debug!(target: "pending", "dropped a late, repeated or unknown answer ({key})")
            }
        }
    }
}

/// Why the bridge gives up requests of its own to the editor: the `reason` of their
/// `notifications/cancelled` (2025-11-25 basic/utilities/cancellation), which the editor may
/// log or show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbandonReason {
    /// The request they serve ended first (the editor cancelled it, or it failed).
    RequestCancelled,
    /// The editor did not answer within the time limit of input requests.
    NoAnswerInTime,
    /// The sign-in that asked for consent ended first.
    SignInEnded,
}

impl AbandonReason {
    /// The `reason` text.
    pub fn text(self) -> &'static str {
        match self {
            AbandonReason::RequestCancelled => "the request was cancelled",
            AbandonReason::NoAnswerInTime => "the client did not answer in time",
            AbandonReason::SignInEnded => "the sign-in ended",
        }
    }
}

/// Forget these requests; each one still without an answer gets `notifications/cancelled`
/// towards the editor.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Abandon {
    pub ids: Vec<String>,
    pub reason: AbandonReason,
}

impl Handler<Abandon> for PendingTable {
    type Result = ();
    fn handle(&mut self, m: Abandon, _: &mut Context<Self>) {
        for id in m.ids {
            if self.entries.remove(&id).is_some() {
                let n = modern::cancelled_notification(json!(id), Some(m.reason.text()));
                self.output.send_message(&n, Delivery::Always);
            }
        }
    }
}

/// Shutdown step (Supervisor), after the Frontend cancelled its slots (their abandons are
/// before it in the mailbox): forget what is left without a word to the editor, and stop.
#[derive(Message)]
#[rtype(result = "()")]
pub struct StopPending;

impl Handler<StopPending> for PendingTable {
    type Result = ();
    fn handle(&mut self, _: StopPending, ctx: &mut Context<Self>) {
        if !self.entries.is_empty() {
            tracing::debug!(target: "pending", "forgot {} requests to the client at shutdown", self.entries.len());
        }
        self.entries.clear();
        ctx.stop();
    }
}
