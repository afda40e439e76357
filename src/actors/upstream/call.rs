//! A request sent upstream ([`Call`]: its upstream id, the pending entry its answer resolves,
//! a full queue refused) and its cancel ([`Cancel`], sent by the dropped [`CallAnswer`]).

use actix::prelude::*;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context as TaskContext, Poll, ready};
use std::time::Instant;
use tokio::sync::oneshot;

use super::reply::{CancelReason, UpstreamReply};
use super::{Pending, Upstream, UpstreamLinks};
use crate::protocol::revisions::modern;
use crate::protocol::rules::profile::PROBE_ID_PREFIX;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::parts;
use crate::protocol::wire::raw::Object;
use crate::transport::queue::{Delivery, Sent};
use crate::transport::upstream::Abandoned;

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
    /// (`server/discover`, `protocol::rules::era`): its upstream id is the string
    /// [`PROBE_ID_PREFIX`]`N` instead of the number `N`, so that it does not equal the id of
    /// an editor's request passed through afterwards to a legacy server (editors number their
    /// requests). The prefix is reserved: an editor request with the very string id of a probe
    /// still unanswered in pass-through is not sent ([`Relay`](super::Relay); it gets
    /// `duplicate_id`).
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
    #[cfg(feature = "internals")]
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
        let frame = parts::request_frame(&id, m.method, m.params.to_parts());
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
