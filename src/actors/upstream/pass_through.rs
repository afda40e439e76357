//! Pass-through (a legacy upstream, `protocol::rules::era`): the editor's messages go upstream as
//! they came ([`Relay`]), the upstream's frames to the Frontend as they came; an answer to a
//! request of the bridge's own still in flight when pass-through began (the probe) is dropped.

use actix::prelude::*;
use serde_json::Value;
use std::time::Instant;

use super::Upstream;
use super::frames::{line_over_limit, unusable_frame};
use super::reply::UpstreamReply;
use crate::actors::frontend::messages::FromUpstream;
use crate::protocol::revisions::methods;
use crate::protocol::rules::era;
use crate::protocol::rules::passthrough::{self, MessageKind};
use crate::protocol::wire::framing::Frame;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc::MAX_UPSTREAM_DEPTH;
use crate::transport::queue::{Delivery, Sent};
use crate::transport::upstream::Abandoned;

/// A request of the bridge's own still unanswered when the Upstream entered pass-through (in
/// practice the era probe, left running at `--discover-timeout`): its answer, if it comes, is
/// read and dropped, never relayed to the editor.
pub(super) struct Unanswered {
    method: &'static str,
    started: Instant,
}

impl Upstream {
    /// Pass-through: one frame of the upstream to the Frontend as it came. A frame that is not
    /// a JSON-RPC message gets the warning of the correlation mode, and the editor's request
    /// it names, if any, gets `invalid_response` from the Frontend.
    pub(super) fn relay_frame(&mut self, frame: Frame) {
        let read = match &frame {
            Frame::Line(l) => passthrough::read(l, MAX_UPSTREAM_DEPTH),
            Frame::TooLong { id, len_bytes, .. } => {
                if self.limits.upstream_line_too_long.allow_shared() {
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
                for id in unusable_frame(&frame, e.id(), &self.limits) {
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
}

/// Pass-through (a legacy upstream, `protocol::rules::era`): send one message of the editor as it
/// came. The first `Relay` puts the actor in pass-through until the next transport: from then
/// on every frame of the upstream goes to the Frontend as [`FromUpstream::Relayed`], but an
/// answer to a request of the bridge's own still in flight then (the probe, whose id is never
/// an editor's: [`Call::probe`](super::Call::probe)), which is dropped.
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
